/* vcl_op_image.h - handlers: images and samplers. */
#ifndef VCL_OP_IMAGE_H
#define VCL_OP_IMAGE_H

#include <stdint.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"

struct vcl_bulk;
struct vcl_hobj;
struct vcl_session;

void	vcl_op_create_sampler(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_image(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_image_formats(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_read_image(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_write_image(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_copy_image(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_fill_image(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_copy_image_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
int	vcl_image_type_ok(uint32_t);
uint32_t vcl_image_mem_type(cl_mem);
cl_int	vcl_image_xfer(cl_command_queue, const struct vcl_hobj *, int,
	    uint64_t, uint64_t, void *, cl_uint, const cl_event *, cl_event *);

#endif
