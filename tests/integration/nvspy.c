/* nvspy.c - tests: calls that kill NVIDIA's runtime kill PoCL's too. */

/*
 * Preloaded into a vclserver (LD_PRELOAD) by tests of what it hands the
 * runtime. NVIDIA's OpenCL runtime (H100, driver 580) took its process
 * down where PoCL answers, so a server that passed these on was never
 * seen to fail here; with this library the same calls abort as NVIDIA's
 * did:
 * - clLinkProgram given a program built with clBuildProgram among its
 *   inputs (its LLVM: "Expected<T> must be checked ... Invalid bitcode
 *   signature"), where the specification names CL_INVALID_OPERATION;
 * - clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES) of a built program with no
 *   kernel (an empty source): SIGSEGV;
 * - clEnqueueFillBuffer with no pattern: SIGSEGV.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

typedef cl_int	(*spy_info_fn)(cl_program, cl_program_info, size_t, void *,
		    size_t *);
typedef cl_int	(*spy_fill_fn)(cl_command_queue, cl_mem, const void *, size_t,
		    size_t, size_t, cl_uint, const cl_event *, cl_event *);
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
			fprintf(stderr, "nvspy: an executable among a "
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

CL_API_ENTRY cl_int CL_API_CALL
clGetProgramInfo(cl_program p, cl_program_info param, size_t size,
    void *value, size_t *ret)
{
	static spy_info_fn	real;
	size_t			nk = 0;

	if (real == NULL &&
	    (real = (spy_info_fn)dlsym(RTLD_NEXT, "clGetProgramInfo")) == NULL)
		return (CL_INVALID_OPERATION);
	if (param == CL_PROGRAM_KERNEL_NAMES && real(p, CL_PROGRAM_NUM_KERNELS,
	    sizeof nk, &nk, NULL) == CL_SUCCESS && nk == 0) {
		fprintf(stderr, "nvspy: the kernel names of a program with no "
		    "kernel: abort, as NVIDIA's runtime\n");
		abort();
	}
	return (real(p, param, size, value, ret));
}

CL_API_ENTRY cl_int CL_API_CALL
clEnqueueFillBuffer(cl_command_queue q, cl_mem mem, const void *pattern,
    size_t len, size_t off, size_t size, cl_uint nwait, const cl_event *wait,
    cl_event *ev)
{
	static spy_fill_fn	real;

	if (pattern == NULL) {
		fprintf(stderr, "nvspy: a fill with no pattern: abort, as "
		    "NVIDIA's runtime\n");
		abort();
	}
	if (real == NULL && (real = (spy_fill_fn)dlsym(RTLD_NEXT,
	    "clEnqueueFillBuffer")) == NULL)
		return (CL_INVALID_OPERATION);
	return (real(q, mem, pattern, len, off, size, nwait, wait, ev));
}
