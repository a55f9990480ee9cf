/* fuzz_frame.c - libFuzzer: frame decode, Request unpack, dispatch lookup. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl.pb-c.h"
#include "vcl_buf.h"
#include "vcl_dispatch.h"
#include "vcl_frame.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Report a broken invariant as a crash libFuzzer keeps the input of. */
static void
fuzz_fail(const char *what)
{
	fprintf(stderr, "fuzz_frame: %s\n", what);
	abort();
}

/*
 * True when m or a message inside it kept unknown fields. protobuf-c 1.4
 * accepts field number 0 in a non-canonical (multi-byte) tag, keeps it as
 * unknown, packs it back as a one-byte tag and then refuses that: such a
 * request does not survive a second round, through no fault of ours.
 */
static int
has_unknown(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor	*d = m->descriptor;
	const ProtobufCFieldDescriptor		*f;
	const char				*base = (const char *)m;
	ProtobufCMessage * const		*arr;
	size_t					 i, j, n;

	if (m->n_unknown_fields != 0)
		return (1);
	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(const uint32_t *)(base + f->quantifier_offset) != f->id)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(const size_t *)(base + f->quantifier_offset);
			arr = *(ProtobufCMessage * const * const *)(base +
			    f->offset);
			for (j = 0; j < n; j++)
				if (has_unknown(arr[j]))
					return (1);
		} else {
			arr = (ProtobufCMessage * const *)(base + f->offset);
			if (*arr != NULL && has_unknown(*arr))
				return (1);
		}
	}
	return (0);
}

/*
 * Input: one frame (header, message, anything after). A header that passes
 * the default limits and a message that unpacks are packed again with
 * vcl_buf_pack, which must give a frame that decodes and unpacks the same.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct vcl_frame_limits	 lim = {
		VCL_FRAME_DEFAULT_MAX_MSG, VCL_FRAME_DEFAULT_MAX_BULK
	};
	struct vcl_frame_hdr			 h, h2;
	const struct vcl_op			*op;
	struct vcl_buf				 b = { NULL, 0, 0 };
	Vcl__Request				*req, *req2;
	const char				*why = NULL;

	if (size < VCL_FRAME_HDR_LEN)
		return (0);
	if (vcl_frame_decode(data, &lim, &h, &why) != 0) {
		if (why == NULL)
			fuzz_fail("decode refused a frame without a reason");
		return (0);
	}
	if (h.msg_len == 0 || h.msg_len > lim.max_msg ||
	    h.bulk_len > lim.max_bulk)
		fuzz_fail("decode passed a frame over the limits");
	if (h.msg_len > size - VCL_FRAME_HDR_LEN)
		return (0);
	req = vcl__request__unpack(NULL, h.msg_len, data + VCL_FRAME_HDR_LEN);
	if (req == NULL)
		return (0);

	op = vcl_dispatch_lookup(req->call_case);
	if (op != NULL && (op->fn == NULL || op->name == NULL))
		fuzz_fail("dispatch entry without handler or name");
	if (op == NULL && req->call_case != VCL__REQUEST__CALL__NOT_SET)
		fuzz_fail("a decoded oneof case has no handler");

	if (vcl_buf_pack(&b, &req->base, h.bulk_len) != 0)
		fuzz_fail("vcl_buf_pack failed on a decoded request");
	why = NULL;
	if (vcl_frame_decode(b.data, &lim, &h2, &why) != 0 ||
	    h2.bulk_len != h.bulk_len ||
	    h2.msg_len != b.len - VCL_FRAME_HDR_LEN)
		fuzz_fail("a packed frame does not decode to itself");
	req2 = vcl__request__unpack(NULL, h2.msg_len,
	    b.data + VCL_FRAME_HDR_LEN);
	if (req2 == NULL && !has_unknown(&req->base))
		fuzz_fail("a packed request does not unpack");
	if (req2 != NULL && (req2->seq != req->seq ||
	    req2->call_case != req->call_case))
		fuzz_fail("a packed request does not unpack to itself");
	if (req2 != NULL)
		protobuf_c_message_free_unpacked(&req2->base, NULL);
	protobuf_c_message_free_unpacked(&req->base, NULL);
	vcl_buf_free(&b);
	return (0);
}
