/* fuzz_ndrdec.c - libFuzzer: the launch decoder against protobuf-c. */

/*
 * Whatever vcl_ndrdec_unpack takes from the input must be what protobuf-c
 * makes of the same bytes (both packed again compare equal), and freeing
 * it through the same allocator must give back every piece; what it does
 * not take it must leave with nothing allocated. Seeds: corpus_ndrdec/.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_ndrdec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static long	fz_live;

static void *
fz_alloc(void *data, size_t n)
{
	(void)data;
	fz_live++;
	return (malloc(n));
}

static void
fz_free(void *data, void *p)
{
	(void)data;
	fz_live--;
	free(p);
}

static ProtobufCAllocator	fz_cnt = { fz_alloc, fz_free, NULL };

/* Pack a request into a new buffer; *n gets its length. */
static uint8_t *
fz_pack(const Vcl__Request *r, size_t *n)
{
	uint8_t	*p;

	*n = vcl__request__get_packed_size(r);
	if ((p = malloc(*n + 1)) == NULL)
		abort();
	vcl__request__pack(r, p);
	return (p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Vcl__Request	*fast, *ref;
	uint8_t		*pf, *pr;
	size_t		 nf, nr;

	fz_live = 0;
	if ((fast = vcl_ndrdec_unpack(&fz_cnt, size, data)) == NULL) {
		if (fz_live != 0)
			abort();
		return (0);
	}
	if ((ref = vcl__request__unpack(NULL, size, data)) == NULL)
		abort();		/* taken, but protobuf-c refuses it */
	pf = fz_pack(fast, &nf);
	pr = fz_pack(ref, &nr);
	if (nf != nr || memcmp(pf, pr, nf) != 0)
		abort();		/* taken differently */
	free(pf);
	free(pr);
	vcl__request__free_unpacked(ref, NULL);
	protobuf_c_message_free_unpacked(&fast->base, &fz_cnt);
	if (fz_live != 0)
		abort();		/* a piece not given back, or twice */
	return (0);
}
