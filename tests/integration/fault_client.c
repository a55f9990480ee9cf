/* fault_client.c - test helper: an OpenCL client whose server fails under it. */

/*
 * client_faults_test runs this through libvcl against servers it kills,
 * stops, or fakes, to check that libvcl returns errors instead of hanging
 * or raising signals in its application. It leaves SIGPIPE as it finds it
 * (the default): a library that writes to a closed socket without
 * MSG_NOSIGNAL kills it.
 *
 *   fault_client xfer MIB	blocking writes, reads (checked) and finishes
 *				of MIB MiB in a loop; "ready" after the first
 *   fault_client kernel MS	one kernel of about MS milliseconds (run again,
 *				rescaled, while one takes under MS/3), then
 *				clFinish; "ok ELAPSED_MS" of the last
 *
 * A failed call prints "error CALL CODE" and exits 3; read bytes that are
 * not the written ones exit 4; setup failures exit 2.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CL/cl.h>

static const char *source =
	"__kernel void\n"
	"spin(__global float *a, const unsigned int n)\n"
	"{\n"
	"	float	x = a[get_global_id(0)];\n"
	"\n"
	"	for (unsigned int k = 0; k < n; k++)\n"
	"		x = x * 0.999f + 0.5f;\n"
	"	a[get_global_id(0)] = x;\n"
	"}\n";

/* Exit with the failed call's name and code. */
static void
fail(cl_int err, const char *call, int status)
{
	printf("error %s %d\n", call, (int)err);
	fflush(stdout);
	exit(status);
}

/* Milliseconds on the monotonic clock. */
static double
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6);
}

/* Transfers in a loop until a call fails. */
static void
xfer(cl_context ctx, cl_command_queue q, size_t bytes)
{
	unsigned char	*out, *in;
	cl_mem		 buf;
	cl_int		 err;
	unsigned long	 round;
	size_t		 i;

	if ((out = malloc(bytes)) == NULL || (in = malloc(bytes)) == NULL) {
		fprintf(stderr, "fault_client: out of memory\n");
		exit(2);
	}
	buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
	if (err != CL_SUCCESS)
		fail(err, "clCreateBuffer", 3);
	for (round = 0;; round++) {
		for (i = 0; i < bytes; i += 4096)
			out[i] = (unsigned char)(round + i / 4096);
		memset(in, 0xa5, bytes);
		if ((err = clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, bytes, out,
		    0, NULL, NULL)) != CL_SUCCESS)
			fail(err, "clEnqueueWriteBuffer", 3);
		if ((err = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, bytes, in,
		    0, NULL, NULL)) != CL_SUCCESS)
			fail(err, "clEnqueueReadBuffer", 3);
		for (i = 0; i < bytes; i += 4096) {
			if (in[i] != out[i]) {
				printf("bad bytes at %zu after a successful "
				    "read\n", i);
				fflush(stdout);
				exit(4);
			}
		}
		if ((err = clFinish(q)) != CL_SUCCESS)
			fail(err, "clFinish", 3);
		if (round == 0) {
			printf("ready\n");
			fflush(stdout);
		}
	}
}

/* Run spin over one work-item with n iterations; its time in ms. */
static double
spin(cl_command_queue q, cl_kernel k, cl_uint n)
{
	size_t	global = 1;
	double	t0 = now_ms();
	cl_int	err;

	if ((err = clSetKernelArg(k, 1, sizeof n, &n)) != CL_SUCCESS)
		fail(err, "clSetKernelArg", 3);
	if ((err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0,
	    NULL, NULL)) != CL_SUCCESS)
		fail(err, "clEnqueueNDRangeKernel", 3);
	if ((err = clFinish(q)) != CL_SUCCESS)
		fail(err, "clFinish", 3);
	return (now_ms() - t0);
}

/* One kernel of about ms milliseconds (calibrated on short runs). */
static void
kernel(cl_context ctx, cl_device_id dev, cl_command_queue q, double ms)
{
	cl_program	 prog;
	cl_kernel	 k;
	cl_mem		 buf;
	cl_int		 err;
	cl_uint		 n = 1 << 16;
	double		 t;
	int		 tries;

	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	if (err != CL_SUCCESS)
		fail(err, "clCreateProgramWithSource", 2);
	if ((err = clBuildProgram(prog, 1, &dev, NULL, NULL, NULL)) !=
	    CL_SUCCESS)
		fail(err, "clBuildProgram", 2);
	if ((k = clCreateKernel(prog, "spin", &err)) == NULL)
		fail(err, "clCreateKernel", 2);
	buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
	if (err != CL_SUCCESS)
		fail(err, "clCreateBuffer", 2);
	if ((err = clSetKernelArg(k, 0, sizeof buf, &buf)) != CL_SUCCESS)
		fail(err, "clSetKernelArg", 2);
	/* Short runs only: each stays far below the call timeout. */
	(void)spin(q, k, n);		/* the first one compiles */
	while ((t = spin(q, k, n)) < 100 && n < (1u << 30))
		n *= 2;
	/*
	 * The short runs may have been slowed by a load that has gone by the
	 * long one: a long run under a third of ms is run again, scaled by
	 * what it took (each run is itself one kernel; the last is reported).
	 */
	for (tries = 0; tries < 4; tries++) {
		t = n * (ms / (t > 1 ? t : 1));
		n = t < 4e9 ? (cl_uint)t : 4000000000u;
		if ((t = spin(q, k, n)) >= ms / 3 || n == 4000000000u)
			break;
	}
	printf("ok %.0f\n", t);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	cl_platform_id		 platform;
	cl_device_id		 dev;
	cl_context		 ctx;
	cl_command_queue	 q;
	cl_int			 err;
	long			 arg;

	if (argc != 3 || (arg = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: fault_client xfer MIB | kernel MS\n");
		return (2);
	}
	if ((err = clGetPlatformIDs(1, &platform, NULL)) != CL_SUCCESS)
		fail(err, "clGetPlatformIDs", 2);
	if ((err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev,
	    NULL)) != CL_SUCCESS)
		fail(err, "clGetDeviceIDs", 2);
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	if (err != CL_SUCCESS)
		fail(err, "clCreateContext", 2);
	q = clCreateCommandQueue(ctx, dev, 0, &err);
	if (err != CL_SUCCESS)
		fail(err, "clCreateCommandQueue", 2);
	if (strcmp(argv[1], "xfer") == 0)
		xfer(ctx, q, (size_t)arg << 20);
	else if (strcmp(argv[1], "kernel") == 0)
		kernel(ctx, dev, q, (double)arg);
	else {
		fprintf(stderr, "fault_client: unknown mode %s\n", argv[1]);
		return (2);
	}
	return (0);
}
