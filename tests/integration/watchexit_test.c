/* watchexit_test.c - a server exits while a command it cannot watch runs. */

/*
 * usage: watchexit_test VCLSERVER
 *
 * A server started with VCL_TEST_WATCH_FAIL=1 and VCL_TEST_WATCH_NOWAIT=1
 * has the runtime refuse every completion callback and no waiter thread
 * wait for the commands: only the server's sweep of them sees them end.
 * A client leaves a write queued behind a long kernel and goes; the
 * server is stopped (SIGTERM) while the kernel still runs, so its loop
 * ends before the write's copy does. On its way out the server must still
 * see the write end and free what it held (its staging, its session)
 * before it exits: it says so when it exits with sessions still held.
 */

#include "rawproto.h"

#define CTX		1
#define Q		2
#define MEM		3
#define SPIN_PROG	4
#define SPIN_K		5
#define SPIN_MEM	6
#define SIZE		(768u << 10)	/* under the pool's 1 MiB: malloc'd */
#define SPIN_STEPS	(1u << 30)	/* a kernel of about a second */
/* The kernel that holds its queue (rawproto.c). */
#define SPIN_SETUP(c)	raw_spin_setup((c), CTX, SPIN_PROG, SPIN_K, SPIN_MEM)
#define SPIN_SEND(c)	raw_spin_send((c), Q, SPIN_K, SPIN_MEM, SPIN_STEPS)
#define HELD_MSG	"sessions still held"

/* WriteBuffer{Q, MEM, 0, size}, no event, of data, in band. */
static int
send_write(struct conn *c, const uint8_t *data, uint64_t size)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	m = VCL__WRITE_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;

	e.queue = Q;
	m.q = &e;
	m.mem = MEM;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &m;
	return (send_req(c, &r, data, size));
}

/*
 * Poll d's stats until the server counts only d's session: then the
 * other one is closed. Returns 0 with *st, or -1.
 */
static int
wait_alone(struct conn *d, Vcl__StatsResult *st)
{
	int	i;

	for (i = 0; i < 3000; i++) {
		if (stats(d, st) != 0)
			return (-1);
		if (st->sessions == 1)
			return (0);
		poll_wait();
	}
	return (-1);
}

/* The write left behind the kernel is freed before the server exits. */
static void
test_exit(void)
{
	static const char *const args[] = { "--max-pinned", "0",
		"--write-chunk", "0", NULL };
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint8_t			*a = NULL;
	int			 rc, stopped = 0;

	c.fd = d.fd = -1;
	setenv("VCL_TEST_WATCH_FAIL", "1", 1);
	setenv("VCL_TEST_WATCH_NOWAIT", "1", 1);
	rc = srv_start(&sv, "server_start", "127.0.0.1:0", args);
	unsetenv("VCL_TEST_WATCH_FAIL");
	unsetenv("VCL_TEST_WATCH_NOWAIT");
	if (!rc)
		return;
	if ((a = calloc(1, SIZE)) == NULL || !check("setup",
	    conn_session(&c, &sv) == 0 && create_context(&c, CTX) == 0 &&
	    create_queue(&c, Q, CTX) == 0 &&
	    create_buffer(&c, MEM, CTX, SIZE, NULL, 0) == 0 &&
	    SPIN_SETUP(&c) == 0 && conn_session(&d, &sv) == 0,
	    "no sessions or objects"))
		goto out;

	/* A write behind the kernel, taken (a stats reply follows it). */
	rc = SPIN_SEND(&c) == 0 && send_write(&c, a, SIZE) == 0 &&
	    stats(&c, &st) == 0;
	if (!check("write_sent", rc, "kernel, write or stats failed"))
		goto out;
	conn_close(&c);
	rc = wait_alone(&d, &st);
	if (!check("client_gone", rc == 0, "its session is still counted"))
		goto out;
	/* Its staging still held: the kernel runs, the write waits. */
	if (!check("write_held", st.bytes >= SIZE, "the write's staging went "
	    "before the server was stopped (%llu bytes held): the kernel was "
	    "too short to test", (unsigned long long)st.bytes))
		goto out;
	conn_close(&d);
	srv_stop(&sv, "server_exit");
	stopped = 1;
	check("fault_fired", srv_stderr_has(&sv, "cannot be watched"),
	    "no command was refused its callback");
	check("nothing_held", !srv_stderr_has(&sv, HELD_MSG), "the server "
	    "exited with the write's session still held; see %s/stderr",
	    sv.dir);
out:
	conn_close(&c);
	conn_close(&d);
	free(a);
	if (!stopped)
		srv_stop(&sv, "server_exit");
}

static const struct test tests[] = {
	{ "exit",	test_exit,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
