/*
 * vcl_event.c - events: completion by server notification, waits,
 * callbacks, user events, markers and barriers, and the plumbing every
 * clEnqueue* shares (wait lists, the new event).
 */
#include <stdlib.h>
#include <string.h>

#include "vcl_client.h"
#include "vcl_conn.h"
#include "vcl_context.h"
#include "vcl_event.h"
#include "vcl_info.h"
#include "vcl_log.h"
#include "vcl_mem.h"
#include "vcl_object.h"
#include "vcl_platform.h"

pthread_mutex_t	vcl_ev_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t	vcl_ev_cond = PTHREAD_COND_INITIALIZER;

/* A new event of a command on queue (NULL: a user event of ctx). */
cl_event
vcl_event_new(cl_context ctx, cl_command_queue q, cl_command_type type)
{
	cl_event	ev;

	if ((ev = vcl_object_new(sizeof *ev, VCL_KIND_EVENT)) == NULL)
		return (NULL);
	ev->ctx = ctx;
	vcl_retain(ctx);
	ev->queue = q;
	if (q != NULL) {
		vcl_retain(q);
		ev->node = q->dev->node;
	}
	ev->type = type;
	ev->status = q != NULL ? CL_QUEUED : CL_SUBMITTED;
	return (ev);
}

/* Drop a reference; the last one releases the event on its node(s). */
void
vcl_event_unref(cl_event ev)
{
	int	i;

	if (!vcl_unref(ev))
		return;
	if (ev->remote) {
		if (ev->node != NULL)
			vcl_node_release(ev->node, vcl_kind_wire(ev->obj.kind),
			    ev->obj.id);
		else
			for (i = 0; i < vcl_nnodes(); i++)
				if (ev->ctx->nodes & (1ull << i))
					vcl_node_release(vcl_node_get(i),
					    vcl_kind_wire(ev->obj.kind),
					    ev->obj.id);
	}
	while (ev->cbs != NULL) {
		struct vcl_ev_cb	*cb = ev->cbs;

		ev->cbs = cb->next;
		free(cb);
	}
	if (ev->queue != NULL)
		vcl_queue_unref(ev->queue);
	vcl_context_unref(ev->ctx);
	vcl_object_free(ev);
}

/*
 * An event reached its final status (CL_COMPLETE or a negative error):
 * record it and its profiling times, wake waiters, run its callbacks.
 */
void
vcl_event_complete(cl_event ev, cl_int status, const cl_ulong *prof)
{
	struct vcl_ev_cb	*cbs, *cb;

	pthread_mutex_lock(&vcl_ev_lock);
	if (ev->status <= CL_COMPLETE) {
		pthread_mutex_unlock(&vcl_ev_lock);
		return;
	}
	if (ev->held) {
		/* The first word stands; it is told at vcl_event_unhold. */
		if (!ev->noted) {
			ev->noted = 1;
			ev->note_status = status;
			if ((ev->note_have_prof = prof != NULL))
				memcpy(ev->note_prof, prof,
				    sizeof ev->note_prof);
		}
		pthread_mutex_unlock(&vcl_ev_lock);
		return;
	}
	if (status == CL_COMPLETE && ev->fail < 0)
		status = ev->fail;
	ev->status = status;
	if (prof != NULL) {
		memcpy(ev->prof, prof, sizeof ev->prof);
		ev->have_prof = 1;
	}
	cbs = ev->cbs;
	ev->cbs = NULL;
	pthread_cond_broadcast(&vcl_ev_cond);
	pthread_mutex_unlock(&vcl_ev_lock);
	/* Waiters for it through its node (vcl_event_wait), before callbacks. */
	if (ev->node != NULL)
		vcl_node_wake(ev->node);
	/* Callbacks registered for earlier states fire now too. */
	while ((cb = cbs) != NULL) {
		cbs = cb->next;
		cb->fn(ev, status < 0 ? status : cb->when, cb->arg);
		free(cb);
	}
}

/*
 * Hold an event's completion: a command whose bytes land in parts (a
 * non-blocking read through the ring) keeps its event from completing,
 * whatever the server says, until they are all in (vcl_event_unhold).
 */
void
vcl_event_hold(cl_event ev)
{
	pthread_mutex_lock(&vcl_ev_lock);
	ev->held = 1;
	pthread_mutex_unlock(&vcl_ev_lock);
}

/*
 * The held command's bytes are all in; err (< 0): one of its parts
 * failed, which its final status then says even if the server's says
 * complete. A status the server sent meanwhile is told now.
 */
void
vcl_event_unhold(cl_event ev, cl_int err)
{
	cl_ulong	prof[4];
	cl_int		st;
	int		noted, have;

	pthread_mutex_lock(&vcl_ev_lock);
	ev->held = 0;
	if (err < 0 && ev->fail == 0)
		ev->fail = err;
	noted = ev->noted;
	st = ev->note_status;
	if ((have = ev->note_have_prof))
		memcpy(prof, ev->note_prof, sizeof prof);
	ev->noted = 0;
	pthread_mutex_unlock(&vcl_ev_lock);
	if (noted)
		vcl_event_complete(ev, st, have ? prof : NULL);
}

/* Is the event final? Called under its node's lock (vcl_node_wait). */
static int
vcl_event_final(struct vcl_node *n, void *arg)
{
	cl_event	ev = arg;
	int		fin;

	(void)n;
	pthread_mutex_lock(&vcl_ev_lock);
	fin = ev->status <= CL_COMPLETE;
	pthread_mutex_unlock(&vcl_ev_lock);
	return (fin);
}

/*
 * Wait until every event is final. An event of one node is waited for
 * through that node, so the waiting thread reads the notification itself
 * when no other thread reads there. Returns CL_SUCCESS or the list error.
 */
cl_int
vcl_event_wait(cl_uint n, const cl_event *list)
{
	cl_uint	i;
	cl_int	err = CL_SUCCESS;

	vcl_node_flush_all();
	for (i = 0; i < n; i++)
		if (list[i]->node != NULL)
			vcl_node_wait(list[i]->node, vcl_event_final, list[i]);
	pthread_mutex_lock(&vcl_ev_lock);
	for (i = 0; i < n; i++) {
		while (list[i]->status > CL_COMPLETE)
			pthread_cond_wait(&vcl_ev_cond, &vcl_ev_lock);
		if (list[i]->status < 0)
			err = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
	}
	pthread_mutex_unlock(&vcl_ev_lock);
	return (err);
}

/* Append an event id to the command's wait list, growing it. */
static cl_int
vcl_enq_wait_id(struct vcl_enq *q, uint64_t id)
{
	uint64_t	*w;
	size_t		 cap;

	if (q->e.n_wait == q->wait_cap) {
		cap = q->wait_cap * 2;
		if ((w = calloc(cap, sizeof *w)) == NULL)
			return (CL_OUT_OF_HOST_MEMORY);
		memcpy(w, q->e.wait, q->e.n_wait * sizeof *w);
		if (q->e.wait != q->wait_ids)
			free(q->e.wait);
		q->e.wait = w;
		q->wait_cap = cap;
	}
	q->e.wait[q->e.n_wait++] = id;
	return (CL_SUCCESS);
}

/* Make the command wait for an event of its own node too. */
cl_int
vcl_enq_wait(struct vcl_enq *q, cl_event ev)
{
	return (vcl_enq_wait_id(q, ev->obj.id));
}

/*
 * Wait on an event of another node without the client relaying it: the
 * event's node forwards its completion to a proxy event on ours.
 */
static cl_int
vcl_enq_proxy(struct vcl_enq *q, cl_context ctx, cl_event ev)
{
	Vcl__Request		req = VCL__REQUEST__INIT;
	Vcl__ForwardEvent	fe = VCL__FORWARD_EVENT__INIT;
	Vcl__CreateProxyEvent	cp = VCL__CREATE_PROXY_EVENT__INIT;
	Vcl__PeerDest		dest = VCL__PEER_DEST__INIT;
	Vcl__PeerFail		pf = VCL__PEER_FAIL__INIT;
	uint64_t		id = vcl_id_new();
	cl_int			err;

	if (q->nproxies == sizeof q->proxies / sizeof q->proxies[0])
		return (CL_OUT_OF_RESOURCES);
	cp.id = id;
	cp.context = ctx->obj.id;
	cp.source = ev->node->peer_addr;
	req.call_case = VCL__REQUEST__CALL_CREATE_PROXY_EVENT;
	req.create_proxy_event = &cp;
	if ((err = vcl_node_send(q->node, &req, NULL, 0, 0)) != CL_SUCCESS)
		return (err);
	q->proxies[q->nproxies++] = id;
	vcl_peer_dest(q->node, &dest);
	fe.event = ev->obj.id;
	fe.dest = &dest;
	fe.proxy = id;
	req.call_case = VCL__REQUEST__CALL_FORWARD_EVENT;
	req.forward_event = &fe;
	if (vcl_node_send(ev->node, &req, NULL, 0, VCL_SEND_FLUSH) !=
	    CL_SUCCESS) {
		/* Its node is gone: the proxy fails, and so the command. */
		pf.ids = &id;
		pf.n_ids = 1;
		pf.status = CL_DEVICE_NOT_AVAILABLE;
		req.call_case = VCL__REQUEST__CALL_PEER_FAIL;
		req.peer_fail = &pf;
		(void)vcl_node_send(q->node, &req, NULL, 0, 0);
	}
	return (vcl_enq_wait_id(q, id));
}

/*
 * Check a command's wait list and prepare the enqueue: the wire fields,
 * proxies for events of other nodes, and the new event when the caller
 * asked for one or need_event is set (a write whose event coherence
 * tracks); the caller's is watched before the command is sent, so its
 * notification cannot outrun it. One only coherence holds is quiet: the
 * server sends no notification for it, and its status here stays queued.
 */
cl_int
vcl_enq_prepare(struct vcl_enq *q, cl_command_queue cq, cl_uint n,
    const cl_event *list, cl_event *event, cl_command_type type,
    int need_event)
{
	cl_uint	i;
	cl_int	err;
	int	done;

	memset(q, 0, sizeof *q);
	vcl__enqueue__init(&q->e);
	if ((n > 0 && list == NULL) || (n == 0 && list != NULL))
		return (CL_INVALID_EVENT_WAIT_LIST);
	for (i = 0; i < n; i++) {
		if (!vcl_is(list[i], VCL_KIND_EVENT))
			return (CL_INVALID_EVENT_WAIT_LIST);
		if (list[i]->ctx != cq->ctx)
			return (CL_INVALID_CONTEXT);
	}
	q->node = cq->dev->node;
	q->e.queue = cq->obj.id;
	q->e.wait = q->wait_ids;
	q->wait_cap = sizeof q->wait_ids / sizeof q->wait_ids[0];
	for (i = 0; i < n; i++) {
		if (list[i]->node != NULL && list[i]->node != q->node) {
			/* Already complete: nothing to wait for over there. */
			pthread_mutex_lock(&vcl_ev_lock);
			done = list[i]->status == CL_COMPLETE;
			pthread_mutex_unlock(&vcl_ev_lock);
			err = done ? CL_SUCCESS : vcl_enq_proxy(q, cq->ctx,
			    list[i]);
		} else
			err = vcl_enq_wait(q, list[i]);
		if (err != CL_SUCCESS) {
			vcl_enq_finish(q, err, NULL);
			return (err);
		}
	}
	if (event != NULL || need_event) {
		if ((q->ev = vcl_event_new(cq->ctx, cq, type)) == NULL) {
			vcl_enq_finish(q, CL_OUT_OF_HOST_MEMORY, NULL);
			return (CL_OUT_OF_HOST_MEMORY);
		}
		q->internal = event == NULL;
		q->ev->remote = 1;
		q->e.has_event = 1;
		q->e.event = q->ev->obj.id;
		/*
		 * Ours (a last writer) is only named in wait lists on its
		 * own node: the server keeps it quiet, nothing comes back.
		 */
		if (q->internal)
			q->e.has_quiet = q->e.quiet = 1;
		else
			vcl_node_watch(q->node, q->ev);
	}
	return (CL_SUCCESS);
}

/*
 * After the send: hand the event out (or drop ours), drop the command's
 * proxies (the server keeps what the command waits on), or undo it all if
 * the command failed.
 */
void
vcl_enq_finish(struct vcl_enq *q, cl_int err, cl_event *event)
{
	size_t	i;

	if (q->e.wait != q->wait_ids)
		free(q->e.wait);
	q->e.wait = NULL;
	for (i = 0; i < q->nproxies; i++)
		vcl_node_release(q->node, vcl_kind_wire(VCL_KIND_EVENT),
		    q->proxies[i]);
	q->nproxies = 0;
	if (q->ev == NULL)
		return;
	if (err != CL_SUCCESS) {
		q->ev->remote = 0;
		vcl_node_unwatch_ev(q->ev->node, q->ev);
		vcl_event_unref(q->ev);
	} else if (q->internal)
		vcl_event_unref(q->ev);
	else
		*event = q->ev;
	q->ev = NULL;
}

cl_int CL_API_CALL
vcl_clWaitForEvents(cl_uint num_events, const cl_event *event_list)
{
	cl_uint	i;
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF(num_events == 0 || event_list == NULL, CL_INVALID_VALUE);
	for (i = 0; i < num_events; i++) {
		VCL_GOTO_IF(!vcl_is(event_list[i], VCL_KIND_EVENT),
		    CL_INVALID_EVENT);
		VCL_GOTO_IF(event_list[i]->ctx != event_list[0]->ctx,
		    CL_INVALID_CONTEXT);
	}
	err = vcl_event_wait(num_events, event_list);
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clGetEventInfo(cl_event event, cl_event_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	cl_int	err = CL_SUCCESS, st;
	cl_uint	refs;

	VCL_GOTO_IF(!vcl_is(event, VCL_KIND_EVENT), CL_INVALID_EVENT);
	switch (param_name) {
	case CL_EVENT_COMMAND_QUEUE:
		err = vcl_info_ret(&event->queue, sizeof event->queue,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_EVENT_CONTEXT:
		err = vcl_info_ret(&event->ctx, sizeof event->ctx,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_EVENT_COMMAND_TYPE:
		err = vcl_info_ret(&event->type, sizeof event->type,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_EVENT_REFERENCE_COUNT:
		refs = (cl_uint)atomic_load(&event->obj.refs);
		err = vcl_info_ret(&refs, sizeof refs, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_EVENT_COMMAND_EXECUTION_STATUS:
		/* A poller must see progress: send what is batched. */
		if (event->node != NULL)
			vcl_node_flush(event->node);
		pthread_mutex_lock(&vcl_ev_lock);
		st = event->status;
		if (st == CL_QUEUED)
			st = CL_SUBMITTED;	/* flushed just now */
		pthread_mutex_unlock(&vcl_ev_lock);
		err = vcl_info_ret(&st, sizeof st, param_value_size,
		    param_value, param_value_size_ret);
		break;
	default:
		err = CL_INVALID_VALUE;
		break;
	}
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	cl_ulong	v;
	int		idx;
	cl_int		err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(event, VCL_KIND_EVENT), CL_INVALID_EVENT);
	switch (param_name) {
	case CL_PROFILING_COMMAND_QUEUED:	idx = 0; break;
	case CL_PROFILING_COMMAND_SUBMIT:	idx = 1; break;
	case CL_PROFILING_COMMAND_START:	idx = 2; break;
	case CL_PROFILING_COMMAND_END:
	case CL_PROFILING_COMMAND_COMPLETE:	idx = 3; break;
	default:
		err = CL_INVALID_VALUE;
		goto out;
	}
	VCL_GOTO_IF(event->queue == NULL ||
	    !(event->queue->props & CL_QUEUE_PROFILING_ENABLE),
	    CL_PROFILING_INFO_NOT_AVAILABLE);
	pthread_mutex_lock(&vcl_ev_lock);
	v = event->prof[idx];
	if (event->status != CL_COMPLETE || !event->have_prof)
		err = CL_PROFILING_INFO_NOT_AVAILABLE;
	pthread_mutex_unlock(&vcl_ev_lock);
	if (err == CL_SUCCESS)
		err = vcl_info_ret(&v, sizeof v, param_value_size, param_value,
		    param_value_size_ret);
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clRetainEvent(cl_event event)
{
	if (!vcl_is(event, VCL_KIND_EVENT))
		return (CL_INVALID_EVENT);
	vcl_retain(event);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clReleaseEvent(cl_event event)
{
	if (!vcl_is(event, VCL_KIND_EVENT))
		return (CL_INVALID_EVENT);
	vcl_event_unref(event);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clSetEventCallback(cl_event event, cl_int command_exec_callback_type,
    void (CL_CALLBACK *pfn_notify)(cl_event, cl_int, void *), void *user_data)
{
	struct vcl_ev_cb	*cb = NULL;
	cl_int			 err = CL_SUCCESS, st;

	VCL_GOTO_IF(!vcl_is(event, VCL_KIND_EVENT), CL_INVALID_EVENT);
	VCL_GOTO_IF(pfn_notify == NULL, CL_INVALID_VALUE);
	VCL_GOTO_IF(command_exec_callback_type != CL_SUBMITTED &&
	    command_exec_callback_type != CL_RUNNING &&
	    command_exec_callback_type != CL_COMPLETE, CL_INVALID_VALUE);
	VCL_GOTO_IF((cb = calloc(1, sizeof *cb)) == NULL,
	    CL_OUT_OF_HOST_MEMORY);
	cb->fn = pfn_notify;
	cb->arg = user_data;
	cb->when = command_exec_callback_type;
	pthread_mutex_lock(&vcl_ev_lock);
	st = event->status;
	if (st > CL_COMPLETE) {
		cb->next = event->cbs;
		event->cbs = cb;
		cb = NULL;
	}
	pthread_mutex_unlock(&vcl_ev_lock);
	if (cb != NULL)		/* already final: call it now */
		pfn_notify(event, st < 0 ? st : command_exec_callback_type,
		    user_data);
	else if (event->node != NULL)
		vcl_node_flush(event->node);
out:
	free(cb);
	return (err);
}

cl_event CL_API_CALL
vcl_clCreateUserEvent(cl_context context, cl_int *errcode_ret)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	 m = VCL__CREATE_USER_EVENT__INIT;
	cl_event		 ev = NULL;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF((ev = vcl_event_new(context, NULL, CL_COMMAND_USER)) ==
	    NULL, CL_OUT_OF_HOST_MEMORY);
	m.id = ev->obj.id;
	m.context = context->obj.id;
	req.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	req.create_user_event = &m;
	ev->remote = 1;
	err = vcl_node_send_live(context->nodes, &req);
out:
	if (err != CL_SUCCESS && ev != NULL) {
		vcl_event_unref(ev);
		ev = NULL;
	}
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (ev);
}

cl_int CL_API_CALL
vcl_clSetUserEventStatus(cl_event event, cl_int execution_status)
{
	Vcl__Request			req = VCL__REQUEST__INIT;
	Vcl__SetUserEventStatus		m = VCL__SET_USER_EVENT_STATUS__INIT;
	cl_int				err = CL_SUCCESS, st;
	int				i;

	VCL_GOTO_IF(!vcl_is(event, VCL_KIND_EVENT) || event->queue != NULL,
	    CL_INVALID_EVENT);
	VCL_GOTO_IF(execution_status > CL_COMPLETE, CL_INVALID_VALUE);
	pthread_mutex_lock(&vcl_ev_lock);
	st = event->status;
	pthread_mutex_unlock(&vcl_ev_lock);
	VCL_GOTO_IF(st <= CL_COMPLETE, CL_INVALID_OPERATION);
	m.event = event->obj.id;
	m.status = execution_status;
	req.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	req.set_user_event_status = &m;
	for (i = 0; i < vcl_nnodes(); i++)
		if (event->ctx->nodes & (1ull << i))
			(void)vcl_node_send(vcl_node_get(i), &req, NULL, 0,
			    VCL_SEND_FLUSH);
	vcl_event_complete(event, execution_status, NULL);
out:
	return (err);
}

/*
 * A marker or barrier with a wait list; type names the command its event
 * reports (maps and unmaps that move no bytes are markers too).
 */
cl_int
vcl_marker_typed(cl_command_queue q, cl_uint n, const cl_event *list,
    cl_event *event, cl_command_type type)
{
	int		barrier = type == CL_COMMAND_BARRIER;
	Vcl__Request	req = VCL__REQUEST__INIT;
	Vcl__Marker	m = VCL__MARKER__INIT;
	struct vcl_enq	enq;
	cl_int		err;

	if (!vcl_is(q, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	if ((err = vcl_enq_prepare(&enq, q, n, list, event, type, 0)) !=
	    CL_SUCCESS)
		return (err);
	m.q = &enq.e;
	m.has_barrier = 1;
	m.barrier = barrier;
	req.call_case = VCL__REQUEST__CALL_MARKER;
	req.marker = &m;
	err = vcl_node_send(q->dev->node, &req, NULL, 0, 0);
	vcl_enq_finish(&enq, err, event);
	return (err);
}

cl_int CL_API_CALL
vcl_clEnqueueMarkerWithWaitList(cl_command_queue command_queue,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	return (vcl_marker_typed(command_queue, num_events_in_wait_list,
	    event_wait_list, event, CL_COMMAND_MARKER));
}

cl_int CL_API_CALL
vcl_clEnqueueBarrierWithWaitList(cl_command_queue command_queue,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	return (vcl_marker_typed(command_queue, num_events_in_wait_list,
	    event_wait_list, event, CL_COMMAND_BARRIER));
}

cl_int CL_API_CALL
vcl_clEnqueueMarker(cl_command_queue command_queue, cl_event *event)
{
	if (!vcl_is(command_queue, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	if (event == NULL)
		return (CL_INVALID_VALUE);
	return (vcl_marker_typed(command_queue, 0, NULL, event,
	    CL_COMMAND_MARKER));
}

cl_int CL_API_CALL
vcl_clEnqueueBarrier(cl_command_queue command_queue)
{
	return (vcl_marker_typed(command_queue, 0, NULL, NULL,
	    CL_COMMAND_BARRIER));
}

cl_int CL_API_CALL
vcl_clEnqueueWaitForEvents(cl_command_queue command_queue,
    cl_uint num_events, const cl_event *event_list)
{
	if (!vcl_is(command_queue, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	if (num_events == 0 || event_list == NULL)
		return (CL_INVALID_VALUE);
	return (vcl_marker_typed(command_queue, num_events, event_list,
	    NULL, CL_COMMAND_BARRIER));
}
