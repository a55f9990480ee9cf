/* wchunk_test.c - large writes copied to their buffer as their bytes come. */

/*
 * usage: wchunk_test VCLSERVER
 *
 * A WriteBuffer of two chunks or more (--write-chunk) whose bytes follow
 * its frame on the control stream is copied to its buffer chunk by chunk
 * while the rest still arrives; the request itself enqueues the last part
 * (vcl_op_mem.c, "Chunked writes"). Checked here over the raw wire: the
 * chunks go before the last byte (Stats writes_chunked, read by a second
 * session while the bulk is half sent), the bytes land whole at their
 * offset and a read right behind sees them; a write with a wait list, on
 * an out-of-order or profiling queue, of fewer than two chunks, or behind
 * a held command of its queue is not chunked and keeps its order; a client
 * gone mid-bulk leaves nothing behind; a chunk refused
 * (VCL_TEST_WRITE_FAIL_CHUNK=I: chunk I of every chunked write) fails the
 * write once, on its event or at the next finish. Through --write-slots:
 * the ring's offsets for 2 and 16 slots, spills and waits, a SIGHUP
 * changing chunk or slots mid-write, a session closed in each state, and
 * held writes freeing staging of their own size.
 */

#include "rawproto.h"

#define CHUNK		(64u << 10)
#define BIG		((1u << 20) + 123u)	/* 16 chunks and a short part */
#define HALF		(5u * CHUNK + 17u)	/* sent first: 5 whole chunks */
#define OFF		(4096u + 5u)		/* where the write lands */
#define SPACE		(OFF + BIG + 999u)	/* the buffer's size */
#define CTX		1
#define Q		2
#define MEM		3
#define Q_OOO		4
#define Q_PROF		5
#define ESPACE		(4u * CHUNK + 7u)	/* the edges' buffer */

static const char *const wc_args[] = { "--write-chunk", "64K", NULL };

/* Session with context CTX, queue Q and buffer MEM of size zeros. */
static int
setup(struct conn *c, const struct srv *sv, uint64_t size)
{
	if (conn_session(c, sv) != 0)
		return (-1);
	if (create_context(c, CTX) != 0 || create_queue(c, Q, CTX) != 0 ||
	    create_buffer(c, MEM, CTX, size, NULL, 0) != 0)
		return (-1);
	return (0);
}

/* CreateQueue{id, CTX, device 0, CL_QUEUE_PROPERTIES props}. */
static int
create_queue_props(struct conn *c, uint64_t id, uint64_t props)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateQueue	m = VCL__CREATE_QUEUE__INIT;
	uint64_t		p[2] = { CL_QUEUE_PROPERTIES, props };

	m.id = id;
	m.context = CTX;
	m.device = 0;
	m.n_properties = 2;
	m.properties = p;
	r.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	r.create_queue = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * Send WriteBuffer{q, MEM, off, size, event, wait list} announcing size
 * bulk bytes, and the first part of them (sent of data). Returns 0 or -1.
 */
static int
send_write(struct conn *c, uint64_t q, uint64_t off, uint64_t size,
    uint64_t event, uint64_t *wait, size_t nwait, const uint8_t *data,
    uint64_t sent)
{
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = q;
	if (event != 0) {
		e.has_event = 1;
		e.event = event;
	}
	e.n_wait = nwait;
	e.wait = wait;
	return (raw_write_part(c, &e, MEM, off, size, size, data, sent) != 0 ?
	    0 : -1);
}

/*
 * Writes chunked so far (Stats writes_chunked), or with slots set the
 * times one found a slot still copied out (write_slot_waits); UINT64_MAX
 * when there is no Stats.
 */
static uint64_t
wc_count(struct conn *c, int slots)
{
	Vcl__StatsResult	st;

	if (stats(c, &st) != 0 || !(slots ? st.has_write_slot_waits :
	    st.has_writes_chunked))
		return (UINT64_MAX);
	return (slots ? st.write_slot_waits : st.writes_chunked);
}
#define chunked(c)	wc_count((c), 0)
#define slot_waits(c)	wc_count((c), 1)

/* Poll (bounded) until want writes were chunked. Returns 0 or -1. */
static int
wait_chunked(struct conn *c, uint64_t want)
{
	uint64_t	n = 0;
	int		i;

	for (i = 0; i < STATS_POLLS; i++) {
		if ((n = chunked(c)) == UINT64_MAX)
			return (-1);
		if (n >= want)
			return (0);
		poll_wait();
	}
	note("writes_chunked stays %llu, want %llu", (unsigned long long)n,
	    (unsigned long long)want);
	return (-1);
}

/*
 * Read size bytes of buffer MEM at off on queue q into *rp; 0 or -1. The
 * status of event ev, if notified before the reply, goes to *evst.
 */
static int
read_seen(struct conn *c, uint64_t q, uint64_t off, uint64_t size,
    struct reply *rp, uint64_t ev, cl_int *evst)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;
	size_t		i;
	int		n;

	e.queue = q;
	m.q = &e;
	m.mem = MEM;
	m.offset = off;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	if (send_req(c, &r, NULL, 0) != 0)
		return (-1);
	for (n = 0; n < 1000; n++) {
		if (recv_msg(c, rp) != 0)
			return (-1);
		for (i = 0; rp->tc->notify != NULL && i < rp->tc->n_notify;
		    i++)
			if (ev != 0 && rp->tc->notify[i]->event == ev)
				*evst = rp->tc->notify[i]->status;
		if (rp->r != NULL && rp->r->seq == r.seq)
			break;
		reply_free(rp);
	}
	if (n == 1000)
		return (-1);
	if (rp->r->status != CL_SUCCESS || rp->bulk_len != size) {
		note("read: status %d, %llu bytes", rp->r->status,
		    (unsigned long long)rp->bulk_len);
		reply_free(rp);
		return (-1);
	}
	return (0);
}

/* Read size bytes of buffer MEM at off on queue q into *rp; 0 or -1. */
static int
read_at(struct conn *c, uint64_t q, uint64_t off, uint64_t size,
    struct reply *rp)
{
	return (read_seen(c, q, off, size, rp, 0, NULL));
}

/* Does buffer MEM hold want (n bytes) at off, read on queue q? */
static int
holds(struct conn *c, uint64_t q, uint64_t off, const uint8_t *want,
    size_t n)
{
	struct reply	rp;
	size_t		i;
	int		ok;

	if (read_at(c, q, off, n, &rp) != 0)
		return (0);
	for (i = 0; i < n && rp.bulk[i] == want[i]; i++)
		;
	if (!(ok = i == n))
		note("byte %zu differs: %#x, want %#x", i, rp.bulk[i],
		    want[i]);
	reply_free(&rp);
	return (ok);
}

/*
 * A write sent in two parts: its first chunks reach the runtime before the
 * rest is sent (seen from a second session), its bytes land at its offset
 * with the bytes around untouched, its event completes, and a read sent
 * right behind it on its queue sees the new bytes.
 */
static void
test_early(void)
{
	struct srv		 sv;
	struct conn		 c, d;
	struct reply		 rp;
	Vcl__StatsResult	 sst;
	uint8_t			*data, *zero;
	uint64_t	 base;
	cl_int		 st = 1;
	int		 rc;

	c.fd = d.fd = -1;
	data = raw_pattern(BIG, 1);
	zero = calloc(1, OFF);
	if (data == NULL || zero == NULL ||
	    !srv_start(&sv, "early_server_start", "127.0.0.1:0", wc_args)) {
		free(data);
		free(zero);
		return;
	}
	if (!check("early_setup", setup(&c, &sv, SPACE) == 0 &&
	    conn_session(&d, &sv) == 0 && (base = chunked(&d)) !=
	    UINT64_MAX, "no sessions, context, queue, buffer or Stats"))
		goto out;
	rc = send_write(&c, Q, OFF, BIG, 10, NULL, 0, data, HALF);
	if (!check("early_chunks_before_last_byte", rc == 0 &&
	    wait_chunked(&d, base + 1) == 0, "no chunk enqueued while the "
	    "bulk was half sent"))
		goto out;
	rc = send_raw(&c, data + HALF, BIG - HALF);
	if (!check("early_rest_sent", rc == 0, "cannot send the rest"))
		goto out;
	/* Right behind it, nothing waited for: the read sees the write. */
	if (check("early_read_behind", read_seen(&c, Q, OFF, BIG, &rp, 10,
	    &st) == 0, "no read reply")) {
		check("early_bytes", memcmp(rp.bulk, data, BIG) == 0,
		    "the bytes read back are not the bytes written");
		reply_free(&rp);
	}
	/* Its Notify comes before the read's reply, or after it. */
	if (st == 1 && wait_notify(&c, 10, &st) != 0)
		st = 1;
	check("early_event", st == CL_COMPLETE, "the write's event: %d", st);
	check("early_around", holds(&c, Q, 0, zero, OFF) &&
	    holds(&c, Q, OFF + BIG, zero, SPACE - OFF - BIG),
	    "bytes outside the write changed");
	check("early_counted_once", chunked(&d) == base + 1,
	    "writes_chunked went from %llu to %llu", (unsigned long long)base,
	    (unsigned long long)chunked(&d));
	conn_close(&c);
	check("early_nothing_left", wait_empty(&d, &sst) == 0, "the server "
	    "still holds %llu objects, %llu bytes",
	    (unsigned long long)sst.objects, (unsigned long long)sst.bytes);
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	free(zero);
	srv_stop(&sv, "early_server_exit");
}

/*
 * Writes that must not go in chunks: with a wait list, on an out-of-order
 * queue, on a profiling queue, of fewer than two chunks. Each lands whole
 * and none is counted.
 */
static void
test_not_chunked(void)
{
	static const struct {
		const char	*what;
		uint64_t	 q;
		uint64_t	 size;
		int		 wait;
	} cases[] = {
		{ "wait_list",	Q,	BIG,		1 },
		{ "ooo_queue",	Q_OOO,	BIG,		0 },
		{ "profiling",	Q_PROF,	BIG,		0 },
		{ "small",	Q,	2 * CHUNK - 1,	0 },
	};
	struct srv	 sv;
	struct conn	 c, d;
	uint8_t		*data;
	uint64_t	 base, w = 20, ev, part;
	cl_int		 st;
	size_t		 i;
	char		 name[64];
	int		 rc;

	c.fd = d.fd = -1;
	if ((data = raw_pattern(BIG, 2)) == NULL)
		return;
	if (!srv_start(&sv, "not_server_start", "127.0.0.1:0", wc_args)) {
		free(data);
		return;
	}
	if (!check("not_setup", setup(&c, &sv, SPACE) == 0 &&
	    create_queue_props(&c, Q_OOO,
	    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0 &&
	    create_queue_props(&c, Q_PROF, CL_QUEUE_PROFILING_ENABLE) == 0 &&
	    conn_session(&d, &sv) == 0 && (base = chunked(&d)) != UINT64_MAX,
	    "no sessions, context, queues, buffer or Stats"))
		goto out;
	/* An event to wait on: a small write's, complete. */
	if (!check("not_event", send_write(&c, Q, 0, 16, w, NULL, 0, data,
	    16) == 0 && wait_notify(&c, w, &st) == 0 && st == CL_COMPLETE,
	    "no event to wait on"))
		goto out;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ev = 100 + i;
		data[0] = (uint8_t)(0x40 + i);	/* each write its own */
		part = cases[i].size / 2;
		rc = send_write(&c, cases[i].q, OFF, cases[i].size, ev,
		    cases[i].wait ? &w : NULL, cases[i].wait, data, part);
		if (rc == 0)
			rc = send_raw(&c, data + part, cases[i].size - part);
		snprintf(name, sizeof name, "not_%s_event", cases[i].what);
		st = 1;
		if (rc == 0 && wait_notify(&c, ev, &st) != 0)
			st = 1;
		check(name, st == CL_COMPLETE, "the write's event: %d", st);
		snprintf(name, sizeof name, "not_%s_bytes", cases[i].what);
		check(name, holds(&c, cases[i].q, OFF, data, cases[i].size),
		    "the bytes read back are not the bytes written");
		snprintf(name, sizeof name, "not_%s_not_chunked",
		    cases[i].what);
		check(name, chunked(&d) == base, "writes_chunked went from "
		    "%llu to %llu", (unsigned long long)base,
		    (unsigned long long)chunked(&d));
	}
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	srv_stop(&sv, "not_server_exit");
}

/*
 * A large write behind a held command of its queue (a small write waiting
 * on a user event not set yet) is held too, not copied early: once the
 * event is set the held write lands first and the large one over it.
 */
static void
test_held(void)
{
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	 ue = VCL__CREATE_USER_EVENT__INIT;
	Vcl__SetUserEventStatus	 us = VCL__SET_USER_EVENT_STATUS__INIT;
	uint8_t			*data, *first;
	uint64_t		 base, u = 30;
	int			 rc;

	c.fd = d.fd = -1;
	data = raw_pattern(BIG, 3);
	first = malloc(CHUNK);
	if (data == NULL || first == NULL ||
	    !srv_start(&sv, "held_server_start", "127.0.0.1:0", wc_args)) {
		free(data);
		free(first);
		return;
	}
	memset(first, 0xa5, CHUNK);
	if (!check("held_setup", setup(&c, &sv, SPACE) == 0 &&
	    conn_session(&d, &sv) == 0 && (base = chunked(&d)) != UINT64_MAX,
	    "no sessions, context, queue, buffer or Stats"))
		goto out;
	ue.id = u;
	ue.context = CTX;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	rc = send_req(&c, &r, NULL, 0);
	/* Held: its wait list names the unset user event. */
	if (rc == 0)
		rc = send_write(&c, Q, OFF, CHUNK, 0, &u, 1, first, CHUNK);
	/* Behind it on its queue: held as well, over the same bytes. */
	if (rc == 0)
		rc = send_write(&c, Q, OFF, BIG, 0, NULL, 0, data, HALF);
	if (rc == 0)
		rc = send_raw(&c, data + HALF, BIG - HALF);
	if (!check("held_sent", rc == 0, "cannot send the requests"))
		goto out;
	/* A round trip: the large write's frame is in and decided. */
	if (!check("held_round_trip", get_info_status(&c,
	    VCL__GET_INFO__WHAT__DEVICE, 0, CL_DEVICE_MAX_COMPUTE_UNITS) == 0,
	    "no reply to GetInfo"))
		goto out;
	check("held_not_chunked", chunked(&d) == base, "a write behind a "
	    "held command was chunked (writes_chunked %llu to %llu)",
	    (unsigned long long)base, (unsigned long long)chunked(&d));
	us.event = u;
	us.status = CL_COMPLETE;
	r = (Vcl__Request)VCL__REQUEST__INIT;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &us;
	rc = send_req(&c, &r, NULL, 0);
	check("held_finish", rc == 0 && raw_finish(&c, Q) == CL_SUCCESS,
	    "the queue's finish failed");
	check("held_order_kept", holds(&c, Q, OFF, data, BIG), "the held "
	    "write did not land before the large one behind it");
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	free(first);
	srv_stop(&sv, "held_server_exit");
}

#define VAN		(8u * CHUNK + 77u)	/* malloc'd staging (< 1 MiB) */
#define SPIN_PROG	5
#define SPIN_K		6
#define SPIN_MEM	7
#define SPIN_STEPS	(40u << 20)		/* a kernel of tens of ms */
/* The kernel that holds its queue (rawproto.c). */
#define SPIN_SETUP(c)	raw_spin_setup((c), CTX, SPIN_PROG, SPIN_K, SPIN_MEM)
#define SPIN_SEND(c)	raw_spin_send((c), Q, SPIN_K, SPIN_MEM, SPIN_STEPS)

static const char *const van_args[] = { "--write-chunk", "64K",
	"--max-pinned", "0", NULL };

/*
 * The client goes in the middle of a chunked write's bulk, its chunks
 * queued behind a kernel still running: the server frees the staging
 * (malloc'd: no pinned memory, under the pool's size) only once they are
 * copied (ASan sees a copy from freed memory), holds nothing more and
 * serves the next session.
 */
static void
test_vanish(void)
{
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st;
	uint8_t			*data;
	uint64_t		 base;
	int			 rc, i;

	c.fd = d.fd = -1;
	if ((data = raw_pattern(VAN, 4)) == NULL)
		return;
	if (!srv_start(&sv, "vanish_server_start", "127.0.0.1:0", van_args)) {
		free(data);
		return;
	}
	if (!check("vanish_stats", conn_session(&d, &sv) == 0 &&
	    (base = chunked(&d)) != UINT64_MAX, "no session or Stats"))
		goto out;
	for (i = 0; i < 2; i++) {
		if (!check("vanish_setup", setup(&c, &sv, VAN) == 0 &&
		    SPIN_SETUP(&c) == 0, "no session, context, queue, buffer "
		    "or kernel"))
			goto out;
		rc = SPIN_SEND(&c);
		if (rc == 0)
			rc = send_write(&c, Q, 0, VAN, 10, NULL, 0, data,
			    VAN - CHUNK / 2);
		if (!check("vanish_chunked", rc == 0 &&
		    wait_chunked(&d, base + i + 1) == 0, "no chunk enqueued "
		    "while the bulk was sent in part"))
			goto out;
		conn_close(&c);
		if (!check("vanish_freed", wait_empty(&d, &st) == 0, "the "
		    "server still holds %llu objects, %llu bytes",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes))
			goto out;
	}
	/* Server alive: a whole write in one go works. */
	if (check("vanish_next", setup(&c, &sv, VAN) == 0 &&
	    send_write(&c, Q, 0, VAN, 0, NULL, 0, data, VAN) == 0,
	    "the server took no new session"))
		check("vanish_next_bytes", holds(&c, Q, 0, data, VAN),
		    "the bytes read back are not the bytes written");
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	srv_stop(&sv, "vanish_server_exit");
}

/*
 * A chunked write whose event id the client used already: the session is
 * closed when the write runs, its chunks still queued behind a kernel; the
 * staging goes once they are copied (ASan), and nothing stays behind.
 */
static void
test_dupevent(void)
{
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st;
	uint8_t			*data;
	cl_int			 est = 1;
	int			 rc;

	c.fd = d.fd = -1;
	if ((data = raw_pattern(VAN, 7)) == NULL)
		return;
	if (!srv_start(&sv, "dup_server_start", "127.0.0.1:0", van_args)) {
		free(data);
		return;
	}
	if (!check("dup_setup", setup(&c, &sv, VAN) == 0 &&
	    SPIN_SETUP(&c) == 0 && conn_session(&d, &sv) == 0, "no "
	    "sessions, context, queue, buffer or kernel"))
		goto out;
	rc = send_write(&c, Q, 0, 16, 10, NULL, 0, data, 16);
	if (rc == 0 && wait_notify(&c, 10, &est) != 0)
		rc = -1;
	if (rc == 0)
		rc = SPIN_SEND(&c);
	if (rc == 0)
		rc = send_write(&c, Q, 0, VAN, 10, NULL, 0, data, VAN);
	check("dup_closed", rc == 0 && wait_closed(&c) == 1, "the session "
	    "was not closed for its reused event id");
	conn_close(&c);
	check("dup_freed", wait_empty(&d, &st) == 0, "the server still holds "
	    "%llu objects, %llu bytes", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	srv_stop(&sv, "dup_server_exit");
}

/*
 * A chunk the runtime refuses (VCL_TEST_WRITE_FAIL_CHUNK=2): the write
 * fails with it, once: on its event, or, without one, at the next finish
 * and not the one after. The chunks before it wait behind a running
 * kernel, in malloc'd staging: the failed write's staging is freed only
 * once they are copied (ASan sees a copy from freed memory). Nothing
 * stays behind.
 */
static void
test_refused(void)
{
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 sst;
	uint8_t			*data;
	cl_int			 st = 1;
	int			 rc;

	c.fd = d.fd = -1;
	if ((data = raw_pattern(VAN, 5)) == NULL)
		return;
	setenv("VCL_TEST_WRITE_FAIL_CHUNK", "2", 1);
	rc = srv_start(&sv, "refused_server_start", "127.0.0.1:0", van_args);
	unsetenv("VCL_TEST_WRITE_FAIL_CHUNK");
	if (!rc) {
		free(data);
		return;
	}
	if (!check("refused_setup", setup(&c, &sv, SPACE) == 0 &&
	    SPIN_SETUP(&c) == 0 && conn_session(&d, &sv) == 0, "no "
	    "sessions, context, queue, buffer or kernel"))
		goto out;
	rc = SPIN_SEND(&c);
	if (rc == 0)
		rc = send_write(&c, Q, OFF, VAN, 10, NULL, 0, data, VAN / 2);
	if (rc == 0)
		rc = send_raw(&c, data + VAN / 2, VAN - VAN / 2);
	if (rc == 0 && wait_notify(&c, 10, &st) != 0)
		st = 1;
	check("refused_event", st == CL_OUT_OF_RESOURCES, "the write's "
	    "event: %d, want %d", st, CL_OUT_OF_RESOURCES);
	check("refused_event_finish", raw_finish(&c, Q) == CL_SUCCESS,
	    "a failure told on the event was told again at the finish");
	/* No event: the queue's next finish tells, once. */
	rc = SPIN_SEND(&c);
	if (rc == 0)
		rc = send_write(&c, Q, OFF, VAN, 0, NULL, 0, data, VAN / 2);
	if (rc == 0)
		rc = send_raw(&c, data + VAN / 2, VAN - VAN / 2);
	st = rc == 0 ? raw_finish(&c, Q) : 1;
	check("refused_finish", st == CL_OUT_OF_RESOURCES, "the next "
	    "finish: %d, want %d", st, CL_OUT_OF_RESOURCES);
	check("refused_finish_once", raw_finish(&c, Q) == CL_SUCCESS,
	    "the failure was told twice");
	conn_close(&c);
	check("refused_nothing_left", wait_empty(&d, &sst) == 0, "the server "
	    "still holds %llu objects, %llu bytes",
	    (unsigned long long)sst.objects, (unsigned long long)sst.bytes);
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	srv_stop(&sv, "refused_server_exit");
}

/*
 * Launches waiting on their queue's strand (VCL_LAUNCH_STRAND=1, its
 * thread slowed by VCL_TEST_STRAND_DELAY_US) when a chunked write comes:
 * its chunks go after them, so the kernels' 1s are overwritten by the
 * write's bytes, never the other way round.
 */
#define STRAND_LAUNCHES	40
#define STRAND_ITEMS	256		/* words each launch sets to 1 */

static void
test_strand(void)
{
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st;
	Vcl__KernelArg		 a, *ap = &a;
	uint8_t			*data;
	uint64_t		 base;
	int			 i, rc;

	c.fd = d.fd = -1;
	if ((data = raw_pattern(BIG, 6)) == NULL)
		return;
	setenv("VCL_LAUNCH_STRAND", "1", 1);
	setenv("VCL_TEST_STRAND_DELAY_US", "500", 1);
	rc = srv_start(&sv, "strand_server_start", "127.0.0.1:0", wc_args);
	unsetenv("VCL_LAUNCH_STRAND");
	unsetenv("VCL_TEST_STRAND_DELAY_US");
	if (!rc) {
		free(data);
		return;
	}
	if (!check("strand_setup", setup(&c, &sv, BIG) == 0 &&
	    create_program(&c, SPIN_PROG, CTX, kernel_src) == 0 &&
	    raw_build(&c, SPIN_PROG, NULL) == 0 &&
	    raw_kernel(&c, SPIN_K, SPIN_PROG, "k") == 0 &&
	    conn_session(&d, &sv) == 0 && (base = chunked(&d)) != UINT64_MAX,
	    "no sessions, context, queue, buffer, kernel or Stats"))
		goto out;
	vcl__kernel_arg__init(&a);
	a.index = 0;
	a.type = VCL__KERNEL_ARG__TYPE__MEM;
	a.has_mem = 1;
	a.mem = MEM;
	rc = raw_ndrange(&c, Q, SPIN_K, STRAND_ITEMS, 0, &ap, 1, 0);
	for (i = 0; i < STRAND_LAUNCHES && rc == 0; i++)
		rc = raw_ndrange(&c, Q, SPIN_K, STRAND_ITEMS, 0, NULL, 0, 0);
	if (rc == 0)
		rc = send_write(&c, Q, 0, BIG, 0, NULL, 0, data, BIG);
	if (!check("strand_sent", rc == 0, "cannot send the requests"))
		goto out;
	check("strand_write_last", holds(&c, Q, 0, data, BIG), "a launch "
	    "made on the strand landed after the write's chunks");
	check("strand_used", stats(&d, &st) == 0 && st.launches_offloop > 0 &&
	    st.writes_chunked == base + 1, "launches on strands %llu, "
	    "writes chunked %llu (from %llu)",
	    (unsigned long long)st.launches_offloop,
	    (unsigned long long)st.writes_chunked, (unsigned long long)base);
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	srv_stop(&sv, "strand_server_exit");
}

/*
 * A write the runtime took whose event the session may not hold (over
 * --max-objects): the client's event fails, and the staging the runtime
 * still copies from (behind a running kernel, malloc'd) is freed only
 * once the copy is done (ASan sees a copy from freed memory otherwise),
 * chunked or not. Nothing stays behind.
 */
static void
test_objlimit(void)
{
	static const char *const modes[] = { "0", "64K" };
	const char		*args[] = { "--write-chunk", NULL,
	    "--max-pinned", "0", "--max-objects", "6", NULL };
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint8_t			*data;
	cl_int			 est;
	size_t			 m;
	int			 rc;

	if ((data = raw_pattern(VAN, 9)) == NULL)
		return;
	for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		c.fd = d.fd = -1;
		args[1] = modes[m];
		if (!srv_start(&sv, "objlimit_server_start", "127.0.0.1:0",
		    args))
			break;
		/* Six objects: context, queue, buffer; program, kernel, its
		 * buffer. The write's event would be the seventh. */
		if (!check("objlimit_setup", setup(&c, &sv, VAN) == 0 &&
		    SPIN_SETUP(&c) == 0 && conn_session(&d, &sv) == 0, "no "
		    "sessions, context, queue, buffer or kernel"))
			goto next;
		est = CL_SUCCESS;
		rc = SPIN_SEND(&c);
		if (rc == 0)
			rc = send_write(&c, Q, 0, VAN, 10, NULL, 0, data, VAN);
		check("objlimit_event_fails", rc == 0 &&
		    wait_notify(&c, 10, &est) == 0 && est < 0, "write %s: "
		    "event status %d, want an error", modes[m], (int)est);
		check("objlimit_session_goes_on", raw_finish(&c, Q) == 0,
		    "no finish after the refused event");
		conn_close(&c);
		check("objlimit_freed", wait_empty(&d, &st) == 0, "the server "
		    "still holds %llu objects, %llu bytes",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);
next:
		conn_close(&c);
		conn_close(&d);
		srv_stop(&sv, "objlimit_server_exit");
	}
	free(data);
}

/*
 * Chunked writes whose size the chunk does not divide, of exactly two
 * chunks, ending at the buffer's end, covering the whole buffer: each
 * lands exactly (the whole buffer read back against a model) and is
 * counted as chunked.
 */
static void
test_edges(void)
{
	static const struct {
		uint64_t	off;
		uint64_t	size;
	} cases[] = {
		{ 0,			2 * CHUNK },
		{ ESPACE - 2 * CHUNK,	2 * CHUNK },
		{ 3,			2 * CHUNK + 1 },
		{ ESPACE - 3 * CHUNK + 1, 3 * CHUNK - 1 },
		{ 0,			ESPACE },
	};
	struct srv	 sv;
	struct conn	 c, d;
	uint8_t		*model, *data;
	uint64_t	 base = 0;
	size_t		 i;

	c.fd = d.fd = -1;
	if ((model = calloc(1, ESPACE)) == NULL)
		return;
	if (!srv_start(&sv, "edges_server_start", "127.0.0.1:0", wc_args)) {
		free(model);
		return;
	}
	if (!check("edges_setup", setup(&c, &sv, ESPACE) == 0 &&
	    conn_session(&d, &sv) == 0 && (base = chunked(&d)) !=
	    UINT64_MAX, "no sessions, context, queue, buffer or Stats"))
		goto out;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if ((data = raw_pattern(cases[i].size, 20 + (unsigned)i)) == NULL)
			break;
		memcpy(model + cases[i].off, data, cases[i].size);
		check("edges_sent", send_write(&c, Q, cases[i].off,
		    cases[i].size, 0, NULL, 0, data, cases[i].size) == 0,
		    "write %zu not sent", i);
		free(data);
		check("edges_bytes", holds(&c, Q, 0, model, ESPACE),
		    "write %zu of %llu bytes at %llu: the buffer differs", i,
		    (unsigned long long)cases[i].size,
		    (unsigned long long)cases[i].off);
		check("edges_counted", chunked(&d) == base + i + 1,
		    "write %zu: writes_chunked %llu, want %llu", i,
		    (unsigned long long)chunked(&d),
		    (unsigned long long)(base + i + 1));
	}
out:
	conn_close(&c);
	conn_close(&d);
	free(model);
	srv_stop(&sv, "edges_server_exit");
}

/*
 * Start a server with args, a slot found busy at its first look
 * (VCL_TEST_WRITE_SLOT_WAIT) where fault is set.
 */
static int
slot_start(struct srv *sv, const char *name, int fault,
    const char *const *args)
{
	int	ok;

	if (fault)
		setenv("VCL_TEST_WRITE_SLOT_WAIT", "1", 1);
	ok = srv_start(sv, name, "127.0.0.1:0", args);
	unsetenv("VCL_TEST_WRITE_SLOT_WAIT");
	return (ok);
}

/*
 * The bytes of a chunked write cycle through four slots of staging
 * (--write-slots): each lands exactly where a slot is found still being
 * copied out at its next bytes (VCL_TEST_WRITE_SLOT_WAIT: every slot at
 * its first look), the rest then coming into staging of its own (one
 * wait counted); with --write-slots 0 the bulk's own staging is used and
 * no slot is ever looked at.
 */
static void
test_slots(void)
{
	static const struct {
		const char	*what;
		const char	*slots;
		uint64_t	 waits;
	} modes[] = {
		{ "four", "4", 1 },
		{ "none", "0", 0 },
	};
	const char		*args[] = { "--write-chunk", "64K",
	    "--write-slots", NULL, NULL };
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 sst;
	uint8_t			*data;
	uint64_t		 base = 0, wb = 0;
	cl_int			 st;
	size_t			 m;
	char			 name[64];

	if ((data = raw_pattern(BIG, 30)) == NULL)
		return;
	for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		c.fd = d.fd = -1;
		args[3] = modes[m].slots;
		if (!slot_start(&sv, "slots_server_start", 1, args))
			break;
		snprintf(name, sizeof name, "slots_%s_setup", modes[m].what);
		if (!check(name, setup(&c, &sv, SPACE) == 0 &&
		    conn_session(&d, &sv) == 0 && (base = chunked(&d)) !=
		    UINT64_MAX && (wb = slot_waits(&d)) != UINT64_MAX,
		    "no sessions, context, queue, buffer or Stats"))
			goto next;
		st = 1;
		if (send_write(&c, Q, OFF, BIG, 10, NULL, 0, data, BIG) != 0 ||
		    wait_notify(&c, 10, &st) != 0)
			st = 1;
		snprintf(name, sizeof name, "slots_%s_event", modes[m].what);
		check(name, st == CL_COMPLETE, "the write's event: %d", st);
		snprintf(name, sizeof name, "slots_%s_bytes", modes[m].what);
		check(name, holds(&c, Q, OFF, data, BIG), "the bytes read "
		    "back are not the bytes written");
		snprintf(name, sizeof name, "slots_%s_counted", modes[m].what);
		check(name, chunked(&d) == base + 1 && slot_waits(&d) ==
		    wb + modes[m].waits, "writes_chunked %llu (from %llu), "
		    "write_slot_waits %llu (from %llu, want %llu more)",
		    (unsigned long long)chunked(&d), (unsigned long long)base,
		    (unsigned long long)slot_waits(&d), (unsigned long long)wb,
		    (unsigned long long)modes[m].waits);
		conn_close(&c);
		snprintf(name, sizeof name, "slots_%s_freed", modes[m].what);
		check(name, wait_empty(&d, &sst) == 0, "the server still "
		    "holds %llu objects, %llu bytes",
		    (unsigned long long)sst.objects,
		    (unsigned long long)sst.bytes);
next:
		conn_close(&c);
		conn_close(&d);
		srv_stop(&sv, "slots_server_exit");
	}
	free(data);
}

/*
 * A write larger than what the session may still hold goes through its
 * slots: with --max-session-bytes room for the buffer and four slots, not
 * for staging of the write's size, it lands, where --write-slots 0 fails
 * it (CL_MEM_OBJECT_ALLOCATION_FAILURE). There a slot found busy cannot
 * send the rest elsewhere until the rest is small enough: the session's
 * input waits for it and goes on (every slot busy at its first look:
 * waits counted). Read back in parts, each within the limit.
 */
#define LIMIT_BYTES	"1600K"		/* SPACE and 4 slots, not BIG more */
#define LIMIT_PART	(256u << 10)

/* Does MEM hold want (n bytes) at off, read in parts of part bytes? */
static int
holds_parts(struct conn *c, uint64_t off, const uint8_t *want, size_t n,
    size_t part)
{
	size_t	at, k;

	for (at = 0; at < n; at += k) {
		k = n - at < part ? n - at : part;
		if (!holds(c, Q, off + at, want + at, k)) {
			note("in the part at %zu", at);
			return (0);
		}
	}
	return (1);
}

static void
test_slotlimit(void)
{
	static const struct {
		const char	*what;
		const char	*slots;
		int		 fault;
		cl_int		 want;
		uint64_t	 waits;
	} modes[] = {
		{ "slots", "4", 0, CL_COMPLETE, 0 },
		{ "whole", "0", 0, CL_MEM_OBJECT_ALLOCATION_FAILURE, 0 },
		{ "wait", "4", 1, CL_COMPLETE, 1 },
	};
	const char		*args[] = { "--write-chunk", "64K",
	    "--max-session-bytes", LIMIT_BYTES, "--write-slots", NULL, NULL };
	struct srv		 sv;
	struct conn		 c, d;
	uint8_t			*data;
	uint64_t		 wb = 0;
	cl_int			 st;
	size_t			 m;
	char			 name[64];

	if ((data = raw_pattern(BIG, 31)) == NULL)
		return;
	for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		c.fd = d.fd = -1;
		args[5] = modes[m].slots;
		if (!slot_start(&sv, "slotlimit_server_start", modes[m].fault,
		    args))
			break;
		snprintf(name, sizeof name, "slotlimit_%s_setup",
		    modes[m].what);
		if (!check(name, setup(&c, &sv, SPACE) == 0 &&
		    conn_session(&d, &sv) == 0 &&
		    (wb = slot_waits(&d)) != UINT64_MAX,
		    "no sessions, context, queue, buffer or Stats"))
			goto next;
		st = 1;
		if (send_write(&c, Q, OFF, BIG, 10, NULL, 0, data, BIG) != 0 ||
		    wait_notify(&c, 10, &st) != 0)
			st = 1;
		snprintf(name, sizeof name, "slotlimit_%s_event",
		    modes[m].what);
		check(name, st == modes[m].want, "the write's event: %d, want "
		    "%d", st, modes[m].want);
		if (modes[m].want == CL_COMPLETE) {
			snprintf(name, sizeof name, "slotlimit_%s_bytes",
			    modes[m].what);
			check(name, holds_parts(&c, OFF, data, BIG, LIMIT_PART), "the "
			    "bytes read back are not the bytes written");
		}
		/* Waits on a slot a runtime copies slowly may come anyway. */
		snprintf(name, sizeof name, "slotlimit_%s_waits",
		    modes[m].what);
		check(name, modes[m].waits == 0 || slot_waits(&d) >= wb +
		    modes[m].waits, "write_slot_waits %llu (from %llu, want "
		    "%llu more)", (unsigned long long)slot_waits(&d),
		    (unsigned long long)wb, (unsigned long long)modes[m].waits);
		snprintf(name, sizeof name, "slotlimit_%s_goes_on",
		    modes[m].what);
		check(name, raw_finish(&c, Q) == CL_SUCCESS, "no finish "
		    "after the write");
next:
		conn_close(&c);
		conn_close(&d);
		srv_stop(&sv, "slotlimit_server_exit");
	}
	free(data);
}

/*
 * A kernel runs ahead of a chunked write on its queue, so its fifth chunk
 * finds the first slot still waiting to be copied: the rest of its bytes
 * come into staging of their own, and the session's next request is
 * answered while the kernel still runs (its input was not held behind
 * the device). The bytes land once the kernel is done.
 */
#define LONG_STEPS	(1u << 27)	/* a kernel of 0.1 to 1 s */
#define LONG_EV		40

static void
test_spill(void)
{
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 sst;
	uint8_t			*data;
	uint64_t		 wb = 0;
	cl_int			 est = CL_COMPLETE;
	int			 rc;

	c.fd = d.fd = -1;
	if ((data = raw_pattern(BIG, 32)) == NULL)
		return;
	if (!srv_start(&sv, "spill_server_start", "127.0.0.1:0", van_args)) {
		free(data);
		return;
	}
	if (!check("spill_setup", setup(&c, &sv, SPACE) == 0 &&
	    SPIN_SETUP(&c) == 0 && conn_session(&d, &sv) == 0 &&
	    (wb = slot_waits(&d)) != UINT64_MAX, "no sessions, context, "
	    "queue, buffer, kernel or Stats"))
		goto out;
	rc = raw_spin_send_ev(&c, Q, SPIN_K, SPIN_MEM, LONG_STEPS, LONG_EV);
	if (rc == 0)
		rc = send_write(&c, Q, OFF, BIG, 0, NULL, 0, data, BIG);
	check("spill_answered_meanwhile", rc == 0 &&
	    raw_event_status(&c, LONG_EV, &est) == 0 && est > CL_COMPLETE,
	    "the kernel ahead was %d when the request behind the write was "
	    "answered, want it still running", (int)est);
	check("spill_counted", slot_waits(&d) == wb + 1, "write_slot_waits "
	    "%llu, want %llu", (unsigned long long)slot_waits(&d),
	    (unsigned long long)(wb + 1));
	check("spill_bytes", holds(&c, Q, OFF, data, BIG), "the bytes read "
	    "back are not the bytes written");
	conn_close(&c);
	check("spill_freed", wait_empty(&d, &sst) == 0, "the server still "
	    "holds %llu objects, %llu bytes", (unsigned long long)sst.objects,
	    (unsigned long long)sst.bytes);
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	srv_stop(&sv, "spill_server_exit");
}

/*
 * The client goes while its session's input waits for a slot held behind
 * a kernel (the session at its bytes limit, so the rest cannot go
 * elsewhere): the session closes while the kernel still runs (its slots
 * still charged when its objects are gone), not once the slot is free,
 * and everything goes once the copies are done.
 */
static void
test_slotgone(void)
{
	const char		*args[] = { "--write-chunk", "64K",
	    "--max-pinned", "0", "--max-session-bytes", LIMIT_BYTES, NULL };
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 sst;
	uint8_t			*data;
	uint64_t		 wb = 0;
	int			 i, rc;

	c.fd = d.fd = -1;
	if ((data = raw_pattern(BIG, 33)) == NULL)
		return;
	if (!srv_start(&sv, "slotgone_server_start", "127.0.0.1:0", args)) {
		free(data);
		return;
	}
	if (!check("slotgone_setup", setup(&c, &sv, SPACE) == 0 &&
	    SPIN_SETUP(&c) == 0 && conn_session(&d, &sv) == 0 &&
	    (wb = slot_waits(&d)) != UINT64_MAX, "no sessions, context, "
	    "queue, buffer, kernel or Stats"))
		goto out;
	rc = raw_spin_send(&c, Q, SPIN_K, SPIN_MEM, LONG_STEPS);
	if (rc == 0)
		rc = raw_spin_send(&c, Q, SPIN_K, SPIN_MEM, LONG_STEPS);
	if (rc == 0)
		rc = send_write(&c, Q, OFF, BIG, 0, NULL, 0, data, HALF);
	/* The fifth chunk's bytes are in: the input waits for slot 0. */
	for (i = 0; rc == 0 && i < STATS_POLLS && slot_waits(&d) == wb; i++)
		poll_wait();
	if (!check("slotgone_waits", rc == 0 && slot_waits(&d) == wb + 1,
	    "the write's input never waited for a slot"))
		goto out;
	conn_close(&c);
	check("slotgone_closed_meanwhile", wait_gone(&d, &sst) == 0 &&
	    sst.bytes > 0, "objects %llu, bytes %llu "
	    "when the session went: want its objects gone while its slots "
	    "are still charged behind the kernels",
	    (unsigned long long)sst.objects, (unsigned long long)sst.bytes);
	check("slotgone_freed", wait_empty_polls(&d, &sst, 12000) == 0,
	    "the server still holds %llu objects, %llu bytes",
	    (unsigned long long)sst.objects, (unsigned long long)sst.bytes);
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	srv_stop(&sv, "slotgone_server_exit");
}

/*
 * Writes held behind a user event, each of a size other than the frame
 * read last before it runs (the second's, then none), run once the event
 * is set: each frees its own staging and gives back its own charge, so a
 * write of either size after them lands (pooled staging: a block given
 * back as larger than it is would be handed out again as that) and the
 * server's bytes come back to 0 once the session goes.
 */
#define HS_SPACE	(8u << 20)
#define HS_SMALL	((1u << 20) + 1u)	/* pooled: 2 MiB blocks */
#define HS_LARGE	(3u << 20)		/* ... and 3 MiB ones */
#define HS_U		50

static void
test_heldsize(void)
{
	static const struct {
		const char	*what;
		uint64_t	 a;
		uint64_t	 b;
	} orders[] = {
		{ "small_first", HS_SMALL, HS_LARGE },
		{ "large_first", HS_LARGE, HS_SMALL },
	};
	const char		*args[] = { "--write-chunk", "0",
	    "--max-pinned", "0", NULL };
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 sst;
	uint8_t			*data;
	uint64_t		 u = HS_U, a, b;
	size_t			 o;
	char			 name[64];
	int			 rc;

	if ((data = raw_pattern(HS_SPACE, 34)) == NULL)
		return;
	for (o = 0; o < sizeof orders / sizeof orders[0]; o++) {
		c.fd = d.fd = -1;
		a = orders[o].a;
		b = orders[o].b;
		if (!srv_start(&sv, "heldsize_server_start", "127.0.0.1:0",
		    args))
			break;
		snprintf(name, sizeof name, "heldsize_%s_setup",
		    orders[o].what);
		if (!check(name, setup(&c, &sv, HS_SPACE) == 0 &&
		    raw_user_event(&c, u, CTX) == 0 &&
		    conn_session(&d, &sv) == 0, "no sessions, context, queue, "
		    "buffer or user event"))
			goto next;
		/* Held on the user event; the second behind it on Q. */
		rc = send_write(&c, Q, 0, a, 0, &u, 1, data, a);
		if (rc == 0)
			rc = send_write(&c, Q, a, b, 0, NULL, 0, data + a, b);
		if (rc == 0)
			rc = raw_user_set(&c, u, CL_COMPLETE);
		snprintf(name, sizeof name, "heldsize_%s_ran",
		    orders[o].what);
		check(name, rc == 0 && raw_finish(&c, Q) == CL_SUCCESS,
		    "the held writes did not run");
		snprintf(name, sizeof name, "heldsize_%s_bytes",
		    orders[o].what);
		check(name, holds(&c, Q, 0, data, a + b), "the bytes read "
		    "back are not the bytes written");
		/* Staging of either size again, from the pool. */
		rc = send_write(&c, Q, 0, HS_LARGE, 0, NULL, 0, data,
		    HS_LARGE);
		if (rc == 0)
			rc = send_write(&c, Q, 0, HS_SMALL, 0, NULL, 0, data,
			    HS_SMALL);
		snprintf(name, sizeof name, "heldsize_%s_again",
		    orders[o].what);
		check(name, rc == 0 && holds(&c, Q, 0, data, HS_LARGE),
		    "the writes after them did not land");
		conn_close(&c);
		snprintf(name, sizeof name, "heldsize_%s_freed",
		    orders[o].what);
		check(name, wait_empty(&d, &sst) == 0, "the server still "
		    "holds %llu objects, %llu bytes",
		    (unsigned long long)sst.objects,
		    (unsigned long long)sst.bytes);
next:
		conn_close(&c);
		conn_close(&d);
		srv_stop(&sv, "heldsize_server_exit");
	}
	free(data);
}

/*
 * A SIGHUP that changes --write-chunk or --write-slots while a chunked
 * write's bytes come through its slots: the write keeps the chunks and
 * slots it began with (its staging is sized by them), its bytes land, the
 * server lives, and the next write takes the new values. Staging
 * malloc'd (ASan sees a slot written or copied past its ring).
 */
static int
write_conf(const char *path, const char *chunk, const char *slots)
{
	FILE	*f;

	if ((f = fopen(path, "w")) == NULL)
		return (-1);
	fprintf(f, "write-chunk = %s\nwrite-slots = %s\nmax-pinned = 0\n",
	    chunk, slots);
	return (fclose(f) == 0 ? 0 : -1);
}

static void
test_reload(void)
{
	static const struct {
		const char	*what;
		const char	*chunk;
		const char	*slots;
	} to[] = {
		{ "grow", "256K", "16" },
		{ "shrink", "4K", "3" },
		{ "off", "0", "0" },
	};
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 sst;
	uint8_t			*data;
	uint64_t		 base = 0;
	char			 conf[PATH_MAX], name[64];
	const char		*args[] = { "--config", conf, NULL };
	size_t			 t;
	int			 i, rc;

	if ((data = raw_pattern(BIG, 35)) == NULL)
		return;
	snprintf(conf, sizeof conf, "%s/wchunk_reload.conf", root);
	for (t = 0; t < sizeof to / sizeof to[0]; t++) {
		c.fd = d.fd = -1;
		if (!check("reload_config", write_conf(conf, "64K", "2") == 0,
		    "%s: %s", conf, strerror(errno)) ||
		    !srv_start(&sv, "reload_server_start", "127.0.0.1:0",
		    args))
			break;
		snprintf(name, sizeof name, "reload_%s_setup", to[t].what);
		if (!check(name, setup(&c, &sv, SPACE) == 0 &&
		    conn_session(&d, &sv) == 0 && (base = chunked(&d)) !=
		    UINT64_MAX, "no sessions, context, queue, buffer or Stats"))
			goto next;
		/* Five chunks in: the two slots went round twice. */
		rc = send_write(&c, Q, OFF, BIG, 10, NULL, 0, data, HALF);
		snprintf(name, sizeof name, "reload_%s_chunked", to[t].what);
		if (!check(name, rc == 0 && wait_chunked(&d, base + 1) == 0,
		    "no chunk enqueued while the bulk was half sent"))
			goto next;
		rc = write_conf(conf, to[t].chunk, to[t].slots);
		if (rc == 0)
			rc = kill(sv.pid, SIGHUP);
		for (i = 0; rc == 0 && i < STATS_POLLS &&
		    !srv_stderr_has(&sv, "reloaded"); i++)
			poll_wait();
		snprintf(name, sizeof name, "reload_%s_reloaded", to[t].what);
		if (!check(name, rc == 0 && srv_stderr_has(&sv, "reloaded"),
		    "no \"reloaded\" in the server's log"))
			goto next;
		rc = send_raw(&c, data + HALF, BIG - HALF);
		snprintf(name, sizeof name, "reload_%s_bytes", to[t].what);
		check(name, rc == 0 && holds(&c, Q, OFF, data, BIG), "the "
		    "write under way at the reload did not land");
		/* The next write, with what the reload set. */
		data[0] ^= 0xff;
		rc = send_write(&c, Q, OFF, BIG, 0, NULL, 0, data, BIG);
		snprintf(name, sizeof name, "reload_%s_next", to[t].what);
		check(name, rc == 0 && holds(&c, Q, OFF, data, BIG), "the "
		    "write after the reload did not land");
		data[0] ^= 0xff;
		conn_close(&c);
		snprintf(name, sizeof name, "reload_%s_freed", to[t].what);
		check(name, wait_empty(&d, &sst) == 0, "the server still "
		    "holds %llu objects, %llu bytes",
		    (unsigned long long)sst.objects,
		    (unsigned long long)sst.bytes);
next:
		conn_close(&c);
		conn_close(&d);
		srv_stop(&sv, "reload_server_exit");
	}
	free(data);
}

/*
 * The ring's offsets: chunks of 4K (so the input buffer read with a
 * frame's head holds many: its first bytes cycle through the slots before
 * the socket is read again), 2 and 16 slots, writes of 2 chunks, of as
 * many as slots, one byte more, one chunk more, a short last part, at an
 * odd offset; each sent with its head in one piece, and trickled (pieces
 * of 1000 bytes). Every slot busy at its first look (the rest spills into
 * staging of its own), or not; with --max-session-bytes leaving no room
 * for that, the input waits for the slot instead. The whole buffer is read
 * back against a model after each write, and nothing stays behind.
 */
#define RK		4096u			/* the chunk */
#define ROFF		3u
#define RSPACE		(ROFF + 200u * 1024u)	/* the ring test's buffer */
#define RPART		8192u			/* reads within the limit */

/* WriteBuffer{Q, MEM, off, size} with its bytes, head and all at once. */
static int
send_write_whole(struct conn *c, uint64_t off, const uint8_t *data,
    uint64_t size)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	m = VCL__WRITE_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;

	e.queue = Q;
	m.q = &e;
	m.mem = MEM;
	m.offset = off;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &m;
	return (send_req(c, &r, data, size));
}

/* The same, its bytes in pieces of 1000 after the head. */
static int
send_write_trickle(struct conn *c, uint64_t off, const uint8_t *data,
    uint64_t size)
{
	uint64_t	at, k;

	if (send_write(c, Q, off, size, 0, NULL, 0, data, 0) != 0)
		return (-1);
	for (at = 0; at < size; at += k) {
		k = size - at < 1000 ? size - at : 1000;
		if (send_raw(c, data + at, k) != 0)
			return (-1);
	}
	return (0);
}

static void
test_ring(void)
{
	static const struct {
		const char	*what;
		const char	*slots;
		unsigned	 n;
		int		 fault;
		const char	*limit;
	} modes[] = {
		{ "two",		"2",	2,	0,	NULL },
		{ "two_spill",		"2",	2,	1,	NULL },
		{ "two_wait",		"2",	2,	1,	"228K" },
		{ "sixteen",		"16",	16,	0,	NULL },
		{ "sixteen_spill",	"16",	16,	1,	NULL },
		{ "sixteen_wait",	"16",	16,	1,	"288K" },
	};
	const char		*args[] = { "--write-chunk", "4K",
	    "--max-pinned", "0", "--write-slots", NULL, NULL, NULL, NULL };
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 sst;
	uint8_t			*model = NULL, *data;
	uint64_t		 sizes[7], wb = 0, base = 0, nchunked;
	size_t			 m, i, how;
	char			 name[96];
	int			 ok, rc;

	for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		c.fd = d.fd = -1;
		sizes[0] = 2 * RK;
		sizes[1] = modes[m].n * RK;
		sizes[2] = modes[m].n * RK + 1;
		sizes[3] = (modes[m].n + 1) * RK;
		sizes[4] = (modes[m].n + 1) * RK + 1;
		sizes[5] = 3 * modes[m].n * RK + RK - 1;
		sizes[6] = RSPACE - ROFF;
		args[5] = modes[m].slots;
		args[6] = modes[m].limit != NULL ? "--max-session-bytes" :
		    NULL;
		args[7] = modes[m].limit;
		if (modes[m].fault)
			setenv("VCL_TEST_WRITE_SLOT_WAIT", "1", 1);
		ok = srv_start(&sv, "ring_server_start", "127.0.0.1:0", args);
		unsetenv("VCL_TEST_WRITE_SLOT_WAIT");
		if (!ok || (model = calloc(1, RSPACE)) == NULL)
			break;
		snprintf(name, sizeof name, "ring_%s_setup", modes[m].what);
		if (!check(name, setup(&c, &sv, RSPACE) == 0 &&
		    conn_session(&d, &sv) == 0 && (base = chunked(&d)) !=
		    UINT64_MAX && (wb = slot_waits(&d)) != UINT64_MAX,
		    "no sessions, context, queue, buffer or Stats"))
			goto next;
		nchunked = 0;
		for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
			for (how = 0; how < 2; how++) {
				if ((data = raw_pattern(sizes[i], 40 +
				    (unsigned)(2 * i + how))) == NULL)
					goto next;
				memcpy(model + ROFF, data, sizes[i]);
				rc = how == 0 ? send_write_whole(&c, ROFF,
				    data, sizes[i]) : send_write_trickle(&c,
				    ROFF, data, sizes[i]);
				free(data);
				snprintf(name, sizeof name, "ring_%s_bytes",
				    modes[m].what);
				check(name, rc == 0 && raw_finish(&c, Q) ==
				    CL_SUCCESS && holds_parts(&c, 0, model,
				    RSPACE, RPART), "write of %llu bytes "
				    "(%s): the buffer differs",
				    (unsigned long long)
				    sizes[i], how == 0 ? "whole" : "trickled");
				nchunked++;
			}
		snprintf(name, sizeof name, "ring_%s_counted", modes[m].what);
		check(name, chunked(&d) == base + nchunked && (!modes[m].fault
		    || slot_waits(&d) > wb), "writes_chunked %llu (from %llu, "
		    "want %llu more), write_slot_waits %llu (from %llu)",
		    (unsigned long long)chunked(&d), (unsigned long long)base,
		    (unsigned long long)nchunked,
		    (unsigned long long)slot_waits(&d), (unsigned long long)wb);
		conn_close(&c);
		snprintf(name, sizeof name, "ring_%s_freed", modes[m].what);
		check(name, wait_empty(&d, &sst) == 0, "the server still "
		    "holds %llu objects, %llu bytes",
		    (unsigned long long)sst.objects,
		    (unsigned long long)sst.bytes);
next:
		conn_close(&c);
		conn_close(&d);
		free(model);
		model = NULL;
		srv_stop(&sv, "ring_server_exit");
	}
}

/*
 * A session closed in each state of a write through two slots, its chunks
 * queued behind a running kernel, staging malloc'd (ASan sees a copy from
 * freed memory): after its head and less than a chunk (the slots
 * allocated, nothing enqueued), with chunks in both slots, after the rest
 * spilled to staging of its own, while its input waits for a slot (no
 * room for that staging), after a chunk was refused (and the rest
 * spilled), and once such a write failed whole. While it goes through
 * its slots the server holds its slots of it, not its size; after a spill
 * the slots and the rest; nothing once the session is gone.
 */
#define CL_RING		(2u * CHUNK)		/* two slots */
#define CL_SLACK	(64u << 10)		/* the request, the input */

static int
close_bytes(struct conn *d, uint64_t *bytes)
{
	Vcl__StatsResult	st;

	if (stats(d, &st) != 0)
		return (-1);
	*bytes = st.bytes;
	return (0);
}

static void
test_closes(void)
{
	static const struct {
		const char	*what;
		uint64_t	 sent;
		int		 fail;		/* VCL_TEST_WRITE_FAIL_CHUNK=1 */
		int		 limit;		/* no room to spill: waits */
		uint64_t	 chunks;	/* writes_chunked seen first */
		uint64_t	 waits;		/* ... and write_slot_waits */
		uint64_t	 most;		/* bytes held past the setup's */
	} cases[] = {
		{ "head", CHUNK / 2, 0, 0, 0, 0, CL_RING + CL_SLACK },
		{ "slots", 2 * CHUNK - 3, 0, 0, 1, 0, CL_RING + CL_SLACK },
		{ "spilled", 3 * CHUNK + 5, 0, 0, 1, 1,
		    CL_RING + BIG - 2 * CHUNK + CL_SLACK },
		{ "waiting", HALF, 0, 1, 1, 1, CL_RING + CL_SLACK },
		{ "refused", 3 * CHUNK + 5, 1, 0, 1, 1,
		    CL_RING + BIG - 2 * CHUNK + CL_SLACK },
		{ "failed", BIG, 1, 0, 0, 0, 0 },
	};
	const char		*args[] = { "--write-chunk", "64K",
	    "--max-pinned", "0", "--write-slots", "2", NULL, NULL, NULL };
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 sst;
	uint8_t			*data;
	uint64_t		 base = 0, wb = 0, b0 = 0, b1 = 0;
	cl_int			 est;
	size_t			 i;
	char			 name[64];
	int			 ok, k, rc;

	if ((data = raw_pattern(BIG, 36)) == NULL)
		return;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		c.fd = d.fd = -1;
		args[6] = cases[i].limit ? "--max-session-bytes" : NULL;
		args[7] = cases[i].limit ? LIMIT_BYTES : NULL;
		if (cases[i].fail)
			setenv("VCL_TEST_WRITE_FAIL_CHUNK", "1", 1);
		ok = srv_start(&sv, "closes_server_start", "127.0.0.1:0",
		    args);
		unsetenv("VCL_TEST_WRITE_FAIL_CHUNK");
		if (!ok)
			break;
		snprintf(name, sizeof name, "closes_%s_setup", cases[i].what);
		if (!check(name, setup(&c, &sv, SPACE) == 0 &&
		    SPIN_SETUP(&c) == 0 && conn_session(&d, &sv) == 0 &&
		    raw_finish(&c, Q) == CL_SUCCESS &&
		    (base = chunked(&d)) != UINT64_MAX &&
		    (wb = slot_waits(&d)) != UINT64_MAX &&
		    close_bytes(&d, &b0) == 0, "no sessions, context, queue, "
		    "buffer, kernel or Stats"))
			goto next;
		rc = raw_spin_send_ev(&c, Q, SPIN_K, SPIN_MEM, LONG_STEPS,
		    LONG_EV);
		if (rc == 0)
			rc = send_write(&c, Q, OFF, BIG, 10, NULL, 0, data,
			    cases[i].sent);
		if (cases[i].sent == BIG) {
			/* Whole: it fails on its event, the session goes on. */
			est = CL_COMPLETE;
			snprintf(name, sizeof name, "closes_%s_event",
			    cases[i].what);
			check(name, rc == 0 && wait_notify(&c, 10, &est) == 0 &&
			    est == CL_OUT_OF_RESOURCES && raw_finish(&c, Q) ==
			    CL_SUCCESS, "the write's event: %d, want %d",
			    (int)est, CL_OUT_OF_RESOURCES);
		} else {
			/* Its state seen: chunks queued, slots found busy,
			   its head in (the slots charged). */
			for (k = 0; rc == 0 && k < STATS_POLLS; k++) {
				if (chunked(&d) >= base + cases[i].chunks &&
				    slot_waits(&d) >= wb + cases[i].waits &&
				    close_bytes(&d, &b1) == 0 &&
				    b1 >= b0 + CL_RING)
					break;
				poll_wait();
			}
			snprintf(name, sizeof name, "closes_%s_state",
			    cases[i].what);
			check(name, rc == 0 && k < STATS_POLLS, "writes_chunked "
			    "%llu (from %llu), write_slot_waits %llu (from "
			    "%llu), bytes %llu (from %llu)",
			    (unsigned long long)chunked(&d),
			    (unsigned long long)base,
			    (unsigned long long)slot_waits(&d),
			    (unsigned long long)wb, (unsigned long long)b1,
			    (unsigned long long)b0);
			snprintf(name, sizeof name, "closes_%s_held",
			    cases[i].what);
			check(name, close_bytes(&d, &b1) == 0 &&
			    b1 <= b0 + cases[i].most, "the server holds %llu "
			    "bytes, %llu past the setup's, want at most %llu",
			    (unsigned long long)b1,
			    (unsigned long long)(b1 - b0),
			    (unsigned long long)cases[i].most);
		}
		conn_close(&c);
		snprintf(name, sizeof name, "closes_%s_freed", cases[i].what);
		check(name, wait_empty_polls(&d, &sst, 12000) == 0, "the "
		    "server still holds %llu objects, %llu bytes",
		    (unsigned long long)sst.objects,
		    (unsigned long long)sst.bytes);
next:
		conn_close(&c);
		conn_close(&d);
		srv_stop(&sv, "closes_server_exit");
	}
	free(data);
}

static const struct test tests[] = {
	{ "early",	test_early,	60 },
	{ "not",	test_not_chunked, 60 },
	{ "held",	test_held,	60 },
	{ "vanish",	test_vanish,	60 },
	{ "dupevent",	test_dupevent,	60 },
	{ "refused",	test_refused,	60 },
	{ "strand",	test_strand,	60 },
	{ "objlimit",	test_objlimit,	60 },
	{ "edges",	test_edges,	60 },
	{ "slots",	test_slots,	60 },
	{ "slotlimit",	test_slotlimit,	60 },
	{ "spill",	test_spill,	120 },
	{ "slotgone",	test_slotgone,	180 },
	{ "heldsize",	test_heldsize,	60 },
	{ "reload",	test_reload,	90 },
	{ "ring",	test_ring,	240 },
	{ "closes",	test_closes,	240 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
