/* fuzz_include.c - libFuzzer: the build include scanner and option check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_include.h"

/*
 * Kernel sources, headers and build options come from clients: the server
 * scans them before a build (vcl_include.c). The first byte picks what the
 * rest is: even, a source for vcl_include_scan; odd, build options for
 * vcl_include_options (and each -I directory for vcl_include_path_ok).
 * fuzz_session swaps program sources for fixed ones, so this target is the
 * one that feeds the scanner hostile text.
 */
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Each file the scan names must be one the build may ship. */
static void
fuzz_include_name(void *arg, const char *name, size_t len, int angled)
{
	(void)arg;
	(void)angled;
	if (len == 0 || name[0] == '/' || !vcl_include_path_ok(name, len))
		abort();	/* the scan let through what it refuses */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vcl_include_opts	 o;
	char			 why[512], *s;
	size_t			 i;

	if (size == 0)
		return (0);
	if ((data[0] & 1) == 0) {
		(void)vcl_include_scan((const char *)data + 1, size - 1,
		    fuzz_include_name, NULL, why, sizeof why);
		return (0);
	}
	if ((s = malloc(size)) == NULL)
		return (0);
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	memset(&o, 0, sizeof o);
	if (vcl_include_options(s, "../", &o, why, sizeof why) == 0) {
		for (i = 0; i < o.ndirs; i++)
			(void)vcl_include_path_ok(o.dirs[i],
			    strlen(o.dirs[i]));
	}
	vcl_include_opts_free(&o);
	free(s);
	return (0);
}
