/* attack11_test.c - hostile clients against time and fairness: stall, starve. */

/*
 * usage: attack11_test VCLSERVER
 *
 * One server, two sessions: a victim that makes small round trips (a
 * 4 KiB write and its read back, a launch of a one-item kernel and a
 * finish) over and over, and an attacker that tries to hold the
 * server's loop or a resource the victim needs: huge batches of cheap
 * requests, requests that make the server work long, replies it never
 * reads, frames it drips, tens of thousands of requests held on a user
 * event and released at once. Each victim round trip must complete
 * within VIC_BOUND_S (VIC_STALL_S while held requests are released: the
 * server runs them in turns); the worst one is printed per attack. Only
 * "it did not stall" is asserted, never a finer timing.
 */

#include <pthread.h>
#include <stdatomic.h>

#include "rawproto.h"

#define VIC_BOUND_S	20		/* a round trip of the victim, at most */
#define VIC_STALL_S	5		/* ... while requests held on a user
					   event are released */
#define VIC_SIZE	4096
#define VIC_WARMUP	3		/* rounds before an attack starts */

enum {
	CTX = 1, Q, MEM, PROG, KERN, EV0 = 1000,
};

/* The victim: its thread, what it saw. */
struct victim {
	const struct srv	*sv;
	pthread_t		 thread;
	atomic_int		 stop;
	atomic_uint		 rounds;
	atomic_uint_fast64_t	 worst_ns;	/* since the last vic_mark */
	atomic_int		 failed;
	char			 why[160];
};

/* Nanoseconds on the monotonic clock. */
static uint64_t
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* The victim's setup: context, queue, a 4 KiB buffer, kernel_src's k. */
static int
vic_setup(struct conn *c, const struct srv *sv)
{
	struct timeval	tv = { VIC_BOUND_S, 0 };

	if (conn_session(c, sv) != 0)
		return (-1);
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (create_context(c, CTX) != 0 || create_queue(c, Q, CTX) != 0 ||
	    create_buffer(c, MEM, CTX, VIC_SIZE, NULL, 0) != 0 ||
	    create_program(c, PROG, CTX, kernel_src) != 0 ||
	    raw_build(c, PROG, NULL) != CL_SUCCESS ||
	    raw_kernel(c, KERN, PROG, "k") != CL_SUCCESS)
		return (-1);
	return (0);
}

/*
 * One round: write 4 KiB, read them back and compare; launch k on one
 * item and finish. Returns 0, or -1 with why.
 */
static int
vic_round(struct conn *c, unsigned n, char *why, size_t len)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer m = VCL__WRITE_BUFFER__INIT;
	Vcl__Enqueue	 e = VCL__ENQUEUE__INIT;
	Vcl__KernelArg	 a, *ap = &a;
	struct reply	 rp;
	uint8_t		*data;
	int		 st, rc = -1;

	if ((data = raw_pattern(VIC_SIZE, n)) == NULL) {
		snprintf(why, len, "out of memory");
		return (-1);
	}
	e.queue = Q;
	m.q = &e;
	m.mem = MEM;
	m.size = VIC_SIZE;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &m;
	if (send_req(c, &r, data, VIC_SIZE) != 0) {
		snprintf(why, len, "write: %s", strerror(errno));
		goto out;
	}
	if ((st = read_buffer(c, Q, MEM, VIC_SIZE, &rp)) != 0) {
		snprintf(why, len, "read: no reply (%d)", st);
		goto out;
	}
	st = rp.r->status;
	if (st != CL_SUCCESS || rp.bulk_len != VIC_SIZE ||
	    memcmp(rp.bulk, data, VIC_SIZE) != 0) {
		snprintf(why, len, "read: status %d, %llu bytes%s", st,
		    (unsigned long long)rp.bulk_len, st == CL_SUCCESS ?
		    ", not those written" : "");
		reply_free(&rp);
		goto out;
	}
	reply_free(&rp);
	vcl__kernel_arg__init(&a);
	a.index = 0;
	a.type = VCL__KERNEL_ARG__TYPE__MEM;
	a.has_mem = 1;
	a.mem = MEM;
	if (raw_ndrange(c, Q, KERN, 1, 0, &ap, 1, 0) != 0) {
		snprintf(why, len, "launch: %s", strerror(errno));
		goto out;
	}
	if ((st = raw_finish(c, Q)) != CL_SUCCESS) {
		snprintf(why, len, "finish: %d (1: no reply)", st);
		goto out;
	}
	rc = 0;
out:
	free(data);
	return (rc);
}

/* The victim's thread: rounds until told to stop or one fails. */
static void *
vic_run(void *arg)
{
	struct victim	*v = arg;
	struct conn	 c;
	uint64_t	 t0, dt, w;
	unsigned	 n = 0;

	c.fd = -1;
	if (vic_setup(&c, v->sv) != 0) {
		snprintf(v->why, sizeof v->why, "no session, or its setup "
		    "failed");
		atomic_store(&v->failed, 1);
		goto out;
	}
	while (!atomic_load(&v->stop)) {
		t0 = now_ns();
		if (vic_round(&c, n++, v->why, sizeof v->why) != 0) {
			atomic_store(&v->failed, 1);
			break;
		}
		dt = now_ns() - t0;
		w = atomic_load(&v->worst_ns);
		while (dt > w && !atomic_compare_exchange_weak(&v->worst_ns,
		    &w, dt))
			;
		atomic_fetch_add(&v->rounds, 1);
	}
out:
	conn_close(&c);
	return (NULL);
}

/* Start the victim on sv and wait for its first rounds. 0 or -1. */
static int
vic_start(struct victim *v, const struct srv *sv)
{
	int	i;

	memset(v, 0, sizeof *v);
	v->sv = sv;
	if (pthread_create(&v->thread, NULL, vic_run, v) != 0)
		return (-1);
	for (i = 0; i < READY_POLLS * 3; i++) {
		if (atomic_load(&v->failed) ||
		    atomic_load(&v->rounds) >= VIC_WARMUP)
			break;
		poll_wait();
	}
	if (atomic_load(&v->rounds) < VIC_WARMUP) {
		atomic_store(&v->stop, 1);
		pthread_join(v->thread, NULL);
		v->thread = 0;
		note("victim: %s", v->failed ? v->why : "no rounds");
		return (-1);
	}
	return (0);
}

/* An attack starts: count the victim's worst from here. */
static unsigned
vic_mark(struct victim *v)
{
	atomic_store(&v->worst_ns, 0);
	return (atomic_load(&v->rounds));
}

/*
 * An attack ended (it took att_ns): wait until the victim completed a
 * round begun after it, then check that no round failed or took bound_ms
 * or more since vic_mark. Prints the worst round trip. Returns the check.
 */
static int
vic_check_within(struct victim *v, const char *name, unsigned mark,
    uint64_t att_ns, uint64_t bound_ms)
{
	unsigned	start = atomic_load(&v->rounds);
	uint64_t	w;
	int		i;

	for (i = 0; i < VIC_BOUND_S * 100 * 2; i++) {
		if (atomic_load(&v->failed) ||
		    atomic_load(&v->rounds) >= start + 2)
			break;
		poll_wait();
	}
	w = atomic_load(&v->worst_ns);
	printf("     %s: victim %u rounds while the attack's %.1f ms, "
	    "worst round trip %.1f ms\n", name, atomic_load(&v->rounds) -
	    mark, (double)att_ns / 1e6, (double)w / 1e6);
	return (check(name, !atomic_load(&v->failed) &&
	    atomic_load(&v->rounds) >= start + 2 &&
	    w < bound_ms * 1000000, "the victim %s (worst round trip %.1f "
	    "ms, %llu ms allowed)", atomic_load(&v->failed) ? v->why :
	    w >= bound_ms * 1000000 ? "stalled" : "made no round since",
	    (double)w / 1e6, (unsigned long long)bound_ms));
}

/* vic_check_within the victim's general bound, VIC_BOUND_S. */
static int
vic_check(struct victim *v, const char *name, unsigned mark, uint64_t att_ns)
{
	return (vic_check_within(v, name, mark, att_ns,
	    (uint64_t)VIC_BOUND_S * 1000));
}

/* Stop the victim's thread. */
static void
vic_stop(struct victim *v)
{
	if (v->thread == 0)
		return;
	atomic_store(&v->stop, 1);
	pthread_join(v->thread, NULL);
	v->thread = 0;
}

/* Stats round trip on c, for the attacker to know its batch was done. */
static int
sync_stats(struct conn *c)
{
	Vcl__StatsResult	st;

	return (stats(c, &st));
}

/* Append one packed request to b (vcl_buf_pack grows it). 0 or -1. */
static int
pack_req(struct vcl_buf *b, struct conn *c, Vcl__Request *r)
{
	r->seq = ++c->seq;
	return (vcl_buf_pack(b, &r->base, 0));
}

/*
 * One write of n pairs: CreateUserEvent and its Release (no reply when
 * they succeed), then a Stats the attacker waits for.
 */
static int
att_event_pairs(struct conn *c, unsigned n)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	u = VCL__CREATE_USER_EVENT__INIT;
	Vcl__Release		rl = VCL__RELEASE__INIT;
	struct vcl_buf		b = { NULL, 0, 0 };
	unsigned		i;
	int			rc = 0;

	u.context = CTX;
	rl.kind = VCL__KIND__KIND_EVENT;
	for (i = 0; i < n && rc == 0; i++) {
		u.id = rl.id = EV0 + i;
		r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
		r.create_user_event = &u;
		rc = pack_req(&b, c, &r);
		r.call_case = VCL__REQUEST__CALL_RELEASE;
		r.release = &rl;
		rc |= pack_req(&b, c, &r);
	}
	if (rc == 0)
		rc = send_raw(c, b.data, b.len);
	free(b.data);
	return (rc != 0 ? -1 : sync_stats(c));
}

/* GetInfo{what, id, param} into b. */
static int
pack_info(struct vcl_buf *b, struct conn *c, Vcl__GetInfo__What what,
    uint64_t id, uint32_t param)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetInfo	m = VCL__GET_INFO__INIT;

	m.what = what;
	m.id = id;
	m.param = param;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &m;
	return (pack_req(b, c, &r));
}

/* Read n replies (notifications skipped). 0 or -1. */
static int
drain_replies(struct conn *c, unsigned n)
{
	struct reply	rp;
	unsigned	got = 0;

	while (got < n) {
		if (recv_msg(c, &rp) != 0)
			return (-1);
		if (rp.r != NULL)
			got++;
		reply_free(&rp);
	}
	return (0);
}

/* One write of n GetInfo of the device's name; all replies read. */
static int
att_info_flood(struct conn *c, unsigned n)
{
	struct vcl_buf	b = { NULL, 0, 0 };
	unsigned	i;
	int		rc = 0;

	for (i = 0; i < n && rc == 0; i++)
		rc = pack_info(&b, c, VCL__GET_INFO__WHAT__DEVICE, 0,
		    CL_DEVICE_NAME);
	if (rc == 0)
		rc = send_raw(c, b.data, b.len);
	free(b.data);
	return (rc != 0 ? -1 : drain_replies(c, n));
}

/* A source of nk kernels, unique to seed (no cached build). */
static char *
many_kernels(unsigned nk, unsigned seed)
{
	char	*src, *p;
	size_t	 len = (size_t)nk * 96 + 1;
	unsigned i;

	if ((src = malloc(len)) == NULL)
		return (NULL);
	for (p = src, i = 0; i < nk; i++)
		p += snprintf(p, len - (size_t)(p - src), "__kernel void "
		    "k%u(__global int *a) { a[get_global_id(0)] = %u; }\n", i,
		    seed * 100000 + i);
	return (src);
}

/*
 * A built program of nk kernels (id prog), then GetInfo of its binary
 * sizes, which PoCL makes when asked for them (every kernel's code): the
 * server refuses it (CL_INVALID_VALUE; libvcl asks GetBinary, on a
 * worker). 0, or -1 (the status in *st, 1 for no reply).
 */
static int
att_binary_sizes(struct conn *c, uint64_t prog, unsigned nk, unsigned seed,
    int *st)
{
	char	*src;
	int	 rc;

	*st = 1;
	if ((src = many_kernels(nk, seed)) == NULL)
		return (-1);
	rc = create_program(c, prog, CTX, src);
	free(src);
	if (rc != 0 || raw_build(c, prog, NULL) != CL_SUCCESS)
		return (-1);
	*st = get_info_status(c, VCL__GET_INFO__WHAT__PROGRAM, prog,
	    CL_PROGRAM_BINARY_SIZES);
	release(c, VCL__KIND__KIND_PROGRAM, prog);
	return (*st == CL_INVALID_VALUE ? 0 : -1);
}

/*
 * CreateKernels of a built program of nk kernels, then the work-group
 * info of each.
 */
static int
att_kernels(struct conn *c, uint64_t prog, unsigned nk, unsigned seed)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateKernels	 m = VCL__CREATE_KERNELS__INIT;
	struct vcl_buf		 b = { NULL, 0, 0 };
	struct reply		 rp;
	uint64_t		*ids;
	char			*src;
	unsigned		 i;
	int			 rc;

	if ((src = many_kernels(nk, seed)) == NULL ||
	    (ids = calloc(nk, sizeof *ids)) == NULL) {
		free(src);
		return (-1);
	}
	rc = create_program(c, prog, CTX, src);
	free(src);
	if (rc != 0 || raw_build(c, prog, NULL) != CL_SUCCESS) {
		free(ids);
		return (-1);
	}
	for (i = 0; i < nk; i++)
		ids[i] = prog + 1 + i;
	m.program = prog;
	m.n_ids = nk;
	m.ids = ids;
	r.call_case = VCL__REQUEST__CALL_CREATE_KERNELS;
	r.create_kernels = &m;
	if (call(c, &r, NULL, 0, &rp) != 0 || rp.r->status != CL_SUCCESS)
		rc = -1;
	reply_free(&rp);
	for (i = 0; i < nk && rc == 0; i++)
		rc = pack_info(&b, c, VCL__GET_INFO__WHAT__KERNEL_WORK_GROUP,
		    ids[i], CL_KERNEL_WORK_GROUP_SIZE);
	free(ids);
	if (rc == 0)
		rc = send_raw(c, b.data, b.len);
	free(b.data);
	return (rc != 0 ? -1 : drain_replies(c, nk));
}

/*
 * A marker whose wait list names one completed event n times, then a
 * finish.
 */
static int
att_wait_list(struct conn *c, uint64_t ev, unsigned n)
{
	uint64_t	*w;
	unsigned	 i;
	int		 rc;

	if (raw_marker(c, Q, ev, NULL, 0) != 0 ||
	    raw_finish(c, Q) != CL_SUCCESS)
		return (-1);
	if ((w = malloc(n * sizeof *w)) == NULL)
		return (-1);
	for (i = 0; i < n; i++)
		w[i] = ev;
	rc = raw_marker(c, Q, 0, w, n);
	free(w);
	if (rc != 0)
		return (-1);
	rc = raw_finish(c, Q);
	release(c, VCL__KIND__KIND_EVENT, ev);
	return (rc == CL_SUCCESS ? 0 : -1);
}

/*
 * n markers with events (ids from base), then k markers each waiting on
 * all n of them, in one write; then a finish.
 */
static int
att_wide_waits(struct conn *c, uint64_t base, unsigned n, unsigned k)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__Marker	 m = VCL__MARKER__INIT;
	Vcl__Enqueue	 e = VCL__ENQUEUE__INIT;
	struct vcl_buf	 b = { NULL, 0, 0 };
	uint64_t	*w;
	unsigned	 i;
	int		 rc = 0;

	if ((w = malloc(n * sizeof *w)) == NULL)
		return (-1);
	e.queue = Q;
	m.q = &e;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &m;
	e.has_event = 1;
	for (i = 0; i < n && rc == 0; i++) {
		e.event = w[i] = base + i;
		rc = pack_req(&b, c, &r);
	}
	if (rc == 0 && (rc = send_raw(c, b.data, b.len)) == 0)
		rc = raw_finish(c, Q) == CL_SUCCESS ? 0 : -1;
	b.len = 0;
	e.has_event = 0;
	e.n_wait = n;
	e.wait = w;
	for (i = 0; i < k && rc == 0; i++)
		rc = pack_req(&b, c, &r);
	free(w);
	if (rc == 0)
		rc = send_raw(c, b.data, b.len);
	free(b.data);
	if (rc != 0 || raw_finish(c, Q) != CL_SUCCESS)
		return (-1);
	for (i = 0; i < n; i++)
		release(c, VCL__KIND__KIND_EVENT, base + i);
	return (sync_stats(c));
}

/*
 * A chain of n markers on one queue, each waiting on the one before (the
 * first on user event base) and on wide markers' events, completed
 * before: all of it held, the user event left unset (each event of a
 * wait list costs the runtime about 0.5 us once it is set). Quiet: the
 * chain's events are notified to nobody (Enqueue.quiet), so running it
 * sends the client nothing. 0 or -1.
 */
static int
att_chain_held(struct conn *c, uint64_t base, unsigned n, unsigned wide,
    int quiet)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	u = VCL__CREATE_USER_EVENT__INIT;
	Vcl__Marker		m = VCL__MARKER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;
	struct vcl_buf		b = { NULL, 0, 0 };
	uint64_t		*w;
	unsigned		i;
	int			rc = 0;

	if ((w = malloc(((size_t)wide + 1) * sizeof *w)) == NULL)
		return (-1);
	e.queue = Q;
	m.q = &e;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &m;
	e.has_event = 1;
	for (i = 0; i < wide && rc == 0; i++) {
		e.event = w[i + 1] = base + n + 1 + i;
		rc = pack_req(&b, c, &r);
	}
	if (rc == 0 && wide > 0 && (rc = send_raw(c, b.data, b.len)) == 0)
		rc = raw_finish(c, Q) == CL_SUCCESS ? 0 : -1;
	b.len = 0;
	u.id = base;
	u.context = CTX;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &u;
	rc |= pack_req(&b, c, &r);
	e.n_wait = (size_t)wide + 1;
	e.wait = w;
	e.has_quiet = quiet;
	e.quiet = quiet;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &m;
	for (i = 1, w[0] = base; i <= n && rc == 0; i++) {
		e.event = base + i;
		rc = pack_req(&b, c, &r);
		w[0] = base + i;
	}
	free(w);
	/* All of it held once the Stats is answered. */
	if (rc == 0 && (rc = send_raw(c, b.data, b.len)) == 0)
		rc = sync_stats(c);
	free(b.data);
	return (rc != 0 ? -1 : 0);
}

/*
 * att_chain_held, then the set, the events' releases (the last
 * marker's but one) and a Stats; then the last marker's event is asked
 * for: a request read after the set, it runs after all the set released
 * (*st: its status), while the server runs them in turns. Then a
 * finish; *run_ns is from the set to the finish's reply: the chain's
 * whole run.
 */
static int
att_chain(struct conn *c, uint64_t base, unsigned n, unsigned wide,
    int *st, uint64_t *run_ns)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__SetUserEventStatus	ss = VCL__SET_USER_EVENT_STATUS__INIT;
	Vcl__Release		rl = VCL__RELEASE__INIT;
	Vcl__Stats		sm = VCL__STATS__INIT;
	struct vcl_buf		b = { NULL, 0, 0 };
	uint64_t		t0;
	unsigned		i;
	int			rc;

	*run_ns = 0;
	*st = 1;
	if (att_chain_held(c, base, n, wide, 0) != 0)
		return (-1);
	ss.event = base;
	ss.status = CL_COMPLETE;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &ss;
	rc = pack_req(&b, c, &r);
	rl.kind = VCL__KIND__KIND_EVENT;
	r.call_case = VCL__REQUEST__CALL_RELEASE;
	r.release = &rl;
	for (i = 0; i <= n + wide && rc == 0; i++) {
		rl.id = base + i;
		if (i != n)
			rc = pack_req(&b, c, &r);
	}
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &sm;
	rc |= pack_req(&b, c, &r);
	t0 = now_ns();
	if (rc == 0)
		rc = send_raw(c, b.data, b.len);
	free(b.data);
	if (rc != 0 || drain_replies(c, 1) != 0)
		return (-1);
	*st = get_info_status(c, VCL__GET_INFO__WHAT__EVENT, base + n,
	    CL_EVENT_COMMAND_EXECUTION_STATUS);
	release(c, VCL__KIND__KIND_EVENT, base + n);
	if (raw_finish(c, Q) != CL_SUCCESS)
		return (-1);
	*run_ns = now_ns() - t0;
	return (*st == CL_SUCCESS ? 0 : -1);
}

/* FillBuffer of a 1-byte pattern over size bytes of mem, then a finish. */
static int
att_fill(struct conn *c, uint64_t mem, uint64_t size)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__FillBuffer	m = VCL__FILL_BUFFER__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;
	uint8_t		pat = 0x5a;

	if (create_buffer(c, mem, CTX, size, NULL, 0) != 0)
		return (-1);
	e.queue = Q;
	m.q = &e;
	m.mem = mem;
	m.pattern.data = &pat;
	m.pattern.len = 1;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
	r.fill_buffer = &m;
	if (send_req(c, &r, NULL, 0) != 0 || raw_finish(c, Q) != CL_SUCCESS)
		return (-1);
	release(c, VCL__KIND__KIND_MEM, mem);
	return (0);
}

/*
 * CopyBufferRect of rows one byte long, as many as size bytes hold,
 * between two buffers of size; then a finish.
 */
static int
att_rect(struct conn *c, uint64_t mem, uint64_t size)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CopyBufferRect	m = VCL__COPY_BUFFER_RECT__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;
	uint64_t		zero[3] = { 0, 0, 0 };
	uint64_t		region[3] = { 1, size, 1 };

	if (create_buffer(c, mem, CTX, size, NULL, 0) != 0 ||
	    create_buffer(c, mem + 1, CTX, size, NULL, 0) != 0)
		return (-1);
	e.queue = Q;
	m.q = &e;
	m.src = mem;
	m.dst = mem + 1;
	m.n_src_origin = m.n_dst_origin = m.n_region = 3;
	m.src_origin = m.dst_origin = zero;
	m.region = region;
	m.src_row_pitch = m.dst_row_pitch = 1;
	m.src_slice_pitch = m.dst_slice_pitch = size;
	r.call_case = VCL__REQUEST__CALL_COPY_BUFFER_RECT;
	r.copy_buffer_rect = &m;
	if (send_req(c, &r, NULL, 0) != 0 || raw_finish(c, Q) != CL_SUCCESS)
		return (-1);
	release(c, VCL__KIND__KIND_MEM, mem);
	release(c, VCL__KIND__KIND_MEM, mem + 1);
	return (0);
}

/*
 * n sub-buffers of one parent made and released in one write, then a
 * Stats.
 */
static int
att_subbuffers(struct conn *c, uint64_t mem, unsigned n)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateSubBuffer	m = VCL__CREATE_SUB_BUFFER__INIT;
	Vcl__Release		rl = VCL__RELEASE__INIT;
	struct vcl_buf		b = { NULL, 0, 0 };
	unsigned		i;
	int			rc;

	if (create_buffer(c, mem, CTX, 1u << 20, NULL, 0) != 0)
		return (-1);
	m.parent = mem;
	m.flags = CL_MEM_READ_WRITE;
	m.size = 64;
	rl.kind = VCL__KIND__KIND_MEM;
	for (i = 0, rc = 0; i < n && rc == 0; i++) {
		m.id = rl.id = mem + 1 + i;
		m.origin = (uint64_t)(i % 1024) * 1024;
		r.call_case = VCL__REQUEST__CALL_CREATE_SUB_BUFFER;
		r.create_sub_buffer = &m;
		rc = pack_req(&b, c, &r);
		r.call_case = VCL__REQUEST__CALL_RELEASE;
		r.release = &rl;
		rc |= pack_req(&b, c, &r);
	}
	if (rc == 0)
		rc = send_raw(c, b.data, b.len);
	free(b.data);
	release(c, VCL__KIND__KIND_MEM, mem);
	return (rc != 0 ? -1 : sync_stats(c));
}

/* The attacker's session: a context and a queue on device 0. */
static int
att_open(struct conn *c, const struct srv *sv)
{
	struct timeval	tv = { 120, 0 };

	if (conn_session(c, sv) != 0)
		return (-1);
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (create_context(c, CTX) != 0 || create_queue(c, Q, CTX) != 0)
		return (-1);
	return (sync_stats(c));
}

/*
 * One attack of test_work: what it does, the call, and the victim's worst
 * round trip allowed (0: VIC_BOUND_S). A chain's is a quarter of its
 * whole run where that is more: far below it, whatever the build (under
 * sanitizers one marker waiting on 65536 events costs the runtime up to
 * a second, the least a turn runs).
 */
struct work {
	const char	*name;
	int		(*fn)(struct conn *);
	unsigned	 bound_s;
};

static int w_events(struct conn *c) { return (att_event_pairs(c, 100000)); }
static int w_info(struct conn *c) { return (att_info_flood(c, 200000)); }
static int w_binsizes(struct conn *c)
{
	int	st;

	if (att_binary_sizes(c, 5000, 400, (unsigned)getpid(), &st) == 0)
		return (0);
	note("GetInfo of the binary sizes: %d (1: no reply), want "
	    "CL_INVALID_VALUE", st);
	return (-1);
}
static int w_kernels(struct conn *c)
{
	return (att_kernels(c, 6000, 2000, (unsigned)getpid()));
}
static int w_waitlist(struct conn *c) { return (att_wait_list(c, 9000, 65536)); }
static int w_wide(struct conn *c) { return (att_wide_waits(c, 300000, 65536, 640)); }
static uint64_t	chain_run_ns;	/* the last chain's whole run */

/* A chain's attack: n markers (each waiting on wide events) released. */
static int
chain(struct conn *c, unsigned n, unsigned wide)
{
	uint64_t	run;
	int		rc, st;

	rc = att_chain(c, 100000, n, wide, &st, &run);
	chain_run_ns = run;
	printf("     chain of %u markers waiting on %u events each: its "
	    "whole run %.1f ms from the set\n", n, wide + 1,
	    (double)run / 1e6);
	if (rc != 0 && st != CL_SUCCESS)
		note("the last marker's event, asked for after the set: %d "
		    "(1: no reply), want CL_SUCCESS: a later request ran "
		    "before what the set released", st);
	return (rc);
}
static int w_chain(struct conn *c) { return (chain(c, 50000, 0)); }
static int w_chainwide(struct conn *c) { return (chain(c, 300, 65535)); }
static int w_fill(struct conn *c) { return (att_fill(c, 9100, 256u << 20)); }
static int w_rect(struct conn *c) { return (att_rect(c, 9200, 16u << 20)); }
static int w_subbuf(struct conn *c) { return (att_subbuffers(c, 200000, 50000)); }

static const struct work works[] = {
	{ "events", w_events },
	{ "info", w_info },
	{ "binsizes", w_binsizes },
	{ "kernels", w_kernels },
	{ "waitlist", w_waitlist },
	{ "wide", w_wide },
	{ "chain", w_chain, VIC_STALL_S },
	{ "chainwide", w_chainwide, VIC_STALL_S },
	{ "fill", w_fill },
	{ "rect", w_rect },
	{ "subbuf", w_subbuf },
};

/*
 * Each attack in turn against the one victim: the victim's round trips
 * never stall while the server does what the attacker asked.
 */
static void
test_work(void)
{
	const char	*only = getenv("ATTACK11_ONLY");
	struct srv	 sv;
	struct conn	 a;
	struct victim	 v;
	char		 name[64];
	uint64_t	 t0, bound_ms;
	unsigned	 mark;
	size_t		 i;
	int		 rc;

	a.fd = -1;
	memset(&v, 0, sizeof v);
	if (!srv_start(&sv, "work_start", "127.0.0.1:0", NULL))
		return;
	if (!check("work_victim", vic_start(&v, &sv) == 0, "no victim"))
		goto out;
	if (!check("work_attacker", att_open(&a, &sv) == 0, "no session"))
		goto out;
	for (i = 0; i < sizeof works / sizeof works[0]; i++) {
		if (only != NULL && strcmp(only, works[i].name) != 0)
			continue;
		mark = vic_mark(&v);
		chain_run_ns = 0;
		t0 = now_ns();
		rc = works[i].fn(&a);
		t0 = now_ns() - t0;
		snprintf(name, sizeof name, "work_%s_done", works[i].name);
		check(name, rc == 0, "the attack failed");
		snprintf(name, sizeof name, "work_%s_victim", works[i].name);
		bound_ms = (uint64_t)(works[i].bound_s != 0 ?
		    works[i].bound_s : VIC_BOUND_S) * 1000;
		if (bound_ms < chain_run_ns / 4000000)
			bound_ms = chain_run_ns / 4000000;
		vic_check_within(&v, name, mark, t0, bound_ms);
	}
out:
	vic_stop(&v);
	conn_close(&a);
	check("work_alive", srv_alive(&sv), "server gone (%s)",
	    srv_how(&sv));
	srv_stop(&sv, "work_exit");
}

/* The server's resident memory in KiB (VmRSS), 0 when unknown. */
static unsigned long
srv_rss_kib(const struct srv *sv)
{
	char		 path[64], line[256];
	unsigned long	 kib = 0;
	FILE		*f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)sv->pid);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmRSS: %lu", &kib) == 1)
			break;
	fclose(f);
	return (kib);
}

/*
 * A session that asks for 256 reads of 1 MiB and never reads a reply:
 * their staging is charged to it (--max-session-bytes 128M: the reads
 * past it fail), the server stops reading it past 64 MiB of replies
 * queued, its memory grows by no more than the charge, and the victim
 * is served meanwhile and once it is gone.
 */
/*
 * What the server may grow by: the session's 128 MiB charge and slack; an
 * ASan build also keeps what it freed in its quarantine (256 MiB by
 * default), resident: 122 MB to 360 MB there in one run.
 */
#ifdef __SANITIZE_ADDRESS__
#define NOREAD_SLACK_KIB	((192ul + 256ul) << 10)
#else
#define NOREAD_SLACK_KIB	(192ul << 10)
#endif

static void
test_noread(void)
{
	static const char *const args[] = { "--max-session-bytes", "128M",
		NULL };
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	 m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	 e = VCL__ENQUEUE__INIT;
	struct srv	 sv;
	struct conn	 a;
	struct victim	 v;
	unsigned long	 rss0, rss1;
	uint64_t	 t0;
	unsigned	 mark, i;
	int		 rc = 0;

	a.fd = -1;
	memset(&v, 0, sizeof v);
	if (!srv_start(&sv, "noread_start", "127.0.0.1:0", args))
		return;
	if (!check("noread_victim", vic_start(&v, &sv) == 0, "no victim"))
		goto out;
	if (!check("noread_attacker", att_open(&a, &sv) == 0 &&
	    create_buffer(&a, MEM, CTX, 1u << 20, NULL, 0) == 0 &&
	    sync_stats(&a) == 0, "no session"))
		goto out;
	rss0 = srv_rss_kib(&sv);
	mark = vic_mark(&v);
	t0 = now_ns();
	e.queue = Q;
	m.q = &e;
	m.mem = MEM;
	m.size = 1u << 20;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	for (i = 0; i < 256 && rc == 0; i++)
		rc = send_req(&a, &r, NULL, 0);
	check("noread_sent", rc == 0, "request %u not sent", i);
	/* A few seconds of the victim with the replies piled up. */
	for (i = 0; i < 300 && !atomic_load(&v.failed); i++)
		poll_wait();
	rss1 = srv_rss_kib(&sv);
	t0 = now_ns() - t0;
	vic_check(&v, "noread_victim_served", mark, t0);
	printf("     noread: server resident %lu KiB before, %lu KiB with "
	    "the replies unread\n", rss0, rss1);
	check("noread_bounded", rss1 < rss0 + NOREAD_SLACK_KIB, "the server "
	    "grew from %lu KiB to %lu KiB for one session's unread replies",
	    rss0, rss1);
	conn_close(&a);
	mark = vic_mark(&v);
	vic_check(&v, "noread_gone_victim", mark, 0);
out:
	vic_stop(&v);
	conn_close(&a);
	check("noread_alive", srv_alive(&sv), "server gone (%s)",
	    srv_how(&sv));
	srv_stop(&sv, "noread_exit");
}

/*
 * Sessions that take every place --max-sessions leaves and drip a frame
 * header a byte at a time: a further session is refused while they
 * last (a server-wide limit), and each is closed by --frame-timeout, after
 * which a new session is taken. The victim is served throughout.
 */
static void
test_slowloris(void)
{
	static const char *const args[] = { "--max-sessions", "4",
		"--frame-timeout", "2", NULL };
	struct srv	 sv;
	struct conn	 d[3], x;
	struct victim	 v;
	struct vcl_buf	 b = { NULL, 0, 0 };
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__Stats	 m = VCL__STATS__INIT;
	struct pollfd	 pfd;
	uint64_t	 t0;
	unsigned	 mark;
	size_t		 sent = 0;
	int		 i, k, open, refused;

	x.fd = -1;
	for (k = 0; k < 3; k++)
		d[k].fd = -1;
	memset(&v, 0, sizeof v);
	if (!srv_start(&sv, "loris_start", "127.0.0.1:0", args))
		return;
	if (!check("loris_victim", vic_start(&v, &sv) == 0, "no victim"))
		goto out;
	for (k = 0; k < 3; k++)
		if (!check("loris_dripper", conn_session(&d[k], &sv) == 0,
		    "session %d not taken", k))
			goto out;
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if (pack_req(&b, &d[0], &r) != 0)
		goto out;
	mark = vic_mark(&v);
	t0 = now_ns();
	refused = conn_session(&x, &sv) != 0;
	conn_close(&x);
	check("loris_full", refused, "a fifth session was taken past "
	    "--max-sessions 4");
	/* A byte every 100 ms to each until the server closes them. */
	for (i = 0, open = 3; i < 600 && open > 0; i++) {
		for (k = 0, open = 0; k < 3; k++) {
			if (d[k].fd == -1)
				continue;
			pfd.fd = d[k].fd;
			pfd.events = POLLIN;
			if (poll(&pfd, 1, 0) == 1) {
				conn_close(&d[k]);
				continue;
			}
			if (sent < b.len)
				(void)send_raw(&d[k], b.data + sent, 1);
			open++;
		}
		sent += sent < b.len - 1;
		if (open > 0 && sent < 2)
			sent = 1;
		usleep(100000);
	}
	t0 = now_ns() - t0;
	free(b.data);
	check("loris_reaped", open == 0, "%d dripping sessions still open "
	    "after %.1f s", open, (double)t0 / 1e9);
	printf("     loris: dripping sessions closed %.1f s after they "
	    "began\n", (double)t0 / 1e9);
	check("loris_after", conn_session(&x, &sv) == 0, "no session once "
	    "the dripping ones went");
	vic_check(&v, "loris_victim_served", mark, t0);
out:
	vic_stop(&v);
	conn_close(&x);
	for (k = 0; k < 3; k++)
		conn_close(&d[k]);
	check("loris_alive", srv_alive(&sv), "server gone (%s)",
	    srv_how(&sv));
	srv_stop(&sv, "loris_exit");
}

/*
 * A kernel that never ends, in the attacker's context on the victim's
 * device: PoCL runs the victim's kernels on its other threads, and the
 * server's loop never waits on it, also once the attacker's session
 * closed with the kernel still running. The server is killed at the end:
 * no runtime can end a kernel that never ends.
 */
static void
test_endless(void)
{
	static const char	src[] =
	    "__kernel void forever(__global volatile uint *o)\n"
	    "{ uint x = 0; while (o[1] == 0) o[0] = ++x; }\n";
	struct srv	 sv;
	struct conn	 a;
	struct victim	 v;
	Vcl__KernelArg	 ka, *kap = &ka;
	uint64_t	 t0;
	unsigned	 mark;

	a.fd = -1;
	memset(&v, 0, sizeof v);
	if (!srv_start(&sv, "endless_start", "127.0.0.1:0", NULL))
		return;
	if (!check("endless_victim", vic_start(&v, &sv) == 0, "no victim"))
		goto out;
	vcl__kernel_arg__init(&ka);
	ka.index = 0;
	ka.type = VCL__KERNEL_ARG__TYPE__MEM;
	ka.has_mem = 1;
	ka.mem = MEM;
	if (!check("endless_attacker", att_open(&a, &sv) == 0 &&
	    create_buffer(&a, MEM, CTX, 64, NULL, 0) == 0 &&
	    create_program(&a, PROG, CTX, src) == 0 &&
	    raw_build(&a, PROG, NULL) == CL_SUCCESS &&
	    raw_kernel(&a, KERN, PROG, "forever") == CL_SUCCESS &&
	    raw_ndrange(&a, Q, KERN, 1, 0, &kap, 1, 0) == 0 &&
	    sync_stats(&a) == 0, "no endless kernel"))
		goto out;
	mark = vic_mark(&v);
	t0 = now_ns();
	for (int i = 0; i < 300 && !atomic_load(&v.failed); i++)
		poll_wait();
	vic_check(&v, "endless_victim_served", mark, now_ns() - t0);
	conn_close(&a);
	mark = vic_mark(&v);
	t0 = now_ns();
	for (int i = 0; i < 200 && !atomic_load(&v.failed); i++)
		poll_wait();
	vic_check(&v, "endless_closed_victim", mark, now_ns() - t0);
out:
	vic_stop(&v);
	conn_close(&a);
	check("endless_alive", srv_alive(&sv), "server gone (%s)",
	    srv_how(&sv));
	srv_kill(&sv);
}

/*
 * att_chain_held, then the set and a Stats behind it, answered once the
 * set was read: the release runs in turns from there. 0 or -1.
 */
static int
att_chain_set(struct conn *c, uint64_t base, unsigned n, unsigned wide,
    int quiet)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__SetUserEventStatus	ss = VCL__SET_USER_EVENT_STATUS__INIT;
	Vcl__Stats		sm = VCL__STATS__INIT;
	struct vcl_buf		b = { NULL, 0, 0 };
	int			rc;

	rc = att_chain_held(c, base, n, wide, quiet);
	ss.event = base;
	ss.status = CL_COMPLETE;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &ss;
	rc |= pack_req(&b, c, &r);
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &sm;
	rc |= pack_req(&b, c, &r);
	if (rc == 0)
		rc = send_raw(c, b.data, b.len);
	free(b.data);
	return (rc == 0 && drain_replies(c, 1) == 0 ? 0 : -1);
}

/*
 * A client gone while what its set released runs in turns: the server
 * lives, serves the victim, drops what was left to run once it sees the
 * hang-up (the chain is quiet: no write to the gone client fails to tell;
 * markers run: not all of it), and holds nothing of that session.
 */
static void
test_chaingone(void)
{
	Vcl__StatsResult	 st;
	struct srv		 sv;
	struct conn		 a, w;
	struct victim		 v;
	uint64_t		 ran;
	unsigned		 mark;

	a.fd = w.fd = -1;
	memset(&v, 0, sizeof v);
	if (!srv_start(&sv, "chaingone_start", "127.0.0.1:0", NULL))
		return;
	if (!check("chaingone_attacker", att_open(&a, &sv) == 0,
	    "no session"))
		goto out;
	if (!check("chaingone_set", att_chain_set(&a, 100000, 50000, 0, 1) == 0,
	    "the chain was not held and set"))
		goto out;
	conn_close(&a);
	if (!check("chaingone_victim", vic_start(&v, &sv) == 0, "no victim"))
		goto out;
	mark = vic_mark(&v);
	vic_check(&v, "chaingone_victim_served", mark, 0);
	vic_stop(&v);
	/* Nothing of either session is left: 60 s (ASan, load). */
	check("chaingone_freed", conn_session(&w, &sv) == 0 &&
	    wait_empty_polls(&w, &st, 3 * STATS_POLLS) == 0, "the server "
	    "still holds %llu objects, %llu bytes",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
	ran = raw_op_count(&w, VCL__REQUEST__CALL_MARKER);
	check("chaingone_dropped", ran < 50000 / 2, "%llu markers of the "
	    "gone client's chain of 50000 ran", (unsigned long long)ran);
out:
	vic_stop(&v);
	conn_close(&a);
	conn_close(&w);
	check("chaingone_alive", srv_alive(&sv), "server gone (%s)",
	    srv_how(&sv));
	srv_stop(&sv, "chaingone_exit");
}

/*
 * SIGTERM while a set user event's release runs in turns: the server
 * drains (no new session), the victim's session ends, and the server
 * exits 0 in its grace period, dropping what was still to run (ASan
 * builds: nothing used after the session went).
 */
static void
test_chaindrain(void)
{
	struct srv		 sv;
	struct conn		 a;
	struct victim		 v;
	uint64_t		 t0;
	int			 st;

	a.fd = -1;
	memset(&v, 0, sizeof v);
	if (!srv_start(&sv, "chaindrain_start", "127.0.0.1:0", NULL))
		return;
	if (!check("chaindrain_victim", vic_start(&v, &sv) == 0,
	    "no victim"))
		goto out;
	if (!check("chaindrain_attacker", att_open(&a, &sv) == 0,
	    "no session"))
		goto out;
	/* The whole chain of test_work's chainwide, held: no set, no finish. */
	if (!check("chaindrain_set", att_chain_set(&a, 100000, 300, 65535, 0) ==
	    0, "the chain was not held and set"))
		goto out;
	vic_stop(&v);
	t0 = now_ns();
	kill(sv.pid, SIGTERM);
	st = srv_wait_exit(&sv);
	printf("     chaindrain: the server exited %.1f s after SIGTERM\n",
	    (double)(now_ns() - t0) / 1e9);
	check("chaindrain_exit", st == 0 && WIFEXITED(sv.status) &&
	    WEXITSTATUS(sv.status) == 0, "server %s after SIGTERM, want "
	    "exit 0; see %s/stderr", srv_how(&sv), sv.dir);
out:
	vic_stop(&v);
	conn_close(&a);
	srv_kill(&sv);
}

static const struct test tests[] = {
	{ "work",	test_work,	600 },
	{ "noread",	test_noread,	120 },
	{ "slowloris",	test_slowloris,	180 },
	{ "endless",	test_endless,	120 },
	{ "chaindrain",	test_chaindrain, 180 },
	{ "chaingone",	test_chaingone,	180 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof
	    tests[0]));
}
