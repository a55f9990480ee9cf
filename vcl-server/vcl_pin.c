/*
 * vcl_pin.c - pinned staging for transfers: host memory that the OpenCL
 * runtime moves to and from a device by DMA. A block is a buffer made
 * with CL_MEM_ALLOC_HOST_PTR in the transfer's context and mapped once for
 * its whole life; the mapped pointer is the staging memory, handed to
 * clEnqueueReadBuffer/WriteBuffer of other buffers of that context. On
 * NVIDIA's runtime a 1 MiB read into such memory takes about 30 us, into
 * malloc'd memory 136 us (docs/performance.md).
 *
 * Making a block pins pages, which is slow, so each context keeps a few
 * free blocks for its next transfers. All pinned bytes of the process are
 * bounded by vcl_pin_max (--max-pinned); past it, or where the runtime
 * refuses, callers fall back to pooled malloc'd memory (vcl_pool.c). A
 * block given back after its context was released is destroyed then; the
 * runtime context lives until its last block is gone. Loop thread only.
 */
#include <stdint.h>
#include <stdlib.h>

#include "vcl_log.h"
#include "vcl_pin.h"

#define VCL_PIN_MIN	(4u << 10)	/* smaller transfers: not worth it */
#define VCL_PIN_CLASS	(64u << 10)	/* the smallest block */
#define VCL_PIN_KEEP	8		/* free blocks kept per context */
#define VCL_PIN_BUCKETS	64

struct vcl_pinblk {
	struct vcl_pins		*pins;
	cl_mem			 mem;
	uint8_t			*ptr;		/* mapped: the staging */
	size_t			 cap;
	struct vcl_pinblk	*next;		/* free list, or handed out */
};

struct vcl_pins {
	cl_context		 ctx;		/* retained */
	cl_command_queue	 q;		/* maps and unmaps */
	struct vcl_pinblk	*free;		/* most recently used first */
	int			 nfree;
	int			 out;		/* blocks handed out */
	unsigned		 closed:1;	/* the context was released */
	unsigned		 refused:1;	/* the runtime said no once */
};

/*
 * Room for a write and a read of up to 512 MiB each (blocks are powers of
 * two) at once: a write's staging is held until its device copy ends,
 * and a read behind it on the queue takes its staging when it arrives,
 * before that. With room for one 256 MiB block, a 256 MiB read right
 * after a 256 MiB write staged in pageable memory (on NVIDIA: 0.6x of
 * raw TCP instead of 0.9x, docs/performance.md "Pinned staging for both").
 */
uint64_t		 vcl_pin_max = 1ull << 30;
static uint64_t		 vcl_pin_total;
static struct vcl_pinblk *vcl_pin_out[VCL_PIN_BUCKETS];	/* by pointer */

/* The block size for n bytes: a power of two, at least VCL_PIN_CLASS. */
static size_t
vcl_pin_cap(size_t n)
{
	size_t	cap = VCL_PIN_CLASS;

	while (cap < n) {
		if (cap > SIZE_MAX / 2)
			return (0);
		cap <<= 1;
	}
	return (cap);
}

static size_t
vcl_pin_bucket(const void *p)
{
	uintptr_t	v = (uintptr_t)p;

	return ((v >> 12 ^ v >> 20) % VCL_PIN_BUCKETS);
}

/* Unmap and release a block; the runtime frees it once the unmap ran. */
static void
vcl_pin_destroy(struct vcl_pinblk *b)
{
	clEnqueueUnmapMemObject(b->pins->q, b->mem, b->ptr, 0, NULL, NULL);
	clFlush(b->pins->q);
	clReleaseMemObject(b->mem);
	vcl_pin_total -= b->cap;
	free(b);
}

static void
vcl_pins_free(struct vcl_pins *p)
{
	clReleaseCommandQueue(p->q);
	clReleaseContext(p->ctx);
	free(p);
}

/* Drop the least recently used free block. */
static void
vcl_pin_drop_oldest(struct vcl_pins *p)
{
	struct vcl_pinblk	**bp;

	for (bp = &p->free; (*bp)->next != NULL; bp = &(*bp)->next)
		;
	vcl_pin_destroy(*bp);
	*bp = NULL;
	p->nfree--;
}

/* A new block of cap bytes in p's context, mapped; NULL if refused. */
static struct vcl_pinblk *
vcl_pin_make(struct vcl_pins *p, size_t cap)
{
	struct vcl_pinblk	*b;
	cl_int			 err;

	if ((b = calloc(1, sizeof *b)) == NULL)
		return (NULL);
	b->pins = p;
	b->cap = cap;
	b->mem = clCreateBuffer(p->ctx, CL_MEM_READ_WRITE |
	    CL_MEM_ALLOC_HOST_PTR, cap, NULL, &err);
	if (err == CL_SUCCESS) {
		/* Nothing to keep: the host writes before it reads. */
		b->ptr = clEnqueueMapBuffer(p->q, b->mem, CL_TRUE,
		    CL_MAP_WRITE_INVALIDATE_REGION, 0, cap, 0, NULL, NULL,
		    &err);
		if (err != CL_SUCCESS)
			clReleaseMemObject(b->mem);
	}
	if (err != CL_SUCCESS) {
		vcl_log_info("pinned staging of %zu bytes refused (error %d): "
		    "this context stages in pageable memory", cap, (int)err);
		p->refused = 1;
		free(b);
		return (NULL);
	}
	vcl_pin_total += cap;
	vcl_log_debug("pinned block of %zu bytes (%llu pinned in all)", cap,
	    (unsigned long long)vcl_pin_total);
	return (b);
}

/*
 * Pinned staging for n bytes moved to or from a device of ctx, from the
 * context's blocks *pp (made on first use). NULL: none to spare (too
 * small a transfer, over vcl_pin_max, refused by the runtime, out of
 * memory); the caller stages in pageable memory then.
 */
void *
vcl_pin_get(struct vcl_pins **pp, cl_context ctx, size_t n)
{
	struct vcl_pins		*p = *pp;
	struct vcl_pinblk	*b, **bp;
	cl_device_id		 dev;
	cl_int			 err;
	size_t			 cap, h;

	if (n < VCL_PIN_MIN || (cap = vcl_pin_cap(n)) == 0 ||
	    cap > vcl_pin_max || ctx == NULL)
		return (NULL);
	if (p == NULL) {
		if (clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev,
		    NULL) != CL_SUCCESS || (p = calloc(1, sizeof *p)) == NULL)
			return (NULL);
		p->q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
		if (err != CL_SUCCESS) {
			free(p);
			return (NULL);
		}
		clRetainContext(ctx);
		p->ctx = ctx;
		*pp = p;
	}
	if (p->closed || p->refused)
		return (NULL);
	for (bp = &p->free; (b = *bp) != NULL; bp = &b->next)
		if (b->cap == cap)
			break;
	if (b != NULL) {
		*bp = b->next;
		p->nfree--;
	} else {
		while (vcl_pin_total + cap > vcl_pin_max && p->free != NULL)
			vcl_pin_drop_oldest(p);
		if (vcl_pin_total + cap > vcl_pin_max ||
		    (b = vcl_pin_make(p, cap)) == NULL)
			return (NULL);
	}
	h = vcl_pin_bucket(b->ptr);
	b->next = vcl_pin_out[h];
	vcl_pin_out[h] = b;
	p->out++;
	return (b->ptr);
}

/*
 * Give back staging that may be pinned. Returns 1 if ptr was a pinned
 * block (kept for its context's next transfer, or destroyed), 0 if not.
 */
int
vcl_pin_put(void *ptr)
{
	struct vcl_pinblk	*b, **bp;
	struct vcl_pins		*p;

	if (ptr == NULL)
		return (0);
	for (bp = &vcl_pin_out[vcl_pin_bucket(ptr)]; (b = *bp) != NULL;
	    bp = &b->next)
		if (b->ptr == ptr)
			break;
	if (b == NULL)
		return (0);
	*bp = b->next;
	p = b->pins;
	p->out--;
	if (p->closed || vcl_pin_total > vcl_pin_max) {
		vcl_pin_destroy(b);
		if (p->closed && p->out == 0)
			vcl_pins_free(p);
		return (1);
	}
	b->next = p->free;
	p->free = b;
	if (++p->nfree > VCL_PIN_KEEP)
		vcl_pin_drop_oldest(p);
	return (1);
}

/*
 * The context is released: destroy its free blocks now, the rest as they
 * come back (vcl_pin_put); the runtime context is let go after the last.
 */
void
vcl_pin_close(struct vcl_pins *p)
{
	struct vcl_pinblk	*b;

	if (p == NULL)
		return;
	p->closed = 1;
	while ((b = p->free) != NULL) {
		p->free = b->next;
		vcl_pin_destroy(b);
	}
	p->nfree = 0;
	if (p->out == 0)
		vcl_pins_free(p);
}

/* Pinned bytes of the process now (kept and handed out). */
uint64_t
vcl_pin_bytes(void)
{
	return (vcl_pin_total);
}
