/* vcl_session.c - one client connection: framing, dispatch, output, teardown. */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "vcl_bincheck.h"
#include "vcl_dispatch.h"
#include "vcl_enqueue.h"
#include "vcl_hold.h"
#include "vcl_log.h"
#include "vcl_ndrdec.h"
#include "vcl_op_exec.h"
#include "vcl_op_mem.h"
#include "vcl_op_peer.h"
#include "vcl_outq.h"
#include "vcl_peer.h"
#include "vcl_pin.h"
#include "vcl_pool.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_shm.h"
#include "vcl_submit.h"
#include "vcl_transports.h"
#include "vcl_worker.h"

#define VCL_IN_CHUNK		(64u << 10)	/* input buffer for small frames */
#define VCL_OUT_HIGH		(64u << 20)	/* stop reading above this */
#define VCL_BATCH_MAX		4096		/* requests per read callback */
#define VCL_ARENA_SIZE		(16u << 10)	/* decoded requests, see below */
#define VCL_PREAUTH_MAX		(64u << 10)	/* frame size before Hello */
#define VCL_READ_BUDGET		(16u << 20)	/* bulk bytes per read callback */
#define VCL_READ_PASS_NS	20000000u	/* loop time per read callback */
#define VCL_SLOT_LOOK_US	50		/* a write's slot, looked at */
#define VCL_SLOT_LOOK_MAX_US	10000		/* ... at least this often */
#define VCL_DECODE_MIN		(64u << 10)	/* a decode's least budget */

static void	vcl_session_read_cb(evutil_socket_t, short, void *);
static void	vcl_session_write_cb(evutil_socket_t, short, void *);
static void	vcl_session_kick_cb(evutil_socket_t, short, void *);
static void	vcl_session_slot_cb(evutil_socket_t, short, void *);
static int	vcl_session_slot_wait(struct vcl_session *);
static void	vcl_session_flush_out(struct vcl_session *);
static void	vcl_session_handshake(struct vcl_session *);

/*
 * Decoded requests live in the session's arena: protobuf-c allocates a
 * request's pieces (the request, its call, wait lists, kernel arguments)
 * one by one, and a malloc and free each was a good part of the loop's
 * time per enqueue. The arena hands out bump allocations and counts them;
 * when the last is freed it starts again from its base. A request that is
 * held keeps its pieces (the next ones go after them, or to malloc when
 * it is full): nothing is moved or reused while it lives. A decode takes
 * a->budget bytes at most (vcl_session_req_unpack).
 */
static void *
vcl_session_arena_alloc(void *data, size_t n)
{
	struct vcl_arena	*a = data;
	size_t			 sz = (n + 15) & ~(size_t)15;

	if (n > a->budget - a->decoded) {
		a->decoded = a->budget;		/* says why it failed */
		return (NULL);
	}
	a->decoded += n;
	if (sz < n || sz > VCL_ARENA_SIZE - a->used || (a->base == NULL &&
	    (a->base = malloc(VCL_ARENA_SIZE)) == NULL)) {
		a->spills++;
		return (malloc(n));
	}
	a->live++;
	a->used += sz;
	return (a->base + a->used - sz);
}

/* Free a piece: a no-op in the arena but for its count, else free(). */
static void
vcl_session_arena_free(void *data, void *p)
{
	struct vcl_arena	*a = data;
	uint8_t			*b = p;

	if (a->base == NULL || b < a->base || b >= a->base + VCL_ARENA_SIZE) {
		free(p);
		return;
	}
	if (--a->live == 0)
		a->used = 0;
}

/*
 * Decode a request into the session's arena. One that is alone there and
 * wholly inside it is remembered: freeing it is a reset, with no walk.
 *
 * What protobuf-c makes of a message can be many times its size (an
 * argument of six bytes on the wire is a struct and a pointer of about a
 * hundred): a decode may take what the session may still hold, or twice
 * the message and VCL_DECODE_MIN where that is more (so a session at its
 * limit can still release), and fails past it. a->decoded is what it
 * took: a held request is charged that (vcl_hold_submit).
 */
static Vcl__Request *
vcl_session_req_unpack(struct vcl_session *s, size_t len, const uint8_t *msg)
{
	struct vcl_arena	*a = &s->arena;
	Vcl__Request		*req;
	uint64_t		 spills = a->spills;
	uint64_t		 lim = s->srv->limits.session_bytes;
	int			 alone = a->live == 0;

	a->decoded = 0;
	a->budget = s->bytes < lim ? lim - s->bytes : 0;
	if (a->budget < 2 * (uint64_t)len + VCL_DECODE_MIN)
		a->budget = 2 * (uint64_t)len + VCL_DECODE_MIN;

	/* Launches have a decoder of their own; protobuf-c takes the rest. */
	if ((req = vcl_ndrdec_unpack(&a->pa, len, msg)) == NULL)
		req = vcl__request__unpack(&a->pa, len, msg);
	if (req != NULL && alone && a->spills == spills) {
		a->sole = req;
		a->sole_live = a->live;
	}
	return (req);
}

/* Create a session for an accepted, non-blocking socket. */
struct vcl_session *
vcl_session_new(struct vcl_server *srv, int fd, const char *peer)
{
	struct vcl_session	*s;
	Vcl__ToClient		 tc = VCL__TO_CLIENT__INIT;
	Vcl__Greeting		 g = VCL__GREETING__INIT;
	int			 i;

	if ((s = calloc(1, sizeof *s)) == NULL)
		return (NULL);
	if ((s->in.data = malloc(VCL_IN_CHUNK)) == NULL) {
		free(s);
		return (NULL);
	}
	s->in.cap = VCL_IN_CHUNK;
	s->arena.pa.alloc = vcl_session_arena_alloc;
	s->arena.pa.free = vcl_session_arena_free;
	s->arena.pa.allocator_data = &s->arena;
	s->srv = srv;
	s->fd = fd;
	vcl_link_init(&s->link, fd);
	s->refs = 1;
	s->id = ++srv->next_session;
	s->born = s->last_in = s->last_out = vcl_server_now();
	clock_gettime(CLOCK_MONOTONIC, &s->started);
	snprintf(s->peer, sizeof s->peer, "%s", peer);
	TAILQ_INIT(&s->outq);
	TAILQ_INIT(&s->outq_held);
	LIST_INIT(&s->inflight);
	pthread_mutex_init(&s->out_lock, NULL);
	for (i = 0; i < VCL_QSLOTS; i++) {
		atomic_init(&s->qinflight[i], 0);
		LIST_INIT(&s->qcmds[i]);
	}
	atomic_init(&s->ndone, 0);
	atomic_init(&s->deferred_sets, 0);
	s->fast_ok = srv->tls == NULL;
	if (vcl_handle_init(&s->handles, srv->limits.objects + 1024) != 0 ||
	    vcl_handle_init(&s->early, srv->limits.objects + 1024) != 0 ||
	    vcl_hold_init(s) != 0 ||
	    vcl_auth_nonce(s->nonce, sizeof s->nonce) != 0 ||
	    vcl_auth_nonce((uint8_t *)&s->key, sizeof s->key) != 0)
		goto fail;
	/* Under TLS the handshake comes first; the greeting waits for it. */
	if (srv->tls != NULL && vcl_link_tls(&s->link, srv->tls, 1, NULL,
	    s->link.err, sizeof s->link.err) != 0) {
		vcl_log_error("session from %s: %s", peer, s->link.err);
		goto fail;
	}
	s->ev_read = event_new(srv->base, fd, EV_READ | EV_PERSIST,
	    vcl_session_read_cb, s);
	s->ev_write = event_new(srv->base, fd, EV_WRITE | EV_PERSIST,
	    vcl_session_write_cb, s);
	s->ev_kick = evtimer_new(srv->base, vcl_session_kick_cb, s);
	s->ev_slot = evtimer_new(srv->base, vcl_session_slot_cb, s);
	if (s->ev_read == NULL || s->ev_write == NULL || s->ev_kick == NULL ||
	    s->ev_slot == NULL)
		goto fail;
	LIST_INSERT_HEAD(&srv->sessions, s, entry);
	srv->nsessions++;
	srv->npreauth++;
	srv->session_structs++;

	g.version = VCL_PROTOCOL_VERSION;
	g.nonce.data = s->nonce;
	g.nonce.len = sizeof s->nonce;
	g.auth_required = srv->have_token;
	g.node_name = (char *)srv->node_name;
	tc.greeting = &g;
	vcl_session_send(s, &tc, NULL, 0, NULL, NULL);
	event_add(s->ev_read, NULL);
	s->reading = 1;
	/* Logged once authenticated: a flood of connections writes nothing. */
	vcl_log_debug("session %llu from %s", (unsigned long long)s->id, peer);
	return (s);
fail:
	if (s->ev_read != NULL)
		event_free(s->ev_read);
	if (s->ev_write != NULL)
		event_free(s->ev_write);
	if (s->ev_kick != NULL)
		event_free(s->ev_kick);
	if (s->ev_slot != NULL)
		event_free(s->ev_slot);
	vcl_handle_free(&s->handles);
	vcl_handle_free(&s->early);
	vcl_handle_free(&s->pending);
	s->link.fd = -1;		/* the caller closes fd */
	vcl_link_close(&s->link);
	pthread_mutex_destroy(&s->out_lock);
	free(s->in.data);
	free(s);
	return (NULL);
}

/* Take a reference: a callback or job that will come back to the session. */
void
vcl_session_ref(struct vcl_session *s)
{
	s->refs++;
}

/* Drop a reference; the last one frees a closed session. */
void
vcl_session_unref(struct vcl_session *s)
{
	if (--s->refs > 0)
		return;
	s->srv->session_structs--;
	vcl_shm_free(s->shm);
	vcl_pin_use_drop(s->pinuse);
	free(s->arena.base);
	vcl_handle_free(&s->handles);
	vcl_handle_free(&s->early);
	vcl_handle_free(&s->pending);
	pthread_mutex_destroy(&s->out_lock);
	free(s);
}

static void	vcl_session_forget_queue(struct vcl_session *,
		    struct vcl_hobj *);
static void	vcl_session_drain_strand(struct vcl_session *,
		    struct vcl_hobj *);

/*
 * A release waiting for the releaser thread: counted in the server's
 * backlog (release_backlog, release_bytes: an estimate, the bytes its
 * session was charged for it) from when it is queued until it ran.
 */
struct vcl_release {
	struct vcl_server	*srv;
	void			(*fn)(void *);
	void			*obj;
	uint64_t		 bytes;
};

/* Run one queued release on the releaser thread, then uncount it. */
static void
vcl_session_release_run(void *arg)
{
	struct vcl_release	*r = arg;

	r->fn(r->obj);
	atomic_fetch_sub(&r->srv->release_bytes, r->bytes);
	atomic_fetch_sub(&r->srv->release_backlog, 1);
	free(r);
}

/* A program's last reference, off the loop. */
static void
vcl_session_program_go(void *arg)
{
	/* Testing: as a runtime's slow release would hold it. */
	vcl_server_test_latch("VCL_TEST_RELEASE_LATCH");
	clReleaseProgram(arg);
}

/* A kernel's last reference, off the loop. */
static void
vcl_session_kernel_go(void *arg)
{
	clReleaseKernel(arg);
}

/*
 * Drop the server's reference to a runtime object on a worker thread, not
 * on the loop: PoCL's release of a program (its compiled code) took 0.1 to
 * 1 s with many clients at once, and a client leaving drops all of its
 * programs and kernels together, which held the loop for seconds (it_soak:
 * the survivor of a lost server made new clients time out in their
 * handshake). Nothing on the loop uses the object after its handle went;
 * the runtime keeps what in-flight commands hold. One thread of their
 * own (builds and copies do not wait behind them); inline if none. What
 * waits is counted (bytes: an estimate) and bounded by refusing new
 * programs past --max-release-backlog (vcl_session_release_full).
 */
static void
vcl_session_release_off(struct vcl_server *srv, void (*fn)(void *),
    void *obj, uint64_t bytes)
{
	struct vcl_release	*r;

	if (srv == NULL || srv->releasers == NULL ||
	    (r = malloc(sizeof *r)) == NULL) {
		fn(obj);
		return;
	}
	r->srv = srv;
	r->fn = fn;
	r->obj = obj;
	r->bytes = bytes;
	atomic_fetch_add(&srv->release_backlog, 1);
	atomic_fetch_add(&srv->release_bytes, bytes);
	if (vcl_workers_run(srv->releasers, vcl_session_release_run, r) != 0) {
		atomic_fetch_sub(&srv->release_backlog, 1);
		atomic_fetch_sub(&srv->release_bytes, bytes);
		free(r);
		fn(obj);
	}
}

/*
 * Whether the release backlog is over --max-release-backlog: new programs
 * and builds are refused (CL_OUT_OF_RESOURCES) until the releaser thread
 * caught up, so that clients that make programs and leave, again and
 * again, cannot grow what the server holds without bound (each waiting
 * release keeps the runtime's program: its compiled code). Releases
 * themselves are never refused nor run on the loop.
 */
int
vcl_session_release_full(struct vcl_server *srv)
{
	static struct vcl_ratelog	 rl;	/* loop thread only */
	uint64_t			 n;

	n = atomic_load(&srv->release_backlog);
	if (n <= srv->limits.release_backlog)
		return (0);
	srv->release_refused++;
	if (vcl_server_ratelog(&rl, "release backlog"))
		vcl_log_warn("%llu releases wait (%llu bytes), over "
		    "--max-release-backlog %llu: new programs refused",
		    (unsigned long long)n, (unsigned long long)
		    atomic_load(&srv->release_bytes),
		    (unsigned long long)srv->limits.release_backlog);
	return (1);
}

/*
 * Drop a reference to a program off the loop, as a session's release does
 * (a build that ends after its client left holds the last one).
 */
void
vcl_session_program_drop(struct vcl_server *srv, cl_program p)
{
	if (p != NULL)
		vcl_session_release_off(srv, vcl_session_program_go, p, 0);
}

/* Release one object of the session and forget its id. */
void
vcl_session_release(struct vcl_session *s, struct vcl_hobj *o)
{
	struct vcl_hobj	*p;

	switch (o->kind) {
	case VCL_KIND_CONTEXT:
		if (o->mq != NULL) {
			vcl_session_forget_queue(s, o->mq);
			vcl_submit_free(o->mq->submit);
			clReleaseCommandQueue(o->mq->u.queue);
			free(o->mq);
		}
		vcl_pin_close(o->pins);
		if (o->u.ctx != NULL) {
			vcl_pin_ring_forget(o->u.ctx);	/* rings wrapped in it */
			clReleaseContext(o->u.ctx);
		}
		break;
	case VCL_KIND_QUEUE:
		vcl_session_forget_queue(s, o);
		vcl_submit_free(o->submit);
		o->submit = NULL;
		if (o->ring_charged)
			vcl_session_uncharge(s, vcl_submit_ring_bytes());
		o->ring_charged = 0;
		if (o->u.queue != NULL)
			clReleaseCommandQueue(o->u.queue);
		break;
	case VCL_KIND_XFER:
		vcl_peer_xfer_release(s, o);
		break;
	case VCL_KIND_MEM:
		/* A sub-buffer is charged nothing: its parent holds the bytes. */
		vcl_mem_release(s, o->u.mem, o->sub ? 0 : o->bytes);
		/* The buffer it lay in may now go (a closing session skips). */
		if (o->parent != 0 && !s->dead && (p = vcl_handle_held(
		    &s->handles, o->parent, VCL_KIND_MEM)) != NULL &&
		    p->mem_refs > 0) {
			p->mem_refs--;
			vcl_session_settled(s, p);
		}
		break;
	case VCL_KIND_PROGRAM:
		if (o->u.prog != NULL)
			vcl_session_release_off(s->srv,
			    vcl_session_program_go, o->u.prog, o->bytes);
		vcl_session_uncharge(s, o->bytes);	/* source, logs, compile inputs */
		break;
	case VCL_KIND_KERNEL:
		vcl_exec_kernel_drop(s, o);
		if (o->u.kernel != NULL)
			vcl_session_release_off(s->srv,
			    vcl_session_kernel_go, o->u.kernel, 0);
		break;
	case VCL_KIND_EVENT:
		if (o->u.event != NULL)
			clReleaseEvent(o->u.event);
		break;
	case VCL_KIND_SAMPLER:
		if (o->u.sampler != NULL)
			clReleaseSampler(o->u.sampler);
		break;
	case VCL_KIND_DEVICE:
		break;		/* the server keeps its partitions */
	default:
		break;
	}
	if (o->refused)
		s->refused--;
	else
		s->srv->objects--;
}

/* A queue is going: take it off the list of queues to flush. */
static void
vcl_session_forget_queue(struct vcl_session *s, struct vcl_hobj *q)
{
	int	i;

	for (i = 0; q->stranded && i < s->nstrands; i++) {
		if (s->strands[i] == q) {
			vcl_session_drain_strand(s, q);
			s->strands[i] = s->strands[--s->nstrands];
			break;
		}
	}
	for (i = 0; i < s->ndirty; i++) {
		if (s->dirty[i] == q) {
			s->dirty[i] = s->dirty[--s->ndirty];
			return;
		}
	}
}

/* vcl_handle_clear callback: release an object while tearing down. */
static void
vcl_session_release_cb(struct vcl_hobj *o, void *arg)
{
	vcl_session_release(arg, o);
}

/*
 * Add an object to the session's table, counted by the server. Over the
 * object limit the id is still recorded, failed with CL_OUT_OF_RESOURCES,
 * so the client's next use of it reports that (creations are asynchronous);
 * the caller creates nothing for an entry that carries an error. Past a
 * margin above the limit the session is closed.
 */
struct vcl_hobj *
vcl_session_add(struct vcl_session *s, uint64_t id, enum vcl_kind kind)
{
	struct vcl_hobj	*o;
	cl_int		 err;

	if ((o = vcl_handle_add(&s->handles, id, kind, &err)) == NULL) {
		vcl_session_close(s, err == CL_INVALID_VALUE ?
		    "client reused an object id" : "far over the object limit");
		return (NULL);
	}
	if (s->handles.count - s->refused > s->srv->limits.objects) {
		o->error = CL_OUT_OF_RESOURCES;
		o->refused = 1;
		s->refused++;
		return (o);
	}
	s->srv->objects++;
	if (kind == VCL_KIND_PROGRAM && vcl_session_release_full(s->srv))
		o->error = CL_OUT_OF_RESOURCES;	/* the caller makes none */
	return (o);
}

/*
 * Close the session: drop the connection, release every object it owned
 * (whatever the reason it ends), and drop the connection's reference.
 * Completions still in flight find it dead and only clean up.
 */
void
vcl_session_close(struct vcl_session *s, const char *why)
{
	struct vcl_server	*srv = s->srv;
	struct vcl_hobj		*o;
	struct timespec		 t0;
	size_t			 i;
	double			 ms;
	char			 who[64];

	if (s->dead)
		return;
	s->dead = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(who, sizeof who, "session %llu", (unsigned long long)s->id);
	vcl_server_ratelog_flush(&s->warns, who);
	if (why != NULL && (s->authed ||
	    vcl_server_ratelog(&srv->conn_log, "connections")))
		vcl_log_info("session %llu (%s) closed: %s; held %llu "
		    "objects, %llu bytes; served %llu requests in %.3f s",
		    (unsigned long long)s->id, s->peer, why,
		    (unsigned long long)(s->handles.count - s->refused),
		    (unsigned long long)s->bytes, (unsigned long long)s->nreq,
		    vcl_since_ms(&s->started) / 1000);
	if (!s->authed)
		srv->npreauth--;
	event_free(s->ev_read);
	event_free(s->ev_write);
	event_free(s->ev_kick);		/* the rest of a release: dropped */
	event_free(s->ev_slot);
	/* A completing thread may be writing a reply: the link waits. */
	pthread_mutex_lock(&s->out_lock);
	vcl_link_close(&s->link);
	s->out_closed = 1;
	s->out_blocked = 0;
	pthread_mutex_unlock(&s->out_lock);
	s->fd = -1;
	vcl_outq_clear(&s->outq);
	vcl_outq_clear(&s->outq_held);
	s->out_parting = 0;
	s->out_bytes = 0;
	vcl_session_uncharge(s, s->out_charged);
	s->out_charged = 0;
	if (s->bincheck != NULL)	/* its child is killed, not waited */
		vcl_bincheck_cancel(s->bincheck);
	if (s->is_peer)
		vcl_peer_link_lost(s);	/* a push it was carrying fails */
	else
		vcl_peer_session_gone(s);	/* no link names it */
	vcl_session_req_free(s, s->in_req);
	s->in_req = NULL;
	/* Its receives complete (failed) before their memory goes. */
	vcl_tp_close(s->tp_ep);
	s->tp_ep = NULL;
	if (s->in_oob_orphan != NULL)
		vcl_pool_put(s->in_oob_orphan, s->in_oob_orphan_len);
	s->in_oob_orphan = NULL;
	/* A chunked write's staging goes once its chunks are copied. */
	vcl_mem_write_stop(s);
	if (s->in_bulk != NULL && !s->in_bulk_borrowed) {
		vcl_pool_put(s->in_bulk, s->in_bulk_size);
		vcl_session_uncharge(s, s->in_bulk_size);
	}
	if (s->in_xfer != NULL)		/* it waits on; its source fails it */
		s->in_xfer->receiving = NULL;
	s->in_xfer = NULL;
	s->in_bulk = NULL;
	free(s->in.data);
	s->in.data = NULL;
	if (s->in.cap > VCL_IN_CHUNK)
		vcl_session_uncharge(s, s->in.cap - VCL_IN_CHUNK);
	s->in.cap = 0;
	vcl_hold_drop(s);
	vcl_session_quiesce(s);		/* no launch in flight names them */
	/*
	 * Fail every unset user event before releasing anything: releasing
	 * objects while commands wait on one is undefined, and some runtimes
	 * block in the release.
	 */
	for (i = 0; i < s->handles.nslots; i++)
		for (o = s->handles.slots[i]; o != NULL; o = o->next)
			if (o->kind == VCL_KIND_EVENT && o->u.event != NULL &&
			    o->user && !o->user_set) {
				o->user_set = 1;
				clSetUserEventStatus(o->u.event,
				    CL_DEVICE_NOT_AVAILABLE);
			}
	vcl_handle_clear(&s->handles, vcl_session_release_cb, s);
	vcl_handle_clear(&s->early, vcl_session_release_cb, s);
	for (i = 0; i < (size_t)s->nlost; i++)
		free(s->lost[i]);
	s->nlost = 0;
	s->ndirty = 0;
	vcl_cmd_reap(s);	/* commands failed by the teardown */
	/* Releases and a transport's close run on the loop: say when slow. */
	if ((ms = vcl_since_ms(&t0)) >= VCL_SLOW_MS) {
		srv->metrics.slow_events++;
		vcl_log_info("session %llu: its close took %.1f ms",
		    (unsigned long long)s->id, ms);
	}
	LIST_REMOVE(s, entry);
	srv->nsessions--;
	vcl_session_unref(s);
}

/* Close once every queued reply has been written (SIGTERM drain). */
void
vcl_session_drain(struct vcl_session *s)
{
	s->draining = 1;
	if (s->reading) {
		event_del(s->ev_read);
		s->reading = 0;
	}
	vcl_session_flush_out(s);
}

/* Close once every queued reply has been written, logging why. */
void
vcl_session_refuse(struct vcl_session *s, const char *why)
{
	s->close_why = why;
	vcl_session_drain(s);
}

/*
 * The handshake succeeded: the session now counts against --max-sessions.
 * Returns 0, or -1 when that many sessions are authenticated already.
 */
int
vcl_session_authed(struct vcl_session *s)
{
	struct vcl_server	*srv = s->srv;

	if (srv->nsessions - srv->npreauth >= srv->limits.sessions)
		return (-1);
	s->authed = 1;
	srv->npreauth--;
	srv->metrics.sessions_total++;
	return (0);
}

/* A warning caused by a request: a few per interval, then a count. */
void
vcl_session_warn(struct vcl_session *s, const char *fmt, ...)
{
	char	who[64], line[512];
	va_list	ap;

	snprintf(who, sizeof who, "session %llu", (unsigned long long)s->id);
	if (!vcl_server_ratelog(&s->warns, who))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	vcl_log_warn("%s: %s", who, line);
}

/* Charge bytes to the session and the server. Returns 0 or -1 over limit. */
int
vcl_session_charge(struct vcl_session *s, uint64_t n)
{
	/* Only the loop charges: a give-back meanwhile only makes it strict. */
	if (n > s->srv->limits.session_bytes ||
	    s->bytes > s->srv->limits.session_bytes - n)
		return (-1);
	s->bytes += n;
	s->srv->bytes += n;
	return (0);
}

/*
 * Charge bytes the session holds already (queued replies, a build's logs):
 * they count, so what it asks for next fails, but cannot be refused.
 */
void
vcl_session_charge_over(struct vcl_session *s, uint64_t n)
{
	s->bytes += n;
	s->srv->bytes += n;
}

/* Give charged bytes back. */
void
vcl_session_uncharge(struct vcl_session *s, uint64_t n)
{
	s->bytes -= n;
	s->srv->bytes -= n;
}

/* Remember that a queue got commands, so it is flushed after this batch. */
void
vcl_session_mark_dirty(struct vcl_session *s, struct vcl_hobj *q)
{
	if (q->dirty)
		return;
	if (s->ndirty == (int)(sizeof s->dirty / sizeof s->dirty[0])) {
		s->flush_all = 1;
		return;
	}
	q->dirty = 1;
	s->dirty[s->ndirty++] = q;
}

/* Queue q's strand (vcl_submit.c), made at first use; NULL: none. */
struct vcl_submit *
vcl_session_strand(struct vcl_session *s, struct vcl_hobj *q)
{
	if (q->submit == NULL)
		q->submit = vcl_submit_new(s->srv->submitters, q->u.queue);
	return (q->submit);
}

/*
 * Flush a queue on its strand (vcl_submit.c): a runtime may block in
 * clFlush, and the loop serves every session.
 */
void
vcl_session_flush_queue(struct vcl_session *s, struct vcl_hobj *q)
{
	if (vcl_session_strand(s, q) != NULL)
		vcl_submit_flush(q->submit);
	else
		clFlush(q->u.queue);
}

/*
 * Hand launch l to queue q's strand. Returns 0, or -1 when it must be made
 * here: no strand, its ring over the session's --max-session-bytes, or the
 * session's list of strands to drain full.
 */
int
vcl_session_strand_launch(struct vcl_session *s, struct vcl_hobj *q,
    const struct vcl_launch *l)
{
	if (q->submit == NULL)
		return (-1);
	/* The ring of launches is the session's to pay for, once. */
	if (!q->ring_charged) {
		if (vcl_session_charge(s, vcl_submit_ring_bytes()) != 0)
			return (-1);
		if (vcl_submit_ring(q->submit) != 0) {
			vcl_session_uncharge(s, vcl_submit_ring_bytes());
			return (-1);
		}
		q->ring_charged = 1;
	}
	if (!q->stranded) {
		if (s->nstrands == (int)(sizeof s->strands /
		    sizeof s->strands[0]))
			return (-1);
		q->stranded = 1;
		s->strands[s->nstrands++] = q;
	}
	vcl_submit_launch(q->submit, l);
	return (0);
}

/* Drain q's strand; a launch that failed there is the queue's to report. */
static void
vcl_session_drain_strand(struct vcl_session *s, struct vcl_hobj *q)
{
	cl_int	err;

	q->stranded = 0;
	if ((err = vcl_submit_drain(q->submit)) != CL_SUCCESS &&
	    q->deferred == CL_SUCCESS) {
		q->deferred = err;
		atomic_fetch_add(&s->deferred_sets, 1);
	}
}

/*
 * Every launch the session handed to a strand is made when this returns:
 * anything else it asks for comes after them (vcl_submit.c).
 */
void
vcl_session_quiesce(struct vcl_session *s)
{
	for (; s->nstrands > 0; s->nstrands--)
		vcl_session_drain_strand(s, s->strands[s->nstrands - 1]);
}

/*
 * Flush q now, on the loop, and take it off the batch's list; returns 0
 * (doing nothing) when its flushes go on its strand.
 */
int
vcl_session_flush_now(struct vcl_session *s, struct vcl_hobj *q)
{
	if (q->submit != NULL && vcl_submit_offloop(q->submit))
		return (0);
	if (q->dirty) {
		vcl_session_forget_queue(s, q);
		q->dirty = 0;
	}
	vcl_session_flush_queue(s, q);
	/* A flush this slow just moved the queue to its strand. */
	return (q->submit == NULL || !vcl_submit_offloop(q->submit));
}

/* Flush the queues that got commands; never waits on the device. */
void
vcl_session_flush_queues(struct vcl_session *s)
{
	size_t		 i;
	struct vcl_hobj	*o;

	for (; s->ndirty > 0; s->ndirty--) {
		o = s->dirty[s->ndirty - 1];
		o->dirty = 0;
		vcl_session_flush_queue(s, o);
	}
	if (!s->flush_all)
		return;
	s->flush_all = 0;
	for (i = 0; i < s->handles.nslots; i++)
		for (o = s->handles.slots[i]; o != NULL; o = o->next)
			if (o->kind == VCL_KIND_QUEUE && o->u.queue != NULL)
				vcl_session_flush_queue(s, o);
}

/*
 * Queue a message (and bulk bytes sent straight from their memory after it)
 * for the client. done(arg) runs once the bulk is sent or dropped. Small
 * messages coalesce into the tail item so one writev carries many.
 * Returns 0, or -1 when out of memory (the session is closed then).
 */
int
vcl_session_send(struct vcl_session *s, const Vcl__ToClient *m,
    const uint8_t *bulk, uint64_t bulk_len, void (*done)(void *), void *arg)
{
	uint64_t	n;

	if (s->dead) {
		if (done != NULL)
			done(arg);
		return (-1);
	}
	if (s->out_bytes == 0)
		s->last_out = vcl_server_now();	/* the send deadline starts */
	/* A reply's bulk is going out in parts: the frame waits for it. */
	pthread_mutex_lock(&s->out_lock);
	n = vcl_outq_push(s->out_parting ? &s->outq_held : &s->outq,
	    &m->base, bulk, bulk_len, done, NULL, arg);
	pthread_mutex_unlock(&s->out_lock);
	if (n == 0) {
		vcl_session_close(s, "out of memory queueing a reply");
		return (-1);
	}
	s->out_bytes += n;
	s->out_charged += n - bulk_len;	/* the bulk is charged staging */
	vcl_session_charge_over(s, n - bulk_len);
	s->srv->bytes_out += bulk_len;
	if (!s->srv->corked)
		vcl_session_flush_out(s);
	return (0);
}

/*
 * Send a reply whose bulk (total bytes) goes out in parts as they become
 * ready: m with the first part, then (m NULL) each next part, the one
 * that makes up total marked last. Until the last part is queued every
 * other frame of the session waits in outq_held, then follows it: nothing
 * lands inside the bulk. done(arg) runs once the part is sent or dropped.
 * Only one reply at a time may be in parts (see vcl_session_parting).
 */
int
vcl_session_send_part(struct vcl_session *s, const Vcl__ToClient *m,
    uint64_t total, const uint8_t *bulk, uint64_t len, int last,
    void (*done)(void *), void *arg)
{
	uint64_t	n;

	if (s->dead) {
		if (done != NULL)
			done(arg);
		return (-1);
	}
	if (s->out_bytes == 0)
		s->last_out = vcl_server_now();
	pthread_mutex_lock(&s->out_lock);
	if ((n = vcl_outq_push_part(&s->outq, m != NULL ? &m->base : NULL,
	    total, bulk, len, done, NULL, arg)) != 0) {
		s->out_parting = !last;
		if (last)
			TAILQ_CONCAT(&s->outq, &s->outq_held, entry);
	}
	pthread_mutex_unlock(&s->out_lock);
	if (n == 0) {
		vcl_session_close(s, "out of memory queueing a reply");
		return (-1);
	}
	s->out_bytes += n;
	s->out_charged += n - len;
	vcl_session_charge_over(s, n - len);
	s->srv->bytes_out += len;
	if (!s->srv->corked)
		vcl_session_flush_out(s);
	return (0);
}

/*
 * May the reply of a command of queue come now, ahead of the loop's pass
 * over the done queue? Only when it is the one command of its queue in
 * flight and no completion of the session waits in the done queue (see
 * vcl_session_send_now for why that keeps what the client sees in order).
 * A command that ran after events of its wait list, or after a command of
 * its queue that did (waited), ran after commands of other queues: one
 * may be complete with its callback still to come, and its Notify must
 * come first (the client sees an event complete once a command that
 * waited on it is). Such a reply comes now only when no other command of
 * the session is in flight at all.
 */
int
vcl_session_next_up(struct vcl_session *s, uint64_t queue, int waited)
{
	unsigned	n = 0;
	int		i;

	if (atomic_load(&s->qinflight[VCL_QSLOT(queue)]) != 1 ||
	    atomic_load(&s->ndone) != 0)
		return (0);
	for (i = 0; waited && i < VCL_QSLOTS; i++)
		n += atomic_load(&s->qinflight[i]);
	return (!waited || n == 1);
}

/*
 * Write a reply from the thread that saw its command complete (a waiter
 * or a runtime callback), not the loop: one cross-thread wakeup less per
 * clFinish or blocking read. m is packed into f->head (empty).
 * Taken only when that cannot change what the client sees or its order:
 * - plain TCP, client link: an SSL object is not used from two threads,
 *   and the loop reads through it;
 * - under out_lock, which every push to outq and every write to the link
 *   takes, so the loop's frames and this one never interleave bytes;
 * - nothing queued (outq, outq_held empty, no reply going out in parts,
 *   no other fast reply's rest pending): the frames the loop queued
 *   before this completion go first on today's path, so they must here;
 * - the command is the only one of its queue in flight, and no command
 *   of the session waits in the done queue: an earlier command of the
 *   queue whose completion is not yet handled (its callback to come, or
 *   its entry in the done queue) may owe the client a Notify or set the
 *   deferred error, which must come before this reply; one of another
 *   queue already seen complete (a wait list may have named it) is told
 *   first on the loop's path, so it is here. A command leaves these
 *   counts only after its completion queued its frames (under out_lock)
 *   and set any deferred error, so counts of one and zero mean they are
 *   queued or written; one answered here that owes nothing more (no
 *   Notify) leaves them as its reply goes. Queues share counters
 *   (VCL_QSLOT): a collision only sends a reply the loop's way;
 * - f->gen (not UINT64_MAX: a finish) is still the session's deferred_sets:
 *   no queue got a deferred error since the finish was enqueued, which
 *   it would have to report (one it owed then keeps it off this path:
 *   vcl_cmd_watch);
 * - the link is open: close takes out_lock around closing it, and the
 *   command's session reference keeps s until the loop completes it.
 * The loop still completes the command (vcl_cmd_complete), without
 * replying. Returns 0 when the frame went out, whole or in part (f->sent
 * bytes; the loop queues the rest first: vcl_session_send_rest, and
 * writes nothing meanwhile), -1 when nothing was written: the caller
 * takes the loop's path.
 */
int
vcl_session_send_now(struct vcl_session *s, const Vcl__ToClient *m,
    const uint8_t *bulk, uint64_t bulk_len, struct vcl_fast *f)
{
	struct vcl_buf	*head = &f->head;
	atomic_uint	*qin = &s->qinflight[VCL_QSLOT(f->queue)];
	struct iovec	 iov[2];
	uint64_t	 total, done = 0;
	ssize_t		 n;
	int		 cnt, rc = -1;

	if (!s->fast_ok || s->is_peer)
		return (-1);
	if (vcl_buf_pack(head, &m->base, bulk_len) != 0) {
		vcl_buf_free(head);
		return (-1);
	}
	total = head->len + bulk_len;
	pthread_mutex_lock(&s->out_lock);
	if (s->out_closed || s->out_blocked || s->out_parting ||
	    !TAILQ_EMPTY(&s->outq) || !TAILQ_EMPTY(&s->outq_held) ||
	    !vcl_session_next_up(s, f->queue, f->waited) ||
	    (f->gen != UINT64_MAX && atomic_load(&s->deferred_sets) != f->gen))
		goto out;
	/*
	 * Counted before the client can see the reply (and ask again): one
	 * that owes nothing more (no Notify) leaves the in-flight count now.
	 */
	atomic_fetch_add(&s->srv->fast_replies, 1);
	if (!f->owes)
		atomic_fetch_sub(qin, 1);
	/*
	 * The staging's charge goes back before the client can see the
	 * reply (and find it charged); its memory once the loop is done.
	 */
	if (f->stage != NULL)
		vcl_session_uncharge(s, f->stage->size);
	/*
	 * One write: the loop may wait on out_lock meanwhile, so no more
	 * than the socket takes at once. What it does not take is the loop's.
	 */
	cnt = 0;
	iov[cnt].iov_base = head->data;
	iov[cnt++].iov_len = head->len;
	if (bulk_len > 0) {
		iov[cnt].iov_base = (void *)bulk;
		iov[cnt++].iov_len = bulk_len;
	}
	while ((n = vcl_link_writev(&s->link, iov, cnt)) < 0 && errno == EINTR)
		;
	if (n > 0)
		done = (uint64_t)n;	/* else full, or failed: the loop sees it */
	if (done == 0) {
		atomic_fetch_sub(&s->srv->fast_replies, 1);
		if (!f->owes)
			atomic_fetch_add(qin, 1);
		if (f->stage != NULL)
			vcl_session_charge_over(s, f->stage->size);
		goto out;
	}
	if (f->stage != NULL)
		f->stage->uncharged = 1;
	f->uncounted = !f->owes;
	if (done < total)
		s->out_blocked = f->partial = 1;
	f->sent = done;
	rc = 0;
out:
	pthread_mutex_unlock(&s->out_lock);
	if (rc != 0)
		vcl_buf_free(head);
	return (rc);
}

/*
 * On the loop: a reply vcl_session_send_now began is done with; queue
 * what of it is left (head taken, bulk) in front of everything and let
 * the session's output go on. done(arg) runs once the bulk is sent or
 * dropped.
 */
void
vcl_session_send_rest(struct vcl_session *s, struct vcl_buf *head,
    uint64_t sent, const uint8_t *bulk, uint64_t bulk_len,
    void (*done)(void *), void *arg)
{
	uint64_t	n = 0, hl = head->len;
	int		rest;

	if (s->dead) {
		vcl_buf_free(head);
		if (done != NULL)
			done(arg);
		return;
	}
	pthread_mutex_lock(&s->out_lock);
	s->out_blocked = 0;
	if ((rest = sent < hl + bulk_len))
		n = vcl_outq_push_front(&s->outq, head, sent, bulk, bulk_len,
		    done, arg);
	pthread_mutex_unlock(&s->out_lock);
	if (!rest) {
		vcl_buf_free(head);
		if (done != NULL)
			done(arg);
	} else if (n == 0) {
		vcl_session_close(s, "out of memory queueing a reply");
		return;
	} else {
		if (s->out_bytes == 0)
			s->last_out = vcl_server_now();
		s->out_bytes += n;
		s->out_charged += hl;
		vcl_session_charge_over(s, hl);
	}
	if (!s->srv->corked)
		vcl_session_flush_out(s);
}

/* Whether a reply's bulk is going out in parts (another must wait). */
int
vcl_session_parting(struct vcl_session *s)
{
	return (s->out_parting);
}

/* Reply to a synchronous call with a status and an optional message. */
void
vcl_session_reply(struct vcl_session *s, uint64_t seq, cl_int status,
    const char *msg)
{
	Vcl__Reply	r = VCL__REPLY__INIT;

	r.seq = seq;
	r.status = status;
	r.message = (char *)msg;
	vcl_session_reply_msg(s, &r);
}

/* Send a filled-in Reply. */
void
vcl_session_reply_msg(struct vcl_session *s, Vcl__Reply *r)
{
	Vcl__ToClient	tc = VCL__TO_CLIENT__INIT;

	tc.reply = r;
	vcl_session_send(s, &tc, NULL, 0, NULL, NULL);
}

/* Tell the client an event completed, with profiling times if asked. */
void
vcl_session_notify(struct vcl_session *s, uint64_t event_id, cl_int status,
    cl_event ev, int profiling)
{
	Vcl__ToClient	 tc = VCL__TO_CLIENT__INIT;
	Vcl__Notify	 n = VCL__NOTIFY__INIT, *np = &n;
	cl_ulong	 t[4];
	static const cl_profiling_info p[4] = {
		CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
		CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END
	};
	int		 i;

	n.event = event_id;
	n.status = status;
	if (profiling && ev != NULL && status == CL_COMPLETE) {
		for (i = 0; i < 4; i++)
			if (clGetEventProfilingInfo(ev, p[i], sizeof t[i],
			    &t[i], NULL) != CL_SUCCESS)
				break;
		if (i == 4) {
			n.has_queued = n.has_submit = 1;
			n.has_start = n.has_end = 1;
			n.queued = t[0];
			n.submit = t[1];
			n.start = t[2];
			n.end = t[3];
		}
	}
	tc.n_notify = 1;
	tc.notify = &np;
	s->srv->notifies++;
	vcl_session_send(s, &tc, NULL, 0, NULL, NULL);
}

/*
 * May the session's input be read: its replies under the output bound,
 * room to hold more, and nothing a user event released left to run (no
 * request of it runs before those).
 */
static int
vcl_session_may_read(const struct vcl_session *s)
{
	return (s->out_bytes < VCL_OUT_HIGH && s->nheld < VCL_HOLD_MAX &&
	    !vcl_hold_releasing(s) && !s->in_wc.waiting);
}

/* Start or stop watching the socket for input (flow control). */
static void
vcl_session_set_reading(struct vcl_session *s, int on)
{
	if (s->paused)
		on = 0;
	if (s->dead || s->draining || s->reading == on)
		return;
	s->reading = on;
	if (!on) {
		event_del(s->ev_read);
		return;
	}
	event_add(s->ev_read, NULL);
	if (s->in.end > s->in.start || vcl_link_pending(&s->link) > 0)
		event_active(s->ev_read, EV_READ, 0);	/* frames already in */
}

/* Write as much queued output as the socket takes, without blocking. */
static void
vcl_session_flush_out(struct vcl_session *s)
{
	uint64_t	heads;
	ssize_t		n;
	int		empty, err;

	if (s->dead || s->link.handshaking)
		return;
	pthread_mutex_lock(&s->out_lock);
	/* A reply's rest is on its way (vcl_session_send_rest): it goes first. */
	if (s->out_blocked) {
		pthread_mutex_unlock(&s->out_lock);
		return;
	}
	n = vcl_outq_write(&s->outq, &s->link, VCL_OUTQ_WRITE_MAX, &empty,
	    &heads);
	err = errno;
	pthread_mutex_unlock(&s->out_lock);
	if (n < 0) {
		vcl_session_close(s, strerror(err));
		return;
	}
	s->out_bytes -= (uint64_t)n;
	if (n > 0 || empty)
		s->last_out = vcl_server_now();
	if (n > 0)
		s->out_ns = vcl_server_ns();
	s->out_charged -= heads;
	vcl_session_uncharge(s, heads);
	if (empty) {
		event_del(s->ev_write);
		/* Draining: close once nothing more is owed to the client. */
		if (s->draining && LIST_EMPTY(&s->inflight) && s->jobs == 0 &&
		    !vcl_hold_releasing(s)) {
			vcl_session_close(s, s->close_why != NULL ?
			    s->close_why : "server stopping");
			return;
		}
	} else
		event_add(s->ev_write, NULL);
	vcl_session_set_reading(s, vcl_session_may_read(s));
}

/*
 * A sign of life for a client that asked for one (Hello.keepalive_ms),
 * run every tick: while the session owes its client something (a reply,
 * a command's notification, a job's end, a request held on an event) or
 * does not read its input (a job holds it back, flow control), and has
 * sent nothing for keepalive_ms, an empty ToClient with keepalive set.
 * The client's own ping is read in order with its other requests, so it
 * goes unanswered while input waits; this comes from the loop itself, so
 * a stopped or hung server sends none.
 */
void
vcl_session_keepalive(struct vcl_session *s)
{
	Vcl__ToClient	tc = VCL__TO_CLIENT__INIT;
	uint64_t	now;

	if (s->keepalive_ms == 0 || s->dead || !s->authed ||
	    s->out_bytes > 0 || s->out_parting)
		return;		/* what is queued will show it */
	if (s->reading && !s->paused && s->jobs == 0 && s->nheld == 0 &&
	    LIST_EMPTY(&s->inflight))
		return;		/* a ping would be answered */
	now = vcl_server_ns();
	if (now - s->out_ns < (uint64_t)s->keepalive_ms * 1000000)
		return;
	tc.has_keepalive = 1;
	tc.keepalive = 1;
	if (vcl_session_send(s, &tc, NULL, 0, NULL, NULL) == 0)
		s->out_ns = now;
}

/*
 * Stop taking the session's input until vcl_session_resume: a job off the
 * loop must finish before the session's next request may run (that
 * request may use what the job makes). Other sessions carry on.
 */
void
vcl_session_pause(struct vcl_session *s)
{
	s->paused++;
	vcl_session_set_reading(s, 0);
}

/* A job that paused the session's input is done. */
void
vcl_session_resume(struct vcl_session *s)
{
	if (--s->paused > 0)
		return;
	vcl_session_set_reading(s, vcl_session_may_read(s));
}

/* The socket can take more output. */
static void
vcl_session_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_session	*s = arg;

	if (s->link.handshaking)
		vcl_session_handshake(s);
	else
		vcl_session_flush_out(s);
}

/*
 * One step of the TLS handshake, run by whichever socket event it waits
 * for; once done, the greeting queued at accept goes out. The server's
 * handshake deadline covers this too.
 */
static void
vcl_session_handshake(struct vcl_session *s)
{
	int	rc;

	if ((rc = vcl_link_handshake(&s->link)) < 0) {
		vcl_log_warn("session %llu from %s: TLS handshake failed (a "
		    "client without TLS, or a certificate refused): %s",
		    (unsigned long long)s->id, s->peer, s->link.err);
		vcl_session_close(s, "TLS handshake failed");
		return;
	}
	if (rc == 1) {
		if (s->link.want == VCL_LINK_WANT_WRITE)
			event_add(s->ev_write, NULL);
		else
			event_del(s->ev_write);
		return;
	}
	vcl_log_info("session %llu: %s", (unsigned long long)s->id,
	    vcl_link_version(&s->link));
	vcl_session_flush_out(s);
	if (!s->dead && vcl_link_pending(&s->link) > 0)
		event_active(s->ev_read, EV_READ, 0);
}

/*
 * Run one request through the dispatch table; frees its bulk, and the
 * request itself when free_req is set.
 */
void
vcl_session_run(struct vcl_session *s, Vcl__Request *req,
    struct vcl_bulk *bulk, int free_req)
{
	const struct vcl_op	*op = vcl_dispatch_lookup(req->call_case);

	struct timespec		 t0;
	double			 ms;

	vcl_log_debug("session %llu: %s seq %llu", (unsigned long long)s->id,
	    op->name, (unsigned long long)req->seq);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s->nreq++;
	if (!(op->flags & VCL_OP_LAUNCH)) {
		s->launch_run = 0;
		if (s->nstrands > 0)
			vcl_session_quiesce(s);
	}
	op->fn(s, req, bulk);
	/* The loop serves every session: say when a call held it up. */
	ms = vcl_since_ms(&t0);
	vcl_metrics_request(&s->srv->metrics, req->call_case, ms);
	if (ms >= VCL_SLOW_MS) {
		s->srv->metrics.slow_events++;
		vcl_log_info("session %llu: %s seq %llu took %.1f ms",
		    (unsigned long long)s->id, op->name,
		    (unsigned long long)req->seq, ms);
	}
	if (bulk->data != NULL) {
		vcl_pool_put(bulk->data, bulk->len);
		vcl_session_uncharge(s, bulk->len);
	}
	if (free_req)
		vcl_session_req_free(s, req);
}

/* Free a request decoded by vcl_session_req_unpack. */
void
vcl_session_req_free(struct vcl_session *s, Vcl__Request *req)
{
	struct vcl_arena	*a = &s->arena;

	if (req == NULL)
		return;
	if (req != a->sole) {
		protobuf_c_message_free_unpacked(&req->base, &a->pa);
		return;
	}
	a->sole = NULL;
	a->live -= a->sole_live;
	if (a->live == 0)
		a->used = 0;
}

/* Does anything here still need an object the client let go of? */
static int
vcl_session_needed(const struct vcl_hobj *o)
{
	/* A kernel argument names it, or a sub-buffer or image lies in it. */
	if (o->kind == VCL_KIND_MEM)
		return (o->karg_refs > 0 || o->mem_refs > 0);
	return (o->kind == VCL_KIND_EVENT && (o->held_refs > 0 ||
	    (o->proxy && !o->user_set)));
}

/*
 * The client released o: free it now, or once nothing here needs it (a
 * held request waits on the event, or a peer has yet to complete a proxy).
 */
void
vcl_session_let_go(struct vcl_session *s, struct vcl_hobj *o)
{
	if (s->nxfer > 0)
		vcl_peer_let_go(s, o);	/* transfers into it end */
	if (!o->released)	/* held before: still theirs (vcl_hold.c) */
		o->released_at = s->held_order;
	o->released = 1;
	vcl_session_settled(s, o);
}

/* What needed o is done: free it if the client let go of it. */
void
vcl_session_settled(struct vcl_session *s, struct vcl_hobj *o)
{
	if (!o->released || o->release_held || vcl_session_needed(o))
		return;
	vcl_session_release(s, o);
	vcl_handle_del(&s->handles, o);
}

/* A complete request: run it, or hold it (vcl_hold.c). */
static void
vcl_session_dispatch(struct vcl_session *s)
{
	Vcl__Request		*req = s->in_req;
	struct vcl_bulk		 bulk;
	uint64_t		 order;

	bulk.borrowed = s->in_bulk_borrowed;
	bulk.placed = s->in_oob_placed;
	s->in_oob_placed = 0;
	bulk.data = bulk.borrowed ? NULL : s->in_bulk;
	s->in_xfer = NULL;
	bulk.len = s->in_frame.bulk_len;
	bulk.err = s->in_bulk_err;
	s->in_req = NULL;
	s->in_bulk = NULL;
	s->in_bulk_borrowed = 0;
	s->in_since = 0;	/* the next frame's clock starts at its bytes */
	/*
	 * A write whose chunks went to its queue as its bytes came runs now,
	 * right behind them: nothing of its queue could be held since.
	 */
	if (s->in_wc.req == req && (s->in_wc.done > 0 ||
	    s->in_wc.err != CL_SUCCESS || s->in_wc.ring != 0)) {
		vcl_session_run(s, req, &bulk, 1);
		vcl_mem_write_stop(s);	/* taken, unless it never ran */
		return;
	}
	if (s->in_wc.req != NULL)
		vcl_mem_write_stop(s);
	order = s->held_order;
	vcl_hold_submit(s, req, &bulk);
	/* Each request held takes the next order number. */
	s->srv->metrics.held_total += s->held_order - order;
}

/*
 * May this request's bulk come out of band? Only on a link whose transport
 * is not the control stream, for a call that takes bulk, with none in the
 * frame itself, within the frame limit. 0: yes.
 */
static int
vcl_session_oob_ok(struct vcl_session *s, const Vcl__Request *req,
    const struct vcl_op *op)
{
	if (s->tp_ep == NULL || vcl_tp_inband(s->tp_ep) ||
	    !(op->flags & VCL_OP_BULK) || !req->has_bulk_xfer ||
	    !req->has_bulk_size || s->in_frame.bulk_len != 0 ||
	    req->bulk_size > s->srv->limits.frame.max_bulk)
		return (-1);
	return (0);
}

/* The out-of-band bulk landed, failed or was cancelled: on the loop. */
static void
vcl_session_oob_cb(void *arg, int err)
{
	struct vcl_session	*s = arg;

	if (s->dead)
		return;
	s->in_oob_done = 1;
	s->in_oob_err = err;
	event_active(s->ev_read, EV_READ, 0);
}

/*
 * Post the receive of the request's out-of-band bulk into the staging just
 * chosen (none: the transport drops the bytes) and hold the session's
 * input until it lands, as an inband bulk does. Returns 0, or -1 when the
 * session was closed.
 */
static int
vcl_session_oob_post(struct vcl_session *s)
{
	struct vcl_tp_dest	d;
	int			rc;

	memset(&d, 0, sizeof d);
	d.base = s->in_bulk;
	d.len = s->in_frame.bulk_len;
	d.mem = VCL_TP_MEM_HOST;
	/*
	 * Placed in our shared staging, into a transfer that waits: each
	 * chunk goes to its buffer as it lands (vcl_peer_chunk_in), with no
	 * copy into the transfer's staging.
	 */
	s->in_oob_placed = 0;
	s->in_oob_pull = 0;
	if ((s->in_req->bulk_xfer & VCL_TP_XID_PLACE) && s->in_xfer != NULL &&
	    s->in_bulk_borrowed && (s->tp_ep->tp->ops->caps & VCL_TP_PLACE)) {
		d.base = NULL;
		d.chunk = vcl_peer_chunk_in;
		d.chunk_arg = s;
		s->in_oob_placed = 1;
		/* Or read whole from the source's buffer (direct mode). */
		if ((s->in_oob_pull = vcl_peer_pullable(s)))
			d.pull = vcl_peer_pull_in;
		vcl_log_debug("placed push of %llu bytes: %s",
		    (unsigned long long)d.len, s->in_oob_pull ? "direct mode "
		    "asked" : "ring");
	}
	s->in_state = VCL_IN_OOB;
	s->in_oob_xid = s->in_req->bulk_xfer;
	s->in_oob_done = 0;
	s->in_oob_err = VCL_TP_OK;
	if ((rc = vcl_tp_recv(s->tp_ep, s->in_oob_xid, &d, vcl_session_oob_cb,
	    s)) != VCL_TP_OK) {
		vcl_session_warn(s, "out-of-band bulk: %s", s->tp_ep->err);
		vcl_session_close(s, vcl_tp_strerror(rc));
		return (-1);
	}
	vcl_session_pause(s);
	vcl_transports_kick(s->srv, s->tp_ep->tp);
	return (0);
}

/* The out-of-band bulk is done: run its request, take input again. */
static void
vcl_session_oob_end(struct vcl_session *s)
{
	s->in_state = VCL_IN_HDR;
	s->in_oob_done = 0;
	if (s->in_oob_orphan != NULL)
		vcl_pool_put(s->in_oob_orphan, s->in_oob_orphan_len);
	s->in_oob_orphan = NULL;
	if (s->in_oob_err != VCL_TP_OK && s->in_oob_err != VCL_TP_ECANCELED &&
	    s->in_bulk_err == CL_SUCCESS) {
		vcl_session_warn(s, "out-of-band bulk %llu: %s",
		    (unsigned long long)s->in_oob_xid,
		    vcl_tp_strerror(s->in_oob_err));
		s->in_bulk_err = s->in_oob_err == VCL_TP_ETOOBIG ?
		    CL_INVALID_VALUE : CL_DEVICE_NOT_AVAILABLE;
	}
	vcl_session_resume(s);
	vcl_session_dispatch(s);
}

/*
 * A frame's message is in: decode it, check it against the dispatch table
 * and the handshake state, and prepare to take its bulk. Returns 0, or -1
 * when the session was closed.
 */
static int
vcl_session_begin(struct vcl_session *s, const uint8_t *msg)
{
	const struct vcl_op	*op;
	Vcl__Request		*req;
	struct vcl_hobj		*ctx = NULL;
	uint64_t		 blen = s->in_frame.bulk_len;
	int			 oob = 0;

	req = vcl_session_req_unpack(s, s->in_frame.msg_len, msg);
	if (req == NULL) {
		vcl_session_close(s, s->arena.decoded == s->arena.budget ?
		    "request decodes over the session's memory limit" :
		    "malformed request");
		return (-1);
	}
	op = vcl_dispatch_lookup(req->call_case);
	if (op == NULL || (blen > 0 && !(op->flags & VCL_OP_BULK)) ||
	    (!s->authed && !(op->flags & VCL_OP_PREAUTH)) ||
	    (s->authed && (op->flags & VCL_OP_PREAUTH)) ||
	    (s->authed && !(op->flags & VCL_OP_LINK) &&
	    !s->is_peer != !(op->flags & VCL_OP_PEER))) {
		vcl_session_req_free(s, req);
		vcl_session_close(s, op == NULL ? "unknown call" :
		    "call not allowed here");
		return (-1);
	}
	/* Out of band: the bytes come on the link's transport. */
	if ((req->has_bulk_xfer || req->has_bulk_size) && req->bulk_size > 0) {
		if (vcl_session_oob_ok(s, req, op) != 0) {
			vcl_session_req_free(s, req);
			vcl_session_close(s, "out-of-band bulk refused");
			return (-1);
		}
		blen = s->in_frame.bulk_len = req->bulk_size;
		oob = 1;
	}
	s->in_req = req;
	s->in_bulk = NULL;
	s->in_bulk_got = 0;
	s->in_bulk_err = CL_SUCCESS;
	if (blen == 0)
		return (0);
	s->in_state = VCL_IN_BULK;
	s->srv->bytes_in += blen;
	/* A peer's push lands straight in the transfer waiting for it. */
	if (req->call_case == VCL__REQUEST__CALL_PEER_PUSH) {
		struct vcl_hobj	*x;

		if ((x = vcl_op_peer_push_dst(s, req, blen)) != NULL) {
			s->in_bulk = x->data;
			s->in_bulk_borrowed = 1;
			s->in_xfer = x;
			return (oob ? vcl_session_oob_post(s) : 0);
		}
	}
	/* A write's bytes go to a device: pinned staging if there is some. */
	if (req->call_case == VCL__REQUEST__CALL_WRITE_BUFFER &&
	    req->write_buffer->q != NULL)
		ctx = vcl_queue_context(s, vcl_handle_get(&s->handles,
		    req->write_buffer->q->queue, VCL_KIND_QUEUE));
	/* Copied as it comes, if it may: through slots, if there are. */
	if (!oob) {
		vcl_mem_write_begin(s, req);
		if (s->in_wc.ring != 0)
			blen = s->in_wc.ring;
	}
	s->in_bulk_size = blen;
	s->in_bulk = vcl_stage_alloc(s, ctx, blen,
	    CL_MEM_OBJECT_ALLOCATION_FAILURE, &s->in_bulk_err);
	if (s->in_bulk == NULL)
		vcl_mem_write_stop(s);	/* its bytes are dropped */
	return (oob ? vcl_session_oob_post(s) : 0);
}

/* After a large frame, give the input buffer's memory back. */
static void
vcl_session_shrink_input(struct vcl_session *s)
{
	uint8_t	*p;

	if (s->dead || s->in.cap <= VCL_IN_CHUNK || s->in.end != 0)
		return;
	if ((p = realloc(s->in.data, VCL_IN_CHUNK)) != NULL) {
		vcl_session_uncharge(s, s->in.cap - VCL_IN_CHUNK);
		s->in.data = p;
		s->in.cap = VCL_IN_CHUNK;
	}
}

/*
 * Read and process what the socket holds. Small frames are parsed out of a
 * 64 KiB buffer (one read() serves many requests); bulk bytes go straight
 * into their staging memory. Returns 0 to go on, 1 when the socket is
 * drained, 2 when this callback's byte budget is spent (the rest comes in
 * the next one), -1 when the session was closed.
 */
static int
vcl_session_read(struct vcl_session *s, int *done, uint64_t *budget)
{
	typeof(s->in)		*ib = &s->in;
	struct vcl_frame_limits	*lim = &s->srv->limits.frame;
	const char		*why;
	uint8_t			*dst;
	uint64_t		 left, room;
	size_t			 avail, need, n;
	ssize_t			 r;

	avail = ib->end - ib->start;
	if (s->in_state == VCL_IN_BULK) {
		left = s->in_frame.bulk_len - s->in_bulk_got;
		/* What came with the frame's head first. */
		while (avail > 0 && left > 0) {
			if (vcl_mem_write_room(s, &dst, &room) != 0)
				return (vcl_session_slot_wait(s));
			n = avail < room ? avail : (size_t)room;
			if (dst != NULL)
				memcpy(dst, ib->data + ib->start, n);
			ib->start += n;
			avail -= n;
			s->in_bulk_got += n;
			left -= n;
			if (s->in_wc.req != NULL)
				vcl_mem_write_feed(s);
		}
		while (left > 0) {
			/* A large bulk yields the loop to other sessions. */
			if (*budget == 0)
				return (2);
			/* A slot of a write still copied out: wait for it. */
			if (vcl_mem_write_room(s, &dst, &room) != 0)
				return (vcl_session_slot_wait(s));
			/* Straight into staging; a dropped bulk reuses ib. */
			if (dst != NULL)
				r = vcl_link_read(&s->link, dst, room >
				    SSIZE_MAX ? SSIZE_MAX : room);
			else
				r = vcl_link_read(&s->link, ib->data,
				    left < ib->cap ? left : ib->cap);
			if (r == 0) {
				vcl_session_close(s, "client went away");
				return (-1);
			}
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return (1);
			if (r < 0) {
				vcl_session_close(s, strerror(errno));
				return (-1);
			}
			s->in_bulk_got += (uint64_t)r;
			left -= (uint64_t)r;
			*budget -= *budget < (uint64_t)r ? *budget : (uint64_t)r;
			if (s->in_wc.req != NULL)
				vcl_mem_write_feed(s);
		}
		if (ib->start == ib->end)
			ib->start = ib->end = 0;
		s->in_state = VCL_IN_HDR;
		vcl_session_dispatch(s);
		(*done)++;
		return (s->dead ? -1 : 0);
	}
	if (avail >= VCL_FRAME_HDR_LEN) {
		if (vcl_frame_decode(ib->data + ib->start, lim, &s->in_frame,
		    &why) != 0) {
			vcl_session_close(s, why);
			return (-1);
		}
		/* Nobody may make us allocate before proving the token. */
		if (!s->authed && (s->in_frame.msg_len > VCL_PREAUTH_MAX ||
		    s->in_frame.bulk_len > 0)) {
			vcl_session_close(s, "oversized frame before handshake");
			return (-1);
		}
		need = VCL_FRAME_HDR_LEN + s->in_frame.msg_len;
		if (avail >= need) {
			ib->start += need;
			if (vcl_session_begin(s, ib->data + ib->start -
			    s->in_frame.msg_len) != 0)
				return (-1);
			if (s->in_state == VCL_IN_HDR) {
				vcl_session_dispatch(s);
				(*done)++;
			}
			if (ib->start == ib->end) {
				ib->start = ib->end = 0;
				vcl_session_shrink_input(s);
			}
			return (s->dead ? -1 : 0);
		}
	} else
		need = VCL_FRAME_HDR_LEN;

	/* Need more bytes: make room for the whole frame head, then read. */
	if (ib->start > 0) {
		memmove(ib->data, ib->data + ib->start, avail);
		ib->start = 0;
		ib->end = avail;
	}
	/*
	 * A frame larger than the buffer: grow it as its bytes come (twice
	 * as large each time, never past the frame), charged to the session,
	 * so a header that promises 64 MiB costs nothing until they arrive.
	 */
	if (need > ib->cap && ib->end == ib->cap) {
		uint8_t	*p;
		size_t	 cap = ib->cap * 2 < need ? ib->cap * 2 : need;

		if (vcl_session_charge(s, cap - ib->cap) != 0) {
			vcl_session_close(s, "frame over the session's bytes");
			return (-1);
		}
		if ((p = realloc(ib->data, cap)) == NULL) {
			vcl_session_uncharge(s, cap - ib->cap);
			vcl_session_close(s, "out of memory for a frame");
			return (-1);
		}
		ib->data = p;
		ib->cap = cap;
	}
	r = vcl_link_read(&s->link, ib->data + ib->end, ib->cap - ib->end);
	if (r == 0) {
		vcl_session_close(s, "client went away");
		return (-1);
	}
	if (r < 0 && errno == EINTR)
		return (0);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return (1);
	if (r < 0) {
		vcl_session_close(s, strerror(errno));
		return (-1);
	}
	ib->end += (size_t)r;
	return (0);
}

/*
 * The socket has input. Process a bounded batch, then flush the queues
 * that got commands and write the replies the batch produced in one go.
 */
static void
vcl_session_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_session	*s = arg;
	uint64_t		 budget = VCL_READ_BUDGET, t0;
	int			 rc = 0, done = 0;

	if (s->link.handshaking) {
		vcl_session_handshake(s);
		return;
	}
	/* Out of band: nothing to read until the bulk's receive is done. */
	if (s->in_state == VCL_IN_OOB && !s->in_oob_done)
		return;
	vcl_session_ref(s);
	s->last_in = vcl_server_now();
	s->srv->corked = 1;
	if (s->in_state == VCL_IN_OOB) {
		vcl_session_oob_end(s);
		done++;
	}
	/*
	 * The batch stops once the session's replies pass the output bound,
	 * as its input does between batches (vcl_session_flush_out): one
	 * that reads none could otherwise queue a large reply (a program's
	 * source, binaries, a build log) per request of the batch, thousands
	 * of copies from a few KiB of input, charged past its limit.
	 */
	/*
	 * And once it has held the loop VCL_READ_PASS_NS: requests are not
	 * all cheap (a wait list of 65536 events costs the runtime 35 ms),
	 * and 4096 of them in one pass held every other session minutes.
	 * The pass's own clock, not the time vcl_session_run measures: a
	 * request that is held costs the loop too (its wait list checked),
	 * and never runs there.
	 */
	t0 = vcl_server_ns();
	while (!s->dead && s->reading && done < VCL_BATCH_MAX &&
	    vcl_session_may_read(s) &&
	    (rc = vcl_session_read(s, &done, &budget)) == 0)
		if (vcl_server_ns() - t0 >= VCL_READ_PASS_NS) {
			rc = 2;		/* the rest in the next callback */
			break;
		}
	s->srv->corked = 0;
	/* A frame is under way: its deadline runs from its first bytes. */
	if (!s->dead && s->in_since == 0 && (s->in_state != VCL_IN_HDR ||
	    s->in.end > s->in.start))
		s->in_since = s->last_in;
	/*
	 * A peer's push or event may have released another session's held
	 * requests: flush every session's queues and replies, not just ours.
	 */
	vcl_server_flush_all(s->srv);
	/* Then completions pushed without a wakeup (they free staging). */
	vcl_server_done_run(s->srv);
	/* Input already in hand (ours, or decrypted by TLS) fires no event. */
	if (!s->dead && s->reading && ((rc == 0 && (s->in.end > s->in.start ||
	    vcl_link_pending(&s->link) > 0)) || rc == 2))
		event_active(s->ev_read, EV_READ, 0);
	vcl_server_spin_arm(s->srv);
	vcl_session_unref(s);
}

/*
 * Held requests a user event released: a turn of them now (here, not
 * where the event was set, which may be in the middle of walking the
 * handle table), unless one is scheduled already; what is left runs
 * from ev_kick, once the loop has looked for input again and run what
 * else is ready (other sessions' input and completions). A timer of no
 * time, not an event made active: libevent runs those again in the same
 * pass, so up to VCL_SERVER_DISPATCH_MAX turns in a row, and one request
 * can cost the runtime a second (a sanitizer build, a wait list of 65536
 * events). The session's input waits meanwhile (vcl_session_may_read).
 */
static void
vcl_session_kick(struct vcl_session *s)
{
	static const struct timeval	zero = { 0, 0 };

	if (s->want_kick) {
		s->want_kick = 0;
		vcl_hold_wake(s);
	}
	if (s->dead || s->kick_armed || !vcl_hold_releasing(s))
		return;
	/* A user event set by this turn: its release in the next. */
	if ((vcl_hold_turn(s) || s->want_kick) && !s->dead) {
		s->kick_armed = 1;
		evtimer_add(s->ev_kick, &zero);
	}
}

/*
 * Has the client hung up? Seen on its socket though bytes it sent are
 * still unread there: for a session whose input waits (a write's slot, a
 * release in turns), which would otherwise run all it still holds for a
 * client that is gone before reading on to the end of its stream. A
 * client that shuts down its sending side is gone too (protocol.md).
 */
static int
vcl_session_hung_up(const struct vcl_session *s)
{
	struct pollfd	pfd;

	pfd.fd = s->fd;
	pfd.events = POLLRDHUP;
	pfd.revents = 0;
	return (poll(&pfd, 1, 0) > 0 &&
	    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0);
}

/*
 * A chunked write's next bytes go to a slot whose copy to the device is
 * not done, and they could not go elsewhere (vcl_mem_write_room: the
 * session is at its bytes limit): its input waits. ev_slot looks again
 * after VCL_SLOT_LOOK_US, twice as long each time up to
 * VCL_SLOT_LOOK_MAX_US (a slot whose copy waits behind a long kernel),
 * rather than a callback from the runtime: most waits are a slot's copy,
 * shorter than its bytes took on the socket. Returns what
 * vcl_session_read does when the socket is drained.
 */
static int
vcl_session_slot_wait(struct vcl_session *s)
{
	struct timeval	look = { 0, VCL_SLOT_LOOK_US };

	s->in_wc.waiting = 1;
	s->in_wc.look_us = VCL_SLOT_LOOK_US;
	vcl_session_set_reading(s, 0);
	evtimer_add(s->ev_slot, &look);
	return (1);
}

/* ev_slot: read on once the slot is free, or close for a client gone. */
static void
vcl_session_slot_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_session	*s = arg;
	struct timeval		 look;
	uint8_t			*dst;
	uint64_t		 room;

	if (s->dead || !s->in_wc.waiting)
		return;
	vcl_session_ref(s);
	if (vcl_session_hung_up(s))
		vcl_session_close(s, "client went away");
	else if (vcl_mem_write_room(s, &dst, &room) != 0) {
		if (s->in_wc.look_us < VCL_SLOT_LOOK_MAX_US)
			s->in_wc.look_us *= 2;
		look.tv_sec = 0;
		look.tv_usec = s->in_wc.look_us;
		evtimer_add(s->ev_slot, &look);
	} else {
		s->in_wc.waiting = 0;
		vcl_session_set_reading(s, vcl_session_may_read(s));
	}
	vcl_session_unref(s);
}

/*
 * The next turn of a release (vcl_session_kick), then the replies; none
 * for a client gone meanwhile: what is left of the release is dropped.
 */
static void
vcl_session_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_session	*s = arg;

	s->kick_armed = 0;
	vcl_session_ref(s);
	if (vcl_session_hung_up(s)) {
		vcl_session_close(s, "client went away");
		vcl_session_unref(s);
		return;
	}
	s->srv->corked = 1;
	vcl_session_kick(s);
	s->srv->corked = 0;
	/* What it ran may have released another session's requests. */
	vcl_server_flush_all(s->srv);
	vcl_session_unref(s);
}

/*
 * After a batch: run held requests a user event released, flush the
 * queues that got commands, write the replies.
 */
void
vcl_session_flush(struct vcl_session *s)
{
	if (s->dead)
		return;
	vcl_session_kick(s);
	if (s->dead)
		return;
	vcl_session_flush_queues(s);
	vcl_session_flush_out(s);
}

/*
 * The device a wire index names for this session: a root device, or with
 * VCL_SUBDEVICE_BIT one of the session's sub-devices. *root gets the root
 * device's index (for per-device tables). NULL when it names none.
 */
cl_device_id
vcl_session_device(struct vcl_session *s, uint32_t idx, uint32_t *root)
{
	struct vcl_hobj	*o;

	if (idx < s->srv->be.ndevices) {
		*root = idx;
		return (s->srv->be.devices[idx]);
	}
	if (!(idx & VCL_SUBDEVICE_BIT) || (o = vcl_handle_get(&s->handles,
	    idx & ~VCL_SUBDEVICE_BIT, VCL_KIND_DEVICE)) == NULL ||
	    o->error != CL_SUCCESS || o->u.device == NULL)
		return (NULL);
	*root = o->device;
	return (o->u.device);
}

/*
 * The wire index of a device the runtime returned (a program's or a
 * context's): a root device's, or the session's sub-device's. UINT32_MAX
 * when the session has no such device. Walks the table: builds only.
 */
uint32_t
vcl_session_device_index(struct vcl_session *s, cl_device_id dev)
{
	struct vcl_hobj	*o;
	uint32_t	 i;
	size_t		 k;

	for (i = 0; i < s->srv->be.ndevices; i++)
		if (s->srv->be.devices[i] == dev)
			return (i);
	for (k = 0; k < s->handles.nslots; k++)
		for (o = s->handles.slots[k]; o != NULL; o = o->next)
			if (o->kind == VCL_KIND_DEVICE && o->u.device == dev &&
			    o->error == CL_SUCCESS)
				return (VCL_SUBDEVICE_BIT | (uint32_t)o->id);
	return (UINT32_MAX);
}
