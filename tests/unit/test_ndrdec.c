/* test_ndrdec.c - the NDRange decoder against protobuf-c's own unpack. */

/*
 * Random NDRange requests, packed by protobuf-c, and random corruptions
 * of them: whatever vcl_ndrdec_unpack takes must be what protobuf-c makes
 * of the same bytes (both packed again compare equal), and freeing it with
 * protobuf_c_message_free_unpacked through the same allocator must give
 * back every piece (the session's arena counts on it). What it does not
 * take it must leave alone, with nothing allocated.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vcl_ndrdec.h"

#define ROUNDS	20000

static uint64_t	rng = 0x9e3779b97f4a7c15ull;
static long	live;			/* pieces not given back */

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng);
}

/* A number of some bits: small ones often, all 64 sometimes. */
static uint64_t
rnd_num(void)
{
	static const int bits[] = { 3, 7, 14, 32, 33, 64 };

	return (rnd() & (~0ull >> (64 - bits[rnd() % 6])));
}

static void *
cnt_alloc(void *data, size_t n)
{
	(void)data;
	live++;
	return (malloc(n));
}

static void
cnt_free(void *data, void *p)
{
	(void)data;
	live--;
	free(p);
}

static ProtobufCAllocator	cnt = { cnt_alloc, cnt_free, NULL };

/* Storage behind one random request. */
struct gen {
	Vcl__Request	 r;
	Vcl__NDRange	 m;
	Vcl__Enqueue	 e;
	uint64_t	 wait[20], dims[3][5];
	Vcl__KernelArg	 a[36], *ap[36];
	uint8_t		 val[36][40];
};

/* Fill g with a random NDRange request, some over the decoder's bounds. */
static void
gen_request(struct gen *g)
{
	size_t	i, j, n;

	vcl__request__init(&g->r);
	vcl__ndrange__init(&g->m);
	vcl__enqueue__init(&g->e);
	g->r.seq = rnd_num();
	g->r.has_bulk_xfer = rnd() % 4 == 0;
	g->r.bulk_xfer = rnd_num();
	g->r.has_bulk_size = rnd() % 4 == 0;
	g->r.bulk_size = rnd_num();
	g->r.call_case = VCL__REQUEST__CALL_NDRANGE;
	g->r.ndrange = &g->m;
	g->e.queue = rnd_num();
	g->e.has_event = rnd() % 2;
	g->e.event = rnd_num();
	g->e.n_wait = rnd() % 8 == 0 ? rnd() % 20 : rnd() % 3;
	for (i = 0; i < g->e.n_wait; i++)
		g->wait[i] = rnd_num();
	g->e.wait = g->wait;
	g->e.has_quiet = rnd() % 3 == 0;
	g->e.quiet = rnd() % 2;
	g->m.q = &g->e;
	g->m.kernel = rnd_num();
	g->m.work_dim = rnd() % 8 == 0 ? (uint32_t)rnd() : 1 + rnd() % 3;
	for (j = 0; j < 3; j++) {
		n = rnd() % 10 == 0 ? 4 + rnd() % 2 : rnd() % 4;
		for (i = 0; i < n; i++)
			g->dims[j][i] = rnd_num();
	}
	g->m.n_offset = rnd() % 4;
	g->m.offset = g->dims[0];
	g->m.n_global = 1 + rnd() % 3;
	g->m.global = g->dims[1];
	g->m.n_local = rnd() % 10 == 0 ? 4 + rnd() % 2 : rnd() % 4;
	g->m.local = g->dims[2];
	g->m.n_args = rnd() % 10 == 0 ? rnd() % 36 : rnd() % 5;
	for (i = 0; i < g->m.n_args; i++) {
		Vcl__KernelArg	*a = &g->a[i];

		vcl__kernel_arg__init(a);
		g->ap[i] = a;
		a->index = rnd() % 8 == 0 ? (uint32_t)rnd() : (uint32_t)i;
		a->type = (Vcl__KernelArg__Type)(rnd() % 6);
		a->has_value = rnd() % 2;
		a->value.len = rnd() % 41;
		for (j = 0; j < a->value.len; j++)
			g->val[i][j] = (uint8_t)rnd();
		a->value.data = g->val[i];
		a->has_mem = rnd() % 2;
		a->mem = rnd_num();
		a->has_size = rnd() % 3 == 0;
		a->size = rnd_num();
	}
	g->m.args = g->ap;
}

/* Pack a request into a new buffer; *n gets its length. */
static uint8_t *
pack(const Vcl__Request *r, size_t *n)
{
	uint8_t	*p;

	*n = vcl__request__get_packed_size(r);
	p = malloc(*n + 1);
	assert_non_null(p);
	vcl__request__pack(r, p);
	return (p);
}

/*
 * Decode msg both ways. Returns 1 when the decoder took it (and it
 * matched protobuf-c's), 0 when it left it to protobuf-c.
 */
static int
both_ways(const uint8_t *msg, size_t len)
{
	Vcl__Request	*fast, *ref;
	uint8_t		*pf, *pr;
	size_t		 nf, nr;

	live = 0;
	fast = vcl_ndrdec_unpack(&cnt, len, msg);
	if (fast == NULL) {
		assert_int_equal(live, 0);
		return (0);
	}
	ref = vcl__request__unpack(NULL, len, msg);
	assert_non_null(ref);
	pf = pack(fast, &nf);
	pr = pack(ref, &nr);
	assert_int_equal(nf, nr);
	assert_memory_equal(pf, pr, nf);
	free(pf);
	free(pr);
	vcl__request__free_unpacked(ref, NULL);
	protobuf_c_message_free_unpacked(&fast->base, &cnt);
	assert_int_equal(live, 0);
	return (1);
}

/* Within its bounds, every request is taken, and taken right. */
static void
test_random_requests(void **state)
{
	struct gen	*g = calloc(1, sizeof *g);
	uint8_t		*p;
	size_t		 n, i, j;
	int		 took = 0, within;

	(void)state;
	assert_non_null(g);
	for (i = 0; i < ROUNDS; i++) {
		gen_request(g);
		within = g->e.n_wait <= 16 && g->m.n_offset <= 3 &&
		    g->m.n_global <= 3 && g->m.n_local <= 3 &&
		    g->m.n_args <= 32;
		p = pack(&g->r, &n);
		j = both_ways(p, n);
		if (within)
			assert_int_equal(j, 1);
		took += (int)j;
		free(p);
	}
	assert_true(took > ROUNDS / 2);
	free(g);
}

/* Corrupted bytes: taken only when protobuf-c makes the same of them. */
static void
test_corrupted(void **state)
{
	struct gen	*g = calloc(1, sizeof *g);
	uint8_t		*p;
	size_t		 n, i, k, at;

	(void)state;
	assert_non_null(g);
	for (i = 0; i < ROUNDS; i++) {
		gen_request(g);
		p = pack(&g->r, &n);
		if (n == 0) {
			free(p);
			continue;
		}
		for (k = 0; k <= rnd() % 3; k++) {
			at = rnd() % n;
			switch (rnd() % 4) {
			case 0:
				p[at] = (uint8_t)rnd();
				break;
			case 1:
				p[at] ^= (uint8_t)(1u << (rnd() % 8));
				break;
			case 2:
				n = at;		/* truncated */
				break;
			default:
				p[at] = p[at] & 0x80 ? 0 : 0xff;
				break;
			}
			if (n == 0)
				break;
		}
		(void)both_ways(p, n);
		free(p);
	}
	free(g);
}

/* Other calls, fields seen twice, packed lists: left to protobuf-c. */
static void
test_left_alone(void **state)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__Finish	 f = VCL__FINISH__INIT;
	struct gen	*g = calloc(1, sizeof *g);
	uint8_t		*p, *q;
	size_t		 n;
	/* NDRange.global (field 5) packed: two values in one record. */
	static const uint8_t packed[] = {
		0x08, 0x01, 0xca, 0x01, 0x0c, 0x0a, 0x02, 0x08, 0x01, 0x10,
		0x01, 0x18, 0x01, 0x2a, 0x02, 0x01, 0x02,
	};
	/* Enqueue's quiet = 2: protobuf-c makes it true; left to it. */
	static const uint8_t quiet2[] = {
		0x08, 0x01, 0xca, 0x01, 0x0a, 0x0a, 0x04, 0x08, 0x01, 0x20,
		0x02, 0x10, 0x01, 0x18, 0x01,
	};

	(void)state;
	assert_non_null(g);
	f.queue = 3;
	r.seq = 1;
	r.call_case = VCL__REQUEST__CALL_FINISH;
	r.finish = &f;
	p = pack(&r, &n);
	assert_int_equal(both_ways(p, n), 0);
	free(p);
	assert_int_equal(both_ways(packed, sizeof packed), 0);
	assert_non_null(q = (uint8_t *)vcl__request__unpack(NULL,
	    sizeof packed, packed));
	vcl__request__free_unpacked((Vcl__Request *)q, NULL);
	assert_int_equal(both_ways(quiet2, sizeof quiet2), 0);
	/* The same request twice over: protobuf-c merges, we do not. */
	do
		gen_request(g);
	while (g->e.n_wait > 16 || g->m.n_args > 32 || g->m.n_local > 3);
	p = pack(&g->r, &n);
	q = malloc(2 * n + 1);
	assert_non_null(q);
	memcpy(q, p, n);
	memcpy(q + n, p, n);
	assert_int_equal(both_ways(p, n), 1);
	assert_int_equal(both_ways(q, 2 * n), 0);
	free(p);
	free(q);
	free(g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_requests),
		cmocka_unit_test(test_corrupted),
		cmocka_unit_test(test_left_alone),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
