/* attack7_test.c - hostile clients against images, kernels and handles. */

/*
 * usage: attack7_test VCLSERVER
 *
 * Raw-protocol clients that mix objects as no OpenCL program can: an
 * object of one context named where another context's is wanted. Each
 * time the request gets its CL_INVALID_*, the server stays up and serves
 * the next one, and nothing is left once the session let go.
 */

#include "rawproto.h"

enum {
	CTX = 1, Q, CTX2, Q2, BUF, BUF2, IMG, IMG2,
};

/* A server and a session with two contexts, a queue on each; 0: none. */
static int
start(struct srv *sv, struct conn *c, const char *name)
{
	c->fd = -1;
	if (!srv_start(sv, name, "127.0.0.1:0", NULL))
		return (0);
	if (!check(name, conn_session(c, sv) == 0 && create_context(c, CTX) ==
	    0 && create_queue(c, Q, CTX) == 0 && create_context(c, CTX2) ==
	    0 && create_queue(c, Q2, CTX2) == 0, "no session")) {
		srv_stop(sv, "server_exit");
		return (0);
	}
	return (1);
}

/* The server holds nothing once the session let go of everything. */
static void
settle(struct conn *c, const char *name)
{
	Vcl__StatsResult	st = VCL__STATS_RESULT__INIT;

	check(name, wait_empty(c, &st) == 0, "objects %llu bytes %llu left",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
}

/* GetInfo(MEM, id, CL_MEM_SIZE): its status, 1 for no reply. */
static int
mem_status(struct conn *c, uint64_t id)
{
	return (get_info_status(c, VCL__GET_INFO__WHAT__MEM, id,
	    CL_MEM_SIZE));
}

/* CreateImage of a 1D buffer image of ctx over buf (asynchronous). */
static int
image_over(struct conn *c, uint64_t id, uint64_t ctx, uint64_t w,
    uint64_t buf)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateImage	m = VCL__CREATE_IMAGE__INIT;

	m.id = id;
	m.context = ctx;
	m.flags = CL_MEM_READ_WRITE;
	m.order = CL_RGBA;
	m.data_type = CL_UNSIGNED_INT8;
	m.type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
	m.width = w;
	m.has_buffer = 1;
	m.buffer = buf;
	r.call_case = VCL__REQUEST__CALL_CREATE_IMAGE;
	r.create_image = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * A 1D buffer image of one context over a buffer of another: the
 * runtime's image would lie in memory its context does not have (PoCL
 * 3.1 asserts that the two contexts are one, and the server aborted with
 * every session on it). CL_INVALID_IMAGE_DESCRIPTOR, as for any buffer
 * the image cannot be made over; the same context's buffer still works.
 */
static void
test_image_other_ctx(void)
{
	struct srv	sv;
	struct conn	c;
	int		st;

	if (!start(&sv, &c, "imgctx_start"))
		return;
	create_buffer(&c, BUF, CTX2, 4096, NULL, 0);
	image_over(&c, IMG, CTX, 16, BUF);
	st = mem_status(&c, IMG);
	check("imgctx_refused", st == CL_INVALID_IMAGE_DESCRIPTOR, "a 1D "
	    "buffer image over another context's buffer: status %d, want "
	    "CL_INVALID_IMAGE_DESCRIPTOR (1: no reply: server died? %s)", st,
	    srv_how(&sv));
	if (!check("imgctx_server_alive", srv_alive(&sv), "server gone (%s); "
	    "see %s/stderr", srv_how(&sv), sv.dir))
		goto out;
	image_over(&c, IMG2, CTX2, 16, BUF);
	st = mem_status(&c, IMG2);
	check("imgctx_same_ctx", st == CL_SUCCESS, "a 1D buffer image over "
	    "its own context's buffer: status %d", st);
	release(&c, VCL__KIND__KIND_MEM, IMG);
	release(&c, VCL__KIND__KIND_MEM, IMG2);
	release(&c, VCL__KIND__KIND_MEM, BUF);
	release(&c, VCL__KIND__KIND_QUEUE, Q);
	release(&c, VCL__KIND__KIND_QUEUE, Q2);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX2);
	settle(&c, "imgctx_settle");
out:
	conn_close(&c);
	srv_stop(&sv, "imgctx_exit");
}

/*
 * A 1D buffer image's pixels copied to a buffer (CopyImageBuffer) and a
 * fill of one (FillImage): PoCL 3.1 dereferenced a bad pointer in both
 * and the server died with every session on it. The copy is made from
 * the image's buffer (the same bytes, exactly those of the region); the
 * fill is refused on PoCL (CL_INVALID_OPERATION), as a writable
 * image1d_buffer_t kernel argument is.
 */
static void
test_image1d_buffer_ops(void)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CopyImageBuffer	cm = VCL__COPY_IMAGE_BUFFER__INIT;
	Vcl__FillImage		fm = VCL__FILL_IMAGE__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;
	struct srv		sv;
	struct conn		c;
	struct reply		rp;
	uint64_t		o[3] = { 2, 0, 0 }, rg[3] = { 4, 1, 1 };
	uint8_t			*pat, color[16] = { 0 }, zero[16];
	int			st;

	if ((pat = raw_pattern(64, 7)) == NULL || !start(&sv, &c,
	    "img1db_start")) {
		free(pat);
		return;
	}
	e.queue = Q;
	/* 16 RGBA8 pixels over the pattern; a zeroed buffer to copy to. */
	create_buffer(&c, BUF, CTX, 64, pat, 64);
	create_buffer(&c, BUF2, CTX, 64, NULL, 0);
	image_over(&c, IMG, CTX, 16, BUF);
	st = mem_status(&c, IMG);
	if (!check("img1db_made", st == CL_SUCCESS, "a 1D buffer image: "
	    "status %d", st))
		goto out;
	/* Pixels 2..5 to bytes 8..23 of the other buffer. */
	cm.q = &e;
	cm.image = IMG;
	cm.buffer = BUF2;
	cm.n_origin = cm.n_region = 3;
	cm.origin = o;
	cm.region = rg;
	cm.offset = 8;
	cm.to_buffer = 1;
	r.call_case = VCL__REQUEST__CALL_COPY_IMAGE_BUFFER;
	r.copy_image_buffer = &cm;
	send_req(&c, &r, NULL, 0);
	st = raw_finish(&c, Q);
	check("img1db_copy", st == CL_SUCCESS, "a 1D buffer image copied to "
	    "a buffer: status %d (1: no reply: server died? %s)", st,
	    srv_how(&sv));
	if (!check("img1db_copy_alive", srv_alive(&sv), "server gone (%s); "
	    "see %s/stderr", srv_how(&sv), sv.dir))
		goto out;
	memset(zero, 0, sizeof zero);
	st = read_buffer(&c, Q, BUF2, 64, &rp);
	if (check("img1db_read", st == 0 && rp.r->status == CL_SUCCESS &&
	    rp.bulk_len == 64, "read of the copy failed (rc %d)", st)) {
		check("img1db_copy_bytes", memcmp(rp.bulk, zero, 8) == 0 &&
		    memcmp(rp.bulk + 8, pat + 8, 16) == 0 &&
		    memcmp(rp.bulk + 24, zero, 16) == 0, "the copy's bytes "
		    "are not the region's pixels, in place");
		reply_free(&rp);
	}
	fm.q = &e;
	fm.mem = IMG;
	fm.color.data = color;
	fm.color.len = sizeof color;
	fm.n_origin = fm.n_region = 3;
	fm.origin = o;
	fm.region = rg;
	r.call_case = VCL__REQUEST__CALL_FILL_IMAGE;
	r.fill_image = &fm;
	send_req(&c, &r, NULL, 0);
	st = raw_finish(&c, Q);
	check("img1db_fill", st == CL_INVALID_OPERATION, "a fill of a 1D "
	    "buffer image: status %d, want CL_INVALID_OPERATION (1: no reply: "
	    "server died? %s)", st, srv_how(&sv));
	if (!check("img1db_fill_alive", srv_alive(&sv), "server gone (%s); "
	    "see %s/stderr", srv_how(&sv), sv.dir))
		goto out;
	release(&c, VCL__KIND__KIND_MEM, IMG);
	release(&c, VCL__KIND__KIND_MEM, BUF);
	release(&c, VCL__KIND__KIND_MEM, BUF2);
	release(&c, VCL__KIND__KIND_QUEUE, Q);
	release(&c, VCL__KIND__KIND_QUEUE, Q2);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX2);
	settle(&c, "img1db_settle");
out:
	free(pat);
	conn_close(&c);
	srv_stop(&sv, "img1db_exit");
}

static const struct test tests[] = {
	{ "image_other_ctx",	test_image_other_ctx,	60 },
	{ "image1d_buffer_ops",	test_image1d_buffer_ops, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof
	    tests[0]));
}
