/*
 * vcl_bulk.c - choosing how a transfer's bytes move (vcl_bulk.h): the
 * first way of vcl_bulk_all[] that can carry it, else in band.
 */
#include "vcl_bulk.h"
#include "vcl_conn.h"
#include "vcl_context.h"
#include "vcl_mem.h"
#include "vcl_object.h"

/* In band: the bytes follow the request's frame on the control stream. */
static int
vcl_bulk_inband_usable(struct vcl_node *n, cl_command_queue q, size_t size)
{
	(void)n;
	(void)q;
	(void)size;
	return (1);
}

/* A write's bytes follow its frame, from the caller's memory. */
static cl_int
vcl_bulk_inband_write(struct vcl_node *n, Vcl__Request *req,
    Vcl__WriteBuffer *m, const void *ptr)
{
	return (vcl_node_send(n, req, ptr, m->size, 0));
}

/* A blocking read's reply lands its bytes straight in ptr. */
static cl_int
vcl_bulk_inband_read(struct vcl_node *n, Vcl__Request *req,
    Vcl__ReadBuffer *m, void *ptr, cl_command_queue q)
{
	(void)q;
	return (vcl_node_call(n, req, NULL, 0, ptr, m->size, NULL));
}

/*
 * A non-blocking read's reply lands its bytes in ptr when it comes (the
 * receiver), before the Notify of its event, which follows it; with no
 * event its failure is left for the queue's next clFinish.
 */
cl_int
vcl_bulk_inband_nbread(struct vcl_node *n, Vcl__Request *req,
    Vcl__ReadBuffer *m, void *ptr, cl_command_queue q, cl_event ev)
{
	cl_int	err;

	vcl_retain(q);
	atomic_fetch_add(&q->inflight, 1);
	if ((err = vcl_node_call_async(n, req, ptr, m->size, ev == NULL ?
	    vcl_mem_read_done_quiet : vcl_mem_read_done, q)) != CL_SUCCESS) {
		atomic_fetch_sub(&q->inflight, 1);
		vcl_queue_unref(q);
	}
	return (err);
}

static const struct vcl_bulk vcl_bulk_inband = {
	"inband",
	vcl_bulk_inband_usable,
	vcl_bulk_inband_write,
	vcl_bulk_inband_read,
	vcl_bulk_inband_nbread
};

/* The ways out of band, best first; in band is always last. */
static const struct vcl_bulk *const vcl_bulk_all[] = {
	&vcl_bulk_shm,
	&vcl_bulk_inband,
	NULL
};

/* How a transfer of size bytes on q to node n goes. */
const struct vcl_bulk *
vcl_bulk_pick(struct vcl_node *n, cl_command_queue q, size_t size)
{
	const struct vcl_bulk *const	*b;

	for (b = vcl_bulk_all; b[1] != NULL; b++)
		if ((*b)->usable(n, q, size))
			break;
	return (*b);
}
