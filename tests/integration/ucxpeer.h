/* ucxpeer.h - raw tests acting as a UCX peer of a vclserver. */
#ifndef UCXPEER_H
#define UCXPEER_H

#include <stdint.h>

#include "rawproto.h"
#include "vcl_ucx.h"

#define UCXPEER_WAIT_S	30	/* one send, message or Notify, by the clock */

int64_t	ucxpeer_now_ms(void);
int	ucxpeer_turn(struct vcl_ucx *, struct conn *);
int	ucxpeer_wait_notify(struct vcl_ucx *, struct conn *, uint64_t,
	    cl_int *);

#endif
