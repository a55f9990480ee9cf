/* hopsbench.c - Finish and 4 KiB ReadBuffer latency over the raw wire, two vclserver builds side by side. */

/*
 * usage: hopsbench VCLSERVER [OTHER_VCLSERVER]
 *
 * Starts one server of each build (the same one twice when only one is
 * given), opens a session on each with a queue and a 4 KiB buffer, and
 * times a Finish and a 4 KiB read on one, then on the other, HB_REPS
 * times: whatever else the machine does falls on both alike. Prints the
 * median and the 10th and 90th percentiles of each, and the fast replies
 * each server counted (Stats). A benchmark, not a test: it prints figures
 * and checks nothing about them.
 */

#include <time.h>

#include "rawproto.h"

#define HB_REPS		2000
#define HB_READ		4096

/* Microseconds on the monotonic clock. */
static double
hb_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e6 + ts.tv_nsec / 1e3);
}

/* qsort comparison of doubles. */
static int
hb_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return ((x > y) - (x < y));
}

/* Print one series' median and 10th and 90th percentiles. */
static void
hb_print(const char *what, const char *who, double *v, int n)
{
	qsort(v, n, sizeof *v, hb_cmp);
	printf("%-8s %-6s median %7.1f us  p10 %7.1f  p90 %7.1f\n", what, who,
	    v[n / 2], v[n / 10], v[n * 9 / 10]);
}

/* Finish on queue 2: its latency in us, or -1. */
static double
hb_finish(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Finish	m = VCL__FINISH__INIT;
	struct reply	rp;
	double		t0 = hb_now();

	m.queue = 2;
	r.call_case = VCL__REQUEST__CALL_FINISH;
	r.finish = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	t0 = rp.r->status == CL_SUCCESS ? hb_now() - t0 : -1;
	reply_free(&rp);
	return (t0);
}

/* A 4 KiB read of buffer 3: its latency in us, or -1. */
static double
hb_read(struct conn *c)
{
	struct reply	rp;
	double		t0 = hb_now();

	if (read_buffer(c, 2, 3, HB_READ, &rp) != 0)
		return (-1);
	t0 = rp.r->status == CL_SUCCESS && rp.bulk_len == HB_READ ?
	    hb_now() - t0 : -1;
	reply_free(&rp);
	return (t0);
}

/* Time both servers in turn and print the figures. */
static void
hb_run(void)
{
	static const char *const who[2] = { "A", "B" };
	const char	*path[2];
	struct srv	 sv[2];
	struct conn	 c[2];
	Vcl__StatsResult st;
	double		*fin[2], *rd[2], f, r;
	int		 i, k, rc = 0;

	path[0] = server_path;
	path[1] = client_path != NULL ? client_path : server_path;
	memset(sv, 0, sizeof sv);
	c[0].fd = c[1].fd = -1;
	for (k = 0; k < 2; k++) {
		fin[k] = calloc(HB_REPS, sizeof *fin[k]);
		rd[k] = calloc(HB_REPS, sizeof *rd[k]);
		if (fin[k] == NULL || rd[k] == NULL)
			rc = -1;
	}
	for (k = 0; k < 2 && rc == 0; k++) {
		server_path = path[k];
		if (!srv_start(&sv[k], "hopsbench_start", "127.0.0.1:0",
		    NULL)) {
			rc = -1;
			break;
		}
		rc |= conn_session(&c[k], &sv[k]);
		rc |= create_context(&c[k], 1) | create_queue(&c[k], 2, 1);
		rc |= create_buffer(&c[k], 3, 1, HB_READ, NULL, 0);
	}
	for (i = 0; i < HB_REPS && rc == 0; i++) {
		for (k = 0; k < 2 && rc == 0; k++) {
			f = hb_finish(&c[k]);
			r = hb_read(&c[k]);
			if (f < 0 || r < 0)
				rc = -1;
			fin[k][i] = f;
			rd[k][i] = r;
		}
	}
	if (check("hopsbench", rc == 0, "a server, a finish or a read failed"))
		for (k = 0; k < 2; k++) {
			printf("%s: %s\n", who[k], path[k]);
			hb_print("finish", who[k], fin[k], HB_REPS);
			hb_print("read 4K", who[k], rd[k], HB_REPS);
			if (stats(&c[k], &st) == 0)
				printf("%-8s %-6s %llu\n", "fast", who[k],
				    st.has_fast_replies ? (unsigned long long)
				    st.fast_replies : 0ull);
		}
	fflush(stdout);
	for (k = 0; k < 2; k++) {
		if (c[k].fd != -1)
			conn_close(&c[k]);
		if (sv[k].pid > 0)
			srv_stop(&sv[k], "hopsbench_exit");
		free(fin[k]);
		free(rd[k]);
	}
	server_path = path[0];
}

static const struct test tests[] = {
	{ "hopsbench",	hb_run,		300 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
