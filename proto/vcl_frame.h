/* vcl_frame.h - the fixed frame header of the VCL wire protocol. */
#ifndef VCL_FRAME_H
#define VCL_FRAME_H

#include <stddef.h>
#include <stdint.h>

/*
 * A frame is {magic+version u32, protobuf length u32, bulk length u64} in
 * network byte order, then the protobuf message, then the bulk bytes. The
 * magic is "VCL" in the top 24 bits; the low 8 bits carry the protocol
 * version, which the handshake compares so a mismatch gets a clear message
 * instead of a decode error.
 */
#define VCL_FRAME_MAGIC		0x56434c00u
#define VCL_PROTOCOL_VERSION	1u
#define VCL_FRAME_HDR_LEN	16

struct vcl_frame_hdr {
	uint32_t	version;
	uint32_t	msg_len;
	uint64_t	bulk_len;
};

/* Upper bounds a receiver puts on a frame before it allocates anything. */
struct vcl_frame_limits {
	uint32_t	max_msg;
	uint64_t	max_bulk;
};

/* Hello.keepalive_ms: from the server loop's tick to an hour. */
#define VCL_KEEPALIVE_MIN_MS	100u
#define VCL_KEEPALIVE_MAX_MS	3600000u

#define VCL_FRAME_DEFAULT_MAX_MSG	(64u << 20)
#define VCL_FRAME_DEFAULT_MAX_BULK	(4ull << 30)

void		vcl_frame_encode(uint8_t *, uint32_t, uint64_t);
int		vcl_frame_decode(const uint8_t *, const struct vcl_frame_limits *,
		    struct vcl_frame_hdr *, const char **);

#endif
