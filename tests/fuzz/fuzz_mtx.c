/* fuzz_mtx.c - libFuzzer: the Matrix Market reader of examples/cg. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mtx.h"

/*
 * Users feed cg files from anywhere (mtx.c). Each input is a file read
 * through a memfd. A matrix read must be what cg relies on: n rows, row
 * starts that never go back, each row's columns in range and sorted.
 */
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mtx	 m;
	char		 path[64], err[512];
	int		 fd, i, k;

	if ((fd = memfd_create("fuzz_mtx", 0)) == -1)
		return (0);
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return (0);
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if (mtx_read(&m, path, err, sizeof err) == 0) {
		if (m.n < 1 || m.n > MTX_MAXROWS || m.rp[0] != 0)
			abort();
		for (i = 0; i < m.n; i++) {
			if (m.rp[i + 1] < m.rp[i])
				abort();
			for (k = m.rp[i]; k < m.rp[i + 1]; k++)
				if (m.ci[k] < 0 || m.ci[k] >= m.n ||
				    (k > m.rp[i] && m.ci[k] <= m.ci[k - 1]))
					abort();
		}
		mtx_free(&m);
	} else if (err[0] == '\0')
		abort();	/* refused without a word */
	close(fd);
	return (0);
}
