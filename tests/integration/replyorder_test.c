/*
 * replyorder_test.c - on an in-order queue, an event-bearing command's
 * Notify never overtakes the reply of an older read. A client that sees
 * a marker's event complete takes every command before it as done, a
 * non-blocking read's bytes included: they must have come first. The
 * marker's completion, and the read's, are made to reach the server's
 * loop late (VCL_TEST_FIRE_DELAY_US: claimed by a runtime thread, then
 * preempted): an older marker holds the read's reply (it parks behind
 * it), and the newer marker completes meanwhile.
 */
#include "rawproto.h"

#define Q_CTX		1
#define Q_Q		2
#define Q_BUF		3
#define Q_BYTES		16384
#define Q_ROUNDS	20
#define Q_EV		1000	/* events: Q_EV + 3 * round + 0, 1, 2 */

/* Send a Marker on Q_Q naming event ev, without waiting. */
static int
send_marker(struct conn *c, uint64_t ev)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Marker	m = VCL__MARKER__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;

	q.queue = Q_Q;
	q.has_event = 1;
	q.event = ev;
	m.q = &q;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &m;
	return (send_req(c, &r, NULL, 0));
}

/* A non-blocking ReadBuffer of Q_BUF on Q_Q with event ev. */
static int
send_read(struct conn *c, uint64_t ev)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;

	q.queue = Q_Q;
	q.has_event = 1;
	q.event = ev;
	m.q = &q;
	m.mem = Q_BUF;
	m.size = Q_BYTES;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * Read messages until the reply to seq and event ev's Notify both came.
 * *early: the Notify came first. The reply's status, or 1.
 */
static int
until_both(struct conn *c, uint64_t seq, uint64_t ev, int *early)
{
	struct reply	rp;
	size_t		i;
	int		st = 1, n, got = 0, seen = 0;

	*early = 0;
	for (n = 0; n < 1000 && !(got && seen); n++) {
		if (recv_msg(c, &rp) != 0)
			return (1);
		for (i = 0; i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev) {
				seen = 1;
				if (!got)
					*early = 1;
			}
		if (rp.r != NULL && rp.r->seq == seq) {
			st = rp.r->status;
			got = 1;
			if (st == CL_SUCCESS && rp.bulk_len != Q_BYTES)
				st = 1;
		}
		reply_free(&rp);
	}
	return (got && seen ? st : 1);
}

/*
 * Marker (its completion late), non-blocking read, marker (late too), in
 * rounds on one in-order queue: the second marker's Notify must come
 * after the read's reply every time.
 */
static void
order(const char *name, const char *const *args)
{
	struct srv	 sv;
	struct conn	 c;
	uint8_t		 data[Q_BYTES];
	uint64_t	 ev, seq;
	char		 what[64];
	int		 i, st, early, bad = 0, late = 0;

	c.fd = -1;
	memset(data, 7, sizeof data);
	setenv("VCL_TEST_FIRE_DELAY_US", "20000", 1);
	snprintf(what, sizeof what, "%s_server", name);
	i = srv_start(&sv, what, "127.0.0.1:0", args);
	unsetenv("VCL_TEST_FIRE_DELAY_US");
	if (!i)
		return;
	snprintf(what, sizeof what, "%s_setup", name);
	if (!check(what, conn_session(&c, &sv) == 0 && create_context(&c,
	    Q_CTX) == 0 && create_queue(&c, Q_Q, Q_CTX) == 0 &&
	    create_buffer(&c, Q_BUF, Q_CTX, Q_BYTES, data, Q_BYTES) == 0,
	    "no session"))
		goto out;
	for (i = 0; i < Q_ROUNDS; i++) {
		ev = Q_EV + 3 * (uint64_t)i;
		if (send_marker(&c, ev) != 0 || send_read(&c, ev + 1) != 0) {
			bad++;
			break;
		}
		seq = c.seq;
		if (send_marker(&c, ev + 2) != 0) {
			bad++;
			break;
		}
		st = until_both(&c, seq, ev + 2, &early);
		if (st != CL_SUCCESS)
			bad++;
		else if (early)
			late++;
	}
	snprintf(what, sizeof what, "%s_read_first", name);
	check(what, bad == 0 && late == 0, "%d marker + read + marker: %d "
	    "failed, %d read replies after the newer marker's Notify",
	    Q_ROUNDS, bad, late);
out:
	conn_close(&c);
	snprintf(what, sizeof what, "%s_server_exit", name);
	srv_stop(&sv, what);
}

/* Completions through waiter threads and callbacks. */
static void
test_marker_after_read(void)
{
	static const char *const a[] = { "--poll-us", "0", NULL };

	order("after_read", a);
}

/* The same with the read sent in chunks (--read-chunk 4K: four parts). */
static void
test_marker_after_chunked_read(void)
{
	static const char *const a[] = { "--poll-us", "0", "--read-chunk",
	    "4K", NULL };

	order("after_chunked_read", a);
}

static const struct test tests[] = {
	{ "marker_after_read", test_marker_after_read, 60 },
	{ "marker_after_chunked_read", test_marker_after_chunked_read, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
