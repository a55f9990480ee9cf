/* attack8_test.c - hostile clients against keepalives and dialled links. */

/*
 * usage: attack8_test VCLSERVER
 *
 * Raw-protocol clients that ask for keepalives the server must refuse,
 * and that close their sessions while the links they made the server
 * dial are still in their handshakes, over and over. Each time the
 * server answers what it must, holds nothing once the sessions went, and
 * serves the next one.
 */

#include "rawproto.h"

#define LOOPS		40	/* sessions that close while dialling */

enum {
	CTX = 1, Q, PROG, KERN, MEM,
};

/*
 * Hello asking for keepalives every ms (has: the field is set). Returns
 * the reply's status, or 1 for no reply; *msg_ok: the reply names
 * keepalive_ms.
 */
static int
hello_keepalive(struct conn *c, int has, uint32_t ms, int *msg_ok)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Hello	h = VCL__HELLO__INIT;
	struct reply	rp;
	int		st;

	h.version = VCL_PROTOCOL_VERSION;
	h.client_name = "attack8_test";
	h.has_keepalive_ms = has;
	h.keepalive_ms = ms;
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.r->status;
	*msg_ok = msg_has(&rp, "keepalive_ms");
	reply_free(&rp);
	return (st);
}

/*
 * Hello.keepalive_ms outside 100 ms to an hour is refused with
 * CL_INVALID_VALUE and a message naming it, and the connection closes:
 * an interval under the loop's tick cannot be kept, and zero or one past
 * the hour is no interval a client means. Both bounds are taken, and a
 * session that asked for 100 ms hears keepalives while its Finish waits
 * on a long kernel.
 */
static void
test_keepalive_bounds(void)
{
	static const uint32_t	 bad[] = { 0, 1, 99, 3600001, UINT32_MAX };
	static const uint32_t	 good[] = { 100, 3600000 };
	struct srv		 sv;
	struct conn		 c;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Finish		 fr = VCL__FINISH__INIT;
	struct reply		 rp;
	Vcl__StatsResult	 sst;
	char			 name[64];
	size_t			 i;
	int			 st, msg = 0, seen = 0, k;

	c.fd = -1;
	if (!srv_start(&sv, "ka_start", "127.0.0.1:0", NULL))
		return;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(name, sizeof name, "ka_refused_%u", bad[i]);
		if (conn_open(&c, &sv) != 0) {
			check(name, 0, "no connection");
			goto out;
		}
		msg = 0;
		st = hello_keepalive(&c, 1, bad[i], &msg);
		check(name, st == CL_INVALID_VALUE && msg, "keepalive_ms %u: "
		    "status %d (1: no reply), want CL_INVALID_VALUE naming "
		    "keepalive_ms", bad[i], st);
		snprintf(name, sizeof name, "ka_refused_%u_closed", bad[i]);
		check(name, wait_closed(&c) == 1, "the session refused stays "
		    "open");
		conn_close(&c);
	}
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		snprintf(name, sizeof name, "ka_taken_%u", good[i]);
		if (conn_open(&c, &sv) != 0) {
			check(name, 0, "no connection");
			goto out;
		}
		st = hello_keepalive(&c, 1, good[i], &msg);
		if (!check(name, st == CL_SUCCESS, "keepalive_ms %u: status "
		    "%d", good[i], st))
			goto out;
		if (good[i] == 100)
			break;		/* this session goes on below */
		conn_close(&c);
	}
	/*
	 * A kernel of a billion steps holds the queue, and a Finish waits
	 * behind it: keepalives come until its reply does.
	 */
	fr.queue = Q;
	r.call_case = VCL__REQUEST__CALL_FINISH;
	r.finish = &fr;
	if (!check("ka_spin_setup", create_context(&c, CTX) == 0 &&
	    create_queue(&c, Q, CTX) == 0 && raw_spin_setup(&c, CTX, PROG,
	    KERN, MEM) == 0 && raw_spin_send(&c, Q, KERN, MEM, 1u << 30) ==
	    0 && send_req(&c, &r, NULL, 0) == 0, "no spin kernel"))
		goto out;
	for (k = 0, st = 1; k < 100000 && st == 1; k++) {
		if (recv_msg(&c, &rp) != 0)
			break;
		if (rp.tc->has_keepalive && rp.tc->keepalive)
			seen++;
		if (rp.r != NULL && rp.r->seq == r.seq)
			st = rp.r->status;
		reply_free(&rp);
	}
	check("ka_sent", seen > 0, "no keepalive while a finish waited on a "
	    "kernel, for a session that asked for them every 100 ms");
	check("ka_finish", st == CL_SUCCESS, "the finish: %d (1: no reply)",
	    st);
	release(&c, VCL__KIND__KIND_KERNEL, KERN);
	release(&c, VCL__KIND__KIND_PROGRAM, PROG);
	release(&c, VCL__KIND__KIND_MEM, MEM);
	release(&c, VCL__KIND__KIND_QUEUE, Q);
	release(&c, VCL__KIND__KIND_CONTEXT, CTX);
	check("ka_settle", wait_empty(&c, &sst) == 0, "objects %llu left",
	    (unsigned long long)sst.objects);
out:
	check("ka_alive", srv_alive(&sv), "server gone (%s); see %s/stderr",
	    srv_how(&sv), sv.dir);
	conn_close(&c);
	srv_stop(&sv, "ka_exit");
}

/*
 * Sessions that close while the links they asked for are being dialled,
 * one after another: to an address that accepts and never speaks, and to
 * a real server whose handshake is under way as the session goes. Each
 * closing session's link goes with it (no orphan, no link naming a
 * session freed); the server ends with no link to the silent address,
 * holds no object, and a new session still dials within its share.
 */
static void
test_dial_loop(void)
{
	static const char *const args[] = { "--max-sessions", "4",
		"--handshake-timeout", "60", NULL };
	struct srv		 sv, dst;
	struct conn		 h, w;
	Vcl__StatsResult	 st;
	char			 mute[64], real[64];
	size_t			 n = 0;
	int			 lfd, i, rc = 0, ready = 0;

	h.fd = w.fd = -1;
	dst.pid = 0;
	if ((lfd = raw_mute_listener(mute, sizeof mute)) == -1) {
		check("loop_listener", 0, "no listener");
		return;
	}
	if (!srv_start(&sv, "loop_server_start", "127.0.0.1:0", args))
		goto out;
	if (!srv_start(&dst, "loop_dest_start", "127.0.0.1:0", NULL))
		goto out;
	snprintf(real, sizeof real, "127.0.0.1:%s", dst.port);
	if (!check("loop_watcher", conn_session(&w, &sv) == 0, "no session"))
		goto out;
	for (i = 0; i < LOOPS && rc == 0; i++) {
		if ((rc = conn_session(&h, &sv)) != 0)
			break;
		rc |= raw_forward_bogus(&h, mute, (uint64_t)i + 1);
		rc |= raw_forward_bogus(&h, real, (uint64_t)i + 1);
		/* Every other time, close before the server even read it. */
		if (i % 2 == 0)
			rc |= raw_links_now(&h, NULL, &n, &ready);
		conn_close(&h);
	}
	check("loop_sessions", rc == 0, "session %d of %d failed", i, LOOPS);
	rc = raw_wait_links_at_most(&w, 1, &n);
	rc |= raw_links_now(&w, mute, &n, &ready);
	check("loop_no_orphan", rc == 0 && ready == -1, "%zu links, the one "
	    "to the silent address %s after %d sessions that dialled it "
	    "closed (rc %d)", n, ready == 0 ? "still dialled" : "there",
	    LOOPS, rc);
	/* The watcher's own dial is within its share, as ever. */
	rc = raw_forward_bogus(&w, mute, 999);
	rc |= raw_links_now(&w, mute, &n, &ready);
	check("loop_dial_after", rc == 0 && ready == 0, "a new session's "
	    "dial after the loop: %s (rc %d)", ready == -1 ? "refused" :
	    "ready", rc);
	check("loop_empty", wait_empty(&w, &st) == 0, "objects %llu bytes "
	    "%llu left", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
	check("loop_alive", srv_alive(&sv) && srv_alive(&dst), "server %s, "
	    "destination %s", srv_how(&sv), srv_how(&dst));
out:
	close(lfd);
	conn_close(&h);
	conn_close(&w);
	if (dst.pid > 0)
		srv_stop(&dst, "loop_dest_exit");
	srv_stop(&sv, "loop_server_exit");
}

static const struct test tests[] = {
	{ "keepalive_bounds",	test_keepalive_bounds,	120 },
	{ "dial_loop",		test_dial_loop,		180 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof
	    tests[0]));
}
