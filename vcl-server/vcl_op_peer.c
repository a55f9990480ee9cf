/*
 * vcl_op_peer.c - the server's half of many nodes: migrating a buffer's
 * bytes straight to another server (MigrateOut/MigrateIn, PeerPush) and
 * completing events across servers (ForwardEvent/CreateProxyEvent,
 * PeerEvent). Either half of a pair may arrive first; what comes early is
 * kept as an XFER entry (bytes or a status) until its partner arrives.
 *
 * NOTE: a peer names ids of a session it holds the key of, ids it cannot
 * be trusted with. What it sends early goes to the session's early table,
 * never to the handle table whose ids the client owns: a peer's id can
 * neither collide with nor later block an id of the client. A peer may
 * only fill a transfer that waits for it (a MigrateIn's) or complete a
 * proxy event; a push or event naming anything else is refused with an
 * error reply on the link, and the session is not touched.
 *
 * Lost peers: a PeerFail naming a source is remembered for the session's
 * life, so a MigrateIn or proxy naming that source later (held until then,
 * or simply sent after) fails at once instead of waiting forever.
 *
 * Shared staging: where the link to the destination can place bytes
 * (vcl_tp_can_place: a backend whose receiver offers slots of shared
 * memory, two servers of one host), a MigrateOut of a buffer reads it
 * chunk by chunk straight into the slots the destination offers (struct
 * vcl_place), and the destination writes each chunk to its buffer as it
 * lands (vcl_peer_chunk_in): two copies that overlap, no transfer copy.
 * Slots go back once their read or write completed (vcl_peer_slot_done);
 * the transport keeps a slot mapped until then, whatever became of the
 * link or the sessions.
 *
 * Direct mode: where both buffers' devices share the host's memory
 * (CL_DEVICE_HOST_UNIFIED_MEMORY: a map is the buffer's own storage), the
 * source maps its range for reading after the wait list and names it to
 * the transport (vcl_tp_source); the destination maps its range for
 * writing and reads the bytes straight from the source process into it
 * (process_vm_readv, on a mover thread: vcl_peer_pull_in), one copy in
 * all. Each side only ever writes its own memory; each map is undone
 * exactly once, by the side that made it, after its last use. A pull
 * never outlives its transfer: whatever ends the transfer early stops
 * the pull, whose end answers the client (struct vcl_pull, "Early
 * ends"). On by default; VCL_UCX_DIRECT=0 turns it off (the ring then,
 * as elsewhere).
 */
#include <sys/uio.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "vcl_enqueue.h"
#include "vcl_log.h"
#include "vcl_op_image.h"
#include "vcl_op_mem.h"
#include "vcl_op_peer.h"
#include "vcl_peer.h"
#include "vcl_pin.h"
#include "vcl_pool.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_worker.h"

static void	vcl_migrate_pushed(void *);
static void	vcl_migrate_dropped(void *);
static void	vcl_pull_stop(void *, cl_int);
static void	vcl_pull_detach(void *);
static void	vcl_pull_gate(void *);

/*
 * A source names a node ("host:port"). Kept for the life of a transfer,
 * a proxy or the session (lost sources) and compared with every one kept
 * on each MigrateIn and PeerFail: unbounded, a client held frames' worth
 * of them (uncharged) and made each compare walk them all.
 */
#define VCL_SOURCE_MAX	255

#define VCL_PULL_PIECE	(8ull << 20)	/* one process_vm_readv at most */
#define VCL_PULL_PART	(2ull << 20)	/* a thread's share at least */

/*
 * Direct mode is on: the default, VCL_UCX_DIRECT=0 turns it off. A pull
 * never outlives its receive (see "Early ends" at struct vcl_pull).
 */
static int
vcl_peer_direct_on(void)
{
	const char	*v = getenv("VCL_UCX_DIRECT");

	/* As the transport reads it (vcl_ucx_env): a number, 0 is off. */
	return (v == NULL || *v == '\0' || strtoull(v, NULL, 10) != 0);
}

/*
 * Do all of ctx's devices share the host's memory? (Testing:
 * VCL_TEST_DIRECT_DISCRETE=1 answers no, as for a discrete GPU.)
 */
static int
vcl_peer_unified(cl_context ctx)
{
	cl_device_id	devs[16];
	cl_bool		u;
	size_t		n = 0, i;
	const char	*v = getenv("VCL_TEST_DIRECT_DISCRETE");

	if (v != NULL && strcmp(v, "1") == 0)
		return (0);
	if (clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs,
	    &n) != CL_SUCCESS || n < sizeof devs[0])
		return (0);
	for (i = 0; i < n / sizeof devs[0]; i++) {
		u = CL_FALSE;
		if (clGetDeviceInfo(devs[i], CL_DEVICE_HOST_UNIFIED_MEMORY,
		    sizeof u, &u, NULL) != CL_SUCCESS || !u)
			return (0);
	}
	return (1);
}

/* The client session a peer names, if the key matches; else NULL. */
static struct vcl_session *
vcl_peer_target(struct vcl_server *srv, uint64_t id, uint64_t key)
{
	struct vcl_session	*t;

	LIST_FOREACH(t, &srv->sessions, entry)
		if (t->id == id && !t->is_peer && !t->dead)
			return (CRYPTO_memcmp(&t->key, &key, sizeof key) == 0 ?
			    t : NULL);
	return (NULL);
}

/* Refuse a peer's request on its link: an error reply, nothing done. */
static void
vcl_peer_refuse(struct vcl_session *ps, const Vcl__Request *req,
    const char *why)
{
	vcl_log_warn("peer link %llu (%s): %s", (unsigned long long)ps->id,
	    ps->peer, why);
	vcl_session_reply(ps, req->seq, CL_INVALID_VALUE, why);
}

/* Is a source the client names short enough to keep (or absent)? */
static int
vcl_peer_source_ok(const char *source)
{
	return (source == NULL ||
	    strnlen(source, VCL_SOURCE_MAX + 1) <= VCL_SOURCE_MAX);
}

/* Did the session's client report source lost? */
static int
vcl_peer_lost(const struct vcl_session *s, const char *source)
{
	int	i;

	for (i = 0; source != NULL && i < s->nlost; i++)
		if (strcmp(s->lost[i], source) == 0)
			return (1);
	return (0);
}

/* Remember a lost source for the session's life (the oldest goes first). */
static void
vcl_peer_lose(struct vcl_session *s, const char *source)
{
	char	*p;

	if (vcl_peer_lost(s, source) || (p = strdup(source)) == NULL)
		return;
	if (s->nlost == VCL_LOST_MAX) {
		free(s->lost[0]);
		memmove(s->lost, s->lost + 1, (VCL_LOST_MAX - 1) *
		    sizeof s->lost[0]);
		s->nlost--;
	}
	s->lost[s->nlost++] = p;
}

/*
 * Keep what came early for id (a push, a peer's event, a failure) in the
 * session's early table. NULL when it is full or holds id: dropped.
 */
static struct vcl_hobj *
vcl_early_add(struct vcl_session *s, uint64_t id)
{
	struct vcl_hobj	*o;
	cl_int		 err;

	if ((o = vcl_handle_add(&s->early, id, VCL_KIND_XFER, &err)) == NULL) {
		vcl_log_warn("session %llu: early entry %llu dropped (%d)",
		    (unsigned long long)s->id, (unsigned long long)id, err);
		return (NULL);
	}
	o->arrived = 1;
	s->srv->objects++;	/* vcl_session_release counts it back */
	return (o);
}

/* Free an entry of the early table (its bytes and charge too). */
static void
vcl_early_drop(struct vcl_session *s, struct vcl_hobj *o)
{
	vcl_session_release(s, o);
	vcl_handle_del(&s->early, o);
}

/*
 * Complete a user event of a migration or a proxy with a status: it gates
 * the command(s) held behind it (vcl_hold.c). Negative: they fail.
 */
void
vcl_peer_settle(struct vcl_session *s, struct vcl_hobj *o, cl_int status)
{
	if (!o->user_set) {
		o->user_set = 1;
		if (o->u.event != NULL)
			clSetUserEventStatus(o->u.event, status < 0 ? status :
			    CL_COMPLETE);
		if (status < 0 && o->kind == VCL_KIND_EVENT)
			o->error = status;	/* see SetUserEventStatus */
	}
	if (status < 0)
		vcl_cmd_reap(s);
	s->want_kick = 1;	/* run at the end of the batch */
}

/*
 * The context's queue for migrations, made on first use: a queue object
 * of the server's own, outside the handle table (clients cannot name it).
 */
static struct vcl_hobj *
vcl_context_queue(struct vcl_hobj *ctx, cl_int *err)
{
	cl_device_id	 dev;
	struct vcl_hobj	*q;

	if (ctx->mq != NULL)
		return (ctx->mq);
	if ((*err = clGetContextInfo(ctx->u.ctx, CL_CONTEXT_DEVICES, sizeof dev,
	    &dev, NULL)) != CL_SUCCESS)
		return (NULL);
	if ((q = calloc(1, sizeof *q)) == NULL) {
		*err = CL_OUT_OF_HOST_MEMORY;
		return (NULL);
	}
	q->kind = VCL_KIND_QUEUE;
	q->u.queue = clCreateCommandQueueWithProperties(ctx->u.ctx, dev, NULL,
	    err);
	if (*err != CL_SUCCESS) {
		free(q);
		return (NULL);
	}
	return (ctx->mq = q);
}

/*
 * A waiting transfer failed at its source: fail the client's event. The
 * caller frees the transfer (vcl_session_release: its staging too, after
 * stopping a push still streaming into it).
 */
static void
vcl_xfer_fail(struct vcl_session *s, struct vcl_hobj *x, cl_int status)
{
	struct vcl_hobj	*ev;

	/*
	 * A direct pull still writes its range: it stops at its next piece
	 * and its end answers the client (vcl_peer_pulled), not before.
	 */
	if (x->pull != NULL)
		vcl_pull_stop(x->pull, status);
	else if ((ev = vcl_handle_held(&s->handles, x->xevent,
	    VCL_KIND_EVENT)) != NULL && !ev->user_set) {
		vcl_peer_settle(s, ev, status);
		vcl_session_notify(s, x->xevent, status, NULL, 0);
	}
	x->arrived = 1;		/* settled */
	x->error = status;
}

/*
 * Free a failed transfer (vcl_xfer_fail): its staging goes (a push still
 * streaming into it drops the rest) and a tombstone stays in the early
 * table, so that a push still on its way is dropped instead of kept until
 * the session ends.
 */
static void
vcl_xfer_end(struct vcl_session *s, struct vcl_hobj *x)
{
	struct vcl_hobj	*tomb;
	uint64_t	 id = x->id;
	cl_int		 status = x->error;

	vcl_session_release(s, x);
	vcl_handle_del(&s->handles, x);
	if ((tomb = vcl_early_add(s, id)) != NULL) {
		tomb->error = status;
		tomb->released = 1;
	}
}

/* Free every transfer that failed (vcl_xfer_fail) while walking. */
static void
vcl_xfer_sweep(struct vcl_session *s)
{
	struct vcl_hobj	*x, *next;
	size_t		 i;

	for (i = 0; i < s->handles.nslots; i++)
		for (x = s->handles.slots[i]; x != NULL; x = next) {
			next = x->next;
			if (x->kind == VCL_KIND_XFER && x->arrived)
				vcl_xfer_end(s, x);
		}
}

/*
 * The client released a buffer or a context: the transfers waiting to be
 * written into it end now (their bytes would have nowhere to go).
 */
void
vcl_peer_let_go(struct vcl_session *s, struct vcl_hobj *o)
{
	struct vcl_hobj	*x;
	size_t		 i;

	if (o->kind != VCL_KIND_MEM && o->kind != VCL_KIND_CONTEXT)
		return;
	for (i = 0; i < s->handles.nslots; i++)
		for (x = s->handles.slots[i]; x != NULL; x = x->next)
			if (x->kind == VCL_KIND_XFER && !x->arrived &&
			    (o->kind == VCL_KIND_MEM ? x->xmem : x->xctx) ==
			    o->id)
				vcl_xfer_fail(s, x, CL_INVALID_MEM_OBJECT);
	vcl_xfer_sweep(s);
}

/*
 * The client's migration event becomes the write's own event: commands
 * held behind it can go to the runtime now, ordered behind the write on
 * the device instead of behind a callback here.
 */
static void
vcl_arrive_rebind(struct vcl_session *s, uint64_t event_id, cl_event w)
{
	struct vcl_hobj	*o;

	o = vcl_handle_held(&s->handles, event_id, VCL_KIND_EVENT);
	if (o == NULL || !o->user || o->user_set)
		return;
	clRetainEvent(w);
	o->u.event = w;
	o->user = 0;
	o->user_set = 1;
	s->want_kick = 1;	/* run at the end of the batch */
}

/*
 * Write a transfer's bytes (in staging, charged) into the buffer, on the
 * context's own queue, which holds nothing but migrations: no command
 * there waits on an event a peer has yet to complete, so no runtime can
 * block this thread on it (NVIDIA's may, in enqueues from pageable
 * memory). The client's event for the migration is a user event here,
 * completed with the write; the client's commands that use the buffer
 * wait on it. A buffer whose Release is held behind such a command is
 * still written (vcl_handle_held): that command was sent before the
 * release. Takes data (and its charge) in every case.
 */
static void
vcl_arrive(struct vcl_session *s, uint64_t ctx_id, uint64_t mem_id,
    uint64_t off, uint64_t size, uint8_t *data, uint64_t event_id)
{
	struct vcl_hobj	*ctx, *mem, *mq;
	struct vcl_cmd	*c;
	cl_int		 err = CL_SUCCESS;

	if ((c = vcl_cmd_new(VCL_CMD_ARRIVE, 0)) == NULL ||
	    (c->stage = vcl_stage_new(s, data, size)) == NULL) {
		free(c);
		vcl_pool_put(data, size);
		vcl_session_uncharge(s, size);
		vcl_session_close(s, "out of memory");
		return;
	}
	c->xid = event_id;
	c->event_id = event_id;
	c->d.s = s;
	vcl_session_ref(s);
	if ((ctx = vcl_handle_held(&s->handles, ctx_id, VCL_KIND_CONTEXT)) ==
	    NULL || (mem = vcl_handle_held(&s->handles, mem_id,
	    VCL_KIND_MEM)) == NULL || mem->error != CL_SUCCESS ||
	    ctx->error != CL_SUCCESS)
		err = CL_INVALID_MEM_OBJECT;	/* released meanwhile */
	else if ((mq = vcl_context_queue(ctx, &err)) != NULL) {
		err = vcl_image_xfer(mq->u.queue, mem, 1, off, size, data, 0,
		    NULL, &c->ev);
		if (err == CL_SUCCESS) {
			/*
			 * Submit now, not at the batch's end: commands on
			 * other queues wait on it. On the queue's strand:
			 * NVIDIA's runtime held the loop for milliseconds
			 * flushing those first.
			 */
			vcl_session_flush_queue(s, mq);
			s->srv->metrics.migrations_in++;
			vcl_arrive_rebind(s, event_id, c->ev);
			(void)vcl_cmd_watch(s, c);
			return;
		}
	}
	c->status = err;
	vcl_cmd_finish(c);
}

/*
 * A MigrateIn's wait list, checked as a command's is: every id an event
 * of the session the client holds, none failed. The hold ran it once
 * they could (vcl_hold.c); the runtime sees no wait list of it.
 */
static cl_int
vcl_peer_wait_ok(struct vcl_session *s, const Vcl__Enqueue *e)
{
	struct vcl_hobj	*o;
	size_t		 i;
	cl_int		 err;

	if (e->n_wait > VCL_WAIT_MAX)
		return (CL_INVALID_EVENT_WAIT_LIST);
	for (i = 0; i < e->n_wait; i++)
		if ((err = vcl_enq_wait_id(s, e->wait[i], &o)) != CL_SUCCESS)
			return (err);
	return (CL_SUCCESS);
}

/*
 * MigrateIn: a buffer range's bytes are coming from a peer. The client's
 * event becomes a user event here, completed once the bytes are written
 * into the buffer (vcl_arrive); if they came first, that starts now.
 */
void
vcl_op_migrate_in(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__MigrateIn	*m = req->migrate_in;
	struct vcl_hobj		*q, *mem, *x, *ev, *cx = NULL;
	uint64_t		 ctx_id = 0;
	uint8_t			*data;
	cl_int			 err = CL_SUCCESS;

	if (!m->q->has_event || m->q->event == 0 ||
	    vcl_handle_find(&s->handles, m->q->event)) {
		vcl_session_close(s, "bad migration request");
		return;
	}
	x = vcl_handle_find(&s->early, m->transfer);	/* came first */
	if ((ev = vcl_session_add(s, m->q->event, VCL_KIND_EVENT)) == NULL)
		return;
	ev->user = 1;
	if ((q = vcl_handle_get(&s->handles, m->q->queue, VCL_KIND_QUEUE)) ==
	    NULL)
		err = CL_INVALID_COMMAND_QUEUE;
	else if ((err = q->error) == CL_SUCCESS &&
	    (err = vcl_peer_wait_ok(s, m->q)) == CL_SUCCESS) {
		ctx_id = q->xctx;	/* the queue's context, by client id */
		cx = vcl_handle_get(&s->handles, ctx_id, VCL_KIND_CONTEXT);
		if ((mem = vcl_mem_range_get(s, m->mem, m->offset, m->size,
		    &err)) == NULL)
			;
		else if (cx == NULL || cx->error != CL_SUCCESS)
			err = CL_INVALID_CONTEXT;
		/*
		 * No runtime user event: nothing reaches the runtime while
		 * it is unset (vcl_hold.c), and some runtimes (NVIDIA's)
		 * make each one slower to create than the last.
		 */
	}
	if (err == CL_SUCCESS && ev->error != CL_SUCCESS)
		err = ev->error;
	if (err == CL_SUCCESS && !vcl_peer_source_ok(m->source))
		err = CL_INVALID_VALUE;
	/* Its source is known lost: nobody will push (see PeerFail). */
	if (err == CL_SUCCESS && x == NULL && vcl_peer_lost(s, m->source))
		err = CL_DEVICE_NOT_AVAILABLE;
	if (err == CL_SUCCESS && x != NULL) {
		/* The bytes (or the failure) came first. */
		if ((err = x->error) == CL_SUCCESS && x->bytes != m->size)
			err = CL_INVALID_VALUE;
		if (err == CL_SUCCESS) {
			data = x->data;
			x->data = NULL;
			x->bytes = 0;	/* the charge goes with the bytes */
			vcl_arrive(s, ctx_id, m->mem, m->offset, m->size, data,
			    m->q->event);
		}
		vcl_early_drop(s, x);
		x = NULL;
	} else if (err == CL_SUCCESS) {
		/*
		 * Wait for the bytes. Their staging is had when the push's
		 * head comes (vcl_op_peer_push_dst): a push placed in shared
		 * staging needs none.
		 */
		if ((x = vcl_session_add(s, m->transfer,
		    VCL_KIND_XFER)) == NULL || x->error != CL_SUCCESS) {
			err = CL_OUT_OF_RESOURCES;
			if (x != NULL) {
				vcl_session_release(s, x);
				vcl_handle_del(&s->handles, x);
			}
			x = NULL;
			if (s->dead)
				return;
		} else {
			x->xsize = m->size;
			x->xctx = ctx_id;
			x->xmem = m->mem;
			x->xoff = m->offset;
			x->xevent = m->q->event;
			s->nxfer++;
			if (m->source != NULL)
				x->source = strdup(m->source);
			return;
		}
	}
	if (x != NULL)		/* an early arrival, not used */
		vcl_early_drop(s, x);
	if (err != CL_SUCCESS) {
		ev->error = err;
		vcl_peer_settle(s, ev, err);
		vcl_session_notify(s, m->q->event, err, NULL, 0);
	}
}

/*
 * Where a PeerPush's bytes go: straight into the waiting transfer of that
 * size, in staging it gets now (charged to its session), or chunk by
 * chunk into its buffer when they come placed in our shared staging (see
 * vcl_session_oob_post). Called when its frame head is in, before the
 * bytes; NULL: the session stages them itself.
 */
struct vcl_hobj *
vcl_op_peer_push_dst(struct vcl_session *ps, const Vcl__Request *req,
    uint64_t len)
{
	const Vcl__PeerPush	*m = req->peer_push;
	struct vcl_session	*t;
	struct vcl_hobj		*x;
	cl_int			 err;

	if ((t = vcl_peer_target(ps->srv, m->session, m->key)) == NULL ||
	    (x = vcl_handle_get(&t->handles, m->transfer,
	    VCL_KIND_XFER)) == NULL || x->arrived || x->receiving != NULL ||
	    x->xsize != len || x->data != NULL)
		return (NULL);
	if (!((req->bulk_xfer & VCL_TP_XID_PLACE) && ps->tp_ep != NULL &&
	    (ps->tp_ep->tp->ops->caps & VCL_TP_PLACE))) {
		if ((x->data = vcl_stage_alloc(t, vcl_handle_held(&t->handles,
		    x->xctx, VCL_KIND_CONTEXT), len,
		    CL_MEM_OBJECT_ALLOCATION_FAILURE, &err)) == NULL)
			return (NULL);
		x->bytes = len;		/* charged to the session */
	}
	x->receiving = ps;
	return (x);
}

/* Move a charge of n bytes from the link ps to t. Returns 0 or -1 (t full). */
static int
vcl_charge_move(struct vcl_session *ps, struct vcl_session *t, uint64_t n)
{
	vcl_session_uncharge(ps, n);
	if (vcl_session_charge(t, n) == 0)
		return (0);
	vcl_session_charge(ps, n);
	return (-1);
}

/*
 * A waiting transfer's bytes came in the link's own staging (bulk): free
 * the transfer's, take the link's, and move the charge from the link (ps)
 * to the session (t). Returns CL_SUCCESS, CL_INVALID_VALUE (wrong size) or
 * CL_MEM_OBJECT_ALLOCATION_FAILURE (over t's limit).
 */
static cl_int
vcl_xfer_take(struct vcl_session *ps, struct vcl_session *t,
    struct vcl_hobj *x, struct vcl_bulk *bulk)
{
	if (bulk->data == NULL || bulk->len != x->xsize)
		return (CL_INVALID_VALUE);
	vcl_pool_put(x->data, x->bytes);
	vcl_session_uncharge(t, x->bytes);
	if (vcl_charge_move(ps, t, bulk->len) != 0) {
		x->data = NULL;
		x->bytes = 0;
		return (CL_MEM_OBJECT_ALLOCATION_FAILURE);
	}
	x->data = bulk->data;
	x->bytes = bulk->len;
	bulk->data = NULL;
	return (CL_SUCCESS);
}

/*
 * PeerPush, on a peer link: a transfer's bytes (or its failure) for one of
 * our client sessions. Releases the gated write, or keeps what came early.
 * A push may fill only a transfer that waits for bytes and is not being
 * filled by another push; anything else of the session it names is
 * refused (an error reply on the link) and left alone.
 */
void
vcl_op_peer_push(struct vcl_session *ps, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__PeerPush	*m = req->peer_push;
	struct vcl_session	*t;
	struct vcl_hobj		*x;
	cl_int			 status = m->status;

	ps->srv->peer_bytes_in += bulk->len;
	vcl_log_debug("push %llu in: %llu bytes", (unsigned long long)m->transfer,
	    (unsigned long long)bulk->len);
	if ((t = vcl_peer_target(ps->srv, m->session, m->key)) == NULL) {
		vcl_session_warn(ps, "push for no session %llu: dropped",
		    (unsigned long long)m->session);
		return;
	}
	if (status >= 0 && bulk->err != CL_SUCCESS)
		status = bulk->err;
	x = vcl_handle_find(&t->handles, m->transfer);
	if (x != NULL && (x->kind != VCL_KIND_XFER || x->arrived ||
	    (x->receiving != NULL && (x->receiving != ps || !bulk->borrowed)))) {
		vcl_peer_refuse(ps, req, x->kind != VCL_KIND_XFER ?
		    "push names an object that is not a transfer" :
		    "push for a transfer another push fills");
		return;
	}
	if (x != NULL) {
		/*
		 * Waiting: the bytes landed in its staging (or failed). If
		 * the MigrateIn ran while they were on their way, they are in
		 * the link's staging instead: take that one.
		 */
		if (status >= 0 && !bulk->borrowed)
			status = vcl_xfer_take(ps, t, x, bulk);
		x->receiving = NULL;
		if (status >= 0 && bulk->placed) {
			struct vcl_hobj	*ev;

			/* Every chunk is in the buffer already. */
			x->arrived = 1;
			t->srv->metrics.migrations_in++;
			if ((ev = vcl_handle_held(&t->handles, x->xevent,
			    VCL_KIND_EVENT)) != NULL && ev->user &&
			    !ev->user_set)
				vcl_peer_settle(t, ev, CL_COMPLETE);
			vcl_session_notify(t, x->xevent, CL_COMPLETE, NULL, 0);
		} else if (status >= 0) {
			uint8_t	*data = x->data;

			x->data = NULL;
			x->arrived = 1;		/* nothing left to free */
			x->bytes = 0;
			vcl_arrive(t, x->xctx, x->xmem, x->xoff, bulk->len,
			    data, x->xevent);
		} else
			vcl_xfer_fail(t, x, status);
		vcl_session_release(t, x);
		vcl_handle_del(&t->handles, x);
		return;
	}
	if ((x = vcl_handle_find(&t->early, m->transfer)) != NULL) {
		if (x->released)	/* it ended here: drop what came */
			vcl_early_drop(t, x);
		else
			vcl_peer_refuse(ps, req, "a second push for one "
			    "transfer");
		return;
	}
	/*
	 * Its transfer was released while the bytes streamed into it (they
	 * were read and dropped): nothing is left to keep.
	 */
	if (status >= 0 && bulk->len > 0 && bulk->data == NULL &&
	    !bulk->borrowed)
		return;
	/* Early: keep bytes or status until the MigrateIn comes. */
	if ((x = vcl_early_add(t, m->transfer)) == NULL)
		return;
	x->error = status < 0 ? status : CL_SUCCESS;
	if (x->error == CL_SUCCESS && bulk->data != NULL) {
		if (vcl_charge_move(ps, t, bulk->len) != 0) {
			x->error = CL_MEM_OBJECT_ALLOCATION_FAILURE;
			return;
		}
		x->data = bulk->data;
		x->bytes = bulk->len;
		bulk->data = NULL;
	}
}

/*
 * A peer link closes in the middle of a push (its source died, or the
 * link broke): the transfer it names fails, whether it waits here already
 * or its MigrateIn is still to come (kept as an early failure).
 */
void
vcl_peer_link_lost(struct vcl_session *ps)
{
	const Vcl__PeerPush	*m;
	struct vcl_session	*t;
	struct vcl_hobj		*x;
	int			 corked;

	if (ps->in_req == NULL ||
	    ps->in_req->call_case != VCL__REQUEST__CALL_PEER_PUSH)
		return;
	m = ps->in_req->peer_push;
	if ((t = vcl_peer_target(ps->srv, m->session, m->key)) == NULL)
		return;
	x = vcl_handle_find(&t->handles, m->transfer);
	if (x != NULL && x->kind == VCL_KIND_XFER && !x->arrived &&
	    (x->receiving == NULL || x->receiving == ps)) {
		vcl_log_info("session %llu: transfer %llu lost with its link",
		    (unsigned long long)t->id, (unsigned long long)m->transfer);
		/*
		 * Failing it tells t's client: queued only, written by the
		 * flush, since a write that finds that client gone closes t
		 * and frees x (this runs from a tick's or a flush's walk too,
		 * not only from a corked batch).
		 */
		corked = ps->srv->corked;
		ps->srv->corked = 1;
		vcl_xfer_fail(t, x, CL_DEVICE_NOT_AVAILABLE);
		vcl_xfer_end(t, x);	/* detaches ps's input from it */
		ps->srv->corked = corked;
		vcl_session_flush(t);
	} else if (x == NULL && vcl_handle_find(&t->early, m->transfer) ==
	    NULL && (x = vcl_early_add(t, m->transfer)) != NULL)
		x->error = CL_DEVICE_NOT_AVAILABLE;
}

/*
 * A migration placed in the destination's shared staging. It holds the
 * buffer and the queue it reads on (retained: the client may release
 * them meanwhile) and its session until its push ended and every slot
 * it was handed went back (refs).
 */
struct vcl_place {
	struct vcl_session	*s;
	struct vcl_cmd		*c;		/* the PUSH, until it ends */
	struct vcl_tp		*tp;		/* where slots go back */
	cl_command_queue	 q;
	cl_mem			 mem;
	uint64_t		 off, size;
	uint64_t		 ctx;		/* the context's id */
	int			 refs;
	int			 failed;
	int			 direct;	/* map the range: it may be read */
	void			*map;		/* ... mapped there, till the end */
	uint64_t		 hold;		/* the link it chose, held until
						   the push goes (0: none) */
};

/*
 * Direct mode: undo the source's map of its range, once, when the push
 * ended (the destination read it all, or failed), before the client
 * hears of it. A slot still being filled reads the buffer, not the map.
 */
static void
vcl_place_unmap(struct vcl_place *pl)
{
	if (pl->map == NULL)
		return;
	if (clEnqueueUnmapMemObject(pl->q, pl->mem, pl->map, 0, NULL, NULL) ==
	    CL_SUCCESS)
		clFlush(pl->q);
	pl->map = NULL;
}

/* Drop a reference to a placed migration; the last frees it. */
static void
vcl_place_unref(struct vcl_place *pl)
{
	if (--pl->refs > 0)
		return;
	if (pl->hold != 0)
		vcl_peer_unhold(pl->s->srv, pl->hold);
	vcl_place_unmap(pl);
	clReleaseMemObject(pl->mem);
	clReleaseCommandQueue(pl->q);
	vcl_session_unref(pl->s);
	free(pl);
}

/* A PUSH whose placement never started lets go of it. */
void
vcl_peer_place_drop(struct vcl_cmd *c)
{
	struct vcl_place	*pl = c->job;

	c->job = NULL;
	pl->c = NULL;
	vcl_place_unref(pl);
}

/*
 * The destination offered a slot: read that range of the buffer straight
 * into it, on the migration's queue; the slot goes back when the read
 * completed (vcl_peer_slot_done), filled or failed.
 */
static void
vcl_place_slot(void *arg, const struct vcl_tp_slot *slot)
{
	struct vcl_place	*pl = arg;
	struct vcl_hobj		*ctx;
	struct vcl_cmd		*c;
	cl_int			 err;

	if (pl->failed || pl->s->dead ||
	    (c = vcl_cmd_new(VCL_CMD_SLOT_OUT, 0)) == NULL) {
		vcl_tp_placed(pl->tp, slot->token, VCL_TP_EIO);
		return;
	}
	/*
	 * The peer's ring pinned for the context, while the client holds it:
	 * the read runs by DMA.
	 */
	if ((ctx = vcl_handle_held(&pl->s->handles, pl->ctx,
	    VCL_KIND_CONTEXT)) != NULL && ctx->error == CL_SUCCESS)
		c->pinwrap = vcl_pin_wrap(vcl_pin_ring_of(slot->ptr,
		    (size_t)slot->len), ctx->pins);
	err = clEnqueueReadBuffer(pl->q, pl->mem, CL_FALSE, pl->off +
	    slot->off, slot->len, slot->ptr, 0, NULL, &c->ev);
	if (err != CL_SUCCESS) {
		vcl_pin_unwrap(c->pinwrap);
		free(c);
		pl->failed = 1;
		vcl_tp_placed(pl->tp, slot->token, VCL_TP_EIO);
		return;
	}
	clFlush(pl->q);
	c->xid = slot->token;
	c->job = pl;
	pl->refs++;
	c->d.s = pl->s;
	vcl_session_ref(pl->s);
	(void)vcl_cmd_watch(pl->s, c);
}

/* A placed push ended (all consumed at the destination, or failed). */
static void
vcl_place_done(void *arg, int err)
{
	struct vcl_place	*pl = arg;
	struct vcl_cmd		*c = pl->c;

	vcl_place_unmap(pl);
	if (c != NULL) {
		c->job = NULL;
		pl->c = NULL;
		if (err == VCL_TP_OK && !pl->failed)
			vcl_migrate_pushed(c);
		else
			vcl_migrate_dropped(c);
	}
	vcl_place_unref(pl);
}

/*
 * A chunk's read into a peer's slot, or its write from one of ours,
 * completed: the slot goes back to the transport. A failed write fails
 * the transfer (its push sees the error).
 */
void
vcl_peer_slot_done(struct vcl_cmd *c)
{
	struct vcl_place	*pl;
	struct vcl_session	*ps;

	vcl_pin_unwrap(c->pinwrap);	/* the copy is over */
	c->pinwrap = NULL;
	if (c->type == VCL_CMD_SLOT_OUT) {
		pl = c->job;
		c->job = NULL;
		if (c->status < 0)
			pl->failed = 1;
		vcl_tp_placed(pl->tp, c->xid, c->status < 0 ? VCL_TP_EIO :
		    VCL_TP_OK);
		vcl_place_unref(pl);
		return;
	}
	ps = c->d.s;
	if (c->status < 0 && !ps->dead && ps->in_state == VCL_IN_OOB &&
	    ps->in_oob_placed && ps->in_bulk_err == CL_SUCCESS)
		ps->in_bulk_err = c->status;
	vcl_tp_consumed(c->job, c->xid);
	c->job = NULL;
}

/*
 * The buffer a placed push fills, on ps (the peer link reading the push):
 * its session, context and migration queue; NULL when it went or is not
 * a buffer (an image's bytes never come placed).
 */
static struct vcl_hobj *
vcl_peer_push_mem(struct vcl_session *ps, struct vcl_hobj **ctxp,
    struct vcl_hobj **mqp, cl_int *err)
{
	const Vcl__PeerPush	*m;
	struct vcl_session	*t;
	struct vcl_hobj		*x = ps->in_xfer, *ctx, *mem, *mq;

	*err = CL_INVALID_MEM_OBJECT;
	if (x != NULL && !ps->dead && ps->in_req != NULL &&
	    (m = ps->in_req->peer_push) != NULL &&
	    (t = vcl_peer_target(ps->srv, m->session, m->key)) != NULL &&
	    (ctx = vcl_handle_held(&t->handles, x->xctx, VCL_KIND_CONTEXT)) !=
	    NULL && ctx->error == CL_SUCCESS &&
	    (mem = vcl_handle_held(&t->handles, x->xmem, VCL_KIND_MEM)) !=
	    NULL && mem->error == CL_SUCCESS && mem->u.mem != NULL &&
	    !mem->image && (mq = vcl_context_queue(ctx, err)) != NULL) {
		*ctxp = ctx;
		*mqp = mq;
		return (mem);
	}
	return (NULL);
}

/*
 * A chunk of a placed push landed in our shared staging (ps is the peer
 * link's session, reading the push): write it into the waiting transfer's
 * buffer at its offset, on the context's migration queue. The slot goes
 * back once the write completed; a chunk with nowhere to go goes back at
 * once and fails the transfer.
 */
void
vcl_peer_chunk_in(void *arg, uint64_t off, void *ptr, uint64_t len,
    uint64_t token)
{
	struct vcl_session	*ps = arg;
	struct vcl_hobj		*x = ps->in_xfer, *ctx, *mem, *mq;
	struct vcl_tp		*tp = ps->tp_ep->tp;
	struct vcl_cmd		*c;
	cl_int			 err = CL_INVALID_MEM_OBJECT;

	/* It could have been pulled, and comes through the ring: count. */
	if (ps->in_oob_pull != 0 && ps->in_oob_pull != 3) {
		ps->srv->peer_direct_fallbacks++;
		ps->in_oob_pull = 3;
	}
	if ((mem = vcl_peer_push_mem(ps, &ctx, &mq, &err)) != NULL &&
	    (c = vcl_cmd_new(VCL_CMD_SLOT_IN, 0)) != NULL) {
		/* Our ring pinned for the context: the write runs by DMA. */
		c->pinwrap = vcl_pin_wrap(vcl_pin_ring_of(ptr, (size_t)len),
		    ctx->pins);
		err = clEnqueueWriteBuffer(mq->u.queue, mem->u.mem, CL_FALSE,
		    x->xoff + off, len, ptr, 0, NULL, &c->ev);
		if (err == CL_SUCCESS) {
			clFlush(mq->u.queue);
			c->xid = token;
			c->job = tp;
			c->d.s = ps;
			vcl_session_ref(ps);
			(void)vcl_cmd_watch(ps, c);
			return;
		}
		vcl_pin_unwrap(c->pinwrap);
		free(c);
	}
	if (ps->in_bulk_err == CL_SUCCESS)
		ps->in_bulk_err = err != CL_SUCCESS ? err :
		    CL_INVALID_MEM_OBJECT;
	vcl_tp_consumed(tp, token);
}

/*
 * Could the placed push ps is reading be taken in direct mode: is its
 * buffer's context all on devices that share the host's memory?
 */
int
vcl_peer_pullable(struct vcl_session *ps)
{
	struct vcl_hobj	*ctx, *mq;
	cl_int		 err;

	return (vcl_peer_direct_on() && vcl_peer_push_mem(ps, &ctx, &mq,
	    &err) != NULL && vcl_peer_unified(ctx->u.ctx));
}

/*
 * A direct-mode read of a peer's bytes into our buffer (a mover's job).
 *
 * Early ends. A pull never outlives its receive: the transfer it fills
 * (x->pull, pu->x) is answered to its client only once the pull ended,
 * i.e. every part returned, the range was made defined and our map was
 * undone (vcl_peer_pulled, on the loop). Whatever ends the transfer
 * early marks the pull to stop at its next piece (vcl_pull_stop: the
 * loop never waits for it) and leaves the answer to the pull's end:
 * - the source sends ABORT, or its end fails (UCX's peer failure): the
 *   transport ends the receive at once; the push fails its transfer
 *   (vcl_op_peer_push, vcl_xfer_fail), which stops the pull and keeps
 *   the failure for its end; the transfer's entry goes (detached);
 * - the link's control stream closes (the source died or gave up on its
 *   deadline, or our frame deadline closed it): vcl_peer_link_lost fails
 *   the transfer the same way; the transport forgets the pull (its token
 *   is only freed at vcl_tp_pulled);
 * - the client releases the transfer, its buffer or context, says
 *   PeerFail, or its session ends: vcl_xfer_fail (if it is owed an
 *   answer) and vcl_peer_xfer_release stop and detach the pull; the
 *   receive is not cancelled then: the pull's end (VCL_TP_EIO) ends it
 *   and sends ABORT, so the source unmaps only after our last read;
 * - the pull ends first: the transport sends DONE (or ABORT) and ends the
 *   receive as usual; anything later finds it ended (stale, ignored);
 * - the server exits: its sessions close first (their transfers go,
 *   which stops their pulls) and it waits, bounded, for the sessions the
 *   pulls hold (their references) before the movers go; as a source, its
 *   links close, so its peers' pulls from it stop and zero their ranges;
 * - a source whose transport stops placement on a link that stands (the
 *   destination sent a message it refused) lets go of its range at once:
 *   only a destination that breaks the protocol causes it, and such a
 *   one could read the source's memory anyway (same user).
 * A pull that did not end cleanly (stopped, a read failed or refused)
 * zeroes its whole range before the unmap: its bytes may be the source's
 * memory after the source let it go (reused by another session); the map
 * invalidated the range anyway. From its stop on, a marker behind a user
 * event (pu->gate) holds the context's migration queue: a later write
 * into the range (a retried migration, through the ring or pulled) runs
 * only after the zeroing and the last read. A pull that is not stopped
 * holds nothing: pulls into one context overlap as before.
 */
struct vcl_pull {
	struct vcl_done		 d;		/* must stay first */
	struct vcl_tp		*tp;
	uint64_t		 token;		/* for vcl_tp_pulled */
	cl_command_queue	 q;
	cl_mem			 mem;
	cl_event		 gate;		/* stopped: holds the queue */
	cl_event		 mapev;		/* our map's */
	uint64_t		 off, len;
	pid_t			 pid;
	uint64_t		 addr;		/* in the peer */
	uint8_t			*map;		/* our range, mapped */
	uint64_t		 us;		/* the copy took */
	uint64_t		 t0, map_us, unmap_us;	/* queued; maps took */
	pthread_mutex_t		 lock;		/* left, err, why, gate */
	pthread_cond_t		 cond;
	int			 left;		/* parts still copying */
	int			 err;		/* VCL_TP_* */
	int			 ended;		/* all read, range defined */
	int			 stop;		/* atomic: end at next piece */
	char			 why[128];
	/* The loop's only: the transfer it fills and its client. */
	struct vcl_session	*t;		/* referenced */
	struct vcl_hobj		*x;		/* NULL once detached */
	uint64_t		 xevent;	/* the client's event */
	int			 failed;	/* the transfer failed: ... */
	cl_int			 fail;		/* ... answer this at the end */
};

/*
 * The transfer a pull fills ended early (status < 0: with that failure,
 * its client to be told at the pull's end; 0: released, nobody to tell):
 * the pull stops at its next piece.
 */
static void
vcl_pull_stop(void *arg, cl_int status)
{
	struct vcl_pull	*pu = arg;

	if (status < 0 && !pu->failed) {
		pu->failed = 1;
		pu->fail = status;
	}
	__atomic_store_n(&pu->stop, 1, __ATOMIC_RELAXED);
	vcl_pull_gate(pu);
}

/* The transfer a pull fills goes: the pull no longer names it. */
static void
vcl_pull_detach(void *arg)
{
	struct vcl_pull	*pu = arg;

	if (pu->x != NULL)
		pu->x->pull = NULL;
	pu->x = NULL;
}

/* Microseconds of the monotonic clock. */
static uint64_t
vcl_pull_now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000);
}

/* A part of a pull one thread copies. */
struct vcl_pull_part {
	struct vcl_pull		*pu;
	uint64_t		 off, len;
};

static struct vcl_workers	*vcl_pull_helpers;	/* never freed */
static int			 vcl_pull_nhelpers;
static pthread_once_t		 vcl_pull_once = PTHREAD_ONCE_INIT;

/*
 * The helper threads a pull's parts are split among: the kernel's copy
 * of one thread (4 KiB pages, pinned in turns) runs at half memcpy's
 * speed, several reach it (on a 16-core host 64 MiB took 3.3-4.8 ms on 4
 * threads, 1.7-2.2 on 8). VCL_PULL_THREADS (default the online CPUs, at
 * most 8); 1: no helper.
 */
static void
vcl_pull_helpers_init(void)
{
	const char	*v = getenv("VCL_PULL_THREADS");
	long		 n = sysconf(_SC_NPROCESSORS_ONLN);

	if (v != NULL && *v != '\0')
		n = strtol(v, NULL, 10);
	if (n > 8 && (v == NULL || *v == '\0'))
		n = 8;
	if (n < 1 || n > 16)
		n = 1;
	if (n > 1 && (vcl_pull_helpers = vcl_workers_new((int)n - 1)) !=
	    NULL)
		vcl_pull_nhelpers = (int)n - 1;
}

/*
 * Testing: VCL_TEST_DIRECT_HOLD=N stops a pull of N bytes or more after
 * its first piece until its source process is gone (at most 30 s), so
 * that a test can kill it mid-copy, or, with VCL_TEST_DIRECT_HOLD_FILE
 * set, until that file exists (whatever becomes of the source or of the
 * transfer meanwhile); VCL_TEST_DIRECT_EPERM=2 makes every read refused.
 */
static void
vcl_peer_pull_hold(struct vcl_pull *pu)
{
	const char	*v = getenv("VCL_TEST_DIRECT_HOLD");
	const char	*f = getenv("VCL_TEST_DIRECT_HOLD_FILE");
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	int		 i;

	if (v == NULL || *v == '\0' || pu->len < strtoull(v, NULL, 10))
		return;
	vcl_log_info("direct pull from pid %ld held", (long)pu->pid);
	for (i = 0; i < 3000; i++) {
		if (f != NULL && *f != '\0' ? access(f, F_OK) == 0 :
		    kill(pu->pid, 0) != 0)
			break;
		nanosleep(&ts, NULL);
	}
	vcl_log_info("direct pull from pid %ld goes on", (long)pu->pid);
}

/*
 * Copy one part of a pull, piece by piece, from the peer into our map;
 * the first failure is the pull's. A read refused by the kernel (EPERM)
 * is VCL_TP_EINVAL: the ring then (it writes the whole range again).
 */
static void
vcl_pull_part_run(void *arg)
{
	struct vcl_pull_part	*pp = arg;
	struct vcl_pull		*pu = pp->pu;
	struct iovec		 l, r;
	const char		*v = getenv("VCL_TEST_DIRECT_EPERM");
	uint64_t		 got = 0;
	ssize_t			 n = 1;
	int			 eno = 0, stopped = 0;

	while (got < pp->len) {
		/* Its transfer ended early: no further read. */
		if (__atomic_load_n(&pu->stop, __ATOMIC_RELAXED)) {
			stopped = 1;
			n = 0;
			break;
		}
		l.iov_base = pu->map + pp->off + got;
		l.iov_len = pp->len - got < VCL_PULL_PIECE ? pp->len - got :
		    VCL_PULL_PIECE;
		r.iov_base = (void *)(uintptr_t)(pu->addr + pp->off + got);
		r.iov_len = l.iov_len;
		if (v != NULL && strcmp(v, "2") == 0) {
			n = -1;
			eno = EPERM;
		} else {
			n = process_vm_readv(pu->pid, &l, 1, &r, 1, 0);
			eno = errno;
		}
		if (n <= 0)
			break;
		if (got == 0 && pp->off == 0)
			vcl_peer_pull_hold(pu);
		got += (uint64_t)n;
	}
	pthread_mutex_lock(&pu->lock);
	if (n <= 0 && pu->err == VCL_TP_OK) {
		pu->err = n < 0 && eno == EPERM ? VCL_TP_EINVAL : VCL_TP_EIO;
		snprintf(pu->why, sizeof pu->why, "%s at %llu of %llu",
		    stopped ? "its transfer ended" : n < 0 ? strerror(eno) :
		    "nothing read",
		    (unsigned long long)(pp->off + got),
		    (unsigned long long)pu->len);
	}
	if (--pu->left == 0)
		pthread_cond_signal(&pu->cond);
	pthread_mutex_unlock(&pu->lock);
}

/*
 * Mover: the pull read all it will and its range is defined; let the
 * migration queue go on past it (vcl_pull_gate), before the unmap.
 */
static void
vcl_pull_ungate(struct vcl_pull *pu)
{
	cl_event	g;

	pthread_mutex_lock(&pu->lock);
	pu->ended = 1;
	g = pu->gate;
	pu->gate = NULL;
	pthread_mutex_unlock(&pu->lock);
	if (g != NULL) {
		clSetUserEventStatus(g, CL_COMPLETE);
		clReleaseEvent(g);
	}
}

/*
 * Loop: a stopped pull holds the migration queue until it ended (a
 * marker behind a user event; its unmap comes after it): a write into
 * the range queued from now on (a retry) waits for its zeroing and last
 * read. Without one (the runtime refused) nothing is held.
 */
static void
vcl_pull_gate(void *arg)
{
	struct vcl_pull	*pu = arg;
	cl_context	 ctx;
	cl_event	 g;
	cl_int		 err = CL_SUCCESS;

	pthread_mutex_lock(&pu->lock);
	if (pu->ended || pu->gate != NULL ||
	    clGetCommandQueueInfo(pu->q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx,
	    NULL) != CL_SUCCESS || (g = clCreateUserEvent(ctx, &err)) ==
	    NULL || err != CL_SUCCESS) {
		pthread_mutex_unlock(&pu->lock);
		return;
	}
	if (clEnqueueMarkerWithWaitList(pu->q, 1, &g, NULL) == CL_SUCCESS) {
		pu->gate = g;
		clFlush(pu->q);
	} else {
		clSetUserEventStatus(g, CL_COMPLETE);
		clReleaseEvent(g);
	}
	pthread_mutex_unlock(&pu->lock);
}

/* The unmap completed (any thread): the pull ended; to the loop. */
static void CL_CALLBACK
vcl_pull_unmapped(cl_event ev, cl_int status, void *arg)
{
	struct vcl_pull	*pu = arg;

	pu->unmap_us = vcl_pull_now_us() - pu->unmap_us;
	if (status < 0 && pu->err == VCL_TP_OK) {
		pu->err = VCL_TP_EIO;
		snprintf(pu->why, sizeof pu->why, "unmap failed (%d)", status);
	}
	clReleaseEvent(ev);
	vcl_server_done_push(pu->d.s->srv, &pu->d);
}

/*
 * Mover thread, once our range is mapped (its own storage, unified
 * memory): read the peer's bytes into it in parts (this thread and the
 * helpers, parts of at least VCL_PULL_PART), make it defined if not all
 * came, let the queue go on, unmap it (always, once mapped, after every
 * part ended). No thread waits on the queue: the unmap's completion ends
 * the pull (a later pull's gate may be ahead of it in the queue).
 */
static void
vcl_peer_pull_run(void *arg)
{
	struct vcl_pull		*pu = arg;
	struct vcl_pull_part	 parts[17];
	cl_event		 ev = NULL;
	uint64_t		 per, off = 0;
	cl_int			 err, st = CL_COMPLETE;
	int			 i, np;

	/* At once from the map's callback; waits only where none was set. */
	if ((err = clWaitForEvents(1, &pu->mapev)) != CL_SUCCESS ||
	    clGetEventInfo(pu->mapev, CL_EVENT_COMMAND_EXECUTION_STATUS,
	    sizeof st, &st, NULL) != CL_SUCCESS || st < 0) {
		pu->err = VCL_TP_EBUSY;	/* this one through the ring */
		snprintf(pu->why, sizeof pu->why, "map failed (%d)",
		    st < 0 ? st : err);
		pu->map = NULL;
		vcl_pull_ungate(pu);
		vcl_server_done_push(pu->d.s->srv, &pu->d);
		return;
	}
	pthread_once(&vcl_pull_once, vcl_pull_helpers_init);
	pu->us = vcl_pull_now_us();
	pu->map_us = pu->us - pu->map_us;
	np = 1 + vcl_pull_nhelpers;
	if ((uint64_t)np > pu->len / VCL_PULL_PART)
		np = pu->len / VCL_PULL_PART > 0 ? (int)(pu->len /
		    VCL_PULL_PART) : 1;
	per = (pu->len / (uint64_t)np + 4095) & ~4095ull;
	pu->left = np;
	for (i = 0; i < np; i++) {
		parts[i].pu = pu;
		parts[i].off = off;
		parts[i].len = i == np - 1 ? pu->len - off : per;
		off += parts[i].len;
		if (i > 0 && vcl_workers_run(vcl_pull_helpers,
		    vcl_pull_part_run, &parts[i]) != 0)
			vcl_pull_part_run(&parts[i]);	/* here then */
	}
	vcl_pull_part_run(&parts[0]);
	pthread_mutex_lock(&pu->lock);
	while (pu->left > 0)
		pthread_cond_wait(&pu->cond, &pu->lock);
	pthread_mutex_unlock(&pu->lock);
	/*
	 * Not all read (stopped, failed, refused): the range may hold bytes
	 * the source no longer owned. Defined again (zeros) before the unmap
	 * and before the queue goes on (a retry, the ring, writes there).
	 */
	if (pu->err != VCL_TP_OK)
		memset(pu->map, 0, pu->len);
	vcl_pull_ungate(pu);
	pu->unmap_us = vcl_pull_now_us();
	pu->us = pu->unmap_us - pu->us;
	if ((err = clEnqueueUnmapMemObject(pu->q, pu->mem, pu->map, 0, NULL,
	    &ev)) == CL_SUCCESS) {
		clFlush(pu->q);
		if (clSetEventCallback(ev, CL_COMPLETE, vcl_pull_unmapped,
		    pu) == CL_SUCCESS)
			return;
		err = clWaitForEvents(1, &ev);
		vcl_pull_unmapped(ev, err, pu);
		return;
	}
	pu->unmap_us = 0;
	if (pu->err == VCL_TP_OK) {
		pu->err = VCL_TP_EIO;
		snprintf(pu->why, sizeof pu->why, "unmap failed (%d)", err);
	}
	vcl_server_done_push(pu->d.s->srv, &pu->d);
}

/* The map completed (any thread): the copy goes to a mover. */
static void CL_CALLBACK
vcl_pull_mapped(cl_event ev, cl_int status, void *arg)
{
	struct vcl_pull	*pu = arg;

	if (vcl_workers_run(pu->d.s->srv->movers, vcl_peer_pull_run, pu) != 0)
		vcl_peer_pull_run(pu);		/* here then */
}

/*
 * Loop: a pull ended (all its reads returned, its map undone): its
 * transfer, if it ended early meanwhile, is answered now; tell the
 * transport (DONE or ABORT to the source, which then unmaps), count it,
 * let go.
 */
static void
vcl_peer_pulled(struct vcl_done *d)
{
	struct vcl_pull		*pu = (struct vcl_pull *)d;
	struct vcl_server	*srv = d->s->srv;
	struct vcl_session	*t = pu->t;
	struct vcl_hobj		*ev;

	vcl_pull_detach(pu);
	if (pu->err == VCL_TP_OK) {
		srv->peer_bytes_direct += pu->len;
		srv->peer_direct++;
		vcl_log_debug("direct pull of %llu bytes from pid %ld: %llu "
		    "us in all, map %llu, copy %llu, unmap %llu",
		    (unsigned long long)pu->len, (long)pu->pid,
		    (unsigned long long)(vcl_pull_now_us() - pu->t0),
		    (unsigned long long)pu->map_us,
		    (unsigned long long)pu->us,
		    (unsigned long long)pu->unmap_us);
	} else
		vcl_log_warn("direct pull of %llu bytes from pid %ld: %s",
		    (unsigned long long)pu->len, (long)pu->pid, pu->why);
	if (pu->failed && !t->dead && (ev = vcl_handle_held(&t->handles,
	    pu->xevent, VCL_KIND_EVENT)) != NULL && ev->user &&
	    !ev->user_set) {
		vcl_peer_settle(t, ev, pu->fail);
		vcl_session_notify(t, pu->xevent, pu->fail, NULL, 0);
		vcl_session_flush(t);
	}
	vcl_session_unref(t);
	vcl_tp_pulled(pu->tp, pu->token, pu->err);
	clReleaseEvent(pu->mapev);
	pthread_mutex_destroy(&pu->lock);
	pthread_cond_destroy(&pu->cond);
	clReleaseMemObject(pu->mem);
	clReleaseCommandQueue(pu->q);
	vcl_session_unref(d->s);
	free(pu);
}

/*
 * The transport offers the whole placed push ps is reading in direct mode:
 * len bytes at addr in process pid. Read them into the waiting buffer's
 * range on a mover thread; 0 (vcl_tp_pulled follows, once), or -1: take
 * the chunks through the ring instead. Our address and length are the
 * transfer's own (its MigrateIn checked the range); the peer names only
 * where, in itself, to read.
 */
int
vcl_peer_pull_in(void *arg, long pid, uint64_t addr, uint64_t len,
    uint64_t token)
{
	struct vcl_session	*ps = arg, *t;
	struct vcl_hobj		*x = ps->in_xfer, *ctx, *mem, *mq;
	struct vcl_pull		*pu;
	cl_int			 err;

	if ((mem = vcl_peer_push_mem(ps, &ctx, &mq, &err)) == NULL ||
	    len != x->xsize || pid <= 0 || x->pull != NULL ||
	    (t = vcl_peer_target(ps->srv, ps->in_req->peer_push->session,
	    ps->in_req->peer_push->key)) == NULL ||
	    (pu = calloc(1, sizeof *pu)) == NULL)
		return (-1);
	pu->d.fn = vcl_peer_pulled;
	pu->d.s = ps;
	pu->tp = ps->tp_ep->tp;
	pu->token = token;
	pu->q = mq->u.queue;
	pu->mem = mem->u.mem;
	pu->off = x->xoff;
	pu->len = x->xsize;
	pu->pid = (pid_t)pid;
	pu->addr = addr;
	pu->t0 = vcl_pull_now_us();
	pthread_mutex_init(&pu->lock, NULL);
	pthread_cond_init(&pu->cond, NULL);
	/*
	 * Map our range without blocking (behind what the migration queue
	 * holds, a stopped pull's gate among them) and copy on a mover once
	 * it is mapped: no mover waits on the queue.
	 */
	pu->map_us = pu->t0;
	pu->map = clEnqueueMapBuffer(pu->q, pu->mem, CL_FALSE,
	    CL_MAP_WRITE_INVALIDATE_REGION, pu->off, pu->len, 0, NULL,
	    &pu->mapev, &err);
	if (pu->map == NULL || err != CL_SUCCESS) {
		pthread_mutex_destroy(&pu->lock);
		pthread_cond_destroy(&pu->cond);
		free(pu);
		return (-1);
	}
	clFlush(pu->q);
	clRetainCommandQueue(pu->q);
	clRetainMemObject(pu->mem);
	vcl_session_ref(ps);
	if (clSetEventCallback(pu->mapev, CL_COMPLETE, vcl_pull_mapped, pu) !=
	    CL_SUCCESS && vcl_workers_run(ps->srv->movers, vcl_peer_pull_run,
	    pu) != 0)
		vcl_peer_pull_run(pu);	/* waits for the map here */
	ps->in_oob_pull = 2;	/* taken: not a fallback */
	if (getenv("VCL_TEST_DIRECT_HOLD") != NULL)
		vcl_log_info("direct pull for transfer %llu queued",
		    (unsigned long long)x->id);
	/* Bound to its transfer until it ended (see struct vcl_pull). */
	pu->t = t;
	vcl_session_ref(t);
	pu->x = x;
	pu->xevent = x->xevent;
	x->pull = pu;
	return (0);
}

/* A MigrateOut's read finished: push the bytes, or the failure. */
static void
vcl_migrate_pushed(void *arg)
{
	struct vcl_cmd	*c = arg;

	if (c->type == VCL_CMD_PUSH && c->status >= 0 && c->d.s != NULL)
		c->d.s->srv->metrics.migrations_out++;
	vcl_cmd_finish(c);	/* completes the command: notify, free */
}

/* The link dropped a push: its command fails. */
static void
vcl_migrate_dropped(void *arg)
{
	struct vcl_cmd	*c = arg;

	c->status = CL_DEVICE_NOT_AVAILABLE;
	vcl_cmd_finish(c);
}

/*
 * Send a finished command's result to its peer: a MigrateOut's bytes or
 * a forwarded event's status. Called by the command's completion; takes
 * ownership of c (completed once the peer link is done with it).
 */
void
vcl_peer_forward(struct vcl_cmd *c)
{
	struct vcl_session	*s = c->d.s;
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__PeerPush		 push = VCL__PEER_PUSH__INIT;
	Vcl__PeerEvent		 pe = VCL__PEER_EVENT__INIT;
	cl_int			 st = c->status < 0 ? c->status : CL_SUCCESS;

	c->then = NULL;		/* completes for good when sent */
	vcl_log_debug("%s %llu to %s", c->type == VCL_CMD_PUSH ? "push" :
	    "event", (unsigned long long)c->xid, c->dest);
	if (c->type == VCL_CMD_PUSH && c->job != NULL) {
		struct vcl_place	*pl = c->job;

		if (st == CL_SUCCESS) {
			/* Its wait list is done: the chunks go now. */
			push.session = c->dest_session;
			push.key = c->dest_key;
			push.transfer = c->xid;
			req.call_case = VCL__REQUEST__CALL_PEER_PUSH;
			req.peer_push = &push;
			/* The link carries it from here (its placing). */
			vcl_peer_unhold(s->srv, pl->hold);
			pl->hold = 0;
			if (vcl_peer_send_placed(s->srv, c->dest, &req,
			    pl->size, pl->map, vcl_place_slot, vcl_place_done,
			    pl) == 0)
				return;
			st = CL_DEVICE_NOT_AVAILABLE;	/* the link went */
			c->status = st;
		}
		vcl_peer_place_drop(c);
	}
	if (c->type == VCL_CMD_PUSH) {
		push.session = c->dest_session;
		push.key = c->dest_key;
		push.transfer = c->xid;
		push.status = st;
		req.call_case = VCL__REQUEST__CALL_PEER_PUSH;
		req.peer_push = &push;
		vcl_peer_send(s, c->dest, &req,
		    st == CL_SUCCESS ? c->stage->data : NULL,
		    st == CL_SUCCESS ? c->stage->size : 0, vcl_migrate_pushed,
		    vcl_migrate_dropped, c);
		return;
	}
	pe.session = c->dest_session;
	pe.key = c->dest_key;
	pe.proxy = c->xid;
	pe.status = st;
	req.call_case = VCL__REQUEST__CALL_PEER_EVENT;
	req.peer_event = &pe;
	vcl_peer_send(s, c->dest, &req, NULL, 0, vcl_migrate_pushed,
	    vcl_migrate_dropped, c);
}

/* Fill a command's peer destination. Returns 0 or -1 (out of memory). */
static int
vcl_cmd_dest(struct vcl_cmd *c, const Vcl__PeerDest *d, uint64_t xid)
{
	if ((c->dest = strdup(d->addr)) == NULL)
		return (-1);
	c->dest_session = d->session;
	c->dest_key = d->key;
	c->xid = xid;
	return (0);
}


/*
 * A placed migration of a buffer range, when the link to its destination
 * can place it (vcl_peer_placeable); NULL: the push goes as usual.
 */
static struct vcl_place *
vcl_place_new(struct vcl_session *s, struct vcl_cmd *c, struct vcl_hobj *mq,
    struct vcl_hobj *mem, const Vcl__MigrateOut *m)
{
	struct vcl_tp_ep	*ep;
	struct vcl_place	*pl;
	struct vcl_hobj		*ctx;

	if (mem->u.mem == NULL || mem->image ||
	    (pl = calloc(1, sizeof *pl)) == NULL)
		return (NULL);
	if ((ep = vcl_peer_placeable(s->srv, m->dest->addr, m->size,
	    &pl->hold)) == NULL) {
		free(pl);
		return (NULL);
	}
	pl->s = s;
	pl->c = c;
	vcl_session_ref(s);
	pl->tp = ep->tp;
	pl->q = mq->u.queue;
	clRetainCommandQueue(pl->q);
	pl->mem = mem->u.mem;
	clRetainMemObject(pl->mem);
	pl->off = m->offset;
	pl->size = m->size;
	pl->ctx = m->context;
	pl->refs = 1;		/* the PUSH's */
	if ((ctx = vcl_handle_get(&s->handles, m->context,
	    VCL_KIND_CONTEXT)) != NULL && ctx->error == CL_SUCCESS &&
	    vcl_peer_direct_on() && vcl_peer_unified(ctx->u.ctx))
		pl->direct = 1;
	vcl_log_debug("migration of %llu bytes to %s: shared staging",
	    (unsigned long long)m->size, m->dest->addr);
	return (pl);
}

/*
 * The read of a MigrateOut: read the range on the context's own queue into
 * staging (after its wait list); the completion pushes it to the peer.
 */
static void
vcl_migrate_out_run(struct vcl_session *s, const Vcl__MigrateOut *m,
    uint64_t seq)
{
	Vcl__Enqueue		 e = VCL__ENQUEUE__INIT;
	struct vcl_hobj		*ctx, *mem, *mq = NULL;
	struct vcl_enq		 enq;
	struct vcl_cmd		*c;
	cl_int			 err = CL_SUCCESS;

	if ((c = vcl_cmd_new(VCL_CMD_PUSH, seq)) == NULL ||
	    vcl_cmd_dest(c, m->dest, m->transfer) != 0) {
		if (c != NULL)
			free(c);
		vcl_session_close(s, "out of memory");
		return;
	}
	c->then = vcl_peer_forward;
	memset(&enq, 0, sizeof enq);
	e.has_event = m->has_event;
	e.event = m->event;
	e.wait = m->wait;	/* none is an unset user event (held till then) */
	e.n_wait = m->n_wait;
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else if ((err = ctx->error) == CL_SUCCESS)
		mq = vcl_context_queue(ctx, &err);
	if (mq != NULL && (err = vcl_enq_begin_queue(s, &e, &enq, mq)) ==
	    CL_SUCCESS) {
		if ((mem = vcl_mem_range_get(s, m->mem, m->offset, m->size,
		    &err)) == NULL)
			;
		else if ((c->job = vcl_place_new(s, c, mq, mem, m)) != NULL) {
			/*
			 * Shared staging: once the wait list is done (this
			 * marker), the chunks are read straight into the
			 * slots the destination offers (vcl_peer_forward).
			 */
			struct vcl_place	*pl = c->job;

			vcl_session_flush_queues(s);
			/*
			 * Direct mode: the range mapped for reading after
			 * the wait list (its own storage, at once, here),
			 * which the destination may read from.
			 */
			if (pl->direct && (pl->map = clEnqueueMapBuffer(
			    mq->u.queue, pl->mem, CL_FALSE, CL_MAP_READ,
			    pl->off, pl->size, enq.nwait, enq.wait, &enq.ev,
			    &err)) != NULL && err == CL_SUCCESS)
				;
			else {
				pl->map = NULL;
				err = clEnqueueMarkerWithWaitList(mq->u.queue,
				    enq.nwait, enq.wait, &enq.ev);
			}
			if (err == CL_SUCCESS)
				clFlush(mq->u.queue);
		} else if ((c->stage = vcl_stage_get(s, ctx, m->size,
		    CL_OUT_OF_RESOURCES, &err)) != NULL) {
			/*
			 * The last writer is on an application queue, maybe
			 * not submitted yet this batch; a runtime may wait in
			 * a read into pageable memory (NVIDIA's does).
			 */
			vcl_session_flush_queues(s);
			err = vcl_image_xfer(mq->u.queue, mem, 0, m->offset,
			    m->size, c->stage->data, enq.nwait, enq.wait,
			    &enq.ev);
			/* Submitted now, as in vcl_arrive. */
			if (err == CL_SUCCESS)
				vcl_session_flush_queue(s, mq);
		}
	}
	if (enq.q == NULL)
		enq.event_id = m->has_event ? m->event : 0;
	vcl_enq_end(s, &enq, err, c);
}

/*
 * MigrateOut: read a buffer range (after its last writer) and push it to
 * the named peer session. The client's event, if any, completes once the
 * bytes are on the link. The session held it until no event it waits for
 * is an unset user event (vcl_hold.c).
 */
void
vcl_op_migrate_out(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	if (req->migrate_out->n_wait > 16) {
		vcl_session_close(s, "migration waits for too many events");
		return;
	}
	vcl_migrate_out_run(s, req->migrate_out, req->seq);
}

/*
 * ForwardEvent: when one of our events completes, tell the peer session
 * waiting on it (its proxy event). A failed event is told at once.
 */
void
vcl_op_forward_event(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__ForwardEvent	*m = req->forward_event;
	struct vcl_hobj		*o;
	struct vcl_cmd		*c;
	cl_int			 err;

	if ((c = vcl_cmd_new(VCL_CMD_FORWARD, req->seq)) == NULL ||
	    vcl_cmd_dest(c, m->dest, m->proxy) != 0) {
		if (c != NULL)
			free(c);
		vcl_session_close(s, "out of memory");
		return;
	}
	c->then = vcl_peer_forward;
	c->d.s = s;
	vcl_session_ref(s);
	o = vcl_handle_get(&s->handles, m->event, VCL_KIND_EVENT);
	if (o == NULL)
		err = CL_INVALID_EVENT;
	else if (o->error != CL_SUCCESS)
		err = o->error;
	else if (o->u.event == NULL)	/* one of ours, set (vcl_hold.c) */
		err = o->user_set ? CL_SUCCESS : CL_INVALID_EVENT;
	else {
		clRetainEvent(o->u.event);
		c->ev = o->u.event;
		err = vcl_cmd_watch(s, c);
		return;
	}
	c->status = err;
	vcl_peer_forward(c);
}

/* CreateProxyEvent: an event here that a peer completes. */
void
vcl_op_create_proxy_event(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateProxyEvent	*m = req->create_proxy_event;
	struct vcl_hobj			*o, *ctx, *early;
	cl_int				 err = CL_SUCCESS, status = 1;

	/* The completion (or a failure) may have come first. */
	if ((early = vcl_handle_find(&s->early, m->id)) != NULL) {
		status = early->error < 0 ? early->error : CL_COMPLETE;
		vcl_early_drop(s, early);
	} else if (vcl_peer_lost(s, m->source))
		status = CL_DEVICE_NOT_AVAILABLE;	/* nobody will */
	if (!vcl_peer_source_ok(m->source))
		err = CL_INVALID_VALUE;
	if ((o = vcl_session_add(s, m->id, VCL_KIND_EVENT)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;
	o->user = 1;
	if (err == CL_SUCCESS && m->source != NULL)
		o->source = strdup(m->source);
	/* A user event of ours only, like a migration's (vcl_op_migrate_in). */
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (err != CL_SUCCESS)
		;
	else if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else
		err = ctx->error;
	o->error = err;
	/* A peer completes it, with a source or without (PeerEvent). */
	o->proxy = err == CL_SUCCESS;
	if (err == CL_SUCCESS && status <= CL_COMPLETE)
		vcl_peer_settle(s, o, status);
}

/*
 * PeerEvent, on a peer link: complete a proxy event (or keep it early).
 * Any other object of the session it names is refused and left alone.
 */
void
vcl_op_peer_event(struct vcl_session *ps, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__PeerEvent	*m = req->peer_event;
	struct vcl_session	*t;
	struct vcl_hobj		*o;

	if ((t = vcl_peer_target(ps->srv, m->session, m->key)) == NULL)
		return;
	if ((o = vcl_handle_find(&t->handles, m->proxy)) != NULL) {
		if (o->kind == VCL_KIND_EVENT && o->proxy) {
			vcl_peer_settle(t, o, m->status);
			vcl_session_settled(t, o);
		} else
			vcl_peer_refuse(ps, req, "event names an object that "
			    "is not a proxy event");
		return;
	}
	if (vcl_handle_find(&t->early, m->proxy) != NULL) {
		vcl_peer_refuse(ps, req, "a second event for one proxy");
		return;
	}
	if ((o = vcl_early_add(t, m->proxy)) == NULL)
		return;
	o->error = m->status < 0 ? m->status : CL_SUCCESS;
}

/*
 * PeerFail: the client saw a transfer fail at its source, or lost a node:
 * fail what waits here for it, so nothing waits forever. An id that is not
 * here yet (its MigrateIn or proxy still held, or on its way) is kept as a
 * failure in the early table; a lost source is remembered (vcl_peer_lose).
 */
void
vcl_op_peer_fail(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__PeerFail	*m = req->peer_fail;
	struct vcl_hobj		*o, *next;
	cl_int			 st = m->status < 0 ? m->status :
	    CL_DEVICE_NOT_AVAILABLE;
	size_t			 i;

	for (i = 0; i < m->n_ids; i++) {
		o = vcl_handle_find(&s->handles, m->ids[i]);
		if (o != NULL && o->kind == VCL_KIND_XFER && !o->arrived) {
			vcl_xfer_fail(s, o, st);
			vcl_xfer_end(s, o);
		} else if (o != NULL && o->kind == VCL_KIND_EVENT && o->user) {
			vcl_peer_settle(s, o, st);
			vcl_session_settled(s, o);
		} else if (o == NULL && vcl_handle_find(&s->early,
		    m->ids[i]) == NULL && (o = vcl_early_add(s,
		    m->ids[i])) != NULL)
			o->error = st;
	}
	if (m->source == NULL)
		return;
	if (!vcl_peer_source_ok(m->source)) {
		vcl_session_warn(s, "PeerFail: a source of over %d bytes: "
		    "ignored", VCL_SOURCE_MAX);
		return;
	}
	vcl_peer_lose(s, m->source);
	for (i = 0; i < s->handles.nslots; i++)
		for (o = s->handles.slots[i]; o != NULL; o = o->next)
			if (o->source != NULL && !o->arrived &&
			    strcmp(o->source, m->source) == 0) {
				if (o->kind == VCL_KIND_XFER)
					vcl_xfer_fail(s, o, st);
				else
					vcl_peer_settle(s, o, st);
			}
	vcl_xfer_sweep(s);	/* the transfers failed above */
	/*
	 * A proxy the client released was kept for its peer (it is set
	 * now): it goes, unless a held request still waits on it. Freed
	 * after the walk above, which settling must not cut short.
	 */
	for (i = 0; i < s->handles.nslots; i++)
		for (o = s->handles.slots[i]; o != NULL; o = next) {
			next = o->next;
			if (o->kind == VCL_KIND_EVENT && o->proxy &&
			    o->user_set)
				vcl_session_settled(s, o);
		}
}

/*
 * Tear a transfer down (released by its client, or its session closing).
 * A peer still streaming into it drops the rest (read into the link's own
 * buffer and discarded) before the staging goes: arrived or not, it is
 * freed and its charge returned; a MigrateIn waiting on it fails.
 */
void
vcl_peer_xfer_release(struct vcl_session *s, struct vcl_hobj *o)
{
	int	pulling = o->pull != NULL;

	/*
	 * A direct pull still writes its range: it stops at its next piece,
	 * and its end (not a cancel now) ends the receive and tells the
	 * source (ABORT), which keeps its range mapped until then.
	 */
	if (pulling) {
		vcl_pull_stop(o->pull, 0);
		vcl_pull_detach(o->pull);
	}
	if (o->receiving != NULL) {
		struct vcl_session	*ps = o->receiving;

		if (ps->in_xfer == o) {
			/*
			 * Out of band, the transport owns the staging
			 * until its receive completes: the link frees
			 * it then. A placed receive is cancelled (the
			 * sender hears, and stops); one of a single
			 * message is not: its sender would wait for a
			 * receive that never came (a rendezvous holds
			 * the send until then), its migration's staging
			 * charged and its client waiting, until the link
			 * closed. The bytes land in the orphan, dropped.
			 */
			if (ps->in_state == VCL_IN_OOB &&
			    !ps->in_oob_done && ps->tp_ep != NULL) {
				ps->in_oob_orphan = o->data;
				ps->in_oob_orphan_len = o->bytes;
				o->data = NULL;
				if (ps->in_oob_placed && !pulling)
					vcl_tp_cancel(ps->tp_ep,
					    ps->in_oob_xid);
			}
			ps->in_bulk = NULL;
			ps->in_bulk_borrowed = 0;
			ps->in_xfer = NULL;
		}
		o->receiving = NULL;
	}
	if (o->xevent != 0)
		s->nxfer--;	/* a MigrateIn's, waiting */
	if (o->data != NULL)
		vcl_pool_put(o->data, o->bytes);
	vcl_session_uncharge(s, o->bytes);
	o->data = NULL;
	o->bytes = 0;
	if (!o->arrived && o->u.event != NULL && !o->user_set)
		clSetUserEventStatus(o->u.event,
		    CL_DEVICE_NOT_AVAILABLE);
	if (o->u.event != NULL)
		clReleaseEvent(o->u.event);
}
