/* argcache_test.c - launches that skip setting unchanged arguments. */

/*
 * usage: argcache_test VCLSERVER [BUSY_CLIENT]
 *
 * The server remembers what each kernel argument holds in the runtime and
 * does not set it again when a launch sends the same (vcl_op_exec.c), and
 * decodes requests into a per-session arena (vcl_session.c). Each test
 * changes an argument between launches (bytes, buffer, NULL, __local
 * size, a buffer id released and made again, a failed set in between) or
 * holds a request while many others are decoded, and reads what the
 * kernel wrote: a stale argument or a reused piece of a held request
 * shows as a wrong value. The harness is rawproto.c.
 */

#include "rawproto.h"

static const char ac_src[] =
	"typedef struct { int v[16]; } big_t;\n"
	"__kernel void kval(int x, __global int *o) { o[0] = x; }\n"
	"__kernel void kcopy(__global int *dst, __global const int *src)\n"
	"{ dst[get_global_id(0)] = src[get_global_id(0)]; }\n"
	"__kernel void knull(__global const int *p, __global int *o)\n"
	"{ o[0] = p != 0 ? p[0] : -1; }\n"
	"__kernel void kloc2(__local int *a, __local int *b,\n"
	"    __global int *o) { a[0] = 1; b[0] = 2; o[0] = a[0] + b[0]; }\n"
	"__kernel void kbig(big_t b, __global int *o)\n"
	"{ o[0] = b.v[0] + b.v[15]; }\n";

/* Ids of one session's objects. */
enum {
	CTX = 1, Q, Q2, PROG, BUF_O, BUF_O2, BUF_A, BUF_B, BUF_D, BUF_X,
	BUF_Y, UE, CTX2, BUF_OTHER,
	K_VAL = 20, K_COPY, K_NULL, K_LOC2, K_BIG,
};

#define NWORDS	16		/* ints in a test buffer */
#define NBUSY	600		/* launches decoded while one is held */

/* Argument constructors. */
static void
ac_value(Vcl__KernelArg *a, uint32_t i, const void *p, size_t n)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = VCL__KERNEL_ARG__TYPE__VALUE;
	a->has_value = 1;
	a->value.data = (uint8_t *)p;
	a->value.len = n;
}

static void
ac_mem(Vcl__KernelArg *a, uint32_t i, uint64_t mem)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = mem != 0 ? VCL__KERNEL_ARG__TYPE__MEM :
	    VCL__KERNEL_ARG__TYPE__NULLMEM;
	a->has_mem = mem != 0;
	a->mem = mem;
}

static void
ac_local(Vcl__KernelArg *a, uint32_t i, uint64_t size)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = VCL__KERNEL_ARG__TYPE__LOCAL;
	a->has_size = 1;
	a->size = size;
}

/*
 * Send NDRange of kernel k on queue q (global gws), waiting on event ue
 * when not 0. Returns 0 or -1.
 */
static int
ac_send(struct conn *c, uint64_t q, uint64_t k, size_t gws, uint64_t ue,
    Vcl__KernelArg *args, size_t nargs)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__NDRange	 m = VCL__NDRANGE__INIT;
	Vcl__Enqueue	 e = VCL__ENQUEUE__INIT;
	Vcl__KernelArg	*ap[4];
	uint64_t	 g = gws;
	size_t		 i;

	for (i = 0; i < nargs && i < 4; i++)
		ap[i] = &args[i];
	e.queue = q;
	if (ue != 0) {
		e.n_wait = 1;
		e.wait = &ue;
	}
	m.q = &e;
	m.kernel = k;
	m.work_dim = 1;
	m.n_global = 1;
	m.global = &g;
	m.n_args = nargs;
	m.args = ap;
	r.call_case = VCL__REQUEST__CALL_NDRANGE;
	r.ndrange = &m;
	return (send_req(c, &r, NULL, 0));
}

/* Launch on q and finish: the status Finish reports, or 1. */
static int
ac_launch(struct conn *c, uint64_t q, uint64_t k, size_t gws,
    Vcl__KernelArg *args, size_t nargs)
{
	if (ac_send(c, q, k, gws, 0, args, nargs) != 0)
		return (1);
	return (raw_finish(c, q));
}

/* The first int of buffer mem, read on Q, or INT32_MIN on failure. */
static int
ac_word(struct conn *c, uint64_t mem)
{
	struct reply	rp;
	int		v = INT32_MIN;

	if (read_buffer(c, Q, mem, NWORDS * sizeof v, &rp) != 0)
		return (v);
	if (rp.r->status == 0 && rp.bulk_len == NWORDS * sizeof v)
		memcpy(&v, rp.bulk, sizeof v);
	reply_free(&rp);
	return (v);
}

/* A buffer of NWORDS ints, each v. Returns 0 or -1. */
static int
ac_buffer(struct conn *c, uint64_t id, uint64_t ctx, int v)
{
	int	w[NWORDS], i;

	for (i = 0; i < NWORDS; i++)
		w[i] = v;
	return (create_buffer(c, id, ctx, sizeof w, w, sizeof w));
}

/* A session with both queues, the output buffers and the program built. */
static int
ac_setup(struct conn *c, const struct srv *sv)
{
	if (conn_session(c, sv) != 0)
		return (-1);
	if (create_context(c, CTX) != 0 || create_queue(c, Q, CTX) != 0 ||
	    create_queue(c, Q2, CTX) != 0 || ac_buffer(c, BUF_O, CTX, 0) != 0 ||
	    ac_buffer(c, BUF_O2, CTX, 0) != 0 ||
	    create_program(c, PROG, CTX, ac_src) != 0)
		return (-1);
	return (raw_build(c, PROG, NULL) == 0 ? 0 : -1);
}

/* By-value bytes that change, stay, change back; on two queues. */
static void
test_value(void)
{
	struct srv	sv;
	struct conn	c;
	Vcl__KernelArg	a[2];
	int		x = 0, i, bad = 0, got = 0;
	struct { int v[16]; } big;
	static const int seq[] = { 1, 2, 2, 1, 7, 7, 7, 3 };

	if (!srv_start(&sv, "value_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("value_setup", ac_setup(&c, &sv) == 0 &&
	    raw_kernel(&c, K_VAL, PROG, "kval") == 0 &&
	    raw_kernel(&c, K_BIG, PROG, "kbig") == 0, "no session or kernels"))
		goto out;
	for (i = 0; i < (int)(sizeof seq / sizeof seq[0]); i++) {
		x = seq[i];
		ac_value(&a[0], 0, &x, sizeof x);
		ac_mem(&a[1], 1, BUF_O);
		if (ac_launch(&c, i % 3 == 2 ? Q2 : Q, K_VAL, 1, a, 2) != 0 ||
		    (got = ac_word(&c, BUF_O)) != x) {
			bad = 1;
			break;
		}
	}
	check("value_each_launch", !bad, "launch %d (x = %d) wrote %d", i, x,
	    got);
	/* Over the bytes remembered: set each time, still right. */
	memset(&big, 0, sizeof big);
	for (i = 0, bad = 0; i < 4 && !bad; i++) {
		big.v[0] = i;
		big.v[15] = 100 * (i & 1);
		ac_value(&a[0], 0, &big, sizeof big);
		ac_mem(&a[1], 1, BUF_O);
		bad = ac_launch(&c, Q, K_BIG, 1, a, 2) != 0 ||
		    (got = ac_word(&c, BUF_O)) != big.v[0] + big.v[15];
	}
	check("value_large_each_launch", !bad, "launch %d wrote %d", i - 1,
	    got);
	/* A refused set in between: the next launch sets the bytes. */
	x = 5;
	ac_value(&a[0], 0, &x, sizeof x);
	ac_launch(&c, Q, K_VAL, 1, a, 2);
	ac_value(&a[0], 0, &x, 2);
	check("value_short_refused", ac_launch(&c, Q, K_VAL, 1, a, 2) ==
	    CL_INVALID_ARG_SIZE, "want CL_INVALID_ARG_SIZE");
	x = 6;
	ac_value(&a[0], 0, &x, sizeof x);
	check("value_after_refused", ac_launch(&c, Q, K_VAL, 1, a, 2) == 0 &&
	    ac_word(&c, BUF_O) == 6, "wrote %d, want 6", ac_word(&c, BUF_O));
out:
	conn_close(&c);
	srv_stop(&sv, "value_server_exit");
}

/* Buffers that change between launches, a refused buffer in between. */
static void
test_buffer(void)
{
	struct srv	sv;
	struct conn	c;
	Vcl__KernelArg	a[2];
	static const uint64_t src[] = { BUF_A, BUF_B, BUF_B, BUF_A, BUF_B };
	int		i, bad = 0, want;

	if (!srv_start(&sv, "buffer_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("buffer_setup", ac_setup(&c, &sv) == 0 &&
	    raw_kernel(&c, K_COPY, PROG, "kcopy") == 0 &&
	    ac_buffer(&c, BUF_A, CTX, 11) == 0 &&
	    ac_buffer(&c, BUF_B, CTX, 22) == 0 &&
	    create_context(&c, CTX2) == 0 &&
	    ac_buffer(&c, BUF_OTHER, CTX2, 33) == 0, "no session"))
		goto out;
	for (i = 0; i < (int)(sizeof src / sizeof src[0]); i++) {
		want = src[i] == BUF_A ? 11 : 22;
		ac_mem(&a[0], 0, i == 3 ? BUF_O2 : BUF_O);
		ac_mem(&a[1], 1, src[i]);
		if (ac_launch(&c, Q, K_COPY, NWORDS, a, 2) != 0 ||
		    ac_word(&c, i == 3 ? BUF_O2 : BUF_O) != want) {
			bad = 1;
			break;
		}
	}
	check("buffer_each_launch", !bad, "launch %d copied the wrong buffer",
	    i);
	/* Another context's buffer is refused; the next launch is right. */
	ac_mem(&a[0], 0, BUF_O);
	ac_mem(&a[1], 1, BUF_OTHER);
	check("buffer_other_context_refused", ac_launch(&c, Q, K_COPY, NWORDS,
	    a, 2) == CL_INVALID_MEM_OBJECT, "want CL_INVALID_MEM_OBJECT");
	ac_mem(&a[1], 1, BUF_A);
	check("buffer_after_refused", ac_launch(&c, Q, K_COPY, NWORDS, a, 2) ==
	    0 && ac_word(&c, BUF_O) == 11, "copied %d, want 11",
	    ac_word(&c, BUF_O));
out:
	conn_close(&c);
	srv_stop(&sv, "buffer_server_exit");
}

/*
 * A buffer id released while an argument holds it, the argument moved on
 * (the buffer goes), the id made again with other bytes: the launch that
 * names it reads the new buffer.
 */
static void
test_reused_id(void)
{
	struct srv	sv;
	struct conn	c;
	Vcl__KernelArg	a[2];
	int		v1, v2, v3;

	if (!srv_start(&sv, "reused_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("reused_setup", ac_setup(&c, &sv) == 0 &&
	    raw_kernel(&c, K_COPY, PROG, "kcopy") == 0 &&
	    ac_buffer(&c, BUF_X, CTX, 5) == 0 &&
	    ac_buffer(&c, BUF_Y, CTX, 6) == 0, "no session"))
		goto out;
	ac_mem(&a[0], 0, BUF_O);
	ac_mem(&a[1], 1, BUF_X);
	v1 = ac_launch(&c, Q, K_COPY, NWORDS, a, 2) == 0 ? ac_word(&c, BUF_O) :
	    -1;
	release(&c, VCL__KIND__KIND_MEM, BUF_X);
	ac_mem(&a[1], 1, BUF_Y);
	v2 = ac_launch(&c, Q, K_COPY, NWORDS, a, 2) == 0 ? ac_word(&c, BUF_O) :
	    -1;
	ac_buffer(&c, BUF_X, CTX, 7);
	ac_mem(&a[1], 1, BUF_X);
	v3 = ac_launch(&c, Q, K_COPY, NWORDS, a, 2) == 0 ? ac_word(&c, BUF_O) :
	    -1;
	check("reused_id_reads_new_buffer", v1 == 5 && v2 == 6 && v3 == 7,
	    "copied %d, %d, %d; want 5, 6, 7", v1, v2, v3);
out:
	conn_close(&c);
	srv_stop(&sv, "reused_server_exit");
}

/* NULL first on a fresh kernel, then a buffer, NULL again; __local sizes. */
static void
test_null_local(void)
{
	struct srv	sv;
	struct conn	c;
	Vcl__KernelArg	a[3];
	static const uint64_t p[] = { 0, BUF_A, 0, 0, BUF_A, BUF_A, 0 };
	static const uint64_t la[] = { 4, 8, 8, 4, 64 };
	int		i, bad = 0, got = 0;

	if (!srv_start(&sv, "null_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("null_setup", ac_setup(&c, &sv) == 0 &&
	    raw_kernel(&c, K_NULL, PROG, "knull") == 0 &&
	    raw_kernel(&c, K_LOC2, PROG, "kloc2") == 0 &&
	    ac_buffer(&c, BUF_A, CTX, 9) == 0, "no session"))
		goto out;
	for (i = 0; i < (int)(sizeof p / sizeof p[0]); i++) {
		ac_mem(&a[0], 0, p[i]);
		ac_mem(&a[1], 1, BUF_O);
		if (ac_launch(&c, Q, K_NULL, 1, a, 2) != 0 ||
		    (got = ac_word(&c, BUF_O)) != (p[i] != 0 ? 9 : -1)) {
			bad = 1;
			break;
		}
	}
	check("null_each_launch", !bad, "launch %d wrote %d", i, got);
	for (i = 0, bad = 0; i < (int)(sizeof la / sizeof la[0]); i++) {
		ac_local(&a[0], 0, la[i]);
		ac_local(&a[1], 1, 4);
		ac_mem(&a[2], 2, i & 1 ? BUF_O2 : BUF_O);
		if (ac_launch(&c, Q, K_LOC2, 1, a, 3) != 0 ||
		    (got = ac_word(&c, i & 1 ? BUF_O2 : BUF_O)) != 3) {
			bad = 1;
			break;
		}
	}
	check("local_each_launch", !bad, "launch %d wrote %d", i, got);
	/* A size over every device's local memory is still refused. */
	ac_local(&a[0], 0, 1ull << 40);
	ac_local(&a[1], 1, 4);
	ac_mem(&a[2], 2, BUF_O);
	check("local_huge_refused", ac_launch(&c, Q, K_LOC2, 1, a, 3) ==
	    CL_INVALID_ARG_SIZE, "want CL_INVALID_ARG_SIZE");
out:
	conn_close(&c);
	srv_stop(&sv, "null_server_exit");
}

/*
 * A launch held behind a user event keeps its decoded request while
 * hundreds of others are decoded and freed: it runs with its own bytes.
 */
static void
test_held(void)
{
	struct srv		sv;
	struct conn		c;
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	ue = VCL__CREATE_USER_EVENT__INIT;
	Vcl__SetUserEventStatus	us = VCL__SET_USER_EVENT_STATUS__INIT;
	Vcl__KernelArg		a[2];
	int			x, i, rc = 0, v1, v2;

	if (!srv_start(&sv, "held_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("held_setup", ac_setup(&c, &sv) == 0 &&
	    raw_kernel(&c, K_VAL, PROG, "kval") == 0, "no session"))
		goto out;
	ue.id = UE;
	ue.context = CTX;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	rc = send_req(&c, &r, NULL, 0);
	x = 4242;
	ac_value(&a[0], 0, &x, sizeof x);
	ac_mem(&a[1], 1, BUF_O);
	if (rc == 0)
		rc = ac_send(&c, Q, K_VAL, 1, UE, a, 2);
	for (i = 0; i < NBUSY && rc == 0; i++) {
		x = i;
		ac_mem(&a[1], 1, BUF_O2);
		rc = ac_send(&c, Q2, K_VAL, 1, 0, a, 2);
	}
	if (rc == 0)
		rc = raw_finish(&c, Q2);
	us.event = UE;
	us.status = CL_COMPLETE;
	r = (Vcl__Request)VCL__REQUEST__INIT;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &us;
	if (rc == 0)
		rc = send_req(&c, &r, NULL, 0);
	if (rc == 0)
		rc = raw_finish(&c, Q);
	v1 = ac_word(&c, BUF_O);
	v2 = ac_word(&c, BUF_O2);
	check("held_runs_with_its_bytes", rc == 0 && v1 == 4242 &&
	    v2 == NBUSY - 1, "rc %d, held wrote %d (want 4242), last %d "
	    "(want %d)", rc, v1, v2, NBUSY - 1);
out:
	conn_close(&c);
	srv_stop(&sv, "held_server_exit");
}

static const struct test tests[] = {
	{ "value",	test_value,	120 },
	{ "buffer",	test_buffer,	120 },
	{ "reused_id",	test_reused_id,	120 },
	{ "null_local",	test_null_local, 120 },
	{ "held",	test_held,	120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
