/*
 * vcl_shm.c - a client's ring of shared slots (ShmRing): the bulk of a
 * client on this host's WriteBuffer and ReadBuffer goes through a slot of a
 * sealed memfd of the client's instead of the control stream.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vcl_enqueue.h"
#include "vcl_log.h"
#include "vcl_op_mem.h"
#include "vcl_pin.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_shm.h"
#include "../proto/vcl_shm.h"

#ifndef F_SEAL_SEAL
#define F_SEAL_SEAL	0x0001
#define F_SEAL_SHRINK	0x0002
#define F_SEAL_GROW	0x0004
#endif
#ifndef F_GET_SEALS
#define F_GET_SEALS	1034
#endif

#define VCL_SHM_SEALS	(F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW)

uint64_t	 vcl_shm_ring_max = 64ull << 20;	/* --shm-ring-max; 0: off */

/* A session's mapped ring. */
struct vcl_shm {
	uint8_t		*base;		/* the header page, then the slots */
	size_t		 size;
	uint32_t	 slots;
	uint64_t	 slot_size;
	struct vcl_pinring *pin;	/* wrapped per context (vcl_pin.c) */
	atomic_uint_fast64_t busy;	/* a bit per slot the device uses:
					   taken on the loop, given back by
					   whoever sees the copy complete */
};

/* Unmap a session's ring, once nothing can use it any more. */
void
vcl_shm_free(struct vcl_shm *r)
{
	if (r == NULL)
		return;
	vcl_pin_ring_del(r->pin);
	munmap(r->base, r->size);
	free(r);
}

/*
 * Map the ring file fd of a ShmRing m; checks its seals, size and header.
 * Returns the ring, or NULL with *why.
 */
static struct vcl_shm *
vcl_shm_map(struct vcl_session *s, int fd, const Vcl__ShmRing *m,
    size_t size, const char **why)
{
	struct vcl_shm	*r = NULL;
	struct stat	 sb;
	uint8_t		*p;
	int		 seals;

	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		*why = "ring is not a regular file";
		goto out;
	}
	/* Sealed against shrinking: no mapped page can go (no SIGBUS). */
	if ((seals = fcntl(fd, F_GET_SEALS)) == -1 ||
	    (seals & VCL_SHM_SEALS) != VCL_SHM_SEALS) {
		*why = "ring is not sealed (shrink, grow, seal)";
		goto out;
	}
	if ((uint64_t)sb.st_size != size) {
		*why = "ring size does not match its slots";
		goto out;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		*why = "ring cannot be mapped";
		goto out;
	}
	/* Only the session's own client knows its greeting's nonce. */
	if (memcmp(p, VCL_SHM_MAGIC, sizeof VCL_SHM_MAGIC) != 0 ||
	    memcmp(p + sizeof VCL_SHM_MAGIC, s->nonce, sizeof s->nonce) != 0) {
		munmap(p, size);
		*why = "ring header does not name this session";
		goto out;
	}
	if ((r = calloc(1, sizeof *r)) == NULL) {
		munmap(p, size);
		*why = "out of memory";
		goto out;
	}
	r->base = p;
	r->size = size;
	r->slots = m->slots;
	r->slot_size = m->slot_size;
	r->pin = vcl_pin_ring_add(p, size);	/* NULL: stays pageable */
out:
	return (r);
}

/* Whether the session may give a ring: a client link from loopback. */
int
vcl_shm_offered(const struct vcl_session *s)
{
	return (vcl_shm_ring_max > 0 && !s->is_peer &&
	    (strncmp(s->addr, "127.", 4) == 0 || strcmp(s->addr, "::1") == 0 ||
	    strncmp(s->addr, "::ffff:127.", 11) == 0));
}

/* ShmRing: map the client's ring of slots, after checking all of it. */
void
vcl_op_shm_ring(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__ShmRing	*m = req->shm_ring;
	const char		*why = NULL;
	struct stat		 sb;
	char			 path[64];
	uint64_t		 size;
	cl_int			 err = CL_INVALID_VALUE;
	int			 fd = -1;

	if (vcl_shm_ring_max == 0) {
		err = CL_INVALID_OPERATION;
		why = "shared rings are off (--shm-ring-max 0)";
		goto out;
	}
	if (s->shm != NULL) {
		err = CL_INVALID_OPERATION;
		why = "the session has a ring already";
		goto out;
	}
	if (m->slots == 0 || m->slots > VCL_SHM_SLOTS_MAX ||
	    m->slot_size < VCL_SHM_PAGE || m->slot_size % VCL_SHM_PAGE != 0 ||
	    m->slot_size > (vcl_shm_ring_max - VCL_SHM_PAGE) / m->slots) {
		why = "ring slots out of range (--shm-ring-max)";
		goto out;
	}
	size = VCL_SHM_PAGE + m->slots * m->slot_size;
	if (m->pid == 0 || m->pid > INT32_MAX || (pid_t)m->pid == getpid() ||
	    m->fd > INT32_MAX) {
		why = "ring names no client process";
		goto out;
	}
	/* Its fd is of a process on this host: so must the client be. */
	if (!vcl_shm_offered(s)) {
		why = "rings are for clients on this host (loopback) only";
		goto out;
	}
	snprintf(path, sizeof path, "/proc/%u/fd/%u", m->pid, m->fd);
	/* Never open what is not a plain file (a device, a FIFO). */
	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		why = "ring is not a regular file of a process of ours";
		goto out;
	}
	if ((fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		why = "ring cannot be opened (not on this host, or not ours)";
		goto out;
	}
	if ((s->shm = vcl_shm_map(s, fd, m, (size_t)size, &why)) == NULL)
		goto out;
	err = CL_SUCCESS;
	vcl_log_info("session %llu: shared ring of %u x %llu bytes",
	    (unsigned long long)s->id, m->slots,
	    (unsigned long long)m->slot_size);
out:
	if (fd != -1)
		close(fd);
	if (err != CL_SUCCESS)
		vcl_session_warn(s, "ShmRing refused: %s", why);
	vcl_session_reply(s, req->seq, err, why);
}

/*
 * Take slot for a transfer of len bytes: its address, or NULL with *err
 * (no ring, a slot out of range or in use, a length past the slot).
 */
static uint8_t *
vcl_shm_take(struct vcl_session *s, uint32_t slot, uint64_t len, cl_int *err)
{
	struct vcl_shm	*r = s->shm;

	*err = CL_INVALID_VALUE;
	if (r == NULL) {
		*err = CL_INVALID_OPERATION;
		vcl_session_warn(s, "shared transfer without a ring");
		return (NULL);
	}
	if (slot >= r->slots || len == 0 || len > r->slot_size) {
		vcl_session_warn(s, "shared transfer of %llu bytes in slot %u: "
		    "out of the ring", (unsigned long long)len, slot);
		return (NULL);
	}
	if (atomic_fetch_or(&r->busy, 1ull << slot) & (1ull << slot)) {
		vcl_session_warn(s, "shared transfer in slot %u: in use", slot);
		return (NULL);
	}
	*err = CL_SUCCESS;
	return (r->base + VCL_SHM_PAGE + slot * r->slot_size);
}

/*
 * A shared transfer's copy completed (or never began): its slot is free
 * again. On whichever thread saw it first, before any reply tells the
 * client; once per command (the loop's completion follows the firing).
 */
void
vcl_shm_release(struct vcl_cmd *c)
{
	struct vcl_session	*s = c->d.s;

	if (c->xid == 0 || s == NULL || s->shm == NULL)
		return;
	atomic_fetch_and(&s->shm->busy, ~(1ull << (c->xid - 1)));
	c->xid = 0;
}

/* A shared transfer completed, on the loop thread: count its bytes. */
void
vcl_shm_done(struct vcl_cmd *c)
{
	struct vcl_session	*s = c->d.s;

	vcl_shm_release(c);
	vcl_pin_unwrap(c->pinwrap);	/* the copy is over */
	c->pinwrap = NULL;
	if (c->status >= 0)
		s->srv->client_bytes_shared += c->shm_len;
	c->shm_len = 0;
}

/*
 * WriteBuffer or ReadBuffer through slot m_slot of the ring: the runtime
 * copies between the slot and the buffer; the reply (no bulk) comes when
 * it did.
 */
static void
vcl_shm_xfer(struct vcl_session *s, const Vcl__Request *req, int write,
    const Vcl__Enqueue *e, uint64_t id, uint64_t off, uint64_t size,
    uint32_t slot)
{
	struct vcl_hobj	*mem, *ctx;
	struct vcl_enq	 enq;
	struct vcl_cmd	*c;
	uint8_t		*p;
	cl_int		 err;

	if ((c = vcl_cmd_new(VCL_CMD_SHM, req->seq)) == NULL) {
		vcl_session_close(s, "out of memory");
		return;
	}
	if ((err = vcl_enq_begin(s, e, &enq)) == CL_SUCCESS &&
	    (mem = vcl_mem_buf_range(s, id, off, size, &err)) != NULL &&
	    (p = vcl_shm_take(s, slot, size, &err)) != NULL) {
		c->xid = (uint64_t)slot + 1;
		c->shm_len = size;
		c->shm_write = write;
		/* The ring pinned for the context: the copy runs by DMA. */
		if ((ctx = vcl_queue_context(s, enq.q)) != NULL)
			c->pinwrap = vcl_pin_wrap(s->shm->pin, ctx->pins);
		if (write)
			err = clEnqueueWriteBuffer(enq.q->u.queue, mem->u.mem,
			    CL_FALSE, off, size, p, enq.nwait, enq.wait,
			    &enq.ev);
		else
			err = clEnqueueReadBuffer(enq.q->u.queue, mem->u.mem,
			    CL_FALSE, off, size, p, enq.nwait, enq.wait,
			    &enq.ev);
	}
	c->d.s = s;		/* for vcl_shm_release, should it fail now */
	if (err != CL_SUCCESS || s->dead) {
		/*
		 * No completion gives the wrapper back (vcl_enq_end drops a
		 * dead session's command).
		 */
		vcl_pin_unwrap(c->pinwrap);
		c->pinwrap = NULL;
	}
	if (err != CL_SUCCESS) {
		vcl_shm_release(c);
		c->shm_len = 0;
	}
	vcl_enq_end(s, &enq, err, c);
}

/* WriteBuffer naming a slot: no bytes may ride the frame. */
void
vcl_shm_write(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__WriteBuffer	*m = req->write_buffer;

	if (bulk->len != 0) {
		vcl_session_close(s, "shared write with bytes in its frame");
		return;
	}
	vcl_shm_xfer(s, req, 1, m->q, m->mem, m->offset, m->size,
	    m->shm_slot);
}

/* ReadBuffer naming a slot. */
void
vcl_shm_read(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__ReadBuffer	*m = req->read_buffer;

	vcl_shm_xfer(s, req, 0, m->q, m->mem, m->offset, m->size,
	    m->shm_slot);
}
