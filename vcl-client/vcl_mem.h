/* vcl_mem.h - buffers, maps, and the wire side of their coherence. */
#ifndef VCL_MEM_H
#define VCL_MEM_H

#include <pthread.h>
#include <stddef.h>

#include "vcl_client.h"
#include "vcl_coherence.h"

struct vcl_enq;
struct vcl_node;
struct vcl_pending;

struct vcl_map {
	void			*ptr;
	size_t			 offset, size;
	cl_map_flags		 flags;
	int			 owned;		/* ptr is ours to free */
	size_t			 origin[3];	/* image: the region mapped, */
	size_t			 region[3];	/* and ptr's strides of its */
	size_t			 s1, s2;	/* 2nd and 3rd coordinates */
	struct vcl_map		*next;
};

struct vcl_mem_cb {
	void			(CL_CALLBACK *fn)(cl_mem, void *);
	void			*arg;
	struct vcl_mem_cb	*next;
};

struct _cl_mem {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	cl_context			 ctx;
	cl_mem_flags			 flags;
	size_t				 size;
	void				*host_ptr;	/* USE_HOST_PTR */
	int				 props;		/* made with a {0} list */
	vcl_nodeset			 nodes;		/* instantiated on */
	/*
	 * A sub-buffer: its parent (referenced) and where it starts. It has
	 * no coherence record of its own: it shares its parent's (below, in
	 * the parent), so a write through it makes the parent's other
	 * copies stale, and its nodes are updated under the parent's lock.
	 */
	cl_mem				 parent;
	size_t				 origin;
	pthread_mutex_t			 lock;		/* all below */
	struct vcl_coherence		 coh;		/* vcl_coherence.h */
	struct vcl_map			*maps;
	cl_uint				 nmaps;
	struct vcl_mem_cb		*dtors;
	/*
	 * Images (vcl_image.c); type 0 is a buffer. size is the image's
	 * packed size, what travels between nodes; init its packed initial
	 * bytes; desc keeps the application's pitches (CL_IMAGE_*_PITCH).
	 */
	cl_mem_object_type		 type;
	cl_image_format			 format;
	cl_image_desc			 desc;
	size_t				 elem;		/* bytes per pixel */
	cl_mem				 buffer;	/* 1D buffer: retained */
};

void		 vcl_mem_unref(cl_mem);
cl_int		 vcl_mem_on(cl_mem, struct vcl_node *);
cl_mem		 vcl_mem_root(cl_mem);
cl_int		 vcl_mem_map_marker(cl_command_queue, cl_bool, cl_uint,
		     const cl_event *, cl_event *, cl_command_type);

/* Coherence of buffers across nodes: the wire side. */
int		 vcl_ctx_multi(cl_context);
cl_int		 vcl_mem_use(struct vcl_enq *, cl_command_queue, cl_mem, int,
		     int);
void		 vcl_mem_written(cl_mem, struct vcl_node *, cl_event);
void		 vcl_mem_read_done(struct vcl_pending *);
void		 vcl_mem_read_done_quiet(struct vcl_pending *);
void		 vcl_peer_dest(struct vcl_node *, Vcl__PeerDest *);

#endif
