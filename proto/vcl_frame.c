/* vcl_frame.c - encode and check the fixed frame header. */
#include <arpa/inet.h>
#include <string.h>

#include "vcl_frame.h"

/* Write a header for msg_len protobuf bytes and bulk_len bulk bytes. */
void
vcl_frame_encode(uint8_t *out, uint32_t msg_len, uint64_t bulk_len)
{
	uint32_t	w[4];

	w[0] = htonl(VCL_FRAME_MAGIC | VCL_PROTOCOL_VERSION);
	w[1] = htonl(msg_len);
	w[2] = htonl((uint32_t)(bulk_len >> 32));
	w[3] = htonl((uint32_t)bulk_len);
	memcpy(out, w, sizeof w);
}

/*
 * Decode and check a header against the limits. Returns 0, or -1 with *why
 * naming the problem; the caller closes the session then.
 */
int
vcl_frame_decode(const uint8_t *in, const struct vcl_frame_limits *lim,
    struct vcl_frame_hdr *hdr, const char **why)
{
	uint32_t	w[4], magic;

	memcpy(w, in, sizeof w);
	magic = ntohl(w[0]);
	hdr->version = magic & 0xff;
	hdr->msg_len = ntohl(w[1]);
	hdr->bulk_len = ((uint64_t)ntohl(w[2]) << 32) | ntohl(w[3]);
	if ((magic & ~0xffu) != VCL_FRAME_MAGIC) {
		*why = "bad frame magic";
		return (-1);
	}
	if (hdr->msg_len == 0) {
		*why = "empty frame";
		return (-1);
	}
	if (hdr->msg_len > lim->max_msg) {
		*why = "frame message over the size limit";
		return (-1);
	}
	if (hdr->bulk_len > lim->max_bulk) {
		*why = "frame bulk over the size limit";
		return (-1);
	}
	return (0);
}
