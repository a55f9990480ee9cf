/* test_handle.c - unit tests of the session handle table (vcl_handle.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vcl_handle.h"

#define NIDS	10000

/* The slot that holds o, found by walking the table; -1 when absent. */
static long
slot_of(const struct vcl_htab *t, const struct vcl_hobj *o)
{
	const struct vcl_hobj	*p;
	size_t			 i;

	for (i = 0; i < t->nslots; i++)
		for (p = t->slots[i]; p != NULL; p = p->next)
			if (p == o)
				return ((long)i);
	return (-1);
}

/* Entries reachable from the slots: must always equal count. */
static size_t
walk_count(const struct vcl_htab *t)
{
	const struct vcl_hobj	*p;
	size_t			 i, n = 0;

	for (i = 0; i < t->nslots; i++)
		for (p = t->slots[i]; p != NULL; p = p->next)
			n++;
	return (n);
}

/* Id 0, kinds out of range and a reused id are CL_INVALID_VALUE. */
static void
test_handle_bad_ids(void **state)
{
	struct vcl_htab	 t;
	struct vcl_hobj	*o;
	cl_int		 err;

	assert_int_equal(vcl_handle_init(&t, 100), 0);
	err = CL_SUCCESS;
	assert_null(vcl_handle_add(&t, 0, VCL_KIND_MEM, &err));
	assert_int_equal(err, CL_INVALID_VALUE);
	err = CL_SUCCESS;
	assert_null(vcl_handle_add(&t, 1, VCL_KIND_NONE, &err));
	assert_int_equal(err, CL_INVALID_VALUE);
	err = CL_SUCCESS;
	assert_null(vcl_handle_add(&t, 1, VCL_KIND_MAX, &err));
	assert_int_equal(err, CL_INVALID_VALUE);
	assert_int_equal(t.count, 0);

	o = vcl_handle_add(&t, 5, VCL_KIND_MEM, &err);
	assert_non_null(o);
	assert_true(o->id == 5);
	assert_int_equal(o->kind, VCL_KIND_MEM);
	assert_int_equal(o->error, CL_SUCCESS);
	assert_null(o->u.ptr);

	/* Reused, whatever the kind asked for. */
	err = CL_SUCCESS;
	assert_null(vcl_handle_add(&t, 5, VCL_KIND_MEM, &err));
	assert_int_equal(err, CL_INVALID_VALUE);
	err = CL_SUCCESS;
	assert_null(vcl_handle_add(&t, 5, VCL_KIND_QUEUE, &err));
	assert_int_equal(err, CL_INVALID_VALUE);
	assert_int_equal(t.count, 1);
	assert_ptr_equal(vcl_handle_find(&t, 5), o);
	assert_int_equal(o->kind, VCL_KIND_MEM);

	vcl_handle_del(&t, o);
	assert_int_equal(t.count, 0);
	/* Once released, the id may be used again. */
	assert_non_null(vcl_handle_add(&t, 5, VCL_KIND_QUEUE, &err));
	assert_non_null(vcl_handle_get(&t, 5, VCL_KIND_QUEUE));
	vcl_handle_del(&t, vcl_handle_find(&t, 5));
	vcl_handle_free(&t);
}

/* get checks the kind; find does not; unknown ids give NULL. */
static void
test_handle_kinds(void **state)
{
	struct vcl_htab	 t;
	struct vcl_hobj	*m, *q;
	cl_int		 err;
	int		 k;

	assert_int_equal(vcl_handle_init(&t, 100), 0);
	m = vcl_handle_add(&t, 10, VCL_KIND_MEM, &err);
	q = vcl_handle_add(&t, UINT64_MAX, VCL_KIND_QUEUE, &err);
	assert_non_null(m);
	assert_non_null(q);
	assert_ptr_equal(vcl_handle_get(&t, 10, VCL_KIND_MEM), m);
	assert_ptr_equal(vcl_handle_get(&t, UINT64_MAX, VCL_KIND_QUEUE), q);
	for (k = VCL_KIND_NONE; k <= VCL_KIND_MAX; k++) {
		if (k != VCL_KIND_MEM)
			assert_null(vcl_handle_get(&t, 10, (enum vcl_kind)k));
		if (k != VCL_KIND_QUEUE)
			assert_null(vcl_handle_get(&t, UINT64_MAX,
			    (enum vcl_kind)k));
	}
	assert_ptr_equal(vcl_handle_find(&t, 10), m);
	assert_ptr_equal(vcl_handle_find(&t, UINT64_MAX), q);
	assert_null(vcl_handle_find(&t, 11));
	assert_null(vcl_handle_find(&t, 0));
	assert_null(vcl_handle_get(&t, 11, VCL_KIND_MEM));
	vcl_handle_del(&t, m);
	vcl_handle_del(&t, q);
	assert_null(vcl_handle_find(&t, 10));
	vcl_handle_free(&t);
}

/* Past the object limit: CL_OUT_OF_RESOURCES, until one is deleted. */
static void
test_handle_limit(void **state)
{
	struct vcl_htab	 t;
	struct vcl_hobj	*o;
	cl_int		 err;
	uint64_t	 id;

	assert_int_equal(vcl_handle_init(&t, 3), 0);
	for (id = 1; id <= 3; id++)
		assert_non_null(vcl_handle_add(&t, id, VCL_KIND_EVENT, &err));
	err = CL_SUCCESS;
	assert_null(vcl_handle_add(&t, 4, VCL_KIND_EVENT, &err));
	assert_int_equal(err, CL_OUT_OF_RESOURCES);
	assert_int_equal(t.count, 3);
	assert_null(vcl_handle_find(&t, 4));
	/* A reused id is still reported as such at the limit. */
	err = CL_SUCCESS;
	assert_null(vcl_handle_add(&t, 2, VCL_KIND_EVENT, &err));
	assert_int_equal(err, CL_INVALID_VALUE);

	vcl_handle_del(&t, vcl_handle_find(&t, 2));
	o = vcl_handle_add(&t, 4, VCL_KIND_EVENT, &err);
	assert_non_null(o);
	assert_ptr_equal(vcl_handle_find(&t, 4), o);
	for (id = 1; id <= 4; id++)
		if ((o = vcl_handle_find(&t, id)) != NULL)
			vcl_handle_del(&t, o);
	assert_int_equal(t.count, 0);
	vcl_handle_free(&t);
}

/* The table grows past its first 64 slots; every id stays findable. */
static void
test_handle_growth(void **state)
{
	struct vcl_htab	  t;
	struct vcl_hobj	**objs, *o;
	cl_int		  err;
	size_t		  i;
	uint64_t	  id;

	objs = calloc(NIDS, sizeof *objs);
	assert_non_null(objs);
	assert_int_equal(vcl_handle_init(&t, NIDS), 0);
	assert_int_equal(t.nslots, 64);
	for (i = 0; i < NIDS; i++) {
		/* Half sequential, half spread over the 64-bit space. */
		id = (i % 2) ? i + 1 : (i + 1) * 0x9e3779b97f4a7c15ull;
		objs[i] = vcl_handle_add(&t, id, (enum vcl_kind)(1 + i % 7),
		    &err);
		assert_non_null(objs[i]);
	}
	assert_int_equal(t.count, NIDS);
	assert_int_equal(walk_count(&t), NIDS);
	assert_true(t.nslots >= NIDS / 2);
	assert_int_equal(t.nslots & (t.nslots - 1), 0);
	for (i = 0; i < NIDS; i++) {
		id = (i % 2) ? i + 1 : (i + 1) * 0x9e3779b97f4a7c15ull;
		assert_ptr_equal(vcl_handle_find(&t, id), objs[i]);
		assert_ptr_equal(vcl_handle_get(&t, id,
		    (enum vcl_kind)(1 + i % 7)), objs[i]);
	}
	err = CL_SUCCESS;
	assert_null(vcl_handle_add(&t, NIDS + 1000, VCL_KIND_MEM, &err));
	assert_int_equal(err, CL_OUT_OF_RESOURCES);

	/* Delete every other one; the rest stay. */
	for (i = 0; i < NIDS; i += 2)
		vcl_handle_del(&t, objs[i]);
	assert_int_equal(t.count, NIDS / 2);
	assert_int_equal(walk_count(&t), NIDS / 2);
	for (i = 0; i < NIDS; i++) {
		id = (i % 2) ? i + 1 : (i + 1) * 0x9e3779b97f4a7c15ull;
		o = vcl_handle_find(&t, id);
		if (i % 2)
			assert_ptr_equal(o, objs[i]);
		else
			assert_null(o);
	}
	for (i = 1; i < NIDS; i += 2)
		vcl_handle_del(&t, objs[i]);
	assert_int_equal(t.count, 0);
	assert_int_equal(walk_count(&t), 0);
	vcl_handle_free(&t);
	free(objs);
}

/*
 * Find three ids that share a slot (found by looking where each landed, so
 * the test does not depend on the hash) and delete the middle of the chain.
 */
static void
test_handle_del_chain(void **state)
{
	struct vcl_htab	 t;
	struct vcl_hobj	*o, *chain[3], *mid;
	uint64_t	 ids[3], id;
	cl_int		 err;
	long		 slot;
	int		 n = 0, i;

	assert_int_equal(vcl_handle_init(&t, 100), 0);
	o = vcl_handle_add(&t, 1, VCL_KIND_MEM, &err);
	assert_non_null(o);
	slot = slot_of(&t, o);
	assert_true(slot >= 0);
	ids[n++] = 1;
	for (id = 2; n < 3 && id < 1000000; id++) {
		o = vcl_handle_add(&t, id, VCL_KIND_MEM, &err);
		assert_non_null(o);
		if (slot_of(&t, o) == slot)
			ids[n++] = id;
		else
			vcl_handle_del(&t, o);
	}
	assert_int_equal(n, 3);
	assert_int_equal(t.count, 3);

	/* Head insertion or not, the chain is three long: take its middle. */
	o = t.slots[slot];
	for (i = 0; i < 3; i++, o = o->next) {
		assert_non_null(o);
		chain[i] = o;
	}
	assert_null(o);
	mid = chain[1];
	id = mid->id;
	vcl_handle_del(&t, mid);
	assert_int_equal(t.count, 2);
	assert_null(vcl_handle_find(&t, id));
	assert_ptr_equal(vcl_handle_find(&t, chain[0]->id), chain[0]);
	assert_ptr_equal(vcl_handle_find(&t, chain[2]->id), chain[2]);
	assert_ptr_equal(t.slots[slot], chain[0]);
	assert_ptr_equal(chain[0]->next, chain[2]);
	assert_null(chain[2]->next);

	/* Then the tail, then the head. */
	vcl_handle_del(&t, chain[2]);
	assert_ptr_equal(t.slots[slot], chain[0]);
	assert_null(chain[0]->next);
	vcl_handle_del(&t, chain[0]);
	assert_null(t.slots[slot]);
	assert_int_equal(t.count, 0);
	for (i = 0; i < 3; i++)
		assert_null(vcl_handle_find(&t, ids[i]));
	vcl_handle_free(&t);
}

struct seen {
	int	calls;
	int	hits[200];
};

/* vcl_handle_clear callback: count each entry seen. */
static void
clear_cb(struct vcl_hobj *o, void *arg)
{
	struct seen	*s = arg;

	assert_true(o->id >= 1 && o->id < 200);
	s->calls++;
	s->hits[o->id]++;
}

/* clear calls back once per entry, frees them all, leaves count 0. */
static void
test_handle_clear(void **state)
{
	struct vcl_htab	 t;
	struct vcl_hobj	*o;
	struct seen	 s;
	cl_int		 err;
	uint64_t	 id;

	memset(&s, 0, sizeof s);
	assert_int_equal(vcl_handle_init(&t, 1000), 0);
	for (id = 1; id < 200; id++) {
		o = vcl_handle_add(&t, id, VCL_KIND_KERNEL, &err);
		assert_non_null(o);
		/* The table owns kargs: clear frees it (ASan sees a leak). */
		if (id % 3 == 0) {
			o->nargs = 4;
			o->kargs = calloc(o->nargs, sizeof *o->kargs);
			assert_non_null(o->kargs);
		}
	}
	assert_true(t.nslots > 64);
	vcl_handle_clear(&t, clear_cb, &s);
	assert_int_equal(s.calls, 199);
	for (id = 1; id < 200; id++)
		assert_int_equal(s.hits[id], 1);
	assert_int_equal(t.count, 0);
	assert_int_equal(walk_count(&t), 0);
	for (id = 1; id < 200; id++)
		assert_null(vcl_handle_find(&t, id));

	/* The table is usable after a clear; an empty clear calls nothing. */
	assert_non_null(vcl_handle_add(&t, 7, VCL_KIND_MEM, &err));
	assert_int_equal(t.count, 1);
	memset(&s, 0, sizeof s);
	vcl_handle_clear(&t, clear_cb, &s);
	assert_int_equal(s.calls, 1);
	memset(&s, 0, sizeof s);
	vcl_handle_clear(&t, clear_cb, &s);
	assert_int_equal(s.calls, 0);
	vcl_handle_free(&t);
	assert_null(t.slots);
}

/*
 * Every Kind of vcl.proto is a handle kind by the same number, below
 * VCL_KIND_WIRE_END, and releasable; numbers that are no Kind, and the
 * server-only kinds, are not reachable from the wire.
 */
static void
test_handle_wire_kinds(void **state)
{
	const ProtobufCEnumDescriptor	*d = &vcl__kind__descriptor;
	unsigned			 i, named = 0;
	int				 v;

	assert_int_equal(d->magic, PROTOBUF_C__ENUM_DESCRIPTOR_MAGIC);
	for (i = 0; i < d->n_values; i++) {
		v = d->values[i].value;
		if (v == VCL__KIND__KIND_NONE) {
			assert_int_equal(vcl_handle_kind(v), VCL_KIND_NONE);
			continue;
		}
		if (v >= VCL_KIND_WIRE_END || (int)vcl_handle_kind(v) != v)
			print_error("wire kind %s (%d) is no handle kind\n",
			    d->values[i].name, v);
		assert_true(v < VCL_KIND_WIRE_END);
		assert_int_equal(vcl_handle_kind(v), v);
		named++;
	}
	/* And nothing below VCL_KIND_WIRE_END that the wire does not name. */
	assert_int_equal(named, VCL_KIND_WIRE_END - 1);
	assert_int_equal(vcl_handle_kind(-1), VCL_KIND_NONE);
	assert_int_equal(vcl_handle_kind(VCL_KIND_XFER), VCL_KIND_NONE);
	assert_int_equal(vcl_handle_kind(VCL_KIND_MAX), VCL_KIND_NONE);
	assert_int_equal(vcl_handle_kind(1 << 30), VCL_KIND_NONE);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_handle_bad_ids),
		cmocka_unit_test(test_handle_kinds),
		cmocka_unit_test(test_handle_limit),
		cmocka_unit_test(test_handle_growth),
		cmocka_unit_test(test_handle_del_chain),
		cmocka_unit_test(test_handle_clear),
		cmocka_unit_test(test_handle_wire_kinds),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
