/* client_faults_test.c - libvcl against servers that die, stop or lie. */

/*
 * Each group runs fault_client (a libvcl application, through the ICD
 * loader; VCL_TEST_ICD_DIR names the directory of vcl.icd) against a real
 * vclserver that the test kills or stops, or against a fake server in this
 * process that speaks the frame format and misbehaves on purpose. The
 * client must return an error within a bound and exit normally: never
 * hang, never die of a signal, never take bytes it did not ask for.
 */

#include "rawproto.h"

#define CLIENT_EXIT_POLLS	2000	/* client exit after a fault: 20 s */
#define CLIENT_READY_POLLS	6000	/* client's first round: 60 s */
#define KILL_ROUNDS		20

/* A fault_client run: its pid, its stdout, what it printed. */
struct client {
	pid_t	pid;
	int	out;
	char	buf[4096];
	size_t	len;
	int	status;
};

/*
 * Start fault_client MODE ARG against 127.0.0.1:port, VCL_CALL_TIMEOUT_MS
 * set to timeout unless NULL. SIGPIPE goes back to its default: the test
 * ignores it, and an ignored disposition would survive exec.
 */
static int
client_spawn(struct client *c, const char *port, const char *mode,
    const char *arg, const char *timeout)
{
	const char	*icd = getenv("VCL_TEST_ICD_DIR");
	char		 nodes[64];
	int		 p[2], fd;

	memset(c, 0, sizeof *c);
	c->pid = -1;
	c->out = -1;
	if (icd == NULL || *icd == '\0') {
		note("VCL_TEST_ICD_DIR (the directory of vcl.icd) is not set");
		return (-1);
	}
	if (pipe2(p, O_CLOEXEC) != 0)
		return (-1);
	snprintf(nodes, sizeof nodes, "127.0.0.1:%s", port);
	fflush(stdout);
	if ((c->pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return (-1);
	}
	if (c->pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		dup2(p[1], STDOUT_FILENO);
		if ((fd = open("/dev/null", O_RDONLY)) != -1) {
			dup2(fd, STDIN_FILENO);
			close(fd);
		}
		setenv("VCL_NODES", nodes, 1);
		setenv("OCL_ICD_VENDORS", icd, 1);
		if (timeout != NULL)
			setenv("VCL_CALL_TIMEOUT_MS", timeout, 1);
		else
			unsetenv("VCL_CALL_TIMEOUT_MS");
		execl(client_path, client_path, mode, arg, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", client_path, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	c->out = p[0];
	return (0);
}

/* Take what the client printed so far (up to one poll interval). */
static void
client_drain(struct client *c)
{
	struct pollfd	pfd;
	ssize_t		n;

	pfd.fd = c->out;
	pfd.events = POLLIN;
	while (c->out != -1 && poll(&pfd, 1, POLL_MS) == 1) {
		n = read(c->out, c->buf + c->len, sizeof c->buf - 1 - c->len);
		if (n <= 0) {
			close(c->out);
			c->out = -1;
			break;
		}
		c->len += (size_t)n;
		c->buf[c->len] = '\0';
		if (c->len == sizeof c->buf - 1)
			c->len = 0;
	}
}

/* Wait (bounded) until the client printed word. Returns 0 or -1. */
static int
client_wait_for(struct client *c, const char *word, int polls)
{
	int	i;

	for (i = 0; i < polls; i++) {
		client_drain(c);
		if (strstr(c->buf, word) != NULL)
			return (0);
		if (c->out == -1)
			return (-1);
	}
	return (-1);
}

/*
 * Wait (bounded) for the client to end; its wait status in c->status.
 * Returns the milliseconds it took, or -1 (the client is killed then).
 */
static long
client_wait_exit(struct client *c, int polls)
{
	struct timespec	t0, t1;
	pid_t		r;
	int		i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < polls; i++) {
		if ((r = waitpid(c->pid, &c->status, WNOHANG)) == c->pid) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			client_drain(c);
			c->pid = -1;
			return ((t1.tv_sec - t0.tv_sec) * 1000 +
			    (t1.tv_nsec - t0.tv_nsec) / 1000000);
		}
		client_drain(c);
		if (c->out == -1)
			poll_wait();
	}
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &c->status, 0);
	c->pid = -1;
	return (-1);
}

/* Reap a client still running, and close its pipe. */
static void
client_end(struct client *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &c->status, 0);
		c->pid = -1;
	}
	if (c->out != -1)
		close(c->out);
	c->out = -1;
}

/* How the client ended, for messages. */
static const char *
client_how(const struct client *c)
{
	static char	how[128];

	if (WIFSIGNALED(c->status))
		snprintf(how, sizeof how, "died of signal %d (%s)",
		    WTERMSIG(c->status), strsignal(WTERMSIG(c->status)));
	else
		snprintf(how, sizeof how, "exited %d",
		    WEXITSTATUS(c->status));
	return (how);
}

/* The client ended by itself with status want. */
static int
client_exited(const struct client *c, int want)
{
	return (WIFEXITED(c->status) && WEXITSTATUS(c->status) == want);
}

/*
 * Kill the server with SIGKILL at random points of large blocking writes
 * and reads, many times: every time the client's call fails and it exits
 * by itself, quickly.
 */
static void
test_kill_transfers(void)
{
	struct client	c;
	struct srv	sv;
	struct timespec	ts;
	unsigned int	seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	long		ms, worst = 0;
	int		i, ok = 0;

	note("seed %u", seed);
	for (i = 0; i < KILL_ROUNDS; i++) {
		if (!srv_start(&sv, "kill_server_start", "127.0.0.1:0", NULL))
			return;
		if (client_spawn(&c, sv.port, "xfer", "16", NULL) != 0 ||
		    client_wait_for(&c, "ready", CLIENT_READY_POLLS) != 0) {
			check("kill_client_ready", 0, "no ready: %s", c.buf);
			client_end(&c);
			srv_stop(&sv, "kill_server_stop");
			return;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(rand_r(&seed) % 200) * 1000000L;
		nanosleep(&ts, NULL);
		kill(sv.pid, SIGKILL);
		ms = client_wait_exit(&c, CLIENT_EXIT_POLLS);
		srv_wait_exit(&sv);
		if (!check("kill_client_returns", ms >= 0 && client_exited(&c,
		    3), "round %d: client %s after the server's SIGKILL "
		    "(want exit 3 within %d ms); it printed: %s", i,
		    ms < 0 ? "hung" : client_how(&c),
		    CLIENT_EXIT_POLLS * POLL_MS, c.buf)) {
			client_end(&c);
			return;
		}
		if (ms > worst)
			worst = ms;
		ok++;
		client_end(&c);
	}
	note("%d kills, slowest client exit %ld ms", ok, worst);
}

/*
 * VCL_CALL_TIMEOUT_MS: a stopped server (SIGSTOP) fails the client's calls
 * within about the timeout, then the server goes on and is killed.
 */
static void
test_stopped_server(void)
{
	struct client	c;
	struct srv	sv;
	long		ms;

	if (!srv_start(&sv, "stop_server_start", "127.0.0.1:0", NULL))
		return;
	if (client_spawn(&c, sv.port, "xfer", "16", "1500") != 0 ||
	    client_wait_for(&c, "ready", CLIENT_READY_POLLS) != 0) {
		check("stop_client_ready", 0, "no ready: %s", c.buf);
		goto out;
	}
	kill(sv.pid, SIGSTOP);
	ms = client_wait_exit(&c, CLIENT_EXIT_POLLS);
	check("stop_client_returns", ms >= 0 && client_exited(&c, 3),
	    "client %s with the server stopped and VCL_CALL_TIMEOUT_MS=1500 "
	    "(want exit 3 within %d ms); it printed: %s",
	    ms < 0 ? "hung" : client_how(&c), CLIENT_EXIT_POLLS * POLL_MS,
	    c.buf);
	if (ms >= 0)
		note("client gave up %ld ms after the SIGSTOP", ms);
out:
	srv_kill(&sv);
	client_end(&c);
}

/*
 * A kernel much longer than VCL_CALL_TIMEOUT_MS on a live server: clFinish
 * waits for it (the server answers pings meanwhile) and succeeds.
 */
static void
test_long_kernel(void)
{
	struct client	c;
	struct srv	sv;
	const char	*ok;
	long		ms;

	if (!srv_start(&sv, "long_server_start", "127.0.0.1:0", NULL))
		return;
	if (client_spawn(&c, sv.port, "kernel", "6000", "1000") != 0) {
		check("long_client_start", 0, "cannot start %s", client_path);
		goto out;
	}
	ms = client_wait_exit(&c, 6 * CLIENT_EXIT_POLLS);
	ok = strstr(c.buf, "ok ");
	check("long_kernel_finishes", ms >= 0 && client_exited(&c, 0) &&
	    ok != NULL, "client %s; it printed: %s", ms < 0 ? "hung" :
	    client_how(&c), c.buf);
	/*
	 * Else the test proves nothing: the kernel must outlast the timeout
	 * (twice over; it aims at six times, calibrated on a machine whose
	 * load may change under it).
	 */
	if (ok != NULL && check("long_kernel_outlasts_timeout",
	    atol(ok + 3) >= 2000,
		    "kernel took %ld ms, want >= 2000 (2 x the timeout)",
		    atol(ok + 3)))
		note("kernel took %ld ms with VCL_CALL_TIMEOUT_MS=1000",
		    atol(ok + 3));
out:
	srv_stop(&sv, "long_server_stop");
	client_end(&c);
}

/* --- a fake server ------------------------------------------------------ */

enum fake_mode {
	FAKE_CLOSE_IN_WRITE,	/* close while the client writes bulk */
	FAKE_SHORT_BULK,	/* read reply: half its bulk, then close */
	FAKE_ZERO_BULK,		/* read reply: success, no bytes */
	FAKE_LONG_BULK,		/* read reply: more bytes than asked */
	FAKE_BAD_SEQ,		/* read reply: a seq nobody sent */
	FAKE_MANY_DEVICES,	/* Welcome with 100000 devices */
	FAKE_BAD_STRING,	/* Welcome: a device name without its NUL */
	FAKE_GARBAGE_HEAD,	/* read reply: bytes that are no frame head */
	FAKE_GARBAGE_MSG,	/* read reply: a head, then no protobuf */
	FAKE_GARBAGE_GREETING,	/* bytes that are no frame, for a Greeting */
	FAKE_STALL_BULK,	/* read reply: half its bulk, then silence */
};

/* 64 bytes of junk; with a frame head first (head), a frame of junk. */
static int
fake_garbage(int fd, int head)
{
	uint8_t		buf[VCL_FRAME_HDR_LEN + 64];
	struct iovec	iov;
	size_t		off = 0;

	memset(buf, 0xff, sizeof buf);
	if (head) {
		vcl_frame_encode(buf, 64, 0);
		off = VCL_FRAME_HDR_LEN;
	}
	memset(buf + off, 0xff, 64);
	iov.iov_base = buf;
	iov.iov_len = off + 64;
	return (vcl_io_writev_full(fd, &iov, 1));
}

/*
 * Keep a connection open and answer nothing (pings included) until the
 * client closes it, or for the client's exit bound.
 */
static void
fake_hold(int fd)
{
	struct pollfd	pfd;
	uint8_t		buf[4096];
	int		n;

	pfd.fd = fd;
	pfd.events = POLLIN;
	for (n = 0; n < CLIENT_EXIT_POLLS; n++) {
		if (poll(&pfd, 1, POLL_MS) == 1 &&
		    recv(fd, buf, sizeof buf, 0) <= 0)
			break;
	}
}

/*
 * Serve one client the fake way: answer what it needs until the request
 * the mode is about, then misbehave and close. FAKE_CLOSE_IN_WRITE only
 * shuts its side down and returns the socket, unread bytes and all, for the
 * caller to close once the client is gone: the client, seeing the end of
 * the stream, then shuts down a socket it is still writing to (EPIPE, and
 * SIGPIPE without MSG_NOSIGNAL). Returns that socket or -1.
 */
static int
fake_serve(int lfd, enum fake_mode mode)
{
	struct pollfd	 pfd;
	struct timeval	 tv = { RECV_TIMEOUT_S, 0 };
	Vcl__Request	*req;
	uint64_t	 bulk, size;
	int		 fd;

	pfd.fd = lfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 60000) != 1 || (fd = accept(lfd, NULL, NULL)) < 0) {
		note("fake server: nobody connected");
		return (-1);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (mode == FAKE_GARBAGE_GREETING) {
		/* The connection stays open: the client must act. */
		fake_garbage(fd, 0);
		raw_fake_read(fd, &bulk);
		goto out;
	}
	if (raw_fake_handshake(fd, mode == FAKE_MANY_DEVICES ? 100000 : 1,
	    mode == FAKE_BAD_STRING) != 0 || mode == FAKE_MANY_DEVICES ||
	    mode == FAKE_BAD_STRING)
		goto out;
	while ((req = raw_fake_read(fd, &bulk)) != NULL) {
		if (bulk > 0 && mode == FAKE_CLOSE_IN_WRITE) {
			vcl__request__free_unpacked(req, NULL);
			shutdown(fd, SHUT_WR);
			return (fd);
		}
		if (bulk > 0 && raw_fake_skip(fd, bulk) != 0) {
			vcl__request__free_unpacked(req, NULL);
			goto out;
		}
		switch (req->call_case) {
		case VCL__REQUEST__CALL_GET_INFO:
			raw_fake_reply(fd, req->seq, CL_INVALID_VALUE, 0, 0);
			break;
		case VCL__REQUEST__CALL_FINISH:
			raw_fake_reply(fd, req->seq, CL_SUCCESS, 0, 0);
			break;
		case VCL__REQUEST__CALL_READ_BUFFER:
			size = req->read_buffer->size;
			if (mode == FAKE_SHORT_BULK)
				raw_fake_reply(fd, req->seq, CL_SUCCESS, size,
				    (size_t)size / 2);
			else if (mode == FAKE_ZERO_BULK)
				raw_fake_reply(fd, req->seq, CL_SUCCESS, 0, 0);
			else if (mode == FAKE_LONG_BULK)
				raw_fake_reply(fd, req->seq, CL_SUCCESS,
				    size + 65536, (size_t)size + 65536);
			else if (mode == FAKE_BAD_SEQ)
				raw_fake_reply(fd, req->seq + 1000, CL_SUCCESS,
				    size, (size_t)size);
			else if (mode == FAKE_GARBAGE_HEAD ||
			    mode == FAKE_GARBAGE_MSG)
				fake_garbage(fd, mode == FAKE_GARBAGE_MSG);
			else if (mode == FAKE_STALL_BULK) {
				raw_fake_reply(fd, req->seq, CL_SUCCESS, size,
				    (size_t)size / 2);
				vcl__request__free_unpacked(req, NULL);
				/* Open and silent (pings too) till it goes. */
				fake_hold(fd);
				goto out;
			}
			vcl__request__free_unpacked(req, NULL);
			/* Keep the connection open: the client must act. */
			raw_fake_read(fd, &bulk);
			goto out;
		default:
			break;
		}
		vcl__request__free_unpacked(req, NULL);
	}
out:
	close(fd);
	return (-1);
}

/* Run fault_client xfer MIB against a fake in mode; its end in c. */
static long
fake_run(struct client *c, enum fake_mode mode, const char *mib)
{
	char	port[16];
	int	lfd, fd;
	long	ms = -1;

	if ((lfd = raw_fake_listen(port, sizeof port)) == -1) {
		note("fake server: cannot listen: %s", strerror(errno));
		return (-1);
	}
	if (client_spawn(c, port, "xfer", mib, mode == FAKE_STALL_BULK ?
	    "1500" : NULL) == 0) {
		fd = fake_serve(lfd, mode);
		ms = client_wait_exit(c, CLIENT_EXIT_POLLS);
		if (fd != -1)
			close(fd);
	}
	close(lfd);
	client_end(c);
	return (ms);
}

/*
 * A server that closes its socket while the client writes a large buffer:
 * the write fails, SIGPIPE never reaches the application.
 */
static void
test_close_in_write(void)
{
	struct client	c;
	long		ms;

	ms = fake_run(&c, FAKE_CLOSE_IN_WRITE, "64");
	check("close_in_write_no_sigpipe", ms >= 0 && client_exited(&c, 3) &&
	    strstr(c.buf, "error clEnqueueWriteBuffer") != NULL,
	    "client %s; want exit 3 with clEnqueueWriteBuffer failing; "
	    "it printed: %s", ms < 0 ? "hung" : client_how(&c), c.buf);
}

/* Replies that do not match what was asked: an error, never a hang. */
static void
test_bad_replies(void)
{
	static const struct {
		enum fake_mode	 mode;
		const char	*name;
	} cases[] = {
		{ FAKE_SHORT_BULK, "bad_reply_short_bulk" },
		{ FAKE_ZERO_BULK, "bad_reply_zero_bulk" },
		{ FAKE_LONG_BULK, "bad_reply_long_bulk" },
		{ FAKE_BAD_SEQ, "bad_reply_seq" },
		{ FAKE_GARBAGE_HEAD, "bad_reply_garbage_head" },
		{ FAKE_GARBAGE_MSG, "bad_reply_garbage_msg" },
		{ FAKE_STALL_BULK, "bad_reply_stall_bulk" },
	};
	struct client	c;
	size_t		i;
	long		ms;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ms = fake_run(&c, cases[i].mode, "1");
		check(cases[i].name, ms >= 0 && client_exited(&c, 3) &&
		    strstr(c.buf, "error clEnqueueReadBuffer") != NULL,
		    "client %s; want exit 3 with clEnqueueReadBuffer failing; "
		    "it printed: %s", ms < 0 ? "hung" : client_how(&c),
		    c.buf);
	}
}

/* A Welcome announcing absurdly many devices: the node is left out. */
static void
test_many_devices(void)
{
	struct client	c;
	long		ms;

	ms = fake_run(&c, FAKE_MANY_DEVICES, "1");
	check("welcome_many_devices", ms >= 0 && client_exited(&c, 2) &&
	    strstr(c.buf, "error clGetDeviceIDs") != NULL,
	    "client %s; want the node left out (no device); it printed: %s",
	    ms < 0 ? "hung" : client_how(&c), c.buf);
}

/* Junk for a Greeting: the node is left out, nothing hangs. */
static void
test_garbage_greeting(void)
{
	struct client	c;
	long		ms;

	ms = fake_run(&c, FAKE_GARBAGE_GREETING, "1");
	check("garbage_greeting", ms >= 0 && client_exited(&c, 2) &&
	    strstr(c.buf, "error clGet") != NULL,
	    "client %s; want the node left out (no device); it printed: %s",
	    ms < 0 ? "hung" : client_how(&c), c.buf);
}

/*
 * A Welcome whose device name lacks its NUL (an application would read
 * past it with strlen): the node is left out.
 */
static void
test_bad_string(void)
{
	struct client	c;
	long		ms;

	ms = fake_run(&c, FAKE_BAD_STRING, "1");
	check("welcome_bad_string", ms >= 0 && client_exited(&c, 2) &&
	    strstr(c.buf, "error clGetDeviceIDs") != NULL,
	    "client %s; want the node left out (no device); it printed: %s",
	    ms < 0 ? "hung" : client_how(&c), c.buf);
}

/*
 * A server shedding connections that are still authenticating (here: one
 * per address, held by an idle socket until its handshake deadline):
 * libvcl backs off and tries again within its connect timeout instead of
 * leaving the node out at the first refusal.
 */
static void
test_preauth_retry(void)
{
	const char *const	 extra[] = { "--max-preauth-per-addr", "1",
	    "--handshake-timeout", "2", NULL };
	struct client		 c;
	struct srv		 sv;
	struct conn		 idle;
	long			 ms;

	if (!srv_start(&sv, "retry_server_start", "127.0.0.1:0", extra))
		return;
	if (!check("retry_idle_socket", conn_open(&idle, &sv) == 0,
	    "no greeting for the idle socket"))
		goto out;
	if (client_spawn(&c, sv.port, "kernel", "10", NULL) != 0) {
		check("retry_client_start", 0, "cannot start %s", client_path);
		goto out;
	}
	ms = client_wait_exit(&c, CLIENT_EXIT_POLLS);
	check("retry_client_gets_in", ms >= 0 && client_exited(&c, 0) &&
	    strstr(c.buf, "ok ") != NULL, "client %s; want it to get in once "
	    "the idle socket's deadline passed; it printed: %s", ms < 0 ?
	    "hung" : client_how(&c), c.buf);
	client_end(&c);
out:
	conn_close(&idle);
	srv_stop(&sv, "retry_server_stop");
}

static const struct test tests[] = {
	{ "close_in_write", test_close_in_write, 60 },
	{ "bad_replies", test_bad_replies, 120 },
	{ "many_devices", test_many_devices, 60 },
	{ "bad_string", test_bad_string, 60 },
	{ "garbage_greeting", test_garbage_greeting, 60 },
	{ "preauth_retry", test_preauth_retry, 60 },
	{ "stopped_server", test_stopped_server, 120 },
	{ "long_kernel", test_long_kernel, 180 },
	{ "kill_transfers", test_kill_transfers, 280 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
