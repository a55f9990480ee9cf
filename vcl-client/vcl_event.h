/* vcl_event.h - events, their callbacks, and what every enqueue shares. */
#ifndef VCL_EVENT_H
#define VCL_EVENT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "vcl_client.h"

struct vcl_node;

struct vcl_ev_cb {
	void			(CL_CALLBACK *fn)(cl_event, cl_int, void *);
	void			*arg;
	cl_int			 when;
	struct vcl_ev_cb	*next;
};

struct _cl_event {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	cl_context			 ctx;
	cl_command_queue		 queue;		/* NULL: user event */
	cl_command_type			 type;
	struct vcl_node			*node;		/* NULL: user event */
	cl_int				 status;	/* under vcl_ev_lock */
	int				 remote;	/* id known to node(s) */
	int				 have_prof;
	cl_ulong			 prof[4];
	struct vcl_ev_cb		*cbs;
	struct _cl_event		*next;		/* node's waiting list */
	/*
	 * Held (vcl_event_hold): its command's bytes are still landing, so
	 * its final status waits (noted) until vcl_event_unhold; fail: a
	 * failure of the command that the server's status does not carry.
	 * Under vcl_ev_lock.
	 */
	int				 held;
	int				 noted;
	cl_int				 note_status;
	int				 note_have_prof;
	cl_ulong			 note_prof[4];
	cl_int				 fail;
};

extern pthread_mutex_t			 vcl_ev_lock;
extern pthread_cond_t			 vcl_ev_cond;

cl_event	 vcl_event_new(cl_context, cl_command_queue, cl_command_type);
void		 vcl_event_complete(cl_event, cl_int, const cl_ulong *);
void		 vcl_event_hold(cl_event);
void		 vcl_event_unhold(cl_event, cl_int);
cl_int		 vcl_event_wait(cl_uint, const cl_event *);
void		 vcl_event_unref(cl_event);
cl_int		 vcl_marker_typed(cl_command_queue, cl_uint, const cl_event *,
		     cl_event *, cl_command_type);

/* Enqueue plumbing shared by every clEnqueue*. */
struct vcl_enq {
	Vcl__Enqueue	 e;
	uint64_t	 wait_ids[16];
	size_t		 wait_cap;
	cl_event	 ev;		/* the new event, if one is needed */
	int		 internal;	/* ev is ours, not the caller's */
	struct vcl_node	*node;		/* the queue's node */
	uint64_t	 proxies[16];	/* proxy events to release after */
	size_t		 nproxies;
};

cl_int		 vcl_enq_prepare(struct vcl_enq *, cl_command_queue, cl_uint,
		     const cl_event *, cl_event *, cl_command_type, int);
cl_int		 vcl_enq_wait(struct vcl_enq *, cl_event);
void		 vcl_enq_finish(struct vcl_enq *, cl_int, cl_event *);

#endif
