/* vcl_conn.h - a connection to one vclserver: calls, replies, the receiver. */
#ifndef VCL_CONN_H
#define VCL_CONN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vcl_buf.h"
#include "vcl_client.h"
#include "vcl_tls.h"

struct vcl_shm;

#define VCL_WATCH_BUCKETS 4096		/* events awaiting a notification */

struct vcl_pending;

/* One vclserver the client is connected to. */
struct vcl_node {
	int			 index;
	char			 addr[256];
	char			 peer_addr[80];	/* numeric ip:port, for peers */
	char			*name;		/* the server's node name */
	int			 fd;
	struct vcl_link		 link;		/* fd, maybe under TLS */
	pthread_t		 rx;
	int			 rx_started;

	pthread_mutex_t		 send_lock;	/* out, seq, fd writes */
	struct vcl_buf		 out;
	uint64_t		 seq;

	pthread_mutex_t		 lock;		/* pending, dead */
	pthread_cond_t		 cond;
	struct vcl_pending	*pending;	/* oldest first */
	struct vcl_pending	**pending_tail;
	int			 dead;
	int			 failed;	/* vcl_node_fail ran */

	/*
	 * The reading token (vcl_conn.c), under lock: one thread at a time
	 * reads the socket, the receiver or a caller waiting for its own
	 * reply, and it lands whatever comes for anyone. Waiters sleep on
	 * cond; a release broadcasts it.
	 */
	int			 reading;	/* the token is held */
	pthread_t		 reader;	/* by this thread */
	pthread_cond_t		 rx_cond;	/* the receiver sleeps here */
	int			 rx_idle;	/* ... and is asleep */
	int			 stuck;		/* writes waiting for room */

	cl_event		 watch[VCL_WATCH_BUCKETS];	/* by id */
	size_t			 nwatch;	/* events in watch */

	/*
	 * Liveness (vcl_conn.c): a node that moves no byte either way for
	 * timeout_ms while something is outstanding is lost. The receiver
	 * pings it (a Stats call) after a third of that silence, so a slow
	 * kernel on a live server never trips it.
	 */
	int			 timeout_ms;	/* VCL_CALL_TIMEOUT_MS, 0: none */
	int			 spin_us;	/* a waiter polls this long first */
	int			 live;		/* handshake done: rx ticks */
	int			 pinging;	/* a ping is out; under lock */
	long long		 idle_ping;	/* ms, the receiver's last ping
						   of the node idle; under
						   lock */
	atomic_llong		 last_io;	/* ms, last byte in or out */
	atomic_int		 sending;	/* a write is under way */

	Vcl__Release		*deferred;	/* releases from rx thread */
	size_t			 ndeferred, cdeferred;

	Vcl__ToClient		*hello;		/* the Welcome, kept unpacked */
	uint64_t		 session;	/* our session there, and its */
	uint64_t		 key;		/* key, for peers pushing to it */
	Vcl__Reply		*welcome;	/* its reply: the snapshot */
	uint32_t		 ndevices;
	uint64_t		 bytes_out;	/* bulk bytes sent, for tests */
	uint64_t		 bytes_in;
	const char		*transport;	/* the link's bulk transport */
	struct vcl_shm		*shm;		/* shared slots (vcl_shm.c), set
						   once under lock */
	atomic_int		 shm_tried;	/* ... asked for once */
	uint8_t			 nonce[64];	/* the greeting's, for the ring */
	size_t			 nonce_len;
};

/* A reply someone waits for, or an asynchronous one with a handler. */
struct vcl_pending {
	uint64_t		 seq;
	int			 done;
	cl_int			 status;	/* reply status or node error */
	Vcl__ToClient		*msg;		/* the reply, owned */
	void			*dst;		/* bulk lands here */
	uint64_t		 dst_len;
	void			(*fn)(struct vcl_pending *);	/* async */
	void			*arg;
	struct vcl_pending	*next;
};

extern __thread int			 vcl_in_rx;

cl_int		 vcl_node_connect(struct vcl_node *, const char *);
cl_int		 vcl_node_send(struct vcl_node *, Vcl__Request *,
		     const void *, uint64_t, int);
cl_int		 vcl_node_call(struct vcl_node *, Vcl__Request *,
		     const void *, uint64_t, void *, uint64_t,
		     Vcl__ToClient **);
cl_int		 vcl_node_call_async(struct vcl_node *, Vcl__Request *,
		     void *, uint64_t, void (*)(struct vcl_pending *), void *);
cl_int		 vcl_node_peer_links(struct vcl_node *, size_t, void *,
		     size_t *);
cl_int		 vcl_node_flush(struct vcl_node *);
void		 vcl_node_flush_all(void);
cl_int		 vcl_node_status(struct vcl_node *);
cl_int		 vcl_node_send_live(uint64_t, Vcl__Request *);
void		 vcl_node_wait(struct vcl_node *,
		     int (*)(struct vcl_node *, void *), void *);
void		 vcl_node_wake(struct vcl_node *);
void		 vcl_node_release(struct vcl_node *, Vcl__Kind, uint64_t);
void		 vcl_node_watch(struct vcl_node *, cl_event);
void		 vcl_node_unwatch_ev(struct vcl_node *, cl_event);

#define VCL_SEND_FLUSH	0x1

#endif
