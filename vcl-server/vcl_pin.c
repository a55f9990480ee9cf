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
 * bounded by vcl_pin_max (--max-pinned); free blocks of any context give
 * way to what would go over it; past it still, or where the runtime
 * refuses, callers fall back to pooled malloc'd memory (vcl_pool.c). A
 * block given back after its context was released is destroyed then; the
 * runtime context lives until its last block is gone. Rings of shared
 * slots are pinned the same way, by wrapping (below). Loop thread only.
 *
 * One session may hold only its share of vcl_pin_max (--max-pinned-session,
 * by default half): its contexts' blocks and the rings wrapped for them
 * are charged to its struct vcl_pinuse, and past its share its new
 * requests go pageable as if over the budget, so that one session's rings
 * and staging cannot keep every other session pageable.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * A session's pinned bytes. Referenced by the session, by each of its
 * contexts' block sets and by each wrapper made for them: what comes back
 * after the session went is still taken off before it is freed.
 */
struct vcl_pinuse {
	uint64_t		 bytes;		/* blocks and wrappers */
	uint64_t		 idle;		/* of it, in free blocks */
	int			 refs;
};

struct vcl_pins {
	cl_context		 ctx;		/* retained */
	cl_command_queue	 q;		/* maps and unmaps; at first use */
	struct vcl_pinuse	*use;		/* the owner's; NULL: none */
	struct vcl_pinblk	*free;		/* most recently used first */
	int			 nfree;
	int			 out;		/* blocks handed out */
	unsigned		 closed:1;	/* the context was released */
	unsigned		 refused:1;	/* the runtime said no once */
	LIST_ENTRY(vcl_pins)	 entry;		/* vcl_pins_all */
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
uint64_t		 vcl_pin_session_max;	/* 0: vcl_pin_max / 2 */
static uint64_t		 vcl_pin_nshare;	/* refused for a share */
static uint64_t		 vcl_pin_total;
static uint64_t		 vcl_pin_idle;	/* of it, in free blocks */
static LIST_HEAD(, vcl_pins) vcl_pins_all = LIST_HEAD_INITIALIZER(vcl_pins_all);
static struct vcl_pinblk *vcl_pin_out[VCL_PIN_BUCKETS];	/* by pointer */

/* A new owner of pinned bytes (a session), with one reference. */
struct vcl_pinuse *
vcl_pin_use_new(void)
{
	struct vcl_pinuse	*u;

	if ((u = calloc(1, sizeof *u)) != NULL)
		u->refs = 1;
	return (u);
}

/* Drop a reference to an owner; the last frees it. */
void
vcl_pin_use_drop(struct vcl_pinuse *u)
{
	if (u != NULL && --u->refs == 0)
		free(u);
}

/* Pinned bytes an owner holds now (0 for none). */
uint64_t
vcl_pin_use_bytes(const struct vcl_pinuse *u)
{
	return (u != NULL ? u->bytes : 0);
}

/* Requests (blocks, ring wrappers) left pageable for a session's share. */
uint64_t
vcl_pin_share_refused(void)
{
	return (vcl_pin_nshare);
}

/* What one session may hold pinned. */
static uint64_t
vcl_pin_share(void)
{
	return (vcl_pin_session_max != 0 ? vcl_pin_session_max :
	    vcl_pin_max / 2);
}

/* Whether need more bytes fit u's share (no owner: always). */
static int
vcl_pin_use_fits(const struct vcl_pinuse *u, uint64_t need)
{
	uint64_t	share = vcl_pin_share();

	return (u == NULL || (u->bytes <= share && need <= share - u->bytes));
}

/* Count n bytes of p's blocks in (or out of, !in) its free list. */
static void
vcl_pin_idle_add(struct vcl_pins *p, uint64_t n, int in)
{
	if (in) {
		vcl_pin_idle += n;
		if (p->use != NULL)
			p->use->idle += n;
	} else {
		vcl_pin_idle -= n;
		if (p->use != NULL)
			p->use->idle -= n;
	}
}

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
	if (b->pins->use != NULL)
		b->pins->use->bytes -= b->cap;
	free(b);
}

static void
vcl_pins_free(struct vcl_pins *p)
{
	LIST_REMOVE(p, entry);
	if (p->q != NULL)
		clReleaseCommandQueue(p->q);
	clReleaseContext(p->ctx);
	vcl_pin_use_drop(p->use);
	free(p);
}

/* Drop the least recently used free block. */
static void
vcl_pin_drop_oldest(struct vcl_pins *p)
{
	struct vcl_pinblk	**bp;

	for (bp = &p->free; (*bp)->next != NULL; bp = &(*bp)->next)
		;
	vcl_pin_idle_add(p, (*bp)->cap, 0);
	vcl_pin_destroy(*bp);
	*bp = NULL;
	p->nfree--;
}

/*
 * Make room for need more pinned bytes under vcl_pin_max by destroying
 * free blocks, the least recently used of each context, of any context:
 * blocks a session keeps for its next transfers must not keep another
 * session's transfers (or rings) pageable. Returns 1 when need fits.
 */
static int
vcl_pin_room(uint64_t need)
{
	struct vcl_pins	*p;

	if (vcl_pin_total + need <= vcl_pin_max)
		return (1);
	LIST_FOREACH(p, &vcl_pins_all, entry)
		while (vcl_pin_total + need > vcl_pin_max && p->free != NULL)
			vcl_pin_drop_oldest(p);
	return (vcl_pin_total + need <= vcl_pin_max);
}

/*
 * Make room for need more bytes in u's share by destroying free blocks of
 * its own contexts. Returns 1 when need fits; 0 counts a refusal.
 */
static int
vcl_pin_use_room(struct vcl_pinuse *u, uint64_t need)
{
	struct vcl_pins	*p;

	if (u == NULL)
		return (1);
	LIST_FOREACH(p, &vcl_pins_all, entry)
		while (p->use == u && !vcl_pin_use_fits(u, need) &&
		    p->free != NULL)
			vcl_pin_drop_oldest(p);
	if (vcl_pin_use_fits(u, need))
		return (1);
	vcl_pin_nshare++;
	vcl_log_debug("pinned staging of %llu bytes left pageable: over the "
	    "session's share (%llu of %llu held)", (unsigned long long)need,
	    (unsigned long long)u->bytes,
	    (unsigned long long)vcl_pin_share());
	return (0);
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
	if (p->use != NULL)
		p->use->bytes += cap;
	vcl_log_debug("pinned block of %zu bytes (%llu pinned in all)", cap,
	    (unsigned long long)vcl_pin_total);
	return (b);
}

/*
 * The pinned blocks of context ctx, charged to owner u (a session; NULL:
 * none), with nothing pinned yet. NULL when out of memory.
 */
struct vcl_pins *
vcl_pin_open(cl_context ctx, struct vcl_pinuse *u)
{
	struct vcl_pins	*p;

	if (ctx == NULL || (p = calloc(1, sizeof *p)) == NULL)
		return (NULL);
	clRetainContext(ctx);
	p->ctx = ctx;
	if ((p->use = u) != NULL)
		u->refs++;
	LIST_INSERT_HEAD(&vcl_pins_all, p, entry);
	return (p);
}

/*
 * Pinned staging for n bytes moved to or from a device of ctx, from the
 * context's blocks *pp (made on first use, with no owner, if the context
 * has none from vcl_pin_open). NULL: none to spare (too small a transfer,
 * over vcl_pin_max or the owner's share, refused by the runtime, out of
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
	if (p == NULL && (p = *pp = vcl_pin_open(ctx, NULL)) == NULL)
		return (NULL);
	if (p->closed || p->refused)
		return (NULL);
	if (p->q == NULL) {
		if (clGetContextInfo(p->ctx, CL_CONTEXT_DEVICES, sizeof dev,
		    &dev, NULL) != CL_SUCCESS)
			return (NULL);
		p->q = clCreateCommandQueueWithProperties(p->ctx, dev, NULL,
		    &err);
		if (err != CL_SUCCESS) {
			p->q = NULL;
			return (NULL);
		}
	}
	for (bp = &p->free; (b = *bp) != NULL; bp = &b->next)
		if (b->cap == cap)
			break;
	if (b != NULL) {
		*bp = b->next;
		p->nfree--;
		vcl_pin_idle_add(p, b->cap, 0);
	} else {
		/* This context's own free blocks go first. */
		while (vcl_pin_total + cap > vcl_pin_max && p->free != NULL)
			vcl_pin_drop_oldest(p);
		if (!vcl_pin_use_room(p->use, cap) || !vcl_pin_room(cap) ||
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
	if (p->closed || vcl_pin_total > vcl_pin_max ||
	    !vcl_pin_use_fits(p->use, 0)) {
		vcl_pin_destroy(b);
		if (p->closed && p->out == 0)
			vcl_pins_free(p);
		return (1);
	}
	b->next = p->free;
	p->free = b;
	vcl_pin_idle_add(p, b->cap, 1);
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
		vcl_pin_idle_add(p, b->cap, 0);
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

/*
 * Rings of shared slots (a client's ShmRing, a peer link's placement ring)
 * that the runtime copies to and from. Pageable to the runtime, each copy
 * would go through its own bounce buffer; wrapped once in a
 * CL_MEM_USE_HOST_PTR buffer of a context, the ring is pinned for it and
 * a clEnqueueReadBuffer/WriteBuffer of that context whose host pointer
 * lies in the ring runs by DMA (NVIDIA: 52 GB/s against 8-12,
 * docs/performance.md). The copies stay on the slot pointers: the
 * wrapper is never enqueued, it only has to be alive.
 *
 * A wrapper is made at a ring's first use with a context (pinning takes
 * milliseconds: never per command), charged to vcl_pin_max with the
 * staging blocks, and dropped when its ring or its context goes. Each
 * copy in flight holds a reference (vcl_pin_wrap/vcl_pin_unwrap), so a
 * dropped wrapper is released only once no copy uses its pages. Where
 * the runtime refuses, the base is not aligned for the device, or the
 * budget is spent, the pair (ring, context) stays pageable: the copies
 * run as before. VCL_SHM_PIN=0 turns wrapping off (to compare);
 * VCL_TEST_PIN_REFUSE=1 makes every wrapper fail as a refusal would.
 */
struct vcl_pinwrap {
	struct vcl_pinring	*ring;		/* NULL once dropped */
	cl_context		 ctx;		/* the wrapper holds it */
	struct vcl_pinuse	*use;		/* charged: ctx's owner */
	cl_mem			 mem;		/* NULL: refused, pageable */
	size_t			 bytes;		/* charged */
	int			 refs;		/* the ring's, and copies' */
	unsigned		 over:1;	/* refused for the budget */
	struct vcl_pinwrap	*next;
};

struct vcl_pinring {
	uint8_t			*base;
	size_t			 len;
	struct vcl_pinwrap	*wraps;
	struct vcl_pinring	*next;
};

static struct vcl_pinring	*vcl_pin_rings;
static uint64_t			 vcl_pin_ring_total;	/* wrapped now */
static uint64_t			 vcl_pin_ring_nrefused;
static int			 vcl_pin_ring_on = -1;	/* VCL_SHM_PIN */

/* Whether rings are wrapped at all (VCL_SHM_PIN, read once). */
static int
vcl_pin_ring_enabled(void)
{
	const char	*e;

	if (vcl_pin_ring_on == -1) {
		e = getenv("VCL_SHM_PIN");
		vcl_pin_ring_on = e == NULL || strcmp(e, "0") != 0;
	}
	return (vcl_pin_ring_on);
}

/* A ring of len bytes at base (page aligned) is mapped. */
struct vcl_pinring *
vcl_pin_ring_add(void *base, size_t len)
{
	struct vcl_pinring	*r;

	if ((r = calloc(1, sizeof *r)) == NULL)
		return (NULL);
	r->base = base;
	r->len = len;
	r->next = vcl_pin_rings;
	vcl_pin_rings = r;
	return (r);
}

/* The ring [p, p + len) lies in, or NULL. */
struct vcl_pinring *
vcl_pin_ring_of(const void *p, size_t len)
{
	struct vcl_pinring	*r;
	const uint8_t		*b = p;

	for (r = vcl_pin_rings; r != NULL; r = r->next)
		if (b >= r->base && len <= r->len &&
		    (size_t)(b - r->base) <= r->len - len)
			return (r);
	return (NULL);
}

/* Drop one reference to a wrapper; the last releases it. */
void
vcl_pin_unwrap(struct vcl_pinwrap *w)
{
	if (w == NULL || --w->refs > 0)
		return;
	if (w->mem != NULL) {
		clReleaseMemObject(w->mem);
		vcl_pin_total -= w->bytes;
		vcl_pin_ring_total -= w->bytes;
		if (w->use != NULL)
			w->use->bytes -= w->bytes;
	}
	vcl_pin_use_drop(w->use);
	free(w);
}

/* Take w off its ring (the ring or its context goes). */
static void
vcl_pin_wrap_drop(struct vcl_pinwrap **wp)
{
	struct vcl_pinwrap	*w = *wp;

	*wp = w->next;
	w->ring = NULL;
	w->next = NULL;
	vcl_pin_unwrap(w);
}

/*
 * The ring is about to be unmapped (nothing copies to or from it any
 * more): its wrappers go.
 */
void
vcl_pin_ring_del(struct vcl_pinring *r)
{
	struct vcl_pinring	**rp;

	if (r == NULL)
		return;
	for (rp = &vcl_pin_rings; *rp != NULL; rp = &(*rp)->next)
		if (*rp == r) {
			*rp = r->next;
			break;
		}
	while (r->wraps != NULL)
		vcl_pin_wrap_drop(&r->wraps);
	free(r);
}

/* The context is released: every ring's wrapper of it goes. */
void
vcl_pin_ring_forget(cl_context ctx)
{
	struct vcl_pinring	*r;
	struct vcl_pinwrap	**wp;

	for (r = vcl_pin_rings; r != NULL; r = r->next)
		for (wp = &r->wraps; *wp != NULL; )
			if ((*wp)->ctx == ctx)
				vcl_pin_wrap_drop(wp);
			else
				wp = &(*wp)->next;
}

/*
 * Make r's wrapper in ctx (w->mem stays NULL when it cannot be had: not
 * aligned for a device of ctx, over vcl_pin_max, refused). A pair is
 * counted refused once, however often it is asked again.
 */
static void
vcl_pin_wrap_make(struct vcl_pinwrap *w, struct vcl_pinring *r,
    cl_context ctx)
{
	const char	*e = getenv("VCL_TEST_PIN_REFUSE");
	const char	*why = NULL, *over = NULL;
	cl_device_id	 devs[16];
	cl_uint		 align;
	size_t		 n = 0, i;
	cl_int		 err = CL_SUCCESS;

	if (clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs,
	    &n) != CL_SUCCESS)
		n = 0;
	n /= sizeof devs[0];
	for (i = 0; i < n && why == NULL; i++)
		if (clGetDeviceInfo(devs[i], CL_DEVICE_MEM_BASE_ADDR_ALIGN,
		    sizeof align, &align, NULL) != CL_SUCCESS || align == 0 ||
		    (uintptr_t)r->base % (align / 8 ? align / 8 : 1) != 0)
			why = "its base is not aligned for a device";
	if (why == NULL && n == 0)
		why = "the context names no device";
	if (why == NULL && !vcl_pin_room(r->len))
		why = over = "over --max-pinned";
	if (why == NULL && !vcl_pin_use_room(w->use, r->len))
		why = over = "over the session's share of --max-pinned";
	if (why == NULL && e != NULL && strcmp(e, "1") == 0) {
		err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
		why = "refused by the runtime";
	}
	if (why == NULL) {
		w->mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE |
		    CL_MEM_USE_HOST_PTR, r->len, r->base, &err);
		if (err != CL_SUCCESS) {
			w->mem = NULL;
			why = "refused by the runtime";
		}
	}
	if (why != NULL) {
		if (!w->over)
			vcl_pin_ring_nrefused++;
		w->over = why == over;
		vcl_log_info("shared ring of %zu bytes stays pageable for this "
		    "context: %s (error %d)", r->len, why, (int)err);
		return;
	}
	w->over = 0;
	w->bytes = r->len;
	if (w->use != NULL)
		w->use->bytes += w->bytes;
	vcl_pin_total += w->bytes;
	vcl_pin_ring_total += w->bytes;
	vcl_log_debug("shared ring of %zu bytes pinned for a context (%llu "
	    "pinned in all)", r->len, (unsigned long long)vcl_pin_total);
}

/*
 * Before a copy to or from ring r in the context of blocks p
 * (vcl_pin_open): r's wrapper in that context (made at the first, charged
 * to p's owner), with a reference for the copy to give back with
 * vcl_pin_unwrap once it completed. NULL: the copy goes pageable. A pair
 * refused only for the budget (or the owner's share) is asked again once
 * the ring fits: what held the budget then (another session's rings, its
 * contexts) may be gone, and the pair would stay pageable for the
 * session's life.
 */
struct vcl_pinwrap *
vcl_pin_wrap(struct vcl_pinring *r, struct vcl_pins *p)
{
	struct vcl_pinwrap	*w;
	struct vcl_pinuse	*u;
	cl_context		 ctx;

	if (r == NULL || p == NULL || p->closed || !vcl_pin_ring_enabled())
		return (NULL);
	ctx = p->ctx;
	u = p->use;
	for (w = r->wraps; w != NULL; w = w->next)
		if (w->ctx == ctx)
			break;
	if (w == NULL) {
		/* Asked once per pair, but for the budget (below). */
		if ((w = calloc(1, sizeof *w)) == NULL)
			return (NULL);
		w->ring = r;
		w->ctx = ctx;
		w->refs = 1;
		if ((w->use = u) != NULL)
			u->refs++;
		vcl_pin_wrap_make(w, r, ctx);
		w->next = r->wraps;
		r->wraps = w;
	} else if (w->mem == NULL && w->over &&
	    vcl_pin_total - vcl_pin_idle + r->len <= vcl_pin_max &&
	    (u == NULL || u->bytes - u->idle + r->len <= vcl_pin_share()))
		vcl_pin_wrap_make(w, r, ctx);
	if (w->mem == NULL)
		return (NULL);
	w->refs++;
	return (w);
}

/* Bytes of rings wrapped now. */
uint64_t
vcl_pin_ring_bytes(void)
{
	return (vcl_pin_ring_total);
}

/* (Ring, context) pairs left pageable since start. */
uint64_t
vcl_pin_ring_refused(void)
{
	return (vcl_pin_ring_nrefused);
}
