/* util.c - what every example needs: error exits, number parsing, a clock. */
#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util.h"

/* Exit with a message naming the OpenCL call when it failed. */
void
check(cl_int err, const char *call)
{
	if (err == CL_SUCCESS)
		return;
	fprintf(stderr, "%s: %s failed: error %d (%s)\n", ex_prog, call,
	    (int)err, clerr_name(err));
	exit(1);
}

/* Parse a whole decimal number in [min, max], or return -1. */
long
parse_num(const char *s, long min, long max)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return (-1);
	return (v);
}

/* Monotonic time in seconds. */
double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
}
