/* chunkread_test.c - large reads sent in chunks as their copies complete. */

/*
 * usage: chunkread_test VCLSERVER
 *
 * A read of two chunks or more (--read-chunk) is enqueued as one copy per
 * chunk and its reply's bulk goes out chunk by chunk. Checked here over the
 * raw wire: the bytes arrive whole and in order, frames queued meanwhile
 * (other reads, a finish, an event's Notify) follow the bulk instead of
 * landing inside it, and a chunk that fails after the reply head went out
 * closes the session (the stream stays framed) while the server carries on.
 * VCL_TEST_READ_FAIL_CHUNK=I makes chunk I of every chunked read fail.
 */

#include "rawproto.h"

#define CHUNK		(64u << 10)
#define BIG		((1u << 20) + 123u)	/* 17 chunks, the last short */

static const char *const chunk_args[] = { "--read-chunk", "64K", NULL };

/* Send ReadBuffer{q, mem, off, size, event}; returns its seq, 0 on error. */
static uint64_t
send_read(struct conn *c, uint64_t q, uint64_t mem, uint64_t off,
    uint64_t size, uint64_t event)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = q;
	if (event != 0) {
		e.has_event = 1;
		e.event = event;
	}
	m.q = &e;
	m.mem = mem;
	m.offset = off;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	if (send_req(c, &r, NULL, 0) != 0)
		return (0);
	return (r.seq);
}

/* Session with context 1, queue 2 and buffer 3 holding data (size n). */
static int
setup(struct conn *c, const struct srv *sv, const uint8_t *data, size_t n)
{
	if (conn_session(c, sv) != 0)
		return (-1);
	if (create_context(c, 1) != 0 || create_queue(c, 2, 1) != 0 ||
	    create_buffer(c, 3, 1, n, data, n) != 0)
		return (-1);
	return (0);
}

/*
 * A chunked read (with an event) and, while its chunks complete, frames
 * that do not wait for it: a read on another queue and GetInfo calls, then
 * a read and a finish behind it on its queue. Every reply comes whole with
 * its own bytes (a frame inside the bulk would garble the stream) and the
 * event's Notify comes after its read's bytes.
 */
#define NREQ	(3 + NINFO)
#define NINFO	8
#define ORDER	((16u << 20) + 123u)	/* 257 chunks */

static void
test_order(void)
{
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__Finish	 f = VCL__FINISH__INIT;
	Vcl__GetInfo	 gi = VCL__GET_INFO__INIT;
	uint64_t	 seq[NREQ + 1], off[3] = { 0, 4096 + 7, 100 };
	uint64_t	 len[3] = { ORDER, 4096, 512u * 1024 + 9 };
	uint8_t		*data;
	size_t		 i, k, got = 0, notified = 0;
	int		 rc = 0, ok = 1, have_a = 0;

	c.fd = -1;
	if ((data = raw_pattern(ORDER, 0)) == NULL)
		return;
	if (!srv_start(&sv, "order_server_start", "127.0.0.1:0", chunk_args)) {
		free(data);
		return;
	}
	if (!check("order_setup", setup(&c, &sv, data, ORDER) == 0 &&
	    create_queue(&c, 4, 1) == 0, "no session, context, queues or "
	    "buffer"))
		goto out;
	seq[0] = send_read(&c, 2, 3, off[0], len[0], 10);
	seq[1] = send_read(&c, 4, 3, off[1], len[1], 0);
	for (i = 0; i < NINFO; i++) {
		gi.what = VCL__GET_INFO__WHAT__DEVICE;
		gi.param = CL_DEVICE_MAX_COMPUTE_UNITS;
		r.call_case = VCL__REQUEST__CALL_GET_INFO;
		r.get_info = &gi;
		rc |= send_req(&c, &r, NULL, 0);
		seq[3 + i] = r.seq;
	}
	seq[2] = send_read(&c, 2, 3, off[2], len[2], 0);
	f.queue = 2;
	r.call_case = VCL__REQUEST__CALL_FINISH;
	r.finish = &f;
	rc |= send_req(&c, &r, NULL, 0);
	seq[NREQ] = r.seq;
	if (!check("order_sent", rc == 0 && seq[0] != 0 && seq[1] != 0 &&
	    seq[2] != 0, "cannot send the requests"))
		goto out;
	while ((got < NREQ + 1 || notified == 0) && ok) {
		if ((rc = recv_msg(&c, &rp)) != 0) {
			ok = check("order_replies", 0, "%zu of %d replies, then "
			    "%s", got, NREQ + 1, rc == 1 ? "closed" :
			    "a bad frame or a timeout");
			break;
		}
		for (i = 0; i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == 10) {
				notified++;
				ok = check("order_notify_after_bytes",
				    have_a, "the event's Notify came before "
				    "its read's bytes");
			}
		if (rp.r != NULL) {
			for (k = 0; k <= NREQ && seq[k] != rp.r->seq; k++)
				;
			if (k > NREQ)
				ok = check("order_reply_seq", 0, "reply with "
				    "seq %llu, asked for none",
				    (unsigned long long)rp.r->seq);
			else if (k < 3)
				ok = check("order_read_bytes", rp.r->status ==
				    0 && rp.bulk_len == len[k] &&
				    memcmp(rp.bulk, data + off[k], len[k]) ==
				    0, "read %zu: status %d, %llu of %llu "
				    "bytes, or other bytes", k, rp.r->status,
				    (unsigned long long)rp.bulk_len,
				    (unsigned long long)len[k]);
			else
				ok = check("order_other", rp.r->status == 0 &&
				    rp.bulk_len == 0, "reply %zu: status %d, "
				    "%llu bytes", k, rp.r->status,
				    (unsigned long long)rp.bulk_len);
			have_a |= k == 0;
			got++;
		}
		reply_free(&rp);
	}
	if (ok)
		check("order_all", got == NREQ + 1 && notified == 1, "%zu of "
		    "%d replies, event notified %zu times", got, NREQ + 1,
		    notified);
out:
	conn_close(&c);
	free(data);
	srv_stop(&sv, "order_server_exit");
}

/*
 * A chunk failing after the head went out closes the session; one failing
 * before (the first) is answered with its error and the session goes on.
 * Either way the server serves the next session.
 */
static void
test_fail(void)
{
	struct srv	 sv;
	struct conn	 c, d;
	struct reply	 rp;
	uint8_t		*data;
	int		 rc;

	c.fd = d.fd = -1;
	if ((data = raw_pattern(BIG, 0)) == NULL)
		return;
	setenv("VCL_TEST_READ_FAIL_CHUNK", "5", 1);
	rc = srv_start(&sv, "fail_server_start", "127.0.0.1:0", chunk_args);
	unsetenv("VCL_TEST_READ_FAIL_CHUNK");
	if (!rc) {
		free(data);
		return;
	}
	if (!check("fail_setup", setup(&c, &sv, data, BIG) == 0,
	    "no session, context, queue or buffer"))
		goto out;
	/*
	 * Mostly chunk 0 is in first and the head goes out: then the session
	 * closes. Should chunk 5's failure be seen first, the read is
	 * answered with it. Never a success.
	 */
	rc = read_buffer(&c, 2, 3, BIG, &rp);
	if (rc == 0) {
		check("fail_midway_reported", rp.r->status ==
		    CL_OUT_OF_RESOURCES && rp.bulk_len == 0, "read answered "
		    "(status %d, %llu bytes) though chunk 5 failed",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	} else if (check("fail_midway_reported", rc == 1, "no reply and no "
	    "close (timeout)"))
		check("fail_midway_logged", srv_stderr_has(&sv,
		    "failed after its reply began"), "no log line saying why");
	conn_close(&c);

	/* A read of fewer than two chunks is not chunked: it succeeds. */
	if (!check("fail_next_session", setup(&d, &sv, data, BIG) == 0,
	    "the server took no new session"))
		goto out;
	rc = read_buffer(&d, 2, 3, CHUNK, &rp);
	if (check("fail_small_read", rc == 0, "no reply to a small read")) {
		check("fail_small_bytes", rp.r->status == 0 && rp.bulk_len ==
		    CHUNK && memcmp(rp.bulk, data, CHUNK) == 0, "status %d, "
		    "%llu bytes", rp.r->status,
		    (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}
out:
	conn_close(&c);
	conn_close(&d);
	srv_stop(&sv, "fail_server_exit");

	/* The first chunk failing: an error reply, the session lives on. */
	setenv("VCL_TEST_READ_FAIL_CHUNK", "0", 1);
	rc = srv_start(&sv, "fail0_server_start", "127.0.0.1:0", chunk_args);
	unsetenv("VCL_TEST_READ_FAIL_CHUNK");
	if (!rc) {
		free(data);
		return;
	}
	c.fd = -1;
	if (!check("fail0_setup", setup(&c, &sv, data, BIG) == 0,
	    "no session, context, queue or buffer"))
		goto out0;
	rc = read_buffer(&c, 2, 3, BIG, &rp);
	if (check("fail0_answered", rc == 0, "no reply (%s)", rc == 1 ?
	    "closed" : "timeout")) {
		check("fail0_status", rp.r->status == CL_OUT_OF_RESOURCES &&
		    rp.bulk_len == 0, "status %d with %llu bytes, want %d "
		    "and none", rp.r->status,
		    (unsigned long long)rp.bulk_len, CL_OUT_OF_RESOURCES);
		reply_free(&rp);
	}
	rc = read_buffer(&c, 2, 3, CHUNK, &rp);
	if (check("fail0_session_lives", rc == 0, "no reply to the next "
	    "read")) {
		check("fail0_next_bytes", rp.r->status == 0 &&
		    rp.bulk_len == CHUNK && memcmp(rp.bulk, data, CHUNK) == 0,
		    "status %d, %llu bytes", rp.r->status,
		    (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}
out0:
	conn_close(&c);
	free(data);
	srv_stop(&sv, "fail0_server_exit");
}

static const struct test tests[] = {
	{ "order",	test_order,	60 },
	{ "fail",	test_fail,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
