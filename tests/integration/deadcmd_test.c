/* deadcmd_test.c - a command whose session closes while it is enqueued. */

/*
 * usage: deadcmd_test VCLSERVER
 *
 * An enqueue whose event id takes its session far over the object limit
 * (--max-objects plus the margin): the runtime took the command, then the
 * session closes in the middle of the enqueue, freeing its objects, the
 * command's queue among them, which the rest of the enqueue must no longer
 * touch (a FillBuffer: no completion record; a MigrateOut: a read the
 * server pushes to a peer once done). What the command held (its staging,
 * its peer's address, a placement) goes with it, its staging once the
 * command is done. Under AddressSanitizer the server runs with leak
 * detection on, so a leaked piece fails its exit too; in any build the
 * server lives on, holds nothing after, and exits cleanly.
 */

#include "rawproto.h"

#define CTX		1
#define MEM		2
#define Q		3
#define FILL0		10	/* the fillers' first id */
#define EV		5000	/* the migration's event: one past the margin */
#define MAX_OBJECTS	4
#define MARGIN		1024	/* handles past --max-objects (vcl_session.c) */
#define SIZE		4096

/* MigrateOut{CTX, MEM, 0, SIZE, event EV} to a peer nobody will reach. */
static int
send_migrate_out(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__MigrateOut	mo = VCL__MIGRATE_OUT__INIT;
	Vcl__PeerDest	d = VCL__PEER_DEST__INIT;

	d.addr = "127.0.0.1:1";
	d.session = 1;
	d.key = 2;
	mo.context = CTX;
	mo.mem = MEM;
	mo.size = SIZE;
	mo.dest = &d;
	mo.transfer = 1;
	mo.has_event = 1;
	mo.event = EV;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	return (send_req(c, &r, NULL, 0));
}

/* FillBuffer{Q, MEM, 0, SIZE, event EV}. */
static int
send_fill(struct conn *c)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__FillBuffer		f = VCL__FILL_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;
	uint8_t			pat[4] = { 1, 2, 3, 4 };

	e.queue = Q;
	e.has_event = 1;
	e.event = EV;
	f.q = &e;
	f.mem = MEM;
	f.pattern.data = pat;
	f.pattern.len = sizeof pat;
	f.size = SIZE;
	r.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
	r.fill_buffer = &f;
	return (send_req(c, &r, NULL, 0));
}

/*
 * On a server of its own: the request send() sends, its event id past the
 * margin, closes the session, and the server lets go of all of it.
 */
static void
run(const char *mode, int (*send)(struct conn *))
{
	static const char *const args[] = { "--max-objects", "4", NULL };
	struct srv		 sv;
	struct conn		 c, d;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	const char		*old;
	char			*saved = NULL;
	uint64_t		 i, n;
	char			 what[64];
	int			 rc, ok;

	c.fd = d.fd = -1;
	/* LeakSanitizer, where the server has it, reports at its exit. */
	if ((old = getenv("ASAN_OPTIONS")) != NULL)
		saved = strdup(old);
	setenv("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1", 1);
	snprintf(what, sizeof what, "%s_server_start", mode);
	rc = srv_start(&sv, what, "127.0.0.1:0", args);
	if (saved != NULL)
		setenv("ASAN_OPTIONS", saved, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(saved);
	if (!rc)
		return;
	ok = conn_session(&c, &sv) == 0 && create_context(&c, CTX) == 0 &&
	    create_buffer(&c, MEM, CTX, SIZE, NULL, 0) == 0 &&
	    create_queue(&c, Q, CTX) == 0 && conn_session(&d, &sv) == 0;
	/* Handles up to the margin: all but one of them refused. */
	n = MAX_OBJECTS + MARGIN - 3;
	for (i = 0; ok && i < n; i++)
		ok = create_buffer(&c, FILL0 + i, CTX, 64, NULL, 0) == 0;
	snprintf(what, sizeof what, "%s_setup", mode);
	if (!check(what, ok && stats(&c, &st) == 0 &&
	    st.session_objects == MAX_OBJECTS, "no session, objects or stats "
	    "(%llu objects)", (unsigned long long)st.session_objects))
		goto out;
	rc = send(&c);
	snprintf(what, sizeof what, "%s_closed", mode);
	check(what, rc == 0 && wait_closed(&c) == 1, "the session was "
	    "not closed by an event id past the margin");
	snprintf(what, sizeof what, "%s_freed", mode);
	check(what, wait_empty(&d, &st) == 0, "the server still holds "
	    "%llu objects, %llu bytes", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
	snprintf(what, sizeof what, "%s_alive", mode);
	check(what, srv_alive(&sv), "server died: %s", srv_how(&sv));
out:
	conn_close(&c);
	conn_close(&d);
	snprintf(what, sizeof what, "%s_server_exit", mode);
	srv_stop(&sv, what);
}

/* A fill, with no completion record: its queue's error is not kept. */
static void
test_fill(void)
{
	run("fill", send_fill);
}

/* A migration: its staging, its peer's address. */
static void
test_migrate(void)
{
	run("migrate", send_migrate_out);
}

static const struct test tests[] = {
	{ "fill",	test_fill,	60 },
	{ "migrate",	test_migrate,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
