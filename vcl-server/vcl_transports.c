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
#include "vcl_session.h"
#include "vcl_transports.h"

/* One backend the server offers: its instance and its event source. */
struct vcl_transports {
	struct vcl_tp		*tp[VCL_TP_MAX];
	struct event		*ev[VCL_TP_MAX];
	struct event		*again[VCL_TP_MAX]; /* progress after I/O */
	int			 n;
	const struct vcl_transport *force;	/* testing: this one only */
};

/* Every tick and after control traffic: progress what has no fd. */
void
vcl_transports_progress(struct vcl_server *srv)
{
	struct vcl_transports	*ts = srv->tps;
	int			 i;

	if (ts == NULL)
		return;
	for (i = 0; i < ts->n; i++)
		(void)vcl_tp_progress(ts->tp[i], NULL);
}

/*
 * Something was posted or queued on tp: have the loop progress it soon
 * (a backend does no I/O inside send or recv).
 */
void
vcl_transports_kick(struct vcl_server *srv, struct vcl_tp *tp)
{
	struct vcl_transports	*ts = srv->tps;
	int			 i;

	for (i = 0; ts != NULL && i < ts->n; i++)
		if (ts->tp[i] == tp && ts->ev[i] != NULL)
			event_active(ts->ev[i], EV_READ, 0);
}

/* The instance's event source is ready: let the backend progress. */
static void
vcl_transports_cb(evutil_socket_t fd, short what, void *arg)
{
	struct vcl_tp	*tp = arg;
	struct vcl_server *srv = tp->conf.host;
	struct event	*ev = NULL;
	struct timeval	 now = { 0, 0 };
	int		 again = 0, i;

	(void)fd;
	(void)what;
	for (i = 0; i < srv->tps->n; i++)
		if (srv->tps->tp[i] == tp)
			ev = srv->tps->again[i];
	/* Bounded: a backend that always has more yields to the loop. */
	for (i = 0; i < 64; i++)
		if ((again = vcl_tp_progress(tp, NULL)) == 0)
			break;
	/*
	 * Again, but after the loop has polled the sockets: an event made
	 * active from its own callback runs in the same pass, before any
	 * I/O, and a backend waiting for a control message (TransportCtl)
	 * would starve the very read that brings it.
	 */
	if (again && ev != NULL)
		event_add(ev, &now);
}

/*
 * Add to the registry the backends vclserver links that vclproto does not
 * (ucx: a library of its own, kept out of libvcl). Idempotent.
 */
void
vcl_transports_register(void)
{
#ifdef VCL_HAVE_UCX
	(void)vcl_transport_register(&vcl_transport_ucx);
#endif
}

/*
 * Open the backends of list ("tcp,ucx", NULL: all built) that work here;
 * force (NULL: none) names the one every link must use, for testing.
 * One that cannot open is left out (logged at warn if asked for by name,
 * else at info: a default list holds backends a host may lack); tcp always
 * remains.
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

	vcl_transports_register();
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
	/* A forced one is offered even where the list leaves it out. */
	for (i = 0; ts->force != NULL && i < n; i++)
		if (want[i] == ts->force)
			break;
	if (ts->force != NULL && i == n && n < VCL_TP_MAX)
		want[n++] = ts->force;
	memset(&conf, 0, sizeof conf);
	conf.server = 1;
	conf.node = srv->node_name;
	conf.max_bulk = srv->limits.frame.max_bulk;
	conf.host = srv;
	for (i = 0; i < n; i++) {
		if ((want[i]->caps & VCL_TP_INBAND) != 0)
			continue;	/* rides the control stream: no instance */
		if ((tp = vcl_tp_open(want[i], &conf, why, sizeof why)) ==
		    NULL) {
			if (list != NULL || want[i] == ts->force)
				vcl_log_warn("transport %s left out: %s",
				    want[i]->name, why);
			else
				vcl_log_info("transport %s left out: %s",
				    want[i]->name, why);
			continue;
		}
		ts->tp[ts->n] = tp;
		if ((fd = tp->ops->evfd(tp, NULL, &ev)) >= 0 &&
		    (ts->ev[ts->n] = event_new(srv->base, fd, EV_READ |
		    EV_PERSIST, vcl_transports_cb, tp)) != NULL)
			event_add(ts->ev[ts->n], NULL);
		ts->again[ts->n] = evtimer_new(srv->base, vcl_transports_cb, tp);
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
		if (ts->again[i] != NULL)
			event_free(ts->again[i]);
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

/* The names of the transports offered ("tcp" always, last). */
size_t
vcl_transports_names(struct vcl_server *srv, char **out, size_t max)
{
	struct vcl_transports	*ts = srv->tps;
	size_t			 n = 0;
	int			 i;

	for (i = 0; ts != NULL && i < ts->n && n + 1 < max; i++)
		if (ts->force == NULL || ts->force == ts->tp[i]->ops)
			out[n++] = (char *)ts->tp[i]->ops->name;
	if (n < max)
		out[n++] = (char *)vcl_transport_tcp.name;
	return (n);
}

/*
 * What a connecting end offers in its Hello: each instance that can carry
 * caps (only the forced one, if any) with its address. Returns how many
 * went into o (VCL_TP_MAX entries, addresses in addr).
 */
size_t
vcl_transports_offer(struct vcl_server *srv, unsigned caps,
    struct vcl_tp_offers *o)
{
	struct vcl_transports	*ts = srv->tps;
	struct vcl_tp		*tp;
	size_t			 n = 0, len;
	int			 i;

	for (i = 0; ts != NULL && i < ts->n && n < VCL_TP_MAX; i++) {
		tp = ts->tp[i];
		if ((tp->ops->caps & caps) != caps ||
		    (ts->force != NULL && ts->force != tp->ops))
			continue;
		len = VCL_TP_ADDR_MAX;
		if (tp->ops->address(tp, o->addr[n], &len) != VCL_TP_OK) {
			vcl_log_warn("transport %s: no address: %s",
			    tp->ops->name, tp->err);
			continue;
		}
		vcl__transport_offer__init(&o->o[n]);
		o->o[n].name = (char *)tp->ops->name;
		o->o[n].has_address = 1;
		o->o[n].address.data = o->addr[n];
		o->o[n].address.len = len;
		o->p[n] = &o->o[n];
		n++;
	}
	return (n);
}

/* The instance of a backend by name, or NULL. */
static struct vcl_tp *
vcl_transports_get(struct vcl_server *srv, const char *name)
{
	struct vcl_transports	*ts = srv->tps;
	int			 i;

	for (i = 0; ts != NULL && i < ts->n; i++)
		if (strcmp(ts->tp[i]->ops->name, name) == 0)
			return (ts->tp[i]);
	return (NULL);
}

/*
 * The endpoint of a link over the backend named, to the other end's
 * address; NULL (with why) when it cannot be made: the link's bulk then
 * rides the control stream (tcp).
 */
struct vcl_tp_ep *
vcl_transports_connect(struct vcl_server *srv, const char *name,
    struct vcl_link *ctl, const uint8_t *addr, size_t len, char *why,
    size_t whylen)
{
	struct vcl_tp	*tp;

	if ((tp = vcl_transports_get(srv, name)) == NULL) {
		snprintf(why, whylen, "transport %s not offered here", name);
		return (NULL);
	}
	return (vcl_tp_connect(tp, ctl, addr, len, why, whylen));
}

/* A backend's own message to the client or peer at the session's end. */
static int
vcl_transports_ctl_session(struct vcl_tp_ep *ep, const uint8_t *data,
    size_t len)
{
	struct vcl_session	*s = ep->host;
	Vcl__ToClient		 tc = VCL__TO_CLIENT__INIT;
	Vcl__TransportCtl	 c = VCL__TRANSPORT_CTL__INIT;

	c.transport = (char *)vcl_tp_name(ep);
	c.data.data = (uint8_t *)data;
	c.data.len = len;
	tc.transport_ctl = &c;
	return (vcl_session_send(s, &tc, NULL, 0, NULL, NULL) == 0 ?
	    VCL_TP_OK : VCL_TP_ECLOSED);
}

/*
 * The Hello's offers: choose the link's transport (the first of ours the
 * other end offers and that carries this kind of link; only the forced one
 * when one is), connect our end and fill off (with our address in addr,
 * VCL_TP_ADDR_MAX bytes) for the Welcome. Returns 1 when off was filled;
 * 0: tcp, the control stream carries the bulk.
 */
int
vcl_transports_hello(struct vcl_session *s, const Vcl__Hello *h,
    Vcl__TransportOffer *off, uint8_t *addr)
{
	struct vcl_transports		*ts = s->srv->tps;
	const struct vcl_transport	*ours[VCL_TP_MAX], *pick;
	const char			*theirs[VCL_TP_MAX];
	const Vcl__TransportOffer	*o = NULL;
	struct vcl_tp_ep		*ep;
	char				 why[300];
	size_t				 i, len;
	int				 n = 0, k = 0;

	if (ts == NULL)
		return (0);
	for (i = 0; i < h->n_transports && k < VCL_TP_MAX; i++)
		if (h->transports[i]->name != NULL)
			theirs[k++] = h->transports[i]->name;
	for (i = 0; i < (size_t)ts->n; i++)
		if (ts->force == NULL || ts->force == ts->tp[i]->ops)
			ours[n++] = ts->tp[i]->ops;
	pick = vcl_transport_choose(ours, n, theirs, k, s->is_peer ?
	    VCL_TP_PEER : VCL_TP_CLIENT);
	if (pick == NULL) {
		if (ts->force != NULL && ts->force != &vcl_transport_tcp)
			vcl_log_warn("session %llu (%s): forced transport %s "
			    "not offered by the other end: tcp",
			    (unsigned long long)s->id, s->peer,
			    ts->force->name);
		return (0);
	}
	for (i = 0; i < h->n_transports && i < VCL_TP_MAX; i++)
		if (h->transports[i]->name != NULL &&
		    strcmp(h->transports[i]->name, pick->name) == 0) {
			o = h->transports[i];
			break;
		}
	if (o == NULL)
		return (0);
	ep = vcl_transports_connect(s->srv, pick->name, &s->link,
	    o->has_address ? o->address.data : NULL,
	    o->has_address ? o->address.len : 0, why, sizeof why);
	len = VCL_TP_ADDR_MAX;
	if (ep != NULL && ep->tp->ops->address(ep->tp, addr, &len) !=
	    VCL_TP_OK) {
		snprintf(why, sizeof why, "%s", ep->tp->err);
		vcl_tp_close(ep);
		ep = NULL;
	}
	if (ep == NULL) {
		vcl_log_warn("session %llu (%s): transport %s failed, tcp "
		    "instead: %s", (unsigned long long)s->id, s->peer,
		    pick->name, why);
		return (0);
	}
	ep->ctl_out = vcl_transports_ctl_session;
	ep->host = s;
	s->tp_ep = ep;
	vcl__transport_offer__init(off);
	off->name = (char *)pick->name;
	off->has_address = 1;
	off->address.data = addr;
	off->address.len = len;
	vcl_log_info("session %llu (%s): transport %s",
	    (unsigned long long)s->id, s->peer, pick->name);
	return (1);
}
