/*
 * clprobe.c - what a runtime's calls cost, measured on the native platform
 * alone: the facts VCL's server is designed around. For a tiny kernel,
 * enqueue + clFinish against the ways a server can wait for it (a marker
 * and clWaitForEvents on the same thread, on another thread woken by a
 * condition variable, a completion callback); small reads likewise; a
 * kernel enqueue whose wait list names another queue's running kernel
 * (does the runtime block in it?); and 64 MiB copies from pageable memory,
 * a memfd mapping, a mapped CL_MEM_ALLOC_HOST_PTR buffer and a memfd
 * mapping that is the host_ptr of a CL_MEM_USE_HOST_PTR buffer, beside
 * memcpy.
 *
 *   clprobe [-p NAME] [-n N]
 *
 * -p picks the platform whose name contains NAME (default: the first).
 */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif

#include <sys/mman.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CL/cl.h>

#define COPY_SIZE	(64u << 20)
#define LAT_MAX		100000

static cl_command_queue	q, q2;
static cl_kernel	tiny, spin;
static double		lat[LAT_MAX];
static int		nlat = 2000;

/* The waiter thread's hand-off. */
static pthread_mutex_t	mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	go_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t	done_cv = PTHREAD_COND_INITIALIZER;
static cl_event		hand_ev;
static int		go, done;

/* Now, in microseconds. */
static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3);
}

/* qsort comparator for doubles. */
static int
cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/* Print the distribution of lat[]. */
static void
report(const char *what)
{
	qsort(lat, (size_t)nlat, sizeof lat[0], cmp);
	printf("  %-40s p10 %7.1f  p50 %7.1f  p90 %7.1f us\n", what,
	    lat[nlat / 10], lat[nlat / 2], lat[nlat * 9 / 10]);
	fflush(stdout);
}

/* Tell the waiting thread the hand-off is done. */
static void
signal_done(void)
{
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_signal(&done_cv);
	pthread_mutex_unlock(&mu);
}

/* Wait for signal_done. */
static void
wait_done(void)
{
	pthread_mutex_lock(&mu);
	while (!done)
		pthread_cond_wait(&done_cv, &mu);
	done = 0;
	pthread_mutex_unlock(&mu);
}

/* Waiter thread: clWaitForEvents on each event handed over. */
static void *
waiter(void *arg)
{
	cl_event	ev;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (!go)
			pthread_cond_wait(&go_cv, &mu);
		go = 0;
		ev = hand_ev;
		pthread_mutex_unlock(&mu);
		clWaitForEvents(1, &ev);
		signal_done();
	}
	return (NULL);
}

/* Hand ev to the waiter thread and wait until it saw it complete. */
static void
hand_off(cl_event ev)
{
	pthread_mutex_lock(&mu);
	hand_ev = ev;
	go = 1;
	pthread_cond_signal(&go_cv);
	pthread_mutex_unlock(&mu);
	wait_done();
}

/* Completion callback: wake the enqueuing thread. */
static void CL_CALLBACK
callback(cl_event ev, cl_int status, void *arg)
{
	(void)ev;
	(void)status;
	(void)arg;
	signal_done();
}

/* Enqueue the tiny kernel on q, with an event when ev is not NULL. */
static void
launch(cl_event *ev)
{
	static const size_t	one = 1;

	clEnqueueNDRangeKernel(q, tiny, 1, NULL, &one, NULL, 0, NULL, ev);
}

/* The ways to wait for a tiny kernel, and small reads. */
static void
latency(cl_mem buf)
{
	static uint8_t	bytes[4096];
	cl_event	ev;
	double		t;
	int		i;

	printf("Tiny kernel: enqueue, then wait for it (%d times)\n", nlat);
	for (i = 0; i < 200; i++) {
		launch(NULL);
		clFinish(q);
	}
	for (i = 0; i < nlat; i++) {
		t = now();
		launch(NULL);
		clFinish(q);
		lat[i] = now() - t;
	}
	report("clFinish");
	for (i = 0; i < nlat; i++) {
		t = now();
		launch(NULL);
		lat[i] = now() - t;
		clFinish(q);
	}
	report("the enqueue alone");
	for (i = 0; i < nlat; i++) {
		t = now();
		launch(NULL);
		clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
		clFlush(q);
		clWaitForEvents(1, &ev);
		lat[i] = now() - t;
		clReleaseEvent(ev);
	}
	report("marker, flush, clWaitForEvents");
	for (i = 0; i < nlat; i++) {
		t = now();
		launch(NULL);
		clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
		clFlush(q);
		hand_off(ev);
		lat[i] = now() - t;
		clReleaseEvent(ev);
	}
	report("marker, flush, waiter thread waits");
	for (i = 0; i < nlat; i++) {
		t = now();
		launch(NULL);
		clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
		clSetEventCallback(ev, CL_COMPLETE, callback, NULL);
		clFlush(q);
		wait_done();
		lat[i] = now() - t;
		clReleaseEvent(ev);
	}
	report("marker, callback");
	printf("4 KiB read\n");
	for (i = 0; i < nlat; i++) {
		t = now();
		clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof bytes, bytes, 0,
		    NULL, NULL);
		lat[i] = now() - t;
	}
	report("blocking");
	for (i = 0; i < nlat; i++) {
		t = now();
		clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof bytes, bytes, 0,
		    NULL, &ev);
		clFlush(q);
		clWaitForEvents(1, &ev);
		lat[i] = now() - t;
		clReleaseEvent(ev);
	}
	report("non-blocking, clWaitForEvents");
	for (i = 0; i < nlat; i++) {
		t = now();
		clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof bytes, bytes, 0,
		    NULL, &ev);
		clFlush(q);
		hand_off(ev);
		lat[i] = now() - t;
		clReleaseEvent(ev);
	}
	report("non-blocking, waiter thread waits");
}

/* An enqueue on q naming a kernel still running on q2. */
static void
cross_queue(void)
{
	static const size_t	one = 1;
	cl_event		ev;
	cl_int			n = 4000000;
	double			t0, t1, t2, t3;
	int			i;

	printf("Enqueue whose wait list names a running kernel of another "
	    "queue\n");
	clSetKernelArg(spin, 1, sizeof n, &n);
	for (i = 0; i < 3; i++) {
		clEnqueueNDRangeKernel(q2, spin, 1, NULL, &one, NULL, 0, NULL,
		    &ev);
		clFlush(q2);
		t0 = now();
		clEnqueueNDRangeKernel(q, tiny, 1, NULL, &one, NULL, 1, &ev,
		    NULL);
		t1 = now();
		clFlush(q);
		t2 = now();
		clFinish(q);
		t3 = now();
		printf("  enqueue %.1f us, flush %.1f us, then the wait %.0f us "
		    "(the other queue's kernel)\n", t1 - t0, t2 - t1, t3 - t2);
		clReleaseEvent(ev);
	}
}

/* GB/s of size bytes in us microseconds. */
static double
gbs(size_t size, double us)
{
	return ((double)size / us / 1e3);
}

/* 64 MiB between the device and several kinds of host memory. */
static int
copies(cl_context ctx)
{
	const char	*name[4] = { "malloc", "memfd mapping",
			    "ALLOC_HOST_PTR, mapped",
			    "memfd, USE_HOST_PTR buffer's" };
	char		*host[4], *other;
	cl_mem		 dev, ah, uh;
	cl_int		 err;
	double		 t, w, r;
	int		 fd[2], i, k;

	dev = clCreateBuffer(ctx, CL_MEM_READ_WRITE, COPY_SIZE, NULL, &err);
	if (err != CL_SUCCESS)
		return (-1);
	host[0] = malloc(COPY_SIZE);
	other = malloc(COPY_SIZE);
	for (i = 0; i < 2; i++) {
		fd[i] = memfd_create("clprobe", 0);
		if (fd[i] == -1 || ftruncate(fd[i], COPY_SIZE) != 0)
			return (-1);
	}
	host[1] = mmap(NULL, COPY_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd[0], 0);
	ah = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, COPY_SIZE, NULL, &err);
	host[2] = err == CL_SUCCESS ? clEnqueueMapBuffer(q, ah, CL_TRUE,
	    CL_MAP_READ | CL_MAP_WRITE, 0, COPY_SIZE, 0, NULL, NULL, &err) :
	    NULL;
	host[3] = mmap(NULL, COPY_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd[1], 0);
	if (host[0] == NULL || other == NULL || host[1] == MAP_FAILED ||
	    host[2] == NULL || host[3] == MAP_FAILED)
		return (-1);
	uh = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE,
	    COPY_SIZE, host[3], &err);
	if (err != CL_SUCCESS)
		uh = NULL;
	for (i = 0; i < 4; i++)
		memset(host[i], i + 1, COPY_SIZE);
	memset(other, 0, COPY_SIZE);
	printf("64 MiB copies, GB/s (blocking; second of two passes)\n");
	for (k = 0; k < 2; k++) {
		t = now();
		memcpy(other, host[0], COPY_SIZE);
		t = now() - t;
		if (k == 1)
			printf("  %-32s %6.2f\n", "host memcpy", gbs(COPY_SIZE,
			    t));
		for (i = 0; i < 4; i++) {
			if (i == 3 && uh == NULL)
				continue;
			t = now();
			clEnqueueWriteBuffer(q, dev, CL_TRUE, 0, COPY_SIZE,
			    host[i], 0, NULL, NULL);
			w = now() - t;
			t = now();
			clEnqueueReadBuffer(q, dev, CL_TRUE, 0, COPY_SIZE,
			    host[i], 0, NULL, NULL);
			r = now() - t;
			if (k == 1)
				printf("  %-32s write %6.2f  read %6.2f\n",
				    name[i], gbs(COPY_SIZE, w),
				    gbs(COPY_SIZE, r));
		}
	}
	if (uh == NULL)
		printf("  (the runtime refused a USE_HOST_PTR buffer)\n");
	return (0);
}

int
main(int argc, char **argv)
{
	static const char	*src =
	    "__kernel void tiny(__global int *a) { a[0] += 1; }\n"
	    "__kernel void spin(__global int *a, int n) {\n"
	    "	int x = a[0];\n"
	    "	for (int i = 0; i < n; i++) x = x * 1664525 + 1013904223;\n"
	    "	a[1] = x;\n"
	    "}\n";
	const char		*want = NULL;
	cl_platform_id		 plats[16], plat;
	cl_uint			 nplat = 0, i;
	cl_device_id		 dev;
	cl_context		 ctx;
	cl_program		 prog;
	cl_mem			 buf;
	cl_int			 err;
	pthread_t		 th;
	char			 name[256];
	int			 ch;

	while ((ch = getopt(argc, argv, "p:n:")) != -1) {
		switch (ch) {
		case 'p':
			want = optarg;
			break;
		case 'n':
			nlat = atoi(optarg);
			if (nlat < 10 || nlat > LAT_MAX) {
				fprintf(stderr, "clprobe: -n 10 to %d\n",
				    LAT_MAX);
				return (2);
			}
			break;
		default:
			fprintf(stderr, "usage: clprobe [-p NAME] [-n N]\n");
			return (2);
		}
	}
	if (clGetPlatformIDs(16, plats, &nplat) != CL_SUCCESS || nplat == 0) {
		fprintf(stderr, "clprobe: no OpenCL platform\n");
		return (1);
	}
	plat = plats[0];
	for (i = 0; want != NULL && i < nplat; i++) {
		if (clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name,
		    name, NULL) == CL_SUCCESS && strcasestr(name, want) != NULL)
			plat = plats[i];
	}
	if (clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) !=
	    CL_SUCCESS) {
		fprintf(stderr, "clprobe: no device\n");
		return (1);
	}
	clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof name, name, NULL);
	printf("platform %s, ", name);
	clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
	printf("device %s\n", name);
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	if (err != CL_SUCCESS)
		return (1);
	q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	q2 = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err != CL_SUCCESS || clBuildProgram(prog, 1, &dev, NULL, NULL,
	    NULL) != CL_SUCCESS) {
		fprintf(stderr, "clprobe: build failed\n");
		return (1);
	}
	tiny = clCreateKernel(prog, "tiny", &err);
	spin = clCreateKernel(prog, "spin", &err);
	buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
	clSetKernelArg(tiny, 0, sizeof buf, &buf);
	clSetKernelArg(spin, 0, sizeof buf, &buf);
	if (pthread_create(&th, NULL, waiter, NULL) != 0)
		return (1);
	latency(buf);
	cross_queue();
	if (copies(ctx) != 0) {
		fprintf(stderr, "clprobe: copies: out of memory\n");
		return (1);
	}
	return (0);
}
