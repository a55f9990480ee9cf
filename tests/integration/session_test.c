/* session_test.c - vclserver sessions over the raw wire protocol. */

/*
 * usage: session_test VCLSERVER BUSY_CLIENT
 *
 * Starts its own vclserver processes (port 0, port file in a temporary
 * directory), speaks the wire protocol to them directly with vclproto and
 * prints PASS/FAIL per check, then "N passed, N failed". BUSY_CLIENT is
 * run through libvcl for the SIGKILL test; the directory holding the vcl.icd
 * it loads comes from VCL_TEST_ICD_DIR. The harness is rawproto.c.
 */

#include "rawproto.h"

/* --- (a) handshake -------------------------------------------------------- */

/* A Hello of another protocol version is answered with why, then closed. */
static void
test_handshake(void)
{
	struct srv	sv;
	struct conn	c;
	struct reply	rp;
	int		rc;

	if (!srv_start(&sv, "handshake_server_start", "127.0.0.1:0", NULL))
		return;
	if (conn_open(&c, &sv) != 0) {
		check("handshake_version_mismatch", 0, "no greeting");
		goto out;
	}
	rc = hello_raw(&c, 999, NULL, 0, &rp);
	if (check("handshake_version_mismatch_reply", rc == 0,
	    "no reply to Hello{version 999} (%s)", rc == 1 ? "closed" :
	    "timeout")) {
		check("handshake_version_mismatch_status", rp.r->status != 0,
		    "status %d, want an error", rp.r->status);
		check("handshake_version_mismatch_message",
		    msg_has(&rp, "version"), "message \"%s\" does not "
		    "mention the version", rp.r->message != NULL ?
		    rp.r->message : "");
		reply_free(&rp);
		check("handshake_version_mismatch_closed", wait_closed(&c),
		    "connection still open after the refusal");
	}
	conn_close(&c);

	/* The right version is welcomed. */
	check("handshake_ok", conn_session(&c, &sv) == 0,
	    "Hello{version %u} not welcomed", VCL_PROTOCOL_VERSION);
	conn_close(&c);
out:
	srv_stop(&sv, "handshake_server_exit");
}

/*
 * SIGTERM drains: a reply queued before the signal (a read's bytes the
 * client has not taken yet) is still sent whole, then every session is
 * closed and the server exits 0.
 */
static void
test_drain(void)
{
	struct srv		 sv;
	struct conn		 x, w;
	struct reply		 rp;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer		 m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 q = VCL__ENQUEUE__INIT;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 seq;
	size_t			 size = 64u << 20, i;
	uint8_t			*data;
	int			 rc;

	if ((data = malloc(size)) == NULL)
		return;
	for (i = 0; i < size; i++)
		data[i] = (uint8_t)(i ^ (i >> 13));
	x.fd = w.fd = -1;
	if (!srv_start(&sv, "drain_server_start", "127.0.0.1:0", NULL)) {
		free(data);
		return;
	}
	if (!check("drain_sessions", conn_session(&x, &sv) == 0 &&
	    conn_session(&w, &sv) == 0, "no sessions"))
		goto out;
	rc = create_context(&x, 1);
	rc |= create_queue(&x, 2, 1);
	rc |= create_buffer(&x, 3, 1, size, data, size);
	q.queue = 2;
	m.q = &q;
	m.mem = 3;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	rc |= send_req(&x, &r, NULL, 0);
	seq = r.seq;
	check("drain_read_sent", rc == 0, "cannot send");

	/* The read is in when its staging is charged next to the buffer. */
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(&w, &st) != 0 || st.bytes == 2 * size)
			break;
		poll_wait();
	}
	if (!check("drain_read_queued", st.bytes == 2 * size, "bytes %llu, "
	    "want %llu (buffer and read staging)",
	    (unsigned long long)st.bytes, (unsigned long long)(2 * size)))
		goto out;

	kill(sv.pid, SIGTERM);
	rc = recv_msg(&x, &rp);
	if (check("drain_reply_sent", rc == 0 && rp.r != NULL &&
	    rp.r->seq == seq, "no reply to the read queued before SIGTERM "
	    "(%s)", rc == 1 ? "closed" : rc == 0 ? "another message" :
	    "timeout"))
		check("drain_reply_whole", rp.r->status == 0 &&
		    rp.bulk_len == size && memcmp(rp.bulk, data, size) == 0,
		    "status %d, %llu of %zu bytes, or other bytes",
		    rp.r->status, (unsigned long long)rp.bulk_len, size);
	if (rc == 0)
		reply_free(&rp);
	check("drain_closes_sessions", wait_closed(&x) && wait_closed(&w),
	    "a session stayed open after SIGTERM");
	if (srv_wait_exit(&sv) != 0)
		check("drain_server_exit", 0, "server still running %d ms "
		    "after SIGTERM", EXIT_POLLS * POLL_MS);
	else
		check("drain_server_exit", WIFEXITED(sv.status) &&
		    WEXITSTATUS(sv.status) == 0, "server %s after SIGTERM, "
		    "want exit 0", srv_how(&sv));
	conn_close(&x);
	conn_close(&w);
	free(data);
	return;
out:
	conn_close(&x);
	conn_close(&w);
	free(data);
	srv_stop(&sv, "drain_server_exit");
}

/* --- (b) authentication --------------------------------------------------- */

/* Write a token file of the given mode. Returns 0 or -1. */
static int
write_token(const char *path, const char *token, mode_t mode)
{
	int	fd;
	ssize_t	n;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)) == -1)
		return (-1);
	n = write(fd, token, strlen(token));
	close(fd);
	if (n != (ssize_t)strlen(token) || chmod(path, mode) != 0)
		return (-1);
	return (0);
}

/* A refused Hello: non-zero status, "authentication" said, then closed. */
static void
auth_refused(const char *name, struct conn *c, const uint8_t *proof,
    size_t len)
{
	struct reply	rp;
	char		n[128];
	int		rc;

	rc = hello_raw(c, VCL_PROTOCOL_VERSION, proof, len, &rp);
	snprintf(n, sizeof n, "%s_reply", name);
	if (!check(n, rc == 0, "no reply (%s)", rc == 1 ? "closed" :
	    "timeout"))
		return;
	snprintf(n, sizeof n, "%s_status", name);
	check(n, rp.r->status != 0, "status %d, want an error", rp.r->status);
	snprintf(n, sizeof n, "%s_message", name);
	check(n, msg_has(&rp, "authentication"), "message \"%s\" does not "
	    "mention authentication", rp.r->message != NULL ? rp.r->message :
	    "");
	reply_free(&rp);
	snprintf(n, sizeof n, "%s_closed", name);
	check(n, wait_closed(c), "connection still open after the refusal");
}

/* A token server refuses a missing or wrong proof and takes the right one. */
static void
test_auth(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct vcl_token	 tok, bad;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint8_t			 proof[VCL_AUTH_PROOF_LEN];
	char			 path[PATH_MAX], err[256];
	const char		*extra[] = { "--token-file", path, NULL };

	snprintf(path, sizeof path, "%s/token", root);
	if (!check("auth_token_file", write_token(path,
	    "5f0c8e2a9b7d41c6a3e8d2f1b0974c5e\n",
	    0600) == 0 && vcl_auth_load(path, &tok, err, sizeof err) == 0,
	    "cannot write %s", path))
		return;
	if (!srv_start(&sv, "auth_server_start", "127.0.0.1:0", extra))
		return;

	if (conn_open(&c, &sv) == 0) {
		check("auth_greeting_requires_auth", c.auth_required,
		    "greeting says auth_required false");
		auth_refused("auth_no_proof", &c, NULL, 0);
		conn_close(&c);
	} else
		check("auth_no_proof", 0, "no greeting");

	if (conn_open(&c, &sv) == 0) {
		memcpy(bad.data, "wrong-token", 11);
		bad.len = 11;
		vcl_auth_prove(&bad, c.nonce, c.nonce_len, proof);
		auth_refused("auth_wrong_proof", &c, proof, sizeof proof);
		conn_close(&c);
	} else
		check("auth_wrong_proof", 0, "no greeting");

	/* A proof over another session's nonce is wrong too (no replay). */
	if (conn_open(&c, &sv) == 0) {
		uint8_t	nonce[VCL_AUTH_NONCE_LEN];

		memset(nonce, 0x5a, sizeof nonce);
		vcl_auth_prove(&tok, nonce, sizeof nonce, proof);
		auth_refused("auth_stale_nonce", &c, proof, sizeof proof);
		conn_close(&c);
	} else
		check("auth_stale_nonce", 0, "no greeting");

	if (conn_open(&c, &sv) == 0) {
		check("auth_good_proof", hello(&c, &tok) == 0,
		    "HMAC(token, nonce) not accepted");
		check("auth_good_proof_serves", stats(&c, &st) == 0,
		    "no Stats reply after the handshake");
		conn_close(&c);
	} else
		check("auth_good_proof", 0, "no greeting");
	srv_stop(&sv, "auth_server_exit");
}

/*
 * A non-loopback address without a token: refused at start-up with a
 * message; with --insecure (or a token) it starts.
 */
static void
test_listen_nonloopback(void)
{
	struct srv	 sv;
	struct conn	 c;
	char		 path[PATH_MAX];
	const char	*insecure[] = { "--insecure", NULL };
	const char	*token[] = { "--token-file", path, NULL };

	if (srv_spawn(&sv, "0.0.0.0:0", NULL) != 0) {
		check("nonloopback_refused", 0, "cannot start the server");
		return;
	}
	if (srv_wait_exit(&sv) != 0) {
		check("nonloopback_refused", 0, "server on 0.0.0.0 without a "
		    "token is still running");
		kill(sv.pid, SIGTERM);
		srv_wait_exit(&sv);
	} else {
		check("nonloopback_refused", WIFEXITED(sv.status) &&
		    WEXITSTATUS(sv.status) != 0, "server %s, want a non-zero "
		    "exit", srv_how(&sv));
		check("nonloopback_refused_message",
		    srv_stderr_has(&sv, "token") ||
		    srv_stderr_has(&sv, "loopback"), "stderr (%s/stderr) does "
		    "not name the problem", sv.dir);
	}

	if (srv_start(&sv, "nonloopback_insecure_start", "0.0.0.0:0",
	    insecure)) {
		check("nonloopback_insecure_serves", conn_session(&c, &sv) == 0,
		    "no session with the --insecure server");
		conn_close(&c);
		srv_stop(&sv, "nonloopback_insecure_server_exit");
	}

	snprintf(path, sizeof path, "%s/token-nl", root);
	if (write_token(path, "Zq8vN3kLp0Xw7RtY2mBc5H", 0600) != 0) {
		check("nonloopback_token_start", 0, "cannot write %s", path);
		return;
	}
	if (srv_start(&sv, "nonloopback_token_start", "0.0.0.0:0", token)) {
		check("nonloopback_token_serves", conn_open(&c, &sv) == 0 &&
		    c.auth_required, "no greeting asking for a token");
		conn_close(&c);
		srv_stop(&sv, "nonloopback_token_server_exit");
	}
}

/* --- (c) isolation and cleanup -------------------------------------------- */

/*
 * Session A makes objects; B sees them counted server-wide but cannot use
 * them; once A's socket closes every object and byte is given back.
 */
static void
test_isolation(void)
{
	struct srv		 sv;
	struct conn		 a, b;
	struct reply		 rp;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	static uint8_t		 pattern[4096];
	size_t			 i;
	int			 rc;

	for (i = 0; i < sizeof pattern; i++)
		pattern[i] = (uint8_t)(i * 7 + 3);
	if (!srv_start(&sv, "isolation_server_start", "127.0.0.1:0", NULL))
		return;
	a.fd = b.fd = -1;
	if (!check("isolation_session_a", conn_session(&a, &sv) == 0,
	    "no session"))
		goto out;
	rc = create_context(&a, 1);
	rc |= create_queue(&a, 2, 1);
	rc |= create_buffer(&a, 3, 1, 4096, NULL, 0);
	rc |= create_buffer(&a, 4, 1, 4096, pattern, sizeof pattern);
	rc |= create_buffer(&a, 5, 1, 4096, NULL, 0);
	rc |= create_program(&a, 6, 1, kernel_src);
	check("isolation_a_creates", rc == 0, "cannot send the creations");

	if (check("isolation_a_stats", stats(&a, &st) == 0, "no Stats reply")) {
		check("isolation_a_session_objects", st.session_objects == 6,
		    "session_objects %llu, want 6",
		    (unsigned long long)st.session_objects);
		/* Three buffers and the program's source. */
		check("isolation_a_session_bytes", st.session_bytes ==
		    3 * 4096 + strlen(kernel_src), "session_bytes %llu, want "
		    "%zu", (unsigned long long)st.session_bytes,
		    3 * 4096 + strlen(kernel_src));
	}
	rc = read_buffer(&a, 2, 4, 4096, &rp);
	if (check("isolation_a_reads_own", rc == 0, "no reply to A's read")) {
		check("isolation_a_reads_own_data", rp.r->status == 0 &&
		    rp.bulk_len == sizeof pattern &&
		    memcmp(rp.bulk, pattern, sizeof pattern) == 0,
		    "status %d, %llu bytes, want the initial bytes back",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}

	if (!check("isolation_session_b", conn_session(&b, &sv) == 0,
	    "no session"))
		goto out;
	if (check("isolation_b_stats", stats(&b, &st) == 0, "no Stats reply")) {
		check("isolation_b_sees_server_objects", st.objects >= 6,
		    "objects %llu, want A's 6 counted",
		    (unsigned long long)st.objects);
		check("isolation_b_session_objects", st.session_objects == 0,
		    "session_objects %llu, want 0",
		    (unsigned long long)st.session_objects);
		check("isolation_b_session_bytes", st.session_bytes == 0,
		    "session_bytes %llu, want 0",
		    (unsigned long long)st.session_bytes);
		check("isolation_sessions", st.sessions == 2,
		    "sessions %llu, want 2", (unsigned long long)st.sessions);
	}
	rc = read_buffer(&b, 2, 4, 4096, &rp);
	if (check("isolation_b_read_foreign_reply", rc == 0,
	    "no reply to B's read of A's ids (%s)", rc == 1 ? "closed" :
	    "timeout")) {
		check("isolation_b_read_foreign_error", rp.r->status < 0,
		    "status %d, want an error", rp.r->status);
		check("isolation_b_read_foreign_no_data", rp.bulk_len == 0 ||
		    memcmp(rp.bulk, pattern, rp.bulk_len < sizeof pattern ?
		    rp.bulk_len : sizeof pattern) != 0,
		    "B got %llu bytes of A's buffer",
		    (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}
	rc = get_info_status(&b, VCL__GET_INFO__WHAT__MEM, 4, CL_MEM_SIZE);
	check("isolation_b_info_foreign", rc == CL_INVALID_MEM_OBJECT,
	    "GetInfo of A's buffer: %d, want CL_INVALID_MEM_OBJECT", rc);

	/* B's releases of A's ids touch nothing of A's. */
	rc = release(&b, VCL__KIND__KIND_MEM, 4);
	rc |= release(&b, VCL__KIND__KIND_QUEUE, 2);
	check("isolation_b_release_foreign_sent", rc == 0, "cannot send");
	if (stats(&b, &st) == 0)
		check("isolation_b_release_foreign", st.objects >= 6,
		    "objects %llu after B released A's ids, want A's 6",
		    (unsigned long long)st.objects);
	rc = read_buffer(&a, 2, 4, 4096, &rp);
	check("isolation_a_unaffected", rc == 0 && rp.r->status == 0 &&
	    rp.bulk_len == sizeof pattern && memcmp(rp.bulk, pattern,
	    sizeof pattern) == 0, "A's read after B's releases failed");
	if (rc == 0)
		reply_free(&rp);

	/* Ids are per session: B may use A's numbers for its own objects. */
	rc = create_context(&b, 1);
	if (rc == 0 && stats(&b, &st) == 0)
		check("isolation_b_own_id_space", st.session_objects == 1 &&
		    st.objects >= 7, "session_objects %llu objects %llu, want "
		    "1 and A's 6 + 1", (unsigned long long)st.session_objects,
		    (unsigned long long)st.objects);
	else
		check("isolation_b_own_id_space", 0, "no Stats reply");
	rc = release(&b, VCL__KIND__KIND_CONTEXT, 1);
	if (rc == 0 && stats(&b, &st) == 0)
		check("isolation_b_release_own", st.session_objects == 0,
		    "session_objects %llu after release, want 0",
		    (unsigned long long)st.session_objects);
	else
		check("isolation_b_release_own", 0, "no Stats reply");

	/* A goes away: everything it held is released. */
	conn_close(&a);
	rc = wait_empty(&b, &st);
	check("cleanup_on_close", rc == 0, "after A closed: objects %llu "
	    "bytes %llu, want 0 and 0 within %d ms",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes,
	    STATS_POLLS * POLL_MS);
	if (rc == 0)
		check("cleanup_sessions", st.sessions == 1,
		    "sessions %llu, want 1", (unsigned long long)st.sessions);

	/* A new buffer never shows what A's freed memory held. */
	rc = create_context(&b, 10);
	rc |= create_queue(&b, 11, 10);
	rc |= create_buffer(&b, 12, 10, sizeof pattern, NULL, 0);
	if (rc == 0 && read_buffer(&b, 11, 12, sizeof pattern, &rp) == 0) {
		for (i = 0; i < rp.bulk_len && rp.bulk[i] == 0; i++)
			;
		check("isolation_new_buffer_zeroed", rp.r->status == 0 &&
		    rp.bulk_len == sizeof pattern && i == rp.bulk_len,
		    "status %d, %llu bytes, byte %zu not zero", rp.r->status,
		    (unsigned long long)rp.bulk_len, i);
		reply_free(&rp);
	} else
		check("isolation_new_buffer_zeroed", 0, "no reply to the read");
out:
	conn_close(&a);
	conn_close(&b);
	srv_stop(&sv, "isolation_server_exit");
}

/*
 * A buffer the server refuses (bigger than CL_DEVICE_MAX_MEM_ALLOC_SIZE)
 * holds no bytes: the session's count stays 0 and the server's returns to
 * 0 once the session is gone.
 */
static void
test_accounting(void)
{
	struct srv		 sv;
	struct conn		 c, w;
	struct reply		 rp;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 max = 0;
	int			 rc;

	if (!srv_start(&sv, "accounting_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = w.fd = -1;
	if (!check("accounting_session", conn_session(&c, &sv) == 0 &&
	    device_info_u64(&c, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &max) == 0,
	    "no session, or no CL_DEVICE_MAX_MEM_ALLOC_SIZE"))
		goto out;
	rc = create_context(&c, 1);
	rc |= create_queue(&c, 2, 1);
	rc |= create_buffer(&c, 3, 1, max + 4096, NULL, 0);
	check("accounting_sent", rc == 0, "cannot send");
	rc = read_buffer(&c, 2, 3, 4096, &rp);
	if (check("accounting_oversize_read_reply", rc == 0, "no reply")) {
		check("accounting_oversize_error", rp.r->status < 0,
		    "status %d for a buffer of %llu bytes (max alloc %llu)",
		    rp.r->status, (unsigned long long)(max + 4096),
		    (unsigned long long)max);
		reply_free(&rp);
	}
	if (check("accounting_stats", stats(&c, &st) == 0, "no Stats reply"))
		check("accounting_refused_buffer_uncharged",
		    st.session_bytes == 0, "session_bytes %llu after a "
		    "refused buffer of %llu bytes, want 0",
		    (unsigned long long)st.session_bytes,
		    (unsigned long long)(max + 4096));
	conn_close(&c);
	if (check("accounting_watch_session", conn_session(&w, &sv) == 0,
	    "no session")) {
		rc = wait_empty(&w, &st);
		check("accounting_bytes_returned", rc == 0, "objects %llu "
		    "bytes %llu after the session closed, want 0 and 0",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);
	}
out:
	conn_close(&c);
	conn_close(&w);
	srv_stop(&sv, "accounting_server_exit");
}

/*
 * A migration's bytes that start coming over a peer link before the
 * client's MigrateIn and finish after it: the server stages them in the
 * link's memory (no transfer is waiting yet) and must hand them to the
 * transfer the MigrateIn then made, not fail it. A ReadBuffer waiting on
 * the migration's event must see the pushed bytes.
 */
static void
test_push_race(void)
{
	enum { SIZE = 256 << 10 };
	struct srv		 sv;
	struct conn		 c, p;
	struct reply		 rp;
	struct vcl_buf		 b = { NULL, 0, 0 };
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__PeerPush		 pp = VCL__PEER_PUSH__INIT;
	Vcl__MigrateIn		 mi = VCL__MIGRATE_IN__INIT;
	Vcl__ReadBuffer		 rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 qi = VCL__ENQUEUE__INIT, qr = VCL__ENQUEUE__INIT;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 sid = 0, key = 0, ev = 10, xfer = 77;
	uint8_t			*data;
	cl_int			 evst = 1;
	size_t			 i;
	int			 rc, got = 0;

	c.fd = p.fd = -1;
	if ((data = malloc(SIZE)) == NULL)
		return;
	for (i = 0; i < SIZE; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	if (!srv_start(&sv, "push_race_server_start", "127.0.0.1:0", NULL)) {
		free(data);
		return;
	}
	if (!check("push_race_sessions", conn_open(&c, &sv) == 0 &&
	    hello_as(&c, 0, &sid, &key) == 0 && conn_open(&p, &sv) == 0 &&
	    hello_as(&p, 1, NULL, NULL) == 0, "no client or peer session"))
		goto out;
	rc = create_context(&c, 1);
	rc |= create_queue(&c, 2, 1);
	rc |= create_buffer(&c, 3, 1, SIZE, NULL, 0);

	/* The push's head and half its bytes: staged by the link. */
	pp.session = sid;
	pp.key = key;
	pp.transfer = xfer;
	pp.status = CL_SUCCESS;
	r.call_case = VCL__REQUEST__CALL_PEER_PUSH;
	r.peer_push = &pp;
	r.seq = 1;
	rc |= vcl_buf_pack(&b, &r.base, SIZE);
	rc |= send_raw(&p, b.data, b.len);
	rc |= send_raw(&p, data, SIZE / 2);
	vcl_buf_free(&b);
	/*
	 * The head is in (its bulk counted) before the MigrateIn is sent:
	 * with no transfer waiting yet, the push is staged.
	 */
	if (!check("push_race_staged", rc == 0 && wait_bytes_in(&c, SIZE) ==
	    0, "the push's head never came in"))
		goto out;

	/* The MigrateIn, done before the rest comes (Stats: it ran). */
	qi.queue = 2;
	qi.has_event = 1;
	qi.event = ev;
	mi.q = &qi;
	mi.mem = 3;
	mi.offset = 0;
	mi.size = SIZE;
	mi.transfer = xfer;
	memset(&r, 0, sizeof r);
	vcl__request__init(&r);
	r.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	r.migrate_in = &mi;
	rc |= send_req(&c, &r, NULL, 0);
	rc |= stats(&c, &st);
	rc |= send_raw(&p, data + SIZE / 2, SIZE - SIZE / 2);
	if (!check("push_race_sent", rc == 0, "cannot send"))
		goto out;

	/* Read the buffer after the migration's event. */
	qr.queue = 2;
	qr.n_wait = 1;
	qr.wait = &ev;
	rb.q = &qr;
	rb.mem = 3;
	rb.offset = 0;
	rb.size = SIZE;
	memset(&r, 0, sizeof r);
	vcl__request__init(&r);
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &rb;
	if (!check("push_race_read_sent", send_req(&c, &r, NULL, 0) == 0,
	    "cannot send the read"))
		goto out;
	while (!got && recv_msg(&c, &rp) == 0) {
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev)
				evst = rp.tc->notify[i]->status;
		if (rp.r != NULL && rp.r->seq == r.seq) {
			got = 1;
			check("push_race_read", rp.r->status == CL_SUCCESS &&
			    rp.bulk_len == SIZE && memcmp(rp.bulk, data,
			    SIZE) == 0, "read status %d, %llu bytes%s",
			    rp.r->status, (unsigned long long)rp.bulk_len,
			    rp.bulk_len == SIZE ? ", not the pushed ones" : "");
		}
		reply_free(&rp);
	}
	check("push_race_reply", got, "no reply to the read");
	check("push_race_event", evst == CL_COMPLETE, "migration event "
	    "status %d, want CL_COMPLETE", evst);
out:
	conn_close(&c);
	conn_close(&p);
	free(data);
	srv_stop(&sv, "push_race_server_exit");
}

/* --- (d) SIGKILL of a real client ----------------------------------------- */

/*
 * Start the busy client through libvcl with its stdout on a pipe. Returns
 * its pid, or -1.
 */
static pid_t
busy_spawn(const struct srv *sv, const char *icd, int *outfd)
{
	char	nodes[64];
	pid_t	pid;
	int	p[2], fd;

	if (pipe2(p, O_CLOEXEC) != 0)
		return (-1);
	snprintf(nodes, sizeof nodes, "127.0.0.1:%s", sv->port);
	fflush(stdout);
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return (-1);
	}
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		if ((fd = open("/dev/null", O_RDONLY)) != -1) {
			dup2(fd, STDIN_FILENO);
			close(fd);
		}
		setenv("VCL_NODES", nodes, 1);
		setenv("OCL_ICD_VENDORS", icd, 1);
		execl(client_path, client_path, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", client_path, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	*outfd = p[0];
	return (pid);
}

/*
 * Wait (bounded) for a line "ready" on fd. Returns 0, or -1 when the
 * client ended or stayed silent.
 */
static int
busy_wait_ready(int fd)
{
	struct pollfd	pfd;
	char		buf[256];
	size_t		len = 0;
	ssize_t		n;
	int		i;

	pfd.fd = fd;
	pfd.events = POLLIN;
	for (i = 0; i < 3000; i++) {
		if (poll(&pfd, 1, POLL_MS) <= 0)
			continue;
		n = read(fd, buf + len, sizeof buf - 1 - len);
		if (n <= 0)
			return (-1);
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "ready\n") != NULL)
			return (0);
		if (len == sizeof buf - 1)
			len = 0;
	}
	return (-1);
}

/*
 * A libvcl client killed with SIGKILL mid-work: its objects and bytes are
 * all released and the server goes on serving.
 */
static void
test_sigkill(void)
{
	struct srv		 sv;
	struct conn		 w, n;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	const char		*icd = getenv("VCL_TEST_ICD_DIR");
	pid_t			 pid = -1;
	int			 outfd = -1, status, rc;

	if (!check("sigkill_icd_dir", icd != NULL && *icd != '\0',
	    "VCL_TEST_ICD_DIR (the directory of vcl.icd) is not set"))
		return;
	if (!srv_start(&sv, "sigkill_server_start", "127.0.0.1:0", NULL))
		return;
	w.fd = -1;
	if (!check("sigkill_watch_session", conn_session(&w, &sv) == 0,
	    "no session"))
		goto out;
	if ((pid = busy_spawn(&sv, icd, &outfd)) == -1) {
		check("sigkill_client_ready", 0, "cannot start %s",
		    client_path);
		goto out;
	}
	if (!check("sigkill_client_ready", busy_wait_ready(outfd) == 0,
	    "%s never printed ready (see its stderr above)", client_path))
		goto out;
	if (check("sigkill_client_objects", stats(&w, &st) == 0 &&
	    st.objects > 0 && st.sessions >= 2, "objects %llu sessions %llu, "
	    "want the client's objects and its session",
	    (unsigned long long)st.objects, (unsigned long long)st.sessions))
		note("client holds %llu objects, %llu bytes",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);

	kill(pid, SIGKILL);
	rc = waitpid(pid, &status, 0);
	pid = -1;
	check("sigkill_client_killed", rc > 0 && WIFSIGNALED(status) &&
	    WTERMSIG(status) == SIGKILL, "client did not die of SIGKILL "
	    "(status %#x): did it exit early?", status);

	rc = wait_empty(&w, &st);
	check("sigkill_cleanup", rc == 0, "objects %llu bytes %llu after the "
	    "kill, want 0 and 0 within %d ms", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes, STATS_POLLS * POLL_MS);
	check("sigkill_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
	if (check("sigkill_new_session", conn_session(&n, &sv) == 0,
	    "no new session after the kill")) {
		check("sigkill_new_session_stats", stats(&n, &st) == 0 &&
		    st.sessions == 2, "no Stats reply, or sessions %llu (want "
		    "2)", (unsigned long long)st.sessions);
		conn_close(&n);
	}
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (outfd != -1)
		close(outfd);
	conn_close(&w);
	srv_stop(&sv, "sigkill_server_exit");
}

/* --- (e) malformed input -------------------------------------------------- */

/* A header with any magic word. */
static void
raw_header(uint8_t *h, uint32_t magic, uint32_t msg_len, uint64_t bulk_len)
{
	uint32_t	w[4];

	w[0] = htonl(magic);
	w[1] = htonl(msg_len);
	w[2] = htonl((uint32_t)(bulk_len >> 32));
	w[3] = htonl((uint32_t)bulk_len);
	memcpy(h, w, sizeof w);
}

/*
 * Open a session (handshaken unless preauth), send bytes (prepared by
 * send_fn), and check the server closes it while the long-lived good
 * session still gets Stats replies.
 */
static void
malformed_case(const char *name, struct srv *sv, struct conn *good,
    int preauth, int (*send_fn)(struct conn *))
{
	Vcl__StatsResult	st = VCL__STATS_RESULT__INIT;
	struct conn		c;
	char			n[128];

	if (preauth ? conn_open(&c, sv) != 0 : conn_session(&c, sv) != 0) {
		check(name, 0, "no session to send it on");
		return;
	}
	if (send_fn(&c) != 0)
		note("%s: write failed: %s (closed early?)", name,
		    strerror(errno));
	check(name, wait_closed(&c), "connection still open %d s later",
	    RECV_TIMEOUT_S);
	conn_close(&c);
	snprintf(n, sizeof n, "%s_others_unaffected", name);
	check(n, srv_alive(sv) && stats(good, &st) == 0,
	    "the good session got no Stats reply afterwards (server %s)",
	    srv_how(sv));
}

/* (1) A frame with a bad magic word. */
static int
send_bad_magic(struct conn *c)
{
	uint8_t	f[VCL_FRAME_HDR_LEN + 8];

	memset(f, 0, sizeof f);
	raw_header(f, 0xdeadbe01u, 8, 0);
	return (send_raw(c, f, sizeof f));
}

/*
 * (2) A message over --max-frame (1024): a Stats request made 4 KiB long
 * by an unknown field, so a server ignoring the limit would answer it.
 */
static int
send_over_max_frame(struct conn *c)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__Stats	 m = VCL__STATS__INIT;
	static uint8_t	 f[VCL_FRAME_HDR_LEN + 4200];
	size_t		 n;

	r.seq = ++c->seq;
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	n = VCL_FRAME_HDR_LEN + vcl__request__pack(&r, f + VCL_FRAME_HDR_LEN);
	f[n++] = 0xc2;		/* field 1000, length-delimited */
	f[n++] = 0x3e;
	f[n++] = 0xa0;		/* 4000 bytes */
	f[n++] = 0x1f;
	memset(f + n, 'x', 4000);
	n += 4000;
	vcl_frame_encode(f, (uint32_t)(n - VCL_FRAME_HDR_LEN), 0);
	return (send_raw(c, f, n));
}

/* (3) A valid header, then bytes that are no protobuf. */
static int
send_garbage_protobuf(struct conn *c)
{
	uint8_t	f[VCL_FRAME_HDR_LEN + 32];

	memset(f, 0xff, sizeof f);
	raw_header(f, VCL_FRAME_MAGIC | VCL_PROTOCOL_VERSION, 32, 0);
	return (send_raw(c, f, sizeof f));
}

/* (4) Request{seq 5, field 99 (no such call): bytes}. */
static int
send_unknown_call(struct conn *c)
{
	static const uint8_t	msg[] = {
		0x08, 0x05,		/* field 1 varint: seq 5 */
		0x9a, 0x06, 0x02,	/* field 99, length-delimited, 2 */
		0x08, 0x01
	};
	uint8_t			f[VCL_FRAME_HDR_LEN + sizeof msg];

	vcl_frame_encode(f, sizeof msg, 0);
	memcpy(f + VCL_FRAME_HDR_LEN, msg, sizeof msg);
	return (send_raw(c, f, sizeof f));
}

/* (5) Stats, which takes no bulk, with 8 bulk bytes. */
static int
send_bulk_on_stats(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;
	static uint8_t	bulk[8];

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	return (send_req(c, &r, bulk, sizeof bulk));
}

/* (6) CreateBuffer{size 4096, has_data} with 100 bulk bytes. */
static int
send_buffer_short_data(struct conn *c)
{
	static uint8_t	data[100];

	return (create_buffer(c, 100, 1, 4096, data, sizeof data));
}

/* (6b) CreateBuffer{size 4096, has_data} with no bulk at all. */
static int
send_buffer_no_data(struct conn *c)
{
	static uint8_t	data[1];

	return (create_buffer(c, 100, 1, 4096, data, 0));
}

/* (7) A message length of 0. */
static int
send_empty_frame(struct conn *c)
{
	uint8_t	f[VCL_FRAME_HDR_LEN];

	vcl_frame_encode(f, 0, 0);
	return (send_raw(c, f, sizeof f));
}

/* (8) Stats before the handshake. */
static int
send_stats_preauth(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	return (send_req(c, &r, NULL, 0));
}

/* (9) A second Hello once welcomed. */
static int
send_second_hello(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Hello	h = VCL__HELLO__INIT;

	h.version = VCL_PROTOCOL_VERSION;
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	return (send_req(c, &r, NULL, 0));
}

/* Each kind of malformed input closes its own session only. */
static void
test_malformed(void)
{
	struct srv		 sv;
	struct conn		 good;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	const char		*extra[] = { "--max-frame", "1024", NULL };
	int			 rc;

	if (!srv_start(&sv, "malformed_server_start", "127.0.0.1:0", extra))
		return;
	if (!check("malformed_good_session", conn_session(&good, &sv) == 0,
	    "no session"))
		goto out;
	/* The good session holds objects that must survive all of it. */
	rc = create_context(&good, 1);
	rc |= create_queue(&good, 2, 1);
	rc |= create_buffer(&good, 3, 1, 4096, NULL, 0);
	check("malformed_good_objects", rc == 0 && stats(&good, &st) == 0 &&
	    st.session_objects == 3, "good session could not make 3 objects");

	malformed_case("malformed_bad_magic", &sv, &good, 0, send_bad_magic);
	malformed_case("malformed_over_max_frame", &sv, &good, 0,
	    send_over_max_frame);
	malformed_case("malformed_garbage_protobuf", &sv, &good, 0,
	    send_garbage_protobuf);
	malformed_case("malformed_unknown_call", &sv, &good, 0,
	    send_unknown_call);
	malformed_case("malformed_bulk_on_stats", &sv, &good, 0,
	    send_bulk_on_stats);
	malformed_case("malformed_buffer_data_size", &sv, &good, 0,
	    send_buffer_short_data);
	malformed_case("malformed_buffer_data_missing", &sv, &good, 0,
	    send_buffer_no_data);
	malformed_case("malformed_empty_frame", &sv, &good, 0,
	    send_empty_frame);
	malformed_case("malformed_call_before_hello", &sv, &good, 1,
	    send_stats_preauth);
	malformed_case("malformed_second_hello", &sv, &good, 0,
	    send_second_hello);
	malformed_case("malformed_garbage_before_hello", &sv, &good, 1,
	    send_garbage_protobuf);

	/* Only the good session and its own objects are left. */
	if (check("malformed_good_stats", stats(&good, &st) == 0,
	    "no Stats reply")) {
		check("malformed_sessions_gone", st.sessions == 1,
		    "sessions %llu, want 1", (unsigned long long)st.sessions);
		check("malformed_objects_released", st.objects == 3 &&
		    st.session_objects == 3 && st.bytes == 4096,
		    "objects %llu session_objects %llu bytes %llu, want 3, 3, "
		    "4096", (unsigned long long)st.objects,
		    (unsigned long long)st.session_objects,
		    (unsigned long long)st.bytes);
	}
	conn_close(&good);
out:
	srv_stop(&sv, "malformed_server_exit");
}

/* --- (f) limits ----------------------------------------------------------- */

/* Over --max-session-bytes a buffer fails with an error, not a crash. */
static void
test_limit_bytes(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct reply		 rp;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	const char		*extra[] = { "--max-session-bytes", "1M",
				    NULL };
	uint8_t			*big;
	size_t			 bigsz = 2u << 20;
	int			 rc;

	if ((big = calloc(1, bigsz)) == NULL)
		return;
	if (!srv_start(&sv, "limit_bytes_server_start", "127.0.0.1:0",
	    extra)) {
		free(big);
		return;
	}
	if (!check("limit_bytes_session", conn_session(&c, &sv) == 0,
	    "no session"))
		goto out;
	rc = create_context(&c, 1);
	rc |= create_queue(&c, 2, 1);
	rc |= create_buffer(&c, 3, 1, bigsz, NULL, 0);
	check("limit_bytes_sent", rc == 0, "cannot send");
	rc = read_buffer(&c, 2, 3, bigsz, &rp);
	if (check("limit_bytes_read_reply", rc == 0, "no reply to the read "
	    "(%s)", rc == 1 ? "closed" : "timeout")) {
		check("limit_bytes_read_error", rp.r->status ==
		    CL_MEM_OBJECT_ALLOCATION_FAILURE, "status %d, want "
		    "CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)", rp.r->status);
		check("limit_bytes_read_no_data", rp.bulk_len == 0,
		    "%llu bytes came back", (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}

	/* The same with the 2 MiB sent as initial bulk: dropped, not kept. */
	rc = create_buffer(&c, 4, 1, bigsz, big, bigsz);
	check("limit_bytes_bulk_sent", rc == 0, "cannot send");
	rc = read_buffer(&c, 2, 4, bigsz, &rp);
	if (check("limit_bytes_bulk_read_reply", rc == 0, "no reply to the "
	    "read (%s)", rc == 1 ? "closed" : "timeout")) {
		check("limit_bytes_bulk_read_error", rp.r->status ==
		    CL_MEM_OBJECT_ALLOCATION_FAILURE, "status %d, want "
		    "CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)", rp.r->status);
		reply_free(&rp);
	}

	/* Under the limit things still work, and nothing leaked. */
	rc = create_buffer(&c, 5, 1, 256u << 10, big, 256u << 10);
	if (rc == 0 && read_buffer(&c, 2, 5, 256u << 10, &rp) == 0) {
		check("limit_bytes_small_ok", rp.r->status == 0 &&
		    rp.bulk_len == 256u << 10, "status %d, %llu bytes",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	} else
		check("limit_bytes_small_ok", 0, "no reply");
	if (check("limit_bytes_stats", stats(&c, &st) == 0, "no Stats reply"))
		check("limit_bytes_accounting", st.session_bytes == 256u << 10,
		    "session_bytes %llu, want %u (only the small buffer)",
		    (unsigned long long)st.session_bytes, 256u << 10);
	check("limit_bytes_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
	conn_close(&c);
out:
	free(big);
	srv_stop(&sv, "limit_bytes_server_exit");
}

/* Over --max-objects creations are refused, the session goes on. */
static void
test_limit_objects(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	const char		*extra[] = { "--max-objects", "10", NULL };
	uint64_t		 id;
	int			 rc = 0;

	if (!srv_start(&sv, "limit_objects_server_start", "127.0.0.1:0",
	    extra))
		return;
	if (!check("limit_objects_session", conn_session(&c, &sv) == 0,
	    "no session"))
		goto out;
	for (id = 1; id <= 20; id++)
		rc |= create_context(&c, id);
	check("limit_objects_sent", rc == 0, "cannot send");
	if (check("limit_objects_stats", stats(&c, &st) == 0,
	    "no Stats reply after 20 contexts")) {
		check("limit_objects_capped", st.session_objects <= 10,
		    "session_objects %llu, want <= 10",
		    (unsigned long long)st.session_objects);
		note("session_objects %llu; GetInfo of context 15: %d",
		    (unsigned long long)st.session_objects,
		    get_info_status(&c, VCL__GET_INFO__WHAT__CONTEXT, 15,
		    CL_CONTEXT_REFERENCE_COUNT));
	}
	check("limit_objects_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
	conn_close(&c);
out:
	srv_stop(&sv, "limit_objects_server_exit");
}

/* --- runner --------------------------------------------------------------- */

static const struct test tests[] = {
	{ "handshake",		test_handshake,		60 },
	{ "drain",		test_drain,		60 },
	{ "auth",		test_auth,		60 },
	{ "listen",		test_listen_nonloopback, 90 },
	{ "isolation",		test_isolation,		60 },
	{ "accounting",		test_accounting,	60 },
	{ "push_race",		test_push_race,		60 },
	{ "sigkill",		test_sigkill,		120 },
	{ "malformed",		test_malformed,		180 },
	{ "limit_bytes",	test_limit_bytes,	60 },
	{ "limit_objects",	test_limit_objects,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
