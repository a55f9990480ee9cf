/* cl_api_test.c - OpenCL 3.0 API oracle, run natively and through VCL. */

/*
 * A plain OpenCL host program. It checks results and the exact error codes
 * the OpenCL 3.0 specification names, one named test function at a time,
 * each with its own context and queue so that one failure does not cascade.
 *
 * Usage: cl_api_test [filter | =name | --list]
 *	filter			run only tests whose name contains it
 *	=name			run only the test of that name
 *	--list			print the tests' names and exit
 *	VCL_TEST_PLATFORM	platform index (default 0)
 *	VCL_TEST_SKIP		comma-separated test names to skip
 *	VCL_TEST_TIMEOUT	seconds a single test may run (default 120)
 *	VCL_TEST_TRACE		set: each check's place on stderr as made
 *	VCL_TEST_STRICT		set: no PoCL allowances even on a platform
 *				named like PoCL (checks that crash PoCL run)
 *
 * Where PoCL 3.1 deviates from the specification (a comment names each
 * case), a platform named "Portable Computing Language" gets the PoCL code
 * accepted, or the check that would crash it skipped.
 */

#include <sys/stat.h>

#include <CL/cl.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What every test gets: a platform, its device, a fresh context and queue. */
struct env {
	cl_platform_id		 platform;
	cl_device_id		 device;
	cl_context		 ctx;
	cl_command_queue	 queue;
	cl_context_properties	 props[3];
	size_t			 max_wg;
	size_t			 max_items[3];
	cl_uint			 max_dims;
	cl_ulong		 max_alloc;
	cl_ulong		 global_mem;
};

/* An object with a plausible ICD dispatch pointer and nothing else valid. */
struct fake_object {
	void		*dispatch;
	unsigned char	 zero[1024];
};

static int		 failures;	/* failed checks in the running test */
static const char	*current = "setup";	/* the running test's name */
static unsigned int	 platform_index;
static int		 is_pocl;	/* tolerate PoCL 3.1's deviations */

#define CHECK(cond) check((cond) != 0, #cond, __FILE__, __LINE__)
#define CHECK_ERR(call, want) \
	check_err((call), (want), (want), #call, __FILE__, __LINE__)
/* Accepts either code; used only where a platform deviates (commented). */
#define CHECK_ERR2(call, want, alt) \
	check_err((call), (want), (alt), #call, __FILE__, __LINE__)
#define NITEMS(a) (sizeof (a) / sizeof (a)[0])

/* Returns the name of an OpenCL error code. */
static const char *
cl_strerror(cl_int err)
{
	static char	 unknown[32];

	switch (err) {
#define E(x) case x: return (#x)
	E(CL_SUCCESS);
	E(CL_DEVICE_NOT_FOUND);
	E(CL_DEVICE_NOT_AVAILABLE);
	E(CL_COMPILER_NOT_AVAILABLE);
	E(CL_MEM_OBJECT_ALLOCATION_FAILURE);
	E(CL_OUT_OF_RESOURCES);
	E(CL_OUT_OF_HOST_MEMORY);
	E(CL_PROFILING_INFO_NOT_AVAILABLE);
	E(CL_MEM_COPY_OVERLAP);
	E(CL_IMAGE_FORMAT_MISMATCH);
	E(CL_IMAGE_FORMAT_NOT_SUPPORTED);
	E(CL_BUILD_PROGRAM_FAILURE);
	E(CL_MAP_FAILURE);
	E(CL_MISALIGNED_SUB_BUFFER_OFFSET);
	E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
	E(CL_COMPILE_PROGRAM_FAILURE);
	E(CL_LINKER_NOT_AVAILABLE);
	E(CL_LINK_PROGRAM_FAILURE);
	E(CL_DEVICE_PARTITION_FAILED);
	E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
	E(CL_INVALID_VALUE);
	E(CL_INVALID_DEVICE_TYPE);
	E(CL_INVALID_PLATFORM);
	E(CL_INVALID_DEVICE);
	E(CL_INVALID_CONTEXT);
	E(CL_INVALID_QUEUE_PROPERTIES);
	E(CL_INVALID_COMMAND_QUEUE);
	E(CL_INVALID_HOST_PTR);
	E(CL_INVALID_MEM_OBJECT);
	E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
	E(CL_INVALID_IMAGE_SIZE);
	E(CL_INVALID_SAMPLER);
	E(CL_INVALID_BINARY);
	E(CL_INVALID_BUILD_OPTIONS);
	E(CL_INVALID_PROGRAM);
	E(CL_INVALID_PROGRAM_EXECUTABLE);
	E(CL_INVALID_KERNEL_NAME);
	E(CL_INVALID_KERNEL_DEFINITION);
	E(CL_INVALID_KERNEL);
	E(CL_INVALID_ARG_INDEX);
	E(CL_INVALID_ARG_VALUE);
	E(CL_INVALID_ARG_SIZE);
	E(CL_INVALID_KERNEL_ARGS);
	E(CL_INVALID_WORK_DIMENSION);
	E(CL_INVALID_WORK_GROUP_SIZE);
	E(CL_INVALID_WORK_ITEM_SIZE);
	E(CL_INVALID_GLOBAL_OFFSET);
	E(CL_INVALID_EVENT_WAIT_LIST);
	E(CL_INVALID_EVENT);
	E(CL_INVALID_OPERATION);
	E(CL_INVALID_GL_OBJECT);
	E(CL_INVALID_BUFFER_SIZE);
	E(CL_INVALID_MIP_LEVEL);
	E(CL_INVALID_GLOBAL_WORK_SIZE);
	E(CL_INVALID_PROPERTY);
	E(CL_INVALID_IMAGE_DESCRIPTOR);
	E(CL_INVALID_COMPILER_OPTIONS);
	E(CL_INVALID_LINKER_OPTIONS);
	E(CL_INVALID_DEVICE_PARTITION_COUNT);
	E(CL_INVALID_PIPE_SIZE);
	E(CL_INVALID_DEVICE_QUEUE);
	E(CL_INVALID_SPEC_ID);
	E(CL_MAX_SIZE_RESTRICTION_EXCEEDED);
#undef E
	}
	snprintf(unknown, sizeof unknown, "error %d", (int)err);
	return (unknown);
}

/*
 * VCL_TEST_TRACE set: every check's place on stderr as it is made, so a
 * runtime that kills the process shows where (after the last one named).
 */
static void
trace(const char *file, int line)
{
	static int	on = -1;

	if (on == -1)
		on = getenv("VCL_TEST_TRACE") != NULL;
	if (on)
		fprintf(stderr, "  at %s:%d\n", file, line);
}

/* Records a failed condition with its place and text. */
static int
check(int ok, const char *text, const char *file, int line)
{
	trace(file, line);
	if (!ok) {
		failures++;
		printf("  %s:%d: [%s] CHECK(%s) failed\n", file, line, current,
		    text);
	}
	return (ok);
}

/* Records a call whose code is neither of the expected ones. */
static int
check_err(cl_int got, cl_int want, cl_int alt, const char *text,
    const char *file, int line)
{
	trace(file, line);
	if (got == want || got == alt)
		return (1);
	failures++;
	printf("  %s:%d: [%s] %s\n      got %s, expected %s", file, line,
	    current, text, cl_strerror(got), cl_strerror(want));
	if (alt != want)
		printf(" or %s", cl_strerror(alt));
	printf("\n");
	return (0);
}

/* Sleeps for a number of milliseconds. */
static void
sleep_ms(long ms)
{
	struct timespec	 ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

/* Polls an atomic flag until it reaches a value or about ms pass. */
static int
wait_flag(atomic_int *flag, int value, long ms)
{
	long	 i;

	for (i = 0; i < ms; i++) {
		if (atomic_load(flag) >= value)
			return (1);
		sleep_ms(1);
	}
	return (atomic_load(flag) >= value);
}

/* Returns an event's execution status, or an error code if the query fails. */
static cl_int
event_status(cl_event ev)
{
	cl_int	 status = 0, err;

	err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
	    sizeof status, &status, NULL);
	if (err != CL_SUCCESS)
		return (err);
	return (status);
}

/* Fills fake with the dispatch pointer of a real object, the rest zero. */
static void *
fake_handle(struct fake_object *fake, void *real)
{
	memset(fake, 0, sizeof *fake);
	if (real != NULL)
		memcpy(&fake->dispatch, real, sizeof fake->dispatch);
	return (fake);
}

/* Builds a program from source for the test's device; NULL on failure. */
static cl_program
build_program(struct env *e, const char *src, const char *options)
{
	cl_program	 prog;
	cl_int		 err;
	char		*log;
	size_t		 len = 0;

	prog = clCreateProgramWithSource(e->ctx, 1, &src, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return (NULL);
	err = clBuildProgram(prog, 1, &e->device, options, NULL, NULL);
	if (!CHECK_ERR(err, CL_SUCCESS)) {
		clGetProgramBuildInfo(prog, e->device, CL_PROGRAM_BUILD_LOG, 0,
		    NULL, &len);
		if (len > 0 && (log = calloc(1, len + 1)) != NULL) {
			clGetProgramBuildInfo(prog, e->device,
			    CL_PROGRAM_BUILD_LOG, len, log, NULL);
			printf("  build log:\n%s\n", log);
			free(log);
		}
		clReleaseProgram(prog);
		return (NULL);
	}
	return (prog);
}

/* Creates a kernel from a built program; NULL on failure. */
static cl_kernel
make_kernel(cl_program prog, const char *name)
{
	cl_kernel	 k;
	cl_int		 err;

	if (prog == NULL)
		return (NULL);
	k = clCreateKernel(prog, name, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return (NULL);
	return (k);
}

/* Creates a buffer; NULL on failure. */
static cl_mem
make_buffer(struct env *e, cl_mem_flags flags, size_t size, void *host)
{
	cl_mem	 mem;
	cl_int	 err;

	mem = clCreateBuffer(e->ctx, flags, size, host, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return (NULL);
	return (mem);
}

/* Releases objects that may be NULL. */
static void
release_all(cl_mem *mems, size_t nmems, cl_kernel k, cl_program p)
{
	size_t	 i;

	for (i = 0; i < nmems; i++) {
		if (mems[i] != NULL)
			clReleaseMemObject(mems[i]);
	}
	if (k != NULL)
		clReleaseKernel(k);
	if (p != NULL)
		clReleaseProgram(p);
}

/* clGetPlatformIDs: counts, the entries it fills, and its argument errors. */
static void
test_platform_ids(struct env *e)
{
	cl_platform_id	 plats[16], p = NULL;
	cl_uint		 n = 0, n2 = 0, i, found = 0;

	CHECK_ERR(clGetPlatformIDs(0, NULL, &n), CL_SUCCESS);
	CHECK(n >= 1);
	CHECK_ERR(clGetPlatformIDs(0, &p, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetPlatformIDs(0, &p, &n2), CL_INVALID_VALUE);
	CHECK_ERR(clGetPlatformIDs(1, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetPlatformIDs(0, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetPlatformIDs(1, &p, NULL), CL_SUCCESS);
	CHECK(p != NULL);
	n2 = 0;
	CHECK_ERR(clGetPlatformIDs(NITEMS(plats), plats, &n2), CL_SUCCESS);
	CHECK(n2 == n);
	for (i = 0; i < n2 && i < NITEMS(plats); i++) {
		CHECK(plats[i] != NULL);
		if (plats[i] == e->platform)
			found++;
	}
	CHECK(found == 1);
}

/* clGetPlatformInfo: every string, size queries and argument errors. */
static void
test_platform_info(struct env *e)
{
	static const cl_platform_info	 names[] = {
		CL_PLATFORM_PROFILE, CL_PLATFORM_VERSION, CL_PLATFORM_NAME,
		CL_PLATFORM_VENDOR, CL_PLATFORM_EXTENSIONS
	};
	char				 buf[4096], small[1];
	size_t				 size, i;
	cl_version			 numver = 0;
	cl_ulong			 timer = 0;

	for (i = 0; i < NITEMS(names); i++) {
		size = 0;
		CHECK_ERR(clGetPlatformInfo(e->platform, names[i], 0, NULL,
		    &size), CL_SUCCESS);
		CHECK(size >= 1 && size <= sizeof buf);
		memset(buf, 'x', sizeof buf);
		CHECK_ERR(clGetPlatformInfo(e->platform, names[i], sizeof buf,
		    buf, NULL), CL_SUCCESS);
		CHECK(strlen(buf) + 1 == size);
	}
	CHECK_ERR(clGetPlatformInfo(e->platform, CL_PLATFORM_PROFILE,
	    sizeof buf, buf, NULL), CL_SUCCESS);
	CHECK(strcmp(buf, "FULL_PROFILE") == 0 ||
	    strcmp(buf, "EMBEDDED_PROFILE") == 0);
	CHECK_ERR(clGetPlatformInfo(e->platform, CL_PLATFORM_VERSION,
	    sizeof buf, buf, NULL), CL_SUCCESS);
	CHECK(strncmp(buf, "OpenCL ", 7) == 0);
	CHECK_ERR(clGetPlatformInfo(e->platform, CL_PLATFORM_EXTENSIONS,
	    sizeof buf, buf, NULL), CL_SUCCESS);
	CHECK(strstr(buf, "cl_khr_icd") != NULL);
	CHECK_ERR(clGetPlatformInfo(e->platform, CL_PLATFORM_NUMERIC_VERSION,
	    sizeof numver, &numver, NULL), CL_SUCCESS);
	CHECK(CL_VERSION_MAJOR(numver) >= 1);
	CHECK_ERR(clGetPlatformInfo(e->platform,
	    CL_PLATFORM_HOST_TIMER_RESOLUTION, sizeof timer, &timer, NULL),
	    CL_SUCCESS);

	CHECK_ERR(clGetPlatformInfo(e->platform, 0x7fff, sizeof buf, buf,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetPlatformInfo(e->platform, 0x7fff, 0, NULL, &size),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetPlatformInfo(e->platform, CL_PLATFORM_NAME,
	    sizeof small, small, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetPlatformInfo(e->platform, CL_PLATFORM_NUMERIC_VERSION,
	    2, &numver, NULL), CL_INVALID_VALUE);
}

/* Counts devices of the list whose CL_DEVICE_TYPE has a bit of type. */
static cl_uint
count_of_type(cl_device_id *devs, cl_uint n, cl_device_type type)
{
	cl_device_type	 t;
	cl_uint		 i, count = 0;

	for (i = 0; i < n; i++) {
		t = 0;
		clGetDeviceInfo(devs[i], CL_DEVICE_TYPE, sizeof t, &t, NULL);
		if (t & type)
			count++;
	}
	return (count);
}

/* clGetDeviceIDs: counts per type, entries, and argument errors. */
static void
test_device_ids(struct env *e)
{
	static const cl_device_type	 types[] = {
		CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
		CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_CUSTOM
	};
	cl_device_id			 devs[64], d = NULL;
	cl_uint				 n = 0, n2 = 0, i, found = 0;
	cl_int				 err, alt;

	CHECK_ERR(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, 0, NULL, &n),
	    CL_SUCCESS);
	CHECK(n >= 1 && n <= NITEMS(devs));
	if (n > NITEMS(devs))
		n = NITEMS(devs);
	CHECK_ERR(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, n, devs,
	    &n2), CL_SUCCESS);
	CHECK(n2 == n);
	for (i = 0; i < n; i++) {
		if (devs[i] == e->device)
			found++;
	}
	CHECK(found == 1);

	/* A type no device has is CL_DEVICE_NOT_FOUND with a count of zero. */
	for (i = 0; i < NITEMS(types); i++) {
		n2 = 12345;
		err = clGetDeviceIDs(e->platform, types[i], 0, NULL, &n2);
		if (count_of_type(devs, n, types[i]) == 0) {
			CHECK_ERR(err, CL_DEVICE_NOT_FOUND);
			CHECK(n2 == 0 || n2 == 12345);
		} else {
			CHECK_ERR(err, CL_SUCCESS);
			CHECK(n2 == count_of_type(devs, n, types[i]));
		}
	}
	n2 = 0;
	CHECK_ERR(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_DEFAULT, 1, &d,
	    &n2), CL_SUCCESS);
	CHECK(n2 == 1 && d != NULL);

	/* PoCL 3.1 does not validate the type: CL_DEVICE_NOT_FOUND. */
	alt = is_pocl ? CL_DEVICE_NOT_FOUND : CL_INVALID_DEVICE_TYPE;
	CHECK_ERR2(clGetDeviceIDs(e->platform, 0, 1, &d, NULL),
	    CL_INVALID_DEVICE_TYPE, alt);
	CHECK_ERR2(clGetDeviceIDs(e->platform, (cl_device_type)1 << 40, 1, &d,
	    NULL), CL_INVALID_DEVICE_TYPE, alt);
	CHECK_ERR(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, 0, devs,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, 0, devs, &n2),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, 1, NULL,
	    NULL), CL_INVALID_VALUE);
}

/* clGetDeviceInfo: the common queries, their sizes, and the errors. */
static void
test_device_info(struct env *e)
{
	char			 name[1024], small[1], *ext;
	size_t			 size = 0, items[16], wg = 0;
	cl_device_type		 type = 0;
	cl_uint			 dims = 0, align = 0;
	cl_ulong		 gmem = 0, alloc = 0, lmem = 0;
	cl_platform_id		 plat = NULL;
	cl_bool			 avail = CL_FALSE;
	cl_command_queue_properties qprops = 0;
	unsigned int		 i;

	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_NAME, 0, NULL, &size),
	    CL_SUCCESS);
	CHECK(size > 1 && size <= sizeof name);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_NAME, sizeof name, name,
	    NULL), CL_SUCCESS);
	CHECK(strlen(name) + 1 == size);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_TYPE, sizeof type, &type,
	    &size), CL_SUCCESS);
	CHECK(size == sizeof type);
	CHECK(type != 0 && (type & ~(cl_device_type)(CL_DEVICE_TYPE_DEFAULT |
	    CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU |
	    CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM)) == 0);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MAX_WORK_GROUP_SIZE,
	    sizeof wg, &wg, NULL), CL_SUCCESS);
	CHECK(wg >= 1);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
	    sizeof dims, &dims, NULL), CL_SUCCESS);
	CHECK(dims >= 3 && dims <= NITEMS(items));
	size = 0;
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MAX_WORK_ITEM_SIZES,
	    sizeof items, items, &size), CL_SUCCESS);
	CHECK(size == dims * sizeof items[0]);
	for (i = 0; i < dims && i < NITEMS(items); i++)
		CHECK(items[i] >= 1);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MAX_WORK_ITEM_SIZES,
	    sizeof items[0], items, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_GLOBAL_MEM_SIZE,
	    sizeof gmem, &gmem, NULL), CL_SUCCESS);
	CHECK(gmem > 0);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
	    sizeof alloc, &alloc, NULL), CL_SUCCESS);
	CHECK(alloc > 0 && alloc <= gmem);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_LOCAL_MEM_SIZE,
	    sizeof lmem, &lmem, NULL), CL_SUCCESS);
	CHECK(lmem > 0);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
	    sizeof align, &align, NULL), CL_SUCCESS);
	CHECK(align >= 8);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_AVAILABLE,
	    sizeof avail, &avail, NULL), CL_SUCCESS);
	CHECK(avail == CL_TRUE);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_QUEUE_PROPERTIES,
	    sizeof qprops, &qprops, NULL), CL_SUCCESS);
	CHECK(qprops & CL_QUEUE_PROFILING_ENABLE);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_PLATFORM, sizeof plat,
	    &plat, NULL), CL_SUCCESS);
	CHECK(plat == e->platform);

	size = 0;
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS, 0, NULL,
	    &size), CL_SUCCESS);
	CHECK(size >= 1);
	if ((ext = calloc(1, size + 1)) != NULL) {
		CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS, size,
		    ext, NULL), CL_SUCCESS);
		CHECK(strlen(ext) + 1 == size);
		free(ext);
	}

	CHECK_ERR(clGetDeviceInfo(NULL, CL_DEVICE_NAME, sizeof name, name,
	    NULL), CL_INVALID_DEVICE);
	CHECK_ERR(clGetDeviceInfo(e->device, 0x7fff, sizeof name, name, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_NAME, sizeof small,
	    small, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_TYPE, 1, &type, NULL),
	    CL_INVALID_VALUE);
}

/* clCreateContext and clCreateContextFromType: success and argument errors. */
static void
test_context_create(struct env *e)
{
	struct fake_object	 fake;
	cl_device_id		 bad;
	cl_context		 c;
	cl_context_properties	 badprops[5];
	cl_uint			 n = 0, nall = 0;
	cl_int			 err;

	c = clCreateContext(e->props, 1, &e->device, NULL, NULL, &err);
	CHECK_ERR(err, CL_SUCCESS);
	CHECK(c != NULL);
	if (c != NULL)
		CHECK_ERR(clReleaseContext(c), CL_SUCCESS);
	c = clCreateContext(e->props, 1, &e->device, NULL, NULL, NULL);
	CHECK(c != NULL);
	if (c != NULL)
		CHECK_ERR(clReleaseContext(c), CL_SUCCESS);

	c = clCreateContext(e->props, 1, NULL, NULL, NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(c == NULL);
	c = clCreateContext(e->props, 0, &e->device, NULL, NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(c == NULL);
	c = clCreateContext(e->props, 0, NULL, NULL, NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(c == NULL);
	/* user_data without pfn_notify is CL_INVALID_VALUE. */
	c = clCreateContext(e->props, 1, &e->device, NULL, &n, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(c == NULL);

	/* The ICD loader routes by CL_CONTEXT_PLATFORM: a zeroed device. */
	memset(&fake, 0, sizeof fake);
	bad = (cl_device_id)&fake;
	c = clCreateContext(e->props, 1, &bad, NULL, NULL, &err);
	CHECK_ERR(err, CL_INVALID_DEVICE);
	CHECK(c == NULL);

	/* An unknown property name is CL_INVALID_PROPERTY. */
	badprops[0] = e->props[0];
	badprops[1] = e->props[1];
	badprops[2] = 0x7fff;
	badprops[3] = 1;
	badprops[4] = 0;
	c = clCreateContext(badprops, 1, &e->device, NULL, NULL, &err);
	CHECK_ERR(err, CL_INVALID_PROPERTY);
	CHECK(c == NULL);
	/* The same property twice is CL_INVALID_PROPERTY too. */
	badprops[2] = CL_CONTEXT_PLATFORM;
	badprops[3] = e->props[1];
	c = clCreateContext(badprops, 1, &e->device, NULL, NULL, &err);
	CHECK_ERR(err, CL_INVALID_PROPERTY);
	CHECK(c == NULL);

	CHECK_ERR(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, 0, NULL,
	    &nall), CL_SUCCESS);
	c = clCreateContextFromType(e->props, CL_DEVICE_TYPE_ALL, NULL, NULL,
	    &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (c != NULL) {
		CHECK_ERR(clGetContextInfo(c, CL_CONTEXT_NUM_DEVICES, sizeof n,
		    &n, NULL), CL_SUCCESS);
		CHECK(n == nall);
		CHECK_ERR(clReleaseContext(c), CL_SUCCESS);
	}
	c = clCreateContextFromType(e->props, CL_DEVICE_TYPE_DEFAULT, NULL,
	    NULL, &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (c != NULL) {
		CHECK_ERR(clGetContextInfo(c, CL_CONTEXT_NUM_DEVICES, sizeof n,
		    &n, NULL), CL_SUCCESS);
		CHECK(n == 1);
		CHECK_ERR(clReleaseContext(c), CL_SUCCESS);
	}
	/*
	 * PoCL 3.1 does not validate the type either, and on its
	 * CL_DEVICE_NOT_FOUND returns a non-NULL context that is not safe to
	 * release; only a CL_INVALID_DEVICE_TYPE must come with NULL.
	 */
	c = clCreateContextFromType(e->props, 0, NULL, NULL, &err);
	CHECK_ERR2(err, CL_INVALID_DEVICE_TYPE,
	    is_pocl ? CL_DEVICE_NOT_FOUND : CL_INVALID_DEVICE_TYPE);
	if (err == CL_INVALID_DEVICE_TYPE)
		CHECK(c == NULL);
}

/* clRetainContext/clReleaseContext and clGetContextInfo. */
static void
test_context_info(struct env *e)
{
	cl_uint			 refs = 0, refs2 = 0, n = 0;
	cl_device_id		 devs[4];
	cl_context_properties	 props[8];
	size_t			 size = 0;

	CHECK_ERR(clGetContextInfo(e->ctx, CL_CONTEXT_REFERENCE_COUNT,
	    sizeof refs, &refs, NULL), CL_SUCCESS);
	CHECK(refs >= 1);
	CHECK_ERR(clRetainContext(e->ctx), CL_SUCCESS);
	CHECK_ERR(clGetContextInfo(e->ctx, CL_CONTEXT_REFERENCE_COUNT,
	    sizeof refs2, &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs + 1);
	CHECK_ERR(clReleaseContext(e->ctx), CL_SUCCESS);
	CHECK_ERR(clGetContextInfo(e->ctx, CL_CONTEXT_REFERENCE_COUNT,
	    sizeof refs2, &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs);

	CHECK_ERR(clGetContextInfo(e->ctx, CL_CONTEXT_NUM_DEVICES, sizeof n,
	    &n, NULL), CL_SUCCESS);
	CHECK(n == 1);
	CHECK_ERR(clGetContextInfo(e->ctx, CL_CONTEXT_DEVICES, 0, NULL, &size),
	    CL_SUCCESS);
	CHECK(size == sizeof(cl_device_id));
	CHECK_ERR(clGetContextInfo(e->ctx, CL_CONTEXT_DEVICES, sizeof devs,
	    devs, NULL), CL_SUCCESS);
	CHECK(devs[0] == e->device);
	size = 0;
	CHECK_ERR(clGetContextInfo(e->ctx, CL_CONTEXT_PROPERTIES, sizeof props,
	    props, &size), CL_SUCCESS);
	CHECK(size == 3 * sizeof props[0]);
	CHECK(props[0] == CL_CONTEXT_PLATFORM && props[1] == e->props[1] &&
	    props[2] == 0);

	CHECK_ERR(clGetContextInfo(e->ctx, 0x7fff, sizeof n, &n, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetContextInfo(e->ctx, CL_CONTEXT_NUM_DEVICES, 1, &n, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetContextInfo(NULL, CL_CONTEXT_NUM_DEVICES, sizeof n, &n,
	    NULL), CL_INVALID_CONTEXT);
	CHECK_ERR(clRetainContext(NULL), CL_INVALID_CONTEXT);
	CHECK_ERR(clReleaseContext(NULL), CL_INVALID_CONTEXT);
}

/* clCreateCommandQueue[WithProperties] and clGetCommandQueueInfo. */
static void
test_queue_create(struct env *e)
{
	cl_command_queue		 q;
	cl_queue_properties		 props[5];
	cl_command_queue_properties	 qp = 0;
	cl_queue_properties		 arr[8];
	cl_context			 c = NULL;
	cl_device_id			 d = NULL;
	cl_uint				 refs = 0, refs2 = 0;
	size_t				 size = 0;
	cl_int				 err;

	q = clCreateCommandQueue(e->ctx, e->device, CL_QUEUE_PROFILING_ENABLE,
	    &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (q != NULL) {
		CHECK_ERR(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c,
		    &c, NULL), CL_SUCCESS);
		CHECK(c == e->ctx);
		CHECK_ERR(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d,
		    &d, NULL), CL_SUCCESS);
		CHECK(d == e->device);
		CHECK_ERR(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES,
		    sizeof qp, &qp, NULL), CL_SUCCESS);
		CHECK(qp == CL_QUEUE_PROFILING_ENABLE);
		CHECK_ERR(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT,
		    sizeof refs, &refs, NULL), CL_SUCCESS);
		CHECK(refs >= 1);
		CHECK_ERR(clRetainCommandQueue(q), CL_SUCCESS);
		CHECK_ERR(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT,
		    sizeof refs2, &refs2, NULL), CL_SUCCESS);
		CHECK(refs2 == refs + 1);
		CHECK_ERR(clReleaseCommandQueue(q), CL_SUCCESS);
		CHECK_ERR(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT,
		    sizeof refs2, &refs2, NULL), CL_SUCCESS);
		CHECK(refs2 == refs);
		CHECK_ERR(clGetCommandQueueInfo(q, 0x7fff, sizeof qp, &qp,
		    NULL), CL_INVALID_VALUE);
		CHECK_ERR(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, 1, &c,
		    NULL), CL_INVALID_VALUE);
		CHECK_ERR(clReleaseCommandQueue(q), CL_SUCCESS);
	}

	props[0] = CL_QUEUE_PROPERTIES;
	props[1] = CL_QUEUE_PROFILING_ENABLE;
	props[2] = 0;
	q = clCreateCommandQueueWithProperties(e->ctx, e->device, props, &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (q != NULL) {
		CHECK_ERR(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES,
		    sizeof qp, &qp, NULL), CL_SUCCESS);
		CHECK(qp == CL_QUEUE_PROFILING_ENABLE);
		CHECK_ERR(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY,
		    sizeof arr, arr, &size), CL_SUCCESS);
		CHECK(size == 3 * sizeof arr[0]);
		CHECK(arr[0] == CL_QUEUE_PROPERTIES &&
		    arr[1] == CL_QUEUE_PROFILING_ENABLE && arr[2] == 0);
		CHECK_ERR(clReleaseCommandQueue(q), CL_SUCCESS);
	}
	q = clCreateCommandQueueWithProperties(e->ctx, e->device, NULL, &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (q != NULL) {
		CHECK_ERR(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES,
		    sizeof qp, &qp, NULL), CL_SUCCESS);
		CHECK(qp == 0);
		CHECK_ERR(clReleaseCommandQueue(q), CL_SUCCESS);
	}

	props[0] = 0x7fff;
	props[1] = 1;
	props[2] = 0;
	q = clCreateCommandQueueWithProperties(e->ctx, e->device, props, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(q == NULL);
	q = clCreateCommandQueue(e->ctx, e->device, (cl_bitfield)1 << 40,
	    &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(q == NULL);
	q = clCreateCommandQueue(NULL, e->device, 0, &err);
	CHECK_ERR(err, CL_INVALID_CONTEXT);
	CHECK(q == NULL);
	q = clCreateCommandQueueWithProperties(NULL, e->device, NULL, &err);
	CHECK_ERR(err, CL_INVALID_CONTEXT);
	CHECK(q == NULL);
	q = clCreateCommandQueue(e->ctx, NULL, 0, &err);
	CHECK_ERR(err, CL_INVALID_DEVICE);
	CHECK(q == NULL);
	CHECK_ERR(clGetCommandQueueInfo(NULL, CL_QUEUE_CONTEXT, sizeof c, &c,
	    NULL), CL_INVALID_COMMAND_QUEUE);
}

/* clFlush and clFinish on a live queue and on no queue. */
static void
test_flush_finish(struct env *e)
{
	CHECK_ERR(clFlush(e->queue), CL_SUCCESS);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
	CHECK_ERR(clFlush(NULL), CL_INVALID_COMMAND_QUEUE);
	CHECK_ERR(clFinish(NULL), CL_INVALID_COMMAND_QUEUE);
}

/* clCreateBuffer with every host-pointer flag, and its argument errors. */
static void
test_buffer_create(struct env *e)
{
	cl_mem		 m;
	int		 src[256], dst[256], *hp;
	size_t		 i;
	cl_int		 err;

	for (i = 0; i < NITEMS(src); i++)
		src[i] = (int)(i * 7 + 3);

	m = make_buffer(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    sizeof src, src);
	if (m != NULL) {
		memset(dst, 0, sizeof dst);
		CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof dst, dst, 0, NULL, NULL), CL_SUCCESS);
		CHECK(memcmp(src, dst, sizeof src) == 0);
		clReleaseMemObject(m);
	}

	/* With CL_MEM_COPY_HOST_PTR the host memory may change afterwards. */
	if ((hp = malloc(sizeof src)) != NULL) {
		memcpy(hp, src, sizeof src);
		m = make_buffer(e, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR |
		    CL_MEM_COPY_HOST_PTR, sizeof src, hp);
		memset(hp, 0, sizeof src);
		free(hp);
		if (m != NULL) {
			memset(dst, 0, sizeof dst);
			CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0,
			    sizeof dst, dst, 0, NULL, NULL), CL_SUCCESS);
			CHECK(memcmp(src, dst, sizeof src) == 0);
			clReleaseMemObject(m);
		}
	}

	memcpy(dst, src, sizeof dst);
	m = make_buffer(e, CL_MEM_USE_HOST_PTR, sizeof dst, dst);
	if (m != NULL) {
		int	 back[256];

		CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof back, back, 0, NULL, NULL), CL_SUCCESS);
		CHECK(memcmp(src, back, sizeof src) == 0);
		clReleaseMemObject(m);
	}

	m = make_buffer(e, CL_MEM_ALLOC_HOST_PTR, 4096, NULL);
	if (m != NULL) {
		memset(dst, 0x5a, sizeof dst);
		CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof dst, dst, 0, NULL, NULL), CL_SUCCESS);
		memset(dst, 0, sizeof dst);
		CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof dst, dst, 0, NULL, NULL), CL_SUCCESS);
		CHECK(dst[0] == 0x5a5a5a5a && dst[255] == 0x5a5a5a5a);
		clReleaseMemObject(m);
	}
	m = make_buffer(e, CL_MEM_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS, 64,
	    NULL);
	if (m != NULL)
		clReleaseMemObject(m);
	m = make_buffer(e, 0, 64, NULL);
	if (m != NULL)
		clReleaseMemObject(m);

	m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, 0, NULL, &err);
	CHECK_ERR(err, CL_INVALID_BUFFER_SIZE);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, (size_t)e->max_alloc + 1,
	    NULL, &err);
	CHECK_ERR(err, CL_INVALID_BUFFER_SIZE);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, CL_MEM_COPY_HOST_PTR, 64, NULL, &err);
	CHECK_ERR(err, CL_INVALID_HOST_PTR);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, CL_MEM_USE_HOST_PTR, 64, NULL, &err);
	CHECK_ERR(err, CL_INVALID_HOST_PTR);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, 64, src, &err);
	CHECK_ERR(err, CL_INVALID_HOST_PTR);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, CL_MEM_ALLOC_HOST_PTR, 64, src, &err);
	CHECK_ERR(err, CL_INVALID_HOST_PTR);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64,
	    NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, 64,
	    NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR,
	    64, src, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR,
	    64, src, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, CL_MEM_HOST_READ_ONLY |
	    CL_MEM_HOST_NO_ACCESS, 64, NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(m == NULL);
	m = clCreateBuffer(e->ctx, (cl_mem_flags)1 << 40, 64, NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(m == NULL);
	m = clCreateBuffer(NULL, CL_MEM_READ_WRITE, 64, NULL, &err);
	CHECK_ERR(err, CL_INVALID_CONTEXT);
	CHECK(m == NULL);
}

/* clGetMemObjectInfo and clRetain/ReleaseMemObject on buffers. */
static void
test_mem_info(struct env *e)
{
	cl_mem			 m, u, none = NULL;
	cl_mem_object_type	 type = 0;
	cl_mem_flags		 flags = 0;
	cl_context		 c = NULL;
	void			*hp = (void *)1;
	size_t			 size = 0, off = 99;
	cl_uint			 refs = 0, refs2 = 0, maps = 99;
	char			 host[128];

	if ((m = make_buffer(e, CL_MEM_READ_ONLY, 1000, NULL)) == NULL)
		return;
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof type, &type, NULL),
	    CL_SUCCESS);
	CHECK(type == CL_MEM_OBJECT_BUFFER);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof flags, &flags,
	    NULL), CL_SUCCESS);
	CHECK(flags == CL_MEM_READ_ONLY);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL),
	    CL_SUCCESS);
	CHECK(size == 1000);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL),
	    CL_SUCCESS);
	CHECK(hp == NULL);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof c, &c, NULL),
	    CL_SUCCESS);
	CHECK(c == e->ctx);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof maps, &maps,
	    NULL), CL_SUCCESS);
	CHECK(maps == 0);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_OFFSET, sizeof off, &off, NULL),
	    CL_SUCCESS);
	CHECK(off == 0);
	none = (cl_mem)1;
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT,
	    sizeof none, &none, NULL), CL_SUCCESS);
	CHECK(none == NULL);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs,
	    &refs, NULL), CL_SUCCESS);
	CHECK(refs == 1);
	CHECK_ERR(clRetainMemObject(m), CL_SUCCESS);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs2,
	    &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs + 1);
	CHECK_ERR(clReleaseMemObject(m), CL_SUCCESS);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs2,
	    &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs);
	CHECK_ERR(clGetMemObjectInfo(m, 0x7fff, sizeof size, &size, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_SIZE, 1, &size, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetMemObjectInfo(NULL, CL_MEM_SIZE, sizeof size, &size,
	    NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clRetainMemObject(NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clReleaseMemObject(NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clReleaseMemObject(m), CL_SUCCESS);

	if ((u = make_buffer(e, CL_MEM_USE_HOST_PTR | CL_MEM_WRITE_ONLY,
	    sizeof host, host)) == NULL)
		return;
	CHECK_ERR(clGetMemObjectInfo(u, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL),
	    CL_SUCCESS);
	CHECK(hp == host);
	CHECK_ERR(clGetMemObjectInfo(u, CL_MEM_FLAGS, sizeof flags, &flags,
	    NULL), CL_SUCCESS);
	CHECK(flags == (CL_MEM_USE_HOST_PTR | CL_MEM_WRITE_ONLY));
	CHECK_ERR(clReleaseMemObject(u), CL_SUCCESS);
}

/* clEnqueueRead/WriteBuffer: blocking, non-blocking with events, errors. */
static void
test_read_write(struct env *e)
{
	cl_mem		 m;
	cl_event	 wev = NULL, rev = NULL, evs[2];
	unsigned char	 src[1024], dst[1024];
	size_t		 i;
	cl_int		 err;

	for (i = 0; i < sizeof src; i++)
		src[i] = (unsigned char)(i * 13 + 1);
	if ((m = make_buffer(e, CL_MEM_READ_WRITE, sizeof src, NULL)) == NULL)
		return;

	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 0, sizeof src,
	    src, 0, NULL, NULL), CL_SUCCESS);
	memset(dst, 0, sizeof dst);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof dst, dst,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(src, dst, sizeof src) == 0);

	/* A partial write at an offset, then reads of slices. */
	memset(dst, 0xee, 100);
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 200, 100, dst, 0,
	    NULL, NULL), CL_SUCCESS);
	memset(dst, 0, sizeof dst);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 190, 120, dst, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(dst, src + 190, 10) == 0);
	CHECK(dst[10] == 0xee && dst[109] == 0xee);
	CHECK(memcmp(dst + 110, src + 300, 10) == 0);

	/* Non-blocking write, then a read that waits for it by event. */
	for (i = 0; i < sizeof src; i++)
		src[i] = (unsigned char)(255 - i);
	err = clEnqueueWriteBuffer(e->queue, m, CL_FALSE, 0, sizeof src, src,
	    0, NULL, &wev);
	CHECK_ERR(err, CL_SUCCESS);
	memset(dst, 0, sizeof dst);
	if (err == CL_SUCCESS) {
		CHECK(wev != NULL);
		err = clEnqueueReadBuffer(e->queue, m, CL_FALSE, 0, sizeof dst,
		    dst, 1, &wev, &rev);
		CHECK_ERR(err, CL_SUCCESS);
		if (err == CL_SUCCESS) {
			evs[0] = wev;
			evs[1] = rev;
			CHECK_ERR(clWaitForEvents(2, evs), CL_SUCCESS);
			CHECK(event_status(wev) == CL_COMPLETE);
			CHECK(event_status(rev) == CL_COMPLETE);
			CHECK(memcmp(src, dst, sizeof src) == 0);
			clReleaseEvent(rev);
		}
		clReleaseEvent(wev);
	}

	/* Empty wait list with a NULL list is fine. */
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, 16, dst, 0,
	    NULL, NULL), CL_SUCCESS);

	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 1000, 25, dst, 0,
	    NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 1025, 1, dst, 0,
	    NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 0, 1025, src, 0,
	    NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 1020, 5, src, 0,
	    NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, 16, NULL, 0,
	    NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 0, 16, NULL, 0,
	    NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, NULL, CL_TRUE, 0, 16, dst, 0,
	    NULL, NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, NULL, CL_TRUE, 0, 16, src, 0,
	    NULL, NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clEnqueueReadBuffer(NULL, m, CL_TRUE, 0, 16, dst, 0, NULL,
	    NULL), CL_INVALID_COMMAND_QUEUE);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, 16, dst, 1,
	    NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_FALSE, 0, 16, src, 2,
	    NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
	evs[0] = NULL;
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, 16, dst, 0,
	    evs, NULL), CL_INVALID_EVENT_WAIT_LIST);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, 16, dst, 1,
	    evs, NULL), CL_INVALID_EVENT_WAIT_LIST);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
	clReleaseMemObject(m);
}

/* Host access flags restrict reads and writes from the host. */
static void
test_host_access(struct env *e)
{
	cl_mem	 m;
	char	 buf[16];

	memset(buf, 0, sizeof buf);
	if ((m = make_buffer(e, CL_MEM_HOST_READ_ONLY, sizeof buf,
	    NULL)) != NULL) {
		CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof buf, buf, 0, NULL, NULL), CL_INVALID_OPERATION);
		CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof buf, buf, 0, NULL, NULL), CL_SUCCESS);
		clReleaseMemObject(m);
	}
	if ((m = make_buffer(e, CL_MEM_HOST_WRITE_ONLY, sizeof buf,
	    NULL)) != NULL) {
		CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof buf, buf, 0, NULL, NULL), CL_INVALID_OPERATION);
		CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof buf, buf, 0, NULL, NULL), CL_SUCCESS);
		clReleaseMemObject(m);
	}
	if ((m = make_buffer(e, CL_MEM_HOST_NO_ACCESS, sizeof buf,
	    NULL)) != NULL) {
		CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof buf, buf, 0, NULL, NULL), CL_INVALID_OPERATION);
		CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof buf, buf, 0, NULL, NULL), CL_INVALID_OPERATION);
		clReleaseMemObject(m);
	}
}

/* clEnqueueCopyBuffer: between buffers, within one, and its errors. */
static void
test_copy_buffer(struct env *e)
{
	cl_mem		 a = NULL, b = NULL;
	cl_event	 ev = NULL;
	int		 src[256], dst[256];
	size_t		 i;
	cl_int		 err;

	for (i = 0; i < NITEMS(src); i++)
		src[i] = (int)i;
	a = make_buffer(e, CL_MEM_COPY_HOST_PTR, sizeof src, src);
	b = make_buffer(e, CL_MEM_READ_WRITE, sizeof src, NULL);
	if (a == NULL || b == NULL)
		goto out;

	CHECK_ERR(clEnqueueCopyBuffer(e->queue, a, b, 0, 0, sizeof src, 0,
	    NULL, NULL), CL_SUCCESS);
	err = clEnqueueCopyBuffer(e->queue, a, b, 16 * sizeof(int),
	    128 * sizeof(int), 32 * sizeof(int), 0, NULL, &ev);
	CHECK_ERR(err, CL_SUCCESS);
	if (err == CL_SUCCESS) {
		CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
		CHECK(event_status(ev) == CL_COMPLETE);
		clReleaseEvent(ev);
	}
	CHECK_ERR(clEnqueueReadBuffer(e->queue, b, CL_TRUE, 0, sizeof dst, dst,
	    0, NULL, NULL), CL_SUCCESS);
	for (i = 0; i < NITEMS(dst); i++) {
		if (i >= 128 && i < 160) {
			if (!CHECK(dst[i] == (int)(i - 112)))
				break;
		} else if (!CHECK(dst[i] == (int)i))
			break;
	}

	/* Disjoint regions of one buffer copy; overlapping ones do not. */
	CHECK_ERR(clEnqueueCopyBuffer(e->queue, a, a, 0, 128 * sizeof(int),
	    128 * sizeof(int), 0, NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, a, CL_TRUE, 0, sizeof dst, dst,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK(dst[128] == 0 && dst[255] == 127 && dst[5] == 5);
	CHECK_ERR(clEnqueueCopyBuffer(e->queue, a, a, 0, 64, 128, 0, NULL,
	    NULL), CL_MEM_COPY_OVERLAP);
	CHECK_ERR(clEnqueueCopyBuffer(e->queue, a, a, 64, 0, 128, 0, NULL,
	    NULL), CL_MEM_COPY_OVERLAP);
	CHECK_ERR(clEnqueueCopyBuffer(e->queue, a, a, 0, 0, 4, 0, NULL, NULL),
	    CL_MEM_COPY_OVERLAP);

	CHECK_ERR(clEnqueueCopyBuffer(e->queue, a, b, 1, 0, sizeof src, 0,
	    NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueCopyBuffer(e->queue, a, b, 0, 4, sizeof src, 0,
	    NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueCopyBuffer(e->queue, NULL, b, 0, 0, 4, 0, NULL,
	    NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clEnqueueCopyBuffer(e->queue, a, NULL, 0, 0, 4, 0, NULL,
	    NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clEnqueueCopyBuffer(e->queue, a, b, 0, 0, 4, 1, NULL, NULL),
	    CL_INVALID_EVENT_WAIT_LIST);
out:
	if (a != NULL)
		clReleaseMemObject(a);
	if (b != NULL)
		clReleaseMemObject(b);
}

/* A 32 MiB round trip, blocking and not, checked against a pattern. */
static void
test_large_transfer(struct env *e)
{
	size_t		 size = 32u << 20, n, i;
	uint32_t	*src = NULL, *dst = NULL;
	cl_mem		 m = NULL, m2 = NULL;
	cl_event	 ev = NULL;
	cl_int		 err;

	if (size > e->max_alloc)
		size = (size_t)e->max_alloc & ~(size_t)4095;
	n = size / sizeof *src;
	src = malloc(size);
	dst = malloc(size);
	if (!CHECK(src != NULL && dst != NULL))
		goto out;
	for (i = 0; i < n; i++)
		src[i] = (uint32_t)(i * 2654435761u) ^ 0x5bd1e995u;
	if ((m = make_buffer(e, CL_MEM_READ_WRITE, size, NULL)) == NULL)
		goto out;
	if ((m2 = make_buffer(e, CL_MEM_READ_WRITE, size, NULL)) == NULL)
		goto out;

	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 0, size, src, 0,
	    NULL, NULL), CL_SUCCESS);
	memset(dst, 0, size);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, size, dst, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(src, dst, size) == 0);

	/* Device-side copy, then a non-blocking read completed by clFinish. */
	CHECK_ERR(clEnqueueCopyBuffer(e->queue, m, m2, 0, 0, size, 0, NULL,
	    NULL), CL_SUCCESS);
	memset(dst, 0, size);
	err = clEnqueueReadBuffer(e->queue, m2, CL_FALSE, 0, size, dst, 0,
	    NULL, &ev);
	CHECK_ERR(err, CL_SUCCESS);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
	if (err == CL_SUCCESS) {
		CHECK(event_status(ev) == CL_COMPLETE);
		clReleaseEvent(ev);
	}
	for (i = 0; i < n; i++) {
		if (!CHECK(dst[i] == src[i])) {
			printf("  first mismatch at word %zu\n", i);
			break;
		}
	}
out:
	if (m != NULL)
		clReleaseMemObject(m);
	if (m2 != NULL)
		clReleaseMemObject(m2);
	free(src);
	free(dst);
}

static const char src_scale[] =
    "__kernel void scale(__global int *out, int n)\n"
    "{\n"
    "	size_t i = get_global_id(0);\n"
    "	if (i < (size_t)n)\n"
    "		out[i] = FOO * (int)i;\n"
    "}\n";

static const char src_two[] =
    "__kernel void alpha(__global int *a) { a[0] = 1; }\n"
    "__kernel void beta(__global int *a, int b) { a[0] = b; }\n";

static const char src_broken[] =
    "__kernel void broken(__global int *a) { a[0] = 1 +; }\n";

/* Runs the scale kernel of prog over n items and checks out[i] == f * i. */
static void
run_scale(struct env *e, cl_program prog, int f)
{
	cl_kernel	 k;
	cl_mem		 m;
	int		 out[64], n = 64, i;
	size_t		 gws = 64;

	if ((k = make_kernel(prog, "scale")) == NULL)
		return;
	if ((m = make_buffer(e, CL_MEM_WRITE_ONLY, sizeof out, NULL)) != NULL) {
		CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
		CHECK_ERR(clSetKernelArg(k, 1, sizeof n, &n), CL_SUCCESS);
		CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &gws,
		    NULL, 0, NULL, NULL), CL_SUCCESS);
		memset(out, 0, sizeof out);
		CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof out, out, 0, NULL, NULL), CL_SUCCESS);
		for (i = 0; i < n; i++) {
			if (!CHECK(out[i] == f * i))
				break;
		}
		clReleaseMemObject(m);
	}
	clReleaseKernel(k);
}

/* clCreateProgramWithSource: several strings, lengths, and its errors. */
static void
test_program_source(struct env *e)
{
	const char	*strs[3], *nul[1] = { NULL };
	size_t		 lens[3];
	cl_program	 p;
	cl_int		 err;
	char		 text[1024];

	p = clCreateProgramWithSource(e->ctx, 0, strs, NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(p == NULL);
	/* PoCL 3.1 dereferences a NULL strings array (SIGSEGV). */
	if (!is_pocl) {
		p = clCreateProgramWithSource(e->ctx, 1, NULL, NULL, &err);
		CHECK_ERR(err, CL_INVALID_VALUE);
		CHECK(p == NULL);
	}
	p = clCreateProgramWithSource(e->ctx, 1, nul, NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(p == NULL);
	strs[0] = src_scale;
	p = clCreateProgramWithSource(NULL, 1, strs, NULL, &err);
	CHECK_ERR(err, CL_INVALID_CONTEXT);
	CHECK(p == NULL);

	/* Lengths cut strings; a zero length means NUL-terminated. */
	strs[0] = "__kernel void scale(__global int *out, int n) { XXXX";
	lens[0] = 48;
	strs[1] = "size_t i = get_global_id(0);";
	lens[1] = 0;
	strs[2] = " if (i < (size_t)n) out[i] = FOO * (int)i; }\nJUNK";
	lens[2] = strlen(strs[2]) - 4;
	p = clCreateProgramWithSource(e->ctx, 3, strs, lens, &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (p == NULL)
		return;
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_SOURCE, sizeof text, text,
	    NULL), CL_SUCCESS);
	CHECK(strcmp(text, "__kernel void scale(__global int *out, int n) { "
	    "size_t i = get_global_id(0); if (i < (size_t)n) out[i] = FOO * "
	    "(int)i; }\n") == 0);
	CHECK_ERR(clBuildProgram(p, 1, &e->device, "-DFOO=7", NULL, NULL),
	    CL_SUCCESS);
	run_scale(e, p, 7);
	CHECK_ERR(clReleaseProgram(p), CL_SUCCESS);
}

/* clBuildProgram: options change the result; argument errors. */
static void
test_build_options(struct env *e)
{
	const char	*s = src_scale;
	cl_program	 p;
	cl_build_status	 st = CL_BUILD_ERROR;
	char		 opts[64];
	int		 dummy;
	cl_int		 err;

	if ((p = build_program(e, src_scale, "-DFOO=3")) != NULL) {
		run_scale(e, p, 3);
		CHECK_ERR(clGetProgramBuildInfo(p, e->device,
		    CL_PROGRAM_BUILD_OPTIONS, sizeof opts, opts, NULL),
		    CL_SUCCESS);
		CHECK(strstr(opts, "-DFOO=3") != NULL);
		CHECK_ERR(clGetProgramBuildInfo(p, e->device,
		    CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL), CL_SUCCESS);
		CHECK(st == CL_BUILD_SUCCESS);
		clReleaseProgram(p);
	}
	if ((p = build_program(e, src_scale, "-DFOO=5 -cl-opt-disable")) !=
	    NULL) {
		run_scale(e, p, 5);
		clReleaseProgram(p);
	}

	p = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return;
	CHECK_ERR(clGetProgramBuildInfo(p, e->device, CL_PROGRAM_BUILD_STATUS,
	    sizeof st, &st, NULL), CL_SUCCESS);
	CHECK(st == CL_BUILD_NONE);
	CHECK_ERR(clBuildProgram(p, 1, NULL, NULL, NULL, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clBuildProgram(p, 0, &e->device, NULL, NULL, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clBuildProgram(p, 0, NULL, NULL, NULL, &dummy),
	    CL_INVALID_VALUE);
	CHECK_ERR(clBuildProgram(NULL, 0, NULL, NULL, NULL, NULL),
	    CL_INVALID_PROGRAM);
	CHECK_ERR(clGetProgramBuildInfo(p, e->device, 0x7fff, sizeof st, &st,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetProgramBuildInfo(p, NULL, CL_PROGRAM_BUILD_STATUS,
	    sizeof st, &st, NULL), CL_INVALID_DEVICE);
	/* A NULL device list builds for every device of the program. */
	CHECK_ERR(clBuildProgram(p, 0, NULL, "-DFOO=11", NULL, NULL),
	    CL_SUCCESS);
	run_scale(e, p, 11);
	clReleaseProgram(p);
}

/* Write text to dir/name. Returns 0 or -1. */
static int
write_text(const char *dir, const char *name, const char *text)
{
	char	 path[4096];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		return (-1);
	fputs(text, f);
	return (fclose(f));
}

/*
 * #include "a.h" found in the current directory (the runtime's "-I."), or
 * in a relative -I directory with a nested include beside it: built and
 * run the same as a local compiler would.
 */
static void
test_build_include(struct env *e)
{
	static const char	 src[] = "#include \"a.h\"\n"
	    "__kernel void scale(__global int *out, int n)\n"
	    "{ size_t i = get_global_id(0); if (i < (size_t)n) out[i] = "
	    "FOO * (int)i; }\n";
	char			 dir[] = "/tmp/vcl-api-include.XXXXXX", cwd[4096];
	char			 sub[4096];
	cl_program		 p;

	if (!CHECK(getcwd(cwd, sizeof cwd) != NULL) ||
	    !CHECK(mkdtemp(dir) != NULL))
		return;
	snprintf(sub, sizeof sub, "%s/inc", dir);
	CHECK(mkdir(sub, 0700) == 0);
	snprintf(sub, sizeof sub, "%s/inc/sub", dir);
	CHECK(mkdir(sub, 0700) == 0);
	snprintf(sub, sizeof sub, "%s/cur", dir);
	CHECK(mkdir(sub, 0700) == 0);
	CHECK(write_text(dir, "cur/a.h", "#define FOO 6\n") == 0);
	CHECK(write_text(dir, "inc/a.h", "#include \"sub/b.h\"\n"
	    "#define FOO (B + 1)\n") == 0);
	CHECK(write_text(dir, "inc/sub/b.h", "#include \"c.h\"\n") == 0);
	CHECK(write_text(dir, "inc/sub/c.h", "#define B 8\n") == 0);
	if (CHECK(chdir(sub) == 0) &&
	    (p = build_program(e, src, NULL)) != NULL) {
		run_scale(e, p, 6);
		clReleaseProgram(p);
	}
	if (CHECK(chdir(dir) == 0) &&
	    (p = build_program(e, src, "-I inc")) != NULL) {
		run_scale(e, p, 9);
		clReleaseProgram(p);
	}
	CHECK(chdir(cwd) == 0);
	unlink(strcat(strcpy(sub, dir), "/cur/a.h"));
	unlink(strcat(strcpy(sub, dir), "/inc/a.h"));
	unlink(strcat(strcpy(sub, dir), "/inc/sub/b.h"));
	unlink(strcat(strcpy(sub, dir), "/inc/sub/c.h"));
	rmdir(strcat(strcpy(sub, dir), "/inc/sub"));
	rmdir(strcat(strcpy(sub, dir), "/inc"));
	rmdir(strcat(strcpy(sub, dir), "/cur"));
	rmdir(dir);
}

/* A syntax error: CL_BUILD_PROGRAM_FAILURE, a log, CL_BUILD_ERROR. */
static void
test_build_error(struct env *e)
{
	const char	*s = src_broken;
	cl_program	 p;
	cl_build_status	 st = CL_BUILD_SUCCESS;
	cl_kernel	 k;
	size_t		 len = 0;
	char		*log;
	cl_int		 err;

	p = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return;
	CHECK_ERR(clBuildProgram(p, 1, &e->device, NULL, NULL, NULL),
	    CL_BUILD_PROGRAM_FAILURE);
	CHECK_ERR(clGetProgramBuildInfo(p, e->device, CL_PROGRAM_BUILD_STATUS,
	    sizeof st, &st, NULL), CL_SUCCESS);
	CHECK(st == CL_BUILD_ERROR);
	CHECK_ERR(clGetProgramBuildInfo(p, e->device, CL_PROGRAM_BUILD_LOG, 0,
	    NULL, &len), CL_SUCCESS);
	CHECK(len > 1);
	if (len > 0 && (log = calloc(1, len)) != NULL) {
		CHECK_ERR(clGetProgramBuildInfo(p, e->device,
		    CL_PROGRAM_BUILD_LOG, len, log, NULL), CL_SUCCESS);
		CHECK(log[0] != '\0' && strlen(log) + 1 == len);
		free(log);
	}
	k = clCreateKernel(p, "broken", &err);
	CHECK_ERR(err, CL_INVALID_PROGRAM_EXECUTABLE);
	CHECK(k == NULL);
	clReleaseProgram(p);
}

/* Counts a build callback in the flag it was handed. */
static void CL_CALLBACK
build_notify(cl_program prog, void *user_data)
{
	atomic_fetch_add((atomic_int *)user_data, 1);
}

/* clBuildProgram with pfn_notify: the callback runs once, after the build. */
static void
test_build_callback(struct env *e)
{
	const char	*s = src_scale;
	cl_program	 p;
	cl_build_status	 st = CL_BUILD_NONE;
	static atomic_int called;	/* static: outlives a lost callback */
	cl_int		 err;

	atomic_init(&called, 0);
	p = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return;
	CHECK_ERR(clBuildProgram(p, 1, &e->device, "-DFOO=2", build_notify,
	    &called), CL_SUCCESS);
	CHECK(wait_flag(&called, 1, 60000));
	CHECK_ERR(clGetProgramBuildInfo(p, e->device, CL_PROGRAM_BUILD_STATUS,
	    sizeof st, &st, NULL), CL_SUCCESS);
	CHECK(st == CL_BUILD_SUCCESS);
	sleep_ms(20);
	CHECK(atomic_load(&called) == 1);
	run_scale(e, p, 2);
	clReleaseProgram(p);
}

/* Tells whether a semicolon-separated list holds exactly the two names. */
static int
names_are(const char *list, const char *a, const char *b)
{
	char	 want1[256], want2[256];

	snprintf(want1, sizeof want1, "%s;%s", a, b);
	snprintf(want2, sizeof want2, "%s;%s", b, a);
	return (strcmp(list, want1) == 0 || strcmp(list, want2) == 0);
}

/* clGetProgramInfo before and after a build, and program refcounts. */
static void
test_program_info(struct env *e)
{
	const char	*s = src_two;
	cl_program	 p;
	cl_uint		 n = 0, refs = 0, refs2 = 0;
	cl_device_id	 devs[4];
	cl_context	 c = NULL;
	size_t		 nk = 0, size = 0, bsize = 0;
	char		 text[1024];
	cl_int		 err;

	p = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return;
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof n, &n,
	    NULL), CL_SUCCESS);
	CHECK(n == 1);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof devs, devs,
	    &size), CL_SUCCESS);
	CHECK(size == sizeof devs[0] && devs[0] == e->device);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_SOURCE, 0, NULL, &size),
	    CL_SUCCESS);
	CHECK(size == strlen(src_two) + 1);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_SOURCE, sizeof text, text,
	    NULL), CL_SUCCESS);
	CHECK(strcmp(text, src_two) == 0);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof c, &c, NULL),
	    CL_SUCCESS);
	CHECK(c == e->ctx);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk,
	    NULL), CL_INVALID_PROGRAM_EXECUTABLE);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof text,
	    text, NULL), CL_INVALID_PROGRAM_EXECUTABLE);

	CHECK_ERR(clBuildProgram(p, 1, &e->device, NULL, NULL, NULL),
	    CL_SUCCESS);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk,
	    NULL), CL_SUCCESS);
	CHECK(nk == 2);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size),
	    CL_SUCCESS);
	CHECK(size == strlen("alpha;beta") + 1);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof text,
	    text, NULL), CL_SUCCESS);
	CHECK(names_are(text, "alpha", "beta"));
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsize,
	    &bsize, NULL), CL_SUCCESS);
	CHECK(bsize > 0);

	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof refs,
	    &refs, NULL), CL_SUCCESS);
	CHECK(refs == 1);
	CHECK_ERR(clRetainProgram(p), CL_SUCCESS);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT,
	    sizeof refs2, &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs + 1);
	CHECK_ERR(clReleaseProgram(p), CL_SUCCESS);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT,
	    sizeof refs2, &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs);

	CHECK_ERR(clGetProgramInfo(p, 0x7fff, sizeof n, &n, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_SOURCE, 4, text, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetProgramInfo(NULL, CL_PROGRAM_NUM_DEVICES, sizeof n, &n,
	    NULL), CL_INVALID_PROGRAM);
	CHECK_ERR(clRetainProgram(NULL), CL_INVALID_PROGRAM);
	CHECK_ERR(clReleaseProgram(NULL), CL_INVALID_PROGRAM);
	CHECK_ERR(clReleaseProgram(p), CL_SUCCESS);
}

/* clCreateKernel and clCreateKernelsInProgram, with their errors. */
static void
test_kernel_create(struct env *e)
{
	const char	*s = src_two;
	cl_program	 p, unbuilt;
	cl_kernel	 k, ks[4];
	cl_uint		 n = 0, i;
	char		 name[64], names[128];
	cl_int		 err;

	unbuilt = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err);
	if (CHECK_ERR(err, CL_SUCCESS)) {
		k = clCreateKernel(unbuilt, "alpha", &err);
		CHECK_ERR(err, CL_INVALID_PROGRAM_EXECUTABLE);
		CHECK(k == NULL);
		CHECK_ERR(clCreateKernelsInProgram(unbuilt, 0, NULL, &n),
		    CL_INVALID_PROGRAM_EXECUTABLE);
		clReleaseProgram(unbuilt);
	}
	if ((p = build_program(e, src_two, NULL)) == NULL)
		return;
	k = clCreateKernel(p, "gamma", &err);
	CHECK_ERR(err, CL_INVALID_KERNEL_NAME);
	CHECK(k == NULL);
	k = clCreateKernel(p, NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(k == NULL);
	k = clCreateKernel(NULL, "alpha", &err);
	CHECK_ERR(err, CL_INVALID_PROGRAM);
	CHECK(k == NULL);
	k = clCreateKernel(p, "alpha", &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (k != NULL)
		CHECK_ERR(clReleaseKernel(k), CL_SUCCESS);

	CHECK_ERR(clCreateKernelsInProgram(p, 0, NULL, &n), CL_SUCCESS);
	CHECK(n == 2);
	CHECK_ERR(clCreateKernelsInProgram(p, 1, ks, NULL), CL_INVALID_VALUE);
	n = 0;
	memset(ks, 0, sizeof ks);
	CHECK_ERR(clCreateKernelsInProgram(p, NITEMS(ks), ks, &n), CL_SUCCESS);
	CHECK(n == 2);
	names[0] = '\0';
	for (i = 0; i < n && i < NITEMS(ks); i++) {
		if (!CHECK(ks[i] != NULL))
			continue;
		CHECK_ERR(clGetKernelInfo(ks[i], CL_KERNEL_FUNCTION_NAME,
		    sizeof name, name, NULL), CL_SUCCESS);
		if (i > 0)
			strncat(names, ";", sizeof names - strlen(names) - 1);
		strncat(names, name, sizeof names - strlen(names) - 1);
		clReleaseKernel(ks[i]);
	}
	CHECK(names_are(names, "alpha", "beta"));
	CHECK_ERR(clReleaseProgram(p), CL_SUCCESS);
}

static const char src_args[] =
    "__kernel void args(__global int *g, __local int *l, int n,\n"
    "    __constant float *c, __global float *f)\n"
    "{\n"
    "	size_t lid = get_local_id(0);\n"
    "	l[lid] = n + (int)lid;\n"
    "	barrier(CLK_LOCAL_MEM_FENCE);\n"
    "	if (g != 0)\n"
    "		g[get_global_id(0)] = l[get_local_size(0) - 1 - lid] +\n"
    "		    (c != 0 ? (int)c[0] : 0);\n"
    "	if (f != 0)\n"
    "		f[get_global_id(0)] = 0.5f;\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(4, 2, 1)))\n"
    "void fixed(__global int *g)\n"
    "{\n"
    "	__local int tmp[64];\n"
    "	tmp[get_local_id(0)] = 1;\n"
    "	barrier(CLK_LOCAL_MEM_FENCE);\n"
    "	g[get_global_id(1) * get_global_size(0) + get_global_id(0)] =\n"
    "	    tmp[0] + (int)get_local_id(1);\n"
    "}\n";

/* clSetKernelArg: every kind of argument and the errors for each. */
static void
test_kernel_args(struct env *e)
{
	struct fake_object	 fake;
	cl_program		 p;
	cl_kernel		 k = NULL;
	cl_mem			 g = NULL, none = NULL, bad, mems[2];
	float			 cval = 5.0f;
	int			 n = 100, out[8], i;
	size_t			 gws = 8, lws = 8;

	if ((p = build_program(e, src_args, NULL)) == NULL)
		return;
	if ((k = make_kernel(p, "args")) == NULL)
		goto out;
	if ((g = make_buffer(e, CL_MEM_READ_WRITE, sizeof out, NULL)) == NULL)
		goto out;

	CHECK_ERR(clSetKernelArg(k, 5, sizeof g, &g), CL_INVALID_ARG_INDEX);
	CHECK_ERR(clSetKernelArg(k, 100, sizeof n, &n), CL_INVALID_ARG_INDEX);
	CHECK_ERR(clSetKernelArg(k, 0, sizeof n, &g), CL_INVALID_ARG_SIZE);
	CHECK_ERR(clSetKernelArg(k, 0, sizeof g + 1, &g),
	    CL_INVALID_ARG_SIZE);
	CHECK_ERR(clSetKernelArg(k, 2, sizeof(char), &n), CL_INVALID_ARG_SIZE);
	CHECK_ERR(clSetKernelArg(k, 2, sizeof n, NULL), CL_INVALID_ARG_VALUE);
	CHECK_ERR(clSetKernelArg(k, 1, 0, NULL), CL_INVALID_ARG_SIZE);
	CHECK_ERR(clSetKernelArg(k, 1, 64, &n), CL_INVALID_ARG_VALUE);
	CHECK_ERR(clSetKernelArg(NULL, 0, sizeof g, &g), CL_INVALID_KERNEL);

	/* An argument that is no memory object: the ICD loader still routes. */
	bad = (cl_mem)fake_handle(&fake, g);
	/* PoCL 3.1 does not validate it: CL_SUCCESS (reset just below). */
	CHECK_ERR2(clSetKernelArg(k, 0, sizeof bad, &bad),
	    CL_INVALID_MEM_OBJECT,
	    is_pocl ? CL_SUCCESS : CL_INVALID_MEM_OBJECT);

	/* Global and constant pointers may be NULL, by value or pointer. */
	CHECK_ERR(clSetKernelArg(k, 0, sizeof none, &none), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(k, 1, lws * sizeof(int), NULL), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(k, 2, sizeof n, &n), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(k, 3, sizeof none, NULL), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(k, 4, sizeof none, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &gws, &lws, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);

	/* Now with a real buffer and a constant: g[i] = n + 7 - i + c. */
	mems[0] = make_buffer(e, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
	    sizeof cval, &cval);
	mems[1] = NULL;
	CHECK_ERR(clSetKernelArg(k, 0, sizeof g, &g), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(k, 3, sizeof mems[0], &mems[0]), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &gws, &lws, 0,
	    NULL, NULL), CL_SUCCESS);
	memset(out, 0, sizeof out);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, g, CL_TRUE, 0, sizeof out, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (i = 0; i < 8; i++) {
		if (!CHECK(out[i] == n + 7 - i + 5))
			break;
	}
	release_all(mems, NITEMS(mems), NULL, NULL);
out:
	if (g != NULL)
		clReleaseMemObject(g);
	release_all(NULL, 0, k, p);
}

static const char src_arg_types[] =
    "typedef struct { int v[1024]; } big_t;\n"
    "__kernel void samp(sampler_t s, __global int *o) { o[0] = 1; }\n"
    "__kernel void img(__read_only image2d_t im, __global int *o)\n"
    "{ o[0] = get_image_width(im); }\n"
    "__kernel void big(big_t b, __local int *l, __global int *o)\n"
    "{ l[0] = b.v[1023]; o[0] = l[0]; }\n";

/*
 * clSetKernelArg checks the argument against its type: bytes are no
 * sampler, a buffer is no image, a struct takes its whole size, a __local
 * size must fit the device. PoCL 3.1 checks none of these (its launch then
 * crashes or reads past the bytes): natively CL_SUCCESS is accepted.
 */
static void
test_kernel_arg_types(struct env *e)
{
	cl_program	 p;
	cl_kernel	 ks = NULL, ki = NULL, kb = NULL;
	cl_mem		 g = NULL;
	cl_ulong	 lmem = 0;
	uint64_t	 junk = 0x4141414141414141ull;
	static int	 v[1024];
	int		 out = 0;
	size_t		 one = 1;

	if ((p = build_program(e, src_arg_types, NULL)) == NULL)
		return;
	if ((ks = make_kernel(p, "samp")) == NULL ||
	    (ki = make_kernel(p, "img")) == NULL ||
	    (kb = make_kernel(p, "big")) == NULL ||
	    (g = make_buffer(e, CL_MEM_READ_WRITE, sizeof out, NULL)) == NULL)
		goto out;
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_LOCAL_MEM_SIZE,
	    sizeof lmem, &lmem, NULL), CL_SUCCESS);
	CHECK_ERR2(clSetKernelArg(ks, 0, sizeof junk, &junk),
	    CL_INVALID_SAMPLER, is_pocl ? CL_SUCCESS : CL_INVALID_SAMPLER);
	CHECK_ERR2(clSetKernelArg(ki, 0, sizeof g, &g), CL_INVALID_MEM_OBJECT,
	    is_pocl ? CL_SUCCESS : CL_INVALID_MEM_OBJECT);
	CHECK_ERR2(clSetKernelArg(kb, 0, 1, v), CL_INVALID_ARG_SIZE,
	    is_pocl ? CL_SUCCESS : CL_INVALID_ARG_SIZE);
	CHECK_ERR2(clSetKernelArg(kb, 1, (size_t)1 << 40, NULL),
	    CL_INVALID_ARG_SIZE, is_pocl ? CL_SUCCESS : CL_INVALID_ARG_SIZE);
	/* What fits runs, and reads the whole struct. */
	v[1023] = 42;
	CHECK_ERR(clSetKernelArg(kb, 0, sizeof v, v), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(kb, 1, lmem < 64 ? lmem : 64, NULL),
	    CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(kb, 2, sizeof g, &g), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, kb, 1, NULL, &one, &one, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, g, CL_TRUE, 0, sizeof out,
	    &out, 0, NULL, NULL), CL_SUCCESS);
	CHECK(out == 42);
out:
	if (g != NULL)
		clReleaseMemObject(g);
	if (ks != NULL)
		clReleaseKernel(ks);
	if (ki != NULL)
		clReleaseKernel(ki);
	release_all(NULL, 0, kb, p);
}

/* clGetKernelInfo and clGetKernelArgInfo. */
static void
test_kernel_info(struct env *e)
{
	static const cl_kernel_arg_address_qualifier	 aq[] = {
		CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_ADDRESS_LOCAL,
		CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_ADDRESS_CONSTANT,
		CL_KERNEL_ARG_ADDRESS_GLOBAL
	};
	static const char				*an[] = {
		"g", "l", "n", "c", "f"
	};
	cl_kernel_arg_address_qualifier			 q;
	cl_program					 p, p2 = NULL;
	cl_kernel					 k;
	cl_context					 c = NULL;
	cl_uint						 nargs = 0, refs = 0;
	cl_uint						 refs2 = 0, i;
	char						 name[64];
	size_t						 size = 0;
	cl_int						 err;

	if ((p = build_program(e, src_args, "-cl-kernel-arg-info")) == NULL)
		return;
	if ((k = make_kernel(p, "args")) == NULL)
		goto out;
	CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, NULL, &size),
	    CL_SUCCESS);
	CHECK(size == 5);
	CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name,
	    name, NULL), CL_SUCCESS);
	CHECK(strcmp(name, "args") == 0);
	CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs,
	    NULL), CL_SUCCESS);
	CHECK(nargs == 5);
	CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof p2, &p2, NULL),
	    CL_SUCCESS);
	CHECK(p2 == p);
	CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_CONTEXT, sizeof c, &c, NULL),
	    CL_SUCCESS);
	CHECK(c == e->ctx);
	CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_ATTRIBUTES, sizeof name, name,
	    NULL), CL_SUCCESS);
	CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs,
	    &refs, NULL), CL_SUCCESS);
	CHECK(refs == 1);
	CHECK_ERR(clRetainKernel(k), CL_SUCCESS);
	CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs2,
	    &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs + 1);
	CHECK_ERR(clReleaseKernel(k), CL_SUCCESS);
	CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs2,
	    &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs);
	CHECK_ERR(clGetKernelInfo(k, 0x7fff, sizeof name, name, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 2, name, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetKernelInfo(NULL, CL_KERNEL_NUM_ARGS, sizeof nargs,
	    &nargs, NULL), CL_INVALID_KERNEL);
	CHECK_ERR(clRetainKernel(NULL), CL_INVALID_KERNEL);
	CHECK_ERR(clReleaseKernel(NULL), CL_INVALID_KERNEL);

	/* Argument information is optional: all or nothing. */
	err = clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
	    sizeof q, &q, NULL);
	CHECK_ERR2(err, CL_SUCCESS, CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
	if (err == CL_SUCCESS) {
		for (i = 0; i < NITEMS(aq); i++) {
			q = 0;
			CHECK_ERR(clGetKernelArgInfo(k, i,
			    CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q,
			    NULL), CL_SUCCESS);
			CHECK(q == aq[i]);
			CHECK_ERR(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_NAME,
			    sizeof name, name, NULL), CL_SUCCESS);
			CHECK(strcmp(name, an[i]) == 0);
		}
		CHECK_ERR(clGetKernelArgInfo(k, 2, CL_KERNEL_ARG_TYPE_NAME,
		    sizeof name, name, NULL), CL_SUCCESS);
		CHECK(strcmp(name, "int") == 0);
		CHECK_ERR(clGetKernelArgInfo(k, 0, 0x7fff, sizeof name, name,
		    NULL), CL_INVALID_VALUE);
	}
	CHECK_ERR(clGetKernelArgInfo(k, 5, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
	    sizeof q, &q, NULL), CL_INVALID_ARG_INDEX);
	clReleaseKernel(k);
out:
	clReleaseProgram(p);
}

/* clGetKernelWorkGroupInfo, and enqueues against reqd_work_group_size. */
static void
test_work_group_info(struct env *e)
{
	cl_program	 p;
	cl_kernel	 k = NULL, kf = NULL;
	cl_mem		 g = NULL;
	size_t		 wg = 0, cwg[3] = { 9, 9, 9 }, mult = 0;
	size_t		 gws[2] = { 8, 4 }, lws[2] = { 4, 2 };
	size_t		 bad[2] = { 2, 4 };
	cl_ulong	 lmem = 0, lmem2 = 0, pmem = 0;
	int		 out[32], i;

	if ((p = build_program(e, src_args, NULL)) == NULL)
		return;
	if ((k = make_kernel(p, "args")) == NULL ||
	    (kf = make_kernel(p, "fixed")) == NULL)
		goto out;

	CHECK_ERR(clGetKernelWorkGroupInfo(k, e->device,
	    CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL), CL_SUCCESS);
	CHECK(wg >= 1 && wg <= e->max_wg);
	CHECK_ERR(clGetKernelWorkGroupInfo(k, NULL, CL_KERNEL_WORK_GROUP_SIZE,
	    sizeof wg, &wg, NULL), CL_SUCCESS);
	CHECK_ERR(clGetKernelWorkGroupInfo(k, e->device,
	    CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof cwg, cwg, NULL),
	    CL_SUCCESS);
	CHECK(cwg[0] == 0 && cwg[1] == 0 && cwg[2] == 0);
	CHECK_ERR(clGetKernelWorkGroupInfo(kf, e->device,
	    CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof cwg, cwg, NULL),
	    CL_SUCCESS);
	CHECK(cwg[0] == 4 && cwg[1] == 2 && cwg[2] == 1);
	CHECK_ERR(clGetKernelWorkGroupInfo(k, e->device,
	    CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof mult, &mult,
	    NULL), CL_SUCCESS);
	CHECK(mult >= 1);
	CHECK_ERR(clGetKernelWorkGroupInfo(k, e->device,
	    CL_KERNEL_PRIVATE_MEM_SIZE, sizeof pmem, &pmem, NULL), CL_SUCCESS);
	CHECK_ERR(clGetKernelWorkGroupInfo(kf, e->device,
	    CL_KERNEL_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL), CL_SUCCESS);
	CHECK(lmem >= 64 * sizeof(int));
	CHECK_ERR(clSetKernelArg(k, 1, 4096, NULL), CL_SUCCESS);
	CHECK_ERR(clGetKernelWorkGroupInfo(k, e->device,
	    CL_KERNEL_LOCAL_MEM_SIZE, sizeof lmem2, &lmem2, NULL), CL_SUCCESS);
	CHECK(lmem2 >= 4096);
	CHECK_ERR(clGetKernelWorkGroupInfo(k, e->device, 0x7fff, sizeof wg,
	    &wg, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetKernelWorkGroupInfo(k, e->device,
	    CL_KERNEL_WORK_GROUP_SIZE, 1, &wg, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetKernelWorkGroupInfo(NULL, e->device,
	    CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
	    CL_INVALID_KERNEL);

	/* reqd_work_group_size binds the local size of an enqueue. */
	if ((g = make_buffer(e, CL_MEM_READ_WRITE, sizeof out, NULL)) == NULL)
		goto out;
	CHECK_ERR(clSetKernelArg(kf, 0, sizeof g, &g), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, kf, 2, NULL, gws, bad, 0,
	    NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, kf, 2, NULL, gws, NULL, 0,
	    NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, kf, 2, NULL, gws, lws, 0,
	    NULL, NULL), CL_SUCCESS);
	memset(out, 0, sizeof out);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, g, CL_TRUE, 0, sizeof out, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (i = 0; i < 32; i++) {
		if (!CHECK(out[i] == 1 + (i / 8) % 2))
			break;
	}
out:
	if (g != NULL)
		clReleaseMemObject(g);
	if (kf != NULL)
		clReleaseKernel(kf);
	release_all(NULL, 0, k, p);
}

static const char src_ids[] =
    "__kernel void ids(__global uint *out)\n"
    "{\n"
    "	uint d = get_work_dim();\n"
    "	size_t lin = 0, stride = 1;\n"
    "	for (uint i = 0; i < d; i++) {\n"
    "		lin += (get_global_id(i) - get_global_offset(i)) * stride;\n"
    "		stride *= get_global_size(i);\n"
    "	}\n"
    "	out[4 * lin + 0] = (uint)get_global_id(0);\n"
    "	out[4 * lin + 1] = (uint)get_global_id(1);\n"
    "	out[4 * lin + 2] = (uint)get_global_id(2);\n"
    "	out[4 * lin + 3] = (uint)(get_local_id(0) +\n"
    "	    1000 * get_group_id(0) + 1000000 * d);\n"
    "}\n"
    "__kernel void reduce(__global const int *in, __global int *partial,\n"
    "    __local int *scratch)\n"
    "{\n"
    "	size_t lid = get_local_id(0);\n"
    "	scratch[lid] = in[get_global_id(0)];\n"
    "	barrier(CLK_LOCAL_MEM_FENCE);\n"
    "	for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "		if (lid < s)\n"
    "			scratch[lid] += scratch[lid + s];\n"
    "		barrier(CLK_LOCAL_MEM_FENCE);\n"
    "	}\n"
    "	if (lid == 0)\n"
    "		partial[get_group_id(0)] = scratch[0];\n"
    "}\n"
    "__kernel void task(__global int *o)\n"
    "{\n"
    "	o[0] = 42 + (int)get_global_size(0) + (int)get_local_size(0) +\n"
    "	    (int)get_work_dim();\n"
    "}\n"
    "__kernel void incr(__global int *a)\n"
    "{\n"
    "	a[get_global_id(0)] += 1;\n"
    "}\n";

/* Runs ids over an NDRange and checks every work-item's record. */
static void
run_ids(struct env *e, cl_kernel k, cl_uint dim, const size_t *off,
    const size_t *gws, const size_t *lws)
{
	cl_mem		 m;
	cl_uint		*out;
	size_t		 total = 1, i, d, rem, id[3], o;
	cl_uint		 want3;
	cl_event	 ev = NULL;
	cl_command_type	 type = 0;

	for (d = 0; d < dim; d++)
		total *= gws[d];
	if ((out = calloc(total, 4 * sizeof *out)) == NULL)
		return;
	if ((m = make_buffer(e, CL_MEM_WRITE_ONLY, total * 4 * sizeof *out,
	    NULL)) == NULL) {
		free(out);
		return;
	}
	CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, dim, off, gws, lws, 0,
	    NULL, &ev), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0,
	    total * 4 * sizeof *out, out, 0, NULL, NULL), CL_SUCCESS);
	if (ev != NULL) {
		CHECK(event_status(ev) == CL_COMPLETE);
		CHECK_ERR(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type,
		    &type, NULL), CL_SUCCESS);
		CHECK(type == CL_COMMAND_NDRANGE_KERNEL);
		clReleaseEvent(ev);
	}
	for (i = 0; i < total; i++) {
		rem = i;
		id[0] = id[1] = id[2] = 0;
		for (d = 0; d < dim; d++) {
			o = off != NULL ? off[d] : 0;
			id[d] = o + rem % gws[d];
			rem /= gws[d];
		}
		if (!CHECK(out[4 * i] == id[0] && out[4 * i + 1] == id[1] &&
		    out[4 * i + 2] == id[2])) {
			printf("  dim %u item %zu: got (%u,%u,%u)\n", dim, i,
			    out[4 * i], out[4 * i + 1], out[4 * i + 2]);
			break;
		}
		if (lws == NULL) {
			if (!CHECK(out[4 * i + 3] / 1000000 == dim))
				break;
			continue;
		}
		o = off != NULL ? off[0] : 0;
		want3 = (cl_uint)((id[0] - o) % lws[0] +
		    1000 * ((id[0] - o) / lws[0]) + 1000000 * dim);
		if (!CHECK(out[4 * i + 3] == want3)) {
			printf("  dim %u item %zu: got %u, want %u\n", dim, i,
			    out[4 * i + 3], want3);
			break;
		}
	}
	clReleaseMemObject(m);
	free(out);
}

/* clEnqueueNDRangeKernel in 1, 2 and 3 dimensions, with its errors. */
static void
test_ndrange(struct env *e)
{
	static const size_t	 off1[] = { 5 }, gws1[] = { 64 };
	static const size_t	 lws1[] = { 8 };
	static const size_t	 gws1b[] = { 100 };
	static const size_t	 off2[] = { 3, 7 }, gws2[] = { 16, 8 };
	static const size_t	 lws2[] = { 4, 2 };
	static const size_t	 off3[] = { 1, 2, 3 }, gws3[] = { 8, 4, 6 };
	static const size_t	 lws3[] = { 2, 2, 3 };
	cl_program		 p;
	cl_kernel		 k = NULL, unset = NULL;
	cl_mem			 m = NULL;
	size_t			 kwg = 0, big[3], gbig[3], one = 1;
	size_t			 ones[64], items, i;

	if ((p = build_program(e, src_ids, NULL)) == NULL)
		return;
	if ((k = make_kernel(p, "ids")) == NULL)
		goto out;
	run_ids(e, k, 1, off1, gws1, lws1);
	run_ids(e, k, 1, NULL, gws1b, NULL);
	run_ids(e, k, 2, off2, gws2, lws2);
	run_ids(e, k, 2, NULL, gws2, NULL);
	run_ids(e, k, 3, off3, gws3, lws3);
	run_ids(e, k, 3, off3, gws3, NULL);

	if ((unset = make_kernel(p, "ids")) != NULL) {
		CHECK_ERR(clEnqueueNDRangeKernel(e->queue, unset, 1, NULL,
		    gws1, NULL, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
		clReleaseKernel(unset);
	}
	/*
	 * Size the buffer for the largest launch below, so that one wrongly
	 * accepted still writes inside it.
	 */
	CHECK_ERR(clGetKernelWorkGroupInfo(k, e->device,
	    CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL), CL_SUCCESS);
	big[0] = kwg < e->max_items[0] ? kwg : e->max_items[0];
	big[1] = kwg / big[0] + 1;
	if (big[1] > e->max_items[1])
		big[1] = e->max_items[1];
	big[2] = kwg / (big[0] * big[1]) + 1;
	if (big[2] > e->max_items[2])
		big[2] = e->max_items[2];
	items = big[0] * big[1] * big[2];
	if (items < e->max_items[0] + 1)
		items = e->max_items[0] + 1;
	if ((m = make_buffer(e, CL_MEM_READ_WRITE, 16 * (items + 64),
	    NULL)) == NULL)
		goto out;
	CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);

	for (i = 0; i < NITEMS(ones); i++)
		ones[i] = 1;
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 0, NULL, ones, NULL, 0,
	    NULL, NULL), CL_INVALID_WORK_DIMENSION);
	if (e->max_dims < NITEMS(ones))
		CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, e->max_dims + 1,
		    NULL, ones, NULL, 0, NULL, NULL),
		    CL_INVALID_WORK_DIMENSION);
	CHECK_ERR(clEnqueueNDRangeKernel(NULL, k, 1, NULL, gws1, NULL, 0, NULL,
	    NULL), CL_INVALID_COMMAND_QUEUE);
	/* PoCL 3.1 dereferences a NULL kernel here (SIGSEGV). */
	if (!is_pocl)
		CHECK_ERR(clEnqueueNDRangeKernel(e->queue, NULL, 1, NULL, gws1,
		    NULL, 0, NULL, NULL), CL_INVALID_KERNEL);
	/* PoCL 3.1 dereferences the NULL wait list here (SIGSEGV). */
	if (!is_pocl)
		CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, gws1,
		    NULL, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);

	/* More work-items per group than the kernel allows, within dims. */
	gbig[0] = big[0];
	gbig[1] = big[1];
	gbig[2] = big[2];
	if (CHECK(big[0] * big[1] * big[2] > kwg))
		CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 3, NULL, gbig,
		    big, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
	/*
	 * Past CL_DEVICE_MAX_WORK_ITEM_SIZES[0]; often past the group too.
	 * Past both, either code applies (the spec orders none): the one
	 * PoCL gives, CL_INVALID_WORK_GROUP_SIZE, and so VCL.
	 */
	big[0] = e->max_items[0] + 1;
	gbig[0] = big[0];
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, gbig, big, 0,
	    NULL, NULL), big[0] > kwg ? CL_INVALID_WORK_GROUP_SIZE :
	    CL_INVALID_WORK_ITEM_SIZE);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &one, &one, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
out:
	if (m != NULL)
		clReleaseMemObject(m);
	release_all(NULL, 0, k, p);
}

/* Under -cl-std=CL1.2 the global size must be a multiple of the local. */
static void
test_ndrange_uniform(struct env *e)
{
	cl_program	 p;
	cl_kernel	 k = NULL;
	cl_mem		 m = NULL;
	size_t		 gws = 10, lws = 4;
	size_t		 gws2[2] = { 8, 6 }, lws2[2] = { 4, 4 };

	if ((p = build_program(e, src_ids, "-cl-std=CL1.2")) == NULL)
		return;
	if ((k = make_kernel(p, "ids")) == NULL)
		goto out;
	if ((m = make_buffer(e, CL_MEM_READ_WRITE, 4096, NULL)) == NULL)
		goto out;
	CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &gws, &lws, 0,
	    NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 2, NULL, gws2, lws2, 0,
	    NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
	gws = 12;
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &gws, &lws, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
out:
	if (m != NULL)
		clReleaseMemObject(m);
	release_all(NULL, 0, k, p);
}

/* A work-group reduction through __local memory, checked per group. */
static void
test_reduction(struct env *e)
{
	cl_program	 p;
	cl_kernel	 k = NULL;
	cl_mem		 mems[2] = { NULL, NULL };
	size_t		 kwg = 0, lws = 64, groups = 37, gws, i, j;
	int		*in = NULL, partial[37];
	long		 sum, total = 0, want_total = 0;

	if ((p = build_program(e, src_ids, NULL)) == NULL)
		return;
	if ((k = make_kernel(p, "reduce")) == NULL)
		goto out;
	CHECK_ERR(clGetKernelWorkGroupInfo(k, e->device,
	    CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL), CL_SUCCESS);
	while (lws > 1 && (lws > kwg || lws > e->max_items[0]))
		lws /= 2;
	gws = lws * groups;
	if ((in = malloc(gws * sizeof *in)) == NULL)
		goto out;
	for (i = 0; i < gws; i++) {
		in[i] = (int)((i * 31) % 1000) - 300;
		want_total += in[i];
	}
	mems[0] = make_buffer(e, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
	    gws * sizeof *in, in);
	mems[1] = make_buffer(e, CL_MEM_WRITE_ONLY, sizeof partial, NULL);
	if (mems[0] == NULL || mems[1] == NULL)
		goto out;
	CHECK_ERR(clSetKernelArg(k, 0, sizeof mems[0], &mems[0]), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(k, 1, sizeof mems[1], &mems[1]), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(k, 2, lws * sizeof(int), NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &gws, &lws, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, mems[1], CL_TRUE, 0,
	    sizeof partial, partial, 0, NULL, NULL), CL_SUCCESS);
	for (i = 0; i < groups; i++) {
		sum = 0;
		for (j = 0; j < lws; j++)
			sum += in[i * lws + j];
		if (!CHECK(partial[i] == sum)) {
			printf("  group %zu: got %d, want %ld\n", i, partial[i],
			    sum);
			break;
		}
		total += partial[i];
	}
	CHECK(total == want_total);
out:
	release_all(mems, NITEMS(mems), k, p);
	free(in);
}

/* clEnqueueTask runs one work-item in one dimension. */
static void
test_enqueue_task(struct env *e)
{
	cl_program	 p;
	cl_kernel	 k = NULL;
	cl_mem		 m = NULL;
	cl_event	 ev = NULL;
	cl_command_type	 type = 0;
	int		 v = 0;

	if ((p = build_program(e, src_ids, NULL)) == NULL)
		return;
	if ((k = make_kernel(p, "task")) == NULL)
		goto out;
	if ((m = make_buffer(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    sizeof v, &v)) == NULL)
		goto out;
	CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
	CHECK_ERR(clEnqueueTask(e->queue, k, 0, NULL, &ev), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof v, &v, 1,
	    &ev, NULL), CL_SUCCESS);
	CHECK(v == 42 + 1 + 1 + 1);
	if (ev != NULL) {
		CHECK_ERR(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type,
		    &type, NULL), CL_SUCCESS);
		CHECK(type == CL_COMMAND_TASK ||
		    type == CL_COMMAND_NDRANGE_KERNEL);
		clReleaseEvent(ev);
	}
	/* PoCL 3.1 dereferences a NULL kernel here (SIGSEGV). */
	if (!is_pocl)
		CHECK_ERR(clEnqueueTask(e->queue, NULL, 0, NULL, NULL),
		    CL_INVALID_KERNEL);
	CHECK_ERR(clEnqueueTask(NULL, k, 0, NULL, NULL),
	    CL_INVALID_COMMAND_QUEUE);
out:
	if (m != NULL)
		clReleaseMemObject(m);
	release_all(NULL, 0, k, p);
}

/* What an event callback saw. */
struct seen {
	atomic_int	 calls;
	atomic_int	 status;
	cl_event	 event;
	atomic_int	 same;
};

/* Records an event callback's status and whether the event matched. */
static void CL_CALLBACK
event_notify(cl_event ev, cl_int status, void *user_data)
{
	struct seen	*s = user_data;

	atomic_store(&s->status, status);
	atomic_store(&s->same, ev == s->event);
	atomic_fetch_add(&s->calls, 1);
}

/* Event queries, refcounts, clWaitForEvents and clSetEventCallback. */
static void
test_events(struct env *e)
{
	static struct seen s1, s2;	/* static: outlive lost callbacks */
	cl_mem		 m;
	cl_event	 ev = NULL, uev = NULL, wev = NULL;
	cl_int		 status = 0, err;
	cl_command_type	 type = 0;
	cl_command_queue q = NULL;
	cl_context	 c = NULL;
	cl_uint		 refs = 0, refs2 = 0;
	char		 buf[64];

	memset(buf, 7, sizeof buf);
	atomic_init(&s1.calls, 0);
	atomic_init(&s1.status, 99);
	atomic_init(&s1.same, 0);
	atomic_init(&s2.calls, 0);
	atomic_init(&s2.status, 99);
	atomic_init(&s2.same, 0);
	CHECK_ERR(clWaitForEvents(0, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clWaitForEvents(1, NULL), CL_INVALID_VALUE);
	if ((m = make_buffer(e, CL_MEM_READ_WRITE, sizeof buf, NULL)) == NULL)
		return;
	err = clEnqueueWriteBuffer(e->queue, m, CL_FALSE, 0, sizeof buf, buf,
	    0, NULL, &ev);
	if (!CHECK_ERR(err, CL_SUCCESS))
		goto out;
	CHECK_ERR(clWaitForEvents(0, &ev), CL_INVALID_VALUE);
	CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
	CHECK_ERR(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
	    sizeof status, &status, NULL), CL_SUCCESS);
	CHECK(status == CL_COMPLETE);
	CHECK_ERR(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type,
	    NULL), CL_SUCCESS);
	CHECK(type == CL_COMMAND_WRITE_BUFFER);
	CHECK_ERR(clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q,
	    NULL), CL_SUCCESS);
	CHECK(q == e->queue);
	CHECK_ERR(clGetEventInfo(ev, CL_EVENT_CONTEXT, sizeof c, &c, NULL),
	    CL_SUCCESS);
	CHECK(c == e->ctx);
	CHECK_ERR(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof refs,
	    &refs, NULL), CL_SUCCESS);
	CHECK(refs >= 1);
	CHECK_ERR(clRetainEvent(ev), CL_SUCCESS);
	CHECK_ERR(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof refs2,
	    &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs + 1);
	CHECK_ERR(clReleaseEvent(ev), CL_SUCCESS);
	CHECK_ERR(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof refs2,
	    &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs);
	CHECK_ERR(clGetEventInfo(ev, 0x7fff, sizeof status, &status, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, 1, &type, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetEventInfo(NULL, CL_EVENT_COMMAND_TYPE, sizeof type,
	    &type, NULL), CL_INVALID_EVENT);
	CHECK_ERR(clRetainEvent(NULL), CL_INVALID_EVENT);
	CHECK_ERR(clReleaseEvent(NULL), CL_INVALID_EVENT);

	/* A callback on a completed event still fires, with CL_COMPLETE. */
	s1.event = ev;
	CHECK_ERR(clSetEventCallback(ev, CL_COMPLETE, event_notify, &s1),
	    CL_SUCCESS);
	CHECK(wait_flag(&s1.calls, 1, 10000));
	CHECK(atomic_load(&s1.status) == CL_COMPLETE);
	CHECK(atomic_load(&s1.same) == 1);
	CHECK_ERR(clSetEventCallback(ev, CL_COMPLETE, NULL, &s1),
	    CL_INVALID_VALUE);
	CHECK_ERR(clSetEventCallback(ev, CL_QUEUED, event_notify, &s1),
	    CL_INVALID_VALUE);
	CHECK_ERR(clSetEventCallback(ev, 12345, event_notify, &s1),
	    CL_INVALID_VALUE);
	CHECK_ERR(clSetEventCallback(NULL, CL_COMPLETE, event_notify, &s1),
	    CL_INVALID_EVENT);

	/* A callback registered before completion fires once it completes. */
	uev = clCreateUserEvent(e->ctx, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		goto out;
	err = clEnqueueWriteBuffer(e->queue, m, CL_FALSE, 0, sizeof buf, buf,
	    1, &uev, &wev);
	if (CHECK_ERR(err, CL_SUCCESS)) {
		s2.event = wev;
		CHECK_ERR(clSetEventCallback(wev, CL_COMPLETE, event_notify,
		    &s2), CL_SUCCESS);
		CHECK_ERR(clFlush(e->queue), CL_SUCCESS);
		sleep_ms(50);
		CHECK(atomic_load(&s2.calls) == 0);
		CHECK_ERR(clSetUserEventStatus(uev, CL_COMPLETE), CL_SUCCESS);
		CHECK_ERR(clWaitForEvents(1, &wev), CL_SUCCESS);
		CHECK(wait_flag(&s2.calls, 1, 10000));
		CHECK(atomic_load(&s2.status) == CL_COMPLETE);
		CHECK(atomic_load(&s2.same) == 1);
		clReleaseEvent(wev);
	} else
		clSetUserEventStatus(uev, CL_COMPLETE);
	clReleaseEvent(uev);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
	sleep_ms(20);
	CHECK(atomic_load(&s1.calls) == 1);
	CHECK(atomic_load(&s2.calls) == 1);
out:
	if (ev != NULL)
		CHECK_ERR(clReleaseEvent(ev), CL_SUCCESS);
	clReleaseMemObject(m);
}

/* User events gate commands; a second set fails; errors propagate. */
static void
test_user_events(struct env *e)
{
	cl_event		 uev = NULL, ev = NULL, uev2 = NULL, ev2 = NULL;
	cl_command_queue	 q = NULL, q2 = NULL;
	cl_command_type		 type = 0;
	cl_context		 c = NULL;
	cl_mem			 m;
	cl_int			 err, st;
	int			 src[16], dst[16], i;

	for (i = 0; i < 16; i++)
		src[i] = i * i;
	uev = clCreateUserEvent(NULL, &err);
	CHECK_ERR(err, CL_INVALID_CONTEXT);
	CHECK(uev == NULL);
	uev = clCreateUserEvent(e->ctx, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return;
	CHECK(event_status(uev) == CL_SUBMITTED);
	CHECK_ERR(clGetEventInfo(uev, CL_EVENT_COMMAND_TYPE, sizeof type, &type,
	    NULL), CL_SUCCESS);
	CHECK(type == CL_COMMAND_USER);
	q = (cl_command_queue)1;
	CHECK_ERR(clGetEventInfo(uev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q,
	    NULL), CL_SUCCESS);
	CHECK(q == NULL);
	CHECK_ERR(clGetEventInfo(uev, CL_EVENT_CONTEXT, sizeof c, &c, NULL),
	    CL_SUCCESS);
	CHECK(c == e->ctx);

	if ((m = make_buffer(e, CL_MEM_READ_WRITE, sizeof src, NULL)) == NULL) {
		clSetUserEventStatus(uev, CL_COMPLETE);
		clReleaseEvent(uev);
		return;
	}
	err = clEnqueueWriteBuffer(e->queue, m, CL_FALSE, 0, sizeof src, src, 1,
	    &uev, &ev);
	CHECK_ERR(err, CL_SUCCESS);
	CHECK_ERR(clFlush(e->queue), CL_SUCCESS);
	sleep_ms(100);
	if (ev != NULL)
		CHECK(event_status(ev) != CL_COMPLETE);
	CHECK_ERR(clSetUserEventStatus(uev, CL_RUNNING), CL_INVALID_VALUE);
	CHECK_ERR(clSetUserEventStatus(uev, CL_COMPLETE), CL_SUCCESS);
	CHECK(event_status(uev) == CL_COMPLETE);
	CHECK_ERR(clSetUserEventStatus(uev, CL_COMPLETE),
	    CL_INVALID_OPERATION);
	CHECK_ERR(clSetUserEventStatus(uev, -1), CL_INVALID_OPERATION);
	if (ev != NULL) {
		CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
		CHECK(event_status(ev) == CL_COMPLETE);
		CHECK_ERR(clSetUserEventStatus(ev, CL_COMPLETE),
		    CL_INVALID_EVENT);
		clReleaseEvent(ev);
	}
	memset(dst, 0, sizeof dst);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof dst, dst,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(src, dst, sizeof src) == 0);
	CHECK_ERR(clSetUserEventStatus(NULL, CL_COMPLETE), CL_INVALID_EVENT);
	clReleaseEvent(uev);

	/*
	 * A negative status terminates the dependent command: its event
	 * gets a negative status. The queue may be unusable afterwards, so
	 * this uses a queue of its own.
	 */
	q2 = clCreateCommandQueueWithProperties(e->ctx, e->device, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		goto out;
	uev2 = clCreateUserEvent(e->ctx, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		goto out;
	err = clEnqueueWriteBuffer(q2, m, CL_FALSE, 0, sizeof src, src, 1,
	    &uev2, &ev2);
	CHECK_ERR(err, CL_SUCCESS);
	CHECK_ERR(clFlush(q2), CL_SUCCESS);
	CHECK_ERR(clSetUserEventStatus(uev2, -42), CL_SUCCESS);
	CHECK(event_status(uev2) == -42);
	if (ev2 != NULL) {
		for (i = 0; i < 10000 && event_status(ev2) >= 0; i++)
			sleep_ms(1);
		st = event_status(ev2);
		CHECK(st < 0);
		CHECK_ERR(clWaitForEvents(1, &ev2),
		    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
		clReleaseEvent(ev2);
	}
	clReleaseEvent(uev2);
out:
	if (q2 != NULL)
		clReleaseCommandQueue(q2);
	clReleaseMemObject(m);
}

/* Markers and barriers: the 1.2 calls with wait lists and the 1.1 ones. */
static void
test_markers_barriers(struct env *e)
{
	cl_event		 uev = NULL, wev = NULL, mev = NULL, bev = NULL;
	cl_event		 m11 = NULL, mev2 = NULL;
	cl_command_type		 type = 0;
	cl_command_queue	 ooo = NULL;
	cl_command_queue_properties qp = 0;
	cl_mem			 m;
	cl_int			 err;
	int			 v = 5, r = 0;

	if ((m = make_buffer(e, CL_MEM_READ_WRITE, sizeof v, NULL)) == NULL)
		return;
	uev = clCreateUserEvent(e->ctx, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		goto out;
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_FALSE, 0, sizeof v, &v,
	    1, &uev, &wev), CL_SUCCESS);
	CHECK_ERR(clEnqueueMarkerWithWaitList(e->queue, 0, NULL, &mev),
	    CL_SUCCESS);
	CHECK_ERR(clEnqueueBarrierWithWaitList(e->queue, 0, NULL, &bev),
	    CL_SUCCESS);
	CHECK_ERR(clFlush(e->queue), CL_SUCCESS);
	sleep_ms(50);
	if (mev != NULL)
		CHECK(event_status(mev) != CL_COMPLETE);
	if (bev != NULL)
		CHECK(event_status(bev) != CL_COMPLETE);
	CHECK_ERR(clSetUserEventStatus(uev, CL_COMPLETE), CL_SUCCESS);
	if (mev != NULL) {
		CHECK_ERR(clWaitForEvents(1, &mev), CL_SUCCESS);
		CHECK_ERR(clGetEventInfo(mev, CL_EVENT_COMMAND_TYPE,
		    sizeof type, &type, NULL), CL_SUCCESS);
		CHECK(type == CL_COMMAND_MARKER);
		if (wev != NULL)
			CHECK(event_status(wev) == CL_COMPLETE);
	}
	if (bev != NULL) {
		CHECK_ERR(clWaitForEvents(1, &bev), CL_SUCCESS);
		CHECK_ERR(clGetEventInfo(bev, CL_EVENT_COMMAND_TYPE,
		    sizeof type, &type, NULL), CL_SUCCESS);
		CHECK(type == CL_COMMAND_BARRIER);
	}
	/* With an explicit wait list. */
	if (wev != NULL) {
		CHECK_ERR(clEnqueueMarkerWithWaitList(e->queue, 1, &wev,
		    &mev2), CL_SUCCESS);
		CHECK_ERR(clEnqueueBarrierWithWaitList(e->queue, 1, &wev,
		    NULL), CL_SUCCESS);
		if (mev2 != NULL) {
			CHECK_ERR(clWaitForEvents(1, &mev2), CL_SUCCESS);
			clReleaseEvent(mev2);
		}
	}
	CHECK_ERR(clEnqueueMarkerWithWaitList(e->queue, 1, NULL, NULL),
	    CL_INVALID_EVENT_WAIT_LIST);
	CHECK_ERR(clEnqueueMarkerWithWaitList(NULL, 0, NULL, NULL),
	    CL_INVALID_COMMAND_QUEUE);
	CHECK_ERR(clEnqueueBarrierWithWaitList(NULL, 0, NULL, NULL),
	    CL_INVALID_COMMAND_QUEUE);

	/* The OpenCL 1.1 forms. */
	CHECK_ERR(clEnqueueMarker(e->queue, &m11), CL_SUCCESS);
	CHECK_ERR(clEnqueueMarker(e->queue, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueBarrier(e->queue), CL_SUCCESS);
	CHECK_ERR(clEnqueueBarrier(NULL), CL_INVALID_COMMAND_QUEUE);
	/* PoCL 3.1 aborts in clEnqueueWaitForEvents ("unimplemented"). */
	if (m11 != NULL && !is_pocl)
		CHECK_ERR(clEnqueueWaitForEvents(e->queue, 1, &m11),
		    CL_SUCCESS);
	if (m11 != NULL) {
		CHECK_ERR(clWaitForEvents(1, &m11), CL_SUCCESS);
		CHECK_ERR(clGetEventInfo(m11, CL_EVENT_COMMAND_TYPE,
		    sizeof type, &type, NULL), CL_SUCCESS);
		CHECK(type == CL_COMMAND_MARKER);
		clReleaseEvent(m11);
	}
	if (!is_pocl) {
		CHECK_ERR(clEnqueueWaitForEvents(e->queue, 0, NULL),
		    CL_INVALID_VALUE);
		CHECK_ERR(clEnqueueWaitForEvents(e->queue, 1, NULL),
		    CL_INVALID_VALUE);
	}
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof r, &r, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK(r == 5);

	/* On an out-of-order queue a barrier orders what comes after it. */
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES,
	    sizeof qp, &qp, NULL), CL_SUCCESS);
	if (qp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
		ooo = clCreateCommandQueue(e->ctx, e->device,
		    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
		if (CHECK_ERR(err, CL_SUCCESS)) {
			v = 77;
			r = 0;
			CHECK_ERR(clEnqueueWriteBuffer(ooo, m, CL_FALSE, 0,
			    sizeof v, &v, 0, NULL, NULL), CL_SUCCESS);
			CHECK_ERR(clEnqueueBarrierWithWaitList(ooo, 0, NULL,
			    NULL), CL_SUCCESS);
			CHECK_ERR(clEnqueueReadBuffer(ooo, m, CL_FALSE, 0,
			    sizeof r, &r, 0, NULL, NULL), CL_SUCCESS);
			CHECK_ERR(clFinish(ooo), CL_SUCCESS);
			CHECK(r == 77);
			clReleaseCommandQueue(ooo);
		}
	}
out:
	if (uev != NULL)
		clReleaseEvent(uev);
	if (wev != NULL)
		clReleaseEvent(wev);
	if (mev != NULL)
		clReleaseEvent(mev);
	if (bev != NULL)
		clReleaseEvent(bev);
	clReleaseMemObject(m);
}

/* clGetEventProfilingInfo on a profiling queue and on one without. */
static void
test_profiling(struct env *e)
{
	static const cl_profiling_info	 what[] = {
		CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
		CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END,
		CL_PROFILING_COMMAND_COMPLETE
	};
	cl_command_queue		 pq;
	cl_program			 p;
	cl_kernel			 k = NULL;
	cl_mem				 m = NULL;
	cl_event			 ev = NULL, ev2 = NULL, uev = NULL;
	cl_event			 gated = NULL;
	cl_ulong			 t[5], t0;
	size_t				 gws = 4096, i;
	cl_int				 err;

	pq = clCreateCommandQueue(e->ctx, e->device, CL_QUEUE_PROFILING_ENABLE,
	    &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return;
	if ((p = build_program(e, src_ids, NULL)) == NULL)
		goto out;
	if ((k = make_kernel(p, "incr")) == NULL)
		goto out;
	if ((m = make_buffer(e, CL_MEM_READ_WRITE, gws * sizeof(int),
	    NULL)) == NULL)
		goto out;
	CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(pq, k, 1, NULL, &gws, NULL, 0, NULL,
	    &ev), CL_SUCCESS);
	if (ev == NULL)
		goto out;
	CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
	for (i = 0; i < NITEMS(what); i++) {
		t[i] = 0;
		CHECK_ERR(clGetEventProfilingInfo(ev, what[i], sizeof t[i],
		    &t[i], NULL), CL_SUCCESS);
	}
	CHECK(t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3] && t[3] <= t[4]);
	CHECK(t[0] > 0);
	CHECK_ERR(clGetEventProfilingInfo(ev, 0x7fff, sizeof t0, &t0, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, 4,
	    &t0, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetEventProfilingInfo(NULL, CL_PROFILING_COMMAND_START,
	    sizeof t0, &t0, NULL), CL_INVALID_EVENT);

	/* A later command is queued no earlier than the first one ended. */
	CHECK_ERR(clEnqueueNDRangeKernel(pq, k, 1, NULL, &gws, NULL, 0, NULL,
	    &ev2), CL_SUCCESS);
	if (ev2 != NULL) {
		CHECK_ERR(clWaitForEvents(1, &ev2), CL_SUCCESS);
		t0 = 0;
		CHECK_ERR(clGetEventProfilingInfo(ev2,
		    CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL),
		    CL_SUCCESS);
		CHECK(t0 >= t[3]);
		clReleaseEvent(ev2);
		ev2 = NULL;
	}

	/* A command not yet complete has no profiling information. */
	uev = clCreateUserEvent(e->ctx, &err);
	if (CHECK_ERR(err, CL_SUCCESS)) {
		CHECK_ERR(clGetEventProfilingInfo(uev,
		    CL_PROFILING_COMMAND_QUEUED, sizeof t0, &t0, NULL),
		    CL_PROFILING_INFO_NOT_AVAILABLE);
		CHECK_ERR(clEnqueueNDRangeKernel(pq, k, 1, NULL, &gws, NULL, 1,
		    &uev, &gated), CL_SUCCESS);
		if (gated != NULL)
			CHECK_ERR(clGetEventProfilingInfo(gated,
			    CL_PROFILING_COMMAND_END, sizeof t0, &t0, NULL),
			    CL_PROFILING_INFO_NOT_AVAILABLE);
		CHECK_ERR(clSetUserEventStatus(uev, CL_COMPLETE), CL_SUCCESS);
		CHECK_ERR(clFinish(pq), CL_SUCCESS);
		if (gated != NULL)
			clReleaseEvent(gated);
		clReleaseEvent(uev);
	}

	/* Without CL_QUEUE_PROFILING_ENABLE there is nothing to return. */
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &gws, NULL, 0,
	    NULL, &ev2), CL_SUCCESS);
	if (ev2 != NULL) {
		CHECK_ERR(clWaitForEvents(1, &ev2), CL_SUCCESS);
		CHECK_ERR(clGetEventProfilingInfo(ev2,
		    CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL),
		    CL_PROFILING_INFO_NOT_AVAILABLE);
		clReleaseEvent(ev2);
	}
out:
	if (ev != NULL)
		clReleaseEvent(ev);
	if (m != NULL)
		clReleaseMemObject(m);
	release_all(NULL, 0, k, p);
	clFinish(pq);
	clReleaseCommandQueue(pq);
}

/* clEnqueueFillBuffer with 1-, 4- and 16-byte patterns, and its errors. */
static void
test_fill_buffer(struct env *e)
{
	unsigned char	 b1 = 0xab, b16[16], out[256];
	uint32_t	 b4 = 0x01020304;
	cl_mem		 m;
	cl_event	 ev = NULL;
	cl_command_type	 type = 0;
	size_t		 i;

	for (i = 0; i < sizeof b16; i++)
		b16[i] = (unsigned char)(0xc0 + i);
	if ((m = make_buffer(e, CL_MEM_READ_WRITE, sizeof out, NULL)) == NULL)
		return;
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, &b1, 1, 0, sizeof out, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, &b4, 4, 16, 64, 0, NULL,
	    NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, b16, 16, 128, 64, 0, NULL,
	    &ev), CL_SUCCESS);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, &b1, 1, 255, 1, 0, NULL,
	    NULL), CL_SUCCESS);
	memset(out, 0, sizeof out);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof out, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (i = 0; i < sizeof out; i++) {
		unsigned char	 want = 0xab;

		if (i >= 16 && i < 80)
			want = ((unsigned char *)&b4)[i % 4];
		else if (i >= 128 && i < 192)
			want = b16[i % 16];
		if (!CHECK(out[i] == want)) {
			printf("  byte %zu: got %#x, want %#x\n", i, out[i],
			    want);
			break;
		}
	}
	if (ev != NULL) {
		CHECK(event_status(ev) == CL_COMPLETE);
		CHECK_ERR(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type,
		    &type, NULL), CL_SUCCESS);
		CHECK(type == CL_COMMAND_FILL_BUFFER);
		clReleaseEvent(ev);
	}

	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, &b4, 3, 0, 12, 0, NULL,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, &b4, 0, 0, 12, 0, NULL,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, b16, 256, 0, 256, 0, NULL,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, NULL, 4, 0, 16, 0, NULL,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, &b4, 4, 2, 16, 0, NULL,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, &b4, 4, 0, 6, 0, NULL,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, &b4, 4, 252, 8, 0, NULL,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, NULL, &b4, 4, 0, 8, 0, NULL,
	    NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clEnqueueFillBuffer(e->queue, m, &b4, 4, 0, 8, 1, NULL,
	    NULL), CL_INVALID_EVENT_WAIT_LIST);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
	clReleaseMemObject(m);
}

/* clEnqueueMapBuffer/clEnqueueUnmapMemObject: read, write, invalidate. */
static void
test_map_buffer(struct env *e)
{
	cl_mem		 m, na = NULL;
	int		 init[256], out[256], *p, i;
	cl_uint		 maps = 99;
	cl_event	 ev = NULL, uev = NULL;
	cl_command_type	 type = 0;
	cl_int		 err;

	for (i = 0; i < 256; i++)
		init[i] = i + 1000;
	if ((m = make_buffer(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    sizeof init, init)) == NULL)
		return;

	p = clEnqueueMapBuffer(e->queue, m, CL_TRUE, CL_MAP_READ, 0,
	    sizeof init, 0, NULL, NULL, &err);
	if (CHECK_ERR(err, CL_SUCCESS) && CHECK(p != NULL)) {
		CHECK(memcmp(p, init, sizeof init) == 0);
		CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof maps,
		    &maps, NULL), CL_SUCCESS);
		CHECK(maps == 1);
		CHECK_ERR(clEnqueueUnmapMemObject(e->queue, m, p, 0, NULL,
		    &ev), CL_SUCCESS);
		CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
		CHECK_ERR(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type,
		    &type, NULL), CL_SUCCESS);
		CHECK(type == CL_COMMAND_UNMAP_MEM_OBJECT);
		clReleaseEvent(ev);
		ev = NULL;
		CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof maps,
		    &maps, NULL), CL_SUCCESS);
		CHECK(maps == 0);
	}

	/* A write map of a range; the change is visible after the unmap. */
	p = clEnqueueMapBuffer(e->queue, m, CL_TRUE, CL_MAP_WRITE | CL_MAP_READ,
	    64 * sizeof(int), 32 * sizeof(int), 0, NULL, NULL, &err);
	if (CHECK_ERR(err, CL_SUCCESS) && CHECK(p != NULL)) {
		CHECK(p[0] == 1064 && p[31] == 1095);
		for (i = 0; i < 32; i++)
			p[i] = -i;
		CHECK_ERR(clEnqueueUnmapMemObject(e->queue, m, p, 0, NULL,
		    NULL), CL_SUCCESS);
	}
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof out, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (i = 0; i < 256; i++) {
		if (!CHECK(out[i] == ((i >= 64 && i < 96) ? -(i - 64) :
		    i + 1000)))
			break;
	}

	/* CL_MAP_WRITE_INVALIDATE_REGION: the whole region is rewritten. */
	p = clEnqueueMapBuffer(e->queue, m, CL_TRUE,
	    CL_MAP_WRITE_INVALIDATE_REGION, 0, sizeof init, 0, NULL, NULL,
	    &err);
	if (CHECK_ERR(err, CL_SUCCESS) && CHECK(p != NULL)) {
		for (i = 0; i < 256; i++)
			p[i] = 7 * i;
		CHECK_ERR(clEnqueueUnmapMemObject(e->queue, m, p, 0, NULL,
		    NULL), CL_SUCCESS);
	}
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof out, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (i = 0; i < 256; i++) {
		if (!CHECK(out[i] == 7 * i))
			break;
	}

	/* A non-blocking map gated by a user event; valid after its event. */
	uev = clCreateUserEvent(e->ctx, &err);
	if (CHECK_ERR(err, CL_SUCCESS)) {
		p = clEnqueueMapBuffer(e->queue, m, CL_FALSE, CL_MAP_READ,
		    16, 16, 1, &uev, &ev, &err);
		CHECK_ERR(err, CL_SUCCESS);
		CHECK_ERR(clSetUserEventStatus(uev, CL_COMPLETE), CL_SUCCESS);
		if (p != NULL && ev != NULL) {
			CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
			CHECK_ERR(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE,
			    sizeof type, &type, NULL), CL_SUCCESS);
			CHECK(type == CL_COMMAND_MAP_BUFFER);
			CHECK(p[0] == 28 && p[3] == 49);
			CHECK_ERR(clEnqueueUnmapMemObject(e->queue, m, p, 0,
			    NULL, NULL), CL_SUCCESS);
		}
		if (ev != NULL)
			clReleaseEvent(ev);
		clReleaseEvent(uev);
	}
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);

	p = clEnqueueMapBuffer(e->queue, m, CL_TRUE, CL_MAP_READ, 1000, 100, 0,
	    NULL, NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(p == NULL);
	p = clEnqueueMapBuffer(e->queue, m, CL_TRUE, CL_MAP_READ, 0, 0, 0,
	    NULL, NULL, &err);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(p == NULL);
	/* PoCL 3.1 maps READ|WRITE_INVALIDATE_REGION (mutually exclusive). */
	p = clEnqueueMapBuffer(e->queue, m, CL_TRUE,
	    CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, 0, 16, 0, NULL, NULL,
	    &err);
	CHECK_ERR2(err, CL_INVALID_VALUE,
	    is_pocl ? CL_SUCCESS : CL_INVALID_VALUE);
	if (err == CL_SUCCESS && p != NULL)
		clEnqueueUnmapMemObject(e->queue, m, p, 0, NULL, NULL);
	else
		CHECK(p == NULL);
	p = clEnqueueMapBuffer(e->queue, NULL, CL_TRUE, CL_MAP_READ, 0, 16, 0,
	    NULL, NULL, &err);
	CHECK_ERR(err, CL_INVALID_MEM_OBJECT);
	CHECK(p == NULL);
	CHECK_ERR(clEnqueueUnmapMemObject(e->queue, m, init, 0, NULL, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueUnmapMemObject(e->queue, NULL, init, 0, NULL, NULL),
	    CL_INVALID_MEM_OBJECT);

	/* Host access flags forbid the maps they forbid. */
	if ((na = make_buffer(e, CL_MEM_HOST_NO_ACCESS, 64, NULL)) != NULL) {
		p = clEnqueueMapBuffer(e->queue, na, CL_TRUE, CL_MAP_READ, 0,
		    16, 0, NULL, NULL, &err);
		CHECK_ERR(err, CL_INVALID_OPERATION);
		CHECK(p == NULL);
		clReleaseMemObject(na);
	}
	if ((na = make_buffer(e, CL_MEM_HOST_WRITE_ONLY, 64, NULL)) != NULL) {
		p = clEnqueueMapBuffer(e->queue, na, CL_TRUE, CL_MAP_READ, 0,
		    16, 0, NULL, NULL, &err);
		CHECK_ERR(err, CL_INVALID_OPERATION);
		CHECK(p == NULL);
		clReleaseMemObject(na);
	}
	clReleaseMemObject(m);
}

/* 1000 small kernels enqueued without waiting, then one clFinish. */
static void
test_stress_kernels(struct env *e)
{
	cl_program	 p;
	cl_kernel	 k = NULL;
	cl_mem		 m = NULL;
	int		 out[256], i;
	size_t		 gws = 256;
	cl_int		 err = CL_SUCCESS;

	memset(out, 0, sizeof out);
	if ((p = build_program(e, src_ids, NULL)) == NULL)
		return;
	if ((k = make_kernel(p, "incr")) == NULL)
		goto out;
	if ((m = make_buffer(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    sizeof out, out)) == NULL)
		goto out;
	CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
	for (i = 0; i < 1000 && err == CL_SUCCESS; i++) {
		err = clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &gws, NULL,
		    0, NULL, NULL);
	}
	CHECK_ERR(err, CL_SUCCESS);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof out, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (i = 0; i < 256; i++) {
		if (!CHECK(out[i] == 1000)) {
			printf("  item %d: got %d\n", i, out[i]);
			break;
		}
	}
out:
	if (m != NULL)
		clReleaseMemObject(m);
	release_all(NULL, 0, k, p);
}

/* 200 non-blocking reads of small slices into their own host slots. */
static void
test_stress_reads(struct env *e)
{
	enum { SLICES = 200, WORDS = 16 };
	static int	 src[SLICES * WORDS], dst[SLICES][WORDS + 1];
	cl_mem		 m;
	size_t		 i, j, slice;
	cl_int		 err = CL_SUCCESS;

	for (i = 0; i < SLICES * WORDS; i++)
		src[i] = (int)(i * 3 + 1);
	for (i = 0; i < SLICES; i++)
		for (j = 0; j <= WORDS; j++)
			dst[i][j] = -1;
	if ((m = make_buffer(e, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
	    sizeof src, src)) == NULL)
		return;
	/* Slot i gets slice 199 - i, so order mistakes show. */
	for (i = 0; i < SLICES && err == CL_SUCCESS; i++) {
		slice = SLICES - 1 - i;
		err = clEnqueueReadBuffer(e->queue, m, CL_FALSE,
		    slice * WORDS * sizeof(int), WORDS * sizeof(int), dst[i], 0,
		    NULL, NULL);
	}
	CHECK_ERR(err, CL_SUCCESS);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
	for (i = 0; i < SLICES; i++) {
		slice = SLICES - 1 - i;
		if (!CHECK(memcmp(dst[i], &src[slice * WORDS],
		    WORDS * sizeof(int)) == 0 && dst[i][WORDS] == -1)) {
			printf("  slot %zu wrong\n", i);
			break;
		}
	}
	clReleaseMemObject(m);
}

/* Counts a memory object destructor callback in the flag it was handed. */
static void CL_CALLBACK
mem_notify(cl_mem mem, void *user_data)
{
	atomic_fetch_add((atomic_int *)user_data, 1);
}

/* Objects keep their context alive; destructors run at the last release. */
static void
test_lifetime(struct env *e)
{
	cl_mem		 m;
	cl_context	 c = NULL;
	static atomic_int destroyed;	/* static: outlives a lost callback */
	int		 v = 1234, r = 0;

	atomic_init(&destroyed, 0);
	m = make_buffer(e, CL_MEM_READ_WRITE, sizeof v, NULL);
	/* Drop the test's context reference; queue and buffer hold theirs. */
	CHECK_ERR(clReleaseContext(e->ctx), CL_SUCCESS);
	c = e->ctx;
	e->ctx = NULL;
	if (m == NULL)
		goto out;
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 0, sizeof v, &v,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof r, &r, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK(r == 1234);
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof c, &c, NULL),
	    CL_SUCCESS);
	CHECK_ERR(clSetMemObjectDestructorCallback(m, mem_notify, &destroyed),
	    CL_SUCCESS);
	CHECK_ERR(clSetMemObjectDestructorCallback(m, NULL, &destroyed),
	    CL_INVALID_VALUE);
	CHECK_ERR(clRetainMemObject(m), CL_SUCCESS);
	CHECK_ERR(clReleaseMemObject(m), CL_SUCCESS);
	sleep_ms(20);
	CHECK(atomic_load(&destroyed) == 0);
	CHECK_ERR(clReleaseMemObject(m), CL_SUCCESS);
	CHECK(wait_flag(&destroyed, 1, 10000));
out:
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
	CHECK_ERR(clReleaseCommandQueue(e->queue), CL_SUCCESS);
	e->queue = NULL;
}


/* --- program binaries, compile and link, built-in kernels, IL, clones --- */

/* A kernel taking a struct by value: o[i] = s.a * i + s.b (+ s.c). */
static const char	*src_pb_struct =
    "typedef struct { int a; char pad[9]; int b; } pb_pair;\n"
    "__kernel void pb_run(__global int *o, pb_pair s)\n"
    "{ int i = get_global_id(0); o[i] = s.a * i + s.b; }\n";

/* Runs pb_run of prog (a, b) over 16 items and checks the results. */
static void
run_pb(struct env *e, cl_program prog, int a, int b)
{
	struct { int a; char pad[9]; int b; } pair;
	cl_kernel	 k;
	cl_mem		 m;
	int		 out[16], i;
	size_t		 gws = 16;

	if ((k = make_kernel(prog, "pb_run")) == NULL)
		return;
	memset(&pair, 0, sizeof pair);
	pair.a = a;
	pair.b = b;
	if ((m = make_buffer(e, CL_MEM_WRITE_ONLY, sizeof out, NULL)) != NULL) {
		CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
		CHECK_ERR(clSetKernelArg(k, 1, sizeof pair, &pair), CL_SUCCESS);
		CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &gws,
		    NULL, 0, NULL, NULL), CL_SUCCESS);
		memset(out, 0, sizeof out);
		CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0,
		    sizeof out, out, 0, NULL, NULL), CL_SUCCESS);
		for (i = 0; i < 16; i++)
			if (!CHECK(out[i] == a * i + b))
				break;
		clReleaseMemObject(m);
	}
	clReleaseKernel(k);
}

/* A program's binary fetched, made into a new program, built and run. */
static void
test_program_binary(struct env *e)
{
	static const char	 garbage[64] = "this is not a binary of any kind";
	struct fake_object	 fake;
	cl_program		 p, p2 = NULL;
	cl_program_binary_type	 bt = 99;
	cl_build_status		 bs = 0;
	const unsigned char	*cb;
	unsigned char		*bin = NULL, *bins[1];
	size_t			 bsize = 0, size = 0, glen = sizeof garbage;
	cl_int			 st = 99, err;

	if ((p = build_program(e, src_pb_struct, NULL)) == NULL)
		return;
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsize,
	    &bsize, &size), CL_SUCCESS);
	CHECK(size == sizeof bsize && bsize > 0);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_BINARIES, 0, NULL, &size),
	    CL_SUCCESS);
	CHECK(size == sizeof bins);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_BINARIES, 1, bins, NULL),
	    CL_INVALID_VALUE);
	if (bsize == 0 || (bin = calloc(1, bsize)) == NULL)
		goto out;
	bins[0] = bin;
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins,
	    NULL), CL_SUCCESS);
	cb = bin;
	p2 = clCreateProgramWithBinary(e->ctx, 1, &e->device, &bsize, &cb, &st,
	    &err);
	CHECK_ERR(err, CL_SUCCESS);
	CHECK_ERR(st, CL_SUCCESS);
	if (p2 == NULL)
		goto out;
	CHECK_ERR(clGetProgramBuildInfo(p2, e->device, CL_PROGRAM_BINARY_TYPE,
	    sizeof bt, &bt, NULL), CL_SUCCESS);
	CHECK(bt == CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
	CHECK_ERR(clGetProgramBuildInfo(p2, e->device, CL_PROGRAM_BUILD_STATUS,
	    sizeof bs, &bs, NULL), CL_SUCCESS);
	CHECK(bs == CL_BUILD_NONE);
	CHECK_ERR(clGetProgramInfo(p2, CL_PROGRAM_SOURCE, 0, NULL, &size),
	    CL_SUCCESS);
	CHECK(size == 1);
	CHECK_ERR(clBuildProgram(p2, 1, &e->device, NULL, NULL, NULL),
	    CL_SUCCESS);
	/* The same binary again, from the program made of it. */
	size = 0;
	CHECK_ERR(clGetProgramInfo(p2, CL_PROGRAM_BINARY_SIZES, sizeof size,
	    &size, NULL), CL_SUCCESS);
	CHECK(size > 0);
	{
		cl_kernel	 k = make_kernel(p2, "pb_run");
		cl_uint		 nargs = 0;

		if (k != NULL) {
			CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS,
			    sizeof nargs, &nargs, NULL), CL_SUCCESS);
			CHECK(nargs == 2);
			clReleaseKernel(k);
		}
	}

	/* Not a binary of this device; no bytes; no pointers. */
	cb = (const unsigned char *)garbage;
	st = 99;
	CHECK(clCreateProgramWithBinary(e->ctx, 1, &e->device, &glen, &cb,
	    &st, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_BINARY);
	CHECK_ERR(st, CL_INVALID_BINARY);
	glen = 0;
	CHECK(clCreateProgramWithBinary(e->ctx, 1, &e->device, &glen, &cb,
	    NULL, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clCreateProgramWithBinary(e->ctx, 1, &e->device, NULL, &cb,
	    NULL, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clCreateProgramWithBinary(e->ctx, 0, NULL, &bsize, &cb, NULL,
	    &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clCreateProgramWithBinary(NULL, 1, &e->device, &bsize, &cb,
	    NULL, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_CONTEXT);
	if (!is_pocl) {
		/* PoCL 3.1 reads through a device handle it never checks. */
		cl_device_id	fd = fake_handle(&fake, e->device);

		cb = bin;
		CHECK(clCreateProgramWithBinary(e->ctx, 1, &fd, &bsize, &cb,
		    NULL, &err) == NULL);
		CHECK_ERR(err, CL_INVALID_DEVICE);
	}
out:
	free(bin);
	if (p2 != NULL)
		clReleaseProgram(p2);
	clReleaseProgram(p);
}

/* A binary round trip gives the same results: a kernel without structs. */
static void
test_program_binary_run(struct env *e)
{
	cl_program		 p, p2 = NULL;
	const unsigned char	*cb;
	unsigned char		*bin = NULL;
	size_t			 bsize = 0;
	cl_int			 st = 99, err;

	if ((p = build_program(e, "__kernel void scale(__global int *o, int n)"
	    "{ int i = get_global_id(0); if (i < n) o[i] = 3 * i; }", NULL)) ==
	    NULL)
		return;
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsize,
	    &bsize, NULL), CL_SUCCESS);
	if (bsize > 0 && (bin = malloc(bsize)) != NULL &&
	    CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin,
	    &bin, NULL), CL_SUCCESS)) {
		cb = bin;
		p2 = clCreateProgramWithBinary(e->ctx, 1, &e->device, &bsize,
		    &cb, &st, &err);
		CHECK_ERR(err, CL_SUCCESS);
		if (p2 != NULL && CHECK_ERR(clBuildProgram(p2, 0, NULL, NULL,
		    NULL, NULL), CL_SUCCESS))
			run_scale(e, p2, 3);
	}
	free(bin);
	if (p2 != NULL)
		clReleaseProgram(p2);
	clReleaseProgram(p);
}

static atomic_int	link_called;

/* Counts calls of a link callback. */
static void CL_CALLBACK
link_notify(cl_program prog, void *user_data)
{
	(void)prog;
	(void)user_data;
	atomic_fetch_add(&link_called, 1);
}

/*
 * clCompileProgram with an in-memory header, clLinkProgram of two compiled
 * programs (a struct argument in the linked kernel), a library, and the
 * errors of both.
 */
static void
test_compile_link(struct env *e)
{
	static const char	*hdr =
	    "typedef struct { int a; char pad[9]; int b; } pb_pair;\n"
	    "int pb_mul(int x, int y);\n";
	static const char	*lib_src =
	    "#include \"pb/pair.h\"\nint pb_mul(int x, int y) { return x * y; }\n";
	static const char	*main_src =
	    "#include \"pb/pair.h\"\n"
	    "__kernel void pb_run(__global int *o, pb_pair s)\n"
	    "{ int i = get_global_id(0); o[i] = pb_mul(s.a, i) + s.b; }\n";
	static const char	*bad_src = "__kernel void z( { }";
	const char		*hname = "pb/pair.h", *s;
	cl_program		 h = NULL, a = NULL, b = NULL, l = NULL, lib = NULL;
	cl_program		 l2 = NULL, in[2], src_exe = NULL, bad = NULL;
	cl_context		 ctx2;
	cl_program_binary_type	 bt = 99;
	size_t			 nk = 0;
	cl_int			 err;

	s = hdr;
	h = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err);
	s = lib_src;
	a = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err);
	s = main_src;
	b = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err);
	if (!CHECK(h != NULL && a != NULL && b != NULL))
		goto out;
	CHECK_ERR(clCompileProgram(a, 1, &e->device, NULL, 1, &h, &hname, NULL,
	    NULL), CL_SUCCESS);
	CHECK_ERR(clCompileProgram(b, 0, NULL, "-DUNUSED=1", 1, &h, &hname,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clGetProgramBuildInfo(a, e->device, CL_PROGRAM_BINARY_TYPE,
	    sizeof bt, &bt, NULL), CL_SUCCESS);
	CHECK(bt == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
	/*
	 * Not an executable. PoCL 3.1 answers so only when its kernel cache
	 * is cold; warm, CL_SUCCESS and CL_INVALID_KERNEL_NAME.
	 */
	CHECK_ERR2(clGetProgramInfo(a, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk,
	    NULL), CL_INVALID_PROGRAM_EXECUTABLE, CL_SUCCESS);
	CHECK(clCreateKernel(b, "pb_run", &err) == NULL);
	CHECK_ERR2(err, CL_INVALID_PROGRAM_EXECUTABLE, CL_INVALID_KERNEL_NAME);

	in[0] = a;
	in[1] = b;
	atomic_store(&link_called, 0);
	l = clLinkProgram(e->ctx, 1, &e->device, NULL, 2, in, link_notify,
	    NULL, &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (l != NULL) {
		CHECK(wait_flag(&link_called, 1, 10000));
		CHECK_ERR(clGetProgramBuildInfo(l, e->device,
		    CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt, NULL), CL_SUCCESS);
		CHECK(bt == CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
		CHECK_ERR(clGetProgramInfo(l, CL_PROGRAM_NUM_KERNELS,
		    sizeof nk, &nk, NULL), CL_SUCCESS);
		CHECK(nk == 1);
		run_pb(e, l, 5, 7);
	}

	/* A library of a, then linked with b. */
	lib = clLinkProgram(e->ctx, 0, NULL, "-create-library", 1, &a, NULL,
	    NULL, &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (lib != NULL) {
		CHECK_ERR(clGetProgramBuildInfo(lib, e->device,
		    CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt, NULL), CL_SUCCESS);
		CHECK(bt == CL_PROGRAM_BINARY_TYPE_LIBRARY);
		in[0] = lib;
		l2 = clLinkProgram(e->ctx, 0, NULL, NULL, 2, in, NULL, NULL,
		    &err);
		CHECK_ERR(err, CL_SUCCESS);
		if (l2 != NULL)
			run_pb(e, l2, -3, 11);
	}

	/* Link errors: unresolved, an executable input, options, none. */
	CHECK(clLinkProgram(e->ctx, 1, &e->device, NULL, 1, &b, NULL, NULL,
	    &err) == NULL);
	CHECK_ERR(err, CL_LINK_PROGRAM_FAILURE);
	if ((src_exe = build_program(e, src_pb_struct, NULL)) != NULL) {
		CHECK(clLinkProgram(e->ctx, 1, &e->device, NULL, 1, &src_exe,
		    NULL, NULL, &err) == NULL);
		CHECK_ERR(err, CL_INVALID_OPERATION);
	}
	in[0] = a;
	CHECK(clLinkProgram(e->ctx, 1, &e->device, "-bogus-option", 2, in,
	    NULL, NULL, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_LINKER_OPTIONS);
	CHECK(clLinkProgram(e->ctx, 1, &e->device, NULL, 0, NULL, NULL, NULL,
	    &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clLinkProgram(e->ctx, 1, &e->device, NULL, 2, in, NULL, &err,
	    &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clLinkProgram(NULL, 1, &e->device, NULL, 2, in, NULL, NULL,
	    &err) == NULL);
	CHECK_ERR(err, CL_INVALID_CONTEXT);
	/*
	 * An input of another context is no valid program of the link
	 * (PoCL 3.1 links it unchecked).
	 */
	if (!is_pocl && (ctx2 = clCreateContext(NULL, 1, &e->device, NULL,
	    NULL, &err)) != NULL) {
		CHECK(clLinkProgram(ctx2, 1, &e->device, NULL, 2, in, NULL,
		    NULL, &err) == NULL);
		CHECK_ERR(err, CL_INVALID_PROGRAM);
		clReleaseContext(ctx2);
	}

	/* Compile errors. */
	s = bad_src;
	if ((bad = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err)) !=
	    NULL)
		CHECK_ERR(clCompileProgram(bad, 1, &e->device, NULL, 0, NULL,
		    NULL, NULL, NULL), CL_COMPILE_PROGRAM_FAILURE);
	CHECK_ERR(clCompileProgram(a, 1, &e->device, "-bogus-option", 0, NULL,
	    NULL, NULL, NULL), CL_INVALID_COMPILER_OPTIONS);
	/* PoCL 3.1 ignores input_headers without num_input_headers. */
	CHECK_ERR2(clCompileProgram(a, 1, &e->device, NULL, 0, &h, NULL, NULL,
	    NULL), CL_INVALID_VALUE, CL_COMPILE_PROGRAM_FAILURE);
	CHECK_ERR(clCompileProgram(NULL, 1, &e->device, NULL, 0, NULL, NULL,
	    NULL, NULL), CL_INVALID_PROGRAM);
	if (!is_pocl)	/* PoCL 3.1 reads header_include_names unchecked */
		CHECK_ERR(clCompileProgram(a, 1, &e->device, NULL, 1, &h, NULL,
		    NULL, NULL), CL_INVALID_VALUE);
out:
	release_all(NULL, 0, NULL, bad);
	release_all(NULL, 0, NULL, src_exe);
	release_all(NULL, 0, NULL, l2);
	release_all(NULL, 0, NULL, lib);
	release_all(NULL, 0, NULL, l);
	release_all(NULL, 0, NULL, b);
	release_all(NULL, 0, NULL, a);
	release_all(NULL, 0, NULL, h);
}

/* A compiled program with binaries: compile from binary is refused. */
static void
test_compile_binary(struct env *e)
{
	cl_program		 p, p2 = NULL;
	const unsigned char	*cb;
	unsigned char		*bin = NULL;
	size_t			 bsize = 0;
	cl_int			 err;

	if ((p = build_program(e, src_pb_struct, NULL)) == NULL)
		return;
	clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsize, &bsize,
	    NULL);
	if (bsize > 0 && (bin = malloc(bsize)) != NULL &&
	    clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) ==
	    CL_SUCCESS) {
		cb = bin;
		p2 = clCreateProgramWithBinary(e->ctx, 1, &e->device, &bsize,
		    &cb, NULL, &err);
		if (CHECK_ERR(err, CL_SUCCESS))
			CHECK_ERR(clCompileProgram(p2, 1, &e->device, NULL, 0,
			    NULL, NULL, NULL, NULL), CL_INVALID_OPERATION);
	}
	free(bin);
	release_all(NULL, 0, NULL, p2);
	clReleaseProgram(p);
}

/* clCloneKernel: the copy has the arguments set on the source. */
static void
test_clone_kernel(struct env *e)
{
	cl_program	 p;
	cl_kernel	 k, c = NULL;
	cl_mem		 m = NULL;
	int		 out[64], n = 64, i;
	size_t		 gws = 64;
	cl_int		 err;

	if ((p = build_program(e, "__kernel void scale(__global int *o, int n)"
	    "{ int i = get_global_id(0); if (i < n) o[i] = 5 * i; }", NULL)) ==
	    NULL)
		return;
	if ((k = make_kernel(p, "scale")) == NULL ||
	    (m = make_buffer(e, CL_MEM_WRITE_ONLY, sizeof out, NULL)) == NULL)
		goto out;
	CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(k, 1, sizeof n, &n), CL_SUCCESS);
	c = clCloneKernel(k, &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (c == NULL)
		goto out;
	/* The source's later changes do not reach the clone. */
	n = 0;
	CHECK_ERR(clSetKernelArg(k, 1, sizeof n, &n), CL_SUCCESS);
	clReleaseKernel(k);
	k = NULL;
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, c, 1, NULL, &gws, NULL, 0,
	    NULL, NULL), CL_SUCCESS);
	memset(out, 0, sizeof out);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof out, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (i = 0; i < 64; i++)
		if (!CHECK(out[i] == 5 * i))
			break;
	CHECK(clCloneKernel(NULL, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_KERNEL);
out:
	if (c != NULL)
		clReleaseKernel(c);
	release_all(&m, 1, k, p);
}

/* An empty source is a program: it builds and compiles, to no kernel. */
static void
test_program_empty(struct env *e)
{
	const char	*s = "";
	cl_program	 p;
	size_t		 nk = 99;
	cl_int		 err;

	p = clCreateProgramWithSource(e->ctx, 1, &s, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return;
	CHECK_ERR(clCompileProgram(p, 1, &e->device, NULL, 0, NULL, NULL, NULL,
	    NULL), CL_SUCCESS);
	CHECK_ERR(clBuildProgram(p, 1, &e->device, NULL, NULL, NULL),
	    CL_SUCCESS);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk,
	    NULL), CL_SUCCESS);
	CHECK(nk == 0);
	clReleaseProgram(p);
}

/* Built-in kernels, IL, release callbacks, timers, SVM and sub-group info. */
static void
test_program_misc(struct env *e)
{
	static const unsigned char	 spirv[20] = { 0x03, 0x02, 0x23, 0x07 };
	cl_program	 p, bp;
	cl_kernel	 k;
	cl_ulong	 dt = 0, ht = 0, res = 0;
	cl_bool		 yes = CL_TRUE, no = CL_FALSE;
	char		 names[1024] = "", il[64] = "";
	size_t		 size = 0, out = 0, one = 1;
	cl_uint		 nsg = 0;
	int		 v = 1;
	cl_int		 err;

	CHECK(clCreateProgramWithBuiltInKernels(e->ctx, 1, &e->device,
	    "vcl_no_such_builtin", &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clCreateProgramWithBuiltInKernels(e->ctx, 1, &e->device, NULL,
	    &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clCreateProgramWithBuiltInKernels(e->ctx, 0, NULL, "x", &err) ==
	    NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clCreateProgramWithBuiltInKernels(NULL, 1, &e->device, "x",
	    &err) == NULL);
	CHECK_ERR(err, CL_INVALID_CONTEXT);
	clGetDeviceInfo(e->device, CL_DEVICE_BUILT_IN_KERNELS, sizeof names,
	    names, NULL);
	if (names[0] != '\0') {
		char	*semi = strchr(names, ';');

		if (semi != NULL)
			*semi = '\0';
		bp = clCreateProgramWithBuiltInKernels(e->ctx, 1, &e->device,
		    names, &err);
		CHECK_ERR(err, CL_SUCCESS);
		if (bp != NULL)
			clReleaseProgram(bp);
	}

	/* IL: PoCL 3.1 CPU has none and answers CL_INVALID_VALUE. */
	clGetDeviceInfo(e->device, CL_DEVICE_IL_VERSION, sizeof il, il, NULL);
	CHECK(clCreateProgramWithIL(e->ctx, NULL, 0, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	if (il[0] == '\0') {
		CHECK(clCreateProgramWithIL(e->ctx, spirv, sizeof spirv,
		    &err) == NULL);
		CHECK_ERR2(err, CL_INVALID_OPERATION, CL_INVALID_VALUE);
	}

	if ((p = build_program(e, "__kernel void k(__global int *o)"
	    "{ o[0] = 1; }", NULL)) == NULL)
		return;
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, &size),
	    CL_SUCCESS);
	CHECK(size == 0);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT,
	    sizeof yes, &yes, NULL), CL_SUCCESS);
	CHECK(yes == CL_FALSE);
	CHECK_ERR2(clSetProgramReleaseCallback(p, link_notify, NULL),
	    CL_INVALID_OPERATION, CL_SUCCESS);
	CHECK_ERR(clSetProgramReleaseCallback(NULL, link_notify, NULL),
	    CL_INVALID_PROGRAM);
	if (!is_pocl)	/* PoCL 3.1 asserts on a program not from IL */
		CHECK_ERR(clSetProgramSpecializationConstant(p, 0, sizeof v,
		    &v), CL_INVALID_PROGRAM);
	CHECK_ERR(clUnloadPlatformCompiler(e->platform), CL_SUCCESS);

	/* Timers: none where the platform's host timer resolution is 0. */
	clGetPlatformInfo(e->platform, CL_PLATFORM_HOST_TIMER_RESOLUTION,
	    sizeof res, &res, NULL);
	if (res == 0) {
		CHECK_ERR(clGetDeviceAndHostTimer(e->device, &dt, &ht),
		    CL_INVALID_OPERATION);
		CHECK_ERR(clGetHostTimer(e->device, &ht), CL_INVALID_OPERATION);
		/* Both codes apply; a platform without timers says this. */
		CHECK_ERR(clGetHostTimer(e->device, NULL),
		    CL_INVALID_OPERATION);
		CHECK_ERR(clGetDeviceAndHostTimer(e->device, NULL, &ht),
		    CL_INVALID_OPERATION);
	}
	CHECK_ERR(clGetHostTimer(NULL, &ht), CL_INVALID_DEVICE);

	if ((k = make_kernel(p, "k")) != NULL) {
		/* SVM: PoCL has it; VCL does not (CL_INVALID_OPERATION). */
		CHECK_ERR2(clSetKernelExecInfo(k,
		    CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof no, &no),
		    CL_SUCCESS, CL_SUCCESS);
		CHECK_ERR(clSetKernelExecInfo(NULL,
		    CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof no, &no),
		    CL_INVALID_KERNEL);
		/*
		 * PoCL deviation: PoCL 3.1 accepts any param_name, size and
		 * value; the spec (and VCL) say CL_INVALID_VALUE.
		 */
		CHECK_ERR2(clSetKernelExecInfo(k, 0x1234, sizeof no, &no),
		    CL_INVALID_VALUE, is_pocl ? CL_SUCCESS : CL_INVALID_VALUE);
		CHECK_ERR2(clSetKernelExecInfo(k,
		    CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, 0, NULL),
		    CL_INVALID_VALUE, is_pocl ? CL_SUCCESS : CL_INVALID_VALUE);
		clGetDeviceInfo(e->device, CL_DEVICE_MAX_NUM_SUB_GROUPS,
		    sizeof nsg, &nsg, NULL);
		if (nsg == 0)
			CHECK_ERR(clGetKernelSubGroupInfo(k, e->device,
			    CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof one,
			    &one, sizeof out, &out, NULL), CL_INVALID_OPERATION);
		CHECK_ERR(clGetKernelSubGroupInfo(NULL, e->device,
		    CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, NULL, sizeof out, &out,
		    NULL), CL_INVALID_KERNEL);
		clReleaseKernel(k);
	}
	clReleaseProgram(p);
}

/* The tests, in the order they run. */
/*
 * A command gated by a user event must not hold up the rest of the
 * program: a build, another queue's commands and a finish on it all
 * complete before the event is set (a remoting layer that ordered every
 * call behind the gated command would deadlock here).
 */
static void
test_user_event_other_work(struct env *e)
{
	static const char src[] = "__kernel void k(__global int *a) "
	    "{ a[0] = 7; }";
	cl_command_queue	 q2;
	cl_event		 u, ev = NULL;
	cl_program		 p;
	cl_mem			 m1, m2;
	int			 in[16], out[16], i;
	cl_int			 err;

	for (i = 0; i < 16; i++)
		in[i] = i + 1;
	q2 = clCreateCommandQueueWithProperties(e->ctx, e->device, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return;
	u = clCreateUserEvent(e->ctx, &err);
	m1 = make_buffer(e, CL_MEM_READ_WRITE, sizeof in, NULL);
	m2 = make_buffer(e, CL_MEM_READ_WRITE, sizeof in, NULL);
	if (!CHECK_ERR(err, CL_SUCCESS) || m1 == NULL || m2 == NULL)
		goto out;
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m1, CL_FALSE, 0, sizeof in,
	    in, 1, &u, &ev), CL_SUCCESS);
	CHECK_ERR(clFlush(e->queue), CL_SUCCESS);
	if ((p = build_program(e, src, NULL)) != NULL)
		clReleaseProgram(p);
	CHECK_ERR(clEnqueueWriteBuffer(q2, m2, CL_TRUE, 0, sizeof in, in, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clFinish(q2), CL_SUCCESS);
	memset(out, 0, sizeof out);
	CHECK_ERR(clEnqueueReadBuffer(q2, m2, CL_TRUE, 0, sizeof out, out, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(in, out, sizeof in) == 0);
	CHECK_ERR(clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
	if (ev != NULL)
		CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
	memset(out, 0, sizeof out);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m1, CL_TRUE, 0, sizeof out,
	    out, 0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(in, out, sizeof in) == 0);
out:
	if (ev != NULL)
		clReleaseEvent(ev);
	if (u != NULL)
		clReleaseEvent(u);
	if (m1 != NULL)
		clReleaseMemObject(m1);
	if (m2 != NULL)
		clReleaseMemObject(m2);
	clReleaseCommandQueue(q2);
}

/* The device's sub-buffer origin alignment, in bytes. */
static size_t
base_align(struct env *e)
{
	cl_uint	 bits = 0;

	if (clGetDeviceInfo(e->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
	    sizeof bits, &bits, NULL) != CL_SUCCESS || bits < 8)
		return (128);
	return (bits / 8);
}

/* Makes a sub-buffer of a region; errors come back in *err. */
static cl_mem
sub_of(cl_mem parent, cl_mem_flags flags, size_t origin, size_t size,
    cl_int *err)
{
	cl_buffer_region	 r = { origin, size };

	return (clCreateSubBuffer(parent, flags, CL_BUFFER_CREATE_TYPE_REGION,
	    &r, err));
}

/* clCreateSubBuffer: info, shared bytes with the parent, flags, errors. */
static void
test_sub_buffer(struct env *e)
{
	cl_mem			 p = NULL, s = NULL, s2 = NULL, ro = NULL;
	cl_mem			 na = NULL, u = NULL, us = NULL, assoc = NULL;
	cl_buffer_region	 r;
	cl_mem_flags		 flags = 0;
	unsigned char		 host[1024], *buf = NULL, *back = NULL;
	size_t			 al = base_align(e), psize, i, v = 0;
	cl_uint			 refs = 0, refs2 = 0;
	void			*hp = NULL;
	cl_int			 err;

	psize = 8 * al;
	if ((buf = malloc(psize)) == NULL || (back = malloc(psize)) == NULL)
		goto out;
	for (i = 0; i < psize; i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	if ((p = make_buffer(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    psize, buf)) == NULL)
		goto out;
	CHECK_ERR(clGetMemObjectInfo(p, CL_MEM_REFERENCE_COUNT, sizeof refs,
	    &refs, NULL), CL_SUCCESS);
	s = sub_of(p, 0, 2 * al, 3 * al, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		goto out;
	CHECK_ERR(clGetMemObjectInfo(p, CL_MEM_REFERENCE_COUNT, sizeof refs2,
	    &refs2, NULL), CL_SUCCESS);
	CHECK(refs2 == refs + 1);
	CHECK_ERR(clGetMemObjectInfo(s, CL_MEM_SIZE, sizeof v, &v, NULL),
	    CL_SUCCESS);
	CHECK(v == 3 * al);
	CHECK_ERR(clGetMemObjectInfo(s, CL_MEM_OFFSET, sizeof v, &v, NULL),
	    CL_SUCCESS);
	CHECK(v == 2 * al);
	CHECK_ERR(clGetMemObjectInfo(s, CL_MEM_ASSOCIATED_MEMOBJECT,
	    sizeof assoc, &assoc, NULL), CL_SUCCESS);
	CHECK(assoc == p);
	CHECK_ERR(clGetMemObjectInfo(s, CL_MEM_FLAGS, sizeof flags, &flags,
	    NULL), CL_SUCCESS);
	/* Access inherited; host pointer flags too (spec: "inherited"). */
	CHECK(flags == (CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR));

	/* The sub-buffer's bytes are the parent's, both ways. */
	CHECK_ERR(clEnqueueReadBuffer(e->queue, s, CL_TRUE, 0, 3 * al, back,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(back, buf + 2 * al, 3 * al) == 0);
	memset(back, 0xa5, al);
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, s, CL_TRUE, al, al, back,
	    0, NULL, NULL), CL_SUCCESS);
	memset(buf + 3 * al, 0xa5, al);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, p, CL_TRUE, 0, psize, back,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(back, buf, psize) == 0);
	CHECK_ERR(clEnqueueCopyBuffer(e->queue, p, s, 0, 0, al, 0, NULL,
	    NULL), CL_SUCCESS);
	memcpy(buf + 2 * al, buf, al);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, p, CL_TRUE, 0, psize, back,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(back, buf, psize) == 0);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, s, CL_TRUE, 0, 3 * al + 1,
	    back, 0, NULL, NULL), CL_INVALID_VALUE);

	/* Errors. */
	r.origin = 0;
	r.size = al;
	CHECK(clCreateSubBuffer(p, 0, 0x7777, &r, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clCreateSubBuffer(p, 0, CL_BUFFER_CREATE_TYPE_REGION, NULL,
	    &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clCreateSubBuffer(NULL, 0, CL_BUFFER_CREATE_TYPE_REGION, &r,
	    &err) == NULL);
	CHECK_ERR(err, CL_INVALID_MEM_OBJECT);
	CHECK(sub_of(p, 0, 0, 0, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_BUFFER_SIZE);
	CHECK(sub_of(p, 0, 7 * al, 2 * al, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(sub_of(p, 0, psize, 1, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	/* PoCL 3.1 wraps origin + size around and succeeds. */
	if (!is_pocl) {
		CHECK(sub_of(p, 0, SIZE_MAX - al + 1, 2 * al, &err) == NULL);
		CHECK_ERR(err, CL_INVALID_VALUE);
	}
	CHECK(sub_of(p, 0, al / 2, al, &err) == NULL);
	CHECK_ERR(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);
	CHECK(sub_of(p, CL_MEM_USE_HOST_PTR, 0, al, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	/* PoCL 3.1 takes two access flags, and unknown bits. */
	if (!is_pocl) {
		CHECK(sub_of(p, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 0, al,
		    &err) == NULL);
		CHECK_ERR(err, CL_INVALID_VALUE);
		CHECK(sub_of(p, CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS,
		    0, al, &err) == NULL);
		CHECK_ERR(err, CL_INVALID_VALUE);
		CHECK(sub_of(p, (cl_mem_flags)1 << 40, 0, al, &err) == NULL);
		CHECK_ERR(err, CL_INVALID_VALUE);
	}
	/* A sub-buffer of a sub-buffer: not a buffer (spec and PoCL). */
	CHECK(sub_of(s, 0, 0, al, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_MEM_OBJECT);

	/* Access flags: inherited, narrowed, never widened. */
	s2 = sub_of(p, CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY, 0, al, &err);
	CHECK_ERR(err, CL_SUCCESS);
	if (s2 != NULL) {
		CHECK_ERR(clGetMemObjectInfo(s2, CL_MEM_FLAGS, sizeof flags,
		    &flags, NULL), CL_SUCCESS);
		CHECK(flags == (CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY |
		    CL_MEM_COPY_HOST_PTR));
		CHECK_ERR(clEnqueueWriteBuffer(e->queue, s2, CL_TRUE, 0, 4,
		    back, 0, NULL, NULL), CL_INVALID_OPERATION);
	}
	if ((ro = make_buffer(e, CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS,
	    psize, NULL)) != NULL) {
		CHECK(sub_of(ro, CL_MEM_READ_WRITE, 0, al, &err) == NULL);
		CHECK_ERR(err, CL_INVALID_VALUE);
		CHECK(sub_of(ro, CL_MEM_WRITE_ONLY, 0, al, &err) == NULL);
		CHECK_ERR(err, CL_INVALID_VALUE);
		CHECK(sub_of(ro, CL_MEM_HOST_READ_ONLY, 0, al, &err) == NULL);
		CHECK_ERR(err, CL_INVALID_VALUE);
		na = sub_of(ro, 0, al, al, &err);
		CHECK_ERR(err, CL_SUCCESS);
		if (na != NULL) {
			CHECK_ERR(clGetMemObjectInfo(na, CL_MEM_FLAGS,
			    sizeof flags, &flags, NULL), CL_SUCCESS);
			CHECK(flags == (CL_MEM_READ_ONLY |
			    CL_MEM_HOST_NO_ACCESS));
			CHECK_ERR(clEnqueueReadBuffer(e->queue, na, CL_TRUE,
			    0, 4, back, 0, NULL, NULL), CL_INVALID_OPERATION);
		}
	}

	/* A host pointer parent: the sub-buffer's pointer is inside it. */
	if (al <= sizeof host / 2 && (u = make_buffer(e, CL_MEM_USE_HOST_PTR |
	    CL_MEM_READ_WRITE, sizeof host, host)) != NULL) {
		us = sub_of(u, 0, al, al, &err);
		CHECK_ERR(err, CL_SUCCESS);
		if (us != NULL) {
			CHECK_ERR(clGetMemObjectInfo(us, CL_MEM_HOST_PTR,
			    sizeof hp, &hp, NULL), CL_SUCCESS);
			CHECK(hp == host + al);
			CHECK_ERR(clGetMemObjectInfo(us, CL_MEM_FLAGS,
			    sizeof flags, &flags, NULL), CL_SUCCESS);
			CHECK(flags == (CL_MEM_USE_HOST_PTR |
			    CL_MEM_READ_WRITE));
		}
	}

	/* The sub-buffer keeps its parent: released first, still usable. */
	CHECK_ERR(clReleaseMemObject(p), CL_SUCCESS);
	p = NULL;
	CHECK_ERR(clEnqueueReadBuffer(e->queue, s, CL_TRUE, 0, 3 * al, back,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(back, buf + 2 * al, 3 * al) == 0);
out:
	{
		cl_mem	all[] = { s, s2, na, us, p, ro, u };

		release_all(all, NITEMS(all), NULL, NULL);
	}
	free(buf);
	free(back);
}

/* Byte (x, y, z) of a rectangle: origin plus pitches. */
static size_t
rect_at(const size_t *o, size_t x, size_t y, size_t z, size_t row,
    size_t slice)
{
	return ((o[2] + z) * slice + (o[1] + y) * row + o[0] + x);
}

/* Copies a region between two rectangles of host memory (the model). */
static void
rect_copy(unsigned char *dst, const size_t *dor, size_t drow, size_t dslice,
    const unsigned char *src, const size_t *sor, size_t srow, size_t sslice,
    const size_t *region)
{
	size_t	 x, y, z;

	for (z = 0; z < region[2]; z++)
		for (y = 0; y < region[1]; y++)
			for (x = 0; x < region[0]; x++)
				dst[rect_at(dor, x, y, z, drow, dslice)] =
				    src[rect_at(sor, x, y, z, srow, sslice)];
}

/* clEnqueue{Read,Write,Copy}BufferRect: results against a model, errors. */
static void
test_buffer_rect(struct env *e)
{
	cl_mem		 a = NULL, b = NULL, wo = NULL;
	cl_event	 ev = NULL;
	unsigned char	 model[1024], modelb[1024], host[512], got[1024];
	const size_t	 bo[3] = { 2, 1, 1 }, ho[3] = { 1, 2, 0 };
	const size_t	 reg[3] = { 5, 3, 2 }, zero[3] = { 0, 0, 0 };
	size_t		 r[3], o2[3], i;
	cl_int		 err;

	for (i = 0; i < sizeof model; i++)
		model[i] = (unsigned char)i;
	for (i = 0; i < sizeof host; i++)
		host[i] = (unsigned char)(200 + i);
	memset(got, 0, sizeof got);	/* b starts as zeros */
	if ((a = make_buffer(e, CL_MEM_COPY_HOST_PTR, sizeof model,
	    model)) == NULL || (b = make_buffer(e, CL_MEM_COPY_HOST_PTR,
	    sizeof got, got)) == NULL)
		goto out;

	/* The buffer as 16-byte rows, 256-byte slices; host 8 and 64. */
	CHECK_ERR(clEnqueueWriteBufferRect(e->queue, a, CL_TRUE, bo, ho, reg,
	    16, 256, 8, 64, host, 0, NULL, NULL), CL_SUCCESS);
	rect_copy(model, bo, 16, 256, host, ho, 8, 64, reg);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, a, CL_TRUE, 0, sizeof got,
	    got, 0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(got, model, sizeof model) == 0);

	/* Read back into another layout; bytes outside the region stay. */
	memset(got, 0x11, sizeof got);
	memset(modelb, 0x11, sizeof modelb);
	o2[0] = 3; o2[1] = 0; o2[2] = 1;
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_FALSE, bo, o2, reg,
	    16, 256, 10, 40, got, 0, NULL, &ev), CL_SUCCESS);
	if (ev != NULL) {
		CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
		CHECK(event_status(ev) == CL_COMPLETE);
		clReleaseEvent(ev);
		ev = NULL;
	}
	rect_copy(modelb, o2, 10, 40, model, bo, 16, 256, reg);
	CHECK(memcmp(got, modelb, sizeof got) == 0);

	/* Gated by a user event: nothing moves until it is set. */
	{
		cl_event	 u, rev = NULL;
		unsigned char	 early[64];

		u = clCreateUserEvent(e->ctx, &err);
		if (CHECK_ERR(err, CL_SUCCESS)) {
			memset(early, 0x5a, sizeof early);
			CHECK_ERR(clEnqueueWriteBufferRect(e->queue, a, CL_FALSE,
			    zero, zero, reg, 16, 256, 0, 0, early, 1, &u,
			    NULL), CL_SUCCESS);
			memset(got, 0, sizeof got);
			/* In order: behind the write, with no wait list. */
			CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_FALSE,
			    zero, zero, reg, 16, 256, 0, 0, got, 0, NULL, &rev),
			    CL_SUCCESS);
			CHECK(rev == NULL || event_status(rev) != CL_COMPLETE);
			CHECK_ERR(clSetUserEventStatus(u, CL_COMPLETE),
			    CL_SUCCESS);
			if (rev != NULL) {
				CHECK_ERR(clWaitForEvents(1, &rev), CL_SUCCESS);
				clReleaseEvent(rev);
			}
			CHECK(memcmp(got, early, 30) == 0);
			rect_copy(model, zero, 16, 256, early, zero, 5, 15,
			    reg);
			clReleaseEvent(u);
		}
	}

	/* Pitches 0 are computed: tight rows and slices. */
	memset(got, 0, sizeof got);
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, zero, zero,
	    reg, 0, 0, 0, 0, got, 0, NULL, NULL), CL_SUCCESS);
	memset(modelb, 0, sizeof modelb);
	rect_copy(modelb, zero, 5, 15, model, zero, 5, 15, reg);
	CHECK(memcmp(got, modelb, sizeof got) == 0);

	/* Copy: to another buffer and inside one, disjoint. */
	memset(modelb, 0, sizeof modelb);
	r[0] = 4; r[1] = 4; r[2] = 3;
	o2[0] = 8; o2[1] = 8; o2[2] = 0;
	CHECK_ERR(clEnqueueCopyBufferRect(e->queue, a, b, bo, o2, r, 16, 256,
	    32, 256, 0, NULL, NULL), CL_SUCCESS);
	rect_copy(modelb, o2, 32, 256, model, bo, 16, 256, r);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, b, CL_TRUE, 0, sizeof got,
	    got, 0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(got, modelb, sizeof got) == 0);
	o2[0] = 10; o2[1] = 0; o2[2] = 0;
	CHECK_ERR(clEnqueueCopyBufferRect(e->queue, a, a, zero, o2, r, 16,
	    256, 16, 256, 0, NULL, NULL), CL_SUCCESS);
	rect_copy(model, o2, 16, 256, model, zero, 16, 256, r);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, a, CL_TRUE, 0, sizeof got,
	    got, 0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(got, model, sizeof got) == 0);

	/* Overlap in one buffer. */
	o2[0] = 2; o2[1] = 1; o2[2] = 0;
	CHECK_ERR(clEnqueueCopyBufferRect(e->queue, a, a, zero, o2, r, 16,
	    256, 16, 256, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
	o2[0] = 0; o2[1] = 0; o2[2] = 0;
	CHECK_ERR(clEnqueueCopyBufferRect(e->queue, a, a, zero, o2, r, 16,
	    256, 16, 256, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
	/* Same buffer, different pitches. */
	o2[0] = 0; o2[1] = 0; o2[2] = 1;
	CHECK_ERR(clEnqueueCopyBufferRect(e->queue, a, a, zero, o2, r, 16,
	    256, 32, 256, 0, NULL, NULL), CL_INVALID_VALUE);

	/* Pitches and bounds. */
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, bo, ho, reg,
	    4, 256, 8, 64, got, 0, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, bo, ho, reg,
	    16, 40, 8, 64, got, 0, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, bo, ho, reg,
	    16, 250, 8, 64, got, 0, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, bo, ho, reg,
	    16, 256, 4, 64, got, 0, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueWriteBufferRect(e->queue, a, CL_TRUE, bo, ho, reg,
	    16, 256, 8, 60, host, 0, NULL, NULL), CL_INVALID_VALUE);
	o2[0] = 0; o2[1] = 0; o2[2] = 3;
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, o2, zero, reg,
	    16, 256, 0, 0, got, 0, NULL, NULL), CL_INVALID_VALUE);
	o2[0] = 12; o2[1] = 15; o2[2] = 3;
	CHECK_ERR(clEnqueueWriteBufferRect(e->queue, a, CL_TRUE, o2, zero,
	    reg, 16, 256, 0, 0, host, 0, NULL, NULL), CL_INVALID_VALUE);
	o2[0] = SIZE_MAX - 2; o2[1] = 0; o2[2] = 0;
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, o2, zero, reg,
	    16, 256, 0, 0, got, 0, NULL, NULL), CL_INVALID_VALUE);
	o2[0] = 0; o2[1] = SIZE_MAX / 16; o2[2] = 0;
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, o2, zero, reg,
	    16, 0, 0, 0, got, 0, NULL, NULL), CL_INVALID_VALUE);
	r[0] = 4; r[1] = 0; r[2] = 1;
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, zero, zero, r,
	    0, 0, 0, 0, got, 0, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, zero, zero,
	    reg, 0, 0, 0, 0, NULL, 0, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, a, CL_TRUE, NULL, zero,
	    reg, 0, 0, 0, 0, got, 0, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadBufferRect(e->queue, NULL, CL_TRUE, zero, zero,
	    reg, 0, 0, 0, 0, got, 0, NULL, NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clEnqueueWriteBufferRect(NULL, a, CL_TRUE, zero, zero,
	    reg, 0, 0, 0, 0, host, 0, NULL, NULL), CL_INVALID_COMMAND_QUEUE);
	CHECK_ERR(clEnqueueWriteBufferRect(e->queue, a, CL_TRUE, zero, zero,
	    reg, 0, 0, 0, 0, host, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
	r[0] = 4; r[1] = 4; r[2] = 5;
	CHECK_ERR(clEnqueueCopyBufferRect(e->queue, a, b, zero, zero, r, 16,
	    256, 16, 256, 0, NULL, NULL), CL_INVALID_VALUE);
	/* PoCL 3.1 dereferences a NULL source or destination. */
	if (!is_pocl) {
		CHECK_ERR(clEnqueueCopyBufferRect(e->queue, a, NULL, zero,
		    zero, reg, 0, 0, 0, 0, 0, NULL, NULL),
		    CL_INVALID_MEM_OBJECT);
		CHECK_ERR(clEnqueueCopyBufferRect(e->queue, NULL, b, zero,
		    zero, reg, 0, 0, 0, 0, 0, NULL, NULL),
		    CL_INVALID_MEM_OBJECT);
	}
	if ((wo = make_buffer(e, CL_MEM_HOST_WRITE_ONLY, 64, NULL)) != NULL) {
		CHECK_ERR(clEnqueueReadBufferRect(e->queue, wo, CL_TRUE, zero,
		    zero, reg, 0, 0, 0, 0, got, 0, NULL, NULL),
		    CL_INVALID_OPERATION);
		CHECK_ERR(clEnqueueWriteBufferRect(e->queue, wo, CL_TRUE, zero,
		    zero, reg, 0, 0, 0, 0, host, 0, NULL, NULL), CL_SUCCESS);
	}
out:
	{
		cl_mem	all[] = { a, b, wo };

		release_all(all, NITEMS(all), NULL, NULL);
	}
}

/* clEnqueueMigrateMemObjects: bytes kept, the event's type, errors. */
static void
test_migrate_mem(struct env *e)
{
	cl_mem		 m[2] = { NULL, NULL }, bad[2], other = NULL;
	cl_context	 ctx2 = NULL;
	cl_event	 ev = NULL;
	cl_command_type	 type = 0;
	int		 src[64], got[64];
	size_t		 i;
	cl_int		 err;

	for (i = 0; i < NITEMS(src); i++)
		src[i] = (int)(i * 3);
	if ((m[0] = make_buffer(e, CL_MEM_COPY_HOST_PTR, sizeof src,
	    src)) == NULL || (m[1] = make_buffer(e, CL_MEM_READ_WRITE,
	    sizeof src, NULL)) == NULL)
		goto out;
	err = clEnqueueMigrateMemObjects(e->queue, 2, m, 0, 0, NULL, &ev);
	CHECK_ERR(err, CL_SUCCESS);
	if (err == CL_SUCCESS) {
		CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
		CHECK_ERR(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE,
		    sizeof type, &type, NULL), CL_SUCCESS);
		CHECK(type == CL_COMMAND_MIGRATE_MEM_OBJECTS);
		clReleaseEvent(ev);
	}
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m[0], CL_TRUE, 0, sizeof got,
	    got, 0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(got, src, sizeof src) == 0);
	CHECK_ERR(clEnqueueMigrateMemObjects(e->queue, 1, m,
	    CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m[0], CL_TRUE, 0, sizeof got,
	    got, 0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(got, src, sizeof src) == 0);
	CHECK_ERR(clEnqueueMigrateMemObjects(e->queue, 1, &m[1],
	    CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, NULL),
	    CL_SUCCESS);
	CHECK_ERR(clEnqueueWriteBuffer(e->queue, m[1], CL_TRUE, 0, sizeof src,
	    src, 0, NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m[1], CL_TRUE, 0, sizeof got,
	    got, 0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(got, src, sizeof src) == 0);

	CHECK_ERR(clEnqueueMigrateMemObjects(e->queue, 0, m, 0, 0, NULL,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueMigrateMemObjects(e->queue, 1, NULL, 0, 0, NULL,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueMigrateMemObjects(e->queue, 1, m, 0x100, 0, NULL,
	    NULL), CL_INVALID_VALUE);
	bad[0] = m[0];
	bad[1] = NULL;
	CHECK_ERR(clEnqueueMigrateMemObjects(e->queue, 2, bad, 0, 0, NULL,
	    NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clEnqueueMigrateMemObjects(NULL, 1, m, 0, 0, NULL, NULL),
	    CL_INVALID_COMMAND_QUEUE);
	CHECK_ERR(clEnqueueMigrateMemObjects(e->queue, 1, m, 0, 1, NULL,
	    NULL), CL_INVALID_EVENT_WAIT_LIST);
	ctx2 = clCreateContext(e->props, 1, &e->device, NULL, NULL, &err);
	if (CHECK_ERR(err, CL_SUCCESS)) {
		other = clCreateBuffer(ctx2, CL_MEM_READ_WRITE, 64, NULL, &err);
		if (CHECK_ERR(err, CL_SUCCESS)) {
			bad[1] = other;
			CHECK_ERR(clEnqueueMigrateMemObjects(e->queue, 2, bad,
			    0, 0, NULL, NULL), CL_INVALID_CONTEXT);
		}
	}
out:
	release_all(m, NITEMS(m), NULL, NULL);
	if (other != NULL)
		clReleaseMemObject(other);
	if (ctx2 != NULL)
		clReleaseContext(ctx2);
}

/* --- images and samplers ------------------------------------------------ */

/* A 2D image of a format, or NULL (the check names why). */
static cl_mem
make_image(struct env *e, cl_mem_flags flags, cl_channel_order order,
    cl_channel_type type, cl_mem_object_type it, size_t w, size_t h,
    size_t d, size_t a, size_t row, size_t slice, void *host)
{
	cl_image_format	 f = { order, type };
	cl_image_desc	 desc;
	cl_mem		 m;
	cl_int		 err;

	memset(&desc, 0, sizeof desc);
	desc.image_type = it;
	desc.image_width = w;
	desc.image_height = h;
	desc.image_depth = d;
	desc.image_array_size = a;
	desc.image_row_pitch = row;
	desc.image_slice_pitch = slice;
	m = clCreateImage(e->ctx, flags, &f, &desc, host, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return (NULL);
	return (m);
}

/* The image error the creation of one descriptor gives. */
static cl_int
image_err(struct env *e, cl_mem_flags flags, const cl_image_format *f,
    const cl_image_desc *d, void *host)
{
	cl_mem	m;
	cl_int	err = CL_SUCCESS;

	m = clCreateImage(e->ctx, flags, f, d, host, &err);
	if (m != NULL)
		clReleaseMemObject(m);
	return (err);
}

/* Samplers: creation, info, properties, references and errors. */
static void
test_sampler(struct env *e)
{
	cl_sampler_properties	 props[] = { CL_SAMPLER_NORMALIZED_COORDS,
	    CL_FALSE, CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, 0 };
	cl_sampler_properties	 bad[] = { CL_SAMPLER_FILTER_MODE,
	    CL_FILTER_LINEAR, CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, 0 };
	cl_sampler_properties	 got[8];
	cl_sampler		 s, s2;
	cl_bool			 b;
	cl_addressing_mode	 am;
	cl_filter_mode		 fm;
	cl_context		 c;
	cl_uint			 refs;
	size_t			 n;
	cl_int			 err;

	s = clCreateSampler(e->ctx, CL_TRUE, CL_ADDRESS_REPEAT,
	    CL_FILTER_NEAREST, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return;
	CHECK_ERR(clGetSamplerInfo(s, CL_SAMPLER_NORMALIZED_COORDS, sizeof b,
	    &b, NULL), CL_SUCCESS);
	CHECK(b == CL_TRUE);
	CHECK_ERR(clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof am,
	    &am, NULL), CL_SUCCESS);
	CHECK(am == CL_ADDRESS_REPEAT);
	CHECK_ERR(clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm,
	    NULL), CL_SUCCESS);
	CHECK(fm == CL_FILTER_NEAREST);
	CHECK_ERR(clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sizeof c, &c, NULL),
	    CL_SUCCESS);
	CHECK(c == e->ctx);
	CHECK_ERR(clRetainSampler(s), CL_SUCCESS);
	CHECK_ERR(clGetSamplerInfo(s, CL_SAMPLER_REFERENCE_COUNT, sizeof refs,
	    &refs, NULL), CL_SUCCESS);
	CHECK(refs == 2);
	CHECK_ERR(clReleaseSampler(s), CL_SUCCESS);
	CHECK_ERR(clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, 1, &fm, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clGetSamplerInfo(s, 0x7777, sizeof fm, &fm, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clReleaseSampler(s), CL_SUCCESS);

	s2 = clCreateSamplerWithProperties(e->ctx, props, &err);
	if (CHECK_ERR(err, CL_SUCCESS)) {
		CHECK_ERR(clGetSamplerInfo(s2, CL_SAMPLER_ADDRESSING_MODE,
		    sizeof am, &am, NULL), CL_SUCCESS);
		CHECK(am == CL_ADDRESS_CLAMP);
		CHECK_ERR(clGetSamplerInfo(s2, CL_SAMPLER_FILTER_MODE,
		    sizeof fm, &fm, NULL), CL_SUCCESS);
		CHECK(fm == CL_FILTER_LINEAR);
		CHECK_ERR(clGetSamplerInfo(s2, CL_SAMPLER_PROPERTIES,
		    sizeof got, got, &n), CL_SUCCESS);
		CHECK(n == sizeof props && memcmp(got, props, n) == 0);
		clReleaseSampler(s2);
	}
	/* PoCL 3.1 refuses NULL properties (the defaults). */
	s2 = clCreateSamplerWithProperties(e->ctx, NULL, &err);
	if (CHECK_ERR2(err, CL_SUCCESS, is_pocl ? CL_INVALID_VALUE :
	    CL_SUCCESS) && s2 != NULL) {
		CHECK_ERR(clGetSamplerInfo(s2, CL_SAMPLER_NORMALIZED_COORDS,
		    sizeof b, &b, NULL), CL_SUCCESS);
		CHECK(b == CL_TRUE);
		clReleaseSampler(s2);
	}
	CHECK(clCreateSampler(NULL, CL_TRUE, CL_ADDRESS_CLAMP,
	    CL_FILTER_NEAREST, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_CONTEXT);
	/* PoCL 3.1 takes any addressing and filter mode. */
	s = clCreateSampler(e->ctx, CL_TRUE, 0x7777, CL_FILTER_NEAREST, &err);
	CHECK_ERR2(err, CL_INVALID_VALUE, is_pocl ? CL_SUCCESS :
	    CL_INVALID_VALUE);
	if (s != NULL)
		clReleaseSampler(s);
	s = clCreateSampler(e->ctx, CL_TRUE, CL_ADDRESS_CLAMP, 0x7777, &err);
	CHECK_ERR2(err, CL_INVALID_VALUE, is_pocl ? CL_SUCCESS :
	    CL_INVALID_VALUE);
	if (s != NULL)
		clReleaseSampler(s);
	CHECK(clCreateSamplerWithProperties(e->ctx, bad, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	bad[0] = 0x7777;
	bad[2] = 0;
	CHECK(clCreateSamplerWithProperties(e->ctx, bad, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK_ERR(clRetainSampler(NULL), CL_INVALID_SAMPLER);
	CHECK_ERR(clReleaseSampler(NULL), CL_INVALID_SAMPLER);
	CHECK_ERR(clGetSamplerInfo(NULL, CL_SAMPLER_FILTER_MODE, sizeof fm,
	    &fm, NULL), CL_INVALID_SAMPLER);
}

/* clGetSupportedImageFormats: the common formats are there; bad input. */
static void
test_image_formats(struct env *e)
{
	cl_image_format	 f[512];
	cl_uint		 n = 0, n2 = 0, i;
	int		 rgba8 = 0, rf = 0;

	CHECK_ERR(clGetSupportedImageFormats(e->ctx, CL_MEM_READ_WRITE,
	    CL_MEM_OBJECT_IMAGE2D, 0, NULL, &n), CL_SUCCESS);
	CHECK(n > 0 && n <= 512);
	if (n > 512)
		n = 512;
	CHECK_ERR(clGetSupportedImageFormats(e->ctx, CL_MEM_READ_WRITE,
	    CL_MEM_OBJECT_IMAGE2D, n, f, &n2), CL_SUCCESS);
	CHECK(n2 == n);
	for (i = 0; i < n; i++) {
		rgba8 |= f[i].image_channel_order == CL_RGBA &&
		    f[i].image_channel_data_type == CL_UNORM_INT8;
		rf |= f[i].image_channel_order == CL_R &&
		    f[i].image_channel_data_type == CL_FLOAT;
	}
	CHECK(rgba8 && rf);
	n2 = 0;
	CHECK_ERR(clGetSupportedImageFormats(e->ctx, CL_MEM_READ_ONLY,
	    CL_MEM_OBJECT_IMAGE3D, 0, NULL, &n2), CL_SUCCESS);
	CHECK(n2 > 0);
	CHECK_ERR(clGetSupportedImageFormats(e->ctx, CL_MEM_READ_WRITE,
	    CL_MEM_OBJECT_BUFFER, 0, NULL, &n2), CL_INVALID_VALUE);
	CHECK_ERR(clGetSupportedImageFormats(e->ctx, CL_MEM_READ_WRITE,
	    CL_MEM_OBJECT_IMAGE2D, 0, f, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetSupportedImageFormats(NULL, CL_MEM_READ_WRITE,
	    CL_MEM_OBJECT_IMAGE2D, 0, NULL, &n2), CL_INVALID_CONTEXT);
}

/* clCreateImage of every type, clGetImageInfo, and the creation errors. */
static void
test_image_create(struct env *e)
{
	static const struct {
		cl_mem_object_type	t;
		size_t			w, h, d, a;
	} types[] = {
		{ CL_MEM_OBJECT_IMAGE1D, 17, 0, 0, 0 },
		{ CL_MEM_OBJECT_IMAGE1D_ARRAY, 17, 0, 0, 3 },
		{ CL_MEM_OBJECT_IMAGE2D, 17, 5, 0, 0 },
		{ CL_MEM_OBJECT_IMAGE2D_ARRAY, 17, 5, 0, 3 },
		{ CL_MEM_OBJECT_IMAGE3D, 17, 5, 4, 0 },
	};
	cl_image_format		 f = { CL_RGBA, CL_UNORM_INT8 }, got;
	cl_image_desc		 d;
	cl_mem_object_type	 mt;
	cl_mem			 m, b;
	size_t			 v, i;
	static uint8_t		 host[64 * 8 * 8 * 4];

	for (i = 0; i < NITEMS(types); i++) {
		m = make_image(e, CL_MEM_READ_WRITE, CL_RGBA, CL_UNORM_INT8,
		    types[i].t, types[i].w, types[i].h, types[i].d,
		    types[i].a, 0, 0, NULL);
		if (m == NULL)
			continue;
		CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof mt, &mt,
		    NULL), CL_SUCCESS);
		CHECK(mt == types[i].t);
		CHECK_ERR(clGetImageInfo(m, CL_IMAGE_FORMAT, sizeof got, &got,
		    NULL), CL_SUCCESS);
		CHECK(got.image_channel_order == CL_RGBA &&
		    got.image_channel_data_type == CL_UNORM_INT8);
		CHECK_ERR(clGetImageInfo(m, CL_IMAGE_ELEMENT_SIZE, sizeof v, &v,
		    NULL), CL_SUCCESS);
		CHECK(v == 4);
		CHECK_ERR(clGetImageInfo(m, CL_IMAGE_WIDTH, sizeof v, &v,
		    NULL), CL_SUCCESS);
		CHECK(v == types[i].w);
		CHECK_ERR(clGetImageInfo(m, CL_IMAGE_HEIGHT, sizeof v, &v,
		    NULL), CL_SUCCESS);
		CHECK(v == types[i].h);
		CHECK_ERR(clGetImageInfo(m, CL_IMAGE_DEPTH, sizeof v, &v,
		    NULL), CL_SUCCESS);
		CHECK(v == types[i].d);
		CHECK_ERR(clGetImageInfo(m, CL_IMAGE_ARRAY_SIZE, sizeof v, &v,
		    NULL), CL_SUCCESS);
		CHECK(v == types[i].a);
		CHECK_ERR(clGetImageInfo(m, CL_IMAGE_ROW_PITCH, sizeof v, &v,
		    NULL), CL_SUCCESS);
		CHECK(v == types[i].w * 4);
		CHECK_ERR(clGetImageInfo(m, 0x7777, sizeof v, &v, NULL),
		    CL_INVALID_VALUE);
		clReleaseMemObject(m);
	}
	/* The 1.1 forms, with a host pointer and a pitch. */
	m = clCreateImage2D(e->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
	    &f, 8, 4, 64, host, NULL);
	CHECK(m != NULL);
	if (m != NULL)
		clReleaseMemObject(m);
	m = clCreateImage3D(e->ctx, CL_MEM_READ_ONLY, &f, 8, 4, 2, 0, 0,
	    NULL, NULL);
	CHECK(m != NULL);
	if (m != NULL)
		clReleaseMemObject(m);
	/* A 1D image over a buffer. */
	if ((b = make_buffer(e, CL_MEM_READ_WRITE, 64 * 4, NULL)) != NULL) {
		memset(&d, 0, sizeof d);
		d.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
		d.image_width = 64;
		d.buffer = b;
		CHECK_ERR(image_err(e, CL_MEM_READ_WRITE, &f, &d, NULL),
		    CL_SUCCESS);
		d.image_width = 65;		/* past the buffer */
		CHECK_ERR2(image_err(e, CL_MEM_READ_WRITE, &f, &d, NULL),
		    CL_INVALID_IMAGE_DESCRIPTOR, is_pocl ?
		    CL_INVALID_MEM_OBJECT : CL_INVALID_IMAGE_DESCRIPTOR);
		clReleaseMemObject(b);
	}
	memset(&d, 0, sizeof d);
	d.image_type = CL_MEM_OBJECT_IMAGE2D;
	d.image_width = 8;
	d.image_height = 4;
	CHECK_ERR(image_err(e, CL_MEM_READ_WRITE, NULL, &d, NULL),
	    CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
	/*
	 * PoCL 3.1 calls a format it does not know CL_INVALID_OPERATION, a
	 * NULL descriptor CL_INVALID_VALUE, and takes pitches without a
	 * host pointer or below the row's size; mip levels abort it.
	 */
	got.image_channel_order = 0x7777;
	got.image_channel_data_type = CL_UNORM_INT8;
	CHECK_ERR2(image_err(e, CL_MEM_READ_WRITE, &got, &d, NULL),
	    CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, is_pocl ?
	    CL_INVALID_OPERATION : CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
	got.image_channel_order = CL_RGBA;
	got.image_channel_data_type = CL_UNORM_SHORT_565;	/* RGB only */
	CHECK_ERR2(image_err(e, CL_MEM_READ_WRITE, &got, &d, NULL),
	    CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, is_pocl ?
	    CL_INVALID_OPERATION : CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
	got.image_channel_order = CL_RG;	/* not among PoCL's */
	got.image_channel_data_type = CL_UNSIGNED_INT16;
	CHECK_ERR2(image_err(e, CL_MEM_READ_WRITE, &got, &d, NULL),
	    CL_IMAGE_FORMAT_NOT_SUPPORTED, is_pocl ? CL_INVALID_OPERATION :
	    CL_IMAGE_FORMAT_NOT_SUPPORTED);
	CHECK_ERR2(image_err(e, CL_MEM_READ_WRITE, &f, NULL, NULL),
	    CL_INVALID_IMAGE_DESCRIPTOR, is_pocl ? CL_INVALID_VALUE :
	    CL_INVALID_IMAGE_DESCRIPTOR);
	d.image_type = CL_MEM_OBJECT_BUFFER;	/* PoCL: CL_INVALID_VALUE */
	CHECK_ERR2(image_err(e, CL_MEM_READ_WRITE, &f, &d, NULL),
	    CL_INVALID_IMAGE_DESCRIPTOR, is_pocl ? CL_INVALID_VALUE :
	    CL_INVALID_IMAGE_DESCRIPTOR);
	d.image_type = CL_MEM_OBJECT_IMAGE2D;
	d.image_row_pitch = 64;			/* no host pointer */
	CHECK_ERR2(image_err(e, CL_MEM_READ_WRITE, &f, &d, NULL),
	    CL_INVALID_IMAGE_DESCRIPTOR, is_pocl ? CL_SUCCESS :
	    CL_INVALID_IMAGE_DESCRIPTOR);
	d.image_row_pitch = 8;			/* below width * 4 */
	CHECK_ERR2(image_err(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &f,
	    &d, host), CL_INVALID_IMAGE_DESCRIPTOR, is_pocl ? CL_SUCCESS :
	    CL_INVALID_IMAGE_DESCRIPTOR);
	d.image_row_pitch = 0;
	if (!is_pocl) {
		d.num_mip_levels = 1;
		CHECK_ERR(image_err(e, CL_MEM_READ_WRITE, &f, &d, NULL),
		    CL_INVALID_IMAGE_DESCRIPTOR);
		d.num_mip_levels = 0;
	}
	CHECK_ERR(image_err(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &f,
	    &d, NULL), CL_INVALID_HOST_PTR);
	CHECK_ERR(image_err(e, CL_MEM_READ_WRITE, &f, &d, host),
	    CL_INVALID_HOST_PTR);
	CHECK_ERR(image_err(e, CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, &f, &d,
	    NULL), CL_INVALID_VALUE);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_IMAGE2D_MAX_WIDTH,
	    sizeof v, &v, NULL), CL_SUCCESS);
	d.image_width = v + 1;	/* PoCL: CL_INVALID_OPERATION */
	CHECK_ERR2(image_err(e, CL_MEM_READ_WRITE, &f, &d, NULL),
	    CL_INVALID_IMAGE_SIZE, is_pocl ? CL_INVALID_OPERATION :
	    CL_INVALID_IMAGE_SIZE);
	d.image_width = 0;	/* PoCL: CL_INVALID_BUFFER_SIZE */
	CHECK_ERR2(image_err(e, CL_MEM_READ_WRITE, &f, &d, NULL),
	    CL_INVALID_IMAGE_DESCRIPTOR, is_pocl ? CL_INVALID_BUFFER_SIZE :
	    CL_INVALID_IMAGE_DESCRIPTOR);
	d.image_width = 8;
	CHECK(clCreateImage(NULL, CL_MEM_READ_WRITE, &f, &d, NULL, NULL) ==
	    NULL);
	CHECK_ERR(clGetImageInfo(NULL, CL_IMAGE_WIDTH, sizeof v, &v, NULL),
	    CL_INVALID_MEM_OBJECT);
	if ((b = make_buffer(e, CL_MEM_READ_WRITE, 64, NULL)) != NULL) {
		/* PoCL 3.1 answers for a buffer. */
		CHECK_ERR2(clGetImageInfo(b, CL_IMAGE_WIDTH, sizeof v, &v,
		    NULL), CL_INVALID_MEM_OBJECT, is_pocl ? CL_SUCCESS :
		    CL_INVALID_MEM_OBJECT);
		clReleaseMemObject(b);
	}
}

/* Pixel p of a test pattern. */
static uint8_t
pat(size_t p)
{
	return ((uint8_t)(p * 7 + 3));
}

/*
 * Read and write image regions with host pitches: a pitched write, a
 * packed read, a pitched read of a sub-region, of a 2D, 3D and 1D array
 * image; a COPY_HOST_PTR image with a pitch; regions out of bounds.
 */
static void
test_image_rw(struct env *e)
{
	enum { W = 13, H = 7, D = 3 };
	static uint8_t	 in[(W * 4 + 12) * H * D];
	static uint8_t	 out[W * H * D * 4], sub[64 * 8 * 4];
	size_t		 o[3] = { 0, 0, 0 }, r[3] = { W, H, 1 };
	size_t		 rp = W * 4 + 12, sp, y, z, i;
	cl_mem		 m2 = NULL, m3 = NULL, ma = NULL, mc = NULL;

	for (i = 0; i < sizeof in; i++)
		in[i] = pat(i);
	/* 2D: pitched write, packed read back. */
	if ((m2 = make_image(e, CL_MEM_READ_WRITE, CL_RGBA, CL_UNORM_INT8,
	    CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, 0, 0, NULL)) == NULL)
		goto out;
	CHECK_ERR(clEnqueueWriteImage(e->queue, m2, CL_TRUE, o, r, rp, 0, in,
	    0, NULL, NULL), CL_SUCCESS);
	memset(out, 0, sizeof out);
	CHECK_ERR(clEnqueueReadImage(e->queue, m2, CL_TRUE, o, r, 0, 0, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (y = 0; y < H; y++)
		if (!CHECK(memcmp(out + y * W * 4, in + y * rp, W * 4) == 0))
			break;
	/* A sub-region into a pitched host buffer, non-blocking. */
	o[0] = 3; o[1] = 2; r[0] = 5; r[1] = 4;
	memset(sub, 0xee, sizeof sub);
	CHECK_ERR(clEnqueueReadImage(e->queue, m2, CL_FALSE, o, r, 64, 0, sub,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
	for (y = 0; y < 4; y++) {
		CHECK(memcmp(sub + y * 64, in + (y + 2) * rp + 3 * 4, 20) == 0);
		CHECK(sub[y * 64 + 20] == 0xee);
	}
	/* Out of bounds, empty, NULL. */
	o[0] = W - 4; r[0] = 5;
	CHECK_ERR(clEnqueueReadImage(e->queue, m2, CL_TRUE, o, r, 0, 0, out,
	    0, NULL, NULL), CL_INVALID_VALUE);
	o[0] = 0; r[0] = 0;	/* PoCL 3.1 reads nothing */
	CHECK_ERR2(clEnqueueReadImage(e->queue, m2, CL_TRUE, o, r, 0, 0, out,
	    0, NULL, NULL), CL_INVALID_VALUE, is_pocl ? CL_SUCCESS :
	    CL_INVALID_VALUE);
	r[0] = 1; r[2] = 2;	/* PoCL 3.1 reads a 2D image's 2nd slice */
	CHECK_ERR2(clEnqueueReadImage(e->queue, m2, CL_TRUE, o, r, 0, 0, out,
	    0, NULL, NULL), CL_INVALID_VALUE, is_pocl ? CL_SUCCESS :
	    CL_INVALID_VALUE);
	r[2] = 1; o[2] = 1;
	CHECK_ERR(clEnqueueWriteImage(e->queue, m2, CL_TRUE, o, r, 0, 0, in,
	    0, NULL, NULL), CL_INVALID_VALUE);
	o[2] = 0;
	CHECK_ERR(clEnqueueReadImage(e->queue, m2, CL_TRUE, NULL, r, 0, 0, out,
	    0, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadImage(e->queue, m2, CL_TRUE, o, r, 0, 0, NULL,
	    0, NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueReadImage(e->queue, NULL, CL_TRUE, o, r, 0, 0, out,
	    0, NULL, NULL), CL_INVALID_MEM_OBJECT);
	/* 3D: a pitched write of the whole image, then one slice back. */
	if ((m3 = make_image(e, CL_MEM_READ_WRITE, CL_R, CL_UNSIGNED_INT8,
	    CL_MEM_OBJECT_IMAGE3D, W, H, D, 0, 0, 0, NULL)) == NULL)
		goto out;
	o[0] = o[1] = o[2] = 0; r[0] = W; r[1] = H; r[2] = D;
	CHECK_ERR(clEnqueueWriteImage(e->queue, m3, CL_TRUE, o, r, W + 3,
	    (W + 3) * H + 5, in, 0, NULL, NULL), CL_SUCCESS);
	o[2] = 2; r[2] = 1;
	memset(out, 0, sizeof out);
	CHECK_ERR(clEnqueueReadImage(e->queue, m3, CL_TRUE, o, r, 0, 0, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (y = 0; y < H; y++)
		CHECK(memcmp(out + y * W, in + 2 * ((W + 3) * H + 5) +
		    y * (W + 3), W) == 0);
	/*
	 * 1D array: the slice pitch steps between the array's rows (PoCL
	 * 3.1 steps by the row pitch: packed there).
	 */
	if ((ma = make_image(e, CL_MEM_READ_WRITE, CL_RGBA, CL_UNSIGNED_INT8,
	    CL_MEM_OBJECT_IMAGE1D_ARRAY, W, 0, 0, D, 0, 0, NULL)) == NULL)
		goto out;
	o[0] = o[1] = o[2] = 0; r[0] = W; r[1] = D; r[2] = 1;
	sp = is_pocl ? W * 4 : W * 4 + 8;
	CHECK_ERR(clEnqueueWriteImage(e->queue, ma, CL_TRUE, o, r, 0,
	    is_pocl ? 0 : sp, in, 0, NULL, NULL), CL_SUCCESS);
	memset(out, 0, sizeof out);
	CHECK_ERR(clEnqueueReadImage(e->queue, ma, CL_TRUE, o, r, 0, 0, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (z = 0; z < D; z++)
		CHECK(memcmp(out + z * W * 4, in + z * sp, W * 4) == 0);
	/* COPY_HOST_PTR with a row pitch: the image holds the rows. */
	if ((mc = make_image(e, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
	    CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, rp, 0,
	    in)) == NULL)
		goto out;
	o[0] = o[1] = o[2] = 0; r[0] = W; r[1] = H; r[2] = 1;
	memset(out, 0, sizeof out);
	CHECK_ERR(clEnqueueReadImage(e->queue, mc, CL_TRUE, o, r, 0, 0, out,
	    0, NULL, NULL), CL_SUCCESS);
	for (y = 0; y < H; y++)
		CHECK(memcmp(out + y * W * 4, in + y * rp, W * 4) == 0);
out:
	if (m2 != NULL)
		clReleaseMemObject(m2);
	if (m3 != NULL)
		clReleaseMemObject(m3);
	if (ma != NULL)
		clReleaseMemObject(ma);
	if (mc != NULL)
		clReleaseMemObject(mc);
}

/* Copy and fill images; copies between images and buffers; their errors. */
static void
test_image_copy_fill(struct env *e)
{
	enum { W = 9, H = 6 };
	static uint8_t	 in[W * H * 4], out[W * H * 4], back[W * H * 4];
	size_t		 o[3] = { 0, 0, 0 }, o2[3] = { 2, 1, 0 };
	size_t		 r[3] = { W, H, 1 }, r2[3] = { 4, 3, 1 }, i, y;
	cl_float	 color[4] = { 1.0f, 0.0f, 0.0f, 1.0f };
	cl_mem		 a = NULL, b = NULL, c = NULL, buf = NULL;

	for (i = 0; i < sizeof in; i++)
		in[i] = pat(i);
	if ((a = make_image(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, 0, 0,
	    in)) == NULL || (b = make_image(e, CL_MEM_READ_WRITE, CL_RGBA,
	    CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, 0, 0, NULL)) ==
	    NULL || (c = make_image(e, CL_MEM_READ_WRITE, CL_R, CL_FLOAT,
	    CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, 0, 0, NULL)) == NULL ||
	    (buf = make_buffer(e, CL_MEM_READ_WRITE, sizeof in, NULL)) == NULL)
		goto out;
	CHECK_ERR(clEnqueueCopyImage(e->queue, a, b, o, o, r, 0, NULL, NULL),
	    CL_SUCCESS);
	CHECK_ERR(clEnqueueFillImage(e->queue, b, color, o2, r2, 0, NULL,
	    NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadImage(e->queue, b, CL_TRUE, o, r, 0, 0, out, 0,
	    NULL, NULL), CL_SUCCESS);
	for (y = 0; y < H; y++)
		for (i = 0; i < W; i++) {
			const uint8_t	*p = out + (y * W + i) * 4;
			int		 in_fill = i >= 2 && i < 6 && y >= 1 &&
			    y < 4;

			if (in_fill)
				CHECK(p[0] == 255 && p[1] == 0 && p[2] == 0 &&
				    p[3] == 255);
			else
				CHECK(memcmp(p, in + (y * W + i) * 4, 4) == 0);
		}
	/* Image -> buffer -> image. */
	CHECK_ERR(clEnqueueCopyImageToBuffer(e->queue, a, buf, o, r, 0, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, buf, CL_TRUE, 0, sizeof out,
	    out, 0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(out, in, sizeof in) == 0);
	CHECK_ERR(clEnqueueCopyBufferToImage(e->queue, buf, b, 4 * 3, o2, r2,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadImage(e->queue, b, CL_TRUE, o2, r2, 0, 0, back,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK(memcmp(back, in + 12, 4 * 3 * 4) == 0);
	/* Errors. */
	CHECK_ERR(clEnqueueCopyImage(e->queue, a, c, o, o, r, 0, NULL, NULL),
	    CL_IMAGE_FORMAT_MISMATCH);
	CHECK_ERR(clEnqueueCopyImage(e->queue, a, a, o, o2, r2, 0, NULL,
	    NULL), CL_MEM_COPY_OVERLAP);
	CHECK_ERR(clEnqueueCopyImage(e->queue, a, b, o2, o, r, 0, NULL, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueCopyImageToBuffer(e->queue, a, buf, o, r, 4, 0,
	    NULL, NULL), CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueCopyImageToBuffer(e->queue, buf, a, o, r, 0, 0,
	    NULL, NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clEnqueueCopyBufferToImage(e->queue, a, b, 0, o, r, 0, NULL,
	    NULL), CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clEnqueueFillImage(e->queue, b, NULL, o, r, 0, NULL, NULL),
	    CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueFillImage(e->queue, buf, color, o, r, 0, NULL,
	    NULL), CL_INVALID_MEM_OBJECT);
	/* PoCL 3.1 reads an image as a buffer. */
	CHECK_ERR2(clEnqueueReadBuffer(e->queue, a, CL_TRUE, 0, 4, out, 0,
	    NULL, NULL), CL_INVALID_MEM_OBJECT, is_pocl ? CL_SUCCESS :
	    CL_INVALID_MEM_OBJECT);
out:
	release_all((cl_mem[]){ a, b, c, buf }, 4, NULL, NULL);
}

/* Map an image region for reading and writing; unmap writes it back. */
static void
test_image_map(struct env *e)
{
	enum { W = 10, H = 5, D = 2 };
	static uint8_t	 in[W * H * D], out[W * H * D];
	size_t		 o[3] = { 1, 1, 0 }, r[3] = { 4, 3, 2 };
	size_t		 all[3] = { W, H, D }, zero[3] = { 0, 0, 0 };
	size_t		 row = 0, slice = 0, x, y, z, i;
	uint8_t		*p;
	cl_mem		 m = NULL;
	cl_int		 err;

	for (i = 0; i < sizeof in; i++)
		in[i] = pat(i);
	if ((m = make_image(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, CL_R,
	    CL_UNSIGNED_INT8, CL_MEM_OBJECT_IMAGE3D, W, H, D, 0, 0, 0, in)) ==
	    NULL)
		goto out;
	p = clEnqueueMapImage(e->queue, m, CL_TRUE, CL_MAP_READ |
	    CL_MAP_WRITE, o, r, &row, &slice, 0, NULL, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS) || !CHECK(p != NULL))
		goto out;
	CHECK(row >= r[0] && slice >= row * r[1]);
	for (z = 0; z < r[2]; z++)
		for (y = 0; y < r[1]; y++)
			for (x = 0; x < r[0]; x++) {
				uint8_t	*q = p + z * slice + y * row + x;

				CHECK(*q == in[(z + o[2]) * W * H +
				    (y + o[1]) * W + x + o[0]]);
				*q = (uint8_t)(x + 10 * y + 100 * z);
			}
	CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof(cl_uint),
	    &i, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueUnmapMemObject(e->queue, m, p, 0, NULL, NULL),
	    CL_SUCCESS);
	CHECK_ERR(clEnqueueReadImage(e->queue, m, CL_TRUE, zero, all, 0, 0,
	    out, 0, NULL, NULL), CL_SUCCESS);
	for (z = 0; z < D; z++)
		for (y = 0; y < H; y++)
			for (x = 0; x < W; x++) {
				size_t	k = z * W * H + y * W + x;
				int	inside = x >= 1 && x < 5 && y >= 1 &&
				    y < 4;

				if (inside)
					CHECK(out[k] == (uint8_t)(x - 1 +
					    10 * (y - 1) + 100 * z));
				else
					CHECK(out[k] == in[k]);
			}
	CHECK(clEnqueueMapImage(e->queue, m, CL_TRUE, CL_MAP_READ, o, r, NULL,
	    &slice, 0, NULL, NULL, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	CHECK(clEnqueueMapImage(e->queue, m, CL_TRUE, CL_MAP_READ, o, r, &row,
	    NULL, 0, NULL, NULL, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
	r[0] = W;
	CHECK(clEnqueueMapImage(e->queue, m, CL_TRUE, CL_MAP_READ, o, r, &row,
	    &slice, 0, NULL, NULL, &err) == NULL);
	CHECK_ERR(err, CL_INVALID_VALUE);
out:
	if (m != NULL)
		clReleaseMemObject(m);
}

static const char src_image_kernels[] =
    "__kernel void blur(__read_only image2d_t in, sampler_t s,\n"
    "    __write_only image2d_t out)\n"
    "{\n"
    "	int x = get_global_id(0), y = get_global_id(1);\n"
    "	float4 v = read_imagef(in, s, (float2)(x + 1.0f, y + 1.0f));\n"
    "	write_imagef(out, (int2)(x, y), v);\n"
    "}\n"
    "__kernel void rot(__read_only image2d_t in, __global uint *out,\n"
    "    int w, int h)\n"
    "{\n"
    "	const sampler_t s = CLK_NORMALIZED_COORDS_TRUE |\n"
    "	    CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;\n"
    "	int x = get_global_id(0), y = get_global_id(1);\n"
    "	float2 c = (float2)((y + 0.5f) / w, (h - 1 - x + 0.5f) / h);\n"
    "	out[y * h + x] = read_imageui(in, s, c).x;\n"
    "}\n"
    "__kernel void dims(__read_only image3d_t v, __global int *o)\n"
    "{ o[0] = get_image_depth(v); }\n";

/*
 * Kernels over images: a 2x2 box blur by CLK_FILTER_LINEAR at texel
 * corners (exact in float), a rotation through normalized coordinates;
 * image and sampler arguments of the wrong kind are refused.
 */
static void
test_image_kernel(struct env *e)
{
	enum { W = 8, H = 6 };
	static float	 in[W * H], out[W * H];
	static cl_uint	 ui[W * H], rot[W * H];
	size_t		 o[3] = { 0, 0, 0 }, r[3] = { W, H, 1 };
	size_t		 g[2] = { W, H }, gr[2] = { H, W }, x, y;
	cl_program	 p;
	cl_kernel	 kb = NULL, kr = NULL, kd = NULL;
	cl_sampler	 s = NULL;
	cl_mem		 a = NULL, b = NULL, u = NULL, ob = NULL, v3 = NULL;
	uint64_t	 junk = 0x4141414141414141ull;
	cl_int		 err, w = W, h = H;

	for (x = 0; x < W * H; x++) {
		in[x] = (float)((x * 5) % 17);
		ui[x] = (cl_uint)x;
	}
	if ((p = build_program(e, src_image_kernels, NULL)) == NULL)
		return;
	if ((kb = make_kernel(p, "blur")) == NULL ||
	    (kr = make_kernel(p, "rot")) == NULL ||
	    (kd = make_kernel(p, "dims")) == NULL)
		goto out;
	s = clCreateSampler(e->ctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE,
	    CL_FILTER_LINEAR, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		goto out;
	if ((a = make_image(e, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, CL_R,
	    CL_FLOAT, CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, 0, 0, in)) == NULL ||
	    (b = make_image(e, CL_MEM_WRITE_ONLY, CL_R, CL_FLOAT,
	    CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, 0, 0, NULL)) == NULL ||
	    (u = make_image(e, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, CL_R,
	    CL_UNSIGNED_INT32, CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, 0, 0, ui)) ==
	    NULL || (v3 = make_image(e, CL_MEM_READ_ONLY, CL_R, CL_FLOAT,
	    CL_MEM_OBJECT_IMAGE3D, 4, 4, 5, 0, 0, 0, NULL)) == NULL ||
	    (ob = make_buffer(e, CL_MEM_READ_WRITE, sizeof rot, NULL)) == NULL)
		goto out;
	CHECK_ERR(clSetKernelArg(kb, 0, sizeof a, &a), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(kb, 1, sizeof s, &s), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(kb, 2, sizeof b, &b), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, kb, 2, NULL, g, NULL, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadImage(e->queue, b, CL_TRUE, o, r, 0, 0, out, 0,
	    NULL, NULL), CL_SUCCESS);
	for (y = 0; y < H; y++)
		for (x = 0; x < W; x++) {
			size_t	x1 = x + 1 < W ? x + 1 : W - 1;
			size_t	y1 = y + 1 < H ? y + 1 : H - 1;
			float	want = (in[y * W + x] + in[y * W + x1] +
			    in[y1 * W + x] + in[y1 * W + x1]) / 4.0f;

			if (!CHECK(out[y * W + x] == want))
				y = H;
			if (y == H)
				break;
		}
	/* Rotation by a quarter turn with normalized coordinates. */
	CHECK_ERR(clSetKernelArg(kr, 0, sizeof u, &u), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(kr, 1, sizeof ob, &ob), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(kr, 2, sizeof w, &w), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(kr, 3, sizeof h, &h), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, kr, 2, NULL, gr, NULL, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, ob, CL_TRUE, 0, sizeof rot,
	    rot, 0, NULL, NULL), CL_SUCCESS);
	for (y = 0; y < W; y++)
		for (x = 0; x < H; x++)
			if (!CHECK(rot[y * H + x] == ui[(H - 1 - x) * W + y]))
				goto args;
args:
	CHECK_ERR(clSetKernelArg(kd, 0, sizeof v3, &v3), CL_SUCCESS);
	CHECK_ERR(clSetKernelArg(kd, 1, sizeof ob, &ob), CL_SUCCESS);
	CHECK_ERR(clEnqueueTask(e->queue, kd, 0, NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, ob, CL_TRUE, 0, sizeof w, &w,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK(w == 5);
	/* Wrong kinds: PoCL 3.1 takes them (and crashes later). */
	CHECK_ERR2(clSetKernelArg(kb, 1, sizeof junk, &junk),
	    CL_INVALID_SAMPLER, is_pocl ? CL_SUCCESS : CL_INVALID_SAMPLER);
	CHECK_ERR2(clSetKernelArg(kb, 1, 2, &s), CL_INVALID_ARG_SIZE,
	    is_pocl ? CL_SUCCESS : CL_INVALID_ARG_SIZE);
	CHECK_ERR2(clSetKernelArg(kb, 0, sizeof v3, &v3),
	    CL_INVALID_MEM_OBJECT, is_pocl ? CL_SUCCESS :
	    CL_INVALID_MEM_OBJECT);
	CHECK_ERR2(clSetKernelArg(kb, 0, sizeof ob, &ob),
	    CL_INVALID_MEM_OBJECT, is_pocl ? CL_SUCCESS :
	    CL_INVALID_MEM_OBJECT);
	CHECK_ERR2(clSetKernelArg(kr, 1, sizeof a, &a), CL_INVALID_MEM_OBJECT,
	    is_pocl ? CL_SUCCESS : CL_INVALID_MEM_OBJECT);
out:
	if (s != NULL)
		clReleaseSampler(s);
	release_all((cl_mem[]){ a, b, u, ob, v3 }, 5, NULL, NULL);
	if (kr != NULL)
		clReleaseKernel(kr);
	if (kd != NULL)
		clReleaseKernel(kd);
	release_all(NULL, 0, kb, p);
}

/*
 * OpenCL 3.0 surface: what a platform must answer for every call, with the
 * device's own capabilities deciding which answer (no SVM, no pipes, no
 * device-side enqueue, partitioning or not).
 */

/* A global size of 0 is a valid no-op since 2.1: its event completes. */
static void
test_zero_ndrange(struct env *e)
{
	cl_program	 p;
	cl_kernel	 k = NULL;
	cl_mem		 m = NULL;
	cl_event	 ev = NULL;
	size_t		 g0[2] = { 0, 4 }, g1 = 1, l1 = 1;
	int		 v = 7;

	if ((p = build_program(e, src_ids, NULL)) == NULL)
		return;
	if ((k = make_kernel(p, "incr")) == NULL)
		goto out;
	if ((m = make_buffer(e, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    sizeof v, &v)) == NULL)
		goto out;
	CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, g0, NULL, 0,
	    NULL, &ev), CL_SUCCESS);
	if (ev != NULL) {
		CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
		CHECK(event_status(ev) == CL_COMPLETE);
		clReleaseEvent(ev);
		ev = NULL;
	}
	/* One zero dimension among others, with a local size: still none. */
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 2, NULL, g0, NULL, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof v, &v, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK(v == 7);
	/* The other checks still hold for an empty range. */
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 0, NULL, g0, NULL, 0,
	    NULL, NULL), CL_INVALID_WORK_DIMENSION);
	/*
	 * No global size at all: 3.0 names CL_INVALID_GLOBAL_WORK_SIZE (and
	 * deprecates it), 1.x CL_INVALID_VALUE. PoCL 3.1 enqueues it.
	 */
	if (!is_pocl)
		CHECK_ERR2(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, NULL,
		    NULL, 0, NULL, NULL), CL_INVALID_GLOBAL_WORK_SIZE,
		    CL_INVALID_VALUE);
	CHECK_ERR(clEnqueueNDRangeKernel(NULL, k, 1, NULL, g0, NULL, 0, NULL,
	    NULL), CL_INVALID_COMMAND_QUEUE);
	/* PoCL 3.1 dereferences the NULL wait list here (SIGSEGV). */
	if (!is_pocl)
		CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, g0,
		    NULL, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
	/* And the kernel runs afterwards as usual. */
	CHECK_ERR(clEnqueueNDRangeKernel(e->queue, k, 1, NULL, &g1, &l1, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clEnqueueReadBuffer(e->queue, m, CL_TRUE, 0, sizeof v, &v, 0,
	    NULL, NULL), CL_SUCCESS);
	CHECK(v == 8);
out:
	release_all(&m, 1, k, p);
}

/* SVM and pipes, as the device's reported capabilities say. */
static void
test_svm_pipe(struct env *e)
{
	cl_device_svm_capabilities	 svm = 0;
	cl_bool				 pipes = CL_TRUE;
	cl_program			 p;
	cl_kernel			 k = NULL;
	cl_mem				 m = NULL, pipe;
	cl_uint				 u = 0;
	void				*ptr, *ptrs[1];
	char				 c = 0;
	cl_int				 err;

	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_SVM_CAPABILITIES,
	    sizeof svm, &svm, NULL), CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_PIPE_SUPPORT,
	    sizeof pipes, &pipes, NULL), CL_SUCCESS);
	if ((m = make_buffer(e, CL_MEM_READ_WRITE, 64, NULL)) == NULL)
		return;
	/* A buffer is no pipe, whether the device has pipes or not. */
	CHECK_ERR(clGetPipeInfo(m, CL_PIPE_PACKET_SIZE, sizeof u, &u, NULL),
	    CL_INVALID_MEM_OBJECT);
	CHECK_ERR(clGetPipeInfo(NULL, CL_PIPE_PACKET_SIZE, sizeof u, &u, NULL),
	    CL_INVALID_MEM_OBJECT);
	pipe = clCreatePipe(e->ctx, CL_MEM_READ_WRITE, 4, 16, NULL, &err);
	if (!pipes) {
		CHECK(pipe == NULL);
		CHECK_ERR(err, CL_INVALID_OPERATION);
	} else if (CHECK_ERR(err, CL_SUCCESS)) {
		CHECK_ERR(clGetPipeInfo(pipe, CL_PIPE_PACKET_SIZE, sizeof u,
		    &u, NULL), CL_SUCCESS);
		CHECK(u == 4);
		clReleaseMemObject(pipe);
	}
	pipe = clCreatePipe(NULL, CL_MEM_READ_WRITE, 4, 16, NULL, &err);
	CHECK(pipe == NULL);
	CHECK_ERR(err, CL_INVALID_CONTEXT);

	if ((p = build_program(e, src_ids, NULL)) == NULL)
		goto out;
	k = make_kernel(p, "incr");
	ptr = clSVMAlloc(e->ctx, CL_MEM_READ_WRITE, 64, 0);
	if (svm == 0) {
		/* No SVM: no allocation, and every SVM call is refused. */
		CHECK(ptr == NULL);
		if (k != NULL)
			CHECK_ERR(clSetKernelArgSVMPointer(k, 0, &c),
			    CL_INVALID_OPERATION);
		ptrs[0] = &c;
		CHECK_ERR(clEnqueueSVMMemcpy(e->queue, CL_TRUE, &c, &c, 1, 0,
		    NULL, NULL), CL_INVALID_OPERATION);
		CHECK_ERR(clEnqueueSVMMemFill(e->queue, &c, &c, 1, 1, 0, NULL,
		    NULL), CL_INVALID_OPERATION);
		CHECK_ERR(clEnqueueSVMMap(e->queue, CL_TRUE, CL_MAP_READ, &c,
		    1, 0, NULL, NULL), CL_INVALID_OPERATION);
		CHECK_ERR(clEnqueueSVMUnmap(e->queue, &c, 0, NULL, NULL),
		    CL_INVALID_OPERATION);
		CHECK_ERR(clEnqueueSVMFree(e->queue, 1, ptrs, NULL, NULL, 0,
		    NULL, NULL), CL_INVALID_OPERATION);
		CHECK_ERR(clEnqueueSVMMigrateMem(e->queue, 1,
		    (const void **)ptrs, NULL, 0, 0, NULL, NULL),
		    CL_INVALID_OPERATION);
		clSVMFree(e->ctx, NULL);	/* a no-op, as for free(NULL) */
	} else {
		CHECK(ptr != NULL);
		if (ptr != NULL && k != NULL)
			CHECK_ERR(clSetKernelArgSVMPointer(k, 0, ptr),
			    CL_SUCCESS);
		if (ptr != NULL)
			clSVMFree(e->ctx, ptr);
	}
	CHECK(clSVMAlloc(NULL, CL_MEM_READ_WRITE, 64, 0) == NULL);
	CHECK(clSVMAlloc(e->ctx, CL_MEM_READ_WRITE, 0, 0) == NULL);
	if (k != NULL)
		CHECK_ERR(clSetKernelArgSVMPointer(NULL, 0, &c),
		    CL_INVALID_KERNEL);
	CHECK_ERR(clEnqueueSVMMemcpy(NULL, CL_TRUE, &c, &c, 1, 0, NULL, NULL),
	    CL_INVALID_COMMAND_QUEUE);
out:
	release_all(&m, 1, k, p);
}

/* clCreateBufferWithProperties: no core property; empty lists are fine. */
static void
test_buffer_properties(struct env *e)
{
	const cl_mem_properties	 empty[1] = { 0 };
	const cl_mem_properties	 bad[3] = { 0x7fff1234, 0, 0 };
	cl_mem_properties	 got[4];
	cl_mem			 m;
	size_t			 size = 99;
	cl_int			 err;

	m = clCreateBufferWithProperties(e->ctx, NULL, CL_MEM_READ_WRITE, 64,
	    NULL, &err);
	if (CHECK_ERR(err, CL_SUCCESS)) {
		CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_PROPERTIES, 0, NULL,
		    &size), CL_SUCCESS);
		CHECK(size == 0);
		clReleaseMemObject(m);
	}
	m = clCreateBufferWithProperties(e->ctx, empty, CL_MEM_READ_WRITE, 64,
	    NULL, &err);
	if (CHECK_ERR(err, CL_SUCCESS)) {
		CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_PROPERTIES, sizeof got,
		    got, &size), CL_SUCCESS);
		CHECK(size == sizeof got[0] && got[0] == 0);
		CHECK_ERR(clEnqueueWriteBuffer(e->queue, m, CL_TRUE, 0, 4,
		    &size, 0, NULL, NULL), CL_SUCCESS);
		clReleaseMemObject(m);
	}
	m = clCreateBufferWithProperties(e->ctx, bad, CL_MEM_READ_WRITE, 64,
	    NULL, &err);
	CHECK(m == NULL);
	CHECK_ERR(err, CL_INVALID_PROPERTY);
	m = clCreateBufferWithProperties(NULL, NULL, CL_MEM_READ_WRITE, 64,
	    NULL, &err);
	CHECK(m == NULL);
	CHECK_ERR(err, CL_INVALID_CONTEXT);
	m = clCreateBufferWithProperties(e->ctx, NULL, CL_MEM_READ_WRITE, 0,
	    NULL, &err);
	CHECK(m == NULL);
	CHECK_ERR(err, CL_INVALID_BUFFER_SIZE);
}

/* Device-side queues on a device without device-side enqueue. */
static void
test_device_queue(struct env *e)
{
	cl_device_device_enqueue_capabilities	 caps = 1;
	cl_command_queue_properties		 on_dev = 1;
	cl_queue_properties			 props[3] = {
	    CL_QUEUE_PROPERTIES,
	    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_ON_DEVICE, 0 };
	cl_command_queue			 q, got = NULL;
	cl_uint					 u = 9;
	cl_int					 err;

	CHECK_ERR(clGetDeviceInfo(e->device,
	    CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, sizeof caps, &caps, NULL),
	    CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(e->device,
	    CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, sizeof on_dev, &on_dev,
	    NULL), CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MAX_ON_DEVICE_QUEUES,
	    sizeof u, &u, NULL), CL_SUCCESS);
	if (caps != 0)
		return;		/* a device with device-side enqueue */
	CHECK(on_dev == 0);
	CHECK(u == 0);
	/* PoCL 3.1 aborts here ("Device side queue is unimplemented"). */
	if (!is_pocl) {
		q = clCreateCommandQueueWithProperties(e->ctx, e->device, props,
		    &err);
		CHECK(q == NULL);
		CHECK_ERR(err, CL_INVALID_QUEUE_PROPERTIES);
		props[1] = CL_QUEUE_ON_DEVICE;	/* and without out-of-order */
		q = clCreateCommandQueueWithProperties(e->ctx, e->device, props,
		    &err);
		CHECK(q == NULL);
		CHECK_ERR2(err, CL_INVALID_VALUE, CL_INVALID_QUEUE_PROPERTIES);
	}
	CHECK_ERR(clSetDefaultDeviceCommandQueue(e->ctx, e->device, e->queue),
	    CL_INVALID_OPERATION);
	CHECK_ERR(clSetDefaultDeviceCommandQueue(NULL, e->device, e->queue),
	    CL_INVALID_CONTEXT);
	/*
	 * A device without device queues: CL_INVALID_OPERATION whatever the
	 * device and queue (the spec orders none of the codes that apply;
	 * this is the one a runtime without them, PoCL 3.1, gives).
	 */
	CHECK_ERR(clSetDefaultDeviceCommandQueue(e->ctx, NULL, e->queue),
	    CL_INVALID_OPERATION);
	CHECK_ERR(clSetDefaultDeviceCommandQueue(e->ctx, e->device, NULL),
	    CL_INVALID_OPERATION);
	/* Every host queue query answers; the device default is none. */
	CHECK_ERR(clGetCommandQueueInfo(e->queue, CL_QUEUE_DEVICE_DEFAULT,
	    sizeof got, &got, NULL), CL_SUCCESS);
	CHECK(got == NULL);
	CHECK_ERR(clGetCommandQueueInfo(e->queue, CL_QUEUE_SIZE, sizeof u, &u,
	    NULL), CL_INVALID_COMMAND_QUEUE);
	CHECK_ERR(clGetCommandQueueInfo(e->queue, CL_QUEUE_PROPERTIES_ARRAY,
	    0, NULL, NULL), CL_SUCCESS);
	CHECK_ERR(clGetCommandQueueInfo(e->queue, 0x7fff, sizeof u, &u, NULL),
	    CL_INVALID_VALUE);
}

/* True when a space-separated list holds name as a whole word. */
static int
has_word(const char *list, const char *name)
{
	size_t		 n = strlen(name);
	const char	*p = list;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return (1);
		p += n;
	}
	return (0);
}

/* The 3.0 queries agree with each other and with what the device does. */
static void
test_info_30(struct env *e)
{
	cl_device_atomic_capabilities	 mem = 0, fence = 0;
	cl_device_svm_capabilities	 svm = 0;
	cl_name_version			*nv = NULL;
	cl_version			 ver = 0;
	char				*ext = NULL;
	size_t				 size = 0, i;

	CHECK_ERR(clGetPlatformInfo(e->platform, CL_PLATFORM_NUMERIC_VERSION,
	    sizeof ver, &ver, NULL), CL_SUCCESS);
	CHECK(CL_VERSION_MAJOR(ver) == 3);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_NUMERIC_VERSION,
	    sizeof ver, &ver, NULL), CL_SUCCESS);
	CHECK(CL_VERSION_MAJOR(ver) >= 1);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
	    sizeof mem, &mem, NULL), CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_ATOMIC_FENCE_CAPABILITIES,
	    sizeof fence, &fence, NULL), CL_SUCCESS);
	/* The minimum every 3.0 device has. */
	CHECK((mem & (CL_DEVICE_ATOMIC_ORDER_RELAXED |
	    CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP)) ==
	    (CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP));
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_SVM_CAPABILITIES,
	    sizeof svm, &svm, NULL), CL_SUCCESS);
	/* Fine-grain system SVM is all devices' memory: none without SVM. */
	if (svm == 0)
		CHECK((mem & CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES) == 0);
	/* Every extension of the string has its version entry, and back. */
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS, 0, NULL,
	    &size), CL_SUCCESS);
	if (size == 0 || (ext = calloc(1, size)) == NULL)
		goto out;
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS, size, ext,
	    NULL), CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS_WITH_VERSION,
	    0, NULL, &size), CL_SUCCESS);
	CHECK(size % sizeof *nv == 0);
	if (size > 0 && (nv = calloc(1, size)) != NULL) {
		CHECK_ERR(clGetDeviceInfo(e->device,
		    CL_DEVICE_EXTENSIONS_WITH_VERSION, size, nv, NULL),
		    CL_SUCCESS);
		for (i = 0; i < size / sizeof *nv; i++)
			if (!CHECK(has_word(ext, nv[i].name)))
				printf("  %s: no such extension\n", nv[i].name);
	}
	/* Extensions with host entry points have them. */
	if (has_word(ext, "cl_khr_command_buffer"))
		CHECK(clGetExtensionFunctionAddressForPlatform(e->platform,
		    "clCreateCommandBufferKHR") != NULL);
	if (has_word(ext, "cl_khr_subgroups"))
		CHECK(clGetExtensionFunctionAddressForPlatform(e->platform,
		    "clGetKernelSubGroupInfoKHR") != NULL);
	CHECK(clGetExtensionFunctionAddressForPlatform(e->platform,
	    "clNoSuchFunctionVCL") == NULL);
	CHECK(clGetExtensionFunctionAddressForPlatform(e->platform, NULL) ==
	    NULL);
out:
	free(nv);
	free(ext);
}

/* A native kernel: doubles the int its argument block holds. */
static void CL_CALLBACK
native_double(void *args)
{
	*(int *)args *= 2;
}

/*
 * Native kernels run where the device claims CL_EXEC_NATIVE_KERNEL, and
 * only there: a device that does not claim them answers
 * CL_INVALID_OPERATION.
 */
static void
test_native_kernel(struct env *e)
{
	cl_device_exec_capabilities	 cap = 0;
	cl_event			 ev = NULL;
	int				 v = 21;

	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_EXECUTION_CAPABILITIES,
	    sizeof cap, &cap, NULL), CL_SUCCESS);
	CHECK(cap & CL_EXEC_KERNEL);
	if (!(cap & CL_EXEC_NATIVE_KERNEL)) {
		CHECK_ERR(clEnqueueNativeKernel(e->queue, native_double, &v,
		    sizeof v, 0, NULL, NULL, 0, NULL, NULL),
		    CL_INVALID_OPERATION);
		return;
	}
	CHECK_ERR(clEnqueueNativeKernel(e->queue, NULL, &v, sizeof v, 0, NULL,
	    NULL, 0, NULL, NULL), CL_INVALID_VALUE);
	/* The runtime runs it on a copy of the block: v itself stays. */
	CHECK_ERR(clEnqueueNativeKernel(e->queue, native_double, &v, sizeof v,
	    0, NULL, NULL, 0, NULL, &ev), CL_SUCCESS);
	if (ev != NULL) {
		CHECK_ERR(clWaitForEvents(1, &ev), CL_SUCCESS);
		clReleaseEvent(ev);
	}
	CHECK(v == 21);
}

/*
 * A program built for a sub-device: its binary's size (the node asked
 * for the binary, never for the sizes), the binary of that size, and a
 * program made of it that builds and has the kernel.
 */
static void
sub_device_binary(cl_context ctx, cl_device_id dev, cl_program p)
{
	const unsigned char	*cb;
	unsigned char		*bin = NULL;
	cl_program		 p2 = NULL;
	cl_kernel		 k;
	cl_build_status		 bs = 0;
	cl_uint			 nargs = 0;
	size_t			 bsize = 0, size = 0;
	cl_int			 st = 99, err;

	CHECK_ERR(clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_STATUS,
	    sizeof bs, &bs, NULL), CL_SUCCESS);
	CHECK(bs == CL_BUILD_SUCCESS);
	CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsize,
	    &bsize, &size), CL_SUCCESS);
	CHECK(size == sizeof bsize && bsize > 0);
	if (bsize == 0 || (bin = calloc(1, bsize)) == NULL)
		return;
	if (CHECK_ERR(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin,
	    &bin, NULL), CL_SUCCESS)) {
		cb = bin;
		p2 = clCreateProgramWithBinary(ctx, 1, &dev, &bsize, &cb, &st,
		    &err);
		CHECK_ERR(err, CL_SUCCESS);
		CHECK(st == CL_SUCCESS);
	}
	if (p2 != NULL && CHECK_ERR(clBuildProgram(p2, 1, &dev, NULL, NULL,
	    NULL), CL_SUCCESS)) {
		k = clCreateKernel(p2, "k", &err);
		if (CHECK_ERR(err, CL_SUCCESS) && k != NULL) {
			CHECK_ERR(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS,
			    sizeof nargs, &nargs, NULL), CL_SUCCESS);
			CHECK(nargs == 1);
			clReleaseKernel(k);
		}
	}
	if (p2 != NULL)
		clReleaseProgram(p2);
	free(bin);
}

/* Builds and runs a kernel on a sub-device's context and queue. */
static void
sub_device_run(cl_context ctx, cl_command_queue q, cl_device_id dev)
{
	const char	*src = "__kernel void k(__global int *o)"
	    "{ o[get_global_id(0)] = (int)get_global_id(0) * 3; }";
	cl_program	 p;
	cl_kernel	 k;
	cl_mem		 m;
	cl_int		 err, out[16];
	size_t		 gws = 16, i, wg = 0;
	int		 built;

	p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return;
	built = CHECK_ERR(clBuildProgram(p, 1, &dev, NULL, NULL, NULL),
	    CL_SUCCESS);
	if (built)
		sub_device_binary(ctx, dev, p);
	if (built && (k = clCreateKernel(p, "k", &err)) != NULL) {
		CHECK_ERR(clGetKernelWorkGroupInfo(k, dev,
		    CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
		    CL_SUCCESS);
		CHECK(wg > 0);
		m = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof out, NULL,
		    &err);
		if (CHECK_ERR(err, CL_SUCCESS)) {
			CHECK_ERR(clSetKernelArg(k, 0, sizeof m, &m),
			    CL_SUCCESS);
			CHECK_ERR(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws,
			    NULL, 0, NULL, NULL), CL_SUCCESS);
			memset(out, 0, sizeof out);
			CHECK_ERR(clEnqueueReadBuffer(q, m, CL_TRUE, 0,
			    sizeof out, out, 0, NULL, NULL), CL_SUCCESS);
			for (i = 0; i < gws; i++)
				CHECK(out[i] == (cl_int)i * 3);
			clReleaseMemObject(m);
		}
		clReleaseKernel(k);
	} else
		CHECK_ERR(err, CL_SUCCESS);
	clReleaseProgram(p);
}

/* Sub-devices where the device partitions; the spec's errors where not. */
static void
test_sub_devices(struct env *e)
{
	cl_device_partition_property	 parts[8], eq[3] = {
	    CL_DEVICE_PARTITION_EQUALLY, 1, 0 }, bad[3] = { 0x7fff, 1, 0 },
	    counts[4] = { CL_DEVICE_PARTITION_BY_COUNTS, 1,
	    CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0 };
	cl_device_id			 subs[64], subs2[64], parent = NULL;
	cl_context			 ctx;
	cl_command_queue		 q;
	cl_uint				 maxsub = 0, n = 0, n2 = 0, i, refs = 0;
	size_t				 size = 0;
	cl_int				 err;
	int				 equally = 0;

	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_PARTITION_PROPERTIES,
	    sizeof parts, parts, &size), CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_PARTITION_MAX_SUB_DEVICES,
	    sizeof maxsub, &maxsub, NULL), CL_SUCCESS);
	for (i = 0; i < size / sizeof parts[0] && parts[i] != 0; i++)
		if (parts[i] == CL_DEVICE_PARTITION_EQUALLY)
			equally = 1;
	CHECK_ERR(clCreateSubDevices(NULL, eq, 0, NULL, &n),
	    CL_INVALID_DEVICE);
	CHECK_ERR(clCreateSubDevices(e->device, NULL, 0, NULL, &n),
	    CL_INVALID_VALUE);
	CHECK_ERR(clCreateSubDevices(e->device, bad, 0, NULL, &n),
	    CL_INVALID_VALUE);
	CHECK_ERR(clRetainDevice(NULL), CL_INVALID_DEVICE);
	CHECK_ERR(clReleaseDevice(NULL), CL_INVALID_DEVICE);
	/* Root devices: retain and release do nothing, and succeed. */
	CHECK_ERR(clRetainDevice(e->device), CL_SUCCESS);
	CHECK_ERR(clReleaseDevice(e->device), CL_SUCCESS);
	if (!equally || maxsub < 2) {
		CHECK_ERR(clCreateSubDevices(e->device, eq, 0, NULL, &n),
		    CL_INVALID_VALUE);
		return;
	}
	CHECK_ERR(clCreateSubDevices(e->device, eq, 1, subs, NULL),
	    CL_INVALID_VALUE);		/* maxsub sub-devices, room for one */
	/* More units than the device has: either reading of the spec. */
	eq[1] = maxsub + 1;
	CHECK_ERR2(clCreateSubDevices(e->device, eq, 0, NULL, &n),
	    CL_DEVICE_PARTITION_FAILED, CL_INVALID_VALUE);
	eq[1] = 1;
	n = 0;
	CHECK_ERR(clCreateSubDevices(e->device, eq, 0, NULL, &n), CL_SUCCESS);
	CHECK(n == maxsub);
	if (n == 0 || n > 64)
		return;
	CHECK_ERR(clCreateSubDevices(e->device, eq, n, subs, NULL), CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(subs[0], CL_DEVICE_PARENT_DEVICE,
	    sizeof parent, &parent, NULL), CL_SUCCESS);
	CHECK(parent == e->device);
	CHECK_ERR(clGetDeviceInfo(subs[0], CL_DEVICE_REFERENCE_COUNT,
	    sizeof refs, &refs, NULL), CL_SUCCESS);
	CHECK(refs == 1);
	CHECK_ERR(clGetDeviceInfo(subs[0], CL_DEVICE_MAX_COMPUTE_UNITS,
	    sizeof i, &i, NULL), CL_SUCCESS);
	CHECK(i == 1);
	/* The partition it came from, as asked; a root device's is empty. */
	CHECK_ERR(clGetDeviceInfo(subs[0], CL_DEVICE_PARTITION_TYPE,
	    sizeof parts, parts, &size), CL_SUCCESS);
	CHECK(size == 3 * sizeof parts[0] && parts[0] ==
	    CL_DEVICE_PARTITION_EQUALLY && parts[1] == 1 && parts[2] == 0);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_PARTITION_TYPE,
	    sizeof parts, parts, &size), CL_SUCCESS);
	CHECK(size == 0 || (size == sizeof parts[0] && parts[0] == 0));
	/* One compute unit cannot be split again. */
	CHECK_ERR(clCreateSubDevices(subs[0], eq, NITEMS(subs2), subs2,
	    &n2), CL_DEVICE_PARTITION_FAILED);
	CHECK_ERR(clRetainDevice(subs[0]), CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(subs[0], CL_DEVICE_REFERENCE_COUNT,
	    sizeof refs, &refs, NULL), CL_SUCCESS);
	CHECK(refs == 2);
	CHECK_ERR(clReleaseDevice(subs[0]), CL_SUCCESS);
	/* A sub-device works in a context, a queue, a build and a kernel. */
	ctx = clCreateContext(e->props, 1, &subs[0], NULL, NULL, &err);
	if (CHECK_ERR(err, CL_SUCCESS)) {
		q = clCreateCommandQueueWithProperties(ctx, subs[0], NULL, &err);
		if (CHECK_ERR(err, CL_SUCCESS)) {
			sub_device_run(ctx, q, subs[0]);
			clReleaseCommandQueue(q);
		}
		clReleaseContext(ctx);
	}
	/* By counts: one sub-device per count; too many units refused. */
	n2 = 0;
	CHECK_ERR(clCreateSubDevices(e->device, counts, NITEMS(subs2), subs2,
	    &n2), CL_SUCCESS);
	CHECK(n2 == 1);
	for (i = 0; i < n2 && i < NITEMS(subs2); i++)
		CHECK_ERR(clReleaseDevice(subs2[i]), CL_SUCCESS);
	counts[1] = maxsub + 1;
	CHECK_ERR(clCreateSubDevices(e->device, counts, NITEMS(subs2), subs2,
	    &n2), CL_INVALID_DEVICE_PARTITION_COUNT);
	for (i = 0; i < n; i++)
		CHECK_ERR(clReleaseDevice(subs[i]), CL_SUCCESS);
}

static const struct test {
	const char	*name;
	void		(*fn)(struct env *);
} tests[] = {
	{ "platform_ids", test_platform_ids },
	{ "platform_info", test_platform_info },
	{ "device_ids", test_device_ids },
	{ "device_info", test_device_info },
	{ "context_create", test_context_create },
	{ "context_info", test_context_info },
	{ "queue_create", test_queue_create },
	{ "flush_finish", test_flush_finish },
	{ "buffer_create", test_buffer_create },
	{ "mem_info", test_mem_info },
	{ "read_write", test_read_write },
	{ "host_access", test_host_access },
	{ "copy_buffer", test_copy_buffer },
	{ "large_transfer", test_large_transfer },
	{ "program_source", test_program_source },
	{ "build_options", test_build_options },
	{ "build_include", test_build_include },
	{ "build_error", test_build_error },
	{ "build_callback", test_build_callback },
	{ "program_info", test_program_info },
	{ "kernel_create", test_kernel_create },
	{ "kernel_args", test_kernel_args },
	{ "kernel_arg_types", test_kernel_arg_types },
	{ "kernel_info", test_kernel_info },
	{ "work_group_info", test_work_group_info },
	{ "ndrange", test_ndrange },
	{ "ndrange_uniform", test_ndrange_uniform },
	{ "reduction", test_reduction },
	{ "enqueue_task", test_enqueue_task },
	{ "events", test_events },
	{ "user_events", test_user_events },
	{ "user_event_other_work", test_user_event_other_work },
	{ "markers_barriers", test_markers_barriers },
	{ "profiling", test_profiling },
	{ "fill_buffer", test_fill_buffer },
	{ "map_buffer", test_map_buffer },
	{ "stress_kernels", test_stress_kernels },
	{ "stress_reads", test_stress_reads },
	{ "lifetime", test_lifetime },
	{ "sub_buffer", test_sub_buffer },
	{ "buffer_rect", test_buffer_rect },
	{ "migrate_mem", test_migrate_mem },
	{ "sampler", test_sampler },
	{ "image_formats", test_image_formats },
	{ "image_create", test_image_create },
	{ "image_rw", test_image_rw },
	{ "image_copy_fill", test_image_copy_fill },
	{ "image_map", test_image_map },
	{ "image_kernel", test_image_kernel },
	{ "program_binary", test_program_binary },
	{ "program_binary_run", test_program_binary_run },
	{ "compile_link", test_compile_link },
	{ "compile_binary", test_compile_binary },
	{ "clone_kernel", test_clone_kernel },
	{ "program_misc", test_program_misc },
	{ "program_empty", test_program_empty },
	{ "zero_ndrange", test_zero_ndrange },
	{ "svm_pipe", test_svm_pipe },
	{ "buffer_properties", test_buffer_properties },
	{ "device_queue", test_device_queue },
	{ "info_30", test_info_30 },
	{ "sub_devices", test_sub_devices },
	{ "native_kernel", test_native_kernel },
};

/* Reports a test that ran past its time and ends the run. */
static void
on_alarm(int sig)
{
	static const char	 fail[] = "FAIL ", late[] = " (timed out)\n";

	if (write(STDOUT_FILENO, fail, sizeof fail - 1) < 0 ||
	    write(STDOUT_FILENO, current, strlen(current)) < 0 ||
	    write(STDOUT_FILENO, late, sizeof late - 1) < 0)
		_exit(2);
	_exit(1);
}

/* Tells whether name is in the comma-separated list. */
static int
in_list(const char *list, const char *name)
{
	const char	*p = list, *end;
	size_t		 len = strlen(name);

	while (p != NULL && *p != '\0') {
		end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		if ((size_t)(end - p) == len && strncmp(p, name, len) == 0)
			return (1);
		p = (*end == ',') ? end + 1 : NULL;
	}
	return (0);
}

/* Finds the platform and device and creates a fresh context and queue. */
static int
env_open(struct env *e)
{
	cl_platform_id	 plats[64];
	cl_device_id	 devs[64];
	cl_uint		 n = 0, ndev = 0;
	cl_int		 err;
	char		 name[256];
	size_t		 items[64];

	memset(e, 0, sizeof *e);
	if (!CHECK_ERR(clGetPlatformIDs(NITEMS(plats), plats, &n), CL_SUCCESS))
		return (0);
	if (!CHECK(platform_index < n && platform_index < NITEMS(plats)))
		return (0);
	e->platform = plats[platform_index];
	if (clGetPlatformInfo(e->platform, CL_PLATFORM_NAME, sizeof name, name,
	    NULL) == CL_SUCCESS)
		is_pocl = strcmp(name, "Portable Computing Language") == 0 &&
		    getenv("VCL_TEST_STRICT") == NULL;
	/*
	 * The first device, or with CL_API_TEST_LAST_DEVICE set the last one
	 * (through VCL with several servers: a device of another node than
	 * the first, so every call is routed past node 0).
	 */
	if (!CHECK_ERR(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL,
	    NITEMS(devs), devs, &ndev), CL_SUCCESS) || !CHECK(ndev > 0))
		return (0);
	e->device = getenv("CL_API_TEST_LAST_DEVICE") != NULL ?
	    devs[(ndev < NITEMS(devs) ? ndev : NITEMS(devs)) - 1] : devs[0];
	e->props[0] = CL_CONTEXT_PLATFORM;
	e->props[1] = (cl_context_properties)e->platform;
	e->props[2] = 0;
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MAX_WORK_GROUP_SIZE,
	    sizeof e->max_wg, &e->max_wg, NULL), CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
	    sizeof e->max_dims, &e->max_dims, NULL), CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MAX_WORK_ITEM_SIZES,
	    sizeof items, items, NULL), CL_SUCCESS);
	memcpy(e->max_items, items, sizeof e->max_items);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
	    sizeof e->max_alloc, &e->max_alloc, NULL), CL_SUCCESS);
	CHECK_ERR(clGetDeviceInfo(e->device, CL_DEVICE_GLOBAL_MEM_SIZE,
	    sizeof e->global_mem, &e->global_mem, NULL), CL_SUCCESS);
	e->ctx = clCreateContext(e->props, 1, &e->device, NULL, NULL, &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return (0);
	e->queue = clCreateCommandQueueWithProperties(e->ctx, e->device, NULL,
	    &err);
	if (!CHECK_ERR(err, CL_SUCCESS))
		return (0);
	return (failures == 0);
}

/* Finishes and releases the test's queue and context. */
static void
env_close(struct env *e)
{
	if (e->queue != NULL) {
		CHECK_ERR(clFinish(e->queue), CL_SUCCESS);
		CHECK_ERR(clReleaseCommandQueue(e->queue), CL_SUCCESS);
	}
	if (e->ctx != NULL)
		CHECK_ERR(clReleaseContext(e->ctx), CL_SUCCESS);
}

/* Runs the selected tests, one line each, then the summary line. */
int
main(int argc, char **argv)
{
	struct env	 e;
	const char	*filter = argc > 1 ? argv[1] : NULL;
	const char	*skip = getenv("VCL_TEST_SKIP"), *s;
	unsigned int	 timeout = 120;
	size_t		 i;
	int		 passed = 0, failed = 0, skipped = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((s = getenv("VCL_TEST_PLATFORM")) != NULL)
		platform_index = (unsigned int)strtoul(s, NULL, 10);
	if ((s = getenv("VCL_TEST_TIMEOUT")) != NULL)
		timeout = (unsigned int)strtoul(s, NULL, 10);
	signal(SIGALRM, on_alarm);

	if (filter != NULL && strcmp(filter, "--list") == 0) {
		for (i = 0; i < NITEMS(tests); i++)
			printf("%s\n", tests[i].name);
		return (0);
	}
	for (i = 0; i < NITEMS(tests); i++) {
		if (filter != NULL && (filter[0] == '=' ?
		    strcmp(tests[i].name, filter + 1) != 0 :
		    strstr(tests[i].name, filter) == NULL))
			continue;
		current = tests[i].name;
		if (skip != NULL && in_list(skip, tests[i].name)) {
			printf("SKIP %s\n", current);
			skipped++;
			continue;
		}
		failures = 0;
		alarm(timeout);
		if (env_open(&e))
			tests[i].fn(&e);
		env_close(&e);
		alarm(0);
		if (failures == 0) {
			printf("PASS %s\n", current);
			passed++;
		} else {
			printf("FAIL %s\n", current);
			failed++;
		}
	}
	if (skipped > 0)
		printf("%d passed, %d failed, %d skipped\n", passed, failed,
		    skipped);
	else
		printf("%d passed, %d failed\n", passed, failed);
	return (failed > 0 ? 1 : 0);
}
