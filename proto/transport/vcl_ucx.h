/*
 * vcl_ucx.h - the UCX engine: bulk bytes between processes by UCX tagged
 * messages (shared memory or cross-memory attach on one host, RDMA verbs
 * across hosts where a fabric exists, else TCP), driven by a libevent loop.
 *
 * One engine per process (a UCP context and one worker). Its address is
 * opaque bytes that travel on the control link; the other side opens an
 * endpoint to it. A bulk is one tagged message: the sender sends from its
 * final memory, the receiver posts a receive of exactly that length into
 * the destination it chose, matched by the 64-bit tag both sides derive
 * from the control frame (a transfer id). Either may come first.
 *
 * The host waits on vcl_ucx_fd() (readable) and then calls
 * vcl_ucx_progress(), which moves what it can without blocking, re-arms
 * the fd and runs completions.
 *
 * Completions: every send and receive that was accepted (returned an op)
 * calls its callback exactly once, from vcl_ucx_progress() or from
 * vcl_ucx_ep_close() of its endpoint, never from inside vcl_ucx_send()
 * or vcl_ucx_recv(); its memory must stay valid until then. Status 0, or a
 * negative errno: -ECONNRESET (the peer vanished), -EMSGSIZE (the message
 * is longer than the receive), -EPROTO (shorter), -ECANCELED (cancelled or
 * its endpoint closed), -EIO (anything else).
 */
#ifndef VCL_UCX_H
#define VCL_UCX_H

#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

struct vcl_ucx;
struct vcl_ucx_ep;
struct vcl_ucx_op;

/* A send or receive completed (status 0 or a negative errno). */
typedef void	(*vcl_ucx_done_cb)(int status, void *arg);
/* The peer of an endpoint vanished: its operations fail; close it. */
typedef void	(*vcl_ucx_fail_cb)(struct vcl_ucx_ep *, void *arg);

/* What one engine accepts at once (0: no limit). */
struct vcl_ucx_limits {
	size_t		max_recvs;	/* receives posted and not completed */
	uint64_t	max_recv_bytes;	/* their bytes together */
};

struct vcl_ucx	*vcl_ucx_create(const struct vcl_ucx_limits *, char *, size_t);
void		 vcl_ucx_free(struct vcl_ucx *);
int		 vcl_ucx_address(struct vcl_ucx *, const void **, size_t *);
const char	*vcl_ucx_info(struct vcl_ucx *);

struct vcl_ucx_ep *vcl_ucx_ep_open(struct vcl_ucx *, const void *, size_t,
		     vcl_ucx_fail_cb, void *);
void		 vcl_ucx_ep_close(struct vcl_ucx_ep *);
int		 vcl_ucx_ep_failed(struct vcl_ucx_ep *);

struct vcl_ucx_op *vcl_ucx_send(struct vcl_ucx_ep *, uint64_t,
		     const struct iovec *, int, vcl_ucx_done_cb, void *);
struct vcl_ucx_op *vcl_ucx_recv(struct vcl_ucx_ep *, uint64_t, void *,
		     size_t, vcl_ucx_done_cb, void *);
struct vcl_ucx_op *vcl_ucx_recv_own(struct vcl_ucx_ep *, uint64_t, void *,
		     size_t, vcl_ucx_done_cb, void *);
void		 vcl_ucx_cancel(struct vcl_ucx_op *);
void		 vcl_ucx_wake(struct vcl_ucx *);
int		 vcl_ucx_fd(struct vcl_ucx *);
int		 vcl_ucx_progress(struct vcl_ucx *);

#endif /* VCL_UCX_H */
