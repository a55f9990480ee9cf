/*
 * sock.c - the sock transport, for testing the seam: out-of-band bulk over
 * TCP connections of its own between the processes of one host (loopback
 * only), beside the control stream. It is what ucx or tca look like to the
 * host (bulk named by transfer id, posted receives, one event fd per
 * process: an epoll set) without their libraries, so the out-of-band paths
 * run in every build. Offered only when named (--transports, --transport-
 * force): never chosen by default.
 *
 * Wire: each sending endpoint opens one connection to the other process's
 * listener, writes its instance id (8 bytes), then per bulk {xid u64,
 * length u64} and the bytes. A receiver matches (sending instance, xid) to
 * a posted receive, else holds the bytes (up to max_unexpected, each bulk
 * held charged its entry as well, so that bulks of zero bytes are bounded
 * too); one refused over that limit leaves a tombstone, to fail its
 * receive when posted (at most VCL_SOCK_REFUSED_MAX at once; past them
 * such a bulk is dropped without trace).
 */
#include <sys/epoll.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vcl_auth.h"
#include "vcl_io.h"
#include "vcl_transport.h"

#define VCL_SOCK_ADDR_LEN	10	/* instance id, port */
#define VCL_SOCK_CONNECT_MS	100	/* a connect, at most (loopback) */
#define VCL_SOCK_REFUSED_MAX	64	/* tombstones of refused early bulks */

/* A posted receive, bytes that came before theirs was, or a tombstone. */
struct vcl_sock_rx {
	struct vcl_tp_ep	*ep;		/* NULL: unexpected or dead */
	uint64_t		 src, xid;
	uint8_t			*base;		/* NULL: discard */
	uint64_t		 len, got;
	int			 unexpected;	/* before its receive */
	int			 refused;	/* over the limit: a tombstone */
	uint64_t		 held;		/* charged: base's bytes + entry */
	int			 streaming;	/* a connection fills it */
	int			 complete;
	int			 err;
	vcl_tp_done_fn		 done;		/* NULL: nobody to tell */
	void			*arg;
	TAILQ_ENTRY(vcl_sock_rx) entry;
};
TAILQ_HEAD(vcl_sock_rxs, vcl_sock_rx);

/* An accepted connection: another process's endpoint sending to us. */
struct vcl_sock_in {
	int			 fd;
	uint8_t			 hdr[16];
	size_t			 hgot;
	int			 hello;		/* src known */
	uint64_t		 src;
	struct vcl_sock_rx	*cur;		/* bulk under way, NULL: drop */
	uint64_t		 left;
	LIST_ENTRY(vcl_sock_in)	 entry;
};

/* One bulk to send: its head and the caller's iovecs. */
struct vcl_sock_tx {
	uint8_t			 hdr[16];
	struct iovec		*iov;		/* [0] is hdr */
	int			 cnt;
	vcl_tp_done_fn		 done;
	void			*arg;
	TAILQ_ENTRY(vcl_sock_tx) entry;
};

struct vcl_sock_ep {
	struct vcl_tp_ep	*ep;
	uint64_t		 peer;
	int			 fd;
	uint64_t		 nposted;
	int			 failed;
	int			 wantout;
	TAILQ_HEAD(, vcl_sock_tx) txq;
	LIST_ENTRY(vcl_sock_ep)	 entry;
};

struct vcl_sock {
	int			 epfd, lfd;
	uint64_t		 id;
	uint16_t		 port;
	uint64_t		 unexpected;	/* bytes held */
	uint64_t		 max_unexpected;
	uint64_t		 refused;	/* tombstones of refused ones */
	struct vcl_sock_rxs	 rxs;
	LIST_HEAD(, vcl_sock_in) ins;
	LIST_HEAD(, vcl_sock_ep) eps;
};

/* Loopback TCP is always there. */
static int
vcl_sock_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return (VCL_TP_OK);
}

/* A listener on 127.0.0.1, an epoll set, a random instance id. */
static int
vcl_sock_open(struct vcl_tp *tp)
{
	struct vcl_sock		*v;
	struct sockaddr_in	 sa;
	socklen_t		 sl = sizeof sa;
	struct epoll_event	 ev;

	if ((v = calloc(1, sizeof *v)) == NULL)
		return (VCL_TP_ENOMEM);
	TAILQ_INIT(&v->rxs);
	LIST_INIT(&v->ins);
	LIST_INIT(&v->eps);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	v->epfd = epoll_create1(EPOLL_CLOEXEC);
	v->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	if (v->epfd == -1 || v->lfd == -1 ||
	    bind(v->lfd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    listen(v->lfd, 64) != 0 ||
	    getsockname(v->lfd, (struct sockaddr *)&sa, &sl) != 0 ||
	    epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->lfd, &ev) != 0 ||
	    vcl_auth_nonce((uint8_t *)&v->id, sizeof v->id) != 0) {
		snprintf(tp->err, sizeof tp->err, "%s", strerror(errno));
		if (v->epfd != -1)
			close(v->epfd);
		if (v->lfd != -1)
			close(v->lfd);
		free(v);
		return (VCL_TP_EIO);
	}
	v->port = ntohs(sa.sin_port);
	v->max_unexpected = tp->conf.max_unexpected;
	tp->priv = v;
	return (VCL_TP_OK);
}

/* Instance id and port. */
static int
vcl_sock_address(struct vcl_tp *tp, uint8_t *buf, size_t *len)
{
	struct vcl_sock	*v = tp->priv;

	if (*len < VCL_SOCK_ADDR_LEN)
		return (VCL_TP_EINVAL);
	memcpy(buf, &v->id, 8);
	buf[8] = (uint8_t)(v->port >> 8);
	buf[9] = (uint8_t)v->port;
	*len = VCL_SOCK_ADDR_LEN;
	return (VCL_TP_OK);
}

/* Watch an fd for input, and output when out is set. */
static void
vcl_sock_watch(struct vcl_sock *v, int fd, int op, int out)
{
	struct epoll_event	ev;

	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | (out ? EPOLLOUT : 0);
	ev.data.fd = fd;
	(void)epoll_ctl(v->epfd, op, fd, &ev);
}

/* Connect to the other process's listener; our id goes first. */
static int
vcl_sock_connect(struct vcl_tp_ep *ep, const uint8_t *addr, size_t len)
{
	struct vcl_sock		*v = ep->tp->priv;
	struct vcl_sock_ep	*se;
	struct sockaddr_in	 sa;
	struct timeval		 tv = { 0, VCL_SOCK_CONNECT_MS * 1000 };
	int			 fd;

	if (addr == NULL || len != VCL_SOCK_ADDR_LEN) {
		snprintf(ep->err, sizeof ep->err, "bad address");
		return (VCL_TP_EINVAL);
	}
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)(addr[8] << 8 | addr[9]));
	/*
	 * Loopback: the connect completes at once, or is refused at once,
	 * unless the port's listener has a full backlog (the address comes
	 * from the other end: anything may listen there). Then it would wait
	 * minutes for SYN retries, on the event loop: bounded.
	 */
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    fcntl(fd, F_SETFL, O_NONBLOCK) != 0 ||
	    (se = calloc(1, sizeof *se)) == NULL) {
		snprintf(ep->err, sizeof ep->err, "%s", strerror(errno));
		if (fd != -1)
			close(fd);
		return (VCL_TP_EIO);
	}
	vcl_io_tune(fd);
	if (vcl_io_writev_full(fd, &(struct iovec){ &v->id, 8 }, 1) != 0) {
		snprintf(ep->err, sizeof ep->err, "%s", strerror(errno));
		close(fd);
		free(se);
		return (VCL_TP_EIO);
	}
	se->ep = ep;
	se->fd = fd;
	memcpy(&se->peer, addr, 8);
	TAILQ_INIT(&se->txq);
	LIST_INSERT_HEAD(&v->eps, se, entry);
	vcl_sock_watch(v, fd, EPOLL_CTL_ADD, 0);
	ep->priv = se;
	return (VCL_TP_OK);
}

/* Queue a bulk behind its head. */
static int
vcl_sock_send(struct vcl_tp_ep *ep, uint64_t xid, const struct iovec *iov,
    int cnt, vcl_tp_done_fn done, void *arg)
{
	struct vcl_sock_ep	*se = ep->priv;
	struct vcl_sock_tx	*t;
	uint64_t		 len = 0;
	int			 i;

	if (se->failed) {
		snprintf(ep->err, sizeof ep->err, "link closed");
		return (VCL_TP_ECLOSED);
	}
	if ((t = calloc(1, sizeof *t)) == NULL ||
	    (t->iov = calloc((size_t)cnt + 1, sizeof *iov)) == NULL) {
		free(t);
		return (VCL_TP_ENOMEM);
	}
	for (i = 0; i < cnt; i++)
		len += iov[i].iov_len;
	memcpy(t->hdr, &xid, 8);
	memcpy(t->hdr + 8, &len, 8);
	t->iov[0].iov_base = t->hdr;
	t->iov[0].iov_len = sizeof t->hdr;
	memcpy(t->iov + 1, iov, (size_t)cnt * sizeof *iov);
	t->cnt = cnt + 1;
	t->done = done;
	t->arg = arg;
	TAILQ_INSERT_TAIL(&se->txq, t, entry);
	return (VCL_TP_OK);
}

/* Post a receive; bytes held for it move into dest. */
static int
vcl_sock_recv(struct vcl_tp_ep *ep, uint64_t xid, const struct vcl_tp_dest *d,
    vcl_tp_done_fn done, void *arg)
{
	struct vcl_sock		*v = ep->tp->priv;
	struct vcl_sock_ep	*se = ep->priv;
	struct vcl_sock_rx	*r;

	if (se->failed) {
		snprintf(ep->err, sizeof ep->err, "link closed");
		return (VCL_TP_ECLOSED);
	}
	if (se->nposted >= ep->tp->conf.max_posted) {
		snprintf(ep->err, sizeof ep->err, "too many receives");
		return (VCL_TP_EBUSY);
	}
	TAILQ_FOREACH(r, &v->rxs, entry)
		if (r->ep == NULL && r->unexpected && r->src == se->peer &&
		    r->xid == xid)
			break;
	if (r != NULL) {
		/* Came first: move what is here, the rest lands in dest. */
		if (r->len != d->len) {
			r->err = VCL_TP_ETOOBIG;
			r->complete = 1;
		} else if (d->base != NULL && r->base != NULL)
			memcpy(d->base, r->base, r->got);
		free(r->base);
		r->base = r->err == VCL_TP_OK ? d->base : NULL;
		v->unexpected -= r->held;
		r->held = 0;
		r->unexpected = 0;
		if (r->refused)
			v->refused--;
		r->refused = 0;
	} else {
		if ((r = calloc(1, sizeof *r)) == NULL)
			return (VCL_TP_ENOMEM);
		r->src = se->peer;
		r->xid = xid;
		r->base = d->base;
		r->len = d->len;
		TAILQ_INSERT_TAIL(&v->rxs, r, entry);
	}
	r->ep = ep;
	r->done = done;
	r->arg = arg;
	se->nposted++;
	return (VCL_TP_OK);
}

/* Tell a receive's owner, once; it then becomes a tombstone. */
static void
vcl_sock_rx_tell(struct vcl_sock_rx *r, int err)
{
	vcl_tp_done_fn	 done = r->done;
	struct vcl_sock_ep *se;

	if (r->ep != NULL) {
		se = r->ep->priv;
		se->nposted--;
	}
	r->ep = NULL;
	r->base = NULL;
	r->done = NULL;
	if (done != NULL)
		done(r->arg, err);
}

/* Free a receive nobody waits on and no connection fills. */
static void
vcl_sock_rx_free(struct vcl_sock *v, struct vcl_sock_rx *r)
{
	struct vcl_sock_in	*in;

	LIST_FOREACH(in, &v->ins, entry)
		if (in->cur == r)
			in->cur = NULL;
	if (r->unexpected) {
		v->unexpected -= r->held;
		free(r->base);
	}
	if (r->refused)
		v->refused--;
	TAILQ_REMOVE(&v->rxs, r, entry);
	free(r);
}

static void
vcl_sock_cancel(struct vcl_tp_ep *ep, uint64_t xid)
{
	struct vcl_sock		*v = ep->tp->priv;
	struct vcl_sock_rx	*r;

	TAILQ_FOREACH(r, &v->rxs, entry)
		if (r->ep == ep && r->xid == xid && r->done != NULL) {
			vcl_sock_rx_tell(r, VCL_TP_ECANCELED);
			if (r->complete)
				vcl_sock_rx_free(v, r);
			return;
		}
}

/* The epoll set: one fd for everything. */
static int
vcl_sock_evfd(struct vcl_tp *tp, struct vcl_tp_ep *ep, short *ev)
{
	struct vcl_sock	*v = tp->priv;

	*ev = VCL_TP_EV_READ;
	return (ep == NULL ? v->epfd : -1);
}

/* Fail an endpoint's sends. */
static void
vcl_sock_ep_fail(struct vcl_sock *v, struct vcl_sock_ep *se)
{
	struct vcl_sock_tx	*t;

	if (se->fd != -1) {
		(void)epoll_ctl(v->epfd, EPOLL_CTL_DEL, se->fd, NULL);
		close(se->fd);
		se->fd = -1;
	}
	se->failed = 1;
	while ((t = TAILQ_FIRST(&se->txq)) != NULL) {
		TAILQ_REMOVE(&se->txq, t, entry);
		if (t->done != NULL)
			t->done(t->arg, VCL_TP_ECLOSED);
		free(t->iov);
		free(t);
	}
}

/* Write an endpoint's queue until the socket is full. */
static void
vcl_sock_write(struct vcl_sock *v, struct vcl_sock_ep *se)
{
	struct vcl_sock_tx	*t;
	struct iovec		*iov;
	ssize_t			 n;
	int			 cnt;

	while ((t = TAILQ_FIRST(&se->txq)) != NULL) {
		iov = t->iov;
		cnt = t->cnt;
		while (cnt > 0 && iov->iov_len == 0) {
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			n = writev(se->fd, iov, cnt > IOV_MAX ? IOV_MAX : cnt);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				break;
			if (n < 0) {
				snprintf(se->ep->err, sizeof se->ep->err, "%s",
				    strerror(errno));
				vcl_sock_ep_fail(v, se);
				return;
			}
			vcl_io_advance(&iov, &cnt, (size_t)n);
			memmove(t->iov, iov, (size_t)cnt * sizeof *iov);
			t->cnt = cnt;
			if (cnt > 0 && iov[0].iov_len > 0)
				continue;
		}
		TAILQ_REMOVE(&se->txq, t, entry);
		if (t->done != NULL)
			t->done(t->arg, VCL_TP_OK);
		free(t->iov);
		free(t);
	}
	if (se->wantout != !TAILQ_EMPTY(&se->txq)) {
		se->wantout = !TAILQ_EMPTY(&se->txq);
		vcl_sock_watch(v, se->fd, EPOLL_CTL_MOD, se->wantout);
	}
}

/* A bulk's head came: find where its bytes go. */
static void
vcl_sock_route(struct vcl_sock *v, struct vcl_sock_in *in, uint64_t xid,
    uint64_t len)
{
	struct vcl_sock_rx	*r;

	in->left = len;
	in->cur = NULL;
	TAILQ_FOREACH(r, &v->rxs, entry)
		if (r->src == in->src && r->xid == xid && !r->streaming &&
		    !r->unexpected && !r->complete)
			break;
	if (r != NULL) {
		r->streaming = 1;
		if (r->len != len) {
			r->err = VCL_TP_ETOOBIG;
			r->complete = 1;	/* its bytes are dropped */
			r->base = NULL;
			return;
		}
		in->cur = r;
		return;
	}
	/*
	 * Before its receive: hold it, its bytes and its entry within the
	 * limit; over it, drop the bytes and leave a tombstone that fails
	 * the receive when it comes, while there are few of them.
	 */
	if (v->refused >= VCL_SOCK_REFUSED_MAX &&
	    (len > v->max_unexpected - v->unexpected ||
	    sizeof *r > v->max_unexpected - v->unexpected - len))
		return;		/* dropped: in->cur NULL */
	if ((r = calloc(1, sizeof *r)) == NULL)
		return;
	r->src = in->src;
	r->xid = xid;
	r->len = len;
	r->unexpected = r->streaming = 1;
	if (len <= v->max_unexpected - v->unexpected &&
	    sizeof *r <= v->max_unexpected - v->unexpected - len &&
	    (r->base = malloc(len ? len : 1)) != NULL) {
		r->held = len + sizeof *r;
		v->unexpected += r->held;
	} else {
		r->err = VCL_TP_ETOOBIG;
		r->complete = 1;
		r->refused = 1;
		v->refused++;
	}
	TAILQ_INSERT_TAIL(&v->rxs, r, entry);
	in->cur = r;
}

/* Close an inbound connection: what it carried, and its sender's
 * posted receives, fail. */
static void
vcl_sock_in_close(struct vcl_sock *v, struct vcl_sock_in *in)
{
	struct vcl_sock_rx	*r;

	if (in->cur != NULL && !in->cur->complete) {
		in->cur->complete = 1;
		in->cur->err = VCL_TP_ECLOSED;
	}
	if (in->hello)
		TAILQ_FOREACH(r, &v->rxs, entry)
			if (r->src == in->src && !r->complete &&
			    !r->unexpected) {
				r->complete = 1;
				r->err = VCL_TP_ECLOSED;
			}
	(void)epoll_ctl(v->epfd, EPOLL_CTL_DEL, in->fd, NULL);
	close(in->fd);
	LIST_REMOVE(in, entry);
	free(in);
}

/* Read what an inbound connection holds. -1: it closed. */
static int
vcl_sock_read(struct vcl_sock *v, struct vcl_sock_in *in)
{
	uint8_t		 scratch[65536];
	uint64_t	 xid, len;
	uint8_t		*dst;
	size_t		 want;
	ssize_t		 n;

	for (;;) {
		if (!in->hello || in->left == 0) {
			want = (in->hello ? 16 : 8) - in->hgot;
			n = read(in->fd, in->hdr + in->hgot, want);
		} else {
			want = in->left > sizeof scratch && (in->cur == NULL ||
			    in->cur->base == NULL) ? sizeof scratch :
			    in->left > SSIZE_MAX ? SSIZE_MAX : in->left;
			dst = in->cur != NULL && in->cur->base != NULL ?
			    in->cur->base + in->cur->got : scratch;
			n = read(in->fd, dst, want);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return (0);
		if (n <= 0)
			return (-1);
		if (!in->hello) {
			if ((in->hgot += (size_t)n) < 8)
				continue;
			memcpy(&in->src, in->hdr, 8);
			in->hello = 1;
			in->hgot = 0;
		} else if (in->left == 0) {
			if ((in->hgot += (size_t)n) < 16)
				continue;
			in->hgot = 0;
			memcpy(&xid, in->hdr, 8);
			memcpy(&len, in->hdr + 8, 8);
			vcl_sock_route(v, in, xid, len);
			if (len == 0 && in->cur != NULL)
				in->cur->complete = 1;
		} else {
			in->left -= (uint64_t)n;
			if (in->cur != NULL) {
				in->cur->got += (uint64_t)n;
				if (in->left == 0)
					in->cur->complete = 1;
			}
		}
	}
}

/* Accept, read, write, then tell the owners of what completed. */
static int
vcl_sock_progress(struct vcl_tp *tp, struct vcl_tp_ep *ep)
{
	struct vcl_sock		*v = tp->priv;
	struct vcl_sock_in	*in, *inn;
	struct vcl_sock_ep	*se;
	struct vcl_sock_rx	*r, *rn;
	int			 fd;

	if (ep != NULL)
		return (0);
	/* Level-triggered: the work below is what quiets the set. */
	while ((fd = accept4(v->lfd, NULL, NULL, SOCK_NONBLOCK |
	    SOCK_CLOEXEC)) != -1) {
		if ((in = calloc(1, sizeof *in)) == NULL) {
			close(fd);
			continue;
		}
		in->fd = fd;
		LIST_INSERT_HEAD(&v->ins, in, entry);
		vcl_sock_watch(v, fd, EPOLL_CTL_ADD, 0);
	}
	for (in = LIST_FIRST(&v->ins); in != NULL; in = inn) {
		inn = LIST_NEXT(in, entry);
		if (vcl_sock_read(v, in) != 0)
			vcl_sock_in_close(v, in);
	}
	LIST_FOREACH(se, &v->eps, entry)
		if (!se->failed)
			vcl_sock_write(v, se);
	for (r = TAILQ_FIRST(&v->rxs); r != NULL; r = rn) {
		rn = TAILQ_NEXT(r, entry);
		if (!r->complete || r->unexpected)
			continue;
		if (r->done != NULL)
			vcl_sock_rx_tell(r, r->err);
		vcl_sock_rx_free(v, r);
		/* A callback may have posted or cancelled: start over. */
		rn = TAILQ_FIRST(&v->rxs);
	}
	return (0);
}

/* Fail what the endpoint has pending; its receives become tombstones. */
static void
vcl_sock_close(struct vcl_tp_ep *ep)
{
	struct vcl_sock		*v = ep->tp->priv;
	struct vcl_sock_ep	*se = ep->priv;
	struct vcl_sock_rx	*r, *rn;

	if (se == NULL)
		return;
	vcl_sock_ep_fail(v, se);
	for (r = TAILQ_FIRST(&v->rxs); r != NULL; r = rn) {
		rn = TAILQ_NEXT(r, entry);
		if (r->ep != ep)
			continue;
		vcl_sock_rx_tell(r, VCL_TP_ECLOSED);
		if (r->complete)
			vcl_sock_rx_free(v, r);
		rn = TAILQ_FIRST(&v->rxs);
	}
	LIST_REMOVE(se, entry);
	free(se);
	ep->priv = NULL;
}

/* Close everything (endpoints were closed by their owners). */
static void
vcl_sock_fini(struct vcl_tp *tp)
{
	struct vcl_sock		*v = tp->priv;
	struct vcl_sock_in	*in;
	struct vcl_sock_rx	*r;

	if (v == NULL)
		return;
	while ((in = LIST_FIRST(&v->ins)) != NULL)
		vcl_sock_in_close(v, in);
	while ((r = TAILQ_FIRST(&v->rxs)) != NULL) {
		if (r->done != NULL)
			vcl_sock_rx_tell(r, VCL_TP_ECLOSED);
		vcl_sock_rx_free(v, r);
	}
	close(v->lfd);
	close(v->epfd);
	free(v);
	tp->priv = NULL;
}

const struct vcl_transport vcl_transport_sock = {
	.name = "sock",
	.caps = VCL_TP_PEER | VCL_TP_CLIENT | VCL_TP_NAMED,
	.probe = vcl_sock_probe,
	.open = vcl_sock_open,
	.fini = vcl_sock_fini,
	.address = vcl_sock_address,
	.connect = vcl_sock_connect,
	.send = vcl_sock_send,
	.recv = vcl_sock_recv,
	.cancel = vcl_sock_cancel,
	.evfd = vcl_sock_evfd,
	.progress = vcl_sock_progress,
	.close = vcl_sock_close,
};
