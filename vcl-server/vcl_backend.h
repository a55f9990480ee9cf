/* vcl_backend.h - the OpenCL platform and devices the server serves. */
#ifndef VCL_BACKEND_H
#define VCL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"

/* What the server serves: one platform, a subset of its devices. */
/* A served device's limits that every launch checks, asked once. */
struct vcl_devlim {
	size_t			 max_wi[3];	/* MAX_WORK_ITEM_SIZES; 0: none */
	cl_ulong		 local_mem;	/* LOCAL_MEM_SIZE */
};

struct vcl_backend {
	cl_platform_id		 platform;
	cl_device_id		*devices;
	struct vcl_devlim	*lims;		/* one per device */
	uint32_t		 ndevices;
	Vcl__Welcome		*welcome;	/* snapshot sent to clients */
	int			 is_pocl;	/* PoCL: its known faults */
	uint32_t		 platform_index; /* among the platforms listed,
						   VCL's own left out */
	uint32_t		*all_index;	/* each device's index among
						   the platform's devices */
};

int	vcl_backend_open(struct vcl_backend *, const char *, const char *,
	    char *, size_t);
void	vcl_backend_close(struct vcl_backend *);
uint64_t vcl_backend_global_mem(const struct vcl_backend *);
size_t	vcl_backend_max_alloc(const struct vcl_backend *);
cl_device_id vcl_backend_device_at(uint32_t, uint32_t);

#endif
