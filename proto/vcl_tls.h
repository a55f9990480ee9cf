/* vcl_tls.h - a link: a socket, plain or under TLS, and its I/O. */
#ifndef VCL_TLS_H
#define VCL_TLS_H

#include <sys/types.h>
#include <sys/uio.h>

#include <pthread.h>
#include <stddef.h>

typedef struct ssl_st		SSL;
typedef struct ssl_ctx_st	SSL_CTX;

#define VCL_LINK_WANT_READ	1
#define VCL_LINK_WANT_WRITE	2

/*
 * A connection as the I/O code sees it. ssl NULL: plain syscalls on fd.
 * Non-blocking users (the server) call vcl_link_read/writev/handshake and
 * look at want when they report EAGAIN. Blocking users (the client, one
 * receiver thread and senders) call the _full functions: under TLS the
 * socket is non-blocking and they wait with poll, taking lock only around
 * each SSL call, since one SSL object may not be used by two threads at once.
 */
struct vcl_link {
	int		 fd;
	SSL		*ssl;
	int		 handshaking;
	int		 want;		/* VCL_LINK_WANT_*, after EAGAIN */
	int		 timeout_ms;	/* _full functions; 0: none */
	pthread_mutex_t	 lock;
	char		 err[256];	/* the last TLS failure, for logs */
};

/* TLS settings of one end. Files are PEM. */
struct vcl_tls_conf {
	const char	*cert;		/* our certificate chain */
	const char	*key;		/* its private key */
	const char	*ca;		/* CAs that sign the other end */
	int		 verify;	/* require and check the other end's cert */
};

SSL_CTX	*vcl_tls_ctx_new(int, const struct vcl_tls_conf *, char *, size_t);
void	 vcl_tls_ctx_free(SSL_CTX *);

void	 vcl_link_init(struct vcl_link *, int);
int	 vcl_link_tls(struct vcl_link *, SSL_CTX *, int, const char *, char *,
	    size_t);
int	 vcl_link_handshake(struct vcl_link *);
int	 vcl_link_handshake_full(struct vcl_link *);
ssize_t	 vcl_link_read(struct vcl_link *, void *, size_t);
ssize_t	 vcl_link_writev(struct vcl_link *, const struct iovec *, int);
size_t	 vcl_link_pending(struct vcl_link *);
ssize_t	 vcl_link_recv_some(struct vcl_link *, void *, size_t);
ssize_t	 vcl_link_recv_now(struct vcl_link *, void *, size_t);
ssize_t	 vcl_link_send_some(struct vcl_link *, const struct iovec *, int);
ssize_t	 vcl_link_send_now(struct vcl_link *, const struct iovec *, int);
int	 vcl_link_read_full(struct vcl_link *, void *, size_t);
int	 vcl_link_writev_full(struct vcl_link *, struct iovec *, int);
void	 vcl_link_timeout(struct vcl_link *, int);
const char *vcl_link_version(struct vcl_link *);
void	 vcl_link_close(struct vcl_link *);

#endif
