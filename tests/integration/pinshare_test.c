/* pinshare_test.c - one session cannot take all of the server's pinned memory. */

/*
 * usage: pinshare_test VCLSERVER
 *
 * --max-pinned bounds pinned host memory server-wide; a session may hold
 * only its share of it (--max-pinned-session, by default half). Checked
 * with shared rings, which are pinned once per (ring, context) pair for
 * the session's life: the budget holds two rings; session a copies
 * through its ring in two contexts, which would pin it twice and take the
 * whole budget; its second pair must stay pageable (with its bytes
 * exact), so that session b's ring is still pinned (Stats session_pinned
 * of each session, ring_pinned of all). The harness is rawproto.c.
 */

#include <sys/mman.h>

#include "rawproto.h"
#include "vcl_shm.h"

#define SLOTS		RAW_RING_SLOTS
#define SLOT		RAW_RING_SLOT
#define RING		(VCL_SHM_PAGE + SLOTS * SLOT)
#define BUF		(2 * SLOT)

/* A context's objects: context, queue, BUF-byte buffer. */
struct objs {
	uint64_t	ctx, q, mem;
};

/* A shared WriteBuffer (ReadBuffer if !write) on o: its status. */
static int
xfer(struct conn *c, const struct objs *o, int write, uint64_t off,
    uint32_t slot)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	w = VCL__WRITE_BUFFER__INIT;
	Vcl__ReadBuffer		rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;
	struct reply		rp;
	int			st;

	e.queue = o->q;
	if (write) {
		w.q = &e;
		w.mem = o->mem;
		w.offset = off;
		w.size = SLOT;
		w.has_shm_slot = 1;
		w.shm_slot = slot;
		r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
		r.write_buffer = &w;
	} else {
		rb.q = &e;
		rb.mem = o->mem;
		rb.offset = off;
		rb.size = SLOT;
		rb.has_shm_slot = 1;
		rb.shm_slot = slot;
		r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
		r.read_buffer = &rb;
	}
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.bulk_len != 0 ? 2 : rp.r->status;
	reply_free(&rp);
	return (st);
}

/* Make o's context, queue and buffer on c. */
static int
objects(struct conn *c, const struct objs *o)
{
	return (create_context(c, o->ctx) != 0 || create_queue(c, o->q,
	    o->ctx) != 0 || create_buffer(c, o->mem, o->ctx, BUF, NULL, 0) !=
	    0 ? -1 : 0);
}

/* Two slots' pattern seed into o's buffer and back: 0 if exact. */
static int
roundtrip(struct conn *c, const struct objs *o, struct raw_ring *rg,
    unsigned seed)
{
	size_t		i;
	unsigned	k;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < SLOT; i++)
			raw_ring_slot(rg, k)[i] = (uint8_t)(i * 7 + k * 13 + seed);
		if (xfer(c, o, 1, (uint64_t)k * SLOT, k) != CL_SUCCESS)
			return (-1);
	}
	for (k = 0; k < 2; k++) {
		memset(raw_ring_slot(rg, 3 - k), 0xee, SLOT);
		if (xfer(c, o, 0, (uint64_t)k * SLOT, 3 - k) != CL_SUCCESS)
			return (-1);
		for (i = 0; i < SLOT; i++)
			if (raw_ring_slot(rg, 3 - k)[i] !=
			    (uint8_t)(i * 7 + k * 13 + seed))
				return (-1);
	}
	return (0);
}

/*
 * Poll c's Stats until its session_pinned is want (and, unless 0,
 * ring_pinned is all): 0, or -1 with the last seen in *got, *all.
 */
static int
wait_session(struct conn *c, uint64_t want, uint64_t want_all,
    uint64_t *got, uint64_t *all)
{
	Vcl__StatsResult	st;
	int			i;

	*got = *all = UINT64_MAX;
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, &st) != 0)
			return (-1);
		*got = st.has_session_pinned ? st.session_pinned : UINT64_MAX;
		*all = st.has_ring_pinned ? st.ring_pinned : UINT64_MAX;
		if (*got == want && (want_all == 0 || *all == want_all))
			return (0);
		poll_wait();
	}
	return (-1);
}

/*
 * The budget holds two rings; a's ring in two contexts would take both.
 * a's second pair stays pageable (its share is one ring), b's ring is
 * pinned. Without the share, a held the budget and b stayed pageable.
 */
static void
test_share(void)
{
	static const char *const args[] = { "--max-pinned", "2056K", NULL };
	static const struct objs o1 = { 1, 2, 3 }, o2 = { 11, 12, 13 };
	struct srv	 sv;
	struct conn	 a, b;
	struct raw_ring	 ra = { -1, MAP_FAILED }, rb = { -1, MAP_FAILED };
	uint64_t	 got = 0, all = 0;
	int		 ok;

	_Static_assert(2 * RING == 2056u << 10, "--max-pinned is two rings");
	a.fd = b.fd = -1;
	if (!srv_start(&sv, "share_server", "127.0.0.1:0", args))
		return;
	if (!check("share_setup", conn_session(&a, &sv) == 0 &&
	    conn_session(&b, &sv) == 0 && raw_ring_give(&ra, &a) == 0 &&
	    raw_ring_give(&rb, &b) == 0 && objects(&a, &o1) == 0 &&
	    objects(&a, &o2) == 0 && objects(&b, &o1) == 0,
	    "no sessions, rings or objects"))
		goto out;
	ok = roundtrip(&a, &o1, &ra, 1) == 0 &&
	    wait_session(&a, RING, RING, &got, &all) == 0;
	check("share_first", ok, "a's ring in its first context: "
	    "session_pinned %llu, ring_pinned %llu (UINT64_MAX: not "
	    "reported)", (unsigned long long)got, (unsigned long long)all);
	ok = roundtrip(&a, &o2, &ra, 2) == 0;
	check("share_second_exact", ok, "a's ring in its second context: "
	    "bytes not exact");
	ok = roundtrip(&b, &o1, &rb, 3) == 0;
	check("share_other_exact", ok, "b's ring: bytes not exact");
	ok = wait_session(&b, RING, 2 * RING, &got, &all) == 0;
	check("share_other_pinned", ok, "b's ring after a's two contexts: "
	    "session_pinned %llu, ring_pinned %llu; a took the budget",
	    (unsigned long long)got, (unsigned long long)all);
	ok = wait_session(&a, RING, 2 * RING, &got, &all) == 0;
	check("share_capped", ok, "a holds %llu pinned bytes, its share is "
	    "%u", (unsigned long long)got, RING);
out:
	conn_close(&a);
	conn_close(&b);
	raw_ring_free(&ra);
	raw_ring_free(&rb);
	srv_stop(&sv, "share_server_stop");
}

static const struct test tests[] = {
	{ "share", test_share, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
