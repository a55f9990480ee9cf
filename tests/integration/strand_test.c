/* strand_test.c - launches made on their queue's strand, off the loop. */

/*
 * usage: strand_test VCLSERVER
 *
 * A launch that needs nothing back (no event, no wait list, its arguments
 * set already) may go to its queue's strand, where a submission thread
 * makes the runtime call while the loop decodes the next request
 * (vcl_submit.c). The servers here run with VCL_LAUNCH_STRAND=1 (every
 * such launch goes) and VCL_TEST_STRAND_DELAY_US (the strand's thread is
 * slow, so launches wait there while the loop runs on). Each test sends
 * launches whose results depend on their order, with the requests that
 * must come after them (an argument changed, a launch with an event or a
 * wait list, a failed launch, a finish, a release, the session's end)
 * in between, and checks what the kernels wrote against the same steps
 * made here. The harness is rawproto.c.
 */

#include "rawproto.h"

static const char st_src[] =
	"__kernel void kstep(__global uint *b, uint v)\n"
	"{ b[get_global_id(0)] = b[get_global_id(0)] * 3u + v; }\n"
	"__kernel void kmul(__global uint *b)\n"
	"{ b[get_global_id(0)] = b[get_global_id(0)] * 5u + 1u; }\n";

/* Ids of one session's objects. */
enum {
	CTX = 1, Q, Q2, PROG, BUF_A, BUF_B, EV, EV2,
	K_STEP = 20, K_MUL, K_STEP2,
};

#define NWORDS		16		/* uints in a test buffer */
#define DELAY_US	"200"		/* the strand's thread, per launch */

/* The steps made here: one launch of kstep (v) or kmul (v < 0). */
static uint32_t
st_model(uint32_t x, long v)
{
	return (v < 0 ? x * 5u + 1u : x * 3u + (uint32_t)v);
}

/* A buffer of NWORDS uints, each x. */
static int
st_buffer(struct conn *c, uint64_t id, uint32_t x)
{
	uint32_t	w[NWORDS];
	int		i;

	for (i = 0; i < NWORDS; i++)
		w[i] = x;
	return (create_buffer(c, id, CTX, sizeof w, w, sizeof w));
}

/* Start a server whose launches go to their strands, slowly. */
static int
st_server(struct srv *sv, const char *name)
{
	int	ok;

	setenv("VCL_LAUNCH_STRAND", "1", 1);
	setenv("VCL_TEST_STRAND_DELAY_US", DELAY_US, 1);
	ok = srv_start(sv, name, "127.0.0.1:0", NULL);
	unsetenv("VCL_LAUNCH_STRAND");
	unsetenv("VCL_TEST_STRAND_DELAY_US");
	return (ok);
}

/* A session with two queues, two buffers (0 and 1), kernels built. */
static int
st_setup(struct conn *c, const struct srv *sv)
{
	c->fd = -1;
	if (conn_session(c, sv) != 0 || create_context(c, CTX) != 0 ||
	    create_queue(c, Q, CTX) != 0 || create_queue(c, Q2, CTX) != 0 ||
	    st_buffer(c, BUF_A, 0) != 0 || st_buffer(c, BUF_B, 1) != 0 ||
	    create_program(c, PROG, CTX, st_src) != 0 ||
	    raw_build(c, PROG, NULL) != 0)
		return (-1);
	if (raw_kernel(c, K_STEP, PROG, "kstep") != 0 ||
	    raw_kernel(c, K_MUL, PROG, "kmul") != 0 ||
	    raw_kernel(c, K_STEP2, PROG, "kstep") != 0)
		return (-1);
	return (0);
}

/* Send kernel k on queue q over buffer mem: kstep with v, or kmul. */
static int
st_send(struct conn *c, uint64_t q, uint64_t k, uint64_t mem, long v,
    uint64_t lws, uint64_t ev)
{
	Vcl__KernelArg	 a[2], *ap[2] = { &a[0], &a[1] };
	uint32_t	 x = (uint32_t)v;

	vcl__kernel_arg__init(&a[0]);
	a[0].index = 0;
	a[0].type = VCL__KERNEL_ARG__TYPE__MEM;
	a[0].has_mem = 1;
	a[0].mem = mem;
	vcl__kernel_arg__init(&a[1]);
	a[1].index = 1;
	a[1].type = VCL__KERNEL_ARG__TYPE__VALUE;
	a[1].has_value = 1;
	a[1].value.data = (uint8_t *)&x;
	a[1].value.len = sizeof x;
	return (raw_ndrange(c, q, k, NWORDS, lws, ap, k == K_MUL ? 1 : 2, ev));
}

/* Does buffer mem (read on q) hold want in every word? */
static int
st_holds(struct conn *c, uint64_t q, uint64_t mem, uint32_t want,
    uint32_t *got)
{
	struct reply	rp;
	uint32_t	w[NWORDS];
	int		i, ok = 0;

	*got = ~want;
	if (read_buffer(c, q, mem, sizeof w, &rp) != 0)
		return (0);
	if (rp.r->status == 0 && rp.bulk_len == sizeof w) {
		memcpy(w, rp.bulk, sizeof w);
		for (i = 0, ok = 1; i < NWORDS; i++)
			ok &= w[i] == want;
		*got = w[0];
	}
	reply_free(&rp);
	return (ok);
}

/* Launches made on strands so far (Stats launches_offloop). */
static uint64_t
st_offloop(struct conn *c)
{
	Vcl__StatsResult	st;

	if (stats(c, &st) != 0 || !st.has_launches_offloop)
		return (0);
	return (st.launches_offloop);
}

/*
 * Runs of the same kernel whose by-value argument changes every 20
 * launches, on two queues at once (each its own kernel and buffer): a
 * set made while the strand still has launches of the old value would
 * reach them.
 */
static void
test_order(void)
{
	struct srv	sv;
	struct conn	c;
	uint32_t	wa = 0, wb = 1, got = 0;
	uint64_t	n0;
	int		i, bad = 0;

	if (!st_server(&sv, "order_server_start"))
		return;
	if (!check("order_setup", st_setup(&c, &sv) == 0, "no session"))
		goto out;
	n0 = st_offloop(&c);
	for (i = 0; i < 300 && !bad; i++) {
		bad |= st_send(&c, Q, K_STEP, BUF_A, i / 20, 0, 0) != 0;
		wa = st_model(wa, i / 20);
		if (i % 3 == 0) {
			bad |= st_send(&c, Q2, K_STEP2, BUF_B, 7 + i / 50, 0,
			    0) != 0;
			wb = st_model(wb, 7 + i / 50);
		}
	}
	check("order_sent", !bad, "a send failed");
	check("order_finish", raw_finish(&c, Q) == 0 && raw_finish(&c, Q2) ==
	    0, "a finish failed");
	check("order_queue_a", st_holds(&c, Q, BUF_A, wa, &got),
	    "buffer A holds %u, want %u", got, wa);
	check("order_queue_b", st_holds(&c, Q, BUF_B, wb, &got),
	    "buffer B holds %u, want %u", got, wb);
	/* Else nothing here went through a strand. */
	check("order_offloop", st_offloop(&c) - n0 >= 200,
	    "%llu launches on strands, want >= 200",
	    (unsigned long long)(st_offloop(&c) - n0));
out:
	conn_close(&c);
	srv_stop(&sv, "order_server_exit");
}

/*
 * Launches the loop makes itself, after strand launches of the same queue
 * and with their arguments set already (no set drains the strand for
 * them): one that waits on an event, one that asks for an event.
 */
static void
test_inline_after(void)
{
	struct srv	sv;
	struct conn	c;
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__KernelArg	a, *ap = &a;
	Vcl__NDRange	m = VCL__NDRANGE__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;
	uint64_t	g = NWORDS, ev = EV;
	uint32_t	w = 0, got = 0;
	int		i, k, bad = 0;

	if (!st_server(&sv, "inline_server_start"))
		return;
	if (!check("inline_setup", st_setup(&c, &sv) == 0, "no session"))
		goto out;
	/* kmul's argument is set here, by a launch with an event. */
	bad |= st_send(&c, Q, K_MUL, BUF_A, -1, 0, EV) != 0;
	w = st_model(w, -1);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < 40; i++) {
			bad |= st_send(&c, Q, K_STEP, BUF_A, 2, 0, 0) != 0;
			w = st_model(w, 2);
		}
		if (k == 1) {	/* with an event: EV2 */
			bad |= st_send(&c, Q, K_MUL, BUF_A, -1, 0, EV + 1) !=
			    0;
			w = st_model(w, -1);
			continue;
		}
		/* Waiting on EV, which is complete or nearly. */
		vcl__kernel_arg__init(&a);
		a.index = 0;
		a.type = VCL__KERNEL_ARG__TYPE__MEM;
		a.has_mem = 1;
		a.mem = BUF_A;
		e.queue = Q;
		e.n_wait = 1;
		e.wait = &ev;
		m.q = &e;
		m.kernel = K_MUL;
		m.work_dim = 1;
		m.n_global = 1;
		m.global = &g;
		m.n_args = 1;
		m.args = &ap;
		r.call_case = VCL__REQUEST__CALL_NDRANGE;
		r.ndrange = &m;
		bad |= send_req(&c, &r, NULL, 0) != 0;
		w = st_model(w, -1);
	}
	for (i = 0; i < 40; i++) {
		bad |= st_send(&c, Q, K_STEP, BUF_A, 2, 0, 0) != 0;
		w = st_model(w, 2);
	}
	check("inline_sent", !bad, "a send failed");
	check("inline_finish", raw_finish(&c, Q) == 0, "the finish failed");
	check("inline_order", st_holds(&c, Q, BUF_A, w, &got),
	    "buffer A holds %u, want %u", got, w);
out:
	conn_close(&c);
	srv_stop(&sv, "inline_server_exit");
}

/*
 * A launch the runtime refuses on the strand (its global size is not a
 * multiple of its local size, which the server's own checks let by):
 * the queue's next finish reports it, the launches around it are made,
 * and the finish after that succeeds.
 */
static void
test_error(void)
{
	struct srv	sv;
	struct conn	c;
	uint32_t	w = 0, got = 0;
	int		i, bad = 0, st;

	if (!st_server(&sv, "error_server_start"))
		return;
	if (!check("error_setup", st_setup(&c, &sv) == 0, "no session"))
		goto out;
	/* The refused launch's arguments are set already: it goes too. */
	for (i = 0; i < 30; i++) {
		bad |= st_send(&c, Q, K_STEP, BUF_A, 4, i == 20 ? 3 : 0, 0)
		    != 0;
		if (i != 20)
			w = st_model(w, 4);
	}
	check("error_sent", !bad, "a send failed");
	st = raw_finish(&c, Q);
	check("error_reported", st == CL_INVALID_WORK_GROUP_SIZE,
	    "finish says %d, want CL_INVALID_WORK_GROUP_SIZE (%d)", st,
	    CL_INVALID_WORK_GROUP_SIZE);
	check("error_once", raw_finish(&c, Q) == 0,
	    "the finish after it failed too");
	check("error_others_made", st_holds(&c, Q, BUF_A, w, &got),
	    "buffer A holds %u, want %u", got, w);
out:
	conn_close(&c);
	srv_stop(&sv, "error_server_exit");
}

/*
 * Objects released, and a session that ends, while its strands still
 * hold launches of them: the server makes those first (ASan and valgrind
 * see any use after a free), stays up, and is left with nothing.
 */
static void
test_release(void)
{
	struct srv		sv;
	struct conn		c, c2;
	Vcl__StatsResult	st;
	uint32_t		w = 1, got = 0;
	int			i, bad = 0;

	c2.fd = -1;
	if (!st_server(&sv, "release_server_start"))
		return;
	if (!check("release_setup", st_setup(&c, &sv) == 0, "no session"))
		goto out;
	for (i = 0; i < 100; i++) {
		bad |= st_send(&c, Q2, K_MUL, BUF_B, -1, 0, 0) != 0;
		w = st_model(w, -1);
	}
	/* The kernel goes while its launches wait. */
	bad |= release(&c, VCL__KIND__KIND_KERNEL, K_MUL) != 0;
	check("release_kernel_made", !bad && raw_finish(&c, Q2) == 0 &&
	    st_holds(&c, Q2, BUF_B, w, &got), "buffer B holds %u, want %u",
	    got, w);
	/* The queue goes while its launches wait; a marker then comes. */
	for (i = 0; i < 100; i++)
		bad |= st_send(&c, Q, K_STEP, BUF_A, 1, 0, 0) != 0;
	bad |= release(&c, VCL__KIND__KIND_QUEUE, Q) != 0;
	check("release_sent", !bad, "a send failed");
	check("release_queue_after", raw_finish(&c, Q2) == 0,
	    "a finish after the release failed");
	/* Now the session goes with 200 launches waiting. */
	for (i = 0; i < 200; i++)
		bad |= st_send(&c, Q2, K_STEP, BUF_A, 1, 0, 0) != 0;
	conn_close(&c);
	check("release_other_session", conn_session(&c2, &sv) == 0 &&
	    wait_empty(&c2, &st) == 0, "the server kept objects, or is gone");
out:
	conn_close(&c2);
	conn_close(&c);
	srv_stop(&sv, "release_server_exit");
}

/*
 * A launch then a finish, over and over: the loop makes each itself (a
 * strand's thread would have to wake before the finish could go on).
 */
static void
test_lone(void)
{
	struct srv	sv;
	struct conn	c;
	uint32_t	w = 0, got = 0;
	uint64_t	n0;
	int		i, bad = 0;

	if (!st_server(&sv, "lone_server_start"))
		return;
	if (!check("lone_setup", st_setup(&c, &sv) == 0, "no session"))
		goto out;
	n0 = st_offloop(&c);
	for (i = 0; i < 20 && !bad; i++) {
		bad |= st_send(&c, Q, K_STEP, BUF_A, 1, 0, 0) != 0 ||
		    raw_finish(&c, Q) != 0;
		w = st_model(w, 1);
	}
	check("lone_made", !bad && st_holds(&c, Q, BUF_A, w, &got),
	    "buffer A holds %u, want %u", got, w);
	check("lone_on_loop", st_offloop(&c) == n0,
	    "%llu launches on strands, want 0",
	    (unsigned long long)(st_offloop(&c) - n0));
out:
	conn_close(&c);
	srv_stop(&sv, "lone_server_exit");
}

/* The asking session's charged bytes (Stats session_bytes), or 0. */
static uint64_t
st_bytes(struct conn *c)
{
	Vcl__StatsResult	st;

	return (stats(c, &st) == 0 ? st.session_bytes : 0);
}

/*
 * A strand's ring of launches is charged to its session when the queue
 * first hands one, and given back with the queue; a session with no room
 * for it has its launches made on the loop, still right.
 */
static void
test_charged(void)
{
	struct srv		 sv;
	struct conn		 c;
	static const char *const tight[] = { "--max-session-bytes", "4K",
				    NULL };
	uint32_t		 w = 0, got = 0;
	uint64_t		 b0, b1, n0;
	int			 i, bad = 0;

	if (!st_server(&sv, "charged_server_start"))
		return;
	if (!check("charged_setup", st_setup(&c, &sv) == 0, "no session"))
		goto next;
	b0 = st_bytes(&c);
	for (i = 0; i < 20; i++)
		bad |= st_send(&c, Q2, K_STEP, BUF_A, 1, 0, 0) != 0;
	bad |= raw_finish(&c, Q2) != 0;
	b1 = st_bytes(&c);
	/* 64 launches of at least 9 words each. */
	check("charged_ring", !bad && b1 >= b0 + 64 * 72,
	    "session bytes %llu -> %llu after a strand's first launches",
	    (unsigned long long)b0, (unsigned long long)b1);
	bad |= release(&c, VCL__KIND__KIND_QUEUE, Q2) != 0;
	check("charged_given_back", !bad && st_bytes(&c) == b0,
	    "session bytes %llu after the queue went, want %llu",
	    (unsigned long long)st_bytes(&c), (unsigned long long)b0);
next:
	conn_close(&c);
	srv_stop(&sv, "charged_server_exit");
	setenv("VCL_LAUNCH_STRAND", "1", 1);
	i = srv_start(&sv, "charged_tight_start", "127.0.0.1:0", tight);
	unsetenv("VCL_LAUNCH_STRAND");
	if (!i)
		return;
	if (!check("charged_tight_setup", st_setup(&c, &sv) == 0,
	    "no session under --max-session-bytes 4K"))
		goto out;
	n0 = st_offloop(&c);
	for (i = 0, bad = 0; i < 40; i++) {
		bad |= st_send(&c, Q, K_STEP, BUF_A, 2, 0, 0) != 0;
		w = st_model(w, 2);
	}
	check("charged_tight_made", !bad && raw_finish(&c, Q) == 0 &&
	    st_holds(&c, Q, BUF_A, w, &got), "buffer A holds %u, want %u",
	    got, w);
	check("charged_tight_on_loop", st_offloop(&c) == n0,
	    "%llu launches on strands with no room for a ring, want 0",
	    (unsigned long long)(st_offloop(&c) - n0));
out:
	conn_close(&c);
	srv_stop(&sv, "charged_tight_exit");
}

/* VCL_LAUNCH_STRAND=0: every launch is made on the loop. */
static void
test_off(void)
{
	struct srv	sv;
	struct conn	c;
	uint32_t	w = 0, got = 0;
	int		i, bad = 0;

	setenv("VCL_LAUNCH_STRAND", "0", 1);
	i = srv_start(&sv, "off_server_start", "127.0.0.1:0", NULL);
	unsetenv("VCL_LAUNCH_STRAND");
	if (!i)
		return;
	if (!check("off_setup", st_setup(&c, &sv) == 0, "no session"))
		goto out;
	for (i = 0; i < 50; i++) {
		bad |= st_send(&c, Q, K_STEP, BUF_A, 1, 0, 0) != 0;
		w = st_model(w, 1);
	}
	check("off_made", !bad && raw_finish(&c, Q) == 0 &&
	    st_holds(&c, Q, BUF_A, w, &got), "buffer A holds %u, want %u",
	    got, w);
	check("off_none_offloop", st_offloop(&c) == 0,
	    "%llu launches on strands, want 0",
	    (unsigned long long)st_offloop(&c));
out:
	conn_close(&c);
	srv_stop(&sv, "off_server_exit");
}

static const struct test tests[] = {
	{ "order", test_order, 60 },
	{ "inline_after", test_inline_after, 60 },
	{ "error", test_error, 60 },
	{ "release", test_release, 60 },
	{ "lone", test_lone, 60 },
	{ "charged", test_charged, 60 },
	{ "off", test_off, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
