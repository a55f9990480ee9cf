/*
 * test_ucx.c - the UCX engine (proto/transport/ucx.c) between two processes
 * of this host: bulks land in the destinations the receiver chose, in any
 * order of post and arrival; wrong sizes fail; limits refuse; a peer that
 * vanishes fails what waits on it, and nothing hangs.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "vcl_ucx.h"

#define MIB		(1024 * 1024)
#define DEADLINE	60	/* seconds any wait may take */

struct done {
	int	n;		/* completions seen */
	int	status;		/* the last one's */
};

/* A completion: count it. */
static void
done_cb(int status, void *arg)
{
	struct done	*d = arg;

	d->n++;
	d->status = status;
}

static int	failed_eps;

/* An endpoint's peer failed. */
static void
fail_cb(struct vcl_ucx_ep *ep, void *arg)
{
	failed_eps++;
}

/* Wait on the engine's fd and progress it until *n reaches want; 0, or -1
 * past the deadline (a hang guard, not a timing assertion). */
static int
run_until(struct vcl_ucx *u, const int *n, int want)
{
	struct pollfd	 pfd;
	time_t		 t0 = time(NULL);

	while (*n < want) {
		if (time(NULL) - t0 > DEADLINE)
			return (-1);
		pfd.fd = vcl_ucx_fd(u);
		pfd.events = POLLIN;
		if (vcl_ucx_progress(u) == 0)
			(void)poll(&pfd, 1, 50);
	}
	return (0);
}

/* Write all of buf to fd. */
static int
put(int fd, const void *buf, size_t len)
{
	const uint8_t	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) <= 0)
			return (-1);
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

/* Read exactly len bytes from fd. */
static int
get(int fd, void *buf, size_t len)
{
	uint8_t	*p = buf;
	ssize_t	 n;

	while (len > 0) {
		if ((n = read(fd, p, len)) <= 0)
			return (-1);
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

/* Send our address, read the other side's (a length, then the bytes). */
static int
swap_addr(int fd, struct vcl_ucx *u, uint8_t **peer, size_t *plen)
{
	const void	*a;
	size_t		 alen;
	uint32_t	 len;

	vcl_ucx_address(u, &a, &alen);
	len = (uint32_t)alen;
	if (put(fd, &len, sizeof len) != 0 || put(fd, a, alen) != 0)
		return (-1);
	if (get(fd, &len, sizeof len) != 0 || len > 65536)
		return (-1);
	if ((*peer = malloc(len)) == NULL || get(fd, *peer, len) != 0)
		return (-1);
	*plen = len;
	return (0);
}

/* Fill with a pattern of seed. */
static void
fill(uint8_t *p, size_t len, unsigned seed)
{
	size_t	i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 131 + seed);
}

/* Whether p holds seed's pattern. */
static int
check(const uint8_t *p, size_t len, unsigned seed)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (p[i] != (uint8_t)(i * 131 + seed))
			return (0);
	}
	return (1);
}

/* A new engine. */
static struct vcl_ucx *
engine(const struct vcl_ucx_limits *lim)
{
	struct vcl_ucx	*u;
	char		 err[256];

	u = vcl_ucx_create(lim, err, sizeof err);
	if (u == NULL)
		fail_msg("vcl_ucx_create: %s", err);
	return (u);
}

static const size_t	sizes[] = { 100, 64 * 1024, 4 * MIB, 32 * MIB, 1 };

/* Child: send sizes[i] bytes tagged i + 1, the last in two pieces. */
static int
child_sender(int fd)
{
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep;
	struct done		 d = { 0, 0 };
	struct iovec		 iov[2];
	uint8_t			*peer, *buf[5];
	size_t			 plen, i;
	char			 err[256];
	int			 bad = 0;

	if ((u = vcl_ucx_create(NULL, err, sizeof err)) == NULL)
		return (2);
	if (swap_addr(fd, u, &peer, &plen) != 0)
		return (3);
	if ((ep = vcl_ucx_ep_open(u, peer, plen, fail_cb, NULL)) == NULL)
		return (4);
	for (i = 0; i < 4; i++) {
		buf[i] = malloc(sizes[i]);
		fill(buf[i], sizes[i], (unsigned)i);
		iov[0].iov_base = buf[i];
		iov[0].iov_len = sizes[i];
		if (vcl_ucx_send(ep, i + 1, iov, 1, done_cb, &d) == NULL)
			return (5);
	}
	/* Tag 5: 3 MiB from two pieces, read back as one. */
	buf[4] = malloc(3 * MIB);
	fill(buf[4], 3 * MIB, 4);
	iov[0].iov_base = buf[4];
	iov[0].iov_len = MIB;
	iov[1].iov_base = buf[4] + MIB;
	iov[1].iov_len = 2 * MIB;
	if (vcl_ucx_send(ep, 5, iov, 2, done_cb, &d) == NULL)
		return (6);
	if (run_until(u, &d.n, 5) != 0)
		return (7);
	if (d.status != 0)
		bad = 8;
	/* The receiver says when it has everything: then close. */
	if (get(fd, err, 1) != 0)
		bad = 9;
	vcl_ucx_ep_close(ep);
	vcl_ucx_free(u);
	return (bad);
}

/* Fork a child running fn on one end of a socket pair; *fd: the other. */
static pid_t
spawn(int (*fn)(int), int *fd)
{
	int	sv[2];
	pid_t	pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	if ((pid = fork()) == 0) {
		close(sv[0]);
		_exit(fn(sv[1]));
	}
	assert_true(pid > 0);
	close(sv[1]);
	*fd = sv[0];
	return (pid);
}

/* Wait for the child; its exit status. */
static int
reap(pid_t pid)
{
	int	st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	return (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* Bulks land where the receiver chose, posted before or after arrival. */
static void
test_bulk_into_destination(void **state)
{
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*grp;
	struct done		 d[5];
	uint8_t			*peer, *dst[5];
	size_t			 plen, len;
	int			 fd, i;
	pid_t			 pid;

	u = engine(NULL);
	pid = spawn(child_sender, &fd);
	assert_int_equal(swap_addr(fd, u, &peer, &plen), 0);
	grp = vcl_ucx_ep_open(u, NULL, 0, fail_cb, NULL);
	assert_non_null(grp);
	memset(d, 0, sizeof d);
	for (i = 0; i < 5; i++) {
		len = i == 4 ? 3 * MIB : sizes[i];
		dst[i] = calloc(1, len);
	}
	/* Out of order: the 4 MiB first, then the small one. */
	assert_non_null(vcl_ucx_recv(grp, 3, dst[2], sizes[2], done_cb, &d[2]));
	assert_non_null(vcl_ucx_recv(grp, 1, dst[0], sizes[0], done_cb, &d[0]));
	assert_int_equal(run_until(u, &d[2].n, 1), 0);
	assert_int_equal(run_until(u, &d[0].n, 1), 0);
	/* The rest arrived (or wait) unexpected: post them now. */
	assert_non_null(vcl_ucx_recv(grp, 5, dst[4], 3 * MIB, done_cb, &d[4]));
	assert_non_null(vcl_ucx_recv(grp, 4, dst[3], sizes[3], done_cb, &d[3]));
	assert_non_null(vcl_ucx_recv(grp, 2, dst[1], sizes[1], done_cb, &d[1]));
	for (i = 0; i < 5; i++) {
		assert_int_equal(run_until(u, &d[i].n, 1), 0);
		assert_int_equal(d[i].n, 1);
		assert_int_equal(d[i].status, 0);
		len = i == 4 ? 3 * MIB : sizes[i];
		assert_true(check(dst[i], len, (unsigned)i));
		free(dst[i]);
	}
	assert_int_equal(put(fd, "k", 1), 0);
	assert_int_equal(reap(pid), 0);
	vcl_ucx_ep_close(grp);
	vcl_ucx_free(u);
	free(peer);
	close(fd);
}

/* Child: send two 1000-byte messages, tags 10 and 11. */
static int
child_two(int fd)
{
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep;
	struct done		 d = { 0, 0 };
	struct iovec		 iov;
	uint8_t			*peer, buf[1000];
	size_t			 plen;
	char			 err[256];

	if ((u = vcl_ucx_create(NULL, err, sizeof err)) == NULL)
		return (2);
	if (swap_addr(fd, u, &peer, &plen) != 0)
		return (3);
	if ((ep = vcl_ucx_ep_open(u, peer, plen, fail_cb, NULL)) == NULL)
		return (4);
	memset(buf, 7, sizeof buf);
	iov.iov_base = buf;
	iov.iov_len = sizeof buf;
	if (vcl_ucx_send(ep, 10, &iov, 1, done_cb, &d) == NULL ||
	    vcl_ucx_send(ep, 11, &iov, 1, done_cb, &d) == NULL)
		return (5);
	run_until(u, &d.n, 2);
	get(fd, err, 1);
	vcl_ucx_ep_close(ep);
	vcl_ucx_free(u);
	return (0);
}

/* A message longer than the receive, or shorter, fails it. */
static void
test_wrong_size(void **state)
{
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*grp;
	struct done		 d[2];
	uint8_t			*peer, small[500], big[2000];
	size_t			 plen;
	int			 fd;
	pid_t			 pid;

	u = engine(NULL);
	pid = spawn(child_two, &fd);
	assert_int_equal(swap_addr(fd, u, &peer, &plen), 0);
	grp = vcl_ucx_ep_open(u, NULL, 0, NULL, NULL);
	memset(d, 0, sizeof d);
	memset(big, 0, sizeof big);
	assert_non_null(vcl_ucx_recv(grp, 10, small, sizeof small, done_cb,
	    &d[0]));
	assert_non_null(vcl_ucx_recv(grp, 11, big, sizeof big, done_cb,
	    &d[1]));
	assert_int_equal(run_until(u, &d[0].n, 1), 0);
	assert_int_equal(run_until(u, &d[1].n, 1), 0);
	assert_int_equal(d[0].status, -EMSGSIZE);
	assert_int_equal(d[1].status, -EPROTO);
	assert_int_equal(put(fd, "k", 1), 0);
	assert_int_equal(reap(pid), 0);
	vcl_ucx_ep_close(grp);
	vcl_ucx_free(u);
	free(peer);
	close(fd);
}

/* Past the engine's limits a receive is refused; cancelled ones end. */
static void
test_limits(void **state)
{
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*grp;
	struct vcl_ucx_limits	 lim = { 2, MIB };
	struct vcl_ucx_op	*op[2];
	struct done		 d = { 0, 0 };
	static uint8_t		 a[MIB], b[MIB];

	u = engine(&lim);
	grp = vcl_ucx_ep_open(u, NULL, 0, NULL, NULL);
	errno = 0;
	assert_null(vcl_ucx_recv(grp, 1, a, MIB + 1, done_cb, &d));
	assert_int_equal(errno, ENOBUFS);
	op[0] = vcl_ucx_recv(grp, 1, a, MIB / 2, done_cb, &d);
	assert_non_null(op[0]);
	errno = 0;
	assert_null(vcl_ucx_recv(grp, 2, b, MIB / 2 + 1, done_cb, &d));
	assert_int_equal(errno, ENOBUFS);
	op[1] = vcl_ucx_recv(grp, 2, b, MIB / 2, done_cb, &d);
	assert_non_null(op[1]);
	errno = 0;
	assert_null(vcl_ucx_recv(grp, 3, b, 1, done_cb, &d));
	assert_int_equal(errno, ENOBUFS);
	vcl_ucx_cancel(op[0]);
	assert_int_equal(run_until(u, &d.n, 1), 0);
	assert_int_equal(d.status, -ECANCELED);
	/* A slot is free again; closing the group ends the rest. */
	assert_non_null(vcl_ucx_recv(grp, 3, a, 1, done_cb, &d));
	vcl_ucx_ep_close(grp);
	assert_int_equal(d.n, 3);
	assert_int_equal(d.status, -ECANCELED);
	vcl_ucx_free(u);
}

/* Child: connect, say ready, then wait to be killed. */
static int
child_idle(int fd)
{
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep;
	uint8_t			*peer;
	size_t			 plen;
	char			 err[256];
	int			 never = 0;

	if ((u = vcl_ucx_create(NULL, err, sizeof err)) == NULL)
		return (2);
	if (swap_addr(fd, u, &peer, &plen) != 0)
		return (3);
	if ((ep = vcl_ucx_ep_open(u, peer, plen, fail_cb, NULL)) == NULL)
		return (4);
	put(fd, "r", 1);
	run_until(u, &never, 1);
	return (5);
}

/*
 * The receiver of a 64 MiB send vanishes: the send fails, the endpoint
 * reports its peer's failure, a receive in its group fails too.
 */
static void
test_peer_vanishes(void **state)
{
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep;
	struct done		 ds = { 0, 0 }, dr = { 0, 0 };
	struct iovec		 iov;
	uint8_t			*peer, *buf, r;
	size_t			 plen;
	int			 fd;
	pid_t			 pid;

	u = engine(NULL);
	pid = spawn(child_idle, &fd);
	assert_int_equal(swap_addr(fd, u, &peer, &plen), 0);
	failed_eps = 0;
	ep = vcl_ucx_ep_open(u, peer, plen, fail_cb, NULL);
	assert_non_null(ep);
	assert_int_equal(get(fd, &r, 1), 0);
	buf = calloc(1, 64 * MIB);
	iov.iov_base = buf;
	iov.iov_len = 64 * MIB;
	assert_non_null(vcl_ucx_send(ep, 30, &iov, 1, done_cb, &ds));
	assert_non_null(vcl_ucx_recv(ep, 31, buf, MIB, done_cb, &dr));
	kill(pid, SIGKILL);
	assert_int_equal(reap(pid), 128 + SIGKILL);
	assert_int_equal(run_until(u, &failed_eps, 1), 0);
	assert_int_equal(run_until(u, &ds.n, 1), 0);
	assert_int_equal(run_until(u, &dr.n, 1), 0);
	assert_true(ds.status < 0);
	assert_int_equal(dr.status, -ECONNRESET);
	assert_true(vcl_ucx_ep_failed(ep));
	errno = 0;
	assert_null(vcl_ucx_send(ep, 32, &iov, 1, done_cb, &ds));
	assert_int_equal(errno, ECONNRESET);
	vcl_ucx_ep_close(ep);
	vcl_ucx_free(u);
	free(buf);
	free(peer);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bulk_into_destination),
		cmocka_unit_test(test_wrong_size),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_peer_vanishes),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
