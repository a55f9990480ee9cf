/* hops_test.c - finish and read replies answered off the loop, and in order. */

/*
 * The server writes a finish's or a blocking read's reply from the thread
 * that saw the command complete when nothing else is owed to the client
 * first. These tests check that it does (Stats fast_replies moves), that
 * what must come first still does (a deferred error reaches the finish, a
 * Notify of an earlier event comes before the finish's reply), and that
 * sessions closing while completions race leave the server healthy.
 */

#include "rawproto.h"

#define HOPS_ROUNDS	20	/* finishes or reads of a check */
#define HOPS_TRIES	25	/* rounds of a polled check, at most */
#define HOPS_FILL	(64u << 20)	/* a fill longer than a poll */
#define HOPS_RACERS	48	/* sessions closing mid-completion */
#define HOPS_READ	4096
#define HOPS_BIG	(48u << 20)	/* more than a socket buffers (the
					   server's reads are not chunked) */

/* Ids of the session's objects; events from H_EV up. */
enum {
	H_CTX = 1, H_Q, H_BUF, H_UE, H_BIG, H_EV = 100,
};

/* Send a Finish on H_Q without waiting; its seq is c->seq after. */
static int
hops_send_finish(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Finish	m = VCL__FINISH__INIT;

	m.queue = H_Q;
	r.call_case = VCL__REQUEST__CALL_FINISH;
	r.finish = &m;
	return (send_req(c, &r, NULL, 0));
}

/* Finish on H_Q: its status, or 1 when no reply came. */
static int
hops_finish(struct conn *c)
{
	return (raw_finish(c, H_Q));
}

/* Send a Marker on H_Q naming event ev (0: none), without waiting. */
static int
hops_send_marker(struct conn *c, uint64_t ev)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Marker	m = VCL__MARKER__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;

	q.queue = H_Q;
	q.has_event = ev != 0;
	q.event = ev;
	m.q = &q;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &m;
	return (send_req(c, &r, NULL, 0));
}

/* ReadBuffer of size bytes of H_BUF on H_Q, without waiting. */
static int
hops_send_read(struct conn *c, uint64_t size)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;

	q.queue = H_Q;
	m.q = &q;
	m.mem = H_BUF;
	m.offset = 0;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	return (send_req(c, &r, NULL, 0));
}

/* The server's fast-reply counter, or -1 when Stats has none. */
static long long
hops_fast(struct conn *c)
{
	Vcl__StatsResult	st;

	if (stats(c, &st) != 0 || !st.has_fast_replies)
		return (-1);
	return ((long long)st.fast_replies);
}

/* FillBuffer of size bytes of H_BUF on H_Q, no event, without waiting. */
static int
hops_send_fill(struct conn *c, uint64_t size)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__FillBuffer	m = VCL__FILL_BUFFER__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;
	cl_int		pat = 7;

	q.queue = H_Q;
	m.q = &q;
	m.mem = H_BUF;
	m.pattern.data = (uint8_t *)&pat;
	m.pattern.len = sizeof pat;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
	r.fill_buffer = &m;
	return (send_req(c, &r, NULL, 0));
}

/* A session with a context, a queue and a buffer of size bytes. */
static int
hops_session(struct conn *c, const struct srv *sv, uint64_t size)
{
	if (conn_session(c, sv) != 0)
		return (-1);
	if (create_context(c, H_CTX) != 0 || create_queue(c, H_Q, H_CTX) !=
	    0 || create_buffer(c, H_BUF, H_CTX, size, NULL, 0) != 0) {
		conn_close(c);
		c->fd = -1;
		return (-1);
	}
	return (0);
}

/* The loop polls no event: completions take the waiter's path. */
static const char *const nopoll[] = { "--poll-us", "0", NULL };

/*
 * A server (NAME_server, args) and a session with a context, a queue and
 * H_BUF holding data (HOPS_READ bytes). 0, or -1 (checked NAME_setup).
 */
static int
hops_data_session(struct conn *c, struct srv *sv, const char *name,
    const char *const *args, const uint8_t *data)
{
	char	what[64];

	snprintf(what, sizeof what, "%s_server", name);
	if (!srv_start(sv, what, "127.0.0.1:0", args))
		return (-1);
	if (conn_session(c, sv) != 0 || create_context(c, H_CTX) != 0 ||
	    create_queue(c, H_Q, H_CTX) != 0 || create_buffer(c, H_BUF,
	    H_CTX, HOPS_READ, data, HOPS_READ) != 0) {
		snprintf(what, sizeof what, "%s_setup", name);
		check(what, 0, "session setup failed");
		return (-1);
	}
	return (0);
}

/* n finishes on H_Q: the first failing status, else CL_SUCCESS. */
static int
hops_finishes(struct conn *c, int n)
{
	int	i, fin = CL_SUCCESS;

	for (i = 0; i < n && fin == CL_SUCCESS; i++)
		fin = hops_finish(c);
	return (fin);
}

/* HOPS_ROUNDS blocking reads of H_BUF: how many were wrong, -1: no reply. */
static int
hops_reads(struct conn *c, const uint8_t *data)
{
	struct reply	rp;
	int		i, bad = 0;

	for (i = 0; i < HOPS_ROUNDS; i++) {
		if (read_buffer(c, H_Q, H_BUF, HOPS_READ, &rp) != 0)
			return (-1);
		if (rp.r->status != CL_SUCCESS || rp.bulk_len != HOPS_READ ||
		    memcmp(rp.bulk, data, HOPS_READ) != 0)
			bad++;
		reply_free(&rp);
	}
	return (bad);
}

/*
 * Plain finishes and blocking reads, nothing else in flight: answered
 * from the completing thread (the counter moves), with the right bytes.
 */
static void
t_hops_fast(void)
{
	struct srv	 sv;
	struct conn	 c;
	uint8_t		 data[HOPS_READ];
	long long	 f0, f1, f2;
	int		 i, bad = 0, fin = CL_SUCCESS;

	memset(&sv, 0, sizeof sv);
	c.fd = -1;
	for (i = 0; i < HOPS_READ; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	if (hops_data_session(&c, &sv, "hops_fast", nopoll, data) != 0)
		goto out;
	f0 = hops_fast(&c);
	check("hops_fast_counter", f0 >= 0, "Stats has no fast_replies");
	fin = hops_finishes(&c, HOPS_ROUNDS);
	f1 = hops_fast(&c);
	note("%lld of %d finishes answered off the loop", f1 - f0,
	    HOPS_ROUNDS);
	check("hops_fast_finish", fin == CL_SUCCESS && f0 >= 0 && f1 > f0,
	    "%d finishes: status %d, %lld answered off the loop",
	    HOPS_ROUNDS, fin, f1 - f0);
	bad = hops_reads(&c, data);
	f2 = hops_fast(&c);
	note("%lld of %d reads answered off the loop", f2 - f1, HOPS_ROUNDS);
	check("hops_fast_read", bad == 0 && f1 >= 0 && f2 > f1,
	    "%d reads of %d bytes: %d wrong, %lld answered off the loop",
	    HOPS_ROUNDS, HOPS_READ, bad, f2 - f1);
out:
	if (c.fd != -1)
		conn_close(&c);
	srv_stop(&sv, "hops_fast_stop");
}

/* Poll Stats on c (bounded) until bytes_out reaches want. 0 or -1. */
static int
hops_wait_out(struct conn *c, uint64_t want)
{
	Vcl__StatsResult	st;
	int			i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, &st) != 0)
			return (-1);
		if (st.bytes_out >= want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/*
 * A read larger than the socket takes, the client reading nothing until
 * the server has done with it (its Stats, on another session, count the
 * bytes): the reply went out in part and the loop queued its rest. Then
 * a finish: the read's bytes come whole and the finish's reply after.
 */
static void
t_hops_big(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer		 m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 q = VCL__ENQUEUE__INIT;
	struct conn		 c2;
	Vcl__StatsResult	 st;
	struct reply		 rp;
	uint8_t			*data = NULL;
	uint64_t		 rseq, fseq;
	int			 rcvbuf = 64 << 10;
	static const char *const nochunk[] = { "--read-chunk", "0", NULL };
	uint32_t		 i;
	int			 round, bad = 0, order = 0;

	memset(&sv, 0, sizeof sv);
	c.fd = c2.fd = -1;
	if ((data = malloc(HOPS_BIG)) == NULL)
		goto out;
	for (i = 0; i < HOPS_BIG; i++)
		data[i] = (uint8_t)(i * 13 + (i >> 12));
	if (!srv_start(&sv, "hops_big_server", "127.0.0.1:0", nochunk))
		goto out;
	if (conn_session(&c, &sv) != 0 || create_context(&c, H_CTX) != 0 ||
	    create_queue(&c, H_Q, H_CTX) != 0 || create_buffer(&c, H_BIG,
	    H_CTX, HOPS_BIG, data, HOPS_BIG) != 0 || conn_session(&c2, &sv) !=
	    0) {
		check("hops_big_setup", 0, "session setup failed");
		goto out;
	}
	/* A small window: the server's writes stop while this one waits. */
	setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	q.queue = H_Q;
	m.q = &q;
	m.mem = H_BIG;
	m.size = HOPS_BIG;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	for (round = 0; round < 4 && bad == 0 && order == 0; round++) {
		if (stats(&c2, &st) != 0 || send_req(&c, &r, NULL, 0) != 0) {
			bad++;
			break;
		}
		rseq = c.seq;
		if (hops_wait_out(&c2, st.bytes_out + HOPS_BIG) != 0 ||
		    hops_send_finish(&c) != 0) {
			bad++;
			break;
		}
		fseq = c.seq;
		if (recv_msg(&c, &rp) != 0) {
			bad++;
			break;
		}
		if (rp.r == NULL || rp.r->seq != rseq)
			order++;
		else if (rp.r->status != CL_SUCCESS || rp.bulk_len !=
		    HOPS_BIG || memcmp(rp.bulk, data, HOPS_BIG) != 0)
			bad++;
		reply_free(&rp);
		if (recv_msg(&c, &rp) != 0) {
			bad++;
			break;
		}
		if (rp.r == NULL || rp.r->seq != fseq ||
		    rp.r->status != CL_SUCCESS)
			order++;
		reply_free(&rp);
	}
	check("hops_big_read", bad == 0 && order == 0,
	    "read of %u bytes + finish: %d wrong, %d out of order", HOPS_BIG,
	    bad, order);
out:
	free(data);
	if (c.fd != -1)
		conn_close(&c);
	if (c2.fd != -1)
		conn_close(&c2);
	srv_stop(&sv, "hops_big_stop");
}

/*
 * Read messages up to the reply to seq; *seen tells whether the Notify
 * of event ev came before it. Returns the reply's status, or 1.
 */
static int
hops_until_reply(struct conn *c, uint64_t seq, uint64_t ev, int *seen)
{
	struct reply	rp;
	size_t		i;
	int		st, n;

	*seen = 0;
	for (n = 0; n < 1000; n++) {
		if (recv_msg(c, &rp) != 0)
			return (1);
		for (i = 0; i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev)
				*seen = 1;
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
 * What the client must see before a finish's reply still comes first: a
 * write that fails at run time (its wait list names a user event set to
 * an error) is reported by the finish behind it, and the next finish is
 * clean; a marker's Notify comes before the reply of the finish behind it.
 */
static void
hops_order(const char *const *args)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	 w = VCL__WRITE_BUFFER__INIT;
	Vcl__CreateUserEvent	 ue = VCL__CREATE_USER_EVENT__INIT;
	Vcl__SetUserEventStatus	 us = VCL__SET_USER_EVENT_STATUS__INIT;
	Vcl__Enqueue		 q = VCL__ENQUEUE__INIT;
	struct reply		 rp;
	uint8_t			 bytes[8192];	/* two chunks of 4K */
	uint64_t		 wait, seq;
	int			 i, fin, seen, late = 0, bad = 0;

	memset(&sv, 0, sizeof sv);
	memset(bytes, 5, sizeof bytes);
	c.fd = -1;
	if (!srv_start(&sv, "hops_order_server", "127.0.0.1:0", args))
		goto out;
	if (hops_session(&c, &sv, sizeof bytes) != 0) {
		check("hops_order_setup", 0, "session setup failed");
		c.fd = -1;
		goto out;
	}
	ue.id = H_UE;
	ue.context = H_CTX;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	if (send_req(&c, &r, NULL, 0) != 0 || hops_finish(&c) != CL_SUCCESS) {
		check("hops_order_setup", 0, "user event setup failed");
		goto out;
	}
	wait = H_UE;
	/* Past the buffer's end: fails at enqueue, told by the finish. */
	fin = hops_send_fill(&c, 2 * sizeof bytes) == 0 ? hops_finish(&c) : 1;
	check("hops_order_enqueue_failed", fin == CL_INVALID_VALUE,
	    "finish behind a fill that failed at enqueue: %d", fin);
	fin = hops_finish(&c);
	check("hops_order_enqueue_failed_once", fin == CL_SUCCESS,
	    "the finish after that: %d", fin);

	/* A write behind the user event, no event of its own; a finish. */
	q.queue = H_Q;
	q.n_wait = 1;
	q.wait = &wait;
	w.q = &q;
	w.mem = H_BUF;
	w.offset = 0;
	w.size = sizeof bytes;
	r = (Vcl__Request)VCL__REQUEST__INIT;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &w;
	if (send_req(&c, &r, bytes, sizeof bytes) != 0 ||
	    hops_send_finish(&c) != 0) {
		check("hops_order_send", 0, "sending failed");
		goto out;
	}
	seq = c.seq;
	us.event = H_UE;
	us.status = -5;
	r = (Vcl__Request)VCL__REQUEST__INIT;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &us;
	if (send_req(&c, &r, NULL, 0) != 0) {
		check("hops_order_send", 0, "sending failed");
		goto out;
	}
	fin = hops_until_reply(&c, seq, 0, &seen);
	note("finish behind the failed write: %d", fin);
	check("hops_order_deferred", fin < 0,
	    "finish behind a write that failed at run time: %d", fin);
	fin = hops_finish(&c);
	check("hops_order_deferred_once", fin == CL_SUCCESS,
	    "the finish after that: %d", fin);

	/* A marker's Notify before the reply of the finish behind it. */
	for (i = 0; i < HOPS_ROUNDS; i++) {
		if (hops_send_marker(&c, H_EV + i) != 0 ||
		    hops_send_finish(&c) != 0) {
			bad++;
			break;
		}
		fin = hops_until_reply(&c, c.seq, H_EV + i, &seen);
		if (fin != CL_SUCCESS)
			bad++;
		else if (!seen)
			late++;
	}
	check("hops_order_notify", bad == 0 && late == 0,
	    "%d marker + finish: %d failed, %d finish replies before the "
	    "marker's Notify", HOPS_ROUNDS, bad, late);
	/* And before the reply of a blocking read behind it. */
	bad = late = 0;
	for (i = 0; i < HOPS_ROUNDS; i++) {
		if (hops_send_marker(&c, H_EV + HOPS_ROUNDS + i) != 0 ||
		    hops_send_read(&c, sizeof bytes) != 0) {
			bad++;
			break;
		}
		fin = hops_until_reply(&c, c.seq, H_EV + HOPS_ROUNDS + i,
		    &seen);
		if (fin != CL_SUCCESS)
			bad++;
		else if (!seen)
			late++;
	}
	check("hops_order_notify_read", bad == 0 && late == 0,
	    "%d marker + read: %d failed, %d read replies before the "
	    "marker's Notify", HOPS_ROUNDS, bad, late);
	/* The server still answers this session. */
	check("hops_order_alive", read_buffer(&c, H_Q, H_BUF, sizeof bytes,
	    &rp) == 0, "read after: no reply");
	if (rp.tc != NULL)
		reply_free(&rp);
out:
	if (c.fd != -1)
		conn_close(&c);
	srv_stop(&sv, "hops_order_stop");
}

/* The order, through waiter threads. */
static void
t_hops_order(void)
{
	hops_order(nopoll);
}

/* The order, with the loop polling (it may complete a finish itself). */
static void
t_hops_order_polled(void)
{
	static const char *const poll[] = { "--poll-us", "1000", NULL };

	hops_order(poll);
}

/*
 * The order when a marker's callback is slow: claimed, then preempted
 * before the loop hears of it (VCL_TEST_FIRE_DELAY_US), so the finish
 * behind it reaches the loop first. Its reply must still wait for the
 * marker's Notify.
 */
static void
t_hops_order_slow(void)
{
	setenv("VCL_TEST_FIRE_DELAY_US", "20000", 1);
	hops_order(nopoll);
	unsetenv("VCL_TEST_FIRE_DELAY_US");
}

/* The same with the read sent in chunks (--read-chunk 4K). */
static void
t_hops_order_slow_chunked(void)
{
	static const char *const a[] = { "--poll-us", "0", "--read-chunk",
	    "4K", NULL };

	setenv("VCL_TEST_FIRE_DELAY_US", "20000", 1);
	hops_order(a);
	unsetenv("VCL_TEST_FIRE_DELAY_US");
}

/* The server's polled counter, or -1 when Stats has none. */
static long long
hops_polled(struct conn *c)
{
	Vcl__StatsResult	st;

	if (stats(c, &st) != 0 || !st.has_polled)
		return (-1);
	return ((long long)st.polled);
}

/*
 * The loop polls a finish's or a small read's event (--poll-us) and
 * answers it itself when done: the polled counter moves, every status and
 * byte right. A finish behind a fill of HOPS_FILL bytes (milliseconds) is
 * not done within the poll: it is answered through a waiter; the queue is
 * not polled for its next waits, then is again.
 */
static void
t_hops_polled(void)
{
	static const char *const poll[] = { "--poll-us", "1000", NULL };
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__FillBuffer		 fm = VCL__FILL_BUFFER__INIT;
	Vcl__Enqueue		 fq = VCL__ENQUEUE__INIT;
	struct srv		 sv;
	struct conn		 c;
	uint8_t			 data[HOPS_READ];
	uint64_t		 seq;
	cl_int			 pat = 9;
	long long		 p0, p1, p2, p3, p4;
	int			 i, k, bad = 0, fin = CL_SUCCESS, seen;

	memset(&sv, 0, sizeof sv);
	c.fd = -1;
	for (i = 0; i < HOPS_READ; i++)
		data[i] = (uint8_t)(i * 5 + 3);
	if (hops_data_session(&c, &sv, "hops_polled", poll, data) != 0)
		goto out;
	p0 = hops_polled(&c);
	check("hops_polled_counter", p0 >= 0, "Stats has no polled");
	/*
	 * A device slower than --poll-us (a loaded machine) misses a poll and
	 * backs off for 16 waits: more rounds, up to HOPS_TRIES, until one
	 * poll answered. That one did is the check; how many is not.
	 */
	for (k = 0, p1 = p0; k < HOPS_TRIES && fin == CL_SUCCESS &&
	    p1 == p0; k++) {
		fin = hops_finishes(&c, HOPS_ROUNDS);
		p1 = hops_polled(&c);
	}
	note("%lld of %d finishes answered by the loop's poll", p1 - p0,
	    k * HOPS_ROUNDS);
	check("hops_polled_finish", fin == CL_SUCCESS && p0 >= 0 && p1 > p0,
	    "%d finishes: status %d, %lld polled", HOPS_ROUNDS, fin, p1 - p0);
	for (k = 0, p2 = p1; k < HOPS_TRIES && bad == 0 && p2 == p1; k++) {
		bad = hops_reads(&c, data);
		p2 = hops_polled(&c);
	}
	note("%lld of %d reads answered by the loop's poll", p2 - p1,
	    k * HOPS_ROUNDS);
	check("hops_polled_read", bad == 0 && p2 > p1,
	    "%d reads of %d bytes: %d wrong, %lld polled", HOPS_ROUNDS,
	    HOPS_READ, bad, p2 - p1);

	/* A fill the device takes milliseconds over, then a finish. */
	if (create_buffer(&c, H_BIG, H_CTX, HOPS_FILL, NULL, 0) != 0 ||
	    hops_finish(&c) != CL_SUCCESS) {
		check("hops_polled_setup", 0, "big buffer setup failed");
		goto out;
	}
	p2 = hops_polled(&c);
	fq.queue = H_Q;
	fm.q = &fq;
	fm.mem = H_BIG;
	fm.pattern.data = (uint8_t *)&pat;
	fm.pattern.len = sizeof pat;
	fm.size = HOPS_FILL;
	r.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
	r.fill_buffer = &fm;
	if (send_req(&c, &r, NULL, 0) != 0 || hops_send_finish(&c) != 0) {
		check("hops_polled_send", 0, "sending failed");
		goto out;
	}
	seq = c.seq;
	fin = hops_until_reply(&c, seq, 0, &seen);
	p3 = hops_polled(&c);
	check("hops_polled_held", fin == CL_SUCCESS && p3 == p2,
	    "finish behind a long fill: status %d, %lld polled", fin,
	    p3 - p2);
	/* Past the back-off the queue is polled again. */
	for (k = 0, p4 = p3; k < HOPS_TRIES && fin == CL_SUCCESS &&
	    p4 == p3; k++) {
		fin = hops_finishes(&c, 2 * HOPS_ROUNDS);
		p4 = hops_polled(&c);
	}
	check("hops_polled_again", fin == CL_SUCCESS && p4 > p3,
	    "%d finishes after the back-off: status %d, %lld polled",
	    2 * HOPS_ROUNDS, fin, p4 - p3);
out:
	if (c.fd != -1)
		conn_close(&c);
	srv_stop(&sv, "hops_polled_stop");
}

/*
 * Sessions that close while their read and finish complete: each sends a
 * blocking read and a finish and closes at once. The server stays up,
 * frees every session's objects, and answers a new session.
 */
static void
t_hops_close_race(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer		 m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 q = VCL__ENQUEUE__INIT;
	Vcl__StatsResult	 st;
	struct reply		 rp;
	int			 i, opened = 0, fin;

	memset(&sv, 0, sizeof sv);
	c.fd = -1;
	if (!srv_start(&sv, "hops_race_server", "127.0.0.1:0", nopoll))
		goto out;
	q.queue = H_Q;
	m.q = &q;
	m.mem = H_BUF;
	m.size = HOPS_READ;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	for (i = 0; i < HOPS_RACERS; i++) {
		if (hops_session(&c, &sv, HOPS_READ) != 0)
			continue;
		opened++;
		(void)send_req(&c, &r, NULL, 0);
		(void)hops_send_finish(&c);
		/* Every other one reads the first reply before closing. */
		if (i % 2 == 1 && recv_msg(&c, &rp) == 0)
			reply_free(&rp);
		conn_close(&c);
		c.fd = -1;
	}
	check("hops_race_sessions", opened == HOPS_RACERS,
	    "%d of %d sessions opened", opened, HOPS_RACERS);
	if (hops_session(&c, &sv, HOPS_READ) != 0) {
		check("hops_race_after", 0, "no session after the races");
		c.fd = -1;
		goto out;
	}
	fin = hops_finish(&c);
	check("hops_race_after", fin == CL_SUCCESS, "finish after: %d", fin);
	if (release(&c, VCL__KIND__KIND_MEM, H_BUF) != 0 ||
	    release(&c, VCL__KIND__KIND_QUEUE, H_Q) != 0 ||
	    release(&c, VCL__KIND__KIND_CONTEXT, H_CTX) != 0)
		check("hops_race_release", 0, "releases failed");
	check("hops_race_empty", wait_empty(&c, &st) == 0,
	    "objects or bytes left: %llu objects, %llu bytes",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
out:
	if (c.fd != -1)
		conn_close(&c);
	srv_stop(&sv, "hops_race_stop");
}

/*
 * A queue the runtime holds up holds up only itself. The server runs with
 * VCL_TEST_FLUSH_HOLD: a queue's first flush, on the loop, looks slow
 * (so the queue moves to its strand: Stats queues_offloop), and its flushes
 * there wait until the queue is released, as a runtime that blocks in
 * clFlush would. Session A enqueues
 * and asks for a flush, which then waits; session B's finishes and Stats
 * still complete meanwhile (on a loop blocked in A's flush they would
 * not: the test fails by its receive timeout). Closing A ends the flush.
 */
static void
t_hops_blocked(void)
{
	struct srv		 sv;
	struct conn		 a, b;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Flush		 fl = VCL__FLUSH__INIT;
	Vcl__StatsResult	 st;
	int			 rc, fin, i;

	memset(&sv, 0, sizeof sv);
	a.fd = b.fd = -1;
	setenv("VCL_TEST_FLUSH_HOLD", "1", 1);
	rc = srv_start(&sv, "hops_blocked_server", "127.0.0.1:0", NULL);
	unsetenv("VCL_TEST_FLUSH_HOLD");
	if (!rc)
		return;
	if (hops_session(&a, &sv, 64) != 0 || hops_session(&b, &sv, 64) !=
	    0) {
		check("hops_blocked_setup", 0, "sessions failed");
		goto out;
	}
	/* A: a marker, then a flush, which the runtime holds up. */
	fl.queue = H_Q;
	if (hops_send_marker(&a, 0) != 0)
		goto sendfail;
	r.call_case = VCL__REQUEST__CALL_FLUSH;
	r.flush = &fl;
	if (send_req(&a, &r, NULL, 0) != 0)
		goto sendfail;
	/* A's Stats answer: its requests, flush included, were taken. */
	check("hops_blocked_a", stats(&a, &st) == 0,
	    "session A: no Stats reply behind its flush");
	/* B goes on meanwhile (a blocked loop would answer nothing). */
	for (i = 0, fin = CL_SUCCESS; i < 5 && fin == CL_SUCCESS; i++)
		fin = hops_finish(&b);
	check("hops_blocked_other", fin == CL_SUCCESS,
	    "session B's finish while A's queue is held up: %d", fin);
	check("hops_blocked_stats", stats(&b, &st) == 0,
	    "session B's Stats while A's queue is held up");
	/* The slow first flush moved the queue off the loop. */
	check("hops_blocked_moved", st.has_queues_offloop &&
	    st.queues_offloop >= 1, "queues moved to their strand: %llu",
	    (unsigned long long)st.queues_offloop);
	conn_close(&a);
	a.fd = -1;
	fin = hops_finish(&b);
	check("hops_blocked_after", fin == CL_SUCCESS,
	    "session B's finish after A closed: %d", fin);
	goto out;
sendfail:
	check("hops_blocked_send", 0, "sending failed");
out:
	if (a.fd != -1)
		conn_close(&a);
	if (b.fd != -1)
		conn_close(&b);
	srv_stop(&sv, "hops_blocked_stop");
}

static const struct test tests[] = {
	{ "hops_fast", t_hops_fast, 60 },
	{ "hops_big", t_hops_big, 60 },
	{ "hops_order", t_hops_order, 60 },
	{ "hops_order_polled", t_hops_order_polled, 60 },
	{ "hops_order_slow", t_hops_order_slow, 60 },
	{ "hops_order_slow_chunked", t_hops_order_slow_chunked, 60 },
	{ "hops_polled", t_hops_polled, 60 },
	{ "hops_close_race", t_hops_close_race, 120 },
	{ "hops_blocked", t_hops_blocked, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
