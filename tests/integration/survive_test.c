/* survive_test.c - a failing server never hangs or kills the application. */

/*
 * libvcl (through the ICD loader; VCL_TEST_ICD_DIR names the directory of
 * vcl.icd) in this test's group process, against real vclservers that the
 * test kills (SIGKILL) or stops (SIGSTOP, found by VCL_CALL_TIMEOUT_MS)
 * while the application is blocked in each kind of call, over the shared
 * memory ring (the default on one host), over tcp and (calls) over TLS:
 *   calls_*: a blocking read, map (read and write-invalidate),
 *     clFinish and clWaitForEvents, each on its own queue behind a user
 *     event the server holds; every call returns an error within a bound,
 *     the callback registered on a waited event runs with a negative
 *     status, and what is left can still be set, finished and released.
 *   lonely_*: only a callback waits (on the receiver) when the server is
 *     lost: it runs, with a negative status.
 *   build_*: clBuildProgram on a server that stops, or is killed while
 *     stopped: an error within a bound.
 *   write_*: a 256 MiB blocking write to a server that stops taking its
 *     bytes, then (kill) is killed mid-bulk: an error, no SIGPIPE.
 *   held_live*: a live server holds a blocking write's session input (a
 *     buffer's creation held on a mover) for three call timeouts: its
 *     keepalives keep the node, the write succeeds once let go.
 *   read_cut_*: a chunked read's reply cut after its head and part of
 *     its bytes (VCL_TEST_READ_FAIL_CHUNK), blocking or waited for with
 *     clWaitForEvents: an error, the callback, the node lost.
 *   nodes: one context over two servers; the second dies under a blocked
 *     clFinish; work on the first goes on (new buffers, kernels, programs,
 *     user events, bytes checked) while calls on the lost one fail; the
 *     lost kernel's callback makes blocking calls on both nodes.
 *   cross_*: clFinish on one node behind an event of the other, which is
 *     killed or stops: an error, and the first works on.
 *   migrate_*: a read on one node of bytes only the other, killed or
 *     stopped, has: an error, and the first works on.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "rawproto.h"

#define SV_BYTES	(4u << 20)	/* each blocked transfer: 4 MiB */
#define SV_BIG		(256u << 20)	/* the large write: 256 MiB */
#define SV_TIMEOUT_MS	"1500"		/* VCL_CALL_TIMEOUT_MS of stops */
#define SV_END_POLLS	1500		/* calls returning after a loss: 15 s */
#define SV_BLOCK_POLLS	20		/* a call still blocked: 200 ms */

static const char sv_src[] =
	"__kernel void fill(__global uint *a, uint seed)\n"
	"{ uint i = get_global_id(0); a[i] = seed * 2654435761u + i; }\n"
	"__kernel void spin(__global uint *a, uint n)\n"
	"{ uint x = a[0]; for (uint i = 0; i < n; i++)\n"
	"  x = x * 1664525u + 1013904223u; a[0] = x; }\n";

/* The kinds of blocking call a group blocks in. */
enum sv_kind {
	SV_READ,
	SV_MAP_READ,
	SV_MAP_INVALIDATE,
	SV_FINISH,
	SV_WAIT,
	SV_NKINDS
};

static const char *const sv_names[SV_NKINDS] = {
	"read", "map_read", "map_invalidate", "finish", "wait"
};

/* One application thread blocked in one call, and what it returned. */
struct sv_call {
	pthread_t		 t;
	enum sv_kind		 kind;
	cl_command_queue	 q;
	cl_mem			 buf;
	cl_event		 ue;		/* what the call waits behind */
	cl_event		 ev;		/* SV_WAIT: the event waited for */
	void			*host;
	atomic_int		 started;
	atomic_int		 done;
	cl_int			 err;
};

/*
 * The events whose callbacks a calls group registers: the one waited for,
 * a kernel's behind clFinish and a non-blocking read's nobody waits for.
 */
enum sv_cbs {
	SV_CB_WAITED,
	SV_CB_KERNEL,
	SV_CB_NBREAD,
	SV_NCBS
};

static const char *const sv_cb_names[SV_NCBS] = {
	"waited", "kernel", "non-blocking read"
};

/* Each callback's record: how often it ran and the last status. */
static atomic_int	sv_cb_runs[SV_NCBS];
static atomic_int	sv_cb_status[SV_NCBS];

/* Record a completion callback (arg: its enum sv_cbs). */
static void CL_CALLBACK
sv_cb(cl_event ev, cl_int status, void *arg)
{
	int	i = (int)(intptr_t)arg;

	(void)ev;
	atomic_store(&sv_cb_status[i], status);
	atomic_fetch_add(&sv_cb_runs[i], 1);
}

/* Callbacks that have run at least once. */
static int
sv_cb_ran(void)
{
	int	i, k = 0;

	for (i = 0; i < SV_NCBS; i++)
		k += atomic_load(&sv_cb_runs[i]) > 0;
	return (k);
}

/*
 * Point libvcl at the servers (before its first call): VCL_NODES lists
 * them, transport "tcp" keeps bulk in band, timeout sets
 * VCL_CALL_TIMEOUT_MS unless NULL.
 */
static int
sv_env(struct srv *sv, int nsv, const char *transport, const char *timeout)
{
	const char	*icd = getenv("VCL_TEST_ICD_DIR");
	char		 nodes[160];
	size_t		 len = 0;
	int		 i;

	if (icd == NULL || *icd == '\0')
		return (check("env", 0,
		    "VCL_TEST_ICD_DIR (the directory of vcl.icd) is not set"));
	nodes[0] = '\0';
	for (i = 0; i < nsv && len < sizeof nodes; i++)
		len += (size_t)snprintf(nodes + len, sizeof nodes - len,
		    "%s127.0.0.1:%s", i > 0 ? "," : "", sv[i].port);
	setenv("VCL_NODES", nodes, 1);
	setenv("OCL_ICD_VENDORS", icd, 1);
	setenv("VCL_STRICT", "1", 1);
	if (transport != NULL)
		setenv("VCL_TRANSPORT", transport, 1);
	else
		unsetenv("VCL_TRANSPORT");
	if (timeout != NULL)
		setenv("VCL_CALL_TIMEOUT_MS", timeout, 1);
	else
		unsetenv("VCL_CALL_TIMEOUT_MS");
	return (1);
}

/* The platform's first ndev devices, a context over them and a program. */
static int
sv_setup(cl_device_id *dev, cl_uint ndev, cl_context *ctx, cl_program *prog,
    int build)
{
	cl_platform_id	 p;
	cl_uint		 n = 0;
	cl_int		 err = CL_SUCCESS;
	const char	*src = sv_src;

	*ctx = NULL;
	*prog = NULL;
	if (clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndev, dev, &n) !=
	    CL_SUCCESS || n < ndev)
		return (check("setup", 0, "want %u VCL devices, have %u",
		    ndev, n));
	if ((*ctx = clCreateContext(NULL, ndev, dev, NULL, NULL, &err)) ==
	    NULL || (*prog = clCreateProgramWithSource(*ctx, 1, &src, NULL,
	    &err)) == NULL || (build && (err = clBuildProgram(*prog, 0, NULL,
	    NULL, NULL, NULL)) != CL_SUCCESS))
		return (check("setup", 0, "OpenCL set-up failed: %d",
		    (int)err));
	return (1);
}

/*
 * Requests the server holds on events now, plus the finishes it has seen,
 * or -1: a request behind an unset user event is held, not run; a finish
 * behind held work is either.
 */
static long long
sv_seen(const struct srv *sv, uint64_t *shared)
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
			n = (long long)rp.r->stats->held_now;
			if (shared != NULL)
				*shared = rp.r->stats->client_bytes_shared;
			for (i = 0; i < rp.r->stats->n_ops; i++)
				if (rp.r->stats->ops[i]->opcode ==
				    VCL__REQUEST__CALL_FINISH)
					n += (long long)
					    rp.r->stats->ops[i]->requests;
		}
		reply_free(&rp);
	}
	conn_close(&c);
	return (n);
}

/*
 * Bytes through the shared ring so far, or -1. With some, polls (bounded)
 * until there are any: the server counts a copy once it is done, maybe
 * after the write's reply.
 */
static long long
sv_shared(const struct srv *sv, int some)
{
	uint64_t	shared = 0;
	int		n;

	for (n = 0; n < STATS_POLLS; n++) {
		if (sv_seen(sv, &shared) < 0)
			return (-1);
		if (!some || shared > 0)
			break;
		poll_wait();
	}
	return ((long long)shared);
}

/* Make one blocking call (on its own thread). */
static void *
sv_call_run(void *arg)
{
	struct sv_call	*b = arg;
	void		*p = NULL;

	atomic_store(&b->started, 1);
	switch (b->kind) {
	case SV_READ:
		b->err = clEnqueueReadBuffer(b->q, b->buf, CL_TRUE, 0,
		    SV_BYTES, b->host, 1, &b->ue, NULL);
		break;
	case SV_MAP_READ:
	case SV_MAP_INVALIDATE:
		p = clEnqueueMapBuffer(b->q, b->buf, CL_TRUE, b->kind ==
		    SV_MAP_READ ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION,
		    0, SV_BYTES, 1, &b->ue, NULL, &b->err);
		if (p != NULL && b->err == CL_SUCCESS)
			(void)clEnqueueUnmapMemObject(b->q, b->buf, p, 0, NULL,
			    NULL);
		else if (p != NULL)
			b->err = CL_SUCCESS;	/* a pointer with an error */
		break;
	case SV_FINISH:
		b->err = clFinish(b->q);
		break;
	case SV_WAIT:
		b->err = clWaitForEvents(1, &b->ev);
		break;
	default:
		break;
	}
	atomic_store(&b->done, 1);
	return (NULL);
}

/* Calls of b[0..n) that have returned. */
static int
sv_returned(struct sv_call *b, int n)
{
	int	i, k = 0;

	for (i = 0; i < n; i++)
		k += atomic_load(&b[i].done);
	return (k);
}

/*
 * Block one thread in each kind of call behind a user event, then lose
 * the server by sig: every call returns an error, the waited event's
 * callback runs with a negative status, and nothing left hangs.
 */
static void
sv_calls(const char *name, int sig, const char *transport,
    const char *const *extra)
{
	struct srv	 sv;
	struct sv_call	 b[SV_NKINDS];
	cl_device_id	 dev;
	cl_context	 ctx = NULL;
	cl_program	 prog = NULL;
	cl_kernel	 k = NULL;
	cl_event	 ue = NULL, kev = NULL, rev = NULL;
	cl_command_queue nq = NULL;
	cl_int		 err = CL_SUCCESS;
	cl_uint		 seed = 1;
	size_t		 global = 1;
	unsigned char	*warm = NULL;
	long long	 seen0 = 0, seen = 0, shared = 0;
	char		 what[96];
	int		 i, n, started = 0, ended, bad = 0;

	memset(b, 0, sizeof b);
	memset(&sv, 0, sizeof sv);
	for (i = 0; i < SV_NCBS; i++) {
		atomic_store(&sv_cb_runs[i], 0);
		atomic_store(&sv_cb_status[i], 1);
	}
	if (!srv_start(&sv, name, "127.0.0.1:0", extra))
		return;
	if (!sv_env(&sv, 1, transport, sig == SIGSTOP ? SV_TIMEOUT_MS :
	    NULL) || !sv_setup(&dev, 1, &ctx, &prog, 1))
		goto out;
	if ((warm = calloc(1, SV_BYTES)) == NULL ||
	    (ue = clCreateUserEvent(ctx, &err)) == NULL ||
	    (k = clCreateKernel(prog, "fill", &err)) == NULL) {
		check(name, 0, "set-up: %d", (int)err);
		goto out;
	}
	for (i = 0; i < SV_NKINDS; i++) {
		b[i].kind = (enum sv_kind)i;
		b[i].ue = ue;
		if ((b[i].host = calloc(1, SV_BYTES)) == NULL ||
		    (b[i].q = clCreateCommandQueue(ctx, dev, 0, &err)) ==
		    NULL || (b[i].buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE,
		    SV_BYTES, NULL, &err)) == NULL ||
		    /* A large transfer first: the ring, where there is one. */
		    (err = clEnqueueWriteBuffer(b[i].q, b[i].buf, CL_TRUE, 0,
		    SV_BYTES, warm, 0, NULL, NULL)) != CL_SUCCESS) {
			check(name, 0, "set-up of %s: %d", sv_names[i],
			    (int)err);
			goto join;
		}
	}
	/*
	 * What clFinish and clWaitForEvents wait for, behind the event, and
	 * a non-blocking read nobody waits for; each event with a callback.
	 */
	if ((err = clSetKernelArg(k, 0, sizeof b[SV_FINISH].buf,
	    &b[SV_FINISH].buf)) != CL_SUCCESS || (err = clSetKernelArg(k, 1,
	    sizeof seed, &seed)) != CL_SUCCESS || (err =
	    clEnqueueNDRangeKernel(b[SV_FINISH].q, k, 1, NULL, &global, NULL,
	    1, &ue, &kev)) != CL_SUCCESS || (err = clSetEventCallback(kev,
	    CL_COMPLETE, sv_cb, (void *)(intptr_t)SV_CB_KERNEL)) !=
	    CL_SUCCESS || (err = clFlush(b[SV_FINISH].q)) != CL_SUCCESS ||
	    (err = clEnqueueMarkerWithWaitList(b[SV_WAIT].q, 1, &ue,
	    &b[SV_WAIT].ev)) != CL_SUCCESS || (err =
	    clSetEventCallback(b[SV_WAIT].ev, CL_COMPLETE, sv_cb,
	    (void *)(intptr_t)SV_CB_WAITED)) != CL_SUCCESS ||
	    (err = clFlush(b[SV_WAIT].q)) != CL_SUCCESS ||
	    (nq = clCreateCommandQueue(ctx, dev, 0, &err)) == NULL ||
	    (err = clEnqueueReadBuffer(nq, b[SV_WAIT].buf, CL_FALSE, 0,
	    SV_BYTES, b[SV_WAIT].host, 1, &ue, &rev)) != CL_SUCCESS ||
	    (err = clSetEventCallback(rev, CL_COMPLETE, sv_cb,
	    (void *)(intptr_t)SV_CB_NBREAD)) != CL_SUCCESS ||
	    (err = clFlush(nq)) != CL_SUCCESS) {
		check(name, 0, "set-up of the waits: %d", (int)err);
		goto join;
	}
	/* Stats from a plain connection: not to a TLS server. */
	if (extra == NULL && ((shared = sv_shared(&sv, transport == NULL)) <
	    0 || (seen0 = sv_seen(&sv, NULL)) < 0)) {
		check(name, 0, "no Stats from the server");
		goto join;
	}
	/* Else the ring's path is not the one tested. */
	snprintf(what, sizeof what, "%s_path", name);
	if (extra == NULL)
		check(what, transport != NULL ? shared == 0 : shared > 0,
		    "%lld bytes through the shared ring, over %s", shared,
		    transport != NULL ? transport : "the default transport");
	for (i = 0; i < SV_NKINDS; i++) {
		if (pthread_create(&b[i].t, NULL, sv_call_run, &b[i]) != 0)
			break;
		started++;
	}
	/*
	 * Every request is at the server (seen, not guessed): the read, the
	 * read of the read map, the invalidating map's marker and the
	 * finish; the wait sends nothing. (A blocking write may return once
	 * its bytes are taken, before its wait list is done: not here.)
	 * Under TLS, where the test cannot ask, the calls are still blocked
	 * a while after they began.
	 */
	for (n = 0; extra == NULL && n < SV_END_POLLS && seen >= 0 &&
	    seen < seen0 + 4 && sv_returned(b, started) == 0; n++) {
		poll_wait();
		seen = sv_seen(&sv, NULL);
	}
	for (n = 0; extra != NULL && n < SV_BLOCK_POLLS &&
	    sv_returned(b, started) == 0; n++)
		poll_wait();
	if (extra != NULL)
		seen = seen0 + 4;
	snprintf(what, sizeof what, "%s_blocked", name);
	for (i = 0; i < started; i++)
		if (atomic_load(&b[i].done))
			note("%s: %s returned %d before the loss", name,
			    sv_names[i], (int)b[i].err);
	check(what, started == SV_NKINDS && seen >= seen0 + 4 &&
	    sv_returned(b, started) == 0, "%d calls started, %lld of their "
	    "requests at the server (want 4), %d returned before the loss",
	    started, seen - seen0, sv_returned(b, started));
	kill(sv.pid, sig);
	for (n = 0; n < SV_END_POLLS && sv_returned(b, started) < started; n++)
		poll_wait();
	ended = sv_returned(b, started);
	snprintf(what, sizeof what, "%s_all_return", name);
	if (!check(what, ended == started, "%d of %d calls returned within "
	    "%d s of the loss", ended, started, SV_END_POLLS * POLL_MS /
	    1000)) {
		for (i = 0; i < started; i++)
			if (!atomic_load(&b[i].done))
				note("%s: %s hangs", name, sv_names[i]);
		/* Stuck threads would hang the exit: leave now. */
		kill(sv.pid, SIGKILL);
		fflush(stdout);
		_exit(0);
	}
join:
	for (i = 0; i < started; i++) {
		pthread_join(b[i].t, NULL);
		if (b[i].err >= CL_SUCCESS) {
			note("%s: %s returned %d on a lost server", name,
			    sv_names[i], (int)b[i].err);
			bad++;
		}
	}
	if (started == SV_NKINDS) {
		snprintf(what, sizeof what, "%s_errors", name);
		check(what, bad == 0, "%d calls succeeded on a lost server",
		    bad);
		/* Callbacks may run on the receiver, just after the waits. */
		for (n = 0; n < SV_END_POLLS && sv_cb_ran() < SV_NCBS; n++)
			poll_wait();
		for (i = 0; i < SV_NCBS; i++) {
			snprintf(what, sizeof what, "%s_callback_%d", name, i);
			check(what, atomic_load(&sv_cb_runs[i]) == 1 &&
			    atomic_load(&sv_cb_status[i]) < 0, "the %s "
			    "event's callback ran %d times, last status %d "
			    "(want once, < 0)", sv_cb_names[i],
			    atomic_load(&sv_cb_runs[i]),
			    atomic_load(&sv_cb_status[i]));
		}
		/* A callback registered on a failed event runs at once. */
		atomic_store(&sv_cb_runs[SV_CB_KERNEL], 0);
		err = clSetEventCallback(kev, CL_COMPLETE, sv_cb,
		    (void *)(intptr_t)SV_CB_KERNEL);
		snprintf(what, sizeof what, "%s_callback_late", name);
		check(what, err == CL_SUCCESS &&
		    atomic_load(&sv_cb_runs[SV_CB_KERNEL]) == 1 &&
		    atomic_load(&sv_cb_status[SV_CB_KERNEL]) < 0, "a callback "
		    "set on the failed kernel event: %d, ran %d times, status "
		    "%d", (int)err, atomic_load(&sv_cb_runs[SV_CB_KERNEL]),
		    atomic_load(&sv_cb_status[SV_CB_KERNEL]));
		/* What the application does next returns too. */
		(void)clSetUserEventStatus(ue, CL_COMPLETE);
		err = clFinish(b[SV_READ].q);
		snprintf(what, sizeof what, "%s_after", name);
		check(what, err == CL_DEVICE_NOT_AVAILABLE, "clFinish after "
		    "the loss: %d, want CL_DEVICE_NOT_AVAILABLE", (int)err);
	}
	for (i = 0; i < SV_NKINDS; i++) {
		if (b[i].ev != NULL)
			clReleaseEvent(b[i].ev);
		if (b[i].buf != NULL)
			clReleaseMemObject(b[i].buf);
		if (b[i].q != NULL)
			clReleaseCommandQueue(b[i].q);
		free(b[i].host);
	}
out:
	if (kev != NULL)
		clReleaseEvent(kev);
	if (rev != NULL)
		clReleaseEvent(rev);
	if (nq != NULL)
		clReleaseCommandQueue(nq);
	if (k != NULL)
		clReleaseKernel(k);
	if (ue != NULL)
		clReleaseEvent(ue);
	if (prog != NULL)
		clReleaseProgram(prog);
	if (ctx != NULL)
		clReleaseContext(ctx);
	free(warm);
	if (sig == SIGSTOP)
		srv_kill(&sv);
}

/* SIGKILL under blocked calls, over the shared-memory ring. */
static void
t_calls_kill(void)
{
	sv_calls("calls_kill", SIGKILL, NULL, NULL);
}

/* SIGKILL under blocked calls, over tcp. */
static void
t_calls_kill_tcp(void)
{
	sv_calls("calls_kill_tcp", SIGKILL, "tcp", NULL);
}

/* SIGSTOP under blocked calls, over the shared-memory ring. */
static void
t_calls_stop(void)
{
	sv_calls("calls_stop", SIGSTOP, NULL, NULL);
}

/* SIGSTOP under blocked calls, over tcp. */
static void
t_calls_stop_tcp(void)
{
	sv_calls("calls_stop_tcp", SIGSTOP, "tcp", NULL);
}

/*
 * The calls under TLS (tcp: the bulk in the TLS stream), the server
 * killed (tls, sig SIGKILL) or stopped: a self-signed certificate for
 * 127.0.0.1, the client's only CA.
 */
static void
sv_calls_tls(const char *name, int sig)
{
	char		 dir[PATH_MAX], cert[PATH_MAX + 16], key[PATH_MAX + 16];
	char		 cmd[4 * PATH_MAX + 512];
	const char	*extra[] = { "--tls-cert", cert, "--tls-key", key, NULL };
	int		 rc;

	snprintf(dir, sizeof dir, "%s/%s-pki", root, name);
	snprintf(cert, sizeof cert, "%s/srv.pem", dir);
	snprintf(key, sizeof key, "%s/srv.key", dir);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s' && openssl req -x509 -newkey "
	    "ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout '%s' -out '%s' "
	    "-days 2 -subj /CN=vcl-survive -addext subjectAltName=IP:127.0.0.1 "
	    ">/dev/null 2>&1 && chmod 600 '%s'", dir, key, cert, key);
	fflush(stdout);
	rc = system(cmd);
	if (!check(name, rc == 0, "openssl could not make a certificate "
	    "(status %d)", rc))
		return;
	setenv("VCL_TLS", "1", 1);
	setenv("VCL_TLS_CA", cert, 1);
	sv_calls(name, sig, "tcp", extra);
}

/* SIGKILL under blocked calls, over TLS. */
static void
t_calls_kill_tls(void)
{
	sv_calls_tls("calls_kill_tls", SIGKILL);
}

/* SIGSTOP under blocked calls, over TLS. */
static void
t_calls_stop_tls(void)
{
	sv_calls_tls("calls_stop_tls", SIGSTOP);
}

/*
 * Nobody waits: an event with a callback behind a user event, its server
 * lost by sig. The receiver alone finds the loss (SIGSTOP: its pings go
 * unanswered) and the callback runs, with a negative status.
 */
static void
sv_lonely(const char *name, int sig)
{
	struct srv	 sv;
	cl_device_id	 dev;
	cl_context	 ctx = NULL;
	cl_program	 prog = NULL;
	cl_command_queue q = NULL;
	cl_event	 ue = NULL, mev = NULL;
	cl_int		 err = CL_SUCCESS;
	char		 what[96];
	int		 i, n;

	for (i = 0; i < SV_NCBS; i++) {
		atomic_store(&sv_cb_runs[i], 0);
		atomic_store(&sv_cb_status[i], 1);
	}
	if (!srv_start(&sv, name, "127.0.0.1:0", NULL))
		return;
	if (!sv_env(&sv, 1, NULL, sig == SIGSTOP ? SV_TIMEOUT_MS : NULL) ||
	    !sv_setup(&dev, 1, &ctx, &prog, 0))
		goto out;
	if ((q = clCreateCommandQueue(ctx, dev, 0, &err)) == NULL ||
	    (ue = clCreateUserEvent(ctx, &err)) == NULL ||
	    (err = clEnqueueMarkerWithWaitList(q, 1, &ue, &mev)) !=
	    CL_SUCCESS || (err = clSetEventCallback(mev, CL_COMPLETE, sv_cb,
	    (void *)(intptr_t)SV_CB_WAITED)) != CL_SUCCESS ||
	    (err = clFlush(q)) != CL_SUCCESS) {
		check(name, 0, "set-up: %d", (int)err);
		goto out;
	}
	kill(sv.pid, sig);
	for (n = 0; n < SV_END_POLLS && atomic_load(&sv_cb_runs[0]) == 0; n++)
		poll_wait();
	snprintf(what, sizeof what, "%s_callback", name);
	check(what, atomic_load(&sv_cb_runs[0]) == 1 &&
	    atomic_load(&sv_cb_status[0]) < 0, "the callback ran %d times "
	    "within %d s of the loss, last status %d (want once, < 0)",
	    atomic_load(&sv_cb_runs[0]), SV_END_POLLS * POLL_MS / 1000,
	    atomic_load(&sv_cb_status[0]));
out:
	if (mev != NULL)
		clReleaseEvent(mev);
	if (ue != NULL)
		clReleaseEvent(ue);
	if (q != NULL)
		clReleaseCommandQueue(q);
	if (prog != NULL)
		clReleaseProgram(prog);
	if (ctx != NULL)
		clReleaseContext(ctx);
	srv_kill(&sv);
}

/* The server killed with only a callback waiting. */
static void
t_lonely_kill(void)
{
	sv_lonely("lonely_kill", SIGKILL);
}

/* The server stopped with only a callback waiting. */
static void
t_lonely_stop(void)
{
	sv_lonely("lonely_stop", SIGSTOP);
}

/* clBuildProgram on its own thread. */
struct sv_build {
	pthread_t	t;
	cl_program	prog;
	atomic_int	done;
	cl_int		err;
};

/* Build the program (on its own thread). */
static void *
sv_build_run(void *arg)
{
	struct sv_build	*b = arg;

	b->err = clBuildProgram(b->prog, 0, NULL, NULL, NULL, NULL);
	atomic_store(&b->done, 1);
	return (NULL);
}

/*
 * clBuildProgram sent to a stopped server; with kill, the server is then
 * killed while the build still waits: an error within a bound either way.
 */
static void
sv_build(const char *name, int kill_it, const char *transport)
{
	struct srv	 sv;
	struct sv_build	 b;
	cl_device_id	 dev;
	cl_context	 ctx = NULL;
	char		 what[96];
	int		 n, started = 0;

	memset(&b, 0, sizeof b);
	if (!srv_start(&sv, name, "127.0.0.1:0", NULL))
		return;
	if (!sv_env(&sv, 1, transport, kill_it ? NULL : SV_TIMEOUT_MS) ||
	    !sv_setup(&dev, 1, &ctx, &b.prog, 0))
		goto out;
	kill(sv.pid, SIGSTOP);
	if (pthread_create(&b.t, NULL, sv_build_run, &b) != 0) {
		check(name, 0, "pthread_create failed");
		goto out;
	}
	started = 1;
	if (kill_it) {
		/* Still waiting a while after it began: then the kill. */
		for (n = 0; n < SV_BLOCK_POLLS && !atomic_load(&b.done); n++)
			poll_wait();
		snprintf(what, sizeof what, "%s_blocked", name);
		check(what, !atomic_load(&b.done), "the build returned %d on "
		    "a stopped server", (int)b.err);
		kill(sv.pid, SIGKILL);
	}
	for (n = 0; n < SV_END_POLLS && !atomic_load(&b.done); n++)
		poll_wait();
	snprintf(what, sizeof what, "%s_returns", name);
	if (!check(what, atomic_load(&b.done), "clBuildProgram still waits "
	    "%d s after the loss", SV_END_POLLS * POLL_MS / 1000)) {
		kill(sv.pid, SIGKILL);
		fflush(stdout);
		_exit(0);
	}
	pthread_join(b.t, NULL);
	snprintf(what, sizeof what, "%s_error", name);
	check(what, b.err != CL_SUCCESS, "clBuildProgram succeeded on a "
	    "lost server");
out:
	(void)started;
	if (b.prog != NULL)
		clReleaseProgram(b.prog);
	if (ctx != NULL)
		clReleaseContext(ctx);
	srv_kill(&sv);
}

/* clBuildProgram on a stopped server: the call timeout ends it. */
static void
t_build_stop(void)
{
	sv_build("build_stop", 0, NULL);
}

/* clBuildProgram on a server killed while it waits, over tcp. */
static void
t_build_kill_tcp(void)
{
	sv_build("build_kill_tcp", 1, "tcp");
}

/* A blocking write of SV_BIG bytes on its own thread. */
struct sv_write {
	pthread_t		 t;
	cl_command_queue	 q;
	cl_mem			 buf;
	void			*host;
	atomic_int		 done;
	cl_int			 err;
};

/* Write the whole buffer, blocking (on its own thread). */
static void *
sv_write_run(void *arg)
{
	struct sv_write	*w = arg;

	w->err = clEnqueueWriteBuffer(w->q, w->buf, CL_TRUE, 0, SV_BIG,
	    w->host, 0, NULL, NULL);
	atomic_store(&w->done, 1);
	return (NULL);
}

/*
 * Write SV_BYTES, blocking, and finish the queue (on its own thread): a
 * write whose bytes are all sent may return before the server has them.
 */
static void *
sv_held_run(void *arg)
{
	struct sv_write	*w = arg;

	if ((w->err = clEnqueueWriteBuffer(w->q, w->buf, CL_TRUE, 0, SV_BYTES,
	    w->host, 0, NULL, NULL)) == CL_SUCCESS)
		w->err = clFinish(w->q);
	atomic_store(&w->done, 1);
	return (NULL);
}

/*
 * A 256 MiB blocking write to a server that stops taking its bytes
 * (SIGSTOP after a first large transfer, so the ring is set up where
 * there is one): the call timeout ends it; with kill, the server is then
 * killed, its connection closed mid-bulk. An error within a bound, no
 * signal in the application.
 */
static void
sv_write(const char *name, int kill_it, const char *transport)
{
	struct srv	 sv;
	struct sv_write	 w;
	cl_device_id	 dev;
	cl_context	 ctx = NULL;
	cl_program	 prog = NULL;
	cl_int		 err = CL_SUCCESS;
	long long	 shared;
	char		 what[96];
	int		 n;

	memset(&w, 0, sizeof w);
	if (!srv_start(&sv, name, "127.0.0.1:0", NULL))
		return;
	if (!sv_env(&sv, 1, transport, kill_it ? NULL : SV_TIMEOUT_MS) ||
	    !sv_setup(&dev, 1, &ctx, &prog, 0))
		goto out;
	if ((w.host = calloc(1, SV_BIG)) == NULL ||
	    (w.q = clCreateCommandQueue(ctx, dev, 0, &err)) == NULL ||
	    (w.buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, SV_BIG, NULL,
	    &err)) == NULL || (err = clEnqueueWriteBuffer(w.q, w.buf, CL_TRUE,
	    0, SV_BYTES, w.host, 0, NULL, NULL)) != CL_SUCCESS ||
	    /* The first offers the ring; the second goes through it. */
	    (err = clEnqueueWriteBuffer(w.q, w.buf, CL_TRUE, 0, SV_BYTES,
	    w.host, 0, NULL, NULL)) != CL_SUCCESS) {
		check(name, 0, "set-up: %d", (int)err);
		goto out;
	}
	/* Else the ring's path is not the one tested. */
	shared = sv_shared(&sv, transport == NULL);
	snprintf(what, sizeof what, "%s_path", name);
	check(what, transport != NULL ? shared == 0 : shared > 0, "%lld "
	    "bytes through the shared ring, over %s", shared, transport !=
	    NULL ? transport : "the default transport");
	kill(sv.pid, SIGSTOP);
	if (pthread_create(&w.t, NULL, sv_write_run, &w) != 0) {
		check(name, 0, "pthread_create failed");
		goto out;
	}
	if (kill_it) {
		for (n = 0; n < SV_BLOCK_POLLS && !atomic_load(&w.done); n++)
			poll_wait();
		snprintf(what, sizeof what, "%s_blocked", name);
		check(what, !atomic_load(&w.done), "the write returned %d to "
		    "a stopped server", (int)w.err);
		kill(sv.pid, SIGKILL);
	}
	for (n = 0; n < SV_END_POLLS && !atomic_load(&w.done); n++)
		poll_wait();
	snprintf(what, sizeof what, "%s_returns", name);
	if (!check(what, atomic_load(&w.done), "the write still waits %d s "
	    "after the loss", SV_END_POLLS * POLL_MS / 1000)) {
		kill(sv.pid, SIGKILL);
		fflush(stdout);
		_exit(0);
	}
	pthread_join(w.t, NULL);
	snprintf(what, sizeof what, "%s_error", name);
	check(what, w.err == CL_DEVICE_NOT_AVAILABLE, "the write returned %d, "
	    "want CL_DEVICE_NOT_AVAILABLE", (int)w.err);
out:
	if (w.buf != NULL)
		clReleaseMemObject(w.buf);
	if (w.q != NULL)
		clReleaseCommandQueue(w.q);
	if (prog != NULL)
		clReleaseProgram(prog);
	if (ctx != NULL)
		clReleaseContext(ctx);
	free(w.host);
	srv_kill(&sv);
}

/* The large write to a stopped server, over the ring. */
static void
t_write_stop(void)
{
	sv_write("write_stop", 0, NULL);
}

/* The large write to a stopped server, over tcp. */
static void
t_write_stop_tcp(void)
{
	sv_write("write_stop_tcp", 0, "tcp");
}

/* The large write, its server killed mid-bulk, over the ring. */
static void
t_write_kill(void)
{
	sv_write("write_kill", 1, NULL);
}

/* The large write, its server killed mid-bulk, over tcp. */
static void
t_write_kill_tcp(void)
{
	sv_write("write_kill_tcp", 1, "tcp");
}

/*
 * A live server whose session holds its input back longer than the call
 * timeout: a buffer's creation is held on a mover (VCL_TEST_MOVER_LATCH)
 * for three timeouts while a blocking write and a clFinish wait behind
 * it, its bytes and the client's pings unread. The server's loop says it
 * lives (keepalives), so the node is not lost: the calls wait, then
 * succeed once the creation is let go, and the bytes read back.
 */
static void
sv_held(const char *name, const char *transport)
{
	struct srv	 sv;
	struct sv_write	 w;
	cl_device_id	 dev;
	cl_context	 ctx = NULL;
	cl_program	 prog = NULL;
	cl_int		 err = CL_SUCCESS;
	unsigned char	*back = NULL;
	char		 what[96], latch[PATH_MAX];
	int		 n, rc, held_polls;

	memset(&w, 0, sizeof w);
	snprintf(latch, sizeof latch, "%s/%s-latch", root, name);
	setenv("VCL_TEST_MOVER_LATCH", latch, 1);
	rc = srv_start(&sv, name, "127.0.0.1:0", NULL);
	unsetenv("VCL_TEST_MOVER_LATCH");
	if (!rc)
		return;
	held_polls = 3 * atoi(SV_TIMEOUT_MS) / POLL_MS;
	if (!sv_env(&sv, 1, transport, SV_TIMEOUT_MS) ||
	    !sv_setup(&dev, 1, &ctx, &prog, 0))
		goto out;
	if ((w.host = malloc(SV_BYTES)) == NULL ||
	    (back = calloc(1, SV_BYTES)) == NULL ||
	    (w.q = clCreateCommandQueue(ctx, dev, 0, &err)) == NULL ||
	    (w.buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, SV_BYTES, NULL,
	    &err)) == NULL) {
		check(name, 0, "set-up: %d", (int)err);
		goto out;
	}
	for (n = 0; n < (int)SV_BYTES; n++)
		((unsigned char *)w.host)[n] = (unsigned char)(n * 7 + 1);
	if (pthread_create(&w.t, NULL, sv_held_run, &w) != 0) {
		check(name, 0, "pthread_create failed");
		goto out;
	}
	for (n = 0; n < held_polls && !atomic_load(&w.done); n++)
		poll_wait();
	snprintf(what, sizeof what, "%s_waits", name);
	rc = check(what, !atomic_load(&w.done), "the write and finish "
	    "returned %d while its live server held them (%d ms, "
	    "VCL_CALL_TIMEOUT_MS %s)",
	    (int)w.err, held_polls * POLL_MS, SV_TIMEOUT_MS);
	snprintf(what, sizeof what, "%s_latch", name);
	check(what, raw_latch_open(latch), "cannot make %s", latch);
	for (n = 0; n < SV_END_POLLS && !atomic_load(&w.done); n++)
		poll_wait();
	snprintf(what, sizeof what, "%s_returns", name);
	if (!check(what, atomic_load(&w.done), "the write or finish still "
	    "waits %d s after its buffer was made", SV_END_POLLS * POLL_MS / 1000)) {
		srv_kill(&sv);
		fflush(stdout);
		_exit(0);
	}
	pthread_join(w.t, NULL);
	if (!rc)
		goto out;
	snprintf(what, sizeof what, "%s_succeeds", name);
	if (!check(what, w.err == CL_SUCCESS, "the write and finish "
	    "returned %d", (int)w.err))
		goto out;
	err = clEnqueueReadBuffer(w.q, w.buf, CL_TRUE, 0, SV_BYTES, back, 0,
	    NULL, NULL);
	snprintf(what, sizeof what, "%s_bytes", name);
	check(what, err == CL_SUCCESS && memcmp(back, w.host, SV_BYTES) == 0,
	    "the read back: %d%s", (int)err, err == CL_SUCCESS ?
	    " (wrong bytes)" : "");
out:
	(void)raw_latch_open(latch);
	if (w.buf != NULL)
		clReleaseMemObject(w.buf);
	if (w.q != NULL)
		clReleaseCommandQueue(w.q);
	if (prog != NULL)
		clReleaseProgram(prog);
	if (ctx != NULL)
		clReleaseContext(ctx);
	free(w.host);
	free(back);
	srv_kill(&sv);
}

/* The held write over tcp: its bytes wait in the stream. */
static void
t_held_live_tcp(void)
{
	sv_held("held_live_tcp", "tcp");
}

/* The held write over the ring. */
static void
t_held_live(void)
{
	sv_held("held_live", NULL);
}

/*
 * A chunked read whose reply is cut after its head and part of its bytes
 * (over tcp: through the ring a read is not chunked)
 * (VCL_TEST_READ_FAIL_CHUNK: a chunk after the first fails, and the
 * server closes the session): the blocking read fails, the node is lost,
 * the application's next calls fail at once.
 */
static void
sv_read_cut(const char *name, const char *transport, int nb)
{
	static const char *const extra[] = { "--read-chunk", "64K", NULL };
	struct srv	 sv;
	cl_device_id	 dev;
	cl_context	 ctx = NULL;
	cl_program	 prog = NULL;
	cl_command_queue q = NULL;
	cl_mem		 buf = NULL;
	cl_event	 ev = NULL;
	cl_int		 err = CL_SUCCESS;
	void		*host = NULL;
	char		 what[96];
	int		 rc, n;

	atomic_store(&sv_cb_runs[0], 0);
	atomic_store(&sv_cb_status[0], 1);
	setenv("VCL_TEST_READ_FAIL_CHUNK", "5", 1);
	rc = srv_start(&sv, name, "127.0.0.1:0", extra);
	unsetenv("VCL_TEST_READ_FAIL_CHUNK");
	if (!rc)
		return;
	if (!sv_env(&sv, 1, transport, NULL) || !sv_setup(&dev, 1, &ctx,
	    &prog, 0))
		goto out;
	if ((host = calloc(1, SV_BYTES)) == NULL ||
	    (q = clCreateCommandQueue(ctx, dev, 0, &err)) == NULL ||
	    (buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, SV_BYTES, NULL,
	    &err)) == NULL) {
		check(name, 0, "set-up: %d", (int)err);
		goto out;
	}
	if (!nb)
		err = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, SV_BYTES, host, 0,
		    NULL, NULL);
	/* Non-blocking: the receiver lands the bytes, the event tells. */
	else if ((err = clEnqueueReadBuffer(q, buf, CL_FALSE, 0, SV_BYTES,
	    host, 0, NULL, &ev)) == CL_SUCCESS && (err =
	    clSetEventCallback(ev, CL_COMPLETE, sv_cb,
	    (void *)(intptr_t)SV_CB_WAITED)) == CL_SUCCESS)
		err = clWaitForEvents(1, &ev);
	snprintf(what, sizeof what, "%s_error", name);
	check(what, err < 0, "a read whose chunk 5 failed returned %d",
	    (int)err);
	err = clFinish(q);
	snprintf(what, sizeof what, "%s_after", name);
	check(what, err == CL_DEVICE_NOT_AVAILABLE, "clFinish after the cut "
	    "read: %d, want CL_DEVICE_NOT_AVAILABLE", (int)err);
	for (n = 0; nb && n < SV_END_POLLS && atomic_load(&sv_cb_runs[0]) ==
	    0; n++)
		poll_wait();
	snprintf(what, sizeof what, "%s_callback", name);
	if (nb)
		check(what, atomic_load(&sv_cb_runs[0]) == 1 &&
		    atomic_load(&sv_cb_status[0]) < 0, "the read's callback "
		    "ran %d times, last status %d (want once, < 0)",
		    atomic_load(&sv_cb_runs[0]),
		    atomic_load(&sv_cb_status[0]));
out:
	if (ev != NULL)
		clReleaseEvent(ev);
	if (buf != NULL)
		clReleaseMemObject(buf);
	if (q != NULL)
		clReleaseCommandQueue(q);
	if (prog != NULL)
		clReleaseProgram(prog);
	if (ctx != NULL)
		clReleaseContext(ctx);
	free(host);
	kill(sv.pid, SIGKILL);
	srv_wait_exit(&sv);
}

/* A chunked read cut mid-bytes, over tcp. */
static void
t_read_cut_tcp(void)
{
	sv_read_cut("read_cut_tcp", "tcp", 0);
}

/* The same read non-blocking: clWaitForEvents and its callback. */
static void
t_read_cut_nb_tcp(void)
{
	sv_read_cut("read_cut_nb_tcp", "tcp", 1);
}

/* Fill buf (words) with seed on q and read it back: 1 if every word is right. */
static int
sv_fill_check(cl_command_queue q, cl_program prog, cl_mem buf, size_t words,
    cl_uint seed, cl_int *errp)
{
	cl_kernel	 k;
	cl_uint		*a;
	cl_int		 err = CL_SUCCESS;
	size_t		 i;
	int		 ok = 0, step = 0;

	if ((a = calloc(words, sizeof *a)) == NULL)
		return (0);
	if (++step && (k = clCreateKernel(prog, "fill", &err)) != NULL &&
	    ++step && (err = clSetKernelArg(k, 0, sizeof buf, &buf)) ==
	    CL_SUCCESS && (err = clSetKernelArg(k, 1, sizeof seed, &seed)) ==
	    CL_SUCCESS && ++step && (err = clEnqueueNDRangeKernel(q, k, 1,
	    NULL, &words, NULL, 0, NULL, NULL)) == CL_SUCCESS && ++step &&
	    (err = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, words * sizeof *a,
	    a, 0, NULL, NULL)) == CL_SUCCESS) {
		ok = 1;
		for (i = 0; i < words; i++)
			if (a[i] != seed * 2654435761u + (cl_uint)i)
				ok = 0;
	}
	if (!ok)
		note("fill: %s failed: %d", step == 1 ? "clCreateKernel" :
		    step == 2 ? "clSetKernelArg" : step == 3 ?
		    "clEnqueueNDRangeKernel" : "clEnqueueReadBuffer",
		    (int)err);
	if (k != NULL)
		clReleaseKernel(k);
	free(a);
	*errp = err;
	return (ok);
}

/*
 * After the loss, on the surviving node: a user event of the context
 * gates a read there, and a program made and built for that device runs.
 */
static void
sv_nodes_more(cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	cl_program	 prog = NULL;
	cl_event	 ue = NULL;
	cl_mem		 buf = NULL;
	cl_uint		 word = 0;
	cl_int		 err = CL_SUCCESS;
	const char	*src = sv_src;
	int		 ok;

	if ((buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096 *
	    sizeof(cl_uint), NULL, &err)) == NULL) {
		check("nodes_more_buffer", 0, "clCreateBuffer: %d", (int)err);
		return;
	}
	ue = clCreateUserEvent(ctx, &err);
	if (check("nodes_user_event", ue != NULL, "clCreateUserEvent after "
	    "the loss: %d", (int)err)) {
		err = clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof word,
		    &word, 1, &ue, NULL);
		if (err == CL_SUCCESS)
			err = clSetUserEventStatus(ue, CL_COMPLETE);
		if (err == CL_SUCCESS)
			err = clFinish(q);
		check("nodes_user_event_gates", err == CL_SUCCESS, "a read "
		    "behind a user event after the loss: %d", (int)err);
		clReleaseEvent(ue);
	}
	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (check("nodes_new_program", prog != NULL, "clCreateProgramWithSource "
	    "after the loss: %d", (int)err)) {
		err = clBuildProgram(prog, 1, &dev, NULL, NULL, NULL);
		ok = err == CL_SUCCESS && sv_fill_check(q, prog, buf, 4096,
		    17, &err);
		check("nodes_new_program_runs", ok, "a program built for the "
		    "surviving device after the loss: %d", (int)err);
		clReleaseProgram(prog);
	}
	clReleaseMemObject(buf);
}

/* What the nodes group's callback on the lost kernel did. */
static struct {
	cl_command_queue	 q0;		/* the surviving node's */
	cl_mem			 m0;
	cl_command_queue	 q1;		/* the lost node's */
	cl_int			 status;
	cl_int			 read_err;
	cl_int			 finish_err;
	cl_uint			 word;
	atomic_int		 done;
} sv_busy_cb;

/*
 * A callback on an event of the node lost, run by the thread that found
 * the loss: a blocking read on the surviving node (the first word of the
 * last fill, seed 7) and a clFinish on the lost one.
 */
static void CL_CALLBACK
sv_busy_cb_run(cl_event ev, cl_int status, void *arg)
{
	(void)ev;
	(void)arg;
	sv_busy_cb.status = status;
	sv_busy_cb.read_err = clEnqueueReadBuffer(sv_busy_cb.q0,
	    sv_busy_cb.m0, CL_TRUE, 0, sizeof sv_busy_cb.word,
	    &sv_busy_cb.word, 0, NULL, NULL);
	sv_busy_cb.finish_err = clFinish(sv_busy_cb.q1);
	atomic_store(&sv_busy_cb.done, 1);
}

/*
 * One context over two servers; the second is killed under a clFinish
 * blocked behind a long kernel there. The call fails, and the first
 * server's device goes on working: buffers made before and after the
 * loss, kernels, reads, all checked.
 */
static void
t_nodes(void)
{
	struct srv	 sv[2];
	struct sv_call	 b;
	cl_device_id	 dev[2];
	cl_context	 ctx = NULL;
	cl_program	 prog = NULL;
	cl_command_queue q0 = NULL;
	cl_kernel	 spin = NULL, ks[2];
	cl_mem		 m0 = NULL, m1 = NULL;
	cl_event	 kev = NULL;
	cl_uint		 nk = 0;
	cl_uint		 loops = 0xffffffffu;
	cl_int		 err = CL_SUCCESS;
	size_t		 one = 1, words = 1u << 16;
	int		 n, ok;

	memset(&b, 0, sizeof b);
	memset(sv, 0, sizeof sv);
	if (!srv_start(&sv[0], "nodes_server0", "127.0.0.1:0", NULL))
		return;
	if (!srv_start(&sv[1], "nodes_server1", "127.0.0.1:0", NULL))
		goto out;
	if (!sv_env(sv, 2, NULL, NULL) || !sv_setup(dev, 2, &ctx, &prog, 1))
		goto out;
	b.kind = SV_FINISH;
	if ((q0 = clCreateCommandQueue(ctx, dev[0], 0, &err)) == NULL ||
	    (b.q = clCreateCommandQueue(ctx, dev[1], 0, &err)) == NULL ||
	    (m0 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, words *
	    sizeof(cl_uint), NULL, &err)) == NULL ||
	    (b.buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_uint),
	    NULL, &err)) == NULL ||
	    (spin = clCreateKernel(prog, "spin", &err)) == NULL ||
	    (err = clSetKernelArg(spin, 0, sizeof b.buf, &b.buf)) !=
	    CL_SUCCESS || (err = clSetKernelArg(spin, 1, sizeof loops,
	    &loops)) != CL_SUCCESS || (err = clEnqueueNDRangeKernel(b.q, spin,
	    1, NULL, &one, NULL, 0, NULL, &kev)) != CL_SUCCESS ||
	    (err = clFlush(b.q)) != CL_SUCCESS) {
		check("nodes_setup", 0, "set-up: %d", (int)err);
		goto out;
	}
	ok = sv_fill_check(q0, prog, m0, words, 7, &err);
	if (!check("nodes_before", ok, "work on the first node before the "
	    "loss: %d", (int)err))
		goto out;
	/* The lost kernel's callback makes blocking calls on both nodes. */
	sv_busy_cb.q0 = q0;
	sv_busy_cb.m0 = m0;
	sv_busy_cb.q1 = b.q;
	atomic_store(&sv_busy_cb.done, 0);
	if ((err = clSetEventCallback(kev, CL_COMPLETE, sv_busy_cb_run,
	    NULL)) != CL_SUCCESS) {
		check("nodes_callback_set", 0, "clSetEventCallback: %d",
		    (int)err);
		goto out;
	}
	if (pthread_create(&b.t, NULL, sv_call_run, &b) != 0) {
		check("nodes_thread", 0, "pthread_create failed");
		goto out;
	}
	/* The finish is under way (it cannot end: the kernel runs on). */
	for (n = 0; n < SV_BLOCK_POLLS && !atomic_load(&b.done); n++)
		poll_wait();
	kill(sv[1].pid, SIGKILL);
	for (n = 0; n < SV_END_POLLS && !atomic_load(&b.done); n++)
		poll_wait();
	if (!check("nodes_finish_returns", atomic_load(&b.done), "clFinish "
	    "on the lost node still waits %d s after the loss",
	    SV_END_POLLS * POLL_MS / 1000)) {
		kill(sv[0].pid, SIGKILL);
		fflush(stdout);
		_exit(0);
	}
	pthread_join(b.t, NULL);
	check("nodes_finish_error", b.err != CL_SUCCESS, "clFinish succeeded "
	    "on the lost node");
	for (n = 0; n < SV_END_POLLS && !atomic_load(&sv_busy_cb.done); n++)
		poll_wait();
	check("nodes_callback", atomic_load(&sv_busy_cb.done) &&
	    sv_busy_cb.status < 0 && sv_busy_cb.read_err == CL_SUCCESS &&
	    sv_busy_cb.word == 7 * 2654435761u && sv_busy_cb.finish_err ==
	    CL_DEVICE_NOT_AVAILABLE, "the lost kernel's callback: %s, status "
	    "%d; its blocking read on the surviving node %d (word %#x), its "
	    "clFinish on the lost one %d", atomic_load(&sv_busy_cb.done) ?
	    "ran" : "never ran or never returned", (int)sv_busy_cb.status,
	    (int)sv_busy_cb.read_err, sv_busy_cb.word,
	    (int)sv_busy_cb.finish_err);
	ok = sv_fill_check(q0, prog, m0, words, 11, &err);
	check("nodes_old_buffer", ok, "work on the surviving node, on a "
	    "buffer made before the loss: %d", (int)err);
	if ((m1 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, words *
	    sizeof(cl_uint), NULL, &err)) == NULL)
		check("nodes_new_buffer", 0, "clCreateBuffer after the loss: "
		    "%d", (int)err);
	else {
		ok = sv_fill_check(q0, prog, m1, words, 13, &err);
		check("nodes_new_buffer", ok, "work on the surviving node, on "
		    "a buffer made after the loss: %d", (int)err);
	}
	err = clCreateKernelsInProgram(prog, 2, ks, &nk);
	check("nodes_kernels", err == CL_SUCCESS && nk == 2,
	    "clCreateKernelsInProgram after the loss: %d, %u kernels",
	    (int)err, nk);
	if (err == CL_SUCCESS)
		for (nk = 0; nk < 2; nk++)
			clReleaseKernel(ks[nk]);
	sv_nodes_more(ctx, dev[0], q0);
	err = clFinish(b.q);
	check("nodes_lost_queue", err == CL_DEVICE_NOT_AVAILABLE, "clFinish "
	    "on the lost node's queue: %d, want CL_DEVICE_NOT_AVAILABLE",
	    (int)err);
	err = clFinish(q0);
	check("nodes_live_queue", err == CL_SUCCESS, "clFinish on the "
	    "surviving node's queue: %d", (int)err);
out:
	if (kev != NULL)
		clReleaseEvent(kev);
	if (spin != NULL)
		clReleaseKernel(spin);
	if (m0 != NULL)
		clReleaseMemObject(m0);
	if (m1 != NULL)
		clReleaseMemObject(m1);
	if (b.buf != NULL)
		clReleaseMemObject(b.buf);
	if (b.q != NULL)
		clReleaseCommandQueue(b.q);
	if (q0 != NULL)
		clReleaseCommandQueue(q0);
	if (prog != NULL)
		clReleaseProgram(prog);
	if (ctx != NULL)
		clReleaseContext(ctx);
	if (sv[1].pid > 0) {
		kill(sv[1].pid, SIGKILL);
		srv_wait_exit(&sv[1]);
	}
	srv_stop(&sv[0], "nodes_server0_stop");
}

/*
 * One context over two servers: clFinish on the first waits for a
 * command there behind a kernel's event on the second (a cross-node wait
 * list: the second forwards its completion), and the second is lost by
 * sig (SIGSTOP: found by VCL_CALL_TIMEOUT_MS). The finish returns an
 * error within a bound; the first node works on.
 */
static void
sv_cross(const char *name, int sig)
{
	struct srv	 sv[2];
	struct sv_call	 b;
	cl_device_id	 dev[2];
	cl_context	 ctx = NULL;
	cl_program	 prog = NULL;
	cl_command_queue q1 = NULL;
	cl_kernel	 spin = NULL;
	cl_event	 kev = NULL;
	cl_mem		 m1 = NULL, m0 = NULL;
	cl_uint		 loops = 0xffffffffu;
	cl_int		 err = CL_SUCCESS;
	size_t		 one = 1;
	char		 what[96];
	int		 n, ok;

	memset(&b, 0, sizeof b);
	memset(sv, 0, sizeof sv);
	if (!srv_start(&sv[0], name, "127.0.0.1:0", NULL))
		return;
	if (!srv_start(&sv[1], name, "127.0.0.1:0", NULL))
		goto out;
	if (!sv_env(sv, 2, NULL, sig == SIGSTOP ? SV_TIMEOUT_MS : NULL) ||
	    !sv_setup(dev, 2, &ctx, &prog, 1))
		goto out;
	b.kind = SV_FINISH;
	if ((b.q = clCreateCommandQueue(ctx, dev[0], 0, &err)) == NULL ||
	    (q1 = clCreateCommandQueue(ctx, dev[1], 0, &err)) == NULL ||
	    (m1 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_uint),
	    NULL, &err)) == NULL || (m0 = clCreateBuffer(ctx,
	    CL_MEM_READ_WRITE, 4096 * sizeof(cl_uint), NULL, &err)) == NULL ||
	    (spin = clCreateKernel(prog, "spin", &err)) == NULL ||
	    (err = clSetKernelArg(spin, 0, sizeof m1, &m1)) != CL_SUCCESS ||
	    (err = clSetKernelArg(spin, 1, sizeof loops, &loops)) !=
	    CL_SUCCESS || (err = clEnqueueNDRangeKernel(q1, spin, 1, NULL,
	    &one, NULL, 0, NULL, &kev)) != CL_SUCCESS ||
	    (err = clFlush(q1)) != CL_SUCCESS ||
	    (err = clEnqueueMarkerWithWaitList(b.q, 1, &kev, NULL)) !=
	    CL_SUCCESS || (err = clFlush(b.q)) != CL_SUCCESS) {
		snprintf(what, sizeof what, "%s_setup", name);
		check(what, 0, "set-up: %d", (int)err);
		goto out;
	}
	if (pthread_create(&b.t, NULL, sv_call_run, &b) != 0) {
		check(name, 0, "pthread_create failed");
		goto out;
	}
	for (n = 0; n < SV_BLOCK_POLLS && !atomic_load(&b.done); n++)
		poll_wait();
	snprintf(what, sizeof what, "%s_blocked", name);
	check(what, !atomic_load(&b.done), "clFinish returned %d before the "
	    "loss", (int)b.err);
	kill(sv[1].pid, sig);
	for (n = 0; n < SV_END_POLLS && !atomic_load(&b.done); n++)
		poll_wait();
	snprintf(what, sizeof what, "%s_returns", name);
	if (!check(what, atomic_load(&b.done), "clFinish on the surviving "
	    "node, behind an event of the lost one, still waits %d s after "
	    "the loss", SV_END_POLLS * POLL_MS / 1000)) {
		kill(sv[0].pid, SIGKILL);
		kill(sv[1].pid, SIGKILL);
		fflush(stdout);
		_exit(0);
	}
	pthread_join(b.t, NULL);
	snprintf(what, sizeof what, "%s_error", name);
	check(what, b.err != CL_SUCCESS, "clFinish succeeded behind an event "
	    "of a lost node");
	ok = sv_fill_check(b.q, prog, m0, 4096, 23, &err);
	snprintf(what, sizeof what, "%s_works_on", name);
	check(what, ok, "work on the surviving node after the loss: %d",
	    (int)err);
out:
	if (kev != NULL)
		clReleaseEvent(kev);
	if (spin != NULL)
		clReleaseKernel(spin);
	if (m0 != NULL)
		clReleaseMemObject(m0);
	if (m1 != NULL)
		clReleaseMemObject(m1);
	if (q1 != NULL)
		clReleaseCommandQueue(q1);
	if (b.q != NULL)
		clReleaseCommandQueue(b.q);
	if (prog != NULL)
		clReleaseProgram(prog);
	if (ctx != NULL)
		clReleaseContext(ctx);
	srv_kill(&sv[1]);
	srv_kill(&sv[0]);
}

/* The second node killed under a cross-node wait. */
static void
t_cross_kill(void)
{
	sv_cross("cross_kill", SIGKILL);
}

/* The second node stopped under a cross-node wait. */
static void
t_cross_stop(void)
{
	sv_cross("cross_stop", SIGSTOP);
}

/*
 * One context over two servers: a buffer filled on the second, which then
 * stops (or is killed); a blocking read of it on the first needs its bytes
 * from there (a migration between the servers): it fails within a bound,
 * and the first node works on.
 */
static void
sv_migrate(const char *name, int sig)
{
	struct srv	 sv[2];
	cl_device_id	 dev[2];
	cl_context	 ctx = NULL;
	cl_program	 prog = NULL;
	cl_command_queue q0 = NULL, q1 = NULL;
	cl_mem		 m = NULL, m0 = NULL;
	cl_uint		*a = NULL;
	cl_int		 err = CL_SUCCESS;
	size_t		 words = 1u << 16;
	char		 what[96];
	int		 ok;

	memset(sv, 0, sizeof sv);
	if (!srv_start(&sv[0], name, "127.0.0.1:0", NULL))
		return;
	if (!srv_start(&sv[1], name, "127.0.0.1:0", NULL))
		goto out;
	if (!sv_env(sv, 2, NULL, sig == SIGSTOP ? SV_TIMEOUT_MS : NULL) ||
	    !sv_setup(dev, 2, &ctx, &prog, 1))
		goto out;
	if ((a = calloc(words, sizeof *a)) == NULL ||
	    (q0 = clCreateCommandQueue(ctx, dev[0], 0, &err)) == NULL ||
	    (q1 = clCreateCommandQueue(ctx, dev[1], 0, &err)) == NULL ||
	    (m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, words * sizeof *a,
	    NULL, &err)) == NULL || (m0 = clCreateBuffer(ctx,
	    CL_MEM_READ_WRITE, words * sizeof *a, NULL, &err)) == NULL) {
		snprintf(what, sizeof what, "%s_setup", name);
		check(what, 0, "set-up: %d", (int)err);
		goto out;
	}
	/* The newest bytes of m are on the second node only. */
	ok = sv_fill_check(q1, prog, m, words, 29, &err);
	snprintf(what, sizeof what, "%s_before", name);
	if (!check(what, ok, "a fill on the second node: %d", (int)err))
		goto out;
	kill(sv[1].pid, sig);
	err = clEnqueueReadBuffer(q0, m, CL_TRUE, 0, words * sizeof *a, a, 0,
	    NULL, NULL);
	snprintf(what, sizeof what, "%s_error", name);
	check(what, err < 0, "a read on the first node of bytes only the "
	    "lost one had returned %d", (int)err);
	ok = sv_fill_check(q0, prog, m0, words, 31, &err);
	snprintf(what, sizeof what, "%s_works_on", name);
	check(what, ok, "work on the surviving node after the loss: %d",
	    (int)err);
out:
	free(a);
	if (m0 != NULL)
		clReleaseMemObject(m0);
	if (m != NULL)
		clReleaseMemObject(m);
	if (q1 != NULL)
		clReleaseCommandQueue(q1);
	if (q0 != NULL)
		clReleaseCommandQueue(q0);
	if (prog != NULL)
		clReleaseProgram(prog);
	if (ctx != NULL)
		clReleaseContext(ctx);
	srv_kill(&sv[1]);
	srv_kill(&sv[0]);
}

/* The buffer's node killed before the migration. */
static void
t_migrate_kill(void)
{
	sv_migrate("migrate_kill", SIGKILL);
}

/* The buffer's node stopped before the migration. */
static void
t_migrate_stop(void)
{
	sv_migrate("migrate_stop", SIGSTOP);
}

static const struct test tests[] = {
	{ "calls_kill",		t_calls_kill,		60 },
	{ "calls_kill_tcp",	t_calls_kill_tcp,	60 },
	{ "calls_stop",		t_calls_stop,		60 },
	{ "calls_stop_tcp",	t_calls_stop_tcp,	60 },
	{ "calls_kill_tls",	t_calls_kill_tls,	60 },
	{ "calls_stop_tls",	t_calls_stop_tls,	60 },
	{ "lonely_kill",	t_lonely_kill,		60 },
	{ "lonely_stop",	t_lonely_stop,		60 },
	{ "build_stop",		t_build_stop,		60 },
	{ "build_kill_tcp",	t_build_kill_tcp,	60 },
	{ "write_stop",		t_write_stop,		60 },
	{ "write_stop_tcp",	t_write_stop_tcp,	60 },
	{ "write_kill",		t_write_kill,		60 },
	{ "write_kill_tcp",	t_write_kill_tcp,	60 },
	{ "held_live",		t_held_live,		60 },
	{ "held_live_tcp",	t_held_live_tcp,	60 },
	{ "read_cut_tcp",	t_read_cut_tcp,		60 },
	{ "read_cut_nb_tcp",	t_read_cut_nb_tcp,	60 },
	{ "nodes",		t_nodes,		90 },
	{ "cross_kill",		t_cross_kill,		90 },
	{ "cross_stop",		t_cross_stop,		90 },
	{ "migrate_kill",	t_migrate_kill,		90 },
	{ "migrate_stop",	t_migrate_stop,		90 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
