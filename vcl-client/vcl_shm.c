/*
 * vcl_shm.c - a node's ring of shared slots (ShmRing, docs/protocol.md).
 *
 * When the server's Welcome offers rings, libvcl makes one per node: a
 * memfd sealed against shrinking and growing, a header page (magic and
 * the session's greeting nonce), then VCL_SHM_NSLOTS slots. A large write
 * goes as chunks: each is copied into a free slot and named by a
 * WriteBuffer with no bytes; the server writes the device from the slot
 * and replies once done, which frees the slot. So the copy of chunk k+1
 * here overlaps the server's copy of chunk k. A read goes the other way,
 * blocking or not: the server reads each chunk into a slot, its reply's
 * handler copies it out. Slots and their owners live under the node's
 * lock.
 * It is one of libvcl's ways of moving bytes (vcl_bulk.h): vcl_bulk_shm.
 */
#include <sys/mman.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vcl_bulk.h"
#include "vcl_conn.h"
#include "vcl_context.h"
#include "vcl_event.h"
#include "vcl_log.h"
#include "vcl_object.h"
#include "../proto/vcl_shm.h"

#define VCL_SHM_MIN	(64u << 10)	/* smaller transfers go in band */
#define VCL_SHM_NSLOTS	4
#define VCL_SHM_SLOT	(4u << 20)
/*
 * How long a write's chunk, or a non-blocking read's, waits for a slot
 * before it and the rest go in band (VCL_SHM_WAIT_MS, 1 to 600000: with
 * more, a transfer a slow or loaded server holds up stays shared).
 */
#define VCL_SHM_WAIT_MS	1000
#define VCL_SHM_WAIT_MAX	600000

struct vcl_shm_nb;

/* What a slot carries now. */
struct vcl_shm_tok {
	struct vcl_node		*n;
	unsigned		 slot;
	void			*dst;		/* a read's: copy out here */
	size_t			 len;
	struct vcl_shm_nb	*nb;		/* a read's */
};

struct vcl_shm {
	uint8_t			*base;
	size_t			 size;
	int			 fd;
	uint64_t		 busy;		/* under the node's lock */
	int			 wait_ms;	/* VCL_SHM_WAIT_MS */
	struct vcl_shm_tok	 tok[VCL_SHM_NSLOTS];
};

/*
 * Copying a chunk into or out of its slot is this side's part of a
 * transfer through the ring, and one core's memcpy (7-8 GB/s on the H100
 * host) is slower than a runtime's DMA to or from a pinned slot. So a
 * large chunk is split among the thread that copies it (the writer, or
 * the one that lands a read's reply) and helpers: VCL_SHM_COPY_THREADS
 * copiers in all (default half the online CPUs, at most 4; 1: no
 * helper). The helpers start at the first large copy, block every
 * signal and serve the whole process; a copy that finds them busy
 * (another node's read) or runs in a forked child goes alone.
 */
#define VCL_SHM_COPIERS_MAX	8
#define VCL_SHM_COPY_PART	(512u << 10)	/* less: not worth a wakeup */

static struct {
	pthread_mutex_t		 busy;		/* one copy uses the helpers */
	pthread_mutex_t		 lock;		/* the job below */
	pthread_cond_t		 go, done;
	pid_t			 pid;		/* whose helpers they are */
	int			 helpers;
	uint8_t			*dst;
	const uint8_t		*src;
	size_t			 len, part;
	unsigned		 nparts, next, left;
} vcl_shm_cp = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL, NULL,
    0, 0, 0, 0, 0 };
static pthread_once_t	vcl_shm_cp_once = PTHREAD_ONCE_INIT;

/* Copy part i of the job. */
static void
vcl_shm_copy_part(unsigned i)
{
	size_t	off = (size_t)i * vcl_shm_cp.part;
	size_t	n = vcl_shm_cp.len - off < vcl_shm_cp.part ?
		    vcl_shm_cp.len - off : vcl_shm_cp.part;

	memcpy(vcl_shm_cp.dst + off, vcl_shm_cp.src + off, n);
}

/* A helper: copies parts of each job as they come, for ever. */
static void *
vcl_shm_copier(void *arg)
{
	unsigned	i;

	(void)arg;
	pthread_mutex_lock(&vcl_shm_cp.lock);
	for (;;) {
		while (vcl_shm_cp.next >= vcl_shm_cp.nparts)
			pthread_cond_wait(&vcl_shm_cp.go, &vcl_shm_cp.lock);
		i = vcl_shm_cp.next++;
		pthread_mutex_unlock(&vcl_shm_cp.lock);
		vcl_shm_copy_part(i);
		pthread_mutex_lock(&vcl_shm_cp.lock);
		if (--vcl_shm_cp.left == 0)
			pthread_cond_signal(&vcl_shm_cp.done);
	}
	return (NULL);
}

/* Start the helpers (once per process). */
static void
vcl_shm_copiers_start(void)
{
	const char	*e = getenv("VCL_SHM_COPY_THREADS");
	sigset_t	 all, old;
	pthread_attr_t	 attr;
	pthread_t	 t;
	long		 n;

	if (e != NULL && *e != '\0')
		n = strtol(e, NULL, 10);
	else if ((n = sysconf(_SC_NPROCESSORS_ONLN) / 2) > 4)
		n = 4;
	if (n < 1)
		n = 1;
	if (n > VCL_SHM_COPIERS_MAX)
		n = VCL_SHM_COPIERS_MAX;
	vcl_shm_cp.pid = getpid();
	if (n == 1 || pthread_attr_init(&attr) != 0)
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (vcl_shm_cp.helpers < n - 1 &&
	    pthread_create(&t, &attr, vcl_shm_copier, NULL) == 0)
		vcl_shm_cp.helpers++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	vcl_log_info("shared ring: %d threads copy reads out",
	    vcl_shm_cp.helpers + 1);
}

/* Copy len bytes into or out of a slot, with the helpers when free. */
static void
vcl_shm_copy(void *dst, const void *src, size_t len)
{
	size_t		 parts;
	unsigned	 i;

	pthread_once(&vcl_shm_cp_once, vcl_shm_copiers_start);
	if (len < 2 * VCL_SHM_COPY_PART || vcl_shm_cp.helpers == 0 ||
	    vcl_shm_cp.pid != getpid() ||
	    pthread_mutex_trylock(&vcl_shm_cp.busy) != 0) {
		memcpy(dst, src, len);
		return;
	}
	parts = len / VCL_SHM_COPY_PART;
	if (parts > (size_t)vcl_shm_cp.helpers + 1)
		parts = (size_t)vcl_shm_cp.helpers + 1;
	pthread_mutex_lock(&vcl_shm_cp.lock);
	vcl_shm_cp.dst = dst;
	vcl_shm_cp.src = src;
	vcl_shm_cp.len = len;
	/* Parts of whole cache lines. */
	vcl_shm_cp.part = ((len + parts - 1) / parts + 63) & ~(size_t)63;
	vcl_shm_cp.nparts = (unsigned)((len + vcl_shm_cp.part - 1) /
	    vcl_shm_cp.part);
	vcl_shm_cp.left = vcl_shm_cp.nparts;
	vcl_shm_cp.next = 0;
	pthread_cond_broadcast(&vcl_shm_cp.go);
	while (vcl_shm_cp.next < vcl_shm_cp.nparts) {
		i = vcl_shm_cp.next++;
		pthread_mutex_unlock(&vcl_shm_cp.lock);
		vcl_shm_copy_part(i);
		pthread_mutex_lock(&vcl_shm_cp.lock);
		vcl_shm_cp.left--;
	}
	while (vcl_shm_cp.left > 0)
		pthread_cond_wait(&vcl_shm_cp.done, &vcl_shm_cp.lock);
	pthread_mutex_unlock(&vcl_shm_cp.lock);
	pthread_mutex_unlock(&vcl_shm_cp.busy);
}

/*
 * A read's: its queue (its inflight counts each part out), its event
 * (held until every part is in), the parts still out (ring chunks, the
 * rest in band, and the call's own until it is done with them), the
 * first failure and whether it is the queue's to tell (quiet: no event,
 * and the call did not return it) (under the node's lock).
 */
struct vcl_shm_nb {
	struct vcl_node		*n;
	cl_command_queue	 q;
	cl_event		 ev;
	unsigned		 left;
	cl_int			 err;
	int			 quiet;
};

/* The address of a slot. */
static uint8_t *
vcl_shm_slot(struct vcl_shm *r, unsigned i)
{
	return (r->base + VCL_SHM_PAGE + (size_t)i * VCL_SHM_SLOT);
}

/* Make a sealed ring naming the session (nonce); NULL on any failure. */
static struct vcl_shm *
vcl_shm_make(const uint8_t *nonce, size_t nonce_len)
{
	struct vcl_shm	*r;
	size_t		 size = VCL_SHM_PAGE + VCL_SHM_NSLOTS *
			    (size_t)VCL_SHM_SLOT;
	unsigned	 i;

	if ((r = calloc(1, sizeof *r)) == NULL)
		return (NULL);
	r->size = size;
	r->base = MAP_FAILED;
	/* Allocated now: no later touch of a slot can fault for want of it. */
	if ((r->fd = memfd_create("vcl-ring", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1 || ftruncate(r->fd, (off_t)size) != 0 ||
	    fallocate(r->fd, 0, 0, (off_t)size) != 0 ||
	    fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_SEAL) != 0 || (r->base = mmap(NULL, size, PROT_READ |
	    PROT_WRITE, MAP_SHARED, r->fd, 0)) == MAP_FAILED) {
		vcl_log_info("no shared ring: %s", strerror(errno));
		if (r->fd != -1)
			close(r->fd);
		free(r);
		return (NULL);
	}
	memcpy(r->base, VCL_SHM_MAGIC, sizeof VCL_SHM_MAGIC);
	memcpy(r->base + sizeof VCL_SHM_MAGIC, nonce, nonce_len);
	for (i = 0; i < VCL_SHM_NSLOTS; i++)
		r->tok[i].slot = i;
	return (r);
}

/* Unmap and close a ring. */
static void
vcl_shm_unmake(struct vcl_shm *r)
{
	munmap(r->base, r->size);
	close(r->fd);
	free(r);
}

/*
 * Offer the node a ring if its Welcome takes one and VCL_TRANSPORT is not
 * tcp; a ring it refuses (another host, another user) leaves bulk in band.
 * Tried once per node, at its first large transfer, so a process that
 * never moves much holds no ring.
 */
static void
vcl_shm_attach(struct vcl_node *n)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__ShmRing	 m = VCL__SHM_RING__INIT;
	const char	*e = getenv("VCL_TRANSPORT");
	const char	*w = getenv("VCL_SHM_WAIT_MS");
	struct vcl_shm	*r;
	unsigned	 i;
	long		 ms;

	if (atomic_exchange(&n->shm_tried, 1) != 0 ||
	    (e != NULL && strcmp(e, "tcp") == 0) || n->welcome == NULL ||
	    !n->welcome->welcome->has_shm_ring_max ||
	    n->welcome->welcome->shm_ring_max < VCL_SHM_PAGE +
	    VCL_SHM_NSLOTS * (uint64_t)VCL_SHM_SLOT || n->nonce_len == 0 ||
	    (r = vcl_shm_make(n->nonce, n->nonce_len)) == NULL)
		return;
	for (i = 0; i < VCL_SHM_NSLOTS; i++)
		r->tok[i].n = n;
	r->wait_ms = VCL_SHM_WAIT_MS;
	if (w != NULL && *w != '\0' && (ms = strtol(w, NULL, 10)) >= 1 &&
	    ms <= VCL_SHM_WAIT_MAX)
		r->wait_ms = (int)ms;
	m.pid = (uint32_t)getpid();
	m.fd = (uint32_t)r->fd;
	m.slots = VCL_SHM_NSLOTS;
	m.slot_size = VCL_SHM_SLOT;
	req.call_case = VCL__REQUEST__CALL_SHM_RING;
	req.shm_ring = &m;
	if (vcl_node_call(n, &req, NULL, 0, NULL, 0, NULL) != CL_SUCCESS) {
		vcl_log_info("node %s: no shared ring, bulk in band", n->addr);
		vcl_shm_unmake(r);
		return;
	}
	pthread_mutex_lock(&n->lock);
	n->shm = r;
	n->transport = "shm";
	pthread_mutex_unlock(&n->lock);
	vcl_log_info("node %s: bulk through a shared ring", n->addr);
}

/*
 * Whether a transfer of size bytes on q goes through the ring (making it
 * at the first that could).
 */
static int
vcl_shm_usable(struct vcl_node *n, cl_command_queue q, size_t size)
{
	int	yes;

	/* Chunks run in queue order; the event is the last one's. */
	if (size < VCL_SHM_MIN || (q->props &
	    (CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
	    CL_QUEUE_PROFILING_ENABLE)))
		return (0);
	if (atomic_load(&n->shm_tried) == 0)
		vcl_shm_attach(n);
	pthread_mutex_lock(&n->lock);
	yes = n->shm != NULL;
	pthread_mutex_unlock(&n->lock);
	return (yes);
}

/* Has a slot come free (or the node failed)? Under lock. */
static int
vcl_shm_free_slot(struct vcl_node *n, void *arg)
{
	(void)arg;
	return (n->failed || n->dead ||
	    n->shm->busy != (1ull << VCL_SHM_NSLOTS) - 1);
}

/* Take a free slot under lock; -1 if none. */
static int
vcl_shm_take_locked(struct vcl_node *n)
{
	unsigned	 i;

	for (i = 0; i < VCL_SHM_NSLOTS; i++)
		if (!(n->shm->busy & (1ull << i))) {
			n->shm->busy |= 1ull << i;
			return ((int)i);
		}
	return (-1);
}

/*
 * A free slot: waits for one (reading the socket if nobody does), or, with
 * wait_ms > 0, for at most that long. -1: the node failed or time is up.
 */
static int
vcl_shm_take(struct vcl_node *n, int wait_ms)
{
	struct timespec	 ts;
	int		 i = -1;

	while (wait_ms == 0) {
		vcl_node_wait(n, vcl_shm_free_slot, NULL);
		pthread_mutex_lock(&n->lock);
		if (!n->dead && !n->failed)
			i = vcl_shm_take_locked(n);
		pthread_mutex_unlock(&n->lock);
		if (i != -1 || n->dead || n->failed)
			return (i);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += wait_ms / 1000;
	ts.tv_nsec += (long)(wait_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&n->lock);
	while (!n->dead && (i = vcl_shm_take_locked(n)) == -1)
		if (pthread_cond_timedwait(&n->cond, &n->lock, &ts) != 0)
			break;
	pthread_mutex_unlock(&n->lock);
	return (i);
}

/* A slot is free again; waiters look. */
static void
vcl_shm_give(struct vcl_node *n, unsigned i)
{
	pthread_mutex_lock(&n->lock);
	n->shm->busy &= ~(1ull << i);
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

/*
 * A part of a read is in, or failed (st), or was never sent (counted:
 * it was one of q->inflight); the last one's end lets its event
 * complete: with the server's word (the Notify of the part that carries
 * the event, which speaks of that part alone) or the first failure of
 * any part. A quiet read's failure goes to the queue's next clFinish,
 * before its last counted part stops counting.
 */
static void
vcl_shm_nb_part(struct vcl_node *n, struct vcl_shm_nb *nb, cl_int st,
    int counted)
{
	int	last;

	pthread_mutex_lock(&n->lock);
	if (st != CL_SUCCESS && nb->err == CL_SUCCESS)
		nb->err = st;
	last = --nb->left == 0;
	if (last && nb->quiet)
		vcl_queue_defer(nb->q, nb->err);
	if (counted)
		atomic_fetch_sub(&nb->q->inflight, 1);
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	if (!last)
		return;
	if (nb->ev != NULL) {
		vcl_event_unhold(nb->ev, nb->err);
		vcl_event_unref(nb->ev);
	}
	vcl_queue_unref(nb->q);
	free(nb);
}

/* The reply of a non-blocking read's rest in band: its bytes landed. */
static void
vcl_shm_nb_rest_done(struct vcl_pending *p)
{
	struct vcl_shm_nb	*nb = p->arg;
	struct vcl_node		*n = nb->n;

	if (p->msg != NULL)
		vcl__to_client__free_unpacked(p->msg, NULL);
	vcl_shm_nb_part(n, nb, p->status, 1);
	free(p);
}

/* A chunk's reply (or its node's failure): its slot is free. */
static void
vcl_shm_chunk_done(struct vcl_pending *p)
{
	struct vcl_shm_tok	*t = p->arg;
	struct vcl_node		*n = t->n;
	struct vcl_shm_nb	*nb = t->nb;

	if (nb != NULL) {
		if (p->status == CL_SUCCESS)
			vcl_shm_copy(t->dst, vcl_shm_slot(n->shm, t->slot),
			    t->len);
		t->nb = NULL;
	}
	if (p->msg != NULL)
		vcl__to_client__free_unpacked(p->msg, NULL);
	pthread_mutex_lock(&n->lock);
	n->shm->busy &= ~(1ull << t->slot);
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	if (nb != NULL)
		vcl_shm_nb_part(n, nb, p->status, 1);
	free(p);
}

/*
 * The Enqueue of chunk i of nchunks of e: the first waits for e's wait
 * list, the last makes e's event, the others are plain (queue order).
 */
static void
vcl_shm_enqueue(const Vcl__Enqueue *e, size_t i, size_t nchunks,
    Vcl__Enqueue *out)
{
	*out = *e;
	if (i != 0) {
		out->n_wait = 0;
		out->wait = NULL;
	}
	if (i != nchunks - 1) {
		out->has_event = 0;
		out->event = 0;
		out->has_quiet = 0;
		out->quiet = 0;
	}
}

/*
 * Write m's range from ptr as chunks through the ring. A chunk that finds
 * no slot free for VCL_SHM_WAIT_MS (the queue waits for a user event, say)
 * goes in band, and so does the rest: the call never waits on the device.
 */
static cl_int
vcl_shm_write(struct vcl_node *n, Vcl__Request *req, Vcl__WriteBuffer *m,
    const void *ptr)
{
	Vcl__Enqueue	*e = m->q, ce;
	uint64_t	 offset = m->offset, size = m->size, off, len;
	size_t		 i, nchunks;
	cl_int		 err = CL_SUCCESS;
	int		 slot = 0;

	nchunks = (size_t)((size + VCL_SHM_SLOT - 1) / VCL_SHM_SLOT);
	for (i = 0; i < nchunks && err == CL_SUCCESS; i++) {
		off = i * (uint64_t)VCL_SHM_SLOT;
		len = size - off < VCL_SHM_SLOT ? size - off : VCL_SHM_SLOT;
		vcl_shm_enqueue(e, i, nchunks, &ce);
		m->q = &ce;
		m->offset = offset + off;
		m->size = len;
		if (slot != -1)
			slot = vcl_shm_take(n, n->shm->wait_ms);
		if (slot == -1) {
			m->has_shm_slot = 0;
			err = vcl_node_send(n, req, (const uint8_t *)ptr + off,
			    len, 0);
			continue;
		}
		vcl_shm_copy(vcl_shm_slot(n->shm, (unsigned)slot),
		    (const uint8_t *)ptr + off, (size_t)len);
		m->has_shm_slot = 1;
		m->shm_slot = (uint32_t)slot;
		if ((err = vcl_node_call_async(n, req, NULL, 0,
		    vcl_shm_chunk_done, &n->shm->tok[slot])) != CL_SUCCESS)
			vcl_shm_give(n, (unsigned)slot);
		else
			err = vcl_node_flush(n);
	}
	m->q = e;
	m->offset = offset;
	m->size = size;
	m->has_shm_slot = 0;
	return (err);
}

/* Have every part of a read that was sent come in? */
static int
vcl_shm_nb_settled(struct vcl_node *n, void *arg)
{
	const struct vcl_shm_nb	*nb = arg;

	(void)n;
	return (nb->left == 1);
}

/*
 * A read of m's range into ptr as chunks through the ring, each copied
 * out by its reply's handler (the receiver, or whoever reads the node's
 * socket). Blocking: each chunk waits for a slot (reading the socket if
 * nobody does), and the call returns once every part is in, with the
 * first failure. Not blocking: a chunk that finds no slot free for
 * VCL_SHM_WAIT_MS (the queue waits for a user event, say) goes in band
 * with the rest, as for a write, so the call never waits on the device;
 * the read's event (ev, the caller's), which the last part carries, is
 * held until every part is in: the server's Notify may come before an
 * earlier part's reply (a read chunked in band), and it speaks of the
 * last part alone. A call that fails once parts are out waits for them
 * before it returns (the application may free ptr then).
 */
static cl_int
vcl_shm_xread(struct vcl_node *n, Vcl__Request *req, Vcl__ReadBuffer *m,
    void *ptr, cl_command_queue q, cl_event ev, int blocking)
{
	Vcl__Enqueue		*e = m->q, ce;
	struct vcl_shm_nb	*nb;
	struct vcl_shm_tok	*t;
	uint64_t		 offset = m->offset, size = m->size, off, len;
	size_t			 i, nchunks;
	cl_int			 err = CL_SUCCESS;
	int			 slot, sent = 0;

	if ((nb = calloc(1, sizeof *nb)) == NULL)
		return (CL_OUT_OF_HOST_MEMORY);
	nb->n = n;
	nb->q = q;
	vcl_retain(q);
	if ((nb->ev = ev) != NULL) {
		vcl_retain(ev);
		vcl_event_hold(ev);
	}
	nb->left = 1;		/* this call's, until it has sent all */
	nb->quiet = ev == NULL && !blocking;
	nchunks = (size_t)((size + VCL_SHM_SLOT - 1) / VCL_SHM_SLOT);
	for (i = 0; i < nchunks && err == CL_SUCCESS; i++) {
		off = i * (uint64_t)VCL_SHM_SLOT;
		len = size - off < VCL_SHM_SLOT ? size - off : VCL_SHM_SLOT;
		vcl_shm_enqueue(e, i, nchunks, &ce);
		m->q = &ce;
		m->offset = offset + off;
		pthread_mutex_lock(&n->lock);
		nb->left++;
		atomic_fetch_add(&q->inflight, 1);
		pthread_mutex_unlock(&n->lock);
		if ((slot = vcl_shm_take(n, blocking ? 0 :
		    n->shm->wait_ms)) == -1) {
			/* The rest in band, as the read's last part. */
			ce.has_event = e->has_event;
			ce.event = e->event;
			ce.has_quiet = e->has_quiet;
			ce.quiet = e->quiet;
			m->size = size - off;
			m->has_shm_slot = 0;
			if ((err = vcl_node_call_async(n, req,
			    (uint8_t *)ptr + off, m->size, vcl_shm_nb_rest_done,
			    nb)) == CL_SUCCESS)
				sent = 1;
			else
				vcl_shm_nb_part(n, nb, err, 1);
			break;
		}
		m->size = len;
		m->has_shm_slot = 1;
		m->shm_slot = (uint32_t)slot;
		t = &n->shm->tok[slot];
		t->dst = (uint8_t *)ptr + off;
		t->len = (size_t)len;
		t->nb = nb;
		if ((err = vcl_node_call_async(n, req, NULL, 0,
		    vcl_shm_chunk_done, t)) != CL_SUCCESS) {
			t->nb = NULL;
			vcl_shm_give(n, (unsigned)slot);
			vcl_shm_nb_part(n, nb, err, 1);
			break;
		}
		sent = 1;
		/* Out now: the slots come back only once it ran. */
		err = vcl_node_flush(n);
	}
	m->q = e;
	m->offset = offset;
	m->size = size;
	m->has_shm_slot = 0;
	if (err == CL_SUCCESS)
		err = vcl_node_flush(n);
	/* Blocking, or failed with parts out (they land in ptr): wait. */
	if (sent && (blocking || err != CL_SUCCESS))
		vcl_node_wait(n, vcl_shm_nb_settled, nb);
	pthread_mutex_lock(&n->lock);
	if (blocking && err == CL_SUCCESS)
		err = nb->err;
	if (err != CL_SUCCESS)
		nb->quiet = 0;		/* the call tells it */
	pthread_mutex_unlock(&n->lock);
	vcl_shm_nb_part(n, nb, err, 0);
	return (err);
}

/* A blocking read: every byte in ptr when it returns. */
static cl_int
vcl_shm_read(struct vcl_node *n, Vcl__Request *req, Vcl__ReadBuffer *m,
    void *ptr, cl_command_queue q)
{
	return (vcl_shm_xread(n, req, m, ptr, q, NULL, 1));
}

/* A non-blocking read: its event completes once every byte is in. */
static cl_int
vcl_shm_nbread(struct vcl_node *n, Vcl__Request *req, Vcl__ReadBuffer *m,
    void *ptr, cl_command_queue q, cl_event ev)
{
	return (vcl_shm_xread(n, req, m, ptr, q, ev, 0));
}

const struct vcl_bulk vcl_bulk_shm = {
	"shm",
	vcl_shm_usable,
	vcl_shm_write,
	vcl_shm_read,
	vcl_shm_nbread
};
