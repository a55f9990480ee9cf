/* vcl_include.h - what a program build may read: include scanner, header names, build options. */
#ifndef VCL_INCLUDE_H
#define VCL_INCLUDE_H

#include <stddef.h>

#define VCL_INCLUDE_MAX_HEADERS	1024		/* headers of one build */
#define VCL_INCLUDE_MAX_NAME	1024		/* bytes of a header's name */
#define VCL_INCLUDE_MAX_DEPTH	32		/* components of a name */
#define VCL_INCLUDE_MAX_BYTES	(64u << 20)	/* all headers of one build */
#define VCL_INCLUDE_MAX_DIRS	64		/* -I options of one build */

/* One file a source names: "name" (angled 0) or <name> (angled 1). */
typedef void (*vcl_include_fn)(void *, const char *, size_t, int);

int	vcl_include_scan(const char *, size_t, vcl_include_fn, void *, char *,
	    size_t);
int	vcl_include_path_ok(const char *, size_t);
int	vcl_include_name_ok(const char *, size_t);

/* Build options, checked against the whitelist. */
struct vcl_include_opts {
	char		*out;		/* canonical options, -I rewritten */
	char		**dirs;		/* the -I directories, in order */
	size_t		 ndirs;
};
int	vcl_include_options(const char *, const char *,
	    struct vcl_include_opts *, char *, size_t);
void	vcl_include_opts_free(struct vcl_include_opts *);

#endif
