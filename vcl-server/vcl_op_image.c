/* vcl_op_image.c - images and samplers: creation, formats, image commands. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_enqueue.h"
#include "vcl_log.h"
#include "vcl_op_image.h"
#include "vcl_op_mem.h"
#include "vcl_server.h"
#include "vcl_session.h"

/* Flags a client may send; host-pointer flags stay on the client. */
#define VCL_IMAGE_FLAGS	(CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY |	\
	CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR | CL_MEM_HOST_WRITE_ONLY | \
	CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS | CL_MEM_KERNEL_READ_AND_WRITE)

#define VCL_IMAGE_FORMATS_MAX	4096	/* formats one reply carries */

/*
 * What the checks of an image command need: its type, bytes per pixel and
 * the extent of each of the three origin/region coordinates (a 1D array's
 * second one is its array size, a 2D array's third one too).
 */
struct vcl_img {
	cl_mem_object_type	 type;
	size_t			 elem;
	uint64_t		 dim[3];
};

/* True for the CL_MEM_OBJECT_IMAGE* types. */
int
vcl_image_type_ok(uint32_t t)
{
	switch (t) {
	case CL_MEM_OBJECT_IMAGE1D:
	case CL_MEM_OBJECT_IMAGE1D_BUFFER:
	case CL_MEM_OBJECT_IMAGE1D_ARRAY:
	case CL_MEM_OBJECT_IMAGE2D:
	case CL_MEM_OBJECT_IMAGE2D_ARRAY:
	case CL_MEM_OBJECT_IMAGE3D:
		return (1);
	default:
		return (0);
	}
}

/*
 * The image of a memory object's runtime handle: 0 and *img filled, or -1
 * when it is no image (a buffer) or the runtime does not say.
 */
static int
vcl_image_of(cl_mem m, struct vcl_img *img)
{
	size_t	w = 0, h = 0, d = 0, a = 0;

	memset(img, 0, sizeof *img);
	if (m == NULL || clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof img->type,
	    &img->type, NULL) != CL_SUCCESS || !vcl_image_type_ok(img->type))
		return (-1);
	if (clGetImageInfo(m, CL_IMAGE_ELEMENT_SIZE, sizeof img->elem,
	    &img->elem, NULL) != CL_SUCCESS || img->elem == 0 ||
	    clGetImageInfo(m, CL_IMAGE_WIDTH, sizeof w, &w, NULL) !=
	    CL_SUCCESS || clGetImageInfo(m, CL_IMAGE_HEIGHT, sizeof h, &h,
	    NULL) != CL_SUCCESS || clGetImageInfo(m, CL_IMAGE_DEPTH, sizeof d,
	    &d, NULL) != CL_SUCCESS || clGetImageInfo(m, CL_IMAGE_ARRAY_SIZE,
	    sizeof a, &a, NULL) != CL_SUCCESS)
		return (-1);
	img->dim[0] = w;
	img->dim[1] = img->dim[2] = 1;
	switch (img->type) {
	case CL_MEM_OBJECT_IMAGE1D_ARRAY:
		img->dim[1] = a;
		break;
	case CL_MEM_OBJECT_IMAGE2D:
		img->dim[1] = h;
		break;
	case CL_MEM_OBJECT_IMAGE2D_ARRAY:
		img->dim[1] = h;
		img->dim[2] = a;
		break;
	case CL_MEM_OBJECT_IMAGE3D:
		img->dim[1] = h;
		img->dim[2] = d;
		break;
	default:
		break;
	}
	return (0);
}

/* The image of an id, or NULL with *err (a buffer is no image). */
static struct vcl_hobj *
vcl_image_get(struct vcl_session *s, uint64_t id, struct vcl_img *img,
    cl_int *err)
{
	struct vcl_hobj	*o;

	if ((o = vcl_handle_get(&s->handles, id, VCL_KIND_MEM)) == NULL) {
		*err = CL_INVALID_MEM_OBJECT;
		return (NULL);
	}
	if (o->error != CL_SUCCESS) {
		*err = o->error;
		return (NULL);
	}
	if (vcl_image_of(o->u.mem, img) != 0) {
		*err = CL_INVALID_MEM_OBJECT;
		return (NULL);
	}
	return (o);
}

/*
 * Check an origin and region from the wire against an image: three of
 * each, no zero extent, nothing past the image, no wrap.
 * Fills the runtime's arrays and *bytes, the region's packed size.
 */
static cl_int
vcl_image_region(const struct vcl_img *img, const uint64_t *org, size_t norg,
    const uint64_t *reg, size_t nreg, size_t *o, size_t *r, uint64_t *bytes)
{
	uint64_t	n = img->elem;
	int		i;

	if (org == NULL || reg == NULL || norg != 3 || nreg != 3)
		return (CL_INVALID_VALUE);
	for (i = 0; i < 3; i++) {
		o[i] = org[i];
		r[i] = reg[i];
		if (reg[i] == 0 || org[i] > img->dim[i] ||
		    reg[i] > img->dim[i] - org[i])
			return (CL_INVALID_VALUE);
		if (reg[i] > UINT64_MAX / n)
			return (CL_INVALID_VALUE);
		n *= reg[i];
	}
	*bytes = n;
	return (CL_SUCCESS);
}

/*
 * The host pitches of a packed region r of img for the runtime's image
 * reads and writes: rows of r[0] pixels; a slice pitch only where the
 * image has slices, for a 1D array the size of one of its images (its
 * row). A runtime that follows the spec (NVIDIA's) refuses a slice pitch
 * for a 1D or 2D image (CL_INVALID_VALUE), and steps a 1D array's images
 * by it: the row pitch times the array size read or wrote that many
 * times the staging's size. PoCL 3.1 steps by the row pitch whatever
 * it is given.
 */
static void
vcl_image_pitches(const struct vcl_img *img, const size_t *r, size_t *row,
    size_t *slice)
{
	*row = r[0] * img->elem;
	switch (img->type) {
	case CL_MEM_OBJECT_IMAGE1D_ARRAY:
		*slice = *row;
		break;
	case CL_MEM_OBJECT_IMAGE2D_ARRAY:
	case CL_MEM_OBJECT_IMAGE3D:
		*slice = *row * r[1];
		break;
	default:
		*slice = 0;
		break;
	}
}

/* Bytes per pixel of a format, 0 for one the spec does not name. */
static size_t
vcl_image_elem(uint32_t order, uint32_t type)
{
	size_t	ch, sz;

	switch (order) {
	case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE:
	case CL_DEPTH: case CL_Rx:
		ch = 1;
		break;
	case CL_RG: case CL_RA: case CL_RGx:
		ch = 2;
		break;
	case CL_RGB: case CL_RGBx:
		ch = 3;
		break;
	case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_ABGR: case CL_sRGBA:
	case CL_sBGRA:
		ch = 4;
		break;
	default:
		return (0);
	}
	switch (type) {
	case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8:
	case CL_UNSIGNED_INT8:
		sz = 1;
		break;
	case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16:
	case CL_UNSIGNED_INT16: case CL_HALF_FLOAT:
		sz = 2;
		break;
	case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT:
		sz = 4;
		break;
	case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555:
		return (order == CL_RGB || order == CL_RGBx ? 2 : 0);
	case CL_UNORM_INT_101010:
		return (order == CL_RGB || order == CL_RGBx ? 4 : 0);
	default:
		return (0);
	}
	/* Packed types aside, 3 channels exist only packed. */
	if (ch == 3)
		return (0);
	return (ch * sz);
}

/*
 * CreateSampler: properties checked by name here (the runtime checks the
 * values), then clCreateSamplerWithProperties.
 */
void
vcl_op_create_sampler(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateSampler	*m = req->create_sampler;
	cl_sampler_properties		 props[7];
	struct vcl_hobj			*o, *ctx;
	cl_int				 err = CL_SUCCESS;
	size_t				 i;

	if ((o = vcl_session_add(s, m->id, VCL_KIND_SAMPLER)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;		/* over the object limit */
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else if (ctx->error != CL_SUCCESS)
		err = ctx->error;
	else if (m->n_properties > 6 || m->n_properties % 2 != 0)
		err = CL_INVALID_VALUE;
	for (i = 0; i < m->n_properties && err == CL_SUCCESS; i += 2) {
		if (m->properties[i] != CL_SAMPLER_NORMALIZED_COORDS &&
		    m->properties[i] != CL_SAMPLER_ADDRESSING_MODE &&
		    m->properties[i] != CL_SAMPLER_FILTER_MODE)
			err = CL_INVALID_VALUE;
		props[i] = (cl_sampler_properties)m->properties[i];
		props[i + 1] = (cl_sampler_properties)m->properties[i + 1];
	}
	props[m->n_properties <= 6 ? m->n_properties : 0] = 0;
	if (err == CL_SUCCESS)
		o->u.sampler = clCreateSamplerWithProperties(ctx->u.ctx, props,
		    &err);
	o->error = err;
	if (err != CL_SUCCESS)
		vcl_log_info("session %llu: sampler %llu failed: %d",
		    (unsigned long long)s->id, (unsigned long long)m->id, err);
}

/*
 * CreateImage: the format and dimensions give the packed size, charged to
 * the session before the runtime sees them; the image starts with the
 * packed initial bytes (bulk) or zeros, never another session's memory.
 * A 1D buffer image is made over the session's buffer of that id, of the
 * image's own context.
 */
void
vcl_op_create_image(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateImage	*m = req->create_image;
	struct vcl_hobj		*o, *ctx, *buf = NULL;
	cl_image_format		 fmt;
	cl_image_desc		 desc;
	uint64_t		 dims[4], bytes;
	size_t			 elem, i;
	const void		*init = NULL;
	cl_mem_flags		 flags = m->flags;
	cl_int			 err = CL_SUCCESS;

	if ((o = vcl_session_add(s, m->id, VCL_KIND_MEM)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;		/* over the object limit */
	memset(&desc, 0, sizeof desc);
	fmt.image_channel_order = m->order;
	fmt.image_channel_data_type = m->data_type;
	desc.image_type = m->type;
	dims[0] = m->width;
	dims[1] = dims[2] = dims[3] = 1;
	if (m->type == CL_MEM_OBJECT_IMAGE2D ||
	    m->type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
	    m->type == CL_MEM_OBJECT_IMAGE3D)
		dims[1] = m->has_height ? m->height : 0;
	if (m->type == CL_MEM_OBJECT_IMAGE3D)
		dims[2] = m->has_depth ? m->depth : 0;
	if (m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
	    m->type == CL_MEM_OBJECT_IMAGE2D_ARRAY)
		dims[3] = m->has_array_size ? m->array_size : 0;
	elem = vcl_image_elem(m->order, m->data_type);
	bytes = elem;
	for (i = 0; i < 4; i++) {
		if (dims[i] == 0 || dims[i] > SIZE_MAX ||
		    (bytes != 0 && dims[i] > UINT64_MAX / bytes))
			bytes = 0;
		else
			bytes *= dims[i];
	}
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if ((m->has_has_data && m->has_data) != (bulk->len > 0)) {
		vcl_session_close(s, "image initial data flag does not match");
		return;
	}
	if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else if (ctx->error != CL_SUCCESS)
		err = ctx->error;
	else if (flags & ~(cl_mem_flags)VCL_IMAGE_FLAGS)
		err = CL_INVALID_VALUE;
	else if (!vcl_image_type_ok(m->type))
		err = CL_INVALID_IMAGE_DESCRIPTOR;
	else if (elem == 0)
		err = CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
	else if (bytes == 0)
		err = CL_INVALID_IMAGE_SIZE;
	else if (bulk->len > 0 && bulk->len != bytes)
		err = CL_INVALID_VALUE;
	else if (bulk->err != CL_SUCCESS)
		err = bulk->err;
	else if (m->type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
		if (!m->has_buffer || (buf = vcl_handle_get(&s->handles,
		    m->buffer, VCL_KIND_MEM)) == NULL || buf->error !=
		    CL_SUCCESS || buf->u.mem == NULL || buf->image ||
		    !vcl_mem_ctx_is(buf->u.mem, ctx->u.ctx))
			err = CL_INVALID_IMAGE_DESCRIPTOR;
		else if (bulk->len > 0)
			err = CL_INVALID_VALUE;
	} else if (bulk->data == NULL && bytes > s->srv->zeros_len)
		err = CL_INVALID_IMAGE_SIZE;
	if (err == CL_SUCCESS && vcl_session_charge(s, bytes) != 0)
		err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
	else if (err == CL_SUCCESS) {
		o->bytes = bytes;
		desc.image_width = dims[0];
		desc.image_height = dims[1];
		desc.image_depth = dims[2];
		desc.image_array_size = dims[3];
		if (buf != NULL)
			desc.buffer = buf->u.mem;
		else {
			flags |= CL_MEM_COPY_HOST_PTR;
			init = bulk->data != NULL ? bulk->data : s->srv->zeros;
		}
		o->u.mem = clCreateImage(ctx->u.ctx, flags, &fmt, &desc,
		    (void *)init, &err);
		o->image = 1;
		/* Its buffer's memory, and charge, stay while it lives. */
		if (err == CL_SUCCESS && buf != NULL) {
			o->parent = buf->id;
			buf->mem_refs++;
		}
	}
	if (err != CL_SUCCESS) {
		vcl_session_uncharge(s, o->bytes);
		o->bytes = 0;
		o->u.mem = NULL;
		vcl_log_info("session %llu: image %llu failed: %d",
		    (unsigned long long)s->id, (unsigned long long)m->id, err);
	}
	o->error = err;
}

/* ImageFormats: the formats the node's part of a context supports. */
void
vcl_op_image_formats(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__ImageFormats	*m = req->image_formats;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	Vcl__InfoResult		 ir = VCL__INFO_RESULT__INIT;
	struct vcl_hobj		*ctx;
	cl_image_format		*f = NULL;
	cl_uint			 n = 0;
	cl_int			 err;

	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else if ((err = ctx->error) != CL_SUCCESS)
		;
	else if (m->flags & ~(cl_mem_flags)(VCL_IMAGE_FLAGS |
	    CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR))
		err = CL_INVALID_VALUE;
	else if (!vcl_image_type_ok(m->type))
		err = CL_INVALID_VALUE;
	else if ((err = clGetSupportedImageFormats(ctx->u.ctx, m->flags,
	    m->type, 0, NULL, &n)) == CL_SUCCESS && n > 0) {
		if (n > VCL_IMAGE_FORMATS_MAX)
			n = VCL_IMAGE_FORMATS_MAX;
		if ((f = calloc(n, sizeof *f)) == NULL)
			err = CL_OUT_OF_HOST_MEMORY;
		else
			err = clGetSupportedImageFormats(ctx->u.ctx, m->flags,
			    m->type, n, f, NULL);
	}
	r.seq = req->seq;
	r.status = err;
	if (err == CL_SUCCESS) {
		ir.value.data = (uint8_t *)f;
		ir.value.len = f != NULL ? n * sizeof *f : 0;
		r.result_case = VCL__REPLY__RESULT_INFO;
		r.info = &ir;
	}
	vcl_session_reply_msg(s, &r);
	free(f);
}

/* ReadImage: the runtime packs the region into staging; the reply sends it. */
void
vcl_op_read_image(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__ReadImage	*m = req->read_image;
	struct vcl_hobj		*mem;
	struct vcl_img		 img;
	struct vcl_enq		 enq;
	struct vcl_cmd		*c;
	size_t			 o[3], r[3], row, slice;
	uint64_t		 n = 0;
	cl_int			 err;

	if ((c = vcl_cmd_new(VCL_CMD_READ, req->seq)) == NULL) {
		vcl_session_close(s, "out of memory");
		return;
	}
	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (mem = vcl_image_get(s, m->mem, &img, &err)) != NULL &&
	    (err = vcl_image_region(&img, m->origin, m->n_origin, m->region,
	    m->n_region, o, r, &n)) == CL_SUCCESS &&
	    (c->stage = vcl_stage_get(s, vcl_queue_context(s, enq.q), n,
	    CL_OUT_OF_RESOURCES, &err)) != NULL) {
		vcl_image_pitches(&img, r, &row, &slice);
		err = clEnqueueReadImage(enq.q->u.queue, mem->u.mem, CL_FALSE,
		    o, r, row, slice, c->stage->data, enq.nwait, enq.wait,
		    &enq.ev);
	}
	vcl_enq_end(s, &enq, err, c);
}

/* WriteImage: packed bytes arrived in staging; the runtime copies them in. */
void
vcl_op_write_image(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__WriteImage	*m = req->write_image;
	struct vcl_hobj		*mem;
	struct vcl_img		 img;
	struct vcl_enq		 enq;
	struct vcl_cmd		*c;
	size_t			 o[3], r[3], row, slice;
	uint64_t		 n = 0;
	cl_int			 err;

	if ((c = vcl_cmd_new(VCL_CMD_WRITE, req->seq)) == NULL ||
	    (bulk->data != NULL &&
	    (c->stage = vcl_stage_new(s, bulk->data, bulk->len)) == NULL)) {
		free(c);
		vcl_session_close(s, "out of memory");
		return;
	}
	bulk->data = NULL;	/* the stage owns it now */
	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (mem = vcl_image_get(s, m->mem, &img, &err)) != NULL &&
	    (err = vcl_image_region(&img, m->origin, m->n_origin, m->region,
	    m->n_region, o, r, &n)) == CL_SUCCESS &&
	    (err = bulk->err) == CL_SUCCESS) {
		/* The bytes must be exactly the packed region's. */
		if (c->stage == NULL || bulk->len != n)
			err = CL_INVALID_VALUE;
		else {
			vcl_image_pitches(&img, r, &row, &slice);
			err = clEnqueueWriteImage(enq.q->u.queue, mem->u.mem,
			    CL_FALSE, o, r, row, slice, c->stage->data,
			    enq.nwait, enq.wait, &enq.ev);
		}
	}
	vcl_enq_end(s, &enq, err, c);
}

/* CopyImage: image to image inside the node; the region fits both. */
void
vcl_op_copy_image(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CopyImage	*m = req->copy_image;
	struct vcl_hobj		*src, *dst;
	struct vcl_img		 si, di;
	struct vcl_enq		 enq;
	size_t			 so[3], doff[3], r[3];
	uint64_t		 n;
	cl_int			 err;

	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (src = vcl_image_get(s, m->src, &si, &err)) != NULL &&
	    (dst = vcl_image_get(s, m->dst, &di, &err)) != NULL &&
	    (err = vcl_image_region(&si, m->src_origin, m->n_src_origin,
	    m->region, m->n_region, so, r, &n)) == CL_SUCCESS &&
	    (err = vcl_image_region(&di, m->dst_origin, m->n_dst_origin,
	    m->region, m->n_region, doff, r, &n)) == CL_SUCCESS) {
		if (si.elem != di.elem)
			err = CL_IMAGE_FORMAT_MISMATCH;
		else
			err = clEnqueueCopyImage(enq.q->u.queue, src->u.mem,
			    dst->u.mem, so, doff, r, enq.nwait, enq.wait,
			    enq.event_id ? &enq.ev : NULL);
	}
	vcl_enq_end(s, &enq, err, NULL);
}

/*
 * FillImage: a color (16 bytes, as the runtime reads them) over a region.
 * PoCL 3.1 dereferences a bad pointer filling a 1D buffer image (natively
 * the program crashes; here it would be the server and every session on
 * it): refused there.
 */
void
vcl_op_fill_image(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__FillImage	*m = req->fill_image;
	struct vcl_hobj		*mem;
	struct vcl_img		 img;
	struct vcl_enq		 enq;
	size_t			 o[3], r[3];
	uint64_t		 n;
	cl_int			 err;

	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (mem = vcl_image_get(s, m->mem, &img, &err)) != NULL &&
	    (err = vcl_image_region(&img, m->origin, m->n_origin, m->region,
	    m->n_region, o, r, &n)) == CL_SUCCESS) {
		if (m->color.len != 16)
			err = CL_INVALID_VALUE;
		else if (img.type == CL_MEM_OBJECT_IMAGE1D_BUFFER &&
		    s->srv->be.is_pocl) {
			vcl_session_warn(s, "image %llu: a fill of a 1D buffer "
			    "image (PoCL crashes on it) refused",
			    (unsigned long long)m->mem);
			err = CL_INVALID_OPERATION;
		} else
			err = clEnqueueFillImage(enq.q->u.queue, mem->u.mem,
			    m->color.data, o, r, enq.nwait, enq.wait,
			    enq.event_id ? &enq.ev : NULL);
	}
	vcl_enq_end(s, &enq, err, NULL);
}

/*
 * CopyImageBuffer: an image region to a buffer range or back; the range
 * (offset + the region's packed size) must lie inside the buffer. A 1D
 * buffer image is copied from by its buffer's range (the same bytes):
 * PoCL 3.1 dereferences a bad pointer copying one to a buffer.
 */
void
vcl_op_copy_image_buffer(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CopyImageBuffer	*m = req->copy_image_buffer;
	struct vcl_hobj			*im, *buf, *ib;
	struct vcl_img			 img;
	struct vcl_enq			 enq;
	size_t				 o[3], r[3];
	uint64_t			 n;
	cl_int				 err;

	if ((err = vcl_enq_begin(s, m->q, &enq)) != CL_SUCCESS ||
	    (im = vcl_image_get(s, m->image, &img, &err)) == NULL ||
	    (err = vcl_image_region(&img, m->origin, m->n_origin, m->region,
	    m->n_region, o, r, &n)) != CL_SUCCESS ||
	    (buf = vcl_mem_range_get(s, m->buffer, m->offset, n, &err)) ==
	    NULL)
		goto out;
	if (buf->image)
		err = CL_INVALID_MEM_OBJECT;	/* an image is no buffer */
	else if (m->to_buffer && img.type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
		/* Its pixels are its buffer's bytes, packed: copied as such. */
		if ((ib = vcl_handle_held(&s->handles, im->parent,
		    VCL_KIND_MEM)) == NULL || ib->u.mem == NULL)
			err = CL_INVALID_MEM_OBJECT;
		else
			err = clEnqueueCopyBuffer(enq.q->u.queue, ib->u.mem,
			    buf->u.mem, o[0] * img.elem, m->offset, n,
			    enq.nwait, enq.wait, enq.event_id ? &enq.ev : NULL);
	} else if (m->to_buffer)
		err = clEnqueueCopyImageToBuffer(enq.q->u.queue, im->u.mem,
		    buf->u.mem, o, r, m->offset, enq.nwait, enq.wait,
		    enq.event_id ? &enq.ev : NULL);
	else
		err = clEnqueueCopyBufferToImage(enq.q->u.queue, buf->u.mem,
		    im->u.mem, m->offset, o, r, enq.nwait, enq.wait,
		    enq.event_id ? &enq.ev : NULL);
out:
	vcl_enq_end(s, &enq, err, NULL);
}

/*
 * A migration's read or write of a whole memory object (vcl_op_peer.c):
 * an image moves by the image calls, packed, all of it (off 0, size its
 * packed size); a buffer by the buffer calls.
 */
cl_int
vcl_image_xfer(cl_command_queue q, const struct vcl_hobj *mem, int write,
    uint64_t off, uint64_t size, void *data, cl_uint nwait,
    const cl_event *wait, cl_event *ev)
{
	static const uint64_t zero[3] = { 0, 0, 0 };
	struct vcl_img	img;
	size_t		o[3], r[3], row, slice;
	uint64_t	n;

	if (vcl_image_of(mem->u.mem, &img) != 0) {
		if (write)
			return (clEnqueueWriteBuffer(q, mem->u.mem, CL_FALSE,
			    off, size, data, nwait, wait, ev));
		return (clEnqueueReadBuffer(q, mem->u.mem, CL_FALSE, off, size,
		    data, nwait, wait, ev));
	}
	if (vcl_image_region(&img, zero, 3, img.dim, 3, o, r, &n) !=
	    CL_SUCCESS || off != 0 || size != n)
		return (CL_INVALID_VALUE);
	vcl_image_pitches(&img, r, &row, &slice);
	if (write)
		return (clEnqueueWriteImage(q, mem->u.mem, CL_FALSE, o, r, row,
		    slice, data, nwait, wait, ev));
	return (clEnqueueReadImage(q, mem->u.mem, CL_FALSE, o, r, row, slice,
	    data, nwait, wait, ev));
}

/* The CL_MEM_OBJECT_* type of a memory object's runtime handle, 0: none. */
uint32_t
vcl_image_mem_type(cl_mem m)
{
	cl_mem_object_type	t = 0;

	if (m == NULL || clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof t, &t,
	    NULL) != CL_SUCCESS)
		return (0);
	return ((uint32_t)t);
}
