/*
 * vcl_opt.c - command-line options: getopt_long without its abbreviations.
 *
 * getopt_long takes any unambiguous prefix of a long option for the
 * option, so "vclserver --port 9000" (there is no --port) was taken as
 * --port-file 9000 and wrote a file named 9000. Options of VCL's programs
 * are spelled out in full: a prefix is an unknown option, named as typed.
 */
#include <stdio.h>
#include <string.h>

#include "vcl_opt.h"

/*
 * The next option, as getopt_long returns it; a long option that argv
 * abbreviates is reported on stderr ("PROG: unknown option '--port'")
 * and returned as '?', the code of any other unknown option.
 */
int
vcl_opt_next(int argc, char *const *argv, const char *shortopts,
    const struct option *longopts, const char *prog)
{
	const char	*tok, *name;
	size_t		 n;
	int		 c, idx = -1;

	c = getopt_long(argc, argv, shortopts, longopts, &idx);
	if (c == -1 || c == '?' || idx < 0 || optind < 1 || optind > argc)
		return (c);
	/*
	 * The token just taken: the option, or (its argument given apart)
	 * the one before it. getopt permutes argv only at its next call.
	 */
	tok = argv[optind - 1];
	if (longopts[idx].has_arg != no_argument && optarg != NULL &&
	    optarg == argv[optind - 1] && optind >= 2)
		tok = argv[optind - 2];
	if (strncmp(tok, "--", 2) != 0)
		return (c);
	name = tok + 2;
	n = strcspn(name, "=");
	if (strlen(longopts[idx].name) == n &&
	    strncmp(longopts[idx].name, name, n) == 0)
		return (c);
	fprintf(stderr, "%s: unknown option '--%.*s' (options are not "
	    "abbreviated: did you mean --%s?)\n", prog, (int)n, name,
	    longopts[idx].name);
	return ('?');
}
