/* vcl_shm.h - a client's ring of shared slots, server side. */
#ifndef VCL_SERVER_SHM_H
#define VCL_SERVER_SHM_H

#include <stdint.h>

#include "vcl.pb-c.h"

struct vcl_bulk;
struct vcl_cmd;
struct vcl_session;
struct vcl_shm;

extern uint64_t vcl_shm_ring_max;
void	vcl_shm_free(struct vcl_shm *);
int	vcl_shm_offered(const struct vcl_session *);
void	vcl_shm_done(struct vcl_cmd *);
void	vcl_shm_release(struct vcl_cmd *);
void	vcl_op_shm_ring(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_shm_write(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_shm_read(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);

#endif
