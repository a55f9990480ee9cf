/*
 * peerwire_test.c - a hostile peer server on a ucx link in direct mode.
 * This process speaks the ucx backend's placement messages (ucx_tp.c) to
 * a real vclserver, as the source of its migrations, and breaks the
 * protocol: SOURCE and NOSOURCE no PULL asked for (stale, foreign, for
 * another session's transfer), a SOURCE the server cannot read (memory
 * not readable, half readable, a length not the transfer's, an address
 * that wraps, a second one while the first is read), a PULL it never
 * answers, and a ring of a third process named as its own; and as the
 * destination of its migrations, asking them wrongly (a PULL or an OFFER
 * of the wrong length or place). Each time the server lives on, writes
 * nothing outside the destination's range, fails the client's migration
 * with CL_DEVICE_NOT_AVAILABLE (as a lost link), and holds nothing once
 * the sessions went; where the link stays up, its next transfer lands.
 */
#include <sys/mman.h>

#include "rawproto.h"
#include "ucxpeer.h"
#include "vcl_buf.h"
#include "vcl_io.h"

#define MIB		(1u << 20)
#define BUF_BYTES	(3 * MIB)
#define SIZE		(2 * MIB)
#define OFF		(4096 + 12)	/* the range in the buffer */
#define GUARD		0xeeeeeeeeu
#define HELD_SIZE	(40 * MIB)	/* held: 32 MiB or more */

/* The word at index i of a buffer filled with seed. */
static uint32_t
word(uint32_t seed, size_t i)
{
	return ((uint32_t)i * 2654435761u ^ seed);
}

/* A buffer of n bytes (a multiple of 4) filled with seed's words. */
static uint32_t *
words(uint32_t seed, size_t n)
{
	uint32_t	*w;
	size_t		 i;

	if ((w = malloc(n)) == NULL)
		return (NULL);
	for (i = 0; i < n / 4; i++)
		w[i] = word(seed, i);
	return (w);
}

/* Poll (bounded) until s's stderr has what. 1: it has. */
static int
log_has(const struct srv *s, const char *what)
{
	int	i;

	for (i = 0; i < READY_POLLS; i++) {
		if (srv_stderr_has(s, what))
			return (1);
		poll_wait();
	}
	return (0);
}

/*
 * Start a server on ucx in direct mode (more: options of its own, up to
 * 4 words); hold, when set, holds its pulls of 32 MiB or more until the
 * file it names exists.
 */
static int
start(struct srv *sv, const char *name, const char *hold,
    const char *const *more)
{
	const char	*x[8] = { "--transport-force", "ucx", NULL };
	int		 ok, i;

	for (i = 0; more != NULL && more[i] != NULL && i < 4; i++)
		x[2 + i] = more[i];
	setenv("VCL_UCX_DIRECT", "1", 1);
	if (hold != NULL) {
		setenv("VCL_TEST_DIRECT_HOLD", "33554432", 1);
		setenv("VCL_TEST_DIRECT_HOLD_FILE", hold, 1);
	}
	ok = srv_start(sv, name, "127.0.0.1:0", x);
	unsetenv("VCL_TEST_DIRECT_HOLD");
	unsetenv("VCL_TEST_DIRECT_HOLD_FILE");
	return (ok);
}

/*
 * A client session on sv with buffer 3 of n bytes, every word GUARD.
 * 0 or -1.
 */
static int
dest_open(struct conn *c, const struct srv *sv, uint64_t *sid, uint64_t *key,
    size_t n)
{
	uint8_t	*g;
	int	 rc = -1;

	if ((g = malloc(n)) == NULL)
		return (-1);
	memset(g, 0xee, n);
	if (client_open(c, sv, sid, key) == 0 && create_buffer(c, 3, 1, n, g,
	    n) == 0)
		rc = 0;
	free(g);
	return (rc);
}

/* MigrateIn of size bytes into buffer 3 at OFF, as transfer xfer. */
static int
mig_in(struct conn *c, uint64_t ev, uint64_t size, uint64_t xfer)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__MigrateIn	mi = VCL__MIGRATE_IN__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;
	Vcl__StatsResult st;

	q.queue = 2;
	q.has_event = 1;
	q.event = ev;
	mi.q = &q;
	mi.mem = 3;
	mi.offset = OFF;
	mi.size = size;
	mi.transfer = xfer;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	r.migrate_in = &mi;
	/* A round trip: the transfer waits before its push comes. */
	if (send_req(c, &r, NULL, 0) != 0 || stats(c, &st) != 0)
		return (-1);
	return (0);
}

/*
 * Buffer 3 of c (n bytes): GUARD outside [OFF, OFF + size); inside, the
 * words of seed, or (any set) zeros or GUARD where the transfer failed.
 */
static void
check_range(const char *name, struct conn *c, size_t n, size_t size,
    uint32_t seed, int any)
{
	struct reply	 rp;
	const uint32_t	*w;
	size_t		 i, bad = n / 4;
	uint32_t	 want = 0;

	if (!check(name, read_buffer(c, 2, 3, n, &rp) == 0 &&
	    rp.r->status == CL_SUCCESS && rp.bulk_len == n, "no read"))
		return;
	w = (const uint32_t *)rp.bulk;
	for (i = 0; i < n / 4 && bad == n / 4; i++) {
		if (i < OFF / 4 || i >= (OFF + size) / 4)
			want = GUARD;
		else
			want = word(seed, i - OFF / 4);
		if (w[i] != want && !(any && i >= OFF / 4 && i < (OFF +
		    size) / 4 && (w[i] == 0 || w[i] == GUARD)))
			bad = i;
	}
	check(name, bad == n / 4, "byte %zu is %08x, want %08x%s (%s)",
	    bad * 4, bad < n / 4 ? w[bad] : 0, bad < n / 4 ? (bad < OFF / 4 ||
	    bad >= (OFF + size) / 4 ? GUARD : word(seed, bad - OFF / 4)) : 0,
	    any ? " or nothing" : "", bad < OFF / 4 || bad >= (OFF + size) / 4 ?
	    "outside the range" : "inside it");
	reply_free(&rp);
}

/*
 * The server's next message but the ends (DONE, ABORT) of transfers
 * other than xid, which may come first. 0 or -1.
 */
static int
recv_next(struct ucxpeer_link *pe, uint64_t xid, struct ucxpeer_msg *m)
{
	int	i;

	for (i = 0; i < 16; i++) {
		if (ucxpeer_link_recv(pe, m) != 0)
			return (-1);
		if ((m->type != UCXPEER_DONE && m->type != UCXPEER_ABORT) ||
		    m->xid == (xid | UCXPEER_PLACE))
			return (0);
	}
	return (-1);
}

/*
 * Push size bytes as xid into session sid/key's transfer xfer: the
 * head, the server's PULL, our SOURCE naming len bytes at addr. 0 or -1.
 */
static int
push_pulled(struct ucxpeer_link *pe, uint64_t sid, uint64_t key,
    uint64_t xfer, uint64_t xid, uint64_t size, uint64_t addr, uint64_t len)
{
	struct ucxpeer_msg	m;

	memset(&m, 0, sizeof m);
	if (ucxpeer_link_push(pe, sid, key, xfer, xid, size) != 0 ||
	    recv_next(pe, xid, &m) != 0 || m.type != UCXPEER_PULL ||
	    m.xid != (xid | UCXPEER_PLACE) || m.len != size) {
		note("no PULL of %llu for %llu (type %u, xid %llx, len %llu)",
		    (unsigned long long)size, (unsigned long long)xid, m.type,
		    (unsigned long long)m.xid, (unsigned long long)m.len);
		return (-1);
	}
	return (ucxpeer_link_send(pe, UCXPEER_SOURCE, xid | UCXPEER_PLACE,
	    addr, len, NULL));
}

/* Close c and pe; nothing may stay held on sv, which must live. */
static void
check_clean(const char *name, struct srv *sv, struct conn *c,
    struct ucxpeer_link *pe)
{
	Vcl__StatsResult	st;
	struct conn		cw;
	char			what[64];

	cw.fd = -1;
	conn_close(c);
	ucxpeer_link_close(pe);
	snprintf(what, sizeof what, "%s_nothing_held", name);
	check(what, conn_session(&cw, sv) == 0 && wait_empty(&cw, &st) == 0,
	    "objects %llu, bytes %llu held", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
	conn_close(&cw);
	snprintf(what, sizeof what, "%s_server_alive", name);
	check(what, srv_alive(sv), "%s", srv_how(sv));
}

/*
 * SOURCE and NOSOURCE that answer no PULL: before any push (nothing
 * served), for a transfer not served now (another session's, still
 * queued behind), for one never announced, for one already done. They
 * are ignored: the link stays up and both sessions' transfers land
 * whole. A PULL for a transfer the server does not send is answered
 * NOSOURCE.
 */
static void
test_unsolicited(void)
{
	struct srv		 b;
	struct conn		 c1, c2;
	struct ucxpeer_link	 pe;
	struct ucxpeer_msg	 m;
	uint64_t		 sid1 = 0, key1 = 0, sid2 = 0, key2 = 0;
	uint64_t		 x5 = 5 | UCXPEER_PLACE, x6 = 6 | UCXPEER_PLACE;
	uint32_t		*s1 = NULL, *s2 = NULL;
	cl_int			 st1 = 1, st2 = 1;

	c1.fd = c2.fd = -1;
	ucxpeer_link_init(&pe);
	memset(&m, 0, sizeof m);
	if (!start(&b, "unsolicited_server", NULL, NULL))
		return;
	if (!check("unsolicited_setup", (s1 = words(1, SIZE)) != NULL &&
	    (s2 = words(2, SIZE)) != NULL && dest_open(&c1, &b, &sid1, &key1,
	    BUF_BYTES) == 0 && dest_open(&c2, &b, &sid2, &key2, BUF_BYTES) ==
	    0 && mig_in(&c1, 10, SIZE, 77) == 0 && mig_in(&c2, 10, SIZE, 78) ==
	    0 && ucxpeer_link_open(&pe, &b) == 0, "no sessions or link"))
		goto out;
	/* Nothing served yet. */
	check("unsolicited_none_served", ucxpeer_link_send(&pe,
	    UCXPEER_SOURCE, x5, (uint64_t)(uintptr_t)s2, SIZE, NULL) == 0 &&
	    ucxpeer_link_send(&pe, UCXPEER_NOSOURCE, x6, 0, 0, NULL) == 0 &&
	    ucxpeer_link_send(&pe, UCXPEER_PULL, x6, 0, SIZE, NULL) == 0 &&
	    ucxpeer_link_recv(&pe, &m) == 0 && m.type == UCXPEER_NOSOURCE &&
	    m.xid == x6, "a PULL for nothing sent: answer %u", m.type);
	/* Session 1's push is served; session 2's waits behind it. */
	if (!check("unsolicited_pull", ucxpeer_link_push(&pe, sid1, key1, 77,
	    5, SIZE) == 0 && ucxpeer_link_push(&pe, sid2, key2, 78, 6, SIZE) ==
	    0 && ucxpeer_link_recv(&pe, &m) == 0 && m.type == UCXPEER_PULL &&
	    m.xid == x5, "no PULL for the first push (%u)", m.type))
		goto out;
	check("unsolicited_foreign", ucxpeer_link_send(&pe, UCXPEER_SOURCE, x6,
	    (uint64_t)(uintptr_t)s2, SIZE, NULL) == 0 &&
	    ucxpeer_link_send(&pe, UCXPEER_NOSOURCE, x6, 0, 0, NULL) == 0 &&
	    ucxpeer_link_send(&pe, UCXPEER_SOURCE, 999 | UCXPEER_PLACE,
	    (uint64_t)(uintptr_t)s2, SIZE, NULL) == 0 &&
	    ucxpeer_link_send(&pe, UCXPEER_SOURCE, x5, (uint64_t)(uintptr_t)s1,
	    SIZE, NULL) == 0 && ucxpeer_wait_notify(pe.u, &c1, 10, &st1) ==
	    0 && st1 == CL_COMPLETE, "session 1's transfer: %d", st1);
	/* Session 2's now; first a stale SOURCE for session 1's. */
	if (check("unsolicited_second_pull", recv_next(&pe, 6, &m) == 0 &&
	    m.type == UCXPEER_PULL && m.xid == x6, "no PULL for the second "
	    "push (%u, xid %llx)", m.type, (unsigned long long)m.xid))
		check("unsolicited_stale", ucxpeer_link_send(&pe,
		    UCXPEER_SOURCE, x5, (uint64_t)(uintptr_t)s1, SIZE, NULL) ==
		    0 && ucxpeer_link_send(&pe, UCXPEER_NOSOURCE, x5, 0, 0,
		    NULL) == 0 && ucxpeer_link_send(&pe, UCXPEER_SOURCE, x6,
		    (uint64_t)(uintptr_t)s2, SIZE, NULL) == 0 &&
		    ucxpeer_wait_notify(pe.u, &c2, 10, &st2) == 0 &&
		    st2 == CL_COMPLETE, "session 2's transfer: %d", st2);
	check_range("unsolicited_range1", &c1, BUF_BYTES, SIZE, 1, 0);
	check_range("unsolicited_range2", &c2, BUF_BYTES, SIZE, 2, 0);
	conn_close(&c2);
	check_clean("unsolicited", &b, &c1, &pe);
out:
	free(s1);
	free(s2);
	conn_close(&c1);
	conn_close(&c2);
	ucxpeer_link_close(&pe);
	srv_stop(&b, "unsolicited_server_exit");
}

/* What is wrong with a SOURCE in test_bad_source. */
enum bad { UNREADABLE, HALF, LONGER, SHORTER, WRAPS, NBAD };
static const char *const bad_names[NBAD] = {
	"unreadable", "half_readable", "longer", "shorter", "wraps",
};

/*
 * SOURCEs the server cannot read: memory not readable in us (the read
 * faults), half of it (a short read), a length that is not the
 * transfer's (longer, shorter), an address whose range wraps. The
 * client's migration fails, nothing lands outside its range, and
 * inside it only our bytes or zeros; then a good transfer lands: on the
 * same link where the read failed, on a new one where the message was
 * refused (that stops placement on its link).
 */
static void
test_bad_source(void)
{
	struct srv		 b;
	struct conn		 c;
	struct ucxpeer_link	 pe;
	uint64_t		 sid = 0, key = 0, xfer, ev, addr, len;
	uint32_t		*good = NULL;
	uint8_t			*map;
	char			 what[64];
	cl_int			 st;
	int			 i, same;

	c.fd = -1;
	ucxpeer_link_init(&pe);
	if (!start(&b, "bad_server", NULL, NULL))
		return;
	if (!check("bad_setup", (good = words(3, SIZE)) != NULL &&
	    dest_open(&c, &b, &sid, &key, BUF_BYTES) == 0, "no session"))
		goto out;
	for (i = 0; i < NBAD; i++) {
		xfer = 100 + 2 * (uint64_t)i;
		ev = 20 + 4 * (uint64_t)i;
		snprintf(what, sizeof what, "bad_%s_fails", bad_names[i]);
		if (pe.u == NULL && !check(what, ucxpeer_link_open(&pe, &b) ==
		    0, "no link"))
			goto out;
		map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		    MAP_ANONYMOUS, -1, 0);
		if (!check("bad_map", map != MAP_FAILED, "mmap: %s",
		    strerror(errno)))
			goto out;
		memcpy(map, good, SIZE);
		addr = (uint64_t)(uintptr_t)map;
		len = SIZE;
		/* Unreadable, and no other mapping can take its place. */
		if (i == UNREADABLE)
			mprotect(map, SIZE, PROT_NONE);
		else if (i == HALF)
			mprotect(map + SIZE / 2, SIZE / 2, PROT_NONE);
		else if (i == LONGER)
			len = SIZE + 4096;
		else if (i == SHORTER)
			len = SIZE - 4;
		else if (i == WRAPS)
			addr = UINT64_MAX - 4095;
		st = 1;
		if (!check(what, mig_in(&c, ev, SIZE, xfer) == 0 &&
		    push_pulled(&pe, sid, key, xfer, xfer, SIZE, addr, len) ==
		    0 && ucxpeer_wait_notify(pe.u, &c, ev, &st) == 0 &&
		    st == CL_DEVICE_NOT_AVAILABLE,
		    "the migration: %d; see %s/stderr", st, b.dir)) {
			munmap(map, SIZE);
			goto out;
		}
		munmap(map, SIZE);
		snprintf(what, sizeof what, "bad_%s_range", bad_names[i]);
		check_range(what, &c, BUF_BYTES, SIZE, 3, 1);
		/* A failed read leaves the link placing; a refusal not. */
		same = i == UNREADABLE || i == HALF;
		if (!same)
			ucxpeer_link_close(&pe);
		st = 1;
		snprintf(what, sizeof what, "bad_%s_next", bad_names[i]);
		if (!check(what, (same || ucxpeer_link_open(&pe, &b) == 0) &&
		    mig_in(&c, ev + 2, SIZE, xfer + 1) == 0 && push_pulled(&pe,
		    sid, key, xfer + 1, xfer + 1, SIZE,
		    (uint64_t)(uintptr_t)good, SIZE) == 0 &&
		    ucxpeer_wait_notify(pe.u, &c, ev + 2, &st) == 0 &&
		    st == CL_COMPLETE, "the transfer after it: %d", st))
			goto out;
		snprintf(what, sizeof what, "bad_%s_next_range", bad_names[i]);
		check_range(what, &c, BUF_BYTES, SIZE, 3, 0);
	}
	check_clean("bad", &b, &c, &pe);
out:
	free(good);
	conn_close(&c);
	ucxpeer_link_close(&pe);
	srv_stop(&b, "bad_server_exit");
}

/*
 * A PULL the source never answers: the server's frame deadline (here 2
 * s) ends it. The client's migration fails, the link is closed, and the
 * next transfer, on a new link, lands.
 */
static void
test_silent_source(void)
{
	const char *const	 more[] = { "--frame-timeout", "2",
				    "--min-rate", "1073741824", NULL };
	struct srv		 b;
	struct conn		 c;
	struct ucxpeer_link	 pe;
	struct ucxpeer_msg	 m;
	uint64_t		 sid = 0, key = 0;
	uint32_t		*good = NULL;
	cl_int			 st = 1;

	c.fd = -1;
	ucxpeer_link_init(&pe);
	memset(&m, 0, sizeof m);
	if (!start(&b, "silent_server", NULL, more))
		return;
	if (!check("silent_pull", (good = words(5, SIZE)) != NULL &&
	    dest_open(&c, &b, &sid, &key, BUF_BYTES) == 0 && mig_in(&c, 10,
	    SIZE, 77) == 0 && ucxpeer_link_open(&pe, &b) == 0 &&
	    ucxpeer_link_push(&pe, sid, key, 77, 5, SIZE) == 0 &&
	    ucxpeer_link_recv(&pe, &m) == 0 && m.type == UCXPEER_PULL,
	    "no PULL (%u)", m.type))
		goto out;
	check("silent_fails", ucxpeer_wait_notify(pe.u, &c, 10, &st) == 0 &&
	    st == CL_DEVICE_NOT_AVAILABLE, "the migration: %d; see %s/stderr",
	    st, b.dir);
	check("silent_link_closed", wait_closed(&pe.p), "the link stays");
	check_range("silent_range", &c, BUF_BYTES, SIZE, 5, 1);
	ucxpeer_link_close(&pe);
	st = 1;
	if (check("silent_next", ucxpeer_link_open(&pe, &b) == 0 &&
	    mig_in(&c, 12, SIZE, 79) == 0 && push_pulled(&pe, sid, key, 79, 7,
	    SIZE, (uint64_t)(uintptr_t)good, SIZE) == 0 &&
	    ucxpeer_wait_notify(pe.u, &c, 12, &st) == 0 && st == CL_COMPLETE,
	    "the transfer after it: %d", st))
		check_range("silent_next_range", &c, BUF_BYTES, SIZE, 5, 0);
	check_clean("silent", &b, &c, &pe);
out:
	free(good);
	conn_close(&c);
	ucxpeer_link_close(&pe);
	srv_stop(&b, "silent_server_exit");
}

/*
 * A second SOURCE while the server reads the first (held after its first
 * piece): refused, it stops placement on the link, which ends the
 * transfer; its answer still waits for the read's end, the range holds
 * our bytes or zeros, nothing stays held.
 */
static void
test_dup_source(void)
{
	struct srv		 b;
	struct conn		 c;
	struct ucxpeer_link	 pe;
	uint64_t		 sid = 0, key = 0;
	uint32_t		*src = NULL;
	char			 go[PATH_MAX + 8];
	size_t			 n = HELD_SIZE + 2 * OFF;
	cl_int			 st = 1;
	int			 seen = 0, fd;

	c.fd = -1;
	ucxpeer_link_init(&pe);
	snprintf(go, sizeof go, "/tmp/peerwire_test.%ld.go", (long)getpid());
	unlink(go);
	if (!start(&b, "dup_server", go, NULL))
		return;
	if (!check("dup_held", (src = words(4, HELD_SIZE)) != NULL &&
	    dest_open(&c, &b, &sid, &key, n) == 0 && mig_in(&c, 10, HELD_SIZE,
	    77) == 0 && ucxpeer_link_open(&pe, &b) == 0 && push_pulled(&pe,
	    sid, key, 77, 5, HELD_SIZE, (uint64_t)(uintptr_t)src, HELD_SIZE) ==
	    0 && log_has(&b, "held"), "the read never started; see %s/stderr",
	    b.dir))
		goto out;
	check("dup_sent", ucxpeer_link_send(&pe, UCXPEER_SOURCE, 5 |
	    UCXPEER_PLACE, (uint64_t)(uintptr_t)src, HELD_SIZE, NULL) == 0 &&
	    log_has(&b, "transport failure") && raw_sync_seen(&c, 10,
	    &seen, &st) == 0, "the second SOURCE not refused; see %s/stderr",
	    b.dir);
	check("dup_no_answer_while_reading", !seen, "event %d while the read "
	    "was held", st);
	if ((fd = open(go, O_CREAT | O_WRONLY, 0600)) >= 0)
		close(fd);
	check("dup_fails", (seen || ucxpeer_wait_notify(pe.u, &c, 10, &st) ==
	    0) && st == CL_DEVICE_NOT_AVAILABLE, "the migration: %d", st);
	check("dup_answer_after_read", srv_stderr_has(&b,
	    "direct pull of 41943040 bytes"), "answered, and the read has not "
	    "ended (%s/stderr)", b.dir);
	check_range("dup_range", &c, n, HELD_SIZE, 4, 1);
	check_clean("dup", &b, &c, &pe);
out:
	free(src);
	conn_close(&c);
	ucxpeer_link_close(&pe);
	unlink(go);
	srv_stop(&b, "dup_server_exit");
}

/* What a third process tells the test: its ring and its secret. */
struct third {
	uint64_t	ring, secret;
	int		fd;
};

/* The third process: a sealed ring and a secret, until fd in closes. */
static void
third_run(int out, int in)
{
	struct third	 k;
	uint32_t	*sec;
	void		*p;
	char		 x;
	int		 fd;

	memset(&k, 0, sizeof k);
	if ((sec = words(9, SIZE)) == NULL || (fd = memfd_create("third",
	    MFD_CLOEXEC | MFD_ALLOW_SEALING)) == -1 || ftruncate(fd, 2 * MIB) !=
	    0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0 ||
	    (p = mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	    0)) == MAP_FAILED)
		_exit(1);
	k.ring = (uint64_t)(uintptr_t)p;
	k.secret = (uint64_t)(uintptr_t)sec;
	k.fd = fd;
	if (write(out, &k, sizeof k) != (ssize_t)sizeof k)
		_exit(1);
	(void)read(in, &x, 1);
	_exit(0);
}

/*
 * The peer names as its own ring one of a third process (neither end of
 * the link; here a child of this test, with a sealed ring of the right
 * size and a secret in its memory), with that ring's address there. The
 * server must not map it (nor probe that pid, nor ever read it for a
 * SOURCE): the push is served through the server's slots instead of a
 * PULL, and when the link goes the migration fails without a byte of
 * the secret in the buffer.
 */
static void
test_third_ring(void)
{
	struct srv		 b;
	struct conn		 c;
	struct ucxpeer_link	 pe;
	struct ucxpeer_msg	 m;
	struct third		 k;
	uint64_t		 sid = 0, key = 0;
	char			 name[32];
	int			 pfd[2] = { -1, -1 }, qfd[2] = { -1, -1 };
	int			 status;
	pid_t			 kid = -1;
	cl_int			 st = 1;

	c.fd = -1;
	ucxpeer_link_init(&pe);
	memset(&m, 0, sizeof m);
	memset(&k, 0, sizeof k);
	if (!check("third_process", pipe(pfd) == 0 && pipe(qfd) == 0 &&
	    (kid = fork()) != -1, "pipe or fork: %s", strerror(errno)))
		goto out0;
	if (kid == 0) {
		close(pfd[0]);
		close(qfd[1]);
		third_run(pfd[1], qfd[0]);
	}
	close(pfd[1]);
	close(qfd[0]);
	pfd[1] = qfd[0] = -1;
	if (!check("third_ready", read_n(pfd[0], &k, sizeof k) == 0,
	    "the third process did not start"))
		goto out0;
	if (!start(&b, "third_server", NULL, NULL))
		goto out0;
	snprintf(name, sizeof name, "/proc/%ld/fd/%d", (long)kid, k.fd);
	if (!check("third_setup", dest_open(&c, &b, &sid, &key, BUF_BYTES) ==
	    0 && mig_in(&c, 10, SIZE, 77) == 0 && ucxpeer_link_hello(&pe,
	    &b) == 0 && ucxpeer_link_send(&pe, UCXPEER_RING, k.ring, MIB, 2,
	    name) == 0 && ucxpeer_link_push(&pe, sid, key, 77, 5, SIZE) == 0 &&
	    ucxpeer_link_recv(&pe, &m) == 0, "no session, link or answer"))
		goto out;
	if (m.type == UCXPEER_MAPPED) {
		/* It took the ring: see what it would read for us. */
		if (ucxpeer_link_recv(&pe, &m) == 0 && m.type ==
		    UCXPEER_PULL && ucxpeer_link_send(&pe, UCXPEER_SOURCE,
		    5 | UCXPEER_PLACE, k.secret, SIZE, NULL) == 0)
			(void)ucxpeer_wait_notify(pe.u, &c, 10, &st);
		check("third_refused", 0, "the server mapped the ring of pid "
		    "%ld (not the link's peer) and asked to pull from it "
		    "(migration %d)", (long)kid, st);
	} else
		check("third_refused", m.type == UCXPEER_OFFER &&
		    log_has(&b, "not the other end of the link"), "answer %u; "
		    "see %s/stderr", m.type, b.dir);
	ucxpeer_link_close(&pe);
	if (st == 1)
		check("third_fails", wait_notify(&c, 10, &st) == 0 &&
		    st == CL_DEVICE_NOT_AVAILABLE,
		    "the migration: %d", st);
	/* Neither seed 3's words nor the secret's (seed 9): nothing. */
	check_range("third_no_secret", &c, BUF_BYTES, SIZE, 3, 1);
	check_clean("third", &b, &c, &pe);
out:
	conn_close(&c);
	ucxpeer_link_close(&pe);
	srv_stop(&b, "third_server_exit");
out0:
	if (qfd[1] != -1)
		close(qfd[1]);
	if (kid > 0)
		(void)waitpid(kid, &status, 0);
	if (pfd[0] != -1)
		close(pfd[0]);
	if (pfd[1] != -1)
		close(pfd[1]);
	if (qfd[0] != -1)
		close(qfd[0]);
}

/* Read one Request frame on fd, its bulk read and dropped. */
static Vcl__Request *
fake_recv(int fd)
{
	struct vcl_frame_limits	 lim = { 1u << 20, 64ull << 20 };
	struct vcl_frame_hdr	 hdr;
	Vcl__Request		*r = NULL;
	uint8_t			 h[VCL_FRAME_HDR_LEN], *msg, junk[65536];
	const char		*why;
	uint64_t		 left, n;

	if (read_n(fd, h, sizeof h) != 0 ||
	    vcl_frame_decode(h, &lim, &hdr, &why) != 0 ||
	    (msg = malloc(hdr.msg_len + 1)) == NULL)
		return (NULL);
	if (read_n(fd, msg, hdr.msg_len) == 0)
		r = vcl__request__unpack(NULL, hdr.msg_len, msg);
	free(msg);
	for (left = hdr.bulk_len; r != NULL && left > 0; left -= n) {
		n = left < sizeof junk ? left : sizeof junk;
		if (read_n(fd, junk, n) != 0) {
			vcl__request__free_unpacked(r, NULL);
			r = NULL;
		}
	}
	return (r);
}

/*
 * Be the destination server of sv's peer link (its next connection to
 * lfd) on ucx: greet, take its Hello and its ucx address, welcome it
 * naming ours, then take its ring and name ours, as pe. 0 or -1.
 */
static int
fake_dest(int lfd, struct ucxpeer_link *pe)
{
	Vcl__ToClient		 tc = VCL__TO_CLIENT__INIT;
	Vcl__Greeting		 g = VCL__GREETING__INIT;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	Vcl__Welcome		 w = VCL__WELCOME__INIT;
	Vcl__TransportOffer	 o = VCL__TRANSPORT_OFFER__INIT;
	Vcl__Request		*h = NULL;
	struct timeval		 tv = { RECV_TIMEOUT_S, 0 };
	struct ucxpeer_msg	 m;
	struct pollfd		 pfd;
	const void		*a;
	uint8_t			 nonce[32];
	size_t			 alen, i;
	char			 err[256];
	int			 rc = -1;

	ucxpeer_link_init(pe);
	pfd.fd = lfd;
	pfd.events = POLLIN;
	if ((pe->u = vcl_ucx_create(NULL, err, sizeof err)) == NULL ||
	    poll(&pfd, 1, RECV_TIMEOUT_S * 1000) != 1 ||
	    (pe->p.fd = accept(lfd, NULL, NULL)) < 0)
		return (-1);
	setsockopt(pe->p.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	memset(nonce, 7, sizeof nonce);
	g.version = VCL_PROTOCOL_VERSION;
	g.nonce.data = nonce;
	g.nonce.len = sizeof nonce;
	tc.greeting = &g;
	if (raw_fake_send(pe->p.fd, &tc, 0, 0) != 0 ||
	    (h = fake_recv(pe->p.fd)) == NULL ||
	    h->call_case != VCL__REQUEST__CALL_HELLO)
		goto out;
	for (i = 0; i < h->hello->n_transports; i++)
		if (strcmp(h->hello->transports[i]->name, "ucx") == 0 &&
		    h->hello->transports[i]->has_address)
			break;
	if (i == h->hello->n_transports || (pe->ep = vcl_ucx_ep_open(pe->u,
	    h->hello->transports[i]->address.data,
	    h->hello->transports[i]->address.len, NULL, NULL)) == NULL)
		goto out;
	pe->srv_ns = ucxpeer_fnv(h->hello->transports[i]->address.data,
	    h->hello->transports[i]->address.len);
	vcl_ucx_address(pe->u, &a, &alen);
	pe->ns = ucxpeer_fnv(a, alen);
	pe->link = ucxpeer_link_no(pe->p.fd);
	o.name = "ucx";
	o.has_address = 1;
	o.address.data = (uint8_t *)a;
	o.address.len = alen;
	w.node_name = "fake";
	w.transport = &o;
	w.transport_why = "forced";
	r.seq = h->seq;
	r.status = CL_SUCCESS;
	r.result_case = VCL__REPLY__RESULT_WELCOME;
	r.welcome = &w;
	tc = (Vcl__ToClient)VCL__TO_CLIENT__INIT;
	tc.reply = &r;
	memset(&m, 0, sizeof m);
	if (raw_fake_send(pe->p.fd, &tc, 0, 0) == 0 &&
	    ucxpeer_link_recv(pe, &m) == 0 && m.type == UCXPEER_RING &&
	    ucxpeer_link_send(pe, UCXPEER_MAPPED, 0, 0, 0, NULL) == 0 &&
	    ucxpeer_link_ring(pe) == 0)
		rc = 0;
out:
	if (h != NULL)
		vcl__request__free_unpacked(h, NULL);
	return (rc);
}

/* MigrateOut of size bytes of c's buffer 3 to addr, transfer xfer. */
static int
mig_out(struct conn *c, const char *addr, uint64_t ev, uint64_t size,
    uint64_t xfer)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__MigrateOut	mo = VCL__MIGRATE_OUT__INIT;
	Vcl__PeerDest	d = VCL__PEER_DEST__INIT;

	d.addr = (char *)addr;
	d.session = 1;
	d.key = 2;
	mo.context = 1;
	mo.mem = 3;
	mo.offset = OFF;
	mo.size = size;
	mo.dest = &d;
	mo.transfer = xfer;
	mo.has_event = 1;
	mo.event = ev;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	return (send_req(c, &r, NULL, 0));
}

/*
 * The right PULL for the server's placed send xid: a SOURCE of the push's
 * length names where the range is in the server; read it from there (its
 * child: the kernel lets us), check it, say DONE: the MigrateOut (event
 * ev) completes.
 */
static void
ask_right(struct srv *a, struct conn *c, struct ucxpeer_link *pe,
    uint64_t xid, uint64_t ev, const uint32_t *data)
{
	struct ucxpeer_msg	 m;
	struct iovec		 l, r;
	uint8_t			*got;
	cl_int			 st = 1;

	memset(&m, 0, sizeof m);
	if ((got = malloc(SIZE)) == NULL)
		return;
	if (check("ask_pull_right_source", ucxpeer_link_send(pe, UCXPEER_PULL,
	    xid, 0, SIZE, NULL) == 0 && recv_next(pe, xid, &m) == 0 &&
	    m.type == UCXPEER_SOURCE && m.len == SIZE && m.off != 0,
	    "answer %u, len %llu", m.type, (unsigned long long)m.len)) {
		l.iov_base = got;
		l.iov_len = SIZE;
		r.iov_base = (void *)(uintptr_t)m.off;
		r.iov_len = SIZE;
		check("ask_pull_right_bytes", process_vm_readv(a->pid, &l, 1,
		    &r, 1, 0) == (ssize_t)SIZE && memcmp(got, (const uint8_t *)
		    data + OFF, SIZE) == 0, "the range named is not the "
		    "buffer's (%s)", strerror(errno));
		check("ask_pull_right_done", ucxpeer_link_send(pe, UCXPEER_DONE,
		    xid, 0, 0, NULL) == 0 && ucxpeer_wait_notify(pe->u, c, ev,
		    &st) == 0 && st == CL_COMPLETE, "the MigrateOut: %d", st);
	}
	free(got);
}

/* What a hostile destination asks of the server's placed send. */
enum ask { PULL_LONGER, PULL_SHORTER, PULL_ZERO, PULL_HUGE, OFFER_PAST,
    OFFER_WRAPS, PULL_RIGHT, NASK };
static const char *const ask_names[NASK] = {
	"pull_longer", "pull_shorter", "pull_zero", "pull_huge", "offer_past",
	"offer_wraps", "pull_right",
};

/*
 * The server is the source; this process the destination (a server it
 * links to), asking for the bytes wrongly: a PULL longer or shorter than
 * the push, of zero bytes, of 2^64 - 1; an OFFER past the bulk's end, or
 * whose offset plus length wraps. Each stops placement on its link and
 * fails the MigrateOut with an error; the server lives, reads nothing
 * into our ring and holds nothing once its client went. (Each case its
 * own link: a new address.) Last, the right PULL: its SOURCE names the
 * range, which we read from the server, and our DONE completes it.
 */
static void
test_bad_ask(void)
{
	struct srv		 a;
	struct conn		 c;
	struct ucxpeer_link	 pe;
	struct ucxpeer_msg	 m;
	Vcl__Request		*h;
	uint32_t		*data = NULL;
	uint64_t		 xid, off, len;
	char			 port[16], addr[64], what[64];
	size_t			 k;
	cl_int			 st;
	int			 i, lfd = -1, type;

	c.fd = -1;
	ucxpeer_link_init(&pe);
	if (!start(&a, "ask_server", NULL, NULL))
		return;
	if (!check("ask_setup", (data = words(6, BUF_BYTES)) != NULL &&
	    client_open(&c, &a, NULL, NULL) == 0 && create_buffer(&c, 3, 1,
	    BUF_BYTES, data, BUF_BYTES) == 0, "no session"))
		goto out;
	for (i = 0; i < NASK; i++) {
		if (!check("ask_listen", (lfd = raw_fake_listen(port,
		    sizeof port)) != -1, "%s", strerror(errno)))
			goto out;
		snprintf(addr, sizeof addr, "127.0.0.1:%s", port);
		/* A small push brings the link up (it rides the stream). */
		snprintf(what, sizeof what, "ask_%s_link", ask_names[i]);
		h = NULL;
		st = 1;
		if (!check(what, mig_out(&c, addr, 30 + 4 * (uint64_t)i, 4096,
		    200 + 2 * (uint64_t)i) == 0 && fake_dest(lfd, &pe) == 0 &&
		    (h = fake_recv(pe.p.fd)) != NULL && h->call_case ==
		    VCL__REQUEST__CALL_PEER_PUSH && ucxpeer_wait_notify(pe.u,
		    &c, 30 + 4 * (uint64_t)i, &st) == 0 && st == CL_COMPLETE,
		    "no link, or its first push (%d)", st)) {
			if (h != NULL)
				vcl__request__free_unpacked(h, NULL);
			goto out;
		}
		vcl__request__free_unpacked(h, NULL);
		h = NULL;
		/* The placed one. */
		snprintf(what, sizeof what, "ask_%s_head", ask_names[i]);
		if (!check(what, mig_out(&c, addr, 32 + 4 * (uint64_t)i, SIZE,
		    201 + 2 * (uint64_t)i) == 0 && (h = fake_recv(pe.p.fd)) !=
		    NULL && h->call_case == VCL__REQUEST__CALL_PEER_PUSH &&
		    h->has_bulk_xfer && (h->bulk_xfer & UCXPEER_PLACE) != 0 &&
		    h->bulk_size == SIZE, "no placed push")) {
			if (h != NULL)
				vcl__request__free_unpacked(h, NULL);
			goto out;
		}
		xid = h->bulk_xfer;
		vcl__request__free_unpacked(h, NULL);
		off = 0;
		len = SIZE;
		type = UCXPEER_PULL;
		if (i == PULL_LONGER)
			len = SIZE + 1;
		else if (i == PULL_SHORTER)
			len = SIZE - 4096;
		else if (i == PULL_ZERO)
			len = 0;
		else if (i == PULL_HUGE)
			len = UINT64_MAX;
		else {
			type = UCXPEER_OFFER;
			len = 4096;
			off = i == OFFER_PAST ? SIZE : UINT64_MAX - 2048;
		}
		memset(pe.ring, 0xee, 2 * MIB);
		st = 1;
		if (i == PULL_RIGHT) {
			ask_right(&a, &c, &pe, xid, 32 + 4 * (uint64_t)i, data);
			ucxpeer_link_close(&pe);
			close(lfd);
			lfd = -1;
			continue;
		}
		snprintf(what, sizeof what, "ask_%s_fails", ask_names[i]);
		check(what, ucxpeer_link_send(&pe, (uint32_t)type, xid, off,
		    len, NULL) == 0 && ucxpeer_wait_notify(pe.u, &c, 32 + 4 *
		    (uint64_t)i, &st) == 0 && st == CL_DEVICE_NOT_AVAILABLE,
		    "the MigrateOut: %d; see %s/stderr", st, a.dir);
		/* Nothing of its bytes in our ring; no SOURCE, no slot. */
		for (k = 0; k < 2 * MIB && pe.ring[k] == 0xee; k++)
			;
		snprintf(what, sizeof what, "ask_%s_ring", ask_names[i]);
		check(what, k == 2 * MIB, "our ring written at %zu", k);
		memset(&m, 0, sizeof m);
		ucxpeer_link_close(&pe);
		close(lfd);
		lfd = -1;
	}
	check_clean("ask", &a, &c, &pe);
out:
	if (lfd != -1)
		close(lfd);
	free(data);
	conn_close(&c);
	ucxpeer_link_close(&pe);
	srv_stop(&a, "ask_server_exit");
}

static const struct test tests[] = {
	{ "unsolicited", test_unsolicited, 120 },
	{ "bad_source", test_bad_source, 120 },
	{ "silent_source", test_silent_source, 120 },
	{ "dup_source", test_dup_source, 120 },
	{ "third_ring", test_third_ring, 120 },
	{ "bad_ask", test_bad_ask, 120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
