/* shmclient_test.c - libvcl's bulk through a shared ring, and without it. */

/*
 * libvcl (through the ICD loader; VCL_TEST_ICD_DIR names the directory of
 * vcl.icd) in this test's child, against one server on this host. Buffers
 * of 1 to 64 MiB are written and read back (blocking, non-blocking with an
 * event, at an offset) and every byte is checked; the server's Stats
 * (client_bytes_shared) tell whether the bytes took the shared ring:
 *   shared: by default, all of them did;
 *   tcp: with VCL_TRANSPORT=tcp, none did;
 *   small: transfers under VCL_SHM_MIN stay in band (and make no ring:
 *     it is made at the first transfer that can use it);
 *   userevent: a write, then a non-blocking read, of more than the ring
 *     behind a user event set after the call returns never waits for
 *     the device; a non-blocking read whose first chunk failed fails.
 */

#include "rawproto.h"

#ifndef CL_DEVICE_VCL_NODE_TRANSPORT
#define CL_DEVICE_VCL_NODE_TRANSPORT	0x7E10	/* include/CL/vcl_ext.h */
#endif

static const size_t sizes[] = {
	1u << 20, (3u << 20) + 4093, 16u << 20, 64u << 20
};

/* The server's client_bytes_shared, once it settled at want (or not). */
static uint64_t
shm_counted(const struct srv *sv, uint64_t want)
{
	struct conn		 c;
	Vcl__StatsResult	 st;
	int			 i;

	memset(&st, 0, sizeof st);
	if (conn_session(&c, sv) != 0)
		return (UINT64_MAX);
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(&c, &st) != 0) {
			st.client_bytes_shared = UINT64_MAX;
			break;
		}
		if (st.client_bytes_shared == want)
			break;
		poll_wait();
	}
	conn_close(&c);
	return (st.client_bytes_shared);
}

/* A pattern for size n that differs at every offset from seed's others. */
static void
fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t	i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 2654435761u) >> 13) ^ (uint8_t)(i >> 20) ^
		    (uint8_t)seed;
}

/*
 * Write and read back every size; with small, 4 KiB and 60 KiB instead.
 * Returns the bytes moved (both ways) or 0 on a failure, checked.
 */
static uint64_t
shm_run(const char *name, int small, const char *tp)
{
	static const size_t	 small_sizes[] = { 4096, 60u << 10 };
	cl_platform_id		 p;
	cl_device_id		 dev;
	cl_context		 ctx = NULL;
	cl_command_queue	 q = NULL;
	cl_mem			 b = NULL;
	cl_event		 ev = NULL;
	cl_uint			 n = 0;
	cl_int			 err = CL_SUCCESS;
	const size_t		*sz = small ? small_sizes : sizes;
	size_t			 nsz = small ? 2 : sizeof sizes / sizeof sizes[0];
	size_t			 i, j, off;
	uint8_t			*src = NULL, *dst = NULL;
	uint64_t		 moved = 0;
	char			 what[64];
	int			 ok = 1;

	if (clGetPlatformIDs(1, &p, &n) != CL_SUCCESS || n != 1 ||
	    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) !=
	    CL_SUCCESS || (ctx = clCreateContext(NULL, 1, &dev, NULL, NULL,
	    &err)) == NULL || (q = clCreateCommandQueue(ctx, dev, 0,
	    &err)) == NULL) {
		check(name, 0, "no VCL device, context or queue: %d", err);
		goto out;
	}
	for (i = 0; i < nsz && ok; i++) {
		src = malloc(sz[i]);
		dst = malloc(sz[i]);
		if (src == NULL || dst == NULL)
			goto out;
		fill(src, sz[i], (unsigned)i);
		memset(dst, 0, sz[i]);
		snprintf(what, sizeof what, "%s_%zu", name, sz[i]);
		if ((b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sz[i], NULL,
		    &err)) == NULL ||
		    (err = clEnqueueWriteBuffer(q, b, CL_TRUE, 0, sz[i], src,
		    0, NULL, NULL)) != CL_SUCCESS ||
		    (err = clEnqueueReadBuffer(q, b, CL_TRUE, 0, sz[i], dst,
		    0, NULL, NULL)) != CL_SUCCESS) {
			ok = check(what, 0, "write or read failed: %d", err);
			break;
		}
		for (j = 0; j < sz[i] && src[j] == dst[j]; j++)
			;
		ok = check(what, j == sz[i], "byte %zu differs", j);
		moved += 2 * sz[i];
		/* Non-blocking with an event, then at an odd offset. */
		off = sz[i] / 3 + 1;
		fill(src, sz[i], (unsigned)i + 100);
		memset(dst, 0, sz[i]);
		if ((err = clEnqueueWriteBuffer(q, b, CL_FALSE, 0, sz[i], src,
		    0, NULL, &ev)) != CL_SUCCESS ||
		    (err = clWaitForEvents(1, &ev)) != CL_SUCCESS ||
		    (err = clEnqueueReadBuffer(q, b, CL_TRUE, off, sz[i] - off,
		    dst, 1, &ev, NULL)) != CL_SUCCESS) {
			ok = check(what, 0, "write or read at an offset: %d",
			    err);
			break;
		}
		for (j = 0; j < sz[i] - off && src[off + j] == dst[j]; j++)
			;
		snprintf(what, sizeof what, "%s_%zu_offset", name, sz[i]);
		ok = check(what, j == sz[i] - off, "byte %zu differs", j);
		moved += sz[i] + sz[i] - off;
		clReleaseEvent(ev);
		ev = NULL;
		/* A non-blocking read with an event, at the odd offset. */
		memset(dst, 0, sz[i]);
		snprintf(what, sizeof what, "%s_%zu_nonblocking", name, sz[i]);
		if ((err = clEnqueueReadBuffer(q, b, CL_FALSE, off, sz[i] - off,
		    dst, 0, NULL, &ev)) != CL_SUCCESS ||
		    (err = clWaitForEvents(1, &ev)) != CL_SUCCESS) {
			ok = check(what, 0, "non-blocking read: %d", err);
			break;
		}
		for (j = 0; j < sz[i] - off && src[off + j] == dst[j]; j++)
			;
		ok = check(what, j == sz[i] - off, "byte %zu differs", j);
		moved += sz[i] - off;
		clReleaseEvent(ev);
		ev = NULL;
		clReleaseMemObject(b);
		b = NULL;
		free(src);
		free(dst);
		src = dst = NULL;
	}
	/* The ring is made at the first transfer that can use it. */
	memset(what, 0, sizeof what);
	snprintf(what + 32, 32, "%s_transport", name);
	check(what + 32, clGetDeviceInfo(dev, CL_DEVICE_VCL_NODE_TRANSPORT,
	    32, what, NULL) == CL_SUCCESS && strcmp(what, tp) == 0,
	    "the node's transport is \"%.31s\", not %s", what, tp);
out:
	if (b != NULL)
		clReleaseMemObject(b);
	if (q != NULL)
		clReleaseCommandQueue(q);
	if (ctx != NULL)
		clReleaseContext(ctx);
	free(src);
	free(dst);
	return (ok ? moved : 0);
}

/* Every byte through the ring. */
static void
test_shared(void)
{
	struct srv	 sv;
	uint64_t	 moved, got;

	if (!srv_start(&sv, "shared_server", "127.0.0.1:0", NULL))
		return;
	/*
	 * A chunk waits for its slot as long as the server takes (a loaded
	 * machine can keep a slot past the default second, and a chunk that
	 * goes in band is not counted shared).
	 */
	setenv("VCL_SHM_WAIT_MS", "600000", 1);
	if (raw_client_env(&sv) && (moved = shm_run("shared", 0, "shm")) != 0) {
		got = shm_counted(&sv, moved);
		check("shared_counted", got == moved, "client_bytes_shared "
		    "%llu, %llu moved", (unsigned long long)got,
		    (unsigned long long)moved);
	}
	srv_stop(&sv, "shared_server_stop");
}

/* VCL_TRANSPORT=tcp: every byte in band. */
static void
test_tcp(void)
{
	struct srv	 sv;
	uint64_t	 got;

	if (!srv_start(&sv, "tcp_server", "127.0.0.1:0", NULL))
		return;
	setenv("VCL_TRANSPORT", "tcp", 1);
	if (raw_client_env(&sv) && shm_run("tcp", 0, "tcp") != 0) {
		got = shm_counted(&sv, 0);
		check("tcp_counted", got == 0, "client_bytes_shared %llu",
		    (unsigned long long)got);
	}
	srv_stop(&sv, "tcp_server_stop");
}

/* Small transfers stay in band even with a ring. */
static void
test_small(void)
{
	struct srv	 sv;
	uint64_t	 got;

	if (!srv_start(&sv, "small_server", "127.0.0.1:0", NULL))
		return;
	if (raw_client_env(&sv) && shm_run("small", 1, "tcp") != 0) {
		got = shm_counted(&sv, 0);
		check("small_counted", got == 0, "client_bytes_shared %llu",
		    (unsigned long long)got);
	}
	srv_stop(&sv, "small_server_stop");
}

/*
 * A write of more slots than the ring has, behind a user event the
 * application sets only after the call returned: the call must not wait
 * for the device (the chunks past the ring go in band), and every byte
 * lands once the event is set.
 */
static void
test_userevent(void)
{
	struct srv		 sv;
	cl_platform_id		 p;
	cl_device_id		 dev;
	cl_context		 ctx = NULL;
	cl_command_queue	 q = NULL;
	cl_mem			 b = NULL;
	cl_event		 ue = NULL, ev = NULL;
	cl_uint			 n = 0;
	cl_int			 err = CL_SUCCESS;
	static const char *const chunk_args[] = { "--read-chunk", "1M",
	    NULL };
	const size_t		 size = 32u << 20;
	uint8_t			*src = NULL, *dst = NULL;
	size_t			 j;
	cl_int			 st;
	int			 i;

	/*
	 * A read's rest in band goes in chunks of 1 MiB, each reaching the
	 * server's loop 20 ms late: its bytes land well after the ring's.
	 */
	setenv("VCL_TEST_FIRE_DELAY_US", "20000", 1);
	i = srv_start(&sv, "userevent_server", "127.0.0.1:0", chunk_args);
	unsetenv("VCL_TEST_FIRE_DELAY_US");
	if (!i)
		return;
	if (!raw_client_env(&sv) || (src = malloc(size)) == NULL ||
	    (dst = calloc(1, size)) == NULL)
		goto out;
	fill(src, size, 7);
	if (clGetPlatformIDs(1, &p, &n) != CL_SUCCESS || n != 1 ||
	    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) !=
	    CL_SUCCESS || (ctx = clCreateContext(NULL, 1, &dev, NULL, NULL,
	    &err)) == NULL || (q = clCreateCommandQueue(ctx, dev, 0,
	    &err)) == NULL || (b = clCreateBuffer(ctx, CL_MEM_READ_WRITE,
	    size, NULL, &err)) == NULL || (ue = clCreateUserEvent(ctx,
	    &err)) == NULL) {
		check("userevent_setup", 0, "OpenCL setup failed: %d", err);
		goto out;
	}
	err = clEnqueueWriteBuffer(q, b, CL_FALSE, 0, size, src, 1, &ue, &ev);
	check("userevent_write", err == CL_SUCCESS, "write behind a user "
	    "event: %d", err);
	memset(src, 0, 4096);	/* the call returned: src is ours again */
	fill(src, 4096, 7);
	if (err == CL_SUCCESS &&
	    (err = clSetUserEventStatus(ue, CL_COMPLETE)) == CL_SUCCESS &&
	    (err = clWaitForEvents(1, &ev)) == CL_SUCCESS)
		err = clEnqueueReadBuffer(q, b, CL_TRUE, 0, size, dst, 0, NULL,
		    NULL);
	check("userevent_done", err == CL_SUCCESS, "set, wait or read: %d",
	    err);
	for (j = 0; j < size && src[j] == dst[j]; j++)
		;
	check("userevent_bytes", j == size, "byte %zu differs", j);
	/*
	 * A non-blocking read of more slots than the ring has, behind a user
	 * event set after the call returned: the call does not wait for the
	 * device, and every byte is in once its event completed.
	 */
	clReleaseEvent(ev);
	clReleaseEvent(ue);
	ev = NULL;
	memset(dst, 0, size);
	if ((ue = clCreateUserEvent(ctx, &err)) == NULL ||
	    (err = clEnqueueReadBuffer(q, b, CL_FALSE, 0, size, dst, 1, &ue,
	    &ev)) != CL_SUCCESS) {
		check("userevent_read", 0, "read behind a user event: %d", err);
		goto out;
	}
	if ((err = clSetUserEventStatus(ue, CL_COMPLETE)) == CL_SUCCESS)
		err = clWaitForEvents(1, &ev);
	check("userevent_read_done", err == CL_SUCCESS, "set or wait: %d",
	    err);
	for (j = 0; j < size && src[j] == dst[j]; j++)
		;
	check("userevent_read_bytes", j == size, "byte %zu differs", j);
	/*
	 * Its first chunk failed (its user event set to an error), its last
	 * did not (no wait list of its own): the read's event tells the
	 * failure all the same.
	 */
	clReleaseEvent(ev);
	clReleaseEvent(ue);
	ev = NULL;
	if ((ue = clCreateUserEvent(ctx, &err)) == NULL ||
	    (err = clEnqueueReadBuffer(q, b, CL_FALSE, 0, 8u << 20, dst, 1,
	    &ue, &ev)) != CL_SUCCESS) {
		check("userevent_read_fail", 0, "read behind a user event: %d",
		    err);
		goto out;
	}
	if ((err = clSetUserEventStatus(ue, -5)) == CL_SUCCESS)
		err = clWaitForEvents(1, &ev);
	st = 0;
	clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
	    NULL);
	check("userevent_read_fail", err ==
	    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST && st < 0,
	    "wait %d, status %d", err, st);
	err = clFinish(q);
	check("userevent_read_after", err == CL_SUCCESS, "finish: %d", err);
	/*
	 * The same with more than the ring, its rest in band: once its event
	 * completed (failed) no byte of it lands in dst any more.
	 */
	clReleaseEvent(ev);
	clReleaseEvent(ue);
	ev = NULL;
	if ((ue = clCreateUserEvent(ctx, &err)) == NULL ||
	    (err = clEnqueueReadBuffer(q, b, CL_FALSE, 0, size, dst, 1, &ue,
	    &ev)) != CL_SUCCESS) {
		check("userevent_read_fail_rest", 0, "read behind a user "
		    "event: %d", err);
		goto out;
	}
	if ((err = clSetUserEventStatus(ue, -5)) == CL_SUCCESS)
		err = clWaitForEvents(1, &ev);
	st = 0;
	clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
	    NULL);
	memset(dst, 0xAA, size);	/* the application's again */
	(void)clFinish(q);		/* whatever was still to land has */
	for (j = 0; j < size && dst[j] == 0xAA; j++)
		;
	check("userevent_read_fail_rest", st < 0 && j == size, "status %d; "
	    "byte %zu written after the read's event completed", st, j);
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
	srv_stop(&sv, "userevent_server_stop");
}

static const struct test tests[] = {
	{ "userevent",	test_userevent,	60 },
	{ "shared",	test_shared,	120 },
	{ "tcp",	test_tcp,	120 },
	{ "small",	test_small,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
