/*
 * vcl_hostlist.c - Slurm host lists expanded into node addresses.
 *
 * SLURM_JOB_NODELIST is "node[01-03,07],gpu5": comma-separated host
 * expressions, each a name in which bracket groups of numbers and ranges
 * stand for every value (zero padding kept: "01-03" is 01, 02, 03). Several
 * groups in one name make their product ("a[1-2]b[1-2]": a1b1 a1b2 a2b1
 * a2b2). The list comes from the environment: every group is counted before
 * anything is made, so "n[0-999999999]" is refused, not allocated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_hostlist.h"

/* Longest number in a range: 9 digits keep values in an unsigned long. */
#define VCL_HOSTLIST_DIGITS	9

struct vcl_hostlist {
	const char	*port;		/* appended as ":port", or NULL */
	char	       **out;
	int		 n;
	int		 max;
	char		*err;
	size_t		 errlen;
};

/* A character a host name may hold. */
static int
vcl_hostlist_namechar(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_');
}

/*
 * Parse one "LO" or "LO-HI" of a group at *p (before end). Sets the bounds
 * and the width of LO (its zero padding). Returns 0, or -1 with err set.
 */
static int
vcl_hostlist_range(struct vcl_hostlist *h, const char **p, const char *end,
    unsigned long *lo, unsigned long *hi, int *width)
{
	const char	*s = *p;
	unsigned long	 v[2] = { 0, 0 };
	int		 i, len;

	for (i = 0; i < 2; i++) {
		for (len = 0; s < end && *s >= '0' && *s <= '9'; s++, len++) {
			if (len == VCL_HOSTLIST_DIGITS) {
				snprintf(h->err, h->errlen, "number over %d "
				    "digits in a range", VCL_HOSTLIST_DIGITS);
				return (-1);
			}
			v[i] = v[i] * 10 + (unsigned long)(*s - '0');
		}
		if (len == 0) {
			snprintf(h->err, h->errlen, "a range wants a number "
			    "at '%.*s'", (int)(end - s), s);
			return (-1);
		}
		if (i == 0) {
			*width = len;
			if (s == end || *s != '-') {
				v[1] = v[0];
				break;
			}
			s++;
		}
	}
	if (s + 1 == end && *s == ',') {
		snprintf(h->err, h->errlen, "empty range after ','");
		return (-1);
	}
	if (s < end && *s != ',') {
		snprintf(h->err, h->errlen, "unexpected '%c' in a range", *s);
		return (-1);
	}
	if (v[1] < v[0]) {
		snprintf(h->err, h->errlen, "range %lu-%lu runs backwards",
		    v[0], v[1]);
		return (-1);
	}
	*lo = v[0];
	*hi = v[1];
	*p = s < end ? s + 1 : s;
	return (0);
}

/*
 * Find the group that starts at expr[open] ('['): its closing bracket.
 * Returns the index of ']', or -1 with err set.
 */
static int
vcl_hostlist_close(struct vcl_hostlist *h, const char *expr, size_t len,
    size_t open)
{
	size_t	i;

	for (i = open + 1; i < len; i++) {
		if (expr[i] == ']')
			return ((int)i);
		if (expr[i] == '[') {
			snprintf(h->err, h->errlen, "nested '[' in '%.*s'",
			    (int)len, expr);
			return (-1);
		}
	}
	snprintf(h->err, h->errlen, "unterminated '[' in '%.*s'", (int)len,
	    expr);
	return (-1);
}

/*
 * Count the names one expression makes, checking its syntax; stop counting
 * past the room left (*count is then above it). Returns 0, or -1 with err.
 */
static int
vcl_hostlist_count(struct vcl_hostlist *h, const char *expr, size_t len,
    unsigned long *count)
{
	const char	*p, *end;
	unsigned long	 total = 1, group, lo, hi, room;
	size_t		 i;
	int		 close, width;

	room = (unsigned long)(h->max - h->n);
	for (i = 0; i < len; i++) {
		if (expr[i] == ']') {
			snprintf(h->err, h->errlen, "']' without '[' in "
			    "'%.*s'", (int)len, expr);
			return (-1);
		}
		if (expr[i] != '[') {
			if (!vcl_hostlist_namechar(expr[i])) {
				snprintf(h->err, h->errlen, "bad character "
				    "'%c' in '%.*s'", expr[i], (int)len, expr);
				return (-1);
			}
			continue;
		}
		if ((close = vcl_hostlist_close(h, expr, len, i)) < 0)
			return (-1);
		p = expr + i + 1;
		end = expr + close;
		if (p == end) {
			snprintf(h->err, h->errlen, "empty '[]' in '%.*s'",
			    (int)len, expr);
			return (-1);
		}
		group = 0;
		while (p < end) {
			if (vcl_hostlist_range(h, &p, end, &lo, &hi,
			    &width) != 0)
				return (-1);
			/* Both at most 9 digits: no sum here overflows. */
			group += hi - lo + 1;
			if (group > room)
				group = room + 1;
		}
		if (total > room / group)
			total = room + 1;
		else
			total *= group;
		i = (size_t)close;
	}
	*count = total;
	return (0);
}

/* Append one finished name (and port) to the output. */
static int
vcl_hostlist_emit(struct vcl_hostlist *h, const char *name)
{
	size_t	len = strlen(name) + (h->port != NULL ? strlen(h->port) + 2 : 1);
	char   *s;

	if ((s = malloc(len)) == NULL) {
		snprintf(h->err, h->errlen, "out of memory");
		return (-1);
	}
	if (h->port != NULL)
		snprintf(s, len, "%s:%s", name, h->port);
	else
		snprintf(s, len, "%s", name);
	h->out[h->n++] = s;
	return (0);
}

/*
 * Make every name of expr (already checked and counted) after the first
 * blen bytes of buf, in order: the values of its first group, each followed
 * by every name of the rest.
 */
static int
vcl_hostlist_make(struct vcl_hostlist *h, char *buf, size_t blen,
    const char *expr, size_t len)
{
	const char	*p, *end, *open;
	unsigned long	 lo, hi, v;
	size_t		 pre, close;
	char		 num[VCL_HOSTLIST_DIGITS + 1];
	int		 width, w;

	if ((open = memchr(expr, '[', len)) == NULL) {
		if (blen + len > VCL_HOSTLIST_NAME_MAX)
			goto toolong;
		memcpy(buf + blen, expr, len);
		buf[blen + len] = '\0';
		return (vcl_hostlist_emit(h, buf));
	}
	pre = (size_t)(open - expr);
	close = (size_t)((const char *)memchr(open, ']', len - pre) - expr);
	if (blen + pre > VCL_HOSTLIST_NAME_MAX)
		goto toolong;
	memcpy(buf + blen, expr, pre);
	blen += pre;
	p = open + 1;
	end = expr + close;
	while (p < end) {
		vcl_hostlist_range(h, &p, end, &lo, &hi, &width);
		for (v = lo; v <= hi; v++) {
			w = snprintf(num, sizeof num, "%0*lu", width, v);
			if (blen + (size_t)w > VCL_HOSTLIST_NAME_MAX)
				goto toolong;
			memcpy(buf + blen, num, (size_t)w);
			if (vcl_hostlist_make(h, buf, blen + (size_t)w,
			    expr + close + 1, len - close - 1) != 0)
				return (-1);
		}
	}
	return (0);
toolong:
	snprintf(h->err, h->errlen, "host name over %d characters",
	    VCL_HOSTLIST_NAME_MAX);
	return (-1);
}

/*
 * Expand a Slurm host list into at most max strings "host:port" (just
 * "host" if port is NULL), malloc'ed, stored in out. Returns how many, or
 * -1 with a message in err and nothing left allocated.
 */
int
vcl_hostlist_expand(const char *list, const char *port, char **out, int max,
    char *err, size_t errlen)
{
	struct vcl_hostlist	 h = { port, out, 0, max, err, errlen };
	char			 buf[VCL_HOSTLIST_NAME_MAX + 1];
	const char		*p = list, *e;
	unsigned long		 count;
	size_t			 len;
	int			 depth, i;

	while (*p != '\0') {
		/* One expression: up to a comma outside brackets. */
		for (e = p, depth = 0; *e != '\0'; e++) {
			if (*e == '[')
				depth++;
			else if (*e == ']')
				depth--;
			else if (*e == ',' && depth <= 0)
				break;
		}
		len = (size_t)(e - p);
		if (len > 0) {
			if (vcl_hostlist_count(&h, p, len, &count) != 0)
				goto fail;
			if (count > (unsigned long)(h.max - h.n)) {
				snprintf(err, errlen, "more than %d hosts",
				    max);
				goto fail;
			}
			if (vcl_hostlist_make(&h, buf, 0, p, len) != 0)
				goto fail;
		}
		p = *e == ',' ? e + 1 : e;
	}
	return (h.n);
fail:
	for (i = 0; i < h.n; i++) {
		free(out[i]);
		out[i] = NULL;
	}
	return (-1);
}
