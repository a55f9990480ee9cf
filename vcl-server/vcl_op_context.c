/* vcl_op_context.c - contexts, command queues, flush/finish, user events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_backend.h"
#include "vcl_enqueue.h"
#include "vcl_log.h"
#include "vcl_op_context.h"
#include "vcl_pin.h"
#include "vcl_server.h"
#include "vcl_session.h"

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
	uint32_t			 root;
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
	for (i = 0; i < m->n_devices && err == CL_SUCCESS; i++)
		if ((devs[i] = vcl_session_device(s, m->devices[i],
		    &root)) == NULL)
			err = CL_INVALID_DEVICE;
	if (err == CL_SUCCESS) {
		props[0] = CL_CONTEXT_PLATFORM;
		props[1] = (cl_context_properties)be->platform;
		props[2] = 0;
		o->u.ctx = clCreateContext(props, (cl_uint)m->n_devices, devs,
		    NULL, NULL, &err);
	}
	/* Its pinned staging, charged to the session's share. */
	if (err == CL_SUCCESS && ((s->pinuse == NULL && (s->pinuse =
	    vcl_pin_use_new()) == NULL) || (o->pins = vcl_pin_open(o->u.ctx,
	    s->pinuse)) == NULL))
		err = CL_OUT_OF_HOST_MEMORY;
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
	cl_device_id		 dev = NULL;
	uint32_t		 root = 0;
	cl_int			 err = CL_SUCCESS;
	size_t			 i;

	if ((o = vcl_session_add(s, m->id, VCL_KIND_QUEUE)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;		/* over the object limit */
	ctx = vcl_dep(s, m->context, VCL_KIND_CONTEXT, CL_INVALID_CONTEXT,
	    &err);
	if (err == CL_SUCCESS && (dev = vcl_session_device(s, m->device,
	    &root)) == NULL)
		err = CL_INVALID_DEVICE;
	if (err == CL_SUCCESS && (m->n_properties > VCL_QUEUE_PROPS_MAX ||
	    m->n_properties % 2 != 0))
		err = CL_INVALID_VALUE;
	for (i = 0; err == CL_SUCCESS && i < m->n_properties; i += 2)
		err = vcl_queue_prop(m->properties[i], m->properties[i + 1]);
	if (err == CL_SUCCESS) {
		for (i = 0; i < m->n_properties; i++) {
			props[i] = m->properties[i];
			if (i % 2 != 0 || props[i] != CL_QUEUE_PROPERTIES)
				continue;
			if (m->properties[i + 1] & CL_QUEUE_PROFILING_ENABLE)
				o->profiling = 1;
			if (m->properties[i + 1] &
			    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
				o->ooo = 1;
		}
		props[i] = 0;
		o->u.queue = clCreateCommandQueueWithProperties(ctx->u.ctx,
		    dev, props, &err);
	}
	o->device = root;	/* per-device limits: a sub-device's root's */
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

/*
 * Check a partition property list from the wire (without its final 0)
 * before the runtime reads it: one known scheme, its one value, or a
 * by-counts list ending in its CL_DEVICE_PARTITION_BY_COUNTS_LIST_END.
 */
static cl_int
vcl_partition_check(const int64_t *p, size_t n)
{
	size_t	i;

	if (n < 2)
		return (CL_INVALID_VALUE);
	switch (p[0]) {
	case CL_DEVICE_PARTITION_EQUALLY:
	case CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN:
		return (n == 2 ? CL_SUCCESS : CL_INVALID_VALUE);
	case CL_DEVICE_PARTITION_BY_COUNTS:
		if (n > VCL_SUBDEVICES_MAX + 2)
			return (CL_INVALID_DEVICE_PARTITION_COUNT);
		for (i = 1; i < n && p[i] !=
		    CL_DEVICE_PARTITION_BY_COUNTS_LIST_END; i++)
			if (p[i] < 0)
				return (CL_INVALID_DEVICE_PARTITION_COUNT);
		return (i == n - 1 ? CL_SUCCESS : CL_INVALID_VALUE);
	default:
		return (CL_INVALID_VALUE);
	}
}

/*
 * Partitions made, kept for the server's life and shared by sessions.
 * PoCL 3.1 takes no reference on a sub-device for the contexts, queues
 * and programs made on it, and frees some of them lazily: released
 * sub-devices were freed under the runtime's feet (the server crashed).
 * A partition is made once per device and property list, and a session's
 * sub-device objects only name it. Used on the loop thread only.
 */
#define VCL_PARTITIONS_MAX	256
/*
 * The table is never emptied: one session may add only its share, so that
 * a session partitioning sub-devices of sub-devices cannot fill it for
 * every other session (reusing a partition already made is free).
 */
#define VCL_PARTITIONS_SESSION	16
/* ... and all sessions of one address, reconnecting, half the table. */
#define VCL_PARTITIONS_ADDR	(VCL_PARTITIONS_MAX / 2)
struct vcl_partition {
	cl_device_id	 parent;
	int64_t		 props[VCL_SUBDEVICES_MAX + 2];
	size_t		 nprops;
	cl_device_id	 subs[VCL_SUBDEVICES_MAX];
	cl_uint		 n;
	char		 addr[64];	/* of the session that made it */
};
static struct vcl_partition	vcl_partitions[VCL_PARTITIONS_MAX];
static size_t			vcl_npartitions;

/* The kept partition of parent by this property list, or NULL. */
static struct vcl_partition *
vcl_partition_find(cl_device_id parent, const int64_t *p, size_t n)
{
	size_t	i;

	for (i = 0; i < vcl_npartitions; i++)
		if (vcl_partitions[i].parent == parent &&
		    vcl_partitions[i].nprops == n && memcmp(
		    vcl_partitions[i].props, p, n * sizeof *p) == 0)
			return (&vcl_partitions[i]);
	return (NULL);
}

/* How many kept partitions sessions from addr made. */
static size_t
vcl_partition_count(const char *addr)
{
	size_t	i, n = 0;

	for (i = 0; i < vcl_npartitions; i++)
		if (strcmp(vcl_partitions[i].addr, addr) == 0)
			n++;
	return (n);
}

/* Keep a partition just made; NULL when the table is full. */
static struct vcl_partition *
vcl_partition_keep(cl_device_id parent, const int64_t *p, size_t np,
    const cl_device_id *subs, cl_uint n, const char *addr)
{
	struct vcl_partition	*k;

	if (vcl_npartitions == VCL_PARTITIONS_MAX ||
	    np > VCL_SUBDEVICES_MAX + 2 || n > VCL_SUBDEVICES_MAX)
		return (NULL);
	k = &vcl_partitions[vcl_npartitions++];
	k->parent = parent;
	memcpy(k->props, p, np * sizeof *p);
	k->nprops = np;
	memcpy(k->subs, subs, n * sizeof *subs);
	k->n = n;
	snprintf(k->addr, sizeof k->addr, "%s", addr);
	return (k);
}

/*
 * CreateSubDevices: partition a device of the session. Without ids only
 * the count is answered. With ids there must be one per sub-device made;
 * each becomes a KIND_DEVICE object, charged like any other.
 */
void
vcl_op_create_sub_devices(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateSubDevices	*m = req->create_sub_devices;
	Vcl__Reply			 r = VCL__REPLY__INIT;
	Vcl__SubDevicesResult		 sr = VCL__SUB_DEVICES_RESULT__INIT;
	cl_device_partition_property	 props[VCL_SUBDEVICES_MAX + 3];
	cl_device_id			 out[VCL_SUBDEVICES_MAX], dev;
	struct vcl_partition		*part = NULL;
	struct vcl_hobj			*o;
	uint32_t			 root = 0;
	cl_uint				 n = 0;
	cl_int				 err;
	size_t				 i, j;

	if ((dev = vcl_session_device(s, m->device, &root)) == NULL)
		err = CL_INVALID_DEVICE;
	else if ((err = vcl_partition_check(m->properties,
	    m->n_properties)) != CL_SUCCESS)
		;
	else if (m->n_ids > VCL_SUBDEVICES_MAX)
		err = CL_INVALID_VALUE;
	else if (m->n_ids > 0 && s->handles.count - s->refused + m->n_ids >
	    s->srv->limits.objects)
		err = CL_OUT_OF_RESOURCES;
	for (i = 0; err == CL_SUCCESS && i < m->n_ids; i++) {
		if (m->ids[i] == 0 || m->ids[i] >= VCL_SUBDEVICE_BIT)
			err = CL_INVALID_VALUE;
		for (j = 0; j < i; j++)
			if (m->ids[j] == m->ids[i])
				err = CL_INVALID_VALUE;
		if (vcl_handle_find(&s->handles, m->ids[i]) != NULL) {
			vcl_session_close(s, "client reused an object id");
			return;
		}
	}
	if (err == CL_SUCCESS && (part = vcl_partition_find(dev,
	    m->properties, m->n_properties)) != NULL)
		n = part->n;
	else if (err == CL_SUCCESS && m->n_ids > 0 &&
	    (s->partitions >= VCL_PARTITIONS_SESSION ||
	    vcl_partition_count(s->addr) >= VCL_PARTITIONS_ADDR))
		err = CL_OUT_OF_RESOURCES;
	else if (err == CL_SUCCESS) {
		for (i = 0; i < m->n_properties; i++)
			props[i] = (cl_device_partition_property)
			    m->properties[i];
		props[i] = 0;
		err = clCreateSubDevices(dev, props, (cl_uint)m->n_ids,
		    m->n_ids > 0 ? out : NULL, &n);
		if (err == CL_SUCCESS && m->n_ids > 0 && n == m->n_ids &&
		    (part = vcl_partition_keep(dev, m->properties,
		    m->n_properties, out, n, s->addr)) == NULL) {
			for (i = 0; i < n; i++)
				clReleaseDevice(out[i]);
			err = CL_OUT_OF_RESOURCES;
		} else if (part != NULL)
			s->partitions++;
	}
	if (err == CL_SUCCESS && m->n_ids > 0 && n != m->n_ids) {
		/* The client must ask for exactly what the partition makes. */
		if (part == NULL)
			for (i = 0; i < n && i < m->n_ids; i++)
				clReleaseDevice(out[i]);
		err = CL_INVALID_VALUE;
	}
	for (i = 0; err == CL_SUCCESS && i < m->n_ids; i++) {
		if ((o = vcl_session_add(s, m->ids[i], VCL_KIND_DEVICE)) ==
		    NULL)
			return;
		if (o->error != CL_SUCCESS) {
			err = o->error;	/* checked above: cannot happen */
			break;
		}
		o->u.device = part->subs[i];
		o->device = root;
	}
	r.seq = req->seq;
	r.status = err;
	if (err == CL_SUCCESS) {
		sr.count = n;
		r.result_case = VCL__REPLY__RESULT_SUB_DEVICES;
		r.sub_devices = &sr;
	}
	vcl_session_reply_msg(s, &r);
}
