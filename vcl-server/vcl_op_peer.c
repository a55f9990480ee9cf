/*
 * vcl_op_peer.c - the server's half of many nodes: migrating a buffer's
 * bytes straight to another server (MigrateOut/MigrateIn, PeerPush) and
 * completing events across servers (ForwardEvent/CreateProxyEvent,
 * PeerEvent). Either half of a pair may arrive first; what comes early is
 * kept as an XFER entry (bytes or a status) until its partner arrives.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "vcl_log.h"
#include "vcl_pool.h"
#include "vcl_server.h"

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

/* A waiting transfer failed at its source: fail the client's event. */
static void
vcl_xfer_fail(struct vcl_session *s, struct vcl_hobj *x, cl_int status)
{
	struct vcl_hobj	*ev;

	if ((ev = vcl_handle_get(&s->handles, x->xevent, VCL_KIND_EVENT)) !=
	    NULL && !ev->user_set) {
		vcl_peer_settle(s, ev, status);
		vcl_session_notify(s, x->xevent, status, NULL, 0);
	}
	x->arrived = 1;		/* settled; staging freed with it */
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

	o = vcl_handle_get(&s->handles, event_id, VCL_KIND_EVENT);
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
 * wait on it. Takes data (and its charge) in every case.
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
	if ((ctx = vcl_handle_get(&s->handles, ctx_id, VCL_KIND_CONTEXT)) ==
	    NULL || (mem = vcl_handle_get(&s->handles, mem_id,
	    VCL_KIND_MEM)) == NULL || mem->error != CL_SUCCESS ||
	    ctx->error != CL_SUCCESS)
		err = CL_INVALID_MEM_OBJECT;	/* released meanwhile */
	else if ((mq = vcl_context_queue(ctx, &err)) != NULL) {
		err = vcl_image_xfer(mq->u.queue, mem, 1, off, size, data, 0,
		    NULL, &c->ev);
		if (err == CL_SUCCESS) {
			/*
			 * Submit now, not at the batch's end: commands on
			 * other queues wait on it, and NVIDIA's runtime held
			 * the loop for milliseconds flushing those first.
			 */
			clFlush(mq->u.queue);
			vcl_arrive_rebind(s, event_id, c->ev);
			(void)vcl_cmd_watch(s, c);
			return;
		}
	}
	c->status = err;
	vcl_cmd_finish(c);
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

	x = vcl_handle_get(&s->handles, m->transfer, VCL_KIND_XFER);
	if ((x != NULL && !x->arrived) || !m->q->has_event ||
	    m->q->event == 0 || vcl_handle_find(&s->handles, m->q->event)) {
		vcl_session_close(s, "bad migration request");
		return;
	}
	if ((ev = vcl_session_add(s, m->q->event, VCL_KIND_EVENT)) == NULL)
		return;
	ev->user = 1;
	if ((q = vcl_handle_get(&s->handles, m->q->queue, VCL_KIND_QUEUE)) ==
	    NULL)
		err = CL_INVALID_COMMAND_QUEUE;
	else if ((err = q->error) == CL_SUCCESS) {
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
	} else if (err == CL_SUCCESS) {
		/* Stage the bytes here when they come. */
		if ((data = vcl_stage_alloc(s, cx, m->size,
		    CL_MEM_OBJECT_ALLOCATION_FAILURE, &err)) == NULL)
			;
		else if ((x = vcl_session_add(s, m->transfer,
		    VCL_KIND_XFER)) == NULL || x->error != CL_SUCCESS) {
			vcl_pool_put(data, m->size);
			vcl_session_uncharge(s, m->size);
			err = CL_OUT_OF_RESOURCES;
			if (x != NULL) {
				vcl_session_release(s, x);
				vcl_handle_del(&s->handles, x);
			}
			x = NULL;
		} else {
			x->data = data;
			x->bytes = m->size;	/* charged to the session */
			x->xctx = ctx_id;
			x->xmem = m->mem;
			x->xoff = m->offset;
			x->xevent = m->q->event;
			if (m->source != NULL)
				x->source = strdup(m->source);
			return;
		}
	}
	if (x != NULL && x->arrived) {
		vcl_session_release(s, x);
		vcl_handle_del(&s->handles, x);
	}
	if (err != CL_SUCCESS) {
		ev->error = err;
		vcl_peer_settle(s, ev, err);
		vcl_session_notify(s, m->q->event, err, NULL, 0);
	}
}

/*
 * Where a PeerPush's bytes go: straight into the waiting transfer's
 * staging when there is one of that size. Called when its frame head is
 * in, before the bytes; NULL: the session stages them itself.
 */
struct vcl_hobj *
vcl_op_peer_push_dst(struct vcl_session *ps, const Vcl__Request *req,
    uint64_t len)
{
	const Vcl__PeerPush	*m = req->peer_push;
	struct vcl_session	*t;
	struct vcl_hobj		*x;

	if ((t = vcl_peer_target(ps->srv, m->session, m->key)) == NULL ||
	    (x = vcl_handle_get(&t->handles, m->transfer,
	    VCL_KIND_XFER)) == NULL || x->arrived || x->receiving != NULL ||
	    x->bytes != len)
		return (NULL);
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
	if (bulk->data == NULL || bulk->len != x->bytes)
		return (CL_INVALID_VALUE);
	vcl_pool_put(x->data, x->bytes);
	vcl_session_uncharge(t, x->bytes);
	if (vcl_charge_move(ps, t, bulk->len) != 0) {
		x->data = NULL;
		x->bytes = 0;
		return (CL_MEM_OBJECT_ALLOCATION_FAILURE);
	}
	x->data = bulk->data;
	bulk->data = NULL;
	return (CL_SUCCESS);
}

/*
 * PeerPush, on a peer link: a transfer's bytes (or its failure) for one of
 * our client sessions. Releases the gated write, or keeps what came early.
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
		vcl_log_info("push for no session %llu: dropped",
		    (unsigned long long)m->session);
		return;
	}
	if (status >= 0 && bulk->err != CL_SUCCESS)
		status = bulk->err;
	x = vcl_handle_get(&t->handles, m->transfer, VCL_KIND_XFER);
	if (x != NULL && !x->arrived) {
		/*
		 * Waiting: the bytes landed in its staging (or failed). If
		 * the MigrateIn ran while they were on their way, they are in
		 * the link's staging instead: take that one.
		 */
		if (status >= 0 && !bulk->borrowed)
			status = vcl_xfer_take(ps, t, x, bulk);
		x->receiving = NULL;
		if (status >= 0) {
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
	if (x != NULL)
		return;		/* a second push for one transfer: ignore */
	/* Early: keep bytes or status until the MigrateIn comes. */
	if ((x = vcl_session_add(t, m->transfer, VCL_KIND_XFER)) == NULL)
		return;
	x->arrived = 1;
	x->error = status < 0 ? status : x->error;
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

/* A MigrateOut's read finished: push the bytes, or the failure. */
static void
vcl_migrate_pushed(void *arg)
{
	vcl_cmd_finish(arg);	/* completes the command: notify, free */
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

	c->forwarded = 1;
	vcl_log_debug("%s %llu to %s", c->type == VCL_CMD_PUSH ? "push" :
	    "event", (unsigned long long)c->xid, c->dest);
	if (c->type == VCL_CMD_PUSH) {
		push.session = c->dest_session;
		push.key = c->dest_key;
		push.transfer = c->xid;
		push.status = st;
		req.call_case = VCL__REQUEST__CALL_PEER_PUSH;
		req.peer_push = &push;
		vcl_peer_send(s->srv, c->dest, &req,
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
	vcl_peer_send(s->srv, c->dest, &req, NULL, 0, vcl_migrate_pushed,
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
		else if ((c->stage = vcl_stage_get(s, ctx, m->size,
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
			if (err == CL_SUCCESS)
				clFlush(mq->u.queue);	/* as in vcl_arrive */
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

	/* The completion may have come first, kept under the same id. */
	if ((early = vcl_handle_get(&s->handles, m->id, VCL_KIND_XFER)) !=
	    NULL && early->arrived) {
		status = early->error < 0 ? early->error : CL_COMPLETE;
		vcl_session_release(s, early);
		vcl_handle_del(&s->handles, early);
	}
	if ((o = vcl_session_add(s, m->id, VCL_KIND_EVENT)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;
	o->user = 1;
	if (m->source != NULL)
		o->source = strdup(m->source);
	/* A user event of ours only, like a migration's (vcl_op_migrate_in). */
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else
		err = ctx->error;
	o->error = err;
	if (err == CL_SUCCESS && status <= CL_COMPLETE)
		vcl_peer_settle(s, o, status);
}

/* PeerEvent, on a peer link: complete a proxy event (or keep it early). */
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
		if (o->kind == VCL_KIND_EVENT && o->user && o->source != NULL) {
			vcl_peer_settle(t, o, m->status);
			vcl_session_settled(t, o);
		}
		return;
	}
	if ((o = vcl_session_add(t, m->proxy, VCL_KIND_XFER)) == NULL)
		return;
	o->arrived = 1;
	o->error = m->status < 0 ? m->status : CL_SUCCESS;
}

/*
 * PeerFail: the client saw a transfer fail at its source, or lost a node:
 * fail what waits here for it, so nothing waits forever.
 */
void
vcl_op_peer_fail(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__PeerFail	*m = req->peer_fail;
	struct vcl_hobj		*o;
	cl_int			 st = m->status < 0 ? m->status :
	    CL_DEVICE_NOT_AVAILABLE;
	size_t			 i;

	for (i = 0; i < m->n_ids; i++) {
		o = vcl_handle_find(&s->handles, m->ids[i]);
		if (o != NULL && o->kind == VCL_KIND_XFER && !o->arrived)
			vcl_xfer_fail(s, o, st);
		else if (o != NULL && o->kind == VCL_KIND_EVENT && o->user) {
			vcl_peer_settle(s, o, st);
			vcl_session_settled(s, o);
		}
	}
	if (m->source == NULL)
		return;
	for (i = 0; i < s->handles.nslots; i++)
		for (o = s->handles.slots[i]; o != NULL; o = o->next)
			if (o->source != NULL && !o->arrived &&
			    strcmp(o->source, m->source) == 0) {
				if (o->kind == VCL_KIND_XFER)
					vcl_xfer_fail(s, o, st);
				else
					vcl_peer_settle(s, o, st);
			}
}
