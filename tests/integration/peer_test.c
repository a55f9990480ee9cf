/*
 * peer_test.c - what a peer link may do to a client session, what a
 * session makes the server hold (charged and freed), and lost nodes: raw
 * protocol against real vclservers (rawproto.c).
 */

#include "rawproto.h"

#define MIB		(1u << 20)

/* A peer link session. */
static int
peer_open(struct conn *p, const struct srv *sv)
{
	if (conn_open(p, sv) != 0)
		return (-1);
	return (hello_as(p, 1, NULL, NULL));
}

/*
 * The head of a PeerPush of len bytes and the first sent of them (the
 * rest is the caller's to send).
 */
static int
push_start(struct conn *p, uint64_t sid, uint64_t key, uint64_t xfer,
    const uint8_t *data, uint64_t len, uint64_t sent)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerPush	pp = VCL__PEER_PUSH__INIT;
	struct vcl_buf	b = { NULL, 0, 0 };
	int		rc;

	pp.session = sid;
	pp.key = key;
	pp.transfer = xfer;
	pp.status = CL_SUCCESS;
	r.call_case = VCL__REQUEST__CALL_PEER_PUSH;
	r.peer_push = &pp;
	r.seq = ++p->seq;
	if (vcl_buf_pack(&b, &r.base, len) != 0)
		return (-1);
	rc = send_raw(p, b.data, b.len);
	if (rc == 0 && sent > 0)
		rc = send_raw(p, data, sent);
	vcl_buf_free(&b);
	return (rc);
}

/* A whole PeerPush. */
static int
push(struct conn *p, uint64_t sid, uint64_t key, uint64_t xfer,
    const uint8_t *data, uint64_t len)
{
	return (push_start(p, sid, key, xfer, data, len, len));
}

/* PeerEvent{session, key, proxy, status}. */
static int
peer_event(struct conn *p, uint64_t sid, uint64_t key, uint64_t proxy,
    cl_int status)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerEvent	pe = VCL__PEER_EVENT__INIT;

	pe.session = sid;
	pe.key = key;
	pe.proxy = proxy;
	pe.status = status;
	r.call_case = VCL__REQUEST__CALL_PEER_EVENT;
	r.peer_event = &pe;
	return (send_req(p, &r, NULL, 0));
}

/* PeerFail{ids (n of them), source} with CL_DEVICE_NOT_AVAILABLE. */
static int
peer_fail(struct conn *c, uint64_t *ids, size_t n, const char *source)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerFail	pf = VCL__PEER_FAIL__INIT;

	pf.ids = ids;
	pf.n_ids = n;
	pf.source = (char *)source;
	pf.status = CL_DEVICE_NOT_AVAILABLE;
	r.call_case = VCL__REQUEST__CALL_PEER_FAIL;
	r.peer_fail = &pf;
	return (send_req(c, &r, NULL, 0));
}

/* Read (bounded) the next Reply on a peer link; its status, or 1: none. */
static int
link_reply(struct conn *p)
{
	struct reply	rp;
	int		st = 1;

	if (recv_msg(p, &rp) == 0 && rp.r != NULL)
		st = rp.r->status;
	reply_free(&rp);
	return (st);
}

/* Poll Stats on c (bounded) until its session holds at most want bytes. */
static int
wait_session_bytes(struct conn *c, uint64_t want, Vcl__StatsResult *st)
{
	int	i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, st) != 0)
			return (-1);
		if (st->session_bytes <= want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/* Poll Stats on w (bounded) until the server has want sessions. */
static int
wait_sessions(struct conn *w, uint64_t want)
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
 * A peer naming ids of a session that are not its transfers (a buffer, a
 * queue), a forged key, ids the client uses later: the peer gets an error
 * on its link or is ignored; the session is neither closed nor touched.
 */
static void
test_collide(void)
{
	enum { SIZE = 4096 };
	struct srv		 sv;
	struct conn		 c, p, w;
	struct reply		 rp;
	Vcl__StatsResult	 st;
	uint64_t		 sid = 0, key = 0;
	uint8_t			 pat[SIZE], junk[SIZE];
	int			 rc, st1, st2;

	c.fd = p.fd = w.fd = -1;
	memset(pat, 0x5a, sizeof pat);
	memset(junk, 0xee, sizeof junk);
	if (!srv_start(&sv, "collide_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("collide_sessions", client_open(&c, &sv, &sid, &key) == 0 &&
	    peer_open(&p, &sv) == 0 && conn_session(&w, &sv) == 0,
	    "no client, peer or watching session"))
		goto out;
	rc = create_buffer(&c, 3, 1, SIZE, pat, SIZE);
	rc |= stats(&c, &st);

	/* A push naming the buffer, an event naming the queue. */
	rc |= push(&p, sid, key, 3, junk, SIZE);
	st1 = link_reply(&p);
	rc |= peer_event(&p, sid, key, 2, -5);
	st2 = link_reply(&p);
	check("collide_push_refused", rc == 0 && st1 == CL_INVALID_VALUE,
	    "push naming a buffer: link reply %d, want CL_INVALID_VALUE", st1);
	check("collide_event_refused", st2 == CL_INVALID_VALUE,
	    "event naming a queue: link reply %d, want CL_INVALID_VALUE", st2);

	/* Early ones, under ids the client then uses; a forged key. */
	rc = peer_event(&p, sid, key, 40, CL_COMPLETE);
	rc |= push(&p, sid, key, 41, junk, SIZE);
	rc |= push(&p, sid, key ^ 1, 42, junk, SIZE);
	rc |= create_buffer(&c, 40, 1, SIZE, NULL, 0);
	rc |= create_buffer(&c, 41, 1, SIZE, NULL, 0);
	rc |= create_buffer(&c, 42, 1, SIZE, NULL, 0);
	if (!check("collide_session_alive", rc == 0 && stats(&c, &st) == 0 &&
	    st.session_objects == 6, "client session closed or wrong "
	    "(%llu objects, want 6)", (unsigned long long)st.session_objects))
		goto out;
	rc = read_buffer(&c, 2, 3, SIZE, &rp);
	check("collide_buffer_intact", rc == 0 && rp.r->status == CL_SUCCESS &&
	    rp.bulk_len == SIZE && memcmp(rp.bulk, pat, SIZE) == 0,
	    "buffer read: rc %d status %d, %s", rc, rc == 0 ? rp.r->status : 0,
	    rc == 0 && rp.bulk_len == SIZE ? "bytes changed" : "no bytes");
	reply_free(&rp);

	/* The client leaves: the early bytes go with its session. */
	conn_close(&c);
	rc = wait_sessions(&w, 2);
	check("collide_freed", rc == 0 && wait_empty(&w, &st) == 0,
	    "after the client left: %llu objects, %llu bytes",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&p);
	conn_close(&w);
	srv_stop(&sv, "collide_server_exit");
}

/*
 * A push larger than its transfer fails that transfer (and only it); a
 * second link pushing into a transfer another push is filling is refused
 * and the first push completes; a transfer into a released context ends
 * at the release, and its late push is dropped. Nothing is left held.
 */
static void
test_attacks(void)
{
	enum { SIZE = 1 * MIB };
	struct srv		 sv;
	struct conn		 c, p, p2;
	struct reply		 rp;
	Vcl__StatsResult	 st;
	uint64_t		 sid = 0, key = 0, in0;
	uint8_t			*data;
	cl_int			 evst = 0;
	int			 rc, ls;

	c.fd = p.fd = p2.fd = -1;
	if ((data = malloc(2 * SIZE)) == NULL)
		return;
	memset(data, 0x33, 2 * SIZE);
	if (!srv_start(&sv, "attacks_server_start", "127.0.0.1:0", NULL)) {
		free(data);
		return;
	}
	if (!check("attacks_sessions", client_open(&c, &sv, &sid, &key) == 0 &&
	    peer_open(&p, &sv) == 0 && peer_open(&p2, &sv) == 0,
	    "no sessions"))
		goto out;

	/* Larger than the transfer. */
	rc = create_buffer(&c, 3, 1, SIZE, NULL, 0);
	rc |= migrate_in(&c, 10, 3, SIZE, 77, NULL);
	rc |= stats(&c, &st);
	rc |= push(&p, sid, key, 77, data, 2 * SIZE);
	rc |= wait_notify(&c, 10, &evst);
	check("attacks_push_too_large", rc == 0 && evst == CL_INVALID_VALUE,
	    "push of twice the transfer: event %d, want CL_INVALID_VALUE "
	    "(rc %d)", evst, rc);

	/* A second link pushing into a transfer the first one fills. */
	rc = stats(&c, &st);
	in0 = st.bytes_in;
	rc |= migrate_in(&c, 11, 3, SIZE, 78, NULL);
	rc |= stats(&c, &st);
	rc |= push_start(&p, sid, key, 78, data, SIZE, SIZE / 2);
	rc |= wait_bytes_in(&c, in0 + SIZE);
	rc |= push(&p2, sid, key, 78, data + SIZE, SIZE);
	ls = link_reply(&p2);
	rc |= send_raw(&p, data + SIZE / 2, SIZE - SIZE / 2);
	rc |= wait_notify(&c, 11, &evst);
	check("attacks_second_push_refused", rc == 0 && ls == CL_INVALID_VALUE &&
	    evst == CL_COMPLETE, "second link: reply %d (want "
	    "CL_INVALID_VALUE); the first push's event %d (rc %d)", ls, evst,
	    rc);
	rc = read_buffer(&c, 2, 3, SIZE, &rp);
	check("attacks_first_push_landed", rc == 0 && rp.r->status ==
	    CL_SUCCESS && rp.bulk_len == SIZE && memcmp(rp.bulk, data, SIZE) ==
	    0, "buffer read after the first push: rc %d", rc);
	reply_free(&rp);

	/* Into a context released before its push came. */
	rc = create_context(&c, 5);
	rc |= create_queue(&c, 6, 5);
	rc |= create_buffer(&c, 7, 5, SIZE, NULL, 0);
	rc |= migrate_in(&c, 12, 3, SIZE, 79, NULL);
	rc |= release(&c, VCL__KIND__KIND_MEM, 3);
	rc |= release(&c, VCL__KIND__KIND_QUEUE, 2);
	rc |= release(&c, VCL__KIND__KIND_CONTEXT, 1);
	rc |= wait_notify(&c, 12, &evst);
	rc |= push(&p, sid, key, 79, data, SIZE);
	check("attacks_released_context", rc == 0 && evst < 0 &&
	    wait_session_bytes(&c, SIZE, &st) == 0, "transfer into a released "
	    "context: event %d, session holds %llu bytes (want the one "
	    "buffer left) (rc %d)", evst,
	    (unsigned long long)st.session_bytes, rc);
	rc = release(&c, VCL__KIND__KIND_MEM, 7);
	check("attacks_all_freed", rc == 0 && wait_session_bytes(&c, 0, &st) ==
	    0, "session holds %llu bytes", (unsigned long long)st.session_bytes);
out:
	conn_close(&c);
	conn_close(&p);
	conn_close(&p2);
	free(data);
	srv_stop(&sv, "attacks_server_exit");
}

/*
 * Transfers never (or half) pushed: the client leaving, or releasing the
 * buffer they go to, frees their staging and its charge, also while a push
 * streams into it (the rest is dropped, nothing written into freed memory).
 */
static void
test_unarrived(void)
{
	enum { SIZE = 16 * MIB };
	struct srv		 sv;
	struct conn		 c, p, w;
	Vcl__StatsResult	 st, ws;
	uint64_t		 sid = 0, key = 0, in0;
	uint8_t			*data;
	cl_int			 evst = 0;
	int			 rc;

	c.fd = p.fd = w.fd = -1;
	if ((data = calloc(1, SIZE)) == NULL)
		return;
	if (!srv_start(&sv, "unarrived_server_start", "127.0.0.1:0", NULL)) {
		free(data);
		return;
	}
	if (!check("unarrived_sessions", client_open(&c, &sv, &sid, &key) ==
	    0 && conn_session(&w, &sv) == 0 && peer_open(&p, &sv) == 0,
	    "no sessions"))
		goto out;

	/* Never pushed; the client leaves. */
	rc = create_buffer(&c, 3, 1, SIZE, NULL, 0);
	rc |= migrate_in(&c, 10, 3, SIZE, 77, NULL);
	rc |= stats(&c, &st);
	check("unarrived_staged", rc == 0 && st.session_bytes >= SIZE &&
	    st.session_bytes < 2ull * SIZE, "session holds %llu bytes, want "
	    "the buffer (staging comes with the push)",
	    (unsigned long long)st.session_bytes);
	conn_close(&c);
	rc = wait_sessions(&w, 2);
	check("unarrived_close_frees", rc == 0 && wait_empty(&w, &ws) == 0,
	    "after the client left: %llu objects, %llu bytes held",
	    (unsigned long long)ws.objects, (unsigned long long)ws.bytes);

	/* Never pushed; the client releases the buffer. */
	if (!check("unarrived_session2", client_open(&c, &sv, &sid, &key) == 0,
	    "no session"))
		goto out;
	rc = create_buffer(&c, 3, 1, SIZE, NULL, 0);
	rc |= migrate_in(&c, 10, 3, SIZE, 78, NULL);
	rc |= release(&c, VCL__KIND__KIND_MEM, 3);
	rc |= wait_notify(&c, 10, &evst);
	check("unarrived_release_fails_event", rc == 0 && evst < 0,
	    "migration into a released buffer: event status %d (rc %d)", evst,
	    rc);
	rc = wait_session_bytes(&c, 0, &st);
	check("unarrived_release_frees", rc == 0, "after the release the "
	    "session holds %llu bytes", (unsigned long long)st.session_bytes);

	/* Half pushed when the buffer is released; then the rest comes. */
	rc = stats(&w, &ws);
	in0 = ws.bytes_in;
	rc |= create_buffer(&c, 4, 1, SIZE, NULL, 0);
	rc |= migrate_in(&c, 11, 4, SIZE, 79, NULL);
	rc |= stats(&c, &st);
	rc |= push_start(&p, sid, key, 79, data, SIZE, SIZE / 2);
	rc |= wait_bytes_in(&w, in0 + SIZE);	/* its head is in */
	rc |= release(&c, VCL__KIND__KIND_MEM, 4);
	rc |= wait_notify(&c, 11, &evst);
	rc |= send_raw(&p, data + SIZE / 2, SIZE - SIZE / 2);
	check("unarrived_midpush_release", rc == 0 && evst < 0,
	    "release while a push streams in: event %d (rc %d)", evst, rc);
	rc = wait_session_bytes(&c, 0, &st);
	check("unarrived_midpush_release_frees", rc == 0 && stats(&w, &ws) ==
	    0 && ws.bytes == 0, "session holds %llu bytes, server %llu",
	    (unsigned long long)st.session_bytes,
	    (unsigned long long)ws.bytes);

	/* Half pushed when the client leaves; then the rest comes. */
	rc = stats(&w, &ws);
	in0 = ws.bytes_in;
	rc |= create_buffer(&c, 5, 1, SIZE, NULL, 0);
	rc |= migrate_in(&c, 12, 5, SIZE, 80, NULL);
	rc |= stats(&c, &st);
	rc |= push_start(&p, sid, key, 80, data, SIZE, SIZE / 2);
	rc |= wait_bytes_in(&w, in0 + SIZE);
	conn_close(&c);
	rc |= wait_sessions(&w, 2);
	rc |= send_raw(&p, data + SIZE / 2, SIZE - SIZE / 2);
	rc |= push(&p, sid, key, 81, data, 4096);	/* the link goes on */
	check("unarrived_midpush_close", rc == 0 && wait_empty(&w, &ws) == 0,
	    "after the client left mid-push: %llu objects, %llu bytes (rc %d)",
	    (unsigned long long)ws.objects, (unsigned long long)ws.bytes, rc);
out:
	conn_close(&c);
	conn_close(&p);
	conn_close(&w);
	free(data);
	srv_stop(&sv, "unarrived_server_exit");
}

/*
 * A lost node: a MigrateIn or proxy naming a source the client reported
 * lost (PeerFail) fails at once, whatever order they come in; one whose
 * transfer was failed by id before it came too; a link that closes in
 * the middle of a push fails its transfer.
 */
static void
test_lost(void)
{
	static const char	 gone[] = "127.0.0.1:1";
	struct srv		 sv;
	struct conn		 c, p;
	struct reply		 rp;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	 ue = VCL__CREATE_USER_EVENT__INIT;
	Vcl__SetUserEventStatus	 us = VCL__SET_USER_EVENT_STATUS__INIT;
	Vcl__Marker		 mk = VCL__MARKER__INIT;
	Vcl__CreateProxyEvent	 cp = VCL__CREATE_PROXY_EVENT__INIT;
	Vcl__ReadBuffer		 rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 q = VCL__ENQUEUE__INIT;
	uint64_t		 sid = 0, key = 0, user = 20, proxy = 90;
	uint64_t		 id78 = 78;
	uint8_t			 data[4096];
	cl_int			 evst = 0;
	int			 rc;

	c.fd = p.fd = -1;
	memset(data, 1, sizeof data);
	if (!srv_start(&sv, "lost_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("lost_sessions", client_open(&c, &sv, &sid, &key) == 0 &&
	    peer_open(&p, &sv) == 0, "no sessions"))
		goto out;
	rc = create_buffer(&c, 3, 1, sizeof data, NULL, 0);

	/* The MigrateIn is held (queue order) until after the PeerFail. */
	ue.id = user;
	ue.context = 1;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	rc |= send_req(&c, &r, NULL, 0);
	q.queue = 2;
	q.n_wait = 1;
	q.wait = &user;
	mk.q = &q;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &mk;
	rc |= send_req(&c, &r, NULL, 0);
	rc |= migrate_in(&c, 10, 3, sizeof data, 77, gone);
	rc |= peer_fail(&c, NULL, 0, gone);
	us.event = user;
	us.status = CL_COMPLETE;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &us;
	rc |= send_req(&c, &r, NULL, 0);
	rc |= wait_notify(&c, 10, &evst);
	check("lost_then_migrate_in", rc == 0 && evst < 0, "MigrateIn naming "
	    "a lost source after its PeerFail: event %d (rc %d, -1: none came)",
	    evst, rc);

	/* Failed by id before its MigrateIn came. */
	rc = peer_fail(&c, &id78, 1, NULL);
	rc |= migrate_in(&c, 11, 3, sizeof data, 78, NULL);
	rc |= wait_notify(&c, 11, &evst);
	check("failed_id_then_migrate_in", rc == 0 && evst < 0, "MigrateIn of "
	    "a transfer failed before: event %d (rc %d)", evst, rc);

	/* A proxy naming the lost source: what waits on it fails. */
	cp.id = proxy;
	cp.context = 1;
	cp.source = (char *)gone;
	r.call_case = VCL__REQUEST__CALL_CREATE_PROXY_EVENT;
	r.create_proxy_event = &cp;
	rc = send_req(&c, &r, NULL, 0);
	memset(&q, 0, sizeof q);
	vcl__enqueue__init(&q);
	q.queue = 2;
	q.n_wait = 1;
	q.wait = &proxy;
	rb.q = &q;
	rb.mem = 3;
	rb.size = sizeof data;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &rb;
	rc |= call(&c, &r, NULL, 0, &rp);
	check("lost_proxy", rc == 0 && rp.r->status != CL_SUCCESS,
	    "read waiting on a proxy of a lost source: rc %d status %d", rc,
	    rc == 0 ? rp.r->status : 0);
	reply_free(&rp);

	/* The link closes in the middle of a push. */
	rc = migrate_in(&c, 12, 3, sizeof data, 79, NULL);
	rc |= push_start(&p, sid, key, 79, data, sizeof data, 100);
	conn_close(&p);
	rc |= wait_notify(&c, 12, &evst);
	check("lost_link_midpush", rc == 0 && evst < 0, "transfer of a link "
	    "that closed mid-push: event %d (rc %d, -1: none came)", evst, rc);
out:
	conn_close(&c);
	conn_close(&p);
	srv_stop(&sv, "lost_server_exit");
}

/* A program's source of n bytes: a kernel, then a long comment. */
static char *
big_source(size_t n)
{
	char	*s;
	size_t	 k = strlen(kernel_src);

	if ((s = malloc(n + 1)) == NULL)
		return (NULL);
	memcpy(s, kernel_src, k);
	memcpy(s + k, "/*", 2);
	memset(s + k + 2, 'x', n - k - 4);
	memcpy(s + n - 2, "*/", 2);
	s[n] = '\0';
	return (s);
}

/*
 * What a session makes the server hold counts against its limit: program
 * sources (CL_OUT_OF_HOST_MEMORY past it), held requests, a frame's input
 * buffer (the session is closed); all of it is given back.
 */
static void
test_charge(void)
{
	enum { LIMIT = 48 * MIB, PROG = 6 * MIB, NPROG = 12, NHELD = 200 };
	static const char *const	 lim[] = { "--max-session-bytes",
	    "50331648", NULL };
	struct srv			 sv;
	struct conn			 c, w;
	Vcl__StatsResult		 st;
	Vcl__Request			 r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent		 ue = VCL__CREATE_USER_EVENT__INIT;
	Vcl__SetUserEventStatus		 us = VCL__SET_USER_EVENT_STATUS__INIT;
	Vcl__Marker			 mk = VCL__MARKER__INIT;
	Vcl__Enqueue			 q = VCL__ENQUEUE__INIT;
	char				*src;
	uint64_t			 user = 20, held;
	int				 i, ok = 0, oom = 0, other = 0, s, rc;

	c.fd = w.fd = -1;
	if ((src = big_source(PROG)) == NULL)
		return;
	if (!srv_start(&sv, "charge_server_start", "127.0.0.1:0", lim)) {
		free(src);
		return;
	}
	if (!check("charge_sessions", client_open(&c, &sv, NULL, NULL) == 0 &&
	    conn_session(&w, &sv) == 0, "no sessions"))
		goto out;

	/* Programs until the limit. */
	for (i = 0, rc = 0; i < NPROG; i++) {
		rc |= create_program(&c, 100 + i, 1, src);
		s = get_info_status(&c, VCL__GET_INFO__WHAT__PROGRAM, 100 + i,
		    CL_PROGRAM_REFERENCE_COUNT);
		if (s == CL_SUCCESS)
			ok++;
		else if (s == CL_OUT_OF_HOST_MEMORY)
			oom++;
		else
			other++;
	}
	rc |= stats(&c, &st);
	note("%d programs of %u MiB made, %d refused; session holds %llu "
	    "bytes", ok, PROG / MIB, oom, (unsigned long long)st.session_bytes);
	check("charge_programs", rc == 0 && ok > 0 && oom > 0 && other == 0 &&
	    (uint64_t)ok * PROG <= LIMIT && st.session_bytes >=
	    (uint64_t)ok * PROG, "%d made, %d CL_OUT_OF_HOST_MEMORY, %d other "
	    "errors, %llu bytes charged (rc %d)", ok, oom, other,
	    (unsigned long long)st.session_bytes, rc);
	for (i = 0; i < NPROG; i++)
		rc |= release(&c, VCL__KIND__KIND_PROGRAM, 100 + i);
	rc |= wait_session_bytes(&c, 0, &st);
	check("charge_programs_freed", rc == 0, "after releasing the programs "
	    "the session holds %llu bytes", (unsigned long long)st.session_bytes);

	/* Requests held behind a user event. */
	ue.id = user;
	ue.context = 1;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	rc = send_req(&c, &r, NULL, 0);
	q.queue = 2;
	q.n_wait = 1;
	q.wait = &user;
	mk.q = &q;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &mk;
	for (i = 0; i < NHELD; i++)
		rc |= send_req(&c, &r, NULL, 0);
	rc |= stats(&c, &st);
	held = st.session_bytes;
	us.event = user;
	us.status = CL_COMPLETE;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &us;
	rc |= send_req(&c, &r, NULL, 0);
	check("charge_held", rc == 0 && held >= NHELD * 16 &&
	    wait_session_bytes(&c, 0, &st) == 0, "%d held markers: %llu bytes "
	    "charged; after they ran: %llu", NHELD, (unsigned long long)held,
	    (unsigned long long)st.session_bytes);
	release(&c, VCL__KIND__KIND_EVENT, user);
	conn_close(&c);

	/* A frame larger than what the session may hold: closed. */
	if (!check("charge_session2", client_open(&c, &sv, NULL, NULL) == 0 &&
	    stats(&c, &st) == 0, "no session"))
		goto out;
	free(src);
	if ((src = big_source(LIMIT + 2 * MIB)) == NULL)
		goto out;
	rc = create_program(&c, 100, 1, src);
	check("charge_frame_closes", wait_closed(&c) == 1, "a %u MiB frame "
	    "over a %u MiB session limit did not close the session",
	    (LIMIT + 2 * MIB) / MIB, LIMIT / MIB);
	conn_close(&c);
	rc = wait_sessions(&w, 1);
	check("charge_all_freed", rc == 0 && wait_empty(&w, &st) == 0,
	    "server holds %llu objects, %llu bytes",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&w);
	free(src);
	srv_stop(&sv, "charge_server_exit");
}

/*
 * Replies a client does not read are charged to its session while they
 * wait in the server's output queue, and given back once sent.
 */
static void
test_outq(void)
{
	enum { N = 400000 };
	struct srv		 sv;
	struct conn		 c, w;
	struct reply		 rp;
	Vcl__StatsResult	 st;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Stats		 m = VCL__STATS__INIT;
	struct vcl_buf		 b = { NULL, 0, 0 };
	uint8_t			*all = NULL;
	uint64_t		 most = 0;
	size_t			 i, got;
	int			 rc = 0;

	c.fd = w.fd = -1;
	if (!srv_start(&sv, "outq_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("outq_sessions", conn_session(&c, &sv) == 0 &&
	    conn_session(&w, &sv) == 0, "no sessions"))
		goto out;
	/* A small receive window: the replies stay on the server. */
	(void)setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &(int){ 65536 },
	    sizeof(int));
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	r.seq = 1;
	if (vcl_buf_pack(&b, &r.base, 0) != 0 ||
	    (all = malloc(b.len * N)) == NULL)
		goto out;
	for (i = 0; i < N; i++)
		memcpy(all + i * b.len, b.data, b.len);
	rc = send_raw(&c, all, b.len * N);
	/*
	 * The server works through N requests first (seconds under ASan on
	 * a loaded machine): a bound of a minute, reached only when broken.
	 */
	for (i = 0; rc == 0 && i < 3 * STATS_POLLS && most < MIB; i++) {
		if ((rc = stats(&w, &st)) == 0 && st.bytes > most)
			most = st.bytes;
		poll_wait();
	}
	check("outq_charged", rc == 0 && most >= MIB, "%d unread replies: "
	    "the server holds %llu bytes for them", N,
	    (unsigned long long)most);
	for (got = 0; got < N && recv_msg(&c, &rp) == 0; got++)
		reply_free(&rp);
	check("outq_freed", got == N && wait_empty(&w, &st) == 0, "%zu of %d "
	    "replies read; the server holds %llu bytes", got, N,
	    (unsigned long long)st.bytes);
out:
	vcl_buf_free(&b);
	free(all);
	conn_close(&c);
	conn_close(&w);
	srv_stop(&sv, "outq_server_exit");
}

/*
 * A link this server opens to a "peer" that accepts and never greets (an
 * address any client may name in a MigrateOut): it is closed at the
 * handshake deadline and the migration's event fails; nothing waits on it
 * for ever.
 */
static void
test_stall(void)
{
	const char *const	 extra[] = { "--handshake-timeout", "1", NULL };
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__MigrateOut		 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__PeerDest		 d = VCL__PEER_DEST__INIT;
	struct sockaddr_in	 sa;
	socklen_t		 sl = sizeof sa;
	struct srv		 sv;
	struct conn		 c;
	char			 addr[64];
	cl_int			 st = 0;
	uint64_t		 sid, key;
	int			 lfd, rc, i;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    listen(lfd, 8) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0) {
		check("stall_listener", 0, "%s", strerror(errno));
		return;
	}
	snprintf(addr, sizeof addr, "127.0.0.1:%u", ntohs(sa.sin_port));
	if (!srv_start(&sv, "stall_server_start", "127.0.0.1:0", extra))
		goto out;
	c.fd = -1;
	/* Its handshake ends within the second (a held-up test: again). */
	for (rc = -1, i = 0; i < 5 && rc != 0; i++) {
		conn_close(&c);
		rc = client_open(&c, &sv, &sid, &key);
	}
	if (!check("stall_client", rc == 0 && create_buffer(&c, 3, 1, 4096,
	    NULL, 0) == 0, "no session"))
		goto stop;
	d.addr = addr;
	d.session = 1;
	d.key = 1;
	mo.context = 1;
	mo.mem = 3;
	mo.size = 4096;
	mo.dest = &d;
	mo.transfer = 100;
	mo.has_event = 1;
	mo.event = 101;
	r.seq = ++c.seq;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	rc = send_req(&c, &r, NULL, 0) == 0 ? wait_notify(&c, 101, &st) : -1;
	check("stall_migration_fails", rc == 0 && st < 0, "%s (status %d): "
	    "the push to a peer that never greets still waits", rc != 0 ?
	    "no notification" : "not failed", st);
	check("stall_server_alive", srv_alive(&sv), "server %s", srv_how(&sv));
	conn_close(&c);
stop:
	srv_stop(&sv, "stall_server_exit");
out:
	close(lfd);
}

/* CreateProxyEvent{id, context 1, source if any}. */
static int
proxy_event(struct conn *c, uint64_t id, const char *source)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateProxyEvent	cp = VCL__CREATE_PROXY_EVENT__INIT;

	cp.id = id;
	cp.context = 1;
	cp.source = (char *)source;
	r.call_case = VCL__REQUEST__CALL_CREATE_PROXY_EVENT;
	r.create_proxy_event = &cp;
	return (send_req(c, &r, NULL, 0));
}

/* Poll Stats on c (bounded) until its session holds want objects. */
static int
wait_session_objects(struct conn *c, uint64_t want, Vcl__StatsResult *st)
{
	int	i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, st) != 0)
			return (-1);
		if (st->session_objects == want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/*
 * A proxy event of a source the client released while no peer had
 * completed it stays (a peer may still): once it is completed (PeerEvent,
 * PeerFail by id or by its source) nothing needs it and it goes, not at
 * the session's end. A released arrival event goes too once its bytes
 * came.
 */
static void
test_released_settled(void)
{
	static const char	*const how[] = { "PeerEvent", "PeerFail id",
				    "PeerFail source" };
	static const char	 gone[] = "127.0.0.1:1";
	struct srv		 sv;
	struct conn		 c, p;
	Vcl__StatsResult	 st;
	uint64_t		 sid = 0, key = 0, base, id;
	uint8_t			 data[256];
	int			 i, rc;

	c.fd = p.fd = -1;
	memset(data, 3, sizeof data);
	if (!srv_start(&sv, "settled_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("settled_sessions", client_open(&c, &sv, &sid, &key) == 0 &&
	    peer_open(&p, &sv) == 0 && create_buffer(&c, 3, 1, sizeof data,
	    NULL, 0) == 0 && stats(&c, &st) == 0, "no sessions"))
		goto out;
	base = st.session_objects;
	for (i = 0; i < 3; i++) {
		id = 90 + (uint64_t)i;
		rc = proxy_event(&c, id, gone);
		rc |= release(&c, VCL__KIND__KIND_EVENT, id);
		/* Kept while unset: a peer may still complete it. */
		if (!check("settled_proxy_kept", rc == 0 && stats(&c, &st) ==
		    0 && st.session_objects == base + 1, "%s: a released "
		    "unset proxy: %llu objects, want %llu", how[i],
		    (unsigned long long)st.session_objects,
		    (unsigned long long)base + 1))
			continue;
		if (i == 0)
			rc = peer_event(&p, sid, key, id, CL_COMPLETE);
		else
			rc = peer_fail(&c, i == 1 ? &id : NULL, i == 1,
			    i == 1 ? NULL : gone);
		check("settled_proxy_freed", rc == 0 && wait_session_objects(
		    &c, base, &st) == 0, "%s: the released proxy completed "
		    "stays: %llu objects, want %llu", how[i],
		    (unsigned long long)st.session_objects,
		    (unsigned long long)base);
	}
	/* An arrival event released before its bytes come. */
	rc = migrate_in(&c, 80, 3, sizeof data, 81, NULL);
	rc |= release(&c, VCL__KIND__KIND_EVENT, 80);
	rc |= push(&p, sid, key, 81, data, sizeof data);
	check("settled_arrival_freed", rc == 0 && wait_session_objects(&c,
	    base, &st) == 0, "a released arrival whose bytes came: %llu "
	    "objects, want %llu", (unsigned long long)st.session_objects,
	    (unsigned long long)base);
	check("settled_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
out:
	conn_close(&c);
	conn_close(&p);
	srv_stop(&sv, "settled_server_exit");
}

/*
 * A proxy event made without a source (the field is optional) is still
 * a proxy: its PeerEvent completes it and the command waiting on it runs.
 * It was taken for a migration's arrival, the PeerEvent refused on the
 * link, and the command held until the session ended.
 */
static void
test_proxy_nosource(void)
{
	struct srv		 sv;
	struct conn		 c, p;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Marker		 mk = VCL__MARKER__INIT;
	Vcl__Enqueue		 q = VCL__ENQUEUE__INIT;
	Vcl__StatsResult	 st;
	uint64_t		 sid = 0, key = 0, proxy = 95;
	cl_int			 evst = 1;
	int			 rc;

	c.fd = p.fd = -1;
	if (!srv_start(&sv, "nosource_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("nosource_sessions", client_open(&c, &sv, &sid, &key) ==
	    0 && peer_open(&p, &sv) == 0, "no sessions"))
		goto out;
	rc = proxy_event(&c, proxy, NULL);
	q.queue = 2;
	q.has_event = 1;
	q.event = 96;
	q.n_wait = 1;
	q.wait = &proxy;
	mk.q = &q;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &mk;
	rc |= send_req(&c, &r, NULL, 0);
	/* The proxy is made before its event comes (not kept early). */
	rc |= stats(&c, &st);
	rc |= peer_event(&p, sid, key, proxy, CL_COMPLETE);
	rc |= wait_notify(&c, 96, &evst);
	check("nosource_completed", rc == 0 && evst == CL_COMPLETE, "a marker "
	    "waiting on a proxy without source, completed by PeerEvent: "
	    "event %d (rc %d, -1: none came)", evst, rc);
	check("nosource_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
out:
	conn_close(&c);
	conn_close(&p);
	srv_stop(&sv, "nosource_server_exit");
}

static const struct test tests[] = {
	{ "collide", test_collide, 60 },
	{ "attacks", test_attacks, 60 },
	{ "unarrived", test_unarrived, 90 },
	{ "lost", test_lost, 60 },
	{ "charge", test_charge, 120 },
	{ "outq", test_outq, 60 },
	{ "stall", test_stall, 60 },
	{ "released_settled", test_released_settled, 60 },
	{ "proxy_nosource", test_proxy_nosource, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
