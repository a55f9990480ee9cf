/* loopwait_test.c - the server's loop never waits on a device, out of memory too. */

/*
 * usage: loopwait_test VCLSERVER
 *
 * vclserver runs every session on one loop thread: were it to wait for a
 * device, every session would wait with it, for ever behind a kernel that
 * never ends. Its failure paths once did, where memory to hand the wait
 * off was lacking: a client gone in the middle of a chunked write's bulk,
 * a chunked write whose record could not be had when it ran, a chunked
 * read whose chunk's record could not be had once the runtime took the
 * chunk, a failed command the runtime took whose staging no hold record
 * could take (its session alive, or closed in the middle of the enqueue).
 * Here each path runs behind long kernels on its queue, with
 * VCL_TEST_CMD_NOMEM=1 (the server refuses those records as when out of
 * memory), and the loop is seen answering while the kernels still run:
 * a dead session's staging still charged (Stats bytes, from a second
 * session), or the kernels' event not complete yet (GetInfo). Once the
 * kernels are done nothing stays charged; a server stopped before that
 * exits cleanly, leaking nothing.
 */

#include "rawproto.h"

#define CHUNK		(64u << 10)
#define WSIZE		(8u * CHUNK + 77u)	/* malloc'd staging (< 1 MiB) */
#define RSIZE		(4u * CHUNK + 5u)	/* a read of 5 chunks */
#define CTX		1
#define Q		2
#define MEM		3
#define SPIN_PROG	5
#define SPIN_K		6
#define SPIN_MEM	7
#define SPIN_EV		8
#define SPIN_STEPS	(1u << 27)	/* a kernel of 0.1 to 1 s, more
					   on a loaded host */
#define SPIN_POLLS	12000		/* waits for the kernels: 120 s */
#define NSPIN		2		/* kernels ahead of the command */

static const char *const lw_args[] = { "--write-chunk", "64K",
	"--read-chunk", "64K", "--max-pinned", "0", NULL };

/*
 * Start a server refusing failure paths' records (VCL_TEST_CMD_NOMEM);
 * leaks: with leak detection, where it has LeakSanitizer.
 */
static int
lw_start(struct srv *sv, const char *name, int leaks)
{
	const char	*old;
	char		*saved = NULL;
	int		 ok;

	if (leaks && (old = getenv("ASAN_OPTIONS")) != NULL)
		saved = strdup(old);
	if (leaks)
		setenv("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1", 1);
	setenv("VCL_TEST_CMD_NOMEM", "1", 1);
	ok = srv_start(sv, name, "127.0.0.1:0", lw_args);
	unsetenv("VCL_TEST_CMD_NOMEM");
	if (saved != NULL)
		setenv("ASAN_OPTIONS", saved, 1);
	else if (leaks)
		unsetenv("ASAN_OPTIONS");
	free(saved);
	return (ok);
}

/* Session with context CTX, queue Q, buffer MEM of size, the spin kernel. */
static int
setup(struct conn *c, const struct srv *sv, uint64_t size)
{
	if (conn_session(c, sv) != 0)
		return (-1);
	if (create_context(c, CTX) != 0 || create_queue(c, Q, CTX) != 0 ||
	    create_buffer(c, MEM, CTX, size, NULL, 0) != 0 ||
	    raw_spin_setup(c, CTX, SPIN_PROG, SPIN_K, SPIN_MEM) != 0)
		return (-1);
	return (0);
}

/* NSPIN spin kernels on Q, the last with event ev (0: none). 0 or -1. */
static int
spin(struct conn *c, uint64_t ev)
{
	int	i;

	for (i = 0; i < NSPIN - 1; i++)
		if (raw_spin_send(c, Q, SPIN_K, SPIN_MEM, SPIN_STEPS) != 0)
			return (-1);
	return (raw_spin_send_ev(c, Q, SPIN_K, SPIN_MEM, SPIN_STEPS, ev));
}

/*
 * Send WriteBuffer{Q, MEM, 0, size} announcing size bulk bytes, and the
 * first sent of them. 0 or -1.
 */
static int
send_write(struct conn *c, uint64_t size, const uint8_t *data, uint64_t sent)
{
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = Q;
	return (raw_write_part(c, &e, MEM, 0, size, size, data, sent) != 0 ?
	    0 : -1);
}

/* Poll Stats on d (bounded) until writes_chunked reaches want. 0 or -1. */
static int
wait_chunked(struct conn *d, uint64_t want)
{
	Vcl__StatsResult	st;
	int			i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(d, &st) != 0)
			return (-1);
		if (st.has_writes_chunked && st.writes_chunked >= want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/*
 * Read from c until the reply to seq came (seq 0: none awaited) and event
 * ev was notified, each message awaited SPIN_POLLS polls at most (the
 * kernels' end, on a loaded host). 0 with the reply's status and bytes,
 * the event's status, or -1.
 */
static int
wait_reply_notify(struct conn *c, uint64_t seq, uint64_t ev, cl_int *rst,
    uint64_t *rlen, cl_int *est)
{
	struct pollfd	pfd;
	struct reply	rp;
	size_t		i;
	int		n, k, got = seq == 0, seen = 0;

	for (n = 0; (!got || !seen) && n < 2000; n++) {
		pfd.fd = c->fd;
		pfd.events = POLLIN;
		for (k = 0; k < SPIN_POLLS && poll(&pfd, 1, POLL_MS) == 0; k++)
			;
		if (k == SPIN_POLLS || recv_msg(c, &rp) != 0)
			return (-1);
		if (seq != 0 && rp.r != NULL && rp.r->seq == seq) {
			*rst = rp.r->status;
			*rlen = rp.bulk_len;
			got = 1;
		}
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev) {
				*est = rp.tc->notify[i]->status;
				seen = 1;
			}
		reply_free(&rp);
	}
	return (got && seen ? 0 : -1);
}

/*
 * A chunked write's session ends (the client gone mid-bulk: vanish, or
 * the server out of memory when the write runs: whole) with its chunks
 * queued behind the kernels: a second session's round trips are answered
 * while they still run, the staging held until the copies are done, and
 * then nothing stays charged.
 */
static void
write_case(const char *name, int whole, int stop)
{
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st;
	uint8_t			*data;
	char			 what[64];
	size_t			 i;
	int			 rc;

	c.fd = d.fd = -1;
	if ((data = malloc(WSIZE)) == NULL)
		return;
	for (i = 0; i < WSIZE; i++)
		data[i] = (uint8_t)(i ^ (i >> 9));
	snprintf(what, sizeof what, "%s_server_start", name);
	if (!lw_start(&sv, what, stop)) {
		free(data);
		return;
	}
	snprintf(what, sizeof what, "%s_setup", name);
	if (!check(what, setup(&c, &sv, WSIZE) == 0 &&
	    conn_session(&d, &sv) == 0, "no sessions, context, queue, buffer "
	    "or kernel"))
		goto out;
	rc = spin(&c, 0);
	if (rc == 0)
		rc = send_write(&c, WSIZE, data, whole ? WSIZE :
		    WSIZE - CHUNK / 2);
	snprintf(what, sizeof what, "%s_chunked", name);
	if (!check(what, rc == 0 && wait_chunked(&d, 1) == 0, "no chunk "
	    "enqueued as the bulk came"))
		goto out;
	if (!whole)
		conn_close(&c);
	snprintf(what, sizeof what, "%s_loop_free", name);
	if (!check(what, wait_gone(&d, &st) == 0, "no Stats reply, or the "
	    "session's objects stayed (%llu)",
	    (unsigned long long)st.objects))
		goto out;
	/* Answered while the copies wait behind the kernels: still held. */
	check(what, st.bytes > 0, "the loop waited for the kernels: nothing "
	    "was charged any more when it answered");
	/* SIGTERM now: what is held goes at exit (LeakSanitizer). */
	if (stop)
		goto out;
	snprintf(what, sizeof what, "%s_round_trip", name);
	check(what, get_info_status(&d, VCL__GET_INFO__WHAT__DEVICE, 0,
	    CL_DEVICE_MAX_COMPUTE_UNITS) == 0, "no reply to GetInfo");
	snprintf(what, sizeof what, "%s_freed", name);
	check(what, wait_empty_polls(&d, &st, SPIN_POLLS) == 0,
	    "the server still holds %llu "
	    "objects, %llu bytes", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&d);
	free(data);
	snprintf(what, sizeof what, "%s_server_exit", name);
	srv_stop(&sv, what);
}

/* The client goes in the middle of a chunked write's bulk. */
static void
test_vanish(void)
{
	write_case("vanish", 0, 0);
}

/* A chunked write's record cannot be had when it runs: session closed. */
static void
test_whole(void)
{
	write_case("whole", 1, 0);
}

/*
 * The client goes mid-bulk and the server is stopped (SIGTERM) while the
 * copies still wait: it exits cleanly, leaking nothing.
 */
static void
test_exit(void)
{
	write_case("exit", 0, 1);
}

/*
 * A chunked read behind the kernels whose chunk's record cannot be had:
 * it fails, answered while the kernels still run (their event not
 * complete), a second session's round trips too; once they are done
 * nothing stays charged.
 */
static void
test_read(void)
{
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st;
	struct reply		 rp;
	cl_int			 est = CL_COMPLETE;
	int			 rc;

	c.fd = d.fd = -1;
	if (!lw_start(&sv, "read_server_start", 0))
		return;
	if (!check("read_setup", setup(&c, &sv, RSIZE) == 0 &&
	    conn_session(&d, &sv) == 0, "no sessions, context, queue, buffer "
	    "or kernel"))
		goto out;
	rc = spin(&c, SPIN_EV);
	if (!check("read_sent", rc == 0 && read_buffer(&c, Q, MEM, RSIZE,
	    &rp) == 0, "no reply to the read"))
		goto out;
	check("read_failed", rp.r->status == CL_OUT_OF_HOST_MEMORY &&
	    rp.bulk_len == 0, "read: status %d, %llu bytes, want %d and none",
	    (int)rp.r->status, (unsigned long long)rp.bulk_len,
	    (int)CL_OUT_OF_HOST_MEMORY);
	reply_free(&rp);
	check("read_loop_free", raw_event_status(&c, SPIN_EV, &est) == 0 &&
	    est > CL_COMPLETE, "the loop waited for the kernels: their "
	    "event's status %d when the read was answered", (int)est);
	check("read_round_trip", stats(&d, &st) == 0, "no Stats reply");
	check("read_kernels_done", wait_reply_notify(&c, 0, SPIN_EV, NULL,
	    NULL, &est) == 0 && est == CL_COMPLETE, "the kernels' event: %d",
	    (int)est);
	conn_close(&c);
	check("read_freed", wait_empty_polls(&d, &st, SPIN_POLLS) == 0,
	    "the server still holds "
	    "%llu objects, %llu bytes", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&d);
	srv_stop(&sv, "read_server_exit");
}

#define OSIZE		4096		/* a read of one piece */
#define OEV		9		/* its event: over the object limit */
#define MAX_OBJECTS	7		/* the session's objects, SPIN_EV too */
#define MARGIN		1024		/* handles past it (vcl_session.c) */
#define FILL0		100		/* buffers up to the margin */

/* Send ReadBuffer{Q, MEM, 0, OSIZE, event OEV}; its seq in *seq. 0 or -1. */
static int
send_read_ev(struct conn *c, uint64_t *seq)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = Q;
	e.has_event = 1;
	e.event = OEV;
	m.q = &e;
	m.mem = MEM;
	m.size = OSIZE;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	if (send_req(c, &r, NULL, 0) != 0)
		return (-1);
	*seq = c->seq;
	return (0);
}

/*
 * A read the runtime took behind the kernels, its event over the object
 * limit (the session lives): it fails, and no record can take its
 * staging. The loop answers the kernels' status (not complete) and a
 * second session meanwhile; the read's error comes once its copy is
 * done, and nothing stays charged.
 */
static void
test_orphan(void)
{
	static const char *const args[] = { "--max-objects", "7",
		"--read-chunk", "0", NULL };
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st;
	cl_int			 est = CL_COMPLETE, rst = CL_SUCCESS;
	uint64_t		 seq = 0, len = 1;

	c.fd = d.fd = -1;
	setenv("VCL_TEST_CMD_NOMEM", "1", 1);
	if (!srv_start(&sv, "orphan_server_start", "127.0.0.1:0", args)) {
		unsetenv("VCL_TEST_CMD_NOMEM");
		return;
	}
	unsetenv("VCL_TEST_CMD_NOMEM");
	if (!check("orphan_setup", setup(&c, &sv, OSIZE) == 0 &&
	    conn_session(&d, &sv) == 0, "no sessions, context, queue, buffer "
	    "or kernel"))
		goto out;
	if (!check("orphan_sent", spin(&c, SPIN_EV) == 0 &&
	    send_read_ev(&c, &seq) == 0, "cannot send the kernels or the "
	    "read"))
		goto out;
	check("orphan_loop_free", raw_event_status(&c, SPIN_EV, &est) == 0 &&
	    est > CL_COMPLETE, "the loop waited for the kernels (or answered "
	    "the read first): their event's status %d", (int)est);
	check("orphan_round_trip", stats(&d, &st) == 0, "no Stats reply");
	if (check("orphan_answered", wait_reply_notify(&c, seq, SPIN_EV, &rst,
	    &len, &est) == 0, "no reply to the read, or no Notify of the "
	    "kernels"))
		check("orphan_failed", rst != CL_SUCCESS && len == 0 &&
		    est == CL_COMPLETE, "read: status %d, %llu bytes; kernels "
		    "%d", (int)rst, (unsigned long long)len, (int)est);
	conn_close(&c);
	check("orphan_freed", wait_empty_polls(&d, &st, SPIN_POLLS) == 0,
	    "the server still "
	    "holds %llu objects, %llu bytes", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&d);
	srv_stop(&sv, "orphan_server_exit");
}

/*
 * The same read, its event far over the object limit: the session closes
 * in the middle of the enqueue. Its staging stays held (Stats bytes) while
 * the loop answers a second session, and goes once the copy is done.
 */
static void
test_orphan_dead(void)
{
	static const char *const args[] = { "--max-objects", "7",
		"--read-chunk", "0", NULL };
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st;
	uint64_t		 i, seq;
	int			 ok;

	c.fd = d.fd = -1;
	setenv("VCL_TEST_CMD_NOMEM", "1", 1);
	if (!srv_start(&sv, "dead_server_start", "127.0.0.1:0", args)) {
		unsetenv("VCL_TEST_CMD_NOMEM");
		return;
	}
	unsetenv("VCL_TEST_CMD_NOMEM");
	ok = setup(&c, &sv, OSIZE) == 0 && conn_session(&d, &sv) == 0 &&
	    spin(&c, SPIN_EV) == 0;
	/* Handles up to the margin, all of them refused. */
	for (i = 0; ok && i < MAX_OBJECTS + MARGIN - MAX_OBJECTS; i++)
		ok = create_buffer(&c, FILL0 + i, CTX, 64, NULL, 0) == 0;
	if (!check("dead_setup", ok, "no sessions, context, queue, buffer, "
	    "kernel or handles"))
		goto out;
	check("dead_closed", send_read_ev(&c, &seq) == 0 &&
	    wait_closed(&c) == 1, "the session was not closed by an event "
	    "id past the margin");
	if (check("dead_loop_free", wait_gone(&d, &st) == 0, "no Stats "
	    "reply, or the session's objects stayed (%llu)",
	    (unsigned long long)st.objects))
		check("dead_loop_free", st.bytes > 0, "the loop waited for the "
		    "kernels: nothing was charged any more when it answered");
	check("dead_freed", wait_empty_polls(&d, &st, SPIN_POLLS) == 0,
	    "the server still holds "
	    "%llu objects, %llu bytes", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&d);
	srv_stop(&sv, "dead_server_exit");
}

static const struct test tests[] = {
	{ "vanish",	test_vanish,	90 },
	{ "whole",	test_whole,	90 },
	{ "exit",	test_exit,	90 },
	{ "read",	test_read,	90 },
	{ "orphan",	test_orphan,	90 },
	{ "dead",	test_orphan_dead, 90 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
