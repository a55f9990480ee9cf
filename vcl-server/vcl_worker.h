/* vcl_worker.h - worker threads for jobs that block. */
#ifndef VCL_WORKER_H
#define VCL_WORKER_H

struct vcl_workers;

struct vcl_workers *vcl_workers_new(int);
int	vcl_workers_run(struct vcl_workers *, void (*)(void *), void *);
int	vcl_workers_waiting(struct vcl_workers *);
void	vcl_workers_free(struct vcl_workers *);

#endif
