/*
 * vcl_include.c - what a program build may read. The scanner finds the
 * files a source names (#include, #include_next, #import, #embed,
 * __has_include, #pragma dependency) for the client to ship, and refuses
 * for the server what would reach outside the build's own directory: an
 * absolute name, a ".." component, a name computed by a macro. Build
 * options are checked against a whitelist and written out canonically.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_include.h"

#define VCL_INCLUDE_NAME_MAX	255	/* bytes of one component */

/* One pass over a source, under one reading of its lexical rules. */
struct vcl_scan {
	char		*t;		/* after trigraphs and line splices */
	unsigned	*line;		/* source line of each byte of t */
	size_t		 n, i;
	int		 raw;		/* C++ raw strings R"d(...)d" */
	vcl_include_fn	 fn;
	void		*arg;
	char		*why;
	size_t		 whylen;
	size_t		 paste;		/* where "##" was seen, +1 */
	size_t		 piece;		/* where a piece of a banned name was */
};

/*
 * Names a source may not form: `#pragma clang __debug crash` (and its
 * siblings) aborts clang inside the server's process, and _Pragma can
 * carry it in from a macro. So __debug is refused everywhere, _Pragma
 * takes only a literal, and token pasting is refused where a piece of
 * either name exists to paste (pieces start with '_': "_P", "__de"...).
 */
static const char *const vcl_banned[] = { "_Pragma", "__debug" };

/* Is the identifier a proper prefix of a banned name? */
static int
vcl_scan_is_piece(const char *id, size_t l)
{
	size_t	i;

	for (i = 0; i < sizeof vcl_banned / sizeof vcl_banned[0]; i++)
		if (l < strlen(vcl_banned[i]) &&
		    memcmp(id, vcl_banned[i], l) == 0)
			return (1);
	return (0);
}

/* Printable copy of a name for a message: at most 200 bytes. */
static void
vcl_include_quote(char *dst, size_t dstlen, const char *s, size_t len)
{
	size_t	i, j = 0;

	for (i = 0; i < len && j + 4 < dstlen && i < 200; i++)
		dst[j++] = isprint((unsigned char)s[i]) ? s[i] : '?';
	if (i < len && j + 4 < dstlen) {
		dst[j++] = '.';
		dst[j++] = '.';
		dst[j++] = '.';
	}
	dst[j] = '\0';
}

static int	vcl_scan_refuse(struct vcl_scan *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/* Say why a source was refused. Returns -1. */
static int
vcl_scan_refuse(struct vcl_scan *sc, size_t at, const char *fmt, ...)
{
	va_list	ap;
	int	n = 0;

	if (sc->why == NULL || sc->whylen == 0)
		return (-1);
	if (sc->line != NULL && at < sc->n)
		n = snprintf(sc->why, sc->whylen, "line %u: ", sc->line[at]);
	if (n < 0 || (size_t)n >= sc->whylen)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(sc->why + n, sc->whylen - (size_t)n, fmt, ap);
	va_end(ap);
	return (-1);
}

/* The character a trigraph ??c stands for, or 0. */
static char
vcl_trigraph(char c)
{
	static const char	from[] = "=/'()!<>-", to[] = "#\\^[]|{}~";
	const char		*p;

	if (c == '\0' || (p = strchr(from, c)) == NULL)
		return (0);
	return (to[p - from]);
}

/*
 * Translation phases 1 and 2: trigraphs (if tri) and line splices, where
 * a backslash may be followed by blanks before its newline (as clang and
 * gcc take it). Keeps the source line of each byte for messages.
 */
static int
vcl_scan_prepare(struct vcl_scan *sc, const char *src, size_t len, int tri)
{
	size_t		i = 0, j, adv;
	unsigned	line = 1;
	char		c, m;

	if ((sc->t = malloc(len + 1)) == NULL ||
	    (sc->line = calloc(len + 1, sizeof *sc->line)) == NULL)
		return (-1);
	sc->n = 0;
	while (i < len) {
		c = src[i];
		adv = 1;
		if (tri && c == '?' && i + 2 < len && src[i + 1] == '?' &&
		    (m = vcl_trigraph(src[i + 2])) != 0) {
			c = m;
			adv = 3;
		}
		if (c == '\\') {
			for (j = i + adv; j < len && (src[j] == ' ' ||
			    src[j] == '\t' || src[j] == '\f' || src[j] == '\v');
			    j++)
				;
			if (j < len && (src[j] == '\n' || src[j] == '\r')) {
				if (src[j] == '\r' && j + 1 < len &&
				    src[j + 1] == '\n')
					j++;
				i = j + 1;
				line++;
				continue;
			}
		}
		sc->line[sc->n] = line;
		sc->t[sc->n++] = c;
		if (c == '\n')
			line++;
		i += adv;
	}
	sc->t[sc->n] = '\0';
	sc->line[sc->n] = line;
	return (0);
}

static int
vcl_is_nl(char c)
{
	return (c == '\n' || c == '\r');
}

static int
vcl_is_blank(char c)
{
	return (c == ' ' || c == '\t' || c == '\f' || c == '\v');
}

static int
vcl_is_ident(char c, int first)
{
	return (c == '_' || c == '$' || isalpha((unsigned char)c) ||
	    (!first && isdigit((unsigned char)c)) || (unsigned char)c >= 0x80);
}

/*
 * Skip blanks and comments inside a logical line (a block comment may
 * span lines: it is one space). Returns 1 if a block comment held a
 * newline.
 */
static int
vcl_scan_ws(struct vcl_scan *sc)
{
	const char	*t = sc->t;
	int		 nl = 0;

	while (sc->i < sc->n) {
		if (vcl_is_blank(t[sc->i]))
			sc->i++;
		else if (t[sc->i] == '/' && t[sc->i + 1] == '*') {
			for (sc->i += 2; sc->i < sc->n && !(t[sc->i] == '*' &&
			    t[sc->i + 1] == '/'); sc->i++)
				if (vcl_is_nl(t[sc->i]))
					nl = 1;
			sc->i = sc->i < sc->n ? sc->i + 2 : sc->n;
		} else if (t[sc->i] == '/' && t[sc->i + 1] == '/') {
			while (sc->i < sc->n && !vcl_is_nl(t[sc->i]))
				sc->i++;
		} else
			break;
	}
	return (nl);
}

/* Skip a string or character literal opened by q; it ends at a newline. */
static void
vcl_scan_literal(struct vcl_scan *sc, char q)
{
	const char	*t = sc->t;

	for (sc->i++; sc->i < sc->n && t[sc->i] != q && !vcl_is_nl(t[sc->i]);
	    sc->i++)
		if (t[sc->i] == '\\' && sc->i + 1 < sc->n &&
		    !vcl_is_nl(t[sc->i + 1]))
			sc->i++;
	if (sc->i < sc->n && t[sc->i] == q)
		sc->i++;
}

/*
 * Skip a raw string R"d(...)d" whose quote is at i. One with a bad or
 * unterminated delimiter is taken as an ordinary string (to the line's
 * end), which can only make the scan see more directives, never fewer.
 */
static void
vcl_scan_raw(struct vcl_scan *sc)
{
	const char	*t = sc->t, *end;
	char		 close[20];
	size_t		 d, s = sc->i + 1;

	for (d = 0; s + d < sc->n && d < 16 && t[s + d] != '(' &&
	    t[s + d] != ')' && t[s + d] != '\\' && t[s + d] != '"' &&
	    !isspace((unsigned char)t[s + d]); d++)
		;
	if (s + d >= sc->n || t[s + d] != '(') {
		vcl_scan_literal(sc, '"');
		return;
	}
	close[0] = ')';
	memcpy(close + 1, t + s, d);
	close[d + 1] = '"';
	close[d + 2] = '\0';
	if ((end = strstr(t + s + d + 1, close)) == NULL) {
		vcl_scan_literal(sc, '"');
		return;
	}
	sc->i = (size_t)(end - t) + d + 2;
}

/* Is name (not NUL-terminated) safe to look up: relative, no "..". */
int
vcl_include_path_ok(const char *name, size_t len)
{
	size_t	i, s = 0;

	if (len == 0 || name[0] == '/' || memchr(name, '\0', len) != NULL)
		return (0);
	for (i = 0; i <= len; i++) {
		if (i < len && name[i] != '/')
			continue;
		if (i - s == 2 && name[s] == '.' && name[s + 1] == '.')
			return (0);
		s = i + 1;
	}
	return (1);
}

/*
 * Is a header's name from the wire one the server may create under its
 * build directory: relative, short, no empty, "." or ".." component.
 */
int
vcl_include_name_ok(const char *name, size_t len)
{
	size_t	i, s = 0, depth = 0;

	if (len == 0 || len > VCL_INCLUDE_MAX_NAME || name[0] == '/' ||
	    memchr(name, '\0', len) != NULL)
		return (0);
	for (i = 0; i <= len; i++) {
		if (i < len && name[i] != '/')
			continue;
		if (i == s || i - s > VCL_INCLUDE_NAME_MAX ||
		    (i - s == 1 && name[s] == '.') ||
		    (i - s == 2 && name[s] == '.' && name[s + 1] == '.') ||
		    ++depth > VCL_INCLUDE_MAX_DEPTH)
			return (0);
		s = i + 1;
	}
	return (1);
}

/*
 * The file name after an include-like directive or __has_include( at i:
 * "name" or <name>, checked and reported. Anything else (a macro) is
 * refused: what it expands to cannot be known here.
 */
static int
vcl_scan_header(struct vcl_scan *sc, const char *what)
{
	const char	*t = sc->t;
	char		 q, shown[256];
	size_t		 at = sc->i, s, e;

	if (sc->i >= sc->n || (t[sc->i] != '"' && t[sc->i] != '<'))
		return (vcl_scan_refuse(sc, at, "%s with a macro (not \"file\" "
		    "or <file>) is not allowed in a VCL build", what));
	q = t[sc->i] == '"' ? '"' : '>';
	s = sc->i + 1;
	for (e = s; e < sc->n && t[e] != q && !vcl_is_nl(t[e]); e++)
		;
	if (e >= sc->n || t[e] != q)
		return (vcl_scan_refuse(sc, at, "%s: unterminated file name",
		    what));
	vcl_include_quote(shown, sizeof shown, t + s, e - s);
	if (e > s && t[s] == '/')
		return (vcl_scan_refuse(sc, at, "%s \"%s\": an absolute path "
		    "is not allowed in a VCL build", what, shown));
	if (!vcl_include_path_ok(t + s, e - s))
		return (vcl_scan_refuse(sc, at, "%s \"%s\": a '..' component "
		    "is not allowed in a VCL build", what, shown));
	if (sc->fn != NULL)
		sc->fn(sc->arg, t + s, e - s, q == '>');
	sc->i = e + 1;
	return (0);
}

/* The rest of a pragma's line: "dependency" names a file. */
static int
vcl_scan_pragma(struct vcl_scan *sc)
{
	const char	*t = sc->t;
	size_t		 s;

	for (;;) {
		vcl_scan_ws(sc);
		if (sc->i >= sc->n || vcl_is_nl(t[sc->i]))
			return (0);
		if (t[sc->i] == '"' || t[sc->i] == '\'') {
			vcl_scan_literal(sc, t[sc->i]);
			continue;
		}
		if (!vcl_is_ident(t[sc->i], 1)) {
			sc->i++;
			continue;
		}
		for (s = sc->i; sc->i < sc->n && vcl_is_ident(t[sc->i], 0);
		    sc->i++)
			;
		if (sc->i - s == 7 && memcmp(t + s, "__debug", 7) == 0)
			return (vcl_scan_refuse(sc, s, "#pragma clang __debug is "
			    "not allowed in a VCL build"));
		if (sc->i - s == 10 && memcmp(t + s, "dependency", 10) == 0) {
			vcl_scan_ws(sc);
			return (vcl_scan_header(sc, "#pragma dependency"));
		}
	}
}

/*
 * _Pragma("..."): destringize the literal and check it as a pragma line.
 * A _Pragma of something else (a macro's #x) is left alone.
 */
static int
vcl_scan_pragma_op(struct vcl_scan *sc)
{
	struct vcl_scan	 sub;
	const char	*t = sc->t;
	char		*buf, subwhy[256];
	size_t		 at = sc->i, n = 0;
	int		 rc;

	vcl_scan_ws(sc);
	if (sc->i >= sc->n || t[sc->i] != '(')
		return (vcl_scan_refuse(sc, at, "_Pragma without (\"...\") is "
		    "not allowed in a VCL build"));
	sc->i++;
	vcl_scan_ws(sc);
	while (sc->i < sc->n && (t[sc->i] == 'L' || t[sc->i] == 'u' ||
	    t[sc->i] == 'U' || t[sc->i] == '8'))
		sc->i++;
	if (sc->i >= sc->n || t[sc->i] != '"')
		return (vcl_scan_refuse(sc, at, "_Pragma of a computed string "
		    "is not allowed in a VCL build"));
	if ((buf = malloc(sc->n - sc->i + 1)) == NULL)
		return (vcl_scan_refuse(sc, at, "out of memory"));
	for (sc->i++; sc->i < sc->n && t[sc->i] != '"' && !vcl_is_nl(t[sc->i]);
	    sc->i++) {
		if (t[sc->i] == '\\' && sc->i + 1 < sc->n &&
		    (t[sc->i + 1] == '"' || t[sc->i + 1] == '\\'))
			sc->i++;
		buf[n++] = t[sc->i];
	}
	buf[n] = '\0';
	memset(&sub, 0, sizeof sub);
	subwhy[0] = '\0';
	sub.why = subwhy;
	sub.whylen = sizeof subwhy;
	sub.t = buf;
	sub.n = n;
	sub.fn = sc->fn;
	sub.arg = sc->arg;
	if ((rc = vcl_scan_pragma(&sub)) != 0)
		vcl_scan_refuse(sc, at, "_Pragma: %s", subwhy);
	free(buf);
	return (rc);
}

/* Read the identifier at i; returns its length (0: none). */
static size_t
vcl_scan_ident(struct vcl_scan *sc, const char **id)
{
	size_t	s = sc->i;

	if (sc->i >= sc->n || !vcl_is_ident(sc->t[sc->i], 1))
		return (0);
	while (sc->i < sc->n && vcl_is_ident(sc->t[sc->i], 0))
		sc->i++;
	*id = sc->t + s;
	return (sc->i - s);
}

#define VCL_ID_IS(p, l, s)	((l) == sizeof(s) - 1 && memcmp(p, s, l) == 0)

/* A directive; i is just past its '#'. */
static int
vcl_scan_directive(struct vcl_scan *sc)
{
	const char	*id;
	size_t		 l;

	vcl_scan_ws(sc);
	if ((l = vcl_scan_ident(sc, &id)) == 0)
		return (0);
	if (VCL_ID_IS(id, l, "include") || VCL_ID_IS(id, l, "include_next") ||
	    VCL_ID_IS(id, l, "import") || VCL_ID_IS(id, l, "embed")) {
		vcl_scan_ws(sc);
		return (vcl_scan_header(sc, VCL_ID_IS(id, l, "include") ?
		    "#include" : VCL_ID_IS(id, l, "import") ? "#import" :
		    VCL_ID_IS(id, l, "embed") ? "#embed" : "#include_next"));
	}
	if (VCL_ID_IS(id, l, "pragma"))
		return (vcl_scan_pragma(sc));
	return (0);	/* the rest of the line is scanned as text */
}

/* One pass over sc->t. Returns 0, or -1 with sc->why. */
static int
vcl_scan_pass(struct vcl_scan *sc)
{
	const char	*t = sc->t, *id;
	size_t		 l, at;
	int		 bol = 1;
	char		 c;

	while (sc->i < sc->n) {
		c = t[sc->i];
		if (vcl_is_nl(c)) {
			bol = 1;
			sc->i++;
			continue;
		}
		if (vcl_is_blank(c) || (c == '/' && (t[sc->i + 1] == '*' ||
		    t[sc->i + 1] == '/'))) {
			if (vcl_scan_ws(sc))
				bol = 1;	/* be safe: may start a line */
			continue;
		}
		if (bol && (c == '#' || (c == '%' && t[sc->i + 1] == ':'))) {
			sc->i += c == '#' ? 1 : 2;
			bol = 0;
			if (vcl_scan_directive(sc) != 0)
				return (-1);
			continue;
		}
		bol = 0;
		if (c == '"' || c == '\'') {
			vcl_scan_literal(sc, c);
			continue;
		}
		if (isdigit((unsigned char)c) || (c == '.' &&
		    isdigit((unsigned char)t[sc->i + 1]))) {
			while (sc->i < sc->n && (isalnum((unsigned char)t[sc->i]) ||
			    t[sc->i] == '.' || t[sc->i] == '_' ||
			    ((t[sc->i] == '+' || t[sc->i] == '-') && strchr("eEpP",
			    t[sc->i - 1]) != NULL)))
				sc->i++;
			continue;
		}
		at = sc->i;
		if ((l = vcl_scan_ident(sc, &id)) == 0) {
			if ((c == '#' && t[sc->i + 1] == '#') || (c == '%' &&
			    t[sc->i + 1] == ':' && t[sc->i + 2] == '%' &&
			    t[sc->i + 3] == ':'))
				sc->paste = at + 1;
			sc->i++;
			continue;
		}
		if (VCL_ID_IS(id, l, "__debug"))
			return (vcl_scan_refuse(sc, at, "__debug is not allowed "
			    "in a VCL build"));
		if (vcl_scan_is_piece(id, l))
			sc->piece = at + 1;
		if (sc->raw && sc->i < sc->n && t[sc->i] == '"' &&
		    (VCL_ID_IS(id, l, "R") || VCL_ID_IS(id, l, "LR") ||
		    VCL_ID_IS(id, l, "uR") || VCL_ID_IS(id, l, "UR") ||
		    VCL_ID_IS(id, l, "u8R"))) {
			vcl_scan_raw(sc);
			continue;
		}
		if (VCL_ID_IS(id, l, "__has_include") ||
		    VCL_ID_IS(id, l, "__has_include_next") ||
		    VCL_ID_IS(id, l, "__has_embed")) {
			vcl_scan_ws(sc);
			if (sc->i >= sc->n || t[sc->i] != '(')
				return (vcl_scan_refuse(sc, at, "%.*s not "
				    "followed by (\"file\") is not allowed in a "
				    "VCL build", (int)l, id));
			sc->i++;
			vcl_scan_ws(sc);
			if (vcl_scan_header(sc, "__has_include") != 0)
				return (-1);
			continue;
		}
		if (VCL_ID_IS(id, l, "_Pragma") && vcl_scan_pragma_op(sc) != 0)
			return (-1);
	}
	if (sc->paste != 0 && sc->piece != 0)
		return (vcl_scan_refuse(sc, sc->piece - 1, "token pasting (##) "
		    "with a piece of _Pragma or __debug is not allowed in a VCL "
		    "build"));
	return (0);
}

/*
 * Scan a source: call fn for every file it names, or refuse it (-1, why
 * says where and what). The source is read four times, with and without
 * trigraphs and with and without C++ raw strings, so that a compiler
 * reading it either way sees no directive the scan missed; fn is called
 * on the first reading only (OpenCL C as clang reads it: trigraphs on).
 */
int
vcl_include_scan(const char *src, size_t len, vcl_include_fn fn, void *arg,
    char *why, size_t whylen)
{
	struct vcl_scan	sc;
	int		pass, rc = 0;

	for (pass = 0; pass < 4 && rc == 0; pass++) {
		memset(&sc, 0, sizeof sc);
		sc.raw = pass & 1;
		sc.fn = pass == 0 ? fn : NULL;
		sc.arg = arg;
		sc.why = why;
		sc.whylen = whylen;
		if (vcl_scan_prepare(&sc, src, len, pass < 2) != 0) {
			if (why != NULL && whylen > 0)
				snprintf(why, whylen, "out of memory");
			rc = -1;
		} else
			rc = vcl_scan_pass(&sc);
		free(sc.t);
		free(sc.line);
	}
	return (rc);
}

/* A growable string for the canonical options. */
struct vcl_sbuf {
	char	*p;
	size_t	 len, cap;
};

/*
 * Append an option: flag s1 and its argument s2, quoted if it holds a
 * blank (-D"X=1 + 2": runtimes split options on blanks outside quotes).
 */
static int
vcl_sbuf_opt(struct vcl_sbuf *b, const char *s1, const char *s2)
{
	size_t	n = strlen(s1) + strlen(s2) + 4;
	char	*p;
	int	q = strchr(s2, ' ') != NULL;

	if (b->len + n + 1 > b->cap) {
		if ((p = realloc(b->p, b->cap + n + 256)) == NULL)
			return (-1);
		b->p = p;
		b->cap += n + 256;
	}
	b->len += (size_t)snprintf(b->p + b->len, b->cap - b->len, "%s%s%s%s%s",
	    b->len > 0 ? " " : "", s1, q ? "\"" : "", s2, q ? "\"" : "");
	return (0);
}

/* Does s hold only characters of set (and at least one)? */
static int
vcl_opt_chars(const char *s, const char *set)
{
	if (*s == '\0')
		return (0);
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr(set, *s) == NULL)
			return (0);
	return (1);
}

/* Is def a -D argument: name, name=body or name(args)=body. */
static int
vcl_opt_define(const char *def, char *why, size_t whylen)
{
	const char	*p = def;

	if (!vcl_is_ident(*p, 1) || (unsigned char)*p >= 0x80)
		return (0);
	while (vcl_is_ident(*p, 0) && (unsigned char)*p < 0x80)
		p++;
	if (*p != '\0' && *p != '=' && *p != '(')
		return (0);
	/* The body is source text too: no __has_include("/..."). */
	return (vcl_include_scan(p, strlen(p), NULL, NULL, why, whylen) == 0);
}

/* Split options as OpenCL runtimes do: blanks, "quoted" blanks kept. */
static char **
vcl_opt_split(const char *in, size_t *np, char *why, size_t whylen)
{
	char		**v = NULL, **nv, *tok = NULL;
	size_t		  n = 0, len = strlen(in), i = 0, k;
	int		  inq;

	while (i < len) {
		while (i < len && isspace((unsigned char)in[i]))
			i++;
		if (i >= len)
			break;
		if ((tok = malloc(len - i + 1)) == NULL)
			goto fail;
		for (k = 0, inq = 0; i < len && (inq ||
		    !isspace((unsigned char)in[i])); i++) {
			if (in[i] == '"')
				inq = !inq;
			else if ((unsigned char)in[i] < 0x20 || in[i] == 0x7f) {
				snprintf(why, whylen, "a control character in "
				    "the build options");
				goto fail;
			} else
				tok[k++] = in[i];
		}
		tok[k] = '\0';
		if (inq) {
			snprintf(why, whylen, "an unbalanced quote in the "
			    "build options");
			goto fail;
		}
		if ((nv = realloc(v, (n + 2) * sizeof *v)) == NULL)
			goto fail;
		v = nv;
		v[n++] = tok;
		v[n] = NULL;
		tok = NULL;
	}
	*np = n;
	if (v == NULL && (v = calloc(1, sizeof *v)) == NULL)
		goto fail;
	return (v);
fail:
	free(tok);
	while (n > 0)
		free(v[--n]);
	free(v);
	return (NULL);
}

/*
 * Check build options against the whitelist (the OpenCL options: -D, -I,
 * -w, -W..., -g, -cl-*, -x spir, -spir-std=, -create-library,
 * -enable-link-options) and write them out canonically in o->out, each
 * -I dir as -I<iprefix><k> (k from 1) when iprefix is given. Returns 0,
 * or -1 with why (refused, or out of memory).
 */
int
vcl_include_options(const char *in, const char *iprefix,
    struct vcl_include_opts *o, char *why, size_t whylen)
{
	struct vcl_sbuf	  b = { NULL, 0, 0 };
	char		**v, **nd, dir[4096], shown[128];
	const char	 *a, *arg;
	size_t		  n = 0, i;
	int		  rc = -1;

	memset(o, 0, sizeof *o);
	snprintf(why, whylen, "out of memory");
	if ((v = vcl_opt_split(in != NULL ? in : "", &n, why, whylen)) == NULL)
		return (-1);
	for (i = 0; i < n; i++) {
		a = v[i];
		vcl_include_quote(shown, sizeof shown, a, strlen(a));
		if (strncmp(a, "-D", 2) == 0 || strncmp(a, "-I", 2) == 0) {
			arg = a[2] != '\0' ? a + 2 : i + 1 < n ? v[++i] : "";
			if (a[1] == 'D') {
				if (!vcl_opt_define(arg, why, whylen)) {
					if (strncmp(why, "line", 4) != 0)
						snprintf(why, whylen, "build "
						    "option -D needs a macro "
						    "name, not '%s'", shown);
					goto out;
				}
				if (vcl_sbuf_opt(&b, "-D", arg) != 0)
					goto oom;
				continue;
			}
			if (*arg == '\0') {
				snprintf(why, whylen, "build option -I needs a "
				    "directory");
				goto out;
			}
			if (o->ndirs >= VCL_INCLUDE_MAX_DIRS) {
				snprintf(why, whylen, "more than %d -I options",
				    VCL_INCLUDE_MAX_DIRS);
				goto out;
			}
			if ((nd = realloc(o->dirs, (o->ndirs + 1) *
			    sizeof *nd)) == NULL)
				goto oom;
			o->dirs = nd;
			if ((o->dirs[o->ndirs] = strdup(arg)) == NULL)
				goto oom;
			o->ndirs++;
			if (iprefix != NULL)
				snprintf(dir, sizeof dir, "%s%zu", iprefix,
				    o->ndirs);
			if (vcl_sbuf_opt(&b, "-I", iprefix != NULL ? dir : arg)
			    != 0)
				goto oom;
			continue;
		}
		if (strcmp(a, "-x") == 0 && i + 1 < n &&
		    strcmp(v[i + 1], "spir") == 0) {
			i++;
			if (vcl_sbuf_opt(&b, "-x", "") != 0 ||
			    vcl_sbuf_opt(&b, "spir", "") != 0)
				goto oom;
			continue;
		}
		if (strcmp(a, "-w") == 0 || strcmp(a, "-g") == 0 ||
		    strcmp(a, "-create-library") == 0 ||
		    strcmp(a, "-enable-link-options") == 0 ||
		    (strncmp(a, "-W", 2) == 0 && vcl_opt_chars(a + 2, "_=+-")) ||
		    (strncmp(a, "-cl-", 4) == 0 &&
		    vcl_opt_chars(a + 4, "_=+.,-")) ||
		    (strncmp(a, "-spir-std=", 10) == 0 &&
		    vcl_opt_chars(a + 10, "."))) {
			if (vcl_sbuf_opt(&b, a, "") != 0)
				goto oom;
			continue;
		}
		snprintf(why, whylen, "build option '%s' is not allowed by "
		    "VCL", shown);
		goto out;
	}
	if (b.p == NULL && (b.p = strdup("")) == NULL)
		goto oom;
	o->out = b.p;
	b.p = NULL;
	rc = 0;
	goto out;
oom:
	snprintf(why, whylen, "out of memory");
out:
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	free(b.p);
	if (rc != 0)
		vcl_include_opts_free(o);
	return (rc);
}

/* Free what vcl_include_options filled in. */
void
vcl_include_opts_free(struct vcl_include_opts *o)
{
	size_t	i;

	for (i = 0; i < o->ndirs; i++)
		free(o->dirs[i]);
	free(o->dirs);
	free(o->out);
	memset(o, 0, sizeof *o);
}
