/*
 * tcp.c - the tcp transport: bulk bytes ride the link's control stream
 * (TCP, plain or TLS) right after the frame head that announces them, in
 * the order sent, written with writev from their own memory and read
 * straight into the destination the receiver posted. Always built, always
 * available: the default and the fallback of every pair.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vcl_io.h"
#include "vcl_tls.h"
#include "vcl_transport.h"

#define VCL_TCP_IOV	64	/* iovecs one writev takes from the queue */

struct vcl_tcp_send {
	uint64_t		 xid;
	struct iovec		*iov;		/* a copy; advanced as sent */
	int			 cnt;
	vcl_tp_done_fn		 done;
	void			*arg;
	TAILQ_ENTRY(vcl_tcp_send) entry;
};

struct vcl_tcp_recv {
	uint64_t		 xid;
	uint8_t			*base;		/* NULL: cancelled, discard */
	uint64_t		 len;
	uint64_t		 got;
	vcl_tp_done_fn		 done;
	void			*arg;
	TAILQ_ENTRY(vcl_tcp_recv) entry;
};

struct vcl_tcp_ep {
	TAILQ_HEAD(, vcl_tcp_send) sends;
	TAILQ_HEAD(, vcl_tcp_recv) recvs;
	uint64_t		 nposted;
	int			 closed;
};

/* Nothing to find: TCP is always there. */
static int
vcl_tcp_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return (VCL_TP_OK);
}

/* No per-process state. */
static int
vcl_tcp_open(struct vcl_tp *tp)
{
	tp->priv = NULL;
	return (VCL_TP_OK);
}

static void
vcl_tcp_fini(struct vcl_tp *tp)
{
	(void)tp;
}

/* No address of its own: the control stream is the way in. */
static int
vcl_tcp_address(struct vcl_tp *tp, uint8_t *buf, size_t *len)
{
	(void)tp;
	(void)buf;
	*len = 0;
	return (VCL_TP_OK);
}

/* An endpoint over the link's control stream. */
static int
vcl_tcp_connect(struct vcl_tp_ep *ep, const uint8_t *addr, size_t len)
{
	struct vcl_tcp_ep	*te;

	(void)addr;
	(void)len;
	if (ep->ctl == NULL) {
		snprintf(ep->err, sizeof ep->err, "no control stream");
		return (VCL_TP_EINVAL);
	}
	if ((te = calloc(1, sizeof *te)) == NULL) {
		snprintf(ep->err, sizeof ep->err, "out of memory");
		return (VCL_TP_ENOMEM);
	}
	TAILQ_INIT(&te->sends);
	TAILQ_INIT(&te->recvs);
	ep->priv = te;
	return (VCL_TP_OK);
}

/* Queue a bulk; progress writes it. */
static int
vcl_tcp_send(struct vcl_tp_ep *ep, uint64_t xid, const struct iovec *iov,
    int cnt, vcl_tp_done_fn done, void *arg)
{
	struct vcl_tcp_ep	*te = ep->priv;
	struct vcl_tcp_send	*s;

	if (te->closed) {
		snprintf(ep->err, sizeof ep->err, "link closed");
		return (VCL_TP_ECLOSED);
	}
	if ((s = calloc(1, sizeof *s)) == NULL ||
	    (cnt > 0 && (s->iov = calloc((size_t)cnt, sizeof *iov)) == NULL)) {
		free(s);
		snprintf(ep->err, sizeof ep->err, "out of memory");
		return (VCL_TP_ENOMEM);
	}
	if (cnt > 0)
		memcpy(s->iov, iov, (size_t)cnt * sizeof *iov);
	s->xid = xid;
	s->cnt = cnt;
	s->done = done;
	s->arg = arg;
	TAILQ_INSERT_TAIL(&te->sends, s, entry);
	return (VCL_TP_OK);
}

/* Post a receive: the next dest->len bytes of the stream after those of
 * the receives before it. */
static int
vcl_tcp_recv(struct vcl_tp_ep *ep, uint64_t xid, const struct vcl_tp_dest *dest,
    vcl_tp_done_fn done, void *arg)
{
	struct vcl_tcp_ep	*te = ep->priv;
	struct vcl_tcp_recv	*r;

	if (te->closed) {
		snprintf(ep->err, sizeof ep->err, "link closed");
		return (VCL_TP_ECLOSED);
	}
	if (te->nposted >= ep->tp->conf.max_posted) {
		snprintf(ep->err, sizeof ep->err, "%llu receives posted",
		    (unsigned long long)te->nposted);
		return (VCL_TP_EBUSY);
	}
	if ((r = calloc(1, sizeof *r)) == NULL) {
		snprintf(ep->err, sizeof ep->err, "out of memory");
		return (VCL_TP_ENOMEM);
	}
	r->xid = xid;
	r->base = dest->base;
	r->len = dest->len;
	r->done = done;
	r->arg = arg;
	TAILQ_INSERT_TAIL(&te->recvs, r, entry);
	te->nposted++;
	return (VCL_TP_OK);
}

/*
 * Cancel a receive. Its bytes still come down the stream after the ones
 * before it, so it stays queued, reading them into nothing.
 */
static void
vcl_tcp_cancel(struct vcl_tp_ep *ep, uint64_t xid)
{
	struct vcl_tcp_ep	*te = ep->priv;
	struct vcl_tcp_recv	*r;
	vcl_tp_done_fn		 done;

	TAILQ_FOREACH(r, &te->recvs, entry) {
		if (r->xid != xid || r->done == NULL)
			continue;
		done = r->done;
		r->done = NULL;
		r->base = NULL;
		done(r->arg, VCL_TP_ECANCELED);
		return;
	}
}

/* Complete every pending send and receive with err. */
static void
vcl_tcp_fail_all(struct vcl_tcp_ep *te, int err)
{
	struct vcl_tcp_send	*s;
	struct vcl_tcp_recv	*r;

	te->closed = 1;
	while ((s = TAILQ_FIRST(&te->sends)) != NULL) {
		TAILQ_REMOVE(&te->sends, s, entry);
		if (s->done != NULL)
			s->done(s->arg, err);
		free(s->iov);
		free(s);
	}
	while ((r = TAILQ_FIRST(&te->recvs)) != NULL) {
		TAILQ_REMOVE(&te->recvs, r, entry);
		te->nposted--;
		if (r->done != NULL)
			r->done(r->arg, err);
		free(r);
	}
}

/* The socket, read while receives are posted, written while sends wait. */
static int
vcl_tcp_evfd(struct vcl_tp *tp, struct vcl_tp_ep *ep, short *ev)
{
	struct vcl_tcp_ep	*te;

	(void)tp;
	*ev = 0;
	if (ep == NULL || ep->ctl == NULL)
		return (-1);
	te = ep->priv;
	if (!TAILQ_EMPTY(&te->recvs))
		*ev |= VCL_TP_EV_READ;
	if (!TAILQ_EMPTY(&te->sends))
		*ev |= VCL_TP_EV_WRITE;
	return (ep->ctl->fd);
}

/* Write queued sends until the socket is full. -1: the link failed. */
static int
vcl_tcp_write(struct vcl_tp_ep *ep, struct vcl_tcp_ep *te)
{
	struct iovec		 iov[VCL_TCP_IOV];
	struct vcl_tcp_send	*s;
	ssize_t			 n;
	size_t			 left;
	int			 cnt, i;

	while ((s = TAILQ_FIRST(&te->sends)) != NULL) {
		cnt = 0;
		TAILQ_FOREACH(s, &te->sends, entry)
			for (i = 0; i < s->cnt && cnt < VCL_TCP_IOV; i++)
				if (s->iov[i].iov_len > 0)
					iov[cnt++] = s->iov[i];
		s = TAILQ_FIRST(&te->sends);
		n = 0;
		if (cnt > 0)
			n = vcl_link_writev(ep->ctl, iov, cnt);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return (0);
		if (n < 0) {
			snprintf(ep->err, sizeof ep->err, "%s",
			    strerror(errno));
			return (-1);
		}
		/* Retire what went: whole sends complete, in order. */
		while ((s = TAILQ_FIRST(&te->sends)) != NULL) {
			for (i = 0; i < s->cnt && n > 0; i++) {
				left = s->iov[i].iov_len;
				if ((size_t)n < left) {
					s->iov[i].iov_base =
					    (uint8_t *)s->iov[i].iov_base + n;
					s->iov[i].iov_len -= (size_t)n;
					n = 0;
					break;
				}
				n -= (ssize_t)left;
				s->iov[i].iov_len = 0;
			}
			for (i = 0; i < s->cnt; i++)
				if (s->iov[i].iov_len > 0)
					break;
			if (i < s->cnt)
				break;
			TAILQ_REMOVE(&te->sends, s, entry);
			if (s->done != NULL)
				s->done(s->arg, VCL_TP_OK);
			free(s->iov);
			free(s);
		}
	}
	return (0);
}

/* Read into posted receives, in order. -1: the link failed or closed. */
static int
vcl_tcp_read(struct vcl_tp_ep *ep, struct vcl_tcp_ep *te)
{
	uint8_t			 scratch[16384];
	struct vcl_tcp_recv	*r;
	uint64_t		 left;
	ssize_t			 n;

	while ((r = TAILQ_FIRST(&te->recvs)) != NULL) {
		left = r->len - r->got;
		if (left > 0) {
			if (r->base != NULL)
				n = vcl_link_read(ep->ctl, r->base + r->got,
				    left > SSIZE_MAX ? SSIZE_MAX : left);
			else
				n = vcl_link_read(ep->ctl, scratch,
				    left < sizeof scratch ? left :
				    sizeof scratch);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return (0);
			if (n <= 0) {
				snprintf(ep->err, sizeof ep->err, "%s",
				    n == 0 ? "closed by the other end" :
				    strerror(errno));
				return (-1);
			}
			r->got += (uint64_t)n;
			if (r->got < r->len)
				continue;
		}
		TAILQ_REMOVE(&te->recvs, r, entry);
		te->nposted--;
		if (r->done != NULL)
			r->done(r->arg, VCL_TP_OK);
		free(r);
	}
	return (0);
}

/* Move what the socket allows, both ways. */
static int
vcl_tcp_progress(struct vcl_tp *tp, struct vcl_tp_ep *ep)
{
	struct vcl_tcp_ep	*te;

	(void)tp;
	if (ep == NULL || (te = ep->priv) == NULL || te->closed)
		return (0);
	if (vcl_tcp_write(ep, te) != 0 || vcl_tcp_read(ep, te) != 0) {
		vcl_tcp_fail_all(te, VCL_TP_ECLOSED);
		return (0);
	}
	/* Bytes TLS already decrypted fire no socket event. */
	return (!TAILQ_EMPTY(&te->recvs) && vcl_link_pending(ep->ctl) > 0);
}

/* Fail what is pending; the control stream is its owner's to close. */
static void
vcl_tcp_close(struct vcl_tp_ep *ep)
{
	struct vcl_tcp_ep	*te = ep->priv;

	if (te == NULL)
		return;
	vcl_tcp_fail_all(te, VCL_TP_ECLOSED);
	free(te);
	ep->priv = NULL;
}

/*
 * Start the control stream of a link to a numeric "host:port" (names are
 * refused: a server dials what a client names): a non-blocking connect
 * under way, tuned. host gets the host part (TLS checks it). Returns the
 * socket, or -1 with why in err.
 */
int
vcl_tcp_dial(const char *addr, char *host, size_t hostlen, char *err,
    size_t errlen)
{
	struct addrinfo	 hints, *res = NULL;
	char		 port[32];
	int		 fd;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if (vcl_io_split_hostport(addr, host, hostlen, port,
	    sizeof port) != 0 || port[0] == '\0' ||
	    getaddrinfo(host, port, &hints, &res) != 0) {
		snprintf(err, errlen, "want numeric host:port");
		return (-1);
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, res->ai_protocol);
	if (fd == -1 || (connect(fd, res->ai_addr, res->ai_addrlen) != 0 &&
	    errno != EINPROGRESS)) {
		snprintf(err, errlen, "%s", strerror(errno));
		if (fd != -1)
			close(fd);
		freeaddrinfo(res);
		return (-1);
	}
	freeaddrinfo(res);
	vcl_io_tune(fd);
	return (fd);
}

const struct vcl_transport vcl_transport_tcp = {
	.name = "tcp",
	.caps = VCL_TP_PEER | VCL_TP_CLIENT | VCL_TP_INBAND,
	.probe = vcl_tcp_probe,
	.open = vcl_tcp_open,
	.fini = vcl_tcp_fini,
	.address = vcl_tcp_address,
	.connect = vcl_tcp_connect,
	.send = vcl_tcp_send,
	.recv = vcl_tcp_recv,
	.cancel = vcl_tcp_cancel,
	.evfd = vcl_tcp_evfd,
	.progress = vcl_tcp_progress,
	.close = vcl_tcp_close,
};
