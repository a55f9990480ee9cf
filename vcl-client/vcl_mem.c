/*
 * vcl_mem.c - buffers and sub-buffers, and the commands that move their
 * bytes: read, write, copy, fill (plain and rectangular), map, unmap and
 * migrate. Bytes go between the application's memory and the socket with
 * no copy in between, but for rectangles, packed here so only the
 * region's bytes travel.
 */
#include <stdlib.h>
#include <string.h>

#include "vcl_bulk.h"
#include "vcl_client.h"
#include "vcl_coherence.h"
#include "vcl_conn.h"
#include "vcl_context.h"
#include "vcl_event.h"
#include "vcl_image.h"
#include "vcl_info.h"
#include "vcl_log.h"
#include "vcl_mem.h"
#include "vcl_object.h"
#include "vcl_platform.h"

#define VCL_MEM_ACCESS	(CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY |	\
	CL_MEM_READ_ONLY)
#define VCL_MEM_HOST	(CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | \
	CL_MEM_HOST_NO_ACCESS)
#define VCL_MEM_KNOWN	(VCL_MEM_ACCESS | VCL_MEM_HOST |		\
	CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)

#define VCL_MEM_HOSTPTR	(CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | \
	CL_MEM_COPY_HOST_PTR)

/* At most one bit of mask set in flags. */
static int
vcl_one_of(cl_mem_flags flags, cl_mem_flags mask)
{
	cl_mem_flags	f = flags & mask;

	return ((f & (f - 1)) == 0);
}

/* Drop a reference; the last one releases the buffer on its nodes. */
void
vcl_mem_unref(cl_mem mem)
{
	struct vcl_mem_cb	*cb;
	struct vcl_map		*m;
	int			 i;

	if (!vcl_unref(mem))
		return;
	for (i = 0; i < vcl_nnodes(); i++)
		if (mem->nodes & (1ull << i))
			vcl_node_release(vcl_node_get(i), VCL__KIND__KIND_MEM,
			    mem->obj.id);
	while ((cb = mem->dtors) != NULL) {
		mem->dtors = cb->next;
		cb->fn(mem, cb->arg);
		free(cb);
	}
	while ((m = mem->maps) != NULL) {
		mem->maps = m->next;
		if (m->owned)
			free(m->ptr);
		free(m);
	}
	vcl_coherence_free(&mem->coh);
	vcl_image_free(mem);
	pthread_mutex_destroy(&mem->lock);
	vcl_context_unref(mem->ctx);
	if (mem->parent != NULL)
		vcl_mem_unref(mem->parent);
	vcl_object_free(mem);
}

/*
 * The buffer whose coherence record a buffer, a sub-buffer or an image
 * over a buffer (a 1D buffer image) uses: they share its bytes, so where
 * its newest bytes are is where theirs are.
 */
cl_mem
vcl_mem_root(cl_mem mem)
{
	if (mem->parent != NULL)
		return (mem->parent);
	if (mem->buffer != NULL)
		return (vcl_mem_root(mem->buffer));
	return (mem);
}

/* A sub-buffer exists on node n: its parent first, then itself. */
static cl_int
vcl_mem_sub_on(cl_mem mem, struct vcl_node *n)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateSubBuffer	 m = VCL__CREATE_SUB_BUFFER__INIT;
	cl_int			 err;

	if ((err = vcl_mem_on(mem->parent, n)) != CL_SUCCESS)
		return (err);
	m.id = mem->obj.id;
	m.parent = mem->parent->obj.id;
	m.flags = mem->flags & VCL_MEM_ACCESS;
	m.origin = mem->origin;
	m.size = mem->size;
	req.call_case = VCL__REQUEST__CALL_CREATE_SUB_BUFFER;
	req.create_sub_buffer = &m;
	if ((err = vcl_node_send(n, &req, NULL, 0, 0)) == CL_SUCCESS)
		mem->nodes |= 1ull << n->index;
	return (err);
}

/*
 * Make sure the buffer exists on node n, creating it there (asynchronously).
 * While no command has written it, an instance starts with the initial
 * bytes (or zeros) and so holds the newest bytes; later ones start stale.
 * Called with the lock of mem's root (vcl_mem_root) held, or before the
 * buffer is shared.
 */
cl_int
vcl_mem_on(cl_mem mem, struct vcl_node *n)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateBuffer	 m = VCL__CREATE_BUFFER__INIT;
	const void		*data = NULL;
	cl_int			 err;

	if (mem->nodes & (1ull << n->index))
		return (CL_SUCCESS);
	if (mem->parent != NULL)
		return (vcl_mem_sub_on(mem, n));
	if (vcl_mem_is_image(mem))
		return (vcl_image_on(mem, n));
	if (mem->coh.pristine)
		data = mem->host_ptr != NULL ? mem->host_ptr : mem->coh.init;
	m.id = mem->obj.id;
	m.context = mem->ctx->obj.id;
	/* Host pointers and host access rules stay on this side. */
	m.flags = mem->flags & (VCL_MEM_ACCESS | CL_MEM_ALLOC_HOST_PTR);
	m.size = mem->size;
	m.has_has_data = 1;
	m.has_data = data != NULL;
	req.call_case = VCL__REQUEST__CALL_CREATE_BUFFER;
	req.create_buffer = &m;
	err = vcl_node_send(n, &req, data, data != NULL ? mem->size : 0, 0);
	if (err == CL_SUCCESS) {
		mem->nodes |= 1ull << n->index;
		vcl_coherence_created(&mem->coh, n->index);
	}
	return (err);
}

/* True when the context spans several nodes (coherence is tracked). */
int
vcl_ctx_multi(cl_context ctx)
{
	return ((ctx->nodes & (ctx->nodes - 1)) != 0);
}

/* Where peers reach our session on node n. */
void
vcl_peer_dest(struct vcl_node *n, Vcl__PeerDest *d)
{
	d->addr = n->peer_addr[0] != '\0' ? n->peer_addr : n->addr;
	d->session = n->session;
	d->key = n->key;
}

/* What a failed MigrateOut must tell the receiving node. */
struct vcl_migration {
	struct vcl_node	*dest;
	uint64_t	 transfer;
};

/*
 * A MigrateOut's event completed (on the receiver thread). If the push
 * failed, the receiving node would wait for the bytes forever: fail it.
 */
static void CL_CALLBACK
vcl_migration_done(cl_event ev, cl_int status, void *arg)
{
	struct vcl_migration	*mg = arg;
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__PeerFail		 pf = VCL__PEER_FAIL__INIT;

	if (status < 0) {
		pf.ids = &mg->transfer;
		pf.n_ids = 1;
		pf.status = status;
		req.call_case = VCL__REQUEST__CALL_PEER_FAIL;
		req.peer_fail = &pf;
		(void)vcl_node_send(mg->dest, &req, NULL, 0, VCL_SEND_FLUSH);
	}
	free(mg);
}

/*
 * Move a buffer's newest bytes from a node that holds them to node x,
 * server to server: MigrateOut on the source (after the buffer's last
 * writer there), MigrateIn on x, whose event is returned in *arrival. The
 * client sends two small requests; the bytes never come through here.
 */
static cl_int
vcl_mem_migrate(cl_mem mem, cl_command_queue q, struct vcl_node *x,
    cl_event *arrival)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__MigrateOut		 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__MigrateIn		 mi = VCL__MIGRATE_IN__INIT;
	Vcl__PeerDest		 dest = VCL__PEER_DEST__INIT;
	struct vcl_migration	*mg;
	struct vcl_node		*y;
	struct vcl_enq		 in;
	cl_event		 out = NULL, deps[2];
	uint64_t		 wait[2], xfer = vcl_id_new();
	vcl_nodeset		 alive = 0;
	size_t			 i, ndeps;
	int			 src;
	cl_int			 err;

	for (i = 0; i < (size_t)vcl_nnodes(); i++)
		if ((mem->coh.valid & (1ull << i)) &&
		    vcl_node_status(vcl_node_get((int)i)) == CL_SUCCESS)
			alive |= 1ull << i;
	if ((src = vcl_coherence_source(&mem->coh, alive)) < 0)
		return (CL_DEVICE_NOT_AVAILABLE);	/* lost with its node */
	y = vcl_node_get(src);

	/* Its own event, so a failed push can be told to x. */
	if ((out = vcl_event_new(mem->ctx, NULL, CL_COMMAND_MIGRATE_MEM_OBJECTS))
	    == NULL || (mg = calloc(1, sizeof *mg)) == NULL) {
		if (out != NULL)
			vcl_event_unref(out);
		return (CL_OUT_OF_HOST_MEMORY);
	}
	out->node = y;
	out->status = CL_QUEUED;
	out->remote = 1;
	mg->dest = x;
	mg->transfer = xfer;	/* mg is freed when the push completes */
	vcl_clSetEventCallback(out, CL_COMPLETE, vcl_migration_done, mg);
	vcl_node_watch(y, out);

	vcl_log_debug("buffer %llu: %zu bytes from %s to %s, transfer %llu",
	    (unsigned long long)mem->obj.id, mem->size, y->addr, x->addr,
	    (unsigned long long)xfer);
	mo.context = mem->ctx->obj.id;
	mo.wait = wait;
	ndeps = vcl_coherence_deps(&mem->coh, y->index, deps);
	for (i = 0; i < ndeps; i++)
		wait[mo.n_wait++] = deps[i]->obj.id;
	mo.mem = mem->obj.id;
	mo.offset = 0;
	mo.size = mem->size;
	vcl_peer_dest(x, &dest);
	mo.dest = &dest;
	mo.transfer = xfer;
	mo.has_event = 1;
	mo.event = out->obj.id;
	req.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	req.migrate_out = &mo;
	err = vcl_node_send(y, &req, NULL, 0, VCL_SEND_FLUSH);
	vcl_event_unref(out);	/* the watch keeps it until it completes */
	if (err != CL_SUCCESS)
		return (err);

	if ((err = vcl_enq_prepare(&in, q, 0, NULL, arrival,
	    CL_COMMAND_MIGRATE_MEM_OBJECTS, 1)) != CL_SUCCESS)
		return (err);
	mi.q = &in.e;
	mi.mem = mem->obj.id;
	mi.offset = 0;
	mi.size = mem->size;
	mi.transfer = xfer;
	mi.source = y->peer_addr;
	req.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	req.migrate_in = &mi;
	err = vcl_node_send(x, &req, NULL, 0, 0);
	vcl_enq_finish(&in, err, arrival);
	return (err);
}

/*
 * A command on queue q uses a buffer: make the buffer's newest bytes
 * available on q's node before it runs (migrating them there if that
 * node's copy is stale), and make the command wait for that. whole: the
 * command overwrites all of it, so stale bytes need not move.
 *
 * A sub-buffer uses its parent's record: the parent's whole range moves,
 * and a command through the sub-buffer counts as one on the parent. Moving
 * only the sub range would need a record per range (several nodes each
 * newest for part of one buffer); the whole range is one rule, is correct
 * for overlapping sub-buffers, and costs only bytes a sub-buffer's user on
 * several nodes would likely need anyway.
 */
cl_int
vcl_mem_use(struct vcl_enq *enq, cl_command_queue q, cl_mem sub, int write,
    int whole)
{
	struct vcl_node	*x = q->dev->node;
	cl_mem		 mem = vcl_mem_root(sub);
	cl_event	 arrival = NULL, ready;
	cl_int		 err;

	if (sub != mem && sub->size != mem->size)
		whole = 0;		/* the rest of the parent stays */
	pthread_mutex_lock(&mem->lock);
	if ((err = vcl_mem_on(sub, x)) != CL_SUCCESS || !vcl_ctx_multi(mem->ctx))
		goto out;
	if (vcl_coherence_stale(&mem->coh, x->index, write, whole)) {
		if ((err = vcl_mem_migrate(mem, q, x, &arrival)) != CL_SUCCESS)
			goto out;
		vcl_coherence_arrived(&mem->coh, x->index, arrival);
	}
	if ((ready = vcl_coherence_ready(&mem->coh, x->index)) != NULL)
		err = vcl_enq_wait(enq, ready);
out:
	pthread_mutex_unlock(&mem->lock);
	return (err);
}

/*
 * A command on node x wrote the buffer (ev: its event): only x holds the
 * newest bytes now, and whoever needs them must wait for ev there.
 */
void
vcl_mem_written(cl_mem sub, struct vcl_node *x, cl_event ev)
{
	cl_mem	mem = vcl_mem_root(sub);

	if (!vcl_ctx_multi(mem->ctx) || ev == NULL)
		return;
	pthread_mutex_lock(&mem->lock);
	vcl_coherence_written(&mem->coh, x->index, ev);
	pthread_mutex_unlock(&mem->lock);
}

/* The largest allocation any device of the context allows. */
static cl_ulong
vcl_max_alloc(cl_context ctx)
{
	cl_ulong	v, best = 0;
	cl_uint		i;

	for (i = 0; i < ctx->ndevices; i++)
		if (vcl_clGetDeviceInfo(ctx->devices[i],
		    CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof v, &v, NULL) ==
		    CL_SUCCESS && v > best)
			best = v;
	return (best);
}

cl_mem CL_API_CALL
vcl_clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
    void *host_ptr, cl_int *errcode_ret)
{
	cl_mem	mem = NULL;
	cl_int	err = CL_SUCCESS;
	int	i;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF((flags & ~(cl_mem_flags)VCL_MEM_KNOWN) ||
	    !vcl_one_of(flags, VCL_MEM_ACCESS) ||
	    !vcl_one_of(flags, VCL_MEM_HOST) ||
	    ((flags & CL_MEM_USE_HOST_PTR) &&
	    (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))),
	    CL_INVALID_VALUE);
	VCL_GOTO_IF(size == 0 || size > vcl_max_alloc(context),
	    CL_INVALID_BUFFER_SIZE);
	VCL_GOTO_IF((host_ptr == NULL) != !(flags & (CL_MEM_USE_HOST_PTR |
	    CL_MEM_COPY_HOST_PTR)), CL_INVALID_HOST_PTR);
	VCL_GOTO_IF((mem = vcl_object_new(sizeof *mem, VCL_KIND_MEM)) == NULL,
	    CL_OUT_OF_HOST_MEMORY);
	vcl_coherence_init(&mem->coh);
	pthread_mutex_init(&mem->lock, NULL);
	mem->ctx = context;
	vcl_retain(context);
	mem->flags = flags;
	if (!(flags & VCL_MEM_ACCESS))
		mem->flags |= CL_MEM_READ_WRITE;
	mem->size = size;
	mem->host_ptr = host_ptr;
	if (vcl_ctx_multi(context)) {
		/* Made on each node at first use there, with these bytes. */
		if (flags & CL_MEM_COPY_HOST_PTR) {
			VCL_GOTO_IF((mem->coh.init = malloc(size)) == NULL,
			    CL_OUT_OF_HOST_MEMORY);
			memcpy(mem->coh.init, host_ptr, size);
		}
	} else {
		for (i = 0; i < vcl_nnodes() && err == CL_SUCCESS; i++)
			if (context->nodes & (1ull << i))
				err = vcl_mem_on(mem, vcl_node_get(i));
	}
	/* COPY_HOST_PTR's bytes are sent; only USE_HOST_PTR keeps the pointer. */
	if (!(flags & CL_MEM_USE_HOST_PTR))
		mem->host_ptr = NULL;
out:
	if (err != CL_SUCCESS && mem != NULL) {
		vcl_mem_unref(mem);
		mem = NULL;
	}
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (mem);
}

/*
 * 3.0's buffer with a property list. The core defines no buffer property
 * and VCL forwards no extension's, so the list must be empty (NULL or just
 * its 0); CL_MEM_PROPERTIES then returns what was given.
 */
cl_mem CL_API_CALL
vcl_clCreateBufferWithProperties(cl_context context,
    const cl_mem_properties *properties, cl_mem_flags flags, size_t size,
    void *host_ptr, cl_int *errcode_ret)
{
	cl_mem	mem = NULL;
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF(properties != NULL && properties[0] != 0,
	    CL_INVALID_PROPERTY);
	mem = vcl_clCreateBuffer(context, flags, size, host_ptr, &err);
	if (mem != NULL)
		mem->props = properties != NULL;
out:
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (mem);
}

/* True when some device of the context takes a sub-buffer at origin. */
static int
vcl_sub_aligned(cl_context ctx, size_t origin)
{
	cl_uint	i, bits;

	for (i = 0; i < ctx->ndevices; i++)
		if (vcl_clGetDeviceInfo(ctx->devices[i],
		    CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL) ==
		    CL_SUCCESS && bits >= 8 && origin % (bits / 8) == 0)
			return (1);
	return (0);
}

/*
 * A sub-buffer: checked here in full (its creation is not answered), made
 * on the nodes its parent is used on as they need it. It holds a reference
 * on its parent and shares the parent's coherence record.
 */
cl_mem CL_API_CALL
vcl_clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
    cl_buffer_create_type buffer_create_type, const void *buffer_create_info,
    cl_int *errcode_ret)
{
	const cl_buffer_region	*r = buffer_create_info;
	cl_mem			 mem = NULL;
	cl_mem_flags		 pf;
	cl_int			 err = CL_SUCCESS;
	int			 i;

	VCL_GOTO_IF(!vcl_is(buffer, VCL_KIND_MEM) || buffer->parent != NULL,
	    CL_INVALID_MEM_OBJECT);
	pf = buffer->flags;
	/* Host pointer flags are inherited, never given; access narrows. */
	VCL_GOTO_IF((flags & ~(cl_mem_flags)(VCL_MEM_ACCESS | VCL_MEM_HOST)) ||
	    !vcl_one_of(flags, VCL_MEM_ACCESS) ||
	    !vcl_one_of(flags, VCL_MEM_HOST) ||
	    ((pf & CL_MEM_WRITE_ONLY) &&
	    (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) ||
	    ((pf & CL_MEM_READ_ONLY) &&
	    (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))) ||
	    ((pf & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY)) ||
	    ((pf & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY)) ||
	    ((pf & CL_MEM_HOST_NO_ACCESS) &&
	    (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY))),
	    CL_INVALID_VALUE);
	VCL_GOTO_IF(buffer_create_type != CL_BUFFER_CREATE_TYPE_REGION ||
	    r == NULL, CL_INVALID_VALUE);
	VCL_GOTO_IF(r->size == 0, CL_INVALID_BUFFER_SIZE);
	VCL_GOTO_IF(r->origin > buffer->size ||
	    r->size > buffer->size - r->origin, CL_INVALID_VALUE);
	VCL_GOTO_IF(!vcl_sub_aligned(buffer->ctx, r->origin),
	    CL_MISALIGNED_SUB_BUFFER_OFFSET);
	VCL_GOTO_IF((mem = vcl_object_new(sizeof *mem, VCL_KIND_MEM)) == NULL,
	    CL_OUT_OF_HOST_MEMORY);
	vcl_coherence_init(&mem->coh);
	pthread_mutex_init(&mem->lock, NULL);
	mem->ctx = buffer->ctx;
	vcl_retain(mem->ctx);
	mem->parent = buffer;
	vcl_retain(buffer);
	mem->origin = r->origin;
	mem->size = r->size;
	mem->flags = flags | (pf & VCL_MEM_HOSTPTR);
	if (!(flags & VCL_MEM_ACCESS))
		mem->flags |= pf & VCL_MEM_ACCESS;
	if (!(flags & VCL_MEM_HOST))
		mem->flags |= pf & VCL_MEM_HOST;
	if (buffer->host_ptr != NULL)
		mem->host_ptr = (char *)buffer->host_ptr + r->origin;
	if (!vcl_ctx_multi(mem->ctx)) {
		pthread_mutex_lock(&buffer->lock);
		for (i = 0; i < vcl_nnodes() && err == CL_SUCCESS; i++)
			if (mem->ctx->nodes & (1ull << i))
				err = vcl_mem_on(mem, vcl_node_get(i));
		pthread_mutex_unlock(&buffer->lock);
	}
out:
	if (err != CL_SUCCESS && mem != NULL) {
		vcl_mem_unref(mem);
		mem = NULL;
	}
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (mem);
}

cl_int CL_API_CALL
vcl_clRetainMemObject(cl_mem memobj)
{
	if (!vcl_is(memobj, VCL_KIND_MEM))
		return (CL_INVALID_MEM_OBJECT);
	vcl_retain(memobj);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clReleaseMemObject(cl_mem memobj)
{
	if (!vcl_is(memobj, VCL_KIND_MEM))
		return (CL_INVALID_MEM_OBJECT);
	vcl_mem_unref(memobj);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clSetMemObjectDestructorCallback(cl_mem memobj,
    void (CL_CALLBACK *pfn_notify)(cl_mem, void *), void *user_data)
{
	struct vcl_mem_cb	*cb;

	if (!vcl_is(memobj, VCL_KIND_MEM))
		return (CL_INVALID_MEM_OBJECT);
	if (pfn_notify == NULL)
		return (CL_INVALID_VALUE);
	if ((cb = calloc(1, sizeof *cb)) == NULL)
		return (CL_OUT_OF_HOST_MEMORY);
	cb->fn = pfn_notify;
	cb->arg = user_data;
	pthread_mutex_lock(&memobj->lock);
	cb->next = memobj->dtors;
	memobj->dtors = cb;
	pthread_mutex_unlock(&memobj->lock);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	cl_mem_object_type	 type = CL_MEM_OBJECT_BUFFER;
	cl_bool			 no = CL_FALSE;
	cl_mem_properties	 noprops = 0;
	cl_uint			 u;
	cl_mem			 none = NULL;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(memobj, VCL_KIND_MEM), CL_INVALID_MEM_OBJECT);
	switch (param_name) {
	case CL_MEM_TYPE:
		if (vcl_mem_is_image(memobj))
			type = memobj->type;
		err = vcl_info_ret(&type, sizeof type, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_MEM_FLAGS:
		err = vcl_info_ret(&memobj->flags, sizeof memobj->flags,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_MEM_SIZE:
		err = vcl_info_ret(&memobj->size, sizeof memobj->size,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_MEM_HOST_PTR:
		err = vcl_info_ret(&memobj->host_ptr, sizeof memobj->host_ptr,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_MEM_MAP_COUNT:
		pthread_mutex_lock(&memobj->lock);
		u = memobj->nmaps;
		pthread_mutex_unlock(&memobj->lock);
		err = vcl_info_ret(&u, sizeof u, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_MEM_REFERENCE_COUNT:
		u = (cl_uint)atomic_load(&memobj->obj.refs);
		err = vcl_info_ret(&u, sizeof u, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_MEM_CONTEXT:
		err = vcl_info_ret(&memobj->ctx, sizeof memobj->ctx,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_MEM_ASSOCIATED_MEMOBJECT:
		if (memobj->parent != NULL)
			none = memobj->parent;
		else if (vcl_mem_is_image(memobj))
			none = memobj->buffer;
		err = vcl_info_ret(&none, sizeof none, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_MEM_OFFSET:
		err = vcl_info_ret(&memobj->origin, sizeof memobj->origin,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_MEM_USES_SVM_POINTER:
		err = vcl_info_ret(&no, sizeof no, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_MEM_PROPERTIES:
		err = vcl_info_ret(&noprops, memobj->props ? sizeof noprops : 0,
		    param_value_size, param_value, param_value_size_ret);
		break;
	default:
		err = CL_INVALID_VALUE;
		break;
	}
out:
	return (err);
}

/* Common checks of a command on a buffer range. */
static cl_int
vcl_mem_check(cl_command_queue q, cl_mem mem, size_t offset, size_t size)
{
	if (!vcl_is(q, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	if (!vcl_is(mem, VCL_KIND_MEM) || vcl_mem_is_image(mem))
		return (CL_INVALID_MEM_OBJECT);
	if (mem->ctx != q->ctx)
		return (CL_INVALID_CONTEXT);
	if (size == 0 || offset > mem->size || size > mem->size - offset)
		return (CL_INVALID_VALUE);
	return (CL_SUCCESS);
}

/*
 * A non-blocking read's bytes are in, or it failed: the queue has one read
 * less to wait for. With no event (quiet) a failure is the queue's to
 * tell at its next clFinish, set before the read stops counting.
 */
static void
vcl_mem_read_end(struct vcl_pending *p, cl_command_queue q, int quiet)
{
	struct vcl_node		*n = q->dev->node;

	pthread_mutex_lock(&n->lock);
	if (quiet)
		vcl_queue_defer(q, p->status);
	atomic_fetch_sub(&q->inflight, 1);
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	if (p->msg != NULL)
		vcl__to_client__free_unpacked(p->msg, NULL);
	vcl_queue_unref(q);
	free(p);
}

/* A non-blocking read's (a buffer's or an image's) with an event is in. */
void
vcl_mem_read_done(struct vcl_pending *p)
{
	vcl_mem_read_end(p, p->arg, 0);
}

/* The same with no event: its failure waits for the queue's clFinish. */
void
vcl_mem_read_done_quiet(struct vcl_pending *p)
{
	vcl_mem_read_end(p, p->arg, 1);
}

/*
 * Read a range into ptr. Blocking: one round trip, the reply's bytes land
 * in ptr. Non-blocking: the receiver lands them later; the event (if any)
 * completes after they are in. Either way through the ring where it can
 * (vcl_bulk.h).
 */
static cl_int
vcl_read(cl_command_queue q, cl_mem mem, cl_bool blocking, size_t offset,
    size_t size, void *ptr, cl_uint n, const cl_event *list, cl_event *event,
    cl_command_type type)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	 m = VCL__READ_BUFFER__INIT;
	struct vcl_node	*node = q->dev->node;
	struct vcl_enq	 enq;
	cl_event	 ev = NULL;
	cl_int		 err;

	if ((err = vcl_enq_prepare(&enq, q, n, list, event, type, 0)) !=
	    CL_SUCCESS)
		return (err);
	if ((err = vcl_mem_use(&enq, q, mem, 0, 0)) != CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		return (err);
	}
	m.q = &enq.e;
	m.mem = mem->obj.id;
	m.offset = offset;
	m.size = size;
	req.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	req.read_buffer = &m;
	if (blocking) {
		err = vcl_bulk_pick(node, q, size)->read(node, &req, &m, ptr,
		    q);
		vcl_enq_finish(&enq, err == CL_DEVICE_NOT_AVAILABLE ? err :
		    CL_SUCCESS, &ev);
		/* The event's notification is right behind the reply. */
		if (ev != NULL) {
			vcl_event_wait(1, &ev);
			*event = ev;
		}
		return (err);
	}
	err = vcl_bulk_pick(node, q, size)->nbread(node, &req, &m, ptr, q,
	    enq.internal ? NULL : enq.ev);
	vcl_enq_finish(&enq, err, event);
	return (err);
}

cl_int CL_API_CALL
vcl_clEnqueueReadBuffer(cl_command_queue command_queue, cl_mem buffer,
    cl_bool blocking_read, size_t offset, size_t size, void *ptr,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	cl_int	err;

	if ((err = vcl_mem_check(command_queue, buffer, offset, size)) !=
	    CL_SUCCESS)
		return (err);
	if (ptr == NULL)
		return (CL_INVALID_VALUE);
	if (buffer->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS))
		return (CL_INVALID_OPERATION);
	return (vcl_read(command_queue, buffer, blocking_read, offset, size,
	    ptr, num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_READ_BUFFER));
}

/*
 * Write a range from ptr: the bytes go out with the request, so ptr is
 * free again when this returns, blocking or not.
 */
static cl_int
vcl_write(cl_command_queue q, cl_mem mem, size_t offset, size_t size,
    const void *ptr, cl_uint n, const cl_event *list, cl_event *event,
    cl_command_type type)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	 m = VCL__WRITE_BUFFER__INIT;
	struct vcl_node		*node = q->dev->node;
	struct vcl_enq		 enq;
	cl_int			 err;

	if ((err = vcl_enq_prepare(&enq, q, n, list, event, type,
	    vcl_ctx_multi(q->ctx))) != CL_SUCCESS)
		return (err);
	if ((err = vcl_mem_use(&enq, q, mem, 1, offset == 0 &&
	    size == mem->size)) != CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		return (err);
	}
	m.q = &enq.e;
	m.mem = mem->obj.id;
	m.offset = offset;
	m.size = size;
	req.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	req.write_buffer = &m;
	err = vcl_bulk_pick(node, q, size)->write(node, &req, &m, ptr);
	if (err == CL_SUCCESS)
		vcl_mem_written(mem, node, enq.ev);
	vcl_enq_finish(&enq, err, event);
	return (err);
}

cl_int CL_API_CALL
vcl_clEnqueueWriteBuffer(cl_command_queue command_queue, cl_mem buffer,
    cl_bool blocking_write, size_t offset, size_t size, const void *ptr,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	cl_int	err;

	if ((err = vcl_mem_check(command_queue, buffer, offset, size)) !=
	    CL_SUCCESS)
		return (err);
	if (ptr == NULL)
		return (CL_INVALID_VALUE);
	if (buffer->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS))
		return (CL_INVALID_OPERATION);
	return (vcl_write(command_queue, buffer, offset, size, ptr,
	    num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_WRITE_BUFFER));
}

cl_int CL_API_CALL
vcl_clEnqueueCopyBuffer(cl_command_queue command_queue, cl_mem src_buffer,
    cl_mem dst_buffer, size_t src_offset, size_t dst_offset, size_t size,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__CopyBuffer	 m = VCL__COPY_BUFFER__INIT;
	struct vcl_node	*node;
	struct vcl_enq	 enq;
	cl_int		 err;

	if ((err = vcl_mem_check(command_queue, src_buffer, src_offset,
	    size)) != CL_SUCCESS ||
	    (err = vcl_mem_check(command_queue, dst_buffer, dst_offset,
	    size)) != CL_SUCCESS)
		return (err);
	if (src_buffer == dst_buffer &&
	    ((src_offset <= dst_offset && dst_offset < src_offset + size) ||
	    (dst_offset <= src_offset && src_offset < dst_offset + size)))
		return (CL_MEM_COPY_OVERLAP);
	node = command_queue->dev->node;
	if ((err = vcl_enq_prepare(&enq, command_queue,
	    num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_COPY_BUFFER, vcl_ctx_multi(command_queue->ctx))) !=
	    CL_SUCCESS)
		return (err);
	/* A source on another node comes here server to server first. */
	if ((err = vcl_mem_use(&enq, command_queue, src_buffer, 0, 0)) !=
	    CL_SUCCESS || (err = vcl_mem_use(&enq, command_queue, dst_buffer,
	    1, dst_offset == 0 && size == dst_buffer->size)) != CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		return (err);
	}
	m.q = &enq.e;
	m.src = src_buffer->obj.id;
	m.dst = dst_buffer->obj.id;
	m.src_offset = src_offset;
	m.dst_offset = dst_offset;
	m.size = size;
	req.call_case = VCL__REQUEST__CALL_COPY_BUFFER;
	req.copy_buffer = &m;
	if ((err = vcl_node_send(node, &req, NULL, 0, 0)) == CL_SUCCESS)
		vcl_mem_written(dst_buffer, node, enq.ev);
	vcl_enq_finish(&enq, err, event);
	return (err);
}

cl_int CL_API_CALL
vcl_clEnqueueFillBuffer(cl_command_queue command_queue, cl_mem buffer,
    const void *pattern, size_t pattern_size, size_t offset, size_t size,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__FillBuffer	 m = VCL__FILL_BUFFER__INIT;
	struct vcl_node	*node;
	struct vcl_enq	 enq;
	cl_int		 err;

	if ((err = vcl_mem_check(command_queue, buffer, offset, size)) !=
	    CL_SUCCESS)
		return (err);
	if (pattern == NULL || pattern_size == 0 || pattern_size > 128 ||
	    (pattern_size & (pattern_size - 1)) != 0 ||
	    offset % pattern_size != 0 || size % pattern_size != 0)
		return (CL_INVALID_VALUE);
	node = command_queue->dev->node;
	if ((err = vcl_enq_prepare(&enq, command_queue,
	    num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_FILL_BUFFER, vcl_ctx_multi(command_queue->ctx))) !=
	    CL_SUCCESS)
		return (err);
	if ((err = vcl_mem_use(&enq, command_queue, buffer, 1, offset == 0 &&
	    size == buffer->size)) != CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		return (err);
	}
	m.q = &enq.e;
	m.mem = buffer->obj.id;
	m.pattern.data = (uint8_t *)pattern;
	m.pattern.len = pattern_size;
	m.offset = offset;
	m.size = size;
	req.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
	req.fill_buffer = &m;
	if ((err = vcl_node_send(node, &req, NULL, 0, 0)) == CL_SUCCESS)
		vcl_mem_written(buffer, node, enq.ev);
	vcl_enq_finish(&enq, err, event);
	return (err);
}

/*
 * A map that moves no bytes (CL_MAP_WRITE_INVALIDATE_REGION): a marker of
 * type. Blocking, the region is the application's only once the wait list
 * is done, so the marker is waited for (through an event of its own when
 * the caller asks none) and its failure is the map's: the node lost, or an
 * event of the list failed.
 */
cl_int
vcl_mem_map_marker(cl_command_queue q, cl_bool blocking, cl_uint n,
    const cl_event *list, cl_event *event, cl_command_type type)
{
	cl_event	ev = NULL;
	cl_int		err;

	err = vcl_marker_typed(q, n, list, blocking || event != NULL ? &ev :
	    NULL, type);
	if (err == CL_SUCCESS && blocking && vcl_event_wait(1, &ev) !=
	    CL_SUCCESS)
		err = vcl_node_status(q->dev->node) != CL_SUCCESS ?
		    CL_DEVICE_NOT_AVAILABLE :
		    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
	if (ev != NULL && err == CL_SUCCESS && event != NULL)
		*event = ev;
	else if (ev != NULL)
		vcl_event_unref(ev);
	return (err);
}

/*
 * Map: the region's bytes are read into host memory (the USE_HOST_PTR
 * memory, else memory of ours) unless the map only writes; unmap writes
 * them back when the map could have changed them.
 */
void * CL_API_CALL
vcl_clEnqueueMapBuffer(cl_command_queue command_queue, cl_mem buffer,
    cl_bool blocking_map, cl_map_flags map_flags, size_t offset, size_t size,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event, cl_int *errcode_ret)
{
	struct vcl_map	*m = NULL;
	void		*ptr = NULL;
	cl_int		 err;
	const cl_map_flags rw = CL_MAP_READ | CL_MAP_WRITE;

	if ((err = vcl_mem_check(command_queue, buffer, offset, size)) !=
	    CL_SUCCESS)
		goto out;
	VCL_GOTO_IF((map_flags & ~(rw | CL_MAP_WRITE_INVALIDATE_REGION)) ||
	    ((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) && (map_flags & rw)),
	    CL_INVALID_VALUE);
	VCL_GOTO_IF((map_flags & CL_MAP_READ) && (buffer->flags &
	    (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)),
	    CL_INVALID_OPERATION);
	VCL_GOTO_IF((map_flags & (CL_MAP_WRITE |
	    CL_MAP_WRITE_INVALIDATE_REGION)) && (buffer->flags &
	    (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)),
	    CL_INVALID_OPERATION);
	VCL_GOTO_IF((m = calloc(1, sizeof *m)) == NULL, CL_OUT_OF_HOST_MEMORY);
	if (buffer->host_ptr != NULL)
		ptr = (char *)buffer->host_ptr + offset;
	else {
		VCL_GOTO_IF(posix_memalign(&ptr, 128, size) != 0,
		    CL_OUT_OF_HOST_MEMORY);
		m->owned = 1;
	}
	if (map_flags & rw)
		err = vcl_read(command_queue, buffer, blocking_map, offset,
		    size, ptr, num_events_in_wait_list, event_wait_list, event,
		    CL_COMMAND_MAP_BUFFER);
	else
		err = vcl_mem_map_marker(command_queue, blocking_map,
		    num_events_in_wait_list, event_wait_list, event,
		    CL_COMMAND_MAP_BUFFER);
	VCL_GOTO_IF(err != CL_SUCCESS, err);
	m->ptr = ptr;
	m->offset = offset;
	m->size = size;
	m->flags = map_flags;
	pthread_mutex_lock(&buffer->lock);
	m->next = buffer->maps;
	buffer->maps = m;
	buffer->nmaps++;
	pthread_mutex_unlock(&buffer->lock);
	m = NULL;
out:
	if (err != CL_SUCCESS) {
		if (m != NULL && m->owned)
			free(ptr);
		ptr = NULL;
	}
	free(m);
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (ptr);
}

cl_int CL_API_CALL
vcl_clEnqueueUnmapMemObject(cl_command_queue command_queue, cl_mem memobj,
    void *mapped_ptr, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event)
{
	struct vcl_map	*m, **mp;
	cl_int		 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(command_queue, VCL_KIND_QUEUE),
	    CL_INVALID_COMMAND_QUEUE);
	VCL_GOTO_IF(!vcl_is(memobj, VCL_KIND_MEM), CL_INVALID_MEM_OBJECT);
	VCL_GOTO_IF(memobj->ctx != command_queue->ctx, CL_INVALID_CONTEXT);
	pthread_mutex_lock(&memobj->lock);
	for (mp = &memobj->maps; (m = *mp) != NULL; mp = &m->next)
		if (m->ptr == mapped_ptr)
			break;
	if (m != NULL) {
		*mp = m->next;
		memobj->nmaps--;
	}
	pthread_mutex_unlock(&memobj->lock);
	VCL_GOTO_IF(m == NULL, CL_INVALID_VALUE);
	if (vcl_mem_is_image(memobj))
		err = vcl_image_unmap(command_queue, memobj, m,
		    num_events_in_wait_list, event_wait_list, event);
	else if (m->flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))
		err = vcl_write(command_queue, memobj, m->offset, m->size,
		    m->ptr, num_events_in_wait_list, event_wait_list, event,
		    CL_COMMAND_UNMAP_MEM_OBJECT);
	else
		err = vcl_marker_typed(command_queue, num_events_in_wait_list,
		    event_wait_list, event, CL_COMMAND_UNMAP_MEM_OBJECT);
	/* The bytes are on their way already: our memory can go. */
	if (m->owned)
		free(m->ptr);
	free(m);
out:
	return (err);
}

/*
 * Check a rectangle: origin and region given, no empty region, pitches 0
 * computed (set here) or large enough, and its bytes inside size (SIZE_MAX
 * for host memory). *start: the offset of its first byte. Every sum and
 * product is checked for overflow.
 */
static cl_int
vcl_rect(const size_t *origin, const size_t *region, size_t *row,
    size_t *slice, size_t size, size_t *start)
{
	size_t	t, u, end;

	if (origin == NULL || region == NULL || region[0] == 0 ||
	    region[1] == 0 || region[2] == 0)
		return (CL_INVALID_VALUE);
	if (*row == 0)
		*row = region[0];
	else if (*row < region[0])
		return (CL_INVALID_VALUE);
	if (__builtin_mul_overflow(region[1], *row, &t))
		return (CL_INVALID_VALUE);
	if (*slice == 0)
		*slice = t;
	else if (*slice < t || *slice % *row != 0)
		return (CL_INVALID_VALUE);
	if (__builtin_mul_overflow(origin[2], *slice, start) ||
	    __builtin_mul_overflow(origin[1], *row, &t) ||
	    __builtin_add_overflow(*start, t, start) ||
	    __builtin_add_overflow(*start, origin[0], start) ||
	    __builtin_mul_overflow(region[2] - 1, *slice, &t) ||
	    __builtin_mul_overflow(region[1] - 1, *row, &u) ||
	    __builtin_add_overflow(t, u, &t) ||
	    __builtin_add_overflow(t, region[0], &t) ||
	    __builtin_add_overflow(*start, t, &end) || end > size)
		return (CL_INVALID_VALUE);
	return (CL_SUCCESS);
}

/* A host rectangle with tight pitches: its bytes are already packed. */
static int
vcl_rect_tight(const size_t *region, size_t row, size_t slice)
{
	return (row == region[0] && (region[2] == 1 ||
	    slice == region[0] * region[1]));
}

/* Copy a region between a host rectangle at base and packed bytes. */
static void
vcl_rect_pack(char *packed, char *base, const size_t *region, size_t row,
    size_t slice, int unpack)
{
	size_t	y, z;
	char	*h;

	for (z = 0; z < region[2]; z++)
		for (y = 0; y < region[1]; y++) {
			h = base + z * slice + y * row;
			if (unpack)
				memcpy(h, packed, region[0]);
			else
				memcpy(packed, h, region[0]);
			packed += region[0];
		}
}

/* The buffer-side rectangle, in the wire's form. */
struct vcl_rect_wire {
	uint64_t	origin[3], region[3];
};

/* Fill wire triples from size_t ones. */
static void
vcl_rect_wire(struct vcl_rect_wire *w, const size_t *origin,
    const size_t *region)
{
	int	i;

	for (i = 0; i < 3; i++) {
		w->origin[i] = origin[i];
		w->region[i] = region[i];
	}
}

/* Checks common to a rect read or write; *hstart: host rect's start. */
static cl_int
vcl_rect_check(cl_command_queue q, cl_mem mem, const size_t *bo,
    const size_t *ho, const size_t *region, size_t *brow, size_t *bslice,
    size_t *hrow, size_t *hslice, const void *ptr, size_t *hstart)
{
	size_t	bstart;
	cl_int	err;

	if (!vcl_is(q, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	if (!vcl_is(mem, VCL_KIND_MEM))
		return (CL_INVALID_MEM_OBJECT);
	if (mem->ctx != q->ctx)
		return (CL_INVALID_CONTEXT);
	if (ptr == NULL)
		return (CL_INVALID_VALUE);
	if ((err = vcl_rect(bo, region, brow, bslice, mem->size, &bstart)) !=
	    CL_SUCCESS)
		return (err);
	return (vcl_rect(ho, region, hrow, hslice, SIZE_MAX, hstart));
}

/* What a non-blocking rect read unpacks when its bytes are in. */
struct vcl_rect_read {
	cl_command_queue	 q;
	char			*packed;	/* ours, or NULL: landed in place */
	char			*base;
	size_t			 region[3], row, slice;
	int			 quiet;		/* no event */
};

/* A non-blocking rect read's bytes are in: put them in their rectangle. */
static void
vcl_rect_read_done(struct vcl_pending *p)
{
	struct vcl_rect_read	*rr = p->arg;
	cl_command_queue	 q;
	int			 quiet;

	if (rr->packed != NULL) {
		if (p->status == CL_SUCCESS)
			vcl_rect_pack(rr->packed, rr->base, rr->region,
			    rr->row, rr->slice, 1);
		free(rr->packed);
	}
	q = rr->q;
	quiet = rr->quiet;
	free(rr);
	vcl_mem_read_end(p, q, quiet);
}

cl_int CL_API_CALL
vcl_clEnqueueReadBufferRect(cl_command_queue command_queue, cl_mem buffer,
    cl_bool blocking_read, const size_t *buffer_origin,
    const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
    void *ptr, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__ReadBufferRect	 m = VCL__READ_BUFFER_RECT__INIT;
	struct vcl_rect_wire	 w;
	struct vcl_rect_read	*rr = NULL;
	struct vcl_node		*node;
	struct vcl_enq		 enq;
	cl_event		 ev = NULL;
	char			*base, *packed = NULL;
	size_t			 hstart, n;
	cl_int			 err;

	if ((err = vcl_rect_check(command_queue, buffer, buffer_origin,
	    host_origin, region, &buffer_row_pitch, &buffer_slice_pitch,
	    &host_row_pitch, &host_slice_pitch, ptr, &hstart)) != CL_SUCCESS)
		return (err);
	if (buffer->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS))
		return (CL_INVALID_OPERATION);
	node = command_queue->dev->node;
	base = (char *)ptr + hstart;
	n = region[0] * region[1] * region[2];	/* inside the buffer */
	if (!vcl_rect_tight(region, host_row_pitch, host_slice_pitch) &&
	    (packed = malloc(n)) == NULL)
		return (CL_OUT_OF_HOST_MEMORY);
	if (!blocking_read && (rr = calloc(1, sizeof *rr)) == NULL) {
		free(packed);
		return (CL_OUT_OF_HOST_MEMORY);
	}
	if ((err = vcl_enq_prepare(&enq, command_queue,
	    num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_READ_BUFFER_RECT, 0)) != CL_SUCCESS)
		goto out;
	if ((err = vcl_mem_use(&enq, command_queue, buffer, 0, 0)) !=
	    CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		goto out;
	}
	vcl_rect_wire(&w, buffer_origin, region);
	m.q = &enq.e;
	m.mem = buffer->obj.id;
	m.origin = w.origin;
	m.n_origin = 3;
	m.region = w.region;
	m.n_region = 3;
	m.row_pitch = buffer_row_pitch;
	m.slice_pitch = buffer_slice_pitch;
	req.call_case = VCL__REQUEST__CALL_READ_BUFFER_RECT;
	req.read_buffer_rect = &m;
	if (blocking_read) {
		err = vcl_node_call(node, &req, NULL, 0, packed != NULL ?
		    packed : base, n, NULL);
		if (err == CL_SUCCESS && packed != NULL)
			vcl_rect_pack(packed, base, region, host_row_pitch,
			    host_slice_pitch, 1);
		vcl_enq_finish(&enq, err == CL_DEVICE_NOT_AVAILABLE ? err :
		    CL_SUCCESS, &ev);
		/* The event's notification is right behind the reply. */
		if (ev != NULL) {
			vcl_event_wait(1, &ev);
			*event = ev;
		}
		goto out;
	}
	rr->q = command_queue;
	rr->packed = packed;
	rr->base = base;
	memcpy(rr->region, region, sizeof rr->region);
	rr->row = host_row_pitch;
	rr->slice = host_slice_pitch;
	rr->quiet = event == NULL;
	vcl_retain(command_queue);
	atomic_fetch_add(&command_queue->inflight, 1);
	if ((err = vcl_node_call_async(node, &req, packed != NULL ? packed :
	    base, n, vcl_rect_read_done, rr)) != CL_SUCCESS) {
		atomic_fetch_sub(&command_queue->inflight, 1);
		vcl_queue_unref(command_queue);
	} else {
		packed = NULL;		/* the reply frees them */
		rr = NULL;
	}
	vcl_enq_finish(&enq, err, event);
out:
	free(packed);
	free(rr);
	return (err);
}

cl_int CL_API_CALL
vcl_clEnqueueWriteBufferRect(cl_command_queue command_queue, cl_mem buffer,
    cl_bool blocking_write, const size_t *buffer_origin,
    const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
    const void *ptr, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__WriteBufferRect	 m = VCL__WRITE_BUFFER_RECT__INIT;
	struct vcl_rect_wire	 w;
	struct vcl_node		*node;
	struct vcl_enq		 enq;
	char			*base, *packed = NULL;
	size_t			 hstart, n;
	cl_int			 err;

	(void)blocking_write;	/* the bytes leave before this returns */
	if ((err = vcl_rect_check(command_queue, buffer, buffer_origin,
	    host_origin, region, &buffer_row_pitch, &buffer_slice_pitch,
	    &host_row_pitch, &host_slice_pitch, ptr, &hstart)) != CL_SUCCESS)
		return (err);
	if (buffer->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS))
		return (CL_INVALID_OPERATION);
	node = command_queue->dev->node;
	base = (char *)ptr + hstart;
	n = region[0] * region[1] * region[2];
	if (!vcl_rect_tight(region, host_row_pitch, host_slice_pitch)) {
		if ((packed = malloc(n)) == NULL)
			return (CL_OUT_OF_HOST_MEMORY);
		vcl_rect_pack(packed, base, region, host_row_pitch,
		    host_slice_pitch, 0);
	}
	if ((err = vcl_enq_prepare(&enq, command_queue,
	    num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_WRITE_BUFFER_RECT, vcl_ctx_multi(command_queue->ctx))) !=
	    CL_SUCCESS)
		goto out;
	if ((err = vcl_mem_use(&enq, command_queue, buffer, 1, 0)) !=
	    CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		goto out;
	}
	vcl_rect_wire(&w, buffer_origin, region);
	m.q = &enq.e;
	m.mem = buffer->obj.id;
	m.origin = w.origin;
	m.n_origin = 3;
	m.region = w.region;
	m.n_region = 3;
	m.row_pitch = buffer_row_pitch;
	m.slice_pitch = buffer_slice_pitch;
	req.call_case = VCL__REQUEST__CALL_WRITE_BUFFER_RECT;
	req.write_buffer_rect = &m;
	if ((err = vcl_node_send(node, &req, packed != NULL ? packed : base,
	    n, 0)) == CL_SUCCESS)
		vcl_mem_written(buffer, node, enq.ev);
	vcl_enq_finish(&enq, err, event);
out:
	free(packed);
	return (err);
}

/*
 * Whether two rectangles of one buffer with the same pitches overlap: the
 * check of the OpenCL specification's appendix (check_copy_overlap). The
 * rectangles are inside the buffer, so nothing here overflows.
 */
static int
vcl_rect_overlap(const size_t *so, const size_t *d, const size_t *region,
    size_t row, size_t slice)
{
	size_t	slice_size = (region[1] - 1) * row + region[0];
	size_t	block = (region[2] - 1) * slice + slice_size;
	size_t	ss = so[2] * slice + so[1] * row + so[0];
	size_t	ds = d[2] * slice + d[1] * row + d[0];
	size_t	sdx, ddx, sdy, ddy;

	if (ds + block <= ss || ss + block <= ds)
		return (0);
	sdx = so[0] % row;
	ddx = d[0] % row;
	if ((ddx >= sdx + region[0] && ddx + region[0] <= sdx + row) ||
	    (sdx >= ddx + region[0] && sdx + region[0] <= ddx + row))
		return (0);
	sdy = (so[1] * row + so[0]) % slice;
	ddy = (d[1] * row + d[0]) % slice;
	if ((ddy >= sdy + slice_size && ddy + slice_size <= sdy + slice) ||
	    (sdy >= ddy + slice_size && sdy + slice_size <= ddy + slice))
		return (0);
	return (1);
}

cl_int CL_API_CALL
vcl_clEnqueueCopyBufferRect(cl_command_queue command_queue,
    cl_mem src_buffer, cl_mem dst_buffer, const size_t *src_origin,
    const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
    size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CopyBufferRect	 m = VCL__COPY_BUFFER_RECT__INIT;
	struct vcl_rect_wire	 sw, dw;
	struct vcl_node		*node;
	struct vcl_enq		 enq;
	size_t			 start;
	cl_int			 err;

	if (!vcl_is(command_queue, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	if (!vcl_is(src_buffer, VCL_KIND_MEM) ||
	    !vcl_is(dst_buffer, VCL_KIND_MEM))
		return (CL_INVALID_MEM_OBJECT);
	if (src_buffer->ctx != command_queue->ctx ||
	    dst_buffer->ctx != command_queue->ctx)
		return (CL_INVALID_CONTEXT);
	if ((err = vcl_rect(src_origin, region, &src_row_pitch,
	    &src_slice_pitch, src_buffer->size, &start)) != CL_SUCCESS ||
	    (err = vcl_rect(dst_origin, region, &dst_row_pitch,
	    &dst_slice_pitch, dst_buffer->size, &start)) != CL_SUCCESS)
		return (err);
	if (src_buffer == dst_buffer) {
		/* One layout for both, or no overlap check is possible. */
		if (src_row_pitch != dst_row_pitch ||
		    src_slice_pitch != dst_slice_pitch)
			return (CL_INVALID_VALUE);
		if (vcl_rect_overlap(src_origin, dst_origin, region,
		    src_row_pitch, src_slice_pitch))
			return (CL_MEM_COPY_OVERLAP);
	}
	node = command_queue->dev->node;
	if ((err = vcl_enq_prepare(&enq, command_queue,
	    num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_COPY_BUFFER_RECT, vcl_ctx_multi(command_queue->ctx))) !=
	    CL_SUCCESS)
		return (err);
	/* A source on another node comes here server to server first. */
	if ((err = vcl_mem_use(&enq, command_queue, src_buffer, 0, 0)) !=
	    CL_SUCCESS || (err = vcl_mem_use(&enq, command_queue, dst_buffer,
	    1, 0)) != CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		return (err);
	}
	vcl_rect_wire(&sw, src_origin, region);
	vcl_rect_wire(&dw, dst_origin, region);
	m.q = &enq.e;
	m.src = src_buffer->obj.id;
	m.dst = dst_buffer->obj.id;
	m.src_origin = sw.origin;
	m.n_src_origin = 3;
	m.dst_origin = dw.origin;
	m.n_dst_origin = 3;
	m.region = sw.region;
	m.n_region = 3;
	m.src_row_pitch = src_row_pitch;
	m.src_slice_pitch = src_slice_pitch;
	m.dst_row_pitch = dst_row_pitch;
	m.dst_slice_pitch = dst_slice_pitch;
	req.call_case = VCL__REQUEST__CALL_COPY_BUFFER_RECT;
	req.copy_buffer_rect = &m;
	if ((err = vcl_node_send(node, &req, NULL, 0, 0)) == CL_SUCCESS)
		vcl_mem_written(dst_buffer, node, enq.ev);
	vcl_enq_finish(&enq, err, event);
	return (err);
}

/*
 * Migrate: start moving each buffer's newest bytes to the queue's node now
 * (the move a command there would otherwise start), so a later command
 * there finds them in place. CONTENT_UNDEFINED moves nothing and makes the
 * queue's node the holder of the newest bytes; HOST keeps the bytes where
 * they are (VCL's host memory is a node's too): a marker. The command is a
 * marker on the queue, waiting for the arrivals.
 */
cl_int CL_API_CALL
vcl_clEnqueueMigrateMemObjects(cl_command_queue command_queue,
    cl_uint num_mem_objects, const cl_mem *mem_objects,
    cl_mem_migration_flags flags, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__Marker	 mk = VCL__MARKER__INIT;
	struct vcl_node	*node;
	struct vcl_enq	 enq;
	cl_uint		 i;
	cl_int		 err;
	int		 undef = (flags &
	    CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) != 0;

	if (!vcl_is(command_queue, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	if (num_mem_objects == 0 || mem_objects == NULL ||
	    (flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST |
	    CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)))
		return (CL_INVALID_VALUE);
	for (i = 0; i < num_mem_objects; i++) {
		if (!vcl_is(mem_objects[i], VCL_KIND_MEM))
			return (CL_INVALID_MEM_OBJECT);
		if (mem_objects[i]->ctx != command_queue->ctx)
			return (CL_INVALID_CONTEXT);
	}
	if (flags & CL_MIGRATE_MEM_OBJECT_HOST)
		return (vcl_marker_typed(command_queue,
		    num_events_in_wait_list, event_wait_list, event,
		    CL_COMMAND_MIGRATE_MEM_OBJECTS));
	node = command_queue->dev->node;
	if ((err = vcl_enq_prepare(&enq, command_queue,
	    num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_MIGRATE_MEM_OBJECTS, undef &&
	    vcl_ctx_multi(command_queue->ctx))) != CL_SUCCESS)
		return (err);
	for (i = 0; i < num_mem_objects && err == CL_SUCCESS; i++)
		err = vcl_mem_use(&enq, command_queue, mem_objects[i], undef,
		    undef);
	if (err != CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		return (err);
	}
	mk.q = &enq.e;
	req.call_case = VCL__REQUEST__CALL_MARKER;
	req.marker = &mk;
	if ((err = vcl_node_send(node, &req, NULL, 0, 0)) == CL_SUCCESS &&
	    undef)
		for (i = 0; i < num_mem_objects; i++)
			vcl_mem_written(mem_objects[i], node, enq.ev);
	vcl_enq_finish(&enq, err, event);
	return (err);
}
