/* vcl_dispatch.c - the dispatch table, indexed by the Request oneof case. */
#include <stddef.h>

#include "vcl_dispatch.h"
#include "vcl_op_context.h"
#include "vcl_op_exec.h"
#include "vcl_op_image.h"
#include "vcl_op_mem.h"
#include "vcl_op_misc.h"
#include "vcl_op_peer.h"
#include "vcl_op_program.h"
#include "vcl_shm.h"
#include "vcl_transports.h"

#define OP(c, f, fl)	[VCL__REQUEST__CALL_##c] = { f, #c, fl }

static const struct vcl_op vcl_ops[] = {
	OP(HELLO,		vcl_op_hello,		VCL_OP_PREAUTH),
	OP(RELEASE,		vcl_op_release,		0),
	OP(CREATE_CONTEXT,	vcl_op_create_context,	0),
	OP(CREATE_QUEUE,	vcl_op_create_queue,	0),
	OP(FLUSH,		vcl_op_flush,		0),
	OP(FINISH,		vcl_op_finish,		0),
	OP(CREATE_BUFFER,	vcl_op_create_buffer,	VCL_OP_BULK),
	OP(WRITE_BUFFER,	vcl_op_write_buffer,
	    VCL_OP_BULK | VCL_OP_ENQUEUE),
	OP(READ_BUFFER,		vcl_op_read_buffer,	VCL_OP_ENQUEUE),
	OP(COPY_BUFFER,		vcl_op_copy_buffer,	VCL_OP_ENQUEUE),
	OP(FILL_BUFFER,		vcl_op_fill_buffer,	VCL_OP_ENQUEUE),
	OP(CREATE_PROGRAM,	vcl_op_create_program,	0),
	OP(BUILD_PROGRAM,	vcl_op_build_program,	0),
	OP(CREATE_KERNEL,	vcl_op_create_kernel,	0),
	OP(CREATE_KERNELS,	vcl_op_create_kernels,	0),
	OP(NDRANGE,		vcl_op_ndrange,		VCL_OP_ENQUEUE |
	    VCL_OP_LAUNCH),
	OP(MARKER,		vcl_op_marker,		VCL_OP_ENQUEUE),
	OP(CREATE_USER_EVENT,	vcl_op_create_user_event, 0),
	OP(SET_USER_EVENT_STATUS, vcl_op_set_user_event_status, 0),
	OP(GET_INFO,		vcl_op_get_info,	0),
	OP(STATS,		vcl_op_stats,		0),
	OP(MIGRATE_OUT,		vcl_op_migrate_out,	0),
	OP(MIGRATE_IN,		vcl_op_migrate_in,	VCL_OP_ENQUEUE),
	OP(FORWARD_EVENT,	vcl_op_forward_event,	0),
	OP(CREATE_PROXY_EVENT,	vcl_op_create_proxy_event, 0),
	OP(PEER_PUSH,		vcl_op_peer_push,	VCL_OP_PEER | VCL_OP_BULK),
	OP(PEER_EVENT,		vcl_op_peer_event,	VCL_OP_PEER),
	OP(PEER_FAIL,		vcl_op_peer_fail,	0),
	OP(CREATE_SUB_BUFFER,	vcl_op_create_sub_buffer, 0),
	OP(WRITE_BUFFER_RECT,	vcl_op_write_buffer_rect,
	    VCL_OP_BULK | VCL_OP_ENQUEUE),
	OP(READ_BUFFER_RECT,	vcl_op_read_buffer_rect, VCL_OP_ENQUEUE),
	OP(COPY_BUFFER_RECT,	vcl_op_copy_buffer_rect, VCL_OP_ENQUEUE),
	OP(CREATE_SAMPLER,	vcl_op_create_sampler,	0),
	OP(CREATE_IMAGE,	vcl_op_create_image,	VCL_OP_BULK),
	OP(IMAGE_FORMATS,	vcl_op_image_formats,	0),
	OP(READ_IMAGE,		vcl_op_read_image,	VCL_OP_ENQUEUE),
	OP(WRITE_IMAGE,		vcl_op_write_image,
	    VCL_OP_BULK | VCL_OP_ENQUEUE),
	OP(COPY_IMAGE,		vcl_op_copy_image,	VCL_OP_ENQUEUE),
	OP(FILL_IMAGE,		vcl_op_fill_image,	VCL_OP_ENQUEUE),
	OP(COPY_IMAGE_BUFFER,	vcl_op_copy_image_buffer,
	    VCL_OP_ENQUEUE),
	OP(CREATE_PROGRAM_FROM,	vcl_op_create_program_from, 0),
	OP(LINK_PROGRAM,	vcl_op_link_program,	0),
	OP(GET_BINARY,		vcl_op_get_binary,	0),
	OP(SET_SPEC_CONSTANT,	vcl_op_set_spec_constant, 0),
	OP(CREATE_SUB_DEVICES,	vcl_op_create_sub_devices, 0),
	OP(TRANSPORT_CTL,	vcl_op_transport_ctl,	VCL_OP_LINK),
	OP(SHM_RING,		vcl_op_shm_ring,	0),
};

/* The handler of a oneof case; NULL for an unknown or empty case. */
const struct vcl_op *
vcl_dispatch_lookup(unsigned c)
{
	if (c >= sizeof vcl_ops / sizeof vcl_ops[0] || vcl_ops[c].fn == NULL)
		return (NULL);
	return (&vcl_ops[c]);
}

/* One past the largest case of the table, for the completeness test. */
unsigned
vcl_dispatch_max(void)
{
	return (sizeof vcl_ops / sizeof vcl_ops[0]);
}

/*
 * The Enqueue (queue, event, wait list) of a command, else NULL. Every
 * message of a VCL_OP_ENQUEUE call starts with "required Enqueue q = 1"
 * (test_dispatch checks it against the descriptor), so the flag is the one
 * list of commands: the hold logic finds their wait lists through it.
 */
const Vcl__Enqueue *
vcl_dispatch_enqueue(const Vcl__Request *req)
{
	const struct vcl_op		*op;
	const ProtobufCFieldDescriptor	*f;
	const ProtobufCMessage		*call;

	/* The most frequent command, without two descriptor searches. */
	if (req->call_case == VCL__REQUEST__CALL_NDRANGE)
		return (req->ndrange != NULL ? req->ndrange->q : NULL);
	if ((op = vcl_dispatch_lookup(req->call_case)) == NULL ||
	    !(op->flags & VCL_OP_ENQUEUE) ||
	    (f = protobuf_c_message_descriptor_get_field(
	    &vcl__request__descriptor, req->call_case)) == NULL)
		return (NULL);
	call = *(ProtobufCMessage * const *)((const char *)req + f->offset);
	if (call == NULL || (f = protobuf_c_message_descriptor_get_field(
	    call->descriptor, 1)) == NULL)
		return (NULL);
	return (*(Vcl__Enqueue * const *)((const char *)call + f->offset));
}
