/* vcl_hold.c - requests held until what they wait for can reach the runtime. */

/*
 * A request waits (is held) while it must not go to the runtime yet:
 *	- an earlier request of its queue is held (in-order queues);
 *	- its wait list names a user event nobody has set (an application's,
 *	  a peer's proxy, a migration's arrival): runtimes never see such a
 *	  wait list, since some block the enqueuing thread on it and only
 *	  this thread can set it;
 *	- its wait list names an event a held request will create;
 *	- it is a release and anything before it is held (a held command may
 *	  use the object); an event's release instead runs at once and the
 *	  event stays until no held request waits on it (held_refs), so the
 *	  runtime never keeps more finished events than the client does.
 * Calls with no queue and no events (creations, builds, info, user event
 * status) never wait, so a program that sets its user event after such a
 * call cannot deadlock.
 *
 * Each held request records the one thing it waits for now: another held
 * request (it joins that one's waiters) or a user event (it joins the
 * session's list of those). When a held request runs, only its waiters are
 * looked at again; when user events are set, only that list is. Nothing
 * walks everything held, so a client that runs thousands of commands ahead
 * of a cross-node wait costs the same per command as one that does not.
 *
 * What a set user event releases runs in turns, as input is read in
 * passes: at most VCL_HOLD_TURN requests looked at or run, or
 * VCL_HOLD_TURN_NS of the loop, per turn (vcl_hold_turn); the session
 * runs the rest from an event of its own, after what else the loop has
 * ready. 65536 markers behind one user event held every other session
 * for seconds when they all ran at once. Between turns they wait on the
 * session's recheck and ready lists, in the order they would have run
 * in, still held (nheld), and the session reads no input meanwhile: no
 * request of it runs before what a user event released.
 */

#include <stdlib.h>
#include <string.h>

#include "vcl_dispatch.h"
#include "vcl_hold.h"
#include "vcl_pool.h"
#include "vcl_server.h"
#include "vcl_session.h"

#define VCL_HOLD_TURN		4096		/* requests per turn, at most */
#define VCL_HOLD_TURN_NS	20000000u	/* loop time per turn, as a
						   read pass (vcl_session.c) */

/* The wait list of a request that has one (a command), else NULL. */
const Vcl__Enqueue *
vcl_hold_enqueue_of(const Vcl__Request *req)
{
	return (vcl_dispatch_enqueue(req));
}

/* The queue a request is ordered on, or 0. */
static uint64_t
vcl_hold_queue_of(const Vcl__Request *req)
{
	const Vcl__Enqueue	*e = vcl_hold_enqueue_of(req);

	if (e != NULL)
		return (e->queue);
	if (req->call_case == VCL__REQUEST__CALL_FINISH)
		return (req->finish->queue);
	if (req->call_case == VCL__REQUEST__CALL_FLUSH)
		return (req->flush->queue);
	return (0);
}

/* The event id a request creates when it runs, or 0. */
static uint64_t
vcl_hold_produces(const Vcl__Request *req)
{
	const Vcl__Enqueue	*e = vcl_hold_enqueue_of(req);

	if (e != NULL)
		return (e->has_event ? e->event : 0);
	if (req->call_case == VCL__REQUEST__CALL_MIGRATE_OUT)
		return (req->migrate_out->has_event ? req->migrate_out->event :
		    0);
	return (0);
}

/*
 * What an event id in a wait list makes a request wait for: a held
 * request that will create it (*hp), or an unset user event (returns 1).
 * An id nobody knows or will create does not wait: the command fails;
 * so does one the client released before the request came (order: the
 * request's, 0 for one not held yet).
 */
static int
vcl_hold_event(struct vcl_session *s, uint64_t id, uint64_t order,
    struct vcl_held **hp)
{
	struct vcl_hobj	*o;

	if ((o = vcl_handle_find(&s->handles, id)) == NULL) {
		if ((o = vcl_handle_find(&s->pending, id)) != NULL &&
		    vcl_handle_nameable(o, order))
			*hp = o->u.ptr;
		return (0);
	}
	if (!vcl_handle_nameable(o, order))
		return (0);
	return (o->kind == VCL_KIND_EVENT && o->user && !o->user_set &&
	    o->error == CL_SUCCESS);
}

/* The events a request waits for: its enqueue's, or a migration's. */
static size_t
vcl_hold_waits(const Vcl__Request *req, const uint64_t **ids)
{
	const Vcl__Enqueue	*e = vcl_hold_enqueue_of(req);

	if (e != NULL) {
		*ids = e->wait;
		return (e->n_wait);
	}
	if (req->call_case == VCL__REQUEST__CALL_MIGRATE_OUT) {
		*ids = req->migrate_out->wait;
		return (req->migrate_out->n_wait);
	}
	if (req->call_case == VCL__REQUEST__CALL_FORWARD_EVENT) {
		*ids = &req->forward_event->event;
		return (1);
	}
	*ids = NULL;
	return (0);
}

/*
 * What must req wait for now, other than the order of its queue: returns
 * 1 for an unset user event, else 0 with *hp the held request it waits
 * for (NULL: it can run). prev: the held request just before it, if any;
 * order: req's own, 0 while it is not held.
 */
static int
vcl_hold_blocker(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_held *prev, uint64_t order, struct vcl_held **hp)
{
	const uint64_t	*ids;
	size_t		 i, n;

	*hp = NULL;
	if (req->call_case == VCL__REQUEST__CALL_RELEASE &&
	    req->release->kind == VCL__KIND__KIND_EVENT) {
		/*
		 * An event goes once nothing held waits on it (held_refs);
		 * one a held request has yet to create, after that request.
		 */
		(void)vcl_hold_event(s, req->release->id, order, hp);
		return (0);
	}
	if (req->call_case == VCL__REQUEST__CALL_RELEASE) {
		*hp = prev;
		return (0);
	}
	n = vcl_hold_waits(req, &ids);
	for (i = 0; i < n; i++) {
		if (vcl_hold_event(s, ids[i], order, hp))
			return (1);
		if (*hp != NULL)
			return (0);
	}
	return (0);
}

/*
 * Count (d 1) or uncount (d -1) a held request's references to the events
 * it waits for, so that releasing one waits for them (vcl_session_let_go).
 * An event a held request will create is counted on its pending entry and
 * the count moves to the event when it is made. One the client released
 * before the request came (made or still pending) is not counted;
 * uncounting, the request's order is s->handles.running, so the lookup
 * finds what was counted.
 */
static void
vcl_hold_refs(struct vcl_session *s, const Vcl__Request *req, int d)
{
	const uint64_t	*ids;
	struct vcl_hobj	*o;
	size_t		 i, n;

	n = vcl_hold_waits(req, &ids);
	for (i = 0; i < n; i++) {
		if ((o = vcl_handle_get(&s->handles, ids[i], VCL_KIND_EVENT)) ==
		    NULL && (d < 0 || (o = vcl_handle_find(&s->pending,
		    ids[i])) == NULL || o->released))
			continue;
		if (d > 0)
			o->held_refs++;
		else if (o->held_refs > 0) {
			o->held_refs--;
			vcl_session_settled(s, o);
		}
	}
}

/* Make h wait for w (a held request), or for a user event (w NULL). */
static void
vcl_hold_park(struct vcl_session *s, struct vcl_held *h, struct vcl_held *w)
{
	h->blocker = w;
	if (w != NULL)
		TAILQ_INSERT_TAIL(&w->waiters, h, wentry);
	else
		TAILQ_INSERT_TAIL(&s->ublocked, h, wentry);
}

/* Put h on the ready list, kept in arrival order. */
static void
vcl_hold_ready(struct vcl_helds *ready, struct vcl_held *h)
{
	struct vcl_held	*r;

	h->blocker = NULL;
	TAILQ_FOREACH_REVERSE(r, ready, vcl_helds, wentry)
		if (r->order < h->order)
			break;
	if (r == NULL)
		TAILQ_INSERT_HEAD(ready, h, wentry);
	else
		TAILQ_INSERT_AFTER(ready, r, h, wentry);
}

/* Look at h again: ready it, or park it on what it waits for now. */
static void
vcl_hold_recheck(struct vcl_session *s, struct vcl_held *h,
    struct vcl_helds *ready)
{
	struct vcl_held	*w;

	if (vcl_hold_blocker(s, h->req, TAILQ_PREV(h, vcl_helds, entry),
	    h->order, &w))
		vcl_hold_park(s, h, NULL);
	else if (w != NULL)
		vcl_hold_park(s, h, w);
	else
		vcl_hold_ready(ready, h);
}

/* Free a held request that will not run. */
static void
vcl_hold_free_one(struct vcl_session *s, struct vcl_held *h)
{
	if (h->bulk.data != NULL) {
		vcl_pool_put(h->bulk.data, h->bulk.len);
		vcl_session_uncharge(s, h->bulk.len);
	}
	vcl_session_uncharge(s, h->charged);
	vcl_session_req_free(s, h->req);
	free(h);
}

/* Has the turn that began at t0 and did n things had its share? */
static int
vcl_hold_turn_over(uint64_t t0, unsigned n)
{
	return (n >= VCL_HOLD_TURN || (n > 0 &&
	    vcl_server_ns() - t0 >= VCL_HOLD_TURN_NS));
}

/*
 * Run the session's ready requests in order, while the turn (t0, *n) has
 * its share; each one run lets its waiters be looked at again. Stops if
 * the session dies (its held requests are gone).
 */
static void
vcl_hold_run_ready(struct vcl_session *s, uint64_t t0, unsigned *n)
{
	struct vcl_helds	*ready = &s->ready;
	struct vcl_held		*h, *w;
	struct vcl_hobj		*o;
	uint64_t		 released_at;
	uint32_t		 refs;
	int			 released;

	while (!s->dead && (h = TAILQ_FIRST(ready)) != NULL &&
	    !vcl_hold_turn_over(t0, (*n)++)) {
		TAILQ_REMOVE(ready, h, wentry);
		TAILQ_REMOVE(&s->held, h, entry);
		s->nheld--;
		vcl_session_uncharge(s, h->charged);
		h->charged = 0;
		if (h->qid != 0 && (o = vcl_handle_held(&s->handles, h->qid,
		    VCL_KIND_QUEUE)) != NULL && o->held_tail == h)
			o->held_tail = NULL;
		refs = 0;
		released = 0;
		released_at = 0;
		if (h->produces != 0 && (o = vcl_handle_find(&s->pending,
		    h->produces)) != NULL && o->u.ptr == h) {
			refs = o->held_refs;
			released = o->released;
			released_at = o->released_at;
			vcl_handle_del(&s->pending, o);
		}
		/* It names what the client released after it came. */
		s->handles.running = h->order;
		vcl_session_run(s, h->req, &h->bulk, 0);
		if (s->dead) {
			s->handles.running = 0;
			vcl_session_req_free(s, h->req);
			free(h);
			return;
		}
		if ((refs > 0 || released) && (o = vcl_handle_held(
		    &s->handles, h->produces, VCL_KIND_EVENT)) != NULL &&
		    !o->released) {
			o->held_refs += refs;
			/* Its Release, held behind it, runs next. */
			if (released) {
				o->released = 1;
				o->released_at = released_at;
				o->release_held = 1;
			}
		}
		vcl_hold_refs(s, h->req, -1);
		s->handles.running = 0;
		vcl_session_req_free(s, h->req);
		while ((w = TAILQ_FIRST(&h->waiters)) != NULL) {
			TAILQ_REMOVE(&h->waiters, w, wentry);
			vcl_hold_recheck(s, w, ready);
		}
		free(h);
	}
}

/* Set up a session's holding. Returns 0 or -1. */
int
vcl_hold_init(struct vcl_session *s)
{
	TAILQ_INIT(&s->held);
	TAILQ_INIT(&s->ublocked);
	TAILQ_INIT(&s->recheck);
	TAILQ_INIT(&s->ready);
	return (vcl_handle_init(&s->pending, VCL_HOLD_MAX + 1));
}

/*
 * A Release held behind other held requests: its object is the client's
 * no more. Requests held before it still name it (released_at); later
 * ones, held or not, get its CL_INVALID_*. It stays until the Release
 * runs (release_held), whatever else lets go of it meanwhile. An event a
 * held request has yet to make is marked on its pending entry, and the
 * mark moves to the event when it is made (vcl_hold_run_ready).
 */
static void
vcl_hold_release_mark(struct vcl_session *s, const Vcl__Request *req)
{
	struct vcl_hobj	*o;
	enum vcl_kind	 kind;

	if (req->call_case != VCL__REQUEST__CALL_RELEASE ||
	    (kind = vcl_handle_kind(req->release->kind)) == VCL_KIND_NONE)
		return;
	if ((o = vcl_handle_get(&s->handles, req->release->id, kind)) ==
	    NULL && (kind != VCL_KIND_EVENT || (o = vcl_handle_find(
	    &s->pending, req->release->id)) == NULL || o->released))
		return;
	o->released = 1;
	o->released_at = s->held_order;
	o->release_held = 1;
}

/*
 * A complete request: run it now, or hold it. Takes req and the bulk.
 * A held request's message (its bulk is charged already) is charged to
 * the session while it is held: one that would go over the session's
 * limit closes it, as a frame too large for its input buffer does.
 */
void
vcl_hold_submit(struct vcl_session *s, Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	struct vcl_held	*h, *w = NULL, *prev = TAILQ_LAST(&s->held, vcl_helds);
	struct vcl_hobj	*q = NULL, *p;
	uint64_t	 qid = vcl_hold_queue_of(req), charge;
	const char	*why;
	int		 user = 0;
	cl_int		 err;

	if (qid != 0 && (q = vcl_handle_get(&s->handles, qid,
	    VCL_KIND_QUEUE)) != NULL)
		w = q->held_tail;
	if (w == NULL)
		user = vcl_hold_blocker(s, req, prev, 0, &w);
	if (!user && w == NULL) {
		vcl_session_run(s, req, bulk, 1);
		return;
	}
	/* What it holds: its decoded pieces (req is the session's last). */
	charge = vcl__request__get_packed_size(req);
	if (charge < s->arena.decoded)
		charge = s->arena.decoded;
	charge += sizeof *h;
	if (vcl_session_charge(s, charge) != 0) {
		why = "held requests over the session's memory limit";
		goto drop;
	}
	if ((h = calloc(1, sizeof *h)) == NULL) {
		vcl_session_uncharge(s, charge);
		why = "out of memory holding a request";
		goto drop;
	}
	vcl_hold_release_mark(s, req);
	h->charged = charge;
	h->req = req;
	h->bulk = *bulk;
	h->qid = q != NULL ? qid : 0;
	h->order = ++s->held_order;
	TAILQ_INIT(&h->waiters);
	TAILQ_INSERT_TAIL(&s->held, h, entry);
	s->nheld++;
	if (q != NULL)
		q->held_tail = h;
	/* A duplicate id is the client's error; the command reports it. */
	if ((h->produces = vcl_hold_produces(req)) != 0 &&
	    (p = vcl_handle_add(&s->pending, h->produces, VCL_KIND_EVENT,
	    &err)) != NULL)
		p->u.ptr = h;
	vcl_hold_refs(s, req, 1);
	vcl_hold_park(s, h, w);
	return;
drop:
	if (bulk->data != NULL) {
		vcl_pool_put(bulk->data, bulk->len);
		vcl_session_uncharge(s, bulk->len);
	}
	vcl_session_req_free(s, req);
	vcl_session_close(s, why);
}

/*
 * Would req run at once if it were submitted now (vcl_hold_submit)? No
 * earlier request of its queue is held and it waits for nothing.
 */
int
vcl_hold_runs_now(struct vcl_session *s, const Vcl__Request *req)
{
	struct vcl_held	*w = NULL;
	struct vcl_hobj	*q;
	uint64_t	 qid = vcl_hold_queue_of(req);

	if (qid != 0 && (q = vcl_handle_get(&s->handles, qid,
	    VCL_KIND_QUEUE)) != NULL && q->held_tail != NULL)
		return (0);
	if (vcl_hold_blocker(s, req, TAILQ_LAST(&s->held, vcl_helds), 0, &w))
		return (0);
	return (w == NULL);
}

/*
 * User events were set: what waited on them is looked at again by the
 * next turns (vcl_hold_turn). Only moves a list: safe anywhere, a turn
 * under way included.
 */
void
vcl_hold_wake(struct vcl_session *s)
{
	TAILQ_CONCAT(&s->recheck, &s->ublocked, wentry);
}

/* Are requests a user event released still to be looked at or run? */
int
vcl_hold_releasing(const struct vcl_session *s)
{
	return (!TAILQ_EMPTY(&s->recheck) || !TAILQ_EMPTY(&s->ready));
}

/*
 * One turn of what user events released: look at what waited on them
 * again (it may wait on something else now), then, once all of that is
 * looked at, run what is ready, in order per queue. Returns 1 when some
 * is left for another turn. A turn called from within one (a request it
 * runs flushes the session) does nothing: the outer one goes on.
 */
int
vcl_hold_turn(struct vcl_session *s)
{
	struct vcl_held	*h;
	uint64_t	 t0;
	unsigned	 n = 0;

	if (s->kicking)
		return (0);
	s->kicking = 1;
	t0 = vcl_server_ns();
	while (!s->dead && (h = TAILQ_FIRST(&s->recheck)) != NULL &&
	    !vcl_hold_turn_over(t0, n++)) {
		TAILQ_REMOVE(&s->recheck, h, wentry);
		vcl_hold_recheck(s, h, &s->ready);
	}
	if (!s->dead && TAILQ_EMPTY(&s->recheck))
		vcl_hold_run_ready(s, t0, &n);
	s->kicking = 0;
	return (!s->dead && vcl_hold_releasing(s));
}

/* Entries of the pending table own nothing. */
static void
vcl_hold_forget(struct vcl_hobj *o, void *arg)
{
	(void)o;
	(void)arg;
}

/* Free every held request (the session closes). */
void
vcl_hold_drop(struct vcl_session *s)
{
	struct vcl_held	*h;

	while ((h = TAILQ_FIRST(&s->held)) != NULL) {
		TAILQ_REMOVE(&s->held, h, entry);
		vcl_hold_free_one(s, h);
	}
	TAILQ_INIT(&s->ublocked);
	TAILQ_INIT(&s->recheck);
	TAILQ_INIT(&s->ready);
	s->nheld = 0;
	vcl_handle_clear(&s->pending, vcl_hold_forget, NULL);
}
