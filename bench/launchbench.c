/*
 * launchbench.c - asynchronous kernel launches per second on several
 * OpenCL devices in one process, rounds taking turns: a runtime's launch
 * rate moves by tens of percent between rounds (NVIDIA's on an H100: 61.5k
 * to 109.7k/s in one process), so figures from separate runs compare
 * badly. Each round is N launches of a tiny kernel (global size 1, no
 * event), optionally a clFlush every F of them, then one clFinish.
 *
 *   launchbench [-r ROUNDS] [-n N] [-f F] [-t | -s] [-m] [-p CPU]
 *       [-P CPU] SPEC...
 *
 * A SPEC is NAME:DEV, the DEVth device of the first platform whose name
 * contains NAME; -f F applies to the SPECs after it, NAME:DEV/F to that
 * one alone. Two VCL servers
 * listed in VCL_NODES are two devices of the VCL platform, so one run can
 * set native against two server builds. Printed per SPEC: every round's
 * rate, the best and the median with their ratios to the first SPEC's,
 * the mean time the application spent in one launch call, and the median
 * of its rounds' ratios to the first SPEC's round of the same turn (the
 * figure the runtime's drift moves least). Naming one native device twice
 * (two contexts) shows what the drift alone makes of these ratios. With
 * -t, the SPECs after it have their launch calls made by a thread of their
 * own that the main thread feeds through a ring of 64, as a VCL server's
 * strand makes them for its loop: the runtime's cost of that arrangement
 * alone, without VCL. -s is -t with a ring that neither side sleeps on
 * (the fed thread spins for launches, the main thread for room), as a
 * strand spins for its loop; -m has the fed thread make the SPEC's
 * context, queue and kernel too, so that it makes every runtime call of
 * the SPEC; -p CPU pins the fed threads of the SPECs after it to CPU, -P
 * CPU the main thread.
 */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CL/cl.h>

#define SPECS_MAX	8
#define ROUNDS_MAX	100
#define FEED_RING	64		/* launches handed, at most (-t) */

/*
 * -t: the launch calls made by a thread of their own, fed by the main
 * thread through a ring, as a VCL server's strand makes them for its loop.
 */
struct lb_feed {
	pthread_mutex_t		 lock;
	pthread_cond_t		 more;		/* launches to make */
	pthread_cond_t		 room;		/* ring room, or all made */
	unsigned		 n;		/* launches handed, not made */
	double			 call_s;	/* in launch calls (its own) */
	pthread_t		 thread;
	int			 spin;		/* -s: nobody sleeps */
	atomic_uint		 handed;	/* -s: launches handed, ... */
	atomic_uint		 made;		/* ... and made */
	int			 make;		/* -m: it makes the objects */
	int			 cpu;		/* -p: pinned there; -1: not */
	int			 flush;		/* -s: clFlush every this many */
	atomic_int		 ready;		/* -m: objects made */
};

/* One device under test. */
struct lb_spec {
	const char		*text;
	int			 flush;		/* clFlush every this many */
	cl_command_queue	 queue;
	cl_kernel		 kernel;
	struct lb_feed		*feed;		/* -t; NULL: the main thread */
	double			 rate[ROUNDS_MAX];
	double			 call_s;	/* in launch calls, in all */
};

static const char lb_src[] =
    "__kernel void lb_tiny(__global int *p)\n"
    "{ if (get_global_id(0) == 1000000) p[0] = 1; }\n";

/* Seconds, monotonic. */
static double
lb_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec + ts.tv_nsec / 1e9);
}

/* Exits with a message when err is not CL_SUCCESS. */
static void
lb_check(cl_int err, const char *what, const char *spec)
{
	if (err == CL_SUCCESS)
		return;
	fprintf(stderr, "launchbench: %s: %s failed (%d)\n", spec, what,
	    (int)err);
	exit(1);
}

/* For qsort: ascending doubles. */
static int
lb_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return ((x > y) - (x < y));
}

/* The median of n sorted values. */
static double
lb_median(const double *v, int n)
{
	return (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

static double	lb_round_fed(struct lb_spec *, int);
static void	lb_open(struct lb_spec *, const char *, int);

/* Pins the calling thread to cpu (-1: leaves it). */
static void
lb_pin(int cpu, const char *what)
{
	cpu_set_t	set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
		fprintf(stderr, "launchbench: %s: cannot pin to CPU %d\n",
		    what, cpu);
		exit(1);
	}
}

/* Parses NAME:DEV[/F] and makes its context, queue and kernel. */
static void
lb_open(struct lb_spec *sp, const char *text, int flush)
{
	cl_platform_id	 ids[16];
	cl_device_id	 devs[64];
	cl_context	 ctx;
	cl_program	 prog;
	cl_mem		 buf;
	cl_uint		 np, nd, i;
	const char	*src = lb_src, *colon;
	char		 name[256], pname[256];
	int		 dev, f, found = -1;
	cl_int		 err;

	sp->text = text;
	sp->flush = flush;
	colon = strrchr(text, ':');
	if (colon == NULL || (size_t)(colon - text) >= sizeof name ||
	    sscanf(colon + 1, "%d", &dev) != 1 || dev < 0) {
		fprintf(stderr, "launchbench: %s: want NAME:DEV[/F]\n", text);
		exit(1);
	}
	if (strchr(colon, '/') != NULL) {
		if (sscanf(strchr(colon, '/') + 1, "%d", &f) != 1 || f < 0) {
			fprintf(stderr, "launchbench: %s: bad /F\n", text);
			exit(1);
		}
		sp->flush = f;
	}
	memcpy(name, text, colon - text);
	name[colon - text] = '\0';
	lb_check(clGetPlatformIDs(16, ids, &np), "clGetPlatformIDs", text);
	for (i = 0; i < np && i < 16 && found < 0; i++) {
		lb_check(clGetPlatformInfo(ids[i], CL_PLATFORM_NAME,
		    sizeof pname, pname, NULL), "clGetPlatformInfo", text);
		if (strstr(pname, name) != NULL)
			found = (int)i;
	}
	if (found < 0) {
		fprintf(stderr, "launchbench: %s: no platform named so\n", text);
		exit(1);
	}
	lb_check(clGetDeviceIDs(ids[found], CL_DEVICE_TYPE_ALL, 64, devs,
	    &nd), "clGetDeviceIDs", text);
	if ((cl_uint)dev >= nd || dev >= 64) {
		fprintf(stderr, "launchbench: %s: the platform has %u devices\n",
		    text, nd);
		exit(1);
	}
	ctx = clCreateContext(NULL, 1, &devs[dev], NULL, NULL, &err);
	lb_check(err, "clCreateContext", text);
	sp->queue = clCreateCommandQueue(ctx, devs[dev], 0, &err);
	lb_check(err, "clCreateCommandQueue", text);
	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	lb_check(err, "clCreateProgramWithSource", text);
	lb_check(clBuildProgram(prog, 1, &devs[dev], NULL, NULL, NULL),
	    "clBuildProgram", text);
	sp->kernel = clCreateKernel(prog, "lb_tiny", &err);
	lb_check(err, "clCreateKernel", text);
	buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
	lb_check(err, "clCreateBuffer", text);
	lb_check(clSetKernelArg(sp->kernel, 0, sizeof buf, &buf),
	    "clSetKernelArg", text);
}

/* One round on sp: n launches, a flush every sp->flush, one clFinish. */
static double
lb_round(struct lb_spec *sp, int n)
{
	size_t	one = 1;
	double	t0, a;
	int	i;

	if (sp->feed != NULL)
		return (lb_round_fed(sp, n));
	t0 = lb_now();
	for (i = 0; i < n; i++) {
		a = lb_now();
		lb_check(clEnqueueNDRangeKernel(sp->queue, sp->kernel, 1, NULL,
		    &one, NULL, 0, NULL, NULL), "clEnqueueNDRangeKernel",
		    sp->text);
		sp->call_s += lb_now() - a;
		if (sp->flush > 0 && i % sp->flush == sp->flush - 1)
			lb_check(clFlush(sp->queue), "clFlush", sp->text);
	}
	lb_check(clFinish(sp->queue), "clFinish", sp->text);
	return (n / (lb_now() - t0));
}

/* -s: the feeding thread's loop, spinning for launches. */
static void
lb_feed_spin(struct lb_spec *sp)
{
	struct lb_feed	*f = sp->feed;
	size_t		 one = 1;
	unsigned	 made = 0;
	double		 a;

	for (;;) {
		while (atomic_load_explicit(&f->handed,
		    memory_order_acquire) == made)
			;
		a = lb_now();
		lb_check(clEnqueueNDRangeKernel(sp->queue, sp->kernel, 1, NULL,
		    &one, NULL, 0, NULL, NULL), "clEnqueueNDRangeKernel",
		    sp->text);
		f->call_s += lb_now() - a;
		if (f->flush > 0 && (made + 1) % f->flush == 0)
			lb_check(clFlush(sp->queue), "clFlush", sp->text);
		atomic_store_explicit(&f->made, ++made, memory_order_release);
	}
}

/* -t, -s: the feeding thread's loop, making every launch handed to it. */
static void *
lb_feed_run(void *arg)
{
	struct lb_spec	*sp = arg;
	struct lb_feed	*f = sp->feed;
	size_t		 one = 1;
	double		 a;

	lb_pin(f->cpu, sp->text);
	if (f->make) {
		lb_open(sp, sp->text, f->flush);
		f->flush = sp->flush;
		atomic_store(&f->ready, 1);
	}
	if (f->spin)
		lb_feed_spin(sp);
	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (f->n == 0)
			pthread_cond_wait(&f->more, &f->lock);
		pthread_mutex_unlock(&f->lock);
		a = lb_now();
		lb_check(clEnqueueNDRangeKernel(sp->queue, sp->kernel, 1, NULL,
		    &one, NULL, 0, NULL, NULL), "clEnqueueNDRangeKernel",
		    sp->text);
		f->call_s += lb_now() - a;
		pthread_mutex_lock(&f->lock);
		if (f->n-- == FEED_RING || f->n == 0)
			pthread_cond_signal(&f->room);
	}
	return (NULL);
}

/* -t: one round through the feeding thread: hand n, wait, clFinish. */
static double
lb_round_fed(struct lb_spec *sp, int n)
{
	struct lb_feed	*f = sp->feed;
	double		 t0, a;
	unsigned	 base;
	int		 i;

	t0 = lb_now();
	if (f->spin) {
		base = atomic_load(&f->handed);
		for (i = 0; i < n; i++) {
			a = lb_now();
			while (base + i - atomic_load_explicit(&f->made,
			    memory_order_acquire) >= FEED_RING)
				;
			atomic_store_explicit(&f->handed, base + i + 1,
			    memory_order_release);
			sp->call_s += lb_now() - a;
		}
		while (atomic_load_explicit(&f->made, memory_order_acquire) !=
		    base + n)
			;
		lb_check(clFinish(sp->queue), "clFinish", sp->text);
		return (n / (lb_now() - t0));
	}
	for (i = 0; i < n; i++) {
		a = lb_now();
		pthread_mutex_lock(&f->lock);
		while (f->n == FEED_RING)
			pthread_cond_wait(&f->room, &f->lock);
		if (f->n++ == 0)
			pthread_cond_signal(&f->more);
		pthread_mutex_unlock(&f->lock);
		sp->call_s += lb_now() - a;
	}
	pthread_mutex_lock(&f->lock);
	while (f->n > 0)
		pthread_cond_wait(&f->room, &f->lock);
	pthread_mutex_unlock(&f->lock);
	lb_check(clFinish(sp->queue), "clFinish", sp->text);
	return (n / (lb_now() - t0));
}

/* -t, -s: give the SPEC its feeding thread (-m: which makes it). */
static void
lb_feed_start(struct lb_spec *sp, const char *text, int spin, int make,
    int cpu, int flush)
{
	struct lb_feed	*f;

	if ((f = calloc(1, sizeof *f)) == NULL) {
		fprintf(stderr, "launchbench: out of memory\n");
		exit(1);
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->more, NULL);
	pthread_cond_init(&f->room, NULL);
	f->spin = spin;
	f->make = make;
	f->cpu = cpu;
	f->flush = flush;
	sp->feed = f;
	sp->text = text;
	if (!make) {
		lb_open(sp, text, flush);
		f->flush = sp->flush;
	}
	if (pthread_create(&f->thread, NULL, lb_feed_run, sp) != 0) {
		fprintf(stderr, "launchbench: %s: no thread\n", sp->text);
		exit(1);
	}
	while (make && !atomic_load(&f->ready))
		usleep(1000);
}

static void
lb_usage(void)
{
	fprintf(stderr, "usage: launchbench [-r ROUNDS] [-n N] [-f F] "
	    "[-t | -s] [-m] [-p CPU] [-P CPU] NAME:DEV[/F]...\n");
	exit(2);
}

/* Parses arguments, runs the rounds in turn, prints each SPEC's figures. */
int
main(int argc, char **argv)
{
	struct lb_spec	 specs[SPECS_MAX];
	double		 best, med, best0 = 0, med0 = 0, sorted[ROUNDS_MAX];
	int		 rounds = 9, n = 20000, flush = 0, ns = 0, c, r, k;
	int		 fed = 0, spin = 0, make = 0, cpu = -1;

	memset(specs, 0, sizeof specs);
	for (c = 1; c < argc; c++) {
		if (strcmp(argv[c], "-r") == 0 && c + 1 < argc)
			rounds = atoi(argv[++c]);
		else if (strcmp(argv[c], "-n") == 0 && c + 1 < argc)
			n = atoi(argv[++c]);
		else if (strcmp(argv[c], "-f") == 0 && c + 1 < argc)
			flush = atoi(argv[++c]);
		else if (strcmp(argv[c], "-t") == 0)
			fed = 1;
		else if (strcmp(argv[c], "-s") == 0)
			fed = spin = 1;
		else if (strcmp(argv[c], "-m") == 0)
			make = 1;
		else if (strcmp(argv[c], "-p") == 0 && c + 1 < argc)
			cpu = atoi(argv[++c]);
		else if (strcmp(argv[c], "-P") == 0 && c + 1 < argc)
			lb_pin(atoi(argv[++c]), "the main thread");
		else if (argv[c][0] == '-' || ns == SPECS_MAX)
			lb_usage();
		else if (fed) {
			if (!spin && (flush > 0 ||
			    strchr(argv[c], '/') != NULL)) {
				fprintf(stderr, "launchbench: -t takes no "
				    "flushes\n");
				exit(2);
			}
			lb_feed_start(&specs[ns++], argv[c], spin, make, cpu,
			    flush);
		} else if (make || cpu >= 0) {
			fprintf(stderr, "launchbench: -m and -p want -t or "
			    "-s before them\n");
			exit(2);
		} else
			lb_open(&specs[ns++], argv[c], flush);
	}
	if (ns == 0 || rounds < 1 || rounds > ROUNDS_MAX || n < 1 ||
	    flush < 0)
		lb_usage();

	/* An untimed round each, then rounds whose first SPEC rotates. */
	for (k = 0; k < ns; k++)
		lb_round(&specs[k], n);
	for (k = 0; k < ns; k++) {
		specs[k].call_s = 0;
		if (specs[k].feed != NULL)
			specs[k].feed->call_s = 0;
	}
	for (r = 0; r < rounds; r++)
		for (k = 0; k < ns; k++)
			specs[(k + r) % ns].rate[r] =
			    lb_round(&specs[(k + r) % ns], n);

	printf("%d rounds of %d launches + clFinish, taking turns\n", rounds,
	    n);
	for (k = 0; k < ns; k++) {
		printf("%s", specs[k].text);
		if (specs[k].flush > 0)
			printf(" (clFlush every %d)", specs[k].flush);
		if (specs[k].feed != NULL)
			printf(" (launches made by a thread of their own%s%s%s, "
			    "%.2f us per call there)", specs[k].feed->flush > 0 ?
			    ", flushing" : "", specs[k].feed->spin ?
			    ", spinning" : "", specs[k].feed->make ?
			    ", which made the objects" : "",
			    specs[k].feed->call_s /
			    ((double)rounds * n) * 1e6);
		printf(":");
		for (r = 0; r < rounds; r++)
			printf(" %.0f", specs[k].rate[r]);
		memcpy(sorted, specs[k].rate, rounds * sizeof sorted[0]);
		qsort(sorted, rounds, sizeof sorted[0], lb_cmp);
		best = sorted[rounds - 1];
		med = lb_median(sorted, rounds);
		if (k == 0) {
			best0 = best;
			med0 = med;
		}
		printf("\n  best %.0f /s (%.3fx), median %.0f /s (%.3fx), "
		    "%.2f us per launch call\n", best, best / best0, med,
		    med / med0, specs[k].call_s / ((double)rounds * n) * 1e6);
		if (k == 0)
			continue;
		for (r = 0; r < rounds; r++)
			sorted[r] = specs[k].rate[r] / specs[0].rate[r];
		qsort(sorted, rounds, sizeof sorted[0], lb_cmp);
		printf("  round by round: median %.3fx of the first SPEC's "
		    "round of the same turn (p10 %.3fx, p90 %.3fx)\n",
		    lb_median(sorted, rounds), sorted[(rounds - 1) / 10],
		    sorted[(rounds - 1) * 9 / 10]);
	}
	return (0);
}
