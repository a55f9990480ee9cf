/* vcl_server.h - vclserver internals: server, sessions, completions, ops. */
#ifndef VCL_SERVER_H
#define VCL_SERVER_H

#include <sys/queue.h>

#include <sys/types.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"
#include "vcl_auth.h"
#include "vcl_buf.h"
#include "vcl_frame.h"
#include "vcl_handle.h"
#include "vcl_metrics.h"
#include "vcl_tls.h"
#include "vcl_transport.h"

struct event_base;
struct event;
struct vcl_cmd;
LIST_HEAD(vcl_cmds, vcl_cmd);
struct vcl_peer;
LIST_HEAD(vcl_peers, vcl_peer);
struct vcl_authfail;
struct vcl_held;
TAILQ_HEAD(vcl_helds, vcl_held);
struct vcl_transports;

/* Limits; every one has a safe default and a command-line option. */
struct vcl_limits {
	struct vcl_frame_limits	frame;
	uint64_t		session_bytes;	/* buffers + staging */
	uint64_t		sessions;
	uint64_t		objects;	/* per session */
	uint64_t		preauth;	/* connections not yet proven */
	uint64_t		preauth_addr;	/* ... from one address */
	uint64_t		handshake_s;	/* to prove the token */
	uint64_t		frame_s;	/* a frame, once begun ... */
	uint64_t		frame_rate;	/* ... + its bytes at this B/s */
	uint64_t		idle_s;		/* holding nothing; 0: never */
	uint64_t		send_s;		/* output stuck; 0: never */
	uint64_t		auth_fails;	/* per address a minute */
};

/* Rate-limited logging: a few lines per interval, then a count. */
struct vcl_ratelog {
	time_t			start;
	unsigned		n;
	uint64_t		suppressed;
};

/* What the server serves: one platform, a subset of its devices. */
struct vcl_backend {
	cl_platform_id		 platform;
	cl_device_id		*devices;
	uint32_t		 ndevices;
	Vcl__Welcome		*welcome;	/* snapshot sent to clients */
	int			 is_pocl;	/* PoCL: its known faults */
};

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

#define VCL_LOST_MAX	64	/* lost peers remembered per session */
#define VCL_QSLOTS	16	/* in-flight counters per session */
#define VCL_QSLOT(id)	((id) % VCL_QSLOTS)	/* a queue's (shared) */

enum vcl_in_state {
	VCL_IN_HDR,
	VCL_IN_MSG,
	VCL_IN_BULK,
	VCL_IN_OOB,		/* bulk coming on the link's transport */
};

/*
 * A session is one client connection. It is freed when its connection is
 * gone AND no completion can still arrive for it: refs counts the
 * connection plus every registered OpenCL callback and worker job.
 */
struct vcl_session {
	struct vcl_server	*srv;
	uint64_t		 id;
	int			 fd;
	int			 refs;
	int			 dead;		/* connection closed */
	int			 authed;
	time_t			 born;		/* for the handshake deadline */
	struct timespec		 started;	/* monotonic, for the end log */
	uint64_t		 nreq;		/* requests served */
	char			 addr[64];	/* numeric host, no port */
	time_t			 last_in;	/* last input byte */
	time_t			 last_out;	/* last output byte or empty */
	time_t			 in_since;	/* frame in progress since */
	int			 paused;	/* a job holds input back */
	const char		*close_why;	/* drain: what to log */
	struct vcl_ratelog	 warns;		/* per-request warnings */
	int			 is_peer;	/* a server's peer link */
	uint64_t		 key;		/* peers must present it */
	int			 draining;	/* close once all owed is sent */
	int			 jobs;		/* worker jobs (builds) running */
	char			 peer[300];
	uint8_t			 nonce[VCL_AUTH_NONCE_LEN];
	struct event		*ev_read;
	struct event		*ev_write;
	int			 reading;	/* ev_read is armed */
	struct vcl_link		 link;		/* fd, under TLS if configured */

	/* Input: header, then message, then bulk straight into staging. */
	enum vcl_in_state	 in_state;
	uint8_t			 in_hdr[VCL_FRAME_HDR_LEN];
	size_t			 in_got;
	struct vcl_frame_hdr	 in_frame;
	struct {
		uint8_t		*data;
		size_t		 start, end, cap;
	}			 in;		/* small frames, parsed in place */
	Vcl__Request		*in_req;
	uint8_t			*in_bulk;	/* NULL: discarding */
	int			 in_bulk_borrowed; /* a transfer's staging */
	struct vcl_hobj		*in_xfer;	/* ... of this transfer */
	uint64_t		 in_bulk_got;
	cl_int			 in_bulk_err;

	struct vcl_outq		 outq;
	uint64_t		 out_bytes;
	uint64_t		 out_charged;	/* frame heads queued, charged */
	struct vcl_outq		 outq_held;	/* sent while a reply's bulk
						   goes out in parts: after it */
	int			 out_parting;	/* that bulk is not all queued */

	struct vcl_htab		 handles;
	uint64_t		 refused;	/* ids over the object limit */
	unsigned		 partitions;	/* sub-device partitions made */
	struct vcl_cmds		 inflight;	/* commands awaiting completion */
	struct vcl_helds	 held;		/* held requests, in order */
	struct vcl_helds	 ublocked;	/* ... waiting on user events */
	struct vcl_htab		 pending;	/* event id -> held creator */
	uint64_t		 held_order;
	size_t			 nheld;
	int			 kicking;
	int			 want_kick;	/* a user event was set */
	atomic_uint_fast64_t	 bytes;		/* charged to this session;
						   given back off the loop too
						   (vcl_session_send_now) */
	struct vcl_htab		 early;		/* peers' pushes, events, failures
						   before their MigrateIn or
						   proxy: apart from the ids
						   the client owns */
	char			*lost[VCL_LOST_MAX]; /* peers the client lost */
	int			 nlost;
	uint64_t		 nxfer;		/* transfers waiting for bytes */
	struct vcl_tp_ep	*tp_ep;		/* bulk transport; NULL: tcp */
	uint64_t		 in_oob_xid;	/* VCL_IN_OOB: its transfer */
	int			 in_oob_done;	/* ... its receive completed */
	int			 in_oob_err;	/* ... with this VCL_TP_E* */
	int			 in_oob_placed;	/* ... its chunks written as
						   they came (shared staging) */
	uint8_t			*in_oob_orphan;	/* a released transfer's staging
						   the receive still owns */
	uint64_t		 in_oob_orphan_len;
	struct vcl_hobj		*dirty[16];	/* queues to flush */
	int			 ndirty;
	int			 flush_all;

	/*
	 * Output a completing thread may write straight to the socket (a
	 * finish's or a read's reply, vcl_session_send_now): out_lock orders
	 * it against the loop's pushes to outq and writes to the link.
	 */
	pthread_mutex_t		 out_lock;
	int			 out_closed;	/* link gone (under out_lock) */
	int			 out_blocked;	/* a reply went out in part: its
						   rest goes first (out_lock) */
	int			 fast_ok;	/* plain TCP client link */
	atomic_uint		 qinflight[VCL_QSLOTS]; /* on the inflight
						   list, by queue (VCL_QSLOT) */
	atomic_uint		 ndone;		/* fired, not yet completed */
	atomic_uint_fast64_t	 deferred_sets;	/* a queue's deferred error set */
	struct vcl_shm		*shm;		/* the client's ring (vcl_shm.c) */

	LIST_ENTRY(vcl_session)	 entry;
};
LIST_HEAD(vcl_sessions, vcl_session);

/* A completion: run on the loop thread, pushed from any thread. */
struct vcl_done {
	void			(*fn)(struct vcl_done *);
	struct vcl_session	*s;
	struct vcl_done		*next;
};

struct vcl_server {
	struct event_base	*base;
	struct vcl_limits	 limits;
	struct vcl_backend	 be;
	struct vcl_token	 token;
	int			 have_token;
	int			 trust_binaries;	/* any client binary */
	const char		*node_name;
	SSL_CTX			*tls;		/* NULL: plain TCP */
	SSL_CTX			*tls_peer;	/* connecting to peers */

	int			 lfd;
	struct event		*ev_accept;
	struct event		*ev_backoff;
	struct vcl_sessions	 sessions;
	uint64_t		 nsessions;
	uint64_t		 npreauth;	/* of which not yet authed */
	struct vcl_ratelog	 conn_log;	/* refused, evicted, failed */
	struct vcl_authfail	*authfails;	/* failed proofs by address */
	uint64_t		 session_structs;	/* not yet freed */
	uint64_t		 next_session;
	int			 stopping;
	int			 corked;	/* batch: hold output back */

	/* Completions from OpenCL callbacks and workers. */
	pthread_mutex_t		 done_lock;
	struct vcl_done		*done_head;
	struct vcl_done		**done_tail;
	struct event		*ev_done;
	int			 done_woken;	/* ev_done made active, not run */

	/* Counters for Stats. */
	uint64_t		 objects;
	atomic_uint_fast64_t	 bytes;		/* as a session's */
	uint64_t		 bytes_in;
	uint64_t		 bytes_out;
	uint64_t		 peer_bytes_in;
	uint64_t		 peer_bytes_out;
	uint64_t		 notifies;	/* Notify messages sent */
	struct vcl_peers	 peers;		/* links to other servers */
	struct vcl_metrics	 metrics;	/* per opcode, held, ... */
	uint64_t		 peer_bytes_oob;	/* of which out of band */
	uint64_t		 peer_bytes_shared; /* ... placed (shared staging) */
	uint64_t		 client_bytes_shared; /* through client rings */
	struct vcl_transports	*tps;		/* bulk transports offered */

	struct vcl_workers	*workers;
	struct vcl_workers	*waiters;	/* vcl_cmd_wait; never freed */
	struct vcl_workers	*movers;	/* fills and copies off the loop */
	struct vcl_workers	*submitters;	/* queues' strands (vcl_submit.c) */
	void			(*reload)(struct vcl_server *);	/* SIGHUP */
	atomic_uint_fast64_t	 fast_replies;	/* answered from the thread
						   that saw the completion */
	uint64_t		 polled;	/* completions the loop saw
						   polling (vcl_cmd_poll) */
	void			*zeros;		/* read-only zero pages */
	size_t			 zeros_len;	/* the largest device alloc */
};

/* One entry of the dispatch table, indexed by the Request oneof case. */
struct vcl_bulk {
	uint8_t		*data;	/* handler takes it by setting it NULL */
	uint64_t	 len;
	cl_int		 err;	/* staging could not be had: bytes dropped */
	int		 borrowed; /* landed in a transfer's own staging */
	int		 placed;   /* ... written to its buffer chunk by chunk
				      from shared staging (vcl_peer_chunk_in) */
};

/* A request that may not run yet (see vcl_hold.c). */
struct vcl_held {
	Vcl__Request		*req;
	struct vcl_bulk		 bulk;
	uint64_t		 order;		/* arrival order */
	uint64_t		 charged;	/* its message, charged */
	uint64_t		 qid;		/* its queue, if that exists */
	uint64_t		 produces;	/* the event it creates */
	struct vcl_held		*blocker;	/* NULL: a user event */
	struct vcl_helds	 waiters;	/* held requests waiting on it */
	TAILQ_ENTRY(vcl_held)	 entry;		/* session order */
	TAILQ_ENTRY(vcl_held)	 wentry;	/* blocker's waiters, ublocked */
};

#define VCL_HOLD_MAX	65536	/* held requests before input stops */
typedef void (*vcl_op_fn)(struct vcl_session *, const Vcl__Request *,
    struct vcl_bulk *);

#define VCL_OP_BULK	0x1	/* the call may carry bulk bytes */
#define VCL_OP_PREAUTH	0x2	/* allowed before the handshake */
#define VCL_OP_PEER	0x4	/* only on peer links (server to server) */
#define VCL_OP_ENQUEUE	0x8	/* a command: its message's field 1 is
				   "Enqueue q" (queue, event, wait list) */
#define VCL_OP_LINK	0x10	/* on client and peer links alike */

struct vcl_op {
	vcl_op_fn	 fn;
	const char	*name;
	unsigned	 flags;
};

/* vcl_outq.c */
uint64_t vcl_outq_push(struct vcl_outq *, const ProtobufCMessage *,
	    const uint8_t *, uint64_t, void (*)(void *), void (*)(void *),
	    void *);
uint64_t vcl_outq_push_part(struct vcl_outq *, const ProtobufCMessage *,
	    uint64_t, const uint8_t *, uint64_t, void (*)(void *),
	    void (*)(void *), void *);
uint64_t vcl_outq_push_front(struct vcl_outq *, struct vcl_buf *, uint64_t,
	    const uint8_t *, uint64_t, void (*)(void *), void *);
ssize_t	vcl_outq_write(struct vcl_outq *, struct vcl_link *, int *,
	    uint64_t *);
void	vcl_outq_clear(struct vcl_outq *);

/* vcl_peer.c */
void	vcl_peer_send(struct vcl_server *, const char *, Vcl__Request *,
	    const uint8_t *, uint64_t, void (*)(void *), void (*)(void *),
	    void *);
void	vcl_peer_close_all(struct vcl_server *);
void	vcl_peer_check_all(struct vcl_server *, time_t);
size_t	vcl_peer_stats(struct vcl_server *, Vcl__PeerLinkStat ***);
void	vcl_peer_stats_free(Vcl__PeerLinkStat **, size_t);

/* vcl_transports.c */
struct vcl_tp_offers {
	Vcl__TransportOffer	 o[VCL_TP_MAX];
	Vcl__TransportOffer	*p[VCL_TP_MAX];
	uint8_t			 addr[VCL_TP_MAX][VCL_TP_ADDR_MAX];
};
void	vcl_transports_register(void);
int	vcl_transports_init(struct vcl_server *, const char *, const char *,
	    char *, size_t);
void	vcl_transports_free(struct vcl_server *);
void	vcl_transports_progress(struct vcl_server *);
void	vcl_transports_kick(struct vcl_server *, struct vcl_tp *);
size_t	vcl_transports_names(struct vcl_server *, char **, size_t);
size_t	vcl_transports_offer(struct vcl_server *, unsigned,
	    struct vcl_tp_offers *);
struct vcl_tp_ep *vcl_transports_connect(struct vcl_server *, const char *,
	    struct vcl_link *, const uint8_t *, size_t, char *, size_t);
int	vcl_transports_hello(struct vcl_session *, const Vcl__Hello *,
	    Vcl__TransportOffer *, uint8_t *);
void	vcl_op_transport_ctl(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);

/* vcl_dispatch.c */
const struct vcl_op	*vcl_dispatch_lookup(unsigned);
unsigned		 vcl_dispatch_max(void);
const Vcl__Enqueue	*vcl_dispatch_enqueue(const Vcl__Request *);

/* vcl_server.c */
void	vcl_server_done_push(struct vcl_server *, struct vcl_done *);
void	vcl_server_done_push_lazy(struct vcl_server *, struct vcl_done *);
void	vcl_server_done_run(struct vcl_server *);
void	vcl_server_flush_all(struct vcl_server *);
double	vcl_since_ms(const struct timespec *);
time_t	vcl_server_now(void);
int	vcl_server_ratelog(struct vcl_ratelog *, const char *);
void	vcl_server_ratelog_flush(struct vcl_ratelog *, const char *);
int	vcl_server_auth_refused(struct vcl_server *, const char *);
void	vcl_server_auth_failed(struct vcl_server *, const char *);

#define VCL_SLOW_MS	5.0	/* the loop logs anything that holds it this long */

/* vcl_session.c */
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
void	vcl_session_flush_queue(struct vcl_session *, struct vcl_hobj *);
int	vcl_session_flush_now(struct vcl_session *, struct vcl_hobj *);
void	vcl_session_let_go(struct vcl_session *, struct vcl_hobj *);
void	vcl_session_settled(struct vcl_session *, struct vcl_hobj *);

/* vcl_hold.c */
const Vcl__Enqueue *vcl_hold_enqueue_of(const Vcl__Request *);
int	vcl_hold_init(struct vcl_session *);
void	vcl_hold_submit(struct vcl_session *, Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_hold_kick(struct vcl_session *);
void	vcl_hold_drop(struct vcl_session *);
int	vcl_session_send(struct vcl_session *, const Vcl__ToClient *,
	    const uint8_t *, uint64_t, void (*)(void *), void *);
int	vcl_session_send_part(struct vcl_session *, const Vcl__ToClient *,
	    uint64_t, const uint8_t *, uint64_t, int, void (*)(void *),
	    void *);
int	vcl_session_parting(struct vcl_session *);
struct vcl_fast;
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

/* vcl_backend.c */
int	vcl_backend_open(struct vcl_backend *, const char *, const char *,
	    char *, size_t);
void	vcl_backend_close(struct vcl_backend *);
uint64_t vcl_backend_global_mem(const struct vcl_backend *);
size_t	vcl_backend_max_alloc(const struct vcl_backend *);

/* vcl_worker.c */
struct vcl_workers *vcl_workers_new(int);
int	vcl_workers_run(struct vcl_workers *, void (*)(void *), void *);
void	vcl_workers_free(struct vcl_workers *);

/* Ops, one file per family. */
void	vcl_op_hello(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_release(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_stats(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_get_info(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_context(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
/*
 * A device index on the wire names a root device (below be.ndevices) or,
 * with this bit, a sub-device of the session by its id.
 */
#define VCL_SUBDEVICE_BIT	0x80000000u
#define VCL_SUBDEVICES_MAX	64	/* sub-devices one partition makes */
cl_device_id	 vcl_session_device(struct vcl_session *, uint32_t,
		     uint32_t *);
uint32_t	 vcl_session_device_index(struct vcl_session *, cl_device_id);
void	vcl_op_create_sub_devices(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_queue(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_flush(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_finish(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_write_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_read_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_copy_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_fill_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_sub_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_write_buffer_rect(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_read_buffer_rect(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_copy_buffer_rect(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_program(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_build_program(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_program_from(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_link_program(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_get_binary(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_set_spec_constant(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_kernel(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_kernels(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_ndrange(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_marker(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_user_event(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_set_user_event_status(struct vcl_session *,
	    const Vcl__Request *, struct vcl_bulk *);
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
struct vcl_tp_ep *vcl_peer_placeable(struct vcl_server *, const char *,
	    uint64_t);
int	vcl_peer_send_placed(struct vcl_server *, const char *, Vcl__Request *,
	    uint64_t, vcl_tp_slot_fn, vcl_tp_done_fn, void *);

/* vcl_op_mem.c */
struct vcl_hobj *vcl_mem_range_get(struct vcl_session *, uint64_t, uint64_t,
	    uint64_t, cl_int *);
void	vcl_mem_release(struct vcl_session *, cl_mem, uint64_t);

/* vcl_op_image.c */
void	vcl_op_create_sampler(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_image(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_image_formats(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_read_image(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_write_image(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_copy_image(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_fill_image(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_copy_image_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
int	vcl_image_type_ok(uint32_t);
uint32_t vcl_image_mem_type(cl_mem);
cl_int	vcl_image_xfer(cl_command_queue, const struct vcl_hobj *, int,
	    uint64_t, uint64_t, void *, cl_uint, const cl_event *, cl_event *);

/* vcl_op_exec.c */
cl_int	vcl_exec_arg(struct vcl_session *, struct vcl_hobj *,
	    const Vcl__KernelArg *);
void	vcl_exec_kernel_drop(struct vcl_session *, struct vcl_hobj *);

/* vcl_enqueue.c: the common part of every enqueue. */
struct vcl_enq {
	struct vcl_hobj	*q;
	cl_event	*wait;
	cl_uint		 nwait;
	cl_event	 ev;
	uint64_t	 event_id;
	int		 quiet;		/* event_id: no callback, no Notify */
};

/*
 * What to do when a command completes, on the loop thread: answer a read
 * with its bytes, free a write's staging, answer a finish; then notify the
 * client's event, if it named one.
 */
enum vcl_cmd_type {
	VCL_CMD_PLAIN,
	VCL_CMD_READ,
	VCL_CMD_WRITE,
	VCL_CMD_FINISH,
	VCL_CMD_PUSH,		/* then push the read bytes to a peer */
	VCL_CMD_FORWARD,	/* then tell a peer the event's status */
	VCL_CMD_ARRIVE,		/* migrated bytes written: complete the
				   client's event (a user event here) */
	VCL_CMD_CHUNK,		/* a chunk of a large read (vcl_op_mem.c) */
	VCL_CMD_SLOT_OUT,	/* a migration's chunk read into a peer's
				   shared staging (vcl_op_peer.c) */
	VCL_CMD_SLOT_IN,	/* a chunk written from our shared staging */
	VCL_CMD_SHM,		/* a client's write or read through its
				   shared ring (vcl_shm.c): reply when done */
};
/* A reply written off the loop (vcl_session_send_now). */
struct vcl_fast {
	uint64_t		 queue;		/* its command's */
	uint64_t		 gen;		/* deferred_sets when enqueued;
						   UINT64_MAX: not a finish */
	int			 owes;		/* a Notify will follow it */
	int			 uncounted;	/* off qinflight already */
	int			 partial;	/* its rest is the loop's to send */
	struct vcl_stage	*stage;		/* a read's: its charge is given
						   back as the reply goes */
	struct vcl_buf		 head;		/* its packed head */
	uint64_t		 sent;		/* bytes of it written */
};

struct vcl_cmd {
	struct vcl_done		 d;		/* must stay first */
	enum vcl_cmd_type	 type;
	cl_event		 ev;
	cl_int			 status;
	uint64_t		 event_id;
	uint64_t		 queue_id;
	int			 profiling;
	uint64_t		 seq;
	struct vcl_stage	*stage;		/* read/write bytes */
	atomic_int		 claimed;	/* callback, waiter or reaper won */
	atomic_int		 refs;		/* owner + pending watchers */
	cl_event		 wait_ev;	/* the waiter's reference */
	int			 inflight;	/* on the session's list */
	void			(*then)(struct vcl_cmd *); /* once finished,
						   before completing: hands c
						   on (a peer's push or event),
						   clears itself, completes c
						   later */
	char			*dest;		/* PUSH/FORWARD: peer address */
	uint64_t		 dest_session;
	uint64_t		 dest_key;
	uint64_t		 xid;		/* transfer or proxy id; CHUNK:
						   its index */
	void			*job;		/* CHUNK: its read; PUSH, SLOT_*:
						   its placed transfer */
	int			 fast;		/* its reply may go from the
						   completing thread */
	int			 answered;	/* ... and went (in part) */
	int			 queued;	/* counted in ndone */
	struct vcl_fast		 fr;		/* that reply */
	uint64_t		 shm_len;	/* SHM: its bytes; xid: slot + 1 */
	int			 shm_write;	/* SHM: a write */
	LIST_ENTRY(vcl_cmd)	 entry;
};

/* Host memory holding a transfer's bytes, charged to its session. */
struct vcl_stage {
	struct vcl_session	*s;
	uint8_t			*data;
	uint64_t		 size;
	int			 uncharged;	/* given back already */
};
struct vcl_stage *vcl_stage_new(struct vcl_session *, uint8_t *, uint64_t);
uint8_t	*vcl_stage_alloc(struct vcl_session *, struct vcl_hobj *, uint64_t,
	    cl_int, cl_int *);
struct vcl_stage *vcl_stage_get(struct vcl_session *, struct vcl_hobj *,
	    uint64_t, cl_int, cl_int *);
struct vcl_hobj *vcl_queue_context(struct vcl_session *,
	    const struct vcl_hobj *);
void	vcl_stage_free(void *);

cl_int	vcl_enq_begin(struct vcl_session *, const Vcl__Enqueue *,
	    struct vcl_enq *);
cl_int	vcl_enq_begin_queue(struct vcl_session *, const Vcl__Enqueue *,
	    struct vcl_enq *, struct vcl_hobj *);
cl_int	vcl_cmd_watch(struct vcl_session *, struct vcl_cmd *);
void	vcl_cmd_finish(struct vcl_cmd *);
void	vcl_enq_end(struct vcl_session *, struct vcl_enq *, cl_int,
	    struct vcl_cmd *);
struct vcl_cmd *vcl_cmd_new(enum vcl_cmd_type, uint64_t);
void	vcl_cmd_reap(struct vcl_session *);
void	vcl_mem_chunk_done(struct vcl_cmd *);
extern uint64_t vcl_read_chunk;
extern uint64_t vcl_poll_us;

/* vcl_shm.c: a client's ring of shared slots. */
struct vcl_shm;
extern uint64_t vcl_shm_ring_max;
void	vcl_shm_free(struct vcl_shm *);
int	vcl_shm_offered(const struct vcl_session *);
void	vcl_shm_done(struct vcl_cmd *);
void	vcl_shm_release(struct vcl_cmd *);
void	vcl_op_shm_ring(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_shm_write(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_shm_read(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);

#endif
