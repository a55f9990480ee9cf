/* vcl_op_misc.c - handshake, release, generic info queries, stats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_bincheck.h"
#include "vcl_log.h"
#include "vcl_op_exec.h"
#include "vcl_op_mem.h"
#include "vcl_op_misc.h"
#include "vcl_op_program.h"
#include "vcl_peer.h"
#include "vcl_pin.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_shm.h"
#include "vcl_submit.h"
#include "vcl_transports.h"

/*
 * Hello: check the version, the token proof and the keepalive asked for,
 * answer with the snapshot.
 */
void
vcl_op_hello(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__Hello	*h = req->hello;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	Vcl__TransportOffer	 off;
	uint8_t			*addr = NULL;
	char			 msg[160], why[160];

	if (h->version != VCL_PROTOCOL_VERSION) {
		snprintf(msg, sizeof msg, "protocol version mismatch: client "
		    "speaks %u, server speaks %u", h->version,
		    VCL_PROTOCOL_VERSION);
		if (vcl_server_ratelog(&s->srv->conn_log, "connections"))
			vcl_log_warn("session %llu (%s): %s",
			    (unsigned long long)s->id, s->peer, msg);
		vcl_session_reply(s, req->seq, CL_INVALID_OPERATION, msg);
		vcl_session_refuse(s, "protocol version mismatch");
		return;
	}
	if (s->srv->have_token && (!h->has_proof ||
	    vcl_auth_check(&s->srv->token, s->nonce, sizeof s->nonce,
	    h->proof.data, h->proof.len) != 0)) {
		vcl_server_auth_failed(s->srv, s->addr);
		vcl_session_reply(s, req->seq, CL_INVALID_OPERATION,
		    "authentication failed: wrong or missing token");
		vcl_session_refuse(s, "authentication failed");
		return;
	}
	if (h->has_keepalive_ms && (h->keepalive_ms < VCL_KEEPALIVE_MIN_MS ||
	    h->keepalive_ms > VCL_KEEPALIVE_MAX_MS)) {
		snprintf(msg, sizeof msg, "keepalive_ms %u: want %u to %u",
		    h->keepalive_ms, VCL_KEEPALIVE_MIN_MS,
		    VCL_KEEPALIVE_MAX_MS);
		vcl_session_reply(s, req->seq, CL_INVALID_VALUE, msg);
		vcl_session_refuse(s, "keepalive out of range");
		return;
	}
	if (vcl_session_authed(s) != 0) {
		vcl_session_reply(s, req->seq, CL_OUT_OF_RESOURCES,
		    "server busy: --max-sessions reached");
		vcl_session_refuse(s, "max-sessions reached");
		return;
	}
	s->keepalive_ms = h->has_keepalive_ms ? h->keepalive_ms : 0;
	s->is_peer = h->has_peer && h->peer;
	vcl_log_info("session %llu (%s) started: %s %s%s",
	    (unsigned long long)s->id, s->peer,
	    s->is_peer ? "peer link from" : "client",
	    h->client_name != NULL ? h->client_name : "?",
	    s->srv->tls != NULL ? ", TLS" : "");
	r.seq = req->seq;
	r.status = CL_SUCCESS;
	r.result_case = VCL__REPLY__RESULT_WELCOME;
	r.welcome = s->srv->be.welcome;
	r.welcome->node_name = (char *)s->srv->node_name;
	r.welcome->has_session_id = 1;
	r.welcome->session_id = s->id;
	r.welcome->has_session_key = 1;
	r.welcome->session_key = s->key;
	/* The link's bulk transport: announced, chosen, our end connected. */
	r.welcome->transport = NULL;
	r.welcome->transport_why = NULL;
	if ((h->n_transports > 0 || s->is_peer) &&
	    (addr = malloc(VCL_TP_ADDR_MAX)) != NULL) {
		if (vcl_transports_hello(s, h, &off, addr, why, sizeof why))
			r.welcome->transport = &off;
		r.welcome->transport_why = why;
		vcl_log_info("session %llu (%s): transport %s (%s)",
		    (unsigned long long)s->id, s->peer,
		    r.welcome->transport != NULL ? off.name : "tcp", why);
	}
	if (*vcl_transports_host(s->srv) != '\0')
		r.welcome->host = (char *)vcl_transports_host(s->srv);
	/* A client on this host may move its bulk through a ring. */
	r.welcome->has_shm_ring_max = vcl_shm_offered(s);
	r.welcome->shm_ring_max = vcl_shm_ring_max;
	vcl_session_reply_msg(s, &r);
	r.welcome->transport = NULL;
	r.welcome->transport_why = NULL;
	r.welcome->host = NULL;
	r.welcome->has_shm_ring_max = 0;
	free(addr);
}

/* Release one object: the client's last reference is gone. */
void
vcl_op_release(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	struct vcl_hobj	*o;
	enum vcl_kind	 kind;

	kind = vcl_handle_kind(req->release->kind);
	o = kind == VCL_KIND_NONE ? NULL :
	    vcl_handle_held(&s->handles, req->release->id, kind);
	/* Released already, unless this is its held Release (vcl_hold.c). */
	if (o != NULL && o->released && !(o->release_held &&
	    s->handles.running > o->released_at))
		o = NULL;
	if (o == NULL) {
		/* Asynchronous: nobody to tell; the client checked it. */
		vcl_session_warn(s, "release of unknown id %llu",
		    (unsigned long long)req->release->id);
		return;
	}
	o->release_held = 0;
	vcl_session_let_go(s, o);
}

/* Stats: counters of the server and of the asking session. */
void
vcl_op_stats(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	Vcl__Reply	 r = VCL__REPLY__INIT;
	Vcl__StatsResult st = VCL__STATS_RESULT__INIT;
	Vcl__PeerLinkStat **links = NULL;
	char		*names[VCL_TP_MAX + 1], *local[VCL_TP_MAX];

	st.sessions = s->srv->nsessions;
	st.objects = s->srv->objects;
	st.bytes = s->srv->bytes;
	st.session_objects = s->handles.count - s->refused;
	st.session_bytes = s->bytes;
	st.bytes_in = s->srv->bytes_in;
	st.bytes_out = s->srv->bytes_out;
	st.has_peer_bytes_in = st.has_peer_bytes_out = 1;
	st.peer_bytes_in = s->srv->peer_bytes_in;
	st.peer_bytes_out = s->srv->peer_bytes_out;
	st.has_notifies = 1;
	st.notifies = s->srv->notifies;
	st.has_fast_replies = 1;
	st.fast_replies = atomic_load(&s->srv->fast_replies);
	st.has_queues_offloop = 1;
	st.queues_offloop = vcl_submit_moved();
	st.has_launches_offloop = 1;
	st.launches_offloop = vcl_submit_launched();
	st.has_writes_chunked = 1;
	st.writes_chunked = vcl_mem_writes_chunked();
	st.has_write_slot_waits = 1;
	st.write_slot_waits = vcl_mem_write_slot_waits();
	st.has_polled = 1;
	st.polled = s->srv->polled;
	st.has_spin_hits = 1;
	st.spin_hits = s->srv->spin_hits;
	if (vcl_metrics_stats(s->srv, &st) != 0) {
		vcl_session_reply(s, req->seq, CL_OUT_OF_HOST_MEMORY, NULL);
		return;
	}
	st.transport = (char *)vcl_tp_name(s->tp_ep);
	st.has_peer_bytes_oob = 1;
	st.peer_bytes_oob = s->srv->peer_bytes_oob;
	st.has_peer_bytes_shared = 1;
	st.peer_bytes_shared = s->srv->peer_bytes_shared;
	st.has_client_bytes_shared = 1;
	st.client_bytes_shared = s->srv->client_bytes_shared;
	st.has_peer_bytes_direct = 1;
	st.peer_bytes_direct = s->srv->peer_bytes_direct;
	st.has_peer_direct = 1;
	st.peer_direct = s->srv->peer_direct;
	st.has_peer_direct_fallbacks = 1;
	st.peer_direct_fallbacks = s->srv->peer_direct_fallbacks;
	st.has_ring_pinned = 1;
	st.ring_pinned = vcl_pin_ring_bytes();
	st.has_ring_pin_refused = 1;
	st.ring_pin_refused = vcl_pin_ring_refused();
	st.has_session_pinned = 1;
	st.session_pinned = vcl_pin_use_bytes(s->pinuse);
	st.has_release_backlog = 1;
	st.release_backlog = atomic_load(&s->srv->release_backlog);
	st.has_buffers_moving = 1;
	st.buffers_moving = vcl_mem_moving();
	st.has_binary_checks = st.has_binary_checks_failed =
	    st.has_binary_checks_now = 1;
	vcl_bincheck_counts(&st.binary_checks, &st.binary_checks_failed,
	    &st.binary_checks_now);
	st.n_transports = vcl_transports_names(s->srv, names, VCL_TP_MAX + 1);
	st.transports = names;
	st.n_transports_local = vcl_transports_local_names(s->srv, local,
	    VCL_TP_MAX);
	st.transports_local = local;
	if (*vcl_transports_host(s->srv) != '\0')
		st.host = (char *)vcl_transports_host(s->srv);
	st.n_peer_links = vcl_peer_stats(s->srv, &links);
	st.peer_links = links;
	r.seq = req->seq;
	r.result_case = VCL__REPLY__RESULT_STATS;
	r.stats = &st;
	vcl_session_reply_msg(s, &r);
	vcl_metrics_stats_free(&st);
	vcl_peer_stats_free(links, st.n_peer_links);
}

/*
 * Params the client answers itself, never asked here: values that are
 * handles or host pointers of this process, and a program's binary sizes
 * (libvcl asks GetBinary, made on a worker: PoCL 3.1 generates the code of
 * every kernel when asked for the sizes, about 70 ms a kernel on a 2-CPU
 * host, and on the loop a program of 400 kernels held every session 30 s).
 */
static int
vcl_info_is_local(Vcl__GetInfo__What w, cl_uint p)
{
	switch (w) {
	case VCL__GET_INFO__WHAT__DEVICE:
		return (p == CL_DEVICE_PLATFORM || p == CL_DEVICE_PARENT_DEVICE);
	case VCL__GET_INFO__WHAT__CONTEXT:
		return (p == CL_CONTEXT_DEVICES || p == CL_CONTEXT_PROPERTIES);
	case VCL__GET_INFO__WHAT__QUEUE:
		return (p == CL_QUEUE_CONTEXT || p == CL_QUEUE_DEVICE ||
		    p == CL_QUEUE_DEVICE_DEFAULT);
	case VCL__GET_INFO__WHAT__MEM:
		return (p == CL_MEM_CONTEXT || p == CL_MEM_HOST_PTR ||
		    p == CL_MEM_ASSOCIATED_MEMOBJECT);
	case VCL__GET_INFO__WHAT__PROGRAM:
		return (p == CL_PROGRAM_CONTEXT || p == CL_PROGRAM_DEVICES ||
		    p == CL_PROGRAM_BINARIES || p == CL_PROGRAM_BINARY_SIZES);
	case VCL__GET_INFO__WHAT__KERNEL:
		return (p == CL_KERNEL_CONTEXT || p == CL_KERNEL_PROGRAM);
	case VCL__GET_INFO__WHAT__EVENT:
		return (p == CL_EVENT_COMMAND_QUEUE || p == CL_EVENT_CONTEXT);
	default:
		return (0);
	}
}

/* Look up the object of a GetInfo; *err set when it is not usable. */
static struct vcl_hobj *
vcl_info_obj(struct vcl_session *s, uint64_t id, enum vcl_kind kind,
    cl_int bad, cl_int *err)
{
	struct vcl_hobj	*o;

	if ((o = vcl_handle_get(&s->handles, id, kind)) == NULL)
		*err = bad;
	else if (o->error != CL_SUCCESS || o->u.ptr == NULL) {
		*err = o->error != CL_SUCCESS ? o->error : bad;
		o = NULL;
	}
	return (o);
}

#define VCL_SUBGROUP_INPUT_MAX	(3 * sizeof(size_t))

/* The device of a node-local index, or NULL. */
static cl_device_id
vcl_info_device(struct vcl_session *s, uint64_t idx)
{
	uint32_t	root;

	return (idx > UINT32_MAX ? NULL : vcl_session_device(s,
	    (uint32_t)idx, &root));
}

/*
 * GetInfo: one clGet*Info on the server for what the client cannot answer
 * from its own state. Two calls: the size, then the value.
 */
void
vcl_op_get_info(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__GetInfo	*g = req->get_info;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	Vcl__InfoResult		 ir = VCL__INFO_RESULT__INIT;
	struct vcl_hobj		*o = NULL;
	cl_device_id		 dev = NULL;
	cl_int			 err = CL_SUCCESS;
	size_t			 size = 0;
	void			*buf = NULL;
	size_t			 i;
	int			 pass;

	if (vcl_info_is_local(g->what, g->param)) {
		vcl_session_reply(s, req->seq, CL_INVALID_VALUE, NULL);
		return;
	}
	switch (g->what) {
	case VCL__GET_INFO__WHAT__DEVICE:
		if ((dev = vcl_info_device(s, g->id)) == NULL)
			err = CL_INVALID_DEVICE;
		break;
	case VCL__GET_INFO__WHAT__CONTEXT:
		o = vcl_info_obj(s, g->id, VCL_KIND_CONTEXT, CL_INVALID_CONTEXT,
		    &err);
		break;
	case VCL__GET_INFO__WHAT__QUEUE:
		o = vcl_info_obj(s, g->id, VCL_KIND_QUEUE,
		    CL_INVALID_COMMAND_QUEUE, &err);
		break;
	case VCL__GET_INFO__WHAT__MEM:
		o = vcl_info_obj(s, g->id, VCL_KIND_MEM, CL_INVALID_MEM_OBJECT,
		    &err);
		break;
	case VCL__GET_INFO__WHAT__PROGRAM:
	case VCL__GET_INFO__WHAT__PROGRAM_BUILD:
		o = vcl_info_obj(s, g->id, VCL_KIND_PROGRAM,
		    CL_INVALID_PROGRAM, &err);
		/*
		 * Its kernels while a build of it runs on a worker: the
		 * executable is being replaced, and vcl_program_info's
		 * count and names could come from either side of it (a
		 * count of one, then the names of a rebuild with none:
		 * what NVIDIA's runtime crashed on). libvcl answers these
		 * itself; only a raw client asks.
		 */
		if (o != NULL && o->building && g->what ==
		    VCL__GET_INFO__WHAT__PROGRAM && (g->param ==
		    CL_PROGRAM_NUM_KERNELS || g->param ==
		    CL_PROGRAM_KERNEL_NAMES))
			err = CL_INVALID_PROGRAM_EXECUTABLE;
		break;
	case VCL__GET_INFO__WHAT__KERNEL:
	case VCL__GET_INFO__WHAT__KERNEL_WORK_GROUP:
	case VCL__GET_INFO__WHAT__KERNEL_ARG:
		o = vcl_info_obj(s, g->id, VCL_KIND_KERNEL, CL_INVALID_KERNEL,
		    &err);
		break;
	case VCL__GET_INFO__WHAT__KERNEL_SUB_GROUP:
		o = vcl_info_obj(s, g->id, VCL_KIND_KERNEL, CL_INVALID_KERNEL,
		    &err);
		/* An ND-range (3 sizes) or a count: never more. */
		if (err == CL_SUCCESS && g->has_input &&
		    g->input.len > VCL_SUBGROUP_INPUT_MAX)
			err = CL_INVALID_VALUE;
		break;
	case VCL__GET_INFO__WHAT__EVENT:
	case VCL__GET_INFO__WHAT__EVENT_PROFILING:
		o = vcl_info_obj(s, g->id, VCL_KIND_EVENT, CL_INVALID_EVENT,
		    &err);
		break;
	default:
		err = CL_INVALID_VALUE;
		break;
	}
	if (err == CL_SUCCESS && (g->what ==
	    VCL__GET_INFO__WHAT__PROGRAM_BUILD || g->what ==
	    VCL__GET_INFO__WHAT__KERNEL_WORK_GROUP || g->what ==
	    VCL__GET_INFO__WHAT__KERNEL_SUB_GROUP) &&
	    (dev = vcl_info_device(s, g->device)) == NULL)
		err = CL_INVALID_DEVICE;
	/* __local sizes set on the client count in CL_KERNEL_LOCAL_MEM_SIZE. */
	for (i = 0; err == CL_SUCCESS && g->what ==
	    VCL__GET_INFO__WHAT__KERNEL_WORK_GROUP && i < g->n_args; i++)
		(void)vcl_exec_arg(s, o, g->args[i]);
	for (pass = 0; pass < 2 && err == CL_SUCCESS; pass++) {
		if (pass == 1 && size > 0 && (buf = malloc(size)) == NULL) {
			err = CL_OUT_OF_HOST_MEMORY;
			break;
		}
		switch (g->what) {
		case VCL__GET_INFO__WHAT__DEVICE:
			err = clGetDeviceInfo(dev, g->param, size, buf,
			    pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__CONTEXT:
			err = clGetContextInfo(o->u.ctx, g->param, size, buf,
			    pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__QUEUE:
			err = clGetCommandQueueInfo(o->u.queue, g->param, size,
			    buf, pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__MEM:
			err = clGetMemObjectInfo(o->u.mem, g->param, size, buf,
			    pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__PROGRAM:
			err = vcl_program_info(o->u.prog, g->param, size, buf,
			    pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__PROGRAM_BUILD:
			err = clGetProgramBuildInfo(o->u.prog, dev, g->param,
			    size, buf, pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__KERNEL:
			err = clGetKernelInfo(o->u.kernel, g->param, size, buf,
			    pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__KERNEL_WORK_GROUP:
			err = clGetKernelWorkGroupInfo(o->u.kernel, dev,
			    g->param, size, buf, pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__KERNEL_ARG:
			err = clGetKernelArgInfo(o->u.kernel, g->arg, g->param,
			    size, buf, pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__KERNEL_SUB_GROUP:
			err = clGetKernelSubGroupInfo(o->u.kernel, dev,
			    g->param, g->has_input ? g->input.len : 0,
			    g->has_input && g->input.len > 0 ? g->input.data :
			    NULL, size, buf, pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__EVENT:
			err = clGetEventInfo(o->u.event, g->param, size, buf,
			    pass ? NULL : &size);
			break;
		case VCL__GET_INFO__WHAT__EVENT_PROFILING:
			err = clGetEventProfilingInfo(o->u.event, g->param,
			    size, buf, pass ? NULL : &size);
			break;
		default:
			break;
		}
		if (size == 0)
			break;
	}
	r.seq = req->seq;
	r.status = err;
	if (err == CL_SUCCESS) {
		ir.value.data = buf;
		ir.value.len = size;
		r.result_case = VCL__REPLY__RESULT_INFO;
		r.info = &ir;
	}
	vcl_session_reply_msg(s, &r);
	free(buf);
}
