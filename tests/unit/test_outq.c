/* test_outq.c - unit tests of the output queue's writes (vcl_outq.c). */
#include <sys/socket.h>
#include <sys/uio.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vcl.pb-c.h"
#include "vcl_frame.h"
#include "vcl_outq.h"
#include "vcl_tls.h"

#define BIG		(32u << 20)	/* a large read's reply */
#define WRITE_MAX	(1u << 20)	/* what one call may write, and ... */
#define HEAD_SLACK	(64u << 10)	/* ... frame heads beside it */

/* The receiving end: reads everything into got until the sender closes. */
struct drain {
	int	 fd;
	uint8_t	*got;
	size_t	 cap;
	size_t	 len;
};

static void *
drain_run(void *arg)
{
	struct drain	*d = arg;
	ssize_t		 n;

	while (d->len < d->cap) {
		n = read(d->fd, d->got + d->len, d->cap - d->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		d->len += (size_t)n;
	}
	return (NULL);
}

/* A loopback TCP pair: *s sends (non-blocking), *r receives. */
static void
tcp_pair(int *s, int *r)
{
	struct sockaddr_in	a;
	socklen_t		alen = sizeof a;
	int			l, one = 1;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((l = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &alen), 0);
	assert_true((*s = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(connect(*s, (struct sockaddr *)&a, sizeof a), 0);
	assert_true((*r = accept(l, NULL, NULL)) >= 0);
	close(l);
	(void)setsockopt(*s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	assert_int_equal(fcntl(*s, F_SETFL, fcntl(*s, F_GETFL) | O_NONBLOCK),
	    0);
}

static int	done_calls;

static void
count_done(void *arg)
{
	(void)arg;
	done_calls++;
}

/*
 * A reply of BIG bulk bytes and a small message behind it, to a reader
 * that keeps pace: no call writes more than it is given (and heads), so
 * the loop gets back between them; every byte arrives, in order, and the
 * bulk's owner hears once that it was sent.
 */
static void
test_outq_bounded(void **state)
{
	Vcl__ToClient	 tc = VCL__TO_CLIENT__INIT;
	struct vcl_outq	 q = TAILQ_HEAD_INITIALIZER(q);
	struct vcl_link	 link;
	struct drain	 d;
	struct pollfd	 p;
	pthread_t	 t;
	uint8_t		*bulk;
	uint64_t	 total = 0, q1, q2;
	ssize_t		 n, most = 0;
	size_t		 i, calls = 0;
	int		 s, r, empty = 0;

	(void)state;
	tcp_pair(&s, &r);
	vcl_link_init(&link, s);
	assert_non_null(bulk = malloc(BIG));
	for (i = 0; i < BIG; i++)
		bulk[i] = (uint8_t)(i * 2654435761u >> 13);
	tc.has_keepalive = 1;
	tc.keepalive = 1;
	done_calls = 0;
	q1 = vcl_outq_push(&q, &tc.base, bulk, BIG, count_done, NULL, NULL);
	q2 = vcl_outq_push(&q, &tc.base, NULL, 0, NULL, NULL, NULL);
	assert_true(q1 > BIG && q2 > 0);
	d.fd = r;
	d.cap = q1 + q2;
	d.len = 0;
	assert_non_null(d.got = malloc(d.cap));
	assert_int_equal(pthread_create(&t, NULL, drain_run, &d), 0);
	while (!empty) {
		n = vcl_outq_write(&q, &link, WRITE_MAX, &empty, NULL);
		assert_true(n >= 0);
		total += (uint64_t)n;
		calls++;
		if (n > most)
			most = n;
		if (!empty && n == 0) {
			p.fd = s;
			p.events = POLLOUT;
			(void)poll(&p, 1, 1000);
		}
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(total == q1 + q2);
	assert_true(most <= (ssize_t)(WRITE_MAX + HEAD_SLACK));
	assert_true(calls >= BIG / (WRITE_MAX + HEAD_SLACK));
	assert_int_equal(done_calls, 1);
	assert_true(d.len == q1 + q2);
	/* The first frame's head, its bulk, then the second frame. */
	assert_memory_equal(d.got + (q1 - BIG), bulk, BIG);
	assert_int_equal(d.got[0], 'V');
	assert_int_equal(d.got[q1], 'V');
	free(d.got);
	free(bulk);
	close(s);
	close(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outq_bounded),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
