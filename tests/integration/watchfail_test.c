/* watchfail_test.c - commands whose completion the runtime will not call back. */

/*
 * usage: watchfail_test VCLSERVER
 *
 * A server started with VCL_TEST_WATCH_FAIL=1 has the runtime refuse
 * every completion callback of its commands (clSetEventCallback), as a
 * runtime out of memory may, after it took the command. Each command here
 * is queued behind a kernel of tens of ms, so its copy comes well after
 * the refusal: what the runtime copies from or into (a write's or a read's
 * staging, malloc'd: no pinned memory, under the pool's size; a ring's
 * slot; the ring itself, mapped while its session lives) must stay until
 * the copy is done (ASan sees a copy from or into freed memory; an
 * unmapped ring kills the server), and the client still gets the true
 * answer: a finish and a ring transfer CL_SUCCESS, a read its bytes, an
 * event CL_COMPLETE. With a waiter thread (the default), chunked writes
 * and reads (--write-chunk 64K, --read-chunk 256K) too, pinned staging and ring (the default
 * --max-pinned) too, and with no waiter (VCL_TEST_WATCH_NOWAIT=1: only
 * the server's tick sees the commands end). Then the client goes with a
 * ring write still queued: the server lives on and holds nothing after.
 */

#include <sys/mman.h>

#include "rawproto.h"

#define CTX		1
#define Q		2
#define MEM		3
#define SPIN_PROG	4
#define SPIN_K		5
#define SPIN_MEM	6
#define EV		100
#define SIZE		(768u << 10)	/* under the pool's 1 MiB: malloc'd */
#define SPIN_STEPS	(40u << 20)	/* a kernel of tens of ms */
/* The kernel that holds its queue (rawproto.c). */
#define SPIN_SETUP(c)	raw_spin_setup((c), CTX, SPIN_PROG, SPIN_K, SPIN_MEM)
#define SPIN_SEND(c)	raw_spin_send((c), Q, SPIN_K, SPIN_MEM, SPIN_STEPS)

/* A byte pattern of seed. */
static void
fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t	i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i ^ (i >> 8) ^ (i >> 17) ^ seed);
}

/* WriteBuffer{Q, MEM, 0, size, event ev (0: none)} of data, in band. */
static int
send_write(struct conn *c, const uint8_t *data, uint64_t size, uint64_t ev)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	m = VCL__WRITE_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;

	e.queue = Q;
	e.has_event = ev != 0;
	e.event = ev;
	m.q = &e;
	m.mem = MEM;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &m;
	return (send_req(c, &r, data, size));
}

/*
 * A shared write (read if !write) of RAW_RING_SLOT bytes of MEM through
 * slot on Q: sent, and if wait, its reply's status (1: none came).
 */
static int
ring_xfer(struct conn *c, int write, unsigned slot, int wait)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	w = VCL__WRITE_BUFFER__INIT;
	Vcl__ReadBuffer		rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;

	e.queue = Q;
	if (write) {
		w.q = &e;
		w.mem = MEM;
		w.size = RAW_RING_SLOT;
		w.has_shm_slot = 1;
		w.shm_slot = slot;
		r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
		r.write_buffer = &w;
	} else {
		rb.q = &e;
		rb.mem = MEM;
		rb.size = RAW_RING_SLOT;
		rb.has_shm_slot = 1;
		rb.shm_slot = slot;
		r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
		r.read_buffer = &rb;
	}
	if (!wait)
		return (send_req(c, &r, NULL, 0) == 0 ? 0 : 1);
	return (raw_status(c, &r));
}

/* Index of the first byte where a and b differ, or n. */
static size_t
differs(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t	i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return (i);
}

/*
 * On a server of its own started with extra arguments args and, when
 * nowait, VCL_TEST_WATCH_NOWAIT=1: a write, a finish, a read, a write
 * with an event, a ring write and a ring read, each behind the kernel,
 * answered truly; then a ring write the client leaves queued.
 */
static void
run(const char *mode, const char *const *args, int nowait)
{
	struct srv		 sv;
	struct conn		 c, d;
	struct raw_ring		 rg;
	struct reply		 rp;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint8_t			*a = NULL;
	cl_int			 est = 1;
	size_t			 at;
	char			 what[64];
	int			 rc, ok;

	c.fd = d.fd = -1;
	rg.fd = -1;
	rg.base = MAP_FAILED;
	memset(&rp, 0, sizeof rp);
	setenv("VCL_TEST_WATCH_FAIL", "1", 1);
	if (nowait)
		setenv("VCL_TEST_WATCH_NOWAIT", "1", 1);
	snprintf(what, sizeof what, "%s_server_start", mode);
	rc = srv_start(&sv, what, "127.0.0.1:0", args);
	unsetenv("VCL_TEST_WATCH_FAIL");
	unsetenv("VCL_TEST_WATCH_NOWAIT");
	if (!rc)
		return;
	snprintf(what, sizeof what, "%s_setup", mode);
	if ((a = malloc(SIZE)) == NULL || !check(what, conn_session(&c,
	    &sv) == 0 && create_context(&c, CTX) == 0 &&
	    create_queue(&c, Q, CTX) == 0 &&
	    create_buffer(&c, MEM, CTX, SIZE, NULL, 0) == 0 &&
	    SPIN_SETUP(&c) == 0 && raw_ring_give(&rg, &c) == 0 &&
	    conn_session(&d, &sv) == 0, "no sessions, objects or ring"))
		goto out;

	/* A write behind the kernel, then a finish: all of it done. */
	fill(a, SIZE, 1);
	rc = SPIN_SEND(&c) == 0 && send_write(&c, a, SIZE, 0) == 0 &&
	    SPIN_SEND(&c) == 0 ? raw_finish(&c, Q) : 1;
	snprintf(what, sizeof what, "%s_write_finish", mode);
	check(what, rc == CL_SUCCESS, "finish behind a write: %d", rc);

	/* A read behind the kernel: the bytes written. */
	ok = SPIN_SEND(&c) == 0 && read_buffer(&c, Q, MEM, SIZE, &rp) == 0;
	at = ok && rp.r->status == CL_SUCCESS && rp.bulk_len == SIZE ?
	    differs(rp.bulk, a, SIZE) : 0;
	snprintf(what, sizeof what, "%s_read_bytes", mode);
	check(what, ok && at == SIZE, "read: %s, status %d, %llu bytes, "
	    "byte %zu differs", ok ? "answered" : "no reply",
	    ok ? rp.r->status : 0, ok ? (unsigned long long)rp.bulk_len : 0,
	    at);
	if (ok)
		reply_free(&rp);

	/* A write with an event behind the kernel: the event completes. */
	fill(a, SIZE, 2);
	rc = SPIN_SEND(&c) == 0 && send_write(&c, a, SIZE, EV) == 0 ?
	    wait_notify(&c, EV, &est) : -1;
	snprintf(what, sizeof what, "%s_event", mode);
	check(what, rc == 0 && est == CL_COMPLETE, "write's event: %d",
	    (int)est);

	/* A ring write behind the kernel, a ring read back into slot 1. */
	fill(raw_ring_slot(&rg, 0), RAW_RING_SLOT, 3);
	memset(raw_ring_slot(&rg, 1), 0, RAW_RING_SLOT);
	rc = SPIN_SEND(&c) == 0 ? ring_xfer(&c, 1, 0, 1) : 1;
	snprintf(what, sizeof what, "%s_ring_write", mode);
	check(what, rc == CL_SUCCESS, "ring write: %d", rc);
	rc = SPIN_SEND(&c) == 0 ? ring_xfer(&c, 0, 1, 1) : 1;
	at = rc == CL_SUCCESS ? differs(raw_ring_slot(&rg, 0),
	    raw_ring_slot(&rg, 1), RAW_RING_SLOT) : 0;
	snprintf(what, sizeof what, "%s_ring_read", mode);
	check(what, rc == CL_SUCCESS && at == RAW_RING_SLOT, "ring read: "
	    "%d, byte %zu differs", rc, at);

	/* A ring write left queued: the client and its ring go at once. */
	fill(raw_ring_slot(&rg, 2), RAW_RING_SLOT, 4);
	rc = SPIN_SEND(&c) == 0 ? ring_xfer(&c, 1, 2, 0) : 1;
	snprintf(what, sizeof what, "%s_ring_left", mode);
	check(what, rc == 0, "ring write not sent");
	conn_close(&c);
	raw_ring_free(&rg);
	snprintf(what, sizeof what, "%s_freed", mode);
	check(what, wait_empty(&d, &st) == 0, "the server still holds %llu "
	    "objects, %llu bytes", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
	snprintf(what, sizeof what, "%s_alive", mode);
	check(what, srv_alive(&sv), "server died: %s", srv_how(&sv));
	/* The fault did fire: the commands above had no callback. */
	snprintf(what, sizeof what, "%s_fault_fired", mode);
	check(what, srv_stderr_has(&sv, "cannot be watched"), "no command "
	    "was refused its callback");
out:
	conn_close(&c);
	conn_close(&d);
	raw_ring_free(&rg);
	free(a);
	snprintf(what, sizeof what, "%s_server_exit", mode);
	srv_stop(&sv, what);
}

static const char *const plain_args[] = { "--max-pinned", "0",
	"--write-chunk", "0", "--shm-ring-max", "2M", NULL };
static const char *const chunk_args[] = { "--max-pinned", "0",
	"--write-chunk", "64K", "--read-chunk", "256K", "--shm-ring-max", "2M",
	NULL };
static const char *const pinned_args[] = { "--write-chunk", "0",
	"--shm-ring-max", "2M", NULL };

/* With a waiter thread to wait for the commands' events. */
static void
test_waiter(void)
{
	run("waiter", plain_args, 0);
}

/*
 * The same, large writes copied in chunks as their bytes come, large reads
 * sent in chunks as each chunk's copy completes.
 */
static void
test_chunked(void)
{
	run("chunked", chunk_args, 0);
}

/*
 * With pinned memory: staging from the context's pinned blocks, the ring
 * wrapped for the context (its wrapper held until the copy is done).
 */
static void
test_pinned(void)
{
	run("pinned", pinned_args, 0);
}

/* With no waiter: the server's tick sees the events end. */
static void
test_nowait(void)
{
	run("nowait", plain_args, 1);
}

static const struct test tests[] = {
	{ "waiter",	test_waiter,	60 },
	{ "chunked",	test_chunked,	60 },
	{ "pinned",	test_pinned,	60 },
	{ "nowait",	test_nowait,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
