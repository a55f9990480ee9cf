/*
 * vcl_tls.c - a link: a socket, plain or under TLS (OpenSSL), with the reads
 * and writes both ends use. Plain links are the syscalls they always were;
 * TLS links go through SSL_read/SSL_write, reporting EAGAIN with what the
 * TLS engine waits for (a read may need the socket writable and the other
 * way round), so the non-blocking server can arm the right event.
 */
#include <sys/socket.h>

#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "vcl_io.h"
#include "vcl_tls.h"

#define VCL_TLS_COALESCE	16384		/* one TLS record */
#define VCL_TLS_MAX_WRITE	(1 << 30)	/* per SSL_write */
/* TLS 1.2 only with forward secrecy and AEAD; 1.3 keeps OpenSSL's suites. */
#define VCL_TLS12_CIPHERS	"ECDHE+AESGCM:ECDHE+CHACHA20"

/* what, and the reason of the first OpenSSL error queued, if any. */
static void
vcl_tls_reason(char *err, size_t errlen, const char *what)
{
	unsigned long	 code = ERR_peek_error();	/* the first: the cause */
	const char	*r = code != 0 ? ERR_reason_error_string(code) : NULL;

	/* "system lib" says little: a file that cannot be read says why. */
	if (code != 0 && ERR_SYSTEM_ERROR(code))
		r = strerror(ERR_GET_REASON(code));
	if (r != NULL)
		snprintf(err, errlen, "%s: %s", what, r);
	else
		snprintf(err, errlen, "%s", what);
	ERR_clear_error();
}

/*
 * A TLS context for servers (server set) or for connecting ends. TLS 1.2 at
 * least, no renegotiation, no session tickets (nobody resumes). Returns the
 * context, or NULL with err set.
 */
SSL_CTX *
vcl_tls_ctx_new(int server, const struct vcl_tls_conf *c, char *err,
    size_t errlen)
{
	SSL_CTX			*ctx;
	STACK_OF(X509_NAME)	*names;
	char			 what[600];

	ERR_clear_error();
	if ((ctx = SSL_CTX_new(server ? TLS_server_method() :
	    TLS_client_method())) == NULL) {
		vcl_tls_reason(err, errlen, "cannot create a TLS context");
		return (NULL);
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF |
	    (server ? SSL_OP_CIPHER_SERVER_PREFERENCE : 0));
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (SSL_CTX_set_cipher_list(ctx, VCL_TLS12_CIPHERS) != 1) {
		vcl_tls_reason(err, errlen, "TLS 1.2 cipher list");
		goto fail;
	}
	if (server) {
		SSL_CTX_set_num_tickets(ctx, 0);
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	}
	if (c->cert != NULL && SSL_CTX_use_certificate_chain_file(ctx,
	    c->cert) != 1) {
		snprintf(what, sizeof what, "%s: cannot load the certificate",
		    c->cert);
		vcl_tls_reason(err, errlen, what);
		goto fail;
	}
	if (c->key != NULL && (SSL_CTX_use_PrivateKey_file(ctx, c->key,
	    SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1)) {
		snprintf(what, sizeof what, "%s: cannot load the key, or it "
		    "does not match the certificate", c->key);
		vcl_tls_reason(err, errlen, what);
		goto fail;
	}
	if (c->ca != NULL && SSL_CTX_load_verify_locations(ctx, c->ca,
	    NULL) != 1) {
		snprintf(what, sizeof what, "%s: cannot load the CA "
		    "certificates", c->ca);
		vcl_tls_reason(err, errlen, what);
		goto fail;
	}
	if (c->ca == NULL && c->verify && SSL_CTX_set_default_verify_paths(
	    ctx) != 1) {
		vcl_tls_reason(err, errlen, "cannot load the system CAs");
		goto fail;
	}
	if (c->verify) {
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (server ?
		    SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), NULL);
		if (server && c->ca != NULL &&
		    (names = SSL_load_client_CA_file(c->ca)) != NULL)
			SSL_CTX_set_client_CA_list(ctx, names);
	} else
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	return (ctx);
fail:
	SSL_CTX_free(ctx);
	return (NULL);
}

/* Free a context (links hold their own reference). */
void
vcl_tls_ctx_free(SSL_CTX *ctx)
{
	SSL_CTX_free(ctx);
}

/* A plain link over fd. */
void
vcl_link_init(struct vcl_link *l, int fd)
{
	memset(l, 0, sizeof *l);
	l->fd = fd;
	pthread_mutex_init(&l->lock, NULL);
}

/*
 * Put the link under TLS, the handshake still to do. A connecting end
 * checks that the certificate names host (a DNS name or an IP address)
 * when its context verifies. Returns 0, or -1 with err set.
 */
int
vcl_link_tls(struct vcl_link *l, SSL_CTX *ctx, int server, const char *host,
    char *err, size_t errlen)
{
	X509_VERIFY_PARAM	*vp;
	unsigned char		 addr[16];
	int			 ok = 1;

	ERR_clear_error();
	if ((l->ssl = SSL_new(ctx)) == NULL || SSL_set_fd(l->ssl, l->fd) != 1) {
		vcl_tls_reason(err, errlen, "cannot start TLS");
		goto fail;
	}
	if (server)
		SSL_set_accept_state(l->ssl);
	else {
		SSL_set_connect_state(l->ssl);
		if (host != NULL && SSL_CTX_get_verify_mode(ctx) !=
		    SSL_VERIFY_NONE) {
			vp = SSL_get0_param(l->ssl);
			X509_VERIFY_PARAM_set_hostflags(vp,
			    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
			if (inet_pton(AF_INET, host, addr) == 1 ||
			    inet_pton(AF_INET6, host, addr) == 1)
				ok = X509_VERIFY_PARAM_set1_ip_asc(vp, host);
			else
				ok = X509_VERIFY_PARAM_set1_host(vp, host, 0) &&
				    SSL_set_tlsext_host_name(l->ssl, host);
		}
		if (ok != 1) {
			vcl_tls_reason(err, errlen, "bad host name to verify");
			goto fail;
		}
	}
	l->handshaking = 1;
	return (0);
fail:
	SSL_free(l->ssl);
	l->ssl = NULL;
	return (-1);
}

static int	vcl_link_wait(struct vcl_link *);

/* Note why a TLS call failed (e from SSL_get_error) in l->err; sets errno. */
static void
vcl_link_fail(struct vcl_link *l, int e)
{
	long	vr = SSL_get_verify_result(l->ssl);
	int	saved = errno;

	if (e == SSL_ERROR_SSL && vr != X509_V_OK)
		snprintf(l->err, sizeof l->err, "certificate verify failed: %s",
		    X509_verify_cert_error_string(vr));
	else if (e == SSL_ERROR_SSL)
		vcl_tls_reason(l->err, sizeof l->err, "TLS error");
	else if (e == SSL_ERROR_SYSCALL && saved != 0)
		snprintf(l->err, sizeof l->err, "%s", strerror(saved));
	else
		snprintf(l->err, sizeof l->err, "connection closed");
	ERR_clear_error();
	errno = e == SSL_ERROR_SYSCALL && saved != 0 ? saved : EPROTO;
}

/*
 * What an SSL call returning r <= 0 means: 1 wait (want set, errno
 * EAGAIN), 0 end of stream, -1 failure (l->err, errno set).
 */
static int
vcl_link_status(struct vcl_link *l, int r)
{
	int	e;

	errno = 0;
	e = SSL_get_error(l->ssl, r);
	switch (e) {
	case SSL_ERROR_WANT_READ:
		l->want = VCL_LINK_WANT_READ;
		errno = EAGAIN;
		return (1);
	case SSL_ERROR_WANT_WRITE:
		l->want = VCL_LINK_WANT_WRITE;
		errno = EAGAIN;
		return (1);
	case SSL_ERROR_ZERO_RETURN:
		return (0);
	case SSL_ERROR_SYSCALL:
		if (ERR_peek_error() == 0 && errno == 0)
			return (0);
		break;
	default:
		break;
	}
	vcl_link_fail(l, e);
	return (-1);
}

/*
 * One handshake step on a non-blocking socket. Returns 0 when done, 1 to
 * wait for l->want, -1 on failure (l->err says why).
 */
int
vcl_link_handshake(struct vcl_link *l)
{
	int	r;

	if (l->ssl == NULL || !l->handshaking)
		return (0);
	ERR_clear_error();
	if ((r = SSL_do_handshake(l->ssl)) == 1) {
		l->handshaking = 0;
		return (0);
	}
	switch (vcl_link_status(l, r)) {
	case 1:
		return (1);
	case 0:
		snprintf(l->err, sizeof l->err, "connection closed in the TLS "
		    "handshake");
		break;
	default:
		break;
	}
	return (-1);
}

/*
 * Block SIGPIPE in this thread around a TLS call of a blocking user (the
 * client): OpenSSL writes to the socket with write(2) (records, alerts,
 * handshake messages), and a library must not kill its host program when
 * the other end has gone. A SIGPIPE the call raised is consumed before the
 * old mask comes back (unless one was pending already).
 */
struct vcl_link_nopipe {
	sigset_t	old;
	int		pending;	/* SIGPIPE was pending before */
};

static void
vcl_link_nopipe_begin(struct vcl_link_nopipe *np)
{
	sigset_t	pipe, pend;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigemptyset(&pend);
	sigpending(&pend);
	np->pending = sigismember(&pend, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &np->old);
}

/* Undo vcl_link_nopipe_begin, eating the SIGPIPE our write raised. */
static void
vcl_link_nopipe_end(struct vcl_link_nopipe *np)
{
	struct timespec	zero = { 0, 0 };
	sigset_t	pipe, pend;
	int		saved = errno;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigemptyset(&pend);
	sigpending(&pend);
	if (!np->pending && sigismember(&pend, SIGPIPE))
		while (sigtimedwait(&pipe, NULL, &zero) == -1 && errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &np->old, NULL);
	errno = saved;
}

/*
 * The whole handshake for a blocking user, within the link's timeout. The
 * socket turns non-blocking: the _full functions wait with poll. Returns 0,
 * or -1 (l->err says why).
 */
int
vcl_link_handshake_full(struct vcl_link *l)
{
	struct vcl_link_nopipe	np;
	int			flags, rc;

	if (l->ssl == NULL)
		return (0);
	flags = fcntl(l->fd, F_GETFL);
	if (flags == -1 || fcntl(l->fd, F_SETFL, flags | O_NONBLOCK) == -1) {
		snprintf(l->err, sizeof l->err, "%s", strerror(errno));
		return (-1);
	}
	for (;;) {
		vcl_link_nopipe_begin(&np);
		rc = vcl_link_handshake(l);
		vcl_link_nopipe_end(&np);
		if (rc != 1)
			return (rc);
		if (vcl_link_wait(l) != 0)
			return (-1);
	}
}

/*
 * For blocking users that wake on a tick: one locked TLS read, waiting at
 * most the link's timeout for the socket. Returns bytes, 0 at end of
 * stream, -1 with errno EAGAIN when the wait timed out (call again), or -1.
 */
ssize_t
vcl_link_recv_some(struct vcl_link *l, void *buf, size_t n)
{
	struct vcl_link_nopipe	np;
	int			r, st;

	for (;;) {
		vcl_link_nopipe_begin(&np);
		pthread_mutex_lock(&l->lock);
		ERR_clear_error();
		r = SSL_read(l->ssl, buf, n > INT_MAX ? INT_MAX : (int)n);
		st = r > 0 ? 0 : vcl_link_status(l, r);
		pthread_mutex_unlock(&l->lock);
		vcl_link_nopipe_end(&np);
		if (r > 0)
			return (r);
		if (st == 0)
			return (0);
		if (st != 1)
			return (-1);
		if (vcl_link_wait(l) != 0) {
			if (errno == ETIMEDOUT)
				errno = EAGAIN;
			return (-1);
		}
	}
}

/*
 * For blocking users: one locked read of what is ready now, never waiting
 * (plain or TLS). Returns bytes, 0 at end of stream, -1 with errno EAGAIN
 * when nothing is ready, or -1.
 */
ssize_t
vcl_link_recv_now(struct vcl_link *l, void *buf, size_t n)
{
	struct vcl_link_nopipe	np;
	int			r, st;

	if (l->ssl == NULL)
		return (recv(l->fd, buf, n, MSG_DONTWAIT));
	vcl_link_nopipe_begin(&np);
	pthread_mutex_lock(&l->lock);
	ERR_clear_error();
	r = SSL_read(l->ssl, buf, n > INT_MAX ? INT_MAX : (int)n);
	st = r > 0 ? 0 : vcl_link_status(l, r);
	pthread_mutex_unlock(&l->lock);
	vcl_link_nopipe_end(&np);
	if (r > 0)
		return (r);
	if (st == 0)
		return (0);
	if (st == 1)
		errno = EAGAIN;
	return (-1);
}

/*
 * One locked TLS write of part of iov, waiting at most the link's timeout;
 * never raises SIGPIPE. Returns bytes written, or -1 (errno EAGAIN: the
 * wait timed out, call again).
 */
ssize_t
vcl_link_send_some(struct vcl_link *l, const struct iovec *iov, int cnt)
{
	struct vcl_link_nopipe	np;
	ssize_t			r;

	for (;;) {
		vcl_link_nopipe_begin(&np);
		pthread_mutex_lock(&l->lock);
		r = vcl_link_writev(l, iov, cnt);
		pthread_mutex_unlock(&l->lock);
		vcl_link_nopipe_end(&np);
		if (r >= 0 || errno != EAGAIN)
			return (r);
		if (vcl_link_wait(l) != 0) {
			if (errno == ETIMEDOUT)
				errno = EAGAIN;
			return (-1);
		}
	}
}

/*
 * For blocking users: one write of what fits now, never waiting and never
 * raising SIGPIPE (plain or TLS). Returns bytes written, or -1 (errno
 * EAGAIN: nothing fits now).
 */
ssize_t
vcl_link_send_now(struct vcl_link *l, const struct iovec *iov, int cnt)
{
	struct vcl_link_nopipe	np;
	struct msghdr		mh;
	ssize_t			r;

	if (l->ssl == NULL) {
		memset(&mh, 0, sizeof mh);
		mh.msg_iov = (struct iovec *)iov;
		mh.msg_iovlen = (size_t)(cnt > IOV_MAX ? IOV_MAX : cnt);
		return (sendmsg(l->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT));
	}
	vcl_link_nopipe_begin(&np);
	pthread_mutex_lock(&l->lock);
	r = vcl_link_writev(l, iov, cnt);
	pthread_mutex_unlock(&l->lock);
	vcl_link_nopipe_end(&np);
	return (r);
}

/* Read like read(2): bytes, 0 at end of stream, -1 (errno EAGAIN: wait). */
ssize_t
vcl_link_read(struct vcl_link *l, void *buf, size_t n)
{
	int	r;

	if (l->ssl == NULL)
		return (read(l->fd, buf, n));
	ERR_clear_error();
	if ((r = SSL_read(l->ssl, buf, n > INT_MAX ? INT_MAX : (int)n)) > 0)
		return (r);
	r = vcl_link_status(l, r);
	return (r == 0 ? 0 : -1);
}

/*
 * Write like writev(2): returns the bytes taken from the front of iov,
 * or -1 (errno EAGAIN: wait). Under TLS small pieces are gathered into one
 * record-sized write; a large one goes from its own memory. A retry after
 * EAGAIN must offer the same bytes first, which a queue that only grows at
 * its tail does.
 */
ssize_t
vcl_link_writev(struct vcl_link *l, const struct iovec *iov, int cnt)
{
	uint8_t		 buf[VCL_TLS_COALESCE];
	const void	*p;
	size_t		 len = 0, k;
	int		 i = 0, r;

	if (l->ssl == NULL)
		return (writev(l->fd, iov, cnt > IOV_MAX ? IOV_MAX : cnt));
	while (i < cnt && iov[i].iov_len == 0)
		i++;
	if (i == cnt)
		return (0);
	if (iov[i].iov_len >= sizeof buf) {
		p = iov[i].iov_base;
		len = iov[i].iov_len > VCL_TLS_MAX_WRITE ? VCL_TLS_MAX_WRITE :
		    iov[i].iov_len;
	} else {
		for (; i < cnt && len < sizeof buf; i++) {
			k = iov[i].iov_len < sizeof buf - len ?
			    iov[i].iov_len : sizeof buf - len;
			memcpy(buf + len, iov[i].iov_base, k);
			len += k;
		}
		p = buf;
	}
	ERR_clear_error();
	if ((r = SSL_write(l->ssl, p, (int)len)) > 0)
		return (r);
	if (vcl_link_status(l, r) == 0)
		errno = EPIPE;
	return (-1);
}

/* Bytes TLS has decrypted but not handed out: no socket event for them. */
size_t
vcl_link_pending(struct vcl_link *l)
{
	int	n;

	if (l->ssl == NULL)
		return (0);
	n = SSL_pending(l->ssl);
	return (n > 0 ? (size_t)n : 0);
}

/* Wait, within the link's timeout, for what TLS wants. Returns 0 or -1. */
static int
vcl_link_wait(struct vcl_link *l)
{
	struct pollfd	pfd;
	int		r;

	pfd.fd = l->fd;
	pfd.events = l->want == VCL_LINK_WANT_WRITE ? POLLOUT : POLLIN;
	do
		r = poll(&pfd, 1, l->timeout_ms > 0 ? l->timeout_ms : -1);
	while (r < 0 && errno == EINTR);
	if (r == 0) {
		errno = ETIMEDOUT;
		snprintf(l->err, sizeof l->err, "timed out");
	}
	return (r > 0 ? 0 : -1);
}

/* Read exactly n bytes, blocking. Returns 0, or -1 on error or end. */
int
vcl_link_read_full(struct vcl_link *l, void *buf, size_t n)
{
	struct vcl_link_nopipe	 np;
	uint8_t			*p = buf;
	int			 r, st;

	if (l->ssl == NULL)
		return (vcl_io_read_full(l->fd, buf, n));
	while (n > 0) {
		vcl_link_nopipe_begin(&np);
		pthread_mutex_lock(&l->lock);
		ERR_clear_error();
		r = SSL_read(l->ssl, p, n > INT_MAX ? INT_MAX : (int)n);
		st = r > 0 ? 0 : vcl_link_status(l, r);
		pthread_mutex_unlock(&l->lock);
		vcl_link_nopipe_end(&np);
		if (r > 0) {
			p += r;
			n -= (size_t)r;
		} else if (st != 1 || vcl_link_wait(l) != 0)
			return (-1);
	}
	return (0);
}

/* Write every byte of the iovecs (which it consumes), blocking. 0 or -1. */
int
vcl_link_writev_full(struct vcl_link *l, struct iovec *iov, int cnt)
{
	struct vcl_link_nopipe	np;
	ssize_t			r;

	if (l->ssl == NULL)
		return (vcl_io_writev_full(l->fd, iov, cnt));
	while (cnt > 0) {
		if (iov->iov_len == 0) {
			iov++;
			cnt--;
			continue;
		}
		vcl_link_nopipe_begin(&np);
		pthread_mutex_lock(&l->lock);
		r = vcl_link_writev(l, iov, cnt);
		pthread_mutex_unlock(&l->lock);
		vcl_link_nopipe_end(&np);
		if (r < 0 && errno == EAGAIN) {
			if (vcl_link_wait(l) != 0)
				return (-1);
			continue;
		}
		if (r < 0)
			return (-1);
		vcl_io_advance(&iov, &cnt, (size_t)r);
	}
	return (0);
}

/* Bound each wait of the _full functions to ms milliseconds (0: none). */
void
vcl_link_timeout(struct vcl_link *l, int ms)
{
	l->timeout_ms = ms;
	if (l->ssl == NULL)
		vcl_io_timeout(l->fd, ms);
}

/* "TLSv1.3" and the like, or "plain". */
const char *
vcl_link_version(struct vcl_link *l)
{
	return (l->ssl != NULL ? SSL_get_version(l->ssl) : "plain");
}

/* Close the socket and free its TLS state. */
void
vcl_link_close(struct vcl_link *l)
{
	if (l->ssl != NULL)
		SSL_free(l->ssl);
	l->ssl = NULL;
	if (l->fd != -1)
		close(l->fd);
	l->fd = -1;
}
