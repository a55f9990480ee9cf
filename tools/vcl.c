/*
 * vcl.c - the vcl command: what a person (or a script, with --json) sees
 * of the cluster. "vcl nodes" lists the configured nodes, reachable or not
 * and why; "vcl stats [NODE]" shows a server's counters; "vcl ping NODE"
 * measures a link's round trip and bandwidth. Speaks the wire protocol
 * like libvcl: the same node list (vcl_nodes.c), token and TLS settings.
 */
#include <sys/socket.h>

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
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
#include "vcl_nodes.h"
#include "vcl_opt.h"
#include "vcl_tls.h"

#define VCL_TOOL_TIMEOUT	5000		/* ms, --timeout */
#define VCL_TOOL_MAX_DEVICES	1024

/* One connection to a server, and why it failed if it did. */
struct vcl_tool_conn {
	const char		*addr;
	int			 fd;
	struct vcl_link		 link;
	uint64_t		 seq;
	Vcl__ToClient		*welcome;	/* the Welcome's message */
	const char		*cause;		/* refused, timeout, auth, ... */
	char			 why[512];
};

static int		 opt_json;
static int		 opt_timeout = VCL_TOOL_TIMEOUT;
static struct vcl_nodes	 nodes;
static SSL_CTX		*tls_ctx;

static const struct vcl_frame_limits tool_limits = {
	VCL_FRAME_DEFAULT_MAX_MSG, VCL_FRAME_DEFAULT_MAX_BULK
};

static const char usage[] =
"usage: vcl [--json] [--timeout MS] COMMAND [ARGS]\n"
"See the VCL nodes this user is configured for (VCL_NODES,\n"
"SLURM_JOB_NODELIST, ~/.config/vcl/nodes.conf or /etc/vcl/nodes.conf;\n"
"port VCL_PORT or the file's; token from VCL_TOKEN_FILE or the file's\n"
"token-file; TLS from VCL_TLS=1 and\n"
"VCL_TLS_CA/VCL_TLS_CERT/VCL_TLS_KEY, as for libvcl).\n"
"\n"
"  nodes                 every configured node: reachable or why not,\n"
"                        round trip, server version, devices, sessions,\n"
"                        and the transport between each pair of nodes,\n"
"                        with why (the link's own where it is open)\n"
"  stats [NODE]          a server's counters (default: every node)\n"
"  ping NODE             round trip (--count small requests) and bandwidth\n"
"                        (a --size MiB buffer written and read back)\n"
"\n"
"NODE is HOST:PORT, or the index or address of a configured node.\n"
"  --json                machine-readable output\n"
"  --timeout MS          connect and answer timeout (default 5000)\n"
"  --count N             ping: round trips (default 20)\n"
"  --size MIB            ping: buffer size, 0 for none (default 16)\n"
"Exit status: 0 all answered, 1 a node failed, 2 usage.\n";

/* Milliseconds on the monotonic clock, with fractions. */
static double
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6);
}

/* Record why a connection failed: a short cause and a sentence. */
static void
conn_fail(struct vcl_tool_conn *c, const char *cause, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void
conn_fail(struct vcl_tool_conn *c, const char *cause, const char *fmt, ...)
{
	va_list	ap;

	c->cause = cause;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
}

/* The cause of a failed read or write, from errno. */
static void
conn_io_fail(struct vcl_tool_conn *c, const char *what)
{
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT)
		conn_fail(c, "timeout", "no answer within %d ms %s",
		    opt_timeout, what);
	else if (errno == 0)
		conn_fail(c, "closed", "connection closed %s", what);
	else
		conn_fail(c, "io", "%s %s", strerror(errno), what);
}

/* Read one frame: its message, and its bulk into dst when it fits. */
static Vcl__ToClient *
conn_read(struct vcl_tool_conn *c, void *dst, uint64_t dst_len,
    uint64_t *bulk_len)
{
	struct vcl_frame_hdr	 hdr;
	uint8_t			 head[VCL_FRAME_HDR_LEN], *buf = NULL, skip[8192];
	Vcl__ToClient		*tc = NULL;
	const char		*why;
	uint64_t		 left;

	errno = 0;
	if (vcl_link_read_full(&c->link, head, sizeof head) != 0) {
		conn_io_fail(c, "waiting for the server");
		goto out;
	}
	if (vcl_frame_decode(head, &tool_limits, &hdr, &why) != 0) {
		conn_fail(c, "protocol", "bad frame: %s", why);
		goto out;
	}
	if ((buf = malloc(hdr.msg_len + 1)) == NULL) {
		conn_fail(c, "memory", "out of memory");
		goto out;
	}
	errno = 0;
	if (vcl_link_read_full(&c->link, buf, hdr.msg_len) != 0) {
		conn_io_fail(c, "reading a message");
		goto out;
	}
	if ((tc = vcl__to_client__unpack(NULL, hdr.msg_len, buf)) == NULL) {
		conn_fail(c, "protocol", "malformed message from the server");
		goto out;
	}
	if (bulk_len != NULL)
		*bulk_len = hdr.bulk_len;
	if (hdr.bulk_len > 0 && dst != NULL && hdr.bulk_len == dst_len) {
		errno = 0;
		if (vcl_link_read_full(&c->link, dst, dst_len) != 0)
			goto bad;
	} else {
		for (left = hdr.bulk_len; left > 0; ) {
			size_t	k = left < sizeof skip ? left : sizeof skip;

			errno = 0;
			if (vcl_link_read_full(&c->link, skip, k) != 0)
				goto bad;
			left -= k;
		}
	}
	goto out;
bad:
	conn_io_fail(c, "reading bulk bytes");
	vcl__to_client__free_unpacked(tc, NULL);
	tc = NULL;
out:
	free(buf);
	return (tc);
}

/* Send one request with optional bulk bytes. Returns 0 or -1. */
static int
conn_send(struct vcl_tool_conn *c, Vcl__Request *req, const void *bulk,
    uint64_t bulk_len)
{
	struct vcl_buf	b = { NULL, 0, 0 };
	struct iovec	iov[2];
	int		rc = -1;

	req->seq = ++c->seq;
	if (vcl_buf_pack(&b, &req->base, bulk_len) != 0) {
		conn_fail(c, "memory", "out of memory");
		goto out;
	}
	iov[0].iov_base = b.data;
	iov[0].iov_len = b.len;
	iov[1].iov_base = (void *)bulk;
	iov[1].iov_len = bulk_len;
	errno = 0;
	if (vcl_link_writev_full(&c->link, iov, bulk_len > 0 ? 2 : 1) != 0) {
		conn_io_fail(c, "sending");
		goto out;
	}
	rc = 0;
out:
	vcl_buf_free(&b);
	return (rc);
}

/*
 * A synchronous call: send, then read frames (notifications are dropped)
 * until the reply to it. Returns the ToClient holding it, or NULL.
 */
static Vcl__ToClient *
conn_call(struct vcl_tool_conn *c, Vcl__Request *req, const void *bulk,
    uint64_t bulk_len, void *dst, uint64_t dst_len)
{
	Vcl__ToClient	*tc;
	uint64_t	 got;

	if (conn_send(c, req, bulk, bulk_len) != 0)
		return (NULL);
	for (;;) {
		if ((tc = conn_read(c, dst, dst_len, &got)) == NULL)
			return (NULL);
		if (tc->reply != NULL && tc->reply->seq == req->seq)
			break;
		if (tc->reply != NULL && tc->reply->status != CL_SUCCESS) {
			/* An earlier asynchronous request failed. */
			conn_fail(c, "request", "request %llu failed: %d%s%s",
			    (unsigned long long)tc->reply->seq,
			    tc->reply->status, tc->reply->message ? ": " : "",
			    tc->reply->message ? tc->reply->message : "");
			vcl__to_client__free_unpacked(tc, NULL);
			return (NULL);
		}
		vcl__to_client__free_unpacked(tc, NULL);
	}
	if (dst != NULL && tc->reply->status == CL_SUCCESS && got != dst_len) {
		conn_fail(c, "protocol", "reply bytes do not match the request");
		vcl__to_client__free_unpacked(tc, NULL);
		return (NULL);
	}
	return (tc);
}

/* The TLS context from the environment, as libvcl reads it; 0 or -1. */
static int
tls_setup(void)
{
	struct vcl_tls_conf	 tc;
	const char		*e;
	char			 err[1024];

	if ((e = getenv("VCL_TLS")) == NULL || strcmp(e, "1") != 0)
		return (0);
	tc.ca = getenv("VCL_TLS_CA");
	tc.cert = getenv("VCL_TLS_CERT");
	tc.key = getenv("VCL_TLS_KEY");
	if (tc.cert != NULL && tc.key == NULL)
		tc.key = tc.cert;
	tc.verify = (e = getenv("VCL_TLS_INSECURE")) == NULL ||
	    strcmp(e, "1") != 0;
	if ((tls_ctx = vcl_tls_ctx_new(0, &tc, err, sizeof err)) == NULL) {
		fprintf(stderr, "vcl: VCL_TLS: %s\n", err);
		return (-1);
	}
	return (0);
}

/*
 * Connect to addr and shake hands as libvcl does (vcl_conn.c): greeting,
 * version check, token proof if asked, Welcome. Returns 0, or -1 with the
 * cause in c.
 */
static int
conn_open(struct vcl_tool_conn *c, const char *addr)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__Hello		 hello = VCL__HELLO__INIT;
	Vcl__ToClient		*tc = NULL;
	static char		 client_name[] = "vcl tool";
	struct vcl_token	 tok;
	uint8_t			 proof[VCL_AUTH_PROOF_LEN];
	char			 host[256], port[32], err[512];
	int			 rc = -1, e;

	memset(c, 0, sizeof *c);
	c->addr = addr;
	c->fd = -1;
	vcl_link_init(&c->link, -1);
	if (vcl_io_split_hostport(addr, host, sizeof host, port,
	    sizeof port) != 0) {
		conn_fail(c, "address", "bad node address (want HOST:PORT)");
		goto out;
	}
	if (port[0] == '\0')
		snprintf(port, sizeof port, "%s", nodes.port);
	errno = 0;
	if ((c->fd = vcl_io_connect(host, port, opt_timeout, err,
	    sizeof err)) == -1) {
		e = errno;
		conn_fail(c, e == ECONNREFUSED ? "refused" : e == ETIMEDOUT ?
		    "timeout" : e == EHOSTUNREACH || e == ENETUNREACH ?
		    "unreachable" : e == 0 ? "resolve" : "connect", "%s%s", err,
		    e == ECONNREFUSED ? " (no server listening)" : "");
		goto out;
	}
	vcl_io_timeout(c->fd, opt_timeout);
	vcl_link_init(&c->link, c->fd);
	vcl_link_timeout(&c->link, opt_timeout);
	if (tls_ctx != NULL && (vcl_link_tls(&c->link, tls_ctx, 0, host,
	    c->link.err, sizeof c->link.err) != 0 ||
	    vcl_link_handshake_full(&c->link) != 0)) {
		conn_fail(c, "tls", "TLS handshake failed: %s", c->link.err);
		goto out;
	}
	if ((tc = conn_read(c, NULL, 0, NULL)) == NULL) {
		if (tls_ctx == NULL)
			snprintf(c->why + strlen(c->why), sizeof c->why -
			    strlen(c->why), " (if the server uses TLS, set "
			    "VCL_TLS=1)");
		goto out;
	}
	if (tc->greeting == NULL) {
		conn_fail(c, "protocol", "no greeting");
		goto out;
	}
	if (tc->greeting->version != VCL_PROTOCOL_VERSION) {
		conn_fail(c, "version", "the server speaks VCL protocol %u, "
		    "this tool %u", tc->greeting->version,
		    VCL_PROTOCOL_VERSION);
		goto out;
	}
	hello.version = VCL_PROTOCOL_VERSION;
	hello.client_name = client_name;
	if (tc->greeting->auth_required) {
		if (nodes.token_path == NULL) {
			conn_fail(c, "auth", "the server requires a token: set "
			    "VCL_TOKEN_FILE or token-file in nodes.conf");
			goto out;
		}
		if (vcl_auth_load(nodes.token_path, &tok, err,
		    sizeof err) != 0) {
			conn_fail(c, "auth", "%s", err);
			goto out;
		}
		vcl_auth_prove(&tok, tc->greeting->nonce.data,
		    tc->greeting->nonce.len, proof);
		memset(&tok, 0, sizeof tok);
		hello.has_proof = 1;
		hello.proof.data = proof;
		hello.proof.len = sizeof proof;
	}
	vcl__to_client__free_unpacked(tc, NULL);
	req.call_case = VCL__REQUEST__CALL_HELLO;
	req.hello = &hello;
	if ((tc = conn_call(c, &req, NULL, 0, NULL, 0)) == NULL) {
		if (strcmp(c->cause, "closed") == 0 && hello.has_proof)
			conn_fail(c, "auth", "the server closed the connection "
			    "after the token proof (wrong token?)");
		goto out;
	}
	if (tc->reply->status != CL_SUCCESS || tc->reply->welcome == NULL) {
		const char	*m = tc->reply->message;

		conn_fail(c, m != NULL && strstr(m, "authentication") != NULL ?
		    "auth" : "refused-session", "the server refused the "
		    "session: %s", m != NULL ? m : "no reason");
		goto out;
	}
	if (tc->reply->welcome->n_devices > VCL_TOOL_MAX_DEVICES) {
		conn_fail(c, "protocol", "the server announces %zu devices",
		    tc->reply->welcome->n_devices);
		goto out;
	}
	c->welcome = tc;
	tc = NULL;
	rc = 0;
out:
	if (tc != NULL)
		vcl__to_client__free_unpacked(tc, NULL);
	return (rc);
}

/* Close a connection. */
static void
conn_close(struct vcl_tool_conn *c)
{
	if (c->welcome != NULL)
		vcl__to_client__free_unpacked(c->welcome, NULL);
	c->welcome = NULL;
	vcl_link_close(&c->link);
	c->fd = -1;
}

/* Ask for the server's Stats; the ToClient holding them, or NULL. */
static Vcl__ToClient *
conn_stats(struct vcl_tool_conn *c, double *rtt_ms)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__Stats	 st = VCL__STATS__INIT;
	Vcl__ToClient	*tc;
	double		 t0 = now_ms();

	req.call_case = VCL__REQUEST__CALL_STATS;
	req.stats = &st;
	if ((tc = conn_call(c, &req, NULL, 0, NULL, 0)) == NULL)
		return (NULL);
	if (rtt_ms != NULL)
		*rtt_ms = now_ms() - t0;
	if (tc->reply->status != CL_SUCCESS || tc->reply->stats == NULL) {
		conn_fail(c, "protocol", "Stats failed: %d",
		    tc->reply->status);
		vcl__to_client__free_unpacked(tc, NULL);
		return (NULL);
	}
	return (tc);
}

/* Print s as a JSON string. */
static void
json_str(const char *s)
{
	const unsigned char	*p = (const unsigned char *)(s ? s : "");

	putchar('"');
	for (; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

/*
 * A server's string made safe for a terminal: control bytes become '?'
 * (a hostile server could otherwise send escape sequences). One of four
 * rotating buffers, so a printf may take several.
 */
static const char *
safe(const char *s)
{
	static char	buf[4][256];
	static int	k;
	char		*o = buf[k++ & 3];
	size_t		 i;

	for (i = 0; s != NULL && s[i] != '\0' && i < sizeof buf[0] - 1; i++)
		o[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	o[i] = '\0';
	return (o);
}

/* A device's info value of param, or NULL. */
static const ProtobufCBinaryData *
dev_info(const Vcl__DeviceInfo *d, uint32_t param)
{
	size_t	k;

	for (k = 0; d != NULL && k < d->n_info; k++)
		if (d->info[k]->param == param && d->info[k]->has_value)
			return (&d->info[k]->value);
	return (NULL);
}

/* A device's name, NUL-terminated within its value (checked), or "?". */
static void
dev_name(const Vcl__DeviceInfo *d, char *out, size_t len)
{
	const ProtobufCBinaryData	*v = dev_info(d, CL_DEVICE_NAME);
	size_t				 n;

	snprintf(out, len, "?");
	if (v == NULL || v->len == 0)
		return;
	n = strnlen((const char *)v->data, v->len);
	snprintf(out, len, "%.*s", (int)n, (const char *)v->data);
}

/* A device's type as a word. */
static const char *
dev_type(const Vcl__DeviceInfo *d)
{
	const ProtobufCBinaryData	*v = dev_info(d, CL_DEVICE_TYPE);
	cl_device_type			 t;

	if (v == NULL || v->len != sizeof t)
		return ("?");
	memcpy(&t, v->data, sizeof t);
	if (t & CL_DEVICE_TYPE_GPU)
		return ("GPU");
	if (t & CL_DEVICE_TYPE_ACCELERATOR)
		return ("accelerator");
	if (t & CL_DEVICE_TYPE_CPU)
		return ("CPU");
	return ("other");
}

/* The wire name of an opcode ("write_buffer"), or NULL. */
static const char *
op_name(uint32_t op)
{
	const ProtobufCFieldDescriptor	*f;

	f = protobuf_c_message_descriptor_get_field(&vcl__request__descriptor,
	    op);
	return (f != NULL ? f->name : NULL);
}

/* Whether name is in the list. */
static int
in_list(char **list, size_t n, const char *name)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return (1);
	return (0);
}

/*
 * The bulk transport of the link from the server of a to the server of
 * b (at addr_b), with why: the link's own, where a has one open; else
 * the choice b would make: the first of the transports it offers that a
 * offers too, one that either offers only on one host only where both
 * name the same host (the seam's choice per pair; an RDMA pair of hosts
 * shows only once its link is open), else tcp.
 */
static const char *
pair_transport(const Vcl__StatsResult *a, const Vcl__StatsResult *b,
    const char *addr_b, char *why, size_t whylen)
{
	const char	*held = NULL;
	size_t		 i;
	int		 same, local;

	for (i = 0; i < a->n_peer_links; i++)
		if (strcmp(a->peer_links[i]->address, addr_b) == 0 &&
		    a->peer_links[i]->ready) {
			snprintf(why, whylen, "%s", a->peer_links[i]->why !=
			    NULL ? a->peer_links[i]->why : "link open");
			return (a->peer_links[i]->transport);
		}
	same = a->host != NULL && b->host != NULL && strcmp(a->host,
	    b->host) == 0;
	for (i = 0; i < b->n_transports; i++) {
		if (strcmp(b->transports[i], "tcp") == 0 ||
		    !in_list(a->transports, a->n_transports, b->transports[i]))
			continue;
		local = in_list(a->transports_local, a->n_transports_local,
		    b->transports[i]) || in_list(b->transports_local,
		    b->n_transports_local, b->transports[i]);
		if (local && !same) {
			held = b->transports[i];
			continue;
		}
		snprintf(why, whylen, "%s, no link yet", local ? "same host" :
		    "offered by both ends");
		return (b->transports[i]);
	}
	if (held != NULL)
		snprintf(why, whylen, "%s only on one host or with RDMA, no "
		    "link yet", held);
	else
		snprintf(why, whylen, "no other transport offered by both "
		    "ends, no link yet");
	return ("tcp");
}

/* What one node said, for "vcl nodes". */
struct node_seen {
	struct vcl_tool_conn	 c;
	Vcl__ToClient		*stats;
	double			 rtt_ms;
	int			 up;
};

/* vcl nodes: every configured node, up or why not. */
static int
cmd_nodes(void)
{
	struct node_seen	*ns;
	const Vcl__Welcome	*w;
	const Vcl__StatsResult	*st;
	const char		*tp;
	char			 name[256], why[160];
	int			 i, j, down = 0, first;
	size_t			 d;

	if ((ns = calloc(nodes.n ? nodes.n : 1, sizeof *ns)) == NULL) {
		fprintf(stderr, "vcl: out of memory\n");
		return (1);
	}
	for (i = 0; i < nodes.n; i++) {
		if (conn_open(&ns[i].c, nodes.addr[i]) == 0 &&
		    (ns[i].stats = conn_stats(&ns[i].c, &ns[i].rtt_ms)) != NULL)
			ns[i].up = 1;
		down += !ns[i].up;
	}
	if (opt_json) {
		printf("{\"source\": ");
		json_str(nodes.source);
		printf(", \"nodes\": [");
		for (i = 0; i < nodes.n; i++) {
			printf("%s\n  {\"address\": ", i ? "," : "");
			json_str(nodes.addr[i]);
			printf(", \"reachable\": %s", ns[i].up ? "true" :
			    "false");
			if (!ns[i].up) {
				printf(", \"cause\": ");
				json_str(ns[i].c.cause);
				printf(", \"error\": ");
				json_str(ns[i].c.why);
				printf("}");
				continue;
			}
			w = ns[i].c.welcome->reply->welcome;
			st = ns[i].stats->reply->stats;
			printf(", \"name\": ");
			json_str(w->node_name);
			printf(", \"rtt_ms\": %.3f, \"version\": ",
			    ns[i].rtt_ms);
			json_str(st->version != NULL ? st->version : "");
			printf(", \"transport\": ");
			json_str(st->transport != NULL ? st->transport : "tcp");
			printf(", \"sessions\": %llu, \"devices\": [",
			    (unsigned long long)(st->sessions > 0 ?
			    st->sessions - 1 : 0));
			for (d = 0; d < w->n_devices; d++) {
				dev_name(w->devices[d], name, sizeof name);
				printf("%s{\"index\": %zu, \"name\": ",
				    d ? ", " : "", d);
				json_str(name);
				printf(", \"type\": ");
				json_str(dev_type(w->devices[d]));
				printf("}");
			}
			printf("]}");
		}
		printf("\n ], \"links\": [");
		first = 1;
		for (i = 0; i < nodes.n; i++)
			for (j = 0; j < nodes.n; j++) {
				if (i == j || !ns[i].up || !ns[j].up)
					continue;
				printf("%s\n  {\"from\": ", first ? "" : ",");
				json_str(nodes.addr[i]);
				printf(", \"to\": ");
				json_str(nodes.addr[j]);
				printf(", \"transport\": ");
				json_str(pair_transport(ns[i].stats->reply->stats,
				    ns[j].stats->reply->stats, nodes.addr[j], why,
				    sizeof why));
				printf(", \"why\": ");
				json_str(why);
				printf("}");
				first = 0;
			}
		printf("\n ]}\n");
	} else {
		printf("%d node(s) from %s\n", nodes.n, nodes.source);
		for (i = 0; i < nodes.n; i++) {
			if (!ns[i].up) {
				printf("%s: DOWN (%s): %s\n", nodes.addr[i],
				    ns[i].c.cause, safe(ns[i].c.why));
				continue;
			}
			w = ns[i].c.welcome->reply->welcome;
			st = ns[i].stats->reply->stats;
			printf("%s: up, name %s, round trip %.3f ms, server "
			    "%s over %s, %zu device(s), %llu other "
			    "session(s)\n", nodes.addr[i], safe(w->node_name),
			    ns[i].rtt_ms, safe(st->version),
			    st->control != NULL ? safe(st->control) : "tcp",
			    w->n_devices, (unsigned long long)(st->sessions >
			    0 ? st->sessions - 1 : 0));
			for (d = 0; d < w->n_devices; d++) {
				dev_name(w->devices[d], name, sizeof name);
				printf("  device %zu: %s (%s)\n", d, safe(name),
				    dev_type(w->devices[d]));
			}
		}
		for (i = 0; i < nodes.n; i++)
			for (j = 0; j < nodes.n; j++) {
				if (i == j || !ns[i].up || !ns[j].up)
					continue;
				tp = pair_transport(ns[i].stats->reply->stats,
				    ns[j].stats->reply->stats, nodes.addr[j], why,
				    sizeof why);
				printf("link %s -> %s: %s (%s)\n",
				    nodes.addr[i], nodes.addr[j], safe(tp),
				    safe(why));
			}
	}
	for (i = 0; i < nodes.n; i++) {
		if (ns[i].stats != NULL)
			vcl__to_client__free_unpacked(ns[i].stats, NULL);
		conn_close(&ns[i].c);
	}
	free(ns);
	return (down > 0 ? 1 : 0);
}

/* One counter line, or one JSON member. */
static void
put_u64(const char *name, uint64_t v, int *first)
{
	if (opt_json) {
		printf("%s\"%s\": %llu", *first ? "" : ", ", name,
		    (unsigned long long)v);
		*first = 0;
	} else
		printf("  %-22s %llu\n", name, (unsigned long long)v);
}

/*
 * Every number the server sent in its Stats, in the protocol's order and
 * by the protocol's names (vcl.proto is the one list of them): required
 * ones, and optional ones it set. Those of the asking session (session_*)
 * are this tool's own, so left out.
 */
static void
put_counters(const Vcl__StatsResult *st, int *first)
{
	const ProtobufCMessageDescriptor	*d = st->base.descriptor;
	const ProtobufCFieldDescriptor		*f;
	const char				*m = (const char *)st;
	unsigned				 i;
	uint64_t				 v;

	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if ((f->type != PROTOBUF_C_TYPE_UINT64 &&
		    f->type != PROTOBUF_C_TYPE_UINT32) ||
		    f->label == PROTOBUF_C_LABEL_REPEATED ||
		    strncmp(f->name, "session_", 8) == 0)
			continue;
		if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
		    !*(const protobuf_c_boolean *)(m + f->quantifier_offset))
			continue;
		if (f->type == PROTOBUF_C_TYPE_UINT64)
			memcpy(&v, m + f->offset, sizeof v);
		else
			v = *(const uint32_t *)(m + f->offset);
		put_u64(f->name, v, first);
	}
}

/* Print one server's counters. */
static void
print_stats(const char *addr, const Vcl__Welcome *w,
    const Vcl__StatsResult *st)
{
	const char	*op;
	int		 first = 1;
	size_t		 i;

	if (opt_json) {
		printf("{\"address\": ");
		json_str(addr);
		printf(", \"reachable\": true, \"name\": ");
		json_str(w->node_name);
		printf(", \"version\": ");
		json_str(st->version != NULL ? st->version : "");
		printf(", \"transport\": ");
		json_str(st->transport != NULL ? st->transport : "tcp");
		printf(", \"counters\": {");
	} else
		printf("%s (%s), server %s over %s:\n", addr,
		    safe(w->node_name), safe(st->version),
		    st->transport != NULL ? safe(st->transport) : "tcp");
	put_counters(st, &first);
	if (opt_json)
		printf("}, \"requests\": {");
	else
		printf("  requests per opcode (count, mean handler time):\n");
	first = 1;
	for (i = 0; i < st->n_ops; i++) {
		if ((op = op_name(st->ops[i]->opcode)) == NULL)
			continue;
		if (opt_json) {
			printf("%s\"%s\": {\"count\": %llu, \"usec\": %llu}",
			    first ? "" : ", ", op,
			    (unsigned long long)st->ops[i]->requests,
			    (unsigned long long)st->ops[i]->usec);
			first = 0;
		} else
			printf("    %-22s %10llu  %10.1f us\n", op,
			    (unsigned long long)st->ops[i]->requests,
			    st->ops[i]->requests > 0 ?
			    (double)st->ops[i]->usec / st->ops[i]->requests :
			    0.0);
	}
	if (opt_json) {
		printf("}, \"peer_links\": [");
		for (i = 0; i < st->n_peer_links; i++) {
			printf("%s{\"address\": ", i ? ", " : "");
			json_str(st->peer_links[i]->address);
			printf(", \"transport\": ");
			json_str(st->peer_links[i]->transport);
			printf(", \"why\": ");
			json_str(st->peer_links[i]->why);
			printf(", \"ready\": %s}", st->peer_links[i]->ready ?
			    "true" : "false");
		}
		printf("]}");
		return;
	}
	for (i = 0; i < st->n_peer_links; i++)
		printf("  peer link %s: %s%s%s%s\n",
		    safe(st->peer_links[i]->address),
		    safe(st->peer_links[i]->transport),
		    st->peer_links[i]->why != NULL ? " (" : "",
		    st->peer_links[i]->why != NULL ?
		    safe(st->peer_links[i]->why) : "",
		    st->peer_links[i]->why != NULL ? ")" :
		    st->peer_links[i]->ready ? "" : ", not ready");
}

/* The address NODE names: an index or address of the list, or itself. */
static const char *
node_addr(const char *arg)
{
	char	*end;
	long	 i;
	int	 k;

	i = strtol(arg, &end, 10);
	if (*arg != '\0' && *end == '\0' && i >= 0 && i < nodes.n)
		return (nodes.addr[i]);
	for (k = 0; k < nodes.n; k++)
		if (strcmp(nodes.addr[k], arg) == 0)
			return (nodes.addr[k]);
	return (arg);
}

/* Print a node's failure: stderr for people, an object for scripts. */
static void
print_down(const struct vcl_tool_conn *c)
{
	if (opt_json) {
		printf("{\"address\": ");
		json_str(c->addr);
		printf(", \"reachable\": false, \"cause\": ");
		json_str(c->cause);
		printf(", \"error\": ");
		json_str(c->why);
		printf("}");
	} else
		fprintf(stderr, "vcl: node %s: %s: %s\n", c->addr, c->cause,
		    safe(c->why));
}

/* vcl stats [NODE]: the counters of one node, or of every node. */
static int
cmd_stats(const char *node)
{
	struct vcl_tool_conn	 c;
	Vcl__ToClient		*tc;
	const char		*addr;
	int			 i, n, bad = 0;

	n = node != NULL ? 1 : nodes.n;
	if (opt_json)
		printf("[");
	for (i = 0; i < n; i++) {
		addr = node != NULL ? node_addr(node) : nodes.addr[i];
		if (opt_json && i > 0)
			printf(",\n");
		if (conn_open(&c, addr) != 0 ||
		    (tc = conn_stats(&c, NULL)) == NULL) {
			print_down(&c);
			bad++;
		} else {
			print_stats(addr, c.welcome->reply->welcome,
			    tc->reply->stats);
			vcl__to_client__free_unpacked(tc, NULL);
		}
		conn_close(&c);
	}
	if (opt_json)
		printf("]\n");
	return (bad > 0 ? 1 : 0);
}

/* A call that must succeed; 0, or -1 with c's cause set. */
static int
conn_ok(struct vcl_tool_conn *c, Vcl__Request *req, const void *bulk,
    uint64_t bulk_len, void *dst, uint64_t dst_len)
{
	Vcl__ToClient	*tc;
	int		 rc = 0;

	if ((tc = conn_call(c, req, bulk, bulk_len, dst, dst_len)) == NULL)
		return (-1);
	if (tc->reply->status != CL_SUCCESS) {
		conn_fail(c, "request", "%s failed: %d%s%s",
		    op_name(req->call_case), tc->reply->status,
		    tc->reply->message ? ": " : "",
		    tc->reply->message ? tc->reply->message : "");
		rc = -1;
	}
	vcl__to_client__free_unpacked(tc, NULL);
	return (rc);
}

/*
 * Bandwidth: a buffer of size bytes on the node's first device, written
 * (WriteBuffer, then a Finish that answers once it is done) and read back
 * (ReadBuffer), each timed. Returns 0 or -1.
 */
static int
ping_bandwidth(struct vcl_tool_conn *c, uint64_t size, double *w_ms,
    double *r_ms)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateContext	 cc = VCL__CREATE_CONTEXT__INIT;
	Vcl__CreateQueue	 cq = VCL__CREATE_QUEUE__INIT;
	Vcl__CreateBuffer	 cb = VCL__CREATE_BUFFER__INIT;
	Vcl__WriteBuffer	 wb = VCL__WRITE_BUFFER__INIT;
	Vcl__ReadBuffer		 rb = VCL__READ_BUFFER__INIT;
	Vcl__Finish		 fi = VCL__FINISH__INIT;
	Vcl__Enqueue		 q = VCL__ENQUEUE__INIT;
	uint32_t		 dev = 0;
	uint8_t			*buf = NULL, *back = NULL;
	double			 t0;
	int			 rc = -1;
	uint64_t		 i;

	if ((buf = malloc(size)) == NULL || (back = malloc(size)) == NULL) {
		conn_fail(c, "memory", "out of memory for %llu bytes",
		    (unsigned long long)size);
		goto out;
	}
	for (i = 0; i < size; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	cc.id = 1;
	cc.n_devices = 1;
	cc.devices = &dev;
	req.call_case = VCL__REQUEST__CALL_CREATE_CONTEXT;
	req.create_context = &cc;
	/* Creates answer only when they fail: the Finish below tells. */
	if (conn_send(c, &req, NULL, 0) != 0)
		goto out;
	cq.id = 2;
	cq.context = 1;
	req.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	req.create_queue = &cq;
	if (conn_send(c, &req, NULL, 0) != 0)
		goto out;
	cb.id = 3;
	cb.context = 1;
	cb.flags = CL_MEM_READ_WRITE;
	cb.size = size;
	req.call_case = VCL__REQUEST__CALL_CREATE_BUFFER;
	req.create_buffer = &cb;
	if (conn_send(c, &req, NULL, 0) != 0)
		goto out;
	q.queue = 2;
	wb.q = &q;
	wb.mem = 3;
	wb.size = size;
	fi.queue = 2;
	req.call_case = VCL__REQUEST__CALL_FINISH;
	req.finish = &fi;
	if (conn_ok(c, &req, NULL, 0, NULL, 0) != 0)
		goto out;
	t0 = now_ms();
	req.call_case = VCL__REQUEST__CALL_WRITE_BUFFER;
	req.write_buffer = &wb;
	if (conn_send(c, &req, buf, size) != 0)
		goto out;
	req.call_case = VCL__REQUEST__CALL_FINISH;
	req.finish = &fi;
	if (conn_ok(c, &req, NULL, 0, NULL, 0) != 0)
		goto out;
	*w_ms = now_ms() - t0;
	rb.q = &q;
	rb.mem = 3;
	rb.size = size;
	t0 = now_ms();
	req.call_case = VCL__REQUEST__CALL_READ_BUFFER;
	req.read_buffer = &rb;
	if (conn_ok(c, &req, NULL, 0, back, size) != 0)
		goto out;
	*r_ms = now_ms() - t0;
	if (memcmp(buf, back, size) != 0) {
		conn_fail(c, "data", "the bytes read back differ from those "
		    "written");
		goto out;
	}
	rc = 0;
out:
	free(buf);
	free(back);
	return (rc);
}

/* vcl ping NODE: round trips and bandwidth of one link. */
static int
cmd_ping(const char *node, int count, uint64_t size)
{
	struct vcl_tool_conn	 c;
	Vcl__ToClient		*tc;
	double			 rtt, min = 0, max = 0, sum = 0, t0, connect_ms;
	double			 w_ms = 0, r_ms = 0;
	int			 i, rc = 1;

	t0 = now_ms();
	if (conn_open(&c, node_addr(node)) != 0)
		goto fail;
	connect_ms = now_ms() - t0;
	for (i = 0; i < count; i++) {
		if ((tc = conn_stats(&c, &rtt)) == NULL)
			goto fail;
		vcl__to_client__free_unpacked(tc, NULL);
		sum += rtt;
		if (i == 0 || rtt < min)
			min = rtt;
		if (i == 0 || rtt > max)
			max = rtt;
	}
	if (size > 0 && ping_bandwidth(&c, size, &w_ms, &r_ms) != 0)
		goto fail;
	if (opt_json) {
		printf("{\"address\": ");
		json_str(c.addr);
		printf(", \"reachable\": true, \"name\": ");
		json_str(c.welcome->reply->welcome->node_name);
		printf(", \"connect_ms\": %.3f, \"count\": %d, \"rtt_min_ms\": "
		    "%.3f, \"rtt_avg_ms\": %.3f, \"rtt_max_ms\": %.3f, "
		    "\"bytes\": %llu", connect_ms, count, min,
		    count ? sum / count : 0.0, max, (unsigned long long)size);
		if (size > 0)
			printf(", \"write_ms\": %.3f, \"read_ms\": %.3f, "
			    "\"write_MBps\": %.1f, \"read_MBps\": %.1f", w_ms,
			    r_ms, size / 1e3 / w_ms, size / 1e3 / r_ms);
		printf("}\n");
	} else {
		printf("%s (%s): connect and handshake %.3f ms\n", c.addr,
		    safe(c.welcome->reply->welcome->node_name), connect_ms);
		if (count > 0)
			printf("  %d round trips: min %.3f ms, avg %.3f ms, "
			    "max %.3f ms\n", count, min, sum / count, max);
		if (size > 0)
			printf("  %.1f MiB: write %.3f ms (%.1f MB/s), read "
			    "%.3f ms (%.1f MB/s)\n", size / 1048576.0, w_ms,
			    size / 1e3 / w_ms, r_ms, size / 1e3 / r_ms);
	}
	rc = 0;
	goto out;
fail:
	print_down(&c);
	if (opt_json)
		printf("\n");
out:
	conn_close(&c);
	return (rc);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "timeout",	required_argument,	NULL, 't' },
		{ "count",	required_argument,	NULL, 'n' },
		{ "size",	required_argument,	NULL, 's' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*cmd;
	char		*end;
	long		 v;
	int		 ch, count = 20, rc = 2;
	uint64_t	 size = 16u << 20;

	while ((ch = vcl_opt_next(argc, argv, "jt:n:s:h", longopts,
	    "vcl")) != -1) {
		switch (ch) {
		case 'j':
			opt_json = 1;
			break;
		case 't': case 'n': case 's':
			v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || v < 0 ||
			    v > 1000000 || (ch == 't' && v == 0) ||
			    (ch == 's' && v > 4096)) {
				fprintf(stderr, "vcl: bad number: %s\n",
				    optarg);
				return (2);
			}
			if (ch == 't')
				opt_timeout = (int)v;
			else if (ch == 'n')
				count = (int)v;
			else
				size = (uint64_t)v << 20;
			break;
		case 'h':
			fputs(usage, stdout);
			return (0);
		default:
			fputs(usage, stderr);
			return (2);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		fputs(usage, stderr);
		return (2);
	}
	if (vcl_nodes_load(&nodes) != 0) {
		fprintf(stderr, "vcl: out of memory\n");
		return (1);
	}
	if (nodes.warn[0] != '\0')
		fprintf(stderr, "vcl: %s\n", nodes.warn);
	if (tls_setup() != 0) {
		rc = 1;
		goto out;
	}
	cmd = argv[0];
	if (strcmp(cmd, "nodes") == 0 && argc == 1)
		rc = cmd_nodes();
	else if (strcmp(cmd, "stats") == 0 && argc <= 2)
		rc = cmd_stats(argc == 2 ? argv[1] : NULL);
	else if (strcmp(cmd, "ping") == 0 && argc == 2)
		rc = cmd_ping(argv[1], count, size);
	else
		fputs(usage, stderr);
out:
	if (tls_ctx != NULL)
		vcl_tls_ctx_free(tls_ctx);
	vcl_nodes_free(&nodes);
	return (rc);
}
