/*
 * release_test.c - the runtime's slow releases do not hold the server's
 * loop: a client leaves while its program's release is held (the
 * server's VCL_TEST_RELEASE_LATCH, as PoCL's release of a program took
 * up to a second with many clients), and another session is served all
 * the while; once the release goes on, the server exits clean.
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

static const struct test tests[] = {
	{ "program", test_program, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
