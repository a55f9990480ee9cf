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

/* 32 hex digits: 128 bits, the shortest hex token taken. */
static const char	hex32[] = "5f0c8e2a9b7d41c6a3e8d2f1b0974c5e";

/* A 0600 file loads; trailing newline and blanks are trimmed. */
static void
test_auth_load_trims(void **state)
{
	struct vcl_token	 t, want;
	char			 err[256] = "", *path;
	uint8_t			 p[VCL_AUTH_PROOF_LEN], q[VCL_AUTH_PROOF_LEN];

	path = token_file("5f0c8e2a9b7d41c6a3e8d2f1b0974c5e\n", 33, 0600);
	memset(&t, 0xa5, sizeof t);
	assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), 0);
	assert_int_equal(t.len, 32);
	assert_memory_equal(t.data, hex32, 32);
	/* The loaded token proves what the same bytes prove. */
	token_set(&want, hex32);
	vcl_auth_prove(&t, (const uint8_t *)rfc_data, strlen(rfc_data), p);
	vcl_auth_prove(&want, (const uint8_t *)rfc_data, strlen(rfc_data), q);
	assert_memory_equal(p, q, sizeof p);
	token_file_done(path);

	path = token_file("Zq8vN3kLp0Xw7RtY2mBc5H \t\r\n\n", 27, 0400);
	assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), 0);
	assert_int_equal(t.len, 22);
	assert_memory_equal(t.data, "Zq8vN3kLp0Xw7RtY2mBc5H", 22);
	token_file_done(path);

	/* Inner whitespace and leading bytes are part of the token. */
	path = token_file(" Zq8v N3kLp0Xw7RtY2mBc5H", 24, 0600);
	assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), 0);
	assert_int_equal(t.len, 24);
	assert_memory_equal(t.data, " Zq8v N3kLp0Xw7RtY2mBc5H", 24);
	token_file_done(path);
}

/*
 * Weak tokens are refused with a message saying how to make a good one:
 * under 32 hex digits, under 22 other characters, or few distinct ones.
 */
static void
test_auth_load_weak(void **state)
{
	static const char	*weak[] = {
		"Jefe",
		"5f0c8e2a9b7d41c6a3e8d2f1b0974c5",	/* 31 hex */
		"Zq8vN3kLp0Xw7RtY2mBc5",		/* 21 base64 */
		"s3cret-token",
		"abababababababababababababababab",	/* 2 distinct */
		"0123456001234560012345600123456001234560",	/* 7 distinct */
		"passwordpassword",
	};
	static const char	*strong[] = {
		hex32,
		"Zq8vN3kLp0Xw7RtY2mBc5H",
		"k7#Qm!2vR9@xL4$wP8&zT1",
	};
	struct vcl_token	 t;
	char			 err[512], *path;
	size_t			 i;

	for (i = 0; i < sizeof weak / sizeof weak[0]; i++) {
		path = token_file(weak[i], strlen(weak[i]), 0600);
		err[0] = '\0';
		t.len = 0;
		assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), -1);
		assert_non_null(strstr(err, "too weak"));
		assert_non_null(strstr(err, "openssl rand"));
		assert_int_equal(t.len, 0);
		token_file_done(path);
	}
	for (i = 0; i < sizeof strong / sizeof strong[0]; i++) {
		path = token_file(strong[i], strlen(strong[i]), 0600);
		assert_int_equal(vcl_auth_load(path, &t, err, sizeof err), 0);
		assert_int_equal(t.len, strlen(strong[i]));
		token_file_done(path);
	}
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
		cmocka_unit_test(test_auth_load_weak),
		cmocka_unit_test(test_auth_load_empty),
		cmocka_unit_test(test_auth_load_mode),
		cmocka_unit_test(test_auth_load_missing),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
