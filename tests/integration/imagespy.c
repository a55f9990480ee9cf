/* imagespy.c - tests: image host pitches as a runtime that follows the spec. */

/*
 * Preloaded into a vclserver (LD_PRELOAD) by tests of its image reads and
 * writes. PoCL 3.1 lays a 1D image array's images out in host memory by
 * the row pitch whatever slice pitch it is given, and takes a slice pitch
 * for a 1D or 2D image; NVIDIA's runtime (as the spec says) refuses the
 * latter with CL_INVALID_VALUE and steps a 1D array's images by the slice
 * pitch. Here clEnqueueReadImage and clEnqueueWriteImage do the same over
 * PoCL: a slice pitch for a 1D, 1D buffer or 2D image is refused, and a
 * 1D array's images are copied one by one, image k at k slice pitches
 * (the last copy carries the blocking flag and the event; the others
 * follow the first in the queue, which must be in order).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

typedef cl_int	(*spy_rd_fn)(cl_command_queue, cl_mem, cl_bool,
		    const size_t *, const size_t *, size_t, size_t, void *,
		    cl_uint, const cl_event *, cl_event *);
typedef cl_int	(*spy_wr_fn)(cl_command_queue, cl_mem, cl_bool,
		    const size_t *, const size_t *, size_t, size_t,
		    const void *, cl_uint, const cl_event *, cl_event *);

static spy_rd_fn	spy_rd;		/* the real calls */
static spy_wr_fn	spy_wr;

/* One real read (wr NULL) or write. */
static cl_int
spy_call(int wr, cl_command_queue q, cl_mem img, cl_bool blocking,
    const size_t *origin, const size_t *region, size_t row, size_t slice,
    void *ptr, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	if (wr)
		return (spy_wr(q, img, blocking, origin, region, row, slice,
		    ptr, nwait, wait, ev));
	return (spy_rd(q, img, blocking, origin, region, row, slice, ptr,
	    nwait, wait, ev));
}

/* A read or write of an image region, with the spec's host layout. */
static cl_int
spy_rw(int wr, cl_command_queue q, cl_mem img, cl_bool blocking,
    const size_t *origin, const size_t *region, size_t row, size_t slice,
    void *ptr, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	cl_mem_object_type	 type = 0;
	size_t			 elem = 0, o[3], r[3], k, step;
	cl_int			 err;

	if (spy_rd == NULL)
		spy_rd = (spy_rd_fn)dlsym(RTLD_NEXT, "clEnqueueReadImage");
	if (spy_wr == NULL)
		spy_wr = (spy_wr_fn)dlsym(RTLD_NEXT, "clEnqueueWriteImage");
	if (spy_rd == NULL || spy_wr == NULL)
		return (CL_INVALID_OPERATION);
	if (img == NULL || origin == NULL || region == NULL ||
	    clGetMemObjectInfo(img, CL_MEM_TYPE, sizeof type, &type,
	    NULL) != CL_SUCCESS || clGetImageInfo(img, CL_IMAGE_ELEMENT_SIZE,
	    sizeof elem, &elem, NULL) != CL_SUCCESS)
		return (spy_call(wr, q, img, blocking, origin, region, row,
		    slice, ptr, nwait, wait, ev));
	if ((type == CL_MEM_OBJECT_IMAGE1D ||
	    type == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
	    type == CL_MEM_OBJECT_IMAGE2D) && slice != 0)
		return (CL_INVALID_VALUE);
	if (type != CL_MEM_OBJECT_IMAGE1D_ARRAY || region[1] < 2)
		return (spy_call(wr, q, img, blocking, origin, region, row,
		    slice, ptr, nwait, wait, ev));
	step = slice != 0 ? slice : (row != 0 ? row : region[0] * elem);
	o[0] = origin[0];
	o[2] = origin[2];
	r[0] = region[0];
	r[1] = r[2] = 1;
	for (k = 0; k < region[1]; k++) {
		o[1] = origin[1] + k;
		err = spy_call(wr, q, img, k + 1 == region[1] ? blocking :
		    CL_FALSE, o, r, 0, 0, (uint8_t *)ptr + k * step,
		    k == 0 ? nwait : 0, k == 0 ? wait : NULL,
		    k + 1 == region[1] ? ev : NULL);
		if (err != CL_SUCCESS)
			return (err);
	}
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
clEnqueueReadImage(cl_command_queue q, cl_mem img, cl_bool blocking,
    const size_t *origin, const size_t *region, size_t row, size_t slice,
    void *ptr, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	return (spy_rw(0, q, img, blocking, origin, region, row, slice, ptr,
	    nwait, wait, ev));
}

cl_int CL_API_CALL
clEnqueueWriteImage(cl_command_queue q, cl_mem img, cl_bool blocking,
    const size_t *origin, const size_t *region, size_t row, size_t slice,
    const void *ptr, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	return (spy_rw(1, q, img, blocking, origin, region, row, slice,
	    (void *)ptr, nwait, wait, ev));
}
