/* test_hold.c - unit tests of the request hold (vcl_hold.c). */

/*
 * vcl_hold.c decides when a request may reach the runtime. Here it runs
 * with the real handle table and real protobuf requests; the session's
 * runner is a stub that records the order requests run in (by seq), so
 * each test states the order a client must see.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vcl_dispatch.h"
#include "vcl_hold.h"
#include "vcl_pool.h"
#include "vcl_server.h"
#include "vcl_session.h"

#define MAXRUN	20000

static uint64_t	ran[MAXRUN];
static size_t	nran;
static int	nsettled;
static uint64_t	clock_ns;		/* vcl_server_ns */
static uint64_t	run_ns;			/* ... a request run takes */

/* --- stubs for what vcl_hold.c calls outside itself --------------------- */

void
vcl_session_run(struct vcl_session *s, Vcl__Request *req,
    struct vcl_bulk *bulk, int free_req)
{
	assert_true(nran < MAXRUN);
	ran[nran++] = req->seq;
	clock_ns += run_ns;
	if (free_req)
		protobuf_c_message_free_unpacked(&req->base, NULL);
}

void
vcl_session_req_free(struct vcl_session *s, Vcl__Request *req)
{
	if (req != NULL)
		protobuf_c_message_free_unpacked(&req->base, NULL);
}

void
vcl_session_close(struct vcl_session *s, const char *why)
{
	s->dead = 1;
}

int
vcl_session_charge(struct vcl_session *s, uint64_t n)
{
	return (0);
}

void
vcl_session_uncharge(struct vcl_session *s, uint64_t n)
{
}

void
vcl_pool_put(void *p, size_t n)
{
	free(p);
}

void
vcl_session_settled(struct vcl_session *s, struct vcl_hobj *o)
{
	nsettled++;
}

uint64_t
vcl_server_ns(void)
{
	return (clock_ns);
}

/*
 * The dispatch table's VCL_OP_ENQUEUE lookup, from the schema: a call whose
 * message starts with "Enqueue q = 1" is a command (unit_dispatch checks
 * that the real table's flag says the same).
 */
const Vcl__Enqueue *
vcl_dispatch_enqueue(const Vcl__Request *req)
{
	const ProtobufCFieldDescriptor	*f;
	const ProtobufCMessage		*call;

	if ((f = protobuf_c_message_descriptor_get_field(
	    &vcl__request__descriptor, req->call_case)) == NULL ||
	    (call = *(ProtobufCMessage * const *)((const char *)req +
	    f->offset)) == NULL ||
	    (f = protobuf_c_message_descriptor_get_field(call->descriptor,
	    1)) == NULL || f->descriptor != &vcl__enqueue__descriptor)
		return (NULL);
	return (*(Vcl__Enqueue * const *)((const char *)call + f->offset));
}

/* --- helpers ------------------------------------------------------------- */

static struct vcl_session *
session_new(void)
{
	struct vcl_session	*s;

	assert_non_null(s = calloc(1, sizeof *s));
	assert_int_equal(vcl_handle_init(&s->handles, 100000), 0);
	assert_int_equal(vcl_hold_init(s), 0);
	nran = 0;
	nsettled = 0;
	run_ns = 0;
	return (s);
}

static void
forget(struct vcl_hobj *o, void *arg)
{
}

static void
session_free(struct vcl_session *s)
{
	vcl_hold_drop(s);
	vcl_handle_clear(&s->handles, forget, NULL);
	vcl_handle_free(&s->handles);
	vcl_handle_free(&s->pending);
	free(s);
}

/* An object of the session's handle table. */
static struct vcl_hobj *
obj(struct vcl_session *s, uint64_t id, enum vcl_kind kind)
{
	struct vcl_hobj	*o;
	cl_int		 err;

	assert_non_null(o = vcl_handle_add(&s->handles, id, kind, &err));
	return (o);
}

/* An unset user event (an application's, a proxy, an arrival). */
static struct vcl_hobj *
user_event(struct vcl_session *s, uint64_t id)
{
	struct vcl_hobj	*o = obj(s, id, VCL_KIND_EVENT);

	o->user = 1;
	return (o);
}

/* Pack a request and unpack it, as the session hands them over. */
static void
submit(struct vcl_session *s, Vcl__Request *r)
{
	struct vcl_bulk	 bulk;
	Vcl__Request	*u;
	uint8_t		*buf;
	size_t		 len = vcl__request__get_packed_size(r);

	assert_non_null(buf = malloc(len + 1));
	vcl__request__pack(r, buf);
	assert_non_null(u = vcl__request__unpack(NULL, len, buf));
	free(buf);
	memset(&bulk, 0, sizeof bulk);
	vcl_hold_submit(s, u, &bulk);
}

/* NDRange on queue q (seq), waiting for n events, making event ev (0: none). */
static void
ndrange(struct vcl_session *s, uint64_t seq, uint64_t q, uint64_t ev,
    size_t n, const uint64_t *wait)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__NDRange	m = VCL__NDRANGE__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = q;
	e.has_event = ev != 0;
	e.event = ev;
	e.n_wait = n;
	e.wait = (uint64_t *)wait;
	m.q = &e;
	m.kernel = 1;
	r.seq = seq;
	r.call_case = VCL__REQUEST__CALL_NDRANGE;
	r.ndrange = &m;
	submit(s, &r);
}

static void
release(struct vcl_session *s, uint64_t seq, Vcl__Kind kind, uint64_t id)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Release	m = VCL__RELEASE__INIT;

	m.kind = kind;
	m.id = id;
	r.seq = seq;
	r.call_case = VCL__REQUEST__CALL_RELEASE;
	r.release = &m;
	submit(s, &r);
}

static void
forward(struct vcl_session *s, uint64_t seq, uint64_t ev)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__ForwardEvent	m = VCL__FORWARD_EVENT__INIT;
	Vcl__PeerDest		d = VCL__PEER_DEST__INIT;

	d.addr = "127.0.0.1:1";
	m.event = ev;
	m.dest = &d;
	m.proxy = 999;
	r.seq = seq;
	r.call_case = VCL__REQUEST__CALL_FORWARD_EVENT;
	r.forward_event = &m;
	submit(s, &r);
}

/* User events were set: turns until nothing released is left. */
static void
kick(struct vcl_session *s)
{
	vcl_hold_wake(s);
	while (vcl_hold_turn(s))
		;
	assert_false(vcl_hold_releasing(s));
}

/* A user event is set (what the loop does, then kicks). */
static void
set_event(struct vcl_session *s, struct vcl_hobj *ev)
{
	ev->user_set = 1;
	kick(s);
}

static void
assert_ran(const uint64_t *want, size_t n)
{
	size_t	i;

	assert_int_equal(nran, n);
	for (i = 0; i < n; i++)
		assert_int_equal(ran[i], want[i]);
}

/* --- tests --------------------------------------------------------------- */

/* Nothing to wait for: every request runs at once, in order. */
static void
test_hold_none(void **state)
{
	struct vcl_session	*s = session_new();
	static const uint64_t	 want[] = { 1, 2, 3 };

	obj(s, 10, VCL_KIND_QUEUE);
	ndrange(s, 1, 10, 0, 0, NULL);
	ndrange(s, 2, 10, 100, 0, NULL);
	obj(s, 100, VCL_KIND_EVENT);	/* what running 2 made */
	ndrange(s, 3, 10, 0, 1, (uint64_t[]){ 100 });
	assert_ran(want, 3);
	assert_int_equal(s->nheld, 0);
	session_free(s);
}

/*
 * A command behind an unset user event waits, and so does what follows it
 * on its queue; another queue goes on. Setting the event runs them in
 * order.
 */
static void
test_hold_user_event(void **state)
{
	struct vcl_session	*s = session_new();
	struct vcl_hobj		*ev;
	static const uint64_t	 want1[] = { 3 }, want2[] = { 3, 1, 2 };

	obj(s, 10, VCL_KIND_QUEUE);
	obj(s, 11, VCL_KIND_QUEUE);
	ev = user_event(s, 50);
	ndrange(s, 1, 10, 0, 1, (uint64_t[]){ 50 });
	ndrange(s, 2, 10, 0, 0, NULL);
	ndrange(s, 3, 11, 0, 0, NULL);
	assert_ran(want1, 1);
	assert_int_equal(s->nheld, 2);
	assert_int_equal(ev->held_refs, 1);
	kick(s);		/* nothing set: nothing runs */
	assert_ran(want1, 1);
	set_event(s, ev);
	assert_ran(want2, 3);
	assert_int_equal(s->nheld, 0);
	assert_int_equal(ev->held_refs, 0);
	session_free(s);
}

/*
 * A command waiting for an event a held command will make waits for that
 * command, on whatever queue; the count of waiters moves to the event
 * once it is made.
 */
static void
test_hold_producer(void **state)
{
	struct vcl_session	*s = session_new();
	struct vcl_hobj		*ev;
	static const uint64_t	 want[] = { 1, 2, 3, 4 };

	obj(s, 10, VCL_KIND_QUEUE);
	obj(s, 11, VCL_KIND_QUEUE);
	ev = user_event(s, 50);
	ndrange(s, 1, 10, 100, 1, (uint64_t[]){ 50 });	/* makes 100 */
	ndrange(s, 2, 11, 0, 1, (uint64_t[]){ 100 });	/* waits for 1 */
	ndrange(s, 3, 11, 0, 0, NULL);			/* behind 2 */
	forward(s, 4, 100);				/* waits for 1 */
	assert_int_equal(nran, 0);
	assert_int_equal(s->nheld, 4);
	/* The stub does not create 100; the test does, as the op would. */
	ev->user_set = 1;
	obj(s, 100, VCL_KIND_EVENT);
	kick(s);
	assert_ran(want, 4);
	assert_int_equal(s->pending.count, 0);
	session_free(s);
}

/*
 * Releases: an object's waits for every request before it; an event's
 * runs at once (the event itself stays while held requests wait on it:
 * held_refs), except one a held request has yet to make.
 */
static void
test_hold_release(void **state)
{
	struct vcl_session	*s = session_new();
	struct vcl_hobj		*ev, *other;
	static const uint64_t	 want1[] = { 3, 4 };
	static const uint64_t	 want2[] = { 3, 4, 1, 2, 5 };

	obj(s, 10, VCL_KIND_QUEUE);
	obj(s, 20, VCL_KIND_MEM);
	ev = user_event(s, 50);
	other = obj(s, 60, VCL_KIND_EVENT);
	ndrange(s, 1, 10, 100, 2, (uint64_t[]){ 50, 60 });
	release(s, 2, VCL__KIND__KIND_MEM, 20);		/* behind 1 */
	release(s, 3, VCL__KIND__KIND_EVENT, 60);	/* at once */
	release(s, 4, VCL__KIND__KIND_EVENT, 50);	/* at once */
	release(s, 5, VCL__KIND__KIND_EVENT, 100);	/* after 1 makes it */
	assert_ran(want1, 2);
	assert_int_equal(other->held_refs, 1);
	assert_int_equal(ev->held_refs, 1);
	ev->user_set = 1;
	obj(s, 100, VCL_KIND_EVENT);
	nsettled = 0;
	kick(s);
	assert_ran(want2, 5);
	/* Running 1 let go of both events it waited on. */
	assert_int_equal(other->held_refs, 0);
	assert_int_equal(ev->held_refs, 0);
	assert_int_equal(nsettled, 2);
	session_free(s);
}

/*
 * A client far ahead of an unset event: everything it sent is held, then
 * runs in order from one kick, each queue's order kept.
 */
static void
test_hold_many(void **state)
{
	struct vcl_session	*s = session_new();
	struct vcl_hobj		*ev;
	uint64_t		 seq, last[2] = { 0, 0 };
	size_t			 i;

	obj(s, 10, VCL_KIND_QUEUE);
	obj(s, 11, VCL_KIND_QUEUE);
	ev = user_event(s, 50);
	/* Queue 10 + seq % 2; every seventh waits for the one before. */
	ndrange(s, 1, 11, 0, 1, (uint64_t[]){ 50 });
	ndrange(s, 2, 10, 0, 1, (uint64_t[]){ 50 });
	for (seq = 3; seq < 10003; seq++)
		ndrange(s, seq, 10 + seq % 2, 1000 + seq, seq % 7 == 0,
		    (uint64_t[]){ 1000 + seq - 1 });
	assert_int_equal(nran, 0);
	assert_int_equal(s->nheld, 10002);
	set_event(s, ev);
	assert_int_equal(nran, 10002);
	for (i = 0; i < nran; i++) {
		assert_true(ran[i] > last[ran[i] % 2]);
		last[ran[i] % 2] = ran[i];
	}
	assert_int_equal(s->nheld, 0);
	assert_int_equal(s->pending.count, 0);
	session_free(s);
}

/*
 * What one user event releases runs in turns of at most 4096 requests:
 * each turn leaves the rest held (nheld), a request of a released queue
 * still waits behind them, and over all turns the order is that of one
 * run: each queue's in order.
 */
static void
test_hold_turns(void **state)
{
	struct vcl_session	*s = session_new();
	struct vcl_hobj		*ev;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__NDRange		 m = VCL__NDRANGE__INIT;
	Vcl__Enqueue		 e = VCL__ENQUEUE__INIT;
	uint64_t		 seq, last[2] = { 0, 0 };
	size_t			 i, before;
	int			 turns = 0;

	obj(s, 10, VCL_KIND_QUEUE);
	obj(s, 11, VCL_KIND_QUEUE);
	ev = user_event(s, 50);
	ndrange(s, 1, 11, 0, 1, (uint64_t[]){ 50 });
	ndrange(s, 2, 10, 0, 1, (uint64_t[]){ 50 });
	for (seq = 3; seq < 10003; seq++)
		ndrange(s, seq, 10 + seq % 2, 1000 + seq, seq % 7 == 0,
		    (uint64_t[]){ 1000 + seq - 1 });
	ev->user_set = 1;
	vcl_hold_wake(s);
	assert_true(vcl_hold_releasing(s));
	assert_true(vcl_hold_turn(s));
	assert_true(nran > 0 && nran <= 4096);
	assert_int_equal(s->nheld, 10002 - nran);
	assert_true(vcl_hold_releasing(s));
	/* Between turns: queue 10's next request is not free to run. */
	m.q = &e;
	r.call_case = VCL__REQUEST__CALL_NDRANGE;
	r.ndrange = &m;
	e.queue = 10;
	assert_false(vcl_hold_runs_now(s, &r));
	before = nran;
	ndrange(s, 10004, 10, 0, 0, NULL);	/* held behind them */
	assert_int_equal(nran, before);
	while (vcl_hold_turn(s))
		assert_true(++turns < 10);
	assert_false(vcl_hold_releasing(s));
	assert_int_equal(nran, 10003);
	assert_int_equal(ran[nran - 1], 10004);
	for (i = 0; i < nran; i++) {
		assert_true(ran[i] > last[ran[i] % 2]);
		last[ran[i] % 2] = ran[i];
	}
	assert_int_equal(s->nheld, 0);
	assert_int_equal(s->pending.count, 0);
	assert_true(vcl_hold_runs_now(s, &r));
	session_free(s);
}

/*
 * A turn also ends once it held the loop 20 ms, at least one request
 * run: here each takes 3 ms (the stub's clock), so 7 at most.
 */
static void
test_hold_turn_time(void **state)
{
	struct vcl_session	*s = session_new();
	struct vcl_hobj		*ev;
	uint64_t		 seq;
	size_t			 before;
	int			 more, turns = 0;

	obj(s, 10, VCL_KIND_QUEUE);
	ev = user_event(s, 50);
	for (seq = 1; seq <= 100; seq++)
		ndrange(s, seq, 10, 0, seq == 1, (uint64_t[]){ 50 });
	ev->user_set = 1;
	run_ns = 3000000;
	vcl_hold_wake(s);
	do {
		before = nran;
		more = vcl_hold_turn(s);
		assert_true(nran - before >= 1 && nran - before <= 7);
		assert_true(++turns <= 100);
	} while (more);
	assert_int_equal(nran, 100);
	for (seq = 1; seq <= 100; seq++)
		assert_int_equal(ran[seq - 1], seq);
	assert_true(turns >= 100 / 7);
	session_free(s);
}

/* A session closing between turns frees what is left (ASan, valgrind). */
static void
test_hold_drop_turns(void **state)
{
	struct vcl_session	*s = session_new();
	struct vcl_hobj		*ev;
	uint64_t		 seq;

	obj(s, 10, VCL_KIND_QUEUE);
	ev = user_event(s, 50);
	for (seq = 1; seq <= 5000; seq++)
		ndrange(s, seq, 10, 1000 + seq, seq == 1, (uint64_t[]){ 50 });
	ev->user_set = 1;
	vcl_hold_wake(s);
	assert_true(vcl_hold_turn(s));
	assert_true(s->nheld > 0);
	vcl_hold_drop(s);
	assert_false(vcl_hold_releasing(s));
	assert_int_equal(s->nheld, 0);
	assert_int_equal(s->pending.count, 0);
	session_free(s);
}

/* A session closing with requests held frees them (ASan, valgrind). */
static void
test_hold_drop(void **state)
{
	struct vcl_session	*s = session_new();
	uint64_t		 seq;

	obj(s, 10, VCL_KIND_QUEUE);
	user_event(s, 50);
	for (seq = 1; seq < 100; seq++)
		ndrange(s, seq, 10, 1000 + seq, 1, (uint64_t[]){ 50 });
	assert_int_equal(s->nheld, 99);
	vcl_hold_drop(s);
	assert_int_equal(s->nheld, 0);
	assert_int_equal(s->pending.count, 0);
	assert_int_equal(nran, 0);
	session_free(s);
}

/*
 * The hold finds every enqueue by its message's field 1 (vcl.proto): no
 * request carries an Enqueue anywhere else, so a new enqueue call cannot
 * be missed; and the image enqueues are found.
 */
static void
test_hold_enqueue_rule(void **state)
{
	const ProtobufCMessageDescriptor	*d = &vcl__request__descriptor;
	const ProtobufCMessageDescriptor	*md;
	const ProtobufCFieldDescriptor		*f;
	Vcl__Request				 req = VCL__REQUEST__INIT;
	Vcl__ReadImage				 ri = VCL__READ_IMAGE__INIT;
	Vcl__CopyImageBuffer			 cb = VCL__COPY_IMAGE_BUFFER__INIT;
	Vcl__CreateImage			 ci = VCL__CREATE_IMAGE__INIT;
	Vcl__Enqueue				 q = VCL__ENQUEUE__INIT;
	unsigned				 i, j, enqueues = 0;

	for (i = 0; i < d->n_fields; i++) {
		if (d->fields[i].type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		md = d->fields[i].descriptor;
		for (j = 0; j < md->n_fields; j++) {
			f = &md->fields[j];
			if (f->type != PROTOBUF_C_TYPE_MESSAGE ||
			    f->descriptor != &vcl__enqueue__descriptor)
				continue;
			if (f->id != 1)
				print_error("%s: Enqueue is field %u, not 1\n",
				    d->fields[i].name, f->id);
			assert_int_equal(f->id, 1);
			enqueues++;
		}
	}
	assert_true(enqueues >= 12);	/* 7 buffer, kernel, migration + 5 image */
	req.call_case = VCL__REQUEST__CALL_READ_IMAGE;
	req.read_image = &ri;
	ri.q = &q;
	assert_ptr_equal(vcl_hold_enqueue_of(&req), &q);
	req.call_case = VCL__REQUEST__CALL_COPY_IMAGE_BUFFER;
	req.copy_image_buffer = &cb;
	cb.q = &q;
	assert_ptr_equal(vcl_hold_enqueue_of(&req), &q);
	req.call_case = VCL__REQUEST__CALL_CREATE_IMAGE;
	req.create_image = &ci;
	assert_null(vcl_hold_enqueue_of(&req));
}

/*
 * vcl_hold_runs_now says what vcl_hold_submit would do with a request now:
 * not while an earlier request of its queue is held, nor while it waits on
 * an unset user event; another queue is free.
 */
static void
test_hold_runs_now(void **state)
{
	struct vcl_session	*s = session_new();
	struct vcl_hobj		*ev;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__NDRange		 m = VCL__NDRANGE__INIT;
	Vcl__Enqueue		 e = VCL__ENQUEUE__INIT;
	uint64_t		 w = 50;

	obj(s, 10, VCL_KIND_QUEUE);
	obj(s, 11, VCL_KIND_QUEUE);
	ev = user_event(s, 50);
	m.q = &e;
	r.call_case = VCL__REQUEST__CALL_NDRANGE;
	r.ndrange = &m;
	e.queue = 10;
	assert_true(vcl_hold_runs_now(s, &r));
	ndrange(s, 1, 10, 0, 1, (uint64_t[]){ 50 });	/* held */
	assert_false(vcl_hold_runs_now(s, &r));
	e.queue = 11;
	assert_true(vcl_hold_runs_now(s, &r));
	e.n_wait = 1;
	e.wait = &w;
	assert_false(vcl_hold_runs_now(s, &r));
	set_event(s, ev);
	assert_true(vcl_hold_runs_now(s, &r));
	e.queue = 10;
	e.n_wait = 0;
	assert_true(vcl_hold_runs_now(s, &r));
	session_free(s);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_hold_none),
		cmocka_unit_test(test_hold_user_event),
		cmocka_unit_test(test_hold_producer),
		cmocka_unit_test(test_hold_release),
		cmocka_unit_test(test_hold_many),
		cmocka_unit_test(test_hold_turns),
		cmocka_unit_test(test_hold_turn_time),
		cmocka_unit_test(test_hold_drop_turns),
		cmocka_unit_test(test_hold_drop),
		cmocka_unit_test(test_hold_enqueue_rule),
		cmocka_unit_test(test_hold_runs_now),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
