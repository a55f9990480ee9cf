/*
 * ucxpeer.c - what the raw tests that act as a UCX peer of a vclserver
 * share: their worker must keep progressing while they wait on the
 * server (UCX may need this end to answer before the server's receive
 * completes), and their waits are bounded by the clock, not by turns;
 * those that speak the ucx backend's placement messages (ucx_tp.c) as
 * the other server of a link do it through struct ucxpeer_link.
 */
#include <sys/mman.h>

#include <poll.h>
#include <time.h>

#include "ucxpeer.h"

/* Milliseconds on the monotonic clock. */
int64_t
ucxpeer_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/*
 * Progress the worker and wait (at most POLL_MS) for its fd or, if c is
 * given, for c. Returns 1 when c is readable. The worker's fd may stay
 * readable while a rendezvous waits on the other end, so a turn may
 * return at once: callers bound their waits by the clock.
 */
int
ucxpeer_turn(struct vcl_ucx *u, struct conn *c)
{
	struct pollfd	pfd[2];
	int		n = 1;

	if (vcl_ucx_progress(u) != 0)
		return (0);
	pfd[0].fd = vcl_ucx_fd(u);
	pfd[0].events = POLLIN;
	pfd[0].revents = 0;
	if (c != NULL) {
		pfd[1].fd = c->fd;
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		n = 2;
	}
	if (poll(pfd, (nfds_t)n, POLL_MS) <= 0)
		return (0);
	return (c != NULL && pfd[1].revents != 0);
}

/* wait_notify for c while the worker u keeps progressing. */
int
ucxpeer_wait_notify(struct vcl_ucx *u, struct conn *c, uint64_t ev,
    cl_int *st)
{
	struct reply	rp;
	int64_t		end = ucxpeer_now_ms() + UCXPEER_WAIT_S * 1000;
	size_t		i;
	int		found = 0;

	while (!found && ucxpeer_now_ms() < end) {
		if (!ucxpeer_turn(u, c))
			continue;
		if (recv_msg(c, &rp) != 0)
			return (-1);
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev) {
				*st = rp.tc->notify[i]->status;
				found = 1;
			}
		reply_free(&rp);
	}
	return (found ? 0 : -1);
}

/* FNV-1a, as the backend hashes addresses. */
uint32_t
ucxpeer_fnv(const void *a, size_t len)
{
	const uint8_t	*p = a;
	uint32_t	 h = 2166136261u;
	size_t		 i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return (h);
}

/* The link's number from its control stream, as the backend forms it. */
uint32_t
ucxpeer_link_no(int fd)
{
	struct sockaddr_storage	a, b;
	socklen_t		la = sizeof a, lb = sizeof b;
	uint32_t		h1, h2;

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (getsockname(fd, (struct sockaddr *)&a, &la) != 0 ||
	    getpeername(fd, (struct sockaddr *)&b, &lb) != 0)
		return (0);
	h1 = ucxpeer_fnv(&a, la);
	h2 = ucxpeer_fnv(&b, lb);
	return (h1 < h2 ? h1 * 31u + h2 : h2 * 31u + h1);
}

/* A placement message of the server's came. */
static void
ucxpeer_in_cb(int status, void *arg)
{
	struct ucxpeer_link	*pe = arg;

	pe->in_status = status;
	pe->in_done = 1;
}

/* A placement message of ours went. */
static void
ucxpeer_sent_cb(int status, void *arg)
{
	struct ucxpeer_link	*pe = arg;

	(void)status;
	pe->sent++;
}

/* An empty link, safe to close. */
void
ucxpeer_link_init(struct ucxpeer_link *pe)
{
	memset(pe, 0, sizeof *pe);
	pe->p.fd = pe->ring_fd = -1;
}

/* The server's next placement message (bounded by the clock). 0 or -1. */
int
ucxpeer_link_recv(struct ucxpeer_link *pe, struct ucxpeer_msg *m)
{
	int64_t	end = ucxpeer_now_ms() + UCXPEER_WAIT_S * 1000;

	pe->in_done = 0;
	if (vcl_ucx_recv(pe->ep, ((uint64_t)(pe->srv_ns ^ UCXPEER_CTL_NS) <<
	    32) | pe->link, &pe->in, sizeof pe->in, ucxpeer_in_cb, pe) == NULL)
		return (-1);
	while (!pe->in_done && ucxpeer_now_ms() < end)
		(void)ucxpeer_turn(pe->u, NULL);
	if (!pe->in_done || pe->in_status != 0)
		return (-1);
	*m = pe->in;
	return (0);
}

/* Send a placement message, progress until it went. 0 or -1. */
int
ucxpeer_link_send(struct ucxpeer_link *pe, uint32_t type, uint64_t xid,
    uint64_t off, uint64_t len, const char *name)
{
	static struct ucxpeer_msg	 m;
	struct iovec			 iov = { &m, sizeof m };
	int64_t				 end;
	int				 want = pe->sent + 1;

	end = ucxpeer_now_ms() + UCXPEER_WAIT_S * 1000;
	memset(&m, 0, sizeof m);
	m.type = type;
	m.xid = xid;
	m.off = off;
	m.len = len;
	if (name != NULL)
		snprintf(m.name, sizeof m.name, "%s", name);
	if (vcl_ucx_send(pe->ep, ((uint64_t)(pe->ns ^ UCXPEER_CTL_NS) << 32) |
	    pe->link, &iov, 1, ucxpeer_sent_cb, pe) == NULL)
		return (-1);
	while (pe->sent < want && ucxpeer_now_ms() < end)
		(void)ucxpeer_turn(pe->u, NULL);
	return (pe->sent == want ? 0 : -1);
}

/*
 * Open a peer link to sv choosing ucx; take the server's ring (RING) and
 * say it is mapped (we never fill it). 0 or -1.
 */
int
ucxpeer_link_hello(struct ucxpeer_link *pe, const struct srv *sv)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Hello		 h = VCL__HELLO__INIT;
	Vcl__TransportOffer	 o = VCL__TRANSPORT_OFFER__INIT, *op = &o;
	const Vcl__TransportOffer *w;
	struct ucxpeer_msg	 m;
	struct reply		 rp;
	const void		*a;
	char			 err[256];
	size_t			 alen;
	int			 rc = -1;

	ucxpeer_link_init(pe);
	if ((pe->u = vcl_ucx_create(NULL, err, sizeof err)) == NULL) {
		note("vcl_ucx_create: %s", err);
		return (-1);
	}
	if (conn_open(&pe->p, sv) != 0)
		return (-1);
	pe->p.peer = 1;
	vcl_ucx_address(pe->u, &a, &alen);
	pe->ns = ucxpeer_fnv(a, alen);
	o.name = "ucx";
	o.has_address = 1;
	o.address.data = (uint8_t *)a;
	o.address.len = alen;
	h.version = VCL_PROTOCOL_VERSION;
	h.client_name = "ucxpeer";
	h.has_peer = h.peer = 1;
	h.n_transports = 1;
	h.transports = &op;
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	if (call(&pe->p, &r, NULL, 0, &rp) != 0)
		return (-1);
	if (rp.r->status == CL_SUCCESS && rp.r->welcome != NULL &&
	    (w = rp.r->welcome->transport) != NULL &&
	    strcmp(w->name, "ucx") == 0 && w->has_address &&
	    (pe->ep = vcl_ucx_ep_open(pe->u, w->address.data, w->address.len,
	    NULL, NULL)) != NULL) {
		pe->srv_ns = ucxpeer_fnv(w->address.data, w->address.len);
		rc = 0;
	} else
		note("peer link: the server did not choose ucx");
	reply_free(&rp);
	if (rc != 0)
		return (-1);
	pe->link = ucxpeer_link_no(pe->p.fd);
	if (ucxpeer_link_recv(pe, &m) != 0 || m.type != UCXPEER_RING ||
	    ucxpeer_link_send(pe, UCXPEER_MAPPED, 0, 0, 0, NULL) != 0) {
		note("no ring from the server");
		return (-1);
	}
	return (0);
}

/*
 * Name a ring of ours on the link (a sealed memfd, with its address
 * here, so that the server's probe reads us) and wait until the server
 * mapped it. 0 or -1.
 */
int
ucxpeer_link_ring(struct ucxpeer_link *pe)
{
	struct ucxpeer_msg	 m;
	char			 name[32];
	void			*p;

	if ((pe->ring_fd = memfd_create("ucxpeer", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1 || ftruncate(pe->ring_fd, 2 << 20) !=
	    0 || fcntl(pe->ring_fd, F_ADD_SEALS, F_SEAL_SHRINK |
	    F_SEAL_GROW) != 0 || (p = mmap(NULL, 2 << 20, PROT_READ |
	    PROT_WRITE, MAP_SHARED, pe->ring_fd, 0)) == MAP_FAILED) {
		note("our ring: %s", strerror(errno));
		return (-1);
	}
	pe->ring = p;
	snprintf(name, sizeof name, "/proc/%ld/fd/%d", (long)getpid(),
	    pe->ring_fd);
	if (ucxpeer_link_send(pe, UCXPEER_RING, (uint64_t)(uintptr_t)pe->ring,
	    1 << 20, 2, name) != 0 || ucxpeer_link_recv(pe, &m) != 0 ||
	    m.type != UCXPEER_MAPPED) {
		note("the server did not map our ring");
		return (-1);
	}
	return (0);
}

/* Hello, the server's ring, ours. 0 or -1. */
int
ucxpeer_link_open(struct ucxpeer_link *pe, const struct srv *sv)
{
	if (ucxpeer_link_hello(pe, sv) != 0)
		return (-1);
	return (ucxpeer_link_ring(pe));
}

/* Close the link and let the engine go. */
void
ucxpeer_link_close(struct ucxpeer_link *pe)
{
	if (pe->ep != NULL)
		vcl_ucx_ep_close(pe->ep);
	pe->ep = NULL;
	conn_close(&pe->p);
	if (pe->ring != NULL)
		munmap(pe->ring, 2 << 20);
	pe->ring = NULL;
	if (pe->ring_fd != -1)
		close(pe->ring_fd);
	pe->ring_fd = -1;
	if (pe->u != NULL)
		vcl_ucx_free(pe->u);
	pe->u = NULL;
}

/* The head of a PeerPush whose size bytes are placed as xid. 0 or -1. */
int
ucxpeer_link_push(struct ucxpeer_link *pe, uint64_t sid, uint64_t key,
    uint64_t transfer, uint64_t xid, uint64_t size)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerPush	pp = VCL__PEER_PUSH__INIT;

	pp.session = sid;
	pp.key = key;
	pp.transfer = transfer;
	pp.status = CL_SUCCESS;
	r.has_bulk_xfer = r.has_bulk_size = 1;
	r.bulk_xfer = xid | UCXPEER_PLACE;
	r.bulk_size = size;
	r.call_case = VCL__REQUEST__CALL_PEER_PUSH;
	r.peer_push = &pp;
	return (send_req(&pe->p, &r, NULL, 0));
}
