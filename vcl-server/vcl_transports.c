/*
 * vcl_transports.c - the server's bulk transports (proto/transport/): the
 * instances it offers, their event sources in the loop, the choice of one
 * per link, and the backends' own control messages.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "vcl_log.h"
#include "vcl_pin.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_transports.h"

/* One backend the server offers: its instance and its event source. */
struct vcl_transports {
	struct vcl_tp		*tp[VCL_TP_MAX];
	struct event		*ev[VCL_TP_MAX];
	struct event		*again[VCL_TP_MAX]; /* progress after I/O */
	int			 local[VCL_TP_MAX]; /* one host (or RDMA) only */
	int			 n;
	const struct vcl_transport *force;	/* testing: this one only */
	char			 host[VCL_TP_HOST_MAX]; /* "": unknown */
	int			 rdma;		/* an RDMA device is here */
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
 * A placement ring was mapped or goes: the runtime may be given its pages
 * (vcl_pin.c wraps them per context at their first copy).
 */
static void
vcl_transports_ring(struct vcl_tp *tp, void *base, uint64_t len, int up)
{
	(void)tp;
	if (up)
		(void)vcl_pin_ring_add(base, (size_t)len);
	else
		vcl_pin_ring_del(vcl_pin_ring_of(base, (size_t)len));
}

/*
 * This process's host identity, as far as shared memory between two
 * servers goes, i.e. what shared staging needs: the kernel's boot id (one
 * machine, one boot), the pid namespace (a peer's ring is opened as
 * /proc/PID/fd/N: the pid must name the same process) and the effective
 * user (/proc/PID/fd of another user's process is refused). Not the
 * network namespace: servers in two namespaces of one pid namespace map
 * each other's rings (the netns tests' servers do, over UCX on their
 * bridge). Empty when any is unknown: then no other end counts as this
 * host. --host-id (VCL_HOST_ID) replaces it, for tests.
 */
static void
vcl_transports_identity(char *out, size_t len)
{
	struct stat	 pid;
	const char	*id;
	char		 boot[64];
	size_t		 n;
	FILE		*f;

	out[0] = '\0';
	if ((id = getenv("VCL_HOST_ID")) != NULL && *id != '\0') {
		snprintf(out, len, "%s", id);
		return;
	}
	if ((f = fopen("/proc/sys/kernel/random/boot_id", "r")) == NULL)
		return;
	n = fread(boot, 1, sizeof boot - 1, f);
	fclose(f);
	boot[n] = '\0';
	boot[strcspn(boot, "\n")] = '\0';
	if (boot[0] == '\0' || stat("/proc/self/ns/pid", &pid) != 0)
		return;
	snprintf(out, len, "%s/pid:%llu/uid:%u", boot,
	    (unsigned long long)pid.st_ino, (unsigned)geteuid());
}

/*
 * An RDMA device is present (what UCX's ib transports would use): an
 * entry under /sys/class/infiniband. A cheap look, not a probe of UCX.
 */
static int
vcl_transports_have_rdma(void)
{
	struct dirent	*e;
	DIR		*d;
	int		 found = 0;

	if ((d = opendir("/sys/class/infiniband")) == NULL)
		return (0);
	while (!found && (e = readdir(d)) != NULL)
		found = e->d_name[0] != '.';
	closedir(d);
	return (found);
}

/* The host identity announced in Hello/Welcome ("" when unknown). */
const char *
vcl_transports_host(struct vcl_server *srv)
{
	return (srv->tps != NULL ? srv->tps->host : "");
}

/*
 * Two ends share a host when both identities are known and equal. A
 * peer's claim is only a hint: what it unlocks (a transport offered on
 * one host) checks its own memory (seals, sizes, the peer's pid).
 */
static int
vcl_transports_same_host(const struct vcl_transports *ts, const char *theirs)
{
	return (ts->host[0] != '\0' && theirs != NULL &&
	    strcmp(ts->host, theirs) == 0);
}

/*
 * Open the backends of list ("tcp,ucx"; NULL, "all" or "auto": all built
 * but the ones offered only where named, sock) that work here; force
 * (NULL: none) names the one every link must use, for testing. Not named
 * one by one, a backend that pays only on one host (VCL_TP_LOCAL, ucx)
 * counts only toward an end of this host or with RDMA.
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
	int				 i, n, fd, byhost;

	vcl_transports_register();
	if (vcl_transport_parse(list, want, &n, err, errlen) != 0)
		return (-1);
	byhost = list == NULL || *list == '\0' || strcmp(list, "all") == 0 ||
	    strcmp(list, "auto") == 0;
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
	vcl_transports_identity(ts->host, sizeof ts->host);
	/* A host modelled by --host-id shares no fabric with its peers. */
	ts->rdma = getenv("VCL_HOST_ID") == NULL && vcl_transports_have_rdma();
	memset(&conf, 0, sizeof conf);
	conf.server = 1;
	conf.node = srv->node_name;
	conf.max_bulk = srv->limits.frame.max_bulk;
	conf.host = srv;
	conf.ring = vcl_transports_ring;
	for (i = 0; i < n; i++) {
		if ((want[i]->caps & VCL_TP_INBAND) != 0)
			continue;	/* rides the control stream: no instance */
		if ((tp = vcl_tp_open(want[i], &conf, why, sizeof why)) ==
		    NULL) {
			if (!byhost || want[i] == ts->force)
				vcl_log_warn("transport %s left out: %s",
				    want[i]->name, why);
			else
				vcl_log_info("transport %s left out: %s",
				    want[i]->name, why);
			continue;
		}
		ts->tp[ts->n] = tp;
		/* Not named: one that pays only on one host stays there. */
		ts->local[ts->n] = byhost && want[i] != ts->force &&
		    (want[i]->caps & VCL_TP_LOCAL) != 0;
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

/* Of the transports offered, those offered only on one host or RDMA. */
size_t
vcl_transports_local_names(struct vcl_server *srv, char **out, size_t max)
{
	struct vcl_transports	*ts = srv->tps;
	size_t			 n = 0;
	int			 i;

	for (i = 0; ts != NULL && i < ts->n && n < max; i++)
		if (ts->local[i] && (ts->force == NULL ||
		    ts->force == ts->tp[i]->ops))
			out[n++] = (char *)ts->tp[i]->ops->name;
	return (n);
}

/* A Hello's host fields: our identity and whether an RDMA device is here. */
void
vcl_transports_hello_host(struct vcl_server *srv, Vcl__Hello *h)
{
	if (srv->tps == NULL)
		return;
	if (srv->tps->host[0] != '\0')
		h->host = srv->tps->host;
	h->has_rdma = 1;
	h->rdma = srv->tps->rdma;
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
		o->o[n].has_local = ts->local[i];
		o->o[n].local = ts->local[i];
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
 * when one is; one that either end offers only on one host only where
 * both ends are on one host or both have RDMA), connect our end and fill
 * off (with our address in addr, VCL_TP_ADDR_MAX bytes) for the Welcome,
 * and why with the reason, which goes to the log and the Welcome. Returns
 * 1 when off was filled; 0: tcp, the control stream carries the bulk.
 */
int
vcl_transports_hello(struct vcl_session *s, const Vcl__Hello *h,
    Vcl__TransportOffer *off, uint8_t *addr, char *why, size_t whylen)
{
	struct vcl_transports		*ts = s->srv->tps;
	const struct vcl_transport	*ours[VCL_TP_MAX], *pick;
	const char			*theirs[VCL_TP_MAX], *held = NULL;
	const Vcl__TransportOffer	*o = NULL;
	struct vcl_tp_ep		*ep;
	char				 err[300];
	size_t				 i, len;
	int				 n = 0, k = 0, j, same, rdma, near,
					 local;

	snprintf(why, whylen, "no other transport offered by both ends");
	if (ts == NULL)
		return (0);
	same = vcl_transports_same_host(ts, h->host);
	/*
	 * Bulk over UCX is not encrypted: where the control stream is TLS,
	 * bytes leave the host on it only where an operator named it.
	 */
	rdma = ts->rdma && h->has_rdma && h->rdma && s->srv->tls == NULL;
	near = same || rdma;
	for (i = 0; i < h->n_transports && k < VCL_TP_MAX; i++) {
		if ((o = h->transports[i])->name == NULL)
			continue;
		if (o->has_local && o->local && !near) {
			/* Named in the reason only if known (no peer text). */
			if (vcl_transport_find(o->name) != NULL)
				held = vcl_transport_find(o->name)->name;
			continue;
		}
		theirs[k++] = o->name;
	}
	o = NULL;
	for (j = 0; j < ts->n; j++) {
		if (ts->force != NULL && ts->force != ts->tp[j]->ops)
			continue;
		if (ts->local[j] && !near) {
			held = ts->tp[j]->ops->name;
			continue;
		}
		ours[n++] = ts->tp[j]->ops;
	}
	pick = vcl_transport_choose(ours, n, theirs, k, s->is_peer ?
	    VCL_TP_PEER : VCL_TP_CLIENT);
	if (pick == NULL) {
		if (held != NULL)
			snprintf(why, whylen, "%s only on one host or with "
			    "RDMA: %s", held, h->host == NULL ? "the other end "
			    "names no host" : ts->rdma && h->has_rdma &&
			    h->rdma ? "another host, RDMA not taken under TLS" :
			    "another host, no RDMA on both");
		if (ts->force != NULL && ts->force != &vcl_transport_tcp)
			vcl_log_warn("session %llu (%s): forced transport %s "
			    "not offered by the other end: tcp",
			    (unsigned long long)s->id, s->peer,
			    ts->force->name);
		return (0);
	}
	/* The offer chosen: not one set aside above, should a name repeat. */
	for (i = 0; i < h->n_transports; i++) {
		o = h->transports[i];
		if (o->name != NULL && strcmp(o->name, pick->name) == 0 &&
		    !(o->has_local && o->local && !near))
			break;
		o = NULL;
	}
	if (o == NULL)
		return (0);
	local = o->has_local && o->local;
	for (j = 0; j < ts->n; j++)
		if (ts->tp[j]->ops == pick && ts->local[j])
			local = 1;
	if (ts->force != NULL)
		snprintf(why, whylen, "forced");
	else if (local)
		snprintf(why, whylen, "%s", same ? "same host" :
		    "RDMA on both ends");
	else
		snprintf(why, whylen, "offered by both ends");
	ep = vcl_transports_connect(s->srv, pick->name, &s->link,
	    o->has_address ? o->address.data : NULL,
	    o->has_address ? o->address.len : 0, err, sizeof err);
	len = VCL_TP_ADDR_MAX;
	if (ep != NULL && ep->tp->ops->address(ep->tp, addr, &len) !=
	    VCL_TP_OK) {
		snprintf(err, sizeof err, "%s", ep->tp->err);
		vcl_tp_close(ep);
		ep = NULL;
	}
	if (ep == NULL) {
		vcl_log_warn("session %llu (%s): transport %s failed, tcp "
		    "instead: %s", (unsigned long long)s->id, s->peer,
		    pick->name, err);
		snprintf(why, whylen, "%s failed: %.100s", pick->name, err);
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
	return (1);
}
