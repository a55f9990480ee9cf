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
#define HELD_MSG	"sessions still held"

static const char spin_src[] =
	"__kernel void spin(__global uint *o, uint n)\n"
	"{ uint x = 1; for (uint i = 0; i < n; i++) x = x * 1103515245u +"
	" 12345u; o[0] = x; }\n";

/* Program SPIN_PROG built, kernel SPIN_K, its buffer SPIN_MEM: 0 or -1. */
static int
spin_setup(struct conn *c)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	b = VCL__BUILD_PROGRAM__INIT;

	if (create_program(c, SPIN_PROG, CTX, spin_src) != 0 ||
	    create_buffer(c, SPIN_MEM, CTX, 64, NULL, 0) != 0)
		return (-1);
	b.program = SPIN_PROG;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &b;
	if (raw_status(c, &r) != CL_SUCCESS ||
	    raw_kernel(c, SPIN_K, SPIN_PROG, "spin") != CL_SUCCESS)
		return (-1);
	return (0);
}

/* The spin kernel on queue Q, no event: what comes behind it waits. */
static int
send_spin(struct conn *c)
{
	Vcl__KernelArg	 a[2], *ap[2] = { &a[0], &a[1] };
	uint32_t	 n = SPIN_STEPS;

	vcl__kernel_arg__init(&a[0]);
	a[0].index = 0;
	a[0].type = VCL__KERNEL_ARG__TYPE__MEM;
	a[0].has_mem = 1;
	a[0].mem = SPIN_MEM;
	vcl__kernel_arg__init(&a[1]);
	a[1].index = 1;
	a[1].type = VCL__KERNEL_ARG__TYPE__VALUE;
	a[1].has_value = 1;
	a[1].value.data = (uint8_t *)&n;
	a[1].value.len = sizeof n;
	return (raw_ndrange(c, Q, SPIN_K, 1, 0, ap, 2, 0));
}

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
	    spin_setup(&c) == 0 && conn_session(&d, &sv) == 0,
	    "no sessions or objects"))
		goto out;

	/* A write behind the kernel, taken (a stats reply follows it). */
	rc = send_spin(&c) == 0 && send_write(&c, a, SIZE) == 0 &&
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
