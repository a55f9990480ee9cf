/* vcl_auth.h - shared-secret authentication: token files and HMAC proofs. */
#ifndef VCL_AUTH_H
#define VCL_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define VCL_AUTH_NONCE_LEN	32
#define VCL_AUTH_PROOF_LEN	32	/* HMAC-SHA256 */
#define VCL_AUTH_TOKEN_MAX	4096

struct vcl_token {
	uint8_t	data[VCL_AUTH_TOKEN_MAX];
	size_t	len;
};

int	vcl_auth_load(const char *, struct vcl_token *, char *, size_t);
int	vcl_auth_nonce(uint8_t *, size_t);
void	vcl_auth_prove(const struct vcl_token *, const uint8_t *, size_t,
	    uint8_t *);
int	vcl_auth_check(const struct vcl_token *, const uint8_t *, size_t,
	    const uint8_t *, size_t);

#endif
