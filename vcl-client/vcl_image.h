/* vcl_image.h - images: their packing and their moves between nodes. */
#ifndef VCL_IMAGE_H
#define VCL_IMAGE_H

#include "vcl_client.h"

struct vcl_map;
struct vcl_node;

int		 vcl_mem_is_image(cl_mem);
cl_int		 vcl_image_on(cl_mem, struct vcl_node *);
cl_int		 vcl_image_unmap(cl_command_queue, cl_mem, struct vcl_map *,
		     cl_uint, const cl_event *, cl_event *);
void		 vcl_image_free(cl_mem);

#endif
