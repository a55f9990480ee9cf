/*
 * vcl_outq.c - a queue of outgoing frames: packed heads, each optionally
 * followed by bulk bytes sent straight from their memory, written with
 * writev without blocking. Used by client sessions and peer links.
 */
#include <sys/uio.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_outq.h"
#include "vcl_tls.h"

#define VCL_OUTQ_COALESCE	(64u << 10)

/* Free an item: done (sent) or fail (dropped) tells its owner. */
static void
vcl_out_free(struct vcl_out *o, int sent)
{
	if (!sent && o->fail != NULL)
		o->fail(o->done_arg);
	else if (o->done != NULL)
		o->done(o->done_arg);
	vcl_buf_free(&o->head);
	free(o);
}

/*
 * Queue a message and optional bulk bytes. Small messages coalesce into
 * the tail item so one writev carries many. done(arg) runs once the bulk
 * is sent, fail(arg) if it is dropped (fail NULL: done either way).
 * Returns the bytes queued, or 0 when out of memory (fail/done ran).
 */
uint64_t
vcl_outq_push(struct vcl_outq *q, const ProtobufCMessage *m,
    const uint8_t *bulk, uint64_t bulk_len, void (*done)(void *),
    void (*fail)(void *), void *arg)
{
	return (vcl_outq_push_part(q, m, bulk_len, bulk, bulk_len, done, fail,
	    arg));
}

/*
 * Queue part of a frame: m's head announcing frame_bulk bytes of bulk and
 * the first bulk_len of them, or (m NULL) the next bulk_len bytes of the
 * frame whose head went before. The caller sends the frame's bulk whole
 * before any other frame. Returns as vcl_outq_push.
 */
uint64_t
vcl_outq_push_part(struct vcl_outq *q, const ProtobufCMessage *m,
    uint64_t frame_bulk, const uint8_t *bulk, uint64_t bulk_len,
    void (*done)(void *), void (*fail)(void *), void *arg)
{
	struct vcl_out	*o = TAILQ_LAST(q, vcl_outq);
	size_t		 before;

	/* An item carries one owner's callbacks: coalesce only into none. */
	if (m == NULL || o == NULL || o->bulk_len != 0 || o->done != NULL ||
	    o->fail != NULL || o->head.len > VCL_OUTQ_COALESCE) {
		if ((o = calloc(1, sizeof *o)) == NULL)
			goto oom;
		TAILQ_INSERT_TAIL(q, o, entry);
	}
	before = o->head.len;
	if (m != NULL && vcl_buf_pack(&o->head, m, frame_bulk) != 0)
		goto oom;
	o->bulk = bulk;
	o->bulk_len = bulk_len;
	o->done = done;
	o->fail = fail;
	o->done_arg = arg;
	return (o->head.len - before + bulk_len);
oom:
	if (fail != NULL)
		fail(arg);
	else if (done != NULL)
		done(arg);
	return (0);
}

/*
 * Queue, in front of everything, the rest of a frame another thread began
 * writing: head (taken over, emptied) and bulk, of which the first sent
 * bytes are out. done(arg) runs once it is sent or dropped. Returns the
 * bytes queued, or 0 when out of memory (done ran).
 */
uint64_t
vcl_outq_push_front(struct vcl_outq *q, struct vcl_buf *head, uint64_t sent,
    const uint8_t *bulk, uint64_t bulk_len, void (*done)(void *), void *arg)
{
	struct vcl_out	*o;

	if ((o = calloc(1, sizeof *o)) == NULL) {
		vcl_buf_free(head);
		if (done != NULL)
			done(arg);
		return (0);
	}
	o->head = *head;
	memset(head, 0, sizeof *head);
	o->bulk = bulk;
	o->bulk_len = bulk_len;
	o->sent = sent;
	o->done = done;
	o->done_arg = arg;
	TAILQ_INSERT_HEAD(q, o, entry);
	return (o->head.len + bulk_len - sent);
}

/*
 * Write as much as the link takes, max bytes at most (VCL_OUTQ_WRITE_MAX
 * from the loop): a reader that keeps pace never makes the socket say
 * EAGAIN, and a 256 MiB read's reply then held the loop, and every other
 * session, for its whole send (up to 109 ms on an H100 host); the caller
 * writes the rest when the socket next takes more. Returns the bytes
 * written, or -1 on a
 * socket error (errno set); *empty tells whether the queue drained and
 * *heads (when not NULL) gets the frame-head bytes of the items sent and
 * freed, which a session charges while they are queued.
 */
ssize_t
vcl_outq_write(struct vcl_outq *q, struct vcl_link *l, uint64_t max,
    int *empty, uint64_t *heads)
{
	struct iovec	 iov[64];
	struct vcl_out	*o;
	ssize_t		 n, total = 0;
	uint64_t	 off, left, room;
	int		 cnt;

	if (heads != NULL)
		*heads = 0;
	while ((o = TAILQ_FIRST(q)) != NULL && (uint64_t)total < max) {
		cnt = 0;
		room = max - (uint64_t)total;
		TAILQ_FOREACH(o, q, entry) {
			if (cnt >= 63 || room == 0)
				break;
			if (o->sent < o->head.len) {
				iov[cnt].iov_base = o->head.data + o->sent;
				iov[cnt++].iov_len = o->head.len - o->sent;
			}
			if (o->bulk_len > 0 && room > 0) {
				off = o->sent > o->head.len ?
				    o->sent - o->head.len : 0;
				left = o->bulk_len - off;
				if (left > room)
					left = room;
				iov[cnt].iov_base = (uint8_t *)o->bulk + off;
				iov[cnt++].iov_len = (size_t)left;
				room -= left;
			}
		}
		n = vcl_link_writev(l, iov, cnt);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0)
			return (-1);
		total += n;
		while ((o = TAILQ_FIRST(q)) != NULL && n > 0) {
			left = o->head.len + o->bulk_len - o->sent;
			if ((uint64_t)n < left) {
				o->sent += (uint64_t)n;
				break;
			}
			n -= (ssize_t)left;
			if (heads != NULL)
				*heads += o->head.len;
			TAILQ_REMOVE(q, o, entry);
			vcl_out_free(o, 1);
		}
	}
	*empty = TAILQ_EMPTY(q);
	return (total);
}

/* Drop every queued item (the connection is gone). */
void
vcl_outq_clear(struct vcl_outq *q)
{
	struct vcl_out	*o;

	while ((o = TAILQ_FIRST(q)) != NULL) {
		TAILQ_REMOVE(q, o, entry);
		vcl_out_free(o, 0);
	}
}
