/*
 * vcl_incdir.c - a build's private header directory. The headers a client
 * ships are written under a fresh mkdtemp directory (never through a
 * symlink: every component is opened O_NOFOLLOW, every file created
 * O_EXCL), the building thread works inside it, and it is removed after
 * the build. Names were checked by vcl_include_name_ok before.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vcl_include.h"
#include "vcl_incdir.h"

#define VCL_INCDIR_OPEN	(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* Open (making it if need be) the directory name under dirfd. */
static int
vcl_incdir_sub(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST)
		return (-1);
	return (openat(dirfd, name, VCL_INCDIR_OPEN));
}

/*
 * Make a private directory under tmp with subdirectories 0..ndirs.
 * Returns 0, or -1 with why.
 */
int
vcl_incdir_create(struct vcl_incdir *d, const char *tmp, uint32_t ndirs,
    char *why, size_t whylen)
{
	char		k[16];
	uint32_t	i;
	int		fd;

	d->fd = -1;
	if (snprintf(d->path, sizeof d->path, "%s/vcl-build.XXXXXX", tmp) >=
	    (int)sizeof d->path || mkdtemp(d->path) == NULL) {
		snprintf(why, whylen, "cannot make a build directory under "
		    "%s: %s", tmp, strerror(errno));
		d->path[0] = '\0';
		return (-1);
	}
	if ((d->fd = open(d->path, VCL_INCDIR_OPEN)) == -1)
		goto fail;
	for (i = 0; i <= ndirs; i++) {
		snprintf(k, sizeof k, "%u", i);
		if ((fd = vcl_incdir_sub(d->fd, k)) == -1)
			goto fail;
		close(fd);
	}
	return (0);
fail:
	snprintf(why, whylen, "cannot make a build directory: %s",
	    strerror(errno));
	vcl_incdir_remove(d);
	return (-1);
}

/* Write one header, name relative to subdirectory dir. 0, or -1 with why. */
int
vcl_incdir_write(struct vcl_incdir *d, uint32_t dir, const char *name,
    const uint8_t *data, size_t len, char *why, size_t whylen)
{
	char		 k[16], comp[VCL_INCLUDE_MAX_NAME + 1];
	const char	*p = name, *slash;
	size_t		 n, off = 0;
	ssize_t		 w;
	int		 fd, nfd, rc = -1;

	snprintf(k, sizeof k, "%u", dir);
	if (d->fd == -1 || strlen(name) > VCL_INCLUDE_MAX_NAME ||
	    (fd = openat(d->fd, k, VCL_INCDIR_OPEN)) == -1)
		goto out;
	while ((slash = strchr(p, '/')) != NULL) {
		n = (size_t)(slash - p);
		memcpy(comp, p, n);
		comp[n] = '\0';
		nfd = vcl_incdir_sub(fd, comp);
		close(fd);
		if ((fd = nfd) == -1)
			goto out;
		p = slash + 1;
	}
	nfd = openat(fd, p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	close(fd);
	if ((fd = nfd) == -1)
		goto out;
	while (off < len) {
		if ((w = write(fd, data + off, len - off)) <= 0) {
			if (w == -1 && errno == EINTR)
				continue;
			if (w == 0)
				errno = ENOSPC;
			close(fd);
			goto out;
		}
		off += (size_t)w;
	}
	rc = close(fd);
out:
	if (rc != 0)
		snprintf(why, whylen, "cannot write header '%.200s': %s", name,
		    strerror(errno));
	return (rc);
}

/*
 * Make the calling thread work in subdirectory 0 (the client's current
 * directory, where the runtime's own "-I." points). The thread first gets
 * a working directory of its own (unshare CLONE_FS), so the server's is
 * never changed.
 */
int
vcl_incdir_enter(struct vcl_incdir *d, char *why, size_t whylen)
{
	static _Thread_local int	 own;
	int				 fd;

	if (!own) {
		if (unshare(CLONE_FS) != 0) {
			snprintf(why, whylen, "cannot give the build thread a "
			    "working directory of its own: %s",
			    strerror(errno));
			return (-1);
		}
		own = 1;
	}
	if ((fd = openat(d->fd, "0", VCL_INCDIR_OPEN)) == -1 ||
	    fchdir(fd) != 0) {
		snprintf(why, whylen, "cannot enter the build directory: %s",
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return (-1);
	}
	close(fd);
	return (0);
}

/* Remove everything under dirfd (depth bounded, no symlink followed). */
static void
vcl_incdir_clear(int dirfd, int depth)
{
	struct dirent	*e;
	DIR		*dp;
	int		 fd;

	if (depth > VCL_INCLUDE_MAX_DEPTH + 2 || (fd = dup(dirfd)) == -1)
		return;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((e = readdir(dp)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd, e->d_name, 0) == 0)
			continue;
		if ((fd = openat(dirfd, e->d_name, VCL_INCDIR_OPEN)) == -1)
			continue;
		vcl_incdir_clear(fd, depth + 1);
		close(fd);
		unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
	}
	closedir(dp);
}

/* Remove the directory and all it holds. */
void
vcl_incdir_remove(struct vcl_incdir *d)
{
	if (d->fd != -1) {
		vcl_incdir_clear(d->fd, 0);
		close(d->fd);
		d->fd = -1;
	}
	if (d->path[0] != '\0')
		rmdir(d->path);
	d->path[0] = '\0';
}
