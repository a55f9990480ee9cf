/* nodeloss2_test.c - the whole API on a context one of whose two nodes is lost. */

/*
 * libvcl (through the ICD loader; VCL_TEST_ICD_DIR names the directory of
 * vcl.icd) in this test's group process, one context over the devices of
 * two real vclservers. One server is lost (walk_kill: the first, SIGKILL;
 * walk_stop: the second, SIGSTOP, found by VCL_CALL_TIMEOUT_MS), then the
 * application walks the API on the context: programs from source and
 * binary built, compiled and linked with no device list and with lists
 * naming the live device, the lost one or both,
 * kernels, buffers, sub-buffers, images, samplers, user events, queues,
 * every kind of enqueue on the live device and the info queries. Work for
 * the live device succeeds (bytes checked); work for or questions about
 * the lost device fail with CL_DEVICE_NOT_AVAILABLE (or, for a build's
 * status, CL_BUILD_ERROR); nothing waits past the test's timeout.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "rawproto.h"

/*
 * VCL_CALL_TIMEOUT_MS of the groups that stop a server: each pays it once
 * to find the stop; shorter, and a live server compiling on a loaded host
 * was found lost too.
 */
#define NL_TIMEOUT_MS	"2000"
#define NL_WORDS	1024		/* each checked buffer */

static const char nl_src[] =
	"__kernel void fill(__global uint *a, uint seed)\n"
	"{ uint i = get_global_id(0); a[i] = seed * 2654435761u + i; }\n";

/* A kernel that keeps its queue a while (n rounds of a generator). */
static const char nl_spin_src[] =
	"__kernel void fill(__global uint *a, uint seed)\n"
	"{ uint i = get_global_id(0); a[i] = seed * 2654435761u + i; }\n"
	"__kernel void spin(__global uint *a, uint n)\n"
	"{ uint x = a[0]; for (uint i = 0; i < n && x != 7u; i++)\n"
	"  x = x * 1664525u + 1013904223u; a[1] = x; }\n";

static const char nl_lib[] =
	"uint nl_mix(uint s, uint i) { return s * 2654435761u + i; }\n";

static const char nl_use[] =
	"uint nl_mix(uint s, uint i);\n"
	"__kernel void fill(__global uint *a, uint seed)\n"
	"{ uint i = get_global_id(0); a[i] = nl_mix(seed, i); }\n";

/*
 * Point libvcl at the two servers (before its first call); stop: a server
 * will be stopped, so a call timeout finds it (a kill is found at once).
 */
static int
nl_env(struct srv *sv, int stop)
{
	const char	*icd = getenv("VCL_TEST_ICD_DIR");
	char		 nodes[160];

	if (icd == NULL || *icd == '\0')
		return (check("env", 0,
		    "VCL_TEST_ICD_DIR (the directory of vcl.icd) is not set"));
	snprintf(nodes, sizeof nodes, "127.0.0.1:%s,127.0.0.1:%s",
	    sv[0].port, sv[1].port);
	setenv("VCL_NODES", nodes, 1);
	setenv("OCL_ICD_VENDORS", icd, 1);
	setenv("VCL_STRICT", "1", 1);
	if (stop)
		setenv("VCL_CALL_TIMEOUT_MS", NL_TIMEOUT_MS, 1);
	else
		unsetenv("VCL_CALL_TIMEOUT_MS");
	unsetenv("VCL_TRANSPORT");
	return (1);
}

/* Check that a call gave want. */
static int
nl_is(const char *name, cl_int err, cl_int want)
{
	return (check(name, err == want, "returned %d, want %d", (int)err,
	    (int)want));
}

/*
 * Run prog's fill (seed) over NL_WORDS words of buf on q and read them
 * back: 1 if every word is right.
 */
static int
nl_fill(const char *name, cl_command_queue q, cl_program prog, cl_mem buf,
    cl_uint seed)
{
	cl_kernel	 k;
	cl_uint		 a[NL_WORDS];
	cl_int		 err = CL_SUCCESS;
	size_t		 i, words = NL_WORDS;
	int		 ok = 0;

	memset(a, 0, sizeof a);
	if ((k = clCreateKernel(prog, "fill", &err)) != NULL &&
	    (err = clSetKernelArg(k, 0, sizeof buf, &buf)) == CL_SUCCESS &&
	    (err = clSetKernelArg(k, 1, sizeof seed, &seed)) == CL_SUCCESS &&
	    (err = clEnqueueNDRangeKernel(q, k, 1, NULL, &words, NULL, 0,
	    NULL, NULL)) == CL_SUCCESS && (err = clEnqueueReadBuffer(q, buf,
	    CL_TRUE, 0, sizeof a, a, 0, NULL, NULL)) == CL_SUCCESS) {
		ok = 1;
		for (i = 0; i < words; i++)
			if (a[i] != seed * 2654435761u + (cl_uint)i)
				ok = 0;
	}
	if (k != NULL)
		clReleaseKernel(k);
	return (check(name, ok, "a fill on the live device: %d%s", (int)err,
	    err == CL_SUCCESS ? " (wrong bytes)" : ""));
}

/* The state of one walk: the context, its devices, what was made before. */
struct nl {
	cl_context		 ctx;
	cl_device_id		 dev[2];
	cl_device_id		 live;
	cl_device_id		 lost;
	cl_program		 prog;		/* built for both before */
	cl_command_queue	 q;		/* on the live device */
	cl_command_queue	 qlost;
	cl_mem			 buf;		/* NL_WORDS words */
};

/*
 * After a call for both devices: the live device's build status
 * CL_BUILD_SUCCESS, the lost one's CL_BUILD_ERROR, its log saying why.
 */
static void
nl_lost_status(const char *name, cl_program p, const struct nl *w)
{
	cl_build_status	 live = CL_BUILD_NONE, lost = CL_BUILD_NONE;
	cl_int		 e1, e2, e3;
	char		 what[96], log[256];

	log[0] = '\0';
	e1 = clGetProgramBuildInfo(p, w->live, CL_PROGRAM_BUILD_STATUS,
	    sizeof live, &live, NULL);
	e2 = clGetProgramBuildInfo(p, w->lost, CL_PROGRAM_BUILD_STATUS,
	    sizeof lost, &lost, NULL);
	e3 = clGetProgramBuildInfo(p, w->lost, CL_PROGRAM_BUILD_LOG,
	    sizeof log, log, NULL);
	snprintf(what, sizeof what, "%s_status", name);
	check(what, e1 == CL_SUCCESS && e2 == CL_SUCCESS && e3 == CL_SUCCESS &&
	    live == CL_BUILD_SUCCESS && lost == CL_BUILD_ERROR &&
	    strstr(log, "lost") != NULL, "live %d/%d, lost %d/%d, log %d "
	    "'%s'", (int)e1, (int)live, (int)e2, (int)lost, (int)e3, log);
}

/* Programs: build, compile and link with no device list, binaries, info. */
static void
nl_programs(struct nl *w)
{
	cl_program	 p = NULL, obj = NULL, lib = NULL, ex = NULL, bp = NULL;
	cl_build_status	 st = CL_BUILD_NONE;
	unsigned char	*bins[2] = { NULL, NULL }, *bin;
	const char	*src = nl_src, *lsrc = nl_lib, *usrc = nl_use;
	size_t		 sizes[2] = { 7, 7 }, len, ret = 0;
	cl_uint		 u = 0;
	cl_int		 err, bst = 1;
	int		 li = w->live == w->dev[0] ? 0 : 1;
	char		 log[256];
	cl_program	 two[2];

	/* clBuildProgram for every device: the live one builds. */
	p = clCreateProgramWithSource(w->ctx, 1, &src, NULL, &err);
	if (!nl_is("source_program", err, CL_SUCCESS))
		return;
	nl_is("build_all", clBuildProgram(p, 0, NULL, NULL, NULL, NULL),
	    CL_SUCCESS);
	err = clGetProgramBuildInfo(p, w->live, CL_PROGRAM_BUILD_STATUS,
	    sizeof st, &st, NULL);
	check("build_all_live_status", err == CL_SUCCESS && st ==
	    CL_BUILD_SUCCESS, "the live device's build status: %d, %d",
	    (int)err, (int)st);
	err = clGetProgramBuildInfo(p, w->lost, CL_PROGRAM_BUILD_STATUS,
	    sizeof st, &st, NULL);
	check("build_all_lost_status", err == CL_SUCCESS && st ==
	    CL_BUILD_ERROR, "the lost device's build status: %d, %d",
	    (int)err, (int)st);
	nl_is("build_log_live", clGetProgramBuildInfo(p, w->live,
	    CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL), CL_SUCCESS);
	nl_is("build_binary_type_live", clGetProgramBuildInfo(p, w->live,
	    CL_PROGRAM_BINARY_TYPE, sizeof u, &u, NULL), CL_SUCCESS);
	nl_is("build_binary_type_lost", clGetProgramBuildInfo(p, w->lost,
	    CL_PROGRAM_BINARY_TYPE, sizeof u, &u, NULL),
	    CL_DEVICE_NOT_AVAILABLE);
	nl_is("build_lost_listed", clBuildProgram(p, 1, &w->lost, NULL, NULL,
	    NULL), CL_DEVICE_NOT_AVAILABLE);
	nl_is("build_live_listed", clBuildProgram(p, 1, &w->live, NULL, NULL,
	    NULL), CL_SUCCESS);
	nl_fill("build_all_runs", w->q, p, w->buf, 3);
	/* A list naming both: as with none, the live one builds. */
	nl_is("build_both_listed", clBuildProgram(p, 2, w->dev, NULL, NULL,
	    NULL), CL_SUCCESS);
	nl_lost_status("build_both_listed", p, w);
	nl_fill("build_both_listed_runs", w->q, p, w->buf, 4);

	/* Program info: the remote queries, the binaries (none for the lost). */
	nl_is("program_num_kernels", clGetProgramInfo(p,
	    CL_PROGRAM_NUM_KERNELS, sizeof ret, &ret, NULL), CL_SUCCESS);
	nl_is("program_il", clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, &ret),
	    CL_SUCCESS);
	err = clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof sizes,
	    sizes, NULL);
	check("program_binary_sizes", err == CL_SUCCESS && sizes[li] > 0 &&
	    sizes[1 - li] == 0, "binary sizes: %d, live %zu, lost %zu (want "
	    "0)", (int)err, sizes[li], sizes[1 - li]);
	if (err == CL_SUCCESS && sizes[li] > 0 &&
	    (bins[li] = malloc(sizes[li])) != NULL) {
		bins[1 - li] = malloc(1);
		err = clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins,
		    bins, NULL);
		nl_is("program_binaries", err, CL_SUCCESS);
		/* The live device's binary makes a program that runs. */
		bin = bins[li];
		len = sizes[li];
		bp = clCreateProgramWithBinary(w->ctx, 1, &w->live, &len,
		    (const unsigned char **)&bin, &bst, &err);
		if (nl_is("binary_program", err, CL_SUCCESS) &&
		    nl_is("binary_build", clBuildProgram(bp, 0, NULL, NULL,
		    NULL, NULL), CL_SUCCESS))
			nl_fill("binary_runs", w->q, bp, w->buf, 5);
		if (bp != NULL)
			clReleaseProgram(bp);
		bp = clCreateProgramWithBinary(w->ctx, 1, &w->lost, &len,
		    (const unsigned char **)&bin, &bst, &err);
		nl_is("binary_program_lost", err, CL_DEVICE_NOT_AVAILABLE);
		if (bp != NULL)
			clReleaseProgram(bp);
		free(bins[0]);
		free(bins[1]);
	}
	clReleaseProgram(p);

	/* clCompileProgram and clLinkProgram for every device. */
	if ((obj = clCreateProgramWithSource(w->ctx, 1, &lsrc, NULL, &err)) !=
	    NULL)
		err = clCompileProgram(obj, 0, NULL, NULL, 0, NULL, NULL, NULL,
		    NULL);
	nl_is("compile_all", err, CL_SUCCESS);
	if (err == CL_SUCCESS)
		lib = clLinkProgram(w->ctx, 0, NULL, "-create-library", 1, &obj,
		    NULL, NULL, &err);
	nl_is("link_library_all", err, CL_SUCCESS);
	if ((p = clCreateProgramWithSource(w->ctx, 1, &usrc, NULL, &err)) !=
	    NULL)
		err = clCompileProgram(p, 0, NULL, NULL, 0, NULL, NULL, NULL,
		    NULL);
	nl_is("compile_user_all", err, CL_SUCCESS);
	if (err == CL_SUCCESS && lib != NULL) {
		two[0] = p;
		two[1] = lib;
		ex = clLinkProgram(w->ctx, 0, NULL, NULL, 2, two, NULL, NULL,
		    &err);
		if (nl_is("link_all", err, CL_SUCCESS))
			nl_fill("link_all_runs", w->q, ex, w->buf, 9);
		if (ex != NULL)
			clReleaseProgram(ex);
		ex = clLinkProgram(w->ctx, 1, &w->lost, NULL, 2, two, NULL,
		    NULL, &err);
		nl_is("link_lost_listed", err, CL_DEVICE_NOT_AVAILABLE);
		if (ex != NULL)
			clReleaseProgram(ex);
		ex = clLinkProgram(w->ctx, 2, w->dev, NULL, 2, two, NULL,
		    NULL, &err);
		if (nl_is("link_both_listed", err, CL_SUCCESS)) {
			nl_lost_status("link_both_listed", ex, w);
			nl_fill("link_both_listed_runs", w->q, ex, w->buf, 11);
		}
		if (ex != NULL)
			clReleaseProgram(ex);
	}
	/* A compile whose list names both: the live one compiles. */
	if (p != NULL) {
		nl_is("compile_both_listed", clCompileProgram(p, 2, w->dev,
		    NULL, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
		nl_lost_status("compile_both_listed", p, w);
	}
	if (p != NULL)
		clReleaseProgram(p);
	if (lib != NULL)
		clReleaseProgram(lib);
	if (obj != NULL)
		clReleaseProgram(obj);
}

/* Kernels, queues, buffers, images, samplers, events and their enqueues. */
static void
nl_objects(struct nl *w)
{
	cl_image_format	 fmt = { CL_RGBA, CL_UNSIGNED_INT8 }, fmts[64];
	cl_image_desc	 desc;
	cl_command_queue q2 = NULL;
	cl_kernel	 k = NULL, k2 = NULL;
	cl_sampler	 smp = NULL;
	cl_event	 ue = NULL, ev = NULL;
	cl_mem		 b = NULL, sub = NULL, img = NULL, hb;
	cl_buffer_region reg = { 0, 32 };
	cl_device_id	 devs[4];
	cl_uint		 u = 0, pix[16], back[16], pat = 0x5a5a5a5a, i;
	size_t		 sz = 0, origin[3] = { 0, 0, 0 }, region[3] = { 4, 4, 1 };
	cl_int		 err;
	void		*map;
	char		 name[64];

	/* The lost device says so; the live one is available. */
	u = CL_TRUE;
	err = clGetDeviceInfo(w->lost, CL_DEVICE_AVAILABLE, sizeof u, &u,
	    NULL);
	check("device_available_lost", err == CL_SUCCESS && u == CL_FALSE,
	    "CL_DEVICE_AVAILABLE of the lost device: %d, %u", (int)err, u);
	err = clGetDeviceInfo(w->live, CL_DEVICE_AVAILABLE, sizeof u, &u,
	    NULL);
	check("device_available_live", err == CL_SUCCESS && u == CL_TRUE,
	    "CL_DEVICE_AVAILABLE of the live device: %d, %u", (int)err, u);
	nl_is("device_name_lost", clGetDeviceInfo(w->lost, CL_DEVICE_NAME,
	    sizeof name, name, NULL), CL_SUCCESS);

	/* Context info. */
	nl_is("context_num_devices", clGetContextInfo(w->ctx,
	    CL_CONTEXT_NUM_DEVICES, sizeof u, &u, NULL), CL_SUCCESS);
	nl_is("context_devices", clGetContextInfo(w->ctx, CL_CONTEXT_DEVICES,
	    sizeof devs, devs, &sz), CL_SUCCESS);
	nl_is("context_properties", clGetContextInfo(w->ctx,
	    CL_CONTEXT_PROPERTIES, 0, NULL, &sz), CL_SUCCESS);

	/* Kernels and their info. */
	k = clCreateKernel(w->prog, "fill", &err);
	if (nl_is("kernel", err, CL_SUCCESS)) {
		nl_is("kernel_name", clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME,
		    sizeof name, name, NULL), CL_SUCCESS);
		nl_is("kernel_num_args", clGetKernelInfo(k, CL_KERNEL_NUM_ARGS,
		    sizeof u, &u, NULL), CL_SUCCESS);
		nl_is("kernel_attributes", clGetKernelInfo(k,
		    CL_KERNEL_ATTRIBUTES, sizeof name, name, NULL), CL_SUCCESS);
		nl_is("kernel_wg_live", clGetKernelWorkGroupInfo(k, w->live,
		    CL_KERNEL_WORK_GROUP_SIZE, sizeof sz, &sz, NULL),
		    CL_SUCCESS);
		nl_is("kernel_wg_lost", clGetKernelWorkGroupInfo(k, w->lost,
		    CL_KERNEL_WORK_GROUP_SIZE, sizeof sz, &sz, NULL),
		    CL_DEVICE_NOT_AVAILABLE);
		k2 = clCloneKernel(k, &err);
		nl_is("kernel_clone", err, CL_SUCCESS);
	}

	/* Queues. */
	q2 = clCreateCommandQueue(w->ctx, w->live, 0, &err);
	nl_is("queue_live", err, CL_SUCCESS);
	nl_is("queue_info", clGetCommandQueueInfo(w->q, CL_QUEUE_DEVICE,
	    sizeof devs[0], devs, NULL), CL_SUCCESS);

	/* Buffers: made after the loss, filled, copied, mapped, migrated. */
	b = clCreateBuffer(w->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    sizeof pix, pix, &err);
	if (nl_is("buffer", err, CL_SUCCESS)) {
		for (i = 0; i < 16; i++)
			pix[i] = i * 7u;
		nl_is("buffer_write", clEnqueueWriteBuffer(w->q, b, CL_TRUE, 0,
		    sizeof pix, pix, 0, NULL, NULL), CL_SUCCESS);
		nl_is("buffer_fill", clEnqueueFillBuffer(w->q, w->buf, &pat,
		    sizeof pat, 0, sizeof pix, 0, NULL, NULL), CL_SUCCESS);
		nl_is("buffer_copy", clEnqueueCopyBuffer(w->q, b, w->buf, 0,
		    sizeof pix, sizeof pix, 0, NULL, NULL), CL_SUCCESS);
		memset(back, 0, sizeof back);
		err = clEnqueueReadBuffer(w->q, w->buf, CL_TRUE, sizeof pix,
		    sizeof back, back, 0, NULL, NULL);
		check("buffer_copy_bytes", err == CL_SUCCESS &&
		    memcmp(back, pix, sizeof pix) == 0, "copied bytes: %d",
		    (int)err);
		map = clEnqueueMapBuffer(w->q, b, CL_TRUE, CL_MAP_READ, 0,
		    sizeof pix, 0, NULL, NULL, &err);
		if (nl_is("buffer_map", err, CL_SUCCESS)) {
			check("buffer_map_bytes", memcmp(map, pix, sizeof pix)
			    == 0, "mapped bytes differ");
			nl_is("buffer_unmap", clEnqueueUnmapMemObject(w->q, b,
			    map, 0, NULL, NULL), CL_SUCCESS);
		}
		nl_is("buffer_migrate", clEnqueueMigrateMemObjects(w->q, 1, &b,
		    0, 0, NULL, NULL), CL_SUCCESS);
		nl_is("buffer_migrate_host", clEnqueueMigrateMemObjects(w->q, 1,
		    &b, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL),
		    CL_SUCCESS);
		hb = clCreateBuffer(w->ctx, CL_MEM_READ_WRITE |
		    CL_MEM_USE_HOST_PTR, sizeof pix, pix, &err);
		if (nl_is("buffer_host", err, CL_SUCCESS)) {
			memset(back, 0, sizeof back);
			err = clEnqueueReadBuffer(w->q, hb, CL_TRUE, 0,
			    sizeof back, back, 0, NULL, NULL);
			check("buffer_host_bytes", err == CL_SUCCESS &&
			    memcmp(back, pix, sizeof pix) == 0, "a "
			    "USE_HOST_PTR buffer read: %d", (int)err);
			clReleaseMemObject(hb);
		}
		sub = clCreateSubBuffer(b, CL_MEM_READ_WRITE,
		    CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
		nl_is("sub_buffer", err, CL_SUCCESS);
		nl_is("mem_info", clGetMemObjectInfo(b, CL_MEM_SIZE, sizeof sz,
		    &sz, NULL), CL_SUCCESS);
	}
	if (k2 != NULL)
		nl_fill("kernel_clone_runs", w->q, w->prog, w->buf, 21);

	/* Images and samplers. */
	nl_is("image_formats", clGetSupportedImageFormats(w->ctx,
	    CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 64, fmts, &u),
	    CL_SUCCESS);
	memset(&desc, 0, sizeof desc);
	desc.image_type = CL_MEM_OBJECT_IMAGE2D;
	desc.image_width = 4;
	desc.image_height = 4;
	img = clCreateImage(w->ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL,
	    &err);
	if (nl_is("image", err, CL_SUCCESS)) {
		nl_is("image_write", clEnqueueWriteImage(w->q, img, CL_TRUE,
		    origin, region, 0, 0, pix, 0, NULL, NULL), CL_SUCCESS);
		memset(back, 0, sizeof back);
		err = clEnqueueReadImage(w->q, img, CL_TRUE, origin, region,
		    0, 0, back, 0, NULL, NULL);
		check("image_read", err == CL_SUCCESS && memcmp(back, pix,
		    sizeof pix) == 0, "image read: %d", (int)err);
		nl_is("image_info", clGetImageInfo(img, CL_IMAGE_WIDTH,
		    sizeof sz, &sz, NULL), CL_SUCCESS);
	}
	smp = clCreateSampler(w->ctx, CL_FALSE, CL_ADDRESS_NONE,
	    CL_FILTER_NEAREST, &err);
	if (nl_is("sampler", err, CL_SUCCESS))
		nl_is("sampler_info", clGetSamplerInfo(smp,
		    CL_SAMPLER_ADDRESSING_MODE, sizeof u, &u, NULL),
		    CL_SUCCESS);

	/* Events: a user event gates a marker; barrier; waits. */
	ue = clCreateUserEvent(w->ctx, &err);
	if (nl_is("user_event", err, CL_SUCCESS)) {
		nl_is("marker", clEnqueueMarkerWithWaitList(w->q, 1, &ue, &ev),
		    CL_SUCCESS);
		nl_is("barrier", clEnqueueBarrierWithWaitList(w->q, 0, NULL,
		    NULL), CL_SUCCESS);
		nl_is("user_event_set", clSetUserEventStatus(ue, CL_COMPLETE),
		    CL_SUCCESS);
		if (ev != NULL) {
			nl_is("wait_marker", clWaitForEvents(1, &ev),
			    CL_SUCCESS);
			nl_is("event_info", clGetEventInfo(ev,
			    CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof err, &err,
			    NULL), CL_SUCCESS);
		}
	}
	nl_is("finish_live", clFinish(w->q), CL_SUCCESS);
	if (q2 != NULL)
		nl_is("finish_new_queue", clFinish(q2), CL_SUCCESS);

	/* The lost device: its queue and a kernel there fail at once. */
	if (k != NULL) {
		sz = NL_WORDS;
		(void)clSetKernelArg(k, 0, sizeof w->buf, &w->buf);
		(void)clSetKernelArg(k, 1, sizeof pat, &pat);
		nl_is("kernel_lost", clEnqueueNDRangeKernel(w->qlost, k, 1, NULL,
		    &sz, NULL, 0, NULL, NULL), CL_DEVICE_NOT_AVAILABLE);
	}
	nl_is("read_lost", clEnqueueReadBuffer(w->qlost, w->buf, CL_TRUE, 0,
	    sizeof back, back, 0, NULL, NULL), CL_DEVICE_NOT_AVAILABLE);
	nl_is("write_lost", clEnqueueWriteBuffer(w->qlost, w->buf, CL_FALSE,
	    0, sizeof back, back, 0, NULL, NULL), CL_DEVICE_NOT_AVAILABLE);
	map = clEnqueueMapBuffer(w->qlost, w->buf, CL_TRUE, CL_MAP_READ, 0,
	    sizeof back, 0, NULL, NULL, &err);
	check("map_lost", map == NULL && err == CL_DEVICE_NOT_AVAILABLE,
	    "a map on the lost device: %d", (int)err);
	if (b != NULL)
		nl_is("migrate_lost", clEnqueueMigrateMemObjects(w->qlost, 1,
		    &b, 0, 0, NULL, NULL), CL_DEVICE_NOT_AVAILABLE);
	nl_is("marker_lost", clEnqueueMarkerWithWaitList(w->qlost, 0, NULL,
	    NULL), CL_DEVICE_NOT_AVAILABLE);
	nl_is("flush_lost", clFlush(w->qlost), CL_DEVICE_NOT_AVAILABLE);
	nl_is("finish_lost", clFinish(w->qlost), CL_DEVICE_NOT_AVAILABLE);
	nl_is("queue_info_lost", clGetCommandQueueInfo(w->qlost,
	    CL_QUEUE_DEVICE, sizeof devs[0], devs, NULL), CL_SUCCESS);

	if (ev != NULL)
		clReleaseEvent(ev);
	if (ue != NULL)
		clReleaseEvent(ue);
	if (smp != NULL)
		nl_is("sampler_release", clReleaseSampler(smp), CL_SUCCESS);
	if (img != NULL)
		nl_is("image_release", clReleaseMemObject(img), CL_SUCCESS);
	if (sub != NULL)
		clReleaseMemObject(sub);
	if (b != NULL)
		clReleaseMemObject(b);
	if (q2 != NULL)
		nl_is("queue_release", clReleaseCommandQueue(q2), CL_SUCCESS);
	if (k2 != NULL)
		clReleaseKernel(k2);
	if (k != NULL)
		nl_is("kernel_release", clReleaseKernel(k), CL_SUCCESS);
}

/* The lost node's event, made before the loss, behind a user event. */
static struct {
	atomic_int	runs;
	atomic_int	status;
} nl_cb;

/* Record the lost event's callback. */
static void CL_CALLBACK
nl_cb_run(cl_event ev, cl_int status, void *arg)
{
	(void)ev;
	(void)arg;
	atomic_store(&nl_cb.status, status);
	atomic_fetch_add(&nl_cb.runs, 1);
}

/*
 * Contexts and queues made after the loss, rectangles, images copied and
 * mapped, profiling, argument info, and the lost node's old event.
 */
static void
nl_more(struct nl *w, cl_event lostev)
{
	cl_queue_properties qp[] = { CL_QUEUE_PROPERTIES,
	    CL_QUEUE_PROFILING_ENABLE, 0 };
	cl_image_format	 fmt = { CL_RGBA, CL_UNSIGNED_INT8 };
	cl_image_desc	 desc;
	cl_context	 c = NULL;
	cl_command_queue q = NULL;
	cl_program	 p = NULL, p2;
	cl_kernel	 k = NULL;
	cl_event	 ev = NULL;
	cl_mem		 img = NULL, img2 = NULL, b = NULL;
	cl_device_id	 devs[2];
	cl_ulong	 t0 = 0, t1 = 0;
	cl_uint		 pix[16], back[16], u = 0, seed = 4;
	cl_int		 err, st = 0;
	size_t		 o3[3] = { 0, 0, 0 }, r3[3] = { 4, 4, 1 };
	size_t		 rr[3] = { 16, 4, 1 }, rp, sp, words = NL_WORDS;
	const char	*src = nl_src;
	char		 name[64];
	void		*map;
	int		 i, n;

	/* Sub-devices: of the live device, none of the lost one. */
	{
		cl_device_partition_property pp[] = {
		    CL_DEVICE_PARTITION_EQUALLY, 1, 0 };
		cl_device_id	 sd[64];
		cl_uint		 nsd = 0, j;

		err = clCreateSubDevices(w->live, pp, 64, sd, &nsd);
		check("sub_devices_live", err == CL_SUCCESS && nsd > 0,
		    "clCreateSubDevices of the live device: %d", (int)err);
		for (j = 0; err == CL_SUCCESS && j < nsd; j++)
			clReleaseDevice(sd[j]);
		nl_is("sub_devices_lost", clCreateSubDevices(w->lost, pp, 64,
		    sd, &nsd), CL_DEVICE_NOT_AVAILABLE);
	}

	/* Contexts: the lost device is refused, the others go on. */
	c = clCreateContext(NULL, 1, &w->lost, NULL, NULL, &err);
	nl_is("context_lost_device", err, CL_DEVICE_NOT_AVAILABLE);
	if (c != NULL)
		clReleaseContext(c);
	c = clCreateContext(NULL, 1, &w->live, NULL, NULL, &err);
	nl_is("context_live_device", err, CL_SUCCESS);
	if (c != NULL)
		clReleaseContext(c);
	c = clCreateContextFromType(NULL, CL_DEVICE_TYPE_ALL, NULL, NULL,
	    &err);
	if (nl_is("context_from_type", err, CL_SUCCESS)) {
		err = clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof devs,
		    devs, &rp);
		check("context_from_type_live", err == CL_SUCCESS && rp ==
		    sizeof devs[0] && devs[0] == w->live, "a context from "
		    "type after the loss: %d, %zu devices", (int)err,
		    rp / sizeof devs[0]);
		clReleaseContext(c);
	}

	/* Queues: on the lost device refused; profiling on the live one. */
	q = clCreateCommandQueue(w->ctx, w->lost, 0, &err);
	nl_is("queue_lost", err, CL_DEVICE_NOT_AVAILABLE);
	if (q != NULL)
		clReleaseCommandQueue(q);
	q = clCreateCommandQueueWithProperties(w->ctx, w->live, qp, &err);
	if (!nl_is("queue_profiling", err, CL_SUCCESS))
		return;

	/* A program with argument info, built for every device. */
	p = clCreateProgramWithSource(w->ctx, 1, &src, NULL, &err);
	if (err == CL_SUCCESS)
		err = clBuildProgram(p, 0, NULL, "-cl-kernel-arg-info", NULL,
		    NULL);
	if (nl_is("build_arg_info", err, CL_SUCCESS) &&
	    (k = clCreateKernel(p, "fill", &err)) != NULL) {
		nl_is("kernel_arg_info", clGetKernelArgInfo(k, 0,
		    CL_KERNEL_ARG_NAME, sizeof name, name, NULL), CL_SUCCESS);
		(void)clSetKernelArg(k, 0, sizeof w->buf, &w->buf);
		(void)clSetKernelArg(k, 1, sizeof seed, &seed);
		nl_is("kernel_profiled", clEnqueueNDRangeKernel(q, k, 1, NULL,
		    &words, NULL, 0, NULL, &ev), CL_SUCCESS);
		nl_is("task", clEnqueueTask(q, k, 0, NULL, NULL), CL_SUCCESS);
		nl_is("finish_profiled", clFinish(q), CL_SUCCESS);
		if (ev != NULL) {
			err = clGetEventProfilingInfo(ev,
			    CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
			if (err == CL_SUCCESS)
				err = clGetEventProfilingInfo(ev,
				    CL_PROFILING_COMMAND_END, sizeof t1, &t1,
				    NULL);
			check("profiling", err == CL_SUCCESS && t1 >= t0,
			    "profiling info: %d", (int)err);
			clReleaseEvent(ev);
		}
	}

	/*
	 * Built-in kernels of the live device; none of the lost one's
	 * (PoCL 3.1 makes no kernel of its own built-in program: not tried).
	 */
	p2 = clCreateProgramWithBuiltInKernels(w->ctx, 1, &w->live,
	    "pocl.add.i8", &err);
	if (nl_is("builtin_program", err, CL_SUCCESS))
		clReleaseProgram(p2);
	p2 = clCreateProgramWithBuiltInKernels(w->ctx, 1, &w->lost,
	    "pocl.add.i8", &err);
	nl_is("builtin_program_lost", err, CL_DEVICE_NOT_AVAILABLE);
	if (p2 != NULL)
		clReleaseProgram(p2);

	/* Deprecated commands, a non-blocking write, a callback. */
	nl_is("marker_old", clEnqueueMarker(q, &ev), CL_SUCCESS);
	if (ev != NULL) {
		nl_is("wait_for_events_old", clEnqueueWaitForEvents(q, 1, &ev),
		    CL_SUCCESS);
		atomic_store(&nl_cb.runs, 0);
		nl_is("callback_live", clSetEventCallback(ev, CL_COMPLETE,
		    nl_cb_run, NULL), CL_SUCCESS);
		clReleaseEvent(ev);
		ev = NULL;
	}
	nl_is("barrier_old", clEnqueueBarrier(q), CL_SUCCESS);
	nl_is("write_nonblocking", clEnqueueWriteBuffer(q, w->buf, CL_FALSE,
	    0, sizeof pix, pix, 0, NULL, NULL), CL_SUCCESS);
	nl_is("finish_old", clFinish(q), CL_SUCCESS);
	for (n = 0; n < STATS_POLLS && atomic_load(&nl_cb.runs) == 0; n++)
		poll_wait();
	check("callback_live_ran", atomic_load(&nl_cb.runs) == 1 &&
	    atomic_load(&nl_cb.status) == CL_COMPLETE, "a live event's "
	    "callback: ran %d times, status %d", atomic_load(&nl_cb.runs),
	    atomic_load(&nl_cb.status));
	atomic_store(&nl_cb.runs, 0);

	/* Rectangles of a buffer made after the loss. */
	for (i = 0; i < 16; i++)
		pix[i] = 0x01020304u * (cl_uint)(i + 1);
	b = clCreateBuffer(w->ctx, CL_MEM_READ_WRITE, 4 * sizeof pix, NULL,
	    &err);
	if (nl_is("rect_buffer", err, CL_SUCCESS)) {
		nl_is("rect_write", clEnqueueWriteBufferRect(q, b, CL_TRUE, o3,
		    o3, rr, 32, 0, 16, 0, pix, 0, NULL, NULL), CL_SUCCESS);
		nl_is("rect_copy", clEnqueueCopyBufferRect(q, b, b, o3, (size_t
		    [3]){ 16, 0, 0 }, rr, 32, 0, 32, 0, 0, NULL, NULL),
		    CL_SUCCESS);
		memset(back, 0, sizeof back);
		err = clEnqueueReadBufferRect(q, b, CL_TRUE, (size_t [3]){ 16,
		    0, 0 }, o3, rr, 32, 0, 16, 0, back, 0, NULL, NULL);
		check("rect_read", err == CL_SUCCESS && memcmp(back, pix,
		    sizeof pix) == 0, "a rectangle copied and read: %d",
		    (int)err);
	}

	/* Images: filled, copied, through a buffer, mapped. */
	memset(&desc, 0, sizeof desc);
	desc.image_type = CL_MEM_OBJECT_IMAGE2D;
	desc.image_width = 4;
	desc.image_height = 4;
	img = clCreateImage(w->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    &fmt, &desc, pix, &err);
	if (nl_is("image_host_bytes", err, CL_SUCCESS))
		img2 = clCreateImage(w->ctx, CL_MEM_READ_WRITE, &fmt, &desc,
		    NULL, &err);
	if (img2 != NULL && b != NULL) {
		nl_is("image_copy", clEnqueueCopyImage(q, img, img2, o3, o3,
		    r3, 0, NULL, NULL), CL_SUCCESS);
		nl_is("image_to_buffer", clEnqueueCopyImageToBuffer(q, img2, b,
		    o3, r3, 0, 0, NULL, NULL), CL_SUCCESS);
		nl_is("image_fill", clEnqueueFillImage(q, img, (cl_uint [4]){
		    1, 2, 3, 4 }, o3, r3, 0, NULL, NULL), CL_SUCCESS);
		nl_is("buffer_to_image", clEnqueueCopyBufferToImage(q, b, img,
		    0, o3, r3, 0, NULL, NULL), CL_SUCCESS);
		map = clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_READ, o3, r3,
		    &rp, &sp, 0, NULL, NULL, &err);
		if (nl_is("image_map", err, CL_SUCCESS)) {
			for (i = 0, n = 1; i < 4; i++)
				n &= memcmp((char *)map + i * rp, pix + 4 * i,
				    16) == 0;
			check("image_map_bytes", n, "an image copied, through "
			    "a buffer and back, mapped: wrong bytes");
			nl_is("image_unmap", clEnqueueUnmapMemObject(q, img,
			    map, 0, NULL, NULL), CL_SUCCESS);
		}
	}
	nl_is("finish_images", clFinish(q), CL_SUCCESS);

	/* The lost node's event: failed, its callback runs, waits end. */
	if (lostev != NULL) {
		err = clWaitForEvents(1, &lostev);
		check("lost_event_wait", err != CL_SUCCESS, "clWaitForEvents on "
		    "the lost node's event succeeded");
		err = clGetEventInfo(lostev, CL_EVENT_COMMAND_EXECUTION_STATUS,
		    sizeof st, &st, NULL);
		check("lost_event_status", err == CL_SUCCESS && st < 0,
		    "the lost node's event: %d, status %d", (int)err, (int)st);
		nl_is("lost_event_callback_set", clSetEventCallback(lostev,
		    CL_COMPLETE, nl_cb_run, NULL), CL_SUCCESS);
		for (n = 0; n < STATS_POLLS && atomic_load(&nl_cb.runs) == 0;
		    n++)
			poll_wait();
		check("lost_event_callback", atomic_load(&nl_cb.runs) == 1 &&
		    atomic_load(&nl_cb.status) < 0, "its callback: ran %d "
		    "times, status %d", atomic_load(&nl_cb.runs),
		    atomic_load(&nl_cb.status));
		err = clEnqueueReadBuffer(q, w->buf, CL_TRUE, 0, sizeof u, &u,
		    1, &lostev, NULL);
		nl_is("lost_event_waited_read", err,
		    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
		nl_is("finish_after_lost_wait", clFinish(q), CL_SUCCESS);
		/* Non-blocking behind it: enqueued, then fails, never hangs. */
		nl_is("lost_event_marker", clEnqueueMarkerWithWaitList(q, 1,
		    &lostev, &ev), CL_SUCCESS);
		if (ev != NULL) {
			err = clWaitForEvents(1, &ev);
			st = 0;
			clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
			    sizeof st, &st, NULL);
			check("lost_event_waited_marker", err ==
			    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST &&
			    st < 0, "a marker behind the lost node's event: "
			    "wait %d, status %d", (int)err, (int)st);
			clReleaseEvent(ev);
			ev = NULL;
		}
	}
	if (b != NULL)
		clReleaseMemObject(b);
	if (img2 != NULL)
		clReleaseMemObject(img2);
	if (img != NULL)
		clReleaseMemObject(img);
	if (k != NULL)
		clReleaseKernel(k);
	if (p != NULL)
		clReleaseProgram(p);
	nl_is("queue_profiling_release", clReleaseCommandQueue(q),
	    CL_SUCCESS);
}

/*
 * One context over two servers; server lose (0 or 1) is lost by sig,
 * then the API is walked on the context.
 */
static void
nl_walk(const char *name, int lose, int sig)
{
	struct srv	 sv[2];
	struct nl	 w;
	cl_platform_id	 pf;
	cl_event	 ue = NULL, lostev = NULL, liveev = NULL;
	cl_kernel	 kb = NULL;
	cl_uint		 n = 0, seed, word = 0;
	size_t		 words = NL_WORDS;
	cl_int		 err = CL_SUCCESS;
	const char	*src = nl_src;
	char		 what[64];

	memset(&w, 0, sizeof w);
	memset(sv, 0, sizeof sv);
	snprintf(what, sizeof what, "%s_server0", name);
	if (!srv_start(&sv[0], what, "127.0.0.1:0", NULL))
		return;
	snprintf(what, sizeof what, "%s_server1", name);
	if (!srv_start(&sv[1], what, "127.0.0.1:0", NULL))
		goto out;
	if (!nl_env(sv, sig == SIGSTOP))
		goto out;
	if (clGetPlatformIDs(1, &pf, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 2, w.dev, &n) !=
	    CL_SUCCESS || n < 2) {
		check("setup", 0, "want 2 VCL devices, have %u", n);
		goto out;
	}
	w.lost = w.dev[lose];
	w.live = w.dev[1 - lose];
	if ((w.ctx = clCreateContext(NULL, 2, w.dev, NULL, NULL, &err)) ==
	    NULL || (w.prog = clCreateProgramWithSource(w.ctx, 1, &src, NULL,
	    &err)) == NULL || (err = clBuildProgram(w.prog, 0, NULL, NULL,
	    NULL, NULL)) != CL_SUCCESS || (w.q = clCreateCommandQueue(w.ctx,
	    w.live, 0, &err)) == NULL || (w.qlost =
	    clCreateCommandQueue(w.ctx, w.lost, 0, &err)) == NULL ||
	    (w.buf = clCreateBuffer(w.ctx, CL_MEM_READ_WRITE, NL_WORDS *
	    sizeof(cl_uint), NULL, &err)) == NULL) {
		check("setup", 0, "OpenCL set-up failed: %d", (int)err);
		goto out;
	}
	if (!nl_fill("before", w.q, w.prog, w.buf, 1) ||
	    (kb = clCreateKernel(w.prog, "fill", &err)) == NULL)
		goto out;
	/* A marker on the lost node, held behind a user event. */
	if ((ue = clCreateUserEvent(w.ctx, &err)) == NULL ||
	    (err = clEnqueueMarkerWithWaitList(w.qlost, 1, &ue, &lostev)) !=
	    CL_SUCCESS || (err = clFlush(w.qlost)) != CL_SUCCESS ||
	    (err = clEnqueueMarkerWithWaitList(w.q, 1, &ue, &liveev)) !=
	    CL_SUCCESS || (err = clFlush(w.q)) != CL_SUCCESS) {
		check("setup_lost_event", 0, "a held marker: %d", (int)err);
		goto out;
	}
	kill(sv[lose].pid, sig);
	/* The loss is found (a stop: once a call there times out). */
	err = clFinish(w.qlost);
	check("loss_found", err == CL_DEVICE_NOT_AVAILABLE, "clFinish on the "
	    "lost node's queue: %d", (int)err);
	/* The user event made before the loss still gates the live node. */
	nl_is("old_user_event_set", clSetUserEventStatus(ue, CL_COMPLETE),
	    CL_SUCCESS);
	nl_is("old_user_event_gates", clWaitForEvents(1, &liveev), CL_SUCCESS);
	nl_programs(&w);
	nl_objects(&w);
	nl_more(&w, lostev);
	nl_fill("after", w.q, w.prog, w.buf, 2);
	/* A kernel made on both nodes before the loss runs on the live one. */
	seed = 8;
	err = clSetKernelArg(kb, 0, sizeof w.buf, &w.buf);
	if (err == CL_SUCCESS)
		err = clSetKernelArg(kb, 1, sizeof seed, &seed);
	if (err == CL_SUCCESS)
		err = clEnqueueNDRangeKernel(w.q, kb, 1, NULL, &words, NULL, 0,
		    NULL, NULL);
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(w.q, w.buf, CL_TRUE, 0, sizeof word,
		    &word, 0, NULL, NULL);
	check("old_kernel", err == CL_SUCCESS && word == seed * 2654435761u,
	    "a kernel made before the loss, on the live device: %d", (int)err);
out:
	if (kb != NULL)
		clReleaseKernel(kb);
	if (lostev != NULL)
		clReleaseEvent(lostev);
	if (liveev != NULL)
		clReleaseEvent(liveev);
	if (ue != NULL)
		clReleaseEvent(ue);
	if (w.buf != NULL)
		clReleaseMemObject(w.buf);
	if (w.qlost != NULL)
		clReleaseCommandQueue(w.qlost);
	if (w.q != NULL)
		clReleaseCommandQueue(w.q);
	if (w.prog != NULL)
		clReleaseProgram(w.prog);
	if (w.ctx != NULL)
		nl_is("context_release", clReleaseContext(w.ctx), CL_SUCCESS);
	if (sv[lose].pid > 0) {
		kill(sv[lose].pid, SIGKILL);
		srv_wait_exit(&sv[lose]);
	}
	snprintf(what, sizeof what, "%s_server%d_stop", name, 1 - lose);
	srv_stop(&sv[1 - lose], what);
}

/*
 * The second node stopped and not yet found lost: the call that finds it
 * (its part there times out) still succeeds for the live device. what:
 * 0 a build for every device, 1 the image formats, 2 the binary sizes,
 * 3 a link for every device.
 */
static void
nl_during(const char *name, int what)
{
	struct srv	 sv[2];
	cl_platform_id	 pf;
	cl_device_id	 dev[2];
	cl_context	 ctx = NULL;
	cl_program	 p = NULL, ex;
	cl_command_queue q = NULL;
	cl_image_format	 fmts[64];
	cl_build_status	 st = CL_BUILD_NONE;
	cl_mem		 buf = NULL;
	cl_uint		 n = 0;
	cl_int		 err = CL_SUCCESS;
	size_t		 sizes[2] = { 0, 0 };
	const char	*src = nl_src;
	char		 tag[64];

	memset(sv, 0, sizeof sv);
	snprintf(tag, sizeof tag, "%s_server0", name);
	if (!srv_start(&sv[0], tag, "127.0.0.1:0", NULL))
		return;
	snprintf(tag, sizeof tag, "%s_server1", name);
	if (!srv_start(&sv[1], tag, "127.0.0.1:0", NULL))
		goto out;
	if (!nl_env(sv, 1))
		goto out;
	if (clGetPlatformIDs(1, &pf, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 2, dev, &n) != CL_SUCCESS ||
	    n < 2 || (ctx = clCreateContext(NULL, 2, dev, NULL, NULL, &err)) ==
	    NULL || (p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err)) ==
	    NULL || (q = clCreateCommandQueue(ctx, dev[0], 0, &err)) == NULL ||
	    (buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, NL_WORDS *
	    sizeof(cl_uint), NULL, &err)) == NULL || (what == 2 &&
	    (err = clBuildProgram(p, 0, NULL, NULL, NULL, NULL)) !=
	    CL_SUCCESS) || (what == 3 && (err = clCompileProgram(p, 0, NULL,
	    NULL, 0, NULL, NULL, NULL, NULL)) != CL_SUCCESS)) {
		check("setup", 0, "OpenCL set-up failed: %d, %u devices",
		    (int)err, n);
		goto out;
	}
	kill(sv[1].pid, SIGSTOP);
	switch (what) {
	case 0:
		nl_is("build_all", clBuildProgram(p, 0, NULL, NULL, NULL,
		    NULL), CL_SUCCESS);
		err = clGetProgramBuildInfo(p, dev[1], CL_PROGRAM_BUILD_STATUS,
		    sizeof st, &st, NULL);
		check("build_all_lost_status", err == CL_SUCCESS && st ==
		    CL_BUILD_ERROR, "the lost device's build status: %d, %d",
		    (int)err, (int)st);
		nl_fill("build_all_runs", q, p, buf, 6);
		break;
	case 1:
		nl_is("image_formats", clGetSupportedImageFormats(ctx,
		    CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 64, fmts, &n),
		    CL_SUCCESS);
		break;
	case 3:
		ex = clLinkProgram(ctx, 0, NULL, NULL, 1, &p, NULL, NULL, &err);
		if (nl_is("link_all", err, CL_SUCCESS))
			nl_fill("link_all_runs", q, ex, buf, 10);
		if (ex != NULL)
			clReleaseProgram(ex);
		break;
	default:
		err = clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES,
		    sizeof sizes, sizes, NULL);
		check("binary_sizes", err == CL_SUCCESS && sizes[0] > 0 &&
		    sizes[1] == 0, "binary sizes: %d, live %zu, lost %zu "
		    "(want 0)", (int)err, sizes[0], sizes[1]);
		break;
	}
	check("lost_found", clFinish(q) == CL_SUCCESS && clGetDeviceInfo(dev[1],
	    CL_DEVICE_AVAILABLE, sizeof n, &n, NULL) == CL_SUCCESS && n ==
	    CL_FALSE, "the live queue finishes, the lost device is "
	    "unavailable");
out:
	if (buf != NULL)
		clReleaseMemObject(buf);
	if (q != NULL)
		clReleaseCommandQueue(q);
	if (p != NULL)
		clReleaseProgram(p);
	if (ctx != NULL)
		clReleaseContext(ctx);
	if (sv[1].pid > 0) {
		kill(sv[1].pid, SIGKILL);
		srv_wait_exit(&sv[1]);
	}
	snprintf(tag, sizeof tag, "%s_server0_stop", name);
	srv_stop(&sv[0], tag);
}

/* A build for every device finds the stop. */
static void
t_during_build(void)
{
	nl_during("during_build", 0);
}

/* The image formats find the stop. */
static void
t_during_formats(void)
{
	nl_during("during_formats", 1);
}

/* The binary sizes find the stop. */
static void
t_during_binaries(void)
{
	nl_during("during_binaries", 2);
}

/* A link for every device finds the stop. */
static void
t_during_link(void)
{
	nl_during("during_link", 3);
}

/*
 * A fake node (PoCL here takes no IL): it greets with ndev devices (0:
 * one), makes programs from IL and sets their specialization constants,
 * counting them; with lose, it closes its connection once the program is
 * made. Builds: the first succeeds for the devices it names, the second
 * fails with CL_OUT_OF_RESOURCES and no result, the third closes the
 * connection (the node is lost during it).
 */
struct nl_fake {
	int		 lfd;
	atomic_int	 fd;		/* the client's connection, or -1 */
	char		 port[16];
	int		 lose;
	size_t		 ndev;
	atomic_int	 specs;		/* SetSpecConstant requests */
	atomic_int	 builds;	/* BuildProgram requests */
	pthread_t	 t;
};

/* Answer a build: CL_BUILD_SUCCESS for each device it names. */
static void
nl_fake_built(int fd, const Vcl__Request *req)
{
	Vcl__ToClient			 tc = VCL__TO_CLIENT__INIT;
	Vcl__Reply			 r = VCL__REPLY__INIT;
	Vcl__BuildResult		 br = VCL__BUILD_RESULT__INIT;
	Vcl__BuildResult__PerDevice	 pd[8], *pdp[8];
	size_t				 i;

	for (i = 0; i < req->build_program->n_devices && i < 8; i++) {
		vcl__build_result__per_device__init(&pd[i]);
		pd[i].device = req->build_program->devices[i];
		pd[i].status = CL_BUILD_SUCCESS;
		pd[i].log = "built";
		pdp[i] = &pd[i];
	}
	br.devices = pdp;
	br.n_devices = i;
	r.seq = req->seq;
	r.status = CL_SUCCESS;
	r.result_case = VCL__REPLY__RESULT_BUILD;
	r.build = &br;
	tc.reply = &r;
	raw_fake_send(fd, &tc, 0, 0);
}

/* Serve one client as a fake node (its own thread). */
static void *
nl_fake_run(void *arg)
{
	struct nl_fake	*f = arg;
	struct pollfd	 pfd;
	struct timeval	 tv = { 60, 0 };
	Vcl__Request	*req;
	uint64_t	 bulk;
	int		 fd, end = 0;

	pfd.fd = f->lfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 60000) != 1 || (fd = accept(f->lfd, NULL,
	    NULL)) < 0)
		return (NULL);
	atomic_store(&f->fd, fd);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (raw_fake_handshake(fd, f->ndev > 0 ? f->ndev : 1, 0) != 0)
		end = 1;
	while (!end && (req = raw_fake_read(fd, &bulk)) != NULL) {
		if (bulk > 0 && raw_fake_skip(fd, bulk) != 0)
			end = 1;
		switch (req->call_case) {
		case VCL__REQUEST__CALL_BUILD_PROGRAM:
			switch (atomic_fetch_add(&f->builds, 1)) {
			case 0:
				nl_fake_built(fd, req);
				break;
			case 1:
				raw_fake_reply(fd, req->seq,
				    CL_OUT_OF_RESOURCES, 0, 0);
				break;
			default:
				end = 1;
				break;
			}
			break;
		case VCL__REQUEST__CALL_CREATE_PROGRAM_FROM:
			raw_fake_reply(fd, req->seq, CL_SUCCESS, 0, 0);
			end |= f->lose;
			break;
		case VCL__REQUEST__CALL_SET_SPEC_CONSTANT:
			atomic_fetch_add(&f->specs, 1);
			raw_fake_reply(fd, req->seq, CL_SUCCESS, 0, 0);
			break;
		case VCL__REQUEST__CALL_GET_INFO:
			raw_fake_reply(fd, req->seq, CL_INVALID_VALUE, 0, 0);
			break;
		case VCL__REQUEST__CALL_STATS:
		case VCL__REQUEST__CALL_FINISH:
			raw_fake_reply(fd, req->seq, CL_SUCCESS, 0, 0);
			break;
		default:
			break;		/* asynchronous: no reply */
		}
		vcl__request__free_unpacked(req, NULL);
	}
	shutdown(fd, SHUT_RDWR);	/* closed once joined */
	return (NULL);
}

/*
 * clSetProgramSpecializationConstant on a program from IL over two fake
 * nodes, the first lost once the program is made: the constant is set on
 * the live node, and the call succeeds.
 */
static void
t_spec_constant(void)
{
	struct nl_fake	 f[2];
	const char	*icd = getenv("VCL_TEST_ICD_DIR");
	static const unsigned char il[] = { 0x03, 0x02, 0x23, 0x07, 0, 1 };
	cl_platform_id	 pf;
	cl_device_id	 dev[2];
	cl_context	 ctx = NULL;
	cl_program	 p = NULL;
	cl_uint		 n = 0, v = 42;
	cl_int		 err = CL_SUCCESS;
	char		 nodes[80];
	int		 i, started = 0;

	memset(f, 0, sizeof f);
	f[0].lose = 1;
	atomic_store(&f[0].fd, -1);
	atomic_store(&f[1].fd, -1);
	for (i = 0; i < 2; i++)
		if ((f[i].lfd = raw_fake_listen(f[i].port,
		    sizeof f[i].port)) == -1) {
			check("spec_setup", 0, "cannot listen: %s",
			    strerror(errno));
			goto out;
		}
	if (icd == NULL || *icd == '\0') {
		check("env", 0, "VCL_TEST_ICD_DIR is not set");
		goto out;
	}
	snprintf(nodes, sizeof nodes, "127.0.0.1:%s,127.0.0.1:%s",
	    f[0].port, f[1].port);
	setenv("VCL_NODES", nodes, 1);
	setenv("OCL_ICD_VENDORS", icd, 1);
	setenv("VCL_STRICT", "1", 1);
	unsetenv("VCL_CALL_TIMEOUT_MS");
	unsetenv("VCL_TRANSPORT");
	for (started = 0; started < 2; started++)
		if (pthread_create(&f[started].t, NULL, nl_fake_run,
		    &f[started]) != 0)
			break;
	if (started < 2 || clGetPlatformIDs(1, &pf, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 2, dev, &n) !=
	    CL_SUCCESS || n < 2 || (ctx = clCreateContext(NULL, 2, dev, NULL,
	    NULL, &err)) == NULL || (p = clCreateProgramWithIL(ctx, il,
	    sizeof il, &err)) == NULL) {
		check("spec_setup", 0, "set-up failed: %d, %u devices",
		    (int)err, n);
		goto out;
	}
	/* The first node has closed: this call finds it lost, or knows. */
	nl_is("spec_constant_live", clSetProgramSpecializationConstant(p, 1,
	    sizeof v, &v), CL_SUCCESS);
	check("spec_constant_set", atomic_load(&f[1].specs) == 1, "the live "
	    "node got %d SetSpecConstant, want 1", atomic_load(&f[1].specs));
	check("spec_constant_lost", atomic_load(&f[0].specs) == 0, "the lost "
	    "node got %d", atomic_load(&f[0].specs));
out:
	if (p != NULL)
		clReleaseProgram(p);
	if (ctx != NULL)
		clReleaseContext(ctx);
	for (i = 0; i < 2; i++) {
		/* The fake's reads end; so does its wait for a client. */
		if (atomic_load(&f[i].fd) != -1)
			shutdown(atomic_load(&f[i].fd), SHUT_RDWR);
		if (f[i].lfd > 0)
			shutdown(f[i].lfd, SHUT_RDWR);
		if (i < started)
			pthread_join(f[i].t, NULL);
		if (atomic_load(&f[i].fd) != -1)
			close(atomic_load(&f[i].fd));
		if (f[i].lfd > 0)
			close(f[i].lfd);
	}
}

/* Check the build status of program p for device d. */
static int
nl_status_is(const char *name, cl_program p, cl_device_id d,
    cl_build_status want)
{
	cl_build_status	st = 99;
	cl_int		err;

	err = clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_STATUS, sizeof st,
	    &st, NULL);
	return (check(name, err == CL_SUCCESS && st == want, "build status "
	    "%d, want %d (%d)", (int)st, (int)want, (int)err));
}

/*
 * A build (compile: a compile) naming one of the two devices of a node
 * gives only that device a status: the fake node builds for its first
 * device, then fails a call for its second with no result, then is lost
 * during a call for its second on another program. Each time the device
 * the call does not name keeps what it had: CL_BUILD_SUCCESS from the
 * first call, or CL_BUILD_NONE on the program never built for it.
 */
static void
nl_unlisted(const char *name, int compile)
{
	struct nl_fake	 f;
	const char	*icd = getenv("VCL_TEST_ICD_DIR"), *src = nl_src;
	cl_platform_id	 pf;
	cl_device_id	 dev[2];
	cl_context	 ctx = NULL;
	cl_program	 p = NULL, p2 = NULL;
	cl_uint		 n = 0;
	cl_int		 err = CL_SUCCESS;
	char		 nodes[48], tag[64];
	int		 started = 0, k;

	memset(&f, 0, sizeof f);
	f.ndev = 2;
	atomic_store(&f.fd, -1);
	if ((f.lfd = raw_fake_listen(f.port, sizeof f.port)) == -1) {
		snprintf(tag, sizeof tag, "%s_setup", name);
		check(tag, 0, "cannot listen: %s", strerror(errno));
		return;
	}
	if (icd == NULL || *icd == '\0') {
		check("env", 0, "VCL_TEST_ICD_DIR is not set");
		goto out;
	}
	snprintf(nodes, sizeof nodes, "127.0.0.1:%s", f.port);
	setenv("VCL_NODES", nodes, 1);
	setenv("OCL_ICD_VENDORS", icd, 1);
	setenv("VCL_STRICT", "1", 1);
	unsetenv("VCL_CALL_TIMEOUT_MS");
	unsetenv("VCL_TRANSPORT");
	started = pthread_create(&f.t, NULL, nl_fake_run, &f) == 0;
	if (!started || clGetPlatformIDs(1, &pf, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 2, dev, &n) !=
	    CL_SUCCESS || n < 2 || (ctx = clCreateContext(NULL, 2, dev, NULL,
	    NULL, &err)) == NULL || (p = clCreateProgramWithSource(ctx, 1,
	    &src, NULL, &err)) == NULL || (p2 = clCreateProgramWithSource(ctx,
	    1, &src, NULL, &err)) == NULL) {
		snprintf(tag, sizeof tag, "%s_setup", name);
		check(tag, 0, "set-up failed: %d, %u devices", (int)err, n);
		goto out;
	}
	for (k = 0; k < 3; k++) {
		err = compile ? clCompileProgram(k < 2 ? p : p2, 1,
		    &dev[k > 0], NULL, 0, NULL, NULL, NULL, NULL) :
		    clBuildProgram(k < 2 ? p : p2, 1, &dev[k > 0], NULL, NULL,
		    NULL);
		snprintf(tag, sizeof tag, "%s_call%d", name, k);
		nl_is(tag, err, k == 0 ? CL_SUCCESS : k == 1 ?
		    CL_OUT_OF_RESOURCES : CL_DEVICE_NOT_AVAILABLE);
		snprintf(tag, sizeof tag, "%s_call%d_listed", name, k);
		nl_status_is(tag, k < 2 ? p : p2, dev[k > 0], k == 0 ?
		    CL_BUILD_SUCCESS : CL_BUILD_ERROR);
		snprintf(tag, sizeof tag, "%s_call%d_unlisted", name, k);
		nl_status_is(tag, k < 2 ? p : p2, dev[k == 0], k == 0 ?
		    CL_BUILD_NONE : k == 1 ? CL_BUILD_SUCCESS : CL_BUILD_NONE);
	}
	snprintf(tag, sizeof tag, "%s_lost_earlier_kept", name);
	nl_status_is(tag, p, dev[0], CL_BUILD_SUCCESS);
out:
	if (p2 != NULL)
		clReleaseProgram(p2);
	if (p != NULL)
		clReleaseProgram(p);
	if (ctx != NULL)
		clReleaseContext(ctx);
	if (atomic_load(&f.fd) != -1)
		shutdown(atomic_load(&f.fd), SHUT_RDWR);
	shutdown(f.lfd, SHUT_RDWR);
	if (started)
		pthread_join(f.t, NULL);
	if (atomic_load(&f.fd) != -1)
		close(atomic_load(&f.fd));
	close(f.lfd);
}

/* Builds naming one device of a node leave the other's status alone. */
static void
t_unlisted_build(void)
{
	nl_unlisted("unlisted_build", 0);
}

/* Compiles naming one device of a node leave the other's status alone. */
static void
t_unlisted_compile(void)
{
	nl_unlisted("unlisted_compile", 1);
}

/*
 * A link with no device list on a context of two nodes, its inputs
 * compiled for the first node's device only: OpenCL 3.0 says a device for
 * which no input holds a compiled object gets no link (no executable, not
 * an error). The second node was asked all the same and answered
 * CL_INVALID_OPERATION (none of its devices left to link), failing the
 * link. It links for the first device (the kernel runs there, bytes
 * checked), the second's status is CL_BUILD_NONE, and a link none of whose
 * inputs is compiled anywhere is still CL_INVALID_OPERATION. The same
 * with both devices listed: the listed second node was asked and failed
 * the link as well.
 */
static void
t_link_one_node(void)
{
	struct srv		 sv[2];
	struct nl		 w;
	cl_platform_id		 pf;
	cl_program		 in[2] = { NULL, NULL }, ex = NULL, bare = NULL;
	cl_program		 listed = NULL;
	cl_build_status		 st[2] = { 99, 99 };
	const char		*src;
	cl_uint			 n = 0;
	cl_int			 err = CL_SUCCESS;

	memset(&w, 0, sizeof w);
	memset(sv, 0, sizeof sv);
	if (!srv_start(&sv[0], "one_node_server0", "127.0.0.1:0", NULL))
		return;
	if (!srv_start(&sv[1], "one_node_server1", "127.0.0.1:0", NULL) ||
	    !nl_env(sv, 0))
		goto out;
	if (clGetPlatformIDs(1, &pf, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 2, w.dev, &n) !=
	    CL_SUCCESS || n < 2) {
		check("one_node_setup", 0, "want 2 VCL devices, have %u", n);
		goto out;
	}
	src = nl_lib;
	if ((w.ctx = clCreateContext(NULL, 2, w.dev, NULL, NULL, &err)) ==
	    NULL || (in[0] = clCreateProgramWithSource(w.ctx, 1, &src, NULL,
	    &err)) == NULL)
		goto setup;
	src = nl_use;
	if ((in[1] = clCreateProgramWithSource(w.ctx, 1, &src, NULL,
	    &err)) == NULL)
		goto setup;
	src = nl_src;
	if ((bare = clCreateProgramWithSource(w.ctx, 1, &src, NULL,
	    &err)) == NULL || (err = clCompileProgram(in[0], 1, &w.dev[0],
	    NULL, 0, NULL, NULL, NULL, NULL)) != CL_SUCCESS || (err =
	    clCompileProgram(in[1], 1, &w.dev[0], NULL, 0, NULL, NULL, NULL,
	    NULL)) != CL_SUCCESS || (w.q = clCreateCommandQueue(w.ctx, w.dev[0],
	    0, &err)) == NULL || (w.buf = clCreateBuffer(w.ctx,
	    CL_MEM_READ_WRITE, NL_WORDS * sizeof(cl_uint), NULL, &err)) ==
	    NULL)
		goto setup;
	ex = clLinkProgram(w.ctx, 0, NULL, NULL, 2, in, NULL, NULL, &err);
	if (nl_is("one_node_linked", err, CL_SUCCESS)) {
		nl_fill("one_node_runs", w.q, ex, w.buf, 13);
		err = clGetProgramBuildInfo(ex, w.dev[0],
		    CL_PROGRAM_BUILD_STATUS, sizeof st[0], &st[0], NULL);
		if (err == CL_SUCCESS)
			err = clGetProgramBuildInfo(ex, w.dev[1],
			    CL_PROGRAM_BUILD_STATUS, sizeof st[1], &st[1],
			    NULL);
		check("one_node_status", err == CL_SUCCESS &&
		    st[0] == CL_BUILD_SUCCESS && st[1] == CL_BUILD_NONE,
		    "build status %d and %d, want %d and %d (none) (%d)",
		    (int)st[0], (int)st[1], CL_BUILD_SUCCESS, CL_BUILD_NONE,
		    (int)err);
	}
	/* The same inputs, both devices listed: the second gets nothing. */
	listed = clLinkProgram(w.ctx, 2, w.dev, NULL, 2, in, NULL, NULL, &err);
	if (nl_is("one_node_listed_linked", err, CL_SUCCESS)) {
		nl_fill("one_node_listed_runs", w.q, listed, w.buf, 17);
		st[0] = st[1] = 99;
		err = clGetProgramBuildInfo(listed, w.dev[0],
		    CL_PROGRAM_BUILD_STATUS, sizeof st[0], &st[0], NULL);
		if (err == CL_SUCCESS)
			err = clGetProgramBuildInfo(listed, w.dev[1],
			    CL_PROGRAM_BUILD_STATUS, sizeof st[1], &st[1],
			    NULL);
		check("one_node_listed_status", err == CL_SUCCESS &&
		    st[0] == CL_BUILD_SUCCESS && st[1] == CL_BUILD_NONE,
		    "build status %d and %d, want %d and %d (none) (%d)",
		    (int)st[0], (int)st[1], CL_BUILD_SUCCESS, CL_BUILD_NONE,
		    (int)err);
	}
	/* No input compiled anywhere: still no device to link. */
	(void)clLinkProgram(w.ctx, 0, NULL, NULL, 1, &bare, NULL, NULL, &err);
	nl_is("one_node_none_compiled", err, CL_INVALID_OPERATION);
	(void)clLinkProgram(w.ctx, 2, w.dev, NULL, 1, &bare, NULL, NULL, &err);
	nl_is("one_node_listed_none_compiled", err, CL_INVALID_OPERATION);
	goto out;
setup:
	check("one_node_setup", 0, "OpenCL set-up failed: %d", (int)err);
out:
	if (listed != NULL)
		clReleaseProgram(listed);
	if (ex != NULL)
		clReleaseProgram(ex);
	if (bare != NULL)
		clReleaseProgram(bare);
	if (in[1] != NULL)
		clReleaseProgram(in[1]);
	if (in[0] != NULL)
		clReleaseProgram(in[0]);
	if (w.buf != NULL)
		clReleaseMemObject(w.buf);
	if (w.q != NULL)
		clReleaseCommandQueue(w.q);
	if (w.ctx != NULL)
		nl_is("one_node_context_release", clReleaseContext(w.ctx),
		    CL_SUCCESS);
	if (sv[1].pid > 0)
		srv_stop(&sv[1], "one_node_server1_stop");
	srv_stop(&sv[0], "one_node_server0_stop");
}

/*
 * A node lost (sig: killed, or stopped) while the application has nothing
 * on its way from it but waits on the other node for its bytes (a kernel
 * there on a buffer last written on it, and a blocking read; the
 * migration out of it waits behind a kernel that keeps its queue). Nobody
 * read its socket or asked whether it lived, so the other node waited
 * for its bytes, and the application for the other node (alive, sending
 * keepalives) without end: the soak saw a client hang so. Now the idle
 * receiver sees a hang-up within a tick and pings a quiet node while a
 * caller waits, and the wait fails; the test's alarm (60 s) catches a
 * hang.
 */
/* Signal a server a while after the caller begins to wait. */
struct nl_later {
	pid_t	pid;
	int	sig;
};

static void *
nl_later_run(void *arg)
{
	struct nl_later		*l = arg;
	struct timespec		 ts = { 0, 500000000L };

	nanosleep(&ts, NULL);
	kill(l->pid, l->sig);
	return (NULL);
}

static void
nl_idle(const char *name, int sig)
{
	struct srv		 sv[2];
	struct nl		 w;
	cl_platform_id		 pf;
	cl_command_queue	 qb = NULL;
	cl_kernel		 k = NULL, ks = NULL;
	cl_mem			 fresh = NULL;
	cl_uint			 a[NL_WORDS], seed = 5, n = 0;
	cl_uint			 rounds = 4000000000u;
	char			 what[64];
	size_t			 words = NL_WORDS, one = 1;
	const char		*src = nl_spin_src;
	struct nl_later		 later;
	pthread_t		 th;
	int			 started = 0;
	cl_int			 err = CL_SUCCESS;

	memset(&w, 0, sizeof w);
	memset(sv, 0, sizeof sv);
	if (!srv_start(&sv[0], "idle_server0", "127.0.0.1:0", NULL))
		return;
	if (!srv_start(&sv[1], "idle_server1", "127.0.0.1:0", NULL) ||
	    !nl_env(sv, sig == SIGSTOP))
		goto out;
	/* Small migrations over the servers' TCP link, as the soak's. */
	setenv("VCL_UCX_PLACE_MIN", "65536", 1);
	if (clGetPlatformIDs(1, &pf, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 2, w.dev, &n) !=
	    CL_SUCCESS || n < 2) {
		check("idle_devices", 0, "want 2 VCL devices, have %u", n);
		goto out;
	}
	if ((w.ctx = clCreateContext(NULL, 2, w.dev, NULL, NULL, &err)) ==
	    NULL || (w.prog = clCreateProgramWithSource(w.ctx, 1, &src, NULL,
	    &err)) == NULL || (err = clBuildProgram(w.prog, 2, w.dev, NULL,
	    NULL, NULL)) != CL_SUCCESS || (w.q = clCreateCommandQueue(w.ctx,
	    w.dev[0], 0, &err)) == NULL || (qb = clCreateCommandQueue(w.ctx,
	    w.dev[1], 0, &err)) == NULL || (w.buf = clCreateBuffer(w.ctx,
	    CL_MEM_READ_WRITE, sizeof a, NULL, &err)) == NULL ||
	    (k = clCreateKernel(w.prog, "fill", &err)) == NULL ||
	    (err = clSetKernelArg(k, 0, sizeof w.buf, &w.buf)) != CL_SUCCESS ||
	    (err = clSetKernelArg(k, 1, sizeof seed, &seed)) != CL_SUCCESS ||
	    (ks = clCreateKernel(w.prog, "spin", &err)) ==
	    NULL || (err = clSetKernelArg(ks, 0, sizeof w.buf, &w.buf)) !=
	    CL_SUCCESS || (err = clSetKernelArg(ks, 1, sizeof rounds,
	    &rounds)) != CL_SUCCESS)
		goto setup;
	/*
	 * The buffer's bytes on the second node, last written by a kernel
	 * that keeps it a while, and nothing on its way from it to the
	 * client.
	 */
	if ((err = clEnqueueNDRangeKernel(qb, k, 1, NULL, &words, NULL, 0,
	    NULL, NULL)) != CL_SUCCESS || (err = clFinish(qb)) != CL_SUCCESS ||
	    (err = clEnqueueNDRangeKernel(qb, ks, 1, NULL, &one, NULL, 0, NULL,
	    NULL)) != CL_SUCCESS || (err = clFlush(qb)) != CL_SUCCESS)
		goto setup;
	/*
	 * Wanted on the first node now (its migration out of the second
	 * waits for the spin), and the second lost while the client waits:
	 * the wait must fail, not last forever.
	 */
	later.pid = sv[1].pid;
	later.sig = sig;
	started = pthread_create(&th, NULL, nl_later_run, &later) == 0;
	err = clEnqueueNDRangeKernel(w.q, k, 1, NULL, &words, NULL, 0, NULL,
	    NULL);
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(w.q, w.buf, CL_TRUE, 0, sizeof a, a,
		    0, NULL, NULL);
	if (started)
		pthread_join(th, NULL);
	snprintf(what, sizeof what, "%s_lost_found", name);
	check(what, err == CL_DEVICE_NOT_AVAILABLE ||
	    err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
	    "the work that needs the lost node's bytes: %d, want an error "
	    "naming the loss", (int)err);
	/* The live node still works (a buffer whose bytes were not lost). */
	snprintf(what, sizeof what, "%s_live_works", name);
	if ((fresh = clCreateBuffer(w.ctx, CL_MEM_READ_WRITE, sizeof a, NULL,
	    &err)) != NULL)
		nl_fill(what, w.q, w.prog, fresh, 21);
	else
		check(what, 0, "clCreateBuffer: %d", (int)err);
	goto out;
setup:
	snprintf(what, sizeof what, "%s_setup", name);
	check(what, 0, "OpenCL set-up failed: %d", (int)err);
out:
	if (fresh != NULL)
		clReleaseMemObject(fresh);
	if (ks != NULL)
		clReleaseKernel(ks);
	if (k != NULL)
		clReleaseKernel(k);
	if (w.buf != NULL)
		clReleaseMemObject(w.buf);
	if (qb != NULL)
		clReleaseCommandQueue(qb);
	if (w.q != NULL)
		clReleaseCommandQueue(w.q);
	if (w.prog != NULL)
		clReleaseProgram(w.prog);
	if (w.ctx != NULL)
		clReleaseContext(w.ctx);
	srv_kill(&sv[1]);
	srv_stop(&sv[0], "idle_server0_stop");
}

/* The second node killed while idle. */
static void
t_idle_kill(void)
{
	nl_idle("idle_kill", SIGKILL);
}

/* The second node stopped while idle: found by the call timeout. */
static void
t_idle_stop(void)
{
	nl_idle("idle_stop", SIGSTOP);
}

/* The first node killed. */
static void
t_walk_kill(void)
{
	nl_walk("walk_kill", 0, SIGKILL);
}

/* The second node stopped. */
static void
t_walk_stop(void)
{
	nl_walk("walk_stop", 1, SIGSTOP);
}

static const struct test tests[] = {
	{ "walk_kill",		t_walk_kill,		90 },
	{ "walk_stop",		t_walk_stop,		90 },
	{ "during_build",	t_during_build,		60 },
	{ "during_formats",	t_during_formats,	60 },
	{ "during_binaries",	t_during_binaries,	60 },
	{ "during_link",	t_during_link,		60 },
	{ "spec_constant",	t_spec_constant,	60 },
	{ "unlisted_build",	t_unlisted_build,	60 },
	{ "unlisted_compile",	t_unlisted_compile,	60 },
	{ "link_one_node",	t_link_one_node,	60 },
	{ "idle_kill",		t_idle_kill,		60 },
	{ "idle_stop",		t_idle_stop,		60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
