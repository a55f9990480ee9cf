/* main.c - vclserver: options, configuration file, start-up. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vcl_bincheck.h"
#include "vcl_enqueue.h"
#include "vcl_log.h"
#include "vcl_op_mem.h"
#include "vcl_opt.h"
#include "vcl_pin.h"
#include "vcl_server.h"
#include "vcl_server_main.h"
#include "vcl_shm.h"
#include "vcl_transports.h"

static struct vcl_options	 opts;
static char			 hostname[256];

static const char usage[] =
"usage: vclserver [options]\n"
"Serve this node's OpenCL devices to VCL clients.\n"
"\n"
"  --listen HOST:PORT      address to listen on (default 127.0.0.1:%d;\n"
"                          port 0 picks a free port)\n"
"  --port-file FILE        write the bound port to FILE once listening\n"
"  --platform IDX|NAME     OpenCL platform to serve: index, or a substring\n"
"                          of its name (default 0)\n"
"  --devices LIST          device indexes of that platform to serve,\n"
"                          comma-separated (default: all)\n"
"  --name NAME             node name shown to clients (default: hostname)\n"
"  --token-file FILE       shared secret clients must prove (chmod 600)\n"
"  --insecure              allow a non-loopback address without a token\n"
"  --tls-cert FILE         serve TLS only, with this certificate chain (PEM);\n"
"                          peer links to other servers use TLS too\n"
"  --tls-key FILE          the certificate's private key (PEM, chmod 600)\n"
"  --tls-ca FILE           CA certificates that sign other servers' (for peer\n"
"                          links) and clients' certificates (default: the\n"
"                          system's CAs)\n"
"  --tls-verify-clients    require clients to present a certificate signed\n"
"                          by --tls-ca\n"
"  --trust-binaries        accept program binaries this server did not make\n"
"                          (a runtime's binary may hold native code: only\n"
"                          where every token holder is trusted); each new\n"
"                          one is made and built in a child process first\n"
"  --binary-check-timeout S  seconds that child may take (default 60)\n"
"  --log-level LEVEL       error, warn, info or debug (default info)\n"
"  --max-frame BYTES       largest protobuf message of a frame (default 64M)\n"
"  --max-bulk BYTES        largest bulk payload of a frame (default 4G)\n"
"  --max-session-bytes N   bytes a session makes the server hold: buffers,\n"
"                          staging, program sources, held requests, ...\n"
"                          (default: the served devices' global memory + 1G)\n"
"  --max-sessions N        concurrent authenticated sessions, and peer links\n"
"                          this server dials (default 64)\n"
"  --max-preauth N         connections not authenticated yet, all sources\n"
"                          together; past it the oldest is dropped\n"
"                          (default 128)\n"
"  --max-preauth-per-addr N  ... from one address; past it new ones are\n"
"                          refused (default 32)\n"
"  --max-auth-failures N   failed token proofs per address a minute before\n"
"                          its connections are refused (default 10; 0: no\n"
"                          limit)\n"
"  --handshake-timeout S   seconds to complete the handshake (default 10)\n"
"  --frame-timeout S       seconds a request frame may take once its first\n"
"                          byte came, plus its bytes received so far at\n"
"                          --min-rate (default 30; 0: none)\n"
"  --min-rate BYTES        slowest rate a large frame may come at, per\n"
"                          second (default 64K)\n"
"  --idle-timeout S        close a session that holds no object and sends\n"
"                          nothing for S seconds (default 0: never)\n"
"  --send-timeout S        close a session whose replies do not move for S\n"
"                          seconds (default 0: never)\n"
"  --max-pinned BYTES      pinned host memory for transfer staging, all\n"
"                          sessions together (default 1G; 0: none); also\n"
"                          bounds shared rings pinned for the runtime, once\n"
"                          per context (VCL_SHM_PIN=0 in the environment:\n"
"                          never pinned)\n"
"  --max-pinned-session BYTES  ... of one session (its staging and rings);\n"
"                          past it its transfers stage in pageable memory\n"
"                          (default: half of --max-pinned)\n"
"  --read-chunk BYTES      send a read of twice this or more in chunks of it,\n"
"                          each as its copy completes (default 4M; 0: off)\n"
"  --write-chunk BYTES     copy a write of twice this or more to its buffer in\n"
"                          chunks of it as its bytes come (default 4M with 4\n"
"                          or more CPUs online, else 0; 0: off)\n"
"  --write-slots N         a chunked write's bytes cycle through N chunks of\n"
"                          staging, each taking more once copied out\n"
"                          (default 4, at most 16; 0: staging of its size)\n"
"  --poll-us US            microseconds the loop looks at a finish's or small\n"
"                          read's event before handing it to a waiter thread\n"
"                          (default 20; 0: never)\n"
"  --spin-us US            microseconds the loop keeps looking for a client's\n"
"                          next request before it sleeps (default 50 with 4\n"
"                          or more CPUs online, else 0; 0: never; at most\n"
"                          1000)\n"
"  --shm-ring-max BYTES    largest ring of shared slots a client on this host\n"
"                          may give its session for bulk (default 64M; 0: off)\n"
"  --max-objects N         objects per session (default 1000000)\n"
"  --max-release-backlog N  runtime releases (programs, kernels) of\n"
"                          departed objects waiting for their thread; past\n"
"                          it new programs and builds get\n"
"                          CL_OUT_OF_RESOURCES (default 1024)\n"
"  --workers N             threads for program builds (default 2)\n"
"  --metrics-listen ADDR   serve Prometheus metrics at http://ADDR/metrics\n"
"                          (HOST:PORT, or PORT for 127.0.0.1; default off;\n"
"                          GET only, 16 connections, 8K headers, 10 s)\n"
"  --metrics-port-file FILE  write the metrics port to FILE once listening\n"
"  --transports LIST       bulk transports offered to peers and clients,\n"
"                          comma-separated, best first; a pair uses the\n"
"                          first both ends offer, else tcp (default, or\n"
"                          auto: %s;\n"
"                          ucx then counts only toward a server on this\n"
"                          host, where it places bytes in shared staging,\n"
"                          or where both have RDMA; ucx named here goes to\n"
"                          every server; tcp alone: tcp with every server;\n"
"                          VCL_UCX_PLACE, VCL_UCX_SLOT(S), VCL_UCX_SHM_MAX,\n"
"                          VCL_UCX_PLACE_MIN, VCL_UCX_DIRECT (0: no direct\n"
"                          mode, on by default), VCL_PULL_THREADS in the\n"
"                          environment;\n"
"                          docs/operating.md)\n"
"  --transport-force NAME  testing: every link uses NAME or plain tcp\n"
"  --host-id ID            testing: announce ID as this host's identity\n"
"                          (default: boot id, pid namespace, user; two\n"
"                          servers of one host given different\n"
"                          IDs choose transports as two hosts without RDMA\n"
"                          would)\n"
"  --tca-domain NAME       the TCA domain this server is a node of (letters,\n"
"                          digits, '_', '.'; default: none, no tca)\n"
"  --tca-node N            this server's node id in it, 0..15 (ring N/8,\n"
"                          position N%%8); tca library: libtca.so, else the\n"
"                          PEACH2 model (VCL_TCA_LIB names another)\n"
"  --config FILE           read options from FILE (\"name = value\" lines,\n"
"                          names as above without --); SIGHUP re-reads its\n"
"                          log-level, max-*, *-timeout and min-rate\n"
"                          settings\n"
"  --version               print the version and exit\n"
"  --help                  print this help and exit\n"
"\n"
"BYTES take a K, M or G suffix. Signals: SIGTERM/SIGINT drain and exit,\n"
"SIGHUP reloads the configuration file.\n";

enum {
	OPT_LISTEN = 256, OPT_PORT_FILE, OPT_PLATFORM, OPT_DEVICES, OPT_NAME,
	OPT_TOKEN, OPT_INSECURE, OPT_LOG, OPT_MAX_FRAME, OPT_MAX_BULK,
	OPT_MAX_SBYTES, OPT_MAX_SESSIONS, OPT_MAX_PINNED, OPT_MAX_OBJECTS, OPT_WORKERS,
	OPT_READ_CHUNK, OPT_WRITE_CHUNK, OPT_WRITE_SLOTS, OPT_POLL_US,
	OPT_SPIN_US,
	OPT_SHM_RING_MAX,
	OPT_CONFIG, OPT_VERSION, OPT_HELP,
	OPT_TLS_CERT, OPT_TLS_KEY, OPT_TLS_CA, OPT_TLS_VERIFY, OPT_TRUST_BINARIES,
	OPT_MAX_PREAUTH, OPT_MAX_PREAUTH_ADDR, OPT_MAX_AUTH_FAILS,
	OPT_HANDSHAKE_TO, OPT_FRAME_TO, OPT_MIN_RATE, OPT_IDLE_TO, OPT_SEND_TO,
	OPT_METRICS_LISTEN, OPT_METRICS_PORT_FILE,
	OPT_TRANSPORTS, OPT_TRANSPORT_FORCE, OPT_TCA_DOMAIN, OPT_TCA_NODE,
	OPT_HOST_ID, OPT_MAX_RELEASE_BACKLOG, OPT_MAX_PINNED_SESSION,
	OPT_BINCHECK_TO
};

static const struct option longopts[] = {
	{ "listen",		required_argument, NULL, OPT_LISTEN },
	{ "port-file",		required_argument, NULL, OPT_PORT_FILE },
	{ "platform",		required_argument, NULL, OPT_PLATFORM },
	{ "devices",		required_argument, NULL, OPT_DEVICES },
	{ "name",		required_argument, NULL, OPT_NAME },
	{ "token-file",		required_argument, NULL, OPT_TOKEN },
	{ "insecure",		no_argument,	   NULL, OPT_INSECURE },
	{ "tls-cert",		required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key",		required_argument, NULL, OPT_TLS_KEY },
	{ "tls-ca",		required_argument, NULL, OPT_TLS_CA },
	{ "tls-verify-clients",	no_argument,	   NULL, OPT_TLS_VERIFY },
	{ "trust-binaries",	no_argument,	   NULL, OPT_TRUST_BINARIES },
	{ "binary-check-timeout", required_argument, NULL, OPT_BINCHECK_TO },
	{ "log-level",		required_argument, NULL, OPT_LOG },
	{ "max-frame",		required_argument, NULL, OPT_MAX_FRAME },
	{ "max-bulk",		required_argument, NULL, OPT_MAX_BULK },
	{ "max-session-bytes",	required_argument, NULL, OPT_MAX_SBYTES },
	{ "max-sessions",	required_argument, NULL, OPT_MAX_SESSIONS },
	{ "max-pinned",		required_argument, NULL, OPT_MAX_PINNED },
	{ "max-pinned-session",	required_argument, NULL, OPT_MAX_PINNED_SESSION },
	{ "read-chunk",		required_argument, NULL, OPT_READ_CHUNK },
	{ "write-chunk",	required_argument, NULL, OPT_WRITE_CHUNK },
	{ "write-slots",	required_argument, NULL, OPT_WRITE_SLOTS },
	{ "poll-us",		required_argument, NULL, OPT_POLL_US },
	{ "spin-us",		required_argument, NULL, OPT_SPIN_US },
	{ "shm-ring-max",	required_argument, NULL, OPT_SHM_RING_MAX },
	{ "max-objects",	required_argument, NULL, OPT_MAX_OBJECTS },
	{ "max-release-backlog", required_argument, NULL, OPT_MAX_RELEASE_BACKLOG },
	{ "workers",		required_argument, NULL, OPT_WORKERS },
	{ "max-preauth",	required_argument, NULL, OPT_MAX_PREAUTH },
	{ "max-preauth-per-addr", required_argument, NULL, OPT_MAX_PREAUTH_ADDR },
	{ "max-auth-failures",	required_argument, NULL, OPT_MAX_AUTH_FAILS },
	{ "handshake-timeout",	required_argument, NULL, OPT_HANDSHAKE_TO },
	{ "frame-timeout",	required_argument, NULL, OPT_FRAME_TO },
	{ "min-rate",		required_argument, NULL, OPT_MIN_RATE },
	{ "idle-timeout",	required_argument, NULL, OPT_IDLE_TO },
	{ "send-timeout",	required_argument, NULL, OPT_SEND_TO },
	{ "metrics-listen",	required_argument, NULL, OPT_METRICS_LISTEN },
	{ "metrics-port-file",	required_argument, NULL, OPT_METRICS_PORT_FILE },
	{ "transports",		required_argument, NULL, OPT_TRANSPORTS },
	{ "transport-force",	required_argument, NULL, OPT_TRANSPORT_FORCE },
	{ "host-id",		required_argument, NULL, OPT_HOST_ID },
	{ "tca-domain",		required_argument, NULL, OPT_TCA_DOMAIN },
	{ "tca-node",		required_argument, NULL, OPT_TCA_NODE },
	{ "config",		required_argument, NULL, OPT_CONFIG },
	{ "version",		no_argument,	   NULL, OPT_VERSION },
	{ "help",		no_argument,	   NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 }
};

/* A --tca-domain name (node 0: letters, digits, '_', '.') or --tca-node. */
static int
tca_arg_ok(const char *arg, int node)
{
	const char	*p;
	char		*end;
	long		 v;

	if (node) {
		v = strtol(arg, &end, 10);
		return (end != arg && *end == '\0' && v >= 0 && v <= 15);
	}
	if (*arg == '\0' || strlen(arg) > 31)
		return (0);
	for (p = arg; *p != '\0'; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.'))
			return (0);
	}
	return (1);
}

/* The transports built, best first, for --help. */
static const char *
transport_names(void)
{
	static char				 buf[256];
	const struct vcl_transport *const	*t;
	size_t					 len = 0;

	for (t = vcl_transport_list(); *t != NULL; t++)
		if (((*t)->caps & VCL_TP_NAMED) == 0 && len < sizeof buf)
			len += (size_t)snprintf(buf + len, sizeof buf - len,
			    "%s%s", len ? "," : "", (*t)->name);
	for (t = vcl_transport_list(); *t != NULL; t++)
		if (((*t)->caps & VCL_TP_NAMED) != 0 && len < sizeof buf)
			len += (size_t)snprintf(buf + len, sizeof buf - len,
			    "; %s only where named", (*t)->name);
	return (buf);
}

/* Parse a count or byte size with an optional K/M/G suffix. */
static int
parse_size(const char *s, uint64_t *out)
{
	unsigned long long	 v;
	char			*end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || s[0] == '-')
		return (-1);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end != '\0')
		return (-1);
	*out = v;
	return (0);
}

/* A yes/no switch: bare on the command line, a value in a config file. */
static int
parse_flag(const char *name, const char *arg, int *out)
{
	if (arg == NULL || arg[0] == '\0' || strcmp(arg, "yes") == 0 ||
	    strcmp(arg, "true") == 0 || strcmp(arg, "1") == 0)
		*out = 1;
	else if (strcmp(arg, "no") == 0 || strcmp(arg, "false") == 0 ||
	    strcmp(arg, "0") == 0)
		*out = 0;
	else {
		fprintf(stderr, "vclserver: %s: want yes or no, not %s\n",
		    name, arg);
		return (-1);
	}
	return (0);
}

/*
 * Apply one option. reload is set on SIGHUP, when only the log level and
 * limits may change. Returns 0, or -1 with a message printed.
 */
static int
apply_option(struct vcl_server *srv, int id, const char *arg, int reload)
{
	enum vcl_log_level	lvl;
	uint64_t		v = 0;
	char			err[512];

	switch (id) {
	case OPT_LOG:
		if (vcl_log_parse(arg, &lvl) != 0) {
			fprintf(stderr, "vclserver: bad log level: %s\n", arg);
			return (-1);
		}
		vcl_log_level = lvl;
		return (0);
	case OPT_MAX_PINNED:
		if (parse_size(arg, &v) != 0) {
			fprintf(stderr, "vclserver: bad value: %s\n", arg);
			return (-1);
		}
		vcl_pin_max = v;	/* blocks over it go as they come back */
		return (0);
	case OPT_MAX_PINNED_SESSION:
		if (parse_size(arg, &v) != 0 || v == 0) {
			fprintf(stderr, "vclserver: bad value: %s\n", arg);
			return (-1);
		}
		vcl_pin_session_max = v;	/* as for --max-pinned */
		return (0);
	case OPT_READ_CHUNK:
		if (parse_size(arg, &v) != 0 || (v != 0 && v < 4096)) {
			fprintf(stderr, "vclserver: bad read chunk (0, or 4K "
			    "or more): %s\n", arg);
			return (-1);
		}
		vcl_read_chunk = v;
		return (0);
	case OPT_WRITE_CHUNK:
		if (parse_size(arg, &v) != 0 || (v != 0 && v < 4096)) {
			fprintf(stderr, "vclserver: bad write chunk (0, or 4K "
			    "or more): %s\n", arg);
			return (-1);
		}
		vcl_write_chunk = v;
		return (0);
	case OPT_WRITE_SLOTS:
		if (parse_size(arg, &v) != 0 || v == 1 ||
		    v > VCL_WRITE_SLOTS_MAX) {
			fprintf(stderr, "vclserver: bad write slots (0, or 2 "
			    "to %d): %s\n", VCL_WRITE_SLOTS_MAX, arg);
			return (-1);
		}
		vcl_write_slots = (unsigned)v;
		return (0);
	case OPT_POLL_US:
		if (parse_size(arg, &v) != 0 || v > 1000) {
			fprintf(stderr, "vclserver: bad poll time (0 to 1000 "
			    "us): %s\n", arg);
			return (-1);
		}
		vcl_poll_us = v;
		return (0);
	case OPT_SPIN_US:
		if (parse_size(arg, &v) != 0 || v > 1000) {
			fprintf(stderr, "vclserver: bad spin time (0 to 1000 "
			    "us): %s\n", arg);
			return (-1);
		}
		if (!reload)		/* the loop's shape is set at start */
			vcl_spin_us = (long)v;
		return (0);
	case OPT_SHM_RING_MAX:
		if (parse_size(arg, &v) != 0 || (v != 0 && v < 2 * 4096)) {
			fprintf(stderr, "vclserver: bad shared ring size (0, or "
			    "8K or more): %s\n", arg);
			return (-1);
		}
		vcl_shm_ring_max = v;
		return (0);
	case OPT_MAX_AUTH_FAILS: case OPT_FRAME_TO: case OPT_IDLE_TO:
	case OPT_SEND_TO:
		/* 0 turns these off. */
		if (parse_size(arg, &v) != 0) {
			fprintf(stderr, "vclserver: bad value: %s\n", arg);
			return (-1);
		}
		break;
	case OPT_MAX_FRAME: case OPT_MAX_BULK: case OPT_MAX_SBYTES:
	case OPT_MAX_SESSIONS: case OPT_MAX_OBJECTS: case OPT_WORKERS:
	case OPT_MAX_PREAUTH: case OPT_MAX_PREAUTH_ADDR: case OPT_HANDSHAKE_TO:
	case OPT_MIN_RATE: case OPT_MAX_RELEASE_BACKLOG: case OPT_BINCHECK_TO:
		if (parse_size(arg, &v) != 0 || v == 0 ||
		    (id == OPT_BINCHECK_TO && v > 3600) ||
		    (id == OPT_MAX_FRAME && v > UINT32_MAX) ||
		    (id == OPT_WORKERS && v > 64)) {
			fprintf(stderr, "vclserver: bad value: %s\n", arg);
			return (-1);
		}
		break;
	default:
		if (reload)
			return (0);	/* needs a restart; keep the old value */
		break;
	}
	switch (id) {
	case OPT_MAX_FRAME:	srv->limits.frame.max_msg = (uint32_t)v; break;
	case OPT_MAX_BULK:	srv->limits.frame.max_bulk = v; break;
	case OPT_MAX_SBYTES:	srv->limits.session_bytes = v; break;
	case OPT_MAX_SESSIONS:	srv->limits.sessions = v; break;
	case OPT_MAX_OBJECTS:	srv->limits.objects = v; break;
	case OPT_MAX_RELEASE_BACKLOG: srv->limits.release_backlog = v; break;
	case OPT_WORKERS:	opts.workers = (int)v; break;
	case OPT_MAX_PREAUTH:	srv->limits.preauth = v; break;
	case OPT_MAX_PREAUTH_ADDR: srv->limits.preauth_addr = v; break;
	case OPT_MAX_AUTH_FAILS: srv->limits.auth_fails = v; break;
	case OPT_HANDSHAKE_TO:	srv->limits.handshake_s = v; break;
	case OPT_BINCHECK_TO:	srv->limits.bincheck_s = v; break;
	case OPT_FRAME_TO:	srv->limits.frame_s = v; break;
	case OPT_MIN_RATE:	srv->limits.frame_rate = v; break;
	case OPT_IDLE_TO:	srv->limits.idle_s = v; break;
	case OPT_SEND_TO:	srv->limits.send_s = v; break;
	case OPT_LISTEN:	opts.listen = strdup(arg); break;
	case OPT_PORT_FILE:	opts.port_file = strdup(arg); break;
	case OPT_PLATFORM:	opts.platform = strdup(arg); break;
	case OPT_DEVICES:	opts.devices = strdup(arg); break;
	case OPT_NAME:		opts.name = strdup(arg); break;
	case OPT_METRICS_LISTEN: opts.metrics_listen = strdup(arg); break;
	case OPT_METRICS_PORT_FILE: opts.metrics_port_file = strdup(arg); break;
	case OPT_INSECURE:
		/* Bare on the command line; "yes"/"no" in a config file. */
		if (arg != NULL && arg[0] != '\0' && strcmp(arg, "yes") != 0 &&
		    strcmp(arg, "true") != 0 && strcmp(arg, "1") != 0) {
			if (strcmp(arg, "no") != 0 && strcmp(arg, "false") != 0 &&
			    strcmp(arg, "0") != 0) {
				fprintf(stderr, "vclserver: insecure: want yes "
				    "or no, not %s\n", arg);
				return (-1);
			}
			opts.insecure = 0;
		} else
			opts.insecure = 1;
		break;
	case OPT_TRANSPORTS:
	case OPT_TRANSPORT_FORCE: {
		const struct vcl_transport	*t[VCL_TP_MAX];
		int				 n;

		if (vcl_transport_parse(arg, t, &n, err, sizeof err) != 0 ||
		    (id == OPT_TRANSPORT_FORCE && n != 1)) {
			fprintf(stderr, "vclserver: %s: %s\n", id ==
			    OPT_TRANSPORTS ? "transports" : "transport-force",
			    n > 1 ? "name one transport" : err);
			return (-1);
		}
		if (id == OPT_TRANSPORTS)
			opts.transports = strdup(arg);
		else
			opts.transport_force = strdup(arg);
		break;
	}
	case OPT_TCA_DOMAIN:
	case OPT_TCA_NODE:
		/* The tca backend and the PEACH2 model read these. */
		if (!tca_arg_ok(arg, id == OPT_TCA_NODE)) {
			fprintf(stderr, "vclserver: %s: %s\n", id ==
			    OPT_TCA_NODE ? "tca-node: want 0..15" : "tca-domain:"
			    " 1..31 letters, digits, '_' or '.'", arg);
			return (-1);
		}
		setenv(id == OPT_TCA_NODE ? "VCL_TCA_NODE" : "VCL_TCA_DOMAIN",
		    arg, 1);
		break;
	case OPT_HOST_ID: {
		size_t	i, len = strlen(arg);

		/* Read by vcl_transports_init (the choice per pair). */
		for (i = 0; i < len && arg[i] > 0x20 && arg[i] < 0x7f; i++)
			;
		if (len == 0 || i < len || len >= VCL_TP_HOST_MAX) {
			fprintf(stderr, "vclserver: host-id: 1..%d printable "
			    "characters, no space\n", VCL_TP_HOST_MAX - 1);
			return (-1);
		}
		setenv("VCL_HOST_ID", arg, 1);
		break;
	}
	case OPT_TLS_CERT:	opts.tls_cert = strdup(arg); break;
	case OPT_TLS_KEY:	opts.tls_key = strdup(arg); break;
	case OPT_TLS_CA:	opts.tls_ca = strdup(arg); break;
	case OPT_TRUST_BINARIES:
		return (parse_flag("trust-binaries", arg,
		    &srv->trust_binaries));
	case OPT_TLS_VERIFY:
		return (parse_flag("tls-verify-clients", arg,
		    &opts.tls_verify_clients));
	case OPT_TOKEN:
		opts.token_file = strdup(arg);
		if (vcl_auth_load(arg, &srv->token, err, sizeof err) != 0) {
			fprintf(stderr, "vclserver: %s\n", err);
			return (-1);
		}
		srv->have_token = 1;
		break;
	default:
		break;
	}
	return (0);
}

/* Read "name = value" lines ('#' comments) from a configuration file. */
static int
read_config(struct vcl_server *srv, const char *path, int reload)
{
	const struct option	*o;
	FILE			*f;
	char			 line[1024], *k, *v, *e;
	int			 lineno = 0, rc = 0;

	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "vclserver: %s: %s\n", path, strerror(errno));
		return (-1);
	}
	while (fgets(line, sizeof line, f) != NULL) {
		lineno++;
		if ((e = strchr(line, '#')) != NULL)
			*e = '\0';
		k = line + strspn(line, " \t\r\n");
		if (*k == '\0')
			continue;
		e = k + strcspn(k, " \t=\r\n");
		v = e + strspn(e, " \t=");
		*e = '\0';
		v[strcspn(v, "\r\n")] = '\0';
		while (*v != '\0' && (e = v + strlen(v) - 1) >= v &&
		    (*e == ' ' || *e == '\t'))
			*e = '\0';
		for (o = longopts; o->name != NULL; o++)
			if (strcmp(o->name, k) == 0)
				break;
		if (o->name == NULL || o->val == OPT_CONFIG ||
		    o->val == OPT_HELP || o->val == OPT_VERSION) {
			fprintf(stderr, "vclserver: %s:%d: unknown option %s\n",
			    path, lineno, k);
			rc = -1;
			continue;
		}
		if (apply_option(srv, o->val, v, reload) != 0)
			rc = -1;
	}
	fclose(f);
	return (rc);
}

/* SIGHUP: re-read the configuration file's log level and limits. */
static void
vcl_server_reload(struct vcl_server *srv)
{
	if (opts.config == NULL) {
		vcl_log_info("SIGHUP: no --config file to reload");
		return;
	}
	if (read_config(srv, opts.config, 1) != 0)
		vcl_log_warn("%s: reloaded with errors", opts.config);
	else
		vcl_log_info("%s: reloaded", opts.config);
}

/*
 * Set up TLS when a certificate is given: the listener's context, and the
 * one for peer links, which always verify the other server (--tls-ca, else
 * the system's CAs) and present our certificate if asked. Returns 0, or -1
 * with a message printed.
 */
static int
setup_tls(struct vcl_server *srv)
{
	struct vcl_tls_conf	c;
	char			err[1024];

	if (opts.tls_cert == NULL && opts.tls_key == NULL) {
		if (opts.tls_ca == NULL && !opts.tls_verify_clients)
			return (0);
		fprintf(stderr, "vclserver: --tls-ca and --tls-verify-clients "
		    "need --tls-cert and --tls-key\n");
		return (-1);
	}
	if (opts.tls_cert == NULL || opts.tls_key == NULL) {
		fprintf(stderr, "vclserver: TLS needs both --tls-cert and "
		    "--tls-key\n");
		return (-1);
	}
	if (opts.tls_verify_clients && opts.tls_ca == NULL) {
		fprintf(stderr, "vclserver: --tls-verify-clients needs "
		    "--tls-ca (the CA that signs client certificates)\n");
		return (-1);
	}
	c.cert = opts.tls_cert;
	c.key = opts.tls_key;
	c.ca = opts.tls_ca;
	c.verify = opts.tls_verify_clients;
	if ((srv->tls = vcl_tls_ctx_new(1, &c, err, sizeof err)) == NULL) {
		fprintf(stderr, "vclserver: %s\n", err);
		return (-1);
	}
	c.verify = 1;
	if ((srv->tls_peer = vcl_tls_ctx_new(0, &c, err, sizeof err)) == NULL) {
		fprintf(stderr, "vclserver: peer links: %s\n", err);
		return (-1);
	}
	return (0);
}

/*
 * Descriptors 0, 1 and 2 on /dev/null where they came closed (`vclserver
 * 2>&-`, a careless service manager): else the first sockets, pipes and
 * epoll instances opened take their numbers, and the log, written to 2,
 * goes into one of them (a library's pipe, a client's socket). Returns
 * 0, or -1 when /dev/null cannot be opened (nowhere to say so, either).
 */
static int
std_fds(void)
{
	int	fd, nfd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		/* The lowest free number: fd itself. */
		if ((nfd = open("/dev/null", O_RDWR)) == -1)
			return (-1);
		if (nfd != fd) {
			(void)close(nfd);
			return (-1);
		}
	}
	return (0);
}

int
main(int argc, char **argv)
{
	static struct vcl_server	srv;
	int				c;

	if (std_fds() != 0)
		return (1);
	/* A binary's check (vcl_bincheck.c): this executable, as a child. */
	if (argc == 2 && strcmp(argv[1], "--check-binary") == 0)
		return (vcl_bincheck_main());
	vcl_log_init("vclserver", VCL_LOG_INFO);
	vcl_transports_register();
	opts.listen = "127.0.0.1";
	opts.workers = 2;
	srv.limits.frame.max_msg = VCL_FRAME_DEFAULT_MAX_MSG;
	srv.limits.frame.max_bulk = VCL_FRAME_DEFAULT_MAX_BULK;
	srv.limits.sessions = 64;
	srv.limits.objects = 1000000;
	srv.limits.release_backlog = 1024;
	srv.limits.preauth = 128;
	srv.limits.preauth_addr = 32;
	srv.limits.auth_fails = 10;
	srv.limits.handshake_s = 10;
	srv.limits.bincheck_s = 60;
	srv.limits.frame_s = 30;
	srv.limits.frame_rate = 64u << 10;

	while ((c = vcl_opt_next(argc, argv, "", longopts, "vclserver")) !=
	    -1) {
		switch (c) {
		case OPT_HELP:
			printf(usage, VCL_DEFAULT_PORT, transport_names());
			return (0);
		case OPT_VERSION:
			printf("vclserver %s (protocol %u)\n", VCL_VERSION,
			    VCL_PROTOCOL_VERSION);
			return (0);
		case OPT_CONFIG:
			opts.config = optarg;
			if (read_config(&srv, optarg, 0) != 0)
				return (2);
			break;
		case '?':
			fprintf(stderr, "Try 'vclserver --help'.\n");
			return (2);
		default:
			if (apply_option(&srv, c, optarg, 0) != 0)
				return (2);
			break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vclserver: unexpected argument: %s\n",
		    argv[optind]);
		return (2);
	}
	if (opts.name == NULL) {
		if (gethostname(hostname, sizeof hostname) != 0)
			snprintf(hostname, sizeof hostname, "vcl");
		hostname[sizeof hostname - 1] = '\0';
		opts.name = hostname;
	}
	srv.node_name = opts.name;
	if (setup_tls(&srv) != 0)
		return (2);
	srv.reload = vcl_server_reload;
	/*
	 * Where libvcl is installed as an ICD the loader opens it in this
	 * process too: give it no nodes, so it connects to none of ours.
	 */
	setenv("VCL_NODES", "", 1);
	return (vcl_server_run(&srv, &opts));
}
