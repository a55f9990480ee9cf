/*
 * tcawait_test.c - a tca transfer that waits: this process is a raw peer
 * of a real vclserver in one TCA domain (the PEACH2 model), the link on
 * tca. A push's head comes and its bytes never do: the server's receive
 * stays pending (the frame deadline far off) and the server's CPU time
 * over that wait is printed (a measurement, not a check); once the peer
 * goes, the transfer fails, the session goes on and nothing is held.
 */
#include <unistd.h>

#include "rawproto.h"
#include "vcl_transport.h"

#define PUSH_BYTES	(64u << 10)	/* out of band (over 4 KiB) */
#define IDLE_MS		2000		/* the measured wait */

/*
 * A peer link offering tca at tp's address; 0 when the server chose tca
 * for it, else -1.
 */
static int
peer_open_tca(struct conn *p, const struct srv *sv, struct vcl_tp *tp)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Hello		 h = VCL__HELLO__INIT;
	Vcl__TransportOffer	 o = VCL__TRANSPORT_OFFER__INIT, *op = &o;
	const Vcl__TransportOffer *w;
	struct reply		 rp;
	uint8_t			 a[VCL_TP_ADDR_MAX];
	size_t			 alen = sizeof a;
	int			 rc = -1;

	if (tp->ops->address(tp, a, &alen) != VCL_TP_OK ||
	    conn_open(p, sv) != 0)
		return (-1);
	p->peer = 1;
	o.name = "tca";
	o.has_address = 1;
	o.address.data = a;
	o.address.len = alen;
	h.version = VCL_PROTOCOL_VERSION;
	h.client_name = "tcawait_test";
	h.has_peer = h.peer = 1;
	h.n_transports = 1;
	h.transports = &op;
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	if (call(p, &r, NULL, 0, &rp) != 0)
		return (-1);
	if (rp.r->status == CL_SUCCESS && rp.r->welcome != NULL &&
	    (w = rp.r->welcome->transport) != NULL &&
	    strcmp(w->name, "tca") == 0)
		rc = 0;
	else
		note("peer link: the server did not choose tca");
	reply_free(&rp);
	return (rc);
}

/* The head of a PeerPush whose size bytes come out of band as xid. */
static int
push_head(struct conn *p, uint64_t sid, uint64_t key, uint64_t transfer,
    uint64_t xid, uint64_t size)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerPush	pp = VCL__PEER_PUSH__INIT;

	pp.session = sid;
	pp.key = key;
	pp.transfer = transfer;
	pp.status = CL_SUCCESS;
	r.has_bulk_xfer = r.has_bulk_size = 1;
	r.bulk_xfer = xid;
	r.bulk_size = size;
	r.call_case = VCL__REQUEST__CALL_PEER_PUSH;
	r.peer_push = &pp;
	return (send_req(p, &r, NULL, 0));
}

/* A process's CPU time (user + system) in clock ticks, or -1. */
static long
cpu_ticks(pid_t pid)
{
	char		 path[64], buf[1024], *p;
	unsigned long	 ut, st;
	FILE		*f;
	int		 n;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	n = fgets(buf, sizeof buf, f) != NULL;
	fclose(f);
	/* After the command's closing parenthesis: state, then fields 4.. */
	if (!n || (p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	    &ut, &st) != 2)
		return (-1);
	return ((long)(ut + st));
}

/*
 * A push's bytes that never come: the server's receive waits (its CPU
 * time meanwhile printed); the peer goes, the transfer fails, the client's
 * session goes on and the server holds nothing once it left.
 */
static void
test_pending(void)
{
	char			 dom[32];
	const char		*xs[] = { "--transport-force", "tca",
	    "--tca-domain", dom, "--tca-node", "0", "--frame-timeout", "600",
	    NULL };
	struct vcl_tp_conf	 conf;
	struct vcl_tp		*tp = NULL;
	struct srv		 sv;
	struct conn		 c, p, w;
	Vcl__StatsResult	 st;
	struct timespec		 t0, t1;
	uint64_t		 sid = 0, key = 0, in0 = 0;
	char			 err[300];
	cl_int			 evst = 1;
	long			 c0, c1;
	double			 secs;
	int			 rc;

	snprintf(dom, sizeof dom, "tcawait%ld", (long)getpid());
	c.fd = p.fd = w.fd = -1;
	if (!srv_start(&sv, "pending_server_start", "127.0.0.1:0", xs))
		return;
	/* This process: node 1 of the server's domain. */
	setenv("VCL_TCA_DOMAIN", dom, 1);
	setenv("VCL_TCA_NODE", "1", 1);
	memset(&conf, 0, sizeof conf);
	conf.node = "tcawait_test";
	tp = vcl_tp_open(&vcl_transport_tca, &conf, err, sizeof err);
	if (!check("pending_tca", tp != NULL, "tca: %s", err))
		goto out;
	if (!check("pending_sessions", client_open(&c, &sv, &sid, &key) == 0 &&
	    conn_session(&w, &sv) == 0 && peer_open_tca(&p, &sv, tp) == 0,
	    "no sessions"))
		goto out;
	rc = create_buffer(&c, 3, 1, PUSH_BYTES, NULL, 0);
	rc |= stats(&w, &st);
	in0 = st.bytes_in;
	rc |= migrate_in(&c, 10, 3, PUSH_BYTES, 77, NULL);
	rc |= push_head(&p, sid, key, 77, 1, PUSH_BYTES);
	/* The head is in once its bytes are counted: the receive is posted. */
	rc |= wait_bytes_in(&w, in0 + PUSH_BYTES);
	if (!check("pending_head_in", rc == 0, "the head never came"))
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c0 = cpu_ticks(sv.pid);
	(void)poll(NULL, 0, IDLE_MS);
	c1 = cpu_ticks(sv.pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (c0 >= 0 && c1 >= 0)
		note("server CPU while a tca receive is pending: %.3f s in "
		    "%.3f s", (double)(c1 - c0) / (double)sysconf(_SC_CLK_TCK),
		    secs);
	/* The peer goes: the transfer fails, nothing else. */
	conn_close(&p);
	rc = wait_notify(&c, 10, &evst);
	check("pending_fails_when_peer_goes", rc == 0 && evst < 0,
	    "MigrateIn after its peer left: event %d (rc %d)", evst, rc);
	check("pending_session_goes_on", stats(&c, &st) == 0, "no Stats");
	conn_close(&c);
	check("pending_nothing_held", wait_empty(&w, &st) == 0, "%llu "
	    "objects, %llu bytes held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&p);
	conn_close(&w);
	srv_stop(&sv, "pending_server_exit");
	vcl_tp_free(tp);
}

static const struct test tests[] = {
	{ "pending", test_pending, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
