/* vcl_bincheck.c - foreign program binaries tried in a child process first. */

/*
 * With --trust-binaries a client's binary goes to the runtime's loader,
 * and a runtime may trust what it reads inside one: PoCL 3.1 checks only
 * the header, and a binary cut short aborts the process that loads it,
 * ending every session. So a binary the server has not seen pass is first
 * made and built (clCreateProgramWithBinary, clBuildProgram, as the server
 * would) on its device in a child process: this executable in its hidden
 * --check-binary mode, in the same environment (same platform, devices
 * and kernel cache). A child that crashes, fails or outlives the timeout
 * fails the binary, and only the child is lost. A binary that passed is
 * remembered by SHA-256 with its device, with the binaries the server
 * handed out (vcl_op_program.c's record), so it is not checked again.
 *
 * A check runs on a thread of its own pool (VCL_BINCHECK_THREADS at once,
 * server-wide; more wait for a thread), which starts the child, feeds it
 * the binaries through a pipe, reads one status per binary from another
 * and reaps it; the loop never waits for a child.
 *
 * The child reads from stdin: u32 platform index, u32 count, then per
 * binary u32 device index (among the platform's devices), u64 length and
 * the bytes, in host order (the child is this executable). It writes one
 * int32 per binary as it is done (the runtime's error, CL_SUCCESS when
 * made and built) on descriptor VCL_BINCHECK_FD, a pipe of its own, and
 * exits 0 when every one passed. Its stdout and stderr are /dev/null:
 * what the runtime prints while it loads a client's binary (its text
 * the binary's to choose) reads as no status and reaches no log of the
 * server's, where it would interleave with the server's lines.
 */
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vcl_backend.h"
#include "vcl_bincheck.h"
#include "vcl_log.h"
#include "vcl_worker.h"

extern char **environ;

#define VCL_BINCHECK_POLL_MS 100	/* how soon a stop is seen */
#define VCL_BINCHECK_FD	3		/* the child's statuses */

static struct vcl_workers	*vcl_bincheck_pool;	/* made at first use */
static atomic_int		 vcl_bincheck_stopping;
static atomic_uint_fast64_t	 vcl_bincheck_started;	/* children started */
static atomic_uint_fast64_t	 vcl_bincheck_failed;	/* checks failed */
static atomic_uint_fast64_t	 vcl_bincheck_running;	/* queued or running */

/* Is the check to end now (the server stops, or its session closed)? */
static int
vcl_bincheck_over(struct vcl_bincheck *c)
{
	return (atomic_load(&vcl_bincheck_stopping) ||
	    atomic_load(&c->cancel));
}

/* Milliseconds on the server's one monotonic clock. */
static uint64_t
vcl_bincheck_ms(void)
{
	return (vcl_server_ns() / 1000000);
}

/*
 * Start the child, its stdin and VCL_BINCHECK_FD the pipes' ends, its
 * stdout and stderr /dev/null. Returns its pid.
 */
static pid_t
vcl_bincheck_spawn(int in, int out, char *why, size_t whylen)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 at;
	sigset_t			 none, def;
	char				*argv[] = { "vclserver", "--check-binary",
					    NULL };
	pid_t				 pid = -1;
	int				 rc;

	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	if (posix_spawn_file_actions_init(&fa) != 0)
		goto fail;
	if (posix_spawnattr_init(&at) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		goto fail;
	}
	/*
	 * Its own process group, so a timeout kills what it started too;
	 * no descriptor of the server but the two pipes (both above the
	 * standard three: the server's are open, /dev/null at least).
	 */
	if ((rc = posix_spawn_file_actions_adddup2(&fa, in, 0)) == 0 &&
	    (rc = posix_spawn_file_actions_adddup2(&fa, out,
	    VCL_BINCHECK_FD)) == 0 &&
	    (rc = posix_spawn_file_actions_addclosefrom_np(&fa,
	    VCL_BINCHECK_FD + 1)) == 0 &&
	    (rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null",
	    O_WRONLY, 0)) == 0 &&
	    (rc = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null",
	    O_WRONLY, 0)) == 0 &&
	    (rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0 &&
	    (rc = posix_spawnattr_setpgroup(&at, 0)) == 0 &&
	    (rc = posix_spawnattr_setsigmask(&at, &none)) == 0 &&
	    (rc = posix_spawnattr_setsigdefault(&at, &def)) == 0)
		rc = posix_spawn(&pid, "/proc/self/exe", &fa, &at, argv,
		    environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	if (rc == 0)
		return (pid);
	snprintf(why, whylen, "the check process could not start: %s",
	    strerror(rc));
	return (-1);
fail:
	snprintf(why, whylen, "the check process could not start: out of "
	    "memory");
	return (-1);
}

/* Close *fd if open. */
static void
vcl_bincheck_close(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

/*
 * Feed the child its binaries and read its statuses until it closes its
 * end of their pipe (VCL_BINCHECK_FD), the deadline passes or the server
 * stops. Returns the status bytes read, or -1 past the deadline (or
 * stopping).
 */
static ssize_t
vcl_bincheck_talk(struct vcl_bincheck *c, int *in, int out, uint8_t *st,
    size_t stlen, uint64_t deadline)
{
	struct iovec	 iov[1 + 2 * VCL_BINCHECK_BINS], *v = iov;
	struct pollfd	 pf[2];
	uint8_t		 head[8], rec[VCL_BINCHECK_BINS][12], buf[64];
	uint64_t	 now, len;
	size_t		 got = 0, nv = 0;
	ssize_t		 k;
	uint32_t	 i;

	memcpy(head, &c->platform, 4);
	memcpy(head + 4, &c->n, 4);
	iov[nv].iov_base = head;
	iov[nv++].iov_len = sizeof head;
	for (i = 0; i < c->n; i++) {
		len = c->lens[i];
		memcpy(rec[i], &c->dev[i], 4);
		memcpy(rec[i] + 4, &len, 8);
		iov[nv].iov_base = rec[i];
		iov[nv++].iov_len = sizeof rec[i];
		iov[nv].iov_base = (void *)c->bins[i];
		iov[nv++].iov_len = c->lens[i];
	}
	for (;;) {
		now = vcl_bincheck_ms();
		if (now >= deadline || vcl_bincheck_over(c))
			return (-1);
		pf[0].fd = out;
		pf[0].events = POLLIN;
		pf[1].fd = *in;
		pf[1].events = POLLOUT;
		k = deadline - now > VCL_BINCHECK_POLL_MS ?
		    VCL_BINCHECK_POLL_MS : (ssize_t)(deadline - now);
		if (poll(pf, *in != -1 ? 2 : 1, (int)k) < 0) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		if (*in != -1 && (pf[1].revents & (POLLOUT | POLLERR |
		    POLLHUP))) {
			if ((k = writev(*in, v, (int)nv)) < 0 && errno != EAGAIN &&
			    errno != EINTR)
				vcl_bincheck_close(in);	/* it left */
			for (; k > 0 && nv > 0; ) {
				if ((size_t)k < v->iov_len) {
					v->iov_base = (uint8_t *)v->iov_base + k;
					v->iov_len -= (size_t)k;
					break;
				}
				k -= (ssize_t)v->iov_len;
				v++;
				nv--;
			}
			if (nv == 0)
				vcl_bincheck_close(in);
		}
		if (pf[0].revents & (POLLIN | POLLERR | POLLHUP)) {
			k = read(out, buf, sizeof buf);
			if (k == 0 || (k < 0 && errno != EINTR &&
			    errno != EAGAIN))
				return ((ssize_t)got);
			if (k > 0 && got + (size_t)k > stlen)
				return ((ssize_t)got);	/* more than owed */
			if (k > 0)
				memcpy(st + got, buf, (size_t)k);
			got += k > 0 ? (size_t)k : 0;
		}
	}
}

/* Wait for the child to end, killing it past the deadline. */
static int
vcl_bincheck_reap(struct vcl_bincheck *c, pid_t pid, uint64_t deadline,
    int *killed)
{
	int	st = 0;

	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return (st);
		if (vcl_bincheck_ms() >= deadline || vcl_bincheck_over(c))
			break;
		usleep(10000);
	}
	*killed = 1;
	kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) != pid && errno == EINTR)
		;
	return (st);
}

/* Check thread: run one check in a child process and push the result. */
static void
vcl_bincheck_run(void *arg)
{
	struct vcl_bincheck	*c = arg;
	uint8_t			 st[4 * VCL_BINCHECK_BINS];
	int			 in[2] = { -1, -1 }, out[2] = { -1, -1 };
	int			 ws, killed = 0;
	int32_t			 v;
	uint64_t		 t0 = vcl_bincheck_ms(), deadline;
	ssize_t			 got = 0;
	pid_t			 pid;
	uint32_t		 i;

	deadline = t0 + c->timeout_ms;
	for (i = 0; i < c->n; i++)
		c->status[i] = CL_INVALID_BINARY;
	if (vcl_bincheck_over(c)) {
		snprintf(c->why, sizeof c->why, "%s", atomic_load(&c->cancel) ?
		    "its session closed" : "the server is stopping");
		goto done;
	}
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
		snprintf(c->why, sizeof c->why, "the check process could not "
		    "start: %s", strerror(errno));
		goto done;
	}
	if ((pid = vcl_bincheck_spawn(in[0], out[1], c->why,
	    sizeof c->why)) == -1)
		goto done;
	atomic_fetch_add(&vcl_bincheck_started, 1);
	vcl_bincheck_close(&in[0]);
	vcl_bincheck_close(&out[1]);
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	got = vcl_bincheck_talk(c, &in[1], out[0], st, sizeof st, deadline);
	if (got < 0)
		deadline = 0;		/* kill it now */
	vcl_bincheck_close(&in[1]);
	vcl_bincheck_close(&out[0]);
	ws = vcl_bincheck_reap(c, pid, deadline, &killed);
	/* A binary it made and built before it failed still passed. */
	for (i = 0; got > 0 && i < (size_t)got / 4 && i < c->n; i++) {
		memcpy(&v, st + 4 * i, 4);
		if (v == CL_SUCCESS)
			c->status[i] = CL_SUCCESS;
	}
	if (killed && atomic_load(&c->cancel))
		snprintf(c->why, sizeof c->why, "its session closed (killed)");
	else if (killed && atomic_load(&vcl_bincheck_stopping))
		snprintf(c->why, sizeof c->why, "the server is stopping");
	else if (killed)
		snprintf(c->why, sizeof c->why, "the check did not end within "
		    "%llu s (killed)", (unsigned long long)(c->timeout_ms /
		    1000));
	else if (WIFSIGNALED(ws))
		snprintf(c->why, sizeof c->why, "the runtime crashed on it "
		    "in the check process (signal %d, %s)", WTERMSIG(ws),
		    strsignal(WTERMSIG(ws)));
	else if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0 &&
	    (size_t)got == 4 * c->n)
		c->why[0] = '\0';
	else if (got >= 4 && (size_t)got / 4 <= c->n) {
		memcpy(&v, st + got / 4 * 4 - 4, 4);
		snprintf(c->why, sizeof c->why, "the runtime refused it in "
		    "the check process (error %d)", v);
	} else
		snprintf(c->why, sizeof c->why, "the check process failed "
		    "(exit status %d)", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
	vcl_log_debug("binary check: pid %d, %u binaries, %llu ms: %s",
	    (int)pid, c->n, (unsigned long long)(vcl_bincheck_ms() - t0),
	    c->why[0] != '\0' ? c->why : "passed");
done:
	for (i = 0; i < 2; i++) {
		vcl_bincheck_close(&in[i]);
		vcl_bincheck_close(&out[i]);
	}
	for (i = 0; i < c->n && c->status[i] == CL_SUCCESS; i++)
		;
	if (i < c->n) {
		atomic_fetch_add(&vcl_bincheck_failed, 1);
		if (c->why[0] == '\0')
			snprintf(c->why, sizeof c->why, "the check failed");
	}
	atomic_fetch_sub(&vcl_bincheck_running, 1);
	vcl_server_done_push(c->srv, &c->d);
}

/*
 * Loop: queue a check on the check threads. Returns 0, or -1 (nothing
 * started: out of memory, or the server stops).
 */
int
vcl_bincheck_start(struct vcl_server *srv, struct vcl_bincheck *c)
{
	c->srv = srv;
	atomic_init(&c->cancel, 0);
	if (c->n == 0 || c->n > VCL_BINCHECK_BINS ||
	    atomic_load(&vcl_bincheck_stopping))
		return (-1);
	if (vcl_bincheck_pool == NULL &&
	    (vcl_bincheck_pool = vcl_workers_new(VCL_BINCHECK_THREADS)) ==
	    NULL)
		return (-1);
	atomic_fetch_add(&vcl_bincheck_running, 1);
	if (vcl_workers_run(vcl_bincheck_pool, vcl_bincheck_run, c) != 0) {
		atomic_fetch_sub(&vcl_bincheck_running, 1);
		return (-1);
	}
	return (0);
}

/*
 * Loop: the session of a check queued or running closed. The check ends
 * soon (its child killed) and completes as usual, failed; until then it
 * holds the binaries' copies and one of the check threads.
 */
void
vcl_bincheck_cancel(struct vcl_bincheck *c)
{
	atomic_store(&c->cancel, 1);
}

/*
 * At exit: kill the children of checks running, fail those queued, and
 * join the threads. Their completions wait on the loop's list.
 */
void
vcl_bincheck_stop(struct vcl_server *srv)
{
	(void)srv;
	atomic_store(&vcl_bincheck_stopping, 1);
	if (vcl_bincheck_pool != NULL)
		vcl_workers_free(vcl_bincheck_pool);
	vcl_bincheck_pool = NULL;
}

/* For Stats and metrics: children started, checks failed, checks now. */
void
vcl_bincheck_counts(uint64_t *started, uint64_t *failed, uint64_t *running)
{
	*started = atomic_load(&vcl_bincheck_started);
	*failed = atomic_load(&vcl_bincheck_failed);
	*running = atomic_load(&vcl_bincheck_running);
}

/* Read n bytes from fd; 0, or -1 at end or error. */
static int
vcl_bincheck_read(int fd, void *p, size_t n)
{
	ssize_t	k;

	while (n > 0) {
		if ((k = read(fd, p, n)) <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			return (-1);
		}
		p = (uint8_t *)p + k;
		n -= (size_t)k;
	}
	return (0);
}

/*
 * The child (vclserver --check-binary): make and build each binary read
 * from stdin on its device, writing the runtime's answer for each to
 * VCL_BINCHECK_FD. Exit status 0 when all passed, 1 when one did not, 2 when the
 * input is bad. The runtime may abort it: that is what it is for.
 */
int
vcl_bincheck_main(void)
{
	uint8_t		*bins[VCL_BINCHECK_BINS];
	size_t		 lens[VCL_BINCHECK_BINS];
	uint32_t	 head[2], dev[VCL_BINCHECK_BINS], i, n;
	uint64_t	 len;
	cl_device_id	 d;
	cl_context	 ctx;
	cl_program	 p;
	cl_int		 err, bst;
	const char	*say;
	int		 rc = 0;

	setenv("VCL_NODES", "", 1);	/* libvcl, if listed, serves none */
	if (vcl_bincheck_read(0, head, sizeof head) != 0 || head[1] == 0 ||
	    head[1] > VCL_BINCHECK_BINS)
		return (2);
	n = head[1];
	for (i = 0; i < n; i++) {
		if (vcl_bincheck_read(0, &dev[i], 4) != 0 ||
		    vcl_bincheck_read(0, &len, 8) != 0 || len == 0 ||
		    len > UINT32_MAX || (bins[i] = malloc(len)) == NULL ||
		    vcl_bincheck_read(0, bins[i], len) != 0)
			return (2);
		lens[i] = len;
	}
	/* Testing: as a runtime that never ends would hold it. */
	vcl_server_test_latch("VCL_TEST_BINCHECK_LATCH");
	/*
	 * Testing: as a runtime that prints on its stdout what reads as
	 * every binary passing, and a line on its stderr.
	 */
	if ((say = getenv("VCL_TEST_BINCHECK_NOISE")) != NULL) {
		err = CL_SUCCESS;
		for (i = 0; i < n; i++)
			(void)!write(1, &err, sizeof err);
		dprintf(2, "%s\n", say);
	}
	for (i = 0; i < n; i++) {
		bst = CL_INVALID_BINARY;
		ctx = NULL;
		p = NULL;
		if ((d = vcl_backend_device_at(head[0], dev[i])) == NULL)
			err = CL_INVALID_DEVICE;
		else
			ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
		if (ctx != NULL)
			p = clCreateProgramWithBinary(ctx, 1, &d, &lens[i],
			    (const unsigned char **)&bins[i], &bst, &err);
		if (p != NULL && err == CL_SUCCESS && bst != CL_SUCCESS)
			err = bst;
		if (p != NULL && err == CL_SUCCESS)
			err = clBuildProgram(p, 1, &d, NULL, NULL, NULL);
		if (p == NULL && err == CL_SUCCESS)
			err = CL_INVALID_BINARY;
		if (write(VCL_BINCHECK_FD, &err, sizeof err) !=
		    (ssize_t)sizeof err)
			return (2);
		if (err != CL_SUCCESS)
			rc = 1;
		if (p != NULL)
			clReleaseProgram(p);
		if (ctx != NULL)
			clReleaseContext(ctx);
		free(bins[i]);
	}
	return (rc);
}
