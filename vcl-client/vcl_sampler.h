/* vcl_sampler.h - samplers. */
#ifndef VCL_SAMPLER_H
#define VCL_SAMPLER_H

#include <stddef.h>

#include "vcl_client.h"

struct _cl_sampler {
	const struct _cl_icd_dispatch	*dispatch;	/* must stay first */
	struct vcl_object		 obj;
	cl_context			 ctx;
	cl_bool				 normalized;
	cl_addressing_mode		 addressing;
	cl_filter_mode			 filter;
	cl_sampler_properties		 props[7];	/* as given, with 0 */
	size_t				 nprops;	/* 0: none given */
};

int		 vcl_sampler_live(const void *);

#endif
