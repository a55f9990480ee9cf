/* fuzz_hostlist.c - libFuzzer: the Slurm host list expander. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_hostlist.h"

/*
 * SLURM_JOB_NODELIST comes from the environment of a job: libvcl and the
 * vcl command expand it (vcl_hostlist.c). The first byte picks the room
 * (1 to 64 names) and whether a port is appended; the rest is the list.
 * Every name made must be a host name of the allowed characters, within
 * the length limit; a refused list leaves nothing allocated.
 */
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FUZZ_HOSTLIST_MAX	64

/* Whether name is one the expander may make (with port, if set). */
static int
fuzz_hostlist_ok(const char *name, const char *port)
{
	size_t	len = strlen(name), plen;

	if (port != NULL) {
		plen = strlen(port);
		if (len < plen + 2 || name[len - plen - 1] != ':' ||
		    strcmp(name + len - plen, port) != 0)
			return (0);
		len -= plen + 1;
	}
	if (len == 0 || len > VCL_HOSTLIST_NAME_MAX)
		return (0);
	return (strspn(name, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") == len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*out[FUZZ_HOSTLIST_MAX], err[256], *s;
	const char	*port;
	int		 max, n, i;

	if (size == 0)
		return (0);
	max = 1 + (data[0] & 63);
	port = (data[0] & 64) ? "10400" : NULL;
	if ((s = malloc(size)) == NULL)
		return (0);
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	memset(out, 0, sizeof out);
	err[0] = '\0';
	n = vcl_hostlist_expand(s, port, out, max, err, sizeof err);
	if (n < -1 || n > max)
		abort();	/* more names than room */
	if (n == -1 && err[0] == '\0')
		abort();	/* refused without a word */
	for (i = 0; i < FUZZ_HOSTLIST_MAX; i++) {
		if (i < n && (out[i] == NULL || !fuzz_hostlist_ok(out[i],
		    port)))
			abort();	/* a name the list cannot make */
		if (i >= n && out[i] != NULL)
			abort();	/* written past the count, or kept */
		free(out[i]);
	}
	free(s);
	return (0);
}
