/* vcl_info.h - clGet*Info answers, local and from a node. */
#ifndef VCL_INFO_H
#define VCL_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "vcl_client.h"

struct vcl_node;

cl_int		 vcl_info_ret(const void *, size_t, size_t, void *, size_t *);
int		 vcl_info_value_ok(cl_uint, const uint8_t *, size_t);
cl_int		 vcl_info_remote(struct vcl_node *, Vcl__GetInfo__What,
		     uint64_t, cl_uint, uint32_t, uint32_t, Vcl__KernelArg **,
		     size_t, size_t, void *, size_t *);

#endif
