/* rawproto.c - raw wire-protocol test harness: servers, connections, checks. */

#include <sys/mman.h>

#include "rawproto.h"
#include "vcl_shm.h"

const char	*server_path;
const char	*client_path;
char		 root[] = "/tmp/vcl-session-test.XXXXXX";
int		 srv_journal;

/* State of the group running in this child. */
static int		 result_fd = -1;
static int		 group_fails;
static char		 group_dirs[MAX_SERVERS][PATH_MAX];
static int		 group_ndirs;

const char kernel_src[] =
	"__kernel void k(__global int *a) { a[get_global_id(0)] = 1; }\n";


/* Record one check: print PASS or FAIL (with why) and tell the parent. */
int
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
void
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
void
poll_wait(void)
{
	struct timespec	ts = { 0, POLL_MS * 1000000L };

	nanosleep(&ts, NULL);
}

/* --- servers ------------------------------------------------------------ */

/*
 * In a server's child: name its stderr in JOURNAL_STREAM, as systemd does
 * for a service whose stderr is the journal.
 */
static void
srv_journal_env(void)
{
	struct stat	st;
	char		v[64];

	if (fstat(STDERR_FILENO, &st) == 0) {
		snprintf(v, sizeof v, "%llu:%llu", (unsigned long long)st.st_dev,
		    (unsigned long long)st.st_ino);
		setenv("JOURNAL_STREAM", v, 1);
	}
}

/*
 * Fork and exec a server listening on listen, with the extra options (NULL
 * terminated). Its stderr goes to DIR/stderr. Returns 0 or -1.
 */
int
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
		if (srv_journal)
			srv_journal_env();
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
int
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
int
srv_alive(struct srv *sv)
{
	return (sv->pid > 0 && !srv_reap(sv));
}

/*
 * Wait (bounded polls) for the port file. Returns 0 once the server
 * listens, -1 when it exited or never got ready.
 */
int
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
int
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

/* Kill a server that may be stopped (SIGSTOP) and reap it; none: nothing. */
void
srv_kill(struct srv *sv)
{
	if (sv->pid <= 0)
		return;
	kill(sv->pid, SIGCONT);
	kill(sv->pid, SIGKILL);
	srv_wait_exit(sv);
}

/* Describe how a reaped server ended. */
const char *
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
int
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
void
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
int
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
int
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
int
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
void
reply_free(struct reply *rp)
{
	if (rp->tc != NULL)
		vcl__to_client__free_unpacked(rp->tc, NULL);
	free(rp->bulk);
	memset(rp, 0, sizeof *rp);
}

/* Write raw bytes. Returns 0 or -1. */
int
send_raw(struct conn *c, const void *p, size_t n)
{
	struct iovec	iov;

	iov.iov_base = (void *)p;
	iov.iov_len = n;
	return (vcl_io_writev_full(c->fd, &iov, 1));
}

/* Send a Request (next seq) with bulk_len bulk bytes after it. */
int
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
int
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
int
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
void
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
int
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
int
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

/*
 * Handshake as a client and learn where peers reach the session (Welcome's
 * session id and key), or as a server's peer link (peer set). Returns 0.
 */
int
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

/* Connect and handshake. Returns 0 or -1. */
int
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
int
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
int
wait_empty(struct conn *c, Vcl__StatsResult *st)
{
	return (wait_empty_polls(c, st, STATS_POLLS));
}

/* wait_empty, polls polls at most (a test that waits for long kernels). */
/*
 * Poll Stats on c (bounded) until no object is left (another session
 * closed, its objects freed), whatever bytes its staging still holds.
 * 0 with the counters in *st, or -1.
 */
int
wait_gone(struct conn *c, Vcl__StatsResult *st)
{
	int	i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, st) != 0)
			return (-1);
		if (st->objects == 0)
			return (0);
		poll_wait();
	}
	return (-1);
}

int
wait_empty_polls(struct conn *c, Vcl__StatsResult *st, int polls)
{
	int	i;

	for (i = 0; i < polls; i++) {
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
int
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
int
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
int
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
int
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
int
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
int
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
int
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
int
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
int
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
int
msg_has(const struct reply *rp, const char *word)
{
	return (rp->r != NULL && rp->r->message != NULL &&
	    strcasestr(rp->r->message, word) != NULL);
}


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
rawproto_main(int argc, char **argv, const struct test *tests, size_t ntests)
{
	const char	*only = getenv("SESSION_TEST_ONLY");
	size_t		 i;
	int		 passed = 0, failed = 0;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: %s VCLSERVER [CLIENT]\n"
		    "  VCL_TEST_ICD_DIR: directory of the VCL vcl.icd\n"
		    "  SESSION_TEST_ONLY: run only the named group\n"
		    "  SESSION_TEST_KEEP: keep scratch files and server logs\n",
		    argv[0]);
		return (2);
	}
	server_path = argv[1];
	client_path = argc == 3 ? argv[2] : NULL;
	if (access(server_path, X_OK) != 0 ||
	    (client_path != NULL && access(client_path, X_OK) != 0)) {
		fprintf(stderr, "%s: %s or %s is not executable\n", argv[0],
		    server_path, client_path ? client_path : "-");
		return (2);
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mkdtemp(root) == NULL) {
		fprintf(stderr, "%s: mkdtemp: %s\n", argv[0], strerror(errno));
		return (2);
	}
	for (i = 0; i < ntests; i++) {
		if (only != NULL && *only != '\0' &&
		    strcmp(only, tests[i].name) != 0)
			continue;
		run_group(&tests[i], &passed, &failed);
	}
	if (failed == 0 && getenv("SESSION_TEST_KEEP") == NULL)
		nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	else
		printf("# scratch files and server logs kept in %s\n", root);
	printf("%d passed, %d failed\n", passed, failed);
	return (failed == 0 ? 0 : 1);
}

/* A client session (with its id and key) and a context 1, queue 2. */
int
client_open(struct conn *c, const struct srv *sv, uint64_t *sid,
    uint64_t *key)
{
	if (conn_open(c, sv) != 0 || hello_as(c, 0, sid, key) != 0)
		return (-1);
	return (create_context(c, 1) | create_queue(c, 2, 1));
}

/* Read messages (bounded) until event ev's notification; its status. */
int
wait_notify(struct conn *c, uint64_t ev, cl_int *st)
{
	struct reply	rp;
	size_t		i;
	int		n, found = 0;

	for (n = 0; !found && n < 2000; n++) {
		if (recv_msg(c, &rp) != 0)
			return (-1);
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev) {
				*st = rp.tc->notify[i]->status;
				found = 1;
			}
		reply_free(&rp);
	}
	return (found ? 0 : -1);
}

/* MigrateIn{queue 2, event ev, mem, 0, size, transfer, source if any}. */
int
migrate_in(struct conn *c, uint64_t ev, uint64_t mem, uint64_t size,
    uint64_t xfer, const char *source)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__MigrateIn	mi = VCL__MIGRATE_IN__INIT;
	Vcl__Enqueue	q = VCL__ENQUEUE__INIT;

	q.queue = 2;
	q.has_event = 1;
	q.event = ev;
	mi.q = &q;
	mi.mem = mem;
	mi.size = size;
	mi.transfer = xfer;
	if (source != NULL)
		mi.source = (char *)source;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	r.migrate_in = &mi;
	return (send_req(c, &r, NULL, 0));
}

/* Poll Stats on w (bounded) until the server's bulk in reaches want. */
int
wait_bytes_in(struct conn *w, uint64_t want)
{
	Vcl__StatsResult	st;
	int			i;

	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(w, &st) != 0)
			return (-1);
		if (st.bytes_in >= want)
			return (0);
		poll_wait();
	}
	return (-1);
}

#define RAW_RING_SIZE	(VCL_SHM_PAGE + RAW_RING_SLOTS * RAW_RING_SLOT)

/* A sealed memfd ring naming the session of c, given to the server. */
int
raw_ring_give(struct raw_ring *rg, struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__ShmRing	m = VCL__SHM_RING__INIT;
	struct reply	rp;
	int		st;

	rg->base = MAP_FAILED;
	if ((rg->fd = memfd_create("vcl-test-ring", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1 ||
	    ftruncate(rg->fd, RAW_RING_SIZE) != 0 ||
	    fcntl(rg->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_SEAL) != 0 || (rg->base = mmap(NULL, RAW_RING_SIZE,
	    PROT_READ | PROT_WRITE, MAP_SHARED, rg->fd, 0)) == MAP_FAILED) {
		note("ring: %s", strerror(errno));
		return (-1);
	}
	memcpy(rg->base, VCL_SHM_MAGIC, sizeof VCL_SHM_MAGIC);
	memcpy(rg->base + sizeof VCL_SHM_MAGIC, c->nonce, c->nonce_len);
	m.pid = (uint32_t)getpid();
	m.fd = (uint32_t)rg->fd;
	m.slots = RAW_RING_SLOTS;
	m.slot_size = RAW_RING_SLOT;
	r.call_case = VCL__REQUEST__CALL_SHM_RING;
	r.shm_ring = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	st = rp.r->status;
	reply_free(&rp);
	if (st != CL_SUCCESS)
		note("ring refused: %d", st);
	return (st == CL_SUCCESS ? 0 : -1);
}

/* Unmap and close a test ring. */
void
raw_ring_free(struct raw_ring *rg)
{
	if (rg->base != MAP_FAILED)
		munmap(rg->base, RAW_RING_SIZE);
	if (rg->fd != -1)
		close(rg->fd);
	rg->fd = -1;
	rg->base = MAP_FAILED;
}

/* Slot i of a test ring. */
uint8_t *
raw_ring_slot(struct raw_ring *rg, unsigned i)
{
	return (rg->base + VCL_SHM_PAGE + (size_t)i * RAW_RING_SLOT);
}

/* Call r, waiting: the reply's status, or 1 for no reply. */
int
raw_status(struct conn *c, Vcl__Request *r)
{
	struct reply	rp;
	int		st;

	if (call(c, r, NULL, 0, &rp) != 0)
		return (1);
	st = rp.r->status;
	reply_free(&rp);
	return (st);
}

/*
 * BuildProgram{program, options}, waiting: the reply's status, or 1 for
 * no reply.
 */
int
raw_build(struct conn *c, uint64_t prog, const char *options)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	m = VCL__BUILD_PROGRAM__INIT;

	m.program = prog;
	m.options = (char *)options;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &m;
	return (raw_status(c, &r));
}

/* CreateKernel{id, program, name}, waiting: the status, or 1. */
int
raw_kernel(struct conn *c, uint64_t id, uint64_t prog, const char *name)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateKernel	m = VCL__CREATE_KERNEL__INIT;

	m.id = id;
	m.program = prog;
	m.name = (char *)name;
	r.call_case = VCL__REQUEST__CALL_CREATE_KERNEL;
	r.create_kernel = &m;
	return (raw_status(c, &r));
}

/* Finish{queue}, waiting: the status it reports, or 1 for no reply. */
int
raw_finish(struct conn *c, uint64_t q)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Finish	m = VCL__FINISH__INIT;

	m.queue = q;
	r.call_case = VCL__REQUEST__CALL_FINISH;
	r.finish = &m;
	return (raw_status(c, &r));
}

/*
 * Send a one-dimensional NDRange of kernel k on queue q: global gws, local
 * lws (0: none), with nargs arguments, asking for event ev (0: none).
 * Returns 0 or -1; no reply comes.
 */
int
raw_ndrange(struct conn *c, uint64_t q, uint64_t k, uint64_t gws,
    uint64_t lws, Vcl__KernelArg **args, size_t nargs, uint64_t ev)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__NDRange	m = VCL__NDRANGE__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = q;
	e.has_event = ev != 0;
	e.event = ev;
	m.q = &e;
	m.kernel = k;
	m.work_dim = 1;
	m.n_global = 1;
	m.global = &gws;
	m.n_local = lws != 0;
	m.local = &lws;
	m.n_args = nargs;
	m.args = args;
	r.call_case = VCL__REQUEST__CALL_NDRANGE;
	r.ndrange = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * A round trip on c (Stats), noting event ev's notification if one comes
 * before its reply (*seen, *st). 0 or -1.
 */
int
raw_sync_seen(struct conn *c, uint64_t ev, int *seen, cl_int *st)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;
	struct reply	rp;
	size_t		i;
	int		n, done = 0;

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if (send_req(c, &r, NULL, 0) != 0)
		return (-1);
	for (n = 0; !done && n < 2000; n++) {
		if (recv_msg(c, &rp) != 0)
			return (-1);
		for (i = 0; rp.tc->notify != NULL && i < rp.tc->n_notify; i++)
			if (rp.tc->notify[i]->event == ev) {
				*st = rp.tc->notify[i]->status;
				*seen = 1;
			}
		done = rp.r != NULL && rp.r->seq == r.seq;
		reply_free(&rp);
	}
	return (done ? 0 : -1);
}

/* Point libvcl at the server, before its first call. */
int
raw_client_env(const struct srv *sv)
{
	const char	*icd = getenv("VCL_TEST_ICD_DIR");
	char		 nodes[64];

	if (icd == NULL || *icd == '\0')
		return (check("env", 0,
		    "VCL_TEST_ICD_DIR (the directory of vcl.icd) is not set"));
	snprintf(nodes, sizeof nodes, "127.0.0.1:%s", sv->port);
	setenv("VCL_NODES", nodes, 1);
	setenv("OCL_ICD_VENDORS", icd, 1);
	setenv("VCL_STRICT", "1", 1);
	return (1);
}

/*
 * A kernel that runs for a while, to hold what comes behind it on its
 * queue: program prog (from source, built) in ctx, its kernel k, and the
 * 64-byte buffer mem it writes. Returns 0, or -1.
 */
int
raw_spin_setup(struct conn *c, uint64_t ctx, uint64_t prog, uint64_t k,
    uint64_t mem)
{
	static const char	src[] =
	    "__kernel void spin(__global uint *o, uint n)\n"
	    "{ uint x = 1; for (uint i = 0; i < n; i++) x = x * 1103515245u +"
	    " 12345u; o[0] = x; }\n";

	if (create_program(c, prog, ctx, src) != 0 ||
	    create_buffer(c, mem, ctx, 64, NULL, 0) != 0 ||
	    raw_build(c, prog, NULL) != CL_SUCCESS ||
	    raw_kernel(c, k, prog, "spin") != CL_SUCCESS)
		return (-1);
	return (0);
}

/*
 * Send kernel k of raw_spin_setup (buffer mem) on queue q for steps
 * iterations, no event. Returns 0 or -1; no reply comes.
 */
int
raw_spin_send(struct conn *c, uint64_t q, uint64_t k, uint64_t mem,
    uint32_t steps)
{
	return (raw_spin_send_ev(c, q, k, mem, steps, 0));
}

/* The same, asking for event ev (0: none). */
int
raw_spin_send_ev(struct conn *c, uint64_t q, uint64_t k, uint64_t mem,
    uint32_t steps, uint64_t ev)
{
	Vcl__KernelArg	 a[2], *ap[2] = { &a[0], &a[1] };

	vcl__kernel_arg__init(&a[0]);
	a[0].index = 0;
	a[0].type = VCL__KERNEL_ARG__TYPE__MEM;
	a[0].has_mem = 1;
	a[0].mem = mem;
	vcl__kernel_arg__init(&a[1]);
	a[1].index = 1;
	a[1].type = VCL__KERNEL_ARG__TYPE__VALUE;
	a[1].has_value = 1;
	a[1].value.data = (uint8_t *)&steps;
	a[1].value.len = sizeof steps;
	return (raw_ndrange(c, q, k, 1, 0, ap, 2, ev));
}

/*
 * Marker{queue q, event ev (0: none), waiting for the n events of wait}.
 * Returns 0 or -1; no reply comes.
 */
int
raw_marker(struct conn *c, uint64_t q, uint64_t ev, const uint64_t *wait,
    size_t n)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Marker	m = VCL__MARKER__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = q;
	e.has_event = ev != 0;
	e.event = ev;
	e.n_wait = n;
	e.wait = (uint64_t *)wait;
	m.q = &e;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &m;
	return (send_req(c, &r, NULL, 0));
}

/* CreateUserEvent{id, ctx}. Returns 0 or -1; no reply comes. */
int
raw_user_event(struct conn *c, uint64_t id, uint64_t ctx)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	m = VCL__CREATE_USER_EVENT__INIT;

	m.id = id;
	m.context = ctx;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &m;
	return (send_req(c, &r, NULL, 0));
}

/* SetUserEventStatus{id, status}. Returns 0 or -1; no reply comes. */
int
raw_user_set(struct conn *c, uint64_t id, cl_int status)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__SetUserEventStatus	m = VCL__SET_USER_EVENT_STATUS__INIT;

	m.event = id;
	m.status = status;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * ForwardEvent of event 1000 + proxy, one the session does not have, to
 * proxy at addr: the server tells the proxy there that it failed, over a
 * link it dials for it. Returns 0 or -1; no reply comes.
 */
int
raw_forward_bogus(struct conn *c, const char *addr, uint64_t proxy)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__ForwardEvent	m = VCL__FORWARD_EVENT__INIT;
	Vcl__PeerDest		d = VCL__PEER_DEST__INIT;

	d.addr = (char *)addr;
	d.session = 1;
	d.key = 1;
	m.event = 1000 + proxy;
	m.dest = &d;
	m.proxy = proxy;
	r.call_case = VCL__REQUEST__CALL_FORWARD_EVENT;
	r.forward_event = &m;
	return (send_req(c, &r, NULL, 0));
}

/* A listener on 127.0.0.1 that never accepts; its "127.0.0.1:port". */
int
raw_mute_listener(char *addr, size_t len)
{
	char	port[16];
	int	fd;

	if ((fd = raw_fake_listen(port, sizeof port)) != -1)
		snprintf(addr, len, "127.0.0.1:%s", port);
	return (fd);
}

/*
 * Stats, skipping the replies and notifications before its own: the
 * number of peer links, and whether the one to addr (if any) is ready
 * (1), being dialled (0) or not there (-1).
 */
int
raw_links_now(struct conn *c, const char *addr, size_t *n, int *ready)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;
	struct reply	rp;
	size_t		i;
	int		k;

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if (send_req(c, &r, NULL, 0) != 0)
		return (-1);
	for (k = 0; k < 10000; k++) {
		if (recv_msg(c, &rp) != 0)
			return (-1);
		if (rp.r != NULL && rp.r->seq == r.seq)
			break;
		reply_free(&rp);
	}
	if (k == 10000 || rp.r->stats == NULL) {
		if (k < 10000)
			reply_free(&rp);
		return (-1);
	}
	*n = rp.r->stats->n_peer_links;
	*ready = -1;
	for (i = 0; addr != NULL && i < *n; i++)
		if (strcmp(rp.r->stats->peer_links[i]->address, addr) == 0)
			*ready = rp.r->stats->peer_links[i]->ready;
	reply_free(&rp);
	return (0);
}

/* Poll (bounded) until the server holds at most want links; 0 or -1. */
int
raw_wait_links_at_most(struct conn *c, size_t want, size_t *n)
{
	int	i, ready;

	for (i = 0; i < STATS_POLLS; i++) {
		if (raw_links_now(c, NULL, n, &ready) != 0)
			return (-1);
		if (*n <= want)
			return (0);
		poll_wait();
	}
	return (-1);
}

/*
 * srv_start with library lib preloaded into the server (LD_PRELOAD), the
 * way tests make the runtime under it behave as another's; var names
 * where lib came from, for the failure when it is not set. Returns 1 when
 * the server is up.
 */
int
srv_start_preload(struct srv *sv, const char *name, const char *lib,
    const char *var, const char *const *extra)
{
	const char	*asan = getenv("ASAN_OPTIONS");
	char		*saved;
	char		 opts[1024];
	int		 up;

	if (!check(name, lib != NULL && *lib != '\0', "%s is not set", var))
		return (0);
	saved = asan != NULL ? strdup(asan) : NULL;
	/* The sanitizer build: a preloaded library comes before its runtime. */
	snprintf(opts, sizeof opts, "%s%sverify_asan_link_order=0",
	    saved != NULL ? saved : "", saved != NULL ? ":" : "");
	setenv("ASAN_OPTIONS", opts, 1);
	setenv("LD_PRELOAD", lib, 1);
	up = srv_start(sv, name, "127.0.0.1:0", extra);
	unsetenv("LD_PRELOAD");
	if (saved != NULL)
		setenv("ASAN_OPTIONS", saved, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(saved);
	return (up);
}

/*
 * A byte pattern of seed in n fresh bytes (the caller frees them) that
 * no 64 KiB chunk repeats at another offset. NULL: no memory.
 */
uint8_t *
raw_pattern(size_t n, unsigned seed)
{
	uint8_t	*p;
	size_t	 i;

	if ((p = malloc(n)) == NULL)
		return (NULL);
	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i ^ (i >> 8) ^ (i >> 17) ^ seed);
	return (p);
}

/*
 * Send WriteBuffer{e, mem, off, size} announcing blen bulk bytes, and the
 * first sent of them from data (a write cut short, or a bulk that
 * disagrees with its size). Returns its seq, 0 on error.
 */
uint64_t
raw_write_part(struct conn *c, const Vcl__Enqueue *e, uint64_t mem,
    uint64_t off, uint64_t size, uint64_t blen, const uint8_t *data,
    uint64_t sent)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__WriteBuffer	m = VCL__WRITE_BUFFER__INIT;
	struct vcl_buf		b = { NULL, 0, 0 };
	int			rc;

	m.q = (Vcl__Enqueue *)e;
	m.mem = mem;
	m.offset = off;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	r.write_buffer = &m;
	r.seq = ++c->seq;
	if (vcl_buf_pack(&b, &r.base, blen) != 0)
		return (0);
	rc = send_raw(c, b.data, b.len);
	vcl_buf_free(&b);
	if (rc == 0 && sent > 0)
		rc = send_raw(c, data, sent);
	return (rc == 0 ? r.seq : 0);
}

/* --- a fake server: the server end of the wire, for client tests ---- */

/* Listen on 127.0.0.1, port 0. Returns the fd (port in port) or -1. */
int
raw_fake_listen(char *port, size_t len)
{
	struct sockaddr_in	sin;
	socklen_t		sl = sizeof sin;
	int			fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
	    listen(fd, 16) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) != 0) {
		close(fd);
		return (-1);
	}
	snprintf(port, len, "%u", ntohs(sin.sin_port));
	return (fd);
}

/* Send one ToClient frame, then bulk_len bytes of bulk (sent_len of them). */
int
raw_fake_send(int fd, Vcl__ToClient *tc, uint64_t bulk_len, size_t sent_len)
{
	struct vcl_buf	 b = { NULL, 0, 0 };
	struct iovec	 iov[2];
	uint8_t		*bulk = NULL;
	int		 rc = -1;

	if (vcl_buf_pack(&b, &tc->base, bulk_len) != 0)
		goto out;
	if (sent_len > 0 && (bulk = malloc(sent_len)) == NULL)
		goto out;
	if (bulk != NULL)
		memset(bulk, 0x5a, sent_len);
	iov[0].iov_base = b.data;
	iov[0].iov_len = b.len;
	iov[1].iov_base = bulk;
	iov[1].iov_len = sent_len;
	rc = vcl_io_writev_full(fd, iov, sent_len > 0 ? 2 : 1);
out:
	free(bulk);
	vcl_buf_free(&b);
	return (rc);
}

/* Send a Reply with status, no result. */
int
raw_fake_reply(int fd, uint64_t seq, cl_int status, uint64_t bulk_len,
    size_t sent_len)
{
	Vcl__ToClient	tc = VCL__TO_CLIENT__INIT;
	Vcl__Reply	r = VCL__REPLY__INIT;

	r.seq = seq;
	r.status = status;
	tc.reply = &r;
	return (raw_fake_send(fd, &tc, bulk_len, sent_len));
}

/* Read one Request frame; *bulk_len is its bulk, not read. NULL on error. */
Vcl__Request *
raw_fake_read(int fd, uint64_t *bulk_len)
{
	struct vcl_frame_limits	 lim = { 64u << 20, 4ull << 30 };
	struct vcl_frame_hdr	 hdr;
	uint8_t			 h[VCL_FRAME_HDR_LEN], *msg;
	Vcl__Request		*req = NULL;
	const char		*why;

	if (read_n(fd, h, sizeof h) != 0 ||
	    vcl_frame_decode(h, &lim, &hdr, &why) != 0 ||
	    (msg = malloc(hdr.msg_len)) == NULL)
		return (NULL);
	if (read_n(fd, msg, hdr.msg_len) == 0)
		req = vcl__request__unpack(NULL, hdr.msg_len, msg);
	free(msg);
	*bulk_len = hdr.bulk_len;
	return (req);
}

/* Read and drop n bulk bytes. */
int
raw_fake_skip(int fd, uint64_t n)
{
	uint8_t	buf[65536];
	size_t	k;

	while (n > 0) {
		k = n < sizeof buf ? (size_t)n : sizeof buf;
		if (read_n(fd, buf, k) != 0)
			return (-1);
		n -= k;
	}
	return (0);
}

/* Greet, take the Hello, send a Welcome with ndev devices. */
int
raw_fake_handshake(int fd, size_t ndev, int bad_string)
{
	Vcl__ToClient		  tc = VCL__TO_CLIENT__INIT;
	Vcl__Greeting		  g = VCL__GREETING__INIT;
	Vcl__Reply		  r = VCL__REPLY__INIT;
	Vcl__Welcome		  w = VCL__WELCOME__INIT;
	Vcl__DeviceInfo		  di = VCL__DEVICE_INFO__INIT, **devs;
	Vcl__InfoValue		  iv[4], *ivp[4];
	static char		  name[8] = "AAAAAAAA";	/* no NUL */
	Vcl__Request		 *req;
	cl_device_type		  type = CL_DEVICE_TYPE_CPU;
	cl_command_queue_properties qp = 0;
	cl_ulong		  maxalloc = 1ull << 30;
	uint8_t			  nonce[16] = { 1 };
	uint64_t		  bulk;
	size_t			  i;
	int			  rc = -1;

	g.version = VCL_PROTOCOL_VERSION;
	g.nonce.data = nonce;
	g.nonce.len = sizeof nonce;
	g.node_name = "fake";
	tc.greeting = &g;
	if (raw_fake_send(fd, &tc, 0, 0) != 0)
		return (-1);
	if ((req = raw_fake_read(fd, &bulk)) == NULL ||
	    req->call_case != VCL__REQUEST__CALL_HELLO) {
		note("fake server: no Hello");
		goto out;
	}
	for (i = 0; i < 4; i++) {
		vcl__info_value__init(&iv[i]);
		iv[i].has_value = 1;
		ivp[i] = &iv[i];
	}
	iv[0].param = CL_DEVICE_TYPE;
	iv[0].value.data = (uint8_t *)&type;
	iv[0].value.len = sizeof type;
	iv[1].param = CL_DEVICE_QUEUE_ON_HOST_PROPERTIES;
	iv[1].value.data = (uint8_t *)&qp;
	iv[1].value.len = sizeof qp;
	iv[2].param = CL_DEVICE_MAX_MEM_ALLOC_SIZE;
	iv[2].value.data = (uint8_t *)&maxalloc;
	iv[2].value.len = sizeof maxalloc;
	iv[3].param = CL_DEVICE_NAME;
	iv[3].value.data = (uint8_t *)name;
	iv[3].value.len = sizeof name;
	di.info = ivp;
	di.n_info = bad_string ? 4 : 3;
	if ((devs = calloc(ndev, sizeof *devs)) == NULL)
		goto out;
	for (i = 0; i < ndev; i++)
		devs[i] = &di;
	w.node_name = "fake";
	w.devices = devs;
	w.n_devices = ndev;
	r.seq = req->seq;
	r.status = CL_SUCCESS;
	r.result_case = VCL__REPLY__RESULT_WELCOME;
	r.welcome = &w;
	tc.greeting = NULL;
	tc.reply = &r;
	rc = raw_fake_send(fd, &tc, 0, 0);
	free(devs);
out:
	if (req != NULL)
		vcl__request__free_unpacked(req, NULL);
	return (rc);
}

/*
 * Open a server's latch (VCL_TEST_MOVER_LATCH and the like: it waits
 * until the file exists): make its file. Returns 1, or 0 on failure.
 */
int
raw_latch_open(const char *path)
{
	int	fd;

	if ((fd = open(path, O_CREAT | O_WRONLY, 0600)) == -1)
		return (0);
	close(fd);
	return (1);
}

/* The execution status of event ev of c (GetInfo). 0 or -1. */
int
raw_event_status(struct conn *c, uint64_t ev, cl_int *st)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetInfo	m = VCL__GET_INFO__INIT;
	struct reply	rp;
	int		rc = -1;

	m.what = VCL__GET_INFO__WHAT__EVENT;
	m.id = ev;
	m.param = CL_EVENT_COMMAND_EXECUTION_STATUS;
	r.call_case = VCL__REQUEST__CALL_GET_INFO;
	r.get_info = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	if (rp.r->status == CL_SUCCESS && rp.r->info != NULL &&
	    rp.r->info->value.len == sizeof *st) {
		memcpy(st, rp.r->info->value.data, sizeof *st);
		rc = 0;
	}
	reply_free(&rp);
	return (rc);
}

/* Requests of opcode op the server ran since its start (Stats), or MAX. */
uint64_t
raw_op_count(struct conn *c, int op)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;
	struct reply	rp;
	uint64_t	n = UINT64_MAX;
	size_t		i;

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (UINT64_MAX);
	if (rp.r->status == CL_SUCCESS && rp.r->stats != NULL)
		for (i = 0, n = 0; i < rp.r->stats->n_ops; i++)
			if (rp.r->stats->ops[i]->opcode == (uint32_t)op)
				n += rp.r->stats->ops[i]->requests;
	reply_free(&rp);
	return (n);
}
