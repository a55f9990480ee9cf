/* vcl_op_exec.c - kernel launches, markers and barriers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_backend.h"
#include "vcl_enqueue.h"
#include "vcl_log.h"
#include "vcl_op_exec.h"
#include "vcl_op_image.h"
#include "vcl_op_mem.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_submit.h"

/*
 * The largest CL_DEVICE_LOCAL_MEM_SIZE among the served devices: a __local
 * size above it fits no device (clSetKernelArg says CL_INVALID_ARG_SIZE).
 */
static uint64_t
vcl_exec_local_max(const struct vcl_backend *be)
{
	cl_ulong	v, max = 0;
	uint32_t	i;

	for (i = 0; i < be->ndevices; i++)
		if (clGetDeviceInfo(be->devices[i], CL_DEVICE_LOCAL_MEM_SIZE,
		    sizeof v, &v, NULL) == CL_SUCCESS && v > max)
			max = v;
	return (max);
}

/*
 * clSetKernelArg, once no launch handed to a strand can be reading the
 * kernel's arguments: the runtime's copy of them is not safe against a
 * concurrent enqueue of the kernel.
 */
static cl_int
vcl_exec_set(struct vcl_session *s, struct vcl_hobj *ko, cl_uint i,
    size_t size, const void *value)
{
	vcl_session_quiesce(s);
	return (clSetKernelArg(ko->u.kernel, i, size, value));
}

/*
 * Let go of the buffer argument i holds: the runtime's reference, and the
 * session's hold on the id (a buffer the client released lives, and stays
 * charged, while a kernel argument names it). A closing session skips the
 * lookup: its table is being torn down.
 */
static void
vcl_exec_unhold(struct vcl_session *s, struct vcl_hobj *ko, uint32_t i)
{
	struct vcl_karg	*ka = &ko->kargs[i];
	struct vcl_hobj	*o;

	if (ka->sampler != NULL) {
		clReleaseSampler(ka->sampler);
		ka->sampler = NULL;
	}
	if (ka->mem == NULL)
		return;
	clReleaseMemObject(ka->mem);
	ka->mem = NULL;
	if (!s->dead && (o = vcl_handle_held(&s->handles, ka->mem_id,
	    VCL_KIND_MEM)) != NULL && o->karg_refs > 0) {
		o->karg_refs--;
		vcl_session_settled(s, o);
	}
	ka->mem_id = 0;
}

/* A kernel is going: drop every object its arguments hold. */
void
vcl_exec_kernel_drop(struct vcl_session *s, struct vcl_hobj *ko)
{
	uint32_t	i;

	for (i = 0; i < ko->nargs && ko->kargs != NULL; i++)
		vcl_exec_unhold(s, ko, i);
}

/*
 * Set a buffer (or NULL) or image argument; the kernel holds the object
 * while set. An image argument takes an image of its image type only, a
 * buffer argument a buffer only: the runtime would take one for the other.
 */
static cl_int
vcl_exec_arg_mem(struct vcl_session *s, struct vcl_hobj *ko,
    const Vcl__KernelArg *a)
{
	struct vcl_karg	*ka = &ko->kargs[a->index];
	struct vcl_hobj	*o = NULL;
	cl_context	 kctx = NULL;
	cl_mem		 m = NULL;
	uint32_t	 want;
	cl_int		 err;

	if (a->type == VCL__KERNEL_ARG__TYPE__MEM ||
	    a->type == VCL__KERNEL_ARG__TYPE__IMAGE) {
		o = vcl_handle_get(&s->handles, a->mem, VCL_KIND_MEM);
		if (o == NULL)
			return (CL_INVALID_MEM_OBJECT);
		if (o->error != CL_SUCCESS)
			return (o->error);
		if (o->u.mem == NULL)
			return (CL_INVALID_MEM_OBJECT);
		/*
		 * Set already: the kernel's hold keeps the object, so the
		 * runtime cannot have handed its address to another.
		 */
		if (ka->mem == o->u.mem && ka->mem_id == o->id)
			return (CL_SUCCESS);
		/* A buffer of another context is no argument of this one. */
		if (clGetKernelInfo(ko->u.kernel, CL_KERNEL_CONTEXT,
		    sizeof kctx, &kctx, NULL) != CL_SUCCESS ||
		    !vcl_mem_ctx_is(o->u.mem, kctx))
			return (CL_INVALID_MEM_OBJECT);
		want = ka->kind == VCL_KARG_IMAGE ? ka->image :
		    CL_MEM_OBJECT_BUFFER;
		if (vcl_image_mem_type(o->u.mem) != want)
			return (CL_INVALID_MEM_OBJECT);
		m = o->u.mem;
	} else if (ka->is_null)
		return (CL_SUCCESS);
	ka->is_null = 0;
	if ((err = vcl_exec_set(s, ko, a->index, sizeof m, &m)) !=
	    CL_SUCCESS)
		return (err);
	if (o != NULL) {
		clRetainMemObject(m);
		o->karg_refs++;
	}
	vcl_exec_unhold(s, ko, a->index);
	ka->mem = m;
	ka->mem_id = o != NULL ? o->id : 0;
	ka->is_null = o == NULL;
	return (CL_SUCCESS);
}

/* Set a sampler argument from a sampler id of the kernel's context. */
static cl_int
vcl_exec_arg_sampler(struct vcl_session *s, struct vcl_hobj *ko,
    const Vcl__KernelArg *a)
{
	struct vcl_karg	*ka = &ko->kargs[a->index];
	struct vcl_hobj	*o;
	cl_context	 kctx = NULL, sctx = NULL;
	cl_sampler	 smp;
	cl_int		 err;

	if (a->type != VCL__KERNEL_ARG__TYPE__SAMPLER || !a->has_mem ||
	    (o = vcl_handle_get(&s->handles, a->mem, VCL_KIND_SAMPLER)) ==
	    NULL)
		return (CL_INVALID_SAMPLER);
	if (o->error != CL_SUCCESS)
		return (o->error);
	if (o->u.sampler == NULL)
		return (CL_INVALID_SAMPLER);
	if (clGetKernelInfo(ko->u.kernel, CL_KERNEL_CONTEXT, sizeof kctx,
	    &kctx, NULL) != CL_SUCCESS || clGetSamplerInfo(o->u.sampler,
	    CL_SAMPLER_CONTEXT, sizeof sctx, &sctx, NULL) != CL_SUCCESS ||
	    kctx != sctx)
		return (CL_INVALID_SAMPLER);
	smp = o->u.sampler;
	if ((err = vcl_exec_set(s, ko, a->index, sizeof smp, &smp)) !=
	    CL_SUCCESS)
		return (err);
	clRetainSampler(smp);
	vcl_exec_unhold(s, ko, a->index);
	ka->sampler = smp;
	return (CL_SUCCESS);
}

/*
 * Set one kernel argument from the wire. The argument's kind, found from
 * its qualifiers and type when the kernel was created, decides what the
 * client may send: a buffer id (or NULL) for global and constant pointers,
 * a size for local memory, and for by-value arguments exactly as many
 * bytes as the type has, so the runtime never copies fewer than the kernel
 * reads. An image takes an image id of its image type, a sampler a sampler
 * id; pipes are handles the wire cannot name yet: bytes or a buffer there
 * would be taken for a runtime object.
 *
 * The client sends every argument with every launch; one equal to what
 * the runtime holds (the same buffer object, NULL, __local size, or
 * by-value bytes) is not set again. Only this function sets a kernel's
 * arguments, on the loop thread, so struct vcl_karg is what the runtime
 * holds; a failed set forgets the bytes or NULL remembered.
 */
cl_int
vcl_exec_arg(struct vcl_session *s, struct vcl_hobj *ko,
    const Vcl__KernelArg *a)
{
	struct vcl_karg	*ka;
	cl_int		 err;

	if (a->index >= ko->nargs || ko->kargs == NULL)
		return (CL_INVALID_ARG_INDEX);
	ka = &ko->kargs[a->index];
	switch (ka->kind) {
	case VCL_KARG_SAMPLER:
		return (vcl_exec_arg_sampler(s, ko, a));
	case VCL_KARG_IMAGE:
		if (a->type != VCL__KERNEL_ARG__TYPE__IMAGE)
			return (CL_INVALID_MEM_OBJECT);
		return (vcl_exec_arg_mem(s, ko, a));
	case VCL_KARG_PIPE:
		return (CL_INVALID_MEM_OBJECT);
	case VCL_KARG_BUFFER:
		if (a->type != VCL__KERNEL_ARG__TYPE__MEM &&
		    a->type != VCL__KERNEL_ARG__TYPE__NULLMEM)
			return (CL_INVALID_ARG_VALUE);
		return (vcl_exec_arg_mem(s, ko, a));
	case VCL_KARG_LOCAL:
		if (a->type != VCL__KERNEL_ARG__TYPE__LOCAL)
			return (CL_INVALID_ARG_VALUE);
		if (a->size != 0 && a->size == ka->size)
			return (CL_SUCCESS);	/* set already */
		if (a->size == 0 || a->size > vcl_exec_local_max(&s->srv->be))
			return (CL_INVALID_ARG_SIZE);
		if ((err = vcl_exec_set(s, ko, a->index, a->size,
		    NULL)) == CL_SUCCESS)
			ka->size = a->size;
		return (err);
	case VCL_KARG_VALUE:
		if (a->type != VCL__KERNEL_ARG__TYPE__VALUE)
			return (CL_INVALID_ARG_VALUE);
		if (a->value.len == 0)
			return (CL_INVALID_ARG_VALUE);
		/* An unknown size: refused rather than read past the bytes. */
		if (ka->size == 0 || a->value.len != ka->size)
			return (CL_INVALID_ARG_SIZE);
		if (ka->has_val && memcmp(ka->val, a->value.data,
		    a->value.len) == 0)
			return (CL_SUCCESS);	/* these bytes are set */
		ka->has_val = 0;
		if ((err = vcl_exec_set(s, ko, a->index, a->value.len,
		    a->value.data)) == CL_SUCCESS && a->value.len <=
		    sizeof ka->val) {
			memcpy(ka->val, a->value.data, a->value.len);
			ka->has_val = 1;
		}
		return (err);
	default:
		return (CL_INVALID_ARG_VALUE);
	}
}

/*
 * Would a launch on device dev fit its local memory: the kernel's own
 * __local variables plus every __local argument's size? A runtime given
 * more aborts or fails late; a local one says CL_OUT_OF_RESOURCES.
 */
static cl_int
vcl_exec_local_fits(struct vcl_session *s, struct vcl_hobj *ko, uint32_t dev)
{
	cl_ulong	cap = 0;
	uint64_t	sum;
	uint32_t	i;
	int		any;

	if (dev >= s->srv->be.ndevices)
		return (CL_INVALID_DEVICE);
	sum = ko->kdev != NULL ? ko->kdev[dev].local : 0;
	for (i = 0, any = sum != 0; i < ko->nargs && !any; i++)
		any = ko->kargs[i].kind == VCL_KARG_LOCAL &&
		    ko->kargs[i].size != 0;
	if (!any)
		return (CL_SUCCESS);
	/* Asked once, when the server opened the device. */
	if ((cap = s->srv->be.lims[dev].local_mem) == 0)
		return (CL_INVALID_DEVICE);
	if (sum > cap)
		return (CL_OUT_OF_RESOURCES);
	for (i = 0; i < ko->nargs; i++) {
		if (ko->kargs[i].kind != VCL_KARG_LOCAL)
			continue;
		if (ko->kargs[i].size > cap - sum)
			return (CL_OUT_OF_RESOURCES);
		sum += ko->kargs[i].size;
	}
	return (CL_SUCCESS);
}

/*
 * Check a launch's sizes as clEnqueueNDRangeKernel would, before the
 * runtime sees them: offset + global must not wrap, a local size must be
 * non-zero, within the device's work-item sizes and, in all, within the
 * kernel's work-group size there. Both limits were asked of the runtime
 * once (the device's when the server opened it, the kernel's when it was
 * made), not on every launch: on the loop, two runtime calls per launch
 * cost time and, with launches on a strand, contend with its calls.
 */
static cl_int
vcl_exec_sizes(struct vcl_session *s, struct vcl_hobj *ko, uint32_t dev,
    cl_uint d, const size_t *off, const size_t *gws, const size_t *lws)
{
	const size_t	*maxwi;
	size_t		 wg, total = 1;
	cl_uint		 i;

	for (i = 0; i < d; i++)
		if (gws[i] > SIZE_MAX - off[i])
			return (CL_INVALID_GLOBAL_OFFSET);
	if (lws == NULL)
		return (CL_SUCCESS);
	if (dev >= s->srv->be.ndevices)
		return (CL_INVALID_DEVICE);
	maxwi = s->srv->be.lims[dev].max_wi;
	wg = ko->kdev != NULL ? ko->kdev[dev].wg : 0;
	for (i = 0; i < d; i++) {
		if (lws[i] == 0)
			return (CL_INVALID_WORK_GROUP_SIZE);
		if (maxwi[i] != 0 && lws[i] > maxwi[i])
			return (CL_INVALID_WORK_ITEM_SIZE);
		if (lws[i] > SIZE_MAX / total)
			return (CL_INVALID_WORK_GROUP_SIZE);
		total *= lws[i];
	}
	if (wg != 0 && total > wg)
		return (CL_INVALID_WORK_GROUP_SIZE);
	return (CL_SUCCESS);
}

/*
 * Launches the node's runtime is known to die on, refused instead:
 * PoCL 3.1 dereferences a bad pointer in clEnqueueNDRangeKernel for a
 * kernel with a writable image1d_buffer_t argument (natively the program
 * crashes; here it would be the server and every session on it).
 */
static cl_int
vcl_exec_pocl_faults(struct vcl_session *s, struct vcl_hobj *ko)
{
	uint32_t	i;

	if (!s->srv->be.is_pocl)
		return (CL_SUCCESS);
	for (i = 0; i < ko->nargs; i++) {
		if (ko->kargs[i].kind == VCL_KARG_IMAGE && ko->kargs[i].image ==
		    CL_MEM_OBJECT_IMAGE1D_BUFFER && ko->kargs[i].writes) {
			vcl_session_warn(s, "kernel %llu: a writable "
			    "image1d_buffer_t argument (PoCL crashes on it) "
			    "refused", (unsigned long long)ko->id);
			return (CL_INVALID_OPERATION);
		}
	}
	return (CL_SUCCESS);
}

#define VCL_EXEC_RUN	8	/* launches in a row before a strand */

/*
 * A checked launch the loop needs nothing back from (no event, nothing to
 * wait for) goes to its queue's strand where the runtime's launch call is
 * slow (vcl_submit.c); 0 when it went. Only within a run of launches: a
 * lone one (a launch, then a finish) would pay a thread's wakeup before
 * its finish, more than the loop's own call.
 */
static int
vcl_exec_handoff(struct vcl_session *s, struct vcl_enq *enq,
    struct vcl_hobj *k, cl_uint d, const size_t *off, const size_t *gws,
    const size_t *lws)
{
	struct vcl_submit	*sub;
	struct vcl_launch	 l;

	if (s->launch_run < VCL_EXEC_RUN) {
		s->launch_run++;
		return (-1);
	}
	if (enq->event_id != 0 || enq->nwait != 0 ||
	    (sub = vcl_session_strand(s, enq->q)) == NULL ||
	    !vcl_submit_offload(sub))
		return (-1);
	memset(&l, 0, sizeof l);
	l.kernel = k->u.kernel;
	l.dim = d;
	l.has_off = off != NULL;
	l.has_lws = lws != NULL;
	memcpy(l.gws, gws, d * sizeof gws[0]);
	if (off != NULL)
		memcpy(l.off, off, d * sizeof off[0]);
	if (lws != NULL)
		memcpy(l.lws, lws, d * sizeof lws[0]);
	return (vcl_session_strand_launch(s, enq->q, &l));
}

/*
 * Launch here, after what the session's strands hold (in order with its
 * queue's, and a strand may make it there too); timed for the queue.
 */
static cl_int
vcl_exec_launch(struct vcl_session *s, struct vcl_enq *enq,
    struct vcl_hobj *k, cl_uint d, const size_t *off, const size_t *gws,
    const size_t *lws)
{
	struct vcl_submit	*sub = enq->q->submit;
	uint64_t		 t0 = 0;
	cl_int			 err;

	vcl_session_quiesce(s);
	/* Timed only for a queue that has a strand to decide for. */
	if (sub != NULL)
		t0 = vcl_server_ns();
	err = clEnqueueNDRangeKernel(enq->q->u.queue, k->u.kernel, d, off,
	    gws, lws, enq->nwait, enq->wait, enq->event_id ? &enq->ev : NULL);
	if (sub != NULL)
		vcl_submit_timed(sub, vcl_server_ns() - t0);
	return (err);
}

/*
 * NDRange: set the arguments the client sent, check, then launch, here or
 * on the queue's strand.
 */
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
		err = vcl_exec_sizes(s, k, enq.q->device, d, off, gws,
		    m->n_local ? lws : NULL);
	if (err == CL_SUCCESS)
		err = vcl_exec_local_fits(s, k, enq.q->device);
	if (err == CL_SUCCESS)
		err = vcl_exec_pocl_faults(s, k);
	if (err == CL_SUCCESS && vcl_exec_handoff(s, &enq, k, d,
	    m->n_offset ? off : NULL, gws, m->n_local ? lws : NULL) != 0)
		err = vcl_exec_launch(s, &enq, k, d, m->n_offset ? off : NULL,
		    gws, m->n_local ? lws : NULL);
out:
	/* Its error is reported after theirs. */
	if (err != CL_SUCCESS)
		vcl_session_quiesce(s);
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
