/* vcl_handle.h - a session's handle table: client-assigned id -> object. */
#ifndef VCL_HANDLE_H
#define VCL_HANDLE_H

#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"

struct vcl_pins;		/* vcl_pin.c */
struct vcl_psrc;		/* vcl_op_program.c */

/*
 * What a kernel argument is, from its address qualifier, type qualifier
 * and type name: it decides what the client may set it to.
 */
enum vcl_karg_kind {
	VCL_KARG_VALUE = 0,	/* bytes of a type of size bytes (0: unknown) */
	VCL_KARG_BUFFER,	/* __global or __constant pointer: a buffer id */
	VCL_KARG_LOCAL,		/* __local pointer: a size */
	VCL_KARG_IMAGE,		/* image*_t: an image id of that image type */
	VCL_KARG_SAMPLER,	/* sampler_t: a sampler id */
	VCL_KARG_PIPE,		/* pipe: a pipe id (not on the wire yet) */
	VCL_KARG_OPAQUE,	/* queue_t, clk_event_t, private pointers...: never */
};

#define VCL_KARG_VAL_MAX	32	/* by-value bytes remembered */

/*
 * One argument of a kernel and what is set on it now. What the runtime
 * holds is remembered (vcl_op_exec.c): a launch that sends the same
 * argument again skips clSetKernelArg and its checks.
 */
struct vcl_karg {
	enum vcl_karg_kind	 kind;
	uint32_t		 image;		/* image: CL_MEM_OBJECT_IMAGE* */
	uint64_t		 size;		/* value: type size; local: set */
	cl_mem			 mem;		/* buffer: retained while set */
	uint64_t		 mem_id;	/* ... the session's id of it */
	cl_sampler		 sampler;	/* sampler: retained while set */
	unsigned		 writes:1;	/* image: write_only, read_write */
	unsigned		 is_null:1;	/* buffer: NULL is set */
	unsigned		 has_val:1;	/* value: val is set */
	uint8_t			 val[VCL_KARG_VAL_MAX];
};

/* Sizes of a program's by-value argument types the kernel told us. */
struct vcl_tsize {
	char			 name[120];
	uint64_t		 size;		/* 0: could not be had */
};
struct vcl_tsizes {
	uint32_t		 n;
	struct vcl_tsize	 t[];
};

/*
 * Object kinds. Those that cross the wire are vcl.proto's Kind, by its own
 * generated numbers: that enum is the one list. Server-only kinds follow
 * VCL_KIND_WIRE_END; unit_handle walks the Kind descriptor and fails when
 * a wire kind is missing here (a new Kind in vcl.proto must be named below,
 * before VCL_KIND_WIRE_END).
 */
enum vcl_kind {
	VCL_KIND_NONE = VCL__KIND__KIND_NONE,
	VCL_KIND_CONTEXT = VCL__KIND__KIND_CONTEXT,
	VCL_KIND_QUEUE = VCL__KIND__KIND_QUEUE,
	VCL_KIND_MEM = VCL__KIND__KIND_MEM,
	VCL_KIND_PROGRAM = VCL__KIND__KIND_PROGRAM,
	VCL_KIND_KERNEL = VCL__KIND__KIND_KERNEL,
	VCL_KIND_EVENT = VCL__KIND__KIND_EVENT,
	VCL_KIND_SAMPLER = VCL__KIND__KIND_SAMPLER,
	VCL_KIND_DEVICE = VCL__KIND__KIND_DEVICE,
	VCL_KIND_WIRE_END,	/* wire kinds are below this */
	VCL_KIND_XFER = VCL_KIND_WIRE_END,	/* a migration's bytes */
	VCL_KIND_MAX
};

/* What a kernel's launches check on one device, known once it is made. */
struct vcl_kdev {
	uint64_t	local;		/* its own __local bytes */
	size_t		wg;		/* CL_KERNEL_WORK_GROUP_SIZE; 0: unknown */
};

/*
 * One object of a session. A creation that failed on the server still gets
 * an entry, with its error, so the client's later uses of the id report that
 * error instead of a confusing CL_INVALID_*.
 */
struct vcl_hobj {
	uint64_t		 id;
	enum vcl_kind		 kind;
	cl_int			 error;
	union {
		cl_context	 ctx;
		cl_command_queue queue;
		cl_mem		 mem;
		cl_program	 prog;
		cl_kernel	 kernel;
		cl_event	 event;
		cl_sampler	 sampler;
		cl_device_id	 device;	/* a sub-device */
		void		*ptr;
	} u;
	uint64_t		 bytes;		/* mem: bytes charged */
	uint32_t		 nargs;		/* kernel: argument count */
	struct vcl_karg		*kargs;		/* kernel: its arguments */
	struct vcl_kdev		*kdev;		/* kernel: per device */
	struct vcl_tsizes	*tsizes;	/* program: by-value type sizes */
	struct vcl_psrc		*psrc;		/* program: compiled, for a link's
						   probe (one block: free()) */
	uint32_t		 karg_refs;	/* mem: kernel args naming it */
	uint32_t		 mem_refs;	/* mem: sub-buffers and buffer
						   images over it */
	uint64_t		 parent;	/* mem: the buffer it lies in */
	uint8_t			*data;		/* xfer: where the bytes land */
	char			*source;	/* xfer, proxy event: the peer */
	void			*receiving;	/* xfer: peer session filling it */
	void			*pull;		/* xfer: a direct pull writing
						   its range (vcl_op_peer.c) */
	struct vcl_hobj		*mq;		/* context: migration queue */
	struct vcl_pins		*pins;		/* context: pinned staging */
	void			*held_tail;	/* queue: its last held request */
	struct vcl_submit	*submit;	/* queue: its strand (vcl_submit.c) */
	uint64_t		 xctx, xmem, xoff;	/* xfer: destination; queue: xctx */
	uint64_t		 xevent;	/* xfer: the client's event */
	uint64_t		 xsize;		/* xfer: the bytes it waits for */
	uint32_t		 device;	/* queue, sub-device: root index */
	uint32_t		 held_refs;	/* event: held requests waiting */
	uint64_t		 released_at;	/* the session's last held order
						   when the client let go */
	uint32_t		 linking;	/* program: links running with it
						   among their inputs */
	cl_int			 deferred;	/* queue: first async failure */
	uint8_t			 poll_skip;	/* queue: waits not to poll */
	unsigned		 profiling:1;	/* queue */
	unsigned		 ooo:1;		/* queue: out of order */
	unsigned		 dirty:1;	/* queue: needs a flush */
	unsigned		 stranded:1;	/* queue: on s->strands */
	unsigned		 ring_charged:1; /* queue: its strand's ring */
	unsigned		 waited:1;	/* queue: a command of it waited
						   on events */
	unsigned		 building:1;	/* program */
	unsigned		 user:1;	/* event: a user event */
	unsigned		 user_set:1;	/* event: its status was set */
	unsigned		 proxy:1;	/* event: a peer completes it
						   (CreateProxyEvent) */
	unsigned		 arrived:1;	/* xfer: bytes or status came */
	unsigned		 refused:1;	/* over the object limit */
	unsigned		 released:1;	/* the client let go; held here */
	unsigned		 release_held:1; /* its Release is held */
	unsigned		 sub:1;		/* mem: a sub-buffer, bytes not
						   charged (its parent's are) */
	unsigned		 image:1;	/* mem: an image, no buffer */
	struct vcl_hobj		*next;		/* hash chain */
};

struct vcl_htab {
	struct vcl_hobj	**slots;
	size_t		  nslots;
	size_t		  count;
	size_t		  max;		/* objects allowed */
	uint64_t	  running;	/* order of the held request running
					   now (0: none): it still names what
					   was released after it came */
};

int		 vcl_handle_init(struct vcl_htab *, size_t);
struct vcl_hobj	*vcl_handle_add(struct vcl_htab *, uint64_t, enum vcl_kind,
		     cl_int *);
struct vcl_hobj	*vcl_handle_get(struct vcl_htab *, uint64_t, enum vcl_kind);
struct vcl_hobj	*vcl_handle_held(struct vcl_htab *, uint64_t, enum vcl_kind);
int		 vcl_handle_nameable(const struct vcl_hobj *, uint64_t);
struct vcl_hobj	*vcl_handle_find(struct vcl_htab *, uint64_t);
void		 vcl_handle_del(struct vcl_htab *, struct vcl_hobj *);
void		 vcl_handle_clear(struct vcl_htab *,
		     void (*)(struct vcl_hobj *, void *), void *);
void		 vcl_handle_free(struct vcl_htab *);
enum vcl_kind	 vcl_handle_kind(int);

#endif
