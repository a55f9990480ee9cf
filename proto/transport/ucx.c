/*
 * ucx.c - the UCX engine (vcl_ucx.h): a UCP context and worker with tagged
 * messages and wakeup, whose event fd the host's loop waits on; endpoints
 * to peers with peer-failure handling; sends from final memory and
 * receives posted into a chosen destination, each completing once through
 * a callback run from vcl_ucx_progress() (or the endpoint's close).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <ucp/api/ucp.h>

#include "vcl_log.h"
#include "vcl_ucx.h"

/*
 * One send or receive. It stays on its endpoint's list from post to
 * callback (done set when UCX finished it); UCX's request is freed in
 * UCX's own callback.
 */
struct vcl_ucx_op {
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep;
	void			*req;		/* UCX request while in flight */
	int			 recv;
	int			 uncounted;	/* a backend's own message */
	size_t			 want;		/* a receive's length */
	int			 status;
	int			 done;		/* UCX finished it */
	ucp_dt_iov_t		*iov;
	vcl_ucx_done_cb		 cb;
	void			*arg;
	TAILQ_ENTRY(vcl_ucx_op)	 entry;		/* ep's ops */
};
TAILQ_HEAD(vcl_ucx_ops, vcl_ucx_op);

struct vcl_ucx_ep {
	struct vcl_ucx		*u;
	ucp_ep_h		 h;		/* NULL: receive only */
	int			 failed;
	int			 fail_told;
	int			 ndone;		/* ops done, callback not run */
	vcl_ucx_fail_cb		 fail_cb;
	void			*fail_arg;
	struct vcl_ucx_ops	 ops;
	LIST_ENTRY(vcl_ucx_ep)	 entry;
};

/* An endpoint's close request, freed once UCX finishes it. */
struct vcl_ucx_closing {
	void			*req;
	LIST_ENTRY(vcl_ucx_closing) entry;
};

struct vcl_ucx {
	ucp_context_h		 ctx;
	ucp_worker_h		 worker;
	ucp_address_t		*addr;
	size_t			 addr_len;
	int			 efd;
	struct vcl_ucx_limits	 lim;
	size_t			 recvs;
	uint64_t		 recv_bytes;
	int			 pending;	/* callbacks or failures to run */
	LIST_HEAD(, vcl_ucx_ep)	 eps;
	LIST_HEAD(, vcl_ucx_closing) closing;
	char			 info[128];
};

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

/* Make the worker's fd readable, so that the loop calls progress soon. */
static void
vcl_ucx_kick(struct vcl_ucx *u)
{
	u->pending = 1;
	(void)ucp_worker_signal(u->worker);
}

/* An op finished in UCX: account it; its callback runs from progress. */
static void
vcl_ucx_finish(struct vcl_ucx_op *op, int status)
{
	struct vcl_ucx	*u = op->u;

	if (op->done)
		return;
	if (op->ep == NULL) {
		/* An orphan of a closed endpoint: its callback already ran. */
		free(op->iov);
		free(op);
		return;
	}
	if (status == -ECANCELED && op->ep->failed)
		status = -ECONNRESET;
	op->done = 1;
	op->status = status;
	op->req = NULL;
	if (op->recv) {
		if (!op->uncounted) {
			u->recvs--;
			u->recv_bytes -= op->want;
		}
	}
	op->ep->ndone++;
	u->pending = 1;
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
	ep->u->pending = 1;
}

/* Cancel an op's UCX request; it finishes through progress. */
static void
vcl_ucx_cancel_req(struct vcl_ucx_op *op)
{
	if (op->done || op->req == NULL)
		return;
	ucp_request_cancel(op->u->worker, op->req);
	vcl_ucx_kick(op->u);
}

/* Progress the worker until it has nothing at hand; free closed eps. */
static void
vcl_ucx_drive(struct vcl_ucx *u)
{
	struct vcl_ucx_closing	*c, *c1;

	while (ucp_worker_progress(u->worker) != 0)
		;
	for (c = LIST_FIRST(&u->closing); c != NULL; c = c1) {
		c1 = LIST_NEXT(c, entry);
		if (ucp_request_check_status(c->req) == UCS_INPROGRESS)
			continue;
		ucp_request_free(c->req);
		LIST_REMOVE(c, entry);
		free(c);
	}
}

/* Run the callbacks of an endpoint's finished ops, in post order. */
static void
vcl_ucx_run_ep(struct vcl_ucx_ep *ep)
{
	struct vcl_ucx_op	*op, *op1;

	for (op = TAILQ_FIRST(&ep->ops); op != NULL && ep->ndone > 0;
	    op = op1) {
		op1 = TAILQ_NEXT(op, entry);
		if (!op->done)
			continue;
		TAILQ_REMOVE(&ep->ops, op, entry);
		ep->ndone--;
		if (op->cb != NULL)
			op->cb(op->status, op->arg);
		free(op->iov);
		free(op);
		/* A callback may have posted more: start from the head. */
		op1 = TAILQ_FIRST(&ep->ops);
	}
}

/*
 * Progress: move what can move without blocking, re-arm the worker's fd,
 * tell owners of failed endpoints, run completions. 1: call again without
 * waiting on the fd (a callback left work at hand).
 */
int
vcl_ucx_progress(struct vcl_ucx *u)
{
	struct vcl_ucx_ep	*ep;
	struct vcl_ucx_op	*op;
	ucs_status_t		 st;

	for (;;) {
		vcl_ucx_drive(u);
		if ((st = ucp_worker_arm(u->worker)) == UCS_OK)
			break;
		if (st != UCS_ERR_BUSY) {
			vcl_log_error("ucp_worker_arm: %s",
			    ucs_status_string(st));
			break;
		}
	}
	if (!u->pending)
		return (0);
	u->pending = 0;
	/* Receives are the worker's: no peer failure ends them. Cancel. */
	LIST_FOREACH(ep, &u->eps, entry) {
		if (!ep->failed || ep->fail_told)
			continue;
		ep->fail_told = 1;
		TAILQ_FOREACH(op, &ep->ops, entry)
			if (op->recv)
				vcl_ucx_cancel_req(op);
		u->pending = 1;
	}
	vcl_ucx_drive(u);
	/*
	 * Callbacks may close endpoints (their own excepted) or post: walk
	 * again from the head after each endpoint that ran something.
	 */
again:
	LIST_FOREACH(ep, &u->eps, entry) {
		if (ep->fail_told == 1) {
			ep->fail_told = 2;
			if (ep->fail_cb != NULL) {
				ep->fail_cb(ep, ep->fail_arg);
				goto again;
			}
		}
		if (ep->ndone > 0) {
			vcl_ucx_run_ep(ep);
			goto again;
		}
	}
	return (u->pending);
}

/* The fd the host's loop waits on (readable: call vcl_ucx_progress). */
int
vcl_ucx_fd(struct vcl_ucx *u)
{
	return (u->efd);
}

/* Make the engine: a UCP context and worker, or NULL with why in err. */
struct vcl_ucx *
vcl_ucx_create(const struct vcl_ucx_limits *lim, char *err, size_t errlen)
{
	struct vcl_ucx		*u;
	ucp_config_t		*cfg = NULL;
	ucp_params_t		 p;
	ucp_worker_params_t	 wp;
	ucs_status_t		 st;
	unsigned		 maj, min, rel;
	const char		*what = "out of memory";

	if ((u = calloc(1, sizeof *u)) == NULL) {
		snprintf(err, errlen, "%s", what);
		return (NULL);
	}
	u->efd = -1;
	if (lim != NULL)
		u->lim = *lim;
	LIST_INIT(&u->eps);
	LIST_INIT(&u->closing);

	what = "ucp_config_read";
	if ((st = ucp_config_read(NULL, NULL, &cfg)) != UCS_OK)
		goto fail;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
	p.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
	p.name = "vcl";
	what = "ucp_init";
	st = ucp_init(&p, cfg, &u->ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK)
		goto fail;

	memset(&wp, 0, sizeof wp);
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	what = "ucp_worker_create";
	if ((st = ucp_worker_create(u->ctx, &wp, &u->worker)) != UCS_OK)
		goto fail;
	what = "ucp_worker_get_address";
	st = ucp_worker_get_address(u->worker, &u->addr, &u->addr_len);
	if (st != UCS_OK)
		goto fail;
	what = "ucp_worker_get_efd";
	if ((st = ucp_worker_get_efd(u->worker, &u->efd)) != UCS_OK)
		goto fail;
	ucp_get_version(&maj, &min, &rel);
	snprintf(u->info, sizeof u->info, "ucx %u.%u.%u, address %zu bytes",
	    maj, min, rel, u->addr_len);
	vcl_ucx_kick(u);
	return (u);
fail:
	snprintf(err, errlen, "%s: %s", what, ucs_status_string(st));
	vcl_ucx_free(u);
	return (NULL);
}

/*
 * Let the worker send what it still has queued (wireup replies to peers'
 * endpoints), a bounded time: UCX 1.13 asserts when destroying a worker
 * whose tcp lanes still hold a wireup reply.
 */
static void
vcl_ucx_flush(struct vcl_ucx *u)
{
	ucp_request_param_t	 p;
	struct timespec		 t0, t;
	void			*req;

	memset(&p, 0, sizeof p);
	req = ucp_worker_flush_nbx(u->worker, &p);
	if (!UCS_PTR_IS_PTR(req))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ucp_request_check_status(req) == UCS_INPROGRESS) {
		vcl_ucx_drive(u);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 1)
			break;
	}
	if (ucp_request_check_status(req) == UCS_INPROGRESS)
		ucp_request_cancel(u->worker, req);
	ucp_request_free(req);
}

/* Free the engine: close every endpoint (callbacks run now), then UCX. */
void
vcl_ucx_free(struct vcl_ucx *u)
{
	struct vcl_ucx_closing	*c;
	struct timespec		 t0, t;

	if (u == NULL)
		return;
	while (!LIST_EMPTY(&u->eps))
		vcl_ucx_ep_close(LIST_FIRST(&u->eps));
	if (u->worker != NULL) {
		/* Bounded: force-closes end without the peer. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!LIST_EMPTY(&u->closing)) {
			vcl_ucx_drive(u);
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 2) {
				vcl_log_warn("ucx: endpoints still closing");
				break;
			}
		}
		while ((c = LIST_FIRST(&u->closing)) != NULL) {
			LIST_REMOVE(c, entry);
			free(c);
		}
		vcl_ucx_flush(u);
	}
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
 * vcl_ucx_address, unpacked by UCX). addr NULL makes a receive-only
 * endpoint: a group of receives that fail together.
 */
struct vcl_ucx_ep *
vcl_ucx_ep_open(struct vcl_ucx *u, const void *addr, size_t len,
    vcl_ucx_fail_cb fail_cb, void *arg)
{
	struct vcl_ucx_ep	*ep;
	ucp_ep_params_t		 p;
	ucs_status_t		 st;

	if (addr != NULL && (len < 8 || len > 65536)) {
		errno = EINVAL;
		return (NULL);
	}
	/*
	 * UCX asserts (aborts) on an address of another format version (its
	 * first byte's low bits): refuse one that differs from ours. A cheap
	 * check, not a validation: UCX trusts the rest (security.md).
	 */
	if (addr != NULL && u->addr != NULL && u->addr_len > 0 &&
	    ((*(const uint8_t *)addr ^ *(const uint8_t *)u->addr) & 0xf) !=
	    0) {
		errno = EPROTO;
		return (NULL);
	}
	if ((ep = calloc(1, sizeof *ep)) == NULL)
		return (NULL);
	ep->u = u;
	ep->fail_cb = fail_cb;
	ep->fail_arg = arg;
	TAILQ_INIT(&ep->ops);
	if (addr != NULL) {
		/*
		 * Peer error handling: a peer that dies fails the endpoint
		 * instead of hanging it, and lets close force it. UCX 1.13
		 * then leaves out its shared-memory FIFOs (posix, sysv: no
		 * failure detection) and carries small messages on tcp;
		 * bulk goes by cross-memory attach (cma) on one host.
		 */
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
 * Close an endpoint: cancel its receives, force-close the UCX endpoint
 * (its sends end cancelled; a peer waiting on it sees it fail), wait a
 * bounded time for UCX to let go of their memory, and run every op's
 * callback (-ECANCELED unless it had finished) before returning.
 */
void
vcl_ucx_ep_close(struct vcl_ucx_ep *ep)
{
	struct vcl_ucx		*u = ep->u;
	struct vcl_ucx_op	*op;
	struct vcl_ucx_closing	*c;
	ucp_request_param_t	 p;
	struct timespec		 t0, t;
	void			*req;
	int			 busy;

	TAILQ_FOREACH(op, &ep->ops, entry)
		if (op->recv)
			vcl_ucx_cancel_req(op);
	if (ep->h != NULL) {
		memset(&p, 0, sizeof p);
		p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
		p.flags = UCP_EP_CLOSE_FLAG_FORCE;
		req = ucp_ep_close_nbx(ep->h, &p);
		ep->h = NULL;
		if (UCS_PTR_IS_PTR(req)) {
			if ((c = calloc(1, sizeof *c)) == NULL)
				ucp_request_free(req);
			else {
				c->req = req;
				LIST_INSERT_HEAD(&u->closing, c, entry);
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		busy = 0;
		TAILQ_FOREACH(op, &ep->ops, entry)
			busy |= !op->done;
		if (!busy)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 2) {
			vcl_log_error("ucx: operations outlive their endpoint");
			break;
		}
		vcl_ucx_drive(u);
	}
	while ((op = TAILQ_FIRST(&ep->ops)) != NULL) {
		TAILQ_REMOVE(&ep->ops, op, entry);
		if (!op->done) {
			/* UCX still holds it: an orphan, freed when it ends. */
			if (op->recv && !op->uncounted) {
				u->recvs--;
				u->recv_bytes -= op->want;
			}
			op->ep = NULL;
			if (op->cb != NULL)
				op->cb(-ECANCELED, op->arg);
			continue;
		}
		if (op->cb != NULL)
			op->cb(op->status, op->arg);
		free(op->iov);
		free(op);
	}
	LIST_REMOVE(ep, entry);
	free(ep);
}

/* A new op of an endpoint, last of its list. */
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
	struct vcl_ucx	*u = op->u;	/* finish may free an orphan op */

	if (r == NULL)
		vcl_ucx_finish(op, 0);
	else if (UCS_PTR_IS_ERR(r))
		vcl_ucx_finish(op, vcl_ucx_errno(UCS_PTR_STATUS(r)));
	else
		op->req = r;
	vcl_ucx_kick(u);
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

/* Post a receive of len bytes tagged tag; counted against the limits. */
static struct vcl_ucx_op *
vcl_ucx_recv_in(struct vcl_ucx_ep *ep, uint64_t tag, void *dst, size_t len,
    vcl_ucx_done_cb cb, void *arg, int counted)
{
	struct vcl_ucx		*u = ep->u;
	struct vcl_ucx_op	*op;
	ucp_request_param_t	 p;
	ucs_status_ptr_t	 r;

	if (ep->failed) {
		errno = ECONNRESET;
		return (NULL);
	}
	if (counted && ((u->lim.max_recvs != 0 &&
	    u->recvs >= u->lim.max_recvs) || (u->lim.max_recv_bytes != 0 &&
	    len > u->lim.max_recv_bytes - u->recv_bytes))) {
		errno = ENOBUFS;
		return (NULL);
	}
	if ((op = vcl_ucx_op_new(ep, cb, arg)) == NULL)
		return (NULL);
	op->recv = 1;
	op->want = len;
	op->uncounted = !counted;
	if (counted) {
		u->recvs++;
		u->recv_bytes += len;
	}
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
 * Post a receive of exactly len bytes tagged tag into dst, in ep's group
 * (failed and closed with it). NULL: refused at once (errno ENOBUFS past
 * the engine's limits), no callback.
 */
struct vcl_ucx_op *
vcl_ucx_recv(struct vcl_ucx_ep *ep, uint64_t tag, void *dst, size_t len,
    vcl_ucx_done_cb cb, void *arg)
{
	return (vcl_ucx_recv_in(ep, tag, dst, len, cb, arg, 1));
}

/*
 * vcl_ucx_recv for a backend's own small messages: outside the limits on
 * receives (those count the host's).
 */
struct vcl_ucx_op *
vcl_ucx_recv_own(struct vcl_ucx_ep *ep, uint64_t tag, void *dst, size_t len,
    vcl_ucx_done_cb cb, void *arg)
{
	return (vcl_ucx_recv_in(ep, tag, dst, len, cb, arg, 0));
}

/* Make the loop call progress soon (work the host left at hand). */
void
vcl_ucx_wake(struct vcl_ucx *u)
{
	vcl_ucx_kick(u);
}

/*
 * Cancel an op not yet completed: a receive not yet matched ends with
 * -ECANCELED; one whose bytes already flow, and a send, finish as they
 * would. The callback still comes, from progress.
 */
void
vcl_ucx_cancel(struct vcl_ucx_op *op)
{
	vcl_ucx_cancel_req(op);
}
