/*
 * vcl_shm.h - a node's ring of shared slots: a client on the server's host
 * moves the bulk of its large writes and blocking reads through it.
 */
#ifndef VCL_CLIENT_SHM_H
#define VCL_CLIENT_SHM_H

#include "vcl_client.h"

struct vcl_node;

#define VCL_SHM_MIN	(64u << 10)	/* smaller transfers go in band */

int	vcl_shm_usable(struct vcl_node *, cl_command_queue, size_t);
cl_int	vcl_shm_write(struct vcl_node *, Vcl__Request *, Vcl__WriteBuffer *,
	    const void *);
cl_int	vcl_shm_read(struct vcl_node *, Vcl__Request *, Vcl__ReadBuffer *,
	    void *);

#endif /* VCL_CLIENT_SHM_H */
