/* vcl_auth.c - shared-secret authentication: token files and HMAC proofs. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "vcl_auth.h"

/*
 * A token must resist an offline search: without TLS, anyone who sees a
 * handshake has the nonce and HMAC(token, nonce) and can try tokens at
 * leisure. 128 bits of randomness is 32 hex digits or 22 base64 characters
 * (other text is counted like base64, which flatters it); few distinct
 * characters mean a pattern, not randomness.
 */
#define VCL_AUTH_MIN_HEX	32
#define VCL_AUTH_MIN_OTHER	22
#define VCL_AUTH_MIN_DISTINCT	8

/* Is the token strong enough? Returns 0, or -1 with err set. */
static int
vcl_auth_strong(const char *path, const uint8_t *t, size_t len, char *err,
    size_t errlen)
{
	uint8_t	seen[256];
	size_t	i, distinct = 0, hex = 1;

	memset(seen, 0, sizeof seen);
	for (i = 0; i < len; i++) {
		if (!seen[t[i]]++)
			distinct++;
		if (!((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' &&
		    t[i] <= 'f') || (t[i] >= 'A' && t[i] <= 'F')))
			hex = 0;
	}
	if (len < (hex ? VCL_AUTH_MIN_HEX : VCL_AUTH_MIN_OTHER) ||
	    distinct < VCL_AUTH_MIN_DISTINCT) {
		snprintf(err, errlen, "%s: token too weak (%zu characters, %zu "
		    "distinct): want 128 random bits, at least %d hex or %d "
		    "base64 characters; make one with: openssl rand -hex 32",
		    path, len, distinct, VCL_AUTH_MIN_HEX, VCL_AUTH_MIN_OTHER);
		return (-1);
	}
	return (0);
}

/*
 * Read a token file: its bytes, trailing whitespace trimmed. Refuses an empty
 * or weak token and a file that others may read. Returns 0, or -1 with err
 * set.
 */
int
vcl_auth_load(const char *path, struct vcl_token *tok, char *err, size_t errlen)
{
	struct stat	st;
	ssize_t		n;
	int		fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &st) == -1 || (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
		snprintf(err, errlen, "%s: token file must not be readable by "
		    "group or others (chmod 600)", path);
		close(fd);
		return (-1);
	}
	n = read(fd, tok->data, sizeof tok->data);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	while (n > 0 && (tok->data[n - 1] == '\n' || tok->data[n - 1] == '\r' ||
	    tok->data[n - 1] == ' ' || tok->data[n - 1] == '\t'))
		n--;
	if (n == 0) {
		snprintf(err, errlen, "%s: token is empty", path);
		return (-1);
	}
	if (vcl_auth_strong(path, tok->data, (size_t)n, err, errlen) != 0) {
		memset(tok->data, 0, sizeof tok->data);
		return (-1);
	}
	tok->len = (size_t)n;
	return (0);
}

/* Fill a nonce with random bytes. Returns 0 or -1. */
int
vcl_auth_nonce(uint8_t *nonce, size_t len)
{
	return (RAND_bytes(nonce, (int)len) == 1 ? 0 : -1);
}

/* Compute the proof HMAC-SHA256(token, nonce) into proof. */
void
vcl_auth_prove(const struct vcl_token *tok, const uint8_t *nonce, size_t len,
    uint8_t *proof)
{
	unsigned int	plen = VCL_AUTH_PROOF_LEN;

	HMAC(EVP_sha256(), tok->data, (int)tok->len, nonce, len, proof, &plen);
}

/* Check a proof in constant time. Returns 0 when it matches. */
int
vcl_auth_check(const struct vcl_token *tok, const uint8_t *nonce,
    size_t nonce_len, const uint8_t *proof, size_t proof_len)
{
	uint8_t	want[VCL_AUTH_PROOF_LEN];

	if (proof_len != VCL_AUTH_PROOF_LEN)
		return (-1);
	vcl_auth_prove(tok, nonce, nonce_len, want);
	return (CRYPTO_memcmp(want, proof, sizeof want) == 0 ? 0 : -1);
}
