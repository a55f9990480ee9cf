/* tls_test.c - TLS on client and peer links, end to end through libvcl. */

/*
 * usage: tls_test VCLSERVER [BUSY_CLIENT]
 *
 * Makes a throwaway CA and certificates with the openssl command, starts
 * vclservers with --tls-cert/--tls-key/--tls-ca and runs the hello and
 * advection examples (VCL_TEST_HELLO, VCL_TEST_ADVECTION) through libvcl
 * (VCL_TEST_ICD_DIR) against them. A small TCP relay in front of a server
 * records every byte both ways, to show the kernel source crosses the wire
 * in clear without TLS and never with it.
 */

#include "rawproto.h"

#define PROG_POLLS	12000	/* a program run: 120 s */

/* In hello's kernel source: seen on a plain wire, never under TLS. */
#define HELLO_SECRET	"vadd(__global const float *a"

static char	pki[PATH_MAX];

/* Run a shell command line. Returns its exit status (-1: not run). */
static int
sh(const char *fmt, ...)
{
	char	cmd[8192];
	va_list	ap;
	int	rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	fflush(stdout);
	rc = system(cmd);
	return (rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc));
}

/*
 * The throwaway PKI: ca (signs srv, other, client) and evil (a CA nobody
 * trusts, signing evilsrv). srv names 127.0.0.1 and localhost; other names
 * only other.example. Returns 0 or -1.
 */
static int
make_pki(void)
{
	static const char	*certs[][4] = {
		/* name, signing CA, subjectAltName, key usage */
		{ "srv", "ca", "IP:127.0.0.1,DNS:localhost", "serverAuth,"
		    "clientAuth" },
		{ "other", "ca", "DNS:other.example", "serverAuth" },
		{ "client", "ca", "DNS:client", "clientAuth" },
		{ "evilsrv", "evil", "IP:127.0.0.1,DNS:localhost",
		    "serverAuth" },
	};
	size_t	i;

	snprintf(pki, sizeof pki, "%s/pki", root);
	if (access(pki, F_OK) == 0)
		return (0);
	if (mkdir(pki, 0700) != 0)
		return (-1);
	if (sh("cd '%s' && for ca in ca evil; do openssl req -x509 -newkey ec "
	    "-pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $ca.key -out "
	    "$ca.pem -days 2 -subj /CN=vcl-test-$ca >/dev/null 2>&1 || "
	    "exit 1; done", pki) != 0)
		return (-1);
	for (i = 0; i < sizeof certs / sizeof certs[0]; i++) {
		if (sh("cd '%s' && printf 'subjectAltName=%s\\n"
		    "extendedKeyUsage=%s\\n' >%s.ext && openssl req -newkey ec "
		    "-pkeyopt ec_paramgen_curve:P-256 -nodes -keyout %s.key "
		    "-out %s.csr -subj /CN=%s >/dev/null 2>&1 && openssl x509 "
		    "-req -in %s.csr -CA %s.pem -CAkey %s.key -CAcreateserial "
		    "-out %s.pem -days 2 -extfile %s.ext >/dev/null 2>&1 && "
		    "chmod 600 %s.key", pki, certs[i][2], certs[i][3],
		    certs[i][0], certs[i][0], certs[i][0], certs[i][0],
		    certs[i][0], certs[i][1], certs[i][1], certs[i][0],
		    certs[i][0], certs[i][0]) != 0)
			return (-1);
	}
	return (0);
}

/* A PKI file's path, in one of a few rotating buffers. */
static const char *
pki_file(const char *name)
{
	static char	buf[8][PATH_MAX + 64];
	static int	next;
	char		*p = buf[next++ % 8];

	snprintf(p, PATH_MAX + 64, "%s/%s", pki, name);
	return (p);
}

/* Start a TLS server with cert/key NAME.pem/NAME.key and CA file ca. */
static int
tls_start(struct srv *sv, const char *check_name, const char *name,
    const char *ca, const char *more)
{
	char		 cert[PATH_MAX + 16], key[PATH_MAX + 16];
	char		 cafile[PATH_MAX + 16];
	const char	*extra[8];
	int		 n = 0;

	snprintf(cert, sizeof cert, "%s/%s.pem", pki, name);
	snprintf(key, sizeof key, "%s/%s.key", pki, name);
	snprintf(cafile, sizeof cafile, "%s/%s.pem", pki, ca);
	extra[n++] = "--tls-cert";
	extra[n++] = cert;
	extra[n++] = "--tls-key";
	extra[n++] = key;
	extra[n++] = "--tls-ca";
	extra[n++] = cafile;
	if (more != NULL)
		extra[n++] = more;
	extra[n] = NULL;
	return (srv_start(sv, check_name, "127.0.0.1:0", extra));
}

/*
 * Run a libvcl program with the environment env ("NAME=VALUE", NULL ends;
 * "NAME" alone unsets), its stdout and stderr to out. Returns its exit
 * status, or -1 when it did not exit normally in time.
 */
static int
run_prog(const char *const *argv, const char *const *env, const char *out)
{
	const char	*icd = getenv("VCL_TEST_ICD_DIR");
	pid_t		 pid, r = 0;
	int		 fd, st = 0, i;
	char		 kv[1024], *eq;

	fflush(stdout);
	if ((pid = fork()) == -1)
		return (-1);
	if (pid == 0) {
		if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600)) !=
		    -1) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		if (icd != NULL)
			setenv("OCL_ICD_VENDORS", icd, 1);
		unsetenv("VCL_TLS");
		unsetenv("VCL_TLS_CA");
		unsetenv("VCL_TLS_INSECURE");
		unsetenv("VCL_TOKEN_FILE");
		setenv("VCL_STRICT", "1", 1);
		setenv("VCL_CONNECT_TIMEOUT_MS", "3000", 1);
		for (i = 0; env[i] != NULL; i++) {
			snprintf(kv, sizeof kv, "%s", env[i]);
			if ((eq = strchr(kv, '=')) != NULL) {
				*eq = '\0';
				setenv(kv, eq + 1, 1);
			} else
				unsetenv(kv);
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

/* True when file path holds the bytes s. */
static int
file_has(const char *path, const char *s)
{
	FILE	*f;
	char	*buf;
	long	 n;
	int	 found = 0;

	if ((f = fopen(path, "rb")) == NULL)
		return (0);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	if (n > 0 && (buf = malloc((size_t)n + 1)) != NULL) {
		if (fread(buf, 1, (size_t)n, f) == (size_t)n)
			found = memmem(buf, (size_t)n, s, strlen(s)) != NULL;
		free(buf);
	}
	fclose(f);
	return (found);
}

/* True once the server ends the connection (whatever it sent first). */
static int
raw_closed(int fd)
{
	struct pollfd	pfd;
	char		buf[4096];
	int		i;

	pfd.fd = fd;
	pfd.events = POLLIN;
	for (i = 0; i < READY_POLLS; i++) {
		if (poll(&pfd, 1, POLL_MS) == 1 && read(fd, buf, sizeof buf) <= 0)
			return (1);
	}
	return (0);
}

/* Poll until a server's stderr has s (bounded). */
static int
srv_wait_log(const struct srv *sv, const char *s)
{
	int	i;

	for (i = 0; i < READY_POLLS; i++) {
		if (srv_stderr_has(sv, s))
			return (1);
		poll_wait();
	}
	return (0);
}

/*
 * The relay: a child listening on 127.0.0.1 (its port in *port) that
 * forwards each connection to 127.0.0.1:to and appends every byte, both
 * ways, to the file capture. Returns its pid, or -1.
 */
static pid_t
relay_start(const char *to, const char *capture, char *port, size_t plen)
{
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof sin;
	struct pollfd		 pfd[33];
	int			 lfd, cap, peer[33], n = 1, i, fd, one = 1;
	char			 buf[65536], err[256];
	ssize_t			 r;
	pid_t			 pid;

	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return (-1);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
	    listen(lfd, 16) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &sl) != 0) {
		close(lfd);
		return (-1);
	}
	snprintf(port, plen, "%u", ntohs(sin.sin_port));
	fflush(stdout);
	if ((pid = fork()) != 0) {
		close(lfd);
		return (pid);
	}
	if ((cap = open(capture, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1)
		_exit(1);
	pfd[0].fd = lfd;
	pfd[0].events = POLLIN;
	for (;;) {
		if (poll(pfd, (nfds_t)n, -1) < 0)
			continue;
		if ((pfd[0].revents & POLLIN) && n + 2 <= 33) {
			if ((fd = accept(lfd, NULL, NULL)) == -1)
				continue;
			pfd[n].fd = fd;
			pfd[n + 1].fd = vcl_io_connect("127.0.0.1", to, 5000,
			    err, sizeof err);
			if (pfd[n + 1].fd == -1) {
				close(fd);
				continue;
			}
			pfd[n].events = pfd[n + 1].events = POLLIN;
			peer[n] = n + 1;
			peer[n + 1] = n;
			n += 2;
		}
		for (i = 1; i < n; i++) {
			if (pfd[i].fd < 0 || !(pfd[i].revents &
			    (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(pfd[i].fd, buf, sizeof buf);
			if (r <= 0) {
				/* One side is done: end both. */
				close(pfd[i].fd);
				close(pfd[peer[i]].fd);
				pfd[i].fd = pfd[peer[i]].fd = -1;
				continue;
			}
			if (write(cap, buf, (size_t)r) != r ||
			    write(pfd[peer[i]].fd, buf, (size_t)r) != r) {
				close(pfd[i].fd);
				close(pfd[peer[i]].fd);
				pfd[i].fd = pfd[peer[i]].fd = -1;
			}
		}
	}
}

/* Stop the relay. */
static void
relay_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* --- (a) hello through libvcl ------------------------------------------- */

/*
 * With the right CA hello runs and its kernel source never crosses the wire
 * in clear (against a plain server, through the same relay, it does). A
 * client without TLS, or trusting another CA, is refused with a clear
 * message; the certificate must name the host the client dialled.
 */
static void
test_hello(void)
{
	struct srv	 plain, sv, other;
	const char	*hello = getenv("VCL_TEST_HELLO");
	const char	*argv[] = { hello, "-n", "4096", NULL };
	char		 nodes[128], cafile[PATH_MAX + 16], out[PATH_MAX + 16];
	char		 capture[PATH_MAX + 16], rport[16], tlsca[PATH_MAX + 32];
	char		 evilca[PATH_MAX + 32];
	pid_t		 relay;
	int		 rc;

	if (!check("tls_env", hello != NULL, "VCL_TEST_HELLO is not set") ||
	    !check("tls_pki", make_pki() == 0, "openssl could not make the "
	    "test certificates"))
		return;
	snprintf(cafile, sizeof cafile, "%s", pki_file("ca.pem"));
	snprintf(tlsca, sizeof tlsca, "VCL_TLS_CA=%s", cafile);
	snprintf(evilca, sizeof evilca, "VCL_TLS_CA=%s", pki_file("evil.pem"));
	snprintf(out, sizeof out, "%s/hello.out", root);
	snprintf(capture, sizeof capture, "%s/wire", root);

	/* The control: on a plain link the source is there to be seen. */
	if (srv_start(&plain, "tls_plain_server_start", "127.0.0.1:0", NULL)) {
		relay = relay_start(plain.port, capture, rport, sizeof rport);
		snprintf(nodes, sizeof nodes, "VCL_NODES=127.0.0.1:%s", rport);
		{
			const char	*env[] = { nodes, NULL };

			rc = run_prog(argv, env, out);
		}
		relay_stop(relay);
		check("tls_plain_control_runs", rc == 0, "hello exited %d on "
		    "a plain server; see %s", rc, out);
		check("tls_plain_control_seen", file_has(capture,
		    HELLO_SECRET), "the relay did not see the kernel source "
		    "on a plain link: the wire check below proves nothing");
		srv_stop(&plain, "tls_plain_server_exit");
	}

	if (!tls_start(&sv, "tls_server_start", "srv", "ca", NULL))
		return;
	check("tls_server_says_tls", srv_wait_log(&sv, "(TLS)"),
	    "the server's log does not say it listens with TLS");

	/* Through the relay, with TLS: right results, nothing in clear. */
	relay = relay_start(sv.port, capture, rport, sizeof rport);
	snprintf(nodes, sizeof nodes, "VCL_NODES=127.0.0.1:%s", rport);
	{
		const char	*env[] = { nodes, "VCL_TLS=1", tlsca, NULL };

		rc = run_prog(argv, env, out);
	}
	relay_stop(relay);
	check("tls_hello_runs", rc == 0 && file_has(out, "elements OK"),
	    "hello exited %d over TLS; see %s", rc, out);
	check("tls_wire_encrypted", !file_has(capture, HELLO_SECRET) &&
	    !file_has(capture, "vadd"), "the kernel source crossed the wire "
	    "in clear under TLS (%s)", capture);
	check("tls_session_logged", srv_wait_log(&sv, "TLSv1.3"),
	    "the server did not log a TLS 1.3 session");

	/* A client without TLS: a clear error, no hang. */
	snprintf(nodes, sizeof nodes, "VCL_NODES=127.0.0.1:%s", sv.port);
	{
		const char	*env[] = { nodes, NULL };

		rc = run_prog(argv, env, out);
	}
	check("tls_plain_client_refused", rc > 0 && file_has(out,
	    "VCL_TLS=1"), "a client without TLS: exit %d, want a failure "
	    "naming VCL_TLS=1; see %s", rc, out);
	check("tls_plain_client_logged", srv_wait_log(&sv,
	    "TLS handshake failed") || srv_wait_log(&sv, "no TLS handshake"),
	    "the server did not log the refused plain client");

	/* Trusting another CA: the certificate is refused. */
	{
		const char	*env[] = { nodes, "VCL_TLS=1", evilca, NULL };

		rc = run_prog(argv, env, out);
	}
	check("tls_wrong_ca_refused", rc > 0 && file_has(out,
	    "certificate verify failed"), "a client trusting another CA: "
	    "exit %d, want a verify failure; see %s", rc, out);

	/* The name dialled: localhost is in the certificate too. */
	snprintf(nodes, sizeof nodes, "VCL_NODES=localhost:%s", sv.port);
	{
		const char	*env[] = { nodes, "VCL_TLS=1", tlsca, NULL };

		rc = run_prog(argv, env, out);
	}
	check("tls_hostname_ok", rc == 0, "hello by the name localhost "
	    "exited %d; see %s", rc, out);
	srv_stop(&sv, "tls_server_exit");

	/* A certificate for another name, signed by the right CA. */
	if (!tls_start(&other, "tls_other_server_start", "other", "ca", NULL))
		return;
	snprintf(nodes, sizeof nodes, "VCL_NODES=127.0.0.1:%s", other.port);
	{
		const char	*env[] = { nodes, "VCL_TLS=1", tlsca, NULL };

		rc = run_prog(argv, env, out);
	}
	check("tls_hostname_mismatch_refused", rc > 0 && file_has(out,
	    "certificate verify failed") && file_has(out, "mismatch"),
	    "a certificate for other.example at 127.0.0.1: exit %d, want "
	    "a name mismatch; see %s", rc, out);
	/* Only when told, and then with a warning. */
	{
		const char	*env[] = { nodes, "VCL_TLS=1",
		    "VCL_TLS_INSECURE=1", NULL };

		rc = run_prog(argv, env, out);
	}
	check("tls_insecure_runs_warned", rc == 0 && file_has(out,
	    "VCL_TLS_INSECURE"), "VCL_TLS_INSECURE=1: exit %d, want a run "
	    "with a warning; see %s", rc, out);
	srv_stop(&other, "tls_other_server_exit");
}

/* --- (b) raw clients and start-up ---------------------------------------- */

/*
 * A raw client speaking the plain protocol to a TLS server is closed with
 * a message in the log; half a TLS setup refuses to start.
 */
static void
test_raw(void)
{
	struct srv	 sv;
	struct conn	 c;
	uint8_t		 junk[VCL_FRAME_HDR_LEN];
	const char	*half[3], *badkey[5];

	if (!check("tls_raw_pki", make_pki() == 0, "no certificates"))
		return;
	half[0] = badkey[0] = "--tls-cert";
	half[1] = badkey[1] = pki_file("srv.pem");
	half[2] = NULL;
	badkey[2] = "--tls-key";
	badkey[3] = pki_file("client.key");
	badkey[4] = NULL;
	if (!tls_start(&sv, "tls_raw_server_start", "srv", "ca", NULL))
		return;
	memset(&c, 0, sizeof c);
	memset(junk, 0x5a, sizeof junk);
	c.fd = vcl_io_connect("127.0.0.1", sv.port, 5000, (char *)junk,
	    sizeof junk);
	if (check("tls_raw_connect", c.fd != -1, "cannot connect")) {
		memset(junk, 0, sizeof junk);
		(void)send_raw(&c, junk, sizeof junk);
		check("tls_raw_plain_closed", raw_closed(c.fd),
		    "a plain frame on a TLS server: connection still open");
		check("tls_raw_plain_logged", srv_wait_log(&sv,
		    "TLS handshake failed"), "no log line for it");
		close(c.fd);
	}
	srv_stop(&sv, "tls_raw_server_exit");

	if (srv_spawn(&sv, "127.0.0.1:0", half) == 0 && srv_wait_exit(&sv) == 0)
		check("tls_cert_without_key_refused", WIFEXITED(sv.status) &&
		    WEXITSTATUS(sv.status) != 0 && srv_stderr_has(&sv,
		    "--tls-key"), "server %s, want an exit naming --tls-key",
		    srv_how(&sv));
	else
		check("tls_cert_without_key_refused", 0, "server started");
	if (srv_spawn(&sv, "127.0.0.1:0", badkey) == 0 &&
	    srv_wait_exit(&sv) == 0)
		check("tls_wrong_key_refused", WIFEXITED(sv.status) &&
		    WEXITSTATUS(sv.status) != 0 && srv_stderr_has(&sv,
		    "does not match"), "server %s, want an exit saying the key "
		    "does not match", srv_how(&sv));
	else
		check("tls_wrong_key_refused", 0, "server started");
}

/* --- (c) peer links and client certificates ------------------------------ */

/*
 * Two TLS servers and an advection that migrates bands between them: the
 * peer link is TLS with the other server's certificate verified, and the
 * results match one device's. A server that asks for client certificates
 * refuses a client without one.
 */
static void
test_peer(void)
{
	struct srv	 a, b;
	const char	*adv = getenv("VCL_TEST_ADVECTION");
	const char	*hello = getenv("VCL_TEST_HELLO");
	const char	*argv[] = { adv, "-n", "256", "-s", "100", NULL };
	const char	*hargv[] = { hello, "-n", "1024", NULL };
	char		 nodes[128], tlsca[PATH_MAX + 32], out[PATH_MAX + 16];
	char		 cert[PATH_MAX + 32], key[PATH_MAX + 32];
	int		 rc;

	if (!check("tls_peer_env", adv != NULL && hello != NULL,
	    "VCL_TEST_ADVECTION or VCL_TEST_HELLO is not set") ||
	    !check("tls_peer_pki", make_pki() == 0, "no certificates"))
		return;
	snprintf(tlsca, sizeof tlsca, "VCL_TLS_CA=%s", pki_file("ca.pem"));
	snprintf(out, sizeof out, "%s/advection.out", root);
	if (!tls_start(&a, "tls_peer_a_start", "srv", "ca", NULL))
		return;
	if (!tls_start(&b, "tls_peer_b_start", "srv", "ca", NULL)) {
		srv_stop(&a, "tls_peer_a_exit");
		return;
	}
	snprintf(nodes, sizeof nodes, "VCL_NODES=127.0.0.1:%s,127.0.0.1:%s",
	    a.port, b.port);
	{
		const char	*env[] = { nodes, "VCL_TLS=1", tlsca, NULL };

		rc = run_prog(argv, env, out);
	}
	check("tls_advection_2nodes", rc == 0 && !file_has(out, "FAIL"),
	    "advection over two TLS servers exited %d; see %s", rc, out);
	check("tls_peer_link_tls", srv_stderr_has(&a, "ready (tcp, TLSv1.3)") ||
	    srv_stderr_has(&b, "ready (tcp, TLSv1.3)"), "no peer link over "
	    "TLS in the servers' logs (%s, %s)", a.dir, b.dir);
	srv_stop(&a, "tls_peer_a_exit");
	srv_stop(&b, "tls_peer_b_exit");

	/* Client certificates, when the server asks for them. */
	if (!tls_start(&a, "tls_verify_clients_start", "srv", "ca",
	    "--tls-verify-clients"))
		return;
	snprintf(nodes, sizeof nodes, "VCL_NODES=127.0.0.1:%s", a.port);
	snprintf(out, sizeof out, "%s/hello-cc.out", root);
	{
		const char	*env[] = { nodes, "VCL_TLS=1", tlsca, NULL };

		rc = run_prog(hargv, env, out);
	}
	check("tls_client_cert_required", rc > 0, "a client without a "
	    "certificate was served (exit %d); see %s", rc, out);
	snprintf(cert, sizeof cert, "VCL_TLS_CERT=%s", pki_file("client.pem"));
	snprintf(key, sizeof key, "VCL_TLS_KEY=%s", pki_file("client.key"));
	{
		const char	*env[] = { nodes, "VCL_TLS=1", tlsca, cert, key,
		    NULL };

		rc = run_prog(hargv, env, out);
	}
	check("tls_client_cert_accepted", rc == 0, "a client with a "
	    "certificate from the CA: exit %d; see %s", rc, out);
	srv_stop(&a, "tls_verify_clients_exit");
}


/*
 * A TLS server killed while libvcl writes to it: OpenSSL writes with
 * write(2), so without care the application dies of SIGPIPE. fault_client
 * leaves SIGPIPE at its default; it must end with an error, never a signal.
 */
static void
test_sigpipe(void)
{
	const char	*fc = getenv("VCL_TEST_FAULT_CLIENT");
	const char	*icd = getenv("VCL_TEST_ICD_DIR");
	char		 nodes[64], out[PATH_MAX + 16], name[64];
	struct srv	 sv;
	pid_t		 pid;
	int		 round, i, st, fd, signalled = 0;

	if (!check("tls_sigpipe_env", fc != NULL && icd != NULL,
	    "VCL_TEST_FAULT_CLIENT or VCL_TEST_ICD_DIR is not set") ||
	    !check("tls_sigpipe_pki", make_pki() == 0, "no certificates"))
		return;
	for (round = 0; round < 10; round++) {
		snprintf(name, sizeof name, "tls_sigpipe_start_%d", round);
		if (!tls_start(&sv, name, "srv", "ca", NULL))
			return;
		snprintf(nodes, sizeof nodes, "127.0.0.1:%s", sv.port);
		snprintf(out, sizeof out, "%s/sigpipe-%d.out", root, round);
		fflush(stdout);
		if ((pid = fork()) == -1)
			break;
		if (pid == 0) {
			if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC,
			    0600)) != -1) {
				dup2(fd, STDOUT_FILENO);
				dup2(fd, STDERR_FILENO);
				close(fd);
			}
			signal(SIGPIPE, SIG_DFL);
			setenv("OCL_ICD_VENDORS", icd, 1);
			setenv("VCL_NODES", nodes, 1);
			setenv("VCL_TLS", "1", 1);
			setenv("VCL_TLS_CA", pki_file("ca.pem"), 1);
			execl(fc, fc, "xfer", "64", (char *)NULL);
			_exit(127);
		}
		/* Kill the server once the client is in its transfer loop. */
		for (i = 0; i < PROG_POLLS && !file_has(out, "ready"); i++)
			poll_wait();
		for (i = 0; i < round * 3; i++)
			poll_wait();
		kill(sv.pid, SIGKILL);
		while (!srv_reap(&sv))
			poll_wait();
		for (i = 0; i < PROG_POLLS; i++) {
			if (waitpid(pid, &st, WNOHANG) == pid)
				break;
			poll_wait();
		}
		snprintf(name, sizeof name, "tls_sigpipe_round_%d", round);
		if (i == PROG_POLLS) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			check(name, 0, "the client hung after its TLS server "
			    "died; see %s", out);
			continue;
		}
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE)
			signalled++;
		check(name, WIFEXITED(st), "the client %s when its TLS server "
		    "died; see %s", WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE ?
		    "died of SIGPIPE" : "died of a signal", out);
	}
	if (signalled > 0)
		note("%d of 10 clients died of SIGPIPE", signalled);
}

static const struct test tests[] = {
	{ "hello",	test_hello,	240 },
	{ "raw",	test_raw,	90 },
	{ "peer",	test_peer,	240 },
	{ "sigpipe",	test_sigpipe,	240 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
