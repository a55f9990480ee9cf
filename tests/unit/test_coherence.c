/* test_coherence.c - the coherence tracker's decisions (vcl_coherence.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vcl_coherence.h"
#include "vcl_event.h"
#include "vcl_object.h"

/*
 * Fakes of the event references the record takes and drops: a count in
 * each event's header, so every test can check none leaks or goes twice.
 */
void
vcl_retain(void *p)
{
	atomic_fetch_add(&((cl_event)p)->obj.refs, 1);
}

void
vcl_event_unref(cl_event ev)
{
	assert_true(atomic_load(&ev->obj.refs) > 0);
	atomic_fetch_sub(&ev->obj.refs, 1);
}

static struct _cl_event	ev[4];

/* Events with one reference each (the caller's). */
static int
setup(void **state)
{
	int	i;

	(void)state;
	memset(ev, 0, sizeof ev);
	for (i = 0; i < 4; i++)
		atomic_store(&ev[i].obj.refs, 1);
	return (0);
}

#define ALL	((vcl_nodeset)0x7)	/* nodes 0, 1, 2 alive */

/* Before any write every instance holds the (initial) newest bytes. */
static void
test_coherence_pristine(void **state)
{
	struct vcl_coherence	c;

	(void)state;
	vcl_coherence_init(&c);
	vcl_coherence_created(&c, 0);
	vcl_coherence_created(&c, 2);
	assert_int_equal(c.valid, 0x5);
	assert_false(vcl_coherence_stale(&c, 0, 0, 0));
	assert_false(vcl_coherence_stale(&c, 2, 1, 0));
	/* Node 1 never made it: a read there needs the bytes. */
	assert_true(vcl_coherence_stale(&c, 1, 0, 0));
	assert_int_equal(vcl_coherence_source(&c, ALL), 0);
	assert_null(vcl_coherence_ready(&c, 1));
	vcl_coherence_free(&c);
}

/*
 * A write on node 0: only 0 is newest; a command on 1 that reads, or
 * writes part, must migrate from 0 after the writer; one overwriting the
 * whole buffer need not; an instance made later starts stale.
 */
static void
test_coherence_written(void **state)
{
	struct vcl_coherence	c;
	cl_event		deps[2];

	(void)state;
	vcl_coherence_init(&c);
	vcl_coherence_created(&c, 0);
	vcl_coherence_created(&c, 1);
	c.init = malloc(16);
	vcl_coherence_written(&c, 0, &ev[0]);
	assert_int_equal(atomic_load(&ev[0].obj.refs), 2);
	assert_null(c.init);
	assert_false(c.pristine);
	assert_int_equal(c.valid, 0x1);
	assert_true(vcl_coherence_stale(&c, 1, 0, 0));
	assert_true(vcl_coherence_stale(&c, 1, 1, 0));
	assert_false(vcl_coherence_stale(&c, 1, 1, 1));
	assert_false(vcl_coherence_stale(&c, 0, 0, 0));
	vcl_coherence_created(&c, 2);
	assert_true(vcl_coherence_stale(&c, 2, 0, 0));
	assert_int_equal(vcl_coherence_source(&c, ALL), 0);
	assert_int_equal(vcl_coherence_deps(&c, 0, deps), 1);
	assert_ptr_equal(deps[0], &ev[0]);
	assert_int_equal(vcl_coherence_deps(&c, 1, deps), 0);
	vcl_coherence_free(&c);
	assert_int_equal(atomic_load(&ev[0].obj.refs), 1);
}

/*
 * Bytes moved 0 -> 1 (arrival ev[1]): both newest, commands on 1 wait for
 * the arrival, a move out of 1 too. A write on 1 then makes 0 stale and
 * drops nobody's arrival but 1's own stays (its command waited on it).
 */
static void
test_coherence_arrived(void **state)
{
	struct vcl_coherence	c;
	cl_event		deps[2];

	(void)state;
	vcl_coherence_init(&c);
	vcl_coherence_written(&c, 0, &ev[0]);
	vcl_coherence_arrived(&c, 1, &ev[1]);	/* takes ev[1]'s ref */
	assert_int_equal(c.valid, 0x3);
	assert_false(vcl_coherence_stale(&c, 1, 0, 0));
	assert_ptr_equal(vcl_coherence_ready(&c, 1), &ev[1]);
	assert_null(vcl_coherence_ready(&c, 0));
	assert_int_equal(vcl_coherence_deps(&c, 1, deps), 1);
	assert_ptr_equal(deps[0], &ev[1]);
	/* The last writer's copy is preferred while its node lives. */
	assert_int_equal(vcl_coherence_source(&c, ALL), 0);

	vcl_coherence_written(&c, 1, &ev[2]);
	assert_int_equal(atomic_load(&ev[0].obj.refs), 1);	/* dropped */
	assert_int_equal(c.valid, 0x2);
	assert_true(vcl_coherence_stale(&c, 0, 0, 0));
	assert_int_equal(vcl_coherence_source(&c, ALL), 1);
	assert_int_equal(vcl_coherence_deps(&c, 1, deps), 2);
	assert_ptr_equal(deps[0], &ev[2]);
	assert_ptr_equal(deps[1], &ev[1]);

	/* A second migration to 0 replaces nothing but adds its arrival. */
	atomic_store(&ev[3].obj.refs, 1);
	vcl_coherence_arrived(&c, 0, &ev[3]);
	assert_int_equal(c.valid, 0x3);
	vcl_coherence_free(&c);
	assert_int_equal(atomic_load(&ev[1].obj.refs), 0);	/* took it */
	assert_int_equal(atomic_load(&ev[2].obj.refs), 1);
	assert_int_equal(atomic_load(&ev[3].obj.refs), 0);
}

/* A lost node's copy is no source; with every copy lost, there is none. */
static void
test_coherence_source_lost(void **state)
{
	struct vcl_coherence	c;

	(void)state;
	vcl_coherence_init(&c);
	vcl_coherence_written(&c, 2, &ev[0]);
	vcl_coherence_arrived(&c, 1, &ev[1]);
	assert_int_equal(vcl_coherence_source(&c, ALL), 2);
	assert_int_equal(vcl_coherence_source(&c, 0x3), 1);
	assert_int_equal(vcl_coherence_source(&c, 0x1), -1);
	assert_int_equal(vcl_coherence_source(&c, 0), -1);
	vcl_coherence_free(&c);
	assert_int_equal(atomic_load(&ev[0].obj.refs), 1);
}

/* A command writing again with the same event keeps one reference. */
static void
test_coherence_same_writer(void **state)
{
	struct vcl_coherence	c;

	(void)state;
	vcl_coherence_init(&c);
	vcl_coherence_written(&c, 0, &ev[0]);
	vcl_coherence_written(&c, 0, &ev[0]);
	assert_int_equal(atomic_load(&ev[0].obj.refs), 2);
	vcl_coherence_free(&c);
	assert_int_equal(atomic_load(&ev[0].obj.refs), 1);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test_setup(test_coherence_pristine, setup),
		cmocka_unit_test_setup(test_coherence_written, setup),
		cmocka_unit_test_setup(test_coherence_arrived, setup),
		cmocka_unit_test_setup(test_coherence_source_lost, setup),
		cmocka_unit_test_setup(test_coherence_same_writer, setup),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
