/* vcl_client.h - libvcl internals: objects, nodes, the calls between modules. */
#ifndef VCL_CLIENT_H
#define VCL_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <CL/cl_icd.h>

#include "vcl.pb-c.h"
#include "vcl_buf.h"
#include "vcl_coherence.h"
#include "vcl_tls.h"

#define VCL_EXPORT	__attribute__((visibility("default")))

/* The one macro that hides control flow: set err and leave by out. */
#define VCL_GOTO_IF(cond, code) do {					\
	if (cond) {							\
		err = (code);						\
		goto out;						\
	}								\
} while (0)

/*
 * Object kinds, listed once: the client's tag (a magic that tells a live
 * VCL object from anything else) and the wire kind (vcl.proto's Kind) of
 * each, NONE for objects the nodes never hold. vcl_kind_wire() answers
 * from this list; unit_kinds fails when a wire Kind has no tag here.
 */
#define VCL_KINDS(X)							\
	X(PLATFORM,	NONE)						\
	X(DEVICE,	DEVICE)						\
	X(CONTEXT,	CONTEXT)					\
	X(QUEUE,	QUEUE)						\
	X(MEM,		MEM)						\
	X(PROGRAM,	PROGRAM)					\
	X(KERNEL,	KERNEL)						\
	X(EVENT,	EVENT)						\
	X(SAMPLER,	SAMPLER)

#define VCL_KIND_TAG(k, w)	VCL_KIND_##k,
enum vcl_kind {
	VCL_KIND_BASE = 0x56434c00,	/* no object's; tags follow it */
	VCL_KINDS(VCL_KIND_TAG)
	VCL_KIND_END
};
#undef VCL_KIND_TAG

/* Common header of every object, right after the dispatch pointer. */
struct vcl_object {
	enum vcl_kind		 kind;
	atomic_int		 refs;
	uint64_t		 id;		/* remote id, same on every node */
};

#define VCL_WATCH_BUCKETS 4096		/* events awaiting a notification */

struct vcl_pending;

/* One vclserver the client is connected to. */
struct vcl_node {
	int			 index;
	char			 addr[256];
	char			 peer_addr[80];	/* numeric ip:port, for peers */
	char			*name;		/* the server's node name */
	int			 fd;
	struct vcl_link		 link;		/* fd, maybe under TLS */
	pthread_t		 rx;
	int			 rx_started;

	pthread_mutex_t		 send_lock;	/* out, seq, fd writes */
	struct vcl_buf		 out;
	uint64_t		 seq;

	pthread_mutex_t		 lock;		/* pending, dead */
	pthread_cond_t		 cond;
	struct vcl_pending	*pending;	/* oldest first */
	struct vcl_pending	**pending_tail;
	int			 dead;
	int			 failed;	/* vcl_node_fail ran */

	/*
	 * The reading token (vcl_conn.c), under lock: one thread at a time
	 * reads the socket, the receiver or a caller waiting for its own
	 * reply, and it lands whatever comes for anyone. Waiters sleep on
	 * cond; a release broadcasts it.
	 */
	int			 reading;	/* the token is held */
	pthread_t		 reader;	/* by this thread */
	pthread_cond_t		 rx_cond;	/* the receiver sleeps here */
	int			 rx_idle;	/* ... and is asleep */
	int			 stuck;		/* writes waiting for room */

	cl_event		 watch[VCL_WATCH_BUCKETS];	/* by id */
	size_t			 nwatch;	/* events in watch */

	/*
	 * Liveness (vcl_conn.c): a node that moves no byte either way for
	 * timeout_ms while something is outstanding is lost. The receiver
	 * pings it (a Stats call) after a third of that silence, so a slow
	 * kernel on a live server never trips it.
	 */
	int			 timeout_ms;	/* VCL_CALL_TIMEOUT_MS, 0: none */
	int			 live;		/* handshake done: rx ticks */
	int			 pinging;	/* a ping is out; under lock */
	atomic_llong		 last_io;	/* ms, last byte in or out */
	atomic_int		 sending;	/* a write is under way */

	Vcl__Release		*deferred;	/* releases from rx thread */
	size_t			 ndeferred, cdeferred;

	Vcl__ToClient		*hello;		/* the Welcome, kept unpacked */
	uint64_t		 session;	/* our session there, and its */
	uint64_t		 key;		/* key, for peers pushing to it */
	Vcl__Reply		*welcome;	/* its reply: the snapshot */
	uint32_t		 ndevices;
	uint64_t		 bytes_out;	/* bulk bytes sent, for tests */
	uint64_t		 bytes_in;
	const char		*transport;	/* the link's bulk transport */
	struct vcl_shm		*shm;		/* shared slots (vcl_shm.c), set
						   once under lock */
	atomic_int		 shm_tried;	/* ... asked for once */
	uint8_t			 nonce[64];	/* the greeting's, for the ring */
	size_t			 nonce_len;
};

/* A reply someone waits for, or an asynchronous one with a handler. */
struct vcl_pending {
	uint64_t		 seq;
	int			 done;
	cl_int			 status;	/* reply status or node error */
	Vcl__ToClient		*msg;		/* the reply, owned */
	void			*dst;		/* bulk lands here */
	uint64_t		 dst_len;
	void			(*fn)(struct vcl_pending *);	/* async */
	void			*arg;
	struct vcl_pending	*next;
};

struct _cl_platform_id {
	const struct _cl_icd_dispatch	*dispatch;	/* must stay first */
	struct vcl_object		 obj;
};

struct _cl_device_id {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	struct vcl_node			*node;
	uint32_t			 index;		/* on its node */
	const Vcl__DeviceInfo		*info;
	cl_device_type			 type;
	/* Sub-devices: index is VCL_SUBDEVICE_BIT | id; root's tables. */
	uint32_t			 root;		/* root's index */
	cl_device_id			 parent;	/* NULL: a root */
	cl_device_partition_property	*ptype;		/* its partition */
	size_t				 nptype;	/* entries, with the 0 */
};

#define VCL_SUBDEVICE_BIT	0x80000000u	/* as vclserver's */
#define VCL_SUBDEVICES_MAX	64		/* one partition makes */

struct vcl_ctx_cb {
	void			(CL_CALLBACK *fn)(cl_context, void *);
	void			*arg;
	struct vcl_ctx_cb	*next;
};

struct _cl_context {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	cl_uint				 ndevices;
	cl_device_id			*devices;
	cl_context_properties		*props;		/* copy, or NULL */
	size_t				 nprops;	/* entries incl. 0 */
	vcl_nodeset			 nodes;
	struct vcl_ctx_cb		*dtors;
	pthread_mutex_t			 lock;
};

struct _cl_command_queue {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	cl_context			 ctx;
	cl_device_id			 dev;
	cl_command_queue_properties	 props;
	cl_queue_properties		*prop_list;	/* copy, or NULL */
	size_t				 nprop_list;
	atomic_int			 inflight;	/* reads not yet in */
};

struct vcl_map {
	void			*ptr;
	size_t			 offset, size;
	cl_map_flags		 flags;
	int			 owned;		/* ptr is ours to free */
	size_t			 origin[3];	/* image: the region mapped, */
	size_t			 region[3];	/* and ptr's strides of its */
	size_t			 s1, s2;	/* 2nd and 3rd coordinates */
	struct vcl_map		*next;
};

struct vcl_mem_cb {
	void			(CL_CALLBACK *fn)(cl_mem, void *);
	void			*arg;
	struct vcl_mem_cb	*next;
};

struct _cl_mem {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	cl_context			 ctx;
	cl_mem_flags			 flags;
	size_t				 size;
	void				*host_ptr;	/* USE_HOST_PTR */
	int				 props;		/* made with a {0} list */
	vcl_nodeset			 nodes;		/* instantiated on */
	/*
	 * A sub-buffer: its parent (referenced) and where it starts. It has
	 * no coherence record of its own: it shares its parent's (below, in
	 * the parent), so a write through it makes the parent's other
	 * copies stale, and its nodes are updated under the parent's lock.
	 */
	cl_mem				 parent;
	size_t				 origin;
	pthread_mutex_t			 lock;		/* all below */
	struct vcl_coherence		 coh;		/* vcl_coherence.h */
	struct vcl_map			*maps;
	cl_uint				 nmaps;
	struct vcl_mem_cb		*dtors;
	/*
	 * Images (vcl_image.c); type 0 is a buffer. size is the image's
	 * packed size, what travels between nodes; init its packed initial
	 * bytes; desc keeps the application's pitches (CL_IMAGE_*_PITCH).
	 */
	cl_mem_object_type		 type;
	cl_image_format			 format;
	cl_image_desc			 desc;
	size_t				 elem;		/* bytes per pixel */
	cl_mem				 buffer;	/* 1D buffer: retained */
};

struct _cl_sampler {
	const struct _cl_icd_dispatch	*dispatch;	/* must stay first */
	struct vcl_object		 obj;
	cl_context			 ctx;
	cl_bool				 normalized;
	cl_addressing_mode		 addressing;
	cl_filter_mode			 filter;
	cl_sampler_properties		 props[7];	/* as given, with 0 */
	size_t				 nprops;	/* 0: none given */
};

struct vcl_build_dev {
	cl_build_status		 status;
	char			*log;
};

struct _cl_program {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	cl_context			 ctx;
	char				*source;
	size_t				 source_len;
	char				*options;
	struct vcl_build_dev		*build;		/* per context device */
	char				*kernel_names;	/* ';'-separated */
	size_t				 nkernels;
	atomic_int			 kernels;	/* live kernels */
	pthread_mutex_t			 lock;
	int				 building;
	uint64_t			 nodes;		/* nodes holding it */
	cl_device_id			*devs;		/* its devices; NULL:
							   the context's */
	cl_uint				 ndevs;
	uint8_t				**bins;		/* per context device,
							   fetched binaries */
	size_t				*binlens;
	int				 notexec;	/* compiled, or a library */
	int				 il;		/* from IL */
};

struct vcl_arg {
	int			 set;
	Vcl__KernelArg__Type	 type;
	size_t			 size;
	uint8_t			*value;		/* VALUE bytes */
	cl_mem			 mem;
	cl_sampler		 sampler;	/* SAMPLER */
	int			 ro;		/* IMAGE: read_only access */
};

struct _cl_kernel {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	cl_program			 prog;
	char				*name;
	cl_uint				 nargs;
	cl_kernel_arg_address_qualifier	*arg_address;
	cl_kernel_arg_type_qualifier	*arg_type_qual;
	uint32_t			*arg_size;	/* by value, 0: ? */
	uint32_t			*arg_kind;	/* ArgKind; NULL: old server */
	uint32_t			*arg_image;	/* image type; NULL: ? */
	uint32_t			*arg_access;	/* access qualifier */
	size_t				*wg_size;	/* per context device */
	size_t				*compile_wg;	/* 3 per ctx device */
	struct vcl_arg			*args;
	pthread_mutex_t			 lock;		/* args */
};

struct vcl_ev_cb {
	void			(CL_CALLBACK *fn)(cl_event, cl_int, void *);
	void			*arg;
	cl_int			 when;
	struct vcl_ev_cb	*next;
};

struct _cl_event {
	const struct _cl_icd_dispatch	*dispatch;
	struct vcl_object		 obj;
	cl_context			 ctx;
	cl_command_queue		 queue;		/* NULL: user event */
	cl_command_type			 type;
	struct vcl_node			*node;		/* NULL: user event */
	cl_int				 status;	/* under vcl_ev_lock */
	int				 remote;	/* id known to node(s) */
	int				 have_prof;
	cl_ulong			 prof[4];
	struct vcl_ev_cb		*cbs;
	struct _cl_event		*next;		/* node's waiting list */
};

/*
 * The hand-written entry points, declared from the one list. Default
 * visibility lets the link-time cl* aliases be exported; the version script
 * keeps the vcl_cl* names themselves private.
 */
#define VCL_API(kind, ret, name, params, status)			\
	VCL_DECL_##status(ret, name, params)
#define VCL_DECL_IMPL(ret, name, params)				\
	VCL_EXPORT ret CL_API_CALL vcl_##name params;
#define VCL_DECL_STUB(ret, name, params)
#define VCL_API_OPAQUE(name)
#include "vcl_api.def"
#undef VCL_API
#undef VCL_API_OPAQUE
#undef VCL_DECL_IMPL
#undef VCL_DECL_STUB

extern const struct _cl_icd_dispatch	 vcl_dispatch;
extern struct _cl_platform_id		 vcl_platform;
extern pthread_mutex_t			 vcl_ev_lock;
extern pthread_cond_t			 vcl_ev_cond;
extern const char			*vcl_token_path;
extern char				 vcl_node_port[8];
extern __thread int			 vcl_in_rx;

/* vcl_object.c */
int		 vcl_is(const void *, enum vcl_kind);
Vcl__Kind	 vcl_kind_wire(enum vcl_kind);
void		*vcl_object_new(size_t, enum vcl_kind);
uint64_t	 vcl_id_new(void);
void		 vcl_retain(void *);
int		 vcl_unref(void *);
void		 vcl_object_free(void *);

/* vcl_platform.c */
cl_int		 vcl_platform_init(void);
struct vcl_node	*vcl_node_get(int);
int		 vcl_nnodes(void);

/* vcl_info.c */
cl_int		 vcl_info_ret(const void *, size_t, size_t, void *, size_t *);
int		 vcl_info_value_ok(cl_uint, const uint8_t *, size_t);
cl_int		 vcl_info_remote(struct vcl_node *, Vcl__GetInfo__What,
		     uint64_t, cl_uint, uint32_t, uint32_t, Vcl__KernelArg **,
		     size_t, size_t, void *, size_t *);

/* vcl_conn.c */
cl_int		 vcl_node_connect(struct vcl_node *, const char *);
cl_int		 vcl_node_send(struct vcl_node *, Vcl__Request *,
		     const void *, uint64_t, int);
cl_int		 vcl_node_call(struct vcl_node *, Vcl__Request *,
		     const void *, uint64_t, void *, uint64_t,
		     Vcl__ToClient **);
cl_int		 vcl_node_call_async(struct vcl_node *, Vcl__Request *,
		     void *, uint64_t, void (*)(struct vcl_pending *), void *);
cl_int		 vcl_node_peer_links(struct vcl_node *, size_t, void *,
		     size_t *);
cl_int		 vcl_node_flush(struct vcl_node *);
void		 vcl_node_flush_all(void);
cl_int		 vcl_node_status(struct vcl_node *);
void		 vcl_node_wait(struct vcl_node *,
		     int (*)(struct vcl_node *, void *), void *);
void		 vcl_node_wake(struct vcl_node *);
void		 vcl_node_release(struct vcl_node *, Vcl__Kind, uint64_t);
void		 vcl_device_ref(cl_device_id);
cl_mem		 vcl_mem_root(cl_mem);
void		 vcl_device_unref(cl_device_id);
void		 vcl_node_watch(struct vcl_node *, cl_event);
void		 vcl_node_unwatch_ev(struct vcl_node *, cl_event);

#define VCL_SEND_FLUSH	0x1

/* vcl_event.c */
cl_event	 vcl_event_new(cl_context, cl_command_queue, cl_command_type);
void		 vcl_event_complete(cl_event, cl_int, const cl_ulong *);
cl_int		 vcl_event_wait(cl_uint, const cl_event *);
cl_int		 vcl_wait_list(cl_command_queue, cl_uint, const cl_event *,
		     uint64_t **, size_t *);
void		 vcl_event_unref(cl_event);
cl_int		 vcl_marker_typed(cl_command_queue, cl_uint, const cl_event *,
		     cl_event *, cl_command_type);

/* vcl_context.c */
void		 vcl_context_unref(cl_context);
void		 vcl_queue_unref(cl_command_queue);

/* vcl_mem.c */
void		 vcl_mem_unref(cl_mem);
cl_int		 vcl_mem_on(cl_mem, struct vcl_node *);

/* vcl_image.c */
int		 vcl_mem_is_image(cl_mem);
cl_int		 vcl_image_on(cl_mem, struct vcl_node *);
cl_int		 vcl_image_unmap(cl_command_queue, cl_mem, struct vcl_map *,
		     cl_uint, const cl_event *, cl_event *);
void		 vcl_image_free(cl_mem);

/* vcl_sampler.c */
int		 vcl_sampler_live(const void *);

/* vcl_program.c */
void		 vcl_program_unref(cl_program);

/* Enqueue plumbing shared by every clEnqueue* (vcl_event.c). */
struct vcl_enq {
	Vcl__Enqueue	 e;
	uint64_t	 wait_ids[16];
	size_t		 wait_cap;
	cl_event	 ev;		/* the new event, if one is needed */
	int		 internal;	/* ev is ours, not the caller's */
	struct vcl_node	*node;		/* the queue's node */
	uint64_t	 proxies[16];	/* proxy events to release after */
	size_t		 nproxies;
};
cl_int		 vcl_enq_prepare(struct vcl_enq *, cl_command_queue, cl_uint,
		     const cl_event *, cl_event *, cl_command_type, int);
cl_int		 vcl_enq_wait(struct vcl_enq *, cl_event);
void		 vcl_enq_finish(struct vcl_enq *, cl_int, cl_event *);

/* Coherence of buffers across nodes: the wire side (vcl_mem.c). */
int		 vcl_ctx_multi(cl_context);
cl_int		 vcl_mem_use(struct vcl_enq *, cl_command_queue, cl_mem, int,
		     int);
void		 vcl_mem_written(cl_mem, struct vcl_node *, cl_event);
void		 vcl_mem_read_done(struct vcl_pending *);
void		 vcl_peer_dest(struct vcl_node *, Vcl__PeerDest *);

#endif
