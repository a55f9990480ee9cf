/* vcl_object.h - object tags, references and remote ids. */
#ifndef VCL_OBJECT_H
#define VCL_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "vcl_client.h"

int		 vcl_is(const void *, enum vcl_kind);
Vcl__Kind	 vcl_kind_wire(enum vcl_kind);
void		*vcl_object_new(size_t, enum vcl_kind);
uint64_t	 vcl_id_new(void);
void		 vcl_retain(void *);
int		 vcl_unref(void *);
void		 vcl_object_free(void *);

#endif
