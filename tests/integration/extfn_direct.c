/* extfn_direct.c - extension function addresses of libvcl, no loader. */

/*
 * Linked straight to libvcl (ocl-icd answers some names itself, so only
 * a program without the loader sees what VCL returns). The names of the
 * extension functions VCL implements give working functions; core names,
 * stubs of extensions VCL does not report and unknown names give NULL.
 */

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <stdio.h>
#include <string.h>

static int	failures;

/* One check; prints what failed. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		printf("FAIL %s\n", what);
		failures++;
	}
}

/* The same answers from both lookups, for platform p. */
static void *
lookup(cl_platform_id p, const char *name)
{
	void	*a = clGetExtensionFunctionAddressForPlatform(p, name);

	check(a == clGetExtensionFunctionAddress(name), name);
	return (a);
}

int
main(void)
{
	clIcdGetPlatformIDsKHR_fn	 icd;
	clGetKernelSubGroupInfoKHR_fn	 sg;
	cl_platform_id			 p = NULL, q = NULL;
	cl_uint				 n = 0;
	size_t				 out = 0;

	if (clGetPlatformIDs(1, &p, &n) != CL_SUCCESS || n == 0) {
		printf("FAIL no platform\n");
		return (1);
	}
	icd = (clIcdGetPlatformIDsKHR_fn)lookup(p, "clIcdGetPlatformIDsKHR");
	check(icd != NULL, "clIcdGetPlatformIDsKHR found");
	if (icd != NULL) {
		check(icd(1, &q, &n) == CL_SUCCESS && q == p,
		    "clIcdGetPlatformIDsKHR gives the platform");
	}
	sg = (clGetKernelSubGroupInfoKHR_fn)lookup(p,
	    "clGetKernelSubGroupInfoKHR");
	check(sg != NULL, "clGetKernelSubGroupInfoKHR found");
	if (sg != NULL)
		check(sg(NULL, NULL, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
		    0, NULL, sizeof out, &out, NULL) == CL_INVALID_KERNEL,
		    "clGetKernelSubGroupInfoKHR checks its kernel");
	check(lookup(p, "clGetPlatformIDs") == NULL, "core name: NULL");
	check(lookup(p, "clCreateCommandBufferKHR") == NULL,
	    "unreported extension: NULL");
	check(lookup(p, "clCreateFromGLBuffer") == NULL, "GL stub: NULL");
	check(lookup(p, "clGetGLContextInfoKHR") == NULL, "GL stub: NULL");
	check(lookup(p, "clNoSuchFunctionKHR") == NULL, "unknown: NULL");
	check(lookup(p, "KHR") == NULL, "short: NULL");
	check(clGetExtensionFunctionAddressForPlatform(p, NULL) == NULL,
	    "NULL name");
	check(clGetExtensionFunctionAddressForPlatform(NULL,
	    "clIcdGetPlatformIDsKHR") == NULL, "NULL platform");
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return (failures ? 1 : 0);
}
