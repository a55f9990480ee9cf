/* session_test.c - vclserver sessions over the raw wire protocol. */

/*
 * usage: session_test VCLSERVER BUSY_CLIENT
 *
 * Starts its own vclserver processes (port 0, port file in a temporary
 * directory), speaks the wire protocol to them directly with vclproto and
 * prints PASS/FAIL per check, then "N passed, N failed". BUSY_CLIENT is
 * run through libvcl for the SIGKILL test; the directory holding the vcl.icd
 * it loads comes from VCL_TEST_ICD_DIR.
 *
 * Each group of checks runs in a child process of its own process group
 * under alarm(), so a hang fails that group only and whatever it started is
 * killed with it. Every server a group starts is stopped with SIGTERM and
 * must exit 0: that is the drain/exit path.
 */

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
#define STATS_POLLS	500	/* counters settling: 5 s */
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

static const char	*server_path;
static const char	*client_path;
static char		 root[] = "/tmp/vcl-session-test.XXXXXX";

/* State of the group running in this child. */
static int		 result_fd = -1;
static int		 group_fails;
static char		 group_dirs[MAX_SERVERS][PATH_MAX];
static int		 group_ndirs;

static const char kernel_src[] =
	"__kernel void k(__global int *a) { a[get_global_id(0)] = 1; }\n";

static int	check(const char *, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static void	note(const char *, ...)
		    __attribute__((format(printf, 1, 2)));

/* Record one check: print PASS or FAIL (with why) and tell the parent. */
static int
check(const char *name, int ok, const char *fmt, ...)
{
	va_list	ap;
	char	c = ok ? 'P' : 'F';

	if (ok)
		printf("PASS %s\n", name);
	else {
		printf("FAIL %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		group_fails++;
	}
	fflush(stdout);
	if (result_fd != -1)
		(void)write(result_fd, &c, 1);
	return (ok);
}

/* Print a diagnostic line under the current check. */
static void
note(const char *fmt, ...)
{
	va_list	ap;

	printf("  # ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Sleep one polling interval. */
static void
poll_wait(void)
{
	struct timespec	ts = { 0, POLL_MS * 1000000L };

	nanosleep(&ts, NULL);
}

/* --- servers ------------------------------------------------------------ */

/*
 * Fork and exec a server listening on listen, with the extra options (NULL
 * terminated). Its stderr goes to DIR/stderr. Returns 0 or -1.
 */
static int
srv_spawn(struct srv *sv, const char *listen, const char *const *extra)
{
	const char	*argv[MAX_ARGS];
	char		 portfile[PATH_MAX + 16], errfile[PATH_MAX + 16];
	int		 argc = 0, fd;

	memset(sv, 0, sizeof *sv);
	sv->pid = -1;
	snprintf(sv->dir, sizeof sv->dir, "%s/srvXXXXXX", root);
	if (mkdtemp(sv->dir) == NULL) {
		note("mkdtemp: %s", strerror(errno));
		return (-1);
	}
	snprintf(portfile, sizeof portfile, "%s/port", sv->dir);
	snprintf(errfile, sizeof errfile, "%s/stderr", sv->dir);
	argv[argc++] = server_path;
	argv[argc++] = "--listen";
	argv[argc++] = listen;
	argv[argc++] = "--port-file";
	argv[argc++] = portfile;
	while (extra != NULL && *extra != NULL && argc < MAX_ARGS - 1)
		argv[argc++] = *extra++;
	argv[argc] = NULL;

	fflush(stdout);
	if ((sv->pid = fork()) == -1) {
		note("fork: %s", strerror(errno));
		return (-1);
	}
	if (sv->pid == 0) {
		if ((fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600)) !=
		    -1) {
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		if ((fd = open("/dev/null", O_RDWR)) != -1) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
		execv(server_path, (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", server_path, strerror(errno));
		_exit(127);
	}
	if (group_ndirs < MAX_SERVERS)
		snprintf(group_dirs[group_ndirs++], PATH_MAX, "%s", sv->dir);
	return (0);
}

/* Reap the server if it has exited. Returns 1 when it has. */
static int
srv_reap(struct srv *sv)
{
	pid_t	r;

	if (sv->reaped)
		return (1);
	if (sv->pid <= 0)
		return (0);
	r = waitpid(sv->pid, &sv->status, WNOHANG);
	if (r == sv->pid) {
		sv->reaped = 1;
		return (1);
	}
	return (0);
}

/* True while the server process runs. */
static int
srv_alive(struct srv *sv)
{
	return (sv->pid > 0 && !srv_reap(sv));
}

/*
 * Wait (bounded polls) for the port file. Returns 0 once the server
 * listens, -1 when it exited or never got ready.
 */
static int
srv_wait_ready(struct srv *sv)
{
	char	 path[PATH_MAX + 16];
	FILE	*f;
	int	 i;

	snprintf(path, sizeof path, "%s/port", sv->dir);
	for (i = 0; i < READY_POLLS; i++) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(sv->port, sizeof sv->port, f) != NULL) {
				sv->port[strcspn(sv->port, "\r\n")] = '\0';
				fclose(f);
				if (sv->port[0] != '\0')
					return (0);
			} else
				fclose(f);
		}
		if (srv_reap(sv))
			return (-1);
		poll_wait();
	}
	return (-1);
}

/* Wait (bounded polls) for the server to exit. Returns 0 or -1. */
static int
srv_wait_exit(struct srv *sv)
{
	int	i;

	for (i = 0; i < EXIT_POLLS; i++) {
		if (srv_reap(sv))
			return (0);
		poll_wait();
	}
	return (-1);
}

/* Describe how a reaped server ended. */
static const char *
srv_how(const struct srv *sv)
{
	static char	buf[64];

	if (!sv->reaped)
		snprintf(buf, sizeof buf, "still running");
	else if (WIFEXITED(sv->status))
		snprintf(buf, sizeof buf, "exit %d", WEXITSTATUS(sv->status));
	else if (WIFSIGNALED(sv->status))
		snprintf(buf, sizeof buf, "killed by signal %d",
		    WTERMSIG(sv->status));
	else
		snprintf(buf, sizeof buf, "status %#x", sv->status);
	return (buf);
}

/* Start a server and wait until it listens; a failure is a FAIL of name. */
static int
srv_start(struct srv *sv, const char *name, const char *listen,
    const char *const *extra)
{
	if (srv_spawn(sv, listen, extra) != 0)
		return (check(name, 0, "cannot start %s", server_path));
	if (srv_wait_ready(sv) != 0)
		return (check(name, 0, "server did not get ready (%s); see "
		    "%s/stderr", srv_how(sv), sv->dir));
	return (1);
}

/*
 * Stop a server with SIGTERM and check it drains and exits 0. A server
 * that is gone already (crashed) fails the check too.
 */
static void
srv_stop(struct srv *sv, const char *name)
{
	if (sv->pid <= 0)
		return;
	if (!srv_alive(sv)) {
		check(name, 0, "server died before SIGTERM (%s); see %s/stderr",
		    srv_how(sv), sv->dir);
		return;
	}
	kill(sv->pid, SIGTERM);
	if (srv_wait_exit(sv) != 0) {
		check(name, 0, "server still running %d ms after SIGTERM",
		    EXIT_POLLS * POLL_MS);
		kill(sv->pid, SIGKILL);
		srv_wait_exit(sv);
		return;
	}
	check(name, WIFEXITED(sv->status) && WEXITSTATUS(sv->status) == 0,
	    "server %s after SIGTERM, want exit 0; see %s/stderr",
	    srv_how(sv), sv->dir);
}

/* True when the server's stderr contains s. */
static int
srv_stderr_has(const struct srv *sv, const char *s)
{
	char	 path[PATH_MAX + 16], buf[16384];
	size_t	 n;
	FILE	*f;

	snprintf(path, sizeof path, "%s/stderr", sv->dir);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (strstr(buf, s) != NULL);
}

/* --- raw protocol --------------------------------------------------------- */

/*
 * Read exactly n bytes. Returns 0, 1 when the peer closed (end of stream
 * or reset), -1 on a timeout or another error.
 */
static int
read_n(int fd, void *buf, size_t n)
{
	uint8_t	*p = buf;
	ssize_t	 r;

	while (n > 0) {
		r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return (1);
		if (r < 0)
			return (-1);
		p += r;
		n -= (size_t)r;
	}
	return (0);
}

/*
 * Read one frame and decode its ToClient. Returns 0, 1 when the server
 * closed the connection, -1 on a timeout or a frame the test cannot read.
 */
static int
recv_msg(struct conn *c, struct reply *out)
{
	struct vcl_frame_limits	 lim = { 64u << 20, 64ull << 20 };
	struct vcl_frame_hdr	 hdr;
	uint8_t			 h[VCL_FRAME_HDR_LEN], *msg = NULL;
	const char		*why;
	int			 rc;

	memset(out, 0, sizeof *out);
	if ((rc = read_n(c->fd, h, sizeof h)) != 0)
		return (rc);
	if (vcl_frame_decode(h, &lim, &hdr, &why) != 0) {
		note("bad frame from the server: %s", why);
		return (-1);
	}
	if ((msg = malloc(hdr.msg_len)) == NULL)
		return (-1);
	if ((rc = read_n(c->fd, msg, hdr.msg_len)) != 0)
		goto fail;
	rc = -1;
	if (hdr.bulk_len > 0) {
		if ((out->bulk = malloc(hdr.bulk_len)) == NULL)
			goto fail;
		out->bulk_len = hdr.bulk_len;
		if ((rc = read_n(c->fd, out->bulk, hdr.bulk_len)) != 0)
			goto fail;
		rc = -1;
	}
	if ((out->tc = vcl__to_client__unpack(NULL, hdr.msg_len, msg)) ==
	    NULL) {
		note("server sent a ToClient the test cannot decode");
		goto fail;
	}
	free(msg);
	out->r = out->tc->reply;
	return (0);
fail:
	free(msg);
	free(out->bulk);
	out->bulk = NULL;
	out->bulk_len = 0;
	return (rc);
}

/* Free a received message. */
static void
reply_free(struct reply *rp)
{
	if (rp->tc != NULL)
		vcl__to_client__free_unpacked(rp->tc, NULL);
	free(rp->bulk);
	memset(rp, 0, sizeof *rp);
}

/* Write raw bytes. Returns 0 or -1. */
static int
send_raw(struct conn *c, const void *p, size_t n)
{
	struct iovec	iov;

	iov.iov_base = (void *)p;
	iov.iov_len = n;
	return (vcl_io_writev_full(c->fd, &iov, 1));
}

/* Send a Request (next seq) with bulk_len bulk bytes after it. */
static int
send_req(struct conn *c, Vcl__Request *r, const void *bulk, uint64_t bulk_len)
{
	struct vcl_buf	b = { NULL, 0, 0 };
	struct iovec	iov[2];
	int		rc;

	r->seq = ++c->seq;
	if (vcl_buf_pack(&b, &r->base, bulk_len) != 0)
		return (-1);
	iov[0].iov_base = b.data;
	iov[0].iov_len = b.len;
	iov[1].iov_base = (void *)bulk;
	iov[1].iov_len = bulk_len;
	rc = vcl_io_writev_full(c->fd, iov, bulk_len > 0 ? 2 : 1);
	vcl_buf_free(&b);
	return (rc);
}

/*
 * Send a synchronous request and wait for the Reply with its seq, skipping
 * notifications. Returns 0 with *rp filled, 1 when the server closed, -1.
 */
static int
call(struct conn *c, Vcl__Request *r, const void *bulk, uint64_t bulk_len,
    struct reply *rp)
{
	int	i, rc;

	memset(rp, 0, sizeof *rp);
	if (send_req(c, r, bulk, bulk_len) != 0)
		return (errno == EPIPE || errno == ECONNRESET ? 1 : -1);
	for (i = 0; i < 100000; i++) {
		if ((rc = recv_msg(c, rp)) != 0)
			return (rc);
		if (rp->r != NULL && rp->r->seq == r->seq)
			return (0);
		if (rp->r != NULL) {
			note("reply to seq %llu while waiting for %llu",
			    (unsigned long long)rp->r->seq,
			    (unsigned long long)r->seq);
			reply_free(rp);
			return (-1);
		}
		reply_free(rp);
	}
	return (-1);
}

/* Connect to a server and read its greeting. Returns 0 or -1. */
static int
conn_open(struct conn *c, const struct srv *sv)
{
	struct timeval	 tv = { RECV_TIMEOUT_S, 0 };
	struct reply	 rp;
	char		 err[256];

	memset(c, 0, sizeof *c);
	if ((c->fd = vcl_io_connect("127.0.0.1", sv->port, 5000, err,
	    sizeof err)) == -1) {
		note("connect: %s", err);
		return (-1);
	}
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (recv_msg(c, &rp) != 0 || rp.tc->greeting == NULL) {
		note("no greeting from the server");
		reply_free(&rp);
		close(c->fd);
		c->fd = -1;
		return (-1);
	}
	c->auth_required = rp.tc->greeting->auth_required;
	c->nonce_len = rp.tc->greeting->nonce.len;
	if (c->nonce_len > sizeof c->nonce)
		c->nonce_len = sizeof c->nonce;
	memcpy(c->nonce, rp.tc->greeting->nonce.data, c->nonce_len);
	reply_free(&rp);
	return (0);
}

/* Close a connection. */
static void
conn_close(struct conn *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
}

/*
 * Send Hello{version, proof (when given)}. Returns 0 with the reply in *rp,
 * else as call().
 */
static int
hello_raw(struct conn *c, uint32_t version, const uint8_t *proof,
    size_t proof_len, struct reply *rp)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Hello	h = VCL__HELLO__INIT;

	h.version = version;
	h.client_name = "session_test";
	h.has_peer = c->peer;
	h.peer = c->peer;
	if (proof != NULL) {
		h.has_proof = 1;
		h.proof.data = (uint8_t *)proof;
		h.proof.len = proof_len;
	}
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	return (call(c, &r, NULL, 0, rp));
}

/* Handshake, proving tok when given. Returns 0 when welcomed. */
static int
hello(struct conn *c, const struct vcl_token *tok)
{
	uint8_t		proof[VCL_AUTH_PROOF_LEN];
	struct reply	rp;
	int		rc;

	if (tok != NULL)
		vcl_auth_prove(tok, c->nonce, c->nonce_len, proof);
	if ((rc = hello_raw(c, VCL_PROTOCOL_VERSION, tok != NULL ? proof : NULL,
	    sizeof proof, &rp)) != 0) {
		note("hello: no reply (%s)", rc == 1 ? "closed" : "error");
		return (-1);
	}
	rc = rp.r->status == CL_SUCCESS && rp.r->welcome != NULL ? 0 : -1;
	if (rc != 0)
		note("hello: status %d: %s", rp.r->status,
		    rp.r->message != NULL ? rp.r->message : "");
	reply_free(&rp);
	return (rc);
}

/* Connect and handshake. Returns 0 or -1. */
static int
conn_session(struct conn *c, const struct srv *sv)
{
	if (conn_open(c, sv) != 0)
		return (-1);
	if (hello(c, NULL) != 0) {
		conn_close(c);
		return (-1);
	}
	return (0);
}

/* Ask for Stats. Returns 0 with *st filled, or -1. */
static int
stats(struct conn *c, Vcl__StatsResult *st)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;
	struct reply	rp;
	int		rc = -1;

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	if (rp.r->status == CL_SUCCESS && rp.r->stats != NULL) {
		*st = *rp.r->stats;
		rc = 0;
	}
	reply_free(&rp);
	return (rc);
}

/*
 * Poll Stats (bounded) until the server holds no object and no byte.
 * Returns 0, or -1 with the last counters in *st.
 */
static int
wait_empty(struct conn *c, Vcl__StatsResult *st)
{
	int	i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, st) != 0)
			return (-1);
		if (st->objects == 0 && st->bytes == 0)
			return (0);
		poll_wait();
	}
	return (-1);
}

/*
 * Read until the server closes the connection, dropping what it sends.
 * Returns 1 when it closed, 0 on a timeout.
 */
static int
wait_closed(struct conn *c)
{
	struct reply	rp;
	int		i, rc;

	for (i = 0; i < 1000; i++) {
		if ((rc = recv_msg(c, &rp)) == 1)
			return (1);
		reply_free(&rp);
		if (rc == -1)
			return (0);
	}
	return (0);
}

/* CreateContext{id, devices [0]} (asynchronous). */
static int
create_context(struct conn *c, uint64_t id)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateContext	m = VCL__CREATE_CONTEXT__INIT;
	uint32_t		dev = 0;

	m.id = id;
	m.n_devices = 1;
	m.devices = &dev;
	r.call_case = VCL__REQUEST__CALL_CREATE_CONTEXT;
	r.create_context = &m;
	return (send_req(c, &r, NULL, 0));
}

/* CreateQueue{id, context, device 0} (asynchronous). */
static int
create_queue(struct conn *c, uint64_t id, uint64_t ctx)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateQueue	m = VCL__CREATE_QUEUE__INIT;

	m.id = id;
	m.context = ctx;
	m.device = 0;
	r.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	r.create_queue = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * CreateBuffer{id, context, size}; has_data with data_len bulk bytes when
 * data is given (data_len may differ from size on purpose).
 */
static int
create_buffer(struct conn *c, uint64_t id, uint64_t ctx, uint64_t size,
    const void *data, uint64_t data_len)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateBuffer	m = VCL__CREATE_BUFFER__INIT;

	m.id = id;
	m.context = ctx;
	m.flags = CL_MEM_READ_WRITE;
	m.size = size;
	if (data != NULL) {
		m.has_has_data = 1;
		m.has_data = 1;
	}
	r.call_case = VCL__REQUEST__CALL_CREATE_BUFFER;
	r.create_buffer = &m;
	return (send_req(c, &r, data, data != NULL ? data_len : 0));
}

/* CreateProgram{id, context, source} (asynchronous). */
static int
create_program(struct conn *c, uint64_t id, uint64_t ctx, const char *src)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateProgram	m = VCL__CREATE_PROGRAM__INIT;

	m.id = id;
	m.context = ctx;
	m.source.data = (uint8_t *)src;
	m.source.len = strlen(src);
	r.call_case = VCL__REQUEST__CALL_CREATE_PROGRAM;
	r.create_program = &m;
	return (send_req(c, &r, NULL, 0));
}

/* Release{kind, id} (asynchronous). */
static int
release(struct conn *c, Vcl__Kind kind, uint64_t id)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Release	m = VCL__RELEASE__INIT;

	m.kind = kind;
	m.id = id;
	r.call_case = VCL__REQUEST__CALL_RELEASE;
	r.release = &m;
	return (send_req(c, &r, NULL, 0));
}

/* ReadBuffer{queue, mem, 0, size}, waiting for its reply (and bytes). */
static int
read_buffer(struct conn *c, uint64_t queue, uint64_t mem, uint64_t size,
    struct reply *rp)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer	m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;

	q.queue = queue;
	m.q = &q;
	m.mem = mem;
	m.offset = 0;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	return (call(c, &r, NULL, 0, rp));
}

/* GetInfo{what, id, param}: the reply status, or 1 for no reply. */
static int
get_info_status(struct conn *c, Vcl__GetInfo__What what, uint64_t id,
    uint32_t param)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetInfo	m = VCL__GET_INFO__INIT;
	struct reply	rp;
	int		st;

	m.what = what;
	m.id = id;
	m.param = param;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.r->status;
	reply_free(&rp);
	return (st);
}

/* GetInfo of a device's cl_ulong param. Returns 0 with *v, or -1. */
static int
device_info_u64(struct conn *c, uint32_t param, uint64_t *v)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetInfo	m = VCL__GET_INFO__INIT;
	struct reply	rp;
	int		rc = -1;

	m.what = VCL__GET_INFO__WHAT__DEVICE;
	m.id = 0;
	m.param = param;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	if (rp.r->status == CL_SUCCESS && rp.r->info != NULL &&
	    rp.r->info->value.len == sizeof *v) {
		memcpy(v, rp.r->info->value.data, sizeof *v);
		rc = 0;
	}
	reply_free(&rp);
	return (rc);
}

/* Case-insensitive: does the reply's message mention word? */
static int
msg_has(const struct reply *rp, const char *word)
{
	return (rp->r != NULL && rp->r->message != NULL &&
	    strcasestr(rp->r->message, word) != NULL);
}

/* --- (a) handshake -------------------------------------------------------- */

/* A Hello of another protocol version is answered with why, then closed. */
static void
test_handshake(void)
{
	struct srv	sv;
	struct conn	c;
	struct reply	rp;
	int		rc;

	if (!srv_start(&sv, "handshake_server_start", "127.0.0.1:0", NULL))
		return;
	if (conn_open(&c, &sv) != 0) {
		check("handshake_version_mismatch", 0, "no greeting");
		goto out;
	}
	rc = hello_raw(&c, 999, NULL, 0, &rp);
	if (check("handshake_version_mismatch_reply", rc == 0,
	    "no reply to Hello{version 999} (%s)", rc == 1 ? "closed" :
	    "timeout")) {
		check("handshake_version_mismatch_status", rp.r->status != 0,
		    "status %d, want an error", rp.r->status);
		check("handshake_version_mismatch_message",
		    msg_has(&rp, "version"), "message \"%s\" does not "
		    "mention the version", rp.r->message != NULL ?
		    rp.r->message : "");
		reply_free(&rp);
		check("handshake_version_mismatch_closed", wait_closed(&c),
		    "connection still open after the refusal");
	}
	conn_close(&c);

	/* The right version is welcomed. */
	check("handshake_ok", conn_session(&c, &sv) == 0,
	    "Hello{version %u} not welcomed", VCL_PROTOCOL_VERSION);
	conn_close(&c);
out:
	srv_stop(&sv, "handshake_server_exit");
}

/*
 * SIGTERM drains: a reply queued before the signal (a read's bytes the
 * client has not taken yet) is still sent whole, then every session is
 * closed and the server exits 0.
 */
static void
test_drain(void)
{
	struct srv		 sv;
	struct conn		 x, w;
	struct reply		 rp;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__ReadBuffer		 m = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 q = VCL__ENQUEUE__INIT;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 seq;
	size_t			 size = 64u << 20, i;
	uint8_t			*data;
	int			 rc;

	if ((data = malloc(size)) == NULL)
		return;
	for (i = 0; i < size; i++)
		data[i] = (uint8_t)(i ^ (i >> 13));
	x.fd = w.fd = -1;
	if (!srv_start(&sv, "drain_server_start", "127.0.0.1:0", NULL)) {
		free(data);
		return;
	}
	if (!check("drain_sessions", conn_session(&x, &sv) == 0 &&
	    conn_session(&w, &sv) == 0, "no sessions"))
		goto out;
	rc = create_context(&x, 1);
	rc |= create_queue(&x, 2, 1);
	rc |= create_buffer(&x, 3, 1, size, data, size);
	q.queue = 2;
	m.q = &q;
	m.mem = 3;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &m;
	rc |= send_req(&x, &r, NULL, 0);
	seq = r.seq;
	check("drain_read_sent", rc == 0, "cannot send");

	/* The read is in when its staging is charged next to the buffer. */
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(&w, &st) != 0 || st.bytes == 2 * size)
			break;
		poll_wait();
	}
	if (!check("drain_read_queued", st.bytes == 2 * size, "bytes %llu, "
	    "want %llu (buffer and read staging)",
	    (unsigned long long)st.bytes, (unsigned long long)(2 * size)))
		goto out;

	kill(sv.pid, SIGTERM);
	rc = recv_msg(&x, &rp);
	if (check("drain_reply_sent", rc == 0 && rp.r != NULL &&
	    rp.r->seq == seq, "no reply to the read queued before SIGTERM "
	    "(%s)", rc == 1 ? "closed" : rc == 0 ? "another message" :
	    "timeout"))
		check("drain_reply_whole", rp.r->status == 0 &&
		    rp.bulk_len == size && memcmp(rp.bulk, data, size) == 0,
		    "status %d, %llu of %zu bytes, or other bytes",
		    rp.r->status, (unsigned long long)rp.bulk_len, size);
	if (rc == 0)
		reply_free(&rp);
	check("drain_closes_sessions", wait_closed(&x) && wait_closed(&w),
	    "a session stayed open after SIGTERM");
	if (srv_wait_exit(&sv) != 0)
		check("drain_server_exit", 0, "server still running %d ms "
		    "after SIGTERM", EXIT_POLLS * POLL_MS);
	else
		check("drain_server_exit", WIFEXITED(sv.status) &&
		    WEXITSTATUS(sv.status) == 0, "server %s after SIGTERM, "
		    "want exit 0", srv_how(&sv));
	conn_close(&x);
	conn_close(&w);
	free(data);
	return;
out:
	conn_close(&x);
	conn_close(&w);
	free(data);
	srv_stop(&sv, "drain_server_exit");
}

/* --- (b) authentication --------------------------------------------------- */

/* Write a token file of the given mode. Returns 0 or -1. */
static int
write_token(const char *path, const char *token, mode_t mode)
{
	int	fd;
	ssize_t	n;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)) == -1)
		return (-1);
	n = write(fd, token, strlen(token));
	close(fd);
	if (n != (ssize_t)strlen(token) || chmod(path, mode) != 0)
		return (-1);
	return (0);
}

/* A refused Hello: non-zero status, "authentication" said, then closed. */
static void
auth_refused(const char *name, struct conn *c, const uint8_t *proof,
    size_t len)
{
	struct reply	rp;
	char		n[128];
	int		rc;

	rc = hello_raw(c, VCL_PROTOCOL_VERSION, proof, len, &rp);
	snprintf(n, sizeof n, "%s_reply", name);
	if (!check(n, rc == 0, "no reply (%s)", rc == 1 ? "closed" :
	    "timeout"))
		return;
	snprintf(n, sizeof n, "%s_status", name);
	check(n, rp.r->status != 0, "status %d, want an error", rp.r->status);
	snprintf(n, sizeof n, "%s_message", name);
	check(n, msg_has(&rp, "authentication"), "message \"%s\" does not "
	    "mention authentication", rp.r->message != NULL ? rp.r->message :
	    "");
	reply_free(&rp);
	snprintf(n, sizeof n, "%s_closed", name);
	check(n, wait_closed(c), "connection still open after the refusal");
}

/* A token server refuses a missing or wrong proof and takes the right one. */
static void
test_auth(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct vcl_token	 tok, bad;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint8_t			 proof[VCL_AUTH_PROOF_LEN];
	char			 path[PATH_MAX], err[256];
	const char		*extra[] = { "--token-file", path, NULL };

	snprintf(path, sizeof path, "%s/token", root);
	if (!check("auth_token_file", write_token(path, "s3cret-token\n",
	    0600) == 0 && vcl_auth_load(path, &tok, err, sizeof err) == 0,
	    "cannot write %s", path))
		return;
	if (!srv_start(&sv, "auth_server_start", "127.0.0.1:0", extra))
		return;

	if (conn_open(&c, &sv) == 0) {
		check("auth_greeting_requires_auth", c.auth_required,
		    "greeting says auth_required false");
		auth_refused("auth_no_proof", &c, NULL, 0);
		conn_close(&c);
	} else
		check("auth_no_proof", 0, "no greeting");

	if (conn_open(&c, &sv) == 0) {
		memcpy(bad.data, "wrong-token", 11);
		bad.len = 11;
		vcl_auth_prove(&bad, c.nonce, c.nonce_len, proof);
		auth_refused("auth_wrong_proof", &c, proof, sizeof proof);
		conn_close(&c);
	} else
		check("auth_wrong_proof", 0, "no greeting");

	/* A proof over another session's nonce is wrong too (no replay). */
	if (conn_open(&c, &sv) == 0) {
		uint8_t	nonce[VCL_AUTH_NONCE_LEN];

		memset(nonce, 0x5a, sizeof nonce);
		vcl_auth_prove(&tok, nonce, sizeof nonce, proof);
		auth_refused("auth_stale_nonce", &c, proof, sizeof proof);
		conn_close(&c);
	} else
		check("auth_stale_nonce", 0, "no greeting");

	if (conn_open(&c, &sv) == 0) {
		check("auth_good_proof", hello(&c, &tok) == 0,
		    "HMAC(token, nonce) not accepted");
		check("auth_good_proof_serves", stats(&c, &st) == 0,
		    "no Stats reply after the handshake");
		conn_close(&c);
	} else
		check("auth_good_proof", 0, "no greeting");
	srv_stop(&sv, "auth_server_exit");
}

/*
 * A non-loopback address without a token: refused at start-up with a
 * message; with --insecure (or a token) it starts.
 */
static void
test_listen_nonloopback(void)
{
	struct srv	 sv;
	struct conn	 c;
	char		 path[PATH_MAX];
	const char	*insecure[] = { "--insecure", NULL };
	const char	*token[] = { "--token-file", path, NULL };

	if (srv_spawn(&sv, "0.0.0.0:0", NULL) != 0) {
		check("nonloopback_refused", 0, "cannot start the server");
		return;
	}
	if (srv_wait_exit(&sv) != 0) {
		check("nonloopback_refused", 0, "server on 0.0.0.0 without a "
		    "token is still running");
		kill(sv.pid, SIGTERM);
		srv_wait_exit(&sv);
	} else {
		check("nonloopback_refused", WIFEXITED(sv.status) &&
		    WEXITSTATUS(sv.status) != 0, "server %s, want a non-zero "
		    "exit", srv_how(&sv));
		check("nonloopback_refused_message",
		    srv_stderr_has(&sv, "token") ||
		    srv_stderr_has(&sv, "loopback"), "stderr (%s/stderr) does "
		    "not name the problem", sv.dir);
	}

	if (srv_start(&sv, "nonloopback_insecure_start", "0.0.0.0:0",
	    insecure)) {
		check("nonloopback_insecure_serves", conn_session(&c, &sv) == 0,
		    "no session with the --insecure server");
		conn_close(&c);
		srv_stop(&sv, "nonloopback_insecure_server_exit");
	}

	snprintf(path, sizeof path, "%s/token-nl", root);
	if (write_token(path, "another-token", 0600) != 0) {
		check("nonloopback_token_start", 0, "cannot write %s", path);
		return;
	}
	if (srv_start(&sv, "nonloopback_token_start", "0.0.0.0:0", token)) {
		check("nonloopback_token_serves", conn_open(&c, &sv) == 0 &&
		    c.auth_required, "no greeting asking for a token");
		conn_close(&c);
		srv_stop(&sv, "nonloopback_token_server_exit");
	}
}

/* --- (c) isolation and cleanup -------------------------------------------- */

/*
 * Session A makes objects; B sees them counted server-wide but cannot use
 * them; once A's socket closes every object and byte is given back.
 */
static void
test_isolation(void)
{
	struct srv		 sv;
	struct conn		 a, b;
	struct reply		 rp;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	static uint8_t		 pattern[4096];
	size_t			 i;
	int			 rc;

	for (i = 0; i < sizeof pattern; i++)
		pattern[i] = (uint8_t)(i * 7 + 3);
	if (!srv_start(&sv, "isolation_server_start", "127.0.0.1:0", NULL))
		return;
	a.fd = b.fd = -1;
	if (!check("isolation_session_a", conn_session(&a, &sv) == 0,
	    "no session"))
		goto out;
	rc = create_context(&a, 1);
	rc |= create_queue(&a, 2, 1);
	rc |= create_buffer(&a, 3, 1, 4096, NULL, 0);
	rc |= create_buffer(&a, 4, 1, 4096, pattern, sizeof pattern);
	rc |= create_buffer(&a, 5, 1, 4096, NULL, 0);
	rc |= create_program(&a, 6, 1, kernel_src);
	check("isolation_a_creates", rc == 0, "cannot send the creations");

	if (check("isolation_a_stats", stats(&a, &st) == 0, "no Stats reply")) {
		check("isolation_a_session_objects", st.session_objects == 6,
		    "session_objects %llu, want 6",
		    (unsigned long long)st.session_objects);
		check("isolation_a_session_bytes", st.session_bytes ==
		    3 * 4096, "session_bytes %llu, want %u",
		    (unsigned long long)st.session_bytes, 3 * 4096);
	}
	rc = read_buffer(&a, 2, 4, 4096, &rp);
	if (check("isolation_a_reads_own", rc == 0, "no reply to A's read")) {
		check("isolation_a_reads_own_data", rp.r->status == 0 &&
		    rp.bulk_len == sizeof pattern &&
		    memcmp(rp.bulk, pattern, sizeof pattern) == 0,
		    "status %d, %llu bytes, want the initial bytes back",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}

	if (!check("isolation_session_b", conn_session(&b, &sv) == 0,
	    "no session"))
		goto out;
	if (check("isolation_b_stats", stats(&b, &st) == 0, "no Stats reply")) {
		check("isolation_b_sees_server_objects", st.objects >= 6,
		    "objects %llu, want A's 6 counted",
		    (unsigned long long)st.objects);
		check("isolation_b_session_objects", st.session_objects == 0,
		    "session_objects %llu, want 0",
		    (unsigned long long)st.session_objects);
		check("isolation_b_session_bytes", st.session_bytes == 0,
		    "session_bytes %llu, want 0",
		    (unsigned long long)st.session_bytes);
		check("isolation_sessions", st.sessions == 2,
		    "sessions %llu, want 2", (unsigned long long)st.sessions);
	}
	rc = read_buffer(&b, 2, 4, 4096, &rp);
	if (check("isolation_b_read_foreign_reply", rc == 0,
	    "no reply to B's read of A's ids (%s)", rc == 1 ? "closed" :
	    "timeout")) {
		check("isolation_b_read_foreign_error", rp.r->status < 0,
		    "status %d, want an error", rp.r->status);
		check("isolation_b_read_foreign_no_data", rp.bulk_len == 0 ||
		    memcmp(rp.bulk, pattern, rp.bulk_len < sizeof pattern ?
		    rp.bulk_len : sizeof pattern) != 0,
		    "B got %llu bytes of A's buffer",
		    (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}
	rc = get_info_status(&b, VCL__GET_INFO__WHAT__MEM, 4, CL_MEM_SIZE);
	check("isolation_b_info_foreign", rc == CL_INVALID_MEM_OBJECT,
	    "GetInfo of A's buffer: %d, want CL_INVALID_MEM_OBJECT", rc);

	/* B's releases of A's ids touch nothing of A's. */
	rc = release(&b, VCL__KIND__KIND_MEM, 4);
	rc |= release(&b, VCL__KIND__KIND_QUEUE, 2);
	check("isolation_b_release_foreign_sent", rc == 0, "cannot send");
	if (stats(&b, &st) == 0)
		check("isolation_b_release_foreign", st.objects >= 6,
		    "objects %llu after B released A's ids, want A's 6",
		    (unsigned long long)st.objects);
	rc = read_buffer(&a, 2, 4, 4096, &rp);
	check("isolation_a_unaffected", rc == 0 && rp.r->status == 0 &&
	    rp.bulk_len == sizeof pattern && memcmp(rp.bulk, pattern,
	    sizeof pattern) == 0, "A's read after B's releases failed");
	if (rc == 0)
		reply_free(&rp);

	/* Ids are per session: B may use A's numbers for its own objects. */
	rc = create_context(&b, 1);
	if (rc == 0 && stats(&b, &st) == 0)
		check("isolation_b_own_id_space", st.session_objects == 1 &&
		    st.objects >= 7, "session_objects %llu objects %llu, want "
		    "1 and A's 6 + 1", (unsigned long long)st.session_objects,
		    (unsigned long long)st.objects);
	else
		check("isolation_b_own_id_space", 0, "no Stats reply");
	rc = release(&b, VCL__KIND__KIND_CONTEXT, 1);
	if (rc == 0 && stats(&b, &st) == 0)
		check("isolation_b_release_own", st.session_objects == 0,
		    "session_objects %llu after release, want 0",
		    (unsigned long long)st.session_objects);
	else
		check("isolation_b_release_own", 0, "no Stats reply");

	/* A goes away: everything it held is released. */
	conn_close(&a);
	rc = wait_empty(&b, &st);
	check("cleanup_on_close", rc == 0, "after A closed: objects %llu "
	    "bytes %llu, want 0 and 0 within %d ms",
	    (unsigned long long)st.objects, (unsigned long long)st.bytes,
	    STATS_POLLS * POLL_MS);
	if (rc == 0)
		check("cleanup_sessions", st.sessions == 1,
		    "sessions %llu, want 1", (unsigned long long)st.sessions);

	/* A new buffer never shows what A's freed memory held. */
	rc = create_context(&b, 10);
	rc |= create_queue(&b, 11, 10);
	rc |= create_buffer(&b, 12, 10, sizeof pattern, NULL, 0);
	if (rc == 0 && read_buffer(&b, 11, 12, sizeof pattern, &rp) == 0) {
		for (i = 0; i < rp.bulk_len && rp.bulk[i] == 0; i++)
			;
		check("isolation_new_buffer_zeroed", rp.r->status == 0 &&
		    rp.bulk_len == sizeof pattern && i == rp.bulk_len,
		    "status %d, %llu bytes, byte %zu not zero", rp.r->status,
		    (unsigned long long)rp.bulk_len, i);
		reply_free(&rp);
	} else
		check("isolation_new_buffer_zeroed", 0, "no reply to the read");
out:
	conn_close(&a);
	conn_close(&b);
	srv_stop(&sv, "isolation_server_exit");
}

/*
 * A buffer the server refuses (bigger than CL_DEVICE_MAX_MEM_ALLOC_SIZE)
 * holds no bytes: the session's count stays 0 and the server's returns to
 * 0 once the session is gone.
 */
static void
test_accounting(void)
{
	struct srv		 sv;
	struct conn		 c, w;
	struct reply		 rp;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 max = 0;
	int			 rc;

	if (!srv_start(&sv, "accounting_server_start", "127.0.0.1:0", NULL))
		return;
	c.fd = w.fd = -1;
	if (!check("accounting_session", conn_session(&c, &sv) == 0 &&
	    device_info_u64(&c, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &max) == 0,
	    "no session, or no CL_DEVICE_MAX_MEM_ALLOC_SIZE"))
		goto out;
	rc = create_context(&c, 1);
	rc |= create_queue(&c, 2, 1);
	rc |= create_buffer(&c, 3, 1, max + 4096, NULL, 0);
	check("accounting_sent", rc == 0, "cannot send");
	rc = read_buffer(&c, 2, 3, 4096, &rp);
	if (check("accounting_oversize_read_reply", rc == 0, "no reply")) {
		check("accounting_oversize_error", rp.r->status < 0,
		    "status %d for a buffer of %llu bytes (max alloc %llu)",
		    rp.r->status, (unsigned long long)(max + 4096),
		    (unsigned long long)max);
		reply_free(&rp);
	}
	if (check("accounting_stats", stats(&c, &st) == 0, "no Stats reply"))
		check("accounting_refused_buffer_uncharged",
		    st.session_bytes == 0, "session_bytes %llu after a "
		    "refused buffer of %llu bytes, want 0",
		    (unsigned long long)st.session_bytes,
		    (unsigned long long)(max + 4096));
	conn_close(&c);
	if (check("accounting_watch_session", conn_session(&w, &sv) == 0,
	    "no session")) {
		rc = wait_empty(&w, &st);
		check("accounting_bytes_returned", rc == 0, "objects %llu "
		    "bytes %llu after the session closed, want 0 and 0",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);
	}
out:
	conn_close(&c);
	conn_close(&w);
	srv_stop(&sv, "accounting_server_exit");
}

/*
 * Handshake as a client and learn where peers reach the session (Welcome's
 * session id and key), or as a server's peer link (peer set). Returns 0.
 */
static int
hello_as(struct conn *c, int peer, uint64_t *sid, uint64_t *key)
{
	struct reply	rp;
	int		rc;

	c->peer = peer;
	if (hello_raw(c, VCL_PROTOCOL_VERSION, NULL, 0, &rp) != 0)
		return (-1);
	rc = rp.r->status == CL_SUCCESS && rp.r->welcome != NULL ? 0 : -1;
	if (rc == 0 && sid != NULL) {
		*sid = rp.r->welcome->session_id;
		*key = rp.r->welcome->session_key;
	}
	reply_free(&rp);
	return (rc);
}

/*
 * A migration's bytes that start coming over a peer link before the
 * client's MigrateIn and finish after it: the server stages them in the
 * link's memory (no transfer is waiting yet) and must hand them to the
 * transfer the MigrateIn then made, not fail it. A ReadBuffer waiting on
 * the migration's event must see the pushed bytes.
 */
static void
test_push_race(void)
{
	enum { SIZE = 256 << 10 };
	struct srv		 sv;
	struct conn		 c, p;
	struct reply		 rp;
	struct vcl_buf		 b = { NULL, 0, 0 };
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__PeerPush		 pp = VCL__PEER_PUSH__INIT;
	Vcl__MigrateIn		 mi = VCL__MIGRATE_IN__INIT;
	Vcl__ReadBuffer		 rb = VCL__READ_BUFFER__INIT;
	Vcl__Enqueue		 qi = VCL__ENQUEUE__INIT, qr = VCL__ENQUEUE__INIT;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	uint64_t		 sid = 0, key = 0, ev = 10, xfer = 77;
	uint8_t			*data;
	cl_int			 evst = 1;
	size_t			 i;
	int			 rc, got = 0;

	c.fd = p.fd = -1;
	if ((data = malloc(SIZE)) == NULL)
		return;
	for (i = 0; i < SIZE; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	if (!srv_start(&sv, "push_race_server_start", "127.0.0.1:0", NULL)) {
		free(data);
		return;
	}
	if (!check("push_race_sessions", conn_open(&c, &sv) == 0 &&
	    hello_as(&c, 0, &sid, &key) == 0 && conn_open(&p, &sv) == 0 &&
	    hello_as(&p, 1, NULL, NULL) == 0, "no client or peer session"))
		goto out;
	rc = create_context(&c, 1);
	rc |= create_queue(&c, 2, 1);
	rc |= create_buffer(&c, 3, 1, SIZE, NULL, 0);

	/* The push's head and half its bytes: staged by the link. */
	pp.session = sid;
	pp.key = key;
	pp.transfer = xfer;
	pp.status = CL_SUCCESS;
	r.call_case = VCL__REQUEST__CALL_PEER_PUSH;
	r.peer_push = &pp;
	r.seq = 1;
	rc |= vcl_buf_pack(&b, &r.base, SIZE);
	rc |= send_raw(&p, b.data, b.len);
	rc |= send_raw(&p, data, SIZE / 2);
	vcl_buf_free(&b);
	usleep(200 * 1000);

	/* The MigrateIn, done before the rest comes (Stats: it ran). */
	qi.queue = 2;
	qi.has_event = 1;
	qi.event = ev;
	mi.q = &qi;
	mi.mem = 3;
	mi.offset = 0;
	mi.size = SIZE;
	mi.transfer = xfer;
	memset(&r, 0, sizeof r);
	vcl__request__init(&r);
	r.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	r.migrate_in = &mi;
	rc |= send_req(&c, &r, NULL, 0);
	rc |= stats(&c, &st);
	rc |= send_raw(&p, data + SIZE / 2, SIZE - SIZE / 2);
	if (!check("push_race_sent", rc == 0, "cannot send"))
		goto out;

	/* Read the buffer after the migration's event. */
	qr.queue = 2;
	qr.n_wait = 1;
	qr.wait = &ev;
	rb.q = &qr;
	rb.mem = 3;
	rb.offset = 0;
	rb.size = SIZE;
	memset(&r, 0, sizeof r);
	vcl__request__init(&r);
	r.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	r.read_buffer = &rb;
	if (!check("push_race_read_sent", send_req(&c, &r, NULL, 0) == 0,
	    "cannot send the read"))
		goto out;
	while (!got && recv_msg(&c, &rp) == 0) {
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev)
				evst = rp.tc->notify[i]->status;
		if (rp.r != NULL && rp.r->seq == r.seq) {
			got = 1;
			check("push_race_read", rp.r->status == CL_SUCCESS &&
			    rp.bulk_len == SIZE && memcmp(rp.bulk, data,
			    SIZE) == 0, "read status %d, %llu bytes%s",
			    rp.r->status, (unsigned long long)rp.bulk_len,
			    rp.bulk_len == SIZE ? ", not the pushed ones" : "");
		}
		reply_free(&rp);
	}
	check("push_race_reply", got, "no reply to the read");
	check("push_race_event", evst == CL_COMPLETE, "migration event "
	    "status %d, want CL_COMPLETE", evst);
out:
	conn_close(&c);
	conn_close(&p);
	free(data);
	srv_stop(&sv, "push_race_server_exit");
}

/* --- (d) SIGKILL of a real client ----------------------------------------- */

/*
 * Start the busy client through libvcl with its stdout on a pipe. Returns
 * its pid, or -1.
 */
static pid_t
busy_spawn(const struct srv *sv, const char *icd, int *outfd)
{
	char	nodes[64];
	pid_t	pid;
	int	p[2], fd;

	if (pipe2(p, O_CLOEXEC) != 0)
		return (-1);
	snprintf(nodes, sizeof nodes, "127.0.0.1:%s", sv->port);
	fflush(stdout);
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return (-1);
	}
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		if ((fd = open("/dev/null", O_RDONLY)) != -1) {
			dup2(fd, STDIN_FILENO);
			close(fd);
		}
		setenv("VCL_NODES", nodes, 1);
		setenv("OCL_ICD_VENDORS", icd, 1);
		execl(client_path, client_path, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", client_path, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	*outfd = p[0];
	return (pid);
}

/*
 * Wait (bounded) for a line "ready" on fd. Returns 0, or -1 when the
 * client ended or stayed silent.
 */
static int
busy_wait_ready(int fd)
{
	struct pollfd	pfd;
	char		buf[256];
	size_t		len = 0;
	ssize_t		n;
	int		i;

	pfd.fd = fd;
	pfd.events = POLLIN;
	for (i = 0; i < 3000; i++) {
		if (poll(&pfd, 1, POLL_MS) <= 0)
			continue;
		n = read(fd, buf + len, sizeof buf - 1 - len);
		if (n <= 0)
			return (-1);
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "ready\n") != NULL)
			return (0);
		if (len == sizeof buf - 1)
			len = 0;
	}
	return (-1);
}

/*
 * A libvcl client killed with SIGKILL mid-work: its objects and bytes are
 * all released and the server goes on serving.
 */
static void
test_sigkill(void)
{
	struct srv		 sv;
	struct conn		 w, n;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	const char		*icd = getenv("VCL_TEST_ICD_DIR");
	pid_t			 pid = -1;
	int			 outfd = -1, status, rc;

	if (!check("sigkill_icd_dir", icd != NULL && *icd != '\0',
	    "VCL_TEST_ICD_DIR (the directory of vcl.icd) is not set"))
		return;
	if (!srv_start(&sv, "sigkill_server_start", "127.0.0.1:0", NULL))
		return;
	w.fd = -1;
	if (!check("sigkill_watch_session", conn_session(&w, &sv) == 0,
	    "no session"))
		goto out;
	if ((pid = busy_spawn(&sv, icd, &outfd)) == -1) {
		check("sigkill_client_ready", 0, "cannot start %s",
		    client_path);
		goto out;
	}
	if (!check("sigkill_client_ready", busy_wait_ready(outfd) == 0,
	    "%s never printed ready (see its stderr above)", client_path))
		goto out;
	if (check("sigkill_client_objects", stats(&w, &st) == 0 &&
	    st.objects > 0 && st.sessions >= 2, "objects %llu sessions %llu, "
	    "want the client's objects and its session",
	    (unsigned long long)st.objects, (unsigned long long)st.sessions))
		note("client holds %llu objects, %llu bytes",
		    (unsigned long long)st.objects,
		    (unsigned long long)st.bytes);

	kill(pid, SIGKILL);
	rc = waitpid(pid, &status, 0);
	pid = -1;
	check("sigkill_client_killed", rc > 0 && WIFSIGNALED(status) &&
	    WTERMSIG(status) == SIGKILL, "client did not die of SIGKILL "
	    "(status %#x): did it exit early?", status);

	rc = wait_empty(&w, &st);
	check("sigkill_cleanup", rc == 0, "objects %llu bytes %llu after the "
	    "kill, want 0 and 0 within %d ms", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes, STATS_POLLS * POLL_MS);
	check("sigkill_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
	if (check("sigkill_new_session", conn_session(&n, &sv) == 0,
	    "no new session after the kill")) {
		check("sigkill_new_session_stats", stats(&n, &st) == 0 &&
		    st.sessions == 2, "no Stats reply, or sessions %llu (want "
		    "2)", (unsigned long long)st.sessions);
		conn_close(&n);
	}
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (outfd != -1)
		close(outfd);
	conn_close(&w);
	srv_stop(&sv, "sigkill_server_exit");
}

/* --- (e) malformed input -------------------------------------------------- */

/* A header with any magic word. */
static void
raw_header(uint8_t *h, uint32_t magic, uint32_t msg_len, uint64_t bulk_len)
{
	uint32_t	w[4];

	w[0] = htonl(magic);
	w[1] = htonl(msg_len);
	w[2] = htonl((uint32_t)(bulk_len >> 32));
	w[3] = htonl((uint32_t)bulk_len);
	memcpy(h, w, sizeof w);
}

/*
 * Open a session (handshaken unless preauth), send bytes (prepared by
 * send_fn), and check the server closes it while the long-lived good
 * session still gets Stats replies.
 */
static void
malformed_case(const char *name, struct srv *sv, struct conn *good,
    int preauth, int (*send_fn)(struct conn *))
{
	Vcl__StatsResult	st = VCL__STATS_RESULT__INIT;
	struct conn		c;
	char			n[128];

	if (preauth ? conn_open(&c, sv) != 0 : conn_session(&c, sv) != 0) {
		check(name, 0, "no session to send it on");
		return;
	}
	if (send_fn(&c) != 0)
		note("%s: write failed: %s (closed early?)", name,
		    strerror(errno));
	check(name, wait_closed(&c), "connection still open %d s later",
	    RECV_TIMEOUT_S);
	conn_close(&c);
	snprintf(n, sizeof n, "%s_others_unaffected", name);
	check(n, srv_alive(sv) && stats(good, &st) == 0,
	    "the good session got no Stats reply afterwards (server %s)",
	    srv_how(sv));
}

/* (1) A frame with a bad magic word. */
static int
send_bad_magic(struct conn *c)
{
	uint8_t	f[VCL_FRAME_HDR_LEN + 8];

	memset(f, 0, sizeof f);
	raw_header(f, 0xdeadbe01u, 8, 0);
	return (send_raw(c, f, sizeof f));
}

/*
 * (2) A message over --max-frame (1024): a Stats request made 4 KiB long
 * by an unknown field, so a server ignoring the limit would answer it.
 */
static int
send_over_max_frame(struct conn *c)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__Stats	 m = VCL__STATS__INIT;
	static uint8_t	 f[VCL_FRAME_HDR_LEN + 4200];
	size_t		 n;

	r.seq = ++c->seq;
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	n = VCL_FRAME_HDR_LEN + vcl__request__pack(&r, f + VCL_FRAME_HDR_LEN);
	f[n++] = 0xc2;		/* field 1000, length-delimited */
	f[n++] = 0x3e;
	f[n++] = 0xa0;		/* 4000 bytes */
	f[n++] = 0x1f;
	memset(f + n, 'x', 4000);
	n += 4000;
	vcl_frame_encode(f, (uint32_t)(n - VCL_FRAME_HDR_LEN), 0);
	return (send_raw(c, f, n));
}

/* (3) A valid header, then bytes that are no protobuf. */
static int
send_garbage_protobuf(struct conn *c)
{
	uint8_t	f[VCL_FRAME_HDR_LEN + 32];

	memset(f, 0xff, sizeof f);
	raw_header(f, VCL_FRAME_MAGIC | VCL_PROTOCOL_VERSION, 32, 0);
	return (send_raw(c, f, sizeof f));
}

/* (4) Request{seq 5, field 99 (no such call): bytes}. */
static int
send_unknown_call(struct conn *c)
{
	static const uint8_t	msg[] = {
		0x08, 0x05,		/* field 1 varint: seq 5 */
		0x9a, 0x06, 0x02,	/* field 99, length-delimited, 2 */
		0x08, 0x01
	};
	uint8_t			f[VCL_FRAME_HDR_LEN + sizeof msg];

	vcl_frame_encode(f, sizeof msg, 0);
	memcpy(f + VCL_FRAME_HDR_LEN, msg, sizeof msg);
	return (send_raw(c, f, sizeof f));
}

/* (5) Stats, which takes no bulk, with 8 bulk bytes. */
static int
send_bulk_on_stats(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;
	static uint8_t	bulk[8];

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	return (send_req(c, &r, bulk, sizeof bulk));
}

/* (6) CreateBuffer{size 4096, has_data} with 100 bulk bytes. */
static int
send_buffer_short_data(struct conn *c)
{
	static uint8_t	data[100];

	return (create_buffer(c, 100, 1, 4096, data, sizeof data));
}

/* (6b) CreateBuffer{size 4096, has_data} with no bulk at all. */
static int
send_buffer_no_data(struct conn *c)
{
	static uint8_t	data[1];

	return (create_buffer(c, 100, 1, 4096, data, 0));
}

/* (7) A message length of 0. */
static int
send_empty_frame(struct conn *c)
{
	uint8_t	f[VCL_FRAME_HDR_LEN];

	vcl_frame_encode(f, 0, 0);
	return (send_raw(c, f, sizeof f));
}

/* (8) Stats before the handshake. */
static int
send_stats_preauth(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	return (send_req(c, &r, NULL, 0));
}

/* (9) A second Hello once welcomed. */
static int
send_second_hello(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Hello	h = VCL__HELLO__INIT;

	h.version = VCL_PROTOCOL_VERSION;
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	return (send_req(c, &r, NULL, 0));
}

/* Each kind of malformed input closes its own session only. */
static void
test_malformed(void)
{
	struct srv		 sv;
	struct conn		 good;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	const char		*extra[] = { "--max-frame", "1024", NULL };
	int			 rc;

	if (!srv_start(&sv, "malformed_server_start", "127.0.0.1:0", extra))
		return;
	if (!check("malformed_good_session", conn_session(&good, &sv) == 0,
	    "no session"))
		goto out;
	/* The good session holds objects that must survive all of it. */
	rc = create_context(&good, 1);
	rc |= create_queue(&good, 2, 1);
	rc |= create_buffer(&good, 3, 1, 4096, NULL, 0);
	check("malformed_good_objects", rc == 0 && stats(&good, &st) == 0 &&
	    st.session_objects == 3, "good session could not make 3 objects");

	malformed_case("malformed_bad_magic", &sv, &good, 0, send_bad_magic);
	malformed_case("malformed_over_max_frame", &sv, &good, 0,
	    send_over_max_frame);
	malformed_case("malformed_garbage_protobuf", &sv, &good, 0,
	    send_garbage_protobuf);
	malformed_case("malformed_unknown_call", &sv, &good, 0,
	    send_unknown_call);
	malformed_case("malformed_bulk_on_stats", &sv, &good, 0,
	    send_bulk_on_stats);
	malformed_case("malformed_buffer_data_size", &sv, &good, 0,
	    send_buffer_short_data);
	malformed_case("malformed_buffer_data_missing", &sv, &good, 0,
	    send_buffer_no_data);
	malformed_case("malformed_empty_frame", &sv, &good, 0,
	    send_empty_frame);
	malformed_case("malformed_call_before_hello", &sv, &good, 1,
	    send_stats_preauth);
	malformed_case("malformed_second_hello", &sv, &good, 0,
	    send_second_hello);
	malformed_case("malformed_garbage_before_hello", &sv, &good, 1,
	    send_garbage_protobuf);

	/* Only the good session and its own objects are left. */
	if (check("malformed_good_stats", stats(&good, &st) == 0,
	    "no Stats reply")) {
		check("malformed_sessions_gone", st.sessions == 1,
		    "sessions %llu, want 1", (unsigned long long)st.sessions);
		check("malformed_objects_released", st.objects == 3 &&
		    st.session_objects == 3 && st.bytes == 4096,
		    "objects %llu session_objects %llu bytes %llu, want 3, 3, "
		    "4096", (unsigned long long)st.objects,
		    (unsigned long long)st.session_objects,
		    (unsigned long long)st.bytes);
	}
	conn_close(&good);
out:
	srv_stop(&sv, "malformed_server_exit");
}

/* --- (f) limits ----------------------------------------------------------- */

/* Over --max-session-bytes a buffer fails with an error, not a crash. */
static void
test_limit_bytes(void)
{
	struct srv		 sv;
	struct conn		 c;
	struct reply		 rp;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	const char		*extra[] = { "--max-session-bytes", "1M",
				    NULL };
	uint8_t			*big;
	size_t			 bigsz = 2u << 20;
	int			 rc;

	if ((big = calloc(1, bigsz)) == NULL)
		return;
	if (!srv_start(&sv, "limit_bytes_server_start", "127.0.0.1:0",
	    extra)) {
		free(big);
		return;
	}
	if (!check("limit_bytes_session", conn_session(&c, &sv) == 0,
	    "no session"))
		goto out;
	rc = create_context(&c, 1);
	rc |= create_queue(&c, 2, 1);
	rc |= create_buffer(&c, 3, 1, bigsz, NULL, 0);
	check("limit_bytes_sent", rc == 0, "cannot send");
	rc = read_buffer(&c, 2, 3, bigsz, &rp);
	if (check("limit_bytes_read_reply", rc == 0, "no reply to the read "
	    "(%s)", rc == 1 ? "closed" : "timeout")) {
		check("limit_bytes_read_error", rp.r->status ==
		    CL_MEM_OBJECT_ALLOCATION_FAILURE, "status %d, want "
		    "CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)", rp.r->status);
		check("limit_bytes_read_no_data", rp.bulk_len == 0,
		    "%llu bytes came back", (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	}

	/* The same with the 2 MiB sent as initial bulk: dropped, not kept. */
	rc = create_buffer(&c, 4, 1, bigsz, big, bigsz);
	check("limit_bytes_bulk_sent", rc == 0, "cannot send");
	rc = read_buffer(&c, 2, 4, bigsz, &rp);
	if (check("limit_bytes_bulk_read_reply", rc == 0, "no reply to the "
	    "read (%s)", rc == 1 ? "closed" : "timeout")) {
		check("limit_bytes_bulk_read_error", rp.r->status ==
		    CL_MEM_OBJECT_ALLOCATION_FAILURE, "status %d, want "
		    "CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)", rp.r->status);
		reply_free(&rp);
	}

	/* Under the limit things still work, and nothing leaked. */
	rc = create_buffer(&c, 5, 1, 256u << 10, big, 256u << 10);
	if (rc == 0 && read_buffer(&c, 2, 5, 256u << 10, &rp) == 0) {
		check("limit_bytes_small_ok", rp.r->status == 0 &&
		    rp.bulk_len == 256u << 10, "status %d, %llu bytes",
		    rp.r->status, (unsigned long long)rp.bulk_len);
		reply_free(&rp);
	} else
		check("limit_bytes_small_ok", 0, "no reply");
	if (check("limit_bytes_stats", stats(&c, &st) == 0, "no Stats reply"))
		check("limit_bytes_accounting", st.session_bytes == 256u << 10,
		    "session_bytes %llu, want %u (only the small buffer)",
		    (unsigned long long)st.session_bytes, 256u << 10);
	check("limit_bytes_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
	conn_close(&c);
out:
	free(big);
	srv_stop(&sv, "limit_bytes_server_exit");
}

/* Over --max-objects creations are refused, the session goes on. */
static void
test_limit_objects(void)
{
	struct srv		 sv;
	struct conn		 c;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	const char		*extra[] = { "--max-objects", "10", NULL };
	uint64_t		 id;
	int			 rc = 0;

	if (!srv_start(&sv, "limit_objects_server_start", "127.0.0.1:0",
	    extra))
		return;
	if (!check("limit_objects_session", conn_session(&c, &sv) == 0,
	    "no session"))
		goto out;
	for (id = 1; id <= 20; id++)
		rc |= create_context(&c, id);
	check("limit_objects_sent", rc == 0, "cannot send");
	if (check("limit_objects_stats", stats(&c, &st) == 0,
	    "no Stats reply after 20 contexts")) {
		check("limit_objects_capped", st.session_objects <= 10,
		    "session_objects %llu, want <= 10",
		    (unsigned long long)st.session_objects);
		note("session_objects %llu; GetInfo of context 15: %d",
		    (unsigned long long)st.session_objects,
		    get_info_status(&c, VCL__GET_INFO__WHAT__CONTEXT, 15,
		    CL_CONTEXT_REFERENCE_COUNT));
	}
	check("limit_objects_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
	conn_close(&c);
out:
	srv_stop(&sv, "limit_objects_server_exit");
}

/* --- runner --------------------------------------------------------------- */

static const struct test tests[] = {
	{ "handshake",		test_handshake,		60 },
	{ "drain",		test_drain,		60 },
	{ "auth",		test_auth,		60 },
	{ "listen",		test_listen_nonloopback, 90 },
	{ "isolation",		test_isolation,		60 },
	{ "accounting",		test_accounting,	60 },
	{ "push_race",		test_push_race,		60 },
	{ "sigkill",		test_sigkill,		120 },
	{ "malformed",		test_malformed,		180 },
	{ "limit_bytes",	test_limit_bytes,	60 },
	{ "limit_objects",	test_limit_objects,	60 },
};

/*
 * Run one group in a child of its own process group, under alarm(). Adds
 * its passes and failures; a group that dies or times out is one failure
 * more, and whatever it left running is killed.
 */
static void
run_group(const struct test *t, int *passed, int *failed)
{
	char	buf[256];
	ssize_t	n, i;
	pid_t	pid;
	int	p[2], status, j;

	if (pipe2(p, O_CLOEXEC) != 0) {
		printf("FAIL %s: pipe: %s\n", t->name, strerror(errno));
		(*failed)++;
		return;
	}
	fflush(stdout);
	if ((pid = fork()) == -1) {
		printf("FAIL %s: fork: %s\n", t->name, strerror(errno));
		(*failed)++;
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		setpgid(0, 0);
		result_fd = p[1];
		alarm(t->timeout);
		t->fn();
		for (j = 0; group_fails > 0 && j < group_ndirs; j++)
			note("server log: %s/stderr", group_dirs[j]);
		fflush(stdout);
		_exit(0);
	}
	setpgid(pid, pid);
	close(p[1]);
	while ((n = read(p[0], buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (i = 0; i < n; i++) {
			if (buf[i] == 'P')
				(*passed)++;
			else
				(*failed)++;
		}
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	kill(-pid, SIGKILL);	/* what the group left running */
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
			printf("FAIL %s: timed out after %u s\n", t->name,
			    t->timeout);
		else
			printf("FAIL %s: test process died (status %#x)\n",
			    t->name, status);
		(*failed)++;
	}
	fflush(stdout);
}

/* nftw callback: remove one entry of the scratch tree. */
static int
rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return (remove(path));
}

int
main(int argc, char **argv)
{
	const char	*only = getenv("SESSION_TEST_ONLY");
	size_t		 i;
	int		 passed = 0, failed = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: session_test VCLSERVER BUSY_CLIENT\n"
		    "  VCL_TEST_ICD_DIR: directory of the VCL vcl.icd\n"
		    "  SESSION_TEST_ONLY: run only the named group\n");
		return (2);
	}
	server_path = argv[1];
	client_path = argv[2];
	if (access(server_path, X_OK) != 0 || access(client_path, X_OK) != 0) {
		fprintf(stderr, "session_test: %s or %s is not executable\n",
		    server_path, client_path);
		return (2);
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mkdtemp(root) == NULL) {
		fprintf(stderr, "session_test: mkdtemp: %s\n", strerror(errno));
		return (2);
	}
	for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (only != NULL && *only != '\0' &&
		    strcmp(only, tests[i].name) != 0)
			continue;
		run_group(&tests[i], &passed, &failed);
	}
	if (failed == 0)
		nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	else
		printf("# scratch files and server logs kept in %s\n", root);
	printf("%d passed, %d failed\n", passed, failed);
	return (failed == 0 ? 0 : 1);
}
