/* mtx.h - sparse matrices for cg: CSR, Poisson generators, a Matrix Market reader. */
#ifndef MTX_H
#define MTX_H

#include <stddef.h>

#define MTX_MAXROWS	(1 << 26)	/* rows a matrix may have */
#define MTX_MAXNNZ	(1 << 27)	/* stored entries, both triangles */

/* A square matrix in compressed sparse rows, columns sorted in each row. */
struct mtx {
	int		 n;		/* rows = columns */
	int		*rp;		/* n + 1 row starts */
	int		*ci;		/* column of each entry */
	double		*va;		/* value of each entry */
};

int	 mtx_poisson(struct mtx *, int, int);
int	 mtx_read(struct mtx *, const char *, char *, size_t);
void	 mtx_free(struct mtx *);
void	 mtx_mul(const struct mtx *, const double *, double *);

#endif
