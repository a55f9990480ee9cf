/* build_test.c - program builds read no server file: includes, headers, options. */

/*
 * Raw-protocol tests through a real vclserver on PoCL: a source that
 * #includes a server file (plainly or disguised) fails to build with a log
 * that says why and shows nothing of the file; headers shipped with the
 * build are checked and written into a private directory that is gone
 * afterwards; build options off the whitelist are CL_INVALID_BUILD_OPTIONS.
 */

#include <dirent.h>

#include "rawproto.h"

#define CTX	1
#define PROG	100

struct hdr {
	uint32_t	 dir;
	const char	*name;
	const char	*data;
};

/* Create program id from src and build it; rp gets the reply. -1: none. */
static int
build(struct conn *c, uint64_t id, const char *src, const char *opts,
    const struct hdr *h, size_t nh, struct reply *rp)
{
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	 m = VCL__BUILD_PROGRAM__INIT;
	Vcl__Header		 hv[8], *hp[8];
	size_t			 i;

	if (nh > 8 || create_program(c, id, CTX, src) != 0)
		return (-1);
	for (i = 0; i < nh; i++) {
		vcl__header__init(&hv[i]);
		hv[i].name = (char *)h[i].name;
		hv[i].data.data = (uint8_t *)h[i].data;
		hv[i].data.len = strlen(h[i].data);
		hv[i].has_dir = 1;
		hv[i].dir = h[i].dir;
		hp[i] = &hv[i];
	}
	m.program = id;
	m.options = (char *)opts;
	m.headers = hp;
	m.n_headers = nh;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &m;
	return (call(c, &r, NULL, 0, rp));
}

/* The first device's build log of a reply, or "". */
static const char *
build_log(const struct reply *rp)
{
	if (rp->r->build == NULL || rp->r->build->n_devices == 0 ||
	    rp->r->build->devices[0]->log == NULL)
		return ("");
	return (rp->r->build->devices[0]->log);
}

/* The host's name as /etc/hostname holds it (first line), else gethostname. */
static void
host_name(char *buf, size_t len)
{
	FILE	*f;

	buf[0] = '\0';
	if ((f = fopen("/etc/hostname", "r")) != NULL) {
		if (fgets(buf, (int)len, f) == NULL)
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[0] == '\0' && gethostname(buf, len) != 0)
		buf[0] = '\0';
}

static int
start(struct srv *sv, struct conn *c, const char *name,
    const char *const *extra)
{
	if (!srv_start(sv, name, "127.0.0.1:0", extra))
		return (0);
	if (!check(name, conn_session(c, sv) == 0 && create_context(c, CTX) ==
	    0, "no session")) {
		srv_stop(sv, "server_exit");
		return (0);
	}
	return (1);
}

/* /etc/hostname through #include, plainly and disguised: refused. */
static void
test_hostname(void)
{
	static const char *const srcs[] = {
		"#include \"/etc/hostname\"\n",
		"#/**/include \"/etc/hostname\"\n",
		"# \\\n include \"/etc/hostname\"\n",
		"#\\  \ninclude </etc/hostname>\n",
		"?" "?=include \"/etc/hostname\"\n",
		"%:include \"/etc/hostname\"\n",
		"/* a\n */ #include \"/etc/hostname\"\n",
		"#include \"../../../../../../../../../../etc/hostname\"\n",
		"#include_next </etc/hostname>\n",
		"#define H \"/etc/hostname\"\n#include H\n",
		"#if __has_include(\"/etc/hostname\")\n#endif\n",
		"#define P \"/etc/hostname\"\n#if __has_include(P)\n#endif\n",
		"#pragma GCC dependency \"/etc/hostname\"\n",
		"_Pragma(\"GCC dependency \\\"/etc/hostname\\\"\")\n",
	};
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	char		 host[256], name[64], src[512];
	size_t		 i;

	host_name(host, sizeof host);
	if (!start(&sv, &c, "hostname_server_start", NULL))
		return;
	for (i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
		snprintf(name, sizeof name, "hostname_refused_%zu", i);
		snprintf(src, sizeof src, "%s%s", srcs[i], kernel_src);
		if (!check(name, build(&c, PROG + i, src, NULL, NULL, 0, &rp) ==
		    0, "no reply"))
			break;
		check(name, rp.r->status == CL_BUILD_PROGRAM_FAILURE &&
		    strstr(build_log(&rp), "not allowed") != NULL &&
		    (host[0] == '\0' || strstr(build_log(&rp), host) == NULL),
		    "status %d, log \"%s\" (source %s)", rp.r->status,
		    build_log(&rp), srcs[i]);
		reply_free(&rp);
	}
	conn_close(&c);
	srv_stop(&sv, "hostname_server_exit");
}

/*
 * Pragmas that abort the compiler inside the server's process, plainly and
 * built by macros: refused, and the server lives on. Token pasting without
 * a piece of those names still builds.
 */
static void
test_debug_pragma(void)
{
	static const char *const srcs[] = {
		"#pragma clang __debug crash\n",
		"#pragma clang __debug llvm_fatal_error\n",
		"_Pragma(\"clang __debug crash\")\n",
		"#define S(x) #x\n#define X(x) S(x)\n"
		    "_Pragma(X(clang __debug crash))\n",
		"#define S(x) #x\n#define X(x) S(x)\n#define C(a, b) a##b\n"
		    "C(_Pra, gma)(X(clang C(__de, bug) crash))\n",
		"#define S(x) #x\n#define X(x) S(x)\n#define C(a, b) a%:%:b\n"
		    "_Pragma(X(clang C(__de, bug) crash))\n",
	};
	static const char good[] =
		"#define C(a, b) a##b\n"
		"__kernel void k(__global C(in, t) *a) "
		"{ a[get_global_id(0)] = 1; }\n";
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	char		 name[64], src[512];
	size_t		 i;

	if (!start(&sv, &c, "debug_pragma_server_start", NULL))
		return;
	for (i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
		snprintf(name, sizeof name, "debug_pragma_refused_%zu", i);
		snprintf(src, sizeof src, "%s%s", srcs[i], kernel_src);
		if (!check(name, build(&c, PROG + i, src, NULL, NULL, 0, &rp) ==
		    0, "no reply: did the server die? (source %s)", srcs[i]))
			break;
		check(name, rp.r->status == CL_BUILD_PROGRAM_FAILURE &&
		    strstr(build_log(&rp), "not allowed") != NULL,
		    "status %d, log \"%s\" (source %s)", rp.r->status,
		    build_log(&rp), srcs[i]);
		reply_free(&rp);
	}
	if (check("debug_pragma_paste_reply", build(&c, PROG + 100, good, NULL,
	    NULL, 0, &rp) == 0, "no reply")) {
		check("debug_pragma_paste_builds", rp.r->status == CL_SUCCESS,
		    "status %d, log \"%s\"", rp.r->status, build_log(&rp));
		reply_free(&rp);
	}
	check("debug_pragma_server_alive", srv_alive(&sv), "server %s",
	    srv_how(&sv));
	conn_close(&c);
	srv_stop(&sv, "debug_pragma_server_exit");
}

/* A relative name is not looked up in the server's working directory. */
static void
test_server_cwd(void)
{
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	char		 fname[64], src[256];
	FILE		*f;

	snprintf(fname, sizeof fname, "vcl-build-test-%d.h", (int)getpid());
	if ((f = fopen(fname, "w")) == NULL) {
		check("cwd_file", 0, "cannot write %s", fname);
		return;
	}
	fputs("__kernel void leaked(__global int *a) { a[0] = 42; }\n", f);
	fclose(f);
	snprintf(src, sizeof src, "#include \"%s\"\n%s", fname, kernel_src);
	if (start(&sv, &c, "cwd_server_start", NULL)) {
		if (check("cwd_reply", build(&c, PROG, src, NULL, NULL, 0,
		    &rp) == 0, "no reply")) {
			check("cwd_not_found", rp.r->status ==
			    CL_BUILD_PROGRAM_FAILURE, "status %d: the server's "
			    "own %s was included", rp.r->status, fname);
			reply_free(&rp);
		}
		conn_close(&c);
		srv_stop(&sv, "cwd_server_exit");
	}
	unlink(fname);
}

/* Options off the whitelist: CL_INVALID_BUILD_OPTIONS, saying which. */
static void
test_options(void)
{
	static const char *const bad[] = {
		"-include /etc/hostname",
		"-imacros /etc/hostname",
		"-isystem /etc",
		"-iquote /etc",
		"-Xclang -load -Xclang /tmp/x.so",
		"-load /tmp/x.so",
		"-fplugin=/tmp/x.so",
		"--sysroot=/etc",
		"-o /tmp/x",
		"@/etc/hostname",
		"-DX=1 -dependency-file /tmp/x",
		"\"-include\" /etc/hostname",
		"-cl-std=CL1.2 -MF/tmp/x",
		"-Wp,-MD,/tmp/x",
		"-D",
		"-D 1X",
		"-O2",
		"-I",
		"-DX=\"1",
		"-DX=__has_include(</etc/hostname>)",
	};
	static const char *const good[] = {
		"-D X=1 -DY -DZ=2 -w -Werror -cl-mad-enable -cl-std=CL1.2",
		"-I /nonexistent/include -I inc -cl-kernel-arg-info -g",
		"-D\"W=1 + 2\" -cl-fast-relaxed-math -cl-opt-disable",
	};
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	char		 name[64];
	size_t		 i;

	if (!start(&sv, &c, "options_server_start", NULL))
		return;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(name, sizeof name, "options_refused_%zu", i);
		if (!check(name, build(&c, PROG + i, kernel_src, bad[i], NULL,
		    0, &rp) == 0, "no reply"))
			break;
		check(name, rp.r->status == CL_INVALID_BUILD_OPTIONS &&
		    (msg_has(&rp, "not allowed") || msg_has(&rp, "needs") ||
		    msg_has(&rp, "quote")), "'%s': status %d, message \"%s\"",
		    bad[i], rp.r->status, rp.r->message != NULL ?
		    rp.r->message : "");
		reply_free(&rp);
	}
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		snprintf(name, sizeof name, "options_accepted_%zu", i);
		if (!check(name, build(&c, PROG + 100 + i, kernel_src, good[i],
		    NULL, 0, &rp) == 0, "no reply"))
			break;
		check(name, rp.r->status == CL_SUCCESS, "'%s': status %d (%s)",
		    good[i], rp.r->status, build_log(&rp));
		reply_free(&rp);
	}
	conn_close(&c);
	srv_stop(&sv, "options_server_exit");
}

/* Header names that could leave the build directory, and too much. */
static void
test_header_names(void)
{
	static const char *const bad[] = {
		"/etc/x.h", "../x.h", "a/../../x.h", "a//b.h", "", "./a.h",
		"a/./b.h", "a/", "..",
	};
	static const char *const extra[] = { "--max-session-bytes", "65536",
	    NULL };
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	struct hdr	 h;
	char		 name[64], *big;
	size_t		 i;

	if (!start(&sv, &c, "names_server_start", extra))
		return;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(name, sizeof name, "names_refused_%zu", i);
		h.dir = 0;
		h.name = bad[i];
		h.data = "#define X 1\n";
		if (!check(name, build(&c, PROG + i, kernel_src, NULL, &h, 1,
		    &rp) == 0, "no reply"))
			break;
		check(name, rp.r->status == CL_INVALID_VALUE, "'%s': status %d",
		    bad[i], rp.r->status);
		reply_free(&rp);
	}
	/* A directory index past the -I options. */
	h.dir = 2;
	h.name = "a.h";
	if (check("names_dir_reply", build(&c, PROG + 50, kernel_src, "-I x",
	    &h, 1, &rp) == 0, "no reply")) {
		check("names_dir_refused", rp.r->status == CL_INVALID_VALUE,
		    "status %d", rp.r->status);
		reply_free(&rp);
	}
	/* A long name, a long component. */
	if ((big = malloc(3000)) != NULL) {
		memset(big, 'a', 2999);
		big[2999] = '\0';
		h.dir = 0;
		h.name = big;
		if (check("names_long_reply", build(&c, PROG + 51, kernel_src,
		    NULL, &h, 1, &rp) == 0, "no reply")) {
			check("names_long_refused", rp.r->status ==
			    CL_INVALID_VALUE, "status %d", rp.r->status);
			reply_free(&rp);
		}
		free(big);
	}
	/* More than the session may hold (65536 bytes): refused. */
	if ((big = malloc(100000)) != NULL) {
		memset(big, ' ', 99999);
		big[99999] = '\0';
		h.dir = 0;
		h.name = "big.h";
		h.data = big;
		if (check("names_bytes_reply", build(&c, PROG + 52, kernel_src,
		    NULL, &h, 1, &rp) == 0, "no reply")) {
			check("names_bytes_refused", rp.r->status ==
			    CL_OUT_OF_RESOURCES, "status %d", rp.r->status);
			reply_free(&rp);
		}
		free(big);
	}
	conn_close(&c);
	srv_stop(&sv, "names_server_exit");
}

/* Does directory path hold nothing? */
static int
dir_empty(const char *path)
{
	struct dirent	*e;
	DIR		*d;
	int		 n = 0;

	if ((d = opendir(path)) == NULL)
		return (0);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return (n == 0);
}

/*
 * Shipped headers in subdirectories, found beside the including header,
 * in the current directory and in an -I directory; the private directory
 * is gone after the build. A header's own bad #include is refused too.
 */
static void
test_headers(void)
{
	static const struct hdr	h[] = {
		{ 1, "a.h", "#define W 3\n#include \"sub/b.h\"\n" },
		{ 1, "sub/b.h", "#include \"c.h\"\n" },
		{ 1, "sub/c.h", "#define V 4\n" },
		{ 0, "d/e.h", "#define U 5\n" },
	};
	static const struct hdr	evil = { 0, "x.h",
	    "#include \"/etc/hostname\"\n" };
	const char	*src = "#include \"a.h\"\n#include <d/e.h>\n"
	    "__kernel void k(__global int *a) { a[0] = U + V + W; }\n";
	struct srv	 sv;
	struct conn	 c;
	struct reply	 rp;
	char		 tmp[PATH_MAX];

	snprintf(tmp, sizeof tmp, "%s/tmpXXXXXX", root);
	if (!check("headers_tmp", mkdtemp(tmp) != NULL, "mkdtemp"))
		return;
	setenv("TMPDIR", tmp, 1);
	if (!start(&sv, &c, "headers_server_start", NULL)) {
		unsetenv("TMPDIR");
		return;
	}
	unsetenv("TMPDIR");
	if (check("headers_reply", build(&c, PROG, src, "-I /client/include",
	    h, 4, &rp) == 0, "no reply")) {
		check("headers_built", rp.r->status == CL_SUCCESS &&
		    rp.r->build != NULL && rp.r->build->n_kernel_names == 1,
		    "status %d, log \"%s\"", rp.r->status, build_log(&rp));
		reply_free(&rp);
	}
	check("headers_dir_removed", dir_empty(tmp), "%s is not empty after "
	    "the build", tmp);
	if (check("headers_evil_reply", build(&c, PROG + 1,
	    "#include \"x.h\"\n__kernel void k(__global int *a) { }\n", NULL,
	    &evil, 1, &rp) == 0, "no reply")) {
		check("headers_evil_refused", rp.r->status ==
		    CL_BUILD_PROGRAM_FAILURE && strstr(build_log(&rp),
		    "x.h") != NULL && strstr(build_log(&rp), "not allowed") !=
		    NULL, "status %d, log \"%s\"", rp.r->status,
		    build_log(&rp));
		reply_free(&rp);
	}
	check("headers_dir_removed_after_refusal", dir_empty(tmp),
	    "%s is not empty", tmp);
	conn_close(&c);
	srv_stop(&sv, "headers_server_exit");
	rmdir(tmp);
}

static const struct test tests[] = {
	{ "hostname",		test_hostname,		120 },
	{ "server_cwd",		test_server_cwd,	60 },
	{ "debug_pragma",	test_debug_pragma,	120 },
	{ "options",		test_options,		120 },
	{ "header_names",	test_header_names,	60 },
	{ "headers",		test_headers,		60 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
