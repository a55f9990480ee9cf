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
 *
 * Placement (shared staging, VCL_TP_PLACE). At connect each end makes a
 * ring of its own: a memfd sealed against shrinking and growing, announced
 * to the other end only, in a UCX message, by its /proc/PID/fd/N path
 * (which only processes of the same user can open). The other end opens
 * it, checks its seals and size, maps it and says so; the owner then
 * closes that descriptor, so nobody else can open it (and at close in any
 * case). The seals are what keep the writer safe: a segment the owner
 * could shrink would fault the writer's stores into it. Only
 * the other end of that link ever writes the ring and nothing else is put
 * in it, so it holds no byte the peer did not send. Messages (struct
 * vcl_ucx_pmsg, one UCX tag per link and direction: the sender's namespace
 * marked VCL_UCX_CTL_NS, and the link's number) carry the rendezvous: the receiver OFFERs a slot for a chunk
 * it chose (offset, length), the sender writes it there and says FILLED
 * (or UNUSED), the receiver hands the chunk to its host and, once consumed,
 * offers the slot for the next chunk; DONE when all were consumed, ABORT
 * from either side. Every index and length in a message is checked; one
 * that is wrong stops placement on the link and fails what it carried.
 * UCX's own ucp_rkey_ptr is not used: it checks no bounds (a receiver
 * naming any address would make the sender write anywhere in itself).
 *
 * Direct mode (pulling, VCL_UCX_DIRECT). A RING message also carries the
 * ring's address in its owner (xid; 0: an end that does not pull or give).
 * The end that maps it writes a cookie into the ring and reads it back
 * from the owner's pid at that address with process_vm_readv: only then
 * does it know that the pid is the ring's owner and that the kernel lets
 * it read that process (no Yama, no container between them), and it pulls
 * on this link. A receive whose host can take the bulk itself (dest.pull)
 * asks PULL instead of offering slots; the sender answers SOURCE (its
 * bytes' address in itself, the bulk's length) or NOSOURCE (slots then).
 * The host reads the bulk from the sender's pid into its own memory and
 * says pulled; DONE (or ABORT) ends it as for slots. A sender never
 * writes the receiver's memory: an address a peer names is only ever
 * read, in that peer, and a pull that ends after its link did is ignored.
 * A sender's bytes stay named (mapped by its host) until the receiver's
 * DONE or ABORT or the link's end; the host does not cancel a receive it
 * pulls (it stops its pull, whose end sends ABORT), and answers its
 * transfer only once its pull ended, whatever ended the receive first
 * (vcl_op_peer.c, struct vcl_pull).
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include <netinet/in.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vcl_log.h"
#include "vcl_tls.h"
#include "vcl_transport.h"
#include "vcl_ucx.h"

#define VCL_UCX_CTL_NS		0x7fffffffu	/* placement's tags */
#define VCL_UCX_SLOTS_MAX	16

/* The instance (tp->priv): the engine and the shared staging's limits. */
struct vcl_ucx_tp {
	struct vcl_ucx		*u;
	struct vcl_tp		*tp;
	int			 place;		/* 0: no shared staging */
	uint64_t		 slot_len;	/* VCL_UCX_SLOT */
	unsigned		 nslots;	/* VCL_UCX_SLOTS */
	uint64_t		 shm_max;	/* VCL_UCX_SHM_MAX: our rings */
	uint64_t		 shm_bytes;
	uint64_t		 place_min;	/* VCL_UCX_PLACE_MIN */
	int			 direct;	/* VCL_UCX_DIRECT: pulling */
	TAILQ_HEAD(, vcl_ucx_xfer) fins;	/* placed: done to run */
	LIST_HEAD(, vcl_ucx_ring) rings;	/* ours (the peers write) */
};
#define VCL_UCX_U(tp)	(((struct vcl_ucx_tp *)(tp)->priv)->u)

/* A placement message (one host: host byte order; every field checked). */
enum {
	VCL_UCX_PM_RING = 1,	/* name, off: slot length, len: slots */
	VCL_UCX_PM_MAPPED,	/* the ring is mapped: close its path */
	VCL_UCX_PM_OFFER,	/* write [off, off + len) of xid in slot */
	VCL_UCX_PM_FILLED,	/* slot holds its chunk of xid */
	VCL_UCX_PM_UNUSED,	/* slot not written (no such placed send) */
	VCL_UCX_PM_DONE,	/* every chunk of xid consumed */
	VCL_UCX_PM_ABORT,	/* xid failed on the sending side */
	VCL_UCX_PM_PULL,	/* the receiver would read all len of xid */
	VCL_UCX_PM_SOURCE,	/* xid's len bytes are at off in the sender */
	VCL_UCX_PM_NOSOURCE,	/* not readable: offer slots */
};
struct vcl_ucx_pmsg {
	uint32_t		 type;
	uint32_t		 slot;
	uint64_t		 xid;
	uint64_t		 off;
	uint64_t		 len;
	char			 name[32];
};

enum { VCL_UCX_SLOT_FREE, VCL_UCX_SLOT_OFFERED, VCL_UCX_SLOT_HELD };
struct vcl_ucx_slot {
	struct vcl_ucx_ring	*ring;
	unsigned		 idx;
	int			 state;
	uint64_t		 xid, off, len;
	uint64_t		 serial;	/* ours: the receive offered to */
};

/*
 * A ring of slots in shared memory: ours (the peer writes it) or the
 * peer's, mapped. It lives while its endpoint does and while the host
 * holds one of its slots (refs), whichever is longer.
 */
struct vcl_ucx_ring {
	struct vcl_ucx_tp	*t;
	struct vcl_ucx_tpep	*e;		/* NULL once it closed */
	int			 mine;
	uint8_t			*base;
	uint64_t		 size, slot_len;
	unsigned		 nslots;
	char			 name[32];
	int			 fd;		/* ours, -1 once the peer mapped it */
	dev_t			 dev;		/* ours: the memfd's identity */
	ino_t			 ino;
	LIST_ENTRY(vcl_ucx_ring) entry;		/* ours: on t->rings */
	int			 refs;
	struct vcl_ucx_slot	 slots[VCL_UCX_SLOTS_MAX];
};

/* A send or receive in flight, for its done and for cancel by xid. */
struct vcl_ucx_xfer {
	struct vcl_ucx_tpep	*e;
	uint64_t		 xid;
	int			 recv;
	int			 drop;		/* no destination: discard */
	struct vcl_ucx_op	*op;
	vcl_tp_done_fn		 done;
	void			*arg;
	/* Placed transfers. */
	int			 placed;
	uint64_t		 len, next, got;
	uint64_t		 chunk;		/* a receive's chunk length */
	uint64_t		 serial;	/* a receive's, on its endpoint */
	struct vcl_tp_dest	 dest;
	vcl_tp_slot_fn		 slot;
	int			 fin_err;
	struct vcl_ucx_tpep	*fin_ep;	/* ended on: identity only */
	/* Pulling: a send's bytes in us; a receive's state. */
	const void		*src;
	int			 pulling;	/* no slots: PULL asked */
	int			 pull_asked;
	int			 pull_busy;	/* the host copies */
	LIST_ENTRY(vcl_ucx_xfer) entry;
	TAILQ_ENTRY(vcl_ucx_xfer) fin;
};

/* One endpoint: the engine's, the two namespaces, what is in flight. */
struct vcl_ucx_tpep {
	struct vcl_tp_ep	*ep;
	struct vcl_ucx_tp	*t;
	struct vcl_ucx_ep	*uep;		/* NULL once failed or closed */
	uint32_t		 ns;		/* our address's: our sends */
	uint32_t		 peer_ns;	/* theirs: our receives */
	int			 closing;	/* cancelled means closed */
	LIST_HEAD(, vcl_ucx_xfer) xfers;
	/* Placement. */
	uint32_t		 link;		/* both ends: vcl_ucx_tp_link */
	struct vcl_ucx_ring	*rx;		/* ours: the peer writes here */
	struct vcl_ucx_ring	*tx;		/* the peer's, mapped */
	struct vcl_ucx_xfer	*rx_active;	/* the placed receive served */
	uint64_t		 rx_serial;	/* placed receives posted */
	struct vcl_ucx_pmsg	 in;		/* the message being received */
	int			 bad;		/* placement stopped */
	/* Pulling: the peer's pid, checked; pulls the host runs. */
	long			 pull_pid;	/* 0: we do not pull */
	LIST_HEAD(, vcl_ucx_pull) pulls;
};

/* A pull the host runs: its token, kept until pulled (e NULL: ended). */
struct vcl_ucx_pull {
	struct vcl_ucx_tpep	*e;
	uint64_t		 xid, serial;
	LIST_ENTRY(vcl_ucx_pull) entry;
};

static void	vcl_ucx_pl_listen(struct vcl_ucx_tpep *);
static void	vcl_ucx_pl_stop(struct vcl_ucx_tpep *, int, int);
static void	vcl_ucx_pl_offer(struct vcl_ucx_tpep *);
static int	vcl_ucx_pull_in(struct vcl_ucx_tpep *,
		    const struct vcl_ucx_pmsg *);

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

/* A size from the environment (suffix k, m, g), else def. */
static uint64_t
vcl_ucx_env(const char *name, uint64_t def)
{
	const char		*v;
	char			*end;
	unsigned long long	 n;

	if ((v = getenv(name)) == NULL || *v == '\0')
		return (def);
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || end == v)
		return (def);
	switch (*end) {
	case 'k':
	case 'K':
		n <<= 10;
		break;
	case 'm':
	case 'M':
		n <<= 20;
		break;
	case 'g':
	case 'G':
		n <<= 30;
		break;
	default:
		break;
	}
	return (n);
}

/*
 * Shared staging's settings: VCL_UCX_PLACE (0: off), VCL_UCX_SLOT (bytes
 * of a slot, 4 KiB..1 GiB, default 4 MiB), VCL_UCX_SLOTS (slots of a
 * link's ring, 1..16, default 4), VCL_UCX_SHM_MAX (our rings together,
 * default 256 MiB), VCL_UCX_PLACE_MIN (smaller bulks are sent, default
 * 1 MiB; they ride the control stream).
 */
static void
vcl_ucx_tp_limits(struct vcl_ucx_tp *t)
{
	t->place = vcl_ucx_env("VCL_UCX_PLACE", 1) != 0;
	t->slot_len = vcl_ucx_env("VCL_UCX_SLOT", 4ull << 20);
	if (t->slot_len < 4096 || t->slot_len > (1ull << 30))
		t->slot_len = 4ull << 20;
	t->slot_len &= ~4095ull;
	t->nslots = (unsigned)vcl_ucx_env("VCL_UCX_SLOTS", 4);
	if (t->nslots < 1 || t->nslots > VCL_UCX_SLOTS_MAX)
		t->nslots = 4;
	t->shm_max = vcl_ucx_env("VCL_UCX_SHM_MAX", 256ull << 20);
	t->place_min = vcl_ucx_env("VCL_UCX_PLACE_MIN", 1ull << 20);
	t->direct = vcl_ucx_env("VCL_UCX_DIRECT", 1) != 0;
}

/* Run the done of placed transfers that ended. */
static int
vcl_ucx_tp_fins(struct vcl_ucx_tp *t)
{
	struct vcl_ucx_xfer	*x;
	int			 n = 0;

	while ((x = TAILQ_FIRST(&t->fins)) != NULL) {
		TAILQ_REMOVE(&t->fins, x, fin);
		x->done(x->arg, x->fin_err);
		free(x);
		n++;
	}
	return (n);
}

/* The instance: a UCX context and worker. */
static int
vcl_ucx_tp_open(struct vcl_tp *tp)
{
	struct vcl_ucx_limits	lim;
	struct vcl_ucx_tp	*t;

	memset(&lim, 0, sizeof lim);
	lim.max_recvs = (size_t)tp->conf.max_posted;
	if ((t = calloc(1, sizeof *t)) == NULL)
		return (VCL_TP_ENOMEM);
	t->tp = tp;
	TAILQ_INIT(&t->fins);
	LIST_INIT(&t->rings);
	vcl_ucx_tp_limits(t);
	/*
	 * A bulk under the placement minimum rides the control stream: UCX
	 * 1.13 carries it over TCP of its own (its shared memory and cma
	 * refuse peer error handling), a copy and round trips more than the
	 * stream's (a 4 KiB migration took 850 us instead of 120). Placement
	 * pays its messages (offer, filled, done) over that TCP too: under
	 * 1 MiB it was slower than the stream on the 2-core VM (64 KiB 3.6x,
	 * 256 KiB 2x), hence that default minimum.
	 */
	tp->stream_below = t->place_min;
	if ((t->u = vcl_ucx_create(&lim, tp->err, sizeof tp->err)) == NULL) {
		free(t);
		return (VCL_TP_EIO);
	}
	tp->priv = t;
	return (VCL_TP_OK);
}

/* Close the instance (its endpoints are closed). */
static void
vcl_ucx_tp_fini(struct vcl_tp *tp)
{
	struct vcl_ucx_tp	*t = tp->priv;

	vcl_ucx_free(t->u);	/* closes what is left: fins run there */
	vcl_ucx_tp_fins(t);
	free(t);
	tp->priv = NULL;
}

/* Our worker's address. */
static int
vcl_ucx_tp_address(struct vcl_tp *tp, uint8_t *buf, size_t *len)
{
	const void	*a;
	size_t		 alen;

	vcl_ucx_address(VCL_UCX_U(tp), &a, &alen);
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

/* A placement message sent; free its copy. */
static void
vcl_ucx_pl_sent(int status, void *arg)
{
	free(arg);
}

/* Send a placement message to the other end (lost if the link is). */
static void
vcl_ucx_pl_send(struct vcl_ucx_tpep *e, uint32_t type, uint32_t slot,
    uint64_t xid, uint64_t off, uint64_t len, const char *name)
{
	struct vcl_ucx_pmsg	*m;
	struct iovec		 iov;

	if (e->uep == NULL || (m = calloc(1, sizeof *m)) == NULL)
		return;
	m->type = type;
	m->slot = slot;
	m->xid = xid;
	m->off = off;
	m->len = len;
	if (name != NULL)
		snprintf(m->name, sizeof m->name, "%s", name);
	iov.iov_base = m;
	iov.iov_len = sizeof *m;
	if (vcl_ucx_send(e->uep, ((uint64_t)(e->ns ^ VCL_UCX_CTL_NS) << 32) |
	    e->link, &iov, 1, vcl_ucx_pl_sent, m) == NULL)
		free(m);
}

/* Tell the host that r's mapping is up (1) or about to go (0). */
static void
vcl_ucx_ring_host(struct vcl_ucx_ring *r, int up)
{
	struct vcl_tp	*tp = r->t->tp;

	if (tp->conf.ring != NULL)
		tp->conf.ring(tp, r->base, r->size, up);
}

/* Drop a reference to a ring; the last unmaps it (and closes its fd). */
static void
vcl_ucx_ring_unref(struct vcl_ucx_ring *r)
{
	if (--r->refs > 0)
		return;
	if (r->fd != -1)
		close(r->fd);
	if (r->base != NULL) {
		vcl_ucx_ring_host(r, 0);
		munmap(r->base, r->size);
	}
	if (r->mine) {
		r->t->shm_bytes -= r->size;
		if (r->dev != 0 || r->ino != 0)
			LIST_REMOVE(r, entry);
	}
	free(r);
}

/* A new ring record for e (one reference: the endpoint's). */
static struct vcl_ucx_ring *
vcl_ucx_ring_new(struct vcl_ucx_tpep *e, int mine, uint64_t slot_len,
    unsigned nslots)
{
	struct vcl_ucx_ring	*r;
	unsigned		 i;

	if ((r = calloc(1, sizeof *r)) == NULL)
		return (NULL);
	r->t = e->t;
	r->e = e;
	r->mine = mine;
	r->slot_len = slot_len;
	r->nslots = nslots;
	r->size = slot_len * nslots;
	r->refs = 1;
	r->fd = -1;
	for (i = 0; i < nslots; i++) {
		r->slots[i].ring = r;
		r->slots[i].idx = i;
	}
	return (r);
}

/*
 * Our ring for e, announced to the other end: a fresh memfd of its size,
 * sealed (it can neither shrink nor grow), within the instance's limit.
 * No ring: no placement into us on this link (the other end sends as
 * usual).
 */
static void
vcl_ucx_ring_offer(struct vcl_ucx_tpep *e)
{
	struct vcl_ucx_tp	*t = e->t;
	struct vcl_ucx_ring	*r;
	struct stat		 st;
	void			*p;
	int			 fd;

	if (!t->place || t->shm_bytes + t->slot_len * t->nslots > t->shm_max)
		return;
	if ((r = vcl_ucx_ring_new(e, 1, t->slot_len, t->nslots)) == NULL)
		return;
	if ((fd = memfd_create("vcl-ring", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1) {
		free(r);
		return;
	}
	if (ftruncate(fd, (off_t)r->size) != 0 || fcntl(fd, F_ADD_SEALS,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
	    fstat(fd, &st) != 0 || (p = mmap(NULL, r->size, PROT_READ |
	    PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		close(fd);
		free(r);
		return;
	}
	r->fd = fd;
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	LIST_INSERT_HEAD(&t->rings, r, entry);
	snprintf(r->name, sizeof r->name, "/proc/%ld/fd/%d", (long)getpid(),
	    fd);
	r->base = p;
	vcl_ucx_ring_host(r, 1);
	t->shm_bytes += r->size;
	e->rx = r;
	/* Our ring's address: the other end checks it can read us. */
	vcl_ucx_pl_send(e, VCL_UCX_PM_RING, 0, t->direct ?
	    (uint64_t)(uintptr_t)r->base : 0, r->slot_len, r->nslots, r->name);
}

/*
 * Can we read the owner of the ring just mapped at p, by its pid, where it
 * says it has it (addr)? A cookie written through our mapping must come
 * back through process_vm_readv: then pid is the ring's owner and the
 * kernel lets us read it. VCL_TEST_DIRECT_EPERM=1 makes it refused.
 */
static void
vcl_ucx_pull_probe(struct vcl_ucx_tpep *e, uint8_t *p, unsigned long pid,
    uint64_t addr)
{
	static uint64_t	 serial;
	uint64_t	 cookie[2], back[2] = { 0, 0 };
	struct iovec	 l, r;
	const char	*v;
	ssize_t		 n = -1;
	int		 eno = EPERM;

	/*
	 * Never ourselves: the pid is the peer's word (its ring's path), and
	 * a memfd of ours the peer named (a client's ring) would let its
	 * SOURCE read any of our memory. (Testing: VCL_TEST_PULL_SELF=1, for
	 * both ends in one process.)
	 */
	if (!e->t->direct || addr == 0 || pid > (unsigned long)INT32_MAX ||
	    (pid == (unsigned long)getpid() &&
	    getenv("VCL_TEST_PULL_SELF") == NULL))
		return;
	cookie[0] = (uint64_t)getpid() << 32 ^ ++serial;
	cookie[1] = (uint64_t)(uintptr_t)p ^ addr ^ 0x5643ull;
	memcpy(p, cookie, sizeof cookie);
	l.iov_base = back;
	l.iov_len = sizeof back;
	r.iov_base = (void *)(uintptr_t)addr;
	r.iov_len = sizeof back;
	if ((v = getenv("VCL_TEST_DIRECT_EPERM")) == NULL || *v != '1') {
		n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);
		eno = errno;
	}
	memset(p, 0, sizeof cookie);
	if (n == (ssize_t)sizeof back && memcmp(back, cookie, sizeof back) ==
	    0) {
		e->pull_pid = (long)pid;
		vcl_log_debug("ucx: pid %lu readable: direct mode", pid);
		return;
	}
	vcl_log_info("ucx: cross-memory attach to pid %lu %s: migrations "
	    "from it go through the ring", pid, n < 0 ? strerror(eno) :
	    "read other bytes");
}

/* A socket address as 16 bytes (IPv4 mapped into IPv6) and a port. */
static int
vcl_ucx_sock_key(const struct sockaddr_storage *ss, uint8_t a[16],
    unsigned *port)
{
	const struct sockaddr_in	*s4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6	*s6 = (const struct sockaddr_in6 *)ss;

	memset(a, 0, 16);
	if (ss->ss_family == AF_INET) {
		a[10] = a[11] = 0xff;
		memcpy(a + 12, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
		return (0);
	}
	if (ss->ss_family == AF_INET6) {
		memcpy(a, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
		return (0);
	}
	return (-1);
}

/*
 * An address of /proc/PID/net/tcp{,6} (the kernel prints each 32-bit word
 * of it as a number in host byte order) as 16 bytes. 0 or -1.
 */
static int
vcl_ucx_proc_addr(const char *hex, uint8_t a[16])
{
	char		 w[9];
	size_t		 n = strlen(hex), i;
	uint32_t	 v;

	if (n != 8 && n != 32)
		return (-1);
	memset(a, 0, 16);
	if (n == 8)
		a[10] = a[11] = 0xff;
	for (i = 0; i < n / 8; i++) {
		memcpy(w, hex + 8 * i, 8);
		w[8] = '\0';
		v = (uint32_t)strtoul(w, NULL, 16);
		memcpy(a + (n == 8 ? 12 : 4 * i), &v, 4);
	}
	return (0);
}

/*
 * The inode of pid's socket whose local address is l and remote one r
 * (from pid's own TCP tables, so in its network namespace). 0: none.
 */
static unsigned long
vcl_ucx_proc_sock(unsigned long pid, const uint8_t l[16], unsigned lport,
    const uint8_t r[16], unsigned rport)
{
	static const char *const tabs[] = { "tcp", "tcp6" };
	char			 path[64], line[512], lh[40], rh[40];
	uint8_t			 la[16], ra[16];
	unsigned		 lp, rp, i;
	unsigned long		 ino = 0, v;
	FILE			*f;

	for (i = 0; ino == 0 && i < sizeof tabs / sizeof tabs[0]; i++) {
		snprintf(path, sizeof path, "/proc/%lu/net/%s", pid, tabs[i]);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		while (ino == 0 && fgets(line, sizeof line, f) != NULL) {
			if (sscanf(line, " %*u: %39[0-9A-Fa-f]:%x "
			    "%39[0-9A-Fa-f]:%x %*x %*x:%*x %*x:%*x %*x %*u "
			    "%*u %lu", lh, &lp, rh, &rp, &v) != 5 ||
			    vcl_ucx_proc_addr(lh, la) != 0 ||
			    vcl_ucx_proc_addr(rh, ra) != 0)
				continue;
			if (lp == lport && rp == rport && memcmp(la, l, 16) ==
			    0 && memcmp(ra, r, 16) == 0)
				ino = v;
		}
		fclose(f);
	}
	return (ino);
}

/*
 * Is pid the process at the other end of e's control stream (the link
 * whose Hello was checked)? A ring's path names its owner's pid, and
 * only the peer's own ring may be mapped and its pid read: a peer that
 * learned a third process's ring (another server's, whose peer it is)
 * would otherwise have us write into that process's memory and read it
 * for the peer (SOURCE), where we may and the peer may not. A local
 * socket's credentials say it at once; for TCP, pid's socket with our
 * two addresses swapped must be one of its descriptors.
 */
static int
vcl_ucx_peer_is(struct vcl_ucx_tpep *e, unsigned long pid)
{
	struct sockaddr_storage	 a, b;
	struct ucred		 cr;
	struct dirent		*de;
	socklen_t		 la = sizeof a, lb = sizeof b, lc = sizeof cr;
	uint8_t			 ka[16], kb[16];
	unsigned		 pa, pb;
	unsigned long		 ino;
	char			 path[320], want[64], got[64];
	ssize_t			 n;
	DIR			*d;
	int			 fd, found = 0;

	if (e->ep->ctl == NULL || (fd = e->ep->ctl->fd) < 0)
		return (0);
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (getsockname(fd, (struct sockaddr *)&a, &la) != 0 ||
	    getpeername(fd, (struct sockaddr *)&b, &lb) != 0)
		return (0);
	if (a.ss_family == AF_UNIX)
		return (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &lc) ==
		    0 && cr.pid > 0 && (unsigned long)cr.pid == pid);
	if (vcl_ucx_sock_key(&a, ka, &pa) != 0 ||
	    vcl_ucx_sock_key(&b, kb, &pb) != 0 ||
	    (ino = vcl_ucx_proc_sock(pid, kb, pb, ka, pa)) == 0)
		return (0);
	snprintf(want, sizeof want, "socket:[%lu]", ino);
	snprintf(path, sizeof path, "/proc/%lu/fd", pid);
	if ((d = opendir(path)) == NULL)
		return (0);
	while (!found && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%lu/fd/%s", pid,
		    de->d_name);
		if ((n = readlink(path, got, sizeof got - 1)) <= 0)
			continue;
		got[n] = '\0';
		found = strcmp(got, want) == 0;
	}
	closedir(d);
	return (found);
}

/*
 * The other end's ring: open it by its /proc/PID/fd/N path where PID is
 * the other end of the link, check that it
 * is none of our own rings (another link's peer writes those), that it is
 * sealed against shrinking (else its owner could fault our stores into
 * it) and its size, map it.
 */
static int
vcl_ucx_ring_map(struct vcl_ucx_tpep *e, const struct vcl_ucx_pmsg *m)
{
	struct vcl_ucx_ring	*r, *o;
	struct stat		 st;
	char			 name[32], tail;
	unsigned long		 pid, nfd;
	void			*p;
	int			 fd, seals;

	memcpy(name, m->name, sizeof name);
	name[sizeof name - 1] = '\0';
	if (e->tx != NULL || strspn(name, "/procfd0123456789") !=
	    strlen(name) || sscanf(name, "/proc/%lu/fd/%lu%c", &pid, &nfd,
	    &tail) != 2 || pid == 0 || m->len == 0 ||
	    m->len > VCL_UCX_SLOTS_MAX || m->off == 0 ||
	    m->off > (1ull << 30))
		return (-1);
	if (!e->t->place)
		return (0);	/* we do not place: leave it */
	if (!vcl_ucx_peer_is(e, pid)) {
		vcl_log_warn("ucx: the peer's shared staging names pid %lu, "
		    "which is not the other end of the link: not used", pid);
		return (0);
	}
	if ((fd = open(name, O_RDWR | O_CLOEXEC | O_NOCTTY)) == -1) {
		/* Another host, or gone: no placement on this link. */
		vcl_log_info("ucx: the peer's shared staging: %s",
		    strerror(errno));
		return (0);
	}
	if ((seals = fcntl(fd, F_GET_SEALS)) == -1 ||
	    !(seals & F_SEAL_SHRINK)) {
		vcl_log_warn("ucx: the peer's shared staging is not sealed "
		    "against shrinking: not used");
		close(fd);
		return (0);
	}
	if (fstat(fd, &st) != 0)
		st.st_mode = 0;
	LIST_FOREACH(o, &e->t->rings, entry)
		if (o->dev == st.st_dev && o->ino == st.st_ino)
			st.st_mode = 0;		/* one of ours */
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != m->off * m->len ||
	    (p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
	    MAP_SHARED, fd, 0)) == MAP_FAILED) {
		vcl_log_warn("ucx: the peer's shared staging: not its size, "
		    "or no mapping");
		close(fd);
		return (0);
	}
	vcl_log_debug("ucx: the peer's shared staging mapped (%u x %llu)",
	    (unsigned)m->len, (unsigned long long)m->off);
	close(fd);
	if ((r = vcl_ucx_ring_new(e, 0, m->off, (unsigned)m->len)) == NULL) {
		munmap(p, (size_t)st.st_size);
		return (0);
	}
	r->base = p;
	vcl_ucx_ring_host(r, 1);
	e->tx = r;
	vcl_ucx_pull_probe(e, p, pid, m->xid);
	vcl_ucx_pl_send(e, VCL_UCX_PM_MAPPED, 0, 0, 0, 0, NULL);
	return (0);
}

/*
 * A placed transfer ends (err): off its endpoint; its done runs from the
 * instance's progress (now, with now set: from close or progress).
 */
static void
vcl_ucx_pl_finish(struct vcl_ucx_xfer *x, int err, int now)
{
	struct vcl_ucx_tpep	*e = x->e;

	LIST_REMOVE(x, entry);
	x->e = NULL;
	if (e->rx_active == x) {
		struct vcl_ucx_xfer	*y;

		/* The next placed receive, oldest first (they queue last). */
		e->rx_active = NULL;
		LIST_FOREACH(y, &e->xfers, entry)
			if (y->placed && y->recv)
				break;
		e->rx_active = y;
		vcl_ucx_pl_offer(e);
	}
	if (err != VCL_TP_OK)
		snprintf(e->ep->err, sizeof e->ep->err, "ucx: placed %s %llu: "
		    "%s", x->recv ? "receive" : "send",
		    (unsigned long long)(x->xid & ~VCL_TP_XID_PLACE),
		    vcl_tp_strerror(err));
	if (now) {
		x->done(x->arg, err);
		free(x);
	} else {
		x->fin_err = err;
		x->fin_ep = e;
		TAILQ_INSERT_TAIL(&e->t->fins, x, fin);
		vcl_ucx_wake(e->t->u);
	}
}

/* Offer free slots of our ring for the next chunks of the served receive. */
static void
vcl_ucx_pl_offer(struct vcl_ucx_tpep *e)
{
	struct vcl_ucx_xfer	*x;
	struct vcl_ucx_slot	*sl;
	unsigned		 i;

	if (e->rx == NULL || e->bad || e->uep == NULL)
		return;
	while ((x = e->rx_active) != NULL && x->next < x->len) {
		if (x->pulling) {
			/* The host would read it all: ask the sender. */
			if (!x->pull_asked) {
				x->pull_asked = 1;
				vcl_ucx_pl_send(e, VCL_UCX_PM_PULL, 0, x->xid,
				    0, x->len, NULL);
			}
			return;
		}
		for (i = 0; i < e->rx->nslots; i++)
			if (e->rx->slots[i].state == VCL_UCX_SLOT_FREE)
				break;
		if (i == e->rx->nslots)
			return;
		sl = &e->rx->slots[i];
		sl->state = VCL_UCX_SLOT_OFFERED;
		sl->xid = x->xid;
		sl->serial = x->serial;
		sl->off = x->next;
		sl->len = x->len - x->next < x->chunk ?
		    x->len - x->next : x->chunk;
		x->next += sl->len;
		vcl_ucx_pl_send(e, VCL_UCX_PM_OFFER, i, x->xid, sl->off,
		    sl->len, NULL);
	}
}

/* A chunk of our ring is done with: count it, offer the slot again. */
static void
vcl_ucx_pl_consumed(struct vcl_ucx_slot *sl)
{
	struct vcl_ucx_ring	*r = sl->ring;
	struct vcl_ucx_tpep	*e = r->e;
	struct vcl_ucx_xfer	*x;

	sl->state = VCL_UCX_SLOT_FREE;
	if (e != NULL && (x = e->rx_active) != NULL && x->xid == sl->xid &&
	    x->serial == sl->serial) {
		x->got += sl->len;
		if (x->got == x->len) {
			vcl_ucx_pl_send(e, VCL_UCX_PM_DONE, 0, x->xid, 0, 0,
			    NULL);
			vcl_ucx_pl_finish(x, VCL_TP_OK, 0);
		}
	}
	if (e != NULL)
		vcl_ucx_pl_offer(e);
}

/*
 * A pulling message of the other end's, checked; -1: it broke the
 * protocol. A PULL (we send) is answered with our bytes' address if the
 * host gave one; a SOURCE or NOSOURCE (we receive) must answer our PULL
 * of the receive served now, with its exact length: the host then reads
 * that many bytes, in the sender, from the address named.
 */
static int
vcl_ucx_pull_in(struct vcl_ucx_tpep *e, const struct vcl_ucx_pmsg *m)
{
	struct vcl_ucx_xfer	*x;
	struct vcl_ucx_pull	*p;

	if (m->type == VCL_UCX_PM_PULL) {
		LIST_FOREACH(x, &e->xfers, entry)
			if (x->placed && !x->recv && x->xid == m->xid)
				break;
		if (x != NULL && m->len != x->len)
			return (-1);
		if (x == NULL || x->src == NULL || !e->t->direct)
			vcl_ucx_pl_send(e, VCL_UCX_PM_NOSOURCE, 0, m->xid, 0, 0,
			    NULL);
		else
			vcl_ucx_pl_send(e, VCL_UCX_PM_SOURCE, 0, m->xid,
			    (uint64_t)(uintptr_t)x->src, x->len, NULL);
		return (0);
	}
	x = e->rx_active;
	if (x == NULL || x->xid != m->xid)
		return (0);	/* its receive ended: stale */
	if (!x->pulling || !x->pull_asked || x->pull_busy)
		return (-1);
	if (m->type == VCL_UCX_PM_NOSOURCE) {
		x->pulling = 0;
		vcl_ucx_pl_offer(e);
		return (0);
	}
	if (m->len != x->len || m->off == 0 || m->off > UINT64_MAX - m->len ||
	    e->pull_pid == 0)
		return (-1);
	if ((p = calloc(1, sizeof *p)) == NULL) {
		x->pulling = 0;
		vcl_ucx_pl_offer(e);
		return (0);
	}
	p->e = e;
	p->xid = x->xid;
	p->serial = x->serial;
	LIST_INSERT_HEAD(&e->pulls, p, entry);
	x->pull_busy = 1;
	if (x->dest.pull(x->dest.chunk_arg, e->pull_pid, m->off, x->len,
	    (uint64_t)(uintptr_t)p) != 0) {
		/* The host cannot now: the slots. */
		LIST_REMOVE(p, entry);
		free(p);
		x->pull_busy = 0;
		x->pulling = 0;
		vcl_ucx_pl_offer(e);
	}
	return (0);
}

/* A message of the other end's, checked; -1: it broke the protocol. */
static int
vcl_ucx_pl_in(struct vcl_ucx_tpep *e, const struct vcl_ucx_pmsg *m)
{
	struct vcl_ucx_xfer	*x;
	struct vcl_ucx_slot	*sl;
	struct vcl_tp_slot	 ts;

	switch (m->type) {
	case VCL_UCX_PM_RING:
		return (vcl_ucx_ring_map(e, m));
	case VCL_UCX_PM_MAPPED:
		if (e->rx == NULL || e->rx->fd == -1)
			return (-1);
		close(e->rx->fd);	/* its path opens nothing now */
		e->rx->fd = -1;
		return (0);
	case VCL_UCX_PM_FILLED:
	case VCL_UCX_PM_UNUSED:
		if (e->rx == NULL || m->slot >= e->rx->nslots)
			return (-1);
		sl = &e->rx->slots[m->slot];
		if (sl->state != VCL_UCX_SLOT_OFFERED || sl->xid != m->xid)
			return (-1);
		/*
		 * Offered to a receive that ended: not a chunk of the one
		 * served now, even under the same xid (its offset and length
		 * were the other's).
		 */
		x = e->rx_active;
		if (x == NULL || x->xid != m->xid || x->serial != sl->serial) {
			sl->state = VCL_UCX_SLOT_FREE;	/* its receive ended */
			vcl_ucx_pl_offer(e);
			return (0);
		}
		if (m->type == VCL_UCX_PM_UNUSED) {
			sl->state = VCL_UCX_SLOT_FREE;
			vcl_ucx_pl_send(e, VCL_UCX_PM_ABORT, 0, x->xid, 0, 0,
			    NULL);
			vcl_ucx_pl_finish(x, VCL_TP_EIO, 0);
			vcl_ucx_pl_offer(e);
			return (0);
		}
		sl->state = VCL_UCX_SLOT_HELD;
		if (x->dest.chunk != NULL) {
			e->rx->refs++;	/* until consumed */
			x->dest.chunk(x->dest.chunk_arg, sl->off,
			    e->rx->base + (uint64_t)m->slot * e->rx->slot_len,
			    sl->len, (uint64_t)(uintptr_t)sl);
			return (0);
		}
		if (x->dest.base != NULL)
			memcpy((uint8_t *)x->dest.base + sl->off, e->rx->base +
			    (uint64_t)m->slot * e->rx->slot_len, sl->len);
		vcl_ucx_pl_consumed(sl);
		return (0);
	case VCL_UCX_PM_OFFER:
		LIST_FOREACH(x, &e->xfers, entry)
			if (x->placed && !x->recv && x->xid == m->xid)
				break;
		if (e->tx == NULL || m->slot >= e->tx->nslots)
			return (-1);
		sl = &e->tx->slots[m->slot];
		if (sl->state != VCL_UCX_SLOT_FREE || m->len == 0 ||
		    m->len > e->tx->slot_len || (x != NULL &&
		    (m->off > x->len || m->len > x->len - m->off)))
			return (-1);
		if (x == NULL) {
			vcl_ucx_pl_send(e, VCL_UCX_PM_UNUSED, m->slot, m->xid,
			    0, 0, NULL);
			return (0);
		}
		sl->state = VCL_UCX_SLOT_HELD;
		sl->xid = m->xid;
		sl->off = m->off;
		sl->len = m->len;
		e->tx->refs++;		/* until placed */
		ts.ptr = e->tx->base + (uint64_t)m->slot * e->tx->slot_len;
		ts.off = m->off;
		ts.len = m->len;
		ts.token = (uint64_t)(uintptr_t)sl;
		x->slot(x->arg, &ts);
		return (0);
	case VCL_UCX_PM_DONE:
	case VCL_UCX_PM_ABORT:
		LIST_FOREACH(x, &e->xfers, entry)
			if (x->placed && x->xid == m->xid &&
			    x->recv == (m->type == VCL_UCX_PM_ABORT))
				break;
		if (x != NULL && x->recv && x != e->rx_active)
			x = NULL;	/* not served yet: its offers tell */
		if (x != NULL)
			vcl_ucx_pl_finish(x, m->type == VCL_UCX_PM_DONE ?
			    VCL_TP_OK : x->recv ? VCL_TP_EIO : VCL_TP_ECANCELED,
			    0);
		/* A DONE for a send we dropped, or a stale ABORT: ignored. */
		if (m->type == VCL_UCX_PM_ABORT && x == NULL) {
			LIST_FOREACH(x, &e->xfers, entry)
				if (x->placed && !x->recv && x->xid == m->xid)
					break;
			if (x != NULL)
				vcl_ucx_pl_finish(x, VCL_TP_ECANCELED, 0);
		}
		return (0);
	case VCL_UCX_PM_PULL:
	case VCL_UCX_PM_SOURCE:
	case VCL_UCX_PM_NOSOURCE:
		return (vcl_ucx_pull_in(e, m));
	default:
		return (-1);
	}
}

/* A placement message came (or the receive ended): handle, listen again. */
static void
vcl_ucx_pl_msg(int status, void *arg)
{
	struct vcl_ucx_tpep	*e = arg;

	if (e->closing)
		return;
	if (status != 0) {
		/* The peer failed (or sent garbage): fail what it carried. */
		vcl_ucx_pl_stop(e, status == -ECONNRESET || status ==
		    -ECANCELED ? VCL_TP_ECLOSED : VCL_TP_EIO, 0);
		return;
	}
	if (vcl_ucx_pl_in(e, &e->in) != 0) {
		snprintf(e->ep->err, sizeof e->ep->err, "ucx: placement "
		    "message refused (type %u slot %u)", e->in.type,
		    e->in.slot);
		vcl_ucx_pl_stop(e, VCL_TP_EIO, 0);
		return;
	}
	vcl_ucx_pl_listen(e);
}

/* Post the receive of the other end's next placement message. */
static void
vcl_ucx_pl_listen(struct vcl_ucx_tpep *e)
{
	if (e->uep == NULL || e->bad)
		return;
	if (vcl_ucx_recv_own(e->uep, ((uint64_t)(e->peer_ns ^ VCL_UCX_CTL_NS)
	    << 32) | e->link, &e->in, sizeof e->in, vcl_ucx_pl_msg, e) == NULL)
		e->bad = 1;
}

/*
 * Placement ends on e (peer gone, protocol broken, closing): every placed
 * transfer fails with err (now: done runs at once), the rings are let go
 * (slots the host still holds keep theirs mapped).
 */
static void
vcl_ucx_pl_stop(struct vcl_ucx_tpep *e, int err, int now)
{
	struct vcl_ucx_xfer	*x, *x1;
	struct vcl_ucx_pull	*p;

	e->bad = 1;
	while ((p = LIST_FIRST(&e->pulls)) != NULL) {
		LIST_REMOVE(p, entry);
		p->e = NULL;	/* its pulled only frees it */
	}
	for (x = LIST_FIRST(&e->xfers); x != NULL; x = x1) {
		x1 = LIST_NEXT(x, entry);
		if (x->placed)
			vcl_ucx_pl_finish(x, err, now);
	}
	if (e->rx != NULL) {
		e->rx->e = NULL;
		vcl_ucx_ring_unref(e->rx);
		e->rx = NULL;
	}
	if (e->tx != NULL) {
		e->tx->e = NULL;
		vcl_ucx_ring_unref(e->tx);
		e->tx = NULL;
	}
}

/* Can this link place a bulk of len in the other end's ring? */
static int
vcl_ucx_tp_can_place(struct vcl_tp_ep *ep, uint64_t len)
{
	struct vcl_ucx_tpep	*e = ep->priv;

	return (e->t->place && e->tx != NULL && !e->bad && e->uep != NULL &&
	    !vcl_ucx_ep_failed(e->uep) && len >= e->t->place_min);
}

/* A placed send of len bytes as xid: the other end's offers drive it. */
static int
vcl_ucx_tp_place(struct vcl_tp_ep *ep, uint64_t xid, uint64_t len,
    vcl_tp_slot_fn slot, vcl_tp_done_fn done, void *arg)
{
	struct vcl_ucx_tpep	*e = ep->priv;
	struct vcl_ucx_xfer	*x;

	if (!vcl_ucx_tp_can_place(ep, e->t->place_min) || len == 0) {
		snprintf(ep->err, sizeof ep->err, "ucx: no shared staging on "
		    "this link");
		return (e->uep == NULL ? VCL_TP_ECLOSED : VCL_TP_EINVAL);
	}
	if ((x = calloc(1, sizeof *x)) == NULL)
		return (VCL_TP_ENOMEM);
	x->e = e;
	x->xid = xid;
	x->placed = 1;
	x->len = len;
	x->slot = slot;
	x->done = done;
	x->arg = arg;
	LIST_INSERT_HEAD(&e->xfers, x, entry);
	return (VCL_TP_OK);
}

/* A placed receive: served by our ring, one at a time, in post order. */
static int
vcl_ucx_tp_recv_placed(struct vcl_ucx_tpep *e, uint64_t xid,
    const struct vcl_tp_dest *dest, vcl_tp_done_fn done, void *arg)
{
	struct vcl_ucx_xfer	*x, *last;

	if (e->rx == NULL || e->bad || dest->len == 0) {
		snprintf(e->ep->err, sizeof e->ep->err, "ucx: placed bulk "
		    "without shared staging");
		return (VCL_TP_EINVAL);
	}
	if ((x = calloc(1, sizeof *x)) == NULL)
		return (VCL_TP_ENOMEM);
	x->e = e;
	x->xid = xid;
	x->recv = 1;
	x->placed = 1;
	x->serial = ++e->rx_serial;
	x->len = dest->len;
	/*
	 * Chunks of an eighth of the bulk (at least 256 KiB, at most a
	 * slot): the copies on both sides overlap for most of a bulk of a
	 * few slots, instead of one slot's time each at the start and end.
	 */
	x->chunk = x->len / 8 < (256u << 10) ? (256u << 10) : x->len / 8;
	x->chunk = (x->chunk + 4095) & ~4095ull;
	if (x->chunk > e->rx->slot_len)
		x->chunk = e->rx->slot_len;
	x->dest = *dest;
	x->done = done;
	x->arg = arg;
	/* The host could read it all from a sender we can read: ask. */
	x->pulling = dest->pull != NULL && dest->chunk != NULL &&
	    e->pull_pid != 0 && e->t->direct;
	/* The list is newest first: a placed receive waits at the tail. */
	if ((last = LIST_FIRST(&e->xfers)) == NULL)
		LIST_INSERT_HEAD(&e->xfers, x, entry);
	else {
		while (LIST_NEXT(last, entry) != NULL)
			last = LIST_NEXT(last, entry);
		LIST_INSERT_AFTER(last, x, entry);
	}
	if (e->rx_active == NULL) {
		e->rx_active = x;
		vcl_ucx_pl_offer(e);
	}
	return (VCL_TP_OK);
}

/* The host filled a slot of the other end's ring (or could not). */
static void
vcl_ucx_tp_placed(struct vcl_tp *tp, uint64_t token, int err)
{
	struct vcl_ucx_slot	*sl = (struct vcl_ucx_slot *)(uintptr_t)token;
	struct vcl_ucx_ring	*r = sl->ring;
	struct vcl_ucx_tpep	*e = r->e;
	struct vcl_ucx_xfer	*x;

	if (sl->state != VCL_UCX_SLOT_HELD)
		return;
	sl->state = VCL_UCX_SLOT_FREE;
	if (e != NULL && !e->bad) {
		vcl_ucx_pl_send(e, err == VCL_TP_OK ? VCL_UCX_PM_FILLED :
		    VCL_UCX_PM_UNUSED, sl->idx, sl->xid, 0, 0, NULL);
		if (err != VCL_TP_OK) {
			LIST_FOREACH(x, &e->xfers, entry)
				if (x->placed && !x->recv && x->xid == sl->xid)
					break;
			if (x != NULL)
				vcl_ucx_pl_finish(x, VCL_TP_EIO, 0);
		}
		vcl_ucx_wake(e->t->u);
	}
	vcl_ucx_ring_unref(r);
}

/* The placed send xid is readable at src in us (until it ends). */
static void
vcl_ucx_tp_source(struct vcl_tp_ep *ep, uint64_t xid, const void *src)
{
	struct vcl_ucx_tpep	*e = ep->priv;
	struct vcl_ucx_xfer	*x;

	LIST_FOREACH(x, &e->xfers, entry)
		if (x->placed && !x->recv && x->xid == xid)
			break;
	if (x != NULL)
		x->src = src;
}

/*
 * The host's pull ended: all the bulk is in its memory (done), it could
 * not read (VCL_TP_EINVAL: the slots for this receive, no pulling on the
 * link again) or it failed (the receive fails). Ignored, but for freeing
 * the token, when its link or its receive ended meanwhile.
 */
static void
vcl_ucx_tp_pulled(struct vcl_tp *tp, uint64_t token, int err)
{
	struct vcl_ucx_pull	*p = (struct vcl_ucx_pull *)(uintptr_t)token;
	struct vcl_ucx_tpep	*e = p->e;
	struct vcl_ucx_xfer	*x;

	if (e != NULL)
		LIST_REMOVE(p, entry);
	if (e == NULL || e->bad || (x = e->rx_active) == NULL ||
	    x->xid != p->xid || x->serial != p->serial || !x->pull_busy) {
		free(p);
		return;
	}
	free(p);
	x->pull_busy = 0;
	if (err == VCL_TP_OK) {
		x->next = x->got = x->len;
		vcl_ucx_pl_send(e, VCL_UCX_PM_DONE, 0, x->xid, 0, 0, NULL);
		vcl_ucx_pl_finish(x, VCL_TP_OK, 0);
	} else if (err == VCL_TP_EINVAL || err == VCL_TP_EBUSY) {
		/* Refused by the kernel: never again on this link. */
		if (err == VCL_TP_EINVAL) {
			vcl_log_info("ucx: cross-memory attach to pid %ld "
			    "refused: migrations from it go through the ring",
			    e->pull_pid);
			e->pull_pid = 0;
		}
		x->pulling = 0;
		vcl_ucx_pl_offer(e);
	} else {
		vcl_ucx_pl_send(e, VCL_UCX_PM_ABORT, 0, x->xid, 0, 0, NULL);
		vcl_ucx_pl_finish(x, VCL_TP_EIO, 0);
	}
	vcl_ucx_wake(e->t->u);
}

/* The host is done with a chunk of our ring: its slot goes round again. */
static void
vcl_ucx_tp_consumed(struct vcl_tp *tp, uint64_t token)
{
	struct vcl_ucx_slot	*sl = (struct vcl_ucx_slot *)(uintptr_t)token;
	struct vcl_ucx_ring	*r = sl->ring;

	if (sl->state != VCL_UCX_SLOT_HELD)
		return;
	vcl_ucx_pl_consumed(sl);
	if (r->e != NULL)
		vcl_ucx_wake(r->t->u);
	vcl_ucx_ring_unref(r);
}

/*
 * The link's number for placement's tags: a hash of its control stream's
 * two socket addresses, in an order both ends agree on, so that two links
 * between one pair of servers (one each way) keep their messages apart.
 * 0 for a stream with no addresses (a socket pair: one link per pair).
 */
static uint32_t
vcl_ucx_tp_link(const struct vcl_link *l)
{
	struct sockaddr_storage	a, b;
	socklen_t		la = sizeof a, lb = sizeof b;
	uint32_t		h1, h2;

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (l == NULL || l->fd < 0 || getsockname(l->fd, (struct sockaddr *)&a,
	    &la) != 0 || getpeername(l->fd, (struct sockaddr *)&b, &lb) != 0 ||
	    a.ss_family == AF_UNIX)
		return (0);
	h1 = vcl_ucx_tp_ns(&a, la);
	h2 = vcl_ucx_tp_ns(&b, lb);
	return (h1 < h2 ? h1 * 31u + h2 : h2 * 31u + h1);
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
	e->t = ep->tp->priv;
	LIST_INIT(&e->xfers);
	LIST_INIT(&e->pulls);
	vcl_ucx_address(VCL_UCX_U(ep->tp), &ours, &olen);
	e->ns = vcl_ucx_tp_ns(ours, olen);
	e->peer_ns = vcl_ucx_tp_ns(addr, len);
	e->link = vcl_ucx_tp_link(ep->ctl);
	if ((e->uep = vcl_ucx_ep_open(VCL_UCX_U(ep->tp), addr, len,
	    vcl_ucx_tp_failed, e)) == NULL) {
		free(e);
		snprintf(ep->err, sizeof ep->err, "ucx: cannot reach the "
		    "address (%s)", strerror(errno));
		return (VCL_TP_EINVAL);
	}
	ep->priv = e;
	/* Shared staging: our ring for the other end, and its messages. */
	vcl_ucx_pl_listen(e);
	vcl_ucx_ring_offer(e);
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
	if (cnt > 64 || (xid >> 32) == VCL_UCX_CTL_NS) {
		snprintf(ep->err, sizeof ep->err, "ucx: %d pieces or a "
		    "reserved id", cnt);
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
	if ((xid >> 32) == VCL_UCX_CTL_NS) {
		snprintf(ep->err, sizeof ep->err, "ucx: a reserved id");
		return (VCL_TP_EINVAL);
	}
	if (xid & VCL_TP_XID_PLACE)
		return (vcl_ucx_tp_recv_placed(e, xid, dest, done, arg));
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
		if (x->recv && x->xid == xid && x->placed) {
			/* Its sender stops; slots in flight come back. */
			if (x == e->rx_active)
				vcl_ucx_pl_send(e, VCL_UCX_PM_ABORT, 0, xid, 0,
				    0, NULL);
			vcl_ucx_pl_finish(x, VCL_TP_ECANCELED, 0);
			break;
		}
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
	return (vcl_ucx_fd(VCL_UCX_U(tp)));
}

/* Fail what is pending on e (VCL_TP_ECLOSED) and let go of UCX's ep. */
static void
vcl_ucx_tp_shut(struct vcl_ucx_tpep *e)
{
	struct vcl_ucx_ep	*uep = e->uep;

	if (uep == NULL)
		return;
	e->closing = 1;
	vcl_ucx_pl_stop(e, VCL_TP_ECLOSED, 1);
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

	if (ep == NULL) {
		int	more = vcl_ucx_progress(VCL_UCX_U(tp));

		return (vcl_ucx_tp_fins(tp->priv) > 0 ? 1 : more);
	}
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
	struct vcl_ucx_xfer	*x, *x1;
	struct vcl_ucx_pull	*p;

	if (e == NULL)
		return;
	vcl_ucx_tp_shut(e);
	/* Placed transfers that ended but were not told yet: tell now. */
	for (x = TAILQ_FIRST(&e->t->fins); x != NULL; x = x1) {
		x1 = TAILQ_NEXT(x, fin);
		if (x->fin_ep != e)
			continue;
		TAILQ_REMOVE(&e->t->fins, x, fin);
		x->done(x->arg, x->fin_err);
		free(x);
	}
	while ((p = LIST_FIRST(&e->pulls)) != NULL) {
		LIST_REMOVE(p, entry);
		p->e = NULL;
	}
	free(e);
	ep->priv = NULL;
}

const struct vcl_transport vcl_transport_ucx = {
	.name = "ucx",
	.caps = VCL_TP_PEER | VCL_TP_CLIENT | VCL_TP_LOCAL | VCL_TP_PLACE,
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
	.can_place = vcl_ucx_tp_can_place,
	.place = vcl_ucx_tp_place,
	.placed = vcl_ucx_tp_placed,
	.consumed = vcl_ucx_tp_consumed,
	.source = vcl_ucx_tp_source,
	.pulled = vcl_ucx_tp_pulled,
};
