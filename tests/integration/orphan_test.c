/* orphan_test.c - commands whose completion the server cannot watch. */

/*
 * usage: orphan_test VCLSERVER
 *
 * The runtime took a command, but its event cannot be given to the
 * client (over --max-objects): the request fails on its event and reply,
 * yet the runtime still copies to or from the command's memory. Checked
 * here for a shared transfer (ShmRing): its error reply comes once the
 * copy is done, so the client may take the slot again at once; its slot
 * stays the server's, and the ring mapped, until then, even when the
 * client goes without the reply; the server lives on and holds nothing
 * after.
 */

#include <sys/mman.h>

#include "rawproto.h"

#define CTX		1
#define Q		2
#define MEM		3
#define BIG		4
#define EV		100	/* the fifth object: over the limit */
#define EV_LEFT		101	/* the same, its reply left unread */
#define BIG_SIZE	(64u << 20)
#define FILLS		4	/* ahead of the transfer on its queue */
#define XFER		RAW_RING_SLOT
#define SLOT_NO		1

/*
 * FILLS fills of BIG on Q (none if !fills), then a shared write (read if
 * !write) of slot SLOT_NO with event ev (0: none) behind them, in one
 * send. Returns the transfer's seq, 0 on error.
 */
static uint64_t
send_behind(struct conn *c, int write, int fills, uint64_t ev)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__FillBuffer		f = VCL__FILL_BUFFER__INIT;
	Vcl__WriteBuffer	w = VCL__WRITE_BUFFER__INIT;
	Vcl__ReadBuffer		rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT, ex = VCL__ENQUEUE__INIT;
	struct vcl_buf		b;
	uint8_t			pat[4] = { 1, 2, 3, 4 };
	uint64_t		seq;
	int			rc = 0, i;

	memset(&b, 0, sizeof b);
	e.queue = Q;
	f.q = &e;
	f.mem = BIG;
	f.pattern.data = pat;
	f.pattern.len = sizeof pat;
	f.size = BIG_SIZE;
	for (i = 0; fills && i < FILLS; i++) {
		r.seq = ++c->seq;
		r.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
		r.fill_buffer = &f;
		rc |= vcl_buf_pack(&b, &r.base, 0);
	}
	ex.queue = Q;
	ex.has_event = ev != 0;
	ex.event = ev;
	r.seq = seq = ++c->seq;
	if (write) {
		w.q = &ex;
		w.mem = MEM;
		w.size = XFER;
		w.has_shm_slot = 1;
		w.shm_slot = SLOT_NO;
		r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
		r.write_buffer = &w;
	} else {
		rb.q = &ex;
		rb.mem = MEM;
		rb.size = XFER;
		rb.has_shm_slot = 1;
		rb.shm_slot = SLOT_NO;
		r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
		r.read_buffer = &rb;
	}
	rc |= vcl_buf_pack(&b, &r.base, 0);
	if (rc != 0 || send_raw(c, b.data, b.len) != 0)
		seq = 0;
	vcl_buf_free(&b);
	return (seq);
}

/* The status of reply seq; 1 if none came. */
static int
reply_of(struct conn *c, uint64_t seq)
{
	struct reply	rp;
	int		st, i;

	for (i = 0; i < 1000; i++) {
		if (recv_msg(c, &rp) != 0)
			return (1);
		if (rp.r != NULL && rp.r->seq == seq) {
			st = rp.r->status;
			reply_free(&rp);
			return (st);
		}
		reply_free(&rp);
	}
	return (1);
}

/*
 * A shared write and a shared read whose event is over the limit, queued
 * behind fills still running: refused on their reply, which comes once
 * the copy is done: the same slot taken again at once serves a transfer
 * (CL_SUCCESS, not CL_INVALID_VALUE for a slot in use). Then the same
 * refused transfer again, and the client goes without its reply. The
 * server keeps its mapping of the ring until the copy is done (a copy
 * into or from unmapped memory kills it otherwise), then holds nothing.
 */
static void
test_shm(void)
{
	static const char *const args[] = { "--shm-ring-max", "2M",
	    "--max-objects", "4", "--max-pinned", "0", NULL };
	struct srv		 sv;
	struct conn		 c, d;
	struct raw_ring		 rg;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 seq;
	int			 write, rs;

	for (write = 1; write >= 0; write--) {
		c.fd = d.fd = -1;
		rg.fd = -1;
		rg.base = MAP_FAILED;
		if (!srv_start(&sv, "shm_server_start", "127.0.0.1:0", args))
			break;
		if (!check("shm_setup", conn_session(&c, &sv) == 0 &&
		    create_context(&c, CTX) == 0 &&
		    create_queue(&c, Q, CTX) == 0 &&
		    create_buffer(&c, MEM, CTX, XFER, NULL, 0) == 0 &&
		    create_buffer(&c, BIG, CTX, BIG_SIZE, NULL, 0) == 0 &&
		    raw_ring_give(&rg, &c) == 0 && conn_session(&d, &sv) == 0,
		    "no sessions, objects or ring"))
			goto next;
		seq = send_behind(&c, write, 1, EV);
		rs = seq != 0 ? reply_of(&c, seq) : 1;
		check("shm_refused", rs < 0, "shared %s: status %d, want an "
		    "error", write ? "write" : "read", rs);
		seq = send_behind(&c, write, 0, 0);
		rs = seq != 0 ? reply_of(&c, seq) : 1;
		check("shm_slot_reused", rs == CL_SUCCESS, "shared %s in the "
		    "slot just answered: status %d", write ? "write" : "read",
		    rs);
		check("shm_left", send_behind(&c, write, 1, EV_LEFT) != 0,
		    "shared %s not sent", write ? "write" : "read");
		conn_close(&c);
		raw_ring_free(&rg);
		check("shm_freed", wait_empty(&d, &st) == 0, "the server "
		    "still holds %llu objects, %llu bytes",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);
		check("shm_alive", srv_alive(&sv), "server died: %s",
		    srv_how(&sv));
next:
		conn_close(&c);
		conn_close(&d);
		raw_ring_free(&rg);
		srv_stop(&sv, "shm_server_exit");
	}
}

static const struct test tests[] = {
	{ "shm",	test_shm,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
