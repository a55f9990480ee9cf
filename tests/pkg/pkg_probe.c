/*
 * pkg_probe.c - compiled by pkg_test.sh against the installed packages:
 * finds the VCL platform, names the node of its first device (a query of
 * the shim header CL/vcl_ext.h) and round-trips a buffer through it.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <stdio.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/vcl_ext.h>

int
main(void)
{
	cl_platform_id	 plat[8];
	cl_device_id	 dev;
	cl_context	 ctx;
	cl_command_queue q;
	cl_mem		 m;
	cl_uint		 np = 0, i;
	cl_int		 err;
	char		 name[256], node[256];
	unsigned char	 in[64], out[64];

	if (clGetPlatformIDs(8, plat, &np) != CL_SUCCESS || np == 0) {
		printf("no platform\n");
		return (1);
	}
	for (i = 0; i < np; i++) {
		clGetPlatformInfo(plat[i], CL_PLATFORM_NAME, sizeof name, name,
		    NULL);
		if (strcmp(name, "VCL") == 0)
			break;
	}
	if (i == np) {
		printf("no VCL platform among %u\n", np);
		return (1);
	}
	if (clGetDeviceIDs(plat[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) !=
	    CL_SUCCESS ||
	    clGetDeviceInfo(dev, CL_DEVICE_VCL_NODE_NAME, sizeof node, node,
	    NULL) != CL_SUCCESS) {
		printf("no VCL device\n");
		return (1);
	}
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	if (err != CL_SUCCESS)
		return (printf("clCreateContext: %d\n", err), 1);
	q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
	if (err != CL_SUCCESS)
		return (printf("clCreateCommandQueue: %d\n", err), 1);
	for (i = 0; i < sizeof in; i++)
		in[i] = (unsigned char)(i * 7 + 1);
	m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    sizeof in, in, &err);
	if (err != CL_SUCCESS)
		return (printf("clCreateBuffer: %d\n", err), 1);
	memset(out, 0, sizeof out);
	err = clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL,
	    NULL);
	if (err != CL_SUCCESS || memcmp(in, out, sizeof in) != 0)
		return (printf("read back: %d\n", err), 1);
	clReleaseMemObject(m);
	clReleaseCommandQueue(q);
	clReleaseContext(ctx);
	printf("ok node %s\n", node);
	return (0);
}
