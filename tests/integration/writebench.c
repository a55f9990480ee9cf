/* writebench.c - large WriteBuffers over the raw wire, whole against chunked: time to the finish behind each. */

/*
 * usage: writebench VCLSERVER [CLIENT]
 *
 * Starts two vclservers, one with --write-chunk 0 (the device copy starts
 * once the last byte is in) and one with 4M (chunks copied as their
 * bytes come; the default on 4 or more CPUs), and in turn on each sends
 * a WriteBuffer of 16 MiB, then of 256 MiB, with a Finish right behind
 * it, timing the Finish's
 * reply from the first byte sent (all) and from the last (tail). A
 * benchmark, not a test: it prints figures and checks nothing about them.
 */

#include <time.h>

#include "rawproto.h"

#define WB_MAX		(256u << 20)
#define WB_REPS		8

/* Milliseconds on the monotonic clock. */
static double
wb_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6);
}

/*
 * One write of n bytes of src into buffer 3 and a Finish: *all and *tail
 * in ms. Returns 0 or -1.
 */
static int
wb_write(struct conn *c, const uint8_t *src, uint64_t n, double *all,
    double *tail)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	 m = VCL__WRITE_BUFFER__INIT;
	Vcl__Enqueue		 e = VCL__ENQUEUE__INIT;
	Vcl__Finish		 f = VCL__FINISH__INIT;
	double			 t0, t1;

	e.queue = 2;
	m.q = &e;
	m.mem = 3;
	m.size = n;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &m;
	t0 = wb_now();
	if (send_req(c, &r, src, n) != 0)
		return (-1);
	t1 = wb_now();
	f.queue = 2;
	r = (Vcl__Request)VCL__REQUEST__INIT;
	r.call_case = VCL__REQUEST__CALL_FINISH;
	r.finish = &f;
	if (raw_status(c, &r) != CL_SUCCESS)
		return (-1);
	*all = wb_now() - t0;
	*tail = wb_now() - t1;
	return (0);
}

/* Time the writes on both servers in turn and print the means. */
static void
wb_run(void)
{
	static const char *const whole[] = { "--write-chunk", "0", NULL };
	static const char *const chunked[] = { "--write-chunk", "4M", NULL };
	static const char *const name[2] = { "whole  ", "chunked" };
	static const uint64_t	 size[2] = { 16u << 20, WB_MAX };
	struct srv	 sv[2];
	struct conn	 c[2];
	uint8_t		*src;
	double		 a, t, sa[2], st[2];
	int		 i, k, z, rc = 0;

	if ((src = malloc(WB_MAX)) == NULL)
		return;
	memset(src, 0x5a, WB_MAX);
	c[0].fd = c[1].fd = -1;
	if (!srv_start(&sv[0], "whole_server_start", "127.0.0.1:0", whole)) {
		free(src);
		return;
	}
	if (!srv_start(&sv[1], "chunked_server_start", "127.0.0.1:0",
	    chunked))
		goto out;
	for (k = 0; k < 2; k++) {
		rc |= conn_session(&c[k], &sv[k]);
		rc |= create_context(&c[k], 1) | create_queue(&c[k], 2, 1);
		rc |= create_buffer(&c[k], 3, 1, WB_MAX, NULL, 0);
		for (z = 0; z < 2 && rc == 0; z++)	/* warm the staging */
			rc |= wb_write(&c[k], src, size[z], &a, &t);
	}
	for (z = 0; z < 2 && rc == 0; z++) {
		sa[0] = sa[1] = st[0] = st[1] = 0;
		for (i = 0; i < WB_REPS && rc == 0; i++)
			for (k = 0; k < 2 && rc == 0; k++) {
				if ((rc = wb_write(&c[k], src, size[z], &a,
				    &t)) != 0)
					break;
				sa[k] += a;
				st[k] += t;
			}
		if (rc == 0)
			for (k = 0; k < 2; k++)
				printf("%3llu MiB %s mean of %d: all %7.2f ms "
				    "(%.2f GB/s), tail %6.2f ms\n",
				    (unsigned long long)(size[z] >> 20),
				    name[k], WB_REPS, sa[k] / WB_REPS,
				    size[z] / (sa[k] / WB_REPS) / 1e6,
				    st[k] / WB_REPS);
	}
	check("writes", rc == 0, "a write failed");
	fflush(stdout);
	conn_close(&c[1]);
	srv_stop(&sv[1], "chunked_server_exit");
out:
	conn_close(&c[0]);
	srv_stop(&sv[0], "whole_server_exit");
	free(src);
}

static const struct test tests[] = {
	{ "writebench",	wb_run,		300 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
