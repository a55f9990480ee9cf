/* vcl_submit.h - a command queue's runtime calls that may block, off the loop. */
#ifndef VCL_SUBMIT_H
#define VCL_SUBMIT_H

#include <CL/cl.h>
#include <stdint.h>

struct vcl_workers;
struct vcl_submit;

#define VCL_SUBMITTERS	8	/* submission threads, shared by all queues */

/* A launch for a strand: clEnqueueNDRangeKernel's arguments, no events. */
struct vcl_launch {
	cl_kernel	 kernel;	/* stays until the session drains */
	cl_uint		 dim;
	unsigned	 has_off:1;
	unsigned	 has_lws:1;
	size_t		 off[3];
	size_t		 gws[3];
	size_t		 lws[3];
};

struct vcl_submit *vcl_submit_new(struct vcl_workers *, cl_command_queue);
void	vcl_submit_flush(struct vcl_submit *);
int	vcl_submit_offloop(const struct vcl_submit *);
int	vcl_submit_offload(struct vcl_submit *);
size_t	vcl_submit_ring_bytes(void);
int	vcl_submit_ring(struct vcl_submit *);
void	vcl_submit_launch(struct vcl_submit *, const struct vcl_launch *);
cl_int	vcl_submit_drain(struct vcl_submit *);
void	vcl_submit_timed(struct vcl_submit *, uint64_t);
void	vcl_submit_free(struct vcl_submit *);
uint64_t vcl_submit_moved(void);
uint64_t vcl_submit_launched(void);

#endif
