/*
 * vcl_icd.c - the ICD face of libvcl: the dispatch table, the exported cl*
 * symbols and the CL_INVALID_OPERATION stubs, all generated from vcl_api.def.
 */
#include <string.h>

#include "vcl_client.h"
#include "vcl_object.h"

/* Stubs: an unsupported call returns CL_INVALID_OPERATION. */
#define VCL_STUB_INT(ret, name, params)					\
	static ret CL_API_CALL vcl_##name params			\
	{ return (CL_INVALID_OPERATION); }
#define VCL_STUB_OBJ(ret, name, params)					\
	static ret CL_API_CALL vcl_##name params {			\
		if (errcode_ret != NULL)				\
			*errcode_ret = CL_INVALID_OPERATION;		\
		return (NULL);						\
	}
#define VCL_STUB_PTR(ret, name, params)					\
	static ret CL_API_CALL vcl_##name params { return (NULL); }
#define VCL_STUB_VOID(ret, name, params)				\
	static ret CL_API_CALL vcl_##name params { }
#define VCL_API_OPAQUE(name)
#define VCL_GEN_IMPL(kind, ret, name, params)
#define VCL_GEN_STUB(kind, ret, name, params)	VCL_STUB_##kind(ret, name, params)
#define VCL_API(kind, ret, name, params, status)			\
	VCL_GEN_##status(kind, ret, name, params)
#include "vcl_api.def"
#undef VCL_API

/* Every entry point, hand-written or stub, matches the Khronos prototype. */
#define VCL_API(kind, ret, name, params, status)			\
	_Static_assert(__builtin_types_compatible_p(			\
	    __typeof__(&vcl_##name), cl_api_##name), #name);
#include "vcl_api.def"
#undef VCL_API

/* Direct3D slots: never called on this platform, filled all the same. */
static cl_int CL_API_CALL
vcl_opaque_stub(void)
{
	return (CL_INVALID_OPERATION);
}

/* The dispatch table: every slot filled. */
const struct _cl_icd_dispatch vcl_dispatch = {
#define VCL_API(kind, ret, name, params, status)	.name = vcl_##name,
#undef VCL_API_OPAQUE
#define VCL_API_OPAQUE(name)	.name = (void *)vcl_opaque_stub,
#include "vcl_api.def"
#undef VCL_API
#undef VCL_API_OPAQUE
};

/*
 * Exported cl* symbols, for programs linked straight to libvcl.so (no
 * loader); under ocl-icd they are unused, it goes through the dispatch.
 * A stub is aliased here; a hand-written call lives in another file, so
 * the build aliases it at link time (--defsym, from this same list).
 */
#define VCL_API(kind, ret, name, params, status)			\
	VCL_ALIAS_##status(ret, name, params)
#define VCL_ALIAS_IMPL(ret, name, params)
#define VCL_ALIAS_STUB(ret, name, params)				\
	VCL_EXPORT ret CL_API_CALL name params				\
	    __attribute__((alias("vcl_" #name)));
#define VCL_API_OPAQUE(name)
#include "vcl_api.def"
#undef VCL_API
#undef VCL_API_OPAQUE

cl_int CL_API_CALL vcl_clIcdGetPlatformIDsKHR(cl_uint, cl_platform_id *,
    cl_uint *);

/* The ICD loader's entry: the platforms of this library (one: VCL). */
cl_int CL_API_CALL
vcl_clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
    cl_uint *num_platforms)
{
	return (vcl_clGetPlatformIDs(num_entries, platforms, num_platforms));
}

VCL_EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint,
    cl_platform_id *, cl_uint *) __attribute__((alias(
    "vcl_clIcdGetPlatformIDsKHR")));

/* Every hand-written entry point by name, from the one list. */
static const struct {
	const char	*name;
	void		*fn;
} vcl_impl_fns[] = {
#define VCL_API(kind, ret, name, params, status)	VCL_FN_##status(name)
#define VCL_FN_IMPL(name)	{ #name, (void *)vcl_##name },
#define VCL_FN_STUB(name)
#define VCL_API_OPAQUE(name)
#include "vcl_api.def"
#undef VCL_API
#undef VCL_API_OPAQUE
	{ "clIcdGetPlatformIDsKHR", (void *)vcl_clIcdGetPlatformIDsKHR },
};

/*
 * Extension functions by name: those of the list above named as an
 * extension's (a KHR or EXT suffix), that is cl_khr_icd's and the KHR
 * forms VCL implements (clGetKernelSubGroupInfoKHR answers as a device
 * without sub-groups does where the node's device has none). Core
 * functions, stubs and unknown names are NULL, as the specification
 * asks of a name that is no extension function.
 */
void * CL_API_CALL
vcl_clGetExtensionFunctionAddress(const char *name)
{
	size_t	i, len;

	if (name == NULL || (len = strlen(name)) < 4 ||
	    (strcmp(name + len - 3, "KHR") != 0 &&
	    strcmp(name + len - 3, "EXT") != 0))
		return (NULL);
	for (i = 0; i < sizeof vcl_impl_fns / sizeof vcl_impl_fns[0]; i++)
		if (strcmp(vcl_impl_fns[i].name, name) == 0)
			return (vcl_impl_fns[i].fn);
	return (NULL);
}

/* The same, for one platform: VCL's own. */
void * CL_API_CALL
vcl_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
    const char *name)
{
	if (!vcl_is(platform, VCL_KIND_PLATFORM))
		return (NULL);
	return (vcl_clGetExtensionFunctionAddress(name));
}
