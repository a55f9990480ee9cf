/* vcl_op_context.h - handlers: contexts, sub-devices, queues, user events. */
#ifndef VCL_OP_CONTEXT_H
#define VCL_OP_CONTEXT_H

#include "vcl.pb-c.h"

struct vcl_bulk;
struct vcl_session;

void	vcl_op_create_context(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_sub_devices(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_queue(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_flush(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_finish(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_user_event(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_set_user_event_status(struct vcl_session *,
	    const Vcl__Request *, struct vcl_bulk *);

#endif
