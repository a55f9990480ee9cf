/*
 * ucx_tp.c - the ucx backend of the transport seam (vcl_transport.h) on
 * the UCX engine (vcl_ucx.h): bulk out of band as UCX tagged messages
 * (cross-memory attach or shared memory on one host, RDMA verbs across
 * hosts where a fabric exists, else TCP), the control stream staying on
 * the link.
 *
 * Tags: a transfer xid travels as the tag (ns << 32) ^ xid, where ns is
 * a 32-bit hash (FNV-1a) of the sending worker's address. The receiving
 * end got that address in the handshake (connect's addr), so it posts
 * under the same tag with no message of its own; a worker receives for
 * many links at once, and the sender's address keeps their transfers
 * apart (the seam has a sending process number its transfers once for
 * all its links, so two links of one sender into one worker differ too).
 */
#include <sys/socket.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_tls.h"
#include "vcl_transport.h"
#include "vcl_ucx.h"

/* A send or receive in flight, for its done and for cancel by xid. */
struct vcl_ucx_xfer {
	struct vcl_ucx_tpep	*e;
	uint64_t		 xid;
	int			 recv;
	int			 drop;		/* no destination: discard */
	struct vcl_ucx_op	*op;
	vcl_tp_done_fn		 done;
	void			*arg;
	LIST_ENTRY(vcl_ucx_xfer) entry;
};

/* One endpoint: the engine's, the two namespaces, what is in flight. */
struct vcl_ucx_tpep {
	struct vcl_tp_ep	*ep;
	struct vcl_ucx_ep	*uep;		/* NULL once failed or closed */
	uint32_t		 ns;		/* our address's: our sends */
	uint32_t		 peer_ns;	/* theirs: our receives */
	int			 closing;	/* cancelled means closed */
	LIST_HEAD(, vcl_ucx_xfer) xfers;
};

/* The engine's status as the seam's. */
static int
vcl_ucx_tp_err(struct vcl_ucx_tpep *e, int status)
{
	switch (status) {
	case 0:
		return (VCL_TP_OK);
	case -EMSGSIZE:
	case -EPROTO:
		return (VCL_TP_ETOOBIG);
	case -ECANCELED:
		return (e->closing ? VCL_TP_ECLOSED : VCL_TP_ECANCELED);
	case -ECONNRESET:
		return (VCL_TP_ECLOSED);
	default:
		return (VCL_TP_EIO);
	}
}

/* The engine finished a transfer: tell its owner, once. */
static void
vcl_ucx_tp_done(int status, void *arg)
{
	struct vcl_ucx_xfer	*x = arg;
	int			 err;

	/* Dropped: a message truncated to nothing is the goal. */
	if (x->drop && status == -EMSGSIZE)
		status = 0;
	err = vcl_ucx_tp_err(x->e, status);
	LIST_REMOVE(x, entry);
	if (err != VCL_TP_OK)
		snprintf(x->e->ep->err, sizeof x->e->ep->err, "ucx: %s %llu: "
		    "%s", x->recv ? "receive" : "send",
		    (unsigned long long)x->xid, vcl_tp_strerror(err));
	x->done(x->arg, err);
	free(x);
}

/* Whether UCX can be used: it is linked, so yes. */
static int
vcl_ucx_tp_probe(char *why, size_t len)
{
	return (VCL_TP_OK);
}

/* The instance: a UCX context and worker. */
static int
vcl_ucx_tp_open(struct vcl_tp *tp)
{
	struct vcl_ucx_limits	lim;

	memset(&lim, 0, sizeof lim);
	lim.max_recvs = (size_t)tp->conf.max_posted;
	if ((tp->priv = vcl_ucx_create(&lim, tp->err, sizeof tp->err)) ==
	    NULL)
		return (VCL_TP_EIO);
	return (VCL_TP_OK);
}

/* Close the instance (its endpoints are closed). */
static void
vcl_ucx_tp_fini(struct vcl_tp *tp)
{
	vcl_ucx_free(tp->priv);
	tp->priv = NULL;
}

/* Our worker's address. */
static int
vcl_ucx_tp_address(struct vcl_tp *tp, uint8_t *buf, size_t *len)
{
	const void	*a;
	size_t		 alen;

	vcl_ucx_address(tp->priv, &a, &alen);
	if (alen > *len || alen > VCL_TP_ADDR_MAX) {
		snprintf(tp->err, sizeof tp->err, "ucx address of %zu bytes",
		    alen);
		return (VCL_TP_EINVAL);
	}
	memcpy(buf, a, alen);
	*len = alen;
	return (VCL_TP_OK);
}

/* The engine saw the peer fail: nothing to do until progress or close. */
static void
vcl_ucx_tp_failed(struct vcl_ucx_ep *uep, void *arg)
{
	struct vcl_ucx_tpep	*e = arg;

	snprintf(e->ep->err, sizeof e->ep->err, "ucx: peer failed");
}

/* The namespace of a worker's transfers: FNV-1a of its address. */
static uint32_t
vcl_ucx_tp_ns(const void *addr, size_t len)
{
	const uint8_t	*p = addr;
	uint32_t	 h = 2166136261u;
	size_t		 i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return (h);
}

/* The endpoint to the other end's worker. */
static int
vcl_ucx_tp_connect(struct vcl_tp_ep *ep, const uint8_t *addr, size_t len)
{
	struct vcl_ucx_tpep	*e;
	const void		*ours;
	size_t			 olen;

	/*
	 * UCX does not encrypt: a link whose control stream is TLS keeps its
	 * bytes on it too (the host falls back to tcp for the link).
	 */
	if (ep->ctl != NULL && ep->ctl->ssl != NULL) {
		snprintf(ep->err, sizeof ep->err, "the link is under TLS; ucx "
		    "would carry its bytes unencrypted");
		return (VCL_TP_EINVAL);
	}
	if ((e = calloc(1, sizeof *e)) == NULL)
		return (VCL_TP_ENOMEM);
	e->ep = ep;
	LIST_INIT(&e->xfers);
	vcl_ucx_address(ep->tp->priv, &ours, &olen);
	e->ns = vcl_ucx_tp_ns(ours, olen);
	e->peer_ns = vcl_ucx_tp_ns(addr, len);
	if ((e->uep = vcl_ucx_ep_open(ep->tp->priv, addr, len,
	    vcl_ucx_tp_failed, e)) == NULL) {
		free(e);
		snprintf(ep->err, sizeof ep->err, "ucx: cannot reach the "
		    "address (%s)", strerror(errno));
		return (VCL_TP_EINVAL);
	}
	ep->priv = e;
	return (VCL_TP_OK);
}

/* A new transfer record of e. */
static struct vcl_ucx_xfer *
vcl_ucx_tp_xfer(struct vcl_ucx_tpep *e, uint64_t xid, int recv,
    vcl_tp_done_fn done, void *arg)
{
	struct vcl_ucx_xfer	*x;

	if ((x = calloc(1, sizeof *x)) == NULL)
		return (NULL);
	x->e = e;
	x->xid = xid;
	x->recv = recv;
	x->done = done;
	x->arg = arg;
	LIST_INSERT_HEAD(&e->xfers, x, entry);
	return (x);
}

/* Send the iovecs as xid, from their memory. */
static int
vcl_ucx_tp_send(struct vcl_tp_ep *ep, uint64_t xid, const struct iovec *iov,
    int cnt, vcl_tp_done_fn done, void *arg)
{
	struct vcl_ucx_tpep	*e = ep->priv;
	struct vcl_ucx_xfer	*x;
	struct iovec		 none = { NULL, 0 };

	if (e->uep == NULL || vcl_ucx_ep_failed(e->uep)) {
		snprintf(ep->err, sizeof ep->err, "ucx: link closed");
		return (VCL_TP_ECLOSED);
	}
	if (cnt > 64) {
		snprintf(ep->err, sizeof ep->err, "ucx: %d pieces", cnt);
		return (VCL_TP_EINVAL);
	}
	if (cnt == 0) {
		iov = &none;
		cnt = 1;
	}
	if ((x = vcl_ucx_tp_xfer(e, xid, 0, done, arg)) == NULL)
		return (VCL_TP_ENOMEM);
	x->op = vcl_ucx_send(e->uep, ((uint64_t)e->ns << 32) ^ xid, iov, cnt,
	    vcl_ucx_tp_done, x);
	if (x->op == NULL) {
		LIST_REMOVE(x, entry);
		free(x);
		snprintf(ep->err, sizeof ep->err, "ucx: send: %s",
		    strerror(errno));
		return (errno == ECONNRESET ? VCL_TP_ECLOSED : VCL_TP_EIO);
	}
	return (VCL_TP_OK);
}

/*
 * Post the receive of xid into dest (exactly dest->len bytes). A dest with
 * no base drops the bytes: a receive of 0 bytes, which UCX completes as
 * truncated without writing anything (nor, by rendezvous, fetching it).
 */
static int
vcl_ucx_tp_recv(struct vcl_tp_ep *ep, uint64_t xid,
    const struct vcl_tp_dest *dest, vcl_tp_done_fn done, void *arg)
{
	struct vcl_ucx_tpep	*e = ep->priv;
	struct vcl_ucx_xfer	*x;
	static uint8_t		 none[1];
	void			*base = dest->base;
	size_t			 len = (size_t)dest->len;

	if (e->uep == NULL || vcl_ucx_ep_failed(e->uep)) {
		snprintf(ep->err, sizeof ep->err, "ucx: link closed");
		return (VCL_TP_ECLOSED);
	}
	if ((x = vcl_ucx_tp_xfer(e, xid, 1, done, arg)) == NULL)
		return (VCL_TP_ENOMEM);
	if (base == NULL && len > 0) {
		x->drop = 1;
		base = none;
		len = 0;
	}
	x->op = vcl_ucx_recv(e->uep, ((uint64_t)e->peer_ns << 32) ^ xid,
	    base, len, vcl_ucx_tp_done, x);
	if (x->op == NULL) {
		LIST_REMOVE(x, entry);
		free(x);
		snprintf(ep->err, sizeof ep->err, "ucx: receive: %s",
		    strerror(errno));
		if (errno == ENOBUFS)
			return (VCL_TP_EBUSY);
		return (errno == ECONNRESET ? VCL_TP_ECLOSED : VCL_TP_ENOMEM);
	}
	return (VCL_TP_OK);
}

/* Give up the posted receive of xid (its done runs from progress). */
static void
vcl_ucx_tp_cancel(struct vcl_tp_ep *ep, uint64_t xid)
{
	struct vcl_ucx_tpep	*e = ep->priv;
	struct vcl_ucx_xfer	*x;

	LIST_FOREACH(x, &e->xfers, entry) {
		if (x->recv && x->xid == xid) {
			vcl_ucx_cancel(x->op);
			break;
		}
	}
}

/* The instance's fd: the worker's event fd. Endpoints have none. */
static int
vcl_ucx_tp_evfd(struct vcl_tp *tp, struct vcl_tp_ep *ep, short *ev)
{
	*ev = VCL_TP_EV_READ;
	if (ep != NULL)
		return (-1);
	return (vcl_ucx_fd(tp->priv));
}

/* Fail what is pending on e (VCL_TP_ECLOSED) and let go of UCX's ep. */
static void
vcl_ucx_tp_shut(struct vcl_ucx_tpep *e)
{
	struct vcl_ucx_ep	*uep = e->uep;

	if (uep == NULL)
		return;
	e->closing = 1;
	e->uep = NULL;
	vcl_ucx_ep_close(uep);
}

/*
 * Progress: the instance (ep NULL) moves its worker and runs completions.
 * An endpoint looks at its control stream: once it is closed (the other
 * end vanished) what is pending fails, as it would by the host's close.
 */
static int
vcl_ucx_tp_progress(struct vcl_tp *tp, struct vcl_tp_ep *ep)
{
	struct vcl_ucx_tpep	*e;
	char			 c;
	ssize_t			 n;

	if (ep == NULL)
		return (vcl_ucx_progress(tp->priv));
	e = ep->priv;
	if (e->uep == NULL)
		return (0);
	if (ep->ctl != NULL && ep->ctl->fd >= 0) {
		n = recv(ep->ctl->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN &&
		    errno != EWOULDBLOCK && errno != EINTR)) {
			snprintf(ep->err, sizeof ep->err, "ucx: control "
			    "stream closed");
			vcl_ucx_tp_shut(e);
		}
	}
	return (0);
}

/* Close: what is pending completes with VCL_TP_ECLOSED; free. */
static void
vcl_ucx_tp_close(struct vcl_tp_ep *ep)
{
	struct vcl_ucx_tpep	*e = ep->priv;

	if (e == NULL)
		return;
	vcl_ucx_tp_shut(e);
	free(e);
	ep->priv = NULL;
}

const struct vcl_transport vcl_transport_ucx = {
	.name = "ucx",
	.caps = VCL_TP_PEER | VCL_TP_CLIENT | VCL_TP_NAMED,
	.probe = vcl_ucx_tp_probe,
	.open = vcl_ucx_tp_open,
	.fini = vcl_ucx_tp_fini,
	.address = vcl_ucx_tp_address,
	.connect = vcl_ucx_tp_connect,
	.send = vcl_ucx_tp_send,
	.recv = vcl_ucx_tp_recv,
	.cancel = vcl_ucx_tp_cancel,
	.evfd = vcl_ucx_tp_evfd,
	.progress = vcl_ucx_tp_progress,
	.close = vcl_ucx_tp_close,
};
