/* vcl_op_peer.h - handlers: migration and peers' pushes and events. */
#ifndef VCL_OP_PEER_H
#define VCL_OP_PEER_H

#include <stdint.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"

struct vcl_bulk;
struct vcl_cmd;
struct vcl_hobj;
struct vcl_session;

void	vcl_op_migrate_out(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_migrate_in(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_forward_event(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_proxy_event(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_peer_push(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_peer_event(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_peer_fail(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
struct vcl_hobj *vcl_op_peer_push_dst(struct vcl_session *,
	    const Vcl__Request *, uint64_t);
void	vcl_peer_forward(struct vcl_cmd *);
void	vcl_peer_settle(struct vcl_session *, struct vcl_hobj *, cl_int);
void	vcl_peer_let_go(struct vcl_session *, struct vcl_hobj *);
void	vcl_peer_link_lost(struct vcl_session *);
void	vcl_peer_xfer_release(struct vcl_session *, struct vcl_hobj *);
void	vcl_peer_slot_done(struct vcl_cmd *);
void	vcl_peer_place_drop(struct vcl_cmd *);
void	vcl_peer_chunk_in(void *, uint64_t, void *, uint64_t, uint64_t);
int	vcl_peer_pullable(struct vcl_session *);
int	vcl_peer_pull_in(void *, long, uint64_t, uint64_t, uint64_t);

#endif
