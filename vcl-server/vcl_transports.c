/*
 * vcl_transports.c - the server's bulk transports (proto/transport/): the
 * instances it offers, their event sources in the loop, the choice of one
 * per link, and the backends' own control messages.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "vcl_log.h"
#include "vcl_server.h"

/* One backend the server offers: its instance and its event source. */
struct vcl_transports {
	struct vcl_tp		*tp[VCL_TP_MAX];
	struct event		*ev[VCL_TP_MAX];
	int			 n;
	const struct vcl_transport *force;	/* testing: this one only */
};

/* The instance's event source is ready: let the backend progress. */
static void
vcl_transports_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_tp	*tp = arg;
	int		 again;

	(void)fd;
	(void)what;
	again = vcl_tp_progress(tp, NULL);
	(void)again;
}

/*
 * Open the backends of list ("tcp,ucx", NULL: all built) that work here;
 * force (NULL: none) names the one every link must use, for testing.
 * One that cannot open is logged and left out; tcp always remains.
 */
int
vcl_transports_init(struct vcl_server *srv, const char *list,
    const char *force, char *err, size_t errlen)
{
	const struct vcl_transport	*want[VCL_TP_MAX];
	struct vcl_transports		*ts;
	struct vcl_tp_conf		 conf;
	struct vcl_tp			*tp;
	char				 why[300];
	short				 ev;
	int				 i, n, fd;

	if (vcl_transport_parse(list, want, &n, err, errlen) != 0)
		return (-1);
	if ((ts = calloc(1, sizeof *ts)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	if (force != NULL && (ts->force = vcl_transport_find(force)) == NULL) {
		snprintf(err, errlen, "unknown transport %s", force);
		free(ts);
		return (-1);
	}
	memset(&conf, 0, sizeof conf);
	conf.server = 1;
	conf.node = srv->node_name;
	conf.max_bulk = srv->limits.frame.max_bulk;
	for (i = 0; i < n; i++) {
		if ((want[i]->caps & VCL_TP_INBAND) != 0)
			continue;	/* rides the control stream: no instance */
		if ((tp = vcl_tp_open(want[i], &conf, why, sizeof why)) ==
		    NULL) {
			vcl_log_warn("transport %s left out: %s", want[i]->name,
			    why);
			continue;
		}
		ts->tp[ts->n] = tp;
		if ((fd = tp->ops->evfd(tp, NULL, &ev)) >= 0 &&
		    (ts->ev[ts->n] = event_new(srv->base, fd, EV_READ |
		    EV_PERSIST, vcl_transports_cb, tp)) != NULL)
			event_add(ts->ev[ts->n], NULL);
		ts->n++;
	}
	srv->tps = ts;
	return (0);
}

/* Close the instances (after every link is gone). */
void
vcl_transports_free(struct vcl_server *srv)
{
	struct vcl_transports	*ts = srv->tps;
	int			 i;

	if (ts == NULL)
		return;
	for (i = 0; i < ts->n; i++) {
		if (ts->ev[i] != NULL)
			event_free(ts->ev[i]);
		vcl_tp_free(ts->tp[i]);
	}
	free(ts);
	srv->tps = NULL;
}

/*
 * A backend's own message from the other end of this link: to the link's
 * endpoint of that backend. One for a backend the link does not use ends
 * the session, as any other frame that breaks the protocol.
 */
void
vcl_op_transport_ctl(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__TransportCtl	*c = req->transport_ctl;
	struct vcl_tp_ep	*ep = s->tp_ep;

	(void)bulk;
	if (ep == NULL || strcmp(vcl_tp_name(ep), c->transport) != 0 ||
	    ep->tp->ops->ctl_in == NULL || ep->tp->ops->ctl_in(ep,
	    c->data.data, c->data.len) != VCL_TP_OK) {
		vcl_session_close(s, "transport message refused");
		return;
	}
}
