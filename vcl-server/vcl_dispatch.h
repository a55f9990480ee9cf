/* vcl_dispatch.h - the dispatch table: Request oneof case -> handler. */
#ifndef VCL_DISPATCH_H
#define VCL_DISPATCH_H

#include "vcl.pb-c.h"

struct vcl_bulk;
struct vcl_session;

/* A handler: runs one request; it may take the request's bulk bytes. */
typedef void (*vcl_op_fn)(struct vcl_session *, const Vcl__Request *,
    struct vcl_bulk *);

#define VCL_OP_BULK	0x1	/* the call may carry bulk bytes */
#define VCL_OP_PREAUTH	0x2	/* allowed before the handshake */
#define VCL_OP_PEER	0x4	/* only on peer links (server to server) */
#define VCL_OP_ENQUEUE	0x8	/* a command: its message's field 1 is
				   "Enqueue q" (queue, event, wait list) */
#define VCL_OP_LINK	0x10	/* on client and peer links alike */
#define VCL_OP_LAUNCH	0x20	/* may run beside the session's strands
				   (others drain them first: vcl_submit.c) */

/* One entry of the dispatch table, indexed by the Request oneof case. */
struct vcl_op {
	vcl_op_fn	 fn;
	const char	*name;
	unsigned	 flags;
};

const struct vcl_op	*vcl_dispatch_lookup(unsigned);
unsigned		 vcl_dispatch_max(void);
const Vcl__Enqueue	*vcl_dispatch_enqueue(const Vcl__Request *);

#endif
