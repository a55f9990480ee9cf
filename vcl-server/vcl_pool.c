/*
 * vcl_pool.c - staging memory for transfers. Large blocks are kept after use
 * and handed out again: a fresh 256 MiB block costs 65536 page faults on
 * its first touch, more than the copy itself. Loop thread only.
 */
#include <stdint.h>
#include <stdlib.h>

#include "vcl_pin.h"
#include "vcl_pool.h"

#define VCL_POOL_MIN	(1u << 20)	/* smaller blocks: plain malloc */
#define VCL_POOL_SLOTS	4
#define VCL_POOL_MAX	(512ull << 20)	/* bytes kept, at most */

static struct {
	void		*p;
	size_t		 cap;
	uint64_t	 used;		/* when last handed back, for LRU */
} vcl_pool[VCL_POOL_SLOTS];
static size_t	vcl_pool_bytes;
static uint64_t	vcl_pool_clock;

/* The capacity a block for n bytes gets: whole MiB above the minimum. */
static size_t
vcl_pool_cap(size_t n)
{
	if (n < VCL_POOL_MIN)
		return (n);
	return ((n + VCL_POOL_MIN - 1) & ~(size_t)(VCL_POOL_MIN - 1));
}

/* Take a kept block out of slot i. */
static void *
vcl_pool_take(size_t i)
{
	void	*p = vcl_pool[i].p;

	vcl_pool[i].p = NULL;
	vcl_pool_bytes -= vcl_pool[i].cap;
	return (p);
}

/*
 * A block for n bytes: a kept one of that capacity, else a new one. The
 * capacity is a whole number of MiB, so a block's size is known from n.
 */
void *
vcl_pool_get(size_t n)
{
	size_t	cap = vcl_pool_cap(n), i;

	if (n >= VCL_POOL_MIN)
		for (i = 0; i < VCL_POOL_SLOTS; i++)
			if (vcl_pool[i].p != NULL && vcl_pool[i].cap == cap)
				return (vcl_pool_take(i));
	return (malloc(cap > 0 ? cap : 1));
}

/*
 * Give a block of n bytes back (or a pinned one: vcl_pin.c). Large ones are kept, pushing out the
 * least recently used when the slots or the byte budget are full: the
 * sizes a program transfers now are the ones worth keeping.
 */
void
vcl_pool_put(void *p, size_t n)
{
	size_t	cap = vcl_pool_cap(n), i, lru;

	if (p == NULL || vcl_pin_put(p))
		return;
	if (n < VCL_POOL_MIN || cap > VCL_POOL_MAX) {
		free(p);
		return;
	}
	for (;;) {
		for (i = 0; i < VCL_POOL_SLOTS; i++)
			if (vcl_pool[i].p == NULL)
				break;
		if (i < VCL_POOL_SLOTS && vcl_pool_bytes + cap <= VCL_POOL_MAX)
			break;
		/* Full: free the least recently used block. */
		for (lru = VCL_POOL_SLOTS, i = 0; i < VCL_POOL_SLOTS; i++)
			if (vcl_pool[i].p != NULL && (lru == VCL_POOL_SLOTS ||
			    vcl_pool[i].used < vcl_pool[lru].used))
				lru = i;
		free(vcl_pool_take(lru));
	}
	vcl_pool[i].p = p;
	vcl_pool[i].cap = cap;
	vcl_pool[i].used = ++vcl_pool_clock;
	vcl_pool_bytes += cap;
}

/* Free every kept block (at exit). */
void
vcl_pool_drain(void)
{
	size_t	i;

	for (i = 0; i < VCL_POOL_SLOTS; i++)
		if (vcl_pool[i].p != NULL)
			free(vcl_pool_take(i));
}
