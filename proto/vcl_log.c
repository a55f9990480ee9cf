/* vcl_log.c - leveled logging to stderr, shared by client and server. */
#include <sys/stat.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "vcl_log.h"

enum vcl_log_level	 vcl_log_level = VCL_LOG_ERROR;
static const char	*vcl_log_prog = "vcl";
static int		 vcl_log_journal;	/* stderr is the journal */

static const char *const vcl_log_names[] = {
	"none", "error", "warn", "info", "debug"
};

/* Parse a level name or digit. Returns 0, or -1 if it names no level. */
int
vcl_log_parse(const char *s, enum vcl_log_level *out)
{
	size_t	i;

	for (i = 0; i < sizeof vcl_log_names / sizeof vcl_log_names[0]; i++) {
		if (strcasecmp(s, vcl_log_names[i]) == 0 ||
		    (s[0] == (char)('0' + i) && s[1] == '\0')) {
			*out = (enum vcl_log_level)i;
			return (0);
		}
	}
	return (-1);
}

/* Syslog priorities of the levels (sd-daemon's "<N>" line prefixes). */
static const int vcl_log_prio[] = { 7, 3, 4, 6, 7 };

/*
 * Whether stderr is the systemd journal: systemd sets JOURNAL_STREAM to
 * "DEV:INO" of the stream it connects; a redirected stderr has another.
 */
static int
vcl_log_is_journal(void)
{
	unsigned long long	 dev, ino;
	const char		*e;
	struct stat		 st;
	char			 c;

	if ((e = getenv("JOURNAL_STREAM")) == NULL ||
	    sscanf(e, "%llu:%llu%c", &dev, &ino, &c) != 2)
		return (0);
	if (fstat(STDERR_FILENO, &st) != 0)
		return (0);
	return ((unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino);
}

/*
 * Set the program name shown in each line and the level. Where stderr is
 * the journal, lines start with their syslog priority.
 */
void
vcl_log_init(const char *prog, enum vcl_log_level level)
{
	vcl_log_prog = prog;
	vcl_log_level = level;
	vcl_log_journal = vcl_log_is_journal();
}

/* Write one line: "[<prio>]prog: level: function: message". */
void
vcl_log_msg(enum vcl_log_level level, const char *fn, const char *fmt, ...)
{
	char	msg[1024], prio[8] = "";
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (vcl_log_journal)
		snprintf(prio, sizeof prio, "<%d>", vcl_log_prio[level]);
	if (vcl_log_level >= VCL_LOG_DEBUG) {
		/* Monotonic seconds: lines of several processes line up. */
		struct timespec	ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		fprintf(stderr, "%s%lld.%06ld %s: %s: %s: %s\n", prio,
		    (long long)ts.tv_sec, ts.tv_nsec / 1000, vcl_log_prog,
		    vcl_log_names[level], fn, msg);
		return;
	}
	fprintf(stderr, "%s%s: %s: %s: %s\n", prio, vcl_log_prog,
	    vcl_log_names[level], fn, msg);
}
