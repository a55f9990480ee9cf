/* fuzz_session.c - libFuzzer: a server session fed arbitrary client bytes. */
#include <sys/socket.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "vcl.pb-c.h"
#include "vcl_buf.h"
#include "vcl_frame.h"
#include "vcl_log.h"
#include "vcl_server.h"

/*
 * One server for the whole run, with a backend of zero devices: the session
 * code, handle table, dispatch and every handler's checks run for real, and
 * no OpenCL object can be created. Each input is the byte stream a client
 * sends on one connection (a seed starts with a Hello frame). Odd-sized
 * inputs are written in small chunks, so frames arrive split; even-sized
 * ones in one write. Limits are small so that the paths past them are
 * reachable with small inputs.
 */
#define FUZZ_MAX_MSG		(1u << 20)
#define FUZZ_MAX_BULK		(16u << 20)
#define FUZZ_SESSION_BYTES	(1u << 20)
#define FUZZ_OBJECTS		64
#define FUZZ_ROUNDS		4096

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct vcl_server	srv;
static Vcl__Welcome		welcome = VCL__WELCOME__INIT;

/* What the client end received, parsed as frames to check them. */
static struct vcl_buf		peer_in;

/* Report a broken invariant as a crash libFuzzer keeps the input of. */
static void
fuzz_fail(const char *what)
{
	fprintf(stderr, "fuzz_session: %s\n", what);
	abort();
}

/* Run pending completions on the loop thread (as vcl_server.c does). */
static void
fuzz_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_server	*s = arg;
	struct vcl_session	*ss;
	struct vcl_done		*d, *next;

	pthread_mutex_lock(&s->done_lock);
	d = s->done_head;
	s->done_head = NULL;
	s->done_tail = &s->done_head;
	pthread_mutex_unlock(&s->done_lock);
	s->corked = 1;
	for (; d != NULL; d = next) {
		next = d->next;
		d->fn(d);
	}
	s->corked = 0;
	LIST_FOREACH(ss, &s->sessions, entry)
		vcl_session_flush(ss);
}

/* Set up the server once: event base, limits, an empty backend. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char		*lvl = getenv("VCL_LOG");
	enum vcl_log_level	 l = VCL_LOG_NONE;

	if (lvl != NULL)
		vcl_log_parse(lvl, &l);
	vcl_log_init("fuzz_session", l);
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() != 0 ||
	    (srv.base = event_base_new()) == NULL)
		fuzz_fail("no event base");
	srv.limits.frame.max_msg = FUZZ_MAX_MSG;
	srv.limits.frame.max_bulk = FUZZ_MAX_BULK;
	srv.limits.session_bytes = FUZZ_SESSION_BYTES;
	srv.limits.sessions = 4;
	srv.limits.objects = FUZZ_OBJECTS;
	welcome.node_name = (char *)"fuzz";
	srv.be.welcome = &welcome;
	srv.node_name = "fuzz";
	srv.lfd = -1;
	LIST_INIT(&srv.sessions);
	pthread_mutex_init(&srv.done_lock, NULL);
	srv.done_tail = &srv.done_head;
	if ((srv.ev_done = event_new(srv.base, -1, EV_PERSIST, fuzz_done_cb,
	    &srv)) == NULL || (srv.workers = vcl_workers_new(1)) == NULL)
		fuzz_fail("no completion event or workers");
	return (0);
}

/* Check the frames the server sent: each must decode as a ToClient. */
static void
fuzz_check_output(void)
{
	static const struct vcl_frame_limits	 lim = {
		UINT32_MAX, UINT64_MAX
	};
	struct vcl_frame_hdr			 h;
	Vcl__ToClient				*tc;
	const char				*why;
	size_t					 off = 0;

	while (peer_in.len - off >= VCL_FRAME_HDR_LEN) {
		if (vcl_frame_decode(peer_in.data + off, &lim, &h, &why) != 0)
			fuzz_fail("server sent a bad frame header");
		if (h.version != VCL_PROTOCOL_VERSION)
			fuzz_fail("server sent another protocol version");
		if (h.bulk_len != 0)
			fuzz_fail("server sent bulk bytes without a device");
		if (peer_in.len - off - VCL_FRAME_HDR_LEN < h.msg_len)
			break;
		tc = vcl__to_client__unpack(NULL, h.msg_len,
		    peer_in.data + off + VCL_FRAME_HDR_LEN);
		if (tc == NULL)
			fuzz_fail("server sent a message that does not unpack");
		protobuf_c_message_free_unpacked(&tc->base, NULL);
		off += VCL_FRAME_HDR_LEN + h.msg_len;
	}
	memmove(peer_in.data, peer_in.data + off, peer_in.len - off);
	peer_in.len -= off;
}

/* Take what the server wrote to the client end; 1 once it is closed. */
static int
fuzz_drain(int fd)
{
	ssize_t	n;

	for (;;) {
		if (vcl_buf_reserve(&peer_in, 65536) != 0)
			fuzz_fail("out of memory");
		n = read(fd, peer_in.data + peer_in.len,
		    peer_in.cap - peer_in.len);
		if (n > 0) {
			peer_in.len += (size_t)n;
			fuzz_check_output();
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK));
	}
}

/* One loop pass that handles what is ready, then take the output. */
static int
fuzz_step(int fd)
{
	event_base_loop(srv.base, EVLOOP_NONBLOCK);
	return (fd == -1 ? 1 : fuzz_drain(fd));
}

/* Feed one connection's bytes to a fresh session and tear it down. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vcl_session	*s;
	size_t			 off = 0, chunk, n;
	ssize_t			 w;
	int			 sv[2], i, closed = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) != 0)
		fuzz_fail("socketpair");
	if ((s = vcl_session_new(&srv, sv[0], "fuzz")) == NULL)
		fuzz_fail("vcl_session_new");
	peer_in.len = 0;
	chunk = (size % 2) ? 1 + size % 61 : size;
	for (i = 0; off < size && !closed && i < FUZZ_ROUNDS; i++) {
		n = size - off < chunk ? size - off : chunk;
		w = send(sv[1], data + off, n, MSG_NOSIGNAL);
		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR)
			break;		/* the server closed the session */
		closed = fuzz_step(sv[1]);
	}
	/* End of input: the client half-closes, then goes away. */
	shutdown(sv[1], SHUT_WR);
	for (i = 0; i < 8 && !closed; i++)
		closed = fuzz_step(sv[1]);
	close(sv[1]);
	for (i = 0; i < 4; i++)
		fuzz_step(-1);

	/* Whatever still lives (draining, flow-controlled) is cut now. */
	while ((s = LIST_FIRST(&srv.sessions)) != NULL)
		vcl_session_close(s, "fuzz input done");
	fuzz_done_cb(-1, 0, &srv);

	/* Nothing of the session may outlive it, and every byte is given back. */
	if (srv.nsessions != 0 || srv.session_structs != 0)
		fuzz_fail("a session outlived its connection");
	if (srv.objects != 0)
		fuzz_fail("objects left after the session closed");
	if (srv.bytes != 0)
		fuzz_fail("bytes still charged after the session closed");
	return (0);
}
