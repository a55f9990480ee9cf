/* linkspy.c - tests: a linker that aborts on an executable input, as NVIDIA's. */

/*
 * Preloaded into a vclserver (LD_PRELOAD) by the test of its link inputs.
 * NVIDIA's OpenCL runtime (H100, driver 580) aborted its process in
 * clLinkProgram given a program built with clBuildProgram among its inputs
 * (its LLVM: "Expected<T> must be checked ... Invalid bitcode signature"),
 * where the specification names CL_INVALID_OPERATION. PoCL answers that
 * code itself, so a server that passed such a link on was never seen to
 * fail; here clLinkProgram aborts on it as NVIDIA's does.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

typedef cl_program (*spy_link_fn)(cl_context, cl_uint, const cl_device_id *,
		    const char *, cl_uint, const cl_program *,
		    void (CL_CALLBACK *)(cl_program, void *), void *, cl_int *);

/* Whether program p is an executable for one of its devices. */
static int
spy_executable(cl_program p)
{
	cl_device_id		devs[16];
	cl_program_binary_type	t;
	cl_uint			n = 0, i;

	if (clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof n, &n,
	    NULL) != CL_SUCCESS || n == 0 || n > 16 || clGetProgramInfo(p,
	    CL_PROGRAM_DEVICES, n * sizeof devs[0], devs, NULL) != CL_SUCCESS)
		return (0);
	for (i = 0; i < n; i++)
		if (clGetProgramBuildInfo(p, devs[i], CL_PROGRAM_BINARY_TYPE,
		    sizeof t, &t, NULL) == CL_SUCCESS &&
		    t == CL_PROGRAM_BINARY_TYPE_EXECUTABLE)
			return (1);
	return (0);
}

CL_API_ENTRY cl_program CL_API_CALL
clLinkProgram(cl_context ctx, cl_uint ndev, const cl_device_id *devs,
    const char *options, cl_uint nin, const cl_program *in,
    void (CL_CALLBACK *notify)(cl_program, void *), void *arg, cl_int *err)
{
	static spy_link_fn	real;
	cl_uint			i;

	for (i = 0; in != NULL && i < nin; i++)
		if (spy_executable(in[i])) {
			fprintf(stderr, "linkspy: an executable among a "
			    "link's inputs: abort, as NVIDIA's linker\n");
			abort();
		}
	if (real == NULL &&
	    (real = (spy_link_fn)dlsym(RTLD_NEXT, "clLinkProgram")) == NULL) {
		if (err != NULL)
			*err = CL_INVALID_OPERATION;
		return (NULL);
	}
	return (real(ctx, ndev, devs, options, nin, in, notify, arg, err));
}
