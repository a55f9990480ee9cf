/*
 * choice_test.c - the transport two real vclservers choose for their peer
 * link by host (by default, or --transports auto): ucx with shared staging
 * on one host, tcp between two hosts (modelled with --host-id) unless both
 * ends name ucx; tcp where one end says --transports tcp; the reason in
 * both servers' logs and in Stats; a raw peer that claims the server's
 * host with an address UCX cannot reach leaves the link on tcp.
 */
#include "rawproto.h"

#define MIB		(1u << 20)
#define XFER_BYTES	(2 * MIB)

/* What Stats of c's server says of its peer link to addr. */
struct link_seen {
	char		transport[32];
	char		why[128];
	char		host[160];
	int		listed, local_ucx;
	uint64_t	shared;
};

/* Stats of c's server: its link to addr, its host, ucx offered locally. */
static int
link_of(struct conn *c, const char *addr, struct link_seen *ls)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Stats		 m = VCL__STATS__INIT;
	const Vcl__StatsResult	*st;
	struct reply		 rp;
	size_t			 i;

	memset(ls, 0, sizeof *ls);
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	if ((st = rp.r->stats) != NULL) {
		for (i = 0; i < st->n_peer_links; i++)
			if (strcmp(st->peer_links[i]->address, addr) == 0) {
				ls->listed = 1;
				snprintf(ls->transport, sizeof ls->transport,
				    "%s", st->peer_links[i]->transport);
				snprintf(ls->why, sizeof ls->why, "%s",
				    st->peer_links[i]->why != NULL ?
				    st->peer_links[i]->why : "");
			}
		for (i = 0; i < st->n_transports_local; i++)
			if (strcmp(st->transports_local[i], "ucx") == 0)
				ls->local_ucx = 1;
		snprintf(ls->host, sizeof ls->host, "%s", st->host != NULL ?
		    st->host : "");
		ls->shared = st->peer_bytes_shared;
	}
	reply_free(&rp);
	return (st != NULL ? 0 : -1);
}

/*
 * Migrate buffer 3 of ca's server (from) to cb's (to, session sid/key)
 * as transfer xid. 0 when both events completed.
 */
static int
migrate(struct conn *ca, const char *from, struct conn *cb, const char *to,
    uint64_t sid, uint64_t key, uint64_t xid)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__MigrateOut	 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__PeerDest	 d = VCL__PEER_DEST__INIT;
	cl_int		 st_out = 1, st_in = 1;
	int		 rc;

	rc = migrate_in(cb, xid + 1, 3, XFER_BYTES, xid, from);
	d.addr = (char *)to;
	d.session = sid;
	d.key = key;
	mo.context = 1;
	mo.mem = 3;
	mo.size = XFER_BYTES;
	mo.dest = &d;
	mo.transfer = xid;
	mo.has_event = 1;
	mo.event = xid + 2;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	if (rc == 0)
		rc = send_req(ca, &r, NULL, 0);
	if (rc == 0)
		rc = wait_notify(ca, xid + 2, &st_out) | wait_notify(cb,
		    xid + 1, &st_in);
	return (rc == 0 && st_out == CL_COMPLETE && st_in == CL_COMPLETE ?
	    0 : -1);
}

/*
 * Two servers (options xa, xb); two migrations from a to b, whose bytes
 * must land. a's link to b must use want, for a reason containing why,
 * said in a's log and in b's; placed: bytes went through shared staging
 * (1), none did (0), either (-1).
 */
static void
pair(const char *name, const char *const *xa, const char *const *xb,
    const char *want, const char *why, int placed)
{
	struct srv		 a, b;
	struct conn		 ca, cb;
	struct link_seen	 la, lb;
	struct reply		 rp;
	uint8_t			*data = NULL;
	uint64_t		 sid = 0, key = 0, sa = 0, ka = 0, i;
	char			 from[64], to[64], what[96], line[256];
	int			 rc;

	ca.fd = cb.fd = -1;
	snprintf(what, sizeof what, "%s_server_a", name);
	if (!srv_start(&a, what, "127.0.0.1:0", xa))
		return;
	snprintf(what, sizeof what, "%s_server_b", name);
	if (!srv_start(&b, what, "127.0.0.1:0", xb))
		goto stop_a;
	snprintf(from, sizeof from, "127.0.0.1:%s", a.port);
	snprintf(to, sizeof to, "127.0.0.1:%s", b.port);
	if ((data = malloc(XFER_BYTES)) == NULL)
		goto stop;
	for (i = 0; i < XFER_BYTES; i++)
		data[i] = (uint8_t)(i * 11 + (i >> 12));
	snprintf(what, sizeof what, "%s_sessions", name);
	if (!check(what, client_open(&ca, &a, &sa, &ka) == 0 &&
	    client_open(&cb, &b, &sid, &key) == 0 &&
	    create_buffer(&ca, 3, 1, XFER_BYTES, data, XFER_BYTES) == 0 &&
	    create_buffer(&cb, 3, 1, XFER_BYTES, NULL, 0) == 0,
	    "no sessions or buffers"))
		goto stop;
	/* The first opens the link; the second finds it ready. */
	rc = migrate(&ca, from, &cb, to, sid, key, 100);
	rc |= migrate(&ca, from, &cb, to, sid, key, 200);
	snprintf(what, sizeof what, "%s_migrated", name);
	check(what, rc == 0, "a migration failed or never ended");
	snprintf(what, sizeof what, "%s_bytes", name);
	if (read_buffer(&cb, 2, 3, XFER_BYTES, &rp) == 0) {
		check(what, rp.r->status == CL_SUCCESS && rp.bulk_len ==
		    XFER_BYTES && memcmp(rp.bulk, data, XFER_BYTES) == 0,
		    "status %d, %llu bytes, or not the bytes sent",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	} else
		check(what, 0, "no read reply");
	rc = link_of(&ca, to, &la) | link_of(&cb, from, &lb);
	snprintf(what, sizeof what, "%s_transport", name);
	check(what, rc == 0 && la.listed && strcmp(la.transport, want) == 0 &&
	    strstr(la.why, why) != NULL, "link to b: %s, transport %s (want "
	    "%s), why \"%s\" (want \"%s\")", la.listed ? "listed" : "not "
	    "listed", la.transport, want, la.why, why);
	snprintf(what, sizeof what, "%s_placed", name);
	if (placed >= 0)
		check(what, placed ? la.shared > 0 : la.shared == 0, "%llu "
		    "bytes placed in b's shared staging, want %s",
		    (unsigned long long)la.shared, placed ? "some" : "none");
	snprintf(what, sizeof what, "%s_log_a", name);
	snprintf(line, sizeof line, "peer link to %s ready (%s, plain): %s",
	    to, want, la.why);
	check(what, srv_stderr_has(&a, line), "no \"%s\" in %s/stderr", line,
	    a.dir);
	snprintf(what, sizeof what, "%s_log_b", name);
	snprintf(line, sizeof line, "transport %s (%s", want, why);
	check(what, srv_stderr_has(&b, line), "no \"%s\" in %s/stderr", line,
	    b.dir);
	snprintf(what, sizeof what, "%s_servers_alive", name);
	check(what, srv_alive(&a) && srv_alive(&b), "a %s, b %s", srv_how(&a),
	    srv_how(&b));
stop:
	free(data);
	conn_close(&ca);
	conn_close(&cb);
	snprintf(what, sizeof what, "%s_server_b_exit", name);
	srv_stop(&b, what);
stop_a:
	snprintf(what, sizeof what, "%s_server_a_exit", name);
	srv_stop(&a, what);
}

/*
 * By host, two servers of one host: ucx, and the migration's bytes placed
 * in the destination's shared staging; Stats name the host (the same on
 * both) and ucx as offered on one host only.
 */
static void
test_same_host(void)
{
	const char *const	 x[] = { "--transports", "auto", NULL };
	struct srv		 a, b;
	struct conn		 ca, cb;
	struct link_seen	 la, lb;

	pair("same_host", x, x, "ucx", "same host", 1);
	ca.fd = cb.fd = -1;
	if (!srv_start(&a, "host_server_a", "127.0.0.1:0", x))
		return;
	if (srv_start(&b, "host_server_b", "127.0.0.1:0", x)) {
		check("host_stats", conn_session(&ca, &a) == 0 &&
		    conn_session(&cb, &b) == 0 && link_of(&ca, "-", &la) ==
		    0 && link_of(&cb, "-", &lb) == 0 && la.host[0] != '\0' &&
		    strcmp(la.host, lb.host) == 0 && la.local_ucx,
		    "hosts \"%s\" and \"%s\", ucx %s", la.host, lb.host,
		    la.local_ucx ? "local" : "not local");
		conn_close(&ca);
		conn_close(&cb);
		srv_stop(&b, "host_server_b_exit");
	}
	srv_stop(&a, "host_server_a_exit");
}

/* By host, two hosts: tcp, and the log says why not ucx. */
static void
test_other_host(void)
{
	const char *const	xa[] = { "--transports", "auto", NULL };
	const char *const	xb[] = { "--transports", "auto", "--host-id",
	    "choice-test-b", NULL };

	pair("other_host", xa, xb, "tcp", "ucx only on one host or with "
	    "RDMA: another host", 0);
}

/* Nothing said, one host: by host, as with auto (ucx, bytes placed). */
static void
test_default(void)
{
	pair("default", NULL, NULL, "ucx", "same host", 1);
}

/* One end says tcp alone: tcp, on one host too. */
static void
test_tcp_named(void)
{
	const char *const	xb[] = { "--transports", "tcp", NULL };

	pair("tcp_named", NULL, xb, "tcp", "no other transport offered by "
	    "both ends", 0);
}

/*
 * Both name ucx: it is used between two hosts too (these two are on one
 * host in fact, so their rings still map: placement is not checked).
 */
static void
test_named(void)
{
	const char *const	xa[] = { "--transports", "ucx,tcp", NULL };
	const char *const	xb[] = { "--transports", "ucx,tcp",
	    "--host-id", "choice-test-b", NULL };

	pair("named", xa, xb, "ucx", "offered by both ends", -1);
}

/* One end names ucx, the other offers it on its host only: tcp. */
static void
test_one_restricts(void)
{
	const char *const	xa[] = { "--transports", "ucx,tcp", NULL };
	const char *const	xb[] = { "--transports", "auto", "--host-id",
	    "choice-test-b", NULL };

	pair("one_restricts", xa, xb, "tcp", "ucx only on one host", 0);
}

/*
 * A raw peer claims the server's host and offers ucx, locally, at an
 * address UCX cannot use: the server falls back to tcp, says why in the
 * Welcome, and goes on.
 */
static void
test_hostile_claim(void)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Hello		 h = VCL__HELLO__INIT;
	Vcl__TransportOffer	 o = VCL__TRANSPORT_OFFER__INIT, *op = &o;
	struct srv		 sv;
	struct conn		 w, p;
	struct link_seen	 ls;
	struct reply		 rp;
	Vcl__StatsResult	 st;
	const char *const	 x[] = { "--transports", "auto", NULL };
	uint8_t			 junk[64];
	int			 rc;

	w.fd = p.fd = -1;
	memset(junk, 0xa5, sizeof junk);
	if (!srv_start(&sv, "claim_server_start", "127.0.0.1:0", x))
		return;
	if (!check("claim_host", conn_session(&w, &sv) == 0 &&
	    link_of(&w, "-", &ls) == 0 && ls.host[0] != '\0', "no host in "
	    "Stats"))
		goto out;
	o.name = "ucx";
	o.has_address = 1;
	o.address.data = junk;
	o.address.len = sizeof junk;
	o.has_local = o.local = 1;
	h.version = VCL_PROTOCOL_VERSION;
	h.client_name = "choice_test";
	h.has_peer = h.peer = 1;
	h.n_transports = 1;
	h.transports = &op;
	h.host = ls.host;
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	rc = conn_open(&p, &sv);
	if (rc == 0)
		rc = call(&p, &r, NULL, 0, &rp);
	if (check("claim_welcome", rc == 0, "no Welcome")) {
		check("claim_tcp", rp.r->status == CL_SUCCESS &&
		    rp.r->welcome != NULL && rp.r->welcome->transport == NULL &&
		    rp.r->welcome->transport_why != NULL &&
		    strncmp(rp.r->welcome->transport_why, "ucx failed", 10) ==
		    0, "status %d, transport %s, why %s", rp.r->status,
		    rp.r->welcome != NULL && rp.r->welcome->transport != NULL ?
		    rp.r->welcome->transport->name : "(tcp)",
		    rp.r->welcome != NULL && rp.r->welcome->transport_why !=
		    NULL ? rp.r->welcome->transport_why : "(none)");
		reply_free(&rp);
	}
	check("claim_server_goes_on", stats(&w, &st) == 0 && srv_alive(&sv),
	    "no Stats (%s)", srv_how(&sv));
out:
	conn_close(&p);
	conn_close(&w);
	srv_stop(&sv, "claim_server_exit");
}

static const struct test tests[] = {
	{ "same_host", test_same_host, 90 },
	{ "other_host", test_other_host, 90 },
	{ "tcp_named", test_tcp_named, 60 },
	{ "default", test_default, 90 },
	{ "named", test_named, 90 },
	{ "one_restricts", test_one_restricts, 90 },
	{ "hostile_claim", test_hostile_claim, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
