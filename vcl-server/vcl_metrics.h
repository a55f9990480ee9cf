/* vcl_metrics.h - server counters, Stats answers and the /metrics endpoint. */
#ifndef VCL_METRICS_H
#define VCL_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define VCL_METRICS_OPS		128	/* Request oneof cases counted */
#define VCL_METRICS_BUCKETS	24	/* handler time < 2^i us, then +Inf */
#define VCL_METRICS_MAX_CONNS	16	/* HTTP connections at once */
#define VCL_METRICS_TIMEOUT_S	10	/* HTTP read/write timeout */
#define VCL_METRICS_MAX_HEADERS	8192	/* bytes of request headers */
#define VCL_METRICS_LIFE_S	20	/* an HTTP connection, at most */

struct bufferevent;
struct event;
struct evhttp;
struct evhttp_bound_socket;
struct vcl_server;
struct Vcl__StatsResult;

/*
 * Counters since the start, touched on the loop thread only (handlers,
 * completions and the HTTP endpoint all run there): no locks.
 */
struct vcl_metrics {
	time_t				 started;
	uint64_t			 requests[VCL_METRICS_OPS];
	uint64_t			 usec[VCL_METRICS_OPS];
	uint64_t			 hist[VCL_METRICS_OPS]
					    [VCL_METRICS_BUCKETS + 1];
	uint64_t			 held_total;
	uint64_t			 migrations_in;
	uint64_t			 migrations_out;
	uint64_t			 slow_events;
	uint64_t			 sessions_total;
	struct evhttp			*http;
	struct evhttp_bound_socket	*bound;
	struct bufferevent		*bevs[VCL_METRICS_MAX_CONNS];
	time_t				 born[VCL_METRICS_MAX_CONNS];
	int				 conns;		/* HTTP, open */
	struct event			*ev_sweep;
	uint64_t			 http_refused;	/* not GET /metrics */
};

void	vcl_metrics_request(struct vcl_metrics *, unsigned, double);
int	vcl_metrics_stats(struct vcl_server *, struct Vcl__StatsResult *);
void	vcl_metrics_stats_free(struct Vcl__StatsResult *);
int	vcl_metrics_listen(struct vcl_server *, const char *, const char *,
	    char *, size_t);
void	vcl_metrics_close(struct vcl_server *);

#endif
