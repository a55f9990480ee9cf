/* rawproto.h - raw wire-protocol test harness: servers, connections, checks. */
#ifndef RAWPROTO_H
#define RAWPROTO_H


#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"
#include "vcl_auth.h"
#include "vcl_buf.h"
#include "vcl_frame.h"
#include "vcl_io.h"

#define POLL_MS		10	/* one poll of a bounded wait */
#define READY_POLLS	2000	/* server start: 20 s */
#define EXIT_POLLS	2000	/* server exit after SIGTERM: 20 s */
#define STATS_POLLS	2000	/* counters settling: 20 s (ASan, load) */
#define RECV_TIMEOUT_S	10	/* one read on a test socket */
#define MAX_SERVERS	8	/* per group */
#define MAX_ARGS	24

struct srv {
	pid_t	pid;
	char	dir[PATH_MAX];
	char	port[16];
	int	reaped;
	int	status;
};

struct conn {
	int		fd;
	uint64_t	seq;
	uint8_t		nonce[256];
	size_t		nonce_len;
	int		auth_required;
	int		peer;		/* Hello as a server's peer link */
};

struct reply {
	Vcl__ToClient	*tc;		/* owns r */
	Vcl__Reply	*r;
	uint8_t		*bulk;
	uint64_t	 bulk_len;
};

struct test {
	const char	*name;
	void		(*fn)(void);
	unsigned	 timeout;	/* seconds */
};


/* Set by rawproto_main; the scratch root holds every server's directory. */
extern const char	*server_path;
extern const char	*client_path;
extern char		 root[];
extern const char	 kernel_src[];
/* Set: servers spawned next get JOURNAL_STREAM naming their stderr. */
extern int		 srv_journal;

int	check(const char *, int, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	note(const char *, ...)
	    __attribute__((format(printf, 1, 2)));
void poll_wait(void);
int srv_spawn(struct srv *sv, const char *listen, const char *const *extra);
int srv_reap(struct srv *sv);
int srv_alive(struct srv *sv);
int srv_wait_ready(struct srv *sv);
int srv_wait_exit(struct srv *sv);
void srv_kill(struct srv *sv);
const char *srv_how(const struct srv *sv);
int srv_start(struct srv *sv, const char *name, const char *listen,
    const char *const *extra);
void srv_stop(struct srv *sv, const char *name);
int srv_start_preload(struct srv *sv, const char *name, const char *lib,
    const char *var, const char *const *extra);
int srv_stderr_has(const struct srv *sv, const char *s);
int read_n(int fd, void *buf, size_t n);
int recv_msg(struct conn *c, struct reply *out);
void reply_free(struct reply *rp);
int send_raw(struct conn *c, const void *p, size_t n);
int send_req(struct conn *c, Vcl__Request *r, const void *bulk, uint64_t bulk_len);
int call(struct conn *c, Vcl__Request *r, const void *bulk, uint64_t bulk_len,
    struct reply *rp);
int conn_open(struct conn *c, const struct srv *sv);
void conn_close(struct conn *c);
int hello_raw(struct conn *c, uint32_t version, const uint8_t *proof,
    size_t proof_len, struct reply *rp);
int hello(struct conn *c, const struct vcl_token *tok);
int hello_as(struct conn *c, int peer, uint64_t *sid, uint64_t *key);
int conn_session(struct conn *c, const struct srv *sv);
int stats(struct conn *c, Vcl__StatsResult *st);
int wait_empty(struct conn *c, Vcl__StatsResult *st);
int wait_empty_polls(struct conn *c, Vcl__StatsResult *st, int polls);
int wait_gone(struct conn *c, Vcl__StatsResult *st);
int wait_closed(struct conn *c);
int create_context(struct conn *c, uint64_t id);
int create_queue(struct conn *c, uint64_t id, uint64_t ctx);
int create_buffer(struct conn *c, uint64_t id, uint64_t ctx, uint64_t size,
    const void *data, uint64_t data_len);
int create_program(struct conn *c, uint64_t id, uint64_t ctx, const char *src);
int release(struct conn *c, Vcl__Kind kind, uint64_t id);
int read_buffer(struct conn *c, uint64_t queue, uint64_t mem, uint64_t size,
    struct reply *rp);
int get_info_status(struct conn *c, Vcl__GetInfo__What what, uint64_t id,
    uint32_t param);
int device_info_u64(struct conn *c, uint32_t param, uint64_t *v);
int	raw_status(struct conn *, Vcl__Request *);
int	raw_build(struct conn *, uint64_t, const char *);
int	raw_kernel(struct conn *, uint64_t, uint64_t, const char *);
int	raw_finish(struct conn *, uint64_t);
int	raw_ndrange(struct conn *, uint64_t, uint64_t, uint64_t, uint64_t,
	    Vcl__KernelArg **, size_t, uint64_t);
int	raw_client_env(const struct srv *);
int	raw_spin_setup(struct conn *, uint64_t, uint64_t, uint64_t, uint64_t);
int	raw_spin_send(struct conn *, uint64_t, uint64_t, uint64_t, uint32_t);
int	raw_spin_send_ev(struct conn *, uint64_t, uint64_t, uint64_t, uint32_t,
	    uint64_t);
int	raw_event_status(struct conn *, uint64_t, cl_int *);
uint64_t raw_op_count(struct conn *, int);
int	raw_forward_bogus(struct conn *, const char *, uint64_t);
int	raw_marker(struct conn *, uint64_t, uint64_t, const uint64_t *,
	    size_t);
int	raw_user_event(struct conn *, uint64_t, uint64_t);
int	raw_user_set(struct conn *, uint64_t, cl_int);
int	raw_mute_listener(char *, size_t);
int	raw_links_now(struct conn *, const char *, size_t *, int *);
int	raw_wait_links_at_most(struct conn *, size_t, size_t *);
int	raw_sync_seen(struct conn *, uint64_t, int *, cl_int *);
uint8_t	*raw_pattern(size_t, unsigned);
uint64_t raw_write_part(struct conn *, const Vcl__Enqueue *, uint64_t,
	    uint64_t, uint64_t, uint64_t, const uint8_t *, uint64_t);
int msg_has(const struct reply *rp, const char *word);
int client_open(struct conn *c, const struct srv *sv, uint64_t *sid,
    uint64_t *key);
int wait_notify(struct conn *c, uint64_t ev, cl_int *st);
int migrate_in(struct conn *c, uint64_t ev, uint64_t mem, uint64_t size,
    uint64_t xfer, const char *source);
int wait_bytes_in(struct conn *w, uint64_t want);
int raw_latch_open(const char *path);

/*
 * Run the groups (SESSION_TEST_ONLY names one) against VCLSERVER, each in a
 * child of its own process group under alarm(); argv is PROG VCLSERVER
 * [CLIENT]. Returns the exit status.
 */
int	rawproto_main(int, char **, const struct test *, size_t);

/*
 * A client's ring of shared slots (ShmRing) as libvcl makes one: a sealed
 * memfd of this process, RAW_RING_SLOTS slots of RAW_RING_SLOT bytes
 * after the header page naming the session.
 */
#define RAW_RING_SLOTS	4
#define RAW_RING_SLOT	(256u << 10)
struct raw_ring {
	int	 fd;
	uint8_t	*base;
};
int	 raw_ring_give(struct raw_ring *, struct conn *);
void	 raw_ring_free(struct raw_ring *);
uint8_t	*raw_ring_slot(struct raw_ring *, unsigned);

/* A fake server (rawproto.c): the server end of the wire, in the test. */
int raw_fake_listen(char *port, size_t len);
int raw_fake_send(int fd, Vcl__ToClient *tc, uint64_t bulk_len,
    size_t sent_len);
int raw_fake_reply(int fd, uint64_t seq, cl_int status, uint64_t bulk_len,
    size_t sent_len);
Vcl__Request *raw_fake_read(int fd, uint64_t *bulk_len);
int raw_fake_skip(int fd, uint64_t n);
int raw_fake_handshake(int fd, size_t ndev, int bad_string);

#endif
