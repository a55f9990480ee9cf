/*
 * tca_test.c - the tca transport between two real vclservers of one TCA
 * domain (the PEACH2 model): buffers migrated both ways over the peer
 * links land whole, and Stats says the links use tca and the bytes went
 * out of band (raw protocol, rawproto.c).
 */
#include <unistd.h>

#include "rawproto.h"

#define MIB		(1u << 20)
#define XFER_BYTES	(3 * MIB + 12)
#define SPLIT_BYTES	(40 * 1024 + 4)
#define SMALL_BYTES	1028u


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
 * Migrate the first size bytes of buffer 3 of server from (session cf) to
 * server to (session ct, its id and key) as transfer xid, and check they
 * arrive whole.
 */
static void
migrate(const char *name, struct conn *cf, const char *from_addr,
    struct conn *ct, const char *to_addr, uint64_t sid, uint64_t key,
    const uint8_t *data, uint64_t xid, uint64_t size)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__MigrateOut	 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__MigrateIn	 mi = VCL__MIGRATE_IN__INIT;
	Vcl__Enqueue	 q = VCL__ENQUEUE__INIT;
	Vcl__PeerDest	 d = VCL__PEER_DEST__INIT;
	struct reply	 rp;
	char		 what[160];
	cl_int		 st_out = 1, st_in = 1;
	int		 rc;

	q.queue = 2;
	q.has_event = 1;
	q.event = xid + 1;
	mi.q = &q;
	mi.mem = 3;
	mi.size = size;
	mi.transfer = xid;
	mi.source = (char *)from_addr;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	r.migrate_in = &mi;
	rc = send_req(ct, &r, NULL, 0);
	d.addr = (char *)to_addr;
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
	if (rc == 0)
		rc = send_req(cf, &r, NULL, 0);
	if (rc == 0)
		rc = wait_notify(cf, xid + 2, &st_out) | wait_notify(ct,
		    xid + 1, &st_in);
	snprintf(what, sizeof what, "%s_migrated", name);
	check(what, rc == 0 && st_out == CL_COMPLETE && st_in == CL_COMPLETE,
	    "%s (out %d, in %d)", rc != 0 ? "no notification" : "failed",
	    st_out, st_in);
	snprintf(what, sizeof what, "%s_bytes_whole", name);
	if (read_buffer(ct, 2, 3, size, &rp) == 0) {
		check(what, rp.r->status == CL_SUCCESS &&
		    rp.bulk_len == size &&
		    memcmp(rp.bulk, data, size) == 0,
		    "status %d, %llu bytes, or not the bytes sent",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	} else
		check(what, 0, "no read reply");
}

/* Check Stats of c's server: its link to addr uses tca, oob bytes went. */
static void
check_link(const char *name, struct conn *c, const char *addr)
{
	char		 tp[32] = "";
	uint64_t	 oob = 0;
	int		 ready = 0, offered = 0, rc;

	rc = peer_link_of(c, addr, tp, sizeof tp, &ready, "tca", &offered,
	    &oob);
	check(name, rc == 0 && strcmp(tp, "tca") == 0 && ready && offered &&
	    oob >= XFER_BYTES, "link to %s: %s, transport %s, ready %d, tca "
	    "%s offered, %llu bytes out of band", addr, rc == 0 ? "listed" :
	    "not listed", tp, ready, offered ? "is" : "not",
	    (unsigned long long)oob);
}

/*
 * A small migration from the server of cf to that of ct: the bytes land
 * and the sender's out-of-band count stays as it was (tcp carried them).
 */
static void
small_on_stream(struct conn *cf, const char *from_addr, struct conn *ct,
    const char *to_addr, uint64_t sid, uint64_t key, const uint8_t *data)
{
	char		 tp[32] = "";
	uint64_t	 oob0 = 0, oob1 = 0;
	int		 ready = 0, offered = 0, rc;

	rc = peer_link_of(cf, to_addr, tp, sizeof tp, &ready, "tca", &offered,
	    &oob0);
	migrate("tca_small", cf, from_addr, ct, to_addr, sid, key, data, 400,
	    SMALL_BYTES);
	rc |= peer_link_of(cf, to_addr, tp, sizeof tp, &ready, "tca",
	    &offered, &oob1);
	check("tca_small_on_stream", rc == 0 && oob1 == oob0 && oob0 > 0,
	    "%llu bytes out of band before, %llu after a %u-byte migration",
	    (unsigned long long)oob0, (unsigned long long)oob1, SMALL_BYTES);
}

/*
 * Two servers, nodes 0 and 1 of a domain of this run's own, forced to
 * tca, with a short frame deadline (a stalled transfer fails in seconds):
 * a buffer goes from a to b, another from b to a, each over its own link.
 */
static void
test_both_ways(void)
{
	char		 dom[32], addr_a[64], addr_b[64];
	const char	*xa[] = { "--transport-force", "tca", "--tca-domain",
	    dom, "--tca-node", "0", "--frame-timeout", "8", NULL };
	const char	*xb[] = { "--transport-force", "tca", "--tca-domain",
	    dom, "--tca-node", "1", "--frame-timeout", "8", NULL };
	struct srv	 a, b;
	struct conn	 ca, cb;
	uint8_t		*da = NULL, *db = NULL, *dc = NULL;
	uint64_t	 sa, ka, sb, kb, i;

	snprintf(dom, sizeof dom, "tcatest%ld", (long)getpid());
	ca.fd = cb.fd = -1;
	if (!srv_start(&a, "tca_server_a", "127.0.0.1:0", xa))
		return;
	if (!srv_start(&b, "tca_server_b", "127.0.0.1:0", xb))
		goto stop_a;
	snprintf(addr_a, sizeof addr_a, "127.0.0.1:%s", a.port);
	snprintf(addr_b, sizeof addr_b, "127.0.0.1:%s", b.port);
	if ((da = malloc(XFER_BYTES)) == NULL ||
	    (db = malloc(XFER_BYTES)) == NULL ||
	    (dc = malloc(XFER_BYTES)) == NULL)
		goto stop;
	for (i = 0; i < XFER_BYTES; i++) {
		da[i] = (uint8_t)(i * 7 + (i >> 13));
		db[i] = (uint8_t)(i * 13 + (i >> 11) + 1);
		dc[i] = (uint8_t)(i * 5 + (i >> 9) + 3);
	}
	if (!check("tca_sessions", client_open(&cb, &b, &sb, &kb) == 0 &&
	    create_buffer(&cb, 3, 1, XFER_BYTES, db, XFER_BYTES) == 0 &&
	    client_open(&ca, &a, &sa, &ka) == 0 &&
	    create_buffer(&ca, 3, 1, XFER_BYTES, da, XFER_BYTES) == 0,
	    "no sessions"))
		goto stop;
	/* b's buffer goes to a first: b's own bytes are then gone there. */
	migrate("tca_b_to_a", &cb, addr_b, &ca, addr_a, sa, ka, db, 100,
	    XFER_BYTES);
	migrate("tca_a_to_b", &ca, addr_a, &cb, addr_b, sb, kb, db, 200,
	    XFER_BYTES);
	/* 4 KiB..64 KiB: split over the four DMA channels (new bytes). */
	if (check("tca_split_buffer", release(&cb, VCL__KIND__KIND_MEM, 3) ==
	    0 && create_buffer(&cb, 3, 1, XFER_BYTES, dc, XFER_BYTES) == 0, "buffer not remade"))
		migrate("tca_split_b_to_a", &cb, addr_b, &ca, addr_a, sa, ka,
		    dc, 300, SPLIT_BYTES);
	/* Under 4 KiB the bytes ride the link's tcp stream: none out of band. */
	small_on_stream(&cb, addr_b, &ca, addr_a, sa, ka, dc);
	check_link("tca_a_stats", &ca, addr_b);
	check_link("tca_b_stats", &cb, addr_a);
	check("tca_log", srv_stderr_has(&a, "ready (tca"), "no \"ready (tca\" "
	    "in %s/stderr", a.dir);
	check("tca_servers_alive", srv_alive(&a) && srv_alive(&b),
	    "a %s, b %s", srv_how(&a), srv_how(&b));
stop:
	free(da);
	free(db);
	free(dc);
	conn_close(&ca);
	conn_close(&cb);
	srv_stop(&b, "tca_server_b_exit");
stop_a:
	srv_stop(&a, "tca_server_a_exit");
}

static const struct test tests[] = {
	{ "both_ways", test_both_ways, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
