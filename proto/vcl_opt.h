/* vcl_opt.h - command-line options: getopt_long, long names spelled out. */
#ifndef VCL_OPT_H
#define VCL_OPT_H

#include <getopt.h>

int	vcl_opt_next(int, char *const *, const char *, const struct option *,
	    const char *);

#endif
