/*
 * direct_test.c - migrations between two real vclservers of one host in
 * direct mode (PoCL: devices whose memory is the host's): the destination
 * reads the source's mapped buffer itself, one copy, no ring. A sub-range
 * at offsets that are no multiple of a page lands word for word and
 * nothing around it moves; a cross-memory attach refused at the link's
 * probe or at the read itself, and VCL_UCX_DIRECT=0, take the ring with
 * the same bytes (Stats say which way), as do devices without unified
 * memory, with no fallback counted; a source killed mid-read fails
 * the migration and the destination goes on holding nothing.
 */
#include "rawproto.h"

#define MIB		(1u << 20)
#define BUF_BYTES	(48 * MIB + 4324)
#define OFF_SRC		(3 * 4096 + 100)
#define OFF_DST		(2 * 4096 + 36)

/*
 * Start a server with one variable "NAME=VALUE" (or none) set besides
 * VCL_UCX_DIRECT=1 (direct mode, the default, asked for explicitly).
 */
static int
start_with(struct srv *sv, const char *name, const char *env)
{
	const char	*x[] = { "--transport-force", "ucx", NULL };
	char		 var[64];
	const char	*eq;
	int		 ok;

	setenv("VCL_UCX_DIRECT", "1", 1);
	if (env == NULL || (eq = strchr(env, '=')) == NULL ||
	    (size_t)(eq - env) >= sizeof var)
		return (srv_start(sv, name, "127.0.0.1:0", x));
	memcpy(var, env, (size_t)(eq - env));
	var[eq - env] = '\0';
	setenv(var, eq + 1, 1);
	ok = srv_start(sv, name, "127.0.0.1:0", x);
	unsetenv(var);
	setenv("VCL_UCX_DIRECT", "1", 1);
	return (ok);
}

/* What one pair's run is to see at the destination. */
struct want {
	int		direct;		/* taken in direct mode */
	int		fallback;	/* counted as a fallback */
	const char	*log;		/* in the destination's stderr */
};

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

/* Stats of c's server. 0 or -1. */
static int
stats_of(struct conn *c, uint64_t *direct, uint64_t *ndirect,
    uint64_t *fallbacks, uint64_t *shared)
{
	Vcl__StatsResult	st;

	if (stats(c, &st) != 0)
		return (-1);
	*direct = st.peer_bytes_direct;
	*ndirect = st.peer_direct;
	*fallbacks = st.peer_direct_fallbacks;
	*shared = st.peer_bytes_shared;
	return (0);
}

/*
 * Start migrating size bytes of buffer 3 of ca's server (from, at
 * OFF_SRC) into buffer 3 of cb's (to, session sid/key, at OFF_DST) as
 * transfer xid; the events are xid + 1 (in) and xid + 2 (out). 0 or -1.
 */
static int
migrate_start(struct conn *ca, const char *from, struct conn *cb,
    const char *to, uint64_t sid, uint64_t key, uint64_t xid, uint64_t size)
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
	mi.source = (char *)from;
	ri.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	ri.migrate_in = &mi;
	d.addr = (char *)to;
	d.session = sid;
	d.key = key;
	mo.context = 1;
	mo.mem = 3;
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
 * Open the peer link from a to b and wait until it places: migrations of
 * 1 MiB (the same range as the test's) until a's Stats count bytes placed
 * (the first ones may go while the link is being made). 0 or -1.
 */
static int
warm(struct conn *ca, const char *from, struct conn *cb, const char *to,
    uint64_t sid, uint64_t key)
{
	Vcl__StatsResult	st;
	cl_int			st_in, st_out;
	uint64_t		xid;
	int			i;

	for (i = 0; i < 20; i++) {
		xid = 1000 + 10 * (uint64_t)i;
		st_in = st_out = 1;
		if (migrate_start(ca, from, cb, to, sid, key, xid, MIB) != 0 ||
		    wait_notify(ca, xid + 2, &st_out) != 0 || wait_notify(cb,
		    xid + 1, &st_in) != 0 || st_out != CL_COMPLETE ||
		    st_in != CL_COMPLETE || stats(ca, &st) != 0)
			return (-1);
		if (st.peer_bytes_shared > 0)
			return (0);
	}
	return (-1);
}

/*
 * Check buffer 3 of c's server word by word: size bytes of the source's
 * words (seed 1, from OFF_SRC) at OFF_DST, its own (seed 2) elsewhere.
 */
static void
check_words(const char *name, struct conn *c, uint64_t size)
{
	struct reply	 rp;
	const uint32_t	*w;
	size_t		 i, n = BUF_BYTES / 4, bad = n;
	uint32_t	 want = 0;

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
		if (i >= OFF_DST / 4 && i < (OFF_DST + size) / 4)
			want = word(1, i - OFF_DST / 4 + OFF_SRC / 4);
		else
			want = word(2, i);
		if (w[i] != want)
			bad = i;
	}
	check(name, bad == n, "word %zu (byte %zu) is %08x, want %08x", bad,
	    bad * 4, bad < n ? w[bad] : 0, want);
	reply_free(&rp);
}

/*
 * Two servers of one host on ucx (each started with env_a / env_b set,
 * "NAME=VALUE" or NULL), buffers of BUF_BYTES with their own words; a
 * migration of size bytes from a to b must land as check_words says, and
 * b's Stats and log say which way it went (w).
 */
static void
pair(const char *name, const char *env_a, const char *env_b, uint64_t size,
    const struct want *w)
{
	struct srv	 a, b;
	struct conn	 ca, cb;
	uint32_t	*da = NULL, *db = NULL;
	uint64_t	 sid = 0, key = 0, sa = 0, ka = 0;
	uint64_t	 direct = 0, ndirect = 0, fb = 0, shared = 0;
	uint64_t	 direct0 = 0, ndirect0 = 0, fb0 = 0, shared0 = 0;
	char		 from[64], to[64], what[96];
	cl_int		 st_in = 1, st_out = 1;
	int		 ok;

	ca.fd = cb.fd = -1;
	snprintf(what, sizeof what, "%s_server_a", name);
	if (!start_with(&a, what, env_a))
		return;
	snprintf(what, sizeof what, "%s_server_b", name);
	if (!start_with(&b, what, env_b))
		goto stop_a;
	snprintf(from, sizeof from, "127.0.0.1:%s", a.port);
	snprintf(to, sizeof to, "127.0.0.1:%s", b.port);
	snprintf(what, sizeof what, "%s_sessions", name);
	if (!check(what, (da = words(1, BUF_BYTES)) != NULL && (db = words(2,
	    BUF_BYTES)) != NULL && client_open(&ca, &a, &sa, &ka) == 0 &&
	    client_open(&cb, &b, &sid, &key) == 0 && create_buffer(&ca, 3, 1,
	    BUF_BYTES, da, BUF_BYTES) == 0 && create_buffer(&cb, 3, 1,
	    BUF_BYTES, db, BUF_BYTES) == 0, "no sessions or buffers"))
		goto stop;
	snprintf(what, sizeof what, "%s_link", name);
	if (!check(what, warm(&ca, from, &cb, to, sid, key) == 0 &&
	    stats_of(&cb, &direct0, &ndirect0, &fb0, &shared0) == 0,
	    "the link never placed a migration"))
		goto stop;
	snprintf(what, sizeof what, "%s_migrated", name);
	ok = migrate_start(&ca, from, &cb, to, sid, key, 100, size) == 0 &&
	    wait_notify(&ca, 102, &st_out) == 0 && wait_notify(&cb, 101,
	    &st_in) == 0;
	if (!check(what, ok && st_out == CL_COMPLETE && st_in == CL_COMPLETE,
	    "events: out %d, in %d", st_out, st_in))
		goto stop;
	snprintf(what, sizeof what, "%s_words", name);
	check_words(what, &cb, size);
	snprintf(what, sizeof what, "%s_stats", name);
	if (check(what, stats_of(&cb, &direct, &ndirect, &fb, &shared) == 0,
	    "no Stats")) {
		direct -= direct0;
		ndirect -= ndirect0;
		fb -= fb0;
		check(what, direct == (w->direct ? size : 0) && ndirect ==
		    (w->direct ? 1u : 0u) && fb == (w->fallback ? 1u : 0u),
		    "direct %llu bytes in %llu, fallbacks %llu; want %s, "
		    "fallbacks %d", (unsigned long long)direct,
		    (unsigned long long)ndirect, (unsigned long long)fb,
		    w->direct ? "direct" : "the ring", w->fallback);
	}
	snprintf(what, sizeof what, "%s_log", name);
	if (w->log != NULL)
		check(what, srv_stderr_has(&b, w->log), "no \"%s\" in "
		    "%s/stderr", w->log, b.dir);
	snprintf(what, sizeof what, "%s_servers_alive", name);
	check(what, srv_alive(&a) && srv_alive(&b), "a %s, b %s", srv_how(&a),
	    srv_how(&b));
stop:
	free(da);
	free(db);
	conn_close(&ca);
	conn_close(&cb);
	snprintf(what, sizeof what, "%s_server_b_exit", name);
	srv_stop(&b, what);
stop_a:
	snprintf(what, sizeof what, "%s_server_a_exit", name);
	srv_stop(&a, what);
}

/* Direct mode: a sub-range, odd offsets, word for word, no ring. */
static void
test_bytes(void)
{
	const struct want	w = { 1, 0, NULL };

	pair("direct", NULL, NULL, 17 * MIB + 1236, &w);
}

/* The link's probe refused (as under Yama or in a container): the ring. */
static void
test_probe_refused(void)
{
	const struct want	w = { 0, 1, "cross-memory attach to pid" };

	pair("probe_refused", NULL, "VCL_TEST_DIRECT_EPERM=1", 9 * MIB + 4,
	    &w);
}

/* The read itself refused (EPERM): the same migration through the ring. */
static void
test_read_refused(void)
{
	const struct want	w = { 0, 1, "Operation not permitted" };

	pair("read_refused", NULL, "VCL_TEST_DIRECT_EPERM=2", 9 * MIB + 4,
	    &w);
}

/* VCL_UCX_DIRECT=0 on the destination: the ring, no fallback counted. */
static void
test_off(void)
{
	const struct want	w = { 0, 0, NULL };

	pair("off", NULL, "VCL_UCX_DIRECT=0", 9 * MIB + 4, &w);
}

/* VCL_UCX_DIRECT=0 on the source: it names no bytes; the ring. */
static void
test_off_source(void)
{
	const struct want	w = { 0, 1, NULL };

	pair("off_source", "VCL_UCX_DIRECT=0", NULL, 9 * MIB + 4, &w);
}

/*
 * Devices without unified memory (a discrete GPU's, modelled by
 * VCL_TEST_DIRECT_DISCRETE=1 on both): the ring as before, nothing asked
 * or counted of direct mode.
 */
static void
test_discrete(void)
{
	const struct want	w = { 0, 0, NULL };

	setenv("VCL_TEST_DIRECT_DISCRETE", "1", 1);
	pair("discrete", NULL, NULL, 9 * MIB + 4, &w);
	unsetenv("VCL_TEST_DIRECT_DISCRETE");
}

/*
 * The source killed while the destination reads it (the read held after
 * its first piece, VCL_TEST_DIRECT_HOLD for reads of 32 MiB or more,
 * until the source is gone): the
 * migration fails, the destination goes on, and once its client left it
 * holds no object and no byte.
 */
static void
test_source_killed(void)
{
	const uint64_t		 size = 40 * MIB;
	struct srv		 a, b;
	struct conn		 ca, cb, cw;
	Vcl__StatsResult	 st;
	uint32_t		*da = NULL;
	uint64_t		 sid = 0, key = 0, sa = 0, ka = 0, direct0 = 0;
	char			 from[64], to[64];
	cl_int			 st_in = 1;
	int			 i, held = 0;

	ca.fd = cb.fd = cw.fd = -1;
	if (!start_with(&a, "killed_server_a", NULL))
		return;
	if (!start_with(&b, "killed_server_b", "VCL_TEST_DIRECT_HOLD=33554432")) {
		srv_stop(&a, "killed_server_a_exit");
		return;
	}
	snprintf(from, sizeof from, "127.0.0.1:%s", a.port);
	snprintf(to, sizeof to, "127.0.0.1:%s", b.port);
	if (!check("killed_sessions", (da = words(1, BUF_BYTES)) != NULL &&
	    client_open(&ca, &a, &sa, &ka) == 0 && client_open(&cb, &b, &sid,
	    &key) == 0 && create_buffer(&ca, 3, 1, BUF_BYTES, da, BUF_BYTES) ==
	    0 && create_buffer(&cb, 3, 1, BUF_BYTES, NULL, 0) == 0 &&
	    warm(&ca, from, &cb, to, sid, key) == 0 && stats(&cb, &st) == 0 &&
	    (direct0 = st.peer_direct, 1) &&
	    migrate_start(&ca, from, &cb, to, sid, key, 300, size) == 0,
	    "no sessions, buffers, link or migration"))
		goto stop;
	for (i = 0; i < READY_POLLS && !held; i++) {
		held = srv_stderr_has(&b, "held");
		if (!held)
			poll_wait();
	}
	if (!check("killed_held", held, "the destination's read never "
	    "started; see %s/stderr", b.dir))
		goto stop;
	kill(a.pid, SIGKILL);
	check("killed_source_gone", srv_wait_exit(&a) == 0, "source still "
	    "there");
	check("killed_migration_fails", wait_notify(&cb, 301, &st_in) == 0 &&
	    st_in < 0, "the destination's event: %d", st_in);
	/* The read ends once it finds its source gone, and fails. */
	for (i = 0, held = 0; i < READY_POLLS && !held; i++) {
		held = srv_stderr_has(&b, "direct pull of");
		if (!held)
			poll_wait();
	}
	check("killed_dest_log", held, "no failed pull in %s/stderr", b.dir);
	if (check("killed_stats", stats(&cb, &st) == 0, "no Stats"))
		check("killed_not_direct", st.peer_direct == direct0,
		    "%llu migrations taken direct, %llu before",
		    (unsigned long long)st.peer_direct,
		    (unsigned long long)direct0);
	conn_close(&cb);
	check("killed_nothing_held", conn_session(&cw, &b) == 0 &&
	    wait_empty(&cw, &st) == 0, "objects %llu, bytes %llu held",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
	check("killed_dest_alive", srv_alive(&b), "b %s", srv_how(&b));
stop:
	free(da);
	conn_close(&ca);
	conn_close(&cb);
	conn_close(&cw);
	srv_stop(&b, "killed_server_b_exit");
	if (!a.reaped) {
		kill(a.pid, SIGKILL);
		srv_wait_exit(&a);
	}
}

static const struct test tests[] = {
	{ "bytes", test_bytes, 120 },
	{ "probe_refused", test_probe_refused, 120 },
	{ "read_refused", test_read_refused, 120 },
	{ "off", test_off, 120 },
	{ "off_source", test_off_source, 120 },
	{ "discrete", test_discrete, 120 },
	{ "source_killed", test_source_killed, 120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
