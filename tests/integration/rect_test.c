/* rect_test.c - sub-buffers and rectangles over the raw wire protocol. */

/*
 * usage: rect_test VCLSERVER [CLIENT]
 *
 * CreateSubBuffer and Read/Write/CopyBufferRect sent straight to a
 * vclserver with hostile values: origins, pitches and regions that
 * overflow 64 bits or end one byte past the buffer, wrong counts, a bulk
 * that does not match its region. Each gets CL_INVALID_VALUE (or closes
 * the session, for bytes that do not match), the server lives on, and
 * every byte charged comes back. The harness is rawproto.c.
 */

#include "rawproto.h"

#define BUF	1024		/* buffer 3: 16-byte rows, 256-byte slices */

/* A rectangle as the wire carries it, with n_* counts that may lie. */
struct rect {
	uint64_t	origin[4], region[4];
	size_t		norigin, nregion;
	uint64_t	row, slice;
};

/* ReadBufferRect on queue 2; the reply in *rp. */
static int
read_rect(struct conn *c, uint64_t mem, const struct rect *x,
    struct reply *rp)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__ReadBufferRect	m = VCL__READ_BUFFER_RECT__INIT;
	Vcl__Enqueue		q = VCL__ENQUEUE__INIT;

	q.queue = 2;
	m.q = &q;
	m.mem = mem;
	m.origin = (uint64_t *)x->origin;
	m.n_origin = x->norigin;
	m.region = (uint64_t *)x->region;
	m.n_region = x->nregion;
	m.row_pitch = x->row;
	m.slice_pitch = x->slice;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER_RECT;
	r.read_buffer_rect = &m;
	return (call(c, &r, NULL, 0, rp));
}

/* WriteBufferRect on queue 2 with len bulk bytes (asynchronous). */
static int
write_rect(struct conn *c, uint64_t mem, const struct rect *x,
    const void *bytes, uint64_t len)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBufferRect	m = VCL__WRITE_BUFFER_RECT__INIT;
	Vcl__Enqueue		q = VCL__ENQUEUE__INIT;

	q.queue = 2;
	m.q = &q;
	m.mem = mem;
	m.origin = (uint64_t *)x->origin;
	m.n_origin = x->norigin;
	m.region = (uint64_t *)x->region;
	m.n_region = x->nregion;
	m.row_pitch = x->row;
	m.slice_pitch = x->slice;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER_RECT;
	r.write_buffer_rect = &m;
	return (send_req(c, &r, bytes, len));
}

/* CopyBufferRect on queue 2 from src rect s to dst rect d (region s's). */
static int
copy_rect(struct conn *c, uint64_t src, uint64_t dst, const struct rect *s,
    const struct rect *d)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CopyBufferRect	m = VCL__COPY_BUFFER_RECT__INIT;
	Vcl__Enqueue		q = VCL__ENQUEUE__INIT;

	q.queue = 2;
	m.q = &q;
	m.src = src;
	m.dst = dst;
	m.src_origin = (uint64_t *)s->origin;
	m.n_src_origin = s->norigin;
	m.dst_origin = (uint64_t *)d->origin;
	m.n_dst_origin = d->norigin;
	m.region = (uint64_t *)s->region;
	m.n_region = s->nregion;
	m.src_row_pitch = s->row;
	m.src_slice_pitch = s->slice;
	m.dst_row_pitch = d->row;
	m.dst_slice_pitch = d->slice;
	r.call_case = VCL__REQUEST__CALL_COPY_BUFFER_RECT;
	r.copy_buffer_rect = &m;
	return (send_req(c, &r, NULL, 0));
}

/* CreateSubBuffer{id, parent, origin, size} (asynchronous). */
static int
create_sub(struct conn *c, uint64_t id, uint64_t parent, uint64_t origin,
    uint64_t size)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateSubBuffer	m = VCL__CREATE_SUB_BUFFER__INIT;

	m.id = id;
	m.parent = parent;
	m.flags = CL_MEM_READ_WRITE;
	m.origin = origin;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_CREATE_SUB_BUFFER;
	r.create_sub_buffer = &m;
	return (send_req(c, &r, NULL, 0));
}

/* Finish on queue 2: its status (the first asynchronous failure), or 1. */
static int
finish(struct conn *c)
{
	return (raw_finish(c, 2));
}

/* A rectangle with three entries each. */
static struct rect
rect3(uint64_t o0, uint64_t o1, uint64_t o2, uint64_t r0, uint64_t r1,
    uint64_t r2, uint64_t row, uint64_t slice)
{
	struct rect	x;

	memset(&x, 0, sizeof x);
	x.origin[0] = o0;
	x.origin[1] = o1;
	x.origin[2] = o2;
	x.region[0] = r0;
	x.region[1] = r1;
	x.region[2] = r2;
	x.norigin = x.nregion = 3;
	x.row = row;
	x.slice = slice;
	return (x);
}

/* A session with context 1, queue 2 and buffer 3 holding bytes i & 0xff. */
static int
setup(struct conn *c, const struct srv *sv, uint8_t *model)
{
	size_t	i;

	for (i = 0; i < BUF; i++)
		model[i] = (uint8_t)i;
	if (conn_session(c, sv) != 0)
		return (-1);
	return (create_context(c, 1) | create_queue(c, 2, 1) |
	    create_buffer(c, 3, 1, BUF, model, BUF));
}

/* The model's bytes of rectangle x, packed. */
static void
pack(const uint8_t *model, const struct rect *x, uint8_t *out)
{
	uint64_t	y, z;

	for (z = 0; z < x->region[2]; z++)
		for (y = 0; y < x->region[1]; y++) {
			memcpy(out, model + (x->origin[2] + z) * x->slice +
			    (x->origin[1] + y) * x->row + x->origin[0],
			    x->region[0]);
			out += x->region[0];
		}
}

/* Rect reads: right bytes when sane, CL_INVALID_VALUE when hostile. */
static void
test_read_rect(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct reply		 rp;
	struct rect		 x;
	Vcl__StatsResult	 st;
	uint8_t			 model[BUF], want[BUF];
	const uint64_t		 M = UINT64_MAX;
	size_t			 i;
	int			 rc;
	static const struct {
		const char	*name;
		uint64_t	 v[8];		/* origin, region, pitches */
	} bad[] = {
		{ "rect_read_empty_region", { 0, 0, 0, 0, 4, 1, 16, 256 } },
		{ "rect_read_row_short", { 0, 0, 0, 17, 1, 1, 16, 256 } },
		{ "rect_read_slice_short", { 0, 0, 0, 4, 3, 1, 16, 32 } },
		{ "rect_read_slice_not_multiple",
		    { 0, 0, 0, 4, 1, 1, 16, 264 } },
		{ "rect_read_one_past", { 1, 15, 3, 16, 1, 1, 16, 256 } },
		{ "rect_read_origin0_wraps", { M - 2, 0, 0, 4, 1, 1, 16, 256 } },
		{ "rect_read_origin1_times_row",
		    { 0, M / 16 + 1, 0, 1, 1, 1, 16, 256 } },
		{ "rect_read_origin2_times_slice",
		    { 0, 0, M / 256 + 1, 1, 1, 1, 16, 256 } },
		{ "rect_read_region2_times_slice",
		    { 0, 0, 0, 1, 1, M / 256 + 2, 16, 256 } },
		{ "rect_read_region1_times_row",
		    { 0, 0, 0, 1, M / 16 + 2, 1, 16, 0 } },
		{ "rect_read_huge_row", { 0, 0, 0, 1, 2, 1, M / 2 + 1, 0 } },
		{ "rect_read_huge_region", { 0, 0, 0, M, 1, 1, 0, 0 } },
		{ "rect_read_sum_wraps",
		    { 0, 1, M / 256, 16, 1, 1, 16, 256 } },
	};

	c.fd = -1;
	if (!srv_start(&sv, "rect_read_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("rect_read_setup", setup(&c, &sv, model) == 0,
	    "no session"))
		goto out;

	/* Sane: a 5 x 3 x 2 region, explicit pitches, then computed. */
	x = rect3(2, 1, 1, 5, 3, 2, 16, 256);
	pack(model, &x, want);
	rc = read_rect(&c, 3, &x, &rp);
	if (check("rect_read_reply", rc == 0, "no reply")) {
		check("rect_read_bytes", rp.r->status == CL_SUCCESS &&
		    rp.bulk_len == 30 && memcmp(rp.bulk, want, 30) == 0,
		    "status %d, %llu bytes, want 30 of the rectangle",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}
	x = rect3(0, 0, 0, 64, 16, 1, 0, 0);
	rc = read_rect(&c, 3, &x, &rp);
	if (check("rect_read_computed_reply", rc == 0, "no reply")) {
		check("rect_read_computed_bytes", rp.r->status == CL_SUCCESS &&
		    rp.bulk_len == BUF && memcmp(rp.bulk, model, BUF) == 0,
		    "status %d, %llu bytes", rp.r->status,
		    (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		x = rect3(bad[i].v[0], bad[i].v[1], bad[i].v[2], bad[i].v[3],
		    bad[i].v[4], bad[i].v[5], bad[i].v[6], bad[i].v[7]);
		rc = read_rect(&c, 3, &x, &rp);
		if (!check(bad[i].name, rc == 0, "no reply (rc %d)", rc))
			goto out;
		check(bad[i].name, rp.r->status == CL_INVALID_VALUE &&
		    rp.bulk_len == 0, "status %d, %llu bytes, want "
		    "CL_INVALID_VALUE and none", rp.r->status,
		    (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}
	/* Counts other than three. */
	x = rect3(0, 0, 0, 4, 1, 1, 0, 0);
	x.norigin = 2;
	rc = read_rect(&c, 3, &x, &rp);
	if (check("rect_read_two_origins", rc == 0, "no reply")) {
		check("rect_read_two_origins", rp.r->status ==
		    CL_INVALID_VALUE, "status %d", rp.r->status);
		reply_free(&rp);
	}
	x.norigin = 3;
	x.nregion = 4;
	rc = read_rect(&c, 3, &x, &rp);
	if (check("rect_read_four_regions", rc == 0, "no reply")) {
		check("rect_read_four_regions", rp.r->status ==
		    CL_INVALID_VALUE, "status %d", rp.r->status);
		reply_free(&rp);
	}
	x.nregion = 0;
	rc = read_rect(&c, 3, &x, &rp);
	if (check("rect_read_no_region", rc == 0, "no reply")) {
		check("rect_read_no_region", rp.r->status ==
		    CL_INVALID_VALUE, "status %d", rp.r->status);
		reply_free(&rp);
	}
	x = rect3(0, 0, 0, 4, 1, 1, 0, 0);
	rc = read_rect(&c, 99, &x, &rp);
	if (check("rect_read_unknown_mem", rc == 0, "no reply")) {
		check("rect_read_unknown_mem", rp.r->status ==
		    CL_INVALID_MEM_OBJECT, "status %d", rp.r->status);
		reply_free(&rp);
	}
	check("rect_read_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
	conn_close(&c);
	if (conn_session(&c, &sv) == 0) {
		rc = wait_empty(&c, &st);
		check("rect_read_all_returned", rc == 0, "objects %llu bytes "
		    "%llu after the session closed",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);
	}
out:
	conn_close(&c);
	srv_stop(&sv, "rect_read_server_exit");
}

/* Rect writes and copies: applied when sane, refused when hostile. */
static void
test_write_copy_rect(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct reply		 rp;
	struct rect		 x, d;
	Vcl__StatsResult	 st;
	uint8_t			 model[BUF], bytes[64];
	uint64_t		 y;
	size_t			 i;
	int			 rc;

	c.fd = -1;
	if (!srv_start(&sv, "rect_write_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("rect_write_setup", setup(&c, &sv, model) == 0,
	    "no session"))
		goto out;
	for (i = 0; i < sizeof bytes; i++)
		bytes[i] = (uint8_t)(0xc0 + i);

	/* Sane: 8 x 4 x 2 at {3, 2, 1}; the model takes the same bytes. */
	x = rect3(3, 2, 1, 8, 4, 2, 16, 256);
	for (i = 0, y = 0; y < 8; y++, i += 8)
		memcpy(model + (1 + y / 4) * 256 + (2 + y % 4) * 16 + 3,
		    bytes + i, 8);
	rc = write_rect(&c, 3, &x, bytes, 64);
	/* And a copy of rows 0-1 of slice 0 to rows 10-11 of slice 3. */
	x = rect3(0, 0, 0, 16, 2, 1, 16, 256);
	d = rect3(0, 10, 3, 16, 2, 1, 16, 256);
	rc |= copy_rect(&c, 3, 3, &x, &d);
	memcpy(model + 3 * 256 + 10 * 16, model, 32);
	check("rect_write_sent", rc == 0, "cannot send");
	check("rect_write_finish", finish(&c) == CL_SUCCESS, "Finish failed");
	rc = read_buffer(&c, 2, 3, BUF, &rp);
	if (check("rect_write_read_reply", rc == 0, "no reply")) {
		check("rect_write_bytes", rp.r->status == CL_SUCCESS &&
		    rp.bulk_len == BUF && memcmp(rp.bulk, model, BUF) == 0,
		    "status %d: the buffer is not the model", rp.r->status);
		reply_free(&rp);
	}

	/* Hostile writes: refused at the next Finish, bytes untouched. */
	x = rect3(UINT64_MAX - 3, 0, 0, 8, 1, 1, 16, 256);
	rc = write_rect(&c, 3, &x, bytes, 8);
	check("rect_write_origin_wraps", rc == 0 && finish(&c) ==
	    CL_INVALID_VALUE, "want CL_INVALID_VALUE at Finish");
	x = rect3(0, 0, UINT64_MAX / 256 + 1, 8, 1, 1, 16, 256);
	rc = write_rect(&c, 3, &x, bytes, 8);
	check("rect_write_slice_overflow", rc == 0 && finish(&c) ==
	    CL_INVALID_VALUE, "want CL_INVALID_VALUE at Finish");
	x = rect3(0, 0, 0, 1, 1, 1, 0, 0);
	x.nregion = 1;
	rc = write_rect(&c, 3, &x, bytes, 1);
	check("rect_write_one_region", rc == 0 && finish(&c) ==
	    CL_INVALID_VALUE, "want CL_INVALID_VALUE at Finish");

	/* Hostile copies. */
	x = rect3(0, 0, 0, 16, 2, 1, 16, 256);
	d = rect3(0, 63, 3, 16, 2, 1, 16, 256);	/* one row past */
	rc = copy_rect(&c, 3, 3, &x, &d);
	check("rect_copy_dst_past", rc == 0 && finish(&c) ==
	    CL_INVALID_VALUE, "want CL_INVALID_VALUE at Finish");
	d = rect3(0, 0, 0, 16, 2, 1, 16, 256);
	x = rect3(0, UINT64_MAX / 16, 0, 16, 2, 1, 16, 256);
	rc = copy_rect(&c, 3, 3, &x, &d);
	check("rect_copy_src_overflow", rc == 0 && finish(&c) ==
	    CL_INVALID_VALUE, "want CL_INVALID_VALUE at Finish");
	x = rect3(0, 0, 0, 16, 2, 1, 16, 256);
	x.nregion = 2;
	rc = copy_rect(&c, 3, 3, &x, &d);
	check("rect_copy_two_regions", rc == 0 && finish(&c) ==
	    CL_INVALID_VALUE, "want CL_INVALID_VALUE at Finish");

	rc = read_buffer(&c, 2, 3, BUF, &rp);
	if (check("rect_hostile_read_reply", rc == 0, "no reply")) {
		check("rect_hostile_untouched", rp.r->status == CL_SUCCESS &&
		    rp.bulk_len == BUF && memcmp(rp.bulk, model, BUF) == 0,
		    "a refused command changed the buffer");
		reply_free(&rp);
	}

	/* Bytes that do not match a sane region close the session. */
	x = rect3(0, 0, 0, 8, 2, 1, 16, 256);
	rc = write_rect(&c, 3, &x, bytes, 15);
	check("rect_write_short_bulk_closed", rc == 0 && wait_closed(&c),
	    "session still open after 15 bytes for a 16-byte region");
	check("rect_write_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
	conn_close(&c);
	if (conn_session(&c, &sv) == 0) {
		rc = wait_empty(&c, &st);
		check("rect_write_all_returned", rc == 0, "objects %llu bytes "
		    "%llu after the session closed",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);
	}
out:
	conn_close(&c);
	srv_stop(&sv, "rect_write_server_exit");
}

/*
 * Sub-buffers: one inside the parent reads the parent's bytes and is
 * charged nothing; rects are checked against its own size; hostile
 * regions and a sub-buffer of a sub-buffer fail, and using them says so.
 */
static void
test_sub_buffer(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct reply		 rp;
	struct rect		 x;
	Vcl__StatsResult	 st0, st;
	uint8_t			 model[BUF];
	int			 rc;
	static const struct {
		const char	*name;
		uint64_t	 id, parent, origin, size;
		int		 want;
	} bad[] = {
		{ "sub_origin_wraps", 10, 3, UINT64_MAX - 127, 256,
		    CL_INVALID_VALUE },
		{ "sub_one_past", 11, 3, 768, 257, CL_INVALID_VALUE },
		{ "sub_empty", 12, 3, 0, 0, CL_INVALID_BUFFER_SIZE },
		{ "sub_of_sub", 13, 4, 0, 128, CL_INVALID_MEM_OBJECT },
		{ "sub_of_unknown", 14, 99, 0, 128, CL_INVALID_MEM_OBJECT },
		{ "sub_misaligned", 15, 3, 1, 128,
		    CL_MISALIGNED_SUB_BUFFER_OFFSET },
	};
	size_t			 i;

	c.fd = -1;
	if (!srv_start(&sv, "sub_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("sub_setup", setup(&c, &sv, model) == 0 &&
	    stats(&c, &st0) == 0, "no session"))
		goto out;
	rc = create_sub(&c, 4, 3, 256, 512);
	rc |= stats(&c, &st);
	if (check("sub_create", rc == 0, "cannot send"))
		check("sub_not_charged", st.session_bytes == st0.session_bytes,
		    "session bytes %llu -> %llu for a sub-buffer",
		    (unsigned long long)st0.session_bytes,
		    (unsigned long long)st.session_bytes);
	rc = read_buffer(&c, 2, 4, 512, &rp);
	if (check("sub_read_reply", rc == 0, "no reply")) {
		check("sub_read_bytes", rp.r->status == CL_SUCCESS &&
		    rp.bulk_len == 512 && memcmp(rp.bulk, model + 256, 512) ==
		    0, "status %d: not the parent's bytes 256..767",
		    rp.r->status);
		reply_free(&rp);
	}
	/* Inside the parent, one byte past the sub-buffer. */
	x = rect3(0, 0, 1, 16, 16, 1, 16, 256);
	rc = read_rect(&c, 4, &x, &rp);
	if (check("sub_rect_ok_reply", rc == 0, "no reply")) {
		check("sub_rect_ok", rp.r->status == CL_SUCCESS, "status %d",
		    rp.r->status);
		reply_free(&rp);
	}
	x = rect3(1, 0, 1, 16, 16, 1, 16, 256);
	rc = read_rect(&c, 4, &x, &rp);
	if (check("sub_rect_past_reply", rc == 0, "no reply")) {
		check("sub_rect_past", rp.r->status == CL_INVALID_VALUE,
		    "status %d, want CL_INVALID_VALUE", rp.r->status);
		reply_free(&rp);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		rc = create_sub(&c, bad[i].id, bad[i].parent, bad[i].origin,
		    bad[i].size);
		rc |= read_buffer(&c, 2, bad[i].id, 1, &rp);
		if (!check(bad[i].name, rc == 0, "no reply"))
			goto out;
		check(bad[i].name, rp.r->status == bad[i].want, "status %d, "
		    "want %d", rp.r->status, bad[i].want);
		reply_free(&rp);
	}
	/* The parent released first: the sub-buffer keeps the bytes. */
	rc = release(&c, VCL__KIND__KIND_MEM, 3);
	rc |= read_buffer(&c, 2, 4, 512, &rp);
	if (check("sub_after_parent_reply", rc == 0, "no reply")) {
		check("sub_after_parent", rp.r->status == CL_SUCCESS &&
		    rp.bulk_len == 512 && memcmp(rp.bulk, model + 256, 512) ==
		    0, "status %d", rp.r->status);
		reply_free(&rp);
	}
	check("sub_server_alive", srv_alive(&sv), "server %s", srv_how(&sv));
	conn_close(&c);
	if (conn_session(&c, &sv) == 0) {
		rc = wait_empty(&c, &st);
		check("sub_all_returned", rc == 0, "objects %llu bytes %llu "
		    "after the session closed",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);
	}
out:
	conn_close(&c);
	srv_stop(&sv, "sub_server_exit");
}

static const struct test tests[] = {
	{ "read_rect",		test_read_rect,		60 },
	{ "write_copy_rect",	test_write_copy_rect,	60 },
	{ "sub_buffer",		test_sub_buffer,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
