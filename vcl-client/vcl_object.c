/* vcl_object.c - the common object header: kinds, references, remote ids. */
#include <stdlib.h>

#include "vcl_client.h"
#include "vcl_object.h"

/* Every object is laid out as a dispatch pointer, then this header. */
struct vcl_any {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
};

static atomic_uint_fast64_t	vcl_next_id = 1;

/* The wire kind of each tag, from the one list (vcl_client.h). */
#define VCL_KIND_WIRE(k, w)	[VCL_KIND_##k - VCL_KIND_BASE - 1] =	\
	VCL__KIND__KIND_##w,
static const Vcl__Kind	vcl_kind_wires[] = { VCL_KINDS(VCL_KIND_WIRE) };
#undef VCL_KIND_WIRE
_Static_assert(sizeof vcl_kind_wires / sizeof vcl_kind_wires[0] ==
    VCL_KIND_END - VCL_KIND_BASE - 1, "one wire kind per tag");

/* The wire kind of a tag; KIND_NONE for objects no node holds, or no tag. */
Vcl__Kind
vcl_kind_wire(enum vcl_kind kind)
{
	if (kind <= VCL_KIND_BASE || kind >= VCL_KIND_END)
		return (VCL__KIND__KIND_NONE);
	return (vcl_kind_wires[kind - VCL_KIND_BASE - 1]);
}

/*
 * True when p is a live VCL object of the given kind. The loader passes any
 * handle through, so this is the check every entry point starts with.
 */
int
vcl_is(const void *p, enum vcl_kind kind)
{
	const struct vcl_any	*a = p;

	return (a != NULL && a->dispatch == &vcl_dispatch &&
	    a->obj.kind == kind && atomic_load(&a->obj.refs) > 0);
}

/* A zeroed object of size bytes with one reference and a fresh id. */
void *
vcl_object_new(size_t size, enum vcl_kind kind)
{
	struct vcl_any	*a;

	if ((a = calloc(1, size)) == NULL)
		return (NULL);
	a->dispatch = &vcl_dispatch;
	a->obj.kind = kind;
	atomic_init(&a->obj.refs, 1);
	a->obj.id = vcl_id_new();
	return (a);
}

/* A remote id no other object of this process has (ids are never reused). */
uint64_t
vcl_id_new(void)
{
	return (atomic_fetch_add(&vcl_next_id, 1));
}

/* Take one reference. */
void
vcl_retain(void *p)
{
	atomic_fetch_add(&((struct vcl_any *)p)->obj.refs, 1);
}

/* Drop one reference; returns 1 when it was the last. */
int
vcl_unref(void *p)
{
	return (atomic_fetch_sub(&((struct vcl_any *)p)->obj.refs, 1) == 1);
}

/* Free an object whose last reference is gone; stale handles then fail. */
void
vcl_object_free(void *p)
{
	struct vcl_any	*a = p;

	a->obj.kind = 0;
	a->dispatch = NULL;
	free(a);
}
