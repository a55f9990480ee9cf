/* vcl_enqueue.c - what every enqueue shares: wait lists, events, completion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vcl_enqueue.h"
#include "vcl_log.h"
#include "vcl_op_mem.h"
#include "vcl_op_peer.h"
#include "vcl_pin.h"
#include "vcl_pool.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_shm.h"
#include "vcl_worker.h"

/*
 * Commands whose callback the runtime refused (vcl_cmd_watch), each looked
 * at every tick until its event is done (vcl_cmd_sweep). Loop thread only.
 */
static TAILQ_HEAD(, vcl_cmd) vcl_cmd_unwatched =
    TAILQ_HEAD_INITIALIZER(vcl_cmd_unwatched);

/*
 * c's status as it is told: a failure its enqueue had (c->fail: a shared
 * transfer the runtime took whose event could not be given) over its
 * event's, and CL_SUCCESS for a completed one.
 */
static cl_int
vcl_cmd_status(struct vcl_cmd *c)
{
	if (c->fail != CL_SUCCESS)
		c->status = c->fail;
	return (c->status < 0 ? c->status : CL_SUCCESS);
}

/*
 * Testing (VCL_TEST_CMD_NOMEM=1): the records a command's failure paths
 * would allocate once the runtime may have taken it (a write's record, a
 * chunk's, a hold's) are refused, as when out of memory. Returns 1 then.
 */
int
vcl_cmd_nomem(void)
{
	static long	fault = -2;

	if (fault == -2)
		fault = vcl_server_test_num("VCL_TEST_CMD_NOMEM");
	return (fault == 1);
}

/* A command completion record of the given type for request seq. */
struct vcl_cmd *
vcl_cmd_new(enum vcl_cmd_type type, uint64_t seq)
{
	struct vcl_cmd	*c;

	if ((c = calloc(1, sizeof *c)) == NULL)
		return (NULL);
	c->type = type;
	c->seq = seq;
	atomic_init(&c->refs, 1);	/* the owner's: dropped at completion */
	return (c);
}

/*
 * Drop a reference to a command. The owner's goes at completion; each
 * watcher of its event (callback, waiter) holds one until it has fired,
 * since the loser of the race to complete it may fire later.
 */
static void
vcl_cmd_put(struct vcl_cmd *c)
{
	if (atomic_fetch_sub(&c->refs, 1) == 1)
		free(c);
}

/*
 * Wrap charged bytes (data, size) so they can outlive the request and even
 * the connection; the stage holds a session reference.
 */
struct vcl_stage *
vcl_stage_new(struct vcl_session *s, uint8_t *data, uint64_t size)
{
	struct vcl_stage	*st;

	if ((st = malloc(sizeof *st)) == NULL)
		return (NULL);
	st->s = s;
	st->data = data;
	st->size = size;
	st->uncharged = 0;
	vcl_session_ref(s);
	return (st);
}

/* The context object of a queue of the session; NULL if gone or failed. */
struct vcl_hobj *
vcl_queue_context(struct vcl_session *s, const struct vcl_hobj *q)
{
	struct vcl_hobj	*ctx;

	if (q == NULL || (ctx = vcl_handle_get(&s->handles, q->xctx,
	    VCL_KIND_CONTEXT)) == NULL || ctx->error != CL_SUCCESS ||
	    ctx->u.ctx == NULL)
		return (NULL);
	return (ctx);
}

/*
 * Staging for n bytes moved to or from a device of context ctx (NULL when
 * unknown): pinned memory of the context when it has some to spare
 * (vcl_pin.c), else pooled pageable memory; vcl_pool_put frees either.
 * The session is charged n. NULL: *err is over (past the session's
 * limit) or CL_OUT_OF_HOST_MEMORY, and nothing is charged.
 */
uint8_t *
vcl_stage_alloc(struct vcl_session *s, struct vcl_hobj *ctx, uint64_t n,
    cl_int over, cl_int *err)
{
	uint8_t	*data = NULL;

	if (vcl_session_charge(s, n) != 0) {
		*err = over;
		return (NULL);
	}
	if (ctx != NULL && n <= SIZE_MAX)
		data = vcl_pin_get(&ctx->pins, ctx->u.ctx, (size_t)n);
	if (data == NULL && (data = vcl_pool_get(n)) == NULL) {
		vcl_session_uncharge(s, n);
		*err = CL_OUT_OF_HOST_MEMORY;
	}
	return (data);
}

/* vcl_stage_alloc's bytes, wrapped in a stage (vcl_stage_new). */
struct vcl_stage *
vcl_stage_get(struct vcl_session *s, struct vcl_hobj *ctx, uint64_t n,
    cl_int over, cl_int *err)
{
	struct vcl_stage	*st;
	uint8_t			*data;

	if ((data = vcl_stage_alloc(s, ctx, n, over, err)) == NULL)
		return (NULL);
	if ((st = vcl_stage_new(s, data, n)) == NULL) {
		vcl_pool_put(data, n);
		vcl_session_uncharge(s, n);
		*err = CL_OUT_OF_HOST_MEMORY;
	}
	return (st);
}

/* Free a stage's bytes and give their charge back. */
void
vcl_stage_free(void *arg)
{
	struct vcl_stage	*st = arg;

	if (st == NULL)
		return;
	vcl_pool_put(st->data, st->size);
	if (!st->uncharged)
		vcl_session_uncharge(st->s, st->size);
	vcl_session_unref(st->s);
	free(st);
}

#define VCL_SETTLE_MAX	64	/* commands a finish completes before it, or
				   a reap completes at once */
#define VCL_PARK_WALK	64	/* older commands of its queue's slot an
				   event's completion looks at */

static void	vcl_cmd_settle_queue(struct vcl_cmd *);

/* Does c answer the client (vcl_cmd_complete), not handed on? */
static int
vcl_cmd_answers(const struct vcl_cmd *c)
{
	if (c->then != NULL || c->answered)
		return (0);
	switch (c->type) {
	case VCL_CMD_FINISH:
	case VCL_CMD_READ:
		return (1);
	case VCL_CMD_SHM:
		return (!c->shm_write);
	case VCL_CMD_CHUNK:
		return (c->job != NULL);
	default:
		return (0);
	}
}

/*
 * Does c's completion tell the client that an event of an in-order queue
 * completed? Then every older command of its queue is done too, and the
 * client takes their replies and Notify as come: c's waits for them.
 */
static int
vcl_cmd_notifies(const struct vcl_cmd *c)
{
	return (c->then == NULL && c->event_id != 0 && c->inorder &&
	    c->inflight);
}
static int	vcl_cmd_park(struct vcl_cmd *);
static int	vcl_cmd_park_event(struct vcl_cmd *);
static void	vcl_cmd_unpark(struct vcl_session *, uint64_t);

/*
 * Finish a command on the loop thread: answer what the client waits for
 * (a read's bytes, a finish), then notify its event if it named one, then
 * free what the command held. Consumes c and its session reference.
 */
static void
vcl_cmd_complete(struct vcl_cmd *c)
{
	struct vcl_session	*s = c->d.s;
	struct vcl_hobj		*q;
	Vcl__ToClient		 tc = VCL__TO_CLIENT__INIT;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	cl_int			 st;
	uint64_t		 qid;
	int			 parked;

	/* Claimed: no tick need look at its event any more. */
	if (c->unwatched) {
		TAILQ_REMOVE(&vcl_cmd_unwatched, c, uentry);
		c->unwatched = 0;
	}
	st = vcl_cmd_status(c);
	/*
	 * A reply the client waits on (a finish's, a read's, a ring read
	 * chunk's, a part of a read sent in chunks) goes only after what ran
	 * before it on its queue was told: completed now if the runtime is
	 * done with it, waited for if its completion is on the way. Nothing
	 * of c was done yet.
	 */
	if (!s->dead && vcl_cmd_answers(c)) {
		vcl_cmd_settle_queue(c);
		if (!s->dead && vcl_cmd_park(c))
			return;		/* back once they are told */
	} else if (!s->dead && vcl_cmd_notifies(c) && vcl_cmd_park_event(c))
		return;			/* the same for its Notify */
	if (c->type == VCL_CMD_CHUNK)
		vcl_mem_chunk_done(c);	/* its read answers, whatever s is */
	if (c->type == VCL_CMD_SLOT_OUT || c->type == VCL_CMD_SLOT_IN)
		vcl_peer_slot_done(c);	/* its slot goes back, whatever s is */
	if (c->type == VCL_CMD_SHM || c->type == VCL_CMD_HOLD)
		vcl_shm_done(c);	/* its slot is the client's again */
	/* Counted as queued bytes are: its bulk went out, or began to. */
	if (c->answered && c->type == VCL_CMD_READ && st == CL_SUCCESS)
		s->srv->bytes_out += c->stage->size;
	if (c->then != NULL && !s->dead) {
		/* A reply parked on c waits no more (a parked one holds s). */
		qid = c->queue_id;
		parked = s->parked != NULL;
		c->handed = 1;
		c->then(c);		/* comes back here once done */
		if (parked)
			vcl_cmd_unpark(s, qid);
		return;
	}
	if (!s->dead) {
		switch (c->type) {
		case VCL_CMD_READ:
			if (c->answered && st == CL_SUCCESS) {
				vcl_session_send_rest(s, &c->fr.head,
				    c->fr.sent, c->stage->data,
				    c->stage->size, vcl_stage_free, c->stage);
				c->stage = NULL;
				break;
			} else if (c->answered) {
				vcl_session_send_rest(s, &c->fr.head,
				    c->fr.sent, NULL, 0, NULL, NULL);
				break;
			}
			r.seq = c->seq;
			r.status = st;
			tc.reply = &r;
			/* The bytes are sent from the stage, freed once sent. */
			if (st == CL_SUCCESS) {
				vcl_session_send(s, &tc, c->stage->data,
				    c->stage->size, vcl_stage_free, c->stage);
				c->stage = NULL;
			} else
				vcl_session_send(s, &tc, NULL, 0, NULL, NULL);
			break;
		case VCL_CMD_SHM:
			if (c->answered) {
				vcl_session_send_rest(s, &c->fr.head,
				    c->fr.sent, NULL, 0, NULL, NULL);
				break;
			}
			vcl_session_reply(s, c->seq, st, NULL);
			break;
		case VCL_CMD_ARRIVE:
			/* Only a write that never ran leaves it unset. */
			q = vcl_handle_held(&s->handles, c->xid, VCL_KIND_EVENT);
			if (q != NULL && q->user && !q->user_set)
				vcl_peer_settle(s, q, st);
			break;
		case VCL_CMD_FINISH:
			if (c->answered) {
				vcl_session_send_rest(s, &c->fr.head,
				    c->fr.sent, NULL, 0, NULL, NULL);
				break;
			}
			/* Report the first failure no event could carry. */
			q = vcl_handle_held(&s->handles, c->queue_id,
			    VCL_KIND_QUEUE);
			if (st == CL_SUCCESS && q != NULL) {
				st = q->deferred;
				q->deferred = CL_SUCCESS;
			}
			vcl_session_reply(s, c->seq, st, NULL);
			break;
		default:
			break;
		}
		if (c->event_id != 0)
			vcl_session_notify(s, c->event_id, c->status < 0 ?
			    c->status : CL_COMPLETE, c->ev, c->profiling);
		else if (st < 0 && c->type != VCL_CMD_READ &&
		    c->type != VCL_CMD_FINISH && c->type != VCL_CMD_CHUNK &&
		    (c->type != VCL_CMD_SHM || c->shm_write) &&
		    (q = vcl_handle_held(&s->handles, c->queue_id,
		    VCL_KIND_QUEUE)) != NULL && q->deferred == CL_SUCCESS) {
			q->deferred = st;	/* the next Finish reports it */
			atomic_fetch_add(&s->deferred_sets, 1);
		}
	}
	if (c->type == VCL_CMD_PUSH && c->job != NULL)
		vcl_peer_place_drop(c);	/* never started: its session went */
	vcl_stage_free(c->stage);
	c->stage = NULL;
	vcl_buf_free(&c->fr.head);
	/* Only now, its frames queued: see vcl_session_send_now. */
	if (c->inflight) {
		LIST_REMOVE(c, entry);
		LIST_REMOVE(c, qentry);
		c->inflight = 0;
		if (!c->fr.uncounted)
			atomic_fetch_sub(&s->qinflight[VCL_QSLOT(c->queue_id)],
			    1);
	}
	if (c->queued) {
		c->queued = 0;
		atomic_fetch_sub(&s->ndone, 1);
	}
	if (s->parked != NULL)
		vcl_cmd_unpark(s, c->queue_id);
	vcl_session_unref(s);
	free(c->dest);
	c->dest = NULL;
	if (c->ev != NULL)
		clReleaseEvent(c->ev);
	c->ev = NULL;
	vcl_cmd_put(c);
}

/*
 * Complete the commands the runtime failed without calling their callback.
 * PoCL 3.1 marks a command failed when an event it waits for fails (a user
 * event set to an error, say) but never calls its CL_COMPLETE callback, so
 * its client would wait forever. Runs after anything that can fail events.
 * The callback's reference keeps the record should it come after all.
 */
void
vcl_cmd_reap(struct vcl_session *s)
{
	struct vcl_cmd	*c, *next, *done[VCL_SETTLE_MAX];
	cl_int		 st;
	int		 expect, n = 0;

	/*
	 * Claimed first, completed after: a completion may complete others
	 * (vcl_cmd_settle_queue) and change the list. Oldest first; past
	 * VCL_SETTLE_MAX the next reap takes the rest.
	 */
	for (c = LIST_FIRST(&s->inflight); c != NULL; c = next) {
		next = LIST_NEXT(c, entry);
		if (n == VCL_SETTLE_MAX)
			break;
		if (clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
		    sizeof st, &st, NULL) != CL_SUCCESS || st >= 0)
			continue;
		expect = 0;
		if (!atomic_compare_exchange_strong(&c->claimed, &expect, 1))
			continue;	/* its callback is on the way */
		c->status = st;
		done[n++] = c;
	}
	while (n > 0)
		vcl_cmd_complete(done[--n]);
}

/*
 * Every tick: complete the commands whose callback the runtime refused
 * once their event is done (complete or failed), whatever their session
 * (one closed meanwhile is off the server's list, not off this one).
 * Claimed first, completed after, oldest first (the list is in the order
 * they were watched); past VCL_SETTLE_MAX the next tick takes the rest.
 * Only looks at events: never waits on one.
 */
void
vcl_cmd_sweep(void)
{
	struct vcl_cmd	*c, *next, *done[VCL_SETTLE_MAX];
	cl_int		 st;
	int		 expect, i, n = 0;

	for (c = TAILQ_FIRST(&vcl_cmd_unwatched); c != NULL &&
	    n < VCL_SETTLE_MAX; c = next) {
		next = TAILQ_NEXT(c, uentry);
		if (clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
		    sizeof st, &st, NULL) != CL_SUCCESS || st > CL_COMPLETE)
			continue;
		expect = 0;
		if (!atomic_compare_exchange_strong(&c->claimed, &expect, 1))
			continue;	/* its waiter won: on its way */
		c->status = st;
		done[n++] = c;
	}
	for (i = 0; i < n; i++)
		vcl_cmd_complete(done[i]);
}

/*
 * A finish or a read f completed: on an in-order queue so did every
 * command enqueued before it, but their callbacks may come after f's
 * waiter. Complete them now, oldest first, so their Notify and deferred
 * errors reach the client before f's reply, as they would in a runtime.
 * Past VCL_SETTLE_MAX they are left to their callbacks.
 */
static void
vcl_cmd_settle_queue(struct vcl_cmd *f)
{
	struct vcl_session	*s = f->d.s;
	struct vcl_cmd		*c, *done[VCL_SETTLE_MAX];
	cl_int			 st;
	int			 n = 0, expect;

	/*
	 * The list is newest first: only what follows f is older (all of
	 * it if f is not on the list). Claimed ones are on their way: no
	 * runtime call for them (a read in chunks settles at every chunk).
	 */
	for (c = f->inflight ? LIST_NEXT(f, entry) : LIST_FIRST(&s->inflight);
	    c != NULL; c = LIST_NEXT(c, entry)) {
		if (c == f || c->queue_id != f->queue_id ||
		    atomic_load(&c->claimed))
			continue;
		if (clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
		    sizeof st, &st, NULL) != CL_SUCCESS || st > CL_COMPLETE)
			continue;
		if (n == VCL_SETTLE_MAX)
			break;
		expect = 0;
		if (!atomic_compare_exchange_strong(&c->claimed, &expect, 1))
			continue;	/* its completion is on the way */
		c->status = st;
		done[n++] = c;
	}
	/* The list is newest first. */
	while (n > 0)
		vcl_cmd_complete(done[--n]);
}

/*
 * A finish or a read f (a ring's chunk too) completed, but an older
 * command of its queue was claimed by its callback or waiter and is not
 * yet completed (its entry in the done queue is behind f's, or not there
 * yet): its Notify or error must reach the client before f's reply, so f
 * waits for it, on s->parked, counted in flight (no reply of its queue
 * goes off the loop meanwhile). Where f's queue waited on events (f or an
 * earlier command of it named them in a wait list), those may be another
 * queue's: f waits for an older claimed command of any queue (a read
 * behind another queue's kernel was answered before the kernel's Notify
 * when the kernel's callback was preempted between its claim and its
 * push). A command handed on (then: a peer's push) is not waited for.
 * Returns 1 when f was parked.
 */
static int
vcl_cmd_park(struct vcl_cmd *f)
{
	struct vcl_session	*s = f->d.s;
	struct vcl_cmd		*c, **pp;

	if (!f->inflight)
		return (0);
	/* The list is newest first: what follows f is older. */
	for (c = LIST_NEXT(f, entry); c != NULL; c = LIST_NEXT(c, entry))
		if ((c->queue_id == f->queue_id || f->fr.waited) &&
		    !c->handed && atomic_load(&c->claimed))
			break;
	if (c == NULL)
		return (0);
	f->park_next = NULL;
	for (pp = &s->parked; *pp != NULL; pp = &(*pp)->park_next)
		;
	*pp = f;		/* oldest first */
	return (1);
}

/*
 * An event-bearing command f of an in-order queue completed (its Notify
 * not sent yet): so did every older command of its queue, and the client
 * will take them as done when it sees f's event. Those whose completion
 * did not come yet are completed now, oldest first (as a finish settles
 * its queue); then, where an older one was claimed and is not completed
 * (its callback preempted after its claim, a read parked behind another
 * command), f parks behind it as a reply does (vcl_cmd_park): an older
 * non-blocking read's bytes reach the client before f's Notify. The walk
 * goes over the older commands of f's queue slot (s->qcmds), VCL_PARK_WALK
 * at most, so a long queue costs no walk per completion: past that bound
 * (a slot shared with a queue of that many commands in flight) f goes on.
 * A command completed so does not settle in turn (the loop's stack stays
 * flat behind a long queue whose callbacks lag). Returns 1 when f was
 * parked.
 */
static int
vcl_cmd_park_event(struct vcl_cmd *f)
{
	static int		 settling;	/* the loop thread's */
	struct vcl_session	*s = f->d.s;
	struct vcl_cmd		*c, *done[VCL_PARK_WALK], **pp;
	cl_int			 st;
	int			 n = 0, k, expect;

	/* The list is newest first: what follows f is older. */
	for (c = LIST_NEXT(f, qentry), k = 0; !settling && c != NULL &&
	    k < VCL_PARK_WALK; c = LIST_NEXT(c, qentry), k++) {
		if (c->queue_id != f->queue_id || atomic_load(&c->claimed))
			continue;
		if (clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
		    sizeof st, &st, NULL) != CL_SUCCESS || st > CL_COMPLETE)
			continue;
		expect = 0;
		if (!atomic_compare_exchange_strong(&c->claimed, &expect, 1))
			continue;	/* its completion is on the way */
		c->status = st;
		done[n++] = c;
	}
	if (n > 0) {		/* so not settling already */
		settling = 1;
		while (n > 0)
			vcl_cmd_complete(done[--n]);
		settling = 0;
	}
	if (s->dead)
		return (0);
	for (c = LIST_NEXT(f, qentry), k = 0; c != NULL && k < VCL_PARK_WALK;
	    c = LIST_NEXT(c, qentry), k++)
		if (c->queue_id == f->queue_id && !c->handed &&
		    atomic_load(&c->claimed))
			break;
	if (c == NULL || k == VCL_PARK_WALK)
		return (0);
	f->park_next = NULL;
	for (pp = &s->parked; *pp != NULL; pp = &(*pp)->park_next)
		;
	*pp = f;		/* oldest first */
	return (1);
}

/*
 * A command of queue q completed: the commands parked on q (and those
 * that wait for any queue's) go back to the done queue, in order, to look
 * again (from the loop's next pass: completing one here could free what a
 * caller is walking).
 */
static void
vcl_cmd_unpark(struct vcl_session *s, uint64_t q)
{
	struct vcl_cmd	*f, **pp;

	for (pp = &s->parked; (f = *pp) != NULL;) {
		if (f->queue_id != q && !f->fr.waited) {
			pp = &f->park_next;
			continue;
		}
		*pp = f->park_next;
		f->park_next = NULL;
		vcl_server_done_push(s->srv, &f->d);
	}
}

/* Complete a command now (a peer link is done with it). */
void
vcl_cmd_finish(struct vcl_cmd *c)
{
	vcl_cmd_complete(c);
}

/* vcl_done entry point for commands. */
static void
vcl_cmd_done(struct vcl_done *d)
{
	vcl_cmd_complete((struct vcl_cmd *)d);
}

/*
 * A waiter or callback saw a read or a finish complete: write its reply
 * now if the session allows it (vcl_session_send_now); the loop then
 * completes the command without replying.
 */
static void
vcl_cmd_answer(struct vcl_cmd *c)
{
	Vcl__ToClient	 tc = VCL__TO_CLIENT__INIT;
	Vcl__Reply	 r = VCL__REPLY__INIT;
	const uint8_t	*bulk = NULL;
	uint64_t	 len = 0;
	cl_int		 st;

	st = vcl_cmd_status(c);
	r.seq = c->seq;
	r.status = st;
	tc.reply = &r;
	if (c->type == VCL_CMD_READ && st == CL_SUCCESS) {
		bulk = c->stage->data;
		len = c->stage->size;
		c->fr.stage = c->stage;
	}
	c->fr.queue = c->queue_id;
	c->fr.owes = c->event_id != 0;
	if (vcl_session_send_now(c->d.s, &tc, bulk, len, &c->fr) == 0)
		c->answered = 1;
}

static void	vcl_cmd_fired(struct vcl_cmd *, cl_event, cl_int);

/*
 * Testing (VCL_TEST_FIRE_DELAY_US=N): a command with an event, neither a
 * read nor a finish, and a chunk of a read sent in chunks (its reply's
 * part), reach the done queue N us after their claim, from a
 * thread of its own, as it would from a runtime callback thread preempted
 * between the two, while the runtime goes on (a finish behind it can
 * reach the loop first: vcl_cmd_park). Returns 1 when c was handed on.
 */
struct vcl_fire_late {
	struct vcl_cmd	*c;
	cl_event	 ev;
	cl_int		 status;
	long		 us;
};

static void *
vcl_cmd_fire_late(void *arg)
{
	struct vcl_fire_late	*fl = arg;

	usleep((useconds_t)fl->us);
	vcl_cmd_fired(fl->c, fl->ev, fl->status);
	clReleaseEvent(fl->ev);
	vcl_cmd_put(fl->c);
	free(fl);
	return (NULL);
}

static int
vcl_cmd_fire_delay(struct vcl_cmd *c, cl_event ev, cl_int status)
{
	static atomic_long	 us = -1;	/* runtime threads read it */
	struct vcl_fire_late	*fl;
	pthread_t		 t;
	pthread_attr_t		 a;
	const char		*v;
	long			 d;
	int			 rc;

	if ((d = atomic_load(&us)) == -1) {
		v = getenv("VCL_TEST_FIRE_DELAY_US");
		d = v != NULL ? strtol(v, NULL, 10) : 0;
		if (d < 0 || d > 1000000)
			d = 0;
		atomic_store(&us, d);
	}
	if (d == 0 || (c->event_id == 0 && c->type != VCL_CMD_CHUNK) ||
	    c->type == VCL_CMD_READ || c->type == VCL_CMD_FINISH ||
	    (fl = malloc(sizeof *fl)) == NULL)
		return (0);
	fl->c = c;
	fl->ev = ev;
	fl->status = status;
	fl->us = d;
	atomic_fetch_add(&c->refs, 1);
	clRetainEvent(ev);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &a, vcl_cmd_fire_late, fl);
	pthread_attr_destroy(&a);
	if (rc == 0)
		return (1);
	clReleaseEvent(ev);
	atomic_fetch_sub(&c->refs, 1);
	free(fl);
	return (0);
}

/* First to see the command's end (callback, waiter, reaper) completes it. */
static void
vcl_cmd_fire(struct vcl_cmd *c, cl_event ev, cl_int status)
{
	int	expect = 0;

	if (!atomic_compare_exchange_strong(&c->claimed, &expect, 1))
		return;		/* another watcher or the reaper won */
	if (!vcl_cmd_fire_delay(c, ev, status))
		vcl_cmd_fired(c, ev, status);
}

/* Hand a claimed command's completion to the loop. */
static void
vcl_cmd_fired(struct vcl_cmd *c, cl_event ev, cl_int status)
{
	/* PoCL reports CL_COMPLETE for a callback set on a failed event. */
	if (status == CL_COMPLETE && clGetEventInfo(ev,
	    CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) !=
	    CL_SUCCESS)
		status = CL_COMPLETE;
	c->status = status;
	vcl_log_debug("command type %d event %llu xid %llu: status %d",
	    (int)c->type, (unsigned long long)c->event_id,
	    (unsigned long long)c->xid, (int)status);
	/* A slot goes back before its reply can tell the client so. */
	if (c->type == VCL_CMD_SHM)
		vcl_shm_release(c);
	if (c->fast)
		vcl_cmd_answer(c);
	/*
	 * Until the loop completes it, no other reply goes off the loop.
	 * One answered whole owes the client nothing more: the loop need not
	 * wake for it (at its next pass it frees the marker, or the read's
	 * staging, whose charge went back as the reply went).
	 */
	if (c->fr.uncounted && !c->fr.partial) {
		vcl_server_done_push_lazy(c->d.s->srv, &c->d);
		return;
	}
	if (!c->fr.uncounted) {
		c->queued = 1;
		atomic_fetch_add(&c->d.s->ndone, 1);
	}
	vcl_server_done_push(c->d.s->srv, &c->d);
}

/* OpenCL callback, on a runtime thread: hand the completion to the loop. */
static void CL_CALLBACK
vcl_cmd_cb(cl_event ev, cl_int status, void *arg)
{
	struct vcl_cmd	*c = arg;

	vcl_cmd_fire(c, ev, status);
	vcl_cmd_put(c);
}

/*
 * Waiter thread: wait for the event and complete the command. Callbacks
 * reach the loop late in some runtimes (PoCL's go through its own thread
 * after the device's); a client blocked in a read or a finish should not
 * pay for that. The callback stays registered: whichever comes first wins.
 */
static void
vcl_cmd_wait(void *arg)
{
	struct vcl_cmd	*c = arg;
	cl_event	 ev = c->wait_ev;
	cl_int		 st = CL_COMPLETE;

	clWaitForEvents(1, &ev);
	if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st,
	    &st, NULL) != CL_SUCCESS)
		st = CL_COMPLETE;
	if (st <= CL_COMPLETE)
		vcl_cmd_fire(c, ev, st);
	clReleaseEvent(ev);
	vcl_cmd_put(c);
}

/*
 * One id of a wait list from the wire: an event of the session the client
 * holds (*op), not failed. CL_SUCCESS, or the error the command fails with.
 */
cl_int
vcl_enq_wait_id(struct vcl_session *s, uint64_t id, struct vcl_hobj **op)
{
	struct vcl_hobj	*o;

	if ((o = vcl_handle_get(&s->handles, id, VCL_KIND_EVENT)) == NULL)
		return (CL_INVALID_EVENT_WAIT_LIST);
	if (o->error != CL_SUCCESS)
		return (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
	*op = o;
	return (CL_SUCCESS);
}

/*
 * Resolve an enqueue's queue and wait list. Returns CL_SUCCESS or the error
 * the command fails with; the caller passes it on to vcl_enq_end either way.
 */
cl_int
vcl_enq_begin(struct vcl_session *s, const Vcl__Enqueue *e, struct vcl_enq *enq)
{
	return (vcl_enq_begin_queue(s, e, enq, NULL));
}

/* The same, on a queue of the server's own (q) instead of e's queue. */
cl_int
vcl_enq_begin_queue(struct vcl_session *s, const Vcl__Enqueue *e,
    struct vcl_enq *enq, struct vcl_hobj *q)
{
	struct vcl_hobj	*o;
	size_t		 i;
	cl_int		 st;

	memset(enq, 0, sizeof *enq);
	enq->event_id = e->has_event ? e->event : 0;
	enq->quiet = enq->event_id != 0 && e->has_quiet && e->quiet;
	if (enq->event_id != 0 && vcl_handle_find(&s->handles,
	    enq->event_id) != NULL) {
		vcl_session_close(s, "client reused an event id");
		return (CL_INVALID_EVENT);
	}
	if ((enq->q = q) == NULL && (enq->q = vcl_handle_get(&s->handles,
	    e->queue, VCL_KIND_QUEUE)) == NULL)
		return (CL_INVALID_COMMAND_QUEUE);
	if (enq->q->error != CL_SUCCESS)
		return (enq->q->error);
	if (e->n_wait == 0)
		return (CL_SUCCESS);
	if (e->n_wait > VCL_WAIT_MAX)
		return (CL_INVALID_EVENT_WAIT_LIST);
	if ((enq->wait = calloc(e->n_wait, sizeof *enq->wait)) == NULL)
		return (CL_OUT_OF_HOST_MEMORY);
	for (i = 0; i < e->n_wait; i++) {
		if ((st = vcl_enq_wait_id(s, e->wait[i], &o)) != CL_SUCCESS)
			return (st);
		/* A proxy or arrival of ours, complete: nothing to wait for. */
		if (o->u.event == NULL && o->user && o->user_set)
			continue;
		if (o->u.event == NULL)
			return (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
		/* A runtime may never run a command behind a failed event. */
		if (clGetEventInfo(o->u.event, CL_EVENT_COMMAND_EXECUTION_STATUS,
		    sizeof st, &st, NULL) == CL_SUCCESS && st < 0)
			return (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
		enq->wait[enq->nwait++] = o->u.event;
	}
	if (enq->nwait == 0) {		/* a runtime wants NULL with 0 */
		free(enq->wait);
		enq->wait = NULL;
	}
	return (CL_SUCCESS);
}

/*
 * Watch h, a VCL_CMD_HOLD given what a command uses, until the command
 * behind ev (its reference taken), on queue qid, is done. A completion
 * with no event and nobody waiting, as an unchunked write's (a copy that
 * failed is the queue's next finish's to report), so the loop never waits
 * for what runs ahead of it on the queue (a long kernel, say).
 */
static void
vcl_cmd_hold(struct vcl_session *s, struct vcl_cmd *h, cl_event ev,
    uint64_t qid)
{
	h->d.s = s;
	vcl_session_ref(s);
	h->ev = ev;
	h->queue_id = qid;
	(void)vcl_cmd_watch(s, h);
}

/*
 * A hold record (VCL_CMD_HOLD) reserved before the runtime is given bytes
 * it may copy from until a command is done (a chunked write's staging),
 * with a stage record of its own, unfilled: handing them to it then needs
 * no memory (vcl_cmd_free_after), so no failure has the loop wait on the
 * device for want of some. NULL when out of memory.
 */
struct vcl_cmd *
vcl_cmd_hold_new(void)
{
	struct vcl_cmd	*h;

	if ((h = vcl_cmd_new(VCL_CMD_HOLD, 0)) == NULL)
		return (NULL);
	if ((h->stage = calloc(1, sizeof *h->stage)) == NULL) {
		free(h);
		return (NULL);
	}
	return (h);
}

/* Free a hold record of vcl_cmd_hold_new never used. */
void
vcl_cmd_hold_free(struct vcl_cmd *h)
{
	if (h == NULL)
		return;
	free(h->stage);
	free(h);
}

/*
 * Bytes data (size, charged to s) in the stage record of hold h: what
 * vcl_stage_new makes, allocating nothing.
 */
struct vcl_stage *
vcl_cmd_hold_stage(struct vcl_cmd *h, struct vcl_session *s, uint8_t *data,
    uint64_t size)
{
	struct vcl_stage	*st = h->stage;

	st->s = s;
	st->data = data;
	st->size = size;
	st->uncharged = 0;
	vcl_session_ref(s);
	return (st);
}

/*
 * Free stage st once the command behind ev (its reference taken) is done:
 * the runtime may copy to or from it until then. ev is the last command
 * using st on in-order queue qid (a chunked write's last chunk), or the
 * one command that does. h (vcl_cmd_hold_new) holds it: nothing is
 * allocated, the loop never waits.
 */
void
vcl_cmd_free_after(struct vcl_session *s, struct vcl_cmd *h,
    struct vcl_stage *st, cl_event ev, uint64_t qid)
{
	if (h->stage != st)
		free(h->stage);
	h->stage = st;
	vcl_cmd_hold(s, h, ev, qid);
}

/*
 * The runtime took a command (enq->ev) whose completion c will not watch
 * it: what the runtime copies to or from until it is done (c's staging, a
 * shared transfer's slot and its ring's wrapper: the ring stays mapped
 * while its session is referenced) goes once it is done, not with c.
 * Returns 0, or -1 when no record to hold them can be had (out of memory;
 * testing: VCL_TEST_CMD_NOMEM=1): c keeps them and must be watched on
 * enq->ev (vcl_enq_end), never dropped, nor waited for on the loop.
 */
static int
vcl_enq_orphan(struct vcl_session *s, struct vcl_enq *enq,
    struct vcl_cmd *c)
{
	struct vcl_cmd	*h;

	if (enq->ev == NULL || c == NULL || (c->stage == NULL &&
	    (c->type != VCL_CMD_SHM || c->xid == 0)))
		return (0);
	if (vcl_cmd_nomem() || (h = vcl_cmd_new(VCL_CMD_HOLD, 0)) == NULL)
		return (-1);
	h->stage = c->stage;
	c->stage = NULL;
	if (c->type == VCL_CMD_SHM) {
		h->xid = c->xid;
		h->pinwrap = c->pinwrap;
		c->xid = 0;
		c->pinwrap = NULL;
	}
	vcl_cmd_hold(s, h, enq->ev, enq->q != NULL ? enq->q->id : 0);
	enq->ev = NULL;
	return (0);
}

static void	vcl_cmd_drop(struct vcl_cmd *);

/*
 * Let go of an enqueue of a closed session and its completion c: what the
 * runtime may still use goes once it is done (vcl_enq_orphan, or c itself
 * watched on the command when no record can be had), the rest now.
 */
static void
vcl_enq_drop(struct vcl_session *s, struct vcl_enq *enq, struct vcl_cmd *c)
{
	if (vcl_enq_orphan(s, enq, c) != 0) {
		c->event_id = 0;
		vcl_cmd_hold(s, c, enq->ev, enq->q != NULL ? enq->q->id : 0);
		enq->ev = NULL;
		return;
	}
	if (enq->ev != NULL)
		clReleaseEvent(enq->ev);
	enq->ev = NULL;
	if (c != NULL)
		vcl_cmd_drop(c);
}

/*
 * Free c, a command never watched, of a session closed before it was: what
 * its completion would let go of with its session dead (its staging, a
 * push's placement and peer address). vcl_enq_orphan took what the
 * runtime may still use.
 */
static void
vcl_cmd_drop(struct vcl_cmd *c)
{
	if (c->type == VCL_CMD_PUSH && c->job != NULL)
		vcl_peer_place_drop(c);
	vcl_stage_free(c->stage);
	free(c->dest);
	free(c);
}

/*
 * The client's event of an enqueue, added to its session's objects. An add
 * far over the object limit closes the session, which frees its objects,
 * the enqueue's queue among them: enq->q is then NULL.
 */
static struct vcl_hobj *
vcl_enq_event(struct vcl_session *s, struct vcl_enq *enq)
{
	struct vcl_hobj	*o;

	o = vcl_session_add(s, enq->event_id, VCL_KIND_EVENT);
	if (s->dead)
		enq->q = NULL;
	return (o);
}

/*
 * The enqueue was tried with result err (enq->ev set when it succeeded and
 * an event was asked for). Record the client's event, register the
 * completion c (may be NULL for a plain command), or report the failure:
 * on the event when the client named one, else at the queue's next finish.
 */
void
vcl_enq_end(struct vcl_session *s, struct vcl_enq *enq, cl_int err,
    struct vcl_cmd *c)
{
	struct vcl_hobj	*o = NULL;
	int		 kept = 0;

	free(enq->wait);
	enq->wait = NULL;
	if (s->dead) {
		enq->q = NULL;		/* freed with the session's objects */
		vcl_enq_drop(s, enq, c);
		return;
	}
	if (err == CL_SUCCESS && enq->event_id != 0 &&
	    (o = vcl_enq_event(s, enq)) == NULL)
		err = CL_OUT_OF_RESOURCES;
	else if (o != NULL && o->error != CL_SUCCESS)
		err = o->error;			/* over the object limit */
	if (err == CL_SUCCESS && c == NULL && enq->event_id != 0 &&
	    !enq->quiet && (c = vcl_cmd_new(VCL_CMD_PLAIN, 0)) == NULL)
		err = CL_OUT_OF_HOST_MEMORY;
	if (err != CL_SUCCESS && !s->dead && enq->ev != NULL && c != NULL)
		kept = (c->type == VCL_CMD_SHM && c->xid != 0) ||
		    vcl_enq_orphan(s, enq, c) != 0;
	if (kept) {
		/*
		 * A shared transfer the runtime took: its error is answered
		 * once its copy is done, as its success would be, so the
		 * client may take its slot again as soon as it has the reply
		 * (an orphan's slot stayed busy after the reply went). So is
		 * any command's whose staging no record could take
		 * (vcl_enq_orphan): c keeps it until the copy is done.
		 */
		c->fail = err;
		vcl_session_mark_dirty(s, enq->q);
		if (enq->nwait > 0)
			enq->q->waited = 1;
		if (o == NULL && enq->event_id != 0)
			o = vcl_enq_event(s, enq);
		if (o != NULL)
			o->error = err;
	} else if (err != CL_SUCCESS) {
		/* The command may have run; only its completion is lost. */
		if (vcl_enq_orphan(s, enq, c) != 0) {
			vcl_enq_drop(s, enq, c);	/* s closed */
			return;
		}
		if (enq->ev != NULL)
			clReleaseEvent(enq->ev);
		enq->ev = NULL;
		if (o == NULL && enq->event_id != 0 && !s->dead)
			o = vcl_enq_event(s, enq);
		if (o != NULL)
			o->error = err;
		/* A quiet event tells nobody: the next finish reports it. */
		if ((o == NULL || enq->quiet) && c == NULL && enq->q != NULL &&
		    enq->q->deferred == CL_SUCCESS) {
			enq->q->deferred = err;
			atomic_fetch_add(&s->deferred_sets, 1);
		}
		if (c == NULL) {
			if (enq->event_id != 0 && !enq->quiet && !s->dead)
				vcl_session_notify(s, enq->event_id, err, NULL,
				    0);
			return;
		}
	} else {
		vcl_session_mark_dirty(s, enq->q);
		/* Its later commands run after those events too. */
		if (enq->nwait > 0)
			enq->q->waited = 1;
		if (o != NULL) {
			o->u.event = enq->ev;
			clRetainEvent(enq->ev);
		}
		if (c == NULL)
			return;		/* nobody waits for this command */
	}
	if (s->dead) {
		vcl_enq_drop(s, enq, c);	/* closed by the error */
		return;
	}
	c->d.s = s;
	vcl_session_ref(s);
	c->ev = enq->ev;
	c->fr.waited = enq->q != NULL && enq->q->waited;
	c->event_id = enq->quiet ? 0 : enq->event_id;
	c->queue_id = enq->q != NULL ? enq->q->id : 0;
	c->profiling = enq->q != NULL && enq->q->profiling;
	c->status = err;
	if (err != CL_SUCCESS && c->ev == NULL) {
		c->d.fn = vcl_cmd_done;
		vcl_cmd_complete(c);
		return;
	}
	(void)vcl_cmd_watch(s, c);
}

uint64_t	vcl_poll_us = 20;	/* --poll-us; 0: never poll */

#define VCL_POLL_READ_MAX	(256u << 10)	/* reads polled, at most */
#define VCL_POLL_BACKOFF	16	/* waits not polled after a miss */

/*
 * On the loop: a finish, or a small read, that the device has done by the
 * time it is flushed completes here, with no thread between the device and
 * the reply. A waiter thread costs two wakeups (the waiter's, the reply's
 * writer's): on an H100 host 10-13 us, more than the command itself. The
 * loop looks at the event for vcl_poll_us at most, the order of what it
 * spends on an NVIDIA enqueue; a queue whose command was not done then
 * is not polled for its next VCL_POLL_BACKOFF waits, so a queue of long
 * kernels costs the loop one poll in VCL_POLL_BACKOFF + 1. Queues whose
 * flushes went to their strand (vcl_submit.c) are never polled: their
 * flush may block. Returns 1 when c completed and is claimed; the caller
 * completes it.
 */
static int
vcl_cmd_poll(struct vcl_session *s, struct vcl_cmd *c)
{
	struct vcl_hobj	*q;
	struct timespec	 a, b;
	cl_int		 st;
	int		 expect = 0;
	int64_t		 ns, limit = (int64_t)vcl_poll_us * 1000;

	if (limit == 0 || c->then != NULL || s->is_peer)
		return (0);
	if (c->type == VCL_CMD_READ) {
		if (c->stage == NULL || c->stage->size > VCL_POLL_READ_MAX)
			return (0);
	} else if (c->type != VCL_CMD_FINISH)
		return (0);
	/* What completes before it goes first. */
	if (!vcl_session_next_up(s, c->queue_id, c->fr.waited))
		return (0);
	if ((q = vcl_handle_held(&s->handles, c->queue_id,
	    VCL_KIND_QUEUE)) == NULL)
		return (0);
	if (q->poll_skip > 0) {
		q->poll_skip--;
		return (0);
	}
	if (!vcl_session_flush_now(s, q))
		return (0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (;;) {
		if (clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
		    sizeof st, &st, NULL) != CL_SUCCESS)
			return (0);
		if (st <= CL_COMPLETE)
			break;
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns = (int64_t)(b.tv_sec - a.tv_sec) * 1000000000 +
		    (b.tv_nsec - a.tv_nsec);
		if (ns >= limit) {
			q->poll_skip = VCL_POLL_BACKOFF;
			return (0);
		}
	}
	if (!atomic_compare_exchange_strong(&c->claimed, &expect, 1))
		return (0);		/* nobody else watches it yet */
	c->status = st;
	s->srv->polled++;
	return (1);
}

/*
 * c's callback on its event. Testing (VCL_TEST_WATCH_FAIL=N): the N-th
 * call and every one after are refused, as by a runtime out of memory.
 */
static cl_int
vcl_cmd_callback(struct vcl_cmd *c)
{
	static long	fault = -2, n;

	if (fault == -2)
		fault = vcl_server_test_num("VCL_TEST_WATCH_FAIL");
	if (fault > 0 && ++n >= fault)
		return (CL_OUT_OF_RESOURCES);
	return (clSetEventCallback(c->ev, CL_COMPLETE, vcl_cmd_cb, c));
}

/*
 * Have a waiter thread wait for c's event (vcl_cmd_wait). Returns 0, or
 * -1 when none can be had: no pool, out of memory, or, for a command
 * with no callback, testing (VCL_TEST_WATCH_NOWAIT=1).
 */
static int
vcl_cmd_wait_start(struct vcl_session *s, struct vcl_cmd *c)
{
	static long	nowait = -2;

	if (nowait == -2)
		nowait = vcl_server_test_num("VCL_TEST_WATCH_NOWAIT");
	if (s->srv->waiters == NULL || (c->unwatched && nowait == 1))
		return (-1);
	atomic_fetch_add(&c->refs, 1);
	clRetainEvent(c->ev);
	c->wait_ev = c->ev;
	if (vcl_workers_run(s->srv->waiters, vcl_cmd_wait, c) != 0) {
		clReleaseEvent(c->wait_ev);
		atomic_fetch_sub(&c->refs, 1);
		return (-1);
	}
	return (0);
}

/*
 * Register a command's completion: its callback on c->ev, and its place
 * on the session's in-flight list (for vcl_cmd_reap). c->d.s holds a
 * session reference. A command the loop saw done (vcl_cmd_poll) completes
 * at once.
 *
 * The runtime may refuse the callback (out of memory) of a command it
 * took and copies to or from until it is done: c then keeps its staging,
 * slot, wrapper and session until then, never less (freeing them now had
 * the runtime copy into freed memory). A waiter thread waits for its
 * event and completes it as usual, with its event's status, so a read
 * still answers its bytes and a finish its queue's end. The tick looks at
 * it too (vcl_cmd_sweep): with no waiter to be had, or all of them held by
 * events that end late, it completes within a tick of its end. The loop
 * never waits on the device for it: a command behind a user event only
 * the session's client sets would wait for ever. Returns CL_SUCCESS, or
 * the runtime's refusal (c is watched either way: the caller lets go).
 */
cl_int
vcl_cmd_watch(struct vcl_session *s, struct vcl_cmd *c)
{
	struct vcl_hobj	*q;
	cl_int		 err;

	c->d.fn = vcl_cmd_done;
	LIST_INSERT_HEAD(&s->inflight, c, entry);
	LIST_INSERT_HEAD(&s->qcmds[VCL_QSLOT(c->queue_id)], c, qentry);
	c->inflight = 1;
	atomic_fetch_add(&s->qinflight[VCL_QSLOT(c->queue_id)], 1);
	/*
	 * An event of an in-order queue: its Notify keeps the queue's order
	 * (the queue's properties, seen when it was made).
	 */
	if (c->event_id != 0 && c->then == NULL && (q = vcl_handle_held(
	    &s->handles, c->queue_id, VCL_KIND_QUEUE)) != NULL &&
	    q->u.queue != NULL && !q->ooo)
		c->inorder = 1;
	/*
	 * A read's or a finish's reply may go from the thread that sees it
	 * complete; not a finish that owes its queue's deferred error (the
	 * loop reports it) nor a command handed on (then).
	 */
	if (c->then == NULL && s->fast_ok && !s->is_peer &&
	    ((c->type == VCL_CMD_READ && c->stage != NULL) ||
	    c->type == VCL_CMD_SHM ||
	    (c->type == VCL_CMD_FINISH && (q = vcl_handle_held(&s->handles,
	    c->queue_id, VCL_KIND_QUEUE)) != NULL &&
	    q->deferred == CL_SUCCESS))) {
		c->fast = 1;
		c->fr.gen = c->type == VCL_CMD_FINISH ?
		    atomic_load(&s->deferred_sets) : UINT64_MAX;
	}
	if (vcl_cmd_poll(s, c)) {
		c->fast = 0;
		vcl_cmd_complete(c);
		return (CL_SUCCESS);
	}
	atomic_fetch_add(&c->refs, 1);		/* the callback's */
	if ((err = vcl_cmd_callback(c)) != CL_SUCCESS) {
		atomic_fetch_sub(&c->refs, 1);
		vcl_session_warn(s, "command type %d: its completion cannot be "
		    "watched (%d): waited for off the loop", (int)c->type,
		    (int)err);
		TAILQ_INSERT_TAIL(&vcl_cmd_unwatched, c, uentry);
		c->unwatched = 1;
	}
	/*
	 * Someone waits for a read's bytes, a finish, or a migration's bytes
	 * (another node's device): wait actively too. A runtime's callback
	 * may come late: NVIDIA's for a read into pinned memory took
	 * milliseconds (docs/performance.md).
	 */
	if (c->unwatched || c->type == VCL_CMD_READ ||
	    c->type == VCL_CMD_FINISH || c->type == VCL_CMD_PUSH ||
	    c->type == VCL_CMD_CHUNK || c->type == VCL_CMD_SLOT_OUT ||
	    c->type == VCL_CMD_SLOT_IN || c->type == VCL_CMD_SHM)
		(void)vcl_cmd_wait_start(s, c);
	return (err);
}
