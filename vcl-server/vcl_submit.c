/*
 * vcl_submit.c - a command queue's runtime calls that may block, off the
 * loop. Some runtimes block in calls that OpenCL means to be quick:
 * NVIDIA's clFlush waited milliseconds for the device (docs/performance.md),
 * and on the loop that stalls every session. Each queue gets a strand: its
 * calls run in order on a small pool of submission threads, one at a time
 * per queue, so a queue the runtime holds up holds up only itself (and,
 * past VCL_SUBMITTERS such queues, others waiting for a thread).
 *
 * The loop hands over and never waits. Only clFlush goes this way today:
 * the loop flushes every queue that got commands after each batch of
 * requests, so it is the call a blocking runtime makes the loop pay most
 * often. Enqueues stay on the loop (see docs/performance.md for why).
 *
 * A queue starts with its flushes on the loop: a hand-over per batch costs
 * more than a flush that does not block (on an H100 the strand took the
 * asynchronous enqueue rate from 96k/s to 81k/s). A flush that held the
 * loop VCL_SUBMIT_SLOW_US or longer moves its queue to its strand for good.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "vcl_log.h"
#include "vcl_submit.h"
#include "vcl_worker.h"

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
};

#define VCL_SUBMIT_HOLD_S	30	/* VCL_TEST_FLUSH_HOLD: at most */
#define VCL_SUBMIT_SLOW_US	500	/* a flush this long leaves the loop */

static atomic_uint_fast64_t vcl_submit_nmoved;	/* queues moved, in all */

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
	free(s);
}

/*
 * A strand for queue q on pool. NULL when out of memory: the caller makes
 * the calls itself.
 */
struct vcl_submit *
vcl_submit_new(struct vcl_workers *pool, cl_command_queue q)
{
	struct vcl_submit	*s;

	if (pool == NULL || (s = calloc(1, sizeof *s)) == NULL)
		return (NULL);
	pthread_mutex_init(&s->lock, NULL);
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

/* Submission thread: run the strand's calls until none is wanted. */
static void
vcl_submit_run(void *arg)
{
	struct vcl_submit	*s = arg;

	pthread_mutex_lock(&s->lock);
	while (s->flush) {
		s->flush = 0;
		vcl_submit_call_flush(s);
	}
	s->running = 0;
	vcl_submit_put(s);
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

	if (s->offloop)
		return (0);
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
	if (s->running) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	s->running = 1;
	s->refs++;
	pthread_mutex_unlock(&s->lock);
	if (vcl_workers_run(s->pool, vcl_submit_run, s) == 0)
		return;
	/* Out of memory: flush here, as before. */
	pthread_mutex_lock(&s->lock);
	s->flush = 0;
	s->running = 0;
	s->refs--;
	pthread_mutex_unlock(&s->lock);
	clFlush(s->queue);
}

/* Loop: the queue object goes; its strand ends once its calls are made. */
void
vcl_submit_free(struct vcl_submit *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->lock);
	s->gone = 1;
	pthread_cond_broadcast(&s->cond);
	vcl_submit_put(s);
}
