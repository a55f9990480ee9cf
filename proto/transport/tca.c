/*
 * tca.c - the tca transport: bulk bytes pushed by DMA between the nodes of
 * one TCA domain (PEACH2 boards, or the PEACH2 model on one host), through
 * the TCA user library behind function pointers (tca_lib.c).
 *
 * Each instance registers a window (tcaMalloc) of VCL_TCA_LANES lanes and
 * announces its handle in its address. Each endpoint takes a lane of its
 * own window, where all the other end writes: DMA writes only, so every
 * step is a push into the other end's lane:
 *
 *   lane (in the receiver's window, written by the other end of one link)
 *     mbox[2]   chunk headers {seq, xid, total, off, len}, one per half
 *     ack       {ack_seq, closed}: the other end's acks of what we sent
 *     data[2]   two halves of VCL_TCA_CHUNK bytes
 *
 * Which lane: where the host has a message path (ctl_out: the server's
 * TransportCtl), each end announces the lane it took and sends nothing
 * before it learnt the other's; without one (the conformance test), each
 * end takes lane (other end's node * 4 + instance) % 16 of its window and
 * expects the other end to do the same: one link per pair of instances.
 *
 * A send copies a chunk from the caller's memory into registered staging
 * (sources are not registered memory; the board needs 16-byte agreement and
 * 4-byte lengths) and pushes one chain: the data, then its header with
 * tcaDMANotify; at most two chunks are unacknowledged. The receiver sees the
 * header in its window, waits for the header's notification (the modelled
 * time it became visible), copies the chunk into the posted destination and
 * pushes the ack back. A chunk of a transfer no receive is posted for waits
 * in the lane (held, costing no memory) until one is, at most
 * VCL_TCA_HOLD_MS (default 30 s, as the server's frame deadline): then its
 * transfer's bytes are dropped, so that one stray transfer cannot stop the
 * link's others for the rest of its life.
 *
 * The loop is never held longer than one chunk's DMA (waited with
 * tcaWaitDMAC, bounded by the library's wait bound). TCA has no descriptor
 * to wait on: the instance's event source is a timerfd, readable at once
 * while passes move bytes; while work is pending but a pass moved nothing
 * (the other end has not run yet), a few passes yield the CPU, then the
 * timer sleeps for a backoff growing from 50 us to VCL_TCA_NAP_MAX_US, so
 * that a link waiting on its peer does not spin a core. An endpoint's
 * source is its control stream, whose end (peeked, never read) is how a
 * vanished peer is noticed.
 */
#include <sys/socket.h>
#include <sys/timerfd.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tca_lib.h"
#include "vcl_log.h"
#include "vcl_tls.h"
#include "vcl_transport.h"

#define VCL_TCA_MAGIC		0x56544341u	/* "VTCA" */
#define VCL_TCA_INST		4		/* instances per process */
#define VCL_TCA_LANES		16		/* links per instance */
#define VCL_TCA_CHUNK		(128u << 10)
#define VCL_TCA_HDR		4096u
#define VCL_TCA_LANE		(VCL_TCA_HDR + 2 * VCL_TCA_CHUNK)
#define VCL_TCA_ACK_OFF		128u
#define VCL_TCA_CH		0		/* the channel of headers, acks */
#define VCL_TCA_SPLIT_MIN	(4u << 10)	/* data split over the four */
#define VCL_TCA_SPLIT_MAX	(64u << 10)	/* channels (seed 003 §6.1) */
#define VCL_TCA_HOLD_MS		30000		/* unposted chunk in a lane */
#define VCL_TCA_SPIN		8		/* idle passes that yield */
#define VCL_TCA_NAP_MIN_US	50		/* then the timer's backoff */
#define VCL_TCA_NAP_MAX_US	2000

struct vcl_tca_mbox {
	volatile uint64_t	seq;
	uint64_t		xid;
	uint64_t		total;
	uint64_t		off;
	uint64_t		len;
	uint64_t		lane;		/* the sender's lane: acks go there */
	uint64_t		pad[2];
};

struct vcl_tca_ack {
	volatile uint64_t	ack_seq;
	volatile uint64_t	closed;
	uint64_t		pad[2];
};

/* What an instance announces. */
struct vcl_tca_addr {
	uint32_t	magic;
	uint32_t	domain;		/* hash of the domain name */
	uint32_t	lane;		/* node * 4 + instance */
	uint32_t	pad;
	tcaHandle	win;
};

struct vcl_tca {
	uint32_t	 lane;		/* node * 4 + instance: who we are */
	unsigned char	*win;		/* VCL_TCA_LANES lanes */
	tcaHandle	 winh;
	uint32_t	 busy;		/* lanes taken, one bit each */
	struct vcl_tp_ep *eps[VCL_TCA_LANES];	/* by lane */
	int		 efd;		/* timerfd: readable when to progress */
	int		 armed;		/* 0 off, 1 at once, 2 a nap */
	int		 idle;		/* passes in a row that moved nothing */
	uint64_t	 nap_us;	/* the next nap */
	double		 w[TCA_NCHANNELS];	/* the split's, measured */
	int		 did;		/* a pass moved something */
	uint64_t	 hold_ns;	/* an unposted chunk's bound */
};

/* The lane announcement (TransportCtl data). */
struct vcl_tca_ctl {
	uint32_t	magic;
	uint32_t	lane;
};

struct vcl_tca_send {
	uint64_t		 xid;
	struct iovec		*iov;
	int			 cnt;
	uint64_t		 total;
	uint64_t		 off;		/* bytes pushed */
	uint64_t		 last_seq;	/* of its last chunk */
	vcl_tp_done_fn		 done;
	void			*arg;
	struct vcl_tca_send	*next;
};

struct vcl_tca_recv {
	uint64_t		 xid;
	struct vcl_tp_dest	 dest;
	uint64_t		 got;
	int			 drop;		/* cancelled or mismatched */
	vcl_tp_done_fn		 done;
	void			*arg;
	struct vcl_tca_recv	*next;
};

struct vcl_tca_ep {
	struct vcl_tca_addr	 peer;
	int			 rx;		/* our lane: the peer writes it */
	int			 prx;		/* the peer's lane; -1 unknown */
	int			 announced;
	unsigned char		*stage;		/* hdr area + 2 chunks */
	tcaHandle		 stageh;
	uint64_t		 seq;		/* last chunk pushed */
	uint64_t		 rseq;		/* last chunk taken */
	struct vcl_tca_send	*sends;
	struct vcl_tca_recv	*recvs;
	uint64_t		 nposted;
	uint64_t		 dropxid[8];	/* cancelled xids, to drop */
	int			 ndrop;
	int			 closed;
	uint64_t		 held_seq;	/* chunk waiting for a receive */
	uint64_t		 held_since;	/* since when (ns), 0: none */
};

static void	vcl_tca_signal(struct vcl_tp *, int);

static pthread_mutex_t		 vcl_tca_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vcl_tca_lib	 vcl_tca_L;
static int			 vcl_tca_ready;	/* 1 loaded, -1 failed */
static char			 vcl_tca_why[512];
static int			 vcl_tca_used[VCL_TCA_INST];
static uint32_t			 vcl_tca_dhash;

/* FNV-1a of the domain name (the same in every process). */
static uint32_t
vcl_tca_hash(const char *s)
{
	uint32_t	h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (h);
}

/* Load the library and join the domain, once per process. */
static int
vcl_tca_load(char *why, size_t len)
{
	const char	*dom = getenv("VCL_TCA_DOMAIN");
	tcaresult	 res;

	pthread_mutex_lock(&vcl_tca_lock);
	if (vcl_tca_ready == 0) {
		vcl_tca_ready = -1;
		if (dom == NULL || *dom == '\0' ||
		    getenv("VCL_TCA_NODE") == NULL)
			snprintf(vcl_tca_why, sizeof vcl_tca_why, "not in a "
			    "TCA domain (VCL_TCA_DOMAIN, VCL_TCA_NODE unset)");
		else if (vcl_tca_lib_load(&vcl_tca_L, vcl_tca_why,
		    sizeof vcl_tca_why) != 0)
			;
		else if ((res = vcl_tca_L.init()) != TCA_SUCCESS)
			snprintf(vcl_tca_why, sizeof vcl_tca_why, "tcaInit: %s",
			    vcl_tca_lib_error(&vcl_tca_L, res));
		else {
			vcl_tca_dhash = vcl_tca_hash(dom);
			vcl_tca_ready = 1;
		}
	}
	if (vcl_tca_ready != 1)
		snprintf(why, len, "%.*s", (int)(len > 0 ? len - 1 : 0),
		    vcl_tca_why);
	pthread_mutex_unlock(&vcl_tca_lock);
	return (vcl_tca_ready == 1 ? VCL_TP_OK : VCL_TP_EIO);
}

/* This process's node id: the library's, else VCL_TCA_NODE. */
static int
vcl_tca_node(void)
{
	const char	*s = getenv("VCL_TCA_NODE");
	int		 n;

	if (vcl_tca_L.get_node != NULL)
		return (vcl_tca_L.get_node());
	n = s != NULL ? atoi(s) : -1;
	return (n >= 0 && n < TCA_MAX_NODES ? n : -1);
}

/* Usable when this process is configured in a domain and a library loads. */
static int
vcl_tca_probe(char *why, size_t len)
{
	return (vcl_tca_load(why, len));
}

/* A size in bytes from the environment (digits only), else def. */
static uint64_t
vcl_tca_env_size(const char *name, uint64_t def)
{
	const char		*s = getenv(name);
	char			*end;
	unsigned long long	 v;

	if (s == NULL || *s < '0' || *s > '9')
		return (def);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0') {
		vcl_log_warn("tca: %s=%s is not a size in bytes: %llu", name,
		    s, (unsigned long long)def);
		return (def);
	}
	return (v);
}

/* The instance: a lane number and the registered window. */
static int
vcl_tca_open(struct vcl_tp *tp)
{
	struct vcl_tca	*t = NULL;
	void		*p = NULL;
	tcaresult	 res;
	int		 i, node, rc = VCL_TP_EIO;

	if (vcl_tca_load(tp->err, sizeof tp->err) != VCL_TP_OK)
		return (VCL_TP_EIO);
	if ((node = vcl_tca_node()) < 0) {
		snprintf(tp->err, sizeof tp->err, "no TCA node id");
		return (VCL_TP_EINVAL);
	}
	pthread_mutex_lock(&vcl_tca_lock);
	for (i = 0; i < VCL_TCA_INST && vcl_tca_used[i]; i++)
		;
	if (i == VCL_TCA_INST) {
		snprintf(tp->err, sizeof tp->err, "more than %d tca instances",
		    VCL_TCA_INST);
		goto out;
	}
	if ((t = calloc(1, sizeof *t)) == NULL) {
		rc = VCL_TP_ENOMEM;
		goto out;
	}
	res = vcl_tca_L.malloc(&p, (size_t)VCL_TCA_LANES * VCL_TCA_LANE,
	    tcaMemoryCPU);
	if (res == TCA_SUCCESS)
		res = vcl_tca_L.create_handle(&t->winh, p,
		    (size_t)VCL_TCA_LANES * VCL_TCA_LANE, tcaMemoryCPU);
	if (res != TCA_SUCCESS) {
		snprintf(tp->err, sizeof tp->err, "window: %s",
		    vcl_tca_lib_error(&vcl_tca_L, res));
		goto out;
	}
	if ((t->efd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK |
	    TFD_CLOEXEC)) == -1) {
		snprintf(tp->err, sizeof tp->err, "timerfd: %s",
		    strerror(errno));
		goto out;
	}
	memset(p, 0, (size_t)VCL_TCA_LANES * VCL_TCA_LANE);
	/*
	 * Sizes left to the link's tcp stream: under VCL_TCA_TCP_BELOW
	 * (default 4 KiB: a frame, a DMA, its ack and the loop's turns cost
	 * more than the bytes inline) or over VCL_TCA_TCP_ABOVE (none).
	 */
	tp->stream_below = vcl_tca_env_size("VCL_TCA_TCP_BELOW", 4096);
	tp->stream_above = vcl_tca_env_size("VCL_TCA_TCP_ABOVE", 0);
	t->hold_ns = vcl_tca_env_size("VCL_TCA_HOLD_MS", VCL_TCA_HOLD_MS) *
	    1000000ull;
	if (t->hold_ns == 0)
		t->hold_ns = VCL_TCA_HOLD_MS * 1000000ull;
	t->nap_us = VCL_TCA_NAP_MIN_US;
	/* Seed 003's channel bandwidths until measured. */
	t->w[0] = 2.9;
	t->w[1] = 1.3;
	t->w[2] = 0.7;
	t->w[3] = 0.7;
	vcl_tca_used[i] = 1;
	t->lane = (uint32_t)(node * VCL_TCA_INST + i);
	t->win = p;
	tp->priv = t;
	p = NULL;
	t = NULL;
	rc = VCL_TP_OK;
	vcl_log_info("tca: lane %u of domain %08x, library %s (%s)",
	    ((struct vcl_tca *)tp->priv)->lane, vcl_tca_dhash, vcl_tca_L.path,
	    vcl_tca_L.model ? "the PEACH2 model" : "vendor");
out:
	if (p != NULL)
		vcl_tca_L.free(p, tcaMemoryCPU);
	free(t);
	pthread_mutex_unlock(&vcl_tca_lock);
	return (rc);
}

static void
vcl_tca_fini(struct vcl_tp *tp)
{
	struct vcl_tca	*t = tp->priv;

	if (t == NULL)
		return;
	pthread_mutex_lock(&vcl_tca_lock);
	vcl_tca_used[t->lane % VCL_TCA_INST] = 0;
	vcl_tca_L.free(t->win, tcaMemoryCPU);
	close(t->efd);
	pthread_mutex_unlock(&vcl_tca_lock);
	free(t);
	tp->priv = NULL;
}

/* The address: domain, lane and the window's handle. */
static int
vcl_tca_address(struct vcl_tp *tp, uint8_t *buf, size_t *len)
{
	struct vcl_tca		*t = tp->priv;
	struct vcl_tca_addr	 a;

	if (*len < sizeof a) {
		snprintf(tp->err, sizeof tp->err, "address buffer too small");
		return (VCL_TP_EINVAL);
	}
	memset(&a, 0, sizeof a);
	a.magic = VCL_TCA_MAGIC;
	a.domain = vcl_tca_dhash;
	a.lane = t->lane;
	a.win = t->winh;
	memcpy(buf, &a, sizeof a);
	*len = sizeof a;
	return (VCL_TP_OK);
}

/* Our lane (in our window): what the other end of the link writes. */
static unsigned char *
vcl_tca_mylane(struct vcl_tp_ep *ep)
{
	struct vcl_tca		*t = ep->tp->priv;
	struct vcl_tca_ep	*e = ep->priv;

	return (t->win + (size_t)e->rx * VCL_TCA_LANE);
}

/* The notification slot of a lane of an instance (unique per process). */
static int
vcl_tca_slot(uint32_t lane, int k)
{
	return ((int)((lane % VCL_TCA_INST) * VCL_TCA_LANES + (uint32_t)k) %
	    TCA_NSLOTS);
}

/* The endpoint to a peer of the same domain; else EINVAL (tcp then). */
static int
vcl_tca_connect(struct vcl_tp_ep *ep, const uint8_t *addr, size_t len)
{
	struct vcl_tca		*t = ep->tp->priv;
	struct vcl_tca_ep	*e;
	struct vcl_tca_addr	 a;
	void			*p = NULL;
	tcaresult		 res;

	if (len != sizeof a) {
		snprintf(ep->err, sizeof ep->err, "tca address of %zu bytes",
		    len);
		return (VCL_TP_EINVAL);
	}
	memcpy(&a, addr, sizeof a);
	if (a.magic != VCL_TCA_MAGIC || a.domain != vcl_tca_dhash ||
	    a.lane >= TCA_MAX_NODES * VCL_TCA_INST || a.lane == t->lane) {
		snprintf(ep->err, sizeof ep->err, "peer not in this TCA "
		    "domain");
		return (VCL_TP_EINVAL);
	}
	if ((e = calloc(1, sizeof *e)) == NULL) {
		snprintf(ep->err, sizeof ep->err, "out of memory");
		return (VCL_TP_ENOMEM);
	}
	e->peer = a;
	res = vcl_tca_L.malloc(&p, VCL_TCA_HDR + 2 * VCL_TCA_CHUNK,
	    tcaMemoryCPU);
	if (res == TCA_SUCCESS)
		res = vcl_tca_L.create_handle(&e->stageh, p, VCL_TCA_HDR +
		    2 * VCL_TCA_CHUNK, tcaMemoryCPU);
	if (res != TCA_SUCCESS) {
		snprintf(ep->err, sizeof ep->err, "staging: %s",
		    vcl_tca_lib_error(&vcl_tca_L, res));
		if (p != NULL)
			vcl_tca_L.free(p, tcaMemoryCPU);
		free(e);
		return (VCL_TP_EIO);
	}
	memset(p, 0, VCL_TCA_HDR + 2 * VCL_TCA_CHUNK);
	/* The lane the other end expects when it has no message path. */
	e->rx = (int)(a.lane % VCL_TCA_LANES);
	if (t->busy & (1u << e->rx)) {
		for (e->rx = 0; e->rx < VCL_TCA_LANES &&
		    (t->busy & (1u << e->rx)); e->rx++)
			;
	}
	if (e->rx == VCL_TCA_LANES) {
		snprintf(ep->err, sizeof ep->err, "all %d tca lanes in use",
		    VCL_TCA_LANES);
		vcl_tca_L.free(p, tcaMemoryCPU);
		free(e);
		return (VCL_TP_EBUSY);
	}
	t->busy |= 1u << e->rx;
	t->eps[e->rx] = ep;
	memset(t->win + (size_t)e->rx * VCL_TCA_LANE, 0, VCL_TCA_LANE);
	e->prx = -1;
	e->stage = p;
	ep->priv = e;
	return (VCL_TP_OK);
}

/* Now, in ns (the split's channel times). */
static uint64_t
vcl_tca_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

/*
 * Push [stage + soff, len) to window offset doff split over the four
 * channels by the instance's weights, wait for all of them, and weigh the
 * channels again from their times (seed 003's adaptive split: the four
 * controllers share the board's read tags unevenly). No notification:
 * the header that follows on channel 0 is started after all are done.
 */
static tcaresult
vcl_tca_push_split(struct vcl_tp_ep *ep, uint64_t doff, uint64_t soff,
    uint64_t len)
{
	struct vcl_tca		*t = ep->tp->priv;
	struct vcl_tca_ep	*e = ep->priv;
	tcaDesc			*d;
	size_t			 part[TCA_NCHANNELS], off = 0;
	uint64_t		 t0, tc[TCA_NCHANNELS];
	tcaresult		 res = TCA_SUCCESS;
	int			 c, left, started = 0;

	vcl_tca_split((size_t)len, t->w, TCA_NCHANNELS, part);
	for (c = 0; c < TCA_NCHANNELS && res == TCA_SUCCESS; c++) {
		if ((d = vcl_tca_L.desc_new()) == NULL)
			return (TCA_ERROR_OUT_OF_MEMORY);
		res = vcl_tca_L.desc_set_memcpy(d, &e->peer.win,
		    (off_t)(doff + off), &e->stageh, (off_t)(soff + off),
		    part[c], 0, 0, 0);
		if (res == TCA_SUCCESS)
			res = vcl_tca_L.desc_set(d, c);
		vcl_tca_L.desc_free(d);
		off += part[c];
	}
	t0 = vcl_tca_now();
	for (c = 0; c < TCA_NCHANNELS && res == TCA_SUCCESS; c++) {
		res = vcl_tca_L.start_dma_desc(c);
		started = c + 1;
		tc[c] = 0;
	}
	/* Each channel's time: polled where the library can, else waited. */
	for (left = started; vcl_tca_L.test_dmac != NULL && left > 0; ) {
		for (c = 0; c < started; c++) {
			if (tc[c] == 0 && vcl_tca_L.test_dmac(c) ==
			    TCA_SUCCESS) {
				tc[c] = vcl_tca_now() - t0 + 1;
				left--;
			}
		}
		if (vcl_tca_now() - t0 > 1000000000ull)
			break;		/* the waits below are bounded */
	}
	for (c = 0; c < started; c++) {
		if (vcl_tca_L.wait_dmac(c) != TCA_SUCCESS &&
		    res == TCA_SUCCESS)
			res = TCA_ERROR_INVALID_VALUE;
		if (tc[c] == 0)
			tc[c] = vcl_tca_now() - t0 + 1;
	}
	if (res == TCA_SUCCESS)
		vcl_tca_weigh(part, tc, TCA_NCHANNELS, t->w);
	return (res);
}

/*
 * Push a chain of one or two transfers into the peer's window and wait for
 * the channel: [stage + soff, len) to window offset doff (len 0: none),
 * then the 64 (or 32) header bytes at stage + hoff to window offset hpos,
 * notifying with tag when notify.
 */
static int
vcl_tca_push(struct vcl_tp_ep *ep, uint64_t doff, uint64_t soff,
    uint64_t len, uint64_t hpos, uint64_t hoff, size_t hlen, int notify,
    int tag)
{
	struct vcl_tca_ep	*e = ep->priv;
	tcaDesc			*d;
	tcaresult		 res = TCA_SUCCESS;
	int			 slot = vcl_tca_slot(e->peer.lane, e->prx);

	if (len >= VCL_TCA_SPLIT_MIN && len <= VCL_TCA_SPLIT_MAX) {
		if ((res = vcl_tca_push_split(ep, doff, soff, len)) !=
		    TCA_SUCCESS)
			goto out;
		len = 0;
	}
	if ((d = vcl_tca_L.desc_new()) == NULL) {
		snprintf(ep->err, sizeof ep->err, "out of memory");
		return (VCL_TP_ENOMEM);
	}
	if (len > 0)
		res = vcl_tca_L.desc_set_memcpy(d, &e->peer.win, (off_t)doff,
		    &e->stageh, (off_t)soff, (size_t)len, 0, 0, 0);
	if (res == TCA_SUCCESS)
		res = vcl_tca_L.desc_set_memcpy(d, &e->peer.win, (off_t)hpos,
		    &e->stageh, (off_t)hoff, hlen, notify ? tcaDMANotify : 0,
		    slot, tag);
	if (res == TCA_SUCCESS)
		res = vcl_tca_L.desc_set(d, VCL_TCA_CH);
	if (res == TCA_SUCCESS)
		res = vcl_tca_L.start_dma_desc(VCL_TCA_CH);
	if (res == TCA_SUCCESS)
		res = vcl_tca_L.wait_dmac(VCL_TCA_CH);
	vcl_tca_L.desc_free(d);
out:
	if (res != TCA_SUCCESS) {
		snprintf(ep->err, sizeof ep->err, "DMA: %s",
		    vcl_tca_lib_error(&vcl_tca_L, res));
		return (VCL_TP_EIO);
	}
	return (VCL_TP_OK);
}

/* Queue a send; progress pushes it. */
static int
vcl_tca_send(struct vcl_tp_ep *ep, uint64_t xid, const struct iovec *iov,
    int cnt, vcl_tp_done_fn done, void *arg)
{
	struct vcl_tca_ep	*e = ep->priv;
	struct vcl_tca_send	*s, **pp;
	int			 i;

	if (e->closed) {
		snprintf(ep->err, sizeof ep->err, "link closed");
		return (VCL_TP_ECLOSED);
	}
	if ((s = calloc(1, sizeof *s)) == NULL ||
	    (cnt > 0 && (s->iov = calloc((size_t)cnt, sizeof *iov)) == NULL)) {
		free(s);
		snprintf(ep->err, sizeof ep->err, "out of memory");
		return (VCL_TP_ENOMEM);
	}
	for (i = 0; i < cnt; i++) {
		s->iov[i] = iov[i];
		s->total += iov[i].iov_len;
	}
	s->cnt = cnt;
	s->xid = xid;
	s->done = done;
	s->arg = arg;
	for (pp = &e->sends; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = s;
	vcl_tca_signal(ep->tp, 1);
	return (VCL_TP_OK);
}

/* Post a receive of xid. */
static int
vcl_tca_recv(struct vcl_tp_ep *ep, uint64_t xid, const struct vcl_tp_dest *dest,
    vcl_tp_done_fn done, void *arg)
{
	struct vcl_tca_ep	*e = ep->priv;
	struct vcl_tca_recv	*r, **pp;

	if (e->closed) {
		snprintf(ep->err, sizeof ep->err, "link closed");
		return (VCL_TP_ECLOSED);
	}
	if (e->nposted >= ep->tp->conf.max_posted) {
		snprintf(ep->err, sizeof ep->err, "%llu receives posted",
		    (unsigned long long)e->nposted);
		return (VCL_TP_EBUSY);
	}
	if ((r = calloc(1, sizeof *r)) == NULL) {
		snprintf(ep->err, sizeof ep->err, "out of memory");
		return (VCL_TP_ENOMEM);
	}
	r->xid = xid;
	r->dest = *dest;
	r->done = done;
	r->arg = arg;
	for (pp = &e->recvs; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = r;
	e->nposted++;
	vcl_tca_signal(ep->tp, 1);
	return (VCL_TP_OK);
}

/* Unlink a receive and run its completion. */
static void
vcl_tca_recv_done(struct vcl_tca_ep *e, struct vcl_tca_recv *r, int err)
{
	struct vcl_tca_recv	**pp;

	for (pp = &e->recvs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	}
	e->nposted--;
	r->done(r->arg, err);
	free(r);
}

/* Cancel: its done runs now (from cancel, as the contract allows). */
static void
vcl_tca_cancel(struct vcl_tp_ep *ep, uint64_t xid)
{
	struct vcl_tca_ep	*e = ep->priv;
	struct vcl_tca_recv	*r;

	for (r = e->recvs; r != NULL; r = r->next) {
		if (r->xid == xid)
			break;
	}
	if (r == NULL)
		return;
	/* Bytes that still come for it are dropped. */
	e->dropxid[e->ndrop++ % 8] = xid;
	vcl_tca_recv_done(e, r, VCL_TP_ECANCELED);
}

/*
 * Set the instance's timerfd: off (0), readable at once (1), or readable
 * after us microseconds (2). Setting it clears what had expired.
 */
static void
vcl_tca_arm(struct vcl_tca *t, int how, uint64_t us)
{
	struct itimerspec	its;

	if (how == t->armed && how != 2)
		return;
	memset(&its, 0, sizeof its);
	if (how == 1)
		its.it_value.tv_nsec = 1;
	else if (how == 2) {
		its.it_value.tv_sec = (time_t)(us / 1000000);
		its.it_value.tv_nsec = (long)(us % 1000000) * 1000;
	}
	(void)timerfd_settime(t->efd, 0, &its, NULL);
	t->armed = how;
}

/* Work was posted (on) or none is left (off): progress at once, or not. */
static void
vcl_tca_signal(struct vcl_tp *tp, int on)
{
	struct vcl_tca	*t = tp->priv;

	t->idle = 0;
	t->nap_us = VCL_TCA_NAP_MIN_US;
	vcl_tca_arm(t, on ? 1 : 0, 0);
}

/*
 * The instance's source: its timerfd, readable when progress should run
 * (at once while bytes move, after a nap while work waits on the other
 * end); an endpoint's: its control stream (its end fails the link).
 */
static int
vcl_tca_evfd(struct vcl_tp *tp, struct vcl_tp_ep *ep, short *ev)
{
	*ev = VCL_TP_EV_READ;
	if (ep == NULL)
		return (((struct vcl_tca *)tp->priv)->efd);
	if (ep->ctl == NULL)
		return (-1);
	return (ep->ctl->fd);
}

/* Fail everything pending with err (the link is gone). */
static void
vcl_tca_fail_all(struct vcl_tp_ep *ep, int err)
{
	struct vcl_tca_ep	*e = ep->priv;
	struct vcl_tca_send	*s;

	e->closed = 1;
	while ((s = e->sends) != NULL) {
		e->sends = s->next;
		s->done(s->arg, err);
		free(s->iov);
		free(s);
	}
	while (e->recvs != NULL)
		vcl_tca_recv_done(e, e->recvs, err);
}

/* Copy n bytes of a send from offset off into dst. */
static void
vcl_tca_gather(struct vcl_tca_send *s, uint64_t off, unsigned char *dst,
    uint64_t n)
{
	uint64_t	c;
	int		i;

	for (i = 0; i < s->cnt && n > 0; i++) {
		if (off >= s->iov[i].iov_len) {
			off -= s->iov[i].iov_len;
			continue;
		}
		c = s->iov[i].iov_len - off;
		if (c > n)
			c = n;
		memcpy(dst, (unsigned char *)s->iov[i].iov_base + off, c);
		dst += c;
		n -= c;
		off = 0;
	}
}

/* Push the next chunks of the first send while fewer than 2 are unacked. */
static int
vcl_tca_push_sends(struct vcl_tp_ep *ep)
{
	struct vcl_tca_ep	*e = ep->priv;
	struct vcl_tca_ack	*ack;
	struct vcl_tca_mbox	*mb;
	struct vcl_tca_send	*s;
	uint64_t		 n, h, lane;
	int			 rc, did = 0;

	ack = (struct vcl_tca_ack *)(void *)(vcl_tca_mylane(ep) +
	    VCL_TCA_ACK_OFF);
	if (ack->closed) {
		snprintf(ep->err, sizeof ep->err, "peer closed");
		return (VCL_TP_ECLOSED);
	}
	if (e->prx < 0)
		return (0);		/* the peer's lane not known yet */
	lane = (uint64_t)e->prx * VCL_TCA_LANE;
	while ((s = e->sends) != NULL) {
		if (s->last_seq != 0 && s->off == s->total) {
			if (ack->ack_seq < s->last_seq)
				break;
			e->sends = s->next;
			s->done(s->arg, VCL_TP_OK);
			free(s->iov);
			free(s);
			did = 1;
			continue;
		}
		if (e->seq - ack->ack_seq >= 2)
			break;
		h = (e->seq + 1) % 2;
		n = s->total - s->off;
		if (n > VCL_TCA_CHUNK)
			n = VCL_TCA_CHUNK;
		vcl_tca_gather(s, s->off, e->stage + VCL_TCA_HDR +
		    h * VCL_TCA_CHUNK, n);
		memset(e->stage + VCL_TCA_HDR + h * VCL_TCA_CHUNK + n, 0,
		    ((n + 15) & ~15ull) - n);
		mb = (struct vcl_tca_mbox *)(void *)(e->stage + h * 64);
		mb->seq = e->seq + 1;
		mb->xid = s->xid;
		mb->total = s->total;
		mb->off = s->off;
		mb->len = n;
		mb->lane = (uint64_t)e->rx;
		rc = vcl_tca_push(ep, lane + VCL_TCA_HDR + h * VCL_TCA_CHUNK,
		    VCL_TCA_HDR + h * VCL_TCA_CHUNK, (n + 15) & ~15ull,
		    lane + h * 64, h * 64, 64, 1, (int)((e->seq + 1) &
		    0x7fffffff));
		if (rc != VCL_TP_OK)
			return (rc);
		e->seq++;
		s->off += n;
		s->last_seq = e->seq;
		did = 1;
	}
	return (did);
}

/* Is xid one whose bytes are to be dropped? */
static int
vcl_tca_dropped(struct vcl_tca_ep *e, uint64_t xid)
{
	int	i;

	for (i = 0; i < 8 && i < e->ndrop; i++) {
		if (e->dropxid[i] == xid)
			return (1);
	}
	return (0);
}

/*
 * A chunk no receive is posted for: 1 once it has waited in the lane past
 * the instance's bound, its transfer then dropped (with what else of it
 * still comes); else 0, the clock started at its first sight.
 */
static int
vcl_tca_held_long(struct vcl_tp_ep *ep, const struct vcl_tca_mbox *mb)
{
	struct vcl_tca		*t = ep->tp->priv;
	struct vcl_tca_ep	*e = ep->priv;
	uint64_t		 now = vcl_tca_now();

	if (e->held_since == 0 || e->held_seq != mb->seq) {
		e->held_seq = mb->seq;
		e->held_since = now;
		return (0);
	}
	if (now - e->held_since < t->hold_ns)
		return (0);
	vcl_log_warn("tca: transfer %llu: no receive posted in %llu ms, its "
	    "bytes dropped", (unsigned long long)mb->xid,
	    (unsigned long long)(t->hold_ns / 1000000));
	e->dropxid[e->ndrop++ % 8] = mb->xid;
	return (1);
}

/* Take the chunks that arrived in our window for posted receives. */
static int
vcl_tca_take(struct vcl_tp_ep *ep)
{
	struct vcl_tca_ep	*e = ep->priv;
	struct vcl_tca_mbox	*mb;
	struct vcl_tca_recv	*r;
	struct vcl_tca_ack	*ack;
	unsigned char		*lane = vcl_tca_mylane(ep);
	uint64_t		 h, mylane;
	tcaresult		 res;
	int			 rc, did = 0, drop;

	for (;;) {
		h = (e->rseq + 1) % 2;
		mb = (struct vcl_tca_mbox *)(void *)(lane + h * 64);
		if (mb->seq != e->rseq + 1)
			break;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		/*
		 * The header names the sender's lane, where our acks go: a
		 * receiver needs no announcement of its own (the host's may
		 * be queued behind the very push whose bytes these are).
		 */
		if (mb->lane >= VCL_TCA_LANES || (e->prx >= 0 &&
		    (uint64_t)e->prx != mb->lane)) {
			snprintf(ep->err, sizeof ep->err, "bad tca chunk lane");
			return (VCL_TP_EIO);
		}
		e->prx = (int)mb->lane;
		mylane = (uint64_t)e->prx * VCL_TCA_LANE;
		for (r = e->recvs; r != NULL; r = r->next) {
			if (r->xid == mb->xid)
				break;
		}
		drop = vcl_tca_dropped(e, mb->xid);
		if (r == NULL && !drop && !vcl_tca_held_long(ep, mb))
			break;		/* held in the lane until posted */
		e->held_since = 0;
		/* The header's notification: visible at the modelled time. */
		res = vcl_tca_L.wait_dma_recv_desc(&e->peer.win,
		    vcl_tca_slot(((struct vcl_tca *)ep->tp->priv)->lane, e->rx),
		    (int)(mb->seq & 0x7fffffff));
		if (res != TCA_SUCCESS) {
			snprintf(ep->err, sizeof ep->err, "notification: %s",
			    vcl_tca_lib_error(&vcl_tca_L, res));
			return (VCL_TP_EIO);
		}
		if (r != NULL && !r->drop && (mb->total != r->dest.len ||
		    mb->len > VCL_TCA_CHUNK || mb->off > mb->total ||
		    mb->len > mb->total - mb->off)) {
			snprintf(ep->err, sizeof ep->err, "transfer %llu: %llu "
			    "bytes sent, %llu posted",
			    (unsigned long long)mb->xid,
			    (unsigned long long)mb->total,
			    (unsigned long long)r->dest.len);
			e->dropxid[e->ndrop++ % 8] = r->xid;
			vcl_tca_recv_done(e, r, VCL_TP_ETOOBIG);
			r = NULL;
		}
		if (r != NULL && r->dest.base != NULL)
			memcpy((unsigned char *)r->dest.base + mb->off,
			    lane + VCL_TCA_HDR + h * VCL_TCA_CHUNK, mb->len);
		e->rseq++;
		did = 1;
		/* The ack, into our lane of the sender's window. */
		ack = (struct vcl_tca_ack *)(void *)(e->stage + 256);
		ack->ack_seq = e->rseq;
		rc = vcl_tca_push(ep, 0, 0, 0, mylane + VCL_TCA_ACK_OFF, 256,
		    32, 0, 0);
		if (rc != VCL_TP_OK)
			return (rc);
		if (r != NULL && (r->got += mb->len) == r->dest.len)
			vcl_tca_recv_done(e, r, VCL_TP_OK);
	}
	return (did);
}

/* Peek the control stream: 1 when it has ended (the peer is gone). */
static int
vcl_tca_ctl_gone(struct vcl_tp_ep *ep)
{
	char	c;
	ssize_t	n;

	if (ep->ctl == NULL || ep->ctl->fd < 0)
		return (1);
	n = recv(ep->ctl->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR));
}

static int	vcl_tca_progress_ep(struct vcl_tp *, struct vcl_tp_ep *);

/* Progress one endpoint, or (ep NULL) every endpoint of the instance. */
static int
vcl_tca_progress(struct vcl_tp *tp, struct vcl_tp_ep *ep)
{
	struct vcl_tca	*t = tp->priv;
	int		 i, again = 0;

	if (ep != NULL)
		again = vcl_tca_progress_ep(tp, ep);
	else {
		for (i = 0; i < VCL_TCA_LANES; i++) {
			if (t->eps[i] != NULL)
				again |= vcl_tca_progress_ep(tp, t->eps[i]);
		}
	}
	if (!again || t->did) {
		/* Nothing pending, or bytes moved: progress again at once. */
		vcl_tca_signal(tp, again);
	} else if (++t->idle <= VCL_TCA_SPIN) {
		/*
		 * Work pending but none done: the other end's process must
		 * run for any to come (on a host of few cores, the peer
		 * server itself). Yield a few passes, then nap.
		 */
		vcl_tca_arm(t, 1, 0);
		sched_yield();
	} else {
		vcl_tca_arm(t, 2, t->nap_us);
		if ((t->nap_us *= 2) > VCL_TCA_NAP_MAX_US)
			t->nap_us = VCL_TCA_NAP_MAX_US;
		again = 0;	/* sleep on the timer */
	}
	t->did = 0;
	return (again);
}

/* Push sends, take arrivals, notice a vanished peer. */
static int
vcl_tca_progress_ep(struct vcl_tp *tp, struct vcl_tp_ep *ep)
{
	struct vcl_tca_ep	*e;
	struct vcl_tca_ctl	 c;
	int			 a, b;

	if ((e = ep->priv) == NULL || e->closed)
		return (0);
	if (!e->announced) {
		e->announced = 1;
		vcl_log_debug("tca: lane %d announced (%s)", e->rx,
		    ep->ctl_out != NULL ? "message" : "static");
		if (ep->ctl_out != NULL) {
			c.magic = VCL_TCA_MAGIC;
			c.lane = (uint32_t)e->rx;
			if (ep->ctl_out(ep, (const uint8_t *)&c, sizeof c) != 0)
				vcl_tca_fail_all(ep, VCL_TP_ECLOSED);
		} else
			e->prx = (int)(((struct vcl_tca *)tp->priv)->lane %
			    VCL_TCA_LANES);
	}
	a = vcl_tca_push_sends(ep);
	b = a >= 0 ? vcl_tca_take(ep) : a;
	if (a < 0 || b < 0 || ((e->sends != NULL || e->recvs != NULL) &&
	    vcl_tca_ctl_gone(ep))) {
		if (a >= 0 && b >= 0)
			snprintf(ep->err, sizeof ep->err, "link closed");
		vcl_tca_fail_all(ep, a == VCL_TP_EIO || b == VCL_TP_EIO ?
		    VCL_TP_EIO : VCL_TP_ECLOSED);
		return (0);
	}
	if (a > 0 || b > 0)
		((struct vcl_tca *)tp->priv)->did = 1;
	return (a > 0 || b > 0 || e->sends != NULL || e->recvs != NULL);
}

/* Fail what is pending, tell the peer (best effort), free the staging. */
static void
vcl_tca_close(struct vcl_tp_ep *ep)
{
	struct vcl_tca_ep	*e = ep->priv;
	struct vcl_tca_ack	*ack;
	struct vcl_tca_mbox	*mb;
	int			 h;

	if (e == NULL)
		return;
	/* Consume the notifications of chunks left in the lane. */
	for (h = 0; h < 2; h++) {
		mb = (struct vcl_tca_mbox *)(void *)(vcl_tca_mylane(ep) +
		    ((e->rseq + 1) % 2) * 64);
		if (mb->seq != e->rseq + 1 || vcl_tca_L.wait_dma_recv_desc(
		    &e->peer.win, vcl_tca_slot(((struct vcl_tca *)
		    ep->tp->priv)->lane, e->rx),
		    (int)(mb->seq & 0x7fffffff)) != TCA_SUCCESS)
			break;
		e->rseq++;
	}
	if (!e->closed && e->prx >= 0) {
		ack = (struct vcl_tca_ack *)(void *)(e->stage + 256);
		ack->ack_seq = e->rseq;
		ack->closed = 1;
		(void)vcl_tca_push(ep, 0, 0, 0, (uint64_t)e->prx *
		    VCL_TCA_LANE + VCL_TCA_ACK_OFF, 256, 32, 0, 0);
	}
	vcl_tca_fail_all(ep, VCL_TP_ECLOSED);
	/* Our lane starts clean for its next link. */
	memset(vcl_tca_mylane(ep), 0, VCL_TCA_LANE);
	((struct vcl_tca *)ep->tp->priv)->busy &= ~(1u << e->rx);
	((struct vcl_tca *)ep->tp->priv)->eps[e->rx] = NULL;
	vcl_tca_L.free(e->stage, tcaMemoryCPU);
	free(e);
	ep->priv = NULL;
}

/* The other end's lane announcement. */
static int
vcl_tca_ctl_in(struct vcl_tp_ep *ep, const uint8_t *data, size_t len)
{
	struct vcl_tca_ep	*e = ep->priv;
	struct vcl_tca_ctl	 c;

	if (e == NULL || len != sizeof c) {
		snprintf(ep->err, sizeof ep->err, "bad tca message");
		return (VCL_TP_EINVAL);
	}
	memcpy(&c, data, sizeof c);
	if (c.magic != VCL_TCA_MAGIC || c.lane >= VCL_TCA_LANES ||
	    (e->prx >= 0 && (uint32_t)e->prx != c.lane)) {
		snprintf(ep->err, sizeof ep->err, "bad tca lane announcement");
		return (VCL_TP_EINVAL);
	}
	e->prx = (int)c.lane;
	vcl_log_debug("tca: the other end writes to its lane %u, we to %d",
	    c.lane, e->rx);
	return (VCL_TP_OK);
}

const struct vcl_transport vcl_transport_tca = {
	.name = "tca",
	.caps = VCL_TP_PEER,
	.probe = vcl_tca_probe,
	.open = vcl_tca_open,
	.fini = vcl_tca_fini,
	.address = vcl_tca_address,
	.connect = vcl_tca_connect,
	.send = vcl_tca_send,
	.recv = vcl_tca_recv,
	.cancel = vcl_tca_cancel,
	.evfd = vcl_tca_evfd,
	.progress = vcl_tca_progress,
	.close = vcl_tca_close,
	.ctl_in = vcl_tca_ctl_in,
};
