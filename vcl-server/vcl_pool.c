/*
 * vcl_pool.c - staging memory for transfers. Large blocks are kept after use
 * and handed out again: a fresh 256 MiB block costs 65536 page faults on
 * its first touch, more than the copy itself. Loop thread only.
 */
#include <stdlib.h>

#include "vcl_pool.h"

#define VCL_POOL_MIN	(1u << 20)	/* smaller blocks: plain malloc */
#define VCL_POOL_SLOTS	4
#define VCL_POOL_MAX	(512ull << 20)	/* bytes kept, at most */

static struct {
	void	*p;
	size_t	 cap;
} vcl_pool[VCL_POOL_SLOTS];
static size_t	vcl_pool_bytes;

/* The capacity a block for n bytes gets: whole MiB above the minimum. */
static size_t
vcl_pool_cap(size_t n)
{
	if (n < VCL_POOL_MIN)
		return (n);
	return ((n + VCL_POOL_MIN - 1) & ~(size_t)(VCL_POOL_MIN - 1));
}

/* A block for n bytes: a kept one that fits, else a new one. */
void *
vcl_pool_get(size_t n)
{
	size_t	cap = vcl_pool_cap(n), i;
	void	*p;

	if (n >= VCL_POOL_MIN) {
		for (i = 0; i < VCL_POOL_SLOTS; i++) {
			if (vcl_pool[i].p != NULL && vcl_pool[i].cap == cap) {
				p = vcl_pool[i].p;
				vcl_pool[i].p = NULL;
				vcl_pool_bytes -= cap;
				return (p);
			}
		}
	}
	return (malloc(cap > 0 ? cap : 1));
}

/* Give a block of n bytes back; large ones are kept while there is room. */
void
vcl_pool_put(void *p, size_t n)
{
	size_t	cap = vcl_pool_cap(n), i;

	if (p == NULL)
		return;
	if (n >= VCL_POOL_MIN && vcl_pool_bytes + cap <= VCL_POOL_MAX) {
		for (i = 0; i < VCL_POOL_SLOTS; i++) {
			if (vcl_pool[i].p == NULL) {
				vcl_pool[i].p = p;
				vcl_pool[i].cap = cap;
				vcl_pool_bytes += cap;
				return;
			}
		}
	}
	free(p);
}

/* Free every kept block (at exit). */
void
vcl_pool_drain(void)
{
	size_t	i;

	for (i = 0; i < VCL_POOL_SLOTS; i++) {
		free(vcl_pool[i].p);
		vcl_pool[i].p = NULL;
	}
	vcl_pool_bytes = 0;
}
