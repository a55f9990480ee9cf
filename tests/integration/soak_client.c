/* soak_client.c - test helper: a client of the soak test, through libvcl. */

/*
 * usage: soak_client work SECONDS SEED
 *        soak_client lat SECONDS
 *
 * work: on every device of the platform (VCL_NODES names the servers),
 * rounds of: buffers of a random size, a kernel c = a * k + b on one
 * device, the result moved to another device and scaled there (a migration
 * when the devices live on different nodes), read back and every element
 * checked; everything released each round. Until SECONDS have passed.
 * lat: one device, a blocking 4-byte write then read, timed each time;
 * prints "lat n=N p50_us=X p99_us=Y max_us=Z" at the end.
 *
 * Exit status: 0 all rounds right; 2 a wrong result (never acceptable);
 * 3 an OpenCL call failed (acceptable only where a node was lost: the test
 * decides). Never hangs by design: a hang is libvcl's fault.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CL/cl.h>

#define SOAK_MAXDEV	8
#define SOAK_MAXN	(256u * 1024u)	/* ints per buffer, at most 1 MiB */
#define SOAK_LATMAX	200000		/* latency samples kept */

static const char *source =
	"__kernel void\n"
	"axpb(__global const int *a, __global const int *b, __global int *c,\n"
	"    const int k)\n"
	"{\n"
	"	size_t	i = get_global_id(0);\n"
	"\n"
	"	c[i] = a[i] * k + b[i];\n"
	"}\n"
	"__kernel void\n"
	"twice(__global int *c)\n"
	"{\n"
	"	size_t	i = get_global_id(0);\n"
	"\n"
	"	c[i] = c[i] * 2;\n"
	"}\n";

/* Seconds since an arbitrary start, monotonic. */
static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/* Exit 3 with a message naming the call when it failed. */
static void
ok(cl_int err, const char *call)
{
	if (err == CL_SUCCESS)
		return;
	fprintf(stderr, "soak_client: %s failed: error %d\n", call, (int)err);
	exit(3);
}

/* One round: compute on device i, double on device j, check, release. */
static void
round_once(cl_context ctx, cl_command_queue *q, cl_program prog, cl_uint i,
    cl_uint j, unsigned *seed)
{
	cl_kernel	 ka, kt;
	cl_mem		 a, b, c;
	cl_int		 err, k;
	size_t		 n, x, bytes;
	int		*ha, *hb, *hc;

	n = 1 + (size_t)rand_r(seed) % SOAK_MAXN;
	k = (cl_int)(rand_r(seed) % 1000) - 500;
	bytes = n * sizeof (int);
	if ((ha = malloc(bytes)) == NULL || (hb = malloc(bytes)) == NULL ||
	    (hc = malloc(bytes)) == NULL) {
		fprintf(stderr, "soak_client: out of memory\n");
		exit(3);
	}
	for (x = 0; x < n; x++) {
		ha[x] = (int)(rand_r(seed) % 20001) - 10000;
		hb[x] = (int)(rand_r(seed) % 20001) - 10000;
	}
	a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
	    ha, &err);
	ok(err, "clCreateBuffer a");
	b = clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &err);
	ok(err, "clCreateBuffer b");
	c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
	ok(err, "clCreateBuffer c");
	ok(clEnqueueWriteBuffer(q[i], b, CL_FALSE, 0, bytes, hb, 0, NULL,
	    NULL), "clEnqueueWriteBuffer");
	ka = clCreateKernel(prog, "axpb", &err);
	ok(err, "clCreateKernel axpb");
	kt = clCreateKernel(prog, "twice", &err);
	ok(err, "clCreateKernel twice");
	ok(clSetKernelArg(ka, 0, sizeof a, &a), "clSetKernelArg 0");
	ok(clSetKernelArg(ka, 1, sizeof b, &b), "clSetKernelArg 1");
	ok(clSetKernelArg(ka, 2, sizeof c, &c), "clSetKernelArg 2");
	ok(clSetKernelArg(ka, 3, sizeof k, &k), "clSetKernelArg 3");
	ok(clSetKernelArg(kt, 0, sizeof c, &c), "clSetKernelArg twice");
	ok(clEnqueueNDRangeKernel(q[i], ka, 1, NULL, &n, NULL, 0, NULL, NULL),
	    "clEnqueueNDRangeKernel axpb");
	ok(clFinish(q[i]), "clFinish");
	ok(clEnqueueNDRangeKernel(q[j], kt, 1, NULL, &n, NULL, 0, NULL, NULL),
	    "clEnqueueNDRangeKernel twice");
	ok(clEnqueueReadBuffer(q[j], c, CL_TRUE, 0, bytes, hc, 0, NULL, NULL),
	    "clEnqueueReadBuffer");
	for (x = 0; x < n; x++) {
		if (hc[x] != (ha[x] * k + hb[x]) * 2) {
			fprintf(stderr, "soak_client: wrong result at %zu of "
			    "%zu: %d, expected %d\n", x, n, hc[x],
			    (ha[x] * k + hb[x]) * 2);
			exit(2);
		}
	}
	ok(clReleaseKernel(ka), "clReleaseKernel");
	ok(clReleaseKernel(kt), "clReleaseKernel");
	ok(clReleaseMemObject(a), "clReleaseMemObject");
	ok(clReleaseMemObject(b), "clReleaseMemObject");
	ok(clReleaseMemObject(c), "clReleaseMemObject");
	free(ha);
	free(hb);
	free(hc);
}

/* Rounds across every device until the time is up. */
static int
work(double seconds, unsigned seed)
{
	cl_platform_id		 platform;
	cl_device_id		 dev[SOAK_MAXDEV];
	cl_command_queue	 q[SOAK_MAXDEV];
	cl_context		 ctx;
	cl_program		 prog;
	cl_uint			 ndev = 0, i, n = 0;
	cl_int			 err;
	double			 end = now() + seconds;
	unsigned long		 rounds = 0;

	ok(clGetPlatformIDs(1, &platform, &n), "clGetPlatformIDs");
	if (n == 0)
		ok(CL_INVALID_PLATFORM, "clGetPlatformIDs (none)");
	ok(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, SOAK_MAXDEV, dev,
	    &ndev), "clGetDeviceIDs");
	if (ndev > SOAK_MAXDEV)
		ndev = SOAK_MAXDEV;
	ctx = clCreateContext(NULL, ndev, dev, NULL, NULL, &err);
	ok(err, "clCreateContext");
	for (i = 0; i < ndev; i++) {
		q[i] = clCreateCommandQueueWithProperties(ctx, dev[i], NULL,
		    &err);
		ok(err, "clCreateCommandQueueWithProperties");
	}
	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	ok(err, "clCreateProgramWithSource");
	ok(clBuildProgram(prog, ndev, dev, NULL, NULL, NULL),
	    "clBuildProgram");
	do {
		i = (cl_uint)(rand_r(&seed) % ndev);
		round_once(ctx, q, prog, i, (i + 1) % ndev, &seed);
		rounds++;
	} while (now() < end);
	ok(clReleaseProgram(prog), "clReleaseProgram");
	for (i = 0; i < ndev; i++)
		ok(clReleaseCommandQueue(q[i]), "clReleaseCommandQueue");
	ok(clReleaseContext(ctx), "clReleaseContext");
	printf("work rounds=%lu devices=%u\n", rounds, ndev);
	return (0);
}

/* qsort comparator for doubles. */
static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return ((x > y) - (x < y));
}

/* Blocking 4-byte round trips on one device, timed. */
static int
lat(double seconds)
{
	static double		 t[SOAK_LATMAX];
	cl_platform_id		 platform;
	cl_device_id		 dev;
	cl_command_queue	 q;
	cl_context		 ctx;
	cl_mem			 m;
	cl_uint			 n = 0;
	cl_int			 err, v, back;
	double			 end = now() + seconds, t0;
	size_t			 cnt = 0;

	ok(clGetPlatformIDs(1, &platform, &n), "clGetPlatformIDs");
	if (n == 0)
		ok(CL_INVALID_PLATFORM, "clGetPlatformIDs (none)");
	ok(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL),
	    "clGetDeviceIDs");
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	ok(err, "clCreateContext");
	q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	ok(err, "clCreateCommandQueueWithProperties");
	m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof v, NULL, &err);
	ok(err, "clCreateBuffer");
	for (v = 0; now() < end; v++) {
		t0 = now();
		ok(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof v, &v, 0,
		    NULL, NULL), "clEnqueueWriteBuffer");
		ok(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof back, &back,
		    0, NULL, NULL), "clEnqueueReadBuffer");
		if (back != v) {
			fprintf(stderr, "soak_client: read %d, wrote %d\n",
			    back, v);
			return (2);
		}
		if (cnt < SOAK_LATMAX)
			t[cnt++] = (now() - t0) * 1e6;
	}
	ok(clReleaseMemObject(m), "clReleaseMemObject");
	ok(clReleaseCommandQueue(q), "clReleaseCommandQueue");
	ok(clReleaseContext(ctx), "clReleaseContext");
	if (cnt == 0) {
		fprintf(stderr, "soak_client: no round trip in time\n");
		return (3);
	}
	qsort(t, cnt, sizeof t[0], cmp_double);
	printf("lat n=%zu p50_us=%.0f p99_us=%.0f max_us=%.0f\n", cnt,
	    t[cnt / 2], t[cnt * 99 / 100], t[cnt - 1]);
	return (0);
}

int
main(int argc, char **argv)
{
	double	seconds;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && strcmp(argv[1], "lat") == 0) {
		seconds = strtod(argv[2], NULL);
		return (lat(seconds));
	}
	if (argc == 4 && strcmp(argv[1], "work") == 0) {
		seconds = strtod(argv[2], NULL);
		return (work(seconds, (unsigned)strtoul(argv[3], NULL, 10)));
	}
	fprintf(stderr, "usage: soak_client work SECONDS SEED | "
	    "lat SECONDS\n");
	return (64);
}
