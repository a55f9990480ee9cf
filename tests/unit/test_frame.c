/* test_frame.c - unit tests of the frame header, frame packing and vcl_buf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vcl.pb-c.h"
#include "vcl_buf.h"
#include "vcl_frame.h"

static const struct vcl_frame_limits	def_lim = {
	VCL_FRAME_DEFAULT_MAX_MSG, VCL_FRAME_DEFAULT_MAX_BULK
};

/* Encode then decode: every field survives, bytes are big-endian. */
static void
test_frame_round_trip(void **state)
{
	static const uint8_t	 want[VCL_FRAME_HDR_LEN] = {
		0x56, 0x43, 0x4c, VCL_PROTOCOL_VERSION,	/* "VCL" + version */
		0x00, 0x01, 0x02, 0x03,			/* msg_len */
		0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05 /* bulk_len */
	};
	uint8_t			 b[VCL_FRAME_HDR_LEN];
	struct vcl_frame_hdr	 h;
	struct vcl_frame_limits	 lim = { UINT32_MAX, UINT64_MAX };
	const char		*why = NULL;

	vcl_frame_encode(b, 0x00010203u, 0x0000000102030405ull);
	assert_memory_equal(b, want, sizeof want);
	assert_int_equal(vcl_frame_decode(b, &lim, &h, &why), 0);
	assert_int_equal(h.version, VCL_PROTOCOL_VERSION);
	assert_int_equal(h.msg_len, 0x00010203u);
	assert_true(h.bulk_len == 0x0000000102030405ull);
	assert_null(why);
}

/* All 64 bits of the bulk length travel, high word first. */
static void
test_frame_bulk_high_bits(void **state)
{
	uint8_t			 b[VCL_FRAME_HDR_LEN];
	struct vcl_frame_hdr	 h;
	struct vcl_frame_limits	 lim = { 16, UINT64_MAX };
	const char		*why = NULL;

	vcl_frame_encode(b, 1, 0x8877665544332211ull);
	assert_int_equal(b[8], 0x88);
	assert_int_equal(b[15], 0x11);
	assert_int_equal(vcl_frame_decode(b, &lim, &h, &why), 0);
	assert_true(h.bulk_len == 0x8877665544332211ull);
}

/* Any change to the 24 magic bits is refused, with a reason. */
static void
test_frame_bad_magic(void **state)
{
	uint8_t			 b[VCL_FRAME_HDR_LEN];
	struct vcl_frame_hdr	 h;
	const char		*why;
	int			 i, bit;

	for (i = 0; i < 3; i++) {
		for (bit = 0; bit < 8; bit++) {
			vcl_frame_encode(b, 10, 0);
			b[i] ^= (uint8_t)(1u << bit);
			why = NULL;
			assert_int_equal(vcl_frame_decode(b, &def_lim, &h,
			    &why), -1);
			assert_non_null(why);
			assert_string_equal(why, "bad frame magic");
		}
	}
}

/* The low 8 bits are the version: any value decodes, for the handshake. */
static void
test_frame_version_low_bits(void **state)
{
	uint8_t			 b[VCL_FRAME_HDR_LEN];
	struct vcl_frame_hdr	 h;
	const char		*why = NULL;
	unsigned		 v;

	for (v = 0; v < 256; v += 51) {
		vcl_frame_encode(b, 10, 0);
		b[3] = (uint8_t)v;
		assert_int_equal(vcl_frame_decode(b, &def_lim, &h, &why), 0);
		assert_int_equal(h.version, v);
		assert_int_equal(h.msg_len, 10);
	}
}

/* A frame without a message is malformed. */
static void
test_frame_zero_length(void **state)
{
	uint8_t			 b[VCL_FRAME_HDR_LEN];
	struct vcl_frame_hdr	 h;
	const char		*why = NULL;

	vcl_frame_encode(b, 0, 0);
	assert_int_equal(vcl_frame_decode(b, &def_lim, &h, &why), -1);
	assert_non_null(why);
	assert_string_equal(why, "empty frame");
}

/* Message and bulk are checked against the limits, inclusive. */
static void
test_frame_limits(void **state)
{
	uint8_t			 b[VCL_FRAME_HDR_LEN];
	struct vcl_frame_hdr	 h;
	struct vcl_frame_limits	 lim = { 100, 1000 };
	const char		*why;

	why = NULL;
	vcl_frame_encode(b, 100, 1000);
	assert_int_equal(vcl_frame_decode(b, &lim, &h, &why), 0);

	why = NULL;
	vcl_frame_encode(b, 101, 0);
	assert_int_equal(vcl_frame_decode(b, &lim, &h, &why), -1);
	assert_non_null(why);
	assert_string_equal(why, "frame message over the size limit");

	why = NULL;
	vcl_frame_encode(b, 1, 1001);
	assert_int_equal(vcl_frame_decode(b, &lim, &h, &why), -1);
	assert_non_null(why);
	assert_string_equal(why, "frame bulk over the size limit");

	/* The defaults refuse the largest values the header can carry. */
	why = NULL;
	vcl_frame_encode(b, UINT32_MAX, 0);
	assert_int_equal(vcl_frame_decode(b, &def_lim, &h, &why), -1);
	assert_non_null(why);
	why = NULL;
	vcl_frame_encode(b, 1, UINT64_MAX);
	assert_int_equal(vcl_frame_decode(b, &def_lim, &h, &why), -1);
	assert_non_null(why);
}

/* Decode the frame at off in b and unpack its Request. */
static Vcl__Request *
unpack_at(const struct vcl_buf *b, size_t off, struct vcl_frame_hdr *h)
{
	const char	*why = NULL;

	assert_true(b->len - off >= VCL_FRAME_HDR_LEN);
	assert_int_equal(vcl_frame_decode(b->data + off, &def_lim, h, &why), 0);
	assert_true(b->len - off - VCL_FRAME_HDR_LEN >= h->msg_len);
	return (vcl__request__unpack(NULL, h->msg_len,
	    b->data + off + VCL_FRAME_HDR_LEN));
}

/* vcl_buf_pack writes header + message; two frames append in order. */
static void
test_buf_pack_request(void **state)
{
	Vcl__Request		 req = VCL__REQUEST__INIT, *out;
	Vcl__Release		 rel = VCL__RELEASE__INIT;
	Vcl__Flush		 fl = VCL__FLUSH__INIT;
	struct vcl_buf		 b = { NULL, 0, 0 };
	struct vcl_frame_hdr	 h;
	size_t			 n1, first;

	rel.kind = VCL__KIND__KIND_MEM;
	rel.id = 0x1122334455667788ull;
	req.seq = 42;
	req.call_case = VCL__REQUEST__CALL_RELEASE;
	req.release = &rel;
	n1 = protobuf_c_message_get_packed_size(&req.base);
	assert_int_equal(vcl_buf_pack(&b, &req.base, 0), 0);
	assert_int_equal(b.len, VCL_FRAME_HDR_LEN + n1);
	first = b.len;

	fl.queue = 7;
	req.seq = 43;
	req.call_case = VCL__REQUEST__CALL_FLUSH;
	req.release = NULL;
	req.flush = &fl;
	assert_int_equal(vcl_buf_pack(&b, &req.base, 4096), 0);

	out = unpack_at(&b, 0, &h);
	assert_non_null(out);
	assert_int_equal(h.msg_len, n1);
	assert_true(h.bulk_len == 0);
	assert_int_equal(out->seq, 42);
	assert_int_equal(out->call_case, VCL__REQUEST__CALL_RELEASE);
	assert_non_null(out->release);
	assert_int_equal(out->release->kind, VCL__KIND__KIND_MEM);
	assert_true(out->release->id == 0x1122334455667788ull);
	protobuf_c_message_free_unpacked(&out->base, NULL);

	out = unpack_at(&b, first, &h);
	assert_non_null(out);
	assert_int_equal(b.len, first + VCL_FRAME_HDR_LEN + h.msg_len);
	assert_true(h.bulk_len == 4096);
	assert_int_equal(out->seq, 43);
	assert_int_equal(out->call_case, VCL__REQUEST__CALL_FLUSH);
	assert_int_equal(out->flush->queue, 7);
	protobuf_c_message_free_unpacked(&out->base, NULL);

	vcl_buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
}

/* A message that packs to nothing cannot make a frame (length 0). */
static void
test_buf_pack_empty(void **state)
{
	Vcl__Stats	st = VCL__STATS__INIT;
	struct vcl_buf	b = { NULL, 0, 0 };

	assert_int_equal(vcl_buf_pack(&b, &st.base, 0), -1);
	assert_int_equal(b.len, 0);
	vcl_buf_free(&b);
}

/* reserve grows by doubling, keeps the bytes, and refuses overflow. */
static void
test_buf_reserve(void **state)
{
	struct vcl_buf	b = { NULL, 0, 0 };
	size_t		i, cap;

	assert_int_equal(vcl_buf_reserve(&b, 0), 0);
	assert_int_equal(vcl_buf_reserve(&b, 10), 0);
	assert_non_null(b.data);
	assert_true(b.cap >= 10);
	cap = b.cap;
	/* Room already there: nothing moves. */
	assert_int_equal(vcl_buf_reserve(&b, cap), 0);
	assert_int_equal(b.cap, cap);

	for (i = 0; i < cap; i++)
		b.data[i] = (uint8_t)i;
	b.len = cap;
	assert_int_equal(vcl_buf_reserve(&b, 1), 0);
	assert_true(b.cap >= cap + 1);
	assert_int_equal(b.cap, cap * 2);
	for (i = 0; i < cap; i++)
		assert_int_equal(b.data[i], (uint8_t)i);

	assert_int_equal(vcl_buf_reserve(&b, 5 * cap), 0);
	assert_true(b.cap - b.len >= 5 * cap);
	for (i = 0; i < cap; i++)
		assert_int_equal(b.data[i], (uint8_t)i);

	/* Sizes whose doubling would wrap are refused, buffer untouched. */
	cap = b.cap;
	assert_int_equal(vcl_buf_reserve(&b, SIZE_MAX), -1);
	assert_int_equal(vcl_buf_reserve(&b, SIZE_MAX - b.len), -1);
	assert_int_equal(vcl_buf_reserve(&b, SIZE_MAX / 2 - b.len + 1), -1);
	assert_int_equal(b.cap, cap);
	for (i = 0; i < b.len / 2; i++)
		assert_int_equal(b.data[i], (uint8_t)i);
	vcl_buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_frame_round_trip),
		cmocka_unit_test(test_frame_bulk_high_bits),
		cmocka_unit_test(test_frame_bad_magic),
		cmocka_unit_test(test_frame_version_low_bits),
		cmocka_unit_test(test_frame_zero_length),
		cmocka_unit_test(test_frame_limits),
		cmocka_unit_test(test_buf_pack_request),
		cmocka_unit_test(test_buf_pack_empty),
		cmocka_unit_test(test_buf_reserve),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
