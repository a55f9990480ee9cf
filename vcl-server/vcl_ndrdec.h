/* vcl_ndrdec.h - a direct decoder for NDRange requests. */
#ifndef VCL_NDRDEC_H
#define VCL_NDRDEC_H

#include <stddef.h>
#include <stdint.h>

#include "vcl.pb-c.h"

Vcl__Request	*vcl_ndrdec_unpack(ProtobufCAllocator *, size_t,
		    const uint8_t *);

#endif
