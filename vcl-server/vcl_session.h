/* vcl_session.h - a client or peer connection: input, replies, objects. */
#ifndef VCL_SESSION_H
#define VCL_SESSION_H

#include <stdint.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"
#include "vcl_handle.h"

struct vcl_buf;
struct vcl_bulk;
struct vcl_fast;
struct vcl_launch;
struct vcl_server;
struct vcl_session;
struct vcl_submit;

struct vcl_session *vcl_session_new(struct vcl_server *, int, const char *);
void	vcl_session_ref(struct vcl_session *);
void	vcl_session_unref(struct vcl_session *);
void	vcl_session_close(struct vcl_session *, const char *);
void	vcl_session_drain(struct vcl_session *);
void	vcl_session_refuse(struct vcl_session *, const char *);
int	vcl_session_authed(struct vcl_session *);
void	vcl_session_warn(struct vcl_session *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	vcl_session_pause(struct vcl_session *);
void	vcl_session_resume(struct vcl_session *);
void	vcl_session_flush(struct vcl_session *);
void	vcl_session_run(struct vcl_session *, Vcl__Request *,
	    struct vcl_bulk *, int);
void	vcl_session_flush_queues(struct vcl_session *);
void	vcl_session_req_free(struct vcl_session *, Vcl__Request *);
void	vcl_session_flush_queue(struct vcl_session *, struct vcl_hobj *);
struct vcl_submit *vcl_session_strand(struct vcl_session *, struct vcl_hobj *);
int	vcl_session_strand_launch(struct vcl_session *, struct vcl_hobj *,
	    const struct vcl_launch *);
void	vcl_session_quiesce(struct vcl_session *);
int	vcl_session_flush_now(struct vcl_session *, struct vcl_hobj *);
int	vcl_session_next_up(struct vcl_session *, uint64_t, int);
void	vcl_session_let_go(struct vcl_session *, struct vcl_hobj *);
void	vcl_session_settled(struct vcl_session *, struct vcl_hobj *);
int	vcl_session_send(struct vcl_session *, const Vcl__ToClient *,
	    const uint8_t *, uint64_t, void (*)(void *), void *);
int	vcl_session_send_part(struct vcl_session *, const Vcl__ToClient *,
	    uint64_t, const uint8_t *, uint64_t, int, void (*)(void *),
	    void *);
int	vcl_session_parting(struct vcl_session *);
int	vcl_session_send_now(struct vcl_session *, const Vcl__ToClient *,
	    const uint8_t *, uint64_t, struct vcl_fast *);
void	vcl_session_send_rest(struct vcl_session *, struct vcl_buf *,
	    uint64_t, const uint8_t *, uint64_t, void (*)(void *), void *);
void	vcl_session_reply(struct vcl_session *, uint64_t, cl_int,
	    const char *);
void	vcl_session_reply_msg(struct vcl_session *, Vcl__Reply *);
void	vcl_session_notify(struct vcl_session *, uint64_t, cl_int, cl_event,
	    int);
int	vcl_session_charge(struct vcl_session *, uint64_t);
void	vcl_session_charge_over(struct vcl_session *, uint64_t);
void	vcl_session_uncharge(struct vcl_session *, uint64_t);
void	vcl_session_mark_dirty(struct vcl_session *, struct vcl_hobj *);
struct vcl_hobj *vcl_session_add(struct vcl_session *, uint64_t,
	    enum vcl_kind);
void	vcl_session_release(struct vcl_session *, struct vcl_hobj *);
void	vcl_session_program_drop(struct vcl_server *, cl_program);
int	vcl_session_release_full(struct vcl_server *);

/*
 * A device index on the wire names a root device (below be.ndevices) or,
 * with this bit, a sub-device of the session by its id.
 */
#define VCL_SUBDEVICE_BIT	0x80000000u
#define VCL_SUBDEVICES_MAX	64	/* sub-devices one partition makes */

cl_device_id	 vcl_session_device(struct vcl_session *, uint32_t,
		     uint32_t *);
uint32_t	 vcl_session_device_index(struct vcl_session *, cl_device_id);

#endif
