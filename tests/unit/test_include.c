/* test_include.c - the include scanner, header names, build options, header directory. */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vcl_incdir.h"
#include "vcl_include.h"

/* Scan src; 0 accepted, -1 refused. */
static int
scan(const char *src)
{
	char	why[256];

	return (vcl_include_scan(src, strlen(src), NULL, NULL, why,
	    sizeof why));
}

/* Collects the names a scan reports, ';'-separated. */
static void
collect(void *arg, const char *name, size_t len, int angled)
{
	char	*out = arg;

	strcat(out, angled ? "<" : "\"");
	strncat(out, name, len);
	strcat(out, ";");
}

static void
test_scan_refuses(void **state)
{
	static const char *const bad[] = {
		"#include \"/etc/hostname\"\n",
		"#include </etc/hostname>\n",
		"#pragma clang __debug crash\n",
		"_Pragma(\"clang __debug assert\")\n",
		"#define A(x) _Pragma(#x)\n",
		"#define S(x) #x\nint __debug;\n",
		"#define C(a, b) a##b\nC(_Pr, agma)(\"x\")\n",
		"  #  include \"../x.h\"\n",
		"#include \"a/../../x.h\"\n",
		"#/**/include \"/etc/x\"\n",
		"# \\\n include \"/etc/x\"\n",
		"#\\ \t\ninclude \"/etc/x\"\n",
		"#inc\\\nlude \"/etc/x\"\n",
		"?\?=include \"/etc/x\"\n",
		"%:include \"/etc/x\"\n",
		"/* a\n */ #include \"/etc/x\"\n",
		"#include_next \"/etc/x\"\n",
		"#import \"/etc/x\"\n",
		"#embed \"/etc/x\"\n",
		"#include H\n",
		"#include\n",
		"#if __has_include(\"/etc/x\")\n#endif\n",
		"#if __has_include_next(</etc/x>)\n#endif\n",
		"#if __has_include(X)\n#endif\n",
		"#define H __has_include\n",
		"#pragma GCC dependency \"/etc/x\"\n",
		"_Pragma(\"GCC dependency \\\"../x\\\"\")\n",
		/* A raw string that hides a comment opener from C++. */
		"const char *s = R\"x(\" /* )x\";\n#include \"/etc/x\"\n// */\n",
		/* Trigraph ??/ ends a string early only with trigraphs off. */
		"char *a = \"?\?/\" \"/*\";\n#include \"/etc/x\"\n// */\n",
		"#include \"/etc/x\r\n",
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (scan(bad[i]) != -1)
			fail_msg("accepted: %s", bad[i]);
	}
}

static void
test_scan_accepts(void **state)
{
	static const char *const good[] = {
		"#include \"a.h\"\n#include <sub/b.h>\n",
		"// #include \"/etc/x\"\n",
		"/* #include \"/etc/x\" */\n",
		"char *s = \"#include </etc/x>\";\n",
		"int x; # include \"/etc/x\"\n",
		"#define C(a, b) a##b\nC(in, t) x;\n",
		"#pragma unroll 4\n",
		"#include \"./a.h\"\n#include \"..a.h\"\n",
		"kernel void k(global int *a) { a[0] = 1; }\n",
	};
	const char	*src = "#include \"a.h\"\n# include <b/c.h>\n"
	    "#if __has_include(\"d.h\")\n#endif\n";
	char		 out[256] = "";
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		if (scan(good[i]) != 0)
			fail_msg("refused: %s", good[i]);
	}
	assert_int_equal(vcl_include_scan(src, strlen(src), collect, out,
	    NULL, 0), 0);
	assert_string_equal(out, "\"a.h;<b/c.h;\"d.h;");
}

static void
test_names(void **state)
{
	char	long_name[VCL_INCLUDE_MAX_NAME + 2];

	(void)state;
	assert_true(vcl_include_name_ok("a.h", 3));
	assert_true(vcl_include_name_ok("a/b/c.h", 7));
	assert_true(vcl_include_name_ok("..a", 3));
	assert_false(vcl_include_name_ok("", 0));
	assert_false(vcl_include_name_ok("/a.h", 4));
	assert_false(vcl_include_name_ok("../a.h", 6));
	assert_false(vcl_include_name_ok("a/../b", 6));
	assert_false(vcl_include_name_ok("a//b", 4));
	assert_false(vcl_include_name_ok("./a", 3));
	assert_false(vcl_include_name_ok("a/", 2));
	assert_false(vcl_include_name_ok("a\0b", 3));
	memset(long_name, 'a', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	assert_false(vcl_include_name_ok(long_name, strlen(long_name)));
	long_name[256] = '\0';
	assert_false(vcl_include_name_ok(long_name, 256));	/* component */
}

static void
test_options(void **state)
{
	struct vcl_include_opts	 o;
	char			 why[256];

	(void)state;
	assert_int_equal(vcl_include_options("-D X=1 -I inc -I\"/a b\" -w "
	    "-cl-std=CL2.0 -D\"Y=1 + 2\"", "../", &o, why, sizeof why), 0);
	assert_string_equal(o.out, "-DX=1 -I../1 -I../2 -w -cl-std=CL2.0 "
	    "-D\"Y=1 + 2\"");
	assert_int_equal(o.ndirs, 2);
	assert_string_equal(o.dirs[0], "inc");
	assert_string_equal(o.dirs[1], "/a b");
	vcl_include_opts_free(&o);
	assert_int_equal(vcl_include_options(NULL, NULL, &o, why, sizeof why),
	    0);
	assert_string_equal(o.out, "");
	vcl_include_opts_free(&o);
	assert_int_equal(vcl_include_options("-include /etc/passwd", NULL, &o,
	    why, sizeof why), -1);
	assert_non_null(strstr(why, "not allowed"));
	assert_int_equal(vcl_include_options("-DX=1\n#include", NULL, &o, why,
	    sizeof why), -1);
	assert_int_equal(vcl_include_options("-D\"X=1\n\"", NULL, &o, why,
	    sizeof why), -1);
	assert_int_equal(vcl_include_options("-I", NULL, &o, why, sizeof why),
	    -1);
	assert_int_equal(vcl_include_options("-Wp,-MD,/x", NULL, &o, why,
	    sizeof why), -1);
	assert_int_equal(vcl_include_options("-cl-ext=/x", NULL, &o, why,
	    sizeof why), -1);
}

static void
test_incdir(void **state)
{
	struct vcl_incdir	 d = { "", -1 };
	struct stat		 st;
	char			 why[256], path[PATH_MAX + 32], tmp[] =
	    "/tmp/vcl-incdir-test.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(tmp));
	assert_int_equal(vcl_incdir_create(&d, tmp, 1, why, sizeof why), 0);
	assert_int_equal(stat(d.path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(vcl_incdir_write(&d, 0, "a/b/c.h",
	    (const uint8_t *)"x", 1, why, sizeof why), 0);
	assert_int_equal(vcl_incdir_write(&d, 1, "d.h", (const uint8_t *)"y",
	    1, why, sizeof why), 0);
	/* O_EXCL: the same name twice is refused. */
	assert_int_equal(vcl_incdir_write(&d, 0, "a/b/c.h",
	    (const uint8_t *)"x", 1, why, sizeof why), -1);
	/* A symlink planted in the tree is never followed. */
	snprintf(path, sizeof path, "%s/0/link", d.path);
	assert_int_equal(symlink(tmp, path), 0);
	assert_int_equal(vcl_incdir_write(&d, 0, "link/e.h",
	    (const uint8_t *)"z", 1, why, sizeof why), -1);
	snprintf(path, sizeof path, "%s/e.h", tmp);
	assert_int_not_equal(access(path, F_OK), 0);
	vcl_incdir_remove(&d);
	assert_int_equal(rmdir(tmp), 0);	/* empty: all removed */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_refuses),
		cmocka_unit_test(test_scan_accepts),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_incdir),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
