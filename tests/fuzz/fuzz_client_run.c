/* fuzz_client_run.c - libvcl's calls in a child, a fake server outside. */

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CL/cl.h>

#include "vcl_frame.h"
#include "vcl_io.h"

#include "fuzz_client.h"

/*
 * libvcl connects to its nodes once per process (the first call) and keeps
 * them, their receiver threads and the devices of their Welcome until the
 * process ends: there is no way back to a fresh library in one process.
 * So each input runs in a child forked for it, whose first call connects
 * to the parent, which plays the server.
 */

#define FUZZ_ELEMS	256		/* ints in the buffer */
#define FUZZ_IO_S	5		/* a socket wait of the fake server */

static const char	*fuzz_src =
    "__kernel void k(__global int *a, int b) { a[0] += b; }\n";

/* Report a failed call when verbose; count it. */
static void
fuzz_check(int verbose, int *bad, const char *what, cl_int err)
{
	if (err == CL_SUCCESS)
		return;
	(*bad)++;
	if (verbose)
		fprintf(stderr, "fuzz_client: %s: %d\n", what, err);
}

/* An event callback: counts its calls in *arg. */
static void CL_CALLBACK
fuzz_event_cb(cl_event ev, cl_int status, void *arg)
{
	(void)ev;
	(void)status;
	(*(int *)arg)++;
}

/*
 * The fixed call sequence: platform and device queries, a context, a
 * queue, a buffer written and read, a program built, a kernel launched
 * and waited for, a non-blocking read, a marker, a finish, then every
 * object released. Any call may fail; later ones go on with what exists.
 * Returns how many calls failed.
 */
int
fuzz_client_calls(int verbose)
{
	static const cl_device_info	 params[] = { CL_DEVICE_NAME,
	    CL_DEVICE_TYPE, CL_DEVICE_VERSION, CL_DEVICE_EXTENSIONS,
	    CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_ITEM_SIZES,
	    CL_DEVICE_MAX_MEM_ALLOC_SIZE, CL_DEVICE_BUILT_IN_KERNELS,
	    CL_DEVICE_QUEUE_ON_HOST_PROPERTIES };
	cl_platform_id	 plat;
	cl_device_id	 devs[4];
	cl_context	 ctx = NULL;
	cl_command_queue q = NULL;
	cl_mem		 buf = NULL;
	cl_program	 prog = NULL;
	cl_kernel	 k = NULL;
	cl_event	 ev[3] = { NULL, NULL, NULL };
	cl_uint		 ndev = 0, i;
	cl_ulong	 t;
	cl_int		 err, st, val = 7;
	size_t		 sz, gsz = 64;
	char		 info[512];
	int		 host[FUZZ_ELEMS], bad = 0, calls = 0;

	memset(host, 0x11, sizeof host);
	err = clGetPlatformIDs(1, &plat, NULL);
	fuzz_check(verbose, &bad, "clGetPlatformIDs", err);
	if (err != CL_SUCCESS)
		return (bad);
	fuzz_check(verbose, &bad, "clGetPlatformInfo", clGetPlatformInfo(plat,
	    CL_PLATFORM_EXTENSIONS, sizeof info, info, NULL));
	err = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 4, devs, &ndev);
	fuzz_check(verbose, &bad, "clGetDeviceIDs", err);
	if (err != CL_SUCCESS || ndev == 0)
		return (bad);
	if (ndev > 4)
		ndev = 4;
	for (i = 0; i < sizeof params / sizeof params[0]; i++)
		fuzz_check(verbose, &bad, "clGetDeviceInfo",
		    clGetDeviceInfo(devs[0], params[i], sizeof info, info,
		    &sz));
	ctx = clCreateContext(NULL, ndev, devs, NULL, NULL, &err);
	fuzz_check(verbose, &bad, "clCreateContext", err);
	if (ctx == NULL)
		return (bad);
	q = clCreateCommandQueue(ctx, devs[0], CL_QUEUE_PROFILING_ENABLE, &err);
	fuzz_check(verbose, &bad, "clCreateCommandQueue", err);
	buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
	fuzz_check(verbose, &bad, "clCreateBuffer", err);
	fuzz_check(verbose, &bad, "clEnqueueWriteBuffer", clEnqueueWriteBuffer(q,
	    buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
	fuzz_check(verbose, &bad, "clEnqueueReadBuffer", clEnqueueReadBuffer(q,
	    buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
	prog = clCreateProgramWithSource(ctx, 1, &fuzz_src, NULL, &err);
	fuzz_check(verbose, &bad, "clCreateProgramWithSource", err);
	fuzz_check(verbose, &bad, "clBuildProgram", clBuildProgram(prog, 0,
	    NULL, "", NULL, NULL));
	fuzz_check(verbose, &bad, "clGetProgramBuildInfo",
	    clGetProgramBuildInfo(prog, devs[0], CL_PROGRAM_BUILD_LOG,
	    sizeof info, info, NULL));
	k = clCreateKernel(prog, "k", &err);
	fuzz_check(verbose, &bad, "clCreateKernel", err);
	fuzz_check(verbose, &bad, "clGetKernelWorkGroupInfo",
	    clGetKernelWorkGroupInfo(k, devs[0], CL_KERNEL_WORK_GROUP_SIZE,
	    sizeof sz, &sz, NULL));
	fuzz_check(verbose, &bad, "clSetKernelArg", clSetKernelArg(k, 0,
	    sizeof buf, &buf));
	fuzz_check(verbose, &bad, "clSetKernelArg", clSetKernelArg(k, 1,
	    sizeof val, &val));
	fuzz_check(verbose, &bad, "clEnqueueNDRangeKernel",
	    clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, 0, NULL, &ev[0]));
	if (ev[0] != NULL)
		fuzz_check(verbose, &bad, "clSetEventCallback",
		    clSetEventCallback(ev[0], CL_COMPLETE, fuzz_event_cb,
		    &calls));
	fuzz_check(verbose, &bad, "clFlush", clFlush(q));
	fuzz_check(verbose, &bad, "clWaitForEvents", clWaitForEvents(1,
	    &ev[0]));
	fuzz_check(verbose, &bad, "clGetEventProfilingInfo",
	    clGetEventProfilingInfo(ev[0], CL_PROFILING_COMMAND_END, sizeof t,
	    &t, NULL));
	fuzz_check(verbose, &bad, "clEnqueueReadBuffer", clEnqueueReadBuffer(q,
	    buf, CL_FALSE, 0, sizeof host, host, ev[0] != NULL, &ev[0],
	    &ev[1]));
	fuzz_check(verbose, &bad, "clWaitForEvents", clWaitForEvents(1,
	    &ev[1]));
	fuzz_check(verbose, &bad, "clEnqueueMarkerWithWaitList",
	    clEnqueueMarkerWithWaitList(q, 0, NULL, &ev[2]));
	fuzz_check(verbose, &bad, "clFinish", clFinish(q));
	fuzz_check(verbose, &bad, "clGetEventInfo", clGetEventInfo(ev[2],
	    CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
	for (i = 0; i < 3; i++)
		if (ev[i] != NULL)
			fuzz_check(verbose, &bad, "clReleaseEvent",
			    clReleaseEvent(ev[i]));
	if (k != NULL)
		fuzz_check(verbose, &bad, "clReleaseKernel", clReleaseKernel(k));
	if (prog != NULL)
		fuzz_check(verbose, &bad, "clReleaseProgram",
		    clReleaseProgram(prog));
	if (buf != NULL)
		fuzz_check(verbose, &bad, "clReleaseMemObject",
		    clReleaseMemObject(buf));
	if (q != NULL)
		fuzz_check(verbose, &bad, "clReleaseCommandQueue",
		    clReleaseCommandQueue(q));
	fuzz_check(verbose, &bad, "clReleaseContext", clReleaseContext(ctx));
	if (verbose && calls != 1)
		fprintf(stderr, "fuzz_client: the event callback ran %d "
		    "times\n", calls);
	return (bad);
}

/* A listening socket on 127.0.0.1, its port in port. -1 on failure. */
int
fuzz_client_listen(char *port, size_t len)
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
	    listen(fd, 4) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) != 0) {
		close(fd);
		return (-1);
	}
	snprintf(port, len, "%u", ntohs(sin.sin_port));
	return (fd);
}

/*
 * Fork the client: it closes the listener, points libvcl at port (short
 * call and connect timeouts, no other configuration) and exits with
 * fn(arg)'s value. Returns its pid or -1.
 */
pid_t
fuzz_client_spawn(int lfd, const char *port, int (*fn)(void *), void *arg)
{
	char	nodes[64];
	pid_t	pid;

	snprintf(nodes, sizeof nodes, "127.0.0.1:%s", port);
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) != 0)
		return (pid);
	close(lfd);
	setenv("VCL_NODES", nodes, 1);
	setenv("VCL_CALL_TIMEOUT_MS", FUZZ_CALL_TIMEOUT_MS, 1);
	setenv("VCL_CONNECT_TIMEOUT_MS", FUZZ_CALL_TIMEOUT_MS, 1);
	unsetenv("VCL_TLS");
	unsetenv("VCL_TOKEN_FILE");
	unsetenv("VCL_STRICT");
	unsetenv("VCL_TRANSPORT");
	_exit(fn(arg));
}

/* Read exactly n bytes (buf NULL: drop them). 0, or -1 at the end. */
static int
fuzz_read(int fd, uint8_t *buf, uint64_t n)
{
	uint8_t	junk[4096];
	ssize_t	r;
	size_t	k;

	while (n > 0) {
		k = buf != NULL ? (size_t)n : n < sizeof junk ? (size_t)n :
		    sizeof junk;
		r = recv(fd, buf != NULL ? buf : junk, k, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return (-1);
		if (buf != NULL)
			buf += r;
		n -= (uint64_t)r;
	}
	return (0);
}

/* Send what an answer made; 0 or -1. */
static int
fuzz_send(int fd, uint8_t *out, size_t len)
{
	struct iovec	iov;
	int		rc = 0;

	if (len > 0) {
		iov.iov_base = out;
		iov.iov_len = len;
		rc = vcl_io_writev_full(fd, &iov, 1);
	}
	free(out);
	return (rc);
}

/* Has the child ended (it stays unreaped)? */
static int
fuzz_child_gone(pid_t child)
{
	siginfo_t	si;

	memset(&si, 0, sizeof si);
	return (waitid(P_PID, (id_t)child, &si, WEXITED | WNOHANG |
	    WNOWAIT) == 0 && si.si_pid == child);
}

/*
 * Play the server for the child's one connection: fn says what to send
 * when it connects, after each request frame it sends, and when it is
 * idle for FUZZ_IDLE_MS (req NULL, frame index 0). Ends when fn hangs up,
 * the client closes, or FUZZ_CHILD_MS passed. Closes the listener lfd
 * once the client connected. Returns the request frames read, or -1 when
 * nobody connected.
 */
int
fuzz_client_serve(int lfd, pid_t child, fuzz_answer_fn fn, void *arg)
{
	struct vcl_frame_limits	 lim = { VCL_FRAME_DEFAULT_MAX_MSG, 1u << 30 };
	struct vcl_frame_hdr	 hdr;
	struct timeval		 tv = { FUZZ_IO_S, 0 };
	struct pollfd		 pfd;
	struct timespec		 t0, t1;
	Vcl__Request		*req;
	const char		*why;
	uint8_t			 h[VCL_FRAME_HDR_LEN], *msg, *out;
	size_t			 len, frames = 0;
	int			 fd = -1, r, waited;

	pfd.fd = lfd;
	pfd.events = POLLIN;
	for (waited = 0; waited < FUZZ_CHILD_MS; waited += 20) {
		if (poll(&pfd, 1, 20) == 1) {
			fd = accept(lfd, NULL, NULL);
			break;
		}
		if (fuzz_child_gone(child))
			break;
	}
	/* One connection per input: a client that tries again is refused. */
	close(lfd);
	if (fd < 0)
		return (-1);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	out = NULL;
	len = 0;
	if (fn(arg, NULL, 0, 0, &out, &len) != 0 || fuzz_send(fd, out, len) != 0)
		goto out;
	pfd.fd = fd;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((t1.tv_sec - t0.tv_sec) * 1000 > FUZZ_CHILD_MS)
			break;
		out = NULL;
		len = 0;
		if ((r = poll(&pfd, 1, FUZZ_IDLE_MS)) < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			if (fn(arg, NULL, 0, 0, &out, &len) != 0 ||
			    fuzz_send(fd, out, len) != 0)
				break;
			continue;
		}
		if (fuzz_read(fd, h, sizeof h) != 0 ||
		    vcl_frame_decode(h, &lim, &hdr, &why) != 0 ||
		    (msg = malloc(hdr.msg_len)) == NULL)
			break;
		if (fuzz_read(fd, msg, hdr.msg_len) != 0) {
			free(msg);
			break;
		}
		req = vcl__request__unpack(NULL, hdr.msg_len, msg);
		free(msg);
		if (fuzz_read(fd, NULL, hdr.bulk_len) != 0) {
			if (req != NULL)
				vcl__request__free_unpacked(req, NULL);
			break;
		}
		r = fn(arg, req, hdr.bulk_len, ++frames, &out, &len);
		if (req != NULL)
			vcl__request__free_unpacked(req, NULL);
		if (r != 0 || fuzz_send(fd, out, len) != 0)
			break;
	}
out:
	close(fd);
	return ((int)frames);
}

/*
 * Wait for the child, FUZZ_CHILD_MS at most; its wait status in *status.
 * Returns 0, or -1 when it had to be killed (a hang).
 */
int
fuzz_client_reap(pid_t child, int *status)
{
	struct timespec	ts = { 0, 1000000 };
	int		ms;

	for (ms = 0; ms < FUZZ_CHILD_MS; ms++) {
		if (waitpid(child, status, WNOHANG) == child)
			return (0);
		nanosleep(&ts, NULL);
	}
	kill(child, SIGKILL);
	waitpid(child, status, 0);
	return (-1);
}
