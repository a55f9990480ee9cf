/* vcl_hold.h - requests held until what they wait on exists. */
#ifndef VCL_HOLD_H
#define VCL_HOLD_H

#include <stdint.h>

#include "vcl.pb-c.h"
#include "vcl_server.h"

/* A request that may not run yet (see vcl_hold.c). */
struct vcl_held {
	Vcl__Request		*req;
	struct vcl_bulk		 bulk;
	uint64_t		 order;		/* arrival order */
	uint64_t		 charged;	/* its message, charged */
	uint64_t		 qid;		/* its queue, if that exists */
	uint64_t		 produces;	/* the event it creates */
	struct vcl_held		*blocker;	/* NULL: a user event */
	struct vcl_helds	 waiters;	/* held requests waiting on it */
	TAILQ_ENTRY(vcl_held)	 entry;		/* session order */
	TAILQ_ENTRY(vcl_held)	 wentry;	/* blocker's waiters, ublocked,
						   recheck or ready */
};

#define VCL_HOLD_MAX	65536	/* held requests before input stops */

const Vcl__Enqueue *vcl_hold_enqueue_of(const Vcl__Request *);
int	vcl_hold_init(struct vcl_session *);
void	vcl_hold_submit(struct vcl_session *, Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_hold_wake(struct vcl_session *);
int	vcl_hold_releasing(const struct vcl_session *);
int	vcl_hold_turn(struct vcl_session *);
int	vcl_hold_runs_now(struct vcl_session *, const Vcl__Request *);
void	vcl_hold_drop(struct vcl_session *);

#endif
