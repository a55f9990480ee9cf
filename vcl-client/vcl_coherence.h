/* vcl_coherence.h - which nodes hold a buffer's newest bytes, and what moves. */
#ifndef VCL_COHERENCE_H
#define VCL_COHERENCE_H

#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

#define VCL_MAX_NODES	64
typedef uint64_t vcl_nodeset;		/* bit i: node i */

/*
 * The coherence record of a buffer (or image) in a context over several
 * nodes: the nodes whose instance holds the newest bytes, the event that
 * wrote them and its node, and per node the migration that filled its
 * instance. Until the first write every new instance starts with the
 * initial bytes (pristine). Only decisions live here: the caller sends
 * what they call for (vcl_mem.c) and holds the buffer's lock around them.
 * The record owns one reference to each event it holds.
 */
struct vcl_coherence {
	vcl_nodeset	 valid;
	int		 pristine;
	void		*init;		/* COPY_HOST_PTR copy, or packed */
	cl_event	 last_write;
	int		 last_node;	/* last_write's node; -1: none */
	cl_event	 ready[VCL_MAX_NODES];
};

void		 vcl_coherence_init(struct vcl_coherence *);
void		 vcl_coherence_free(struct vcl_coherence *);
void		 vcl_coherence_created(struct vcl_coherence *, int);
int		 vcl_coherence_stale(const struct vcl_coherence *, int, int,
		     int);
int		 vcl_coherence_source(const struct vcl_coherence *,
		     vcl_nodeset);
size_t		 vcl_coherence_deps(const struct vcl_coherence *, int,
		     cl_event *);
void		 vcl_coherence_arrived(struct vcl_coherence *, int, cl_event);
cl_event	 vcl_coherence_ready(const struct vcl_coherence *, int);
void		 vcl_coherence_written(struct vcl_coherence *, int, cl_event);

#endif
