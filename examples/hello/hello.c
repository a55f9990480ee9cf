/* hello.c - the smallest OpenCL program: add two vectors on one device and check the sum. */

#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

const char	*ex_prog = "hello";

static const char *source =
	"__kernel void\n"
	"vadd(__global const float *a, __global const float *b,\n"
	"    __global float *c, const unsigned int n)\n"
	"{\n"
	"	size_t	i = get_global_id(0);\n"
	"\n"
	"	if (i < n)\n"
	"		c[i] = a[i] + b[i];\n"
	"}\n";

/* Return the platform VCL_EXAMPLE_PLATFORM names (index), else the first. */
static cl_platform_id
pick_platform(void)
{
	cl_platform_id	*ids;
	cl_platform_id	 id;
	cl_uint		 n;
	const char	*env;
	long		 idx = 0;

	check(clGetPlatformIDs(0, NULL, &n), "clGetPlatformIDs");
	if (n == 0) {
		fprintf(stderr, "hello: no OpenCL platform\n");
		exit(1);
	}
	if ((env = getenv("VCL_EXAMPLE_PLATFORM")) != NULL && *env != '\0') {
		if ((idx = parse_num(env, 0, (long)n - 1)) < 0) {
			fprintf(stderr, "hello: VCL_EXAMPLE_PLATFORM=%s: want an "
			    "index below %u\n", env, n);
			exit(1);
		}
	}
	if ((ids = calloc(n, sizeof *ids)) == NULL) {
		perror("hello: calloc");
		exit(1);
	}
	check(clGetPlatformIDs(n, ids, NULL), "clGetPlatformIDs");
	id = ids[idx];
	free(ids);
	return (id);
}

/* Print the program's build log to stderr. */
static void
print_build_log(cl_program prog, cl_device_id dev)
{
	size_t	 len = 0;
	char	*log;

	if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL,
	    &len) != CL_SUCCESS || (log = malloc(len + 1)) == NULL)
		return;
	if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, len, log,
	    NULL) == CL_SUCCESS) {
		log[len] = '\0';
		fprintf(stderr, "%s\n", log);
	}
	free(log);
}

/* Print usage and exit. */
static void
usage(void)
{
	fprintf(stderr, "usage: hello [-n elements]\n"
	    "  VCL_EXAMPLE_PLATFORM=index picks a platform other than the "
	    "first\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	cl_platform_id		 platform;
	cl_device_id		 dev;
	cl_context		 ctx;
	cl_command_queue	 queue;
	cl_program		 prog;
	cl_kernel		 kernel;
	cl_mem			 da, db, dc;
	cl_int			 err;
	cl_uint			 n = 1u << 20;
	size_t			 bytes, global, i;
	float			*a, *b, *c;
	char			 name[256];
	long			 v;
	int			 ch;

	while ((ch = getopt(argc, argv, "n:")) != -1) {
		switch (ch) {
		case 'n':
			if ((v = parse_num(optarg, 1, 1L << 30)) < 0)
				usage();
			n = (cl_uint)v;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	platform = pick_platform();
	check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL),
	    "clGetDeviceIDs");
	check(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL),
	    "clGetDeviceInfo(CL_DEVICE_NAME)");
	name[sizeof name - 1] = '\0';

	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	check(err, "clCreateContext");
	queue = clCreateCommandQueue(ctx, dev, 0, &err);
	check(err, "clCreateCommandQueue");
	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	check(err, "clCreateProgramWithSource");
	if ((err = clBuildProgram(prog, 1, &dev, "", NULL, NULL)) != CL_SUCCESS)
		print_build_log(prog, dev);
	check(err, "clBuildProgram");
	kernel = clCreateKernel(prog, "vadd", &err);
	check(err, "clCreateKernel");

	bytes = (size_t)n * sizeof (float);
	a = malloc(bytes);
	b = malloc(bytes);
	c = malloc(bytes);
	if (a == NULL || b == NULL || c == NULL) {
		perror("hello: malloc");
		return (1);
	}
	for (i = 0; i < n; i++) {
		a[i] = (float)(i % 1000) * 0.5f;
		b[i] = (float)(i % 777) * 0.125f + 1.0f;
	}

	da = clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &err);
	check(err, "clCreateBuffer(a)");
	db = clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, NULL, &err);
	check(err, "clCreateBuffer(b)");
	dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
	check(err, "clCreateBuffer(c)");
	check(clEnqueueWriteBuffer(queue, da, CL_FALSE, 0, bytes, a, 0, NULL,
	    NULL), "clEnqueueWriteBuffer(a)");
	check(clEnqueueWriteBuffer(queue, db, CL_FALSE, 0, bytes, b, 0, NULL,
	    NULL), "clEnqueueWriteBuffer(b)");

	check(clSetKernelArg(kernel, 0, sizeof da, &da), "clSetKernelArg(0)");
	check(clSetKernelArg(kernel, 1, sizeof db, &db), "clSetKernelArg(1)");
	check(clSetKernelArg(kernel, 2, sizeof dc, &dc), "clSetKernelArg(2)");
	check(clSetKernelArg(kernel, 3, sizeof n, &n), "clSetKernelArg(3)");
	global = n;
	check(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0,
	    NULL, NULL), "clEnqueueNDRangeKernel");
	check(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, bytes, c, 0, NULL,
	    NULL), "clEnqueueReadBuffer(c)");

	/* IEEE addition is exact-rounded on both sides: compare exactly. */
	for (i = 0; i < n; i++) {
		if (c[i] != a[i] + b[i]) {
			fprintf(stderr, "hello: mismatch at element %zu: device "
			    "%.9g, host %.9g (%.9g + %.9g)\n", i, (double)c[i],
			    (double)(a[i] + b[i]), (double)a[i], (double)b[i]);
			return (1);
		}
	}

	check(clReleaseMemObject(da), "clReleaseMemObject(a)");
	check(clReleaseMemObject(db), "clReleaseMemObject(b)");
	check(clReleaseMemObject(dc), "clReleaseMemObject(c)");
	check(clReleaseKernel(kernel), "clReleaseKernel");
	check(clReleaseProgram(prog), "clReleaseProgram");
	check(clReleaseCommandQueue(queue), "clReleaseCommandQueue");
	check(clReleaseContext(ctx), "clReleaseContext");
	free(a);
	free(b);
	free(c);

	printf("hello: %u elements OK on %s\n", (unsigned)n, name);
	return (0);
}
