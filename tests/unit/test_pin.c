/* test_pin.c - unit tests of pinned staging (vcl_pin.c). */

/*
 * vcl_pin.c alone, on the node's real OpenCL platform (PoCL here): the
 * blocks are real CL_MEM_ALLOC_HOST_PTR buffers, mapped. The tests check
 * what the server relies on: reuse, the process-wide bound, the fallback
 * (NULL) where pinning is not worth it or not allowed, that a closed
 * context's blocks go as they come back, and that the runtime moves bytes
 * through them.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vcl_pin.h"

struct env {
	cl_context		ctx;
	cl_command_queue	q;
};

static int
setup(void **state)
{
	struct env	*e;
	cl_platform_id	 p;
	cl_device_id	 d;
	cl_int		 err;

	if ((e = calloc(1, sizeof *e)) == NULL ||
	    clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS ||
	    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS)
		return (-1);
	e->ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
	if (err != CL_SUCCESS)
		return (-1);
	e->q = clCreateCommandQueueWithProperties(e->ctx, d, NULL, &err);
	if (err != CL_SUCCESS)
		return (-1);
	vcl_pin_max = 256ull << 20;
	*state = e;
	return (0);
}

static int
teardown(void **state)
{
	struct env	*e = *state;

	assert_int_equal(vcl_pin_bytes(), 0);	/* nothing left pinned */
	clReleaseCommandQueue(e->q);
	clReleaseContext(e->ctx);
	free(e);
	return (0);
}

/* A block comes back to its context and is handed out again. */
static void
test_reuse(void **state)
{
	struct env	*e = *state;
	struct vcl_pins	*pins = NULL;
	void		*a, *b;

	a = vcl_pin_get(&pins, e->ctx, 1 << 20);
	assert_non_null(a);
	assert_non_null(pins);
	assert_int_equal(vcl_pin_bytes(), 1 << 20);
	memset(a, 0x5a, 1 << 20);		/* host-writable, all of it */
	assert_int_equal(vcl_pin_put(a), 1);
	assert_int_equal(vcl_pin_bytes(), 1 << 20);	/* kept */
	b = vcl_pin_get(&pins, e->ctx, 1000000);	/* same class */
	assert_ptr_equal(a, b);
	assert_int_equal(vcl_pin_put(b), 1);
	vcl_pin_close(pins);
}

/* Tiny transfers and foreign pointers are not pinned blocks. */
static void
test_not_pinned(void **state)
{
	struct env	*e = *state;
	struct vcl_pins	*pins = NULL;
	char		*m;

	assert_null(vcl_pin_get(&pins, e->ctx, 100));
	assert_null(vcl_pin_get(&pins, NULL, 1 << 20));
	assert_non_null(m = malloc(1 << 16));
	assert_int_equal(vcl_pin_put(m), 0);
	assert_int_equal(vcl_pin_put(NULL), 0);
	free(m);
	vcl_pin_close(pins);
}

/* Past vcl_pin_max: NULL (the caller stages in pageable memory). */
static void
test_bound(void **state)
{
	struct env	*e = *state;
	struct vcl_pins	*pins = NULL;
	void		*a, *b, *c;

	vcl_pin_max = 2 << 20;
	a = vcl_pin_get(&pins, e->ctx, 1 << 20);
	b = vcl_pin_get(&pins, e->ctx, 1 << 20);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(vcl_pin_get(&pins, e->ctx, 1 << 20));
	assert_null(vcl_pin_get(&pins, e->ctx, 3 << 20));	/* over alone */
	/* A free block of another size makes room for a new one. */
	assert_int_equal(vcl_pin_put(b), 1);
	c = vcl_pin_get(&pins, e->ctx, 100 << 10);
	assert_non_null(c);
	assert_true(vcl_pin_bytes() <= vcl_pin_max);
	/* Lowered below what is out: blocks go as they come back. */
	vcl_pin_max = 0;
	assert_int_equal(vcl_pin_put(a), 1);
	assert_int_equal(vcl_pin_put(c), 1);
	assert_int_equal(vcl_pin_bytes(), 0);
	assert_null(vcl_pin_get(&pins, e->ctx, 1 << 20));
	vcl_pin_max = 256ull << 20;
	vcl_pin_close(pins);
}

/*
 * One owner (a session) holds at most its share, half of vcl_pin_max by
 * default: past it NULL, while another owner still gets blocks; its own
 * free blocks give way to its next request.
 */
static void
test_share(void **state)
{
	struct env		*e = *state;
	struct vcl_pinuse	*u1, *u2;
	struct vcl_pins		*p1, *p2;
	void			*a, *b, *c, *d;

	vcl_pin_max = 4 << 20;
	assert_non_null(u1 = vcl_pin_use_new());
	assert_non_null(u2 = vcl_pin_use_new());
	assert_non_null(p1 = vcl_pin_open(e->ctx, u1));
	assert_non_null(p2 = vcl_pin_open(e->ctx, u2));
	a = vcl_pin_get(&p1, e->ctx, 1 << 20);
	b = vcl_pin_get(&p1, e->ctx, 1 << 20);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(vcl_pin_use_bytes(u1), 2 << 20);
	assert_null(vcl_pin_get(&p1, e->ctx, 1 << 20));	/* its share */
	c = vcl_pin_get(&p2, e->ctx, 1 << 20);
	assert_non_null(c);
	assert_int_equal(vcl_pin_use_bytes(u2), 1 << 20);
	assert_int_equal(vcl_pin_put(a), 1);
	assert_int_equal(vcl_pin_put(b), 1);
	d = vcl_pin_get(&p1, e->ctx, 2 << 20);	/* its free blocks go */
	assert_non_null(d);
	assert_int_equal(vcl_pin_use_bytes(u1), 2 << 20);
	/* An explicit share: past the default half. */
	vcl_pin_session_max = 3 << 20;
	assert_int_equal(vcl_pin_put(c), 1);
	c = vcl_pin_get(&p1, e->ctx, 1 << 20);
	assert_non_null(c);
	assert_int_equal(vcl_pin_use_bytes(u1), 3 << 20);
	vcl_pin_session_max = 0;
	assert_int_equal(vcl_pin_put(c), 1);	/* over the half: destroyed */
	assert_int_equal(vcl_pin_put(d), 1);
	vcl_pin_close(p1);
	vcl_pin_close(p2);
	assert_int_equal(vcl_pin_use_bytes(u1), 0);
	assert_int_equal(vcl_pin_use_bytes(u2), 0);
	vcl_pin_use_drop(u1);
	vcl_pin_use_drop(u2);
	vcl_pin_max = 256ull << 20;
}

/* A context keeps a few free blocks, not every one it ever had out. */
static void
test_keep(void **state)
{
	struct env	*e = *state;
	struct vcl_pins	*pins = NULL;
	void		*p[12];
	int		 i;

	for (i = 0; i < 12; i++)
		assert_non_null(p[i] = vcl_pin_get(&pins, e->ctx, 64 << 10));
	assert_int_equal(vcl_pin_bytes(), 12 * (64 << 10));
	for (i = 0; i < 12; i++)
		assert_int_equal(vcl_pin_put(p[i]), 1);
	assert_int_equal(vcl_pin_bytes(), 8 * (64 << 10));
	vcl_pin_close(pins);
}

/* Closed with blocks out: they stay usable and go when given back. */
static void
test_close_with_blocks_out(void **state)
{
	struct env	*e = *state;
	struct vcl_pins	*pins = NULL;
	void		*a, *b;

	a = vcl_pin_get(&pins, e->ctx, 256 << 10);
	b = vcl_pin_get(&pins, e->ctx, 256 << 10);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(vcl_pin_put(b), 1);
	vcl_pin_close(pins);			/* b is destroyed now */
	assert_int_equal(vcl_pin_bytes(), 256 << 10);
	memset(a, 1, 256 << 10);		/* still mapped */
	assert_int_equal(vcl_pin_put(a), 1);	/* last: context let go */
}

/* The runtime moves bytes to and from a device through pinned blocks. */
static void
test_transfer(void **state)
{
	struct env	*e = *state;
	struct vcl_pins	*pins = NULL;
	size_t		 n = 3 << 20, i;
	uint32_t	*src, *dst;
	cl_mem		 buf;
	cl_int		 err;

	src = vcl_pin_get(&pins, e->ctx, n);
	dst = vcl_pin_get(&pins, e->ctx, n);
	assert_non_null(src);
	assert_non_null(dst);
	assert_ptr_not_equal(src, dst);
	for (i = 0; i < n / 4; i++)
		src[i] = (uint32_t)(i * 2654435761u);
	memset(dst, 0, n);
	buf = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, n, NULL, &err);
	assert_int_equal(err, CL_SUCCESS);
	assert_int_equal(clEnqueueWriteBuffer(e->q, buf, CL_FALSE, 0, n, src,
	    0, NULL, NULL), CL_SUCCESS);
	assert_int_equal(clEnqueueReadBuffer(e->q, buf, CL_TRUE, 0, n, dst,
	    0, NULL, NULL), CL_SUCCESS);
	assert_memory_equal(src, dst, n);
	clReleaseMemObject(buf);
	assert_int_equal(vcl_pin_put(src), 1);
	assert_int_equal(vcl_pin_put(dst), 1);
	vcl_pin_close(pins);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_pinned, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_share, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_with_blocks_out,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_transfer, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
