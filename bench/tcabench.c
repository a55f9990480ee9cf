/* tcabench.c - drive the TCA library as the seeds measured PEACH2, print each figure beside the seed's. */

/*
 * Loads the TCA library the way the server does (vcl_tca_lib_load: the
 * vendor libtca.so, else the PEACH2 model) and runs, in a domain of its own:
 *   PIO one-way latency (seed 000 §3.2: stores to a region, the marker seen);
 *   a 255 x 4 KiB chain, host memory (seed 000 §3.1, fig. 6) and 4 x 4 KiB
 *     against it (fig. 8);
 *   GPU-to-GPU one-way by pingpong between two nodes one hop apart
 *     (PEACH2-Benchmarks pingpong: 8 B, 4 KiB, 512 KiB);
 *   the same pingpong split over four channels by measured weights against
 *     channel 0 alone, 1 KiB .. 1 MiB (seed 003 §5.2, §6.1).
 * Each figure is a median; the figure, the seed's value and their ratio are
 * printed, and the exit status is 1 when a checked figure is off by more
 * than 10% (-n: print only).
 */

#include <sys/wait.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tca_lib.h"

#define MAXB		(1024 * 1024)
#define NSIZES		11

static struct vcl_tca_lib	 L;
static int			 fails;
static int			 reps = 200;

/* Monotonic ns. */
static uint64_t
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* The median of n samples (sorted in place). */
static double
median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_u64);
	return ((double)v[n / 2]);
}

/* Die on a TCA error. */
static void
ck(tcaresult res, const char *what)
{
	if (res != TCA_SUCCESS) {
		fprintf(stderr, "tcabench: %s: %s\n", what,
		    vcl_tca_lib_error(&L, res));
		exit(2);
	}
}

/* Read or write exactly n bytes on a pipe. */
static void
xio(int fd, void *p, size_t n, int wr)
{
	unsigned char	*b = p;
	ssize_t		 r;

	while (n > 0) {
		r = wr ? write(fd, b, n) : read(fd, b, n);
		if (r <= 0) {
			fprintf(stderr, "tcabench: pipe: %s\n", strerror(errno));
			exit(2);
		}
		b += r;
		n -= (size_t)r;
	}
}

/* Join the domain as node; a buffer of kind registered with its handle. */
static unsigned char *
join(int node, tcaMemoryKind kind, tcaHandle *h)
{
	char		 n[8];
	void		*p;

	snprintf(n, sizeof n, "%d", node);
	setenv("VCL_TCA_NODE", n, 1);
	ck(L.init(), "tcaInit");
	ck(L.malloc(&p, MAXB, kind), "tcaMalloc");
	ck(L.create_handle(h, p, MAXB, kind), "tcaCreateHandle");
	memset(p, 0, MAXB);
	return (p);
}

/* The model's clock (tcaModelTime) or 0 with a library that has none. */
static uint64_t
mt(int what, int ch)
{
	return (L.model_time != NULL ? L.model_time(what, ch) : 0);
}

/*
 * Print one figure: the model's own timing (its timestamps: what the board
 * would show) and the wall clock of this host, against the seed's value;
 * check: count it when the model's figure is off by more than 10%. With the
 * vendor library there are no model timestamps and the wall clock counts.
 */
static void
row2(const char *name, double model, double wall, double seed,
    const char *unit, int check)
{
	double	v = L.model_time != NULL ? model : wall, r = v / seed;
	int	bad = check && (r < 0.9 || r > 1.1);

	printf("%-40s %9.3f %9.3f %9.3f %-5s %6.3f %s\n", name, v, wall, seed,
	    unit, r, check ? (bad ? "OFF" : "ok") : "-");
	fails += bad;
}

/* PIO one-way: stores of 8 bytes and a marker into a region, marker seen. */
static void
bench_pio(void)
{
	tcaHandle		 h;
	tcaPIO			 pio;
	volatile uint32_t	*mark;
	unsigned char		*buf;
	uint64_t		*t, *m, t0, v[2] = { 0, 0 };
	uint32_t		 i;
	int			 k, n = reps * 5;

	if (L.set_pio_region == NULL) {
		printf("PIO: not in this library\n");
		return;
	}
	buf = join(0, tcaMemoryCPU, &h);
	mark = (volatile uint32_t *)(void *)(buf + 8);
	ck(L.set_pio_region(&pio, &h, 0, 12), "tcaSetPIORegion");
	t = calloc((size_t)n, sizeof *t);
	m = calloc((size_t)n, sizeof *m);
	for (k = 0; k < n; k++) {
		i = (uint32_t)k + 1;
		t0 = now_ns();
		ck(L.send_pio(&pio, 0, v, 8), "tcaSendPIO");
		ck(L.send_pio(&pio, 8, &i, 4), "tcaSendPIO");
		ck(L.send_pio_commit(), "tcaSendPIOCommit");
		while (*mark != i)
			;
		t[k] = now_ns() - t0;
		m[k] = mt(4, 0) - mt(3, 0);
	}
	row2("PIO one-way latency", median(m, n), median(t, n), 782, "ns", 1);
	free(t);
	free(m);
	L.free(buf, tcaMemoryCPU);
}

/* A chain of n x len bytes within one host buffer; GB/s, model and wall. */
static void
chain_bw(tcaHandle *h, int n, size_t len, double *model, double *wall)
{
	tcaDesc		*d = L.desc_new();
	uint64_t	*t, *m, t0;
	size_t		 half = (size_t)n * len;
	int		 i, k;

	for (i = 0; i < n; i++)
		ck(L.desc_set_memcpy(d, h, (off_t)(half + (size_t)i * len), h,
		    (off_t)((size_t)i * len), len, 0, 0, 0),
		    "tcaDescSetMemcpy");
	ck(L.desc_set(d, 0), "tcaDescSet");
	t = calloc((size_t)reps, sizeof *t);
	m = calloc((size_t)reps, sizeof *m);
	for (k = 0; k < reps; k++) {
		t0 = now_ns();
		ck(L.start_dma_desc(0), "tcaStartDMADesc");
		ck(L.wait_dmac(0), "tcaWaitDMAC");
		t[k] = now_ns() - t0;
		m[k] = mt(1, 0) - mt(0, 0);
	}
	L.desc_free(d);
	*wall = (double)half / median(t, reps);
	*model = (double)half / median(m, reps);
	free(t);
	free(m);
}

/* Seed 000 fig. 6, 7 and 8: host-memory chains on one node. */
static void
bench_chain(void)
{
	tcaHandle	 h;
	void		*p;
	size_t		 len = 2 * 255 * 4096;
	double		 fm, fw, m, w;

	ck(L.malloc(&p, len, tcaMemoryCPU), "tcaMalloc");
	ck(L.create_handle(&h, p, len, tcaMemoryCPU), "tcaCreateHandle");
	memset(p, 1, len);
	chain_bw(&h, 255, 4096, &fm, &fw);
	row2("DMA 255 x 4 KiB chain, host (> 3.3)", fm, fw, 3.3, "GB/s", 0);
	if ((L.model_time != NULL ? fm : fw) <= 3.3) {
		printf("  OFF: not above 3.3 GB/s\n");
		fails++;
	}
	chain_bw(&h, 4, 4096, &m, &w);
	row2("DMA 4 x 4 KiB, share of 255 (fig. 8)", m / fm, w / fw, 0.775,
	    "", 0);
	chain_bw(&h, 1, 4096, &m, &w);
	row2("DMA 1 x 4 KiB, share of 255 (fig. 7)", m / fm, w / fw, 0.5, "",
	    0);
	L.free(p, tcaMemoryCPU);
}

/*
 * Pingpong between node 0 (this process) and node 1 (a child), GPU memory,
 * one hop. A message of n bytes goes on channel 0 alone (nch 1) or split
 * over four channels (nch 4) by weights each side adapts from measured
 * per-channel times (seed 003 §5.2: a few rounds, then the best split).
 * Every used channel notifies with its number as tag.
 */
struct pp {
	int		 node;
	int		 to, from;
	tcaHandle	 me, peer;
	unsigned char	*buf;
	double		 w[NSIZES][TCA_NCHANNELS];
};

/* Build and load one chain per channel for n bytes in parts. */
static void
pp_load(struct pp *p, size_t *part, int nch)
{
	tcaDesc	*d;
	size_t	 off = 0;
	int	 c;

	for (c = 0; c < nch; c++) {
		d = L.desc_new();
		ck(L.desc_set_memcpy(d, &p->peer, (off_t)off, &p->me,
		    (off_t)off, part[c], tcaDMANotify, 0, c), "tcaDescSetMemcpy");
		ck(L.desc_set(d, c), "tcaDescSet");
		L.desc_free(d);
		off += part[c];
	}
}

/*
 * Start the loaded channels; per-channel times from the first doorbell into
 * tc (ns, the model's when it has them); the first doorbell into *door.
 */
static void
pp_send(int nch, uint64_t *tc, uint64_t *door)
{
	uint64_t	 t0;
	int		 c, left;

	t0 = now_ns();
	for (c = 0; c < nch; c++)
		ck(L.start_dma_desc(c), "tcaStartDMADesc");
	if (L.test_dmac == NULL) {
		for (c = 0; c < nch; c++) {
			ck(L.wait_dmac(c), "tcaWaitDMAC");
			tc[c] = now_ns() - t0;
		}
		*door = t0;
		return;
	}
	for (c = 0; c < nch; c++)
		tc[c] = 0;
	for (left = nch; left > 0; ) {
		for (c = 0; c < nch; c++) {
			if (tc[c] == 0 && L.test_dmac(c) == TCA_SUCCESS) {
				tc[c] = now_ns() - t0;
				left--;
			}
		}
	}
	if (L.model_time == NULL) {
		*door = t0;
		return;
	}
	*door = mt(0, 0);
	for (c = 0; c < nch; c++)
		tc[c] = mt(1, c) - *door;
}

/* Wait for the nch notifications of one message; when it was all visible. */
static uint64_t
pp_recv(struct pp *p, int nch)
{
	uint64_t	vis = 0, v;
	int		c;

	for (c = 0; c < nch; c++) {
		ck(L.wait_dma_recv_desc(&p->peer, 0, c), "tcaWaitDMARecvDesc");
		v = L.model_time != NULL ? mt(2, 0) : now_ns();
		vis = v > vis ? v : vis;
	}
	return (vis);
}

/*
 * One size: rounds of adaptation (nch 4), then reps timed round trips.
 * Both sides run the same loop; node 0 times. Returns one-way ns.
 */
static double
pp_size(struct pp *p, int si, size_t n, int nch, double *wall)
{
	uint64_t	 tc[TCA_NCHANNELS], *t = NULL, t0, best = UINT64_MAX;
	uint64_t	*door, *vis, *pdoor, *pvis, *ow;
	double		*w = p->w[si], res = 0;
	double		 bestw[TCA_NCHANNELS];
	size_t		 part[TCA_NCHANNELS];
	int		 c, k, i, adapt = nch > 1 ? 12 : 0;

	for (c = 0; c < TCA_NCHANNELS; c++)
		bestw[c] = w[c];
	t = calloc((size_t)reps, sizeof *t);
	door = calloc((size_t)reps, sizeof *door);
	vis = calloc((size_t)reps, sizeof *vis);
	pdoor = calloc((size_t)reps, sizeof *pdoor);
	pvis = calloc((size_t)reps, sizeof *pvis);
	ow = calloc((size_t)reps * 2, sizeof *ow);
	for (k = 0; k < adapt + reps; k++) {
		if (k <= adapt) {
			vcl_tca_split(n, k < adapt ? w : bestw, nch, part);
			pp_load(p, part, nch);
		}
		t0 = now_ns();
		i = k >= adapt ? k - adapt : 0;
		if (p->node == 0) {
			pp_send(nch, tc, &door[i]);
			vis[i] = pp_recv(p, nch);
		} else {
			vis[i] = pp_recv(p, nch);
			pp_send(nch, tc, &door[i]);
		}
		if (k >= adapt) {
			t[i] = now_ns() - t0;
			continue;
		}
		/* Seed 003: weights follow each channel's bandwidth. */
		t0 = 0;
		for (c = 0; c < nch; c++)
			t0 = tc[c] > t0 ? tc[c] : t0;
		if (t0 < best) {
			best = t0;
			memcpy(bestw, w, sizeof bestw);
		}
		vcl_tca_weigh(part, tc, nch, w);
	}
	/* One-way: a message's visible time at the receiver less its
	 * doorbell at the sender, both directions. */
	if (p->node == 1) {
		xio(p->to, door, (size_t)reps * sizeof *door, 1);
		xio(p->to, vis, (size_t)reps * sizeof *vis, 1);
	} else {
		xio(p->from, pdoor, (size_t)reps * sizeof *pdoor, 0);
		xio(p->from, pvis, (size_t)reps * sizeof *pvis, 0);
		for (i = 0; i < reps; i++) {
			ow[2 * i] = pvis[i] - door[i];
			ow[2 * i + 1] = vis[i] - pdoor[i];
		}
		res = median(ow, 2 * reps);
		*wall = median(t, reps) / 2;
	}
	free(t);
	free(door);
	free(vis);
	free(pdoor);
	free(pvis);
	free(ow);
	return (res);
}

/* The pingpong runs of both nodes; node 0 prints. */
static void
pp_run(struct pp *p)
{
	static const size_t	sizes[NSIZES] = { 1024, 2048, 4096, 8192,
	    16384, 32768, 65536, 131072, 262144, 524288, 1048576 };
	static const double	w0[TCA_NCHANNELS] = { 2.9, 1.3, 0.7, 0.7 };
	double			one[NSIZES], four[NSIZES], gmax = 0, g;
	double			lo[3], low[3], w1[NSIZES], w4[NSIZES];
	size_t			small[3] = { 8, 4096, 524288 };
	int			i, c, at = 0, bad = 0;

	for (i = 0; i < NSIZES; i++) {
		for (c = 0; c < TCA_NCHANNELS; c++)
			p->w[i][c] = w0[c];
	}
	for (i = 0; i < 3; i++)
		lo[i] = pp_size(p, 0, small[i], 1, &low[i]);
	for (i = 0; i < NSIZES; i++) {
		one[i] = pp_size(p, i, sizes[i], 1, &w1[i]);
		four[i] = pp_size(p, i, sizes[i], 4, &w4[i]);
	}
	if (p->node != 0)
		return;
	row2("GPU-GPU one-way 8 B", lo[0] / 1000, low[0] / 1000, 2.0, "us",
	    1);
	row2("GPU-GPU one-way 4 KiB", lo[1] / 1000, low[1] / 1000, 3.5, "us",
	    1);
	row2("GPU-GPU one-way 512 KiB", lo[2] / 1000, low[2] / 1000, 204,
	    "us", 1);
	printf("\nfour channels split by measured weights against channel 0 "
	    "(seed 003 fig. 5), one-way\n%10s %10s %10s %8s %10s %10s\n",
	    "bytes", "ch0 us", "ch0-3 us", "gain", "wall ch0", "wall 0-3");
	for (i = 0; i < NSIZES; i++) {
		g = one[i] / four[i];
		printf("%10zu %10.3f %10.3f %8.3f %10.3f %10.3f%s\n", sizes[i],
		    one[i] / 1000, four[i] / 1000, g, w1[i] / 1000,
		    w4[i] / 1000, g > 1.05 ? " gain" : "");
		if (g > gmax) {
			gmax = g;
			at = i;
		}
		/* A gain (over 5%) only from 4 KiB to 64 KiB. */
		if (g > 1.05 && (sizes[i] < 4096 || sizes[i] > 65536))
			bad = 1;
		if (g <= 1.05 && sizes[i] >= 4096 && sizes[i] <= 65536)
			bad = 1;
	}
	row2("split gain at 8 KiB", one[3] / four[3], w1[3] / w4[3], 1.4, "x",
	    1);
	printf("%-44s %10zu %10d %-5s %6s %s\n", "size of the largest gain",
	    sizes[at], 8192, "B", "", sizes[at] == 8192 ? "ok" : "(near)");
	printf("%-44s %21s %12s %s\n", "gain only from 4 KiB to 64 KiB",
	    bad ? "no" : "yes", "", bad ? "OFF" : "ok");
	fails += bad;
}

/* Fork node 1, exchange handles, run the pingpongs on both. */
static void
bench_pingpong(void)
{
	struct pp	p;
	int		a[2], b[2], st;
	pid_t		pid;

	memset(&p, 0, sizeof p);
	if (pipe(a) == -1 || pipe(b) == -1)
		exit(2);
	fflush(stdout);
	if ((pid = fork()) == -1)
		exit(2);
	if (pid == 0) {
		if (L.finalize != NULL)
			L.finalize();
		p.node = 1;
		p.to = b[1];
		p.from = a[0];
	} else {
		p.to = a[1];
		p.from = b[0];
	}
	p.buf = join(p.node, tcaMemoryGPU, &p.me);
	xio(p.to, &p.me, sizeof p.me, 1);
	xio(p.from, &p.peer, sizeof p.peer, 0);
	pp_run(&p);
	if (pid == 0) {
		L.free(p.buf, tcaMemoryGPU);
		if (L.finalize != NULL)
			L.finalize();
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr, "tcabench: node 1 failed\n");
		fails++;
	}
	L.free(p.buf, tcaMemoryGPU);
}

int
main(int argc, char **argv)
{
	char	err[512], dom[32];
	int	ch, nocheck = 0;

	while ((ch = getopt(argc, argv, "nr:")) != -1) {
		switch (ch) {
		case 'n':
			nocheck = 1;
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: tcabench [-n] [-r reps]\n");
			return (2);
		}
	}
	if (reps < 5)
		reps = 5;
	if (vcl_tca_lib_load(&L, err, sizeof err) != 0) {
		fprintf(stderr, "tcabench: %s\n", err);
		return (2);
	}
	snprintf(dom, sizeof dom, "tcabench%d", (int)getpid());
	setenv("VCL_TCA_DOMAIN", dom, 0);
	printf("TCA library: %s (%s)\n\n%-40s %9s %9s %9s %-5s %6s\n",
	    L.path, L.model ? "PEACH2 model" : "vendor", "figure", "model",
	    "wall", "seed", "unit", "ratio");
	bench_pio();
	bench_chain();
	if (L.finalize != NULL)
		L.finalize();
	bench_pingpong();
	vcl_tca_lib_unload(&L);
	printf("\n%d figure(s) off by more than 10%%\n", fails);
	return (nocheck || fails == 0 ? 0 : 1);
}
