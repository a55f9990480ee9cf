/* adversary_test.c - what hostile sessions and peers make the server do. */

/*
 * usage: adversary_test VCLSERVER
 *
 * What one session holds for a while must not cost another session for
 * good. Checked here: a client's ring refused its pinning (the wrapper,
 * vcl_pin.c) only because another session's ring held --max-pinned is
 * pinned once that session is gone, at its next transfer (Stats
 * ring_pinned), with every byte exact. The harness is rawproto.c.
 */

#include <sys/mman.h>

#include "rawproto.h"
#include "vcl_shm.h"

#define SLOTS		RAW_RING_SLOTS
#define SLOT		RAW_RING_SLOT
#define RING		(VCL_SHM_PAGE + SLOTS * SLOT)
#define BUF		(2 * SLOT)

#define R_CTX		1
#define R_Q		2
#define R_MEM		3
#define R_BIG		4
#define BIG		(1u << 20)	/* a pinned staging block's size */

/* A shared WriteBuffer (ReadBuffer if !write) on R_Q/R_MEM: its status. */
static int
xfer(struct conn *c, int write, uint64_t off, uint32_t slot)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	w = VCL__WRITE_BUFFER__INIT;
	Vcl__ReadBuffer		rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;
	struct reply		rp;
	int			st;

	e.queue = R_Q;
	if (write) {
		w.q = &e;
		w.mem = R_MEM;
		w.offset = off;
		w.size = SLOT;
		w.has_shm_slot = 1;
		w.shm_slot = slot;
		r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
		r.write_buffer = &w;
	} else {
		rb.q = &e;
		rb.mem = R_MEM;
		rb.offset = off;
		rb.size = SLOT;
		rb.has_shm_slot = 1;
		rb.shm_slot = slot;
		r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
		r.read_buffer = &rb;
	}
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.bulk_len != 0 ? 2 : rp.r->status;
	reply_free(&rp);
	return (st);
}

/* Context, queue and a BUF-byte buffer (ids R_*). */
static int
objects(struct conn *c)
{
	return (create_context(c, R_CTX) != 0 || create_queue(c, R_Q,
	    R_CTX) != 0 || create_buffer(c, R_MEM, R_CTX, BUF, NULL, 0) != 0 ?
	    -1 : 0);
}

/* Two slots' pattern seed into the buffer and back: 0 if exact. */
static int
roundtrip(struct conn *c, struct raw_ring *rg, unsigned seed)
{
	size_t		i;
	unsigned	k;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < SLOT; i++)
			raw_ring_slot(rg, k)[i] = (uint8_t)(i * 5 + k * 11 + seed);
		if (xfer(c, 1, (uint64_t)k * SLOT, k) != CL_SUCCESS)
			return (-1);
	}
	for (k = 0; k < 2; k++) {
		memset(raw_ring_slot(rg, 3 - k), 0xee, SLOT);
		if (xfer(c, 0, (uint64_t)k * SLOT, 3 - k) != CL_SUCCESS)
			return (-1);
		for (i = 0; i < SLOT; i++)
			if (raw_ring_slot(rg, 3 - k)[i] !=
			    (uint8_t)(i * 5 + k * 11 + seed))
				return (-1);
	}
	return (0);
}

/* Poll Stats until ring_pinned is want; 0, or -1 with the last in *got. */
static int
wait_pinned(struct conn *c, uint64_t want, uint64_t *got)
{
	Vcl__StatsResult	st;
	int			i;

	*got = UINT64_MAX;
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, &st) != 0)
			return (-1);
		*got = st.has_ring_pinned ? st.ring_pinned : UINT64_MAX;
		if (*got == want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/*
 * --max-pinned holds one ring, and one session may take it all
 * (--max-pinned-session). Session a's ring takes it; b's is refused
 * (over the budget) while a lives; a goes; b's next transfers pin b's
 * ring. A refusal for the budget was remembered for the pair's life: b
 * stayed pageable although the budget was free.
 */
static void
test_pin_budget_back(void)
{
	static const char *const args[] = { "--max-pinned", "1028K",
	    "--max-pinned-session", "1028K", NULL };
	struct srv	 sv;
	struct conn	 a, b, w;
	struct raw_ring	 ra = { -1, MAP_FAILED }, rb = { -1, MAP_FAILED };
	uint64_t	 got = 0;
	int		 ok;

	_Static_assert(RING == 1028u << 10, "--max-pinned is one ring");
	a.fd = b.fd = w.fd = -1;
	if (!srv_start(&sv, "pin_budget_server", "127.0.0.1:0", args))
		return;
	if (!check("pin_budget_setup", conn_session(&a, &sv) == 0 &&
	    conn_session(&b, &sv) == 0 && conn_session(&w, &sv) == 0 &&
	    raw_ring_give(&ra, &a) == 0 && raw_ring_give(&rb, &b) == 0 &&
	    objects(&a) == 0 && objects(&b) == 0,
	    "no sessions, rings or objects"))
		goto out;
	ok = roundtrip(&a, &ra, 1) == 0 && wait_pinned(&w, RING, &got) == 0;
	check("pin_budget_first", ok, "the first ring: ring_pinned %llu",
	    (unsigned long long)got);
	ok = roundtrip(&b, &rb, 2) == 0 && wait_pinned(&w, RING, &got) == 0;
	check("pin_budget_second_refused", ok,
	    "the second ring over the budget: ring_pinned %llu",
	    (unsigned long long)got);
	conn_close(&a);
	ok = wait_pinned(&w, 0, &got) == 0;
	check("pin_budget_freed", ok, "ring_pinned %llu after the session "
	    "closed", (unsigned long long)got);
	ok = roundtrip(&b, &rb, 3) == 0 && wait_pinned(&w, RING, &got) == 0;
	check("pin_budget_back", ok, "the budget is free, yet the other "
	    "session's ring stays pageable: ring_pinned %llu",
	    (unsigned long long)got);
out:
	conn_close(&a);
	conn_close(&b);
	conn_close(&w);
	raw_ring_free(&ra);
	raw_ring_free(&rb);
	srv_stop(&sv, "pin_budget_server_stop");
}

/* An inband WriteBuffer of BIG bytes into R_BIG, then a Finish: its status. */
static int
write_big(struct conn *c)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__Request		f = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	w = VCL__WRITE_BUFFER__INIT;
	Vcl__Finish		fm = VCL__FINISH__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;
	struct reply		rp;
	uint8_t			*b;
	int			st = 1;

	if ((b = malloc(BIG)) == NULL)
		return (1);
	memset(b, 0x5a, BIG);
	e.queue = R_Q;
	w.q = &e;
	w.mem = R_BIG;
	w.offset = 0;
	w.size = BIG;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &w;
	fm.queue = R_Q;
	f.call_case = VCL__REQUEST__CALL_FINISH;
	f.finish = &fm;
	if (send_req(c, &r, b, BIG) == 0 && call(c, &f, NULL, 0, &rp) == 0) {
		st = rp.r->status;
		reply_free(&rp);
	}
	if (st != CL_SUCCESS)
		note("write of %u bytes: %d", BIG, st);
	free(b);
	return (st);
}

/*
 * Session a's write leaves a pinned staging block of BIG bytes free in
 * its context, for its next transfers (one session may take all of
 * --max-pinned here); with it, b's ring is over
 * --max-pinned. The free block goes for the ring. It stayed: only a's own
 * transfers took a's free blocks back, and b's ring stayed pageable while
 * a lived.
 */
static void
test_pin_idle_gives_way(void)
{
	static const char *const args[] = { "--max-pinned", "1028K",
	    "--max-pinned-session", "1028K", NULL };
	struct srv		 sv;
	struct conn		 a, b, w;
	struct raw_ring		 rb = { -1, MAP_FAILED };
	Vcl__StatsResult	 st;
	uint64_t		 got = 0;
	int			 i, ok = 0;

	a.fd = b.fd = w.fd = -1;
	if (!srv_start(&sv, "pin_idle_server", "127.0.0.1:0", args))
		return;
	if (!check("pin_idle_setup", conn_session(&a, &sv) == 0 &&
	    conn_session(&b, &sv) == 0 && conn_session(&w, &sv) == 0 &&
	    objects(&a) == 0 && create_buffer(&a, R_BIG, R_CTX, BIG, NULL,
	    0) == 0 && write_big(&a) == CL_SUCCESS && raw_ring_give(&rb, &b) ==
	    0 && objects(&b) == 0, "no sessions, ring, objects or write"))
		goto out;
	/* a's block is free once the loop completed a's write: poll. */
	for (i = 0; i < STATS_POLLS && !ok; i++) {
		if (roundtrip(&b, &rb, (unsigned)i) != 0)
			break;
		if (stats(&w, &st) != 0)
			break;
		got = st.has_ring_pinned ? st.ring_pinned : UINT64_MAX;
		if (!(ok = got == RING))
			poll_wait();
	}
	check("pin_idle_gives_way", ok, "another session's free staging "
	    "keeps the ring pageable: ring_pinned %llu",
	    (unsigned long long)got);
out:
	conn_close(&a);
	conn_close(&b);
	conn_close(&w);
	raw_ring_free(&rb);
	srv_stop(&sv, "pin_idle_server_stop");
}

/* Append v as a varint at p: its length. */
static size_t
put_varint(uint8_t *p, uint64_t v)
{
	size_t	n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return (n);
}

/*
 * Send a frame: Request{seq, ndrange{q{queue R_Q, wait ev (0: none)},
 * kernel 99, work_dim 1, global 1, nargs x KernelArg{index 0, VALUE}}},
 * encoded by hand: six bytes an argument, which protobuf-c unpacks into
 * a struct and a pointer of about a hundred bytes.
 */
static int
send_many_args(struct conn *c, size_t nargs, uint64_t ev)
{
	static const uint8_t	 arg[] = { 0x3a, 4, 0x08, 0, 0x10, 0 };
	uint8_t			 q[32], hd[64], *m;
	size_t			 nq = 0, nh = 0, body, off, i;
	int			 rc;

	q[nq++] = 0x08;					/* queue */
	nq += put_varint(q + nq, R_Q);
	if (ev != 0) {
		q[nq++] = 0x18;				/* wait */
		nq += put_varint(q + nq, ev);
	}
	body = 2 + nq + 2 + 2 + 2 + nargs * sizeof arg;
	hd[nh++] = 0x08;				/* seq */
	nh += put_varint(hd + nh, ++c->seq);
	hd[nh++] = 0xca;				/* ndrange: 25 */
	hd[nh++] = 0x01;
	nh += put_varint(hd + nh, body);
	hd[nh++] = 0x0a;				/* q */
	hd[nh++] = (uint8_t)nq;
	memcpy(hd + nh, q, nq);
	nh += nq;
	/* kernel 99, work_dim 1, global 1 */
	memcpy(hd + nh, "\x10\x63\x18\x01\x28\x01", 6);
	nh += 6;
	if ((m = malloc(VCL_FRAME_HDR_LEN + nh + nargs * sizeof arg)) == NULL)
		return (-1);
	vcl_frame_encode(m, (uint32_t)(nh + nargs * sizeof arg), 0);
	memcpy(m + VCL_FRAME_HDR_LEN, hd, nh);
	off = VCL_FRAME_HDR_LEN + nh;
	for (i = 0; i < nargs; i++, off += sizeof arg)
		memcpy(m + off, arg, sizeof arg);
	rc = send_raw(c, m, off);
	free(m);
	return (rc);
}

/* Finish{R_Q}: its status, 1 when the server closed the session. */
static int
finish(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Finish	f = VCL__FINISH__INIT;
	struct reply	rp;
	int		st;

	f.queue = R_Q;
	r.call_case = VCL__REQUEST__CALL_FINISH;
	r.finish = &f;
	if ((st = call(c, &r, NULL, 0, &rp)) != 0)
		return (st);
	st = rp.r->status;
	reply_free(&rp);
	return (st);
}

/* The server's peak resident bytes so far (VmHWM), 0 if unknown. */
static uint64_t
peak_rss(const struct srv *sv)
{
	char		 path[64], line[256];
	unsigned long	 kb = 0;
	FILE		*f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)sv->pid);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmHWM: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return ((uint64_t)kb << 10);
}

#define DEC_LIMIT	"64M"		/* --max-session-bytes */
#define DEC_ARGS	(1500u * 1000)	/* 9 MB sent, 140 MB decoded */

/*
 * A launch of DEC_ARGS arguments, nine megabytes on the wire, decodes
 * into well over the session's 64 MiB: the session is closed, not let
 * make the server allocate what it may not hold. It was decoded whole
 * (sixteen times its size: one 64 MiB frame made a gigabyte) and run.
 */
static void
test_decode_budget(void)
{
	static const char *const args[] = { "--max-session-bytes", DEC_LIMIT,
	    NULL };
	struct srv	 sv;
	struct conn	 c;
	int		 st;

	c.fd = -1;
	if (!srv_start(&sv, "decode_server", "127.0.0.1:0", args))
		return;
	if (!check("decode_setup", conn_session(&c, &sv) == 0 &&
	    create_context(&c, R_CTX) == 0 && create_queue(&c, R_Q,
	    R_CTX) == 0 && finish(&c) == CL_SUCCESS, "no session"))
		goto out;
	st = send_many_args(&c, DEC_ARGS, 0) != 0 ? 1 : finish(&c);
	note("server peak resident: %llu MiB",
	    (unsigned long long)(peak_rss(&sv) >> 20));
	check("decode_over_budget_closes", st == 1, "a request decoding "
	    "into more than the session may hold was taken (finish: %d)", st);
	check("decode_server_serves", srv_alive(&sv), "server died: %s",
	    srv_how(&sv));
out:
	conn_close(&c);
	srv_stop(&sv, "decode_server_stop");
}

#define HELD_ARGS	(300u * 1000)	/* 1.8 MB sent, 28 MB decoded */
#define R_UE		5

/*
 * Launches of HELD_ARGS arguments held behind a user event nobody sets:
 * each holds what it decoded, and is charged that. The third is over
 * the session's 64 MiB and closes it. Each was charged its size on the
 * wire, a sixteenth: a session held sixteen times its limit.
 */
static void
test_held_decoded(void)
{
	static const char *const args[] = { "--max-session-bytes", DEC_LIMIT,
	    NULL };
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	ue = VCL__CREATE_USER_EVENT__INIT;
	Vcl__StatsResult	st;
	struct srv		sv;
	struct conn		c;
	int			i, rc = 0;

	c.fd = -1;
	if (!srv_start(&sv, "held_server", "127.0.0.1:0", args))
		return;
	ue.id = R_UE;
	ue.context = R_CTX;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	if (!check("held_setup", conn_session(&c, &sv) == 0 &&
	    create_context(&c, R_CTX) == 0 && create_queue(&c, R_Q,
	    R_CTX) == 0 && send_req(&c, &r, NULL, 0) == 0 &&
	    finish(&c) == CL_SUCCESS, "no session"))
		goto out;
	for (i = 0; i < 3 && rc == 0; i++)
		rc = send_many_args(&c, HELD_ARGS, R_UE);
	/* Stats is answered at once, held requests or not. */
	rc = rc != 0 ? 1 : stats(&c, &st) != 0 ? 1 : 0;
	note("server peak resident: %llu MiB",
	    (unsigned long long)(peak_rss(&sv) >> 20));
	check("held_over_budget_closes", rc == 1, "held requests holding "
	    "more than the session's memory limit were taken");
	check("held_server_serves", srv_alive(&sv), "server died: %s",
	    srv_how(&sv));
out:
	conn_close(&c);
	srv_stop(&sv, "held_server_stop");
}

/* Read and drop one frame (its message; no bulk expected). */
static int
fake_drop(int fd)
{
	struct vcl_frame_limits	 lim = { 1u << 20, 0 };
	struct vcl_frame_hdr	 hdr;
	uint8_t			 h[VCL_FRAME_HDR_LEN], *msg;
	const char		*why;
	int			 rc;

	if (read_n(fd, h, sizeof h) != 0 ||
	    vcl_frame_decode(h, &lim, &hdr, &why) != 0 ||
	    (msg = malloc(hdr.msg_len + 1)) == NULL)
		return (-1);
	rc = read_n(fd, msg, hdr.msg_len);
	free(msg);
	return (rc);
}

/*
 * Be the other server of a's peer link (a's first connection to lfd):
 * greet, take its Hello, welcome it naming transport tp and why.
 */
static int
fake_peer(int lfd, const char *tp, const char *why)
{
	Vcl__ToClient		 tc = VCL__TO_CLIENT__INIT;
	Vcl__Greeting		 g = VCL__GREETING__INIT;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	Vcl__Welcome		 w = VCL__WELCOME__INIT;
	Vcl__TransportOffer	 o = VCL__TRANSPORT_OFFER__INIT;
	struct timeval		 tv = { RECV_TIMEOUT_S, 0 };
	struct pollfd		 pfd;
	uint8_t			 nonce[32];
	int			 fd, rc = -1;

	pfd.fd = lfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, RECV_TIMEOUT_S * 1000) != 1 ||
	    (fd = accept(lfd, NULL, NULL)) < 0)
		return (-1);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	memset(nonce, 7, sizeof nonce);
	g.version = VCL_PROTOCOL_VERSION;
	g.nonce.data = nonce;
	g.nonce.len = sizeof nonce;
	g.auth_required = 0;
	tc.greeting = &g;
	if (raw_fake_send(fd, &tc, 0, 0) != 0 || fake_drop(fd) != 0)
		goto out;
	o.name = (char *)tp;
	w.node_name = "fake";
	w.transport = &o;
	w.transport_why = (char *)why;
	r.seq = 1;
	r.status = CL_SUCCESS;
	r.result_case = VCL__REPLY__RESULT_WELCOME;
	r.welcome = &w;
	tc = (Vcl__ToClient)VCL__TO_CLIENT__INIT;
	tc.reply = &r;
	rc = raw_fake_send(fd, &tc, 0, 0);
out:
	if (rc != 0) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Whether s has a byte a terminal or a log line would take as control. */
static int
has_control(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return (1);
	return (0);
}

/*
 * The reason of c's server's ready peer link to addr, into why: 1, 0 when
 * there is none yet, -1.
 */
static int
link_why(struct conn *c, const char *addr, char *why, size_t len)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Stats		 m = VCL__STATS__INIT;
	const Vcl__StatsResult	*st;
	struct reply		 rp;
	size_t			 i;
	int			 found = 0;

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	if ((st = rp.r->stats) != NULL)
		for (i = 0; i < st->n_peer_links && !found; i++)
			if (strcmp(st->peer_links[i]->address, addr) == 0 &&
			    st->peer_links[i]->ready &&
			    st->peer_links[i]->why != NULL) {
				snprintf(why, len, "%s",
				    st->peer_links[i]->why);
				found = 1;
			}
	reply_free(&rp);
	return (found);
}

/*
 * A server that a's peer link reaches (a migration's destination) names
 * a transport of escape sequences and a line break in its Welcome. The
 * link's reason in a's Stats (what `vcl stats` prints) must be printable,
 * as the other end's own reason is made. It was the name as sent.
 */
static void
test_peer_words(void)
{
	static const char	 evil[] = "zz\n\033[2Jvclserver: forged";
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__MigrateOut		 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__PeerDest		 d = VCL__PEER_DEST__INIT;
	struct srv		 sv;
	struct conn		 c;
	char			 port[16], addr[64], why[160] = "";
	size_t			 i;
	int			 lfd, pfd = -1, k, found = 0, bad;

	c.fd = -1;
	if ((lfd = raw_fake_listen(port, sizeof port)) == -1) {
		check("peer_words_listen", 0, "%s", strerror(errno));
		return;
	}
	snprintf(addr, sizeof addr, "127.0.0.1:%s", port);
	if (!srv_start(&sv, "peer_words_server", "127.0.0.1:0", NULL))
		goto out;
	if (!check("peer_words_setup", conn_session(&c, &sv) == 0 &&
	    objects(&c) == 0 && finish(&c) == CL_SUCCESS, "no session"))
		goto out;
	d.addr = addr;
	d.session = 1;
	d.key = 2;
	mo.context = R_CTX;
	mo.mem = R_MEM;
	mo.size = 4096;
	mo.dest = &d;
	mo.transfer = 1;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	if (!check("peer_words_link", send_req(&c, &r, NULL, 0) == 0 &&
	    (pfd = fake_peer(lfd, evil, "fine")) != -1, "no peer link came"))
		goto out;
	/* The Welcome is read on a's loop: poll its Stats for the link. */
	for (k = 0; k < STATS_POLLS && (found = link_why(&c, addr, why,
	    sizeof why)) == 0; k++)
		poll_wait();
	check("peer_words_ready", found == 1, "no ready link to %s in Stats",
	    addr);
	bad = has_control(why);
	for (i = 0; why[i] != '\0'; i++)
		if ((unsigned char)why[i] < 0x20)
			why[i] = '?';
	check("peer_words_printable", found == 1 && !bad, "the link's reason "
	    "holds the peer's control bytes: %s", why);
out:
	if (pfd != -1)
		close(pfd);
	close(lfd);
	conn_close(&c);
	srv_stop(&sv, "peer_words_server_stop");
}

#define R_Q2		6
#define R_PROG		7
#define R_K		8
#define ORDER_ROUNDS	600
#define ORDER_SPIN	30000	/* steps of the kernel: tens of us */

static const char order_src[] =
	"__kernel void spin(__global uint *o, uint n)\n"
	"{ uint x = 1; for (uint i = 0; i < n; i++) x = x * 1103515245u +"
	" 12345u; o[0] = x; }\n";

/* BuildProgram{R_PROG} and CreateKernel{R_K, "spin"}: 0 or -1. */
static int
order_kernel(struct conn *c)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	b = VCL__BUILD_PROGRAM__INIT;
	Vcl__CreateKernel	k = VCL__CREATE_KERNEL__INIT;
	struct reply		rp;
	int			st;

	if (create_program(c, R_PROG, R_CTX, order_src) != 0)
		return (-1);
	b.program = R_PROG;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &b;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	st = rp.r->status;
	reply_free(&rp);
	k.id = R_K;
	k.program = R_PROG;
	k.name = "spin";
	r = (Vcl__Request)VCL__REQUEST__INIT;
	r.call_case = VCL__REQUEST__CALL_CREATE_KERNEL;
	r.create_kernel = &k;
	if (st != CL_SUCCESS || call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	st = rp.r->status;
	reply_free(&rp);
	return (st == CL_SUCCESS ? 0 : -1);
}

/* The spin kernel on R_Q, with event ev (asynchronous). */
static int
send_spin(struct conn *c, uint64_t ev)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__NDRange	 m = VCL__NDRANGE__INIT;
	Vcl__Enqueue	 e = VCL__ENQUEUE__INIT;
	Vcl__KernelArg	 a[2], *ap[2] = { &a[0], &a[1] };
	uint64_t	 g = 1;
	uint32_t	 n = ORDER_SPIN;

	vcl__kernel_arg__init(&a[0]);
	a[0].index = 0;
	a[0].type = VCL__KERNEL_ARG__TYPE__MEM;
	a[0].has_mem = 1;
	a[0].mem = R_MEM;
	vcl__kernel_arg__init(&a[1]);
	a[1].index = 1;
	a[1].type = VCL__KERNEL_ARG__TYPE__VALUE;
	a[1].has_value = 1;
	a[1].value.data = (uint8_t *)&n;
	a[1].value.len = sizeof n;
	e.queue = R_Q;
	e.has_event = 1;
	e.event = ev;
	m.q = &e;
	m.kernel = R_K;
	m.work_dim = 1;
	m.n_global = 1;
	m.global = &g;
	m.n_args = 2;
	m.args = ap;
	r.call_case = VCL__REQUEST__CALL_NDRANGE;
	r.ndrange = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * Read frames until the reply to seq; *seen is set when a Notify of ev
 * came on the way. 0, or what recv_msg said.
 */
static int
recv_until(struct conn *c, uint64_t seq, uint64_t ev, int *seen)
{
	struct reply	rp;
	size_t		i;
	int		n, rc = -1;

	for (n = 0; n < 100; n++) {
		if ((rc = recv_msg(c, &rp)) != 0)
			return (rc);
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev)
				*seen = 1;
		rc = rp.r != NULL && rp.r->seq == seq ? 0 : -1;
		reply_free(&rp);
		if (rc == 0)
			return (0);
	}
	return (-1);
}

/* Marker{R_Q2, wait ev}, no event of its own (asynchronous). */
static int
send_marker_after(struct conn *c, uint64_t *ev)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Marker	m = VCL__MARKER__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = R_Q2;
	e.n_wait = 1;
	e.wait = ev;
	m.q = &e;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * A kernel of tens of microseconds with event e on R_Q, then at once a
 * 4 KiB read on R_Q2 that runs after e: its wait list names e (queued 0),
 * or a marker of R_Q2 before it does (queued 1). e's Notify must come
 * before the read's reply (the client sees e complete once the read
 * is), round after round. The loop polled the read (--poll-us) from
 * before e ended until after the read did, while e's completion waited
 * in the done queue behind the poll: the read was told first. With
 * delay, e's completion reaches the loop that long after its claim
 * (VCL_TEST_FIRE_DELAY_US, as a runtime callback thread preempted between
 * the two), fewer rounds: the read, another queue's, was answered first
 * (1 round in 3000 under ASan and load without it).
 */
static void
notify_first(const char *name, int queued, const char *delay)
{
	static const char *const args[] = { "--poll-us", "1000", NULL };
	Vcl__Request		 r;
	Vcl__ReadBuffer		 rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 e = VCL__ENQUEUE__INIT;
	struct srv		 sv;
	struct conn		 c;
	uint64_t		 ev;
	char			 what[64];
	int			 k, seen, late = 0, rc = 0, rounds, up;
	cl_int			 st;

	c.fd = -1;
	rounds = delay != NULL ? 20 : ORDER_ROUNDS;
	/* The loop looks long enough to see each read done (1 ms). */
	snprintf(what, sizeof what, "%s_server", name);
	if (delay != NULL)
		setenv("VCL_TEST_FIRE_DELAY_US", delay, 1);
	up = srv_start(&sv, what, "127.0.0.1:0", args);
	unsetenv("VCL_TEST_FIRE_DELAY_US");
	if (!up)
		return;
	snprintf(what, sizeof what, "%s_setup", name);
	if (!check(what, conn_session(&c, &sv) == 0 && objects(&c) == 0 &&
	    create_queue(&c, R_Q2, R_CTX) == 0 && order_kernel(&c) == 0 &&
	    finish(&c) == CL_SUCCESS, "no session or kernel"))
		goto out;
	e.queue = R_Q2;
	if (!queued) {
		e.n_wait = 1;
		e.wait = &ev;
	}
	rb.q = &e;
	rb.mem = R_MEM;
	rb.offset = SLOT;
	rb.size = 4096;
	for (k = 0; k < rounds && rc == 0; k++) {
		ev = 1000 + (uint64_t)k;
		seen = 0;
		r = (Vcl__Request)VCL__REQUEST__INIT;
		r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
		r.read_buffer = &rb;
		if ((rc = send_spin(&c, ev)) != 0 ||
		    (queued && (rc = send_marker_after(&c, &ev)) != 0) ||
		    (rc = send_req(&c, &r, NULL, 0)) != 0 ||
		    (rc = recv_until(&c, c.seq, ev, &seen)) != 0)
			break;
		if (!seen) {
			late++;
			rc = wait_notify(&c, ev, &st);
		}
	}
	snprintf(what, sizeof what, "%s_rounds", name);
	check(what, rc == 0, "round %d of %d: no reply or Notify", k,
	    rounds);
	snprintf(what, sizeof what, "%s_notify_first", name);
	check(what, late == 0, "%d reads of %d answered before the Notify "
	    "of the event they ran after", late, k);
out:
	conn_close(&c);
	snprintf(what, sizeof what, "%s_server_stop", name);
	srv_stop(&sv, what);
}

/* The read's own wait list names the event. */
static void
test_notify_first(void)
{
	notify_first("order", 0, NULL);
}

/* The same, the kernel's completion late to the loop. */
static void
test_notify_first_late(void)
{
	notify_first("order_late", 0, "20000");
}

/* A marker of the read's queue waited on the event. */
static void
test_notify_first_queued(void)
{
	notify_first("order_queued", 1, NULL);
}

/* The same, the kernel's completion late to the loop. */
static void
test_notify_first_queued_late(void)
{
	notify_first("order_queued_late", 1, "20000");
}

static const struct test tests[] = {
	{ "pin_budget_back",	test_pin_budget_back,	60 },
	{ "pin_idle_gives_way",	test_pin_idle_gives_way, 60 },
	{ "decode_budget",	test_decode_budget,	60 },
	{ "held_decoded",	test_held_decoded,	60 },
	{ "peer_words",		test_peer_words,	60 },
	{ "notify_first",	test_notify_first,	60 },
	{ "notify_first_queued", test_notify_first_queued, 60 },
	{ "notify_first_late",	test_notify_first_late,	60 },
	{ "notify_first_queued_late", test_notify_first_queued_late, 60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
