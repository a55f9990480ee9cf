/* fuzz_session.c - libFuzzer: a server session fed arbitrary client bytes. */
#include <sys/mman.h>
#include <sys/socket.h>

#include <arpa/inet.h>

#include <endian.h>
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
#include "vcl_backend.h"
#include "vcl_buf.h"
#include "vcl_frame.h"
#include "vcl_log.h"
#include "vcl_op_mem.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_submit.h"
#include "vcl_worker.h"

#include "fuzz_sources.h"

/*
 * One server for the whole run. Its backend is the node's OpenCL platform
 * (PoCL through ocl-icd, as vclserver runs), so contexts, buffers, programs,
 * kernels and commands are real and every handler runs to the end; with
 * VCL_FUZZ_BACKEND=none it has no device (the handlers' checks only).
 * VCL_FUZZ_PLATFORM picks the platform as --platform does.
 *
 * Each input is the byte stream a client sends on one connection (a seed
 * starts with a Hello frame). It is sent frame by frame, the way a client
 * that waits for its replies would: after each frame the harness lets the
 * server run until no build is in progress, so a CreateKernel after a
 * BuildProgram finds the program built. Odd-sized inputs are written in
 * small chunks, so frames arrive split; even-sized ones a frame per write.
 * Queues have strands (vcl_submit.c) as in vclserver, and launches go to
 * them where they may (VCL_LAUNCH_STRAND=1 unless set otherwise).
 * Program sources and build options are swapped for fixed ones
 * (fuzz_sources.h) unless VCL_FUZZ_ANY_SOURCE is set, and launches are
 * kept small. At the end of the input, unless a user event is left unset
 * (commands may wait on it for good), the harness waits until every
 * command has completed: so a session's replies do not depend on how fast
 * the device was, and a command that never completes is found.
 *
 * After each input the session is closed and the harness waits (bounded)
 * until the last command's completion has come back: then no session,
 * object or charged byte may be left (a leak finder, abort() if one is).
 * Limits are small so that the paths past them are reachable with small
 * inputs.
 */
#define FUZZ_MAX_MSG		(1u << 20)
#define FUZZ_MAX_BULK		(16u << 20)
#define FUZZ_SESSION_BYTES	(1u << 20)
#define FUZZ_OBJECTS		64
#define FUZZ_ROUNDS		4096
#define FUZZ_ITEMS		4096		/* work items of a launch */
#define FUZZ_LOCAL		16		/* work-group size, each dim */
#define FUZZ_POLL_US		200		/* one poll of a bounded wait */
#define FUZZ_WAIT_POLLS		(60 * 5000)	/* 60 s: builds, completions */

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct vcl_server	srv;
static Vcl__Welcome		welcome = VCL__WELCOME__INIT;
static int			any_source;
static int			trace;

/* What the client end received, parsed as frames to check them. */
static struct vcl_buf		peer_in;

/* A frame rewritten with a fixed source or options (fuzz_rewrite). */
static struct vcl_buf		frame_out;

/* The last binary GetBinary answered in this input's session. */
static struct vcl_buf		last_binary;

/* A peer link's input: the client session it pushes into (see below). */
static int			victim_fd = -1;
static uint64_t			victim_id, victim_key;

/* Report a broken invariant as a crash libFuzzer keeps the input of. */
static void
fuzz_fail(const char *what)
{
	fprintf(stderr, "fuzz_session: %s\n", what);
	abort();
}

/* The loop was woken for completions: run them as vclserver does. */
static void
fuzz_done_cb(evutil_socket_t fd, short what, void *arg)
{
	vcl_server_done_run(arg);
}

/* Open the backend vclserver would: the platform's devices, or none. */
static void
fuzz_backend(void)
{
	const char	*b = getenv("VCL_FUZZ_BACKEND");
	char		 err[512];

	if (b != NULL && strcmp(b, "none") == 0) {
		welcome.node_name = (char *)"fuzz";
		srv.be.welcome = &welcome;
		return;
	}
	if (vcl_backend_open(&srv.be, getenv("VCL_FUZZ_PLATFORM"), NULL, err,
	    sizeof err) != 0) {
		fprintf(stderr, "fuzz_session: %s (VCL_FUZZ_BACKEND=none runs "
		    "without devices)\n", err);
		exit(1);
	}
	srv.be.welcome->node_name = (char *)"fuzz";
	/* New buffers are filled from here, as in vcl_server_run. */
	srv.zeros_len = vcl_backend_max_alloc(&srv.be);
	if ((srv.zeros = mmap(NULL, srv.zeros_len, PROT_READ, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)) == MAP_FAILED)
		fuzz_fail("cannot map the zero pages");
}

/* Set up the server once: event base, limits, backend, threads. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char		*lvl = getenv("VCL_LOG");
	enum vcl_log_level	 l = VCL_LOG_NONE;

	if (lvl != NULL)
		vcl_log_parse(lvl, &l);
	vcl_log_init("fuzz_session", l);
	signal(SIGPIPE, SIG_IGN);
	/* Launches go to their queue's strand, whatever the CPUs. */
	setenv("VCL_LAUNCH_STRAND", "1", 0);
	/* Writes of 8 KiB and more are copied in chunks as they come. */
	vcl_write_chunk = 4096;
	/*
	 * Reads of 8 KiB and more go in chunks: at vclserver's 4 MiB no
	 * read under FUZZ_SESSION_BYTES could, so none ever did.
	 */
	vcl_read_chunk = 4096;
	any_source = getenv("VCL_FUZZ_ANY_SOURCE") != NULL;
	trace = getenv("VCL_FUZZ_TRACE") != NULL;
	if (evthread_use_pthreads() != 0 ||
	    (srv.base = event_base_new()) == NULL)
		fuzz_fail("no event base");
	srv.limits.frame.max_msg = FUZZ_MAX_MSG;
	srv.limits.frame.max_bulk = FUZZ_MAX_BULK;
	srv.limits.session_bytes = FUZZ_SESSION_BYTES;
	srv.limits.sessions = 4;
	srv.limits.objects = FUZZ_OBJECTS;
	fuzz_backend();
	srv.node_name = "fuzz";
	srv.lfd = -1;
	LIST_INIT(&srv.sessions);
	LIST_INIT(&srv.peers);
	pthread_mutex_init(&srv.done_lock, NULL);
	srv.done_tail = &srv.done_head;
	if ((srv.ev_done = event_new(srv.base, -1, EV_PERSIST, fuzz_done_cb,
	    &srv)) == NULL || (srv.workers = vcl_workers_new(1)) == NULL ||
	    (srv.waiters = vcl_workers_new(2)) == NULL ||
	    (srv.submitters = vcl_workers_new(VCL_SUBMITTERS)) == NULL)
		fuzz_fail("no completion event or threads");
	return (0);
}

/* VCL_FUZZ_TRACE: print what the server answered, to write seeds. */
static void
fuzz_trace(const Vcl__ToClient *tc, uint64_t bulk)
{
	size_t	i;

	if (tc->reply != NULL)
		fprintf(stderr, "reply seq %llu status %d%s%s bulk %llu\n",
		    (unsigned long long)tc->reply->seq, tc->reply->status,
		    tc->reply->message ? ": " : "",
		    tc->reply->message ? tc->reply->message : "",
		    (unsigned long long)bulk);
	for (i = 0; i < tc->n_notify; i++)
		fprintf(stderr, "notify event %llu status %d\n",
		    (unsigned long long)tc->notify[i]->event,
		    tc->notify[i]->status);
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
	size_t					 off = 0, left;

	while ((left = peer_in.len - off) >= VCL_FRAME_HDR_LEN) {
		if (vcl_frame_decode(peer_in.data + off, &lim, &h, &why) != 0)
			fuzz_fail("server sent a bad frame header");
		if (h.version != VCL_PROTOCOL_VERSION)
			fuzz_fail("server sent another protocol version");
		if (h.bulk_len > FUZZ_SESSION_BYTES)
			fuzz_fail("server sent more bulk than a session holds");
		if (left - VCL_FRAME_HDR_LEN < h.msg_len + h.bulk_len)
			break;
		tc = vcl__to_client__unpack(NULL, h.msg_len,
		    peer_in.data + off + VCL_FRAME_HDR_LEN);
		if (tc == NULL)
			fuzz_fail("server sent a message that does not unpack");
		if (h.bulk_len != 0 && tc->reply == NULL)
			fuzz_fail("server sent bulk bytes without a reply");
		if (trace)
			fuzz_trace(tc, h.bulk_len);
		if (tc->reply != NULL && tc->reply->result_case ==
		    VCL__REPLY__RESULT_PROGRAM && tc->reply->program->has_binary &&
		    tc->reply->program->binary.len > 0) {
			last_binary.len = 0;
			if (vcl_buf_reserve(&last_binary,
			    tc->reply->program->binary.len) != 0)
				fuzz_fail("out of memory");
			memcpy(last_binary.data, tc->reply->program->binary.data,
			    tc->reply->program->binary.len);
			last_binary.len = tc->reply->program->binary.len;
		}
		protobuf_c_message_free_unpacked(&tc->base, NULL);
		off += VCL_FRAME_HDR_LEN + h.msg_len + h.bulk_len;
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
	vcl_server_done_run(&srv);	/* the server's tick: lazy completions */
	return (fd == -1 ? 1 : fuzz_drain(fd));
}

/* The input's session while it is open (one at a time), else NULL. */
static struct vcl_session *
fuzz_session(void)
{
	return (LIST_FIRST(&srv.sessions));
}

/* Let the server run until no build of the open session is in progress. */
static int
fuzz_settle(int fd)
{
	struct vcl_session	*s;
	int			 i, closed = 0;

	for (i = 0; (s = fuzz_session()) != NULL && s->jobs > 0; i++) {
		if (i == FUZZ_WAIT_POLLS)
			fuzz_fail("a build never finished");
		usleep(FUZZ_POLL_US);
		closed |= fuzz_step(fd);
	}
	return (closed);
}

/*
 * At the end of the input: wait until the open session's commands have
 * completed, unless a user event is unset (a command may wait on it).
 */
static int
fuzz_quiesce(int fd)
{
	struct vcl_session	*s;
	struct vcl_hobj		*o;
	size_t			 j;
	int			 i, closed = 0;

	if ((s = fuzz_session()) == NULL)
		return (0);
	for (j = 0; j < s->handles.nslots; j++)
		for (o = s->handles.slots[j]; o != NULL; o = o->next)
			if (o->kind == VCL_KIND_EVENT && o->user &&
			    !o->user_set)
				return (0);
	for (i = 0; (s = fuzz_session()) != NULL &&
	    !LIST_EMPTY(&s->inflight); i++) {
		if (i == FUZZ_WAIT_POLLS)
			fuzz_fail("a command never completed");
		usleep(FUZZ_POLL_US);
		closed |= fuzz_step(fd);
	}
	return (closed);
}

/* A small hash to pick a fixed source or option for a mutated one. */
static size_t
fuzz_hash(const void *p, size_t n)
{
	const uint8_t	*b = p;
	size_t		 h = 5381;

	while (n-- > 0)
		h = h * 33 + *b++;
	return (h);
}

/*
 * A CreateProgram or BuildProgram frame with its source or options swapped
 * for a fixed one, or an NDRange of more than FUZZ_ITEMS work items or
 * groups wider than FUZZ_LOCAL made small (a long kernel only slows the
 * run, and PoCL compiles a kernel anew for each group size), or a
 * CreateProgramFrom whose binaries of FUZZ_BINARY's bytes become the last
 * binary GetBinary gave, in frame_out; NULL when the frame is sent as it
 * is.
 */
static const struct vcl_buf *
fuzz_rewrite(const uint8_t *p, size_t n)
{
	static const struct vcl_frame_limits	 lim = {
		FUZZ_MAX_MSG, FUZZ_MAX_BULK
	};
	struct vcl_frame_hdr			 h;
	Vcl__Request				*req;
	const char				*why, *keep = NULL;
	char					*old = NULL;
	ProtobufCBinaryData			 src = { 0, NULL };
	Vcl__NDRange				*nd;
	Vcl__CreateProgramFrom			*pf;
	uint8_t					*bins[64];
	uint64_t				 items;
	size_t					 i, j, len, rest;
	const struct vcl_buf			*out = NULL;

	if (n < VCL_FRAME_HDR_LEN ||
	    vcl_frame_decode(p, &lim, &h, &why) != 0 ||
	    h.version != VCL_PROTOCOL_VERSION ||
	    n - VCL_FRAME_HDR_LEN < h.msg_len ||
	    (req = vcl__request__unpack(NULL, h.msg_len,
	    p + VCL_FRAME_HDR_LEN)) == NULL)
		return (NULL);
	pf = req->create_program_from;
	if (req->call_case == VCL__REQUEST__CALL_PEER_PUSH && victim_fd != -1 &&
	    req->peer_push->key == 0) {
		req->peer_push->session = victim_id;
		req->peer_push->key = victim_key;
	} else if (req->call_case == VCL__REQUEST__CALL_PEER_EVENT &&
	    victim_fd != -1 && req->peer_event->key == 0) {
		req->peer_event->session = victim_id;
		req->peer_event->key = victim_key;
	} else if (req->call_case == VCL__REQUEST__CALL_CREATE_PROGRAM_FROM) {
		for (i = j = 0; i < pf->n_binaries && i < 64; i++) {
			bins[i] = pf->binaries[i].data;
			if (pf->binaries[i].len != strlen(FUZZ_BINARY) ||
			    memcmp(bins[i], FUZZ_BINARY, strlen(FUZZ_BINARY)) !=
			    0 || last_binary.len == 0)
				continue;
			pf->binaries[i].data = last_binary.data;
			pf->binaries[i].len = last_binary.len;
			j++;
		}
		if (j == 0)
			goto out;
	} else if (any_source)
		goto out;
	else if (req->call_case == VCL__REQUEST__CALL_CREATE_PROGRAM) {
		src = req->create_program->source;
		for (i = 0; i < FUZZ_NSOURCES; i++)
			if (src.len == strlen(fuzz_sources[i]) &&
			    memcmp(src.data, fuzz_sources[i], src.len) == 0)
				goto out;
		keep = fuzz_sources[fuzz_hash(src.data, src.len) %
		    FUZZ_NSOURCES];
		req->create_program->source.data = (uint8_t *)keep;
		req->create_program->source.len = strlen(keep);
	} else if (req->call_case == VCL__REQUEST__CALL_BUILD_PROGRAM &&
	    (old = req->build_program->options) != NULL) {
		for (i = 0; i < FUZZ_NOPTIONS; i++)
			if (strcmp(old, fuzz_options[i]) == 0)
				goto out;
		keep = fuzz_options[fuzz_hash(old, strlen(old)) %
		    FUZZ_NOPTIONS];
		req->build_program->options = (char *)keep;
	} else if (req->call_case == VCL__REQUEST__CALL_NDRANGE) {
		nd = req->ndrange;
		for (i = 0, items = 1; i < nd->n_global; i++)
			if (nd->global[i] > FUZZ_ITEMS ||
			    (items *= nd->global[i]) > FUZZ_ITEMS)
				break;
		for (j = 0; j < nd->n_local; j++)
			if (nd->local[j] > FUZZ_LOCAL)
				break;
		if (i == nd->n_global && j == nd->n_local)
			goto out;
		if (i < nd->n_global)
			for (i = 0; i < nd->n_global; i++)
				nd->global[i] = 1 + nd->global[i] % 16;
		for (j = 0; j < nd->n_local; j++)
			if (nd->local[j] > FUZZ_LOCAL)
				nd->local[j] = 1 + nd->local[j] % FUZZ_LOCAL;
	} else
		goto out;
	len = vcl__request__get_packed_size(req);
	rest = n - VCL_FRAME_HDR_LEN - h.msg_len;
	frame_out.len = 0;
	if (vcl_buf_reserve(&frame_out, VCL_FRAME_HDR_LEN + len + rest) != 0)
		fuzz_fail("out of memory");
	vcl_frame_encode(frame_out.data, (uint32_t)len, h.bulk_len);
	vcl__request__pack(req, frame_out.data + VCL_FRAME_HDR_LEN);
	memcpy(frame_out.data + VCL_FRAME_HDR_LEN + len,
	    p + VCL_FRAME_HDR_LEN + h.msg_len, rest);
	frame_out.len = VCL_FRAME_HDR_LEN + len + rest;
	out = &frame_out;
	/* Put the unpacked pointers back before they are freed. */
	if (req->call_case == VCL__REQUEST__CALL_CREATE_PROGRAM_FROM)
		for (i = 0; i < pf->n_binaries && i < 64; i++)
			pf->binaries[i].data = bins[i];
	else if (req->call_case == VCL__REQUEST__CALL_CREATE_PROGRAM)
		req->create_program->source = src;
	else if (req->call_case == VCL__REQUEST__CALL_BUILD_PROGRAM)
		req->build_program->options = old;
out:
	protobuf_c_message_free_unpacked(&req->base, NULL);
	return (out);
}

/* Bytes of the frame starting at p (header, message, bulk), at most n. */
static size_t
fuzz_frame_len(const uint8_t *p, size_t n)
{
	uint64_t	len;
	uint32_t	m;
	uint64_t	b;

	if (n < VCL_FRAME_HDR_LEN)
		return (n);
	memcpy(&m, p + 4, sizeof m);
	memcpy(&b, p + 8, sizeof b);
	len = (uint64_t)VCL_FRAME_HDR_LEN + ntohl(m) + be64toh(b);
	return (len < n ? (size_t)len : n);
}

/* Send one piece of input in chunks, running the server between them. */
static int
fuzz_send(int fd, const uint8_t *p, size_t n, size_t chunk, int *rounds)
{
	size_t	off = 0, k;
	ssize_t	w;
	int	closed = 0;

	while (off < n && !closed && *rounds < FUZZ_ROUNDS) {
		(*rounds)++;
		k = n - off < chunk ? n - off : chunk;
		w = send(fd, p + off, k, MSG_NOSIGNAL);
		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR)
			return (1);	/* the server closed the session */
		closed = fuzz_step(fd);
	}
	return (closed || off < n);
}

/*
 * A peer link's input (its Hello has peer set) pushes into and completes
 * events of a client session, which one input alone cannot open: the
 * harness opens it first (the victim) with a buffer, two transfers waiting
 * for bytes (MigrateIn) and a proxy event, and a PeerPush or PeerEvent of
 * the input whose key is 0 is sent with the victim's id and key instead.
 * Victim ids: context 1, queue 2, buffer 3 (4096 bytes), transfers 77
 * (all of it, event 10) and 78 (64 bytes at 1024, event 11, source
 * "fuzz-peer"), proxy event 20 (source "fuzz-peer").
 */
#define FUZZ_VICTIM_SIZE	4096
#define FUZZ_VICTIM_LAST	8		/* the script's Stats' seq */

/* Append one request of the victim's script. */
static void
fuzz_victim_put(struct vcl_buf *b, Vcl__Request *r, uint64_t *seq)
{
	r->seq = ++*seq;
	if (vcl_buf_pack(b, &r->base, 0) != 0)
		fuzz_fail("out of memory");
}

/*
 * The victim's script: Hello, its objects, two MigrateIn, a proxy, and a
 * Stats last (FUZZ_VICTIM_LAST) whose reply says the rest was handled.
 */
static void
fuzz_victim_script(struct vcl_buf *b)
{
	Vcl__Request		 r;
	Vcl__Hello		 h = VCL__HELLO__INIT;
	Vcl__CreateContext	 cc = VCL__CREATE_CONTEXT__INIT;
	Vcl__CreateQueue	 cq = VCL__CREATE_QUEUE__INIT;
	Vcl__CreateBuffer	 cb = VCL__CREATE_BUFFER__INIT;
	Vcl__MigrateIn		 mi = VCL__MIGRATE_IN__INIT;
	Vcl__Enqueue		 e = VCL__ENQUEUE__INIT;
	Vcl__CreateProxyEvent	 pe = VCL__CREATE_PROXY_EVENT__INIT;
	Vcl__Stats		 st = VCL__STATS__INIT;
	uint32_t		 dev = 0;
	uint64_t		 seq = 0;

	vcl__request__init(&r);
	h.version = VCL_PROTOCOL_VERSION;
	h.client_name = (char *)"victim";
	r.call_case = VCL__REQUEST__CALL_HELLO;
	r.hello = &h;
	fuzz_victim_put(b, &r, &seq);
	cc.id = 1;
	cc.n_devices = 1;
	cc.devices = &dev;
	r.call_case = VCL__REQUEST__CALL_CREATE_CONTEXT;
	r.create_context = &cc;
	fuzz_victim_put(b, &r, &seq);
	cq.id = 2;
	cq.context = 1;
	r.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	r.create_queue = &cq;
	fuzz_victim_put(b, &r, &seq);
	cb.id = 3;
	cb.context = 1;
	cb.size = FUZZ_VICTIM_SIZE;
	r.call_case = VCL__REQUEST__CALL_CREATE_BUFFER;
	r.create_buffer = &cb;
	fuzz_victim_put(b, &r, &seq);
	e.queue = 2;
	e.has_event = 1;
	e.event = 10;
	mi.q = &e;
	mi.mem = 3;
	mi.size = FUZZ_VICTIM_SIZE;
	mi.transfer = 77;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	r.migrate_in = &mi;
	fuzz_victim_put(b, &r, &seq);
	e.event = 11;
	mi.offset = 1024;
	mi.size = 64;
	mi.transfer = 78;
	mi.source = (char *)"fuzz-peer";
	fuzz_victim_put(b, &r, &seq);
	pe.id = 20;
	pe.context = 1;
	pe.source = (char *)"fuzz-peer";
	r.call_case = VCL__REQUEST__CALL_CREATE_PROXY_EVENT;
	r.create_proxy_event = &pe;
	fuzz_victim_put(b, &r, &seq);
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &st;
	fuzz_victim_put(b, &r, &seq);
}

/* Does the input start with a peer link's Hello? */
static int
fuzz_is_peer(const uint8_t *p, size_t n)
{
	static const struct vcl_frame_limits	 lim = {
		FUZZ_MAX_MSG, FUZZ_MAX_BULK
	};
	struct vcl_frame_hdr			 h;
	Vcl__Request				*req;
	const char				*why;
	int					 peer;

	if (n < VCL_FRAME_HDR_LEN || vcl_frame_decode(p, &lim, &h, &why) != 0 ||
	    n - VCL_FRAME_HDR_LEN < h.msg_len ||
	    (req = vcl__request__unpack(NULL, h.msg_len,
	    p + VCL_FRAME_HDR_LEN)) == NULL)
		return (0);
	peer = req->call_case == VCL__REQUEST__CALL_HELLO &&
	    req->hello->has_peer && req->hello->peer;
	protobuf_c_message_free_unpacked(&req->base, NULL);
	return (peer);
}

/* Open the victim session and run its script; its id and key from Welcome. */
static void
fuzz_victim_open(void)
{
	static const struct vcl_frame_limits	 lim = {
		UINT32_MAX, UINT64_MAX
	};
	struct vcl_buf				 b = { NULL, 0, 0 }, in = {
		NULL, 0, 0 };
	struct vcl_frame_hdr			 h;
	Vcl__ToClient				*tc;
	const char				*why;
	ssize_t					 n;
	int					 sv[2], i, got = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) != 0)
		fuzz_fail("socketpair");
	if (vcl_session_new(&srv, sv[0], "victim") == NULL)
		fuzz_fail("vcl_session_new");
	victim_fd = sv[1];
	fuzz_victim_script(&b);
	if (send(victim_fd, b.data, b.len, MSG_NOSIGNAL) != (ssize_t)b.len)
		fuzz_fail("victim script not sent");
	vcl_buf_free(&b);
	/* Its Welcome, then the reply to its last request. */
	for (i = 0; !got; i++) {
		if (i == FUZZ_WAIT_POLLS)
			fuzz_fail("the victim session never answered");
		fuzz_step(-1);
		if (vcl_buf_reserve(&in, 65536) != 0)
			fuzz_fail("out of memory");
		n = read(victim_fd, in.data + in.len, in.cap - in.len);
		if (n == 0)
			fuzz_fail("the victim session closed");
		if (n < 0) {
			usleep(FUZZ_POLL_US);
			continue;
		}
		in.len += (size_t)n;
		while (in.len >= VCL_FRAME_HDR_LEN) {
			if (vcl_frame_decode(in.data, &lim, &h, &why) != 0)
				fuzz_fail("victim: bad frame");
			if (in.len - VCL_FRAME_HDR_LEN < h.msg_len + h.bulk_len)
				break;
			if ((tc = vcl__to_client__unpack(NULL, h.msg_len,
			    in.data + VCL_FRAME_HDR_LEN)) == NULL)
				fuzz_fail("victim: bad message");
			if (tc->reply != NULL) {
				if (tc->reply->result_case ==
				    VCL__REPLY__RESULT_WELCOME) {
					victim_id = tc->reply->welcome->session_id;
					victim_key =
					    tc->reply->welcome->session_key;
				}
				got = tc->reply->seq == FUZZ_VICTIM_LAST;
			}
			protobuf_c_message_free_unpacked(&tc->base, NULL);
			in.len -= VCL_FRAME_HDR_LEN + h.msg_len + h.bulk_len;
			memmove(in.data, in.data + VCL_FRAME_HDR_LEN +
			    h.msg_len + h.bulk_len, in.len);
		}
	}
	vcl_buf_free(&in);
}

/* Feed one connection's bytes to a fresh session and tear it down. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct vcl_buf	*fr;
	struct vcl_session	*s;
	size_t			 off = 0, chunk, n, k;
	int			 sv[2], i, rounds = 0, closed = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) != 0)
		fuzz_fail("socketpair");
	peer_in.len = 0;
	last_binary.len = 0;
	/* Opened first: the input's session is then first in the list. */
	if (fuzz_is_peer(data, size))
		fuzz_victim_open();
	if ((s = vcl_session_new(&srv, sv[0], "fuzz")) == NULL)
		fuzz_fail("vcl_session_new");
	chunk = (size % 2) ? 1 + size % 61 : SIZE_MAX;
	while (off < size && !closed) {
		n = fuzz_frame_len(data + off, size - off);
		/* A swapped-in binary may be large: no more writes for it. */
		if ((fr = fuzz_rewrite(data + off, n)) != NULL) {
			k = chunk;
			if (fr->len > n && chunk < SIZE_MAX)
				k = chunk * (fr->len / n + 1);
			closed = fuzz_send(sv[1], fr->data, fr->len, k,
			    &rounds);
		}
		else
			closed = fuzz_send(sv[1], data + off, n, chunk,
			    &rounds);
		off += n;
		closed |= fuzz_settle(sv[1]);
	}
	if (!closed)
		closed = fuzz_quiesce(sv[1]);
	/* End of input: the client half-closes, then goes away. */
	shutdown(sv[1], SHUT_WR);
	for (i = 0; i < 8 && !closed; i++)
		closed = fuzz_step(sv[1]);
	close(sv[1]);
	if (victim_fd != -1) {
		close(victim_fd);
		victim_fd = -1;
	}
	for (i = 0; i < 4; i++)
		fuzz_step(-1);

	/* Whatever still lives (draining, flow-controlled) is cut now. */
	while ((s = LIST_FIRST(&srv.sessions)) != NULL)
		vcl_session_close(s, "fuzz input done");

	/*
	 * Commands, builds and sent reads hold the session until their
	 * completion comes back from the runtime's threads: wait for them.
	 */
	for (i = 0; srv.session_structs != 0; i++) {
		if (i == FUZZ_WAIT_POLLS)
			fuzz_fail("a session outlived its connection");
		fuzz_done_cb(-1, 0, &srv);
		if (srv.session_structs != 0)
			usleep(FUZZ_POLL_US);
	}

	/* Nothing of the session may outlive it, and every byte is given back. */
	if (srv.nsessions != 0)
		fuzz_fail("a session is still listed");
	if (srv.objects != 0)
		fuzz_fail("objects left after the session closed");
	if (srv.bytes != 0)
		fuzz_fail("bytes still charged after the session closed");
	return (0);
}
