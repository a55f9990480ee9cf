/* fuzz_client_gen.c - fuzz_client's seeds: a server's answers to its calls. */

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <CL/cl.h>

#include "vcl_buf.h"
#include "vcl_frame.h"

#include "fuzz_client.h"

/*
 * Each seed is recorded from a run of fuzz_client's call sequence against
 * a server in this process that answers every request the way vclserver
 * would (a Welcome, each reply, a Notify for each command's event right
 * after the request or its reply): the turns it sent, split by FUZZ_TURN.
 * Seeds: gen_client_ok, every call succeeding; gen_client_errors, every
 * reply and event an error and the build failing with a log;
 * gen_client_noisy, two devices, and a keepalive and a Notify of an event
 * nobody made ahead of every answer after the Welcome. The seeds are
 * committed under tests/fuzz/corpus_client/; a test checks this program
 * still writes the same bytes. The run fails when a call of the ok seed
 * fails.
 */

enum gen_mode { GEN_OK, GEN_ERRORS, GEN_NOISY };

struct gen {
	enum gen_mode	 mode;
	struct vcl_buf	 rec;		/* the turns so far */
	struct vcl_buf	 turn;		/* the one being answered */
};

/* Stop on a failure of the generator itself. */
static void
gen_fail(const char *what)
{
	fprintf(stderr, "fuzz_client_gen: %s\n", what);
	exit(1);
}

/* Append one ToClient frame (bulk: n bytes of 0x5a) to the turn. */
static void
gen_put(struct gen *g, Vcl__ToClient *tc, size_t n)
{
	if (vcl_buf_pack(&g->turn, &tc->base, n) != 0 ||
	    vcl_buf_reserve(&g->turn, n) != 0)
		gen_fail("out of memory");
	memset(g->turn.data + g->turn.len, 0x5a, n);
	g->turn.len += n;
}

/* One InfoValue of n bytes at v. */
static void
gen_iv(Vcl__InfoValue *iv, uint32_t param, const void *v, size_t n)
{
	vcl__info_value__init(iv);
	iv->param = param;
	iv->has_value = 1;
	iv->value.data = (uint8_t *)(uintptr_t)v;
	iv->value.len = n;
}

/* The Welcome: one device (two when noisy) that runs the calls. */
static void
gen_welcome(struct gen *g, uint64_t seq)
{
	Vcl__ToClient		 tc = VCL__TO_CLIENT__INIT;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	Vcl__Welcome		 w = VCL__WELCOME__INIT;
	Vcl__DeviceInfo		 di = VCL__DEVICE_INFO__INIT, *devs[2];
	Vcl__InfoValue		 iv[14], *ivp[14];
	static const char	 name[] = "fake device", ver[] =
	    "OpenCL 3.0 fake", ext[] = "cl_khr_icd", none[] = "",
	    cver[] = "OpenCL C 1.2 fake";
	cl_device_type		 type = CL_DEVICE_TYPE_CPU;
	cl_command_queue_properties qp = CL_QUEUE_PROFILING_ENABLE |
	    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
	cl_ulong		 alloc = 1ull << 28, global = 1ull << 30,
	    local = 65536;
	size_t			 wg = 256, wi[3] = { 256, 256, 256 };
	cl_uint			 dims = 3, align = 1024;
	cl_bool			 yes = CL_TRUE;
	size_t			 i = 0;

	gen_iv(&iv[i++], CL_DEVICE_TYPE, &type, sizeof type);
	gen_iv(&iv[i++], CL_DEVICE_NAME, name, sizeof name);
	gen_iv(&iv[i++], CL_DEVICE_VERSION, ver, sizeof ver);
	gen_iv(&iv[i++], CL_DEVICE_OPENCL_C_VERSION, cver, sizeof cver);
	gen_iv(&iv[i++], CL_DEVICE_EXTENSIONS, ext, sizeof ext);
	gen_iv(&iv[i++], CL_DEVICE_BUILT_IN_KERNELS, none, sizeof none);
	gen_iv(&iv[i++], CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, &qp, sizeof qp);
	gen_iv(&iv[i++], CL_DEVICE_MAX_MEM_ALLOC_SIZE, &alloc, sizeof alloc);
	gen_iv(&iv[i++], CL_DEVICE_GLOBAL_MEM_SIZE, &global, sizeof global);
	gen_iv(&iv[i++], CL_DEVICE_LOCAL_MEM_SIZE, &local, sizeof local);
	gen_iv(&iv[i++], CL_DEVICE_MAX_WORK_GROUP_SIZE, &wg, sizeof wg);
	gen_iv(&iv[i++], CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, &dims,
	    sizeof dims);
	gen_iv(&iv[i++], CL_DEVICE_MAX_WORK_ITEM_SIZES, wi, sizeof wi);
	gen_iv(&iv[i++], CL_DEVICE_MEM_BASE_ADDR_ALIGN, &align, sizeof align);
	(void)yes;
	for (i = 0; i < sizeof iv / sizeof iv[0]; i++)
		ivp[i] = &iv[i];
	di.info = ivp;
	di.n_info = sizeof iv / sizeof iv[0];
	devs[0] = devs[1] = &di;
	w.node_name = "fake";
	w.devices = devs;
	w.n_devices = g->mode == GEN_NOISY ? 2 : 1;
	w.has_session_id = 1;
	w.session_id = 1;
	r.seq = seq;
	r.status = CL_SUCCESS;
	r.result_case = VCL__REPLY__RESULT_WELCOME;
	r.welcome = &w;
	tc.reply = &r;
	gen_put(g, &tc, 0);
}

/* The Enqueue of a command (field 1 of its message), or NULL. */
static const Vcl__Enqueue *
gen_enqueue(const Vcl__Request *req)
{
	const ProtobufCFieldDescriptor	*f;
	const ProtobufCMessage		*m;

	f = protobuf_c_message_descriptor_get_field(&vcl__request__descriptor,
	    (unsigned)req->call_case);
	if (f == NULL || f->type != PROTOBUF_C_TYPE_MESSAGE)
		return (NULL);
	m = *(ProtobufCMessage *const *)(const void *)((const char *)req +
	    f->offset);
	if (m == NULL || m->descriptor->n_fields == 0 ||
	    m->descriptor->fields[0].id != 1 ||
	    m->descriptor->fields[0].type != PROTOBUF_C_TYPE_MESSAGE ||
	    m->descriptor->fields[0].descriptor != &vcl__enqueue__descriptor)
		return (NULL);
	return (*(Vcl__Enqueue *const *)(const void *)((const char *)m +
	    m->descriptor->fields[0].offset));
}

/* A Notify of event id with status, its profiling times set. */
static void
gen_notify(struct gen *g, uint64_t id, cl_int status)
{
	Vcl__ToClient	 tc = VCL__TO_CLIENT__INIT;
	Vcl__Notify	 nt = VCL__NOTIFY__INIT, *ntp = &nt;

	nt.event = id;
	nt.status = status;
	nt.has_queued = nt.has_submit = nt.has_start = nt.has_end = 1;
	nt.queued = 1000;
	nt.submit = 2000;
	nt.start = 3000;
	nt.end = 4000;
	tc.notify = &ntp;
	tc.n_notify = 1;
	gen_put(g, &tc, 0);
}

/* The reply to req, if its call has one. */
static void
gen_reply(struct gen *g, const Vcl__Request *req)
{
	Vcl__ToClient		 tc = VCL__TO_CLIENT__INIT;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	Vcl__BuildResult	 br = VCL__BUILD_RESULT__INIT;
	Vcl__BuildResult__PerDevice pd[2], *pdp[2];
	Vcl__KernelsResult	 kr = VCL__KERNELS_RESULT__INIT;
	Vcl__InfoResult		 ir = VCL__INFO_RESULT__INIT;
	Vcl__KernelDesc		 kd = VCL__KERNEL_DESC__INIT, *kdp = &kd;
	static char		*names[] = { "k" };
	uint32_t		 addr[2] = { CL_KERNEL_ARG_ADDRESS_GLOBAL,
	    CL_KERNEL_ARG_ADDRESS_PRIVATE }, asize[2] = { 0, sizeof(cl_int) },
	    qual[2] = { 0, 0 }, access[2] = { CL_KERNEL_ARG_ACCESS_NONE,
	    CL_KERNEL_ARG_ACCESS_NONE };
	Vcl__KernelDesc__ArgKind kinds[2] = { VCL__KERNEL_DESC__ARG_KIND__BUFFER,
	    VCL__KERNEL_DESC__ARG_KIND__VALUE };
	uint64_t		 wg[2] = { 256, 256 }, cwg[6] = { 0 };
	size_t			 bulk = 0, i, ndev = g->mode == GEN_NOISY ? 2 : 1;
	int			 err = g->mode == GEN_ERRORS;

	r.seq = req->seq;
	r.status = CL_SUCCESS;
	switch (req->call_case) {
	case VCL__REQUEST__CALL_HELLO:
		gen_welcome(g, req->seq);
		return;
	case VCL__REQUEST__CALL_FINISH:
		r.status = err ? CL_OUT_OF_RESOURCES : CL_SUCCESS;
		break;
	case VCL__REQUEST__CALL_READ_BUFFER:
		if (err)
			r.status = CL_OUT_OF_RESOURCES;
		else
			bulk = (size_t)req->read_buffer->size;
		break;
	case VCL__REQUEST__CALL_BUILD_PROGRAM:
		for (i = 0; i < ndev; i++) {
			vcl__build_result__per_device__init(&pd[i]);
			pd[i].device = (uint32_t)i;
			pd[i].status = err ? CL_BUILD_ERROR : CL_BUILD_SUCCESS;
			pd[i].log = err ? "<source>:1:1: error: fake\n" : "";
			pdp[i] = &pd[i];
		}
		br.devices = pdp;
		br.n_devices = ndev;
		if (!err) {
			br.kernel_names = names;
			br.n_kernel_names = 1;
		}
		r.status = err ? CL_BUILD_PROGRAM_FAILURE : CL_SUCCESS;
		r.result_case = VCL__REPLY__RESULT_BUILD;
		r.build = &br;
		break;
	case VCL__REQUEST__CALL_CREATE_KERNEL:
		kd.id = req->create_kernel->id;
		kd.name = req->create_kernel->name;
		kd.num_args = 2;
		kd.arg_address = addr;
		kd.n_arg_address = 2;
		kd.arg_size = asize;
		kd.n_arg_size = 2;
		kd.wg_size = wg;
		kd.n_wg_size = ndev;
		kd.compile_wg = cwg;
		kd.n_compile_wg = 3 * ndev;
		kd.arg_type_qual = qual;
		kd.n_arg_type_qual = 2;
		kd.arg_kind = kinds;
		kd.n_arg_kind = 2;
		kd.arg_access = access;
		kd.n_arg_access = 2;
		kr.kernels = &kdp;
		kr.n_kernels = 1;
		r.status = err ? CL_INVALID_KERNEL_NAME : CL_SUCCESS;
		r.result_case = VCL__REPLY__RESULT_KERNELS;
		r.kernels = &kr;
		break;
	case VCL__REQUEST__CALL_GET_INFO:
		/* The calls ask one: a kernel's work-group size. */
		ir.value.data = (uint8_t *)&wg[0];
		ir.value.len = sizeof wg[0];
		r.status = err ? CL_INVALID_VALUE : CL_SUCCESS;
		r.result_case = VCL__REPLY__RESULT_INFO;
		r.info = &ir;
		break;
	case VCL__REQUEST__CALL_STATS:
		r.status = CL_INVALID_OPERATION;	/* a ping: any reply */
		break;
	default:
		return;
	}
	tc.reply = &r;
	gen_put(g, &tc, bulk);
}

/* fuzz_answer_fn: the turn for a request, recorded. */
static int
gen_answer(void *arg, const Vcl__Request *req, uint64_t bulk, size_t frame,
    uint8_t **out, size_t *len)
{
	struct gen		*g = arg;
	Vcl__ToClient		 tc = VCL__TO_CLIENT__INIT;
	Vcl__Greeting		 gr = VCL__GREETING__INIT;
	const Vcl__Enqueue	*enq;
	static uint8_t		 nonce[32] = { 1, 2, 3, 4 };

	(void)bulk;
	if (req == NULL && frame > 0)
		gen_fail("a request that does not unpack");
	if (req == NULL && g->rec.len > 0)
		return (0);		/* idle: the client computes */
	g->turn.len = 0;
	if (req == NULL) {
		gr.version = VCL_PROTOCOL_VERSION;
		gr.nonce.data = nonce;
		gr.nonce.len = sizeof nonce;
		gr.node_name = "fake";
		tc.greeting = &gr;
		gen_put(g, &tc, 0);
	} else {
		if (g->mode == GEN_NOISY &&
		    req->call_case != VCL__REQUEST__CALL_HELLO) {
			tc.has_keepalive = 1;
			tc.keepalive = 1;
			gen_put(g, &tc, 0);
			gen_notify(g, 999999, CL_COMPLETE);
		}
		gen_reply(g, req);
		if ((enq = gen_enqueue(req)) != NULL && enq->event != 0)
			gen_notify(g, enq->event, g->mode == GEN_ERRORS ?
			    CL_OUT_OF_RESOURCES : CL_COMPLETE);
		if (vcl_buf_reserve(&g->rec, FUZZ_TURN_LEN) != 0)
			gen_fail("out of memory");
		memcpy(g->rec.data + g->rec.len, FUZZ_TURN, FUZZ_TURN_LEN);
		g->rec.len += FUZZ_TURN_LEN;
	}
	if (vcl_buf_reserve(&g->rec, g->turn.len) != 0 ||
	    (*out = malloc(g->turn.len + 1)) == NULL)
		gen_fail("out of memory");
	memcpy(g->rec.data + g->rec.len, g->turn.data, g->turn.len);
	g->rec.len += g->turn.len;
	memcpy(*out, g->turn.data, g->turn.len);
	*len = g->turn.len;
	return (0);
}

/*
 * The child: the calls, then one round trip more (a finish); exits 1
 * when any of the calls failed. The round trip's reply read means every request
 * before it reached the server and every byte the server sent before it
 * was read: a child that left, at its exit, bytes of the noisy server
 * unread made its socket send a reset, which threw away the last
 * requests (its releases) still unread on the server's side, and on a
 * loaded host the seed came out short.
 */
static int
gen_child(void *arg)
{
	cl_platform_id		plat;
	cl_device_id		dev;
	cl_context		ctx;
	cl_command_queue	q;
	cl_int			err;
	int			bad;

	(void)arg;
	/*
	 * A call timeout far past the run: libvcl pings a node it waited a
	 * third of it for, and a ping is a turn of its own, so on a loaded
	 * host the short one of the fuzzer's runs made the seeds differ.
	 */
	setenv("VCL_CALL_TIMEOUT_MS", "600000", 1);
	bad = fuzz_client_calls(1) != 0;
	/* A finish on a queue of its own: left to the exit, unreleased. */
	if (clGetPlatformIDs(1, &plat, NULL) == CL_SUCCESS &&
	    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) ==
	    CL_SUCCESS &&
	    (ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err)) != NULL &&
	    (q = clCreateCommandQueue(ctx, dev, 0, &err)) != NULL)
		(void)clFinish(q);
	return (bad);
}

/* Record one seed into dir/name. */
static void
gen_seed(enum gen_mode mode, const char *dir, const char *name)
{
	struct gen	 g = { mode, { NULL, 0, 0 }, { NULL, 0, 0 } };
	char		 path[4096];
	pid_t		 child;
	FILE		*f;
	char		 port[16];
	int		 lfd, status;

	if ((lfd = fuzz_client_listen(port, sizeof port)) == -1)
		gen_fail("listen");
	if ((child = fuzz_client_spawn(lfd, port, gen_child, NULL)) == -1)
		gen_fail("fork");
	if (fuzz_client_serve(lfd, child, gen_answer, &g) < 0)
		gen_fail("the client never connected");
	if (fuzz_client_reap(child, &status) != 0)
		gen_fail("the client hangs");
	if (mode == GEN_OK && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		gen_fail("a call failed against the ok server");
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL ||
	    fwrite(g.rec.data, 1, g.rec.len, f) != g.rec.len ||
	    fclose(f) != 0)
		gen_fail(path);
	vcl_buf_free(&g.rec);
	vcl_buf_free(&g.turn);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_client_gen DIR\n");
		return (2);
	}
	signal(SIGPIPE, SIG_IGN);
	gen_seed(GEN_OK, argv[1], "gen_client_ok");
	gen_seed(GEN_ERRORS, argv[1], "gen_client_errors");
	gen_seed(GEN_NOISY, argv[1], "gen_client_noisy");
	return (0);
}
