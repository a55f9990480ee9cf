/* image_test.c - image and sampler requests with hostile values. */

/*
 * usage: image_test VCLSERVER
 *
 * Speaks the wire protocol to a real vclserver on PoCL: image creations
 * whose sizes wrap or whose formats and types are junk, reads, writes,
 * copies and fills whose origins and regions lie past the image, wrap, are
 * empty or have the wrong count, bulk bytes that do not match the region,
 * image and sampler kernel arguments of the wrong kind, and image commands
 * on a queue held behind a user event. Each gets the OpenCL error a local
 * runtime gives; the server survives and what is valid still works. The
 * harness is rawproto.c.
 */

#include "rawproto.h"

static const char image_src[] =
	"__kernel void kimg(__read_only image2d_t im, sampler_t s,\n"
	"    __global int *o)\n"
	"{\n"
	"	o[0] = get_image_width(im);\n"
	"	o[1] = (int)read_imageui(im, s, (int2)(1, 0)).x;\n"
	"}\n"
	"__kernel void kbuf(__global int *o) { o[0] = 5; }\n";

/* Ids of one session's objects. */
enum {
	CTX = 1, Q, PROG, BUF, IMG2, IMG3, SMP, K_IMG, K_BUF, UEV, EV,
	BAD = 50,
};

#define W	8		/* the 2D image: W x H of CL_R, CL_UNSIGNED_INT32 */
#define H	4

/* CreateImage of one format and type; bulk data when data is not NULL. */
static int
create_image(struct conn *c, uint64_t id, uint32_t order, uint32_t dtype,
    uint32_t type, uint64_t w, uint64_t h, uint64_t d, uint64_t a,
    const void *data, uint64_t len)
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
	m.has_height = m.has_depth = m.has_array_size = 1;
	m.height = h;
	m.depth = d;
	m.array_size = a;
	m.has_has_data = 1;
	m.has_data = data != NULL;
	r.call_case = VCL__REQUEST__CALL_CREATE_IMAGE;
	r.create_image = &m;
	return (send_req(c, &r, data, data != NULL ? len : 0));
}

/* ReadImage of a region (norg, nreg entries): the reply's status, 1: none. */
static int
read_image(struct conn *c, uint64_t mem, const uint64_t *o, size_t norg,
    const uint64_t *reg, size_t nreg, void *out, size_t len)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ReadImage	m = VCL__READ_IMAGE__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;
	struct reply	rp;
	int		st;

	q.queue = Q;
	m.q = &q;
	m.mem = mem;
	m.origin = (uint64_t *)o;
	m.n_origin = norg;
	m.region = (uint64_t *)reg;
	m.n_region = nreg;
	r.call_case = VCL__REQUEST__CALL_READ_IMAGE;
	r.read_image = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.r->status;
	if (st == 0 && out != NULL) {
		if (rp.bulk_len == len)
			memcpy(out, rp.bulk, len);
		else
			st = 2;
	}
	reply_free(&rp);
	return (st);
}

/* Finish on Q: the first asynchronous failure there, or 1 for no reply. */
static int
finish(struct conn *c)
{
	return (raw_finish(c, Q));
}

/* WriteImage of a region with bulk bytes, then Finish's status. */
static int
write_image(struct conn *c, uint64_t mem, const uint64_t *o, size_t norg,
    const uint64_t *reg, size_t nreg, const void *data, size_t len)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__WriteImage	m = VCL__WRITE_IMAGE__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;

	q.queue = Q;
	m.q = &q;
	m.mem = mem;
	m.origin = (uint64_t *)o;
	m.n_origin = norg;
	m.region = (uint64_t *)reg;
	m.n_region = nreg;
	r.call_case = VCL__REQUEST__CALL_WRITE_IMAGE;
	r.write_image = &m;
	if (send_req(c, &r, data, len) != 0)
		return (1);
	return (finish(c));
}

/* A session with a context, queue, buffer, 2D image (pixel i = i), program. */
static int
setup(struct conn *c, const struct srv *sv)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	b = VCL__BUILD_PROGRAM__INIT;
	struct reply		rp;
	uint32_t		px[W * H];
	int			i, st;

	for (i = 0; i < W * H; i++)
		px[i] = (uint32_t)i;
	if (conn_session(c, sv) != 0)
		return (-1);
	if (create_context(c, CTX) != 0 || create_queue(c, Q, CTX) != 0 ||
	    create_buffer(c, BUF, CTX, 4096, NULL, 0) != 0 ||
	    create_image(c, IMG2, CL_R, CL_UNSIGNED_INT32,
	    CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, px, sizeof px) != 0 ||
	    create_image(c, IMG3, CL_R, CL_UNSIGNED_INT32,
	    CL_MEM_OBJECT_IMAGE3D, 4, 4, 4, 0, NULL, 0) != 0 ||
	    create_program(c, PROG, CTX, image_src) != 0)
		return (-1);
	b.program = PROG;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &b;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	st = rp.r->status;
	reply_free(&rp);
	return (st == 0 ? 0 : -1);
}

/* The whole 2D image reads back as pixel i = i: the session still works. */
static int
image_intact(struct conn *c)
{
	static const uint64_t	o[3] = { 0, 0, 0 }, reg[3] = { W, H, 1 };
	uint32_t		px[W * H];
	int			i;

	if (read_image(c, IMG2, o, 3, reg, 3, px, sizeof px) != 0)
		return (0);
	for (i = 0; i < W * H; i++)
		if (px[i] != (uint32_t)i)
			return (0);
	return (1);
}

/* The server is up, and a new session can create and read an image. */
static void
still_serves(struct srv *sv, const char *name)
{
	struct conn	c;

	c.fd = -1;
	if (!check(name, srv_alive(sv), "server died (%s)", srv_how(sv)))
		return;
	check(name, setup(&c, sv) == 0 && image_intact(&c),
	    "a second session's image does not work");
	conn_close(&c);
}

/*
 * (1) Reads and writes whose origin and region lie past the image, wrap,
 * are empty or have the wrong count: CL_INVALID_VALUE, nothing read or
 * written, and the bytes of a write that do not match its region too.
 */
static void
test_regions(void)
{
	static const struct {
		const char	*what;
		uint64_t	 o[3], r[3];
		size_t		 norg, nreg;
	} bad[] = {
		{ "past_width", { 1, 0, 0 }, { W, 1, 1 }, 3, 3 },
		{ "past_height", { 0, H, 0 }, { 1, 1, 1 }, 3, 3 },
		{ "origin_wraps", { UINT64_MAX, 0, 0 }, { 2, 1, 1 }, 3, 3 },
		{ "region_huge", { 0, 0, 0 }, { 1ull << 62, 1ull << 62, 1 },
		    3, 3 },
		{ "region_zero", { 0, 0, 0 }, { 0, 1, 1 }, 3, 3 },
		{ "depth_of_2d", { 0, 0, 0 }, { 1, 1, 2 }, 3, 3 },
		{ "slice_of_2d", { 0, 0, 1 }, { 1, 1, 1 }, 3, 3 },
		{ "two_coords", { 0, 0, 0 }, { 1, 1, 1 }, 3, 2 },
		{ "no_origin", { 0, 0, 0 }, { 1, 1, 1 }, 0, 3 },
	};
	struct srv	 sv;
	struct conn	 c;
	uint32_t	 px[W * H];
	uint64_t	 o[3] = { 0, 0, 0 }, r[3] = { 2, 2, 1 };
	char		 name[64];
	size_t		 i;
	int		 st;

	c.fd = -1;
	memset(px, 0xab, sizeof px);
	if (!srv_start(&sv, "regions_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("regions_setup", setup(&c, &sv) == 0, "no session"))
		goto out;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(name, sizeof name, "read_%s", bad[i].what);
		st = read_image(&c, IMG2, bad[i].o, bad[i].norg, bad[i].r,
		    bad[i].nreg, NULL, 0);
		check(name, st == CL_INVALID_VALUE, "status %d", st);
		snprintf(name, sizeof name, "write_%s", bad[i].what);
		st = write_image(&c, IMG2, bad[i].o, bad[i].norg, bad[i].r,
		    bad[i].nreg, px, 16);
		check(name, st == CL_INVALID_VALUE, "status %d", st);
	}
	/* Bytes that are not the region's: too few, too many. */
	st = write_image(&c, IMG2, o, 3, r, 3, px, 15);
	check("write_short_bytes", st == CL_INVALID_VALUE, "status %d", st);
	st = write_image(&c, IMG2, o, 3, r, 3, px, 17);
	check("write_long_bytes", st == CL_INVALID_VALUE, "status %d", st);
	/* A buffer is no image; an unknown id is none either. */
	st = read_image(&c, BUF, o, 3, r, 3, NULL, 0);
	check("read_buffer_as_image", st == CL_INVALID_MEM_OBJECT,
	    "status %d", st);
	st = read_image(&c, BAD, o, 3, r, 3, NULL, 0);
	check("read_unknown_image", st == CL_INVALID_MEM_OBJECT,
	    "status %d", st);
	check("regions_image_intact", image_intact(&c),
	    "a refused write changed the image");
	/* A valid sub-region still reads right. */
	o[0] = 3; o[1] = 1;
	st = read_image(&c, IMG2, o, 3, r, 3, px, 16);
	check("read_subregion", st == 0 && px[0] == 11 && px[1] == 12 &&
	    px[2] == 19 && px[3] == 20, "status %d, %u %u %u %u", st, px[0],
	    px[1], px[2], px[3]);
	still_serves(&sv, "regions_server_survives");
out:
	conn_close(&c);
	srv_stop(&sv, "regions_server_exit");
}

/* Enqueue{Q} for a message. */
static Vcl__Enqueue	qe = VCL__ENQUEUE__INIT;

/*
 * (2) Copies and fills with hostile values: a region past either image,
 * a buffer offset that wraps, a color that is not 16 bytes, images of
 * different pixel sizes.
 */
static void
test_copies(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CopyImage		 ci = VCL__COPY_IMAGE__INIT;
	Vcl__FillImage		 fi = VCL__FILL_IMAGE__INIT;
	Vcl__CopyImageBuffer	 cb = VCL__COPY_IMAGE_BUFFER__INIT;
	uint64_t		 zero[3] = { 0, 0, 0 }, far[3] = { 6, 0, 0 };
	uint64_t		 reg[3] = { 4, 2, 1 }, all[3] = { W, H, 1 };
	uint8_t			 color[16] = { 1 };
	int			 st;

	c.fd = -1;
	qe.queue = Q;
	if (!srv_start(&sv, "copies_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("copies_setup", setup(&c, &sv) == 0, "no session"))
		goto out;
	ci.q = &qe;
	ci.src = IMG2;
	ci.dst = IMG2;
	ci.src_origin = zero;
	ci.n_src_origin = 3;
	ci.dst_origin = far;		/* 6 + 4 > W */
	ci.n_dst_origin = 3;
	ci.region = reg;
	ci.n_region = 3;
	r.call_case = VCL__REQUEST__CALL_COPY_IMAGE;
	r.copy_image = &ci;
	st = send_req(&c, &r, NULL, 0) == 0 ? finish(&c) : 1;
	check("copy_past_dst", st == CL_INVALID_VALUE, "status %d", st);
	ci.dst = IMG3;
	ci.dst_origin = zero;
	ci.region = all;		/* H fits, W = 8 > 4 */
	st = send_req(&c, &r, NULL, 0) == 0 ? finish(&c) : 1;
	check("copy_past_3d", st == CL_INVALID_VALUE, "status %d", st);

	fi.q = &qe;
	fi.mem = IMG2;
	fi.color.data = color;
	fi.color.len = 3;
	fi.origin = zero;
	fi.n_origin = 3;
	fi.region = reg;
	fi.n_region = 3;
	r.call_case = VCL__REQUEST__CALL_FILL_IMAGE;
	r.fill_image = &fi;
	st = send_req(&c, &r, NULL, 0) == 0 ? finish(&c) : 1;
	check("fill_short_color", st == CL_INVALID_VALUE, "status %d", st);
	fi.color.len = 16;
	fi.origin = far;
	st = send_req(&c, &r, NULL, 0) == 0 ? finish(&c) : 1;
	check("fill_past_image", st == CL_INVALID_VALUE, "status %d", st);

	cb.q = &qe;
	cb.image = IMG2;
	cb.buffer = BUF;
	cb.origin = zero;
	cb.n_origin = 3;
	cb.region = reg;
	cb.n_region = 3;
	cb.offset = UINT64_MAX - 3;	/* offset + 32 bytes wraps */
	cb.to_buffer = 1;
	r.call_case = VCL__REQUEST__CALL_COPY_IMAGE_BUFFER;
	r.copy_image_buffer = &cb;
	st = send_req(&c, &r, NULL, 0) == 0 ? finish(&c) : 1;
	check("to_buffer_offset_wraps", st == CL_INVALID_VALUE, "status %d",
	    st);
	cb.offset = 4096 - 16;		/* 32 bytes do not fit */
	cb.to_buffer = 0;
	st = send_req(&c, &r, NULL, 0) == 0 ? finish(&c) : 1;
	check("from_buffer_past_end", st == CL_INVALID_VALUE, "status %d", st);
	cb.offset = 0;
	cb.buffer = IMG3;		/* an image is no buffer */
	st = send_req(&c, &r, NULL, 0) == 0 ? finish(&c) : 1;
	check("image_as_buffer", st == CL_INVALID_MEM_OBJECT, "status %d", st);
	check("copies_image_intact", image_intact(&c),
	    "a refused command changed the image");
	still_serves(&sv, "copies_server_survives");
out:
	conn_close(&c);
	srv_stop(&sv, "copies_server_exit");
}

/*
 * (3) Creations with junk: sizes whose product wraps, an unknown type or
 * format, a 1D buffer image over no buffer, initial bytes of the wrong
 * length. Each later use reports the creation's error; nothing stays
 * charged once released.
 */
static void
test_create(void)
{
	static const struct {
		const char	*what;
		uint32_t	 order, dtype, type;
		uint64_t	 w, h, d;
		int		 want;
	} bad[] = {
		{ "size_wraps", CL_RGBA, CL_FLOAT, CL_MEM_OBJECT_IMAGE3D,
		    1ull << 40, 1ull << 40, 1ull << 40, CL_INVALID_IMAGE_SIZE },
		{ "too_big", CL_RGBA, CL_FLOAT, CL_MEM_OBJECT_IMAGE2D,
		    1ull << 20, 1ull << 20, 0, CL_INVALID_IMAGE_SIZE },
		{ "zero_height", CL_R, CL_FLOAT, CL_MEM_OBJECT_IMAGE2D,
		    4, 0, 0, CL_INVALID_IMAGE_SIZE },
		{ "junk_type", CL_R, CL_FLOAT, 0x7777, 4, 4, 0,
		    CL_INVALID_IMAGE_DESCRIPTOR },
		{ "buffer_type", CL_R, CL_FLOAT, CL_MEM_OBJECT_BUFFER, 4, 4, 0,
		    CL_INVALID_IMAGE_DESCRIPTOR },
		{ "junk_order", 0x7777, CL_FLOAT, CL_MEM_OBJECT_IMAGE2D, 4, 4,
		    0, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR },
		{ "rgb_float", CL_RGB, CL_FLOAT, CL_MEM_OBJECT_IMAGE2D, 4, 4,
		    0, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR },
		{ "1d_buffer_none", CL_R, CL_FLOAT,
		    CL_MEM_OBJECT_IMAGE1D_BUFFER, 4, 0, 0,
		    CL_INVALID_IMAGE_DESCRIPTOR },
	};
	struct srv		 sv;
	struct conn		 c;
	Vcl__StatsResult	 st0, st1;
	uint64_t		 o[3] = { 0, 0, 0 }, r[3] = { 1, 1, 1 };
	uint8_t			 data[4 * 4 * 4];
	char			 name[64];
	size_t			 i;
	int			 st;

	c.fd = -1;
	if (!srv_start(&sv, "create_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("create_setup", setup(&c, &sv) == 0, "no session") ||
	    !check("create_stats", stats(&c, &st0) == 0, "no stats"))
		goto out;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(name, sizeof name, "create_%s", bad[i].what);
		if (!check(name, create_image(&c, BAD + i, bad[i].order,
		    bad[i].dtype, bad[i].type, bad[i].w, bad[i].h, bad[i].d, 0,
		    NULL, 0) == 0, "send failed"))
			goto out;
		st = read_image(&c, BAD + i, o, 3, r, 3, NULL, 0);
		check(name, st == bad[i].want, "status %d, want %d", st,
		    bad[i].want);
	}
	/* Initial bytes of another length than the image's. */
	create_image(&c, BAD + 20, CL_R, CL_FLOAT, CL_MEM_OBJECT_IMAGE2D, 4, 4,
	    0, 0, data, 60);
	st = read_image(&c, BAD + 20, o, 3, r, 3, NULL, 0);
	check("create_short_bytes", st == CL_INVALID_VALUE, "status %d", st);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		release(&c, VCL__KIND__KIND_MEM, BAD + i);
	release(&c, VCL__KIND__KIND_MEM, BAD + 20);
	check("create_nothing_charged", stats(&c, &st1) == 0 &&
	    st1.session_bytes == st0.session_bytes, "%llu bytes charged, "
	    "was %llu", (unsigned long long)st1.session_bytes,
	    (unsigned long long)st0.session_bytes);
	still_serves(&sv, "create_server_survives");
out:
	conn_close(&c);
	srv_stop(&sv, "create_server_exit");
}

/* CreateSampler{id, CTX} with these properties (asynchronous). */
static int
create_sampler(struct conn *c, uint64_t id, uint64_t *props, size_t n)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateSampler	m = VCL__CREATE_SAMPLER__INIT;

	m.id = id;
	m.context = CTX;
	m.properties = props;
	m.n_properties = n;
	r.call_case = VCL__REQUEST__CALL_CREATE_SAMPLER;
	r.create_sampler = &m;
	return (send_req(c, &r, NULL, 0));
}

/* CreateKernel{id, PROG, name}: the reply's status, or 1 for no reply. */
static int
create_kernel(struct conn *c, uint64_t id, const char *name)
{
	return (raw_kernel(c, id, PROG, name));
}

/* One argument of a type naming an id. */
static void
arg_id(Vcl__KernelArg *a, uint32_t i, Vcl__KernelArg__Type t, uint64_t id)
{
	vcl__kernel_arg__init(a);
	a->index = i;
	a->type = t;
	a->has_mem = 1;
	a->mem = id;
}

/* NDRange of one work item with these arguments, then Finish's status. */
static int
launch(struct conn *c, uint64_t k, Vcl__KernelArg *args, size_t n)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__NDRange	 m = VCL__NDRANGE__INIT;
	Vcl__KernelArg	*ap[4];
	uint64_t	 g = 1;
	size_t		 i;

	for (i = 0; i < n && i < 4; i++)
		ap[i] = &args[i];
	qe.queue = Q;
	m.q = &qe;
	m.kernel = k;
	m.work_dim = 1;
	m.n_global = 1;
	m.global = &g;
	m.n_args = n;
	m.args = ap;
	r.call_case = VCL__REQUEST__CALL_NDRANGE;
	r.ndrange = &m;
	if (send_req(c, &r, NULL, 0) != 0)
		return (1);
	return (finish(c));
}

/*
 * (4) Image and sampler arguments are handles checked by type: an image
 * of another type, a buffer, a sampler or an unknown id for an image; an
 * image or a buffer for a sampler; an image for a buffer. A sampler the
 * client released while set stays alive for the launch.
 */
static void
test_args(void)
{
	uint64_t	 props[6] = { CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE,
	    CL_SAMPLER_ADDRESSING_MODE, CL_ADDRESS_CLAMP_TO_EDGE,
	    CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST };
	uint64_t	 junk[2] = { 0x7777, 1 };
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	Vcl__KernelArg	 a[3];
	int		 st, out[2] = { 0, 0 };

	c.fd = -1;
	if (!srv_start(&sv, "args_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("args_setup", setup(&c, &sv) == 0, "no session") ||
	    !check("args_kernel", create_kernel(&c, K_IMG, "kimg") == 0 &&
	    create_kernel(&c, K_BUF, "kbuf") == 0, "no kernels") ||
	    !check("args_sampler", create_sampler(&c, SMP, props, 6) == 0 &&
	    create_sampler(&c, BAD, junk, 2) == 0, "send failed"))
		goto out;
	arg_id(&a[1], 1, VCL__KERNEL_ARG__TYPE__SAMPLER, SMP);
	arg_id(&a[2], 2, VCL__KERNEL_ARG__TYPE__MEM, BUF);
	arg_id(&a[0], 0, VCL__KERNEL_ARG__TYPE__IMAGE, IMG3);
	st = launch(&c, K_IMG, a, 3);
	check("image_3d_for_2d", st == CL_INVALID_MEM_OBJECT, "status %d", st);
	arg_id(&a[0], 0, VCL__KERNEL_ARG__TYPE__IMAGE, BUF);
	st = launch(&c, K_IMG, a, 3);
	check("image_buffer", st == CL_INVALID_MEM_OBJECT, "status %d", st);
	arg_id(&a[0], 0, VCL__KERNEL_ARG__TYPE__IMAGE, SMP);
	st = launch(&c, K_IMG, a, 3);
	check("image_sampler", st == CL_INVALID_MEM_OBJECT, "status %d", st);
	arg_id(&a[0], 0, VCL__KERNEL_ARG__TYPE__MEM, IMG2);
	st = launch(&c, K_IMG, a, 3);
	check("image_as_mem_type", st == CL_INVALID_MEM_OBJECT, "status %d",
	    st);
	arg_id(&a[0], 0, VCL__KERNEL_ARG__TYPE__IMAGE, IMG2);
	arg_id(&a[1], 1, VCL__KERNEL_ARG__TYPE__SAMPLER, IMG2);
	st = launch(&c, K_IMG, a, 3);
	check("sampler_image", st == CL_INVALID_SAMPLER, "status %d", st);
	arg_id(&a[1], 1, VCL__KERNEL_ARG__TYPE__MEM, BUF);
	st = launch(&c, K_IMG, a, 3);
	check("sampler_buffer", st == CL_INVALID_SAMPLER, "status %d", st);
	arg_id(&a[1], 1, VCL__KERNEL_ARG__TYPE__SAMPLER, BAD);
	st = launch(&c, K_IMG, a, 3);
	check("sampler_junk_props", st == CL_INVALID_VALUE, "status %d", st);
	arg_id(&a[0], 0, VCL__KERNEL_ARG__TYPE__MEM, IMG2);
	st = launch(&c, K_BUF, a, 1);
	check("buffer_image", st == CL_INVALID_MEM_OBJECT, "status %d", st);
	/* Right kinds run; a released sampler lives while it is set. */
	arg_id(&a[0], 0, VCL__KERNEL_ARG__TYPE__IMAGE, IMG2);
	arg_id(&a[1], 1, VCL__KERNEL_ARG__TYPE__SAMPLER, SMP);
	st = launch(&c, K_IMG, a, 3);
	check("image_sampler_run", st == 0, "status %d", st);
	release(&c, VCL__KIND__KIND_SAMPLER, SMP);
	st = launch(&c, K_IMG, a, 2) == 0 ? 0 : -1;
	check("released_sampler_gone", st != 0,
	    "a released sampler id was still taken");
	st = launch(&c, K_IMG, &a[2], 1);
	check("set_sampler_kept", st == 0, "status %d", st);
	if (read_buffer(&c, Q, BUF, sizeof out, &rp) == 0) {
		check("image_kernel_result", rp.r->status == 0 &&
		    rp.bulk_len == sizeof out && (memcpy(out, rp.bulk,
		    sizeof out), out[0] == W && out[1] == 1),
		    "got %d %d", out[0], out[1]);
		reply_free(&rp);
	}
	still_serves(&sv, "args_server_survives");
out:
	conn_close(&c);
	srv_stop(&sv, "args_server_exit");
}

/*
 * (5) Image commands keep their queue's order behind a held command: a
 * buffer write waits on a user event, then (no wait list) the buffer is
 * copied into the image; the copy must run after the write.
 */
static void
test_hold(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	 ue = VCL__CREATE_USER_EVENT__INIT;
	Vcl__SetUserEventStatus	 us = VCL__SET_USER_EVENT_STATUS__INIT;
	Vcl__WriteBuffer	 wb = VCL__WRITE_BUFFER__INIT;
	Vcl__Enqueue		 wq = VCL__ENQUEUE__INIT;
	Vcl__CopyImageBuffer	 cb = VCL__COPY_IMAGE_BUFFER__INIT;
	uint64_t		 zero[3] = { 0, 0, 0 }, all[3] = { W, H, 1 };
	uint64_t		 uid = UEV;
	uint32_t		 px[W * H], got[W * H];
	int			 i, st;

	c.fd = -1;
	for (i = 0; i < W * H; i++)
		px[i] = 1000u + (uint32_t)i;
	if (!srv_start(&sv, "hold_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("hold_setup", setup(&c, &sv) == 0, "no session"))
		goto out;
	ue.id = UEV;
	ue.context = CTX;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	send_req(&c, &r, NULL, 0);
	wq.queue = Q;
	wq.wait = &uid;
	wq.n_wait = 1;
	wb.q = &wq;
	wb.mem = BUF;
	wb.offset = 0;
	wb.size = sizeof px;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &wb;
	send_req(&c, &r, px, sizeof px);
	qe.queue = Q;
	cb.q = &qe;
	cb.image = IMG2;
	cb.buffer = BUF;
	cb.origin = zero;
	cb.n_origin = 3;
	cb.region = all;
	cb.n_region = 3;
	cb.offset = 0;
	cb.to_buffer = 0;
	r.call_case = VCL__REQUEST__CALL_COPY_IMAGE_BUFFER;
	r.copy_image_buffer = &cb;
	send_req(&c, &r, NULL, 0);
	us.event = UEV;
	us.status = CL_COMPLETE;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &us;
	send_req(&c, &r, NULL, 0);
	st = finish(&c);
	check("hold_finish", st == 0, "status %d", st);
	memset(got, 0, sizeof got);
	st = read_image(&c, IMG2, zero, 3, all, 3, got, sizeof got);
	check("hold_copy_after_write", st == 0 && memcmp(got, px,
	    sizeof px) == 0, "status %d, pixel 0 is %u (want 1000)", st,
	    got[0]);
	still_serves(&sv, "hold_server_survives");
out:
	conn_close(&c);
	srv_stop(&sv, "hold_server_exit");
}

static const struct test tests[] = {
	{ "regions",	test_regions,	120 },
	{ "copies",	test_copies,	120 },
	{ "create",	test_create,	120 },
	{ "args",	test_args,	120 },
	{ "hold",	test_hold,	120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
