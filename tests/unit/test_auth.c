/* test_auth.c - unit tests of token files and HMAC proofs (vcl_auth.c). */
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

#include "vcl_auth.h"

/* RFC 4231 test case 2: HMAC-SHA-256. */
static const char	rfc_key[] = "Jefe";
static const char	rfc_data[] = "what do ya want for nothing?";
static const uint8_t	rfc_mac[VCL_AUTH_PROOF_LEN] = {
	0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e,
	0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7,
	0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83,
	0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43
};

/* A token holding s. */
static void
token_set(struct vcl_token *t, const char *s)
{
	memset(t, 0, sizeof *t);
	t->len = strlen(s);
	memcpy(t->data, s, t->len);
}

/* The proof is HMAC-SHA256(token, nonce), checked against RFC 4231. */
static void
test_auth_prove_vector(void **state)
{
	struct vcl_token	t;
	uint8_t			proof[VCL_AUTH_PROOF_LEN];

	token_set(&t, rfc_key);
	memset(proof, 0, sizeof proof);
	vcl_auth_prove(&t, (const uint8_t *)rfc_data, strlen(rfc_data), proof);
	assert_memory_equal(proof, rfc_mac, sizeof rfc_mac);
}

/* check takes the right proof, refuses any flipped bit or wrong length. */
static void
test_auth_check(void **state)
{
	struct vcl_token	 t;
	const uint8_t		*n = (const uint8_t *)rfc_data;
	size_t			 nlen = strlen(rfc_data), i;
	uint8_t			 p[VCL_AUTH_PROOF_LEN + 1];
	int			 bit;

	token_set(&t, rfc_key);
	memcpy(p, rfc_mac, sizeof rfc_mac);
	p[VCL_AUTH_PROOF_LEN] = 0;
	assert_int_equal(vcl_auth_check(&t, n, nlen, p, VCL_AUTH_PROOF_LEN), 0);

	for (i = 0; i < VCL_AUTH_PROOF_LEN; i++) {
		for (bit = 0; bit < 8; bit += 7) {
			p[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(vcl_auth_check(&t, n, nlen, p,
			    VCL_AUTH_PROOF_LEN), -1);
			p[i] ^= (uint8_t)(1u << bit);
		}
	}
	/* A prefix or an extended proof is not the proof. */
	assert_int_equal(vcl_auth_check(&t, n, nlen, p, VCL_AUTH_PROOF_LEN - 1),
	    -1);
	assert_int_equal(vcl_auth_check(&t, n, nlen, p, VCL_AUTH_PROOF_LEN + 1),
	    -1);
	assert_int_equal(vcl_auth_check(&t, n, nlen, p, 0), -1);

	/* Another nonce or another token gives another proof. */
	assert_int_equal(vcl_auth_check(&t, n, nlen - 1, p, VCL_AUTH_PROOF_LEN),
	    -1);
	token_set(&t, "Jeff");
	assert_int_equal(vcl_auth_check(&t, n, nlen, p, VCL_AUTH_PROOF_LEN), -1);
}

/* Two nonces are not the same. */
static void
test_auth_nonce(void **state)
{
	uint8_t	a[VCL_AUTH_NONCE_LEN], b[VCL_AUTH_NONCE_LEN];

	assert_int_equal(vcl_auth_nonce(a, sizeof a), 0);
	assert_int_equal(vcl_auth_nonce(b, sizeof b), 0);
	assert_memory_not_equal(a, b, sizeof a);
}

/* Write a temporary token file with these bytes and mode; returns its path. */
static char *
token_file(const void *data, size_t len, mode_t mode)
{
	char	*path;
	int	 fd;

	path = strdup("/tmp/vcl_test_auth.XXXXXX");
	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return (path);
}

/* Remove and forget a temporary token file. */
static void
token_file_done(char *path)
{
	unlink(path);
	free(path);
}

/* A 0600 file loads; trailing newline and blanks are trimmed. */
static void
test_auth_load_trims(void **state)
{
	struct vcl_token	 t;
	char			 err[256] = "", *path;
	uint8_t			 p[VCL_AUTH_PROOF_LEN];

	path = token_file("Jefe\n", 5, 0600);
	memset(&t, 0xa5, sizeof t);
	assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), 0);
	assert_int_equal(t.len, 4);
	assert_memory_equal(t.data, "Jefe", 4);
	/* The loaded token proves what the RFC says. */
	vcl_auth_prove(&t, (const uint8_t *)rfc_data, strlen(rfc_data), p);
	assert_memory_equal(p, rfc_mac, sizeof p);
	token_file_done(path);

	path = token_file("s3cret \t\r\n\n", 11, 0400);
	assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), 0);
	assert_int_equal(t.len, 6);
	assert_memory_equal(t.data, "s3cret", 6);
	token_file_done(path);

	/* Inner whitespace and leading bytes are part of the token. */
	path = token_file(" a b", 4, 0600);
	assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), 0);
	assert_int_equal(t.len, 4);
	assert_memory_equal(t.data, " a b", 4);
	token_file_done(path);
}

/* Empty, or only a newline: refused with a message. */
static void
test_auth_load_empty(void **state)
{
	struct vcl_token	 t;
	char			 err[256], *path;

	path = token_file("", 0, 0600);
	err[0] = '\0';
	assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), -1);
	assert_non_null(strstr(err, "empty"));
	token_file_done(path);

	path = token_file("\n", 1, 0600);
	err[0] = '\0';
	assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), -1);
	assert_non_null(strstr(err, "empty"));
	token_file_done(path);
}

/* A file group or others may read (or write) is refused. */
static void
test_auth_load_mode(void **state)
{
	static const mode_t	 bad[] = { 0644, 0640, 0604, 0620, 0602, 0660 };
	struct vcl_token	 t;
	char			 err[256], *path;
	size_t			 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		path = token_file("Jefe\n", 5, bad[i]);
		err[0] = '\0';
		assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), -1);
		assert_non_null(strstr(err, "chmod 600"));
		assert_non_null(strstr(err, path));
		token_file_done(path);
	}
}

/* A missing file is an error naming the file. */
static void
test_auth_load_missing(void **state)
{
	struct vcl_token	t;
	char			err[256] = "";

	assert_int_equal(vcl_auth_load("/nonexistent/vcl/token", &t, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "/nonexistent/vcl/token"));
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_auth_prove_vector),
		cmocka_unit_test(test_auth_check),
		cmocka_unit_test(test_auth_nonce),
		cmocka_unit_test(test_auth_load_trims),
		cmocka_unit_test(test_auth_load_empty),
		cmocka_unit_test(test_auth_load_mode),
		cmocka_unit_test(test_auth_load_missing),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
