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
 * Object ids: context 1, queues 2 and 9, buffers 3, 4 and 8, program 5,
 * kernels 6 and 7, events from 100; images 20-26, samplers 30 and 31,
 * sub-buffers 40-43, programs 50-59 and their kernels 60 and 61; a
 * sub-device 10, its context 11 and queue 12.
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

/*
 * Runs of launches the server may make on their queue's strand (no event,
 * no wait list, arguments set already; fuzz_session serves them so): one
 * across an argument changed, one with a launch the runtime refuses, the
 * kernel released with launches waiting, and the session's end with more.
 */
static void
gen_strand(struct gen *g)
{
	Vcl__KernelArg	a[4], *ap[4] = { &a[0], &a[1], &a[2], &a[3] };
	struct { int32_t a; float b; } pair = { 2, 1.5f };
	int32_t		n = 16, m = 8;
	int		i;

	gen_setup(g, 0, NULL, 0);
	gen_kernel(g, 6, "k");
	gen_kernel(g, 7, "fill");
	gen_arg_mem(&a[0], 0, 3);
	gen_arg_value(&a[1], 1, &n, sizeof n);
	gen_arg_local(&a[2], 2, 16 * sizeof(int32_t));
	gen_arg_value(&a[3], 3, &pair, sizeof pair);
	gen_ndrange(g, 6, 16, 4, ap, 4, NULL, 0, 0);
	for (i = 0; i < 12; i++)
		gen_ndrange(g, 6, 16, 4, NULL, 0, NULL, 0, 0);
	gen_arg_value(&a[0], 1, &m, sizeof m);
	gen_ndrange(g, 6, 16, 4, ap, 1, NULL, 0, 0);
	for (i = 0; i < 6; i++)
		gen_ndrange(g, 6, i == 3 ? 10 : 16, 4, NULL, 0, NULL, 0, 0);
	gen_finish(g, 0);
	for (i = 0; i < 12; i++)
		gen_ndrange(g, 6, 16, 4, NULL, 0, NULL, 0, 0);
	gen_release(g, VCL__KIND__KIND_KERNEL, 6);
	gen_finish(g, 0);
	gen_arg_mem(&a[0], 0, 3);
	gen_arg_mem(&a[1], 1, 4);
	gen_arg_value(&a[2], 2, &n, sizeof n);
	gen_ndrange(g, 7, 64, 0, ap, 3, NULL, 0, 0);
	for (i = 0; i < 12; i++)
		gen_ndrange(g, 7, 64, 0, NULL, 0, NULL, 0, 0);
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

/* Program id from fixed source i, built (or only compiled) with options o. */
static void
gen_program_id(struct gen *g, uint64_t id, size_t i, const char *o,
    int compile)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateProgram	p = VCL__CREATE_PROGRAM__INIT;
	Vcl__BuildProgram	b = VCL__BUILD_PROGRAM__INIT;

	p.id = id;
	p.context = 1;
	p.source.data = (uint8_t *)fuzz_sources[i];
	p.source.len = strlen(fuzz_sources[i]);
	r.call_case = VCL__REQUEST__CALL_CREATE_PROGRAM;
	r.create_program = &p;
	gen_put(g, &r, NULL, 0);

	vcl__request__init(&r);
	b.program = id;
	b.options = (char *)o;
	if (compile)
		b.has_compile = b.compile = 1;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &b;
	gen_put(g, &r, NULL, 0);
}

/* Kernel id of program prog by name. */
static void
gen_kernel_of(struct gen *g, uint64_t id, uint64_t prog, const char *name)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateKernel	m = VCL__CREATE_KERNEL__INIT;

	m.id = id;
	m.program = prog;
	m.name = (char *)name;
	r.call_case = VCL__REQUEST__CALL_CREATE_KERNEL;
	r.create_kernel = &m;
	gen_put(g, &r, NULL, 0);
}

/* Image and sampler arguments. */
static void
gen_arg_image(Vcl__KernelArg *a, uint32_t i, uint64_t mem)
{
	gen_arg_mem(a, i, mem);
	a->type = VCL__KERNEL_ARG__TYPE__IMAGE;
}

static void
gen_arg_sampler(Vcl__KernelArg *a, uint32_t i, uint64_t smp)
{
	gen_arg_mem(a, i, smp);
	a->type = VCL__KERNEL_ARG__TYPE__SAMPLER;
}

/*
 * An image of context 1: type, format, width, height, depth, array size
 * (0: not sent), over buffer buf (IMAGE1D_BUFFER), with n initial bytes.
 */
static void
gen_image(struct gen *g, uint64_t id, uint32_t type, uint32_t order,
    uint32_t dtype, const uint64_t dims[4], uint64_t buf, const void *data,
    size_t n)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateImage	m = VCL__CREATE_IMAGE__INIT;

	m.id = id;
	m.context = 1;
	m.flags = CL_MEM_READ_WRITE;
	m.order = order;
	m.data_type = dtype;
	m.type = type;
	m.width = dims[0];
	m.height = dims[1];
	m.has_height = dims[1] != 0;
	m.depth = dims[2];
	m.has_depth = dims[2] != 0;
	m.array_size = dims[3];
	m.has_array_size = dims[3] != 0;
	m.buffer = buf;
	m.has_buffer = buf != 0;
	if (data != NULL)
		m.has_has_data = m.has_data = 1;
	r.call_case = VCL__REQUEST__CALL_CREATE_IMAGE;
	r.create_image = &m;
	gen_put(g, &r, data, data != NULL ? n : 0);
}

/* A sampler of context 1 (normalized coordinates, addressing, filter). */
static void
gen_sampler(struct gen *g, uint64_t id, int norm, uint64_t addr,
    uint64_t filter)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateSampler	m = VCL__CREATE_SAMPLER__INIT;
	uint64_t		p[6] = {
		CL_SAMPLER_NORMALIZED_COORDS, (uint64_t)norm,
		CL_SAMPLER_ADDRESSING_MODE, addr,
		CL_SAMPLER_FILTER_MODE, filter
	};

	m.id = id;
	m.context = 1;
	m.n_properties = 6;
	m.properties = p;
	r.call_case = VCL__REQUEST__CALL_CREATE_SAMPLER;
	r.create_sampler = &m;
	gen_put(g, &r, NULL, 0);
}

/* ImageFormats of context 1 for a type. */
static void
gen_image_formats(struct gen *g, uint32_t type)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__ImageFormats	m = VCL__IMAGE_FORMATS__INIT;

	m.context = 1;
	m.flags = CL_MEM_READ_WRITE;
	m.type = type;
	r.call_case = VCL__REQUEST__CALL_IMAGE_FORMATS;
	r.image_formats = &m;
	gen_put(g, &r, NULL, 0);
}

/* WriteImage (data: packed bytes) or ReadImage (data NULL) of a region. */
static void
gen_rw_image(struct gen *g, uint64_t mem, const uint64_t org[3],
    const uint64_t reg[3], const void *data, size_t n, uint64_t *wait,
    size_t nwait, uint64_t event)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteImage		w = VCL__WRITE_IMAGE__INIT;
	Vcl__ReadImage		rd = VCL__READ_IMAGE__INIT;
	Vcl__Enqueue		e;

	gen_enq(&e, 2, event, wait, nwait);
	if (data != NULL) {
		w.q = &e;
		w.mem = mem;
		w.n_origin = w.n_region = 3;
		w.origin = (uint64_t *)org;
		w.region = (uint64_t *)reg;
		r.call_case = VCL__REQUEST__CALL_WRITE_IMAGE;
		r.write_image = &w;
	} else {
		rd.q = &e;
		rd.mem = mem;
		rd.n_origin = rd.n_region = 3;
		rd.origin = (uint64_t *)org;
		rd.region = (uint64_t *)reg;
		r.call_case = VCL__REQUEST__CALL_READ_IMAGE;
		r.read_image = &rd;
	}
	gen_put(g, &r, data, data != NULL ? n : 0);
}

/* CopyImage of a region from src to dst. */
static void
gen_copy_image(struct gen *g, uint64_t src, uint64_t dst,
    const uint64_t so[3], const uint64_t dof[3], const uint64_t reg[3],
    uint64_t event)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__CopyImage	m = VCL__COPY_IMAGE__INIT;
	Vcl__Enqueue	e;

	gen_enq(&e, 2, event, NULL, 0);
	m.q = &e;
	m.src = src;
	m.dst = dst;
	m.n_src_origin = m.n_dst_origin = m.n_region = 3;
	m.src_origin = (uint64_t *)so;
	m.dst_origin = (uint64_t *)dof;
	m.region = (uint64_t *)reg;
	r.call_case = VCL__REQUEST__CALL_COPY_IMAGE;
	r.copy_image = &m;
	gen_put(g, &r, NULL, 0);
}

/* FillImage of a region with a 16-byte color. */
static void
gen_fill_image(struct gen *g, uint64_t mem, const void *color,
    const uint64_t org[3], const uint64_t reg[3], uint64_t event)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__FillImage	m = VCL__FILL_IMAGE__INIT;
	Vcl__Enqueue	e;

	gen_enq(&e, 2, event, NULL, 0);
	m.q = &e;
	m.mem = mem;
	m.color.data = (uint8_t *)color;
	m.color.len = 16;
	m.n_origin = m.n_region = 3;
	m.origin = (uint64_t *)org;
	m.region = (uint64_t *)reg;
	r.call_case = VCL__REQUEST__CALL_FILL_IMAGE;
	r.fill_image = &m;
	gen_put(g, &r, NULL, 0);
}

/* CopyImageBuffer: an image region to a buffer at off, or back. */
static void
gen_copy_image_buffer(struct gen *g, uint64_t img, uint64_t buf,
    const uint64_t org[3], const uint64_t reg[3], uint64_t off, int to_buf,
    uint64_t *wait, size_t nwait, uint64_t event)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CopyImageBuffer	m = VCL__COPY_IMAGE_BUFFER__INIT;
	Vcl__Enqueue		e;

	gen_enq(&e, 2, event, wait, nwait);
	m.q = &e;
	m.image = img;
	m.buffer = buf;
	m.n_origin = m.n_region = 3;
	m.origin = (uint64_t *)org;
	m.region = (uint64_t *)reg;
	m.offset = off;
	m.to_buffer = to_buf;
	r.call_case = VCL__REQUEST__CALL_COPY_IMAGE_BUFFER;
	r.copy_image_buffer = &m;
	gen_put(g, &r, NULL, 0);
}

/* A sub-buffer of parent: size bytes at origin. */
static void
gen_sub_buffer(struct gen *g, uint64_t id, uint64_t parent, uint64_t flags,
    uint64_t origin, uint64_t size)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateSubBuffer	m = VCL__CREATE_SUB_BUFFER__INIT;

	m.id = id;
	m.parent = parent;
	m.flags = flags;
	m.origin = origin;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_CREATE_SUB_BUFFER;
	r.create_sub_buffer = &m;
	gen_put(g, &r, NULL, 0);
}

/*
 * WriteBufferRect (data: the region packed) or ReadBufferRect (data NULL)
 * of mem, pitches row and slice (0: computed).
 */
static void
gen_rw_rect(struct gen *g, uint64_t mem, const uint64_t org[3],
    const uint64_t reg[3], uint64_t row, uint64_t slice, const void *data,
    size_t n, uint64_t *wait, size_t nwait, uint64_t event)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBufferRect	w = VCL__WRITE_BUFFER_RECT__INIT;
	Vcl__ReadBufferRect	rd = VCL__READ_BUFFER_RECT__INIT;
	Vcl__Enqueue		e;

	gen_enq(&e, 2, event, wait, nwait);
	if (data != NULL) {
		w.q = &e;
		w.mem = mem;
		w.n_origin = w.n_region = 3;
		w.origin = (uint64_t *)org;
		w.region = (uint64_t *)reg;
		w.row_pitch = row;
		w.slice_pitch = slice;
		r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER_RECT;
		r.write_buffer_rect = &w;
	} else {
		rd.q = &e;
		rd.mem = mem;
		rd.n_origin = rd.n_region = 3;
		rd.origin = (uint64_t *)org;
		rd.region = (uint64_t *)reg;
		rd.row_pitch = row;
		rd.slice_pitch = slice;
		r.call_case = VCL__REQUEST__CALL_READ_BUFFER_RECT;
		r.read_buffer_rect = &rd;
	}
	gen_put(g, &r, data, data != NULL ? n : 0);
}

/* CopyBufferRect of a region, computed pitches on both sides. */
static void
gen_copy_rect(struct gen *g, uint64_t src, uint64_t dst,
    const uint64_t so[3], const uint64_t dof[3], const uint64_t reg[3],
    uint64_t event)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CopyBufferRect	m = VCL__COPY_BUFFER_RECT__INIT;
	Vcl__Enqueue		e;

	gen_enq(&e, 2, event, NULL, 0);
	m.q = &e;
	m.src = src;
	m.dst = dst;
	m.n_src_origin = m.n_dst_origin = m.n_region = 3;
	m.src_origin = (uint64_t *)so;
	m.dst_origin = (uint64_t *)dof;
	m.region = (uint64_t *)reg;
	m.src_row_pitch = 16;
	m.dst_row_pitch = 32;
	r.call_case = VCL__REQUEST__CALL_COPY_BUFFER_RECT;
	r.copy_buffer_rect = &m;
	gen_put(g, &r, NULL, 0);
}

/* GetBinary of a program for device 0. */
static void
gen_get_binary(struct gen *g, uint64_t prog)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetBinary	m = VCL__GET_BINARY__INIT;

	m.program = prog;
	m.device = 0;
	r.call_case = VCL__REQUEST__CALL_GET_BINARY;
	r.get_binary = &m;
	gen_put(g, &r, NULL, 0);
}

/*
 * CreateProgramFrom on device 0: from a binary of n bytes, or built-in
 * kernels by name, or IL (then for the context's devices).
 */
static void
gen_program_from(struct gen *g, uint64_t id, const void *bin, size_t n,
    const char *builtin, const void *il, size_t nil)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateProgramFrom	m = VCL__CREATE_PROGRAM_FROM__INIT;
	ProtobufCBinaryData	b;
	uint32_t		dev = 0;

	m.id = id;
	m.context = 1;
	if (il == NULL) {
		m.n_devices = 1;
		m.devices = &dev;
	}
	if (bin != NULL) {
		b.data = (uint8_t *)bin;
		b.len = n;
		m.n_binaries = 1;
		m.binaries = &b;
	}
	m.builtin_kernels = (char *)builtin;
	if (il != NULL) {
		m.has_il = 1;
		m.il.data = (uint8_t *)il;
		m.il.len = nil;
	}
	r.call_case = VCL__REQUEST__CALL_CREATE_PROGRAM_FROM;
	r.create_program_from = &m;
	gen_put(g, &r, NULL, 0);
}

/* BuildProgram of a program made from a binary (no options). */
static void
gen_build(struct gen *g, uint64_t prog)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	b = VCL__BUILD_PROGRAM__INIT;

	b.program = prog;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &b;
	gen_put(g, &r, NULL, 0);
}

/* LinkProgram id from compiled programs, with link options o. */
static void
gen_link(struct gen *g, uint64_t id, uint64_t *progs, size_t n,
    const char *o)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__LinkProgram	m = VCL__LINK_PROGRAM__INIT;

	m.id = id;
	m.context = 1;
	m.options = (char *)o;
	m.n_programs = n;
	m.programs = progs;
	r.call_case = VCL__REQUEST__CALL_LINK_PROGRAM;
	r.link_program = &m;
	gen_put(g, &r, NULL, 0);
}

/* SetSpecConstant of a program. */
static void
gen_spec(struct gen *g, uint64_t prog, uint32_t spec, const void *v,
    size_t n)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__SetSpecConstant	m = VCL__SET_SPEC_CONSTANT__INIT;

	m.program = prog;
	m.spec_id = spec;
	m.value.data = (uint8_t *)v;
	m.value.len = n;
	r.call_case = VCL__REQUEST__CALL_SET_SPEC_CONSTANT;
	r.set_spec_constant = &m;
	gen_put(g, &r, NULL, 0);
}

/* Release a list of objects of one kind, in the order given. */
static void
gen_release_list(struct gen *g, Vcl__Kind kind, const uint64_t *ids,
    size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		gen_release(g, kind, ids[i]);
}

/* The image dimensions the image seeds use. */
static const uint64_t	gen_o0[3] = { 0, 0, 0 }, gen_o1[3] = { 1, 1, 0 };
static const uint64_t	gen_r22[3] = { 2, 2, 1 }, gen_r44[3] = { 4, 4, 1 };
static const uint64_t	gen_r8[3] = { 8, 1, 1 };

/*
 * Images of every type (2D with initial bytes and zeroed, 1D, 1D over a
 * buffer, 1D and 2D arrays, 3D), the formats the node has, two samplers,
 * every image command, copies between images and buffers, and kernels
 * that take each image type and a sampler.
 */
static void
gen_images(struct gen *g)
{
	static const uint64_t	d2[4] = { 4, 4, 0, 0 }, d1[4] = { 8, 0, 0, 0 },
				d1b[4] = { 16, 0, 0, 0 }, d1a[4] = { 4, 0, 0, 2 },
				d2a[4] = { 4, 4, 0, 2 }, d3[4] = { 4, 4, 2, 0 };
	static const uint64_t	ids[] = { 20, 21, 22, 23, 24, 25, 26, 3, 4 };
	Vcl__KernelArg	a[7], *ap[7] = {
		&a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6]
	};
	float		px[4 * 4 * 4], col[4] = { 0.5f, 1, 2, 4 };
	uint64_t	w[1] = { 110 };
	size_t		k;

	for (k = 0; k < sizeof px / sizeof px[0]; k++)
		px[k] = (float)k;
	gen_setup(g, 3, NULL, 1);
	gen_image_formats(g, CL_MEM_OBJECT_IMAGE2D);
	gen_image_formats(g, CL_MEM_OBJECT_IMAGE1D_BUFFER);
	gen_image(g, 20, CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_FLOAT, d2, 0, px,
	    sizeof px);
	gen_image(g, 21, CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_FLOAT, d2, 0,
	    NULL, 0);
	gen_image(g, 22, CL_MEM_OBJECT_IMAGE1D, CL_R, CL_FLOAT, d1, 0, NULL,
	    0);
	gen_image(g, 23, CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_R, CL_FLOAT, d1b, 3,
	    NULL, 0);
	gen_image(g, 24, CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_RGBA, CL_UNORM_INT8,
	    d1a, 0, NULL, 0);
	gen_image(g, 25, CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_R, CL_FLOAT, d2a, 0,
	    NULL, 0);
	gen_image(g, 26, CL_MEM_OBJECT_IMAGE3D, CL_RGBA, CL_FLOAT, d3, 0,
	    NULL, 0);
	gen_sampler(g, 30, 0, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST);
	gen_sampler(g, 31, 1, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR);
	gen_info(g, VCL__GET_INFO__WHAT__MEM, 23, CL_MEM_SIZE);

	gen_rw_image(g, 20, gen_o1, gen_r22, px, 2 * 2 * 16, NULL, 0, 101);
	gen_copy_image(g, 20, 21, gen_o0, gen_o0, gen_r44, 102);
	gen_fill_image(g, 21, col, gen_o1, gen_r22, 103);
	gen_rw_image(g, 21, gen_o0, gen_r44, NULL, 0, NULL, 0, 104);
	gen_copy_image_buffer(g, 21, 3, gen_o0, gen_r22, 0, 1, NULL, 0, 105);
	gen_copy_image_buffer(g, 22, 3, gen_o0, gen_r8, 32, 0, NULL, 0, 106);
	gen_rw_image(g, 22, gen_o0, gen_r8, NULL, 0, NULL, 0, 107);

	gen_kernel(g, 6, "img2d");
	gen_kernel(g, 7, "imgs");
	gen_info(g, VCL__GET_INFO__WHAT__KERNEL_ARG, 6,
	    CL_KERNEL_ARG_ACCESS_QUALIFIER);
	gen_arg_image(&a[0], 0, 20);
	gen_arg_sampler(&a[1], 1, 30);
	gen_arg_image(&a[2], 2, 21);
	gen_arg_mem(&a[3], 3, 3);
	gen_ndrange(g, 6, 4, 0, ap, 4, NULL, 0, 108);
	gen_arg_image(&a[0], 0, 22);
	gen_arg_image(&a[1], 1, 23);
	gen_arg_image(&a[2], 2, 24);
	gen_arg_image(&a[3], 3, 25);
	gen_arg_image(&a[4], 4, 26);
	gen_arg_sampler(&a[5], 5, 31);
	gen_arg_mem(&a[6], 6, 4);
	gen_ndrange(g, 7, 1, 0, ap, 7, NULL, 0, 109);
	gen_marker(g, 0, NULL, 0, 110);
	gen_rw_image(g, 21, gen_o0, gen_r44, NULL, 0, w, 1, 111);
	gen_read_buffer(g, 4, 0, 4, w, 1, 0);
	gen_finish(g, 0);
	for (k = 100; k <= 111; k++)
		gen_release(g, VCL__KIND__KIND_EVENT, k);
	gen_release(g, VCL__KIND__KIND_KERNEL, 6);
	gen_release(g, VCL__KIND__KIND_KERNEL, 7);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 5);
	gen_release(g, VCL__KIND__KIND_SAMPLER, 30);
	gen_release(g, VCL__KIND__KIND_SAMPLER, 31);
	gen_release_list(g, VCL__KIND__KIND_MEM, ids, sizeof ids /
	    sizeof ids[0]);
	gen_release(g, VCL__KIND__KIND_QUEUE, 2);
	gen_release(g, VCL__KIND__KIND_CONTEXT, 1);
	gen_stats(g);
}

/*
 * Images and samplers released in awkward orders: while set on a kernel
 * (then launched again), a buffer under a 1D buffer image first, and an
 * image, its buffer and the queue while commands on them are held on a
 * user event set only afterwards.
 */
static void
gen_image_release(struct gen *g)
{
	static const uint64_t	d2[4] = { 4, 4, 0, 0 }, d1b[4] = { 8, 0, 0, 0 };
	Vcl__KernelArg	a[4], *ap[4] = { &a[0], &a[1], &a[2], &a[3] };
	float		px[2 * 2 * 4] = { 1, 2, 3, 4 };
	uint64_t	w101[1] = { 101 };

	gen_setup(g, 3, NULL, 0);
	gen_image(g, 20, CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_FLOAT, d2, 0,
	    NULL, 0);
	gen_image(g, 21, CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_FLOAT, d2, 0,
	    NULL, 0);
	gen_buffer(g, 8, CL_MEM_READ_WRITE, 64, NULL);
	gen_image(g, 23, CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_R, CL_FLOAT, d1b, 8,
	    NULL, 0);
	gen_release(g, VCL__KIND__KIND_MEM, 8);	/* the image keeps it */
	gen_sampler(g, 30, 1, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST);
	gen_kernel(g, 6, "img2d");
	gen_arg_image(&a[0], 0, 20);
	gen_arg_sampler(&a[1], 1, 30);
	gen_arg_image(&a[2], 2, 21);
	gen_arg_null(&a[3], 3);
	gen_ndrange(g, 6, 1, 0, ap, 4, NULL, 0, 102);
	gen_release(g, VCL__KIND__KIND_SAMPLER, 30);
	gen_release(g, VCL__KIND__KIND_MEM, 20);
	gen_ndrange(g, 6, 1, 0, NULL, 0, NULL, 0, 103);
	gen_arg_image(&a[0], 0, 21);
	gen_ndrange(g, 6, 2, 0, ap, 1, NULL, 0, 104);
	gen_release(g, VCL__KIND__KIND_MEM, 21);

	gen_user_event(g, 101);
	gen_image(g, 22, CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_FLOAT, d2, 0,
	    NULL, 0);
	gen_rw_image(g, 22, gen_o0, gen_r22, px, sizeof px, w101, 1, 105);
	gen_copy_image_buffer(g, 22, 3, gen_o0, gen_r22, 0, 1, w101, 1, 106);
	gen_rw_image(g, 23, gen_o0, gen_r8, NULL, 0, w101, 1, 107);
	gen_ndrange(g, 6, 1, 0, NULL, 0, w101, 1, 108);
	gen_release(g, VCL__KIND__KIND_MEM, 22);
	gen_release(g, VCL__KIND__KIND_MEM, 3);
	gen_release(g, VCL__KIND__KIND_MEM, 23);
	gen_release(g, VCL__KIND__KIND_KERNEL, 6);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 5);
	gen_release(g, VCL__KIND__KIND_QUEUE, 2);
	gen_set_status(g, 101, CL_COMPLETE);
	gen_release_all(g, 100, 108);
}

/*
 * Sub-buffers (two regions, one of a sub-buffer and one past the end
 * refused) and rectangles: rect writes, reads and copies of buffers and
 * sub-buffers; a sub-buffer set on a kernel outlives its released parent;
 * a rect read held on a user event while its sub-buffer is released.
 */
static void
gen_subbuf(struct gen *g)
{
	static const uint64_t	o0[3] = { 0, 0, 0 }, o1[3] = { 4, 1, 0 };
	static const uint64_t	r1[3] = { 8, 2, 1 }, r2[3] = { 4, 2, 2 };
	Vcl__KernelArg	a[3], *ap[3] = { &a[0], &a[1], &a[2] };
	uint8_t		rect[8 * 2 * 1];
	int32_t		v = 3;
	uint64_t	w101[1] = { 101 };
	size_t		k;

	for (k = 0; k < sizeof rect; k++)
		rect[k] = (uint8_t)k;
	gen_setup(g, 0, NULL, 0);
	gen_buffer(g, 8, CL_MEM_READ_WRITE, 512, NULL);
	gen_sub_buffer(g, 40, 8, CL_MEM_READ_WRITE, 0, 128);
	gen_sub_buffer(g, 41, 8, CL_MEM_READ_ONLY, 256, 128);
	gen_sub_buffer(g, 42, 40, CL_MEM_READ_WRITE, 0, 64);
	gen_sub_buffer(g, 43, 8, CL_MEM_READ_WRITE, 384, 256);
	gen_info(g, VCL__GET_INFO__WHAT__MEM, 41, CL_MEM_OFFSET);
	gen_rw_rect(g, 3, o1, r1, 16, 0, rect, sizeof rect, NULL, 0, 102);
	gen_rw_rect(g, 40, o0, r1, 0, 0, rect, sizeof rect, NULL, 0, 0);
	gen_rw_rect(g, 3, o0, r2, 16, 64, NULL, 0, NULL, 0, 103);
	gen_copy_rect(g, 3, 8, o0, o1, r2, 104);
	gen_copy_rect(g, 8, 41, o1, o0, r2, 105);
	gen_write_buffer(g, 41, 8, &v, sizeof v, 106);
	gen_read_buffer(g, 40, 0, 64, NULL, 0, 107);

	gen_kernel(g, 7, "fill");
	gen_arg_mem(&a[0], 0, 40);
	gen_arg_mem(&a[1], 1, 41);
	gen_arg_value(&a[2], 2, &v, sizeof v);
	gen_ndrange(g, 7, 4, 0, ap, 3, NULL, 0, 108);
	gen_release(g, VCL__KIND__KIND_MEM, 8);	/* the sub-buffers keep it */
	gen_ndrange(g, 7, 4, 0, NULL, 0, NULL, 0, 109);
	gen_user_event(g, 101);
	gen_rw_rect(g, 41, o0, r1, 16, 0, NULL, 0, w101, 1, 110);
	gen_copy_fill(g, 111);
	gen_release(g, VCL__KIND__KIND_MEM, 41);
	gen_release(g, VCL__KIND__KIND_MEM, 40);
	gen_set_status(g, 101, CL_COMPLETE);
	gen_finish(g, 0);
	gen_release(g, VCL__KIND__KIND_MEM, 42);
	gen_release(g, VCL__KIND__KIND_MEM, 43);
	gen_release_all(g, 100, 111);
}

/*
 * Programs from a binary the server gave (GetBinary, then CreateProgramFrom
 * with it, built, a kernel of it run after the program is released), a
 * binary it never made, built-in kernels it does not have, IL and its
 * specialization constants, and two programs compiled apart and linked
 * (one input released after the link, a link of a released input).
 */
static void
gen_progbin(struct gen *g)
{
	static const uint8_t	il[20] = {
		0x03, 0x02, 0x23, 0x07, 0x00, 0x00, 0x01, 0x00,
	};
	static const char	junk[] = "\x7f" "ELF not a binary";
	Vcl__KernelArg	a[3], *ap[3] = { &a[0], &a[1], &a[2] };
	int32_t		v = 4, spec = 1;
	uint64_t	in[2] = { 54, 55 }, lib[1] = { 54 };

	gen_setup(g, 0, NULL, 0);
	gen_get_binary(g, 5);
	gen_program_from(g, 50, FUZZ_BINARY, strlen(FUZZ_BINARY), NULL, NULL,
	    0);
	gen_build(g, 50);
	gen_kernel_of(g, 60, 50, "fill");
	gen_info(g, VCL__GET_INFO__WHAT__PROGRAM, 50, CL_PROGRAM_BINARY_SIZES);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 50);
	gen_arg_mem(&a[0], 0, 3);
	gen_arg_mem(&a[1], 1, 4);
	gen_arg_value(&a[2], 2, &v, sizeof v);
	gen_ndrange(g, 60, 8, 0, ap, 3, NULL, 0, 101);
	gen_program_from(g, 51, junk, sizeof junk - 1, NULL, NULL, 0);
	gen_program_from(g, 52, NULL, 0, "no_such_kernel", NULL, 0);
	gen_program_from(g, 53, NULL, 0, NULL, il, sizeof il);
	gen_spec(g, 53, 0, &spec, sizeof spec);
	gen_spec(g, 5, 1, &spec, sizeof spec);

	gen_program_id(g, 54, 4, NULL, 1);
	gen_program_id(g, 55, 5, "-DN=4", 1);
	gen_link(g, 56, in, 2, NULL);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 55);
	gen_kernel_of(g, 61, 56, "use");
	gen_arg_mem(&a[0], 0, 3);
	gen_ndrange(g, 61, 4, 0, ap, 1, NULL, 0, 102);
	gen_get_binary(g, 56);
	gen_link(g, 57, lib, 1, "-create-library");
	gen_link(g, 58, in, 2, "-cl-fast-relaxed-math");
	gen_link(g, 59, lib, 1, "-no-such-option");
	gen_read_buffer(g, 3, 0, 16, NULL, 0, 103);
	gen_finish(g, 0);
	gen_release(g, VCL__KIND__KIND_KERNEL, 60);
	gen_release(g, VCL__KIND__KIND_KERNEL, 61);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 51);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 52);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 53);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 54);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 56);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 57);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 58);
	gen_release(g, VCL__KIND__KIND_PROGRAM, 59);
	gen_release_all(g, 100, 103);
}

/*
 * A session that ends with image, rect and sub-buffer work held on a
 * user event never set, a linked program and a sampler set on a kernel,
 * nothing released (the teardown does it).
 */
static void
gen_abandon_images(struct gen *g)
{
	static const uint64_t	d2[4] = { 4, 4, 0, 0 }, o0[3] = { 0, 0, 0 };
	static const uint64_t	r1[3] = { 8, 2, 1 };
	Vcl__KernelArg	a[4], *ap[4] = { &a[0], &a[1], &a[2], &a[3] };
	float		col[4] = { 1, 1, 1, 1 };
	uint64_t	w101[1] = { 101 }, in[2] = { 54, 55 };

	gen_setup(g, 3, NULL, 0);
	gen_image(g, 20, CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_FLOAT, d2, 0,
	    NULL, 0);
	gen_sampler(g, 30, 0, CL_ADDRESS_NONE, CL_FILTER_NEAREST);
	gen_sub_buffer(g, 40, 3, CL_MEM_READ_WRITE, 0, 64);
	gen_kernel(g, 6, "img2d");
	gen_user_event(g, 101);
	gen_arg_image(&a[0], 0, 20);
	gen_arg_sampler(&a[1], 1, 30);
	gen_arg_image(&a[2], 2, 20);
	gen_arg_mem(&a[3], 3, 40);
	gen_ndrange(g, 6, 1, 0, ap, 4, w101, 1, 102);
	gen_fill_image(g, 20, col, gen_o0, gen_r22, 0);
	gen_rw_image(g, 20, gen_o0, gen_r44, NULL, 0, w101, 1, 103);
	gen_rw_rect(g, 40, o0, r1, 0, 0, NULL, 0, w101, 1, 104);
	gen_copy_image_buffer(g, 20, 40, gen_o0, gen_r22, 0, 1, w101, 1, 105);
	gen_program_id(g, 54, 4, NULL, 1);
	gen_program_id(g, 55, 5, NULL, 1);
	gen_link(g, 56, in, 2, NULL);
	gen_release(g, VCL__KIND__KIND_SAMPLER, 30);
	gen_release(g, VCL__KIND__KIND_MEM, 20);
	gen_release(g, VCL__KIND__KIND_MEM, 3);
}

/*
 * Sub-devices: a partition counted, one made (by counts: one sub-device,
 * id 10, on any device), a context 11 and queue 12 on it, its info, all
 * released.
 */
static void
gen_subdev(struct gen *g)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateSubDevices	m = VCL__CREATE_SUB_DEVICES__INIT;
	Vcl__CreateContext	cc = VCL__CREATE_CONTEXT__INIT;
	Vcl__CreateQueue	cq = VCL__CREATE_QUEUE__INIT;
	int64_t			eq[2] = { CL_DEVICE_PARTITION_EQUALLY, 1 };
	int64_t			cnt[3] = { CL_DEVICE_PARTITION_BY_COUNTS, 1,
				    CL_DEVICE_PARTITION_BY_COUNTS_LIST_END };
	uint64_t		id = 10;
	uint32_t		dev = 0x80000000u | 10;

	gen_hello(g);
	gen_context(g);
	m.device = 0;
	m.properties = eq;
	m.n_properties = 2;
	r.call_case = VCL__REQUEST__CALL_CREATE_SUB_DEVICES;
	r.create_sub_devices = &m;
	gen_put(g, &r, NULL, 0);
	m.properties = cnt;
	m.n_properties = 3;
	m.ids = &id;
	m.n_ids = 1;
	gen_put(g, &r, NULL, 0);
	cc.id = 11;
	cc.n_devices = 1;
	cc.devices = &dev;
	r.call_case = VCL__REQUEST__CALL_CREATE_CONTEXT;
	r.create_context = &cc;
	gen_put(g, &r, NULL, 0);
	cq.id = 12;
	cq.context = 11;
	cq.device = dev;
	r.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	r.create_queue = &cq;
	gen_put(g, &r, NULL, 0);
	gen_info(g, VCL__GET_INFO__WHAT__DEVICE, dev,
	    CL_DEVICE_MAX_COMPUTE_UNITS);
	gen_release(g, VCL__KIND__KIND_QUEUE, 12);
	gen_release(g, VCL__KIND__KIND_CONTEXT, 11);
	gen_release(g, VCL__KIND__KIND_DEVICE, 10);
	gen_release(g, VCL__KIND__KIND_CONTEXT, 1);
	gen_stats(g);
}

/*
 * Quiet events (named only in wait lists here) on writes and a launch,
 * waited on by a read; a kernel's sub-group info with its ND-range input.
 */
static void
gen_quiet(struct gen *g)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	m = VCL__WRITE_BUFFER__INIT;
	Vcl__GetInfo		gi = VCL__GET_INFO__INIT;
	Vcl__Enqueue		e;
	int32_t			v[4] = { 1, 2, 3, 4 };
	uint64_t		w[2] = { 110, 111 }, nd[1] = { 64 };

	gen_setup(g, 0, NULL, 0);
	gen_kernel(g, 6, "k");
	gen_enq(&e, 2, 110, NULL, 0);
	e.has_quiet = 1;
	e.quiet = 1;
	m.q = &e;
	m.mem = 3;
	m.offset = 0;
	m.size = sizeof v;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &m;
	gen_put(g, &r, v, sizeof v);
	gen_enq(&e, 2, 111, w, 1);
	e.has_quiet = 1;
	e.quiet = 1;
	m.offset = sizeof v;
	gen_put(g, &r, v, sizeof v);
	gen_read_buffer(g, 3, 0, 2 * sizeof v, w, 2, 112);
	gi.what = VCL__GET_INFO__WHAT__KERNEL_SUB_GROUP;
	gi.id = 6;
	gi.param = CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE;
	gi.has_device = 1;
	gi.device = 0;
	gi.has_input = 1;
	gi.input.data = (uint8_t *)nd;
	gi.input.len = sizeof nd;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &gi;
	gen_put(g, &r, NULL, 0);
	gen_finish(g, 0);
	gen_release(g, VCL__KIND__KIND_EVENT, 110);
	gen_release(g, VCL__KIND__KIND_EVENT, 111);
	gen_release(g, VCL__KIND__KIND_EVENT, 112);
	gen_release_all(g, 100, 100);
}

/*
 * What only a peer or a transport may send, from a client: a transport's
 * control message, and a write whose bulk is to come out of band (each
 * ends the session).
 */
static void
gen_transport(struct gen *g, int oob)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__TransportCtl	c = VCL__TRANSPORT_CTL__INIT;
	Vcl__WriteBuffer	m = VCL__WRITE_BUFFER__INIT;
	Vcl__Enqueue		e;
	uint8_t			d[8] = { 1, 0, 0, 0, 7, 0, 0, 0 };

	gen_hello(g);
	if (!oob) {
		c.transport = (char *)"sock";
		c.data.data = d;
		c.data.len = sizeof d;
		r.call_case = VCL__REQUEST__CALL_TRANSPORT_CTL;
		r.transport_ctl = &c;
		gen_put(g, &r, NULL, 0);
		return;
	}
	gen_context(g);
	gen_queue(g, 2, 0);
	gen_buffer(g, 3, CL_MEM_READ_WRITE, 64, NULL);
	gen_enq(&e, 2, 0, NULL, 0);
	m.q = &e;
	m.mem = 3;
	m.size = 64;
	r.has_bulk_xfer = r.has_bulk_size = 1;
	r.bulk_xfer = 1;
	r.bulk_size = 64;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &m;
	gen_put(g, &r, NULL, 0);
}

#define WC_CHUNK	4096			/* fuzz_session's --write-chunk */
#define WC_BIG		(3 * WC_CHUNK + 5)	/* 3 chunks and a short part */

/* WriteBuffer of n bytes at off on queue q, after the events in wait. */
static void
gen_write_on(struct gen *g, uint64_t q, uint64_t mem, size_t off,
    const void *data, size_t n, uint64_t *wait, size_t nwait, uint64_t event)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	m = VCL__WRITE_BUFFER__INIT;
	Vcl__Enqueue		e;

	gen_enq(&e, q, event, wait, nwait);
	m.q = &e;
	m.mem = mem;
	m.offset = off;
	m.size = n;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &m;
	gen_put(g, &r, data, n);
}

/*
 * Writes of several chunks (fuzz_session's chunk is 4 KiB), copied as
 * their bytes come: one with an event and a read right behind it, one
 * with a wait list and one on a profiling queue (whole), one behind a
 * write held on a user event, and the session's end in the middle of a
 * write's bytes, chunks in flight (an odd-sized seed: sent in pieces).
 */
static void
gen_wchunk(struct gen *g)
{
	static uint8_t	d[WC_BIG];
	uint64_t	w100[1] = { 100 }, w103[1] = { 103 };
	size_t		i;

	for (i = 0; i < sizeof d; i++)
		d[i] = (uint8_t)(i ^ (i >> 8));
	gen_hello(g);
	gen_context(g);
	gen_queue(g, 2, 0);
	gen_queue(g, 9, 1);
	gen_buffer(g, 8, CL_MEM_READ_WRITE, WC_BIG + 64, NULL);
	gen_write_on(g, 2, 8, 16, d, WC_BIG, NULL, 0, 100);
	gen_read_buffer(g, 8, 16, WC_BIG, NULL, 0, 101);
	gen_write_on(g, 2, 8, 0, d, WC_BIG, w100, 1, 102);
	gen_write_on(g, 9, 8, 7, d, WC_BIG, NULL, 0, 0);
	gen_user_event(g, 103);
	gen_write_on(g, 2, 8, 0, d, WC_CHUNK, w103, 1, 0);
	gen_write_on(g, 2, 8, 0, d, WC_BIG, NULL, 0, 104);
	gen_set_status(g, 103, CL_COMPLETE);
	gen_finish(g, 0);
	gen_write_on(g, 2, 8, 0, d, WC_BIG, NULL, 0, 0);
	/* Cut in its last chunk, the seed's length odd. */
	g->b.len -= WC_CHUNK / 2 + 1 - g->b.len % 2;
}

/* A PeerPush on a peer link: key 0 is the victim's (fuzz_session.c). */
static void
gen_peer_push(struct gen *g, uint64_t sid, uint64_t key, uint64_t xfer,
    int32_t status, const void *data, size_t n)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerPush	m = VCL__PEER_PUSH__INIT;

	m.session = sid;
	m.key = key;
	m.transfer = xfer;
	m.status = status;
	r.call_case = VCL__REQUEST__CALL_PEER_PUSH;
	r.peer_push = &m;
	gen_put(g, &r, data, n);
}

/* A PeerEvent on a peer link: key 0 is the victim's. */
static void
gen_peer_event(struct gen *g, uint64_t sid, uint64_t key, uint64_t proxy,
    int32_t status)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerEvent	m = VCL__PEER_EVENT__INIT;

	m.session = sid;
	m.key = key;
	m.proxy = proxy;
	m.status = status;
	r.call_case = VCL__REQUEST__CALL_PEER_EVENT;
	r.peer_event = &m;
	gen_put(g, &r, NULL, 0);
}

/*
 * A peer link (Hello.peer) against the victim session fuzz_session opens
 * for it (buffer 3, transfers 77 of 4096 bytes and 78 of 64, proxy 20):
 * pushes of the right and a wrong size, early ones and a second one, a
 * failure, a push and an event naming what is no transfer or proxy, an
 * event for the proxy, and a push of a wrong key.
 */
static void
gen_peer(struct gen *g)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Hello	m = VCL__HELLO__INIT;
	static uint8_t	d[4096];
	size_t		i;

	for (i = 0; i < sizeof d; i++)
		d[i] = (uint8_t)(i * 7);
	m.version = VCL_PROTOCOL_VERSION;
	m.client_name = (char *)"gen-peer";
	m.has_peer = m.peer = 1;
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &m;
	gen_put(g, &r, NULL, 0);
	gen_peer_push(g, 0, 0, 77, CL_SUCCESS, d, sizeof d);
	gen_peer_push(g, 0, 0, 78, CL_SUCCESS, d, 32);
	gen_peer_push(g, 0, 0, 99, CL_SUCCESS, d, 16);
	gen_peer_push(g, 0, 0, 99, CL_SUCCESS, d, 16);
	gen_peer_push(g, 0, 0, 98, CL_OUT_OF_RESOURCES, NULL, 0);
	gen_peer_push(g, 0, 0, 3, CL_SUCCESS, d, 64);
	gen_peer_event(g, 0, 0, 3, CL_COMPLETE);
	gen_peer_event(g, 0, 0, 20, CL_COMPLETE);
	gen_peer_event(g, 0, 0, 20, -5);
	gen_peer_event(g, 0, 0, 21, CL_COMPLETE);
	gen_peer_push(g, 1, 1, 77, CL_SUCCESS, d, 16);
}

/* MigrateIn of buffer 3's first n bytes on queue 2, from source. */
static void
gen_migrate_in(struct gen *g, uint64_t event, uint64_t xfer, size_t n,
    const char *source)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__MigrateIn	m = VCL__MIGRATE_IN__INIT;
	Vcl__Enqueue	e;

	gen_enq(&e, 2, event, NULL, 0);
	m.q = &e;
	m.mem = 3;
	m.size = n;
	m.transfer = xfer;
	m.source = (char *)source;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	r.migrate_in = &m;
	gen_put(g, &r, NULL, 0);
}

/* A proxy event of context 1 that source completes. */
static void
gen_proxy(struct gen *g, uint64_t id, const char *source)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateProxyEvent	m = VCL__CREATE_PROXY_EVENT__INIT;

	m.id = id;
	m.context = 1;
	m.source = (char *)source;
	r.call_case = VCL__REQUEST__CALL_CREATE_PROXY_EVENT;
	r.create_proxy_event = &m;
	gen_put(g, &r, NULL, 0);
}

/* PeerFail of ids and a source (either may be absent). */
static void
gen_peer_fail(struct gen *g, uint64_t *ids, size_t n, const char *source)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerFail	m = VCL__PEER_FAIL__INIT;

	m.ids = ids;
	m.n_ids = n;
	m.source = (char *)source;
	m.status = CL_DEVICE_NOT_AVAILABLE;
	r.call_case = VCL__REQUEST__CALL_PEER_FAIL;
	r.peer_fail = &m;
	gen_put(g, &r, NULL, 0);
}

/*
 * A client's side of migrations with nobody pushing: transfers and a
 * proxy waiting on a source, failed by id and by a lost source (before
 * and after they came), a source too long to keep, and a marker behind
 * the proxy.
 */
static void
gen_lost(struct gen *g)
{
	static char	longsrc[300];
	uint64_t	ids[3] = { 77, 99, 120 }, w120[1] = { 120 };

	memset(longsrc, 'h', sizeof longsrc - 1);
	gen_hello(g);
	gen_context(g);
	gen_queue(g, 2, 0);
	gen_buffer(g, 3, CL_MEM_READ_WRITE, 4096, NULL);
	gen_migrate_in(g, 100, 77, 4096, "10.0.0.1:7725");
	gen_migrate_in(g, 101, 78, 64, "10.0.0.2:7725");
	gen_proxy(g, 120, "10.0.0.1:7725");
	gen_proxy(g, 121, "10.0.0.2:7725");
	gen_marker(g, 0, w120, 1, 102);
	gen_peer_fail(g, ids, 3, NULL);
	gen_peer_fail(g, NULL, 0, "10.0.0.2:7725");
	gen_migrate_in(g, 103, 79, 64, "10.0.0.2:7725");
	gen_migrate_in(g, 104, 99, 64, NULL);
	gen_peer_fail(g, NULL, 0, longsrc);
	gen_migrate_in(g, 105, 80, 64, longsrc);
	gen_finish(g, 0);
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
	gen_strand(&g);
	gen_write(&g, argv[1], "gen_strand");
	gen_wchunk(&g);
	gen_write(&g, argv[1], "gen_wchunk");
	gen_build_fail(&g);
	gen_write(&g, argv[1], "gen_build_fail");
	gen_images(&g);
	gen_write(&g, argv[1], "gen_images");
	gen_image_release(&g);
	gen_write(&g, argv[1], "gen_image_release");
	gen_subbuf(&g);
	gen_write(&g, argv[1], "gen_subbuf");
	gen_progbin(&g);
	gen_write(&g, argv[1], "gen_progbin");
	gen_abandon_images(&g);
	gen_write(&g, argv[1], "gen_abandon_images");
	gen_subdev(&g);
	gen_write(&g, argv[1], "gen_subdev");
	gen_quiet(&g);
	gen_write(&g, argv[1], "gen_quiet");
	gen_transport(&g, 0);
	gen_write(&g, argv[1], "gen_transport_ctl");
	gen_transport(&g, 1);
	gen_write(&g, argv[1], "gen_oob");
	gen_peer(&g);
	gen_write(&g, argv[1], "gen_peer");
	gen_lost(&g);
	gen_write(&g, argv[1], "gen_lost");
	vcl_buf_free(&g.b);
	return (0);
}
