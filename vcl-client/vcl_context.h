/* vcl_context.h - contexts and command queues. */
#ifndef VCL_CONTEXT_H
#define VCL_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "vcl_client.h"
#include "vcl_coherence.h"

struct vcl_ctx_cb {
	void			(CL_CALLBACK *fn)(cl_context, void *);
	void			*arg;
	struct vcl_ctx_cb	*next;
};

struct _cl_context {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	cl_uint				 ndevices;
	cl_device_id			*devices;
	cl_context_properties		*props;		/* copy, or NULL */
	size_t				 nprops;	/* entries incl. 0 */
	vcl_nodeset			 nodes;
	struct vcl_ctx_cb		*dtors;
	pthread_mutex_t			 lock;
};

struct _cl_command_queue {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	cl_context			 ctx;
	cl_device_id			 dev;
	cl_command_queue_properties	 props;
	cl_queue_properties		*prop_list;	/* copy, or NULL */
	size_t				 nprop_list;
	atomic_int			 inflight;	/* reads not yet in */
	atomic_int			 deferred;	/* first eventless
							   read's failure */
};

void		 vcl_context_unref(cl_context);
void		 vcl_queue_unref(cl_command_queue);
void		 vcl_queue_defer(cl_command_queue, cl_int);

#endif
