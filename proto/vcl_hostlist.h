/* vcl_hostlist.h - Slurm host lists ("node[01-03,07],gpu5") expanded. */
#ifndef VCL_HOSTLIST_H
#define VCL_HOSTLIST_H

#include <stddef.h>

/* Longest host name an expansion may make. */
#define VCL_HOSTLIST_NAME_MAX	255

int	vcl_hostlist_expand(const char *, const char *, char **, int, char *,
	    size_t);

#endif
