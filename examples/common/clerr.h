/* clerr.h - names of OpenCL error codes for the examples; includes the OpenCL header. */
#ifndef CLERR_H
#define CLERR_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifdef __APPLE__
#include <OpenCL/cl.h>
#else
#include <CL/cl.h>
#endif

const char	*clerr_name(cl_int);

#endif
