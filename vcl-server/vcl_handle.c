/* vcl_handle.c - a session's handle table: client-assigned id -> object. */
#include <stdlib.h>

#include "vcl_handle.h"

/* Fibonacci hashing of the 64-bit id onto a power-of-two table. */
static size_t
vcl_handle_slot(const struct vcl_htab *t, uint64_t id)
{
	return ((size_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & (t->nslots - 1));
}

/* Set up an empty table holding at most max objects. Returns 0 or -1. */
int
vcl_handle_init(struct vcl_htab *t, size_t max)
{
	t->nslots = 64;
	t->count = 0;
	t->max = max;
	t->running = 0;
	t->slots = calloc(t->nslots, sizeof *t->slots);
	return (t->slots == NULL ? -1 : 0);
}

/* Double the slots when the table is full; failure only slows lookups. */
static void
vcl_handle_grow(struct vcl_htab *t)
{
	struct vcl_hobj	**slots, *o, *next;
	size_t		  i, old = t->nslots;

	if ((slots = calloc(old * 2, sizeof *slots)) == NULL)
		return;
	t->nslots = old * 2;
	for (i = 0; i < old; i++) {
		for (o = t->slots[i]; o != NULL; o = next) {
			next = o->next;
			o->next = slots[vcl_handle_slot(t, o->id)];
			slots[vcl_handle_slot(t, o->id)] = o;
		}
	}
	free(t->slots);
	t->slots = slots;
}

/*
 * Add a new object under a client id. The id must be non-zero and unused.
 * Returns the zeroed entry, or NULL with *err: CL_INVALID_VALUE for a bad or
 * reused id, CL_OUT_OF_RESOURCES over the object limit, CL_OUT_OF_HOST_MEMORY.
 */
struct vcl_hobj *
vcl_handle_add(struct vcl_htab *t, uint64_t id, enum vcl_kind kind, cl_int *err)
{
	struct vcl_hobj	*o;
	size_t		 s;

	if (id == 0 || kind <= VCL_KIND_NONE || kind >= VCL_KIND_MAX ||
	    vcl_handle_find(t, id) != NULL) {
		*err = CL_INVALID_VALUE;
		return (NULL);
	}
	if (t->count >= t->max) {
		*err = CL_OUT_OF_RESOURCES;
		return (NULL);
	}
	if ((o = calloc(1, sizeof *o)) == NULL) {
		*err = CL_OUT_OF_HOST_MEMORY;
		return (NULL);
	}
	if (t->count >= t->nslots)
		vcl_handle_grow(t);
	o->id = id;
	o->kind = kind;
	s = vcl_handle_slot(t, id);
	o->next = t->slots[s];
	t->slots[s] = o;
	t->count++;
	return (o);
}

/*
 * The handle kind of a wire Kind, or VCL_KIND_NONE for a number that is no
 * Kind vcl.proto names (a hostile or newer peer): server-only kinds are
 * never reachable from the wire.
 */
enum vcl_kind
vcl_handle_kind(int wire)
{
	if (wire <= VCL_KIND_NONE || wire >= VCL_KIND_WIRE_END ||
	    protobuf_c_enum_descriptor_get_value(&vcl__kind__descriptor,
	    wire) == NULL)
		return (VCL_KIND_NONE);
	return ((enum vcl_kind)wire);
}

/* Look an id up whatever its kind. */
struct vcl_hobj *
vcl_handle_find(struct vcl_htab *t, uint64_t id)
{
	struct vcl_hobj	*o;

	for (o = t->slots[vcl_handle_slot(t, id)]; o != NULL; o = o->next)
		if (o->id == id)
			return (o);
	return (NULL);
}

/*
 * Look up an id a request names; NULL when it is missing, of another kind,
 * or released by the client (an object the session still holds for a
 * kernel argument, a sub-buffer, an image or a held request is no longer
 * the client's to name). A held request that came before the release
 * (t->running, its order) still names what it named then.
 */
struct vcl_hobj *
vcl_handle_get(struct vcl_htab *t, uint64_t id, enum vcl_kind kind)
{
	struct vcl_hobj	*o;

	if ((o = vcl_handle_held(t, id, kind)) == NULL ||
	    !vcl_handle_nameable(o, t->running))
		return (NULL);
	return (o);
}

/*
 * May a request of this order (a held request's; 0: one not held) name o?
 * Not once the client released it, unless the request came before that.
 */
int
vcl_handle_nameable(const struct vcl_hobj *o, uint64_t order)
{
	return (!o->released || (order != 0 && order <= o->released_at));
}

/*
 * Look an id up for the server's own bookkeeping (a completion, a holder
 * letting go): released objects the session still holds included.
 */
struct vcl_hobj *
vcl_handle_held(struct vcl_htab *t, uint64_t id, enum vcl_kind kind)
{
	struct vcl_hobj	*o;

	if ((o = vcl_handle_find(t, id)) == NULL || o->kind != kind)
		return (NULL);
	return (o);
}

/* Unlink and free an entry; the caller has released its object. */
void
vcl_handle_del(struct vcl_htab *t, struct vcl_hobj *o)
{
	struct vcl_hobj	**pp;

	for (pp = &t->slots[vcl_handle_slot(t, o->id)]; *pp != NULL;
	    pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			t->count--;
			free(o->kargs);
			free(o->kdev);
			free(o->tsizes);
			free(o->psrc);
			free(o->source);
			free(o);
			return;
		}
	}
}

/* Call fn on every entry, then free them all: the table ends empty. */
void
vcl_handle_clear(struct vcl_htab *t, void (*fn)(struct vcl_hobj *, void *),
    void *arg)
{
	struct vcl_hobj	*o, *next;
	size_t		 i;

	for (i = 0; i < t->nslots; i++) {
		for (o = t->slots[i]; o != NULL; o = next) {
			next = o->next;
			fn(o, arg);
			free(o->kargs);
			free(o->kdev);
			free(o->tsizes);
			free(o->psrc);
			free(o->source);
			free(o);
		}
		t->slots[i] = NULL;
	}
	t->count = 0;
}

/* Free the table itself; clear it first. */
void
vcl_handle_free(struct vcl_htab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->nslots = 0;
}
