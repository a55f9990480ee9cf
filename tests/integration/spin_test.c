/* spin_test.c - the loop's look for input before it sleeps (--spin-us). */

/*
 * usage: spin_test VCLSERVER
 *
 * After a session's input the server's loop polls its sockets without
 * blocking for --spin-us before it sleeps, so a client's next request,
 * sent right after a reply, is read with no wakeup. Stats spin_hits
 * counts the passes that found input. These tests check that the look
 * happens and is counted, that it never happens with --spin-us 0, that
 * the loop still serves every session and still stops on SIGTERM while
 * it looks, and that a session's requests run whole during it (kernels
 * and reads checked word for word). The harness is rawproto.c.
 */

#include "rawproto.h"

enum { CTX = 1, Q, BUF, PROG, K };

#define TRIPS_MAX	2000	/* round trips to wait for one hit */
#define NWORDS		64

static const char sp_src[] =
	"__kernel void kadd(__global uint *b, uint v)\n"
	"{ b[get_global_id(0)] += v; }\n";

/* The loop's hits so far, or UINT64_MAX when Stats fails. */
static uint64_t
sp_hits(struct conn *c)
{
	Vcl__StatsResult	st;

	if (stats(c, &st) != 0 || !st.has_spin_hits)
		return (UINT64_MAX);
	return (st.spin_hits);
}

/* A server with the look set to us microseconds. */
static int
sp_server(struct srv *sv, const char *name, const char *us)
{
	const char	*extra[] = { "--spin-us", us, NULL };

	return (srv_start(sv, name, "127.0.0.1:0", extra));
}

/*
 * On a server looking for us microseconds, Stats round trips until one
 * pass of the look found input (at most trips); the hits then, or
 * UINT64_MAX when the session or Stats failed.
 */
static uint64_t
sp_trips(const char *name, const char *us, int trips)
{
	struct srv	sv = { 0 };
	struct conn	c = { .fd = -1 };
	char		what[64];
	uint64_t	h = UINT64_MAX;
	int		i;

	snprintf(what, sizeof what, "%s_server", name);
	if (!sp_server(&sv, what, us))
		return (UINT64_MAX);
	snprintf(what, sizeof what, "%s_session", name);
	if (check(what, conn_session(&c, &sv) == 0, "no session"))
		for (i = 0; i < trips && (h = sp_hits(&c)) == 0; i++)
			;
	conn_close(&c);
	snprintf(what, sizeof what, "%s_server_exit", name);
	srv_stop(&sv, what);
	return (h);
}

/* Requests sent right after their replies land in the look. */
static void
test_hits(void)
{
	uint64_t	h = sp_trips("hits", "1000", TRIPS_MAX);

	check("hits_counted", h != UINT64_MAX && h > 0,
	    "spin_hits %llu after up to %d round trips, want some",
	    (unsigned long long)h, TRIPS_MAX);
}

/* --spin-us 0: the loop sleeps at once, and nothing is counted. */
static void
test_off(void)
{
	uint64_t	h = sp_trips("off", "0", 200);

	check("off_none", h == 0, "spin_hits %llu with --spin-us 0",
	    (unsigned long long)h);
}

/*
 * While the loop looks for one session's input, another's is served:
 * two sessions take turns adding to their buffers with kernels, each
 * read back and checked after every turn; then SIGTERM right after a
 * reply (inside the look) stops the server cleanly (srv_stop).
 */
static void
test_serve(void)
{
	struct srv		 sv = { 0 };
	struct conn		 c[2] = { { .fd = -1 }, { .fd = -1 } };
	Vcl__KernelArg		 a0 = VCL__KERNEL_ARG__INIT;
	Vcl__KernelArg		 a1 = VCL__KERNEL_ARG__INIT;
	Vcl__KernelArg		*args[2] = { &a0, &a1 };
	struct reply		 rp;
	uint32_t		 zero[NWORDS] = { 0 }, v, want[2] = { 0, 0 };
	const uint32_t		*w;
	int			 i, k, j, bad = 0;

	if (!sp_server(&sv, "serve_server", "1000"))
		return;
	for (k = 0; k < 2; k++)
		if (!check("serve_setup", conn_session(&c[k], &sv) == 0 &&
		    create_context(&c[k], CTX) == 0 &&
		    create_queue(&c[k], Q, CTX) == 0 &&
		    create_buffer(&c[k], BUF, CTX, sizeof zero, zero,
		    sizeof zero) == 0 &&
		    create_program(&c[k], PROG, CTX, sp_src) == 0 &&
		    raw_build(&c[k], PROG, NULL) == 0 &&
		    raw_kernel(&c[k], K, PROG, "kadd") == 0,
		    "session %d not set up", k))
			goto out;
	a0.index = 0;
	a0.type = VCL__KERNEL_ARG__TYPE__MEM;
	a0.has_mem = 1;
	a0.mem = BUF;
	a1.index = 1;
	a1.has_value = 1;
	a1.value.len = sizeof v;
	a1.value.data = (uint8_t *)&v;
	for (i = 0; i < 40 && !bad; i++) {
		k = i % 2;
		v = (uint32_t)(i * 7 + 1);
		want[k] += v;
		if (raw_ndrange(&c[k], Q, K, NWORDS, 0, args, 2, 0) != 0 ||
		    read_buffer(&c[k], Q, BUF, sizeof zero, &rp) != 0) {
			bad = 1;
			break;
		}
		w = (const uint32_t *)rp.bulk;
		if (rp.r->status != CL_SUCCESS ||
		    rp.bulk_len != sizeof zero)
			bad = 1;
		for (j = 0; !bad && j < NWORDS; j++)
			bad = w[j] != want[k];
		reply_free(&rp);
	}
	check("serve_turns", !bad, "turn %d of session %d: wrong words or "
	    "call failed", i, k);
	check("serve_looked", sp_hits(&c[0]) > 0 && sp_hits(&c[0]) !=
	    UINT64_MAX, "no pass of the look found input");
out:
	conn_close(&c[0]);
	conn_close(&c[1]);
	/* Right after a reply: the loop is looking when SIGTERM lands. */
	srv_stop(&sv, "serve_server_exit");
}

static const struct test tests[] = {
	{ "hits", test_hits, 60 },
	{ "off", test_off, 60 },
	{ "serve", test_serve, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
