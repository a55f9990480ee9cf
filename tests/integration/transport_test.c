/*
 * transport_test.c - the transport seam between real vclservers: the
 * transport a peer link chooses (the best both offer, tcp when the other
 * has nothing better, the forced one), a migration's bytes landing whole
 * over each, what Stats and the log report, and what a hostile client may
 * try with out-of-band bulk and transport offers (raw protocol, rawproto.c).
 */

#include "rawproto.h"
#include "vcl_transport.h"

#define MIB		(1u << 20)
#define XFER_BYTES	(8 * MIB + 12)

/*
 * Stats of c's server: the transport of its peer link to addr (into tp),
 * whether it is ready, and whether name is among the transports offered.
 */
static int
peer_link_of(struct conn *c, const char *addr, char *tp, size_t tplen,
    int *ready, const char *name, int *offered, uint64_t *oob)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;
	struct reply	rp;
	size_t		i;
	int		rc = -1;

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	*offered = 0;
	if (rp.r->status == CL_SUCCESS && rp.r->stats != NULL) {
		*oob = rp.r->stats->peer_bytes_oob;
		for (i = 0; i < rp.r->stats->n_transports; i++)
			if (strcmp(rp.r->stats->transports[i], name) == 0)
				*offered = 1;
		for (i = 0; i < rp.r->stats->n_peer_links; i++)
			if (strcmp(rp.r->stats->peer_links[i]->address,
			    addr) == 0) {
				snprintf(tp, tplen, "%s",
				    rp.r->stats->peer_links[i]->transport);
				*ready = rp.r->stats->peer_links[i]->ready;
				rc = 0;
			}
	}
	reply_free(&rp);
	return (rc);
}

/*
 * Migrate a buffer from server a to server b (a pushes it over its peer
 * link) and check it arrives whole, that the link uses want, and that
 * Stats and the log say so. name prefixes the checks.
 */
static void
migrate_over(const char *name, const char *const *xa, const char *const *xb,
    const char *want)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__MigrateOut	 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__MigrateIn	 mi = VCL__MIGRATE_IN__INIT;
	Vcl__Enqueue	 q = VCL__ENQUEUE__INIT;
	Vcl__PeerDest	 d = VCL__PEER_DEST__INIT;
	struct srv	 a, b;
	struct conn	 ca, cb;
	struct reply	 rp;
	uint8_t		*data = NULL;
	char		 addr_a[64], addr_b[64], tp[32] = "", what[160];
	char		 line[200];
	uint64_t	 sid, key, sid_a, key_a, i, oob = 0;
	cl_int		 st_out = 1, st_in = 1;
	int		 ready = 0, offered = 0, rc;

	ca.fd = cb.fd = -1;
	snprintf(what, sizeof what, "%s_servers", name);
	if (!srv_start(&a, what, "127.0.0.1:0", xa))
		return;
	if (!srv_start(&b, what, "127.0.0.1:0", xb))
		goto stop_a;
	snprintf(addr_a, sizeof addr_a, "127.0.0.1:%s", a.port);
	snprintf(addr_b, sizeof addr_b, "127.0.0.1:%s", b.port);
	if ((data = malloc(XFER_BYTES)) == NULL)
		goto stop;
	for (i = 0; i < XFER_BYTES; i++)
		data[i] = (uint8_t)(i * 7 + (i >> 13));
	snprintf(what, sizeof what, "%s_sessions", name);
	if (!check(what, client_open(&cb, &b, &sid, &key) == 0 &&
	    create_buffer(&cb, 3, 1, XFER_BYTES, NULL, 0) == 0 &&
	    client_open(&ca, &a, &sid_a, &key_a) == 0 &&
	    create_buffer(&ca, 3, 1, XFER_BYTES, data, XFER_BYTES) == 0,
	    "no sessions"))
		goto stop;
	/* b waits for the bytes of transfer 100 ... */
	q.queue = 2;
	q.has_event = 1;
	q.event = 50;
	mi.q = &q;
	mi.mem = 3;
	mi.size = XFER_BYTES;
	mi.transfer = 100;
	mi.source = addr_a;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	r.migrate_in = &mi;
	rc = send_req(&cb, &r, NULL, 0);
	/* ... which a pushes to it. */
	d.addr = addr_b;
	d.session = sid;
	d.key = key;
	mo.context = 1;
	mo.mem = 3;
	mo.size = XFER_BYTES;
	mo.dest = &d;
	mo.transfer = 100;
	mo.has_event = 1;
	mo.event = 101;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	if (rc == 0)
		rc = send_req(&ca, &r, NULL, 0);
	if (rc == 0)
		rc = wait_notify(&ca, 101, &st_out) | wait_notify(&cb, 50,
		    &st_in);
	snprintf(what, sizeof what, "%s_migrated", name);
	check(what, rc == 0 && st_out == CL_COMPLETE && st_in == CL_COMPLETE,
	    "%s (out %d, in %d)", rc != 0 ? "no notification" : "failed",
	    st_out, st_in);
	snprintf(what, sizeof what, "%s_bytes_whole", name);
	if (read_buffer(&cb, 2, 3, XFER_BYTES, &rp) == 0) {
		check(what, rp.r->status == CL_SUCCESS &&
		    rp.bulk_len == XFER_BYTES &&
		    memcmp(rp.bulk, data, XFER_BYTES) == 0,
		    "status %d, %llu bytes, or not the bytes sent",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	} else
		check(what, 0, "no read reply");
	snprintf(what, sizeof what, "%s_stats", name);
	rc = peer_link_of(&ca, addr_b, tp, sizeof tp, &ready, want, &offered,
	    &oob);
	check(what, rc == 0 && strcmp(tp, want) == 0 && ready && offered,
	    "link to %s: %s, transport %s (want %s), ready %d, %s offered",
	    addr_b, rc == 0 ? "listed" : "not listed", tp, want, ready,
	    offered ? "is" : "not");
	/* tcp carries the bytes on the stream; any other out of band. */
	snprintf(what, sizeof what, "%s_bulk_path", name);
	check(what, rc == 0 && (strcmp(want, "tcp") == 0 ? oob == 0 :
	    oob == XFER_BYTES), "%llu bytes out of band over %s",
	    (unsigned long long)oob, want);
	snprintf(what, sizeof what, "%s_log", name);
	snprintf(line, sizeof line, "peer link to %s ready (%s", addr_b, want);
	check(what, srv_stderr_has(&a, line), "no \"%s\" in %s/stderr", line,
	    a.dir);
	snprintf(what, sizeof what, "%s_servers_alive", name);
	check(what, srv_alive(&a) && srv_alive(&b), "a %s, b %s", srv_how(&a),
	    srv_how(&b));
stop:
	free(data);
	conn_close(&ca);
	conn_close(&cb);
	srv_stop(&b, "transport_server_b_exit");
stop_a:
	srv_stop(&a, "transport_server_a_exit");
}

/*
 * Nothing said, the two servers as two hosts (--host-id): the pair uses
 * tcp (sock is offered only where named, ucx by host: it_raw_choice).
 */
static void
test_default(void)
{
	const char *const	x[] = { "--host-id", "transport-test-b", NULL };

	migrate_over("default", NULL, x, "tcp");
}

/* Both forced to sock: the bytes go out of band and land whole. */
static void
test_forced(void)
{
	const char *const	x[] = { "--transport-force", "sock", NULL };

	migrate_over("forced", x, x, "sock");
}

/* Both offer sock (named): it is the best both have. */
static void
test_offered(void)
{
	const char *const	x[] = { "--transports", "sock,tcp", NULL };

	migrate_over("offered", x, x, "sock");
}

/* One side offers sock, the other only tcp: the link falls back to tcp. */
static void
test_fallback(void)
{
	const char *const	x[] = { "--transport-force", "sock", NULL };

	migrate_over("fallback", x, NULL, "tcp");
}

/*
 * Hostile input: out-of-band bulk on a link that has no such transport, a
 * backend message for one the link does not use, and offers with unknown
 * names and oversized addresses; a server told an unknown transport does
 * not start.
 */
static void
test_hostile(void)
{
	const char *const	 bogus[] = { "--transport-force", "nope", NULL };
	const char *const	 sock[] = { "--transports", "sock", NULL };
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateBuffer	 cbuf = VCL__CREATE_BUFFER__INIT;
	Vcl__TransportCtl	 tctl = VCL__TRANSPORT_CTL__INIT;
	Vcl__Hello		 h = VCL__HELLO__INIT;
	Vcl__TransportOffer	 off[12], *offp[12];
	struct srv		 sv, bad;
	struct conn		 c;
	struct reply		 rp;
	static uint8_t		 big[VCL_TP_ADDR_MAX + 1];
	char			 names[12][16];
	int			 i, rc;

	if (!srv_start(&sv, "hostile_server_start", "127.0.0.1:0", sock))
		return;
	/* A bulk said to come out of band, on a tcp link. */
	if (check("hostile_oob_session", conn_session(&c, &sv) == 0 &&
	    create_context(&c, 1) == 0, "no session")) {
		cbuf.id = 5;
		cbuf.context = 1;
		cbuf.size = 4096;
		r.call_case = VCL__REQUEST__CALL_CREATE_BUFFER;
		r.create_buffer = &cbuf;
		r.has_bulk_xfer = r.has_bulk_size = 1;
		r.bulk_xfer = 1;
		r.bulk_size = 4096;
		r.seq = ++c.seq;
		rc = send_req(&c, &r, NULL, 0);
		check("hostile_oob_closed", rc == 0 && wait_closed(&c) == 1,
		    "a tcp session took out-of-band bulk");
		conn_close(&c);
	}
	/* A backend's message for a transport the link does not use. */
	if (check("hostile_ctl_session", conn_session(&c, &sv) == 0,
	    "no session")) {
		memset(&r, 0, sizeof r);
		vcl__request__init(&r);
		tctl.transport = "sock";
		tctl.data.data = big;
		tctl.data.len = 16;
		r.call_case = VCL__REQUEST__CALL_TRANSPORT_CTL;
		r.transport_ctl = &tctl;
		r.seq = ++c.seq;
		rc = send_req(&c, &r, NULL, 0);
		check("hostile_ctl_closed", rc == 0 && wait_closed(&c) == 1,
		    "a transport message for no transport was taken");
		conn_close(&c);
	}
	/*
	 * More offers than a side may make, of names nobody has, and sock
	 * (which this server offers) with an address over the limit: the
	 * session is welcomed, on tcp.
	 */
	if (check("hostile_offers_open", conn_open(&c, &sv) == 0,
	    "no connection")) {
		for (i = 0; i < 12; i++) {
			vcl__transport_offer__init(&off[i]);
			snprintf(names[i], sizeof names[i], i == 0 ? "sock" :
			    "x%d", i);
			off[i].name = names[i];
			off[i].has_address = 1;
			off[i].address.data = big;
			off[i].address.len = i == 0 ? VCL_TP_ADDR_MAX + 1 : 16;
			offp[i] = &off[i];
		}
		h.version = VCL_PROTOCOL_VERSION;
		h.client_name = "transport_test";
		h.n_transports = 12;
		h.transports = offp;
		memset(&r, 0, sizeof r);
		vcl__request__init(&r);
		r.call_case = VCL__REQUEST__CALL_HELLO;
		r.hello = &h;
		rc = call(&c, &r, NULL, 0, &rp);
		check("hostile_offers_welcomed", rc == 0 &&
		    rp.r->status == CL_SUCCESS && rp.r->welcome != NULL &&
		    rp.r->welcome->transport == NULL,
		    "%s", rc != 0 ? "no reply" : "refused, or a transport "
		    "chosen from junk");
		if (rc == 0)
			reply_free(&rp);
		check("hostile_offers_logged", srv_stderr_has(&sv,
		    "transport sock failed, tcp instead"), "no fallback in "
		    "%s/stderr", sv.dir);
		check("hostile_offers_alive", srv_alive(&sv), "server %s",
		    srv_how(&sv));
		conn_close(&c);
	}
	srv_stop(&sv, "hostile_server_exit");
	/* An unknown transport: the server says so and does not start. */
	if (srv_spawn(&bad, "127.0.0.1:0", bogus) == 0) {
		rc = srv_wait_exit(&bad);
		check("hostile_bogus_refused", rc == 0 && WIFEXITED(bad.status) &&
		    WEXITSTATUS(bad.status) != 0 &&
		    srv_stderr_has(&bad, "unknown transport nope"),
		    "server %s", srv_how(&bad));
		if (rc != 0) {
			kill(bad.pid, SIGKILL);
			srv_wait_exit(&bad);
		}
	}
}

static const struct test tests[] = {
	{ "default", test_default, 60 },
	{ "forced", test_forced, 60 },
	{ "offered", test_offered, 60 },
	{ "fallback", test_fallback, 60 },
	{ "hostile", test_hostile, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
