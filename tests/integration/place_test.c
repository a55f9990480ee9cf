/*
 * place_test.c - pushes placed in a real vclserver's shared staging, with
 * this process as the peer server speaking the ucx backend's placement
 * messages itself (proto/transport/ucx_tp.c): a push placed slot by slot
 * lands in its buffer with no staging of its size charged to the
 * MigrateIn's session; a peer that fills a slot past the ring or never
 * offered, fills one for another transfer or one offered to an earlier
 * transfer of the same id, or vanishes mid-ring fails that migration alone,
 * and the server goes on and holds nothing once its client left. The
 * rings are sealed memfds, and a peer's ring that is not is left unused.
 * A peer alive but silent, as destination or as source of a placed push,
 * fails the migration within the frame deadline and leaves nothing held.
 * Two real servers, one killed (SIGSTOP to hold it, then SIGKILL) as
 * source or destination mid-placement, or a link closed behind a push's
 * head: the survivor fails the migration with CL_DEVICE_NOT_AVAILABLE at
 * once, goes on, places again to a new server on the same address, and
 * holds nothing after.
 */
#include <sys/mman.h>

#include <poll.h>
#include <signal.h>
#include <time.h>

#include "rawproto.h"
#include "ucxpeer.h"

#define MIB		(1u << 20)
#define PL_WAIT_S	UCXPEER_WAIT_S
#define PL_CTL_NS	0x7fffffffu
#define PL_PLACE	(1ull << 63)

/* The backend's placement message (one host: host byte order). */
enum {
	PM_RING = 1, PM_MAPPED, PM_OFFER, PM_FILLED, PM_UNUSED, PM_DONE,
	PM_ABORT,
};
struct pmsg {
	uint32_t	type;
	uint32_t	slot;
	uint64_t	xid;
	uint64_t	off;
	uint64_t	len;
	char		name[32];
};

/* This process as a peer server: its link, the server's ring mapped. */
struct peer {
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep;
	struct conn		 p;
	uint32_t		 ns, srv_ns, link;
	uint8_t			*ring;
	uint64_t		 slot_len;
	unsigned		 nslots;
	struct pmsg		 in;
	int			 in_done, in_status, sent;
	int			 sealed;	/* its ring cannot shrink */
};

/*
 * The server with ucx forced, a session limit of limit bytes if not 0,
 * and a frame deadline of frame seconds (at a minimum rate that makes a
 * bulk's size count for nothing when short).
 */
static int
pl_server_to(struct srv *sv, const char *name, const char *limit,
    const char *frame)
{
	const char	*args[] = { "--transport-force", "ucx",
	    "--frame-timeout", frame, "--min-rate", "1G", NULL, NULL, NULL };

	if (limit != NULL) {
		args[6] = "--max-session-bytes";
		args[7] = limit;
	}
	return (srv_start(sv, name, "127.0.0.1:0", args));
}

/* The server with ucx forced, a session limit of limit bytes if not 0. */
static int
pl_server(struct srv *sv, const char *name, const char *limit)
{
	return (pl_server_to(sv, name, limit, "600"));
}

/* FNV-1a, as the backend hashes addresses. */
static uint32_t
pl_fnv(const void *a, size_t len)
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
static uint32_t
pl_link(int fd)
{
	struct sockaddr_storage	a, b;
	socklen_t		la = sizeof a, lb = sizeof b;
	uint32_t		h1, h2;

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (getsockname(fd, (struct sockaddr *)&a, &la) != 0 ||
	    getpeername(fd, (struct sockaddr *)&b, &lb) != 0)
		return (0);
	h1 = pl_fnv(&a, la);
	h2 = pl_fnv(&b, lb);
	return (h1 < h2 ? h1 * 31u + h2 : h2 * 31u + h1);
}

/* A placement message of the server's came. */
static void
pl_in_cb(int status, void *arg)
{
	struct peer	*pe = arg;

	pe->in_status = status;
	pe->in_done = 1;
}

/* A placement message of ours went. */
static void
pl_sent_cb(int status, void *arg)
{
	struct peer	*pe = arg;

	pe->sent++;
}

/* The server's next placement message (bounded by the clock). 0 or -1. */
static int
pl_recv(struct peer *pe, struct pmsg *m)
{
	int64_t	end = ucxpeer_now_ms() + PL_WAIT_S * 1000;

	pe->in_done = 0;
	if (vcl_ucx_recv(pe->ep, ((uint64_t)(pe->srv_ns ^ PL_CTL_NS) << 32) |
	    pe->link, &pe->in, sizeof pe->in, pl_in_cb, pe) == NULL)
		return (-1);
	while (!pe->in_done && ucxpeer_now_ms() < end)
		(void)ucxpeer_turn(pe->u, NULL);
	if (!pe->in_done || pe->in_status != 0)
		return (-1);
	*m = pe->in;
	return (0);
}

/* Send a placement message and progress until it went. 0 or -1. */
static int
pl_send(struct peer *pe, uint32_t type, uint32_t slot, uint64_t xid)
{
	static struct pmsg	 m;
	struct iovec		 iov = { &m, sizeof m };
	int64_t			 end = ucxpeer_now_ms() + PL_WAIT_S * 1000;
	int			 want = pe->sent + 1;

	memset(&m, 0, sizeof m);
	m.type = type;
	m.slot = slot;
	m.xid = xid;
	if (vcl_ucx_send(pe->ep, ((uint64_t)(pe->ns ^ PL_CTL_NS) << 32) |
	    pe->link, &iov, 1, pl_sent_cb, pe) == NULL)
		return (-1);
	while (pe->sent < want && ucxpeer_now_ms() < end)
		(void)ucxpeer_turn(pe->u, NULL);
	return (pe->sent == want ? 0 : -1);
}

/*
 * Open a peer link choosing ucx, take the server's ring (RING), map it
 * and say so (MAPPED). 0 or -1.
 */
static int
pl_open(struct peer *pe, const struct srv *sv)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Hello		 h = VCL__HELLO__INIT;
	Vcl__TransportOffer	 o = VCL__TRANSPORT_OFFER__INIT, *op = &o;
	const Vcl__TransportOffer *w;
	struct reply		 rp;
	struct pmsg		 m;
	struct stat		 st;
	const void		*a;
	char			 err[256], name[33];
	size_t			 alen;
	void			*p;
	int			 fd, rc = -1;

	memset(pe, 0, sizeof *pe);
	pe->p.fd = -1;
	if ((pe->u = vcl_ucx_create(NULL, err, sizeof err)) == NULL) {
		note("vcl_ucx_create: %s", err);
		return (-1);
	}
	if (conn_open(&pe->p, sv) != 0)
		return (-1);
	pe->p.peer = 1;
	vcl_ucx_address(pe->u, &a, &alen);
	pe->ns = pl_fnv(a, alen);
	o.name = "ucx";
	o.has_address = 1;
	o.address.data = (uint8_t *)a;
	o.address.len = alen;
	h.version = VCL_PROTOCOL_VERSION;
	h.client_name = "place_test";
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
		pe->srv_ns = pl_fnv(w->address.data, w->address.len);
		rc = 0;
	} else
		note("peer link: the server did not choose ucx");
	reply_free(&rp);
	if (rc != 0)
		return (-1);
	pe->link = pl_link(pe->p.fd);
	if (pl_recv(pe, &m) != 0 || m.type != PM_RING || m.off == 0 ||
	    m.len == 0 || m.len > 16) {
		note("no ring from the server");
		return (-1);
	}
	memcpy(name, m.name, sizeof m.name);
	name[sizeof m.name] = '\0';
	if ((fd = open(name, O_RDWR | O_CLOEXEC)) == -1) {
		note("open %s: %s", name, strerror(errno));
		return (-1);
	}
	/* Sealed: its owner cannot shrink it under our stores. */
	pe->sealed = (fcntl(fd, F_GET_SEALS) & (F_SEAL_SHRINK |
	    F_SEAL_GROW)) == (F_SEAL_SHRINK | F_SEAL_GROW) &&
	    ftruncate(fd, 4096) == -1 && errno == EPERM;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != m.off * m.len ||
	    (p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
	    MAP_SHARED, fd, 0)) == MAP_FAILED) {
		close(fd);
		note("the server's ring: wrong size or no mapping");
		return (-1);
	}
	close(fd);
	pe->ring = p;
	pe->slot_len = m.off;
	pe->nslots = (unsigned)m.len;
	return (pl_send(pe, PM_MAPPED, 0, 0));
}

/* Close the link and let the engine go. */
static void
pl_close(struct peer *pe)
{
	if (pe->ep != NULL)
		vcl_ucx_ep_close(pe->ep);
	pe->ep = NULL;
	conn_close(&pe->p);
	if (pe->ring != NULL)
		munmap(pe->ring, pe->slot_len * pe->nslots);
	pe->ring = NULL;
	if (pe->u != NULL)
		vcl_ucx_free(pe->u);
	pe->u = NULL;
}

/* MigrateIn, then a Stats: the session ran it before any push head. */
static int
pl_migrate_in(struct conn *c, uint64_t ev, uint64_t mem, uint64_t size,
    uint64_t xfer)
{
	Vcl__StatsResult	st;

	if (migrate_in(c, ev, mem, size, xfer, NULL) != 0)
		return (-1);
	return (stats(c, &st));
}

/* The head of a PeerPush whose size bytes are placed as xid. */
static int
pl_push_head(struct peer *pe, uint64_t sid, uint64_t key, uint64_t transfer,
    uint64_t xid, uint64_t size)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerPush	pp = VCL__PEER_PUSH__INIT;

	pp.session = sid;
	pp.key = key;
	pp.transfer = transfer;
	pp.status = CL_SUCCESS;
	r.has_bulk_xfer = r.has_bulk_size = 1;
	r.bulk_xfer = xid | PL_PLACE;
	r.bulk_size = size;
	r.call_case = VCL__REQUEST__CALL_PEER_PUSH;
	r.peer_push = &pp;
	return (send_req(&pe->p, &r, NULL, 0));
}

/* ReadBuffer{queue 2, mem, off, size}. */
static int
pl_read(struct conn *c, uint64_t mem, uint64_t off, uint64_t size,
    struct reply *rp)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;

	q.queue = 2;
	m.q = &q;
	m.mem = mem;
	m.offset = off;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	return (call(c, &r, NULL, 0, rp));
}

/* Fill with a pattern. */
static void
pl_fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t	i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13 + seed + (i >> 12));
}

/*
 * Serve the offers of xid honestly until every byte of len was placed
 * and the server said DONE. 0 or -1.
 */
static int
pl_serve(struct peer *pe, uint64_t xid, const uint8_t *data, uint64_t len)
{
	struct pmsg	m;
	uint64_t	placed = 0;

	for (;;) {
		if (pl_recv(pe, &m) != 0) {
			note("no placement message after %llu bytes",
			    (unsigned long long)placed);
			return (-1);
		}
		if (m.type == PM_DONE && m.xid == xid)
			return (placed == len ? 0 : -1);
		if (m.type != PM_OFFER || m.xid != xid || m.slot >= pe->nslots ||
		    m.len > pe->slot_len || m.off > len || m.len > len - m.off) {
			note("unexpected message %u", m.type);
			return (-1);
		}
		memcpy(pe->ring + (uint64_t)m.slot * pe->slot_len, data + m.off,
		    m.len);
		placed += m.len;
		if (pl_send(pe, PM_FILLED, m.slot, xid) != 0)
			return (-1);
	}
}

/*
 * A push placed chunk by chunk lands in its buffer. The session may hold
 * its buffer but not a second copy of it: a MigrateIn whose bytes come
 * placed needs no staging of their size (its session is limited to 1.75
 * times the buffer).
 */
static void
test_lands(void)
{
	enum { SIZE = 8 * MIB };
	struct srv	 sv;
	struct conn	 c;
	struct peer	 pe;
	struct reply	 rp;
	uint64_t	 sid = 0, key = 0;
	uint8_t		*data;
	char		 limit[32];
	cl_int		 evst = 1;
	int		 rc, half;

	c.fd = -1;
	pe.u = NULL;
	if ((data = malloc(SIZE)) == NULL)
		return;
	pl_fill(data, SIZE, 5);
	snprintf(limit, sizeof limit, "%u", SIZE + SIZE * 3 / 4);
	if (!pl_server(&sv, "lands_server_start", limit))
		goto out0;
	if (!check("lands_sessions", client_open(&c, &sv, &sid, &key) == 0 &&
	    pl_open(&pe, &sv) == 0, "no sessions"))
		goto out;
	rc = create_buffer(&c, 3, 1, SIZE, NULL, 0);
	rc |= pl_migrate_in(&c, 10, 3, SIZE, 77);
	rc |= pl_push_head(&pe, sid, key, 77, 1, SIZE);
	rc |= pl_serve(&pe, 1 | PL_PLACE, data, SIZE);
	rc |= ucxpeer_wait_notify(pe.u, &c, 10, &evst);
	check("lands_complete", rc == 0 && evst == CL_COMPLETE, "MigrateIn "
	    "event %d (rc %d)", evst, rc);
	/* Read back by halves (the whole would not fit the limit). */
	for (half = 0; half < 2; half++) {
		rc = pl_read(&c, 3, half * (SIZE / 2), SIZE / 2, &rp);
		check(half == 0 ? "lands_bytes_0" : "lands_bytes_1", rc == 0 &&
		    rp.r->status == CL_SUCCESS && rp.bulk_len == SIZE / 2 &&
		    memcmp(rp.bulk, data + half * (SIZE / 2), SIZE / 2) == 0,
		    "read back: rc %d, status %d, %llu bytes", rc,
		    rc == 0 ? rp.r->status : 0,
		    (unsigned long long)(rc == 0 ? rp.bulk_len : 0));
		if (rc == 0)
			reply_free(&rp);
	}
out:
	conn_close(&c);
	pl_close(&pe);
	srv_stop(&sv, "lands_server_exit");
out0:
	free(data);
}

enum { BAD_SLOT, BAD_XID, UNOFFERED, VANISH };

/*
 * A hostile peer (how): its migration fails with an error (not a hang),
 * the client's session and the server go on, nothing is held after.
 */
static void
pl_hostile(const char *name, int how)
{
	enum { SIZE = 256 << 10 };	/* one chunk: one slot offered */
	struct srv		 sv;
	struct conn		 c, w;
	struct peer		 pe;
	struct pmsg		 m;
	struct reply		 rp;
	Vcl__StatsResult	 st;
	uint64_t		 sid = 0, key = 0;
	char			 what[64];
	cl_int			 evst = 1;
	int			 rc;

	c.fd = w.fd = -1;
	pe.u = NULL;
	pe.p.fd = -1;
	snprintf(what, sizeof what, "%s_server_start", name);
	if (!pl_server(&sv, what, NULL))
		return;
	snprintf(what, sizeof what, "%s_sessions", name);
	if (!check(what, client_open(&c, &sv, &sid, &key) == 0 &&
	    conn_session(&w, &sv) == 0 && pl_open(&pe, &sv) == 0,
	    "no sessions"))
		goto out;
	rc = create_buffer(&c, 3, 1, SIZE, NULL, 0);
	rc |= pl_migrate_in(&c, 10, 3, SIZE, 77);
	rc |= pl_push_head(&pe, sid, key, 77, 1, SIZE);
	rc |= pl_recv(&pe, &m);
	snprintf(what, sizeof what, "%s_offered", name);
	if (!check(what, rc == 0 && m.type == PM_OFFER && m.xid ==
	    (1 | PL_PLACE) && m.slot < pe.nslots, "no offer (rc %d, type %u)",
	    rc, m.type))
		goto out;
	switch (how) {
	case BAD_SLOT:		/* a slot past the ring */
		rc = pl_send(&pe, PM_FILLED, pe.nslots + 5, m.xid);
		break;
	case BAD_XID:		/* the slot offered, another transfer */
		rc = pl_send(&pe, PM_FILLED, m.slot, m.xid + 1);
		break;
	case UNOFFERED:		/* a slot of the ring never offered */
		rc = pl_send(&pe, PM_FILLED, (m.slot + 1) % pe.nslots, m.xid);
		break;
	default:		/* gone between OFFER and FILLED */
		pl_close(&pe);
		rc = 0;
		break;
	}
	if (how != VANISH)
		rc |= ucxpeer_wait_notify(pe.u, &c, 10, &evst);
	else
		rc |= wait_notify(&c, 10, &evst);
	snprintf(what, sizeof what, "%s_fails", name);
	check(what, rc == 0 && evst < 0, "the migration: event %d (rc %d)",
	    evst, rc);
	snprintf(what, sizeof what, "%s_session_goes_on", name);
	rc = read_buffer(&c, 2, 3, 4096, &rp);
	if (rc == 0) {
		rc = rp.r->status;
		reply_free(&rp);
	}
	check(what, stats(&c, &st) == 0 && rc == 0, "no Stats or read (%d)",
	    rc);
	conn_close(&c);
	pl_close(&pe);
	snprintf(what, sizeof what, "%s_nothing_held", name);
	check(what, wait_empty(&w, &st) == 0, "%llu objects, %llu bytes held",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&w);
	pl_close(&pe);
	snprintf(what, sizeof what, "%s_server_exit", name);
	srv_stop(&sv, what);
}

/*
 * The rings are sealed memfds: the server's can neither shrink nor grow
 * (its writer, this process, is safe), and the server maps no ring of a
 * peer that is not sealed against shrinking (it would fault on a store).
 */
static void
test_sealed(void)
{
	struct srv		 sv;
	struct conn		 w;
	struct peer		 pe;
	Vcl__StatsResult	 st;
	struct pmsg		 m;
	struct iovec		 iov = { &m, sizeof m };
	void			*p = MAP_FAILED;
	int64_t			 end;
	int			 fd = -1, want;

	w.fd = -1;
	pe.u = NULL;
	pe.p.fd = -1;
	if (!pl_server(&sv, "sealed_server_start", NULL))
		return;
	if (!check("sealed_link", conn_session(&w, &sv) == 0 &&
	    pl_open(&pe, &sv) == 0, "no link"))
		goto out;
	check("sealed_theirs", pe.sealed, "the server's ring can shrink");
	/* Ours, of the right size, not sealed: the server leaves it. */
	if ((fd = memfd_create("ring", MFD_CLOEXEC)) == -1 ||
	    ftruncate(fd, 2 * 65536) != 0 || (p = mmap(NULL, 2 * 65536,
	    PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		check("sealed_ours", 0, "memfd: %s", strerror(errno));
		goto out;
	}
	memset(&m, 0, sizeof m);
	m.type = PM_RING;
	m.off = 65536;
	m.len = 2;
	snprintf(m.name, sizeof m.name, "/proc/%d/fd/%d", (int)getpid(), fd);
	want = pe.sent + 1;
	if (vcl_ucx_send(pe.ep, ((uint64_t)(pe.ns ^ PL_CTL_NS) << 32) |
	    pe.link, &iov, 1, pl_sent_cb, &pe) == NULL)
		want = -1;
	end = ucxpeer_now_ms() + PL_WAIT_S * 1000;
	while (ucxpeer_now_ms() < end && (pe.sent != want ||
	    !srv_stderr_has(&sv, "not sealed")))
		(void)ucxpeer_turn(pe.u, NULL);
	check("sealed_unsealed_refused", pe.sent == want &&
	    srv_stderr_has(&sv, "not sealed"), "the server took a ring its "
	    "owner can shrink");
	check("sealed_server_goes_on", stats(&w, &st) == 0, "no Stats");
out:
	if (p != MAP_FAILED)
		munmap(p, 2 * 65536);
	if (fd != -1)
		close(fd);
	conn_close(&w);
	pl_close(&pe);
	srv_stop(&sv, "sealed_server_exit");
}

/*
 * A transfer id used again on the link: the slots still offered for the
 * first transfer (failed by the peer) are not chunks of the second. The
 * peer fills one of them, at an offset past the second transfer's bytes,
 * and says so: nothing of it may land in the buffer outside the range
 * the MigrateIn named, and the second transfer completes only with its
 * own chunk.
 */
static void
test_reused(void)
{
	enum { BUF = 2 * MIB, A = 1 * MIB, B = 256 << 10 };
	struct srv		 sv;
	struct conn		 c;
	struct peer		 pe;
	struct pmsg		 m, offers[16];
	struct reply		 rp;
	Vcl__StatsResult	 st;
	uint64_t		 sid = 0, key = 0, xid = 1 | PL_PLACE;
	uint8_t			*data, *zero;
	cl_int			 evst = 1;
	unsigned		 i, n = 0, stale = 0, first = 0;
	int			 rc;

	c.fd = -1;
	pe.u = NULL;
	pe.p.fd = -1;
	data = malloc(A);
	zero = calloc(1, A);
	if (data == NULL || zero == NULL)
		goto out0;
	pl_fill(data, A, 9);
	if (!pl_server(&sv, "reused_server_start", NULL))
		goto out0;
	if (!check("reused_sessions", client_open(&c, &sv, &sid, &key) == 0 &&
	    pl_open(&pe, &sv) == 0, "no sessions"))
		goto out;
	rc = create_buffer(&c, 3, 1, BUF, NULL, 0);
	rc |= pl_migrate_in(&c, 10, 3, B, 77);
	/* The first transfer (nobody waits for it): every slot offered. */
	rc |= pl_push_head(&pe, sid, key, 78, 1, A);
	while (rc == 0 && n < pe.nslots && pl_recv(&pe, &m) == 0 &&
	    m.type == PM_OFFER)
		offers[n++] = m;
	if (!check("reused_offers", rc == 0 && n == pe.nslots && n >= 2,
	    "%u offers (rc %d)", n, rc))
		goto out;
	for (i = 0; i < n; i++) {
		if (offers[i].off == 0)
			first = i;
		if (offers[i].off >= B)
			stale = i;
	}
	/* The first slot not written: the first transfer fails. */
	rc = pl_send(&pe, PM_UNUSED, offers[first].slot, xid);
	rc |= pl_recv(&pe, &m);
	if (!check("reused_abort", rc == 0 && m.type == PM_ABORT, "no ABORT "
	    "(rc %d, type %u)", rc, m.type))
		goto out;
	/* The same id again, for the waiting transfer: one slot free. */
	rc = pl_push_head(&pe, sid, key, 77, 1, B);
	rc |= pl_recv(&pe, &m);
	if (!check("reused_offer", rc == 0 && m.type == PM_OFFER &&
	    m.off == 0 && m.len == B, "no offer (rc %d, type %u)", rc,
	    m.type))
		goto out;
	/* A slot of the first transfer, filled and said filled. */
	memcpy(pe.ring + (uint64_t)offers[stale].slot * pe.slot_len, data,
	    offers[stale].len);
	rc = pl_send(&pe, PM_FILLED, offers[stale].slot, xid);
	/* Then the second transfer's own chunk. */
	memcpy(pe.ring + (uint64_t)m.slot * pe.slot_len, data, B);
	rc |= pl_send(&pe, PM_FILLED, m.slot, xid);
	rc |= ucxpeer_wait_notify(pe.u, &c, 10, &evst);
	check("reused_done", rc == 0, "no end of the migration (rc %d)", rc);
	rc = pl_read(&c, 3, offers[stale].off, offers[stale].len, &rp);
	check("reused_nothing_outside", rc == 0 && rp.r->status ==
	    CL_SUCCESS && rp.bulk_len == offers[stale].len &&
	    memcmp(rp.bulk, zero, offers[stale].len) == 0, "the buffer past "
	    "the transfer's range was written (rc %d)", rc);
	if (rc == 0)
		reply_free(&rp);
	if (evst == CL_COMPLETE) {
		rc = pl_read(&c, 3, 0, B, &rp);
		check("reused_own_chunk", rc == 0 && rp.r->status ==
		    CL_SUCCESS && rp.bulk_len == B && memcmp(rp.bulk, data,
		    B) == 0, "the transfer's bytes (rc %d)", rc);
		if (rc == 0)
			reply_free(&rp);
	}
	check("reused_session_goes_on", stats(&c, &st) == 0, "no Stats");
out:
	conn_close(&c);
	pl_close(&pe);
	srv_stop(&sv, "reused_server_exit");
out0:
	free(data);
	free(zero);
}

/* A FILLED naming a slot past the ring. */
static void
test_bad_slot(void)
{
	pl_hostile("bad_slot", BAD_SLOT);
}

/* A FILLED for the slot offered, naming another transfer. */
static void
test_bad_xid(void)
{
	pl_hostile("bad_xid", BAD_XID);
}

/* A FILLED for a free slot of the ring, never offered. */
static void
test_unoffered(void)
{
	pl_hostile("unoffered", UNOFFERED);
}

/* The peer vanishes between an OFFER and its FILLED. */
static void
test_vanish(void)
{
	pl_hostile("vanish", VANISH);
}

/*
 * MigrateOut{buffer 3 of context 1, size} to the session sid/key of the
 * server at to, as transfer xfer, its event ev, after event wait (0: none).
 */
static int
pl_migrate_out_after(struct conn *c, const char *to, uint64_t sid,
    uint64_t key, uint64_t size, uint64_t xfer, uint64_t ev, uint64_t wait)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__MigrateOut	 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__PeerDest	 d = VCL__PEER_DEST__INIT;

	d.addr = (char *)to;
	d.session = sid;
	d.key = key;
	mo.context = 1;
	mo.mem = 3;
	mo.size = size;
	mo.dest = &d;
	mo.transfer = xfer;
	mo.has_event = 1;
	mo.event = ev;
	mo.n_wait = wait != 0;
	mo.wait = &wait;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	return (send_req(c, &r, NULL, 0));
}

/* The same, after nothing. */
static int
pl_migrate_out(struct conn *c, const char *to, uint64_t sid, uint64_t key,
    uint64_t size, uint64_t xfer, uint64_t ev)
{
	return (pl_migrate_out_after(c, to, sid, key, size, xfer, ev, 0));
}

/*
 * A destination alive but silent: two real servers on ucx, a migration
 * placed from a to b; then b is stopped (its sockets and UCX endpoint stay
 * open, it answers nothing) and a second migration's push waits for a
 * slot b never offers. Within a's frame deadline (1 s here; the default is
 * 30) the migration fails as on a lost node (CL_DEVICE_NOT_AVAILABLE) and
 * a holds nothing once its client left.
 */
static void
test_silent_dest(void)
{
	enum { SIZE = 1 * MIB };
	struct srv		 a, b;
	struct conn		 ca, cb, wa;
	Vcl__StatsResult	 st;
	uint64_t		 sa = 0, ka = 0, sb = 0, kb = 0;
	uint8_t			*data;
	char			 to[64];
	cl_int			 st_out = 1, st_in = 1;
	int			 i, rc, stopped = 0;

	ca.fd = cb.fd = wa.fd = -1;
	b.pid = -1;
	memset(&st, 0, sizeof st);
	if ((data = malloc(SIZE)) == NULL)
		return;
	pl_fill(data, SIZE, 3);
	if (!pl_server_to(&a, "silent_dest_server_a", NULL, "1"))
		goto out0;
	if (!pl_server(&b, "silent_dest_server_b", NULL))
		goto out1;
	snprintf(to, sizeof to, "127.0.0.1:%s", b.port);
	if (!check("silent_dest_sessions", client_open(&ca, &a, &sa, &ka) ==
	    0 && client_open(&cb, &b, &sb, &kb) == 0 &&
	    conn_session(&wa, &a) == 0, "no sessions"))
		goto out;
	rc = create_buffer(&ca, 3, 1, SIZE, data, SIZE);
	rc |= create_buffer(&cb, 3, 1, SIZE, NULL, 0);
	/*
	 * The link and its rings: the first migration opens the link (its
	 * push goes whole), the second is placed.
	 */
	for (i = 0; rc == 0 && i < 2; i++) {
		rc = migrate_in(&cb, 10 + 2 * i, 3, SIZE, 77 + i, NULL);
		rc |= pl_migrate_out(&ca, to, sb, kb, SIZE, 77 + i, 11 + 2 * i);
		if (rc == 0)
			rc = wait_notify(&ca, 11 + 2 * i, &st_out) |
			    wait_notify(&cb, 10 + 2 * i, &st_in);
		if (st_out != CL_COMPLETE || st_in != CL_COMPLETE)
			rc = -1;
	}
	if (!check("silent_dest_placed", rc == 0 && stats(&wa, &st) == 0 &&
	    st.peer_bytes_shared >= SIZE, "migrations: out %d, in %d, rc %d, "
	    "%llu bytes placed", st_out, st_in, rc,
	    (unsigned long long)st.peer_bytes_shared))
		goto out;
	/* b alive but silent: the push's head goes, no slot comes. */
	stopped = kill(b.pid, SIGSTOP) == 0;
	st_out = 1;
	rc = pl_migrate_out(&ca, to, sb, kb, SIZE, 80, 20);
	if (rc == 0)
		rc = wait_notify(&ca, 20, &st_out);
	check("silent_dest_fails", rc == 0 && st_out ==
	    CL_DEVICE_NOT_AVAILABLE, "the migration to a silent peer: "
	    "event %d (rc %d)", st_out, rc);
	check("silent_dest_logged", srv_stderr_has(&a, "does not take a "
	    "placed push"), "no log line of the dropped link");
	conn_close(&ca);
	check("silent_dest_nothing_held", wait_empty(&wa, &st) == 0,
	    "%llu objects, %llu bytes held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	if (stopped)
		kill(b.pid, SIGCONT);
	conn_close(&ca);
	conn_close(&cb);
	conn_close(&wa);
	srv_stop(&b, "silent_dest_server_b_exit");
out1:
	srv_stop(&a, "silent_dest_server_a_exit");
out0:
	free(data);
}

/*
 * A source alive but silent: this process places one chunk of a push
 * and then sends nothing more, progressing its worker all the while. The
 * server's frame deadline (1 s here) ends the push's session: the
 * MigrateIn fails as on a lost node, the slots and staging go, and the
 * server holds nothing once the client left.
 */
static void
test_silent_src(void)
{
	enum { SIZE = 1 * MIB };
	struct srv		 sv;
	struct conn		 c, w;
	struct peer		 pe;
	struct pmsg		 m;
	Vcl__StatsResult	 st;
	uint64_t		 sid = 0, key = 0;
	uint8_t			*data;
	cl_int			 evst = 1;
	int			 rc;

	c.fd = w.fd = -1;
	pe.u = NULL;
	pe.p.fd = -1;
	if ((data = malloc(SIZE)) == NULL)
		return;
	pl_fill(data, SIZE, 7);
	if (!pl_server_to(&sv, "silent_src_server_start", NULL, "1"))
		goto out0;
	if (!check("silent_src_sessions", client_open(&c, &sv, &sid, &key) ==
	    0 && conn_session(&w, &sv) == 0 && pl_open(&pe, &sv) == 0,
	    "no sessions"))
		goto out;
	rc = create_buffer(&c, 3, 1, SIZE, NULL, 0);
	rc |= pl_migrate_in(&c, 10, 3, SIZE, 77);
	rc |= pl_push_head(&pe, sid, key, 77, 1, SIZE);
	rc |= pl_recv(&pe, &m);
	if (!check("silent_src_offered", rc == 0 && m.type == PM_OFFER &&
	    m.slot < pe.nslots && m.len <= pe.slot_len && m.off < SIZE &&
	    m.len <= SIZE - m.off, "no offer (rc %d, type %u)", rc, m.type))
		goto out;
	memcpy(pe.ring + (uint64_t)m.slot * pe.slot_len, data + m.off, m.len);
	rc = pl_send(&pe, PM_FILLED, m.slot, m.xid);
	/* Silent from here on, yet alive: the worker keeps progressing. */
	rc |= ucxpeer_wait_notify(pe.u, &c, 10, &evst);
	check("silent_src_fails", rc == 0 && evst == CL_DEVICE_NOT_AVAILABLE,
	    "the migration from a silent peer: event %d (rc %d)", evst, rc);
	check("silent_src_session_goes_on", stats(&c, &st) == 0, "no Stats");
	conn_close(&c);
	pl_close(&pe);
	check("silent_src_nothing_held", wait_empty(&w, &st) == 0,
	    "%llu objects, %llu bytes held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&w);
	pl_close(&pe);
	srv_stop(&sv, "silent_src_server_exit");
out0:
	free(data);
}

/* Two servers on ucx, a -> b placed; what the kill tests share. */
struct pl_pair {
	struct srv	 a, b;
	struct conn	 ca, cb, wa, wb;
	uint64_t	 sa, ka, sb, kb;
	char		 to[64];
	int		 up;		/* both started */
};

/*
 * Start a and b (frame deadline 600 s: nothing here may wait for it),
 * a client on each with buffer 3 (size bytes, a's filled), a watcher on
 * each, and two migrations a -> b: the first opens the link, the second
 * is placed. Returns 0, else a FAIL is reported.
 */
static int
pl_pair_start_to(struct pl_pair *pp, const char *name, uint64_t size,
    const char *frame_a)
{
	Vcl__StatsResult	 st;
	uint8_t			*data;
	char			 what[96];
	cl_int			 st_out = 1, st_in = 1;
	int			 i, rc;

	memset(pp, 0, sizeof *pp);
	pp->ca.fd = pp->cb.fd = pp->wa.fd = pp->wb.fd = -1;
	pp->a.pid = pp->b.pid = -1;
	snprintf(what, sizeof what, "%s_servers", name);
	if (!pl_server_to(&pp->a, what, NULL, frame_a))
		return (-1);
	if (!pl_server(&pp->b, what, NULL))
		return (-1);
	pp->up = 1;
	snprintf(pp->to, sizeof pp->to, "127.0.0.1:%s", pp->b.port);
	snprintf(what, sizeof what, "%s_sessions", name);
	if (!check(what, client_open(&pp->ca, &pp->a, &pp->sa, &pp->ka) ==
	    0 && client_open(&pp->cb, &pp->b, &pp->sb, &pp->kb) == 0 &&
	    conn_session(&pp->wa, &pp->a) == 0 &&
	    conn_session(&pp->wb, &pp->b) == 0, "no sessions"))
		return (-1);
	if ((data = malloc(size)) == NULL)
		return (-1);
	pl_fill(data, size, 9);
	rc = create_buffer(&pp->ca, 3, 1, size, data, size);
	rc |= create_buffer(&pp->cb, 3, 1, size, NULL, 0);
	free(data);
	for (i = 0; rc == 0 && i < 2; i++) {
		rc = migrate_in(&pp->cb, 10 + 2 * i, 3, size, 77 + i, NULL);
		rc |= pl_migrate_out(&pp->ca, pp->to, pp->sb, pp->kb, size,
		    77 + i, 11 + 2 * i);
		if (rc == 0)
			rc = wait_notify(&pp->ca, 11 + 2 * i, &st_out) |
			    wait_notify(&pp->cb, 10 + 2 * i, &st_in);
		if (st_out != CL_COMPLETE || st_in != CL_COMPLETE)
			rc = -1;
	}
	memset(&st, 0, sizeof st);
	snprintf(what, sizeof what, "%s_placed", name);
	if (!check(what, rc == 0 && stats(&pp->wa, &st) == 0 &&
	    st.peer_bytes_shared >= size, "migrations: out %d, in %d, rc %d, "
	    "%llu bytes placed", st_out, st_in, rc,
	    (unsigned long long)st.peer_bytes_shared))
		return (-1);
	return (0);
}

/* The same, both servers with a frame deadline of 600 s. */
static int
pl_pair_start(struct pl_pair *pp, const char *name, uint64_t size)
{
	return (pl_pair_start_to(pp, name, size, "600"));
}

/* End what pl_pair_start started (servers killed by a test excepted). */
static void
pl_pair_stop(struct pl_pair *pp, const char *name)
{
	char	what[96];

	conn_close(&pp->ca);
	conn_close(&pp->cb);
	conn_close(&pp->wa);
	conn_close(&pp->wb);
	if (pp->a.pid > 0 && srv_alive(&pp->a)) {
		snprintf(what, sizeof what, "%s_server_a_exit", name);
		srv_stop(&pp->a, what);
	}
	if (pp->b.pid > 0 && srv_alive(&pp->b)) {
		snprintf(what, sizeof what, "%s_server_b_exit", name);
		srv_stop(&pp->b, what);
	}
}

/* Poll a's Stats (bounded) until it sent want bytes to peers. */
static int
pl_wait_out(struct conn *w, uint64_t want)
{
	Vcl__StatsResult	st;
	int			i;

	for (i = 0; i < 2000; i++) {
		if (stats(w, &st) != 0)
			return (-1);
		if (st.peer_bytes_out >= want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/* SIGKILL a server and reap it. */
static void
pl_kill(struct srv *sv)
{
	kill(sv->pid, SIGKILL);
	while (!srv_reap(sv))
		poll_wait();
}

/*
 * The source of a placed push killed once the push's head went (the
 * destination stopped meanwhile, so that the head is still to come when
 * the source dies): the destination's link waits for its bytes out of
 * band and reads nothing else, yet the source is gone. The MigrateIn
 * fails as on a lost node (CL_DEVICE_NOT_AVAILABLE), not at the frame
 * deadline (600 s here), its session goes on, and the destination holds
 * nothing once its client left.
 */
static void
test_kill_src(void)
{
	enum { SIZE = 8 * MIB };
	struct pl_pair		 pp;
	Vcl__StatsResult	 st;
	cl_int			 st_in = 1;
	int			 rc, stopped = 0;

	if (pl_pair_start(&pp, "kill_src", SIZE) != 0)
		goto out;
	if (stats(&pp.wa, &st) != 0)
		goto out;
	stopped = kill(pp.b.pid, SIGSTOP) == 0;
	rc = migrate_in(&pp.cb, 20, 3, SIZE, 90, NULL);
	rc |= pl_migrate_out(&pp.ca, pp.to, pp.sb, pp.kb, SIZE, 90, 21);
	if (!check("kill_src_head_sent", rc == 0 && pl_wait_out(&pp.wa,
	    st.peer_bytes_out + SIZE) == 0, "a sent no push (rc %d)", rc))
		goto out;
	pl_kill(&pp.a);
	if (stopped)
		kill(pp.b.pid, SIGCONT);
	stopped = 0;
	rc = wait_notify(&pp.cb, 20, &st_in);
	check("kill_src_fails", rc == 0 && st_in == CL_DEVICE_NOT_AVAILABLE,
	    "the migration from a killed source: event %d (rc %d)", st_in, rc);
	check("kill_src_session_goes_on", stats(&pp.cb, &st) == 0,
	    "no Stats");
	conn_close(&pp.cb);
	check("kill_src_nothing_held", wait_empty(&pp.wb, &st) == 0,
	    "%llu objects, %llu bytes held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	if (stopped)
		kill(pp.b.pid, SIGCONT);
	pl_pair_stop(&pp, "kill_src");
}

/*
 * The source of a placed push killed while its chunks are in flight:
 * killed as soon as its push began (64 MiB, 16 chunks round a ring of 4
 * slots), when the destination holds slots it filled or is writing out.
 * The destination's MigrateIn ends, complete or with CL_DEVICE_NOT_AVAILABLE
 * (it may have landed whole first), its session goes on, and it holds
 * nothing once its client left.
 */
static void
test_kill_src_mid(void)
{
	enum { SIZE = 64 * MIB };
	struct pl_pair		 pp;
	Vcl__StatsResult	 st;
	cl_int			 st_in = 1;
	int			 rc;

	if (pl_pair_start(&pp, "kill_src_mid", SIZE) != 0)
		goto out;
	if (stats(&pp.wa, &st) != 0)
		goto out;
	rc = migrate_in(&pp.cb, 20, 3, SIZE, 90, NULL);
	rc |= pl_migrate_out(&pp.ca, pp.to, pp.sb, pp.kb, SIZE, 90, 21);
	if (!check("kill_src_mid_push_began", rc == 0 && pl_wait_out(&pp.wa,
	    st.peer_bytes_out + SIZE) == 0, "a sent no push (rc %d)", rc))
		goto out;
	pl_kill(&pp.a);
	rc = wait_notify(&pp.cb, 20, &st_in);
	check("kill_src_mid_ends", rc == 0 && (st_in == CL_COMPLETE ||
	    st_in == CL_DEVICE_NOT_AVAILABLE), "the migration from a source "
	    "killed mid-way: event %d (rc %d)", st_in, rc);
	if (rc == 0 && st_in == CL_COMPLETE)
		note("it landed whole before the kill");
	check("kill_src_mid_session_goes_on", stats(&pp.cb, &st) == 0,
	    "no Stats");
	conn_close(&pp.cb);
	check("kill_src_mid_nothing_held", wait_empty(&pp.wb, &st) == 0,
	    "%llu objects, %llu bytes held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	pl_pair_stop(&pp, "kill_src_mid");
}

/*
 * A link closed with a push's head still to come to the destination:
 * the destination is stopped, the source (frame deadline 1 s) gives up
 * on the placed push and closes the link while it stays up, then the
 * destination goes on and finds the head and the link's end behind it.
 * Its session waits for the push's bytes out of band and reads nothing
 * else, yet nobody will send them: the MigrateIn fails as on a lost node
 * at once (the destination's frame deadline is 600 s), and it holds
 * nothing once its client left.
 */
static void
test_link_closed(void)
{
	enum { SIZE = 8 * MIB };
	struct pl_pair		 pp;
	Vcl__StatsResult	 st;
	cl_int			 st_in = 1, st_out = 1;
	int			 rc, stopped = 0;

	if (pl_pair_start_to(&pp, "link_closed", SIZE, "1") != 0)
		goto out;
	stopped = kill(pp.b.pid, SIGSTOP) == 0;
	rc = migrate_in(&pp.cb, 20, 3, SIZE, 90, NULL);
	rc |= pl_migrate_out(&pp.ca, pp.to, pp.sb, pp.kb, SIZE, 90, 21);
	if (rc == 0)
		rc = wait_notify(&pp.ca, 21, &st_out);
	if (!check("link_closed_source_gave_up", rc == 0 && st_out ==
	    CL_DEVICE_NOT_AVAILABLE && srv_stderr_has(&pp.a, "does not take "
	    "a placed push"), "the source's migration: event %d (rc %d)",
	    st_out, rc))
		goto out;
	kill(pp.b.pid, SIGCONT);
	stopped = 0;
	rc = wait_notify(&pp.cb, 20, &st_in);
	check("link_closed_fails", rc == 0 && st_in == CL_DEVICE_NOT_AVAILABLE,
	    "the migration whose link closed: event %d (rc %d)", st_in, rc);
	check("link_closed_session_goes_on", stats(&pp.cb, &st) == 0,
	    "no Stats");
	conn_close(&pp.cb);
	check("link_closed_nothing_held", wait_empty(&pp.wb, &st) == 0,
	    "%llu objects, %llu bytes held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
	conn_close(&pp.ca);
	check("link_closed_source_holds_nothing", wait_empty(&pp.wa, &st) ==
	    0, "%llu objects, %llu bytes held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	if (stopped)
		kill(pp.b.pid, SIGCONT);
	pl_pair_stop(&pp, "link_closed");
}

/* A message of ours, the bytes of a push not placed, went (or failed). */
static void
pl_bulk_cb(int status, void *arg)
{
	int	*st = arg;

	*st = status == 0 ? 1 : -1;
}

/*
 * A push sent as one UCX message (not placed) whose transfer goes (its
 * client left) once the head came and before the bytes: the server must
 * still take the bytes, and drop them, so that the sender's send
 * completes. Cancelling the receive left the sender's rendezvous waiting
 * for a receive that never came: its migration held its staging and its
 * client waited until the link closed.
 */
static void
test_released_unsent(void)
{
	enum { SIZE = 8 * MIB };
	struct srv		 sv;
	struct conn		 c, w;
	struct peer		 pe;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__PeerPush		 pp = VCL__PEER_PUSH__INIT;
	Vcl__StatsResult	 st;
	struct iovec		 iov;
	uint64_t		 sid = 0, key = 0;
	uint8_t			*data;
	int64_t			 end;
	int			 rc, i, sent = 0;

	c.fd = w.fd = -1;
	pe.u = NULL;
	pe.p.fd = -1;
	if ((data = malloc(SIZE)) == NULL)
		return;
	pl_fill(data, SIZE, 11);
	if (!pl_server(&sv, "released_unsent_server_start", NULL))
		goto out0;
	if (!check("released_unsent_sessions", client_open(&c, &sv, &sid,
	    &key) == 0 && conn_session(&w, &sv) == 0 && pl_open(&pe, &sv) ==
	    0, "no sessions"))
		goto out;
	rc = create_buffer(&c, 3, 1, SIZE, NULL, 0);
	rc |= pl_migrate_in(&c, 10, 3, SIZE, 77);
	rc |= stats(&c, &st);		/* the MigrateIn waits */
	pp.session = sid;
	pp.key = key;
	pp.transfer = 77;
	r.has_bulk_xfer = r.has_bulk_size = 1;
	r.bulk_xfer = 5;		/* not placed: one UCX message */
	r.bulk_size = SIZE;
	r.call_case = VCL__REQUEST__CALL_PEER_PUSH;
	r.peer_push = &pp;
	rc |= send_req(&pe.p, &r, NULL, 0);
	/* The head taken (the receive posted), then the client leaves. */
	for (i = 0; rc == 0 && i < 3; i++)
		rc = stats(&w, &st);
	conn_close(&c);
	for (i = 0; rc == 0 && i < 2000; i++) {
		if ((rc = stats(&w, &st)) == 0 && st.objects == 0)
			break;
		poll_wait();
	}
	if (!check("released_unsent_released", rc == 0 && st.objects == 0,
	    "the transfer was not released (rc %d, %llu objects)", rc,
	    (unsigned long long)st.objects))
		goto out;
	iov.iov_base = data;
	iov.iov_len = SIZE;
	if (vcl_ucx_send(pe.ep, ((uint64_t)pe.ns << 32) ^ 5, &iov, 1,
	    pl_bulk_cb, &sent) == NULL)
		sent = -1;
	end = ucxpeer_now_ms() + 10 * 1000;
	while (sent == 0 && ucxpeer_now_ms() < end)
		(void)ucxpeer_turn(pe.u, NULL);
	check("released_unsent_taken", sent == 1, "the push's bytes were not "
	    "taken (%d)", sent);
	pl_close(&pe);
	check("released_unsent_nothing_held", wait_empty(&w, &st) == 0,
	    "%llu objects, %llu bytes held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	conn_close(&c);
	conn_close(&w);
	pl_close(&pe);
	srv_stop(&sv, "released_unsent_server_exit");
out0:
	free(data);
}

/*
 * The destination of a placed push killed with the push under way
 * (stopped before it, killed once the source sent the push's head and
 * waits for its slots or its pull), and a new one started on its
 * address: the source fails the migration as on a lost
 * node, its client session and loop go on, it holds nothing after, and
 * a migration to the new destination is placed and lands.
 */
static void
test_kill_dst(void)
{
	enum { SIZE = 32 * MIB };
	struct pl_pair		 pp;
	struct srv		 b2;
	struct conn		 cb2;
	Vcl__StatsResult	 st;
	uint64_t		 sb2 = 0, kb2 = 0, shared;
	char			 listen[64];
	const char		*args[] = { "--transport-force", "ucx",
	    "--frame-timeout", "600", "--min-rate", "1G", NULL };
	cl_int			 st_out = 1, st_in = 1;
	int			 rc, stopped = 0;

	cb2.fd = -1;
	b2.pid = -1;
	if (pl_pair_start(&pp, "kill_dst", SIZE) != 0)
		goto out;
	if (stats(&pp.wa, &st) != 0)
		goto out;
	stopped = kill(pp.b.pid, SIGSTOP) == 0;
	rc = migrate_in(&pp.cb, 20, 3, SIZE, 90, NULL);
	rc |= pl_migrate_out(&pp.ca, pp.to, pp.sb, pp.kb, SIZE, 90, 21);
	if (!check("kill_dst_head_sent", rc == 0 && pl_wait_out(&pp.wa,
	    st.peer_bytes_out + SIZE) == 0, "a sent no push (rc %d)", rc))
		goto out;
	pl_kill(&pp.b);
	stopped = 0;
	rc = wait_notify(&pp.ca, 21, &st_out);
	check("kill_dst_fails", rc == 0 && st_out == CL_DEVICE_NOT_AVAILABLE,
	    "the migration to a killed destination: event %d (rc %d)", st_out,
	    rc);
	check("kill_dst_session_goes_on", stats(&pp.ca, &st) == 0,
	    "no Stats");
	/* A new destination on the same address: placed again. */
	snprintf(listen, sizeof listen, "127.0.0.1:%s", pp.b.port);
	if (!srv_start(&b2, "kill_dst_restart", listen, args))
		goto out;
	if (!check("kill_dst_new_session", client_open(&cb2, &b2, &sb2,
	    &kb2) == 0 && create_buffer(&cb2, 3, 1, SIZE, NULL, 0) == 0,
	    "no session on the new destination"))
		goto out;
	shared = st.peer_bytes_shared;
	st_out = st_in = 1;
	rc = 0;
	/* The first may go on the old link's remains: twice. */
	rc = migrate_in(&cb2, 30, 3, SIZE, 95, NULL);
	rc |= pl_migrate_out(&pp.ca, pp.to, sb2, kb2, SIZE, 95, 31);
	if (rc == 0)
		rc = wait_notify(&pp.ca, 31, &st_out) |
		    wait_notify(&cb2, 30, &st_in);
	rc |= migrate_in(&cb2, 32, 3, SIZE, 96, NULL);
	rc |= pl_migrate_out(&pp.ca, pp.to, sb2, kb2, SIZE, 96, 33);
	if (rc == 0)
		rc = wait_notify(&pp.ca, 33, &st_out) |
		    wait_notify(&cb2, 32, &st_in);
	check("kill_dst_restarted_lands", rc == 0 && st_out == CL_COMPLETE &&
	    st_in == CL_COMPLETE && stats(&pp.wa, &st) == 0 &&
	    st.peer_bytes_shared >= shared + SIZE, "to the new destination: "
	    "out %d, in %d, rc %d, %llu bytes placed", st_out, st_in, rc,
	    (unsigned long long)(st.peer_bytes_shared - shared));
	conn_close(&pp.ca);
	conn_close(&cb2);
	check("kill_dst_nothing_held", wait_empty(&pp.wa, &st) == 0,
	    "%llu objects, %llu bytes held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
out:
	if (stopped)
		kill(pp.b.pid, SIGCONT);
	conn_close(&cb2);
	if (b2.pid > 0)
		srv_stop(&b2, "kill_dst_restart_exit");
	pl_pair_stop(&pp, "kill_dst");
}

/*
 * A placed migration whose link gives way while its wait list runs: a
 * (--max-sessions 1: one dialled link) chose to place the push to b, its
 * link being ready, when its MigrateOut came; the bytes are read once a
 * kernel ahead of it ends, and meanwhile a ForwardEvent to another
 * address takes the bound, so the idle link to b closes (a later use
 * reopens it, vcl_peer_room). The push must still go once the kernel
 * ended: the link to b was busy with it, not idle (the migration failed
 * with CL_DEVICE_NOT_AVAILABLE, b alive).
 */
static void
test_evict_placing(void)
{
	enum { SIZE = 1 * MIB };
	static const char *const args[] = { "--transport-force", "ucx",
	    "--frame-timeout", "600", "--min-rate", "1G", "--max-sessions",
	    "1", NULL };
	struct srv		 a, b;
	struct conn		 ca, cb;
	Vcl__StatsResult	 st;
	uint64_t		 sa, ka, sb, kb;
	uint8_t			*data;
	char			 to[64];
	cl_int			 st_out = 1, st_in = 1;
	int			 i, rc;

	ca.fd = cb.fd = -1;
	a.pid = b.pid = -1;
	if ((data = malloc(SIZE)) == NULL)
		return;
	pl_fill(data, SIZE, 5);
	if (!srv_start(&a, "evict_placing_server_a", "127.0.0.1:0", args) ||
	    !pl_server(&b, "evict_placing_server_b", NULL))
		goto out;
	snprintf(to, sizeof to, "127.0.0.1:%s", b.port);
	if (!check("evict_placing_sessions", client_open(&ca, &a, &sa, &ka) ==
	    0 && client_open(&cb, &b, &sb, &kb) == 0 &&
	    create_buffer(&ca, 3, 1, SIZE, data, SIZE) == 0 &&
	    create_buffer(&cb, 3, 1, SIZE, NULL, 0) == 0 &&
	    raw_spin_setup(&ca, 1, 20, 21, 22) == 0, "no sessions"))
		goto out;
	/* The first opens the link, the second is placed. */
	for (i = 0, rc = 0; rc == 0 && i < 2; i++) {
		rc = migrate_in(&cb, 10 + 2 * i, 3, SIZE, 77 + i, NULL);
		rc |= pl_migrate_out(&ca, to, sb, kb, SIZE, 77 + i, 11 + 2 * i);
		if (rc == 0)
			rc = wait_notify(&ca, 11 + 2 * i, &st_out) |
			    wait_notify(&cb, 10 + 2 * i, &st_in);
		if (st_out != CL_COMPLETE || st_in != CL_COMPLETE)
			rc = -1;
	}
	memset(&st, 0, sizeof st);
	if (!check("evict_placing_placed", rc == 0 && stats(&ca, &st) == 0 &&
	    st.peer_bytes_shared >= SIZE, "migrations: out %d, in %d, rc %d, "
	    "%llu bytes placed", st_out, st_in, rc,
	    (unsigned long long)st.peer_bytes_shared))
		goto out;
	/* Placed, behind two kernels of 0.1 to 1 s each. */
	rc = raw_spin_send(&ca, 2, 21, 22, 1u << 27);
	rc |= raw_spin_send_ev(&ca, 2, 21, 22, 1u << 27, 30);
	rc |= migrate_in(&cb, 14, 3, SIZE, 79, NULL);
	rc |= pl_migrate_out_after(&ca, to, sb, kb, SIZE, 79, 15, 30);
	/* Another link takes the bound meanwhile. */
	rc |= raw_forward_bogus(&ca, "127.0.0.1:1", 5);
	rc |= stats(&ca, &st);
	st_out = st_in = 1;
	if (rc == 0)
		rc = wait_notify(&ca, 15, &st_out) | wait_notify(&cb, 14,
		    &st_in);
	check("evict_placing_pushed", rc == 0 && st_out == CL_COMPLETE &&
	    st_in == CL_COMPLETE, "the placed migration whose link gave way "
	    "meanwhile: out %d, in %d, want both CL_COMPLETE (rc %d)", st_out,
	    st_in, rc);
	check("evict_placing_server_goes_on", srv_alive(&a) && stats(&ca,
	    &st) == 0, "no Stats from a");
out:
	conn_close(&ca);
	conn_close(&cb);
	if (a.pid > 0)
		srv_stop(&a, "evict_placing_server_a_exit");
	if (b.pid > 0)
		srv_stop(&b, "evict_placing_server_b_exit");
	free(data);
}

static const struct test tests[] = {
	{ "lands", test_lands, 90 },
	{ "sealed", test_sealed, 60 },
	{ "reused", test_reused, 60 },
	{ "bad_slot", test_bad_slot, 90 },
	{ "bad_xid", test_bad_xid, 90 },
	{ "unoffered", test_unoffered, 90 },
	{ "vanish", test_vanish, 90 },
	{ "silent_dest", test_silent_dest, 90 },
	{ "silent_src", test_silent_src, 90 },
	{ "kill_src", test_kill_src, 90 },
	{ "kill_src_mid", test_kill_src_mid, 90 },
	{ "link_closed", test_link_closed, 90 },
	{ "released_unsent", test_released_unsent, 90 },
	{ "kill_dst", test_kill_dst, 120 },
	{ "evict_placing", test_evict_placing, 120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
