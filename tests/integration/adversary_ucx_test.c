/* adversary_ucx_test.c - a hostile peer's transport offers (real UCX). */

/*
 * usage: adversary_ucx_test VCLSERVER
 *
 * The server chooses a peer link's transport from the Hello's offers
 * (vcl_transports.c). Checked here: an offer the server set aside (ucx
 * offered only on one host, by an end of another host) is not the one
 * the link then uses when the same name comes again, offered anywhere,
 * and the Welcome's reason says what was decided ("offered by both
 * ends", not "RDMA on both ends"). The harness is rawproto.c; this
 * process has a UCX worker of its own (proto/transport/ucx.c).
 */

#include "rawproto.h"
#include "vcl_ucx.h"

/* ucx offered everywhere by the server (named), tcp as ever. */
static const char *const named_args[] = { "--transports", "ucx,tcp", NULL };

/*
 * A peer's Hello with two ucx offers at u's address: first local (only
 * on one host; this end names no host, so it does not count), then
 * anywhere. The Welcome must name ucx for the second and say so.
 */
static void
test_repeated_offer(void)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Hello		 h = VCL__HELLO__INIT;
	Vcl__TransportOffer	 o[2] = { VCL__TRANSPORT_OFFER__INIT,
				    VCL__TRANSPORT_OFFER__INIT };
	Vcl__TransportOffer	*op[2] = { &o[0], &o[1] };
	const Vcl__Welcome	*w;
	struct vcl_ucx		*u;
	struct srv		 sv;
	struct conn		 p;
	struct reply		 rp;
	const void		*a;
	size_t			 alen;
	char			 err[256];

	p.fd = -1;
	if ((u = vcl_ucx_create(NULL, err, sizeof err)) == NULL) {
		check("repeated_engine", 0, "vcl_ucx_create: %s", err);
		return;
	}
	if (!srv_start(&sv, "repeated_server", "127.0.0.1:0", named_args))
		goto out0;
	vcl_ucx_address(u, &a, &alen);
	o[0].name = o[1].name = "ucx";
	o[0].has_address = o[1].has_address = 1;
	o[0].address.data = o[1].address.data = (uint8_t *)a;
	o[0].address.len = o[1].address.len = alen;
	o[0].has_local = o[0].local = 1;
	h.version = VCL_PROTOCOL_VERSION;
	h.client_name = "adversary_ucx_test";
	h.has_peer = h.peer = 1;
	h.n_transports = 2;
	h.transports = op;
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	if (!check("repeated_welcome", conn_open(&p, &sv) == 0 &&
	    call(&p, &r, NULL, 0, &rp) == 0, "no Welcome"))
		goto out;
	w = rp.r->welcome;
	check("repeated_ucx", rp.r->status == CL_SUCCESS && w != NULL &&
	    w->transport != NULL && strcmp(w->transport->name, "ucx") == 0,
	    "status %d, transport %s", rp.r->status, w != NULL &&
	    w->transport != NULL ? w->transport->name : "(tcp)");
	check("repeated_why", w != NULL && w->transport_why != NULL &&
	    strcmp(w->transport_why, "offered by both ends") == 0,
	    "the reason is \"%s\" for an offer made anywhere to a server "
	    "that offers ucx anywhere", w != NULL && w->transport_why != NULL ?
	    w->transport_why : "(none)");
	reply_free(&rp);
out:
	conn_close(&p);
	srv_stop(&sv, "repeated_server_stop");
out0:
	vcl_ucx_free(u);
}

static const struct test tests[] = {
	{ "repeated_offer",	test_repeated_offer,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
