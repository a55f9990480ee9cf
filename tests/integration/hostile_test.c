/* hostile_test.c - one session against the others: shared server state. */

/*
 * Raw-protocol tests through a real vclserver on PoCL. Partitions of
 * devices are kept for the server's life in one table shared by every
 * session: a session that partitions sub-devices of its sub-devices, each
 * partition new, is refused once it has made its share, and another
 * session can still make a partition of its own; sessions of one address
 * that reconnect to go on are refused at half the table, and a session
 * of another address still makes one. The metrics endpoint ends HTTP
 * connections that drip their headers past its connection lifetime. The
 * sock transport's connect to an address a client offers is bounded.
 */

#include "rawproto.h"

#define SUBDEV_BIT	0x80000000u	/* as vcl_session.h */
#define CHAIN_MAX	400		/* past the server's whole table */

/* CreateSubDevices EQUALLY k on dev; status, or -1000 with no reply. */
static int
equally(struct conn *c, uint32_t dev, int64_t k, const uint64_t *ids,
    size_t nids, uint32_t *count)
{
	const int64_t		 p[] = { CL_DEVICE_PARTITION_EQUALLY, k };
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateSubDevices	 m = VCL__CREATE_SUB_DEVICES__INIT;
	struct reply		 rp;
	int			 status;

	m.device = dev;
	m.properties = (int64_t *)p;
	m.n_properties = 2;
	m.ids = (uint64_t *)ids;
	m.n_ids = nids;
	r.call_case = VCL__REQUEST__CALL_CREATE_SUB_DEVICES;
	r.create_sub_devices = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1000);
	status = rp.r->status;
	if (count != NULL)
		*count = status == CL_SUCCESS && rp.r->sub_devices != NULL ?
		    rp.r->sub_devices->count : 0;
	reply_free(&rp);
	return (status);
}

/* Device 0's compute units (a cl_uint), or 0. */
static uint32_t
compute_units(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetInfo	m = VCL__GET_INFO__INIT;
	struct reply	rp;
	uint32_t	v = 0;

	m.what = VCL__GET_INFO__WHAT__DEVICE;
	m.id = 0;
	m.param = CL_DEVICE_MAX_COMPUTE_UNITS;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (0);
	if (rp.r->status == CL_SUCCESS && rp.r->info != NULL &&
	    rp.r->info->value.len == sizeof v)
		memcpy(&v, rp.r->info->value.data, sizeof v);
	reply_free(&rp);
	return (v);
}

/*
 * One step down a chain: partition *dev EQUALLY k, k all its compute
 * units (count, then make with fresh ids from *next): its one sub-device,
 * as whole as its parent, is the new *dev.
 */
static int
chain_step(struct conn *c, uint32_t *dev, uint64_t *next, int64_t k)
{
	uint64_t	ids[64];
	uint32_t	n = 0, i;
	int		st;

	if ((st = equally(c, *dev, k, NULL, 0, &n)) != CL_SUCCESS)
		return (st);
	if (n == 0 || n > 64)
		return (-1001);
	for (i = 0; i < n; i++)
		ids[i] = (*next)++;
	if ((st = equally(c, *dev, k, ids, n, NULL)) != CL_SUCCESS)
		return (st);
	*dev = SUBDEV_BIT | (uint32_t)ids[0];
	return (CL_SUCCESS);
}

/* One session's new partitions are bounded; another's still succeed. */
static void
test_partition_share(void)
{
	struct srv	sv;
	struct conn	a, b;
	uint64_t	next_a = 1000, next_b = 1000;
	uint32_t	dev_a = 0, dev_b = 0;
	uint32_t	cus;
	int		depth_a = 0, depth_b, st = CL_SUCCESS;

	if (!srv_start(&sv, "share_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("share_session_a", conn_session(&a, &sv) == 0, "no session"))
		goto out;
	if (!check("share_session_b", conn_session(&b, &sv) == 0, "no session"))
		goto out_a;
	if (!check("share_compute_units", (cus = compute_units(&a)) > 0,
	    "no count"))
		goto out_b;
	/* A chain of new partitions until the server refuses one. */
	while (depth_a < CHAIN_MAX &&
	    (st = chain_step(&a, &dev_a, &next_a, (int64_t)cus)) == CL_SUCCESS)
		depth_a++;
	note("session a made %d partitions, then status %d", depth_a, st);
	if (!check("share_a_refused", st == CL_OUT_OF_RESOURCES && depth_a > 0,
	    "after %d partitions status %d, want CL_OUT_OF_RESOURCES", depth_a,
	    st))
		goto out_b;
	/* B walks A's chain (made already: free) and goes one further. */
	for (depth_b = 0; depth_b <= depth_a; depth_b++)
		if ((st = chain_step(&b, &dev_b, &next_b, (int64_t)cus)) != CL_SUCCESS)
			break;
	check("share_b_new_partition", st == CL_SUCCESS, "session b refused "
	    "at depth %d of %d: status %d", depth_b, depth_a + 1, st);
	check("share_server_alive", srv_alive(&sv), "server died");
out_b:
	conn_close(&b);
out_a:
	conn_close(&a);
out:
	srv_stop(&sv, "share_server_exit");
}

/* A session from source address src (another loopback address). */
static int
session_from(struct conn *c, const struct srv *sv, const char *src)
{
	struct sockaddr_in	 sa;
	struct timeval		 tv = { RECV_TIMEOUT_S, 0 };
	struct reply		 rp;

	memset(c, 0, sizeof *c);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    inet_pton(AF_INET, src, &sa.sin_addr) != 1 ||
	    bind(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		note("bind %s: %s", src, strerror(errno));
		goto fail;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)atoi(sv->port));
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		note("connect from %s: %s", src, strerror(errno));
		goto fail;
	}
	if (recv_msg(c, &rp) != 0 || rp.tc->greeting == NULL) {
		reply_free(&rp);
		goto fail;
	}
	reply_free(&rp);
	if (hello(c, NULL) != 0)
		goto fail;
	return (0);
fail:
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	return (-1);
}

/*
 * Sessions of one address, one after the other, each adding its share of
 * new partitions: together they are refused at half the table; a session
 * from another address still makes a partition.
 */
static void
test_partition_addr(void)
{
	struct srv	sv;
	struct conn	c;
	uint64_t	next;
	uint32_t	dev, cus = 0;
	int		k, depth = 0, made = 0, st = CL_SUCCESS;

	if (!srv_start(&sv, "addr_server_start", "127.0.0.1:0", NULL))
		return;
	/* At most 16 sessions of 16 each: the whole table of 256. */
	for (k = 0; k < 16 && st == CL_SUCCESS; k++) {
		if (!check("addr_session", conn_session(&c, &sv) == 0,
		    "no session %d", k))
			goto out;
		if (cus == 0 && (cus = compute_units(&c)) == 0) {
			check("addr_compute_units", 0, "no count");
			conn_close(&c);
			goto out;
		}
		next = 1000;
		dev = 0;
		/* The chain so far (free), then new ones until refused. */
		for (depth = 0; depth < CHAIN_MAX; depth++)
			if ((st = chain_step(&c, &dev, &next,
			    (int64_t)cus)) != CL_SUCCESS)
				break;
		conn_close(&c);
		if (st != CL_OUT_OF_RESOURCES || depth == made)
			break;		/* a failure, or refused a first new one */
		made = depth;
		if (k < 15)
			st = CL_SUCCESS;	/* this session's share: next */
	}
	note("sessions of 127.0.0.1: a chain of %d, then status %d", made, st);
	if (!check("addr_refused", st == CL_OUT_OF_RESOURCES && made <= 128,
	    "sessions of one address made %d partitions (status %d), want "
	    "at most 128", made, st))
		goto out;
	if (!check("addr_other_session", session_from(&c, &sv, "127.0.0.2") ==
	    0, "no session from 127.0.0.2"))
		goto out;
	next = 1000;
	dev = 0;
	for (depth = 0; depth <= made; depth++)
		if ((st = chain_step(&c, &dev, &next, (int64_t)cus)) !=
		    CL_SUCCESS)
			break;
	check("addr_other_new_partition", st == CL_SUCCESS, "a session of "
	    "127.0.0.2 refused at depth %d of %d: status %d", depth, made + 1,
	    st);
	conn_close(&c);
out:
	srv_stop(&sv, "addr_server_exit");
}

/* A loopback TCP connection to port, or -1. */
static int
tcp_to(const char *port)
{
	struct sockaddr_in	sa;
	int			fd;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)atoi(port));
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Wait (bounded) for the metrics port file; 1 with port, else 0. */
static int
metrics_port(const char *file, char *port, size_t len)
{
	FILE	*f;
	int	 i, ok = 0;

	for (i = 0; i < READY_POLLS && !ok; i++) {
		if ((f = fopen(file, "r")) != NULL) {
			ok = fgets(port, (int)len, f) != NULL && port[0] != '\n';
			fclose(f);
		}
		if (!ok)
			poll_wait();
	}
	port[strcspn(port, "\n")] = '\0';
	return (ok);
}

/*
 * Slowloris on the metrics endpoint: every connection it takes drips a
 * header line at a time, each within the read timeout. They are ended
 * at their lifetime, and a scrape waiting behind them is answered.
 */
static void
test_metrics_slow(void)
{
	struct srv	 sv;
	struct pollfd	 pfd;
	char		 pf[PATH_MAX + 16], port[16];
	const char	*extra[] = { "--metrics-listen", "127.0.0.1:0",
			    "--metrics-port-file", pf, NULL };
	static const char get[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n"
			    "Connection: close\r\n\r\n";
	int		 slow[16], n = 0, fd = -1, i, t, answered = 0;

	snprintf(pf, sizeof pf, "%s/slow.port", root);
	if (!srv_start(&sv, "slow_server_start", "127.0.0.1:0", extra))
		return;
	if (!check("slow_port", metrics_port(pf, port, sizeof port),
	    "no metrics port file"))
		goto out;
	for (i = 0; i < 16; i++) {
		if ((slow[n] = tcp_to(port)) == -1)
			break;
		(void)send(slow[n++], "GET /metrics HTTP/1.1\r\n", 23,
		    MSG_NOSIGNAL);
	}
	/* Behind the 16 (the backlog keeps order): a whole request. */
	if ((fd = tcp_to(port)) != -1)
		(void)send(fd, get, sizeof get - 1, MSG_NOSIGNAL);
	pfd.fd = fd;
	pfd.events = POLLIN;
	/* A header line from each every second: never idle to evhttp. */
	for (t = 0; fd != -1 && n == 16 && t < 3 * 20 && !answered; t++) {
		for (i = 0; i < n; i++)
			(void)send(slow[i], "X-Slow: a\r\n", 11, MSG_NOSIGNAL);
		pfd.revents = 0;
		answered = poll(&pfd, 1, 1000) == 1;
	}
	note("answered after about %d s", t);
	check("slow_scrape_answered", answered, "a scrape behind 16 slow "
	    "connections got no answer in %d s (%d opened)", t, n);
	for (i = 0; i < n; i++)
		close(slow[i]);
	if (fd != -1)
		close(fd);
	check("slow_server_alive", srv_alive(&sv), "server died");
out:
	srv_stop(&sv, "slow_server_exit");
}

/*
 * A client offers sock with the port of a listener whose backlog is full
 * (anything on the host may listen there): the server's connect to it
 * must not hold the loop. The session is welcomed (on tcp), at once.
 */
static void
test_sock_backlog(void)
{
	const char *const	 sock[] = { "--transports", "sock", NULL };
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Hello		 h = VCL__HELLO__INIT;
	Vcl__TransportOffer	 off = VCL__TRANSPORT_OFFER__INIT, *offp = &off;
	struct sockaddr_in	 sa;
	socklen_t		 sl = sizeof sa;
	struct srv		 sv;
	struct conn		 c;
	struct reply		 rp;
	uint8_t			 addr[10] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	int			 lfd, fill = -1, rc;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    listen(lfd, 0) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0 ||
	    (fill = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fill, (struct sockaddr *)&sa, sizeof sa) != 0) {
		check("backlog_listener", 0, "%s", strerror(errno));
		goto out_fd;
	}
	/* The one connection a backlog of 0 holds is taken: it is full. */
	addr[8] = (uint8_t)(ntohs(sa.sin_port) >> 8);
	addr[9] = (uint8_t)(ntohs(sa.sin_port) & 0xff);
	if (!srv_start(&sv, "backlog_server_start", "127.0.0.1:0", sock))
		goto out_fd;
	if (!check("backlog_open", conn_open(&c, &sv) == 0, "no connection"))
		goto out;
	off.name = "sock";
	off.has_address = 1;
	off.address.data = addr;
	off.address.len = sizeof addr;
	h.version = VCL_PROTOCOL_VERSION;
	h.client_name = "hostile_test";
	h.n_transports = 1;
	h.transports = &offp;
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	rc = call(&c, &r, NULL, 0, &rp);
	check("backlog_welcomed", rc == 0 && rp.r->status == CL_SUCCESS &&
	    rp.r->welcome != NULL, "no Welcome within %d s: the server's "
	    "loop waits on a connect", RECV_TIMEOUT_S);
	if (rc == 0)
		reply_free(&rp);
	conn_close(&c);
	check("backlog_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
out:
	srv_stop(&sv, "backlog_server_exit");
out_fd:
	if (fill != -1)
		close(fill);
	if (lfd != -1)
		close(lfd);
}

static const struct test tests[] = {
	{ "partition_share",	test_partition_share,	60 },
	{ "partition_addr",	test_partition_addr,	60 },
	{ "metrics_slow",	test_metrics_slow,	120 },
	{ "sock_backlog",	test_sock_backlog,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
