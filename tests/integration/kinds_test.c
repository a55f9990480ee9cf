/* kinds_test.c - every call, every handle field, every wrong id. */

/*
 * Raw-protocol sweep through a real vclserver on PoCL. Every call of
 * Request's oneof is built from its protobuf descriptor (so a new opcode
 * is swept without touching this file): each field that names an object
 * the server must look up (a context, queue, buffer or image, program,
 * kernel, event; Release and GetInfo ids by their kind) gets in turn
 *	- an id of another kind,
 *	- an id the client released that the session still holds (a buffer
 *	  a sub-buffer lies in, an event a held command waits on; for the
 *	  other kinds a released id),
 *	- id 0,
 *	- an id only another live session has,
 *	- a huge id,
 * the other fields valid. The server must answer each with an error (a
 * failed reply, a failed event, a failed creation, or silence for calls
 * that have no answer; never success), hang nothing (a command with an
 * event is told its end), free nothing of the session's, leave the other
 * session's objects as they were, and keep serving. The same call with
 * every field valid is sent first, and must succeed, so that the refusals
 * above are the handle checks' own: copies go to a second object, builds
 * and links take programs with no kernel, binaries are the server's own,
 * migrations and forwarded events go to a second vclserver (whose session
 * pushes and forwards back for MigrateIn and CreateProxyEvent), and what
 * answers nothing is observed (a released id is refused next, a set user
 * event, a sampler or a proxy lets a command run; a reply due from a
 * worker is waited for). The few calls whose success cannot be had here
 * are listed in no_baseline[].
 */

#include "rawproto.h"

/* Session A's objects. */
#define A_CTX		1
#define A_Q		2	/* a queue with nothing held on it */
#define A_M		3	/* a 64-byte buffer */
#define A_IMG		4	/* a 4x4 CL_R/UNSIGNED_INT8 image */
#define A_P		5	/* kernel_src, built */
#define A_K		6	/* its kernel k */
#define A_EV		7	/* a marker's event, complete */
#define A_SMP		8
#define A_QH		9	/* a queue holding a command behind A_UREL */
#define A_M2		10	/* a second buffer: copies' destination */
#define A_IMG2		11	/* a second image like A_IMG */
#define A_PB		12	/* kernel_src, no kernel made: rebuilt */
#define A_PC		13	/* kernel_src compiled: links' input */
#define A_QP		14	/* a queue with profiling: A_EV's */
#define A_PS		15	/* samp_src, built */
#define A_KS		16	/* its kernel ks: what a sampler is for */
#define A_PARENT	20	/* released; A_SUB lies in it */
#define A_SUB		21
#define A_UREL		30	/* user event released while A_HM waits */
#define A_HM		31	/* the held marker's event */
#define A_CTX_R		40	/* released objects of the other kinds */
#define A_Q_R		41
#define A_P_R		42
#define A_K_R		43
#define A_SMP_R		44
#define A_FRESH		(1ull << 20)	/* ids the probes make */
/* Session B's: ids A does not have. */
#define B_BASE		100
#define B_CTX		(B_BASE + A_CTX)
#define B_Q		(B_BASE + A_Q)
#define B_M		(B_BASE + A_M)
#define B_P		(B_BASE + A_P)
#define B_K		(B_BASE + A_K)
#define B_UE		(B_BASE + A_EV)
#define B_SMP		(B_BASE + A_SMP)
#define B_IMG		(B_BASE + A_IMG)
/* Session C, on the second server: where migrations and events go. */
#define C_CTX		1
#define C_Q		2
#define C_M		3	/* a 64-byte buffer: MigrateIn's source */
#define C_EV		4	/* a marker's event, complete */
#define BUF_SIZE	64
#define HUGE_ID		UINT64_MAX

static const char samp_src[] = "__kernel void ks(__read_only image2d_t im, "
    "sampler_t s, __global uint *o) { o[0] = read_imageui(im, s, "
    "(float2)(0.5f, 0.5f)).x; }\n";

/*
 * Calls whose all-valid request cannot succeed here, and why: every other
 * one must, or its refusals prove nothing.
 */
static const struct {
	const char	*call;		/* Request field [variant] */
	const char	*why;
} no_baseline[] = {
	{ "flush", "answers nothing either way (an unknown queue is "
	    "ignored), and a flush has no effect to observe" },
	{ "set_spec_constant", "only a program from IL takes one, and PoCL "
	    "here takes no IL" },
	{ "get_info KERNEL_SUB_GROUP", "PoCL's device here has no sub-group "
	    "(CL_DEVICE_MAX_NUM_SUB_GROUPS 0): every query of one is "
	    "CL_INVALID_OPERATION" },
};

/* Calls that always get a reply (protocol.md's table), some from a worker. */
static const char *const answered[] = { "finish", "read_buffer",
    "build_program", "create_kernel", "create_kernels", "get_info", "stats",
    "read_buffer_rect", "image_formats", "read_image", "create_program_from",
    "link_program", "get_binary", "set_spec_constant", "create_sub_devices" };

/* The second server's session, and A's address as a peer dials it. */
static struct {
	struct srv	 sv;
	struct conn	 c;
	char		 addr[64];	/* 127.0.0.1:port of the server */
	uint64_t	 sid, key;
} pc;
static char		 a_addr[64];
static uint64_t		 a_sid, a_key;
static uint8_t		*a_bin;		/* A_P's, from GetBinary */
static size_t		 a_bin_len;

enum mut { M_VALID, M_WRONG, M_RELEASED, M_ZERO, M_OTHER, M_HUGE, M_N };
static const char *const mut_name[M_N] = { "valid", "wrong_kind",
    "released_held", "zero", "other_session", "huge" };

/* What a probe got: nothing seen yet, no answer by design, or an answer. */
enum res { R_NONE, R_SILENT, R_ERROR, R_SUCCESS };

#define MAX_PROBES	4096
#define MAX_HFIELDS	16

struct probe {
	const char	*op;
	char		 field[64];
	enum mut	 mut;
	uint64_t	 seq;
	uint64_t	 ev;		/* an event it names for itself, or 0 */
	int		 replied, rstatus;
	int		 notified, nstatus;
	int		 closed;	/* the server closed the session */
	enum res	 created;	/* an asynchronous creation's outcome */
	enum res	 seen;		/* its effect, where observed */
	int		 hung;		/* an effect never came */
	int		 wants;		/* a reply is due */
	uint64_t	 iev;		/* an event failing if it worked */
	int		 inotified, istatus;
};

static struct probe	 probes[MAX_PROBES];
static size_t		 nprobes;
static uint64_t		 fresh;

/* The fields of one call that name objects, in fill order. */
struct hfield {
	char		 name[64];
	Vcl__Kind	 kind;
};

/* How one request is filled: which handle field gets which id. */
struct fill {
	int		 target;	/* the handle field mutated, -1 none */
	enum mut	 mut;
	int		 n;		/* handle fields met */
	struct hfield	 hf[MAX_HFIELDS];
	uint64_t	 queue;		/* the probe's own queue */
	uint64_t	 ev;		/* the event it names, or 0 */
	uint64_t	 out;		/* the id it creates, or 0 */
	uint64_t	 own;		/* an object of its own it names */
	uint64_t	 proxy;		/* C's proxy it forwards to */
	uint64_t	 pev;		/* C's event behind that proxy */
	uint64_t	 xfer;		/* a transfer it names */
	int		 variant;	/* Release kind / GetInfo what */
	void		*mem[256];	/* what was allocated */
	int		 nmem;
};

static void *
fill_alloc(struct fill *f, size_t n)
{
	void	*p = calloc(1, n);

	if (p != NULL && f->nmem < 256)
		f->mem[f->nmem++] = p;
	return (p);
}

static void
fill_free(struct fill *f)
{
	while (f->nmem > 0)
		free(f->mem[--f->nmem]);
}

/* The wire kind whose name (KIND_X) is the longest prefix of s, or NONE. */
static Vcl__Kind
kind_prefix(const char *s)
{
	const ProtobufCEnumDescriptor	*d = &vcl__kind__descriptor;
	size_t				 i, len, best = 0;
	Vcl__Kind			 k = VCL__KIND__KIND_NONE;

	for (i = 0; i < d->n_values; i++) {
		len = strlen(d->values[i].name + 5);	/* past KIND_ */
		if (len > best && strncmp(s, d->values[i].name + 5, len) == 0 &&
		    (s[len] == '\0' || s[len] == '_')) {
			best = len;
			k = (Vcl__Kind)d->values[i].value;
		}
	}
	return (k);
}

static int
has_field(const ProtobufCMessageDescriptor *md, const char *name)
{
	return (protobuf_c_message_descriptor_get_field_by_name(md, name) !=
	    NULL);
}

/* A field's uint32 value (an enum's), read back from the message. */
static uint32_t
u32_of(const ProtobufCMessage *m, const char *name)
{
	const ProtobufCFieldDescriptor	*f;

	f = protobuf_c_message_descriptor_get_field_by_name(m->descriptor,
	    name);
	return (f == NULL ? 0 : *(const uint32_t *)((const char *)m +
	    f->offset));
}

#define K_OUT	(-1)	/* an id the call creates */

/*
 * The kind of object a uint64 field names, from its name: 0 for none,
 * K_OUT for an id the call creates. Release and GetInfo name theirs by
 * their kind and what fields.
 */
static int
field_kind(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
	const ProtobufCMessageDescriptor	*md = m->descriptor;
	const ProtobufCEnumDescriptor		*ed;
	const ProtobufCEnumValue		*v;
	const char				*n = f->name;

	if (f->type != PROTOBUF_C_TYPE_UINT64)
		return (0);
	if (strcmp(n, "context") == 0)
		return (VCL__KIND__KIND_CONTEXT);
	if (strcmp(n, "queue") == 0)
		return (VCL__KIND__KIND_QUEUE);
	if (strcmp(n, "mem") == 0 || strcmp(n, "src") == 0 ||
	    strcmp(n, "dst") == 0 || strcmp(n, "parent") == 0 ||
	    strcmp(n, "buffer") == 0 || strcmp(n, "image") == 0)
		return (VCL__KIND__KIND_MEM);
	if (strcmp(n, "program") == 0 || strcmp(n, "programs") == 0)
		return (VCL__KIND__KIND_PROGRAM);
	if (strcmp(n, "kernel") == 0)
		return (VCL__KIND__KIND_KERNEL);
	if (strcmp(n, "wait") == 0)
		return (VCL__KIND__KIND_EVENT);
	if (strcmp(n, "event") == 0)
		return (has_field(md, "queue") || has_field(md, "transfer") ?
		    K_OUT : VCL__KIND__KIND_EVENT);
	if (strcmp(n, "transfer") == 0)
		return (K_OUT);
	if (strcmp(n, "id") == 0 || strcmp(n, "ids") == 0) {
		if (strncmp(md->short_name, "Create", 6) == 0 ||
		    strncmp(md->short_name, "Link", 4) == 0)
			return (K_OUT);
		if (has_field(md, "kind"))
			return ((int)u32_of(m, "kind"));
		if (has_field(md, "what")) {
			ed = protobuf_c_message_descriptor_get_field_by_name(
			    md, "what")->descriptor;
			if ((v = protobuf_c_enum_descriptor_get_value(ed,
			    (int)u32_of(m, "what"))) != NULL)
				return (kind_prefix(v->name));
		}
	}
	return (0);
}

/* Session A's object of a kind (for a field of message md named n). */
static uint64_t
valid_id(Vcl__Kind k, const ProtobufCMessageDescriptor *md, const char *n,
    const struct fill *f)
{
	/* A Release or a status set names an object of the probe's own. */
	if (f->own != 0 && (strcmp(md->short_name, "Release") == 0 ||
	    strcmp(md->short_name, "SetUserEventStatus") == 0))
		return (f->own);
	switch (k) {
	case VCL__KIND__KIND_CONTEXT:
		return (A_CTX);
	case VCL__KIND__KIND_QUEUE:
		return (f->queue);
	case VCL__KIND__KIND_MEM:
		/* A copy to itself would overlap. */
		if (strcmp(n, "dst") == 0)
			return (strcmp(md->short_name, "CopyImage") == 0 ?
			    A_IMG2 : A_M2);
		if (strcmp(n, "image") == 0 || (strstr(md->short_name, "Image") !=
		    NULL && strcmp(n, "buffer") != 0 &&
		    strcmp(md->short_name, "CreateImage") != 0))
			return (A_IMG);
		return (A_M);
	case VCL__KIND__KIND_PROGRAM:
		/* One with kernels cannot be rebuilt; links take objects. */
		if (strcmp(md->short_name, "BuildProgram") == 0)
			return (A_PB);
		if (strcmp(md->short_name, "LinkProgram") == 0)
			return (A_PC);
		return (A_P);
	case VCL__KIND__KIND_KERNEL:
		return (A_K);
	case VCL__KIND__KIND_EVENT:
		return (A_EV);
	case VCL__KIND__KIND_SAMPLER:
		return (A_SMP);
	default:
		return (0);
	}
}

/* The id a mutation puts where an object of kind k belongs. */
static uint64_t
mutated_id(Vcl__Kind k, enum mut mu)
{
	static const uint64_t	wrong[] = { 0, A_Q, A_CTX, A_SMP, A_K, A_P,
	    A_M, A_M, A_M };
	static const uint64_t	rel[] = { 0, A_CTX_R, A_Q_R, A_PARENT, A_P_R,
	    A_K_R, A_UREL, A_SMP_R, 0 };
	static const uint64_t	other[] = { 0, B_CTX, B_Q, B_M, B_P, B_K,
	    B_UE, B_SMP, 0 };

	if ((unsigned)k >= sizeof wrong / sizeof wrong[0])
		return (HUGE_ID);
	switch (mu) {
	case M_WRONG:
		return (wrong[k]);
	case M_RELEASED:
		return (rel[k]);
	case M_ZERO:
		return (0);
	case M_OTHER:
		return (other[k]);
	default:
		return (HUGE_ID);
	}
}

/* The value of handle field kind k: valid, or mutated when it is the target. */
static uint64_t
handle_value(struct fill *f, int k, const ProtobufCMessage *m,
    const ProtobufCFieldDescriptor *fd)
{
	uint64_t	v;

	if (k == K_OUT) {
		v = fresh++;
		if (strcmp(fd->name, "event") == 0)
			f->ev = v;
		else if (strcmp(fd->name, "transfer") == 0)
			f->xfer = v;
		else if (f->out == 0 && strcmp(fd->name, "transfer") != 0)
			f->out = v;
		return (v);
	}
	if (f->n < MAX_HFIELDS) {
		snprintf(f->hf[f->n].name, sizeof f->hf[f->n].name, "%s.%s",
		    m->descriptor->short_name, fd->name);
		f->hf[f->n].kind = (Vcl__Kind)k;
	}
	v = f->n == f->target ? mutated_id((Vcl__Kind)k, f->mut) :
	    valid_id((Vcl__Kind)k, m->descriptor, fd->name, f);
	f->n++;
	return (v);
}

/*
 * Does message md hold a handle? Repeated messages that do are filled
 * (one each) where the call names a kernel: a launch's arguments; a
 * GetInfo's carry only __local sizes.
 */
static int
names_objects(const ProtobufCMessageDescriptor *md)
{
	unsigned	i;

	for (i = 0; i < md->n_fields; i++)
		if (md->fields[i].type == PROTOBUF_C_TYPE_UINT64 &&
		    (strcmp(md->fields[i].name, "mem") == 0 ||
		    strcmp(md->fields[i].name, "context") == 0))
			return (1);
	return (0);
}

static ProtobufCMessage *fill_msg(struct fill *,
    const ProtobufCMessageDescriptor *);

/* A scalar's default by the field's name: what makes the call valid. */
static uint64_t
scalar_default(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd,
    struct fill *f)
{
	const char	*n = fd->name;

	if (strcmp(n, "size") == 0)
		return (16);
	if (strcmp(n, "flags") == 0)
		return (CL_MEM_READ_WRITE);
	if (strcmp(n, "width") == 0)
		return (4);
	if (strcmp(n, "order") == 0)
		return (CL_R);
	if (strcmp(n, "data_type") == 0)
		return (CL_UNSIGNED_INT8);
	if (strcmp(n, "type") == 0 && fd->type == PROTOBUF_C_TYPE_UINT32)
		return (CL_MEM_OBJECT_IMAGE1D_BUFFER);
	if (strcmp(n, "work_dim") == 0)
		return (1);
	if (strcmp(n, "to_buffer") == 0)
		return (1);
	/* A PeerDest: session C on the second server, and its proxy. */
	if (strcmp(n, "session") == 0)
		return (pc.sid);
	if (strcmp(n, "key") == 0)
		return (pc.key);
	if (strcmp(n, "proxy") == 0)
		return (f->proxy);
	if (strcmp(n, "param") == 0) {
		/* A param each GetInfo what answers, by what. */
		static const uint32_t	p[] = { CL_DEVICE_NAME,
		    CL_CONTEXT_REFERENCE_COUNT, CL_QUEUE_REFERENCE_COUNT,
		    CL_MEM_SIZE, CL_PROGRAM_REFERENCE_COUNT,
		    CL_PROGRAM_BUILD_STATUS, CL_KERNEL_NUM_ARGS,
		    CL_KERNEL_WORK_GROUP_SIZE, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
		    CL_EVENT_COMMAND_EXECUTION_STATUS,
		    CL_PROFILING_COMMAND_END, CL_KERNEL_MAX_NUM_SUB_GROUPS };
		uint32_t		w = u32_of(m, "what");

		return (w < sizeof p / sizeof p[0] ? p[w] : 0);
	}
	if (fd->type == PROTOBUF_C_TYPE_ENUM) {
		const ProtobufCEnumDescriptor	*ed = fd->descriptor;
		const ProtobufCEnumValue	*v;

		if (strcmp(n, "kind") == 0 || strcmp(n, "what") == 0)
			return ((uint64_t)f->variant);
		/* KernelArg.type: the kind of argument a handle makes. */
		if ((v = protobuf_c_enum_descriptor_get_value_by_name(ed,
		    "MEM")) != NULL)
			return ((uint64_t)v->value);
		return ((uint64_t)ed->values[0].value);
	}
	return (0);
}

/* Set one field of m, valid (or its one mutation). */
static void
fill_field(struct fill *f, ProtobufCMessage *m,
    const ProtobufCFieldDescriptor *fd)
{
	static const char	pattern[16] = "0123456789abcdef";
	char			*at = (char *)m + fd->offset;
	size_t			*nq = (size_t *)((char *)m +
				    fd->quantifier_offset);
	protobuf_c_boolean	*has = (protobuf_c_boolean *)nq;
	ProtobufCBinaryData	*bd;
	uint64_t		*a;
	uint32_t		*u;
	void			**pp;
	int			 k = field_kind(m, fd);
	size_t			 i, cnt = 1;

	if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
		if (fd->type == PROTOBUF_C_TYPE_UINT64) {
			if (k == 0 && strstr(fd->name, "origin") == NULL &&
			    strcmp(fd->name, "region") != 0 &&
			    strcmp(fd->name, "global") != 0)
				return;
			if (k == 0 && strcmp(fd->name, "global") != 0)
				cnt = 3;
			if ((a = fill_alloc(f, cnt * sizeof *a)) == NULL)
				return;
			for (i = 0; i < cnt; i++)
				a[i] = k != 0 ? handle_value(f, k, m, fd) :
				    strcmp(fd->name, "region") == 0 ||
				    strcmp(fd->name, "global") == 0;
			*nq = cnt;
			*(uint64_t **)at = a;
		} else if (fd->type == PROTOBUF_C_TYPE_BYTES &&
		    strcmp(fd->name, "binaries") == 0 && a_bin != NULL) {
			/* The binary the server gave for A_P. */
			if ((bd = fill_alloc(f, sizeof *bd)) == NULL)
				return;
			bd->data = a_bin;
			bd->len = a_bin_len;
			*nq = 1;
			*(ProtobufCBinaryData **)at = bd;
		} else if (fd->type == PROTOBUF_C_TYPE_UINT32 &&
		    strcmp(fd->name, "devices") == 0) {
			if ((u = fill_alloc(f, sizeof *u)) == NULL)
				return;
			*nq = 1;
			*(uint32_t **)at = u;
		} else if (fd->type == PROTOBUF_C_TYPE_MESSAGE &&
		    names_objects(fd->descriptor) &&
		    has_field(m->descriptor, "kernel")) {
			if ((pp = fill_alloc(f, sizeof *pp)) == NULL ||
			    (pp[0] = fill_msg(f, fd->descriptor)) == NULL)
				return;
			*nq = 1;
			*(void ***)at = pp;
		}
		return;
	}
	if (fd->label == PROTOBUF_C_LABEL_OPTIONAL && k == 0 &&
	    fd->type != PROTOBUF_C_TYPE_MESSAGE &&
	    strcmp(fd->name, "buffer") != 0)
		return;		/* optional: left out */
	switch (fd->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		*(ProtobufCMessage **)at = fd->label ==
		    PROTOBUF_C_LABEL_REQUIRED ? fill_msg(f, fd->descriptor) :
		    NULL;
		return;
	case PROTOBUF_C_TYPE_STRING:
		*(const char **)at = strcmp(fd->name, "addr") == 0 ? pc.addr :
		    "k";
		return;
	case PROTOBUF_C_TYPE_BYTES:
		bd = (ProtobufCBinaryData *)at;
		if (strcmp(fd->name, "source") == 0) {
			bd->data = (uint8_t *)kernel_src;
			bd->len = strlen(kernel_src);
		} else {
			bd->data = (uint8_t *)pattern;
			bd->len = strcmp(fd->name, "color") == 0 ? 16 : 4;
		}
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*(uint64_t *)at = k != 0 ? handle_value(f, k, m, fd) :
		    scalar_default(m, fd, f);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)at = (protobuf_c_boolean)
		    scalar_default(m, fd, f);
		break;
	default:
		*(uint32_t *)at = (uint32_t)scalar_default(m, fd, f);
		break;
	}
	if (fd->label == PROTOBUF_C_LABEL_OPTIONAL)
		*has = 1;
}

/* A message of descriptor md with every field it needs filled. */
static ProtobufCMessage *
fill_msg(struct fill *f, const ProtobufCMessageDescriptor *md)
{
	ProtobufCMessage	*m;
	unsigned		 i;

	if ((m = fill_alloc(f, md->sizeof_message)) == NULL)
		return (NULL);
	protobuf_c_message_init(md, m);
	/* Fields in number order: a kind or what comes before its id. */
	for (i = 0; i < md->n_fields; i++)
		fill_field(f, m, &md->fields[i]);
	return (m);
}

/* The bulk a call carries: a write's bytes (its size, or its region). */
static uint64_t
bulk_of(const ProtobufCMessage *m)
{
	const ProtobufCFieldDescriptor	*fd;
	const uint64_t			*r;
	uint64_t			 n = 1;
	size_t				 i, cnt;

	if (strncmp(m->descriptor->short_name, "Write", 5) != 0)
		return (0);
	if ((fd = protobuf_c_message_descriptor_get_field_by_name(
	    m->descriptor, "size")) != NULL)
		return (*(const uint64_t *)((const char *)m + fd->offset));
	if ((fd = protobuf_c_message_descriptor_get_field_by_name(
	    m->descriptor, "region")) == NULL)
		return (0);
	cnt = *(const size_t *)((const char *)m + fd->quantifier_offset);
	r = *(uint64_t *const *)((const char *)m + fd->offset);
	for (i = 0; i < cnt; i++)
		n *= r[i];
	return (n);
}

static struct probe *
probe_of_seq(uint64_t seq)
{
	size_t	i;

	for (i = 0; i < nprobes; i++)
		if (probes[i].seq == seq)
			return (&probes[i]);
	return (NULL);
}

/* Note what one message from the server says of the probes. */
static void
take(struct reply *rp)
{
	struct probe	*p;
	size_t		 i, j;

	if (rp->r != NULL && (p = probe_of_seq(rp->r->seq)) != NULL) {
		p->replied = 1;
		p->rstatus = rp->r->status;
	}
	for (i = 0; rp->tc->notify != NULL && i < rp->tc->n_notify; i++)
		for (j = 0; j < nprobes; j++)
			if (probes[j].ev != 0 &&
			    probes[j].ev == rp->tc->notify[i]->event) {
				probes[j].notified = 1;
				probes[j].nstatus = rp->tc->notify[i]->status;
			} else if (probes[j].iev != 0 &&
			    probes[j].iev == rp->tc->notify[i]->event) {
				probes[j].inotified = 1;
				probes[j].istatus = rp->tc->notify[i]->status;
			}
}

/*
 * Send r and read (noting probes' answers) until its reply. 0 with *rp,
 * 1 when the server closed the session, -1.
 */
static int
sync_call(struct conn *c, Vcl__Request *r, struct reply *rp)
{
	int	i, rc;

	memset(rp, 0, sizeof *rp);
	if (send_req(c, r, NULL, 0) != 0)
		return (1);
	for (i = 0; i < 100000; i++) {
		if ((rc = recv_msg(c, rp)) != 0)
			return (rc);
		if (rp->r != NULL && rp->r->seq == r->seq)
			return (0);
		take(rp);
		reply_free(rp);
	}
	return (-1);
}

/* Stats through sync_call: the session's objects, or -1 (-2: closed). */
static int64_t
objects_of(struct conn *c)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Stats	m = VCL__STATS__INIT;
	struct reply	rp;
	int64_t		n = -1;
	int		rc;

	r.call_case = VCL__REQUEST__CALL_STATS;
	r.stats = &m;
	if ((rc = sync_call(c, &r, &rp)) != 0)
		return (rc == 1 ? -2 : -1);
	if (rp.r->status == CL_SUCCESS && rp.r->stats != NULL)
		n = (int64_t)rp.r->stats->session_objects;
	reply_free(&rp);
	return (n);
}

/*
 * The outcome of a creation that has no reply: GetInfo of its id as each
 * kind that has one; success if any answers.
 */
static enum res
created(struct conn *c, uint64_t id)
{
	static const uint32_t	 param[] = { 0, CL_CONTEXT_REFERENCE_COUNT,
	    CL_QUEUE_REFERENCE_COUNT, CL_MEM_REFERENCE_COUNT,
	    CL_PROGRAM_REFERENCE_COUNT, 0, CL_KERNEL_REFERENCE_COUNT, 0, 0,
	    CL_EVENT_REFERENCE_COUNT };
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__GetInfo		 m = VCL__GET_INFO__INIT;
	struct reply		 rp;
	enum res		 res = R_SILENT;
	unsigned		 w;

	for (w = 1; w < sizeof param / sizeof param[0]; w++) {
		if (param[w] == 0)
			continue;
		m.what = (Vcl__GetInfo__What)w;
		m.id = id;
		m.param = param[w];
		r.call_case = VCL__REQUEST__CALL_GET_INFO;
		r.get_info = &m;
		if (sync_call(c, &r, &rp) != 0)
			return (R_SILENT);
		if (rp.r->status == CL_SUCCESS)
			res = R_SUCCESS;
		else if (rp.r->status != CL_INVALID_VALUE && res != R_SUCCESS &&
		    rp.r->status != CL_INVALID_CONTEXT &&
		    rp.r->status != CL_INVALID_COMMAND_QUEUE &&
		    rp.r->status != CL_INVALID_MEM_OBJECT &&
		    rp.r->status != CL_INVALID_PROGRAM &&
		    rp.r->status != CL_INVALID_KERNEL &&
		    rp.r->status != CL_INVALID_EVENT)
			res = R_ERROR;	/* its creation's own error */
		reply_free(&rp);
	}
	return (res);
}

/* CreateImage{id, A_CTX, CL_R/UNSIGNED_INT8, 2D 4x4}. */
static int
image2d(struct conn *c, uint64_t id, uint64_t ctx)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateImage	m = VCL__CREATE_IMAGE__INIT;

	m.id = id;
	m.context = ctx;
	m.flags = CL_MEM_READ_WRITE;
	m.order = CL_R;
	m.data_type = CL_UNSIGNED_INT8;
	m.type = CL_MEM_OBJECT_IMAGE2D;
	m.width = 4;
	m.has_height = 1;
	m.height = 4;
	r.call_case = VCL__REQUEST__CALL_CREATE_IMAGE;
	r.create_image = &m;
	return (send_req(c, &r, NULL, 0));
}

/* CreateSampler{id, ctx} with the default properties. */
static int
sampler(struct conn *c, uint64_t id, uint64_t ctx)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateSampler	m = VCL__CREATE_SAMPLER__INIT;

	m.id = id;
	m.context = ctx;
	r.call_case = VCL__REQUEST__CALL_CREATE_SAMPLER;
	r.create_sampler = &m;
	return (send_req(c, &r, NULL, 0));
}

/* CreateUserEvent{id, ctx}. */
static int
user_event(struct conn *c, uint64_t id, uint64_t ctx)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateUserEvent	m = VCL__CREATE_USER_EVENT__INIT;

	m.id = id;
	m.context = ctx;
	r.call_case = VCL__REQUEST__CALL_CREATE_USER_EVENT;
	r.create_user_event = &m;
	return (send_req(c, &r, NULL, 0));
}

/* Marker on q with event ev (0: none) waiting on wait (0: nothing). */
static int
marker(struct conn *c, uint64_t q, uint64_t ev, uint64_t wait)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__Marker	m = VCL__MARKER__INIT;
	Vcl__Enqueue	e = VCL__ENQUEUE__INIT;

	e.queue = q;
	e.has_event = ev != 0;
	e.event = ev;
	e.n_wait = wait != 0;
	e.wait = &wait;
	m.q = &e;
	r.call_case = VCL__REQUEST__CALL_MARKER;
	r.marker = &m;
	return (send_req(c, &r, NULL, 0));
}

/* A CreateSubBuffer{id, parent, 0, size}. */
static int
sub_buffer(struct conn *c, uint64_t id, uint64_t parent, uint64_t size)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateSubBuffer	m = VCL__CREATE_SUB_BUFFER__INIT;

	m.id = id;
	m.parent = parent;
	m.flags = CL_MEM_READ_WRITE;
	m.size = size;
	r.call_case = VCL__REQUEST__CALL_CREATE_SUB_BUFFER;
	r.create_sub_buffer = &m;
	return (send_req(c, &r, NULL, 0));
}

/* CreateQueue{id, ctx, device 0} with CL_QUEUE_PROFILING_ENABLE. */
static int
queue_profiling(struct conn *c, uint64_t id, uint64_t ctx)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateQueue	m = VCL__CREATE_QUEUE__INIT;
	uint64_t		props[2] = { CL_QUEUE_PROPERTIES,
				    CL_QUEUE_PROFILING_ENABLE };

	m.id = id;
	m.context = ctx;
	m.n_properties = 2;
	m.properties = props;
	r.call_case = VCL__REQUEST__CALL_CREATE_QUEUE;
	r.create_queue = &m;
	return (send_req(c, &r, NULL, 0));
}

/* CreateProgram of src as id in ctx, then BuildProgram{compile}: its status. */
static int
compile_prog(struct conn *c, uint64_t id, uint64_t ctx, const char *src)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__BuildProgram	m = VCL__BUILD_PROGRAM__INIT;

	if (create_program(c, id, ctx, src) != 0)
		return (1);
	m.program = id;
	m.has_compile = m.compile = 1;
	r.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	r.build_program = &m;
	return (raw_status(c, &r));
}

/* The server's binary of program prog for device 0, kept in a_bin. */
static int
fetch_binary(struct conn *c, uint64_t prog)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__GetBinary	m = VCL__GET_BINARY__INIT;
	struct reply	rp;
	int		rc = -1;

	if (a_bin != NULL)
		return (0);
	m.program = prog;
	r.call_case = VCL__REQUEST__CALL_GET_BINARY;
	r.get_binary = &m;
	if (call(c, &r, NULL, 0, &rp) != 0)
		return (-1);
	if (rp.r->status == CL_SUCCESS && rp.r->program != NULL &&
	    rp.r->program->has_binary && rp.r->program->binary.len > 0 &&
	    (a_bin = malloc(rp.r->program->binary.len)) != NULL) {
		a_bin_len = rp.r->program->binary.len;
		memcpy(a_bin, rp.r->program->binary.data, a_bin_len);
		rc = 0;
	}
	reply_free(&rp);
	return (rc);
}

/* A PeerDest naming session A (sid, key) at server 1, for C's requests. */
static void
dest_a(Vcl__PeerDest *d)
{
	vcl__peer_dest__init(d);
	d->addr = a_addr;
	d->session = a_sid;
	d->key = a_key;
}

/* C: MigrateOut of C_M's first size bytes to A as transfer xfer. */
static int
c_migrate_out(uint64_t xfer, uint64_t size)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__MigrateOut	m = VCL__MIGRATE_OUT__INIT;
	Vcl__PeerDest	d;

	dest_a(&d);
	m.context = C_CTX;
	m.mem = C_M;
	m.size = size;
	m.dest = &d;
	m.transfer = xfer;
	r.call_case = VCL__REQUEST__CALL_MIGRATE_OUT;
	r.migrate_out = &m;
	return (send_req(&pc.c, &r, NULL, 0));
}

/* C: ForwardEvent of C_EV (complete) to A's proxy. */
static int
c_forward(uint64_t proxy)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__ForwardEvent	m = VCL__FORWARD_EVENT__INIT;
	Vcl__PeerDest		d;

	dest_a(&d);
	m.event = C_EV;
	m.dest = &d;
	m.proxy = proxy;
	r.call_case = VCL__REQUEST__CALL_FORWARD_EVENT;
	r.forward_event = &m;
	return (send_req(&pc.c, &r, NULL, 0));
}

/* CreateProxyEvent{id, ctx, source (NULL: none)}. */
static int
proxy_event(struct conn *c, uint64_t id, uint64_t ctx, const char *source)
{
	Vcl__Request		r = VCL__REQUEST__INIT;
	Vcl__CreateProxyEvent	m = VCL__CREATE_PROXY_EVENT__INIT;

	m.id = id;
	m.context = ctx;
	m.source = (char *)source;
	r.call_case = VCL__REQUEST__CALL_CREATE_PROXY_EVENT;
	r.create_proxy_event = &m;
	return (send_req(c, &r, NULL, 0));
}

/*
 * Session C on the second server: a context, queue, buffer and a
 * complete event, its session's id and key. 0 or -1.
 */
static int
setup_c(void)
{
	snprintf(pc.addr, sizeof pc.addr, "127.0.0.1:%s", pc.sv.port);
	if (client_open(&pc.c, &pc.sv, &pc.sid, &pc.key) != 0 ||
	    create_buffer(&pc.c, C_M, C_CTX, BUF_SIZE, NULL, 0) != 0 ||
	    marker(&pc.c, C_Q, C_EV, 0) != 0 ||
	    raw_finish(&pc.c, C_Q) != CL_SUCCESS)
		return (-1);
	return (0);
}

/* One session's live objects at base + the A_* ids: a program built. */
static int
objects(struct conn *c, uint64_t base, const void *bytes)
{
	int	rc;

	rc = create_context(c, base + A_CTX);
	rc |= create_queue(c, base + A_Q, base + A_CTX);
	rc |= create_buffer(c, base + A_M, base + A_CTX, BUF_SIZE, bytes,
	    BUF_SIZE);
	rc |= image2d(c, base + A_IMG, base + A_CTX);
	rc |= create_program(c, base + A_P, base + A_CTX, kernel_src);
	rc |= sampler(c, base + A_SMP, base + A_CTX);
	rc |= user_event(c, base + A_EV, base + A_CTX);
	if (rc != 0 || raw_build(c, base + A_P, NULL) != CL_SUCCESS ||
	    raw_kernel(c, base + A_K, base + A_P, "k") != CL_SUCCESS)
		return (-1);
	return (0);
}

/*
 * Session A: its objects, with A_EV a complete marker's event, and the
 * released ones: A_PARENT held by A_SUB, A_UREL by the marker held on
 * A_QH, the other kinds gone.
 */
static int
setup_a(struct conn *c, const struct srv *sv)
{
	int	rc;

	snprintf(a_addr, sizeof a_addr, "127.0.0.1:%s", sv->port);
	if (conn_open(c, sv) != 0 || hello_as(c, 0, &a_sid, &a_key) != 0 ||
	    objects(c, 0, NULL) != 0)
		return (-1);
	/* A_EV becomes a profiled marker's event rather than a user event. */
	rc = release(c, VCL__KIND__KIND_EVENT, A_EV);
	rc |= queue_profiling(c, A_QP, A_CTX);
	rc |= marker(c, A_QP, A_EV, 0);
	/* What the all-valid calls take besides. */
	rc |= create_buffer(c, A_M2, A_CTX, BUF_SIZE, NULL, 0);
	rc |= image2d(c, A_IMG2, A_CTX);
	rc |= create_program(c, A_PB, A_CTX, kernel_src);
	rc |= create_program(c, A_PS, A_CTX, samp_src);
	if (rc != 0 || compile_prog(c, A_PC, A_CTX, kernel_src) != CL_SUCCESS ||
	    raw_build(c, A_PS, NULL) != CL_SUCCESS ||
	    raw_kernel(c, A_KS, A_PS, "ks") != CL_SUCCESS ||
	    fetch_binary(c, A_P) != 0)
		return (-1);
	rc |= create_queue(c, A_QH, A_CTX);
	rc |= create_buffer(c, A_PARENT, A_CTX, BUF_SIZE, NULL, 0);
	rc |= sub_buffer(c, A_SUB, A_PARENT, 16);
	rc |= release(c, VCL__KIND__KIND_MEM, A_PARENT);
	rc |= user_event(c, A_UREL, A_CTX);
	rc |= marker(c, A_QH, A_HM, A_UREL);
	rc |= release(c, VCL__KIND__KIND_EVENT, A_UREL);
	rc |= create_context(c, A_CTX_R);
	rc |= create_queue(c, A_Q_R, A_CTX);
	rc |= create_program(c, A_P_R, A_CTX, kernel_src);
	rc |= sampler(c, A_SMP_R, A_CTX);
	rc |= release(c, VCL__KIND__KIND_CONTEXT, A_CTX_R);
	rc |= release(c, VCL__KIND__KIND_QUEUE, A_Q_R);
	rc |= release(c, VCL__KIND__KIND_SAMPLER, A_SMP_R);
	if (rc != 0 || raw_kernel(c, A_K_R, A_P, "k") != CL_SUCCESS)
		return (-1);
	rc = release(c, VCL__KIND__KIND_KERNEL, A_K_R);
	rc |= release(c, VCL__KIND__KIND_PROGRAM, A_P_R);
	if (rc != 0 || raw_finish(c, A_Q) != CL_SUCCESS ||
	    raw_finish(c, A_QP) != CL_SUCCESS)
		return (-1);
	return (0);
}

/* A fresh object of kind k in A (for a Release to free): its id, or 0. */
static uint64_t
own_object(struct conn *a, Vcl__Kind k)
{
	uint64_t	id = fresh++;
	int		rc;

	switch (k) {
	case VCL__KIND__KIND_CONTEXT:
		rc = create_context(a, id);
		break;
	case VCL__KIND__KIND_QUEUE:
		rc = create_queue(a, id, A_CTX);
		break;
	case VCL__KIND__KIND_MEM:
		rc = create_buffer(a, id, A_CTX, BUF_SIZE, NULL, 0);
		break;
	case VCL__KIND__KIND_PROGRAM:
		rc = create_program(a, id, A_CTX, kernel_src);
		break;
	case VCL__KIND__KIND_KERNEL:
		rc = raw_kernel(a, id, A_P, "k") != CL_SUCCESS;
		break;
	case VCL__KIND__KIND_EVENT:
		rc = user_event(a, id, A_CTX);
		break;
	case VCL__KIND__KIND_SAMPLER:
		rc = sampler(a, id, A_CTX);
		break;
	default:
		rc = -1;
		break;
	}
	return (rc == 0 ? id : 0);
}

/* Launch ks on q with sampler smp (A_IMG in, A_M out), event ev. */
static int
sampler_launch(struct conn *a, uint64_t q, uint64_t smp, uint64_t ev)
{
	Vcl__KernelArg	 ka[3], *args[3];
	int		 i;

	for (i = 0; i < 3; i++) {
		vcl__kernel_arg__init(&ka[i]);
		ka[i].index = (uint32_t)i;
		ka[i].has_mem = 1;
		args[i] = &ka[i];
	}
	ka[0].type = VCL__KERNEL_ARG__TYPE__IMAGE;
	ka[0].mem = A_IMG;
	ka[1].type = VCL__KERNEL_ARG__TYPE__SAMPLER;
	ka[1].mem = smp;
	ka[2].type = VCL__KERNEL_ARG__TYPE__MEM;
	ka[2].mem = A_M;
	return (raw_ndrange(a, q, A_KS, 1, 0, args, 3, ev));
}

/*
 * Before a probe of call op is filled: the objects its all-valid form
 * names that are its own (what a Release frees, a user event to set), and
 * for a ForwardEvent a proxy on C with a marker of C waiting on it.
 */
static int
probe_before(struct conn *a, const char *op, enum mut mu, struct fill *f)
{
	int	rc = 0;

	if (mu == M_VALID && strcmp(op, "release") == 0)
		rc = (f->own = own_object(a, (Vcl__Kind)f->variant)) == 0;
	else if (mu == M_VALID && strcmp(op, "set_user_event_status") == 0)
		rc = user_event(a, (f->own = fresh++), A_CTX);
	else if (strcmp(op, "forward_event") == 0) {
		f->proxy = fresh++;
		f->pev = fresh++;
		rc = proxy_event(&pc.c, f->proxy, C_CTX, a_addr);
		rc |= marker(&pc.c, C_Q, f->pev, f->proxy);
	}
	return (rc == 0 ? 0 : -1);
}

/*
 * Once a probe of op is sent: what shows its effect when it has no answer
 * of its own. MigrateIn's bytes come from C; a proxy made is completed by
 * C's ForwardEvent and a command waits on it, as on a set user event or a
 * launch with a sampler made; a ForwardEvent's proxy on C is told (its
 * marker's end, read here).
 */
static int
probe_after(struct conn *a, const char *op, enum mut mu, struct fill *f,
    struct probe *p)
{
	cl_int		 st = 0;
	int		 rc = 0;

	if (mu == M_VALID && strcmp(op, "migrate_in") == 0)
		rc = c_migrate_out(f->xfer, 16);
	else if (strcmp(op, "create_proxy_event") == 0) {
		p->ev = fresh++;
		rc = marker(a, f->queue, p->ev, f->out);
		rc |= c_forward(f->out);
	} else if (mu == M_VALID && strcmp(op, "set_user_event_status") == 0) {
		p->ev = fresh++;
		rc = marker(a, f->queue, p->ev, f->own);
	} else if (strcmp(op, "create_sampler") == 0) {
		p->ev = fresh++;
		rc = sampler_launch(a, f->queue, f->out, p->ev);
	} else if (mu == M_VALID && strcmp(op, "release") == 0) {
		/* Its id is the client's no more: asked, it is refused. */
		if (f->variant != VCL__KIND__KIND_SAMPLER)
			p->seen = created(a, f->own) == R_SUCCESS ? R_ERROR :
			    R_SUCCESS;
		else {
			p->iev = fresh++;
			rc = sampler_launch(a, f->queue, f->own, p->iev);
		}
	} else if (strcmp(op, "forward_event") == 0) {
		if (wait_notify(&pc.c, f->pev, &st) != 0)
			p->hung = 1;
		else
			p->seen = st == CL_COMPLETE ? R_SUCCESS : R_ERROR;
	}
	return (rc == 0 ? 0 : -1);
}

/*
 * Send one probe of call f_call (variant, handle field target mutated
 * mu) on A. Returns 0, or -1 when A had to be set up again and could not.
 */
static int
send_probe(struct conn *a, const struct srv *sv,
    const ProtobufCFieldDescriptor *fcall, int variant, int target,
    enum mut mu, struct fill *f)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	ProtobufCMessage *m;
	struct probe	*p;
	uint8_t		*bulk = NULL;
	uint64_t	 blen;
	int64_t		 before, after;
	size_t		 i;
	int		 rc;

	memset(f, 0, sizeof *f);
	f->target = target;
	f->mut = mu;
	f->variant = variant;
	f->queue = fresh++;
	if (nprobes >= MAX_PROBES || create_queue(a, f->queue, A_CTX) != 0 ||
	    probe_before(a, fcall->name, mu, f) != 0 ||
	    (before = objects_of(a)) < 0)
		return (-1);
	if ((m = fill_msg(f, fcall->descriptor)) == NULL)
		return (-1);
	p = &probes[nprobes++];
	memset(p, 0, sizeof *p);
	p->op = fcall->name;
	p->mut = mu;
	for (i = 0; i < sizeof answered / sizeof answered[0]; i++)
		if (strcmp(answered[i], p->op) == 0)
			p->wants = 1;
	if (target >= 0 && target < f->n)
		snprintf(p->field, sizeof p->field, "%s", f->hf[target].name);
	p->ev = f->ev;
	r.call_case = (Vcl__Request__CallCase)fcall->id;
	*(ProtobufCMessage **)((char *)&r + fcall->offset) = m;
	blen = bulk_of(m);
	if (blen > 0 && (bulk = calloc(1, blen)) == NULL) {
		fill_free(f);
		return (-1);
	}
	rc = send_req(a, &r, bulk, blen);
	p->seq = r.seq;
	free(bulk);
	if (rc == 0)
		rc = probe_after(a, fcall->name, mu, f, p);
	after = rc == 0 ? objects_of(a) : -2;
	if (after >= 0 && !p->replied && p->ev == 0 && f->out != 0)
		p->created = created(a, f->out);
	if (after >= 0 && after < before && mu != M_VALID)
		check("kinds_nothing_freed", 0, "%s %s=%s: the session's "
		    "objects went from %lld to %lld", p->op, p->field,
		    mut_name[mu], (long long)before, (long long)after);
	fill_free(f);
	if (after != -2)
		return (0);
	/* Closed: an answer too (no success); A again for the next. */
	p->closed = 1;
	conn_close(a);
	return (setup_a(a, sv));
}

/* What a probe got, once its answers are in. */
static enum res
result(const struct probe *p)
{
	if (p->closed)
		return (R_ERROR);
	if (p->replied && p->rstatus != CL_SUCCESS)
		return (R_ERROR);
	if (p->notified && p->nstatus < 0)
		return (R_ERROR);
	if ((p->ev != 0 && !p->notified) || p->hung ||
	    (p->wants && !p->replied) || (p->iev != 0 && !p->inotified))
		return (R_NONE);	/* a command never told its end */
	if (p->iev != 0)	/* what it took away is refused */
		return (p->istatus < 0 ? R_SUCCESS : R_ERROR);
	if (p->replied || p->notified)
		return (R_SUCCESS);
	if (p->seen != R_NONE)
		return (p->seen);
	if (p->created != R_NONE)
		return (p->created);
	return (R_SILENT);
}

/*
 * Read until every probe's event was told its end and every reply due
 * came (a build's or a link's from a worker), or the bound.
 */
static void
drain(struct conn *a, size_t from)
{
	size_t	i;
	int	n, pending = 1;

	for (n = 0; pending && n < STATS_POLLS; n++) {
		pending = 0;
		for (i = from; i < nprobes; i++)
			if (!probes[i].closed && ((probes[i].ev != 0 &&
			    !probes[i].notified) || (probes[i].wants &&
			    !probes[i].replied) || (probes[i].iev != 0 &&
			    !probes[i].inotified)))
				pending = 1;
		if (!pending || objects_of(a) < 0)
			break;
		poll_wait();
	}
}

/* The number of handle fields call fcall has (variant v), filled. */
static int
handle_fields(const ProtobufCFieldDescriptor *fcall, int v, struct fill *f)
{
	memset(f, 0, sizeof *f);
	f->target = -1;
	f->variant = v;
	f->queue = 1;
	(void)fill_msg(f, fcall->descriptor);
	fill_free(f);
	return (f->n);
}

/* B's buffer still holds its bytes and B its objects. */
static int
b_intact(struct conn *b, const uint8_t *bytes, int64_t objs)
{
	struct reply	rp;
	int		ok;

	if (read_buffer(b, B_Q, B_M, BUF_SIZE, &rp) != 0)
		return (0);
	ok = rp.r->status == CL_SUCCESS && rp.bulk_len == BUF_SIZE &&
	    memcmp(rp.bulk, bytes, BUF_SIZE) == 0;
	reply_free(&rp);
	return (ok && objects_of(b) == objs);
}

/* Why call (with its variant, "get_info EVENT") has no baseline, or NULL. */
static const char *
baseline_exempt(const char *call)
{
	size_t	i;

	for (i = 0; i < sizeof no_baseline / sizeof no_baseline[0]; i++)
		if (strcmp(no_baseline[i].call, call) == 0)
			return (no_baseline[i].why);
	return (NULL);
}

/*
 * The sweep: every call that names objects, every handle field, every
 * wrong id; the call all valid first.
 */
static void
test_sweep(void)
{
	const ProtobufCMessageDescriptor *d = &vcl__request__descriptor;
	const ProtobufCFieldDescriptor	*fc, *vf;
	const ProtobufCEnumDescriptor	*ed;
	struct srv			 sv;
	struct conn			 a, b, w;
	struct fill			 f;
	uint8_t				*bytes;
	char				 name[96];
	const char			*why;
	int64_t				 bobjs;
	size_t				 first, i, swept = 0, strong = 0;
	size_t				 skipped = 0;
	unsigned			 ci;
	int				 nv, v, t, nh, mu, bad, ok = 1;
	enum res			 res;

	a.fd = b.fd = w.fd = pc.c.fd = -1;
	fresh = A_FRESH;
	if ((bytes = raw_pattern(BUF_SIZE, 7)) == NULL ||
	    !srv_start(&sv, "sweep_server_start", "127.0.0.1:0", NULL)) {
		free(bytes);
		return;
	}
	if (!srv_start(&pc.sv, "sweep_peer_start", "127.0.0.1:0", NULL)) {
		srv_stop(&sv, "sweep_server_exit");
		free(bytes);
		return;
	}
	if (!check("sweep_session_c", setup_c() == 0, "no session C on the "
	    "second server") ||
	    !check("sweep_session_b", conn_session(&b, &sv) == 0 &&
	    objects(&b, B_BASE, bytes) == 0, "no session B") ||
	    !check("sweep_session_a", setup_a(&a, &sv) == 0, "no session A"))
		goto out;
	bobjs = objects_of(&b);
	for (ci = 0; ci < d->n_fields && ok; ci++) {
		fc = &d->fields[ci];
		if (!(fc->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ||
		    fc->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		/* Release and GetInfo: once per kind or what. */
		vf = protobuf_c_message_descriptor_get_field_by_name(
		    fc->descriptor, "kind");
		if (vf == NULL)
			vf = protobuf_c_message_descriptor_get_field_by_name(
			    fc->descriptor, "what");
		ed = vf != NULL && vf->type == PROTOBUF_C_TYPE_ENUM ?
		    vf->descriptor : NULL;
		nv = ed != NULL ? (int)ed->n_values : 1;
		for (v = 0; v < nv && ok; v++) {
			int	 var = ed != NULL ? ed->values[v].value : 0;

			if ((nh = handle_fields(fc, var, &f)) == 0)
				continue;
			/*
			 * A kind the sweep has no object of: none to name.
			 * Only sub-devices (the server's PoCL device here
			 * makes none for the sweep); any other call left out
			 * would be a hole in the sweep, and fails it.
			 */
			for (t = 0, bad = 0; t < nh; t++)
				if (mutated_id(f.hf[t].kind, M_OTHER) == 0 ||
				    mutated_id(f.hf[t].kind, M_OTHER) ==
				    HUGE_ID) {
					bad = 1;
					check("kinds_covered", f.hf[t].kind ==
					    VCL__KIND__KIND_DEVICE, "%s%s%s: "
					    "field %s of a kind the sweep has "
					    "no object of", fc->name, ed !=
					    NULL ? " " : "", ed != NULL ?
					    ed->values[v].name : "",
					    f.hf[t].name);
				}
			if (bad) {
				skipped++;
				continue;
			}
			first = nprobes;
			/* All valid (a Release frees an object of its own). */
			if (send_probe(&a, &sv, fc, var, -1, M_VALID, &f) != 0)
				ok = 0;
			for (t = 0; t < nh && ok; t++)
				for (mu = M_WRONG; mu < M_N && ok; mu++)
					if (send_probe(&a, &sv, fc, var, t,
					    (enum mut)mu, &f) != 0)
						ok = 0;
			drain(&a, first);
			swept++;
			snprintf(name, sizeof name, "%s%s%s", fc->name,
			    ed != NULL ? " " : "", ed != NULL ?
			    ed->values[v].name : "");
			why = baseline_exempt(name);
			for (i = first; i < nprobes; i++) {
				res = result(&probes[i]);
				if (probes[i].mut == M_VALID) {
					if (res == R_SUCCESS)
						strong++;
					if (why != NULL)
						note("%s all valid: %s (%s)",
						    name, res == R_SUCCESS ?
						    "succeeds" : "no success "
						    "seen", why);
					else
						check("kinds_baseline", res ==
						    R_SUCCESS, "%s all valid: "
						    "%s, so its refusals below "
						    "may have other causes",
						    name, res == R_NONE ?
						    "its command was never "
						    "told its end" : res ==
						    R_ERROR ? "refused" :
						    "no success seen");
					continue;
				}
				if (res == R_SUCCESS || res == R_NONE)
					check("kinds_refused", 0, "%s%s%s %s = "
					    "%s: %s", fc->name, ed != NULL ?
					    " " : "", ed != NULL ?
					    ed->values[v].name : "",
					    probes[i].field,
					    mut_name[probes[i].mut],
					    res == R_SUCCESS ? "succeeded" :
					    "its command was never told its "
					    "end, or its reply never came "
					    "(held or hung)");
			}
		}
	}
	check("sweep_done", ok, "the sweep stopped: session A lost (%zu "
	    "probes)", nprobes);
	note("%zu calls and variants swept, %zu probes, %zu succeed all "
	    "valid; %zu name a sub-device and are left out", swept, nprobes,
	    strong, skipped);
	check("kinds_swept", swept > 0, "the descriptor walk swept no call");
	check("sweep_b_intact", b_intact(&b, bytes, bobjs), "session B's "
	    "buffer or objects changed");
	check("sweep_serves", srv_alive(&sv) && conn_session(&w, &sv) == 0 &&
	    objects_of(&w) == 0, "the server %s", srv_how(&sv));
out:
	conn_close(&w);
	conn_close(&a);
	conn_close(&b);
	conn_close(&pc.c);
	free(bytes);
	free(a_bin);
	a_bin = NULL;
	srv_stop(&pc.sv, "sweep_peer_exit");
	srv_stop(&sv, "sweep_server_exit");
}

#define EARLY_N		2000	/* early ids a peer sends: past bound */
#define EARLY_MAX_OBJ	16	/* the server's --max-objects for it */

/* PeerEvent{sid, key, proxy, CL_COMPLETE} on c (a peer link or not). */
static int
peer_event_send(struct conn *c, uint64_t sid, uint64_t key, uint64_t proxy)
{
	Vcl__Request	r = VCL__REQUEST__INIT;
	Vcl__PeerEvent	m = VCL__PEER_EVENT__INIT;

	m.session = sid;
	m.key = key;
	m.proxy = proxy;
	m.status = CL_COMPLETE;
	r.call_case = VCL__REQUEST__CALL_PEER_EVENT;
	r.peer_event = &m;
	return (send_req(c, &r, NULL, 0));
}

/* PeerPush{sid, key, xfer} of n bytes (zeros) on c. */
static int
peer_push_send(struct conn *c, uint64_t sid, uint64_t key, uint64_t xfer,
    uint64_t n)
{
	Vcl__Request	 r = VCL__REQUEST__INIT;
	Vcl__PeerPush	 m = VCL__PEER_PUSH__INIT;
	uint8_t		*b;
	int		 rc;

	if ((b = calloc(1, n)) == NULL)
		return (-1);
	m.session = sid;
	m.key = key;
	m.transfer = xfer;
	r.call_case = VCL__REQUEST__CALL_PEER_PUSH;
	r.peer_push = &m;
	rc = send_req(c, &r, b, n);
	free(b);
	return (rc);
}

/*
 * The peer-only calls, whose ids may name what is not made yet: a client
 * session sending PeerPush or PeerEvent is closed (a peer link only); a
 * peer's events and pushes for ids a session never made, huge ones and
 * the same one twice, are kept within the session's early bound and go
 * with the session; a PeerFail naming another session's transfer leaves
 * that transfer to fill and complete.
 */
static void
test_peer_calls(void)
{
	static const char *const maxo[] = { "--max-objects", "16", NULL };
	struct srv		 sv;
	struct conn		 a, b, p, w;
	Vcl__StatsResult	 st;
	Vcl__Request		 r = VCL__REQUEST__INIT;
	Vcl__PeerFail		 pf = VCL__PEER_FAIL__INIT;
	uint64_t		 sid = 0, key = 0, bsid = 0, bkey = 0, id, xfer;
	uint64_t		 base, most = 0;	/* server's objects */
	cl_int			 evst = 1;
	int			 i, rc;

	a.fd = b.fd = p.fd = w.fd = -1;
	if (!srv_start(&sv, "peer_calls_server_start", "127.0.0.1:0", maxo))
		return;
	/* A client session is no peer link. */
	for (i = 0; i < 2; i++) {
		rc = client_open(&a, &sv, &sid, &key);
		if (rc == 0)
			rc = i == 0 ? peer_event_send(&a, sid, key, 5) :
			    peer_push_send(&a, sid, key, 5, 16);
		check("peer_calls_client_closed", rc == 0 && wait_closed(&a),
		    "%s on a client session: not closed", i == 0 ?
		    "PeerEvent" : "PeerPush");
		conn_close(&a);
	}
	if (!check("peer_calls_sessions", client_open(&a, &sv, &sid, &key) ==
	    0 && client_open(&b, &sv, &bsid, &bkey) == 0 &&
	    conn_open(&p, &sv) == 0 && hello_as(&p, 1, NULL, NULL) == 0 &&
	    conn_session(&w, &sv) == 0 && stats(&w, &st) == 0, "no sessions"))
		goto out;
	base = st.objects;
	/* Early events and pushes: ids never made, huge, one twice. */
	rc = 0;
	for (i = 0; i < EARLY_N && rc == 0; i++) {
		id = i % 2 == 0 ? HUGE_ID - (uint64_t)i : 1000 + (uint64_t)i;
		rc = i % 4 == 3 ? peer_push_send(&p, sid, key, id, 16) :
		    peer_event_send(&p, sid, key, id);
		if (rc == 0 && i == 0)
			rc = peer_event_send(&p, sid, key, id);
		if ((i % 200 == 199 || i == EARLY_N - 1) && rc == 0 &&
		    (rc = stats(&w, &st)) == 0 && st.objects > most)
			most = st.objects;
	}
	check("peer_calls_early_bound", rc == 0 && most >= base &&
	    most - base <= EARLY_MAX_OBJ + 1024, "%d early ids from a peer: "
	    "the server's objects rose by %llu (bound %d, the session's early "
	    "table)", EARLY_N, (unsigned long long)(most - base),
	    EARLY_MAX_OBJ + 1024);
	/* A goes, and with it all it was sent: B's context and queue stay. */
	conn_close(&a);
	for (i = 0; i < STATS_POLLS && stats(&w, &st) == 0 &&
	    (st.objects > base - 2 || st.bytes > 0); i++)
		poll_wait();
	check("peer_calls_early_freed", st.objects == base - 2 &&
	    st.bytes == 0, "session A closed: the server still holds %llu "
	    "objects (want %llu), %llu bytes", (unsigned long long)st.objects,
	    (unsigned long long)base - 2, (unsigned long long)st.bytes);
	/* PeerFail from B names A2's transfer: A2's fills and completes. */
	xfer = 77;
	rc = client_open(&a, &sv, &sid, &key);
	rc |= create_buffer(&a, 3, 1, BUF_SIZE, NULL, 0);
	rc |= migrate_in(&a, 10, 3, 16, xfer, NULL);
	pf.ids = &xfer;
	pf.n_ids = 1;
	pf.status = CL_DEVICE_NOT_AVAILABLE;
	r.call_case = VCL__REQUEST__CALL_PEER_FAIL;
	r.peer_fail = &pf;
	rc |= send_req(&b, &r, NULL, 0);
	rc |= stats(&b, &st);
	rc |= peer_push_send(&p, sid, key, xfer, 16);
	rc |= wait_notify(&a, 10, &evst);
	check("peer_calls_fail_other", rc == 0 && evst == CL_COMPLETE,
	    "another session's PeerFail of a transfer: its MigrateIn's event "
	    "%d (rc %d), want it filled", evst, rc);
	check("peer_calls_serves", srv_alive(&sv), "the server %s",
	    srv_how(&sv));
out:
	conn_close(&w);
	conn_close(&p);
	conn_close(&b);
	conn_close(&a);
	srv_stop(&sv, "peer_calls_server_exit");
}

static const struct test tests[] = {
	{ "sweep",	test_sweep,	600 },
	{ "peer_calls",	test_peer_calls,	120 },
};

int
main(int argc, char **argv)
{
	return (rawproto_main(argc, argv, tests, sizeof tests / sizeof tests[0]));
}
