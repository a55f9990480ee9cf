/* vcl_incdir.h - a build's private header directory (what the sources may #include). */
#ifndef VCL_INCDIR_H
#define VCL_INCDIR_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/*
 * <tmp>/vcl-build.XXXXXX, mode 0700: the client's current directory is
 * its "0", the k-th -I directory its "k". A build runs with its thread's
 * working directory in "0", so the options name the others "../k".
 */
struct vcl_incdir {
	char	path[PATH_MAX];		/* "" when none */
	int	fd;			/* the directory; -1 when none */
};

#define VCL_INCDIR_IPREFIX	"../"	/* -I<k> as the build sees it */

int	vcl_incdir_create(struct vcl_incdir *, const char *, uint32_t, char *,
	    size_t);
int	vcl_incdir_write(struct vcl_incdir *, uint32_t, const char *,
	    const uint8_t *, size_t, char *, size_t);
int	vcl_incdir_enter(struct vcl_incdir *, char *, size_t);
void	vcl_incdir_remove(struct vcl_incdir *);

#endif
