/*
 * options_test.c - command-line options are spelled out in full:
 * vclserver and the vcl command (VCL_TEST_TOOL) refuse a prefix of a long
 * option (getopt_long took "--port F" for "--port-file F") with an error
 * naming it, exit 2, and act on nothing; the full names still work.
 */
#include <sys/wait.h>

#include "rawproto.h"

/*
 * vclserver --port FILE (no such option; a prefix of --port-file): the
 * server exits 2 at once, its stderr names --port, and FILE is not made.
 */
static void
test_server_prefix(void)
{
	struct srv	 sv;
	char		 pf[PATH_MAX + 16];
	const char	*extra[] = { "--port", pf, NULL };
	const char	*eq[] = { "--frame-t=5", NULL };
	int		 gone;

	snprintf(pf, sizeof pf, "%s/p9000", root);
	if (!check("server_prefix_spawn", srv_spawn(&sv, "127.0.0.1:0",
	    extra) == 0, "cannot start vclserver"))
		return;
	gone = srv_wait_exit(&sv) == 0;
	check("server_prefix_refused", gone && WIFEXITED(sv.status) &&
	    WEXITSTATUS(sv.status) == 2, "vclserver --port: %s, want exit 2",
	    srv_how(&sv));
	check("server_prefix_named", srv_stderr_has(&sv,
	    "unknown option '--port'"), "no \"unknown option '--port'\" in "
	    "%s/stderr", sv.dir);
	check("server_prefix_no_file", access(pf, F_OK) != 0, "%s was made "
	    "(taken as --port-file)", pf);
	if (!gone)
		srv_stop(&sv, "server_prefix_exit");

	/* The --name=value form is checked too. */
	if (!check("server_prefix_eq_spawn", srv_spawn(&sv, "127.0.0.1:0",
	    eq) == 0, "cannot start vclserver"))
		return;
	gone = srv_wait_exit(&sv) == 0;
	check("server_prefix_eq_refused", gone && WIFEXITED(sv.status) &&
	    WEXITSTATUS(sv.status) == 2 && srv_stderr_has(&sv,
	    "unknown option '--frame-t'"), "vclserver --frame-t=5: %s",
	    srv_how(&sv));
	if (!gone)
		srv_stop(&sv, "server_prefix_eq_exit");
}

/*
 * Run the vcl command with args, its stderr into root/NAME.err. Returns
 * its exit status, or -1.
 */
static int
run_tool(const char *tool, const char *const *args, const char *errfile)
{
	const char	*argv[8];
	pid_t		 pid;
	int		 i, fd, st;

	argv[0] = tool;
	for (i = 0; args[i] != NULL && i < 6; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	fflush(stdout);
	if ((pid = fork()) == -1)
		return (-1);
	if (pid == 0) {
		if ((fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600)) !=
		    -1) {
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		if ((fd = open("/dev/null", O_RDWR)) != -1) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
		/* No configured node is reached (port 1 refuses). */
		setenv("VCL_NODES", "127.0.0.1:1", 1);
		execv(tool, (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return (-1);
	return (WEXITSTATUS(st));
}

/* Whether file holds s. */
static int
file_has(const char *file, const char *s)
{
	char	 buf[4096];
	size_t	 n;
	FILE	*f;

	if ((f = fopen(file, "r")) == NULL)
		return (0);
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (strstr(buf, s) != NULL);
}

/*
 * vcl --tim 1 nodes, and the option after the command: refused (exit 2,
 * named); vcl --timeout 1 nodes runs (exit 1: the node is down).
 */
static void
test_tool_prefix(void)
{
	const char	*tool = getenv("VCL_TEST_TOOL");
	const char	*pre[] = { "--tim", "1", "nodes", NULL };
	const char	*after[] = { "nodes", "--js", NULL };
	const char	*full[] = { "--timeout", "1", "nodes", NULL };
	char		 err[PATH_MAX + 16];
	int		 rc;

	if (!check("tool_env", tool != NULL, "VCL_TEST_TOOL is not set"))
		return;
	snprintf(err, sizeof err, "%s/tool.err", root);
	rc = run_tool(tool, pre, err);
	check("tool_prefix_refused", rc == 2 && file_has(err,
	    "unknown option '--tim'"), "vcl --tim 1 nodes: exit %d, stderr "
	    "in %s", rc, err);
	rc = run_tool(tool, after, err);
	check("tool_prefix_after_command", rc == 2 && file_has(err,
	    "unknown option '--js'"), "vcl nodes --js: exit %d, stderr in %s",
	    rc, err);
	rc = run_tool(tool, full, err);
	check("tool_full_name", rc == 1, "vcl --timeout 1 nodes: exit %d "
	    "(want 1: the node is down)", rc);
}

static const struct test tests[] = {
	{ "server_prefix", test_server_prefix, 60 },
	{ "tool_prefix", test_tool_prefix, 30 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests,
	    sizeof tests / sizeof tests[0]));
}
