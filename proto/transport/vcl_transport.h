/*
 * vcl_transport.h - the transport seam: one interface that carries bulk
 * bytes between two endpoints, with one backend per way of moving them
 * (tcp, ucx, tca), registered in preference order in vcl_transport.c.
 *
 * Every link has a control stream: the TCP connection (plain or TLS,
 * struct vcl_link) that carries the frames. A backend carries a frame's
 * bulk bytes. An INBAND backend (tcp) moves them on the control stream,
 * right after the frame's head, as VCL always did. Any other backend moves
 * them out of band: the frame's header says bulk length 0, the message
 * names the transfer (Request.bulk_xfer + bulk_size, Reply likewise) and
 * the bytes travel on the backend under that id.
 *
 * Contract of every backend (tests/unit/test_transport.c checks it over
 * every registered backend):
 *
 * - Instances and endpoints. open() makes one instance per process (a UCX
 *   worker, a TCA handle table, nothing for tcp); address() gives the
 *   opaque bytes the other end connects with (announced in Hello/Welcome,
 *   at most VCL_TP_ADDR_MAX); connect() makes the endpoint of one link from
 *   the other end's address and the link's control stream. Both ends of a
 *   link connect; neither waits for the other to do so.
 * - send() moves the bytes of the iovecs (final memory: no copy is
 *   required of the caller, none is made unless the backend must) as the
 *   transfer xid. The memory stays untouched by the caller until done runs.
 * - recv() posts a receive of xid into a destination the receiver chose
 *   (staging, a pinned block, mapped device memory): the bytes land there,
 *   not in a bounce buffer the host copies from (a backend that cannot,
 *   e.g. the PEACH2 model writing a registered window, copies once itself).
 *   The size is known beforehand from the control message; a bulk of
 *   another size fails with VCL_TP_ETOOBIG and moves no byte past the
 *   destination. A send may arrive before its receive is posted: the
 *   backend holds it (up to conf.max_unexpected bytes, else fails it).
 *   An INBAND backend receives in the order sent: post in that order.
 *   dest.base NULL: the receiver has no memory for it; the bytes are
 *   taken and dropped. A cancelled receive's bytes, should they still
 *   come, are dropped as well (never held for ever).
 * - Completions: done(arg, err) runs exactly once per send or posted
 *   receive, never inside send()/recv() themselves, only from progress(),
 *   cancel() or close(). err is VCL_TP_OK or a negative VCL_TP_E*;
 *   ep->err says why in words. Until done runs, the memory belongs to
 *   the transport; after it runs the transport never touches it again.
 *   A done callback may send or post more on its endpoint but must not
 *   close it (the host defers that to its loop).
 * - Limits: send() and recv() refuse a bulk over conf.max_bulk with
 *   VCL_TP_ETOOBIG (returned at once; done does not run), and recv()
 *   refuses more than conf.max_posted receives at once with VCL_TP_EBUSY.
 * - Failure: when the other end vanishes (process dies, link closes,
 *   mid-bulk or not), every pending send and receive of the endpoint
 *   completes with VCL_TP_ECLOSED from progress(), within the time the
 *   control stream needs to notice. Nothing waits forever. close()
 *   completes whatever is still pending with VCL_TP_ECLOSED before it
 *   returns, and frees the endpoint.
 * - Event source: evfd() gives the descriptor the libevent loop waits on
 *   for an instance (ep NULL: a UCX worker's event fd) or an endpoint (its
 *   socket) and the events wanted; progress() does all it can without
 *   blocking and re-arms, returning 1 when it should be called again
 *   without waiting (more work at hand), 0 when it may sleep on the fd.
 *   No backend blocks the loop: every op returns at once. The host
 *   calls progress() soon after a send() or recv() (a backend need do
 *   no I/O inside them), whenever the fd is ready, and on a timer.
 * - Transfer ids are chosen by the sending host, unique per sending
 *   process; a receiver tells bulks apart by the endpoint (its other end)
 *   and the id.
 * - Threads: an instance and its endpoints are used from one thread.
 * - Placement (optional, VCL_TP_PLACE: shared staging). A backend whose
 *   receiver can offer memory the sender writes into (two processes of one
 *   host) moves a bulk with no transfer copy of its own. The receiver
 *   offers a ring of slots and decides every chunk's offset and length;
 *   the sender asks with place() (xid with VCL_TP_XID_PLACE set: the
 *   receiver's recv() of such an xid takes placed chunks, not a message),
 *   gets slot(arg, slot) for each slot offered, writes exactly that range
 *   of its bulk there and calls placed(token). The receiver's dest.chunk
 *   (if set) gets each chunk as it lands, in the slot, and the host calls
 *   consumed(token) once done with it (else the backend copies the chunk
 *   into dest.base itself). Both done callbacks run once, after the last
 *   chunk was consumed or on failure; a peer that vanishes fails both as
 *   for send/recv. A slot handed to the host stays mapped until its
 *   placed()/consumed() ran, even after done or close: the host calls it
 *   for every slot it got. A slot holds only bytes of the peer that writes
 *   it: a ring serves one link and is never handed to another. The
 *   backend calls the host's conf.ring (if set) once it mapped a ring,
 *   ours or the peer's, and once more just before it unmaps it (after
 *   every slot of it went back), so that the host may register the pages
 *   with its runtime (vclserver pins them per context) in between.
 * - Pulling (optional, within placement: direct mode). A sender whose
 *   bulk is readable in its own memory says where with source() after
 *   place(); a receiver whose dest.pull is set may then take the whole
 *   bulk by reading the sender's memory itself (cross-memory attach):
 *   the backend calls dest.pull(arg, pid, addr, len, token) with the
 *   sender's pid and address, the host copies into its own memory and
 *   calls pulled(token, err) exactly once, even after done or close
 *   (VCL_TP_EINVAL: the kernel refused, not copied: the chunks come
 *   through slots instead, and no pull again on this link; VCL_TP_EBUSY:
 *   not copied this time, slots for this one).
 *   Each process only ever writes its own memory: a pull that ends late
 *   (the link failed meanwhile) harms nobody.
 */
#ifndef VCL_TRANSPORT_H
#define VCL_TRANSPORT_H

#include <sys/types.h>
#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

struct vcl_link;
struct vcl_tp;

#define VCL_TP_NAME_MAX		16	/* a backend's name, with its NUL */
#define VCL_TP_ADDR_MAX		4096	/* announced address bytes */
#define VCL_TP_MAX		8	/* backends one side may announce */
#define VCL_TP_HOST_MAX		160	/* a host identity, NUL included */

/* What a backend can carry (struct vcl_transport caps). */
#define VCL_TP_PEER		0x1	/* server-to-server links */
#define VCL_TP_CLIENT		0x2	/* a client link's bulk */
#define VCL_TP_INBAND		0x4	/* bulk rides the control stream */
#define VCL_TP_NAMED		0x8	/* offered only where named (opt-in) */
#define VCL_TP_PLACE		0x10	/* shared staging (place/placed) */
#define VCL_TP_LOCAL		0x20	/* by default (not named) offered
					   only to an end on the same host,
					   or where both have RDMA:
					   elsewhere not ahead */

/* A transfer id whose bytes are placed, not sent (see Placement). */
#define VCL_TP_XID_PLACE	(1ull << 63)

/* Completion and return codes. */
#define VCL_TP_OK		0
#define VCL_TP_ECLOSED		(-1)	/* the other end or the link is gone */
#define VCL_TP_ETOOBIG		(-2)	/* over a limit, or not the size posted */
#define VCL_TP_ENOMEM		(-3)
#define VCL_TP_EBUSY		(-4)	/* too many receives posted */
#define VCL_TP_ECANCELED	(-5)	/* the host cancelled the receive */
#define VCL_TP_EIO		(-6)	/* the backend failed; see the error */
#define VCL_TP_EINVAL		(-7)	/* bad address or argument */

/* Events of an event source (evfd). */
#define VCL_TP_EV_READ		0x2	/* as libevent's EV_READ */
#define VCL_TP_EV_WRITE		0x4	/* as libevent's EV_WRITE */

/* What kind of memory a receive lands in (a hint: backends may register). */
enum vcl_tp_mem {
	VCL_TP_MEM_HOST,		/* pageable staging */
	VCL_TP_MEM_PINNED,		/* a pinned staging block */
	VCL_TP_MEM_DEVICE,		/* mapped device memory */
};

/* Where a received bulk lands: chosen by the receiver. */
struct vcl_tp_dest {
	void			*base;
	uint64_t		 len;		/* exactly the bulk's size */
	enum vcl_tp_mem		 mem;
	void			*reg;		/* from reg(), or NULL */
	/*
	 * Optional, placed transfers only: each chunk as it lands (offset
	 * in the bulk, where it is, its length, the token for consumed).
	 */
	void			(*chunk)(void *, uint64_t, void *, uint64_t,
				    uint64_t);
	void			*chunk_arg;
	/*
	 * Optional, with chunk: the host can take the whole bulk by reading
	 * it from the sender (pid, address, length, token for pulled);
	 * 0: it will call pulled once, -1: not now (slots then).
	 */
	int			(*pull)(void *, long, uint64_t, uint64_t,
				    uint64_t);
};

/* A slot the receiver offered: write bulk bytes [off, off + len) at ptr. */
struct vcl_tp_slot {
	void			*ptr;
	uint64_t		 off;
	uint64_t		 len;
	uint64_t		 token;		/* for placed() */
};
typedef void (*vcl_tp_slot_fn)(void *, const struct vcl_tp_slot *);

/* Settings of an instance; zero fields take the defaults below. */
struct vcl_tp_conf {
	int			 server;	/* vclserver (else libvcl) */
	const char		*node;		/* our name, for logs */
	uint64_t		 max_bulk;	/* one transfer's bytes */
	uint64_t		 max_posted;	/* receives posted at once */
	uint64_t		 max_unexpected; /* bytes held before posting */
	const char		*options;	/* backend's own "k=v,k=v" */
	void			*host;		/* the host's, for its callbacks */
	/*
	 * Optional (VCL_TP_PLACE): a ring of slots was mapped (up 1), or is
	 * about to be unmapped (up 0, nothing of the host uses it then):
	 * the host may register its pages with its runtime meanwhile.
	 */
	void	(*ring)(struct vcl_tp *, void *, uint64_t, int);
};
#define VCL_TP_DEFAULT_MAX_BULK		(4ull << 30)
#define VCL_TP_DEFAULT_MAX_POSTED	1024
#define VCL_TP_DEFAULT_MAX_UNEXPECTED	(256ull << 20)

typedef void (*vcl_tp_done_fn)(void *, int);

/* One instance of a backend (per process); the host allocates it. */
struct vcl_tp {
	const struct vcl_transport *ops;
	struct vcl_tp_conf	 conf;		/* defaults filled in */
	void			*priv;		/* the backend's */
	char			 err[256];	/* the last failure, in words */
	/*
	 * Set by open (0: none): bulks under stream_below bytes or over
	 * stream_above ride the control stream, sizes where the backend
	 * loses to it; vcl_tp_oob_size says which way a bulk goes.
	 */
	uint64_t		 stream_below;
	uint64_t		 stream_above;
};

/* One end of one link; the host allocates it, connect() fills priv. */
struct vcl_tp_ep {
	struct vcl_tp		*tp;
	struct vcl_link		*ctl;		/* the link's control stream */
	void			*priv;		/* the backend's */
	char			 err[256];
	/*
	 * Set by the host before connect: sends a backend's own small
	 * message to the other end's ctl_in over the control stream
	 * (TransportCtl). NULL where the host has none (the tests).
	 */
	int			(*ctl_out)(struct vcl_tp_ep *, const uint8_t *,
				    size_t);
	void			*host;		/* the host's, for ctl_out */
};

/*
 * A backend: a name and its operations. Optional ones may be NULL (noted).
 * Each returns VCL_TP_OK or a VCL_TP_E* with the reason in err.
 */
struct vcl_transport {
	const char	*name;
	unsigned	 caps;		/* VCL_TP_PEER | VCL_TP_CLIENT | ... */

	/* Usable on this machine (library, device present)? why if not. */
	int	(*probe)(char *, size_t);
	/* Make the instance (priv); fini undoes it. */
	int	(*open)(struct vcl_tp *);
	void	(*fini)(struct vcl_tp *);
	/* Our address bytes: at most *len; *len set to their length. */
	int	(*address)(struct vcl_tp *, uint8_t *, size_t *);
	/* The endpoint to the other end's address (ep->tp, ctl set). */
	int	(*connect)(struct vcl_tp_ep *, const uint8_t *, size_t);
	/* Send the iovecs as transfer xid; done(arg, err) when sent. */
	int	(*send)(struct vcl_tp_ep *, uint64_t, const struct iovec *, int,
		    vcl_tp_done_fn, void *);
	/* Post a receive of xid into dest; done(arg, err) when landed. */
	int	(*recv)(struct vcl_tp_ep *, uint64_t, const struct vcl_tp_dest *,
		    vcl_tp_done_fn, void *);
	/* Give a posted receive up: its done runs with VCL_TP_ECANCELED. */
	void	(*cancel)(struct vcl_tp_ep *, uint64_t);
	/* The fd to wait on (ep NULL: the instance's), events in *ev. */
	int	(*evfd)(struct vcl_tp *, struct vcl_tp_ep *, short *);
	/* Make progress, run completions; 1: call again without waiting. */
	int	(*progress)(struct vcl_tp *, struct vcl_tp_ep *);
	/* Fail what is pending (VCL_TP_ECLOSED), free priv. */
	void	(*close)(struct vcl_tp_ep *);
	/* Optional: register memory receives land in (TCA, RDMA). */
	int	(*reg)(struct vcl_tp *, void *, uint64_t, void **);
	void	(*dereg)(struct vcl_tp *, void *);
	/* Optional: a message the other end's ctl_out sent us. */
	int	(*ctl_in)(struct vcl_tp_ep *, const uint8_t *, size_t);
	/* Optional (VCL_TP_PLACE): can this link place a bulk of len? */
	int	(*can_place)(struct vcl_tp_ep *, uint64_t);
	/* Place len bytes as xid: slot() per slot offered, then done(). */
	int	(*place)(struct vcl_tp_ep *, uint64_t, uint64_t, vcl_tp_slot_fn,
		    vcl_tp_done_fn, void *);
	/* The host filled the slot of token (err: it could not). */
	void	(*placed)(struct vcl_tp *, uint64_t, int);
	/* The host is done with the received chunk of token. */
	void	(*consumed)(struct vcl_tp *, uint64_t);
	/* Optional (pulling): the placed send xid is readable at src too. */
	void	(*source)(struct vcl_tp_ep *, uint64_t, const void *);
	/* The host's pull of token ended (VCL_TP_EINVAL: use slots). */
	void	(*pulled)(struct vcl_tp *, uint64_t, int);
};

/* The registry, in preference order (vcl_transport.c). */
int	 vcl_transport_register(const struct vcl_transport *);
const struct vcl_transport *const *vcl_transport_list(void);
const struct vcl_transport *vcl_transport_find(const char *);
int	vcl_transport_parse(const char *, const struct vcl_transport **,
	    int *, char *, size_t);
const struct vcl_transport *vcl_transport_choose(
	    const struct vcl_transport *const *, int, const char *const *, int,
	    unsigned);

/* Host wrappers: fill the common parts, call the backend. */
struct vcl_tp	*vcl_tp_open(const struct vcl_transport *,
		    const struct vcl_tp_conf *, char *, size_t);
void		 vcl_tp_free(struct vcl_tp *);
struct vcl_tp_ep *vcl_tp_connect(struct vcl_tp *, struct vcl_link *,
		    const uint8_t *, size_t, char *, size_t);
int		 vcl_tp_send(struct vcl_tp_ep *, uint64_t, const struct iovec *,
		    int, vcl_tp_done_fn, void *);
int		 vcl_tp_recv(struct vcl_tp_ep *, uint64_t,
		    const struct vcl_tp_dest *, vcl_tp_done_fn, void *);
void		 vcl_tp_cancel(struct vcl_tp_ep *, uint64_t);
int		 vcl_tp_progress(struct vcl_tp *, struct vcl_tp_ep *);
void		 vcl_tp_close(struct vcl_tp_ep *);
const char	*vcl_tp_name(const struct vcl_tp_ep *);
const char	*vcl_tp_strerror(int);
int		 vcl_tp_inband(const struct vcl_tp_ep *);
int		 vcl_tp_oob_size(const struct vcl_tp_ep *, uint64_t);
int		 vcl_tp_can_place(struct vcl_tp_ep *, uint64_t);
int		 vcl_tp_place(struct vcl_tp_ep *, uint64_t, uint64_t,
		    vcl_tp_slot_fn, vcl_tp_done_fn, void *);
void		 vcl_tp_placed(struct vcl_tp *, uint64_t, int);
void		 vcl_tp_consumed(struct vcl_tp *, uint64_t);
void		 vcl_tp_source(struct vcl_tp_ep *, uint64_t, const void *);
void		 vcl_tp_pulled(struct vcl_tp *, uint64_t, int);

/* tcp: the control stream every link has. */
int	vcl_tcp_dial(const char *, char *, size_t, char *, size_t);

/* Backends: one line each here and in vcl_transport.c registers one. */
extern const struct vcl_transport vcl_transport_tcp;
extern const struct vcl_transport vcl_transport_ucx;
extern const struct vcl_transport vcl_transport_sock;
extern const struct vcl_transport vcl_transport_tca;

#endif
