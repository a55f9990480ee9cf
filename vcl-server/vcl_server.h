/* vcl_server.h - vclserver core: limits, the server, completions. */
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
#include "vcl_metrics.h"
#include "vcl_tls.h"

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
	uint64_t		bincheck_s;	/* a binary's check process */
};

/* Rate-limited logging: a few lines per interval, then a count. */
struct vcl_ratelog {
	time_t			start;
	unsigned		n;
	uint64_t		suppressed;
};


struct vcl_session;
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
	uint64_t		 spin_until;	/* ns: the loop looks for input
						   till then before sleeping */
	uint64_t		 spin_hits;	/* input its look found */
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
void	vcl_server_test_latch(const char *);
time_t	vcl_server_now(void);
uint64_t vcl_server_ns(void);
long	vcl_server_test_num(const char *);
int	vcl_server_ratelog(struct vcl_ratelog *, const char *);
void	vcl_server_ratelog_flush(struct vcl_ratelog *, const char *);
int	vcl_server_auth_refused(struct vcl_server *, const char *);
void	vcl_server_spin_arm(struct vcl_server *);

extern long	vcl_spin_us;	/* --spin-us; -1: by the CPUs online */
void	vcl_server_auth_failed(struct vcl_server *, const char *);

#define VCL_SLOW_MS	5.0	/* the loop logs anything that holds it this long */
#define VCL_SERVER_MIN_CPUS 4	/* fewer: nothing spins, no chunked
				   writes, launches stay on the loop */

#endif
