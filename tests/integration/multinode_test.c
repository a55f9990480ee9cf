/* multinode_test.c - one context over the devices of several vclservers. */

/*
 * A plain OpenCL host program (plus CL/vcl_ext.h to tell which node a
 * device lives on). It expects the VCL platform with devices on at least
 * two nodes and uses the first device of each of the first two or three
 * nodes (CL_DEVICE_VCL_NODE_INDEX order): A, B and, for node_death, C.
 *
 * Every test runs in a child process of its own, with its own platform
 * initialisation and its own multi-device context, under alarm(): a hang
 * fails that test only and the others still run. The child prints why a
 * check failed; the parent prints one PASS, FAIL or SKIP line per test,
 * then "N passed, N failed" (", N skipped" when some were).
 *
 *	migrate		 a buffer from host data: +1 on A, *2 on B, read on A
 *			 and on B; and the same with no events at all (VCL's
 *			 own coherence orders the commands)
 *	no_client_bytes	 32 MiB written on A, used on B: the client's bulk
 *			 byte counters of A and B grow by less than 1 MiB;
 *			 then 2 x 32 MiB crossing A->B and B->A at once
 *	copy_across	 clEnqueueCopyBuffer from a buffer last written on
 *			 the other node, with offsets, both ways
 *	wait_across	 wait lists across nodes: a copy and a marker on B
 *			 wait for a slow kernel on A (gated by a user event:
 *			 neither runs before it is set; the copy holds the
 *			 kernel's result); a user event gates both
 *			 nodes; a failed event fails a command on the other,
 *			 one enqueued before the failure and one after it
 *	fill_and_map	 fill on A, map for reading on B; map for writing on
 *			 B, read on A
 *	image_across	 an image written by a kernel on A is read by a
 *			 kernel (with a sampler) on B, its bytes never
 *			 through the client; written from the host on B,
 *			 read on A
 *	image_buffer_across a 1D buffer image and its buffer, each
 *			 written on one node (kernel or host), the other
 *			 read on the other node
 *	compile_link	 clCompileProgram with an in-memory header and
 *			 clLinkProgram over both nodes, run on both; the
 *			 linked program's binaries (one per node) back
 *	binary_across	 the binaries of a program from source, one per
 *			 node, make a program that runs on both
 *	node_death	 (netns.sh with 3 nodes only, else SKIP) SIGKILL C's
 *			 server while C runs a long kernel and A waits on it:
 *			 C's events and commands fail, A's waiter fails, A
 *			 and B go on; a buffer whose newest bytes were also
 *			 on A stays usable; a wait on a C event that had
 *			 completed before the loss is no failure
 *
 * Usage: multinode_test [filter]
 *	filter			run only tests whose name contains it
 *	VCL_TEST_TIMEOUT	seconds one test may run (default 60); a
 *				wait that must end is declared hung after a
 *				sixth of it
 *	VCL_NETNS_PIDS		server pids in node order (netns.sh)
 *	VCL_NETNS_KILLED	file listing the pids killed on purpose
 */

#include <CL/cl.h>
#include <CL/vcl_ext.h>

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXN		3	/* nodes a test uses at most */
#define SKIP_EXIT	77	/* a child that skipped its test */
#define NITEMS(a)	(sizeof (a) / sizeof (a)[0])
#define MIB		(1024 * 1024)

/* What a test gets: one device per node, a context over them, queues. */
struct env {
	cl_platform_id		 plat;
	int			 n;		/* nodes in the context */
	cl_device_id		 dev[MAXN];
	cl_uint			 node[MAXN];	/* CL_DEVICE_VCL_NODE_INDEX */
	char			 name[MAXN][48];
	cl_context		 ctx;
	cl_command_queue	 q[MAXN];
	cl_program		 prog;
	cl_kernel		 add1, mul2, iota, spin;
};

struct test {
	const char	*name;
	int		 nodes;		/* nodes it needs */
	void		(*fn)(struct env *);
	unsigned	 timeout;	/* seconds; 0: the default */
};

static int		 failures;	/* failed checks in this child */
static const char	*current = "setup";

static const char source[] =
	"__kernel void add1(__global int *a)\n"
	"{ size_t i = get_global_id(0); a[i] += 1; }\n"
	"__kernel void mul2(__global int *a)\n"
	"{ size_t i = get_global_id(0); a[i] *= 2; }\n"
	"__kernel void iota(__global int *a, int base, int step)\n"
	"{ size_t i = get_global_id(0); a[i] = base + (int)i * step; }\n"
	"__kernel void spin(__global uint *a, ulong n)\n"
	"{\n"
	"	uint x = a[0];\n"
	"	for (ulong k = 0; k < n; k++)\n"
	"		x = x * 1103515245u + 12345u;\n"
	"	a[0] = x;\n"
	"}\n";

static const char *
cl_strerror(cl_int err)
{
	static char	 unknown[32];

	switch (err) {
#define E(x) case x: return (#x)
	E(CL_SUCCESS);
	E(CL_DEVICE_NOT_FOUND);
	E(CL_DEVICE_NOT_AVAILABLE);
	E(CL_MEM_OBJECT_ALLOCATION_FAILURE);
	E(CL_OUT_OF_RESOURCES);
	E(CL_OUT_OF_HOST_MEMORY);
	E(CL_MEM_COPY_OVERLAP);
	E(CL_BUILD_PROGRAM_FAILURE);
	E(CL_MAP_FAILURE);
	E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
	E(CL_INVALID_VALUE);
	E(CL_INVALID_DEVICE);
	E(CL_INVALID_CONTEXT);
	E(CL_INVALID_COMMAND_QUEUE);
	E(CL_INVALID_MEM_OBJECT);
	E(CL_INVALID_PROGRAM_EXECUTABLE);
	E(CL_INVALID_KERNEL);
	E(CL_INVALID_KERNEL_ARGS);
	E(CL_INVALID_EVENT_WAIT_LIST);
	E(CL_INVALID_EVENT);
	E(CL_INVALID_OPERATION);
	E(CL_INVALID_BUFFER_SIZE);
#undef E
	default:
		snprintf(unknown, sizeof unknown, "error %d", err);
		return (unknown);
	}
}

static int	check(int, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/* One check: on failure say where and why. Returns ok. */
static int
check(int ok, int line, const char *fmt, ...)
{
	va_list	ap;

	if (ok)
		return (1);
	printf("  %s:%d: ", current, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures++;
	return (0);
}

#define CHECK(cond, ...) check((cond) != 0, __LINE__, __VA_ARGS__)
/*
 * A call that must succeed. The call and its line are recorded first, so
 * that the watchdog can say which call hung.
 */
#define OK(call) (STEP(#call), ok_call((call), #call, __LINE__))
#define STEP(what) (wd_step = (what), wd_line = __LINE__)

static const char *volatile	wd_step = "start";
static volatile int		wd_line;

static int
ok_call(cl_int err, const char *what, int line)
{
	return (check(err == CL_SUCCESS, line, "%s: %s", what,
	    cl_strerror(err)));
}

static void
note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An informational line (no verdict). */
static void
note(const char *fmt, ...)
{
	va_list	ap;

	printf("  %s: ", current);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

static void
sleep_ms(unsigned ms)
{
	struct timespec	ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* An event's execution status, or a sentinel when the query fails. */
static cl_int
ev_status(cl_event ev)
{
	cl_int	st = 99;

	if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st,
	    &st, NULL) != CL_SUCCESS)
		return (99);
	return (st);
}

/* Poll an event until final or secs pass; its last status. */
static cl_int
poll_final(cl_event ev, double secs)
{
	double	t0 = now();
	cl_int	st;

	while ((st = ev_status(ev)) > CL_COMPLETE && now() - t0 < secs)
		sleep_ms(5);
	return (st);
}

static double	hang_s = 10;	/* a wait longer than this hangs */

/*
 * Wait (polling, bounded) for an event that must become final. If it does
 * not, report the hang and end this test's child at once: the queue behind
 * it never drains, so nothing after it (releases included) can finish.
 */
static cl_int
final_or_exit(cl_event ev, const char *what, int line)
{
	cl_int	st;

	STEP(what);
	wd_line = line;
	st = poll_final(ev, hang_s);
	if (!check(st <= CL_COMPLETE, line, "%s: still status %d after %.0f "
	    "s (hangs)", what, st, hang_s)) {
		fflush(stdout);
		_exit(1);
	}
	return (st);
}

static void
release_ev(cl_event *ev)
{
	if (*ev != NULL)
		clReleaseEvent(*ev);
	*ev = NULL;
}

static void
release_mem(cl_mem *m)
{
	if (*m != NULL)
		clReleaseMemObject(*m);
	*m = NULL;
}

static cl_ulong
node_bytes(cl_device_id d, cl_device_info what)
{
	cl_ulong	v = 0;

	OK(clGetDeviceInfo(d, what, sizeof v, &v, NULL));
	return (v);
}

/*
 * Find the VCL platform and the first device of each of the first `want`
 * nodes. Returns the number of nodes found (up to want), or -1.
 */
static int
find_devices(struct env *e, int want, int verbose)
{
	cl_platform_id	 plats[16];
	cl_device_id	 devs[64];
	cl_uint		 np = 0, nd = 0, i, j, idx;
	char		 name[256];
	int		 k, found = 0;
	cl_uint		 best[MAXN];

	if (!OK(clGetPlatformIDs(NITEMS(plats), plats, &np)))
		return (-1);
	for (i = 0; i < np && i < NITEMS(plats); i++) {
		if (clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name,
		    name, NULL) == CL_SUCCESS && strcmp(name, "VCL") == 0)
			break;
	}
	if (!CHECK(i < np && i < NITEMS(plats), "no platform named VCL"))
		return (-1);
	e->plat = plats[i];
	if (!OK(clGetDeviceIDs(e->plat, CL_DEVICE_TYPE_ALL, NITEMS(devs), devs,
	    &nd)))
		return (-1);
	if (nd > NITEMS(devs))
		nd = NITEMS(devs);
	/* The smallest `want` node indices, each with its first device. */
	for (k = 0; k < want; k++) {
		best[k] = (cl_uint)-1;
		e->dev[k] = NULL;
		for (j = 0; j < nd; j++) {
			if (!OK(clGetDeviceInfo(devs[j],
			    CL_DEVICE_VCL_NODE_INDEX, sizeof idx, &idx, NULL)))
				return (-1);
			if ((k > 0 && idx <= best[k - 1]) || idx >= best[k])
				continue;
			best[k] = idx;
			e->dev[k] = devs[j];	/* devices come in node order */
		}
		if (e->dev[k] == NULL)
			break;
		e->node[k] = best[k];
		name[0] = '\0';
		clGetDeviceInfo(e->dev[k], CL_DEVICE_VCL_NODE_NAME, sizeof name,
		    name, NULL);
		/* Short names keep the messages short; the lines say more. */
		memcpy(e->name[k], name, sizeof e->name[k] - 1);
		e->name[k][sizeof e->name[k] - 1] = '\0';
		if (verbose) {
			char	addr[256] = "", dname[256] = "";

			clGetDeviceInfo(e->dev[k], CL_DEVICE_VCL_NODE_ADDRESS,
			    sizeof addr, addr, NULL);
			clGetDeviceInfo(e->dev[k], CL_DEVICE_NAME,
			    sizeof dname, dname, NULL);
			printf("# node %u: %s (%s): %s\n", best[k], name,
			    addr, dname);
		}
		found++;
	}
	if (verbose)
		printf("# %u VCL device(s)\n", nd);
	return (found);
}

static cl_kernel
mk_kernel(struct env *e, const char *name)
{
	cl_kernel	k;
	cl_int		err;

	k = clCreateKernel(e->prog, name, &err);
	OK(err);
	return (k);
}

/* A context over the first device of each of the first n nodes. */
static int
env_open(struct env *e, int n)
{
	cl_int	err;
	int	i;

	memset(e, 0, sizeof *e);
	if (find_devices(e, n, 0) < n) {
		CHECK(0, "fewer than %d nodes with devices", n);
		return (0);
	}
	e->n = n;
	for (i = 1; i < n; i++)
		if (!CHECK(e->node[i] != e->node[0], "devices %d and 0 on the "
		    "same node %u", i, e->node[0]))
			return (0);
	e->ctx = clCreateContext(NULL, (cl_uint)n, e->dev, NULL, NULL, &err);
	if (!OK(err))
		return (0);
	for (i = 0; i < n; i++) {
		e->q[i] = clCreateCommandQueueWithProperties(e->ctx, e->dev[i],
		    NULL, &err);
		if (!OK(err))
			return (0);
	}
	e->prog = clCreateProgramWithSource(e->ctx, 1,
	    (const char *[]){ source }, NULL, &err);
	if (!OK(err))
		return (0);
	if (!OK(clBuildProgram(e->prog, 0, NULL, NULL, NULL, NULL)))
		return (0);
	e->add1 = mk_kernel(e, "add1");
	e->mul2 = mk_kernel(e, "mul2");
	e->iota = mk_kernel(e, "iota");
	e->spin = mk_kernel(e, "spin");
	return (failures == 0);
}

/* Release everything (finishing each queue first; bounded by alarm). */
static void
env_close(struct env *e)
{
	cl_kernel	*ks[] = { &e->add1, &e->mul2, &e->iota, &e->spin };
	size_t		 i;
	int		 j;

	for (j = 0; j < e->n; j++)
		if (e->q[j] != NULL) {
			STEP("env_close: clFinish");
			clFinish(e->q[j]);
		}
	for (i = 0; i < NITEMS(ks); i++)
		if (*ks[i] != NULL)
			clReleaseKernel(*ks[i]);
	if (e->prog != NULL)
		clReleaseProgram(e->prog);
	for (j = 0; j < e->n; j++)
		if (e->q[j] != NULL)
			clReleaseCommandQueue(e->q[j]);
	if (e->ctx != NULL)
		clReleaseContext(e->ctx);
}

static cl_mem
mk_buf(struct env *e, size_t size, cl_mem_flags flags, void *host)
{
	cl_mem	m;
	cl_int	err;

	m = clCreateBuffer(e->ctx, flags, size, host, &err);
	OK(err);
	return (m);
}

/* Enqueue a one-buffer kernel (add1, mul2) over n items on node qi. */
static cl_int
run1(struct env *e, cl_kernel k, int qi, cl_mem m, size_t n, cl_uint nw,
    const cl_event *w, cl_event *ev)
{
	cl_int	err;

	if ((err = clSetKernelArg(k, 0, sizeof m, &m)) != CL_SUCCESS)
		return (err);
	return (clEnqueueNDRangeKernel(e->q[qi], k, 1, NULL, &n, NULL, nw, w,
	    ev));
}

/* a[i] = base + i * step over n items on node qi. */
static cl_int
run_iota(struct env *e, int qi, cl_mem m, size_t n, int base, int step,
    cl_uint nw, const cl_event *w, cl_event *ev)
{
	cl_int	err;

	if ((err = clSetKernelArg(e->iota, 0, sizeof m, &m)) != CL_SUCCESS ||
	    (err = clSetKernelArg(e->iota, 1, sizeof base, &base)) !=
	    CL_SUCCESS ||
	    (err = clSetKernelArg(e->iota, 2, sizeof step, &step)) !=
	    CL_SUCCESS)
		return (err);
	return (clEnqueueNDRangeKernel(e->q[qi], e->iota, 1, NULL, &n, NULL,
	    nw, w, ev));
}

/* One work-item spinning `iters` times on a[0], on node qi. */
static cl_int
run_spin(struct env *e, int qi, cl_mem m, cl_ulong iters, cl_uint nw,
    const cl_event *w, cl_event *ev)
{
	size_t	one = 1;
	cl_int	err;

	if ((err = clSetKernelArg(e->spin, 0, sizeof m, &m)) != CL_SUCCESS ||
	    (err = clSetKernelArg(e->spin, 1, sizeof iters, &iters)) !=
	    CL_SUCCESS)
		return (err);
	return (clEnqueueNDRangeKernel(e->q[qi], e->spin, 1, NULL, &one, &one,
	    nw, w, ev));
}

/*
 * Spin iterations that take about ms milliseconds on node qi (measured
 * there with buffer m, which the spin kernel owns).
 */
static cl_ulong
calibrate(struct env *e, int qi, cl_mem m, unsigned ms)
{
	cl_ulong	iters = 1u << 20, want;
	cl_event	ev = NULL;
	double		t, dt = 0;

	/* The first launch builds the kernel for the device: not timed. */
	if (!OK(run_spin(e, qi, m, 1, 0, NULL, &ev)) ||
	    !OK(clWaitForEvents(1, &ev))) {
		release_ev(&ev);
		return (iters);
	}
	release_ev(&ev);
	for (;;) {
		t = now();
		if (!OK(run_spin(e, qi, m, iters, 0, NULL, &ev)) ||
		    !OK(clWaitForEvents(1, &ev))) {
			release_ev(&ev);
			return (iters);
		}
		release_ev(&ev);
		dt = now() - t;
		if (dt > 0.05 || iters >= (1ull << 36))
			break;
		iters *= 4;
	}
	want = (cl_ulong)((double)iters * (ms / 1000.0) / dt);
	note("spin: %llu iterations took %.1f ms on %s: %llu for %u ms",
	    (unsigned long long)iters, dt * 1e3, e->name[qi],
	    (unsigned long long)want, ms);
	return (want > 0 ? want : 1);
}

/* Compare n ints with want(i); report the first few differences. */
static int
check_ints(const int *got, size_t n, size_t first, int (*want)(size_t,
    const void *), const void *arg, const char *what, int line)
{
	size_t	i, bad = 0;

	for (i = 0; i < n; i++) {
		int	w = want(first + i, arg);

		if (got[i] != w) {
			if (bad < 3)
				check(0, line, "%s: element %zu is %d, want %d",
				    what, first + i, got[i], w);
			bad++;
		}
	}
	if (bad > 3)
		check(0, line, "%s: %zu elements wrong in all", what, bad);
	return (bad == 0);
}

/* ---- migrate ---- */

static int
host_x(size_t i)
{
	return ((int)i * 7 - 1000);
}

static int
want_add_mul(size_t i, const void *arg)
{
	(void)arg;
	return ((host_x(i) + 1) * 2);
}

/* +1 on A, *2 on B (event ordered, or not: implicit), read on node r. */
static void
migrate_once(struct env *e, int r, int implicit, int *host, size_t n)
{
	cl_mem		 m;
	cl_event	 e1 = NULL, e2 = NULL;
	int		*out;
	char		 what[256];

	snprintf(what, sizeof what, "%s read on %s", implicit ?
	    "no events" : "events", e->name[r]);
	if ((out = calloc(n, sizeof *out)) == NULL)
		return;
	m = mk_buf(e, n * sizeof *host, CL_MEM_READ_WRITE |
	    CL_MEM_COPY_HOST_PTR, host);
	if (m == NULL) {
		free(out);
		return;
	}
	if (OK(run1(e, e->add1, 0, m, n, 0, NULL, implicit ? NULL : &e1)) &&
	    OK(run1(e, e->mul2, 1, m, n, implicit ? 0 : 1,
	    implicit ? NULL : &e1, implicit ? NULL : &e2)) &&
	    OK(clEnqueueReadBuffer(e->q[r], m, CL_TRUE, 0, n * sizeof *out,
	    out, implicit ? 0 : 1, implicit ? NULL : &e2, NULL)))
		check_ints(out, n, 0, want_add_mul, NULL, what, __LINE__);
	release_ev(&e1);
	release_ev(&e2);
	release_mem(&m);
	free(out);
}

static void
test_migrate(struct env *e)
{
	size_t	 n = 1 << 18, i;
	int	*host;

	if ((host = malloc(n * sizeof *host)) == NULL)
		return;
	for (i = 0; i < n; i++)
		host[i] = host_x(i);
	migrate_once(e, 0, 0, host, n);		/* read on A */
	migrate_once(e, 1, 0, host, n);		/* read on B */
	migrate_once(e, 0, 1, host, n);		/* VCL orders it alone */
	migrate_once(e, 1, 1, host, n);
	/* The host data must still be the initial bytes (COPY_HOST_PTR). */
	for (i = 0; i < n; i++)
		if (host[i] != host_x(i))
			break;
	CHECK(i == n, "host array changed at %zu", i);
	free(host);
}

/* ---- no_client_bytes ---- */

static int
want_iota7_3_plus1(size_t i, const void *arg)
{
	(void)arg;
	return (7 + (int)i * 3 + 1);
}

struct iota_want {
	int	base, step;
};

static int
want_iota_p1(size_t i, const void *arg)
{
	const struct iota_want	*w = arg;

	return (w->base + (int)i * w->step + 1);
}

/*
 * Two 32 MiB buffers cross at once, one A->B and one B->A (both peer
 * links busy together), still without their bytes coming to the client.
 */
static void
swap_both_ways(struct env *e)
{
	size_t			 n = 32 * MIB / sizeof(int), i, j;
	size_t			 at[] = { 0, n / 3, n - 1024 }, span = 1024;
	struct iota_want	 w[2] = { { 11, 5 }, { -3, 7 } };
	cl_ulong		 b0 = 0, b1 = 0;
	cl_event		 ew[2] = { NULL, NULL }, eu[2] = { NULL, NULL };
	cl_mem			 m[2];
	int			*sample, v[2] = { 0, 0 };
	double			 t;

	m[0] = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	m[1] = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	if (m[0] == NULL || m[1] == NULL)
		goto out;
	for (i = 0; i < 2; i++)
		b0 += node_bytes(e->dev[i], CL_DEVICE_VCL_NODE_BYTES_SENT) +
		    node_bytes(e->dev[i], CL_DEVICE_VCL_NODE_BYTES_RECEIVED);
	t = now();
	/* m[i] written on node i, then used by a kernel on the other. */
	for (i = 0; i < 2; i++)
		if (!OK(run_iota(e, (int)i, m[i], n, w[i].base, w[i].step, 0,
		    NULL, &ew[i])))
			goto out;
	for (i = 0; i < 2; i++)
		if (!OK(run1(e, e->add1, 1 - (int)i, m[i], n, 1, &ew[i],
		    &eu[i])) || !OK(clFlush(e->q[1 - i])))
			goto out;
	for (i = 0; i < 2; i++)
		if (OK(clEnqueueReadBuffer(e->q[1 - i], m[i], CL_TRUE,
		    777 * sizeof(int), sizeof v[i], &v[i], 1, &eu[i], NULL)))
			CHECK(v[i] == want_iota_p1(777, &w[i]), "swap: buffer "
			    "%zu element 777 is %d, want %d", i, v[i],
			    want_iota_p1(777, &w[i]));
	t = now() - t;
	for (i = 0; i < 2; i++)
		b1 += node_bytes(e->dev[i], CL_DEVICE_VCL_NODE_BYTES_SENT) +
		    node_bytes(e->dev[i], CL_DEVICE_VCL_NODE_BYTES_RECEIVED);
	note("2 x 32 MiB crossing both ways in %.1f ms; client bulk bytes "
	    "%llu", t * 1e3, (unsigned long long)(b1 - b0));
	CHECK(b1 - b0 < MIB, "swap: client bulk bytes grew by %llu (want < 1 "
	    "MiB)", (unsigned long long)(b1 - b0));
	if ((sample = malloc(span * sizeof *sample)) == NULL)
		goto out;
	for (i = 0; i < 2; i++)
		for (j = 0; j < NITEMS(at); j++)
			if (OK(clEnqueueReadBuffer(e->q[1 - i], m[i], CL_TRUE,
			    at[j] * sizeof(int), span * sizeof(int), sample, 0,
			    NULL, NULL)))
				check_ints(sample, span, at[j], want_iota_p1,
				    &w[i], i == 0 ? "swap: A->B sample" :
				    "swap: B->A sample", __LINE__);
	free(sample);
out:
	for (i = 0; i < 2; i++) {
		release_ev(&ew[i]);
		release_ev(&eu[i]);
		release_mem(&m[i]);
	}
}

static void
test_no_client_bytes(struct env *e)
{
	size_t		 n = 32 * MIB / sizeof(int), i;
	size_t		 at[] = { 0, n / 2 - 512, n - 1024 }, span = 1024;
	cl_ulong	 s0[2], r0[2], s1[2], r1[2], ds = 0, dr = 0;
	cl_event	 e1 = NULL, e2 = NULL;
	cl_mem		 m;
	int		 one = 0, *sample;
	double		 t;

	if ((m = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL)) == NULL)
		return;
	for (i = 0; i < 2; i++) {
		s0[i] = node_bytes(e->dev[i], CL_DEVICE_VCL_NODE_BYTES_SENT);
		r0[i] = node_bytes(e->dev[i],
		    CL_DEVICE_VCL_NODE_BYTES_RECEIVED);
	}
	t = now();
	if (OK(run_iota(e, 0, m, n, 7, 3, 0, NULL, &e1)) &&
	    OK(run1(e, e->add1, 1, m, n, 1, &e1, &e2)) &&
	    OK(clEnqueueReadBuffer(e->q[1], m, CL_TRUE, 12345 * sizeof(int),
	    sizeof one, &one, 1, &e2, NULL)))
		CHECK(one == want_iota7_3_plus1(12345, NULL),
		    "4-byte read on B: %d, want %d", one,
		    want_iota7_3_plus1(12345, NULL));
	t = now() - t;
	for (i = 0; i < 2; i++) {
		s1[i] = node_bytes(e->dev[i], CL_DEVICE_VCL_NODE_BYTES_SENT);
		r1[i] = node_bytes(e->dev[i],
		    CL_DEVICE_VCL_NODE_BYTES_RECEIVED);
		ds += s1[i] - s0[i];
		dr += r1[i] - r0[i];
	}
	note("32 MiB A->B in %.1f ms; client bulk bytes: sent %llu to A, "
	    "%llu to B; received %llu from A, %llu from B", t * 1e3,
	    (unsigned long long)(s1[0] - s0[0]),
	    (unsigned long long)(s1[1] - s0[1]),
	    (unsigned long long)(r1[0] - r0[0]),
	    (unsigned long long)(r1[1] - r0[1]));
	CHECK(ds < MIB && dr < MIB, "client bulk bytes grew by %llu sent, "
	    "%llu received (want < 1 MiB each): the buffer went through the "
	    "client", (unsigned long long)ds, (unsigned long long)dr);
	if ((sample = malloc(span * sizeof *sample)) != NULL) {
		for (i = 0; i < NITEMS(at); i++)
			if (OK(clEnqueueReadBuffer(e->q[1], m, CL_TRUE,
			    at[i] * sizeof(int), span * sizeof(int), sample, 0,
			    NULL, NULL)))
				check_ints(sample, span, at[i],
				    want_iota7_3_plus1, NULL, "sample on B",
				    __LINE__);
		free(sample);
	}
	release_ev(&e1);
	release_ev(&e2);
	release_mem(&m);
	swap_both_ways(e);
}

/* ---- copy_across ---- */

struct copy_want {
	size_t	src_off, dst_off, count;	/* in elements */
	int	base, step, fill;
};

static int
want_copy(size_t i, const void *arg)
{
	const struct copy_want	*w = arg;

	if (i >= w->dst_off && i < w->dst_off + w->count)
		return (w->base + (int)(i - w->dst_off + w->src_off) * w->step);
	return (w->fill);
}

static int
want_iota(size_t i, const void *arg)
{
	const struct copy_want	*w = arg;

	return (w->base + (int)i * w->step);
}

/*
 * src written by a kernel on node s, dst filled on node d, copied by
 * node c's queue; dst read on every node.
 */
static void
copy_once(struct env *e, int s, int d, int c, const struct copy_want *w)
{
	size_t		 n = 4096, i;
	cl_mem		 src, dst;
	cl_event	 es = NULL, ed = NULL, ec = NULL, wl[2];
	int		*out;
	char		 what[256];

	if ((out = calloc(n, sizeof *out)) == NULL)
		return;
	src = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	dst = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	if (src == NULL || dst == NULL)
		goto out;
	if (!OK(run_iota(e, s, src, n, w->base, w->step, 0, NULL, &es)) ||
	    !OK(clEnqueueFillBuffer(e->q[d], dst, &w->fill, sizeof w->fill, 0,
	    n * sizeof(int), 0, NULL, &ed)))
		goto out;
	wl[0] = es;
	wl[1] = ed;
	if (!OK(clEnqueueCopyBuffer(e->q[c], src, dst, w->src_off * sizeof(int),
	    w->dst_off * sizeof(int), w->count * sizeof(int), 2, wl, &ec)))
		goto out;
	for (i = 0; i < (size_t)e->n && i < 2; i++) {
		snprintf(what, sizeof what, "src on %s, copy on %s, dst read "
		    "on %s", e->name[s], e->name[c], e->name[i]);
		memset(out, 0, n * sizeof *out);
		if (OK(clEnqueueReadBuffer(e->q[i], dst, CL_TRUE, 0,
		    n * sizeof(int), out, 1, &ec, NULL)))
			check_ints(out, n, 0, want_copy, w, what, __LINE__);
	}
	/* The source is unchanged, read where it was not written. */
	snprintf(what, sizeof what, "src after the copy, read on %s",
	    e->name[1 - s]);
	if (OK(clEnqueueReadBuffer(e->q[1 - s], src, CL_TRUE, 0,
	    n * sizeof(int), out, 1, &ec, NULL)))
		check_ints(out, n, 0, want_iota, w, what, __LINE__);
out:
	release_ev(&es);
	release_ev(&ed);
	release_ev(&ec);
	release_mem(&src);
	release_mem(&dst);
	free(out);
}

static void
test_copy_across(struct env *e)
{
	struct copy_want	w1 = { 16, 32, 1000, 100, 1, -1 };
	struct copy_want	w2 = { 100, 7, 2000, 5000, 2, -2 };
	struct copy_want	w3 = { 0, 0, 4096, 9, -3, -3 };

	copy_once(e, 0, 1, 1, &w1);	/* src on A, dst on B, copy on B */
	copy_once(e, 1, 0, 0, &w2);	/* src on B, dst on A, copy on A */
	copy_once(e, 0, 1, 1, &w3);	/* whole buffer: dst need not move */
}

/* ---- wait_across ---- */

/*
 * Poll the statuses of a command ea on one node and eb (which waits for
 * it) on another until both are final; both must be CL_COMPLETE. When the
 * client sees each is printed, not checked: the two servers' Notify
 * messages race (one came 64 ms late under load), so ordering is checked
 * by state and data instead (wait_gated, and the bytes of step 1).
 */
static void
poll_order(cl_event ea, cl_event eb, const char *what)
{
	double	t0 = now(), ta = -1, tb = -1, t;
	int	polls = 0;
	cl_int	sa, sb;

	for (;;) {
		sb = ev_status(eb);
		sa = ev_status(ea);
		t = now() - t0;
		polls++;
		if (sa <= CL_COMPLETE && ta < 0)
			ta = t;
		if (sb <= CL_COMPLETE && tb < 0)
			tb = t;
		if (ta >= 0 && tb >= 0)
			break;
		if (t > 30) {
			CHECK(0, "%s: not final after 30 s (A %d, B %d)", what,
			    sa, sb);
			return;
		}
		sleep_ms(1);
	}
	note("%s: %d polls, A's event seen final at %.1f ms, B's at %.1f ms",
	    what, polls, ta * 1e3, tb * 1e3);
	CHECK(sa == CL_COMPLETE, "%s: A's event status %d", what, sa);
	CHECK(sb == CL_COMPLETE, "%s: B's event status %d", what, sb);
}

/*
 * ea (on A) is gated by the unset user event u, eb (on B) waits for ea:
 * neither may be complete while u is unset (a window of 100 ms for a
 * command that does not wait to show itself; a correct run cannot fail
 * this, however loaded). Then u is set.
 */
static void
wait_gated(cl_event u, cl_event ea, cl_event eb, const char *what)
{
	cl_int	st;

	sleep_ms(100);
	st = ev_status(ea);
	CHECK(st > CL_COMPLETE, "%s: A's command status %d while the user "
	    "event gating it is unset", what, st);
	st = ev_status(eb);
	CHECK(st > CL_COMPLETE, "%s: B's command status %d while the A "
	    "command it waits for cannot have run", what, st);
	OK(clSetUserEventStatus(u, CL_COMPLETE));
}

static int
want_const(size_t i, const void *arg)
{
	(void)i;
	return (*(const int *)arg);
}

/* Read a whole buffer of n ints on node qi and compare with v. */
static void
expect_all(struct env *e, int qi, cl_mem m, size_t n, int v,
    const char *what)
{
	int	*out;

	if ((out = calloc(n, sizeof *out)) == NULL)
		return;
	if (OK(clEnqueueReadBuffer(e->q[qi], m, CL_TRUE, 0, n * sizeof *out,
	    out, 0, NULL, NULL)))
		check_ints(out, n, 0, want_const, &v, what, __LINE__);
	free(out);
}

static void
test_wait_across(struct env *e)
{
	size_t		 n = 1 << 16;
	cl_mem		 s, y = NULL, x1 = NULL, x2 = NULL, z = NULL, w = NULL;
	cl_event	 ea = NULL, eb = NULL, u = NULL, e1 = NULL, e2 = NULL;
	cl_event	 ef = NULL, eg = NULL, eh = NULL, el[2];
	cl_ulong	 iters;
	cl_int		 err, st;
	int		 p1 = 0x11111111, p2 = 0x22222222, p3 = 0x33333333;
	cl_uint		 w0 = 0, w1 = 0, wy = 0;

	if ((s = mk_buf(e, 64, CL_MEM_READ_WRITE, NULL)) == NULL)
		return;
	iters = calibrate(e, 0, s, 150);

	/*
	 * 1. A write on B waits for a slow kernel on A, gated by a user
	 * event: a copy on B of the word A's kernel writes last must hold
	 * that kernel's result, not the word before it (bytes prove the
	 * order, not when the client saw each Notify).
	 */
	y = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	u = clCreateUserEvent(e->ctx, &err);
	if (OK(err) && OK(clEnqueueReadBuffer(e->q[0], s, CL_TRUE, 0,
	    sizeof w0, &w0, 0, NULL, NULL)) &&
	    OK(clEnqueueFillBuffer(e->q[1], y, &p1, sizeof p1, 0,
	    n * sizeof(int), 0, NULL, NULL)) && OK(clFinish(e->q[1])) &&
	    OK(run_spin(e, 0, s, iters, 1, &u, &ea)) &&
	    OK(clFlush(e->q[0])) &&
	    OK(clEnqueueCopyBuffer(e->q[1], s, y, 0, 0, sizeof w0, 1, &ea,
	    &eb)) && OK(clFlush(e->q[1]))) {
		wait_gated(u, ea, eb, "copy on B after kernel on A");
		poll_order(ea, eb, "copy on B after kernel on A");
		if (OK(clEnqueueReadBuffer(e->q[0], s, CL_TRUE, 0, sizeof w1,
		    &w1, 0, NULL, NULL)) && OK(clEnqueueReadBuffer(e->q[1], y,
		    CL_TRUE, 0, sizeof wy, &wy, 0, NULL, NULL))) {
			CHECK(w1 != w0, "A's kernel left its word as it was "
			    "(%#x)", w0);
			CHECK(wy == w1, "copy on B after kernel on A: %#x, "
			    "A's kernel wrote %#x (before it: %#x)", wy, w1,
			    w0);
		}
	}
	release_ev(&u);
	release_ev(&ea);
	release_ev(&eb);

	/* 2. A marker on B waits for a slow kernel on A, gated likewise. */
	u = clCreateUserEvent(e->ctx, &err);
	if (OK(err) && OK(run_spin(e, 0, s, iters, 1, &u, &ea)) &&
	    OK(clFlush(e->q[0])) &&
	    OK(clEnqueueMarkerWithWaitList(e->q[1], 1, &ea, &eb)) &&
	    OK(clFlush(e->q[1]))) {
		wait_gated(u, ea, eb, "marker on B after kernel on A");
		poll_order(ea, eb, "marker on B after kernel on A");
	}
	release_ev(&u);
	release_ev(&ea);
	release_ev(&eb);

	/* 3. A user event gates commands on both nodes. */
	x1 = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	x2 = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	u = clCreateUserEvent(e->ctx, &err);
	if (OK(err) &&
	    OK(clEnqueueFillBuffer(e->q[0], x1, &p2, sizeof p2, 0,
	    n * sizeof(int), 1, &u, &e1)) &&
	    OK(run_iota(e, 1, x2, n, 77, 0, 1, &u, &e2)) &&
	    OK(clFlush(e->q[0])) && OK(clFlush(e->q[1]))) {
		sleep_ms(200);
		st = ev_status(e1);
		CHECK(st > CL_COMPLETE, "fill on A gated by a user event: "
		    "status %d before the event is set", st);
		st = ev_status(e2);
		CHECK(st > CL_COMPLETE, "kernel on B gated by a user event: "
		    "status %d before the event is set", st);
		OK(clSetUserEventStatus(u, CL_COMPLETE));
		el[0] = e1;
		el[1] = e2;
		OK(clWaitForEvents(2, el));
		CHECK(ev_status(e1) == CL_COMPLETE && ev_status(e2) ==
		    CL_COMPLETE, "gated commands: statuses %d %d",
		    ev_status(e1), ev_status(e2));
		expect_all(e, 0, x1, n, p2, "gated fill, read on A");
		expect_all(e, 1, x2, n, 77, "gated kernel, read on B");
		expect_all(e, 1, x1, n, p2, "gated fill, read on B");
	}
	release_ev(&u);
	release_ev(&e1);
	release_ev(&e2);

	/*
	 * 4. Failure crosses nodes: a user event set to -123 gates a fill on
	 * A; a fill on B waits for that fill's event. Last: the context may
	 * not be usable after a failed command.
	 */
	z = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	w = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	u = clCreateUserEvent(e->ctx, &err);
	if (OK(err) &&
	    OK(clEnqueueFillBuffer(e->q[0], z, &p3, sizeof p3, 0,
	    n * sizeof(int), 1, &u, &ef)) &&
	    OK(clEnqueueFillBuffer(e->q[1], w, &p3, sizeof p3, 0,
	    n * sizeof(int), 1, &ef, &eg)) &&
	    OK(clFlush(e->q[0])) && OK(clFlush(e->q[1]))) {
		sleep_ms(50);
		OK(clSetUserEventStatus(u, -123));
		final_or_exit(ef, "command on A gated by a user event set to "
		    "-123", __LINE__);
		err = clWaitForEvents(1, &ef);
		CHECK(err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
		    "wait for the failed command on A: %s", cl_strerror(err));
		st = ev_status(ef);
		CHECK(st < 0, "command on A gated by a failed user event: "
		    "status %d, want negative", st);
		final_or_exit(eg, "command on B waiting on the failed command "
		    "on A", __LINE__);
		err = clWaitForEvents(1, &eg);
		CHECK(err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
		    "wait for B's command behind it: %s", cl_strerror(err));
		st = ev_status(eg);
		CHECK(st < 0, "command on B waiting on the failed command on "
		    "A: status %d, want negative", st);
		note("failed statuses: user -123, A %d, B %d", ev_status(ef),
		    st);
		/*
		 * 5. A command on B enqueued after A's command has failed,
		 * waiting on it, fails too (and does not hang).
		 */
		if (OK(clEnqueueFillBuffer(e->q[1], w, &p3, sizeof p3, 0,
		    n * sizeof(int), 1, &ef, &eh)) && OK(clFlush(e->q[1]))) {
			st = final_or_exit(eh, "command on B enqueued after "
			    "the A command it waits for had failed", __LINE__);
			CHECK(st < 0, "command on B enqueued after the A "
			    "command it waits for had failed: status %d, want "
			    "negative", st);
		}
	}
	release_ev(&eh);
	release_ev(&u);
	release_ev(&ef);
	release_ev(&eg);
	release_mem(&s);
	release_mem(&y);
	release_mem(&x1);
	release_mem(&x2);
	release_mem(&z);
	release_mem(&w);
}

/* ---- fill_and_map ---- */

struct map_want {
	int	pattern;
	size_t	lo, hi;		/* elements written through the map */
};

static int
want_mapped(size_t i, const void *arg)
{
	const struct map_want	*w = arg;

	if (i >= w->lo && i < w->hi)
		return ((int)i * 5 + 1);
	return (w->pattern);
}

static void
test_fill_and_map(struct env *e)
{
	size_t			 n = 1 << 16, i, off = 1024, len = 3000;
	struct map_want		 w = { 0x5a5a1234, 1024, 1024 };
	cl_event		 ef = NULL, em = NULL, eu = NULL;
	cl_mem			 m;
	cl_int			 err;
	int			*p, *out;

	if ((m = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL)) == NULL)
		return;
	if ((out = calloc(n, sizeof *out)) == NULL)
		goto out;
	if (!OK(clEnqueueFillBuffer(e->q[0], m, &w.pattern, sizeof w.pattern,
	    0, n * sizeof(int), 0, NULL, &ef)))
		goto out;
	/* Map for reading on B: the fill's pattern. */
	STEP("clEnqueueMapBuffer");
	p = clEnqueueMapBuffer(e->q[1], m, CL_TRUE, CL_MAP_READ, 0,
	    n * sizeof(int), 1, &ef, &em, &err);
	if (OK(err) && CHECK(p != NULL, "map for reading returned NULL")) {
		CHECK(ev_status(em) == CL_COMPLETE, "blocking map's event: %d",
		    ev_status(em));
		check_ints(p, n, 0, want_mapped, &w, "map for reading on B",
		    __LINE__);
		OK(clEnqueueUnmapMemObject(e->q[1], m, p, 0, NULL, &eu));
		OK(clWaitForEvents(1, &eu));
	}
	release_ev(&em);
	release_ev(&eu);
	/* Map a range for writing on B, change it, unmap; read on A. */
	STEP("clEnqueueMapBuffer");
	p = clEnqueueMapBuffer(e->q[1], m, CL_TRUE, CL_MAP_WRITE,
	    off * sizeof(int), len * sizeof(int), 0, NULL, &em, &err);
	if (OK(err) && CHECK(p != NULL, "map for writing returned NULL")) {
		for (i = 0; i < len; i++)
			p[i] = (int)(off + i) * 5 + 1;
		w.lo = off;
		w.hi = off + len;
		if (OK(clEnqueueUnmapMemObject(e->q[1], m, p, 0, NULL, &eu)) &&
		    OK(clEnqueueReadBuffer(e->q[0], m, CL_TRUE, 0,
		    n * sizeof(int), out, 1, &eu, NULL)))
			check_ints(out, n, 0, want_mapped, &w,
			    "read on A after the map for writing on B",
			    __LINE__);
	}
	/* And a map for reading on A sees the same. */
	release_ev(&em);
	STEP("clEnqueueMapBuffer");
	p = clEnqueueMapBuffer(e->q[0], m, CL_TRUE, CL_MAP_READ, 0,
	    n * sizeof(int), 0, NULL, NULL, &err);
	if (OK(err) && p != NULL) {
		check_ints(p, n, 0, want_mapped, &w, "map for reading on A",
		    __LINE__);
		OK(clEnqueueUnmapMemObject(e->q[0], m, p, 0, NULL, NULL));
	}
out:
	release_ev(&ef);
	release_ev(&em);
	release_ev(&eu);
	release_mem(&m);
	free(out);
}

/* ---- node_death ---- */

static int
want_iota_plus1(size_t i, const void *arg)
{
	const int	*base = arg;

	return (*base + (int)i * 2 + 1);
}

/* iota then add1 on node qi (or iota on qi, add1 on qj), read on qr. */
static void
still_works(struct env *e, int qi, int qj, int qr, int base)
{
	size_t		 n = 1 << 14;
	cl_mem		 m;
	cl_event	 e1 = NULL, e2 = NULL;
	int		*out;
	char		 what[256];

	snprintf(what, sizeof what, "after the loss: iota on %s, +1 on %s, "
	    "read on %s", e->name[qi], e->name[qj], e->name[qr]);
	if ((out = calloc(n, sizeof *out)) == NULL)
		return;
	if ((m = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL)) != NULL &&
	    OK(run_iota(e, qi, m, n, base, 2, 0, NULL, &e1)) &&
	    OK(run1(e, e->add1, qj, m, n, 1, &e1, &e2)) &&
	    OK(clEnqueueReadBuffer(e->q[qr], m, CL_TRUE, 0, n * sizeof(int),
	    out, 1, &e2, NULL)))
		check_ints(out, n, 0, want_iota_plus1, &base, what, __LINE__);
	release_ev(&e1);
	release_ev(&e2);
	release_mem(&m);
	free(out);
}

static int
want_step1_plus1(size_t i, const void *arg)
{
	const int	*base = arg;

	return (*base + (int)i + 1);
}

/* Read n ints of m on node qi: base + i + 1 each. */
static void
expect_iota(struct env *e, int qi, cl_mem m, size_t n, int base,
    const char *what)
{
	int	*out;

	if ((out = calloc(n, sizeof *out)) == NULL)
		return;
	if (OK(clEnqueueReadBuffer(e->q[qi], m, CL_TRUE, 0, n * sizeof *out,
	    out, 0, NULL, NULL)))
		check_ints(out, n, 0, want_step1_plus1, &base, what, __LINE__);
	free(out);
}

/* The pid of node index idx from VCL_NETNS_PIDS, or -1. */
static pid_t
netns_pid(unsigned idx, unsigned *count)
{
	const char	*s = getenv("VCL_NETNS_PIDS");
	char		*end;
	unsigned	 i = 0;
	long		 v;
	pid_t		 pid = -1;

	*count = 0;
	while (s != NULL && *s != '\0') {
		v = strtol(s, &end, 10);
		if (end == s)
			break;
		if (i == idx)
			pid = (pid_t)v;
		i++;
		s = end;
	}
	*count = i;
	return (pid);
}

static void
test_node_death(struct env *e)
{
	const char	*killed = getenv("VCL_NETNS_KILLED");
	size_t		 n = 1 << 14;
	cl_mem		 bc = NULL, bd = NULL, bw = NULL, ba = NULL, s = NULL;
	cl_event	 ed = NULL, ec = NULL, eaw = NULL, ea = NULL, ex = NULL;
	cl_event	 ey = NULL, eas = NULL, es = NULL;
	cl_mem		 bs = NULL, bz = NULL;
	cl_ulong	 iters;
	cl_int		 err, st;
	unsigned	 count;
	pid_t		 pid;
	double		 t0, t;
	FILE		*f;
	int		 zero = 0, base = 40, one = 0;

	pid = netns_pid(e->node[2], &count);
	if (!CHECK(pid > 1, "no pid for node index %u in VCL_NETNS_PIDS",
	    e->node[2]))
		return;
	note("killing %s (node index %u, pid %ld)", e->name[2], e->node[2],
	    (long)pid);
	bc = mk_buf(e, 64, CL_MEM_READ_WRITE, NULL);
	bd = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	bw = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	ba = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	s = mk_buf(e, 64, CL_MEM_READ_WRITE, NULL);
	bs = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	bz = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL);
	if (failures > 0)
		goto out;
	/* Long enough never to finish: C dies first. */
	iters = calibrate(e, 0, s, 1000) * 60;

	/* bd: written on C only (its only newest copy will be lost). */
	if (!OK(run_iota(e, 2, bd, n, 1, 1, 0, NULL, &ed)) ||
	    !OK(clWaitForEvents(1, &ed)))
		goto out;
	/* bs: written on C, then read on A: A holds a copy that survives. */
	if (!OK(run_iota(e, 2, bs, n, 500, 1, 0, NULL, &es)) ||
	    !OK(clEnqueueReadBuffer(e->q[0], bs, CL_TRUE, 0, sizeof one, &one,
	    1, &es, NULL)) ||
	    !CHECK(one == 500, "bs read on A before the loss: %d", one))
		goto out;
	/*
	 * On A, in queue order: independent work (a kernel, then a spin
	 * still running when C dies), then a command that waits for C's
	 * long kernel. A failed command fails the commands queued behind it
	 * in an in-order queue (PoCL does so natively), so the independent
	 * work goes first.
	 */
	if (!OK(run_spin(e, 2, bc, iters, 0, NULL, &ec)) ||
	    !OK(clFlush(e->q[2])) ||
	    !OK(clEnqueueFillBuffer(e->q[0], bw, &zero, sizeof zero, 0,
	    n * sizeof(int), 0, NULL, NULL)) ||
	    !OK(run_iota(e, 0, ba, n, base, 2, 0, NULL, &ea)) ||
	    !OK(run_spin(e, 0, s, iters / 120, 0, NULL, &eas)) ||
	    !OK(run1(e, e->add1, 0, bw, n, 1, &ec, &eaw)) ||
	    !OK(clFlush(e->q[0])))
		goto out;
	sleep_ms(300);
	st = ev_status(ec);
	CHECK(st > CL_COMPLETE, "C's long kernel: status %d before the kill",
	    st);
	st = ev_status(eaw);
	CHECK(st > CL_COMPLETE, "A's command waiting on C: status %d before "
	    "the kill", st);

	if (killed != NULL && (f = fopen(killed, "a")) != NULL) {
		fprintf(f, "%ld\n", (long)pid);
		fclose(f);
	}
	t0 = now();
	if (!CHECK(kill(pid, SIGKILL) == 0, "kill %ld: %s", (long)pid,
	    strerror(errno)))
		goto out;

	/* C's event fails; the wait returns. */
	err = clWaitForEvents(1, &ec);
	t = now() - t0;
	CHECK(err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
	    "wait for C's kernel: %s", cl_strerror(err));
	st = ev_status(ec);
	CHECK(st < 0, "C's kernel: status %d, want negative", st);
	note("C's kernel failed with %d after %.1f ms", st, t * 1e3);

	/* New commands on C fail. */
	err = clEnqueueFillBuffer(e->q[2], bc, &zero, sizeof zero, 0, 64, 0,
	    NULL, &ex);
	if (err == CL_SUCCESS) {
		final_or_exit(ex, "fill on the dead node", __LINE__);
		st = ev_status(ex);
		CHECK(st < 0, "fill on the dead node: returned CL_SUCCESS and "
		    "its event has status %d", st);
	} else
		CHECK(err == CL_DEVICE_NOT_AVAILABLE, "fill on the dead node: "
		    "%s, want CL_DEVICE_NOT_AVAILABLE", cl_strerror(err));
	release_ev(&ex);
	STEP("clFinish(e->q[2])");
	err = clFinish(e->q[2]);
	CHECK(err == CL_DEVICE_NOT_AVAILABLE, "clFinish on the dead node: %s",
	    cl_strerror(err));

	/* A's command that waited on C's event fails, it does not hang. */
	final_or_exit(eaw, "A's command behind C's kernel", __LINE__);
	err = clWaitForEvents(1, &eaw);
	t = now() - t0;
	CHECK(err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
	    "wait for A's command behind C's kernel: %s", cl_strerror(err));
	st = ev_status(eaw);
	CHECK(st < 0, "A's command behind C's kernel: status %d, want "
	    "negative", st);
	note("A's command behind C's kernel ended with %d at %.1f ms", st,
	    t * 1e3);

	/* A buffer whose only newest copy was on C: an error, not zeros. */
	err = run1(e, e->add1, 1, bd, n, 0, NULL, &ey);
	if (err == CL_SUCCESS) {
		st = final_or_exit(ey, "kernel on B using a buffer whose only "
		    "copy was on the lost node", __LINE__);
		CHECK(st < 0, "kernel on B using a buffer whose only copy was "
		    "on the lost node: status %d, want an error", st);
		note("buffer lost with C: kernel on B ended with %d", st);
	} else
		note("buffer lost with C: kernel on B refused with %s",
		    cl_strerror(err));
	release_ev(&ey);

	/* A and B go on: A's work from before the loss completed. */
	final_or_exit(eas, "A's spin running during the loss", __LINE__);
	err = clWaitForEvents(1, &eas);
	CHECK(err == CL_SUCCESS && ev_status(eas) == CL_COMPLETE, "A's spin "
	    "running during the loss: wait %s, status %d", cl_strerror(err),
	    ev_status(eas));
	if (OK(clWaitForEvents(1, &ea))) {
		int	*out = calloc(n, sizeof *out);

		if (out != NULL && OK(clEnqueueReadBuffer(e->q[0], ba, CL_TRUE,
		    0, n * sizeof(int), out, 0, NULL, NULL))) {
			int	b = base - 1;	/* no +1 here */

			check_ints(out, n, 0, want_iota_plus1, &b,
			    "A's work from before the loss", __LINE__);
		}
		free(out);
	}
	still_works(e, 0, 0, 0, 100);
	still_works(e, 1, 1, 1, 200);
	still_works(e, 0, 1, 0, 300);
	still_works(e, 1, 0, 1, 400);

	/*
	 * A buffer last written on C but also copied to A before the loss:
	 * a kernel on B (whose copy is stale) gets the bytes from A.
	 */
	err = run1(e, e->add1, 1, bs, n, 0, NULL, &ey);
	if (CHECK(err == CL_SUCCESS, "kernel on B using a buffer last written "
	    "on the lost node but copied to A before: %s (A's copy is intact)",
	    cl_strerror(err))) {
		int	b = 500;

		expect_iota(e, 1, bs, n, b, "bs read on B (from A's copy)");
	}
	release_ev(&ey);

	/*
	 * A command on A waiting for an event of C that had completed
	 * before C died: the event is complete, so the command runs.
	 */
	if (OK(clEnqueueFillBuffer(e->q[0], bz, &zero, sizeof zero, 0,
	    n * sizeof(int), 0, NULL, NULL)) &&
	    OK(run_iota(e, 0, bz, n, 900, 1, 1, &ed, &ey))) {
		st = final_or_exit(ey, "kernel on A waiting for a completed "
		    "event of the lost node", __LINE__);
		CHECK(st == CL_COMPLETE, "kernel on A waiting for a completed "
		    "event of the lost node: status %d, want CL_COMPLETE", st);
		if (st == CL_COMPLETE)
			expect_iota(e, 0, bz, n, 900 - 1, "bz read on A");
	}
	release_ev(&ey);
	/* The queues of A and B still finish (A's had a failed command). */
	STEP("clFinish(e->q[1])");
	err = clFinish(e->q[1]);
	CHECK(err == CL_SUCCESS, "clFinish on B: %s", cl_strerror(err));
	STEP("clFinish(e->q[0])");
	err = clFinish(e->q[0]);
	note("clFinish on A after its failed command: %s", cl_strerror(err));
out:
	release_ev(&ed);
	release_ev(&ec);
	release_ev(&eaw);
	release_ev(&ea);
	release_ev(&eas);
	release_ev(&es);
	release_mem(&bs);
	release_mem(&bz);
	release_mem(&bc);
	release_mem(&bd);
	release_mem(&bw);
	release_mem(&ba);
	release_mem(&s);
}

/* ---- sub_buffer_across, rect_across, migrate_objects ---- */

/* Lines of this process's debug log (stderr, see child) naming what. */
static int	log_fd = -1;

static int
log_count(const char *what)
{
	struct stat	 st;
	char		*buf, *p;
	ssize_t		 r;
	int		 n = 0;

	if (log_fd < 0 || fstat(log_fd, &st) != 0 ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL)
		return (-1);
	if ((r = pread(log_fd, buf, (size_t)st.st_size, 0)) < 0)
		r = 0;
	buf[r] = '\0';
	for (p = buf; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	free(buf);
	return (n);
}

/* The device's sub-buffer origin alignment in bytes. */
static size_t
base_align(cl_device_id d)
{
	cl_uint	bits = 0;

	OK(clGetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits,
	    &bits, NULL));
	return (bits >= 8 ? bits / 8 : 128);
}

static int
want_sub(size_t i, const void *arg)
{
	const size_t	*r = arg;	/* first, count (elements) */

	return (7 + (int)i * 3 + (i >= r[0] && i < r[0] + r[1] ?
	    (i < r[0] + r[1] / 2 ? 1000 : 1) : 0));
}

/*
 * A sub-buffer written on one node, its parent read on the other: iota on
 * A over the parent; on B, a write through the sub-buffer (first half) and
 * add1 over the sub-buffer's second half through a second sub-buffer;
 * read the parent on A, then on B.
 */
static void
test_sub_buffer_across(struct env *e)
{
	size_t		 al = base_align(e->dev[0]), n = 1 << 16, i, r[2];
	size_t		 half;
	cl_buffer_region reg;
	cl_mem		 p = NULL, s = NULL, s2 = NULL, assoc = NULL;
	int		*out = NULL, *vals = NULL;
	cl_int		 err;

	if (base_align(e->dev[1]) > al)
		al = base_align(e->dev[1]);
	r[0] = 4 * al / sizeof(int);		/* the sub-buffer's elements */
	r[1] = 8 * al / sizeof(int);
	half = r[1] / 2;
	if ((out = malloc(n * sizeof *out)) == NULL ||
	    (vals = malloc(half * sizeof *vals)) == NULL ||
	    (p = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL)) == NULL)
		goto out;
	reg.origin = r[0] * sizeof(int);
	reg.size = r[1] * sizeof(int);
	s = clCreateSubBuffer(p, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
	if (!OK(err))
		goto out;
	OK(clGetMemObjectInfo(s, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc,
	    &assoc, NULL));
	CHECK(assoc == p, "CL_MEM_ASSOCIATED_MEMOBJECT is not the parent");
	reg.origin = (r[0] + half) * sizeof(int);
	reg.size = half * sizeof(int);
	s2 = clCreateSubBuffer(p, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
	if (!OK(err))
		goto out;
	for (i = 0; i < half; i++)
		vals[i] = 7 + (int)(r[0] + i) * 3 + 1000;
	if (!OK(run_iota(e, 0, p, n, 7, 3, 0, NULL, NULL)) ||
	    !OK(clEnqueueWriteBuffer(e->q[1], s, CL_FALSE, 0,
	    half * sizeof(int), vals, 0, NULL, NULL)) ||
	    !OK(run1(e, e->add1, 1, s2, half, 0, NULL, NULL)))
		goto out;
	if (OK(clEnqueueReadBuffer(e->q[0], p, CL_TRUE, 0, n * sizeof(int),
	    out, 0, NULL, NULL)))
		check_ints(out, n, 0, want_sub, r, "parent read on A", __LINE__);
	if (OK(clEnqueueReadBuffer(e->q[1], p, CL_TRUE, 0, n * sizeof(int),
	    out, 0, NULL, NULL)))
		check_ints(out, n, 0, want_sub, r, "parent read on B", __LINE__);
	/* And the sub-buffer read on A: the parent's bytes there. */
	if (OK(clEnqueueReadBuffer(e->q[0], s, CL_TRUE, 0, r[1] * sizeof(int),
	    out, 0, NULL, NULL)))
		check_ints(out, r[1], r[0], want_sub, r, "sub-buffer read on A",
		    __LINE__);
out:
	release_mem(&s2);
	release_mem(&s);
	release_mem(&p);
	free(vals);
	free(out);
}

/*
 * Rectangles across nodes: iota on A over a 64 x 64 x 4 int volume, a
 * rect copy on B into a second buffer (the source migrates A -> B), a
 * rect read of it on A (migrates back) and a rect write on B, read on A.
 */
static void
test_rect_across(struct env *e)
{
	const size_t	 w = 64, h = 64, d = 4, n = w * h * d;
	const size_t	 so[3] = { 8 * sizeof(int), 3, 1 };
	const size_t	 dof[3] = { 4 * sizeof(int), 10, 0 };
	const size_t	 reg[3] = { 20 * sizeof(int), 7, 3 };
	const size_t	 row = w * sizeof(int), slice = w * h * sizeof(int);
	const size_t	 zero[3] = { 0, 0, 0 };
	size_t		 x, y, z, bad = 0;
	cl_mem		 a = NULL, b = NULL;
	int		*got = NULL, *want = NULL, host[7][20];

	if ((got = calloc(n, sizeof *got)) == NULL ||
	    (want = calloc(n, sizeof *want)) == NULL ||
	    (a = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL)) == NULL ||
	    (b = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL)) == NULL)
		goto out;
	if (!OK(run_iota(e, 0, a, n, 1, 1, 0, NULL, NULL)) ||
	    !OK(clEnqueueCopyBufferRect(e->q[1], a, b, so, dof, reg, row,
	    slice, row, slice, 0, NULL, NULL)))
		goto out;
	for (z = 0; z < reg[2]; z++)
		for (y = 0; y < reg[1]; y++)
			for (x = 0; x < reg[0] / sizeof(int); x++)
				want[(dof[2] + z) * w * h + (dof[1] + y) * w +
				    dof[0] / sizeof(int) + x] = 1 +
				    (int)((so[2] + z) * w * h +
				    (so[1] + y) * w + so[0] / sizeof(int) + x);
	/* The whole of b, as a rectangle, on A. */
	{
		const size_t	all[3] = { row, h, d };

		if (OK(clEnqueueReadBufferRect(e->q[0], b, CL_TRUE, zero, zero,
		    all, 0, 0, 0, 0, got, 0, NULL, NULL)))
			for (x = 0; x < n; x++)
				if (got[x] != want[x] && bad++ < 3)
					CHECK(0, "rect copy on B, read on A: "
					    "element %zu is %d, want %d", x,
					    got[x], want[x]);
	}
	/* A rect write on B (7 rows of 20 ints), read back on A. */
	for (y = 0; y < 7; y++)
		for (x = 0; x < 20; x++)
			host[y][x] = -(int)(y * 100 + x);
	{
		const size_t	r2[3] = { 20 * sizeof(int), 7, 1 };
		const size_t	bo[3] = { 0, 50, 3 };

		if (OK(clEnqueueWriteBufferRect(e->q[1], b, CL_FALSE, bo, zero,
		    r2, row, slice, 0, 0, host, 0, NULL, NULL)) &&
		    OK(clEnqueueReadBuffer(e->q[0], b, CL_TRUE, 0,
		    n * sizeof(int), got, 0, NULL, NULL)))
			for (y = 0; y < 7; y++)
				for (x = 0; x < 20; x++)
					want[3 * w * h + (50 + y) * w + x] =
					    host[y][x];
		for (x = 0; x < n; x++)
			if (got[x] != want[x] && bad++ < 3)
				CHECK(0, "rect write on B, read on A: element "
				    "%zu is %d, want %d", x, got[x], want[x]);
	}
out:
	release_mem(&a);
	release_mem(&b);
	free(got);
	free(want);
}

static int
want_iota5_2_plus1(size_t i, const void *arg)
{
	(void)arg;
	return (5 + (int)i * 2 + 1);
}

/*
 * clEnqueueMigrateMemObjects moves the bytes ahead of use: a buffer
 * written on A, migrated to B (one migration in the client's debug log),
 * then a kernel on B: no further migration. With CONTENT_UNDEFINED no
 * migration at all, and B holds the newest bytes after.
 */
static void
test_migrate_objects(struct env *e)
{
	const char	*mig = "migrate: buffer ";
	size_t		 n = 1 << 18;
	cl_mem		 m = NULL, u = NULL;
	cl_event	 ev = NULL;
	cl_command_type	 type = 0;
	int		 l0, l1, l2, one = 0;

	if (!CHECK(log_fd >= 0 && log_count(mig) >= 0, "no debug log"))
		return;
	if ((m = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE, NULL)) ==
	    NULL || (u = mk_buf(e, n * sizeof(int), CL_MEM_READ_WRITE,
	    NULL)) == NULL)
		goto out;
	if (!OK(run_iota(e, 0, m, n, 5, 2, 0, NULL, NULL)) ||
	    !OK(run_iota(e, 0, u, n, 5, 2, 0, NULL, NULL)) ||
	    !OK(clFinish(e->q[0])))
		goto out;
	l0 = log_count(mig);
	if (!OK(clEnqueueMigrateMemObjects(e->q[1], 1, &m, 0, 0, NULL, &ev)))
		goto out;
	STEP("wait for the migration");
	OK(clWaitForEvents(1, &ev));
	OK(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type,
	    NULL));
	CHECK(type == CL_COMMAND_MIGRATE_MEM_OBJECTS, "event type %#x", type);
	l1 = log_count(mig);
	CHECK(l1 == l0 + 1, "clEnqueueMigrateMemObjects: %d migrations in "
	    "the log, want 1", l1 - l0);
	if (OK(run1(e, e->add1, 1, m, n, 0, NULL, NULL)) &&
	    OK(clFinish(e->q[1]))) {
		l2 = log_count(mig);
		CHECK(l2 == l1, "the kernel on B after the migration migrated "
		    "%d more times, want 0", l2 - l1);
	}
	if (OK(clEnqueueReadBuffer(e->q[1], m, CL_TRUE, 4 * 1000,
	    sizeof one, &one, 0, NULL, NULL)))
		CHECK(one == want_iota5_2_plus1(1000, NULL), "m[1000] on B is "
		    "%d, want %d", one, want_iota5_2_plus1(1000, NULL));

	/* CONTENT_UNDEFINED: nothing moves; B is the newest after. */
	l0 = log_count(mig);
	if (OK(clEnqueueMigrateMemObjects(e->q[1], 1, &u,
	    CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, NULL)) &&
	    OK(run_iota(e, 1, u, n, 9, 1, 0, NULL, NULL)) &&
	    OK(clFinish(e->q[1]))) {
		l1 = log_count(mig);
		CHECK(l1 == l0, "CONTENT_UNDEFINED migrated %d times, want 0",
		    l1 - l0);
		if (OK(clEnqueueReadBuffer(e->q[0], u, CL_TRUE, 4 * 77,
		    sizeof one, &one, 0, NULL, NULL)))
			CHECK(one == 9 + 77, "u[77] on A is %d, want %d", one,
			    9 + 77);
		CHECK(log_count(mig) == l1 + 1, "the read on A of u written "
		    "on B: %d migrations, want 1", log_count(mig) - l1);
	}
out:
	release_ev(&ev);
	release_mem(&m);
	release_mem(&u);
}

/* ---- image_across ---- */

static const char image_source[] =
	"__kernel void wimg(__write_only image2d_t o, uint base)\n"
	"{\n"
	"	int x = get_global_id(0), y = get_global_id(1);\n"
	"	write_imageui(o, (int2)(x, y),\n"
	"	    (uint4)(base + y * get_image_width(o) + x, 0, 0, 1));\n"
	"}\n"
	"__kernel void rimg(__read_only image2d_t i, sampler_t s,\n"
	"    __global uint *out)\n"
	"{\n"
	"	int x = get_global_id(0), y = get_global_id(1);\n"
	"	out[y * get_image_width(i) + x] =\n"
	"	    read_imageui(i, s, (int2)(x, y)).x + 1;\n"
	"}\n";

static int
want_img(size_t i, const void *arg)
{
	return (*(const int *)arg + (int)i + 1);
}

/*
 * An image written by a kernel on A is read by a kernel on B (its bytes
 * go A to B server to server, not through the client), read back on B;
 * then written from the host on B and read on A.
 */
static void
test_image_across(struct env *e)
{
	enum { W = 512, H = 256 };
	const char		*src = image_source;
	cl_image_format		 f = { CL_R, CL_UNSIGNED_INT32 };
	cl_image_desc		 d;
	size_t			 g[2] = { W, H }, o[3] = { 0, 0, 0 };
	size_t			 r[3] = { W, H, 1 }, n = W * H, i;
	cl_ulong		 b0 = 0, b1 = 0;
	cl_program		 p = NULL;
	cl_kernel		 kw = NULL, kr = NULL;
	cl_sampler		 smp = NULL;
	cl_mem			 im = NULL, out = NULL;
	cl_uint			*host = NULL, base = 1000;
	int			 want = 1000;
	cl_int			 err;

	memset(&d, 0, sizeof d);
	d.image_type = CL_MEM_OBJECT_IMAGE2D;
	d.image_width = W;
	d.image_height = H;
	if ((host = calloc(n, sizeof *host)) == NULL)
		return;
	p = clCreateProgramWithSource(e->ctx, 1, &src, NULL, &err);
	if (!OK(err) || !OK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL)))
		goto out;
	kw = clCreateKernel(p, "wimg", &err);
	if (!OK(err))
		goto out;
	kr = clCreateKernel(p, "rimg", &err);
	if (!OK(err))
		goto out;
	smp = clCreateSampler(e->ctx, CL_FALSE, CL_ADDRESS_NONE,
	    CL_FILTER_NEAREST, &err);
	if (!OK(err))
		goto out;
	im = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &f, &d, NULL, &err);
	if (!OK(err) || (out = mk_buf(e, n * sizeof *host, CL_MEM_READ_WRITE,
	    NULL)) == NULL)
		goto out;
	for (i = 0; i < 2; i++)
		b0 += node_bytes(e->dev[i], CL_DEVICE_VCL_NODE_BYTES_SENT) +
		    node_bytes(e->dev[i], CL_DEVICE_VCL_NODE_BYTES_RECEIVED);
	if (!OK(clSetKernelArg(kw, 0, sizeof im, &im)) ||
	    !OK(clSetKernelArg(kw, 1, sizeof base, &base)) ||
	    !OK(clEnqueueNDRangeKernel(e->q[0], kw, 2, NULL, g, NULL, 0, NULL,
	    NULL)) || !OK(clSetKernelArg(kr, 0, sizeof im, &im)) ||
	    !OK(clSetKernelArg(kr, 1, sizeof smp, &smp)) ||
	    !OK(clSetKernelArg(kr, 2, sizeof out, &out)) ||
	    !OK(clEnqueueNDRangeKernel(e->q[1], kr, 2, NULL, g, NULL, 0, NULL,
	    NULL)) || !OK(clFinish(e->q[1])))
		goto out;
	for (i = 0; i < 2; i++)
		b1 += node_bytes(e->dev[i], CL_DEVICE_VCL_NODE_BYTES_SENT) +
		    node_bytes(e->dev[i], CL_DEVICE_VCL_NODE_BYTES_RECEIVED);
	CHECK(b1 - b0 < n, "image: client bulk bytes grew by %llu (the "
	    "image is %zu bytes)", (unsigned long long)(b1 - b0), n * 4);
	if (OK(clEnqueueReadBuffer(e->q[1], out, CL_TRUE, 0, n * sizeof *host,
	    host, 0, NULL, NULL)))
		check_ints((int *)host, n, 0, want_img, &want,
		    "image written on A, read by a kernel on B", __LINE__);
	memset(host, 0, n * sizeof *host);
	if (OK(clEnqueueReadImage(e->q[1], im, CL_TRUE, o, r, 0, 0, host, 0,
	    NULL, NULL)))
		for (i = 0; i < n; i++)
			if (!CHECK(host[i] == 1000 + i, "image read on B: "
			    "pixel %zu is %u", i, host[i]))
				break;
	/* Host write on B, read on A. */
	for (i = 0; i < n; i++)
		host[i] = (cl_uint)(7 * i);
	if (OK(clEnqueueWriteImage(e->q[1], im, CL_FALSE, o, r, 0, 0, host, 0,
	    NULL, NULL)) && OK(clFlush(e->q[1]))) {
		memset(host, 0, n * sizeof *host);
		if (OK(clEnqueueReadImage(e->q[0], im, CL_TRUE, o, r, 0, 0,
		    host, 0, NULL, NULL)))
			for (i = 0; i < n; i++)
				if (!CHECK(host[i] == 7 * i, "image written on "
				    "B, read on A: pixel %zu is %u", i,
				    host[i]))
					break;
	}
out:
	release_mem(&out);
	release_mem(&im);
	if (smp != NULL)
		clReleaseSampler(smp);
	if (kw != NULL)
		clReleaseKernel(kw);
	if (kr != NULL)
		clReleaseKernel(kr);
	if (p != NULL)
		clReleaseProgram(p);
	free(host);
}

/* ---- image_buffer_across ---- */

static const char image1d_source[] =
	"__kernel void wimg1(__write_only image1d_buffer_t o, uint base)\n"
	"{\n"
	"	int x = get_global_id(0);\n"
	"	write_imageui(o, x, (uint4)(base + x, 0, 0, 1));\n"
	"}\n"
	"__kernel void rimg1(__read_only image1d_buffer_t i,\n"
	"    __global uint *out)\n"
	"{\n"
	"	int x = get_global_id(0);\n"
	"	out[x] = read_imageui(i, x).x;\n"
	"}\n";

/* Checks n uints of got against base + step * i; what names the case. */
static void
check_uints(const cl_uint *got, size_t n, cl_uint base, cl_uint step,
    const char *what, int line)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (!check(got[i] == base + step * (cl_uint)i, line,
		    "%s: element %zu is %u, want %u", what, i, got[i],
		    base + step * (cl_uint)i))
			break;
}

/*
 * Kernel kw writes a 1D buffer image of its own on A; its buffer is read
 * on B. CL_SUCCESS, or the error of a launch a node refused cleanly
 * (the node still answers).
 */
static cl_int
wimg1_on_a(struct env *e, cl_kernel kw, cl_uint base)
{
	enum { W = 256 };
	cl_image_format	 f = { CL_R, CL_UNSIGNED_INT32 };
	cl_image_desc	 d;
	cl_mem		 buf, im = NULL;
	cl_uint		 host[W];
	cl_event	 ev;
	size_t		 g = W;
	cl_int		 err;

	memset(host, 0, sizeof host);
	if ((buf = mk_buf(e, sizeof host, CL_MEM_READ_WRITE, NULL)) == NULL)
		return (CL_OUT_OF_HOST_MEMORY);
	memset(&d, 0, sizeof d);
	d.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
	d.image_width = W;
	d.buffer = buf;
	im = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &f, &d, NULL, &err);
	if (!OK(err) || !OK(clSetKernelArg(kw, 0, sizeof im, &im)) ||
	    !OK(clSetKernelArg(kw, 1, sizeof base, &base)))
		goto out;
	STEP("wimg1 on A");
	if ((err = clEnqueueNDRangeKernel(e->q[0], kw, 1, NULL, &g, NULL, 0,
	    NULL, &ev)) == CL_SUCCESS) {
		clWaitForEvents(1, &ev);
		err = ev_status(ev);	/* the launch's own error, if any */
		clReleaseEvent(ev);
	}
	if (err != CL_SUCCESS) {
		CHECK(err == CL_INVALID_OPERATION, "wimg1 on A: %s",
		    cl_strerror(err));
		note("a kernel writing a 1D buffer image refused: %s",
		    cl_strerror(err));
		/* The node lives: its queue still runs a command. */
		err = clEnqueueBarrierWithWaitList(e->q[0], 0, NULL, NULL);
		if (err == CL_SUCCESS)
			err = clFinish(e->q[0]);
		goto out;
	}
	if (OK(clEnqueueReadBuffer(e->q[1], buf, CL_TRUE, 0, sizeof host, host,
	    0, NULL, NULL)))
		check_uints(host, W, base, 1, "image written by a kernel on A, "
		    "its buffer read on B", __LINE__);
out:
	release_mem(&im);
	release_mem(&buf);
	return (err);
}

/*
 * A 1D buffer image and its buffer are one memory: whatever writes one
 * on a node, the other shows it on the other node. A kernel writes the
 * image on A, the buffer is read on B; a kernel writes the buffer on B,
 * a kernel reads the image on A; the host writes the buffer on A, the
 * image is read on B.
 */
static void
test_image_buffer_across(struct env *e)
{
	enum { W = 4096 };
	const char		*src = image1d_source;
	cl_image_format		 f = { CL_R, CL_UNSIGNED_INT32 };
	cl_image_desc		 d;
	size_t			 g = W, o[3] = { 0, 0, 0 }, r[3] = { W, 1, 1 };
	cl_program		 p = NULL;
	cl_kernel		 kw = NULL, kr = NULL;
	cl_mem			 buf = NULL, im = NULL, out = NULL;
	cl_uint			 host[W], base = 500, i;
	cl_int			 err, b3 = 3, s5 = 5;

	for (i = 0; i < W; i++)
		host[i] = 0xdead;
	if ((buf = mk_buf(e, sizeof host, CL_MEM_READ_WRITE |
	    CL_MEM_COPY_HOST_PTR, host)) == NULL || (out = mk_buf(e,
	    sizeof host, CL_MEM_READ_WRITE, NULL)) == NULL)
		goto out;
	memset(&d, 0, sizeof d);
	d.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
	d.image_width = W;
	d.buffer = buf;
	im = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &f, &d, NULL, &err);
	if (!OK(err))
		goto out;
	p = clCreateProgramWithSource(e->ctx, 1, &src, NULL, &err);
	if (!OK(err) || !OK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL)))
		goto out;
	kw = clCreateKernel(p, "wimg1", &err);
	if (!OK(err))
		goto out;
	kr = clCreateKernel(p, "rimg1", &err);
	if (!OK(err))
		goto out;
	/*
	 * A kernel writing the image on A. PoCL 3.1 crashes on a writable
	 * image1d_buffer_t argument: a PoCL node refuses the launch
	 * (CL_INVALID_OPERATION) and lives. Its own image and buffer: a
	 * failed command leaves what it would have written failed.
	 */
	if (!OK(wimg1_on_a(e, kw, base)))
		goto out;
	/* Image written from the host on A; its buffer read on B. */
	for (i = 0; i < W; i++)
		host[i] = base + i;
	if (!OK(clEnqueueWriteImage(e->q[0], im, CL_FALSE, o, r, 0, 0, host,
	    0, NULL, NULL)) || !OK(clFlush(e->q[0])))
		goto out;
	memset(host, 0, sizeof host);
	if (OK(clEnqueueReadBuffer(e->q[1], buf, CL_TRUE, 0, sizeof host, host,
	    0, NULL, NULL)))
		check_uints(host, W, base, 1, "image written on A, its buffer "
		    "read on B", __LINE__);
	/* Buffer written by a kernel on B; the image read by a kernel on A. */
	if (!OK(clSetKernelArg(e->iota, 0, sizeof buf, &buf)) ||
	    !OK(clSetKernelArg(e->iota, 1, sizeof b3, &b3)) ||
	    !OK(clSetKernelArg(e->iota, 2, sizeof s5, &s5)) ||
	    !OK(clEnqueueNDRangeKernel(e->q[1], e->iota, 1, NULL, &g, NULL, 0,
	    NULL, NULL)) || !OK(clFlush(e->q[1])) ||
	    !OK(clSetKernelArg(kr, 0, sizeof im, &im)) ||
	    !OK(clSetKernelArg(kr, 1, sizeof out, &out)) ||
	    !OK(clEnqueueNDRangeKernel(e->q[0], kr, 1, NULL, &g, NULL, 0, NULL,
	    NULL)))
		goto out;
	memset(host, 0, sizeof host);
	if (OK(clEnqueueReadBuffer(e->q[0], out, CL_TRUE, 0, sizeof host, host,
	    0, NULL, NULL)))
		check_uints(host, W, 3, 5, "buffer written on B, the image read "
		    "by a kernel on A", __LINE__);
	/* Buffer written from the host on A; the image read on B. */
	for (i = 0; i < W; i++)
		host[i] = 9 * i;
	if (!OK(clEnqueueWriteBuffer(e->q[0], buf, CL_FALSE, 0, sizeof host,
	    host, 0, NULL, NULL)) || !OK(clFlush(e->q[0])))
		goto out;
	memset(host, 0, sizeof host);
	if (OK(clEnqueueReadImage(e->q[1], im, CL_TRUE, o, r, 0, 0, host, 0,
	    NULL, NULL)))
		check_uints(host, W, 0, 9, "buffer written on A, the image read "
		    "on B", __LINE__);
out:
	release_mem(&out);
	release_mem(&im);
	release_mem(&buf);
	if (kw != NULL)
		clReleaseKernel(kw);
	if (kr != NULL)
		clReleaseKernel(kr);
	if (p != NULL)
		clReleaseProgram(p);
}

/* ---- compile_link ---- */

/* o[i] = pb_mul(s.a, i) + s.b over n items on node qi; checks the result. */
static void
run_pb_on(struct env *e, cl_program prog, int qi, int a, int b,
    const char *what)
{
	struct { int a; char pad[9]; int b; } pair;
	cl_kernel	 k;
	cl_mem		 m = NULL;
	int		 out[64], i, bad = 0;
	size_t		 n = 64;
	cl_int		 err;

	k = clCreateKernel(prog, "pb_run", &err);
	if (!OK(err))
		return;
	memset(&pair, 0, sizeof pair);
	pair.a = a;
	pair.b = b;
	memset(out, 0, sizeof out);
	if ((m = mk_buf(e, sizeof out, CL_MEM_READ_WRITE, NULL)) != NULL &&
	    OK(clSetKernelArg(k, 0, sizeof m, &m)) &&
	    OK(clSetKernelArg(k, 1, sizeof pair, &pair)) &&
	    OK(clEnqueueNDRangeKernel(e->q[qi], k, 1, NULL, &n, NULL, 0, NULL,
	    NULL)) && OK(clEnqueueReadBuffer(e->q[qi], m, CL_TRUE, 0,
	    sizeof out, out, 0, NULL, NULL))) {
		for (i = 0; i < 64; i++)
			if (out[i] != a * i + b && bad++ == 0)
				CHECK(0, "%s on %s: element %d is %d, want %d",
				    what, e->name[qi], i, out[i], a * i + b);
	}
	release_mem(&m);
	clReleaseKernel(k);
}

/*
 * clCompileProgram (an in-memory header) and clLinkProgram over a context
 * of two nodes: each node compiles and links for its own device, the
 * linked kernel (a struct by value) runs on both; the linked program's
 * binaries, one per device from its node, make a program that runs on
 * both too; a link for B's device alone runs on B.
 */
static void
test_compile_link(struct env *e)
{
	static const char	*hdr =
	    "typedef struct { int a; char pad[9]; int b; } pb_pair;\n"
	    "int pb_mul(int x, int y);\n";
	static const char	*lib_src = "#include \"pb/pair.h\"\n"
	    "int pb_mul(int x, int y) { return x * y; }\n";
	static const char	*main_src = "#include \"pb/pair.h\"\n"
	    "__kernel void pb_run(__global int *o, pb_pair s)\n"
	    "{ int i = get_global_id(0); o[i] = pb_mul(s.a, i) + s.b; }\n";
	const char		*hname = "pb/pair.h";
	cl_program		 h, a, b, l = NULL, lb = NULL, pbin = NULL, in[2];
	size_t			 sizes[2] = { 0, 0 }, got = 0;
	unsigned char		*bins[2] = { NULL, NULL };
	cl_int			 st[2] = { 1, 1 }, err;

	h = clCreateProgramWithSource(e->ctx, 1, &hdr, NULL, &err);
	OK(err);
	a = clCreateProgramWithSource(e->ctx, 1, &lib_src, NULL, &err);
	OK(err);
	b = clCreateProgramWithSource(e->ctx, 1, &main_src, NULL, &err);
	OK(err);
	if (h == NULL || a == NULL || b == NULL)
		goto out;
	if (!OK(clCompileProgram(a, 0, NULL, NULL, 1, &h, &hname, NULL,
	    NULL)) || !OK(clCompileProgram(b, 0, NULL, NULL, 1, &h, &hname,
	    NULL, NULL)))
		goto out;
	in[0] = a;
	in[1] = b;
	l = clLinkProgram(e->ctx, 0, NULL, NULL, 2, in, NULL, NULL, &err);
	if (!OK(err))
		goto out;
	run_pb_on(e, l, 0, 3, 4, "linked");
	run_pb_on(e, l, 1, 5, -6, "linked");

	/* Its binaries, each from its device's node, and back. */
	if (OK(clGetProgramInfo(l, CL_PROGRAM_BINARY_SIZES, sizeof sizes,
	    sizes, &got)) && CHECK(got == 2 * sizeof sizes[0] &&
	    sizes[0] > 0 && sizes[1] > 0, "binary sizes %zu %zu (%zu bytes)",
	    sizes[0], sizes[1], got) &&
	    (bins[0] = malloc(sizes[0])) != NULL &&
	    (bins[1] = malloc(sizes[1])) != NULL &&
	    OK(clGetProgramInfo(l, CL_PROGRAM_BINARIES, sizeof bins, bins,
	    NULL))) {
		pbin = clCreateProgramWithBinary(e->ctx, 2, e->dev, sizes,
		    (const unsigned char **)bins, st, &err);
		if (OK(err) && CHECK(st[0] == CL_SUCCESS && st[1] ==
		    CL_SUCCESS, "binary status %d %d", st[0], st[1]) &&
		    OK(clBuildProgram(pbin, 0, NULL, NULL, NULL, NULL))) {
			cl_kernel	k = clCreateKernel(pbin, "pb_run", &err);

			/* No source there: its struct argument is refused. */
			if (OK(err)) {
				clReleaseKernel(k);
				note("program from binaries built on both nodes");
			}
		}
	}

	/* A link for B's device only. */
	lb = clLinkProgram(e->ctx, 1, &e->dev[1], NULL, 2, in, NULL, NULL,
	    &err);
	if (OK(err))
		run_pb_on(e, lb, 1, 2, 9, "linked for B");
out:
	free(bins[0]);
	free(bins[1]);
	if (pbin != NULL)
		clReleaseProgram(pbin);
	if (lb != NULL)
		clReleaseProgram(lb);
	if (l != NULL)
		clReleaseProgram(l);
	if (b != NULL)
		clReleaseProgram(b);
	if (a != NULL)
		clReleaseProgram(a);
	if (h != NULL)
		clReleaseProgram(h);
}

/* A binary round trip across nodes: same results as from source. */
static void
test_binary_across(struct env *e)
{
	cl_program	 pbin = NULL;
	size_t		 sizes[2] = { 0, 0 };
	unsigned char	*bins[2] = { NULL, NULL };
	cl_kernel	 k = NULL;
	cl_int		 st[2] = { 1, 1 }, err;
	int		*host = NULL, qi;
	size_t		 n = 1024;
	cl_mem		 m = NULL;

	if (!OK(clGetProgramInfo(e->prog, CL_PROGRAM_BINARY_SIZES,
	    sizeof sizes, sizes, NULL)) || (bins[0] = malloc(sizes[0])) ==
	    NULL || (bins[1] = malloc(sizes[1])) == NULL ||
	    !OK(clGetProgramInfo(e->prog, CL_PROGRAM_BINARIES, sizeof bins,
	    bins, NULL)))
		goto out;
	pbin = clCreateProgramWithBinary(e->ctx, 2, e->dev, sizes,
	    (const unsigned char **)bins, st, &err);
	if (!OK(err) || !OK(clBuildProgram(pbin, 0, NULL, NULL, NULL, NULL)))
		goto out;
	k = clCreateKernel(pbin, "iota", &err);
	if (!OK(err) || (host = calloc(n, sizeof *host)) == NULL)
		goto out;
	for (qi = 0; qi < 2; qi++) {
		int	base = 10 * (qi + 1), step = qi + 2;
		size_t	i;

		release_mem(&m);
		if ((m = mk_buf(e, n * sizeof *host, CL_MEM_READ_WRITE,
		    NULL)) == NULL ||
		    !OK(clSetKernelArg(k, 0, sizeof m, &m)) ||
		    !OK(clSetKernelArg(k, 1, sizeof base, &base)) ||
		    !OK(clSetKernelArg(k, 2, sizeof step, &step)) ||
		    !OK(clEnqueueNDRangeKernel(e->q[qi], k, 1, NULL, &n, NULL,
		    0, NULL, NULL)) || !OK(clEnqueueReadBuffer(e->q[qi], m,
		    CL_TRUE, 0, n * sizeof *host, host, 0, NULL, NULL)))
			break;
		for (i = 0; i < n; i++)
			if (!CHECK(host[i] == base + (int)i * step,
			    "iota from binary on %s: element %zu is %d",
			    e->name[qi], i, host[i]))
				break;
	}
out:
	release_mem(&m);
	free(host);
	free(bins[0]);
	free(bins[1]);
	if (k != NULL)
		clReleaseKernel(k);
	if (pbin != NULL)
		clReleaseProgram(pbin);
}

static const struct test tests[] = {
	{ "migrate", 2, test_migrate, 0 },
	{ "no_client_bytes", 2, test_no_client_bytes, 0 },
	{ "copy_across", 2, test_copy_across, 0 },
	{ "wait_across", 2, test_wait_across, 0 },
	{ "fill_and_map", 2, test_fill_and_map, 0 },
	{ "sub_buffer_across", 2, test_sub_buffer_across, 0 },
	{ "rect_across", 2, test_rect_across, 0 },
	{ "migrate_objects", 2, test_migrate_objects, 0 },
	{ "image_across", 2, test_image_across, 0 },
	{ "image_buffer_across", 2, test_image_buffer_across, 0 },
	{ "compile_link", 2, test_compile_link, 0 },
	{ "binary_across", 2, test_binary_across, 0 },
	{ "node_death", 3, test_node_death, 0 },	/* last: kills C */
};

/* The watchdog: the test hung. */
static void
on_alarm(int sig)
{
	static const char	msg[] = ": watchdog expired (a wait hung) in ";
	char			line[16];
	int			i = (int)sizeof line, v = wd_line;

	(void)sig;
	line[--i] = '\n';
	do {
		line[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0 && i > 1);
	line[--i] = ':';
	if (write(STDOUT_FILENO, "  ", 2) < 0 ||
	    write(STDOUT_FILENO, current, strlen(current)) < 0 ||
	    write(STDOUT_FILENO, msg, sizeof msg - 1) < 0 ||
	    write(STDOUT_FILENO, (const char *)wd_step,
	    strlen((const char *)wd_step))
	    < 0 ||
	    write(STDOUT_FILENO, line + i, sizeof line - (size_t)i) < 0)
		_exit(3);
	_exit(3);
}

/* In the child: run one test under its watchdog. Exit 0, 1 or SKIP. */
static void
child(const struct test *t, unsigned timeout)
{
	struct env	e;
	unsigned	count;

	current = t->name;
	signal(SIGALRM, on_alarm);
	alarm(timeout);
	if (t->fn == test_node_death) {
		netns_pid(0, &count);
		if (count < 3) {
			printf("  %s: needs netns.sh with 3 nodes "
			    "(VCL_NETNS_PIDS has %u pids)\n", t->name, count);
			fflush(stdout);
			_exit(SKIP_EXIT);
		}
	}
	if (t->fn == test_migrate_objects) {
		/* The client's debug log (stderr) says where bytes went. */
		char	path[] = "/tmp/vcl_mn_log.XXXXXX";

		if ((log_fd = mkstemp(path)) >= 0) {
			unlink(path);
			setenv("VCL_LOG", "debug", 1);
			dup2(log_fd, STDERR_FILENO);
		}
	}
	if (env_open(&e, t->nodes))
		t->fn(&e);
	env_close(&e);
	alarm(0);
	fflush(stdout);
	_exit(failures == 0 ? 0 : 1);
}

/* The setup child: list the nodes; fail when fewer than 2. */
static void
probe(void)
{
	struct env	e;
	int		n;

	memset(&e, 0, sizeof e);
	alarm(60);
	n = find_devices(&e, MAXN, 1);
	fflush(stdout);
	_exit(n >= 2 ? 0 : 1);
}

/* Fork fn's child and wait for it, bounded. Returns its wait status. */
static int
spawn(const struct test *t, unsigned timeout, double *secs)
{
	pid_t	pid;
	int	status = 0;
	double	t0 = now();

	fflush(stdout);
	if ((pid = fork()) == -1) {
		perror("fork");
		return (-1);
	}
	if (pid == 0) {
		if (t == NULL)
			probe();
		child(t, timeout);
	}
	/* The child's alarm ends it; this one is the backstop. */
	for (;;) {
		pid_t	r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r == -1 && errno != EINTR) {
			status = -1;
			break;
		}
		if (now() - t0 > timeout + 30) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		sleep_ms(10);
	}
	*secs = now() - t0;
	return (status);
}

int
main(int argc, char **argv)
{
	const char	*filter = argc > 1 ? argv[1] : NULL, *s;
	unsigned	 timeout = 60;
	int		 passed = 0, failed = 0, skipped = 0, st;
	double		 secs;
	size_t		 i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((s = getenv("VCL_TEST_TIMEOUT")) != NULL && atoi(s) > 0)
		timeout = (unsigned)atoi(s);
	hang_s = timeout / 6.0;
	st = spawn(NULL, 60, &secs);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("FAIL setup: want the VCL platform with devices on at "
		    "least 2 nodes\n");
		printf("0 passed, 1 failed\n");
		return (1);
	}
	for (i = 0; i < NITEMS(tests); i++) {
		if (filter != NULL && strstr(tests[i].name, filter) == NULL)
			continue;
		st = spawn(&tests[i], tests[i].timeout ? tests[i].timeout :
		    timeout, &secs);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			printf("PASS %s (%.2f s)\n", tests[i].name, secs);
			passed++;
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == SKIP_EXIT) {
			printf("SKIP %s\n", tests[i].name);
			skipped++;
		} else {
			if (WIFSIGNALED(st))
				printf("FAIL %s (%.2f s): killed by signal %d\n",
				    tests[i].name, secs, WTERMSIG(st));
			else if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
				printf("FAIL %s (%.2f s): timed out\n",
				    tests[i].name, secs);
			else
				printf("FAIL %s (%.2f s)\n", tests[i].name,
				    secs);
			failed++;
		}
	}
	if (skipped > 0)
		printf("%d passed, %d failed, %d skipped\n", passed, failed,
		    skipped);
	else
		printf("%d passed, %d failed\n", passed, failed);
	return (failed > 0 ? 1 : 0);
}
