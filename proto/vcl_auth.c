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
 * Read a token file: its bytes, trailing whitespace trimmed. Refuses an empty
 * token and a file that others may read. Returns 0, or -1 with err set.
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
