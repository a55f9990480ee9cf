/*
 * vcl_sampler.c - samplers: created on every node of their context (a
 * kernel on any of them may take one), answered from local state.
 */
#include <stdlib.h>
#include <string.h>

#include "vcl_client.h"
#include "vcl_conn.h"
#include "vcl_context.h"
#include "vcl_info.h"
#include "vcl_log.h"
#include "vcl_object.h"
#include "vcl_platform.h"
#include "vcl_sampler.h"

_Static_assert(offsetof(struct _cl_sampler, dispatch) == 0,
    "ICD dispatch first");

/*
 * The live samplers. A sampler_t argument's value is any bytes the
 * application passes: it is looked up here before it is read as an object,
 * so bytes that are no sampler give CL_INVALID_SAMPLER, not a crash.
 */
static cl_sampler	*vcl_samplers;
static size_t		 vcl_nsamplers, vcl_csamplers;
static pthread_mutex_t	 vcl_samplers_lock = PTHREAD_MUTEX_INITIALIZER;

/* Add a new sampler to the live ones; -1 when out of memory. */
static int
vcl_sampler_add(cl_sampler smp)
{
	cl_sampler	*n;
	size_t		 cap;
	int		 rc = 0;

	pthread_mutex_lock(&vcl_samplers_lock);
	if (vcl_nsamplers == vcl_csamplers) {
		cap = vcl_csamplers ? vcl_csamplers * 2 : 16;
		if ((n = realloc(vcl_samplers, cap * sizeof *n)) == NULL)
			rc = -1;
		else {
			vcl_samplers = n;
			vcl_csamplers = cap;
		}
	}
	if (rc == 0)
		vcl_samplers[vcl_nsamplers++] = smp;
	pthread_mutex_unlock(&vcl_samplers_lock);
	return (rc);
}

/* Take a sampler off the live ones. */
static void
vcl_sampler_del(cl_sampler smp)
{
	size_t	i;

	pthread_mutex_lock(&vcl_samplers_lock);
	for (i = 0; i < vcl_nsamplers; i++)
		if (vcl_samplers[i] == smp) {
			vcl_samplers[i] = vcl_samplers[--vcl_nsamplers];
			break;
		}
	pthread_mutex_unlock(&vcl_samplers_lock);
}

/* Is p (any value) a live sampler? */
int
vcl_sampler_live(const void *p)
{
	size_t	i;
	int	found = 0;

	pthread_mutex_lock(&vcl_samplers_lock);
	for (i = 0; i < vcl_nsamplers && !found; i++)
		found = vcl_samplers[i] == p;
	pthread_mutex_unlock(&vcl_samplers_lock);
	return (found && vcl_is(p, VCL_KIND_SAMPLER));
}

/* Drop a reference; the last one releases the sampler on its nodes. */
static void
vcl_sampler_unref(cl_sampler smp)
{
	int	i;

	if (!vcl_unref(smp))
		return;
	vcl_sampler_del(smp);
	for (i = 0; i < vcl_nnodes(); i++)
		if (smp->ctx->nodes & (1ull << i))
			vcl_node_release(vcl_node_get(i),
			    VCL__KIND__KIND_SAMPLER, smp->obj.id);
	vcl_context_unref(smp->ctx);
	vcl_object_free(smp);
}

/* Does any device of the context support images? */
static int
vcl_sampler_images(cl_context ctx)
{
	cl_bool	b;
	cl_uint	i;

	for (i = 0; i < ctx->ndevices; i++)
		if (vcl_clGetDeviceInfo(ctx->devices[i], CL_DEVICE_IMAGE_SUPPORT,
		    sizeof b, &b, NULL) == CL_SUCCESS && b)
			return (1);
	return (0);
}

/*
 * Make a sampler of checked settings and create it on every node of the
 * context (asynchronously, under the client's id).
 */
static cl_sampler
vcl_sampler_make(cl_context ctx, cl_bool norm, cl_addressing_mode am,
    cl_filter_mode fm, const cl_sampler_properties *props, size_t nprops,
    cl_int *errp)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateSampler	 m = VCL__CREATE_SAMPLER__INIT;
	uint64_t		 p[6];
	cl_sampler		 smp = NULL;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(norm != CL_TRUE && norm != CL_FALSE, CL_INVALID_VALUE);
	VCL_GOTO_IF(am != CL_ADDRESS_NONE && am != CL_ADDRESS_CLAMP_TO_EDGE &&
	    am != CL_ADDRESS_CLAMP && am != CL_ADDRESS_REPEAT &&
	    am != CL_ADDRESS_MIRRORED_REPEAT, CL_INVALID_VALUE);
	VCL_GOTO_IF(fm != CL_FILTER_NEAREST && fm != CL_FILTER_LINEAR,
	    CL_INVALID_VALUE);
	VCL_GOTO_IF(!vcl_sampler_images(ctx), CL_INVALID_OPERATION);
	VCL_GOTO_IF((smp = vcl_object_new(sizeof *smp, VCL_KIND_SAMPLER)) ==
	    NULL, CL_OUT_OF_HOST_MEMORY);
	smp->ctx = ctx;
	vcl_retain(ctx);
	if (vcl_sampler_add(smp) != 0) {
		vcl_context_unref(ctx);
		vcl_object_free(smp);
		smp = NULL;
		err = CL_OUT_OF_HOST_MEMORY;
		goto out;
	}
	smp->normalized = norm;
	smp->addressing = am;
	smp->filter = fm;
	if (props != NULL) {
		memcpy(smp->props, props, nprops * sizeof *props);
		smp->nprops = nprops;
	}
	p[0] = CL_SAMPLER_NORMALIZED_COORDS;
	p[1] = norm;
	p[2] = CL_SAMPLER_ADDRESSING_MODE;
	p[3] = am;
	p[4] = CL_SAMPLER_FILTER_MODE;
	p[5] = fm;
	m.id = smp->obj.id;
	m.context = ctx->obj.id;
	m.properties = p;
	m.n_properties = 6;
	req.call_case = VCL__REQUEST__CALL_CREATE_SAMPLER;
	req.create_sampler = &m;
	err = vcl_node_send_live(ctx->nodes, &req);
out:
	if (err != CL_SUCCESS && smp != NULL) {
		vcl_sampler_unref(smp);
		smp = NULL;
	}
	*errp = err;
	return (smp);
}

cl_sampler CL_API_CALL
vcl_clCreateSampler(cl_context context, cl_bool normalized_coords,
    cl_addressing_mode addressing_mode, cl_filter_mode filter_mode,
    cl_int *errcode_ret)
{
	cl_sampler	smp = NULL;
	cl_int		err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	smp = vcl_sampler_make(context, normalized_coords, addressing_mode,
	    filter_mode, NULL, 0, &err);
out:
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (smp);
}

cl_sampler CL_API_CALL
vcl_clCreateSamplerWithProperties(cl_context context,
    const cl_sampler_properties *sampler_properties, cl_int *errcode_ret)
{
	cl_sampler	 smp = NULL;
	cl_bool		 norm = CL_TRUE;
	cl_addressing_mode am = CL_ADDRESS_CLAMP;
	cl_filter_mode	 fm = CL_FILTER_NEAREST;
	unsigned	 seen = 0, bit;
	size_t		 n = 0;
	cl_int		 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	for (; sampler_properties != NULL && sampler_properties[n] != 0;
	    n += 2) {
		VCL_GOTO_IF(n >= 6, CL_INVALID_VALUE);
		switch (sampler_properties[n]) {
		case CL_SAMPLER_NORMALIZED_COORDS:
			bit = 1;
			norm = (cl_bool)sampler_properties[n + 1];
			break;
		case CL_SAMPLER_ADDRESSING_MODE:
			bit = 2;
			am = (cl_addressing_mode)sampler_properties[n + 1];
			break;
		case CL_SAMPLER_FILTER_MODE:
			bit = 4;
			fm = (cl_filter_mode)sampler_properties[n + 1];
			break;
		default:
			err = CL_INVALID_VALUE;
			goto out;
		}
		VCL_GOTO_IF(seen & bit, CL_INVALID_VALUE);
		seen |= bit;
	}
	smp = vcl_sampler_make(context, norm, am, fm, sampler_properties,
	    sampler_properties != NULL ? n + 1 : 0, &err);
out:
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (smp);
}

cl_int CL_API_CALL
vcl_clRetainSampler(cl_sampler sampler)
{
	if (!vcl_is(sampler, VCL_KIND_SAMPLER))
		return (CL_INVALID_SAMPLER);
	vcl_retain(sampler);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clReleaseSampler(cl_sampler sampler)
{
	if (!vcl_is(sampler, VCL_KIND_SAMPLER))
		return (CL_INVALID_SAMPLER);
	vcl_sampler_unref(sampler);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clGetSamplerInfo(cl_sampler sampler, cl_sampler_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	cl_uint	u;
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(sampler, VCL_KIND_SAMPLER), CL_INVALID_SAMPLER);
	switch (param_name) {
	case CL_SAMPLER_REFERENCE_COUNT:
		u = (cl_uint)atomic_load(&sampler->obj.refs);
		err = vcl_info_ret(&u, sizeof u, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_SAMPLER_CONTEXT:
		err = vcl_info_ret(&sampler->ctx, sizeof sampler->ctx,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_SAMPLER_NORMALIZED_COORDS:
		err = vcl_info_ret(&sampler->normalized,
		    sizeof sampler->normalized, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_SAMPLER_ADDRESSING_MODE:
		err = vcl_info_ret(&sampler->addressing,
		    sizeof sampler->addressing, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_SAMPLER_FILTER_MODE:
		err = vcl_info_ret(&sampler->filter, sizeof sampler->filter,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_SAMPLER_PROPERTIES:
		err = vcl_info_ret(sampler->props, sampler->nprops *
		    sizeof sampler->props[0], param_value_size, param_value,
		    param_value_size_ret);
		break;
	default:
		err = CL_INVALID_VALUE;
		break;
	}
out:
	return (err);
}
