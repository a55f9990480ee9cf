/* journal_test.c - vclserver's log lines: journald priorities, session lines. */

/*
 * usage: journal_test VCLSERVER BUSY_CLIENT
 *
 * A server whose stderr is named by JOURNAL_STREAM (as systemd names the
 * journal) starts each line with its syslog priority, "<6>" for info; one
 * whose JOURNAL_STREAM names another file does not. Each session logs one
 * line when it starts and one when it ends, the end line with the objects
 * and bytes it held, the requests it served and how long it lasted.
 */

#include "rawproto.h"

/* Copy the first line of sv's stderr holding s into out; 0 if none. */
static int
stderr_line(const struct srv *sv, const char *s, char *out, size_t len)
{
	char	 path[PATH_MAX + 16], line[2048];
	FILE	*f;
	int	 found = 0;

	snprintf(path, sizeof path, "%s/stderr", sv->dir);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	while (!found && fgets(line, sizeof line, f) != NULL) {
		if (strstr(line, s) != NULL) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%s", line);
			found = 1;
		}
	}
	fclose(f);
	return (found);
}

/* Wait (bounded) for a line holding s on sv's stderr. */
static int
wait_line(const struct srv *sv, const char *s, char *out, size_t len)
{
	int	i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stderr_line(sv, s, out, len))
			return (1);
		poll_wait();
	}
	return (0);
}

/*
 * Under the journal: priorities on every line, and the session's start
 * and end lines with what it held and served.
 */
static void
test_journal(void)
{
	static const char *const debug[] = { "--log-level", "debug", NULL };
	unsigned long long	 objects = 0, bytes = 0, nreq = 0;
	Vcl__StatsResult	 st;
	struct srv		 sv;
	struct conn		 c;
	char			 line[2048];
	const char		*p;
	double			 secs = -1;
	int			 ok;

	srv_journal = 1;
	ok = srv_start(&sv, "journal_server_start", "127.0.0.1:0", debug);
	srv_journal = 0;
	if (!ok)
		return;
	if (!check("journal_session", conn_session(&c, &sv) == 0,
	    "no session"))
		goto out;
	/* The Stats round trip: the creations before it have run. */
	ok = create_context(&c, 1) == 0 && create_queue(&c, 2, 1) == 0 &&
	    create_buffer(&c, 3, 1, 65536, NULL, 0) == 0 && stats(&c, &st) == 0;
	check("journal_objects", ok, "creations failed");
	conn_close(&c);

	if (check("journal_info_line", wait_line(&sv, "vclserver: info: ",
	    line, sizeof line), "no info line; see %s/stderr", sv.dir))
		check("journal_info_prio", strncmp(line, "<6>", 3) == 0,
		    "info line '%s' does not start with <6>", line);
	if (check("journal_debug_line", stderr_line(&sv, "vclserver: debug: ",
	    line, sizeof line), "no debug line; see %s/stderr", sv.dir))
		check("journal_debug_prio", strncmp(line, "<7>", 3) == 0,
		    "debug line '%s' does not start with <7>", line);
	if (check("journal_start_line", stderr_line(&sv, ") started: client ",
	    line, sizeof line), "no session start line; see %s/stderr",
	    sv.dir))
		check("journal_start_prio", strncmp(line, "<6>", 3) == 0 &&
		    strstr(line, "127.0.0.1") != NULL, "start line '%s' wants "
		    "<6> and the peer address", line);
	if (!check("journal_end_line", wait_line(&sv, ") closed: ", line,
	    sizeof line), "no session end line; see %s/stderr", sv.dir))
		goto out;
	p = strstr(line, "; held ");
	ok = p != NULL && sscanf(p, "; held %llu objects, %llu bytes; served "
	    "%llu requests in %lf s", &objects, &bytes, &nreq, &secs) == 4;
	if (check("journal_end_fields", ok, "end line '%s' lacks what the "
	    "session held and served", line)) {
		check("journal_end_objects", objects == 3, "held %llu objects, "
		    "want 3 (context, queue, buffer)", objects);
		check("journal_end_bytes", bytes >= 65536, "held %llu bytes, "
		    "want at least the buffer's 65536", bytes);
		/* Hello, three creations, Stats; nothing else was sent. */
		check("journal_end_requests", nreq == 5, "served %llu "
		    "requests, want 5 (the test's)", nreq);
		check("journal_end_duration", secs >= 0 && secs < 300,
		    "duration %f s", secs);
		check("journal_end_peer", strncmp(line, "<6>", 3) == 0 &&
		    strstr(line, "127.0.0.1") != NULL, "end line '%s' wants "
		    "<6> and the peer address", line);
	}
out:
	srv_stop(&sv, "journal_server_stop");
}

/* JOURNAL_STREAM naming another file: plain lines, no priorities. */
static void
test_not_journal(void)
{
	struct srv	sv;
	struct conn	c;
	char		line[2048];

	setenv("JOURNAL_STREAM", "1:1", 1);
	if (!srv_start(&sv, "plain_server_start", "127.0.0.1:0", NULL))
		return;
	if (check("plain_session", conn_session(&c, &sv) == 0, "no session"))
		conn_close(&c);
	if (check("plain_end_line", wait_line(&sv, ") closed: ", line,
	    sizeof line), "no session end line; see %s/stderr", sv.dir))
		check("plain_no_prio", strncmp(line, "vclserver: info: ", 17) ==
		    0 && !srv_stderr_has(&sv, "<6>"), "line '%s' or another "
		    "has a priority prefix; stderr is not the journal", line);
	srv_stop(&sv, "plain_server_stop");
	unsetenv("JOURNAL_STREAM");
}

static const struct test tests[] = {
	{ "journal",		test_journal,		60 },
	{ "not_journal",	test_not_journal,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
