/* attack6_test.c - hostile clients and peers against server-to-server links. */

/*
 * usage: attack6_test VCLSERVER
 *
 * Raw-protocol clients that make a server dial what they like (its peer
 * links), and peer links that push and complete events as no server would.
 * Each time the server bounds what it holds, answers what it must, and
 * serves the next session.
 */

#include "rawproto.h"

#define NLISTEN		6	/* addresses that accept and never speak */

static const char *const cap_args[] = { "--max-sessions", "2",
	"--handshake-timeout", "60", NULL };

/* Poll (bounded) until the link to addr is ready; 0 or -1. */
static int
wait_link_ready(struct conn *c, const char *addr, size_t *n)
{
	int	i, ready = 0;

	for (i = 0; i < STATS_POLLS; i++) {
		if (raw_links_now(c, addr, n, &ready) != 0)
			return (-1);
		if (ready == 1)
			return (0);
		poll_wait();
	}
	return (-1);
}

/*
 * A client makes its server dial any address it names (MigrateOut,
 * ForwardEvent): naming many that accept and never speak held a socket
 * and a link each until the handshake deadline, without bound, so one
 * client could take every descriptor of the server (no client could
 * connect any more). The links are bounded by --max-sessions; past it an
 * idle ready link gives way to a new one, and when none is idle the new
 * link is refused (its command fails). Links to real servers still open
 * after the flood, one in place of an idle one.
 */
static void
test_links_bound(void)
{
	struct srv	 sv, d[3];
	struct conn	 c;
	char		 addr[NLISTEN][64], daddr[3][64];
	int		 lfd[NLISTEN], i, rc;
	size_t		 n = 0;

	c.fd = -1;
	for (i = 0; i < NLISTEN; i++)
		lfd[i] = -1;
	for (i = 0; i < 3; i++)
		d[i].pid = 0;
	if (!srv_start(&sv, "links_server_start", "127.0.0.1:0", cap_args))
		return;
	if (!check("links_session", conn_session(&c, &sv) == 0, "no session"))
		goto out;
	for (i = 0, rc = 0; i < NLISTEN; i++)
		if ((lfd[i] = raw_mute_listener(addr[i],
		    sizeof addr[i])) == -1 ||
		    raw_forward_bogus(&c, addr[i], (uint64_t)i + 1) != 0)
			rc = -1;
	rc |= raw_links_now(&c, NULL, &n, &i);
	check("links_bounded", rc == 0 && n <= 2, "%zu links to addresses "
	    "that never speak, want at most --max-sessions (2) (rc %d)", n,
	    rc);
	check("links_refused_logged", srv_stderr_has(&sv, "its share"),
	    "no warning for the links refused; see %s/stderr", sv.dir);
	/* They go when their listeners do. */
	for (i = 0; i < NLISTEN; i++) {
		close(lfd[i]);
		lfd[i] = -1;
	}
	check("links_gone", raw_wait_links_at_most(&c, 0, &n) == 0, "%zu "
	    "links left after their listeners closed", n);

	/* Real servers: two links fill the bound, a third takes an idle one. */
	for (i = 0; i < 3; i++) {
		if (!srv_start(&d[i], "links_dest_start", "127.0.0.1:0", NULL))
			goto out;
		snprintf(daddr[i], sizeof daddr[i], "127.0.0.1:%s", d[i].port);
	}
	rc = raw_forward_bogus(&c, daddr[0], 11);
	rc |= wait_link_ready(&c, daddr[0], &n);
	rc |= raw_forward_bogus(&c, daddr[1], 12);
	rc |= wait_link_ready(&c, daddr[1], &n);
	check("links_two_ready", rc == 0 && n == 2, "%zu links (rc %d)", n,
	    rc);
	rc = raw_forward_bogus(&c, daddr[2], 13);
	rc |= wait_link_ready(&c, daddr[2], &n);
	check("links_idle_gives_way", rc == 0 && n <= 2, "a third link at "
	    "the bound: rc %d, %zu links", rc, n);
	rc = raw_links_now(&c, NULL, &n, &i);
	check("links_server_serves", rc == 0 && srv_alive(&sv), "the server "
	    "after the links (rc %d)", rc);
out:
	for (i = 0; i < NLISTEN; i++)
		if (lfd[i] != -1)
			close(lfd[i]);
	conn_close(&c);
	for (i = 0; i < 3; i++)
		if (d[i].pid > 0)
			srv_stop(&d[i], "links_dest_exit");
	srv_stop(&sv, "links_server_exit");
}

/*
 * Migrate buffer 3 of ca (context 1) to cb's buffer 3 at to (session
 * sid/key) as transfer xid, size bytes. 0 when both ends completed; the
 * destination is waited for only once the source pushed.
 */
static int
migrate_to(struct conn *ca, struct conn *cb, const char *to, uint64_t sid,
    uint64_t key, uint64_t xid, uint64_t size)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__MigrateOut	 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__PeerDest	 d = VCL__PEER_DEST__INIT;
	cl_int		 st_out = 1, st_in = 1;

	d.addr = (char *)to;
	d.session = sid;
	d.key = key;
	mo.context = 1;
	mo.mem = 3;
	mo.size = size;
	mo.dest = &d;
	mo.transfer = xid;
	mo.has_event = 1;
	mo.event = xid + 2;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	if (migrate_in(cb, xid + 1, 3, size, xid, NULL) != 0 ||
	    send_req(ca, &r, NULL, 0) != 0 ||
	    wait_notify(ca, xid + 2, &st_out) != 0) {
		note("migration %llu: no notification from the source",
		    (unsigned long long)xid);
		return (-1);
	}
	if (st_out != CL_COMPLETE) {
		note("migration %llu: the source's push failed (%d)",
		    (unsigned long long)xid, st_out);
		return (-1);
	}
	if (wait_notify(cb, xid + 1, &st_in) != 0 || st_in != CL_COMPLETE) {
		note("migration %llu: the destination's MigrateIn: %d",
		    (unsigned long long)xid, st_in);
		return (-1);
	}
	return (0);
}

/* Poll Stats (bounded) until the server has want sessions; 0 or -1. */
static int
wait_sessions_at(struct conn *w, uint64_t want)
{
	Vcl__StatsResult	st;
	int			i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(w, &st) != 0)
			return (-1);
		if (st.sessions == want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/*
 * One client naming addresses that accept and never speak held every link
 * --max-sessions allows through their handshakes (the deadline, then
 * again), so no other session's migration to a new node could open its
 * link meanwhile. Links being dialled are charged to the session that
 * asked for them, a quarter of the bound at most (here 1 of 4): the
 * hostile session holds one, another session's migration to a real
 * server goes through. When the asking session closes, its link being
 * dialled goes with it (no orphan holds a place), unless another
 * session's request waits on it: it then passes to that session, counted
 * in its share, and goes when that one closes.
 */
static void
test_dial_share(void)
{
	enum { SIZE = 64 << 10 };
	static const char *const args[] = { "--max-sessions", "4",
		"--handshake-timeout", "60", NULL };
	struct srv		 sv, dst;
	struct conn		 h, g, cb, w;
	struct reply		 rp;
	char			 addr[NLISTEN][64], to[64];
	uint8_t			*data;
	uint64_t		 sid = 0, key = 0, sa = 0, ka = 0;
	size_t			 n = 0;
	int			 lfd[NLISTEN], i, rc, ready = 0;

	h.fd = g.fd = cb.fd = w.fd = -1;
	dst.pid = 0;
	for (i = 0; i < NLISTEN; i++)
		lfd[i] = -1;
	if ((data = raw_pattern(SIZE, 7)) == NULL)
		return;
	if (!srv_start(&sv, "share_server_start", "127.0.0.1:0", args)) {
		free(data);
		return;
	}
	if (!srv_start(&dst, "share_dest_start", "127.0.0.1:0", NULL))
		goto out;
	snprintf(to, sizeof to, "127.0.0.1:%s", dst.port);
	if (!check("share_sessions", conn_session(&h, &sv) == 0 &&
	    client_open(&g, &sv, &sa, &ka) == 0 &&
	    client_open(&cb, &dst, &sid, &key) == 0 &&
	    create_buffer(&g, 3, 1, SIZE, data, SIZE) == 0 &&
	    create_buffer(&cb, 3, 1, SIZE, NULL, 0) == 0, "no sessions"))
		goto out;
	/* The hostile session names every silent address it has. */
	for (i = 0, rc = 0; i < NLISTEN; i++)
		if ((lfd[i] = raw_mute_listener(addr[i],
		    sizeof addr[i])) == -1 ||
		    raw_forward_bogus(&h, addr[i], (uint64_t)i + 1) != 0)
			rc = -1;
	rc |= raw_links_now(&h, NULL, &n, &ready);
	check("share_hostile_bounded", rc == 0 && n == 1, "%zu links "
	    "dialled for one session, want its share (1) (rc %d)", n, rc);
	check("share_refused_logged", srv_stderr_has(&sv, "its share"),
	    "no warning for the links refused; see %s/stderr", sv.dir);

	/* Another session's migration to a real server meanwhile. */
	rc = migrate_to(&g, &cb, to, sid, key, 100, SIZE);
	check("share_other_migrates", rc == 0, "a migration to a real "
	    "server while one session dials silent addresses failed");
	rc = read_buffer(&cb, 2, 3, SIZE, &rp);
	check("share_bytes", rc == 0 && rp.r->status == CL_SUCCESS &&
	    rp.bulk_len == SIZE && memcmp(rp.bulk, data, SIZE) == 0,
	    "the destination's buffer after the migration (rc %d)", rc);
	if (rc == 0)
		reply_free(&rp);

	/* The asking session closes: its silent link goes at once. */
	conn_close(&h);
	rc = raw_wait_links_at_most(&g, 1, &n);
	rc |= raw_links_now(&g, addr[0], &n, &ready);
	check("share_orphan_closed", rc == 0 && ready == -1, "the link the "
	    "closed session dialled is still there (%zu links, rc %d)", n,
	    rc);

	/* A link two sessions wait on passes to the one left. */
	rc = conn_session(&h, &sv);
	rc |= raw_forward_bogus(&h, addr[1], 21);
	rc |= raw_links_now(&h, addr[1], &n, &ready);
	rc |= ready == 0 ? 0 : -1;
	rc |= raw_forward_bogus(&g, addr[1], 22);
	rc |= raw_links_now(&g, NULL, &n, &ready);
	conn_close(&h);
	rc |= wait_sessions_at(&g, 1);
	rc |= raw_links_now(&g, addr[1], &n, &ready);
	check("share_handed_on", rc == 0 && ready == 0, "the link another "
	    "session waits on, once its asker closed: %s (rc %d)",
	    ready == -1 ? "closed" : "ready", rc);
	rc = raw_forward_bogus(&g, addr[2], 23);
	rc |= raw_links_now(&g, addr[2], &n, &ready);
	check("share_handed_counted", rc == 0 && ready == -1, "a session "
	    "holding a link handed on dialled another past its share "
	    "(rc %d)", rc);
	conn_close(&g);
	rc = conn_session(&w, &sv);
	rc |= raw_wait_links_at_most(&w, 1, &n);
	rc |= raw_links_now(&w, addr[1], &n, &ready);
	check("share_handed_closed", rc == 0 && ready == -1, "the link "
	    "handed on is still there once its new asker closed (%zu links, "
	    "rc %d)", n, rc);
	check("share_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
out:
	for (i = 0; i < NLISTEN; i++)
		if (lfd[i] != -1)
			close(lfd[i]);
	conn_close(&h);
	conn_close(&g);
	conn_close(&cb);
	conn_close(&w);
	free(data);
	if (dst.pid > 0)
		srv_stop(&dst, "share_dest_exit");
	srv_stop(&sv, "share_server_exit");
}

/*
 * Sessions that each dial silent addresses up to their share (a quarter
 * of --max-sessions 8: 2), enough of them to fill every place: links
 * being dialled take half of the places at most (4), so the other
 * sessions' ready link to a real server is not pushed out for a silent
 * one, and their migrations over it go on while the dials wait for the
 * handshake deadline.
 */
static void
test_dial_half(void)
{
	enum { SIZE = 64 << 10, HOSTILE = 4, EACH = 2 };
	static const char *const args[] = { "--max-sessions", "8",
		"--handshake-timeout", "60", NULL };
	struct srv		 sv, dst;
	struct conn		 h[HOSTILE], g, cb;
	struct reply		 rp;
	char			 addr[HOSTILE * EACH][64], to[64];
	uint8_t			*data;
	uint64_t		 sid = 0, key = 0, sa = 0, ka = 0;
	size_t			 n = 0;
	int			 lfd[HOSTILE * EACH], i, rc, ready = 0;

	g.fd = cb.fd = -1;
	dst.pid = 0;
	for (i = 0; i < HOSTILE; i++)
		h[i].fd = -1;
	for (i = 0; i < HOSTILE * EACH; i++)
		lfd[i] = -1;
	if ((data = raw_pattern(SIZE, 9)) == NULL)
		return;
	if (!srv_start(&sv, "half_server_start", "127.0.0.1:0", args)) {
		free(data);
		return;
	}
	if (!srv_start(&dst, "half_dest_start", "127.0.0.1:0", NULL))
		goto out;
	snprintf(to, sizeof to, "127.0.0.1:%s", dst.port);
	if (!check("half_sessions", client_open(&g, &sv, &sa, &ka) == 0 &&
	    client_open(&cb, &dst, &sid, &key) == 0 &&
	    create_buffer(&g, 3, 1, SIZE, data, SIZE) == 0 &&
	    create_buffer(&cb, 3, 1, SIZE, NULL, 0) == 0 &&
	    migrate_to(&g, &cb, to, sid, key, 100, SIZE) == 0 &&
	    wait_link_ready(&g, to, &n) == 0, "no sessions, or no ready link "
	    "to the real server"))
		goto out;
	/* Each hostile session names as many silent addresses as it may. */
	for (i = 0, rc = 0; i < HOSTILE * EACH; i++) {
		if (i % EACH == 0 && conn_session(&h[i / EACH], &sv) != 0)
			rc = -1;
		if ((lfd[i] = raw_mute_listener(addr[i],
		    sizeof addr[i])) == -1 || raw_forward_bogus(&h[i / EACH],
		    addr[i], (uint64_t)i + 1) != 0)
			rc = -1;
	}
	for (i = 0; i < HOSTILE; i++)
		rc |= raw_links_now(&h[i], NULL, &n, &ready);
	rc |= raw_links_now(&g, to, &n, &ready);
	check("half_dials_bounded", rc == 0 && n == 1 + 4, "%zu links, want "
	    "the ready one and 4 being dialled (half of 8) (rc %d)", n, rc);
	check("half_ready_kept", rc == 0 && ready == 1, "the ready link to "
	    "the real server: %s", ready == -1 ? "closed for a silent one" :
	    "not ready");
	check("half_refused_logged", srv_stderr_has(&sv, "being dialled"),
	    "no warning for the dials refused; see %s/stderr", sv.dir);
	rc = migrate_to(&g, &cb, to, sid, key, 200, SIZE);
	check("half_other_migrates", rc == 0, "a migration over the ready "
	    "link while other sessions dial silent addresses failed");
	rc = read_buffer(&cb, 2, 3, SIZE, &rp);
	check("half_bytes", rc == 0 && rp.r->status == CL_SUCCESS &&
	    rp.bulk_len == SIZE && memcmp(rp.bulk, data, SIZE) == 0,
	    "the destination's buffer after the migration (rc %d)", rc);
	if (rc == 0)
		reply_free(&rp);
	/* The hostile sessions close: their links being dialled go. */
	for (i = 0; i < HOSTILE; i++)
		conn_close(&h[i]);
	rc = raw_wait_links_at_most(&g, 1, &n);
	check("half_dials_gone", rc == 0, "%zu links once the dialling "
	    "sessions closed, want 1", n);
	check("half_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
out:
	for (i = 0; i < HOSTILE * EACH; i++)
		if (lfd[i] != -1)
			close(lfd[i]);
	for (i = 0; i < HOSTILE; i++)
		conn_close(&h[i]);
	conn_close(&g);
	conn_close(&cb);
	free(data);
	if (dst.pid > 0)
		srv_stop(&dst, "half_dest_exit");
	srv_stop(&sv, "half_server_exit");
}

/* PeerFail{source, status}: the client lost the node source. */
static int
peer_fail_source(struct conn *c, const char *source)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerFail	m = VCL__PEER_FAIL__INIT;

	m.source = (char *)source;
	m.status = CL_DEVICE_NOT_AVAILABLE;
	r.call_case = VCL__REQUEST__CALL_PEER_FAIL;
	r.peer_fail = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * The source a client names (MigrateIn, CreateProxyEvent, PeerFail) is a
 * node's address, kept for the transfer's, the proxy's or the session's
 * life and compared with every lost one on each MigrateIn: unbounded, a
 * session held frames' worth of them outside its --max-session-bytes (64
 * lost sources of 64 MiB each) and each MigrateIn walked them all on the
 * loop. One over 255 bytes is refused (CL_INVALID_VALUE for a MigrateIn,
 * ignored in a PeerFail); one of 255 works as before.
 */
static void
test_source_bound(void)
{
	enum { LONG = 64 << 10 };
	struct srv		 sv;
	struct conn		 c, w;
	Vcl__StatsResult	 st;
	uint64_t		 sid, key;
	char			*big, ok[256];
	cl_int			 evst = 0;
	int			 rc;

	c.fd = w.fd = -1;
	if ((big = malloc(LONG + 1)) == NULL)
		return;
	memset(big, 'n', LONG);
	big[LONG] = '\0';
	memset(ok, 'm', sizeof ok - 1);
	ok[sizeof ok - 1] = '\0';
	if (!srv_start(&sv, "source_server_start", "127.0.0.1:0", NULL)) {
		free(big);
		return;
	}
	if (!check("source_session", client_open(&c, &sv, &sid, &key) == 0 &&
	    create_buffer(&c, 3, 1, 4096, NULL, 0) == 0, "no session"))
		goto out;
	/* Told lost, then named by a MigrateIn: refused, not remembered. */
	rc = peer_fail_source(&c, big);
	rc |= migrate_in(&c, 10, 3, 4096, 77, big);
	rc |= wait_notify(&c, 10, &evst);
	check("source_long_refused", rc == 0 && evst == CL_INVALID_VALUE,
	    "MigrateIn of a %d-byte source: event %d, want CL_INVALID_VALUE "
	    "(rc %d)", LONG, evst, rc);
	/* 255 bytes: remembered lost, the MigrateIn fails at once. */
	rc = peer_fail_source(&c, ok);
	rc |= migrate_in(&c, 11, 3, 4096, 78, ok);
	rc |= wait_notify(&c, 11, &evst);
	check("source_255_lost", rc == 0 && evst == CL_DEVICE_NOT_AVAILABLE,
	    "MigrateIn of a lost 255-byte source: event %d, want "
	    "CL_DEVICE_NOT_AVAILABLE (rc %d)", evst, rc);
	check("source_warned", srv_stderr_has(&sv, "a source of over 255"),
	    "no warning for the long PeerFail source; see %s/stderr", sv.dir);
	conn_close(&c);
	rc = conn_session(&w, &sv);
	check("source_all_freed", rc == 0 && wait_empty(&w, &st) == 0,
	    "server holds %llu objects, %llu bytes (rc %d)",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes, rc);
out:
	conn_close(&c);
	conn_close(&w);
	free(big);
	srv_stop(&sv, "source_server_exit");
}

/* Read (bounded) until events e1 and e2 were both notified. */
static int
wait_two(struct conn *c, uint64_t e1, cl_int *s1, uint64_t e2, cl_int *s2)
{
	struct reply	rp;
	size_t		i;
	int		n, got = 0;

	for (n = 0; got != 3 && n < 2000; n++) {
		if (recv_msg(c, &rp) != 0)
			return (-1);
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify;
		    i++) {
			if (rp.tc->notify[i]->event == e1) {
				*s1 = rp.tc->notify[i]->status;
				got |= 1;
			}
			if (rp.tc->notify[i]->event == e2) {
				*s2 = rp.tc->notify[i]->status;
				got |= 2;
			}
		}
		reply_free(&rp);
	}
	return (got == 3 ? 0 : -1);
}

/*
 * A client makes its server migrate a buffer to itself: the server dials
 * its own port and pushes into its own session over the link, on one
 * loop. The bytes land and nothing waits on itself; the link then counts
 * as a session of the server, and everything is given back.
 */
static void
test_self_link(void)
{
	enum { SIZE = 256 << 10 };
	struct srv		 sv;
	struct conn		 c, w;
	struct reply		 rp;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__MigrateOut		 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__PeerDest		 d = VCL__PEER_DEST__INIT;
	Vcl__StatsResult	 st;
	uint64_t		 sid = 0, key = 0;
	uint8_t			*data;
	char			 self[64];
	cl_int			 st_out = 1, st_in = 1;
	size_t			 i;
	int			 rc;

	c.fd = w.fd = -1;
	if ((data = malloc(SIZE)) == NULL)
		return;
	for (i = 0; i < SIZE; i++)
		data[i] = (uint8_t)(i * 13 + 5);
	if (!srv_start(&sv, "self_server_start", "127.0.0.1:0", NULL)) {
		free(data);
		return;
	}
	snprintf(self, sizeof self, "127.0.0.1:%s", sv.port);
	if (!check("self_session", client_open(&c, &sv, &sid, &key) == 0 &&
	    create_buffer(&c, 3, 1, SIZE, data, SIZE) == 0 &&
	    create_buffer(&c, 4, 1, SIZE, NULL, 0) == 0, "no session"))
		goto out;
	rc = migrate_in(&c, 10, 4, SIZE, 77, self);
	d.addr = self;
	d.session = sid;
	d.key = key;
	mo.context = 1;
	mo.mem = 3;
	mo.size = SIZE;
	mo.dest = &d;
	mo.transfer = 77;
	mo.has_event = 1;
	mo.event = 11;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	rc |= send_req(&c, &r, NULL, 0);
	rc |= wait_two(&c, 10, &st_in, 11, &st_out);
	check("self_migrated", rc == 0 && st_in == CL_COMPLETE &&
	    st_out == CL_COMPLETE, "migration to itself: in %d, out %d "
	    "(rc %d)", st_in, st_out, rc);
	rc = read_buffer(&c, 2, 4, SIZE, &rp);
	check("self_bytes", rc == 0 && rp.r->status == CL_SUCCESS &&
	    rp.bulk_len == SIZE && memcmp(rp.bulk, data, SIZE) == 0,
	    "buffer 4 after the migration (rc %d)", rc);
	if (rc == 0)
		reply_free(&rp);
	conn_close(&c);
	rc = conn_session(&w, &sv);
	check("self_all_freed", rc == 0 && wait_empty(&w, &st) == 0,
	    "server holds %llu objects, %llu bytes (rc %d)",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes, rc);
out:
	conn_close(&c);
	conn_close(&w);
	free(data);
	srv_stop(&sv, "self_server_exit");
}

/* MigrateOut of a context that is not there, event ev: its failure goes
 * to addr (a PeerPush), and ev fails when the link drops it. */
static int
push_failed(struct conn *c, const char *addr, uint64_t ev)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__MigrateOut	m = VCL__MIGRATE_OUT__INIT;
	Vcl__PeerDest	d = VCL__PEER_DEST__INIT;

	d.addr = (char *)addr;
	d.session = 1;
	d.key = 1;
	m.context = 999;
	m.mem = 3;
	m.size = 16;
	m.dest = &d;
	m.transfer = ev;
	m.has_event = 1;
	m.event = ev;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * Two links a session dialled to silent addresses miss their handshake
 * deadline in one tick. Closing the first fails its push, whose event's
 * Notify finds the client gone (reset while its input was held by a
 * buffer made on a mover, so the loop had not seen it): the session
 * closes, and with it the other link it dialled, the one the tick's walk
 * had saved as its next. The walk went on into freed memory (ASan:
 * heap-use-after-free in vcl_peer_check_all). The server lives, drops
 * both links and the session, and serves the next one.
 */
static void
test_close_walk(void)
{
	static const char *const args[] = { "--handshake-timeout", "2",
		NULL };
	struct srv		 sv;
	struct conn		 h, g;
	struct linger		 lg = { 1, 0 };
	Vcl__StatsResult	 st;
	char			 addr[2][64], latch[PATH_MAX];
	uint64_t		 sid, key;
	size_t			 n = 0;
	int			 lfd[2] = { -1, -1 }, i, rc, ready;

	h.fd = g.fd = -1;
	snprintf(latch, sizeof latch, "%s/close_walk-latch", root);
	setenv("VCL_TEST_MOVER_LATCH", latch, 1);
	rc = srv_start(&sv, "walk_server_start", "127.0.0.1:0", args);
	unsetenv("VCL_TEST_MOVER_LATCH");
	if (!rc)
		return;
	if (!check("walk_sessions", client_open(&h, &sv, &sid, &key) == 0 &&
	    conn_session(&g, &sv) == 0, "no sessions"))
		goto out;
	/* Both pushes in one batch: their links are born in one second. */
	for (i = 0, rc = 0; i < 2; i++)
		if ((lfd[i] = raw_mute_listener(addr[i], sizeof addr[i])) == -1)
			rc = -1;
	if (rc == 0)
		rc = push_failed(&h, addr[0], 10) | push_failed(&h, addr[1],
		    11) | create_buffer(&h, 3, 1, 2u << 20, NULL, 0);
	/* Held on the mover: the session reads nothing meanwhile. */
	for (i = 0; rc == 0 && i < STATS_POLLS; i++) {
		if ((rc = stats(&g, &st)) == 0 && st.buffers_moving == 1)
			break;
		poll_wait();
	}
	rc |= raw_links_now(&g, addr[1], &n, &ready);
	if (!check("walk_setup", rc == 0 && n == 2 && ready == 0 &&
	    st.buffers_moving == 1, "%zu links, buffers moving %llu, want 2 "
	    "being dialled and 1 (rc %d)", n,
	    (unsigned long long)st.buffers_moving, rc))
		goto out;
	/* Reset, not closed: the held session's loop sees nothing. */
	(void)setsockopt(h.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	conn_close(&h);
	rc = raw_wait_links_at_most(&g, 0, &n);
	check("walk_links_closed", rc == 0, "%zu links left after their "
	    "handshake deadline (rc %d)", n, rc);
	check("walk_server_alive", srv_alive(&sv), "server %s; see "
	    "%s/stderr", srv_how(&sv), sv.dir);
	check("walk_latch", raw_latch_open(latch), "cannot make %s", latch);
	conn_close(&g);
	rc = conn_session(&g, &sv);
	check("walk_all_freed", rc == 0 && wait_empty(&g, &st) == 0 &&
	    st.sessions == 1, "server holds %llu sessions, %llu objects, "
	    "%llu bytes (rc %d)", (unsigned long long)st.sessions,
	    (unsigned long long)st.objects, (unsigned long long)st.bytes, rc);
out:
	for (i = 0; i < 2; i++)
		if (lfd[i] != -1)
			close(lfd[i]);
	(void)raw_latch_open(latch);
	conn_close(&h);
	conn_close(&g);
	srv_stop(&sv, "walk_server_exit");
}

static const struct test tests[] = {
	{ "links_bound",	test_links_bound,	60 },
	{ "dial_share",		test_dial_share,	120 },
	{ "dial_half",		test_dial_half,		120 },
	{ "source_bound",	test_source_bound,	60 },
	{ "self_link",		test_self_link,		60 },
	{ "close_walk",		test_close_walk,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof
	    tests[0]));
}
