/*
 * vcl_peer.c - links from this server to other vclservers, for pushing
 * migrated buffer bytes and forwarded event completions. A link is opened
 * on first use, authenticated like a client (Hello with peer set and the
 * token's proof), then carries asynchronous PeerPush/PeerEvent requests.
 * The control stream is TCP, under TLS when the server has a certificate
 * (the other server's is verified). The bulk of a push goes on the
 * transport the two servers chose in the handshake (proto/transport/):
 * after the head on the stream for tcp, out of band for the others.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "vcl_io.h"
#include "vcl_log.h"
#include "vcl_outq.h"
#include "vcl_peer.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_transports.h"

/*
 * Links a session may have dialled and not yet ready at once (its share):
 * at most this many, and at most a quarter of --max-sessions (at least
 * one), so that one client naming addresses that never answer cannot
 * hold every link the bound allows through their handshakes.
 */
#define VCL_PEER_DIALS_MAX	4

enum vcl_peer_state {
	VCL_PEER_CONNECTING,
	VCL_PEER_TLS,		/* TLS handshake */
	VCL_PEER_GREETING,	/* waiting for the greeting */
	VCL_PEER_WELCOME,	/* Hello sent, waiting for the reply */
	VCL_PEER_READY,
};

struct vcl_peer {
	struct vcl_server	*srv;
	char			 addr[256];
	int			 fd;
	struct vcl_link		 link;		/* fd, maybe under TLS */
	enum vcl_peer_state	 state;
	struct event		*ev_read;
	struct event		*ev_write;
	struct vcl_outq		 outq;		/* requests, sent once READY */
	uint8_t			*in;		/* handshake frames */
	size_t			 in_len, in_cap;
	time_t			 born;		/* for the handshake deadline */
	time_t			 last_out;	/* output last moved, or idle */
	struct vcl_session	*asker;		/* dialled for it, charged to
						   its share; NULL once ready
						   (vcl_peer_session_gone) */
	struct vcl_tp_ep	*ep;		/* bulk transport; NULL: tcp */
	char			 why[96];	/* why that one (the other end) */
	uint64_t		 oob_pending;	/* sends not completed */
	uint64_t		 serial;	/* unique among links: a hold's */
	uint64_t		 held;		/* placed migrations that chose it,
						   not pushed yet */
	const char		*doomed;	/* to close, why (vcl_peer_sweep);
						   as good as closed meanwhile */
	TAILQ_HEAD(, vcl_peer_wait) waits;	/* sent before READY */
	TAILQ_HEAD(, vcl_peer_oob) placing;	/* placed pushes not ended */
	LIST_ENTRY(vcl_peer)	 entry;
};

/*
 * A request sent before the link is ready: its bulk's way (the stream or
 * the transport) is known only once the handshake chose the transport.
 */
struct vcl_peer_wait {
	uint8_t			*msg;		/* the packed Request */
	size_t			 len;
	const uint8_t		*bulk;
	uint64_t		 bulk_len;
	void			(*done)(void *);
	void			(*fail)(void *);
	void			*arg;
	struct vcl_session	*s;		/* whose; NULL once it closed */
	TAILQ_ENTRY(vcl_peer_wait) entry;
};

/* An out-of-band send's owner callbacks. */
struct vcl_peer_oob {
	struct vcl_peer		*p;
	void			(*done)(void *);
	void			(*fail)(void *);
	vcl_tp_done_fn		 placed;	/* a placed push's owner */
	vcl_tp_slot_fn		 slot;
	void			*arg;
	uint64_t		 len;
	time_t			 last;		/* placed: the peer last moved */
	TAILQ_ENTRY(vcl_peer_oob) entry;	/* placed: on p->placing */
};

static uint64_t	vcl_peer_next_xid;	/* out-of-band transfer ids */
static uint64_t	vcl_peer_next_serial;	/* links opened, in all */

static void	vcl_peer_read_cb(evutil_socket_t, short, void *);
static void	vcl_peer_go(struct vcl_peer *, Vcl__Request *, const uint8_t *,
		    uint64_t, void (*)(void *), void (*)(void *), void *);
static int	vcl_peer_release_waits(struct vcl_peer *);
static void	vcl_peer_close(struct vcl_peer *, const char *);
static void	vcl_peer_write_cb(evutil_socket_t, short, void *);

/* The link to addr that is not being closed, or NULL. */
static struct vcl_peer *
vcl_peer_find(struct vcl_server *srv, const char *addr)
{
	struct vcl_peer	*p;

	LIST_FOREACH(p, &srv->peers, entry)
		if (p->doomed == NULL && strcmp(p->addr, addr) == 0)
			return (p);
	return (NULL);
}

/*
 * Close the links marked doomed, each found again from the list's head:
 * a close fails what its link carried, and the owners of those requests
 * may close other links meanwhile (a session whose client went closes the
 * links it dialled, vcl_peer_session_gone; a forward at --max-sessions
 * closes an idle one, vcl_peer_room) or open new ones, so a link saved
 * before a close may be gone after it.
 */
static void
vcl_peer_sweep(struct vcl_server *srv)
{
	struct vcl_peer	*p;

	for (;;) {
		LIST_FOREACH(p, &srv->peers, entry)
			if (p->doomed != NULL)
				break;
		if (p == NULL)
			return;
		vcl_peer_close(p, p->doomed);
	}
}

/* Drop a link: fail what it still carried, free it. */
static void
vcl_peer_close(struct vcl_peer *p, const char *why)
{
	struct vcl_peer_wait	*w;
	struct timespec		 t0;
	double			 ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	vcl_log_info("peer link to %s closed: %s", p->addr, why);
	LIST_REMOVE(p, entry);
	event_free(p->ev_read);
	event_free(p->ev_write);
	while ((w = TAILQ_FIRST(&p->waits)) != NULL) {
		TAILQ_REMOVE(&p->waits, w, entry);
		w->fail(w->arg);
		free(w->msg);
		free(w);
	}
	vcl_tp_close(p->ep);	/* its sends fail */
	p->ep = NULL;
	/* The loop serves every session: say when a close held it up. */
	if ((ms = vcl_since_ms(&t0)) >= VCL_SLOW_MS) {
		p->srv->metrics.slow_events++;
		vcl_log_info("peer link to %s: its close took %.1f ms",
		    p->addr, ms);
	}
	vcl_link_close(&p->link);
	vcl_outq_clear(&p->outq);
	free(p->in);
	free(p);
}

/* Write queued requests once the handshake is done. -1: link closed. */
static int
vcl_peer_flush(struct vcl_peer *p)
{
	ssize_t	n;
	int	empty;

	if (p->state != VCL_PEER_READY)
		return (0);
	if ((n = vcl_outq_write(&p->outq, &p->link, VCL_OUTQ_WRITE_MAX,
	    &empty, NULL)) < 0) {
		vcl_peer_close(p, strerror(errno));
		return (-1);
	}
	p->srv->peer_bytes_out += (uint64_t)n;
	if (n > 0 || empty)
		p->last_out = vcl_server_now();
	if (empty)
		event_del(p->ev_write);
	else
		event_add(p->ev_write, NULL);
	return (0);
}

/* A backend's own message to the other server's end of the link. */
static int
vcl_peer_ctl_out(struct vcl_tp_ep *ep, const uint8_t *data, size_t len)
{
	struct vcl_peer		*p = ep->host;
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__TransportCtl	 c = VCL__TRANSPORT_CTL__INIT;

	c.transport = (char *)vcl_tp_name(ep);
	c.data.data = (uint8_t *)data;
	c.data.len = len;
	req.call_case = VCL__REQUEST__CALL_TRANSPORT_CTL;
	req.transport_ctl = &c;
	if (vcl_outq_push(&p->outq, &req.base, NULL, 0, NULL, NULL, NULL) ==
	    0)
		return (VCL_TP_ENOMEM);
	event_add(p->ev_write, NULL);	/* flushed from the loop */
	return (VCL_TP_OK);
}

/* The other end's words, for the log and Stats: printable only. */
static void
vcl_peer_printable(char *s)
{
	for (; *s != '\0'; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '"' || *s == '\\')
			*s = '?';
}

/*
 * The Welcome names the transport the other server chose for the link
 * (none: tcp): connect our end to its address. One that fails leaves the
 * link on tcp, which the other end takes as well: it posts a receive only
 * for a push that names an out-of-band transfer.
 */
static void
vcl_peer_transport(struct vcl_peer *p, const Vcl__Welcome *w)
{
	const Vcl__TransportOffer	*o;
	char				 why[300];

	snprintf(p->why, sizeof p->why, "%s", w != NULL &&
	    w->transport_why != NULL ? w->transport_why : "not said");
	vcl_peer_printable(p->why);
	if (w == NULL || (o = w->transport) == NULL || o->name == NULL ||
	    strcmp(o->name, vcl_transport_tcp.name) == 0)
		return;
	p->ep = vcl_transports_connect(p->srv, o->name, &p->link,
	    o->has_address ? o->address.data : NULL,
	    o->has_address ? o->address.len : 0, why, sizeof why);
	if (p->ep == NULL) {
		/* why may name the transport: the other end's words too. */
		vcl_peer_printable(why);
		snprintf(p->why, sizeof p->why, "%s failed here", o->name);
		vcl_peer_printable(p->why);
		vcl_log_warn("peer link to %s: %s, tcp instead: %s", p->addr,
		    p->why, why);
		return;
	}
	if (vcl_tp_inband(p->ep)) {
		vcl_tp_close(p->ep);
		p->ep = NULL;
		return;
	}
	p->ep->ctl_out = vcl_peer_ctl_out;
	p->ep->host = p;
}

/* Send our Hello: peer, with the token's proof over the nonce. */
static int
vcl_peer_hello(struct vcl_peer *p, const Vcl__Greeting *g)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__Hello	 h = VCL__HELLO__INIT;
	struct vcl_buf	 b = { NULL, 0, 0 };
	uint8_t		 proof[VCL_AUTH_PROOF_LEN];
	struct vcl_tp_offers *offers;
	struct iovec	 iov;
	int		 rc;

	if (g->version != VCL_PROTOCOL_VERSION)
		return (-1);
	h.version = VCL_PROTOCOL_VERSION;
	h.has_peer = 1;
	h.peer = 1;
	h.client_name = (char *)p->srv->node_name;
	if (g->auth_required) {
		if (!p->srv->have_token)
			return (-1);
		vcl_auth_prove(&p->srv->token, g->nonce.data, g->nonce.len,
		    proof);
		h.has_proof = 1;
		h.proof.data = proof;
		h.proof.len = sizeof proof;
	}
	/* The transports we could use for this link, with addresses. */
	if ((offers = malloc(sizeof *offers)) == NULL)
		return (-1);
	h.n_transports = vcl_transports_offer(p->srv, VCL_TP_PEER, offers);
	h.transports = offers->p;
	vcl_transports_hello_host(p->srv, &h);
	req.seq = 1;
	req.call_case = VCL__REQUEST__CALL_HELLO;
	req.hello = &h;
	rc = vcl_buf_pack(&b, &req.base, 0);
	free(offers);
	if (rc != 0)
		return (-1);
	/* Small and first on a fresh socket: it fits the send buffer. */
	iov.iov_base = b.data;
	iov.iov_len = b.len;
	rc = vcl_link_writev_full(&p->link, &iov, 1);
	vcl_buf_free(&b);
	return (rc);
}

/* One step of the TLS handshake with the other server. -1: link closed. */
static int
vcl_peer_handshake(struct vcl_peer *p)
{
	int	rc;

	p->state = VCL_PEER_TLS;
	if ((rc = vcl_link_handshake(&p->link)) < 0) {
		vcl_log_warn("peer link to %s: TLS handshake failed: %s",
		    p->addr, p->link.err);
		vcl_peer_close(p, "TLS handshake failed");
		return (-1);
	}
	if (rc == 1) {
		if (p->link.want == VCL_LINK_WANT_WRITE)
			event_add(p->ev_write, NULL);
		else
			event_del(p->ev_write);
		return (0);
	}
	event_del(p->ev_write);
	p->state = VCL_PEER_GREETING;
	if (vcl_link_pending(&p->link) > 0)
		event_active(p->ev_read, EV_READ, 0);
	return (0);
}

/*
 * Handshake frames: the greeting, then the reply to our Hello. After that
 * a server sends nothing on a peer link; anything is read and dropped.
 */
static void
vcl_peer_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_peer		*p = arg;
	struct vcl_frame_hdr	 hdr;
	struct vcl_frame_limits	 lim = { 1u << 20, 0 };
	Vcl__ToClient		*tc;
	const char		*why;
	ssize_t			 r;
	size_t			 need;
	uint8_t			*np;

	if (p->link.handshaking) {
		(void)vcl_peer_handshake(p);
		return;
	}
	if (p->in_cap - p->in_len < 4096) {
		if ((np = realloc(p->in, p->in_cap + 65536)) == NULL) {
			vcl_peer_close(p, "out of memory");
			return;
		}
		p->in = np;
		p->in_cap += 65536;
	}
	r = vcl_link_read(&p->link, p->in + p->in_len, p->in_cap - p->in_len);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
		vcl_peer_close(p, r == 0 ? "closed by the peer" :
		    strerror(errno));
		return;
	}
	if (r < 0)
		return;
	p->in_len += (size_t)r;
	if (p->state == VCL_PEER_CONNECTING) {
		/* Bytes came: the connect succeeded before its write event. */
		event_del(p->ev_write);
		p->state = VCL_PEER_GREETING;
	}
	while (p->in_len >= VCL_FRAME_HDR_LEN) {
		if (vcl_frame_decode(p->in, &lim, &hdr, &why) != 0) {
			vcl_peer_close(p, why);
			return;
		}
		need = VCL_FRAME_HDR_LEN + hdr.msg_len;
		if (p->in_len < need)
			break;
		tc = vcl__to_client__unpack(NULL, hdr.msg_len,
		    p->in + VCL_FRAME_HDR_LEN);
		memmove(p->in, p->in + need, p->in_len - need);
		p->in_len -= need;
		if (tc == NULL) {
			vcl_peer_close(p, "malformed message");
			return;
		}
		if (p->state == VCL_PEER_GREETING && tc->greeting != NULL) {
			if (vcl_peer_hello(p, tc->greeting) != 0) {
				vcl__to_client__free_unpacked(tc, NULL);
				vcl_peer_close(p, "handshake refused (version "
				    "or token)");
				return;
			}
			p->state = VCL_PEER_WELCOME;
		} else if (p->state == VCL_PEER_WELCOME && tc->reply != NULL) {
			if (tc->reply->status != CL_SUCCESS) {
				snprintf(p->why, sizeof p->why, "%s",
				    tc->reply->message != NULL ?
				    tc->reply->message : "refused");
				vcl_peer_printable(p->why);
				vcl_peer_close(p, p->why);
				vcl__to_client__free_unpacked(tc, NULL);
				return;
			}
			p->state = VCL_PEER_READY;
			p->asker = NULL;	/* out of its share */
			vcl_peer_transport(p, tc->reply->welcome);
			vcl_log_info("peer link to %s ready (%s, %s): %s",
			    p->addr, vcl_tp_name(p->ep),
			    vcl_link_version(&p->link), p->why);
			vcl__to_client__free_unpacked(tc, NULL);
			if (vcl_peer_release_waits(p) != 0 ||
			    vcl_peer_flush(p) != 0)
				return;
			continue;
		}
		/* The other end's transport speaking to ours. */
		if (p->state == VCL_PEER_READY && tc->transport_ctl != NULL &&
		    (p->ep == NULL || p->ep->tp->ops->ctl_in == NULL ||
		    strcmp(tc->transport_ctl->transport, vcl_tp_name(p->ep)) !=
		    0 || p->ep->tp->ops->ctl_in(p->ep,
		    tc->transport_ctl->data.data,
		    tc->transport_ctl->data.len) != VCL_TP_OK)) {
			vcl__to_client__free_unpacked(tc, NULL);
			vcl_peer_close(p, "transport message refused");
			return;
		}
		vcl__to_client__free_unpacked(tc, NULL);
	}
	/* Bytes TLS already decrypted fire no socket event. */
	if (vcl_link_pending(&p->link) > 0)
		event_active(p->ev_read, EV_READ, 0);
}

/* The connect finished, or the socket can take more. */
static void
vcl_peer_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_peer	*p = arg;
	socklen_t	 len = sizeof(int);
	int		 e = 0;

	if (p->state == VCL_PEER_CONNECTING) {
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0 ||
		    e != 0) {
			vcl_peer_close(p, strerror(e ? e : errno));
			return;
		}
		event_del(p->ev_write);
		p->state = VCL_PEER_GREETING;
		if (p->link.ssl != NULL)
			(void)vcl_peer_handshake(p);
		return;
	}
	if (p->link.handshaking) {
		(void)vcl_peer_handshake(p);
		return;
	}
	(void)vcl_peer_flush(p);
}

/*
 * Room for a link to addr, asked for by session s. Clients name the
 * addresses their server dials (MigrateOut, ForwardEvent), so a client
 * naming many that accept and never speak held a socket each until the
 * handshake deadline, without bound: every descriptor of the server.
 * Links are bounded by --max-sessions (what a server accepts, links
 * included); at the bound the least recently used idle ready link closes
 * (a later use reopens it). A link a placed migration chose is not idle
 * while it waits for its wait list: it pushes on that link or fails.
 * Links being dialled are also charged to the session that asked for
 * them, up to its share (VCL_PEER_DIALS_MAX), so that one session's
 * silent addresses cannot hold every place while others' migrations
 * wait; a session's links never push out another's that are being
 * dialled. Sessions at their share, enough of them, still held every
 * place (pushing out the ready links others used): links being dialled,
 * all sessions' together, take half of the places at most, so the other
 * half stays for ready links. Returns 0, or -1 when the session is at
 * its share, half the places are being dialled or every link is busy:
 * the new one is refused.
 */
static int
vcl_peer_room(struct vcl_server *srv, struct vcl_session *s,
    const char *addr)
{
	struct vcl_peer	*p, *idle = NULL;
	uint64_t	 n = 0, mine = 0, dialled = 0, share, half;

	half = srv->limits.sessions / 2;
	if (half == 0)
		half = 1;
	share = srv->limits.sessions / 4;
	if (share > VCL_PEER_DIALS_MAX)
		share = VCL_PEER_DIALS_MAX;
	if (share == 0)
		share = 1;
	LIST_FOREACH(p, &srv->peers, entry) {
		n++;
		if (p->asker == s)
			mine++;
		if (p->state != VCL_PEER_READY)
			dialled++;
		if (p->state == VCL_PEER_READY && TAILQ_EMPTY(&p->outq) &&
		    TAILQ_EMPTY(&p->waits) && TAILQ_EMPTY(&p->placing) &&
		    p->oob_pending == 0 && p->held == 0 && (idle == NULL ||
		    p->last_out <= idle->last_out))
			idle = p;
	}
	if (mine >= share) {
		vcl_session_warn(s, "peer %s: refused: the session dials %llu "
		    "links already, its share of --max-sessions", addr,
		    (unsigned long long)mine);
		return (-1);
	}
	if (dialled >= half) {
		vcl_session_warn(s, "peer %s: refused: %llu links being "
		    "dialled, half of --max-sessions", addr,
		    (unsigned long long)dialled);
		return (-1);
	}
	if (n < srv->limits.sessions)
		return (0);
	if (idle != NULL) {
		vcl_peer_close(idle, "idle, its place taken by a new link");
		if (--n < srv->limits.sessions)	/* lowered by a reload? */
			return (0);
	}
	vcl_log_warn("peer %s: refused: %llu links open, all busy "
	    "(--max-sessions)", addr, (unsigned long long)n);
	return (-1);
}

/*
 * Open a link to addr ("host:port") for session s, non-blocking. NULL on
 * failure.
 */
static struct vcl_peer *
vcl_peer_open(struct vcl_server *srv, struct vcl_session *s,
    const char *addr)
{
	struct vcl_peer	*p;
	char		 host[256], err[300];

	if ((p = calloc(1, sizeof *p)) == NULL)
		return (NULL);
	p->srv = srv;
	p->asker = s;
	p->fd = -1;
	p->born = p->last_out = vcl_server_now();
	p->serial = ++vcl_peer_next_serial;
	snprintf(p->addr, sizeof p->addr, "%s", addr);
	TAILQ_INIT(&p->outq);
	TAILQ_INIT(&p->waits);
	TAILQ_INIT(&p->placing);
	/* The control stream: tcp's, as for every transport. */
	if ((p->fd = vcl_tcp_dial(addr, host, sizeof host, err,
	    sizeof err)) == -1) {
		vcl_log_warn("peer %s: %s", addr, err);
		free(p);
		return (NULL);
	}
	vcl_link_init(&p->link, p->fd);
	vcl_link_timeout(&p->link, 5000);	/* our Hello's write */
	if (srv->tls_peer != NULL && vcl_link_tls(&p->link, srv->tls_peer, 0,
	    host, p->link.err, sizeof p->link.err) != 0) {
		vcl_log_warn("peer %s: %s", addr, p->link.err);
		close(p->fd);
		free(p);
		return (NULL);
	}
	p->ev_read = event_new(srv->base, p->fd, EV_READ | EV_PERSIST,
	    vcl_peer_read_cb, p);
	p->ev_write = event_new(srv->base, p->fd, EV_WRITE | EV_PERSIST,
	    vcl_peer_write_cb, p);
	if (p->ev_read == NULL || p->ev_write == NULL) {
		if (p->ev_read != NULL)
			event_free(p->ev_read);
		vcl_link_close(&p->link);
		free(p);
		return (NULL);
	}
	event_add(p->ev_read, NULL);
	event_add(p->ev_write, NULL);
	LIST_INSERT_HEAD(&srv->peers, p, entry);
	return (p);
}

/* An out-of-band send completed: tell its owner, once. */
static void
vcl_peer_oob_done(void *arg, int err)
{
	struct vcl_peer_oob	*o = arg;

	o->p->oob_pending--;
	if (err == VCL_TP_OK) {
		o->p->srv->peer_bytes_oob += o->len;
		o->p->last_out = vcl_server_now();
		if (o->done != NULL)
			o->done(o->arg);
	} else {
		vcl_log_warn("peer link to %s: out-of-band bulk: %s",
		    o->p->addr, vcl_tp_strerror(err));
		if (o->fail != NULL)
			o->fail(o->arg);
		else if (o->done != NULL)
			o->done(o->arg);
	}
	free(o);
}

/*
 * A request whose bulk goes on the link's transport: the head names the
 * transfer and its size and goes on the stream, the bytes go from their
 * memory as that transfer. The owner hears once, from the bulk's send.
 */
static void
vcl_peer_send_oob(struct vcl_peer *p, Vcl__Request *req, const uint8_t *bulk,
    uint64_t bulk_len, void (*done)(void *), void (*fail)(void *), void *arg)
{
	struct vcl_peer_oob	*o;
	struct iovec		 iov;
	int			 rc;

	if ((o = calloc(1, sizeof *o)) == NULL) {
		fail(arg);
		return;
	}
	o->p = p;
	o->done = done;
	o->fail = fail;
	o->arg = arg;
	o->len = bulk_len;
	req->has_bulk_xfer = req->has_bulk_size = 1;
	req->bulk_xfer = ++vcl_peer_next_xid;	/* unique in this process */
	req->bulk_size = bulk_len;
	if (vcl_outq_push(&p->outq, &req->base, NULL, 0, NULL, NULL, NULL) ==
	    0) {
		free(o);
		fail(arg);
		return;
	}
	iov.iov_base = (void *)bulk;
	iov.iov_len = bulk_len;
	if ((rc = vcl_tp_send(p->ep, req->bulk_xfer, &iov, 1,
	    vcl_peer_oob_done, o)) != VCL_TP_OK) {
		/* The head went: the other end waits for bytes; end it. */
		vcl_log_warn("peer link to %s: %s", p->addr, p->ep->err);
		free(o);
		fail(arg);
		vcl_peer_close(p, vcl_tp_strerror(rc));
		return;
	}
	p->oob_pending++;
	p->srv->peer_bytes_out += bulk_len;
	vcl_transports_kick(p->srv, p->ep->tp);
	(void)vcl_peer_flush(p);
}

/* A placed push ended: count it, tell its owner, once. */
static void
vcl_peer_placed_done(void *arg, int err)
{
	struct vcl_peer_oob	*o = arg;

	o->p->oob_pending--;
	TAILQ_REMOVE(&o->p->placing, o, entry);
	if (err == VCL_TP_OK) {
		o->p->srv->peer_bytes_oob += o->len;
		o->p->srv->peer_bytes_shared += o->len;
		o->p->last_out = vcl_server_now();
	} else
		vcl_log_warn("peer link to %s: placed bulk: %s", o->p->addr,
		    vcl_tp_strerror(err));
	o->placed(o->arg, err);
	free(o);
}

/* A slot for a placed push: to its owner. */
static void
vcl_peer_placed_slot(void *arg, const struct vcl_tp_slot *slot)
{
	struct vcl_peer_oob	*o = arg;

	o->last = vcl_server_now();
	o->slot(o->arg, slot);
}

/*
 * The ready link to addr when it can place a bulk of len bytes in the
 * other server's shared staging (vcl_tp_can_place); NULL: push as usual.
 * The link is held (*hold names it) until vcl_peer_unhold: the migration
 * that chose it pushes only once its wait list is done, and meanwhile the
 * link is not idle (vcl_peer_room), though it carries nothing yet.
 */
struct vcl_tp_ep *
vcl_peer_placeable(struct vcl_server *srv, const char *addr, uint64_t len,
    uint64_t *hold)
{
	struct vcl_peer	*p;

	p = vcl_peer_find(srv, addr);
	if (p == NULL || p->state != VCL_PEER_READY || p->ep == NULL ||
	    !vcl_tp_can_place(p->ep, len))
		return (NULL);
	p->held++;
	*hold = p->serial;
	return (p->ep);
}

/* Let go of a link vcl_peer_placeable held (hold), if it is still open. */
void
vcl_peer_unhold(struct vcl_server *srv, uint64_t hold)
{
	struct vcl_peer	*p;

	LIST_FOREACH(p, &srv->peers, entry)
		if (p->serial == hold) {
			if (p->held > 0)
				p->held--;
			return;
		}
}

/*
 * A push whose len bytes the owner writes chunk by chunk into the other
 * server's shared staging: slot(arg, ...) for each slot it offers, then
 * done(arg, err) once. The head names the transfer (flagged placed) and
 * goes on the stream. Returns -1 when the link cannot (nothing started,
 * nothing will run), else 0.
 */
int
vcl_peer_send_placed(struct vcl_server *srv, const char *addr,
    Vcl__Request *req, uint64_t len, const void *src, vcl_tp_slot_fn slot,
    vcl_tp_done_fn done, void *arg)
{
	struct vcl_peer_oob	*o;
	struct vcl_peer		*p;
	uint64_t		 xid;

	p = vcl_peer_find(srv, addr);
	if (p == NULL || p->state != VCL_PEER_READY || p->ep == NULL ||
	    (o = calloc(1, sizeof *o)) == NULL)
		return (-1);
	o->p = p;
	o->placed = done;
	o->slot = slot;
	o->arg = arg;
	o->len = len;
	xid = ++vcl_peer_next_xid;
	if (vcl_tp_place(p->ep, xid, len, vcl_peer_placed_slot,
	    vcl_peer_placed_done, o) !=
	    VCL_TP_OK) {
		vcl_log_warn("peer link to %s: %s", p->addr, p->ep->err);
		free(o);
		return (-1);
	}
	/* The bytes are mapped in us too: the destination may read them. */
	if (src != NULL)
		vcl_tp_source(p->ep, xid, src);
	p->oob_pending++;
	o->last = vcl_server_now();
	TAILQ_INSERT_TAIL(&p->placing, o, entry);
	p->srv->peer_bytes_out += len;
	req->seq = 0;
	req->has_bulk_xfer = req->has_bulk_size = 1;
	req->bulk_xfer = xid | VCL_TP_XID_PLACE;
	req->bulk_size = len;
	if (vcl_outq_push(&p->outq, &req->base, NULL, 0, NULL, NULL, NULL) ==
	    0) {
		/* The other end will not offer: the close fails it. */
		vcl_peer_close(p, "out of memory");
		return (0);
	}
	vcl_transports_kick(srv, p->ep->tp);
	(void)vcl_peer_flush(p);
	return (0);
}

/*
 * Send a request of session s to the server at addr over its peer link
 * (opened on first use, charged to s while it is dialled). done(arg) runs
 * once the bulk is written, fail(arg) if the link drops it. Either always
 * runs, exactly once.
 */
void
vcl_peer_send(struct vcl_session *s, const char *addr, Vcl__Request *req,
    const uint8_t *bulk, uint64_t bulk_len, void (*done)(void *),
    void (*fail)(void *), void *arg)
{
	struct vcl_server	*srv = s->srv;
	struct vcl_peer		*p;
	struct vcl_peer_wait	*w;

	p = vcl_peer_find(srv, addr);
	if (p == NULL && (vcl_peer_room(srv, s, addr) != 0 ||
	    (p = vcl_peer_open(srv, s, addr)) == NULL)) {
		fail(arg);
		return;
	}
	req->seq = 0;
	if (p->state == VCL_PEER_READY) {
		vcl_peer_go(p, req, bulk, bulk_len, done, fail, arg);
		return;
	}
	/* Kept until the handshake says which way its bulk goes. */
	if ((w = calloc(1, sizeof *w)) == NULL ||
	    (w->len = protobuf_c_message_get_packed_size(&req->base)) == 0 ||
	    (w->msg = malloc(w->len)) == NULL) {
		free(w);
		fail(arg);
		return;
	}
	protobuf_c_message_pack(&req->base, w->msg);
	w->bulk = bulk;
	w->bulk_len = bulk_len;
	w->done = done;
	w->fail = fail;
	w->arg = arg;
	w->s = s;
	TAILQ_INSERT_TAIL(&p->waits, w, entry);
}

/* Queue a request on a ready link: its bulk on the stream or out of band. */
static void
vcl_peer_go(struct vcl_peer *p, Vcl__Request *req, const uint8_t *bulk,
    uint64_t bulk_len, void (*done)(void *), void (*fail)(void *), void *arg)
{
	if (p->ep != NULL && vcl_tp_oob_size(p->ep, bulk_len)) {
		vcl_peer_send_oob(p, req, bulk, bulk_len, done, fail, arg);
		return;
	}
	if (vcl_outq_push(&p->outq, &req->base, bulk, bulk_len, done, fail,
	    arg) == 0)
		return;
	(void)vcl_peer_flush(p);
}

/*
 * The link is ready: send what waited for it, in order. Returns -1 when
 * the link closed meanwhile (p is gone).
 */
static int
vcl_peer_release_waits(struct vcl_peer *p)
{
	struct vcl_server	*srv = p->srv;
	struct vcl_peer_wait	*w;
	struct vcl_peer		*q;
	Vcl__Request		*req;

	while ((w = TAILQ_FIRST(&p->waits)) != NULL) {
		TAILQ_REMOVE(&p->waits, w, entry);
		if ((req = vcl__request__unpack(NULL, w->len, w->msg)) ==
		    NULL)
			w->fail(w->arg);
		else {
			vcl_peer_go(p, req, w->bulk, w->bulk_len, w->done,
			    w->fail, w->arg);
			vcl__request__free_unpacked(req, NULL);
		}
		free(w->msg);
		free(w);
		/* A failed send may have closed the link. */
		LIST_FOREACH(q, &srv->peers, entry)
			if (q == p)
				break;
		if (q == NULL)
			return (-1);
	}
	return (0);
}

/*
 * Session s closes: no link may still name it. A link being dialled for
 * it passes to another session whose request waits on it (charged to that
 * one's share now), or, with none, closes: only s wanted it, and an
 * orphan would hold its place, outside any share, until the handshake
 * deadline (a client closing and reconnecting would then fill the bound).
 * The requests of s it carried fail; s is dead, they tell nobody.
 */
void
vcl_peer_session_gone(struct vcl_session *s)
{
	struct vcl_peer		*p;
	struct vcl_peer_wait	*w;

	LIST_FOREACH(p, &s->srv->peers, entry) {
		TAILQ_FOREACH(w, &p->waits, entry)
			if (w->s == s)
				w->s = NULL;
		if (p->asker != s)
			continue;
		p->asker = NULL;
		TAILQ_FOREACH(w, &p->waits, entry)
			if (w->s != NULL) {
				p->asker = w->s;
				break;
			}
		if (p->asker == NULL && p->doomed == NULL)
			p->doomed = "the session that asked for it closed";
	}
	vcl_peer_sweep(s->srv);
}

/* Close every link (at exit). */
void
vcl_peer_close_all(struct vcl_server *srv)
{
	struct vcl_peer	*p;

	while ((p = LIST_FIRST(&srv->peers)) != NULL)
		vcl_peer_close(p, "server exiting");
}

/*
 * Every tick: a link must be authenticated within the handshake deadline,
 * and once ready its queued requests must move: the first one within the
 * frame deadline plus its size at the minimum rate, as the server asks of
 * the frames it receives. A placed push must move as well: the other end
 * offers its next slot (or ends the push) within the same deadline, its
 * size counted at the minimum rate, else the link can no longer be trusted
 * with the transfer's state. A link that breaks any is closed, failing
 * what it carried (the migrations it pushed fail, so nothing waits on it).
 */
void
vcl_peer_check_all(struct vcl_server *srv, time_t now)
{
	const struct vcl_limits	*lim = &srv->limits;
	struct vcl_peer		*p;
	struct vcl_peer_oob	*po;
	struct vcl_out		*o;
	uint64_t		 allowed, rate;

	/* Marked first, closed after: see vcl_peer_sweep. */
	rate = lim->frame_rate ? lim->frame_rate : 1;
	LIST_FOREACH(p, &srv->peers, entry) {
		if (p->doomed != NULL)
			continue;
		if (p->state != VCL_PEER_READY) {
			if ((uint64_t)(now - p->born) > lim->handshake_s)
				p->doomed = "no handshake in time";
			continue;
		}
		if (lim->frame_s == 0)
			continue;
		TAILQ_FOREACH(po, &p->placing, entry)
			if ((uint64_t)(now - po->last) > lim->frame_s +
			    po->len / rate)
				break;
		if (po != NULL) {
			vcl_log_warn("peer link to %s: placed push of %llu "
			    "bytes: no slot or end from the peer in %llu s",
			    p->addr, (unsigned long long)po->len,
			    (unsigned long long)(now - po->last));
			p->doomed = "the peer does not take a placed push";
			continue;
		}
		if ((o = TAILQ_FIRST(&p->outq)) == NULL)
			continue;
		allowed = lim->frame_s + (o->head.len + o->bulk_len -
		    o->sent) / rate;
		if ((uint64_t)(now - p->last_out) > allowed)
			p->doomed = "the peer does not take what is sent";
	}
	vcl_peer_sweep(srv);
}

/* The links, for Stats: address, transport, state. Free with _free. */
size_t
vcl_peer_stats(struct vcl_server *srv, Vcl__PeerLinkStat ***out)
{
	Vcl__PeerLinkStat	**v;
	struct vcl_peer		 *p;
	size_t			  n = 0, i = 0;

	*out = NULL;
	LIST_FOREACH(p, &srv->peers, entry)
		n++;
	if (n == 0 || (v = calloc(n, sizeof *v)) == NULL)
		return (0);
	LIST_FOREACH(p, &srv->peers, entry) {
		if ((v[i] = malloc(sizeof **v)) == NULL)
			break;
		vcl__peer_link_stat__init(v[i]);
		v[i]->address = p->addr;
		v[i]->transport = (char *)vcl_tp_name(p->ep);
		v[i]->has_ready = 1;
		v[i]->ready = p->state == VCL_PEER_READY;
		v[i]->why = p->state == VCL_PEER_READY ? p->why : NULL;
		i++;
	}
	*out = v;
	return (i);
}

/* Free what vcl_peer_stats made. */
void
vcl_peer_stats_free(Vcl__PeerLinkStat **v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
