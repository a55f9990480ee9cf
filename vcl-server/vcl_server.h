/* vcl_server.h - vclserver core: limits, the session, the server, completions. */
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
#include "vcl_backend.h"
#include "vcl_frame.h"
#include "vcl_handle.h"
#include "vcl_metrics.h"
#include "vcl_outq.h"
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
struct vcl_workers;
struct vcl_shm;
struct vcl_pinuse;

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
	uint64_t		release_backlog; /* waiting releases; past it
						   no new programs */
};

/* Rate-limited logging: a few lines per interval, then a count. */
struct vcl_ratelog {
	time_t			start;
	unsigned		n;
	uint64_t		suppressed;
};


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
 * Where a session's requests are decoded (vcl_session_req_unpack): a bump
 * region, reset when every allocation in it is freed; what does not fit
 * goes to malloc. Loop thread only.
 */
struct vcl_arena {
	ProtobufCAllocator	 pa;		/* allocator_data: this arena */
	uint8_t			*base;		/* VCL_ARENA_SIZE, at first use */
	size_t			 used;
	uint64_t		 live;		/* its allocations not freed */
	uint64_t		 spills;	/* allocations that went to malloc */
	const Vcl__Request	*sole;		/* alone in it, unspilled... */
	uint64_t		 sole_live;	/* ... with this many pieces */
	uint64_t		 decoded;	/* the last decode's bytes */
	uint64_t		 budget;	/* ... at most */
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
	struct vcl_arena	 arena;		/* in_req and held requests */
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
	struct vcl_cmds		 qcmds[VCL_QSLOTS]; /* the same, by queue
						   (VCL_QSLOT): vcl_cmd_park */
	struct vcl_cmd		*parked;	/* finishes (and Notify) waiting
						   for an older command's
						   completion */
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
	int			 in_oob_pull;	/* ... it could be pulled
						   (direct mode): 1 */
	uint8_t			*in_oob_orphan;	/* a released transfer's staging
						   the receive still owns */
	uint64_t		 in_oob_orphan_len;
	struct vcl_hobj		*dirty[16];	/* queues to flush */
	int			 ndirty;
	int			 flush_all;
	struct vcl_hobj		*strands[16];	/* queues with launches handed
						   to their strand since the
						   last drain (vcl_submit.c) */
	int			 nstrands;
	uint32_t		 launch_run;	/* launches in a row: a run of
						   them is worth a strand */

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
	struct vcl_pinuse	*pinuse;	/* its pinned bytes (vcl_pin.c) */

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
	uint64_t		 peer_bytes_direct; /* pulled (direct mode) */
	uint64_t		 peer_direct;	/* migrations pulled */
	uint64_t		 peer_direct_fallbacks; /* pullable, ring */
	struct vcl_transports	*tps;		/* bulk transports offered */

	struct vcl_workers	*workers;
	struct vcl_workers	*waiters;	/* vcl_cmd_wait; never freed */
	struct vcl_workers	*movers;	/* fills and copies off the loop */
	struct vcl_workers	*submitters;	/* queues' strands (vcl_submit.c) */
	struct vcl_workers	*releasers;	/* slow runtime releases */
	atomic_uint_fast64_t	 release_backlog; /* ... queued or running */
	atomic_uint_fast64_t	 release_bytes;	/* ... their bytes (estimate) */
	uint64_t		 release_refused; /* programs, builds refused
						   for the backlog */
	void			(*reload)(struct vcl_server *);	/* SIGHUP */
	atomic_uint_fast64_t	 fast_replies;	/* answered from the thread
						   that saw the completion */
	uint64_t		 polled;	/* completions the loop saw
						   polling (vcl_cmd_poll) */
	void			*zeros;		/* read-only zero pages */
	size_t			 zeros_len;	/* the largest device alloc */
};

/* A request's bulk bytes, as the dispatcher hands them to its handler. */
struct vcl_bulk {
	uint8_t		*data;	/* handler takes it by setting it NULL */
	uint64_t	 len;
	cl_int		 err;	/* staging could not be had: bytes dropped */
	int		 borrowed; /* landed in a transfer's own staging */
	int		 placed;   /* ... written to its buffer chunk by chunk
				      from shared staging (vcl_peer_chunk_in) */
};

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

#endif
