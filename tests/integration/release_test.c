/*
 * release_test.c - releases: the runtime's slow releases do not hold the
 * server's loop: a client leaves while its program's release is held
 * (the server's VCL_TEST_RELEASE_LATCH, as PoCL's release of a program
 * took up to a second with many clients), and another session is served
 * all the while; once the release goes on, the server exits clean. An
 * event released before its command completes is the client's no more:
 * later requests naming it are refused, and it is freed.
 */
#include "rawproto.h"

static const char *const	src = "__kernel void k(__global int *a) "
    "{ a[get_global_id(0)] = 1; }";

/*
 * A client with programs leaves while their releases are held: a second
 * session's Stats are answered and say nothing is held any longer (the
 * objects went, their runtime releases wait on a thread of their own).
 */
static void
test_program(void)
{
	struct srv		 sv;
	struct conn		 c, w;
	Vcl__StatsResult	 st;
	char			 latch[PATH_MAX + 32];
	uint64_t		 sid = 0, key = 0;
	int			 fd, rc;

	c.fd = w.fd = -1;
	memset(&st, 0, sizeof st);
	snprintf(latch, sizeof latch, "%s/release-latch", root);
	setenv("VCL_TEST_RELEASE_LATCH", latch, 1);
	rc = srv_start(&sv, "program_server_start", "127.0.0.1:0", NULL);
	unsetenv("VCL_TEST_RELEASE_LATCH");
	if (!rc)
		return;
	if (!check("program_sessions", client_open(&c, &sv, &sid, &key) ==
	    0 && conn_session(&w, &sv) == 0 && create_program(&c, 5, 1,
	    src) == 0 && create_program(&c, 6, 1, src) == 0, "no sessions "
	    "or programs"))
		goto out;
	conn_close(&c);
	check("program_loop_free", wait_empty(&w, &st) == 0, "the other "
	    "session: %llu objects, %llu bytes held, or no answer",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
out:
	if ((fd = open(latch, O_WRONLY | O_CREAT, 0600)) != -1)
		close(fd);
	conn_close(&c);
	conn_close(&w);
	srv_stop(&sv, "program_server_exit");
}

/* Session objects of c now: 0, or -1 with *n unset. */
static int
rel_objects(struct conn *c, uint64_t *n)
{
	Vcl__StatsResult	st;

	if (stats(c, &st) != 0)
		return (-1);
	*n = st.session_objects;
	return (0);
}

/*
 * Event ev, released: GetInfo of it is CL_INVALID_EVENT, and a marker on
 * queue q waiting for it (event probe) fails with
 * CL_INVALID_EVENT_WAIT_LIST.
 */
static void
rel_refused(struct conn *c, const char *name, uint64_t ev, uint64_t q,
    uint64_t probe)
{
	char	tag[64];
	cl_int	st = CL_SUCCESS;
	int	rc;

	snprintf(tag, sizeof tag, "%s_info", name);
	rc = get_info_status(c, VCL__GET_INFO__WHAT__EVENT, ev,
	    CL_EVENT_COMMAND_EXECUTION_STATUS);
	check(tag, rc == CL_INVALID_EVENT, "GetInfo of released event %llu: "
	    "%d, want %d", (unsigned long long)ev, rc, CL_INVALID_EVENT);
	snprintf(tag, sizeof tag, "%s_wait_list", name);
	rc = raw_marker(c, q, probe, &ev, 1) == 0 ? wait_notify(c, probe,
	    &st) : -1;
	check(tag, rc == 0 && st == CL_INVALID_EVENT_WAIT_LIST, "a marker "
	    "waiting for released event %llu: %d (%d), want %d",
	    (unsigned long long)ev, (int)st, rc, CL_INVALID_EVENT_WAIT_LIST);
}

/*
 * Events released while their commands are pending: a marker's event
 * released while the marker is held (it waits for an unset user event),
 * then named in the wait list of a second marker of its queue, held
 * behind the first till the Release has run; a running kernel's event; a user event a held marker waits
 * on, never set. Each is refused to every request that comes after its
 * release (GetInfo CL_INVALID_EVENT, wait lists
 * CL_INVALID_EVENT_WAIT_LIST), the second marker's included, and the
 * server frees each once nothing it runs needs it: the session's objects
 * come back to what the client holds.
 */
static void
test_released_events(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__StatsResult	 st;
	uint64_t		 base = 0, n = 0, ue = 10, m1 = 11, u2 = 30;
	uint64_t		 sid = 0, key = 0;
	cl_int			 es = CL_SUCCESS;
	int			 rc, seen;

	c.fd = -1;
	memset(&st, 0, sizeof st);
	if (!srv_start(&sv, "events_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("events_setup", client_open(&c, &sv, &sid, &key) == 0 &&
	    create_queue(&c, 3, 1) == 0 && raw_spin_setup(&c, 1, 20, 21,
	    22) == 0 && rel_objects(&c, &base) == 0, "no session"))
		goto out;
	/*
	 * A held marker's event, released; a marker of its queue, held
	 * behind it, names it, as does one of another queue.
	 */
	rc = raw_user_event(&c, ue, 1);
	rc |= raw_marker(&c, 2, m1, &ue, 1);
	rc |= release(&c, VCL__KIND__KIND_EVENT, m1);
	rc |= raw_marker(&c, 2, 12, &m1, 1);
	if (!check("events_held_sent", rc == 0, "sending failed"))
		goto out;
	rel_refused(&c, "events_held_pending", m1, 3, 13);
	es = CL_SUCCESS;
	rc = raw_user_set(&c, ue, CL_COMPLETE) == 0 ? wait_notify(&c, 12,
	    &es) : -1;
	check("events_held_behind", rc == 0 && es ==
	    CL_INVALID_EVENT_WAIT_LIST, "the marker sent after the release "
	    "and held behind its command: %d (%d), want %d", (int)es, rc,
	    CL_INVALID_EVENT_WAIT_LIST);
	rel_refused(&c, "events_held_done", m1, 3, 14);
	/* A running kernel's event. */
	rc = raw_spin_send_ev(&c, 2, 21, 22, 1u << 27, 23);
	rc |= release(&c, VCL__KIND__KIND_EVENT, 23);
	if (!check("events_running_sent", rc == 0, "sending failed"))
		goto out;
	rel_refused(&c, "events_running", 23, 3, 24);
	check("events_running_done", raw_finish(&c, 2) == CL_SUCCESS,
	    "the kernel's queue does not finish");
	rel_refused(&c, "events_running_done", 23, 3, 25);
	/* A user event a held marker waits on, released unset. */
	rc = raw_user_event(&c, u2, 1);
	rc |= raw_marker(&c, 3, 31, &u2, 1);
	rc |= release(&c, VCL__KIND__KIND_EVENT, u2);
	if (!check("events_user_sent", rc == 0, "sending failed"))
		goto out;
	rel_refused(&c, "events_user", u2, 2, 32);
	seen = 0;
	rc = raw_user_set(&c, u2, CL_COMPLETE) == 0 ? raw_sync_seen(&c, 31,
	    &seen, &es) : -1;
	check("events_user_ignored", rc == 0 && !seen, "the released user "
	    "event was set: its marker ran (%d)", rc);
	rel_refused(&c, "events_user_set", u2, 2, 33);
	/* The client holds ue and the probes' events 12 .. 33 but 23, 30. */
	rc = release(&c, VCL__KIND__KIND_EVENT, ue);
	for (n = 12; n <= 33; n++)
		if ((n >= 12 && n <= 14) || (n >= 24 && n <= 25) ||
		    (n >= 32 && n <= 33))
			rc |= release(&c, VCL__KIND__KIND_EVENT, n);
	rc |= rel_objects(&c, &n);
	/*
	 * 31 is held for ever, waiting for u2: u2 stays till the session
	 * goes (31's event is made when it runs).
	 */
	check("events_freed", rc == 0 && n == base + 1, "session objects: "
	    "%llu, want %llu (the user event a held marker waits on)",
	    (unsigned long long)n, (unsigned long long)base + 1);
	conn_close(&c);
	if (conn_session(&c, &sv) == 0)
		check("events_session_freed", wait_empty(&c, &st) == 0,
		    "%llu objects, %llu bytes held after the session went",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);
out:
	conn_close(&c);
	srv_stop(&sv, "events_server_exit");
}

static const struct test tests[] = {
	{ "program", test_program, 60 },
	{ "released_events", test_released_events, 120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
