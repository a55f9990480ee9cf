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

/* cl_ext_device_fission's calls: the core partition, its own codes. */
static void
fission(cl_platform_id p)
{
	cl_device_partition_property_ext	 eq[3] = {
	    CL_DEVICE_PARTITION_EQUALLY_EXT, 1, CL_PROPERTIES_LIST_END_EXT };
	cl_device_partition_property_ext	 names[3] = {
	    CL_DEVICE_PARTITION_BY_NAMES_EXT, 0, CL_PROPERTIES_LIST_END_EXT };
	clCreateSubDevicesEXT_fn		 create;
	clReleaseDeviceEXT_fn			 rel;
	cl_device_id				 d, subs[64];
	cl_uint					 n = 0, i, cu = 0;

	create = (clCreateSubDevicesEXT_fn)lookup(p, "clCreateSubDevicesEXT");
	rel = (clReleaseDeviceEXT_fn)lookup(p, "clReleaseDeviceEXT");
	check(create != NULL && rel != NULL, "fission calls found");
	if (create == NULL || rel == NULL || clGetDeviceIDs(p,
	    CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS)
		return;
	check(create(d, names, 64, subs, &n) == CL_INVALID_VALUE,
	    "partition by names refused");
	clGetDeviceInfo(d, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof cu, &cu,
	    NULL);
	if (cu < 2)
		return;		/* a device that does not partition */
	check(create(d, eq, 64, subs, &n) == CL_SUCCESS && n == cu,
	    "partition equally");
	for (i = 0; i < n && i < 64; i++)
		check(rel(subs[i]) == CL_SUCCESS, "clReleaseDeviceEXT");
	eq[1] = 1000;
	check(create(d, eq, 64, subs, &n) != CL_SUCCESS,
	    "more units than the device has refused");
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
	fission(p);
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
