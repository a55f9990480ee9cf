/* cg.c - conjugate gradients on a sparse SPD matrix, its rows split in bands over every device of a platform. */

/*
 * Solves A x = b, A sparse symmetric positive definite: the 5-point (2D) or
 * 7-point (3D) Poisson matrix of a grid, or a Matrix Market file. b = A x*
 * for a known x*, so the answer can be checked.
 *
 * The rows are split in contiguous bands, one per device (or -v K per
 * device). A band holds its rows in CSR, its columns renumbered into its
 * own copy of the vector the product reads: its rows plus a halo, every
 * column below and above them that its rows touch. A halo row comes from
 * the band that owns it, each iteration, by OpenCL copies only: into a small
 * edge buffer on the owner's queue, then from it into the halo on the
 * reader's queue (the reader waits on the owner's copy). Only edge buffers
 * cross devices, so a runtime that moves whole buffers between devices (VCL
 * does, server to server) moves the boundary, not the band. A banded matrix
 * (Poisson in natural order) exchanges with its two neighbours only; a
 * matrix with far entries exchanges with every band its rows reach.
 *
 * Dot products: each kernel that needs one computes, per work-group of CG_WG
 * rows, the group's partial sum (a tree in local memory); the host reads
 * every band's partials (one non-blocking read per band, all in flight
 * together, then one wait: one round trip per reduction point, whatever the
 * number of devices) and adds them in row order in double. Bands start on
 * work-group boundaries, so every split has the same groups, the same
 * partials and the same sums: a run on N devices takes the same iterations
 * to the same residual, bit for bit, as a run on one.
 *
 * Two methods (-P picks the second):
 *
 *   cg   (Hestenes-Stiefel) needs two reductions per iteration, each waiting
 *        for the last: alpha = (r,r) / (p,Ap) needs Ap, and beta needs the
 *        new r, which needs alpha. So two host round trips per iteration:
 *        exchange p, q = Ap with (p,q) partials | read | x += alpha p,
 *        r -= alpha q with (r,r) partials | read | p = r + beta p.
 *   cg-p (Chronopoulos-Gear) computes (r,r) and (Ar,r) of the same r
 *        together, and gets alpha and beta from them and the last alpha,
 *        with s = Ap carried by a recurrence: one round trip per iteration.
 *        p = r + beta p, s = w + beta s, x += alpha p, r -= alpha s |
 *        exchange r, w = Ar with (r,r) and (w,r) partials | read.
 *        It costs one more vector update and rounds a little differently;
 *        in exact arithmetic both make the same iterates.
 */

#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtx.h"
#include "util.h"

const char	*ex_prog = "cg";

#define CG_WG		64	/* rows per work-group: bands start on multiples */
#define CG_MAXSIDE2	8192	/* largest 2D grid side */
#define CG_MAXSIDE3	400	/* largest 3D grid side */
#define CG_CHECKROWS	(1 << 20) /* largest matrix checked against one band by default */

enum { PH_EXCHANGE, PH_SPMV, PH_UPDATE, PH_REDUCE, PH_COUNT };
static const char *phase_name[PH_COUNT] = {
	"exchange", "spmv", "update", "reduce"
};

static const char *source =
	"#pragma OPENCL FP_CONTRACT OFF\n"
	"#ifdef CG_FP64\n"
	"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
	"typedef double real;\n"
	"#else\n"
	"typedef float real;\n"
	"#endif\n"
	"\n"
	"/* The sum of x over the work-group, in a fixed order. */\n"
	"real\n"
	"group_sum(__local real *t, real x)\n"
	"{\n"
	"	const int	l = get_local_id(0);\n"
	"	int		h;\n"
	"\n"
	"	t[l] = x;\n"
	"	barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	for (h = CG_WG / 2; h > 0; h >>= 1) {\n"
	"		if (l < h)\n"
	"			t[l] += t[l + h];\n"
	"		barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	}\n"
	"	x = t[0];\n"
	"	barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	return (x);\n"
	"}\n"
	"\n"
	"/* Row i of A v, v indexed by the band's columns. */\n"
	"real\n"
	"row_mul(__global const int *rp, __global const int *ci,\n"
	"    __global const real *va, __global const real *v, int i)\n"
	"{\n"
	"	real	a = 0;\n"
	"	int	k;\n"
	"\n"
	"	for (k = rp[i]; k < rp[i + 1]; k++)\n"
	"		a += va[k] * v[ci[k]];\n"
	"	return (a);\n"
	"}\n"
	"\n"
	"/* y = A v on the band's rows; part[g] = the group's sum of v y. */\n"
	"__kernel __attribute__((reqd_work_group_size(CG_WG, 1, 1))) void\n"
	"spmv_dot(__global const int *rp, __global const int *ci,\n"
	"    __global const real *va, __global const real *v, const int off,\n"
	"    const int m, __global real *y, __global real *part)\n"
	"{\n"
	"	__local real	t[CG_WG];\n"
	"	const int	i = get_global_id(0);\n"
	"	real		a = 0, d = 0;\n"
	"\n"
	"	if (i < m) {\n"
	"		a = row_mul(rp, ci, va, v, i);\n"
	"		y[i] = a;\n"
	"		d = v[off + i] * a;\n"
	"	}\n"
	"	d = group_sum(t, d);\n"
	"	if (get_local_id(0) == 0)\n"
	"		part[get_group_id(0)] = d;\n"
	"}\n"
	"\n"
	"/* w = A r; part[2g], part[2g+1] = the group's sums of r r and w r. */\n"
	"__kernel __attribute__((reqd_work_group_size(CG_WG, 1, 1))) void\n"
	"spmv_dot2(__global const int *rp, __global const int *ci,\n"
	"    __global const real *va, __global const real *v, const int off,\n"
	"    const int m, __global real *w, __global real *part)\n"
	"{\n"
	"	__local real	t[CG_WG];\n"
	"	const int	i = get_global_id(0);\n"
	"	real		a = 0, rr = 0, wr = 0, ri;\n"
	"\n"
	"	if (i < m) {\n"
	"		a = row_mul(rp, ci, va, v, i);\n"
	"		w[i] = a;\n"
	"		ri = v[off + i];\n"
	"		rr = ri * ri;\n"
	"		wr = a * ri;\n"
	"	}\n"
	"	rr = group_sum(t, rr);\n"
	"	wr = group_sum(t, wr);\n"
	"	if (get_local_id(0) == 0) {\n"
	"		part[2 * get_group_id(0)] = rr;\n"
	"		part[2 * get_group_id(0) + 1] = wr;\n"
	"	}\n"
	"}\n"
	"\n"
	"/* x += alpha p, r -= alpha q; part[g] = the group's sum of r r. */\n"
	"__kernel __attribute__((reqd_work_group_size(CG_WG, 1, 1))) void\n"
	"axpy_dot(__global const real *v, const int off, __global const real *q,\n"
	"    __global real *x, __global real *r, const real alpha, const int m,\n"
	"    __global real *part)\n"
	"{\n"
	"	__local real	t[CG_WG];\n"
	"	const int	i = get_global_id(0);\n"
	"	real		ri, d = 0;\n"
	"\n"
	"	if (i < m) {\n"
	"		x[i] += alpha * v[off + i];\n"
	"		ri = r[i] - alpha * q[i];\n"
	"		r[i] = ri;\n"
	"		d = ri * ri;\n"
	"	}\n"
	"	d = group_sum(t, d);\n"
	"	if (get_local_id(0) == 0)\n"
	"		part[get_group_id(0)] = d;\n"
	"}\n"
	"\n"
	"/* p = r + beta p, p being the band's rows of v. */\n"
	"__kernel void\n"
	"xpay(__global real *v, const int off, __global const real *r,\n"
	"    const real beta, const int m)\n"
	"{\n"
	"	const int	i = get_global_id(0);\n"
	"\n"
	"	if (i < m)\n"
	"		v[off + i] = r[i] + beta * v[off + i];\n"
	"}\n"
	"\n"
	"/*\n"
	" * Chronopoulos-Gear: p = r + beta p, s = w + beta s, x += alpha p,\n"
	" * r -= alpha s, r being the band's rows of v.\n"
	" */\n"
	"__kernel void\n"
	"cgp_update(__global real *v, const int off, __global const real *w,\n"
	"    __global real *p, __global real *s, __global real *x,\n"
	"    const real alpha, const real beta, const int m)\n"
	"{\n"
	"	const int	i = get_global_id(0);\n"
	"	real		pi, si;\n"
	"\n"
	"	if (i < m) {\n"
	"		pi = v[off + i] + beta * p[i];\n"
	"		si = w[i] + beta * s[i];\n"
	"		p[i] = pi;\n"
	"		s[i] = si;\n"
	"		x[i] += alpha * pi;\n"
	"		v[off + i] -= alpha * si;\n"
	"	}\n"
	"}\n";

/*
 * A halo piece: rows [lo, hi) of the vector, owned by band src, wanted by
 * band dst. pack copies them on src's queue into edge; unpack copies edge
 * into dst's halo on dst's queue, after pack. The host waits for every
 * queue once per iteration after both, so one edge buffer per piece is
 * never packed again before its last unpack has run.
 */
struct piece {
	int			 src;
	int			 dst;
	int			 lo;
	int			 hi;
	cl_mem			 edge;
};

/*
 * A band: rows [r0, r1) on one queue. v holds the vector the product reads
 * (p for cg, r for cg-p) at columns [c0, c1), the band's rows at off =
 * r0 - c0; the other vectors hold the band's rows only.
 */
struct band {
	cl_command_queue	 queue;
	cl_kernel		 k_spmv;	/* spmv_dot or spmv_dot2 */
	cl_kernel		 k_axpy;	/* axpy_dot (cg) */
	cl_kernel		 k_xpay;	/* xpay (cg) or cgp_update (cg-p) */
	cl_mem			 rp, ci, va;
	cl_mem			 v, x, y, r, p, s;	/* y: q (cg) or w (cg-p) */
	cl_mem			 part;		/* two partial sums per group */
	cl_event		 read;
	int			 r0, r1;
	int			 c0, c1;
	int			 m;		/* r1 - r0 */
	int			 off;		/* r0 - c0 */
	size_t			 gsz;		/* global size: every band's the same */
	size_t			 ng;		/* groups holding rows */
};

struct opts {
	int			 dim;		/* 2 or 3 (generated) */
	int			 side;
	const char		*file;		/* Matrix Market, or NULL */
	int			 maxit;
	double			 tol;		/* <0: by precision */
	int			 pipelined;
	int			 vband;
	int			 check;		/* -1: when it is cheap */
	int			 split;		/* iterations timed phase by phase */
	int			 fp32;
	long			 plat;
	long			 ndev;		/* -1: all */
};

struct solver {
	cl_context		 ctx;
	cl_program		 prog;
	const struct mtx	*a;
	int			 fp64;
	size_t			 rsize;
	int			 pipelined;
	int			 maxit;
	double			 tol;
	struct band		*b;
	int			 nb;
	struct piece		*pc;
	int			 npc;
	void			*stage;		/* host values in device precision */
	double			*part;		/* every group's partials, in double */
	int			 sync;		/* finish queues after each phase */
	int			 warm;		/* kernels have run once */
	double			 tph[PH_COUNT];
	double			 tlast;
};

/* The outcome of one solve. */
struct result {
	int			 iters;
	double			 res;		/* last ||r|| / ||b||, recurrence */
	double			 elapsed;
	double			 tph[PH_COUNT];
	int			 converged;
};

/* Allocate or exit. */
static void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if ((p = calloc(n ? n : 1, size)) == NULL) {
		perror("cg: calloc");
		exit(1);
	}
	return (p);
}

/* Return a device info string; the caller frees it. */
static char *
device_string(cl_device_id dev, cl_device_info what, const char *call)
{
	size_t	 len;
	char	*s;

	check(clGetDeviceInfo(dev, what, 0, NULL, &len), call);
	s = xcalloc(len + 1, 1);
	check(clGetDeviceInfo(dev, what, len, s, NULL), call);
	return (s);
}

/* Say whether a device supports double precision. */
static int
device_has_fp64(cl_device_id dev)
{
	char	*ext, *p;
	int	 yes = 0;

	ext = device_string(dev, CL_DEVICE_EXTENSIONS,
	    "clGetDeviceInfo(CL_DEVICE_EXTENSIONS)");
	for (p = strtok(ext, " "); p != NULL; p = strtok(NULL, " "))
		yes |= strcmp(p, "cl_khr_fp64") == 0;
	free(ext);
	return (yes);
}

/* Build the program for the devices, printing the log if that fails. */
static cl_program
build_program(cl_context ctx, cl_device_id *devs, cl_uint ndev, int fp64)
{
	cl_program	 prog;
	cl_int		 err;
	size_t		 len;
	char		*log, opts[64];
	cl_uint		 d;

	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	check(err, "clCreateProgramWithSource");
	snprintf(opts, sizeof opts, "-DCG_WG=%d%s", CG_WG, fp64 ?
	    " -DCG_FP64" : "");
	err = clBuildProgram(prog, ndev, devs, opts, NULL, NULL);
	if (err != CL_SUCCESS) {
		for (d = 0; d < ndev; d++) {
			if (clGetProgramBuildInfo(prog, devs[d],
			    CL_PROGRAM_BUILD_LOG, 0, NULL, &len) != CL_SUCCESS)
				continue;
			log = xcalloc(len + 1, 1);
			if (clGetProgramBuildInfo(prog, devs[d],
			    CL_PROGRAM_BUILD_LOG, len, log, NULL) == CL_SUCCESS)
				fprintf(stderr, "device %u build log:\n%s\n", d,
				    log);
			free(log);
		}
	}
	check(err, "clBuildProgram");
	return (prog);
}

/* Copy count values into stage, in the device precision. */
static void
to_device(const struct solver *sv, const double *src, size_t count)
{
	size_t	i;

	if (sv->fp64)
		memcpy(sv->stage, src, count * sizeof (double));
	else {
		for (i = 0; i < count; i++)
			((float *)sv->stage)[i] = (float)src[i];
	}
}

/* Copy count values out of stage at index at, from the device precision. */
static void
from_device(const struct solver *sv, double *dst, size_t at, size_t count)
{
	size_t	i;

	if (sv->fp64)
		memcpy(dst, (double *)sv->stage + at, count * sizeof (double));
	else {
		for (i = 0; i < count; i++)
			dst[i] = ((float *)sv->stage)[at + i];
	}
}

/* Set a real kernel argument in the device precision. */
static void
set_real(const struct solver *sv, cl_kernel kernel, cl_uint idx, double v)
{
	float	f = (float)v;

	if (sv->fp64)
		check(clSetKernelArg(kernel, idx, sizeof v, &v),
		    "clSetKernelArg(real)");
	else
		check(clSetKernelArg(kernel, idx, sizeof f, &f),
		    "clSetKernelArg(real)");
}

/* Set a buffer kernel argument. */
static void
set_mem(cl_kernel kernel, cl_uint idx, cl_mem m)
{
	check(clSetKernelArg(kernel, idx, sizeof m, &m), "clSetKernelArg(mem)");
}

/* Set an int kernel argument. */
static void
set_int(cl_kernel kernel, cl_uint idx, int v)
{
	check(clSetKernelArg(kernel, idx, sizeof v, &v), "clSetKernelArg(int)");
}

/* Create a buffer of count reals, from stage when init. */
static cl_mem
real_buffer(const struct solver *sv, size_t count, int init, const char *what)
{
	cl_mem	m;
	cl_int	err;

	m = clCreateBuffer(sv->ctx, CL_MEM_READ_WRITE | (init ?
	    CL_MEM_COPY_HOST_PTR : 0), (count ? count : 1) * sv->rsize,
	    init ? sv->stage : NULL, &err);
	check(err, what);
	return (m);
}

/* Return a new kernel of the program. */
static cl_kernel
kernel(const struct solver *sv, const char *name)
{
	cl_kernel	k;
	cl_int		err;

	k = clCreateKernel(sv->prog, name, &err);
	check(err, "clCreateKernel");
	return (k);
}

/*
 * Create band b of rows [r0, r1) on dev: its CSR with columns renumbered
 * from c0, its vectors (x = 0, r = p = b, halo zero), kernels set up to
 * run over gsz work-items (those past the band's rows add zeros).
 */
static void
band_create(struct solver *sv, struct band *b, cl_device_id dev, int r0,
    int r1, size_t gsz, const double *rhs)
{
	const struct mtx	*a = sv->a;
	double			*tmp;
	int			*rp, *ci, i, k, nnz;
	cl_int			 err;

	b->r0 = r0;
	b->r1 = r1;
	b->m = r1 - r0;
	b->c0 = r0;
	b->c1 = r1;
	for (k = a->rp[r0]; k < a->rp[r1]; k++) {
		b->c0 = a->ci[k] < b->c0 ? a->ci[k] : b->c0;
		b->c1 = a->ci[k] + 1 > b->c1 ? a->ci[k] + 1 : b->c1;
	}
	b->off = r0 - b->c0;
	b->gsz = gsz;
	b->ng = ((size_t)b->m + CG_WG - 1) / CG_WG;
	nnz = a->rp[r1] - a->rp[r0];

	b->queue = clCreateCommandQueue(sv->ctx, dev, 0, &err);
	check(err, "clCreateCommandQueue");

	rp = xcalloc((size_t)b->m + 1, sizeof *rp);
	ci = xcalloc(nnz, sizeof *ci);
	for (i = 0; i <= b->m; i++)
		rp[i] = a->rp[r0 + i] - a->rp[r0];
	for (k = 0; k < nnz; k++)
		ci[k] = a->ci[a->rp[r0] + k] - b->c0;
	b->rp = clCreateBuffer(sv->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
	    ((size_t)b->m + 1) * sizeof *rp, rp, &err);
	check(err, "clCreateBuffer(rows)");
	b->ci = clCreateBuffer(sv->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
	    (nnz ? nnz : 1) * sizeof *ci, ci, &err);
	check(err, "clCreateBuffer(columns)");
	free(rp);
	free(ci);
	to_device(sv, a->va + a->rp[r0], nnz);
	b->va = real_buffer(sv, nnz, 1, "clCreateBuffer(values)");

	/* v: zero halo around the band's rows of b. */
	tmp = xcalloc((size_t)b->c1 - b->c0, sizeof *tmp);
	memcpy(tmp + b->off, rhs + r0, (size_t)b->m * sizeof *tmp);
	to_device(sv, tmp, (size_t)b->c1 - b->c0);
	b->v = real_buffer(sv, (size_t)b->c1 - b->c0, 1, "clCreateBuffer(v)");
	memset(tmp, 0, ((size_t)b->c1 - b->c0) * sizeof *tmp);
	to_device(sv, tmp, b->m);
	b->x = real_buffer(sv, b->m, 1, "clCreateBuffer(x)");
	b->y = real_buffer(sv, b->m, 1, "clCreateBuffer(y)");
	if (sv->pipelined) {
		b->p = real_buffer(sv, b->m, 1, "clCreateBuffer(p)");
		b->s = real_buffer(sv, b->m, 1, "clCreateBuffer(s)");
	} else {
		to_device(sv, rhs + r0, b->m);
		b->r = real_buffer(sv, b->m, 1, "clCreateBuffer(r)");
	}
	free(tmp);
	b->part = real_buffer(sv, 2 * (b->gsz / CG_WG), 0,
	    "clCreateBuffer(partials)");

	b->k_spmv = kernel(sv, sv->pipelined ? "spmv_dot2" : "spmv_dot");
	set_mem(b->k_spmv, 0, b->rp);
	set_mem(b->k_spmv, 1, b->ci);
	set_mem(b->k_spmv, 2, b->va);
	set_mem(b->k_spmv, 3, b->v);
	set_int(b->k_spmv, 4, b->off);
	set_int(b->k_spmv, 5, b->m);
	set_mem(b->k_spmv, 6, b->y);
	set_mem(b->k_spmv, 7, b->part);
	if (sv->pipelined) {
		b->k_xpay = kernel(sv, "cgp_update");
		set_mem(b->k_xpay, 0, b->v);
		set_int(b->k_xpay, 1, b->off);
		set_mem(b->k_xpay, 2, b->y);
		set_mem(b->k_xpay, 3, b->p);
		set_mem(b->k_xpay, 4, b->s);
		set_mem(b->k_xpay, 5, b->x);
		set_int(b->k_xpay, 8, b->m);
	} else {
		b->k_axpy = kernel(sv, "axpy_dot");
		set_mem(b->k_axpy, 0, b->v);
		set_int(b->k_axpy, 1, b->off);
		set_mem(b->k_axpy, 2, b->y);
		set_mem(b->k_axpy, 3, b->x);
		set_mem(b->k_axpy, 4, b->r);
		set_int(b->k_axpy, 6, b->m);
		set_mem(b->k_axpy, 7, b->part);
		b->k_xpay = kernel(sv, "xpay");
		set_mem(b->k_xpay, 0, b->v);
		set_int(b->k_xpay, 1, b->off);
		set_mem(b->k_xpay, 2, b->r);
		set_int(b->k_xpay, 4, b->m);
	}
}

/* Release a band's objects. */
static void
band_free(struct band *b)
{
	cl_mem	 mems[] = { b->rp, b->ci, b->va, b->v, b->x, b->y, b->r, b->p,
		    b->s, b->part };
	size_t	 k;

	for (k = 0; k < sizeof mems / sizeof mems[0]; k++) {
		if (mems[k] != NULL)
			check(clReleaseMemObject(mems[k]), "clReleaseMemObject");
	}
	check(clReleaseKernel(b->k_spmv), "clReleaseKernel");
	check(clReleaseKernel(b->k_xpay), "clReleaseKernel");
	if (b->k_axpy != NULL)
		check(clReleaseKernel(b->k_axpy), "clReleaseKernel");
	check(clReleaseCommandQueue(b->queue), "clReleaseCommandQueue");
}

/* Find the halo pieces: for each band, the rows of each other band it reads. */
static void
pieces_create(struct solver *sv)
{
	struct band	*d, *s;
	struct piece	*pc;
	cl_int		 err;
	int		 i, j, lo, hi;

	sv->pc = xcalloc((size_t)sv->nb * sv->nb, sizeof *sv->pc);
	for (i = 0; i < sv->nb; i++) {
		d = &sv->b[i];
		for (j = 0; j < sv->nb; j++) {
			s = &sv->b[j];
			lo = d->c0 > s->r0 ? d->c0 : s->r0;
			hi = d->c1 < s->r1 ? d->c1 : s->r1;
			if (i == j || lo >= hi)
				continue;
			pc = &sv->pc[sv->npc++];
			pc->src = j;
			pc->dst = i;
			pc->lo = lo;
			pc->hi = hi;
			pc->edge = clCreateBuffer(sv->ctx, CL_MEM_READ_WRITE,
			    (size_t)(hi - lo) * sv->rsize, NULL, &err);
			check(err, "clCreateBuffer(edge)");
		}
	}
}

/* Finish every band's queue. */
static void
finish_all(struct solver *sv)
{
	int	p;

	for (p = 0; p < sv->nb; p++)
		check(clFinish(sv->b[p].queue), "clFinish");
}

/* Flush every band's queue. */
static void
flush_all(struct solver *sv)
{
	int	p;

	for (p = 0; p < sv->nb; p++)
		check(clFlush(sv->b[p].queue), "clFlush");
}

/* End a phase: when timing phases, wait for the queues (if fin) and charge it. */
static void
phase_end(struct solver *sv, int ph, int fin)
{
	double	t;

	if (!sv->sync)
		return;
	if (fin)
		finish_all(sv);
	t = now();
	sv->tph[ph] += t - sv->tlast;
	sv->tlast = t;
}

/* Enqueue the halo exchange of v: every pack, then every unpack. */
static void
exchange(struct solver *sv)
{
	struct piece	*pc;
	struct band	*s, *d;
	cl_event	*ev;
	int		 k;

	if (sv->npc == 0)
		return;
	ev = xcalloc(sv->npc, sizeof *ev);
	for (k = 0; k < sv->npc; k++) {
		pc = &sv->pc[k];
		s = &sv->b[pc->src];
		check(clEnqueueCopyBuffer(s->queue, s->v, pc->edge,
		    (size_t)(pc->lo - s->c0) * sv->rsize, 0,
		    (size_t)(pc->hi - pc->lo) * sv->rsize, 0, NULL, &ev[k]),
		    "clEnqueueCopyBuffer(pack)");
	}
	/* The reader's queue waits on the owner's: submit the packs now. */
	flush_all(sv);
	for (k = 0; k < sv->npc; k++) {
		pc = &sv->pc[k];
		d = &sv->b[pc->dst];
		check(clEnqueueCopyBuffer(d->queue, pc->edge, d->v, 0,
		    (size_t)(pc->lo - d->c0) * sv->rsize,
		    (size_t)(pc->hi - pc->lo) * sv->rsize, 1, &ev[k], NULL),
		    "clEnqueueCopyBuffer(unpack)");
		check(clReleaseEvent(ev[k]), "clReleaseEvent");
	}
	free(ev);
	phase_end(sv, PH_EXCHANGE, 1);
}

/* Enqueue kernel k over band b's rows. */
static void
launch(struct band *b, cl_kernel k)
{
	size_t	lsz = CG_WG;

	check(clEnqueueNDRangeKernel(b->queue, k, 1, NULL, &b->gsz, &lsz, 0,
	    NULL, NULL), "clEnqueueNDRangeKernel");
}

/*
 * Read every band's partial sums (all reads in flight, one wait) and add
 * them in row order: s[0], and s[1] for cg-p (two sums a group). One
 * round trip, of n / CG_WG values (twice that for cg-p).
 */
static void
reduce(struct solver *sv, double s[2])
{
	struct band	*b;
	cl_event	*ev;
	size_t		 g, ng, at = 0, k = sv->pipelined ? 2 : 1;
	int		 p;

	ev = xcalloc(sv->nb, sizeof *ev);
	for (p = 0; p < sv->nb; p++) {
		b = &sv->b[p];
		ng = b->ng;
		check(clEnqueueReadBuffer(b->queue, b->part, CL_FALSE, 0,
		    k * ng * sv->rsize, (char *)sv->stage + at * sv->rsize, 0,
		    NULL, &ev[p]), "clEnqueueReadBuffer(partials)");
		at += k * ng;
	}
	flush_all(sv);
	check(clWaitForEvents(sv->nb, ev), "clWaitForEvents(partials)");
	for (p = 0; p < sv->nb; p++)
		check(clReleaseEvent(ev[p]), "clReleaseEvent");
	free(ev);
	from_device(sv, sv->part, 0, at);
	s[0] = s[1] = 0;
	for (g = 0; g < at; g += k) {
		s[0] += sv->part[g];
		s[1] += k == 2 ? sv->part[g + 1] : 0;
	}
	phase_end(sv, PH_REDUCE, 0);
}

/* Enqueue the product on every band. */
static void
spmv(struct solver *sv)
{
	int	p;

	for (p = 0; p < sv->nb; p++)
		launch(&sv->b[p], sv->b[p].k_spmv);
	phase_end(sv, PH_SPMV, 1);
}

/*
 * Run CG from x = 0 with r = b, ||b|| = bnorm, until ||r|| <= tol ||b||
 * or maxit iterations; the iterations are counted and timed in res.
 * With maxit < 0, run -maxit iterations whatever the residual.
 */
static void
solve_cg(struct solver *sv, double rr, double bnorm, int maxit,
    struct result *res)
{
	double	s[2], alpha, beta, rrn;
	int	p, it = 0, fixed = maxit < 0;

	maxit = fixed ? -maxit : maxit;
	while (it < maxit && (fixed || sqrt(rr) > sv->tol * bnorm)) {
		exchange(sv);
		spmv(sv);
		reduce(sv, s);
		if (!(s[0] > 0))
			break;	/* p A p <= 0: not positive definite, or done */
		alpha = rr / s[0];
		for (p = 0; p < sv->nb; p++) {
			set_real(sv, sv->b[p].k_axpy, 5, alpha);
			launch(&sv->b[p], sv->b[p].k_axpy);
		}
		phase_end(sv, PH_UPDATE, 1);
		reduce(sv, s);
		rrn = s[0];
		beta = rrn / rr;
		rr = rrn;
		for (p = 0; p < sv->nb; p++) {
			set_real(sv, sv->b[p].k_xpay, 3, beta);
			launch(&sv->b[p], sv->b[p].k_xpay);
		}
		phase_end(sv, PH_UPDATE, 1);
		it++;
	}
	res->iters = it;
	res->res = sqrt(rr) / bnorm;
}

/*
 * Run Chronopoulos-Gear CG from x = 0 with r = b: one reduction point per
 * iteration, (r,r) and (Ar,r) together. As solve_cg.
 */
static void
solve_cgp(struct solver *sv, double bnorm, int maxit, struct result *res)
{
	double	s[2], gamma, delta, gold = 0, alpha = 0, beta;
	int	p, it = 0, fixed = maxit < 0;

	maxit = fixed ? -maxit : maxit;
	exchange(sv);
	spmv(sv);
	reduce(sv, s);
	gamma = s[0];
	delta = s[1];
	while (it < maxit && (fixed || sqrt(gamma) > sv->tol * bnorm)) {
		if (it == 0) {
			beta = 0;
			alpha = gamma / delta;
		} else {
			beta = gamma / gold;
			alpha = gamma / (delta - beta * gamma / alpha);
		}
		if (!(alpha > 0) || !isfinite(alpha))
			break;	/* not positive definite, or done */
		for (p = 0; p < sv->nb; p++) {
			set_real(sv, sv->b[p].k_xpay, 6, alpha);
			set_real(sv, sv->b[p].k_xpay, 7, beta);
			launch(&sv->b[p], sv->b[p].k_xpay);
		}
		phase_end(sv, PH_UPDATE, 1);
		exchange(sv);
		spmv(sv);
		reduce(sv, s);
		gold = gamma;
		gamma = s[0];
		delta = s[1];
		it++;
	}
	res->iters = it;
	res->res = sqrt(gamma) / bnorm;
}

/*
 * Solve A x = rhs on nb bands, band p on devs[p], rows split on work-group
 * boundaries, timed, and read x. Passes from scratch before it: the first
 * time, one untimed iteration (a runtime that compiles kernels at first
 * launch does it then); with split > 0, split iterations timed phase by
 * phase (queues finished after each) into res->tph.
 */
static void
run(struct solver *sv, cl_device_id *devs, int nb, const double *rhs,
    double *x, int split, struct result *res)
{
	const struct mtx	*a = sv->a;
	double			 rr = 0, bnorm, t0;
	size_t			 gsz;
	int			 ngroups, p, pass, k, maxit, r0, r1;

	ngroups = (a->n + CG_WG - 1) / CG_WG;
	for (k = 0; k < a->n; k++)
		rr += rhs[k] * rhs[k];
	bnorm = sqrt(rr);
	memset(res, 0, sizeof *res);
	sv->nb = nb;
	for (pass = sv->warm ? 1 : 0; pass < 3; pass++) {
		if (pass == 1 && split <= 0)
			continue;
		/* Negative: that many iterations, whatever the residual. */
		maxit = pass == 0 ? -1 : pass == 1 ? -split : sv->maxit;
		sv->b = xcalloc(nb, sizeof *sv->b);
		sv->npc = 0;
		/*
		 * Every band's kernels run over the largest band's groups:
		 * PoCL 3.1 compiles one variant per global size, and variants
		 * of one kernel compiled at once on several queues corrupt
		 * its handle cache (an assertion at kernel release).
		 */
		for (p = 0, gsz = 0; p < nb; p++) {
			r0 = (int)((long)p * ngroups / nb) * CG_WG;
			r1 = p == nb - 1 ? a->n :
			    (int)((long)(p + 1) * ngroups / nb) * CG_WG;
			gsz = (size_t)(r1 - r0) > gsz ? (size_t)(r1 - r0) : gsz;
		}
		gsz = (gsz + CG_WG - 1) / CG_WG * CG_WG;
		for (p = 0; p < nb; p++) {
			r0 = (int)((long)p * ngroups / nb) * CG_WG;
			r1 = p == nb - 1 ? a->n :
			    (int)((long)(p + 1) * ngroups / nb) * CG_WG;
			band_create(sv, &sv->b[p], devs[p], r0, r1, gsz, rhs);
		}
		pieces_create(sv);
		finish_all(sv);
		sv->sync = pass == 1;
		memset(sv->tph, 0, sizeof sv->tph);
		t0 = sv->tlast = now();
		if (sv->pipelined)
			solve_cgp(sv, bnorm, maxit, res);
		else
			solve_cg(sv, rr, bnorm, maxit, res);
		finish_all(sv);
		if (pass == 1) {
			for (k = 0; k < PH_COUNT && res->iters > 0; k++)
				res->tph[k] = sv->tph[k] / res->iters;
		} else if (pass == 2) {
			res->elapsed = now() - t0;
			for (p = 0; p < nb; p++) {
				check(clEnqueueReadBuffer(sv->b[p].queue,
				    sv->b[p].x, CL_TRUE, 0,
				    (size_t)sv->b[p].m * sv->rsize, sv->stage,
				    0, NULL, NULL), "clEnqueueReadBuffer(x)");
				from_device(sv, x + sv->b[p].r0, 0,
				    sv->b[p].m);
			}
		}
		for (k = 0; k < sv->npc; k++)
			check(clReleaseMemObject(sv->pc[k].edge),
			    "clReleaseMemObject");
		free(sv->pc);
		for (p = 0; p < nb; p++)
			band_free(&sv->b[p]);
		free(sv->b);
		sv->b = NULL;
	}
	sv->sync = 0;
	sv->warm = 1;
	res->converged = res->res <= sv->tol;
}

/* Print usage and exit. */
static void
usage(void)
{
	fprintf(stderr,
	    "usage: cg [-3cCfP] [-d count] [-i iterations] [-m file.mtx] "
	    "[-n side] [-p platform]\n"
	    "          [-S iterations] [-t tolerance] [-v bands]\n"
	    "  -n side      Poisson matrix of a side x side grid (default 256)\n"
	    "  -3           7-point 3D Poisson, side^3 rows, instead of 2D\n"
	    "  -m file.mtx  a Matrix Market matrix (coordinate real symmetric\n"
	    "               or general; must be symmetric positive definite)\n"
	    "  -i count     most iterations (default 10000)\n"
	    "  -t tol       stop at ||r|| <= tol ||b|| (default 1e-8, 1e-5 in "
	    "float)\n"
	    "  -P           pipelined CG (Chronopoulos-Gear): one reduction "
	    "point\n"
	    "               per iteration instead of two\n"
	    "  -p platform  platform index (default VCL_EXAMPLE_PLATFORM or 0)\n"
	    "  -d count     use the first count devices (default all)\n"
	    "  -v bands     split each device into this many bands (default 1)\n"
	    "  -S count     time count iterations phase by phase first (default\n"
	    "               20, 0: none): exchange, spmv, update, reduce\n"
	    "  -c / -C      do / do not check against one band on device 0\n"
	    "               (default: check when bands > 1 and rows <= %d)\n"
	    "  -f           single precision even where fp64 is supported\n",
	    CG_CHECKROWS);
	exit(2);
}

/* Parse the command line into o. */
static void
parse_args(struct opts *o, int argc, char **argv)
{
	const char	*env;
	char		*end;
	long		 v = 0;
	int		 ch;

	memset(o, 0, sizeof *o);
	o->dim = 2;
	o->side = 256;
	o->maxit = 10000;
	o->tol = -1;
	o->vband = 1;
	o->split = 20;
	o->check = o->ndev = -1;
	if ((env = getenv("VCL_EXAMPLE_PLATFORM")) != NULL && *env != '\0' &&
	    (o->plat = parse_num(env, 0, 1000)) < 0)
		usage();
	while ((ch = getopt(argc, argv, "3cCd:fi:m:n:p:PS:t:v:")) != -1) {
		switch (ch) {
		case '3':
			o->dim = 3;
			break;
		case 'c':
		case 'C':
			o->check = ch == 'c';
			break;
		case 'd':
			v = o->ndev = parse_num(optarg, 1, 4096);
			break;
		case 'f':
			o->fp32 = 1;
			break;
		case 'i':
			v = o->maxit = (int)parse_num(optarg, 1, 1L << 30);
			break;
		case 'm':
			o->file = optarg;
			break;
		case 'n':
			v = o->side = (int)parse_num(optarg, 1, CG_MAXSIDE2);
			break;
		case 'p':
			v = o->plat = parse_num(optarg, 0, 1000);
			break;
		case 'P':
			o->pipelined = 1;
			break;
		case 'S':
			v = o->split = (int)parse_num(optarg, 0, 1000000);
			break;
		case 't':
			o->tol = strtod(optarg, &end);
			if (*end != '\0' || !(o->tol > 0 && o->tol < 1))
				usage();
			break;
		case 'v':
			v = o->vband = (int)parse_num(optarg, 1, 1 << 20);
			break;
		default:
			usage();
		}
		if (v < 0)
			usage();
	}
	if (optind != argc || (o->dim == 3 && o->side > CG_MAXSIDE3))
		usage();
}

/* Return the devices to use (o->ndev of them), printing their names. */
static cl_device_id *
open_devices(struct opts *o)
{
	cl_platform_id	*plats;
	cl_device_id	*devs;
	cl_uint		 nplat, ndev, d;
	char		*name;

	check(clGetPlatformIDs(0, NULL, &nplat), "clGetPlatformIDs");
	if (o->plat >= (long)nplat) {
		fprintf(stderr, "cg: platform %ld asked for, %u found\n",
		    o->plat, nplat);
		exit(1);
	}
	plats = xcalloc(nplat, sizeof *plats);
	check(clGetPlatformIDs(nplat, plats, NULL), "clGetPlatformIDs");
	check(clGetDeviceIDs(plats[o->plat], CL_DEVICE_TYPE_ALL, 0, NULL,
	    &ndev), "clGetDeviceIDs");
	if (o->ndev > (long)ndev) {
		fprintf(stderr, "cg: %ld devices asked for, platform %ld has "
		    "%u\n", o->ndev, o->plat, ndev);
		exit(1);
	}
	devs = xcalloc(ndev, sizeof *devs);
	check(clGetDeviceIDs(plats[o->plat], CL_DEVICE_TYPE_ALL, ndev, devs,
	    NULL), "clGetDeviceIDs");
	free(plats);
	if (o->ndev < 0)
		o->ndev = ndev;
	for (d = 0; d < o->ndev; d++) {
		name = device_string(devs[d], CL_DEVICE_NAME,
		    "clGetDeviceInfo(CL_DEVICE_NAME)");
		printf("cg: device %u: %s\n", d, name);
		free(name);
	}
	return (devs);
}

/* Load or make the matrix o names into a; exit with a message if it cannot. */
static void
load_matrix(const struct opts *o, struct mtx *a, char *desc, size_t len)
{
	char	err[256];

	if (o->file != NULL) {
		if (mtx_read(a, o->file, err, sizeof err) != 0) {
			fprintf(stderr, "cg: %s: %s\n", o->file, err);
			exit(1);
		}
		snprintf(desc, len, "%s", o->file);
	} else {
		if (mtx_poisson(a, o->dim, o->side) != 0) {
			fprintf(stderr, "cg: cannot make a %dD Poisson matrix "
			    "of side %d\n", o->dim, o->side);
			exit(1);
		}
		snprintf(desc, len, "poisson%dd side=%d", o->dim, o->side);
	}
}

/* Return the 2-norm of a - b (b may be NULL). */
static double
norm_diff(const double *a, const double *b, int n)
{
	double	s = 0, d;
	int	i;

	for (i = 0; i < n; i++) {
		d = a[i] - (b != NULL ? b[i] : 0);
		s += d * d;
	}
	return (sqrt(s));
}

/*
 * Check x against A x = rhs and the known solution xs (cond: a bound on
 * A's condition number, or 0), and res and x against ref and xref (one
 * band's solve, or NULL). Print each check; return whether all
 * passed.
 */
static int
verify(const struct solver *sv, const struct result *res,
    const struct result *ref, double cond, const double *xs,
    const double *rhs, const double *x, const double *xref)
{
	const struct mtx	*a = sv->a;
	double			*ax, tr, er, lim;
	int			 ok = 1;

	ok &= res->converged;
	printf("cg: converged: %s\n", res->converged ? "OK" : "FAIL (iteration "
	    "limit or breakdown)");

	/* The true residual: the recurrence's one drifts with rounding. */
	ax = xcalloc(a->n, sizeof *ax);
	mtx_mul(a, x, ax);
	tr = norm_diff(rhs, ax, a->n) / norm_diff(rhs, NULL, a->n);
	lim = 10 * sv->tol + (sv->fp64 ? 1e-12 : 1e-5);
	ok &= tr <= lim;
	printf("cg: true residual %.3e (limit %.1e): %s\n", tr, lim,
	    tr <= lim ? "OK" : "FAIL");
	free(ax);

	/*
	 * The error: at most cond(A) times the true residual. A Poisson
	 * matrix of side s has cond(A) = cot^2(pi / (2 (s + 1))) < (s + 1)^2;
	 * a file's is unknown.
	 */
	er = norm_diff(x, xs, a->n) / norm_diff(xs, NULL, a->n);
	if (cond > 0) {
		lim = cond * tr + (sv->fp64 ? 1e-12 : 1e-5);
		ok &= er <= lim;
		printf("cg: error against the known solution %.3e (limit "
		    "%.1e): %s\n", er, lim, er <= lim ? "OK" : "FAIL");
	} else
		printf("cg: error against the known solution %.3e (condition "
		    "unknown: unchecked)\n", er);

	if (ref != NULL) {
		if (ref->iters == res->iters && ref->res == res->res &&
		    memcmp(x, xref, a->n * sizeof *x) == 0)
			printf("cg: same as one band on device 0: %d iterations, "
			    "residual and solution bitwise: OK\n", ref->iters);
		else {
			ok = 0;
			printf("cg: against one band on device 0: %d against "
			    "%d iterations, residual %.17g against %.17g, "
			    "solution %s: FAIL\n", res->iters, ref->iters,
			    res->res, ref->res, memcmp(x, xref, a->n *
			    sizeof *x) == 0 ? "the same" : "different");
		}
	}
	return (ok);
}

int
main(int argc, char **argv)
{
	struct opts	 o;
	struct solver	 sv;
	struct mtx	 a;
	struct result	 res, ref;
	cl_device_id	*devs, *bdevs;
	cl_int		 err;
	double		*xs, *rhs, *x, *xref = NULL, it_us, cond;
	char		 desc[512];
	size_t		 stage;
	int		 nb, ok, p, d, k, groups;

	parse_args(&o, argc, argv);
	load_matrix(&o, &a, desc, sizeof desc);
	devs = open_devices(&o);
	groups = (a.n + CG_WG - 1) / CG_WG;
	if (o.ndev * o.vband > groups) {
		fprintf(stderr, "cg: %ld bands for %d rows: a band needs at "
		    "least %d rows\n", o.ndev * o.vband, a.n, CG_WG);
		return (1);
	}
	nb = (int)(o.ndev * o.vband);
	memset(&sv, 0, sizeof sv);
	sv.a = &a;
	sv.pipelined = o.pipelined;
	sv.maxit = o.maxit;
	sv.fp64 = !o.fp32;
	for (d = 0; d < o.ndev; d++)
		sv.fp64 &= device_has_fp64(devs[d]);
	sv.rsize = sv.fp64 ? sizeof (double) : sizeof (float);
	sv.tol = o.tol > 0 ? o.tol : sv.fp64 ? 1e-8 : 1e-5;
	printf("cg: precision %s\n", sv.fp64 ? "double (cl_khr_fp64)" :
	    o.fp32 ? "float (-f)" : "float (a device lacks cl_khr_fp64)");
	if (o.check < 0)
		o.check = nb > 1 && a.n <= CG_CHECKROWS;
	printf("cg: matrix %s rows=%d nnz=%d method=%s bands=%d tol=%.1e\n",
	    desc, a.n, a.rp[a.n], sv.pipelined ? "cg-pipelined" : "cg", nb,
	    sv.tol);

	/* x* in the device precision, b = A x* rounded to it. */
	xs = xcalloc(a.n, sizeof *xs);
	rhs = xcalloc(a.n, sizeof *rhs);
	x = xcalloc(a.n, sizeof *x);
	for (k = 0; k < a.n; k++) {
		xs[k] = 1 + 0.5 * sin(0.37 * k);
		xs[k] = sv.fp64 ? xs[k] : (double)(float)xs[k];
	}
	mtx_mul(&a, xs, rhs);
	for (k = 0; k < a.n && !sv.fp64; k++)
		rhs[k] = (float)rhs[k];
	/* Staging: a band's values, a vector, or every group's partials. */
	stage = a.rp[a.n] > a.n ? a.rp[a.n] : a.n;
	stage = stage > 2 * (size_t)groups ? stage : 2 * (size_t)groups;
	sv.stage = xcalloc(stage, sv.rsize);
	sv.part = xcalloc(2 * (size_t)groups, sizeof *sv.part);

	sv.ctx = clCreateContext(NULL, o.ndev, devs, NULL, NULL, &err);
	check(err, "clCreateContext");
	sv.prog = build_program(sv.ctx, devs, o.ndev, sv.fp64);

	/* Band p goes to device p / vband. */
	bdevs = xcalloc(nb, sizeof *bdevs);
	for (p = 0; p < nb; p++)
		bdevs[p] = devs[p / o.vband];
	run(&sv, bdevs, nb, rhs, x, o.split, &res);
	it_us = res.iters > 0 ? res.elapsed / res.iters * 1e6 : 0;
	printf("cg: iterations=%d residual=%.10e\n", res.iters, res.res);
	printf("cg: devices=%ld rows=%d method=%s iterations=%d "
	    "reductions_per_iter=%d iter_us=%.1f elapsed_s=%.3f\n", o.ndev, a.n,
	    sv.pipelined ? "cg-pipelined" : "cg", res.iters,
	    sv.pipelined ? 1 : 2, it_us, res.elapsed);
	if (o.split > 0) {
		printf("cg: split over %d iterations, queues finished after each "
		    "phase, us per iteration:", o.split);
		for (k = 0; k < PH_COUNT; k++)
			printf(" %s_us=%.1f", phase_name[k], res.tph[k] * 1e6);
		printf("\n");
	}
	if (o.check) {
		xref = xcalloc(a.n, sizeof *xref);
		run(&sv, devs, 1, rhs, xref, 0, &ref);
	}
	cond = o.file != NULL ? 0 : (o.side + 1.0) * (o.side + 1.0);
	ok = verify(&sv, &res, o.check ? &ref : NULL, cond, xs, rhs, x, xref);

	check(clReleaseProgram(sv.prog), "clReleaseProgram");
	check(clReleaseContext(sv.ctx), "clReleaseContext");
	free(sv.stage);
	free(sv.part);
	free(xref);
	free(bdevs);
	free(xs);
	free(rhs);
	free(x);
	free(devs);
	mtx_free(&a);
	printf("cg: %s\n", ok ? "PASS" : "FAIL");
	return (ok ? 0 : 1);
}
