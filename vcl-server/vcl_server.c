/* vcl_server.c - the listener, the completion queue and the server's life. */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "vcl_backend.h"
#include "vcl_bincheck.h"
#include "vcl_enqueue.h"
#include "vcl_io.h"
#include "vcl_log.h"
#include "vcl_op_mem.h"
#include "vcl_peer.h"
#include "vcl_pool.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_submit.h"
#include "vcl_server_main.h"
#include "vcl_transports.h"
#include "vcl_worker.h"

/*
 * Callbacks the loop runs before it looks for new input again. A session
 * with frames still in hand after its batch (VCL_BATCH_MAX requests) makes
 * its read event active again, and libevent runs what is activated while
 * it runs callbacks in the same pass: without a bound, one client that
 * keeps sending kept every other session waiting until it stopped
 * (seconds, under load), whatever the batch.
 */
#define VCL_SERVER_DISPATCH_MAX	4

#define VCL_RATELOG_LINES	5	/* lines per interval, then a count */
#define VCL_RATELOG_SECONDS	10
#define VCL_AUTHFAIL_SLOTS	256	/* addresses remembered */
#define VCL_AUTHFAIL_WINDOW	60	/* seconds failures are counted */

/* Failed token proofs of one address in the current window. */
struct vcl_authfail {
	char		addr[64];
	time_t		start;		/* of the window */
	time_t		logged;		/* last line about it */
	uint64_t	count;
	uint64_t	unlogged;	/* failures since that line */
};

static void	vcl_server_accept_cb(evutil_socket_t, short, void *);

/*
 * The loop's look for more input before it sleeps. A client waiting on a
 * reply sends its next request a few microseconds after the reply lands;
 * a loop asleep in epoll_wait by then pays a wakeup (3-10 us on an H100
 * host, a third of a TCP round trip) on every synchronous call. So after
 * a session's input the loop polls its sockets without blocking for
 * vcl_spin_us before it sleeps, as the client spins for its reply
 * (VCL_SPIN_US). Only with VCL_SERVER_MIN_CPUS online CPUs or more by
 * default: on fewer, the spin takes the CPU the client or the runtime
 * needs.
 */
#define VCL_SPIN_US		50

long	vcl_spin_us = -1;	/* --spin-us; -1: by the CPUs online */

/* Nanoseconds on the monotonic clock. */
uint64_t
vcl_server_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* A session's input was handled: look for more for vcl_spin_us. */
void
vcl_server_spin_arm(struct vcl_server *srv)
{
	if (vcl_spin_us > 0)
		srv->spin_until = vcl_server_ns() + (uint64_t)vcl_spin_us * 1000;
}

/*
 * Run the loop until it is broken or exits: while a look is armed, passes
 * that poll without blocking; then passes that sleep until something is
 * ready. A pass that re-armed the look found input. Without the look,
 * libevent's own loop, as it always was.
 */
static void
vcl_server_loop(struct vcl_server *srv)
{
	uint64_t	armed;
	int		flags;

	if (vcl_spin_us == 0) {
		event_base_dispatch(srv->base);
		return;
	}
	for (;;) {
		armed = srv->spin_until;
		flags = EVLOOP_ONCE;
		if (armed != 0 && vcl_server_ns() < armed)
			flags = EVLOOP_NONBLOCK;
		else
			srv->spin_until = armed = 0;
		if (event_base_loop(srv->base, flags) != 0 ||
		    event_base_got_break(srv->base) ||
		    event_base_got_exit(srv->base))
			break;
		if (flags == EVLOOP_NONBLOCK && srv->spin_until != armed)
			srv->spin_hits++;
	}
}

/* Seconds on the monotonic clock (never 0: 0 means "not set"). */
time_t
vcl_server_now(void)
{
	struct timespec	t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec + 1);
}

/*
 * May a rate-limited line be logged now? The first few of an interval are;
 * the rest are counted and summed up in one line when the interval ends.
 */
int
vcl_server_ratelog(struct vcl_ratelog *rl, const char *who)
{
	time_t	now = vcl_server_now();

	if (now - rl->start >= VCL_RATELOG_SECONDS) {
		vcl_server_ratelog_flush(rl, who);
		rl->start = now;
		rl->n = 0;
	}
	if (rl->n < VCL_RATELOG_LINES) {
		rl->n++;
		return (1);
	}
	rl->suppressed++;
	return (0);
}

/* Log how many lines were suppressed, if any, and start counting again. */
void
vcl_server_ratelog_flush(struct vcl_ratelog *rl, const char *who)
{
	if (rl->suppressed == 0)
		return;
	vcl_log_warn("%s: %llu more similar lines suppressed", who,
	    (unsigned long long)rl->suppressed);
	rl->suppressed = 0;
}

/* The failure record of an address, or NULL. */
static struct vcl_authfail *
vcl_server_authfail_get(struct vcl_server *srv, const char *addr)
{
	size_t	i;

	if (srv->authfails == NULL)
		return (NULL);
	for (i = 0; i < VCL_AUTHFAIL_SLOTS; i++)
		if (srv->authfails[i].count > 0 &&
		    strcmp(srv->authfails[i].addr, addr) == 0)
			return (&srv->authfails[i]);
	return (NULL);
}

/*
 * Has addr failed the token proof too often in the current window? Its
 * connections are then closed before the greeting: no nonce, no check.
 */
int
vcl_server_auth_refused(struct vcl_server *srv, const char *addr)
{
	struct vcl_authfail	*f;

	if (srv->limits.auth_fails == 0 ||
	    (f = vcl_server_authfail_get(srv, addr)) == NULL)
		return (0);
	if (vcl_server_now() - f->start >= VCL_AUTHFAIL_WINDOW) {
		f->count = 0;
		return (0);
	}
	return (f->count >= srv->limits.auth_fails);
}

/*
 * Count a failed proof of addr. The first of a window is logged; the rest
 * are summed up once per interval (vcl_server_authfail_tick).
 */
void
vcl_server_auth_failed(struct vcl_server *srv, const char *addr)
{
	struct vcl_authfail	*f, *old;
	time_t			 now = vcl_server_now();
	size_t			 i;

	if (srv->authfails == NULL)
		return;
	if ((f = vcl_server_authfail_get(srv, addr)) == NULL) {
		/* A free slot, else the one whose window began first. */
		for (old = f = &srv->authfails[0], i = 0;
		    i < VCL_AUTHFAIL_SLOTS; i++) {
			f = &srv->authfails[i];
			if (f->count == 0 || now - f->start >=
			    VCL_AUTHFAIL_WINDOW)
				break;
			if (f->start < old->start)
				old = f;
		}
		if (i == VCL_AUTHFAIL_SLOTS)
			f = old;
		if (f->unlogged > 0)
			vcl_log_warn("authentication failed %llu more times "
			    "from %s", (unsigned long long)f->unlogged,
			    f->addr);
		memset(f, 0, sizeof *f);
		snprintf(f->addr, sizeof f->addr, "%s", addr);
	}
	if (now - f->start >= VCL_AUTHFAIL_WINDOW) {
		f->start = now;
		f->count = 0;
	}
	if (f->count++ == 0 || now - f->logged >= VCL_RATELOG_SECONDS) {
		vcl_log_warn("authentication failed from %s (%llu in this "
		    "minute)", addr, (unsigned long long)f->count);
		f->logged = now;
		f->unlogged = 0;
	} else
		f->unlogged++;
}

/* Sum up the failed proofs not logged one by one, once per interval. */
static void
vcl_server_authfail_tick(struct vcl_server *srv, time_t now)
{
	struct vcl_authfail	*f;
	size_t			 i;

	for (i = 0; srv->authfails != NULL && i < VCL_AUTHFAIL_SLOTS; i++) {
		f = &srv->authfails[i];
		if (f->unlogged == 0 || now - f->logged < VCL_RATELOG_SECONDS)
			continue;
		vcl_log_warn("authentication failed %llu more times from %s "
		    "(%llu in this minute)", (unsigned long long)f->unlogged,
		    f->addr, (unsigned long long)f->count);
		f->logged = now;
		f->unlogged = 0;
	}
}

/*
 * Push a completion from any thread. The loop is woken once until it
 * runs the list (not again for each push) and takes the whole list.
 */
void
vcl_server_done_push(struct vcl_server *srv, struct vcl_done *d)
{
	int	wake;

	d->next = NULL;
	pthread_mutex_lock(&srv->done_lock);
	wake = !srv->done_woken;
	srv->done_woken = 1;
	*srv->done_tail = d;
	srv->done_tail = &d->next;
	pthread_mutex_unlock(&srv->done_lock);
	if (wake)
		event_active(srv->ev_done, EV_READ, 0);
}

/*
 * Testing: when the environment names a file in var, wait until it exists
 * (at most 60 s), as a runtime call that is slow would hold this thread.
 */
void
vcl_server_test_latch(const char *var)
{
	const char	*path = getenv(var);
	int		 i;

	for (i = 0; path != NULL && *path != '\0' && i < 6000 &&
	    access(path, F_OK) != 0; i++)
		usleep(10000);
}

/* Testing: the number the environment gives var, or -1 when unset. */
long
vcl_server_test_num(const char *var)
{
	const char	*v = getenv(var);

	return (v != NULL && *v != '\0' ? strtol(v, NULL, 10) : -1);
}

/* Milliseconds since t0 (CLOCK_MONOTONIC). */
double
vcl_since_ms(const struct timespec *t0)
{
	struct timespec	t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ((t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6);
}

/*
 * Run fn(s, arg) on every session. fn may close any session, not only s:
 * a peer session's close fails the pushes of the sessions it carried,
 * and their flush may find their client gone and close them. So the next
 * session is held (a reference) across the call, and when the call
 * closed it (out of the list now) the walk begins again: fn must be
 * harmless run twice on a session. A session closing already, above this
 * walk, stays in the list until that close ends; fn skips it.
 */
static void
vcl_server_each(struct vcl_server *srv,
    void (*fn)(struct vcl_session *, void *), void *arg)
{
	struct vcl_session	*s, *next;
	int			 was;

again:
	for (s = LIST_FIRST(&srv->sessions); s != NULL; s = next) {
		if ((next = LIST_NEXT(s, entry)) != NULL) {
			vcl_session_ref(next);
			was = next->dead;
		}
		if (!s->dead)
			fn(s, arg);
		if (next == NULL)
			break;
		if (!was && next->dead) {
			vcl_session_unref(next);
			goto again;
		}
		vcl_session_unref(next);
	}
}

/* vcl_server_each: write what is queued. */
static void
vcl_server_flush_one(struct vcl_session *s, void *arg)
{
	(void)arg;
	vcl_session_flush(s);
}

/* Write what a batch queued, on every session (a write may close one). */
void
vcl_server_flush_all(struct vcl_server *srv)
{
	struct timespec		 t0;
	double			 ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	vcl_server_each(srv, vcl_server_flush_one, NULL);
	if ((ms = vcl_since_ms(&t0)) >= VCL_SLOW_MS) {
		srv->metrics.slow_events++;
		vcl_log_info("flushing queues and replies took %.1f ms", ms);
	}
}

/*
 * Push a completion nobody waits for (its reply went out already) without
 * waking the loop: it runs at the loop's next pass over completions, its
 * next read of a session (vcl_server_done_run) or its next tick. What it
 * holds (staging, a session reference) waits that long.
 */
void
vcl_server_done_push_lazy(struct vcl_server *srv, struct vcl_done *d)
{
	d->next = NULL;
	pthread_mutex_lock(&srv->done_lock);
	*srv->done_tail = d;
	srv->done_tail = &d->next;
	pthread_mutex_unlock(&srv->done_lock);
}

/* Run every pending completion on the loop thread, then write replies. */
void
vcl_server_done_run(struct vcl_server *srv)
{
	struct vcl_done		*d, *next;
	struct timespec		 t0;
	double			 ms;
	int			 n = 0;

	pthread_mutex_lock(&srv->done_lock);
	d = srv->done_head;
	srv->done_head = NULL;
	srv->done_tail = &srv->done_head;
	srv->done_woken = 0;
	pthread_mutex_unlock(&srv->done_lock);
	if (d == NULL)
		return;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	srv->corked = 1;
	for (; d != NULL; d = next) {
		next = d->next;
		d->fn(d);
		n++;
	}
	srv->corked = 0;
	if ((ms = vcl_since_ms(&t0)) >= VCL_SLOW_MS) {
		srv->metrics.slow_events++;
		vcl_log_info("%d completions took %.1f ms", n, ms);
	}
	vcl_server_flush_all(srv);
}

/* The loop was woken for completions. */
static void
vcl_server_done_cb(evutil_socket_t fd, short what, void *arg)
{
	vcl_server_done_run(arg);
}

/* Accept stopped on EMFILE; try again. */
static void
vcl_server_backoff_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_server	*srv = arg;

	if (!srv->stopping)
		event_add(srv->ev_accept, NULL);
}

/* The unauthenticated connection accepted first, or NULL. */
static struct vcl_session *
vcl_server_oldest_preauth(struct vcl_server *srv)
{
	struct vcl_session	*s, *oldest = NULL;

	LIST_FOREACH(s, &srv->sessions, entry)
		if (!s->authed && !s->dead)
			oldest = s;	/* sessions are inserted at the head */
	return (oldest);
}

/*
 * Make room for one more unauthenticated connection: when addr has its
 * share already, refuse (0); when all of them are taken, close the oldest
 * one, so a flood of idle connections cannot lock good clients out: they
 * get in as long as their handshake is quicker than the flood's turnover.
 * Returns 1 when the new connection may stay.
 */
static int
vcl_server_preauth_room(struct vcl_server *srv, const char *addr)
{
	struct vcl_session	*s, *oldest = NULL;
	uint64_t		 same = 0;

	LIST_FOREACH(s, &srv->sessions, entry) {
		if (s->authed || s->dead)
			continue;
		if (strcmp(s->addr, addr) == 0)
			same++;
		oldest = s;	/* sessions are inserted at the head */
	}
	if (same >= srv->limits.preauth_addr) {
		if (vcl_server_ratelog(&srv->conn_log, "connections"))
			vcl_log_warn("refusing %s: %llu connections from it "
			    "are not authenticated yet", addr,
			    (unsigned long long)same);
		return (0);
	}
	if (srv->npreauth >= srv->limits.preauth && oldest != NULL) {
		if (vcl_server_ratelog(&srv->conn_log, "connections"))
			vcl_log_warn("%llu connections not authenticated: "
			    "dropping the oldest, from %s",
			    (unsigned long long)srv->npreauth, oldest->peer);
		vcl_session_close(oldest, NULL);
	}
	return (1);
}

/*
 * Accept new clients. Out of descriptors, drop the oldest connection that
 * has not authenticated (idle sockets cannot starve good clients), else
 * back off for a second instead of spinning.
 */
static void
vcl_server_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct vcl_server	*srv = arg;
	struct vcl_session	*s;
	struct sockaddr_storage	 ss;
	socklen_t		 sl;
	char			 host[NI_MAXHOST], serv[NI_MAXSERV], peer[300];
	struct timeval		 tv = { 1, 0 };
	int			 fd;

	for (;;) {
		sl = sizeof ss;
		fd = accept4(lfd, (struct sockaddr *)&ss, &sl,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			/* Out of descriptors: the oldest stranger's go first. */
			if ((errno == EMFILE || errno == ENFILE) &&
			    (s = vcl_server_oldest_preauth(srv)) != NULL) {
				if (vcl_server_ratelog(&srv->conn_log,
				    "connections"))
					vcl_log_warn("accept: %s; dropping the "
					    "oldest connection not "
					    "authenticated, from %s",
					    strerror(errno), s->peer);
				vcl_session_close(s, NULL);
				continue;
			}
			if (errno == EMFILE || errno == ENFILE) {
				vcl_log_warn("accept: %s; pausing",
				    strerror(errno));
				event_del(srv->ev_accept);
				evtimer_add(srv->ev_backoff, &tv);
			} else if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				vcl_log_error("accept: %s", strerror(errno));
			return;
		}
		if (getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host,
		    serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
			snprintf(host, sizeof host, "?");
			snprintf(peer, sizeof peer, "?");
		} else
			snprintf(peer, sizeof peer, "%.256s:%.32s", host, serv);
		if (vcl_server_auth_refused(srv, host)) {
			if (vcl_server_ratelog(&srv->conn_log, "connections"))
				vcl_log_warn("refusing %s: too many failed "
				    "token proofs from it", peer);
			close(fd);
			continue;
		}
		if (!vcl_server_preauth_room(srv, host)) {
			close(fd);
			continue;
		}
		vcl_io_tune(fd);
		if ((s = vcl_session_new(srv, fd, peer)) == NULL) {
			vcl_log_error("no memory for a session from %s", peer);
			close(fd);
			continue;
		}
		snprintf(s->addr, sizeof s->addr, "%.63s", host);
	}
}

/* True when the address is a loopback one (no token needed there). */
static int
vcl_server_is_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in	*in4;
	const struct sockaddr_in6	*in6;

	if (sa->sa_family == AF_INET) {
		in4 = (const struct sockaddr_in *)sa;
		return ((ntohl(in4->sin_addr.s_addr) >> 24) == 127);
	}
	if (sa->sa_family == AF_INET6) {
		in6 = (const struct sockaddr_in6 *)sa;
		return (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));
	}
	return (0);
}

/*
 * Bind and listen on host:port. Refuses a non-loopback address without a
 * token unless insecure. Writes the bound port to port_file, if given.
 */
static int
vcl_server_listen(struct vcl_server *srv, const struct vcl_options *opt,
    char *err, size_t errlen)
{
	struct addrinfo		 hints, *res;
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof ss;
	char			 host[256], port[32], serv[NI_MAXSERV];
	int			 fd, one = 1, rc;
	FILE			*f;

	if (vcl_io_split_hostport(opt->listen, host, sizeof host, port,
	    sizeof port) != 0) {
		snprintf(err, errlen, "bad --listen address: %s", opt->listen);
		return (-1);
	}
	if (port[0] == '\0')
		snprintf(port, sizeof port, "%d", VCL_DEFAULT_PORT);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res)) != 0) {
		snprintf(err, errlen, "%s: %s", opt->listen, gai_strerror(rc));
		return (-1);
	}
	if (!vcl_server_is_loopback(res->ai_addr) && !srv->have_token &&
	    !opt->insecure) {
		snprintf(err, errlen, "refusing to listen on non-loopback "
		    "address %s without --token-file (or --insecure)",
		    opt->listen);
		freeaddrinfo(res);
		return (-1);
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, res->ai_protocol);
	if (fd == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
	    listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		snprintf(err, errlen, "listen %s: %s", opt->listen,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		freeaddrinfo(res);
		return (-1);
	}
	freeaddrinfo(res);
	getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, serv,
	    sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
	srv->lfd = fd;
	vcl_log_info("listening on %s port %s (%s)", host, serv,
	    srv->tls != NULL ? "TLS" : "plain TCP");
	if (opt->port_file != NULL) {
		char	tmp[4096];

		snprintf(tmp, sizeof tmp, "%s.tmp", opt->port_file);
		if ((f = fopen(tmp, "w")) == NULL ||
		    fprintf(f, "%s\n", serv) < 0 || fclose(f) != 0 ||
		    rename(tmp, opt->port_file) != 0) {
			snprintf(err, errlen, "%s: %s", opt->port_file,
			    strerror(errno));
			return (-1);
		}
	}
	return (0);
}

/* Tell systemd (Type=notify) something, if it is listening. */
static void
vcl_server_sd_notify(const char *msg)
{
	struct sockaddr_un	 sun;
	const char		*path = getenv("NOTIFY_SOCKET");
	socklen_t		 len;
	int			 fd;

	if (path == NULL || (path[0] != '/' && path[0] != '@') ||
	    strlen(path) >= sizeof sun.sun_path)
		return;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	if (sun.sun_path[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return;
	(void)sendto(fd, msg, strlen(msg), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, len);
	close(fd);
}

/* vcl_server_each: send what is queued, then close. */
static void
vcl_server_drain_one(struct vcl_session *s, void *arg)
{
	(void)arg;
	vcl_session_drain(s);
}

/* SIGTERM/SIGINT: stop accepting, send what is queued, then exit. */
static void
vcl_server_stop_cb(evutil_socket_t sig, short what, void *arg)
{
	struct vcl_server	*srv = arg;
	struct timeval		 tv = { 10, 0 };

	if (srv->stopping) {
		event_base_loopbreak(srv->base);
		return;
	}
	vcl_log_info("signal %d: draining %llu sessions", (int)sig,
	    (unsigned long long)srv->nsessions);
	vcl_server_sd_notify("STOPPING=1");
	srv->stopping = 1;
	event_del(srv->ev_accept);
	vcl_server_each(srv, vcl_server_drain_one, NULL);
	/* Whatever is still sending after the grace period is cut. */
	event_base_loopexit(srv->base, &tv);
}

/*
 * Did the other end of the session's control stream go (closed it, or its
 * process died)? Only asked while its input is not read.
 */
static int
vcl_server_hung_up(struct vcl_session *s)
{
	struct pollfd	pfd;
	int		n = 0;

	if (s->link.fd < 0)
		return (0);
	pfd.fd = s->link.fd;
	pfd.events = POLLRDHUP;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) != 1 ||
	    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) == 0)
		return (0);
	/*
	 * Frames that came before the end are still to be read (the other
	 * end queued more behind the push, then closed): not hung up yet;
	 * the frame deadline still ends a push that never completes.
	 */
	if ((pfd.revents & POLLERR) == 0 && (vcl_link_pending(&s->link) > 0 ||
	    (ioctl(s->link.fd, FIONREAD, &n) == 0 && n > 0)))
		return (0);
	return (1);
}

/*
 * The bytes of the frame under way that count for its deadline: those in
 * hand, so a frame must keep coming at frame_rate after its first
 * frame_s seconds; one announcing a large bulk and then trickling held
 * its staging for the whole size at that rate (hours for a GiB). An
 * out-of-band bulk's progress is the transport's: its whole size.
 */
static uint64_t
vcl_server_frame_got(const struct vcl_session *s)
{
	switch (s->in_state) {
	case VCL_IN_BULK:
		return (VCL_FRAME_HDR_LEN + s->in_frame.msg_len +
		    s->in_bulk_got);
	case VCL_IN_OOB:
		return (s->in_frame.msg_len + s->in_frame.bulk_len);
	default:
		return (s->in.end - s->in.start);
	}
}

/*
 * The deadlines of a session: the handshake; a frame must keep coming at
 * frame_rate once its first frame_s seconds are over (a slow link moving a
 * large bulk is fine, one byte a second is not, whatever the size it
 * announced: vcl_server_frame_got); a session
 * that holds nothing may stay silent idle_s; output must move within
 * send_s. Time spent not reading (flow control, a job) does not count.
 */
static void
vcl_server_check_session(struct vcl_server *srv, struct vcl_session *s,
    time_t now)
{
	const struct vcl_limits	*lim = &srv->limits;
	uint64_t		 allowed;
	char			 who[64];

	if (!s->authed) {
		if ((uint64_t)(now - s->born) > lim->handshake_s)
			vcl_session_close(s, s->link.handshaking ?
			    "no TLS handshake in time (a client without "
			    "TLS?)" : "no handshake in time");
		return;
	}
	/*
	 * Out-of-band bulk holds the session's input, so the end of its
	 * control stream is not read: the other end that closed the link
	 * with a push's bytes still to come (it gave up on it), or died
	 * where the transport did not tell, shows only here. Nobody will
	 * send them: the session goes, failing what the push was for
	 * (vcl_peer_link_lost), instead of waiting for the frame deadline.
	 * A binary's check holds input too: a client gone meanwhile ends
	 * it (its child killed), not left to run to its timeout.
	 */
	if (((s->in_state == VCL_IN_OOB && !s->in_oob_done) ||
	    s->bincheck != NULL) && vcl_server_hung_up(s)) {
		vcl_session_close(s, s->bincheck != NULL ? "link closed "
		    "during a binary check" : "link closed during out-of-band "
		    "bulk");
		return;
	}
	if (s->in_since != 0) {
		/* Held back by us, not by the client; out-of-band bulk
		 * holds input too, yet its bytes must keep coming. */
		if ((!s->reading || s->paused) && s->in_state != VCL_IN_OOB)
			s->in_since = now;
		allowed = lim->frame_s + vcl_server_frame_got(s) /
		    (lim->frame_rate ? lim->frame_rate : 1);
		if (lim->frame_s != 0 && (uint64_t)(now - s->in_since) >
		    allowed) {
			vcl_session_close(s, "frame not completed in time");
			return;
		}
	}
	if (lim->send_s != 0 && s->out_bytes > 0 &&
	    (uint64_t)(now - s->last_out) > lim->send_s) {
		vcl_session_close(s, "client does not take its replies");
		return;
	}
	if (lim->idle_s != 0 && s->in_since == 0 && s->handles.count == 0 &&
	    LIST_EMPTY(&s->inflight) && s->nheld == 0 && s->jobs == 0 &&
	    s->out_bytes == 0 && (uint64_t)(now - s->last_in) > lim->idle_s) {
		vcl_session_close(s, "idle");
		return;
	}
	vcl_session_keepalive(s);
	if (s->warns.suppressed > 0 &&
	    now - s->warns.start >= VCL_RATELOG_SECONDS) {
		snprintf(who, sizeof who, "session %llu",
		    (unsigned long long)s->id);
		vcl_server_ratelog_flush(&s->warns, who);
	}
}

/* vcl_server_each: a session's deadlines and keepalive (arg: now). */
static void
vcl_server_check_one(struct vcl_session *s, void *arg)
{
	vcl_server_check_session(s->srv, s, *(const time_t *)arg);
}

/* vcl_server_each: complete what the runtime failed without a callback. */
static void
vcl_server_reap_one(struct vcl_session *s, void *arg)
{
	(void)arg;
	if (!LIST_EMPTY(&s->inflight))
		vcl_cmd_reap(s);
}

/*
 * Every tick: run completions pushed without a wakeup, enforce the
 * deadlines, complete commands the runtime failed without a callback
 * (vcl_cmd_reap) and done ones whose callback it refused (vcl_cmd_sweep),
 * and exit once draining sessions are all gone.
 */
static void
vcl_server_check_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_server	*srv = arg;
	time_t			 now = vcl_server_now();

	vcl_server_done_run(srv);
	vcl_server_each(srv, vcl_server_check_one, &now);
	vcl_peer_check_all(srv, now);
	vcl_transports_progress(srv);
	if (srv->conn_log.suppressed > 0 &&
	    now - srv->conn_log.start >= VCL_RATELOG_SECONDS)
		vcl_server_ratelog_flush(&srv->conn_log, "connections");
	vcl_server_authfail_tick(srv, now);
	srv->corked = 1;
	vcl_server_each(srv, vcl_server_reap_one, NULL);
	vcl_cmd_sweep();
	srv->corked = 0;
	vcl_server_flush_all(srv);
	if (srv->stopping && srv->nsessions == 0)
		event_base_loopbreak(srv->base);
}

/* SIGHUP: reload the configuration file (log level and limits). */
static void
vcl_server_hup_cb(evutil_socket_t sig, short what, void *arg)
{
	struct vcl_server	*srv = arg;

	if (srv->reload != NULL)
		srv->reload(srv);
	else
		vcl_log_info("SIGHUP: nothing to reload");
}

/* Run the server until a signal stops it. Returns the exit status. */
int
vcl_server_run(struct vcl_server *srv, const struct vcl_options *opt)
{
	struct event		*ev_term, *ev_int, *ev_hup, *ev_check;
	struct vcl_session	*s;
	struct timeval		 tick = { 0, 100000 };
	struct event_config	*cfg;
	char			 err[512];
	int			 rc = 1, i, many;

	LIST_INIT(&srv->sessions);
	LIST_INIT(&srv->peers);
	pthread_mutex_init(&srv->done_lock, NULL);
	srv->done_tail = &srv->done_head;
	srv->lfd = -1;
	if (evthread_use_pthreads() != 0 || (cfg = event_config_new()) ==
	    NULL)
		srv->base = NULL;
	else {
		if (event_config_set_max_dispatch_interval(cfg, NULL,
		    VCL_SERVER_DISPATCH_MAX, 0) == 0)
			srv->base = event_base_new_with_config(cfg);
		else
			srv->base = NULL;
		event_config_free(cfg);
	}
	if (srv->base == NULL) {
		vcl_log_error("cannot set up the event loop");
		return (1);
	}
	signal(SIGPIPE, SIG_IGN);
	if (vcl_backend_open(&srv->be, opt->platform, opt->devices, err,
	    sizeof err) != 0) {
		vcl_log_error("%s", err);
		goto out;
	}
	/* New buffers are filled from here: mapped, never written. */
	srv->zeros_len = vcl_backend_max_alloc(&srv->be);
	if ((srv->zeros = mmap(NULL, srv->zeros_len, PROT_READ, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)) == MAP_FAILED) {
		vcl_log_error("cannot map %zu bytes of zeros", srv->zeros_len);
		srv->zeros = NULL;
		goto out;
	}
	if (srv->limits.session_bytes == 0)
		srv->limits.session_bytes = vcl_backend_global_mem(&srv->be) +
		    (1ull << 30);
	/*
	 * Waiter threads block in clWaitForEvents; one may wait on an event
	 * that never ends at exit, so they are never joined or freed.
	 */
	srv->waiters = vcl_workers_new(4);
	srv->authfails = calloc(VCL_AUTHFAIL_SLOTS, sizeof *srv->authfails);
	if ((srv->workers = vcl_workers_new(opt->workers)) == NULL ||
	    (srv->movers = vcl_workers_new(2)) == NULL ||
	    (srv->submitters = vcl_workers_new(VCL_SUBMITTERS)) == NULL ||
	    (srv->releasers = vcl_workers_new(1)) == NULL ||
	    srv->authfails == NULL) {
		vcl_log_error("cannot start worker threads");
		goto out;
	}
	if (vcl_transports_init(srv, opt->transports, opt->transport_force,
	    err, sizeof err) != 0) {
		vcl_log_error("%s", err);
		goto out;
	}
	if (vcl_server_listen(srv, opt, err, sizeof err) != 0 ||
	    vcl_metrics_listen(srv, opt->metrics_listen,
	    opt->metrics_port_file, err, sizeof err) != 0) {
		vcl_log_error("%s", err);
		goto out;
	}
	srv->ev_accept = event_new(srv->base, srv->lfd, EV_READ | EV_PERSIST,
	    vcl_server_accept_cb, srv);
	srv->ev_backoff = evtimer_new(srv->base, vcl_server_backoff_cb, srv);
	srv->ev_done = event_new(srv->base, -1, EV_PERSIST,
	    vcl_server_done_cb, srv);
	ev_term = evsignal_new(srv->base, SIGTERM, vcl_server_stop_cb, srv);
	ev_int = evsignal_new(srv->base, SIGINT, vcl_server_stop_cb, srv);
	ev_hup = evsignal_new(srv->base, SIGHUP, vcl_server_hup_cb, srv);
	ev_check = event_new(srv->base, -1, EV_PERSIST, vcl_server_check_cb,
	    srv);
	if (srv->ev_accept == NULL || srv->ev_backoff == NULL ||
	    srv->ev_done == NULL || ev_term == NULL || ev_int == NULL ||
	    ev_hup == NULL || ev_check == NULL) {
		vcl_log_error("cannot set up the event loop");
		goto out;
	}
	event_add(srv->ev_accept, NULL);
	event_add(ev_term, NULL);
	event_add(ev_int, NULL);
	event_add(ev_hup, NULL);
	event_add(ev_check, &tick);
	vcl_server_sd_notify("READY=1");
	vcl_log_info("serving %u device(s)", srv->be.ndevices);

	/* What spare CPUs pay for, unless an option said. */
	many = sysconf(_SC_NPROCESSORS_ONLN) >= VCL_SERVER_MIN_CPUS;
	if (vcl_spin_us < 0)
		vcl_spin_us = many ? VCL_SPIN_US : 0;
	if (vcl_write_chunk == VCL_WRITE_CHUNK_AUTO)
		vcl_write_chunk = many ? VCL_WRITE_CHUNK : 0;
	vcl_server_loop(srv);

	while ((s = LIST_FIRST(&srv->sessions)) != NULL)
		vcl_session_close(s, "server exiting");
	vcl_bincheck_stop(srv);
	vcl_peer_close_all(srv);
	/*
	 * Commands of released objects may still call back; wait (bounded)
	 * until no session can be touched by one before freeing the rest.
	 * The transports go after them: a migration's chunk still read into
	 * or written from shared staging gives its slot back to its
	 * transport when it completes. Those whose callback the runtime
	 * refused hold theirs too: the sweep still looks at them, the tick
	 * that did having stopped with the loop.
	 */
	for (i = 0; srv->session_structs > 0 && i < 5000; i++) {
		vcl_server_done_cb(-1, 0, srv);
		vcl_cmd_sweep();
		if (srv->session_structs > 0)
			usleep(1000);
	}
	if (srv->session_structs > 0)
		vcl_log_warn("exiting with %llu sessions still held by "
		    "commands the runtime did not end",
		    (unsigned long long)srv->session_structs);
	vcl_transports_free(srv);
	vcl_pool_drain();
	event_free(ev_term);
	event_free(ev_int);
	event_free(ev_hup);
	event_free(ev_check);
	rc = 0;
out:
	if (srv->workers != NULL)
		vcl_workers_free(srv->workers);
	if (srv->movers != NULL)
		vcl_workers_free(srv->movers);
	if (srv->submitters != NULL)
		vcl_workers_free(srv->submitters);
	if (srv->releasers != NULL)
		vcl_workers_free(srv->releasers);
	free(srv->authfails);
	if (srv->ev_accept != NULL)
		event_free(srv->ev_accept);
	if (srv->ev_backoff != NULL)
		event_free(srv->ev_backoff);
	if (srv->ev_done != NULL)
		event_free(srv->ev_done);
	if (srv->lfd != -1)
		close(srv->lfd);
	vcl_metrics_close(srv);
	vcl_backend_close(&srv->be);
	if (srv->zeros != NULL)
		munmap(srv->zeros, srv->zeros_len);
	event_base_free(srv->base);
	libevent_global_shutdown();
	return (rc);
}
