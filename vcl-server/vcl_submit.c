/*
 * vcl_submit.c - a command queue's runtime calls that may block, off the
 * loop. Some runtimes block in calls that OpenCL means to be quick:
 * NVIDIA's clFlush waited milliseconds for the device (docs/performance.md),
 * and on the loop that stalls every session. Each queue gets a strand: its
 * calls run in order on a small pool of submission threads, one at a time
 * per queue, so a queue the runtime holds up holds up only itself (and,
 * past VCL_SUBMITTERS such queues, others waiting for a thread).
 *
 * The loop hands over and never waits on the device. Two kinds of call go
 * this way:
 *
 * - clFlush: the loop flushes every queue that got commands after each
 *   batch of requests. A queue starts with its flushes on the loop (a
 *   hand-over per batch costs more than a flush that does not block: on
 *   an H100 it took the asynchronous enqueue rate from 96k/s to 81k/s); a
 *   flush that held the loop VCL_SUBMIT_SLOW_US or longer moves its queue's
 *   flushes to its strand for good.
 * - Launches: where the runtime's clEnqueueNDRangeKernel is slow (NVIDIA's
 *   takes about 9 us of CPU, more than all VCL does for a launch), the
 *   loop decodes and checks launch k+1 while the strand calls the runtime
 *   for launch k. Only a launch the loop needs nothing back from goes:
 *   no event, no wait list, every argument already set (vcl_op_exec.c).
 *   The strand keeps the first error for the queue's next finish. Before
 *   anything else of the session runs, the loop drains its strands
 *   (vcl_submit_drain): it waits for the call in progress, the one that it
 *   would otherwise have been making itself, and makes the calls of a
 *   strand that no thread has started. So a session never sees its calls
 *   out of order, and the loop never waits longer than it would have spent
 *   in the same calls.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vcl_log.h"
#include "vcl_server.h"
#include "vcl_submit.h"
#include "vcl_worker.h"

/* Who makes a strand's launch calls now. */
enum vcl_submit_owner {
	VCL_SUBMIT_NOBODY,
	VCL_SUBMIT_THREAD,		/* its submission thread */
	VCL_SUBMIT_LOOP			/* the loop, draining or out of room */
};

/*
 * Launches waiting, at most. The loop makes a strand's launches itself when
 * it finds the ring full before the strand's thread began; a ring of 256
 * (about 22 KiB, charged to the session) halved how often it did against
 * 64 on an H100 host (per 200,000 launches: 406-1,072 against 1,417-2,360)
 * and took the launch rate from 0.927x-0.998x of native to 0.965x-1.004x,
 * round by round, in three runs of one process (docs/performance.md).
 */
#define VCL_SUBMIT_JOBS	256

/* A queue's strand. */
struct vcl_submit {
	pthread_mutex_t		 lock;
	struct vcl_workers	*pool;
	cl_command_queue	 queue;		/* a reference of its own */
	int			 refs;		/* the queue object's, and a
						   running strand's */
	int			 running;	/* on a submission thread */
	int			 flush;		/* a flush is wanted */
	int			 gone;		/* the queue object went */
	int			 offloop;	/* flushes on the strand (loop's) */
	pthread_cond_t		 cond;		/* ... signalled */
	struct vcl_launch	*jobs;		/* a ring of VCL_SUBMIT_JOBS, at
						   the first launch handed */
	unsigned		 head;		/* the oldest launch */
	atomic_uint		 njobs;		/* launches not yet made */
	atomic_uint		 kicks;		/* launches and flushes handed */
	_Atomic int		 owner;		/* a vcl_submit_owner; read
						   unlocked by a spinning
						   thread */
	cl_int			 err;		/* first failed launch since the
						   last drain */
	int			 waiting;	/* the loop waits for ... */
	unsigned		 want;		/* ... this many launches left */
	uint64_t		 handed;	/* launches handed, in all */
	uint64_t		 flush_to;	/* handed when a flush was asked */
	uint64_t		 flushed_to;	/* made when a flush last began */
	atomic_uint_fast64_t	 launch_ns;	/* a launch call's time, averaged */
	int			 launching;	/* launches go to the strand
						   (loop's) */
};

#define VCL_SUBMIT_HOLD_S	30	/* VCL_TEST_FLUSH_HOLD: at most */
#define VCL_SUBMIT_SLOW_US	500	/* a flush this long leaves the loop */
#define VCL_SUBMIT_LAUNCH_ON_NS	3000	/* launches this slow leave the loop */
#define VCL_SUBMIT_LAUNCH_OFF_NS 1500	/* ... and this quick come back */
#define VCL_SUBMIT_SPIN_NS	20000	/* a strand waits this long for more */
#define VCL_SUBMIT_TIME_EVERY	8	/* launch calls timed: one in this */
#define VCL_SUBMIT_SPIN_LOOP_NS	2000000	/* ... or this long for a loop that
					   makes its launches */

static atomic_uint_fast64_t vcl_submit_nmoved;	/* queues moved, in all */
static atomic_uint_fast64_t vcl_submit_nlaunched; /* launches handed to
						     strands, made */

static int	vcl_submit_mode = -1;	/* VCL_LAUNCH_STRAND: 0, 1, 2 (auto) */
static int	vcl_submit_cpus;	/* CPUs online */
static long	vcl_submit_delay_us;	/* VCL_TEST_STRAND_DELAY_US */

static int	vcl_submit_launch_mode(void);

static int	vcl_submit_hold = -1;	/* VCL_TEST_FLUSH_HOLD */

/* Is VCL_TEST_FLUSH_HOLD set? */
static int
vcl_submit_holding(void)
{
	const char	*e;

	if (vcl_submit_hold == -1) {
		e = getenv("VCL_TEST_FLUSH_HOLD");
		vcl_submit_hold = e != NULL && *e != '\0' && *e != '0';
	}
	return (vcl_submit_hold);
}

/* Drop a reference (under s->lock, which it releases); the last frees. */
static void
vcl_submit_put(struct vcl_submit *s)
{
	int	last = --s->refs == 0;

	pthread_mutex_unlock(&s->lock);
	if (!last)
		return;
	clReleaseCommandQueue(s->queue);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s->jobs);
	free(s);
}

/* Bytes of a strand's ring of launches (its session is charged them). */
size_t
vcl_submit_ring_bytes(void)
{
	return (VCL_SUBMIT_JOBS * sizeof(struct vcl_launch));
}

/*
 * Loop: give the strand its ring of launches, before the first is handed
 * (a queue that never hands one has none). 0, or -1 out of memory.
 */
int
vcl_submit_ring(struct vcl_submit *s)
{
	struct vcl_launch	*j;

	if (s->jobs != NULL)
		return (0);
	if ((j = calloc(VCL_SUBMIT_JOBS, sizeof *j)) == NULL)
		return (-1);
	pthread_mutex_lock(&s->lock);
	s->jobs = j;
	pthread_mutex_unlock(&s->lock);
	return (0);
}

/*
 * A strand for queue q on pool. NULL when out of memory: the caller makes
 * the calls itself.
 */
struct vcl_submit *
vcl_submit_new(struct vcl_workers *pool, cl_command_queue q)
{
	struct vcl_submit	*s;
	pthread_mutexattr_t	 ma;

	/* Read before any strand's thread may look (vcl_submit_spin). */
	(void)vcl_submit_launch_mode();
	if (pool == NULL || (s = calloc(1, sizeof *s)) == NULL)
		return (NULL);
	/*
	 * Held for a few instructions at a time, by the loop and the
	 * strand's thread each launch: a contender spins a moment rather
	 * than sleeping in the kernel and costing the holder a wakeup.
	 */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&s->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_cond_init(&s->cond, NULL);
	s->pool = pool;
	s->queue = q;
	s->refs = 1;
	clRetainCommandQueue(q);
	return (s);
}

/*
 * clFlush the strand's queue (s->lock held, released meanwhile). With
 * VCL_TEST_FLUSH_HOLD set in the environment (tests only) the flush first
 * waits until the queue object goes (VCL_SUBMIT_HOLD_S at most), as a
 * runtime that blocks in clFlush would, for as long as a test wants.
 */
static void
vcl_submit_call_flush(struct vcl_submit *s)
{
	struct timespec	 t;

	if (vcl_submit_holding()) {
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += VCL_SUBMIT_HOLD_S;
		while (!s->gone && pthread_cond_timedwait(&s->cond, &s->lock,
		    &t) == 0)
			;
	}
	pthread_mutex_unlock(&s->lock);
	clFlush(s->queue);
	pthread_mutex_lock(&s->lock);
}

/*
 * VCL_LAUNCH_STRAND, read once: "0" keeps launches on the loop, "1" hands
 * every launch that may go to its strand (tests), anything else decides
 * by the runtime's speed on a machine of VCL_SERVER_MIN_CPUS or more.
 */
static int
vcl_submit_launch_mode(void)
{
	const char	*e;

	if (vcl_submit_mode == -1) {
		vcl_submit_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
		/* Tests: a strand's thread this slow makes its races sure. */
		vcl_submit_delay_us = vcl_server_test_num(
		    "VCL_TEST_STRAND_DELAY_US");
		e = getenv("VCL_LAUNCH_STRAND");
		if (e != NULL && strcmp(e, "0") == 0)
			vcl_submit_mode = 0;
		else if (e != NULL && strcmp(e, "1") == 0)
			vcl_submit_mode = 1;
		else
			vcl_submit_mode = 2;
	}
	return (vcl_submit_mode);
}

/* Average a launch call that took ns into the queue's (any thread). */
void
vcl_submit_timed(struct vcl_submit *s, uint64_t ns)
{
	uint64_t	a;

	a = atomic_load_explicit(&s->launch_ns, memory_order_relaxed);
	a = a == 0 ? ns : a - a / 8 + ns / 8;
	atomic_store_explicit(&s->launch_ns, a, memory_order_relaxed);
}

/*
 * Loop: should the queue's next launch go to its strand? Once its launch
 * calls average VCL_SUBMIT_LAUNCH_ON_NS they do, until they average under
 * VCL_SUBMIT_LAUNCH_OFF_NS. With few CPUs the strand's thread would take
 * the loop's: never there, unless VCL_LAUNCH_STRAND says so.
 */
int
vcl_submit_offload(struct vcl_submit *s)
{
	uint64_t	ns;

	switch (vcl_submit_launch_mode()) {
	case 0:
		return (0);
	case 1:
		return (1);
	}
	if (vcl_submit_cpus < VCL_SERVER_MIN_CPUS)
		return (0);
	ns = atomic_load_explicit(&s->launch_ns, memory_order_relaxed);
	if (ns >= VCL_SUBMIT_LAUNCH_ON_NS)
		s->launching = 1;
	else if (ns < VCL_SUBMIT_LAUNCH_OFF_NS)
		s->launching = 0;
	return (s->launching);
}

/*
 * Is a flush owed (s->lock held)? One the loop asked for began before the
 * last launch handed ahead of the asking was made: that one, and those
 * between, wait unflushed (a runtime may hold them back: NVIDIA's does)
 * until one more flush comes after them.
 */
static int
vcl_submit_owed(const struct vcl_submit *s)
{
	return (s->flushed_to < s->flush_to);
}

/* Launches made, in all (s->lock held). */
static uint64_t
vcl_submit_made(struct vcl_submit *s)
{
	return (s->handed - atomic_load(&s->njobs));
}

/*
 * Make the strand's launches in order, as many as wait now at most (s->lock
 * held, released around each call); the caller is its owner. The first
 * failure is kept for the drain. The loop is woken only when it has what it
 * waits for: a wakeup per launch would cost the strand more than the call.
 * Only every VCL_SUBMIT_TIME_EVERY-th call is timed, and the count of all
 * strands' launches is added to once per turn: what the strand does
 * between two calls is what it adds to the runtime's own launch rate
 * (157-199 ns a launch on an H100 host, lock and counters, before this).
 */
static void
vcl_submit_jobs(struct vcl_submit *s)
{
	const struct vcl_launch	*l;
	uint64_t		 t0 = 0;
	unsigned		 n, made = 0;
	int			 timed;
	cl_int			 err;

	for (n = atomic_load(&s->njobs); n > 0; n--) {
		/* The loop adds behind it and never overwrites it. */
		l = &s->jobs[s->head];
		timed = vcl_submit_made(s) % VCL_SUBMIT_TIME_EVERY == 0;
		pthread_mutex_unlock(&s->lock);
		if (vcl_submit_delay_us > 0 && s->owner == VCL_SUBMIT_THREAD)
			usleep((useconds_t)vcl_submit_delay_us);
		if (timed)
			t0 = vcl_server_ns();
		err = clEnqueueNDRangeKernel(s->queue, l->kernel, l->dim,
		    l->has_off ? l->off : NULL, l->gws,
		    l->has_lws ? l->lws : NULL, 0, NULL, NULL);
		if (timed)
			vcl_submit_timed(s, vcl_server_ns() - t0);
		pthread_mutex_lock(&s->lock);
		if (err != CL_SUCCESS && s->err == CL_SUCCESS)
			s->err = err;
		s->head = (s->head + 1) % VCL_SUBMIT_JOBS;
		made++;
		if (atomic_fetch_sub(&s->njobs, 1) - 1 <= s->want &&
		    s->waiting)
			pthread_cond_broadcast(&s->cond);
		/* Other strands wait for a thread: see vcl_submit_yield. */
		if (s->owner == VCL_SUBMIT_THREAD &&
		    vcl_workers_waiting(s->pool))
			break;
	}
	atomic_fetch_add(&vcl_submit_nlaunched, made);
}

/*
 * Loop (s->lock held): until no more than want launches wait, make them
 * here while no one else makes them, else wait for the thread that does.
 */
static void
vcl_submit_take(struct vcl_submit *s, unsigned want)
{
	while (atomic_load(&s->njobs) > want) {
		if (s->owner == VCL_SUBMIT_NOBODY) {
			s->owner = VCL_SUBMIT_LOOP;
			vcl_submit_jobs(s);
			s->owner = VCL_SUBMIT_NOBODY;
			continue;
		}
		s->want = want;
		s->waiting = 1;
		pthread_cond_wait(&s->cond, &s->lock);
		s->waiting = 0;
	}
}

/*
 * Submission thread, with nothing to do: wait VCL_SUBMIT_SPIN_NS for the
 * loop to hand more (the loop feeds a launch every few microseconds, and a
 * thread put back to sleep costs a wakeup per launch). While the loop
 * makes the strand's launches itself (it found the ring full before this
 * thread began), wait up to VCL_SUBMIT_SPIN_LOOP_NS: it leaves half of
 * them, and hands no more meanwhile. A thread that left then was woken
 * again a wakeup later (50-140 us on an H100 host), by which time the
 * ring was full again and the loop made them again: a cycle in which the
 * loop made a tenth of the launches with its decoding of the next ones
 * not overlapped. Only where spare CPUs let a thread spin.
 */
static void
vcl_submit_spin(struct vcl_submit *s, unsigned seen)
{
	uint64_t	t0, dt;

	if (vcl_submit_cpus < VCL_SERVER_MIN_CPUS ||
	    vcl_workers_waiting(s->pool))
		return;
	t0 = vcl_server_ns();
	while (atomic_load(&s->kicks) == seen) {
		/* The loop made its share and left the rest. */
		if (atomic_load(&s->njobs) > 0 &&
		    atomic_load(&s->owner) == VCL_SUBMIT_NOBODY)
			break;
		dt = vcl_server_ns() - t0;
		if (dt >= VCL_SUBMIT_SPIN_LOOP_NS || (dt >= VCL_SUBMIT_SPIN_NS &&
		    atomic_load(&s->owner) != VCL_SUBMIT_LOOP))
			break;
	}
}

static void	vcl_submit_run(void *);

/*
 * Submission thread (s->lock held), having made a call this turn (did):
 * while other strands wait for one of the VCL_SUBMITTERS threads, queue
 * this one again behind them instead of making its next call. A queue fed
 * launches without pause would otherwise keep its thread for as long, and
 * with VCL_SUBMITTERS such queues every other queue's flush (which a
 * runtime may need before it runs anything: NVIDIA's does) and launches
 * would wait for them. A loop waiting for launches makes them meanwhile.
 * Returns 1 when queued again (s->lock released: s is no longer this
 * thread's), else 0.
 */
static int
vcl_submit_yield(struct vcl_submit *s, int did)
{
	if (!did || !vcl_workers_waiting(s->pool) || !(s->flush ||
	    (atomic_load(&s->njobs) > 0 && s->owner == VCL_SUBMIT_NOBODY)))
		return (0);
	if (s->waiting)
		pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (vcl_workers_run(s->pool, vcl_submit_run, s) == 0)
		return (1);
	pthread_mutex_lock(&s->lock);
	return (0);
}

/* Submission thread: run the strand's calls until none is wanted. */
static void
vcl_submit_run(void *arg)
{
	struct vcl_submit	*s = arg;
	unsigned		 seen;
	int			 did = 0;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		/* Not while the loop makes them (a drain, or no room). */
		if (s->owner == VCL_SUBMIT_NOBODY &&
		    atomic_load(&s->njobs) > 0) {
			s->owner = VCL_SUBMIT_THREAD;
			vcl_submit_jobs(s);
			s->owner = VCL_SUBMIT_NOBODY;
			did = 1;
		}
		if (vcl_submit_yield(s, did))
			return;
		/*
		 * The flush asked for, or one owed to launches made since
		 * (by the loop meanwhile, or in this thread's last round).
		 */
		if (s->flush || (vcl_submit_owed(s) && s->owner ==
		    VCL_SUBMIT_NOBODY && vcl_submit_made(s) > s->flushed_to)) {
			/*
			 * A flush may block: launches waiting meanwhile are
			 * the loop's to make, if it waits for them.
			 */
			s->flush = 0;
			s->flushed_to = vcl_submit_made(s);
			if (s->waiting)
				pthread_cond_broadcast(&s->cond);
			vcl_submit_call_flush(s);
			did = 1;
			continue;
		}
		if (atomic_load(&s->njobs) > 0 && s->owner ==
		    VCL_SUBMIT_NOBODY)
			continue;
		if (s->gone)
			break;
		seen = atomic_load(&s->kicks);
		pthread_mutex_unlock(&s->lock);
		vcl_submit_spin(s, seen);
		pthread_mutex_lock(&s->lock);
		/* The loop may have left launches to make, handing none. */
		if (atomic_load(&s->kicks) == seen && (atomic_load(&s->njobs) ==
		    0 || s->owner != VCL_SUBMIT_NOBODY))
			break;
	}
	s->running = 0;
	vcl_submit_put(s);
}

/*
 * Loop (s->lock held, released): put the strand on a submission thread
 * unless it is on one. Out of memory for that, the loop makes its calls.
 */
static void
vcl_submit_start(struct vcl_submit *s)
{
	if (s->running) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	s->running = 1;
	s->refs++;
	pthread_mutex_unlock(&s->lock);
	if (vcl_workers_run(s->pool, vcl_submit_run, s) == 0)
		return;
	pthread_mutex_lock(&s->lock);
	s->running = 0;
	s->refs--;
	vcl_submit_take(s, 0);
	if (s->flush) {
		s->flush = 0;
		s->flushed_to = s->handed;
		pthread_mutex_unlock(&s->lock);
		clFlush(s->queue);
		return;
	}
	pthread_mutex_unlock(&s->lock);
}

/*
 * Loop: hand launch l to the strand; with VCL_SUBMIT_JOBS waiting already,
 * first wait for room (or make them here when no thread has started).
 */
void
vcl_submit_launch(struct vcl_submit *s, const struct vcl_launch *l)
{
	pthread_mutex_lock(&s->lock);
	if (atomic_load(&s->njobs) == VCL_SUBMIT_JOBS)
		vcl_submit_take(s, VCL_SUBMIT_JOBS / 2);
	s->jobs[(s->head + atomic_load(&s->njobs)) % VCL_SUBMIT_JOBS] = *l;
	atomic_fetch_add(&s->njobs, 1);
	s->handed++;
	atomic_fetch_add(&s->kicks, 1);
	vcl_submit_start(s);
}

/*
 * Loop: every launch handed is made when this returns (the loop waits for
 * the one in progress and makes those no thread has begun), and flushed
 * as the loop asked: a flush owed to those it made goes to the strand.
 * Returns the first that failed since the last drain, or CL_SUCCESS.
 */
cl_int
vcl_submit_drain(struct vcl_submit *s)
{
	cl_int	err;

	pthread_mutex_lock(&s->lock);
	vcl_submit_take(s, 0);
	err = s->err;
	s->err = CL_SUCCESS;
	if (!vcl_submit_owed(s)) {
		pthread_mutex_unlock(&s->lock);
		return (err);
	}
	s->flush = 1;
	atomic_fetch_add(&s->kicks, 1);
	vcl_submit_start(s);
	return (err);
}

/*
 * Launches handed to strands and made since the start, by their thread or
 * by the loop when it needed them first (Stats).
 */
uint64_t
vcl_submit_launched(void)
{
	return (atomic_load(&vcl_submit_nlaunched));
}

/*
 * Loop: flush a queue still on the loop, timing it; a slow flush moves the
 * queue to its strand. With VCL_TEST_FLUSH_HOLD the flush is made to look
 * slow (it sleeps twice the bound first), as a runtime that blocks would.
 * Returns 1 when the queue was flushed here.
 */
static int
vcl_submit_inline(struct vcl_submit *s)
{
	struct timespec	 a, b, nap = { 0, 2 * VCL_SUBMIT_SLOW_US * 1000 };
	int64_t		 us;

	/* Launches wait on the strand: the flush goes after them. */
	if (s->offloop || atomic_load(&s->njobs) > 0)
		return (0);
	if (s->handed > 0) {
		/* It comes after every launch handed: none is owed one. */
		pthread_mutex_lock(&s->lock);
		s->flushed_to = s->handed;
		pthread_mutex_unlock(&s->lock);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (vcl_submit_holding())
		nanosleep(&nap, NULL);
	clFlush(s->queue);
	clock_gettime(CLOCK_MONOTONIC, &b);
	us = (int64_t)(b.tv_sec - a.tv_sec) * 1000000 +
	    (b.tv_nsec - a.tv_nsec) / 1000;
	if (us >= VCL_SUBMIT_SLOW_US) {
		s->offloop = 1;
		atomic_fetch_add(&vcl_submit_nmoved, 1);
		vcl_log_debug("a queue's flush held the loop %lld us: its "
		    "flushes go on its strand", (long long)us);
	}
	return (1);
}

/* Whether the queue's flushes went to its strand for good. */
int
vcl_submit_offloop(const struct vcl_submit *s)
{
	return (s->offloop);
}

/* Queues moved to their strand since the start (Stats). */
uint64_t
vcl_submit_moved(void)
{
	return (atomic_load(&vcl_submit_nmoved));
}

/*
 * Loop: flush the queue, on the loop while its flushes are quick, else on
 * its strand. A flush wanted while one runs on the strand is made once
 * after it: it covers every command enqueued before it began.
 */
void
vcl_submit_flush(struct vcl_submit *s)
{
	if (vcl_submit_inline(s))
		return;
	pthread_mutex_lock(&s->lock);
	s->flush = 1;
	s->flush_to = s->handed;
	atomic_fetch_add(&s->kicks, 1);
	vcl_submit_start(s);
}

/* Loop: the queue object goes; its strand ends once its calls are made. */
void
vcl_submit_free(struct vcl_submit *s)
{
	if (s == NULL)
		return;
	(void)vcl_submit_drain(s);	/* its session drained it already */
	pthread_mutex_lock(&s->lock);
	s->gone = 1;
	pthread_cond_broadcast(&s->cond);
	vcl_submit_put(s);
}
