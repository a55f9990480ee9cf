/* kargs_test.c - kernel arguments checked against the kernel's own types. */

/*
 * usage: kargs_test VCLSERVER [BUSY_CLIENT]
 *
 * Speaks the wire protocol to a real vclserver on PoCL and sets kernel
 * arguments a local runtime would refuse (bytes for a sampler, a buffer
 * for an image, huge or empty __local sizes, by-value arguments shorter
 * than their type, a buffer released while still set). Each must get the
 * OpenCL error a local runtime gives; the server must survive and a
 * second session still work. The harness is rawproto.c.
 */

#include "rawproto.h"

static const char kargs_src[] =
	"typedef struct { int v[1024]; } big_t;\n"
	"struct pair { int a; int b; };\n"
	"__kernel void ksamp(sampler_t s, __global int *o) { o[0] = 1; }\n"
	"__kernel void kimg(__read_only image2d_t im, __global int *o)\n"
	"{ o[0] = get_image_width(im); }\n"
	"__kernel void kloc(__local int *l, __global int *o)\n"
	"{\n"
	"	l[get_local_id(0)] = (int)get_global_id(0);\n"
	"	barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	o[get_global_id(0)] = l[0] + 1;\n"
	"}\n"
	"__kernel void kloc2(__local int *a, __local int *b,\n"
	"    __global int *o) { a[0] = 1; b[0] = 2; o[0] = a[0] + b[0]; }\n"
	"__kernel void kbig(big_t b, __global int *o)\n"
	"{ for (int i = 0; i < 1024; i++) o[i] = b.v[i]; }\n"
	"__kernel void kpair(struct pair p, int x, __global int *o)\n"
	"{ o[0] = p.a; o[1] = p.b; o[2] = x; }\n"
	"__kernel void kcopy(__global int *dst, __global const int *src)\n"
	"{ dst[get_global_id(0)] = src[get_global_id(0)]; }\n";

/* Ids of one session's objects. */
enum {
	CTX = 1, Q, PROG, BUF_O, BUF_X, BUF_D,
	K_SAMP = 20, K_IMG, K_LOC, K_LOC2, K_BIG, K_PAIR, K_COPY,
};

#define NWORDS	1024		/* ints in a test buffer */

/* BuildProgram{program}: the reply's status, or 1 for no reply. */
static int
build(struct conn *c, uint64_t prog)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	m = VCL__BUILD_PROGRAM__INIT;
	struct reply		rp;
	int			st;

	m.program = prog;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.r->status;
	reply_free(&rp);
	return (st);
}

/*
 * CreateKernel{id, program, name}: the reply's status, or 1 for no reply;
 * *size0 gets the by-value size the server reports for argument 0.
 */
static int
create_kernel(struct conn *c, uint64_t id, uint64_t prog, const char *name,
    uint32_t *size0)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateKernel	m = VCL__CREATE_KERNEL__INIT;
	struct reply		rp;
	int			st;

	m.id = id;
	m.program = prog;
	m.name = (char *)name;
	r.call_case = VCL__REQUEST__CALL_CREATE_KERNEL;
	r.create_kernel = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.r->status;
	if (size0 != NULL)
		*size0 = st == 0 && rp.r->kernels != NULL &&
		    rp.r->kernels->n_kernels == 1 &&
		    rp.r->kernels->kernels[0]->n_arg_size > 0 ?
		    rp.r->kernels->kernels[0]->arg_size[0] : 0;
	reply_free(&rp);
	return (st);
}

/* Argument constructors. */
static void
arg_value(Vcl__KernelArg *a, uint32_t i, const void *p, size_t n)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = VCL__KERNEL_ARG__TYPE__VALUE;
	a->has_value = 1;
	a->value.data = (uint8_t *)p;
	a->value.len = n;
}

static void
arg_mem(Vcl__KernelArg *a, uint32_t i, uint64_t mem)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = mem != 0 ? VCL__KERNEL_ARG__TYPE__MEM :
	    VCL__KERNEL_ARG__TYPE__NULLMEM;
	a->has_mem = mem != 0;
	a->mem = mem;
}

static void
arg_local(Vcl__KernelArg *a, uint32_t i, uint64_t size)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = VCL__KERNEL_ARG__TYPE__LOCAL;
	a->has_size = 1;
	a->size = size;
}

/*
 * NDRange of kernel k on queue Q with these arguments (1-D, global gws,
 * local lws or none, offset off), then Finish: the status Finish reports
 * (the launch's failure, asynchronous), or 1 for no reply.
 */
static int
launch(struct conn *c, uint64_t k, size_t gws, size_t lws, size_t off,
    Vcl__KernelArg *args, size_t nargs)
{
	Vcl__Request	 r = VCL__REQUEST__INIT, f = VCL__REQUEST__INIT;
	Vcl__NDRange	 m = VCL__NDRANGE__INIT;
	Vcl__Finish	 fm = VCL__FINISH__INIT;
	Vcl__Enqueue	 q = VCL__ENQUEUE__INIT;
	Vcl__KernelArg	*ap[8];
	uint64_t	 g = gws, l = lws, o = off;
	struct reply	 rp;
	size_t		 i;
	int		 st;

	for (i = 0; i < nargs && i < 8; i++)
		ap[i] = &args[i];
	q.queue = Q;
	m.q = &q;
	m.kernel = k;
	m.work_dim = 1;
	m.n_global = 1;
	m.global = &g;
	m.n_local = lws != 0 ? 1 : 0;
	m.local = &l;
	m.n_offset = off != 0 ? 1 : 0;
	m.offset = &o;
	m.n_args = nargs;
	m.args = ap;
	r.call_case = VCL__REQUEST__CALL_NDRANGE;
	r.ndrange = &m;
	if (send_req(c, &r, NULL, 0) != 0)
		return (1);
	fm.queue = Q;
	f.call_case = VCL__REQUEST__CALL_FINISH;
	f.finish = &fm;
	if (call(c, &f, NULL, 0, &rp) != 0)
		return (1);
	st = rp.r->status;
	reply_free(&rp);
	return (st);
}

/* Read NWORDS ints of buffer mem into out. Returns 0 or -1. */
static int
read_words(struct conn *c, uint64_t mem, int *out)
{
	struct reply	rp;
	int		rc = -1;

	if (read_buffer(c, Q, mem, NWORDS * sizeof *out, &rp) != 0)
		return (-1);
	if (rp.r->status == 0 && rp.bulk_len == NWORDS * sizeof *out) {
		memcpy(out, rp.bulk, rp.bulk_len);
		rc = 0;
	}
	reply_free(&rp);
	return (rc);
}

/* A session with a context, queue, output buffer and the built program. */
static int
setup(struct conn *c, const struct srv *sv)
{
	if (conn_session(c, sv) != 0)
		return (-1);
	if (create_context(c, CTX) != 0 || create_queue(c, Q, CTX) != 0 ||
	    create_buffer(c, BUF_O, CTX, NWORDS * sizeof(int), NULL, 0) != 0 ||
	    create_program(c, PROG, CTX, kargs_src) != 0)
		return (-1);
	return (build(c, PROG) == 0 ? 0 : -1);
}

/*
 * The server is still up and serves: it did not crash, and a new session
 * can run a kernel.
 */
static void
still_serves(struct srv *sv, const char *name)
{
	struct conn	c;
	Vcl__KernelArg	a[3];
	int		x = 7, out[NWORDS];
	struct { int a, b; } p = { 3, 4 };

	c.fd = -1;
	if (!check(name, srv_alive(sv), "server died (%s)", srv_how(sv)))
		return;
	if (!check(name, setup(&c, sv) == 0, "no second session"))
		goto out;
	check(name, create_kernel(&c, K_PAIR, PROG, "kpair", NULL) == 0,
	    "no kernel in the second session");
	arg_value(&a[0], 0, &p, sizeof p);
	arg_value(&a[1], 1, &x, sizeof x);
	arg_mem(&a[2], 2, BUF_O);
	check(name, launch(&c, K_PAIR, 1, 0, 0, a, 3) == 0 &&
	    read_words(&c, BUF_O, out) == 0 && out[0] == 3 && out[1] == 4 &&
	    out[2] == 7, "a kernel in a second session did not run right");
out:
	conn_close(&c);
}

/* (1) Raw bytes for a sampler_t would be taken as a pointer. */
static void
test_sampler(void)
{
	struct srv	sv;
	struct conn	c;
	Vcl__KernelArg	a[2];
	uint64_t	junk = 0x4141414141414141ull;
	uint32_t	junk4 = 0x41414141;

	if (!srv_start(&sv, "sampler_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("sampler_setup", setup(&c, &sv) == 0, "no session") ||
	    !check("sampler_kernel", create_kernel(&c, K_SAMP, PROG, "ksamp",
	    NULL) == 0, "no kernel"))
		goto out;
	arg_value(&a[0], 0, &junk, sizeof junk);
	arg_mem(&a[1], 1, BUF_O);
	check("sampler_bytes_refused", launch(&c, K_SAMP, 1, 0, 0, a, 2) ==
	    CL_INVALID_SAMPLER, "want CL_INVALID_SAMPLER");
	arg_value(&a[0], 0, &junk4, sizeof junk4);
	check("sampler_short_bytes_refused", launch(&c, K_SAMP, 1, 0, 0, a, 2)
	    == CL_INVALID_SAMPLER, "want CL_INVALID_SAMPLER");
	arg_mem(&a[0], 0, BUF_O);
	check("sampler_buffer_refused", launch(&c, K_SAMP, 1, 0, 0, a, 2) ==
	    CL_INVALID_SAMPLER, "want CL_INVALID_SAMPLER");
	/* The argument was never set: the launch alone is refused too. */
	check("sampler_unset_launch_refused", launch(&c, K_SAMP, 1, 0, 0,
	    &a[1], 1) != 0, "a launch with the sampler unset ran");
	conn_close(&c);
	still_serves(&sv, "sampler_server_survives");
out:
	conn_close(&c);
	srv_stop(&sv, "sampler_server_exit");
}

/* (2) A buffer, NULL or bytes for an image*_t: not an image. */
static void
test_image(void)
{
	struct srv	sv;
	struct conn	c;
	Vcl__KernelArg	a[2];
	uint64_t	junk = 0x4141414141414141ull;

	if (!srv_start(&sv, "image_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("image_setup", setup(&c, &sv) == 0, "no session") ||
	    !check("image_kernel", create_kernel(&c, K_IMG, PROG, "kimg",
	    NULL) == 0, "no kernel"))
		goto out;
	arg_mem(&a[0], 0, BUF_O);
	arg_mem(&a[1], 1, BUF_O);
	check("image_buffer_refused", launch(&c, K_IMG, 1, 0, 0, a, 2) ==
	    CL_INVALID_MEM_OBJECT, "want CL_INVALID_MEM_OBJECT");
	arg_mem(&a[0], 0, 0);
	check("image_null_refused", launch(&c, K_IMG, 1, 0, 0, a, 2) ==
	    CL_INVALID_MEM_OBJECT, "want CL_INVALID_MEM_OBJECT");
	arg_value(&a[0], 0, &junk, sizeof junk);
	check("image_bytes_refused", launch(&c, K_IMG, 1, 0, 0, a, 2) ==
	    CL_INVALID_MEM_OBJECT, "want CL_INVALID_MEM_OBJECT");
	conn_close(&c);
	still_serves(&sv, "image_server_survives");
out:
	conn_close(&c);
	srv_stop(&sv, "image_server_exit");
}

/* (3) __local sizes: 0, 2^40, two that together exceed the device's. */
static void
test_local(void)
{
	struct srv	sv;
	struct conn	c;
	Vcl__KernelArg	a[3];
	uint64_t	lmem = 0;
	int		out[NWORDS], rc, i;

	if (!srv_start(&sv, "local_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("local_setup", setup(&c, &sv) == 0, "no session") ||
	    !check("local_kernels", create_kernel(&c, K_LOC, PROG, "kloc",
	    NULL) == 0 && create_kernel(&c, K_LOC2, PROG, "kloc2", NULL) == 0,
	    "no kernel") ||
	    !check("local_mem_size", device_info_u64(&c,
	    CL_DEVICE_LOCAL_MEM_SIZE, &lmem) == 0 && lmem > 0,
	    "no CL_DEVICE_LOCAL_MEM_SIZE"))
		goto out;
	arg_local(&a[0], 0, 1ull << 40);
	arg_mem(&a[1], 1, BUF_O);
	check("local_huge_refused", launch(&c, K_LOC, 64, 64, 0, a, 2) ==
	    CL_INVALID_ARG_SIZE, "2^40 bytes: want CL_INVALID_ARG_SIZE");
	arg_local(&a[0], 0, lmem + 1);
	check("local_over_device_refused", launch(&c, K_LOC, 64, 64, 0, a, 2)
	    == CL_INVALID_ARG_SIZE, "%llu bytes: want CL_INVALID_ARG_SIZE",
	    (unsigned long long)lmem + 1);
	arg_local(&a[0], 0, 0);
	check("local_zero_refused", launch(&c, K_LOC, 64, 64, 0, a, 2) ==
	    CL_INVALID_ARG_SIZE, "0 bytes: want CL_INVALID_ARG_SIZE");
	/* Each fits; together they do not. */
	arg_local(&a[0], 0, lmem);
	arg_local(&a[1], 1, lmem);
	arg_mem(&a[2], 2, BUF_O);
	check("local_sum_refused", launch(&c, K_LOC2, 1, 1, 0, a, 3) ==
	    CL_OUT_OF_RESOURCES, "2 x %llu bytes: want CL_OUT_OF_RESOURCES",
	    (unsigned long long)lmem);
	/* A size that fits runs, and right. */
	arg_local(&a[0], 0, 64 * sizeof(int));
	arg_mem(&a[1], 1, BUF_O);
	rc = launch(&c, K_LOC, 64, 64, 0, a, 2);
	if (check("local_fits_runs", rc == 0, "status %d", rc) &&
	    check("local_fits_read", read_words(&c, BUF_O, out) == 0,
	    "no read")) {
		for (i = 0; i < 64 && out[i] == 1; i++)
			;
		check("local_fits_result", i == 64, "word %d is %d, want 1", i,
		    out[i]);
	}
	conn_close(&c);
	still_serves(&sv, "local_server_survives");
out:
	conn_close(&c);
	srv_stop(&sv, "local_server_exit");
}

/* (4) By-value arguments must have their type's size, structs included. */
static void
test_value_size(void)
{
	struct srv	 sv;
	struct conn	 c;
	Vcl__KernelArg	 a[3];
	static int	 big[NWORDS], out[NWORDS];
	uint32_t	 bigsize = 0, pairsize = 0;
	uint8_t		 one = 1;
	int		 x = 5, rc, i, nz;
	struct { int a, b; } p = { 1, 2 };

	for (i = 0; i < NWORDS; i++)
		big[i] = i * 3 + 1;
	if (!srv_start(&sv, "value_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("value_setup", setup(&c, &sv) == 0, "no session") ||
	    !check("value_kernels", create_kernel(&c, K_BIG, PROG, "kbig",
	    &bigsize) == 0 && create_kernel(&c, K_PAIR, PROG, "kpair",
	    &pairsize) == 0, "no kernel"))
		goto out;
	/* The client learns the struct's size, so it can check it too. */
	check("value_struct_size_reported", bigsize == sizeof big &&
	    pairsize == sizeof p, "arg sizes %u and %u, want %zu and %zu",
	    bigsize, pairsize, sizeof big, sizeof p);

	/* A 4 KiB struct sent as 1 byte: the kernel would read the heap. */
	arg_value(&a[0], 0, &one, sizeof one);
	arg_mem(&a[1], 1, BUF_O);
	rc = launch(&c, K_BIG, 1, 0, 0, a, 2);
	check("value_short_struct_refused", rc == CL_INVALID_ARG_SIZE,
	    "status %d, want CL_INVALID_ARG_SIZE", rc);
	if (rc == 0 && read_words(&c, BUF_O, out) == 0) {
		for (i = 0, nz = 0; i < NWORDS; i++)
			nz += out[i] != 0;
		check("value_short_struct_no_heap", nz <= 1,
		    "%d non-zero words of server memory came back", nz);
	}
	arg_value(&a[0], 0, big, sizeof big - 4);
	check("value_struct_minus_4_refused", launch(&c, K_BIG, 1, 0, 0, a, 2)
	    == CL_INVALID_ARG_SIZE, "want CL_INVALID_ARG_SIZE");
	/* The right size runs, and right. */
	arg_value(&a[0], 0, big, sizeof big);
	rc = launch(&c, K_BIG, 1, 0, 0, a, 2);
	check("value_struct_runs", rc == 0 && read_words(&c, BUF_O, out) ==
	    0 && memcmp(out, big, sizeof big) == 0, "status %d or wrong "
	    "result", rc);

	/* Built-in types: an int is 4 bytes, no fewer nor more. */
	arg_value(&a[0], 0, &p, sizeof p);
	arg_value(&a[1], 1, &one, sizeof one);
	arg_mem(&a[2], 2, BUF_O);
	check("value_short_int_refused", launch(&c, K_PAIR, 1, 0, 0, a, 3) ==
	    CL_INVALID_ARG_SIZE, "want CL_INVALID_ARG_SIZE");
	arg_value(&a[0], 0, &one, sizeof one);
	arg_value(&a[1], 1, &x, sizeof x);
	check("value_short_pair_refused", launch(&c, K_PAIR, 1, 0, 0, a, 3) ==
	    CL_INVALID_ARG_SIZE, "want CL_INVALID_ARG_SIZE");
	/* A buffer id where a value goes is no value either. */
	arg_mem(&a[0], 0, BUF_O);
	check("value_buffer_refused", launch(&c, K_PAIR, 1, 0, 0, a, 3) ==
	    CL_INVALID_ARG_VALUE, "want CL_INVALID_ARG_VALUE");
	conn_close(&c);
	still_serves(&sv, "value_server_survives");
out:
	conn_close(&c);
	srv_stop(&sv, "value_server_exit");
}

/*
 * (5) A buffer released while set on a kernel lives while the kernel names
 * it: a launch that does not re-send the argument reads it, not memory
 * another session got since; it stays charged until the kernel lets go,
 * then everything goes back to zero. The context may go first too.
 */
static void
test_retain(void)
{
	struct srv		 sv;
	struct conn		 a, b;
	Vcl__KernelArg		 args[2];
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	static int		 mine[NWORDS], theirs[NWORDS], out[NWORDS];
	uint64_t		 base = 0;	/* the program's own charge */
	int			 rc, i, round;

	for (i = 0; i < NWORDS; i++) {
		mine[i] = 0x1000 + i;
		theirs[i] = 0x5eed0000 + i;
	}
	if (!srv_start(&sv, "retain_server_start", "127.0.0.1:0", NULL))
		return;
	a.fd = b.fd = -1;
	if (!check("retain_setup", setup(&a, &sv) == 0, "no session") ||
	    !check("retain_kernel", create_kernel(&a, K_COPY, PROG, "kcopy",
	    NULL) == 0, "no kernel") ||
	    !check("retain_session_b", conn_session(&b, &sv) == 0 &&
	    create_context(&b, 1) == 0 && create_queue(&b, 2, 1) == 0,
	    "no session B"))
		goto out;
	if (stats(&a, &st) == 0)
		base = st.session_bytes - sizeof out;	/* less buffer O */
	rc = create_buffer(&a, BUF_X, CTX, sizeof mine, mine, sizeof mine);
	rc |= create_buffer(&a, BUF_D, CTX, sizeof out, NULL, 0);
	arg_mem(&args[0], 0, BUF_D);
	arg_mem(&args[1], 1, BUF_X);
	check("retain_first_launch", rc == 0 && launch(&a, K_COPY, NWORDS, 0,
	    0, args, 2) == 0, "the launch with both buffers failed");

	/* The client lets go of X (and of the context); the kernel has not. */
	rc = release(&a, VCL__KIND__KIND_MEM, BUF_X);
	rc |= release(&a, VCL__KIND__KIND_CONTEXT, CTX);
	if (check("retain_released_sent", rc == 0 && stats(&a, &st) == 0,
	    "no Stats"))
		check("retain_still_charged", st.session_bytes - base ==
		    3 * sizeof out, "session_bytes %llu over the program's "
		    "%llu, want %zu: X lives while the kernel names it",
		    (unsigned long long)(st.session_bytes - base),
		    (unsigned long long)base, 3 * sizeof out);
	/* B allocates what X's memory would be reused for. */
	for (round = 0; round < 4; round++)
		create_buffer(&b, 10 + round, 1, sizeof theirs, theirs,
		    sizeof theirs);
	/* A launches again without re-sending the arguments. */
	rc = launch(&a, K_COPY, NWORDS, 0, 0, NULL, 0);
	if (check("retain_relaunch", rc == 0, "status %d", rc) &&
	    check("retain_read", read_words(&a, BUF_D, out) == 0, "no read")) {
		for (i = 0; i < NWORDS - 1 && out[i] == mine[i]; i++)
			;
		check("retain_reads_own_buffer", out[i] == mine[i], "word %d "
		    "is %#x, want %#x (%s)", i, out[i], mine[i],
		    (out[i] & 0xffff0000) == 0x5eed0000 ?
		    "another session's bytes" : "freed memory");
	}
	/* The kernel goes: X goes with it; then all of A. */
	rc = release(&a, VCL__KIND__KIND_KERNEL, K_COPY);
	if (rc == 0 && stats(&a, &st) == 0)
		check("retain_freed_with_kernel", st.session_bytes - base ==
		    2 * sizeof out, "session_bytes %llu over the program's, "
		    "want %zu", (unsigned long long)(st.session_bytes - base),
		    2 * sizeof out);
	rc = release(&a, VCL__KIND__KIND_MEM, BUF_D);
	rc |= release(&a, VCL__KIND__KIND_MEM, BUF_O);
	rc |= release(&a, VCL__KIND__KIND_PROGRAM, PROG);
	rc |= release(&a, VCL__KIND__KIND_QUEUE, Q);
	if (rc == 0 && stats(&a, &st) == 0)
		check("retain_session_empty", st.session_bytes == 0 &&
		    st.session_objects == 0, "session_bytes %llu objects %llu",
		    (unsigned long long)st.session_bytes,
		    (unsigned long long)st.session_objects);
	conn_close(&b);

	/* Set, released, then the whole session goes: nothing stays. */
	if (check("retain_close_setup", setup(&b, &sv) == 0 &&
	    create_kernel(&b, K_COPY, PROG, "kcopy", NULL) == 0 &&
	    create_buffer(&b, BUF_X, CTX, sizeof mine, mine, sizeof mine) ==
	    0, "no session")) {
		arg_mem(&args[0], 0, BUF_O);
		arg_mem(&args[1], 1, BUF_X);
		launch(&b, K_COPY, NWORDS, 0, 0, args, 2);
		release(&b, VCL__KIND__KIND_MEM, BUF_X);
		stats(&b, &st);
		conn_close(&b);
	}
	rc = wait_empty(&a, &st);
	check("retain_all_given_back", rc == 0, "objects %llu bytes %llu",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
	conn_close(&a);
	still_serves(&sv, "retain_server_survives");
out:
	conn_close(&a);
	conn_close(&b);
	srv_stop(&sv, "retain_server_exit");
}

/* Launch sizes: an offset that wraps, a local size over the device's. */
static void
test_sizes(void)
{
	struct srv	sv;
	struct conn	c;
	Vcl__KernelArg	a[2];

	if (!srv_start(&sv, "sizes_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("sizes_setup", setup(&c, &sv) == 0 && create_kernel(&c,
	    K_COPY, PROG, "kcopy", NULL) == 0, "no session"))
		goto out;
	arg_mem(&a[0], 0, BUF_O);
	arg_mem(&a[1], 1, BUF_O);
	check("sizes_offset_wraps", launch(&c, K_COPY, 16, 0, SIZE_MAX - 4, a,
	    2) == CL_INVALID_GLOBAL_OFFSET, "want CL_INVALID_GLOBAL_OFFSET");
	check("sizes_local_huge", launch(&c, K_COPY, 1ull << 40, 1ull << 40,
	    0, a, 2) == CL_INVALID_WORK_ITEM_SIZE,
	    "want CL_INVALID_WORK_ITEM_SIZE");
	conn_close(&c);
	still_serves(&sv, "sizes_server_survives");
out:
	conn_close(&c);
	srv_stop(&sv, "sizes_server_exit");
}

static const struct test tests[] = {
	{ "sampler",		test_sampler,		120 },
	{ "image",		test_image,		120 },
	{ "local",		test_local,		120 },
	{ "value_size",		test_value_size,	120 },
	{ "retain",		test_retain,		120 },
	{ "sizes",		test_sizes,		120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
