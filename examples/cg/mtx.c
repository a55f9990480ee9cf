/* mtx.c - sparse matrices for cg: CSR, Poisson generators, a Matrix Market reader. */

/*
 * The reader takes what a user downloads from the SuiteSparse collection or
 * writes with scipy.io.mmwrite: "%%MatrixMarket matrix coordinate real|integer
 * symmetric|general", comment lines, a size line "rows columns entries", then
 * one "row column value" line per entry (1-based). A symmetric file holds the
 * lower triangle; each off-diagonal entry stands for two. Entries given twice
 * are summed. Everything in the file is checked before it sizes or indexes
 * anything: a malformed file gets one message naming its line, never a crash.
 * cg needs a symmetric matrix with a positive diagonal, so those are checked
 * too (a general file must be symmetric to the last bit, as mmwrite writes
 * one).
 */

#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mtx.h"

#define MTX_LINEMAX	1024	/* longest line the reader accepts */
#define MTX_GROW	65536	/* entries allocated first, then doubled */

/* One entry while reading: row, column, value. */
struct mtx_ent {
	int	 i;
	int	 j;
	double	 v;
};

/* Format an error message into err. */
static void __attribute__((format(printf, 3, 4)))
mtx_error(char *err, size_t len, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* Free a matrix's arrays. */
void
mtx_free(struct mtx *m)
{
	free(m->rp);
	free(m->ci);
	free(m->va);
	memset(m, 0, sizeof *m);
}

/* Allocate the arrays of an n-row matrix of nnz entries; -1 when out of memory. */
static int
mtx_alloc(struct mtx *m, int n, size_t nnz)
{
	memset(m, 0, sizeof *m);
	m->n = n;
	m->rp = calloc((size_t)n + 1, sizeof *m->rp);
	m->ci = calloc(nnz ? nnz : 1, sizeof *m->ci);
	m->va = calloc(nnz ? nnz : 1, sizeof *m->va);
	if (m->rp == NULL || m->ci == NULL || m->va == NULL) {
		mtx_free(m);
		return (-1);
	}
	return (0);
}

/*
 * Make the 5-point (dim 2) or 7-point (dim 3) Poisson matrix of a grid of
 * side points per direction, Dirichlet boundary, natural ordering: the
 * negative Laplacian times h^2, 2 dim on the diagonal, -1 to each
 * neighbour. Return -1 when the size is out of range or memory is short.
 */
int
mtx_poisson(struct mtx *m, int dim, int side)
{
	long	 rows, k;
	size_t	 e = 0;
	int	 c[3], d, stride[3];

	if (side < 1 || side > MTX_MAXROWS || (dim != 2 && dim != 3))
		return (-1);
	rows = dim == 2 ? (long)side * side : (long)side * side * side;
	if (rows > MTX_MAXROWS)
		return (-1);
	stride[0] = 1;
	stride[1] = side;
	stride[2] = (int)((long)side * side);
	if (mtx_alloc(m, (int)rows, (size_t)rows * (2 * dim + 1)) != 0)
		return (-1);
	for (k = 0; k < rows; k++) {
		c[0] = (int)(k % side);
		c[1] = (int)(k / side % side);
		c[2] = (int)(k / ((long)side * side));
		/* Columns in increasing order: -z, -y, -x, self, +x, +y, +z. */
		for (d = dim - 1; d >= 0; d--) {
			if (c[d] > 0) {
				m->ci[e] = (int)(k - stride[d]);
				m->va[e++] = -1;
			}
		}
		m->ci[e] = (int)k;
		m->va[e++] = 2 * dim;
		for (d = 0; d < dim; d++) {
			if (c[d] < side - 1) {
				m->ci[e] = (int)(k + stride[d]);
				m->va[e++] = -1;
			}
		}
		m->rp[k + 1] = (int)e;
	}
	return (0);
}

/* y = A x, in double. */
void
mtx_mul(const struct mtx *m, const double *x, double *y)
{
	double	a;
	int	i, k;

	for (i = 0; i < m->n; i++) {
		a = 0;
		for (k = m->rp[i]; k < m->rp[i + 1]; k++)
			a += m->va[k] * x[m->ci[k]];
		y[i] = a;
	}
}

/*
 * Read the next line that is not a comment or blank into buf; return 1, 0
 * at the end of the file, -1 for a line too long or a read error.
 */
static int
mtx_line(FILE *f, char *buf, size_t len, long *lineno, int comments)
{
	size_t	 l;
	char	*p;

	for (;;) {
		if (fgets(buf, (int)len, f) == NULL) {
			*lineno += ferror(f) ? 1 : 0;
			return (ferror(f) ? -1 : 0);
		}
		(*lineno)++;
		l = strlen(buf);
		if (l == len - 1 && buf[l - 1] != '\n' && !feof(f))
			return (-1);
		if (comments && buf[0] == '%')
			continue;
		for (p = buf; isspace((unsigned char)*p); p++)
			;
		if (*p != '\0')
			return (1);
	}
}

/* Parse a whole decimal integer at *pp into *v, moving *pp past it; -1 if none. */
static int
mtx_int(char **pp, long *v)
{
	char	*end;

	errno = 0;
	*v = strtol(*pp, &end, 10);
	if (end == *pp || errno != 0 || (*end != '\0' &&
	    !isspace((unsigned char)*end)))
		return (-1);
	*pp = end;
	return (0);
}

/* Say whether only blanks are left at p. */
static int
mtx_end(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return (*p == '\0');
}

/* Order entries by row, then column. */
static int
mtx_cmp(const void *a, const void *b)
{
	const struct mtx_ent	*x = a, *y = b;

	if (x->i != y->i)
		return (x->i < y->i ? -1 : 1);
	if (x->j != y->j)
		return (x->j < y->j ? -1 : 1);
	return (0);
}

/* Parse the banner line; set *sym. Return -1 with a message if it is not one cg reads. */
static int
mtx_banner(char *line, int *sym, char *err, size_t elen)
{
	char	*w[5], *save = NULL;
	int	 k;

	for (k = 0; k < 5; k++) {
		w[k] = strtok_r(k == 0 ? line : NULL, " \t\r\n", &save);
		if (w[k] == NULL) {
			mtx_error(err, elen, "line 1: not a Matrix Market "
			    "banner (want %%%%MatrixMarket matrix coordinate "
			    "real symmetric|general)");
			return (-1);
		}
	}
	if (strcasecmp(w[0], "%%MatrixMarket") != 0 ||
	    strcasecmp(w[1], "matrix") != 0) {
		mtx_error(err, elen, "line 1: not a Matrix Market matrix");
		return (-1);
	}
	if (strcasecmp(w[2], "coordinate") != 0) {
		mtx_error(err, elen, "line 1: format '%s' not supported (only "
		    "coordinate: a sparse matrix)", w[2]);
		return (-1);
	}
	if (strcasecmp(w[3], "real") != 0 && strcasecmp(w[3], "integer") != 0) {
		mtx_error(err, elen, "line 1: field '%s' not supported (real "
		    "or integer)", w[3]);
		return (-1);
	}
	if (strcasecmp(w[4], "symmetric") == 0)
		*sym = 1;
	else if (strcasecmp(w[4], "general") == 0)
		*sym = 0;
	else {
		mtx_error(err, elen, "line 1: symmetry '%s' not supported "
		    "(symmetric or general)", w[4]);
		return (-1);
	}
	return (0);
}

/* Return the entry (i, j) of m, or NAN where m has none. */
static double
mtx_at(const struct mtx *m, int i, int j)
{
	int	lo = m->rp[i], hi = m->rp[i + 1], mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->ci[mid] == j)
			return (m->va[mid]);
		if (m->ci[mid] < j)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (NAN);
}

/* Check that m is symmetric with a positive diagonal: what cg needs. */
static int
mtx_check_spd(const struct mtx *m, char *err, size_t elen)
{
	double	t;
	int	i, k;

	for (i = 0; i < m->n; i++) {
		if (!(mtx_at(m, i, i) > 0)) {
			mtx_error(err, elen, "row %d: diagonal entry missing "
			    "or not positive: the matrix is not positive "
			    "definite", i + 1);
			return (-1);
		}
		for (k = m->rp[i]; k < m->rp[i + 1]; k++) {
			t = mtx_at(m, m->ci[k], i);
			if (isnan(t)) {
				mtx_error(err, elen, "entry (%d, %d) = %g but "
				    "(%d, %d) is absent: the matrix is not "
				    "symmetric", i + 1, m->ci[k] + 1,
				    m->va[k], m->ci[k] + 1, i + 1);
				return (-1);
			}
			if (t != m->va[k]) {
				mtx_error(err, elen, "entry (%d, %d) = %g but "
				    "(%d, %d) = %g: the matrix is not "
				    "symmetric", i + 1, m->ci[k] + 1,
				    m->va[k], m->ci[k] + 1, i + 1, t);
				return (-1);
			}
		}
	}
	return (0);
}

/*
 * Read the Matrix Market file path into m. Return 0, or -1 with a message
 * in err (naming the line where the file is at fault).
 */
int
mtx_read(struct mtx *m, const char *path, char *err, size_t elen)
{
	FILE		*f;
	struct mtx_ent	*e = NULL, *ne2;
	char		 line[MTX_LINEMAX], *p, *q;
	long		 lineno = 0, rows, cols, nnz, i, j, k, got = 0, most;
	size_t		 ne = 0, out, cap, room;
	double		 v;
	int		 sym = 0, rc = -1, r;

	memset(m, 0, sizeof *m);
	if ((f = fopen(path, "r")) == NULL) {
		mtx_error(err, elen, "%s", strerror(errno));
		return (-1);
	}
	if ((r = mtx_line(f, line, sizeof line, &lineno, 0)) <= 0) {
		mtx_error(err, elen, r == 0 ? "empty file" :
		    "line 1: too long or unreadable");
		goto out;
	}
	if (mtx_banner(line, &sym, err, elen) != 0)
		goto out;
	if ((r = mtx_line(f, line, sizeof line, &lineno, 1)) <= 0) {
		mtx_error(err, elen, r == 0 ? "no size line" :
		    "line %ld: too long or unreadable", lineno);
		goto out;
	}
	p = line;
	if (mtx_int(&p, &rows) != 0 || mtx_int(&p, &cols) != 0 ||
	    mtx_int(&p, &nnz) != 0 || !mtx_end(p)) {
		mtx_error(err, elen, "line %ld: want a size line \"rows "
		    "columns entries\"", lineno);
		goto out;
	}
	if (rows != cols) {
		mtx_error(err, elen, "line %ld: %ld x %ld: the matrix must be "
		    "square", lineno, rows, cols);
		goto out;
	}
	if (rows < 1 || rows > MTX_MAXROWS) {
		mtx_error(err, elen, "line %ld: %ld rows: want 1 to %d", lineno,
		    rows, MTX_MAXROWS);
		goto out;
	}
	/* Both triangles of a symmetric file must fit the limit too. */
	most = sym ? rows * (rows + 1) / 2 : rows * rows;
	if (most > (sym ? MTX_MAXNNZ / 2 : MTX_MAXNNZ))
		most = sym ? MTX_MAXNNZ / 2 : MTX_MAXNNZ;
	if (nnz < 1 || nnz > most) {
		mtx_error(err, elen, "line %ld: %ld entries for %ld rows: want "
		    "1 to %ld", lineno, nnz, rows, most);
		goto out;
	}
	/* Each row needs its diagonal entry: fewer lines cannot make one. */
	if (nnz < rows) {
		mtx_error(err, elen, "line %ld: %ld entries for %ld rows: a "
		    "diagonal entry is missing (the matrix is not positive "
		    "definite)", lineno, nnz, rows);
		goto out;
	}
	/*
	 * The entries grow as lines come, up to what the size line says: a
	 * short file that claims 2^27 entries allocates for what it holds.
	 */
	cap = (size_t)(sym ? 2 * nnz : nnz);
	room = cap < MTX_GROW ? cap : MTX_GROW;
	if ((e = calloc(room, sizeof *e)) == NULL) {
		mtx_error(err, elen, "out of memory for %zu entries", room);
		goto out;
	}
	while ((r = mtx_line(f, line, sizeof line, &lineno, 1)) > 0) {
		if (got == nnz) {
			mtx_error(err, elen, "line %ld: more entries than the "
			    "%ld the size line gives", lineno, nnz);
			goto out;
		}
		if (ne + 2 > room && room < cap) {
			room = room > cap / 2 ? cap : room * 2;
			if ((ne2 = realloc(e, room * sizeof *e)) == NULL) {
				mtx_error(err, elen, "out of memory for %zu "
				    "entries", room);
				goto out;
			}
			e = ne2;
		}
		p = line;
		if (mtx_int(&p, &i) != 0 || mtx_int(&p, &j) != 0) {
			mtx_error(err, elen, "line %ld: want \"row column "
			    "value\"", lineno);
			goto out;
		}
		errno = 0;
		q = p;
		v = strtod(q, &p);
		/* An underflow (a denormal or zero) is a value like any. */
		if (p == q || (errno != 0 && !(errno == ERANGE &&
		    fabs(v) < 1)) || !isfinite(v) || !mtx_end(p)) {
			mtx_error(err, elen, "line %ld: want a finite value "
			    "after the row and column", lineno);
			goto out;
		}
		if (i < 1 || i > rows || j < 1 || j > rows) {
			mtx_error(err, elen, "line %ld: entry (%ld, %ld) "
			    "outside the %ld x %ld matrix", lineno, i, j, rows,
			    rows);
			goto out;
		}
		if (sym && j > i) {
			mtx_error(err, elen, "line %ld: entry (%ld, %ld) above "
			    "the diagonal in a symmetric file (the lower "
			    "triangle only)", lineno, i, j);
			goto out;
		}
		e[ne].i = (int)i - 1;
		e[ne].j = (int)j - 1;
		e[ne++].v = v;
		if (sym && i != j) {
			e[ne].i = (int)j - 1;
			e[ne].j = (int)i - 1;
			e[ne++].v = v;
		}
		got++;
	}
	if (r < 0) {
		mtx_error(err, elen, "line %ld: too long or unreadable",
		    lineno);
		goto out;
	}
	if (got < nnz) {
		mtx_error(err, elen, "the file ends after %ld of its %ld "
		    "entries", got, nnz);
		goto out;
	}

	/* Sort, sum duplicates, fill the rows. */
	qsort(e, ne, sizeof *e, mtx_cmp);
	if (mtx_alloc(m, (int)rows, ne) != 0) {
		mtx_error(err, elen, "out of memory for %zu entries", ne);
		goto out;
	}
	out = 0;
	for (k = 0; k < (long)ne; k++) {
		if (out > 0 && e[k].i == e[k - 1].i && e[k].j == e[k - 1].j) {
			m->va[out - 1] += e[k].v;
			continue;
		}
		m->ci[out] = e[k].j;
		m->va[out++] = e[k].v;
		m->rp[e[k].i + 1] = (int)out;
	}
	/* Rows with no entry start where the row before ended. */
	for (k = 1; k <= rows; k++) {
		if (m->rp[k] < m->rp[k - 1])
			m->rp[k] = m->rp[k - 1];
	}
	if (mtx_check_spd(m, err, elen) != 0)
		goto out;
	rc = 0;
out:
	if (rc != 0)
		mtx_free(m);
	free(e);
	fclose(f);
	return (rc);
}
