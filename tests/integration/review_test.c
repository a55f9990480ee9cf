/* review_test.c - hostile requests at the seams between server features. */

/*
 * usage: review_test VCLSERVER
 *
 * Raw-protocol tests through real vclserver processes on PoCL, each at a
 * place where two features meet: an object that keeps another alive after
 * the client released it (a sub-buffer its parent, a buffer image its
 * buffer) keeps that object's charge until both are gone; requests that
 * name an object of the wrong kind for the call (an image as a buffer, a
 * buffer of the wrong size for an image) get their CL_INVALID_* and the
 * server stays up. The harness is rawproto.c.
 */

#include "rawproto.h"

#define KERNELS	8	/* GetBinary's program: its code made when asked */

enum {
	CTX = 1, Q, BUF, SUB, IMG, IMG2, PROG, PROG2, LINKED, SMP,
};

/* A server and a session with a context and a queue; 0 when none. */
static int
start(struct srv *sv, struct conn *c, const char *name,
    const char *const *extra)
{
	c->fd = -1;
	if (!srv_start(sv, name, "127.0.0.1:0", extra))
		return (0);
	if (!check(name, conn_session(c, sv) == 0 && create_context(c, CTX) ==
	    0 && create_queue(c, Q, CTX) == 0, "no session")) {
		srv_stop(sv, "server_exit");
		return (0);
	}
	return (1);
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

/* CreateImage of one format (asynchronous); buf: a 1D buffer image's. */
static int
create_image(struct conn *c, uint64_t id, uint32_t order, uint32_t dtype,
    uint32_t type, uint64_t w, uint64_t h, uint64_t buf)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateImage	m = VCL__CREATE_IMAGE__INIT;

	m.id = id;
	m.context = CTX;
	m.flags = CL_MEM_READ_WRITE;
	m.order = order;
	m.data_type = dtype;
	m.type = type;
	m.width = w;
	m.has_height = 1;
	m.height = h;
	if (buf != 0) {
		m.has_buffer = 1;
		m.buffer = buf;
	}
	r.call_case = VCL__REQUEST__CALL_CREATE_IMAGE;
	r.create_image = &m;
	return (send_req(c, &r, NULL, 0));
}

/* Session bytes now, or UINT64_MAX when Stats fails. */
static uint64_t
session_bytes(struct conn *c)
{
	Vcl__StatsResult	st;

	if (stats(c, &st) != 0)
		return (UINT64_MAX);
	return (st.session_bytes);
}

/* The server holds nothing once the session let go of everything. */
static void
settle(struct conn *c, const char *name)
{
	Vcl__StatsResult	st = VCL__STATS_RESULT__INIT;

	check(name, wait_empty(c, &st) == 0, "objects %llu bytes %llu left",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
}

/* GetInfo(MEM, id, CL_MEM_SIZE): its status. */
static int
mem_status(struct conn *c, uint64_t id)
{
	return (get_info_status(c, VCL__GET_INFO__WHAT__MEM, id,
	    CL_MEM_SIZE));
}

/*
 * A sub-buffer keeps its parent's memory after the client released the
 * parent: the parent's charge stays until the sub-buffer goes too, or a
 * session could hold any amount under its --max-session-bytes.
 */
static void
test_sub_keeps_charge(void)
{
	static const char *const extra[] = { "--max-session-bytes", "65536",
	    NULL };
	struct srv	sv;
	struct conn	c;
	uint64_t	b;
	int		i;

	if (!start(&sv, &c, "subcharge_start", extra))
		return;
	create_buffer(&c, BUF, CTX, 65536, NULL, 0);
	create_sub(&c, SUB, BUF, 0, 128);
	check("subcharge_made", mem_status(&c, SUB) == CL_SUCCESS,
	    "the sub-buffer failed");
	release(&c, VCL__KIND__KIND_MEM, BUF);
	b = session_bytes(&c);
	check("subcharge_kept", b == 65536, "session bytes %llu after the "
	    "parent's release, want 65536 (the sub-buffer holds them)",
	    (unsigned long long)b);
	/* Over the limit: another buffer of the size fails. */
	create_buffer(&c, 30, CTX, 65536, NULL, 0);
	i = mem_status(&c, 30);
	check("subcharge_limit", i == CL_MEM_OBJECT_ALLOCATION_FAILURE,
	    "a second 64 KiB buffer: status %d, want "
	    "CL_MEM_OBJECT_ALLOCATION_FAILURE", i);
	release(&c, VCL__KIND__KIND_MEM, 30);
	release(&c, VCL__KIND__KIND_MEM, SUB);
	release(&c, VCL__KIND__KIND_QUEUE, Q);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "subcharge_settle");
	srv_stop(&sv, "subcharge_exit");
	conn_close(&c);
}

/*
 * A 1D buffer image keeps its buffer after the client released the buffer:
 * the buffer's charge stays until the image goes too.
 */
static void
test_image_keeps_charge(void)
{
	static const char *const extra[] = { "--max-session-bytes", "65536",
	    NULL };
	struct srv	sv;
	struct conn	c;
	uint64_t	b;
	int		i;

	if (!start(&sv, &c, "imgcharge_start", extra))
		return;
	create_buffer(&c, BUF, CTX, 65520, NULL, 0);
	create_image(&c, IMG, CL_RGBA, CL_UNSIGNED_INT8,
	    CL_MEM_OBJECT_IMAGE1D_BUFFER, 4, 0, BUF);
	i = mem_status(&c, IMG);
	check("imgcharge_made", i == CL_SUCCESS, "the buffer image failed: "
	    "%d", i);
	release(&c, VCL__KIND__KIND_MEM, BUF);
	b = session_bytes(&c);
	check("imgcharge_kept", b == 65520 + 16, "session bytes %llu after "
	    "the buffer's release, want %u (the image holds them)",
	    (unsigned long long)b, 65520 + 16);
	create_buffer(&c, 30, CTX, 65536, NULL, 0);
	i = mem_status(&c, 30);
	check("imgcharge_limit", i == CL_MEM_OBJECT_ALLOCATION_FAILURE,
	    "a second 64 KiB buffer: status %d, want "
	    "CL_MEM_OBJECT_ALLOCATION_FAILURE", i);
	release(&c, VCL__KIND__KIND_MEM, 30);
	release(&c, VCL__KIND__KIND_MEM, IMG);
	release(&c, VCL__KIND__KIND_QUEUE, Q);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "imgcharge_settle");
	srv_stop(&sv, "imgcharge_exit");
	conn_close(&c);
}

/*
 * GetBinary of a program of many kernels (PoCL makes each kernel's code
 * when its binary is asked for) runs off the loop: a Stats sent after it
 * on the same connection is answered first, and the binary still comes.
 */
static void
test_binary_off_loop(void)
{
	Vcl__Request		r = VCL__REQUEST__INIT, sr = VCL__REQUEST__INIT;
	Vcl__BuildProgram	b = VCL__BUILD_PROGRAM__INIT;
	Vcl__GetBinary		gb = VCL__GET_BINARY__INIT;
	Vcl__Stats		sm = VCL__STATS__INIT;
	struct srv		sv;
	struct conn		c;
	struct reply		rp;
	char			*src;
	size_t			 i, n = 0;
	uint64_t		 bseq, sseq;
	int			 late, k, rc = -1;

	if (!start(&sv, &c, "getbin_start", NULL))
		return;
	if ((src = malloc(KERNELS * 256)) == NULL)
		goto out;
	/* A source of its own: PoCL's cache has no code of it yet. */
	for (i = 0; i < KERNELS; i++)
		n += (size_t)snprintf(src + n, 256, "__kernel void k%zu("
		    "__global float *o, __global const float *p)\n"
		    "{ size_t g = get_global_id(0);\n"
		    "  for (int j = 0; j < 16; j++)\n"
		    "    o[g] = o[g] * p[j] + sin(p[g + j]) + %ld.0f; }\n", i,
		    (long)getpid() * 1000 + (long)time(NULL) % 1000);
	create_program(&c, PROG, CTX, src);
	free(src);
	b.program = PROG;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &b;
	if (!check("getbin_build", call(&c, &r, NULL, 0, &rp) == 0, "no reply"))
		goto out;
	check("getbin_build", rp.r->status == CL_SUCCESS, "status %d",
	    rp.r->status);
	reply_free(&rp);
	gb.program = PROG;
	gb.device = 0;
	r.call_case = VCL__REQUEST__CALL_GET_BINARY;
	r.get_binary = &gb;
	sr.call_case = VCL__REQUEST__CALL_STATS;
	sr.stats = &sm;
	if (!check("getbin_send", send_req(&c, &r, NULL, 0) == 0 &&
	    send_req(&c, &sr, NULL, 0) == 0, "cannot send"))
		goto out;
	bseq = r.seq;
	sseq = sr.seq;
	if (!check("getbin_first", recv_msg(&c, &rp) == 0, "no reply"))
		goto out;
	check("getbin_loop_free", rp.r->seq == sseq, "reply %llu came "
	    "first: the GetBinary (%llu) held the loop, Stats (%llu) waited",
	    (unsigned long long)rp.r->seq, (unsigned long long)bseq,
	    (unsigned long long)sseq);
	late = rp.r->seq != sseq;
	if (!late) {
		reply_free(&rp);
		/* A loaded machine makes the code slowly: a bounded wait. */
		for (k = 0; k < 6 && (rc = recv_msg(&c, &rp)) != 0; k++)
			;
		if (!check("getbin_second", rc == 0, "no reply"))
			goto out;
	}
	check("getbin_binary", rp.r->seq == bseq && rp.r->status ==
	    CL_SUCCESS && rp.r->program != NULL &&
	    rp.r->program->has_binary && rp.r->program->binary.len > 0,
	    "no binary (status %d)", rp.r->status);
	reply_free(&rp);
	/* The Stats answered last, the loop having waited. */
	if (late && recv_msg(&c, &rp) == 0)
		reply_free(&rp);
	release(&c, VCL__KIND__KIND_PROGRAM, PROG);
	release(&c, VCL__KIND__KIND_QUEUE, Q);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "getbin_settle");
out:
	srv_stop(&sv, "getbin_exit");
	conn_close(&c);
}

/*
 * Release with a kind the wire does not name, a server-only kind (8: a
 * transfer's), a negative one, or the wrong kind for the id: nothing is
 * released and the session goes on; the right kind then releases.
 */
static void
test_release_kinds(void)
{
	static const int	 kinds[] = { 8, 99, -5, VCL__KIND__KIND_CONTEXT };
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	struct srv		 sv;
	struct conn		 c;
	size_t			 i;

	if (!srv_start(&sv, "kinds_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("kinds_session", conn_session(&c, &sv) == 0 &&
	    create_context(&c, 1) == 0 && create_buffer(&c, 3, 1, 4096, NULL,
	    0) == 0, "no session"))
		goto out;
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		release(&c, (Vcl__Kind)kinds[i], 3);
	check("kinds_nothing_released", stats(&c, &st) == 0 &&
	    st.session_objects == 2, "session objects %llu after releases "
	    "of hostile kinds, want 2 (or no Stats: session closed)",
	    (unsigned long long)st.session_objects);
	release(&c, VCL__KIND__KIND_MEM, 3);
	check("kinds_right_kind_releases", stats(&c, &st) == 0 &&
	    st.session_objects == 1, "session objects %llu, want 1",
	    (unsigned long long)st.session_objects);
	check("kinds_server_alive", srv_alive(&sv), "server %s", srv_how(&sv));
out:
	conn_close(&c);
	srv_stop(&sv, "kinds_server_exit");
}

static const struct test tests[] = {
	{ "binary_off_loop",	test_binary_off_loop,	150 },
	{ "image_keeps_charge",	test_image_keeps_charge, 60 },
	{ "sub_keeps_charge",	test_sub_keeps_charge,	60 },
	{ "release_kinds",	test_release_kinds,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
