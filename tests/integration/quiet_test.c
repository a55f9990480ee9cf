/* quiet_test.c - a multi-node context costs no notification per command. */

/*
 * libvcl (through the ICD loader; VCL_TEST_ICD_DIR names the directory of
 * vcl.icd) in this test's child, over a context of two servers: the client
 * tracks each write's event for coherence, and that event must stay a
 * runtime event on its server. The servers' Notify counter (Stats) tells:
 * kernels the application asked no event for send none; one it asked an
 * event for sends one; a buffer the quiet writes made newest on one node
 * still migrates to the other after them, with the right bytes.
 */

#include "rawproto.h"

#define QUIET_KERNELS	64
#define QUIET_ELEMS	1024

static const char quiet_src[] =
	"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

/* The Notify messages a server has sent so far, or -1. */
static long long
quiet_notifies(const struct srv *sv)
{
	struct conn		c;
	Vcl__StatsResult	st;
	long long		n = -1;

	if (conn_session(&c, sv) != 0)
		return (-1);
	if (stats(&c, &st) == 0 && st.has_notifies)
		n = (long long)st.notifies;
	conn_close(&c);
	return (n);
}

/* Point libvcl at the two servers, before its first call. */
static int
quiet_env(const struct srv *a, const struct srv *b)
{
	const char	*icd = getenv("VCL_TEST_ICD_DIR");
	char		 nodes[64];

	if (icd == NULL || *icd == '\0')
		return (check("quiet_env", 0,
		    "VCL_TEST_ICD_DIR (the directory of vcl.icd) is not set"));
	snprintf(nodes, sizeof nodes, "127.0.0.1:%s,127.0.0.1:%s", a->port,
	    b->port);
	setenv("VCL_NODES", nodes, 1);
	setenv("OCL_ICD_VENDORS", icd, 1);
	setenv("VCL_STRICT", "1", 1);
	return (1);
}

/* The first device of each node: the VCL platform lists them in order. */
static int
quiet_devices(cl_device_id *d0, cl_device_id *d1, cl_uint *ndev,
    cl_device_id *all)
{
	cl_platform_id	p;
	cl_uint		n = 0;
	char		name[64];

	if (clGetPlatformIDs(1, &p, &n) != CL_SUCCESS || n != 1)
		return (check("quiet_platform", 0, "no VCL platform"));
	if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, NULL) !=
	    CL_SUCCESS || strcmp(name, "VCL") != 0)
		return (check("quiet_platform", 0, "platform is not VCL"));
	if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 16, all, ndev) !=
	    CL_SUCCESS || *ndev < 2 || *ndev % 2 != 0)
		return (check("quiet_devices", 0, "want the same devices on "
		    "both nodes, got %u", *ndev));
	*d0 = all[0];
	*d1 = all[*ndev / 2];
	return (1);
}

/*
 * N kernels that write one buffer on the first node, no event asked for:
 * no Notify. One with an event: one. Then a read on the second node: the
 * buffer migrates after the quiet writes and holds N + 1 in every word.
 */
static void
t_quiet_kernels(void)
{
	struct srv		 a, b;
	cl_device_id		 all[16], d0 = NULL, d1 = NULL;
	cl_uint			 ndev = 0;
	cl_context		 ctx = NULL;
	cl_command_queue	 q0 = NULL, q1 = NULL;
	cl_program		 prog = NULL;
	cl_kernel		 k = NULL;
	cl_mem			 buf = NULL;
	cl_event		 ev = NULL;
	cl_int			 err = CL_SUCCESS, *host = NULL;
	const char		*src = quiet_src;
	size_t			 global = QUIET_ELEMS, i;
	long long		 before, after;
	int			 bad = 0;

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (!srv_start(&a, "quiet_server_a", "127.0.0.1:0", NULL) ||
	    !srv_start(&b, "quiet_server_b", "127.0.0.1:0", NULL))
		goto out;
	if (!quiet_env(&a, &b) || !quiet_devices(&d0, &d1, &ndev, all))
		goto out;
	if ((ctx = clCreateContext(NULL, ndev, all, NULL, NULL, &err)) ==
	    NULL || (q0 = clCreateCommandQueue(ctx, d0, 0, &err)) == NULL ||
	    (q1 = clCreateCommandQueue(ctx, d1, 0, &err)) == NULL ||
	    (prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err)) ==
	    NULL || (err = clBuildProgram(prog, 0, NULL, NULL, NULL, NULL)) !=
	    CL_SUCCESS || (k = clCreateKernel(prog, "inc", &err)) == NULL ||
	    (buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, QUIET_ELEMS *
	    sizeof(cl_int), NULL, &err)) == NULL ||
	    (err = clSetKernelArg(k, 0, sizeof buf, &buf)) != CL_SUCCESS) {
		check("quiet_setup", 0, "OpenCL setup failed: %d", (int)err);
		goto out;
	}
	if ((err = clFinish(q0)) != CL_SUCCESS) {
		check("quiet_setup", 0, "clFinish: %d", (int)err);
		goto out;
	}
	before = quiet_notifies(&a);
	for (i = 0; i < QUIET_KERNELS && err == CL_SUCCESS; i++)
		err = clEnqueueNDRangeKernel(q0, k, 1, NULL, &global, NULL, 0,
		    NULL, NULL);
	if (err == CL_SUCCESS)
		err = clFinish(q0);
	after = quiet_notifies(&a);
	check("quiet_kernels_run", err == CL_SUCCESS, "kernels: %d", (int)err);
	check("quiet_no_notify", before >= 0 && after == before,
	    "%d kernels with no event asked for sent %lld notifications",
	    QUIET_KERNELS, after - before);

	/* The counter counts: an event the application asked for is told. */
	err = clEnqueueNDRangeKernel(q0, k, 1, NULL, &global, NULL, 0, NULL,
	    &ev);
	if (err == CL_SUCCESS)
		err = clWaitForEvents(1, &ev);
	after = quiet_notifies(&a);
	check("quiet_asked_notify", err == CL_SUCCESS && after == before + 1,
	    "a kernel with an event: status %d, %lld notifications", (int)err,
	    after - before);

	/* The quiet writes still order the migration to the other node. */
	if ((host = calloc(QUIET_ELEMS, sizeof *host)) == NULL)
		goto out;
	err = clEnqueueReadBuffer(q1, buf, CL_TRUE, 0, QUIET_ELEMS *
	    sizeof *host, host, 0, NULL, NULL);
	for (i = 0; i < QUIET_ELEMS && err == CL_SUCCESS; i++)
		if (host[i] != QUIET_KERNELS + 1)
			bad++;
	check("quiet_migrates_after", err == CL_SUCCESS && bad == 0,
	    "read on the other node: status %d, %d words not %d (word 0: %d)",
	    (int)err, bad, QUIET_KERNELS + 1, host[0]);
out:
	free(host);
	if (ev != NULL)
		clReleaseEvent(ev);
	if (buf != NULL)
		clReleaseMemObject(buf);
	if (k != NULL)
		clReleaseKernel(k);
	if (prog != NULL)
		clReleaseProgram(prog);
	if (q1 != NULL)
		clReleaseCommandQueue(q1);
	if (q0 != NULL)
		clReleaseCommandQueue(q0);
	if (ctx != NULL)
		clReleaseContext(ctx);
	srv_stop(&b, "quiet_server_b_stop");
	srv_stop(&a, "quiet_server_a_stop");
}

/* Ids of the raw session's objects. */
enum {
	R_CTX = 1, R_Q, R_BUF, R_EV_BAD, R_EV_AFTER, R_EV_OK, R_EV_MARK,
};

/* FillBuffer of R_BUF on R_Q (asynchronous), naming event ev, quiet. */
static int
quiet_fill(struct conn *c, uint64_t ev, uint64_t size)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__FillBuffer	m = VCL__FILL_BUFFER__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;
	cl_int		pat = 7;

	q.queue = R_Q;
	q.has_event = 1;
	q.event = ev;
	q.has_quiet = 1;
	q.quiet = 1;
	m.q = &q;
	m.mem = R_BUF;
	m.pattern.data = (uint8_t *)&pat;
	m.pattern.len = sizeof pat;
	m.offset = 0;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
	r.fill_buffer = &m;
	return (send_req(c, &r, NULL, 0));
}

/* Marker on R_Q naming event ev (told), waiting for wait. */
static int
quiet_marker(struct conn *c, uint64_t ev, uint64_t wait)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Marker	m = VCL__MARKER__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;

	q.queue = R_Q;
	q.has_event = 1;
	q.event = ev;
	q.n_wait = 1;
	q.wait = &wait;
	m.q = &q;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &m;
	return (send_req(c, &r, NULL, 0));
}

/* Finish on R_Q: the first asynchronous failure there, or 1. */
static int
quiet_finish(struct conn *c)
{
	return (raw_finish(c, R_Q));
}

/* Poll Stats (bounded) until the server has sent want notifications. */
static long long
quiet_wait_notifies(struct conn *c, long long want)
{
	Vcl__StatsResult	st;
	long long		n = -1;
	int			i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, &st) != 0 || !st.has_notifies)
			return (-1);
		if ((n = (long long)st.notifies) >= want)
			break;
		poll_wait();
	}
	return (n);
}

/*
 * A quiet event's command that fails at enqueue: no Notify, the next
 * Finish reports the failure, and a wait list naming the event fails (its
 * told marker's Notify is the only one). A quiet one that succeeds: a
 * marker behind it completes, one Notify again.
 */
static void
t_quiet_raw(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__StatsResult	 st;
	long long		 before, n;
	int			 fin;

	memset(&sv, 0, sizeof sv);
	c.fd = -1;
	if (!srv_start(&sv, "quiet_raw_server", "127.0.0.1:0", NULL))
		goto out;
	if (conn_session(&c, &sv) != 0 || create_context(&c, R_CTX) != 0 ||
	    create_queue(&c, R_Q, R_CTX) != 0 ||
	    create_buffer(&c, R_BUF, R_CTX, 64, NULL, 0) != 0 ||
	    stats(&c, &st) != 0) {
		check("quiet_raw_setup", 0, "session setup failed");
		goto out;
	}
	check("quiet_raw_counter", st.has_notifies, "Stats has no notifies");
	before = (long long)st.notifies;

	/* 128 bytes into a buffer of 64: CL_INVALID_VALUE at enqueue. */
	fin = quiet_fill(&c, R_EV_BAD, 128) == 0 ? quiet_finish(&c) : 1;
	check("quiet_raw_failed_finish", fin == CL_INVALID_VALUE,
	    "Finish after a failed quiet command: %d", fin);
	n = quiet_wait_notifies(&c, before);
	check("quiet_raw_failed_silent", n == before,
	    "a failed quiet command sent %lld notifications", n - before);
	fin = quiet_marker(&c, R_EV_AFTER, R_EV_BAD) == 0 ?
	    quiet_finish(&c) : 1;
	n = quiet_wait_notifies(&c, before + 1);
	check("quiet_raw_failed_waits", n == before + 1 &&
	    fin == CL_SUCCESS, "a marker behind it: %lld notifications, "
	    "Finish %d", n - before, fin);

	fin = quiet_fill(&c, R_EV_OK, 64) == 0 &&
	    quiet_marker(&c, R_EV_MARK, R_EV_OK) == 0 ? quiet_finish(&c) : 1;
	n = quiet_wait_notifies(&c, before + 2);
	check("quiet_raw_ok", fin == CL_SUCCESS && n == before + 2,
	    "a quiet fill and a told marker: Finish %d, %lld notifications",
	    fin, n - before);
out:
	if (c.fd != -1)
		conn_close(&c);
	srv_stop(&sv, "quiet_raw_stop");
}

static const struct test tests[] = {
	{ "quiet_kernels", t_quiet_kernels, 120 },
	{ "quiet_raw", t_quiet_raw, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
