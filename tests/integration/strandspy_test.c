/* strandspy_test.c - launches off the loop, as the runtime sees them. */

/*
 * usage: strandspy_test VCLSERVER
 *
 * The servers here run with VCL_LAUNCH_STRAND=1 and a slow strand thread
 * (VCL_TEST_STRAND_DELAY_US), as in strand_test.c, and with flushspy.c
 * preloaded (VCL_TEST_FLUSHSPY_LIB, set by ctest): it counts, per queue,
 * the launches the runtime got after the queue's last flush. The loop
 * flushes every queue that got commands after each batch of requests; a
 * runtime may hold back what was not flushed (NVIDIA's does), so a launch
 * the client sent must not stay unflushed once the server is idle, though
 * nothing comes after it: what a kernel's result cannot show (PoCL runs a
 * launch flushed or not), the spy's count does. And a session's strand
 * must get a submission thread while other sessions keep every thread
 * busy. The harness is rawproto.c.
 */

#include "rawproto.h"

static const char ss_src[] =
	"__kernel void kmul(__global uint *b)\n"
	"{ b[get_global_id(0)] = b[get_global_id(0)] * 5u + 1u; }\n";

enum { CTX = 1, Q, PROG, BUF, K_MUL = 20 };

#define NWORDS		16		/* uints in the buffer */
#define RUN_A		60		/* launches sent in a row, first */
#define RUN_B		4		/* ... then, the strand busy with those */
#define DELAY_US	"1000"		/* the strand's thread, per launch */
#define SPY_POLLS	500		/* the count settling: 5 s */

static char	ss_spy[PATH_MAX];	/* the spy's count, one per server */

/*
 * Start a server whose launches go to their strands, slowly, with the
 * spy preloaded. 0 when the spy library is not known (not under ctest).
 */
static int
ss_server_with(struct srv *sv, const char *name, const char *delay,
    const char *mark)
{
	const char	*lib = getenv("VCL_TEST_FLUSHSPY_LIB");
	const char	*asan = getenv("ASAN_OPTIONS");
	char		*saved = asan != NULL ? strdup(asan) : NULL;
	char		 opts[1024];
	int		 ok;

	if (lib == NULL || *lib == '\0') {
		check(name, 0, "VCL_TEST_FLUSHSPY_LIB is not set");
		free(saved);
		return (0);
	}
	snprintf(ss_spy, sizeof ss_spy, "%s/spy.XXXXXX", root);
	if (mkdtemp(ss_spy) == NULL) {
		check(name, 0, "mkdtemp: %s", strerror(errno));
		free(saved);
		return (0);
	}
	strncat(ss_spy, "/count", sizeof ss_spy - strlen(ss_spy) - 1);
	/* The sanitizer build: a preloaded library comes before its runtime. */
	snprintf(opts, sizeof opts, "%s%sverify_asan_link_order=0",
	    saved != NULL ? saved : "", saved != NULL ? ":" : "");
	setenv("ASAN_OPTIONS", opts, 1);
	setenv("LD_PRELOAD", lib, 1);
	setenv("VCL_TEST_FLUSHSPY", ss_spy, 1);
	setenv("VCL_LAUNCH_STRAND", "1", 1);
	setenv("VCL_TEST_STRAND_DELAY_US", delay, 1);
	if (mark != NULL)
		setenv("VCL_TEST_FLUSHSPY_MARK", mark, 1);
	ok = srv_start(sv, name, "127.0.0.1:0", NULL);
	unsetenv("VCL_TEST_FLUSHSPY_MARK");
	unsetenv("LD_PRELOAD");
	unsetenv("VCL_TEST_FLUSHSPY");
	unsetenv("VCL_LAUNCH_STRAND");
	unsetenv("VCL_TEST_STRAND_DELAY_US");
	if (saved != NULL)
		setenv("ASAN_OPTIONS", saved, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(saved);
	return (ok);
}

/* ss_server_with, the strand's thread DELAY_US slow, nothing marked. */
static int
ss_server(struct srv *sv, const char *name)
{
	return (ss_server_with(sv, name, DELAY_US, NULL));
}

/*
 * What the spy saw (-1: nothing yet): launches the server's runtime got
 * after their queue's last flush (0), launches in all (1), flushes (2),
 * launches of the marked size left unflushed (3), and in all (4).
 */
static long
ss_spied(int which)
{
	char	buf[160], *p = buf;
	ssize_t	n;
	long	v = -1;
	int	fd;

	if ((fd = open(ss_spy, O_RDONLY)) < 0)
		return (-1);
	n = pread(fd, buf, sizeof buf - 1, 0);
	close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	for (; which >= 0; which--)
		v = strtol(p, &p, 10);
	return (v);
}

/* Poll (bounded) until no launch is left unflushed; returns the last count. */
static long
ss_wait_flushed(void)
{
	long	n = -1;
	int	i;

	for (i = 0; i < SPY_POLLS; i++) {
		if ((n = ss_spied(0)) == 0)
			break;
		poll_wait();
	}
	return (n);
}

/* Poll (bounded) until the runtime got want launches in all. */
static int
ss_wait_launched(long want)
{
	int	i;

	for (i = 0; i < SPY_POLLS; i++) {
		if (ss_spied(1) >= want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/* A session with a queue, a buffer of zeros and kmul built. */
static int
ss_setup(struct conn *c, const struct srv *sv)
{
	uint32_t	w[NWORDS];

	memset(w, 0, sizeof w);
	c->fd = -1;
	if (conn_session(c, sv) != 0 || create_context(c, CTX) != 0 ||
	    create_queue(c, Q, CTX) != 0 ||
	    create_buffer(c, BUF, CTX, sizeof w, w, sizeof w) != 0 ||
	    create_program(c, PROG, CTX, ss_src) != 0 ||
	    raw_build(c, PROG, NULL) != 0 ||
	    raw_kernel(c, K_MUL, PROG, "kmul") != 0)
		return (-1);
	return (0);
}

/* Send n launches of kmul over the buffer; steps the model's word w. */
static int
ss_launches(struct conn *c, int n, uint32_t *w)
{
	Vcl__KernelArg	 a, *ap = &a;
	int		 i, bad = 0;

	vcl__kernel_arg__init(&a);
	a.index = 0;
	a.type = VCL__KERNEL_ARG__TYPE__MEM;
	a.has_mem = 1;
	a.mem = BUF;
	for (i = 0; i < n; i++) {
		bad |= raw_ndrange(c, Q, K_MUL, NWORDS, 0, &ap, 1, 0) != 0;
		*w = *w * 5u + 1u;
	}
	return (bad ? -1 : 0);
}

/* The buffer's first word, read after a finish. */
static int
ss_result(struct conn *c, uint32_t *got)
{
	struct reply	rp;
	int		ok = 0;

	if (raw_finish(c, Q) != 0 || read_buffer(c, Q, BUF,
	    NWORDS * sizeof(uint32_t), &rp) != 0)
		return (0);
	if (rp.r->status == 0 && rp.bulk_len == NWORDS * sizeof(uint32_t)) {
		memcpy(got, rp.bulk, sizeof *got);
		ok = 1;
	}
	reply_free(&rp);
	return (ok);
}

#define ROUNDS		3		/* runs of launches, each then idle */

/*
 * Runs of launches, each then nothing, or a request that is no launch (a
 * drain: the loop makes the launches still waiting): once the server is
 * idle, no launch is left unflushed. In each run a few launches come
 * while the strand's thread is in the middle of the first ones (the spy
 * saw one of those made): the loop asks for a flush once it handed them,
 * and the thread, which flushes between its rounds of launches, does so
 * before it made them; they are owed one more flush after them.
 */
static void
ss_runs(const char *name, int drain)
{
	struct srv		sv;
	struct conn		c;
	Vcl__StatsResult	st;
	uint32_t		w = 0, got = 0;
	long			n = 0, base;
	int			i, bad = 0;
	char			what[64];

	snprintf(what, sizeof what, "%s_server_start", name);
	if (!ss_server(&sv, what))
		return;
	snprintf(what, sizeof what, "%s_setup", name);
	if (!check(what, ss_setup(&c, &sv) == 0, "no session"))
		goto out;
	for (i = 0; i < ROUNDS && !bad && n == 0; i++) {
		/* The first 8 of a session's run are made on the loop. */
		base = ss_spied(1) > 0 ? ss_spied(1) : 0;
		bad |= ss_launches(&c, RUN_A, &w) != 0;
		bad |= ss_wait_launched(base + 10) != 0;
		bad |= ss_launches(&c, RUN_B, &w) != 0;
		if (drain)
			bad |= stats(&c, &st) != 0;
		n = ss_wait_flushed();
	}
	snprintf(what, sizeof what, "%s_sent", name);
	check(what, !bad, "a send failed, or the launches were not made");
	snprintf(what, sizeof what, "%s_flushed", name);
	check(what, n == 0, "%ld launches left unflushed (run %d)", n, i);
	snprintf(what, sizeof what, "%s_offloop", name);
	check(what, stats(&c, &st) == 0 && st.launches_offloop > 0,
	    "no launch went to a strand");
	snprintf(what, sizeof what, "%s_made", name);
	check(what, ss_result(&c, &got) && got == w,
	    "the buffer holds %u, want %u", got, w);
out:
	conn_close(&c);
	snprintf(what, sizeof what, "%s_server_exit", name);
	srv_stop(&sv, what);
}

/* Runs of launches, each then nothing. */
static void
test_idle(void)
{
	ss_runs("idle", 0);
}

/* Runs of launches, each then a Stats (no launch: a drain). */
static void
test_drained(void)
{
	ss_runs("drained", 1);
}

#define NBUSY		8		/* queues kept busy: VCL_SUBMITTERS */
#define BUSY_Q		30		/* their ids, and their kernels' */
#define BUSY_K		40
#define BUSY_WAIT	32		/* launches kept waiting, each */
#define VICTIM_GWS	7		/* the other session's, marked */

/* Send n launches of kmul on each busy queue (its own kernel). */
static int
ss_feed(struct conn *c, int n)
{
	Vcl__KernelArg	 a, *ap = &a;
	int		 i, q, bad = 0;

	vcl__kernel_arg__init(&a);
	a.index = 0;
	a.type = VCL__KERNEL_ARG__TYPE__MEM;
	a.has_mem = 1;
	a.mem = BUF;
	for (i = 0; i < n; i++)
		for (q = 0; q < NBUSY; q++)
			bad |= raw_ndrange(c, BUSY_Q + q, BUSY_K + q, NWORDS,
			    0, &ap, 1, 0) != 0;
	return (bad ? -1 : 0);
}

/*
 * One session keeps a queue per submission thread busy (launches fed as
 * fast as the slow strand threads make them, so that about BUSY_WAIT wait
 * on each: none runs dry, none fills and makes the loop wait), while
 * another session hands launches to its own queue's strand and asks for
 * its flush: that strand waits for a thread. It gets one at the next
 * launch a busy strand makes (those go behind it), not when the busy
 * session stops sending: checked by the other session's launches (of a
 * size the spy marks) made and flushed while the busy queues are fed.
 */
static void
test_fair(void)
{
	struct srv	sv;
	struct conn	c, v;
	Vcl__KernelArg	a, *ap = &a;
	char		mark[16];
	uint32_t	w = 0;
	long		n = -1, sent, need;
	int		i, bad = 0;

	c.fd = v.fd = -1;
	snprintf(mark, sizeof mark, "%d", VICTIM_GWS);
	if (!ss_server_with(&sv, "fair_server_start", "5000", mark))
		return;
	if (!check("fair_setup", ss_setup(&v, &sv) == 0 &&
	    ss_setup(&c, &sv) == 0, "no session"))
		goto out;
	for (i = 0; i < NBUSY && !bad; i++)
		bad |= create_queue(&c, BUSY_Q + i, CTX) != 0 ||
		    raw_kernel(&c, BUSY_K + i, PROG, "kmul") != 0;
	/* A run of launches; then every busy queue's strand has plenty. */
	bad |= ss_launches(&c, 8, &w) != 0 || ss_feed(&c, BUSY_WAIT) != 0;
	sent = 8 + NBUSY * BUSY_WAIT;
	bad |= ss_wait_launched(8 + NBUSY) != 0;
	if (!check("fair_busy", !bad, "the busy session failed"))
		goto out;
	/* The other session: 8 launches on the loop, 4 for its strand. */
	vcl__kernel_arg__init(&a);
	a.index = 0;
	a.type = VCL__KERNEL_ARG__TYPE__MEM;
	a.has_mem = 1;
	a.mem = BUF;
	for (i = 0; i < 12 && !bad; i++)
		bad |= raw_ndrange(&v, Q, K_MUL, VICTIM_GWS, 0, &ap, 1, 0) !=
		    0;
	for (i = 0; i < 300 && !bad; i++) {
		if ((n = ss_spied(3)) == 0 && ss_spied(4) == 12)
			break;
		n += 12 - ss_spied(4);
		/* What the busy strands made since, sent again. */
		need = NBUSY * BUSY_WAIT - (sent - (ss_spied(1) -
		    ss_spied(4)));
		if (need >= NBUSY) {
			bad |= ss_feed(&c, (int)(need / NBUSY)) != 0;
			sent += need / NBUSY * NBUSY;
		}
		poll_wait();
	}
	check("fair_sent", !bad, "a send failed");
	check("fair_flushed", n == 0, "%ld of the other session's launches "
	    "left unmade or unflushed while the busy queues were fed", n);
	check("fair_finish", raw_finish(&v, Q) == 0, "the finish failed");
out:
	conn_close(&c);
	conn_close(&v);
	srv_stop(&sv, "fair_server_exit");
}

/*
 * A flush that blocks (VCL_TEST_FLUSH_HOLD: a flush on a strand waits
 * until its queue goes, as a runtime that blocks in clFlush would) with
 * launches behind it on the strand: a finish, which needs them made,
 * has the loop make them, and its reply comes long before the flush ends
 * (a loop that waited for the strand's thread would wait for the flush).
 */
static void
test_held(void)
{
	struct srv		sv;
	struct conn		c;
	Vcl__StatsResult	st;
	uint32_t		w = 0, got = 0;
	int			ok;

	setenv("VCL_TEST_FLUSH_HOLD", "1", 1);
	ok = ss_server(&sv, "held_server_start");
	unsetenv("VCL_TEST_FLUSH_HOLD");
	if (!ok)
		return;
	if (!check("held_setup", ss_setup(&c, &sv) == 0, "no session"))
		goto out;
	/* The strand's flush of the first ones waits; more come behind. */
	check("held_sent", ss_launches(&c, RUN_A, &w) == 0 &&
	    ss_wait_launched(9) == 0 && ss_launches(&c, RUN_B, &w) == 0,
	    "a send failed, or no launch was made");
	check("held_made", ss_result(&c, &got) && got == w,
	    "the buffer holds %u, want %u", got, w);
	check("held_offloop", stats(&c, &st) == 0 &&
	    st.launches_offloop > 0, "no launch went to a strand");
out:
	conn_close(&c);
	srv_stop(&sv, "held_server_exit");
}

static const struct test tests[] = {
	{ "idle", test_idle, 60 },
	{ "drained", test_drained, 60 },
	{ "fair", test_fair, 90 },
	{ "held", test_held, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
