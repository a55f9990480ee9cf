/* vcl_info.c - the one path every clGet*Info answer goes through. */
#include <string.h>

#include "vcl_conn.h"
#include "vcl_info.h"

/*
 * Return an info value of size bytes the way the spec says: the size, and
 * the value if there is room; CL_INVALID_VALUE if param_value is too small.
 */
cl_int
vcl_info_ret(const void *value, size_t size, size_t param_value_size,
    void *param_value, size_t *param_value_size_ret)
{
	if (param_value != NULL) {
		if (param_value_size < size)
			return (CL_INVALID_VALUE);
		if (size > 0)
			memcpy(param_value, value, size);
	}
	if (param_value_size_ret != NULL)
		*param_value_size_ret = size;
	return (CL_SUCCESS);
}

/*
 * Params whose values are strings, of every object kind (their numbers do
 * not overlap). A server's value for one must be NUL-terminated: the
 * application will strlen() it.
 */
static const cl_uint vcl_info_strings[] = {
	CL_PLATFORM_PROFILE, CL_PLATFORM_VERSION, CL_PLATFORM_NAME,
	CL_PLATFORM_VENDOR, CL_PLATFORM_EXTENSIONS,
	CL_DEVICE_NAME, CL_DEVICE_VENDOR, CL_DRIVER_VERSION,
	CL_DEVICE_PROFILE, CL_DEVICE_VERSION, CL_DEVICE_EXTENSIONS,
	CL_DEVICE_OPENCL_C_VERSION, CL_DEVICE_BUILT_IN_KERNELS,
	CL_DEVICE_IL_VERSION, CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED,
	CL_PROGRAM_SOURCE, CL_PROGRAM_KERNEL_NAMES, CL_PROGRAM_BUILD_OPTIONS,
	CL_PROGRAM_BUILD_LOG, CL_KERNEL_FUNCTION_NAME, CL_KERNEL_ATTRIBUTES,
	CL_KERNEL_ARG_TYPE_NAME, CL_KERNEL_ARG_NAME,
};

/* Is a server's value for param well formed (a string param: NUL-ended)? */
int
vcl_info_value_ok(cl_uint param, const uint8_t *data, size_t len)
{
	size_t	i;

	for (i = 0; i < sizeof vcl_info_strings / sizeof vcl_info_strings[0];
	    i++)
		if (vcl_info_strings[i] == param)
			return (len > 0 && data[len - 1] == '\0');
	return (1);
}

/*
 * Ask a node for an info value the client does not hold (GetInfo), and
 * return it as vcl_info_ret does. args: a kernel's __local sizes, which
 * its CL_KERNEL_LOCAL_MEM_SIZE depends on.
 */
cl_int
vcl_info_remote(struct vcl_node *n, Vcl__GetInfo__What what, uint64_t id,
    cl_uint param, uint32_t device, uint32_t arg, Vcl__KernelArg **args,
    size_t nargs, size_t param_value_size, void *param_value,
    size_t *param_value_size_ret)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__GetInfo	 gi = VCL__GET_INFO__INIT;
	Vcl__ToClient	*tc;
	cl_int		 err;

	gi.what = what;
	gi.id = id;
	gi.param = param;
	gi.has_device = 1;
	gi.device = device;
	gi.has_arg = 1;
	gi.arg = arg;
	gi.args = args;
	gi.n_args = nargs;
	req.call_case = VCL__REQUEST__CALL_GET_INFO;
	req.get_info = &gi;
	err = vcl_node_call(n, &req, NULL, 0, NULL, 0, &tc);
	if (err != CL_SUCCESS)
		;
	else if (tc->reply->info == NULL || !vcl_info_value_ok(param,
	    tc->reply->info->value.data, tc->reply->info->value.len))
		err = CL_INVALID_VALUE;
	else
		err = vcl_info_ret(tc->reply->info->value.data,
		    tc->reply->info->value.len, param_value_size, param_value,
		    param_value_size_ret);
	if (tc != NULL)
		vcl__to_client__free_unpacked(tc, NULL);
	return (err);
}
