/* busy_client.c - test helper: an OpenCL client that keeps a server busy. */

/*
 * session_test runs this through libvcl and SIGKILLs it while its commands
 * are in flight, to check the server releases what a vanished client held.
 * It prints "ready" on stdout once its objects exist and work has completed
 * once, then enqueues writes and kernels forever. Errors go to stderr with
 * exit status 1, so the test sees the end of stdout instead of "ready".
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>

#define BUSY_ELEMS	(256u * 1024u)	/* floats per buffer (1 MiB) */
#define BUSY_NBUF	4
#define BUSY_BATCH	16		/* commands between finishes */

static const char *source =
	"__kernel void\n"
	"spin(__global float *a, const unsigned int n)\n"
	"{\n"
	"	size_t	i = get_global_id(0);\n"
	"	float	x = a[i];\n"
	"\n"
	"	for (unsigned int k = 0; k < n; k++)\n"
	"		x = x * 0.999f + 0.5f;\n"
	"	a[i] = x;\n"
	"}\n";

static float	host[BUSY_ELEMS];

/* Exit with a message naming the OpenCL call when it failed. */
static void
check(cl_int err, const char *call)
{
	if (err == CL_SUCCESS)
		return;
	fprintf(stderr, "busy_client: %s failed: error %d\n", call, (int)err);
	exit(1);
}

int
main(void)
{
	cl_platform_id		 platform;
	cl_device_id		 dev;
	cl_context		 ctx;
	cl_command_queue	 queue;
	cl_program		 prog;
	cl_kernel		 kernel;
	cl_mem			 buf[BUSY_NBUF];
	cl_uint			 n = 0, iters = 64;
	cl_int			 err;
	size_t			 bytes = sizeof host, global = BUSY_ELEMS;
	size_t			 i;
	unsigned long		 round;
	int			 ready = 0;

	for (i = 0; i < BUSY_ELEMS; i++)
		host[i] = (float)i;
	check(clGetPlatformIDs(1, &platform, &n), "clGetPlatformIDs");
	if (n == 0) {
		fprintf(stderr, "busy_client: no OpenCL platform\n");
		return (1);
	}
	check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL),
	    "clGetDeviceIDs");
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	check(err, "clCreateContext");
	queue = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	check(err, "clCreateCommandQueueWithProperties");
	for (i = 0; i < BUSY_NBUF; i++) {
		buf[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE |
		    (i % 2 == 0 ? CL_MEM_COPY_HOST_PTR : 0), bytes,
		    i % 2 == 0 ? host : NULL, &err);
		check(err, "clCreateBuffer");
	}
	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	check(err, "clCreateProgramWithSource");
	check(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL),
	    "clBuildProgram");
	kernel = clCreateKernel(prog, "spin", &err);
	check(err, "clCreateKernel");
	check(clSetKernelArg(kernel, 1, sizeof iters, &iters),
	    "clSetKernelArg");

	for (round = 0;; round++) {
		check(clEnqueueWriteBuffer(queue, buf[round % BUSY_NBUF],
		    CL_FALSE, 0, bytes, host, 0, NULL, NULL),
		    "clEnqueueWriteBuffer");
		check(clSetKernelArg(kernel, 0, sizeof buf[0],
		    &buf[(round + 1) % BUSY_NBUF]), "clSetKernelArg");
		check(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global,
		    NULL, 0, NULL, NULL), "clEnqueueNDRangeKernel");
		check(clFlush(queue), "clFlush");
		if (round % BUSY_BATCH != BUSY_BATCH - 1)
			continue;
		check(clFinish(queue), "clFinish");
		if (!ready) {
			printf("ready\n");
			fflush(stdout);
			ready = 1;
		}
	}
	/* NOTREACHED */
}
