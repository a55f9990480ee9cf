/* pinread_test.c - a large read right behind a large write both stage in pinned memory. */

/*
 * usage: pinread_test VCLSERVER
 *
 * A write's staging is held until its device copy completes, and a read
 * behind it on the same queue takes its staging when its request
 * arrives, before that. The default --max-pinned must leave room for
 * both, or the read stages in pageable memory (on NVIDIA: 256 MiB reads
 * at 0.6x of the link instead of 0.9x). Checked on the default server:
 * a write of just over 128 MiB (a 256 MiB pinned block) is held behind
 * an unset user event while a read of the same size arrives; the server's
 * debug log must show the read's block made while the write's is out
 * (512 MiB pinned in all), and the read must return the written bytes.
 */

#include "rawproto.h"

#define PR_SIZE		((128u << 20) + 4096u)	/* a 256 MiB block */
#define PR_CTX		1
#define PR_Q		2
#define PR_BUF		3
#define PR_UE		4

static const char *const pr_args[] = { "--log-level", "debug", NULL };

/* Read frames until the reply to seq; its bulk (size bytes) into dst. */
static int
pr_until(struct conn *c, uint64_t seq, uint8_t *dst, uint64_t size,
    cl_int *status)
{
	struct vcl_frame_limits	 lim = { 64u << 20, 1ull << 32 };
	struct vcl_frame_hdr	 hdr;
	Vcl__ToClient		*tc;
	const char		*why;
	uint8_t			 h[VCL_FRAME_HDR_LEN], *msg;
	int			 found = 0;

	while (!found) {
		if (read_n(c->fd, h, sizeof h) != 0 ||
		    vcl_frame_decode(h, &lim, &hdr, &why) != 0)
			return (-1);
		if ((msg = malloc(hdr.msg_len + 1)) == NULL ||
		    read_n(c->fd, msg, hdr.msg_len) != 0 ||
		    (tc = vcl__to_client__unpack(NULL, hdr.msg_len,
		    msg)) == NULL) {
			free(msg);
			return (-1);
		}
		free(msg);
		if (tc->reply != NULL && tc->reply->seq == seq) {
			found = 1;
			*status = tc->reply->status;
			if (hdr.bulk_len != 0 && (hdr.bulk_len != size ||
			    read_n(c->fd, dst, size) != 0)) {
				vcl__to_client__free_unpacked(tc, NULL);
				return (-1);
			}
		} else if (hdr.bulk_len != 0) {
			vcl__to_client__free_unpacked(tc, NULL);
			return (-1);	/* no other read was asked for */
		}
		vcl__to_client__free_unpacked(tc, NULL);
	}
	return (0);
}

/* The read behind a held write gets pinned staging of its own. */
static void
test_both_pinned(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	 ue = VCL__CREATE_USER_EVENT__INIT;
	Vcl__SetUserEventStatus	 us = VCL__SET_USER_EVENT_STATUS__INIT;
	Vcl__WriteBuffer	 w = VCL__WRITE_BUFFER__INIT;
	Vcl__ReadBuffer		 rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 wq = VCL__ENQUEUE__INIT, rq = VCL__ENQUEUE__INIT;
	uint8_t			*src = NULL, *dst = NULL;
	uint64_t		 wait = PR_UE, seq;
	cl_int			 st = 1;
	size_t			 i;
	int			 rc;

	memset(&sv, 0, sizeof sv);
	c.fd = -1;
	if ((src = malloc(PR_SIZE)) == NULL ||
	    (dst = malloc(PR_SIZE)) == NULL) {
		check("both_pinned_memory", 0, "out of memory");
		goto out;
	}
	for (i = 0; i < PR_SIZE; i++)
		src[i] = (uint8_t)(i ^ (i >> 8) ^ (i >> 17));
	memset(dst, 0, PR_SIZE);
	if (!srv_start(&sv, "both_pinned_server_start", "127.0.0.1:0",
	    pr_args))
		goto out;
	if (!check("both_pinned_setup", conn_session(&c, &sv) == 0 &&
	    create_context(&c, PR_CTX) == 0 &&
	    create_queue(&c, PR_Q, PR_CTX) == 0 &&
	    create_buffer(&c, PR_BUF, PR_CTX, PR_SIZE, NULL, 0) == 0,
	    "no session, context, queue or buffer"))
		goto out;

	/* The write waits for the user event: its staging stays out. */
	ue.id = PR_UE;
	ue.context = PR_CTX;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	rc = send_req(&c, &r, NULL, 0);
	wq.queue = PR_Q;
	wq.n_wait = 1;
	wq.wait = &wait;
	w.q = &wq;
	w.mem = PR_BUF;
	w.size = PR_SIZE;
	r = (Vcl__Request)VCL__REQUEST__INIT;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &w;
	if (rc == 0)
		rc = send_req(&c, &r, src, PR_SIZE);
	rq.queue = PR_Q;
	rb.q = &rq;
	rb.mem = PR_BUF;
	rb.size = PR_SIZE;
	r = (Vcl__Request)VCL__REQUEST__INIT;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &rb;
	if (rc == 0)
		rc = send_req(&c, &r, NULL, 0);
	seq = r.seq;
	us.event = PR_UE;
	us.status = CL_COMPLETE;
	r = (Vcl__Request)VCL__REQUEST__INIT;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &us;
	if (rc == 0)
		rc = send_req(&c, &r, NULL, 0);
	if (!check("both_pinned_send", rc == 0, "sending failed"))
		goto out;
	rc = pr_until(&c, seq, dst, PR_SIZE, &st);
	check("both_pinned_read", rc == 0 && st == CL_SUCCESS &&
	    memcmp(src, dst, PR_SIZE) == 0, "read behind the write: rc %d, "
	    "status %d, bytes %s", rc, (int)st,
	    rc == 0 && memcmp(src, dst, PR_SIZE) == 0 ? "right" : "wrong");
	check("both_pinned_staging", srv_stderr_has(&sv,
	    "(536870912 pinned in all)"), "the read did not get a pinned "
	    "block of its own while the write held one (default "
	    "--max-pinned too small for both)");
out:
	conn_close(&c);
	free(src);
	free(dst);
	if (sv.pid > 0)
		srv_stop(&sv, "both_pinned_server_exit");
}

static const struct test tests[] = {
	{ "both_pinned",	test_both_pinned,	120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
