/* tools_test.c - the vcl command and the metrics endpoint against servers. */

/*
 * usage: tools_test VCLSERVER [CLIENT]
 *
 * Runs the vcl command (VCL_TEST_TOOL) against fresh vclservers: one up,
 * one asking for a token the command gets wrong, one down; checks what it
 * prints names each node and its cause, that --json parses (python3), and
 * that the counters it shows follow a known workload: examples/hello
 * (VCL_TEST_HELLO) run once through libvcl (VCL_TEST_ICD_DIR). Scrapes
 * --metrics-listen and checks the same counts, then sends it hostile HTTP.
 */

#include <netinet/in.h>

#include "rawproto.h"

#define PROG_POLLS	6000	/* one program run: 60 s */
#define HELLO_N		"1000"	/* elements: 4000 bytes a buffer */

static char	out_path[PATH_MAX + 32], err_path[PATH_MAX + 32];

/*
 * Run argv with env ("NAME=VALUE" entries, NULL ends) added, stdout to
 * out_path and stderr to err_path. Returns the exit status, -1 if it did
 * not exit normally in time.
 */
static int
run(const char *const *argv, const char *const *env)
{
	const char	*icd = getenv("VCL_TEST_ICD_DIR");
	pid_t		 pid, r = 0;
	int		 fd, st = 0, i;
	char		 kv[1024], *eq;

	snprintf(out_path, sizeof out_path, "%s/out", root);
	snprintf(err_path, sizeof err_path, "%s/err", root);
	fflush(stdout);
	if ((pid = fork()) == -1)
		return (-1);
	if (pid == 0) {
		if ((fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC,
		    0600)) != -1) {
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
		if ((fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC,
		    0600)) != -1) {
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		if (icd != NULL)
			setenv("OCL_ICD_VENDORS", icd, 1);
		unsetenv("VCL_TLS");
		unsetenv("VCL_TOKEN_FILE");
		setenv("HOME", root, 1);	/* no nodes.conf of the user */
		for (i = 0; env != NULL && env[i] != NULL; i++) {
			snprintf(kv, sizeof kv, "%s", env[i]);
			if ((eq = strchr(kv, '=')) != NULL) {
				*eq = '\0';
				setenv(kv, eq + 1, 1);
			}
		}
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	for (i = 0; i < PROG_POLLS; i++) {
		if ((r = waitpid(pid, &st, WNOHANG)) != 0)
			break;
		poll_wait();
	}
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return (-1);
	}
	return (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* A whole file, NUL-terminated (freed by the caller), or NULL. */
static char *
slurp(const char *path)
{
	FILE	*f;
	char	*buf = NULL;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL)
		return (NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	if (n >= 0 && (buf = malloc((size_t)n + 1)) != NULL) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n)
			n = 0;
		buf[n] = '\0';
	}
	fclose(f);
	return (buf);
}

/* Does the file hold s? */
static int
has(const char *path, const char *s)
{
	char	*buf = slurp(path);
	int	 found = buf != NULL && strstr(buf, s) != NULL;

	free(buf);
	return (found);
}

/*
 * Run a python3 check over the JSON in out_path: code sees it as d and
 * must not raise. Returns 1 when it passes.
 */
static int
json_ok(const char *code)
{
	char	script[4096], json[PATH_MAX + 32];
	FILE	*f;
	int	rc;

	snprintf(json, sizeof json, "%s/json", root);
	if (rename(out_path, json) != 0)
		return (0);
	snprintf(script, sizeof script, "%s/check.py", root);
	if ((f = fopen(script, "w")) == NULL)
		return (0);
	fprintf(f, "import json, sys\nd = json.load(open(sys.argv[1]))\n%s\n",
	    code);
	fclose(f);
	{
		const char	*argv[] = { "/usr/bin/env", "python3", script,
				    json, NULL };

		rc = run(argv, NULL);
	}
	if (rc != 0)
		note("python3: %s", code);
	return (rc == 0);
}

/* A port nothing listens on (bound, then closed), as a string. */
static void
dead_port(char *port, size_t len)
{
	struct sockaddr_in	sin;
	socklen_t		sl = sizeof sin;
	int			fd;

	snprintf(port, len, "1");
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &sl) == 0)
		snprintf(port, len, "%u", ntohs(sin.sin_port));
	close(fd);
}

/* Write a token file (chmod 600) of the given text. Returns 0 or -1. */
static int
write_token(const char *path, const char *text)
{
	FILE	*f;

	if ((f = fopen(path, "w")) == NULL)
		return (-1);
	fputs(text, f);
	fclose(f);
	return (chmod(path, 0600));
}

/* Run examples/hello once through libvcl against port. Returns 1 if OK. */
static int
run_hello(const char *port)
{
	const char	*hello = getenv("VCL_TEST_HELLO");
	char		 nodes[64];
	const char	*env[] = { nodes, NULL };
	const char	*argv[] = { hello, "-n", HELLO_N, NULL };

	if (hello == NULL)
		return (0);
	snprintf(nodes, sizeof nodes, "VCL_NODES=127.0.0.1:%s", port);
	return (run(argv, env) == 0 && has(out_path, "elements OK"));
}

/* Wait (bounded) until the server has no session but the asking one. */
static int
wait_idle(const struct srv *sv)
{
	struct conn		c;
	Vcl__StatsResult	st = VCL__STATS_RESULT__INIT;
	int			ok;

	if (conn_session(&c, sv) != 0)
		return (0);
	ok = wait_empty(&c, &st) == 0;
	conn_close(&c);
	return (ok);
}

/*
 * vcl nodes: up, wrong token, down; each named with its cause, in text
 * and in JSON; with the right token, both servers up and their link (tcp,
 * as two hosts: --host-id), with why.
 */
static void
test_nodes(void)
{
	const char	*tool = getenv("VCL_TEST_TOOL");
	const char	*extra[] = { "--token-file", NULL, "--host-id",
	    "tools-test-b", NULL };
	struct srv	 a, b;
	char		 tok[PATH_MAX + 16], bad[PATH_MAX + 16], dead[16];
	char		 nodes[128], want[256], tokenv[PATH_MAX + 32], py[1024];
	const char	*env[] = { nodes, tokenv, NULL };
	const char	*argv[] = { tool, "nodes", NULL, NULL };
	int		 rc;

	if (!check("nodes_env", tool != NULL, "VCL_TEST_TOOL is not set"))
		return;
	snprintf(tok, sizeof tok, "%s/token", root);
	snprintf(bad, sizeof bad, "%s/wrong", root);
	if (!check("nodes_tokens", write_token(tok, "3f9c2a7b1e8d4c6f0a5b9e2d7c1f8a3b6e0d4c9f2a7b5e1d\n") ==
	    0 && write_token(bad, "8e1d4a7c2f9b6e3d0c5a8f1b4e7d2c9a6f3b0e5d8c1a4f7b\n") == 0, "cannot write "
	    "token files"))
		return;
	extra[1] = tok;
	if (!srv_start(&a, "nodes_server_a", "127.0.0.1:0", NULL))
		return;
	if (!srv_start(&b, "nodes_server_b", "127.0.0.1:0", extra)) {
		srv_stop(&a, "nodes_server_a_exit");
		return;
	}
	dead_port(dead, sizeof dead);
	snprintf(nodes, sizeof nodes, "VCL_NODES=127.0.0.1:%s,127.0.0.1:%s,"
	    "127.0.0.1:%s", a.port, b.port, dead);
	snprintf(tokenv, sizeof tokenv, "VCL_TOKEN_FILE=%s", bad);

	rc = run(argv, env);
	check("nodes_exit_failed", rc == 1, "exit %d with a node down, want "
	    "1", rc);
	snprintf(want, sizeof want, "127.0.0.1:%s: up", a.port);
	check("nodes_up_named", has(out_path, want), "no \"%s\" in %s", want,
	    out_path);
	snprintf(want, sizeof want, "127.0.0.1:%s: DOWN (auth)", b.port);
	check("nodes_wrong_token_named", has(out_path, want) &&
	    has(out_path, "wrong or missing token"), "no \"%s\" naming the "
	    "wrong token in %s", want, out_path);
	snprintf(want, sizeof want, "127.0.0.1:%s: DOWN (refused)", dead);
	check("nodes_down_named", has(out_path, want), "no \"%s\" in %s",
	    want, out_path);
	check("nodes_devices_listed", has(out_path, "device 0: "),
	    "no device listed in %s", out_path);

	argv[1] = "--json";
	argv[2] = "nodes";
	rc = run(argv, env);
	snprintf(py, sizeof py,
	    "n = d['nodes']\n"
	    "assert d['source'] == 'VCL_NODES'\n"
	    "assert [x['address'] for x in n] == ['127.0.0.1:%s', "
	    "'127.0.0.1:%s', '127.0.0.1:%s']\n"
	    "assert n[0]['reachable'] and n[0]['transport'] == 'tcp'\n"
	    "assert len(n[0]['devices']) >= 1 and n[0]['version']\n"
	    "assert not n[1]['reachable'] and n[1]['cause'] == 'auth'\n"
	    "assert 'token' in n[1]['error']\n"
	    "assert not n[2]['reachable'] and n[2]['cause'] == 'refused'\n"
	    "assert d['links'] == []\n", a.port, b.port, dead);
	check("nodes_json", rc == 1 && json_ok(py), "--json nodes: exit %d "
	    "or its JSON is not as expected", rc);

	/* The right token: both up, a link each way over TCP. */
	snprintf(tokenv, sizeof tokenv, "VCL_TOKEN_FILE=%s", tok);
	snprintf(nodes, sizeof nodes, "VCL_NODES=127.0.0.1:%s 127.0.0.1:%s",
	    a.port, b.port);
	rc = run(argv, env);
	snprintf(py, sizeof py,
	    "assert all(x['reachable'] for x in d['nodes'])\n"
	    "l = d['links']\n"
	    "assert len(l) == 2 and all(x['transport'] == 'tcp' for x in l)\n"
	    "assert all('no link yet' in x['why'] for x in l)\n"
	    "assert l[0]['from'] == '127.0.0.1:%s' and "
	    "l[0]['to'] == '127.0.0.1:%s'\n", a.port, b.port);
	check("nodes_json_all_up", rc == 0 && json_ok(py), "--json nodes "
	    "with the right token: exit %d or not all up", rc);

	/* stats of the wrong-token node: the node and the cause, exit 1. */
	snprintf(tokenv, sizeof tokenv, "VCL_TOKEN_FILE=%s", bad);
	snprintf(want, sizeof want, "127.0.0.1:%s", b.port);
	argv[1] = "stats";
	argv[2] = want;
	rc = run(argv, env);
	check("stats_wrong_token", rc == 1 && has(err_path, want) &&
	    has(err_path, "wrong or missing token"), "vcl stats of a node "
	    "with the wrong token: exit %d, stderr in %s", rc, err_path);
	srv_stop(&b, "nodes_server_b_exit");
	srv_stop(&a, "nodes_server_a_exit");
}

/*
 * vcl stats and vcl ping after one examples/hello: exact per-opcode
 * counts and bulk bytes; ping's round trips and bandwidth; ping of a node
 * that is down names it.
 */
static void
test_stats(void)
{
	const char	*tool = getenv("VCL_TEST_TOOL");
	struct srv	 a;
	char		 node[64], dead[64], py[1024];
	const char	*argv[] = { tool, "--json", "stats", node, NULL, NULL,
			    NULL, NULL };
	int		 rc;

	if (!check("stats_env", tool != NULL && getenv("VCL_TEST_HELLO") !=
	    NULL, "VCL_TEST_TOOL or VCL_TEST_HELLO is not set"))
		return;
	if (!srv_start(&a, "stats_server", "127.0.0.1:0", NULL))
		return;
	snprintf(node, sizeof node, "127.0.0.1:%s", a.port);
	check("stats_hello_runs", run_hello(a.port), "hello through VCL "
	    "failed; see %s", out_path);
	check("stats_idle", wait_idle(&a), "the hello session did not end");
	rc = run(argv, NULL);
	snprintf(py, sizeof py,
	    "s = d[0]\n"
	    "assert s['reachable'] and s['address'] == '%s'\n"
	    "r = s['requests']\n"
	    "for op, n in (('create_context', 1), ('create_queue', 1),\n"
	    "    ('create_buffer', 3), ('write_buffer', 2),\n"
	    "    ('read_buffer', 1), ('ndrange', 1), ('create_program', 1),\n"
	    "    ('build_program', 1), ('create_kernel', 1)):\n"
	    "    assert r[op]['count'] == n, (op, r[op])\n"
	    "c = s['counters']\n"
	    "assert c['bytes_in'] == 8000 and c['bytes_out'] == 4000, c\n"
	    "assert c['sessions_total'] >= 2 and c['requests'] >= 13\n"
	    "assert 'launches_offloop' in c and 'polled' in c, c\n"
	    "assert not [k for k in c if k.startswith('session_')], c\n",
	    node);
	check("stats_json_counts", rc == 0 && json_ok(py), "vcl --json stats "
	    "after hello: exit %d or counts off", rc);
	argv[1] = "stats";
	argv[2] = node;
	argv[3] = NULL;
	rc = run(argv, NULL);
	check("stats_text", rc == 0 && has(out_path, "create_buffer") &&
	    has(out_path, "bytes_in               8000") &&
	    has(out_path, "spin_hits") && has(out_path, "buffers_moving"),
	    "vcl stats: exit %d, "
	    "output in %s", rc, out_path);

	argv[1] = "ping";
	argv[2] = node;
	argv[3] = "--count";
	argv[4] = "3";
	argv[5] = "--size";
	argv[6] = "1";
	rc = run(argv, NULL);
	check("ping_text", rc == 0 && has(out_path, "3 round trips") &&
	    has(out_path, "1.0 MiB: write"), "vcl ping: exit %d, output in "
	    "%s", rc, out_path);
	argv[1] = "--json";
	argv[2] = "ping";
	argv[3] = node;
	argv[4] = "--count=2";
	argv[5] = "--size=2";
	argv[6] = NULL;
	rc = run(argv, NULL);
	check("ping_json", rc == 0 && json_ok("assert d['reachable'] and "
	    "d['count'] == 2 and d['bytes'] == 2 << 20\n"
	    "assert d['rtt_min_ms'] <= d['rtt_avg_ms'] <= d['rtt_max_ms']\n"
	    "assert d['write_MBps'] > 0 and d['read_MBps'] > 0"),
	    "vcl --json ping: exit %d", rc);
	dead_port(dead + 10, sizeof dead - 10);
	memcpy(dead, "127.0.0.1:", 10);
	argv[1] = "ping";
	argv[2] = dead;
	argv[3] = NULL;
	rc = run(argv, NULL);
	check("ping_down_named", rc == 1 && has(err_path, dead) &&
	    has(err_path, "refused"), "vcl ping of a closed port: exit %d, "
	    "stderr in %s", rc, err_path);
	srv_stop(&a, "stats_server_exit");
}

/*
 * Send raw bytes to 127.0.0.1:port and read the answer until the server
 * closes (Connection: close) or RECV_TIMEOUT_S. Returns the HTTP status,
 * 0 when closed without one, -1 on a connect failure; body to *body.
 */
static int
http_raw(const char *port, const char *req, size_t len, char **body)
{
	struct sockaddr_in	 sin;
	struct timeval		 tv = { RECV_TIMEOUT_S, 0 };
	char			*buf = NULL;
	size_t			 got = 0, cap = 0;
	ssize_t			 r;
	int			 fd, status = 0;

	if (body != NULL)
		*body = NULL;
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return (-1);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)atoi(port));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
		close(fd);
		return (-1);
	}
	/* A server that refuses early may close while this still writes. */
	(void)send(fd, req, len, MSG_NOSIGNAL);
	for (;;) {
		if (got + 4096 + 1 > cap) {
			char	*nb;

			cap = cap ? cap * 2 : 65536;
			if ((nb = realloc(buf, cap)) == NULL)
				break;
			buf = nb;
		}
		if ((r = recv(fd, buf + got, cap - got - 1, 0)) <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (buf == NULL)
		return (0);
	buf[got] = '\0';
	if (got > 12 && strncmp(buf, "HTTP/1.", 7) == 0)
		status = atoi(buf + 9);
	if (body != NULL)
		*body = buf;
	else
		free(buf);
	return (status);
}

/* GET path; the status, the whole answer to *body. */
static int
http_get(const char *port, const char *path, char **body)
{
	char	req[512];

	snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\n"
	    "Connection: close\r\n\r\n", path);
	return (http_raw(port, req, strlen(req), body));
}

/* The value of the sample line "name value" in a scrape, or -1. */
static long long
sample(const char *text, const char *name)
{
	const char	*p = text;
	size_t		 n = strlen(name);

	while (p != NULL && (p = strstr(p, name)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return (atoll(p + n + 1));
		p += n;
	}
	return (-1);
}

/* Wait (bounded) for the metrics port file of a server. */
static int
metrics_port(const char *file, char *port, size_t len)
{
	char	*s;
	int	 i;

	for (i = 0; i < READY_POLLS; i++) {
		if ((s = slurp(file)) != NULL && s[0] != '\0') {
			s[strcspn(s, "\n")] = '\0';
			snprintf(port, len, "%s", s);
			free(s);
			return (1);
		}
		free(s);
		poll_wait();
	}
	return (0);
}

/*
 * Every counter of Stats is in the scrape, with the value Stats gives
 * (the server idle between the two: none of these moves).
 */
static void
metrics_as_stats(const struct srv *a, const char *body)
{
	struct conn		 w;
	Vcl__StatsResult	 st;
	long long		 v;
	size_t			 i;
	struct {
		const char	*name;
		uint64_t	 want;
	} m[6];

	w.fd = -1;
	if (!check("metrics_stats", conn_session(&w, a) == 0 &&
	    stats(&w, &st) == 0, "no Stats"))
		goto out;
	m[0].name = "vcl_peer_oob_bytes_total";
	m[0].want = st.peer_bytes_oob;
	m[1].name = "vcl_peer_shared_bytes_total";
	m[1].want = st.peer_bytes_shared;
	m[2].name = "vcl_client_shared_bytes_total";
	m[2].want = st.client_bytes_shared;
	m[3].name = "vcl_notifies_total";
	m[3].want = st.notifies;
	m[4].name = "vcl_fast_replies_total";
	m[4].want = st.fast_replies;
	m[5].name = "vcl_queues_offloop_total";
	m[5].want = st.queues_offloop;
	for (i = 0; i < sizeof m / sizeof m[0]; i++) {
		v = sample(body, m[i].name);
		check(m[i].name, v >= 0 && (uint64_t)v == m[i].want,
		    "%s is %lld, Stats says %llu", m[i].name, v,
		    (unsigned long long)m[i].want);
	}
	check("metrics_transport_offered", sample(body,
	    "vcl_transport_offered{transport=\"tcp\"}") == 1,
	    "tcp not listed as offered");
	check("metrics_slow_threshold", strstr(body,
	    "\nvcl_slow_threshold_seconds ") != NULL, "no slow threshold");
out:
	conn_close(&w);
}

/*
 * The metrics endpoint after one examples/hello: the per-opcode request
 * counts, the bulk bytes and the latency histograms follow the workload
 * exactly; the scrape agrees with Stats.
 */
static void
test_metrics(void)
{
	struct srv	 a;
	char		 pf[PATH_MAX + 16], port[16], *body = NULL;
	const char	*extra[] = { "--metrics-listen", "0",
			    "--metrics-port-file", pf, NULL };
	int		 st;

	snprintf(pf, sizeof pf, "%s/metrics.port", root);
	if (!srv_start(&a, "metrics_server", "127.0.0.1:0", extra))
		return;
	if (!check("metrics_port", metrics_port(pf, port, sizeof port),
	    "no metrics port file"))
		goto out;
	st = http_get(port, "/metrics", &body);
	check("metrics_scrape_fresh", st == 200 && body != NULL &&
	    strstr(body, "text/plain; version=0.0.4") != NULL &&
	    sample(body, "vcl_sessions_total") == 0, "fresh scrape: "
	    "status %d", st);
	free(body);
	body = NULL;
	check("metrics_hello_runs", run_hello(a.port), "hello through VCL "
	    "failed; see %s", out_path);
	check("metrics_idle", wait_idle(&a), "the hello session did not end");
	st = http_get(port, "/metrics", &body);
	if (!check("metrics_scrape", st == 200 && body != NULL, "status %d",
	    st))
		goto out;
#define WANT(name, v)	check("metrics_" #v "_" name, sample(body, name) == \
	(v), "%s is %lld, want %lld", name, sample(body, name), (long long)(v))
	WANT("vcl_requests_total{op=\"create_context\"}", 1);
	WANT("vcl_requests_total{op=\"create_buffer\"}", 3);
	WANT("vcl_requests_total{op=\"write_buffer\"}", 2);
	WANT("vcl_requests_total{op=\"read_buffer\"}", 1);
	WANT("vcl_requests_total{op=\"ndrange\"}", 1);
	WANT("vcl_requests_total{op=\"build_program\"}", 1);
	WANT("vcl_bulk_in_bytes_total", 8000);
	WANT("vcl_bulk_out_bytes_total", 4000);
	WANT("vcl_request_duration_seconds_count{op=\"write_buffer\"}", 2);
	WANT("vcl_request_duration_seconds_bucket{op=\"create_buffer\","
	    "le=\"+Inf\"}", 3);
	WANT("vcl_objects", 0);
#undef WANT
	metrics_as_stats(&a, body);
	check("metrics_sessions_total", sample(body, "vcl_sessions_total") >=
	    2, "vcl_sessions_total %lld, want hello's and the test's",
	    sample(body, "vcl_sessions_total"));
	check("metrics_histogram_cumulative", sample(body,
	    "vcl_request_duration_seconds_bucket{op=\"ndrange\",le=\"1e-06\"}")
	    <= sample(body, "vcl_request_duration_seconds_bucket{op=\"ndrange\""
	    ",le=\"8.38861\"}"), "ndrange buckets are not cumulative");
out:
	free(body);
	srv_stop(&a, "metrics_server_exit");
}

/*
 * Hostile HTTP: other methods, other paths, a huge header, junk; and more
 * connections than the cap. Each is refused; /metrics and the VCL port
 * keep working.
 */
static void
test_metrics_hostile(void)
{
	struct srv	 a;
	struct conn	 c;
	char		 pf[PATH_MAX + 16], port[16], *big, *body = NULL;
	const char	*extra[] = { "--metrics-listen", "127.0.0.1:0",
			    "--metrics-port-file", pf, NULL };
	struct pollfd	 pfd;
	int		 st, idle[16], extra_fd, i, n = 0;
	size_t		 len = 64u << 10;
	static const char junk[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc"
			    "\r\n\r\n";

	snprintf(pf, sizeof pf, "%s/hostile.port", root);
	if (!srv_start(&a, "hostile_server", "127.0.0.1:0", extra))
		return;
	if (!check("hostile_port", metrics_port(pf, port, sizeof port),
	    "no metrics port file"))
		goto out;
	{
		static const char post[] = "POST /metrics HTTP/1.1\r\nHost: x"
		    "\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";

		st = http_raw(port, post, sizeof post - 1, NULL);
		check("hostile_post", st == 405, "POST /metrics: status %d, "
		    "want 405", st);
	}
	st = http_get(port, "/", NULL);
	check("hostile_root", st == 404, "GET /: status %d, want 404", st);
	st = http_get(port, "/metrics/../etc/passwd", NULL);
	check("hostile_path", st == 404, "GET /metrics/../etc/passwd: status "
	    "%d, want 404", st);
	if ((big = malloc(len)) != NULL) {
		int	k = snprintf(big, len, "GET /metrics HTTP/1.1\r\n"
			    "X-Big: ");

		memset(big + k, 'a', len - (size_t)k - 4);
		memcpy(big + len - 4, "\r\n\r\n", 4);
		st = http_raw(port, big, len, NULL);
		check("hostile_huge_header", st != 200, "a 64K header: status "
		    "%d, want a refusal", st);
		free(big);
	}
	st = http_raw(port, junk, sizeof junk - 1, NULL);
	check("hostile_junk", st != 200, "junk bytes: status %d", st);

	/* The cap: 16 idle connections; a 17th waits until one closes. */
	for (i = 0; i < 16; i++) {
		struct sockaddr_in	sin;

		if ((idle[n] = socket(AF_INET, SOCK_STREAM, 0)) == -1)
			break;
		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons((uint16_t)atoi(port));
		if (connect(idle[n], (struct sockaddr *)&sin, sizeof sin) != 0) {
			close(idle[n]);
			break;
		}
		n++;
	}
	/* The backlog keeps order: the server takes the 16 first. */
	extra_fd = -1;
	{
		struct sockaddr_in	sin;
		static const char	get[] = "GET /metrics HTTP/1.1\r\n"
					    "Host: x\r\nConnection: close\r\n"
					    "\r\n";

		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons((uint16_t)atoi(port));
		if ((extra_fd = socket(AF_INET, SOCK_STREAM, 0)) != -1 &&
		    connect(extra_fd, (struct sockaddr *)&sin, sizeof sin) ==
		    0)
			(void)send(extra_fd, get, sizeof get - 1, MSG_NOSIGNAL);
	}
	pfd.fd = extra_fd;
	pfd.events = POLLIN;
	/* Held back: no answer while 16 are open (only a pass can wait). */
	check("hostile_cap_holds", n == 16 && extra_fd != -1 &&
	    poll(&pfd, 1, 500) == 0, "a 17th connection was answered while "
	    "16 were open (%d opened)", n);
	for (i = 0; i < n; i++)
		close(idle[i]);
	pfd.revents = 0;
	check("hostile_cap_releases", extra_fd != -1 &&
	    poll(&pfd, 1, RECV_TIMEOUT_S * 1000) == 1, "the 17th connection "
	    "got no answer after the others closed");
	if (extra_fd != -1)
		close(extra_fd);

	st = http_get(port, "/metrics", &body);
	check("hostile_still_serves", st == 200 && body != NULL &&
	    sample(body, "vcl_http_refused_total") >= 3, "GET /metrics after "
	    "the hostile requests: status %d", st);
	free(body);
	check("hostile_server_alive", srv_alive(&a) && conn_session(&c, &a) ==
	    0, "the VCL port no longer serves after hostile HTTP");
	conn_close(&c);
out:
	srv_stop(&a, "hostile_server_exit");
}

/*
 * Held requests in Stats: a marker waiting on an unset user event is held
 * (now 1, in all 1); setting the event runs it (now 0, in all still 1).
 */
static void
test_held(void)
{
	struct srv		 a;
	struct conn		 c;
	Vcl__StatsResult	 st = VCL__STATS_RESULT__INIT;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	 ue = VCL__CREATE_USER_EVENT__INIT;
	Vcl__Marker		 mk = VCL__MARKER__INIT;
	Vcl__Enqueue		 q = VCL__ENQUEUE__INIT;
	Vcl__SetUserEventStatus	 set = VCL__SET_USER_EVENT_STATUS__INIT;
	uint64_t		 wait = 3;
	int			 i, ok;

	if (!srv_start(&a, "held_server", "127.0.0.1:0", NULL))
		return;
	if (!check("held_session", conn_session(&c, &a) == 0 &&
	    create_context(&c, 1) == 0 && create_queue(&c, 2, 1) == 0,
	    "no session, context or queue"))
		goto out;
	ue.id = 3;
	ue.context = 1;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &ue;
	send_req(&c, &r, NULL, 0);
	q.queue = 2;
	q.event = 4;
	q.n_wait = 1;
	q.wait = &wait;
	mk.q = &q;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &mk;
	send_req(&c, &r, NULL, 0);
	ok = stats(&c, &st) == 0;
	check("held_counted", ok && st.held_now == 1 && st.held_total == 1 &&
	    st.has_held_now, "held now %llu, in all %llu; want 1 and 1",
	    (unsigned long long)st.held_now,
	    (unsigned long long)st.held_total);
	{
		/* stats() keeps numbers only: strings need the reply. */
		Vcl__Stats	m = VCL__STATS__INIT;
		struct reply	rp;
		Vcl__StatsResult *sr;

		r.call_case = VCL__REQUEST__CALL_STATS;
		r.stats = &m;
		ok = call(&c, &r, NULL, 0, &rp) == 0;
		sr = ok ? rp.r->stats : NULL;
		check("held_stats_fields", sr != NULL && sr->version != NULL &&
		    sr->transport != NULL && strcmp(sr->transport, "tcp") ==
		    0 && sr->slow_ms == 5 && sr->sessions_total == 1 &&
		    sr->n_ops >= 4, "version, transport, slow_ms, "
		    "sessions_total or ops missing from StatsResult");
		if (ok)
			reply_free(&rp);
	}
	set.event = 3;
	set.status = CL_COMPLETE;
	r.call_case = VCL__REQUEST__CALL_SET_USER_EVENT_STATUS;
	r.set_user_event_status = &set;
	send_req(&c, &r, NULL, 0);
	for (i = 0; i < STATS_POLLS; i++) {
		if ((ok = stats(&c, &st) == 0) && st.held_now == 0)
			break;
		poll_wait();
	}
	check("held_released", ok && st.held_now == 0 && st.held_total == 1,
	    "held now %llu, in all %llu after the event was set; want 0 "
	    "and 1", (unsigned long long)st.held_now,
	    (unsigned long long)st.held_total);
	conn_close(&c);
out:
	srv_stop(&a, "held_server_exit");
}

/* Poll Stats (bounded) until migrations in (or out) reach want; 1 if so. */
static int
wait_count(struct conn *c, int in, uint64_t want, uint64_t *got)
{
	Vcl__StatsResult	st = VCL__STATS_RESULT__INIT;
	int			i;

	*got = 0;
	for (i = 0; i < STATS_POLLS; i++) {
		if (stats(c, &st) != 0)
			return (0);
		*got = in ? st.migrations_in : st.migrations_out;
		if (*got >= want)
			return (*got == want);
		poll_wait();
	}
	return (0);
}

/*
 * The link x opened to y, as vcl nodes shows it: the transport and why
 * that x's Stats give for it (not a prediction).
 */
static void
migr_link_shown(const struct srv *x, const char *xaddr, const char *yaddr)
{
	const char		*tool = getenv("VCL_TEST_TOOL");
	char			 nodes[160], want[512];
	const char		*env[] = { nodes, NULL };
	const char		*argv[] = { tool, "nodes", NULL };
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__Stats		 m = VCL__STATS__INIT;
	struct conn		 w;
	struct reply		 rp;
	size_t			 i;

	want[0] = '\0';
	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if (conn_session(&w, x) == 0 && call(&w, &r, NULL, 0, &rp) == 0) {
		for (i = 0; rp.r->stats != NULL &&
		    i < rp.r->stats->n_peer_links; i++)
			if (strcmp(rp.r->stats->peer_links[i]->address,
			    yaddr) == 0 && rp.r->stats->peer_links[i]->why !=
			    NULL)
				snprintf(want, sizeof want, "link %s -> %s: "
				    "%s (%s)\n", xaddr, yaddr,
				    rp.r->stats->peer_links[i]->transport,
				    rp.r->stats->peer_links[i]->why);
		reply_free(&rp);
	}
	conn_close(&w);
	if (!check("migr_link_why", want[0] != '\0', "no link to %s with a "
	    "reason in Stats", yaddr) || tool == NULL)
		return;
	snprintf(nodes, sizeof nodes, "VCL_NODES=%s %s", xaddr, yaddr);
	check("migr_link_shown", run(argv, env) == 0 && has(out_path, want),
	    "no \"%.*s\" in %s", (int)strlen(want) - 1, want, out_path);
}

/*
 * Migrations in Stats: a buffer range migrated from server X to server Y
 * (MigrateOut on X, MigrateIn on Y, X pushing over a peer link) counts one
 * out on X and one in on Y.
 */
static void
test_migrations(void)
{
	struct srv		 x, y;
	struct conn		 cx, cy, w;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__MigrateOut		 mo = VCL__MIGRATE_OUT__INIT;
	Vcl__MigrateIn		 mi = VCL__MIGRATE_IN__INIT;
	Vcl__PeerDest		 d = VCL__PEER_DEST__INIT;
	Vcl__Enqueue		 q = VCL__ENQUEUE__INIT;
	uint8_t			 data[4096];
	char			 xaddr[64], yaddr[64];
	uint64_t		 sid = 0, key = 0, got = 0;
	cl_int			 st = 1, st2 = 1;

	memset(data, 0x5a, sizeof data);
	cx.fd = cy.fd = -1;
	if (!srv_start(&x, "migr_server_x", "127.0.0.1:0", NULL))
		return;
	if (!srv_start(&y, "migr_server_y", "127.0.0.1:0", NULL))
		goto stop_x;
	snprintf(xaddr, sizeof xaddr, "127.0.0.1:%s", x.port);
	snprintf(yaddr, sizeof yaddr, "127.0.0.1:%s", y.port);
	if (!check("migr_sessions", conn_session(&cx, &x) == 0 &&
	    create_context(&cx, 1) == 0 && create_queue(&cx, 2, 1) == 0 &&
	    create_buffer(&cx, 3, 1, sizeof data, data, sizeof data) == 0 &&
	    conn_open(&cy, &y) == 0 && hello_as(&cy, 0, &sid, &key) == 0 &&
	    create_context(&cy, 1) == 0 && create_queue(&cy, 2, 1) == 0 &&
	    create_buffer(&cy, 3, 1, sizeof data, NULL, 0) == 0,
	    "no sessions, contexts, queues or buffers"))
		goto out;
	q.queue = 2;
	q.has_event = 1;
	q.event = 10;
	mi.q = &q;
	mi.mem = 3;
	mi.size = sizeof data;
	mi.transfer = 100;
	mi.source = xaddr;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_IN;
	r.migrate_in = &mi;
	send_req(&cy, &r, NULL, 0);
	d.addr = yaddr;
	d.session = sid;
	d.key = key;
	mo.context = 1;
	mo.mem = 3;
	mo.size = sizeof data;
	mo.dest = &d;
	mo.transfer = 100;
	mo.has_event = 1;
	mo.event = 101;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &mo;
	send_req(&cx, &r, NULL, 0);
	check("migr_done", wait_notify(&cx, 101, &st) == 0 && st == 0 &&
	    wait_notify(&cy, 10, &st2) == 0 && st2 == 0, "migration events: "
	    "out %d, in %d", st, st2);
	check("migr_out_counted", conn_session(&w, &x) == 0 &&
	    wait_count(&w, 0, 1, &got), "migrations_out on X: %llu, want 1",
	    (unsigned long long)got);
	conn_close(&w);
	check("migr_in_counted", conn_session(&w, &y) == 0 &&
	    wait_count(&w, 1, 1, &got), "migrations_in on Y: %llu, want 1",
	    (unsigned long long)got);
	conn_close(&w);
	migr_link_shown(&x, xaddr, yaddr);
out:
	conn_close(&cx);
	conn_close(&cy);
	srv_stop(&y, "migr_server_y_exit");
stop_x:
	srv_stop(&x, "migr_server_x_exit");
}

static const struct test tests[] = {
	{ "migrations",		test_migrations,	60 },
	{ "held",		test_held,		60 },
	{ "nodes",		test_nodes,		120 },
	{ "stats",		test_stats,		120 },
	{ "metrics",		test_metrics,		120 },
	{ "metrics_hostile",	test_metrics_hostile,	120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
