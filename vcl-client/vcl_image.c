/*
 * vcl_image.c - images: creation, formats, info, and the commands that move
 * their bytes (read, write, copy, fill, map, copies to and from buffers).
 *
 * An image is a cl_mem whose type is an image type. Its bytes travel
 * packed: a region's rows one after the other, no padding. The host's row
 * and slice pitches are applied here, on this side, so only the region's
 * bytes cross the wire. Across nodes an image is tracked like a buffer
 * (vcl_mem_use, vcl_mem_written); its packed size is its mem->size.
 */
#include <stdlib.h>
#include <string.h>

#include "vcl_client.h"
#include "vcl_coherence.h"
#include "vcl_conn.h"
#include "vcl_context.h"
#include "vcl_event.h"
#include "vcl_image.h"
#include "vcl_info.h"
#include "vcl_log.h"
#include "vcl_mem.h"
#include "vcl_object.h"
#include "vcl_platform.h"

#define VCL_IMG_ACCESS	(CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY |	\
	CL_MEM_READ_ONLY | CL_MEM_KERNEL_READ_AND_WRITE)
#define VCL_IMG_HOST	(CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | \
	CL_MEM_HOST_NO_ACCESS)
#define VCL_IMG_PTR	(CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR |	\
	CL_MEM_COPY_HOST_PTR)

/* Formats a context supports, kept so that every creation need not ask. */
struct vcl_fmt_cache {
	uint64_t		 ctx;		/* context id, 0: free slot */
	cl_mem_flags		 access;
	cl_mem_object_type	 type;
	cl_image_format		*f;
	cl_uint			 n;
};
#define VCL_FMT_CACHE	16
static struct vcl_fmt_cache	vcl_fmts[VCL_FMT_CACHE];
static unsigned			vcl_fmt_next;
static pthread_mutex_t		vcl_fmt_lock = PTHREAD_MUTEX_INITIALIZER;

/* At most one bit of mask set in flags. */
static int
vcl_img_one_of(cl_mem_flags flags, cl_mem_flags mask)
{
	cl_mem_flags	f = flags & mask;

	return ((f & (f - 1)) == 0);
}

/* Is this memory object an image? */
int
vcl_mem_is_image(cl_mem mem)
{
	return (mem->type != 0 && mem->type != CL_MEM_OBJECT_BUFFER);
}

/* True for the CL_MEM_OBJECT_IMAGE* types. */
static int
vcl_image_type_ok(cl_mem_object_type t)
{
	return (t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
	    t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D ||
	    t == CL_MEM_OBJECT_IMAGE2D_ARRAY || t == CL_MEM_OBJECT_IMAGE3D);
}

/* Bytes per pixel of a format, 0 for a combination the spec does not name. */
static size_t
vcl_image_elem(const cl_image_format *f)
{
	size_t	ch, sz;

	switch (f->image_channel_order) {
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
	switch (f->image_channel_data_type) {
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
		return (ch == 3 ? 2 : 0);
	case CL_UNORM_INT_101010:
		return (ch == 3 ? 4 : 0);
	default:
		return (0);
	}
	return (ch == 3 ? 0 : ch * sz);
}

/*
 * The extent of each of an image's three origin/region coordinates: a 1D
 * array's second one is its array size, a 2D array's third one too.
 */
static void
vcl_image_dims(cl_mem img, size_t *d)
{
	const cl_image_desc	*x = &img->desc;

	d[0] = x->image_width;
	d[1] = d[2] = 1;
	switch (img->type) {
	case CL_MEM_OBJECT_IMAGE1D_ARRAY:
		d[1] = x->image_array_size;
		break;
	case CL_MEM_OBJECT_IMAGE2D:
		d[1] = x->image_height;
		break;
	case CL_MEM_OBJECT_IMAGE2D_ARRAY:
		d[1] = x->image_height;
		d[2] = x->image_array_size;
		break;
	case CL_MEM_OBJECT_IMAGE3D:
		d[1] = x->image_height;
		d[2] = x->image_depth;
		break;
	default:
		break;
	}
}

/* Check an origin and region against an image (CL_INVALID_VALUE). */
static cl_int
vcl_image_box(cl_mem img, const size_t *o, const size_t *r)
{
	size_t	d[3];
	int	i;

	if (o == NULL || r == NULL)
		return (CL_INVALID_VALUE);
	vcl_image_dims(img, d);
	for (i = 0; i < 3; i++)
		if (r[i] == 0 || o[i] > d[i] || r[i] > d[i] - o[i])
			return (CL_INVALID_VALUE);
	return (CL_SUCCESS);
}

/* Packed bytes of a region already checked against an image. */
static size_t
vcl_image_bytes(cl_mem img, const size_t *r)
{
	return (r[0] * r[1] * r[2] * img->elem);
}

/*
 * The host strides of a region's second and third coordinates from an
 * application's row and slice pitches (0: packed). A 1D array's second
 * coordinate steps by the slice pitch, as the spec has it. Returns
 * CL_INVALID_VALUE for pitches the spec refuses.
 */
static cl_int
vcl_image_strides(cl_mem img, const size_t *r, size_t row, size_t slice,
    size_t *s1, size_t *s2)
{
	size_t	rowb = r[0] * img->elem;

	if (row != 0 && row < rowb)
		return (CL_INVALID_VALUE);
	if (row == 0)
		row = rowb;
	if ((img->type == CL_MEM_OBJECT_IMAGE1D ||
	    img->type == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
	    img->type == CL_MEM_OBJECT_IMAGE2D) && slice != 0)
		return (CL_INVALID_VALUE);
	if (img->type == CL_MEM_OBJECT_IMAGE1D_ARRAY) {
		if (slice != 0 && slice < row)
			return (CL_INVALID_VALUE);
		*s1 = slice != 0 ? slice : row;
		*s2 = 0;
		return (CL_SUCCESS);
	}
	if (slice != 0 && (r[1] != 0 && slice / r[1] < row))
		return (CL_INVALID_VALUE);
	*s1 = row;
	*s2 = slice != 0 ? slice : row * r[1];
	return (CL_SUCCESS);
}

/* Copy a region between packed bytes and host memory of strides s1, s2. */
static void
vcl_image_pack(uint8_t *packed, uint8_t *host, const size_t *r, size_t elem,
    size_t s1, size_t s2, int to_host)
{
	size_t	rowb = r[0] * elem, y, z;

	for (z = 0; z < r[2]; z++)
		for (y = 0; y < r[1]; y++) {
			uint8_t	*h = host + z * s2 + y * s1;
			uint8_t	*p = packed + (z * r[1] + y) * rowb;

			if (to_host)
				memcpy(h, p, rowb);
			else
				memcpy(p, h, rowb);
		}
}

/* Are strides s1, s2 those of packed bytes (no copy needed)? */
static int
vcl_image_packed(cl_mem img, const size_t *r, size_t s1, size_t s2)
{
	size_t	rowb = r[0] * img->elem;

	return (s1 == rowb && (r[2] == 1 || s2 == rowb * r[1]));
}

/*
 * Create the image on node n (asynchronously); a pristine image starts
 * with its packed initial bytes. Called with the lock of its root
 * (vcl_mem_root: its buffer's for a buffer image) held, or before the
 * image is shared (see vcl_mem_on).
 */
cl_int
vcl_image_on(cl_mem mem, struct vcl_node *n)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateImage	 m = VCL__CREATE_IMAGE__INIT;
	const void		*data = NULL;
	cl_int			 err;

	if (mem->nodes & (1ull << n->index))
		return (CL_SUCCESS);
	if (mem->buffer != NULL) {
		if ((err = vcl_mem_on(mem->buffer, n)) != CL_SUCCESS)
			return (err);
		m.has_buffer = 1;
		m.buffer = mem->buffer->obj.id;
	} else if (mem->coh.pristine)
		data = mem->coh.init;
	m.id = mem->obj.id;
	m.context = mem->ctx->obj.id;
	m.flags = mem->flags & (VCL_IMG_ACCESS | VCL_IMG_HOST |
	    CL_MEM_ALLOC_HOST_PTR);
	m.order = mem->format.image_channel_order;
	m.data_type = mem->format.image_channel_data_type;
	m.type = mem->type;
	m.width = mem->desc.image_width;
	m.has_height = m.has_depth = m.has_array_size = 1;
	m.height = mem->desc.image_height;
	m.depth = mem->desc.image_depth;
	m.array_size = mem->desc.image_array_size;
	m.has_has_data = 1;
	m.has_data = data != NULL;
	req.call_case = VCL__REQUEST__CALL_CREATE_IMAGE;
	req.create_image = &m;
	err = vcl_node_send(n, &req, data, data != NULL ? mem->size : 0, 0);
	if (err == CL_SUCCESS) {
		mem->nodes |= 1ull << n->index;
		vcl_coherence_created(&mem->coh, n->index);
	}
	return (err);
}

/* What an image holds beyond a buffer, at its last release. */
void
vcl_image_free(cl_mem mem)
{
	if (mem->buffer != NULL)
		vcl_mem_unref(mem->buffer);
	mem->buffer = NULL;
}

/* The formats node n supports for a context, flags and type. */
static cl_int
vcl_image_formats_node(struct vcl_node *n, cl_context ctx,
    cl_mem_flags flags, cl_mem_object_type type, cl_image_format **fp,
    cl_uint *np)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__ImageFormats	 m = VCL__IMAGE_FORMATS__INIT;
	Vcl__ToClient		*tc = NULL;
	cl_int			 err;
	size_t			 len;

	*fp = NULL;
	*np = 0;
	m.context = ctx->obj.id;
	m.flags = flags;
	m.type = type;
	req.call_case = VCL__REQUEST__CALL_IMAGE_FORMATS;
	req.image_formats = &m;
	err = vcl_node_call(n, &req, NULL, 0, NULL, 0, &tc);
	if (err == CL_SUCCESS) {
		len = tc->reply->info != NULL ? tc->reply->info->value.len : 0;
		if (len % sizeof **fp != 0)
			err = CL_INVALID_VALUE;
		else if (len > 0 && (*fp = malloc(len)) == NULL)
			err = CL_OUT_OF_HOST_MEMORY;
		else if (len > 0) {
			memcpy(*fp, tc->reply->info->value.data, len);
			*np = (cl_uint)(len / sizeof **fp);
		}
	}
	if (tc != NULL)
		vcl__to_client__free_unpacked(tc, NULL);
	return (err);
}

/*
 * The formats every live node of the context supports (each node answers
 * for all its devices of the context): the first node's list, less what
 * another node lacks. A node lost before or during its call is left out:
 * its devices run nothing more, so the others' images go on.
 */
static cl_int
vcl_image_formats(cl_context ctx, cl_mem_flags flags, cl_mem_object_type type,
    cl_image_format **fp, cl_uint *np)
{
	cl_image_format	*all = NULL, *f;
	cl_uint		 nall = 0, nf, i, j, k;
	int		 first = 1, node;
	cl_int		 err = CL_SUCCESS;

	for (node = 0; node < vcl_nnodes() && err == CL_SUCCESS; node++) {
		if (!(ctx->nodes & (1ull << node)) ||
		    vcl_node_status(vcl_node_get(node)) != CL_SUCCESS)
			continue;
		if ((err = vcl_image_formats_node(vcl_node_get(node), ctx,
		    flags, type, &f, &nf)) != CL_SUCCESS) {
			if (vcl_node_status(vcl_node_get(node)) == CL_SUCCESS)
				break;
			err = CL_SUCCESS;	/* lost during the call */
			continue;
		}
		if (first) {
			all = f;
			nall = nf;
			first = 0;
			continue;
		}
		for (i = k = 0; i < nall; i++) {
			for (j = 0; j < nf; j++)
				if (memcmp(&all[i], &f[j], sizeof *f) == 0)
					break;
			if (j < nf)
				all[k++] = all[i];
		}
		nall = k;
		free(f);
	}
	if (err == CL_SUCCESS && first)
		err = CL_DEVICE_NOT_AVAILABLE;	/* no node lives */
	if (err != CL_SUCCESS) {
		free(all);
		all = NULL;
		nall = 0;
	}
	*fp = all;
	*np = nall;
	return (err);
}

cl_int CL_API_CALL
vcl_clGetSupportedImageFormats(cl_context context, cl_mem_flags flags,
    cl_mem_object_type image_type, cl_uint num_entries,
    cl_image_format *image_formats, cl_uint *num_image_formats)
{
	cl_image_format	*f = NULL;
	cl_uint		 n = 0;
	cl_int		 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF((flags & ~(cl_mem_flags)(VCL_IMG_ACCESS | VCL_IMG_HOST |
	    VCL_IMG_PTR)) || !vcl_image_type_ok(image_type) ||
	    (num_entries == 0 && image_formats != NULL), CL_INVALID_VALUE);
	if ((err = vcl_image_formats(context, flags, image_type, &f, &n)) !=
	    CL_SUCCESS)
		goto out;
	if (image_formats != NULL)
		memcpy(image_formats, f, (n < num_entries ? n : num_entries) *
		    sizeof *f);
	if (num_image_formats != NULL)
		*num_image_formats = n;
out:
	free(f);
	return (err);
}

/* Is a format supported for these flags and type (cached per context)? */
static cl_int
vcl_image_supported(cl_context ctx, cl_mem_flags flags,
    cl_mem_object_type type, const cl_image_format *fmt)
{
	struct vcl_fmt_cache	*c = NULL;
	cl_mem_flags		 access = flags & VCL_IMG_ACCESS;
	cl_image_format		*f;
	cl_uint			 n, i;
	cl_int			 err = CL_SUCCESS;
	int			 found = 0;

	pthread_mutex_lock(&vcl_fmt_lock);
	for (i = 0; i < VCL_FMT_CACHE && c == NULL; i++)
		if (vcl_fmts[i].ctx == ctx->obj.id &&
		    vcl_fmts[i].access == access && vcl_fmts[i].type == type)
			c = &vcl_fmts[i];
	if (c == NULL) {
		pthread_mutex_unlock(&vcl_fmt_lock);
		if ((err = vcl_image_formats(ctx, access, type, &f, &n)) !=
		    CL_SUCCESS)
			return (err);
		pthread_mutex_lock(&vcl_fmt_lock);
		c = &vcl_fmts[vcl_fmt_next++ % VCL_FMT_CACHE];
		free(c->f);
		c->ctx = ctx->obj.id;
		c->access = access;
		c->type = type;
		c->f = f;
		c->n = n;
	}
	for (i = 0; i < c->n && !found; i++)
		found = c->f[i].image_channel_order ==
		    fmt->image_channel_order &&
		    c->f[i].image_channel_data_type ==
		    fmt->image_channel_data_type;
	pthread_mutex_unlock(&vcl_fmt_lock);
	return (found ? CL_SUCCESS : CL_IMAGE_FORMAT_NOT_SUPPORTED);
}

/* The largest value of a size_t device limit over the context's devices. */
static size_t
vcl_image_limit(cl_context ctx, cl_device_info param)
{
	size_t	v, best = 0;
	cl_uint	i;

	for (i = 0; i < ctx->ndevices; i++)
		if (vcl_clGetDeviceInfo(ctx->devices[i], param, sizeof v, &v,
		    NULL) == CL_SUCCESS && v > best)
			best = v;
	return (best);
}

/* Do the dimensions fit some device of the context (CL_INVALID_IMAGE_SIZE)? */
static cl_int
vcl_image_fits(cl_context ctx, cl_mem_object_type t, const cl_image_desc *d,
    size_t elem)
{
	size_t	w = d->image_width, h = d->image_height, dp = d->image_depth;
	size_t	a = d->image_array_size;

	switch (t) {
	case CL_MEM_OBJECT_IMAGE1D_BUFFER:
		/* Past its buffer: a descriptor no image can have. */
		if (d->buffer != NULL && w > d->buffer->size / elem)
			return (CL_INVALID_IMAGE_DESCRIPTOR);
		if (w > vcl_image_limit(ctx, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE))
			return (CL_INVALID_IMAGE_SIZE);
		break;
	case CL_MEM_OBJECT_IMAGE1D_ARRAY:
	case CL_MEM_OBJECT_IMAGE2D_ARRAY:
		if (a > vcl_image_limit(ctx, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE))
			return (CL_INVALID_IMAGE_SIZE);
		/* FALLTHROUGH */
	case CL_MEM_OBJECT_IMAGE1D:
	case CL_MEM_OBJECT_IMAGE2D:
		if (w > vcl_image_limit(ctx, CL_DEVICE_IMAGE2D_MAX_WIDTH) ||
		    ((t == CL_MEM_OBJECT_IMAGE2D ||
		    t == CL_MEM_OBJECT_IMAGE2D_ARRAY) &&
		    h > vcl_image_limit(ctx, CL_DEVICE_IMAGE2D_MAX_HEIGHT)))
			return (CL_INVALID_IMAGE_SIZE);
		break;
	case CL_MEM_OBJECT_IMAGE3D:
		if (w > vcl_image_limit(ctx, CL_DEVICE_IMAGE3D_MAX_WIDTH) ||
		    h > vcl_image_limit(ctx, CL_DEVICE_IMAGE3D_MAX_HEIGHT) ||
		    dp > vcl_image_limit(ctx, CL_DEVICE_IMAGE3D_MAX_DEPTH))
			return (CL_INVALID_IMAGE_SIZE);
		break;
	default:
		break;
	}
	return (CL_SUCCESS);
}

/*
 * Check an image descriptor as the spec does; fills the image's type,
 * dimensions and host pitches into img (row and slice pitch: the host's
 * when it gave them, else packed).
 */
static cl_int
vcl_image_check_desc(cl_context ctx, cl_mem img, const cl_image_desc *d,
    void *host_ptr)
{
	cl_mem_object_type	 t;
	size_t			 dims[3], row, slice, elem = img->elem;
	int			 i;

	if (d == NULL || !vcl_image_type_ok(t = d->image_type))
		return (CL_INVALID_IMAGE_DESCRIPTOR);
	img->type = t;
	img->desc.image_type = t;
	img->desc.image_width = d->image_width;
	if (t == CL_MEM_OBJECT_IMAGE2D || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
	    t == CL_MEM_OBJECT_IMAGE3D)
		img->desc.image_height = d->image_height;
	if (t == CL_MEM_OBJECT_IMAGE3D)
		img->desc.image_depth = d->image_depth;
	if (t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY)
		img->desc.image_array_size = d->image_array_size;
	vcl_image_dims(img, dims);
	for (i = 0; i < 3; i++)
		if (dims[i] == 0)
			return (CL_INVALID_IMAGE_DESCRIPTOR);
	if (d->num_mip_levels != 0 || d->num_samples != 0)
		return (CL_INVALID_IMAGE_DESCRIPTOR);
	if ((t == CL_MEM_OBJECT_IMAGE1D_BUFFER) != (d->buffer != NULL))
		return (CL_INVALID_IMAGE_DESCRIPTOR);
	if (d->buffer != NULL && (!vcl_is(d->buffer, VCL_KIND_MEM) ||
	    vcl_mem_is_image(d->buffer) || d->buffer->ctx != ctx))
		return (CL_INVALID_IMAGE_DESCRIPTOR);
	/* Pitches: only with a host pointer, never below the packed ones. */
	row = d->image_row_pitch;
	slice = d->image_slice_pitch;
	if (host_ptr == NULL && (row != 0 || slice != 0))
		return (CL_INVALID_IMAGE_DESCRIPTOR);
	if (row != 0 && (row < dims[0] * elem || row % elem != 0))
		return (CL_INVALID_IMAGE_DESCRIPTOR);
	if (row == 0)
		row = dims[0] * elem;
	if (t == CL_MEM_OBJECT_IMAGE1D_ARRAY) {
		if (slice != 0 && (slice < row || slice % row != 0))
			return (CL_INVALID_IMAGE_DESCRIPTOR);
		if (slice == 0)
			slice = row;
	} else if (t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
	    t == CL_MEM_OBJECT_IMAGE3D) {
		if (slice != 0 && (slice / dims[1] < row || slice % row != 0))
			return (CL_INVALID_IMAGE_DESCRIPTOR);
		if (slice == 0)
			slice = row * dims[1];
	} else
		slice = 0;
	img->desc.image_row_pitch = row;
	img->desc.image_slice_pitch = slice;
	img->desc.buffer = d->buffer;
	return (CL_SUCCESS);
}

/* clCreateImage and every older or newer form of it. */
static cl_mem
vcl_image_create(cl_context context, cl_mem_flags flags,
    const cl_image_format *fmt, const cl_image_desc *desc, void *host_ptr,
    cl_int *errcode_ret)
{
	cl_mem	 mem = NULL, root;
	size_t	 dims[3], s1, s2, i;
	cl_int	 err = CL_SUCCESS;
	cl_bool	 images = CL_FALSE, b;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF((flags & ~(cl_mem_flags)(VCL_IMG_ACCESS | VCL_IMG_HOST |
	    VCL_IMG_PTR)) || !vcl_img_one_of(flags, VCL_IMG_ACCESS) ||
	    !vcl_img_one_of(flags, VCL_IMG_HOST) ||
	    ((flags & CL_MEM_USE_HOST_PTR) &&
	    (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))),
	    CL_INVALID_VALUE);
	VCL_GOTO_IF(fmt == NULL || vcl_image_elem(fmt) == 0,
	    CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
	VCL_GOTO_IF((mem = vcl_object_new(sizeof *mem, VCL_KIND_MEM)) == NULL,
	    CL_OUT_OF_HOST_MEMORY);
	vcl_coherence_init(&mem->coh);
	pthread_mutex_init(&mem->lock, NULL);
	mem->ctx = context;
	vcl_retain(context);
	mem->format = *fmt;
	mem->elem = vcl_image_elem(fmt);
	mem->type = CL_MEM_OBJECT_IMAGE2D;	/* an image from here on */
	if ((err = vcl_image_check_desc(context, mem, desc, host_ptr)) !=
	    CL_SUCCESS)
		goto out;
	VCL_GOTO_IF((err = vcl_image_fits(context, mem->type, &mem->desc,
	    mem->elem)) != CL_SUCCESS, err);
	VCL_GOTO_IF((host_ptr == NULL) != !(flags & (CL_MEM_USE_HOST_PTR |
	    CL_MEM_COPY_HOST_PTR)), CL_INVALID_HOST_PTR);
	if (mem->desc.buffer != NULL) {
		/* It shares its buffer's storage and takes its access. */
		VCL_GOTO_IF(flags & VCL_IMG_PTR, CL_INVALID_VALUE);
		if (!(flags & VCL_IMG_ACCESS))
			flags |= mem->desc.buffer->flags & VCL_IMG_ACCESS;
		if (!(flags & VCL_IMG_HOST))
			flags |= mem->desc.buffer->flags & VCL_IMG_HOST;
		vcl_retain(mem->desc.buffer);
		mem->buffer = mem->desc.buffer;
	}
	for (i = 0; i < context->ndevices; i++)
		if (vcl_clGetDeviceInfo(context->devices[i],
		    CL_DEVICE_IMAGE_SUPPORT, sizeof b, &b, NULL) == CL_SUCCESS &&
		    b)
			images = CL_TRUE;
	VCL_GOTO_IF(!images, CL_INVALID_OPERATION);
	if ((err = vcl_image_supported(context, flags, mem->type, fmt)) !=
	    CL_SUCCESS)
		goto out;
	mem->flags = flags;
	if (!(flags & VCL_IMG_ACCESS))
		mem->flags |= CL_MEM_READ_WRITE;
	vcl_image_dims(mem, dims);
	mem->size = dims[0] * dims[1] * dims[2] * mem->elem;
	mem->host_ptr = host_ptr;
	if (host_ptr != NULL) {
		/* The initial bytes, packed: what each node starts with. */
		VCL_GOTO_IF((mem->coh.init = malloc(mem->size)) == NULL,
		    CL_OUT_OF_HOST_MEMORY);
		if (mem->type == CL_MEM_OBJECT_IMAGE1D_ARRAY) {
			s1 = mem->desc.image_slice_pitch;
			s2 = 0;
		} else {
			s1 = mem->desc.image_row_pitch;
			s2 = mem->desc.image_slice_pitch;
		}
		vcl_image_pack(mem->coh.init, host_ptr, dims, mem->elem, s1, s2,
		    0);
	}
	if (!vcl_ctx_multi(context)) {
		/* The buffer it lies in is shared: under the buffer's lock. */
		root = vcl_mem_root(mem);
		if (root != mem)
			pthread_mutex_lock(&root->lock);
		for (i = 0; i < (size_t)vcl_nnodes() && err == CL_SUCCESS; i++)
			if (context->nodes & (1ull << i))
				err = vcl_mem_on(mem, vcl_node_get(i));
		if (root != mem)
			pthread_mutex_unlock(&root->lock);
		free(mem->coh.init);
		mem->coh.init = NULL;
	}
	/* COPY_HOST_PTR's bytes are kept packed; USE_HOST_PTR keeps ptr. */
	if (!(flags & CL_MEM_USE_HOST_PTR))
		mem->host_ptr = NULL;
out:
	if (err != CL_SUCCESS && mem != NULL) {
		vcl_mem_unref(mem);
		mem = NULL;
	}
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (mem);
}

cl_mem CL_API_CALL
vcl_clCreateImage(cl_context context, cl_mem_flags flags,
    const cl_image_format *image_format, const cl_image_desc *image_desc,
    void *host_ptr, cl_int *errcode_ret)
{
	return (vcl_image_create(context, flags, image_format, image_desc,
	    host_ptr, errcode_ret));
}

cl_mem CL_API_CALL
vcl_clCreateImageWithProperties(cl_context context,
    const cl_mem_properties *properties, cl_mem_flags flags,
    const cl_image_format *image_format, const cl_image_desc *image_desc,
    void *host_ptr, cl_int *errcode_ret)
{
	/* No image property is defined by the core spec. */
	if (properties != NULL && properties[0] != 0) {
		if (errcode_ret != NULL)
			*errcode_ret = vcl_is(context, VCL_KIND_CONTEXT) ?
			    CL_INVALID_PROPERTY : CL_INVALID_CONTEXT;
		return (NULL);
	}
	return (vcl_image_create(context, flags, image_format, image_desc,
	    host_ptr, errcode_ret));
}

cl_mem CL_API_CALL
vcl_clCreateImage2D(cl_context context, cl_mem_flags flags,
    const cl_image_format *image_format, size_t image_width,
    size_t image_height, size_t image_row_pitch, void *host_ptr,
    cl_int *errcode_ret)
{
	cl_image_desc	d;

	memset(&d, 0, sizeof d);
	d.image_type = CL_MEM_OBJECT_IMAGE2D;
	d.image_width = image_width;
	d.image_height = image_height;
	d.image_row_pitch = image_row_pitch;
	return (vcl_image_create(context, flags, image_format, &d, host_ptr,
	    errcode_ret));
}

cl_mem CL_API_CALL
vcl_clCreateImage3D(cl_context context, cl_mem_flags flags,
    const cl_image_format *image_format, size_t image_width,
    size_t image_height, size_t image_depth, size_t image_row_pitch,
    size_t image_slice_pitch, void *host_ptr, cl_int *errcode_ret)
{
	cl_image_desc	d;

	memset(&d, 0, sizeof d);
	d.image_type = CL_MEM_OBJECT_IMAGE3D;
	d.image_width = image_width;
	d.image_height = image_height;
	d.image_depth = image_depth;
	d.image_row_pitch = image_row_pitch;
	d.image_slice_pitch = image_slice_pitch;
	return (vcl_image_create(context, flags, image_format, &d, host_ptr,
	    errcode_ret));
}

cl_int CL_API_CALL
vcl_clGetImageInfo(cl_mem image, cl_image_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	const cl_image_desc	*d;
	size_t			 v;
	cl_uint			 u = 0;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(image, VCL_KIND_MEM) || !vcl_mem_is_image(image),
	    CL_INVALID_MEM_OBJECT);
	d = &image->desc;
	switch (param_name) {
	case CL_IMAGE_FORMAT:
		err = vcl_info_ret(&image->format, sizeof image->format,
		    param_value_size, param_value, param_value_size_ret);
		goto out;
	case CL_IMAGE_ELEMENT_SIZE:
		v = image->elem;
		break;
	case CL_IMAGE_ROW_PITCH:
		v = d->image_row_pitch;
		break;
	case CL_IMAGE_SLICE_PITCH:
		v = d->image_slice_pitch;
		break;
	case CL_IMAGE_WIDTH:
		v = d->image_width;
		break;
	case CL_IMAGE_HEIGHT:
		v = d->image_height;
		break;
	case CL_IMAGE_DEPTH:
		v = d->image_depth;
		break;
	case CL_IMAGE_ARRAY_SIZE:
		v = d->image_array_size;
		break;
	case CL_IMAGE_BUFFER:
		err = vcl_info_ret(&image->buffer, sizeof image->buffer,
		    param_value_size, param_value, param_value_size_ret);
		goto out;
	case CL_IMAGE_NUM_MIP_LEVELS:
	case CL_IMAGE_NUM_SAMPLES:
		err = vcl_info_ret(&u, sizeof u, param_value_size, param_value,
		    param_value_size_ret);
		goto out;
	default:
		err = CL_INVALID_VALUE;
		goto out;
	}
	err = vcl_info_ret(&v, sizeof v, param_value_size, param_value,
	    param_value_size_ret);
out:
	return (err);
}

/* Common checks of a command on an image region. */
static cl_int
vcl_image_check(cl_command_queue q, cl_mem img, const size_t *o,
    const size_t *r)
{
	if (!vcl_is(q, VCL_KIND_QUEUE))
		return (CL_INVALID_COMMAND_QUEUE);
	if (!vcl_is(img, VCL_KIND_MEM) || !vcl_mem_is_image(img))
		return (CL_INVALID_MEM_OBJECT);
	if (img->ctx != q->ctx)
		return (CL_INVALID_CONTEXT);
	return (vcl_image_box(img, o, r));
}

/* Three uint64 of a size_t[3] for the wire. */
static void
vcl_image_u64(uint64_t *w, const size_t *v)
{
	w[0] = v[0];
	w[1] = v[1];
	w[2] = v[2];
}

/*
 * Read a region into ptr of strides s1, s2. Packed host memory takes the
 * bytes straight from the socket (asynchronously if asked); other pitches
 * go through memory of ours, blocking, and are unpacked here.
 */
static cl_int
vcl_image_read(cl_command_queue q, cl_mem img, cl_bool blocking,
    const size_t *o, const size_t *r, size_t s1, size_t s2, void *ptr,
    cl_uint n, const cl_event *list, cl_event *event, cl_command_type type)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__ReadImage	 m = VCL__READ_IMAGE__INIT;
	struct vcl_node	*node = q->dev->node;
	struct vcl_enq	 enq;
	cl_event	 ev = NULL;
	uint64_t	 wo[3], wr[3];
	size_t		 bytes = vcl_image_bytes(img, r);
	uint8_t		*dst = ptr;
	cl_int		 err;

	if (!vcl_image_packed(img, r, s1, s2)) {
		if ((dst = malloc(bytes)) == NULL)
			return (CL_OUT_OF_HOST_MEMORY);
		blocking = CL_TRUE;
	}
	if ((err = vcl_enq_prepare(&enq, q, n, list, event, type, 0)) !=
	    CL_SUCCESS)
		goto out;
	if ((err = vcl_mem_use(&enq, q, img, 0, 0)) != CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		goto out;
	}
	vcl_image_u64(wo, o);
	vcl_image_u64(wr, r);
	m.q = &enq.e;
	m.mem = img->obj.id;
	m.origin = wo;
	m.n_origin = 3;
	m.region = wr;
	m.n_region = 3;
	req.call_case = VCL__REQUEST__CALL_READ_IMAGE;
	req.read_image = &m;
	if (blocking) {
		err = vcl_node_call(node, &req, NULL, 0, dst, bytes, NULL);
		if (err == CL_SUCCESS && dst != ptr)
			vcl_image_pack(dst, ptr, r, img->elem, s1, s2, 1);
		vcl_enq_finish(&enq, err == CL_DEVICE_NOT_AVAILABLE ? err :
		    CL_SUCCESS, &ev);
		/* The event's notification is right behind the reply. */
		if (ev != NULL) {
			vcl_event_wait(1, &ev);
			*event = ev;
		}
		goto out;
	}
	vcl_retain(q);
	atomic_fetch_add(&q->inflight, 1);
	if ((err = vcl_node_call_async(node, &req, ptr, bytes, event == NULL ?
	    vcl_mem_read_done_quiet : vcl_mem_read_done, q)) != CL_SUCCESS) {
		atomic_fetch_sub(&q->inflight, 1);
		vcl_queue_unref(q);
	}
	vcl_enq_finish(&enq, err, event);
out:
	if (dst != ptr)
		free(dst);
	return (err);
}

/*
 * Write a region from ptr of strides s1, s2: packed here if need be, the
 * bytes go out with the request, so ptr is free again when this returns.
 */
static cl_int
vcl_image_write(cl_command_queue q, cl_mem img, const size_t *o,
    const size_t *r, size_t s1, size_t s2, const void *ptr, cl_uint n,
    const cl_event *list, cl_event *event, cl_command_type type)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__WriteImage	 m = VCL__WRITE_IMAGE__INIT;
	struct vcl_node	*node = q->dev->node;
	struct vcl_enq	 enq;
	uint64_t	 wo[3], wr[3];
	size_t		 bytes = vcl_image_bytes(img, r), d[3];
	const uint8_t	*src = ptr;
	uint8_t		*tmp = NULL;
	cl_int		 err;

	if (!vcl_image_packed(img, r, s1, s2)) {
		if ((tmp = malloc(bytes)) == NULL)
			return (CL_OUT_OF_HOST_MEMORY);
		vcl_image_pack(tmp, (uint8_t *)(uintptr_t)ptr, r, img->elem, s1,
		    s2, 0);
		src = tmp;
	}
	vcl_image_dims(img, d);
	if ((err = vcl_enq_prepare(&enq, q, n, list, event, type,
	    vcl_ctx_multi(q->ctx))) != CL_SUCCESS)
		goto out;
	if ((err = vcl_mem_use(&enq, q, img, 1, bytes == img->size)) !=
	    CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		goto out;
	}
	vcl_image_u64(wo, o);
	vcl_image_u64(wr, r);
	m.q = &enq.e;
	m.mem = img->obj.id;
	m.origin = wo;
	m.n_origin = 3;
	m.region = wr;
	m.n_region = 3;
	req.call_case = VCL__REQUEST__CALL_WRITE_IMAGE;
	req.write_image = &m;
	if ((err = vcl_node_send(node, &req, src, bytes, 0)) == CL_SUCCESS)
		vcl_mem_written(img, node, enq.ev);
	vcl_enq_finish(&enq, err, event);
out:
	free(tmp);
	return (err);
}

cl_int CL_API_CALL
vcl_clEnqueueReadImage(cl_command_queue command_queue, cl_mem image,
    cl_bool blocking_read, const size_t *origin, const size_t *region,
    size_t row_pitch, size_t slice_pitch, void *ptr,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	size_t	s1, s2;
	cl_int	err;

	if ((err = vcl_image_check(command_queue, image, origin, region)) !=
	    CL_SUCCESS)
		return (err);
	if (ptr == NULL || (err = vcl_image_strides(image, region, row_pitch,
	    slice_pitch, &s1, &s2)) != CL_SUCCESS)
		return (CL_INVALID_VALUE);
	if (image->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS))
		return (CL_INVALID_OPERATION);
	return (vcl_image_read(command_queue, image, blocking_read, origin,
	    region, s1, s2, ptr, num_events_in_wait_list, event_wait_list,
	    event, CL_COMMAND_READ_IMAGE));
}

cl_int CL_API_CALL
vcl_clEnqueueWriteImage(cl_command_queue command_queue, cl_mem image,
    cl_bool blocking_write, const size_t *origin, const size_t *region,
    size_t input_row_pitch, size_t input_slice_pitch, const void *ptr,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	size_t	s1, s2;
	cl_int	err;

	if ((err = vcl_image_check(command_queue, image, origin, region)) !=
	    CL_SUCCESS)
		return (err);
	if (ptr == NULL || (err = vcl_image_strides(image, region,
	    input_row_pitch, input_slice_pitch, &s1, &s2)) != CL_SUCCESS)
		return (CL_INVALID_VALUE);
	if (image->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS))
		return (CL_INVALID_OPERATION);
	return (vcl_image_write(command_queue, image, origin, region, s1, s2,
	    ptr, num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_WRITE_IMAGE));
}

/* Do two boxes of one image overlap? */
static int
vcl_image_overlap(const size_t *a, const size_t *b, const size_t *r)
{
	int	i;

	for (i = 0; i < 3; i++)
		if (a[i] + r[i] <= b[i] || b[i] + r[i] <= a[i])
			return (0);
	return (1);
}

cl_int CL_API_CALL
vcl_clEnqueueCopyImage(cl_command_queue command_queue, cl_mem src_image,
    cl_mem dst_image, const size_t *src_origin, const size_t *dst_origin,
    const size_t *region, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__CopyImage	 m = VCL__COPY_IMAGE__INIT;
	struct vcl_node	*node;
	struct vcl_enq	 enq;
	uint64_t	 so[3], dw[3], wr[3];
	cl_int		 err;

	if ((err = vcl_image_check(command_queue, src_image, src_origin,
	    region)) != CL_SUCCESS || (err = vcl_image_check(command_queue,
	    dst_image, dst_origin, region)) != CL_SUCCESS)
		return (err);
	if (src_image->format.image_channel_order !=
	    dst_image->format.image_channel_order ||
	    src_image->format.image_channel_data_type !=
	    dst_image->format.image_channel_data_type)
		return (CL_IMAGE_FORMAT_MISMATCH);
	if (src_image == dst_image && vcl_image_overlap(src_origin,
	    dst_origin, region))
		return (CL_MEM_COPY_OVERLAP);
	node = command_queue->dev->node;
	if ((err = vcl_enq_prepare(&enq, command_queue,
	    num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_COPY_IMAGE, vcl_ctx_multi(command_queue->ctx))) !=
	    CL_SUCCESS)
		return (err);
	if ((err = vcl_mem_use(&enq, command_queue, src_image, 0, 0)) !=
	    CL_SUCCESS || (err = vcl_mem_use(&enq, command_queue, dst_image,
	    1, vcl_image_bytes(dst_image, region) == dst_image->size)) !=
	    CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		return (err);
	}
	vcl_image_u64(so, src_origin);
	vcl_image_u64(dw, dst_origin);
	vcl_image_u64(wr, region);
	m.q = &enq.e;
	m.src = src_image->obj.id;
	m.dst = dst_image->obj.id;
	m.src_origin = so;
	m.n_src_origin = 3;
	m.dst_origin = dw;
	m.n_dst_origin = 3;
	m.region = wr;
	m.n_region = 3;
	req.call_case = VCL__REQUEST__CALL_COPY_IMAGE;
	req.copy_image = &m;
	if ((err = vcl_node_send(node, &req, NULL, 0, 0)) == CL_SUCCESS)
		vcl_mem_written(dst_image, node, enq.ev);
	vcl_enq_finish(&enq, err, event);
	return (err);
}

cl_int CL_API_CALL
vcl_clEnqueueFillImage(cl_command_queue command_queue, cl_mem image,
    const void *fill_color, const size_t origin[3], const size_t region[3],
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__FillImage	 m = VCL__FILL_IMAGE__INIT;
	struct vcl_node	*node;
	struct vcl_enq	 enq;
	uint64_t	 wo[3], wr[3];
	uint8_t		 color[16];
	cl_int		 err;

	if ((err = vcl_image_check(command_queue, image, origin, region)) !=
	    CL_SUCCESS)
		return (err);
	if (fill_color == NULL)
		return (CL_INVALID_VALUE);
	memcpy(color, fill_color, sizeof color);	/* float4/int4/uint4 */
	node = command_queue->dev->node;
	if ((err = vcl_enq_prepare(&enq, command_queue,
	    num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_FILL_IMAGE, vcl_ctx_multi(command_queue->ctx))) !=
	    CL_SUCCESS)
		return (err);
	if ((err = vcl_mem_use(&enq, command_queue, image, 1,
	    vcl_image_bytes(image, region) == image->size)) != CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		return (err);
	}
	vcl_image_u64(wo, origin);
	vcl_image_u64(wr, region);
	m.q = &enq.e;
	m.mem = image->obj.id;
	m.color.data = color;
	m.color.len = sizeof color;
	m.origin = wo;
	m.n_origin = 3;
	m.region = wr;
	m.n_region = 3;
	req.call_case = VCL__REQUEST__CALL_FILL_IMAGE;
	req.fill_image = &m;
	if ((err = vcl_node_send(node, &req, NULL, 0, 0)) == CL_SUCCESS)
		vcl_mem_written(image, node, enq.ev);
	vcl_enq_finish(&enq, err, event);
	return (err);
}

/* An image region to a buffer range, or back (to_buffer 0). */
static cl_int
vcl_image_buffer(cl_command_queue q, cl_mem img, cl_mem buf,
    const size_t *o, const size_t *r, size_t off, int to_buffer, cl_uint n,
    const cl_event *list, cl_event *event)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CopyImageBuffer	 m = VCL__COPY_IMAGE_BUFFER__INIT;
	struct vcl_node		*node;
	struct vcl_enq		 enq;
	uint64_t		 wo[3], wr[3];
	size_t			 bytes;
	cl_int			 err;

	if ((err = vcl_image_check(q, img, o, r)) != CL_SUCCESS)
		return (err);
	if (!vcl_is(buf, VCL_KIND_MEM) || vcl_mem_is_image(buf))
		return (CL_INVALID_MEM_OBJECT);
	if (buf->ctx != q->ctx)
		return (CL_INVALID_CONTEXT);
	bytes = vcl_image_bytes(img, r);
	if (off > buf->size || bytes > buf->size - off)
		return (CL_INVALID_VALUE);
	node = q->dev->node;
	if ((err = vcl_enq_prepare(&enq, q, n, list, event, to_buffer ?
	    CL_COMMAND_COPY_IMAGE_TO_BUFFER : CL_COMMAND_COPY_BUFFER_TO_IMAGE,
	    vcl_ctx_multi(q->ctx))) != CL_SUCCESS)
		return (err);
	/* The source comes here first; the destination is written. */
	if ((err = vcl_mem_use(&enq, q, to_buffer ? img : buf, 0, 0)) ==
	    CL_SUCCESS)
		err = to_buffer ? vcl_mem_use(&enq, q, buf, 1, off == 0 &&
		    bytes == buf->size) : vcl_mem_use(&enq, q, img, 1,
		    bytes == img->size);
	if (err != CL_SUCCESS) {
		vcl_enq_finish(&enq, err, event);
		return (err);
	}
	vcl_image_u64(wo, o);
	vcl_image_u64(wr, r);
	m.q = &enq.e;
	m.image = img->obj.id;
	m.buffer = buf->obj.id;
	m.origin = wo;
	m.n_origin = 3;
	m.region = wr;
	m.n_region = 3;
	m.offset = off;
	m.to_buffer = to_buffer;
	req.call_case = VCL__REQUEST__CALL_COPY_IMAGE_BUFFER;
	req.copy_image_buffer = &m;
	if ((err = vcl_node_send(node, &req, NULL, 0, 0)) == CL_SUCCESS)
		vcl_mem_written(to_buffer ? buf : img, node, enq.ev);
	vcl_enq_finish(&enq, err, event);
	return (err);
}

cl_int CL_API_CALL
vcl_clEnqueueCopyImageToBuffer(cl_command_queue command_queue,
    cl_mem src_image, cl_mem dst_buffer, const size_t *src_origin,
    const size_t *region, size_t dst_offset, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event)
{
	return (vcl_image_buffer(command_queue, src_image, dst_buffer,
	    src_origin, region, dst_offset, 1, num_events_in_wait_list,
	    event_wait_list, event));
}

cl_int CL_API_CALL
vcl_clEnqueueCopyBufferToImage(cl_command_queue command_queue,
    cl_mem src_buffer, cl_mem dst_image, size_t src_offset,
    const size_t *dst_origin, const size_t *region,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	return (vcl_image_buffer(command_queue, dst_image, src_buffer,
	    dst_origin, region, src_offset, 0, num_events_in_wait_list,
	    event_wait_list, event));
}

/*
 * Map: the region's bytes are read into host memory (the USE_HOST_PTR
 * memory at the region, else packed memory of ours) unless the map only
 * writes; unmap writes them back when the map could have changed them.
 */
void * CL_API_CALL
vcl_clEnqueueMapImage(cl_command_queue command_queue, cl_mem image,
    cl_bool blocking_map, cl_map_flags map_flags, const size_t *origin,
    const size_t *region, size_t *image_row_pitch, size_t *image_slice_pitch,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event, cl_int *errcode_ret)
{
	struct vcl_map	*m = NULL;
	void		*ptr = NULL;
	size_t		 s1, s2, row, slice;
	cl_int		 err;
	const cl_map_flags rw = CL_MAP_READ | CL_MAP_WRITE;

	if ((err = vcl_image_check(command_queue, image, origin, region)) !=
	    CL_SUCCESS)
		goto out;
	VCL_GOTO_IF(image_row_pitch == NULL, CL_INVALID_VALUE);
	VCL_GOTO_IF(image_slice_pitch == NULL &&
	    (image->type == CL_MEM_OBJECT_IMAGE3D ||
	    image->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
	    image->type == CL_MEM_OBJECT_IMAGE2D_ARRAY), CL_INVALID_VALUE);
	VCL_GOTO_IF((map_flags & ~(rw | CL_MAP_WRITE_INVALIDATE_REGION)) ||
	    ((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) && (map_flags & rw)),
	    CL_INVALID_VALUE);
	VCL_GOTO_IF((map_flags & CL_MAP_READ) && (image->flags &
	    (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)),
	    CL_INVALID_OPERATION);
	VCL_GOTO_IF((map_flags & (CL_MAP_WRITE |
	    CL_MAP_WRITE_INVALIDATE_REGION)) && (image->flags &
	    (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)),
	    CL_INVALID_OPERATION);
	VCL_GOTO_IF((m = calloc(1, sizeof *m)) == NULL, CL_OUT_OF_HOST_MEMORY);
	if (image->host_ptr != NULL) {
		row = image->desc.image_row_pitch;
		slice = image->desc.image_slice_pitch;
		if (image->type == CL_MEM_OBJECT_IMAGE1D_ARRAY) {
			s1 = slice;
			s2 = 0;
		} else {
			s1 = row;
			s2 = slice;
		}
		ptr = (char *)image->host_ptr + origin[0] * image->elem +
		    origin[1] * s1 + origin[2] * s2;
	} else {
		VCL_GOTO_IF(posix_memalign(&ptr, 128, vcl_image_bytes(image,
		    region)) != 0, CL_OUT_OF_HOST_MEMORY);
		m->owned = 1;
		row = region[0] * image->elem;
		s1 = row;
		s2 = row * region[1];
		slice = image->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? row :
		    (image->type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
		    image->type == CL_MEM_OBJECT_IMAGE3D) ? s2 : 0;
	}
	if (map_flags & rw)
		err = vcl_image_read(command_queue, image, blocking_map, origin,
		    region, s1, s2, ptr, num_events_in_wait_list,
		    event_wait_list, event, CL_COMMAND_MAP_IMAGE);
	else
		err = vcl_mem_map_marker(command_queue, blocking_map,
		    num_events_in_wait_list, event_wait_list, event,
		    CL_COMMAND_MAP_IMAGE);
	VCL_GOTO_IF(err != CL_SUCCESS, err);
	*image_row_pitch = row;
	if (image_slice_pitch != NULL)
		*image_slice_pitch = slice;
	m->ptr = ptr;
	memcpy(m->origin, origin, sizeof m->origin);
	memcpy(m->region, region, sizeof m->region);
	m->s1 = s1;
	m->s2 = s2;
	m->offset = 0;
	m->size = vcl_image_bytes(image, region);
	m->flags = map_flags;
	pthread_mutex_lock(&image->lock);
	m->next = image->maps;
	image->maps = m;
	image->nmaps++;
	pthread_mutex_unlock(&image->lock);
	m = NULL;
out:
	if (err != CL_SUCCESS) {
		if (m != NULL && m->owned)
			free(ptr);
		ptr = NULL;
	}
	free(m);
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (ptr);
}

/* Unmap of an image's map m (taken off its list by the caller). */
cl_int
vcl_image_unmap(cl_command_queue q, cl_mem img, struct vcl_map *m, cl_uint n,
    const cl_event *list, cl_event *event)
{
	if (m->flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))
		return (vcl_image_write(q, img, m->origin, m->region, m->s1,
		    m->s2, m->ptr, n, list, event,
		    CL_COMMAND_UNMAP_MEM_OBJECT));
	return (vcl_marker_typed(q, n, list, event,
	    CL_COMMAND_UNMAP_MEM_OBJECT));
}
