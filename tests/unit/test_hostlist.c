/* test_hostlist.c - unit tests of the Slurm host list expander. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vcl_hostlist.h"

#define MAX	64

/* Expand list; check it makes exactly the names of want (NULL-ended). */
static void
expect_names(const char *list, const char *port, const char *const *want)
{
	char	*out[MAX], err[256] = "";
	int	 n, i;

	n = vcl_hostlist_expand(list, port, out, MAX, err, sizeof err);
	if (n < 0)
		fail_msg("'%s': %s", list, err);
	for (i = 0; want[i] != NULL; i++) {
		assert_true(i < n);
		assert_string_equal(out[i], want[i]);
	}
	assert_int_equal(n, i);
	for (i = 0; i < n; i++)
		free(out[i]);
}

/* Expand list; check it is refused with a message holding why. */
static void
expect_refused(const char *list, int max, const char *why)
{
	char	*out[MAX], err[256] = "";
	int	 i;

	for (i = 0; i < MAX; i++)
		out[i] = NULL;
	assert_int_equal(vcl_hostlist_expand(list, "7725", out, max, err,
	    sizeof err), -1);
	if (strstr(err, why) == NULL)
		fail_msg("'%s': message '%s' lacks '%s'", list, err, why);
	/* Nothing is left allocated or stored. */
	for (i = 0; i < MAX; i++)
		assert_null(out[i]);
}

/* Plain names, a list, and ranges with their zero padding kept. */
static void
test_ranges(void **state)
{
	static const char *const one[] = { "gpu5:7725", NULL };
	static const char *const list[] = { "node01:7725", "node02:7725",
	    "node03:7725", "node07:7725", "gpu5:7725", NULL };
	static const char *const wide[] = { "n098", "n099", "n100", NULL };
	static const char *const bare[] = { "a", "b", NULL };

	expect_names("gpu5", "7725", one);
	expect_names("node[01-03,07],gpu5", "7725", list);
	expect_names("n[098-100]", NULL, wide);
	expect_names("a,,b,", NULL, bare);
}

/* A suffix after a group, several groups (their product), dotted names. */
static void
test_affixes(void **state)
{
	static const char *const sfx[] = { "a1b", "a2b", NULL };
	static const char *const prod[] = { "r1n1", "r1n2", "r2n1", "r2n2",
	    NULL };
	static const char *const dots[] = { "10.0.0.5:99", "10.0.0.6:99",
	    "h-x_1.example.org:99", NULL };

	expect_names("a[1-2]b", NULL, sfx);
	expect_names("r[1-2]n[1-2]", NULL, prod);
	expect_names("10.0.0.[5-6],h-x_1.example.org", "99", dots);
}

/* Malformed lists are refused with a message, not half taken. */
static void
test_malformed(void **state)
{
	expect_refused("node[01-03", MAX, "unterminated");
	expect_refused("a,node[1,2", MAX, "unterminated");
	expect_refused("node]1", MAX, "without");
	expect_refused("n[1[2]]", MAX, "nested");
	expect_refused("n[]", MAX, "empty");
	expect_refused("n[1,]", MAX, "empty range");
	expect_refused("n[-3]", MAX, "number");
	expect_refused("n[1-]", MAX, "number");
	expect_refused("n[5-3]", MAX, "backwards");
	expect_refused("n[1x]", MAX, "unexpected");
	expect_refused("n[1234567890]", MAX, "digits");
	expect_refused("host:22", MAX, "bad character");
	expect_refused("a b", MAX, "bad character");
}

/*
 * Huge ranges are refused by counting, before anything is made: the
 * product of two groups of a billion names each would never finish.
 */
static void
test_huge(void **state)
{
	char	long_name[400];

	expect_refused("n[0-999999999]", MAX, "more than 64 hosts");
	expect_refused("n[0-999999999]x[0-999999999]y[0-999999999]", MAX,
	    "more than 64 hosts");
	expect_refused("n[1-65]", MAX, "more than 64 hosts");
	expect_refused("a[1-40],b[1-40]", MAX, "more than 64 hosts");
	expect_refused("a[1-3]", 2, "more than 2 hosts");
	memset(long_name, 'x', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	expect_refused(long_name, MAX, "over 255");
}

/* Exactly the limit is taken. */
static void
test_limit(void **state)
{
	char	*out[MAX], err[256];
	int	 n, i;

	n = vcl_hostlist_expand("n[1-64]", "1", out, MAX, err, sizeof err);
	assert_int_equal(n, 64);
	assert_string_equal(out[63], "n64:1");
	for (i = 0; i < n; i++)
		free(out[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_affixes),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_limit),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
