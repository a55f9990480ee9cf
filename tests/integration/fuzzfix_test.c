/* fuzzfix_test.c - regressions for server faults fuzz_session found. */
#include "rawproto.h"

/* CreateQueue{id, ctx, device 0} with a raw property list. */
static int
queue_props(struct conn *c, uint64_t id, uint64_t ctx, uint64_t *props,
    size_t n)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateQueue	m = VCL__CREATE_QUEUE__INIT;

	m.id = id;
	m.context = ctx;
	m.device = 0;
	m.n_properties = n;
	m.properties = props;
	r.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	r.create_queue = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * Queue properties straight from the wire: a device-side queue (PoCL
 * calls exit() for one), a queue size, an unknown property and unknown
 * bits each fail that queue with the error libvcl gives, and the server
 * lives on; a host queue with profiling is still made.
 */
static void
test_queue_props(void)
{
	static const struct {
		uint64_t	name, value;
		cl_int		want;
	} cases[] = {
		{ CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE |
		    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
		    CL_INVALID_QUEUE_PROPERTIES },
		{ CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE_DEFAULT,
		    CL_INVALID_QUEUE_PROPERTIES },
		{ CL_QUEUE_SIZE, 4096, CL_INVALID_QUEUE_PROPERTIES },
		{ 0x7777, 1, CL_INVALID_VALUE },
		{ CL_QUEUE_PROPERTIES, 1ull << 40, CL_INVALID_VALUE },
		{ CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, CL_SUCCESS },
	};
	struct srv		 sv;
	struct conn		 c;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 props[2];
	char			 name[64];
	size_t			 i;
	int			 got;

	if (!srv_start(&sv, "queue_props_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = -1;
	if (!check("queue_props_session", conn_session(&c, &sv) == 0,
	    "no session"))
		goto out;
	check("queue_props_context", create_context(&c, 1) == 0,
	    "cannot send CreateContext");
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		props[0] = cases[i].name;
		props[1] = cases[i].value;
		snprintf(name, sizeof name, "queue_props_%zu", i);
		if (!check(name, queue_props(&c, 10 + i, 1, props, 2) == 0,
		    "cannot send CreateQueue"))
			break;
		got = get_info_status(&c, VCL__GET_INFO__WHAT__QUEUE, 10 + i,
		    CL_QUEUE_PROPERTIES);
		check(name, got == cases[i].want, "property %#llx = %#llx: "
		    "status %d, want %d (or no reply: server died?)",
		    (unsigned long long)cases[i].name,
		    (unsigned long long)cases[i].value, got, cases[i].want);
	}
	check("queue_props_server_alive", srv_alive(&sv) && stats(&c, &st) ==
	    0, "server gone after the properties (%s); see %s/stderr",
	    srv_how(&sv), sv.dir);
	conn_close(&c);
out:
	srv_stop(&sv, "queue_props_server_stop");
}

static const struct test tests[] = {
	{ "queue_props",	test_queue_props,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
