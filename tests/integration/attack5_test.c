/* attack5_test.c - hostile clients against chunked reads and writes. */

/*
 * usage: attack5_test VCLSERVER
 *
 * Raw-protocol clients that do what libvcl never would, against the
 * chunked read and write paths (--read-chunk, --write-chunk): objects
 * released or the connection dropped while a read's chunks are in flight,
 * reads behind failed or never-set user events, ranges at and past a
 * buffer's edges, writes whose bulk disagrees with their size or that
 * target a sub-buffer. Each time the server answers what it must, holds
 * nothing afterwards and serves the next session.
 */

#include "rawproto.h"

#define CHUNK		(64u << 10)
#define BIG		((1u << 20) + 123u)	/* 17 chunks, the last short */
#define CTX		1
#define Q		2
#define MEM		3
#define Q2		4
#define UEV		9
#define EV		10

static const char *const rd_args[] = { "--read-chunk", "64K",
	"--write-chunk", "64K", NULL };

/* Session with context CTX, queue Q and buffer MEM holding data. */
static int
setup(struct conn *c, const struct srv *sv, const uint8_t *data, size_t n)
{
	if (conn_session(c, sv) != 0)
		return (-1);
	if (create_context(c, CTX) != 0 || create_queue(c, Q, CTX) != 0 ||
	    create_buffer(c, MEM, CTX, n, data, n) != 0)
		return (-1);
	return (0);
}

/* Send ReadBuffer{q, mem, off, size, event, wait}; its seq, 0 on error. */
static uint64_t
send_read(struct conn *c, uint64_t q, uint64_t mem, uint64_t off,
    uint64_t size, uint64_t event, uint64_t *wait, size_t nwait)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = q;
	if (event != 0) {
		e.has_event = 1;
		e.event = event;
	}
	e.n_wait = nwait;
	e.wait = wait;
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

/* Wait for the reply of seq (Notify frames skipped); 0, or -1/1. */
static int
wait_reply(struct conn *c, uint64_t seq, struct reply *rp)
{
	int	rc;

	for (;;) {
		if ((rc = recv_msg(c, rp)) != 0)
			return (rc);
		if (rp->r != NULL && rp->r->seq == seq)
			return (0);
		reply_free(rp);
	}
}

/* CreateUserEvent{id, CTX} (asynchronous). */
static int
user_event(struct conn *c, uint64_t id)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	m = VCL__CREATE_USER_EVENT__INIT;

	m.id = id;
	m.context = CTX;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &m;
	return (send_req(c, &r, NULL, 0));
}

/* SetUserEventStatus{id, status} (asynchronous). */
static int
user_event_set(struct conn *c, uint64_t id, cl_int status)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__SetUserEventStatus	m = VCL__SET_USER_EVENT_STATUS__INIT;

	m.event = id;
	m.status = status;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &m;
	return (send_req(c, &r, NULL, 0));
}

/* A second session's look: the server holds nothing and serves. */
static void
check_empty(const char *name, const struct srv *sv)
{
	struct conn		d;
	Vcl__StatsResult	st;
	int			rc;

	d.fd = -1;
	memset(&st, 0, sizeof st);
	if (check(name, conn_session(&d, sv) == 0, "the server took no "
	    "new session")) {
		rc = wait_empty(&d, &st);
		check(name, rc == 0, "%llu objects, %llu bytes still held",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);
	}
	conn_close(&d);
}

/*
 * A chunked read, then at once releases of its buffer, queue, context
 * and event: the read still answers with its bytes (the runtime keeps
 * what its commands use). Then again with the connection dropped right
 * behind the releases, the chunks still in flight; and with a reused id
 * behind the read instead, which closes the session meanwhile.
 */
static void
test_rd_release(void)
{
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	uint8_t		*data;
	uint64_t	 seq;
	int		 i, rc;

	c.fd = -1;
	if ((data = raw_pattern(BIG, 1)) == NULL)
		return;
	if (!srv_start(&sv, "rdrel_server_start", "127.0.0.1:0", rd_args)) {
		free(data);
		return;
	}
	for (i = 0; i < 3; i++) {
		if (!check("rdrel_setup", setup(&c, &sv, data, BIG) == 0,
		    "no session, context, queue or buffer"))
			goto out;
		seq = send_read(&c, Q, MEM, 0, BIG, EV, NULL, 0);
		if (i == 2)	/* a reused id: the server closes it */
			rc = seq == 0 || create_context(&c, MEM) != 0;
		else
			rc = seq == 0 || release(&c, VCL__KIND__KIND_MEM,
			    MEM) != 0 || release(&c, VCL__KIND__KIND_QUEUE,
			    Q) != 0 || release(&c, VCL__KIND__KIND_EVENT,
			    EV) != 0 || release(&c, VCL__KIND__KIND_CONTEXT,
			    CTX) != 0;
		if (!check("rdrel_sent", rc == 0, "cannot send the requests"))
			goto out;
		if (i == 0) {
			rc = wait_reply(&c, seq, &rp);
			if (check("rdrel_answered", rc == 0, "no reply (%s)",
			    rc == 1 ? "closed" : "timeout")) {
				check("rdrel_bytes", rp.r->status == 0 &&
				    rp.bulk_len == BIG && memcmp(rp.bulk,
				    data, BIG) == 0, "status %d, %llu bytes "
				    "or other bytes", rp.r->status,
				    (unsigned long long)rp.bulk_len);
				reply_free(&rp);
			}
		}
		if (i == 2)
			check("rdrel_reuse_closed", wait_closed(&c), "the "
			    "session went on after reusing an id");
		conn_close(&c);
		check_empty("rdrel_empty", &sv);
	}
out:
	conn_close(&c);
	free(data);
	srv_stop(&sv, "rdrel_server_exit");
}

/*
 * A chunked read whose wait list names a user event set to a failure:
 * answered with an error and no bytes, and the session goes on. One
 * behind a user event never set, then the client gone: nothing stays.
 */
static void
test_rd_userevent(void)
{
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	uint8_t		*data;
	uint64_t	 seq, u = UEV;
	cl_int		 est;
	int		 rc;

	c.fd = -1;
	if ((data = raw_pattern(BIG, 2)) == NULL)
		return;
	if (!srv_start(&sv, "rduev_server_start", "127.0.0.1:0", rd_args)) {
		free(data);
		return;
	}
	if (!check("rduev_setup", setup(&c, &sv, data, BIG) == 0 &&
	    user_event(&c, UEV) == 0, "no session, context, queue, buffer "
	    "or user event"))
		goto out;
	seq = send_read(&c, Q, MEM, 0, BIG, EV, &u, 1);
	if (!check("rduev_sent", seq != 0 && get_info_status(&c,
	    VCL__GET_INFO__WHAT__DEVICE, 0, CL_DEVICE_MAX_COMPUTE_UNITS) == 0,
	    "cannot send, or no reply to GetInfo while the read waits"))
		goto out;
	if (!check("rduev_set", user_event_set(&c, UEV, -5) == 0, "cannot "
	    "send the status"))
		goto out;
	rc = wait_reply(&c, seq, &rp);
	if (check("rduev_answered", rc == 0, "no reply (%s)", rc == 1 ?
	    "closed" : "timeout")) {
		check("rduev_failed", rp.r->status < 0 && rp.bulk_len == 0,
		    "status %d with %llu bytes behind a failed event",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
		est = CL_COMPLETE;
		check("rduev_event_failed", wait_notify(&c, EV, &est) == 0 &&
		    est < 0, "the read's event: %s (status %d)", est ==
		    CL_COMPLETE ? "no Notify" : "completed", est);
	}
	rc = read_buffer(&c, Q, MEM, BIG, &rp);
	if (check("rduev_next", rc == 0, "no reply to the next read")) {
		check("rduev_next_bytes", rp.r->status == 0 && rp.bulk_len ==
		    BIG && memcmp(rp.bulk, data, BIG) == 0, "status %d, %llu "
		    "bytes", rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}
	/* Behind one never set, and gone. */
	u = UEV + 10;
	if (!check("rduev_never", user_event(&c, u) == 0 &&
	    send_read(&c, Q, MEM, 0, BIG, EV + 10, &u, 1) != 0 &&
	    get_info_status(&c, VCL__GET_INFO__WHAT__DEVICE, 0,
	    CL_DEVICE_MAX_COMPUTE_UNITS) == 0, "cannot send, or no reply"))
		goto out;
	conn_close(&c);
	check_empty("rduev_empty", &sv);
out:
	conn_close(&c);
	free(data);
	srv_stop(&sv, "rduev_server_exit");
}

/*
 * Ranges at the edges: the whole buffer, the last byte, a size the chunk
 * does not divide ending at the end; past the end, offset + size
 * wrapping, size 0: CL_INVALID_VALUE, the session goes on.
 */
static void
test_rd_edges(void)
{
	static const struct {
		uint64_t	off, size;
		cl_int		want;
	} e[] = {
		{ 0, BIG, CL_SUCCESS },
		{ BIG - 1, 1, CL_SUCCESS },
		{ 77, BIG - 77, CL_SUCCESS },
		{ CHUNK, 2 * CHUNK, CL_SUCCESS },
		{ 1, BIG, CL_INVALID_VALUE },
		{ 0, BIG + 1, CL_INVALID_VALUE },
		{ BIG, 1, CL_INVALID_VALUE },
		{ UINT64_MAX - 10, 2 * CHUNK, CL_INVALID_VALUE },
		{ 2 * CHUNK, UINT64_MAX - CHUNK, CL_INVALID_VALUE },
		{ 0, UINT64_MAX, CL_INVALID_VALUE },
		{ 0, 0, CL_INVALID_VALUE },
	};
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	uint8_t		*data;
	uint64_t	 seq;
	size_t		 i;
	int		 rc;

	c.fd = -1;
	if ((data = raw_pattern(BIG, 3)) == NULL)
		return;
	if (!srv_start(&sv, "rdedge_server_start", "127.0.0.1:0", rd_args)) {
		free(data);
		return;
	}
	if (!check("rdedge_setup", setup(&c, &sv, data, BIG) == 0,
	    "no session, context, queue or buffer"))
		goto out;
	for (i = 0; i < sizeof e / sizeof e[0]; i++) {
		seq = send_read(&c, Q, MEM, e[i].off, e[i].size, 0, NULL, 0);
		rc = seq == 0 ? -1 : wait_reply(&c, seq, &rp);
		if (!check("rdedge_answered", rc == 0, "read %zu: no reply "
		    "(%d)", i, rc))
			goto out;
		if (e[i].want == CL_SUCCESS)
			check("rdedge_bytes", rp.r->status == 0 &&
			    rp.bulk_len == e[i].size && memcmp(rp.bulk,
			    data + e[i].off, e[i].size) == 0, "read %zu: "
			    "status %d, %llu bytes or other bytes", i,
			    rp.r->status, (unsigned long long)rp.bulk_len);
		else
			check("rdedge_refused", rp.r->status == e[i].want &&
			    rp.bulk_len == 0, "read %zu: status %d with %llu "
			    "bytes, want %d", i, rp.r->status,
			    (unsigned long long)rp.bulk_len, e[i].want);
		reply_free(&rp);
	}
	conn_close(&c);
	check_empty("rdedge_empty", &sv);
out:
	conn_close(&c);
	free(data);
	srv_stop(&sv, "rdedge_server_exit");
}

/*
 * Send WriteBuffer{q, mem, off, size} announcing blen bulk bytes, and the
 * first sent of them from data. Returns its seq, 0 on error.
 */
static uint64_t
send_write(struct conn *c, uint64_t q, uint64_t mem, uint64_t off,
    uint64_t size, uint64_t blen, const uint8_t *data, uint64_t sent)
{
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = q;
	return (raw_write_part(c, &e, mem, off, size, blen, data, sent));
}

/*
 * A write whose bulk is a byte short of, or a byte over, its size closes
 * the session (the stream cannot be trusted) and leaves nothing behind.
 */
static void
test_wr_mismatch(void)
{
	struct srv	 sv;
	struct conn	 c;
	uint8_t		*data;
	int		 i;

	c.fd = -1;
	if ((data = raw_pattern(BIG + 1, 4)) == NULL)
		return;
	if (!srv_start(&sv, "wrmis_server_start", "127.0.0.1:0", rd_args)) {
		free(data);
		return;
	}
	for (i = 0; i < 2; i++) {
		if (!check("wrmis_setup", setup(&c, &sv, data, BIG) == 0,
		    "no session, context, queue or buffer"))
			goto out;
		if (!check("wrmis_sent", send_write(&c, Q, MEM, 0, BIG - i,
		    BIG - 1 + i, data, BIG - 1 + i) != 0, "cannot send"))
			goto out;
		check("wrmis_closed", wait_closed(&c), "the session went on "
		    "after a write whose bytes do not match its size");
		conn_close(&c);
		check_empty("wrmis_empty", &sv);
	}
out:
	conn_close(&c);
	free(data);
	srv_stop(&sv, "wrmis_server_exit");
}

/* CreateSubBuffer{id, parent, origin, size} (asynchronous). */
static int
sub_buffer(struct conn *c, uint64_t id, uint64_t parent, uint64_t origin,
    uint64_t size)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateSubBuffer	m = VCL__CREATE_SUB_BUFFER__INIT;

	m.id = id;
	m.parent = parent;
	m.flags = CL_MEM_READ_WRITE;
	m.origin = origin;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_CREATE_SUB_BUFFER;
	r.create_sub_buffer = &m;
	return (send_req(c, &r, NULL, 0));
}

#define SUB		5
#define SUB_ORG		(2u * CHUNK)
#define SUB_LEN		(BIG - 3u * CHUNK)

/*
 * A chunked write to a sub-buffer lands at the sub-buffer's origin in its
 * parent, and one running past the sub-buffer's end is refused (though
 * inside the parent) without touching it.
 */
static void
test_wr_sub(void)
{
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	uint8_t		*data, *src;
	uint64_t	 seq;
	int		 rc;

	c.fd = -1;
	data = raw_pattern(BIG, 5);
	src = raw_pattern(SUB_LEN, 6);
	if (data == NULL || src == NULL || !srv_start(&sv,
	    "wrsub_server_start", "127.0.0.1:0", rd_args)) {
		free(data);
		free(src);
		return;
	}
	if (!check("wrsub_setup", setup(&c, &sv, data, BIG) == 0 &&
	    sub_buffer(&c, SUB, MEM, SUB_ORG, SUB_LEN) == 0, "no session, "
	    "context, queue, buffer or sub-buffer"))
		goto out;
	/* Past the sub-buffer's end by a byte: refused, nothing written. */
	seq = send_write(&c, Q, SUB, 1, SUB_LEN, SUB_LEN, src, SUB_LEN);
	if (!check("wrsub_past_sent", seq != 0, "cannot send"))
		goto out;
	rc = raw_finish(&c, Q);
	check("wrsub_past_refused", rc == CL_INVALID_VALUE, "finish after "
	    "a write past its sub-buffer: %d, want %d", rc, CL_INVALID_VALUE);
	seq = send_write(&c, Q, SUB, 0, SUB_LEN, SUB_LEN, src, SUB_LEN);
	if (!check("wrsub_sent", seq != 0 && raw_finish(&c, Q) == 0,
	    "cannot send, or the write failed"))
		goto out;
	memcpy(data + SUB_ORG, src, SUB_LEN);
	rc = read_buffer(&c, Q, MEM, BIG, &rp);
	if (check("wrsub_read", rc == 0, "no reply to the read")) {
		check("wrsub_landed", rp.r->status == 0 && rp.bulk_len == BIG &&
		    memcmp(rp.bulk, data, BIG) == 0, "status %d, %llu bytes, "
		    "or the write did not land at the sub-buffer's origin",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}
	conn_close(&c);
	check_empty("wrsub_empty", &sv);
out:
	conn_close(&c);
	free(data);
	free(src);
	srv_stop(&sv, "wrsub_server_exit");
}

/* Send one GetInfo of c without waiting. Returns 0 or -1. */
static int
trip_send(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetInfo	gi = VCL__GET_INFO__INIT;

	gi.what = VCL__GET_INFO__WHAT__DEVICE;
	gi.param = CL_DEVICE_MAX_COMPUTE_UNITS;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &gi;
	return (send_req(c, &r, NULL, 0));
}

/* One GetInfo round trip of c: 0 when answered with CL_SUCCESS. */
static int
trip(struct conn *c)
{
	return (get_info_status(c, VCL__GET_INFO__WHAT__DEVICE, 0,
	    CL_DEVICE_MAX_COMPUTE_UNITS));
}

#define FLOOD_BATCH	256	/* GetInfo frames per send of the flooder */
#define FLOOD_TRIPS	40	/* round trips of the other sessions */

/*
 * The flooder: GetInfo frames as fast as the socket takes them, its
 * replies read and dropped, until killed (or 60 s).
 */
static void
flood(struct conn *c)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__GetInfo	 gi = VCL__GET_INFO__INIT;
	struct vcl_buf	 b = { NULL, 0, 0 };
	uint8_t		 sink[65536];
	size_t		 off = 0;
	time_t		 end = time(NULL) + 60;
	ssize_t		 n;
	int		 i;

	gi.what = VCL__GET_INFO__WHAT__DEVICE;
	gi.param = CL_DEVICE_MAX_COMPUTE_UNITS;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &gi;
	for (i = 0; i < FLOOD_BATCH; i++) {
		r.seq = ++c->seq;
		if (vcl_buf_pack(&b, &r.base, 0) != 0)
			_exit(1);
	}
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	while (time(NULL) < end) {
		n = send(c->fd, b.data + off, b.len - off, MSG_NOSIGNAL);
		if (n > 0 && (off += (size_t)n) == b.len)
			off = 0;	/* the same seqs again: replies dropped */
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			_exit(0);
		while ((n = recv(c->fd, sink, sizeof sink, 0)) > 0)
			;
		if (n == 0)
			_exit(0);
	}
	_exit(0);
}

/*
 * With the loop looking for input (--spin-us at its most), one session
 * floods requests while FLOOD_SESS others take turns at their round
 * trips (a GetInfo, a read checked byte for byte): every one of them is
 * answered, and the flooder is still served too.
 */
#define FLOOD_SESS	4

static void
test_flood(void)
{
	static const char *const args[] = { "--spin-us", "1000", NULL };
	struct srv	 sv;
	struct conn	 c, d[FLOOD_SESS];
	struct reply	 rp;
	uint8_t		*data;
	pid_t		 pid = -1;
	int		 i, k, bad = -1;

	c.fd = -1;
	for (k = 0; k < FLOOD_SESS; k++)
		d[k].fd = -1;
	if ((data = raw_pattern(4096, 7)) == NULL)
		return;
	if (!srv_start(&sv, "flood_server_start", "127.0.0.1:0", args)) {
		free(data);
		return;
	}
	if (!check("flood_setup", conn_session(&c, &sv) == 0, "no session"))
		goto out;
	for (k = 0; k < FLOOD_SESS; k++)
		if (!check("flood_setup", setup(&d[k], &sv, data, 4096) == 0,
		    "no session, context, queue or buffer"))
			goto out;
	fflush(stdout);
	if ((pid = fork()) == 0)
		flood(&c);
	if (!check("flood_fork", pid > 0, "fork: %s", strerror(errno)))
		goto out;
	conn_close(&c);
	for (i = 0; i < FLOOD_TRIPS && bad == -1; i++) {
		k = i % FLOOD_SESS;
		if (trip(&d[k]) != 0 || read_buffer(&d[k], Q, MEM, 4096,
		    &rp) != 0)
			bad = i;
		else {
			if (rp.r->status != 0 || rp.bulk_len != 4096 ||
			    memcmp(rp.bulk, data, 4096) != 0)
				bad = i;
			reply_free(&rp);
		}
	}
	check("flood_served", bad == -1, "round trip %d of %d failed while "
	    "another session flooded", bad, FLOOD_TRIPS);
	check("flood_flooder_alive", waitpid(pid, NULL, WNOHANG) == 0,
	    "the flooder stopped early (its session closed?)");
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	conn_close(&c);
	for (k = 0; k < FLOOD_SESS; k++)
		conn_close(&d[k]);
	free(data);
	srv_stop(&sv, "flood_server_exit");
}

#define HUGE		(256ull << 20)
#define NOREAD_INFO	1000

/*
 * A session asks for a 256 MiB read (and more) and never reads a byte of
 * its replies: another session is served meanwhile, and once the first
 * goes the server holds nothing.
 */
static void
test_noread(void)
{
	struct srv	 sv;
	struct conn	 c, d;
	struct reply	 rp;
	Vcl__StatsResult st;
	uint8_t		*data;
	int		 i, bad = -1, rc = 0;

	c.fd = d.fd = -1;
	if ((data = raw_pattern(BIG, 8)) == NULL)
		return;
	if (!srv_start(&sv, "noread_server_start", "127.0.0.1:0", NULL)) {
		free(data);
		return;
	}
	if (!check("noread_setup", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0 && create_queue(&c, Q, CTX) == 0 &&
	    create_buffer(&c, MEM, CTX, HUGE, NULL, 0) == 0 &&
	    setup(&d, &sv, data, BIG) == 0, "no sessions, contexts, queues "
	    "or buffers"))
		goto out;
	rc |= send_read(&c, Q, MEM, 0, HUGE, EV, NULL, 0) == 0;
	for (i = 0; i < NOREAD_INFO && rc == 0; i++)
		rc |= trip_send(&c);
	rc |= send_read(&c, Q, MEM, 4096, HUGE - 8192, 0, NULL, 0) == 0;
	if (!check("noread_sent", rc == 0, "cannot send the requests"))
		goto out;
	for (i = 0; i < 50 && bad == -1; i++) {
		if (trip(&d) != 0 || read_buffer(&d, Q, MEM, BIG, &rp) != 0)
			bad = i;
		else {
			if (rp.r->status != 0 || rp.bulk_len != BIG ||
			    memcmp(rp.bulk, data, BIG) != 0)
				bad = i;
			reply_free(&rp);
		}
	}
	check("noread_other_served", bad == -1, "round trip %d failed while "
	    "a session read nothing", bad);
	check("noread_held", stats(&d, &st) == 0 && st.bytes >= HUGE,
	    "Stats failed or the reader's bytes are not counted");
	conn_close(&c);
	conn_close(&d);
	check_empty("noread_empty", &sv);
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	srv_stop(&sv, "noread_server_exit");
}

#define TRICKLE		(3u * 4096u + 5u)

/*
 * A chunked write's bulk one byte per send, another session's round trip
 * every 512 bytes: the other is served throughout, and the write lands.
 */
static void
test_trickle(void)
{
	static const char *const args[] = { "--write-chunk", "4K", NULL };
	struct srv	 sv;
	struct conn	 c, d;
	struct reply	 rp;
	Vcl__StatsResult st;
	uint8_t		*data, *src;
	uint64_t	 i;
	int		 rc = 0;

	c.fd = d.fd = -1;
	data = raw_pattern(TRICKLE, 9);
	src = raw_pattern(TRICKLE, 10);
	if (data == NULL || src == NULL || !srv_start(&sv,
	    "trickle_server_start", "127.0.0.1:0", args)) {
		free(data);
		free(src);
		return;
	}
	if (!check("trickle_setup", setup(&c, &sv, data, TRICKLE) == 0 &&
	    conn_session(&d, &sv) == 0, "no sessions, context, queue or "
	    "buffer"))
		goto out;
	if (!check("trickle_head", send_write(&c, Q, MEM, 0, TRICKLE, TRICKLE,
	    src, 0) != 0, "cannot send"))
		goto out;
	for (i = 0; i < TRICKLE && rc == 0; i++) {
		rc = send_raw(&c, src + i, 1);
		if (rc == 0 && i % 512 == 0)
			rc = trip(&d);
	}
	if (!check("trickle_sent", rc == 0, "byte %llu: cannot send, or the "
	    "other session was not served", (unsigned long long)i))
		goto out;
	check("trickle_chunked", stats(&d, &st) == 0 && st.has_writes_chunked &&
	    st.writes_chunked == 1, "the write did not go in chunks");
	rc = raw_finish(&c, Q);
	check("trickle_finish", rc == CL_SUCCESS, "finish: %d", rc);
	rc = read_buffer(&c, Q, MEM, TRICKLE, &rp);
	if (check("trickle_read", rc == 0, "no reply to the read")) {
		check("trickle_landed", rp.r->status == 0 && rp.bulk_len ==
		    TRICKLE && memcmp(rp.bulk, src, TRICKLE) == 0, "status "
		    "%d, %llu bytes, or other bytes", rp.r->status,
		    (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}
	conn_close(&c);
	conn_close(&d);
	check_empty("trickle_empty", &sv);
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	free(src);
	srv_stop(&sv, "trickle_server_exit");
}

#define SRC_LEN		(4u << 20)	/* a program source of 4 MiB */
#define SRC_ASKS	200		/* its GetInfo, never read: 800 MiB */
#define PROG		6
#define OUT_HIGH	(64ull << 20)	/* vcl_session.c: input stops above */
#define OUT_SLACK	(32ull << 20)	/* the source, one reply, the rest */

/*
 * A session that never reads pipelines GetInfo(CL_PROGRAM_SOURCE) of a
 * large program, all in one read of the server (one batch): its queued
 * replies stop its input once they pass the output bound, in the middle
 * of the batch, instead of every request of the batch queueing a copy
 * of the source (hundreds of MiB from a few KiB of input). Seen from a
 * second session's Stats: the server's bytes pass the bound (the batch
 * ran) but not by more than a reply or two.
 */
static void
test_noread_info(void)
{
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__GetInfo		 gi = VCL__GET_INFO__INIT;
	struct vcl_buf		 b = { NULL, 0, 0 };
	char			*src;
	int			 i, rc;

	c.fd = d.fd = -1;
	memset(&st, 0, sizeof st);
	if ((src = malloc(SRC_LEN + 1)) == NULL)
		return;
	memset(src, ' ', SRC_LEN);
	memcpy(src, "__kernel void k(void) {}\n", 25);
	src[SRC_LEN] = '\0';
	if (!srv_start(&sv, "noinfo_server_start", "127.0.0.1:0", NULL)) {
		free(src);
		return;
	}
	if (!check("noinfo_setup", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0 && create_program(&c, PROG, CTX,
	    src) == 0 && get_info_status(&c, VCL__GET_INFO__WHAT__PROGRAM,
	    PROG, CL_PROGRAM_REFERENCE_COUNT) == 0 &&
	    conn_session(&d, &sv) == 0, "no sessions, context or program"))
		goto out;
	gi.what = VCL__GET_INFO__WHAT__PROGRAM;
	gi.id = PROG;
	gi.param = CL_PROGRAM_SOURCE;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &gi;
	for (i = 0, rc = 0; i < SRC_ASKS && rc == 0; i++) {
		r.seq = ++c.seq;
		rc = vcl_buf_pack(&b, &r.base, 0);
	}
	/* One send: the server reads the lot at once. */
	if (!check("noinfo_sent", rc == 0 && send_raw(&c, b.data, b.len) ==
	    0, "cannot send the requests"))
		goto out;
	for (i = 0; i < STATS_POLLS; i++) {
		if ((rc = stats(&d, &st)) != 0 || st.bytes >= OUT_HIGH)
			break;
		poll_wait();
	}
	if (check("noinfo_batch_ran", rc == 0 && st.bytes >= OUT_HIGH,
	    "Stats failed, or %llu bytes held: the requests never ran",
	    (unsigned long long)st.bytes))
		check("noinfo_bounded", st.bytes <= OUT_HIGH + OUT_SLACK,
		    "%llu bytes held for a session that reads nothing, over "
		    "the output bound %llu by more than %llu",
		    (unsigned long long)st.bytes,
		    (unsigned long long)OUT_HIGH,
		    (unsigned long long)OUT_SLACK);
	conn_close(&c);
	conn_close(&d);
	check_empty("noinfo_empty", &sv);
out:
	vcl_buf_free(&b);
	conn_close(&c);
	conn_close(&d);
	free(src);
	srv_stop(&sv, "noinfo_server_exit");
}

/*
 * Send ReadBuffer{Q, MEM, 0, size, event ev} and a Finish of Q; read until
 * the finish's reply. *rst gets the read's status, *est the event's
 * Notify status (1 if none came first). Returns 0, or -1 (no finish).
 */
static int
read_then_finish(struct conn *c, uint64_t size, uint64_t ev, cl_int *rst,
    cl_int *est)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Finish	f = VCL__FINISH__INIT;
	struct reply	rp;
	uint64_t	seq;
	size_t		i;

	*rst = *est = 1;
	if ((seq = send_read(c, Q, MEM, 0, size, ev, NULL, 0)) == 0)
		return (-1);
	f.queue = Q;
	r.call_case = VCL__REQUEST__CALL_FINISH;
	r.finish = &f;
	if (send_req(c, &r, NULL, 0) != 0)
		return (-1);
	for (;;) {
		if (recv_msg(c, &rp) != 0)
			return (-1);
		for (i = 0; i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev)
				*est = rp.tc->notify[i]->status;
		if (rp.r != NULL && rp.r->seq == seq)
			*rst = rp.r->status;
		if (rp.r != NULL && rp.r->seq == r.seq) {
			reply_free(&rp);
			return (0);
		}
		reply_free(&rp);
	}
}

/*
 * A read whose event the session may not hold (over --max-objects): the
 * read fails and so does its event, told by a Notify as for any command
 * (libvcl's blocking read with an event waits for that Notify after the
 * reply), chunked or not. Context, queue and buffer are the three
 * objects the limit allows; each read's event would be a fourth.
 */
static void
test_rd_objlimit(void)
{
	static const char *const args[] = { "--read-chunk", "64K",
	    "--max-objects", "3", NULL };
	static const uint64_t	 size[] = { CHUNK, BIG };
	struct srv		 sv;
	struct conn		 c;
	uint8_t			*data;
	cl_int			 rst, est;
	size_t			 i;

	c.fd = -1;
	if ((data = raw_pattern(BIG, 11)) == NULL)
		return;
	if (!srv_start(&sv, "rdlim_server_start", "127.0.0.1:0", args)) {
		free(data);
		return;
	}
	if (!check("rdlim_setup", setup(&c, &sv, data, BIG) == 0,
	    "no session, context, queue or buffer"))
		goto out;
	for (i = 0; i < sizeof size / sizeof size[0]; i++) {
		if (!check("rdlim_finish", read_then_finish(&c, size[i],
		    EV + i, &rst, &est) == 0, "read of %llu bytes: no reply "
		    "to the finish behind it", (unsigned long long)size[i]))
			goto out;
		check("rdlim_read_fails", rst < 0, "read of %llu bytes: "
		    "status %d with its event over the object limit",
		    (unsigned long long)size[i], rst);
		check("rdlim_event_told", est < 0, "read of %llu bytes: its "
		    "event's Notify %s", (unsigned long long)size[i], est ==
		    1 ? "never came" : "said it completed");
	}
	conn_close(&c);
	check_empty("rdlim_empty", &sv);
out:
	conn_close(&c);
	free(data);
	srv_stop(&sv, "rdlim_server_exit");
}

#define LORIS		(64u << 20)	/* at 64 KiB/s: 1024 s allowed */
#define LORIS_SENT	1000u

/*
 * A slow-loris write: a frame announcing 64 MiB of bulk, a thousand bytes
 * of it, then nothing. Its staging (charged, pinned where there is some)
 * is held only while the bytes keep coming at --min-rate after the first
 * --frame-timeout seconds, not for the 17 minutes the whole size at
 * --min-rate would allow: the session is closed within a few seconds
 * (--frame-timeout 1), and the server then holds nothing.
 */
static void
test_slowloris(void)
{
	static const char *const args[] = { "--frame-timeout", "1",
	    "--write-chunk", "64K", NULL };
	struct srv	 sv;
	struct conn	 c;
	uint8_t		*data;

	c.fd = -1;
	if ((data = raw_pattern(LORIS_SENT, 12)) == NULL)
		return;
	if (!srv_start(&sv, "loris_server_start", "127.0.0.1:0", args)) {
		free(data);
		return;
	}
	if (!check("loris_setup", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0 && create_queue(&c, Q, CTX) == 0 &&
	    create_buffer(&c, MEM, CTX, LORIS, NULL, 0) == 0 && trip(&c) == 0,
	    "no session, context, queue or buffer"))
		goto out;
	if (!check("loris_sent", send_write(&c, Q, MEM, 0, LORIS, LORIS, data,
	    LORIS_SENT) != 0, "cannot send"))
		goto out;
	/* wait_closed: 10 s at most per silent read. */
	if (check("loris_closed", wait_closed(&c), "a frame stalled after "
	    "%u of its %u bytes was still open", LORIS_SENT, LORIS))
		check("loris_logged", srv_stderr_has(&sv, "frame not completed "
		    "in time"), "the server logged no reason");
	conn_close(&c);
	check_empty("loris_empty", &sv);
out:
	conn_close(&c);
	free(data);
	srv_stop(&sv, "loris_server_exit");
}

#define IMG_W		16		/* pixels of CL_RGBA, CL_UNSIGNED_INT8 */
#define IMG_A		4		/* the 1D array's images, the 2D's rows */
#define IMG_LEN		(IMG_W * IMG_A * 4u)
#define IMG_1DA		7
#define IMG_2D		8

/* CreateImage{id, CTX, CL_RGBA of CL_UNSIGNED_INT8, type} with data. */
static int
image_new(struct conn *c, uint64_t id, uint32_t type, const uint8_t *data)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateImage	m = VCL__CREATE_IMAGE__INIT;

	m.id = id;
	m.context = CTX;
	m.flags = CL_MEM_READ_WRITE;
	m.order = CL_RGBA;
	m.data_type = CL_UNSIGNED_INT8;
	m.type = type;
	m.width = IMG_W;
	if (type == CL_MEM_OBJECT_IMAGE2D) {
		m.has_height = 1;
		m.height = IMG_A;
	} else {
		m.has_array_size = 1;
		m.array_size = IMG_A;
	}
	m.has_has_data = m.has_data = 1;
	r.call_case = VCL__REQUEST__CALL_CREATE_IMAGE;
	r.create_image = &m;
	return (send_req(c, &r, data, IMG_LEN));
}

/*
 * ReadImage (data NULL) or WriteImage (data: its IMG_LEN bytes) of the
 * whole image id on Q, waiting for its reply: its status, the bytes read
 * into *rp (reads). 1 when no reply came.
 */
static cl_int
image_rw(struct conn *c, uint64_t id, const uint8_t *data, struct reply *rp)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ReadImage	rd = VCL__READ_IMAGE__INIT;
	Vcl__WriteImage	wr = VCL__WRITE_IMAGE__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;
	uint64_t	org[3] = { 0, 0, 0 }, reg[3] = { IMG_W, IMG_A, 1 };

	e.queue = Q;
	if (data == NULL) {
		rd.q = &e;
		rd.mem = id;
		rd.origin = org;
		rd.n_origin = 3;
		rd.region = reg;
		rd.n_region = 3;
		r.call_case = VCL__REQUEST__CALL_READ_IMAGE;
		r.read_image = &rd;
		if (call(c, &r, NULL, 0, rp) != 0)
			return (1);
		return (rp->r->status);
	}
	wr.q = &e;
	wr.mem = id;
	wr.origin = org;
	wr.n_origin = 3;
	wr.region = reg;
	wr.n_region = 3;
	r.call_case = VCL__REQUEST__CALL_WRITE_IMAGE;
	r.write_image = &wr;
	memset(rp, 0, sizeof *rp);
	if (send_req(c, &r, data, IMG_LEN) != 0)
		return (1);
	return (raw_finish(c, Q));
}

/*
 * Image reads and writes give the runtime host pitches that fit the
 * packed staging, with a runtime that follows the spec (imagespy, as
 * NVIDIA's: a slice pitch for a 2D image is refused, a 1D array's images
 * are laid out by it). A 1D array of 4 images read back was copied over
 * four times its staging (ASan: a heap overflow; else the bytes at the
 * wrong places) and written from as far; a 2D image could be neither.
 */
static void
test_image_pitch(void)
{
	static const uint32_t types[] = { CL_MEM_OBJECT_IMAGE1D_ARRAY,
	    CL_MEM_OBJECT_IMAGE2D };
	static const uint64_t ids[] = { IMG_1DA, IMG_2D };
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	uint8_t		*a, *b;
	size_t		 i;
	cl_int		 st;
	int		 up;

	c.fd = -1;
	a = raw_pattern(IMG_LEN, 13);
	b = raw_pattern(IMG_LEN, 14);
	up = a != NULL && b != NULL && srv_start_preload(&sv,
	    "imgpitch_server_start", getenv("VCL_TEST_IMAGESPY_LIB"),
	    "VCL_TEST_IMAGESPY_LIB", NULL);
	if (!up) {
		free(a);
		free(b);
		return;
	}
	if (!check("imgpitch_setup", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0 && create_queue(&c, Q, CTX) == 0 &&
	    image_new(&c, IMG_1DA, types[0], a) == 0 &&
	    image_new(&c, IMG_2D, types[1], a) == 0 && trip(&c) == 0,
	    "no session, context, queue or images"))
		goto out;
	for (i = 0; i < 2; i++) {
		st = image_rw(&c, ids[i], NULL, &rp);
		if (check("imgpitch_read", st == CL_SUCCESS, "image type %#x: "
		    "read status %d", types[i], st))
			check("imgpitch_read_bytes", rp.bulk_len == IMG_LEN &&
			    memcmp(rp.bulk, a, IMG_LEN) == 0, "image type %#x: "
			    "%llu bytes or other bytes read", types[i],
			    (unsigned long long)rp.bulk_len);
		reply_free(&rp);
		st = image_rw(&c, ids[i], b, &rp);
		check("imgpitch_write", st == CL_SUCCESS, "image type %#x: "
		    "write then finish: %d", types[i], st);
		st = image_rw(&c, ids[i], NULL, &rp);
		if (check("imgpitch_reread", st == CL_SUCCESS, "image type "
		    "%#x: read status %d", types[i], st))
			check("imgpitch_written", rp.bulk_len == IMG_LEN &&
			    memcmp(rp.bulk, b, IMG_LEN) == 0, "image type %#x: "
			    "the write did not land as sent", types[i]);
		reply_free(&rp);
	}
	conn_close(&c);
	check_empty("imgpitch_empty", &sv);
out:
	conn_close(&c);
	free(a);
	free(b);
	srv_stop(&sv, "imgpitch_server_exit");
}

#define CTX2		5	/* the buffer's context, not its queue's */
#define MEM2		6
#define LIM_OBJS	"4"	/* CTX, Q, CTX2, MEM2 */
#define LIM_MARGIN	1024	/* ids past the limit before a close */

/*
 * A chunked read the runtime refuses at once (its queue and its buffer
 * in different contexts: no chunk enqueued) whose event is the id that
 * takes the session past the object limit's margin: the session is
 * closed by the event's id after its chunks failed, and the read's
 * staging goes with it. It stayed charged, and held the session (its
 * staging's reference), for good: a client could leak its read size per
 * connection.
 */
static void
test_rd_refused_dead(void)
{
	static const char *const args[] = { "--read-chunk", "64K",
	    "--max-objects", LIM_OBJS, NULL };
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	 ue = VCL__CREATE_USER_EVENT__INIT;
	struct vcl_buf		 b = { NULL, 0, 0 };
	struct srv		 sv;
	struct conn		 c;
	int			 i, rc = 0;

	c.fd = -1;
	if (!srv_start(&sv, "rdref_server_start", "127.0.0.1:0", args))
		return;
	if (!check("rdref_setup", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0 && create_queue(&c, Q, CTX) == 0 &&
	    create_context(&c, CTX2) == 0 && create_buffer(&c, MEM2, CTX2,
	    BIG, NULL, 0) == 0 && trip(&c) == 0, "no session, contexts, "
	    "queue or buffer"))
		goto out;
	/* Refused ids up to the margin: the next new id closes. */
	ue.context = CTX;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	for (i = 0; i < LIM_MARGIN && rc == 0; i++) {
		ue.id = 1000 + (uint64_t)i;
		r.seq = ++c.seq;
		rc = vcl_buf_pack(&b, &r.base, 0);
	}
	if (!check("rdref_sent", rc == 0 && send_raw(&c, b.data, b.len) ==
	    0 && trip(&c) == 0 && send_read(&c, Q, MEM2, 0, BIG, EV, NULL,
	    0) != 0, "cannot send, or the session closed early"))
		goto out;
	check("rdref_closed", wait_closed(&c), "the session went on past "
	    "the object limit's margin");
	conn_close(&c);
	check_empty("rdref_empty", &sv);
out:
	vcl_buf_free(&b);
	conn_close(&c);
	srv_stop(&sv, "rdref_server_exit");
}

static const struct test tests[] = {
	{ "rd_release",		test_rd_release,	60 },
	{ "rd_userevent",	test_rd_userevent,	60 },
	{ "rd_edges",		test_rd_edges,		60 },
	{ "rd_objlimit",	test_rd_objlimit,	60 },
	{ "rd_refused_dead",	test_rd_refused_dead,	60 },
	{ "wr_mismatch",	test_wr_mismatch,	60 },
	{ "wr_sub",		test_wr_sub,		60 },
	{ "flood",		test_flood,		90 },
	{ "noread",		test_noread,		90 },
	{ "trickle",		test_trickle,		90 },
	{ "noread_info",	test_noread_info,	90 },
	{ "slowloris",		test_slowloris,		60 },
	{ "image_pitch",	test_image_pitch,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof
	    tests[0]));
}
