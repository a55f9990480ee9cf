/* vcl_buf.h - a growable byte buffer, and packing frames into one. */
#ifndef VCL_BUF_H
#define VCL_BUF_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

struct vcl_buf {
	uint8_t	*data;
	size_t	 len;
	size_t	 cap;
};

int	vcl_buf_reserve(struct vcl_buf *, size_t);
void	vcl_buf_free(struct vcl_buf *);
int	vcl_buf_pack(struct vcl_buf *, const ProtobufCMessage *, uint64_t);

#endif
