/*
 * direct2_test.c - a direct-mode pull never outlives its transfer. The
 * destination's read is held after its first piece (VCL_TEST_DIRECT_HOLD,
 * until a file exists) while its transfer ends early: its client gives
 * it up (PeerFail), its client's session goes, or the source dies (the
 * link closes). The migration's answer comes only once the read ended;
 * the destination's range then holds the source's bytes or zeros, never
 * what the source's memory held later (the source lets its buffer go and
 * another session fills fresh ones with a pattern of its own); a retried
 * migration into that range lands whole; nothing stays held. The source
 * may also be this process, speaking the ucx backend's placement messages
 * itself: it names its bytes (SOURCE), sends ABORT while the read is held
 * and writes other bytes there at once, as memory it let go of.
 */
#include <sys/mman.h>

#include "rawproto.h"
#include "ucxpeer.h"

#define MIB		(1u << 20)
#define BUF_BYTES	(48 * MIB + 4324)
#define SIZE		(40 * MIB)	/* held: 32 MiB or more */
#define OFF_SRC		(3 * 4096 + 100)
#define OFF_DST		(2 * 4096 + 36)

/* The word at index i of a buffer filled with seed. */
static uint32_t
word(uint32_t seed, size_t i)
{
	return ((uint32_t)i * 2654435761u ^ seed);
}

/* A buffer of n bytes (a multiple of 4) filled with seed's words. */
static uint32_t *
words(uint32_t seed, size_t n)
{
	uint32_t	*w;
	size_t		 i;

	if ((w = malloc(n)) == NULL)
		return (NULL);
	for (i = 0; i < n / 4; i++)
		w[i] = word(seed, i);
	return (w);
}

/*
 * Start a server on ucx in direct mode; hold, when set, holds its pulls
 * of SIZE until the file hold names exists.
 */
static int
start(struct srv *sv, const char *name, const char *hold)
{
	const char	*x[] = { "--transport-force", "ucx", NULL };
	int		 ok;

	setenv("VCL_UCX_DIRECT", "1", 1);
	if (hold != NULL) {
		setenv("VCL_TEST_DIRECT_HOLD", "33554432", 1);
		setenv("VCL_TEST_DIRECT_HOLD_FILE", hold, 1);
	}
	ok = srv_start(sv, name, "127.0.0.1:0", x);
	unsetenv("VCL_TEST_DIRECT_HOLD");
	unsetenv("VCL_TEST_DIRECT_HOLD_FILE");
	return (ok);
}

/*
 * Migrate size bytes of buffer from of ca's server (at OFF_SRC) into
 * buffer 3 of cb's (session sid/key, at OFF_DST) as transfer xid; the
 * events are xid + 1 (in) and xid + 2 (out). 0 or -1.
 */
static int
migrate(struct conn *ca, const char *src, uint64_t from, struct conn *cb,
    const char *dst, uint64_t sid, uint64_t key, uint64_t xid, uint64_t size)
{
	Vcl__Request	 r = VCL__REQUEST__INIT, ri = VCL__REQUEST__INIT;
	Vcl__MigrateOut	 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__MigrateIn	 mi = VCL__MIGRATE_IN__INIT;
	Vcl__Enqueue	 q = VCL__ENQUEUE__INIT;
	Vcl__PeerDest	 d = VCL__PEER_DEST__INIT;

	q.queue = 2;
	q.has_event = 1;
	q.event = xid + 1;
	mi.q = &q;
	mi.mem = 3;
	mi.offset = OFF_DST;
	mi.size = size;
	mi.transfer = xid;
	mi.source = (char *)src;
	ri.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	ri.migrate_in = &mi;
	d.addr = (char *)dst;
	d.session = sid;
	d.key = key;
	mo.context = 1;
	mo.mem = from;
	mo.offset = OFF_SRC;
	mo.size = size;
	mo.dest = &d;
	mo.transfer = xid;
	mo.has_event = 1;
	mo.event = xid + 2;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	if (send_req(cb, &ri, NULL, 0) != 0 || send_req(ca, &r, NULL, 0) != 0)
		return (-1);
	return (0);
}

/*
 * Read c's messages (bounded) until events e1 and e2 were both notified,
 * in either order (*seen1, *seen2 set, with their status). 0 or -1.
 */
static int
wait_two(struct conn *c, uint64_t e1, int *seen1, cl_int *st1, uint64_t e2,
    int *seen2, cl_int *st2)
{
	struct reply	rp;
	size_t		i;
	int		n;

	for (n = 0; !(*seen1 && *seen2) && n < 2000; n++) {
		if (recv_msg(c, &rp) != 0)
			return (-1);
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify;
		    i++) {
			if (rp.tc->notify[i]->event == e1) {
				*st1 = rp.tc->notify[i]->status;
				*seen1 = 1;
			}
			if (rp.tc->notify[i]->event == e2) {
				*st2 = rp.tc->notify[i]->status;
				*seen2 = 1;
			}
		}
		reply_free(&rp);
	}
	return (*seen1 && *seen2 ? 0 : -1);
}

/* Event ev's status on c (*seen: its notification came already). */
static int
answer(struct conn *c, uint64_t ev, int seen, cl_int *st)
{
	return (seen ? 0 : wait_notify(c, ev, st));
}

/*
 * Warm the link from a to b until it places: migrations of 1 MiB (not
 * held, transfers from base) until a's Stats count bytes placed. 0 or -1.
 */
static int
warm_from(struct conn *ca, const char *src, struct conn *cb,
    const char *dst, uint64_t sid, uint64_t key, uint64_t base)
{
	Vcl__StatsResult	st;
	cl_int			st_in, st_out;
	uint64_t		xid;
	int			i;

	for (i = 0; i < 20; i++) {
		xid = base + 10 * (uint64_t)i;
		st_in = st_out = 1;
		if (migrate(ca, src, 3, cb, dst, sid, key, xid, MIB) != 0 ||
		    wait_notify(ca, xid + 2, &st_out) != 0 || wait_notify(cb,
		    xid + 1, &st_in) != 0 || st_out != CL_COMPLETE ||
		    st_in != CL_COMPLETE || stats(ca, &st) != 0)
			return (-1);
		if (st.peer_bytes_shared > 0)
			return (0);
	}
	return (-1);
}

/* Warm the link from a to b (transfers from 1000). 0 or -1. */
static int
warm(struct conn *ca, const char *src, struct conn *cb, const char *dst,
    uint64_t sid, uint64_t key)
{
	return (warm_from(ca, src, cb, dst, sid, key, 1000));
}

/*
 * Buffer 3 of c's server: at OFF_DST, size bytes of the source's words
 * (seed 1, from OFF_SRC), or zeros where zero_ok; its own (seed 2)
 * elsewhere. Never a word of seed 7 (another session's) anywhere.
 */
static void
check_words(const char *name, struct conn *c, uint64_t size, int zero_ok)
{
	struct reply	 rp;
	const uint32_t	*w;
	size_t		 i, n = BUF_BYTES / 4, bad = n, zeros = 0;
	uint32_t	 want = 0;
	int		 in;

	if (read_buffer(c, 2, 3, BUF_BYTES, &rp) != 0) {
		check(name, 0, "no read reply");
		return;
	}
	if (rp.r->status != CL_SUCCESS || rp.bulk_len != BUF_BYTES) {
		check(name, 0, "read status %d, %llu bytes", rp.r->status,
		    (unsigned long long)rp.bulk_len);
		reply_free(&rp);
		return;
	}
	w = (const uint32_t *)rp.bulk;
	for (i = 0; i < n && bad == n; i++) {
		in = i >= OFF_DST / 4 && i < (OFF_DST + size) / 4;
		want = in ? word(1, i - OFF_DST / 4 + OFF_SRC / 4) :
		    word(2, i);
		if (in && zero_ok && w[i] == 0 && want != 0) {
			zeros++;
			continue;
		}
		if (w[i] != want)
			bad = i;
	}
	check(name, bad == n, "word %zu (byte %zu) is %08x, want %08x%s%s",
	    bad, bad * 4, bad < n ? w[bad] : 0, want, zero_ok ? " or 0" : "",
	    bad < n && w[bad] == word(7, bad - OFF_DST / 4 + OFF_SRC / 4) ?
	    " (another session's bytes)" : "");
	if (zero_ok)
		note("%s: %zu words of zeros, %zu of the source's", name, zeros,
		    (size_t)(size / 4) - zeros);
	reply_free(&rp);
}

/* Poll (bounded) until s's stderr has what. 1: it has. */
static int
log_has(const struct srv *s, const char *what)
{
	int	i;

	for (i = 0; i < READY_POLLS; i++) {
		if (srv_stderr_has(s, what))
			return (1);
		poll_wait();
	}
	return (0);
}

/*
 * Poll (bounded) until the retry's bytes are on their way into b's
 * buffer: pulled (its read queued, b's log says) or pushed whole (b's
 * Stats count them in after in0; its write is queued then). 1: they are.
 */
static int
queued(const struct srv *b, struct conn *c, uint64_t in0)
{
	Vcl__StatsResult	st;
	int			i;

	for (i = 0; i < READY_POLLS; i++) {
		if (srv_stderr_has(b, "transfer 400 queued"))
			return (1);
		if (stats(c, &st) != 0)
			return (0);
		if (st.peer_bytes_in >= in0 + SIZE)
			return (1);
		poll_wait();
	}
	return (0);
}

/* PeerFail{ids: xid} with CL_DEVICE_NOT_AVAILABLE (the client gives up). */
static int
give_up(struct conn *c, uint64_t xid)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerFail	pf = VCL__PEER_FAIL__INIT;

	pf.ids = &xid;
	pf.n_ids = 1;
	pf.status = CL_DEVICE_NOT_AVAILABLE;
	r.call_case = VCL__REQUEST__CALL_PEER_FAIL;
	r.peer_fail = &pf;
	return (send_req(c, &r, NULL, 0));
}

enum how { GIVE_UP, SOURCE_KILLED, CLIENT_GONE };

/*
 * One migration of SIZE from a to b, held in b's read after its first
 * piece, ended early as how says; then the read goes on. Its answer must
 * come after the read ended, b's range hold the source's bytes or zeros
 * (never another session's), a retry land whole, nothing stay held.
 */
static void
held(const char *name, enum how how)
{
	struct srv		 a, b;
	struct conn		 ca, cb, cx, cw;
	Vcl__StatsResult	 st;
	uint32_t		*da = NULL, *db = NULL, *dx = NULL;
	uint64_t		 sid = 0, key = 0, sa = 0, ka = 0, sx, kx, in0;
	char			 src[64], dst[64], what[96], go[PATH_MAX + 8];
	cl_int			 st_in = 1, st_out = 1;
	cl_int			 st_retry = 1;
	int			 seen = 0, retry_seen = 0, fd;

	ca.fd = cb.fd = cx.fd = cw.fd = -1;
	snprintf(what, sizeof what, "%s_server_a", name);
	if (!start(&a, what, NULL))
		return;
	/* The go file lies in a's directory, made before b starts. */
	snprintf(go, sizeof go, "%s/go", a.dir);
	snprintf(what, sizeof what, "%s_server_b", name);
	if (!start(&b, what, go))
		goto stop_a;
	snprintf(src, sizeof src, "127.0.0.1:%s", a.port);
	snprintf(dst, sizeof dst, "127.0.0.1:%s", b.port);
	snprintf(what, sizeof what, "%s_setup", name);
	if (!check(what, (da = words(1, BUF_BYTES)) != NULL && (db = words(2,
	    BUF_BYTES)) != NULL && (dx = words(7, BUF_BYTES)) != NULL &&
	    client_open(&ca, &a, &sa, &ka) == 0 && client_open(&cb, &b, &sid,
	    &key) == 0 && create_buffer(&ca, 3, 1, BUF_BYTES, da,
	    BUF_BYTES) == 0 && create_buffer(&cb, 3, 1, BUF_BYTES, db,
	    BUF_BYTES) == 0 && warm(&ca, src, &cb, dst, sid, key) == 0 &&
	    migrate(&ca, src, 3, &cb, dst, sid, key, 300, SIZE) == 0,
	    "no sessions, buffers, link or migration"))
		goto stop;
	snprintf(what, sizeof what, "%s_held", name);
	if (!check(what, log_has(&b, "held"), "the destination's read never "
	    "started; see %s/stderr", b.dir))
		goto stop;
	/* The transfer ends early while the read is held. */
	snprintf(what, sizeof what, "%s_ended", name);
	switch (how) {
	case GIVE_UP:
		check(what, give_up(&cb, 300) == 0 && raw_sync_seen(&cb, 301,
		    &seen, &st_in) == 0, "no PeerFail or Stats");
		break;
	case SOURCE_KILLED:
		kill(a.pid, SIGKILL);
		check(what, srv_wait_exit(&a) == 0 && log_has(&b, "closed") &&
		    raw_sync_seen(&cb, 301, &seen, &st_in) == 0, "source still "
		    "there, or no link closed in %s/stderr", b.dir);
		break;
	case CLIENT_GONE:
		conn_close(&cb);
		check(what, log_has(&b, "closed"), "no session closed in "
		    "%s/stderr", b.dir);
		break;
	}
	snprintf(what, sizeof what, "%s_no_answer_while_reading", name);
	check(what, !seen, "event %d while the read was held", st_in);
	/*
	 * The source lets its buffer go; another session fills fresh ones
	 * of its size with its own words (they may take its memory).
	 */
	if (how != SOURCE_KILLED) {
		snprintf(what, sizeof what, "%s_reuse", name);
		check(what, release(&ca, VCL__KIND__KIND_MEM, 3) == 0 &&
		    client_open(&cx, &a, &sx, &kx) == 0 && create_buffer(&cx,
		    5, 1, BUF_BYTES, dx, BUF_BYTES) == 0 && create_buffer(&cx,
		    6, 1, BUF_BYTES, dx, BUF_BYTES) == 0 && stats(&cx, &st) ==
		    0 && stats(&ca, &st) == 0, "no release or fresh buffers");
	}
	/*
	 * The source gone, a retry from a new one into the same range while
	 * the first read is still held: queued behind it, it lands whole.
	 */
	if (how == SOURCE_KILLED) {
		conn_close(&ca);
		snprintf(what, sizeof what, "%s_server_a2", name);
		if (!start(&a, what, NULL))
			goto stop;
		snprintf(src, sizeof src, "127.0.0.1:%s", a.port);
		snprintf(what, sizeof what, "%s_retry_queued", name);
		if (!check(what, client_open(&ca, &a, &sa, &ka) == 0 &&
		    create_buffer(&ca, 4, 1, BUF_BYTES, da, BUF_BYTES) == 0 &&
		    stats(&cb, &st) == 0 && (in0 = st.peer_bytes_in, 1) &&
		    migrate(&ca, src, 4, &cb, dst, sid, key, 400, SIZE) == 0 &&
		    queued(&b, &cb, in0), "the retry's write was never "
		    "queued; see %s/stderr", b.dir))
			goto stop;
	}
	/* The read goes on. */
	if ((fd = open(go, O_CREAT | O_WRONLY, 0600)) >= 0)
		close(fd);
	if (how == CLIENT_GONE)
		goto empty;
	snprintf(what, sizeof what, "%s_fails", name);
	if (how == SOURCE_KILLED)
		check(what, wait_two(&cb, 301, &seen, &st_in, 401, &retry_seen,
		    &st_retry) == 0 && st_in < 0, "the destination's event: "
		    "%d", st_in);
	else
		check(what, answer(&cb, 301, seen, &st_in) == 0 && st_in < 0,
		    "the destination's event: %d", st_in);
	snprintf(what, sizeof what, "%s_answer_after_read", name);
	check(what, srv_stderr_has(&b, "direct pull of 41943040 bytes"),
	    "answered, and the read has not ended (%s/stderr)", b.dir);
	if (how == SOURCE_KILLED) {
		snprintf(what, sizeof what, "%s_retry", name);
		st_in = st_retry;
		st_out = 1;
		if (check(what, wait_notify(&ca, 402, &st_out) == 0 &&
		    retry_seen && st_in ==
		    CL_COMPLETE && st_out == CL_COMPLETE, "events: out %d, "
		    "in %d", st_out, st_in)) {
			snprintf(what, sizeof what, "%s_retry_words", name);
			check_words(what, &cb, SIZE, 0);
		}
		goto empty;
	}
	snprintf(what, sizeof what, "%s_range", name);
	check_words(what, &cb, SIZE, 1);
	/* The source's push ended with the read (ABORT), not before. */
	snprintf(what, sizeof what, "%s_source_out", name);
	if (how == GIVE_UP)
		check(what, wait_notify(&ca, 302, &st_out) == 0 && st_out < 0,
		    "the first MigrateOut: %d", st_out);
	/* A retry into the same range, from a fresh buffer, lands whole. */
	snprintf(what, sizeof what, "%s_retry", name);
	st_in = st_out = 1;
	if (check(what, create_buffer(&ca, 4, 1, BUF_BYTES, da, BUF_BYTES) ==
	    0 && migrate(&ca, src, 4, &cb, dst, sid, key, 400, SIZE) == 0 &&
	    wait_notify(&ca, 402, &st_out) == 0 && wait_notify(&cb, 401,
	    &st_in) == 0 && st_in == CL_COMPLETE && st_out == CL_COMPLETE,
	    "events: out %d, in %d", st_out, st_in)) {
		snprintf(what, sizeof what, "%s_retry_words", name);
		check_words(what, &cb, SIZE, 0);
	}
empty:
	conn_close(&cb);
	snprintf(what, sizeof what, "%s_dest_nothing_held", name);
	check(what, conn_session(&cw, &b) == 0 && wait_empty(&cw, &st) == 0,
	    "objects %llu, bytes %llu held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
	conn_close(&cw);
	conn_close(&ca);
	conn_close(&cx);
	snprintf(what, sizeof what, "%s_source_nothing_held", name);
	check(what, conn_session(&cw, &a) == 0 && wait_empty(&cw, &st) == 0,
	    "objects %llu, bytes %llu held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
	snprintf(what, sizeof what, "%s_servers_alive", name);
	check(what, srv_alive(&a) && srv_alive(&b), "a %s, b %s", srv_how(&a),
	    srv_how(&b));
stop:
	free(da);
	free(db);
	free(dx);
	conn_close(&ca);
	conn_close(&cb);
	conn_close(&cx);
	conn_close(&cw);
	snprintf(what, sizeof what, "%s_server_b_exit", name);
	srv_stop(&b, what);
stop_a:
	unlink(go);
	snprintf(what, sizeof what, "%s_server_a_exit", name);
	if (!a.reaped)
		srv_stop(&a, what);
}

/* The destination's client gives the transfer up (PeerFail). */
static void
test_give_up(void)
{
	held("give_up", GIVE_UP);
}

/* The source dies mid-read: its link closes. */
static void
test_source_killed(void)
{
	held("killed", SOURCE_KILLED);
}

/* The destination's client leaves (its session and transfer go). */
static void
test_client_gone(void)
{
	held("gone", CLIENT_GONE);
}

/*
 * A read held and given up holds the destination context's migration
 * queue; a second source's migration into the same range maps behind
 * it. No mover thread waits for that map: a large buffer made meanwhile
 * (its copy runs on a mover) is there at once, while the first read is
 * still held; then both end, the second landing whole.
 */
static void
test_movers_free(void)
{
	struct srv		 a, a2, b;
	struct conn		 ca, ca2, cb, cw;
	Vcl__StatsResult	 st;
	struct reply		 rp;
	uint32_t		*da = NULL, *db = NULL;
	uint64_t		 sid = 0, key = 0, sa, ka;
	char			 src[64], src2[64], dst[64], go[PATH_MAX + 8];
	cl_int			 st1 = 1, st2 = 1, st_out = 1;
	int			 seen1 = 0, seen2 = 0, fd, ok;

	ca.fd = ca2.fd = cb.fd = cw.fd = -1;
	if (!start(&a, "movers_server_a", NULL))
		return;
	snprintf(go, sizeof go, "%s/go", a.dir);
	if (!start(&a2, "movers_server_a2", NULL)) {
		srv_stop(&a, "movers_server_a_exit");
		return;
	}
	if (!start(&b, "movers_server_b", go))
		goto stop_a;
	snprintf(src, sizeof src, "127.0.0.1:%s", a.port);
	snprintf(src2, sizeof src2, "127.0.0.1:%s", a2.port);
	snprintf(dst, sizeof dst, "127.0.0.1:%s", b.port);
	if (!check("movers_setup", (da = words(1, BUF_BYTES)) != NULL &&
	    (db = words(2, BUF_BYTES)) != NULL && client_open(&ca, &a, &sa,
	    &ka) == 0 && client_open(&ca2, &a2, &sa, &ka) == 0 &&
	    client_open(&cb, &b, &sid, &key) == 0 && create_buffer(&ca, 3, 1,
	    BUF_BYTES, da, BUF_BYTES) == 0 && create_buffer(&ca2, 3, 1,
	    BUF_BYTES, da, BUF_BYTES) == 0 && create_buffer(&cb, 3, 1,
	    BUF_BYTES, db, BUF_BYTES) == 0 && warm(&ca, src, &cb, dst, sid,
	    key) == 0 && warm_from(&ca2, src2, &cb, dst, sid, key, 2000) == 0 &&
	    migrate(&ca, src, 3, &cb, dst, sid, key, 300, SIZE) == 0 &&
	    log_has(&b, "held") && give_up(&cb, 300) == 0 && raw_sync_seen(&cb,
	    301, &seen1, &st1) == 0 && migrate(&ca2, src2, 3, &cb, dst, sid,
	    key, 400, SIZE) == 0 && log_has(&b, "transfer 400 queued"),
	    "no sessions, links, held read or second migration; see "
	    "%s/stderr", b.dir))
		goto stop;
	/* A buffer made on a mover, read back, while the read is held. */
	ok = create_buffer(&cb, 7, 1, BUF_BYTES, db, BUF_BYTES) == 0 &&
	    read_buffer(&cb, 2, 7, 4096, &rp) == 0;
	check("movers_buffer_made", ok && rp.r->status == CL_SUCCESS &&
	    rp.bulk_len == 4096 && memcmp(rp.bulk, db, 4096) == 0 &&
	    !srv_stderr_has(&b, "goes on"), "no buffer while the read was "
	    "held (movers waiting on the queue?)");
	if (ok)
		reply_free(&rp);
	if ((fd = open(go, O_CREAT | O_WRONLY, 0600)) >= 0)
		close(fd);
	check("movers_both_end", wait_two(&cb, 301, &seen1, &st1, 401, &seen2,
	    &st2) == 0 && st1 < 0 && st2 == CL_COMPLETE && wait_notify(&ca2,
	    402, &st_out) == 0 && st_out == CL_COMPLETE, "events: first %d, "
	    "second %d (out %d)", st1, st2, st_out);
	check_words("movers_second_words", &cb, SIZE, 0);
	conn_close(&cb);
	check("movers_nothing_held", conn_session(&cw, &b) == 0 &&
	    wait_empty(&cw, &st) == 0, "objects %llu, bytes %llu held",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
stop:
	free(da);
	free(db);
	conn_close(&ca);
	conn_close(&ca2);
	conn_close(&cb);
	conn_close(&cw);
	srv_stop(&b, "movers_server_b_exit");
stop_a:
	unlink(go);
	srv_stop(&a2, "movers_server_a2_exit");
	srv_stop(&a, "movers_server_a_exit");
}

/*
 * This process is the source: it names its bytes to the server's PULL
 * (SOURCE), then, while the server's read is held after its first piece,
 * sends ABORT and at once writes other bytes (seed 7) where its own were,
 * as a source that let them go and reused the memory. The migration's
 * answer comes after the read ended, and the buffer holds the source's
 * bytes or zeros, never seed 7.
 */
static void
test_source_aborts(void)
{
	struct srv		 b;
	struct conn		 c, cw;
	struct ucxpeer_link	 pe;
	struct ucxpeer_msg	 m;
	Vcl__StatsResult	 st;
	struct reply		 rp;
	uint32_t		*src = NULL, *w;
	uint64_t		 sid = 0, key = 0, xid = 5 | UCXPEER_PLACE;
	char			 go[PATH_MAX + 8];
	size_t			 i, bad;
	cl_int			 st_in = 1;
	int			 seen = 0, fd;

	c.fd = cw.fd = -1;
	ucxpeer_link_init(&pe);
	memset(&m, 0, sizeof m);
	snprintf(go, sizeof go, "/tmp/direct2_test.%ld.go", (long)getpid());
	unlink(go);
	if (!start(&b, "aborts_server", go))
		return;
	if (!check("aborts_setup", (src = words(1, SIZE)) != NULL &&
	    client_open(&c, &b, &sid, &key) == 0 && create_buffer(&c, 3, 1,
	    SIZE, NULL, 0) == 0 && migrate_in(&c, 10, 3, SIZE, 77, NULL) ==
	    0 && stats(&c, &st) == 0 && ucxpeer_link_open(&pe, &b) == 0 &&
	    ucxpeer_link_push(&pe, sid, key, 77, 5, SIZE) == 0,
	    "no session, buffer, link or push"))
		goto out;
	if (!check("aborts_pull", ucxpeer_link_recv(&pe, &m) == 0 && m.type == UCXPEER_PULL &&
	    m.xid == xid && m.len == SIZE, "no PULL from the server (%u)",
	    m.type))
		goto out;
	if (!check("aborts_held", ucxpeer_link_send(&pe, UCXPEER_SOURCE, xid,
	    (uint64_t)(uintptr_t)src, SIZE, NULL) == 0 && log_has(&b, "held"),
	    "the server's read never started; see %s/stderr", b.dir))
		goto out;
	check("aborts_ended", ucxpeer_link_send(&pe, UCXPEER_ABORT, xid, 0, 0, NULL) == 0 &&
	    log_has(&b, "out-of-band bulk") && raw_sync_seen(&c, 10, &seen,
	    &st_in) == 0, "no ABORT taken; see %s/stderr", b.dir);
	check("aborts_no_answer_while_reading", !seen, "event %d while the "
	    "read was held", st_in);
	/* Our memory, let go of and reused: other bytes there now. */
	for (i = 0; i < SIZE / 4; i++)
		src[i] = word(7, i);
	if ((fd = open(go, O_CREAT | O_WRONLY, 0600)) >= 0)
		close(fd);
	check("aborts_fails", answer(&c, 10, seen, &st_in) == 0 && st_in < 0,
	    "the event: %d", st_in);
	check("aborts_answer_after_read", srv_stderr_has(&b,
	    "direct pull of 41943040 bytes"), "answered, and the read has "
	    "not ended (%s/stderr)", b.dir);
	if (check("aborts_read", read_buffer(&c, 2, 3, SIZE, &rp) == 0 &&
	    rp.r->status == CL_SUCCESS && rp.bulk_len == SIZE, "no read")) {
		w = (uint32_t *)rp.bulk;
		for (i = 0, bad = SIZE / 4; i < SIZE / 4 && bad == SIZE / 4;
		    i++)
			if (w[i] != 0 && w[i] != word(1, i))
				bad = i;
		check("aborts_range", bad == SIZE / 4, "word %zu is %08x, want "
		    "%08x or 0%s", bad, bad < SIZE / 4 ? w[bad] : 0,
		    bad < SIZE / 4 ? word(1, bad) : 0, bad < SIZE / 4 &&
		    w[bad] == word(7, bad) ? " (bytes the source let go of)" :
		    "");
		reply_free(&rp);
	}
	conn_close(&c);
	ucxpeer_link_close(&pe);
	check("aborts_nothing_held", conn_session(&cw, &b) == 0 &&
	    wait_empty(&cw, &st) == 0, "objects %llu, bytes %llu held",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
	check("aborts_server_alive", srv_alive(&b), "%s", srv_how(&b));
out:
	free(src);
	conn_close(&c);
	conn_close(&cw);
	ucxpeer_link_close(&pe);
	unlink(go);
	srv_stop(&b, "aborts_server_exit");
}

static const struct test tests[] = {
	{ "give_up", test_give_up, 120 },
	{ "source_killed", test_source_killed, 120 },
	{ "client_gone", test_client_gone, 120 },
	{ "source_aborts", test_source_aborts, 120 },
	{ "movers_free", test_movers_free, 120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
