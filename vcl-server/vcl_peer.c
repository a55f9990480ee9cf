/*
 * vcl_peer.c - links from this server to other vclservers, for pushing
 * migrated buffer bytes and forwarded event completions. A link is opened
 * on first use, authenticated like a client (Hello with peer set and the
 * token's proof), then carries asynchronous PeerPush/PeerEvent requests.
 * The transport is TCP, under TLS when the server has a certificate (the
 * other server's is verified); the link is what a shm or TCA backend
 * replaces.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "vcl_io.h"
#include "vcl_log.h"
#include "vcl_server.h"

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
	LIST_ENTRY(vcl_peer)	 entry;
};

static void	vcl_peer_read_cb(evutil_socket_t, short, void *);
static void	vcl_peer_write_cb(evutil_socket_t, short, void *);

/* Drop a link: fail what it still carried, free it. */
static void
vcl_peer_close(struct vcl_peer *p, const char *why)
{
	vcl_log_info("peer link to %s closed: %s", p->addr, why);
	LIST_REMOVE(p, entry);
	event_free(p->ev_read);
	event_free(p->ev_write);
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
	if ((n = vcl_outq_write(&p->outq, &p->link, &empty, NULL)) < 0) {
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

/* Send our Hello: peer, with the token's proof over the nonce. */
static int
vcl_peer_hello(struct vcl_peer *p, const Vcl__Greeting *g)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__Hello	 h = VCL__HELLO__INIT;
	struct vcl_buf	 b = { NULL, 0, 0 };
	uint8_t		 proof[VCL_AUTH_PROOF_LEN];
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
	req.seq = 1;
	req.call_case = VCL__REQUEST__CALL_HELLO;
	req.hello = &h;
	if (vcl_buf_pack(&b, &req.base, 0) != 0)
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
				vcl_peer_close(p, tc->reply->message ?
				    tc->reply->message : "refused");
				vcl__to_client__free_unpacked(tc, NULL);
				return;
			}
			p->state = VCL_PEER_READY;
			vcl_log_info("peer link to %s ready (tcp, %s)", p->addr,
			    vcl_link_version(&p->link));
			vcl__to_client__free_unpacked(tc, NULL);
			if (vcl_peer_flush(p) != 0)
				return;
			continue;
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

/* Open a link to addr ("host:port"), non-blocking. NULL on failure. */
static struct vcl_peer *
vcl_peer_open(struct vcl_server *srv, const char *addr)
{
	struct addrinfo	 hints, *res = NULL;
	struct vcl_peer	*p;
	char		 host[256], port[32];

	if ((p = calloc(1, sizeof *p)) == NULL)
		return (NULL);
	p->srv = srv;
	p->fd = -1;
	p->born = p->last_out = vcl_server_now();
	snprintf(p->addr, sizeof p->addr, "%s", addr);
	TAILQ_INIT(&p->outq);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if (vcl_io_split_hostport(addr, host, sizeof host, port,
	    sizeof port) != 0 || port[0] == '\0' ||
	    getaddrinfo(host, port, &hints, &res) != 0) {
		vcl_log_warn("peer address %s: want numeric host:port", addr);
		free(p);
		return (NULL);
	}
	p->fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, res->ai_protocol);
	if (p->fd == -1 || (connect(p->fd, res->ai_addr, res->ai_addrlen) != 0 &&
	    errno != EINPROGRESS)) {
		vcl_log_warn("peer %s: %s", addr, strerror(errno));
		if (p->fd != -1)
			close(p->fd);
		freeaddrinfo(res);
		free(p);
		return (NULL);
	}
	freeaddrinfo(res);
	vcl_io_tune(p->fd);
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

/*
 * Send a request to the server at addr over its peer link (opened on first
 * use). done(arg) runs once the bulk is written, fail(arg) if the link
 * drops it. Either always runs, exactly once.
 */
void
vcl_peer_send(struct vcl_server *srv, const char *addr, Vcl__Request *req,
    const uint8_t *bulk, uint64_t bulk_len, void (*done)(void *),
    void (*fail)(void *), void *arg)
{
	struct vcl_peer	*p;

	LIST_FOREACH(p, &srv->peers, entry)
		if (strcmp(p->addr, addr) == 0)
			break;
	if (p == NULL && (p = vcl_peer_open(srv, addr)) == NULL) {
		fail(arg);
		return;
	}
	req->seq = 0;
	if (vcl_outq_push(&p->outq, &req->base, bulk, bulk_len, done, fail,
	    arg) == 0)
		return;
	(void)vcl_peer_flush(p);
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
 * the frames it receives. A link that breaks either is closed, failing what
 * it carried (the migrations it pushed fail, so nothing waits on it).
 */
void
vcl_peer_check_all(struct vcl_server *srv, time_t now)
{
	const struct vcl_limits	*lim = &srv->limits;
	struct vcl_peer		*p, *next;
	struct vcl_out		*o;
	uint64_t		 allowed;

	for (p = LIST_FIRST(&srv->peers); p != NULL; p = next) {
		next = LIST_NEXT(p, entry);
		if (p->state != VCL_PEER_READY) {
			if ((uint64_t)(now - p->born) > lim->handshake_s)
				vcl_peer_close(p, "no handshake in time");
			continue;
		}
		if (lim->frame_s == 0 || (o = TAILQ_FIRST(&p->outq)) == NULL)
			continue;
		allowed = lim->frame_s + (o->head.len + o->bulk_len -
		    o->sent) / (lim->frame_rate ? lim->frame_rate : 1);
		if ((uint64_t)(now - p->last_out) > allowed)
			vcl_peer_close(p, "the peer does not take what is sent");
	}
}
