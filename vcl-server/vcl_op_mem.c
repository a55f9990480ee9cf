/* vcl_op_mem.c - buffers: creation and read/write/copy/fill commands. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_enqueue.h"
#include "vcl_hold.h"
#include "vcl_log.h"
#include "vcl_op_mem.h"
#include "vcl_pool.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_shm.h"
#include "vcl_worker.h"

/* Flags a client may send; host-pointer flags stay on the client. */
#define VCL_MEM_FLAGS	(CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY |	\
	CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR | CL_MEM_HOST_WRITE_ONLY | \
	CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)

/*
 * Does memory object m belong to context ctx? A runtime takes an object of
 * another context where the call's own are wanted for granted (PoCL 3.1
 * asserts it in clCreateImage, and the server aborted): a kernel argument
 * and a 1D buffer image's buffer are checked here first.
 */
int
vcl_mem_ctx_is(cl_mem m, cl_context ctx)
{
	cl_context	mctx = NULL;

	return (clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof mctx, &mctx,
	    NULL) == CL_SUCCESS && mctx == ctx);
}

/*
 * The memory object of an id, or NULL with *err (its creation error, if it
 * failed).
 */
static struct vcl_hobj *
vcl_mem_obj(struct vcl_session *s, uint64_t id, cl_int *err)
{
	struct vcl_hobj	*o;

	if ((o = vcl_handle_get(&s->handles, id, VCL_KIND_MEM)) == NULL) {
		*err = CL_INVALID_MEM_OBJECT;
		return (NULL);
	}
	if (o->error != CL_SUCCESS) {
		*err = o->error;
		return (NULL);
	}
	return (o);
}

/*
 * The buffer of an id, or NULL with *err: an image is none (the
 * specification's CL_INVALID_MEM_OBJECT), checked here as CopyImageBuffer
 * does, not left to the runtime: PoCL reads and writes an image's storage
 * as a buffer's, and a runtime whose images are not linear memory need not
 * expect one in a buffer call at all.
 */
static struct vcl_hobj *
vcl_mem_get(struct vcl_session *s, uint64_t id, cl_int *err)
{
	struct vcl_hobj	*o;

	if ((o = vcl_mem_obj(s, id, err)) != NULL && o->image) {
		*err = CL_INVALID_MEM_OBJECT;
		o = NULL;
	}
	return (o);
}

#define VCL_MOVE_MIN	(1u << 20)	/* larger buffers are made off the loop */
/*
 * What a buffer being made reports meanwhile. Only a request read before
 * its CreateBuffer, held until now, can name it (the session's input
 * waits), and such a request named an id that did not exist yet.
 */
#define VCL_MEM_PENDING	CL_INVALID_MEM_OBJECT

/* A buffer being made on a mover thread (its initial copy is its size). */
struct vcl_mkbuf {
	struct vcl_done	 d;		/* must stay first */
	cl_context	 ctx;		/* a reference of its own */
	cl_mem_flags	 flags;
	uint64_t	 id;
	uint64_t	 size;
	const void	*host;		/* zeros or the initial bytes */
	uint8_t		*data;		/* the initial bytes, to give back */
	cl_mem		 mem;
	cl_int		 err;
};

/* Large buffers being made or freed on a mover thread now (Stats). */
static atomic_uint_fast64_t	vcl_mem_moving_now;

/* How many large buffers are being made or freed on a mover now. */
uint64_t
vcl_mem_moving(void)
{
	return (atomic_load(&vcl_mem_moving_now));
}

/* Log a failed creation (rate-limited: a client can fail many). */
static void
vcl_mem_failed(struct vcl_session *s, struct vcl_hobj *o, uint64_t id,
    uint64_t size, cl_int err)
{
	vcl_session_uncharge(s, o->bytes);
	o->bytes = 0;
	o->error = err;
	vcl_session_warn(s, "buffer %llu of %llu bytes failed: %d",
	    (unsigned long long)id, (unsigned long long)size, err);
}

/* Mover thread: make the buffer; the runtime copies its initial bytes. */
static void
vcl_mem_create_run(void *arg)
{
	struct vcl_mkbuf	*mb = arg;

	/* Testing: as a runtime's slow fill would hold it. */
	vcl_server_test_latch("VCL_TEST_MOVER_LATCH");
	mb->mem = clCreateBuffer(mb->ctx, mb->flags | CL_MEM_COPY_HOST_PTR,
	    mb->size, (void *)mb->host, &mb->err);
	atomic_fetch_sub(&vcl_mem_moving_now, 1);
	vcl_server_done_push(mb->d.s->srv, &mb->d);
}

/*
 * Loop: the buffer is made; give it to its id (or release it when the
 * session or the id went meanwhile) and let the session's input go on.
 */
static void
vcl_mem_create_done(struct vcl_done *d)
{
	struct vcl_mkbuf	*mb = (struct vcl_mkbuf *)d;
	struct vcl_session	*s = d->s;
	struct vcl_hobj		*o = NULL;

	s->jobs--;
	if (mb->data != NULL)
		vcl_pool_put(mb->data, mb->size);
	if (!s->dead)
		o = vcl_handle_held(&s->handles, mb->id, VCL_KIND_MEM);
	if (o == NULL || o->u.mem != NULL || o->error != VCL_MEM_PENDING) {
		if (mb->mem != NULL)
			clReleaseMemObject(mb->mem);
	} else if (mb->err != CL_SUCCESS)
		vcl_mem_failed(s, o, mb->id, mb->size, mb->err);
	else {
		o->u.mem = mb->mem;
		o->error = CL_SUCCESS;
	}
	if (!s->dead)
		vcl_session_resume(s);
	clReleaseContext(mb->ctx);
	free(mb);
	vcl_session_unref(s);
}

/*
 * Make a large buffer on a mover thread: its initial copy (zeros or the
 * client's bytes) is proportional to its size, and the loop serves every
 * session. The session's input waits meanwhile, so its next request sees
 * the buffer. Takes the bulk. Returns 0, or -1 (nothing started).
 */
static int
vcl_mem_create_off_loop(struct vcl_session *s, cl_context ctx,
    cl_mem_flags flags, uint64_t id, uint64_t size, struct vcl_bulk *bulk)
{
	struct vcl_mkbuf	*mb;

	if ((mb = calloc(1, sizeof *mb)) == NULL)
		return (-1);
	mb->d.fn = vcl_mem_create_done;
	mb->d.s = s;
	mb->ctx = ctx;
	mb->flags = flags;
	mb->id = id;
	mb->size = size;
	mb->data = bulk->data;
	mb->host = bulk->data != NULL ? bulk->data : s->srv->zeros;
	clRetainContext(ctx);
	vcl_session_ref(s);
	s->jobs++;
	atomic_fetch_add(&vcl_mem_moving_now, 1);
	if (vcl_workers_run(s->srv->movers, vcl_mem_create_run, mb) != 0) {
		atomic_fetch_sub(&vcl_mem_moving_now, 1);
		s->jobs--;
		vcl_session_unref(s);
		clReleaseContext(ctx);
		free(mb);
		return (-1);
	}
	/*
	 * The job gives the initial bytes back. They are uncharged now, as
	 * when the loop made the buffer: the session, paused, can make
	 * nothing of the room until they are gone.
	 */
	if (bulk->data != NULL)
		vcl_session_uncharge(s, bulk->len);
	bulk->data = NULL;
	vcl_session_pause(s);
	return (0);
}

/* Mover thread: give a large buffer back to the runtime. */
static void
vcl_mem_release_run(void *arg)
{
	vcl_server_test_latch("VCL_TEST_MOVER_LATCH");	/* a slow free */
	clReleaseMemObject(arg);
	atomic_fetch_sub(&vcl_mem_moving_now, 1);
}

/*
 * Release a buffer; a large one on a mover thread (the runtime frees its
 * pages there, 200 ms a GiB). Its bytes are uncharged at once: the
 * session's next large creation queues behind the release on the movers.
 */
void
vcl_mem_release(struct vcl_session *s, cl_mem mem, uint64_t bytes)
{
	if (mem != NULL && bytes >= VCL_MOVE_MIN) {
		atomic_fetch_add(&vcl_mem_moving_now, 1);
		if (vcl_workers_run(s->srv->movers, vcl_mem_release_run,
		    mem) == 0)
			mem = NULL;
		else
			atomic_fetch_sub(&vcl_mem_moving_now, 1);
	}
	if (mem != NULL)
		clReleaseMemObject(mem);
	vcl_session_uncharge(s, bytes);
}

/*
 * CreateBuffer: charged to the session before the runtime sees it; initial
 * bytes (COPY/USE_HOST_PTR on the client) arrive as bulk.
 */
void
vcl_op_create_buffer(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateBuffer	*m = req->create_buffer;
	struct vcl_hobj		*o, *ctx;
	cl_mem_flags		 flags;
	cl_int			 err = CL_SUCCESS;

	if ((o = vcl_session_add(s, m->id, VCL_KIND_MEM)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;		/* over the object limit */
	if ((m->has_has_data && m->has_data) != (bulk->len > 0) ||
	    (bulk->len > 0 && bulk->len != m->size)) {
		vcl_session_close(s, "buffer initial data does not match size");
		return;
	}
	flags = m->flags;
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else if (ctx->error != CL_SUCCESS)
		err = ctx->error;
	else if (flags & ~(cl_mem_flags)VCL_MEM_FLAGS)
		err = CL_INVALID_VALUE;
	else if (m->size == 0)
		err = CL_INVALID_BUFFER_SIZE;
	else if (bulk->err != CL_SUCCESS)
		err = bulk->err;
	else if (bulk->data == NULL && m->size > s->srv->zeros_len)
		err = CL_INVALID_BUFFER_SIZE;
	else if (vcl_session_charge(s, m->size) != 0)
		err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
	else {
		/*
		 * A buffer without initial bytes starts as zeros, never as
		 * memory another session freed: sessions see only their own.
		 */
		o->bytes = m->size;
		if (m->size >= VCL_MOVE_MIN && vcl_mem_create_off_loop(s,
		    ctx->u.ctx, flags, m->id, m->size, bulk) == 0) {
			o->error = VCL_MEM_PENDING;
			return;
		}
		o->u.mem = clCreateBuffer(ctx->u.ctx, flags |
		    CL_MEM_COPY_HOST_PTR, m->size, bulk->data != NULL ?
		    bulk->data : s->srv->zeros, &err);
	}
	if (err != CL_SUCCESS)
		vcl_mem_failed(s, o, m->id, m->size, err);
}

/* Check offset + size inside a buffer's charged size. */
static cl_int
vcl_mem_range(const struct vcl_hobj *o, uint64_t off, uint64_t size)
{
	if (size == 0 || off > o->bytes || size > o->bytes - off)
		return (CL_INVALID_VALUE);
	return (CL_SUCCESS);
}

/*
 * The memory object of an id with offset + size inside it, or NULL with
 * *err: what every command on a range checks first. An image too (a
 * migration moves one whole); vcl_mem_buf_range for a buffer's.
 */
struct vcl_hobj *
vcl_mem_range_get(struct vcl_session *s, uint64_t id, uint64_t off,
    uint64_t size, cl_int *err)
{
	struct vcl_hobj	*o;

	if ((o = vcl_mem_obj(s, id, err)) != NULL &&
	    (*err = vcl_mem_range(o, off, size)) != CL_SUCCESS)
		o = NULL;
	return (o);
}

/* The buffer (no image) of an id with offset + size inside it, or NULL. */
struct vcl_hobj *
vcl_mem_buf_range(struct vcl_session *s, uint64_t id, uint64_t off,
    uint64_t size, cl_int *err)
{
	struct vcl_hobj	*o;

	if ((o = vcl_mem_get(s, id, err)) != NULL &&
	    (*err = vcl_mem_range(o, off, size)) != CL_SUCCESS)
		o = NULL;
	return (o);
}

/*
 * Whether queue q suits a copy in chunks: in order, without profiling
 * (both seen in its properties when it was made).
 */
static int
vcl_mem_chunkable(const struct vcl_hobj *q)
{
	return (!q->profiling && !q->ooo);
}

/*
 * Chunked writes. The bulk of a large WriteBuffer on the control stream
 * lands in its staging block (vcl_session_read); each whole chunk of
 * vcl_write_chunk bytes is handed to the runtime as soon as it is in (a
 * plain write from the staging, no event), so the device copy overlaps
 * the socket. When the last byte is in, the request runs: it enqueues
 * what is left with the client's event, so the tail after the last byte
 * is one chunk's copy. Only where the write would run at once when its
 * frame is in, in the same place on its queue: in-order queue without
 * profiling (the last part's completion implies the others'), no wait
 * list, nothing of its queue held (none can be held meanwhile: the
 * session's next frame is decoded only after this one's bulk), a valid
 * range. Launches handed to the queue's strand are made first, as for any
 * request (vcl_session_run). A chunk refused is remembered and the write
 * fails with it when it runs, as an unchunked write would.
 *
 * The staging is the session's until the request runs, then its
 * command's, freed when the last part completes. Where the block would go
 * otherwise (the session closes mid-bulk, the write fails), it goes to a
 * completion on the last chunk enqueued, which on an in-order queue
 * completes after every chunk copying from it (vcl_cmd_free_after); its
 * record is reserved when the write begins, so that needs no memory and
 * the loop never waits for the chunks.
 *
 * A write of more chunks than vcl_write_slots (--write-slots) does not
 * get staging of its size: its bytes cycle through that many chunks of
 * staging (in_wc.ring), each taking new bytes once the runtime's copy out
 * of it is done (vcl_mem_write_room). A 256 MiB write then holds 16 MiB,
 * and the socket's bytes land in memory the CPU wrote a few chunks ago,
 * in its caches, where a fresh 256 MiB block costs a miss per line: on
 * an H100 host a receive into a 4 MiB buffer used again and again ran at
 * up to 1.2x one into a buffer of the transfer's size. A slot still
 * being copied when its next bytes come (a kernel ahead of the write)
 * sends the rest to staging of its own (vcl_mem_write_spill): waiting
 * would hold the session's input, and its requests to other queues, behind
 * the device. Only where that is over the session's limit does the input
 * wait (vcl_session.c, ev_slot).
 *
 * By default only with VCL_SERVER_MIN_CPUS online CPUs or more: on a
 * 2-core host the chunks' copies (a CPU device's memcpy) take the cores
 * the socket's receive needs, and the write itself ran slower (the read
 * behind it faster by as much).
 */
uint64_t	 vcl_write_chunk = VCL_WRITE_CHUNK_AUTO; /* --write-chunk; 0: off */
unsigned	 vcl_write_slots = VCL_WRITE_SLOTS; /* --write-slots; 0: none */

static uint64_t	vcl_wc_count;		/* writes chunked (Stats) */
static long	vcl_wc_fault = -2;	/* VCL_TEST_WRITE_FAIL_CHUNK */
static long	vcl_ws_fault = -1;	/* VCL_TEST_WRITE_SLOT_WAIT */
static uint64_t	vcl_ws_count;		/* waits for a slot (Stats) */

/* How many writes went in chunks as their bytes came. */
uint64_t
vcl_mem_writes_chunked(void)
{
	return (vcl_wc_count);
}

/* How often a write's input waited for a slot's copy. */
uint64_t
vcl_mem_write_slot_waits(void)
{
	return (vcl_ws_count);
}

/*
 * A frame's message is in and its bulk is about to come: copy a
 * WriteBuffer in chunks as it comes, where that is safe, and say how much
 * staging its bytes need (in_wc.ring: its slots; 0: the whole bulk).
 * Called before that staging is had; vcl_mem_write_stop if it cannot be.
 */
void
vcl_mem_write_begin(struct vcl_session *s, const Vcl__Request *req)
{
	const Vcl__WriteBuffer	*m;
	struct vcl_wchunk	*wc = &s->in_wc;
	struct vcl_hobj		*q;
	cl_int			 err;

	vcl_mem_write_stop(s);		/* none is under way: a clean slate */
	if (req->call_case != VCL__REQUEST__CALL_WRITE_BUFFER ||
	    vcl_write_chunk == 0)
		return;
	m = req->write_buffer;
	if (m->has_shm_slot || m->q == NULL || m->q->n_wait > 0 ||
	    m->size != s->in_frame.bulk_len || m->size / 2 < vcl_write_chunk)
		return;
	if ((q = vcl_handle_get(&s->handles, m->q->queue,
	    VCL_KIND_QUEUE)) == NULL || q->error != CL_SUCCESS ||
	    !vcl_mem_chunkable(q) || !vcl_hold_runs_now(s, req) ||
	    vcl_mem_buf_range(s, m->mem, m->offset, m->size, &err) == NULL)
		return;
	if (vcl_wc_fault == -2) {
		vcl_wc_fault = vcl_server_test_num("VCL_TEST_WRITE_FAIL_CHUNK");
		vcl_ws_fault = vcl_server_test_num("VCL_TEST_WRITE_SLOT_WAIT");
	}
	/* What keeps the staging if the write ends early (out of memory:
	   not chunked). */
	if ((wc->hold = vcl_cmd_hold_new()) == NULL)
		return;
	wc->req = req;
	wc->qid = m->q->queue;
	/* Its own: a SIGHUP may change them while its bytes come. */
	wc->chunk = vcl_write_chunk;
	wc->nslots = vcl_write_slots;
	/* Slots only where the bytes would cycle through them. */
	if (wc->nslots > 0 && m->size / wc->chunk > wc->nslots)
		wc->ring = wc->nslots * wc->chunk;
}

/*
 * Whether the copy out of slot i is done, its event then let go. A copy
 * the runtime failed fails the write (the rest is not copied).
 */
static int
vcl_mem_slot_free(struct vcl_wchunk *wc, unsigned i)
{
	cl_int	status, err;

	if (wc->slot[i] == NULL)
		return (1);
	if (vcl_ws_fault > 0 && !wc->faulted) {
		wc->faulted = 1;	/* a test's: busy at the first look */
		return (0);
	}
	err = clGetEventInfo(wc->slot[i], CL_EVENT_COMMAND_EXECUTION_STATUS,
	    sizeof status, &status, NULL);
	if (err == CL_SUCCESS && status > CL_COMPLETE)
		return (0);
	if (err != CL_SUCCESS || status < 0) {
		if (wc->err == CL_SUCCESS)
			wc->err = err != CL_SUCCESS ? err : status;
		wc->stopped = 1;
	}
	clReleaseEvent(wc->slot[i]);
	wc->slot[i] = NULL;
	wc->faulted = 0;
	return (1);
}

/*
 * Where byte at of a chunked write's bulk is in its staging, which starts
 * at data: in the slot it cycles to, or past what went before a spill.
 */
static uint8_t *
vcl_wchunk_at(const struct vcl_wchunk *wc, uint8_t *data, uint64_t at)
{
	return (data + (wc->ring != 0 ? at % wc->ring : at - wc->base));
}

/* The slot of the chunk byte at of the bulk is in (wc->ring set). */
static unsigned
vcl_wchunk_slot(const struct vcl_wchunk *wc, uint64_t at)
{
	return ((unsigned)(at / wc->chunk % wc->nslots));
}

/* Let go of the copies' events the slots wait on. */
static void
vcl_wchunk_drop_slots(struct vcl_wchunk *wc)
{
	unsigned	i;

	for (i = 0; i < VCL_WRITE_SLOTS_MAX; i++)
		if (wc->slot[i] != NULL) {
			clReleaseEvent(wc->slot[i]);
			wc->slot[i] = NULL;
		}
}

/*
 * A slot is still being copied out when its next bytes come (a kernel
 * runs ahead of the write on its queue, or the device copies slower than
 * the socket): rather than hold the session's input back, which would
 * hold its requests for other queues too, the rest of the bulk comes into
 * staging of its own, as a write not through slots does. The slots go
 * once the last chunk copied from them is done (every chunk before the
 * rest is enqueued as it comes: the last of them, on the in-order queue,
 * completes after the others). -1: no staging (the session's bytes limit)
 * or record for that: the input waits for the slot.
 */
static int
vcl_mem_write_spill(struct vcl_session *s)
{
	struct vcl_wchunk	*wc = &s->in_wc;
	struct vcl_cmd		*h;
	uint8_t			*rest;
	uint64_t		 n = s->in_frame.bulk_len - s->in_bulk_got;
	cl_int			 err;

	if (wc->last == NULL || (h = vcl_cmd_hold_new()) == NULL)
		return (-1);
	if ((rest = vcl_stage_alloc(s, vcl_queue_context(s,
	    vcl_handle_get(&s->handles, wc->qid, VCL_KIND_QUEUE)), n,
	    CL_MEM_OBJECT_ALLOCATION_FAILURE, &err)) == NULL) {
		vcl_cmd_hold_free(h);
		return (-1);
	}
	clRetainEvent(wc->last);
	vcl_cmd_free_after(s, h, vcl_cmd_hold_stage(h, s, s->in_bulk,
	    s->in_bulk_size), wc->last, wc->qid);
	vcl_wchunk_drop_slots(wc);
	s->in_bulk = rest;
	s->in_bulk_size = n;
	wc->base = s->in_bulk_got;
	wc->ring = 0;
	return (0);
}

/*
 * Where the session's next bulk bytes go, and how many may go there in
 * one piece: the rest of the bulk's staging, or of the slot that takes
 * them. 1: that slot is still being copied out and the rest could not
 * go elsewhere (vcl_mem_write_spill); nothing may come yet.
 */
int
vcl_mem_write_room(struct vcl_session *s, uint8_t **dst, uint64_t *room)
{
	struct vcl_wchunk	*wc = &s->in_wc;
	uint64_t		 got = s->in_bulk_got;

	if (s->in_bulk != NULL && wc->ring != 0 && got % wc->chunk == 0 &&
	    !vcl_mem_slot_free(wc, vcl_wchunk_slot(wc, got))) {
		if (!wc->waiting)
			vcl_ws_count++;
		if (vcl_mem_write_spill(s) != 0)
			return (1);
	}
	*dst = s->in_bulk == NULL ? NULL : vcl_wchunk_at(wc, s->in_bulk, got);
	*room = s->in_frame.bulk_len - got;
	/* Through slots: up to the end of this one. */
	if (s->in_bulk != NULL && wc->ring != 0 &&
	    *room > wc->chunk - got % wc->chunk)
		*room = wc->chunk - got % wc->chunk;
	return (0);
}

/*
 * More of the bulk is in: enqueue each whole chunk now complete, all but
 * the last part (the request's own). Stops at a refusal, or when its
 * queue or buffer went meanwhile (the request then fails as it would).
 */
void
vcl_mem_write_feed(struct vcl_session *s)
{
	struct vcl_wchunk	*wc = &s->in_wc;
	const Vcl__WriteBuffer	*m;
	struct vcl_hobj		*q, *mem;
	cl_event		 ev;
	cl_int			 err;
	unsigned		 i;

	if (wc->req == NULL)
		return;
	m = wc->req->write_buffer;
	while (!wc->stopped && wc->done + wc->chunk <= s->in_bulk_got &&
	    wc->done + wc->chunk < m->size) {
		if ((q = vcl_handle_get(&s->handles, m->q->queue,
		    VCL_KIND_QUEUE)) == NULL || q->error != CL_SUCCESS ||
		    (mem = vcl_mem_buf_range(s, m->mem, m->offset, m->size,
		    &err)) == NULL) {
			wc->stopped = 1;
			break;
		}
		if (s->nstrands > 0)
			vcl_session_quiesce(s);	/* its launches first */
		ev = NULL;
		if (vcl_wc_fault >= 0 && (long)wc->n == vcl_wc_fault)
			err = CL_OUT_OF_RESOURCES;	/* a test's fault */
		else
			err = clEnqueueWriteBuffer(q->u.queue, mem->u.mem,
			    CL_FALSE, m->offset + wc->done, wc->chunk,
			    vcl_wchunk_at(wc, s->in_bulk, wc->done), 0, NULL,
			    &ev);
		wc->n++;
		if (err != CL_SUCCESS) {
			vcl_session_warn(s, "write of %llu bytes refused at "
			    "byte %llu: %d", (unsigned long long)m->size,
			    (unsigned long long)wc->done, err);
			wc->err = err;
			wc->stopped = 1;
			break;
		}
		if (wc->last != NULL)
			clReleaseEvent(wc->last);
		else
			vcl_wc_count++;
		wc->last = ev;
		if (wc->ring != 0) {	/* its slot takes bytes once done */
			i = vcl_wchunk_slot(wc, wc->done);
			if (wc->slot[i] != NULL)
				clReleaseEvent(wc->slot[i]);
			wc->slot[i] = ev;
			clRetainEvent(ev);
		}
		wc->done += wc->chunk;
		vcl_session_mark_dirty(s, q);
		(void)vcl_session_flush_now(s, q);	/* the copy starts */
	}
}

/*
 * Forget a write's chunks. Where some are still copying from the bulk
 * they came in (the session's, not handed to its request: the session
 * closes mid-bulk), it goes to the record reserved for it, freed once
 * the last is done: the loop never waits for them.
 */
void
vcl_mem_write_stop(struct vcl_session *s)
{
	struct vcl_wchunk	*wc = &s->in_wc;
	struct vcl_stage	*st;

	vcl_wchunk_drop_slots(wc);
	if (wc->last != NULL && wc->hold != NULL && s->in_bulk != NULL &&
	    !s->in_bulk_borrowed) {
		st = vcl_cmd_hold_stage(wc->hold, s, s->in_bulk,
		    s->in_bulk_size);
		s->in_bulk = NULL;
		vcl_cmd_free_after(s, wc->hold, st, wc->last, wc->qid);
		wc->hold = NULL;
		wc->last = NULL;
	}
	if (wc->last != NULL)
		clReleaseEvent(wc->last);
	vcl_cmd_hold_free(wc->hold);
	memset(wc, 0, sizeof *wc);
}

/* WriteBuffer: bytes arrived in staging; the runtime copies them in. */
void
vcl_op_write_buffer(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__WriteBuffer	*m = req->write_buffer;
	struct vcl_wchunk	 wc;
	struct vcl_hobj		*mem;
	struct vcl_enq		 enq;
	struct vcl_cmd		*c = NULL;
	uint64_t		 size;
	cl_int			 err;

	/* Its chunks enqueued as its bytes came, if any (vcl_session.c). */
	memset(&wc, 0, sizeof wc);
	if (s->in_wc.req == req) {
		wc = s->in_wc;
		memset(&s->in_wc, 0, sizeof s->in_wc);
	}
	if (m->has_shm_slot) {
		vcl_shm_write(s, req, bulk);
		goto out;
	}
	if (bulk->len != m->size) {
		vcl_session_close(s, "write size does not match its bytes");
		goto out;
	}
	/*
	 * The staging: the bulk's, its slots, or what took its rest. Not
	 * the session's in_bulk_size: a write held runs after later frames.
	 */
	size = wc.ring != 0 ? wc.ring : bulk->len - wc.base;
	if ((wc.last != NULL && vcl_cmd_nomem()) ||
	    (c = vcl_cmd_new(VCL_CMD_WRITE, req->seq)) == NULL ||
	    (bulk->data != NULL &&
	    (c->stage = vcl_stage_new(s, bulk->data, size)) == NULL)) {
		free(c);
		/* Its chunks copy from the bulk: kept until they are done. */
		if (wc.last != NULL && bulk->data != NULL) {
			vcl_cmd_free_after(s, wc.hold, vcl_cmd_hold_stage(
			    wc.hold, s, bulk->data, size), wc.last,
			    wc.qid);
			bulk->data = NULL;
			wc.hold = NULL;
			wc.last = NULL;
		} else if (bulk->data != NULL) {
			/* Here: its block may be its slots, not its bytes. */
			vcl_pool_put(bulk->data, size);
			vcl_session_uncharge(s, size);
			bulk->data = NULL;
		}
		vcl_session_close(s, "out of memory");
		goto out;
	}
	bulk->data = NULL;	/* the stage owns it now */
	/* Slots written over after a stop, or bytes before a spill, are not
	   in the staging any more: a stopped write through slots fails. */
	if ((wc.ring != 0 || wc.base != 0) && wc.stopped &&
	    wc.err == CL_SUCCESS)
		wc.err = CL_OUT_OF_RESOURCES;
	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (mem = vcl_mem_buf_range(s, m->mem, m->offset, m->size, &err)) !=
	    NULL && (err = bulk->err) == CL_SUCCESS &&
	    (err = wc.err) == CL_SUCCESS)
		err = clEnqueueWriteBuffer(enq.q->u.queue, mem->u.mem, CL_FALSE,
		    m->offset + wc.done, m->size - wc.done,
		    vcl_wchunk_at(&wc, c->stage->data, wc.done), enq.nwait,
		    enq.wait, &enq.ev);
	/*
	 * Failed: the stage goes once its chunks are copied. (Taken: the
	 * last part's completion frees it, or vcl_enq_end hands it on after
	 * the last part when it cannot be watched.)
	 */
	if (wc.last != NULL && err != CL_SUCCESS) {
		vcl_cmd_free_after(s, wc.hold, c->stage, wc.last, wc.qid);
		c->stage = NULL;
		wc.hold = NULL;
		wc.last = NULL;
	}
	vcl_enq_end(s, &enq, err, c);
out:
	vcl_wchunk_drop_slots(&wc);
	if (wc.last != NULL)
		clReleaseEvent(wc.last);
	vcl_cmd_hold_free(wc.hold);
}

/*
 * Chunked reads. A large read is enqueued as several reads of
 * vcl_read_chunk bytes into one staging block, and the reply's bulk goes
 * out chunk by chunk as each copy completes, so the device copy of one
 * chunk overlaps the send of those before it. The reply head (announcing
 * the whole size, status CL_SUCCESS) goes out once the first chunk is in;
 * every failure known by then is answered as before. A chunk failing after
 * the head went out cannot be told in that frame: the session is closed
 * (the stream stays framed; libvcl fails the read). While a reply is in
 * parts, the session's other frames wait behind it (vcl_session_send_part);
 * a second large read completing meanwhile is sent whole once all its
 * chunks are in. Only in-order queues without profiling are chunked: the
 * client's event is the last chunk's, which then completes after the rest.
 * Only the first chunk waits for the read's wait list and the others are
 * enqueued right behind it, so once the head is out nothing the client
 * does can hold the rest of the bulk (and the frames behind it) back.
 */
uint64_t	 vcl_read_chunk = 4ull << 20;	/* --read-chunk; 0: off */

enum vcl_rd_mode {
	VCL_RD_WAIT,		/* for the first chunk */
	VCL_RD_PARTS,		/* head out; the chunks follow as ready */
	VCL_RD_WHOLE,		/* another reply is in parts: send all at once */
	VCL_RD_ANSWERED,	/* all queued, or failed */
};

struct vcl_rd {
	struct vcl_session	*s;
	struct vcl_stage	*stage;
	uint64_t		 seq;
	uint64_t		 event_id;	/* the client's, to notify */
	cl_int			 status;	/* first failure */
	enum vcl_rd_mode	 mode;
	uint64_t		 chunk;
	size_t			 n;
	size_t			 ndone;
	size_t			 nsent;		/* chunks queued to send */
	int			 refs;		/* chunks in flight + sending */
	int			 sending;	/* the send's reference held */
	int			 notified;
	cl_event		 last;		/* the client's event */
	int8_t			*state;		/* per chunk: 0, 1 done, -1 failed */
};

static long	vcl_rd_fault = -2;	/* VCL_TEST_READ_FAIL_CHUNK */

/* Drop a reference to a chunked read; the last frees its staging. */
static void
vcl_rd_put(struct vcl_rd *rd)
{
	if (--rd->refs > 0)
		return;
	vcl_stage_free(rd->stage);
	if (rd->last != NULL)
		clReleaseEvent(rd->last);
	free(rd->state);
	free(rd);
}

/* The bytes of a chunked read were sent or dropped. */
static void
vcl_rd_sent(void *arg)
{
	vcl_rd_put(arg);
}

/*
 * Give up the send's reference: nothing more of the read will be sent.
 * Callers hold a reference of their own, so this is never the last.
 */
static void
vcl_rd_unsend(struct vcl_rd *rd)
{
	if (!rd->sending)
		return;
	rd->sending = 0;
	rd->refs--;
}

/* Answer a chunked read with an error and no bytes. */
static void
vcl_rd_fail(struct vcl_rd *rd)
{
	vcl_session_reply(rd->s, rd->seq, rd->status, NULL);
	rd->mode = VCL_RD_ANSWERED;
	vcl_rd_unsend(rd);
}

/* Queue what can go out of a chunked read now; notify once it is all out. */
static void
vcl_rd_progress(struct vcl_rd *rd)
{
	struct vcl_session	*s = rd->s;
	Vcl__ToClient		 tc = VCL__TO_CLIENT__INIT;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	uint64_t		 off, len;
	int			 last;

	r.seq = rd->seq;
	r.status = CL_SUCCESS;
	tc.reply = &r;
	if (rd->mode == VCL_RD_WAIT && rd->state[0] != 0) {
		if (rd->state[0] < 0 || rd->status != CL_SUCCESS)
			vcl_rd_fail(rd);
		else if (vcl_session_parting(s))
			rd->mode = VCL_RD_WHOLE;
		else
			rd->mode = VCL_RD_PARTS;
	}
	while (rd->mode == VCL_RD_PARTS && !s->dead && rd->nsent < rd->n &&
	    rd->state[rd->nsent] != 0) {
		if (rd->state[rd->nsent] < 0) {
			vcl_log_warn("session %llu: read of %llu bytes failed "
			    "at byte %llu, after its reply began: %d",
			    (unsigned long long)s->id,
			    (unsigned long long)rd->stage->size,
			    (unsigned long long)(rd->nsent * rd->chunk),
			    (int)rd->status);
			rd->mode = VCL_RD_ANSWERED;
			vcl_session_close(s, "a read failed after its reply "
			    "began");
			vcl_rd_unsend(rd);
			break;
		}
		off = rd->nsent * rd->chunk;
		len = rd->stage->size - off < rd->chunk ?
		    rd->stage->size - off : rd->chunk;
		last = ++rd->nsent == rd->n;
		if (last)
			rd->mode = VCL_RD_ANSWERED;
		/* The last part carries the send's reference. */
		if (last)
			rd->sending = 0;
		vcl_session_send_part(s, off == 0 ? &tc : NULL,
		    rd->stage->size, rd->stage->data + off, len, last,
		    last ? vcl_rd_sent : NULL, rd);
	}
	if (rd->mode == VCL_RD_WHOLE && rd->ndone == rd->n) {
		if (rd->status != CL_SUCCESS)
			vcl_rd_fail(rd);
		else {
			rd->mode = VCL_RD_ANSWERED;
			rd->sending = 0;
			vcl_session_send(s, &tc, rd->stage->data,
			    rd->stage->size, vcl_rd_sent, rd);
		}
	}
	if (rd->mode == VCL_RD_ANSWERED && rd->ndone == rd->n &&
	    !rd->notified) {
		rd->notified = 1;
		if (rd->event_id != 0 && !s->dead)
			vcl_session_notify(s, rd->event_id, rd->status < 0 ?
			    rd->status : CL_COMPLETE, rd->last, 0);
	}
}

/*
 * A chunk's copy completed (status < 0: failed), on the loop thread, from
 * vcl_cmd_complete: whatever the session's state, the chunk's reference
 * goes.
 */
void
vcl_mem_chunk_done(struct vcl_cmd *c)
{
	struct vcl_rd	*rd = c->job;
	size_t		 i = (size_t)c->xid;
	cl_int		 st = c->status < 0 ? c->status : CL_SUCCESS;

	c->job = NULL;
	if (rd == NULL)
		return;
	if (st == CL_SUCCESS && vcl_rd_fault >= 0 && (long)i == vcl_rd_fault)
		st = CL_OUT_OF_RESOURCES;	/* a test's fault */
	rd->state[i] = st == CL_SUCCESS ? 1 : -1;
	if (st != CL_SUCCESS && rd->status == CL_SUCCESS)
		rd->status = st;
	rd->ndone++;
	if (rd->s->dead)
		vcl_rd_unsend(rd);
	else
		vcl_rd_progress(rd);
	vcl_rd_put(rd);
}

/* Whether a read of size bytes on queue q goes in chunks. */
static int
vcl_rd_chunked(struct vcl_hobj *q, uint64_t size)
{
	if (vcl_read_chunk == 0 || size / 2 < vcl_read_chunk)
		return (0);
	return (vcl_mem_chunkable(q));
}

/*
 * Enqueue a chunked read of m into st (the read's staging, which the job
 * takes) after enq's wait list; the first chunk waits for it, the rest
 * follow in queue order. Consumes enq.
 */
static void
vcl_rd_start(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_enq *enq, struct vcl_hobj *mem, struct vcl_stage *st)
{
	const Vcl__ReadBuffer	*m = req->read_buffer;
	struct vcl_rd		*rd;
	struct vcl_cmd		*c;
	struct vcl_hobj		*o = NULL;
	cl_event		 ev;
	uint64_t		 off, len;
	size_t			 i, n;
	cl_int			 err = CL_SUCCESS;

	if (vcl_rd_fault == -2)
		vcl_rd_fault = vcl_server_test_num("VCL_TEST_READ_FAIL_CHUNK");
	n = (size_t)((m->size + vcl_read_chunk - 1) / vcl_read_chunk);
	if ((rd = calloc(1, sizeof *rd)) == NULL ||
	    (rd->state = calloc(n, sizeof *rd->state)) == NULL) {
		free(rd);
		vcl_stage_free(st);
		free(enq->wait);
		vcl_session_close(s, "out of memory");
		return;
	}
	rd->s = s;
	rd->stage = st;
	rd->seq = req->seq;
	rd->chunk = vcl_read_chunk;
	rd->n = n;
	rd->refs = 2;		/* this function's and the send's */
	rd->sending = 1;
	for (i = 0; i < n; i++) {
		off = i * rd->chunk;
		len = m->size - off < rd->chunk ? m->size - off : rd->chunk;
		ev = NULL;
		c = NULL;
		/*
		 * Its record first: once the runtime took the chunk nothing
		 * may fail for want of memory (the loop would wait for it).
		 */
		if (err == CL_SUCCESS && (vcl_cmd_nomem() ||
		    (c = vcl_cmd_new(VCL_CMD_CHUNK, req->seq)) == NULL))
			err = CL_OUT_OF_HOST_MEMORY;
		if (err == CL_SUCCESS)
			err = clEnqueueReadBuffer(enq->q->u.queue, mem->u.mem,
			    CL_FALSE, m->offset + off, len, st->data + off,
			    i == 0 ? enq->nwait : 0, i == 0 ? enq->wait : NULL,
			    &ev);
		if (err != CL_SUCCESS) {
			/* Never enqueued: failed now, the read with it. */
			free(c);
			rd->state[i] = -1;
			rd->ndone++;
			if (rd->status == CL_SUCCESS)
				rd->status = err;
			continue;
		}
		/* Its later commands run after those events too (vcl_enq_end). */
		if (i == 0 && enq->nwait > 0)
			enq->q->waited = 1;
		if (rd->last != NULL)
			clReleaseEvent(rd->last);
		rd->last = ev;
		clRetainEvent(ev);
		c->job = rd;
		c->xid = i;
		c->d.s = s;
		vcl_session_ref(s);
		c->ev = ev;
		c->queue_id = enq->q->id;
		c->fr.waited = enq->q->waited;	/* its parts wait as a read's */
		rd->refs++;
		(void)vcl_cmd_watch(s, c);
	}
	free(enq->wait);
	enq->wait = NULL;
	if (rd->last != NULL)
		vcl_session_mark_dirty(s, enq->q);
	/*
	 * The client's event is the last chunk's: it completes last. One the
	 * read failed (never enqueued, or over the object limit) is told as
	 * well, after the read's reply, as vcl_enq_end tells a command's: a
	 * client's blocking read waits for that Notify behind the reply.
	 */
	if (enq->event_id != 0) {
		if ((o = vcl_session_add(s, enq->event_id,
		    VCL_KIND_EVENT)) == NULL)
			err = CL_OUT_OF_RESOURCES;
		else if (o->error != CL_SUCCESS)
			err = o->error;
		else if (rd->status != CL_SUCCESS || rd->last == NULL)
			o->error = err = rd->status;
		else {
			o->u.event = rd->last;
			clRetainEvent(rd->last);
		}
		if (o != NULL && !enq->quiet)
			rd->event_id = enq->event_id;
		if (rd->status == CL_SUCCESS)
			rd->status = err;
	}
	/*
	 * Closed meanwhile (the event's id past the object limit's margin):
	 * nothing will be sent, whether or not a chunk is in flight to say
	 * so (none is when the runtime refused them all).
	 */
	if (s->dead)
		vcl_rd_unsend(rd);
	else
		vcl_rd_progress(rd);
	vcl_rd_put(rd);
}

/* ReadBuffer: the runtime copies into staging; the reply sends it. */
void
vcl_op_read_buffer(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__ReadBuffer	*m = req->read_buffer;
	struct vcl_hobj		*mem;
	struct vcl_enq		 enq;
	struct vcl_cmd		*c;
	cl_int			 err;

	if (m->has_shm_slot) {
		vcl_shm_read(s, req, bulk);
		return;
	}
	if ((c = vcl_cmd_new(VCL_CMD_READ, req->seq)) == NULL) {
		vcl_session_close(s, "out of memory");
		return;
	}
	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (mem = vcl_mem_buf_range(s, m->mem, m->offset, m->size, &err)) !=
	    NULL) {
		if ((c->stage = vcl_stage_get(s, vcl_queue_context(s, enq.q),
		    m->size, CL_OUT_OF_RESOURCES, &err)) != NULL &&
		    vcl_rd_chunked(enq.q, m->size)) {
			vcl_rd_start(s, req, &enq, mem, c->stage);
			free(c);
			return;
		}
		if (c->stage != NULL)
			err = clEnqueueReadBuffer(enq.q->u.queue, mem->u.mem,
			    CL_FALSE, m->offset, m->size, c->stage->data,
			    enq.nwait, enq.wait, &enq.ev);
	}
	vcl_enq_end(s, &enq, err, c);
}

/* CopyBuffer: device to device inside the node. */
void
vcl_op_copy_buffer(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CopyBuffer	*m = req->copy_buffer;
	struct vcl_hobj		*src, *dst;
	struct vcl_enq		 enq;
	cl_int			 err;

	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (src = vcl_mem_get(s, m->src, &err)) != NULL &&
	    (dst = vcl_mem_get(s, m->dst, &err)) != NULL)
		err = clEnqueueCopyBuffer(enq.q->u.queue, src->u.mem,
		    dst->u.mem, m->src_offset, m->dst_offset, m->size,
		    enq.nwait, enq.wait, enq.event_id ? &enq.ev : NULL);
	vcl_enq_end(s, &enq, err, NULL);
}

/*
 * A fill's pattern and range as the specification wants them: a pattern
 * of 1 to 128 bytes, a power of two, that divides the offset and the size.
 * Checked before the runtime sees them: NVIDIA's runtime (H100, driver
 * 580) crashed on a fill with no pattern, as one from the wire can be.
 */
static cl_int
vcl_mem_fill_ok(const void *pattern, size_t len, uint64_t off, uint64_t size)
{
	if (pattern == NULL || len == 0 || len > 128 || (len & (len - 1)) !=
	    0 || off % len != 0 || size % len != 0)
		return (CL_INVALID_VALUE);
	return (CL_SUCCESS);
}

/* FillBuffer: a pattern repeated over a range. */
void
vcl_op_fill_buffer(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__FillBuffer	*m = req->fill_buffer;
	struct vcl_hobj		*mem;
	struct vcl_enq		 enq;
	cl_int			 err;

	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (mem = vcl_mem_buf_range(s, m->mem, m->offset, m->size, &err)) !=
	    NULL && (err = vcl_mem_fill_ok(m->pattern.data, m->pattern.len,
	    m->offset, m->size)) == CL_SUCCESS)
		err = clEnqueueFillBuffer(enq.q->u.queue, mem->u.mem,
		    m->pattern.data, m->pattern.len, m->offset, m->size,
		    enq.nwait, enq.wait, enq.event_id ? &enq.ev : NULL);
	vcl_enq_end(s, &enq, err, NULL);
}

/*
 * CreateSubBuffer: a region of a buffer of the session (not itself a
 * sub-buffer), sharing its bytes; nothing more is charged, and the parent,
 * released first, stays charged until the sub-buffer goes. The runtime
 * checks the flags against the parent's and the origin's alignment.
 */
void
vcl_op_create_sub_buffer(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateSubBuffer	*m = req->create_sub_buffer;
	struct vcl_hobj			*o, *p;
	cl_buffer_region		 r;
	cl_int				 err = CL_SUCCESS;

	(void)bulk;
	if ((o = vcl_session_add(s, m->id, VCL_KIND_MEM)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;		/* over the object limit */
	o->sub = 1;
	if ((p = vcl_mem_get(s, m->parent, &err)) == NULL)
		;
	else if (p->sub)
		err = CL_INVALID_MEM_OBJECT;
	else if (m->flags & ~(cl_mem_flags)VCL_MEM_FLAGS)
		err = CL_INVALID_VALUE;
	else if (m->size == 0)
		err = CL_INVALID_BUFFER_SIZE;
	else if ((err = vcl_mem_range(p, m->origin, m->size)) == CL_SUCCESS) {
		r.origin = m->origin;
		r.size = m->size;
		o->u.mem = clCreateSubBuffer(p->u.mem, m->flags,
		    CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
	}
	if (err == CL_SUCCESS) {
		o->bytes = m->size;	/* for range checks only */
		/* The parent's memory, and charge, stay while this lives. */
		o->parent = p->id;
		p->mem_refs++;
	} else
		vcl_log_info("session %llu: sub-buffer %llu of %llu failed: %d",
		    (unsigned long long)s->id, (unsigned long long)m->id,
		    (unsigned long long)m->parent, err);
	o->error = err;
}

/*
 * Check a rectangle from the wire against a buffer of `bytes` bytes: three
 * origin and three region entries, no empty region, pitches 0 (computed)
 * or large enough, and its last byte inside. Sets the pitches to use and
 * *n to the region's byte count. Every sum and product is checked for
 * overflow: the values are the peer's.
 */
static cl_int
vcl_mem_rect(uint64_t bytes, const uint64_t *origin, size_t norigin,
    const uint64_t *region, size_t nregion, uint64_t *row, uint64_t *slice,
    uint64_t *n)
{
	uint64_t	 t, u, end;

	if (norigin != 3 || nregion != 3 || region[0] == 0 ||
	    region[1] == 0 || region[2] == 0)
		return (CL_INVALID_VALUE);
	if (*row == 0)
		*row = region[0];
	else if (*row < region[0])
		return (CL_INVALID_VALUE);
	if (__builtin_mul_overflow(region[1], *row, &t))
		return (CL_INVALID_VALUE);
	if (*slice == 0)
		*slice = t;
	else if (*slice < t || *slice % *row != 0)
		return (CL_INVALID_VALUE);
	/* The byte after the last: origin + (region - 1) * pitches + 1. */
	if (__builtin_add_overflow(origin[2], region[2] - 1, &t) ||
	    __builtin_mul_overflow(t, *slice, &end) ||
	    __builtin_add_overflow(origin[1], region[1] - 1, &t) ||
	    __builtin_mul_overflow(t, *row, &u) ||
	    __builtin_add_overflow(end, u, &end) ||
	    __builtin_add_overflow(end, origin[0], &end) ||
	    __builtin_add_overflow(end, region[0], &end) || end > bytes)
		return (CL_INVALID_VALUE);
	if (__builtin_mul_overflow(region[0], region[1], &t) ||
	    __builtin_mul_overflow(t, region[2], n))
		return (CL_INVALID_VALUE);
	return (CL_SUCCESS);
}

/* Copy three wire values into the runtime's size_t triple. */
static void
vcl_mem_triple(size_t *dst, const uint64_t *src)
{
	dst[0] = src[0];
	dst[1] = src[1];
	dst[2] = src[2];
}

/*
 * WriteBufferRect: the region's bytes arrived packed in staging; the
 * runtime scatters them into the buffer's rectangle.
 */
void
vcl_op_write_buffer_rect(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__WriteBufferRect	*m = req->write_buffer_rect;
	static const size_t		 zero[3];
	struct vcl_hobj			*mem = NULL;
	struct vcl_enq			 enq;
	struct vcl_cmd			*c;
	uint64_t			 row = m->row_pitch;
	uint64_t			 slice = m->slice_pitch, n = 0;
	size_t				 o[3], r[3];
	cl_int				 err;

	if ((c = vcl_cmd_new(VCL_CMD_WRITE, req->seq)) == NULL) {
		vcl_session_close(s, "out of memory");
		return;
	}
	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (mem = vcl_mem_get(s, m->mem, &err)) != NULL)
		err = vcl_mem_rect(mem->bytes, m->origin, m->n_origin,
		    m->region, m->n_region, &row, &slice, &n);
	if (err == CL_SUCCESS && bulk->len != n) {
		vcl_session_close(s, "rect write size does not match its "
		    "bytes");
		vcl_enq_end(s, &enq, CL_INVALID_VALUE, c);	/* frees c */
		return;
	}
	if (bulk->data != NULL &&
	    (c->stage = vcl_stage_new(s, bulk->data, bulk->len)) == NULL) {
		vcl_session_close(s, "out of memory");
		vcl_enq_end(s, &enq, CL_OUT_OF_HOST_MEMORY, c);
		return;
	}
	bulk->data = NULL;	/* the stage owns it now, if any */
	if (err == CL_SUCCESS && (err = bulk->err) == CL_SUCCESS) {
		vcl_mem_triple(o, m->origin);
		vcl_mem_triple(r, m->region);
		err = clEnqueueWriteBufferRect(enq.q->u.queue, mem->u.mem,
		    CL_FALSE, o, zero, r, row, slice, r[0], r[0] * r[1],
		    c->stage->data, enq.nwait, enq.wait, &enq.ev);
	}
	vcl_enq_end(s, &enq, err, c);
}

/* ReadBufferRect: the runtime gathers the rectangle packed into staging. */
void
vcl_op_read_buffer_rect(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__ReadBufferRect	*m = req->read_buffer_rect;
	static const size_t		 zero[3];
	struct vcl_hobj			*mem;
	struct vcl_enq			 enq;
	struct vcl_cmd			*c;
	uint64_t			 row = m->row_pitch;
	uint64_t			 slice = m->slice_pitch, n = 0;
	size_t				 o[3], r[3];
	cl_int				 err;

	(void)bulk;
	if ((c = vcl_cmd_new(VCL_CMD_READ, req->seq)) == NULL) {
		vcl_session_close(s, "out of memory");
		return;
	}
	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (mem = vcl_mem_get(s, m->mem, &err)) != NULL &&
	    (err = vcl_mem_rect(mem->bytes, m->origin, m->n_origin,
	    m->region, m->n_region, &row, &slice, &n)) == CL_SUCCESS &&
	    (c->stage = vcl_stage_get(s, vcl_queue_context(s, enq.q), n,
	    CL_OUT_OF_RESOURCES, &err)) != NULL) {
		vcl_mem_triple(o, m->origin);
		vcl_mem_triple(r, m->region);
		err = clEnqueueReadBufferRect(enq.q->u.queue, mem->u.mem,
		    CL_FALSE, o, zero, r, row, slice, r[0], r[0] * r[1],
		    c->stage->data, enq.nwait, enq.wait, &enq.ev);
	}
	vcl_enq_end(s, &enq, err, c);
}

/*
 * The buffer a rect copy names in the runtime: a sub-buffer's parent with
 * the sub-buffer's offset added to *x, the origin's byte coordinate (the
 * rect's address is linear in it). PoCL dereferences NULL for a copy rect
 * of a sub-buffer; its parent gives the same bytes, and a copy between
 * overlapping sub-buffers of one parent is still CL_MEM_COPY_OVERLAP. A
 * copy between a buffer and its own sub-buffer is then one within a
 * buffer: the runtime wants equal pitches on both sides for it.
 */
static cl_int
vcl_mem_rect_base(const struct vcl_hobj *o, cl_mem *mem, size_t *x)
{
	cl_mem	parent = NULL;
	size_t	off = 0;

	*mem = o->u.mem;
	if (!o->sub)
		return (CL_SUCCESS);
	if (clGetMemObjectInfo(o->u.mem, CL_MEM_ASSOCIATED_MEMOBJECT,
	    sizeof parent, &parent, NULL) != CL_SUCCESS || parent == NULL ||
	    clGetMemObjectInfo(o->u.mem, CL_MEM_OFFSET, sizeof off, &off,
	    NULL) != CL_SUCCESS || __builtin_add_overflow(*x, off, x))
		return (CL_INVALID_MEM_OBJECT);
	*mem = parent;
	return (CL_SUCCESS);
}

/* CopyBufferRect: device to device inside the node, both rects checked. */
void
vcl_op_copy_buffer_rect(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CopyBufferRect	*m = req->copy_buffer_rect;
	struct vcl_hobj			*src, *dst;
	struct vcl_enq			 enq;
	uint64_t			 srow = m->src_row_pitch;
	uint64_t			 sslice = m->src_slice_pitch;
	uint64_t			 drow = m->dst_row_pitch;
	uint64_t			 dslice = m->dst_slice_pitch, n;
	size_t				 so[3], d[3], r[3];
	cl_mem				 smem, dmem;
	cl_int				 err;

	(void)bulk;
	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (src = vcl_mem_get(s, m->src, &err)) != NULL &&
	    (dst = vcl_mem_get(s, m->dst, &err)) != NULL &&
	    (err = vcl_mem_rect(src->bytes, m->src_origin, m->n_src_origin,
	    m->region, m->n_region, &srow, &sslice, &n)) == CL_SUCCESS &&
	    (err = vcl_mem_rect(dst->bytes, m->dst_origin, m->n_dst_origin,
	    m->region, m->n_region, &drow, &dslice, &n)) == CL_SUCCESS) {
		vcl_mem_triple(so, m->src_origin);
		vcl_mem_triple(d, m->dst_origin);
		vcl_mem_triple(r, m->region);
		if ((err = vcl_mem_rect_base(src, &smem, &so[0])) ==
		    CL_SUCCESS && (err = vcl_mem_rect_base(dst, &dmem,
		    &d[0])) == CL_SUCCESS)
			err = clEnqueueCopyBufferRect(enq.q->u.queue, smem,
			    dmem, so, d, r, srow, sslice, drow, dslice,
			    enq.nwait, enq.wait,
			    enq.event_id ? &enq.ev : NULL);
	}
	vcl_enq_end(s, &enq, err, NULL);
}
