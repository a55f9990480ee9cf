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

/* The ucx backend's placement messages (one host: host byte order). */
#define UCXPEER_CTL_NS	0x7fffffffu
#define UCXPEER_PLACE	(1ull << 63)
enum {
	UCXPEER_RING = 1, UCXPEER_MAPPED, UCXPEER_OFFER, UCXPEER_FILLED,
	UCXPEER_UNUSED, UCXPEER_DONE, UCXPEER_ABORT, UCXPEER_PULL,
	UCXPEER_SOURCE, UCXPEER_NOSOURCE,
};
struct ucxpeer_msg {
	uint32_t	type;
	uint32_t	slot;
	uint64_t	xid;
	uint64_t	off;
	uint64_t	len;
	char		name[32];
};

/* This process as a peer server on a ucx link, its ring of 2 x 1 MiB. */
struct ucxpeer_link {
	struct vcl_ucx		*u;
	struct vcl_ucx_ep	*ep;
	struct conn		 p;
	uint32_t		 ns, srv_ns, link;
	uint8_t			*ring;		/* ours, the server maps it */
	int			 ring_fd;
	struct ucxpeer_msg	 in;
	int			 in_done, in_status, sent;
};

uint32_t ucxpeer_fnv(const void *, size_t);
uint32_t ucxpeer_link_no(int);
void	ucxpeer_link_init(struct ucxpeer_link *);
int	ucxpeer_link_hello(struct ucxpeer_link *, const struct srv *);
int	ucxpeer_link_ring(struct ucxpeer_link *);
int	ucxpeer_link_open(struct ucxpeer_link *, const struct srv *);
void	ucxpeer_link_close(struct ucxpeer_link *);
int	ucxpeer_link_recv(struct ucxpeer_link *, struct ucxpeer_msg *);
int	ucxpeer_link_send(struct ucxpeer_link *, uint32_t, uint64_t,
	    uint64_t, uint64_t, const char *);
int	ucxpeer_link_push(struct ucxpeer_link *, uint64_t, uint64_t,
	    uint64_t, uint64_t, uint64_t);

#endif
