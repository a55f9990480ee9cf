/* vcl_op_exec.h - handlers: kernel launches and markers. */
#ifndef VCL_OP_EXEC_H
#define VCL_OP_EXEC_H

#include <CL/cl.h>

#include "vcl.pb-c.h"

struct vcl_bulk;
struct vcl_hobj;
struct vcl_session;

void	vcl_op_ndrange(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_marker(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
cl_int	vcl_exec_arg(struct vcl_session *, struct vcl_hobj *,
	    const Vcl__KernelArg *);
void	vcl_exec_kernel_drop(struct vcl_session *, struct vcl_hobj *);

#endif
