/* vcl_backend.c - the served platform and devices, and their info snapshot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_backend.h"
#include "vcl_log.h"

/*
 * Device params sent in the Welcome snapshot: every OpenCL 3.0 device query
 * whose value is not a handle. The client answers clGetDeviceInfo from the
 * snapshot and asks the server (GetInfo) for anything else.
 */
static const cl_device_info vcl_device_params[] = {
	CL_DEVICE_TYPE,
	CL_DEVICE_VENDOR_ID,
	CL_DEVICE_MAX_COMPUTE_UNITS,
	CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
	CL_DEVICE_MAX_WORK_GROUP_SIZE,
	CL_DEVICE_MAX_WORK_ITEM_SIZES,
	CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,
	CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
	CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,
	CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
	CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
	CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
	CL_DEVICE_MAX_CLOCK_FREQUENCY,
	CL_DEVICE_ADDRESS_BITS,
	CL_DEVICE_MAX_READ_IMAGE_ARGS,
	CL_DEVICE_MAX_WRITE_IMAGE_ARGS,
	CL_DEVICE_MAX_MEM_ALLOC_SIZE,
	CL_DEVICE_IMAGE2D_MAX_WIDTH,
	CL_DEVICE_IMAGE2D_MAX_HEIGHT,
	CL_DEVICE_IMAGE3D_MAX_WIDTH,
	CL_DEVICE_IMAGE3D_MAX_HEIGHT,
	CL_DEVICE_IMAGE3D_MAX_DEPTH,
	CL_DEVICE_IMAGE_SUPPORT,
	CL_DEVICE_MAX_PARAMETER_SIZE,
	CL_DEVICE_MAX_SAMPLERS,
	CL_DEVICE_MEM_BASE_ADDR_ALIGN,
	CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE,
	CL_DEVICE_SINGLE_FP_CONFIG,
	CL_DEVICE_GLOBAL_MEM_CACHE_TYPE,
	CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE,
	CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
	CL_DEVICE_GLOBAL_MEM_SIZE,
	CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE,
	CL_DEVICE_MAX_CONSTANT_ARGS,
	CL_DEVICE_LOCAL_MEM_TYPE,
	CL_DEVICE_LOCAL_MEM_SIZE,
	CL_DEVICE_ERROR_CORRECTION_SUPPORT,
	CL_DEVICE_PROFILING_TIMER_RESOLUTION,
	CL_DEVICE_ENDIAN_LITTLE,
	CL_DEVICE_AVAILABLE,
	CL_DEVICE_COMPILER_AVAILABLE,
	CL_DEVICE_EXECUTION_CAPABILITIES,
	CL_DEVICE_QUEUE_ON_HOST_PROPERTIES,
	CL_DEVICE_NAME,
	CL_DEVICE_VENDOR,
	CL_DEVICE_PROFILE,
	CL_DEVICE_VERSION,
	CL_DEVICE_EXTENSIONS,
	CL_DEVICE_DOUBLE_FP_CONFIG,
	CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,
	CL_DEVICE_HOST_UNIFIED_MEMORY,
	CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,
	CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
	CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,
	CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG,
	CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
	CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
	CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF,
	CL_DEVICE_OPENCL_C_VERSION,
	CL_DEVICE_LINKER_AVAILABLE,
	CL_DEVICE_BUILT_IN_KERNELS,
	CL_DEVICE_IMAGE_MAX_BUFFER_SIZE,
	CL_DEVICE_IMAGE_MAX_ARRAY_SIZE,
	CL_DEVICE_PARTITION_MAX_SUB_DEVICES,
	CL_DEVICE_PARTITION_PROPERTIES,
	CL_DEVICE_PARTITION_AFFINITY_DOMAIN,
	CL_DEVICE_PARTITION_TYPE,
	CL_DEVICE_REFERENCE_COUNT,
	CL_DEVICE_PREFERRED_INTEROP_USER_SYNC,
	CL_DEVICE_PRINTF_BUFFER_SIZE,
	CL_DEVICE_IMAGE_PITCH_ALIGNMENT,
	CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT,
	CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS,
	CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE,
	CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES,
	CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE,
	CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE,
	CL_DEVICE_MAX_ON_DEVICE_QUEUES,
	CL_DEVICE_MAX_ON_DEVICE_EVENTS,
	CL_DEVICE_SVM_CAPABILITIES,
	CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE,
	CL_DEVICE_MAX_PIPE_ARGS,
	CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS,
	CL_DEVICE_PIPE_MAX_PACKET_SIZE,
	CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT,
	CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT,
	CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT,
	CL_DEVICE_IL_VERSION,
	CL_DEVICE_MAX_NUM_SUB_GROUPS,
	CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
	CL_DEVICE_NUMERIC_VERSION,
	CL_DEVICE_EXTENSIONS_WITH_VERSION,
	CL_DEVICE_ILS_WITH_VERSION,
	CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION,
	CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
	CL_DEVICE_ATOMIC_FENCE_CAPABILITIES,
	CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT,
	CL_DEVICE_OPENCL_C_ALL_VERSIONS,
	CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
	CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
	CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT,
	CL_DEVICE_OPENCL_C_FEATURES,
	CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES,
	CL_DEVICE_PIPE_SUPPORT,
	CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED,
};

static const cl_platform_info vcl_platform_params[] = {
	CL_PLATFORM_PROFILE, CL_PLATFORM_VERSION, CL_PLATFORM_NAME,
	CL_PLATFORM_VENDOR, CL_PLATFORM_EXTENSIONS,
	CL_PLATFORM_HOST_TIMER_RESOLUTION, CL_PLATFORM_NUMERIC_VERSION,
	CL_PLATFORM_EXTENSIONS_WITH_VERSION,
};

#define NELEM(a)	(sizeof (a) / sizeof (a)[0])

/* Query one info param into an InfoValue: its bytes, or its error. */
static int
vcl_backend_query(Vcl__InfoValue *iv, cl_uint param,
    cl_int (*get)(void *, cl_uint, size_t, void *, size_t *), void *obj)
{
	size_t	size = 0;
	cl_int	err;

	vcl__info_value__init(iv);
	iv->param = param;
	err = get(obj, param, 0, NULL, &size);
	if (err == CL_SUCCESS && size > 0) {
		if ((iv->value.data = malloc(size)) == NULL)
			return (-1);
		err = get(obj, param, size, iv->value.data, NULL);
		iv->value.len = size;
	}
	if (err != CL_SUCCESS) {
		free(iv->value.data);
		iv->value.data = NULL;
		iv->value.len = 0;
		iv->has_error = 1;
		iv->error = err;
	} else
		iv->has_value = 1;
	return (0);
}

/* clGetDeviceInfo with a generic object pointer. */
static cl_int
vcl_get_device(void *o, cl_uint p, size_t n, void *v, size_t *r)
{
	return (clGetDeviceInfo(o, p, n, v, r));
}

/* clGetPlatformInfo with a generic object pointer. */
static cl_int
vcl_get_platform(void *o, cl_uint p, size_t n, void *v, size_t *r)
{
	return (clGetPlatformInfo(o, p, n, v, r));
}

/* Fill n InfoValues for params of obj. Returns 0 or -1 (out of memory). */
static int
vcl_backend_snap(Vcl__InfoValue ***out, size_t *nout, const cl_uint *params,
    size_t n, cl_int (*get)(void *, cl_uint, size_t, void *, size_t *),
    void *obj)
{
	Vcl__InfoValue	*ivs;
	size_t		 i;

	*nout = 0;
	if ((*out = calloc(n, sizeof **out)) == NULL ||
	    (ivs = calloc(n, sizeof *ivs)) == NULL)
		return (-1);
	for (i = 0; i < n; i++) {
		(*out)[i] = &ivs[i];
		if (vcl_backend_query(&ivs[i], params[i], get, obj) != 0)
			return (-1);
		(*nout)++;
	}
	return (0);
}

/* True for VCL's own platform: a server never serves it (it would loop). */
static int
vcl_backend_is_vcl(cl_platform_id p)
{
	char	name[64];

	return (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name,
	    NULL) == CL_SUCCESS && strcmp(name, "VCL") == 0);
}

/*
 * Pick a platform by index or a case-insensitive name or vendor substring,
 * among the platforms other than VCL's own (installed system-wide, it is
 * listed to this process too).
 */
static cl_platform_id
vcl_backend_pick(const char *want, uint32_t *index, char *err, size_t errlen)
{
	cl_platform_id	 all[64], ids[64];
	cl_uint		 nall = 0, n = 0, i;
	char		 name[256], *end;
	long		 idx;

	if (clGetPlatformIDs(64, all, &nall) != CL_SUCCESS || nall == 0) {
		snprintf(err, errlen, "no OpenCL platform found (is an ICD "
		    "installed? OCL_ICD_VENDORS=%s)",
		    getenv("OCL_ICD_VENDORS") ? getenv("OCL_ICD_VENDORS") :
		    "unset");
		return (NULL);
	}
	for (i = 0; i < nall && i < 64; i++)
		if (!vcl_backend_is_vcl(all[i]))
			ids[n++] = all[i];
	if (n == 0) {
		snprintf(err, errlen, "no OpenCL platform to serve but VCL's "
		    "own");
		return (NULL);
	}
	if (want == NULL)
		want = "0";
	idx = strtol(want, &end, 10);
	if (*end == '\0' && end != want) {
		if (idx < 0 || (cl_uint)idx >= n) {
			snprintf(err, errlen, "platform %ld out of range (%u "
			    "platforms)", idx, n);
			return (NULL);
		}
		*index = (uint32_t)idx;
		return (ids[idx]);
	}
	for (i = 0; i < n; i++) {
		*index = i;
		if (clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof name,
		    name, NULL) == CL_SUCCESS && strcasestr(name, want) != NULL)
			return (ids[i]);
		if (clGetPlatformInfo(ids[i], CL_PLATFORM_VENDOR, sizeof name,
		    name, NULL) == CL_SUCCESS && strcasestr(name, want) != NULL)
			return (ids[i]);
	}
	snprintf(err, errlen, "no platform named like '%s'", want);
	return (NULL);
}

/*
 * Open the platform and devices to serve and take the info snapshot.
 * Returns 0, or -1 with err naming the problem.
 */
int
vcl_backend_open(struct vcl_backend *be, const char *platform,
    const char *devices, char *err, size_t errlen)
{
	cl_device_id	*all = NULL;
	cl_uint		 nall = 0, i;
	const char	*p;
	char		*end, name[256], pname[256];
	long		 idx;
	Vcl__Welcome	*w;
	size_t		 n;

	memset(be, 0, sizeof *be);
	if ((be->platform = vcl_backend_pick(platform, &be->platform_index,
	    err, errlen)) == NULL)
		return (-1);
	if (clGetPlatformInfo(be->platform, CL_PLATFORM_NAME, sizeof pname,
	    pname, NULL) == CL_SUCCESS)
		be->is_pocl = strcmp(pname, "Portable Computing Language") == 0;
	if (clGetDeviceIDs(be->platform, CL_DEVICE_TYPE_ALL, 0, NULL, &nall) !=
	    CL_SUCCESS || nall == 0) {
		snprintf(err, errlen, "the platform has no devices");
		return (-1);
	}
	if ((all = calloc(nall, sizeof *all)) == NULL ||
	    (be->devices = calloc(nall, sizeof *be->devices)) == NULL ||
	    (be->all_index = calloc(nall, sizeof *be->all_index)) == NULL ||
	    clGetDeviceIDs(be->platform, CL_DEVICE_TYPE_ALL, nall, all,
	    NULL) != CL_SUCCESS) {
		snprintf(err, errlen, "cannot list devices");
		goto fail;
	}
	if (devices == NULL) {
		memcpy(be->devices, all, nall * sizeof *all);
		for (i = 0; i < nall; i++)
			be->all_index[i] = i;
		be->ndevices = nall;
	} else {
		for (p = devices; *p != '\0'; p = *end ? end + 1 : end) {
			idx = strtol(p, &end, 10);
			if (end == p || (*end != ',' && *end != '\0') ||
			    idx < 0 || (cl_uint)idx >= nall ||
			    be->ndevices >= nall) {
				snprintf(err, errlen, "bad --devices list '%s' "
				    "(%u devices)", devices, nall);
				goto fail;
			}
			be->all_index[be->ndevices] = (uint32_t)idx;
			be->devices[be->ndevices++] = all[idx];
		}
	}
	free(all);
	all = NULL;

	if ((be->lims = calloc(be->ndevices, sizeof *be->lims)) == NULL)
		goto oom;
	for (i = 0; i < be->ndevices; i++) {
		/* A device that answers neither checks nothing by them. */
		clGetDeviceInfo(be->devices[i], CL_DEVICE_MAX_WORK_ITEM_SIZES,
		    sizeof be->lims[i].max_wi, be->lims[i].max_wi, NULL);
		clGetDeviceInfo(be->devices[i], CL_DEVICE_LOCAL_MEM_SIZE,
		    sizeof be->lims[i].local_mem, &be->lims[i].local_mem, NULL);
	}
	if ((w = be->welcome = calloc(1, sizeof *w)) == NULL)
		goto oom;
	vcl__welcome__init(w);
	if (vcl_backend_snap(&w->platform, &w->n_platform,
	    vcl_platform_params, NELEM(vcl_platform_params), vcl_get_platform,
	    be->platform) != 0)
		goto oom;
	if ((w->devices = calloc(be->ndevices, sizeof *w->devices)) == NULL)
		goto oom;
	for (i = 0; i < be->ndevices; i++) {
		if ((w->devices[i] = calloc(1, sizeof **w->devices)) == NULL)
			goto oom;
		w->n_devices++;
		vcl__device_info__init(w->devices[i]);
		n = 0;
		if (vcl_backend_snap(&w->devices[i]->info, &n,
		    vcl_device_params, NELEM(vcl_device_params),
		    vcl_get_device, be->devices[i]) != 0)
			goto oom;
		w->devices[i]->n_info = n;
		if (clGetDeviceInfo(be->devices[i], CL_DEVICE_NAME, sizeof name,
		    name, NULL) == CL_SUCCESS)
			vcl_log_info("device %u: %s", i, name);
	}
	return (0);
oom:
	snprintf(err, errlen, "out of memory taking the device snapshot");
fail:
	free(all);
	vcl_backend_close(be);
	return (-1);
}

/* Free one snapshot array of n InfoValues (allocated as one block). */
static void
vcl_backend_free_snap(Vcl__InfoValue **ivs, size_t n)
{
	size_t	i;

	if (ivs == NULL)
		return;
	for (i = 0; i < n; i++)
		free(ivs[i]->value.data);
	free(ivs[0]);
	free(ivs);
}

/* Free what vcl_backend_open made. */
void
vcl_backend_close(struct vcl_backend *be)
{
	Vcl__Welcome	*w = be->welcome;
	size_t		 i;

	if (w != NULL) {
		vcl_backend_free_snap(w->platform, w->n_platform);
		for (i = 0; i < w->n_devices; i++) {
			vcl_backend_free_snap(w->devices[i]->info,
			    w->devices[i]->n_info);
			free(w->devices[i]);
		}
		free(w->devices);
		free(w);
	}
	free(be->devices);
	free(be->lims);
	free(be->all_index);
	memset(be, 0, sizeof *be);
}

/* Sum of the served devices' global memory, for the default session limit. */
uint64_t
vcl_backend_global_mem(const struct vcl_backend *be)
{
	cl_ulong	m;
	uint64_t	sum = 0;
	cl_uint		i;

	for (i = 0; i < be->ndevices; i++)
		if (clGetDeviceInfo(be->devices[i], CL_DEVICE_GLOBAL_MEM_SIZE,
		    sizeof m, &m, NULL) == CL_SUCCESS)
			sum += m;
	return (sum);
}

/* The largest buffer any served device allows. */
size_t
vcl_backend_max_alloc(const struct vcl_backend *be)
{
	cl_ulong	m;
	size_t		best = 0;
	cl_uint		i;

	for (i = 0; i < be->ndevices; i++)
		if (clGetDeviceInfo(be->devices[i], CL_DEVICE_MAX_MEM_ALLOC_SIZE,
		    sizeof m, &m, NULL) == CL_SUCCESS && m > best)
			best = (size_t)m;
	return (best);
}

/*
 * Device didx of platform pidx, as vcl_backend_open counts them (VCL's own
 * platform left out): how a binary check's process finds the device the
 * server names. NULL when there is none.
 */
cl_device_id
vcl_backend_device_at(uint32_t pidx, uint32_t didx)
{
	cl_platform_id	 p;
	cl_device_id	*all, d = NULL;
	cl_uint		 nall = 0;
	uint32_t	 got;
	char		 want[16], err[256];

	snprintf(want, sizeof want, "%u", pidx);
	if ((p = vcl_backend_pick(want, &got, err, sizeof err)) == NULL ||
	    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, NULL, &nall) !=
	    CL_SUCCESS || didx >= nall || (all = calloc(nall,
	    sizeof *all)) == NULL)
		return (NULL);
	if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nall, all, NULL) ==
	    CL_SUCCESS)
		d = all[didx];
	free(all);
	return (d);
}
