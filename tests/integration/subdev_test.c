/* subdev_test.c - sub-devices and sub-group info over the raw protocol. */

/*
 * Raw-protocol tests through a real vclserver on PoCL: a partition is
 * counted, then made with one id per sub-device; a sub-device is a device
 * index (VCL_SUBDEVICE_BIT | id) for contexts and queues, and a
 * KIND_DEVICE object charged and released like any other. Hostile
 * property lists (no scheme, no value, unterminated counts, huge and
 * negative counts, too many counts), ids that clash or exceed 31 bits,
 * more ids than sub-devices, an index of another session and a session
 * over its object limit get their CL_INVALID_* and leave nothing behind.
 * GetInfo KERNEL_SUB_GROUP is the runtime's answer, its input bounded.
 */

#include "rawproto.h"

#define SUBDEV_BIT	0x80000000u	/* as vcl_session.h */

/* CreateSubDevices on device dev; status, or -1000 with no reply. */
static int
partition(struct conn *c, uint32_t dev, const int64_t *p, size_t np,
    const uint64_t *ids, size_t nids, uint32_t *count)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateSubDevices	 m = VCL__CREATE_SUB_DEVICES__INIT;
	struct reply		 rp;
	int			 status;

	m.device = dev;
	m.properties = (int64_t *)p;
	m.n_properties = np;
	m.ids = (uint64_t *)ids;
	m.n_ids = nids;
	r.call_case = VCL__REQUEST__CALL_CREATE_SUB_DEVICES;
	r.create_sub_devices = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1000);
	status = rp.r->status;
	if (count != NULL)
		*count = status == CL_SUCCESS && rp.r->sub_devices != NULL ?
		    rp.r->sub_devices->count : 0;
	reply_free(&rp);
	return (status);
}

/* CreateContext{id} on the listed device indexes. */
static int
context_on(struct conn *c, uint64_t id, uint32_t *devs, size_t n)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateContext	m = VCL__CREATE_CONTEXT__INIT;

	m.id = id;
	m.devices = devs;
	m.n_devices = n;
	r.call_case = VCL__REQUEST__CALL_CREATE_CONTEXT;
	r.create_context = &m;
	return (send_req(c, &r, NULL, 0));
}

/* CreateQueue{id} of context ctx on device index dev. */
static int
queue_on(struct conn *c, uint64_t id, uint64_t ctx, uint32_t dev)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateQueue	m = VCL__CREATE_QUEUE__INIT;

	m.id = id;
	m.context = ctx;
	m.device = dev;
	r.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	r.create_queue = &m;
	return (send_req(c, &r, NULL, 0));
}

/* Polls Stats until the server holds nothing; one check of that. */
static void
settle(struct conn *c, const char *name)
{
	Vcl__StatsResult	st = VCL__STATS_RESULT__INIT;

	check(name, wait_empty(c, &st) == 0, "%llu objects, %llu bytes left",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes);
}

/* A hostile list gets want, and the session goes on. */
static void
refuse(struct conn *c, const char *name, const int64_t *p, size_t np,
    const uint64_t *ids, size_t nids, int want)
{
	int	st = partition(c, 0, p, np, ids, nids, NULL);

	check(name, st == want, "status %d, want %d", st, want);
}

/* Partitions, uses and releases sub-devices; hostile lists refused. */
static void
test_partition(void)
{
	const int64_t	 eq[] = { CL_DEVICE_PARTITION_EQUALLY, 1 };
	const int64_t	 eq0[] = { CL_DEVICE_PARTITION_EQUALLY, 0 };
	const int64_t	 eqhuge[] = { CL_DEVICE_PARTITION_EQUALLY, INT64_MAX };
	const int64_t	 eqneg[] = { CL_DEVICE_PARTITION_EQUALLY, -1 };
	const int64_t	 eqmore[] = { CL_DEVICE_PARTITION_EQUALLY, 1,
	    CL_DEVICE_PARTITION_EQUALLY, 1 };
	const int64_t	 noval[] = { CL_DEVICE_PARTITION_EQUALLY };
	const int64_t	 unknown[] = { 0x7fff, 1 };
	const int64_t	 cnt_open[] = { CL_DEVICE_PARTITION_BY_COUNTS, 1, 1 };
	const int64_t	 cnt_neg[] = { CL_DEVICE_PARTITION_BY_COUNTS, -5,
	    CL_DEVICE_PARTITION_BY_COUNTS_LIST_END };
	const int64_t	 cnt_huge[] = { CL_DEVICE_PARTITION_BY_COUNTS,
	    INT64_MAX, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END };
	const int64_t	 cnt_after[] = { CL_DEVICE_PARTITION_BY_COUNTS, 1,
	    CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 7 };
	int64_t		 many[300];
	uint64_t	 ids[70], big[2] = { SUBDEV_BIT, SUBDEV_BIT + 1 };
	uint32_t	 n = 0, devs[2];
	struct srv	 sv;
	struct conn	 c, c2;
	size_t		 i;
	int		 st;

	if (!srv_start(&sv, "partition_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("partition_session", conn_session(&c, &sv) == 0,
	    "no session")) {
		srv_stop(&sv, "partition_server_exit");
		return;
	}
	st = partition(&c, 0, eq, 2, NULL, 0, &n);
	if (!check("partition_count", st == CL_SUCCESS && n >= 1 && n <= 64,
	    "status %d, %u sub-devices", st, n)) {
		conn_close(&c);
		srv_stop(&sv, "partition_server_exit");
		return;
	}
	refuse(&c, "partition_empty", NULL, 0, NULL, 0, CL_INVALID_VALUE);
	refuse(&c, "partition_no_value", noval, 1, NULL, 0, CL_INVALID_VALUE);
	refuse(&c, "partition_unknown", unknown, 2, NULL, 0,
	    CL_INVALID_VALUE);
	refuse(&c, "partition_two_schemes", eqmore, 4, NULL, 0,
	    CL_INVALID_VALUE);
	refuse(&c, "partition_zero", eq0, 2, NULL, 0, CL_INVALID_VALUE);
	refuse(&c, "partition_huge", eqhuge, 2, NULL, 0, CL_INVALID_VALUE);
	refuse(&c, "partition_negative", eqneg, 2, NULL, 0, CL_INVALID_VALUE);
	refuse(&c, "partition_counts_unterminated", cnt_open, 3, NULL, 0,
	    CL_INVALID_VALUE);
	refuse(&c, "partition_counts_after_end", cnt_after, 4, NULL, 0,
	    CL_INVALID_VALUE);
	refuse(&c, "partition_counts_negative", cnt_neg, 3, NULL, 0,
	    CL_INVALID_DEVICE_PARTITION_COUNT);
	refuse(&c, "partition_counts_huge", cnt_huge, 3, NULL, 0,
	    CL_INVALID_DEVICE_PARTITION_COUNT);
	many[0] = CL_DEVICE_PARTITION_BY_COUNTS;
	for (i = 1; i < 299; i++)
		many[i] = 1;
	many[299] = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
	refuse(&c, "partition_counts_many", many, 300, NULL, 0,
	    CL_INVALID_DEVICE_PARTITION_COUNT);
	/* Ids: too many, 31 bits at most, no clash, one per sub-device. */
	for (i = 0; i < 70; i++)
		ids[i] = 100 + i;
	refuse(&c, "partition_ids_many", eq, 2, ids, 70, CL_INVALID_VALUE);
	refuse(&c, "partition_ids_big", eq, 2, big, n < 2 ? n : 2,
	    CL_INVALID_VALUE);
	ids[1] = ids[0];
	if (n >= 2)
		refuse(&c, "partition_ids_twice", eq, 2, ids, n,
		    CL_INVALID_VALUE);
	ids[1] = 101;
	refuse(&c, "partition_ids_more", eq, 2, ids, n + 1, CL_INVALID_VALUE);
	st = partition(&c, 5000, eq, 2, NULL, 0, NULL);
	check("partition_bad_device", st == CL_INVALID_DEVICE, "status %d",
	    st);
	st = partition(&c, SUBDEV_BIT | 100, eq, 2, NULL, 0, NULL);
	check("partition_unknown_subdevice", st == CL_INVALID_DEVICE,
	    "status %d", st);
	settle(&c, "partition_refused_nothing_left");

	/* The partition, then a context and a queue on a sub-device. */
	st = partition(&c, 0, eq, 2, ids, n, NULL);
	check("partition_made", st == CL_SUCCESS, "status %d", st);
	devs[0] = SUBDEV_BIT | 100;
	context_on(&c, 1, devs, 1);
	queue_on(&c, 2, 1, SUBDEV_BIT | 100);
	check("partition_queue", get_info_status(&c,
	    VCL__GET_INFO__WHAT__QUEUE, 2, CL_QUEUE_REFERENCE_COUNT) ==
	    CL_SUCCESS, "no queue on the sub-device");
	check("partition_subdevice_info", get_info_status(&c,
	    VCL__GET_INFO__WHAT__DEVICE, SUBDEV_BIT | 100,
	    CL_DEVICE_MAX_COMPUTE_UNITS) == CL_SUCCESS, "no info");
	/* Another session cannot name this one's sub-device. */
	if (check("partition_session2", conn_session(&c2, &sv) == 0,
	    "no second session")) {
		devs[0] = SUBDEV_BIT | 100;
		context_on(&c2, 1, devs, 1);
		check("partition_other_session", get_info_status(&c2,
		    VCL__GET_INFO__WHAT__CONTEXT, 1,
		    CL_CONTEXT_REFERENCE_COUNT) == CL_INVALID_DEVICE,
		    "another session's sub-device was usable");
		check("partition_other_info", get_info_status(&c2,
		    VCL__GET_INFO__WHAT__DEVICE, SUBDEV_BIT | 100,
		    CL_DEVICE_MAX_COMPUTE_UNITS) == CL_INVALID_DEVICE,
		    "another session's sub-device answered");
		conn_close(&c2);
	}
	release(&c, VCL__KIND__KIND_QUEUE, 2);
	release(&c, VCL__KIND__KIND_CONTEXT, 1);
	for (i = 0; i < n; i++)
		release(&c, VCL__KIND__KIND_DEVICE, ids[i]);
	settle(&c, "partition_nothing_left");
	/* An id in use is a protocol error: the session closes. */
	create_context(&c, 7);
	ids[0] = 7;
	st = partition(&c, 0, eq, 2, ids, n, NULL);
	check("partition_id_in_use", st == -1000 && wait_closed(&c),
	    "status %d, session open", st);
	conn_close(&c);
	if (check("partition_session3", conn_session(&c, &sv) == 0,
	    "no session"))
		settle(&c, "partition_reuse_nothing_left");
	conn_close(&c);
	srv_stop(&sv, "partition_server_exit");
}

/* Sub-devices count against --max-objects; a session's end frees them. */
static void
test_charged(void)
{
	const char *const	 extra[] = { "--max-objects", "3", NULL };
	const int64_t		 eq[] = { CL_DEVICE_PARTITION_EQUALLY, 1 };
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 ids[4] = { 10, 11, 12, 13 };
	uint32_t		 n = 0;
	struct srv		 sv;
	struct conn		 c;
	int			 s;

	if (!srv_start(&sv, "charged_server_start", "127.0.0.1:0", extra))
		return;
	if (!check("charged_session", conn_session(&c, &sv) == 0,
	    "no session")) {
		srv_stop(&sv, "charged_server_exit");
		return;
	}
	/* PoCL's CPU device here: 2 sub-devices of one compute unit each. */
	s = partition(&c, 0, eq, 2, NULL, 0, &n);
	if (check("charged_count", s == CL_SUCCESS && n == 2,
	    "status %d, %u sub-devices (want 2)", s, n)) {
		create_context(&c, 1);
		s = partition(&c, 0, eq, 2, ids, 2, NULL);
		check("charged_made", s == CL_SUCCESS, "status %d", s);
		check("charged_counted", stats(&c, &st) == 0 &&
		    st.session_objects == 3, "%llu objects, want 3",
		    (unsigned long long)st.session_objects);
		s = partition(&c, 0, eq, 2, ids + 2, 2, NULL);
		check("charged_over_limit", s == CL_OUT_OF_RESOURCES,
		    "status %d, want CL_OUT_OF_RESOURCES", s);
	}
	conn_close(&c);
	/* A fresh session sees the server empty: the first one's went. */
	if (check("charged_session2", conn_session(&c, &sv) == 0,
	    "no session"))
		settle(&c, "charged_closed_nothing_left");
	conn_close(&c);
	srv_stop(&sv, "charged_server_exit");
}

/* GetInfo KERNEL_SUB_GROUP of kernel 4 on device 0 with input in. */
static int
sub_group_info(struct conn *c, uint64_t kernel, uint32_t param,
    const void *in, size_t inlen)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetInfo	m = VCL__GET_INFO__INIT;
	struct reply	rp;
	int		st;

	m.what = VCL__GET_INFO__WHAT__KERNEL_SUB_GROUP;
	m.id = kernel;
	m.param = param;
	m.has_device = 1;
	m.device = 0;
	m.has_input = 1;
	m.input.data = (uint8_t *)in;
	m.input.len = inlen;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1000);
	st = rp.r->status;
	reply_free(&rp);
	return (st);
}

/*
 * Sub-group info is the runtime's own answer (PoCL 3.1's CPU device has
 * no sub-groups: CL_INVALID_OPERATION); an input longer than an ND-range,
 * an unknown kernel or device are refused before it.
 */
static void
test_sub_group(void)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	b = VCL__BUILD_PROGRAM__INIT;
	Vcl__CreateKernel	k = VCL__CREATE_KERNEL__INIT;
	struct reply		rp;
	uint8_t			big[4096];
	size_t			nd[3] = { 64, 1, 1 };
	struct srv		sv;
	struct conn		c;
	int			st;

	if (!srv_start(&sv, "subgroup_server_start", "127.0.0.1:0", NULL))
		return;
	if (!check("subgroup_session", conn_session(&c, &sv) == 0,
	    "no session")) {
		srv_stop(&sv, "subgroup_server_exit");
		return;
	}
	create_context(&c, 1);
	create_program(&c, 3, 1, kernel_src);
	b.program = 3;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &b;
	if (call(&c, &r, NULL, 0, &rp) == 0)
		reply_free(&rp);
	k.id = 4;
	k.program = 3;
	k.name = (char *)"k";
	r.call_case = VCL__REQUEST__CALL_CREATE_KERNEL;
	r.create_kernel = &k;
	if (call(&c, &r, NULL, 0, &rp) == 0)
		reply_free(&rp);
	st = sub_group_info(&c, 4, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
	    nd, sizeof nd);
	check("subgroup_runtime", st == CL_INVALID_OPERATION, "status %d, "
	    "want the runtime's CL_INVALID_OPERATION", st);
	memset(big, 0, sizeof big);
	st = sub_group_info(&c, 4, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
	    big, sizeof big);
	check("subgroup_input_long", st == CL_INVALID_VALUE, "status %d", st);
	st = sub_group_info(&c, 99, CL_KERNEL_MAX_NUM_SUB_GROUPS, NULL, 0);
	check("subgroup_unknown_kernel", st == CL_INVALID_KERNEL, "status %d",
	    st);
	release(&c, VCL__KIND__KIND_KERNEL, 4);
	release(&c, VCL__KIND__KIND_PROGRAM, 3);
	release(&c, VCL__KIND__KIND_CONTEXT, 1);
	settle(&c, "subgroup_nothing_left");
	conn_close(&c);
	srv_stop(&sv, "subgroup_server_exit");
}

static const struct test tests[] = {
	{ "partition",		test_partition,		60 },
	{ "charged",		test_charged,		60 },
	{ "sub_group",		test_sub_group,		60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
