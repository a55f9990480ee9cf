/*
 * vcl_metrics.c - the server's counters: requests and handler time per
 * opcode, held requests, migrations, slow loop events; answered in Stats
 * and, when --metrics-listen is set, as Prometheus text over HTTP.
 *
 * The HTTP side is hostile ground like the wire: GET /metrics only, small
 * header and body limits, a timeout, and a cap on open connections (past
 * it the listener stops accepting until one closes).
 */
#include <sys/socket.h>

#include <netdb.h>
#include <netinet/in.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "vcl_bincheck.h"
#include "vcl_io.h"
#include "vcl_log.h"
#include "vcl_op_mem.h"
#include "vcl_peer.h"
#include "vcl_pin.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_submit.h"
#include "vcl_transports.h"

/* Count one request of oneof case op whose handler took ms. */
void
vcl_metrics_request(struct vcl_metrics *m, unsigned op, double ms)
{
	uint64_t	us;
	int		b;

	if (op >= VCL_METRICS_OPS)
		return;
	us = ms <= 0 ? 0 : (uint64_t)(ms * 1000.0);
	m->requests[op]++;
	m->usec[op] += us;
	for (b = 0; b < VCL_METRICS_BUCKETS && us >= (1ull << b); b++)
		;
	m->hist[op][b]++;
}

/* Requests held now, waiting on events, over all sessions. */
static uint64_t
vcl_metrics_held_now(struct vcl_server *srv)
{
	struct vcl_session	*s;
	uint64_t		 n = 0;

	LIST_FOREACH(s, &srv->sessions, entry)
		n += s->nheld;
	return (n);
}

/*
 * Fill the server-wide part of a StatsResult: the opcodes seen (allocated:
 * vcl_metrics_stats_free), held requests, migrations, slow events, the
 * version and transport. Returns 0, or -1 out of memory.
 */
int
vcl_metrics_stats(struct vcl_server *srv, Vcl__StatsResult *st)
{
	struct vcl_metrics	*m = &srv->metrics;
	Vcl__OpStat		*os;
	unsigned		 c, n = 0;

	for (c = 0; c < VCL_METRICS_OPS; c++)
		n += m->requests[c] > 0;
	st->n_ops = 0;
	st->ops = NULL;
	if (n > 0 && ((st->ops = calloc(n, sizeof *st->ops)) == NULL ||
	    (os = calloc(n, sizeof *os)) == NULL)) {
		free(st->ops);
		st->ops = NULL;
		return (-1);
	}
	st->has_requests = 1;
	st->requests = 0;
	for (c = 0; c < VCL_METRICS_OPS && n > 0; c++) {
		if (m->requests[c] == 0)
			continue;
		vcl__op_stat__init(os);
		os->opcode = c;
		os->requests = m->requests[c];
		os->has_usec = 1;
		os->usec = m->usec[c];
		st->requests += m->requests[c];
		st->ops[st->n_ops++] = os++;
	}
	st->has_held_now = st->has_held_total = 1;
	st->held_now = vcl_metrics_held_now(srv);
	st->held_total = m->held_total;
	st->has_migrations_in = st->has_migrations_out = 1;
	st->migrations_in = m->migrations_in;
	st->migrations_out = m->migrations_out;
	st->has_slow_events = st->has_slow_ms = 1;
	st->slow_events = m->slow_events;
	st->slow_ms = (uint32_t)VCL_SLOW_MS;
	st->has_sessions_total = 1;
	st->sessions_total = m->sessions_total;
	st->version = (char *)VCL_VERSION;
	st->has_uptime_s = 1;
	st->uptime_s = (uint64_t)(vcl_server_now() - m->started);
	st->control = srv->tls != NULL ? "tls" : "tcp";
	return (0);
}

/* Free what vcl_metrics_stats allocated. */
void
vcl_metrics_stats_free(Vcl__StatsResult *st)
{
	if (st->n_ops > 0)
		free(st->ops[0]);	/* one array behind all entries */
	free(st->ops);
	st->ops = NULL;
	st->n_ops = 0;
}

/* The wire name of an opcode ("write_buffer"), NULL if none. */
static const char *
vcl_metrics_op_name(unsigned c)
{
	const ProtobufCFieldDescriptor	*f;

	f = protobuf_c_message_descriptor_get_field(&vcl__request__descriptor,
	    c);
	return (f != NULL ? f->name : NULL);
}

/* One metric's HELP and TYPE lines. */
static void
vcl_metrics_head(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

/* One unlabelled sample with its HELP and TYPE. */
static void
vcl_metrics_one(struct evbuffer *b, const char *name, const char *type,
    const char *help, uint64_t v)
{
	vcl_metrics_head(b, name, type, help);
	evbuffer_add_printf(b, "%s %llu\n", name, (unsigned long long)v);
}

/* A label value with backslash, quote and newline escaped. */
static void
vcl_metrics_label(struct evbuffer *b, const char *v)
{
	for (; v != NULL && *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			evbuffer_add_printf(b, "\\%c", *v);
		else if (*v == '\n')
			evbuffer_add(b, "\\n", 2);
		else
			evbuffer_add(b, v, 1);
	}
}

/*
 * The transports offered and each peer link (address, transport, ready),
 * as gauges of value 1: what Stats lists as transports and peer_links.
 */
static void
vcl_metrics_links(struct vcl_server *srv, struct evbuffer *b)
{
	Vcl__PeerLinkStat	**links = NULL;
	char			 *names[VCL_TP_MAX + 1];
	size_t			  i, n;

	vcl_metrics_head(b, "vcl_transport_offered", "gauge",
	    "Bulk transports this server offers (1 each).");
	n = vcl_transports_names(srv, names, VCL_TP_MAX + 1);
	for (i = 0; i < n; i++) {
		evbuffer_add_printf(b, "vcl_transport_offered{transport=\"");
		vcl_metrics_label(b, names[i]);
		evbuffer_add_printf(b, "\"} 1\n");
	}
	vcl_metrics_head(b, "vcl_peer_link", "gauge",
	    "Links to other servers (1 each): address, transport, ready.");
	n = vcl_peer_stats(srv, &links);
	for (i = 0; i < n; i++) {
		evbuffer_add_printf(b, "vcl_peer_link{address=\"");
		vcl_metrics_label(b, links[i]->address);
		evbuffer_add_printf(b, "\",transport=\"");
		vcl_metrics_label(b, links[i]->transport);
		evbuffer_add_printf(b, "\",ready=\"%s\"} 1\n",
		    links[i]->ready ? "true" : "false");
	}
	vcl_peer_stats_free(links, n);
}

/* The Prometheus text exposition (format 0.0.4) of every counter. */
static void
vcl_metrics_render(struct vcl_server *srv, struct evbuffer *b)
{
	struct vcl_metrics	*m = &srv->metrics;
	const char		*op;
	uint64_t		 cum, started, failed, now;
	unsigned		 c;
	int			 k;

	vcl_metrics_head(b, "vcl_build_info", "gauge",
	    "Version of the server and its transport.");
	evbuffer_add_printf(b, "vcl_build_info{version=\"%s\",transport="
	    "\"%s\"} 1\n", VCL_VERSION, srv->tls != NULL ? "tls" : "tcp");
	vcl_metrics_one(b, "vcl_uptime_seconds", "gauge",
	    "Seconds since the server started.",
	    (uint64_t)(vcl_server_now() - m->started));
	vcl_metrics_one(b, "vcl_sessions", "gauge",
	    "Client connections, authenticated or not.", srv->nsessions);
	vcl_metrics_one(b, "vcl_sessions_total", "counter",
	    "Sessions authenticated since the start.", m->sessions_total);
	vcl_metrics_one(b, "vcl_objects", "gauge",
	    "Live objects of all sessions.", srv->objects);
	vcl_metrics_one(b, "vcl_bytes", "gauge",
	    "Bytes allocated for all sessions.", srv->bytes);
	vcl_metrics_one(b, "vcl_bulk_in_bytes_total", "counter",
	    "Bulk bytes received from clients.", srv->bytes_in);
	vcl_metrics_one(b, "vcl_bulk_out_bytes_total", "counter",
	    "Bulk bytes sent to clients.", srv->bytes_out);
	vcl_metrics_one(b, "vcl_peer_in_bytes_total", "counter",
	    "Bulk bytes received from other servers.", srv->peer_bytes_in);
	vcl_metrics_one(b, "vcl_peer_out_bytes_total", "counter",
	    "Bulk bytes sent to other servers.", srv->peer_bytes_out);
	vcl_metrics_one(b, "vcl_peer_oob_bytes_total", "counter",
	    "Of the bulk bytes sent to other servers, those sent out of band "
	    "(not on the control stream).", srv->peer_bytes_oob);
	vcl_metrics_one(b, "vcl_peer_shared_bytes_total", "counter",
	    "Of those, the bytes placed in the other server's shared staging.",
	    srv->peer_bytes_shared);
	vcl_metrics_one(b, "vcl_peer_direct_bytes_total", "counter",
	    "Migrations' bytes this server read from another server's buffer "
	    "itself (direct mode).", srv->peer_bytes_direct);
	vcl_metrics_one(b, "vcl_peer_direct_total", "counter",
	    "Migrations taken in direct mode.", srv->peer_direct);
	vcl_metrics_one(b, "vcl_peer_direct_fallbacks_total", "counter",
	    "Migrations that could have been taken in direct mode and went "
	    "through the shared ring.", srv->peer_direct_fallbacks);
	vcl_metrics_one(b, "vcl_client_shared_bytes_total", "counter",
	    "Client bulk bytes through shared-memory rings, both ways.",
	    srv->client_bytes_shared);
	vcl_metrics_one(b, "vcl_notifies_total", "counter",
	    "Notify messages sent, all sessions.", srv->notifies);
	vcl_metrics_one(b, "vcl_fast_replies_total", "counter",
	    "Finish and read replies written by the thread that saw the "
	    "completion.", atomic_load(&srv->fast_replies));
	vcl_metrics_one(b, "vcl_queues_offloop_total", "counter",
	    "Queues whose flush was slow on the loop, flushed on a strand "
	    "since.", vcl_submit_moved());
	vcl_metrics_one(b, "vcl_launches_offloop_total", "counter",
	    "Kernel launches handed to their queue's strand, not made on "
	    "the loop.",
	    vcl_submit_launched());
	vcl_metrics_one(b, "vcl_loop_spin_hits_total", "counter",
	    "Passes of the loop's look for input before sleeping (--spin-us) "
	    "that found some.", srv->spin_hits);
	vcl_metrics_one(b, "vcl_writes_chunked_total", "counter",
	    "Writes copied to their buffer chunk by chunk as their bytes "
	    "came (--write-chunk).", vcl_mem_writes_chunked());
	vcl_metrics_one(b, "vcl_write_slot_waits_total", "counter",
	    "Times a chunked write's input waited for the copy out of a "
	    "slot its next bytes go to (--write-slots).",
	    vcl_mem_write_slot_waits());
	vcl_metrics_one(b, "vcl_pinned_bytes", "gauge",
	    "Pinned host memory of all sessions: staging blocks and shared "
	    "rings wrapped.", vcl_pin_bytes());
	vcl_metrics_one(b, "vcl_pin_share_refused_total", "counter",
	    "Pinned staging blocks and ring wrappers left pageable because "
	    "their session held its share (--max-pinned-session).",
	    vcl_pin_share_refused());
	vcl_metrics_one(b, "vcl_release_backlog", "gauge",
	    "Runtime releases (programs, kernels) waiting for the releaser "
	    "thread.", atomic_load(&srv->release_backlog));
	vcl_metrics_one(b, "vcl_release_backlog_bytes", "gauge",
	    "Bytes the waiting releases' sessions were charged for them (an "
	    "estimate of what they hold).", atomic_load(&srv->release_bytes));
	vcl_metrics_one(b, "vcl_release_refused_total", "counter",
	    "Program creations and builds refused while the release backlog "
	    "was over its limit.", srv->release_refused);
	vcl_bincheck_counts(&started, &failed, &now);
	vcl_metrics_one(b, "vcl_binary_checks_total", "counter",
	    "Child processes started to try a program binary before the "
	    "runtime takes it (--trust-binaries).", started);
	vcl_metrics_one(b, "vcl_binary_checks_failed_total", "counter",
	    "Binary checks that failed (the binary refused).", failed);
	vcl_metrics_one(b, "vcl_binary_checks", "gauge",
	    "Binary checks queued or running.", now);
	vcl_metrics_head(b, "vcl_slow_threshold_seconds", "gauge",
	    "What holds the loop this long counts in vcl_slow_events_total.");
	evbuffer_add_printf(b, "vcl_slow_threshold_seconds %g\n",
	    VCL_SLOW_MS / 1e3);
	vcl_metrics_one(b, "vcl_held_requests", "gauge",
	    "Requests waiting on events now.", vcl_metrics_held_now(srv));
	vcl_metrics_one(b, "vcl_held_requests_total", "counter",
	    "Requests ever held waiting on events.", m->held_total);
	vcl_metrics_one(b, "vcl_migrations_in_total", "counter",
	    "Buffer ranges migrated here from other servers.",
	    m->migrations_in);
	vcl_metrics_one(b, "vcl_migrations_out_total", "counter",
	    "Buffer ranges pushed to other servers.", m->migrations_out);
	vcl_metrics_one(b, "vcl_slow_events_total", "counter",
	    "Handlers or loop iterations that held the loop past the slow "
	    "threshold.", m->slow_events);
	vcl_metrics_one(b, "vcl_http_refused_total", "counter",
	    "Metrics HTTP requests refused (method or path).",
	    m->http_refused);
	vcl_metrics_links(srv, b);
	vcl_metrics_head(b, "vcl_requests_total", "counter",
	    "Requests per opcode.");
	for (c = 0; c < VCL_METRICS_OPS; c++)
		if (m->requests[c] > 0 && (op = vcl_metrics_op_name(c)) != NULL)
			evbuffer_add_printf(b, "vcl_requests_total{op=\"%s\"} "
			    "%llu\n", op, (unsigned long long)m->requests[c]);
	vcl_metrics_head(b, "vcl_request_duration_seconds", "histogram",
	    "Handler time per opcode on the event loop.");
	for (c = 0; c < VCL_METRICS_OPS; c++) {
		if (m->requests[c] == 0 || (op = vcl_metrics_op_name(c)) == NULL)
			continue;
		cum = 0;
		for (k = 0; k < VCL_METRICS_BUCKETS; k++) {
			cum += m->hist[c][k];
			evbuffer_add_printf(b, "vcl_request_duration_seconds_"
			    "bucket{op=\"%s\",le=\"%g\"} %llu\n", op,
			    ldexp(1e-6, k), (unsigned long long)cum);
		}
		cum += m->hist[c][VCL_METRICS_BUCKETS];
		evbuffer_add_printf(b, "vcl_request_duration_seconds_bucket"
		    "{op=\"%s\",le=\"+Inf\"} %llu\n", op,
		    (unsigned long long)cum);
		evbuffer_add_printf(b, "vcl_request_duration_seconds_sum"
		    "{op=\"%s\"} %.6f\n", op, m->usec[c] / 1e6);
		evbuffer_add_printf(b, "vcl_request_duration_seconds_count"
		    "{op=\"%s\"} %llu\n", op, (unsigned long long)m->requests[c]);
	}
}

/* Answer one HTTP request: GET /metrics, else an error status. */
static void
vcl_metrics_http_cb(struct evhttp_request *req, void *arg)
{
	struct vcl_server	*srv = arg;
	const struct evhttp_uri	*u = evhttp_request_get_evhttp_uri(req);
	const char		*path = u != NULL ? evhttp_uri_get_path(u) : NULL;
	struct evbuffer		*b;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
		srv->metrics.http_refused++;
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET");
		evhttp_send_error(req, 405, "Method Not Allowed");
		return;
	}
	if (path == NULL || strcmp(path, "/metrics") != 0) {
		srv->metrics.http_refused++;
		evhttp_send_error(req, HTTP_NOTFOUND, NULL);
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	vcl_metrics_render(srv, b);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4");
	evhttp_send_reply(req, HTTP_OK, "OK", b);
	evbuffer_free(b);
}

/*
 * Let go of the HTTP connections evhttp is done with, and accept again
 * when that brings them under the cap. evhttp 2.1 has neither a cap nor a
 * hook for a connection's end: each connection's bufferevent carries a
 * reference of ours, and evhttp freeing it clears its callbacks (evhttp
 * keeps its error callback set for as long as it uses one). Its timeout
 * restarts with every byte: a connection open past VCL_METRICS_LIFE_S (a
 * slow drip of header bytes) is shut down, and evhttp then ends it.
 */
static void
vcl_metrics_sweep(struct vcl_metrics *m)
{
	bufferevent_event_cb	 ecb;
	evutil_socket_t		 fd;
	time_t			 now = vcl_server_now();
	int			 i, was = m->conns;

	for (i = 0; i < m->conns; ) {
		bufferevent_getcb(m->bevs[i], NULL, NULL, &ecb, NULL);
		if (ecb != NULL) {
			if (now - m->born[i] > VCL_METRICS_LIFE_S &&
			    (fd = bufferevent_getfd(m->bevs[i])) != -1)
				(void)shutdown(fd, SHUT_RDWR);
			i++;
			continue;
		}
		bufferevent_decref(m->bevs[i]);		/* frees, closes */
		m->conns--;
		m->bevs[i] = m->bevs[m->conns];
		m->born[i] = m->born[m->conns];
	}
	if (was == VCL_METRICS_MAX_CONNS && m->conns < was && m->bound != NULL)
		evconnlistener_enable(evhttp_bound_socket_get_listener(m->bound));
}

/* Once a second while connections are open: sweep. */
static void
vcl_metrics_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_metrics	*m = arg;
	struct timeval		 tv = { 1, 0 };

	vcl_metrics_sweep(m);
	if (m->conns > 0)
		evtimer_add(m->ev_sweep, &tv);
}

/*
 * The bufferevent of a new HTTP connection, counted. At the cap the
 * listener pauses; the kernel's backlog holds what comes meanwhile.
 */
static struct bufferevent *
vcl_metrics_bev_cb(struct event_base *base, void *arg)
{
	struct vcl_server	*srv = arg;
	struct vcl_metrics	*m = &srv->metrics;
	struct bufferevent	*bev;
	struct timeval		 tv = { 1, 0 };

	vcl_metrics_sweep(m);
	if ((bev = bufferevent_socket_new(base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return (NULL);
	if (m->conns < VCL_METRICS_MAX_CONNS) {
		bufferevent_incref(bev);
		m->born[m->conns] = vcl_server_now();
		m->bevs[m->conns++] = bev;
	}
	if (m->conns == VCL_METRICS_MAX_CONNS && m->bound != NULL)
		evconnlistener_disable(evhttp_bound_socket_get_listener(
		    m->bound));
	if (!evtimer_pending(m->ev_sweep, NULL))
		evtimer_add(m->ev_sweep, &tv);
	return (bev);
}

/*
 * Serve /metrics on addr ("HOST:PORT", ":PORT" or "PORT": loopback). Writes
 * the bound port to port_file, if given. Returns 0, or -1 with err set.
 */
int
vcl_metrics_listen(struct vcl_server *srv, const char *addr,
    const char *port_file, char *err, size_t errlen)
{
	struct vcl_metrics	*m = &srv->metrics;
	struct addrinfo		 hints, *res = NULL;
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof ss;
	char			 host[256], port[32], serv[NI_MAXSERV], tmp[4096];
	int			 fd = -1, one = 1, rc = -1, gai;
	FILE			*f;

	m->started = vcl_server_now();
	if (addr == NULL)
		return (0);
	if (strchr(addr, ':') == NULL) {
		snprintf(host, sizeof host, "127.0.0.1");
		snprintf(port, sizeof port, "%s", addr);
	} else if (vcl_io_split_hostport(addr, host, sizeof host, port,
	    sizeof port) != 0 || port[0] == '\0') {
		snprintf(err, errlen, "bad --metrics-listen address: %s "
		    "(want HOST:PORT or PORT)", addr);
		goto out;
	}
	if (host[0] == '\0')
		snprintf(host, sizeof host, "127.0.0.1");
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((gai = getaddrinfo(host, port, &hints, &res)) != 0) {
		snprintf(err, errlen, "--metrics-listen %s: %s", addr,
		    gai_strerror(gai));
		goto out;
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, res->ai_protocol);
	if (fd == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
	    listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		snprintf(err, errlen, "--metrics-listen %s: %s", addr,
		    strerror(errno));
		goto out;
	}
	getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, serv,
	    sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
	if ((m->http = evhttp_new(srv->base)) == NULL) {
		snprintf(err, errlen, "--metrics-listen: out of memory");
		goto out;
	}
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS);	/* parsed, then refused with a 405 */
	evhttp_set_max_headers_size(m->http, VCL_METRICS_MAX_HEADERS);
	evhttp_set_max_body_size(m->http, 1024);
	evhttp_set_timeout(m->http, VCL_METRICS_TIMEOUT_S);
	if ((m->ev_sweep = evtimer_new(srv->base, vcl_metrics_sweep_cb,
	    m)) == NULL) {
		snprintf(err, errlen, "--metrics-listen: out of memory");
		goto out;
	}
	evhttp_set_bevcb(m->http, vcl_metrics_bev_cb, srv);
	evhttp_set_gencb(m->http, vcl_metrics_http_cb, srv);
	if ((m->bound = evhttp_accept_socket_with_handle(m->http, fd)) ==
	    NULL) {
		snprintf(err, errlen, "--metrics-listen %s: cannot serve",
		    addr);
		goto out;
	}
	fd = -1;	/* the listener owns it */
	vcl_log_info("metrics on http://%s:%s/metrics", host, serv);
	if (port_file != NULL) {
		snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
		if ((f = fopen(tmp, "w")) == NULL ||
		    fprintf(f, "%s\n", serv) < 0 || fclose(f) != 0 ||
		    rename(tmp, port_file) != 0) {
			snprintf(err, errlen, "%s: %s", port_file,
			    strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	if (res != NULL)
		freeaddrinfo(res);
	if (fd != -1)
		close(fd);
	if (rc != 0)
		vcl_metrics_close(srv);
	return (rc);
}

/* Stop serving metrics. */
void
vcl_metrics_close(struct vcl_server *srv)
{
	struct vcl_metrics	*m = &srv->metrics;

	int			 i;

	m->bound = NULL;
	if (m->http != NULL)
		evhttp_free(m->http);	/* frees its connections */
	m->http = NULL;
	for (i = 0; i < m->conns; i++)
		bufferevent_decref(m->bevs[i]);
	m->conns = 0;
	if (m->ev_sweep != NULL)
		event_free(m->ev_sweep);
	m->ev_sweep = NULL;
}
