/* vcl_session.h - a client or peer connection: input, replies, objects. */
#ifndef VCL_SESSION_H
#define VCL_SESSION_H

#include <sys/queue.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"
#include "vcl_frame.h"
#include "vcl_handle.h"
#include "vcl_op_mem.h"
#include "vcl_outq.h"
#include "vcl_server.h"
#include "vcl_tls.h"

struct vcl_bincheck;
struct vcl_buf;
struct vcl_bulk;
struct vcl_fast;
struct vcl_launch;
struct vcl_server;
struct vcl_session;
struct vcl_submit;

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
 * A WriteBuffer whose bulk comes on the control stream, copied to its
 * buffer chunk by chunk as the bytes arrive (vcl_op_mem.c, "Chunked
 * writes"): the device reads from the bulk's staging meanwhile. Where
 * ring is set the staging is that many bytes, nslots chunks the
 * bytes cycle through: a slot takes new bytes once the copy out of it
 * (slot[i]) is done.
 */
struct vcl_wchunk {
	const Vcl__Request	*req;		/* NULL: none */
	uint64_t		 qid;		/* its queue */
	uint64_t		 done;		/* bytes enqueued */
	uint64_t		 n;		/* chunks tried */
	cl_int			 err;		/* the first one refused */
	int			 stopped;	/* no more until it runs */
	cl_event		 last;		/* the last one enqueued */
	struct vcl_cmd		*hold;		/* reserved: keeps its staging
						   if it ends early */
	uint64_t		 chunk;		/* vcl_write_chunk and */
	unsigned		 nslots;	/* ... vcl_write_slots at its
						   start (SIGHUP changes them) */
	uint64_t		 ring;		/* 0: staging of the whole bulk */
	uint64_t		 base;		/* ... or of its rest from here
						   (vcl_mem_write_spill) */
	cl_event		 slot[VCL_WRITE_SLOTS_MAX]; /* NULL: free */
	int			 waiting;	/* input waits for a slot */
	unsigned		 look_us;	/* ... looked at again after */
	int			 faulted;	/* VCL_TEST_WRITE_SLOT_WAIT */
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
	uint32_t		 keepalive_ms;	/* Hello.keepalive_ms; 0: none */
	uint64_t		 out_ns;	/* vcl_server_ns, last output */
	time_t			 in_since;	/* frame in progress since */
	int			 paused;	/* a job holds input back */
	const char		*close_why;	/* drain: what to log */
	struct vcl_ratelog	 warns;		/* per-request warnings */
	int			 is_peer;	/* a server's peer link */
	uint64_t		 key;		/* peers must present it */
	int			 draining;	/* close once all owed is sent */
	int			 jobs;		/* worker jobs (builds) running */
	struct vcl_bincheck	*bincheck;	/* the binary check its input
						   waits on, if any */
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
	uint64_t		 in_bulk_size;	/* its block: the bulk's length,
						   or a write's ring of slots */
	int			 in_bulk_borrowed; /* a transfer's staging */
	struct vcl_hobj		*in_xfer;	/* ... of this transfer */
	uint64_t		 in_bulk_got;
	cl_int			 in_bulk_err;
	struct vcl_wchunk	 in_wc;		/* a write's chunks enqueued as
						   its bulk came (vcl_op_mem.c) */

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
	struct vcl_helds	 recheck;	/* ... whose user event was set,
						   to look at again */
	struct vcl_helds	 ready;		/* ... released, to run in turns
						   (vcl_hold_turn) */
	struct vcl_htab		 pending;	/* event id -> held creator */
	uint64_t		 held_order;
	size_t			 nheld;
	int			 kicking;	/* a turn is under way */
	int			 want_kick;	/* a user event was set */
	struct event		*ev_kick;	/* runs the next turn */
	int			 kick_armed;	/* ... added, not run */
	struct event		*ev_slot;	/* looks again at a write's
						   slot (in_wc.waiting) */
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

struct vcl_session *vcl_session_new(struct vcl_server *, int, const char *);
void	vcl_session_ref(struct vcl_session *);
void	vcl_session_unref(struct vcl_session *);
void	vcl_session_close(struct vcl_session *, const char *);
void	vcl_session_drain(struct vcl_session *);
void	vcl_session_refuse(struct vcl_session *, const char *);
int	vcl_session_authed(struct vcl_session *);
void	vcl_session_warn(struct vcl_session *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	vcl_session_keepalive(struct vcl_session *);
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
