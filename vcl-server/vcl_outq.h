/* vcl_outq.h - a session's output queue: frame heads and bulk bytes. */
#ifndef VCL_OUTQ_H
#define VCL_OUTQ_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stdint.h>

#include "vcl.pb-c.h"
#include "vcl_buf.h"

struct vcl_link;

/*
 * Bytes the loop writes to one link per turn: 16 MiB, as a read callback
 * takes of input. On an H100 host the loop's flushes then took 12 ms at
 * most and 256 MiB reads kept their speed, where 4 MiB cost them 3-8%
 * (docs/performance.md, "Output in turns").
 */
#define VCL_OUTQ_WRITE_MAX	(16u << 20)

/* One item of output: a packed frame head, optional bulk bytes after it. */
struct vcl_out {
	struct vcl_buf		 head;
	const uint8_t		*bulk;
	uint64_t		 bulk_len;
	uint64_t		 sent;		/* of head.len + bulk_len */
	void			(*done)(void *);	/* sent */
	void			(*fail)(void *);	/* dropped */
	void			*done_arg;
	TAILQ_ENTRY(vcl_out)	 entry;
};
TAILQ_HEAD(vcl_outq, vcl_out);

uint64_t vcl_outq_push(struct vcl_outq *, const ProtobufCMessage *,
	    const uint8_t *, uint64_t, void (*)(void *), void (*)(void *),
	    void *);
uint64_t vcl_outq_push_part(struct vcl_outq *, const ProtobufCMessage *,
	    uint64_t, const uint8_t *, uint64_t, void (*)(void *),
	    void (*)(void *), void *);
uint64_t vcl_outq_push_front(struct vcl_outq *, struct vcl_buf *, uint64_t,
	    const uint8_t *, uint64_t, void (*)(void *), void *);
ssize_t	vcl_outq_write(struct vcl_outq *, struct vcl_link *, uint64_t,
	    int *, uint64_t *);
void	vcl_outq_clear(struct vcl_outq *);

#endif
