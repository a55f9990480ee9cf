/* vcl_op_program.h - handlers: programs and kernels. */
#ifndef VCL_OP_PROGRAM_H
#define VCL_OP_PROGRAM_H

#include <CL/cl.h>

#include "vcl.pb-c.h"

struct vcl_bulk;
struct vcl_session;

void	vcl_op_create_program(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_build_program(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_program_from(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_link_program(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_get_binary(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_set_spec_constant(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_kernel(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
cl_int	vcl_program_info(cl_program, cl_uint, size_t, void *, size_t *);
void	vcl_op_create_kernels(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);

#endif
