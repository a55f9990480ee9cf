/* vcl_op_program.c - programs (built on a worker thread) and kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "vcl_backend.h"
#include "vcl_bincheck.h"
#include "vcl_incdir.h"
#include "vcl_include.h"
#include "vcl_log.h"
#include "vcl_op_program.h"
#include "vcl_server.h"
#include "vcl_session.h"
#include "vcl_worker.h"

#define VCL_KERNELS_MAX	4096
#define VCL_PROBE_TYPES	64	/* by-value types probed per program */

struct vcl_build;
static struct vcl_tsizes *vcl_probe_sizes(cl_program, const cl_device_id *,
		    cl_uint, const char *);
static struct vcl_tsizes *vcl_probe_link(struct vcl_build *);
static struct vcl_tsizes *vcl_probe_types(cl_program, const cl_device_id *,
		    cl_uint);
static char	*vcl_probe_source(const char *, const struct vcl_tsizes *);
static struct vcl_psrc *vcl_psrc_make(const struct vcl_build *);
static int	vcl_build_executable(const struct vcl_build *);

/*
 * The binaries this server knows, by SHA-256: those it handed out
 * (GetBinary; dev VCL_BINREC_MADE), with the by-value type sizes probed
 * when their program was built from source, and, with --trust-binaries,
 * those a child process made and built on a device (dev: its all_index,
 * vcl_bincheck.c). A program made again from a binary it handed out
 * (applications that cache binaries: pyopencl, hashcat, BLAS libraries)
 * gets those sizes: the server made the binary itself, so the sizes are
 * its own, never the client's word. A ring of VCL_BINREC_MAX entries; the
 * server has one per process and uses it on the loop thread only.
 */
#define VCL_BINREC_MAX	4096
#define VCL_BINREC_MADE	UINT32_MAX	/* handed out: good on any device */
static struct vcl_binrec {
	uint8_t			 sha[SHA256_DIGEST_LENGTH];
	uint32_t		 dev;
	struct vcl_tsizes	*ts;		/* NULL: none probed */
	int			 used;
}		 vcl_binrecs[VCL_BINREC_MAX];
static unsigned	 vcl_binrec_next;

/* A copy of a type-size list, or NULL. */
static struct vcl_tsizes *
vcl_tsizes_dup(const struct vcl_tsizes *ts)
{
	struct vcl_tsizes	*c;
	size_t			 n = sizeof *ts + ts->n * sizeof ts->t[0];

	if ((c = malloc(n)) != NULL)
		memcpy(c, ts, n);
	return (c);
}

/*
 * The record of a binary by its digest: one the server handed out, or
 * (dev not VCL_BINREC_MADE) one that passed a check on device dev. NULL:
 * unknown.
 */
static struct vcl_binrec *
vcl_binrec_find(const uint8_t *sha, uint32_t dev)
{
	unsigned	i;

	for (i = 0; i < VCL_BINREC_MAX; i++)
		if (vcl_binrecs[i].used && (vcl_binrecs[i].dev ==
		    VCL_BINREC_MADE || vcl_binrecs[i].dev == dev) &&
		    memcmp(vcl_binrecs[i].sha, sha, SHA256_DIGEST_LENGTH) == 0)
			return (&vcl_binrecs[i]);
	return (NULL);
}

/*
 * Remember a binary by its digest: handed out with its type sizes (dev
 * VCL_BINREC_MADE, ts or NULL), or passed on device dev.
 */
static void
vcl_binrec_put(const uint8_t *sha, uint32_t dev, const struct vcl_tsizes *ts)
{
	struct vcl_binrec	*r;
	struct vcl_tsizes	*c;

	if (vcl_binrec_find(sha, dev) != NULL)
		return;		/* known already, for dev or any device */
	c = ts != NULL ? vcl_tsizes_dup(ts) : NULL;
	r = &vcl_binrecs[vcl_binrec_next++ % VCL_BINREC_MAX];
	free(r->ts);
	r->ts = c;
	r->dev = dev;
	r->used = 1;
	memcpy(r->sha, sha, SHA256_DIGEST_LENGTH);
}

/*
 * The type sizes for a program from n binaries (their digests): those
 * recorded for them, when every one was handed out with the same sizes
 * (a mix of binaries of different programs gets none). NULL: none.
 */
static struct vcl_tsizes *
vcl_binrec_sizes(const uint8_t (*sha)[SHA256_DIGEST_LENGTH], size_t n)
{
	const struct vcl_binrec	*r, *first = NULL;
	size_t			 i;

	for (i = 0; i < n; i++) {
		if ((r = vcl_binrec_find(sha[i], VCL_BINREC_MADE)) == NULL ||
		    r->ts == NULL)
			return (NULL);
		if (first == NULL)
			first = r;
		else if (r->ts->n != first->ts->n || memcmp(r->ts, first->ts,
		    sizeof *r->ts + r->ts->n * sizeof r->ts->t[0]) != 0)
			return (NULL);
	}
	return (first != NULL ? vcl_tsizes_dup(first->ts) : NULL);
}

/* CreateProgram: a program from source, built later by BuildProgram. */
void
vcl_op_create_program(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateProgram	*m = req->create_program;
	struct vcl_hobj			*o, *ctx;
	const char			*src = (const char *)m->source.data;
	size_t				 len = m->source.len;
	cl_int				 err = CL_SUCCESS;

	if ((o = vcl_session_add(s, m->id, VCL_KIND_PROGRAM)) == NULL)
		return;
	if (o->error != CL_SUCCESS)
		return;		/* over the object limit */
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else if (ctx->error != CL_SUCCESS)
		err = ctx->error;
	else if (vcl_session_charge(s, len) != 0)
		err = CL_OUT_OF_HOST_MEMORY;	/* the runtime keeps a copy */
	else {
		o->bytes = len;		/* freed with the program */
		/* An empty source is a program too (it builds, to nothing). */
		if (len == 0 || src == NULL)
			src = "";
		o->u.prog = clCreateProgramWithSource(ctx->u.ctx, 1, &src,
		    len == 0 ? NULL : &len, &err);
	}
	o->error = err;
}

/* A build running on a worker; the loop answers when it is done. */
struct vcl_build {
	struct vcl_done		 d;		/* must stay first */
	uint64_t		 seq;
	uint64_t		 prog_id;
	cl_program		 prog;		/* retained for the build */
	cl_device_id		*devs;
	cl_uint			 ndevs;
	uint32_t		*idx;		/* node-local indexes of devs */
	char			*options;
	cl_int			 err;
	char			**logs;
	cl_build_status		*status;
	char			*names;		/* CL_PROGRAM_KERNEL_NAMES */
	struct vcl_tsizes	*tsizes;	/* by-value argument types */
	struct vcl_build_hdr	*hdrs;		/* shipped headers (copies) */
	size_t			 nhdrs;
	uint64_t		 charged;	/* their bytes, on the session */
	uint32_t		 ndirs;		/* -I options */
	int			 mode;		/* VCL_BUILD_* */
	int			 nosrc;		/* from binaries: keeps its sizes */
	struct vcl_psrc		*psrc;		/* compile: what a link probes */
	cl_context		 ctx;		/* link: retained */
	cl_program		*inputs;	/* link: retained */
	uint64_t		*inids;		/* link: the inputs' ids */
	struct vcl_psrc		**ipsrc;	/* link: copies, NULL: none */
	size_t			 ninputs;
};

#define VCL_BUILD_BUILD		0
#define VCL_BUILD_COMPILE	1
#define VCL_BUILD_LINK		2
#define VCL_LINK_INPUTS_MAX	1024	/* programs of one link */
#define VCL_BINARY_MAX		(48u << 20)	/* bytes of one binary sent */

/*
 * What a compiled program keeps for the size probe of a program linked
 * from it: its options and headers (its source stays in the runtime's
 * program). One block, offsets from its start, so free() frees it all and
 * a copy is a memcpy; its size is charged to the session while kept.
 */
struct vcl_psrc {
	size_t			 size;		/* of the whole block */
	size_t			 options;	/* offset of the options */
	uint32_t		 ndirs;
	uint32_t		 nhdrs;
	struct {
		uint32_t	 dir;
		size_t		 name;		/* offset, NUL-terminated */
		size_t		 data;		/* offset */
		size_t		 len;
	}			 h[];
};

/* A header shipped with a build: written into its private directory. */
struct vcl_build_hdr {
	uint32_t		 dir;
	char			*name;
	uint8_t			*data;
	size_t			 len;
};

/* Free a build record (its session still referenced, if it has one). */
static void
vcl_build_free(struct vcl_build *b)
{
	struct vcl_server	*srv = b->d.s != NULL ? b->d.s->srv : NULL;
	size_t			 i;

	if (b->logs != NULL)
		for (i = 0; i < b->ndevs; i++)
			free(b->logs[i]);
	free(b->logs);
	free(b->status);
	free(b->names);
	free(b->tsizes);
	free(b->devs);
	free(b->idx);
	free(b->options);
	for (i = 0; i < b->nhdrs; i++) {
		free(b->hdrs[i].name);
		free(b->hdrs[i].data);
	}
	free(b->hdrs);
	if (b->charged > 0)
		vcl_session_uncharge(b->d.s, b->charged);
	free(b->psrc);
	/* Maybe the last references (the client left): off the loop. */
	for (i = 0; i < b->ninputs; i++) {
		if (b->inputs != NULL && b->inputs[i] != NULL)
			vcl_session_program_drop(srv, b->inputs[i]);
		if (b->ipsrc != NULL)
			free(b->ipsrc[i]);
	}
	free(b->inputs);
	free(b->inids);
	free(b->ipsrc);
	vcl_session_program_drop(srv, b->prog);
	if (b->ctx != NULL)
		clReleaseContext(b->ctx);
	free(b);
}

/*
 * clGetProgramInfo, except that CL_PROGRAM_KERNEL_NAMES of a program with
 * no kernel is "" without asking the runtime: NVIDIA's (H100, driver 580)
 * crashed (SIGSEGV) when asked the size of an empty program's names, and
 * an empty source is a program the specification lets build.
 */
cl_int
vcl_program_info(cl_program p, cl_uint param, size_t size, void *value,
    size_t *ret)
{
	size_t	nk = 0;
	cl_int	err;

	if (param != CL_PROGRAM_KERNEL_NAMES)
		return (clGetProgramInfo(p, param, size, value, ret));
	if ((err = clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk,
	    NULL)) != CL_SUCCESS)
		return (err);
	if (nk > 0)
		return (clGetProgramInfo(p, param, size, value, ret));
	if (value != NULL && size < 1)
		return (CL_INVALID_VALUE);
	if (value != NULL)
		*(char *)value = '\0';
	if (ret != NULL)
		*ret = 1;
	return (CL_SUCCESS);
}

/* clGetProgramBuildInfo/ProgramInfo of a string, malloc'd; NULL if none. */
static char *
vcl_build_string(cl_program p, cl_device_id d, cl_uint param)
{
	size_t	 n = 0;
	char	*v;
	cl_int	 err;

	err = d != NULL ? clGetProgramBuildInfo(p, d, param, 0, NULL, &n) :
	    vcl_program_info(p, param, 0, NULL, &n);
	if (err != CL_SUCCESS || n == 0 || (v = calloc(1, n + 1)) == NULL)
		return (NULL);
	err = d != NULL ? clGetProgramBuildInfo(p, d, param, n, v, NULL) :
	    vcl_program_info(p, param, n, v, NULL);
	if (err != CL_SUCCESS) {
		free(v);
		return (NULL);
	}
	return (v);
}

/*
 * Worker: refuse sources and headers that #include outside the build
 * (absolute names, "..", macros), then write the headers into a private
 * directory and enter it. Returns 0, or -1 with why (the build log).
 */
static int
vcl_build_prepare(struct vcl_build *b, struct vcl_incdir *d, char *why,
    size_t whylen)
{
	const char	*tmp = getenv("TMPDIR");
	char		*src, sub[512];
	size_t		 i;
	int		 rc = -1;

	/* From binaries, built-in kernels or IL: nothing to #include. */
	if ((src = vcl_build_string(b->prog, NULL, CL_PROGRAM_SOURCE)) ==
	    NULL || *src == '\0') {
		free(src);
		b->nosrc = 1;
		return (0);
	}
	if (vcl_include_scan(src, strlen(src), NULL, NULL, sub, sizeof sub) !=
	    0) {
		snprintf(why, whylen, "vclserver: program source, %s\n", sub);
		goto out;
	}
	for (i = 0; i < b->nhdrs; i++) {
		if (vcl_include_scan((const char *)b->hdrs[i].data,
		    b->hdrs[i].len, NULL, NULL, sub, sizeof sub) != 0) {
			snprintf(why, whylen, "vclserver: header '%.200s', %s\n",
			    b->hdrs[i].name, sub);
			goto out;
		}
	}
	if (vcl_incdir_create(d, tmp != NULL && *tmp == '/' ? tmp : "/tmp",
	    b->ndirs, sub, sizeof sub) != 0)
		goto fail;
	for (i = 0; i < b->nhdrs; i++)
		if (vcl_incdir_write(d, b->hdrs[i].dir, b->hdrs[i].name,
		    b->hdrs[i].data, b->hdrs[i].len, sub, sizeof sub) != 0)
			goto fail;
	if (vcl_incdir_enter(d, sub, sizeof sub) != 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	vcl_log_error("%s", sub);
	snprintf(why, whylen, "vclserver: %s\n", sub);
out:
	free(src);
	return (rc);
}

/* Worker: build (this blocks), then gather status, logs and kernel names. */
static void
vcl_build_run(void *arg)
{
	struct vcl_build	*b = arg;
	struct vcl_incdir	 d = { "", -1 };
	char			 why[1024];
	cl_uint			 i;
	int			 refused;

	if (b->mode == VCL_BUILD_LINK) {
		refused = 0;
		b->prog = clLinkProgram(b->ctx, b->ndevs, b->devs, b->options,
		    (cl_uint)b->ninputs, b->inputs, NULL, NULL, &b->err);
		if (b->prog == NULL && b->err == CL_SUCCESS)
			b->err = CL_LINK_PROGRAM_FAILURE;
		if (b->prog == NULL) {
			/* Nothing to ask: every device failed. */
			if ((b->status = calloc(b->ndevs, sizeof *b->status)) !=
			    NULL)
				for (i = 0; i < b->ndevs; i++)
					b->status[i] = CL_BUILD_ERROR;
			b->logs = calloc(b->ndevs, sizeof *b->logs);
			goto done;
		}
	} else if ((refused = vcl_build_prepare(b, &d, why, sizeof why)) == 0)
		b->err = b->mode == VCL_BUILD_COMPILE ?
		    clCompileProgram(b->prog, b->ndevs, b->devs, b->options, 0,
		    NULL, NULL, NULL, NULL) :
		    clBuildProgram(b->prog, b->ndevs, b->devs, b->options,
		    NULL, NULL);
	else
		b->err = b->mode == VCL_BUILD_COMPILE ?
		    CL_COMPILE_PROGRAM_FAILURE : CL_BUILD_PROGRAM_FAILURE;
	b->logs = calloc(b->ndevs, sizeof *b->logs);
	b->status = calloc(b->ndevs, sizeof *b->status);
	for (i = 0; i < b->ndevs && b->logs != NULL && b->status != NULL; i++) {
		if (refused) {
			b->status[i] = CL_BUILD_ERROR;
			b->logs[i] = strdup(why);
			continue;
		}
		if (clGetProgramBuildInfo(b->prog, b->devs[i],
		    CL_PROGRAM_BUILD_STATUS, sizeof b->status[i], &b->status[i],
		    NULL) != CL_SUCCESS)
			b->status[i] = CL_BUILD_ERROR;
		b->logs[i] = vcl_build_string(b->prog, b->devs[i],
		    CL_PROGRAM_BUILD_LOG);
	}
	if (b->err == CL_SUCCESS && b->mode == VCL_BUILD_COMPILE)
		b->psrc = vcl_psrc_make(b);
	else if (b->err == CL_SUCCESS && vcl_build_executable(b)) {
		b->names = vcl_build_string(b->prog, NULL,
		    CL_PROGRAM_KERNEL_NAMES);
		/* Still in the build's directory: the probe sees its headers. */
		if (b->mode == VCL_BUILD_LINK)
			b->tsizes = vcl_probe_link(b);
		else if (!b->nosrc)
			b->tsizes = vcl_probe_sizes(b->prog, b->devs, b->ndevs,
			    b->options);
	}
done:
	vcl_incdir_remove(&d);
	vcl_server_done_push(b->d.s->srv, &b->d);
}

/*
 * Mark (on) or unmark a link's inputs that are still the session's
 * programs (the same runtime program under the same id: one released
 * meanwhile, its id reused, is another). A marked program is not built or
 * compiled, and its binary not read, while the link reads it: a build of
 * an input made it an executable under the linker's feet (NVIDIA's aborts
 * on one), a compile replaced its binary.
 */
static void
vcl_link_inputs_mark(struct vcl_session *s, struct vcl_build *b, int on)
{
	struct vcl_hobj	*in;
	size_t		 i;

	for (i = 0; b->inids != NULL && i < b->ninputs; i++) {
		if ((in = vcl_handle_held(&s->handles, b->inids[i],
		    VCL_KIND_PROGRAM)) == NULL || in->u.prog != b->inputs[i])
			continue;
		if (on)
			in->linking++;
		else if (in->linking > 0)
			in->linking--;
	}
}

/* Loop: answer the build with per-device status, logs and kernel names. */
static void
vcl_build_done(struct vcl_done *d)
{
	struct vcl_build		*b = (struct vcl_build *)d;
	struct vcl_session		*s = d->s;
	struct vcl_hobj			*o;
	Vcl__Reply			 r = VCL__REPLY__INIT;
	Vcl__BuildResult		 br = VCL__BUILD_RESULT__INIT;
	Vcl__BuildResult__PerDevice	*pd = NULL, **pdp = NULL;
	char				*names[VCL_KERNELS_MAX], *p;
	cl_uint				 i;

	s->jobs--;
	if (s->dead)
		goto out;
	if (b->mode == VCL_BUILD_LINK)
		vcl_link_inputs_mark(s, b, 0);
	if ((o = vcl_handle_held(&s->handles, b->prog_id, VCL_KIND_PROGRAM)) !=
	    NULL && o->building) {
		o->building = 0;
		if (b->mode == VCL_BUILD_LINK) {
			/* The new program is the link's, error or not. */
			o->u.prog = b->prog;
			b->prog = NULL;
			if (o->u.prog == NULL)
				o->error = b->err;
		}
		/* A program from binaries keeps the sizes it came with. */
		if (b->err == CL_SUCCESS && !b->nosrc) {
			free(o->tsizes);
			o->tsizes = b->tsizes;
			b->tsizes = NULL;
		}
		/* The runtime keeps the logs with the program: they count. */
		for (i = 0; b->logs != NULL && i < b->ndevs; i++) {
			if (b->logs[i] != NULL) {
				o->bytes += strlen(b->logs[i]);
				vcl_session_charge_over(s, strlen(b->logs[i]));
			}
		}
		/*
		 * A compiled program keeps what a link's probe needs, charged
		 * with the program's other bytes (o->bytes); a recompile
		 * replaces the inputs it kept.
		 */
		if (o->psrc != NULL) {
			o->bytes -= o->psrc->size;
			vcl_session_uncharge(s, o->psrc->size);
			free(o->psrc);
			o->psrc = NULL;
		}
		if (b->psrc != NULL && vcl_session_charge(s, b->psrc->size) ==
		    0) {
			o->psrc = b->psrc;
			o->bytes += b->psrc->size;
			b->psrc = NULL;
		}
	}
	r.seq = b->seq;
	r.status = b->err;
	if (b->logs != NULL && b->status != NULL &&
	    (pd = calloc(b->ndevs, sizeof *pd)) != NULL &&
	    (pdp = calloc(b->ndevs, sizeof *pdp)) != NULL) {
		for (i = 0; i < b->ndevs; i++) {
			vcl__build_result__per_device__init(&pd[i]);
			pd[i].device = b->idx[i];
			pd[i].status = b->status[i];
			pd[i].log = b->logs[i];
			pdp[i] = &pd[i];
		}
		br.n_devices = b->ndevs;
		br.devices = pdp;
	}
	for (p = b->names; p != NULL && *p != '\0' &&
	    br.n_kernel_names < VCL_KERNELS_MAX; ) {
		names[br.n_kernel_names++] = p;
		if ((p = strchr(p, ';')) != NULL)
			*p++ = '\0';
	}
	br.kernel_names = names;
	r.result_case = VCL__REPLY__RESULT_BUILD;
	r.build = &br;
	vcl_session_reply_msg(s, &r);
	free(pd);
	free(pdp);
out:
	vcl_session_uncharge(s, b->charged);	/* while s is surely alive */
	b->charged = 0;
	vcl_build_free(b);
	vcl_session_unref(s);
}

/*
 * The client's options, whitelisted and written out again with each -I
 * pointing into the build's own directory (vcl_include_options), plus
 * -cl-kernel-arg-info: the server must know each argument's address
 * qualifier to tell a buffer from bytes (a client that passed bytes for a
 * buffer would otherwise hand the runtime a pointer). Returns
 * CL_INVALID_BUILD_OPTIONS with why for an option not on the list.
 */
static cl_int
vcl_build_options(struct vcl_build *b, const char *opts, char *why,
    size_t whylen)
{
	static const char	 extra[] = " -cl-kernel-arg-info";
	struct vcl_include_opts	 o;
	size_t			 n;

	if (vcl_include_options(opts, VCL_INCDIR_IPREFIX, &o, why, whylen) !=
	    0)
		return (strcmp(why, "out of memory") == 0 ?
		    CL_OUT_OF_HOST_MEMORY : CL_INVALID_BUILD_OPTIONS);
	n = strlen(o.out);
	b->ndirs = (uint32_t)o.ndirs;
	if ((b->options = malloc(n + sizeof extra)) != NULL) {
		memcpy(b->options, o.out, n);
		memcpy(b->options + n, extra, sizeof extra);
	}
	vcl_include_opts_free(&o);
	return (b->options != NULL ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY);
}

/*
 * Take copies of the headers shipped with a build, checked: names that
 * could leave the build's directory, too many, too large in all (their
 * bytes are charged to the session until the build is done).
 */
static cl_int
vcl_build_headers(struct vcl_session *s, struct vcl_build *b,
    const Vcl__BuildProgram *m, char *why, size_t whylen)
{
	const Vcl__Header	*h;
	uint64_t		 total = 0;
	size_t			 i;

	if (m->n_headers > VCL_INCLUDE_MAX_HEADERS) {
		snprintf(why, whylen, "more than %d headers in one build",
		    VCL_INCLUDE_MAX_HEADERS);
		return (CL_OUT_OF_RESOURCES);
	}
	for (i = 0; i < m->n_headers; i++) {
		h = m->headers[i];
		if (!vcl_include_name_ok(h->name, strlen(h->name)) ||
		    h->dir > b->ndirs) {
			snprintf(why, whylen, "header name '%.200s' (dir %u) "
			    "refused: it must be a relative path without "
			    "empty, '.' or '..' components", h->name, h->dir);
			return (CL_INVALID_VALUE);
		}
		total += h->data.len;
	}
	if (total > VCL_INCLUDE_MAX_BYTES || vcl_session_charge(s, total) != 0) {
		snprintf(why, whylen, "the build's headers are too large "
		    "(%llu bytes)", (unsigned long long)total);
		return (CL_OUT_OF_RESOURCES);
	}
	b->charged = total;
	if (m->n_headers == 0)
		return (CL_SUCCESS);
	if ((b->hdrs = calloc(m->n_headers, sizeof *b->hdrs)) == NULL)
		return (CL_OUT_OF_HOST_MEMORY);
	for (i = 0; i < m->n_headers; i++, b->nhdrs++) {
		h = m->headers[i];
		b->hdrs[i].dir = h->dir;
		b->hdrs[i].len = h->data.len;
		if ((b->hdrs[i].name = strdup(h->name)) == NULL ||
		    (b->hdrs[i].data = malloc(h->data.len + 1)) == NULL) {
			b->nhdrs++;
			return (CL_OUT_OF_HOST_MEMORY);
		}
		memcpy(b->hdrs[i].data, h->data.data, h->data.len);
	}
	return (CL_SUCCESS);
}

/* BuildProgram: the build runs on a worker; the loop never waits for it. */
void
vcl_op_build_program(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__BuildProgram	*m = req->build_program;
	struct vcl_backend	*be = &s->srv->be;
	struct vcl_hobj		*o;
	struct vcl_build	*b;
	char			 why[512];
	cl_uint			 n, i;
	uint32_t		 root;
	cl_int			 err = CL_SUCCESS;

	o = vcl_handle_get(&s->handles, m->program, VCL_KIND_PROGRAM);
	if (o == NULL)
		err = CL_INVALID_PROGRAM;
	else if (o->error != CL_SUCCESS)
		err = o->error;
	else if (o->building || o->linking > 0)
		err = CL_INVALID_OPERATION;	/* a job of it runs */
	else if (m->n_devices > be->ndevices + VCL_SUBDEVICES_MAX)
		err = CL_INVALID_DEVICE;
	else if (vcl_session_release_full(s->srv))
		err = CL_OUT_OF_RESOURCES;
	if (err != CL_SUCCESS) {
		vcl_session_reply(s, req->seq, err, err == CL_OUT_OF_RESOURCES ?
		    "the server's backlog of program releases is over "
		    "--max-release-backlog; try again later" : NULL);
		return;
	}
	n = m->n_devices > 0 ? (cl_uint)m->n_devices : be->ndevices;
	if ((b = calloc(1, sizeof *b)) == NULL ||
	    (b->devs = calloc(n, sizeof *b->devs)) == NULL ||
	    (b->idx = calloc(n, sizeof *b->idx)) == NULL) {
		if (b != NULL) {
			free(b->devs);
			free(b->idx);
			free(b);
		}
		vcl_session_reply(s, req->seq, CL_OUT_OF_HOST_MEMORY, NULL);
		return;
	}
	b->d.s = s;
	b->prog = o->u.prog;
	clRetainProgram(b->prog);
	b->mode = m->has_compile && m->compile ? VCL_BUILD_COMPILE :
	    VCL_BUILD_BUILD;
	why[0] = '\0';
	if ((err = vcl_build_options(b, m->options, why, sizeof why)) !=
	    CL_SUCCESS || (err = vcl_build_headers(s, b, m, why,
	    sizeof why)) != CL_SUCCESS) {
		vcl_session_reply(s, req->seq, err, why[0] != '\0' ? why :
		    NULL);
		vcl_build_free(b);
		return;
	}
	for (i = 0; i < n; i++) {
		b->idx[i] = m->n_devices > 0 ? m->devices[i] : i;
		if ((b->devs[i] = vcl_session_device(s, b->idx[i],
		    &root)) == NULL)
			err = CL_INVALID_DEVICE;
	}
	b->ndevs = n;
	b->seq = req->seq;
	b->prog_id = m->program;
	b->d.fn = vcl_build_done;
	if (err == CL_SUCCESS && m->n_devices == 0) {
		/* All devices of the program's context, as the spec says. */
		free(b->devs);
		free(b->idx);
		b->devs = NULL;
		b->idx = NULL;
		b->ndevs = 0;
		if (clGetProgramInfo(b->prog, CL_PROGRAM_NUM_DEVICES,
		    sizeof n, &n, NULL) != CL_SUCCESS || n == 0 ||
		    (b->devs = calloc(n, sizeof *b->devs)) == NULL ||
		    (b->idx = calloc(n, sizeof *b->idx)) == NULL ||
		    clGetProgramInfo(b->prog, CL_PROGRAM_DEVICES,
		    n * sizeof *b->devs, b->devs, NULL) != CL_SUCCESS)
			err = CL_OUT_OF_HOST_MEMORY;
		else
			b->ndevs = n;
		/* Root devices or sub-devices of this session. */
		for (i = 0; i < b->ndevs; i++)
			b->idx[i] = vcl_session_device_index(s, b->devs[i]);
	}
	if (err != CL_SUCCESS) {
		vcl_session_reply(s, req->seq, err, NULL);
		vcl_build_free(b);
		return;
	}
	vcl_session_ref(s);
	s->jobs++;
	o->building = 1;
	if (vcl_workers_run(s->srv->workers, vcl_build_run, b) != 0) {
		o->building = 0;
		s->jobs--;
		vcl_session_reply(s, req->seq, CL_OUT_OF_HOST_MEMORY, NULL);
		vcl_session_unref(s);
		vcl_build_free(b);
	}
}

/*
 * Bytes of a by-value argument of a built-in OpenCL C type named by
 * CL_KERNEL_ARG_TYPE_NAME: scalars and vectors (a 3-vector has the size of
 * a 4-vector); 0 for what is not built in (structs, unions, enums,
 * typedefs), whose size the program's probe gives (vcl_probe_sizes).
 */
static uint64_t
vcl_type_size(const char *name, cl_uint addr_bits)
{
	static const struct {
		const char	*name;
		uint32_t	 size;
	} scalars[] = {
		{ "char", 1 }, { "uchar", 1 }, { "unsigned char", 1 },
		{ "short", 2 }, { "ushort", 2 }, { "unsigned short", 2 },
		{ "half", 2 }, { "int", 4 }, { "uint", 4 },
		{ "unsigned int", 4 }, { "float", 4 }, { "long", 8 },
		{ "ulong", 8 }, { "unsigned long", 8 }, { "double", 8 },
		{ "bool", 1 },
	};
	size_t		 i, len;
	unsigned long	 n = 1;
	char		*end;

	if (strcmp(name, "size_t") == 0 || strcmp(name, "ptrdiff_t") == 0 ||
	    strcmp(name, "intptr_t") == 0 || strcmp(name, "uintptr_t") == 0)
		return (addr_bits / 8);
	for (i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
		len = strlen(scalars[i].name);
		if (strncmp(name, scalars[i].name, len) != 0)
			continue;
		if (name[len] == '\0')
			return (scalars[i].size);
		if (strcmp(scalars[i].name, "bool") == 0 ||
		    name[len] < '1' || name[len] > '9')
			continue;
		n = strtoul(name + len, &end, 10);
		if (*end != '\0' || (n != 2 && n != 3 && n != 4 && n != 8 &&
		    n != 16))
			continue;
		return (scalars[i].size * (uint64_t)(n == 3 ? 4 : n));
	}
	return (0);
}

/* The type name without the qualifiers some runtimes put in front. */
static const char *
vcl_type_bare(const char *name)
{
	static const char	*quals[] = {
		"const ", "volatile ", "restrict ", "__read_only ",
		"read_only ", "__write_only ", "write_only ", "__read_write ",
		"read_write ",
	};
	size_t			 i;

	for (i = 0; i < sizeof quals / sizeof quals[0]; i++) {
		if (strncmp(name, quals[i], strlen(quals[i])) == 0) {
			name += strlen(quals[i]);
			i = (size_t)-1;		/* again from the first */
		}
	}
	return (name);
}

/* CL_MEM_OBJECT_IMAGE* of an image type name, 0 if it names none. */
static uint32_t
vcl_type_image(const char *name)
{
	static const struct {
		const char	*prefix;
		uint32_t	 type;
	} images[] = {
		{ "image1d_buffer", CL_MEM_OBJECT_IMAGE1D_BUFFER },
		{ "image1d_array", CL_MEM_OBJECT_IMAGE1D_ARRAY },
		{ "image1d", CL_MEM_OBJECT_IMAGE1D },
		{ "image2d_array", CL_MEM_OBJECT_IMAGE2D_ARRAY },
		{ "image2d", CL_MEM_OBJECT_IMAGE2D },
		{ "image3d", CL_MEM_OBJECT_IMAGE3D },
	};
	size_t			 i, n = strlen(name);

	if (strncmp(name, "image", 5) != 0 || n < 3 ||
	    strcmp(name + n - 2, "_t") != 0)
		return (0);
	for (i = 0; i < sizeof images / sizeof images[0]; i++)
		if (strncmp(name, images[i].prefix,
		    strlen(images[i].prefix)) == 0)
			return (images[i].type);
	return (CL_MEM_OBJECT_IMAGE2D);		/* an image of a newer kind */
}

/*
 * What a kernel argument is (vcl_handle.h), from its address qualifier,
 * type qualifier and type name; for a by-value one *size is the type's
 * size if built in, else 0.
 */
static enum vcl_karg_kind
vcl_karg_kind(cl_kernel_arg_address_qualifier aq,
    cl_kernel_arg_type_qualifier tq, const char *tname, cl_uint bits,
    uint64_t *size, uint32_t *image)
{
	static const char	*opaque[] = {
		"queue_t", "clk_event_t", "reserve_id_t", "event_t",
	};
	const char		*t = vcl_type_bare(tname);
	size_t			 i;

	*size = 0;
	*image = vcl_type_image(t);
	if (tq & CL_KERNEL_ARG_TYPE_PIPE || strncmp(t, "pipe ", 5) == 0)
		return (VCL_KARG_PIPE);
	if (*image != 0)
		return (VCL_KARG_IMAGE);
	if (aq == CL_KERNEL_ARG_ADDRESS_LOCAL)
		return (VCL_KARG_LOCAL);
	if (aq == CL_KERNEL_ARG_ADDRESS_GLOBAL ||
	    aq == CL_KERNEL_ARG_ADDRESS_CONSTANT)
		return (VCL_KARG_BUFFER);
	if (aq != CL_KERNEL_ARG_ADDRESS_PRIVATE)
		return (VCL_KARG_OPAQUE);
	if (strcmp(t, "sampler_t") == 0)
		return (VCL_KARG_SAMPLER);
	for (i = 0; i < sizeof opaque / sizeof opaque[0]; i++)
		if (strcmp(t, opaque[i]) == 0)
			return (VCL_KARG_OPAQUE);
	/* A pointer by value would be taken as an address: never. */
	if (strchr(t, '*') != NULL || strchr(t, '[') != NULL)
		return (VCL_KARG_OPAQUE);
	*size = vcl_type_size(t, bits);
	return (VCL_KARG_VALUE);
}

/* The probed size of a by-value type of the program, 0 if unknown. */
static uint64_t
vcl_tsizes_find(const struct vcl_tsizes *ts, const char *tname)
{
	const char	*t = vcl_type_bare(tname);
	uint32_t	 i;

	for (i = 0; ts != NULL && i < ts->n; i++)
		if (strcmp(ts->t[i].name, t) == 0)
			return (ts->t[i].size);
	return (0);
}

_Static_assert((int)VCL_KARG_OPAQUE == VCL__KERNEL_DESC__ARG_KIND__OPAQUE &&
    (int)VCL_KARG_SAMPLER == VCL__KERNEL_DESC__ARG_KIND__SAMPLER &&
    (int)VCL_KARG_IMAGE == VCL__KERNEL_DESC__ARG_KIND__IMAGE &&
    (int)VCL_KARG_LOCAL == VCL__KERNEL_DESC__ARG_KIND__LOCAL &&
    (int)VCL_KARG_BUFFER == VCL__KERNEL_DESC__ARG_KIND__BUFFER &&
    (int)VCL_KARG_PIPE == VCL__KERNEL_DESC__ARG_KIND__PIPE,
    "vcl_karg_kind is vcl.proto's KernelDesc.ArgKind");

/* What the server keeps of a kernel, made with its description. */
struct vcl_kinfo {
	struct vcl_karg	*kargs;		/* each argument's kind */
	struct vcl_kdev	*kdev;		/* per device */
};

/*
 * Describe a kernel for the client: name, arg count, address qualifiers
 * and by-value sizes (built-in, or probed with the program's build), and
 * per served device its work-group limits. Fills *ki with what launches
 * are checked against. Fails when an argument cannot be described:
 * launches could not be checked.
 */
static int
vcl_kernel_desc(struct vcl_session *s, const struct vcl_hobj *p,
    cl_kernel k, uint64_t id, Vcl__KernelDesc *kd, struct vcl_kinfo *ki)
{
	struct vcl_backend	*be = &s->srv->be;
	cl_uint			 i, bits = 64;
	cl_ulong		 lm;
	size_t			 n = 0, cwg[3];
	uint64_t		 size;
	char			 tname[256];

	vcl__kernel_desc__init(kd);
	memset(ki, 0, sizeof *ki);
	kd->id = id;
	if (clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof kd->num_args,
	    &kd->num_args, NULL) != CL_SUCCESS ||
	    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, NULL, &n) !=
	    CL_SUCCESS || (kd->name = calloc(1, n + 1)) == NULL ||
	    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, n, kd->name, NULL) !=
	    CL_SUCCESS)
		return (-1);
	if (kd->num_args > 0 &&
	    ((kd->arg_address = calloc(kd->num_args,
	    sizeof *kd->arg_address)) == NULL ||
	    (kd->arg_size = calloc(kd->num_args, sizeof *kd->arg_size)) ==
	    NULL || (kd->arg_type_qual = calloc(kd->num_args,
	    sizeof *kd->arg_type_qual)) == NULL ||
	    (kd->arg_kind = calloc(kd->num_args, sizeof *kd->arg_kind)) ==
	    NULL ||
	    (ki->kargs = calloc(kd->num_args, sizeof *ki->kargs)) == NULL))
		return (-1);
	kd->n_arg_kind = kd->num_args;
	if (kd->num_args > 0 &&
	    ((kd->arg_image = calloc(kd->num_args, sizeof *kd->arg_image)) ==
	    NULL || (kd->arg_access = calloc(kd->num_args,
	    sizeof *kd->arg_access)) == NULL))
		return (-1);
	kd->n_arg_image = kd->n_arg_access = kd->num_args;
	kd->n_arg_address = kd->num_args;
	kd->n_arg_size = kd->num_args;
	kd->n_arg_type_qual = kd->num_args;
	clGetDeviceInfo(be->devices[0], CL_DEVICE_ADDRESS_BITS, sizeof bits,
	    &bits, NULL);
	for (i = 0; i < kd->num_args; i++) {
		cl_kernel_arg_address_qualifier	aq;
		cl_kernel_arg_type_qualifier	tq = 0;
		struct vcl_karg			*ka = &ki->kargs[i];

		if (clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
		    sizeof aq, &aq, NULL) != CL_SUCCESS ||
		    clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME,
		    sizeof tname, tname, NULL) != CL_SUCCESS)
			return (-1);
		clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER,
		    sizeof tq, &tq, NULL);
		kd->arg_address[i] = (uint32_t)aq;
		kd->arg_type_qual[i] = (uint32_t)tq;
		ka->kind = vcl_karg_kind(aq, tq, tname, bits, &size,
		    &ka->image);
		if (ka->kind == VCL_KARG_VALUE && size == 0)
			size = vcl_tsizes_find(p->tsizes, tname);
		kd->arg_kind[i] = (Vcl__KernelDesc__ArgKind)ka->kind;
		kd->arg_image[i] = ka->image;
		clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ACCESS_QUALIFIER,
		    sizeof kd->arg_access[i], &kd->arg_access[i], NULL);
		ka->writes = kd->arg_access[i] ==
		    CL_KERNEL_ARG_ACCESS_WRITE_ONLY || kd->arg_access[i] ==
		    CL_KERNEL_ARG_ACCESS_READ_WRITE;
		if (ka->kind == VCL_KARG_VALUE) {
			ka->size = size;
			kd->arg_size[i] = size <= UINT32_MAX ? (uint32_t)size :
			    0;
		}
	}
	if ((kd->wg_size = calloc(be->ndevices, sizeof *kd->wg_size)) == NULL ||
	    (kd->compile_wg = calloc(be->ndevices * 3,
	    sizeof *kd->compile_wg)) == NULL ||
	    (ki->kdev = calloc(be->ndevices, sizeof *ki->kdev)) == NULL)
		return (-1);
	kd->n_wg_size = be->ndevices;
	kd->n_compile_wg = be->ndevices * 3;
	for (i = 0; i < be->ndevices; i++) {
		if (clGetKernelWorkGroupInfo(k, be->devices[i],
		    CL_KERNEL_WORK_GROUP_SIZE, sizeof n, &n, NULL) != CL_SUCCESS)
			continue;
		kd->wg_size[i] = n;
		ki->kdev[i].wg = n;
		/* No __local argument is set yet: this is the kernel's own. */
		if (clGetKernelWorkGroupInfo(k, be->devices[i],
		    CL_KERNEL_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL) ==
		    CL_SUCCESS)
			ki->kdev[i].local = lm;
		if (clGetKernelWorkGroupInfo(k, be->devices[i],
		    CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof cwg, cwg, NULL) ==
		    CL_SUCCESS) {
			kd->compile_wg[i * 3] = cwg[0];
			kd->compile_wg[i * 3 + 1] = cwg[1];
			kd->compile_wg[i * 3 + 2] = cwg[2];
		}
	}
	return (0);
}

/* Keep a kernel's argument kinds and local sizes on its object. */
static void
vcl_kernel_keep(struct vcl_hobj *o, const Vcl__KernelDesc *kd,
    struct vcl_kinfo *ki)
{
	o->nargs = kd->num_args;
	o->kargs = ki->kargs;
	o->kdev = ki->kdev;
	ki->kargs = NULL;
	ki->kdev = NULL;
}

/* Free what vcl_kernel_desc allocated. */
static void
vcl_kernel_desc_free(Vcl__KernelDesc *kd, struct vcl_kinfo *ki)
{
	free(kd->name);
	free(kd->arg_address);
	free(kd->arg_size);
	free(kd->arg_type_qual);
	free(kd->arg_kind);
	free(kd->arg_image);
	free(kd->arg_access);
	free(kd->wg_size);
	free(kd->compile_wg);
	free(ki->kargs);
	free(ki->kdev);
}

/* Is a type name safe to paste into the probe's source? */
static int
vcl_probe_name_ok(const char *t)
{
	size_t	i;

	for (i = 0; t[i] != '\0'; i++)
		if (!(t[i] == '_' || t[i] == ' ' || (t[i] >= 'a' &&
		    t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
		    (t[i] >= '0' && t[i] <= '9')))
			return (0);
	return (i > 0 && i < sizeof ((struct vcl_tsize *)0)->name);
}

/* Add the by-value types of k's arguments that have no built-in size. */
static void
vcl_probe_collect(cl_kernel k, cl_uint bits, struct vcl_tsizes *ts)
{
	cl_kernel_arg_address_qualifier	aq;
	cl_kernel_arg_type_qualifier	tq;
	cl_uint				i, nargs = 0;
	uint64_t			size;
	uint32_t			image;
	char				tname[256];
	const char			*t;

	if (clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs,
	    NULL) != CL_SUCCESS)
		return;
	for (i = 0; i < nargs && ts->n < VCL_PROBE_TYPES; i++) {
		tq = 0;
		if (clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
		    sizeof aq, &aq, NULL) != CL_SUCCESS ||
		    clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME,
		    sizeof tname, tname, NULL) != CL_SUCCESS)
			continue;
		clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER,
		    sizeof tq, &tq, NULL);
		if (vcl_karg_kind(aq, tq, tname, bits, &size, &image) !=
		    VCL_KARG_VALUE || size != 0)
			continue;
		t = vcl_type_bare(tname);
		if (!vcl_probe_name_ok(t) || vcl_tsizes_find(ts, t) != 0)
			continue;
		memcpy(ts->t[ts->n].name, t, strlen(t) + 1);	/* fits: _ok */
		ts->t[ts->n++].size = 1;	/* a mark: listed */
	}
}

/*
 * Run the probe kernel once on each device; sizes[] gets sizeof of each
 * listed type where every device agrees, else 0. Returns 0 or -1.
 */
static int
vcl_probe_run(cl_context ctx, cl_kernel pk, const cl_device_id *devs,
    cl_uint ndevs, struct vcl_tsizes *ts)
{
	cl_ulong		 got[VCL_PROBE_TYPES];
	cl_command_queue	 q;
	cl_mem			 out;
	cl_uint			 d, i;
	size_t			 one = 1;
	cl_int			 err;

	out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ts->n * sizeof got[0],
	    NULL, &err);
	if (out == NULL)
		return (-1);
	err = clSetKernelArg(pk, 0, sizeof out, &out);
	for (d = 0; d < ndevs && err == CL_SUCCESS; d++) {
		memset(got, 0, sizeof got);
		if ((q = clCreateCommandQueue(ctx, devs[d], 0, &err)) == NULL)
			break;
		err = clEnqueueNDRangeKernel(q, pk, 1, NULL, &one, &one, 0,
		    NULL, NULL);
		if (err == CL_SUCCESS)
			err = clEnqueueReadBuffer(q, out, CL_TRUE, 0,
			    ts->n * sizeof got[0], got, 0, NULL, NULL);
		clReleaseCommandQueue(q);
		for (i = 0; i < ts->n && err == CL_SUCCESS; i++) {
			if (got[i] == 0 || got[i] > (1u << 20) ||
			    (d > 0 && got[i] != ts->t[i].size))
				ts->t[i].size = 0;	/* disagree: unknown */
			else if (d == 0)
				ts->t[i].size = got[i];
		}
	}
	clReleaseMemObject(out);
	return (err == CL_SUCCESS ? 0 : -1);
}

/*
 * Sizes of the program's by-value argument types that are not built in
 * (structs, unions, enums, typedefs). clGetKernelArgInfo gives only their
 * name, and some runtimes (PoCL 3 among them) do not check such an
 * argument's size in clSetKernelArg: a client sending fewer bytes than the
 * type has would make the kernel read the server's heap. So, on the
 * worker, after a successful build: the program's source, the same
 * options, plus one kernel storing sizeof of each such type, built and run
 * once per device. A type whose size cannot be had this way (a program
 * from binaries, a probe that fails, devices that disagree) keeps size 0
 * and the server refuses by-value arguments of it. NULL when the program
 * has no such type (or no memory: the same refusal).
 */
static struct vcl_tsizes *
vcl_probe_sizes(cl_program prog, const cl_device_id *devs, cl_uint ndevs,
    const char *options)
{
	struct vcl_tsizes	*ts;
	cl_kernel		 pk = NULL;
	cl_program		 pp = NULL;
	cl_context		 ctx = NULL;
	cl_uint			 i;
	char			*src = NULL, *psrc = NULL;
	size_t			 len;
	cl_int			 err;

	if ((ts = vcl_probe_types(prog, devs, ndevs)) == NULL)
		return (NULL);
	/* The probe kernel: the program's own source, then one kernel. */
	if ((src = vcl_build_string(prog, NULL, CL_PROGRAM_SOURCE)) == NULL ||
	    *src == '\0' ||	/* from binaries: no source to probe */
	    clGetProgramInfo(prog, CL_PROGRAM_CONTEXT, sizeof ctx, &ctx,
	    NULL) != CL_SUCCESS || (psrc = vcl_probe_source(src, ts)) == NULL)
		goto out;
	len = strlen(psrc);
	if ((pp = clCreateProgramWithSource(ctx, 1, (const char **)&psrc,
	    &len, &err)) == NULL ||
	    clBuildProgram(pp, ndevs, devs, options, NULL, NULL) !=
	    CL_SUCCESS ||
	    (pk = clCreateKernel(pp, "vcl_probe_sizeof", &err)) == NULL ||
	    vcl_probe_run(ctx, pk, devs, ndevs, ts) != 0) {
		vcl_log_info("by-value argument sizes of a program could not "
		    "be probed: such arguments will be refused");
		for (i = 0; i < ts->n; i++)
			ts->t[i].size = 0;
	}
out:
	if (pk != NULL)
		clReleaseKernel(pk);
	if (pp != NULL)
		clReleaseProgram(pp);
	free(psrc);
	free(src);
	return (ts);
}

/*
 * The by-value types of a program's kernels without a built-in size,
 * listed with size 0; NULL when there is none (or no memory).
 */
static struct vcl_tsizes *
vcl_probe_types(cl_program prog, const cl_device_id *devs, cl_uint ndevs)
{
	struct vcl_tsizes	*ts = NULL;
	cl_kernel		*ks = NULL;
	cl_uint			 nk = 0, i, bits = 64;

	if (ndevs == 0 || (ts = calloc(1, sizeof *ts + VCL_PROBE_TYPES *
	    sizeof ts->t[0])) == NULL)
		return (NULL);
	clGetDeviceInfo(devs[0], CL_DEVICE_ADDRESS_BITS, sizeof bits, &bits,
	    NULL);
	if (clCreateKernelsInProgram(prog, 0, NULL, &nk) != CL_SUCCESS ||
	    nk == 0 || (ks = calloc(nk, sizeof *ks)) == NULL ||
	    clCreateKernelsInProgram(prog, nk, ks, NULL) != CL_SUCCESS)
		nk = 0;
	for (i = 0; i < nk; i++) {
		vcl_probe_collect(ks[i], bits, ts);
		clReleaseKernel(ks[i]);
	}
	free(ks);
	if (ts->n == 0) {
		free(ts);
		return (NULL);
	}
	for (i = 0; i < ts->n; i++)
		ts->t[i].size = 0;
	return (ts);
}

/* A probe's source: src, then one kernel storing sizeof of each type. */
static char *
vcl_probe_source(const char *src, const struct vcl_tsizes *ts)
{
	char	*psrc;
	size_t	 off, cap;
	cl_uint	 i;

	cap = strlen(src) + 128 + ts->n * (sizeof ts->t[0].name + 48);
	if ((psrc = malloc(cap)) == NULL)
		return (NULL);
	off = (size_t)snprintf(psrc, cap, "%s\n__kernel void "
	    "vcl_probe_sizeof(__global ulong *vcl_probe_out)\n{\n", src);
	for (i = 0; i < ts->n && off < cap; i++)
		off += (size_t)snprintf(psrc + off, cap - off,
		    "\tvcl_probe_out[%u] = sizeof(%s);\n", i, ts->t[i].name);
	if (off >= cap || (size_t)snprintf(psrc + off, cap - off, "}\n") >=
	    cap - off) {
		free(psrc);
		return (NULL);
	}
	return (psrc);
}

/* Did the build, compile or link give an executable? */
static int
vcl_build_executable(const struct vcl_build *b)
{
	cl_program_binary_type	bt = CL_PROGRAM_BINARY_TYPE_NONE;

	if (b->ndevs == 0 || clGetProgramBuildInfo(b->prog, b->devs[0],
	    CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt, NULL) != CL_SUCCESS)
		return (b->mode == VCL_BUILD_BUILD);
	return (bt == CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
}

/* Worker: what a compiled program keeps for a link's probe, or NULL. */
static struct vcl_psrc *
vcl_psrc_make(const struct vcl_build *b)
{
	struct vcl_psrc	*ps;
	const char	*opts = b->options != NULL ? b->options : "";
	size_t		 size, off, i, l;

	size = sizeof *ps + b->nhdrs * sizeof ps->h[0] + strlen(opts) + 1;
	for (i = 0; i < b->nhdrs; i++)
		size += strlen(b->hdrs[i].name) + 1 + b->hdrs[i].len;
	if (size > VCL_INCLUDE_MAX_BYTES + (8u << 20) ||
	    (ps = calloc(1, size)) == NULL)
		return (NULL);
	ps->size = size;
	ps->ndirs = b->ndirs;
	ps->nhdrs = (uint32_t)b->nhdrs;
	off = sizeof *ps + b->nhdrs * sizeof ps->h[0];
	ps->options = off;
	memcpy((char *)ps + off, opts, strlen(opts) + 1);
	off += strlen(opts) + 1;
	for (i = 0; i < b->nhdrs; i++) {
		l = strlen(b->hdrs[i].name) + 1;
		ps->h[i].dir = b->hdrs[i].dir;
		ps->h[i].name = off;
		memcpy((char *)ps + off, b->hdrs[i].name, l);
		off += l;
		ps->h[i].data = off;
		ps->h[i].len = b->hdrs[i].len;
		if (b->hdrs[i].len > 0)
			memcpy((char *)ps + off, b->hdrs[i].data,
			    b->hdrs[i].len);
		off += b->hdrs[i].len;
	}
	return (ps);
}

/*
 * Worker: probe one compiled input of a link for the types of ts still
 * unknown. Its source plus the probe kernel is compiled as it was (same
 * options, its headers in a private directory), then linked with the
 * link's other inputs in place of it, and run. Returns 0 or -1.
 */
static int
vcl_probe_input(struct vcl_build *b, size_t in, struct vcl_tsizes *ts)
{
	const struct vcl_psrc	*ps = b->ipsrc[in];
	struct vcl_incdir	 d = { "", -1 };
	const char		*tmp = getenv("TMPDIR");
	cl_program		*progs = NULL, pp = NULL, lp = NULL;
	cl_kernel		 pk = NULL;
	char			*src = NULL, *psrc = NULL, why[512];
	size_t			 len, i;
	uint32_t		 k;
	int			 rc = -1;
	cl_int			 err;

	if ((src = vcl_build_string(b->inputs[in], NULL, CL_PROGRAM_SOURCE)) ==
	    NULL || *src == '\0' || (psrc = vcl_probe_source(src, ts)) ==
	    NULL || (progs = calloc(b->ninputs, sizeof *progs)) == NULL)
		goto out;
	if (vcl_incdir_create(&d, tmp != NULL && *tmp == '/' ? tmp : "/tmp",
	    ps->ndirs, why, sizeof why) != 0)
		goto out;
	for (k = 0; k < ps->nhdrs; k++)
		if (vcl_incdir_write(&d, ps->h[k].dir, (const char *)ps +
		    ps->h[k].name, (const uint8_t *)ps + ps->h[k].data,
		    ps->h[k].len, why, sizeof why) != 0)
			goto out;
	if (vcl_incdir_enter(&d, why, sizeof why) != 0)
		goto out;
	len = strlen(psrc);
	if ((pp = clCreateProgramWithSource(b->ctx, 1, (const char **)&psrc,
	    &len, &err)) == NULL || clCompileProgram(pp, b->ndevs, b->devs,
	    (const char *)ps + ps->options, 0, NULL, NULL, NULL, NULL) !=
	    CL_SUCCESS)
		goto out;
	for (i = 0; i < b->ninputs; i++)
		progs[i] = i == in ? pp : b->inputs[i];
	if ((lp = clLinkProgram(b->ctx, b->ndevs, b->devs, NULL,
	    (cl_uint)b->ninputs, progs, NULL, NULL, &err)) == NULL ||
	    (pk = clCreateKernel(lp, "vcl_probe_sizeof", &err)) == NULL)
		goto out;
	rc = vcl_probe_run(b->ctx, pk, b->devs, b->ndevs, ts);
out:
	vcl_incdir_remove(&d);
	if (pk != NULL)
		clReleaseKernel(pk);
	if (lp != NULL)
		clReleaseProgram(lp);
	if (pp != NULL)
		clReleaseProgram(pp);
	free(progs);
	free(psrc);
	free(src);
	return (rc);
}

/* Take the sizes a probe found for some types into the program's list. */
static void
vcl_probe_merge(struct vcl_tsizes *ts, const struct vcl_tsizes *got)
{
	uint32_t	i, j;

	for (i = 0; i < got->n; i++)
		for (j = 0; j < ts->n; j++)
			if (got->t[i].size != 0 &&
			    strcmp(ts->t[j].name, got->t[i].name) == 0)
				ts->t[j].size = got->t[i].size;
}

/*
 * Sizes of a linked program's by-value types that are not built in. The
 * program has no source; its compiled inputs had: each input that kept
 * its source and headers (vcl_psrc) is probed in turn, for the types
 * still unknown (all at once, else one by one: an input may lack the
 * types of another's kernels), until all are known. What stays unknown
 * is refused.
 */
static struct vcl_tsizes *
vcl_probe_link(struct vcl_build *b)
{
	struct vcl_tsizes	*ts, *u, *one;
	size_t			 in;
	uint32_t		 i;

	if ((ts = vcl_probe_types(b->prog, b->devs, b->ndevs)) == NULL)
		return (NULL);
	if ((u = calloc(1, sizeof *u + VCL_PROBE_TYPES * sizeof u->t[0])) ==
	    NULL || (one = calloc(1, sizeof *one + sizeof one->t[0])) ==
	    NULL) {
		free(u);
		return (ts);
	}
	for (in = 0; in < b->ninputs; in++) {
		if (b->ipsrc[in] == NULL)
			continue;
		for (i = 0, u->n = 0; i < ts->n; i++)
			if (ts->t[i].size == 0)
				u->t[u->n++] = ts->t[i];
		if (u->n == 0)
			break;
		if (vcl_probe_input(b, in, u) == 0) {
			vcl_probe_merge(ts, u);
			continue;
		}
		/* Some type is not this input's (another's kernel): alone. */
		for (i = 0; u->n > 1 && i < u->n; i++) {
			one->n = 1;
			one->t[0] = u->t[i];
			if (vcl_probe_input(b, in, one) == 0)
				vcl_probe_merge(ts, one);
		}
	}
	free(one);
	free(u);
	return (ts);
}

/* Check a program can give kernels. Returns it or NULL with *err. */
static struct vcl_hobj *
vcl_kernel_program(struct vcl_session *s, uint64_t id, cl_int *err)
{
	struct vcl_hobj	*p;

	p = vcl_handle_get(&s->handles, id, VCL_KIND_PROGRAM);
	if (p == NULL)
		*err = CL_INVALID_PROGRAM;
	else if (p->error != CL_SUCCESS)
		*err = p->error;
	else if (p->building)
		*err = CL_INVALID_PROGRAM_EXECUTABLE;
	else
		return (p);
	return (NULL);
}

/* CreateKernel: synchronous, so a bad name fails at clCreateKernel. */
void
vcl_op_create_kernel(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateKernel	*m = req->create_kernel;
	struct vcl_hobj		*p, *o;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	Vcl__KernelsResult	 kr = VCL__KERNELS_RESULT__INIT;
	Vcl__KernelDesc		 kd, *kdp = &kd;
	struct vcl_kinfo	 ki;
	cl_kernel		 k = NULL;
	cl_int			 err = CL_SUCCESS;

	vcl__kernel_desc__init(&kd);
	memset(&ki, 0, sizeof ki);
	if ((p = vcl_kernel_program(s, m->program, &err)) != NULL)
		k = clCreateKernel(p->u.prog, m->name, &err);
	if (err == CL_SUCCESS && vcl_kernel_desc(s, p, k, m->id, &kd, &ki) !=
	    0)
		err = CL_OUT_OF_HOST_MEMORY;
	if (err == CL_SUCCESS) {
		if ((o = vcl_session_add(s, m->id, VCL_KIND_KERNEL)) == NULL ||
		    o->error != CL_SUCCESS) {
			clReleaseKernel(k);
			if (s->dead) {
				vcl_kernel_desc_free(&kd, &ki);
				return;
			}
			if (o != NULL) {
				vcl_session_release(s, o);
				vcl_handle_del(&s->handles, o);
			}
			err = CL_OUT_OF_RESOURCES;
		} else {
			o->u.kernel = k;
			vcl_kernel_keep(o, &kd, &ki);
		}
	} else if (k != NULL)
		clReleaseKernel(k);
	r.seq = req->seq;
	r.status = err;
	if (err == CL_SUCCESS) {
		kr.n_kernels = 1;
		kr.kernels = &kdp;
		r.result_case = VCL__REPLY__RESULT_KERNELS;
		r.kernels = &kr;
	}
	vcl_session_reply_msg(s, &r);
	vcl_kernel_desc_free(&kd, &ki);
}

/* CreateKernels: every kernel of a program, under the client's ids. */
void
vcl_op_create_kernels(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateKernels	*m = req->create_kernels;
	struct vcl_hobj			*p, *o;
	Vcl__Reply			 r = VCL__REPLY__INIT;
	Vcl__KernelsResult		 kr = VCL__KERNELS_RESULT__INIT;
	Vcl__KernelDesc			*kd = NULL, **kdp = NULL;
	struct vcl_kinfo		*ki = NULL;
	cl_kernel			*ks = NULL;
	cl_uint				 n = 0, i;
	cl_int				 err = CL_SUCCESS;

	if ((p = vcl_kernel_program(s, m->program, &err)) != NULL)
		err = clCreateKernelsInProgram(p->u.prog, 0, NULL, &n);
	if (err == CL_SUCCESS && (n > VCL_KERNELS_MAX || m->n_ids < n))
		err = CL_INVALID_VALUE;
	if (err == CL_SUCCESS && n > 0 &&
	    ((ks = calloc(n, sizeof *ks)) == NULL ||
	    (kd = calloc(n, sizeof *kd)) == NULL ||
	    (kdp = calloc(n, sizeof *kdp)) == NULL ||
	    (ki = calloc(n, sizeof *ki)) == NULL))
		err = CL_OUT_OF_HOST_MEMORY;
	if (err == CL_SUCCESS && n > 0)
		err = clCreateKernelsInProgram(p->u.prog, n, ks, NULL);
	for (i = 0; i < n && err == CL_SUCCESS; i++) {
		kdp[i] = &kd[i];
		if (vcl_kernel_desc(s, p, ks[i], m->ids[i], &kd[i], &ki[i]) !=
		    0)
			err = CL_OUT_OF_HOST_MEMORY;
	}
	for (i = 0; i < n && err == CL_SUCCESS; i++) {
		if ((o = vcl_session_add(s, m->ids[i], VCL_KIND_KERNEL)) ==
		    NULL || o->error != CL_SUCCESS) {
			if (s->dead)
				break;
			if (o != NULL) {
				vcl_session_release(s, o);
				vcl_handle_del(&s->handles, o);
			}
			err = CL_OUT_OF_RESOURCES;
			break;
		}
		o->u.kernel = ks[i];
		ks[i] = NULL;
		vcl_kernel_keep(o, &kd[i], &ki[i]);
	}
	if (err != CL_SUCCESS) {
		/* Undo the ids already added, so the client may reuse none. */
		for (i = 0; i < n; i++) {
			if (ks != NULL && ks[i] == NULL && !s->dead &&
			    (o = vcl_handle_get(&s->handles, m->ids[i],
			    VCL_KIND_KERNEL)) != NULL) {
				vcl_session_release(s, o);
				vcl_handle_del(&s->handles, o);
			}
		}
	}
	for (i = 0; i < n && ks != NULL; i++)
		if (ks[i] != NULL)
			clReleaseKernel(ks[i]);
	if (!s->dead) {
		r.seq = req->seq;
		r.status = err;
		if (err == CL_SUCCESS) {
			kr.n_kernels = n;
			kr.kernels = kdp;
			r.result_case = VCL__REPLY__RESULT_KERNELS;
			r.kernels = &kr;
		}
		vcl_session_reply_msg(s, &r);
	}
	for (i = 0; i < n && kd != NULL && ki != NULL; i++)
		vcl_kernel_desc_free(&kd[i], &ki[i]);
	free(kd);
	free(ki);
	free(kdp);
	free(ks);
}

/*
 * Does every ';'-separated name of names appear among the built-in
 * kernels of each device? Checked here, before the runtime: PoCL 3.1
 * leaks its copy of the names when it refuses one, so a client could
 * grow the server without end.
 */
static int
vcl_builtin_ok(const cl_device_id *devs, size_t n, const char *names)
{
	const char	*p, *e, *h;
	char		*have = NULL;
	size_t		 i, len, hl;
	int		 ok = 1;

	if (strlen(names) > 65536)
		return (0);
	for (i = 0; i < n && ok; i++) {
		free(have);
		have = NULL;
		if (clGetDeviceInfo(devs[i], CL_DEVICE_BUILT_IN_KERNELS, 0, NULL,
		    &hl) != CL_SUCCESS || (have = calloc(1, hl + 1)) == NULL ||
		    clGetDeviceInfo(devs[i], CL_DEVICE_BUILT_IN_KERNELS, hl,
		    have, NULL) != CL_SUCCESS) {
			ok = 0;
			break;
		}
		for (p = names; ok && *p != '\0'; p = *e == ';' ? e + 1 : e) {
			e = p + strcspn(p, ";");
			len = (size_t)(e - p);
			ok = 0;
			for (h = have; *h != '\0'; h += strcspn(h, ";"),
			    h += *h == ';') {
				if (strncmp(h, p, len) == 0 &&
				    (h[len] == ';' || h[len] == '\0')) {
					ok = 1;
					break;
				}
			}
		}
	}
	free(have);
	return (ok);
}

/* Answer a CreateProgramFrom: its status, and each binary's with binaries. */
static void
vcl_program_from_reply(struct vcl_session *s, uint64_t seq, cl_int err,
    int32_t *st, size_t nbin)
{
	Vcl__Reply		 r = VCL__REPLY__INIT;
	Vcl__ProgramResult	 pr = VCL__PROGRAM_RESULT__INIT;
	size_t			 i;

	r.seq = seq;
	r.status = err;
	if (nbin > 0) {
		pr.n_binary_status = nbin;
		pr.binary_status = st;
		for (i = 0; i < nbin && err != CL_SUCCESS &&
		    err != CL_INVALID_BINARY; i++)
			st[i] = err;
	}
	r.result_case = VCL__REPLY__RESULT_PROGRAM;
	r.program = &pr;
	vcl_session_reply_msg(s, &r);
}

/* The runtime's program from binaries that may reach it; o gets it. */
static cl_int
vcl_program_from_binaries(struct vcl_hobj *o, cl_context ctx, cl_uint n,
    const cl_device_id *devs, const size_t *lens, const unsigned char **bins,
    const uint8_t (*sha)[SHA256_DIGEST_LENGTH], int32_t *st)
{
	cl_int	err = CL_SUCCESS;

	o->u.prog = clCreateProgramWithBinary(ctx, n, devs, lens, bins, st,
	    &err);
	/* Binaries this server made: their struct sizes are known. */
	if (o->u.prog != NULL)
		o->tsizes = vcl_binrec_sizes(sha, n);
	return (err);
}

/*
 * A CreateProgramFrom whose binaries (some of them) are tried in a child
 * process first (vcl_bincheck.c); the session's input waits meanwhile, so
 * its next request sees the program. It holds copies of the binaries,
 * charged to the session.
 */
struct vcl_progcheck {
	struct vcl_bincheck	 c;		/* must stay first */
	uint64_t		 seq;
	uint64_t		 id;		/* the program */
	uint64_t		 ctx;		/* its context's id */
	size_t			 n;		/* binaries, devices */
	uint32_t		 idx[64];	/* the devices' wire indexes */
	ProtobufCBinaryData	 bins[64];	/* copies */
	uint8_t			 sha[64][SHA256_DIGEST_LENGTH];	/* theirs */
	size_t			 pos[64];	/* checked binary k is bins[pos[k]] */
	uint64_t		 charged;
};

/* Free a check of binaries, giving back what its session was charged. */
static void
vcl_progcheck_free(struct vcl_progcheck *pc)
{
	size_t	i;

	for (i = 0; i < pc->n; i++)
		free(pc->bins[i].data);
	if (pc->charged > 0)
		vcl_session_uncharge(pc->c.d.s, pc->charged);
	free(pc);
}

/*
 * Loop: the check is over. Binaries that passed are remembered; if all
 * did, the runtime makes the program, else it is CL_INVALID_BINARY and the
 * runtime never sees them. Answers, and lets the session's input go on.
 */
static void
vcl_progcheck_done(struct vcl_done *d)
{
	struct vcl_progcheck	*pc = (struct vcl_progcheck *)d;
	struct vcl_session	*s = d->s;
	struct vcl_hobj		*o, *ctx;
	cl_device_id		 devs[64];
	const unsigned char	*bins[64];
	size_t			 lens[64], i;
	int32_t			 st[64];
	uint32_t		 root;
	cl_int			 err = CL_SUCCESS;

	s->jobs--;
	s->bincheck = NULL;
	for (i = 0; i < pc->c.n; i++)
		if (pc->c.status[i] == CL_SUCCESS)
			vcl_binrec_put(pc->sha[pc->pos[i]], pc->c.dev[i],
			    NULL);
	if (s->dead)
		goto out;
	for (i = 0; i < pc->n; i++)
		st[i] = CL_SUCCESS;
	for (i = 0; i < pc->c.n; i++) {
		if (pc->c.status[i] != CL_SUCCESS) {
			st[pc->pos[i]] = CL_INVALID_BINARY;
			err = CL_INVALID_BINARY;
		}
	}
	if (err != CL_SUCCESS)
		vcl_session_warn(s, "program %llu: a binary refused "
		    "(--trust-binaries): %s", (unsigned long long)pc->id,
		    pc->c.why);
	o = vcl_handle_get(&s->handles, pc->id, VCL_KIND_PROGRAM);
	ctx = vcl_handle_get(&s->handles, pc->ctx, VCL_KIND_CONTEXT);
	if (err == CL_SUCCESS && (o == NULL || o->u.prog != NULL))
		err = CL_INVALID_PROGRAM;
	else if (err == CL_SUCCESS && (ctx == NULL || ctx->error !=
	    CL_SUCCESS))
		err = CL_INVALID_CONTEXT;
	for (i = 0; err == CL_SUCCESS && i < pc->n; i++) {
		if ((devs[i] = vcl_session_device(s, pc->idx[i], &root)) ==
		    NULL)
			err = CL_INVALID_DEVICE;
		bins[i] = pc->bins[i].data;
		lens[i] = pc->bins[i].len;
	}
	if (err == CL_SUCCESS)
		err = vcl_program_from_binaries(o, ctx->u.ctx, (cl_uint)pc->n,
		    devs, lens, bins, (const uint8_t (*)[SHA256_DIGEST_LENGTH])
		    pc->sha, st);
	if (o != NULL && o->u.prog == NULL && err == CL_SUCCESS)
		err = CL_OUT_OF_RESOURCES;
	if (o != NULL)
		o->error = err;
	vcl_program_from_reply(s, pc->seq, err, st, pc->n);
	vcl_session_resume(s);
out:
	vcl_progcheck_free(pc);
	vcl_session_unref(s);
}

/*
 * --trust-binaries: try in a child process the binaries the server
 * neither made nor saw pass on their device. Returns -1 when all are
 * known (the runtime may take them now), CL_SUCCESS when a check started
 * (it answers), else the error to answer.
 */
static cl_int
vcl_progcheck_start(struct vcl_session *s, const Vcl__Request *req,
    const uint32_t *roots, const uint8_t (*sha)[SHA256_DIGEST_LENGTH])
{
	const Vcl__CreateProgramFrom	*m = req->create_program_from;
	struct vcl_progcheck		*pc;
	const struct vcl_backend	*be = &s->srv->be;
	size_t				 i, k, want = 0;
	int				 need[64];

	for (i = 0; i < m->n_binaries; i++) {
		need[i] = vcl_binrec_find(sha[i], be->all_index[roots[i]]) ==
		    NULL;
		want += need[i];
	}
	if (want == 0)
		return (-1);
	if ((pc = calloc(1, sizeof *pc)) == NULL)
		return (CL_OUT_OF_HOST_MEMORY);
	pc->c.d.fn = vcl_progcheck_done;
	pc->c.d.s = s;
	pc->c.platform = be->platform_index;
	pc->c.timeout_ms = s->srv->limits.bincheck_s * 1000;
	pc->seq = req->seq;
	pc->id = m->id;
	pc->ctx = m->context;
	pc->charged = sizeof *pc;
	for (i = 0; i < m->n_binaries; i++)
		pc->charged += m->binaries[i].len;
	if (vcl_session_charge(s, pc->charged) != 0) {
		pc->charged = 0;
		vcl_progcheck_free(pc);
		return (CL_OUT_OF_RESOURCES);
	}
	for (i = 0, k = 0; i < m->n_binaries; i++, pc->n++) {
		pc->idx[i] = m->devices[i];
		pc->bins[i].len = m->binaries[i].len;
		if ((pc->bins[i].data = malloc(m->binaries[i].len)) == NULL) {
			vcl_progcheck_free(pc);
			return (CL_OUT_OF_HOST_MEMORY);
		}
		memcpy(pc->bins[i].data, m->binaries[i].data,
		    m->binaries[i].len);
		memcpy(pc->sha[i], sha[i], sizeof pc->sha[i]);
		if (!need[i])
			continue;
		pc->pos[k] = i;
		pc->c.dev[k] = be->all_index[roots[i]];
		pc->c.bins[k] = pc->bins[i].data;
		pc->c.lens[k++] = pc->bins[i].len;
	}
	pc->c.n = (uint32_t)k;
	vcl_session_ref(s);
	s->jobs++;
	if (vcl_bincheck_start(s->srv, &pc->c) != 0) {
		s->jobs--;
		vcl_session_unref(s);
		vcl_progcheck_free(pc);
		return (CL_OUT_OF_RESOURCES);
	}
	s->bincheck = &pc->c;
	vcl_session_pause(s);
	return (CL_SUCCESS);
}

/*
 * CreateProgramFrom: a program from binaries (one per listed device), of
 * built-in kernels, or from IL. Synchronous: the runtime's error and each
 * device's binary status are the answer; binaries a check must try first
 * are answered when it is over.
 */
void
vcl_op_create_program_from(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__CreateProgramFrom	*m = req->create_program_from;
	struct vcl_hobj			*o, *ctx;
	cl_device_id			 devs[64];
	const unsigned char		*bins[64];
	uint8_t				 sha[64][SHA256_DIGEST_LENGTH];
	size_t				 lens[64], i, j;
	int32_t				 st[64];
	uint32_t			 root, roots[64];
	int				 modes;
	cl_int				 err = CL_SUCCESS, cerr;

	if ((o = vcl_session_add(s, m->id, VCL_KIND_PROGRAM)) == NULL)
		return;
	modes = (m->n_binaries > 0) + (m->builtin_kernels != NULL) +
	    (m->has_il != 0);
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (o->error != CL_SUCCESS)
		err = o->error;		/* over the object limit */
	else if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else if (ctx->error != CL_SUCCESS)
		err = ctx->error;
	else if (modes != 1 || (m->has_il ? m->n_devices != 0 :
	    m->n_devices == 0) || m->n_devices > 64 || (m->n_binaries > 0 &&
	    m->n_binaries != m->n_devices) || (m->has_il && m->il.len == 0))
		err = CL_INVALID_VALUE;
	for (i = 0; err == CL_SUCCESS && i < m->n_devices; i++) {
		if ((devs[i] = vcl_session_device(s, m->devices[i],
		    &root)) == NULL) {
			err = CL_INVALID_DEVICE;
			break;
		}
		roots[i] = root;
		for (j = 0; j < i; j++)
			if (devs[j] == devs[i])
				err = CL_INVALID_DEVICE;
		if (m->n_binaries > 0) {
			bins[i] = m->binaries[i].data;
			lens[i] = m->binaries[i].len;
			st[i] = CL_INVALID_VALUE;
			if (lens[i] == 0)
				err = CL_INVALID_VALUE;
			/* Each binary hashed once: every lookup takes this. */
			SHA256(bins[i], lens[i], sha[i]);
		}
	}
	/*
	 * A runtime's binary may carry native code it will load and run
	 * (PoCL's holds the kernels' compiled shared objects): only binaries
	 * this server handed out are taken, unless the operator trusts every
	 * token holder (--trust-binaries).
	 */
	for (i = 0; err == CL_SUCCESS && m->n_binaries > 0 &&
	    !s->srv->trust_binaries && i < m->n_binaries; i++)
		if (vcl_binrec_find(sha[i], VCL_BINREC_MADE) == NULL) {
			st[i] = CL_INVALID_BINARY;
			err = CL_INVALID_BINARY;
			vcl_session_warn(s, "program %llu: a binary this server "
			    "did not make refused (--trust-binaries)",
			    (unsigned long long)m->id);
		}
	/*
	 * Trusted, a binary still reaches this process's runtime only once
	 * a child process made and built it: a runtime may crash on a binary
	 * cut short (PoCL 3.1 does), and would take every session with it.
	 */
	if (err == CL_SUCCESS && m->n_binaries > 0 && s->srv->trust_binaries &&
	    (cerr = vcl_progcheck_start(s, req, roots,
	    (const uint8_t (*)[SHA256_DIGEST_LENGTH])sha)) != -1) {
		if (cerr == CL_SUCCESS)
			return;		/* answered when it is over */
		err = cerr;
	}
	if (err == CL_SUCCESS && m->n_binaries > 0)
		err = vcl_program_from_binaries(o, ctx->u.ctx,
		    (cl_uint)m->n_devices, devs, lens, bins,
		    (const uint8_t (*)[SHA256_DIGEST_LENGTH])sha, st);
	else if (err == CL_SUCCESS && m->builtin_kernels != NULL) {
		if (!vcl_builtin_ok(devs, m->n_devices, m->builtin_kernels))
			err = CL_INVALID_VALUE;
		else
			o->u.prog = clCreateProgramWithBuiltInKernels(
			    ctx->u.ctx, (cl_uint)m->n_devices, devs,
			    m->builtin_kernels, &err);
	}
	else if (err == CL_SUCCESS)
		o->u.prog = clCreateProgramWithIL(ctx->u.ctx, m->il.data,
		    m->il.len, &err);
	if (o->u.prog == NULL && err == CL_SUCCESS)
		err = CL_OUT_OF_RESOURCES;
	o->error = err;
	vcl_program_from_reply(s, req->seq, err, st, m->n_binaries > 0 &&
	    m->n_binaries == m->n_devices && m->n_devices <= 64 ?
	    m->n_devices : 0);
}

/* The link options a client may pass (OpenCL 3.0, 5.8.6); others refused. */
static int
vcl_link_options_ok(const char *opts)
{
	static const char	*ok[] = {
		"-create-library", "-enable-link-options",
		"-cl-denorms-are-zero", "-cl-no-signed-zeros",
		"-cl-unsafe-math-optimizations", "-cl-finite-math-only",
		"-cl-fast-relaxed-math", "-cl-no-subgroup-ifp",
	};
	size_t			 i, n;

	if (opts == NULL)
		return (1);
	if (strlen(opts) > 4096)
		return (0);
	while (*opts != '\0') {
		if (*opts == ' ' || *opts == '\t') {
			opts++;
			continue;
		}
		n = strcspn(opts, " \t");
		for (i = 0; i < sizeof ok / sizeof ok[0]; i++)
			if (strlen(ok[i]) == n && strncmp(opts, ok[i], n) == 0)
				break;
		if (i == sizeof ok / sizeof ok[0])
			return (0);
		opts += n;
	}
	return (1);
}

/*
 * True when link input p holds a compiled object or a library for dev,
 * its compile not failed: the input's devices are the runtime's own
 * answer (a device not among them has none).
 */
static int
vcl_link_input_has(cl_program p, cl_device_id dev)
{
	cl_device_id		 devs[64];
	cl_program_binary_type	 t;
	cl_build_status		 st;
	cl_uint			 n = 0, i;

	if (clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof n, &n,
	    NULL) != CL_SUCCESS || n == 0 || n > 64 || clGetProgramInfo(p,
	    CL_PROGRAM_DEVICES, n * sizeof devs[0], devs, NULL) != CL_SUCCESS)
		return (0);
	for (i = 0; i < n && devs[i] != dev; i++)
		;
	return (i < n && clGetProgramBuildInfo(p, dev, CL_PROGRAM_BINARY_TYPE,
	    sizeof t, &t, NULL) == CL_SUCCESS &&
	    (t == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT ||
	    t == CL_PROGRAM_BINARY_TYPE_LIBRARY) &&
	    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_STATUS, sizeof st,
	    &st, NULL) == CL_SUCCESS && st != CL_BUILD_ERROR);
}

/*
 * clLinkProgram's rule for its inputs, device by device of the link (the
 * listed ones, or the context's): every input holds a compiled object or
 * a library for the device, and it is linked for it; none does, and it
 * gets no executable (left out of the runtime's link); some do, and the
 * link is CL_INVALID_OPERATION, as when no device is left. An input of
 * another context is CL_INVALID_PROGRAM (the spec's code for an input
 * that is no valid program of the link; PoCL links it unchecked). The
 * runtime never sees an input without a compiled object for a device it
 * links: PoCL asserts (aborting the server) on an input whose compile
 * failed, and NVIDIA's linker aborted the server (LLVM: "Invalid bitcode
 * signature") on an executable input. Returns CL_SUCCESS with b's devices
 * reduced to those linked.
 */
static cl_int
vcl_link_inputs_check(struct vcl_build *b)
{
	cl_context	 c;
	cl_uint		 i, kept = 0;
	size_t		 k, have;

	for (k = 0; k < b->ninputs; k++)
		if (clGetProgramInfo(b->inputs[k], CL_PROGRAM_CONTEXT,
		    sizeof c, &c, NULL) != CL_SUCCESS || c != b->ctx)
			return (CL_INVALID_PROGRAM);
	for (i = 0; i < b->ndevs; i++) {
		for (k = 0, have = 0; k < b->ninputs; k++)
			have += vcl_link_input_has(b->inputs[k], b->devs[i]);
		if (have != 0 && have != b->ninputs)
			return (CL_INVALID_OPERATION);
		if (have == 0)
			continue;	/* no executable for it */
		b->devs[kept] = b->devs[i];
		b->idx[kept++] = b->idx[i];
	}
	if (kept == 0)
		return (CL_INVALID_OPERATION);
	b->ndevs = kept;
	return (CL_SUCCESS);
}

/*
 * LinkProgram: a new program from compiled programs of this session,
 * linked on a worker (the loop never waits), answered like a build. The
 * inputs are retained, and their kept sources copied, for the link's
 * size probe: the client may release them meanwhile.
 */
void
vcl_op_link_program(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__LinkProgram	*m = req->link_program;
	struct vcl_backend	*be = &s->srv->be;
	struct vcl_hobj		*o, *ctx, *in;
	struct vcl_build	*b = NULL;
	cl_uint			 n = 0;
	uint32_t		 root;
	size_t			 i;
	cl_int			 err = CL_SUCCESS;

	if ((o = vcl_session_add(s, m->id, VCL_KIND_PROGRAM)) == NULL)
		return;
	ctx = vcl_handle_get(&s->handles, m->context, VCL_KIND_CONTEXT);
	if (o->error != CL_SUCCESS)
		err = o->error;
	else if (ctx == NULL)
		err = CL_INVALID_CONTEXT;
	else if (ctx->error != CL_SUCCESS)
		err = ctx->error;
	else if (m->n_programs == 0 || m->n_programs > VCL_LINK_INPUTS_MAX)
		err = CL_INVALID_VALUE;
	else if (m->n_devices > be->ndevices + VCL_SUBDEVICES_MAX)
		err = CL_INVALID_DEVICE;
	else if (!vcl_link_options_ok(m->options))
		err = CL_INVALID_LINKER_OPTIONS;
	for (i = 0; err == CL_SUCCESS && i < m->n_programs; i++) {
		in = vcl_handle_get(&s->handles, m->programs[i],
		    VCL_KIND_PROGRAM);
		if (in == NULL || in->u.prog == NULL)
			err = CL_INVALID_PROGRAM;
		else if (in->error != CL_SUCCESS)
			err = in->error;
		else if (in->building)
			err = CL_INVALID_OPERATION;
	}
	for (i = 0; err == CL_SUCCESS && i < m->n_devices; i++)
		if (vcl_session_device(s, m->devices[i], &root) == NULL)
			err = CL_INVALID_DEVICE;
	if (err == CL_SUCCESS && ((b = calloc(1, sizeof *b)) == NULL ||
	    (b->inputs = calloc(m->n_programs, sizeof *b->inputs)) == NULL ||
	    (b->inids = calloc(m->n_programs, sizeof *b->inids)) == NULL ||
	    (b->ipsrc = calloc(m->n_programs, sizeof *b->ipsrc)) == NULL))
		err = CL_OUT_OF_HOST_MEMORY;
	if (err != CL_SUCCESS)
		goto fail;
	b->d.s = s;
	b->mode = VCL_BUILD_LINK;
	b->ctx = ctx->u.ctx;
	clRetainContext(b->ctx);
	for (i = 0; i < m->n_programs; i++, b->ninputs++) {
		in = vcl_handle_get(&s->handles, m->programs[i],
		    VCL_KIND_PROGRAM);
		b->inputs[i] = in->u.prog;
		b->inids[i] = m->programs[i];
		clRetainProgram(b->inputs[i]);
		if (in->psrc != NULL && (b->ipsrc[i] =
		    malloc(in->psrc->size)) != NULL)
			memcpy(b->ipsrc[i], in->psrc, in->psrc->size);
	}
	if (m->options != NULL && (b->options = strdup(m->options)) == NULL) {
		err = CL_OUT_OF_HOST_MEMORY;
		goto fail;
	}
	/* The listed devices, or every device of the context. */
	if (m->n_devices > 0)
		n = (cl_uint)m->n_devices;
	else if (clGetContextInfo(b->ctx, CL_CONTEXT_NUM_DEVICES, sizeof n, &n,
	    NULL) != CL_SUCCESS || n == 0 || n > be->ndevices +
	    VCL_SUBDEVICES_MAX)
		err = CL_INVALID_CONTEXT;
	if (err == CL_SUCCESS && ((b->devs = calloc(n, sizeof *b->devs)) ==
	    NULL || (b->idx = calloc(n, sizeof *b->idx)) == NULL))
		err = CL_OUT_OF_HOST_MEMORY;
	if (err != CL_SUCCESS)
		goto fail;
	if (m->n_devices > 0)
		for (i = 0; i < n; i++)
			b->devs[i] = vcl_session_device(s, m->devices[i],
			    &root);
	else if (clGetContextInfo(b->ctx, CL_CONTEXT_DEVICES,
	    n * sizeof *b->devs, b->devs, NULL) != CL_SUCCESS) {
		err = CL_INVALID_CONTEXT;
		goto fail;
	}
	for (i = 0; i < n; i++)
		b->idx[i] = vcl_session_device_index(s, b->devs[i]);
	b->ndevs = n;
	if ((err = vcl_link_inputs_check(b)) != CL_SUCCESS)
		goto fail;
	b->seq = req->seq;
	b->prog_id = m->id;
	b->d.fn = vcl_build_done;
	vcl_session_ref(s);
	s->jobs++;
	o->building = 1;
	if (vcl_workers_run(s->srv->workers, vcl_build_run, b) == 0) {
		vcl_link_inputs_mark(s, b, 1);
		return;
	}
	o->building = 0;
	s->jobs--;
	vcl_session_unref(s);
	err = CL_OUT_OF_HOST_MEMORY;
fail:
	o->error = err;
	vcl_session_reply(s, req->seq, err, err == CL_INVALID_LINKER_OPTIONS ?
	    "link options other than -create-library, -enable-link-options "
	    "and the math options are refused" : NULL);
	if (b != NULL)
		vcl_build_free(b);
}

/* A GetBinary on a worker: PoCL makes the binary when asked for it. */
struct vcl_getbin {
	struct vcl_done		 d;		/* must stay first */
	cl_program		 prog;		/* a reference of its own */
	cl_device_id		 dev;
	cl_device_id		 root;		/* dev's root device */
	uint64_t		 seq;
	uint64_t		 prog_id;
	struct vcl_tsizes	*ts;		/* the program's, a copy */
	unsigned char		*bin;
	size_t			 len;
	cl_int			 err;
};

/*
 * Worker: the program's binary for one device. PoCL 3.1 generates the
 * code of every kernel when asked for the sizes or the binaries (seconds
 * for a program of many kernels): never on the loop. A program of a
 * context made on a sub-device lists the sub-device's root device in
 * PoCL 3.1 (its context does too): the root's binary is the sub-device's.
 */
static void
vcl_getbin_run(void *arg)
{
	struct vcl_getbin	*g = arg;
	cl_device_id		*devs = NULL;
	size_t			*sizes = NULL;
	unsigned char		**bins = NULL;
	cl_uint			 n = 0, i = 0;
	cl_int			 err;

	if ((err = clGetProgramInfo(g->prog, CL_PROGRAM_NUM_DEVICES,
	    sizeof n, &n, NULL)) == CL_SUCCESS && (n == 0 || n > 64))
		err = CL_INVALID_PROGRAM;
	if (err == CL_SUCCESS && ((devs = calloc(n, sizeof *devs)) == NULL ||
	    (sizes = calloc(n, sizeof *sizes)) == NULL ||
	    (bins = calloc(n, sizeof *bins)) == NULL))
		err = CL_OUT_OF_HOST_MEMORY;
	if (err == CL_SUCCESS)
		err = clGetProgramInfo(g->prog, CL_PROGRAM_DEVICES,
		    n * sizeof *devs, devs, NULL);
	if (err == CL_SUCCESS)
		err = clGetProgramInfo(g->prog, CL_PROGRAM_BINARY_SIZES,
		    n * sizeof *sizes, sizes, NULL);
	for (i = 0; err == CL_SUCCESS && i < n; i++)
		if (devs[i] == g->dev)
			break;
	if (err == CL_SUCCESS && i == n && g->root != g->dev)
		for (i = 0; i < n; i++)
			if (devs[i] == g->root)
				break;
	if (err == CL_SUCCESS && i == n)
		err = CL_INVALID_DEVICE;	/* not a device of the program */
	else if (err == CL_SUCCESS && sizes[i] > VCL_BINARY_MAX)
		err = CL_OUT_OF_RESOURCES;
	else if (err == CL_SUCCESS && sizes[i] > 0 &&
	    (bins[i] = malloc(sizes[i])) == NULL)
		err = CL_OUT_OF_HOST_MEMORY;
	/* Only this device's entry is asked for: the others stay NULL. */
	if (err == CL_SUCCESS && sizes[i] > 0 && (err =
	    clGetProgramInfo(g->prog, CL_PROGRAM_BINARIES, n * sizeof *bins,
	    bins, NULL)) == CL_SUCCESS) {
		g->bin = bins[i];
		g->len = sizes[i];
		bins[i] = NULL;
	}
	g->err = err;
	for (i = 0; bins != NULL && i < n; i++)
		free(bins[i]);
	free(bins);
	free(sizes);
	free(devs);
	vcl_server_done_push(g->d.s->srv, &g->d);
}

/* Loop: the binary is made; record it and answer. */
static void
vcl_getbin_done(struct vcl_done *d)
{
	struct vcl_getbin	*g = (struct vcl_getbin *)d;
	struct vcl_session	*s = d->s;
	struct vcl_hobj		*o;
	Vcl__Reply		 r = VCL__REPLY__INIT;
	Vcl__ProgramResult	 pr = VCL__PROGRAM_RESULT__INIT;

	s->jobs--;
	if (s->dead)
		goto out;
	if ((o = vcl_handle_held(&s->handles, g->prog_id, VCL_KIND_PROGRAM)) !=
	    NULL)
		o->building = 0;
	r.seq = g->seq;
	r.status = g->err;
	if (g->err == CL_SUCCESS) {
		if (g->bin != NULL) {
			uint8_t	sha[SHA256_DIGEST_LENGTH];

			SHA256(g->bin, g->len, sha);
			vcl_binrec_put(sha, VCL_BINREC_MADE, g->ts);
			pr.binary.data = g->bin;
			pr.binary.len = g->len;
		}
		pr.has_binary = 1;
		r.result_case = VCL__REPLY__RESULT_PROGRAM;
		r.program = &pr;
	}
	vcl_session_reply_msg(s, &r);
out:
	clReleaseProgram(g->prog);
	free(g->bin);
	free(g->ts);
	free(g);
	vcl_session_unref(s);
}

/*
 * GetBinary: the runtime's binary of a program for one device, made on a
 * worker; the program counts as building meanwhile (no build, kernel or
 * link of it runs alongside).
 */
void
vcl_op_get_binary(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__GetBinary	*m = req->get_binary;
	struct vcl_hobj		*o;
	struct vcl_getbin	*g = NULL;
	cl_device_id		 dev = NULL;
	uint32_t		 root;
	cl_int			 err = CL_SUCCESS;

	o = vcl_handle_get(&s->handles, m->program, VCL_KIND_PROGRAM);
	if (o == NULL || (o->error == CL_SUCCESS && o->u.prog == NULL))
		err = CL_INVALID_PROGRAM;
	else if (o->error != CL_SUCCESS)
		err = o->error;
	else if (o->building || o->linking > 0)
		err = CL_INVALID_OPERATION;	/* a job of it runs */
	else if ((dev = vcl_session_device(s, m->device, &root)) == NULL)
		err = CL_INVALID_DEVICE;
	else if ((g = calloc(1, sizeof *g)) == NULL || (o->tsizes != NULL &&
	    (g->ts = vcl_tsizes_dup(o->tsizes)) == NULL))
		err = CL_OUT_OF_HOST_MEMORY;
	if (err != CL_SUCCESS)
		goto fail;
	g->d.fn = vcl_getbin_done;
	g->d.s = s;
	g->prog = o->u.prog;
	clRetainProgram(g->prog);
	g->dev = dev;
	g->root = s->srv->be.devices[root];
	g->seq = req->seq;
	g->prog_id = m->program;
	vcl_session_ref(s);
	s->jobs++;
	o->building = 1;
	if (vcl_workers_run(s->srv->workers, vcl_getbin_run, g) == 0)
		return;
	o->building = 0;
	s->jobs--;
	vcl_session_unref(s);
	clReleaseProgram(g->prog);
	err = CL_OUT_OF_HOST_MEMORY;
fail:
	if (g != NULL)
		free(g->ts);
	free(g);
	vcl_session_reply(s, req->seq, err, NULL);
}

/* SetSpecConstant: clSetProgramSpecializationConstant, synchronous. */
void
vcl_op_set_spec_constant(struct vcl_session *s, const Vcl__Request *req,
    struct vcl_bulk *bulk)
{
	const Vcl__SetSpecConstant	*m = req->set_spec_constant;
	struct vcl_hobj			*o;
	size_t				 il = 0;
	cl_int				 err;

	o = vcl_handle_get(&s->handles, m->program, VCL_KIND_PROGRAM);
	if (o == NULL || (o->error == CL_SUCCESS && o->u.prog == NULL))
		err = CL_INVALID_PROGRAM;
	else if (o->error != CL_SUCCESS)
		err = o->error;
	else if (o->building || o->linking > 0)
		err = CL_INVALID_OPERATION;	/* a job of it runs */
	else if (m->value.len == 0)
		err = CL_INVALID_VALUE;
	/* Only a program from IL has them (PoCL 3.1 asserts on others). */
	else if (clGetProgramInfo(o->u.prog, CL_PROGRAM_IL, 0, NULL, &il) !=
	    CL_SUCCESS || il == 0)
		err = CL_INVALID_PROGRAM;
	else
		err = clSetProgramSpecializationConstant(o->u.prog, m->spec_id,
		    m->value.len, m->value.data);
	vcl_session_reply(s, req->seq, err, NULL);
}
