/* vclbench.c - measures two OpenCL platforms (native and VCL) and raw TCP loopback in one run. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <CL/cl.h>

#define BENCH_KIB		((size_t)1024)
#define BENCH_MIB		(1024 * BENCH_KIB)
#define BENCH_NSIZES		5
#define BENCH_SOCKBUF		(4 * 1024 * 1024)
#define BENCH_CHUNK		(4 * BENCH_MIB)
#define BENCH_BLOCK		100

#define BENCH_TCP_BULK		1
#define BENCH_TCP_PING		2
#define BENCH_TCP_QUIT		3
#define BENCH_TCP_BULK_FULL	4	/* into a buffer of the bulk's size */

/* Transfer sizes, shared by the OpenCL and the raw TCP bandwidth tables. */
static const size_t bench_sizes[BENCH_NSIZES] = {
	4 * BENCH_KIB, 64 * BENCH_KIB, BENCH_MIB, 16 * BENCH_MIB, 256 * BENCH_MIB
};
static const char *bench_size_names[BENCH_NSIZES] = {
	"4 KiB", "64 KiB", "1 MiB", "16 MiB", "256 MiB"
};

/* A tiny kernel: one work-item, one store, so launch overhead dominates. */
static const char *bench_kernel_src =
    "__kernel void vclbench_tiny(__global int *p)\n"
    "{\n"
    "	p[0] = (int)get_global_size(0);\n"
    "}\n";

/* How much to do: iteration and repetition counts (full or --quick). */
struct bench_plan {
	int	 lat_warm;		/* untimed enqueue+finish first */
	int	 lat_iters;		/* timed enqueue+finish, TCP ping-pong */
	int	 thr_enqueues;		/* enqueues per throughput round */
	int	 thr_rounds;		/* best and median of */
	int	 rd4k_iters;		/* 4 KiB read latency */
	int	 nsizes;		/* sizes measured, from the smallest */
	int	 reps[BENCH_NSIZES];	/* bandwidth reps per size */
};

/*
 * 41 rounds of enqueues: on H100 hosts one round's ratio to the native
 * round beside it spread from 0.65x to 1.34x (p10 to p90), and the
 * median of 15 such rounds moved by 10% between runs of one build.
 */
static const struct bench_plan bench_plan_full = {
	200, 2000, 20000, 41, 2000, BENCH_NSIZES,
	{ 100, 50, 20, 12, 11 }
};
static const struct bench_plan bench_plan_quick = {
	50, 500, 5000, 3, 500, 4,
	{ 50, 30, 10, 3, 0 }
};
/* --bw: every size as the full plan has it, the rest cut short. */
static const struct bench_plan bench_plan_bw = {
	20, 200, 2000, 3, 200, BENCH_NSIZES,
	{ 20, 20, 10, 12, 11 }
};

/* A latency sample's median and spread. */
struct bench_stat {
	double	 med;
	double	 p10;
	double	 p90;
};

/* Results for one OpenCL platform. */
struct bench_result {
	struct bench_stat latency_us;
	double	 enq_per_s;		/* the best round */
	double	 enq_med;		/* the median round */
	struct bench_stat enq_pair;	/* B: its round over A's same round */
	int	 have[BENCH_NSIZES];	/* 0: size skipped (too big) */
	double	 write_gbs[BENCH_NSIZES];
	double	 read_gbs[BENCH_NSIZES];
	double	 nbread_gbs[BENCH_NSIZES];	/* non-blocking + clFinish */
	struct bench_stat read4k_us;
};

/* One OpenCL platform under test: its objects and its results. */
struct bench_cl {
	char			 role;		/* 'A' or 'B' */
	char			*pname;
	char			*dname;
	cl_platform_id		 platform;
	cl_device_id		 device;
	cl_ulong		 max_alloc;
	cl_context		 ctx;
	cl_command_queue	 queue;
	cl_program		 prog;
	cl_kernel		 kernel;
	cl_mem			 arg;
	struct bench_result	 r;
};

/* The raw TCP loopback pair and its results. */
struct bench_tcp {
	int		 sfd;		/* sender side, this thread */
	int		 rfd;		/* receiver side, the thread */
	pthread_t	 thread;
	int		 sndbuf;	/* as the kernel reports them */
	int		 rcvbuf;
	struct bench_stat rtt_us;
	int		 have[BENCH_NSIZES];
	double		 gbs[BENCH_NSIZES];
	double		 full_gbs[BENCH_NSIZES];	/* BENCH_TCP_BULK_FULL */
};

/* A command from the sender to the receiver thread. */
struct bench_tcp_cmd {
	uint32_t	 op;
	uint32_t	 pad;
	uint64_t	 arg;
};

static FILE	*bench_csv;
static int	 bench_progress;
/*
 * --sent: a write is timed until the call returns, not through the
 * clFinish after it (the tables before this option was added).
 */
static int	 bench_sent;

static void	 bench_fatal(const char *, ...)
		     __attribute__((format(printf, 1, 2), noreturn));
static void	 bench_note(const char *, ...)
		     __attribute__((format(printf, 1, 2)));

/* Prints an error and exits with status 1. */
static void
bench_fatal(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "vclbench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* Prints a progress line to stderr when it is a terminal. */
static void
bench_note(const char *fmt, ...)
{
	va_list	ap;

	if (!bench_progress)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "vclbench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

/* Returns the name of an OpenCL error code, or "?" when unknown. */
static const char *
bench_cl_errname(cl_int err)
{
	switch (err) {
	case CL_SUCCESS:			return ("CL_SUCCESS");
	case CL_DEVICE_NOT_FOUND:		return ("CL_DEVICE_NOT_FOUND");
	case CL_DEVICE_NOT_AVAILABLE:		return ("CL_DEVICE_NOT_AVAILABLE");
	case CL_COMPILER_NOT_AVAILABLE:		return ("CL_COMPILER_NOT_AVAILABLE");
	case CL_MEM_OBJECT_ALLOCATION_FAILURE:	return ("CL_MEM_OBJECT_ALLOCATION_FAILURE");
	case CL_OUT_OF_RESOURCES:		return ("CL_OUT_OF_RESOURCES");
	case CL_OUT_OF_HOST_MEMORY:		return ("CL_OUT_OF_HOST_MEMORY");
	case CL_BUILD_PROGRAM_FAILURE:		return ("CL_BUILD_PROGRAM_FAILURE");
	case CL_INVALID_VALUE:			return ("CL_INVALID_VALUE");
	case CL_INVALID_DEVICE_TYPE:		return ("CL_INVALID_DEVICE_TYPE");
	case CL_INVALID_PLATFORM:		return ("CL_INVALID_PLATFORM");
	case CL_INVALID_DEVICE:			return ("CL_INVALID_DEVICE");
	case CL_INVALID_CONTEXT:		return ("CL_INVALID_CONTEXT");
	case CL_INVALID_QUEUE_PROPERTIES:	return ("CL_INVALID_QUEUE_PROPERTIES");
	case CL_INVALID_COMMAND_QUEUE:		return ("CL_INVALID_COMMAND_QUEUE");
	case CL_INVALID_HOST_PTR:		return ("CL_INVALID_HOST_PTR");
	case CL_INVALID_MEM_OBJECT:		return ("CL_INVALID_MEM_OBJECT");
	case CL_INVALID_BUFFER_SIZE:		return ("CL_INVALID_BUFFER_SIZE");
	case CL_INVALID_PROGRAM:		return ("CL_INVALID_PROGRAM");
	case CL_INVALID_PROGRAM_EXECUTABLE:	return ("CL_INVALID_PROGRAM_EXECUTABLE");
	case CL_INVALID_KERNEL_NAME:		return ("CL_INVALID_KERNEL_NAME");
	case CL_INVALID_KERNEL:			return ("CL_INVALID_KERNEL");
	case CL_INVALID_ARG_INDEX:		return ("CL_INVALID_ARG_INDEX");
	case CL_INVALID_ARG_VALUE:		return ("CL_INVALID_ARG_VALUE");
	case CL_INVALID_ARG_SIZE:		return ("CL_INVALID_ARG_SIZE");
	case CL_INVALID_KERNEL_ARGS:		return ("CL_INVALID_KERNEL_ARGS");
	case CL_INVALID_WORK_DIMENSION:		return ("CL_INVALID_WORK_DIMENSION");
	case CL_INVALID_WORK_GROUP_SIZE:	return ("CL_INVALID_WORK_GROUP_SIZE");
	case CL_INVALID_GLOBAL_WORK_SIZE:	return ("CL_INVALID_GLOBAL_WORK_SIZE");
	case CL_INVALID_OPERATION:		return ("CL_INVALID_OPERATION");
	case -1001:				return ("CL_PLATFORM_NOT_FOUND_KHR");
	}
	return ("?");
}

/* Exits with the call's name and code when an OpenCL call failed. */
static void
bench_check(cl_int err, const char *call)
{
	if (err != CL_SUCCESS)
		bench_fatal("%s failed: %d (%s)", call, (int)err,
		    bench_cl_errname(err));
}

/* Returns monotonic time in seconds. */
static double
bench_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
}

/* Orders two doubles for qsort. */
static int
bench_cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return ((x > y) - (x < y));
}

/* Returns the median of n values; sorts them in place. */
static double
bench_median(double *v, int n)
{
	qsort(v, n, sizeof *v, bench_cmp_double);
	if (n % 2 == 1)
		return (v[n / 2]);
	return ((v[n / 2 - 1] + v[n / 2]) / 2);
}

/* Fills in the median and 10th/90th percentiles of n values; sorts them. */
static void
bench_stats(double *v, int n, struct bench_stat *st)
{
	st->med = bench_median(v, n);
	st->p10 = v[(n - 1) / 10];
	st->p90 = v[(n - 1) * 9 / 10];
}

/* Allocates or exits. */
static void *
bench_xmalloc(size_t size)
{
	void	*p;

	if ((p = malloc(size)) == NULL)
		bench_fatal("out of memory (%zu bytes)", size);
	return (p);
}

/* Formats a ratio with about three significant digits. */
static const char *
bench_ratio(char *buf, size_t len, double r)
{
	if (r >= 100)
		snprintf(buf, len, "%.0fx", r);
	else if (r >= 10)
		snprintf(buf, len, "%.1fx", r);
	else if (r >= 1)
		snprintf(buf, len, "%.2fx", r);
	else
		snprintf(buf, len, "%.3gx", r);
	return (buf);
}

/* Writes one CSV row (section,size,platform,value,unit) if --csv was given. */
static void
bench_csv_row(const char *section, size_t size, const char *platform,
    double value, const char *unit)
{
	if (bench_csv == NULL)
		return;
	fprintf(bench_csv, "%s,%zu,%s,%.6g,%s\n", section, size, platform,
	    value, unit);
}

/* Returns the CSV platform label of a platform: role, colon, name sans commas. */
static const char *
bench_cl_label(const struct bench_cl *c, char *buf, size_t len)
{
	char	*p;

	snprintf(buf, len, "%c:%s", c->role, c->pname);
	for (p = buf; *p != '\0'; p++) {
		if (*p == ',' || *p == '"' || *p == '\n')
			*p = ' ';
	}
	return (buf);
}

/* Case-insensitive substring search. */
static int
bench_contains(const char *hay, const char *needle)
{
	size_t	n = strlen(needle);

	for (; *hay != '\0'; hay++) {
		if (strncasecmp(hay, needle, n) == 0)
			return (1);
	}
	return (n == 0);
}

/* Returns a platform string attribute in a new allocation. */
static char *
bench_platform_string(cl_platform_id p, cl_platform_info what)
{
	size_t	 len = 0;
	char	*s;

	bench_check(clGetPlatformInfo(p, what, 0, NULL, &len),
	    "clGetPlatformInfo");
	s = bench_xmalloc(len + 1);
	bench_check(clGetPlatformInfo(p, what, len, s, NULL),
	    "clGetPlatformInfo");
	s[len] = '\0';
	return (s);
}

/* Returns a device string attribute in a new allocation. */
static char *
bench_device_string(cl_device_id d, cl_device_info what)
{
	size_t	 len = 0;
	char	*s;

	bench_check(clGetDeviceInfo(d, what, 0, NULL, &len),
	    "clGetDeviceInfo");
	s = bench_xmalloc(len + 1);
	bench_check(clGetDeviceInfo(d, what, len, s, NULL), "clGetDeviceInfo");
	s[len] = '\0';
	return (s);
}

/* Lists the platforms to stderr, for -l and for a spec that matched none. */
static void
bench_list_platforms(FILE *f, cl_platform_id *ids, cl_uint n)
{
	cl_uint	 i;
	char	*name;

	for (i = 0; i < n; i++) {
		name = bench_platform_string(ids[i], CL_PLATFORM_NAME);
		fprintf(f, "  %u: %s\n", i, name);
		free(name);
	}
}

/* Picks a platform by index or by case-insensitive name substring. */
static cl_platform_id
bench_pick_platform(const char *spec, cl_platform_id *ids, cl_uint n)
{
	const char	*p;
	char		*name;
	cl_uint		 i;
	unsigned long	 idx;

	for (p = spec; *p != '\0' && isdigit((unsigned char)*p); p++)
		/* nothing */;
	if (*spec != '\0' && *p == '\0') {
		idx = strtoul(spec, NULL, 10);
		if (idx < n)
			return (ids[idx]);
	} else {
		for (i = 0; i < n; i++) {
			name = bench_platform_string(ids[i], CL_PLATFORM_NAME);
			if (bench_contains(name, spec)) {
				free(name);
				return (ids[i]);
			}
			free(name);
		}
	}
	fprintf(stderr, "vclbench: no platform matches \"%s\"; there are:\n",
	    spec);
	bench_list_platforms(stderr, ids, n);
	exit(1);
}

/* Creates the context, queue, tiny kernel and its argument on a platform. */
static void
bench_cl_open(struct bench_cl *c, char role, cl_platform_id platform)
{
	cl_context_properties	 props[3];
	cl_uint			 ndev = 0;
	cl_int			 err;
	size_t			 len = 0;
	char			*log;

	memset(c, 0, sizeof *c);
	c->role = role;
	c->platform = platform;
	c->pname = bench_platform_string(platform, CL_PLATFORM_NAME);
	bench_check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &c->device,
	    &ndev), "clGetDeviceIDs");
	c->dname = bench_device_string(c->device, CL_DEVICE_NAME);
	bench_check(clGetDeviceInfo(c->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
	    sizeof c->max_alloc, &c->max_alloc, NULL), "clGetDeviceInfo");

	props[0] = CL_CONTEXT_PLATFORM;
	props[1] = (cl_context_properties)platform;
	props[2] = 0;
	c->ctx = clCreateContext(props, 1, &c->device, NULL, NULL, &err);
	bench_check(err, "clCreateContext");
	c->queue = clCreateCommandQueue(c->ctx, c->device, 0, &err);
	bench_check(err, "clCreateCommandQueue");

	c->prog = clCreateProgramWithSource(c->ctx, 1, &bench_kernel_src, NULL,
	    &err);
	bench_check(err, "clCreateProgramWithSource");
	err = clBuildProgram(c->prog, 1, &c->device, "", NULL, NULL);
	if (err == CL_BUILD_PROGRAM_FAILURE &&
	    clGetProgramBuildInfo(c->prog, c->device, CL_PROGRAM_BUILD_LOG, 0,
	    NULL, &len) == CL_SUCCESS) {
		log = bench_xmalloc(len + 1);
		if (clGetProgramBuildInfo(c->prog, c->device,
		    CL_PROGRAM_BUILD_LOG, len, log, NULL) == CL_SUCCESS) {
			log[len] = '\0';
			fprintf(stderr, "vclbench: build log:\n%s\n", log);
		}
		free(log);
	}
	bench_check(err, "clBuildProgram");
	c->kernel = clCreateKernel(c->prog, "vclbench_tiny", &err);
	bench_check(err, "clCreateKernel");
	c->arg = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, sizeof(cl_int), NULL,
	    &err);
	bench_check(err, "clCreateBuffer");
	bench_check(clSetKernelArg(c->kernel, 0, sizeof c->arg, &c->arg),
	    "clSetKernelArg");
}

/* Releases a platform's objects. */
static void
bench_cl_close(struct bench_cl *c)
{
	bench_check(clReleaseMemObject(c->arg), "clReleaseMemObject");
	bench_check(clReleaseKernel(c->kernel), "clReleaseKernel");
	bench_check(clReleaseProgram(c->prog), "clReleaseProgram");
	bench_check(clReleaseCommandQueue(c->queue), "clReleaseCommandQueue");
	bench_check(clReleaseContext(c->ctx), "clReleaseContext");
	free(c->pname);
	free(c->dname);
}

/* Enqueues the tiny kernel once with global size 1, no event. */
static void
bench_cl_launch(struct bench_cl *c)
{
	size_t	one = 1;

	bench_check(clEnqueueNDRangeKernel(c->queue, c->kernel, 1, NULL, &one,
	    NULL, 0, NULL, NULL), "clEnqueueNDRangeKernel");
}

/* Writes all of a buffer to a socket, or exits. */
static void
bench_write_full(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			bench_fatal("tcp write: %s", strerror(errno));
		p += n;
		len -= n;
	}
}

/* Reads exactly len bytes from a socket, or exits. */
static void
bench_read_full(int fd, void *buf, size_t len)
{
	char	*p = buf;
	ssize_t	 n;

	while (len > 0) {
		n = read(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0)
			bench_fatal("tcp read: unexpected end of stream");
		if (n < 0)
			bench_fatal("tcp read: %s", strerror(errno));
		p += n;
		len -= n;
	}
}

/* The receiver thread: drains bulk transfers then acks, echoes pings. */
static void *
bench_tcp_receiver(void *arg)
{
	struct bench_tcp	*tcp = arg;
	struct bench_tcp_cmd	 cmd;
	unsigned char		*buf, *full = NULL;
	uint64_t		 left, i, fsize = 0;
	ssize_t			 n;
	char			 b;

	buf = bench_xmalloc(BENCH_CHUNK);
	for (;;) {
		bench_read_full(tcp->rfd, &cmd, sizeof cmd);
		if (cmd.op == BENCH_TCP_QUIT)
			break;
		if (cmd.op == BENCH_TCP_BULK_FULL && cmd.arg > fsize) {
			/* Touched once, as an application's buffer is. */
			free(full);
			full = bench_xmalloc(cmd.arg);
			memset(full, 0, cmd.arg);
			fsize = cmd.arg;
		}
		if (cmd.op == BENCH_TCP_BULK || cmd.op == BENCH_TCP_BULK_FULL) {
			for (left = cmd.arg; left > 0; left -= n) {
				if (cmd.op == BENCH_TCP_BULK_FULL)
					n = read(tcp->rfd, full + (cmd.arg -
					    left), left);
				else
					n = read(tcp->rfd, buf, left <
					    BENCH_CHUNK ? left : BENCH_CHUNK);
				if (n == -1 && errno == EINTR) {
					n = 0;
					continue;
				}
				if (n <= 0)
					bench_fatal("tcp receiver: read failed");
			}
			b = 'k';
			bench_write_full(tcp->rfd, &b, 1);
		} else if (cmd.op == BENCH_TCP_PING) {
			for (i = 0; i < cmd.arg; i++) {
				bench_read_full(tcp->rfd, &b, 1);
				bench_write_full(tcp->rfd, &b, 1);
			}
		} else
			bench_fatal("tcp receiver: bad command %u", cmd.op);
	}
	free(buf);
	free(full);
	return (NULL);
}

/* Sets TCP_NODELAY and 4 MiB socket buffers on a socket. */
static void
bench_tcp_tune(int fd)
{
	int	on = 1, size = BENCH_SOCKBUF;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size) != 0)
		bench_fatal("setsockopt: %s", strerror(errno));
}

/* Connects a socket pair over 127.0.0.1 and starts the receiver thread. */
static void
bench_tcp_open(struct bench_tcp *tcp)
{
	struct sockaddr_in	sin;
	socklen_t		slen = sizeof sin;
	int			lfd, error;

	memset(tcp, 0, sizeof *tcp);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = 0;

	/* Buffer sizes set before listen/connect so the window scale fits. */
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		bench_fatal("socket: %s", strerror(errno));
	bench_tcp_tune(lfd);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &slen) != 0 ||
	    listen(lfd, 1) != 0)
		bench_fatal("listen on 127.0.0.1: %s", strerror(errno));
	if ((tcp->sfd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		bench_fatal("socket: %s", strerror(errno));
	bench_tcp_tune(tcp->sfd);
	if (connect(tcp->sfd, (struct sockaddr *)&sin, sizeof sin) != 0)
		bench_fatal("connect to 127.0.0.1: %s", strerror(errno));
	if ((tcp->rfd = accept(lfd, NULL, NULL)) == -1)
		bench_fatal("accept: %s", strerror(errno));
	close(lfd);
	bench_tcp_tune(tcp->rfd);

	slen = sizeof tcp->sndbuf;
	getsockopt(tcp->sfd, SOL_SOCKET, SO_SNDBUF, &tcp->sndbuf, &slen);
	slen = sizeof tcp->rcvbuf;
	getsockopt(tcp->rfd, SOL_SOCKET, SO_RCVBUF, &tcp->rcvbuf, &slen);

	if ((error = pthread_create(&tcp->thread, NULL, bench_tcp_receiver,
	    tcp)) != 0)
		bench_fatal("pthread_create: %s", strerror(error));
}

/* Stops the receiver thread and closes the pair. */
static void
bench_tcp_close(struct bench_tcp *tcp)
{
	struct bench_tcp_cmd	cmd = { BENCH_TCP_QUIT, 0, 0 };

	bench_write_full(tcp->sfd, &cmd, sizeof cmd);
	pthread_join(tcp->thread, NULL);
	close(tcp->sfd);
	close(tcp->rfd);
}

/*
 * Sends size bytes and waits for the receiver's ack; returns seconds taken.
 * The receiver reads them into a 4 MiB buffer of its own, again and again,
 * or (full) into a buffer of size bytes, as a read's destination is.
 */
static double
bench_tcp_bulk(struct bench_tcp *tcp, const unsigned char *src, size_t size,
    int full)
{
	struct bench_tcp_cmd	cmd = { BENCH_TCP_BULK, 0, size };
	double			t0;
	char			ack;

	if (full)
		cmd.op = BENCH_TCP_BULK_FULL;
	bench_write_full(tcp->sfd, &cmd, sizeof cmd);
	t0 = bench_now();
	bench_write_full(tcp->sfd, src, size);
	bench_read_full(tcp->sfd, &ack, 1);
	return (bench_now() - t0);
}

/* Times n 1-byte round trips into t (microseconds), or none when t is NULL. */
static void
bench_tcp_ping(struct bench_tcp *tcp, int n, double *t)
{
	struct bench_tcp_cmd	cmd = { BENCH_TCP_PING, 0, n };
	double			t0;
	int			i;
	char			b = 'p';

	bench_write_full(tcp->sfd, &cmd, sizeof cmd);
	for (i = 0; i < n; i++) {
		t0 = bench_now();
		bench_write_full(tcp->sfd, &b, 1);
		bench_read_full(tcp->sfd, &b, 1);
		if (t != NULL)
			t[i] = (bench_now() - t0) * 1e6;
	}
}

/* Times n tiny-kernel enqueue + clFinish into t (microseconds), or none. */
static void
bench_cl_finish_n(struct bench_cl *c, int n, double *t)
{
	double	t0;
	int	i;

	for (i = 0; i < n; i++) {
		t0 = bench_now();
		bench_cl_launch(c);
		bench_check(clFinish(c->queue), "clFinish");
		if (t != NULL)
			t[i] = (bench_now() - t0) * 1e6;
	}
}

/* Times n blocking reads of size bytes into t (microseconds). */
static void
bench_cl_read_n(struct bench_cl *c, cl_mem buf, unsigned char *dst,
    size_t size, int n, double *t)
{
	double	t0;
	int	i;

	for (i = 0; i < n; i++) {
		t0 = bench_now();
		bench_check(clEnqueueReadBuffer(c->queue, buf, CL_TRUE, 0, size,
		    dst, 0, NULL, NULL), "clEnqueueReadBuffer");
		t[i] = (bench_now() - t0) * 1e6;
	}
}

/*
 * Measures TCP round trip and enqueue + clFinish latency. NOTE: on a small
 * VM a thread woken on another vCPU costs tens of microseconds more than one
 * woken on its own, and the scheduler moves threads every fraction of a
 * second; so TCP, A and B take turns in blocks of BENCH_BLOCK (the first to
 * go rotating) and every median is drawn from the same stretch of time.
 */
static void
bench_run_latency(struct bench_tcp *tcp, struct bench_cl *cl, int ncl,
    const struct bench_plan *plan)
{
	double	*t[3];
	cl_int	 got;
	int	 n = plan->lat_iters, done, blk, k, j, c;

	bench_note("latency: TCP round trip and enqueue + clFinish");
	bench_tcp_ping(tcp, plan->lat_warm, NULL);
	for (c = 0; c < ncl; c++) {
		bench_cl_finish_n(&cl[c], plan->lat_warm, NULL);
		/* The kernel must really have run: it stores its global size. */
		got = 0;
		bench_check(clEnqueueReadBuffer(cl[c].queue, cl[c].arg, CL_TRUE,
		    0, sizeof got, &got, 0, NULL, NULL), "clEnqueueReadBuffer");
		if (got != 1)
			bench_fatal("%c: tiny kernel wrote %d, expected 1",
			    cl[c].role, (int)got);
	}
	for (k = 0; k <= ncl; k++)
		t[k] = bench_xmalloc(n * sizeof *t[k]);
	for (done = 0, j = 0; done < n; done += blk, j++) {
		blk = n - done < BENCH_BLOCK ? n - done : BENCH_BLOCK;
		for (k = 0; k <= ncl; k++) {
			c = (j + k) % (ncl + 1);
			if (c == ncl)
				bench_tcp_ping(tcp, blk, t[c] + done);
			else
				bench_cl_finish_n(&cl[c], blk, t[c] + done);
		}
	}
	for (c = 0; c < ncl; c++)
		bench_stats(t[c], n, &cl[c].r.latency_us);
	bench_stats(t[ncl], n, &tcp->rtt_us);
	for (k = 0; k <= ncl; k++)
		free(t[k]);
}

/*
 * Measures enqueues per second; A and B take turns (the first to go
 * rotating), best and median round of each. A runtime's launch rate moves
 * by tens of percent from round to round (NVIDIA's on an H100: 61.5k to
 * 109.7k/s within one process), so the best of few rounds is a noisy figure;
 * B's rounds are also set against A's round of the same turn, whose
 * ratios' median moves least with the runtime's drift.
 */
static void
bench_run_throughput(struct bench_cl *cl, int ncl,
    const struct bench_plan *plan)
{
	double	*rates[2], *ratio, t0;
	int	 i, round, c, k;

	bench_note("throughput: %d enqueues", plan->thr_enqueues);
	for (c = 0; c < ncl; c++)
		rates[c] = bench_xmalloc(plan->thr_rounds * sizeof *rates[c]);
	for (round = 0; round < plan->thr_rounds; round++) {
		for (k = 0; k < ncl; k++) {
			c = (k + round) % ncl;
			t0 = bench_now();
			for (i = 0; i < plan->thr_enqueues; i++)
				bench_cl_launch(&cl[c]);
			bench_check(clFinish(cl[c].queue), "clFinish");
			rates[c][round] = plan->thr_enqueues /
			    (bench_now() - t0);
			if (rates[c][round] > cl[c].r.enq_per_s)
				cl[c].r.enq_per_s = rates[c][round];
		}
	}
	/* Before the medians sort the rounds out of their pairing. */
	if (ncl == 2) {
		ratio = bench_xmalloc(plan->thr_rounds * sizeof *ratio);
		for (round = 0; round < plan->thr_rounds; round++)
			ratio[round] = rates[1][round] / rates[0][round];
		bench_stats(ratio, plan->thr_rounds, &cl[1].r.enq_pair);
		free(ratio);
	}
	for (c = 0; c < ncl; c++) {
		cl[c].r.enq_med = bench_median(rates[c], plan->thr_rounds);
		free(rates[c]);
	}
}

/*
 * Measures one size: raw TCP one-way, blocking write and blocking read on
 * each platform, taking turns rep by rep (the first to go rotating). Each platform's buffer is created
 * once; its first write and read are untimed and checked byte for byte.
 * At 4 KiB it also measures read latency, A and B in alternating blocks.
 */
static void
bench_run_size(struct bench_tcp *tcp, struct bench_cl *cl, int ncl,
    const struct bench_plan *plan, int s, const unsigned char *src,
    unsigned char *dst)
{
	cl_mem	 buf[2] = { NULL, NULL };
	cl_int	 err;
	double	*tt, *tf, *tw[2], *tr[2], *tn[2], t0;
	size_t	 size = bench_sizes[s];
	int	 reps = plan->reps[s], i, c, k, n, done, blk, j;

	bench_note("bandwidth at %s", bench_size_names[s]);
	tt = bench_xmalloc(reps * sizeof *tt);
	tf = bench_xmalloc(reps * sizeof *tf);
	for (c = 0; c < ncl; c++) {
		tw[c] = bench_xmalloc(reps * sizeof *tw[c]);
		tr[c] = bench_xmalloc(reps * sizeof *tr[c]);
		tn[c] = bench_xmalloc(reps * sizeof *tn[c]);
		if (size > cl[c].max_alloc)
			continue;
		buf[c] = clCreateBuffer(cl[c].ctx, CL_MEM_READ_WRITE, size,
		    NULL, &err);
		bench_check(err, "clCreateBuffer");
		bench_check(clEnqueueWriteBuffer(cl[c].queue, buf[c], CL_TRUE,
		    0, size, src, 0, NULL, NULL), "clEnqueueWriteBuffer");
		memset(dst, 0, size);
		bench_check(clEnqueueReadBuffer(cl[c].queue, buf[c], CL_TRUE, 0,
		    size, dst, 0, NULL, NULL), "clEnqueueReadBuffer");
		if (memcmp(src, dst, size) != 0)
			bench_fatal("%c: data read back at %s differs from "
			    "data written", cl[c].role, bench_size_names[s]);
	}
	bench_tcp_bulk(tcp, src, size, 0);
	bench_tcp_bulk(tcp, src, size, 1);

	for (i = 0; i < reps; i++) {
		for (k = 0; k <= ncl + 1; k++) {
			c = (i + k) % (ncl + 2);
			if (c >= ncl) {
				t0 = (double)size / bench_tcp_bulk(tcp, src,
				    size, c > ncl) / 1e9;
				if (c > ncl)
					tf[i] = t0;
				else
					tt[i] = t0;
				continue;
			}
			if (buf[c] == NULL)
				continue;
			/*
			 * A blocking write may return once its bytes are
			 * sent (VCL's does): it is timed through a clFinish,
			 * until its bytes are on the device, as raw TCP's
			 * one-way until the receiver's ack; so the read is
			 * timed alone, not with the write's rest.
			 */
			t0 = bench_now();
			bench_check(clEnqueueWriteBuffer(cl[c].queue, buf[c],
			    CL_TRUE, 0, size, src, 0, NULL, NULL),
			    "clEnqueueWriteBuffer");
			if (bench_sent)
				tw[c][i] = (double)size / (bench_now() - t0) /
				    1e9;
			bench_check(clFinish(cl[c].queue), "clFinish");
			if (!bench_sent)
				tw[c][i] = (double)size / (bench_now() - t0) /
				    1e9;
			t0 = bench_now();
			bench_check(clEnqueueReadBuffer(cl[c].queue, buf[c],
			    CL_TRUE, 0, size, dst, 0, NULL, NULL),
			    "clEnqueueReadBuffer");
			tr[c][i] = (double)size / (bench_now() - t0) / 1e9;
			/* Non-blocking, as applications that overlap read. */
			t0 = bench_now();
			bench_check(clEnqueueReadBuffer(cl[c].queue, buf[c],
			    CL_FALSE, 0, size, dst, 0, NULL, NULL),
			    "clEnqueueReadBuffer");
			bench_check(clFinish(cl[c].queue), "clFinish");
			tn[c][i] = (double)size / (bench_now() - t0) / 1e9;
		}
	}
	tcp->gbs[s] = bench_median(tt, reps);
	tcp->full_gbs[s] = bench_median(tf, reps);
	tcp->have[s] = 1;
	for (c = 0; c < ncl; c++) {
		if (buf[c] == NULL)
			continue;
		cl[c].r.write_gbs[s] = bench_median(tw[c], reps);
		cl[c].r.read_gbs[s] = bench_median(tr[c], reps);
		cl[c].r.nbread_gbs[s] = bench_median(tn[c], reps);
		cl[c].r.have[s] = 1;
	}

	if (size == 4 * BENCH_KIB) {
		n = plan->rd4k_iters;
		for (c = 0; c < ncl; c++) {
			free(tr[c]);
			tr[c] = bench_xmalloc(n * sizeof *tr[c]);
		}
		for (done = 0, j = 0; done < n; done += blk, j++) {
			blk = n - done < BENCH_BLOCK ? n - done : BENCH_BLOCK;
			for (i = 0; i < ncl; i++) {
				c = (j + i) % ncl;
				if (buf[c] != NULL)
					bench_cl_read_n(&cl[c], buf[c], dst,
					    size, blk, tr[c] + done);
			}
		}
		for (c = 0; c < ncl; c++) {
			if (buf[c] != NULL)
				bench_stats(tr[c], n, &cl[c].r.read4k_us);
		}
	}

	for (c = 0; c < ncl; c++) {
		if (buf[c] != NULL)
			bench_check(clReleaseMemObject(buf[c]),
			    "clReleaseMemObject");
		free(tw[c]);
		free(tr[c]);
		free(tn[c]);
	}
	free(tt);
	free(tf);
}

/* Prints the raw TCP section. */
static void
bench_print_tcp(const struct bench_tcp *tcp, const struct bench_plan *plan)
{
	int	s;

	printf("Raw TCP loopback (127.0.0.1, TCP_NODELAY, SO_SNDBUF %d, "
	    "SO_RCVBUF %d as granted)\n", tcp->sndbuf, tcp->rcvbuf);
	printf("  round trip, 1 byte, median of %d  %9.1f us  (p10 %.1f, "
	    "p90 %.1f)\n", plan->lat_iters, tcp->rtt_us.med, tcp->rtt_us.p10,
	    tcp->rtt_us.p90);
	bench_csv_row("tcp_rtt", 1, "tcp", tcp->rtt_us.med, "us");
	printf("  one-way bandwidth, write() loop until 1-byte ack, median; "
	    "the receiver reads\n  into a 4 MiB buffer again and again "
	    "(raw TCP), or into one of the bulk's size (full):\n");
	for (s = 0; s < plan->nsizes; s++) {
		printf("    %-8s %4d reps  %10.2f GB/s  full %10.2f GB/s\n",
		    bench_size_names[s], plan->reps[s], tcp->gbs[s],
		    tcp->full_gbs[s]);
		bench_csv_row("tcp_bw", bench_sizes[s], "tcp", tcp->gbs[s],
		    "GB/s");
		bench_csv_row("tcp_bw_full", bench_sizes[s], "tcp",
		    tcp->full_gbs[s], "GB/s");
	}
	printf("\n");
}

/* Prints the platforms under test. */
static void
bench_print_header(struct bench_cl *cl, int ncl, const char *plan)
{
	int	i;

	printf("vclbench%s: %s\n", plan,
	    ncl == 1 ? "one platform" : "B measured against native A");
	for (i = 0; i < ncl; i++) {
		printf("  %c = %s / %s (max alloc %llu MiB)\n", cl[i].role,
		    cl[i].pname, cl[i].dname,
		    (unsigned long long)(cl[i].max_alloc / BENCH_MIB));
	}
	printf("  raw TCP%s take turns: latencies in blocks of %d, bandwidths "
	    "rep by rep\n", ncl == 2 ? ", A and B" : " and A", BENCH_BLOCK);
	printf("  %s\n", bench_sent ? "--sent: writes timed until the call "
	    "returns, reads with the write's rest" : "writes timed through "
	    "a clFinish, until their bytes are on the device");
	printf("\n");
}

/*
 * Prints one latency line per platform with its spread; B gets its ratio to
 * A and the difference expressed in TCP round trips.
 */
static void
bench_print_latency(const char *section, size_t size, struct bench_cl *cl,
    int ncl, const struct bench_stat *v, double rtt_us)
{
	char	label[512], rbuf[32];
	int	i;

	for (i = 0; i < ncl; i++) {
		printf("  %c %-30.30s %9.1f us  (p10 %.1f, p90 %.1f)",
		    cl[i].role, cl[i].pname, v[i].med, v[i].p10, v[i].p90);
		bench_cl_label(&cl[i], label, sizeof label);
		bench_csv_row(section, size, label, v[i].med, "us");
		if (i == 1) {
			printf("  %s native = native %+.1f TCP round trips",
			    bench_ratio(rbuf, sizeof rbuf, v[1].med / v[0].med),
			    (v[1].med - v[0].med) / rtt_us);
			bench_csv_row(section, size, label, v[1].med / v[0].med,
			    "x_native");
			bench_csv_row(section, size, label,
			    (v[1].med - v[0].med) / rtt_us,
			    "tcp_rtts_over_native");
		}
		printf("\n");
	}
}

/* Prints the enqueue latency and throughput sections. */
static void
bench_print_enqueue(struct bench_cl *cl, int ncl, const struct bench_tcp *tcp,
    const struct bench_plan *plan)
{
	struct bench_stat	v[2];
	char			label[512], rbuf[32];
	int			i;

	printf("Enqueue + clFinish latency, tiny kernel, median of %d after "
	    "%d warm-up\n", plan->lat_iters, plan->lat_warm);
	for (i = 0; i < ncl; i++)
		v[i] = cl[i].r.latency_us;
	bench_print_latency("latency", 0, cl, ncl, v, tcp->rtt_us.med);
	printf("\n");

	printf("Enqueue throughput, %d x clEnqueueNDRangeKernel (global 1, no "
	    "event) + 1 clFinish, best (median) of %d rounds\n",
	    plan->thr_enqueues, plan->thr_rounds);
	for (i = 0; i < ncl; i++) {
		printf("  %c %-32.32s %10.0f enqueues/s (%.0f)", cl[i].role,
		    cl[i].pname, cl[i].r.enq_per_s, cl[i].r.enq_med);
		bench_cl_label(&cl[i], label, sizeof label);
		bench_csv_row("throughput", 0, label, cl[i].r.enq_per_s,
		    "enqueues/s");
		bench_csv_row("throughput_median", 0, label, cl[i].r.enq_med,
		    "enqueues/s");
		if (i == 1) {
			printf("   %s native", bench_ratio(rbuf, sizeof rbuf,
			    cl[1].r.enq_per_s / cl[0].r.enq_per_s));
			printf(" (%s)", bench_ratio(rbuf, sizeof rbuf,
			    cl[1].r.enq_med / cl[0].r.enq_med));
			bench_csv_row("throughput", 0, label,
			    cl[1].r.enq_per_s / cl[0].r.enq_per_s, "x_native");
			bench_csv_row("throughput_median", 0, label,
			    cl[1].r.enq_med / cl[0].r.enq_med, "x_native");
			bench_csv_row("throughput_pairs", 0, label,
			    cl[1].r.enq_pair.med, "x_native");
			printf("\n    round by round: median %.3fx of A's "
			    "round beside it (p10 %.3fx, p90 %.3fx)",
			    cl[1].r.enq_pair.med, cl[1].r.enq_pair.p10,
			    cl[1].r.enq_pair.p90);
		}
		printf("\n");
	}
	printf("\n");
}

/*
 * Prints one raw TCP figure of a bandwidth table and the last platform's
 * ratio to it (gbs < 0: the platform skipped that size).
 */
static void
bench_print_tcp_ratio(const char *section, int s, double gbs,
    const char *label, double tcp_gbs, const char *unit)
{
	char	rbuf[32];

	printf(" %10.2f", tcp_gbs);
	if (gbs < 0) {
		printf(" %10s", "-");
		return;
	}
	printf(" %10s", bench_ratio(rbuf, sizeof rbuf, gbs / tcp_gbs));
	bench_csv_row(section, bench_sizes[s], label, gbs / tcp_gbs, unit);
}

/*
 * Prints a bandwidth table: write (is_read 0), read (1) or non-blocking
 * read (2). The last platform (B, or the only one) gets its ratio to raw
 * TCP; B also gets its ratio to A.
 */
static void
bench_print_bw(const char *title, const char *section, struct bench_cl *cl,
    int ncl, const struct bench_tcp *tcp, const struct bench_plan *plan,
    int is_read)
{
	struct bench_cl	*last = &cl[ncl - 1];
	const double	*v[2];
	char		 label[2][512], rbuf[32];
	int		 s, i;

	for (i = 0; i < ncl; i++) {
		v[i] = is_read == 2 ? cl[i].r.nbread_gbs : is_read ?
		    cl[i].r.read_gbs : cl[i].r.write_gbs;
		bench_cl_label(&cl[i], label[i], sizeof label[i]);
	}
	printf("%s, GB/s (1e9 bytes/s), median\n", title);
	printf("  %-8s %5s %10s", "size", "reps", "A");
	if (ncl == 2)
		printf(" %10s %10s", "B", "B/A");
	printf(" %10s %10s %10s %10s\n", "raw TCP", ncl == 2 ? "B/TCP" :
	    "A/TCP", "full", ncl == 2 ? "B/full" : "A/full");
	for (s = 0; s < plan->nsizes; s++) {
		printf("  %-8s %5d", bench_size_names[s], plan->reps[s]);
		for (i = 0; i < ncl; i++) {
			if (cl[i].r.have[s]) {
				printf(" %10.2f", v[i][s]);
				bench_csv_row(section, bench_sizes[s],
				    label[i], v[i][s], "GB/s");
			} else
				printf(" %10s", "skipped");
		}
		if (ncl == 2) {
			if (cl[0].r.have[s] && cl[1].r.have[s]) {
				printf(" %10s", bench_ratio(rbuf, sizeof rbuf,
				    v[1][s] / v[0][s]));
				bench_csv_row(section, bench_sizes[s],
				    label[1], v[1][s] / v[0][s], "x_native");
			} else
				printf(" %10s", "-");
		}
		bench_print_tcp_ratio(section, s, last->r.have[s] ?
		    v[ncl - 1][s] : -1, label[ncl - 1], tcp->gbs[s], "x_tcp");
		bench_print_tcp_ratio(section, s, last->r.have[s] ?
		    v[ncl - 1][s] : -1, label[ncl - 1], tcp->full_gbs[s],
		    "x_tcp_full");
		printf("\n");
	}
	printf("\n");
}

/* Prints the 4 KiB read latency section. */
static void
bench_print_read_latency(struct bench_cl *cl, int ncl,
    const struct bench_tcp *tcp, const struct bench_plan *plan)
{
	struct bench_stat	v[2];
	int			i;

	for (i = 0; i < ncl; i++) {
		if (!cl[i].r.have[0])
			return;
		v[i] = cl[i].r.read4k_us;
	}
	printf("4 KiB blocking clEnqueueReadBuffer latency, median of %d\n",
	    plan->rd4k_iters);
	bench_print_latency("read_lat", 4 * BENCH_KIB, cl, ncl, v,
	    tcp->rtt_us.med);
	printf("\n");
}

/* Prints usage and exits. */
static void
bench_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: vclbench [-l] [-a NAME|IDX] [-b NAME|IDX] [--only NAME|IDX]"
	    " [--quick|--bw] [--sent] [--csv FILE]\n"
	    "  -a NAME|IDX     native platform (default \"portable\")\n"
	    "  -b NAME|IDX     platform measured against it (default \"vcl\")\n"
	    "  --only NAME|IDX measure one platform alone\n"
	    "  --quick         sizes up to 16 MiB, fewer iterations\n"
	    "  --bw            every size as in full, few latency and enqueue\n"
	    "                  iterations (bandwidth A/B runs)\n"
	    "  --sent          time a write until the call returns, not through\n"
	    "                  the clFinish after it (tables before this option)\n"
	    "  --csv FILE      also write section,size,platform,value,unit rows\n"
	    "  -l              list the platforms and exit\n"
	    "NAME is a case-insensitive substring of CL_PLATFORM_NAME.\n"
	    "On a small VM, cross-CPU wakeups swing the small-size figures;\n"
	    "pinning vclbench and vclserver to one CPU (taskset) steadies "
	    "them.\n");
	exit(status);
}

/* Parses arguments, runs every measurement, prints the tables. */
int
main(int argc, char **argv)
{
	const struct bench_plan	*plan = &bench_plan_full;
	const char		*spec_a = "portable", *spec_b = "vcl";
	const char		*only = NULL, *csv = NULL;
	struct bench_cl		 cl[2];
	struct bench_tcp	 tcp;
	cl_platform_id		*ids;
	cl_uint			 nplat = 0;
	unsigned char		*src, *dst;
	size_t			 maxsize, i;
	int			 ncl, c, list = 0;

	for (c = 1; c < argc; c++) {
		if (strcmp(argv[c], "-a") == 0 && c + 1 < argc)
			spec_a = argv[++c];
		else if (strcmp(argv[c], "-b") == 0 && c + 1 < argc)
			spec_b = argv[++c];
		else if (strcmp(argv[c], "--only") == 0 && c + 1 < argc)
			only = argv[++c];
		else if (strcmp(argv[c], "--csv") == 0 && c + 1 < argc)
			csv = argv[++c];
		else if (strcmp(argv[c], "--quick") == 0)
			plan = &bench_plan_quick;
		else if (strcmp(argv[c], "--bw") == 0)
			plan = &bench_plan_bw;
		else if (strcmp(argv[c], "--sent") == 0)
			bench_sent = 1;
		else if (strcmp(argv[c], "-l") == 0)
			list = 1;
		else if (strcmp(argv[c], "-h") == 0 ||
		    strcmp(argv[c], "--help") == 0)
			bench_usage(0);
		else
			bench_usage(1);
	}
	signal(SIGPIPE, SIG_IGN);
	bench_progress = isatty(STDERR_FILENO);

	bench_check(clGetPlatformIDs(0, NULL, &nplat), "clGetPlatformIDs");
	if (nplat == 0)
		bench_fatal("no OpenCL platform");
	ids = bench_xmalloc(nplat * sizeof *ids);
	bench_check(clGetPlatformIDs(nplat, ids, NULL), "clGetPlatformIDs");
	if (list) {
		bench_list_platforms(stdout, ids, nplat);
		return (0);
	}

	if (only != NULL) {
		ncl = 1;
		bench_cl_open(&cl[0], 'A', bench_pick_platform(only, ids, nplat));
	} else {
		ncl = 2;
		bench_cl_open(&cl[0], 'A', bench_pick_platform(spec_a, ids,
		    nplat));
		bench_cl_open(&cl[1], 'B', bench_pick_platform(spec_b, ids,
		    nplat));
	}
	if (csv != NULL) {
		if ((bench_csv = fopen(csv, "w")) == NULL)
			bench_fatal("%s: %s", csv, strerror(errno));
		fprintf(bench_csv, "section,size,platform,value,unit\n");
	}

	/* One pattern buffer and one scratch buffer, touched before timing. */
	maxsize = bench_sizes[plan->nsizes - 1];
	src = bench_xmalloc(maxsize);
	dst = bench_xmalloc(maxsize);
	for (i = 0; i < maxsize; i++)
		src[i] = (unsigned char)(i * 2654435761u >> 13);
	memset(dst, 0, maxsize);

	bench_tcp_open(&tcp);
	bench_run_latency(&tcp, cl, ncl, plan);
	bench_run_throughput(cl, ncl, plan);
	for (c = 0; c < plan->nsizes; c++)
		bench_run_size(&tcp, cl, ncl, plan, c, src, dst);
	bench_tcp_close(&tcp);

	bench_print_header(cl, ncl, plan == &bench_plan_quick ? " (quick)" :
	    plan == &bench_plan_bw ? " (--bw: latency and enqueue figures "
	    "from few iterations)" : "");
	bench_print_tcp(&tcp, plan);
	bench_print_enqueue(cl, ncl, &tcp, plan);
	bench_print_bw(bench_sent ? "Write bandwidth, blocking "
	    "clEnqueueWriteBuffer" : "Write bandwidth, blocking "
	    "clEnqueueWriteBuffer + clFinish", "write_bw", cl, ncl, &tcp,
	    plan, 0);
	bench_print_bw("Read bandwidth, blocking clEnqueueReadBuffer",
	    "read_bw", cl, ncl, &tcp, plan, 1);
	bench_print_bw("Read bandwidth, non-blocking clEnqueueReadBuffer + "
	    "clFinish", "nbread_bw", cl, ncl, &tcp, plan, 2);
	bench_print_read_latency(cl, ncl, &tcp, plan);

	for (c = 0; c < ncl; c++)
		bench_cl_close(&cl[c]);
	if (bench_csv != NULL && fclose(bench_csv) != 0)
		bench_fatal("%s: %s", csv, strerror(errno));
	free(src);
	free(dst);
	free(ids);
	return (0);
}
