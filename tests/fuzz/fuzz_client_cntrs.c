/*
 * fuzz_client_cntrs.c - where the coverage counters of the program are
 * (the linker's bounds of __sancov_cntrs), for fuzz_client to carry a
 * child's counters back. Built without coverage: a translation unit that
 * is instrumented names these bounds itself, and a second declaration of
 * them there leaves its module's counters unregistered.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_client.h"

extern uint8_t	__start___sancov_cntrs[] __attribute__((weak));
extern uint8_t	__stop___sancov_cntrs[] __attribute__((weak));

/* The counters, and their number (0 when there are none). */
uint8_t *
fuzz_client_counters(size_t *n)
{
	if (__start___sancov_cntrs == NULL ||
	    __stop___sancov_cntrs <= __start___sancov_cntrs) {
		*n = 0;
		return (NULL);
	}
	*n = (size_t)(__stop___sancov_cntrs - __start___sancov_cntrs);
	return (__start___sancov_cntrs);
}
