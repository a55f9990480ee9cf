/*
 * vcl_ext.h - VCL's own queries, for programs that want to know where a
 * device lives. Include after <CL/cl.h>. Unmodified programs need none of it.
 *
 * The values sit in a range no Khronos or vendor query uses; clGetDeviceInfo
 * on another platform returns CL_INVALID_VALUE for them.
 */
#ifndef VCL_EXT_H
#define VCL_EXT_H

/* char[]: the node name its vclserver reports (--name, else its hostname). */
#define CL_DEVICE_VCL_NODE_NAME		0x7E00
/* char[]: the host:port the client connected to. */
#define CL_DEVICE_VCL_NODE_ADDRESS	0x7E01
/* cl_uint: the node's position in the node list (VCL_NODES order). */
#define CL_DEVICE_VCL_NODE_INDEX	0x7E02
/* cl_uint: the device's index on its node (vclserver --devices order). */
#define CL_DEVICE_VCL_NODE_DEVICE	0x7E03
/* cl_ulong: bulk bytes this process sent to / received from the node. */
#define CL_DEVICE_VCL_NODE_BYTES_SENT	0x7E04
#define CL_DEVICE_VCL_NODE_BYTES_RECEIVED 0x7E05
/* char[]: the transport carrying bulk bytes between this process and the
 * node ("tcp", "ucx", ...). */
#define CL_DEVICE_VCL_NODE_TRANSPORT	0x7E10
/* char[]: the node's links to other vclservers, one "host:port transport
 * (why)" line each, why being the reason for that transport, e.g. "same
 * host" ("" when none), asked of the node at the time of the query. */
#define CL_DEVICE_VCL_NODE_PEER_LINKS	0x7E11

#endif
