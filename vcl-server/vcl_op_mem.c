/* vcl_op_mem.c - buffers: creation and read/write/copy/fill commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_log.h"
#include "vcl_pool.h"
#include "vcl_server.h"

/* Flags a client may send; host-pointer flags stay on the client. */
#define VCL_MEM_FLAGS	(CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY |	\
	CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR | CL_MEM_HOST_WRITE_ONLY | \
	CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)

/* The buffer of an id, or NULL with *err (its creation error, if it failed). */
static struct vcl_hobj *
vcl_mem_get(struct vcl_session *s, uint64_t id, cl_int *err)
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

	mb->mem = clCreateBuffer(mb->ctx, mb->flags | CL_MEM_COPY_HOST_PTR,
	    mb->size, (void *)mb->host, &mb->err);
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
		o = vcl_handle_get(&s->handles, mb->id, VCL_KIND_MEM);
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
	if (vcl_workers_run(s->srv->movers, vcl_mem_create_run, mb) != 0) {
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
	clReleaseMemObject(arg);
}

/*
 * Release a buffer; a large one on a mover thread (the runtime frees its
 * pages there, 200 ms a GiB). Its bytes are uncharged at once: the
 * session's next large creation queues behind the release on the movers.
 */
void
vcl_mem_release(struct vcl_session *s, cl_mem mem, uint64_t bytes)
{
	if (mem != NULL && (bytes < VCL_MOVE_MIN ||
	    vcl_workers_run(s->srv->movers, vcl_mem_release_run, mem) != 0))
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
 * The buffer of an id with offset + size inside it, or NULL with *err:
 * what every command on a buffer range checks first.
 */
struct vcl_hobj *
vcl_mem_range_get(struct vcl_session *s, uint64_t id, uint64_t off,
    uint64_t size, cl_int *err)
{
	struct vcl_hobj	*o;

	if ((o = vcl_mem_get(s, id, err)) != NULL &&
	    (*err = vcl_mem_range(o, off, size)) != CL_SUCCESS)
		o = NULL;
	return (o);
}

/* WriteBuffer: bytes arrived in staging; the runtime copies them in. */
void
vcl_op_write_buffer(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__WriteBuffer	*m = req->write_buffer;
	struct vcl_hobj		*mem;
	struct vcl_enq		 enq;
	struct vcl_cmd		*c;
	cl_int			 err;

	if (bulk->len != m->size) {
		vcl_session_close(s, "write size does not match its bytes");
		return;
	}
	if ((c = vcl_cmd_new(VCL_CMD_WRITE, req->seq)) == NULL ||
	    (bulk->data != NULL &&
	    (c->stage = vcl_stage_new(s, bulk->data, bulk->len)) == NULL)) {
		free(c);
		vcl_session_close(s, "out of memory");
		return;
	}
	bulk->data = NULL;	/* the stage owns it now */
	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (mem = vcl_mem_range_get(s, m->mem, m->offset, m->size, &err)) !=
	    NULL && (err = bulk->err) == CL_SUCCESS)
		err = clEnqueueWriteBuffer(enq.q->u.queue, mem->u.mem, CL_FALSE,
		    m->offset, m->size, c->stage->data, enq.nwait, enq.wait,
		    &enq.ev);
	vcl_enq_end(s, &enq, err, c);
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

	if ((c = vcl_cmd_new(VCL_CMD_READ, req->seq)) == NULL) {
		vcl_session_close(s, "out of memory");
		return;
	}
	if ((err = vcl_enq_begin(s, m->q, &enq)) == CL_SUCCESS &&
	    (mem = vcl_mem_range_get(s, m->mem, m->offset, m->size, &err)) !=
	    NULL) {
		if ((c->stage = vcl_stage_get(s, vcl_queue_context(s, enq.q),
		    m->size, CL_OUT_OF_RESOURCES, &err)) != NULL)
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
	    (mem = vcl_mem_get(s, m->mem, &err)) != NULL)
		err = clEnqueueFillBuffer(enq.q->u.queue, mem->u.mem,
		    m->pattern.data, m->pattern.len, m->offset, m->size,
		    enq.nwait, enq.wait, enq.event_id ? &enq.ev : NULL);
	vcl_enq_end(s, &enq, err, NULL);
}
