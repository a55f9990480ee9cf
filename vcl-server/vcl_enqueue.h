/* vcl_enqueue.h - the common part of every enqueue: commands, staging. */
#ifndef VCL_ENQUEUE_H
#define VCL_ENQUEUE_H

#include <sys/queue.h>

#include <stdatomic.h>
#include <stdint.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"
#include "vcl_buf.h"
#include "vcl_server.h"

#define VCL_WAIT_MAX	65536	/* events in one wait list */

/* An enqueue's common part: its queue, wait list and event. */
struct vcl_enq {
	struct vcl_hobj	*q;
	cl_event	*wait;
	cl_uint		 nwait;
	cl_event	 ev;
	uint64_t	 event_id;
	int		 quiet;		/* event_id: no callback, no Notify */
};

/*
 * What to do when a command completes, on the loop thread: answer a read
 * with its bytes, free a write's staging, answer a finish; then notify the
 * client's event, if it named one.
 */
enum vcl_cmd_type {
	VCL_CMD_PLAIN,
	VCL_CMD_READ,
	VCL_CMD_WRITE,
	VCL_CMD_FINISH,
	VCL_CMD_PUSH,		/* then push the read bytes to a peer */
	VCL_CMD_FORWARD,	/* then tell a peer the event's status */
	VCL_CMD_ARRIVE,		/* migrated bytes written: complete the
				   client's event (a user event here) */
	VCL_CMD_CHUNK,		/* a chunk of a large read (vcl_op_mem.c) */
	VCL_CMD_SLOT_OUT,	/* a migration's chunk read into a peer's
				   shared staging (vcl_op_peer.c) */
	VCL_CMD_SLOT_IN,	/* a chunk written from our shared staging */
	VCL_CMD_SHM,		/* a client's write or read through its
				   shared ring (vcl_shm.c): reply when done */
	VCL_CMD_HOLD,		/* what a command the runtime took uses (its
				   staging, its shared slot), kept until it
				   is done: no reply (vcl_cmd_free_after) */
};
/* A reply written off the loop (vcl_session_send_now). */
struct vcl_fast {
	uint64_t		 queue;		/* its command's */
	uint64_t		 gen;		/* deferred_sets when enqueued;
						   UINT64_MAX: not a finish */
	int			 owes;		/* a Notify will follow it */
	int			 waited;	/* it or an earlier command of its
						   queue waited on events */
	int			 uncounted;	/* off qinflight already */
	int			 partial;	/* its rest is the loop's to send */
	struct vcl_stage	*stage;		/* a read's: its charge is given
						   back as the reply goes */
	struct vcl_buf		 head;		/* its packed head */
	uint64_t		 sent;		/* bytes of it written */
};

struct vcl_cmd {
	struct vcl_done		 d;		/* must stay first */
	enum vcl_cmd_type	 type;
	cl_event		 ev;
	cl_int			 status;
	uint64_t		 event_id;
	uint64_t		 queue_id;
	int			 profiling;
	uint64_t		 seq;
	struct vcl_stage	*stage;		/* read/write bytes */
	atomic_int		 claimed;	/* callback, waiter or reaper won */
	atomic_int		 refs;		/* owner + pending watchers */
	cl_event		 wait_ev;	/* the waiter's reference */
	int			 inflight;	/* on the session's list */
	void			(*then)(struct vcl_cmd *); /* once finished,
						   before completing: hands c
						   on (a peer's push or event),
						   clears itself, completes c
						   later */
	char			*dest;		/* PUSH/FORWARD: peer address */
	uint64_t		 dest_session;
	uint64_t		 dest_key;
	uint64_t		 xid;		/* transfer or proxy id; CHUNK:
						   its index */
	void			*job;		/* CHUNK: its read; PUSH, SLOT_*:
						   its placed transfer */
	int			 fast;		/* its reply may go from the
						   completing thread */
	int			 answered;	/* ... and went (in part) */
	int			 queued;	/* counted in ndone */
	int			 handed;	/* then ran: completes later */
	struct vcl_cmd		*park_next;	/* FINISH: parked behind an
						   older command's completion
						   (vcl_cmd_park) */
	int			 inorder;	/* an event of an in-order
						   queue: its Notify parks too */
	struct vcl_fast		 fr;		/* that reply */
	uint64_t		 shm_len;	/* SHM: its bytes; xid: slot + 1 */
	int			 shm_write;	/* SHM: a write */
	struct vcl_pinwrap	*pinwrap;	/* SHM, SLOT_*: its ring's
						   wrapper, held (vcl_pin.c) */
	cl_int			 fail;		/* reported whatever its event
						   says (vcl_enq_end) */
	int			 unwatched;	/* no callback: on the tick's
						   list (vcl_cmd_sweep) */
	TAILQ_ENTRY(vcl_cmd)	 uentry;
	LIST_ENTRY(vcl_cmd)	 entry;
	LIST_ENTRY(vcl_cmd)	 qentry;	/* on s->qcmds, by its queue */
};

/* Host memory holding a transfer's bytes, charged to its session. */
struct vcl_stage {
	struct vcl_session	*s;
	uint8_t			*data;
	uint64_t		 size;
	int			 uncharged;	/* given back already */
};
struct vcl_stage *vcl_stage_new(struct vcl_session *, uint8_t *, uint64_t);
uint8_t	*vcl_stage_alloc(struct vcl_session *, struct vcl_hobj *, uint64_t,
	    cl_int, cl_int *);
struct vcl_stage *vcl_stage_get(struct vcl_session *, struct vcl_hobj *,
	    uint64_t, cl_int, cl_int *);
struct vcl_hobj *vcl_queue_context(struct vcl_session *,
	    const struct vcl_hobj *);
void	vcl_stage_free(void *);

cl_int	vcl_enq_wait_id(struct vcl_session *, uint64_t, struct vcl_hobj **);
cl_int	vcl_enq_begin(struct vcl_session *, const Vcl__Enqueue *,
	    struct vcl_enq *);
cl_int	vcl_enq_begin_queue(struct vcl_session *, const Vcl__Enqueue *,
	    struct vcl_enq *, struct vcl_hobj *);
cl_int	vcl_cmd_watch(struct vcl_session *, struct vcl_cmd *);
struct vcl_cmd *vcl_cmd_hold_new(void);
void	vcl_cmd_hold_free(struct vcl_cmd *);
struct vcl_stage *vcl_cmd_hold_stage(struct vcl_cmd *, struct vcl_session *,
	    uint8_t *, uint64_t);
void	vcl_cmd_free_after(struct vcl_session *, struct vcl_cmd *,
	    struct vcl_stage *, cl_event, uint64_t);
void	vcl_cmd_finish(struct vcl_cmd *);
void	vcl_enq_end(struct vcl_session *, struct vcl_enq *, cl_int,
	    struct vcl_cmd *);
struct vcl_cmd *vcl_cmd_new(enum vcl_cmd_type, uint64_t);
int	vcl_cmd_nomem(void);
void	vcl_cmd_reap(struct vcl_session *);
void	vcl_cmd_sweep(void);

extern uint64_t vcl_poll_us;	/* --poll-us */

#endif
