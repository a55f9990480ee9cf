/* vcl_log.h - leveled logging to stderr, shared by client and server. */
#ifndef VCL_LOG_H
#define VCL_LOG_H

enum vcl_log_level {
	VCL_LOG_NONE = 0,
	VCL_LOG_ERROR,
	VCL_LOG_WARN,
	VCL_LOG_INFO,
	VCL_LOG_DEBUG,
};

extern enum vcl_log_level vcl_log_level;

int	vcl_log_parse(const char *, enum vcl_log_level *);
void	vcl_log_init(const char *, enum vcl_log_level);
void	vcl_log_msg(enum vcl_log_level, const char *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));

#define vcl_log_error(...) do {						\
	if (vcl_log_level >= VCL_LOG_ERROR)				\
		vcl_log_msg(VCL_LOG_ERROR, __func__, __VA_ARGS__);	\
} while (0)
#define vcl_log_warn(...) do {						\
	if (vcl_log_level >= VCL_LOG_WARN)				\
		vcl_log_msg(VCL_LOG_WARN, __func__, __VA_ARGS__);	\
} while (0)
#define vcl_log_info(...) do {						\
	if (vcl_log_level >= VCL_LOG_INFO)				\
		vcl_log_msg(VCL_LOG_INFO, __func__, __VA_ARGS__);	\
} while (0)
#define vcl_log_debug(...) do {						\
	if (vcl_log_level >= VCL_LOG_DEBUG)				\
		vcl_log_msg(VCL_LOG_DEBUG, __func__, __VA_ARGS__);	\
} while (0)

#endif
