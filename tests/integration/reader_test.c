/* reader_test.c - libvcl's reading token: who reads the socket, under load. */

/*
 * libvcl (through the ICD loader; VCL_TEST_ICD_DIR names the directory of
 * vcl.icd) in this test's child, against one server. A thread waiting for
 * its reply reads the socket itself when no other thread does, and lands
 * whatever comes first for anyone; the receiver thread reads only when no
 * caller does. The groups drive every way of sharing that:
 *   hammer: threads doing blocking reads, clFinish, non-blocking reads
 *     and event waits on one node at once, while event callbacks (run by
 *     whichever thread read the notification, a caller or the receiver)
 *     make blocking calls on the same node; every byte is checked.
 *   hammer_tls: the same under TLS.
 *   kill, stop: threads blocked in calls behind a long kernel when the
 *     server is killed (SIGKILL) or stops answering (SIGSTOP, found by
 *     the ping timeout): every call returns an error, none hangs.
 */

#include <sys/wait.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#include "rawproto.h"

#define HOPS_THREADS	4
#define HOPS_ITERS	150
#define HOPS_WORDS	4096		/* one buffer: 16 KiB */
#define HOPS_CB_WORDS	1024		/* what a callback reads */
#define HOPS_CB_SEED	777u
#define HOPS_TIMEOUT_MS	2000		/* VCL_CALL_TIMEOUT_MS of stop */
#define HOPS_END_POLLS	1500		/* calls returning after a loss: 15 s */

static const char reader_src[] =
	"__kernel void fill(__global uint *a, uint seed)\n"
	"{ uint i = get_global_id(0); a[i] = seed * 2654435761u + i; }\n"
	"__kernel void spin(__global uint *a, uint n)\n"
	"{ uint x = a[0]; for (uint i = 0; i < n; i++)\n"
	"  x = x * 1664525u + 1013904223u; a[0] = x; }\n";

/* The OpenCL objects every thread of a group shares. */
static struct {
	cl_context		 ctx;
	cl_device_id		 dev;
	cl_program		 prog;
	cl_mem			 cbuf;		/* callbacks read it */
	cl_command_queue	 cq;		/* callbacks' queue */
	atomic_int		 cb_done;
	atomic_int		 cb_bad;
	atomic_int		 cb_want;
	atomic_int		 cb_on_app;	/* run by a hammer thread */
} reader;

static __thread int	reader_in_app;	/* set on hammer threads */

/* The word a fill with seed leaves at index i. */
static cl_uint
reader_word(cl_uint seed, cl_uint i)
{
	return (seed * 2654435761u + i);
}

/* Words of a that are not fill(seed)'s. */
static int
reader_bad_words(const cl_uint *a, size_t n, cl_uint seed)
{
	size_t	i;
	int	bad = 0;

	for (i = 0; i < n; i++)
		if (a[i] != reader_word(seed, (cl_uint)i))
			bad++;
	return (bad);
}

/* Point libvcl at the server, before its first call. */
static int
reader_env(const struct srv *sv, const char *timeout_ms)
{
	const char	*icd = getenv("VCL_TEST_ICD_DIR");
	char		 nodes[64];

	if (icd == NULL || *icd == '\0')
		return (check("reader_env", 0,
		    "VCL_TEST_ICD_DIR (the directory of vcl.icd) is not set"));
	snprintf(nodes, sizeof nodes, "127.0.0.1:%s", sv->port);
	setenv("VCL_NODES", nodes, 1);
	setenv("OCL_ICD_VENDORS", icd, 1);
	setenv("VCL_STRICT", "1", 1);
	if (timeout_ms != NULL)
		setenv("VCL_CALL_TIMEOUT_MS", timeout_ms, 1);
	return (1);
}

/* Context, program, and the callbacks' buffer and queue. */
static int
reader_setup(void)
{
	cl_platform_id	 p;
	cl_uint		 n = 0, seed = HOPS_CB_SEED;
	cl_kernel	 k = NULL;
	cl_int		 err = CL_SUCCESS;
	const char	*src = reader_src;
	size_t		 global = HOPS_CB_WORDS;

	memset(&reader, 0, sizeof reader);
	if (clGetPlatformIDs(1, &p, &n) != CL_SUCCESS || n != 1 ||
	    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &reader.dev, NULL) !=
	    CL_SUCCESS)
		return (check("reader_setup", 0, "no VCL device"));
	if ((reader.ctx = clCreateContext(NULL, 1, &reader.dev, NULL, NULL,
	    &err)) == NULL || (reader.cq = clCreateCommandQueue(reader.ctx,
	    reader.dev, 0, &err)) == NULL || (reader.prog =
	    clCreateProgramWithSource(reader.ctx, 1, &src, NULL, &err)) == NULL ||
	    (err = clBuildProgram(reader.prog, 0, NULL, NULL, NULL, NULL)) !=
	    CL_SUCCESS || (reader.cbuf = clCreateBuffer(reader.ctx,
	    CL_MEM_READ_WRITE, HOPS_CB_WORDS * sizeof(cl_uint), NULL, &err)) ==
	    NULL || (k = clCreateKernel(reader.prog, "fill", &err)) == NULL ||
	    (err = clSetKernelArg(k, 0, sizeof reader.cbuf, &reader.cbuf)) !=
	    CL_SUCCESS || (err = clSetKernelArg(k, 1, sizeof seed, &seed)) !=
	    CL_SUCCESS || (err = clEnqueueNDRangeKernel(reader.cq, k, 1, NULL,
	    &global, NULL, 0, NULL, NULL)) != CL_SUCCESS ||
	    (err = clFinish(reader.cq)) != CL_SUCCESS) {
		if (k != NULL)
			clReleaseKernel(k);
		return (check("reader_setup", 0, "OpenCL setup failed: %d",
		    (int)err));
	}
	clReleaseKernel(k);
	return (1);
}

/* Release what reader_setup made. */
static void
reader_teardown(void)
{
	if (reader.cbuf != NULL)
		clReleaseMemObject(reader.cbuf);
	if (reader.prog != NULL)
		clReleaseProgram(reader.prog);
	if (reader.cq != NULL)
		clReleaseCommandQueue(reader.cq);
	if (reader.ctx != NULL)
		clReleaseContext(reader.ctx);
}

/*
 * An event callback that makes blocking calls on the node whose
 * notification it was run for: a blocking read (checked) and a clFinish.
 * The thread running it may hold the node's reading token.
 */
static void CL_CALLBACK
reader_cb(cl_event ev, cl_int status, void *arg)
{
	cl_uint	*a;
	cl_int	 err;

	(void)ev;
	(void)arg;
	if (reader_in_app)
		atomic_fetch_add(&reader.cb_on_app, 1);
	if ((a = malloc(HOPS_CB_WORDS * sizeof *a)) == NULL) {
		atomic_fetch_add(&reader.cb_bad, 1);
		goto out;
	}
	err = clEnqueueReadBuffer(reader.cq, reader.cbuf, CL_TRUE, 0,
	    HOPS_CB_WORDS * sizeof *a, a, 0, NULL, NULL);
	if (err == CL_SUCCESS)
		err = clFinish(reader.cq);
	if (status != CL_COMPLETE || err != CL_SUCCESS ||
	    reader_bad_words(a, HOPS_CB_WORDS, HOPS_CB_SEED) != 0)
		atomic_fetch_add(&reader.cb_bad, 1);
	free(a);
out:
	atomic_fetch_add(&reader.cb_done, 1);
}

/* One hammer thread's own objects and its result. */
struct reader_worker {
	pthread_t		 t;
	int			 id;
	cl_command_queue	 q;
	cl_mem			 buf;
	cl_kernel		 k;
	cl_uint			*host;
	int			 bad;		/* words wrong */
	cl_int			 err;		/* first failure */
	char			 what[64];	/* what failed */
};

/* Record a worker's first failure. */
static void
reader_fail(struct reader_worker *w, cl_int err, const char *what)
{
	if (w->err == CL_SUCCESS && w->bad == 0) {
		w->err = err;
		snprintf(w->what, sizeof w->what, "%s", what);
	}
}

/*
 * Hammer one queue: fill with a fresh seed, then get the bytes back one
 * of four ways (blocking read; clFinish then blocking read; non-blocking
 * read with an event callback then clFinish; non-blocking read and
 * clWaitForEvents), checking every word. Every third fill carries an
 * event whose callback makes blocking calls.
 */
static void *
reader_worker_run(void *arg)
{
	struct reader_worker	*w = arg;
	cl_event		 ev, kev;
	cl_uint			 seed;
	cl_int			 err;
	size_t			 global = HOPS_WORDS, bytes;
	int			 it;

	reader_in_app = 1;
	bytes = HOPS_WORDS * sizeof *w->host;
	for (it = 0; it < HOPS_ITERS; it++) {
		seed = (cl_uint)(w->id * 100000 + it);
		memset(w->host, 0, bytes);
		kev = NULL;
		if ((err = clSetKernelArg(w->k, 1, sizeof seed, &seed)) !=
		    CL_SUCCESS || (err = clEnqueueNDRangeKernel(w->q, w->k, 1,
		    NULL, &global, NULL, 0, NULL, it % 3 == 0 ? &kev : NULL)) !=
		    CL_SUCCESS) {
			reader_fail(w, err, "enqueue fill");
			break;
		}
		if (kev != NULL) {
			atomic_fetch_add(&reader.cb_want, 1);
			err = clSetEventCallback(kev, CL_COMPLETE, reader_cb, NULL);
			clReleaseEvent(kev);
			if (err != CL_SUCCESS) {
				atomic_fetch_sub(&reader.cb_want, 1);
				reader_fail(w, err, "kernel event callback");
				break;
			}
		}
		ev = NULL;
		switch (it % 4) {
		case 0:
			err = clEnqueueReadBuffer(w->q, w->buf, CL_TRUE, 0,
			    bytes, w->host, 0, NULL, NULL);
			break;
		case 1:
			if ((err = clFinish(w->q)) == CL_SUCCESS)
				err = clEnqueueReadBuffer(w->q, w->buf, CL_TRUE,
				    0, bytes, w->host, 0, NULL, NULL);
			break;
		case 2:
			err = clEnqueueReadBuffer(w->q, w->buf, CL_FALSE, 0,
			    bytes, w->host, 0, NULL, &ev);
			if (err == CL_SUCCESS) {
				atomic_fetch_add(&reader.cb_want, 1);
				if ((err = clSetEventCallback(ev, CL_COMPLETE,
				    reader_cb, NULL)) != CL_SUCCESS)
					atomic_fetch_sub(&reader.cb_want, 1);
			}
			if (err == CL_SUCCESS)
				err = clFinish(w->q);
			break;
		default:
			err = clEnqueueReadBuffer(w->q, w->buf, CL_FALSE, 0,
			    bytes, w->host, 0, NULL, &ev);
			if (err == CL_SUCCESS)
				err = clWaitForEvents(1, &ev);
			if (err == CL_SUCCESS)
				err = clFinish(w->q);
			break;
		}
		if (ev != NULL)
			clReleaseEvent(ev);
		if (err != CL_SUCCESS) {
			reader_fail(w, err, "read back");
			break;
		}
		if ((w->bad = reader_bad_words(w->host, HOPS_WORDS, seed)) != 0) {
			snprintf(w->what, sizeof w->what, "iteration %d (way %d)",
			    it, it % 4);
			break;
		}
	}
	return (NULL);
}

/*
 * Callbacks with nobody in a call: the receiver thread reads their
 * notifications and runs them, and their blocking calls read on there.
 * The application only polls a counter (bounded).
 */
static void
reader_on_rx(cl_kernel k, cl_command_queue q)
{
	cl_event	ev;
	cl_uint		seed = 1;
	cl_int		err = CL_SUCCESS;
	size_t		global = HOPS_WORDS;
	int		i, n, want;

	if (k == NULL || q == NULL)
		return;
	want = atomic_load(&reader.cb_done) + HOPS_THREADS * 4;
	for (i = 0; i < HOPS_THREADS * 4 && err == CL_SUCCESS; i++) {
		if ((err = clSetKernelArg(k, 1, sizeof seed, &seed)) !=
		    CL_SUCCESS || (err = clEnqueueNDRangeKernel(q, k, 1, NULL,
		    &global, NULL, 0, NULL, &ev)) != CL_SUCCESS)
			break;
		atomic_fetch_add(&reader.cb_want, 1);
		if ((err = clSetEventCallback(ev, CL_COMPLETE, reader_cb, NULL)) !=
		    CL_SUCCESS)
			atomic_fetch_sub(&reader.cb_want, 1);
		clReleaseEvent(ev);
	}
	if (err == CL_SUCCESS)
		err = clFlush(q);
	for (n = 0; n < HOPS_END_POLLS && atomic_load(&reader.cb_done) < want;
	    n++)
		poll_wait();
	check("reader_callbacks_on_receiver", err == CL_SUCCESS &&
	    atomic_load(&reader.cb_done) >= want && atomic_load(&reader.cb_bad) ==
	    0, "status %d; %d of %d callbacks ran, %d saw an error or a wrong "
	    "word", (int)err, atomic_load(&reader.cb_done), want,
	    atomic_load(&reader.cb_bad));
}

/*
 * Several threads on one node at once, with callbacks that call back in:
 * every call succeeds, every word is right, every callback runs.
 */
static void
reader_hammer(const char *const *extra)
{
	struct srv		 sv;
	struct reader_worker	 w[HOPS_THREADS];
	cl_int			 err = CL_SUCCESS;
	int			 i, n, started = 0, ok = 1;

	memset(&sv, 0, sizeof sv);
	memset(w, 0, sizeof w);
	if (!srv_start(&sv, "reader_server", "127.0.0.1:0", extra))
		return;
	if (!reader_env(&sv, NULL) || !reader_setup())
		goto out;
	for (i = 0; i < HOPS_THREADS; i++) {
		w[i].id = i;
		if ((w[i].q = clCreateCommandQueue(reader.ctx, reader.dev, 0,
		    &err)) == NULL || (w[i].buf = clCreateBuffer(reader.ctx,
		    CL_MEM_READ_WRITE, HOPS_WORDS * sizeof(cl_uint), NULL,
		    &err)) == NULL || (w[i].k = clCreateKernel(reader.prog,
		    "fill", &err)) == NULL || (err = clSetKernelArg(w[i].k, 0,
		    sizeof w[i].buf, &w[i].buf)) != CL_SUCCESS ||
		    (w[i].host = malloc(HOPS_WORDS * sizeof(cl_uint))) == NULL) {
			check("reader_hammer_setup", 0, "worker %d: %d", i,
			    (int)err);
			goto join;
		}
	}
	for (i = 0; i < HOPS_THREADS; i++) {
		if (pthread_create(&w[i].t, NULL, reader_worker_run, &w[i]) != 0)
			break;
		started++;
	}
	check("reader_hammer_threads", started == HOPS_THREADS,
	    "started %d of %d threads", started, HOPS_THREADS);
join:
	for (i = 0; i < started; i++)
		pthread_join(w[i].t, NULL);
	for (i = 0; i < started; i++) {
		if (w[i].err != CL_SUCCESS || w[i].bad != 0) {
			check("reader_hammer_worker", 0, "thread %d: %s: status "
			    "%d, %d words wrong", i, w[i].what, (int)w[i].err,
			    w[i].bad);
			ok = 0;
		}
	}
	if (started == HOPS_THREADS && ok)
		check("reader_hammer_workers", 1, "every word right");
	/* A callback runs after its event's status is set: poll, bounded. */
	for (n = 0; n < HOPS_END_POLLS && atomic_load(&reader.cb_done) <
	    atomic_load(&reader.cb_want); n++)
		poll_wait();
	if (started == HOPS_THREADS)
		check("reader_hammer_callbacks", atomic_load(&reader.cb_done) ==
		    atomic_load(&reader.cb_want) && atomic_load(&reader.cb_bad) ==
		    0 && atomic_load(&reader.cb_want) > 0, "%d of %d callbacks "
		    "ran, %d saw an error or a wrong word",
		    atomic_load(&reader.cb_done), atomic_load(&reader.cb_want),
		    atomic_load(&reader.cb_bad));
	reader_on_rx(w[0].k, w[0].q);
	/* Who ran them depends on timing: told, not checked. */
	note("%d of %d callbacks ran on the application's threads (inside "
	    "their calls), the rest on the receiver", atomic_load(
	    &reader.cb_on_app), atomic_load(&reader.cb_done));
	for (i = 0; i < HOPS_THREADS; i++) {
		if (w[i].k != NULL)
			clReleaseKernel(w[i].k);
		if (w[i].buf != NULL)
			clReleaseMemObject(w[i].buf);
		if (w[i].q != NULL)
			clReleaseCommandQueue(w[i].q);
		free(w[i].host);
	}
out:
	reader_teardown();
	srv_stop(&sv, "reader_server_stop");
}

/* The hammer over plain TCP. */
static void
t_hops_hammer(void)
{
	reader_hammer(NULL);
}

/*
 * The hammer under TLS: callers and the receiver share one SSL object, and
 * a token given back must leave no decrypted frame behind (no poll() would
 * wake for it). The server's certificate is self-signed for 127.0.0.1 and
 * is the client's only CA.
 */
static void
t_hops_hammer_tls(void)
{
	char		 dir[PATH_MAX], cert[PATH_MAX + 16], key[PATH_MAX + 16];
	char		 cmd[4 * PATH_MAX + 512];
	const char	*extra[] = { "--tls-cert", cert, "--tls-key", key, NULL };
	int		 rc;

	snprintf(dir, sizeof dir, "%s/reader-pki", root);
	snprintf(cert, sizeof cert, "%s/srv.pem", dir);
	snprintf(key, sizeof key, "%s/srv.key", dir);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s' && openssl req -x509 -newkey "
	    "ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout '%s' -out '%s' "
	    "-days 2 -subj /CN=vcl-reader -addext subjectAltName=IP:127.0.0.1 "
	    ">/dev/null 2>&1 && chmod 600 '%s'", dir, key, cert, key);
	fflush(stdout);
	rc = system(cmd);
	if (!check("reader_tls_pki", rc == 0, "openssl could not make a "
	    "certificate (status %d)", rc))
		return;
	setenv("VCL_TLS", "1", 1);
	setenv("VCL_TLS_CA", cert, 1);
	reader_hammer(extra);
}

/* Finish and ReadBuffer requests the server has seen, or -1. */
static long long
reader_waits_seen(const struct srv *sv)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;
	struct conn	c;
	struct reply	rp;
	long long	n = -1;
	size_t		i;

	if (conn_session(&c, sv) != 0)
		return (-1);
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if (call(&c, &r, NULL, 0, &rp) == 0) {
		if (rp.r->status == CL_SUCCESS && rp.r->stats != NULL) {
			n = 0;
			for (i = 0; i < rp.r->stats->n_ops; i++)
				if (rp.r->stats->ops[i]->opcode ==
				    VCL__REQUEST__CALL_FINISH ||
				    rp.r->stats->ops[i]->opcode ==
				    VCL__REQUEST__CALL_READ_BUFFER)
					n += (long long)
					    rp.r->stats->ops[i]->requests;
		}
		reply_free(&rp);
	}
	conn_close(&c);
	return (n);
}

/* A thread blocked in one call behind the long kernel, and its result. */
struct reader_blocked {
	pthread_t		 t;
	int			 id;
	cl_command_queue	 q;
	cl_mem			 buf;
	atomic_int		 done;
	cl_int			 err;
};

/* Block in a blocking read (even ids) or a clFinish (odd ids). */
static void *
reader_blocked_run(void *arg)
{
	struct reader_blocked	*b = arg;
	cl_uint			 word;

	if (b->id % 2 == 0)
		b->err = clEnqueueReadBuffer(b->q, b->buf, CL_TRUE, 0,
		    sizeof word, &word, 0, NULL, NULL);
	else
		b->err = clFinish(b->q);
	atomic_store(&b->done, 1);
	return (NULL);
}

/*
 * Threads blocked in calls (behind a kernel that runs far longer than the
 * test) when the server dies (SIGKILL) or stops answering (SIGSTOP, lost
 * after VCL_CALL_TIMEOUT_MS): every call returns an error in bounded time.
 */
static void
reader_loss(const char *name, int sig)
{
	struct srv		 sv;
	struct reader_blocked	 b[HOPS_THREADS];
	cl_kernel		 spin = NULL;
	cl_uint			 loops = 0xffffffffu;
	cl_int			 err = CL_SUCCESS;
	size_t			 one = 1;
	long long		 seen0, seen = 0;
	char			 what[96], tmo[16];
	int			 i, n, started = 0, ended = 0, errs = 0;

	memset(&sv, 0, sizeof sv);
	memset(b, 0, sizeof b);
	snprintf(tmo, sizeof tmo, "%d", HOPS_TIMEOUT_MS);
	if (!srv_start(&sv, name, "127.0.0.1:0", NULL))
		return;
	if (!reader_env(&sv, sig == SIGSTOP ? tmo : NULL) || !reader_setup())
		goto out;
	if ((seen0 = reader_waits_seen(&sv)) < 0) {
		check(name, 0, "no Stats from the server");
		goto out;
	}
	for (i = 0; i < HOPS_THREADS; i++) {
		b[i].id = i;
		if ((b[i].q = clCreateCommandQueue(reader.ctx, reader.dev, 0,
		    &err)) == NULL || (b[i].buf = clCreateBuffer(reader.ctx,
		    CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err)) == NULL ||
		    (spin = clCreateKernel(reader.prog, "spin", &err)) == NULL ||
		    (err = clSetKernelArg(spin, 0, sizeof b[i].buf,
		    &b[i].buf)) != CL_SUCCESS || (err = clSetKernelArg(spin, 1,
		    sizeof loops, &loops)) != CL_SUCCESS || (err =
		    clEnqueueNDRangeKernel(b[i].q, spin, 1, NULL, &one, NULL, 0,
		    NULL, NULL)) != CL_SUCCESS || (err = clFlush(b[i].q)) !=
		    CL_SUCCESS) {
			check(name, 0, "set-up of thread %d: %d", i, (int)err);
			goto join;
		}
		clReleaseKernel(spin);
		spin = NULL;
	}
	for (i = 0; i < HOPS_THREADS; i++) {
		if (pthread_create(&b[i].t, NULL, reader_blocked_run, &b[i]) != 0)
			break;
		started++;
	}
	/* Every thread's call is at the server (seen, not guessed). */
	for (n = 0; n < HOPS_END_POLLS && seen >= 0 && seen < seen0 +
	    started; n++) {
		poll_wait();
		seen = reader_waits_seen(&sv);
	}
	for (i = 0; i < started; i++)
		ended += atomic_load(&b[i].done);
	snprintf(what, sizeof what, "%s_blocked", name);
	check(what, started == HOPS_THREADS && seen >= seen0 + started &&
	    ended == 0, "%d threads started, %lld of their calls at the "
	    "server, %d returned before the loss", started, seen - seen0,
	    ended);
	kill(sv.pid, sig);
	for (n = 0; n < HOPS_END_POLLS; n++) {
		for (i = ended = 0; i < started; i++)
			ended += atomic_load(&b[i].done);
		if (ended == started)
			break;
		poll_wait();
	}
	snprintf(what, sizeof what, "%s_all_return", name);
	if (!check(what, ended == started, "%d of %d calls returned within "
	    "%d s of the loss", ended, started, HOPS_END_POLLS * POLL_MS /
	    1000)) {
		/* Stuck threads would hang the exit: leave now. */
		kill(sv.pid, SIGKILL);
		fflush(stdout);
		_exit(0);
	}
join:
	for (i = 0; i < started; i++) {
		pthread_join(b[i].t, NULL);
		if (b[i].err == CL_SUCCESS)
			errs++;
	}
	if (started == HOPS_THREADS) {
		snprintf(what, sizeof what, "%s_errors", name);
		check(what, errs == 0, "%d calls succeeded on a lost node",
		    errs);
		snprintf(what, sizeof what, "%s_after", name);
		err = clFinish(reader.cq);
		check(what, err == CL_DEVICE_NOT_AVAILABLE, "clFinish after "
		    "the loss: %d, want CL_DEVICE_NOT_AVAILABLE", (int)err);
	}
	if (spin != NULL)
		clReleaseKernel(spin);
	for (i = 0; i < HOPS_THREADS; i++) {
		if (b[i].buf != NULL)
			clReleaseMemObject(b[i].buf);
		if (b[i].q != NULL)
			clReleaseCommandQueue(b[i].q);
	}
out:
	reader_teardown();
	kill(sv.pid, SIGKILL);
	if (sig == SIGSTOP)
		kill(sv.pid, SIGCONT);
	srv_wait_exit(&sv);
}

/* The server killed under blocked calls. */
static void
t_hops_kill(void)
{
	reader_loss("reader_kill", SIGKILL);
}

/* The server stopped under blocked calls: the ping timeout finds it. */
static void
t_hops_stop(void)
{
	reader_loss("reader_stop", SIGSTOP);
}

static const struct test tests[] = {
	{ "hammer",	t_hops_hammer,	120 },
	{ "hammer_tls",	t_hops_hammer_tls, 120 },
	{ "kill",	t_hops_kill,	120 },
	{ "stop",	t_hops_stop,	120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
