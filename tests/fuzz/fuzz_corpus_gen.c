/* fuzz_corpus_gen.c - write fuzz_session's seed sessions: valid client streams. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"
#include "vcl_buf.h"
#include "vcl_frame.h"

#include "fuzz_sources.h"

/*
 * Each seed is what a well-behaved client sends on one connection, without
 * waiting for replies (fuzz_session waits for builds itself): Hello, then
 * objects, commands with wait lists and events, and every object released.
 * The seeds are committed under tests/fuzz/corpus/ (gen_*); a test checks
 * that this program still writes the same bytes.
 *
 * Object ids: context 1, queues 2 and 9, buffers 3 and 4, program 5,
 * kernels 6 and 7, events from 100.
 */

struct gen {
	struct vcl_buf	b;
	uint64_t	seq;
};

/* Stop on a failure of the generator itself. */
static void
gen_fail(const char *what)
{
	fprintf(stderr, "fuzz_corpus_gen: %s\n", what);
	exit(1);
}

/* Append one request frame and its bulk bytes. */
static void
gen_put(struct gen *g, Vcl__Request *r, const void *bulk, size_t n)
{
	r->seq = ++g->seq;
	if (vcl_buf_pack(&g->b, &r->base, n) != 0 ||
	    vcl_buf_reserve(&g->b, n) != 0)
		gen_fail("out of memory");
	if (n > 0)
		memcpy(g->b.data + g->b.len, bulk, n);
	g->b.len += n;
}

/* Write a seed file and start the next one. */
static void
gen_write(struct gen *g, const char *dir, const char *name)
{
	char	path[4096];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL ||
	    fwrite(g->b.data, 1, g->b.len, f) != g->b.len || fclose(f) != 0)
		gen_fail(strerror(errno));
	g->b.len = 0;
	g->seq = 0;
}

/* Hello as a plain client (no token). */
static void
gen_hello(struct gen *g)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Hello	m = VCL__HELLO__INIT;

	m.version = VCL_PROTOCOL_VERSION;
	m.client_name = (char *)"gen";
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &m;
	gen_put(g, &r, NULL, 0);
}

/* Context 1 on device 0. */
static void
gen_context(struct gen *g)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateContext	m = VCL__CREATE_CONTEXT__INIT;
	uint32_t		dev = 0;

	m.id = 1;
	m.n_devices = 1;
	m.devices = &dev;
	r.call_case = VCL__REQUEST__CALL_CREATE_CONTEXT;
	r.create_context = &m;
	gen_put(g, &r, NULL, 0);
}

/* A queue of context 1 on device 0, profiling or not. */
static void
gen_queue(struct gen *g, uint64_t id, int profiling)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateQueue	m = VCL__CREATE_QUEUE__INIT;
	uint64_t		props[2] = {
		CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE
	};

	m.id = id;
	m.context = 1;
	if (profiling) {
		m.n_properties = 2;
		m.properties = props;
	}
	r.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	r.create_queue = &m;
	gen_put(g, &r, NULL, 0);
}

/* A buffer of context 1, zeroed or with initial bytes. */
static void
gen_buffer(struct gen *g, uint64_t id, uint64_t flags, size_t size,
    const void *data)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateBuffer	m = VCL__CREATE_BUFFER__INIT;

	m.id = id;
	m.context = 1;
	m.flags = flags;
	m.size = size;
	if (data != NULL)
		m.has_has_data = m.has_data = 1;
	r.call_case = VCL__REQUEST__CALL_CREATE_BUFFER;
	r.create_buffer = &m;
	gen_put(g, &r, data, data != NULL ? size : 0);
}

/* Fill the Enqueue fields every command carries. */
static void
gen_enq(Vcl__Enqueue *e, uint64_t queue, uint64_t event, uint64_t *wait,
    size_t nwait)
{
	vcl__enqueue__init(e);
	e->queue = queue;
	if (event != 0) {
		e->has_event = 1;
		e->event = event;
	}
	e->n_wait = nwait;
	e->wait = wait;
}

/* WriteBuffer of n bytes at off. */
static void
gen_write_buffer(struct gen *g, uint64_t mem, size_t off, const void *data,
    size_t n, uint64_t event)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	m = VCL__WRITE_BUFFER__INIT;
	Vcl__Enqueue		e;

	gen_enq(&e, 2, event, NULL, 0);
	m.q = &e;
	m.mem = mem;
	m.offset = off;
	m.size = n;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &m;
	gen_put(g, &r, data, n);
}

/* ReadBuffer of n bytes at off, after the events in wait. */
static void
gen_read_buffer(struct gen *g, uint64_t mem, size_t off, size_t n,
    uint64_t *wait, size_t nwait, uint64_t event)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer		m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		e;

	gen_enq(&e, 2, event, wait, nwait);
	m.q = &e;
	m.mem = mem;
	m.offset = off;
	m.size = n;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	gen_put(g, &r, NULL, 0);
}

/* CopyBuffer and FillBuffer between and on buffers 3 and 4. */
static void
gen_copy_fill(struct gen *g, uint64_t event)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CopyBuffer		c = VCL__COPY_BUFFER__INIT;
	Vcl__FillBuffer		f = VCL__FILL_BUFFER__INIT;
	Vcl__Enqueue		e;
	uint32_t		pat = 0x01020304;

	gen_enq(&e, 2, 0, NULL, 0);
	c.q = &e;
	c.src = 4;
	c.dst = 3;
	c.src_offset = 0;
	c.dst_offset = 16;
	c.size = 16;
	r.call_case = VCL__REQUEST__CALL_COPY_BUFFER;
	r.copy_buffer = &c;
	gen_put(g, &r, NULL, 0);

	vcl__request__init(&r);
	gen_enq(&e, 2, event, NULL, 0);
	f.q = &e;
	f.mem = 3;
	f.pattern.data = (uint8_t *)&pat;
	f.pattern.len = sizeof pat;
	f.offset = 64;
	f.size = 32;
	r.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
	r.fill_buffer = &f;
	gen_put(g, &r, NULL, 0);
}

/* Program 5 from fixed source i, then its build with options o (or none). */
static void
gen_program(struct gen *g, size_t i, const char *o)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateProgram	p = VCL__CREATE_PROGRAM__INIT;
	Vcl__BuildProgram	b = VCL__BUILD_PROGRAM__INIT;

	p.id = 5;
	p.context = 1;
	p.source.data = (uint8_t *)fuzz_sources[i];
	p.source.len = strlen(fuzz_sources[i]);
	r.call_case = VCL__REQUEST__CALL_CREATE_PROGRAM;
	r.create_program = &p;
	gen_put(g, &r, NULL, 0);

	vcl__request__init(&r);
	b.program = 5;
	b.options = (char *)o;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &b;
	gen_put(g, &r, NULL, 0);
}

/* Kernel id of program 5 by name. */
static void
gen_kernel(struct gen *g, uint64_t id, const char *name)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateKernel	m = VCL__CREATE_KERNEL__INIT;

	m.id = id;
	m.program = 5;
	m.name = (char *)name;
	r.call_case = VCL__REQUEST__CALL_CREATE_KERNEL;
	r.create_kernel = &m;
	gen_put(g, &r, NULL, 0);
}

/* Argument helpers: a buffer, bytes by value, a __local size, NULL. */
static void
gen_arg_mem(Vcl__KernelArg *a, uint32_t i, uint64_t mem)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = VCL__KERNEL_ARG__TYPE__MEM;
	a->has_mem = 1;
	a->mem = mem;
}

static void
gen_arg_value(Vcl__KernelArg *a, uint32_t i, const void *v, size_t n)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = VCL__KERNEL_ARG__TYPE__VALUE;
	a->has_value = 1;
	a->value.data = (uint8_t *)v;
	a->value.len = n;
}

static void
gen_arg_local(Vcl__KernelArg *a, uint32_t i, uint64_t size)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = VCL__KERNEL_ARG__TYPE__LOCAL;
	a->has_size = 1;
	a->size = size;
}

static void
gen_arg_null(Vcl__KernelArg *a, uint32_t i)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = VCL__KERNEL_ARG__TYPE__NULLMEM;
}

/* NDRange of kernel over gsz items in groups of lsz (0: any), 1-D. */
static void
gen_ndrange(struct gen *g, uint64_t kernel, uint64_t gsz, uint64_t lsz,
    Vcl__KernelArg **args, size_t nargs, uint64_t *wait, size_t nwait,
    uint64_t event)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__NDRange	m = VCL__NDRANGE__INIT;
	Vcl__Enqueue	e;

	gen_enq(&e, 2, event, wait, nwait);
	m.q = &e;
	m.kernel = kernel;
	m.work_dim = 1;
	m.n_global = 1;
	m.global = &gsz;
	if (lsz != 0) {
		m.n_local = 1;
		m.local = &lsz;
	}
	m.n_args = nargs;
	m.args = args;
	r.call_case = VCL__REQUEST__CALL_NDRANGE;
	r.ndrange = &m;
	gen_put(g, &r, NULL, 0);
}

/* Marker or barrier after the events in wait. */
static void
gen_marker(struct gen *g, int barrier, uint64_t *wait, size_t nwait,
    uint64_t event)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Marker	m = VCL__MARKER__INIT;
	Vcl__Enqueue	e;

	gen_enq(&e, 2, event, wait, nwait);
	m.q = &e;
	if (barrier)
		m.has_barrier = m.barrier = 1;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &m;
	gen_put(g, &r, NULL, 0);
}

/* User event id of context 1, and setting its status. */
static void
gen_user_event(struct gen *g, uint64_t id)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	m = VCL__CREATE_USER_EVENT__INIT;

	m.id = id;
	m.context = 1;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &m;
	gen_put(g, &r, NULL, 0);
}

static void
gen_set_status(struct gen *g, uint64_t id, int32_t status)
{
	Vcl__Request			r = VCL__REQUEST__INIT;
	Vcl__SetUserEventStatus		m = VCL__SET_USER_EVENT_STATUS__INIT;

	m.event = id;
	m.status = status;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &m;
	gen_put(g, &r, NULL, 0);
}

/* Flush or Finish queue 2. */
static void
gen_finish(struct gen *g, int flush)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Flush	f = VCL__FLUSH__INIT;
	Vcl__Finish	m = VCL__FINISH__INIT;

	if (flush) {
		f.queue = 2;
		r.call_case = VCL__REQUEST__CALL_FLUSH;
		r.flush = &f;
	} else {
		m.queue = 2;
		r.call_case = VCL__REQUEST__CALL_FINISH;
		r.finish = &m;
	}
	gen_put(g, &r, NULL, 0);
}

/* GetInfo of an object. */
static void
gen_info(struct gen *g, Vcl__GetInfo__What what, uint64_t id, uint32_t param)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetInfo	m = VCL__GET_INFO__INIT;

	m.what = what;
	m.id = id;
	m.param = param;
	m.has_device = 1;
	m.device = 0;
	m.has_arg = 1;
	m.arg = 0;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &m;
	gen_put(g, &r, NULL, 0);
}

/* Release one object, and Stats. */
static void
gen_release(struct gen *g, Vcl__Kind kind, uint64_t id)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Release	m = VCL__RELEASE__INIT;

	m.kind = kind;
	m.id = id;
	r.call_case = VCL__REQUEST__CALL_RELEASE;
	r.release = &m;
	gen_put(g, &r, NULL, 0);
}

static void
gen_stats(struct gen *g)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	gen_put(g, &r, NULL, 0);
}

/* Release events first..last, then the usual objects of a seed. */
static void
gen_release_all(struct gen *g, uint64_t first, uint64_t last)
{
	uint64_t	id;

	for (id = first; id <= last; id++)
		gen_release(g, VCL__KIND__KIND_EVENT, id);
	gen_release(g, VCL__KIND__KIND_KERNEL, 6);
	gen_release(g, VCL__KIND__KIND_KERNEL, 7);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 5);
	gen_release(g, VCL__KIND__KIND_MEM, 3);
	gen_release(g, VCL__KIND__KIND_MEM, 4);
	gen_release(g, VCL__KIND__KIND_QUEUE, 2);
	gen_release(g, VCL__KIND__KIND_CONTEXT, 1);
	gen_stats(g);
}

/* The start every kernel seed shares: objects, program 5 from source i. */
static void
gen_setup(struct gen *g, size_t i, const char *opts, int profiling)
{
	int32_t		init[64];
	int32_t		c = 7;
	size_t		k;

	for (k = 0; k < 64; k++)
		init[k] = (int32_t)k;
	gen_hello(g);
	gen_context(g);
	gen_queue(g, 2, profiling);
	gen_buffer(g, 3, CL_MEM_READ_WRITE, sizeof init, init);
	gen_buffer(g, 4, CL_MEM_READ_ONLY, sizeof c, NULL);
	gen_write_buffer(g, 4, 0, &c, sizeof c, 100);
	gen_program(g, i, opts);
}

/* The whole life of a session, every call a client makes in order. */
static void
gen_full(struct gen *g)
{
	Vcl__KernelArg	a[4], *ap[4] = { &a[0], &a[1], &a[2], &a[3] };
	struct { int32_t a; float b; } pair = { 3, 2.0f };
	int32_t		n = 64, v = 5;
	uint64_t	w100[1] = { 100 }, w101[2] = { 101, 100 };
	uint64_t	w[2] = { 102, 103 }, w104[1] = { 104 };

	gen_setup(g, 0, NULL, 1);
	gen_kernel(g, 6, "k");
	gen_kernel(g, 7, "fill");
	gen_info(g, VCL__GET_INFO__WHAT__KERNEL_WORK_GROUP, 6,
	    CL_KERNEL_WORK_GROUP_SIZE);
	gen_info(g, VCL__GET_INFO__WHAT__KERNEL_ARG, 6,
	    CL_KERNEL_ARG_TYPE_NAME);
	gen_user_event(g, 101);
	gen_arg_mem(&a[0], 0, 3);
	gen_arg_value(&a[1], 1, &n, sizeof n);
	gen_arg_local(&a[2], 2, 16 * sizeof(int32_t));
	gen_arg_value(&a[3], 3, &pair, sizeof pair);
	gen_ndrange(g, 6, 64, 16, ap, 4, w100, 1, 102);
	gen_arg_mem(&a[0], 0, 3);
	gen_arg_mem(&a[1], 1, 4);
	gen_arg_value(&a[2], 2, &v, sizeof v);
	gen_ndrange(g, 7, 64, 0, ap, 3, w101, 2, 103);
	gen_marker(g, 0, w, 2, 104);
	gen_marker(g, 1, NULL, 0, 0);
	gen_finish(g, 1);
	gen_set_status(g, 101, CL_COMPLETE);
	gen_read_buffer(g, 3, 0, 64 * sizeof(int32_t), w104, 1, 105);
	gen_copy_fill(g, 106);
	gen_read_buffer(g, 3, 16, 64, NULL, 0, 0);
	gen_info(g, VCL__GET_INFO__WHAT__EVENT, 105,
	    CL_EVENT_COMMAND_EXECUTION_STATUS);
	gen_info(g, VCL__GET_INFO__WHAT__EVENT_PROFILING, 102,
	    CL_PROFILING_COMMAND_END);
	gen_finish(g, 0);
	gen_release_all(g, 100, 106);
}

/*
 * Arguments set over several launches: NULL buffers, a launch that keeps
 * the arguments of the one before, a wrong kind for an index, an index
 * past the last, a work size no group divides.
 */
static void
gen_args(struct gen *g)
{
	Vcl__KernelArg	a[4], *ap[4] = { &a[0], &a[1], &a[2], &a[3] };
	struct { int32_t a; float b; } pair = { 1, 0.5f };
	int32_t		n = 8;

	gen_setup(g, 0, "-DN=4", 0);
	gen_kernel(g, 6, "k");
	gen_arg_mem(&a[0], 0, 3);
	gen_arg_value(&a[1], 1, &n, sizeof n);
	gen_arg_local(&a[2], 2, 64);
	gen_arg_value(&a[3], 3, &pair, sizeof pair);
	gen_ndrange(g, 6, 16, 4, ap, 4, NULL, 0, 101);
	gen_ndrange(g, 6, 16, 0, NULL, 0, NULL, 0, 102);
	gen_arg_null(&a[0], 0);
	gen_ndrange(g, 6, 8, 8, ap, 1, NULL, 0, 103);
	gen_arg_local(&a[0], 1, 64);
	gen_ndrange(g, 6, 8, 0, ap, 1, NULL, 0, 104);
	gen_arg_value(&a[0], 7, &n, sizeof n);
	gen_ndrange(g, 6, 8, 0, ap, 1, NULL, 0, 105);
	gen_arg_mem(&a[0], 0, 3);
	gen_ndrange(g, 6, 10, 4, ap, 1, NULL, 0, 106);
	gen_finish(g, 0);
	gen_release_all(g, 100, 106);
}

/* Every kernel of source 1 (CreateKernels), vectors and longs by value. */
static void
gen_kernels(struct gen *g)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateKernels	m = VCL__CREATE_KERNELS__INIT;
	Vcl__KernelArg		a[5], *ap[5] = {
		&a[0], &a[1], &a[2], &a[3], &a[4]
	};
	uint64_t		ids[2] = { 6, 7 };
	float			v[4] = { 1, 2, 3, 4 };
	int64_t			l = 9;
	int8_t			c = 2;
	uint64_t		u[2] = { 1, 2 };

	gen_setup(g, 1, "-cl-fast-relaxed-math", 0);
	m.program = 5;
	m.n_ids = 2;
	m.ids = ids;
	r.call_case = VCL__REQUEST__CALL_CREATE_KERNELS;
	r.create_kernels = &m;
	gen_put(g, &r, NULL, 0);
	gen_ndrange(g, 6, 1, 0, NULL, 0, NULL, 0, 101);	/* none() */
	gen_arg_mem(&a[0], 0, 3);
	gen_arg_value(&a[1], 1, v, sizeof v);
	gen_arg_value(&a[2], 2, &l, sizeof l);
	gen_arg_value(&a[3], 3, &c, sizeof c);
	gen_arg_value(&a[4], 4, u, sizeof u);
	gen_ndrange(g, 7, 4, 0, ap, 5, NULL, 0, 102);
	gen_read_buffer(g, 3, 0, 4 * sizeof v, NULL, 0, 103);
	gen_finish(g, 0);
	gen_release_all(g, 100, 103);
}

/*
 * A user event set to an error: what waits on it fails (the launch, the
 * marker behind it, the read behind that), and Finish reports it.
 */
static void
gen_fail_chain(struct gen *g)
{
	Vcl__KernelArg	a[3], *ap[3] = { &a[0], &a[1], &a[2] };
	int32_t		v = 1;
	uint64_t	w101[1] = { 101 }, w102[1] = { 102 };
	uint64_t	w103[1] = { 103 };

	gen_setup(g, 0, "", 0);
	gen_kernel(g, 7, "fill");
	gen_user_event(g, 101);
	gen_arg_mem(&a[0], 0, 3);
	gen_arg_mem(&a[1], 1, 4);
	gen_arg_value(&a[2], 2, &v, sizeof v);
	gen_ndrange(g, 7, 64, 0, ap, 3, w101, 1, 102);
	gen_marker(g, 0, w102, 1, 103);
	gen_read_buffer(g, 3, 0, 16, w103, 1, 104);
	gen_set_status(g, 101, -5);
	gen_marker(g, 1, w103, 1, 105);
	gen_finish(g, 0);
	gen_release_all(g, 100, 105);
}

/*
 * A session that ends with work outstanding: a launch behind a user event
 * never set, a read behind it, nothing released (the teardown does it).
 */
static void
gen_abandon(struct gen *g)
{
	Vcl__KernelArg	a[3], *ap[3] = { &a[0], &a[1], &a[2] };
	int32_t		v = 2;
	uint64_t	w101[1] = { 101 }, w102[1] = { 102 };

	gen_setup(g, 0, NULL, 1);
	gen_kernel(g, 7, "fill");
	gen_user_event(g, 101);
	gen_arg_mem(&a[0], 0, 3);
	gen_arg_mem(&a[1], 1, 4);
	gen_arg_value(&a[2], 2, &v, sizeof v);
	gen_ndrange(g, 7, 64, 0, ap, 3, w101, 1, 102);
	gen_read_buffer(g, 3, 0, 256, w102, 1, 103);
	gen_queue(g, 9, 0);
	gen_release(g, VCL__KIND__KIND_MEM, 4);
}

/* A program that does not build: its log, then kernels it cannot give. */
static void
gen_build_fail(struct gen *g)
{
	gen_setup(g, 2, NULL, 0);
	gen_info(g, VCL__GET_INFO__WHAT__PROGRAM_BUILD, 5,
	    CL_PROGRAM_BUILD_LOG);
	gen_kernel(g, 6, "broken");
	gen_release(g, VCL__KIND__KIND_PROGRAM, 5);
	gen_program(g, 0, "-no-such-option");
	gen_release_all(g, 100, 100);
}

/* Write every seed into the directory named on the command line. */
int
main(int argc, char **argv)
{
	struct gen	g;

	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_corpus_gen DIR\n");
		return (2);
	}
	memset(&g, 0, sizeof g);
	gen_full(&g);
	gen_write(&g, argv[1], "gen_full");
	gen_args(&g);
	gen_write(&g, argv[1], "gen_args");
	gen_kernels(&g);
	gen_write(&g, argv[1], "gen_kernels");
	gen_fail_chain(&g);
	gen_write(&g, argv[1], "gen_fail_chain");
	gen_abandon(&g);
	gen_write(&g, argv[1], "gen_abandon");
	gen_build_fail(&g);
	gen_write(&g, argv[1], "gen_build_fail");
	vcl_buf_free(&g.b);
	return (0);
}
