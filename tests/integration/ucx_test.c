/*
 * ucx_test.c - peer pushes whose bytes travel on the ucx backend: raw
 * protocol against a real vclserver (rawproto.c) with this process, or a
 * child of it, as the pushing peer speaking UCX through the engine
 * (proto/transport/ucx.c). The bytes land; a bulk of the wrong size fails
 * its transfer alone; a peer that dies while its bytes are awaited fails
 * the transfer at once (not at the frame deadline) and leaks nothing.
 */
#include <sys/wait.h>

#include <poll.h>
#include <time.h>

#include "rawproto.h"
#include "ucxpeer.h"

#define MIB		(1u << 20)

/* The server forced to ucx, with a frame deadline far past the tests'. */
static const char *const ucx_args[] = { "--transport-force", "ucx",
    "--frame-timeout", "600", NULL };

/*
 * A peer link offering ucx with u's address; the server must choose ucx:
 * *ep is then the engine's endpoint to the server's worker. 0 or -1.
 */
static int
peer_open_ucx(struct conn *p, const struct srv *sv, struct vcl_ucx *u,
    struct vcl_ucx_ep **ep)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Hello		 h = VCL__HELLO__INIT;
	Vcl__TransportOffer	 o = VCL__TRANSPORT_OFFER__INIT, *op = &o;
	const Vcl__TransportOffer *w;
	struct reply		 rp;
	const void		*a;
	size_t			 alen;
	int			 rc = -1;

	*ep = NULL;
	if (conn_open(p, sv) != 0)
		return (-1);
	p->peer = 1;
	vcl_ucx_address(u, &a, &alen);
	o.name = "ucx";
	o.has_address = 1;
	o.address.data = (uint8_t *)a;
	o.address.len = alen;
	h.version = VCL_PROTOCOL_VERSION;
	h.client_name = "ucx_test";
	h.has_peer = h.peer = 1;
	h.n_transports = 1;
	h.transports = &op;
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	if (call(p, &r, NULL, 0, &rp) != 0)
		return (-1);
	if (rp.r->status == CL_SUCCESS && rp.r->welcome != NULL &&
	    (w = rp.r->welcome->transport) != NULL &&
	    strcmp(w->name, "ucx") == 0 && w->has_address &&
	    (*ep = vcl_ucx_ep_open(u, w->address.data, w->address.len, NULL,
	    NULL)) != NULL)
		rc = 0;
	else
		note("peer link: the server did not choose ucx");
	reply_free(&rp);
	return (rc);
}

/*
 * The tag of transfer xid from the worker u, as the ucx backend forms it:
 * FNV-1a of the sending worker's address, shifted up, mixed with xid.
 */
static uint64_t
tag_of(struct vcl_ucx *u, uint64_t xid)
{
	const uint8_t	*p;
	const void	*a;
	size_t		 len, i;
	uint32_t	 h = 2166136261u;

	vcl_ucx_address(u, &a, &len);
	p = a;
	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return (((uint64_t)h << 32) ^ xid);
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

static int	sent_n, sent_status;

/* The engine finished a send. */
static void
sent_cb(int status, void *arg)
{
	sent_n++;
	sent_status = status;
}

/*
 * Send len bytes of data as tag and progress until UCX is done with it
 * (a rendezvous needs this end's progress until the receiver is done).
 */
static int
ucx_send_all(struct vcl_ucx *u, struct vcl_ucx_ep *ep, uint64_t tag,
    void *data, size_t len)
{
	struct iovec	 iov = { data, len };
	int64_t		 end = ucxpeer_now_ms() + UCXPEER_WAIT_S * 1000;
	int		 want = sent_n + 1;

	if (vcl_ucx_send(ep, tag, &iov, 1, sent_cb, NULL) == NULL)
		return (-1);
	while (sent_n < want && ucxpeer_now_ms() < end)
		(void)ucxpeer_turn(u, NULL);
	return (sent_n == want ? sent_status : -1);
}

/* Fill with a pattern. */
static void
fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t	i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 12));
}

/*
 * Pushes over ucx: 16 MiB land in the buffer (read back whole); a bulk
 * of half the announced size fails its transfer with CL_INVALID_VALUE and
 * the link and session go on (peer_open_ucx checks that the server chose
 * ucx for the link).
 */
static void
test_push(void)
{
	enum { SIZE = 16 * MIB };
	struct srv		 sv;
	struct conn		 c, p;
	struct reply		 rp;
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep = NULL;
	uint64_t		 sid = 0, key = 0;
	uint8_t			*data;
	char			 err[256];
	cl_int			 evst = 1;
	int			 rc;

	c.fd = p.fd = -1;
	if ((u = vcl_ucx_create(NULL, err, sizeof err)) == NULL) {
		check("push_engine", 0, "vcl_ucx_create: %s", err);
		return;
	}
	if ((data = malloc(SIZE)) == NULL)
		goto out0;
	fill(data, SIZE, 3);
	if (!srv_start(&sv, "push_server_start", "127.0.0.1:0", ucx_args))
		goto out0;
	if (!check("push_sessions", client_open(&c, &sv, &sid, &key) == 0 &&
	    peer_open_ucx(&p, &sv, u, &ep) == 0, "no sessions"))
		goto out;
	rc = create_buffer(&c, 3, 1, SIZE, NULL, 0);
	rc |= migrate_in(&c, 10, 3, SIZE, 77, NULL);
	rc |= push_head(&p, sid, key, 77, 1, SIZE);
	rc |= ucx_send_all(u, ep, tag_of(u, 1), data, SIZE);
	rc |= ucxpeer_wait_notify(u, &c, 10, &evst);
	check("push_lands", rc == 0 && evst == CL_COMPLETE, "MigrateIn event "
	    "%d (rc %d)", evst, rc);
	rc = read_buffer(&c, 2, 3, SIZE, &rp);
	check("push_bytes", rc == 0 && rp.r->status == CL_SUCCESS &&
	    rp.bulk_len == SIZE && memcmp(rp.bulk, data, SIZE) == 0,
	    "read back: rc %d, %llu bytes", rc,
	    (unsigned long long)rp.bulk_len);
	if (rc == 0)
		reply_free(&rp);

	/* Half the announced bytes: the transfer fails, nothing else. */
	evst = 1;
	rc = create_buffer(&c, 4, 1, SIZE, NULL, 0);
	rc |= migrate_in(&c, 11, 4, SIZE, 78, NULL);
	rc |= push_head(&p, sid, key, 78, 2, SIZE);
	rc |= ucx_send_all(u, ep, tag_of(u, 2), data, SIZE / 2);
	rc |= ucxpeer_wait_notify(u, &c, 11, &evst);
	check("push_short_fails", rc == 0 && evst == CL_INVALID_VALUE,
	    "MigrateIn of a short bulk: event %d (rc %d)", evst, rc);
	evst = 1;
	rc = migrate_in(&c, 12, 4, 4096, 79, NULL);
	rc |= push_head(&p, sid, key, 79, 3, 4096);
	rc |= ucx_send_all(u, ep, tag_of(u, 3), data, 4096);
	rc |= ucxpeer_wait_notify(u, &c, 12, &evst);
	check("push_link_goes_on", rc == 0 && evst == CL_COMPLETE,
	    "the next push: event %d (rc %d)", evst, rc);
out:
	if (ep != NULL)
		vcl_ucx_ep_close(ep);
	conn_close(&c);
	conn_close(&p);
	srv_stop(&sv, "push_server_exit");
out0:
	vcl_ucx_free(u);
	free(data);
}

/*
 * The peer (a child) sends a push's head and dies before its bytes: the
 * transfer fails at once, not at the 600 s frame deadline; the session
 * goes on and the server holds nothing once the client left.
 */
static void
test_peer_dies(void)
{
	enum { SIZE = 64 * MIB };
	struct srv		 sv;
	struct conn		 c, p, w;
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep;
	Vcl__StatsResult	 st;
	uint64_t		 sid = 0, key = 0, in0 = 0;
	char			 err[256], b;
	cl_int			 evst = 1;
	int			 rc, pfd[2] = { -1, -1 };
	pid_t			 pid = -1;

	c.fd = p.fd = w.fd = -1;
	if (!srv_start(&sv, "dies_server_start", "127.0.0.1:0", ucx_args))
		return;
	if (!check("dies_sessions", client_open(&c, &sv, &sid, &key) == 0 &&
	    conn_session(&w, &sv) == 0 && pipe(pfd) == 0, "no sessions"))
		goto out;
	rc = create_buffer(&c, 3, 1, SIZE, NULL, 0);
	rc |= migrate_in(&c, 10, 3, SIZE, 77, NULL);
	rc |= stats(&w, &st);
	in0 = st.bytes_in;
	if (!check("dies_setup", rc == 0, "no buffer"))
		goto out;
	if ((pid = fork()) == 0) {
		/* The peer: link, head, say so, wait to be killed. */
		close(pfd[0]);
		if ((u = vcl_ucx_create(NULL, err, sizeof err)) == NULL ||
		    peer_open_ucx(&p, &sv, u, &ep) != 0 ||
		    push_head(&p, sid, key, 77, 1, SIZE) != 0)
			_exit(1);
		(void)write(pfd[1], "h", 1);
		for (;;) {
			(void)vcl_ucx_progress(u);
			(void)poll(NULL, 0, 10);
		}
	}
	close(pfd[1]);
	pfd[1] = -1;
	rc = read(pfd[0], &b, 1) == 1 ? 0 : -1;
	/* The head is in: the server posted the receive of its bytes. */
	rc |= wait_bytes_in(&w, in0 + SIZE);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	pid = -1;
	if (!check("dies_head_in", rc == 0, "the peer's head never came"))
		goto out;
	rc = wait_notify(&c, 10, &evst);
	check("dies_fails_transfer", rc == 0 && evst < 0, "MigrateIn after "
	    "its peer died: event %d (rc %d)", evst, rc);
	check("dies_session_goes_on", stats(&c, &st) == 0, "no Stats");
	conn_close(&c);
	check("dies_nothing_held", wait_empty(&w, &st) == 0, "%llu objects, "
	    "%llu bytes held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (pfd[0] != -1)
		close(pfd[0]);
	if (pfd[1] != -1)
		close(pfd[1]);
	conn_close(&c);
	conn_close(&w);
	srv_stop(&sv, "dies_server_exit");
}

static const struct test tests[] = {
	{ "push", test_push, 90 },
	{ "peer_dies", test_peer_dies, 90 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
