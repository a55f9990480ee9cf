/* conn_test.c - vclserver connection handling under hostile clients. */

/*
 * usage: conn_test VCLSERVER [BUSY_CLIENT]
 *
 * Pre-authentication caps, the handshake, frame, idle and send deadlines,
 * failed-proof limits, log flooding, the input buffer's charge and the loop
 * staying free while large buffers are made and while one client floods
 * it with requests. Sources other than 127.0.0.1
 * are other loopback addresses (127.0.0.N), bound before connecting.
 */

#include <sys/resource.h>

#include <dirent.h>

#include "rawproto.h"

/* Connect from a loopback source address and read nothing. Returns fd. */
static int
raw_connect_from(const struct srv *sv, const char *src)
{
	struct sockaddr_in	a;
	struct timeval		tv = { RECV_TIMEOUT_S, 0 };
	int			fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	inet_pton(AF_INET, src, &a.sin_addr);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
		goto fail;
	a.sin_port = htons((uint16_t)atoi(sv->port));
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	return (fd);
fail:
	note("connect from %s: %s", src, strerror(errno));
	close(fd);
	return (-1);
}

/*
 * conn_open from a loopback source address. Returns 0 with the greeting
 * read, 1 when the server closed the connection first, -1.
 */
static int
conn_open_from(struct conn *c, const struct srv *sv, const char *src)
{
	struct reply	rp;
	int		rc;

	memset(c, 0, sizeof *c);
	if ((c->fd = raw_connect_from(sv, src)) == -1)
		return (-1);
	if ((rc = recv_msg(c, &rp)) != 0 || rp.tc->greeting == NULL) {
		if (rc == 0)
			reply_free(&rp);
		close(c->fd);
		c->fd = -1;
		return (rc == 1 ? 1 : -1);
	}
	c->auth_required = rp.tc->greeting->auth_required;
	c->nonce_len = rp.tc->greeting->nonce.len;
	if (c->nonce_len > sizeof c->nonce)
		c->nonce_len = sizeof c->nonce;
	memcpy(c->nonce, rp.tc->greeting->nonce.data, c->nonce_len);
	reply_free(&rp);
	return (0);
}

/* Lines of the server's stderr holding every one of the words (NULL-ended). */
static int
srv_log_count(const struct srv *sv, const char *a, const char *b)
{
	char	 path[PATH_MAX + 16], line[4096];
	FILE	*f;
	int	 n = 0;

	snprintf(path, sizeof path, "%s/stderr", sv->dir);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof line, f) != NULL)
		if (strstr(line, a) != NULL && (b == NULL ||
		    strstr(line, b) != NULL))
			n++;
	fclose(f);
	return (n);
}

/*
 * The longest "session N: CreateBuffer seq N took X ms" line of the
 * server's stderr: the loop logs every call that holds it 5 ms or more.
 */
static char	slowest_line[4096];

static double
srv_log_slowest(const struct srv *sv, const char *call)
{
	char	 path[PATH_MAX + 16], line[4096], *p;
	double	 ms, worst = 0;
	FILE	*f;

	snprintf(path, sizeof path, "%s/stderr", sv->dir);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof line, f) != NULL) {
		if (strstr(line, call) == NULL ||
		    (p = strstr(line, " took ")) == NULL)
			continue;
		if ((ms = strtod(p + 6, NULL)) > worst) {
			worst = ms;
			snprintf(slowest_line, sizeof slowest_line, "%s", line);
		}
	}
	fclose(f);
	return (worst);
}

/* Poll another session's Stats until the server has n sessions. */
static int
wait_sessions(struct conn *c, uint64_t n)
{
	Vcl__StatsResult	st = VCL__STATS_RESULT__INIT;
	int			i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, &st) != 0)
			return (-1);
		if (st.sessions == n)
			return (0);
		poll_wait();
	}
	note("%llu sessions, want %llu", (unsigned long long)st.sessions,
	    (unsigned long long)n);
	return (-1);
}

/* --- pre-authentication caps ---------------------------------------------- */

/*
 * Idle unauthenticated sockets do not count against --max-sessions: with
 * them open a good client still gets in. One address gets only its share
 * of unauthenticated connections; a flood from many addresses drops the
 * oldest, never the newcomer; authenticated sessions are what
 * --max-sessions counts, and the one over it is told why.
 */
static void
test_preauth(void)
{
	struct srv	 sv;
	struct conn	 g1, g2, g3, x;
	struct reply	 rp;
	char		 src[32];
	const char	*two[] = { "--max-sessions", "2", NULL };
	const char	*caps[] = { "--max-preauth", "8",
			    "--max-preauth-per-addr", "4", NULL };
	int		 idle[32], i, rc, n = 0;

	g1.fd = g2.fd = g3.fd = -1;
	/* Defaults but --max-sessions 2: idle sockets do not lock anyone out. */
	if (!srv_start(&sv, "preauth_server_start", "127.0.0.1:0", two))
		return;
	for (i = 0; i < 4; i++)
		if ((idle[n] = raw_connect_from(&sv, "127.0.0.2")) != -1)
			n++;
	check("preauth_idle_open", n == 4, "%d of 4 idle sockets", n);
	check("preauth_good_client_gets_in", conn_session(&g1, &sv) == 0 &&
	    conn_session(&g2, &sv) == 0, "no session for a good client while "
	    "4 idle sockets are open (--max-sessions 2)");

	/* Two authenticated: the third is refused at its Hello, with why. */
	if (conn_open(&g3, &sv) == 0) {
		rc = hello_raw(&g3, VCL_PROTOCOL_VERSION, NULL, 0, &rp);
		if (check("preauth_max_sessions_reply", rc == 0, "no reply to "
		    "the Hello over --max-sessions")) {
			check("preauth_max_sessions_refused",
			    rp.r->status != CL_SUCCESS &&
			    msg_has(&rp, "max-sessions"), "status %d (%s)",
			    rp.r->status, rp.r->message ? rp.r->message : "");
			reply_free(&rp);
			check("preauth_max_sessions_closed", wait_closed(&g3),
			    "still open");
		}
	} else
		check("preauth_max_sessions_reply", 0, "no greeting");
	conn_close(&g3);
	conn_close(&g2);
	/* A slot freed is a slot for the next one (once the close is seen). */
	for (i = 0; i < STATS_POLLS && conn_session(&g2, &sv) != 0; i++)
		poll_wait();
	check("preauth_slot_freed", g2.fd != -1, "no session after one "
	    "closed");
	for (i = 0; i < n; i++)
		close(idle[i]);
	conn_close(&g1);
	conn_close(&g2);
	srv_stop(&sv, "preauth_server_exit");

	/* Caps: one address gets its share; a flood drops its oldest. */
	n = 0;
	if (!srv_start(&sv, "preauth_caps_server_start", "127.0.0.1:0", caps))
		return;
	for (i = 0; i < 4; i++)
		if ((idle[n] = raw_connect_from(&sv, "127.0.0.2")) != -1)
			n++;
	rc = conn_open_from(&x, &sv, "127.0.0.2");
	check("preauth_per_addr_refused", rc == 1, "a 5th unauthenticated "
	    "connection from 127.0.0.2 %s", rc == 0 ? "got a greeting" :
	    "failed otherwise");
	conn_close(&x);
	for (i = 0; i < 20 && n < 32; i++) {
		snprintf(src, sizeof src, "127.0.0.%d", 10 + i);
		if ((idle[n] = raw_connect_from(&sv, src)) != -1)
			n++;
	}
	check("preauth_flood_good_client", conn_session(&g1, &sv) == 0,
	    "no session for a good client during a many-source flood");
	for (i = 0; i < n; i++)
		close(idle[i]);
	conn_close(&g1);
	check("preauth_log_quiet", srv_log_count(&sv, "closed", NULL) < 20,
	    "%d \"closed\" lines for ~25 connections",
	    srv_log_count(&sv, "closed", NULL));
	srv_stop(&sv, "preauth_caps_server_exit");
}

/* Descriptors a process has open. */
static int
srv_nfds(const struct srv *sv)
{
	char		 path[64];
	DIR		*d;
	struct dirent	*e;
	int		 n = 0;

	snprintf(path, sizeof path, "/proc/%d/fd", (int)sv->pid);
	if ((d = opendir(path)) == NULL)
		return (-1);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return (n);
}

/*
 * Out of descriptors (a low RLIMIT_NOFILE, inherited from us), idle
 * unauthenticated sockets make room for a good client instead of holding
 * every descriptor until their handshake deadline.
 */
static void
test_emfile(void)
{
	struct srv	 sv;
	struct conn	 g;
	struct rlimit	 old, low;
	char		 src[32];
	const char	*extra[] = { "--handshake-timeout", "60", NULL };
	int		 idle[96], i, n = 0, base, ok;

	g.fd = -1;
	if (getrlimit(RLIMIT_NOFILE, &old) != 0)
		return;
	low = old;
	low.rlim_cur = 64;
	setrlimit(RLIMIT_NOFILE, &low);
	ok = srv_start(&sv, "emfile_server_start", "127.0.0.1:0", extra);
	setrlimit(RLIMIT_NOFILE, &old);
	if (!ok)
		return;
	base = srv_nfds(&sv);
	note("server holds %d descriptors of 64", base);
	/* More idle sockets than it has descriptors left, 16 per source. */
	for (i = 0; i < 64 - base + 8 && n < 96; i++) {
		snprintf(src, sizeof src, "127.0.0.%d", 40 + i / 16);
		if ((idle[n] = raw_connect_from(&sv, src)) != -1)
			n++;
	}
	check("emfile_good_client", conn_session(&g, &sv) == 0, "no session "
	    "for a good client while idle sockets hold every descriptor");
	check("emfile_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
	for (i = 0; i < n; i++)
		close(idle[i]);
	conn_close(&g);
	srv_stop(&sv, "emfile_server_exit");
}

/* --- deadlines ------------------------------------------------------------ */

/* A connection that never says Hello is closed at --handshake-timeout. */
static void
test_handshake_timeout(void)
{
	struct srv	 sv;
	struct conn	 c;
	const char	*extra[] = { "--handshake-timeout", "1", NULL };

	if (!srv_start(&sv, "handshake_timeout_server_start", "127.0.0.1:0",
	    extra))
		return;
	if (check("handshake_timeout_open", conn_open(&c, &sv) == 0,
	    "no greeting"))
		check("handshake_timeout_closed", wait_closed(&c),
		    "a silent connection stayed open past its deadline");
	conn_close(&c);
	check("handshake_timeout_logged", srv_log_count(&sv,
	    "no handshake in time", NULL) == 1, "no log line saying why");
	srv_stop(&sv, "handshake_timeout_server_exit");
}

/*
 * Slow-loris after the handshake: a frame begun and never finished is cut
 * at --frame-timeout, on a client session and on a peer link alike; a
 * session that keeps talking is not.
 */
static void
test_slow_frame(void)
{
	struct srv		 sv;
	struct conn		 c, p, ok;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint8_t			 h[VCL_FRAME_HDR_LEN];
	const char		*extra[] = { "--frame-timeout", "1", NULL };

	c.fd = p.fd = ok.fd = -1;
	if (!srv_start(&sv, "slow_frame_server_start", "127.0.0.1:0", extra))
		return;
	vcl_frame_encode(h, 100, 0);
	if (check("slow_frame_session", conn_session(&c, &sv) == 0 &&
	    conn_session(&ok, &sv) == 0, "no session")) {
		send_raw(&c, h, 5);	/* and then nothing */
		check("slow_frame_closed", wait_closed(&c), "a frame begun "
		    "and never finished held its session open");
		check("slow_frame_other_alive", stats(&ok, &st) == 0,
		    "the well-behaved session was closed too");
	}
	if (conn_open(&p, &sv) == 0) {
		p.peer = 1;
		if (check("slow_frame_peer_session", hello(&p, NULL) == 0,
		    "peer Hello refused")) {
			send_raw(&p, h, 5);
			check("slow_frame_peer_closed", wait_closed(&p),
			    "a peer link's unfinished frame held it open");
		}
	} else
		check("slow_frame_peer_session", 0, "no greeting");
	check("slow_frame_logged", srv_log_count(&sv,
	    "frame not completed in time", NULL) == 2, "want 2 lines saying "
	    "why");
	conn_close(&c);
	conn_close(&p);
	conn_close(&ok);
	srv_stop(&sv, "slow_frame_server_exit");
}

/*
 * --idle-timeout closes a session that holds nothing and says nothing; a
 * session holding an object is left alone however long it is quiet (it was
 * opened first, so it was quiet longer).
 */
static void
test_idle(void)
{
	struct srv		 sv;
	struct conn		 holder, idle;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	const char		*extra[] = { "--idle-timeout", "1", NULL };
	int			 i, ok = 0;

	holder.fd = idle.fd = -1;
	if (!srv_start(&sv, "idle_server_start", "127.0.0.1:0", extra))
		return;
	/*
	 * The holder holds its context before it was quiet a second (a test
	 * held up that long between its Hello and the context lost it as
	 * idle: then again, with a new session).
	 */
	for (i = 0; i < 5 && !ok; i++) {
		conn_close(&holder);
		ok = conn_session(&holder, &sv) == 0 &&
		    create_context(&holder, 1) == 0 && stats(&holder, &st) ==
		    0 && st.session_objects == 1;
	}
	if (!check("idle_sessions", ok && conn_session(&idle, &sv) == 0,
	    "no sessions"))
		goto out;
	check("idle_closed", wait_closed(&idle), "an idle session holding "
	    "nothing stayed open");
	check("idle_holder_alive", stats(&holder, &st) == 0 &&
	    st.session_objects == 1, "the session holding a context was "
	    "closed");
out:
	conn_close(&holder);
	conn_close(&idle);
	srv_stop(&sv, "idle_server_exit");
}

/*
 * --send-timeout: a client that asks for bytes and never reads them is
 * closed once its output has not moved for that long.
 */
static void
test_send_timeout(void)
{
	struct srv	 sv;
	struct conn	 c, w;
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	 m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	 q = VCL__ENQUEUE__INIT;
	uint64_t	 size = 32u << 20;
	const char	*extra[] = { "--send-timeout", "1", NULL };
	int		 i, rc = 0, rcvbuf = 4096;

	c.fd = w.fd = -1;
	if (!srv_start(&sv, "send_timeout_server_start", "127.0.0.1:0", extra))
		return;
	if (!check("send_timeout_sessions", conn_session(&c, &sv) == 0 &&
	    conn_session(&w, &sv) == 0, "no sessions"))
		goto out;
	setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	rc |= create_context(&c, 1);
	rc |= create_queue(&c, 2, 1);
	rc |= create_buffer(&c, 3, 1, size, NULL, 0);
	q.queue = 2;
	m.q = &q;
	m.mem = 3;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	for (i = 0; i < 2; i++)
		rc |= send_req(&c, &r, NULL, 0);
	check("send_timeout_sent", rc == 0, "cannot send");
	check("send_timeout_closed", wait_sessions(&w, 1) == 0,
	    "a client that never reads its replies kept its session");
out:
	conn_close(&c);
	conn_close(&w);
	srv_stop(&sv, "send_timeout_server_exit");
}

/* --- failed proofs and log flooding --------------------------------------- */

/*
 * After --max-auth-failures (10) wrong proofs from one address, its connections
 * are closed before the greeting (no nonce to try); other addresses are
 * not affected. Failed proofs are logged as such, not one line each, and
 * never as "server stopping".
 */
static void
test_auth_failures(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct vcl_token	 tok, bad;
	struct reply		 rp;
	uint8_t			 proof[VCL_AUTH_PROOF_LEN];
	char			 path[PATH_MAX], err[256];
	const char		*extra[] = { "--token-file", path, NULL };
	FILE			*f;
	int			 i, rc, refused = 0;

	snprintf(path, sizeof path, "%s/token", root);
	if ((f = fopen(path, "w")) == NULL)
		return;
	fputs("9f3c1e7a2b8d4f6e0a5c7b9d1e3f5a7c\n", f);
	fclose(f);
	chmod(path, 0600);
	if (!check("authfail_token", vcl_auth_load(path, &tok, err,
	    sizeof err) == 0, "%s", err))
		return;
	if (!srv_start(&sv, "authfail_server_start", "127.0.0.1:0", extra))
		return;
	memcpy(bad.data, "wrong-token", 11);
	bad.len = 11;
	/* The default --max-auth-failures is 10 a minute. */
	for (i = 0; i < 10; i++) {
		if (conn_open_from(&c, &sv, "127.0.0.2") != 0)
			continue;
		vcl_auth_prove(&bad, c.nonce, c.nonce_len, proof);
		if (hello_raw(&c, VCL_PROTOCOL_VERSION, proof, sizeof proof,
		    &rp) == 0) {
			refused += rp.r->status != CL_SUCCESS;
			reply_free(&rp);
		}
		wait_closed(&c);
		conn_close(&c);
	}
	check("authfail_wrong_refused", refused == 10, "%d of 10 wrong proofs "
	    "refused", refused);
	/* The 11th connection from there: closed before anything is said. */
	rc = conn_open_from(&c, &sv, "127.0.0.2");
	check("authfail_source_blocked", rc == 1, "an 11th connection after "
	    "10 failed proofs %s", rc == 0 ? "got a greeting (a nonce to try)" :
	    "failed otherwise");
	conn_close(&c);
	/* Another address still gets in. */
	if (conn_open_from(&c, &sv, "127.0.0.3") == 0)
		check("authfail_other_source", hello(&c, &tok) == 0,
		    "a good proof from another address refused");
	else
		check("authfail_other_source", 0, "no greeting");
	conn_close(&c);
	check("authfail_logged", srv_log_count(&sv, "authentication failed",
	    NULL) >= 1, "failed proofs not logged");
	check("authfail_log_per_interval", srv_log_count(&sv,
	    "authentication failed from", NULL) <= 2, "%d lines for 10 "
	    "failures of one address in one interval", srv_log_count(&sv,
	    "authentication failed from", NULL));
	check("authfail_not_stopping", srv_log_count(&sv, "server stopping",
	    NULL) == 0, "a failed handshake logged as \"server stopping\"");
	srv_stop(&sv, "authfail_server_exit");
}

/*
 * 20000 releases of unknown ids: the warning is rate-limited per session
 * (a few lines, then one "suppressed" count), not 20000 lines.
 */
static void
test_log_flood(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	int			 i, rc = 0, n;

	if (!srv_start(&sv, "log_flood_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("log_flood_session", conn_session(&c, &sv) == 0,
	    "no session"))
		goto out;
	for (i = 0; i < 20000 && rc == 0; i++)
		rc = release(&c, VCL__KIND__KIND_MEM, 1000000 + i);
	check("log_flood_sent", rc == 0 && stats(&c, &st) == 0, "cannot send");
	n = srv_log_count(&sv, "release of unknown id", NULL);
	/* 5 per 10 s: a very slow run may span a few intervals. */
	check("log_flood_limited", n > 0 && n <= 50, "%d warning lines for "
	    "20000 unknown releases", n);
	conn_close(&c);
	/* The count comes at the end of the interval or with the close. */
	for (i = 0; i < STATS_POLLS && srv_log_count(&sv, "suppressed",
	    NULL) == 0; i++)
		poll_wait();
	check("log_flood_counted", srv_log_count(&sv, "suppressed", NULL) >= 1,
	    "no \"N more suppressed\" line");
out:
	srv_stop(&sv, "log_flood_server_exit");
}

/* --- input buffer ---------------------------------------------------------- */

/*
 * A frame head promising a large message makes the server allocate as the
 * bytes come, charged to the session, not what the head claims up front.
 */
static void
test_inbuf(void)
{
	struct srv		 sv;
	struct conn		 c, w;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint8_t			 h[VCL_FRAME_HDR_LEN], *junk;
	size_t			 sent = 1u << 20;
	int			 i;

	c.fd = w.fd = -1;
	if ((junk = calloc(1, sent)) == NULL)
		return;
	if (!srv_start(&sv, "inbuf_server_start", "127.0.0.1:0", NULL))
		goto out;
	if (!check("inbuf_sessions", conn_session(&c, &sv) == 0 &&
	    conn_session(&w, &sv) == 0, "no sessions"))
		goto out;
	vcl_frame_encode(h, 32u << 20, 0);
	check("inbuf_sent", send_raw(&c, h, sizeof h) == 0 &&
	    send_raw(&c, junk, sent) == 0, "cannot send");
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(&w, &st) != 0 || st.bytes >= sent)
			break;
		poll_wait();
	}
	check("inbuf_charged", st.bytes >= sent, "%llu bytes charged for a "
	    "frame 1 MiB in", (unsigned long long)st.bytes);
	check("inbuf_as_it_comes", st.bytes <= 4 * sent, "%llu bytes charged "
	    "for a frame 1 MiB in (its head says 32 MiB)",
	    (unsigned long long)st.bytes);
	conn_close(&c);
	check("inbuf_uncharged", wait_sessions(&w, 1) == 0 &&
	    wait_empty(&w, &st) == 0, "%llu bytes still charged after close",
	    (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&w);
	free(junk);
	srv_stop(&sv, "inbuf_server_exit");
}

/*
 * A buffer made right before a read is there for the read (the session's
 * next request waits for it) and starts as zeros, at both ends.
 */
static int
read_zero_check(struct conn *c, uint64_t size)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	 m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	 q = VCL__ENQUEUE__INIT;
	struct reply	 rp;
	uint64_t	 i, off[2] = { 0, size - 65536 };
	int		 k, ok = 1;

	if (create_queue(c, 2, 1) != 0 ||
	    create_buffer(c, 200, 1, size, NULL, 0) != 0)
		return (0);
	for (k = 0; k < 2 && ok; k++) {
		q.queue = 2;
		m.q = &q;
		m.mem = 200;
		m.offset = off[k];
		m.size = 65536;
		r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
		r.read_buffer = &m;
		if (call(c, &r, NULL, 0, &rp) != 0)
			return (0);
		ok = rp.r->status == CL_SUCCESS && rp.bulk_len == 65536;
		for (i = 0; ok && i < rp.bulk_len; i++)
			ok = rp.bulk[i] == 0;
		if (!ok)
			note("read at %llu: status %d, %llu bytes",
			    (unsigned long long)off[k], rp.r->status,
			    (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}
	return (ok);
}

/* --- the loop stays free --------------------------------------------------- */

/* Poll Stats on w (bounded) until buffers_moving is want. */
static int
wait_moving(struct conn *w, uint64_t want, uint64_t *got)
{
	Vcl__StatsResult	st;
	int			i;

	*got = UINT64_MAX;
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(w, &st) != 0)
			return (-1);
		*got = st.has_buffers_moving ? st.buffers_moving : UINT64_MAX;
		if (*got == want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/* Open the movers' latch (make its file). */
static int
latch_open(const char *path)
{
	int	fd;

	if ((fd = open(path, O_CREAT | O_WRONLY, 0600)) == -1)
		return (-1);
	close(fd);
	return (0);
}

/*
 * One session makes and releases 1 GiB buffers (a zero fill and a free,
 * each proportional to its size: hundreds of ms); the loop must serve
 * the other sessions meanwhile. The server's movers wait at a latch
 * (VCL_TEST_MOVER_LATCH) until the test opens it, so the proof needs no
 * clock: while a's creation, then its release, is held on a mover (Stats
 * buffers_moving 1), b's round trips are answered; a's own Stats waits
 * behind its creation (its input paused) until the latch opens, not
 * behind its release. A loop that made or freed the buffer itself never
 * counts it moving.
 */
static void
test_big_buffers(void)
{
	struct srv		 sv;
	struct conn		 a, b;
	struct reply		 rp;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Stats		 m = VCL__STATS__INIT;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	struct pollfd		 pfd;
	struct timeval		 tv = { 120, 0 };
	char			 latch[PATH_MAX];
	uint64_t		 size = 1ull << 30, maxalloc = 0, got;
	int			 i, rc, ok;

	a.fd = b.fd = -1;
	snprintf(latch, sizeof latch, "%s/mover-latch", root);
	setenv("VCL_TEST_MOVER_LATCH", latch, 1);
	rc = srv_start(&sv, "bigbuf_server_start", "127.0.0.1:0", NULL);
	unsetenv("VCL_TEST_MOVER_LATCH");
	if (!rc)
		return;
	if (!check("bigbuf_sessions", latch_open(latch) == 0 &&
	    conn_session(&a, &sv) == 0 && conn_session(&b, &sv) == 0 &&
	    create_context(&a, 1) == 0 && device_info_u64(&a,
	    CL_DEVICE_MAX_MEM_ALLOC_SIZE, &maxalloc) == 0, "no sessions"))
		goto out;
	/* A fill of 1 GiB takes seconds under ASan on a loaded machine. */
	(void)setsockopt(a.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	while (size > maxalloc && size > (256u << 20))
		size >>= 1;
	note("buffers of %llu MiB", (unsigned long long)(size >> 20));
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	for (i = 0; i < 2; i++) {
		/* The creation, held on a mover, and a's Stats behind it. */
		rc = unlink(latch);
		rc |= create_buffer(&a, 100 + i, 1, size, NULL, 0);
		rc |= send_req(&a, &r, NULL, 0);
		rc |= wait_moving(&b, 1, &got);
		if (!check("bigbuf_create_off_loop", rc == 0, "round %d: "
		    "buffers_moving %llu while a's creation is held", i,
		    (unsigned long long)got))
			break;
		pfd.fd = a.fd;
		pfd.events = POLLIN;
		check("bigbuf_create_waits", poll(&pfd, 1, 0) == 0, "round "
		    "%d: a's Stats was answered before its buffer was made", i);
		ok = latch_open(latch) == 0 && recv_msg(&a, &rp) == 0;
		if (ok) {
			ok = rp.r != NULL && rp.r->seq == r.seq &&
			    rp.r->status == CL_SUCCESS;
			reply_free(&rp);
		}
		if (!check("bigbuf_made", ok && wait_moving(&b, 0, &got) == 0,
		    "round %d: a's Stats after its creation; buffers_moving "
		    "%llu", i, (unsigned long long)got))
			break;
		/* The release, held on a mover; a's session goes on. */
		rc = unlink(latch);
		rc |= release(&a, VCL__KIND__KIND_MEM, 100 + i);
		rc |= wait_moving(&b, 1, &got);
		if (!check("bigbuf_release_off_loop", rc == 0, "round %d: "
		    "buffers_moving %llu while a's release is held", i,
		    (unsigned long long)got))
			break;
		check("bigbuf_release_session_free", stats(&a, &st) == 0,
		    "round %d: a's Stats behind its held release", i);
		check("bigbuf_released", latch_open(latch) == 0 &&
		    wait_moving(&b, 0, &got) == 0, "round %d: buffers_moving "
		    "%llu after the release", i, (unsigned long long)got);
	}
	note("the loop's longest hold %.1f ms", srv_log_slowest(&sv, "took"));
	if (slowest_line[0] != '\0')
		note("%s", slowest_line);
	check("bigbuf_zeroed", latch_open(latch) == 0 &&
	    read_zero_check(&a, size), "a new buffer is not all zeros");
out:
	(void)latch_open(latch);
	conn_close(&a);
	conn_close(&b);
	srv_stop(&sv, "bigbuf_server_exit");
}

/*
 * A child's flood on fd: the frames of blk (len bytes, whole frames) sent
 * again and again as fast as the server takes them, its replies read and
 * dropped (so its output never fills and stops its input); the first
 * reply is told on ready. Until killed (60 s at most).
 */
static void
flood_run(int fd, const uint8_t *blk, size_t len, int ready)
{
	static uint8_t	 buf[1 << 16];
	struct pollfd	 pfd;
	size_t		 off = 0;
	ssize_t		 n;
	int		 told = 0;

	alarm(60);
	pfd.fd = fd;
	for (;;) {
		pfd.events = POLLIN | POLLOUT;
		if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
			_exit(1);
		if (pfd.revents & POLLIN) {
			if ((n = read(fd, buf, sizeof buf)) <= 0)
				_exit(n == 0 ? 0 : 1);
			if (!told)
				told = write(ready, "r", 1) == 1;
		}
		if (pfd.revents & POLLOUT) {
			n = send(fd, blk + off, len - off, MSG_NOSIGNAL |
			    MSG_DONTWAIT);
			if (n > 0)
				off = (off + (size_t)n) % len;
			else if (n == -1 && errno != EAGAIN && errno != EINTR)
				_exit(1);
		}
	}
}

/*
 * One client that never stops sending (Stats requests, its replies read)
 * keeps frames in hand at the end of every pass of its session; another
 * session's round trip must still be answered while it floods: the loop
 * looks for other input between passes. (It did not: libevent ran the
 * flooding session's read event, made active again by each pass, within
 * the same dispatch, and the other session waited until the flood
 * stopped.)
 */
static void
test_flood(void)
{
	enum { N = 4096 };
	struct srv		 sv;
	struct conn		 c, w;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Stats		 m = VCL__STATS__INIT;
	struct vcl_buf		 b = { NULL, 0, 0 };
	struct pollfd		 rp;
	uint8_t			*blk = NULL;
	pid_t			 pid = -1;
	int			 ready[2] = { -1, -1 }, i, rc, status;
	char			 x;

	c.fd = w.fd = -1;
	if (!srv_start(&sv, "flood_server_start", "127.0.0.1:0", NULL))
		return;
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	r.seq = 1;
	if (!check("flood_sessions", conn_session(&c, &sv) == 0 &&
	    conn_session(&w, &sv) == 0 && vcl_buf_pack(&b, &r.base, 0) == 0 &&
	    (blk = malloc(b.len * N)) != NULL && pipe(ready) == 0,
	    "no sessions"))
		goto out;
	for (i = 0; i < N; i++)
		memcpy(blk + (size_t)i * b.len, b.data, b.len);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		close(ready[0]);
		close(w.fd);
		flood_run(c.fd, blk, b.len * N, ready[1]);
	}
	close(ready[1]);
	ready[1] = -1;
	/* The flood is being served (its first reply came back). */
	rp.fd = ready[0];
	rp.events = POLLIN;
	if (!check("flood_started", pid > 0 && poll(&rp, 1, RECV_TIMEOUT_S *
	    1000) == 1 && read(ready[0], &x, 1) == 1, "the flood got no "
	    "reply"))
		goto out;
	rc = stats(&w, &st);
	check("flood_other_served", rc == 0, "a round trip of another "
	    "session got no answer while one client flooded");
	check("flood_ongoing", waitpid(pid, &status, WNOHANG) == 0,
	    "the flooding client stopped first");
	note("the answer came after %llu requests",
	    (unsigned long long)st.requests);
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (ready[0] != -1)
		close(ready[0]);
	if (ready[1] != -1)
		close(ready[1]);
	vcl_buf_free(&b);
	free(blk);
	conn_close(&c);
	conn_close(&w);
	srv_stop(&sv, "flood_server_exit");
}

/* --- runner --------------------------------------------------------------- */

static const struct test tests[] = {
	{ "preauth",		test_preauth,		60 },
	{ "emfile",		test_emfile,		60 },
	{ "handshake_timeout",	test_handshake_timeout,	60 },
	{ "slow_frame",		test_slow_frame,	60 },
	{ "idle",		test_idle,		60 },
	{ "send_timeout",	test_send_timeout,	60 },
	{ "auth_failures",	test_auth_failures,	60 },
	{ "log_flood",		test_log_flood,		60 },
	{ "inbuf",		test_inbuf,		60 },
	{ "big_buffers",	test_big_buffers,	180 },
	{ "flood",		test_flood,		60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
