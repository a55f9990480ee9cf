/* flushspy.c - tests: what a server's runtime got, seen from under it. */

/*
 * Preloaded into a vclserver (LD_PRELOAD) by tests that check the order
 * of its runtime calls, which the results of commands cannot show: PoCL
 * runs a launch whether or not its queue was flushed, NVIDIA's runtime
 * may hold it back until a flush. Each call passes through to the real
 * one; on the side, per command queue, the launches enqueued since its
 * last clFlush or clFinish are counted (a release forgets them: the last
 * one flushes). After each change the file VCL_TEST_FLUSHSPY names gets,
 * at offset 0, five space-padded decimal numbers: the sum of those counts
 * over all queues, the launches in all, the flushes in all, then the sum
 * and the launches in all counting only launches of VCL_TEST_FLUSHSPY_MARK
 * global work items (a test's way to pick one session's launches out of
 * others').
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#define SPY_QUEUES	256

static pthread_mutex_t	 spy_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	cl_command_queue	 q;
	unsigned long		 n;	/* launches since its last flush */
	unsigned long		 marked; /* ... of them, marked */
} spy_q[SPY_QUEUES];
static size_t		 spy_mark;	/* VCL_TEST_FLUSHSPY_MARK */
static unsigned long	 spy_launches;	/* in all */
static unsigned long	 spy_marks;	/* ... marked */
static unsigned long	 spy_flushes;	/* ... and finishes */
static int		 spy_fd = -2;

static cl_int	(*spy_ndrange)(cl_command_queue, cl_kernel, cl_uint,
		    const size_t *, const size_t *, const size_t *, cl_uint,
		    const cl_event *, cl_event *);
static cl_int	(*spy_flush)(cl_command_queue);
static cl_int	(*spy_finish)(cl_command_queue);
static cl_int	(*spy_release)(cl_command_queue);

/*
 * Find the real entry points (the ICD loader's) before the server starts
 * its threads. The programs the runtime runs (a linker) inherit the
 * preload and have none: they never call these.
 */
__attribute__((constructor)) static void
spy_init(void)
{
	spy_ndrange = dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel");
	spy_flush = dlsym(RTLD_NEXT, "clFlush");
	spy_finish = dlsym(RTLD_NEXT, "clFinish");
	spy_release = dlsym(RTLD_NEXT, "clReleaseCommandQueue");
	if (getenv("VCL_TEST_FLUSHSPY_MARK") != NULL)
		spy_mark = strtoul(getenv("VCL_TEST_FLUSHSPY_MARK"), NULL, 10);
}

/*
 * Queue q's slot (spy_lock held), made when add is set; -1 when it has
 * none, or the table is full.
 */
static int
spy_slot(cl_command_queue q, int add)
{
	int	i, free_slot = -1;

	for (i = 0; i < SPY_QUEUES; i++) {
		if (spy_q[i].q == q)
			return (i);
		if (spy_q[i].q == NULL && free_slot < 0)
			free_slot = i;
	}
	if (!add || free_slot < 0)
		return (-1);
	spy_q[free_slot].q = q;
	spy_q[free_slot].n = 0;
	spy_q[free_slot].marked = 0;
	return (free_slot);
}

/* Write the sum of unflushed launches to the file (spy_lock held). */
static void
spy_write(void)
{
	const char	*path;
	unsigned long	 sum = 0, marked = 0;
	char		 buf[128];
	int		 i, len;

	if (spy_fd == -2) {
		path = getenv("VCL_TEST_FLUSHSPY");
		spy_fd = path != NULL ? open(path, O_WRONLY | O_CREAT |
		    O_CLOEXEC, 0600) : -1;
	}
	if (spy_fd < 0)
		return;
	for (i = 0; i < SPY_QUEUES; i++) {
		sum += spy_q[i].n;
		marked += spy_q[i].marked;
	}
	len = snprintf(buf, sizeof buf, "%20lu %20lu %20lu %20lu %20lu\n",
	    sum, spy_launches, spy_flushes, marked, spy_marks);
	if (pwrite(spy_fd, buf, (size_t)len, 0) != len)
		abort();
}

/*
 * A flush (or finish: flush set) or a release of q begins: what it got
 * so far is flushed.
 */
static void
spy_flushed(cl_command_queue q, int flush)
{
	int	i;

	pthread_mutex_lock(&spy_lock);
	if ((i = spy_slot(q, 0)) >= 0)
		spy_q[i].n = spy_q[i].marked = 0;
	spy_flushes += flush;
	spy_write();
	pthread_mutex_unlock(&spy_lock);
}

CL_API_ENTRY cl_int CL_API_CALL
clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
    const size_t *off, const size_t *gws, const size_t *lws, cl_uint nwait,
    const cl_event *wait, cl_event *ev)
{
	cl_int		 err;
	int		 i;

	if ((err = spy_ndrange(q, k, dim, off, gws, lws, nwait, wait, ev)) !=
	    CL_SUCCESS)
		return (err);
	pthread_mutex_lock(&spy_lock);
	if ((i = spy_slot(q, 1)) >= 0) {
		spy_q[i].n++;
		if (spy_mark != 0 && gws != NULL && gws[0] == spy_mark) {
			spy_q[i].marked++;
			spy_marks++;
		}
	}
	spy_launches++;
	spy_write();
	pthread_mutex_unlock(&spy_lock);
	return (err);
}

CL_API_ENTRY cl_int CL_API_CALL
clFlush(cl_command_queue q)
{
	spy_flushed(q, 1);
	return (spy_flush(q));
}

CL_API_ENTRY cl_int CL_API_CALL
clFinish(cl_command_queue q)
{
	spy_flushed(q, 1);
	return (spy_finish(q));
}

CL_API_ENTRY cl_int CL_API_CALL
clReleaseCommandQueue(cl_command_queue q)
{
	spy_flushed(q, 0);
	return (spy_release(q));
}
