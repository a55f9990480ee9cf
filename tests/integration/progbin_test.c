/* progbin_test.c - program binaries, compile and link over the raw protocol. */

/*
 * Raw-protocol tests through a real vclserver on PoCL: CreateProgramFrom,
 * GetBinary, LinkProgram, BuildProgram{compile} and SetSpecConstant with
 * hostile input (device lists and binaries that do not match, ids of
 * other sessions or of other kinds, too many inputs, options off the
 * list) get their CL_INVALID_* and leave nothing behind; a binary round
 * trip works; a program linked from compiled programs knows the size of
 * its by-value struct arguments (probed over its inputs).
 */

#include <dirent.h>

#include "rawproto.h"

#define CTX	1


/* A kernel with a struct by value (20 bytes on PoCL's CPU device). */
static const char	src_pair[] =
    "typedef struct { int a; char pad[9]; int b; } pb_pair;\n"
    "__kernel void pb_run(__global int *o, pb_pair s)\n"
    "{ o[get_global_id(0)] = s.a + s.b; }\n";

/* BuildProgram{program, compile?}, headers h (dir 0); rp gets the reply. */
static int
build(struct conn *c, uint64_t id, int compile, const char *opts,
    const char *const *h, size_t nh, struct reply *rp)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	 m = VCL__BUILD_PROGRAM__INIT;
	Vcl__Header		*hv = NULL, **hp = NULL;
	size_t			 i;
	int			 rc;

	if (nh > 0 && ((hv = calloc(nh, sizeof *hv)) == NULL ||
	    (hp = calloc(nh, sizeof *hp)) == NULL)) {
		free(hv);
		return (-1);
	}
	for (i = 0; i < nh; i++) {
		vcl__header__init(&hv[i]);
		hv[i].name = (char *)h[2 * i];
		hv[i].data.data = (uint8_t *)h[2 * i + 1];
		hv[i].data.len = strlen(h[2 * i + 1]);
		hp[i] = &hv[i];
	}
	m.program = id;
	m.options = (char *)opts;
	m.headers = hp;
	m.n_headers = nh;
	m.has_compile = compile;
	m.compile = compile;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &m;
	rc = call(c, &r, NULL, 0, rp);
	free(hv);
	free(hp);
	return (rc);
}

/* CreateProgramFrom with binaries (nb of them) for devs; status or -1000. */
static int
from_binaries(struct conn *c, uint64_t id, uint64_t ctx, uint32_t *devs,
    size_t nd, ProtobufCBinaryData *bins, size_t nb, int32_t *st0)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateProgramFrom	 m = VCL__CREATE_PROGRAM_FROM__INIT;
	struct reply		 rp;
	int			 status;

	m.id = id;
	m.context = ctx;
	m.devices = devs;
	m.n_devices = nd;
	m.binaries = bins;
	m.n_binaries = nb;
	r.call_case = VCL__REQUEST__CALL_CREATE_PROGRAM_FROM;
	r.create_program_from = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1000);
	status = rp.r->status;
	if (st0 != NULL)
		*st0 = rp.r->program != NULL &&
		    rp.r->program->n_binary_status > 0 ?
		    rp.r->program->binary_status[0] : 1;
	reply_free(&rp);
	return (status);
}

/* GetBinary{program, device}: its status (-1000: no reply), bytes in rp. */
static int
get_binary(struct conn *c, uint64_t prog, uint32_t dev, struct reply *rp)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetBinary	m = VCL__GET_BINARY__INIT;

	m.program = prog;
	m.device = dev;
	r.call_case = VCL__REQUEST__CALL_GET_BINARY;
	r.get_binary = &m;
	if (call(c, &r, NULL, 0, rp) != 0)
		return (-1000);
	return (rp->r->status);
}

/* LinkProgram{id, ctx, programs, options}: its status, or -1000. */
static int
link_progs(struct conn *c, uint64_t id, uint64_t ctx, uint64_t *progs,
    size_t n, const char *opts, uint32_t *devs, size_t nd)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__LinkProgram	 m = VCL__LINK_PROGRAM__INIT;
	struct reply		 rp;
	int			 status;

	m.id = id;
	m.context = ctx;
	m.programs = progs;
	m.n_programs = n;
	m.options = (char *)opts;
	m.devices = devs;
	m.n_devices = nd;
	r.call_case = VCL__REQUEST__CALL_LINK_PROGRAM;
	r.link_program = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1000);
	status = rp.r->status;
	reply_free(&rp);
	return (status);
}

/* CreateKernel{id, prog, name}: the by-value size of arg, or -status. */
static long
kernel_arg_size(struct conn *c, uint64_t id, uint64_t prog, const char *name,
    uint32_t arg)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateKernel	 m = VCL__CREATE_KERNEL__INIT;
	struct reply		 rp;
	long			 v;

	m.id = id;
	m.program = prog;
	m.name = (char *)name;
	r.call_case = VCL__REQUEST__CALL_CREATE_KERNEL;
	r.create_kernel = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1000);
	if (rp.r->status != CL_SUCCESS || rp.r->kernels == NULL ||
	    rp.r->kernels->n_kernels != 1 ||
	    rp.r->kernels->kernels[0]->n_arg_size <= arg)
		v = rp.r->status != CL_SUCCESS ? -(long)-rp.r->status : -1;
	else
		v = rp.r->kernels->kernels[0]->arg_size[arg];
	reply_free(&rp);
	return (v);
}

/* A server and a session with a context; 0 when none. */
static int
start(struct srv *sv, struct conn *c, const char *name)
{
	if (!srv_start(sv, name, "127.0.0.1:0", NULL))
		return (0);
	if (!check(name, conn_session(c, sv) == 0 && create_context(c, CTX) ==
	    0, "no session")) {
		srv_stop(sv, "server_exit");
		return (0);
	}
	return (1);
}

/* Release ids from..to of kind, then check the server holds nothing. */
static void
settle(struct conn *c, const char *name)
{
	Vcl__StatsResult	st = VCL__STATS_RESULT__INIT;

	check(name, wait_empty(c, &st) == 0, "objects %llu bytes %llu left",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
}

/* A binary round trip, and binaries, devices and modes that do not fit. */
static void
test_binaries(void)
{
	const char *const	 trust[] = { "--trust-binaries", NULL };
	struct srv		 sv, sv2;
	struct conn		 c, c2;
	struct reply		 rp;
	ProtobufCBinaryData	 bin[2] = { { 0, NULL }, { 0, NULL } };
	long			 size;
	static uint8_t		 junk[4096];
	uint32_t		 devs[70];
	int32_t			 st = 1;
	size_t			 i;
	int			 rc;

	if (!start(&sv, &c, "binaries_server_start"))
		return;
	memset(devs, 0, sizeof devs);
	memset(junk, 0x5a, sizeof junk);
	if (create_program(&c, 100, CTX, src_pair) == 0 &&
	    build(&c, 100, 0, NULL, NULL, 0, &rp) == 0) {
		check("binaries_build", rp.r->status == CL_SUCCESS,
		    "status %d", rp.r->status);
		reply_free(&rp);
	}
	rc = get_binary(&c, 100, 0, &rp);
	if (check("binaries_get", rc == CL_SUCCESS && rp.r->program != NULL &&
	    rp.r->program->has_binary && rp.r->program->binary.len > 0,
	    "status %d", rc) && rc == CL_SUCCESS) {
		bin[0].len = rp.r->program->binary.len;
		bin[0].data = malloc(bin[0].len);
		if (bin[0].data != NULL)
			memcpy(bin[0].data, rp.r->program->binary.data,
			    bin[0].len);
	}
	if (rc != -1000)
		reply_free(&rp);
	if (bin[0].data == NULL)
		goto out;
	rc = from_binaries(&c, 101, CTX, devs, 1, bin, 1, &st);
	check("binaries_round_trip", rc == CL_SUCCESS && st == CL_SUCCESS,
	    "status %d, binary status %d", rc, st);
	if (build(&c, 101, 0, NULL, NULL, 0, &rp) == 0) {
		check("binaries_round_trip_build", rp.r->status == CL_SUCCESS,
		    "status %d", rp.r->status);
		reply_free(&rp);
	}
	/* A binary this server made: its struct's size is its own record. */
	size = kernel_arg_size(&c, 102, 101, "pb_run", 1);
	check("binaries_struct_size_recorded", size == 20, "a by-value struct "
	    "of a program from this server's binary: size %ld, want 20", size);
	/*
	 * Another server never made it: a runtime binary may hold native
	 * code, so it is refused, unless that server trusts its clients'
	 * binaries; then the struct's size is unknown there (refused).
	 */
	if (srv_start(&sv2, "binaries_server2_start", "127.0.0.1:0", NULL)) {
		if (check("binaries_server2_session", conn_session(&c2, &sv2) ==
		    0 && create_context(&c2, CTX) == 0, "no session")) {
			st = 1;
			rc = from_binaries(&c2, 101, CTX, devs, 1, bin, 1, &st);
			check("binaries_foreign_refused", rc ==
			    CL_INVALID_BINARY && st == CL_INVALID_BINARY,
			    "a binary this server did not make: status %d, "
			    "binary status %d", rc, st);
			conn_close(&c2);
		}
		srv_stop(&sv2, "binaries_server2_exit");
	}
	if (srv_start(&sv2, "binaries_server3_start", "127.0.0.1:0",
	    trust)) {
		if (check("binaries_server3_session", conn_session(&c2, &sv2) ==
		    0 && create_context(&c2, CTX) == 0, "no session")) {
			rc = from_binaries(&c2, 101, CTX, devs, 1, bin, 1, &st);
			check("binaries_trusted_create", rc == CL_SUCCESS,
			    "status %d", rc);
			if (build(&c2, 101, 0, NULL, NULL, 0, &rp) == 0)
				reply_free(&rp);
			size = kernel_arg_size(&c2, 102, 101, "pb_run", 1);
			check("binaries_struct_size_unknown", size == 0,
			    "a struct of a program from a binary the server "
			    "did not make: size %ld, want 0 (refused)", size);
			conn_close(&c2);
		}
		srv_stop(&sv2, "binaries_server3_exit");
	}

	/* Garbage: CL_INVALID_BINARY, as status too. */
	bin[1].data = junk;
	bin[1].len = sizeof junk;
	st = 1;
	rc = from_binaries(&c, 110, CTX, devs, 1, &bin[1], 1, &st);
	check("binaries_garbage", rc == CL_INVALID_BINARY &&
	    st == CL_INVALID_BINARY, "status %d, binary status %d", rc, st);
	/* Counts that do not match, none, too many devices. */
	check("binaries_count_mismatch", from_binaries(&c, 111, CTX, devs, 2,
	    bin, 1, NULL) == CL_INVALID_VALUE, "1 binary for 2 devices taken");
	check("binaries_no_device", from_binaries(&c, 112, CTX, devs, 0, bin,
	    1, NULL) == CL_INVALID_VALUE, "a binary without device taken");
	check("binaries_too_many", from_binaries(&c, 113, CTX, devs, 70, bin,
	    1, NULL) == CL_INVALID_VALUE, "70 devices taken");
	devs[0] = 999;
	check("binaries_bad_device", from_binaries(&c, 114, CTX, devs, 1, bin,
	    1, NULL) == CL_INVALID_DEVICE, "device 999 taken");
	devs[0] = 0;
	bin[1] = bin[0];
	/* More devices than the node has, or the same one twice. */
	rc = from_binaries(&c, 115, CTX, devs, 2, bin, 2, NULL);
	check("binaries_duplicate_device", rc == CL_INVALID_DEVICE ||
	    rc == CL_INVALID_VALUE, "device 0 twice: status %d", rc);
	bin[1].len = 0;
	check("binaries_empty", from_binaries(&c, 116, CTX, devs, 1, &bin[1],
	    1, NULL) == CL_INVALID_VALUE, "an empty binary taken");
	check("binaries_no_context", from_binaries(&c, 117, 77, devs, 1, bin,
	    1, NULL) == CL_INVALID_CONTEXT, "context 77 taken");
	check("binaries_wrong_kind_context", from_binaries(&c, 118, 100, devs,
	    1, bin, 1, NULL) == CL_INVALID_CONTEXT, "a program as context");

	/* GetBinary of what is not there. */
	check("get_binary_bad_device", get_binary(&c, 100, 999, &rp) ==
	    CL_INVALID_DEVICE, "device 999 answered");
	reply_free(&rp);
	check("get_binary_unknown", get_binary(&c, 4242, 0, &rp) ==
	    CL_INVALID_PROGRAM, "program 4242 answered");
	reply_free(&rp);
	check("get_binary_wrong_kind", get_binary(&c, 102, 0, &rp) ==
	    CL_INVALID_PROGRAM, "a kernel's binary answered");
	reply_free(&rp);
	check("get_binary_failed_program", get_binary(&c, 110, 0, &rp) ==
	    CL_INVALID_BINARY, "a failed program's binary answered");
	reply_free(&rp);

	release(&c, VCL__KIND__KIND_KERNEL, 102);
	for (i = 100; i <= 118; i++)
		if (i != 102)
			release(&c, VCL__KIND__KIND_PROGRAM, i);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "binaries_nothing_left");
out:
	free(bin[0].data);
	conn_close(&c);
	srv_stop(&sv, "binaries_server_exit");
}

/*
 * Compile with a header, link two compiled programs: the linked kernel's
 * struct argument has its size (probed over the inputs). Then links that
 * name other sessions' ids, other kinds, too many or no inputs, bad
 * devices or options.
 */
static void
test_link(void)
{
	static const char *const hdr[] = {
	    "pb/pair.h",
	    "typedef struct { int a; char pad[9]; int b; } pb_pair;\n"
	    "int pb_mul(int, int);\n",
	};
	static const char	 lib[] = "#include \"pb/pair.h\"\n"
	    "int pb_mul(int x, int y) { return x * y; }\n";
	static const char	 main_src[] = "#include \"pb/pair.h\"\n"
	    "__kernel void pb_run(__global int *o, pb_pair s)\n"
	    "{ o[get_global_id(0)] = pb_mul(s.a, s.b); }\n";
	struct srv		 sv;
	struct conn		 c, o;
	struct reply		 rp;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 in[2] = { 200, 201 }, two[2], *many;
	uint32_t		 dev = 999;
	size_t			 i;
	long			 size;

	o.fd = -1;
	if (!start(&sv, &c, "link_server_start"))
		return;
	if (create_program(&c, 200, CTX, lib) == 0 &&
	    build(&c, 200, 1, NULL, hdr, 1, &rp) == 0) {
		check("link_compile_lib", rp.r->status == CL_SUCCESS,
		    "status %d", rp.r->status);
		reply_free(&rp);
	}
	if (create_program(&c, 201, CTX, main_src) == 0 &&
	    build(&c, 201, 1, "-DX=1", hdr, 1, &rp) == 0) {
		check("link_compile_main", rp.r->status == CL_SUCCESS,
		    "status %d", rp.r->status);
		reply_free(&rp);
	}
	/* A compiled program keeps its options and headers: charged. */
	check("link_compiled_kept", stats(&c, &st) == 0 &&
	    st.session_bytes > 0, "session bytes %llu",
	    (unsigned long long)st.session_bytes);
	check("link_ok", link_progs(&c, 202, CTX, in, 2, NULL, NULL, 0) ==
	    CL_SUCCESS, "the link failed");
	size = kernel_arg_size(&c, 203, 202, "pb_run", 1);
	check("link_struct_size", size == 20, "pb_pair of the linked program: "
	    "size %ld, want 20", size);
	/* Two inputs, each with its own struct and kernel. */
	if (create_program(&c, 205, CTX, "typedef struct { int a; char c[5]; } "
	    "px_t;\n__kernel void kx(__global int *o, px_t s) { o[0] = s.a; }"
	    "\n") == 0 && build(&c, 205, 1, NULL, NULL, 0, &rp) == 0)
		reply_free(&rp);
	if (create_program(&c, 206, CTX, "typedef struct { long l; char c; } "
	    "py_t;\n__kernel void ky(__global long *o, py_t s) { o[0] = s.l; }"
	    "\n") == 0 && build(&c, 206, 1, NULL, NULL, 0, &rp) == 0)
		reply_free(&rp);
	two[0] = 205;
	two[1] = 206;
	if (check("link_two_structs", link_progs(&c, 207, CTX, two, 2, NULL,
	    NULL, 0) == CL_SUCCESS, "the link failed")) {
		size = kernel_arg_size(&c, 208, 207, "kx", 1);
		check("link_two_structs_first", size == 12, "px_t: size %ld, "
		    "want 12", size);
		size = kernel_arg_size(&c, 209, 207, "ky", 1);
		check("link_two_structs_second", size == 16, "py_t: size %ld, "
		    "want 16", size);
	}
	check("link_library", link_progs(&c, 204, CTX, in, 1,
	    "-create-library", NULL, 0) == CL_SUCCESS, "no library");

	/* Inputs that are not this session's compiled programs. */
	if (check("link_other_session", conn_session(&o, &sv) == 0 &&
	    create_context(&o, CTX) == 0, "no second session"))
		check("link_other_session_ids", link_progs(&o, 300, CTX, in, 2,
		    NULL, NULL, 0) == CL_INVALID_PROGRAM, "another session's "
		    "programs linked");
	in[1] = CTX;
	check("link_wrong_kind_context", link_progs(&c, 210, CTX, in, 2, NULL,
	    NULL, 0) == CL_INVALID_PROGRAM, "a context linked");
	in[1] = 203;
	check("link_wrong_kind_kernel", link_progs(&c, 211, CTX, in, 2, NULL,
	    NULL, 0) == CL_INVALID_PROGRAM, "a kernel linked");
	in[1] = 211;
	check("link_failed_input", link_progs(&c, 212, CTX, in, 2, NULL, NULL,
	    0) == CL_INVALID_PROGRAM, "a failed link linked");
	in[1] = 201;
	check("link_none", link_progs(&c, 213, CTX, in, 0, NULL, NULL, 0) ==
	    CL_INVALID_VALUE, "a link of nothing");
	if ((many = calloc(1025, sizeof *many)) != NULL) {
		for (i = 0; i < 1025; i++)
			many[i] = 200;
		check("link_too_many", link_progs(&c, 214, CTX, many, 1025,
		    NULL, NULL, 0) == CL_INVALID_VALUE, "1025 inputs taken");
		free(many);
	}
	check("link_bad_device", link_progs(&c, 215, CTX, in, 2, NULL, &dev,
	    1) == CL_INVALID_DEVICE, "device 999 taken");
	check("link_bad_options", link_progs(&c, 216, CTX, in, 2,
	    "-create-library -load /tmp/evil.so", NULL, 0) ==
	    CL_INVALID_LINKER_OPTIONS, "-load taken");
	check("link_no_context", link_progs(&c, 217, 99, in, 2, NULL, NULL,
	    0) == CL_INVALID_CONTEXT, "context 99 taken");
	/* Compile errors: too many headers, a name leaving the directory. */
	{
		const char	**h;
		static const char *const up[] = { "../x.h", "int x;\n" };

		if ((h = calloc(2 * 1025, sizeof *h)) != NULL) {
			for (i = 0; i < 2 * 1025; i++)
				h[i] = i % 2 == 0 ? "h.h" : "";
			if (create_program(&c, 220, CTX, lib) == 0 &&
			    build(&c, 220, 1, NULL, h, 1025, &rp) == 0) {
				check("compile_too_many_headers",
				    rp.r->status == CL_OUT_OF_RESOURCES,
				    "status %d", rp.r->status);
				reply_free(&rp);
			}
			free(h);
		}
		if (build(&c, 220, 1, NULL, up, 1, &rp) == 0) {
			check("compile_header_up", rp.r->status ==
			    CL_INVALID_VALUE, "status %d", rp.r->status);
			reply_free(&rp);
		}
	}
	release(&c, VCL__KIND__KIND_KERNEL, 203);
	release(&c, VCL__KIND__KIND_KERNEL, 208);
	release(&c, VCL__KIND__KIND_KERNEL, 209);
	for (i = 200; i <= 220; i++)
		if (i != 203 && i != 208 && i != 209)
			release(&c, VCL__KIND__KIND_PROGRAM, i);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	if (o.fd != -1) {
		release(&o, VCL__KIND__KIND_PROGRAM, 300);
		release(&o, VCL__KIND__KIND_CONTEXT, CTX);
		conn_close(&o);
	}
	settle(&c, "link_nothing_left");
	conn_close(&c);
	srv_stop(&sv, "link_server_exit");
}

/*
 * SetSpecConstant on a program from source: CL_INVALID_PROGRAM, and the
 * server lives (PoCL 3.1 asserts when asked for one of such a program).
 */
static void
test_spec_constant(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct reply		 rp;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__SetSpecConstant	 m = VCL__SET_SPEC_CONSTANT__INIT;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint32_t		 v = 1;
	int			 rc;

	if (!start(&sv, &c, "spec_server_start"))
		return;
	create_program(&c, 400, CTX, src_pair);
	m.program = 400;
	m.spec_id = 0;
	m.value.data = (uint8_t *)&v;
	m.value.len = sizeof v;
	r.call_case = VCL__REQUEST__CALL_SET_SPEC_CONSTANT;
	r.set_spec_constant = &m;
	rc = call(&c, &r, NULL, 0, &rp);
	if (check("spec_constant_source", rc == 0, "no reply (%s)", rc == 1 ?
	    "closed" : "timeout")) {
		check("spec_constant_source_status", rp.r->status ==
		    CL_INVALID_PROGRAM, "status %d", rp.r->status);
		reply_free(&rp);
	}
	check("spec_constant_server_alive", srv_alive(&sv) &&
	    stats(&c, &st) == 0, "the server died");
	m.program = 401;
	if (call(&c, &r, NULL, 0, &rp) == 0) {
		check("spec_constant_unknown", rp.r->status ==
		    CL_INVALID_PROGRAM, "status %d", rp.r->status);
		reply_free(&rp);
	}
	release(&c, VCL__KIND__KIND_PROGRAM, 400);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "spec_nothing_left");
	conn_close(&c);
	srv_stop(&sv, "spec_server_exit");
}

/* The server's resident memory in KiB (VmRSS), or -1. */
static long
rss_kib(pid_t pid)
{
	char	 path[64], line[256];
	FILE	*f;
	long	 v = -1;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	fclose(f);
	return (v);
}

/*
 * Built-in kernel names the devices lack: CL_INVALID_VALUE, and nothing
 * kept (PoCL 3.1 leaked its copy of refused names: 400 requests of 60 KiB
 * names grew the server by 24 MiB).
 */
static void
test_builtin_names(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct reply		 rp;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateProgramFrom	 m = VCL__CREATE_PROGRAM_FROM__INIT;
	uint32_t		 dev = 0;
	char			*names, *saved = NULL, opts[1024];
	const char		*old;
	long			 before, after;
	int			 i, bad = 0, started;

	if ((names = malloc(60001)) == NULL)
		return;
	memset(names, 'x', 60000);
	names[60000] = '\0';
	/* A sanitized server keeps what it frees a while: not here. */
	if ((old = getenv("ASAN_OPTIONS")) != NULL &&
	    (saved = strdup(old)) == NULL) {
		free(names);
		return;
	}
	snprintf(opts, sizeof opts, "%s%squarantine_size_mb=0:"
	    "thread_local_quarantine_size_kb=0", saved != NULL ? saved : "",
	    saved != NULL && *saved != '\0' ? ":" : "");
	setenv("ASAN_OPTIONS", opts, 1);
	started = start(&sv, &c, "builtin_server_start");
	if (saved != NULL)
		setenv("ASAN_OPTIONS", saved, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(saved);
	if (!started) {
		free(names);
		return;
	}
	m.context = CTX;
	m.devices = &dev;
	m.n_devices = 1;
	m.builtin_kernels = names;
	r.call_case = VCL__REQUEST__CALL_CREATE_PROGRAM_FROM;
	r.create_program_from = &m;
	before = rss_kib(sv.pid);
	for (i = 0; i < 400; i++) {
		m.id = 500 + (uint64_t)i;
		if (call(&c, &r, NULL, 0, &rp) != 0) {
			bad = -1000;
			break;
		}
		if (rp.r->status != CL_INVALID_VALUE)
			bad = rp.r->status;
		reply_free(&rp);
		release(&c, VCL__KIND__KIND_PROGRAM, m.id);
	}
	after = rss_kib(sv.pid);
	check("builtin_unknown_refused", bad == 0, "status %d, want "
	    "CL_INVALID_VALUE", bad);
	check("builtin_unknown_not_kept", before > 0 && after > 0 &&
	    after - before < 12 * 1024, "the server grew by %ld KiB over 400 "
	    "refused names of 60 KB", after - before);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "builtin_nothing_left");
	conn_close(&c);
	srv_stop(&sv, "builtin_server_exit");
	free(names);
}

/* Send CreateProgramFrom{id, ctx, device 0, bin}; its seq, 0 if not sent. */
static uint64_t
from_binary_send(struct conn *c, uint64_t id, ProtobufCBinaryData *bin)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateProgramFrom	 m = VCL__CREATE_PROGRAM_FROM__INIT;
	uint32_t		 dev = 0;

	m.id = id;
	m.context = CTX;
	m.devices = &dev;
	m.n_devices = 1;
	m.binaries = bin;
	m.n_binaries = 1;
	r.call_case = VCL__REQUEST__CALL_CREATE_PROGRAM_FROM;
	r.create_program_from = &m;
	return (send_req(c, &r, NULL, 0) == 0 ? r.seq : 0);
}

/*
 * The answer to seq of a CreateProgramFrom whose binary a child process
 * checks (a process start and runtime set-up: slow on a loaded host):
 * its status, *st0 the binary's; -1000 when none came in two minutes.
 */
static int
from_binary_wait(struct conn *c, uint64_t seq, int32_t *st0)
{
	struct pollfd	pf = { c->fd, POLLIN, 0 };
	struct reply	rp;
	int		status;

	if (seq == 0 || poll(&pf, 1, 120 * 1000) != 1 || recv_msg(c, &rp) != 0)
		return (-1000);
	if (rp.r == NULL || rp.r->seq != seq) {
		reply_free(&rp);
		return (-1000);
	}
	status = rp.r->status;
	*st0 = rp.r->program != NULL && rp.r->program->n_binary_status > 0 ?
	    rp.r->program->binary_status[0] : 1;
	reply_free(&rp);
	return (status);
}

/* CreateProgramFrom{id, CTX, device 0, bin}, checked or not: its status. */
static int
from_binary(struct conn *c, uint64_t id, ProtobufCBinaryData *bin,
    int32_t *st0)
{
	return (from_binary_wait(c, from_binary_send(c, id, bin), st0));
}

/* Processes whose parent is pid (zombies too), or -1. */
static int
children_of(pid_t pid, int *zombies)
{
	DIR		*d;
	struct dirent	*e;
	FILE		*f;
	char		 path[300], line[1024], *p, state;
	int		 ppid, n = 0;

	*zombies = 0;
	if ((d = opendir("/proc")) == NULL)
		return (-1);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(line, sizeof line, f) != NULL &&
		    (p = strrchr(line, ')')) != NULL &&
		    sscanf(p + 1, " %c %d", &state, &ppid) == 2 && ppid == pid) {
			n++;
			*zombies += state == 'Z';
		}
		fclose(f);
	}
	closedir(d);
	return (n);
}

/* Descriptors pid holds open, or -1. */
static int
fds_of(pid_t pid)
{
	DIR		*d;
	struct dirent	*e;
	char		 path[64];
	int		 n = 0;

	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return (-1);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return (n);
}

/* A good binary of src_pair for device 0, made by a server of its own. */
static int
good_binary(ProtobufCBinaryData *bin)
{
	struct srv	sv;
	struct conn	c;
	struct reply	rp;

	bin->data = NULL;
	if (!start(&sv, &c, "checked_maker_start"))
		return (0);
	if (create_program(&c, 100, CTX, src_pair) == 0 &&
	    build(&c, 100, 0, NULL, NULL, 0, &rp) == 0)
		reply_free(&rp);
	if (get_binary(&c, 100, 0, &rp) == CL_SUCCESS &&
	    rp.r->program != NULL && rp.r->program->binary.len > 17 &&
	    (bin->data = malloc(rp.r->program->binary.len)) != NULL) {
		bin->len = rp.r->program->binary.len;
		memcpy(bin->data, rp.r->program->binary.data, bin->len);
	}
	reply_free(&rp);
	conn_close(&c);
	srv_stop(&sv, "checked_maker_exit");
	return (check("checked_good_binary", bin->data != NULL, "no binary"));
}

/*
 * --trust-binaries: a binary the server has not seen pass is made in a
 * child process first. One cut short (PoCL 3.1 asserts on the first 17
 * bytes of a real one), garbage or half of one is CL_INVALID_BINARY and
 * the server and another session live on; an empty one is
 * CL_INVALID_VALUE; a good one is taken, checked once server-wide; no
 * child, zombie or descriptor is left behind.
 */
static void
test_checked(void)
{
	const char *const	 trust[] = { "--trust-binaries", NULL };
	static uint8_t		 junk[4096];
	struct srv		 sv;
	struct conn		 c, o;
	Vcl__StatsResult	 st0 = VCL__STATS_RESULT__INIT;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	ProtobufCBinaryData	 good, bad;
	int32_t			 bs;
	int			 rc, kids, zombies, fds;

	memset(junk, 0x5a, sizeof junk);
	if (!good_binary(&good))
		return;
	o.fd = -1;
	if (!srv_start(&sv, "checked_server_start", "127.0.0.1:0", trust)) {
		free(good.data);
		return;
	}
	if (!check("checked_sessions", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0 && conn_session(&o, &sv) == 0 &&
	    create_context(&o, CTX) == 0 && stats(&o, &st0) == 0, "no "
	    "sessions"))
		goto out;
	fds = fds_of(sv.pid);

	bad.data = good.data;
	bad.len = 17;
	rc = from_binary(&c, 101, &bad, &bs);
	check("checked_cut", rc == CL_INVALID_BINARY && bs ==
	    CL_INVALID_BINARY, "17 bytes of a binary: status %d, binary "
	    "status %d", rc, bs);
	check("checked_cut_server_alive", srv_alive(&sv) && stats(&o, &st) ==
	    0, "the server died (%s)", srv_how(&sv));
	if (!srv_alive(&sv))
		goto out;
	check("checked_cut_counted", st.binary_checks == st0.binary_checks + 1 &&
	    st.binary_checks_failed == st0.binary_checks_failed + 1,
	    "checks %llu failed %llu, before %llu %llu",
	    (unsigned long long)st.binary_checks,
	    (unsigned long long)st.binary_checks_failed,
	    (unsigned long long)st0.binary_checks,
	    (unsigned long long)st0.binary_checks_failed);
	check("checked_cut_same_session", stats(&c, &st) == 0,
	    "the session of the cut binary is gone");
	bad.len = good.len / 2;
	rc = from_binary(&c, 102, &bad, &bs);
	check("checked_half", rc == CL_INVALID_BINARY && bs ==
	    CL_INVALID_BINARY, "half a binary: status %d, binary status %d",
	    rc, bs);
	bad.data = junk;
	bad.len = sizeof junk;
	rc = from_binary(&c, 103, &bad, &bs);
	check("checked_garbage", rc == CL_INVALID_BINARY && bs ==
	    CL_INVALID_BINARY, "garbage: status %d, binary status %d", rc, bs);
	bad.len = 0;
	rc = from_binary(&c, 104, &bad, &bs);
	check("checked_empty", rc == CL_INVALID_VALUE, "an empty binary: "
	    "status %d", rc);
	check("checked_bad_server_alive", srv_alive(&sv) && stats(&o, &st) ==
	    0 && st.binary_checks_failed == st0.binary_checks_failed + 3,
	    "server %s, failed checks %llu (want 3 more than %llu)",
	    srv_how(&sv), (unsigned long long)st.binary_checks_failed,
	    (unsigned long long)st0.binary_checks_failed);
	kids = children_of(sv.pid, &zombies);
	check("checked_bad_reaped", kids == 0 && zombies == 0, "%d children "
	    "of the server left, %d of them zombies", kids, zombies);
	check("checked_bad_no_fd_left", fds > 0 && fds_of(sv.pid) == fds,
	    "descriptors %d, %d before the checks", fds_of(sv.pid), fds);

	/* A good binary: checked once, then taken as it is. */
	rc = from_binary(&c, 110, &good, &bs);
	check("checked_good", rc == CL_SUCCESS && bs == CL_SUCCESS,
	    "status %d, binary status %d", rc, bs);
	check("checked_good_kernel", raw_build(&c, 110, NULL) == CL_SUCCESS &&
	    raw_kernel(&c, 111, 110, "pb_run") == CL_SUCCESS,
	    "no kernel of the checked binary's program");
	check("checked_good_counted", stats(&o, &st) == 0 &&
	    st.binary_checks == st0.binary_checks + 4 &&
	    st.binary_checks_failed == st0.binary_checks_failed + 3,
	    "checks %llu, failed %llu", (unsigned long long)st.binary_checks,
	    (unsigned long long)st.binary_checks_failed);
	rc = from_binary(&o, 120, &good, &bs);
	check("checked_good_other_session", rc == CL_SUCCESS, "status %d", rc);
	rc = from_binary(&c, 112, &good, &bs);
	check("checked_good_again", rc == CL_SUCCESS, "status %d", rc);
	check("checked_good_once", stats(&o, &st) == 0 && st.binary_checks ==
	    st0.binary_checks + 4, "the binary was checked again: %llu "
	    "checks, want %llu", (unsigned long long)st.binary_checks,
	    (unsigned long long)st0.binary_checks + 4);
	kids = children_of(sv.pid, &zombies);
	check("checked_good_reaped", kids == 0, "%d children of the server "
	    "left, %d of them zombies", kids, zombies);

	release(&o, VCL__KIND__KIND_PROGRAM, 120);
	release(&o, VCL__KIND__KIND_CONTEXT, CTX);
	release(&c, VCL__KIND__KIND_KERNEL, 111);
	for (rc = 101; rc <= 112; rc++)
		if (rc <= 104 || rc == 110 || rc == 112)
			release(&c, VCL__KIND__KIND_PROGRAM, (uint64_t)rc);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "checked_nothing_left");
out:
	if (o.fd != -1)
		conn_close(&o);
	conn_close(&c);
	srv_stop(&sv, "checked_server_exit");
	free(good.data);
}

/*
 * A check that does not end (its child held by a latch) is killed past
 * --binary-check-timeout: CL_INVALID_BINARY, the loop serving another
 * session meanwhile, and the binary not remembered as passed.
 */
static void
test_checked_timeout(void)
{
	const char *const	 trust[] = { "--trust-binaries",
	    "--binary-check-timeout", "2", NULL };
	struct srv		 sv;
	struct conn		 c, o;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	ProtobufCBinaryData	 good;
	char			 latch[PATH_MAX];
	uint64_t		 seq;
	int32_t			 bs;
	int			 rc, i, kids, zombies, started;

	if (!good_binary(&good))
		return;
	snprintf(latch, sizeof latch, "/tmp/vcl_bincheck_latch.%d",
	    (int)getpid());
	unlink(latch);
	o.fd = -1;
	setenv("VCL_TEST_BINCHECK_LATCH", latch, 1);
	started = srv_start(&sv, "timeout_server_start", "127.0.0.1:0", trust);
	unsetenv("VCL_TEST_BINCHECK_LATCH");
	if (!started) {
		free(good.data);
		return;
	}
	if (!check("timeout_sessions", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0 && conn_session(&o, &sv) == 0,
	    "no sessions"))
		goto out;
	seq = from_binary_send(&c, 101, &good);
	/* The loop serves the other session while the check runs. */
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(&o, &st) != 0 || st.binary_checks_now == 1)
			break;
		poll_wait();
	}
	check("timeout_loop_free", st.binary_checks_now == 1, "no check "
	    "seen running from another session");
	rc = from_binary_wait(&c, seq, &bs);
	check("timeout_refused", rc == CL_INVALID_BINARY && bs ==
	    CL_INVALID_BINARY, "a check past its timeout: status %d, binary "
	    "status %d", rc, bs);
	kids = children_of(sv.pid, &zombies);
	check("timeout_reaped", srv_alive(&sv) && kids == 0, "server %s, %d "
	    "children left, %d zombies", srv_how(&sv), kids, zombies);
	/* Let checks end: the binary was not remembered, it is checked. */
	if ((i = open(latch, O_CREAT | O_WRONLY, 0600)) != -1)
		close(i);
	rc = from_binary(&c, 102, &good, &bs);
	check("timeout_then_passed", rc == CL_SUCCESS && stats(&o, &st) == 0 &&
	    st.binary_checks == 2, "status %d, %llu checks (want 2)", rc,
	    (unsigned long long)st.binary_checks);
	release(&c, VCL__KIND__KIND_PROGRAM, 101);
	release(&c, VCL__KIND__KIND_PROGRAM, 102);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "timeout_nothing_left");
out:
	unlink(latch);
	if (o.fd != -1)
		conn_close(&o);
	conn_close(&c);
	srv_stop(&sv, "timeout_server_exit");
	free(good.data);
}

/*
 * What a check's child prints reaches neither the server's log nor its
 * verdict: a runtime that writes on its stdout what reads as every
 * binary passing (VCL_TEST_BINCHECK_NOISE: CL_SUCCESS for each, and a
 * line on its stderr), then aborts on the binary (the first 17 bytes of
 * a real one), still fails it: CL_INVALID_BINARY, the server alive, and
 * the line in no log of the server's.
 */
static void
test_checked_noise(void)
{
	const char *const	 trust[] = { "--trust-binaries", NULL };
	static const char	 said[] = "vclserver: error: forged by a binary";
	struct srv		 sv;
	struct conn		 c;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	ProtobufCBinaryData	 good, bad;
	int32_t			 bs = 1;
	int			 rc, started;

	if (!good_binary(&good))
		return;
	setenv("VCL_TEST_BINCHECK_NOISE", said, 1);
	started = srv_start(&sv, "noise_server_start", "127.0.0.1:0", trust);
	unsetenv("VCL_TEST_BINCHECK_NOISE");
	if (!started) {
		free(good.data);
		return;
	}
	if (!check("noise_session", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0, "no session"))
		goto out;
	bad.data = good.data;
	bad.len = 17;
	rc = from_binary(&c, 101, &bad, &bs);
	check("noise_cut_refused", rc == CL_INVALID_BINARY && bs ==
	    CL_INVALID_BINARY, "17 bytes of a binary, the check's child "
	    "printing success: status %d, binary status %d", rc, bs);
	check("noise_server_alive", srv_alive(&sv) && stats(&c, &st) == 0,
	    "the server died (%s)", srv_how(&sv));
	check("noise_not_logged", !srv_stderr_has(&sv, said), "the child's "
	    "stderr reached the server's log");
	if (!srv_alive(&sv))
		goto out;
	release(&c, VCL__KIND__KIND_PROGRAM, 101);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "noise_nothing_left");
out:
	conn_close(&c);
	srv_stop(&sv, "noise_server_exit");
	free(good.data);
}

/*
 * A SIGHUP that changes --binary-check-timeout while a check runs: the
 * check keeps the timeout it started with (2 s, its child held by a
 * latch, killed then: CL_INVALID_BINARY), not the hour the reloaded
 * configuration gives; a check started after the reload passes.
 */
static void
test_checked_reload(void)
{
	struct srv		 sv;
	struct conn		 c, o;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	ProtobufCBinaryData	 good;
	char			 latch[PATH_MAX], conf[PATH_MAX];
	const char		*args[] = { "--trust-binaries", "--config",
	    conf, NULL };
	uint64_t		 seq;
	int32_t			 bs = 1;
	int			 rc, i, zombies, started;
	FILE			*f;

	if (!good_binary(&good))
		return;
	snprintf(latch, sizeof latch, "/tmp/vcl_bincheck_reload.%d",
	    (int)getpid());
	snprintf(conf, sizeof conf, "%s/reload.conf", root);
	unlink(latch);
	c.fd = o.fd = -1;
	if ((f = fopen(conf, "w")) == NULL) {
		check("reload_config", 0, "%s: %s", conf, strerror(errno));
		free(good.data);
		return;
	}
	fprintf(f, "binary-check-timeout 2\n");
	fclose(f);
	setenv("VCL_TEST_BINCHECK_LATCH", latch, 1);
	started = srv_start(&sv, "reload_server_start", "127.0.0.1:0", args);
	unsetenv("VCL_TEST_BINCHECK_LATCH");
	if (!started) {
		free(good.data);
		return;
	}
	if (!check("reload_sessions", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0 && conn_session(&o, &sv) == 0,
	    "no sessions"))
		goto out;
	seq = from_binary_send(&c, 101, &good);
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(&o, &st) != 0 || (st.binary_checks_now == 1 &&
		    children_of(sv.pid, &zombies) == 1))
			break;
		poll_wait();
	}
	if (!check("reload_running", st.binary_checks_now == 1, "no check "
	    "seen running"))
		goto out;
	if ((f = fopen(conf, "w")) != NULL) {
		fprintf(f, "binary-check-timeout 3600\n");
		fclose(f);
	}
	kill(sv.pid, SIGHUP);
	for (i = 0; i < STATS_POLLS && !srv_stderr_has(&sv, "reloaded"); i++)
		poll_wait();
	check("reload_reloaded", srv_stderr_has(&sv, "reloaded"), "no "
	    "\"reloaded\" in the server's log");
	rc = from_binary_wait(&c, seq, &bs);
	check("reload_kept_timeout", rc == CL_INVALID_BINARY && bs ==
	    CL_INVALID_BINARY && srv_stderr_has(&sv, "within 2 s"), "the "
	    "check running at the reload: status %d, binary status %d (want "
	    "it killed past its 2 s)", rc, bs);
	if ((i = open(latch, O_CREAT | O_WRONLY, 0600)) != -1)
		close(i);
	rc = from_binary(&c, 102, &good, &bs);
	check("reload_then_passed", rc == CL_SUCCESS, "status %d", rc);
	release(&c, VCL__KIND__KIND_PROGRAM, 101);
	release(&c, VCL__KIND__KIND_PROGRAM, 102);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "reload_nothing_left");
out:
	unlink(latch);
	conn_close(&c);
	conn_close(&o);
	srv_stop(&sv, "reload_server_exit");
	free(good.data);
}

/*
 * A session that closes while its check runs ends the check: its child
 * (held by a latch, the timeout an hour) is killed and reaped at once, not
 * left to hold one of the two check threads and the binary's copy until
 * the timeout; another session's check runs after it.
 */
static void
test_checked_closed(void)
{
	const char *const	 trust[] = { "--trust-binaries",
	    "--binary-check-timeout", "3600", NULL };
	struct srv		 sv;
	struct conn		 c, o;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	ProtobufCBinaryData	 good;
	char			 latch[PATH_MAX];
	int32_t			 bs;
	int			 rc, i, kids, zombies, started;

	if (!good_binary(&good))
		return;
	snprintf(latch, sizeof latch, "/tmp/vcl_bincheck_closed.%d",
	    (int)getpid());
	unlink(latch);
	c.fd = o.fd = -1;
	setenv("VCL_TEST_BINCHECK_LATCH", latch, 1);
	started = srv_start(&sv, "closed_server_start", "127.0.0.1:0", trust);
	unsetenv("VCL_TEST_BINCHECK_LATCH");
	if (!started) {
		free(good.data);
		return;
	}
	if (!check("closed_sessions", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0 && conn_session(&o, &sv) == 0 &&
	    create_context(&o, CTX) == 0, "no sessions"))
		goto out;
	(void)from_binary_send(&c, 101, &good);
	/* The check counts as running a moment before its child is made. */
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(&o, &st) != 0 || (st.binary_checks_now == 1 &&
		    children_of(sv.pid, &zombies) == 1))
			break;
		poll_wait();
	}
	if (!check("closed_running", st.binary_checks_now == 1 &&
	    children_of(sv.pid, &zombies) == 1, "no check seen running"))
		goto out;
	conn_close(&c);
	/* The latch stays shut: only the close can end the check. */
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(&o, &st) != 0 || (st.binary_checks_now == 0 &&
		    children_of(sv.pid, &zombies) == 0))
			break;
		poll_wait();
	}
	kids = children_of(sv.pid, &zombies);
	check("closed_check_ended", srv_alive(&sv) &&
	    st.binary_checks_now == 0 && kids == 0, "server %s, %llu checks "
	    "running, %d children (%d zombies) after the session closed",
	    srv_how(&sv), (unsigned long long)st.binary_checks_now, kids,
	    zombies);
	if ((i = open(latch, O_CREAT | O_WRONLY, 0600)) != -1)
		close(i);
	rc = from_binary(&o, 102, &good, &bs);
	check("closed_other_checked", rc == CL_SUCCESS && stats(&o, &st) ==
	    0 && st.binary_checks == 2, "status %d, %llu checks (want 2)", rc,
	    (unsigned long long)st.binary_checks);
	release(&o, VCL__KIND__KIND_PROGRAM, 102);
	release(&o, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&o, "closed_nothing_left");
out:
	unlink(latch);
	conn_close(&c);
	conn_close(&o);
	srv_stop(&sv, "closed_server_exit");
	free(good.data);
}

/*
 * A check holds a copy of the binaries, charged to the session first: a
 * binary whose copy the session has no room for is CL_OUT_OF_RESOURCES,
 * no child is started, and the server and the session go on.
 */
static void
test_checked_charge(void)
{
	const char *const	 trust[] = { "--trust-binaries",
	    "--max-session-bytes", "2M", NULL };
	struct srv		 sv;
	struct conn		 c;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	ProtobufCBinaryData	 big;
	int32_t			 bs;
	int			 rc, zombies;

	c.fd = -1;
	big.len = 1536 * 1024;
	if ((big.data = malloc(big.len)) == NULL)
		return;
	memset(big.data, 0x5a, big.len);
	if (!srv_start(&sv, "charge_server_start", "127.0.0.1:0", trust)) {
		free(big.data);
		return;
	}
	if (!check("charge_session", conn_session(&c, &sv) == 0 &&
	    create_context(&c, CTX) == 0, "no session"))
		goto out;
	rc = from_binary(&c, 101, &big, &bs);
	check("charge_refused", rc == CL_OUT_OF_RESOURCES, "status %d, want "
	    "CL_OUT_OF_RESOURCES (the copy over --max-session-bytes)", rc);
	check("charge_no_child", stats(&c, &st) == 0 &&
	    st.binary_checks == 0 && children_of(sv.pid, &zombies) == 0,
	    "%llu checks started, want none",
	    (unsigned long long)st.binary_checks);
	check("charge_session_serves", create_context(&c, CTX + 1) == 0,
	    "the session no longer serves");
	release(&c, VCL__KIND__KIND_CONTEXT, CTX + 1);
	release(&c, VCL__KIND__KIND_PROGRAM, 101);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	settle(&c, "charge_nothing_left");
out:
	conn_close(&c);
	srv_stop(&sv, "charge_server_exit");
	free(big.data);
}

static const struct test tests[] = {
	{ "binaries",		test_binaries,		120 },
	{ "link",		test_link,		180 },
	{ "spec_constant",	test_spec_constant,	60 },
	{ "builtin_names",	test_builtin_names,	120 },
	{ "checked",		test_checked,		180 },
	{ "checked_timeout",	test_checked_timeout,	120 },
	{ "checked_closed",	test_checked_closed,	120 },
	{ "checked_noise",	test_checked_noise,	120 },
	{ "checked_reload",	test_checked_reload,	240 },
	{ "checked_charge",	test_checked_charge,	120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
