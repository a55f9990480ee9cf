/*
 * vcl_conn.c - one connection to a vclserver: handshake, batched sends,
 * synchronous calls, and the reading of replies (bulk bytes straight into
 * their destination) and event notifications, by whichever thread holds
 * the node's reading token: a caller waiting for its reply, or the
 * receiver thread when no caller reads.
 */
#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vcl_auth.h"
#include "vcl_conn.h"
#include "vcl_event.h"
#include "vcl_frame.h"
#include "vcl_info.h"
#include "vcl_io.h"
#include "vcl_log.h"
#include "vcl_object.h"
#include "vcl_platform.h"
#include "vcl_tls.h"
#include "vcl_transport.h"

#define VCL_SEND_BATCH		(64u << 10)	/* flush async calls past this */
#define VCL_CONNECT_TIMEOUT	5000		/* ms, VCL_CONNECT_TIMEOUT_MS */
#define VCL_CALL_TIMEOUT	300000		/* ms, VCL_CALL_TIMEOUT_MS */
#define VCL_NODE_MAX_DEVICES	1024		/* in one Welcome */

__thread int	vcl_in_rx;	/* set on receiver threads */

static const struct vcl_frame_limits vcl_client_limits = {
	VCL_FRAME_DEFAULT_MAX_MSG, VCL_FRAME_DEFAULT_MAX_BULK
};

/* Microseconds on the monotonic clock. */
static long long
vcl_conn_now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

/* Milliseconds on the monotonic clock. */
static long long
vcl_conn_now(void)
{
	return (vcl_conn_now_us() / 1000);
}


#define VCL_SPIN_US		50	/* a waiter's spin, where it pays */
#define VCL_SPIN_MAX_US		10000
#define VCL_SPIN_MIN_CPUS	4	/* fewer: the spin takes the server's */

/*
 * How long a waiter polls for its reply before it sleeps: VCL_SPIN_US
 * from the environment (0 turns it off), else VCL_SPIN_US on a host of
 * VCL_SPIN_MIN_CPUS online CPUs or more and none on a smaller one, where
 * a spinning application would take the CPU its local server and runtime
 * need to answer.
 */
static int
vcl_conn_spin_default(void)
{
	const char	*e = getenv("VCL_SPIN_US");
	char		*end;
	long		 v;

	if (e != NULL && *e != '\0') {
		v = strtol(e, &end, 10);
		if (*end == '\0' && v >= 0 && v <= VCL_SPIN_MAX_US)
			return ((int)v);
		vcl_log_warn("VCL_SPIN_US=%s: want 0 to %d; using the "
		    "default", e, VCL_SPIN_MAX_US);
	}
	return (sysconf(_SC_NPROCESSORS_ONLN) >= VCL_SPIN_MIN_CPUS ?
	    VCL_SPIN_US : 0);
}

/* Why a read failed when the other end closed (compared by address). */
static const char	vcl_conn_eof[] = "connection closed";

/* Sleep ms milliseconds (a connect's back-off). */
static void
vcl_conn_sleep_ms(long long ms)
{
	struct timespec	ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void	vcl_node_ping(struct vcl_node *);
static void	vcl_node_stuck(struct vcl_node *, int);
static void	vcl_node_broken(struct vcl_node *, int);

/* How often socket waits wake to check a node's silence. */
static int
vcl_conn_tick_ms(const struct vcl_node *n)
{
	int	t = n->timeout_ms / 8;

	return (t < 20 ? 20 : t > 5000 ? 5000 : t);
}

/* The keepalive asked of the server: a quarter of the call timeout. */
static int
vcl_conn_keepalive_ms(const struct vcl_node *n)
{
	int	k = n->timeout_ms / 4;

	return (k < (int)VCL_KEEPALIVE_MIN_MS ? (int)VCL_KEEPALIVE_MIN_MS :
	    k > (int)VCL_KEEPALIVE_MAX_MS ? (int)VCL_KEEPALIVE_MAX_MS : k);
}

/*
 * A socket wait ran out (SO_RCVTIMEO/SO_SNDTIMEO tick). Returns 0 to keep
 * waiting, -1 when the node is to be treated as lost: during the handshake
 * at once, after it when nothing moved for timeout_ms while something was
 * outstanding. The receiver (rx) also pings a quiet node here.
 */
static int
vcl_conn_tick(struct vcl_node *n, int rx)
{
	long long	now = vcl_conn_now(), quiet;
	int		busy;

	if (!n->live || n->timeout_ms == 0)
		return (-1);
	pthread_mutex_lock(&n->lock);
	busy = n->pending != NULL || n->nwatch > 0 ||
	    atomic_load(&n->sending) > 0;
	pthread_mutex_unlock(&n->lock);
	if (!busy) {
		/* Idle time is no silence: nobody waits for anything. */
		atomic_store(&n->last_io, now);
		return (0);
	}
	quiet = now - atomic_load(&n->last_io);
	if (quiet >= n->timeout_ms)
		return (-1);
	if (rx && quiet >= n->timeout_ms / 3)
		vcl_node_ping(n);
	return (0);
}

/*
 * Read exactly len bytes from the node, waiting for them (the holder of
 * the reading token only; a TLS layer slots in here). Returns 0, or -1
 * with *why set.
 */
static int
vcl_conn_recv(struct vcl_node *n, void *buf, size_t len, const char **why)
{
	char	*p = buf;
	ssize_t	 r;

	while (len > 0) {
		/* One call for a whole bulk: the kernel waits, not a loop here. */
		if (n->link.ssl != NULL)
			r = vcl_link_recv_some(&n->link, p, len);
		else
			r = recv(n->fd, p, len, MSG_WAITALL);
		if (r > 0) {
			atomic_store(&n->last_io, vcl_conn_now());
			p += r;
			len -= (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (vcl_conn_tick(n, 1) == 0)
				continue;
			*why = n->live ? "no answer within VCL_CALL_TIMEOUT_MS" :
			    "timed out";
			return (-1);
		}
		*why = r == 0 ? vcl_conn_eof : strerror(errno);
		return (-1);
	}
	return (0);
}

/* Bytes in cnt iovecs. */
static size_t
vcl_conn_iov_len(const struct iovec *iov, int cnt)
{
	size_t	len = 0;

	while (cnt-- > 0)
		len += (iov++)->iov_len;
	return (len);
}

/*
 * Write every byte of the iovecs (which it consumes). The one place the
 * client writes its socket (a TLS layer slots in here): MSG_NOSIGNAL, so a
 * closed connection is an error, never SIGPIPE in the application. Returns
 * 0, or -1 with errno set.
 */
static int
vcl_conn_send(struct vcl_node *n, struct iovec *iov, int cnt)
{
	struct msghdr	mh;
	ssize_t		r;
	int		rc = 0, stuck = 0;

	atomic_fetch_add(&n->sending, 1);
	while (cnt > 0) {
		if (iov->iov_len == 0) {
			iov++;
			cnt--;
			continue;
		}
		memset(&mh, 0, sizeof mh);
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)(cnt > IOV_MAX ? IOV_MAX : cnt);
		if (!stuck) {
			/*
			 * What fits goes at once. A write that has to wait
			 * wakes the receiver first: the stream must be read
			 * meanwhile, for the end of a server that will never
			 * take the rest, or replies that would stop it.
			 */
			r = vcl_link_send_now(&n->link, iov,
			    (int)mh.msg_iovlen);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				r = 0;
			if (r >= 0 && (size_t)r < vcl_conn_iov_len(iov, cnt)) {
				stuck = 1;
				vcl_node_stuck(n, 1);
			}
		} else if (n->link.ssl != NULL)
			r = vcl_link_send_some(&n->link, iov, (int)mh.msg_iovlen);
		else
			r = sendmsg(n->fd, &mh, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (vcl_conn_tick(n, 0) == 0)
				continue;
			errno = ETIMEDOUT;
		}
		if (r < 0) {
			rc = -1;
			break;
		}
		if (r > 0)
			atomic_store(&n->last_io, vcl_conn_now());
		vcl_io_advance(&iov, &cnt, (size_t)r);
	}
	if (stuck)
		vcl_node_stuck(n, 0);
	atomic_fetch_sub(&n->sending, 1);
	return (rc);
}

/*
 * Read one frame head and its message into *tcp. With try, return 1 at once
 * when no byte of it is ready (the caller does not wait for one); once a
 * byte is in, the rest is waited for. Returns 0, 1, or -1 with *why set.
 */
static int
vcl_conn_read_frame(struct vcl_node *n, struct vcl_frame_hdr *hdr, int try,
    Vcl__ToClient **tcp, const char **why)
{
	uint8_t		 head[VCL_FRAME_HDR_LEN], *buf;
	size_t		 got = 0;
	ssize_t		 r;

	*tcp = NULL;
	while (try) {
		if ((r = vcl_link_recv_now(&n->link, head, sizeof head)) > 0) {
			atomic_store(&n->last_io, vcl_conn_now());
			got = (size_t)r;
			break;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return (1);
		*why = r == 0 ? vcl_conn_eof : strerror(errno);
		return (-1);
	}
	if (vcl_conn_recv(n, head + got, sizeof head - got, why) != 0)
		return (-1);
	if (vcl_frame_decode(head, &vcl_client_limits, hdr, why) != 0)
		return (-1);
	if ((buf = malloc(hdr->msg_len)) == NULL) {
		*why = "out of memory";
		return (-1);
	}
	if (vcl_conn_recv(n, buf, hdr->msg_len, why) != 0) {
		free(buf);
		return (-1);
	}
	*tcp = vcl__to_client__unpack(NULL, hdr->msg_len, buf);
	free(buf);
	if (*tcp == NULL) {
		*why = "malformed message from server";
		return (-1);
	}
	return (0);
}

/* Read one frame head and its message. Returns the message or NULL. */
static Vcl__ToClient *
vcl_conn_read_msg(struct vcl_node *n, struct vcl_frame_hdr *hdr,
    const char **why)
{
	Vcl__ToClient	*tc;

	if (vcl_conn_read_frame(n, hdr, 0, &tc, why) != 0)
		return (NULL);
	return (tc);
}

/* Read and drop n bulk bytes nobody asked for. */
static int
vcl_conn_skip(struct vcl_node *n, uint64_t len, const char **why)
{
	uint8_t	buf[8192];

	while (len > 0) {
		size_t	k = len < sizeof buf ? (size_t)len : sizeof buf;

		if (vcl_conn_recv(n, buf, k, why) != 0)
			return (-1);
		len -= k;
	}
	return (0);
}

/*
 * Does the receiver have to read? When the token is free and something is
 * on its way that no caller reads for: an asynchronous reply, a watched
 * event's notification, the end of a node a write found dead, or anything
 * while a write waits (its caller reads nothing until it is out). Under
 * lock.
 */
static int
vcl_node_rx_wanted(const struct vcl_node *n)
{
	return (!n->reading && (n->pending != NULL || n->nwatch > 0 ||
	    n->dead || n->stuck > 0));
}

/*
 * Wake the receiver if it sleeps and has to read now. Called under lock by
 * whatever makes vcl_node_rx_wanted true: a watch, an asynchronous call, a
 * token given back, a write that failed.
 */
static void
vcl_node_rx_kick(struct vcl_node *n)
{
	if (n->rx_idle && vcl_node_rx_wanted(n)) {
		n->rx_idle = 0;
		pthread_cond_signal(&n->rx_cond);
	}
}

/* A write has to wait (on), or is done waiting (off). */
static void
vcl_node_stuck(struct vcl_node *n, int on)
{
	pthread_mutex_lock(&n->lock);
	n->stuck += on ? 1 : -1;
	vcl_node_rx_kick(n);
	pthread_mutex_unlock(&n->lock);
}

/* Hash bucket of an event id in a node's watch table. */
static size_t
vcl_watch_slot(uint64_t id)
{
	return ((size_t)((id * 0x9e3779b97f4a7c15ull) >> 52) &
	    (VCL_WATCH_BUCKETS - 1));
}

/*
 * Watch an event whose completion the server will notify. Done before the
 * command is sent, so the notification cannot outrun it. Holds a reference.
 */
void
vcl_node_watch(struct vcl_node *n, cl_event ev)
{
	size_t	s = vcl_watch_slot(ev->obj.id);
	int	dead;

	vcl_retain(ev);
	pthread_mutex_lock(&n->lock);
	dead = n->dead;
	if (!dead) {
		ev->next = n->watch[s];
		n->watch[s] = ev;
		n->nwatch++;
		vcl_node_rx_kick(n);
	}
	pthread_mutex_unlock(&n->lock);
	if (dead) {
		vcl_event_complete(ev, CL_DEVICE_NOT_AVAILABLE, NULL);
		vcl_event_unref(ev);
	}
}

static cl_event	vcl_node_unwatch(struct vcl_node *, uint64_t);
static void	vcl_node_pack_releases(struct vcl_node *);

/* Stop watching an event whose command was never sent. */
void
vcl_node_unwatch_ev(struct vcl_node *n, cl_event ev)
{
	if (vcl_node_unwatch(n, ev->obj.id) == ev)
		vcl_event_unref(ev);
}

/* Take a watched event out of the table; NULL if not watched. */
static cl_event
vcl_node_unwatch(struct vcl_node *n, uint64_t id)
{
	cl_event	*pp, ev;

	pthread_mutex_lock(&n->lock);
	for (pp = &n->watch[vcl_watch_slot(id)]; (ev = *pp) != NULL;
	    pp = &ev->next) {
		if (ev->obj.id == id) {
			*pp = ev->next;
			n->nwatch--;
			break;
		}
	}
	pthread_mutex_unlock(&n->lock);
	return (ev);
}

/*
 * Tell the other nodes that n is gone, so what waits there for bytes or
 * events from it fails instead of waiting forever.
 */
static void
vcl_node_tell_lost(struct vcl_node *n)
{
	Vcl__Request	req = VCL__REQUEST__INIT;
	Vcl__PeerFail	pf = VCL__PEER_FAIL__INIT;
	struct vcl_node	*m;
	int		i;

	pf.source = n->peer_addr;
	pf.status = CL_DEVICE_NOT_AVAILABLE;
	req.call_case = VCL__REQUEST__CALL_PEER_FAIL;
	req.peer_fail = &pf;
	for (i = 0; i < vcl_nnodes(); i++)
		if ((m = vcl_node_get(i)) != n && vcl_node_status(m) ==
		    CL_SUCCESS)
			(void)vcl_node_send(m, &req, NULL, 0, VCL_SEND_FLUSH);
}

/*
 * The node is gone: every waiting call returns CL_DEVICE_NOT_AVAILABLE and
 * every pending event completes with it, so nothing waits forever. Run
 * only by the holder of the reading token (whose read failed), so no reply
 * is half landed when its waiter is let go; safe to run twice.
 */
static void
vcl_node_fail(struct vcl_node *n, const char *why)
{
	struct vcl_pending	*p, *next;
	cl_event		 ev;
	size_t			 i;
	int			 first;

	pthread_mutex_lock(&n->lock);
	if (!n->dead)
		vcl_log_error("node %s (%s) lost: %s", n->name ? n->name : "?",
		    n->addr, why);
	n->dead = 1;
	first = !n->failed;
	n->failed = 1;
	p = n->pending;
	n->pending = NULL;
	n->pending_tail = &n->pending;
	/* The receiver, asleep or waiting for the token, ends. */
	pthread_cond_broadcast(&n->cond);
	pthread_cond_signal(&n->rx_cond);
	pthread_mutex_unlock(&n->lock);
	shutdown(n->fd, SHUT_RDWR);
	for (; p != NULL; p = next) {
		void	(*fn)(struct vcl_pending *) = p->fn;

		next = p->next;
		pthread_mutex_lock(&n->lock);
		p->status = CL_DEVICE_NOT_AVAILABLE;
		p->done = 1;
		pthread_cond_broadcast(&n->cond);
		pthread_mutex_unlock(&n->lock);
		if (fn != NULL)
			fn(p);
	}
	if (first)
		vcl_node_tell_lost(n);
	for (i = 0; i < VCL_WATCH_BUCKETS; i++) {
		pthread_mutex_lock(&n->lock);
		ev = n->watch[i];
		n->watch[i] = NULL;
		n->nwatch = 0;
		pthread_mutex_unlock(&n->lock);
		while (ev != NULL) {
			cl_event next_ev = ev->next;

			vcl_event_complete(ev, CL_DEVICE_NOT_AVAILABLE, NULL);
			vcl_event_unref(ev);
			ev = next_ev;
		}
	}
	/* Event waiters on this node (vcl_node_wait) look again. */
	pthread_mutex_lock(&n->lock);
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

/*
 * Land one reply's bytes: find who waits for it, read its bulk into place.
 * The pending record stays listed until its bytes are in, so a connection
 * that fails mid-bulk fails it with the rest (vcl_node_fail) instead of
 * leaving its waiter asleep. Bulk lands only when it is exactly what was
 * asked for. Returns the record, or NULL with *why set.
 */
static struct vcl_pending *
vcl_node_land(struct vcl_node *n, Vcl__ToClient *tc,
    const struct vcl_frame_hdr *hdr, const char **why)
{
	struct vcl_pending	*p;

	pthread_mutex_lock(&n->lock);
	for (p = n->pending; p != NULL; p = p->next)
		if (p->seq == tc->reply->seq)
			break;
	pthread_mutex_unlock(&n->lock);
	if (p == NULL) {
		*why = "reply to no request";
		return (NULL);
	}
	if (hdr->bulk_len > 0 && (p->dst == NULL ||
	    hdr->bulk_len != p->dst_len)) {
		*why = "reply bytes do not match the request";
		return (NULL);
	}
	if (hdr->bulk_len == 0 && p->dst != NULL && p->dst_len > 0 &&
	    tc->reply->status == CL_SUCCESS) {
		*why = "successful read reply without its bytes";
		return (NULL);
	}
	if (hdr->bulk_len > 0) {
		/* Straight into the application's memory: no extra copy. */
		if (vcl_conn_recv(n, p->dst, hdr->bulk_len, why) != 0)
			return (NULL);
		n->bytes_in += hdr->bulk_len;
	}
	return (p);
}

/*
 * A landed reply is complete: unlist it, hand it tc and wake its waiter,
 * or run its handler. Returns 0, or -1 with *why set (tc then stays the
 * caller's).
 */
static int
vcl_node_reply(struct vcl_node *n, struct vcl_pending *p, Vcl__ToClient *tc,
    const char **why)
{
	struct vcl_pending	**pp;
	void			(*fn)(struct vcl_pending *);

	pthread_mutex_lock(&n->lock);
	for (pp = &n->pending; *pp != NULL && *pp != p; pp = &(*pp)->next)
		;
	if (*pp == NULL) {
		/* Unregistered meanwhile: its request was never sent. */
		pthread_mutex_unlock(&n->lock);
		*why = "reply to no request";
		return (-1);
	}
	if ((*pp = p->next) == NULL)
		n->pending_tail = pp;
	/* A waiter's p lives on its stack: read fn before it may return. */
	fn = p->fn;
	p->msg = tc;
	p->status = tc->reply->status;
	p->done = 1;
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	if (fn != NULL)
		fn(p);
	return (0);
}

/* Complete the events a message's notifications name. */
static void
vcl_node_notify(struct vcl_node *n, const Vcl__ToClient *tc)
{
	cl_event	ev;
	cl_ulong	prof[4];
	size_t		i;

	for (i = 0; i < tc->n_notify; i++) {
		Vcl__Notify	*nt = tc->notify[i];

		if ((ev = vcl_node_unwatch(n, nt->event)) == NULL)
			continue;
		prof[0] = nt->queued;
		prof[1] = nt->submit;
		prof[2] = nt->start;
		prof[3] = nt->end;
		vcl_event_complete(ev, nt->status, nt->has_end ? prof : NULL);
		vcl_event_unref(ev);
	}
}

/*
 * Something a waiter on this node may look at changed (an event of the
 * node completed): its waiters (vcl_node_wait) look again.
 */
void
vcl_node_wake(struct vcl_node *n)
{
	pthread_mutex_lock(&n->lock);
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

/*
 * Read one whole frame, its bulk included, then act on it: complete the
 * events it names, hand its reply to whoever waits. Only the holder of the
 * reading token calls this. The frame is off the socket before anything
 * runs, so a callback that makes a blocking call on this node from here
 * reads on from the next frame (vcl_node_wait). While it acts the thread
 * counts as a receiver (vcl_in_rx): nothing it runs blocks on a write.
 * With try, returns 1 when no byte is ready. Returns 0, 1, or -1 with
 * *why set (the node is to be failed).
 */
static int
vcl_node_read_one(struct vcl_node *n, int try, const char **why)
{
	struct vcl_frame_hdr	 hdr;
	struct vcl_pending	*p = NULL;
	Vcl__ToClient		*tc;
	int			 rc, was;

	if ((rc = vcl_conn_read_frame(n, &hdr, try, &tc, why)) != 0)
		return (rc);
	if (tc->reply != NULL)
		rc = (p = vcl_node_land(n, tc, &hdr, why)) == NULL ? -1 : 0;
	else if (hdr.bulk_len > 0)
		rc = vcl_conn_skip(n, hdr.bulk_len, why);
	if (rc != 0) {
		vcl__to_client__free_unpacked(tc, NULL);
		return (-1);
	}
	was = vcl_in_rx;
	vcl_in_rx = 1;
	vcl_node_notify(n, tc);
	if (p == NULL)
		vcl__to_client__free_unpacked(tc, NULL);
	else if ((rc = vcl_node_reply(n, p, tc, why)) != 0)
		vcl__to_client__free_unpacked(tc, NULL);
	/* else the pending owns tc now */
	vcl_in_rx = was;
	return (rc);
}

/* Does this thread hold n's reading token? Under lock. */
static int
vcl_node_reading_here(const struct vcl_node *n)
{
	return (n->reading && pthread_equal(n->reader, pthread_self()));
}

#define VCL_UNTAKE_FRAMES	8	/* read on at most these when giving back */

/*
 * Give the reading token back. What is already in is read first, a few
 * frames at most (a notification right behind a reply needs no other
 * thread then); under TLS all that is decrypted already, since those bytes
 * would wake no poll(): the receiver never sleeps over a frame that is in.
 */
static void
vcl_node_untake(struct vcl_node *n)
{
	const char	*why;
	size_t		 k;
	int		 rc = 0, i = 0, more;

	pthread_mutex_lock(&n->lock);
	more = n->pending != NULL || n->nwatch > 0;
	pthread_mutex_unlock(&n->lock);
	for (;;) {
		if (i == 0 && !more && n->link.ssl == NULL)
			break;		/* nothing else is on its way */
		if (i++ >= VCL_UNTAKE_FRAMES) {
			if (n->link.ssl == NULL)
				break;
			pthread_mutex_lock(&n->link.lock);
			k = vcl_link_pending(&n->link);
			pthread_mutex_unlock(&n->link.lock);
			if (k == 0)
				break;
		}
		if ((rc = vcl_node_read_one(n, 1, &why)) != 0)
			break;
	}
	if (rc < 0)
		vcl_node_fail(n, why);
	pthread_mutex_lock(&n->lock);
	n->reading = 0;
	pthread_cond_broadcast(&n->cond);
	vcl_node_rx_kick(n);
	pthread_mutex_unlock(&n->lock);
}

/*
 * The holder of the reading token, about to sleep in recv: look for a
 * frame for n->spin_us first, as a runtime's clFinish spins before it
 * blocks. A reply that comes meanwhile is landed with no wakeup between
 * the server's write and this thread (3-5 us of a round trip on a GPU
 * host). Returns 1 when a frame landed, 0 when none came (the caller
 * then waits in recv), -1 with *why set.
 */
static int
vcl_node_spin(struct vcl_node *n, const char **why)
{
	long long	until;
	int		rc;

	if (n->spin_us <= 0)
		return (0);
	until = vcl_conn_now_us() + n->spin_us;
	while ((rc = vcl_node_read_one(n, 1, why)) == 1)
		if (vcl_conn_now_us() >= until)
			return (0);
	return (rc == 0 ? 1 : -1);
}

/* Callers waiting on any node now (vcl_node_wait), in the process. */
static atomic_int	vcl_conn_waiting;

/*
 * Wait until done(n, arg) holds (it is evaluated under lock), reading the
 * socket meanwhile when no other thread does: the waiting thread lands its
 * own reply instead of sleeping until the receiver wakes it, and lands any
 * other frame that comes first just as the receiver would. A thread that
 * holds the token already (a callback run while it reads) reads on. Every
 * change done() looks at broadcasts cond under lock (a landed reply, a
 * notification, a token given back, the node's failure), so no wake-up is
 * lost. done() must become true once the node has failed (a call's reply
 * and a watched event do).
 */
void
vcl_node_wait(struct vcl_node *n, int (*done)(struct vcl_node *, void *),
    void *arg)
{
	const char	*why;
	int		 own = 0, rc;

	atomic_fetch_add(&vcl_conn_waiting, 1);
	pthread_mutex_lock(&n->lock);
	while (!done(n, arg)) {
		/*
		 * Failed by this thread (only a holder fails a node): every
		 * reply and watched event is final, nothing more will come.
		 */
		if (n->failed && (own || vcl_node_reading_here(n)))
			break;
		if (!n->reading && !n->failed) {
			n->reading = 1;
			n->reader = pthread_self();
			own = 1;
		} else if (!vcl_node_reading_here(n)) {
			pthread_cond_wait(&n->cond, &n->lock);
			continue;
		}
		pthread_mutex_unlock(&n->lock);
		/* A frame the spin landed may be the awaited one: look. */
		if ((rc = vcl_node_spin(n, &why)) == 0)
			rc = vcl_node_read_one(n, 0, &why);
		if (rc < 0)
			vcl_node_fail(n, why);
		pthread_mutex_lock(&n->lock);
	}
	pthread_mutex_unlock(&n->lock);
	if (own)
		vcl_node_untake(n);
	atomic_fetch_sub(&vcl_conn_waiting, 1);
}

/* A condition variable whose timed waits run on the monotonic clock. */
static void
vcl_conn_cond_mono(pthread_cond_t *c)
{
	pthread_condattr_t	a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
}

/*
 * The receiver, idle (n->lock held): sleep until woken, or a tick. With
 * nothing on its way from a node nobody reads its socket, and nobody
 * asks whether it lives; but another node may wait for its bytes or
 * events (a migration out of it, written without error into a socket it
 * no longer reads), and the application for that other node, which stays
 * alive and says so (keepalives). So every tick it looks whether the
 * server hung up, and while any caller of the process waits, it pings a
 * node it has not asked for timeout_ms / 3: a stopped server is then
 * found by the call timeout as a busy one is (vcl_conn_tick), and its
 * loss fails what waits on it elsewhere (vcl_node_tell_lost). Only a
 * hang-up or a tick wakes it, not a reply a caller reads. Returns 1 when
 * the server hung up or a ping is out: read now.
 */
static int
vcl_node_rx_idle(struct vcl_node *n)
{
	struct pollfd	pfd;
	struct timespec	t;
	long long	now;
	int		ms = n->timeout_ms > 0 ? vcl_conn_tick_ms(n) : 1000;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	n->rx_idle = 1;
	if (pthread_cond_timedwait(&n->rx_cond, &n->lock, &t) != ETIMEDOUT) {
		n->rx_idle = 0;
		return (0);
	}
	n->rx_idle = 0;
	pfd.fd = n->fd;
	pfd.events = POLLRDHUP;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) == 1 &&
	    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0)
		return (1);
	now = vcl_conn_now();
	if (atomic_load(&vcl_conn_waiting) == 0 || !n->live ||
	    n->timeout_ms == 0 || n->dead ||
	    now - n->idle_ping < n->timeout_ms / 3)
		return (0);
	n->idle_ping = now;
	/* The silence counts from the ping, not from the last use. */
	atomic_store(&n->last_io, now);
	pthread_mutex_unlock(&n->lock);
	vcl_node_ping(n);
	pthread_mutex_lock(&n->lock);
	return (n->pending != NULL);
}

/*
 * Receiver thread: lands what comes while no caller reads. It sleeps while
 * nothing is on its way that no caller reads for (vcl_node_rx_wanted), so
 * a lone synchronous caller reads its reply with no other thread woken.
 * Otherwise it waits for readability without the token and takes the
 * token only to read what is there, so a caller can take it whenever the
 * socket is quiet; a poll() woken by bytes a caller is reading waits for
 * the token, then finds nothing and polls again.
 */
static void *
vcl_node_rx(void *arg)
{
	struct vcl_node		*n = arg;
	struct pollfd		 pfd;
	const char		*why = vcl_conn_eof;
	int			 rc, wanted = 1;

	vcl_in_rx = 1;
	for (;;) {
		pthread_mutex_lock(&n->lock);
		for (;;) {
			if (n->failed) {
				pthread_mutex_unlock(&n->lock);
				return (NULL);
			}
			if (!n->reading && (wanted ||
			    vcl_node_rx_wanted(n)))
				break;
			if (n->reading)
				pthread_cond_wait(&n->cond, &n->lock);
			else if (vcl_node_rx_idle(n))
				wanted = 1;	/* hung up, or pinged */
		}
		n->reading = 1;
		n->reader = pthread_self();
		pthread_mutex_unlock(&n->lock);
		while ((rc = vcl_node_read_one(n, 1, &why)) == 0)
			;
		if (rc < 0)
			break;
		pthread_mutex_lock(&n->lock);
		n->reading = 0;
		pthread_cond_broadcast(&n->cond);
		wanted = vcl_node_rx_wanted(n);
		pthread_mutex_unlock(&n->lock);
		if (!wanted)
			continue;	/* sleep until something is on its way */
		pfd.fd = n->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		rc = poll(&pfd, 1, n->timeout_ms > 0 ? vcl_conn_tick_ms(n) : -1);
		/*
		 * A lost node is shut down, not failed, here: a caller may
		 * hold the token and be landing bytes into a waiter's
		 * memory, which failing would hand back. The token's holder
		 * (this thread next, or that caller) reads the end and fails
		 * the node.
		 */
		if (rc < 0 && errno != EINTR)
			vcl_node_broken(n, errno);
		else if (rc == 0 && vcl_conn_tick(n, 1) != 0)
			vcl_node_broken(n, ETIMEDOUT);
		/* Readable or a tick: read (or find nothing) whatever else. */
		wanted = 1;
	}
	vcl_node_fail(n, why);
	pthread_mutex_lock(&n->lock);
	n->reading = 0;
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	return (NULL);
}

/* Write the batched requests, then bulk bytes, if any. Under send_lock. */
static int
vcl_node_write(struct vcl_node *n, const void *bulk, uint64_t bulk_len)
{
	struct iovec	iov[2];
	int		rc;

	iov[0].iov_base = n->out.data;
	iov[0].iov_len = n->out.len;
	iov[1].iov_base = (void *)bulk;
	iov[1].iov_len = bulk_len;
	rc = vcl_conn_send(n, iov, bulk_len > 0 ? 2 : 1);
	n->out.len = 0;
	n->bytes_out += bulk_len;
	return (rc);
}

/*
 * A write failed: the node is lost. The receiver (woken for it) or a
 * waiting caller reads the shutdown and fails what waits.
 */
static void
vcl_node_broken(struct vcl_node *n, int e)
{
	pthread_mutex_lock(&n->lock);
	if (!n->dead)
		vcl_log_error("node %s (%s) lost: %s", n->name ? n->name : "?",
		    n->addr, e == ETIMEDOUT ? "no answer within "
		    "VCL_CALL_TIMEOUT_MS" : strerror(e));
	n->dead = 1;
	vcl_node_rx_kick(n);
	pthread_mutex_unlock(&n->lock);
	shutdown(n->fd, SHUT_RDWR);
}

/*
 * Queue a request (seq assigned here) with optional bulk bytes. Async
 * requests batch until VCL_SEND_FLUSH, bulk, or a full batch. A pending
 * record, if given, is registered before anything is written so its reply
 * cannot outrun it. Under send_lock; *rc is -1 when the write failed.
 */
static cl_int
vcl_node_submit_locked(struct vcl_node *n, Vcl__Request *req,
    const void *bulk, uint64_t bulk_len, int flags, struct vcl_pending *p,
    int *rc)
{
	cl_int	err = CL_SUCCESS;

	*rc = 0;
	pthread_mutex_lock(&n->lock);
	if (n->dead) {
		pthread_mutex_unlock(&n->lock);
		return (CL_DEVICE_NOT_AVAILABLE);
	}
	if (n->ndeferred > 0) {
		pthread_mutex_unlock(&n->lock);
		vcl_node_pack_releases(n);
		pthread_mutex_lock(&n->lock);
		/*
		 * The node may have failed while the lock was down: its
		 * pending list is drained, so a record added now would wait
		 * for a wake-up that never comes.
		 */
		if (n->dead) {
			pthread_mutex_unlock(&n->lock);
			return (CL_DEVICE_NOT_AVAILABLE);
		}
	}
	req->seq = ++n->seq;
	if (p != NULL) {
		p->seq = req->seq;
		p->next = NULL;
		*n->pending_tail = p;
		n->pending_tail = &p->next;
		/* A synchronous caller reads for itself; a handler's does not. */
		if (p->fn != NULL)
			vcl_node_rx_kick(n);
	}
	pthread_mutex_unlock(&n->lock);
	if (vcl_buf_pack(&n->out, &req->base, bulk_len) != 0) {
		err = CL_OUT_OF_HOST_MEMORY;
		if (p != NULL) {
			/* Unregister: nothing was sent for it. */
			struct vcl_pending	**pp;

			pthread_mutex_lock(&n->lock);
			for (pp = &n->pending; *pp != NULL; pp = &(*pp)->next) {
				if (*pp == p) {
					if ((*pp = p->next) == NULL)
						n->pending_tail = pp;
					break;
				}
			}
			pthread_mutex_unlock(&n->lock);
		}
	} else if (bulk_len > 0 || (flags & VCL_SEND_FLUSH) ||
	    n->out.len >= VCL_SEND_BATCH)
		*rc = vcl_node_write(n, bulk, bulk_len);
	return (err);
}

/* Queue a request, taking send_lock; see vcl_node_submit_locked. */
static cl_int
vcl_node_submit(struct vcl_node *n, Vcl__Request *req, const void *bulk,
    uint64_t bulk_len, int flags, struct vcl_pending *p)
{
	cl_int	err;
	int	rc, e;

	pthread_mutex_lock(&n->send_lock);
	err = vcl_node_submit_locked(n, req, bulk, bulk_len, flags, p, &rc);
	e = errno;
	pthread_mutex_unlock(&n->send_lock);
	if (rc != 0) {
		vcl_node_broken(n, e);
		/* A registered p is failed by the receiver. */
		if (p == NULL)
			err = CL_DEVICE_NOT_AVAILABLE;
	}
	return (err);
}

/* A ping's reply (or the node's failure) is in: another may go. */
static void
vcl_node_ping_done(struct vcl_pending *p)
{
	struct vcl_node	*n = p->arg;

	pthread_mutex_lock(&n->lock);
	n->pinging = 0;
	pthread_mutex_unlock(&n->lock);
	if (p->msg != NULL)
		vcl__to_client__free_unpacked(p->msg, NULL);
	free(p);
}

/*
 * Ask a quiet node for a sign of life: a Stats call, which a live server
 * answers at once even while it runs long commands. Called by a reader
 * (the token's holder, or the receiver between reads); never waits for
 * send_lock: a writer holding it makes progress or trips the timeout
 * itself.
 */
static void
vcl_node_ping(struct vcl_node *n)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__Stats		 st = VCL__STATS__INIT;
	struct vcl_pending	*p;
	cl_int			 err;
	int			 rc, e;

	if (pthread_mutex_trylock(&n->send_lock) != 0)
		return;
	pthread_mutex_lock(&n->lock);
	if (n->pinging || (p = calloc(1, sizeof *p)) == NULL) {
		pthread_mutex_unlock(&n->lock);
		pthread_mutex_unlock(&n->send_lock);
		return;
	}
	n->pinging = 1;
	pthread_mutex_unlock(&n->lock);
	p->fn = vcl_node_ping_done;
	p->arg = n;
	req.call_case = VCL__REQUEST__CALL_STATS;
	req.stats = &st;
	err = vcl_node_submit_locked(n, &req, NULL, 0, VCL_SEND_FLUSH, p, &rc);
	e = errno;
	pthread_mutex_unlock(&n->send_lock);
	if (err != CL_SUCCESS) {
		pthread_mutex_lock(&n->lock);
		n->pinging = 0;
		pthread_mutex_unlock(&n->lock);
		free(p);
	}
	if (rc != 0)
		vcl_node_broken(n, e);
}

/* Send an asynchronous request: no reply when it succeeds. */
cl_int
vcl_node_send(struct vcl_node *n, Vcl__Request *req, const void *bulk,
    uint64_t bulk_len, int flags)
{
	return (vcl_node_submit(n, req, bulk, bulk_len, flags, NULL));
}

/* Write whatever async requests are batched. */
cl_int
vcl_node_flush(struct vcl_node *n)
{
	int	rc = 0, e = 0;

	pthread_mutex_lock(&n->send_lock);
	vcl_node_pack_releases(n);
	if (n->out.len > 0 && !n->dead) {
		rc = vcl_node_write(n, NULL, 0);
		e = errno;
	}
	pthread_mutex_unlock(&n->send_lock);
	if (rc != 0) {
		vcl_node_broken(n, e);
		return (CL_DEVICE_NOT_AVAILABLE);
	}
	return (vcl_node_status(n));
}

/* Flush every node (before waiting on anything). */
void
vcl_node_flush_all(void)
{
	int	i;

	for (i = 0; i < vcl_nnodes(); i++)
		vcl_node_flush(vcl_node_get(i));
}

/* CL_SUCCESS while the node is alive, else CL_DEVICE_NOT_AVAILABLE. */
cl_int
vcl_node_status(struct vcl_node *n)
{
	int	dead;

	pthread_mutex_lock(&n->lock);
	dead = n->dead;
	pthread_mutex_unlock(&n->lock);
	return (dead ? CL_DEVICE_NOT_AVAILABLE : CL_SUCCESS);
}

/*
 * Send req (no bulk, asynchronously) to every node of set (bit i: node i)
 * that lives: one lost before or during the send is left out. Its queues
 * fail every command, so what a context makes (a program, a user event,
 * a sampler) goes on being made on its other nodes. Returns the failure of
 * a live node, CL_DEVICE_NOT_AVAILABLE when none lives, else CL_SUCCESS.
 */
cl_int
vcl_node_send_live(uint64_t set, Vcl__Request *req)
{
	struct vcl_node	*n;
	cl_int		 e;
	int		 i, live = 0;

	for (i = 0; i < vcl_nnodes(); i++) {
		if (!(set & (1ull << i)))
			continue;
		n = vcl_node_get(i);
		if ((e = vcl_node_send(n, req, NULL, 0, 0)) == CL_SUCCESS)
			live++;
		else if (vcl_node_status(n) == CL_SUCCESS)
			return (e);
	}
	return (live > 0 ? CL_SUCCESS : CL_DEVICE_NOT_AVAILABLE);
}

/* Has a synchronous call's reply landed (or its node failed)? Under lock. */
static int
vcl_node_call_done(struct vcl_node *n, void *arg)
{
	const struct vcl_pending	*p = arg;

	(void)n;
	return (p->done);
}

/*
 * A synchronous call: send (flushing the batch before it), wait for the
 * reply. Reply bulk lands in dst (dst_len bytes expected). *out, if given,
 * receives the reply message whenever one arrived (the caller frees it),
 * failed calls included: a failed build still carries its log. Returns the
 * reply's status, or CL_DEVICE_NOT_AVAILABLE if the node is gone.
 */
cl_int
vcl_node_call(struct vcl_node *n, Vcl__Request *req, const void *bulk,
    uint64_t bulk_len, void *dst, uint64_t dst_len, Vcl__ToClient **out)
{
	struct vcl_pending	p;
	cl_int			err;

	memset(&p, 0, sizeof p);
	p.dst = dst;
	p.dst_len = dst_len;
	if (out != NULL)
		*out = NULL;
	if ((err = vcl_node_submit(n, req, bulk, bulk_len, VCL_SEND_FLUSH,
	    &p)) != CL_SUCCESS)
		return (err);
	vcl_node_wait(n, vcl_node_call_done, &p);
	if (p.msg != NULL && p.status != CL_SUCCESS &&
	    p.msg->reply->message != NULL)
		vcl_log_error("node %s: %s", n->name, p.msg->reply->message);
	if (out != NULL)
		*out = p.msg;
	else if (p.msg != NULL)
		vcl__to_client__free_unpacked(p.msg, NULL);
	return (p.status);
}

/*
 * The node's peer links as text, one "host:port transport (why)" line
 * each ("(why)" left out where the server does not say), from its Stats
 * (a synchronous call), answered as a char[] info value.
 */
cl_int
vcl_node_peer_links(struct vcl_node *n, size_t size, void *value,
    size_t *size_ret)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__Stats		 st = VCL__STATS__INIT;
	Vcl__ToClient		*tc = NULL;
	const Vcl__StatsResult	*r;
	struct vcl_buf		 b = { NULL, 0, 0 };
	char			 line[600];
	size_t			 i;
	cl_int			 err;

	req.call_case = VCL__REQUEST__CALL_STATS;
	req.stats = &st;
	if ((err = vcl_node_call(n, &req, NULL, 0, NULL, 0, &tc)) !=
	    CL_SUCCESS)
		goto out;
	if (tc == NULL || tc->reply == NULL ||
	    (r = tc->reply->stats) == NULL) {
		err = CL_DEVICE_NOT_AVAILABLE;
		goto out;
	}
	for (i = 0; i < r->n_peer_links; i++) {
		if (r->peer_links[i]->why != NULL)
			snprintf(line, sizeof line, "%s %s (%.200s)\n",
			    r->peer_links[i]->address,
			    r->peer_links[i]->transport, r->peer_links[i]->why);
		else
			snprintf(line, sizeof line, "%s %s\n",
			    r->peer_links[i]->address,
			    r->peer_links[i]->transport);
		if (vcl_buf_reserve(&b, strlen(line)) != 0) {
			err = CL_OUT_OF_HOST_MEMORY;
			goto out;
		}
		memcpy(b.data + b.len, line, strlen(line));
		b.len += strlen(line);
	}
	if (vcl_buf_reserve(&b, 1) != 0) {
		err = CL_OUT_OF_HOST_MEMORY;
		goto out;
	}
	b.data[b.len++] = '\0';
	err = vcl_info_ret(b.data, b.len, size, value, size_ret);
out:
	vcl_buf_free(&b);
	if (tc != NULL)
		vcl__to_client__free_unpacked(tc, NULL);
	return (err);
}

/*
 * VCL_TRANSPORT (testing) names the transport a link should use. libvcl
 * moves its bulk on the control stream (tcp) and offers no other yet; any
 * other name is reported once and the link stays on tcp.
 */
static void
vcl_conn_transport_env(void)
{
	static atomic_int	 told;
	const char		*e = getenv("VCL_TRANSPORT");

	if (e == NULL || *e == '\0' || strcmp(e, vcl_transport_tcp.name) == 0)
		return;
	if (atomic_exchange(&told, 1) == 0)
		vcl_log_warn("VCL_TRANSPORT=%s: %s; client links use tcp", e,
		    vcl_transport_find(e) == NULL ? "no such transport" :
		    "libvcl does not use it for its own links yet");
}

/*
 * A call whose reply is handled by fn on the receiver thread (non-blocking
 * reads, builds with a callback). fn owns the pending record and frees it
 * (and its msg). Sent with the batch; the caller flushes when it must.
 */
cl_int
vcl_node_call_async(struct vcl_node *n, Vcl__Request *req, void *dst,
    uint64_t dst_len, void (*fn)(struct vcl_pending *), void *arg)
{
	struct vcl_pending	*p;
	cl_int			 err;

	if ((p = calloc(1, sizeof *p)) == NULL)
		return (CL_OUT_OF_HOST_MEMORY);
	p->dst = dst;
	p->dst_len = dst_len;
	p->fn = fn;
	p->arg = arg;
	if ((err = vcl_node_submit(n, req, NULL, 0, 0, p)) != CL_SUCCESS)
		free(p);
	return (err);
}

/*
 * Tell the node an object's last reference is gone. Releases can happen on
 * the receiver thread (an event completing drops the last reference), which
 * must never block on the socket: they are queued under the short node lock
 * and packed by the next send.
 */
void
vcl_node_release(struct vcl_node *n, Vcl__Kind kind, uint64_t id)
{
	Vcl__Release	*r;
	size_t		 cap;

	pthread_mutex_lock(&n->lock);
	if (!n->dead && n->ndeferred == n->cdeferred) {
		cap = n->cdeferred ? n->cdeferred * 2 : 64;
		if ((r = realloc(n->deferred, cap * sizeof *r)) != NULL) {
			n->deferred = r;
			n->cdeferred = cap;
		}
	}
	if (!n->dead && n->ndeferred < n->cdeferred) {
		r = &n->deferred[n->ndeferred++];
		vcl__release__init(r);
		r->kind = kind;
		r->id = id;
	}
	pthread_mutex_unlock(&n->lock);
}

/* Pack the queued releases into the batch. Under send_lock. */
static void
vcl_node_pack_releases(struct vcl_node *n)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__Release	*rel;
	size_t		 i, cnt;

	pthread_mutex_lock(&n->lock);
	rel = n->deferred;
	cnt = n->ndeferred;
	n->deferred = NULL;
	n->ndeferred = n->cdeferred = 0;
	pthread_mutex_unlock(&n->lock);
	req.call_case = VCL__REQUEST__CALL_RELEASE;
	for (i = 0; i < cnt; i++) {
		req.seq = ++n->seq;
		req.release = &rel[i];
		if (vcl_buf_pack(&n->out, &req.base, 0) != 0)
			break;
	}
	free(rel);
}

static SSL_CTX		*vcl_conn_tls;
static int		 vcl_conn_tls_bad;
static pthread_once_t	 vcl_conn_tls_once = PTHREAD_ONCE_INIT;

/*
 * The TLS context, once, from the environment: VCL_TLS=1 turns TLS on,
 * VCL_TLS_CA names the CAs that sign the servers' certificates (default:
 * the system's), VCL_TLS_CERT/VCL_TLS_KEY a client certificate for servers
 * that ask for one. VCL_TLS_INSECURE=1, and only that, skips verification.
 */
static void
vcl_conn_tls_init(void)
{
	struct vcl_tls_conf	 c;
	const char		*e;
	char			 err[1024];

	if ((e = getenv("VCL_TLS")) == NULL || strcmp(e, "1") != 0)
		return;
	c.ca = getenv("VCL_TLS_CA");
	c.cert = getenv("VCL_TLS_CERT");
	c.key = getenv("VCL_TLS_KEY");
	if (c.cert != NULL && c.key == NULL)
		c.key = c.cert;
	c.verify = (e = getenv("VCL_TLS_INSECURE")) == NULL ||
	    strcmp(e, "1") != 0;
	if (!c.verify)
		/* An error's level, so that it shows by default. */
		vcl_log_error("warning: VCL_TLS_INSECURE=1: server "
		    "certificates are not verified; anyone on the path can "
		    "pose as a server");
	if ((vcl_conn_tls = vcl_tls_ctx_new(0, &c, err, sizeof err)) == NULL) {
		vcl_log_error("VCL_TLS: %s", err);
		vcl_conn_tls_bad = 1;
	}
}

/*
 * Put a fresh connection under TLS if asked, checking that the server's
 * certificate names host. Returns 0, or -1 with the reason logged.
 */
static int
vcl_conn_start_tls(struct vcl_node *n, const char *host)
{
	pthread_once(&vcl_conn_tls_once, vcl_conn_tls_init);
	if (vcl_conn_tls_bad)
		return (-1);
	if (vcl_conn_tls == NULL)
		return (0);
	if (vcl_link_tls(&n->link, vcl_conn_tls, 0, host, n->link.err,
	    sizeof n->link.err) != 0 || vcl_link_handshake_full(&n->link) != 0) {
		vcl_log_error("node %s: TLS handshake failed: %s", n->addr,
		    n->link.err);
		return (-1);
	}
	vcl_log_info("node %s: %s", n->addr, vcl_link_version(&n->link));
	return (0);
}


/*
 * Every device info value of a Welcome well formed? An entry without an
 * error is a value, absent or not: a string's must end in its NUL. 0 or
 * -1.
 */
static int
vcl_conn_welcome_ok(const Vcl__Welcome *w)
{
	const Vcl__InfoValue	*iv;
	size_t			 d, k;

	for (d = 0; d < w->n_devices; d++)
		for (k = 0; w->devices[d] != NULL && k <
		    w->devices[d]->n_info; k++) {
			iv = w->devices[d]->info[k];
			if (!iv->has_error && !vcl_info_value_ok(iv->param,
			    iv->value.data, iv->value.len))
				return (-1);
		}
	return (0);
}

/*
 * Connect and shake hands: check the server's protocol version, prove the
 * token if it asks, keep its Welcome snapshot, start the receiver. Returns
 * CL_SUCCESS or an error with the reason logged.
 */
cl_int
vcl_node_connect(struct vcl_node *n, const char *addr)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__Hello		 hello = VCL__HELLO__INIT;
	Vcl__ToClient		*tc = NULL;
	struct vcl_frame_hdr	 hdr;
	struct vcl_token	 tok;
	uint8_t			 proof[VCL_AUTH_PROOF_LEN];
	char			 host[256], port[32], err[512], name[64];
	const char		*why, *tf, *to;
	struct vcl_buf		 b = { NULL, 0, 0 };
	int			 timeout = VCL_CONNECT_TIMEOUT;
	long long		 deadline, backoff = 10;	/* ms */
	unsigned		 seed = (unsigned)getpid();

	snprintf(n->addr, sizeof n->addr, "%s", addr);
	n->fd = -1;
	n->pending_tail = &n->pending;
	pthread_mutex_init(&n->send_lock, NULL);
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->cond, NULL);
	vcl_conn_cond_mono(&n->rx_cond);
	if ((to = getenv("VCL_CONNECT_TIMEOUT_MS")) != NULL && atoi(to) > 0)
		timeout = atoi(to);
	n->timeout_ms = VCL_CALL_TIMEOUT;
	if ((to = getenv("VCL_CALL_TIMEOUT_MS")) != NULL && atoi(to) >= 0)
		n->timeout_ms = atoi(to);
	n->spin_us = vcl_conn_spin_default();
	if (vcl_io_split_hostport(addr, host, sizeof host, port,
	    sizeof port) != 0) {
		vcl_log_error("bad node address '%s' (want host:port)", addr);
		return (CL_INVALID_VALUE);
	}
	if (port[0] == '\0' && vcl_node_port[0] != '\0')
		snprintf(port, sizeof port, "%s", vcl_node_port);
	else if (port[0] == '\0')
		snprintf(port, sizeof port, "%d", VCL_DEFAULT_PORT);
	deadline = vcl_conn_now() + timeout;
again:
	if ((n->fd = vcl_io_connect(host, port, timeout, err,
	    sizeof err)) == -1) {
		vcl_log_error("node %s unreachable: %s; left out", addr, err);
		return (CL_DEVICE_NOT_AVAILABLE);
	}
	/* Servers reach each other by number: a peer may not resolve names. */
	vcl_io_peer_name(n->fd, n->peer_addr, sizeof n->peer_addr);
	/* A dead host or a cut link ends the connection, idle or not. */
	vcl_io_keepalive(n->fd, n->timeout_ms);
	/* The handshake must not hang on a server that never greets. */
	vcl_link_init(&n->link, n->fd);
	vcl_link_timeout(&n->link, timeout);
	vcl_io_timeout(n->fd, timeout);
	if (vcl_conn_start_tls(n, host) != 0)
		goto fail;
	tc = vcl_conn_read_msg(n, &hdr, &why);
	if (tc == NULL && n->link.ssl == NULL && why == vcl_conn_eof &&
	    vcl_conn_now() + backoff < deadline) {
		/*
		 * Closed before its greeting: a server that sheds load (too
		 * many connections still authenticating, from this address
		 * or all). Try again, backing off, within the connect timeout.
		 */
		vcl_link_close(&n->link);
		n->fd = -1;
		vcl_conn_sleep_ms(backoff + rand_r(&seed) % backoff);
		backoff = backoff * 2 > 500 ? 500 : backoff * 2;
		goto again;
	}
	if (tc == NULL || tc->greeting == NULL) {
		vcl_log_error("node %s: no greeting: %s%s", addr,
		    tc == NULL ? why : "unexpected message",
		    n->link.ssl == NULL ? " (if the server uses TLS, set "
		    "VCL_TLS=1)" : "");
		goto fail;
	}
	if (tc->greeting->version != VCL_PROTOCOL_VERSION) {
		vcl_log_error("node %s speaks VCL protocol %u, this library "
		    "speaks %u: upgrade the older side", addr,
		    tc->greeting->version, VCL_PROTOCOL_VERSION);
		goto fail;
	}
	hello.version = VCL_PROTOCOL_VERSION;
	/*
	 * Signs of life while the server owes us something: its loop's own
	 * frames, since a ping of ours waits behind input it holds back.
	 */
	if (n->timeout_ms > 0) {
		hello.has_keepalive_ms = 1;
		hello.keepalive_ms = (uint32_t)vcl_conn_keepalive_ms(n);
	}
	vcl_conn_transport_env();
	if (tc->greeting->nonce.len <= sizeof n->nonce) {
		memcpy(n->nonce, tc->greeting->nonce.data,
		    tc->greeting->nonce.len);
		n->nonce_len = tc->greeting->nonce.len;
	}
	snprintf(name, sizeof name, "libvcl pid %ld", (long)getpid());
	hello.client_name = name;
	if (tc->greeting->auth_required) {
		if ((tf = vcl_token_path) == NULL) {
			vcl_log_error("node %s requires a token: set "
			    "VCL_TOKEN_FILE or token-file in nodes.conf", addr);
			goto fail;
		}
		if (vcl_auth_load(tf, &tok, err, sizeof err) != 0) {
			vcl_log_error("%s", err);
			goto fail;
		}
		vcl_auth_prove(&tok, tc->greeting->nonce.data,
		    tc->greeting->nonce.len, proof);
		memset(&tok, 0, sizeof tok);
		hello.has_proof = 1;
		hello.proof.data = proof;
		hello.proof.len = sizeof proof;
	}
	vcl__to_client__free_unpacked(tc, NULL);
	tc = NULL;
	req.seq = ++n->seq;
	req.call_case = VCL__REQUEST__CALL_HELLO;
	req.hello = &hello;
	if (vcl_buf_pack(&b, &req.base, 0) != 0) {
		vcl_log_error("out of memory");
		goto fail;
	}
	{
		struct iovec	iov = { b.data, b.len };

		if (vcl_conn_send(n, &iov, 1) != 0) {
			vcl_log_error("node %s: %s", addr, strerror(errno));
			goto fail;
		}
	}
	if ((tc = vcl_conn_read_msg(n, &hdr, &why)) == NULL ||
	    tc->reply == NULL) {
		vcl_log_error("node %s: handshake failed: %s", addr,
		    tc == NULL ? why : "unexpected message");
		goto fail;
	}
	if (tc->reply->status != CL_SUCCESS || tc->reply->welcome == NULL) {
		vcl_log_error("node %s refused the session: %s", addr,
		    tc->reply->message ? tc->reply->message : "no reason");
		goto fail;
	}
	if (tc->reply->welcome->n_devices > VCL_NODE_MAX_DEVICES) {
		vcl_log_error("node %s announces %zu devices, more than %d: "
		    "left out", addr, tc->reply->welcome->n_devices,
		    VCL_NODE_MAX_DEVICES);
		goto fail;
	}
	if (vcl_conn_welcome_ok(tc->reply->welcome) != 0) {
		vcl_log_error("node %s sent a malformed Welcome (a string "
		    "value without its NUL): left out", addr);
		goto fail;
	}
	n->hello = tc;
	n->welcome = tc->reply;
	n->session = tc->reply->welcome->session_id;
	n->key = tc->reply->welcome->session_key;
	n->name = tc->reply->welcome->node_name;
	/* We offer none: a server that names one anyway is ignored. */
	n->transport = vcl_transport_tcp.name;
	n->ndevices = (uint32_t)tc->reply->welcome->n_devices;
	/*
	 * Past the handshake, socket waits wake every tick so the receiver
	 * can ping a quiet node and a stuck writer can give up.
	 */
	vcl_io_timeout(n->fd, n->timeout_ms > 0 ? vcl_conn_tick_ms(n) : 0);
	vcl_link_timeout(&n->link, n->timeout_ms > 0 ? vcl_conn_tick_ms(n) : 0);
	atomic_store(&n->last_io, vcl_conn_now());
	n->live = 1;
	/* tc stays allocated: the snapshot lives as long as the process. */
	vcl_buf_free(&b);
	if (pthread_create(&n->rx, NULL, vcl_node_rx, n) != 0) {
		vcl_log_error("cannot start a receiver thread");
		n->welcome = NULL;
		goto fail;
	}
	n->rx_started = 1;
	vcl_log_info("node %s (%s): %u device(s)", n->name, addr, n->ndevices);
	return (CL_SUCCESS);
fail:
	if (tc != NULL && n->welcome == NULL)
		vcl__to_client__free_unpacked(tc, NULL);
	vcl_buf_free(&b);
	vcl_link_close(&n->link);
	n->fd = -1;
	n->dead = 1;
	return (CL_DEVICE_NOT_AVAILABLE);
}
