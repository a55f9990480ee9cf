/* vcl_op_exec.c - kernel launches, markers and barriers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_log.h"
#include "vcl_server.h"

/*
 * Set one kernel argument from the wire. The argument's address qualifier
 * decides what the client may send: a buffer id (or NULL) for global and
 * constant pointers, a size for local memory, bytes for the rest. Buffers
 * are named by id; a missing one is CL_INVALID_MEM_OBJECT, as clSetKernelArg
 * would say.
 */
cl_int
vcl_exec_arg(struct vcl_session *s, struct vcl_hobj *ko,
    const Vcl__KernelArg *a)
{
	struct vcl_hobj	*o;
	cl_kernel	 k = ko->u.kernel;
	cl_mem		 null = NULL;
	uint32_t	 q;
	int		 ok;

	if (a->index >= ko->nargs)
		return (CL_INVALID_ARG_INDEX);
	q = ko->argq[a->index];
	switch (a->type) {
	case VCL__KERNEL_ARG__TYPE__MEM:
	case VCL__KERNEL_ARG__TYPE__NULLMEM:
		ok = q == CL_KERNEL_ARG_ADDRESS_GLOBAL ||
		    q == CL_KERNEL_ARG_ADDRESS_CONSTANT;
		break;
	case VCL__KERNEL_ARG__TYPE__LOCAL:
		ok = q == CL_KERNEL_ARG_ADDRESS_LOCAL;
		break;
	default:
		ok = q == CL_KERNEL_ARG_ADDRESS_PRIVATE;
		break;
	}
	if (!ok)
		return (CL_INVALID_ARG_VALUE);
	switch (a->type) {
	case VCL__KERNEL_ARG__TYPE__VALUE:
		return (clSetKernelArg(k, a->index, a->value.len,
		    a->value.len ? a->value.data : NULL));
	case VCL__KERNEL_ARG__TYPE__MEM:
		o = vcl_handle_get(&s->handles, a->mem, VCL_KIND_MEM);
		if (o == NULL)
			return (CL_INVALID_MEM_OBJECT);
		if (o->error != CL_SUCCESS)
			return (o->error);
		return (clSetKernelArg(k, a->index, sizeof o->u.mem, &o->u.mem));
	case VCL__KERNEL_ARG__TYPE__LOCAL:
		return (clSetKernelArg(k, a->index, a->size, NULL));
	case VCL__KERNEL_ARG__TYPE__NULLMEM:
		return (clSetKernelArg(k, a->index, sizeof null, &null));
	default:
		return (CL_INVALID_ARG_VALUE);
	}
}

/* NDRange: set the arguments the client sent, then launch. */
void
vcl_op_ndrange(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__NDRange	*m = req->ndrange;
	struct vcl_hobj		*k;
	struct vcl_enq		 enq;
	size_t			 off[3], gws[3], lws[3];
	cl_uint			 d;
	size_t			 i;
	cl_int			 err;

	if ((err = vcl_enq_begin(s, m->q, &enq)) != CL_SUCCESS)
		goto out;
	k = vcl_handle_get(&s->handles, m->kernel, VCL_KIND_KERNEL);
	if (k == NULL) {
		err = CL_INVALID_KERNEL;
		goto out;
	}
	d = m->work_dim;
	if (d < 1 || d > 3 || m->n_global != d ||
	    (m->n_offset != 0 && m->n_offset != d) ||
	    (m->n_local != 0 && m->n_local != d)) {
		err = CL_INVALID_WORK_DIMENSION;
		goto out;
	}
	for (i = 0; i < d; i++) {
		gws[i] = m->global[i];
		off[i] = m->n_offset ? m->offset[i] : 0;
		lws[i] = m->n_local ? m->local[i] : 0;
	}
	for (i = 0; i < m->n_args && err == CL_SUCCESS; i++)
		err = vcl_exec_arg(s, k, m->args[i]);
	if (err == CL_SUCCESS)
		err = clEnqueueNDRangeKernel(enq.q->u.queue, k->u.kernel, d,
		    m->n_offset ? off : NULL, gws, m->n_local ? lws : NULL,
		    enq.nwait, enq.wait, enq.event_id ? &enq.ev : NULL);
out:
	vcl_enq_end(s, &enq, err, NULL);
}

/* Marker or barrier, with or without a wait list. */
void
vcl_op_marker(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__Marker	*m = req->marker;
	struct vcl_enq		 enq;
	cl_int			 err;

	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS) {
		if (m->has_barrier && m->barrier)
			err = clEnqueueBarrierWithWaitList(enq.q->u.queue,
			    enq.nwait, enq.wait,
			    enq.event_id ? &enq.ev : NULL);
		else
			err = clEnqueueMarkerWithWaitList(enq.q->u.queue,
			    enq.nwait, enq.wait,
			    enq.event_id ? &enq.ev : NULL);
	}
	vcl_enq_end(s, &enq, err, NULL);
}
