/*
 * vcl_transport.c - the registry of transport backends, in preference
 * order, and the host's wrappers around a backend's operations.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_transport.h"

/*
 * Every backend built into vclproto, best first: a pair uses the first one
 * both ends announce. Adding a backend is its file plus one line here (and
 * its extern in vcl_transport.h); a backend in a library of its own (ucx)
 * is added by the program that links it, with vcl_transport_register.
 */
static const struct vcl_transport *vcl_transport_all[VCL_TP_MAX + 1] = {
	&vcl_transport_tca,
	&vcl_transport_tcp,
	&vcl_transport_sock,		/* tests: only where named */
	NULL
};

/*
 * Add a backend linked into this program: ahead of the in-band ones (tcp),
 * behind the other out-of-band ones. At start, before any other use of the
 * registry. Returns 0, or -1 if the table is full or it is there already.
 */
int
vcl_transport_register(const struct vcl_transport *tp)
{
	int	i, n, at = -1;

	for (n = 0; vcl_transport_all[n] != NULL; n++) {
		if (vcl_transport_all[n] == tp ||
		    strcmp(vcl_transport_all[n]->name, tp->name) == 0)
			return (-1);
		if (at < 0 && (vcl_transport_all[n]->caps & VCL_TP_INBAND))
			at = n;
	}
	if (n >= VCL_TP_MAX)
		return (-1);
	if (at < 0)
		at = n;
	for (i = n; i > at; i--)
		vcl_transport_all[i] = vcl_transport_all[i - 1];
	vcl_transport_all[at] = tp;
	vcl_transport_all[n + 1] = NULL;
	return (0);
}

/* The backends built, best first, NULL-terminated. */
const struct vcl_transport *const *
vcl_transport_list(void)
{
	return (vcl_transport_all);
}

/* The backend of that name, or NULL. */
const struct vcl_transport *
vcl_transport_find(const char *name)
{
	const struct vcl_transport *const	*t;

	if (name == NULL)
		return (NULL);
	for (t = vcl_transport_all; *t != NULL; t++)
		if (strcmp((*t)->name, name) == 0)
			return (*t);
	return (NULL);
}

/*
 * Parse a list of backend names ("ucx,tcp"; NULL or "" or "all" or "auto":
 * every one built but those offered only where named (VCL_TP_NAMED), best
 * first; the host restricts the ones offered by host, VCL_TP_LOCAL) into
 * out (VCL_TP_MAX entries), in the order given. "auto" also takes a
 * backend both named-only and by host, should one be built. Returns 0, or
 * -1 with why in err for an unknown or repeated name.
 */
int
vcl_transport_parse(const char *list, const struct vcl_transport **out,
    int *n, char *err, size_t errlen)
{
	const struct vcl_transport *const	*t;
	const struct vcl_transport		*f;
	char					 name[64];
	const char				*p, *e;
	size_t					 len;
	int					 i;

	*n = 0;
	if (list == NULL || *list == '\0' || strcmp(list, "all") == 0 ||
	    strcmp(list, "auto") == 0) {
		for (t = vcl_transport_all; *t != NULL && *n < VCL_TP_MAX; t++)
			if (((*t)->caps & VCL_TP_NAMED) == 0 || (list != NULL &&
			    strcmp(list, "auto") == 0 &&
			    ((*t)->caps & VCL_TP_LOCAL) != 0))
				out[(*n)++] = *t;
		return (0);
	}
	for (p = list; *p != '\0'; p = *e == ',' ? e + 1 : e) {
		if ((e = strchr(p, ',')) == NULL)
			e = p + strlen(p);
		len = (size_t)(e - p);
		if (len == 0 || len >= sizeof name) {
			snprintf(err, errlen, "empty or long transport name");
			return (-1);
		}
		memcpy(name, p, len);
		name[len] = '\0';
		if ((f = vcl_transport_find(name)) == NULL) {
			snprintf(err, errlen, "unknown transport %s (built: %s)",
			    name, vcl_transport_all[0]->name);
			return (-1);
		}
		for (i = 0; i < *n; i++)
			if (out[i] == f)
				break;
		if (i < *n || *n >= VCL_TP_MAX) {
			snprintf(err, errlen, "transport %s named twice", name);
			return (-1);
		}
		out[(*n)++] = f;
	}
	if (*n == 0) {
		snprintf(err, errlen, "no transport named");
		return (-1);
	}
	return (0);
}

/*
 * The transport of a pair: the first of ours (our preference order) that
 * the other end announced by name and that can carry caps. NULL: none (the
 * control stream's inband tcp then carries the bulk).
 */
const struct vcl_transport *
vcl_transport_choose(const struct vcl_transport *const *ours, int nours,
    const char *const *theirs, int ntheirs, unsigned caps)
{
	int	i, j;

	for (i = 0; i < nours; i++) {
		if ((ours[i]->caps & caps) != caps)
			continue;
		for (j = 0; j < ntheirs; j++)
			if (theirs[j] != NULL &&
			    strcmp(ours[i]->name, theirs[j]) == 0)
				return (ours[i]);
	}
	return (NULL);
}

/* Make an instance of a backend. NULL with why in err. */
struct vcl_tp *
vcl_tp_open(const struct vcl_transport *ops, const struct vcl_tp_conf *conf,
    char *err, size_t errlen)
{
	struct vcl_tp	*tp;

	if ((tp = calloc(1, sizeof *tp)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	tp->ops = ops;
	if (conf != NULL)
		tp->conf = *conf;
	if (tp->conf.max_bulk == 0)
		tp->conf.max_bulk = VCL_TP_DEFAULT_MAX_BULK;
	if (tp->conf.max_posted == 0)
		tp->conf.max_posted = VCL_TP_DEFAULT_MAX_POSTED;
	if (tp->conf.max_unexpected == 0)
		tp->conf.max_unexpected = VCL_TP_DEFAULT_MAX_UNEXPECTED;
	if (ops->probe != NULL && ops->probe(tp->err, sizeof tp->err) != 0)
		goto bad;
	if (ops->open != NULL && ops->open(tp) != VCL_TP_OK)
		goto bad;
	return (tp);
bad:
	snprintf(err, errlen, "%s: %s", ops->name, tp->err[0] != '\0' ?
	    tp->err : "cannot open");
	free(tp);
	return (NULL);
}

/* Free an instance (its endpoints are closed first by their owners). */
void
vcl_tp_free(struct vcl_tp *tp)
{
	if (tp == NULL)
		return;
	if (tp->ops->fini != NULL)
		tp->ops->fini(tp);
	free(tp);
}

/* The endpoint of one link to the other end's address. NULL: err says. */
struct vcl_tp_ep *
vcl_tp_connect(struct vcl_tp *tp, struct vcl_link *ctl, const uint8_t *addr,
    size_t len, char *err, size_t errlen)
{
	struct vcl_tp_ep	*ep;

	if ((ep = calloc(1, sizeof *ep)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	ep->tp = tp;
	ep->ctl = ctl;
	if (len > VCL_TP_ADDR_MAX ||
	    tp->ops->connect(ep, addr, len) != VCL_TP_OK) {
		snprintf(err, errlen, "%s: %s", tp->ops->name,
		    ep->err[0] != '\0' ? ep->err : "bad address");
		free(ep);
		return (NULL);
	}
	return (ep);
}

/* The total of an iovec array, or UINT64_MAX if it overflows. */
static uint64_t
vcl_tp_iov_len(const struct iovec *iov, int cnt)
{
	uint64_t	total = 0;
	int		i;

	for (i = 0; i < cnt; i++) {
		if (UINT64_MAX - total < iov[i].iov_len)
			return (UINT64_MAX);
		total += iov[i].iov_len;
	}
	return (total);
}

/* Send transfer xid from final memory; done(arg, err) when sent. */
int
vcl_tp_send(struct vcl_tp_ep *ep, uint64_t xid, const struct iovec *iov,
    int cnt, vcl_tp_done_fn done, void *arg)
{
	if (cnt < 0 || vcl_tp_iov_len(iov, cnt) > ep->tp->conf.max_bulk) {
		snprintf(ep->err, sizeof ep->err, "bulk over %llu bytes",
		    (unsigned long long)ep->tp->conf.max_bulk);
		return (VCL_TP_ETOOBIG);
	}
	return (ep->tp->ops->send(ep, xid, iov, cnt, done, arg));
}

/* Post the receive of xid into dest; done(arg, err) when it landed. */
int
vcl_tp_recv(struct vcl_tp_ep *ep, uint64_t xid, const struct vcl_tp_dest *dest,
    vcl_tp_done_fn done, void *arg)
{
	if (dest->len > ep->tp->conf.max_bulk) {
		snprintf(ep->err, sizeof ep->err, "bulk over %llu bytes",
		    (unsigned long long)ep->tp->conf.max_bulk);
		return (VCL_TP_ETOOBIG);
	}
	return (ep->tp->ops->recv(ep, xid, dest, done, arg));
}

/* Give up a posted receive: its done runs with VCL_TP_ECANCELED. */
void
vcl_tp_cancel(struct vcl_tp_ep *ep, uint64_t xid)
{
	ep->tp->ops->cancel(ep, xid);
}

/* Progress an instance (ep NULL) or an endpoint; 1: call again now. */
int
vcl_tp_progress(struct vcl_tp *tp, struct vcl_tp_ep *ep)
{
	return (tp->ops->progress(tp, ep));
}

/* Close an endpoint: what is pending completes with VCL_TP_ECLOSED. */
void
vcl_tp_close(struct vcl_tp_ep *ep)
{
	if (ep == NULL)
		return;
	ep->tp->ops->close(ep);
	free(ep);
}

/* The backend's name of an endpoint ("tcp" for none: inband). */
const char *
vcl_tp_name(const struct vcl_tp_ep *ep)
{
	return (ep == NULL ? vcl_transport_tcp.name : ep->tp->ops->name);
}

/* Whether the endpoint's bulk rides the control stream (none: yes). */
int
vcl_tp_inband(const struct vcl_tp_ep *ep)
{
	return (ep == NULL || (ep->tp->ops->caps & VCL_TP_INBAND) != 0);
}

/*
 * Whether a bulk of len bytes goes on the endpoint's transport (1) or
 * rides the control stream (0): a backend may leave sizes where it loses
 * to the stream (tp->stream_below, tp->stream_above) to the stream.
 */
int
vcl_tp_oob_size(const struct vcl_tp_ep *ep, uint64_t len)
{
	if (vcl_tp_inband(ep) || len == 0)
		return (0);
	return (len >= ep->tp->stream_below && (ep->tp->stream_above == 0 ||
	    len <= ep->tp->stream_above));
}

/* Can the link place a bulk of len straight in the receiver's staging? */
int
vcl_tp_can_place(struct vcl_tp_ep *ep, uint64_t len)
{
	if (ep == NULL || vcl_tp_inband(ep) || ep->tp->ops->can_place == NULL)
		return (0);
	return (ep->tp->ops->can_place(ep, len));
}

/* Start a placed send (vcl_tp_can_place said yes). */
int
vcl_tp_place(struct vcl_tp_ep *ep, uint64_t xid, uint64_t len,
    vcl_tp_slot_fn slot, vcl_tp_done_fn done, void *arg)
{
	if (ep->tp->ops->place == NULL) {
		snprintf(ep->err, sizeof ep->err, "%s: no placement",
		    ep->tp->ops->name);
		return (VCL_TP_EINVAL);
	}
	if (len > ep->tp->conf.max_bulk) {
		snprintf(ep->err, sizeof ep->err, "bulk of %llu bytes over "
		    "the limit", (unsigned long long)len);
		return (VCL_TP_ETOOBIG);
	}
	return (ep->tp->ops->place(ep, xid | VCL_TP_XID_PLACE, len, slot,
	    done, arg));
}

/* The host filled a slot a placed send got (err: it could not). */
void
vcl_tp_placed(struct vcl_tp *tp, uint64_t token, int err)
{
	tp->ops->placed(tp, token, err);
}

/* The host is done with a chunk a placed receive handed it. */
void
vcl_tp_consumed(struct vcl_tp *tp, uint64_t token)
{
	tp->ops->consumed(tp, token);
}

/* A placed send's bytes are readable at src as well (pulling). */
void
vcl_tp_source(struct vcl_tp_ep *ep, uint64_t xid, const void *src)
{
	if (ep->tp->ops->source != NULL)
		ep->tp->ops->source(ep, xid | VCL_TP_XID_PLACE, src);
}

/* The host's pull of token ended (err; VCL_TP_EINVAL: not copied). */
void
vcl_tp_pulled(struct vcl_tp *tp, uint64_t token, int err)
{
	tp->ops->pulled(tp, token, err);
}

/* A VCL_TP_E* in words. */
const char *
vcl_tp_strerror(int err)
{
	switch (err) {
	case VCL_TP_OK:
		return ("ok");
	case VCL_TP_ECLOSED:
		return ("link closed");
	case VCL_TP_ETOOBIG:
		return ("bulk over the limit or not the size posted");
	case VCL_TP_ENOMEM:
		return ("out of memory");
	case VCL_TP_EBUSY:
		return ("too many receives posted");
	case VCL_TP_ECANCELED:
		return ("cancelled");
	case VCL_TP_EIO:
		return ("transport failure");
	case VCL_TP_EINVAL:
		return ("bad address or argument");
	}
	return ("unknown transport error");
}
