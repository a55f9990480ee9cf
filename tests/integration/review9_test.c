/* review9_test.c - released ids the session still holds, on the server's own paths. */

/*
 * Raw protocol through a real vclserver on PoCL. A Release held behind a
 * command makes its id the client's no more at once (later requests get
 * its CL_INVALID_*), but what the client enqueued before the Release
 * still runs on the object: OpenCL frees a released buffer only once the
 * commands using it are done.
 */

#include "rawproto.h"

#define R9_CTX		1
#define R9_Q		2
#define R9_SRC		3	/* the migration's buffer, released */
#define R9_DST		4	/* the copy's target, read back */
#define R9_EV_IN	10	/* the migration's arrival */
#define R9_EV_COPY	11
#define R9_XFER		77

/*
 * A migration into a buffer, a copy out of it held on the migration's
 * arrival, then the buffer's Release (held behind the copy), then the
 * peer's push: the bytes are written into the buffer, the copy runs on
 * them and a read of its target gives them. The push's write looked the
 * buffer up as a request naming it would: released, refused, and the
 * migration failed with CL_INVALID_MEM_OBJECT, the copy with it.
 */
static void
t_release_before_push(void)
{
	enum { SIZE = 64 << 10 };
	struct srv		 sv;
	struct conn		 c, p;
	struct reply		 rp;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__PeerPush		 pp = VCL__PEER_PUSH__INIT;
	Vcl__CopyBuffer		 cb = VCL__COPY_BUFFER__INIT;
	Vcl__ReadBuffer		 rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 qc = VCL__ENQUEUE__INIT, qr = VCL__ENQUEUE__INIT;
	Vcl__StatsResult	 st;
	uint64_t		 sid = 0, key = 0, in = R9_EV_IN;
	uint64_t		 copied = R9_EV_COPY;
	uint8_t			*data;
	cl_int			 evin = 1, evcopy = 1;
	size_t			 i;
	int			 rc, got = 0, n;

	c.fd = p.fd = -1;
	if ((data = raw_pattern(SIZE, 9)) == NULL)
		return;
	if (!srv_start(&sv, "push_server_start", "127.0.0.1:0", NULL)) {
		free(data);
		return;
	}
	if (!check("push_sessions", client_open(&c, &sv, &sid, &key) == 0 &&
	    conn_open(&p, &sv) == 0 && hello_as(&p, 1, NULL, NULL) == 0,
	    "no client or peer session"))
		goto out;
	rc = create_buffer(&c, R9_SRC, R9_CTX, SIZE, NULL, 0);
	rc |= create_buffer(&c, R9_DST, R9_CTX, SIZE, NULL, 0);
	rc |= migrate_in(&c, R9_EV_IN, R9_SRC, SIZE, R9_XFER, NULL);
	/* The copy waits on the arrival: held. */
	qc.queue = R9_Q;
	qc.has_event = 1;
	qc.event = R9_EV_COPY;
	qc.n_wait = 1;
	qc.wait = &in;
	cb.q = &qc;
	cb.src = R9_SRC;
	cb.dst = R9_DST;
	cb.size = SIZE;
	r.call_case = VCL__REQUEST__CALL_COPY_BUFFER;
	r.copy_buffer = &cb;
	rc |= send_req(&c, &r, NULL, 0);
	/* Held behind the copy; Stats: the server has read it. */
	rc |= release(&c, VCL__KIND__KIND_MEM, R9_SRC);
	rc |= stats(&c, &st);
	if (!check("push_setup", rc == 0, "set-up failed"))
		goto out;

	pp.session = sid;
	pp.key = key;
	pp.transfer = R9_XFER;
	pp.status = CL_SUCCESS;
	vcl__request__init(&r);
	r.call_case = VCL__REQUEST__CALL_PEER_PUSH;
	r.peer_push = &pp;
	if (!check("push_sent", send_req(&p, &r, data, SIZE) == 0,
	    "cannot push"))
		goto out;

	qr.queue = R9_Q;
	qr.n_wait = 1;
	qr.wait = &copied;
	rb.q = &qr;
	rb.mem = R9_DST;
	rb.size = SIZE;
	vcl__request__init(&r);
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &rb;
	if (!check("push_read_sent", send_req(&c, &r, NULL, 0) == 0,
	    "cannot send the read"))
		goto out;
	for (n = 0; !got && n < 2000 && recv_msg(&c, &rp) == 0; n++) {
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify; i++) {
			if (rp.tc->notify[i]->event == R9_EV_IN)
				evin = rp.tc->notify[i]->status;
			if (rp.tc->notify[i]->event == R9_EV_COPY)
				evcopy = rp.tc->notify[i]->status;
		}
		if (rp.r != NULL && rp.r->seq == r.seq) {
			got = 1;
			check("push_read", rp.r->status == CL_SUCCESS &&
			    rp.bulk_len == SIZE && memcmp(rp.bulk, data,
			    SIZE) == 0, "read status %d, %llu bytes%s",
			    rp.r->status, (unsigned long long)rp.bulk_len,
			    rp.bulk_len == SIZE ? ", not the pushed ones" : "");
		}
		reply_free(&rp);
	}
	check("push_read_reply", got, "no reply to the read");
	check("push_events", evin == CL_COMPLETE && evcopy == CL_COMPLETE,
	    "arrival %d, copy %d, want CL_COMPLETE (%d) for both", (int)evin,
	    (int)evcopy, CL_COMPLETE);
	/* The held Release ran: the buffer is gone, its id refused. */
	if (check("push_released_read", read_buffer(&c, R9_Q, R9_SRC, SIZE,
	    &rp) == 0, "no reply to a read of the released buffer")) {
		check("push_released", rp.r->status == CL_INVALID_MEM_OBJECT,
		    "a read of the released buffer: %d, want %d",
		    rp.r->status, CL_INVALID_MEM_OBJECT);
		reply_free(&rp);
	}
out:
	conn_close(&c);
	conn_close(&p);
	free(data);
	srv_stop(&sv, "push_server_exit");
}

static const struct test tests[] = {
	{ "release_before_push",	t_release_before_push,	60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests /
	    sizeof tests[0]));
}
