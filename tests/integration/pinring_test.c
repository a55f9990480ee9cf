/* pinring_test.c - a client's ring pinned for the runtime, per context. */

/*
 * usage: pinring_test VCLSERVER
 *
 * The server wraps a client's ring once per context in a
 * CL_MEM_USE_HOST_PTR buffer, so that the runtime moves its slots by DMA.
 * Checked here, with every byte of every transfer: the wrapper exists
 * once the ring was used with a context (Stats ring_pinned: the ring's
 * size, once however many transfers); it goes when its context is
 * released, comes back for a new context, goes when the session closes
 * (and a later session's ring is the only one held); a runtime that
 * refuses the wrapper (VCL_TEST_PIN_REFUSE=1), a --max-pinned it does
 * not fit under, and VCL_SHM_PIN=0 leave the ring pageable and the
 * transfers exact.
 */

#include <sys/mman.h>

#include "rawproto.h"
#include "vcl_shm.h"

#define SLOTS		RAW_RING_SLOTS
#define SLOT		RAW_RING_SLOT
#define RING		(VCL_SHM_PAGE + SLOTS * SLOT)
#define BUF		(3 * SLOT)

#define R_CTX		1
#define R_Q		2
#define R_MEM		3

/* A shared WriteBuffer (ReadBuffer if !write) on R_Q/R_MEM: its status. */
static int
xfer(struct conn *c, int write, uint64_t off, uint64_t size, uint32_t slot)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	w = VCL__WRITE_BUFFER__INIT;
	Vcl__ReadBuffer		rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;
	struct reply		rp;
	int			st, i;

	e.queue = R_Q;
	if (write) {
		w.q = &e;
		w.mem = R_MEM;
		w.offset = off;
		w.size = size;
		w.has_shm_slot = 1;
		w.shm_slot = slot;
		r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
		r.write_buffer = &w;
	} else {
		rb.q = &e;
		rb.mem = R_MEM;
		rb.offset = off;
		rb.size = size;
		rb.has_shm_slot = 1;
		rb.shm_slot = slot;
		r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
		r.read_buffer = &rb;
	}
	if (send_req(c, &r, NULL, 0) != 0)
		return (1);
	for (i = 0; i < 1000; i++) {
		if (recv_msg(c, &rp) != 0)
			return (1);
		if (rp.r != NULL && rp.r->seq == r.seq) {
			st = rp.bulk_len != 0 ? 2 : rp.r->status;
			reply_free(&rp);
			return (st);
		}
		reply_free(&rp);
	}
	return (1);
}

/* Context, queue and a BUF-byte buffer (ids R_*). */
static int
objects(struct conn *c)
{
	return (create_context(c, R_CTX) != 0 || create_queue(c, R_Q,
	    R_CTX) != 0 || create_buffer(c, R_MEM, R_CTX, BUF, NULL, 0) != 0 ?
	    -1 : 0);
}

/* Release what objects() made. */
static int
objects_release(struct conn *c)
{
	return (release(c, VCL__KIND__KIND_MEM, R_MEM) != 0 ||
	    release(c, VCL__KIND__KIND_QUEUE, R_Q) != 0 ||
	    release(c, VCL__KIND__KIND_CONTEXT, R_CTX) != 0 ? -1 : 0);
}

/*
 * Pattern seed into the buffer through slots 0..2 (whole slots, at
 * offsets), back through slots 3, 2, 1 and compared: 0 if every byte
 * came back.
 */
static int
roundtrip(struct conn *c, struct raw_ring *rg, unsigned seed)
{
	size_t		i;
	unsigned	k;

	for (k = 0; k < 3; k++) {
		for (i = 0; i < SLOT; i++)
			raw_ring_slot(rg, k)[i] = (uint8_t)(i * 7 + k * 13 + seed);
		if (xfer(c, 1, (uint64_t)k * SLOT, SLOT, k) != CL_SUCCESS)
			return (-1);
	}
	for (k = 0; k < 3; k++) {
		memset(raw_ring_slot(rg, 3 - k), 0xee, SLOT);
		if (xfer(c, 0, (uint64_t)k * SLOT, SLOT, 3 - k) != CL_SUCCESS)
			return (-1);
		for (i = 0; i < SLOT; i++)
			if (raw_ring_slot(rg, 3 - k)[i] !=
			    (uint8_t)(i * 7 + k * 13 + seed)) {
				note("byte %zu of chunk %u: %#x", i, k,
				    raw_ring_slot(rg, 3 - k)[i]);
				return (-1);
			}
	}
	return (0);
}

/* Poll Stats until ring_pinned is want; 0, or -1 with the last in *got. */
static int
wait_pinned(struct conn *c, uint64_t want, uint64_t *got)
{
	Vcl__StatsResult	st;
	int			i;

	*got = UINT64_MAX;
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, &st) != 0)
			return (-1);
		*got = st.has_ring_pinned ? st.ring_pinned : UINT64_MAX;
		if (*got == want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/* ring_pin_refused now; UINT64_MAX if none came. */
static uint64_t
refused(struct conn *c)
{
	Vcl__StatsResult	st;

	if (stats(c, &st) != 0 || !st.has_ring_pin_refused)
		return (UINT64_MAX);
	return (st.ring_pin_refused);
}

/*
 * The wrapper's life: made at the ring's first use with a context, once;
 * gone with the context; made again for the next; gone with the session;
 * a later session's ring alone is held.
 */
static void
test_lifetime(void)
{
	struct srv	 sv;
	struct conn	 c, w, c2;
	struct raw_ring	 rg = { -1, MAP_FAILED }, rg2 = { -1, MAP_FAILED };
	uint64_t	 got = 0;
	int		 ok;

	c.fd = w.fd = c2.fd = -1;
	if (!srv_start(&sv, "lifetime_server", "127.0.0.1:0", NULL))
		return;
	if (!check("lifetime_setup", conn_session(&c, &sv) == 0 &&
	    conn_session(&w, &sv) == 0 && raw_ring_give(&rg, &c) == 0 &&
	    objects(&c) == 0, "no session, ring or objects"))
		goto out;
	ok = wait_pinned(&w, 0, &got) == 0;
	check("lifetime_none_before", ok,
	    "%llu bytes pinned before any transfer", (unsigned long long)got);
	check("lifetime_bytes", roundtrip(&c, &rg, 1) == 0,
	    "bytes through the pinned ring differ");
	ok = wait_pinned(&w, RING, &got) == 0;
	check("lifetime_pinned", ok,
	    "ring_pinned %llu after transfers, not the ring's %u",
	    (unsigned long long)got, RING);
	ok = roundtrip(&c, &rg, 2) == 0 && wait_pinned(&w, RING, &got) == 0;
	check("lifetime_once", ok,
	    "ring_pinned %llu after more transfers (one wrapper a context)",
	    (unsigned long long)got);
	ok = objects_release(&c) == 0 && wait_pinned(&w, 0, &got) == 0;
	check("lifetime_context_gone", ok,
	    "ring_pinned %llu after the context was released",
	    (unsigned long long)got);
	ok = objects(&c) == 0 && roundtrip(&c, &rg, 3) == 0 &&
	    wait_pinned(&w, RING, &got) == 0;
	check("lifetime_new_context", ok,
	    "a new context: ring_pinned %llu", (unsigned long long)got);
	conn_close(&c);
	ok = wait_pinned(&w, 0, &got) == 0;
	check("lifetime_session_gone", ok,
	    "ring_pinned %llu after the session closed",
	    (unsigned long long)got);
	if (check("lifetime_setup2", conn_session(&c2, &sv) == 0 &&
	    raw_ring_give(&rg2, &c2) == 0 && objects(&c2) == 0,
	    "no second session")) {
		ok = roundtrip(&c2, &rg2, 4) == 0 &&
		    wait_pinned(&w, RING, &got) == 0;
		check("lifetime_other_ring", ok,
		    "another session's ring: ring_pinned %llu",
		    (unsigned long long)got);
	}
	check("lifetime_refused_none", refused(&w) == 0,
	    "a wrapper refused on a plain server");
out:
	conn_close(&c2);
	conn_close(&c);
	conn_close(&w);
	raw_ring_free(&rg2);
	raw_ring_free(&rg);
	srv_stop(&sv, "lifetime_server_stop");
}

/*
 * The ring stays pageable (set up by env name=val, extra arguments) and
 * every byte still goes through it; want_refused: counted as refused.
 */
static void
pageable(const char *name, const char *env, const char *val,
    const char *const *args, int want_refused)
{
	struct srv	 sv;
	struct conn	 c;
	struct raw_ring	 rg = { -1, MAP_FAILED };
	uint64_t	 got = 0, n;
	char		 what[64];
	int		 ok;

	c.fd = -1;
	if (env != NULL)
		setenv(env, val, 1);
	snprintf(what, sizeof what, "%s_server", name);
	if (!srv_start(&sv, what, "127.0.0.1:0", args))
		return;
	if (env != NULL)
		unsetenv(env);
	snprintf(what, sizeof what, "%s_setup", name);
	if (!check(what, conn_session(&c, &sv) == 0 && raw_ring_give(&rg, &c) ==
	    0 && objects(&c) == 0, "no session, ring or objects"))
		goto out;
	snprintf(what, sizeof what, "%s_bytes", name);
	check(what, roundtrip(&c, &rg, 5) == 0 && roundtrip(&c, &rg, 6) == 0,
	    "bytes through the pageable ring differ");
	snprintf(what, sizeof what, "%s_unpinned", name);
	ok = wait_pinned(&c, 0, &got) == 0;
	check(what, ok, "ring_pinned %llu",
	    (unsigned long long)got);
	n = refused(&c);
	snprintf(what, sizeof what, "%s_refused", name);
	check(what, want_refused ? n == 1 : n == 0,
	    "ring_pin_refused %llu (asked once per ring and context)",
	    (unsigned long long)n);
out:
	conn_close(&c);
	raw_ring_free(&rg);
	snprintf(what, sizeof what, "%s_server_stop", name);
	srv_stop(&sv, what);
}

/* The runtime refuses the wrapper: transfers go as before. */
static void
test_refused(void)
{
	pageable("refused", "VCL_TEST_PIN_REFUSE", "1", NULL, 1);
}

/* The ring does not fit under --max-pinned: transfers go as before. */
static void
test_over_budget(void)
{
	static const char *const args[] = { "--max-pinned", "512K", NULL };

	pageable("budget", NULL, NULL, args, 1);
}

/* VCL_SHM_PIN=0: no wrapper is tried. */
static void
test_off(void)
{
	pageable("off", "VCL_SHM_PIN", "0", NULL, 0);
}

static const struct test tests[] = {
	{ "lifetime",	test_lifetime,		60 },
	{ "refused",	test_refused,		60 },
	{ "budget",	test_over_budget,	60 },
	{ "off",	test_off,		60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
