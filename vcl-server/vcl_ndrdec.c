/* vcl_ndrdec.c - a direct decoder for NDRange requests. */

/*
 * A kernel launch is the request a server decodes most often, and
 * protobuf-c's generic unpack (a descriptor lookup per field, a count
 * pass per repeated field) was most of the loop's own time per launch.
 * This decodes a Request carrying an NDRange, as libvcl writes it, in one
 * pass into the same structures protobuf-c would make, allocated from the
 * given allocator piece by piece as protobuf-c does, so that
 * protobuf_c_message_free_unpacked frees them.
 *
 * It takes only what it knows for sure: the fields below, each scalar and
 * submessage once, repeated scalars unpacked, bounded counts, integers
 * that fit their types. Anything else (another call, an unknown field,
 * a repeated scalar or submessage field seen again, packed lists, an
 * enum value outside the schema, a truncated or over-long varint) makes
 * it return NULL without allocating, and the caller hands the message to
 * protobuf-c, which accepts or refuses it as it always did.
 */

#include <stdint.h>
#include <string.h>

#include "vcl_ndrdec.h"

#define NDR_ARGS_MAX	32		/* kernel arguments taken here */
#define NDR_WAIT_MAX	16		/* wait list entries taken here */
#define NDR_DIMS_MAX	3		/* offset, global, local entries */
#define NDR_CALL	25		/* Request.ndrange's field number */

#define NDR_VARINT	0		/* wire types */
#define NDR_LEN		2

/* Bytes left to read. */
struct ndr_rd {
	const uint8_t	*p;
	const uint8_t	*end;
};

/* One argument as read: value points into the message. */
struct ndr_arg {
	uint32_t	 index;
	uint32_t	 type;
	const uint8_t	*val;
	size_t		 val_len;
	uint64_t	 mem;
	uint64_t	 size;
	unsigned	 seen;		/* bit per field number */
};

/* The whole request as read, before anything is allocated. */
struct ndr_msg {
	uint64_t	 seq, bulk_xfer, bulk_size;
	unsigned	 req_seen;
	uint64_t	 queue, event;
	uint64_t	 wait[NDR_WAIT_MAX];
	size_t		 nwait;
	uint32_t	 quiet;
	unsigned	 enq_seen;
	uint64_t	 kernel;
	uint32_t	 work_dim;
	uint64_t	 dims[3][NDR_DIMS_MAX];	/* offset, global, local */
	size_t		 ndims[3];
	struct ndr_arg	 args[NDR_ARGS_MAX];
	size_t		 nargs;
	unsigned	 ndr_seen;
};

/* A varint of two to ten bytes, the tenth carrying one bit at most. */
static int
ndr_varint_long(struct ndr_rd *r, uint64_t *v)
{
	uint64_t	x = 0;
	unsigned	i;
	uint8_t		b;

	for (i = 0; i < 10 && r->p < r->end; i++) {
		b = *r->p++;
		if (i == 9 && b > 1)
			return (-1);
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if ((b & 0x80) == 0) {
			*v = x;
			return (0);
		}
	}
	return (-1);
}

/* A varint; most are one byte. */
static inline int
ndr_varint(struct ndr_rd *r, uint64_t *v)
{
	if (r->p < r->end && *r->p < 0x80) {
		*v = *r->p++;
		return (0);
	}
	return (ndr_varint_long(r, v));
}

/* A field's tag: its number and wire type. */
static inline int
ndr_tag(struct ndr_rd *r, uint32_t *field, unsigned *wt)
{
	uint64_t	t;

	if (ndr_varint(r, &t) != 0 || t > UINT32_MAX || (t >> 3) == 0)
		return (-1);
	*field = (uint32_t)(t >> 3);
	*wt = (unsigned)(t & 7);
	return (0);
}

/* A length-delimited field's bytes, as a reader of their own. */
static int
ndr_sub(struct ndr_rd *r, struct ndr_rd *sub)
{
	uint64_t	n;

	if (ndr_varint(r, &n) != 0 || n > (uint64_t)(r->end - r->p))
		return (-1);
	sub->p = r->p;
	sub->end = r->p + n;
	r->p += n;
	return (0);
}

/* A non-repeated field's first sighting: -1 when seen before. */
static int
ndr_once(unsigned *seen, uint32_t field)
{
	if (*seen & (1u << field))
		return (-1);
	*seen |= 1u << field;
	return (0);
}

/* KernelArg{index, type, value, mem, size}. */
static int
ndr_arg(struct ndr_rd *r, struct ndr_arg *a)
{
	struct ndr_rd	v;
	uint32_t	f;
	unsigned	wt;
	uint64_t	x;

	memset(a, 0, sizeof *a);
	while (r->p < r->end) {
		if (ndr_tag(r, &f, &wt) != 0 || f > 5 ||
		    ndr_once(&a->seen, f) != 0)
			return (-1);
		if (f == 3) {
			if (wt != NDR_LEN || ndr_sub(r, &v) != 0)
				return (-1);
			a->val = v.p;
			a->val_len = (size_t)(v.end - v.p);
			continue;
		}
		if (wt != NDR_VARINT || ndr_varint(r, &x) != 0)
			return (-1);
		switch (f) {
		case 1:
			if (x > UINT32_MAX)
				return (-1);
			a->index = (uint32_t)x;
			break;
		case 2:
			if (x > VCL__KERNEL_ARG__TYPE__SAMPLER)
				return (-1);
			a->type = (uint32_t)x;
			break;
		case 4:
			a->mem = x;
			break;
		default:
			a->size = x;
			break;
		}
	}
	return ((a->seen & 6) == 6 ? 0 : -1);	/* index and type required */
}

/* Enqueue{queue, event, wait, quiet}. */
static int
ndr_enqueue(struct ndr_rd *r, struct ndr_msg *m)
{
	uint32_t	f;
	unsigned	wt;
	uint64_t	x;

	while (r->p < r->end) {
		if (ndr_tag(r, &f, &wt) != 0 || f > 4 || wt != NDR_VARINT ||
		    ndr_varint(r, &x) != 0)
			return (-1);
		if (f == 3) {
			if (m->nwait == NDR_WAIT_MAX)
				return (-1);
			m->wait[m->nwait++] = x;
			continue;
		}
		if (ndr_once(&m->enq_seen, f) != 0)
			return (-1);
		if (f == 1)
			m->queue = x;
		else if (f == 2)
			m->event = x;
		else if (x > 1)
			return (-1);
		else
			m->quiet = (uint32_t)x;
	}
	return ((m->enq_seen & 2) ? 0 : -1);	/* queue required */
}

/* NDRange{q, kernel, work_dim, offset, global, local, args}. */
static int
ndr_ndrange(struct ndr_rd *r, struct ndr_msg *m)
{
	struct ndr_rd	sub;
	uint32_t	f;
	unsigned	wt;
	uint64_t	x;
	size_t		d;

	while (r->p < r->end) {
		if (ndr_tag(r, &f, &wt) != 0 || f > 7)
			return (-1);
		if (f == 1 || f == 7) {
			if (wt != NDR_LEN || ndr_sub(r, &sub) != 0)
				return (-1);
			if (f == 1) {
				if (ndr_once(&m->ndr_seen, f) != 0 ||
				    ndr_enqueue(&sub, m) != 0)
					return (-1);
			} else if (m->nargs == NDR_ARGS_MAX ||
			    ndr_arg(&sub, &m->args[m->nargs++]) != 0)
				return (-1);
			continue;
		}
		if (wt != NDR_VARINT || ndr_varint(r, &x) != 0)
			return (-1);
		if (f >= 4) {
			d = f - 4;
			if (m->ndims[d] == NDR_DIMS_MAX)
				return (-1);
			m->dims[d][m->ndims[d]++] = x;
			continue;
		}
		if (ndr_once(&m->ndr_seen, f) != 0)
			return (-1);
		if (f == 2)
			m->kernel = x;
		else if (x > UINT32_MAX)
			return (-1);
		else
			m->work_dim = (uint32_t)x;
	}
	return ((m->ndr_seen & 14) == 14 ? 0 : -1);	/* q, kernel, dim */
}

/* Request{seq, bulk_xfer, bulk_size, ndrange}. */
static int
ndr_request(struct ndr_rd *r, struct ndr_msg *m)
{
	struct ndr_rd	sub;
	uint32_t	f;
	unsigned	wt;
	uint64_t	x;

	while (r->p < r->end) {
		if (ndr_tag(r, &f, &wt) != 0)
			return (-1);
		if (f == NDR_CALL) {
			if (wt != NDR_LEN || m->req_seen & 1 ||
			    ndr_sub(r, &sub) != 0 || ndr_ndrange(&sub, m) != 0)
				return (-1);
			m->req_seen |= 1;
			continue;
		}
		if (f > 3 || wt != NDR_VARINT || ndr_once(&m->req_seen, f) !=
		    0 || ndr_varint(r, &x) != 0)
			return (-1);
		if (f == 1)
			m->seq = x;
		else if (f == 2)
			m->bulk_xfer = x;
		else
			m->bulk_size = x;
	}
	return ((m->req_seen & 3) == 3 ? 0 : -1);	/* seq and the call */
}

/* Pieces allocated so far, given back if one fails. */
struct ndr_got {
	ProtobufCAllocator	*pa;
	void			*p[NDR_ARGS_MAX * 2 + 8];
	size_t			 n;
	int			 failed;
};

/* Allocate n bytes through the allocator, remembering them. */
static void *
ndr_alloc(struct ndr_got *g, size_t n)
{
	void	*p;

	if (g->failed || (p = g->pa->alloc(g->pa->allocator_data, n)) ==
	    NULL) {
		g->failed = 1;
		return (NULL);
	}
	g->p[g->n++] = p;
	return (p);
}

/* Copy n 64-bit values into a new array (NULL for none). */
static uint64_t *
ndr_array(struct ndr_got *g, const uint64_t *v, size_t n)
{
	uint64_t	*a;

	if (n == 0 || (a = ndr_alloc(g, n * sizeof *a)) == NULL)
		return (NULL);
	memcpy(a, v, n * sizeof *a);
	return (a);
}

/* Make one KernelArg from what was read. */
static Vcl__KernelArg *
ndr_make_arg(struct ndr_got *g, const struct ndr_arg *r)
{
	Vcl__KernelArg	*a;

	if ((a = ndr_alloc(g, sizeof *a)) == NULL)
		return (NULL);
	vcl__kernel_arg__init(a);
	a->index = r->index;
	a->type = (Vcl__KernelArg__Type)r->type;
	if (r->seen & (1u << 3)) {
		a->has_value = 1;
		a->value.len = r->val_len;
		/* protobuf-c leaves empty bytes without memory. */
		if (r->val_len > 0 &&
		    (a->value.data = ndr_alloc(g, r->val_len)) != NULL)
			memcpy(a->value.data, r->val, r->val_len);
	}
	a->has_mem = (r->seen & (1u << 4)) != 0;
	a->mem = r->mem;
	a->has_size = (r->seen & (1u << 5)) != 0;
	a->size = r->size;
	return (a);
}

/*
 * Decode msg as a Request carrying an NDRange. NULL when it is something
 * else or anything in it is unusual (nothing is allocated then): the
 * caller decodes it with protobuf-c.
 */
Vcl__Request *
vcl_ndrdec_unpack(ProtobufCAllocator *pa, size_t len, const uint8_t *msg)
{
	struct ndr_msg	 m;
	struct ndr_rd	 r;
	struct ndr_got	 g;
	Vcl__Request	*req;
	Vcl__NDRange	*nd;
	Vcl__Enqueue	*e;
	size_t		 i;

	/* The call's tag is near the front: most requests stop here. */
	m.req_seen = m.enq_seen = m.ndr_seen = 0;
	m.nwait = m.nargs = 0;
	m.ndims[0] = m.ndims[1] = m.ndims[2] = 0;
	m.seq = m.bulk_xfer = m.bulk_size = 0;
	m.queue = m.event = m.kernel = 0;
	m.quiet = m.work_dim = 0;
	r.p = msg;
	r.end = msg + len;
	if (ndr_request(&r, &m) != 0)
		return (NULL);

	g.pa = pa;
	g.n = 0;
	g.failed = 0;
	req = ndr_alloc(&g, sizeof *req);
	nd = ndr_alloc(&g, sizeof *nd);
	e = ndr_alloc(&g, sizeof *e);
	if (g.failed)
		goto fail;
	vcl__request__init(req);
	vcl__ndrange__init(nd);
	vcl__enqueue__init(e);
	req->seq = m.seq;
	req->has_bulk_xfer = (m.req_seen & (1u << 2)) != 0;
	req->bulk_xfer = m.bulk_xfer;
	req->has_bulk_size = (m.req_seen & (1u << 3)) != 0;
	req->bulk_size = m.bulk_size;
	req->call_case = VCL__REQUEST__CALL_NDRANGE;
	req->ndrange = nd;

	e->queue = m.queue;
	e->has_event = (m.enq_seen & (1u << 2)) != 0;
	e->event = m.event;
	e->n_wait = m.nwait;
	e->wait = ndr_array(&g, m.wait, m.nwait);
	e->has_quiet = (m.enq_seen & (1u << 4)) != 0;
	e->quiet = m.quiet;

	nd->q = e;
	nd->kernel = m.kernel;
	nd->work_dim = m.work_dim;
	nd->n_offset = m.ndims[0];
	nd->offset = ndr_array(&g, m.dims[0], m.ndims[0]);
	nd->n_global = m.ndims[1];
	nd->global = ndr_array(&g, m.dims[1], m.ndims[1]);
	nd->n_local = m.ndims[2];
	nd->local = ndr_array(&g, m.dims[2], m.ndims[2]);
	if (m.nargs > 0 &&
	    (nd->args = ndr_alloc(&g, m.nargs * sizeof *nd->args)) != NULL) {
		for (i = 0; i < m.nargs && !g.failed; i++)
			nd->args[i] = ndr_make_arg(&g, &m.args[i]);
		nd->n_args = m.nargs;
	}
	if (!g.failed)
		return (req);
fail:
	while (g.n > 0)
		pa->free(pa->allocator_data, g.p[--g.n]);
	return (NULL);
}
