/* peach2.c - the PEACH2 model: the TCA user API for the processes of one host. */

/*
 * A TCA domain is a name; each process calling tcaInit is one node of it
 * (VCL_TCA_DOMAIN, VCL_TCA_NODE 0..15; ring = node / 8, position = node % 8).
 * Registered memory (tcaMalloc) lives in POSIX shared memory segments named
 * after the domain, node and segment, which any node of the domain maps: the
 * analogue of the PCIe window. Each node has a control segment holding one
 * notification ring per source node.
 *
 * DMA: a chain loaded into one of four channels is checked whole before any
 * byte moves (every rule has its own error and a detail string). A start then
 * copies the descriptors in chain order and posts their notifications, each
 * stamped with the time the modelled board would make it visible; waits
 * (tcaWaitDMAC, tcaWaitDMARecvDesc) spin until that time. The times come from
 * a fluid model of the node's DMA engine: per-channel bandwidths (the PCIe
 * read tags split 32/16/8/8), descriptor fetch and per-descriptor costs, a
 * shared port that absorbs a burst from several channels and then saturates,
 * ring hops and notification latency. Bytes may land before their modelled
 * time; nothing is visible through a notification or a completion earlier.
 *
 * Locking: one mutex per process guards the channels and the timing state.
 * Notification records are shared between processes: one writer per ring (the
 * source process, under its mutex), readers claim a record by CAS.
 */

#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tca_api.h"

#define P2_EXPORT		__attribute__((visibility("default")))
#define P2_MAGIC		0x50454132u	/* "PEA2" */
#define P2_RING			256	/* notification records per source */
#define P2_MAXSEGS		256	/* registered segments per node */
#define P2_MAXMAPS		256	/* remote segments mapped per node */
#define P2_RING_NODES		8	/* nodes per ring */

/* The timing model's figures; every one can be set in VCL_TCA_MODEL. */
struct p2_timing {
	double	pio_ns;		/* PIO one-way latency (seed 000) */
	double	kick_ns;	/* doorbell write starting a channel */
	double	fetch_ns;	/* descriptor table fetch, not in register mode */
	double	desc_ns;	/* per descriptor processing */
	double	read_ns;	/* first read completion from the source */
	double	hop_ns;		/* per ring hop */
	double	notify_ns;	/* notification / completion write */
	double	mc_ns;		/* start while other channels run (arbitration) */
	double	gpu[TCA_NCHANNELS];	/* GB/s reading GPU memory (seed 003) */
	double	cpu[TCA_NCHANNELS];	/* GB/s reading host memory */
	double	burst;		/* bytes the port takes at full aggregate rate */
	double	sat;		/* GB/s of the saturated port, all channels */
	double	wait_ms;	/* bound of every wait */
};

struct p2_note {
	_Atomic uint32_t	state;	/* 0 free, 1 posted */
	int32_t			slot;
	int32_t			tag;
	uint32_t		pad;
	_Atomic uint64_t	visible_ns;
	uint64_t		seq;
};

struct p2_ctl {
	uint32_t		magic;
	uint32_t		node;
	_Atomic int32_t		pid;
	uint32_t		pad;
	_Atomic uint32_t	hw[TCA_MAX_NODES];	/* records in use below */
	struct p2_note		ring[TCA_MAX_NODES][P2_RING];
};

/* What a tcaHandle's bytes hold in the model. */
struct p2_handle {
	uint32_t	magic;
	uint32_t	domain;		/* hash of the domain name */
	uint16_t	node;
	uint16_t	kind;
	uint32_t	seg;		/* segment id on that node */
	uint64_t	off;		/* offset in the segment (bus address) */
	uint64_t	len;
	uint64_t	seglen;
};
_Static_assert(sizeof(struct p2_handle) <= sizeof(tcaHandle), "handle");

struct p2_pio {
	uint32_t	magic;
	uint32_t	pad;
	unsigned char	*base;		/* mapped remote region */
	uint64_t	len;
};
_Static_assert(sizeof(struct p2_pio) <= sizeof(tcaPIO), "pio");

struct p2_xfer {
	struct p2_handle	dst;
	struct p2_handle	src;
	uint64_t		doff;
	uint64_t		soff;
	uint64_t		len;
	int			flags;
	int			slot;
	int			tag;
};

struct tcaDesc {
	int		 n;
	int		 reg;		/* register mode (tcaDMAUseInternal) */
	struct p2_xfer	*x;
};

struct p2_seg {
	int		 used;
	uint32_t	 id;
	unsigned char	*base;
	size_t		 len;
	int		 kind;
};

struct p2_map {
	int		 used;
	int		 node;
	uint32_t	 id;
	unsigned char	*base;
	size_t		 len;
};

/* One descriptor of a running chain, in the fluid model. */
struct p2_rdesc {
	double			 rem;		/* bytes left, overhead included */
	double			 extra_ns;	/* hops + notification */
	struct p2_note		*note[2];	/* destination, self */
};

struct p2_chan {
	struct p2_xfer		*x;		/* loaded chain */
	int			 n;
	int			 reg;
	int			 unconfirmed;	/* started, not yet seen idle */
	double			 rate;		/* GB/s of the running chain */
	double			 data_start;	/* ns: bytes start flowing */
	int			 cur;		/* running descriptor */
	int			 nrun;
	struct p2_rdesc		*run;
	uint64_t		 door_ns;	/* the last start's doorbell */
	_Atomic uint64_t	 idle_ns;
};

static struct {
	pthread_mutex_t		 lock;
	int			 init;
	char			 domain[64];
	uint32_t		 dhash;
	int			 node;
	struct p2_ctl		*ctl;
	struct p2_ctl		*peer[TCA_MAX_NODES];
	struct p2_seg		 segs[P2_MAXSEGS];
	uint32_t		 next_seg;
	struct p2_map		 maps[P2_MAXMAPS];
	struct p2_chan		 ch[TCA_NCHANNELS];
	struct p2_timing	 tm;
	double			 sim_ns;	/* model advanced to here */
	double			 credit;	/* port burst bytes left */
	uint64_t		 seq;
	int			 pio_armed;
	uint64_t		 clock_ns;	/* cost of one clock read */
	uint64_t		 live_ns[TCA_MAX_NODES];	/* seen alive */
	double			 last_door;	/* doorbell of the last start */
	double			 last_exit;	/* when that start returned */
	int			 last_ch;	/* and its channel */
	uint64_t		 pio_t0;	/* first PIO store's call */
	uint64_t		 pio_vis;	/* and when it was visible */
	int			 atexit_set;
} p2 = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __thread int	p2_rule;
static __thread uint64_t p2_seen_ns;	/* last notification's visible time */
static __thread char	p2_detail[256];

/* Record the rule a call broke and return its code. */
static tcaresult __attribute__((format(printf, 3, 4)))
p2_fail(tcaresult res, int rule, const char *fmt, ...)
{
	va_list	ap;

	p2_rule = rule;
	va_start(ap, fmt);
	vsnprintf(p2_detail, sizeof p2_detail, fmt, ap);
	va_end(ap);
	return (res);
}

/* Clear the last rule at the start of a call. */
static void
p2_ok(void)
{
	p2_rule = VCL_TCA_RULE_NONE;
	p2_detail[0] = '\0';
}

/* Monotonic clock in ns, shared by every process of the host. */
static uint64_t
p2_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

/* Spin until the clock reaches t. */
static void
p2_spin_until(uint64_t t)
{
	while (p2_now() < t)
		__asm__ __volatile__("" ::: "memory");
}

/* The median cost of one clock read (at most 200 ns). */
static uint64_t
p2_clock_cost(void)
{
	uint64_t	d[33], t, x;
	int		i, j;

	for (i = 0; i < 33; i++) {
		t = p2_now();
		d[i] = p2_now() - t;
	}
	for (i = 1; i < 33; i++) {
		x = d[i];
		for (j = i; j > 0 && d[j - 1] > x; j--)
			d[j] = d[j - 1];
		d[j] = x;
	}
	return (d[16] < 200 ? d[16] : 200);
}

/* FNV-1a hash of the domain name. */
static uint32_t
p2_hash(const char *s)
{
	uint32_t	h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (h);
}

/* Set the default figures (TCA.md's table). */
static void
p2_timing_defaults(struct p2_timing *tm)
{
	static const double	gpu[] = { 2.75, 1.3, 0.7, 0.7 };
	static const double	cpu[] = { 3.55, 1.78, 0.89, 0.89 };

	tm->pio_ns = 782;
	tm->kick_ns = 150;
	tm->fetch_ns = 600;
	tm->desc_ns = 50;
	tm->read_ns = 600;
	tm->hop_ns = 200;
	tm->notify_ns = 397;
	tm->mc_ns = 250;
	memcpy(tm->gpu, gpu, sizeof gpu);
	memcpy(tm->cpu, cpu, sizeof cpu);
	tm->burst = 11264;
	tm->sat = 2.70;
	tm->wait_ms = 10000;
}

/* Parse VCL_TCA_MODEL ("key=value,..."); -1 on an unknown key or value. */
static int
p2_timing_parse(struct p2_timing *tm, const char *spec)
{
	static const struct {
		const char	*name;
		size_t		 off;
	} keys[] = {
#define K(n, f) { n, offsetof(struct p2_timing, f) }
		K("pio_ns", pio_ns), K("kick_ns", kick_ns),
		K("fetch_ns", fetch_ns), K("desc_ns", desc_ns),
		K("read_ns", read_ns), K("hop_ns", hop_ns),
		K("notify_ns", notify_ns), K("mc_ns", mc_ns),
		K("gpu0", gpu[0]), K("gpu1", gpu[1]), K("gpu2", gpu[2]),
		K("gpu3", gpu[3]), K("cpu0", cpu[0]), K("cpu1", cpu[1]),
		K("cpu2", cpu[2]), K("cpu3", cpu[3]), K("burst", burst),
		K("sat", sat), K("wait_ms", wait_ms),
#undef K
	};
	char		*copy, *item, *save = NULL, *eq, *end;
	double		 v;
	size_t		 i;
	int		 rc = 0;

	if ((copy = strdup(spec)) == NULL)
		return (-1);
	for (item = strtok_r(copy, ",", &save); item != NULL;
	    item = strtok_r(NULL, ",", &save)) {
		if ((eq = strchr(item, '=')) == NULL) {
			rc = -1;
			break;
		}
		*eq++ = '\0';
		errno = 0;
		v = strtod(eq, &end);
		if (errno != 0 || end == eq || *end != '\0' || !(v >= 0) ||
		    v > 1e12) {
			rc = -1;
			break;
		}
		for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
			if (strcmp(keys[i].name, item) == 0)
				break;
		}
		if (i == sizeof keys / sizeof keys[0]) {
			rc = -1;
			break;
		}
		*(double *)((char *)tm + keys[i].off) = v;
	}
	free(copy);
	for (i = 0; rc == 0 && i < TCA_NCHANNELS; i++) {
		if (tm->gpu[i] <= 0 || tm->cpu[i] <= 0)
			rc = -1;
	}
	if (rc == 0 && tm->sat <= 0)
		rc = -1;
	return (rc);
}

/* The shared memory name of a node's segment (id) or control (id < 0). */
static void
p2_shm_name(char *buf, size_t len, int node, long id)
{
	if (id < 0)
		snprintf(buf, len, "/vcl-tca-%s-%d-ctl", p2.domain, node);
	else
		snprintf(buf, len, "/vcl-tca-%s-%d-%ld", p2.domain, node, id);
}

/* Map a shared segment by name; its size must be at least len. */
static void *
p2_shm_map(const char *name, size_t len, int create)
{
	struct stat	 st;
	void		*p = NULL;
	int		 fd;

	fd = shm_open(name, O_RDWR | (create ? O_CREAT | O_EXCL : 0), 0600);
	if (fd == -1)
		return (NULL);
	if (create && ftruncate(fd, (off_t)len) == -1)
		goto out;
	if (fstat(fd, &st) == -1 || (uint64_t)st.st_size < len)
		goto out;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		p = NULL;
out:
	if (p == NULL && create)
		shm_unlink(name);
	close(fd);
	return (p);
}

/* Ring hops from this node to another: shortest direction, S port across. */
static int
p2_hops(int to)
{
	int	a = p2.node % P2_RING_NODES, b = to % P2_RING_NODES, d;

	d = a > b ? a - b : b - a;
	if (d > P2_RING_NODES - d)
		d = P2_RING_NODES - d;
	if (p2.node / P2_RING_NODES != to / P2_RING_NODES)
		d++;
	return (d);
}

/* Is a process alive (a node's owner)? */
static int
p2_alive(int32_t pid)
{
	return (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM));
}

/*
 * Is a node's owner alive? A positive answer is kept for 1 ms: the start of a
 * chain must not pay a system call per notified node.
 */
static int
p2_live(int node, struct p2_ctl *ctl)
{
	uint64_t	now;

	if (ctl == p2.ctl)
		return (1);
	now = p2_now();
	if (now - p2.live_ns[node] < 1000000)
		return (1);
	if (!p2_alive(atomic_load(&ctl->pid)))
		return (0);
	p2.live_ns[node] = now;
	return (1);
}

/* The control segment of a node, mapped on first use; NULL if none. */
static struct p2_ctl *
p2_peer_ctl(int node)
{
	char	name[128];

	if (node == p2.node)
		return (p2.ctl);
	/* A node restarted since: its control segment was made anew. */
	if (p2.peer[node] != NULL && !p2_live(node, p2.peer[node])) {
		munmap(p2.peer[node], sizeof *p2.peer[node]);
		p2.peer[node] = NULL;
		p2.live_ns[node] = 0;
	}
	if (p2.peer[node] == NULL) {
		p2_shm_name(name, sizeof name, node, -1);
		p2.peer[node] = p2_shm_map(name, sizeof(struct p2_ctl), 0);
	}
	if (p2.peer[node] != NULL && p2.peer[node]->magic != P2_MAGIC)
		return (NULL);
	return (p2.peer[node]);
}

/* Find a local registered segment by id. */
static struct p2_seg *
p2_seg_find(uint32_t id)
{
	int	i;

	for (i = 0; i < P2_MAXSEGS; i++) {
		if (p2.segs[i].used && p2.segs[i].id == id)
			return (&p2.segs[i]);
	}
	return (NULL);
}

/* Check a handle's bytes: of this domain, a sane node and range. */
static tcaresult
p2_handle_check(const struct p2_handle *h)
{
	if (h->magic != P2_MAGIC || h->domain != p2.dhash ||
	    h->node >= TCA_MAX_NODES || h->kind > tcaMemoryGPU)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_BAD_HANDLE,
		    "handle is not a handle of domain %s", p2.domain));
	if (h->len == 0 || h->off > h->seglen || h->len > h->seglen - h->off)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_BAD_HANDLE,
		    "handle range outside its segment"));
	return (TCA_SUCCESS);
}

/* The address of [off, off+len) of a handle's memory, mapped; NULL: rule. */
static unsigned char *
p2_resolve(const struct p2_handle *h, uint64_t off, uint64_t len,
    tcaresult *res)
{
	struct p2_seg	*s;
	struct p2_map	*m = NULL, *fr = NULL;
	char		 name[128];
	unsigned char	*base;
	int		 i;

	if ((*res = p2_handle_check(h)) != TCA_SUCCESS)
		return (NULL);
	if (off > h->len || len > h->len - off) {
		*res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_UNREGISTERED,
		    "offset %llu + length %llu outside the handle's %llu bytes",
		    (unsigned long long)off, (unsigned long long)len,
		    (unsigned long long)h->len);
		return (NULL);
	}
	if (h->node == p2.node) {
		if ((s = p2_seg_find(h->seg)) == NULL || s->len != h->seglen) {
			*res = p2_fail(TCA_ERROR_INVALID_VALUE,
			    VCL_TCA_RULE_UNREGISTERED,
			    "segment %u is not registered memory", h->seg);
			return (NULL);
		}
		return (s->base + h->off + off);
	}
	for (i = 0; i < P2_MAXMAPS; i++) {
		if (p2.maps[i].used && p2.maps[i].node == h->node &&
		    p2.maps[i].id == h->seg && p2.maps[i].len == h->seglen) {
			m = &p2.maps[i];
			break;
		}
		if (!p2.maps[i].used && fr == NULL)
			fr = &p2.maps[i];
	}
	if (m == NULL) {
		p2_shm_name(name, sizeof name, h->node, h->seg);
		if (fr == NULL || (base = p2_shm_map(name, h->seglen, 0)) ==
		    NULL) {
			*res = p2_fail(TCA_ERROR_INVALID_VALUE,
			    VCL_TCA_RULE_UNREGISTERED,
			    "node %u segment %u is not registered memory",
			    h->node, h->seg);
			return (NULL);
		}
		m = fr;
		m->used = 1;
		m->node = h->node;
		m->id = h->seg;
		m->base = base;
		m->len = h->seglen;
	}
	return (m->base + h->off + off);
}

/* Leave the domain at exit, unlinking what this process registered. */
static void
p2_atexit(void)
{
	tcaFinalize();
}

/* tcaInit: join the domain named by VCL_TCA_DOMAIN as node VCL_TCA_NODE. */
P2_EXPORT tcaresult
tcaInit(void)
{
	const char	*dom, *node, *spec, *p;
	char		 name[128], *end;
	struct p2_ctl	*ctl;
	tcaresult	 res = TCA_SUCCESS;
	long		 id;
	int		 fd;

	p2_ok();
	pthread_mutex_lock(&p2.lock);
	if (p2.init)
		goto out;
	dom = getenv("VCL_TCA_DOMAIN");
	node = getenv("VCL_TCA_NODE");
	if (dom == NULL || *dom == '\0' || strlen(dom) >= 32 || node == NULL) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_NOT_INIT,
		    "VCL_TCA_DOMAIN (1..31 characters) and VCL_TCA_NODE "
		    "must be set");
		goto out;
	}
	for (p = dom; *p != '\0'; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.')) {
			res = p2_fail(TCA_ERROR_INVALID_VALUE,
			    VCL_TCA_RULE_NOT_INIT, "VCL_TCA_DOMAIN: only "
			    "letters, digits, '_' and '.'");
			goto out;
		}
	}
	errno = 0;
	id = strtol(node, &end, 10);
	if (errno != 0 || end == node || *end != '\0' || id < 0 ||
	    id >= TCA_MAX_NODES) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_NOT_INIT,
		    "VCL_TCA_NODE must be 0..%d", TCA_MAX_NODES - 1);
		goto out;
	}
	p2_timing_defaults(&p2.tm);
	if ((spec = getenv("VCL_TCA_MODEL")) != NULL &&
	    p2_timing_parse(&p2.tm, spec) != 0) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_NOT_INIT,
		    "VCL_TCA_MODEL: bad key or value in '%s'", spec);
		goto out;
	}
	snprintf(p2.domain, sizeof p2.domain, "%s", dom);
	p2.dhash = p2_hash(dom);
	p2.node = (int)id;

	/* A control segment left by a dead node is taken over. */
	p2_shm_name(name, sizeof name, p2.node, -1);
	if ((fd = shm_open(name, O_RDWR, 0600)) != -1) {
		ctl = mmap(NULL, sizeof *ctl, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
		close(fd);
		if (ctl != MAP_FAILED) {
			id = ctl->pid;
			munmap(ctl, sizeof *ctl);
			if (id != getpid() && p2_alive((int32_t)id)) {
				res = p2_fail(TCA_ERROR_INVALID_VALUE,
				    VCL_TCA_RULE_NOT_INIT, "node %d of domain "
				    "%s is held by process %ld", p2.node,
				    p2.domain, id);
				goto out;
			}
		}
		shm_unlink(name);
	}
	if ((p2.ctl = p2_shm_map(name, sizeof *p2.ctl, 1)) == NULL) {
		res = p2_fail(TCA_ERROR_OUT_OF_MEMORY, VCL_TCA_RULE_NOT_INIT,
		    "control segment %s: %s", name, strerror(errno));
		goto out;
	}
	p2.ctl->magic = P2_MAGIC;
	p2.ctl->node = (uint32_t)p2.node;
	atomic_store(&p2.ctl->pid, (int32_t)getpid());
	p2.credit = p2.tm.burst;
	p2.clock_ns = p2_clock_cost();
	/* Segment ids differ between processes that held the same node. */
	p2.next_seg = ((uint32_t)getpid() & 0xffffu) << 16;
	p2.init = 1;
	/* The segments go with the process (or with this library). */
	if (!p2.atexit_set && atexit(p2_atexit) == 0)
		p2.atexit_set = 1;
out:
	pthread_mutex_unlock(&p2.lock);
	return (res);
}

/* tcaFinalize: leave the domain, unlinking this node's segments. */
P2_EXPORT tcaresult
tcaFinalize(void)
{
	char	name[128];
	int	i, owner;

	p2_ok();
	pthread_mutex_lock(&p2.lock);
	if (!p2.init)
		goto out;
	/* A forked child leaves its parent's segments to the parent. */
	owner = atomic_load(&p2.ctl->pid) == (int32_t)getpid();
	for (i = 0; i < P2_MAXSEGS; i++) {
		if (!p2.segs[i].used)
			continue;
		p2_shm_name(name, sizeof name, p2.node, p2.segs[i].id);
		if (owner)
			shm_unlink(name);
		munmap(p2.segs[i].base, p2.segs[i].len);
		p2.segs[i].used = 0;
	}
	for (i = 0; i < P2_MAXMAPS; i++) {
		if (p2.maps[i].used)
			munmap(p2.maps[i].base, p2.maps[i].len);
		p2.maps[i].used = 0;
	}
	for (i = 0; i < TCA_MAX_NODES; i++) {
		if (p2.peer[i] != NULL && i != p2.node)
			munmap(p2.peer[i], sizeof *p2.peer[i]);
		p2.peer[i] = NULL;
	}
	for (i = 0; i < TCA_NCHANNELS; i++) {
		free(p2.ch[i].x);
		free(p2.ch[i].run);
	}
	memset(p2.ch, 0, sizeof p2.ch);
	if (owner) {
		p2_shm_name(name, sizeof name, p2.node, -1);
		shm_unlink(name);
		atomic_store(&p2.ctl->pid, 0);
	}
	munmap(p2.ctl, sizeof *p2.ctl);
	p2.ctl = NULL;
	p2.init = 0;
out:
	pthread_mutex_unlock(&p2.lock);
	return (TCA_SUCCESS);
}

/* tcaGetErrorString: the text of a result code. */
P2_EXPORT const char *
tcaGetErrorString(tcaresult res)
{
	switch (res) {
	case TCA_SUCCESS:
		return ("success");
	case TCA_ERROR_INVALID_VALUE:
		return ("invalid value");
	case TCA_ERROR_OUT_OF_MEMORY:
		return ("out of memory");
	case TCA_ERROR_NOT_SUPPORTED:
		return ("not supported");
	case TCA_ERROR_BUSY:
		return ("DMA channel busy");
	case TCA_ERROR_TIMEOUT:
		return ("wait timed out");
	}
	return ("unknown TCA result");
}

/* Model extension: the rule the calling thread's last call broke. */
P2_EXPORT int
tcaGetLastRule(void)
{
	return (p2_rule);
}

/* Model extension: the detail of the calling thread's last error. */
P2_EXPORT const char *
tcaGetLastErrorDetail(void)
{
	return (p2_detail);
}

/* Model extension: this process's node id, -1 before tcaInit. */
P2_EXPORT int
tcaGetNodeId(void)
{
	return (p2.init ? p2.node : -1);
}

/* tcaMalloc: registered memory in a new shared segment of this node. */
P2_EXPORT tcaresult
tcaMalloc(void **pp, size_t n, tcaMemoryKind kind)
{
	struct p2_seg	*s = NULL;
	char		 name[128];
	tcaresult	 res = TCA_SUCCESS;
	int		 i;

	p2_ok();
	pthread_mutex_lock(&p2.lock);
	if (!p2.init) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_NOT_INIT,
		    "tcaInit has not succeeded");
		goto out;
	}
	if (pp == NULL || n == 0 || n > ((size_t)1 << 40) ||
	    (kind != tcaMemoryCPU && kind != tcaMemoryGPU)) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ARG,
		    "tcaMalloc: NULL pointer, zero or huge size, or bad kind");
		goto out;
	}
	for (i = 0; i < P2_MAXSEGS && s == NULL; i++) {
		if (!p2.segs[i].used)
			s = &p2.segs[i];
	}
	if (s == NULL) {
		res = p2_fail(TCA_ERROR_OUT_OF_MEMORY, VCL_TCA_RULE_ARG,
		    "more than %d registered segments", P2_MAXSEGS);
		goto out;
	}
	n = (n + 4095) & ~(size_t)4095;
	s->id = p2.next_seg++;
	p2_shm_name(name, sizeof name, p2.node, s->id);
	shm_unlink(name);
	if ((s->base = p2_shm_map(name, n, 1)) == NULL) {
		res = p2_fail(TCA_ERROR_OUT_OF_MEMORY, VCL_TCA_RULE_ARG,
		    "segment %s: %s", name, strerror(errno));
		goto out;
	}
	s->used = 1;
	s->len = n;
	s->kind = kind;
	*pp = s->base;
out:
	pthread_mutex_unlock(&p2.lock);
	return (res);
}

/* tcaFree: unregister and unmap a tcaMalloc segment. */
P2_EXPORT tcaresult
tcaFree(void *p, tcaMemoryKind kind)
{
	char		name[128];
	tcaresult	res = TCA_SUCCESS;
	int		i;

	p2_ok();
	pthread_mutex_lock(&p2.lock);
	for (i = 0; i < P2_MAXSEGS; i++) {
		if (p2.segs[i].used && p2.segs[i].base == p)
			break;
	}
	if (!p2.init || i == P2_MAXSEGS) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_UNREGISTERED,
		    "tcaFree of memory tcaMalloc did not give");
		goto out;
	}
	p2_shm_name(name, sizeof name, p2.node, p2.segs[i].id);
	shm_unlink(name);
	munmap(p2.segs[i].base, p2.segs[i].len);
	p2.segs[i].used = 0;
out:
	pthread_mutex_unlock(&p2.lock);
	return (res);
}

/* tcaCreateHandle: a handle on [addr, addr+n) of registered memory. */
P2_EXPORT tcaresult
tcaCreateHandle(tcaHandle *th, void *addr, size_t n, tcaMemoryKind kind)
{
	struct p2_handle	 h;
	unsigned char		*a = addr;
	tcaresult		 res = TCA_SUCCESS;
	int			 i;

	p2_ok();
	pthread_mutex_lock(&p2.lock);
	if (!p2.init) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_NOT_INIT,
		    "tcaInit has not succeeded");
		goto out;
	}
	if (th == NULL || n == 0) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ARG,
		    "tcaCreateHandle: NULL handle or zero size");
		goto out;
	}
	for (i = 0; i < P2_MAXSEGS; i++) {
		if (p2.segs[i].used && a >= p2.segs[i].base &&
		    a < p2.segs[i].base + p2.segs[i].len)
			break;
	}
	if (i == P2_MAXSEGS || n > p2.segs[i].len -
	    (size_t)(a - p2.segs[i].base)) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_UNREGISTERED,
		    "tcaCreateHandle: memory not inside one tcaMalloc region");
		goto out;
	}
	if ((int)kind != p2.segs[i].kind) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ARG,
		    "tcaCreateHandle: kind differs from tcaMalloc's");
		goto out;
	}
	memset(&h, 0, sizeof h);
	h.magic = P2_MAGIC;
	h.domain = p2.dhash;
	h.node = (uint16_t)p2.node;
	h.kind = (uint16_t)kind;
	h.seg = p2.segs[i].id;
	h.off = (uint64_t)(a - p2.segs[i].base);
	h.len = n;
	h.seglen = p2.segs[i].len;
	memset(th, 0, sizeof *th);
	memcpy(th->bytes, &h, sizeof h);
out:
	pthread_mutex_unlock(&p2.lock);
	return (res);
}

/* tcaDestroyHandle: forget a handle (it holds no resources). */
P2_EXPORT tcaresult
tcaDestroyHandle(tcaHandle *th)
{
	p2_ok();
	if (th != NULL)
		memset(th, 0, sizeof *th);
	return (TCA_SUCCESS);
}

/* tcaDescNew: an empty host-side chain. */
P2_EXPORT tcaDesc *
tcaDescNew(void)
{
	p2_ok();
	return (calloc(1, sizeof(tcaDesc)));
}

/* tcaDescFree: free a chain (a loaded copy stays in its channel). */
P2_EXPORT tcaresult
tcaDescFree(tcaDesc *d)
{
	p2_ok();
	if (d != NULL) {
		free(d->x);
		free(d);
	}
	return (TCA_SUCCESS);
}

/* Check one transfer against the board's rules; nothing is appended. */
static tcaresult
p2_xfer_check(const tcaDesc *d, const struct p2_xfer *x)
{
	unsigned char	*sp, *dp;
	tcaresult	 res;
	int		 reg, limit;

	if (!p2.init)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_NOT_INIT,
		    "tcaInit has not succeeded"));
	if ((res = p2_handle_check(&x->src)) != TCA_SUCCESS ||
	    (res = p2_handle_check(&x->dst)) != TCA_SUCCESS)
		return (res);
	if (x->src.node != p2.node)
		return (p2_fail(TCA_ERROR_NOT_SUPPORTED,
		    VCL_TCA_RULE_REMOTE_READ, "source is on node %u, not this "
		    "node %d: DMA writes only, no remote read", x->src.node,
		    p2.node));
	if (x->len == 0 || x->len % 4 != 0)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_LENGTH,
		    "length %llu is not a positive multiple of 4",
		    (unsigned long long)x->len));
	if (((x->src.off + x->soff) & 15) != ((x->dst.off + x->doff) & 15))
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ALIGN,
		    "source and destination disagree in their low 4 address "
		    "bits (%llu, %llu)",
		    (unsigned long long)((x->src.off + x->soff) & 15),
		    (unsigned long long)((x->dst.off + x->doff) & 15)));
	if ((sp = p2_resolve(&x->src, x->soff, x->len, &res)) == NULL ||
	    (dp = p2_resolve(&x->dst, x->doff, x->len, &res)) == NULL)
		return (res);
	if ((x->flags & (tcaDMANotify | tcaDMANotifySelf)) != 0 &&
	    (x->slot < 0 || x->slot >= TCA_NSLOTS))
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_SLOT,
		    "notification slot %d outside 0..%d", x->slot,
		    TCA_NSLOTS - 1));
	reg = d->reg || (x->flags & tcaDMAUseInternal) != 0;
	limit = reg ? TCA_REG_CHAIN_MAX : TCA_CHAIN_MAX;
	if (d->n + 1 > limit)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_CHAIN_LIMIT,
		    "a chain holds at most %d descriptors%s", limit,
		    reg ? " in register mode" : ""));
	return (TCA_SUCCESS);
}

/* Append one checked transfer to a chain. */
static tcaresult
p2_desc_append(tcaDesc *d, const struct p2_xfer *x)
{
	struct p2_xfer	*nx;

	if ((nx = realloc(d->x, (size_t)(d->n + 1) * sizeof *nx)) == NULL)
		return (p2_fail(TCA_ERROR_OUT_OF_MEMORY, VCL_TCA_RULE_ARG,
		    "out of memory"));
	d->x = nx;
	d->x[d->n++] = *x;
	if (x->flags & tcaDMAUseInternal)
		d->reg = 1;
	return (TCA_SUCCESS);
}

/* Fill a transfer from the API's arguments. */
static tcaresult
p2_xfer_make(struct p2_xfer *x, tcaHandle *dst, off_t doff, tcaHandle *src,
    off_t soff, size_t len, int flags, int slot, int tag)
{
	memset(x, 0, sizeof *x);
	if (dst == NULL || src == NULL || doff < 0 || soff < 0)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ARG,
		    "NULL handle or negative offset"));
	memcpy(&x->dst, dst->bytes, sizeof x->dst);
	memcpy(&x->src, src->bytes, sizeof x->src);
	x->doff = (uint64_t)doff;
	x->soff = (uint64_t)soff;
	x->len = len;
	x->flags = flags;
	x->slot = slot;
	x->tag = tag;
	return (TCA_SUCCESS);
}

/* tcaDescSetMemcpy: append one transfer, checked against every rule. */
P2_EXPORT tcaresult
tcaDescSetMemcpy(tcaDesc *d, tcaHandle *dst, off_t doff, tcaHandle *src,
    off_t soff, size_t len, int flags, int slot, int tag)
{
	struct p2_xfer	x;
	tcaresult	res;

	p2_ok();
	if (d == NULL)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ARG,
		    "NULL chain"));
	if ((res = p2_xfer_make(&x, dst, doff, src, soff, len, flags, slot,
	    tag)) != TCA_SUCCESS)
		return (res);
	pthread_mutex_lock(&p2.lock);
	if ((res = p2_xfer_check(d, &x)) == TCA_SUCCESS)
		res = p2_desc_append(d, &x);
	pthread_mutex_unlock(&p2.lock);
	return (res);
}

/*
 * tcaDescSetMemcpy2D: a block-stride transfer, one descriptor per row; all
 * rows are checked before any is appended. Only the last row notifies.
 */
P2_EXPORT tcaresult
tcaDescSetMemcpy2D(tcaDesc *d, tcaHandle *dst, off_t doff, size_t dpitch,
    tcaHandle *src, off_t soff, size_t spitch, size_t width, size_t count,
    int flags, int slot, int tag)
{
	struct p2_xfer	 x;
	tcaDesc		 tmp;
	tcaresult	 res = TCA_SUCCESS;
	size_t		 i;

	p2_ok();
	if (d == NULL || count == 0 || count > TCA_CHAIN_MAX ||
	    dpitch > (size_t)1 << 40 || spitch > (size_t)1 << 40)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ARG,
		    "NULL chain, or count or pitch out of range"));
	pthread_mutex_lock(&p2.lock);
	tmp = *d;
	for (i = 0; i < count && res == TCA_SUCCESS; i++) {
		res = p2_xfer_make(&x, dst, doff + (off_t)(i * dpitch), src,
		    soff + (off_t)(i * spitch), width, i + 1 == count ? flags :
		    flags & ~(tcaDMANotify | tcaDMANotifySelf), slot, tag);
		if (res == TCA_SUCCESS)
			res = p2_xfer_check(&tmp, &x);
		tmp.n++;
		tmp.reg |= (flags & tcaDMAUseInternal) != 0;
	}
	for (i = 0; i < count && res == TCA_SUCCESS; i++) {
		p2_xfer_make(&x, dst, doff + (off_t)(i * dpitch), src,
		    soff + (off_t)(i * spitch), width, i + 1 == count ? flags :
		    flags & ~(tcaDMANotify | tcaDMANotifySelf), slot, tag);
		res = p2_desc_append(d, &x);
	}
	pthread_mutex_unlock(&p2.lock);
	return (res);
}

/* Check a channel number. */
static tcaresult
p2_chan_check(int ch)
{
	if (!p2.init)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_NOT_INIT,
		    "tcaInit has not succeeded"));
	if (ch < 0 || ch >= TCA_NCHANNELS)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_CHANNEL,
		    "DMA channel %d outside 0..%d", ch, TCA_NCHANNELS - 1));
	return (TCA_SUCCESS);
}

/* tcaDescSet: load a copy of a chain into a channel. */
P2_EXPORT tcaresult
tcaDescSet(tcaDesc *d, int ch)
{
	struct p2_xfer	*x = NULL;
	tcaresult	 res;

	p2_ok();
	pthread_mutex_lock(&p2.lock);
	if ((res = p2_chan_check(ch)) != TCA_SUCCESS)
		goto out;
	if (d == NULL || d->n == 0) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_NO_CHAIN,
		    "empty chain");
		goto out;
	}
	if (p2.ch[ch].unconfirmed) {
		res = p2_fail(TCA_ERROR_BUSY, VCL_TCA_RULE_BUSY, "channel %d "
		    "still running: confirm it idle (tcaWaitDMAC) first", ch);
		goto out;
	}
	if ((x = malloc((size_t)d->n * sizeof *x)) == NULL) {
		res = p2_fail(TCA_ERROR_OUT_OF_MEMORY, VCL_TCA_RULE_ARG,
		    "out of memory");
		goto out;
	}
	memcpy(x, d->x, (size_t)d->n * sizeof *x);
	free(p2.ch[ch].x);
	p2.ch[ch].x = x;
	p2.ch[ch].n = d->n;
	p2.ch[ch].reg = d->reg;
out:
	pthread_mutex_unlock(&p2.lock);
	return (res);
}

/*
 * Run the fluid model of this node's channels from p2.sim_ns to until. With
 * commit 0 the state is left as it was and each running descriptor's end
 * time is written to ends[ch][i] instead (until = +inf: to the end).
 */
static void
p2_sim(double until, int commit, double *ends[TCA_NCHANNELS])
{
	double	 rem[TCA_NCHANNELS][2], rate[TCA_NCHANNELS] = { 0 }, t, dt, sumr;
	double	 credit, tmp;
	int	 cur[TCA_NCHANNELS], act[TCA_NCHANNELS], c, k;

	t = p2.sim_ns;
	credit = p2.credit;
	for (c = 0; c < TCA_NCHANNELS; c++) {
		cur[c] = p2.ch[c].cur;
		rem[c][0] = cur[c] < p2.ch[c].nrun ?
		    p2.ch[c].run[cur[c]].rem : 0;
	}
	for (;;) {
		k = 0;
		sumr = 0;
		dt = until - t;
		for (c = 0; c < TCA_NCHANNELS; c++) {
			act[c] = 0;
			if (cur[c] >= p2.ch[c].nrun)
				continue;
			if (p2.ch[c].data_start > t) {
				if (p2.ch[c].data_start - t < dt)
					dt = p2.ch[c].data_start - t;
				continue;
			}
			act[c] = 1;
			k++;
			sumr += p2.ch[c].rate;
		}
		if (k <= 1)
			credit = p2.tm.burst;
		for (c = 0; c < TCA_NCHANNELS; c++) {
			if (!act[c])
				continue;
			rate[c] = p2.ch[c].rate;
			if (k > 1 && credit <= 0)
				rate[c] *= p2.tm.sat / sumr;
			if ((tmp = rem[c][0] / rate[c]) < dt)
				dt = tmp;
		}
		if (k > 1 && credit > 0 && credit / sumr < dt)
			dt = credit / sumr;
		if (k == 0 && dt == until - t) {
			if (until < 1e299)
				t = until;
			break;
		}
		if (dt < 0)
			dt = 0;
		t += dt;
		if (k > 1 && credit > 0)
			credit -= sumr * dt;
		for (c = 0; c < TCA_NCHANNELS; c++) {
			if (!act[c])
				continue;
			rem[c][0] -= rate[c] * dt;
			if (rem[c][0] > 1e-6)
				continue;
			if (ends != NULL && ends[c] != NULL)
				ends[c][cur[c]] = t;
			cur[c]++;
			rem[c][0] = cur[c] < p2.ch[c].nrun ?
			    p2.ch[c].run[cur[c]].rem : 0;
		}
		if (t >= until)
			break;
	}
	if (commit) {
		p2.sim_ns = t;
		p2.credit = credit;
		for (c = 0; c < TCA_NCHANNELS; c++) {
			p2.ch[c].cur = cur[c];
			if (cur[c] < p2.ch[c].nrun)
				p2.ch[c].run[cur[c]].rem = rem[c][0];
		}
	}
}

/* Recompute every running descriptor's visible time and each channel's idle. */
static void
p2_retime(void)
{
	double		*ends[TCA_NCHANNELS], last;
	struct p2_rdesc	*r;
	int		 c, i, j;

	for (c = 0; c < TCA_NCHANNELS; c++) {
		ends[c] = NULL;
		if (p2.ch[c].cur < p2.ch[c].nrun)
			ends[c] = calloc((size_t)p2.ch[c].nrun, sizeof(double));
	}
	p2_sim(1e300, 0, ends);
	for (c = 0; c < TCA_NCHANNELS; c++) {
		if (ends[c] == NULL)
			continue;
		last = 0;
		for (i = p2.ch[c].cur; i < p2.ch[c].nrun; i++) {
			r = &p2.ch[c].run[i];
			for (j = 0; j < 2; j++) {
				if (r->note[j] != NULL)
					atomic_store(&r->note[j]->visible_ns,
					    (uint64_t)(ends[c][i] +
					    (j == 0 ? r->extra_ns :
					    p2.tm.notify_ns)));
			}
			last = ends[c][i];
		}
		atomic_store(&p2.ch[c].idle_ns, (uint64_t)(last +
		    p2.tm.notify_ns));
		free(ends[c]);
	}
}

/* A free record of the ring from this node in a node's control segment. */
static struct p2_note *
p2_note_free(struct p2_ctl *ctl, int skip)
{
	struct p2_note	*r = ctl->ring[p2.node];
	int		 i;

	for (i = 0; i < P2_RING; i++) {
		if (atomic_load(&r[i].state) != 0 || skip-- != 0)
			continue;
		if (atomic_load(&ctl->hw[p2.node]) < (uint32_t)i + 1)
			atomic_store(&ctl->hw[p2.node], (uint32_t)i + 1);
		return (&r[i]);
	}
	return (NULL);
}

/*
 * tcaStartDMADesc: run the chain loaded in a channel. Every descriptor is
 * checked again (memory may have been freed since tcaDescSetMemcpy) and
 * every notification record found before the first byte moves.
 */
P2_EXPORT tcaresult
tcaStartDMADesc(int ch)
{
	struct p2_chan	*c = &p2.ch[ch < 0 || ch >= TCA_NCHANNELS ? 0 : ch];
	struct p2_rdesc	*run = NULL;
	struct p2_ctl	*ctl;
	struct p2_note	*nr;
	unsigned char	**sp = NULL, **dp = NULL;
	double		 now = (double)p2_now();	/* the doorbell */
	tcaresult	 res;
	int		 i, j, need[TCA_MAX_NODES], others = 0, node;

	p2_ok();
	pthread_mutex_lock(&p2.lock);
	if ((res = p2_chan_check(ch)) != TCA_SUCCESS)
		goto out;
	if (c->n == 0) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_NO_CHAIN,
		    "no chain loaded in channel %d (tcaDescSet)", ch);
		goto out;
	}
	if (c->unconfirmed) {
		res = p2_fail(TCA_ERROR_BUSY, VCL_TCA_RULE_BUSY, "channel %d "
		    "restarted before its completion was confirmed "
		    "(tcaWaitDMAC)", ch);
		goto out;
	}
	run = calloc((size_t)c->n, sizeof *run);
	sp = calloc((size_t)c->n, sizeof *sp);
	dp = calloc((size_t)c->n, sizeof *dp);
	if (run == NULL || sp == NULL || dp == NULL) {
		res = p2_fail(TCA_ERROR_OUT_OF_MEMORY, VCL_TCA_RULE_ARG,
		    "out of memory");
		goto out;
	}
	memset(need, 0, sizeof need);
	for (i = 0; i < c->n; i++) {
		if ((sp[i] = p2_resolve(&c->x[i].src, c->x[i].soff,
		    c->x[i].len, &res)) == NULL ||
		    (dp[i] = p2_resolve(&c->x[i].dst, c->x[i].doff,
		    c->x[i].len, &res)) == NULL)
			goto out;
		if (c->x[i].flags & tcaDMANotify)
			need[c->x[i].dst.node]++;
		if (c->x[i].flags & tcaDMANotifySelf)
			need[p2.node]++;
	}
	for (node = 0; node < TCA_MAX_NODES; node++) {
		if (need[node] == 0)
			continue;
		if ((ctl = p2_peer_ctl(node)) == NULL || !p2_live(node, ctl)) {
			res = p2_fail(TCA_ERROR_INVALID_VALUE,
			    VCL_TCA_RULE_PEER_GONE, "node %d to notify is not "
			    "in the domain", node);
			goto out;
		}
		if (p2_note_free(ctl, need[node] - 1) == NULL) {
			res = p2_fail(TCA_ERROR_BUSY, VCL_TCA_RULE_NOTIFY_FULL,
			    "node %d's notification queue is full", node);
			goto out;
		}
	}

	/* Checked: the timing, then the bytes in chain order, then notes. */
	/*
	 * Back-to-back starts (a split over channels): the time the model
	 * spent inside the previous start is the host's, not the board's.
	 */
	if (ch != p2.last_ch && now - p2.last_exit < 10000 &&
	    p2.last_exit >= p2.last_door)
		now -= p2.last_exit - p2.last_door;
	p2.last_ch = ch;
	if (now < p2.sim_ns)
		now = p2.sim_ns;
	p2.last_door = now;
	p2_sim(now, 1, NULL);
	for (i = 0; i < TCA_NCHANNELS; i++) {
		if (i != ch && p2.ch[i].cur < p2.ch[i].nrun)
			others = 1;
	}
	free(c->run);
	c->run = run;
	c->nrun = c->n;
	c->cur = 0;
	c->rate = c->x[0].src.kind == tcaMemoryGPU ? p2.tm.gpu[ch] :
	    p2.tm.cpu[ch];
	c->data_start = now + p2.tm.kick_ns + (c->reg ? 0 : p2.tm.fetch_ns) +
	    p2.tm.read_ns + (others ? p2.tm.mc_ns : 0);
	for (i = 0; i < c->n; i++) {
		memmove(dp[i], sp[i], c->x[i].len);
		run[i].rem = (double)c->x[i].len + p2.tm.desc_ns * c->rate;
		run[i].extra_ns = p2.tm.hop_ns * p2_hops(c->x[i].dst.node) +
		    p2.tm.notify_ns;
		for (j = 0; j < 2; j++) {
			if (!(c->x[i].flags & (j == 0 ? tcaDMANotify :
			    tcaDMANotifySelf)))
				continue;
			node = j == 0 ? c->x[i].dst.node : p2.node;
			nr = p2_note_free(p2_peer_ctl(node), 0);
			nr->slot = c->x[i].slot;
			nr->tag = c->x[i].tag;
			nr->seq = ++p2.seq;
			atomic_store(&nr->visible_ns, UINT64_MAX);
			atomic_store(&nr->state, 1);
			run[i].note[j] = nr;
		}
	}
	run = NULL;
	c->unconfirmed = 1;
	c->door_ns = (uint64_t)now;
	p2_retime();
	p2.last_exit = (double)p2_now();
out:
	pthread_mutex_unlock(&p2.lock);
	free(run);
	free(sp);
	free(dp);
	return (res);
}

/* The end of a wait's bound. */
static uint64_t
p2_deadline(void)
{
	return (p2_now() + (uint64_t)(p2.tm.wait_ms * 1e6));
}

/* tcaTestDMAC (model extension): TCA_SUCCESS once a channel is idle. */
P2_EXPORT tcaresult
tcaTestDMAC(int ch)
{
	tcaresult	res;

	p2_ok();
	pthread_mutex_lock(&p2.lock);
	if ((res = p2_chan_check(ch)) != TCA_SUCCESS)
		goto out;
	if (p2.ch[ch].unconfirmed && p2_now() < atomic_load(&p2.ch[ch].idle_ns))
		res = TCA_ERROR_BUSY;
	else
		p2.ch[ch].unconfirmed = 0;
out:
	pthread_mutex_unlock(&p2.lock);
	return (res);
}

/* tcaWaitDMAC: wait until a channel is idle, confirming its completion. */
P2_EXPORT tcaresult
tcaWaitDMAC(int ch)
{
	uint64_t	until, end;
	tcaresult	res;

	p2_ok();
	pthread_mutex_lock(&p2.lock);
	res = p2_chan_check(ch);
	pthread_mutex_unlock(&p2.lock);
	if (res != TCA_SUCCESS)
		return (res);
	end = p2_deadline();
	for (;;) {
		until = atomic_load(&p2.ch[ch].idle_ns);
		if (until > end)
			return (p2_fail(TCA_ERROR_TIMEOUT, VCL_TCA_RULE_TIMEOUT,
			    "channel %d busy beyond the %.0f ms bound", ch,
			    p2.tm.wait_ms));
		p2_spin_until(until);
		pthread_mutex_lock(&p2.lock);
		if (atomic_load(&p2.ch[ch].idle_ns) <= p2_now()) {
			p2.ch[ch].unconfirmed = 0;
			pthread_mutex_unlock(&p2.lock);
			return (TCA_SUCCESS);
		}
		pthread_mutex_unlock(&p2.lock);
	}
}

/*
 * tcaWaitDMARecvDesc: wait for notification (slot, tag) from the node that
 * owns h, oldest first. Bounded by wait_ms; ends early when that node has
 * exited and posted no such notification.
 */
P2_EXPORT tcaresult
tcaWaitDMARecvDesc(tcaHandle *th, int slot, int tag)
{
	struct p2_handle	 h;
	struct p2_note		*r, *best;
	struct p2_ctl		*ctl;
	uint64_t		 end, vis, now, start;
	uint32_t		 one, hw;
	tcaresult		 res;
	int			 i, src;

	p2_ok();
	if (th == NULL)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ARG,
		    "NULL handle"));
	memcpy(&h, th->bytes, sizeof h);
	pthread_mutex_lock(&p2.lock);
	res = p2.init ? p2_handle_check(&h) : p2_fail(TCA_ERROR_INVALID_VALUE,
	    VCL_TCA_RULE_NOT_INIT, "tcaInit has not succeeded");
	pthread_mutex_unlock(&p2.lock);
	if (res != TCA_SUCCESS)
		return (res);
	if (slot < 0 || slot >= TCA_NSLOTS)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_SLOT,
		    "notification slot %d outside 0..%d", slot,
		    TCA_NSLOTS - 1));
	src = h.node;
	r = p2.ctl->ring[src];
	start = p2_now();
	end = p2_deadline();
	for (;;) {
		best = NULL;
		hw = atomic_load(&p2.ctl->hw[src]);
		for (i = 0; i < (int)hw && i < P2_RING; i++) {
			if (atomic_load(&r[i].state) != 1 ||
			    r[i].slot != slot || r[i].tag != tag)
				continue;
			if (best == NULL || r[i].seq < best->seq)
				best = &r[i];
		}
		now = p2_now();
		if (best != NULL) {
			vis = atomic_load(&best->visible_ns);
			if (vis <= now) {
				one = 1;
				if (atomic_compare_exchange_strong(&best->state,
				    &one, 0)) {
					p2_seen_ns = vis;
					return (TCA_SUCCESS);
				}
				continue;
			}
			if (vis <= end) {
				p2_spin_until(vis);
				continue;
			}
		} else if (src != p2.node) {
			pthread_mutex_lock(&p2.lock);
			ctl = p2_peer_ctl(src);
			if (ctl != NULL)
				p2.live_ns[src] = 0;
			i = ctl == NULL || !p2_live(src, ctl);
			pthread_mutex_unlock(&p2.lock);
			if (i)
				return (p2_fail(TCA_ERROR_TIMEOUT,
				    VCL_TCA_RULE_PEER_GONE, "node %d is gone; "
				    "no notification (%d, %d) from it", src,
				    slot, tag));
		}
		if (now >= end)
			return (p2_fail(TCA_ERROR_TIMEOUT, VCL_TCA_RULE_TIMEOUT,
			    "no notification (%d, %d) from node %d within "
			    "%.0f ms", slot, tag, src, p2.tm.wait_ms));
		/* Spin a while (a notification is microseconds away), then
		 * let others run. */
		if (best == NULL && now - start > 50000)
			sched_yield();
	}
}

/* tcaSetPIORegion: a PIO window on [off, off+len) of a (remote) handle. */
P2_EXPORT tcaresult
tcaSetPIORegion(tcaPIO *tp, tcaHandle *th, off_t off, size_t len)
{
	struct p2_handle	 h;
	struct p2_pio		 pio;
	unsigned char		*base;
	tcaresult		 res;

	p2_ok();
	if (tp == NULL || th == NULL || off < 0)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ARG,
		    "NULL argument or negative offset"));
	memcpy(&h, th->bytes, sizeof h);
	pthread_mutex_lock(&p2.lock);
	if (!p2.init) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_NOT_INIT,
		    "tcaInit has not succeeded");
		goto out;
	}
	if (len == 0 || len % 4 != 0 || off % 4 != 0) {
		res = p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_PIO,
		    "PIO region offset and length must be multiples of 4");
		goto out;
	}
	if ((base = p2_resolve(&h, (uint64_t)off, len, &res)) == NULL)
		goto out;
	memset(tp, 0, sizeof *tp);
	pio.magic = P2_MAGIC;
	pio.pad = 0;
	pio.base = base;
	pio.len = len;
	memcpy(tp->bytes, &pio, sizeof pio);
out:
	pthread_mutex_unlock(&p2.lock);
	return (res);
}

/*
 * tcaSendPIO: CPU stores into a PIO region. The first store after a commit
 * waits out the PIO latency so that the receiver sees it no earlier than the
 * board would show it (the sender is held that long too: a model's cost).
 */
P2_EXPORT tcaresult
tcaSendPIO(tcaPIO *tp, off_t off, const void *src, size_t len)
{
	struct p2_pio		 pio;
	volatile uint32_t	*d;
	const unsigned char	*s = src;
	uint32_t		 w;
	size_t			 i;

	uint64_t		 t0 = p2_now();

	p2_ok();
	if (tp == NULL || src == NULL)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_ARG,
		    "NULL argument"));
	memcpy(&pio, tp->bytes, sizeof pio);
	if (pio.magic != P2_MAGIC)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_PIO,
		    "PIO region not set (tcaSetPIORegion)"));
	if (off < 0 || len == 0 || len % 4 != 0 || off % 4 != 0 ||
	    (uint64_t)off > pio.len || len > pio.len - (uint64_t)off)
		return (p2_fail(TCA_ERROR_INVALID_VALUE, VCL_TCA_RULE_PIO,
		    "PIO of %zu bytes at %lld: outside the %llu-byte region "
		    "or not 4-byte words", len, (long long)off,
		    (unsigned long long)pio.len));
	/* From the call's entry, less the clock reads the caller's own
	 * timing and this one cost. */
	if (!p2.pio_armed) {
		p2.pio_t0 = t0;
		p2.pio_vis = t0 + (uint64_t)p2.tm.pio_ns;
		p2_spin_until(p2.pio_vis - p2.clock_ns);
		p2.pio_armed = 1;
	}
	d = (volatile uint32_t *)(void *)(pio.base + off);
	for (i = 0; i < len / 4; i++) {
		memcpy(&w, s + i * 4, 4);
		d[i] = w;
	}
	return (TCA_SUCCESS);
}

/* tcaSendPIOCommit: make the stores so far visible, in order. */
P2_EXPORT tcaresult
tcaSendPIOCommit(void)
{
	p2_ok();
	atomic_thread_fence(memory_order_seq_cst);
	p2.pio_armed = 0;
	return (TCA_SUCCESS);
}

/*
 * tcaModelTime (model extension): the model's own timestamps (CLOCK_MONOTONIC
 * ns) for measuring it without the host's timing noise. what: 0 the last
 * start's doorbell on channel ch, 1 when that run went idle, 2 when the
 * calling thread's last received notification became visible, 3 the entry of
 * the last PIO's first store, 4 when it became visible.
 */
P2_EXPORT uint64_t
tcaModelTime(int what, int ch)
{
	uint64_t	t = 0;

	pthread_mutex_lock(&p2.lock);
	if (ch < 0 || ch >= TCA_NCHANNELS)
		ch = 0;
	switch (what) {
	case 0:
		t = p2.ch[ch].door_ns;
		break;
	case 1:
		t = atomic_load(&p2.ch[ch].idle_ns);
		break;
	case 2:
		t = p2_seen_ns;
		break;
	case 3:
		t = p2.pio_t0;
		break;
	case 4:
		t = p2.pio_vis;
		break;
	}
	pthread_mutex_unlock(&p2.lock);
	return (t);
}
