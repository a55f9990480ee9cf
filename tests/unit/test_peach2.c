/* test_peach2.c - the PEACH2 model: every TCA rule, chains, notifications, PIO, peers. */

/*
 * The test process is node 0 of a domain of its own; a peer is a forked child
 * that leaves node 0 (tcaFinalize keeps its parent's segments) and joins as
 * node 1, registers a buffer filled with 0x5a, sends its handle down a pipe
 * and then serves commands. Every rule violation is checked for its result,
 * its rule and an untouched destination.
 */

#include <sys/wait.h>

#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tca_api.h"

#define BUF		65536
#define PEER_FILL	0x5a

struct peer {
	pid_t		pid;
	int		to;
	int		from;
	tcaHandle	h;
};

static unsigned char	*lbuf, *lbuf2;
static pid_t		 last_peer;	/* one a failed test left running */
static tcaHandle	 lh, lh2;

#define RULE(call, res, rule) do {					\
	assert_int_equal((call), (res));				\
	assert_int_equal(tcaGetLastRule(), (rule));			\
	assert_true(tcaGetLastErrorDetail()[0] != '\0');		\
} while (0)

/* Read or write exactly n bytes on a pipe; -1 on EOF or error. */
static int
xio(int fd, void *p, size_t n, int wr)
{
	unsigned char	*b = p;
	ssize_t		 r;

	while (n > 0) {
		r = wr ? write(fd, b, n) : read(fd, b, n);
		if (r <= 0)
			return (-1);
		b += r;
		n -= (size_t)r;
	}
	return (0);
}

/* The peer's command loop (in the child; never returns). */
static void
peer_serve(int in, int out, const char *model)
{
	tcaHandle	 h, ph;
	tcaDesc		*d;
	unsigned char	*buf, cmd;
	uint32_t	 a[3];
	int32_t		 rc;

	tcaFinalize();
	setenv("VCL_TCA_NODE", "1", 1);
	if (model != NULL)
		setenv("VCL_TCA_MODEL", model, 1);
	if (tcaInit() != TCA_SUCCESS ||
	    tcaMalloc((void **)&buf, BUF, tcaMemoryCPU) != TCA_SUCCESS ||
	    tcaCreateHandle(&h, buf, BUF, tcaMemoryCPU) != TCA_SUCCESS)
		_exit(2);
	memset(buf, PEER_FILL, BUF);
	if (xio(out, &h, sizeof h, 1) != 0 || xio(in, &ph, sizeof ph, 0) != 0)
		_exit(3);
	for (;;) {
		if (xio(in, &cmd, 1, 0) != 0)
			_exit(4);
		switch (cmd) {
		case 'R':	/* read back [a0, a0+a1) */
			if (xio(in, a, 8, 0) != 0 || a[0] > BUF ||
			    a[1] > BUF - a[0] ||
			    xio(out, buf + a[0], a[1], 1) != 0)
				_exit(5);
			break;
		case 'W':	/* DMA a1 bytes to parent offset a0, notify a2 */
			if (xio(in, a, 12, 0) != 0)
				_exit(6);
			d = tcaDescNew();
			rc = tcaDescSetMemcpy(d, &ph, a[0], &h, a[0], a[1],
			    tcaDMANotify, 0, (int)a[2]);
			if (rc == TCA_SUCCESS)
				rc = tcaDescSet(d, 0);
			if (rc == TCA_SUCCESS)
				rc = tcaStartDMADesc(0);
			if (rc == TCA_SUCCESS)
				rc = tcaWaitDMAC(0);
			tcaDescFree(d);
			if (xio(out, &rc, 4, 1) != 0)
				_exit(7);
			break;
		case 'X':	/* DMA the whole buffer (slow), exit at once */
			d = tcaDescNew();
			if (tcaDescSetMemcpy(d, &ph, 0, &h, 0, BUF,
			    tcaDMANotify, 1, 9) != TCA_SUCCESS ||
			    tcaDescSet(d, 0) != TCA_SUCCESS ||
			    tcaStartDMADesc(0) != TCA_SUCCESS)
				_exit(8);
			_exit(0);
		case 'N':	/* wait for notification (0, a0) from parent */
			if (xio(in, a, 4, 0) != 0)
				_exit(9);
			rc = tcaWaitDMARecvDesc(&ph, 0, (int)a[0]);
			if (xio(out, &rc, 4, 1) != 0)
				_exit(10);
			break;
		case 'Q':
			tcaFinalize();
			_exit(0);
		case 'E':	/* exit without a word */
			_exit(0);
		default:
			_exit(11);
		}
	}
}

/* Fork a peer (node 1); model: its VCL_TCA_MODEL or NULL. */
static void
peer_start(struct peer *p, const char *model)
{
	int	a[2], b[2];

	/* A failed test's peer still holds node 1: end it first. */
	if (last_peer > 0) {
		kill(last_peer, SIGKILL);
		waitpid(last_peer, NULL, 0);
		last_peer = 0;
	}
	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		close(a[1]);
		close(b[0]);
		peer_serve(a[0], b[1], model);
	}
	last_peer = p->pid;
	close(a[0]);
	close(b[1]);
	p->to = a[1];
	p->from = b[0];
	assert_int_equal(xio(p->from, &p->h, sizeof p->h, 0), 0);
	assert_int_equal(xio(p->to, &lh, sizeof lh, 1), 0);
}

/* Stop a peer with cmd ('Q' or 'E'); its exit status must be 0. */
static void
peer_stop(struct peer *p, char cmd)
{
	int	st;

	if (cmd != 0)
		assert_int_equal(xio(p->to, &cmd, 1, 1), 0);
	assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
	last_peer = 0;
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(p->to);
	close(p->from);
}

/* Does the peer's buffer hold only fill in [off, off+len)? */
static int
peer_untouched(struct peer *p, uint32_t off, uint32_t len)
{
	unsigned char	*b = malloc(len), cmd = 'R';
	uint32_t	 a[2] = { off, len }, i;
	int		 ok = 1;

	assert_non_null(b);
	assert_int_equal(xio(p->to, &cmd, 1, 1), 0);
	assert_int_equal(xio(p->to, a, 8, 1), 0);
	assert_int_equal(xio(p->from, b, len, 0), 0);
	for (i = 0; i < len; i++) {
		if (b[i] != PEER_FILL && ok) {
			fprintf(stderr, "peer byte %u is %#x\n", off + i, b[i]);
			ok = 0;
		}
	}
	free(b);
	return (ok);
}

/* Read the peer's buffer [off, off+len) into out. */
static void
peer_read(struct peer *p, uint32_t off, uint32_t len, void *out)
{
	unsigned char	cmd = 'R';
	uint32_t	a[2] = { off, len };

	assert_int_equal(xio(p->to, &cmd, 1, 1), 0);
	assert_int_equal(xio(p->to, a, 8, 1), 0);
	assert_int_equal(xio(p->from, out, len, 0), 0);
}

/* Is every byte of b[0..n) equal to v? */
static int
all(const unsigned char *b, size_t n, unsigned char v)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (b[i] != v)
			return (0);
	}
	return (1);
}

/* Load a chain into channel 0 and start it; the start's result. */
static tcaresult
start1(tcaDesc *d)
{
	tcaresult	res;

	if ((res = tcaDescSet(d, 0)) != TCA_SUCCESS)
		return (res);
	return (tcaStartDMADesc(0));
}

static int
setup(void **state)
{
	char	dom[32];

	snprintf(dom, sizeof dom, "ut%d", (int)getpid());
	setenv("VCL_TCA_DOMAIN", dom, 1);
	setenv("VCL_TCA_NODE", "0", 1);
	setenv("VCL_TCA_MODEL", "wait_ms=1500", 1);
	if (tcaInit() != TCA_SUCCESS ||
	    tcaMalloc((void **)&lbuf, BUF, tcaMemoryCPU) != TCA_SUCCESS ||
	    tcaMalloc((void **)&lbuf2, BUF, tcaMemoryGPU) != TCA_SUCCESS ||
	    tcaCreateHandle(&lh, lbuf, BUF, tcaMemoryCPU) != TCA_SUCCESS ||
	    tcaCreateHandle(&lh2, lbuf2, BUF, tcaMemoryGPU) != TCA_SUCCESS)
		return (-1);
	return (0);
}

static int
teardown(void **state)
{
	char	pat[64];
	glob_t	g;
	size_t	i;

	if (last_peer > 0) {
		kill(last_peer, SIGKILL);
		waitpid(last_peer, NULL, 0);
	}
	tcaFinalize();
	/* What a peer that exited without tcaFinalize left. */
	snprintf(pat, sizeof pat, "/dev/shm/vcl-tca-ut%d-*", (int)getpid());
	if (glob(pat, 0, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
		globfree(&g);
	}
	return (0);
}

/* Bad configuration and a node held by a live process are refused. */
static void
init_rules(void **state)
{
	tcaHandle	h;
	char		*p = malloc(64);

	assert_non_null(p);
	/* Memory tcaMalloc did not give gets no handle. */
	RULE(tcaCreateHandle(&h, p, 64, tcaMemoryCPU),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_UNREGISTERED);
	/* Nor a range running past a registered region. */
	RULE(tcaCreateHandle(&h, lbuf + BUF - 16, 32, tcaMemoryCPU),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_UNREGISTERED);
	RULE(tcaFree(p, tcaMemoryCPU), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_UNREGISTERED);
	free(p);
}

/* Write-only DMA: a chain whose source is the peer's memory is refused. */
static void
rule_remote_read(void **state)
{
	struct peer	 p;
	tcaDesc		*d = tcaDescNew();

	memset(lbuf, 0, 256);
	peer_start(&p, NULL);
	RULE(tcaDescSetMemcpy(d, &lh, 0, &p.h, 0, 256, tcaDMANotify, 0, 1),
	    TCA_ERROR_NOT_SUPPORTED, VCL_TCA_RULE_REMOTE_READ);
	RULE(tcaDescSet(d, 0), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_NO_CHAIN);
	assert_true(all(lbuf, 256, 0));
	peer_stop(&p, 'Q');
	tcaDescFree(d);
}

/* Lengths not a multiple of 4, disagreeing low bits, out-of-region ranges. */
static void
rule_length_align_region(void **state)
{
	struct peer	 p;
	tcaDesc		*d = tcaDescNew();

	memset(lbuf, 0x11, BUF);
	peer_start(&p, NULL);
	RULE(tcaDescSetMemcpy(d, &p.h, 0, &lh, 0, 6, 0, 0, 0),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_LENGTH);
	RULE(tcaDescSetMemcpy(d, &p.h, 0, &lh, 0, 0, 0, 0, 0),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_LENGTH);
	RULE(tcaDescSetMemcpy(d, &p.h, 0, &lh, 4, 64, 0, 0, 0),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ALIGN);
	RULE(tcaDescSetMemcpy(d, &p.h, 8, &lh, 20, 64, 0, 0, 0),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ALIGN);
	RULE(tcaDescSetMemcpy(d, &p.h, BUF - 16, &lh, 0, 32, 0, 0, 0),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_UNREGISTERED);
	RULE(tcaDescSetMemcpy(d, &p.h, 0, &lh, BUF, 16, 0, 0, 0),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_UNREGISTERED);
	RULE(tcaDescSetMemcpy(d, &p.h, (off_t)1 << 62, &lh, 0, 16, 0, 0, 0),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_UNREGISTERED);
	RULE(tcaDescSetMemcpy(d, &p.h, 0, &lh, 0, 16, tcaDMANotify,
	    TCA_NSLOTS, 0), TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_SLOT);
	/* 16-byte agreement, not equality, is the rule: this one is fine. */
	assert_int_equal(tcaDescSetMemcpy(d, &p.h, 16, &lh, 48, 64, 0, 0, 0),
	    TCA_SUCCESS);
	assert_true(peer_untouched(&p, 0, BUF));
	peer_stop(&p, 'Q');
	tcaDescFree(d);
}

/* Handle bytes that are not a handle of the domain. */
static void
rule_bad_handle(void **state)
{
	tcaHandle	 bad;
	tcaDesc		*d = tcaDescNew();

	memset(&bad, 0xa5, sizeof bad);
	RULE(tcaDescSetMemcpy(d, &bad, 0, &lh, 0, 16, 0, 0, 0),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_BAD_HANDLE);
	RULE(tcaWaitDMARecvDesc(&bad, 0, 0), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_BAD_HANDLE);
	/* A handle whose length (bytes 24..31 in the model) runs past its
	 * segment. */
	memcpy(&bad, &lh, sizeof bad);
	memset(bad.bytes + 24, 0xff, 8);
	RULE(tcaDescSetMemcpy(d, &lh2, 0, &bad, 0, 16, 0, 0, 0),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_BAD_HANDLE);
	tcaDescFree(d);
}

/* 255 descriptors in host memory, 16 in register mode, no more. */
static void
rule_chain_limit(void **state)
{
	tcaDesc	*d = tcaDescNew(), *r = tcaDescNew();
	int	 i;

	for (i = 0; i < TCA_CHAIN_MAX; i++)
		assert_int_equal(tcaDescSetMemcpy(d, &lh2, 16 * i, &lh,
		    16 * i, 16, 0, 0, 0), TCA_SUCCESS);
	RULE(tcaDescSetMemcpy(d, &lh2, 0, &lh, 0, 16, 0, 0, 0),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_CHAIN_LIMIT);
	for (i = 0; i < TCA_REG_CHAIN_MAX; i++)
		assert_int_equal(tcaDescSetMemcpy(r, &lh2, 16 * i, &lh,
		    16 * i, 16, tcaDMAUseInternal, 0, 0), TCA_SUCCESS);
	RULE(tcaDescSetMemcpy(r, &lh2, 0, &lh, 0, 16, tcaDMAUseInternal, 0,
	    0), TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_CHAIN_LIMIT);
	/* A block-stride transfer past the limit adds no row at all. */
	RULE(tcaDescSetMemcpy2D(r, &lh2, 0, 32, &lh, 0, 32, 16, 2,
	    tcaDMAUseInternal, 0, 0), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_CHAIN_LIMIT);
	tcaDescFree(d);
	tcaDescFree(r);
}

/* Channels 0..3 only; a channel restarted before confirmed idle is refused. */
static void
rule_channel_busy(void **state)
{
	tcaDesc	*d = tcaDescNew();

	memset(lbuf, 0x22, 256);
	memset(lbuf2, 0, 256);
	RULE(tcaStartDMADesc(4), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_CHANNEL);
	RULE(tcaStartDMADesc(-1), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_CHANNEL);
	RULE(tcaWaitDMAC(7), TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_CHANNEL);
	RULE(tcaStartDMADesc(3), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_NO_CHAIN);
	assert_int_equal(tcaDescSetMemcpy(d, &lh2, 0, &lh, 0, 256, 0, 0, 0),
	    TCA_SUCCESS);
	assert_int_equal(start1(d), TCA_SUCCESS);
	assert_true(all(lbuf2, 256, 0x22));
	/* Not confirmed: a restart moves nothing, even after its end. */
	memset(lbuf, 0x33, 256);
	RULE(tcaStartDMADesc(0), TCA_ERROR_BUSY, VCL_TCA_RULE_BUSY);
	RULE(tcaDescSet(d, 0), TCA_ERROR_BUSY, VCL_TCA_RULE_BUSY);
	assert_true(all(lbuf2, 256, 0x22));
	assert_int_equal(tcaWaitDMAC(0), TCA_SUCCESS);
	assert_int_equal(tcaStartDMADesc(0), TCA_SUCCESS);
	assert_int_equal(tcaWaitDMAC(0), TCA_SUCCESS);
	assert_true(all(lbuf2, 256, 0x33));
	tcaDescFree(d);
}

/* Registered memory freed after the chain was built: the start moves nothing. */
static void
rule_freed_memory(void **state)
{
	unsigned char	*tmp;
	tcaHandle	 th;
	tcaDesc		*d = tcaDescNew();

	assert_int_equal(tcaMalloc((void **)&tmp, 4096, tcaMemoryCPU),
	    TCA_SUCCESS);
	assert_int_equal(tcaCreateHandle(&th, tmp, 4096, tcaMemoryCPU),
	    TCA_SUCCESS);
	memset(lbuf2, 0, 512);
	memset(lbuf, 0x44, 512);
	/* The second descriptor's source goes away; the first must not run. */
	assert_int_equal(tcaDescSetMemcpy(d, &lh2, 0, &lh, 0, 256, 0, 0, 0),
	    TCA_SUCCESS);
	assert_int_equal(tcaDescSetMemcpy(d, &lh2, 256, &th, 0, 256, 0, 0,
	    0), TCA_SUCCESS);
	assert_int_equal(tcaDescSet(d, 1), TCA_SUCCESS);
	assert_int_equal(tcaFree(tmp, tcaMemoryCPU), TCA_SUCCESS);
	RULE(tcaStartDMADesc(1), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_UNREGISTERED);
	assert_true(all(lbuf2, 512, 0));
	tcaDescFree(d);
}

/* A chain lands in order, each transfer before its own notification. */
static void
chain_order_notify(void **state)
{
	tcaDesc	*d = tcaDescNew();
	int	 i;

	memset(lbuf2, 0, BUF);
	for (i = 0; i < 8; i++) {
		memset(lbuf + i * 4096, 0x60 + i, 4096);
		assert_int_equal(tcaDescSetMemcpy(d, &lh2, i * 4096, &lh,
		    i * 4096, 4096, tcaDMANotifySelf, 2, 100 + i),
		    TCA_SUCCESS);
	}
	/* Two 4-byte rows of a block-stride transfer, the last notifying. */
	memset(lbuf + 40000, 0x70, 64);
	assert_int_equal(tcaDescSetMemcpy2D(d, &lh2, 40000, 32, &lh, 40000,
	    32, 16, 2, tcaDMANotifySelf, 2, 200), TCA_SUCCESS);
	assert_int_equal(tcaDescSet(d, 2), TCA_SUCCESS);
	assert_int_equal(tcaStartDMADesc(2), TCA_SUCCESS);
	for (i = 0; i < 8; i++) {
		assert_int_equal(tcaWaitDMARecvDesc(&lh, 2, 100 + i),
		    TCA_SUCCESS);
		assert_true(all(lbuf2 + i * 4096, 4096, 0x60 + i));
	}
	assert_int_equal(tcaWaitDMARecvDesc(&lh, 2, 200), TCA_SUCCESS);
	assert_true(all(lbuf2 + 40000, 16, 0x70));
	assert_true(all(lbuf2 + 40016, 16, 0));
	assert_true(all(lbuf2 + 40032, 16, 0x70));
	assert_int_equal(tcaWaitDMAC(2), TCA_SUCCESS);
	tcaDescFree(d);
}

/* Two processes of one domain DMA into each other with notifications. */
static void
two_nodes(void **state)
{
	struct peer	 p;
	tcaDesc		*d = tcaDescNew();
	unsigned char	 cmd, got[4096];
	uint32_t	 a[3];
	int32_t		 rc;

	peer_start(&p, NULL);
	memset(lbuf, 0x77, 8192);
	/* Parent to peer, notified; the peer waits for it. */
	assert_int_equal(tcaDescSetMemcpy(d, &p.h, 4096, &lh, 4096, 4096,
	    tcaDMANotify, 0, 5), TCA_SUCCESS);
	assert_int_equal(start1(d), TCA_SUCCESS);
	cmd = 'N';
	a[0] = 5;
	assert_int_equal(xio(p.to, &cmd, 1, 1), 0);
	assert_int_equal(xio(p.to, a, 4, 1), 0);
	assert_int_equal(xio(p.from, &rc, 4, 0), 0);
	assert_int_equal(rc, TCA_SUCCESS);
	assert_int_equal(tcaWaitDMAC(0), TCA_SUCCESS);
	peer_read(&p, 4096, 4096, got);
	assert_true(all(got, 4096, 0x77));
	assert_true(peer_untouched(&p, 0, 4096));
	assert_true(peer_untouched(&p, 8192, BUF - 8192));
	/* Peer to parent. */
	memset(lbuf, 0, 8192);
	cmd = 'W';
	a[0] = 1024;
	a[1] = 2048;
	a[2] = 6;
	assert_int_equal(xio(p.to, &cmd, 1, 1), 0);
	assert_int_equal(xio(p.to, a, 12, 1), 0);
	assert_int_equal(tcaWaitDMARecvDesc(&p.h, 0, 6), TCA_SUCCESS);
	assert_true(all(lbuf + 1024, 2048, PEER_FILL));
	assert_true(all(lbuf, 1024, 0));
	assert_true(all(lbuf + 3072, 8192 - 3072, 0));
	assert_int_equal(xio(p.from, &rc, 4, 0), 0);
	assert_int_equal(rc, TCA_SUCCESS);
	peer_stop(&p, 'Q');
	tcaDescFree(d);
}

/* PIO into the peer's memory; outside the region nothing is stored. */
static void
pio(void **state)
{
	struct peer	 p;
	tcaPIO		 pi, unset;
	unsigned char	 msg[64], got[68];
	uint32_t	 marker = 0xfeedf00d;

	peer_start(&p, NULL);
	memset(msg, 0x12, sizeof msg);
	RULE(tcaSetPIORegion(&pi, &p.h, 2, 64), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_PIO);
	RULE(tcaSetPIORegion(&pi, &p.h, BUF - 64, 128),
	    TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_UNREGISTERED);
	assert_int_equal(tcaSetPIORegion(&pi, &p.h, 256, 68), TCA_SUCCESS);
	RULE(tcaSendPIO(&pi, 64, msg, 8), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_PIO);
	RULE(tcaSendPIO(&pi, 0, msg, 6), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_PIO);
	memset(&unset, 0, sizeof unset);
	RULE(tcaSendPIO(&unset, 0, msg, 8), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_PIO);
	assert_true(peer_untouched(&p, 0, BUF));
	assert_int_equal(tcaSendPIO(&pi, 0, msg, 64), TCA_SUCCESS);
	assert_int_equal(tcaSendPIO(&pi, 64, &marker, 4), TCA_SUCCESS);
	assert_int_equal(tcaSendPIOCommit(), TCA_SUCCESS);
	peer_read(&p, 256, 68, got);
	assert_true(all(got, 64, 0x12));
	assert_memory_equal(got + 64, &marker, 4);
	assert_true(peer_untouched(&p, 0, 256));
	assert_true(peer_untouched(&p, 324, BUF - 324));
	peer_stop(&p, 'Q');
}

/*
 * A peer exits mid-chain: what it started still lands and notifies (the
 * board runs the chain); a wait for what it never sent ends at once, and a
 * chain that would notify it is refused whole.
 */
static void
peer_exits(void **state)
{
	struct peer	 p;
	struct timespec	 t0, t1;
	tcaDesc		*d = tcaDescNew();
	unsigned char	 cmd = 'X';

	/* 64 KiB at 0.02 GB/s: the chain runs some 3 ms after exit. */
	peer_start(&p, "cpu0=0.02");
	memset(lbuf, 0, BUF);
	assert_int_equal(xio(p.to, &cmd, 1, 1), 0);
	peer_stop(&p, 0);
	assert_int_equal(tcaWaitDMARecvDesc(&p.h, 1, 9), TCA_SUCCESS);
	assert_true(all(lbuf, BUF, PEER_FILL));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	RULE(tcaWaitDMARecvDesc(&p.h, 1, 10), TCA_ERROR_TIMEOUT,
	    VCL_TCA_RULE_PEER_GONE);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Ended on the peer's exit, not at the 1.5 s bound. */
	assert_true(t1.tv_sec - t0.tv_sec < 1 || (t1.tv_sec - t0.tv_sec == 1 &&
	    t1.tv_nsec < t0.tv_nsec));
	memset(lbuf, 0x99, 64);
	assert_int_equal(tcaDescSetMemcpy(d, &p.h, 0, &lh, 0, 64,
	    tcaDMANotify, 0, 1), TCA_SUCCESS);
	RULE(start1(d), TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_PEER_GONE);
	tcaDescFree(d);
}

/* A wait for a notification nobody sends ends at the bound. */
static void
wait_bounded(void **state)
{
	struct peer	p;

	peer_start(&p, NULL);
	RULE(tcaWaitDMARecvDesc(&lh, 3, 77), TCA_ERROR_TIMEOUT,
	    VCL_TCA_RULE_TIMEOUT);
	RULE(tcaWaitDMARecvDesc(&lh, TCA_NSLOTS, 0), TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_SLOT);
	peer_stop(&p, 'Q');
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(init_rules),
		cmocka_unit_test(rule_remote_read),
		cmocka_unit_test(rule_length_align_region),
		cmocka_unit_test(rule_bad_handle),
		cmocka_unit_test(rule_chain_limit),
		cmocka_unit_test(rule_channel_busy),
		cmocka_unit_test(rule_freed_memory),
		cmocka_unit_test(chain_order_notify),
		cmocka_unit_test(two_nodes),
		cmocka_unit_test(pio),
		cmocka_unit_test(peer_exits),
		cmocka_unit_test(wait_bounded),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
