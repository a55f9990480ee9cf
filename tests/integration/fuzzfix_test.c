/* fuzzfix_test.c - regressions for server faults fuzz_session found. */
#include "rawproto.h"

/* CreateQueue{id, ctx, device 0} with a raw property list. */
static int
queue_props(struct conn *c, uint64_t id, uint64_t ctx, uint64_t *props,
    size_t n)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateQueue	m = VCL__CREATE_QUEUE__INIT;

	m.id = id;
	m.context = ctx;
	m.device = 0;
	m.n_properties = n;
	m.properties = props;
	r.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	r.create_queue = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * Queue properties straight from the wire: a device-side queue (PoCL
 * calls exit() for one), a queue size, an unknown property and unknown
 * bits each fail that queue with the error libvcl gives, and the server
 * lives on; a host queue with profiling is still made.
 */
static void
test_queue_props(void)
{
	static const struct {
		uint64_t	name, value;
		cl_int		want;
	} cases[] = {
		{ CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE |
		    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
		    CL_INVALID_QUEUE_PROPERTIES },
		{ CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE_DEFAULT,
		    CL_INVALID_QUEUE_PROPERTIES },
		{ CL_QUEUE_SIZE, 4096, CL_INVALID_QUEUE_PROPERTIES },
		{ 0x7777, 1, CL_INVALID_VALUE },
		{ CL_QUEUE_PROPERTIES, 1ull << 40, CL_INVALID_VALUE },
		{ CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, CL_SUCCESS },
	};
	struct srv		 sv;
	struct conn		 c;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 props[2];
	char			 name[64];
	size_t			 i;
	int			 got;

	if (!srv_start(&sv, "queue_props_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("queue_props_session", conn_session(&c, &sv) == 0,
	    "no session"))
		goto out;
	check("queue_props_context", create_context(&c, 1) == 0,
	    "cannot send CreateContext");
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		props[0] = cases[i].name;
		props[1] = cases[i].value;
		snprintf(name, sizeof name, "queue_props_%zu", i);
		if (!check(name, queue_props(&c, 10 + i, 1, props, 2) == 0,
		    "cannot send CreateQueue"))
			break;
		got = get_info_status(&c, VCL__GET_INFO__WHAT__QUEUE, 10 + i,
		    CL_QUEUE_PROPERTIES);
		check(name, got == cases[i].want, "property %#llx = %#llx: "
		    "status %d, want %d (or no reply: server died?)",
		    (unsigned long long)cases[i].name,
		    (unsigned long long)cases[i].value, got, cases[i].want);
	}
	check("queue_props_server_alive", srv_alive(&sv) && stats(&c, &st) ==
	    0, "server gone after the properties (%s); see %s/stderr",
	    srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "queue_props_server_stop");
}

/* CopyBufferRect{src, dst} on queue 2, origins {so, 0, 0} and {dof, 0, 0}. */
static int
copy_rect(struct conn *c, uint64_t src, uint64_t dst, uint64_t so,
    uint64_t dof, const uint64_t *region, uint64_t srow, uint64_t sslice,
    uint64_t drow)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CopyBufferRect	m = VCL__COPY_BUFFER_RECT__INIT;
	Vcl__Enqueue		q = VCL__ENQUEUE__INIT;
	uint64_t		sorg[3] = { so, 1, 0 }, dorg[3] = { dof, 0, 0 };

	q.queue = 2;
	m.q = &q;
	m.src = src;
	m.dst = dst;
	m.src_origin = sorg;
	m.dst_origin = dorg;
	m.region = (uint64_t *)region;
	m.n_src_origin = m.n_dst_origin = m.n_region = 3;
	m.src_row_pitch = srow;
	m.src_slice_pitch = sslice;
	m.dst_row_pitch = drow;
	r.call_case = VCL__REQUEST__CALL_COPY_BUFFER_RECT;
	r.copy_buffer_rect = &m;
	return (send_req(c, &r, NULL, 0));
}

/* CreateSubBuffer{id, parent, origin, size}, read-write. */
static int
sub_buffer(struct conn *c, uint64_t id, uint64_t parent, uint64_t origin,
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

/*
 * CopyBufferRect to and from sub-buffers: PoCL dereferences NULL for one
 * (every session of the server died); the server copies on the parent at
 * the sub-buffer's offset. The bytes land where the rectangles say.
 */
static void
test_copy_rect_sub(void)
{
	static const uint64_t	reg1[3] = { 8, 2, 2 }, reg2[3] = { 8, 2, 1 };
	struct srv		 sv;
	struct conn		 c;
	struct reply		 rp;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Finish		 f = VCL__FINISH__INIT;
	uint8_t			 model[512], want[512];
	size_t			 i, y, z;
	int			 st = 1;

	for (i = 0; i < sizeof model; i++)
		model[i] = (uint8_t)(i * 7 + 1);
	memset(want, 0, sizeof want);
	/* 3 -> sub-buffer 40 of 4 at 256: rows of 16, slices of 64. */
	for (z = 0; z < 2; z++)
		for (y = 0; y < 2; y++)
			memcpy(want + 256 + z * 16 + y * 8,
			    model + z * 64 + (y + 1) * 16 + 4, 8);
	/* Sub-buffer 41 of 3 at 256 -> 4 at 0: rows of 8 from offset 8. */
	for (y = 0; y < 2; y++)
		memcpy(want + y * 8, model + 256 + (y + 1) * 8 + 8, 8);

	if (!srv_start(&sv, "copy_rect_sub_server_start", "127.0.0.1:0",
	    NULL))
		return;
	c.fd = -1;
	if (!check("copy_rect_sub_session", conn_session(&c, &sv) == 0,
	    "no session"))
		goto out;
	if (!check("copy_rect_sub_send", (create_context(&c, 1) |
	    create_queue(&c, 2, 1) | create_buffer(&c, 3, 1, sizeof model,
	    model, sizeof model) | create_buffer(&c, 4, 1, sizeof model, NULL,
	    0) | sub_buffer(&c, 40, 4, 256, 128) | sub_buffer(&c, 41, 3, 256,
	    128) | copy_rect(&c, 3, 40, 4, 0, reg1, 16, 64, 8) |
	    copy_rect(&c, 41, 4, 8, 0, reg2, 8, 0, 8)) == 0, "send failed"))
		goto out;
	f.queue = 2;
	r.call_case = VCL__REQUEST__CALL_FINISH;
	r.finish = &f;
	if (call(&c, &r, NULL, 0, &rp) == 0) {
		st = rp.r->status;
		reply_free(&rp);
	}
	check("copy_rect_sub_finish", st == CL_SUCCESS, "Finish status %d "
	    "(1: no reply: server died? %s)", st, srv_how(&sv));
	if (st == CL_SUCCESS && check("copy_rect_sub_read", read_buffer(&c, 2,
	    4, sizeof want, &rp) == 0 && rp.r->status == CL_SUCCESS &&
	    rp.bulk_len == sizeof want, "no read reply")) {
		check("copy_rect_sub_bytes", memcmp(rp.bulk, want,
		    sizeof want) == 0, "the copied bytes differ");
		reply_free(&rp);
	}
	check("copy_rect_sub_server_alive", srv_alive(&sv), "server gone "
	    "(%s); see %s/stderr", srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "copy_rect_sub_server_stop");
}

/* BuildProgram{compile} of program id: the reply status, or 1. */
static int
compile_prog(struct conn *c, uint64_t id, const char *src)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	m = VCL__BUILD_PROGRAM__INIT;
	struct reply		rp;
	int			st;

	if (create_program(c, id, 1, src) != 0)
		return (1);
	m.program = id;
	m.has_compile = m.compile = 1;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.r->status;
	reply_free(&rp);
	return (st);
}

/*
 * LinkProgram{id} of context 1 from the n programs progs, with options:
 * the reply status, or 1.
 */
static int
link_prog(struct conn *c, uint64_t id, uint64_t *progs, size_t n,
    const char *options)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__LinkProgram	m = VCL__LINK_PROGRAM__INIT;
	struct reply		rp;
	int			st;

	m.id = id;
	m.context = 1;
	m.n_programs = n;
	m.programs = progs;
	m.options = (char *)options;
	r.call_case = VCL__REQUEST__CALL_LINK_PROGRAM;
	r.link_program = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.r->status;
	reply_free(&rp);
	return (st);
}

/*
 * LinkProgram of an input whose compile failed: PoCL asserts (the server
 * aborted); the server answers CL_INVALID_OPERATION, as for an input never
 * compiled, and a link of good inputs still works.
 */
static void
test_link_failed_input(void)
{
	struct srv	sv;
	struct conn	c;
	uint64_t	bad[2] = { 10, 11 }, good[1] = { 10 };
	int		st;

	if (!srv_start(&sv, "link_failed_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("link_failed_session", conn_session(&c, &sv) == 0 &&
	    create_context(&c, 1) == 0, "no session"))
		goto out;
	check("link_failed_compile_good", compile_prog(&c, 10,
	    "int h(int x) { return x + 1; }\n") == CL_SUCCESS,
	    "a good compile failed");
	check("link_failed_compile_bad", compile_prog(&c, 11,
	    "int g(int x) { return undeclared; }\n") ==
	    CL_COMPILE_PROGRAM_FAILURE, "a bad compile did not fail");
	st = link_prog(&c, 12, bad, 2, NULL);
	check("link_failed_refused", st == CL_INVALID_OPERATION, "link "
	    "status %d, want %d (1: no reply: server died? %s)", st,
	    CL_INVALID_OPERATION, srv_how(&sv));
	st = link_prog(&c, 13, good, 1, "-create-library");
	check("link_failed_good_links", st == CL_SUCCESS, "status %d", st);
	check("link_failed_server_alive", srv_alive(&sv), "server gone "
	    "(%s); see %s/stderr", srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "link_failed_server_stop");
}

/*
 * LinkProgram of an input made in another context of the session: the
 * runtime linked it unchecked (PoCL does), making a program of one
 * context from another's; the server answers CL_INVALID_PROGRAM (the
 * spec's code for an input that is no valid program of the link; libvcl
 * checks it first). The rule is applied device by device of the link:
 * a link for the listed device its inputs were compiled for works.
 */
static void
test_link_context(void)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	bm = VCL__BUILD_PROGRAM__INIT;
	Vcl__LinkProgram	lm = VCL__LINK_PROGRAM__INIT;
	struct srv		sv;
	struct conn		c;
	uint64_t		both[2] = { 10, 20 }, other[1] = { 20 };
	uint64_t		mine[2] = { 10, 11 };
	uint32_t		dev0 = 0;
	int			st;

	if (!srv_start(&sv, "link_ctx_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("link_ctx_session", conn_session(&c, &sv) == 0 &&
	    create_context(&c, 1) == 0 && create_context(&c, 2) == 0,
	    "no session"))
		goto out;
	check("link_ctx_compile", compile_prog(&c, 10,
	    "int h(int x) { return x + 1; }\n") == CL_SUCCESS &&
	    compile_prog(&c, 11, "int h(int x);\n"
	    "kernel void k(global int *p) { p[0] = h(p[0]); }\n") ==
	    CL_SUCCESS, "a good compile failed");
	/* Program 20 compiled in context 2. */
	bm.program = 20;
	bm.has_compile = bm.compile = 1;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &bm;
	check("link_ctx_compile_other", create_program(&c, 20, 2,
	    "int g(int x) { return x * 2; }\n") == 0 && raw_status(&c, &r) ==
	    CL_SUCCESS, "a good compile in context 2 failed");
	st = link_prog(&c, 30, both, 2, "-create-library");
	check("link_ctx_mixed_refused", st == CL_INVALID_PROGRAM, "link in "
	    "context 1 with an input of context 2: status %d, want %d", st,
	    CL_INVALID_PROGRAM);
	st = link_prog(&c, 31, other, 1, "-create-library");
	check("link_ctx_other_refused", st == CL_INVALID_PROGRAM, "link in "
	    "context 1 of context 2's program: status %d, want %d", st,
	    CL_INVALID_PROGRAM);
	/* For the listed device its inputs were compiled for: linked. */
	lm.id = 32;
	lm.context = 1;
	lm.n_programs = 2;
	lm.programs = mine;
	lm.n_devices = 1;
	lm.devices = &dev0;
	r.call_case = VCL__REQUEST__CALL_LINK_PROGRAM;
	r.link_program = &lm;
	st = raw_status(&c, &r);
	check("link_ctx_listed_links", st == CL_SUCCESS, "link for device "
	    "0: status %d", st);
	check("link_ctx_kernel", st != CL_SUCCESS || raw_kernel(&c, 40, 32,
	    "k") == 0, "no kernel k in the linked program");
	check("link_ctx_server_alive", srv_alive(&sv), "server gone "
	    "(%s); see %s/stderr", srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "link_ctx_server_stop");
}

/*
 * A server with nvspy preloaded (VCL_TEST_NVSPY_LIB): calls that took
 * NVIDIA's runtime down abort PoCL's too. Returns 1 when it is up.
 */
static int
nvspy_start(struct srv *sv, const char *name)
{
	return (srv_start_preload(sv, name, getenv("VCL_TEST_NVSPY_LIB"),
	    "VCL_TEST_NVSPY_LIB", NULL));
}

/*
 * LinkProgram of an executable (a program built, not compiled) with a
 * compiled object: the specification names CL_INVALID_OPERATION, and
 * NVIDIA's linker aborted the server (as nvspy's does). The server
 * answers the error without calling the runtime, and a link of good
 * inputs still works.
 */
static void
test_link_exe_input(void)
{
	struct srv	sv;
	struct conn	c;
	uint64_t	mixed[2] = { 10, 14 }, good[1] = { 10 };
	int		st;

	c.fd = -1;
	if (!nvspy_start(&sv, "link_exe_server_start"))
		return;
	if (!check("link_exe_session", conn_session(&c, &sv) == 0 &&
	    create_context(&c, 1) == 0, "no session"))
		goto out;
	check("link_exe_compile", compile_prog(&c, 10,
	    "int h(int x) { return x + 1; }\n") == CL_SUCCESS,
	    "a good compile failed");
	check("link_exe_build", create_program(&c, 14, 1,
	    "__kernel void k(__global int *p) { p[0] = 1; }\n") == 0 &&
	    raw_build(&c, 14, NULL) == CL_SUCCESS, "a good build failed");
	st = link_prog(&c, 12, mixed, 2, NULL);
	check("link_exe_refused", st == CL_INVALID_OPERATION, "link "
	    "status %d, want %d (1: no reply: server died? %s)", st,
	    CL_INVALID_OPERATION, srv_how(&sv));
	st = link_prog(&c, 13, good, 1, "-create-library");
	check("link_exe_good_links", st == CL_SUCCESS, "status %d", st);
	check("link_exe_server_alive", srv_alive(&sv), "server gone "
	    "(%s); see %s/stderr", srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "link_exe_server_stop");
}

/*
 * An empty source builds to a program with no kernel; NVIDIA's runtime
 * crashed when asked that program's kernel names (as nvspy's does),
 * which the server asks after every build and a client may ask by
 * GetInfo: both are answered "" without asking.
 */
static void
test_empty_names(void)
{
	struct srv	sv;
	struct conn	c;
	int		st;

	c.fd = -1;
	if (!nvspy_start(&sv, "empty_names_server_start"))
		return;
	if (!check("empty_names_session", conn_session(&c, &sv) == 0 &&
	    create_context(&c, 1) == 0 && create_program(&c, 20, 1, "") == 0,
	    "no session, context or empty program"))
		goto out;
	st = raw_build(&c, 20, NULL);
	check("empty_names_build", st == CL_SUCCESS, "build status %d (1: no "
	    "reply: server died? %s)", st, srv_how(&sv));
	st = get_info_status(&c, VCL__GET_INFO__WHAT__PROGRAM, 20,
	    CL_PROGRAM_KERNEL_NAMES);
	check("empty_names_info", st == CL_SUCCESS, "GetInfo status %d (1: "
	    "no reply: server died? %s)", st, srv_how(&sv));
	check("empty_names_server_alive", srv_alive(&sv), "server gone "
	    "(%s); see %s/stderr", srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "empty_names_server_stop");
}

/* FillBuffer of a 256-byte buffer on queue 2, no event; then a finish. */
static int
fill_status(struct conn *c, const void *pat, size_t len, uint64_t off,
    uint64_t size)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__FillBuffer	m = VCL__FILL_BUFFER__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = 2;
	m.q = &e;
	m.mem = 3;
	m.pattern.data = (uint8_t *)pat;
	m.pattern.len = len;
	m.offset = off;
	m.size = size;
	r.seq = ++c->seq;
	r.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
	r.fill_buffer = &m;
	if (send_req(c, &r, NULL, 0) != 0)
		return (1);
	return (raw_finish(c, 2));
}

/*
 * FillBuffer's pattern and range are checked on the server as the
 * specification says (the client library checks them too, a raw client
 * need not): no pattern, one of 3 or 256 bytes, an offset or size it does
 * not divide, a range past the buffer are CL_INVALID_VALUE at the next
 * finish. NVIDIA's runtime crashed on a fill with no pattern (as nvspy's
 * does); a good fill still runs.
 */
static void
test_fill_checks(void)
{
	static const struct {
		size_t		len;
		uint64_t	off, size;
	} bad[] = {
		{ 0, 0, 16 }, { 3, 0, 12 }, { 256, 0, 256 }, { 4, 2, 16 },
		{ 4, 0, 6 }, { 4, 252, 8 }, { 4, 256, 4 },
	};
	uint8_t		pat[256];
	struct srv	sv;
	struct conn	c;
	size_t		i;
	int		st;

	c.fd = -1;
	memset(pat, 7, sizeof pat);
	if (!nvspy_start(&sv, "fill_checks_server_start"))
		return;
	if (!check("fill_checks_setup", conn_session(&c, &sv) == 0 &&
	    create_context(&c, 1) == 0 && create_queue(&c, 2, 1) == 0 &&
	    create_buffer(&c, 3, 1, 256, NULL, 0) == 0, "no session, queue "
	    "or buffer"))
		goto out;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		st = fill_status(&c, bad[i].len > 0 ? pat : NULL, bad[i].len,
		    bad[i].off, bad[i].size);
		check("fill_checks_refused", st == CL_INVALID_VALUE, "pattern "
		    "%zu, offset %llu, size %llu: %d (1: no reply: server "
		    "died? %s)", bad[i].len, (unsigned long long)bad[i].off,
		    (unsigned long long)bad[i].size, st, srv_how(&sv));
	}
	st = fill_status(&c, pat, 4, 0, 256);
	check("fill_checks_good", st == CL_SUCCESS, "a good fill: %d", st);
	check("fill_checks_server_alive", srv_alive(&sv), "server gone "
	    "(%s); see %s/stderr", srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "fill_checks_server_stop");
}

static const struct test tests[] = {
	{ "queue_props",	test_queue_props,	60 },
	{ "copy_rect_sub",	test_copy_rect_sub,	60 },
	{ "link_failed_input",	test_link_failed_input,	60 },
	{ "link_exe_input",	test_link_exe_input,	60 },
	{ "link_context",	test_link_context,	60 },
	{ "empty_names",	test_empty_names,	60 },
	{ "fill_checks",	test_fill_checks,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
