/*
 * ucx.c - the UCX engine (vcl_ucx.h): a UCP context and worker with tagged
 * messages and wakeup, the worker's event fd in the libevent loop,
 * endpoints to peers with peer-failure handling, sends from final memory
 * and receives posted into a chosen destination, each completing once
 * through a callback run from the loop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>
#include <ucp/api/ucp.h>

#include "vcl_log.h"
#include "vcl_ucx.h"

struct vcl_ucx_op {
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep;		/* NULL once its ep closed */
	void			*req;		/* UCX request while in flight */
	int			 recv;
	size_t			 want;		/* a receive's length */
	int			 status;
	int			 done;
	ucp_dt_iov_t		*iov;
	vcl_ucx_done_cb		 cb;
	void			*arg;
	TAILQ_ENTRY(vcl_ucx_op)	 entry;		/* ep's ops, then u's done */
};
TAILQ_HEAD(vcl_ucx_ops, vcl_ucx_op);

struct vcl_ucx_ep {
	struct vcl_ucx		*u;
	ucp_ep_h		 h;		/* NULL: receive only */
	int			 failed;
	int			 fail_told;
	vcl_ucx_fail_cb		 fail_cb;
	void			*fail_arg;
	struct vcl_ucx_ops	 ops;		/* in flight */
	LIST_ENTRY(vcl_ucx_ep)	 entry;
};

/* An endpoint's close request, freed once UCX finishes it. */
struct vcl_ucx_closing {
	void			*req;
	LIST_ENTRY(vcl_ucx_closing) entry;
};

struct vcl_ucx {
	struct event_base	*base;
	ucp_context_h		 ctx;
	ucp_worker_h		 worker;
	ucp_address_t		*addr;
	size_t			 addr_len;
	int			 efd;
	struct event		*ev_fd;		/* worker events */
	struct event		*ev_done;	/* run completions */
	struct vcl_ucx_limits	 lim;
	size_t			 recvs;
	uint64_t		 recv_bytes;
	struct vcl_ucx_ops	 done;
	LIST_HEAD(, vcl_ucx_ep)	 eps;
	LIST_HEAD(, vcl_ucx_closing) closing;
	char			 info[128];
};

static void	vcl_ucx_run_done(struct vcl_ucx *);

/* Map a UCX status to the engine's negative errno. */
static int
vcl_ucx_errno(ucs_status_t st)
{
	switch (st) {
	case UCS_OK:
		return (0);
	case UCS_ERR_CANCELED:
		return (-ECANCELED);
	case UCS_ERR_MESSAGE_TRUNCATED:
		return (-EMSGSIZE);
	case UCS_ERR_CONNECTION_RESET:
	case UCS_ERR_ENDPOINT_TIMEOUT:
	case UCS_ERR_UNREACHABLE:
	case UCS_ERR_REJECTED:
		return (-ECONNRESET);
	default:
		return (-EIO);
	}
}

/* Make the loop run progress and completions soon. */
static void
vcl_ucx_kick(struct vcl_ucx *u)
{
	event_active(u->ev_fd, EV_READ, 0);
}

/* An op finished: account it, queue its callback for the loop. */
static void
vcl_ucx_finish(struct vcl_ucx_op *op, int status)
{
	struct vcl_ucx	*u = op->u;

	if (op->done)
		return;
	op->done = 1;
	if (status == -ECANCELED && op->ep != NULL && op->ep->failed)
		status = -ECONNRESET;
	op->status = status;
	op->req = NULL;
	if (op->recv) {
		u->recvs--;
		u->recv_bytes -= op->want;
	}
	if (op->ep != NULL)
		TAILQ_REMOVE(&op->ep->ops, op, entry);
	op->ep = NULL;
	TAILQ_INSERT_TAIL(&u->done, op, entry);
	event_active(u->ev_done, 0, 0);
}

/* UCX: a send completed (called from ucp_worker_progress). */
static void
vcl_ucx_send_cb(void *req, ucs_status_t st, void *arg)
{
	struct vcl_ucx_op	*op = arg;

	vcl_ucx_finish(op, vcl_ucx_errno(st));
	ucp_request_free(req);
}

/* UCX: a receive completed (called from ucp_worker_progress). */
static void
vcl_ucx_recv_cb(void *req, ucs_status_t st, const ucp_tag_recv_info_t *info,
    void *arg)
{
	struct vcl_ucx_op	*op = arg;
	int			 status;

	status = vcl_ucx_errno(st);
	if (status == 0 && info->length != op->want)
		status = -EPROTO;
	vcl_ucx_finish(op, status);
	ucp_request_free(req);
}

/* UCX: the peer of an endpoint failed (called from progress). */
static void
vcl_ucx_err_cb(void *arg, ucp_ep_h h, ucs_status_t st)
{
	struct vcl_ucx_ep	*ep = arg;

	vcl_log_debug("ucx endpoint failed: %s", ucs_status_string(st));
	ep->failed = 1;
	event_active(ep->u->ev_done, 0, 0);
}

/* Progress the worker until it has nothing more, then re-arm its fd. */
void
vcl_ucx_progress(struct vcl_ucx *u)
{
	struct vcl_ucx_closing	*c, *c1;
	ucs_status_t		 st;

	for (;;) {
		while (ucp_worker_progress(u->worker) != 0)
			;
		if ((st = ucp_worker_arm(u->worker)) == UCS_OK)
			break;
		if (st != UCS_ERR_BUSY) {
			vcl_log_error("ucp_worker_arm: %s",
			    ucs_status_string(st));
			break;
		}
	}
	for (c = LIST_FIRST(&u->closing); c != NULL; c = c1) {
		c1 = LIST_NEXT(c, entry);
		if (ucp_request_check_status(c->req) == UCS_INPROGRESS)
			continue;
		ucp_request_free(c->req);
		LIST_REMOVE(c, entry);
		free(c);
	}
}

/* Loop: the worker's fd fired (or a kick). */
static void
vcl_ucx_fd_cb(evutil_socket_t fd, short what, void *arg)
{
	vcl_ucx_progress(arg);
}

/* Loop: run queued completions and tell failed endpoints' owners. */
static void
vcl_ucx_done_ev(evutil_socket_t fd, short what, void *arg)
{
	vcl_ucx_run_done(arg);
}

/* Cancel an op's UCX request; its callback comes through progress. */
static void
vcl_ucx_cancel_req(struct vcl_ucx_op *op)
{
	if (op->done || op->req == NULL)
		return;
	ucp_request_cancel(op->u->worker, op->req);
	vcl_ucx_kick(op->u);
}

/* Run queued completions; fail the ops of endpoints whose peer failed. */
static void
vcl_ucx_run_done(struct vcl_ucx *u)
{
	struct vcl_ucx_op	*op;
	struct vcl_ucx_ep	*ep;

	LIST_FOREACH(ep, &u->eps, entry) {
		if (!ep->failed || ep->fail_told)
			continue;
		ep->fail_told = 1;
		/* Receives are the worker's: no peer failure ends them. */
		TAILQ_FOREACH(op, &ep->ops, entry) {
			if (op->recv)
				vcl_ucx_cancel_req(op);
		}
		if (ep->fail_cb != NULL)
			ep->fail_cb(ep, ep->fail_arg);
		break;	/* the callback may have closed others: come back */
	}
	if (ep != NULL)
		event_active(u->ev_done, 0, 0);
	while ((op = TAILQ_FIRST(&u->done)) != NULL) {
		TAILQ_REMOVE(&u->done, op, entry);
		if (op->cb != NULL)
			op->cb(op->status, op->arg);
		free(op->iov);
		free(op);
	}
}

/* Make the engine: a UCP context and worker on this loop, or NULL. */
struct vcl_ucx *
vcl_ucx_create(struct event_base *base, const struct vcl_ucx_limits *lim,
    char *err, size_t errlen)
{
	struct vcl_ucx		*u;
	ucp_config_t		*cfg = NULL;
	ucp_params_t		 p;
	ucp_worker_params_t	 wp;
	ucs_status_t		 st;
	const char		*what = "out of memory";
	unsigned		 maj, min, rel;

	if ((u = calloc(1, sizeof *u)) == NULL)
		goto fail;
	u->base = base;
	u->efd = -1;
	if (lim != NULL)
		u->lim = *lim;
	TAILQ_INIT(&u->done);
	LIST_INIT(&u->eps);
	LIST_INIT(&u->closing);

	what = "ucp_config_read";
	if ((st = ucp_config_read(NULL, NULL, &cfg)) != UCS_OK)
		goto ucs;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
	p.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
	p.name = "vcl";
	what = "ucp_init";
	st = ucp_init(&p, cfg, &u->ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK)
		goto ucs;

	memset(&wp, 0, sizeof wp);
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	what = "ucp_worker_create";
	if ((st = ucp_worker_create(u->ctx, &wp, &u->worker)) != UCS_OK)
		goto ucs;
	what = "ucp_worker_get_address";
	st = ucp_worker_get_address(u->worker, &u->addr, &u->addr_len);
	if (st != UCS_OK)
		goto ucs;
	what = "ucp_worker_get_efd";
	if ((st = ucp_worker_get_efd(u->worker, &u->efd)) != UCS_OK)
		goto ucs;

	what = "event_new";
	u->ev_fd = event_new(base, u->efd, EV_READ|EV_PERSIST, vcl_ucx_fd_cb,
	    u);
	u->ev_done = event_new(base, -1, 0, vcl_ucx_done_ev, u);
	if (u->ev_fd == NULL || u->ev_done == NULL ||
	    event_add(u->ev_fd, NULL) != 0)
		goto fail;
	ucp_get_version(&maj, &min, &rel);
	snprintf(u->info, sizeof u->info, "ucx %u.%u.%u, address %zu bytes",
	    maj, min, rel, u->addr_len);
	vcl_ucx_kick(u);
	return (u);
ucs:
	snprintf(err, errlen, "%s: %s", what, ucs_status_string(st));
	vcl_ucx_free(u);
	return (NULL);
fail:
	snprintf(err, errlen, "%s", what);
	vcl_ucx_free(u);
	return (NULL);
}

/* Free the engine: fail what is in flight (callbacks run now), close all. */
void
vcl_ucx_free(struct vcl_ucx *u)
{
	struct vcl_ucx_ep	*ep;
	struct timespec		 t0, t;

	if (u == NULL)
		return;
	while ((ep = LIST_FIRST(&u->eps)) != NULL)
		vcl_ucx_ep_close(ep);
	if (u->worker != NULL) {
		/* Bounded: cancelled requests and force-closes end quickly. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!LIST_EMPTY(&u->closing)) {
			vcl_ucx_progress(u);
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 2) {
				vcl_log_warn("ucx: endpoints still closing");
				break;
			}
		}
	}
	vcl_ucx_run_done(u);
	if (u->ev_fd != NULL)
		event_free(u->ev_fd);
	if (u->ev_done != NULL)
		event_free(u->ev_done);
	if (u->addr != NULL)
		ucp_worker_release_address(u->worker, u->addr);
	if (u->worker != NULL)
		ucp_worker_destroy(u->worker);
	if (u->ctx != NULL)
		ucp_cleanup(u->ctx);
	free(u);
}

/* The engine's worker address: opaque bytes for the other side. */
int
vcl_ucx_address(struct vcl_ucx *u, const void **addr, size_t *len)
{
	*addr = u->addr;
	*len = u->addr_len;
	return (0);
}

/* A line for logs: UCX's version and the address size. */
const char *
vcl_ucx_info(struct vcl_ucx *u)
{
	return (u->info);
}

/*
 * Open an endpoint to the worker at addr (bytes from the other side's
 * vcl_ucx_address; len is checked by UCX's own unpacking). addr NULL makes
 * a receive-only endpoint: a group of receives to fail together.
 */
struct vcl_ucx_ep *
vcl_ucx_ep_open(struct vcl_ucx *u, const void *addr, size_t len,
    vcl_ucx_fail_cb fail_cb, void *arg)
{
	struct vcl_ucx_ep	*ep;
	ucp_ep_params_t		 p;
	ucs_status_t		 st;

	if ((ep = calloc(1, sizeof *ep)) == NULL)
		return (NULL);
	ep->u = u;
	ep->fail_cb = fail_cb;
	ep->fail_arg = arg;
	TAILQ_INIT(&ep->ops);
	if (addr != NULL) {
		if (len == 0 || len > 65536) {
			free(ep);
			errno = EINVAL;
			return (NULL);
		}
		memset(&p, 0, sizeof p);
		p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
		    UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
		    UCP_EP_PARAM_FIELD_ERR_HANDLER;
		p.address = addr;
		p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
		p.err_handler.cb = vcl_ucx_err_cb;
		p.err_handler.arg = ep;
		if ((st = ucp_ep_create(u->worker, &p, &ep->h)) != UCS_OK) {
			vcl_log_warn("ucp_ep_create: %s",
			    ucs_status_string(st));
			free(ep);
			errno = ECONNREFUSED;
			return (NULL);
		}
	}
	LIST_INSERT_HEAD(&u->eps, ep, entry);
	vcl_ucx_kick(u);
	return (ep);
}

/* Whether the endpoint's peer failed. */
int
vcl_ucx_ep_failed(struct vcl_ucx_ep *ep)
{
	return (ep->failed);
}

/*
 * Close an endpoint: its ops in flight are cancelled (their callbacks come
 * later from the loop, with -ECANCELED unless they had finished) and the
 * UCX endpoint is force-closed (a peer waiting on it sees it fail).
 */
void
vcl_ucx_ep_close(struct vcl_ucx_ep *ep)
{
	struct vcl_ucx		*u = ep->u;
	struct vcl_ucx_op	*op;
	struct vcl_ucx_closing	*c;
	ucp_request_param_t	 p;
	void			*req;

	while ((op = TAILQ_FIRST(&ep->ops)) != NULL) {
		TAILQ_REMOVE(&ep->ops, op, entry);
		op->ep = NULL;
		if (op->recv)
			vcl_ucx_cancel_req(op);
	}
	if (ep->h != NULL) {
		/* Force: outstanding sends complete cancelled through UCX. */
		memset(&p, 0, sizeof p);
		p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
		p.flags = UCP_EP_CLOSE_FLAG_FORCE;
		req = ucp_ep_close_nbx(ep->h, &p);
		if (UCS_PTR_IS_PTR(req)) {
			if ((c = calloc(1, sizeof *c)) == NULL) {
				/* Leave it to UCX's cleanup of the worker. */
				ucp_request_free(req);
			} else {
				c->req = req;
				LIST_INSERT_HEAD(&u->closing, c, entry);
			}
		}
	}
	LIST_REMOVE(ep, entry);
	free(ep);
	vcl_ucx_kick(u);
}

/* A new op of an endpoint. */
static struct vcl_ucx_op *
vcl_ucx_op_new(struct vcl_ucx_ep *ep, vcl_ucx_done_cb cb, void *arg)
{
	struct vcl_ucx_op	*op;

	if ((op = calloc(1, sizeof *op)) == NULL)
		return (NULL);
	op->u = ep->u;
	op->ep = ep;
	op->cb = cb;
	op->arg = arg;
	TAILQ_INSERT_TAIL(&ep->ops, op, entry);
	return (op);
}

/* Take UCX's answer to a posted op: in flight, done at once, or failed. */
static void
vcl_ucx_posted(struct vcl_ucx_op *op, ucs_status_ptr_t r)
{
	if (r == NULL)
		vcl_ucx_finish(op, 0);
	else if (UCS_PTR_IS_ERR(r))
		vcl_ucx_finish(op, vcl_ucx_errno(UCS_PTR_STATUS(r)));
	else
		op->req = r;
	vcl_ucx_kick(op->u);
}

/*
 * Send iov (final memory, left untouched until the callback) as one
 * message tagged tag. NULL: refused at once (errno), no callback.
 */
struct vcl_ucx_op *
vcl_ucx_send(struct vcl_ucx_ep *ep, uint64_t tag, const struct iovec *iov,
    int iovcnt, vcl_ucx_done_cb cb, void *arg)
{
	struct vcl_ucx_op	*op;
	ucp_request_param_t	 p;
	ucs_status_ptr_t	 r;
	int			 i;

	if (ep->h == NULL || iovcnt <= 0 || iovcnt > 64) {
		errno = EINVAL;
		return (NULL);
	}
	if (ep->failed) {
		errno = ECONNRESET;
		return (NULL);
	}
	if ((op = vcl_ucx_op_new(ep, cb, arg)) == NULL)
		return (NULL);
	memset(&p, 0, sizeof p);
	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
	    UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.send = vcl_ucx_send_cb;
	p.user_data = op;
	if (iovcnt == 1) {
		r = ucp_tag_send_nbx(ep->h, iov[0].iov_base, iov[0].iov_len,
		    tag, &p);
	} else {
		if ((op->iov = calloc((size_t)iovcnt, sizeof *op->iov)) ==
		    NULL) {
			TAILQ_REMOVE(&ep->ops, op, entry);
			free(op);
			return (NULL);
		}
		for (i = 0; i < iovcnt; i++) {
			op->iov[i].buffer = iov[i].iov_base;
			op->iov[i].length = iov[i].iov_len;
		}
		p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
		p.datatype = ucp_dt_make_iov();
		r = ucp_tag_send_nbx(ep->h, op->iov, (size_t)iovcnt, tag, &p);
	}
	vcl_ucx_posted(op, r);
	return (op);
}

/*
 * Post a receive of exactly len bytes tagged tag into dst, in ep's group
 * (failed with it). NULL: refused at once (errno ENOBUFS past the
 * engine's limits), no callback.
 */
struct vcl_ucx_op *
vcl_ucx_recv(struct vcl_ucx_ep *ep, uint64_t tag, void *dst, size_t len,
    vcl_ucx_done_cb cb, void *arg)
{
	struct vcl_ucx		*u = ep->u;
	struct vcl_ucx_op	*op;
	ucp_request_param_t	 p;
	ucs_status_ptr_t	 r;

	if (ep->failed) {
		errno = ECONNRESET;
		return (NULL);
	}
	if ((u->lim.max_recvs != 0 && u->recvs >= u->lim.max_recvs) ||
	    (u->lim.max_recv_bytes != 0 &&
	    len > u->lim.max_recv_bytes - u->recv_bytes)) {
		errno = ENOBUFS;
		return (NULL);
	}
	if ((op = vcl_ucx_op_new(ep, cb, arg)) == NULL)
		return (NULL);
	op->recv = 1;
	op->want = len;
	u->recvs++;
	u->recv_bytes += len;
	memset(&p, 0, sizeof p);
	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
	    UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.recv = vcl_ucx_recv_cb;
	p.user_data = op;
	r = ucp_tag_recv_nbx(u->worker, dst, len, tag, UINT64_MAX, &p);
	vcl_ucx_posted(op, r);
	return (op);
}

/*
 * Cancel an op not yet completed: a receive not yet matched ends with
 * -ECANCELED; one whose bytes already flow, and a send, finish as they
 * would. The callback still comes, from the loop.
 */
void
vcl_ucx_cancel(struct vcl_ucx_op *op)
{
	if (op->done)
		return;
	vcl_ucx_cancel_req(op);
}
