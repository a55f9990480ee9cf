/* vcl_op_misc.h - handlers: hello, release, stats, info. */
#ifndef VCL_OP_MISC_H
#define VCL_OP_MISC_H

#include "vcl.pb-c.h"

struct vcl_bulk;
struct vcl_session;

void	vcl_op_hello(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_release(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_stats(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_get_info(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);

#endif
