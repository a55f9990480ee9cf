/* soak_test.c - many libvcl clients, random kills, a server lost and back. */

/*
 * usage: soak_test VCLSERVER SOAK_CLIENT
 *
 * Two vclservers, A and B. SOAK_CLIENTS (default 64) soak_client processes
 * run at once through libvcl (the vcl.icd in VCL_TEST_ICD_DIR): some on A,
 * some on B, some on both (their rounds migrate buffers between the two).
 * Whenever one ends another starts. Every half second a random client is
 * SIGKILLed. Half way through, B is SIGKILLed and a new B started; clients
 * started after that use the new one. A latency client on A does blocking
 * 4-byte round trips the whole time and reports its percentiles.
 *
 * Passes when: no client gives a wrong result or dies of a signal it was not
 * sent; every client on A only, and every client started after the restart,
 * succeeds; clients of the lost B end (with an error) instead of hanging;
 * every client exits; afterwards both servers hold zero objects and zero
 * bytes and exit 0 on SIGTERM. SOAK_SECONDS (default 40) sets the length:
 * longer runs are the same test; SOAK_TRANSPORTS the servers'
 * --transports (default: none given, ucx between the two, placing from
 * 64 KiB: VCL_UCX_PLACE_MIN unless set).
 */

#include "rawproto.h"

#define SOAK_SLOTS	1024		/* clients over the whole run */
#define SOAK_END_S	60		/* clients must all exit by then */
#define SOAK_SETTLE_S	30		/* servers must be empty by then */

enum soak_where { SOAK_A, SOAK_AB, SOAK_B };

struct soak_client {
	pid_t		pid;
	enum soak_where	where;
	int		old_b;		/* uses the B that gets killed */
	int		killed;		/* SIGKILLed by the test */
	int		status;
	int		done;
};

static struct soak_client	clients[SOAK_SLOTS];
static int			nclients;

/* Seconds since an arbitrary start, monotonic. */
static double
soak_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/* An environment number, or def. */
static long
soak_env(const char *name, long def)
{
	const char	*v = getenv(name);

	return (v != NULL && *v != '\0' ? strtol(v, NULL, 10) : def);
}

/*
 * Start one soak_client with the given arguments, VCL_NODES set to nodes,
 * its output in DIR/client-N.log. Returns the pid or -1.
 */
static pid_t
soak_spawn(const char *nodes, const char *icd, const char *a1,
    const char *a2, const char *a3, int n)
{
	char	log[PATH_MAX + 32];
	pid_t	pid;
	int	fd;

	snprintf(log, sizeof log, "%s/client-%d.log", root, n);
	fflush(stdout);
	if ((pid = fork()) == -1)
		return (-1);
	if (pid == 0) {
		if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600)) != -1) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		if ((fd = open("/dev/null", O_RDONLY)) != -1) {
			dup2(fd, STDIN_FILENO);
			close(fd);
		}
		setenv("VCL_NODES", nodes, 1);
		setenv("OCL_ICD_VENDORS", icd, 1);
		execl(client_path, client_path, a1, a2, a3, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", client_path, strerror(errno));
		_exit(127);
	}
	return (pid);
}

/* Start a work client of a random kind on A, B or both. */
static void
soak_start_work(const struct srv *a, const struct srv *b, int b_is_old,
    const char *icd, double seconds, unsigned *seed)
{
	struct soak_client	*c;
	char			 nodes[128], secs[32], sd[32];
	unsigned		 r = (unsigned)rand_r(seed) % 10;

	if (nclients >= SOAK_SLOTS)
		return;
	c = &clients[nclients];
	memset(c, 0, sizeof *c);
	c->where = r < 4 ? SOAK_A : r < 8 ? SOAK_AB : SOAK_B;
	c->old_b = c->where != SOAK_A && b_is_old;
	switch (c->where) {
	case SOAK_A:
		snprintf(nodes, sizeof nodes, "127.0.0.1:%s", a->port);
		break;
	case SOAK_AB:
		snprintf(nodes, sizeof nodes, "127.0.0.1:%s,127.0.0.1:%s",
		    a->port, b->port);
		break;
	case SOAK_B:
		snprintf(nodes, sizeof nodes, "127.0.0.1:%s", b->port);
		break;
	}
	snprintf(secs, sizeof secs, "%.1f", seconds);
	snprintf(sd, sizeof sd, "%u", (unsigned)rand_r(seed));
	c->pid = soak_spawn(nodes, icd, "work", secs, sd, nclients);
	if (c->pid > 0)
		nclients++;
}

/*
 * A hung client's threads' stacks, appended to its log, where gdb is
 * installed: a hang is seldom reproduced, and its stacks say where.
 */
static void
soak_stacks(pid_t pid, const char *dir, int i)
{
	char	cmd[1024];

	if (access("/usr/bin/gdb", X_OK) != 0)
		return;
	snprintf(cmd, sizeof cmd, "/usr/bin/gdb -q -batch -p %d -ex "
	    "'thread apply all bt' >> %s/client-%d.log 2>&1 </dev/null",
	    (int)pid, dir, i);
	if (system(cmd) != 0)
		note("gdb could not take client %d's stacks", i);
}

/* Reap the clients that ended; returns how many are still running. */
static int
soak_reap(void)
{
	int	i, running = 0;

	for (i = 0; i < nclients; i++) {
		if (clients[i].done)
			continue;
		if (waitpid(clients[i].pid, &clients[i].status, WNOHANG) ==
		    clients[i].pid)
			clients[i].done = 1;
		else
			running++;
	}
	return (running);
}

/* SIGKILL one random running work client. */
static void
soak_kill_one(unsigned *seed)
{
	int	i, tries;

	for (tries = 0; tries < 8; tries++) {
		i = (int)((unsigned)rand_r(seed) % (unsigned)nclients);
		if (!clients[i].done) {
			clients[i].killed = 1;
			kill(clients[i].pid, SIGKILL);
			return;
		}
	}
}

/*
 * Judge one ended client: returns NULL if its end is acceptable, else why
 * not. A client that lost B may fail with status 3; nothing may give a
 * wrong result (2) or die of a signal the test did not send.
 */
static const char *
soak_judge(const struct soak_client *c)
{
	int	st = c->status;

	if (WIFSIGNALED(st))
		return (c->killed && WTERMSIG(st) == SIGKILL ? NULL :
		    "died of a signal the test did not send");
	if (!WIFEXITED(st))
		return ("ended oddly");
	if (WEXITSTATUS(st) == 0)
		return (NULL);
	if (WEXITSTATUS(st) == 2)
		return ("wrong result");
	if (WEXITSTATUS(st) == 3 && c->old_b)
		return (NULL);
	return ("an OpenCL call failed");
}

/* Count the lines of a file that contain s. */
static int
soak_file_has(const char *path, const char *s, char *line, size_t len)
{
	FILE	*f;
	int	 found = 0;

	if ((f = fopen(path, "r")) == NULL)
		return (0);
	while (fgets(line, (int)len, f) != NULL)
		if (strstr(line, s) != NULL) {
			found = 1;
			break;
		}
	fclose(f);
	return (found);
}

/*
 * Check that a server comes back to zero objects and zero bytes. Sessions
 * of killed clients are freed once their device work completes, which on
 * two busy cores can take seconds: SOAK_SETTLE_S bounds it.
 */
static void
soak_empty(const char *name, struct conn *c, const char *which)
{
	Vcl__StatsResult	st = VCL__STATS_RESULT__INIT;
	int			i, rc = -1;

	for (i = 0; i < SOAK_SETTLE_S * 100; i++) {
		if ((rc = stats(c, &st)) != 0)
			break;
		if (st.objects == 0 && st.bytes == 0)
			break;
		poll_wait();
	}
	check(name, rc == 0 && st.objects == 0 && st.bytes == 0,
	    "%s: stats %s, %llu objects and %llu bytes left after %d s",
	    which, rc == 0 ? "ok" : "failed", (unsigned long long)st.objects,
	    (unsigned long long)st.bytes, SOAK_SETTLE_S);
}

/*
 * The longest the server's loop was held, from its "took N ms" lines (it
 * logs anything that holds the loop 5 ms or more), and the line.
 */
static double
soak_longest_hold(const struct srv *sv, char *line, size_t len)
{
	char	 path[PATH_MAX + 16], buf[512];
	FILE	*f;
	double	 ms, max = 0;
	char	*p;

	snprintf(path, sizeof path, "%s/stderr", sv->dir);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	while (fgets(buf, sizeof buf, f) != NULL) {
		if ((p = strstr(buf, " took ")) == NULL)
			continue;
		ms = strtod(p + 6, NULL);
		if (ms > max) {
			max = ms;
			snprintf(line, len, "%.*s", (int)strcspn(buf, "\n"),
			    buf);
		}
	}
	fclose(f);
	return (max);
}

/* The whole soak, as one group. */
static void
test_soak(void)
{
	struct srv		 a, b, b2;
	struct conn		 ca, cb;
	const char		*icd = getenv("VCL_TEST_ICD_DIR");
	const char		*extra[] = { "--max-sessions", "512", NULL, NULL,
	    NULL };
	char			 nodes[64], secs[32], path[PATH_MAX + 32];
	char			 line[256];
	long			 seconds = soak_env("SOAK_SECONDS", 40);
	long			 want = soak_env("SOAK_CLIENTS", 64);
	double			 t0, t, next_kill, end;
	unsigned		 seed = (unsigned)soak_env("SOAK_SEED", 1);
	pid_t			 lat;
	int			 i, running, latst, b_old = 1, kills = 0;
	int			 bad = 0, failed_b = 0, ok_runs = 0;

	if (!check("soak_icd_dir", icd != NULL && *icd != '\0',
	    "VCL_TEST_ICD_DIR (the directory of vcl.icd) is not set"))
		return;
	/*
	 * Buffers of up to 1 MiB: placed in shared staging from 64 KiB (the
	 * default minimum is 1 MiB), so that kills meet placed pushes too,
	 * and smaller ones in band; SOAK_TRANSPORTS: the servers'
	 * --transports (default: theirs, ucx between the two).
	 */
	setenv("VCL_UCX_PLACE_MIN", "65536", 0);
	if (getenv("SOAK_TRANSPORTS") != NULL) {
		extra[2] = "--transports";
		extra[3] = getenv("SOAK_TRANSPORTS");
	}
	note("%ld s, %ld clients at once, seed %u, transports %s", seconds,
	    want, seed, extra[3] != NULL ? extra[3] : "(default)");
	if (!srv_start(&a, "soak_server_a", "127.0.0.1:0", extra))
		return;
	if (!srv_start(&b, "soak_server_b", "127.0.0.1:0", extra)) {
		srv_stop(&a, "soak_server_a_exit");
		return;
	}
	b2 = b;
	snprintf(nodes, sizeof nodes, "127.0.0.1:%s", a.port);
	snprintf(secs, sizeof secs, "%ld", seconds);
	lat = soak_spawn(nodes, icd, "lat", secs, NULL, SOAK_SLOTS);

	t0 = soak_now();
	end = t0 + (double)seconds;
	next_kill = t0 + 0.5;
	for (;;) {
		t = soak_now();
		running = soak_reap();
		if (t >= end)
			break;
		while (running < want && t < end - 2.0) {
			soak_start_work(&a, &b2, b_old, icd,
			    2.0 + (double)((unsigned)rand_r(&seed) % 80) / 10.0,
			    &seed);
			running++;
		}
		if (t >= next_kill && nclients > 0) {
			soak_kill_one(&seed);
			kills++;
			next_kill = t + 0.5;
		}
		if (b_old && t >= t0 + (double)seconds / 2.0) {
			kill(b.pid, SIGKILL);
			while (!srv_reap(&b))
				poll_wait();
			if (!srv_start(&b2, "soak_server_b_restart",
			    "127.0.0.1:0", extra))
				break;
			b_old = 0;
			note("B killed and restarted at %.1f s",
			    soak_now() - t0);
		}
		poll_wait();
	}

	/* Every client must end by itself; one still running has hung. */
	while (soak_reap() > 0 && soak_now() < end + SOAK_END_S)
		poll_wait();
	for (i = 0; i < nclients; i++) {
		const char	*why;

		if (!clients[i].done) {
			check("soak_client_exits", 0, "client %d (pid %d) "
			    "still running %d s after the end: hung; see "
			    "%s/client-%d.log", i, (int)clients[i].pid,
			    SOAK_END_S, root, i);
			soak_stacks(clients[i].pid, root, i);
			kill(clients[i].pid, SIGKILL);
			waitpid(clients[i].pid, &clients[i].status, 0);
			bad++;
			continue;
		}
		if ((why = soak_judge(&clients[i])) != NULL) {
			check("soak_client_result", 0, "client %d: %s "
			    "(status %#x); see %s/client-%d.log", i, why,
			    clients[i].status, root, i);
			bad++;
		} else if (WIFEXITED(clients[i].status) &&
		    WEXITSTATUS(clients[i].status) == 3)
			failed_b++;
		else if (!clients[i].killed)
			ok_runs++;
	}
	check("soak_clients", bad == 0, "%d of %d clients ended badly", bad,
	    nclients);
	check("soak_clients_ran", ok_runs > 0, "no client finished its rounds");
	note("%d clients: %d finished right, %d killed by the test, %d lost "
	    "B", nclients, ok_runs, kills, failed_b);

	/* The latency client ran against A the whole time. */
	if (waitpid(lat, &latst, 0) == lat)
		check("soak_latency_client", WIFEXITED(latst) &&
		    WEXITSTATUS(latst) == 0, "status %#x; see %s/client-%d.log",
		    latst, root, SOAK_SLOTS);
	snprintf(path, sizeof path, "%s/client-%d.log", root, SOAK_SLOTS);
	if (soak_file_has(path, "lat ", line, sizeof line))
		note("well-behaved client: %.*s", (int)strcspn(line, "\n"),
		    line);

	line[0] = '\0';
	note("A's loop held at most %.1f ms: %s",
	    soak_longest_hold(&a, line, sizeof line), line);

	/* Nothing left behind on either server. */
	ca.fd = cb.fd = -1;
	if (check("soak_a_session", conn_session(&ca, &a) == 0, "no session"))
		soak_empty("soak_a_empty", &ca, "A");
	if (!b_old && check("soak_b_session", conn_session(&cb, &b2) == 0,
	    "no session"))
		soak_empty("soak_b_empty", &cb, "B");
	conn_close(&ca);
	conn_close(&cb);
	srv_stop(&a, "soak_server_a_exit");
	if (!b_old)
		srv_stop(&b2, "soak_server_b_exit");
}

static const struct test tests[] = {
	{ "soak",	test_soak,	0 },
};

int
main(int argc, char **argv)
{
	struct test	t = tests[0];

	/* The group's alarm: the run, the clients' grace, start and stop. */
	t.timeout = (unsigned)soak_env("SOAK_SECONDS", 40) + SOAK_END_S + 120;
	return (rawproto_main(argc, argv, &t, 1));
}
