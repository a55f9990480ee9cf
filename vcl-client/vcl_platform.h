/* vcl_platform.h - the platform, its nodes and their devices. */
#ifndef VCL_PLATFORM_H
#define VCL_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "vcl_client.h"

struct vcl_node;

struct _cl_platform_id {
	const struct _cl_icd_dispatch	*dispatch;	/* must stay first */
	struct vcl_object		 obj;
};

struct _cl_device_id {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	struct vcl_node			*node;
	uint32_t			 index;		/* on its node */
	const Vcl__DeviceInfo		*info;
	cl_device_type			 type;
	/* Sub-devices: index is VCL_SUBDEVICE_BIT | id; root's tables. */
	uint32_t			 root;		/* root's index */
	cl_device_id			 parent;	/* NULL: a root */
	cl_device_partition_property	*ptype;		/* its partition */
	size_t				 nptype;	/* entries, with the 0 */
};

#define VCL_SUBDEVICE_BIT	0x80000000u	/* as vclserver's */
#define VCL_SUBDEVICES_MAX	64		/* one partition makes */

extern struct _cl_platform_id		 vcl_platform;
extern const char			*vcl_token_path;
extern char				 vcl_node_port[8];

cl_int		 vcl_platform_init(void);
struct vcl_node	*vcl_node_get(int);
int		 vcl_nnodes(void);
void		 vcl_device_ref(cl_device_id);
void		 vcl_device_unref(cl_device_id);

#endif
