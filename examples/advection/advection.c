/* advection.c - ink carried by a swirling flow, the grid split in Y over every device of a platform. */

/*
 * The field q lives on an N x N grid of cells over the unit square. One step
 * is first-order upwind finite volume in flux form: every face flux is
 * computed the same way by the two cells it separates, so what leaves one cell
 * enters the other and the total mass only changes by rounding. The velocity
 * is LeVeque's swirling deformation flow,
 *	u = sin^2(pi x) sin(2 pi y) g(t),  v = -sin^2(pi y) sin(2 pi x) g(t),
 *	g(t) = cos(pi t / T),
 * taken as differences of the stream function psi = sin^2(pi x) sin^2(pi y)
 * g(t) / pi at cell corners, so it is divergence free on the grid and zero
 * across the walls. After one period T the flow has undone itself and q is
 * back where it started, smeared only by the scheme's diffusion.
 *
 * Each device (or, with -v K, each of K bands of one device) owns a band of
 * rows and two buffers (this step's input, its output) holding the band plus
 * H halo rows on each side (-H, default 1). After each step (every H steps
 * with -H H) the band's H edge rows go to the neighbours' halos with OpenCL
 * copies only: first into a small edge buffer on the owner's queue, then
 * from the edge buffer into the neighbour's halo on the neighbour's queue.
 * Only edge buffers cross devices, so a runtime that moves whole buffers
 * between devices moves H rows per halo. Each side has two edge buffers,
 * used by turns, so packing the next edge never waits for the neighbour to
 * finish unpacking the last one.
 *
 * With H > 1 the exchange happens once per H steps: the first step after
 * one computes the band and H - 1 rows on each side of it, from the fresh
 * halo, the next H - 2 rows, and so on, the last the band alone
 * (communication-avoiding ghost zones: a little recomputation for 1/H of
 * the exchanges). Every cell's value is computed from the same operands
 * either way, so the result is bit for bit the same for every H and split.
 */

#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

const char	*ex_prog = "advection";

#define ADV_PI		3.14159265358979323846
#define ADV_PERIOD	1.0	/* T: the flow turns back at T/2, is undone at T */
#define ADV_COURANT	0.9	/* fraction of the largest stable time step */
#define ADV_MINN	16
#define ADV_MAXN	8192
#define ADV_CHECKN	2048	/* largest n checked against one band by default */
#define ADV_L1N		64	/* smallest n whose L1 error after a period is checked */

static const char *source =
	"#pragma OPENCL FP_CONTRACT OFF\n"
	"#ifdef ADV_FP64\n"
	"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
	"typedef double real;\n"
	"#else\n"
	"typedef float real;\n"
	"#endif\n"
	"\n"
	"/*\n"
	" * One upwind step of one cell. q and qn hold grid rows yb, yb+1, ...\n"
	" * (halo, band, halo); this launch does buffer rows r0, r0+1, ...;\n"
	" * s[k] = sin^2(pi k / n), k = 0..n;\n"
	" * gs = g(t) n / pi; lam = dt n. A face's flux is computed from the same\n"
	" * operands by both cells it separates: mass moves, it is never made.\n"
	" */\n"
	"__kernel void\n"
	"advect_step(__global const real *q, __global real *qn,\n"
	"    __global const real *s, const int n, const int yb, const real gs,\n"
	"    const real lam, const int r0)\n"
	"{\n"
	"	const int	i = get_global_id(0);\n"
	"	const int	r = get_global_id(1) + r0;\n"
	"	const int	j = yb + r;\n"
	"	const int	c = r * n + i;\n"
	"	const real	dx = s[i + 1] - s[i], dy = s[j + 1] - s[j];\n"
	"	const real	qc = q[c];\n"
	"	real		fw = 0, fe = 0, fs = 0, fn = 0, u;\n"
	"\n"
	"	if (i > 0) {\n"
	"		u = gs * s[i] * dy;\n"
	"		fw = u * (u > 0 ? q[c - 1] : qc);\n"
	"	}\n"
	"	if (i < n - 1) {\n"
	"		u = gs * s[i + 1] * dy;\n"
	"		fe = u * (u > 0 ? qc : q[c + 1]);\n"
	"	}\n"
	"	if (j > 0) {\n"
	"		u = -gs * s[j] * dx;\n"
	"		fs = u * (u > 0 ? q[c - n] : qc);\n"
	"	}\n"
	"	if (j < n - 1) {\n"
	"		u = -gs * s[j + 1] * dx;\n"
	"		fn = u * (u > 0 ? qc : q[c + n]);\n"
	"	}\n"
	"	qn[c] = qc - lam * ((fe - fw) + (fn - fs));\n"
	"}\n";

/*
 * A band of rows on one queue. Queues are in order; at step n, with cur the
 * input and nxt the output buffer, and t the turn of the edge buffers:
 *	kernel		on this queue: buf[cur] -> buf[nxt], the band and the
 *			rows around it still to be had from this halo
 *	pack[side]	on this queue: H edge rows of buf[nxt] -> edge[side][t];
 *			waits for unpack[side][t] of two exchanges before (the
 *			last reader of that edge buffer)
 *	unpack[side][t]	on the neighbour's queue: edge[side][t] -> neighbour's
 *			buf[nxt] halo rows; waits for pack[side]
 * The neighbour's next kernel follows unpack on its queue, and unpack follows
 * the neighbour's previous kernel, the last reader of that halo. Overlapped
 * (the default), an exchange step's kernel is split: the edge rows, pack,
 * then the interior rows, then the unpacks, so the edges cross between
 * nodes while the interior computes.
 */
struct band {
	cl_command_queue	 queue;
	cl_kernel		 kernel;
	cl_mem			 buf[2];	/* rows y0-H .. y0+ny+H-1 */
	cl_mem			 edge[2][2];	/* [0]: rows y0.., [1]: ..y0+ny-1 */
	cl_event		 pack[2];
	cl_event		 unpack[2][2];
	int			 y0;		/* first row of the band */
	int			 ny;		/* rows in the band */
	int			 inner;		/* rows left for launch_inner */
};

struct opts {
	int			 n;
	int			 steps;		/* -1: one period */
	int			 vband;		/* bands per device */
	int			 halo;		/* H: rows per exchange */
	int			 overlap;	/* edges first (-B: not) */
	int			 check;		/* -1: when it is cheap */
	int			 fp32;
	long			 plat;
	long			 ndev;		/* -1: all */
};

struct sim {
	cl_context		 ctx;
	cl_program		 prog;
	cl_mem			 table;		/* s[k], k = 0..n */
	int			 fp64;
	size_t			 rsize;		/* bytes per device real */
	int			 n;
	int			 halo;		/* H */
	int			 overlap;	/* edges first (not -B) */
	double			 dt;
	void			*stage;		/* host rows in device precision */
};

/* Allocate or exit. */
static void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if ((p = calloc(n, size)) == NULL) {
		perror("advection: calloc");
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
	char		*log;
	cl_uint		 d;

	prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
	check(err, "clCreateProgramWithSource");
	err = clBuildProgram(prog, ndev, devs, fp64 ? "-DADV_FP64" : "", NULL,
	    NULL);
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

/* Fill the cosine bell the ink starts as, rounded to the device precision. */
static void
init_field(double *q, int n, int fp64)
{
	const double	cx = 0.5, cy = 0.75, radius = 0.2;
	double		x, y, r;
	int		i, j;

	for (j = 0; j < n; j++) {
		for (i = 0; i < n; i++) {
			x = (i + 0.5) / n;
			y = (j + 0.5) / n;
			r = sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy));
			r = r < radius ? 0.5 * (1 + cos(ADV_PI * r / radius)) : 0;
			q[(size_t)j * n + i] = fp64 ? r : (double)(float)r;
		}
	}
}

/* Fill s[k] = sin^2(pi k / n), k = 0..n, exactly symmetric and 0 at the walls. */
static void
init_table(double *s, int n, int fp64)
{
	double	v;
	int	k;

	for (k = 0; k <= n / 2; k++) {
		v = sin(ADV_PI * k / n);
		v = fp64 ? v * v : (double)(float)(v * v);
		s[k] = s[n - k] = v;
	}
}

/*
 * Return the largest total flow out of (or into) any cell at |g| = 1, in
 * cells per unit time: dt times this must stay below 1 for the upwind step
 * to keep q between its old neighbours' values.
 */
static double
max_outflow(const double *s, int n)
{
#define POS(x) ((x) > 0 ? (x) : 0)
	double	fw, fe, fs, fn, out, in, worst = 0;
	int	i, j;

	for (j = 0; j < n; j++) {
		for (i = 0; i < n; i++) {
			fw = s[i] * (s[j + 1] - s[j]);
			fe = s[i + 1] * (s[j + 1] - s[j]);
			fs = -s[j] * (s[i + 1] - s[i]);
			fn = -s[j + 1] * (s[i + 1] - s[i]);
			out = POS(fe) + POS(-fw) + POS(fn) + POS(-fs);
			in = POS(-fe) + POS(fw) + POS(-fn) + POS(fs);
			worst = out > worst ? out : worst;
			worst = in > worst ? in : worst;
		}
	}
#undef POS
	return (worst * n * n / ADV_PI);
}

/* Copy count values into stage from index at, in the device precision. */
static void
to_device(const struct sim *sim, size_t at, const double *src, size_t count)
{
	size_t	i;

	if (sim->fp64)
		memcpy((double *)sim->stage + at, src, count * sizeof (double));
	else {
		for (i = 0; i < count; i++)
			((float *)sim->stage)[at + i] = (float)src[i];
	}
}

/* Copy count values out of stage, from the device precision. */
static void
from_device(const struct sim *sim, double *dst, size_t count)
{
	size_t	i;

	if (sim->fp64)
		memcpy(dst, sim->stage, count * sizeof (double));
	else {
		for (i = 0; i < count; i++)
			dst[i] = ((float *)sim->stage)[i];
	}
}

/* Set a real kernel argument in the device precision. */
static void
set_real(const struct sim *sim, cl_kernel kernel, cl_uint idx, double v)
{
	float	f = (float)v;

	if (sim->fp64)
		check(clSetKernelArg(kernel, idx, sizeof v, &v),
		    "clSetKernelArg(real)");
	else
		check(clSetKernelArg(kernel, idx, sizeof f, &f),
		    "clSetKernelArg(real)");
}

/* Create band p of nb: its queue, kernel, and buffers holding q0's rows. */
static void
band_create(struct sim *sim, struct band *b, int p, int nb, cl_device_id dev,
    const double *q0)
{
	size_t	 n = sim->n, row = n * sim->rsize;
	cl_int	 err;
	int	 k, r, g, yb, H = sim->halo;

	b->y0 = (int)((long)p * sim->n / nb);
	b->ny = (int)((long)(p + 1) * sim->n / nb) - b->y0;

	b->queue = clCreateCommandQueue(sim->ctx, dev, 0, &err);
	check(err, "clCreateCommandQueue");
	b->kernel = clCreateKernel(sim->prog, "advect_step", &err);
	check(err, "clCreateKernel");
	check(clSetKernelArg(b->kernel, 2, sizeof sim->table, &sim->table),
	    "clSetKernelArg(2)");
	check(clSetKernelArg(b->kernel, 3, sizeof sim->n, &sim->n),
	    "clSetKernelArg(3)");
	yb = b->y0 - H;
	check(clSetKernelArg(b->kernel, 4, sizeof yb, &yb),
	    "clSetKernelArg(4)");
	set_real(sim, b->kernel, 6, sim->dt * sim->n);

	/* Halo rows outside the grid stay zero; the kernel never reads them. */
	memset(sim->stage, 0, (b->ny + 2 * H) * row);
	for (r = 0; r < b->ny + 2 * H; r++) {
		g = yb + r;
		if (g >= 0 && g < sim->n)
			to_device(sim, r * n, q0 + g * n, n);
	}
	for (k = 0; k < 2; k++) {
		b->buf[k] = clCreateBuffer(sim->ctx, CL_MEM_READ_WRITE |
		    CL_MEM_COPY_HOST_PTR, (b->ny + 2 * H) * row, sim->stage,
		    &err);
		check(err, "clCreateBuffer(band)");
	}
	for (k = 0; k < 4; k++) {
		b->edge[k / 2][k % 2] = clCreateBuffer(sim->ctx,
		    CL_MEM_READ_WRITE, H * row, NULL, &err);
		check(err, "clCreateBuffer(edge)");
	}
}

/* Release a band's objects. */
static void
band_free(struct band *b)
{
	int	k;

	for (k = 0; k < 4; k++) {
		if (b->unpack[k / 2][k % 2] != NULL)
			check(clReleaseEvent(b->unpack[k / 2][k % 2]),
			    "clReleaseEvent");
		check(clReleaseMemObject(b->edge[k / 2][k % 2]),
		    "clReleaseMemObject");
	}
	for (k = 0; k < 2; k++)
		check(clReleaseMemObject(b->buf[k]), "clReleaseMemObject");
	check(clReleaseKernel(b->kernel), "clReleaseKernel");
	check(clReleaseCommandQueue(b->queue), "clReleaseCommandQueue");
}

/*
 * Enqueue the kernel on a band: buf[cur] to buf[cur ^ 1], gs = g(t) n / pi,
 * for grid rows lo .. hi - 1 (within the band and its halos).
 */
static void
launch_rows(const struct sim *sim, struct band *b, int cur, double gs, int lo,
    int hi)
{
	size_t	gsz[2];
	int	r0;

	r0 = lo - (b->y0 - sim->halo);
	check(clSetKernelArg(b->kernel, 0, sizeof (cl_mem), &b->buf[cur]),
	    "clSetKernelArg(0)");
	check(clSetKernelArg(b->kernel, 1, sizeof (cl_mem), &b->buf[cur ^ 1]),
	    "clSetKernelArg(1)");
	set_real(sim, b->kernel, 5, gs);
	check(clSetKernelArg(b->kernel, 7, sizeof r0, &r0), "clSetKernelArg(7)");
	gsz[0] = sim->n;
	gsz[1] = hi - lo;
	check(clEnqueueNDRangeKernel(b->queue, b->kernel, 2, NULL, gsz, NULL, 0,
	    NULL, NULL), "clEnqueueNDRangeKernel");
}

/* The kernel on a band and ext rows on each side of it (within the grid). */
static void
launch(const struct sim *sim, struct band *b, int cur, double gs, int ext)
{
	int	lo, hi;

	lo = b->y0 - ext > 0 ? b->y0 - ext : 0;
	hi = b->y0 + b->ny + ext < sim->n ? b->y0 + b->ny + ext : sim->n;
	launch_rows(sim, b, cur, gs, lo, hi);
}

/*
 * Overlapped exchange step, first half: the kernel on the H rows of each
 * edge a neighbour needs (the whole band when those cover it). *inner
 * gets whether rows remain for launch_inner.
 */
static void
launch_edges(const struct sim *sim, struct band *b, int p, int nb, int cur,
    double gs, int *inner)
{
	int	H = sim->halo, top = p > 0 ? H : 0, bot = p < nb - 1 ? H : 0;

	*inner = top + bot < b->ny;
	if (!*inner) {
		launch(sim, b, cur, gs, 0);
		return;
	}
	if (top)
		launch_rows(sim, b, cur, gs, b->y0, b->y0 + H);
	if (bot)
		launch_rows(sim, b, cur, gs, b->y0 + b->ny - H, b->y0 + b->ny);
}

/* Overlapped exchange step, second half: the rows launch_edges left. */
static void
launch_inner(const struct sim *sim, struct band *b, int p, int nb, int cur,
    double gs)
{
	int	H = sim->halo, top = p > 0 ? H : 0, bot = p < nb - 1 ? H : 0;

	launch_rows(sim, b, cur, gs, b->y0 + top, b->y0 + b->ny - bot);
}

/*
 * Enqueue step s on every band: kernels, then, at the end of every H
 * steps but the run's last, the halo exchange. Overlapped (sim->overlap),
 * an exchange step computes each band's edge rows first, packs them, then
 * the interior, and only then the neighbours' unpacks: the edges travel
 * between nodes while the interior computes. Otherwise (-B) the whole
 * band is computed before its edges leave.
 */
static void
step(struct sim *sim, struct band *b, int nb, int s, int last)
{
	size_t		 row = (size_t)sim->n * sim->rsize, src, dst;
	int		 H = sim->halo, k = s % H, xchg;
	int		 cur = s & 1, nxt = cur ^ 1, t = (s / H) & 1, p, side, q;
	cl_event	*wait;
	double		 gs;

	/* g at the middle of the step keeps the run time-reversible. */
	gs = cos(ADV_PI * (s + 0.5) * sim->dt / ADV_PERIOD) * sim->n / ADV_PI;
	xchg = k == H - 1 && s != last && nb > 1;
	for (p = 0; p < nb; p++) {
		b[p].inner = 0;
		if (xchg && sim->overlap)
			launch_edges(sim, &b[p], p, nb, cur, gs, &b[p].inner);
		else
			launch(sim, &b[p], cur, gs, H - 1 - k);
	}
	if (!xchg) {
		for (p = 0; p < nb; p++)
			check(clFlush(b[p].queue), "clFlush");
		return;
	}
	for (p = 0; p < nb; p++) {
		for (side = 0; side < 2; side++) {
			if ((side == 0 && p == 0) || (side == 1 && p == nb - 1))
				continue;
			/* Buffer rows H .. 2H-1 or ny .. ny+H-1: the edge. */
			src = (side == 0 ? (size_t)H : (size_t)b[p].ny) * row;
			wait = b[p].unpack[side][t] != NULL ?
			    &b[p].unpack[side][t] : NULL;
			check(clEnqueueCopyBuffer(b[p].queue, b[p].buf[nxt],
			    b[p].edge[side][t], src, 0, H * row, wait != NULL,
			    wait, &b[p].pack[side]), "clEnqueueCopyBuffer(pack)");
			if (wait != NULL) {
				check(clReleaseEvent(*wait), "clReleaseEvent");
				*wait = NULL;
			}
		}
		/* The edges go now, ahead of the interior. */
		if (sim->overlap)
			check(clFlush(b[p].queue), "clFlush");
	}
	/*
	 * The interior reads buf[cur] and writes band rows of buf[nxt]; the
	 * unpacks after it write only halo rows of buf[nxt]: no conflict,
	 * and a queue never waits for a neighbour before its interior.
	 */
	for (p = 0; p < nb; p++)
		if (b[p].inner)
			launch_inner(sim, &b[p], p, nb, cur, gs);
	for (p = 0; p < nb; p++) {
		for (side = 0; side < 2; side++) {
			if (b[p].pack[side] == NULL)
				continue;
			q = side == 0 ? p - 1 : p + 1;
			/* The neighbour's top halo, or its bottom one. */
			dst = (side == 0 ? (size_t)b[q].ny + H : 0) * row;
			check(clEnqueueCopyBuffer(b[q].queue,
			    b[p].edge[side][t], b[q].buf[nxt], 0, dst, H * row,
			    1, &b[p].pack[side], &b[p].unpack[side][t]),
			    "clEnqueueCopyBuffer(unpack)");
			check(clReleaseEvent(b[p].pack[side]), "clReleaseEvent");
			b[p].pack[side] = NULL;
		}
	}
	/* Other queues wait on these commands: submit them now. */
	for (p = 0; p < nb; p++)
		check(clFlush(b[p].queue), "clFlush");
}

/* Finish every band's queue. */
static void
finish_all(struct band *b, int nb)
{
	int	p;

	for (p = 0; p < nb; p++)
		check(clFinish(b[p].queue), "clFinish");
}

/*
 * Exit if a halo exchange failed. A failed copy fails every command that
 * waits on it, and each exchange waits on the one two before on its edge
 * buffer, so the last ones tell; the kernels wait on no event and would
 * go on with a stale halo.
 */
static void
exchange_status(struct band *b, int nb)
{
	cl_int	st;
	int	p, k;

	for (p = 0; p < nb; p++) {
		for (k = 0; k < 4; k++) {
			if (b[p].unpack[k / 2][k % 2] == NULL)
				continue;
			check(clGetEventInfo(b[p].unpack[k / 2][k % 2],
			    CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
			    NULL), "clGetEventInfo");
			if (st < 0) {
				fprintf(stderr, "advection: a halo exchange of "
				    "band %d failed: error %d (%s)\n", p, (int)st,
				    clerr_name(st));
				exit(1);
			}
		}
	}
}

/*
 * Advance q0 by steps on nb bands, band p on devs[p], into q. Return the
 * seconds the stepping took, all queues finished before and after; *enq:
 * the seconds until every step was enqueued (much less than the whole
 * when the host is not what the run waits for).
 */
static double
run(struct sim *sim, cl_device_id *devs, int nb, int steps, const double *q0,
    double *q, double *enq)
{
	struct band	*b;
	size_t		 n = sim->n;
	double		 t0, t1;
	int		 p, s;

	b = xcalloc(nb, sizeof *b);
	/*
	 * One untimed launch per band lets a runtime that compiles kernels at
	 * first launch do it now; step 0 overwrites all that it writes.
	 */
	for (p = 0; p < nb; p++) {
		band_create(sim, &b[p], p, nb, devs[p], q0);
		launch(sim, &b[p], 0, 0, sim->halo - 1);
	}
	finish_all(b, nb);

	t0 = now();
	for (s = 0; s < steps; s++)
		step(sim, b, nb, s, steps - 1);
	*enq = now() - t0;
	finish_all(b, nb);
	t1 = now();
	exchange_status(b, nb);

	for (p = 0; p < nb; p++) {
		check(clEnqueueReadBuffer(b[p].queue, b[p].buf[steps & 1],
		    CL_TRUE, sim->halo * n * sim->rsize, b[p].ny * n * sim->rsize,
		    sim->stage, 0, NULL, NULL), "clEnqueueReadBuffer");
		from_device(sim, q + b[p].y0 * n, b[p].ny * n);
	}
	for (p = 0; p < nb; p++)
		band_free(&b[p]);
	free(b);
	return (t1 - t0);
}

/* Sum count values, or their absolute differences from ref, compensated. */
static double
sum(const double *q, const double *ref, size_t count)
{
	double	s = 0, c = 0, y, t;
	size_t	i;

	for (i = 0; i < count; i++) {
		y = (ref != NULL ? fabs(q[i] - ref[i]) : q[i]) - c;
		t = s + y;
		c = (t - s) - y;
		s = t;
	}
	return (s);
}

/* Print usage and exit. */
static void
usage(void)
{
	fprintf(stderr,
	    "usage: advection [-BcCfO] [-d count] [-n cells] [-p platform] "
	    "[-s steps] [-v bands] [-H rows]\n"
	    "  -n cells     grid is cells x cells, %d to %d (default 1024)\n"
	    "  -s steps     steps to run (default: one period of the flow)\n"
	    "  -p platform  platform index (default VCL_EXAMPLE_PLATFORM or 0)\n"
	    "  -d count     use the first count devices (default all)\n"
	    "  -v bands     split each device into this many bands (default 1)\n"
	    "  -H rows      halo depth: exchange H rows every H steps (default 1)\n"
	    "  -B           compute each band whole, then exchange (default -O:\n"
	    "               edges first, the interior while they travel)\n"
	    "  -c / -C      do / do not check against one band on device 0\n"
	    "               (default: check when bands > 1 and cells <= %d)\n"
	    "  -f           single precision even where fp64 is supported\n",
	    ADV_MINN, ADV_MAXN, ADV_CHECKN);
	exit(2);
}

/* Parse the command line into o. */
static void
parse_args(struct opts *o, int argc, char **argv)
{
	const char	*env;
	long		 v = 0;
	int		 ch;

	o->n = 1024;
	o->steps = o->check = o->ndev = -1;
	o->vband = o->halo = 1;
	o->plat = o->fp32 = 0;
	o->overlap = 1;
	if ((env = getenv("VCL_EXAMPLE_PLATFORM")) != NULL && *env != '\0' &&
	    (o->plat = parse_num(env, 0, 1000)) < 0)
		usage();
	while ((ch = getopt(argc, argv, "BcCd:fH:n:Op:s:v:")) != -1) {
		switch (ch) {
		case 'B':
			o->overlap = 0;
			break;
		case 'O':
			o->overlap = 1;
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
		case 'n':
			v = o->n = (int)parse_num(optarg, ADV_MINN, ADV_MAXN);
			break;
		case 'p':
			v = o->plat = parse_num(optarg, 0, 1000);
			break;
		case 's':
			v = o->steps = (int)parse_num(optarg, 1, 1L << 30);
			break;
		case 'v':
			v = o->vband = (int)parse_num(optarg, 1, ADV_MAXN);
			break;
		case 'H':
			v = o->halo = (int)parse_num(optarg, 1, ADV_MAXN);
			break;
		default:
			usage();
		}
		if (v < 0)
			usage();
	}
	if (optind != argc)
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
		fprintf(stderr, "advection: platform %ld asked for, %u found\n",
		    o->plat, nplat);
		exit(1);
	}
	plats = xcalloc(nplat, sizeof *plats);
	check(clGetPlatformIDs(nplat, plats, NULL), "clGetPlatformIDs");
	check(clGetDeviceIDs(plats[o->plat], CL_DEVICE_TYPE_ALL, 0, NULL,
	    &ndev), "clGetDeviceIDs");
	if (o->ndev > (long)ndev) {
		fprintf(stderr, "advection: %ld devices asked for, platform %ld "
		    "has %u\n", o->ndev, o->plat, ndev);
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
		printf("advection: device %u: %s\n", d, name);
		free(name);
	}
	return (devs);
}

/*
 * Check q, advanced steps from q0, and ref (one band's result, or NULL).
 * Print each check; return whether all passed.
 */
static int
verify(const struct sim *sim, int steps, int period, const double *q0,
    const double *q, const double *ref)
{
	size_t	cells = (size_t)sim->n * sim->n, i;
	double	m0, m1, rel, diff = 0, top = 0, tol;
	int	ok = 1;

	/* Mass: what the flux form conserves. A NaN fails here too. */
	m0 = sum(q0, NULL, cells) / cells;
	m1 = sum(q, NULL, cells) / cells;
	rel = fabs(m1 - m0) / m0;
	tol = sim->fp64 ? 1e-9 : 1e-4;
	ok &= rel < tol;
	printf("advection: mass %.15g -> %.15g, relative change %.2e: %s\n",
	    m0, m1, rel, rel < tol ? "OK" : "FAIL");

	/* Bands: the split must not change the answer. */
	if (ref != NULL && memcmp(q, ref, cells * sizeof *q) == 0)
		printf("advection: same as one band on device 0: bitwise OK\n");
	else if (ref != NULL) {
		for (i = 0; i < cells; i++) {
			diff = fmax(diff, fabs(q[i] - ref[i]));
			top = fmax(top, fabs(ref[i]));
		}
		tol = sim->fp64 ? 1e-12 : 1e-5;
		ok &= diff <= tol * top;
		printf("advection: against one band on device 0: max difference "
		    "%.2e of max %.2e: %s\n", diff, top,
		    diff <= tol * top ? "OK" : "FAIL");
	}

	/* Error: the flow undoes itself each period, the scheme smears. */
	rel = sum(q, q0, cells) / sum(q0, NULL, cells);
	if (steps % period != 0)
		printf("advection: L1 change %.4f of the field's L1 norm (not "
		    "a whole period: unchecked)\n", rel);
	else if (sim->n < ADV_L1N)
		printf("advection: L1 error after %d period(s) %.4f of the "
		    "field's L1 norm (n < %d: unchecked)\n", steps / period,
		    rel, ADV_L1N);
	else {
		ok &= rel < 0.5;
		printf("advection: L1 error after %d period(s) %.4f of the "
		    "field's L1 norm: %s\n", steps / period, rel,
		    rel < 0.5 ? "OK" : "FAIL");
	}
	return (ok);
}

int
main(int argc, char **argv)
{
	struct opts	 o;
	struct sim	 sim;
	cl_device_id	*devs, *bdevs;
	cl_int		 err;
	double		*s, *q0, *q, *ref = NULL, mo, elapsed, enq;
	size_t		 cells;
	int		 period, nb, ok, p, d;

	parse_args(&o, argc, argv);
	devs = open_devices(&o);
	if ((nb = (int)o.ndev * o.vband) > o.n) {
		fprintf(stderr, "advection: %d bands for %d rows\n", nb, o.n);
		return (1);
	}
	/* A halo comes from the neighbour's own rows: H <= the least band. */
	if (nb > 1 && o.halo > o.n / nb) {
		fprintf(stderr, "advection: halo depth %d exceeds the %d rows "
		    "of the smallest band\n", o.halo, o.n / nb);
		return (1);
	}
	memset(&sim, 0, sizeof sim);
	sim.n = o.n;
	sim.halo = o.halo;
	/*
	 * Overlapped by default: on two H200s, one server each, it ran 2.7x
	 * the bulk-synchronous schedule at 8192^2 with every-step exchange
	 * (docs/performance.md).
	 */
	sim.overlap = o.overlap;
	sim.fp64 = !o.fp32;
	for (d = 0; d < o.ndev; d++)
		sim.fp64 &= device_has_fp64(devs[d]);
	sim.rsize = sim.fp64 ? sizeof (double) : sizeof (float);
	printf("advection: precision %s\n", sim.fp64 ? "double (cl_khr_fp64)" :
	    o.fp32 ? "float (-f)" : "float (a device lacks cl_khr_fp64)");

	/* Velocity table and the time step: a whole period at the Courant aim. */
	cells = (size_t)sim.n * sim.n;
	s = xcalloc(sim.n + 1, sizeof *s);
	init_table(s, sim.n, sim.fp64);
	mo = max_outflow(s, sim.n);
	period = (int)ceil(ADV_PERIOD * mo / ADV_COURANT);
	sim.dt = ADV_PERIOD / period;
	if (o.steps < 0)
		o.steps = period;
	if (o.check < 0)
		o.check = nb > 1 && sim.n <= ADV_CHECKN;
	printf("advection: n=%d dt=%.6g courant=%.3f steps=%d period=%d "
	    "bands=%d halo=%d schedule=%s\n", sim.n, sim.dt, sim.dt * mo,
	    o.steps, period, nb, sim.halo, sim.overlap ? "overlap" : "bulk");

	q0 = xcalloc(cells, sizeof *q0);
	q = xcalloc(cells, sizeof *q);
	init_field(q0, sim.n, sim.fp64);
	/* Staging for one band with its halos, or the whole grid. */
	sim.stage = xcalloc((size_t)sim.n * ((o.check ? sim.n : sim.n / nb + 1) +
	    2 * sim.halo + 2), sim.rsize);

	sim.ctx = clCreateContext(NULL, o.ndev, devs, NULL, NULL, &err);
	check(err, "clCreateContext");
	sim.prog = build_program(sim.ctx, devs, o.ndev, sim.fp64);
	to_device(&sim, 0, s, sim.n + 1);
	sim.table = clCreateBuffer(sim.ctx, CL_MEM_READ_ONLY |
	    CL_MEM_COPY_HOST_PTR, (sim.n + 1) * sim.rsize, sim.stage, &err);
	check(err, "clCreateBuffer(table)");

	/* Band p goes to device p / vband. */
	bdevs = xcalloc(nb, sizeof *bdevs);
	for (p = 0; p < nb; p++)
		bdevs[p] = devs[p / o.vband];
	elapsed = run(&sim, bdevs, nb, o.steps, q0, q, &enq);
	printf("advection: devices=%ld n=%d steps=%d cells_per_s=%.2e bands=%d "
	    "halo=%d precision=%s elapsed_s=%.3f enqueue_s=%.3f schedule=%s\n",
	    o.ndev, sim.n, o.steps, (double)cells * o.steps / elapsed, nb,
	    sim.halo, sim.fp64 ? "double" : "float", elapsed, enq,
	    sim.overlap ? "overlap" : "bulk");
	if (o.check) {
		ref = xcalloc(cells, sizeof *ref);
		run(&sim, devs, 1, o.steps, q0, ref, &enq);
	}
	ok = verify(&sim, o.steps, period, q0, q, ref);

	check(clReleaseMemObject(sim.table), "clReleaseMemObject");
	check(clReleaseProgram(sim.prog), "clReleaseProgram");
	check(clReleaseContext(sim.ctx), "clReleaseContext");
	free(sim.stage);
	free(ref);
	free(bdevs);
	free(q0);
	free(q);
	free(s);
	free(devs);
	printf("advection: %s\n", ok ? "PASS" : "FAIL");
	return (ok ? 0 : 1);
}
