/* vcl_buf.c - a growable byte buffer, and packing frames into one. */
#include <stdlib.h>
#include <string.h>

#include "vcl_buf.h"
#include "vcl_frame.h"

/* Make room for n more bytes. Returns 0 or -1 when out of memory. */
int
vcl_buf_reserve(struct vcl_buf *b, size_t n)
{
	size_t	 cap;
	uint8_t	*p;

	if (n <= b->cap - b->len)
		return (0);
	if (n > SIZE_MAX / 2 - b->len)
		return (-1);
	cap = b->cap ? b->cap : 4096;
	while (cap - b->len < n)
		cap *= 2;
	if ((p = realloc(b->data, cap)) == NULL)
		return (-1);
	b->data = p;
	b->cap = cap;
	return (0);
}

/* Release the buffer's memory. */
void
vcl_buf_free(struct vcl_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof *b);
}

/*
 * Append a frame header and the packed message; bulk_len announces the bulk
 * bytes the caller sends right after. Returns 0 or -1 when out of memory or
 * when the message is over the 32-bit length of the header.
 */
int
vcl_buf_pack(struct vcl_buf *b, const ProtobufCMessage *m, uint64_t bulk_len)
{
	size_t	n;

	n = protobuf_c_message_get_packed_size(m);
	if (n == 0 || n > UINT32_MAX)
		return (-1);
	if (vcl_buf_reserve(b, VCL_FRAME_HDR_LEN + n) != 0)
		return (-1);
	vcl_frame_encode(b->data + b->len, (uint32_t)n, bulk_len);
	protobuf_c_message_pack(m, b->data + b->len + VCL_FRAME_HDR_LEN);
	b->len += VCL_FRAME_HDR_LEN + n;
	return (0);
}
