/* shmring_test.c - a client's ring of shared slots (ShmRing) on the raw wire. */

/*
 * usage: shmring_test VCLSERVER
 *
 * A session may give the server one ring: a sealed memfd of its own
 * process, whose header names the session (magic and greeting nonce).
 * WriteBuffer and ReadBuffer then name a slot instead of carrying bytes.
 * Checked here: bytes go both ways exactly and are counted in
 * client_bytes_shared; every hostile ring (no seals, a wrong size, another
 * session's header, a file that is no memfd, a device, the server's own
 * process, a process that does not exist, a second ring, slots out of
 * range) and
 * every hostile transfer (no ring, a slot out of range, a length past its
 * slot, a slot in use, bytes in the frame) is refused and the server
 * carries on; a client that vanishes with a slot in use leaves nothing
 * mapped in the server.
 */

#include <sys/mman.h>

#include "rawproto.h"
#include "vcl_shm.h"

#define SLOTS		4
#define SLOT		(256u << 10)
#define RING		(VCL_SHM_PAGE + SLOTS * SLOT)
#define BUF		(3 * SLOT)

#define R_CTX		1
#define R_Q		2
#define R_MEM		3
#define R_UE		4
#define R_BIG		5
#define R_Q2		6
#define FILL		(64u << 20)
#define R_EV		100		/* events from here up */
#define ORDER_ROUNDS	10

/* A test ring: its fd and mapping. */
struct ring {
	int	 fd;
	uint8_t	*base;
	size_t	 size;
};

/*
 * A memfd of size bytes with the given seals (0: none, -1: a plain
 * unlinked file instead), its header naming the session of c.
 */
static int
ring_make(struct ring *rg, const struct conn *c, size_t size, int seals)
{
	char	 path[PATH_MAX];

	rg->size = size;
	rg->base = MAP_FAILED;
	if (seals == -1) {
		snprintf(path, sizeof path, "%s/plainXXXXXX", root);
		if ((rg->fd = mkstemp(path)) != -1)
			unlink(path);
	} else
		rg->fd = memfd_create("vcl-test-ring", MFD_CLOEXEC |
		    MFD_ALLOW_SEALING);
	if (rg->fd == -1 || ftruncate(rg->fd, (off_t)size) != 0 ||
	    (seals > 0 && fcntl(rg->fd, F_ADD_SEALS, seals) != 0) ||
	    (rg->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
	    rg->fd, 0)) == MAP_FAILED) {
		note("ring: %s", strerror(errno));
		return (-1);
	}
	memcpy(rg->base, VCL_SHM_MAGIC, sizeof VCL_SHM_MAGIC);
	memcpy(rg->base + sizeof VCL_SHM_MAGIC, c->nonce, c->nonce_len);
	return (0);
}

static void
ring_free(struct ring *rg)
{
	if (rg->base != MAP_FAILED)
		munmap(rg->base, rg->size);
	if (rg->fd != -1)
		close(rg->fd);
	rg->fd = -1;
	rg->base = MAP_FAILED;
}

/* The slot's bytes. */
static uint8_t *
ring_slot(struct ring *rg, unsigned i)
{
	return (rg->base + VCL_SHM_PAGE + (size_t)i * SLOT);
}

/* ShmRing{pid, fd, slots, slot_size}: the reply's status, 1 if none. */
static int
ring_attach(struct conn *c, uint32_t pid, uint32_t fd, uint32_t slots,
    uint64_t slot_size)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ShmRing	m = VCL__SHM_RING__INIT;
	struct reply	rp;
	int		st;

	m.pid = pid;
	m.fd = fd;
	m.slots = slots;
	m.slot_size = slot_size;
	r.call_case = VCL__REQUEST__CALL_SHM_RING;
	r.shm_ring = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.r->status;
	reply_free(&rp);
	return (st);
}

/* Send a shared WriteBuffer (ReadBuffer if !write); its seq, 0 on error. */
static uint64_t
send_xfer(struct conn *c, int write, uint64_t off, uint64_t size,
    uint32_t slot, uint64_t wait)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	w = VCL__WRITE_BUFFER__INIT;
	Vcl__ReadBuffer		rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT;

	e.queue = R_Q;
	if (wait != 0) {
		e.n_wait = 1;
		e.wait = &wait;
	}
	if (write) {
		w.q = &e;
		w.mem = R_MEM;
		w.offset = off;
		w.size = size;
		w.has_shm_slot = 1;
		w.shm_slot = slot;
		r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
		r.write_buffer = &w;
	} else {
		rb.q = &e;
		rb.mem = R_MEM;
		rb.offset = off;
		rb.size = size;
		rb.has_shm_slot = 1;
		rb.shm_slot = slot;
		r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
		r.read_buffer = &rb;
	}
	if (send_req(c, &r, NULL, 0) != 0)
		return (0);
	return (r.seq);
}

/* A shared transfer's reply: its status; 1 if none came, 2 with bulk. */
static int
xfer(struct conn *c, int write, uint64_t off, uint64_t size, uint32_t slot)
{
	struct reply	rp;
	uint64_t	seq;
	int		st, i;

	if ((seq = send_xfer(c, write, off, size, slot, 0)) == 0)
		return (1);
	for (i = 0; i < 1000; i++) {
		if (recv_msg(c, &rp) != 0)
			return (1);
		if (rp.r != NULL && rp.r->seq == seq) {
			st = rp.bulk_len != 0 ? 2 : rp.r->status;
			reply_free(&rp);
			return (st);
		}
		reply_free(&rp);
	}
	return (1);
}

/* Session with context, queue and a BUF-byte buffer of zeros. */
static int
setup(struct conn *c, const struct srv *sv)
{
	if (conn_session(c, sv) != 0)
		return (-1);
	if (create_context(c, R_CTX) != 0 || create_queue(c, R_Q, R_CTX) != 0 ||
	    create_buffer(c, R_MEM, R_CTX, BUF, NULL, 0) != 0)
		return (-1);
	return (0);
}

/* Create user event R_UE (no reply). */
static int
user_event(struct conn *c)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	ue = VCL__CREATE_USER_EVENT__INIT;

	ue.id = R_UE;
	ue.context = R_CTX;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	return (send_req(c, &r, NULL, 0));
}

/*
 * A fill of the FILL-byte buffer R_BIG on queue R_Q, a shared write from
 * slot 1 behind it, and a shared read into slot 1 on queue R_Q2, in one
 * send: the read comes while the write holds its slot. Returns the
 * write's seq (the read's is the next), 0 on error.
 */
static uint64_t
send_busy(struct conn *c)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__FillBuffer		f = VCL__FILL_BUFFER__INIT;
	Vcl__WriteBuffer	w = VCL__WRITE_BUFFER__INIT;
	Vcl__ReadBuffer		rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		e = VCL__ENQUEUE__INIT, e2 = VCL__ENQUEUE__INIT;
	struct vcl_buf		b;
	uint8_t			pat[4] = { 1, 2, 3, 4 };
	uint64_t		seq;
	int			rc;

	if (create_buffer(c, R_BIG, R_CTX, FILL, NULL, 0) != 0 ||
	    create_queue(c, R_Q2, R_CTX) != 0)
		return (0);
	memset(&b, 0, sizeof b);
	e.queue = R_Q;
	e2.queue = R_Q2;
	f.q = &e;
	f.mem = R_BIG;
	f.pattern.data = pat;
	f.pattern.len = sizeof pat;
	f.size = FILL;
	r.seq = ++c->seq;
	r.call_case = VCL__REQUEST__CALL_FILL_BUFFER;
	r.fill_buffer = &f;
	rc = vcl_buf_pack(&b, &r.base, 0);
	w.q = &e;
	w.mem = R_MEM;
	w.size = 4096;
	w.has_shm_slot = 1;
	w.shm_slot = 1;
	r.seq = seq = ++c->seq;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &w;
	rc |= vcl_buf_pack(&b, &r.base, 0);
	rb.q = &e2;
	rb.mem = R_MEM;
	rb.size = 4096;
	rb.has_shm_slot = 1;
	rb.shm_slot = 1;
	r.seq = ++c->seq;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &rb;
	rc |= vcl_buf_pack(&b, &r.base, 0);
	if (rc != 0 || send_raw(c, b.data, b.len) != 0)
		seq = 0;
	vcl_buf_free(&b);
	return (seq);
}

/* How many mappings of test rings the server's process holds; -1: none known. */
static int
server_maps(const struct srv *sv)
{
	char	 path[64], line[512];
	FILE	*f;
	int	 n = 0;

	snprintf(path, sizeof path, "/proc/%ld/maps", (long)sv->pid);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof line, f) != NULL)
		if (strstr(line, "vcl-test-ring") != NULL)
			n++;
	fclose(f);
	return (n);
}

static const char *const ring_args[] = { "--shm-ring-max", "2M", NULL };

/*
 * Bytes both ways through the ring: written from slots into the buffer at
 * offsets, read back into other slots, equal; counted as shared.
 */
static void
test_roundtrip(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct ring		 rg = { -1, MAP_FAILED, 0 };
	Vcl__StatsResult	 st;
	size_t			 i;
	int			 ok = 1;

	c.fd = -1;
	if (!srv_start(&sv, "roundtrip_server", "127.0.0.1:0", ring_args))
		return;
	if (!check("roundtrip_setup", setup(&c, &sv) == 0 &&
	    ring_make(&rg, &c, RING, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_SEAL) == 0, "no session or ring"))
		goto out;
	check("roundtrip_attach", ring_attach(&c, (uint32_t)getpid(),
	    (uint32_t)rg.fd, SLOTS, SLOT) == CL_SUCCESS, "ring refused");
	for (i = 0; i < 2 * SLOT; i++)
		ring_slot(&rg, i / SLOT)[i % SLOT] = (uint8_t)(i * 7 + (i >> 9));
	check("roundtrip_write", xfer(&c, 1, 0, SLOT, 0) == CL_SUCCESS &&
	    xfer(&c, 1, SLOT + 100, SLOT - 100, 1) == CL_SUCCESS,
	    "shared writes failed");
	memset(ring_slot(&rg, 2), 0xee, 2 * SLOT);
	check("roundtrip_read", xfer(&c, 0, 0, SLOT, 2) == CL_SUCCESS &&
	    xfer(&c, 0, SLOT + 100, SLOT - 100, 3) == CL_SUCCESS,
	    "shared reads failed");
	for (i = 0; i < SLOT && ok; i++)
		ok = ring_slot(&rg, 2)[i] == ring_slot(&rg, 0)[i];
	for (i = 0; i < SLOT - 100 && ok; i++)
		ok = ring_slot(&rg, 3)[i] == ring_slot(&rg, 1)[i];
	check("roundtrip_bytes", ok, "bytes read back differ at %zu", i);
	/* Counted as each copy completes on the loop: let it settle. */
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(&c, &st) != 0 || (st.has_client_bytes_shared &&
		    st.client_bytes_shared == 4 * (uint64_t)SLOT - 200))
			break;
		poll_wait();
	}
	check("roundtrip_counted", st.has_client_bytes_shared &&
	    st.client_bytes_shared == 4 * (uint64_t)SLOT - 200,
	    "client_bytes_shared %llu", (unsigned long long)
	    st.client_bytes_shared);
	release(&c, VCL__KIND__KIND_MEM, R_MEM);
	release(&c, VCL__KIND__KIND_QUEUE, R_Q);
	release(&c, VCL__KIND__KIND_CONTEXT, R_CTX);
	check("roundtrip_empty", wait_empty(&c, &st) == 0, "objects %llu",
	    (unsigned long long)st.objects);
out:
	ring_free(&rg);
	conn_close(&c);
	srv_stop(&sv, "roundtrip_server_stop");
}

/* Rings that are not what they claim, and transfers past the ring. */
static void
test_hostile(void)
{
	struct srv	 sv;
	struct conn	 c, other;
	struct ring	 rg = { -1, MAP_FAILED, 0 }, bad = { -1, MAP_FAILED, 0 };
	const int	 seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	uint32_t	 pid = (uint32_t)getpid();
	uint64_t	 seq;
	struct reply	 rp;
	Vcl__StatsResult sst;
	int		 st, got;

	c.fd = other.fd = -1;
	if (!srv_start(&sv, "hostile_server", "127.0.0.1:0", ring_args))
		return;
	if (!check("hostile_setup", setup(&c, &sv) == 0 &&
	    conn_session(&other, &sv) == 0, "no sessions"))
		goto out;
	st = xfer(&c, 1, 0, 4096, 0);
	check("hostile_no_ring", st == CL_INVALID_OPERATION,
	    "a shared write before any ring: %d", st);
	/* Unsealed; sealed but not against shrinking; a plain file. */
	if (ring_make(&bad, &c, RING, 0) == 0)
		check("hostile_unsealed", ring_attach(&c, pid, (uint32_t)bad.fd,
		    SLOTS, SLOT) == CL_INVALID_VALUE, "unsealed ring taken");
	ring_free(&bad);
	if (ring_make(&bad, &c, RING, F_SEAL_GROW | F_SEAL_SEAL) == 0)
		check("hostile_shrinkable", ring_attach(&c, pid,
		    (uint32_t)bad.fd, SLOTS, SLOT) == CL_INVALID_VALUE,
		    "a ring that may shrink taken");
	ring_free(&bad);
	if (ring_make(&bad, &c, RING, -1) == 0)
		check("hostile_plain_file", ring_attach(&c, pid,
		    (uint32_t)bad.fd, SLOTS, SLOT) == CL_INVALID_VALUE,
		    "a plain file taken as a ring");
	ring_free(&bad);
	/* Smaller than its slots claim. */
	if (ring_make(&bad, &c, RING - SLOT, seals) == 0)
		check("hostile_short", ring_attach(&c, pid, (uint32_t)bad.fd,
		    SLOTS, SLOT) == CL_INVALID_VALUE, "a short ring taken");
	ring_free(&bad);
	/* Another session's header (other's nonce). */
	if (ring_make(&bad, &other, RING, seals) == 0)
		check("hostile_other_session", ring_attach(&c, pid,
		    (uint32_t)bad.fd, SLOTS, SLOT) == CL_INVALID_VALUE,
		    "a ring naming another session taken");
	ring_free(&bad);
	if (!check("hostile_ring", ring_make(&rg, &c, RING, seals) == 0,
	    "no ring"))
		goto out;
	check("hostile_no_fd", ring_attach(&c, pid, 100000, SLOTS, SLOT) ==
	    CL_INVALID_VALUE, "a ring of no fd taken");
	{
		int	dn = open("/dev/null", O_RDWR | O_CLOEXEC);

		check("hostile_device", dn != -1 && ring_attach(&c, pid,
		    (uint32_t)dn, SLOTS, SLOT) == CL_INVALID_VALUE,
		    "a device taken as a ring");
		if (dn != -1)
			close(dn);
	}
	check("hostile_no_process", ring_attach(&c, 0x7ffffff0u,
	    (uint32_t)rg.fd, SLOTS, SLOT) == CL_INVALID_VALUE,
	    "a ring of no process taken");
	check("hostile_server_process", ring_attach(&c, (uint32_t)sv.pid, 0,
	    SLOTS, SLOT) == CL_INVALID_VALUE, "the server's own fd taken");
	check("hostile_slots", ring_attach(&c, pid, (uint32_t)rg.fd, 0, SLOT) ==
	    CL_INVALID_VALUE && ring_attach(&c, pid, (uint32_t)rg.fd, 65,
	    SLOT) == CL_INVALID_VALUE && ring_attach(&c, pid, (uint32_t)rg.fd,
	    SLOTS, 1000) == CL_INVALID_VALUE, "slot counts or sizes taken");
	check("hostile_over_max", ring_attach(&c, pid, (uint32_t)rg.fd, 16,
	    SLOT * 2) == CL_INVALID_VALUE, "a ring past --shm-ring-max taken");
	check("hostile_good", ring_attach(&c, pid, (uint32_t)rg.fd, SLOTS,
	    SLOT) == CL_SUCCESS, "the good ring refused");
	check("hostile_second", ring_attach(&c, pid, (uint32_t)rg.fd, SLOTS,
	    SLOT) == CL_INVALID_OPERATION, "a second ring taken");
	check("hostile_slot_range", xfer(&c, 1, 0, 4096, SLOTS) ==
	    CL_INVALID_VALUE && xfer(&c, 0, 0, 4096, 99) == CL_INVALID_VALUE,
	    "a slot past the ring taken");
	check("hostile_past_slot", xfer(&c, 1, 0, SLOT + 1, 0) ==
	    CL_INVALID_VALUE && xfer(&c, 0, 0, SLOT + 1, 0) ==
	    CL_INVALID_VALUE, "a length past its slot taken");
	check("hostile_past_buffer", xfer(&c, 1, BUF - 10, 4096, 0) ==
	    CL_INVALID_VALUE, "a range past the buffer taken");
	/*
	 * Slot 1 taken by a write the runtime runs behind a long fill, and
	 * named again by a read on another queue sent in the same burst.
	 */
	seq = send_busy(&c);
	st = 1;
	got = 0;
	while (seq != 0 && recv_msg(&c, &rp) == 0) {
		if (rp.r != NULL && rp.r->seq == seq + 1)
			st = rp.r->status;
		if (rp.r != NULL && rp.r->seq == seq)
			got = rp.r->status == CL_SUCCESS ? 1 : -1;
		reply_free(&rp);
		if (got != 0 && st != 1)
			break;
	}
	check("hostile_in_use", st == CL_INVALID_VALUE,
	    "a slot in use taken again: %d", st);
	check("hostile_held_done", got == 1, "the write behind the fill: %d",
	    got);
	check("hostile_slot_back", xfer(&c, 0, 0, 4096, 1) == CL_SUCCESS,
	    "slot 1 not free after its write");
	/* Bytes in the frame of a shared write: the session ends. */
	{
		Vcl__Request		r = VCL__REQUEST__INIT;
		Vcl__WriteBuffer	w = VCL__WRITE_BUFFER__INIT;
		Vcl__Enqueue		e = VCL__ENQUEUE__INIT;
		uint8_t			b[16] = { 0 };

		e.queue = R_Q;
		w.q = &e;
		w.mem = R_MEM;
		w.size = sizeof b;
		w.has_shm_slot = 1;
		r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
		r.write_buffer = &w;
		check("hostile_bulk_closes", send_req(&c, &r, b, sizeof b) ==
		    0 && wait_closed(&c) == 1, "session kept");
	}
	check("hostile_alive", srv_alive(&sv) && stats(&other, &sst) == 0,
	    "server gone");
out:
	ring_free(&rg);
	conn_close(&c);
	conn_close(&other);
	srv_stop(&sv, "hostile_server_stop");
}

/*
 * A client that vanishes with a slot held by a write waiting on a user
 * event: the server holds nothing after, its mapping of the ring included.
 */
static void
test_vanish(void)
{
	struct srv		 sv;
	struct conn		 c, w;
	struct ring		 rg = { -1, MAP_FAILED, 0 };
	Vcl__StatsResult	 st;
	int			 i, n = -1;

	c.fd = w.fd = -1;
	if (!srv_start(&sv, "vanish_server", "127.0.0.1:0", ring_args))
		return;
	if (!check("vanish_setup", setup(&c, &sv) == 0 && ring_make(&rg, &c,
	    RING, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0 &&
	    ring_attach(&c, (uint32_t)getpid(), (uint32_t)rg.fd, SLOTS,
	    SLOT) == CL_SUCCESS && user_event(&c) == 0 &&
	    send_xfer(&c, 1, 0, SLOT, 2, R_UE) != 0 &&
	    send_xfer(&c, 0, SLOT, SLOT, 3, 0) != 0 &&
	    conn_session(&w, &sv) == 0, "no session, ring or held write"))
		goto out;
	check("vanish_mapped", server_maps(&sv) > 0, "ring not mapped");
	conn_close(&c);
	ring_free(&rg);
	check("vanish_empty", wait_empty(&w, &st) == 0, "objects %llu bytes "
	    "%llu", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes);
	for (i = 0; i < STATS_POLLS && (n = server_maps(&sv)) != 0; i++)
		poll_wait();
	check("vanish_unmapped", n == 0, "the server still maps the ring "
	    "(%d)", n);
out:
	ring_free(&rg);
	conn_close(&c);
	conn_close(&w);
	srv_stop(&sv, "vanish_server_stop");
}

/*
 * A marker's Notify comes before the reply of a shared read behind it,
 * even when the marker's callback reaches the loop late
 * (VCL_TEST_FIRE_DELAY_US): the read's reply waits for it.
 */
static void
test_order(void)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__Marker	 m = VCL__MARKER__INIT;
	Vcl__Enqueue	 e = VCL__ENQUEUE__INIT;
	struct srv	 sv;
	struct conn	 c;
	struct ring	 rg = { -1, MAP_FAILED, 0 };
	struct reply	 rp;
	uint64_t	 seq;
	size_t		 k;
	int		 i, n, seen, late = 0, bad = 0;

	c.fd = -1;
	setenv("VCL_TEST_FIRE_DELAY_US", "20000", 1);
	i = srv_start(&sv, "order_server", "127.0.0.1:0", ring_args);
	unsetenv("VCL_TEST_FIRE_DELAY_US");
	if (!i)
		return;
	if (!check("order_setup", setup(&c, &sv) == 0 && ring_make(&rg, &c,
	    RING, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0 &&
	    ring_attach(&c, (uint32_t)getpid(), (uint32_t)rg.fd, SLOTS,
	    SLOT) == CL_SUCCESS, "no session or ring"))
		goto out;
	for (i = 0; i < ORDER_ROUNDS; i++) {
		e.queue = R_Q;
		e.has_event = 1;
		e.event = R_EV + (uint64_t)i;
		m.q = &e;
		r.call_case = VCL__REQUEST__CALL_MARKER;
		r.marker = &m;
		if (send_req(&c, &r, NULL, 0) != 0 ||
		    (seq = send_xfer(&c, 0, 0, SLOT, 0, 0)) == 0) {
			bad++;
			break;
		}
		for (n = 0, seen = 0; n < 1000; n++) {
			if (recv_msg(&c, &rp) != 0) {
				n = 1000;
				break;
			}
			for (k = 0; k < rp.tc->n_notify; k++)
				if (rp.tc->notify[k]->event == e.event)
					seen = 1;
			if (rp.r != NULL && rp.r->seq == seq) {
				if (rp.r->status != CL_SUCCESS)
					bad++;
				reply_free(&rp);
				break;
			}
			reply_free(&rp);
		}
		if (n == 1000)
			bad++;
		else if (!seen)
			late++;
	}
	check("order_notify", bad == 0 && late == 0, "%d marker + shared "
	    "read: %d failed, %d read replies before the marker's Notify",
	    ORDER_ROUNDS, bad, late);
out:
	ring_free(&rg);
	conn_close(&c);
	srv_stop(&sv, "order_server_stop");
}

/* --shm-ring-max 0: no ring offered, none taken. */
static void
test_off(void)
{
	static const char *const off_args[] = { "--shm-ring-max", "0", NULL };
	struct srv	 sv;
	struct conn	 c;
	struct ring	 rg = { -1, MAP_FAILED, 0 };

	c.fd = -1;
	if (!srv_start(&sv, "off_server", "127.0.0.1:0", off_args))
		return;
	if (check("off_setup", setup(&c, &sv) == 0 && ring_make(&rg, &c, RING,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0, "no session"))
		check("off_refused", ring_attach(&c, (uint32_t)getpid(),
		    (uint32_t)rg.fd, SLOTS, SLOT) == CL_INVALID_OPERATION,
		    "a ring taken with --shm-ring-max 0");
	ring_free(&rg);
	conn_close(&c);
	srv_stop(&sv, "off_server_stop");
}

static const struct test tests[] = {
	{ "roundtrip",	test_roundtrip,	60 },
	{ "hostile",	test_hostile,	60 },
	{ "vanish",	test_vanish,	60 },
	{ "off",	test_off,	30 },
	{ "order",	test_order,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
