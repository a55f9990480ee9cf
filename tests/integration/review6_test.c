/* review6_test.c - regressions: programs, fills, reads and images attacked. */
#include "rawproto.h"

#define BATCH_MAX	8

/*
 * Send requests in one write, so that the server reads them in one batch
 * (nothing a worker finishes meanwhile runs between them). Each gets the
 * connection's next seq. Returns 0, or -1.
 */
static int
send_batch(struct conn *c, Vcl__Request **rs, size_t n)
{
	struct vcl_buf	b[BATCH_MAX];
	struct iovec	iov[BATCH_MAX];
	size_t		i, made = 0;
	int		rc = -1;

	if (n > BATCH_MAX)
		return (-1);
	for (i = 0; i < n; i++, made++) {
		memset(&b[i], 0, sizeof b[i]);
		rs[i]->seq = ++c->seq;
		if (vcl_buf_pack(&b[i], &rs[i]->base, 0) != 0)
			goto out;
		iov[i].iov_base = b[i].data;
		iov[i].iov_len = b[i].len;
	}
	rc = vcl_io_writev_full(c->fd, iov, (int)n);
out:
	for (i = 0; i < made; i++)
		vcl_buf_free(&b[i]);
	return (rc);
}

/*
 * Wait for the replies to seqs a and b (either order, notifications
 * skipped): their statuses, 1 for one that never came. b may be a request
 * with no reply: its status stays 1 once a's came.
 */
static void
recv_two(struct conn *c, uint64_t a, int *sa, uint64_t b, int *sb)
{
	struct reply	rp;
	int		i;

	*sa = *sb = 1;
	for (i = 0; i < 1000 && *sa == 1; i++) {
		if (recv_msg(c, &rp) != 0)
			return;
		if (rp.r != NULL && rp.r->seq == a)
			*sa = rp.r->status;
		else if (rp.r != NULL && rp.r->seq == b)
			*sb = rp.r->status;
		reply_free(&rp);
	}
}

/* CreateProgram of src as id, then BuildProgram{compile}: its status. */
static int
compile_prog(struct conn *c, uint64_t id, const char *src)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	m = VCL__BUILD_PROGRAM__INIT;

	if (create_program(c, id, 1, src) != 0)
		return (1);
	m.program = id;
	m.has_compile = m.compile = 1;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &m;
	return (raw_status(c, &r));
}

static const char lib_src[] = "int h(int x) { return x + 1; }\n";

/*
 * A build (or compile) of a program that a link still running has among
 * its inputs: the linker reads the input while the build replaces its
 * binary by an executable (NVIDIA's linker aborts on one). The build is
 * refused (CL_INVALID_OPERATION) while the link runs, and works once it
 * is done; an input released during the link, its id reused for another
 * program, leaves that program free to build.
 */
static void
test_link_input_busy(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__Request		 lr = VCL__REQUEST__INIT;
	Vcl__Request		 br = VCL__REQUEST__INIT;
	Vcl__Request		 rr = VCL__REQUEST__INIT;
	Vcl__Request		 cr = VCL__REQUEST__INIT;
	Vcl__Request		*batch[3];
	Vcl__LinkProgram	 lm = VCL__LINK_PROGRAM__INIT;
	Vcl__BuildProgram	 bm = VCL__BUILD_PROGRAM__INIT;
	Vcl__Release		 rm = VCL__RELEASE__INIT;
	Vcl__CreateProgram	 cm = VCL__CREATE_PROGRAM__INIT;
	uint64_t		 in[1];
	int			 sl, sb, compile;

	c.fd = -1;
	if (!srv_start(&sv, "link_busy_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("link_busy_session", conn_session(&c, &sv) == 0 &&
	    create_context(&c, 1) == 0, "no session"))
		goto out;
	lm.context = 1;
	lm.n_programs = 1;
	lm.programs = in;
	lm.options = (char *)"-create-library";
	lr.call_case = VCL__REQUEST__CALL_LINK_PROGRAM;
	lr.link_program = &lm;
	br.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	br.build_program = &bm;
	/* A build, then a compile, of the input right behind the link. */
	for (compile = 0; compile < 2; compile++) {
		in[0] = 10 + compile;
		lm.id = 20 + compile;
		bm.program = in[0];
		bm.has_compile = bm.compile = compile;
		if (!check("link_busy_compile", compile_prog(&c, in[0],
		    lib_src) == CL_SUCCESS, "a good compile failed"))
			goto out;
		batch[0] = &lr;
		batch[1] = &br;
		if (send_batch(&c, batch, 2) != 0)
			break;
		recv_two(&c, lr.seq, &sl, br.seq, &sb);
		check("link_busy_linked", sl == CL_SUCCESS, "%s: link status "
		    "%d (1: no reply: server died? %s)", compile ? "compile" :
		    "build", sl, srv_how(&sv));
		check("link_busy_refused", sb == CL_INVALID_OPERATION, "%s of "
		    "an input while its link runs: status %d, want %d",
		    compile ? "compile" : "build", sb, CL_INVALID_OPERATION);
		check("link_busy_after", raw_status(&c, &br) == CL_SUCCESS,
		    "%s once the link is done failed",
		    compile ? "compile" : "build");
	}
	/* The input released during the link, its id made another program. */
	in[0] = 12;
	lm.id = 22;
	if (!check("link_busy_compile2", compile_prog(&c, in[0], lib_src) ==
	    CL_SUCCESS, "a good compile failed"))
		goto out;
	rm.kind = VCL__KIND__KIND_PROGRAM;
	rm.id = in[0];
	rr.call_case = VCL__REQUEST__CALL_RELEASE;
	rr.release = &rm;
	cm.id = in[0];
	cm.context = 1;
	cm.source.data = (uint8_t *)lib_src;
	cm.source.len = strlen(lib_src);
	cr.call_case = VCL__REQUEST__CALL_CREATE_PROGRAM;
	cr.create_program = &cm;
	batch[0] = &lr;
	batch[1] = &rr;
	batch[2] = &cr;
	if (send_batch(&c, batch, 3) == 0) {
		recv_two(&c, lr.seq, &sl, rr.seq, &sb);
		check("link_busy_released_linked", sl == CL_SUCCESS, "link "
		    "status %d", sl);
	}
	bm.program = in[0];
	bm.has_compile = bm.compile = 0;
	check("link_busy_reused_builds", raw_status(&c, &br) == CL_SUCCESS,
	    "the program under a reused id cannot build");
	check("link_busy_server_alive", srv_alive(&sv), "server gone (%s); "
	    "see %s/stderr", srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "link_busy_server_stop");
}

/*
 * Send a link of one compiled input and other, a request on that input,
 * in one batch: other is refused while the link runs
 * (CL_INVALID_OPERATION, before the runtime is asked) and answered after
 * (after); what names the thing other asks for.
 */
static void
link_input_during(const char *name, Vcl__Request *other, uint64_t input,
    cl_int after, const char *what)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__Request		 lr = VCL__REQUEST__INIT;
	Vcl__Request		*batch[2];
	Vcl__LinkProgram	 lm = VCL__LINK_PROGRAM__INIT;
	uint64_t		 in[1] = { input };
	char			 n[64];
	int			 sl, so, got;

	c.fd = -1;
	snprintf(n, sizeof n, "%s_server_start", name);
	if (!srv_start(&sv, n, "127.0.0.1:0", NULL))
		return;
	snprintf(n, sizeof n, "%s_session", name);
	if (!check(n, conn_session(&c, &sv) == 0 && create_context(&c, 1) ==
	    0 && compile_prog(&c, in[0], lib_src) == CL_SUCCESS,
	    "no session or a good compile failed"))
		goto out;
	lm.context = 1;
	lm.n_programs = 1;
	lm.programs = in;
	lm.id = 20;
	lm.options = (char *)"-create-library";
	lr.call_case = VCL__REQUEST__CALL_LINK_PROGRAM;
	lr.link_program = &lm;
	batch[0] = &lr;
	batch[1] = other;
	snprintf(n, sizeof n, "%s_sent", name);
	if (!check(n, send_batch(&c, batch, 2) == 0, "send failed"))
		goto out;
	recv_two(&c, lr.seq, &sl, other->seq, &so);
	/* The link's reply may come first: the other's is still due. */
	if (sl != 1 && so == 1)
		recv_two(&c, other->seq, &so, lr.seq, &sl);
	snprintf(n, sizeof n, "%s_linked", name);
	check(n, sl == CL_SUCCESS, "link status %d (1: no reply: server "
	    "died? %s)", sl, srv_how(&sv));
	snprintf(n, sizeof n, "%s_refused", name);
	check(n, so == CL_INVALID_OPERATION, "%s of an input while its link "
	    "runs: status %d, want %d", what, so, CL_INVALID_OPERATION);
	snprintf(n, sizeof n, "%s_after", name);
	got = raw_status(&c, other);
	check(n, got == after, "%s once the link is done: status %d, want "
	    "%d", what, got, after);
	snprintf(n, sizeof n, "%s_server_alive", name);
	check(n, srv_alive(&sv), "server gone (%s); see %s/stderr",
	    srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	snprintf(n, sizeof n, "%s_server_stop", name);
	srv_stop(&sv, n);
}

/*
 * A specialization constant set on a program a link still running has
 * among its inputs: the linker reads the input while the runtime changes
 * it. Refused (CL_INVALID_OPERATION) before the runtime is asked, as a
 * build or compile of it is; once the link is done the runtime is asked
 * again (PoCL has no IL here: CL_INVALID_PROGRAM, the program is from
 * source).
 */
static void
test_link_input_spec(void)
{
	Vcl__Request		 sr = VCL__REQUEST__INIT;
	Vcl__SetSpecConstant	 sm = VCL__SET_SPEC_CONSTANT__INIT;
	uint32_t		 v = 7;

	sm.program = 10;
	sm.spec_id = 1;
	sm.value.data = (uint8_t *)&v;
	sm.value.len = sizeof v;
	sr.call_case = VCL__REQUEST__CALL_SET_SPEC_CONSTANT;
	sr.set_spec_constant = &sm;
	link_input_during("link_spec", &sr, 10, CL_INVALID_PROGRAM,
	    "constant");
}

/*
 * The binary of a program a link still running has among its inputs
 * (GetBinary): the worker asks the runtime for the input's binary while
 * the linker reads it. Refused (CL_INVALID_OPERATION) as a build, compile
 * or specialization constant of it is, before the runtime is asked; once
 * the link is done the binary is answered.
 */
static void
test_link_input_binary(void)
{
	Vcl__Request		 gr = VCL__REQUEST__INIT;
	Vcl__GetBinary		 gm = VCL__GET_BINARY__INIT;

	gm.program = 10;
	gm.device = 0;
	gr.call_case = VCL__REQUEST__CALL_GET_BINARY;
	gr.get_binary = &gm;
	link_input_during("link_binary", &gr, 10, CL_SUCCESS, "binary");
}

static const char ifdef_src[] = "#ifdef K\n"
    "__kernel void k(__global int *p) { p[0] = 1; }\n"
    "#endif\n"
    "int h(int x) { return x + 1; }\n";

/*
 * A program's kernel count and names asked (GetInfo, as only a raw client
 * does) while a rebuild of it runs on a worker, one that leaves it no
 * kernel: the server's answer could take the count from before the
 * rebuild and the names from after it (NVIDIA's runtime crashed asked the
 * names of a program with no kernel). Both are CL_INVALID_PROGRAM_EXECUTABLE
 * while the build runs, and are answered once it is done.
 */
static void
test_names_rebuild(void)
{
	static const uint32_t	 params[] = { CL_PROGRAM_KERNEL_NAMES,
				    CL_PROGRAM_NUM_KERNELS };
	struct srv		 sv;
	struct conn		 c;
	Vcl__Request		 br = VCL__REQUEST__INIT;
	Vcl__Request		 gr = VCL__REQUEST__INIT;
	Vcl__Request		*batch[2];
	Vcl__BuildProgram	 bm = VCL__BUILD_PROGRAM__INIT;
	Vcl__GetInfo		 gm = VCL__GET_INFO__INIT;
	size_t			 i;
	int			 sb, sg;

	c.fd = -1;
	if (!srv_start(&sv, "names_rebuild_server_start", "127.0.0.1:0",
	    NULL))
		return;
	if (!check("names_rebuild_session", conn_session(&c, &sv) == 0 &&
	    create_context(&c, 1) == 0 && create_program(&c, 10, 1,
	    ifdef_src) == 0, "no session"))
		goto out;
	bm.program = 10;
	br.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	br.build_program = &bm;
	gm.what = VCL__GET_INFO__WHAT__PROGRAM;
	gm.id = 10;
	gr.call_case = VCL__REQUEST__CALL_GET_INFO;
	gr.get_info = &gm;
	for (i = 0; i < sizeof params / sizeof params[0]; i++) {
		bm.options = (char *)"-DK";
		if (!check("names_rebuild_build", raw_status(&c, &br) ==
		    CL_SUCCESS, "a build with its kernel failed"))
			goto out;
		gm.param = params[i];
		bm.options = NULL;
		batch[0] = &br;
		batch[1] = &gr;
		if (send_batch(&c, batch, 2) != 0)
			break;
		recv_two(&c, br.seq, &sb, gr.seq, &sg);
		check("names_rebuild_rebuilt", sb == CL_SUCCESS, "rebuild "
		    "status %d (1: no reply: server died? %s)", sb,
		    srv_how(&sv));
		check("names_rebuild_refused", sg ==
		    CL_INVALID_PROGRAM_EXECUTABLE, "param %#x asked during "
		    "the rebuild: status %d, want %d", params[i], sg,
		    CL_INVALID_PROGRAM_EXECUTABLE);
		check("names_rebuild_after", get_info_status(&c,
		    VCL__GET_INFO__WHAT__PROGRAM, 10, params[i]) == CL_SUCCESS,
		    "param %#x once the rebuild is done", params[i]);
	}
	check("names_rebuild_server_alive", srv_alive(&sv), "server gone "
	    "(%s); see %s/stderr", srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "names_rebuild_server_stop");
}

/* CreateImage{id, context 1} of RGBA8 of type, width w, height h, over buf. */
static int
image_new(struct conn *c, uint64_t id, uint32_t type, uint64_t w,
    uint64_t h, uint64_t buf)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateImage	m = VCL__CREATE_IMAGE__INIT;

	m.id = id;
	m.context = 1;
	m.flags = CL_MEM_READ_WRITE;
	m.order = CL_RGBA;
	m.data_type = CL_UNSIGNED_INT8;
	m.type = type;
	m.width = w;
	m.has_height = 1;
	m.height = h;
	m.has_has_data = 1;
	m.has_buffer = buf != 0;
	m.buffer = buf;
	r.call_case = VCL__REQUEST__CALL_CREATE_IMAGE;
	r.create_image = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * An image named where a buffer must be: ReadBuffer, FillBuffer,
 * CopyBuffer (either side) are the specification's CL_INVALID_MEM_OBJECT
 * and a 1D image buffer over an image CL_INVALID_IMAGE_DESCRIPTOR, checked
 * by the server as CopyImageBuffer's buffer is: PoCL read an image's
 * storage as a buffer's; a buffer still works.
 */
static void
test_image_as_buffer(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct reply		 rp;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__FillBuffer		 fm = VCL__FILL_BUFFER__INIT;
	Vcl__CopyBuffer		 cm = VCL__COPY_BUFFER__INIT;
	Vcl__Enqueue		 e = VCL__ENQUEUE__INIT;
	uint32_t		 pat = 5;
	int			 st, i;

	c.fd = -1;
	if (!srv_start(&sv, "image_buf_server_start", "127.0.0.1:0", NULL))
		return;
	/* Image 3: 8 x 8 RGBA8, 256 bytes; buffer 4: 256 bytes. */
	if (!check("image_buf_setup", conn_session(&c, &sv) == 0 &&
	    create_context(&c, 1) == 0 && create_queue(&c, 2, 1) == 0 &&
	    image_new(&c, 3, CL_MEM_OBJECT_IMAGE2D, 8, 8, 0) == 0 &&
	    create_buffer(&c, 4, 1, 256, NULL, 0) == 0, "no session"))
		goto out;
	st = 1;
	if (read_buffer(&c, 2, 3, 256, &rp) == 0) {
		st = rp.r->status;
		reply_free(&rp);
	}
	check("image_buf_read", st == CL_INVALID_MEM_OBJECT, "ReadBuffer of "
	    "an image: %d, want %d (1: no reply: server died? %s)", st,
	    CL_INVALID_MEM_OBJECT, srv_how(&sv));
	e.queue = 2;
	fm.q = &e;
	fm.mem = 3;
	fm.pattern.data = (uint8_t *)&pat;
	fm.pattern.len = sizeof pat;
	fm.size = 256;
	r.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
	r.fill_buffer = &fm;
	st = send_req(&c, &r, NULL, 0) == 0 ? raw_finish(&c, 2) : 1;
	check("image_buf_fill", st == CL_INVALID_MEM_OBJECT, "FillBuffer of "
	    "an image: %d, want %d", st, CL_INVALID_MEM_OBJECT);
	cm.q = &e;
	cm.size = 256;
	r.call_case = VCL__REQUEST__CALL_COPY_BUFFER;
	r.copy_buffer = &cm;
	for (i = 0; i < 2; i++) {
		cm.src = i == 0 ? 3 : 4;
		cm.dst = i == 0 ? 4 : 3;
		st = send_req(&c, &r, NULL, 0) == 0 ? raw_finish(&c, 2) : 1;
		check("image_buf_copy", st == CL_INVALID_MEM_OBJECT,
		    "CopyBuffer %s an image: %d, want %d", i == 0 ? "from" :
		    "to", st, CL_INVALID_MEM_OBJECT);
	}
	/* A 1D image buffer of 64 pixels over the image. */
	st = image_new(&c, 5, CL_MEM_OBJECT_IMAGE1D_BUFFER, 64, 0, 3) == 0 ?
	    get_info_status(&c, VCL__GET_INFO__WHAT__MEM, 5, CL_MEM_SIZE) : 1;
	check("image_buf_1d_over_image", st == CL_INVALID_IMAGE_DESCRIPTOR,
	    "a 1D image buffer over an image: %d, want %d", st,
	    CL_INVALID_IMAGE_DESCRIPTOR);
	st = 1;
	if (read_buffer(&c, 2, 4, 256, &rp) == 0) {
		st = rp.r->status;
		reply_free(&rp);
	}
	check("image_buf_buffer_reads", st == CL_SUCCESS, "ReadBuffer of a "
	    "buffer: %d", st);
	check("image_buf_server_alive", srv_alive(&sv), "server gone (%s); "
	    "see %s/stderr", srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "image_buf_server_stop");
}

static const struct test tests[] = {
	{ "link_input_busy",	test_link_input_busy,	60 },
	{ "link_input_spec",	test_link_input_spec,	60 },
	{ "link_input_binary",	test_link_input_binary,	60 },
	{ "names_rebuild",	test_names_rebuild,	60 },
	{ "image_as_buffer",	test_image_as_buffer,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
