/* vcl_op_context.c - contexts, command queues, flush/finish, user events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_log.h"
#include "vcl_server.h"

#define VCL_QUEUE_PROPS_MAX	32

/*
 * Resolve an object a creation depends on. Returns it, or NULL with *err:
 * bad for a missing id, or the error the dependency's own creation failed
 * with.
 */
static struct vcl_hobj *
vcl_dep(struct vcl_session *s, uint64_t id, enum vcl_kind kind, cl_int bad,
    cl_int *err)
{
	struct vcl_hobj	*o;

	if ((o = vcl_handle_get(&s->handles, id, kind)) == NULL) {
		*err = bad;
		return (NULL);
	}
	if (o->error != CL_SUCCESS) {
		*err = o->error;
		return (NULL);
	}
	return (o);
}

/* CreateContext: a context over some of the served devices. */
void
vcl_op_create_context(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateContext	*m = req->create_context;
	struct vcl_backend		*be = &s->srv->be;
	cl_context_properties		 props[3];
	cl_device_id			 devs[64];
	struct vcl_hobj			*o;
	cl_int				 err = CL_SUCCESS;
	size_t				 i;

	if ((o = vcl_session_add(s, m->id, VCL_KIND_CONTEXT)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;		/* over the object limit */
	if (m->n_devices == 0 || m->n_devices > 64)
		err = CL_INVALID_VALUE;
	for (i = 0; i < m->n_devices && err == CL_SUCCESS; i++) {
		if (m->devices[i] >= be->ndevices)
			err = CL_INVALID_DEVICE;
		else
			devs[i] = be->devices[m->devices[i]];
	}
	if (err == CL_SUCCESS) {
		props[0] = CL_CONTEXT_PLATFORM;
		props[1] = (cl_context_properties)be->platform;
		props[2] = 0;
		o->u.ctx = clCreateContext(props, (cl_uint)m->n_devices, devs,
		    NULL, NULL, &err);
	}
	o->error = err;
	if (err != CL_SUCCESS)
		vcl_session_warn(s, "context %llu failed: %d",
		    (unsigned long long)m->id, err);
}

/*
 * Check one queue property from the wire, as libvcl does: host queues
 * only. A device-side queue is refused here, not by the runtime: PoCL 3.1
 * calls exit() for CL_QUEUE_ON_DEVICE, which would end the whole server.
 */
static cl_int
vcl_queue_prop(uint64_t name, uint64_t value)
{
	const uint64_t	host = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
	    CL_QUEUE_PROFILING_ENABLE;
	const uint64_t	device = CL_QUEUE_ON_DEVICE |
	    CL_QUEUE_ON_DEVICE_DEFAULT;

	if (name == CL_QUEUE_SIZE)
		return (CL_INVALID_QUEUE_PROPERTIES);
	if (name != CL_QUEUE_PROPERTIES || (value & ~(host | device)) != 0)
		return (CL_INVALID_VALUE);
	if (value & device)
		return (CL_INVALID_QUEUE_PROPERTIES);
	return (CL_SUCCESS);
}

/* CreateQueue: a command queue with the client's property list. */
void
vcl_op_create_queue(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateQueue	*m = req->create_queue;
	cl_queue_properties	 props[VCL_QUEUE_PROPS_MAX + 1];
	struct vcl_hobj		*o, *ctx;
	cl_int			 err = CL_SUCCESS;
	size_t			 i;

	if ((o = vcl_session_add(s, m->id, VCL_KIND_QUEUE)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;		/* over the object limit */
	ctx = vcl_dep(s, m->context, VCL_KIND_CONTEXT, CL_INVALID_CONTEXT,
	    &err);
	if (err == CL_SUCCESS && m->device >= s->srv->be.ndevices)
		err = CL_INVALID_DEVICE;
	if (err == CL_SUCCESS && (m->n_properties > VCL_QUEUE_PROPS_MAX ||
	    m->n_properties % 2 != 0))
		err = CL_INVALID_VALUE;
	for (i = 0; err == CL_SUCCESS && i < m->n_properties; i += 2)
		err = vcl_queue_prop(m->properties[i], m->properties[i + 1]);
	if (err == CL_SUCCESS) {
		for (i = 0; i < m->n_properties; i++) {
			props[i] = m->properties[i];
			if (i % 2 == 0 && props[i] == CL_QUEUE_PROPERTIES &&
			    (m->properties[i + 1] &
			    CL_QUEUE_PROFILING_ENABLE))
				o->profiling = 1;
		}
		props[i] = 0;
		o->u.queue = clCreateCommandQueueWithProperties(ctx->u.ctx,
		    s->srv->be.devices[m->device], props, &err);
	}
	o->device = m->device;
	o->xctx = m->context;
	o->error = err;
}

/* Flush: the batch flush covers it; mark the queue so it is flushed. */
void
vcl_op_flush(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	struct vcl_hobj	*q;

	q = vcl_handle_get(&s->handles, req->flush->queue, VCL_KIND_QUEUE);
	if (q != NULL && q->error == CL_SUCCESS)
		vcl_session_mark_dirty(s, q);
}

/*
 * Finish: answered once a marker behind every earlier command completes,
 * never by blocking the loop in clFinish.
 */
void
vcl_op_finish(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	Vcl__Enqueue	 e = VCL__ENQUEUE__INIT;
	struct vcl_enq	 enq;
	struct vcl_cmd	*c;
	cl_int		 err;

	if ((c = vcl_cmd_new(VCL_CMD_FINISH, req->seq)) == NULL) {
		vcl_session_reply(s, req->seq, CL_OUT_OF_HOST_MEMORY, NULL);
		return;
	}
	e.queue = req->finish->queue;
	if ((err = vcl_enq_begin(s, &e, &enq)) == CL_SUCCESS)
		err = clEnqueueMarkerWithWaitList(enq.q->u.queue, 0, NULL,
		    &enq.ev);
	vcl_enq_end(s, &enq, err, c);
}

/* CreateUserEvent: an event the client completes with SetUserEventStatus. */
void
vcl_op_create_user_event(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateUserEvent	*m = req->create_user_event;
	struct vcl_hobj			*o, *ctx;
	cl_int				 err = CL_SUCCESS;

	if ((o = vcl_session_add(s, m->id, VCL_KIND_EVENT)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;		/* over the object limit */
	o->user = 1;
	if ((ctx = vcl_dep(s, m->context, VCL_KIND_CONTEXT, CL_INVALID_CONTEXT,
	    &err)) != NULL)
		o->u.event = clCreateUserEvent(ctx->u.ctx, &err);
	o->error = err;
}

/* SetUserEventStatus: release the commands waiting on a user event. */
void
vcl_op_set_user_event_status(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__SetUserEventStatus	*m = req->set_user_event_status;
	struct vcl_hobj			*o;

	o = vcl_handle_get(&s->handles, m->event, VCL_KIND_EVENT);
	if (o == NULL || !o->user || o->u.event == NULL || o->user_set)
		return;		/* the client checked; nothing to report to */
	o->user_set = 1;
	clSetUserEventStatus(o->u.event, m->status);
	/*
	 * A failed event fails what waits for it here, before the runtime:
	 * PoCL leaves a command enqueued behind an already failed user event
	 * submitted forever.
	 */
	if (m->status < 0)
		o->error = m->status;
	if (m->status < 0)
		vcl_cmd_reap(s);
	s->want_kick = 1;	/* run at the end of the batch */
}
