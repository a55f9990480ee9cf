/* vcl_peer.h - links to peer servers: send, place, check, count. */
#ifndef VCL_PEER_H
#define VCL_PEER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "vcl.pb-c.h"
#include "vcl_transport.h"

struct vcl_server;
struct vcl_session;

void	vcl_peer_send(struct vcl_session *, const char *, Vcl__Request *,
	    const uint8_t *, uint64_t, void (*)(void *), void (*)(void *),
	    void *);
void	vcl_peer_session_gone(struct vcl_session *);
void	vcl_peer_close_all(struct vcl_server *);
void	vcl_peer_check_all(struct vcl_server *, time_t);
size_t	vcl_peer_stats(struct vcl_server *, Vcl__PeerLinkStat ***);
void	vcl_peer_stats_free(Vcl__PeerLinkStat **, size_t);
struct vcl_tp_ep *vcl_peer_placeable(struct vcl_server *, const char *,
	    uint64_t, uint64_t *);
void	vcl_peer_unhold(struct vcl_server *, uint64_t);
int	vcl_peer_send_placed(struct vcl_server *, const char *, Vcl__Request *,
	    uint64_t, const void *, vcl_tp_slot_fn, vcl_tp_done_fn, void *);

#endif
