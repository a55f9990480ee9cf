/*
 * ucxbench.c - bandwidth of the UCX engine between two processes of this
 * host (shared memory / cross-memory attach, or what UCX_TLS allows),
 * 1-256 MiB, against this host's memcpy measured in the same run; each
 * figure is the best of a few repetitions, the ratio printed beside it.
 *
 *   ucxbench [-r REPS] [-m MAX_MIB]
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "vcl_ucx.h"

#define MIB	(1024 * 1024)

static int	done_n;
static int	done_status;

/* A completion. */
static void
done_cb(int status, void *arg)
{
	done_n++;
	if (status != 0)
		done_status = status;
}

/* Run the loop until done_n reaches want (errors end it too). */
static int
wait_done(struct vcl_ucx *u, int want)
{
	struct pollfd	pfd;

	while (done_n < want) {
		pfd.fd = vcl_ucx_fd(u);
		pfd.events = POLLIN;
		if (vcl_ucx_progress(u) == 0 && done_n < want)
			(void)poll(&pfd, 1, 1000);
	}
	return (done_status);
}

/* Now, in seconds. */
static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/* Write or read exactly len bytes. */
static int
xfer(int fd, void *buf, size_t len, int wr)
{
	uint8_t	*p = buf;
	ssize_t	 n;

	while (len > 0) {
		n = wr ? write(fd, p, len) : read(fd, p, len);
		if (n <= 0)
			return (-1);
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

/* Swap worker addresses over fd. */
static int
swap_addr(int fd, struct vcl_ucx *u, uint8_t **peer, size_t *plen)
{
	const void	*a;
	size_t		 alen;
	uint32_t	 len;

	vcl_ucx_address(u, &a, &alen);
	len = (uint32_t)alen;
	if (xfer(fd, &len, sizeof len, 1) || xfer(fd, (void *)a, alen, 1))
		return (-1);
	if (xfer(fd, &len, sizeof len, 0) || len > 65536)
		return (-1);
	if ((*peer = malloc(len)) == NULL || xfer(fd, *peer, len, 0))
		return (-1);
	*plen = len;
	return (0);
}

/* Best memcpy bandwidth (bytes/s) of len bytes over reps. */
static double
memcpy_bw(uint8_t *dst, const uint8_t *src, size_t len, int reps)
{
	double	t, best = 1e9;
	int	i;

	for (i = 0; i < reps; i++) {
		t = now();
		memcpy(dst, src, len);
		t = now() - t;
		if (t < best)
			best = t;
	}
	return ((double)len / best);
}

int
main(int argc, char **argv)
{
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep;
	struct iovec		 iov;
	uint8_t			*peer, *buf, *dst, c = 0;
	size_t			 plen, len, max = 256 * (size_t)MIB;
	double			 t, best, bw, mbw;
	char			 err[256];
	int			 sv[2], reps = 5, ch, i, child, want = 0;
	pid_t			 pid;

	while ((ch = getopt(argc, argv, "r:m:")) != -1) {
		switch (ch) {
		case 'r':
			reps = atoi(optarg);
			break;
		case 'm':
			max = (size_t)atoi(optarg) * MIB;
			break;
		default:
			fprintf(stderr, "usage: ucxbench [-r reps] [-m MiB]\n");
			return (1);
		}
	}
	if (reps < 1 || max < MIB)
		return (1);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return (1);
	if ((pid = fork()) < 0)
		return (1);
	child = pid == 0;
	close(sv[child ? 0 : 1]);
	if ((u = vcl_ucx_create(NULL, err, sizeof err)) == NULL) {
		fprintf(stderr, "ucxbench: %s\n", err);
		return (1);
	}
	if (swap_addr(sv[child], u, &peer, &plen) != 0 ||
	    (ep = vcl_ucx_ep_open(u, peer, plen, NULL, NULL)) == NULL) {
		fprintf(stderr, "ucxbench: cannot connect\n");
		return (1);
	}
	if ((buf = malloc(max)) == NULL || (dst = malloc(max)) == NULL)
		return (1);
	memset(buf, 1, max);
	memset(dst, 2, max);
	if (!child) {
		printf("# ucxbench: %s, UCX_TLS=%s, best of %d\n",
		    vcl_ucx_info(u), getenv("UCX_TLS") ? getenv("UCX_TLS") :
		    "(default)", reps);
		printf("%10s %12s %12s %8s\n", "MiB", "ucx MB/s", "memcpy MB/s",
		    "ratio");
	}
	for (len = MIB; len <= max; len *= 2) {
		best = 1e9;
		for (i = 0; i < reps; i++) {
			if (child) {
				/* Receiver: post, say ready, wait, say done. */
				if (vcl_ucx_recv(ep, len, dst, len, done_cb,
				    NULL) == NULL)
					return (1);
				if (xfer(sv[1], &c, 1, 1) ||
				    wait_done(u, ++want) != 0 ||
				    xfer(sv[1], &c, 1, 1))
					return (1);
				continue;
			}
			/* Sender: time from the post to the receiver's done. */
			if (xfer(sv[0], &c, 1, 0))
				return (1);
			t = now();
			iov.iov_base = buf;
			iov.iov_len = len;
			if (vcl_ucx_send(ep, len, &iov, 1, done_cb, NULL) ==
			    NULL || wait_done(u, ++want) != 0 ||
			    xfer(sv[0], &c, 1, 0))
				return (1);
			t = now() - t;
			if (t < best)
				best = t;
		}
		if (child)
			continue;
		bw = (double)len / best;
		mbw = memcpy_bw(dst, buf, len, reps);
		printf("%10zu %12.0f %12.0f %7.0f%%\n", len / MIB, bw / 1e6,
		    mbw / 1e6, 100 * bw / mbw);
		fflush(stdout);
	}
	vcl_ucx_ep_close(ep);
	vcl_ucx_free(u);
	if (!child)
		waitpid(pid, NULL, 0);
	return (0);
}
