/* pingpong.c - a buffer bounced between two devices: what a migration costs. */

/*
 * One context over two devices A and B, one buffer of n 32-bit words, one
 * queue per device. Each hop is a kernel that adds 1 to every word, on A
 * and B by turns, each waiting for the last: the runtime has to move the
 * buffer to the other device before every hop (VCL: server to server).
 * The same number of kernels on A alone, each after the last, is the
 * baseline; the difference per hop is what moving the buffer costs. After
 * the run every word must equal the number of hops: the program checks
 * that and exits non-zero if not. A plain OpenCL program: it runs on any
 * platform with two devices.
 */

#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* VCL's own queries (include/CL/vcl_ext.h); other platforms refuse them. */
#ifndef CL_DEVICE_VCL_NODE_TRANSPORT
#define CL_DEVICE_VCL_NODE_TRANSPORT	0x7E10
#define CL_DEVICE_VCL_NODE_PEER_LINKS	0x7E11
#endif

/* On VCL: the transport of each device's node and its peer links. */
static void
show_links(cl_device_id *devs)
{
	char	tp[64], links[4096], *p;
	int	i;

	for (i = 0; i < 2; i++) {
		if (clGetDeviceInfo(devs[i], CL_DEVICE_VCL_NODE_TRANSPORT,
		    sizeof tp, tp, NULL) != CL_SUCCESS)
			return;		/* not VCL */
		if (clGetDeviceInfo(devs[i], CL_DEVICE_VCL_NODE_PEER_LINKS,
		    sizeof links, links, NULL) != CL_SUCCESS)
			links[0] = '\0';
		for (p = links; (p = strchr(p, '\n')) != NULL; )
			*p = p[1] != '\0' ? ',' : '\0';
		printf("pingpong: device %d: client link %s, peer links: %s\n",
		    i, tp, links[0] != '\0' ? links : "none");
	}
}

const char	*ex_prog = "pingpong";

#define PP_WARM		4	/* untimed hops first (even: the timed
				   ones start with a move too) */
#define PP_MAXSIZES	16

static const char *source =
	"__kernel void\n"
	"bump(__global uint *a)\n"
	"{\n"
	"	a[get_global_id(0)] += 1;\n"
	"}\n";

static void
usage(void)
{
	fprintf(stderr,
	    "usage: pingpong [-m] [-p platform] [-r hops] [-b bytes]...\n"
	    "  -m           also this host's memcpy of each size (best of 5)\n"
	    "               and the move's ratio to it, measured in the run\n"
	    "  -p platform  platform index (default VCL_EXAMPLE_PLATFORM or 0)\n"
	    "  -r hops      kernels per size, A and B by turns (default 200)\n"
	    "  -b bytes     buffer size, a multiple of 4; repeat for more sizes\n"
	    "               (default 4096, 65536, 1048576, 16777216)\n");
	exit(2);
}

/* This host's memcpy of n bytes in GB/s: the best of 5, pages touched. */
static double
memcpy_gbps(size_t n)
{
	uint8_t	*a, *b;
	double	 t0, t, best = 0.0;
	int	 i;

	if ((a = malloc(n)) == NULL || (b = malloc(n)) == NULL) {
		free(a);
		return (0.0);
	}
	memset(a, 1, n);
	memset(b, 2, n);
	for (i = 0; i < 5; i++) {
		t0 = now();
		memcpy(b, a, n);
		t = now() - t0;
		a[i] = b[n - 1 - i];	/* keep the copies */
		if (t > 0.0 && (best == 0.0 || t < best))
			best = t;
	}
	free(a);
	free(b);
	return (best > 0.0 ? n / best / 1e9 : 0.0);
}

/*
 * Run hops kernels on the buffer, on queues q[0] and q[1] by turns (or q[0]
 * only when q[1] is NULL), each waiting for the last. Return the seconds.
 */
static double
bounce(cl_command_queue *q, cl_kernel k, size_t words, int hops)
{
	cl_event	 prev = NULL, ev;
	double		 t0, t1;
	int		 h;

	t0 = now();
	for (h = 0; h < hops; h++) {
		check(clEnqueueNDRangeKernel(q[q[1] != NULL ? h & 1 : 0], k, 1,
		    NULL, &words, NULL, prev != NULL, prev != NULL ? &prev :
		    NULL, &ev), "clEnqueueNDRangeKernel");
		if (q[1] != NULL)
			check(clFlush(q[h & 1]), "clFlush");
		if (prev != NULL)
			check(clReleaseEvent(prev), "clReleaseEvent");
		prev = ev;
	}
	check(clWaitForEvents(1, &prev), "clWaitForEvents");
	t1 = now();
	check(clReleaseEvent(prev), "clReleaseEvent");
	return (t1 - t0);
}

/* Zero the buffer, bounce it, and check every word came back as hops. */
static double
run(cl_context ctx, cl_command_queue *q, cl_kernel k, size_t bytes,
    int hops, uint32_t *host)
{
	cl_mem		 buf;
	cl_int		 err;
	size_t		 words = bytes / 4, i, bad = 0;
	double		 t;

	memset(host, 0, bytes);
	buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    bytes, host, &err);
	check(err, "clCreateBuffer");
	check(clSetKernelArg(k, 0, sizeof buf, &buf), "clSetKernelArg");
	/*
	 * Untimed: first launch on each device, the buffer on both, and a
	 * move each way (each direction's first opens its own peer link, a
	 * cost of milliseconds that is no hop's).
	 */
	bounce(q, k, words, PP_WARM);
	t = bounce(q, k, words, hops);
	check(clEnqueueReadBuffer(q[0], buf, CL_TRUE, 0, bytes, host, 0, NULL,
	    NULL), "clEnqueueReadBuffer");
	for (i = 0; i < words; i++)
		bad += host[i] != (uint32_t)hops + PP_WARM;
	check(clReleaseMemObject(buf), "clReleaseMemObject");
	if (bad > 0) {
		fprintf(stderr, "pingpong: %zu of %zu words wrong after %d hops "
		    "of %zu bytes\n", bad, words, hops, bytes);
		exit(1);
	}
	return (t);
}

int
main(int argc, char **argv)
{
	cl_platform_id		*plats;
	cl_device_id		 devs[2];
	cl_context		 ctx;
	cl_command_queue	 q[2], one[2];
	cl_program		 prog;
	cl_kernel		 k;
	cl_uint			 nplat, ndev;
	cl_int			 err;
	const char		*env;
	long			 plat = 0, hops = 200, v;
	size_t			 sizes[PP_MAXSIZES], nsizes = 0, max = 0, i;
	uint32_t		*host;
	double			 tpp, tone;
	int			 ch, mem = 0;
	double			 mc, mv;

	if ((env = getenv("VCL_EXAMPLE_PLATFORM")) != NULL && *env != '\0' &&
	    (plat = parse_num(env, 0, 1000)) < 0)
		usage();
	while ((ch = getopt(argc, argv, "b:mp:r:")) != -1) {
		switch (ch) {
		case 'm':
			mem = 1;
			break;
		case 'b':
			if (nsizes == PP_MAXSIZES || (v = parse_num(optarg, 4,
			    1L << 30)) < 0 || v % 4 != 0)
				usage();
			sizes[nsizes++] = (size_t)v;
			break;
		case 'p':
			if ((plat = parse_num(optarg, 0, 1000)) < 0)
				usage();
			break;
		case 'r':
			if ((hops = parse_num(optarg, 2, 1L << 24)) < 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (nsizes == 0) {
		sizes[nsizes++] = 4096;
		sizes[nsizes++] = 65536;
		sizes[nsizes++] = 1 << 20;
		sizes[nsizes++] = 16 << 20;
	}
	for (i = 0; i < nsizes; i++)
		max = sizes[i] > max ? sizes[i] : max;

	check(clGetPlatformIDs(0, NULL, &nplat), "clGetPlatformIDs");
	if ((cl_uint)plat >= nplat) {
		fprintf(stderr, "pingpong: platform %ld asked for, %u found\n",
		    plat, nplat);
		return (1);
	}
	if ((plats = calloc(nplat, sizeof *plats)) == NULL ||
	    (host = malloc(max)) == NULL) {
		perror("pingpong");
		return (1);
	}
	check(clGetPlatformIDs(nplat, plats, NULL), "clGetPlatformIDs");
	check(clGetDeviceIDs(plats[plat], CL_DEVICE_TYPE_ALL, 0, NULL, &ndev),
	    "clGetDeviceIDs");
	if (ndev < 2) {
		fprintf(stderr, "pingpong: platform %ld has %u device(s), two "
		    "needed\n", plat, ndev);
		return (1);
	}
	check(clGetDeviceIDs(plats[plat], CL_DEVICE_TYPE_ALL, 2, devs, NULL),
	    "clGetDeviceIDs");
	free(plats);

	ctx = clCreateContext(NULL, 2, devs, NULL, NULL, &err);
	check(err, "clCreateContext");
	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	check(err, "clCreateProgramWithSource");
	check(clBuildProgram(prog, 2, devs, "", NULL, NULL), "clBuildProgram");
	k = clCreateKernel(prog, "bump", &err);
	check(err, "clCreateKernel");
	for (i = 0; i < 2; i++) {
		q[i] = clCreateCommandQueue(ctx, devs[i], 0, &err);
		check(err, "clCreateCommandQueue");
	}
	one[0] = q[0];
	one[1] = NULL;

	printf("pingpong: %ld hops per size, devices 0 and 1 by turns; "
	    "baseline: device 0 alone\n", hops);
	for (i = 0; i < nsizes; i++) {
		tone = run(ctx, one, k, sizes[i], (int)hops, host);
		tpp = run(ctx, q, k, sizes[i], (int)hops, host);
		mv = tpp > tone ? sizes[i] / ((tpp - tone) / hops) / 1e9 : 0.0;
		printf("pingpong: bytes=%zu hop_us=%.1f alone_us=%.1f "
		    "move_us=%.1f move_gbps=%.2f", sizes[i],
		    tpp / hops * 1e6, tone / hops * 1e6,
		    (tpp - tone) / hops * 1e6, mv);
		if (mem && (mc = memcpy_gbps(sizes[i])) > 0.0)
			printf(" memcpy_gbps=%.2f ratio=%.2f", mc, mv / mc);
		printf("\n");
	}
	show_links(devs);
	printf("pingpong: PASS\n");

	check(clReleaseKernel(k), "clReleaseKernel");
	check(clReleaseProgram(prog), "clReleaseProgram");
	for (i = 0; i < 2; i++)
		check(clReleaseCommandQueue(q[i]), "clReleaseCommandQueue");
	check(clReleaseContext(ctx), "clReleaseContext");
	free(host);
	return (0);
}
