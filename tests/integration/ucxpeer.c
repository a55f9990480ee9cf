/*
 * ucxpeer.c - what the raw tests that act as a UCX peer of a vclserver
 * share: their worker must keep progressing while they wait on the
 * server (UCX may need this end to answer before the server's receive
 * completes), and their waits are bounded by the clock, not by turns.
 */
#include <poll.h>
#include <time.h>

#include "ucxpeer.h"

/* Milliseconds on the monotonic clock. */
int64_t
ucxpeer_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/*
 * Progress the worker and wait (at most POLL_MS) for its fd or, if c is
 * given, for c. Returns 1 when c is readable. The worker's fd may stay
 * readable while a rendezvous waits on the other end, so a turn may
 * return at once: callers bound their waits by the clock.
 */
int
ucxpeer_turn(struct vcl_ucx *u, struct conn *c)
{
	struct pollfd	pfd[2];
	int		n = 1;

	if (vcl_ucx_progress(u) != 0)
		return (0);
	pfd[0].fd = vcl_ucx_fd(u);
	pfd[0].events = POLLIN;
	pfd[0].revents = 0;
	if (c != NULL) {
		pfd[1].fd = c->fd;
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		n = 2;
	}
	if (poll(pfd, (nfds_t)n, POLL_MS) <= 0)
		return (0);
	return (c != NULL && pfd[1].revents != 0);
}

/* wait_notify for c while the worker u keeps progressing. */
int
ucxpeer_wait_notify(struct vcl_ucx *u, struct conn *c, uint64_t ev,
    cl_int *st)
{
	struct reply	rp;
	int64_t		end = ucxpeer_now_ms() + UCXPEER_WAIT_S * 1000;
	size_t		i;
	int		found = 0;

	while (!found && ucxpeer_now_ms() < end) {
		if (!ucxpeer_turn(u, c))
			continue;
		if (recv_msg(c, &rp) != 0)
			return (-1);
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev) {
				*st = rp.tc->notify[i]->status;
				found = 1;
			}
		reply_free(&rp);
	}
	return (found ? 0 : -1);
}
