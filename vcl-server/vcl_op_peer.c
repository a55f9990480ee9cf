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
 * Complete a waiting transfer or proxy event with a status: its user
 * event gates the command(s) behind it. Negative: they fail.
 */
static void
vcl_peer_settle(struct vcl_session *s, struct vcl_hobj *o, cl_int status)
{
	if (o->u.event != NULL && !o->user_set) {
		o->user_set = 1;
		clSetUserEventStatus(o->u.event, status < 0 ? status :
		    CL_COMPLETE);
	}
	if (status < 0)
		vcl_cmd_reap(s);
}

/* The queue's context, or NULL. */
static cl_context
vcl_queue_context(cl_command_queue q)
{
	cl_context	ctx = NULL;

	clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL);
	return (ctx);
}

/*
 * MigrateIn: a buffer range's bytes are coming from a peer. The write into
 * the buffer is enqueued now, gated by a user event the push releases, so
 * the client's later commands order behind it like behind any write.
 */
void
vcl_op_migrate_in(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__MigrateIn	*m = req->migrate_in;
	struct vcl_hobj		*mem, *x;
	struct vcl_enq		 enq;
	struct vcl_cmd		*c;
	cl_event		*wait = NULL, gate = NULL;
	uint8_t			*data = NULL;
	cl_int			 err;

	if ((c = vcl_cmd_new(VCL_CMD_WRITE, req->seq)) == NULL) {
		vcl_session_close(s, "out of memory");
		return;
	}
	x = vcl_handle_get(&s->handles, m->transfer, VCL_KIND_XFER);
	if (x != NULL && !x->arrived) {
		free(c);
		vcl_session_close(s, "client reused a transfer id");
		return;
	}
	if ((err = vcl_enq_begin(s, m->q, &enq)) != CL_SUCCESS)
		goto out;
	if ((mem = vcl_handle_get(&s->handles, m->mem, VCL_KIND_MEM)) == NULL) {
		err = CL_INVALID_MEM_OBJECT;
		goto out;
	}
	if ((err = mem->error) != CL_SUCCESS)
		goto out;
	if (m->size == 0 || m->offset > mem->bytes ||
	    m->size > mem->bytes - m->offset) {
		err = CL_INVALID_VALUE;
		goto out;
	}
	if (x != NULL) {
		/* The bytes (or the failure) came first. */
		if ((err = x->error) != CL_SUCCESS)
			goto out;
		if (x->bytes != m->size) {
			err = CL_INVALID_VALUE;
			goto out;
		}
		if ((c->stage = vcl_stage_new(s, x->data, x->bytes)) == NULL) {
			err = CL_OUT_OF_HOST_MEMORY;
			goto out;
		}
		x->data = NULL;
		x->bytes = 0;		/* the charge moved to the stage */
		err = clEnqueueWriteBuffer(enq.q->u.queue, mem->u.mem, CL_FALSE,
		    m->offset, m->size, c->stage->data, enq.nwait, enq.wait,
		    &enq.ev);
		goto out;
	}
	/* Wait for the bytes: stage them here, gate the write on them. */
	if (vcl_session_charge(s, m->size) != 0) {
		err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
		goto out;
	}
	if ((data = vcl_pool_get(m->size)) == NULL ||
	    (c->stage = vcl_stage_new(s, data, m->size)) == NULL) {
		vcl_pool_put(data, m->size);
		vcl_session_uncharge(s, m->size);
		err = CL_OUT_OF_HOST_MEMORY;
		goto out;
	}
	gate = clCreateUserEvent(vcl_queue_context(enq.q->u.queue), &err);
	if (err != CL_SUCCESS)
		goto out;
	if ((wait = calloc(enq.nwait + 1, sizeof *wait)) == NULL) {
		err = CL_OUT_OF_HOST_MEMORY;
		goto out;
	}
	if (enq.nwait > 0)
		memcpy(wait, enq.wait, enq.nwait * sizeof *wait);
	wait[enq.nwait] = gate;
	err = clEnqueueWriteBuffer(enq.q->u.queue, mem->u.mem, CL_FALSE,
	    m->offset, m->size, data, enq.nwait + 1, wait, &enq.ev);
	if (err == CL_SUCCESS &&
	    (x = vcl_session_add(s, m->transfer, VCL_KIND_XFER)) != NULL) {
		x->u.event = gate;
		gate = NULL;
		x->data = data;
		x->bytes = m->size;	/* expected; the stage holds the charge */
		if (m->source != NULL)
			x->source = strdup(m->source);
	}
out:
	free(wait);
	if (gate != NULL) {
		clSetUserEventStatus(gate, CL_DEVICE_NOT_AVAILABLE);
		clReleaseEvent(gate);
	}
	if (x != NULL && x->arrived) {
		vcl_session_release(s, x);
		vcl_handle_del(&s->handles, x);
	}
	vcl_enq_end(s, &enq, err, c);
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
	if ((t = vcl_peer_target(ps->srv, m->session, m->key)) == NULL) {
		vcl_log_info("push for no session %llu: dropped",
		    (unsigned long long)m->session);
		return;
	}
	if (status >= 0 && bulk->err != CL_SUCCESS)
		status = bulk->err;
	x = vcl_handle_get(&t->handles, m->transfer, VCL_KIND_XFER);
	if (x != NULL && !x->arrived) {
		/* Waiting: the bytes landed in its staging (or failed). */
		if (status >= 0 && !bulk->borrowed)
			status = CL_INVALID_VALUE;	/* wrong size */
		x->receiving = NULL;
		vcl_peer_settle(t, x, status);
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
		/* Move the charge from the link to the session it is for. */
		vcl_session_uncharge(ps, bulk->len);
		if (vcl_session_charge(t, bulk->len) != 0) {
			vcl_session_charge(ps, bulk->len);
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
 * MigrateOut: read a buffer range (after its last writer) and push it to
 * the named peer session. The client's event, if any, completes once the
 * bytes are on the link.
 */
void
vcl_op_migrate_out(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__MigrateOut	*m = req->migrate_out;
	Vcl__Enqueue		 e = VCL__ENQUEUE__INIT;
	struct vcl_hobj		*ctx, *mem;
	struct vcl_enq		 enq;
	struct vcl_cmd		*c;
	struct vcl_hobj		*mq;
	uint8_t			*data = NULL;
	cl_int			 err;

	if ((c = vcl_cmd_new(VCL_CMD_PUSH, req->seq)) == NULL ||
	    vcl_cmd_dest(c, m->dest, m->transfer) != 0) {
		if (c != NULL)
			free(c);
		vcl_session_close(s, "out of memory");
		return;
	}
	/* The wire names a context; the enqueue runs on its own queue. */
	memset(&enq, 0, sizeof enq);
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else if ((err = ctx->error) == CL_SUCCESS &&
	    (mq = vcl_context_queue(ctx, &err)) != NULL) {
		e.wait = m->wait;
		e.n_wait = m->n_wait;
		e.has_event = m->has_event;
		e.event = m->event;
		err = vcl_enq_begin_queue(s, &e, &enq, mq);
	}
	if (err == CL_SUCCESS) {
		if ((mem = vcl_handle_get(&s->handles, m->mem,
		    VCL_KIND_MEM)) == NULL)
			err = CL_INVALID_MEM_OBJECT;
		else if ((err = mem->error) != CL_SUCCESS)
			;
		else if (m->size == 0 || m->offset > mem->bytes ||
		    m->size > mem->bytes - m->offset)
			err = CL_INVALID_VALUE;
		else if (vcl_session_charge(s, m->size) != 0)
			err = CL_OUT_OF_RESOURCES;
		else if ((data = vcl_pool_get(m->size)) == NULL ||
		    (c->stage = vcl_stage_new(s, data, m->size)) == NULL) {
			vcl_pool_put(data, m->size);
			vcl_session_uncharge(s, m->size);
			err = CL_OUT_OF_HOST_MEMORY;
		} else
			err = clEnqueueReadBuffer(mq->u.queue, mem->u.mem,
			    CL_FALSE,
			    m->offset, m->size, data, enq.nwait, enq.wait,
			    &enq.ev);
	}
	vcl_enq_end(s, &enq, err, c);
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
	else if (o->error != CL_SUCCESS || o->u.event == NULL)
		err = o->error != CL_SUCCESS ? o->error : CL_INVALID_EVENT;
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
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else if ((err = ctx->error) == CL_SUCCESS)
		o->u.event = clCreateUserEvent(ctx->u.ctx, &err);
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
			if (o->released) {
				vcl_session_release(t, o);
				vcl_handle_del(&t->handles, o);
			}
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
		if (o != NULL && (o->kind == VCL_KIND_XFER ||
		    (o->kind == VCL_KIND_EVENT && o->user)) && !o->arrived) {
			vcl_peer_settle(s, o, st);
			if (o->released) {
				vcl_session_release(s, o);
				vcl_handle_del(&s->handles, o);
			}
		}
	}
	if (m->source == NULL)
		return;
	for (i = 0; i < s->handles.nslots; i++)
		for (o = s->handles.slots[i]; o != NULL; o = o->next)
			if (o->source != NULL && !o->arrived &&
			    strcmp(o->source, m->source) == 0)
				vcl_peer_settle(s, o, st);
}
