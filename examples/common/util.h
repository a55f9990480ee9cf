/* util.h - what every example needs: error exits, number parsing, a clock. */
#ifndef UTIL_H
#define UTIL_H

#include "clerr.h"

extern const char	*ex_prog;	/* each program names itself */

void	 check(cl_int, const char *);
long	 parse_num(const char *, long, long);
double	 now(void);

#endif
