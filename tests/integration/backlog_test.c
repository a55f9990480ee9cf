/*
 * backlog_test.c - what waits for the releaser thread is bounded: past
 * --max-release-backlog new programs and builds are refused with
 * CL_OUT_OF_RESOURCES, and served again once the backlog drained.
 */

/*
 * usage: backlog_test VCLSERVER
 *
 * The server's releases of programs are held (VCL_TEST_RELEASE_LATCH, as
 * PoCL's took up to a second each with many clients): a client makes
 * programs and leaves, so their releases wait. Another session sees the
 * backlog in Stats (release_backlog), has its new program and its build
 * refused while it is over the limit, and served once the latch opened
 * and the backlog drained to 0. The harness is rawproto.c.
 */

#include "rawproto.h"

#define BL_CTX		1
#define BL_LIMIT	3
#define BL_PROGS	5	/* the leaving client's: over BL_LIMIT */

static const char *const	bl_src = "__kernel void k(__global int *a) "
    "{ a[get_global_id(0)] = 1; }";

/* BuildProgram of id on all devices: the reply's status (-1: no reply). */
static int
bl_build(struct conn *c, uint64_t id, int *why)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	m = VCL__BUILD_PROGRAM__INIT;
	struct reply		rp;
	int			st;

	m.program = id;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	st = rp.r->status;
	*why = msg_has(&rp, "--max-release-backlog");
	if (st != CL_SUCCESS)
		note("build of %llu: %d (%s)", (unsigned long long)id, st,
		    rp.r->message != NULL ? rp.r->message : "no message");
	reply_free(&rp);
	return (st);
}

/* Poll Stats until release_backlog is want; 0, or -1 with the last. */
static int
bl_wait(struct conn *c, uint64_t want, uint64_t *got)
{
	Vcl__StatsResult	st;
	int			i;

	*got = UINT64_MAX;
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, &st) != 0)
			return (-1);
		*got = st.has_release_backlog ? st.release_backlog :
		    UINT64_MAX;
		if (*got == want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/*
 * A client makes BL_PROGS programs and leaves while their releases are
 * held; w's new program and its build of an older one are refused; the
 * latch opens, the backlog drains to 0, and both build.
 */
static void
test_bound(void)
{
	static const char *const args[] = { "--max-release-backlog", "3",
	    NULL };
	struct srv	 sv;
	struct conn	 c, w;
	char		 latch[PATH_MAX + 32];
	uint64_t	 got = 0, i;
	int		 fd, rc, why = 0, st;

	_Static_assert(BL_PROGS > BL_LIMIT, "the client fills the backlog");
	c.fd = w.fd = -1;
	snprintf(latch, sizeof latch, "%s/backlog-latch", root);
	setenv("VCL_TEST_RELEASE_LATCH", latch, 1);
	rc = srv_start(&sv, "bound_server_start", "127.0.0.1:0", args);
	unsetenv("VCL_TEST_RELEASE_LATCH");
	if (!rc)
		return;
	rc = conn_session(&c, &sv) == 0 && conn_session(&w, &sv) == 0 &&
	    create_context(&c, BL_CTX) == 0 && create_context(&w, BL_CTX) ==
	    0 && create_program(&w, 30, BL_CTX, bl_src) == 0;
	for (i = 0; rc && i < BL_PROGS; i++)
		rc = create_program(&c, 10 + i, BL_CTX, bl_src) == 0;
	/*
	 * Answered: every program of c was made before it leaves, and w's
	 * too (creations are not answered; another connection's requests
	 * may be read first, c's close among them).
	 */
	if (!check("bound_setup", rc && get_info_status(&c,
	    VCL__GET_INFO__WHAT__PROGRAM, 10 + BL_PROGS - 1,
	    CL_PROGRAM_REFERENCE_COUNT) == CL_SUCCESS && get_info_status(&w,
	    VCL__GET_INFO__WHAT__PROGRAM, 30, CL_PROGRAM_REFERENCE_COUNT) ==
	    CL_SUCCESS, "no sessions or programs"))
		goto out;
	conn_close(&c);
	check("bound_backlog", bl_wait(&w, BL_PROGS, &got) == 0, "Stats "
	    "release_backlog %llu, want %d (UINT64_MAX: not reported)",
	    (unsigned long long)got, BL_PROGS);

	/* Over the limit: a new program and a build are refused. */
	rc = create_program(&w, 31, BL_CTX, bl_src) == 0 ? get_info_status(&w,
	    VCL__GET_INFO__WHAT__PROGRAM, 31, CL_PROGRAM_REFERENCE_COUNT) : -1;
	check("bound_create_refused", rc == CL_OUT_OF_RESOURCES, "a new "
	    "program over the backlog: %d, want CL_OUT_OF_RESOURCES", rc);
	st = bl_build(&w, 30, &why);
	check("bound_build_refused", st == CL_OUT_OF_RESOURCES && why,
	    "a build over the backlog: %d (%s), want CL_OUT_OF_RESOURCES "
	    "naming --max-release-backlog", st, why ? "named" : "not named");

	/* The latch opens: the backlog drains and service resumes. */
	if ((fd = open(latch, O_WRONLY | O_CREAT, 0600)) != -1)
		close(fd);
	check("bound_drained", bl_wait(&w, 0, &got) == 0, "release_backlog "
	    "%llu after the releases went on", (unsigned long long)got);
	st = bl_build(&w, 30, &why);
	check("bound_build_back", st == CL_SUCCESS, "the build after the "
	    "backlog drained: %d", st);
	rc = create_program(&w, 32, BL_CTX, bl_src) == 0 ? bl_build(&w, 32,
	    &why) : -1;
	check("bound_create_back", rc == CL_SUCCESS, "a new program after "
	    "the backlog drained: %d", rc);
out:
	if ((fd = open(latch, O_WRONLY | O_CREAT, 0600)) != -1)
		close(fd);
	conn_close(&c);
	conn_close(&w);
	srv_stop(&sv, "bound_server_exit");
}

static const struct test tests[] = {
	{ "bound", test_bound, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
