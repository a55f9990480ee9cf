/* readbench.c - one large ReadBuffer over the raw wire: time to the reply head and to its last byte, whole against chunked. */

/*
 * usage: readbench VCLSERVER [CLIENT]
 *
 * Starts two vclservers, one with --read-chunk 0 (the reply is sent once
 * the whole copy is in staging) and one with the default (chunks sent as
 * their copies complete), makes a 256 MiB buffer on each and times reads of
 * it in turn: the reply head's arrival and the last byte's. A benchmark,
 * not a test: it prints figures and checks nothing about them.
 */

#include <time.h>

#include "rawproto.h"

#define RB_SIZE		(256u << 20)
#define RB_REPS		8

/* Milliseconds on the monotonic clock. */
static double
rb_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6);
}

/* One read of buffer 3 into dst: *head and *all in ms. Returns 0 or -1. */
static int
rb_read(struct conn *c, uint8_t *dst, double *head, double *all)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer		 m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 e = VCL__ENQUEUE__INIT;
	struct vcl_frame_limits	 lim = { 64u << 20, 1ull << 32 };
	struct vcl_frame_hdr	 hdr;
	const char		*why;
	uint8_t			 h[VCL_FRAME_HDR_LEN], msg[256];
	double			 t0;

	e.queue = 2;
	m.q = &e;
	m.mem = 3;
	m.size = RB_SIZE;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	t0 = rb_now();
	if (send_req(c, &r, NULL, 0) != 0 || read_n(c->fd, h, sizeof h) != 0)
		return (-1);
	*head = rb_now() - t0;
	if (vcl_frame_decode(h, &lim, &hdr, &why) != 0 ||
	    hdr.msg_len > sizeof msg || read_n(c->fd, msg, hdr.msg_len) != 0 ||
	    hdr.bulk_len != RB_SIZE || read_n(c->fd, dst, RB_SIZE) != 0)
		return (-1);
	*all = rb_now() - t0;
	return (0);
}

/* Time the reads on both servers in turn and print the means. */
static void
rb_run(void)
{
	static const char *const whole[] = { "--read-chunk", "0", NULL };
	static const char *const name[2] = { "whole  ", "chunked" };
	struct srv	 sv[2];
	struct conn	 c[2];
	uint8_t		*dst;
	double		 h, a, sh[2] = { 0, 0 }, sa[2] = { 0, 0 };
	int		 i, k, rc = 0;

	if ((dst = malloc(RB_SIZE)) == NULL)
		return;
	c[0].fd = c[1].fd = -1;
	if (!srv_start(&sv[0], "whole_server_start", "127.0.0.1:0", whole)) {
		free(dst);
		return;
	}
	if (!srv_start(&sv[1], "chunked_server_start", "127.0.0.1:0", NULL))
		goto out;
	for (k = 0; k < 2; k++) {
		rc |= conn_session(&c[k], &sv[k]);
		rc |= create_context(&c[k], 1) | create_queue(&c[k], 2, 1);
		rc |= create_buffer(&c[k], 3, 1, RB_SIZE, NULL, 0);
		rc |= rb_read(&c[k], dst, &h, &a);	/* warm the staging */
	}
	for (i = 0; i < RB_REPS && rc == 0; i++) {
		for (k = 0; k < 2 && rc == 0; k++) {
			if ((rc = rb_read(&c[k], dst, &h, &a)) != 0)
				break;
			sh[k] += h;
			sa[k] += a;
			printf("%s %d: head %7.2f ms, all %7.2f ms (%.2f GB/s)\n",
			    name[k], i, h, a, RB_SIZE / a / 1e6);
		}
	}
	if (check("reads", rc == 0, "a read failed"))
		for (k = 0; k < 2; k++)
			printf("%s mean of %d: head %7.2f ms, all %7.2f ms "
			    "(%.2f GB/s)\n", name[k], RB_REPS, sh[k] / RB_REPS,
			    sa[k] / RB_REPS, RB_SIZE / (sa[k] / RB_REPS) / 1e6);
	fflush(stdout);
	conn_close(&c[1]);
	srv_stop(&sv[1], "chunked_server_exit");
out:
	conn_close(&c[0]);
	srv_stop(&sv[0], "whole_server_exit");
	free(dst);
}

static const struct test tests[] = {
	{ "readbench",	rb_run,		300 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
