/*
 * vcl_bulk.h - the ways libvcl moves a transfer's bytes to or from its
 * node: through the node's shared ring (vcl_shm.c) or in band on the
 * control stream. A new way is one file defining a struct vcl_bulk plus
 * its line in vcl_bulk_all[] (vcl_bulk.c), best first.
 */
#ifndef VCL_CLIENT_BULK_H
#define VCL_CLIENT_BULK_H

#include "vcl_client.h"

struct vcl_node;

struct vcl_bulk {
	const char	*name;
	/* Can it carry size bytes on q now? (It may set itself up.) */
	int		(*usable)(struct vcl_node *, cl_command_queue, size_t);
	/* A WriteBuffer (or its chunks) with its bytes from ptr. */
	cl_int		(*write)(struct vcl_node *, Vcl__Request *,
			    Vcl__WriteBuffer *, const void *);
	/* A blocking ReadBuffer (or its chunks) on q, its bytes into ptr. */
	cl_int		(*read)(struct vcl_node *, Vcl__Request *,
			    Vcl__ReadBuffer *, void *, cl_command_queue);
	/*
	 * A non-blocking one on q: its bytes are in ptr before its event
	 * (ev: the caller's, or NULL) completes and before q->inflight,
	 * counted up here, comes down again (clFinish waits for that).
	 */
	cl_int		(*nbread)(struct vcl_node *, Vcl__Request *,
			    Vcl__ReadBuffer *, void *, cl_command_queue,
			    cl_event);
};

cl_int	vcl_bulk_inband_nbread(struct vcl_node *, Vcl__Request *,
	    Vcl__ReadBuffer *, void *, cl_command_queue, cl_event);

extern const struct vcl_bulk	vcl_bulk_shm;

const struct vcl_bulk	*vcl_bulk_pick(struct vcl_node *, cl_command_queue,
			    size_t);

#endif /* VCL_CLIENT_BULK_H */
