/* vcl_io.c - socket helpers: blocking full reads and writes, address parsing. */
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vcl_io.h"

/* Read exactly n bytes. Returns 0, or -1 on error or end of stream. */
int
vcl_io_read_full(int fd, void *buf, size_t n)
{
	char	*p = buf;
	ssize_t	 r;

	while (n > 0) {
		/* One call for a whole bulk: the kernel waits, not a loop here. */
		r = recv(fd, p, n, MSG_WAITALL);
		if (r < 0 && errno == ENOTSOCK)
			r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return (-1);
		p += r;
		n -= (size_t)r;
	}
	return (0);
}

/* Consume n written bytes from the front of an iovec array. */
void
vcl_io_advance(struct iovec **iovp, int *cntp, size_t n)
{
	struct iovec	*iov = *iovp;
	int		 cnt = *cntp;

	while (cnt > 0 && n >= iov->iov_len) {
		n -= iov->iov_len;
		iov++;
		cnt--;
	}
	if (cnt > 0) {
		iov->iov_base = (char *)iov->iov_base + n;
		iov->iov_len -= n;
	}
	*iovp = iov;
	*cntp = cnt;
}

/*
 * Write every byte of the iovecs (which it consumes). Returns 0 or -1.
 * MSG_NOSIGNAL: a peer that closed is an error (EPIPE), never SIGPIPE in
 * the process, which may be someone else's program (libvcl).
 */
int
vcl_io_writev_full(int fd, struct iovec *iov, int cnt)
{
	struct msghdr	mh;
	ssize_t		r;

	while (cnt > 0) {
		if (iov->iov_len == 0) {
			iov++;
			cnt--;
			continue;
		}
		memset(&mh, 0, sizeof mh);
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)(cnt > IOV_MAX ? IOV_MAX : cnt);
		r = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (r < 0 && errno == ENOTSOCK)
			r = writev(fd, iov, cnt > IOV_MAX ? IOV_MAX : cnt);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return (-1);
		vcl_io_advance(&iov, &cnt, (size_t)r);
	}
	return (0);
}

/*
 * Split "host:port", "[v6]:port" or "host" (port left empty). Returns 0, or
 * -1 when a part does not fit.
 */
int
vcl_io_split_hostport(const char *s, char *host, size_t hlen, char *port,
    size_t plen)
{
	const char	*colon, *end;
	size_t		 n;

	if (s[0] == '[') {
		if ((end = strchr(s, ']')) == NULL)
			return (-1);
		n = (size_t)(end - s - 1);
		if (n >= hlen)
			return (-1);
		memcpy(host, s + 1, n);
		host[n] = '\0';
		colon = end[1] == ':' ? end + 1 : NULL;
		if (colon == NULL && end[1] != '\0')
			return (-1);
	} else {
		colon = strrchr(s, ':');
		n = colon != NULL ? (size_t)(colon - s) : strlen(s);
		if (n >= hlen)
			return (-1);
		memcpy(host, s, n);
		host[n] = '\0';
	}
	if (colon == NULL) {
		port[0] = '\0';
		return (0);
	}
	if (strlen(colon + 1) >= plen)
		return (-1);
	strcpy(port, colon + 1);
	return (0);
}

/* Connect with a deadline; the socket is left blocking. Returns 0 or -1. */
static int
vcl_io_connect_one(int fd, const struct sockaddr *sa, socklen_t len,
    int timeout_ms)
{
	struct pollfd	pfd;
	socklen_t	elen = sizeof(int);
	int		flags, e = 0;

	flags = fcntl(fd, F_GETFL);
	if (flags == -1 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)
		return (-1);
	if (connect(fd, sa, len) != 0) {
		if (errno != EINPROGRESS)
			return (-1);
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, timeout_ms) != 1) {
			errno = ETIMEDOUT;
			return (-1);
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) != 0)
			return (-1);
		if (e != 0) {
			errno = e;
			return (-1);
		}
	}
	return (fcntl(fd, F_SETFL, flags));
}

/* Connect a TCP socket within timeout_ms. Returns the fd, or -1 with err. */
int
vcl_io_connect(const char *host, const char *port, int timeout_ms, char *err,
    size_t errlen)
{
	struct addrinfo	 hints, *res, *ai;
	int		 fd = -1, rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		snprintf(err, errlen, "%s:%s: %s", host, port, gai_strerror(rc));
		return (-1);
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (fd == -1)
			continue;
		if (vcl_io_connect_one(fd, ai->ai_addr, ai->ai_addrlen,
		    timeout_ms) == 0)
			break;
		snprintf(err, errlen, "%s:%s: %s", host, port, strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd != -1)
		vcl_io_tune(fd);
	return (fd);
}

/* No Nagle delay, large buffers: control messages and bulk share a stream. */
void
vcl_io_tune(int fd)
{
	int	one = 1, sz = 4 << 20;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
}

/* "ip:port" ("[v6]:port") of the socket's peer, numeric; "" if unknown. */
void
vcl_io_peer_name(int fd, char *out, size_t len)
{
	struct sockaddr_storage	ss;
	socklen_t		sl = sizeof ss;
	char			host[NI_MAXHOST], serv[NI_MAXSERV];

	out[0] = '\0';
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, serv,
	    sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		return;
	snprintf(out, len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
	    host, serv);
}

/* Bound blocking reads and writes to ms milliseconds (0: no bound). */
void
vcl_io_timeout(int fd, int ms)
{
	struct timeval	tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/*
 * TCP keepalive, and a bound on unacknowledged data (TCP_USER_TIMEOUT,
 * user_ms; 0 leaves the kernel's default): a dead host or a cut link ends
 * the connection instead of leaving it open forever.
 */
void
vcl_io_keepalive(int fd, int user_ms)
{
	unsigned int	ut = user_ms > 0 ? (unsigned int)user_ms : 0;
	int		one = 1, idle = 60, intvl = 10, cnt = 6;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
	if (ut > 0)
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof ut);
}
