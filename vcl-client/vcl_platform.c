/*
 * vcl_platform.c - the VCL platform: node list, connections at first use,
 * and the devices of every reachable node, answered from their snapshots.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/vcl_ext.h>

#include "vcl_client.h"
#include "vcl_coherence.h"
#include "vcl_conn.h"
#include "vcl_info.h"
#include "vcl_log.h"
#include "vcl_nodes.h"
#include "vcl_object.h"
#include "vcl_platform.h"

#define VCL_PLATFORM_VERSION	"OpenCL 3.0 VCL " VCL_VERSION

struct _cl_platform_id	 vcl_platform = { &vcl_dispatch,
    { VCL_KIND_PLATFORM, 1, 0 } };

static pthread_once_t	 vcl_once = PTHREAD_ONCE_INIT;
static cl_int		 vcl_init_err;
static struct vcl_node	*vcl_nodes[VCL_MAX_NODES];
static int		 vcl_nnodes_;
static cl_device_id	 vcl_devices;
static cl_uint		 vcl_ndevices;
const char		*vcl_token_path;
char			 vcl_node_port[8];	/* of nodes named without one */

/* The node of an index; indexes are 0..vcl_nnodes()-1. */
struct vcl_node *
vcl_node_get(int i)
{
	return (vcl_nodes[i]);
}

/* How many nodes are connected. */
int
vcl_nnodes(void)
{
	return (vcl_nnodes_);
}

_Static_assert(VCL_NODES_MAX <= VCL_MAX_NODES, "a node list fits the table");

/* Connect to every configured node and collect their devices. */
static void
vcl_init(void)
{
	enum vcl_log_level	 lvl;
	struct vcl_nodes	 nl;
	const char		*env;
	struct vcl_node		*n;
	int			 i, missing = 0;
	uint32_t		 d;

	if ((env = getenv("VCL_LOG")) != NULL && vcl_log_parse(env, &lvl) == 0)
		vcl_log_init("vcl", lvl);
	else
		vcl_log_init("vcl", VCL_LOG_ERROR);
	if (vcl_nodes_load(&nl) != 0) {
		vcl_init_err = CL_OUT_OF_HOST_MEMORY;
		return;
	}
	if (nl.warn[0] != '\0')
		vcl_log_error("%s", nl.warn);
	snprintf(vcl_node_port, sizeof vcl_node_port, "%s", nl.port);
	/* Kept for the life of the process, like the connections. */
	vcl_token_path = nl.token_path;
	nl.token_path = NULL;
	for (i = 0; i < nl.n; i++) {
		if ((n = calloc(1, sizeof *n)) == NULL) {
			vcl_init_err = CL_OUT_OF_HOST_MEMORY;
			break;
		}
		if (vcl_node_connect(n, nl.addr[i]) != CL_SUCCESS) {
			missing++;
			free(n);
		} else {
			n->index = vcl_nnodes_;
			vcl_nodes[vcl_nnodes_++] = n;
			vcl_ndevices += n->ndevices;
		}
	}
	vcl_nodes_free(&nl);
	if (missing > 0 && (env = getenv("VCL_STRICT")) != NULL &&
	    strcmp(env, "1") == 0) {
		vcl_log_error("%d node(s) unreachable and VCL_STRICT=1", missing);
		vcl_init_err = CL_PLATFORM_NOT_FOUND_KHR;
		return;
	}
	if (vcl_ndevices == 0)
		return;
	if ((vcl_devices = calloc(vcl_ndevices, sizeof *vcl_devices)) == NULL) {
		vcl_init_err = CL_OUT_OF_HOST_MEMORY;
		vcl_ndevices = 0;
		return;
	}
	vcl_ndevices = 0;
	for (i = 0; i < vcl_nnodes_; i++) {
		n = vcl_nodes[i];
		for (d = 0; d < n->ndevices; d++) {
			cl_device_id	dev = &vcl_devices[vcl_ndevices++];
			size_t		k;

			dev->dispatch = &vcl_dispatch;
			dev->obj.kind = VCL_KIND_DEVICE;
			atomic_init(&dev->obj.refs, 1);
			dev->node = n;
			dev->index = d;
			dev->root = d;
			dev->info = n->welcome->welcome->devices[d];
			for (k = 0; k < dev->info->n_info; k++) {
				Vcl__InfoValue	*iv = dev->info->info[k];

				if (iv->param == CL_DEVICE_TYPE &&
				    iv->value.len == sizeof dev->type)
					memcpy(&dev->type, iv->value.data,
					    sizeof dev->type);
			}
		}
	}
}

/* Connect on first use; CL_SUCCESS or why the platform is unusable. */
cl_int
vcl_platform_init(void)
{
	pthread_once(&vcl_once, vcl_init);
	return (vcl_init_err);
}

cl_int CL_API_CALL
vcl_clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms,
    cl_uint *num_platforms)
{
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF((num_entries == 0 && platforms != NULL) ||
	    (platforms == NULL && num_platforms == NULL), CL_INVALID_VALUE);
	VCL_GOTO_IF((err = vcl_platform_init()) != CL_SUCCESS, err);
	if (platforms != NULL)
		platforms[0] = &vcl_platform;
	if (num_platforms != NULL)
		*num_platforms = 1;
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	static const cl_name_version	ext = { CL_MAKE_VERSION(1, 0, 0),
	    "cl_khr_icd" };
	const char			*s = NULL;
	cl_version			 ver = CL_MAKE_VERSION(3, 0, 0);
	cl_ulong			 res = 0;
	cl_int				 err = CL_SUCCESS;

	VCL_GOTO_IF(platform != NULL && !vcl_is(platform, VCL_KIND_PLATFORM),
	    CL_INVALID_PLATFORM);
	switch (param_name) {
	case CL_PLATFORM_PROFILE:	s = "FULL_PROFILE"; break;
	case CL_PLATFORM_VERSION:	s = VCL_PLATFORM_VERSION; break;
	case CL_PLATFORM_NAME:		s = "VCL"; break;
	case CL_PLATFORM_VENDOR:	s = "VCL project"; break;
	case CL_PLATFORM_EXTENSIONS:	s = "cl_khr_icd"; break;
	case CL_PLATFORM_ICD_SUFFIX_KHR: s = "VCL"; break;
	case CL_PLATFORM_NUMERIC_VERSION:
		err = vcl_info_ret(&ver, sizeof ver, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	case CL_PLATFORM_EXTENSIONS_WITH_VERSION:
		err = vcl_info_ret(&ext, sizeof ext, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	case CL_PLATFORM_HOST_TIMER_RESOLUTION:
		err = vcl_info_ret(&res, sizeof res, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	default:
		err = CL_INVALID_VALUE;
		goto out;
	}
	err = vcl_info_ret(s, strlen(s) + 1, param_value_size, param_value,
	    param_value_size_ret);
out:
	return (err);
}

/* True when a device matches a clGetDeviceIDs type mask. */
static int
vcl_device_matches(cl_device_id d, cl_device_type type)
{
	if (type == CL_DEVICE_TYPE_ALL)
		return (1);
	return ((d->type & type) != 0);
}

cl_int CL_API_CALL
vcl_clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type,
    cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices)
{
	const cl_device_type	 valid = CL_DEVICE_TYPE_DEFAULT |
	    CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU |
	    CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM;
	cl_uint			 i, n = 0;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(platform != NULL && !vcl_is(platform, VCL_KIND_PLATFORM),
	    CL_INVALID_PLATFORM);
	VCL_GOTO_IF(device_type != CL_DEVICE_TYPE_ALL &&
	    ((device_type & ~valid) != 0 || device_type == 0),
	    CL_INVALID_DEVICE_TYPE);
	VCL_GOTO_IF((num_entries == 0 && devices != NULL) ||
	    (devices == NULL && num_devices == NULL), CL_INVALID_VALUE);
	VCL_GOTO_IF((err = vcl_platform_init()) != CL_SUCCESS, err);
	for (i = 0; i < vcl_ndevices; i++) {
		/* DEFAULT: the first device of the platform. */
		if (device_type == CL_DEVICE_TYPE_DEFAULT ?
		    (i > 0) : !vcl_device_matches(&vcl_devices[i], device_type))
			continue;
		if (devices != NULL && n < num_entries)
			devices[n] = &vcl_devices[i];
		n++;
	}
	VCL_GOTO_IF(n == 0, CL_DEVICE_NOT_FOUND);
	if (num_devices != NULL)
		*num_devices = n;
out:
	return (err);
}

/* A device's snapshot entry for param, or NULL. */
static const Vcl__InfoValue *
vcl_device_snap(cl_device_id d, cl_device_info param)
{
	size_t	i;

	for (i = 0; i < d->info->n_info; i++)
		if (d->info->info[i]->param == param)
			return (d->info->info[i]);
	return (NULL);
}

/*
 * Device extensions that work through VCL: those of the kernel language
 * (the nodes compile) and those that only add info queries (answered from
 * the snapshot). An extension with host entry points VCL does not forward
 * (command buffers, SPIR or IL binaries, sharing with GL, sub-group
 * queries, ...) is not reported, whatever the node's device has.
 */
static const char *const vcl_device_exts[] = {
	"cl_khr_byte_addressable_store",
	"cl_khr_global_int32_base_atomics",
	"cl_khr_global_int32_extended_atomics",
	"cl_khr_local_int32_base_atomics",
	"cl_khr_local_int32_extended_atomics",
	"cl_khr_int64_base_atomics",
	"cl_khr_int64_extended_atomics",
	"cl_khr_fp16",
	"cl_khr_fp64",
	"cl_khr_3d_image_writes",
	"cl_khr_depth_images",
	"cl_khr_srgb_image_writes",
	"cl_khr_device_uuid",
	"cl_khr_pci_bus_info",
	"cl_khr_extended_versioning",
	"cl_khr_integer_dot_product",
	"cl_khr_expect_assume",
	"cl_khr_extended_bit_ops",
	"cl_khr_kernel_clock",
	"cl_khr_work_group_uniform_arithmetic",
	"cl_khr_subgroup_extended_types",
	"cl_khr_subgroup_non_uniform_vote",
	"cl_khr_subgroup_ballot",
	"cl_khr_subgroup_non_uniform_arithmetic",
	"cl_khr_subgroup_shuffle",
	"cl_khr_subgroup_shuffle_relative",
	"cl_khr_subgroup_clustered_reduce",
	"cl_khr_subgroup_rotate",
};

/* OpenCL C features that need what VCL does not forward. */
static const char *const vcl_device_nofeat[] = {
	"__opencl_c_device_enqueue",
	"__opencl_c_pipes",
	"__opencl_c_atomic_scope_all_devices",
};

/* True when name (len bytes, not terminated) is in list. */
static int
vcl_name_in(const char *name, size_t len, const char *const *list, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strlen(list[i]) == len && memcmp(list[i], name, len) == 0)
			return (1);
	return (0);
}

/* True when VCL may report a device's extension or feature by this name. */
static int
vcl_device_name_ok(cl_device_info param, const char *name, size_t len)
{
	if (param == CL_DEVICE_OPENCL_C_FEATURES)
		return (!vcl_name_in(name, len, vcl_device_nofeat,
		    sizeof vcl_device_nofeat / sizeof vcl_device_nofeat[0]));
	return (vcl_name_in(name, len, vcl_device_exts,
	    sizeof vcl_device_exts / sizeof vcl_device_exts[0]));
}

/*
 * Answer CL_DEVICE_EXTENSIONS, or a cl_name_version list (extensions, C
 * features), with only the names VCL can honour.
 */
static cl_int
vcl_device_names(const Vcl__InfoValue *iv, cl_device_info param,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	const cl_name_version	*in;
	cl_name_version		*nv;
	const char		*p, *end;
	char			*s, *o;
	size_t			 len, i, n = 0;
	cl_int			 err;

	if (param != CL_DEVICE_EXTENSIONS) {
		in = (const cl_name_version *)iv->value.data;
		if ((nv = malloc(iv->value.len + 1)) == NULL)
			return (CL_OUT_OF_HOST_MEMORY);
		for (i = 0; i < iv->value.len / sizeof *in; i++) {
			len = strnlen(in[i].name, sizeof in[i].name);
			if (vcl_device_name_ok(param, in[i].name, len))
				nv[n++] = in[i];
		}
		err = vcl_info_ret(nv, n * sizeof *nv, param_value_size,
		    param_value, param_value_size_ret);
		free(nv);
		return (err);
	}
	if ((s = malloc(iv->value.len + 1)) == NULL)
		return (CL_OUT_OF_HOST_MEMORY);
	o = s;
	p = (const char *)iv->value.data;
	end = p + strnlen(p, iv->value.len);
	while (p < end) {
		p += strspn(p, " ");
		len = strcspn(p, " ");
		if (p + len > end)
			len = end - p;
		if (len > 0 && vcl_device_name_ok(param, p, len)) {
			memcpy(o, p, len);
			o += len;
			*o++ = ' ';
		}
		p += len;
	}
	if (o > s)
		o--;		/* the last separator */
	*o = '\0';
	err = vcl_info_ret(s, (size_t)(o - s) + 1, param_value_size,
	    param_value, param_value_size_ret);
	free(s);
	return (err);
}

/*
 * Capabilities VCL does not carry over the wire, whatever the node's device
 * reports: no SVM (host pointers are not shared with remote devices), no
 * pipes, no device-side enqueue, no native kernels, and no
 * atomics of all-devices scope (devices of different nodes share no
 * memory). Returns 1 with *err set when param is one of them.
 */
static int
vcl_device_limited(cl_device_id d, cl_device_info param,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret,
    cl_int *err)
{
	const Vcl__InfoValue		*iv;
	cl_device_atomic_capabilities	 atom = 0;
	cl_device_exec_capabilities	 exec = 0;
	cl_ulong			 zero = 0;
	cl_uint				 uzero = 0;
	cl_bool				 no = CL_FALSE;

	switch (param) {
	case CL_DEVICE_SVM_CAPABILITIES:
	case CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES:
	case CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES:
		*err = vcl_info_ret(&zero, sizeof zero, param_value_size,
		    param_value, param_value_size_ret);
		return (1);
	case CL_DEVICE_MAX_ON_DEVICE_QUEUES:
	case CL_DEVICE_MAX_ON_DEVICE_EVENTS:
	case CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE:
	case CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE:
	case CL_DEVICE_MAX_PIPE_ARGS:
	case CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS:
	case CL_DEVICE_PIPE_MAX_PACKET_SIZE:
		*err = vcl_info_ret(&uzero, sizeof uzero, param_value_size,
		    param_value, param_value_size_ret);
		return (1);
	case CL_DEVICE_PIPE_SUPPORT:
		*err = vcl_info_ret(&no, sizeof no, param_value_size,
		    param_value, param_value_size_ret);
		return (1);
	case CL_DEVICE_EXECUTION_CAPABILITIES:
		/* Native kernels run host code: none on a remote device. */
		if ((iv = vcl_device_snap(d, param)) == NULL || iv->has_error ||
		    iv->value.len != sizeof exec)
			return (0);
		memcpy(&exec, iv->value.data, sizeof exec);
		exec &= ~(cl_device_exec_capabilities)CL_EXEC_NATIVE_KERNEL;
		*err = vcl_info_ret(&exec, sizeof exec, param_value_size,
		    param_value, param_value_size_ret);
		return (1);
	case CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES:
	case CL_DEVICE_ATOMIC_FENCE_CAPABILITIES:
		if ((iv = vcl_device_snap(d, param)) == NULL || iv->has_error ||
		    iv->value.len != sizeof atom)
			return (0);
		memcpy(&atom, iv->value.data, sizeof atom);
		atom &= ~(cl_device_atomic_capabilities)
		    CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
		*err = vcl_info_ret(&atom, sizeof atom, param_value_size,
		    param_value, param_value_size_ret);
		return (1);
	case CL_DEVICE_EXTENSIONS:
	case CL_DEVICE_EXTENSIONS_WITH_VERSION:
	case CL_DEVICE_OPENCL_C_FEATURES:
		if ((iv = vcl_device_snap(d, param)) == NULL || iv->has_error)
			return (0);
		*err = vcl_device_names(iv, param, param_value_size,
		    param_value, param_value_size_ret);
		return (1);
	default:
		return (0);
	}
}

cl_int CL_API_CALL
vcl_clGetDeviceInfo(cl_device_id device, cl_device_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	const Vcl__InfoValue	*iv;
	cl_platform_id		 plat = &vcl_platform;
	cl_uint			 one = 1, u;
	cl_ulong		 ul;
	const char		*s;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(device, VCL_KIND_DEVICE), CL_INVALID_DEVICE);
	switch (param_name) {
	case CL_DEVICE_PLATFORM:
		err = vcl_info_ret(&plat, sizeof plat, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	case CL_DEVICE_PARENT_DEVICE:
		err = vcl_info_ret(&device->parent, sizeof device->parent,
		    param_value_size, param_value, param_value_size_ret);
		goto out;
	case CL_DEVICE_REFERENCE_COUNT:
		/* Root devices: always 1, as for a runtime's own. */
		if (device->parent != NULL)
			one = (cl_uint)atomic_load(&device->obj.refs);
		err = vcl_info_ret(&one, sizeof one, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	case CL_DEVICE_PARTITION_TYPE:
		if (device->parent == NULL)
			break;
		err = vcl_info_ret(device->ptype, device->nptype *
		    sizeof *device->ptype, param_value_size, param_value,
		    param_value_size_ret);
		goto out;
	case CL_DEVICE_VCL_NODE_NAME:
	case CL_DEVICE_VCL_NODE_ADDRESS:
		s = param_name == CL_DEVICE_VCL_NODE_NAME ? device->node->name :
		    device->node->addr;
		err = vcl_info_ret(s, strlen(s) + 1, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	case CL_DEVICE_VCL_NODE_TRANSPORT:
		s = device->node->transport != NULL ? device->node->transport :
		    "tcp";
		err = vcl_info_ret(s, strlen(s) + 1, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	case CL_DEVICE_VCL_NODE_PEER_LINKS:
		err = vcl_node_peer_links(device->node, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	case CL_DEVICE_VCL_NODE_INDEX:
	case CL_DEVICE_VCL_NODE_DEVICE:
		u = param_name == CL_DEVICE_VCL_NODE_INDEX ?
		    (cl_uint)device->node->index : device->index;
		err = vcl_info_ret(&u, sizeof u, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	case CL_DEVICE_VCL_NODE_BYTES_SENT:
	case CL_DEVICE_VCL_NODE_BYTES_RECEIVED:
		ul = param_name == CL_DEVICE_VCL_NODE_BYTES_SENT ?
		    device->node->bytes_out : device->node->bytes_in;
		err = vcl_info_ret(&ul, sizeof ul, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	case CL_DEVICE_AVAILABLE:
		/* A device whose node was lost is no longer available. */
		if (vcl_node_status(device->node) == CL_SUCCESS)
			break;
		u = CL_FALSE;
		err = vcl_info_ret(&u, sizeof u, param_value_size,
		    param_value, param_value_size_ret);
		goto out;
	default:
		break;
	}
	if (vcl_device_limited(device, param_name, param_value_size,
	    param_value, param_value_size_ret, &err))
		goto out;
	/* A sub-device's own values (compute units...) are the node's. */
	if (device->parent == NULL &&
	    (iv = vcl_device_snap(device, param_name)) != NULL) {
		VCL_GOTO_IF(iv->has_error, iv->error);
		err = vcl_info_ret(iv->value.data, iv->value.len,
		    param_value_size, param_value, param_value_size_ret);
		goto out;
	}
	/* Not in the snapshot (a vendor query): ask the node. */
	err = vcl_info_remote(device->node, VCL__GET_INFO__WHAT__DEVICE,
	    device->index, param_name, 0, 0, NULL, 0,
	    param_value_size, param_value,
	    param_value_size_ret);
out:
	return (err);
}

/* Take a reference on a sub-device; root devices live as long as VCL. */
void
vcl_device_ref(cl_device_id d)
{
	if (d->parent != NULL)
		vcl_retain(d);
}

/* Drop a reference; the last one of a sub-device releases it remotely. */
void
vcl_device_unref(cl_device_id d)
{
	cl_device_id	parent = d->parent;

	if (parent == NULL || !vcl_unref(d))
		return;
	vcl_node_release(d->node, vcl_kind_wire(d->obj.kind), d->obj.id);
	free(d->ptype);
	vcl_object_free(d);
	vcl_device_unref(parent);
}

cl_int CL_API_CALL
vcl_clRetainDevice(cl_device_id device)
{
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(device, VCL_KIND_DEVICE), CL_INVALID_DEVICE);
	vcl_device_ref(device);
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clReleaseDevice(cl_device_id device)
{
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(device, VCL_KIND_DEVICE), CL_INVALID_DEVICE);
	vcl_device_unref(device);
out:
	return (err);
}

/* Compilers live on the nodes; nothing to unload here. */
cl_int CL_API_CALL
vcl_clUnloadCompiler(void)
{
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clUnloadPlatformCompiler(cl_platform_id platform)
{
	return (vcl_is(platform, VCL_KIND_PLATFORM) ? CL_SUCCESS :
	    CL_INVALID_PLATFORM);
}

/*
 * The length of a partition property list up to (not with) its final 0:
 * a scheme and its value, or by counts their list and its LIST_END. 0
 * with *err set when it is not one the node may be asked.
 */
static size_t
vcl_partition_len(const cl_device_partition_property *p, cl_int *err)
{
	size_t	n;

	*err = CL_INVALID_VALUE;
	switch (p[0]) {
	case CL_DEVICE_PARTITION_EQUALLY:
	case CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN:
		if (p[2] != 0)
			return (0);
		n = 2;
		break;
	case CL_DEVICE_PARTITION_BY_COUNTS:
		for (n = 1; p[n] != CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
		    n++)
			if (n > VCL_SUBDEVICES_MAX) {
				*err = CL_INVALID_DEVICE_PARTITION_COUNT;
				return (0);
			}
		if (p[++n] != 0)
			return (0);
		break;
	default:
		return (0);
	}
	*err = CL_SUCCESS;
	return (n);
}

/* Ask in's node to partition it: the count, or (ids) the sub-devices. */
static cl_int
vcl_partition_call(cl_device_id in, int64_t *p, size_t np, uint64_t *ids,
    size_t nids, cl_uint *n)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateSubDevices	 m = VCL__CREATE_SUB_DEVICES__INIT;
	Vcl__ToClient		*tc = NULL;
	cl_int			 err;

	m.device = in->index;
	m.properties = p;
	m.n_properties = np;
	m.ids = ids;
	m.n_ids = nids;
	req.call_case = VCL__REQUEST__CALL_CREATE_SUB_DEVICES;
	req.create_sub_devices = &m;
	err = vcl_node_call(in->node, &req, NULL, 0, NULL, 0, &tc);
	if (err == CL_SUCCESS) {
		if (tc->reply->sub_devices == NULL)
			err = CL_INVALID_VALUE;
		else
			*n = tc->reply->sub_devices->count;
	}
	if (tc != NULL)
		vcl__to_client__free_unpacked(tc, NULL);
	return (err);
}

/*
 * Sub-devices: the node partitions its device. First the count (the
 * node's runtime answers, errors included), then with one fresh id per
 * sub-device the partition itself; each sub-device is a device of the
 * same node, named there by VCL_SUBDEVICE_BIT | its id, holding a
 * reference on its parent.
 */
cl_int CL_API_CALL
vcl_clCreateSubDevices(cl_device_id in_device,
    const cl_device_partition_property *properties, cl_uint num_devices,
    cl_device_id *out_devices, cl_uint *num_devices_ret)
{
	cl_device_id	 subs[VCL_SUBDEVICES_MAX];
	int64_t		 p[VCL_SUBDEVICES_MAX + 3];
	uint64_t	 ids[VCL_SUBDEVICES_MAX];
	cl_uint		 n = 0, got = 0, i, made = 0;
	size_t		 np = 0, k;
	cl_int		 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(in_device, VCL_KIND_DEVICE), CL_INVALID_DEVICE);
	VCL_GOTO_IF(properties == NULL, CL_INVALID_VALUE);
	np = vcl_partition_len(properties, &err);
	VCL_GOTO_IF(err != CL_SUCCESS, err);
	for (k = 0; k < np; k++)
		p[k] = (int64_t)properties[k];
	err = vcl_partition_call(in_device, p, np, NULL, 0, &n);
	VCL_GOTO_IF(err != CL_SUCCESS, err);
	VCL_GOTO_IF(n == 0, CL_DEVICE_PARTITION_FAILED);
	VCL_GOTO_IF(n > VCL_SUBDEVICES_MAX, CL_OUT_OF_RESOURCES);
	if (out_devices == NULL)
		goto out;
	VCL_GOTO_IF(num_devices < n, CL_INVALID_VALUE);
	for (made = 0; made < n; made++) {
		if ((subs[made] = vcl_object_new(sizeof *subs[made],
		    VCL_KIND_DEVICE)) == NULL || (subs[made]->ptype =
		    calloc(np + 1, sizeof *subs[made]->ptype)) == NULL) {
			err = CL_OUT_OF_HOST_MEMORY;
			if (subs[made] != NULL)
				vcl_object_free(subs[made]);
			goto out;
		}
		ids[made] = subs[made]->obj.id;
		VCL_GOTO_IF(ids[made] >= VCL_SUBDEVICE_BIT,
		    CL_OUT_OF_RESOURCES);
	}
	err = vcl_partition_call(in_device, p, np, ids, n, &got);
	VCL_GOTO_IF(err == CL_SUCCESS && got != n, CL_DEVICE_PARTITION_FAILED);
	VCL_GOTO_IF(err != CL_SUCCESS, err);
	for (i = 0; i < n; i++) {
		cl_device_id	d = subs[i];

		d->node = in_device->node;
		d->index = VCL_SUBDEVICE_BIT | (uint32_t)d->obj.id;
		d->root = in_device->root;
		d->info = in_device->info;
		d->type = in_device->type;
		memcpy(d->ptype, properties, np * sizeof *d->ptype);
		d->nptype = np + 1;
		d->parent = in_device;
		vcl_device_ref(in_device);
		out_devices[i] = d;
	}
	made = 0;
out:
	for (i = 0; i < made; i++) {
		free(subs[i]->ptype);
		vcl_object_free(subs[i]);
	}
	if (err == CL_SUCCESS && num_devices_ret != NULL)
		*num_devices_ret = n;
	return (err);
}

/*
 * cl_ext_device_fission, the 1.1 form: its schemes and codes mapped to
 * the core call's. Partition by names, and affinity domains (numbered
 * otherwise than the core ones), are CL_INVALID_VALUE.
 */
cl_int CL_API_CALL
vcl_clCreateSubDevicesEXT(cl_device_id in_device,
    const cl_device_partition_property_ext *properties, cl_uint num_devices,
    cl_device_id *out_devices, cl_uint *num_devices_ret)
{
	cl_device_partition_property	 p[VCL_SUBDEVICES_MAX + 3];
	size_t				 n = 0;
	cl_int				 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(in_device, VCL_KIND_DEVICE), CL_INVALID_DEVICE);
	VCL_GOTO_IF(properties == NULL, CL_INVALID_VALUE);
	switch (properties[0]) {
	case CL_DEVICE_PARTITION_EQUALLY_EXT:
		p[n++] = CL_DEVICE_PARTITION_EQUALLY;
		p[n] = (cl_device_partition_property)properties[n];
		n++;
		break;
	case CL_DEVICE_PARTITION_BY_COUNTS_EXT:
		p[n++] = CL_DEVICE_PARTITION_BY_COUNTS;
		for (; properties[n] != CL_PARTITION_BY_COUNTS_LIST_END_EXT;
		    n++) {
			VCL_GOTO_IF(n > VCL_SUBDEVICES_MAX,
			    CL_INVALID_PARTITION_COUNT_EXT);
			p[n] = (cl_device_partition_property)properties[n];
		}
		p[n++] = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
		break;
	default:
		err = CL_INVALID_VALUE;
		goto out;
	}
	VCL_GOTO_IF(properties[n] != CL_PROPERTIES_LIST_END_EXT,
	    CL_INVALID_VALUE);
	p[n] = 0;
	err = vcl_clCreateSubDevices(in_device, p, num_devices, out_devices,
	    num_devices_ret);
	if (err == CL_DEVICE_PARTITION_FAILED)
		err = CL_DEVICE_PARTITION_FAILED_EXT;
	else if (err == CL_INVALID_DEVICE_PARTITION_COUNT)
		err = CL_INVALID_PARTITION_COUNT_EXT;
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clRetainDeviceEXT(cl_device_id device)
{
	return (vcl_clRetainDevice(device));
}

cl_int CL_API_CALL
vcl_clReleaseDeviceEXT(cl_device_id device)
{
	return (vcl_clReleaseDevice(device));
}
