/* vcl_context.c - contexts (one remote context per node) and command queues. */
#include <stdlib.h>
#include <string.h>

#include "vcl_client.h"
#include "vcl_conn.h"
#include "vcl_context.h"
#include "vcl_info.h"
#include "vcl_log.h"
#include "vcl_object.h"
#include "vcl_platform.h"

/* Drop a reference; the last one releases the context on its nodes. */
void
vcl_context_unref(cl_context ctx)
{
	struct vcl_ctx_cb	*cb;
	cl_uint			 d;
	int			 i;

	if (!vcl_unref(ctx))
		return;
	for (i = 0; i < vcl_nnodes(); i++) {
		if (!(ctx->nodes & (1ull << i)))
			continue;
		vcl_node_release(vcl_node_get(i), vcl_kind_wire(ctx->obj.kind),
		    ctx->obj.id);
		if (!vcl_in_rx)
			vcl_node_flush(vcl_node_get(i));
	}
	/* Destructor callbacks run in reverse order of registration. */
	while ((cb = ctx->dtors) != NULL) {
		ctx->dtors = cb->next;
		cb->fn(ctx, cb->arg);
		free(cb);
	}
	pthread_mutex_destroy(&ctx->lock);
	for (d = 0; ctx->devices != NULL && d < ctx->ndevices; d++)
		vcl_device_unref(ctx->devices[d]);
	free(ctx->devices);
	free(ctx->props);
	vcl_object_free(ctx);
}

/*
 * Check a context property list: only CL_CONTEXT_PLATFORM (ours) and
 * CL_CONTEXT_INTEROP_USER_SYNC, each at most once. Returns the entry count
 * including the terminating 0, or 0 with *err set.
 */
static size_t
vcl_context_props(const cl_context_properties *props, cl_int *err)
{
	size_t	n, i;
	int	seen_plat = 0, seen_sync = 0;

	*err = CL_SUCCESS;
	if (props == NULL)
		return (0);
	for (n = 0; props[n] != 0; n += 2) {
		switch (props[n]) {
		case CL_CONTEXT_PLATFORM:
			if (seen_plat++) {
				*err = CL_INVALID_PROPERTY;
				return (0);
			}
			if (!vcl_is((void *)props[n + 1], VCL_KIND_PLATFORM)) {
				*err = CL_INVALID_PLATFORM;
				return (0);
			}
			break;
		case CL_CONTEXT_INTEROP_USER_SYNC:
			if (seen_sync++) {
				*err = CL_INVALID_PROPERTY;
				return (0);
			}
			break;
		default:
			*err = CL_INVALID_PROPERTY;
			return (0);
		}
	}
	i = n + 1;
	return (i);
}

/*
 * A context over devices, created on each node that holds one of them.
 * Creation is asynchronous: the client checked everything it can.
 */
static cl_context
vcl_context_create(const cl_context_properties *properties, cl_uint num,
    const cl_device_id *devices, void (CL_CALLBACK *pfn_notify)(const char *,
    const void *, size_t, void *), void *user_data, cl_int *errp)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateContext	 m = VCL__CREATE_CONTEXT__INIT;
	uint32_t		 idx[64];
	cl_context		 ctx = NULL;
	size_t			 nprops;
	cl_uint			 i;
	int			 node;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(devices == NULL || num == 0, CL_INVALID_VALUE);
	VCL_GOTO_IF(pfn_notify == NULL && user_data != NULL, CL_INVALID_VALUE);
	nprops = vcl_context_props(properties, &err);
	VCL_GOTO_IF(err != CL_SUCCESS, err);
	for (i = 0; i < num; i++)
		VCL_GOTO_IF(!vcl_is(devices[i], VCL_KIND_DEVICE),
		    CL_INVALID_DEVICE);
	VCL_GOTO_IF((ctx = vcl_object_new(sizeof *ctx, VCL_KIND_CONTEXT)) ==
	    NULL, CL_OUT_OF_HOST_MEMORY);
	pthread_mutex_init(&ctx->lock, NULL);
	if ((ctx->devices = calloc(num, sizeof *ctx->devices)) == NULL ||
	    (nprops > 0 &&
	    (ctx->props = calloc(nprops, sizeof *ctx->props)) == NULL)) {
		err = CL_OUT_OF_HOST_MEMORY;
		goto out;
	}
	memcpy(ctx->devices, devices, num * sizeof *devices);
	ctx->ndevices = num;
	for (i = 0; i < num; i++)
		vcl_device_ref(devices[i]);	/* sub-devices: released at free */
	if (nprops > 0)
		memcpy(ctx->props, properties, nprops * sizeof *properties);
	ctx->nprops = nprops;
	for (i = 0; i < num; i++)
		ctx->nodes |= 1ull << devices[i]->node->index;

	req.call_case = VCL__REQUEST__CALL_CREATE_CONTEXT;
	req.create_context = &m;
	m.id = ctx->obj.id;
	m.devices = idx;
	for (node = 0; node < vcl_nnodes() && err == CL_SUCCESS; node++) {
		if (!(ctx->nodes & (1ull << node)))
			continue;
		m.n_devices = 0;
		for (i = 0; i < num && m.n_devices < 64; i++)
			if (devices[i]->node->index == node)
				idx[m.n_devices++] = devices[i]->index;
		err = vcl_node_send(vcl_node_get(node), &req, NULL, 0, 0);
	}
out:
	if (err != CL_SUCCESS && ctx != NULL) {
		vcl_context_unref(ctx);
		ctx = NULL;
	}
	*errp = err;
	return (ctx);
}

cl_context CL_API_CALL
vcl_clCreateContext(const cl_context_properties *properties,
    cl_uint num_devices, const cl_device_id *devices,
    void (CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
    void *user_data, cl_int *errcode_ret)
{
	cl_context	ctx;
	cl_int		err;

	ctx = vcl_context_create(properties, num_devices, devices, pfn_notify,
	    user_data, &err);
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (ctx);
}

cl_context CL_API_CALL
vcl_clCreateContextFromType(const cl_context_properties *properties,
    cl_device_type device_type,
    void (CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
    void *user_data, cl_int *errcode_ret)
{
	cl_device_id	*devs = NULL;
	cl_context	 ctx = NULL;
	cl_uint		 n = 0, i, live;
	cl_int		 err = CL_SUCCESS;

	VCL_GOTO_IF(pfn_notify == NULL && user_data != NULL, CL_INVALID_VALUE);
	vcl_context_props(properties, &err);
	VCL_GOTO_IF(err != CL_SUCCESS, err);
	err = vcl_clGetDeviceIDs(NULL, device_type, 0, NULL, &n);
	VCL_GOTO_IF(err != CL_SUCCESS, err);
	VCL_GOTO_IF((devs = calloc(n, sizeof *devs)) == NULL,
	    CL_OUT_OF_HOST_MEMORY);
	err = vcl_clGetDeviceIDs(NULL, device_type, n, devs, NULL);
	VCL_GOTO_IF(err != CL_SUCCESS, err);
	/* Over the devices available now: a lost node's are left out. */
	for (i = live = 0; i < n; i++)
		if (vcl_node_status(devs[i]->node) == CL_SUCCESS)
			devs[live++] = devs[i];
	VCL_GOTO_IF(live == 0, CL_DEVICE_NOT_AVAILABLE);
	ctx = vcl_context_create(properties, live, devs, pfn_notify,
	    user_data, &err);
out:
	free(devs);
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (ctx);
}

cl_int CL_API_CALL
vcl_clRetainContext(cl_context context)
{
	if (!vcl_is(context, VCL_KIND_CONTEXT))
		return (CL_INVALID_CONTEXT);
	vcl_retain(context);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clReleaseContext(cl_context context)
{
	if (!vcl_is(context, VCL_KIND_CONTEXT))
		return (CL_INVALID_CONTEXT);
	vcl_context_unref(context);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clGetContextInfo(cl_context context, cl_context_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	cl_uint	u;
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	switch (param_name) {
	case CL_CONTEXT_REFERENCE_COUNT:
		u = (cl_uint)atomic_load(&context->obj.refs);
		err = vcl_info_ret(&u, sizeof u, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_CONTEXT_NUM_DEVICES:
		err = vcl_info_ret(&context->ndevices, sizeof context->ndevices,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_CONTEXT_DEVICES:
		err = vcl_info_ret(context->devices, context->ndevices *
		    sizeof *context->devices, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_CONTEXT_PROPERTIES:
		err = vcl_info_ret(context->props, context->nprops *
		    sizeof *context->props, param_value_size, param_value,
		    param_value_size_ret);
		break;
	default:
		err = CL_INVALID_VALUE;
		break;
	}
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clSetContextDestructorCallback(cl_context context,
    void (CL_CALLBACK *pfn_notify)(cl_context, void *), void *user_data)
{
	struct vcl_ctx_cb	*cb;

	if (!vcl_is(context, VCL_KIND_CONTEXT))
		return (CL_INVALID_CONTEXT);
	if (pfn_notify == NULL)
		return (CL_INVALID_VALUE);
	if ((cb = calloc(1, sizeof *cb)) == NULL)
		return (CL_OUT_OF_HOST_MEMORY);
	cb->fn = pfn_notify;
	cb->arg = user_data;
	pthread_mutex_lock(&context->lock);
	cb->next = context->dtors;
	context->dtors = cb;
	pthread_mutex_unlock(&context->lock);
	return (CL_SUCCESS);
}

/* Drop a reference; the last one releases the queue (an implicit flush). */
void
vcl_queue_unref(cl_command_queue q)
{
	struct vcl_node	*n = q->dev->node;

	if (!vcl_unref(q))
		return;
	vcl_node_release(n, vcl_kind_wire(q->obj.kind), q->obj.id);
	if (!vcl_in_rx)
		vcl_node_flush(n);
	vcl_context_unref(q->ctx);
	free(q->prop_list);
	vcl_object_free(q);
}

/*
 * A non-blocking read with no event failed once its call had returned:
 * nothing else can tell, so the queue's next clFinish does (the first
 * such failure), as the server's Finish does for its other commands.
 * Called before the read's part in q->inflight comes down.
 */
void
vcl_queue_defer(cl_command_queue q, cl_int err)
{
	int	none = CL_SUCCESS;

	if (err != CL_SUCCESS)
		atomic_compare_exchange_strong(&q->deferred, &none, err);
}

/* True when dev is one of the context's devices. */
static int
vcl_context_has(cl_context ctx, cl_device_id dev)
{
	cl_uint	i;

	for (i = 0; i < ctx->ndevices; i++)
		if (ctx->devices[i] == dev)
			return (1);
	return (0);
}

/* The queue properties the device supports on the host, from its snapshot. */
static cl_command_queue_properties
vcl_device_queue_props(cl_device_id dev)
{
	cl_command_queue_properties	p = 0;

	vcl_clGetDeviceInfo(dev, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof p,
	    &p, NULL);
	return (p);
}

cl_command_queue CL_API_CALL
vcl_clCreateCommandQueueWithProperties(cl_context context,
    cl_device_id device, const cl_queue_properties *properties,
    cl_int *errcode_ret)
{
	Vcl__Request			 req = VCL__REQUEST__INIT;
	Vcl__CreateQueue		 m = VCL__CREATE_QUEUE__INIT;
	uint64_t			 wire[2];
	cl_command_queue		 q = NULL;
	cl_command_queue_properties	 props = 0;
	const cl_command_queue_properties known =
	    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE |
	    CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT;
	size_t				 n = 0;
	cl_int				 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF(!vcl_is(device, VCL_KIND_DEVICE) ||
	    !vcl_context_has(context, device), CL_INVALID_DEVICE);
	for (n = 0; properties != NULL && properties[n] != 0; n += 2) {
		switch (properties[n]) {
		case CL_QUEUE_PROPERTIES:
			props = properties[n + 1];
			break;
		case CL_QUEUE_SIZE:
			VCL_GOTO_IF(1, CL_INVALID_QUEUE_PROPERTIES);
			break;
		default:
			VCL_GOTO_IF(1, CL_INVALID_VALUE);
		}
	}
	VCL_GOTO_IF(props & ~known, CL_INVALID_VALUE);
	/* Device-side queues cannot be reached over the wire. */
	VCL_GOTO_IF(props & (CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT),
	    CL_INVALID_QUEUE_PROPERTIES);
	VCL_GOTO_IF(props & ~vcl_device_queue_props(device),
	    CL_INVALID_QUEUE_PROPERTIES);
	VCL_GOTO_IF((q = vcl_object_new(sizeof *q, VCL_KIND_QUEUE)) == NULL,
	    CL_OUT_OF_HOST_MEMORY);
	q->ctx = context;
	vcl_retain(context);
	q->dev = device;
	q->props = props;
	if (properties != NULL) {
		if ((q->prop_list = calloc(n + 1, sizeof *q->prop_list)) ==
		    NULL) {
			err = CL_OUT_OF_HOST_MEMORY;
			goto out;
		}
		memcpy(q->prop_list, properties, (n + 1) * sizeof *properties);
		q->nprop_list = n + 1;
	}
	m.id = q->obj.id;
	m.context = context->obj.id;
	m.device = device->index;
	wire[0] = CL_QUEUE_PROPERTIES;
	wire[1] = props;
	m.properties = wire;
	m.n_properties = 2;
	req.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	req.create_queue = &m;
	err = vcl_node_send(device->node, &req, NULL, 0, 0);
out:
	if (err != CL_SUCCESS && q != NULL) {
		vcl_context_unref(q->ctx);
		free(q->prop_list);
		vcl_object_free(q);
		q = NULL;
	}
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (q);
}

cl_command_queue CL_API_CALL
vcl_clCreateCommandQueue(cl_context context, cl_device_id device,
    cl_command_queue_properties properties, cl_int *errcode_ret)
{
	cl_queue_properties	p[3] = { CL_QUEUE_PROPERTIES, properties, 0 };

	return (vcl_clCreateCommandQueueWithProperties(context, device,
	    properties ? p : NULL, errcode_ret));
}

cl_int CL_API_CALL
vcl_clRetainCommandQueue(cl_command_queue command_queue)
{
	if (!vcl_is(command_queue, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	vcl_retain(command_queue);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clReleaseCommandQueue(cl_command_queue command_queue)
{
	if (!vcl_is(command_queue, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	vcl_queue_unref(command_queue);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clGetCommandQueueInfo(cl_command_queue command_queue,
    cl_command_queue_info param_name, size_t param_value_size,
    void *param_value, size_t *param_value_size_ret)
{
	cl_command_queue	q = command_queue, none = NULL;
	cl_uint			u;
	cl_int			err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(q, VCL_KIND_QUEUE), CL_INVALID_COMMAND_QUEUE);
	switch (param_name) {
	case CL_QUEUE_CONTEXT:
		err = vcl_info_ret(&q->ctx, sizeof q->ctx, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_QUEUE_DEVICE:
		err = vcl_info_ret(&q->dev, sizeof q->dev, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_QUEUE_REFERENCE_COUNT:
		u = (cl_uint)atomic_load(&q->obj.refs);
		err = vcl_info_ret(&u, sizeof u, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_QUEUE_PROPERTIES:
		err = vcl_info_ret(&q->props, sizeof q->props,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_QUEUE_PROPERTIES_ARRAY:
		err = vcl_info_ret(q->prop_list, q->nprop_list *
		    sizeof *q->prop_list, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_QUEUE_DEVICE_DEFAULT:
		err = vcl_info_ret(&none, sizeof none, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_QUEUE_SIZE:
		err = CL_INVALID_COMMAND_QUEUE;	/* host queues have none */
		break;
	default:
		err = CL_INVALID_VALUE;
		break;
	}
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clFlush(cl_command_queue command_queue)
{
	Vcl__Request	req = VCL__REQUEST__INIT;
	Vcl__Flush	m = VCL__FLUSH__INIT;

	if (!vcl_is(command_queue, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	m.queue = command_queue->obj.id;
	req.call_case = VCL__REQUEST__CALL_FLUSH;
	req.flush = &m;
	return (vcl_node_send(command_queue->dev->node, &req, NULL, 0,
	    VCL_SEND_FLUSH));
}

/* Are the queue's non-blocking reads all in? Under the node's lock. */
static int
vcl_queue_drained(struct vcl_node *n, void *arg)
{
	cl_command_queue	q = arg;

	return (atomic_load(&q->inflight) == 0 || n->dead);
}

/*
 * Finish: one round trip; the server answers once a marker behind every
 * earlier command completes, with the first failure no event carried.
 * Then wait for non-blocking reads whose bytes are still on the way; the
 * first failure of one with no event is the answer if the server had none.
 */
cl_int CL_API_CALL
vcl_clFinish(cl_command_queue command_queue)
{
	Vcl__Request	req = VCL__REQUEST__INIT;
	Vcl__Finish	m = VCL__FINISH__INIT;
	cl_command_queue q = command_queue;
	struct vcl_node	*n;
	cl_int		 err;

	if (!vcl_is(q, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	n = q->dev->node;
	m.queue = q->obj.id;
	req.call_case = VCL__REQUEST__CALL_FINISH;
	req.finish = &m;
	err = vcl_node_call(n, &req, NULL, 0, NULL, 0, NULL);
	vcl_node_wait(n, vcl_queue_drained, q);
	if (err == CL_SUCCESS)
		err = atomic_exchange(&q->deferred, CL_SUCCESS);
	return (err);
}

/*
 * Device-side queues: VCL's devices report no device-side enqueue, so the
 * call is CL_INVALID_OPERATION, as for any such device. Past the context
 * that is the answer whatever the device and queue: where a bad one makes
 * CL_INVALID_DEVICE or CL_INVALID_COMMAND_QUEUE apply too, the
 * specification orders none, and PoCL 3.1 (no device queues) answers
 * CL_INVALID_OPERATION.
 */
cl_int CL_API_CALL
vcl_clSetDefaultDeviceCommandQueue(cl_context context, cl_device_id device,
    cl_command_queue command_queue)
{
	cl_int	err = CL_INVALID_OPERATION;

	(void)device;
	(void)command_queue;
	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
out:
	return (err);
}

/*
 * Pipes and SVM. No device VCL serves has them through the remote link
 * (clGetDeviceInfo answers CL_DEVICE_PIPE_SUPPORT false and no SVM
 * capabilities): each call checks its handles, then gives the answer the
 * 3.0 specification names for a device without the feature.
 */
cl_mem CL_API_CALL
vcl_clCreatePipe(cl_context context, cl_mem_flags flags,
    cl_uint pipe_packet_size, cl_uint pipe_max_packets,
    const cl_pipe_properties *properties, cl_int *errcode_ret)
{
	cl_int	err = CL_INVALID_OPERATION;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
out:
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (NULL);
}

/* No VCL memory object is a pipe. */
cl_int CL_API_CALL
vcl_clGetPipeInfo(cl_mem pipe, cl_pipe_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	return (CL_INVALID_MEM_OBJECT);
}

/* No SVM: no allocation (the specification's answer is NULL). */
void * CL_API_CALL
vcl_clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size,
    unsigned int alignment)
{
	return (NULL);
}

/* Nothing was ever allocated: nothing to free. */
void CL_API_CALL
vcl_clSVMFree(cl_context context, void *svm_pointer)
{
}

/* The SVM commands: a valid queue's device has no SVM. */
static cl_int
vcl_svm_refuse(cl_command_queue q)
{
	return (vcl_is(q, VCL_KIND_QUEUE) ? CL_INVALID_OPERATION :
	    CL_INVALID_COMMAND_QUEUE);
}

cl_int CL_API_CALL
vcl_clEnqueueSVMFree(cl_command_queue command_queue, cl_uint num_svm_pointers,
    void **svm_pointers, void (CL_CALLBACK *pfn_free_func)(cl_command_queue,
    cl_uint, void **, void *), void *user_data,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	return (vcl_svm_refuse(command_queue));
}

cl_int CL_API_CALL
vcl_clEnqueueSVMMemcpy(cl_command_queue command_queue, cl_bool blocking_copy,
    void *dst_ptr, const void *src_ptr, size_t size,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	return (vcl_svm_refuse(command_queue));
}

cl_int CL_API_CALL
vcl_clEnqueueSVMMemFill(cl_command_queue command_queue, void *svm_ptr,
    const void *pattern, size_t pattern_size, size_t size,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	return (vcl_svm_refuse(command_queue));
}

cl_int CL_API_CALL
vcl_clEnqueueSVMMap(cl_command_queue command_queue, cl_bool blocking_map,
    cl_map_flags map_flags, void *svm_ptr, size_t size,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	return (vcl_svm_refuse(command_queue));
}

cl_int CL_API_CALL
vcl_clEnqueueSVMUnmap(cl_command_queue command_queue, void *svm_ptr,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	return (vcl_svm_refuse(command_queue));
}

cl_int CL_API_CALL
vcl_clEnqueueSVMMigrateMem(cl_command_queue command_queue,
    cl_uint num_svm_pointers, const void **svm_pointers, const size_t *sizes,
    cl_mem_migration_flags flags, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event)
{
	return (vcl_svm_refuse(command_queue));
}

/* A valid kernel's context has no device with SVM. */
cl_int CL_API_CALL
vcl_clSetKernelArgSVMPointer(cl_kernel kernel, cl_uint arg_index,
    const void *arg_value)
{
	return (vcl_is(kernel, VCL_KIND_KERNEL) ? CL_INVALID_OPERATION :
	    CL_INVALID_KERNEL);
}
