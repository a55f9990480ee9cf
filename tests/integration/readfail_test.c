/* readfail_test.c - a failed non-blocking read with no event is told. */

/*
 * libvcl (through the ICD loader; VCL_TEST_ICD_DIR names the directory of
 * vcl.icd) in this test's child, against one server on this host. A
 * non-blocking read with no event of its own waits for a user event
 * that the application then sets to an error, so the server fails the
 * read after the call returned: nothing but the queue can tell it, and
 * its next clFinish must (once: the one after answers CL_SUCCESS, and
 * the queue still reads). Each way a read's bytes move:
 *   inband: 4 KiB, under the ring's minimum, in band;
 *   ring: 8 MiB, two chunks through the node's shared ring;
 *   rest: 32 MiB, more than the ring holds: the chunks that find no slot
 *     go in band as the read's rest;
 *   tcp: 8 MiB with VCL_TRANSPORT=tcp, in band;
 *   rect: a non-blocking clEnqueueReadBufferRect;
 *   image: a non-blocking clEnqueueReadImage (in band).
 * A read with an event tells its failure there, not at clFinish.
 */

#include "rawproto.h"

enum readfail_how { RF_PLAIN, RF_RECT, RF_IMAGE };

#define RF_IMAGE_W	256	/* RGBA8 pixels a row: 1 KiB */

/* A pattern for n bytes. */
static void
rf_fill(uint8_t *p, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 2654435761u) >> 13) ^ (uint8_t)(i >> 20);
}

/* Make the buffer (or image) of size bytes read back, holding src. */
static cl_mem
rf_make(cl_context ctx, size_t size, uint8_t *src, enum readfail_how how,
    cl_int *err)
{
	cl_image_format	fmt = { CL_RGBA, CL_UNSIGNED_INT8 };
	cl_image_desc	desc;

	if (how != RF_IMAGE)
		return (clCreateBuffer(ctx, CL_MEM_READ_WRITE |
		    CL_MEM_COPY_HOST_PTR, size, src, err));
	memset(&desc, 0, sizeof desc);
	desc.image_type = CL_MEM_OBJECT_IMAGE2D;
	desc.image_width = RF_IMAGE_W;
	desc.image_height = size / (4 * RF_IMAGE_W);
	return (clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    &fmt, &desc, src, err));
}

/* Enqueue a read of size bytes of b (behind ue, unless it is NULL). */
static cl_int
rf_read(cl_command_queue q, cl_mem b, cl_bool blocking, size_t size,
    uint8_t *dst, cl_event ue, cl_event *ev, enum readfail_how how)
{
	size_t		origin[3] = { 0, 0, 0 }, region[3] = { size, 1, 1 };
	cl_uint		n = ue != NULL ? 1 : 0;
	const cl_event	*list = ue != NULL ? &ue : NULL;

	if (how == RF_RECT)
		return (clEnqueueReadBufferRect(q, b, blocking, origin, origin,
		    region, 0, 0, 0, 0, dst, n, list, ev));
	if (how == RF_IMAGE) {
		region[0] = RF_IMAGE_W;
		region[1] = size / (4 * RF_IMAGE_W);
		return (clEnqueueReadImage(q, b, blocking, origin, region, 0,
		    0, dst, n, list, ev));
	}
	return (clEnqueueReadBuffer(q, b, blocking, 0, size, dst, n, list,
	    ev));
}

/*
 * On a server of its own: the read fails after its call returned; the
 * next clFinish says so, the one after does not, and a blocking read
 * still brings every byte. Then the same read with an event: its event
 * fails and clFinish answers CL_SUCCESS.
 */
static void
rf_run(const char *name, size_t size, const char *tp,
    enum readfail_how how)
{
	struct srv		 sv;
	cl_platform_id		 p;
	cl_device_id		 dev;
	cl_context		 ctx = NULL;
	cl_command_queue	 q = NULL;
	cl_mem			 b = NULL;
	cl_event		 ue = NULL, ev = NULL;
	cl_uint			 n = 0;
	cl_int			 err = CL_SUCCESS, err2, st;
	uint8_t			*src = NULL, *dst = NULL;
	char			 what[64];
	size_t			 j;

	snprintf(what, sizeof what, "%s_server", name);
	if (!srv_start(&sv, what, "127.0.0.1:0", NULL))
		return;
	if (tp != NULL)
		setenv("VCL_TRANSPORT", tp, 1);
	if (!raw_client_env(&sv) || (src = malloc(size)) == NULL ||
	    (dst = calloc(1, size)) == NULL)
		goto out;
	rf_fill(src, size);
	if (clGetPlatformIDs(1, &p, &n) != CL_SUCCESS || n != 1 ||
	    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) !=
	    CL_SUCCESS || (ctx = clCreateContext(NULL, 1, &dev, NULL, NULL,
	    &err)) == NULL || (q = clCreateCommandQueue(ctx, dev, 0,
	    &err)) == NULL || (b = rf_make(ctx, size, src, how, &err)) ==
	    NULL || (ue = clCreateUserEvent(ctx, &err)) == NULL) {
		check(name, 0, "OpenCL setup failed: %d", err);
		goto out;
	}
	if ((err = rf_read(q, b, CL_FALSE, size, dst, ue, NULL, how)) !=
	    CL_SUCCESS) {
		check(name, 0, "non-blocking read behind a user event: %d",
		    err);
		goto out;
	}
	if ((err = clSetUserEventStatus(ue, -5)) != CL_SUCCESS) {
		check(name, 0, "set the user event: %d", err);
		goto out;
	}
	err = clFinish(q);
	err2 = clFinish(q);
	snprintf(what, sizeof what, "%s_finish", name);
	check(what, err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
	    "the first clFinish after the failed read: %d", err);
	snprintf(what, sizeof what, "%s_finish_once", name);
	check(what, err2 == CL_SUCCESS, "the second clFinish: %d", err2);
	memset(dst, 0, size);
	err = rf_read(q, b, CL_TRUE, size, dst, NULL, NULL, how);
	for (j = 0; err == CL_SUCCESS && j < size && src[j] == dst[j]; j++)
		;
	snprintf(what, sizeof what, "%s_after", name);
	check(what, err == CL_SUCCESS && j == size, "blocking read %d, byte "
	    "%zu of %zu", err, j, size);
	/* With an event: the event tells it, clFinish does not. */
	clReleaseEvent(ue);
	if ((ue = clCreateUserEvent(ctx, &err)) == NULL ||
	    (err = rf_read(q, b, CL_FALSE, size, dst, ue, &ev, how)) !=
	    CL_SUCCESS ||
	    (err = clSetUserEventStatus(ue, -5)) != CL_SUCCESS) {
		check(name, 0, "read with an event: %d", err);
		goto out;
	}
	err = clWaitForEvents(1, &ev);
	st = 0;
	clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
	    NULL);
	err2 = clFinish(q);
	snprintf(what, sizeof what, "%s_event", name);
	check(what, err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST &&
	    st < 0 && err2 == CL_SUCCESS, "wait %d, status %d, finish %d",
	    err, st, err2);
out:
	if (ev != NULL)
		clReleaseEvent(ev);
	if (ue != NULL)
		clReleaseEvent(ue);
	if (b != NULL)
		clReleaseMemObject(b);
	if (q != NULL)
		clReleaseCommandQueue(q);
	if (ctx != NULL)
		clReleaseContext(ctx);
	free(src);
	free(dst);
	snprintf(what, sizeof what, "%s_server_stop", name);
	srv_stop(&sv, what);
}

/* Under the ring's minimum: in band. */
static void
test_inband(void)
{
	rf_run("inband", 4096, NULL, RF_PLAIN);
}

/* Two chunks through the ring. */
static void
test_ring(void)
{
	rf_run("ring", 8u << 20, NULL, RF_PLAIN);
}

/* More than the ring holds: its rest in band. */
static void
test_rest(void)
{
	rf_run("rest", 32u << 20, NULL, RF_PLAIN);
}

/* No ring: in band, however large. */
static void
test_tcp(void)
{
	rf_run("tcp", 8u << 20, "tcp", RF_PLAIN);
}

/* A rectangle (in band). */
static void
test_rect(void)
{
	rf_run("rect", 64u << 10, NULL, RF_RECT);
}

/* An image (in band). */
static void
test_image(void)
{
	rf_run("image", 64u << 10, NULL, RF_IMAGE);
}

static const struct test tests[] = {
	{ "inband",	test_inband,	60 },
	{ "ring",	test_ring,	60 },
	{ "rest",	test_rest,	60 },
	{ "tcp",	test_tcp,	60 },
	{ "rect",	test_rect,	60 },
	{ "image",	test_image,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
