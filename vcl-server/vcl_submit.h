/* vcl_submit.h - a command queue's runtime calls that may block, off the loop. */
#ifndef VCL_SUBMIT_H
#define VCL_SUBMIT_H

#include <CL/cl.h>
#include <stdint.h>

struct vcl_workers;
struct vcl_submit;

#define VCL_SUBMITTERS	8	/* submission threads, shared by all queues */

struct vcl_submit *vcl_submit_new(struct vcl_workers *, cl_command_queue);
void	vcl_submit_flush(struct vcl_submit *);
int	vcl_submit_offloop(const struct vcl_submit *);
void	vcl_submit_free(struct vcl_submit *);
uint64_t vcl_submit_moved(void);

#endif
