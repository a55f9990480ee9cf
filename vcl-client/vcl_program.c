/*
 * vcl_program.c - programs (built on every node of their context), kernels
 * (arguments kept here, sent with each launch) and kernel launches.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vcl_client.h"
#include "vcl_conn.h"
#include "vcl_context.h"
#include "vcl_event.h"
#include "vcl_image.h"
#include "vcl_include.h"
#include "vcl_info.h"
#include "vcl_log.h"
#include "vcl_mem.h"
#include "vcl_object.h"
#include "vcl_platform.h"
#include "vcl_program.h"
#include "vcl_sampler.h"

static void	vcl_program_forget_binaries(cl_program);

/* Drop a reference; the last one releases the program on its nodes. */
void
vcl_program_unref(cl_program p)
{
	cl_uint	i;
	int	n;

	if (!vcl_unref(p))
		return;
	for (n = 0; n < vcl_nnodes(); n++)
		if (p->nodes & (1ull << n))
			vcl_node_release(vcl_node_get(n),
			    VCL__KIND__KIND_PROGRAM, p->obj.id);
	for (i = 0; p->build != NULL && i < p->ctx->ndevices; i++)
		free(p->build[i].log);
	free(p->build);
	vcl_program_forget_binaries(p);
	free(p->devs);
	free(p->source);
	free(p->options);
	free(p->kernel_names);
	pthread_mutex_destroy(&p->lock);
	vcl_context_unref(p->ctx);
	vcl_object_free(p);
}

/* Drop the binaries fetched from the nodes: the program changed. */
static void
vcl_program_forget_binaries(cl_program p)
{
	cl_uint	i;

	for (i = 0; p->bins != NULL && i < p->ctx->ndevices; i++)
		free(p->bins[i]);
	free(p->bins);
	free(p->binlens);
	p->bins = NULL;
	p->binlens = NULL;
}

/*
 * The node answering a program's queries: that of its first device whose
 * node lives (a context's lost node fails them all), else the first's.
 */
static struct vcl_node *
vcl_program_node(cl_program p)
{
	cl_device_id	*devs = p->devs != NULL ? p->devs : p->ctx->devices;
	cl_uint		 nd = p->devs != NULL ? p->ndevs : p->ctx->ndevices;
	cl_uint		 i;

	for (i = 0; i < nd; i++)
		if (vcl_node_status(devs[i]->node) == CL_SUCCESS)
			return (devs[i]->node);
	return (devs[0]->node);
}

/*
 * A build, compile or link on node n that failed with no result of its
 * own: the devices of node n the call names (num_devices of device_list,
 * or with none every device of the context) get CL_BUILD_ERROR and log
 * why (NULL: their log is kept). A device the call does not name keeps
 * what it had (CL_BUILD_NONE, or an earlier call's result).
 */
static void
vcl_program_failed(cl_program p, struct vcl_node *n, cl_uint num_devices,
    const cl_device_id *device_list, const char *why)
{
	cl_uint	i, j;

	for (i = 0; i < p->ctx->ndevices; i++) {
		if (p->ctx->devices[i]->node != n)
			continue;
		for (j = 0; j < num_devices; j++)
			if (device_list[j] == p->ctx->devices[i])
				break;
		if (num_devices > 0 && j == num_devices)
			continue;	/* not one the call names */
		p->build[i].status = CL_BUILD_ERROR;
		if (why == NULL)
			continue;
		free(p->build[i].log);
		p->build[i].log = strdup(why);
	}
}

/*
 * A build, compile or link on node n, lost before or during it (e: the
 * call's failure, CL_SUCCESS before it), for the devices of the call
 * (num_devices of device_list, or with none every device of the
 * context): the node is left out, those of its devices' build status
 * CL_BUILD_ERROR, so the call goes on for its live devices. A node's own
 * failure to build (its reply came) is no loss.
 */
static int
vcl_program_lost(cl_program p, struct vcl_node *n, cl_int e,
    cl_uint num_devices, const cl_device_id *device_list)
{
	if (vcl_node_status(n) == CL_SUCCESS || e == CL_BUILD_PROGRAM_FAILURE ||
	    e == CL_COMPILE_PROGRAM_FAILURE || e == CL_LINK_PROGRAM_FAILURE)
		return (0);
	vcl_program_failed(p, n, num_devices, device_list,
	    "the device's node was lost");
	return (1);
}

/* A new program of a context, with no build yet; NULL: no memory. */
static cl_program
vcl_program_new(cl_context context)
{
	cl_program	p;
	cl_uint		i;

	if ((p = vcl_object_new(sizeof *p, VCL_KIND_PROGRAM)) == NULL)
		return (NULL);
	pthread_mutex_init(&p->lock, NULL);
	p->ctx = context;
	vcl_retain(context);
	p->nodes = context->nodes;
	if ((p->build = calloc(context->ndevices, sizeof *p->build)) == NULL) {
		vcl_program_unref(p);
		return (NULL);
	}
	for (i = 0; i < context->ndevices; i++)
		p->build[i].status = CL_BUILD_NONE;
	return (p);
}

cl_program CL_API_CALL
vcl_clCreateProgramWithSource(cl_context context, cl_uint count,
    const char **strings, const size_t *lengths, cl_int *errcode_ret)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateProgram	 m = VCL__CREATE_PROGRAM__INIT;
	cl_program		 p = NULL;
	size_t			 len = 0, l;
	cl_uint			 i;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF(count == 0 || strings == NULL, CL_INVALID_VALUE);
	for (i = 0; i < count; i++) {
		VCL_GOTO_IF(strings[i] == NULL, CL_INVALID_VALUE);
		len += lengths != NULL && lengths[i] != 0 ? lengths[i] :
		    strlen(strings[i]);
	}
	VCL_GOTO_IF((p = vcl_program_new(context)) == NULL,
	    CL_OUT_OF_HOST_MEMORY);
	if ((p->source = malloc(len + 1)) == NULL) {
		err = CL_OUT_OF_HOST_MEMORY;
		goto out;
	}
	for (i = 0, len = 0; i < count; i++) {
		l = lengths != NULL && lengths[i] != 0 ? lengths[i] :
		    strlen(strings[i]);
		memcpy(p->source + len, strings[i], l);
		len += l;
	}
	p->source[len] = '\0';
	p->source_len = len;
	m.id = p->obj.id;
	m.context = context->obj.id;
	m.source.data = (uint8_t *)p->source;
	m.source.len = len;
	req.call_case = VCL__REQUEST__CALL_CREATE_PROGRAM;
	req.create_program = &m;
	err = vcl_node_send_live(context->nodes, &req);
out:
	if (err != CL_SUCCESS && p != NULL) {
		vcl_program_unref(p);
		p = NULL;
	}
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (p);
}

cl_int CL_API_CALL
vcl_clRetainProgram(cl_program program)
{
	if (!vcl_is(program, VCL_KIND_PROGRAM))
		return (CL_INVALID_PROGRAM);
	vcl_retain(program);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clReleaseProgram(cl_program program)
{
	if (!vcl_is(program, VCL_KIND_PROGRAM))
		return (CL_INVALID_PROGRAM);
	vcl_program_unref(program);
	return (CL_SUCCESS);
}

/* Position of a device in the context's list, or -1. */
static int
vcl_ctx_index(cl_context ctx, cl_device_id d)
{
	cl_uint	i;

	for (i = 0; i < ctx->ndevices; i++)
		if (ctx->devices[i] == d)
			return ((int)i);
	return (-1);
}

/* Record one node's build results for the program's devices. */
static void
vcl_build_record(cl_program p, struct vcl_node *n, const Vcl__BuildResult *br)
{
	cl_uint	i;
	size_t	k, len = 0;

	for (k = 0; k < br->n_devices; k++) {
		for (i = 0; i < p->ctx->ndevices; i++) {
			if (p->ctx->devices[i]->node != n ||
			    p->ctx->devices[i]->index != br->devices[k]->device)
				continue;
			p->build[i].status = br->devices[k]->status;
			free(p->build[i].log);
			p->build[i].log = br->devices[k]->log != NULL ?
			    strdup(br->devices[k]->log) : NULL;
		}
	}
	if (br->n_kernel_names == 0 || p->kernel_names != NULL)
		return;
	for (k = 0; k < br->n_kernel_names; k++)
		len += strlen(br->kernel_names[k]) + 1;
	if ((p->kernel_names = calloc(1, len + 1)) == NULL)
		return;
	for (k = 0; k < br->n_kernel_names; k++) {
		if (k > 0)
			strcat(p->kernel_names, ";");
		strcat(p->kernel_names, br->kernel_names[k]);
	}
	p->nkernels = br->n_kernel_names;
}

/*
 * The headers a build ships: what the sources #include, found as a local
 * compiler (the runtime adds "-I.") would: beside the including header,
 * then in the current directory, then in each -I directory in order.
 */
struct vcl_hdrs {
	Vcl__Header	**v;
	size_t		  n;
	uint64_t	  bytes;
	char		**dirs;		/* the -I directories */
	size_t		  ndirs;
	int		  full;		/* a limit was reached: warned once */
	int		  oom;
	/* The file being scanned: dir and name of a header, or the source. */
	uint32_t	  cur_dir;
	const char	 *cur_name;	/* NULL: the program's source */
};

/* Append name to the directory part of base ("" for none), normalized. */
static char *
vcl_hdr_join(const char *base, const char *name, size_t len)
{
	const char	*slash = base != NULL ? strrchr(base, '/') : NULL;
	size_t		 bl = slash != NULL ? (size_t)(slash - base) + 1 : 0;
	char		*p, *q, *r;

	if ((p = malloc(bl + len + 1)) == NULL)
		return (NULL);
	if (bl > 0)
		memcpy(p, base, bl);
	memcpy(p + bl, name, len);
	p[bl + len] = '\0';
	/* Drop empty and "." components: the server takes neither. */
	for (q = r = p; *r != '\0'; ) {
		if (*r == '/') {
			r++;
			continue;
		}
		if (r[0] == '.' && (r[1] == '/' || r[1] == '\0')) {
			r++;
			continue;
		}
		if (q != p)
			*q++ = '/';
		while (*r != '\0' && *r != '/')
			*q++ = *r++;
	}
	*q = '\0';
	return (p);
}

/* Read a regular file of at most max bytes. NULL if none (or too big). */
static uint8_t *
vcl_hdr_read(const char *path, size_t max, size_t *lenp, int *toobig)
{
	struct stat	 st;
	uint8_t		*buf = NULL;
	size_t		 off = 0;
	ssize_t		 r;
	int		 fd;

	*toobig = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (NULL);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	if ((uint64_t)st.st_size > max) {
		*toobig = 1;
		goto out;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL)
		goto out;
	while (off < (size_t)st.st_size) {
		if ((r = read(fd, buf + off, (size_t)st.st_size - off)) <= 0) {
			if (r == -1 && errno == EINTR)
				continue;
			break;
		}
		off += (size_t)r;
	}
	*lenp = off;
out:
	close(fd);
	return (buf);
}

/* Ship the header (dir, name) if a file is there; 1 found, 0 not. */
static int
vcl_hdr_try(struct vcl_hdrs *h, uint32_t dir, char *name)
{
	Vcl__Header	**nv, *hd;
	char		 *path;
	uint8_t		 *data;
	size_t		  i, len = 0;
	int		  toobig;

	if (*name == '\0' || !vcl_include_name_ok(name, strlen(name)))
		return (0);
	for (i = 0; i < h->n; i++)
		if (h->v[i]->dir == dir && strcmp(h->v[i]->name, name) == 0)
			return (1);
	if (asprintf(&path, "%s/%s", dir == 0 ? "." : h->dirs[dir - 1],
	    name) == -1) {
		h->oom = 1;
		return (1);
	}
	data = vcl_hdr_read(path, VCL_INCLUDE_MAX_BYTES - h->bytes, &len,
	    &toobig);
	free(path);
	if (data == NULL && !toobig)
		return (0);
	if (data == NULL || h->n >= VCL_INCLUDE_MAX_HEADERS) {
		if (!h->full)
			vcl_log_warn("header %s and others not sent: over %d "
			    "headers or %u bytes", name,
			    VCL_INCLUDE_MAX_HEADERS, VCL_INCLUDE_MAX_BYTES);
		h->full = 1;
		free(data);
		return (1);
	}
	if ((nv = realloc(h->v, (h->n + 1) * sizeof *nv)) != NULL)
		h->v = nv;
	if (nv == NULL || (hd = malloc(sizeof *hd)) == NULL) {
		free(data);
		h->oom = 1;
		return (1);
	}
	vcl__header__init(hd);
	if ((hd->name = strdup(name)) == NULL) {
		free(hd);
		free(data);
		h->oom = 1;
		return (1);
	}
	hd->has_dir = dir != 0;
	hd->dir = dir;
	hd->data.data = data;
	hd->data.len = len;
	h->v[h->n++] = hd;
	h->bytes += len;
	return (1);
}

/* Scanner callback: find one #include'd file and ship it. */
static void
vcl_hdr_found(void *arg, const char *name, size_t len, int angled)
{
	struct vcl_hdrs	*h = arg;
	char		*n;
	uint32_t	 k;
	int		 found = 0;

	if (h->oom)
		return;
	/* A quoted name is looked up beside the header naming it first. */
	if (!angled && h->cur_name != NULL) {
		if ((n = vcl_hdr_join(h->cur_name, name, len)) == NULL) {
			h->oom = 1;
			return;
		}
		found = vcl_hdr_try(h, h->cur_dir, n);
		free(n);
	}
	if ((n = vcl_hdr_join(NULL, name, len)) == NULL) {
		h->oom = 1;
		return;
	}
	for (k = 0; !found && k <= h->ndirs; k++)
		found = vcl_hdr_try(h, k, n);
	free(n);
}

/* Free the headers collected for a build. */
static void
vcl_hdrs_free(struct vcl_hdrs *h)
{
	size_t	i;

	for (i = 0; i < h->n; i++) {
		free(h->v[i]->name);
		free(h->v[i]->data.data);
		free(h->v[i]);
	}
	free(h->v);
	h->v = NULL;
	h->n = 0;
}

/*
 * Collect the headers source includes (recursively), dirs being the -I
 * directories of the build. Returns CL_SUCCESS or CL_OUT_OF_HOST_MEMORY.
 */
static cl_int
vcl_hdrs_collect(struct vcl_hdrs *h, const char *source, size_t len)
{
	size_t	i;

	h->cur_name = NULL;
	vcl_include_scan(source, len, vcl_hdr_found, h, NULL, 0);
	for (i = 0; i < h->n && !h->oom; i++) {
		h->cur_dir = h->v[i]->dir;
		h->cur_name = h->v[i]->name;
		vcl_include_scan((const char *)h->v[i]->data.data,
		    h->v[i]->data.len, vcl_hdr_found, h, NULL, 0);
	}
	return (h->oom ? CL_OUT_OF_HOST_MEMORY : CL_SUCCESS);
}

/*
 * Ship the in-memory headers of a clCompileProgram (input_headers, named
 * header_include_names) as headers of the current directory: the
 * server's build directory, where the compile runs. They go first, so a
 * file of the same name is not looked up.
 */
static cl_int
vcl_hdrs_inputs(struct vcl_hdrs *h, cl_uint n, const cl_program *ih,
    const char **names)
{
	Vcl__Header	*hd;
	char		*name;
	cl_uint		 i;

	if (n == 0)
		return (CL_SUCCESS);
	if (n > VCL_INCLUDE_MAX_HEADERS ||
	    (h->v = calloc(n, sizeof *h->v)) == NULL)
		return (n > VCL_INCLUDE_MAX_HEADERS ? CL_INVALID_VALUE :
		    CL_OUT_OF_HOST_MEMORY);
	for (i = 0; i < n; i++) {
		if ((name = vcl_hdr_join(NULL, names[i], strlen(names[i]))) ==
		    NULL)
			return (CL_OUT_OF_HOST_MEMORY);
		if (*name == '\0' || !vcl_include_name_ok(name, strlen(name))) {
			vcl_log_error("clCompileProgram: header name '%s' "
			    "refused: a relative path without '..' is needed",
			    names[i]);
			free(name);
			return (CL_INVALID_VALUE);
		}
		if ((hd = malloc(sizeof *hd)) == NULL) {
			free(name);
			return (CL_OUT_OF_HOST_MEMORY);
		}
		vcl__header__init(hd);
		hd->name = name;
		h->v[h->n++] = hd;
		if ((hd->data.data = malloc(ih[i]->source_len + 1)) == NULL)
			return (CL_OUT_OF_HOST_MEMORY);
		memcpy(hd->data.data, ih[i]->source, ih[i]->source_len);
		hd->data.len = ih[i]->source_len;
		h->bytes += hd->data.len;
	}
	return (h->bytes > VCL_INCLUDE_MAX_BYTES ? CL_INVALID_VALUE :
	    CL_SUCCESS);
}

/*
 * clBuildProgram and clCompileProgram: the sources' headers collected
 * here, the build run on every node holding a listed device (each
 * compiles for its own devices), the results recorded per device.
 */
static cl_int
vcl_program_build(cl_program p, cl_uint num_devices,
    const cl_device_id *device_list, const char *options, int compile,
    cl_uint nih, const cl_program *ih, const char **ih_names)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__BuildProgram	 m = VCL__BUILD_PROGRAM__INIT;
	Vcl__ToClient		*tc;
	struct vcl_include_opts	 io;
	struct vcl_hdrs		 hdrs;
	uint32_t		 idx[64];
	cl_uint			 i;
	char			 why[256];
	int			 n, busy, live = 0;
	cl_int			 err = CL_SUCCESS, e;

	memset(&hdrs, 0, sizeof hdrs);
	memset(&io, 0, sizeof io);
	if (vcl_include_options(options, NULL, &io, why, sizeof why) != 0) {
		vcl_log_error("%s", why);
		err = strcmp(why, "out of memory") == 0 ?
		    CL_OUT_OF_HOST_MEMORY : compile ?
		    CL_INVALID_COMPILER_OPTIONS : CL_INVALID_BUILD_OPTIONS;
		goto out;
	}
	hdrs.dirs = io.dirs;
	hdrs.ndirs = io.ndirs;
	if ((err = vcl_hdrs_inputs(&hdrs, nih, ih, ih_names)) != CL_SUCCESS ||
	    (err = vcl_hdrs_collect(&hdrs, p->source, p->source_len)) !=
	    CL_SUCCESS)
		goto out;
	pthread_mutex_lock(&p->lock);
	busy = p->building;
	p->building = 1;
	pthread_mutex_unlock(&p->lock);
	VCL_GOTO_IF(busy, CL_INVALID_OPERATION);
	free(p->options);
	p->options = options != NULL ? strdup(options) : NULL;
	free(p->kernel_names);
	p->kernel_names = NULL;
	p->nkernels = 0;
	p->notexec = compile;
	vcl_program_forget_binaries(p);

	m.program = p->obj.id;
	m.options = (char *)options;
	m.devices = idx;
	m.headers = hdrs.v;
	m.n_headers = hdrs.n;
	m.has_compile = compile;
	m.compile = compile;
	req.call_case = VCL__REQUEST__CALL_BUILD_PROGRAM;
	req.build_program = &m;
	for (n = 0; n < vcl_nnodes(); n++) {
		if (!(p->nodes & (1ull << n)))
			continue;
		m.n_devices = 0;
		for (i = 0; i < num_devices && m.n_devices < 64; i++)
			if (device_list[i]->node->index == n)
				idx[m.n_devices++] = device_list[i]->index;
		if (num_devices > 0 && m.n_devices == 0)
			continue;	/* no listed device on this node */
		if (vcl_program_lost(p, vcl_node_get(n), CL_SUCCESS,
		    num_devices, device_list))
			continue;
		e = vcl_node_call(vcl_node_get(n), &req, NULL, 0, NULL, 0, &tc);
		/* A failed build still reports its status and log. */
		if (tc != NULL && tc->reply->build != NULL)
			vcl_build_record(p, vcl_node_get(n), tc->reply->build);
		else if (e != CL_SUCCESS)
			vcl_program_failed(p, vcl_node_get(n), num_devices,
			    device_list, NULL);
		if (tc != NULL)
			vcl__to_client__free_unpacked(tc, NULL);
		if (e != CL_SUCCESS && vcl_program_lost(p, vcl_node_get(n), e,
		    num_devices, device_list))
			continue;
		if (e != CL_SUCCESS && err == CL_SUCCESS)
			err = e;
		live += e == CL_SUCCESS;
	}
	pthread_mutex_lock(&p->lock);
	p->building = 0;
	pthread_mutex_unlock(&p->lock);
	VCL_GOTO_IF(err == CL_SUCCESS && live == 0, CL_DEVICE_NOT_AVAILABLE);
out:
	vcl_hdrs_free(&hdrs);
	vcl_include_opts_free(&io);
	return (err);
}

/* Are the devices of a build call valid for the program? */
static cl_int
vcl_program_devices_ok(cl_program p, cl_uint num_devices,
    const cl_device_id *device_list)
{
	cl_uint	i, j;

	if ((device_list == NULL) != (num_devices == 0))
		return (CL_INVALID_VALUE);
	for (i = 0; i < num_devices; i++) {
		if (!vcl_is(device_list[i], VCL_KIND_DEVICE) ||
		    vcl_ctx_index(p->ctx, device_list[i]) < 0)
			return (CL_INVALID_DEVICE);
		for (j = 0; p->devs != NULL && j < p->ndevs; j++)
			if (p->devs[j] == device_list[i])
				break;
		if (p->devs != NULL && j == p->ndevs)
			return (CL_INVALID_DEVICE);
	}
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clBuildProgram(cl_program program, cl_uint num_devices,
    const cl_device_id *device_list, const char *options,
    void (CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data)
{
	cl_program	p = program;
	cl_int		err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(p, VCL_KIND_PROGRAM), CL_INVALID_PROGRAM);
	if ((err = vcl_program_devices_ok(p, num_devices, device_list)) !=
	    CL_SUCCESS)
		goto out;
	VCL_GOTO_IF(pfn_notify == NULL && user_data != NULL, CL_INVALID_VALUE);
	VCL_GOTO_IF(atomic_load(&p->kernels) > 0, CL_INVALID_OPERATION);
	err = vcl_program_build(p, num_devices, device_list, options, 0, 0,
	    NULL, NULL);
	/* A build that ran calls back, failed or not. */
	if (pfn_notify != NULL && err != CL_INVALID_BUILD_OPTIONS &&
	    err != CL_INVALID_OPERATION && err != CL_OUT_OF_HOST_MEMORY)
		pfn_notify(p, user_data);
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clCompileProgram(cl_program program, cl_uint num_devices,
    const cl_device_id *device_list, const char *options,
    cl_uint num_input_headers, const cl_program *input_headers,
    const char **header_include_names,
    void (CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data)
{
	cl_program	p = program;
	cl_uint		i;
	cl_int		err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(p, VCL_KIND_PROGRAM), CL_INVALID_PROGRAM);
	if ((err = vcl_program_devices_ok(p, num_devices, device_list)) !=
	    CL_SUCCESS)
		goto out;
	VCL_GOTO_IF(pfn_notify == NULL && user_data != NULL, CL_INVALID_VALUE);
	VCL_GOTO_IF(num_input_headers == 0 ? (input_headers != NULL ||
	    header_include_names != NULL) : (input_headers == NULL ||
	    header_include_names == NULL), CL_INVALID_VALUE);
	for (i = 0; i < num_input_headers; i++) {
		VCL_GOTO_IF(!vcl_is(input_headers[i], VCL_KIND_PROGRAM) ||
		    input_headers[i]->source == NULL, CL_INVALID_PROGRAM);
		VCL_GOTO_IF(header_include_names[i] == NULL, CL_INVALID_VALUE);
	}
	/* Only a program from source (or IL) compiles. */
	VCL_GOTO_IF(p->source == NULL && !p->il, CL_INVALID_OPERATION);
	VCL_GOTO_IF(atomic_load(&p->kernels) > 0, CL_INVALID_OPERATION);
	err = vcl_program_build(p, num_devices, device_list, options, 1,
	    num_input_headers, input_headers, header_include_names);
	if (pfn_notify != NULL && err != CL_INVALID_COMPILER_OPTIONS &&
	    err != CL_INVALID_OPERATION && err != CL_OUT_OF_HOST_MEMORY &&
	    err != CL_INVALID_VALUE)
		pfn_notify(p, user_data);
out:
	return (err);
}

/*
 * The nodes where a link is performed, of those of its devices (the
 * num_devices of device_list, or with none every device of the context):
 * the nodes with a device of the link for which an input holds a compiled
 * object or a library (its compile or link succeeded there). On the
 * others none does, and the specification says no link is performed for
 * their devices (no executable, status CL_BUILD_NONE), not an error: a
 * node asked would answer CL_INVALID_OPERATION (no device of its left to
 * link). With none left, all are asked, for the error. A lost node stays
 * (vcl_program_lost gives its devices of the link CL_BUILD_ERROR).
 */
static uint64_t
vcl_link_nodes(cl_context ctx, uint64_t nodes, cl_uint num_devices,
    const cl_device_id *device_list, cl_uint ninputs,
    const cl_program *inputs)
{
	uint64_t	has = 0, lost = 0;
	cl_uint		i, j, k;

	for (i = 0; i < ctx->ndevices; i++) {
		if (vcl_node_status(ctx->devices[i]->node) != CL_SUCCESS)
			lost |= 1ull << ctx->devices[i]->node->index;
		for (j = 0; j < num_devices; j++)
			if (device_list[j] == ctx->devices[i])
				break;
		if (num_devices > 0 && j == num_devices)
			continue;	/* not one the link names */
		for (k = 0; k < ninputs; k++)
			if (inputs[k]->build[i].status == CL_BUILD_SUCCESS)
				has |= 1ull << ctx->devices[i]->node->index;
	}
	return ((nodes & has & ~lost) != 0 ? nodes & (has | lost) : nodes);
}

cl_program CL_API_CALL
vcl_clLinkProgram(cl_context context, cl_uint num_devices,
    const cl_device_id *device_list, const char *options,
    cl_uint num_input_programs, const cl_program *input_programs,
    void (CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data,
    cl_int *errcode_ret)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__LinkProgram	 m = VCL__LINK_PROGRAM__INIT;
	Vcl__ToClient		*tc;
	cl_program		 p = NULL;
	uint64_t		*ids = NULL;
	uint32_t		 idx[64];
	cl_uint			 i;
	int			 n, live = 0;
	cl_int			 err = CL_SUCCESS, e;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF((device_list == NULL) != (num_devices == 0),
	    CL_INVALID_VALUE);
	VCL_GOTO_IF(num_input_programs == 0 || input_programs == NULL,
	    CL_INVALID_VALUE);
	VCL_GOTO_IF(pfn_notify == NULL && user_data != NULL, CL_INVALID_VALUE);
	for (i = 0; i < num_devices; i++)
		VCL_GOTO_IF(!vcl_is(device_list[i], VCL_KIND_DEVICE) ||
		    vcl_ctx_index(context, device_list[i]) < 0,
		    CL_INVALID_DEVICE);
	/* One of another context is no valid input: as the server says. */
	for (i = 0; i < num_input_programs; i++)
		VCL_GOTO_IF(!vcl_is(input_programs[i], VCL_KIND_PROGRAM) ||
		    input_programs[i]->ctx != context, CL_INVALID_PROGRAM);
	VCL_GOTO_IF((ids = calloc(num_input_programs, sizeof *ids)) == NULL ||
	    (p = vcl_program_new(context)) == NULL, CL_OUT_OF_HOST_MEMORY);
	for (i = 0; i < num_input_programs; i++)
		ids[i] = input_programs[i]->obj.id;
	if (num_devices > 0) {
		VCL_GOTO_IF((p->devs = calloc(num_devices, sizeof *p->devs)) ==
		    NULL, CL_OUT_OF_HOST_MEMORY);
		memcpy(p->devs, device_list, num_devices * sizeof *p->devs);
		p->ndevs = num_devices;
		p->nodes = 0;
		for (i = 0; i < num_devices; i++)
			p->nodes |= 1ull << device_list[i]->node->index;
	}
	p->nodes = vcl_link_nodes(context, p->nodes, num_devices, device_list,
	    num_input_programs, input_programs);
	p->notexec = options != NULL && strstr(options, "-create-library") !=
	    NULL;
	p->options = options != NULL ? strdup(options) : NULL;
	m.id = p->obj.id;
	m.context = context->obj.id;
	m.options = (char *)options;
	m.programs = ids;
	m.n_programs = num_input_programs;
	m.devices = idx;
	req.call_case = VCL__REQUEST__CALL_LINK_PROGRAM;
	req.link_program = &m;
	for (n = 0; n < vcl_nnodes(); n++) {
		if (!(p->nodes & (1ull << n)))
			continue;
		m.n_devices = 0;
		for (i = 0; i < num_devices && m.n_devices < 64; i++)
			if (device_list[i]->node->index == n)
				idx[m.n_devices++] = device_list[i]->index;
		if (vcl_program_lost(p, vcl_node_get(n), CL_SUCCESS,
		    num_devices, device_list))
			continue;
		e = vcl_node_call(vcl_node_get(n), &req, NULL, 0, NULL, 0, &tc);
		if (tc != NULL && tc->reply->build != NULL)
			vcl_build_record(p, vcl_node_get(n), tc->reply->build);
		if (tc != NULL)
			vcl__to_client__free_unpacked(tc, NULL);
		if (e != CL_SUCCESS && vcl_program_lost(p, vcl_node_get(n), e,
		    num_devices, device_list))
			continue;
		if (e != CL_SUCCESS && err == CL_SUCCESS)
			err = e;
		live += e == CL_SUCCESS;
	}
	VCL_GOTO_IF(err == CL_SUCCESS && live == 0, CL_DEVICE_NOT_AVAILABLE);
	/* As the node runtime does: a failed link gives no program. */
	if (err == CL_SUCCESS && pfn_notify != NULL)
		pfn_notify(p, user_data);
out:
	free(ids);
	if (err != CL_SUCCESS && p != NULL) {
		vcl_program_unref(p);
		p = NULL;
	}
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (p);
}

/*
 * clCreateProgramWithBinary, clCreateProgramWithBuiltInKernels and
 * clCreateProgramWithIL: each node holding a listed device (for IL,
 * every node of the context) creates its part, synchronously, so the
 * runtime's error and each device's binary status come back here.
 */
static cl_program
vcl_program_from(cl_context context, cl_uint num_devices,
    const cl_device_id *device_list, const size_t *lengths,
    const unsigned char **binaries, cl_int *binary_status,
    const char *builtin, const void *il, size_t il_len, cl_int *errp)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateProgramFrom	 m = VCL__CREATE_PROGRAM_FROM__INIT;
	Vcl__ToClient		*tc;
	ProtobufCBinaryData	 bins[64];
	cl_program		 p = NULL;
	uint32_t		 idx[64];
	cl_uint			 i, where[64];
	size_t			 k;
	int			 n, live = 0;
	cl_int			 err = CL_SUCCESS, e;

	VCL_GOTO_IF((p = vcl_program_new(context)) == NULL,
	    CL_OUT_OF_HOST_MEMORY);
	if (num_devices > 0) {
		VCL_GOTO_IF((p->devs = calloc(num_devices, sizeof *p->devs)) ==
		    NULL, CL_OUT_OF_HOST_MEMORY);
		memcpy(p->devs, device_list, num_devices * sizeof *p->devs);
		p->ndevs = num_devices;
		p->nodes = 0;
		for (i = 0; i < num_devices; i++)
			p->nodes |= 1ull << device_list[i]->node->index;
	}
	p->il = il != NULL;
	m.id = p->obj.id;
	m.context = context->obj.id;
	m.devices = idx;
	m.builtin_kernels = (char *)builtin;
	if (il != NULL) {
		m.has_il = 1;
		m.il.data = (uint8_t *)il;
		m.il.len = il_len;
	}
	req.call_case = VCL__REQUEST__CALL_CREATE_PROGRAM_FROM;
	req.create_program_from = &m;
	for (n = 0; n < vcl_nnodes(); n++) {
		if (!(p->nodes & (1ull << n)))
			continue;
		m.n_devices = 0;
		for (i = 0; i < num_devices && m.n_devices < 64; i++) {
			if (device_list[i]->node->index != n)
				continue;
			where[m.n_devices] = i;
			if (binaries != NULL) {
				bins[m.n_devices].data =
				    (uint8_t *)binaries[i];
				bins[m.n_devices].len = lengths[i];
			}
			idx[m.n_devices++] = device_list[i]->index;
		}
		m.binaries = binaries != NULL ? bins : NULL;
		m.n_binaries = binaries != NULL ? m.n_devices : 0;
		if (num_devices == 0 && vcl_program_lost(p, vcl_node_get(n),
		    CL_SUCCESS, 0, NULL))
			continue;
		e = vcl_node_call(vcl_node_get(n), &req, NULL, 0, NULL, 0, &tc);
		for (k = 0; binary_status != NULL && binaries != NULL &&
		    k < m.n_devices; k++)
			binary_status[where[k]] = tc != NULL &&
			    tc->reply->program != NULL &&
			    k < tc->reply->program->n_binary_status ?
			    tc->reply->program->binary_status[k] : e;
		if (tc != NULL)
			vcl__to_client__free_unpacked(tc, NULL);
		if (e != CL_SUCCESS && num_devices == 0 &&
		    vcl_program_lost(p, vcl_node_get(n), e, 0, NULL))
			continue;
		if (e != CL_SUCCESS && err == CL_SUCCESS)
			err = e;
		live += e == CL_SUCCESS;
	}
	VCL_GOTO_IF(err == CL_SUCCESS && live == 0, CL_DEVICE_NOT_AVAILABLE);
out:
	if (err != CL_SUCCESS && p != NULL) {
		vcl_program_unref(p);
		p = NULL;
	}
	*errp = err;
	return (p);
}

cl_program CL_API_CALL
vcl_clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
    const cl_device_id *device_list, const size_t *lengths,
    const unsigned char **binaries, cl_int *binary_status,
    cl_int *errcode_ret)
{
	cl_program	p = NULL;
	cl_uint		i, j;
	cl_int		err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF(num_devices == 0 || device_list == NULL ||
	    lengths == NULL || binaries == NULL, CL_INVALID_VALUE);
	VCL_GOTO_IF(num_devices > 64, CL_INVALID_DEVICE);
	for (i = 0; i < num_devices; i++) {
		VCL_GOTO_IF(!vcl_is(device_list[i], VCL_KIND_DEVICE) ||
		    vcl_ctx_index(context, device_list[i]) < 0,
		    CL_INVALID_DEVICE);
		for (j = 0; j < i; j++)
			VCL_GOTO_IF(device_list[j] == device_list[i],
			    CL_INVALID_DEVICE);
		VCL_GOTO_IF(lengths[i] == 0 || binaries[i] == NULL,
		    CL_INVALID_VALUE);
	}
	p = vcl_program_from(context, num_devices, device_list, lengths,
	    binaries, binary_status, NULL, NULL, 0, &err);
out:
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (p);
}

cl_program CL_API_CALL
vcl_clCreateProgramWithBuiltInKernels(cl_context context,
    cl_uint num_devices, const cl_device_id *device_list,
    const char *kernel_names, cl_int *errcode_ret)
{
	cl_program	p = NULL;
	cl_uint		i, j;
	cl_int		err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF(num_devices == 0 || device_list == NULL ||
	    kernel_names == NULL, CL_INVALID_VALUE);
	VCL_GOTO_IF(num_devices > 64, CL_INVALID_DEVICE);
	for (i = 0; i < num_devices; i++) {
		VCL_GOTO_IF(!vcl_is(device_list[i], VCL_KIND_DEVICE) ||
		    vcl_ctx_index(context, device_list[i]) < 0,
		    CL_INVALID_DEVICE);
		for (j = 0; j < i; j++)
			VCL_GOTO_IF(device_list[j] == device_list[i],
			    CL_INVALID_DEVICE);
	}
	p = vcl_program_from(context, num_devices, device_list, NULL, NULL,
	    NULL, kernel_names, NULL, 0, &err);
out:
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (p);
}

cl_program CL_API_CALL
vcl_clCreateProgramWithIL(cl_context context, const void *il, size_t length,
    cl_int *errcode_ret)
{
	cl_program	p = NULL;
	cl_int		err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(context, VCL_KIND_CONTEXT), CL_INVALID_CONTEXT);
	VCL_GOTO_IF(il == NULL || length == 0, CL_INVALID_VALUE);
	p = vcl_program_from(context, 0, NULL, NULL, NULL, NULL, NULL, il,
	    length, &err);
out:
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (p);
}

cl_int CL_API_CALL
vcl_clSetProgramSpecializationConstant(cl_program program, cl_uint spec_id,
    size_t spec_size, const void *spec_value)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__SetSpecConstant	 m = VCL__SET_SPEC_CONSTANT__INIT;
	int			 n, live = 0;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(program, VCL_KIND_PROGRAM), CL_INVALID_PROGRAM);
	VCL_GOTO_IF(!program->il, CL_INVALID_PROGRAM);
	VCL_GOTO_IF(spec_value == NULL || spec_size == 0, CL_INVALID_VALUE);
	m.program = program->obj.id;
	m.spec_id = spec_id;
	m.value.data = (uint8_t *)spec_value;
	m.value.len = spec_size;
	req.call_case = VCL__REQUEST__CALL_SET_SPEC_CONSTANT;
	req.set_spec_constant = &m;
	/* On every live node of the program; a lost one is left out. */
	for (n = 0; n < vcl_nnodes() && err == CL_SUCCESS; n++) {
		if (!(program->nodes & (1ull << n)) ||
		    vcl_node_status(vcl_node_get(n)) != CL_SUCCESS)
			continue;
		err = vcl_node_call(vcl_node_get(n), &req, NULL, 0, NULL, 0,
		    NULL);
		if (err != CL_SUCCESS && vcl_node_status(vcl_node_get(n)) !=
		    CL_SUCCESS)
			err = CL_SUCCESS;	/* lost during the call */
		else
			live += err == CL_SUCCESS;
	}
	VCL_GOTO_IF(err == CL_SUCCESS && live == 0, CL_DEVICE_NOT_AVAILABLE);
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clSetProgramReleaseCallback(cl_program program,
    void (CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data)
{
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(program, VCL_KIND_PROGRAM), CL_INVALID_PROGRAM);
	/*
	 * Deprecated in OpenCL 3.0: no device has program-scope global
	 * destructors here, so CL_INVALID_OPERATION, as PoCL answers.
	 */
	(void)pfn_notify;
	(void)user_data;
	err = CL_INVALID_OPERATION;
out:
	return (err);
}

/* A context device's binary of the program, fetched once from its node. */
static cl_int
vcl_program_binary(cl_program p, cl_uint i)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__GetBinary		 m = VCL__GET_BINARY__INIT;
	Vcl__ToClient		*tc = NULL;
	cl_device_id		 d = p->ctx->devices[i];
	cl_int			 err;

	if (p->bins == NULL && ((p->bins = calloc(p->ctx->ndevices,
	    sizeof *p->bins)) == NULL || (p->binlens = calloc(p->ctx->ndevices,
	    sizeof *p->binlens)) == NULL)) {
		vcl_program_forget_binaries(p);
		return (CL_OUT_OF_HOST_MEMORY);
	}
	if (p->bins[i] != NULL)
		return (CL_SUCCESS);
	m.program = p->obj.id;
	m.device = d->index;
	req.call_case = VCL__REQUEST__CALL_GET_BINARY;
	req.get_binary = &m;
	err = vcl_node_call(d->node, &req, NULL, 0, NULL, 0, &tc);
	if (err == CL_SUCCESS && (tc->reply->program == NULL ||
	    !tc->reply->program->has_binary))
		err = CL_OUT_OF_RESOURCES;
	if (err == CL_SUCCESS) {
		/* One byte more, so an empty binary is fetched too. */
		if ((p->bins[i] = malloc(tc->reply->program->binary.len + 1)) ==
		    NULL)
			err = CL_OUT_OF_HOST_MEMORY;
		else {
			memcpy(p->bins[i], tc->reply->program->binary.data,
			    tc->reply->program->binary.len);
			p->binlens[i] = tc->reply->program->binary.len;
		}
	}
	if (tc != NULL)
		vcl__to_client__free_unpacked(tc, NULL);
	return (err);
}

/* The program's devices: those it was made for, or its context's. */
static cl_uint
vcl_program_devs(cl_program p, cl_device_id **devs)
{
	*devs = p->devs != NULL ? p->devs : p->ctx->devices;
	return (p->devs != NULL ? p->ndevs : p->ctx->ndevices);
}

/* CL_PROGRAM_BINARY_SIZES and CL_PROGRAM_BINARIES, device by device. */
static cl_int
vcl_program_binaries_info(cl_program p, cl_program_info param,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	cl_device_id	*devs;
	unsigned char	*dst;
	size_t		*sizes = NULL;
	cl_uint		 nd, i;
	int		 ci;
	cl_int		 err = CL_SUCCESS;

	nd = vcl_program_devs(p, &devs);
	VCL_GOTO_IF(param_value != NULL && param_value_size <
	    nd * sizeof(void *), CL_INVALID_VALUE);
	if (param == CL_PROGRAM_BINARIES && param_value == NULL) {
		if (param_value_size_ret != NULL)
			*param_value_size_ret = nd * sizeof(unsigned char *);
		goto out;	/* only the size: nothing to fetch */
	}
	VCL_GOTO_IF((sizes = calloc(nd, sizeof *sizes)) == NULL,
	    CL_OUT_OF_HOST_MEMORY);
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < nd && err == CL_SUCCESS; i++) {
		if (param == CL_PROGRAM_BINARIES && param_value != NULL &&
		    ((unsigned char **)param_value)[i] == NULL)
			continue;	/* the application skips this one */
		ci = vcl_ctx_index(p->ctx, devs[i]);
		/* A lost device's binary cannot be had: none (size 0). */
		if (vcl_node_status(devs[i]->node) != CL_SUCCESS)
			continue;
		if ((err = vcl_program_binary(p, (cl_uint)ci)) != CL_SUCCESS) {
			if (vcl_node_status(devs[i]->node) == CL_SUCCESS)
				break;
			err = CL_SUCCESS;	/* lost during the call */
			continue;
		}
		sizes[i] = p->binlens[ci];
		if (param == CL_PROGRAM_BINARIES && param_value != NULL) {
			memcpy(&dst, (unsigned char **)param_value + i,
			    sizeof dst);
			memcpy(dst, p->bins[ci], p->binlens[ci]);
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (err != CL_SUCCESS)
		goto out;
	if (param == CL_PROGRAM_BINARY_SIZES)
		err = vcl_info_ret(sizes, nd * sizeof *sizes, param_value_size,
		    param_value, param_value_size_ret);
	else if (param_value_size_ret != NULL)
		*param_value_size_ret = nd * sizeof(unsigned char *);
out:
	free(sizes);
	return (err);
}

cl_int CL_API_CALL
vcl_clGetProgramInfo(cl_program program, cl_program_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	cl_program	 p = program;
	cl_device_id	*devs;
	cl_uint		 u, i;
	size_t		 sz;
	int		 built = 0;
	cl_int		err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(p, VCL_KIND_PROGRAM), CL_INVALID_PROGRAM);
	for (i = 0; i < p->ctx->ndevices; i++)
		if (p->build[i].status == CL_BUILD_SUCCESS && !p->notexec)
			built = 1;
	switch (param_name) {
	case CL_PROGRAM_REFERENCE_COUNT:
		u = (cl_uint)atomic_load(&p->obj.refs);
		err = vcl_info_ret(&u, sizeof u, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_PROGRAM_CONTEXT:
		err = vcl_info_ret(&p->ctx, sizeof p->ctx, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_PROGRAM_NUM_DEVICES:
		u = vcl_program_devs(p, &devs);
		err = vcl_info_ret(&u, sizeof u, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_PROGRAM_DEVICES:
		u = vcl_program_devs(p, &devs);
		err = vcl_info_ret(devs, u * sizeof *devs, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_PROGRAM_SOURCE:
		/* None (""), for a program from binaries, IL or a link. */
		err = vcl_info_ret(p->source != NULL ? p->source : "",
		    p->source_len + 1, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_PROGRAM_NUM_KERNELS:
		VCL_GOTO_IF(!built, CL_INVALID_PROGRAM_EXECUTABLE);
		sz = p->nkernels;
		err = vcl_info_ret(&sz, sizeof sz, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_PROGRAM_KERNEL_NAMES:
		VCL_GOTO_IF(!built, CL_INVALID_PROGRAM_EXECUTABLE);
		err = vcl_info_ret(p->kernel_names ? p->kernel_names : "",
		    p->kernel_names ? strlen(p->kernel_names) + 1 : 1,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_PROGRAM_BINARY_SIZES:
	case CL_PROGRAM_BINARIES:
		/* Each device's from the node that holds it. */
		err = vcl_program_binaries_info(p, param_name,
		    param_value_size, param_value, param_value_size_ret);
		break;
	default:
		err = vcl_info_remote(vcl_program_node(p),
		    VCL__GET_INFO__WHAT__PROGRAM, p->obj.id, param_name, 0, 0, NULL, 0,
	    param_value_size, param_value, param_value_size_ret);
		break;
	}
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clGetProgramBuildInfo(cl_program program, cl_device_id device,
    cl_program_build_info param_name, size_t param_value_size,
    void *param_value, size_t *param_value_size_ret)
{
	const char		*s;
	int			 i;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(program, VCL_KIND_PROGRAM), CL_INVALID_PROGRAM);
	VCL_GOTO_IF(!vcl_is(device, VCL_KIND_DEVICE) ||
	    (i = vcl_ctx_index(program->ctx, device)) < 0, CL_INVALID_DEVICE);
	switch (param_name) {
	case CL_PROGRAM_BUILD_STATUS:
		err = vcl_info_ret(&program->build[i].status,
		    sizeof program->build[i].status, param_value_size,
		    param_value, param_value_size_ret);
		break;
	case CL_PROGRAM_BUILD_OPTIONS:
	case CL_PROGRAM_BUILD_LOG:
		s = param_name == CL_PROGRAM_BUILD_OPTIONS ? program->options :
		    program->build[i].log;
		if (s == NULL)
			s = "";
		err = vcl_info_ret(s, strlen(s) + 1, param_value_size,
		    param_value, param_value_size_ret);
		break;
	default:
		err = vcl_info_remote(device->node,
		    VCL__GET_INFO__WHAT__PROGRAM_BUILD, program->obj.id,
		    param_name, device->index, 0, NULL, 0,
	    param_value_size,
		    param_value, param_value_size_ret);
		break;
	}
out:
	return (err);
}

/* Drop a reference; the last one releases the kernel on its nodes. */
static void
vcl_kernel_unref(cl_kernel k)
{
	cl_uint	i;
	int	n;

	if (!vcl_unref(k))
		return;
	for (n = 0; n < vcl_nnodes(); n++)
		if (k->prog->nodes & (1ull << n))
			vcl_node_release(vcl_node_get(n), VCL__KIND__KIND_KERNEL,
			    k->obj.id);
	for (i = 0; i < k->nargs; i++)
		free(k->args[i].value);
	free(k->args);
	free(k->arg_address);
	free(k->arg_size);
	free(k->arg_type_qual);
	free(k->arg_kind);
	free(k->arg_image);
	free(k->arg_access);
	free(k->wg_size);
	free(k->compile_wg);
	free(k->name);
	pthread_mutex_destroy(&k->lock);
	atomic_fetch_sub(&k->prog->kernels, 1);
	vcl_program_unref(k->prog);
	vcl_object_free(k);
}

/* Take one node's work-group limits for the context's devices there. */
static void
vcl_kernel_limits(cl_kernel k, struct vcl_node *n, const Vcl__KernelDesc *kd)
{
	cl_context	ctx = k->prog->ctx;
	cl_uint		i, d;

	for (i = 0; i < ctx->ndevices; i++) {
		if (ctx->devices[i]->node != n)
			continue;
		d = ctx->devices[i]->root;	/* per root device */
		if (d < kd->n_wg_size)
			k->wg_size[i] = kd->wg_size[d];
		if (d * 3 + 2 < kd->n_compile_wg)
			memcpy(&k->compile_wg[i * 3], &kd->compile_wg[d * 3],
			    3 * sizeof *k->compile_wg);
	}
}

/* A kernel object from a node's description of it. */
static cl_kernel
vcl_kernel_from(cl_program p, uint64_t id, struct vcl_node *n,
    const Vcl__KernelDesc *kd)
{
	cl_kernel	k;
	size_t		i;
	cl_uint		nd = p->ctx->ndevices;

	if ((k = vcl_object_new(sizeof *k, VCL_KIND_KERNEL)) == NULL)
		return (NULL);
	k->obj.id = id;
	pthread_mutex_init(&k->lock, NULL);
	k->prog = p;
	vcl_retain(p);
	atomic_fetch_add(&p->kernels, 1);
	k->nargs = kd->num_args;
	if ((k->name = strdup(kd->name)) == NULL ||
	    (k->wg_size = calloc(nd, sizeof *k->wg_size)) == NULL ||
	    (k->compile_wg = calloc(nd * 3, sizeof *k->compile_wg)) == NULL ||
	    (k->nargs > 0 &&
	    ((k->args = calloc(k->nargs, sizeof *k->args)) == NULL ||
	    (k->arg_size = calloc(k->nargs, sizeof *k->arg_size)) == NULL ||
	    (k->arg_type_qual = calloc(k->nargs, sizeof *k->arg_type_qual)) ==
	    NULL ||
	    (k->arg_address = calloc(k->nargs, sizeof *k->arg_address)) ==
	    NULL))) {
		vcl_kernel_unref(k);
		return (NULL);
	}
	for (i = 0; i < k->nargs && i < kd->n_arg_address; i++)
		k->arg_address[i] = kd->arg_address[i];
	for (i = 0; i < k->nargs && i < kd->n_arg_size; i++)
		k->arg_size[i] = kd->arg_size[i];
	for (i = 0; i < k->nargs && i < kd->n_arg_type_qual; i++)
		k->arg_type_qual[i] = kd->arg_type_qual[i];
	if (k->nargs > 0 && kd->n_arg_kind == k->nargs) {
		if ((k->arg_kind = calloc(k->nargs, sizeof *k->arg_kind)) ==
		    NULL) {
			vcl_kernel_unref(k);
			return (NULL);
		}
		for (i = 0; i < k->nargs; i++)
			k->arg_kind[i] = kd->arg_kind[i];
	}
	if (k->nargs > 0 && kd->n_arg_image == k->nargs &&
	    kd->n_arg_access == k->nargs) {
		if ((k->arg_image = calloc(k->nargs, sizeof *k->arg_image)) ==
		    NULL || (k->arg_access = calloc(k->nargs,
		    sizeof *k->arg_access)) == NULL) {
			vcl_kernel_unref(k);
			return (NULL);
		}
		memcpy(k->arg_image, kd->arg_image, k->nargs *
		    sizeof *k->arg_image);
		memcpy(k->arg_access, kd->arg_access, k->nargs *
		    sizeof *k->arg_access);
	}
	vcl_kernel_limits(k, n, kd);
	return (k);
}

/*
 * Does a server's KernelsResult describe n kernels, each listing as many
 * argument address qualifiers as it has arguments? A server lists one per
 * argument; num_args sizes the kernel's argument tables, so a count no
 * list backs (up to 2^32 - 1) is refused before it allocates.
 */
static int
vcl_kernels_ok(const Vcl__KernelsResult *kr, size_t n)
{
	size_t	i;

	if (kr == NULL || kr->n_kernels != n)
		return (0);
	for (i = 0; i < n; i++)
		if (kr->kernels[i]->num_args > kr->kernels[i]->n_arg_address)
			return (0);
	return (1);
}

/* True when the program was built successfully for some device. */
static int
vcl_program_built(cl_program p)
{
	cl_uint	i;

	for (i = 0; i < p->ctx->ndevices; i++)
		if (p->build[i].status == CL_BUILD_SUCCESS && !p->notexec)
			return (1);
	return (0);
}

/*
 * A kernel's creation on node n failed because n is lost (before or
 * during the call). Its queues fail every command, so the kernel is made
 * on the program's live nodes only: a context whose other nodes live goes
 * on working.
 */
static int
vcl_kernel_lost(struct vcl_node *n, cl_int err)
{
	return (err == CL_DEVICE_NOT_AVAILABLE && vcl_node_status(n) !=
	    CL_SUCCESS);
}

cl_kernel CL_API_CALL
vcl_clCreateKernel(cl_program program, const char *kernel_name,
    cl_int *errcode_ret)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateKernel	 m = VCL__CREATE_KERNEL__INIT;
	Vcl__ToClient		*tc = NULL;
	cl_kernel		 k = NULL;
	uint64_t		 id;
	int			 n;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(program, VCL_KIND_PROGRAM), CL_INVALID_PROGRAM);
	VCL_GOTO_IF(kernel_name == NULL, CL_INVALID_VALUE);
	VCL_GOTO_IF(!vcl_program_built(program),
	    CL_INVALID_PROGRAM_EXECUTABLE);
	id = vcl_id_new();
	m.id = id;
	m.program = program->obj.id;
	m.name = (char *)kernel_name;
	req.call_case = VCL__REQUEST__CALL_CREATE_KERNEL;
	req.create_kernel = &m;
	/* Synchronous: a bad name must fail here, as it would locally. */
	for (n = 0; n < vcl_nnodes() && err == CL_SUCCESS; n++) {
		if (!(program->nodes & (1ull << n)))
			continue;
		err = vcl_node_call(vcl_node_get(n), &req, NULL, 0, NULL, 0,
		    &tc);
		if (vcl_kernel_lost(vcl_node_get(n), err))
			err = CL_SUCCESS;
		else if (err == CL_SUCCESS && !vcl_kernels_ok(tc->reply->kernels,
		    1))
			err = CL_OUT_OF_RESOURCES;
		else if (err == CL_SUCCESS && k == NULL) {
			if ((k = vcl_kernel_from(program, id, vcl_node_get(n),
			    tc->reply->kernels->kernels[0])) == NULL)
				err = CL_OUT_OF_HOST_MEMORY;
		} else if (err == CL_SUCCESS)
			vcl_kernel_limits(k, vcl_node_get(n),
			    tc->reply->kernels->kernels[0]);
		if (tc != NULL)
			vcl__to_client__free_unpacked(tc, NULL);
		tc = NULL;
	}
	VCL_GOTO_IF(err == CL_SUCCESS && k == NULL, CL_DEVICE_NOT_AVAILABLE);
out:
	if (err != CL_SUCCESS && k != NULL) {
		vcl_kernel_unref(k);
		k = NULL;
	}
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (k);
}

cl_int CL_API_CALL
vcl_clCreateKernelsInProgram(cl_program program, cl_uint num_kernels,
    cl_kernel *kernels, cl_uint *num_kernels_ret)
{
	Vcl__Request		 req = VCL__REQUEST__INIT;
	Vcl__CreateKernels	 m = VCL__CREATE_KERNELS__INIT;
	Vcl__ToClient		*tc = NULL;
	Vcl__KernelsResult	*kr;
	uint64_t		*ids = NULL;
	cl_uint			 nk, i, made = 0;
	int			 n, first = 1;
	cl_int			 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(program, VCL_KIND_PROGRAM), CL_INVALID_PROGRAM);
	VCL_GOTO_IF(!vcl_program_built(program),
	    CL_INVALID_PROGRAM_EXECUTABLE);
	nk = (cl_uint)program->nkernels;
	VCL_GOTO_IF(kernels != NULL && num_kernels < nk, CL_INVALID_VALUE);
	if (kernels != NULL && nk > 0) {
		VCL_GOTO_IF((ids = calloc(nk, sizeof *ids)) == NULL,
		    CL_OUT_OF_HOST_MEMORY);
		for (i = 0; i < nk; i++)
			ids[i] = vcl_id_new();
		m.program = program->obj.id;
		m.ids = ids;
		m.n_ids = nk;
		req.call_case = VCL__REQUEST__CALL_CREATE_KERNELS;
		req.create_kernels = &m;
		for (n = 0; n < vcl_nnodes() && err == CL_SUCCESS; n++) {
			if (!(program->nodes & (1ull << n)))
				continue;
			err = vcl_node_call(vcl_node_get(n), &req, NULL, 0,
			    NULL, 0, &tc);
			if (vcl_kernel_lost(vcl_node_get(n), err)) {
				if (tc != NULL)
					vcl__to_client__free_unpacked(tc, NULL);
				tc = NULL;
				err = CL_SUCCESS;
				continue;
			}
			if (err != CL_SUCCESS) {
				if (tc != NULL)
					vcl__to_client__free_unpacked(tc, NULL);
				break;
			}
			kr = tc->reply->kernels;
			if (first && !vcl_kernels_ok(kr, nk))
				err = CL_OUT_OF_RESOURCES;
			for (i = 0; first && err == CL_SUCCESS && i < nk; i++) {
				if ((kernels[i] = vcl_kernel_from(program,
				    ids[i], vcl_node_get(n), kr->kernels[i])) ==
				    NULL)
					err = CL_OUT_OF_HOST_MEMORY;
				else
					made++;
			}
			for (i = 0; !first && err == CL_SUCCESS && kr != NULL &&
			    i < nk && i < kr->n_kernels; i++)
				vcl_kernel_limits(kernels[i], vcl_node_get(n),
				    kr->kernels[i]);
			first = 0;
			vcl__to_client__free_unpacked(tc, NULL);
		}
		VCL_GOTO_IF(err == CL_SUCCESS && first,
		    CL_DEVICE_NOT_AVAILABLE);
	}
	if (err == CL_SUCCESS && num_kernels_ret != NULL)
		*num_kernels_ret = nk;
out:
	if (err != CL_SUCCESS)
		for (i = 0; i < made; i++)
			vcl_kernel_unref(kernels[i]);
	free(ids);
	return (err);
}

cl_int CL_API_CALL
vcl_clRetainKernel(cl_kernel kernel)
{
	if (!vcl_is(kernel, VCL_KIND_KERNEL))
		return (CL_INVALID_KERNEL);
	vcl_retain(kernel);
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clReleaseKernel(cl_kernel kernel)
{
	if (!vcl_is(kernel, VCL_KIND_KERNEL))
		return (CL_INVALID_KERNEL);
	vcl_kernel_unref(kernel);
	return (CL_SUCCESS);
}

/* The largest CL_DEVICE_LOCAL_MEM_SIZE among a context's devices. */
static cl_ulong
vcl_kernel_local_max(cl_context ctx)
{
	cl_ulong	v, max = 0;
	cl_uint		i;

	for (i = 0; i < ctx->ndevices; i++)
		if (vcl_clGetDeviceInfo(ctx->devices[i],
		    CL_DEVICE_LOCAL_MEM_SIZE, sizeof v, &v, NULL) ==
		    CL_SUCCESS && v > max)
			max = v;
	return (max);
}

/*
 * An image or sampler argument: a handle of that kind, checked here as a
 * local runtime would (a sampler of the wrong size or a non-sampler, a
 * non-image or an image of another type), kept as the object. Across
 * nodes, a read_only image is not marked written by the launch.
 */
static cl_int
vcl_arg_object(cl_kernel k, cl_uint i, uint32_t kind, size_t size,
    const void *value, struct vcl_arg *a)
{
	cl_sampler			 smp = NULL;
	cl_mem				 mem = NULL;

	if (kind == VCL__KERNEL_DESC__ARG_KIND__SAMPLER) {
		if (size != sizeof(cl_sampler))
			return (CL_INVALID_ARG_SIZE);
		if (value != NULL)
			memcpy(&smp, value, sizeof smp);
		if (!vcl_sampler_live(smp) || smp->ctx != k->prog->ctx)
			return (CL_INVALID_SAMPLER);
		a->type = VCL__KERNEL_ARG__TYPE__SAMPLER;
		a->sampler = smp;
		return (CL_SUCCESS);
	}
	if (size != sizeof(cl_mem))
		return (CL_INVALID_ARG_SIZE);
	if (value != NULL)
		memcpy(&mem, value, sizeof mem);
	if (!vcl_is(mem, VCL_KIND_MEM) || !vcl_mem_is_image(mem) ||
	    mem->ctx != k->prog->ctx)
		return (CL_INVALID_MEM_OBJECT);
	/* image2d_t takes a 2D image, image1d_buffer_t a 1D buffer one... */
	if (k->arg_image != NULL && k->arg_image[i] != mem->type)
		return (CL_INVALID_MEM_OBJECT);
	a->type = VCL__KERNEL_ARG__TYPE__IMAGE;
	a->mem = mem;
	a->ro = k->arg_access != NULL &&
	    k->arg_access[i] == CL_KERNEL_ARG_ACCESS_READ_ONLY;
	return (CL_SUCCESS);
}

/*
 * Keep an argument here; it travels with each launch. The address
 * qualifier and the kind the server reported decide what the value is;
 * what the server would refuse at the launch is refused here, with the
 * error a local runtime gives (VCL has no pipes yet). Images and samplers
 * are kept as objects and travel as handles (vcl_arg_object).
 */
cl_int CL_API_CALL
vcl_clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
    const void *arg_value)
{
	struct vcl_arg	 a;
	cl_mem		 mem = NULL;
	cl_kernel_arg_address_qualifier aq;
	uint32_t	 kind;
	cl_int		 err = CL_SUCCESS;

	memset(&a, 0, sizeof a);
	VCL_GOTO_IF(!vcl_is(kernel, VCL_KIND_KERNEL), CL_INVALID_KERNEL);
	VCL_GOTO_IF(arg_index >= kernel->nargs, CL_INVALID_ARG_INDEX);
	aq = kernel->arg_address[arg_index];
	kind = kernel->arg_kind != NULL ? kernel->arg_kind[arg_index] :
	    VCL__KERNEL_DESC__ARG_KIND__VALUE;
	VCL_GOTO_IF(kind == VCL__KERNEL_DESC__ARG_KIND__PIPE,
	    CL_INVALID_MEM_OBJECT);
	VCL_GOTO_IF(kind == VCL__KERNEL_DESC__ARG_KIND__OPAQUE,
	    CL_INVALID_ARG_VALUE);
	a.set = 1;
	a.size = arg_size;
	if (kind == VCL__KERNEL_DESC__ARG_KIND__IMAGE ||
	    kind == VCL__KERNEL_DESC__ARG_KIND__SAMPLER) {
		if ((err = vcl_arg_object(kernel, arg_index, kind, arg_size,
		    arg_value, &a)) != CL_SUCCESS)
			goto out;
	} else if (aq == CL_KERNEL_ARG_ADDRESS_LOCAL) {
		VCL_GOTO_IF(arg_value != NULL, CL_INVALID_ARG_VALUE);
		VCL_GOTO_IF(arg_size == 0 || arg_size >
		    vcl_kernel_local_max(kernel->prog->ctx), CL_INVALID_ARG_SIZE);
		a.type = VCL__KERNEL_ARG__TYPE__LOCAL;
	} else if (aq == CL_KERNEL_ARG_ADDRESS_GLOBAL ||
	    aq == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
		VCL_GOTO_IF(arg_size != sizeof(cl_mem), CL_INVALID_ARG_SIZE);
		if (arg_value != NULL)
			memcpy(&mem, arg_value, sizeof mem);
		if (mem == NULL)
			a.type = VCL__KERNEL_ARG__TYPE__NULLMEM;
		else {
			VCL_GOTO_IF(!vcl_is(mem, VCL_KIND_MEM) ||
			    vcl_mem_is_image(mem), CL_INVALID_MEM_OBJECT);
			a.type = VCL__KERNEL_ARG__TYPE__MEM;
			a.mem = mem;
		}
	} else {
		VCL_GOTO_IF(arg_value == NULL, CL_INVALID_ARG_VALUE);
		/* A size the server does not know (0) it refuses: so here. */
		VCL_GOTO_IF(arg_size == 0 || (kernel->arg_size[arg_index] != 0 &&
		    arg_size != kernel->arg_size[arg_index]) ||
		    (kernel->arg_kind != NULL &&
		    kernel->arg_size[arg_index] == 0), CL_INVALID_ARG_SIZE);
		a.type = VCL__KERNEL_ARG__TYPE__VALUE;
		VCL_GOTO_IF((a.value = malloc(arg_size)) == NULL,
		    CL_OUT_OF_HOST_MEMORY);
		memcpy(a.value, arg_value, arg_size);
	}
	pthread_mutex_lock(&kernel->lock);
	free(kernel->args[arg_index].value);
	kernel->args[arg_index] = a;
	pthread_mutex_unlock(&kernel->lock);
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
	cl_uint	u;
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(kernel, VCL_KIND_KERNEL), CL_INVALID_KERNEL);
	switch (param_name) {
	case CL_KERNEL_FUNCTION_NAME:
		err = vcl_info_ret(kernel->name, strlen(kernel->name) + 1,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_KERNEL_NUM_ARGS:
		err = vcl_info_ret(&kernel->nargs, sizeof kernel->nargs,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_KERNEL_REFERENCE_COUNT:
		u = (cl_uint)atomic_load(&kernel->obj.refs);
		err = vcl_info_ret(&u, sizeof u, param_value_size, param_value,
		    param_value_size_ret);
		break;
	case CL_KERNEL_CONTEXT:
		err = vcl_info_ret(&kernel->prog->ctx, sizeof kernel->prog->ctx,
		    param_value_size, param_value, param_value_size_ret);
		break;
	case CL_KERNEL_PROGRAM:
		err = vcl_info_ret(&kernel->prog, sizeof kernel->prog,
		    param_value_size, param_value, param_value_size_ret);
		break;
	default:
		err = vcl_info_remote(vcl_program_node(kernel->prog),
		    VCL__GET_INFO__WHAT__KERNEL, kernel->obj.id, param_name, 0,
		    0, NULL, 0,
	    param_value_size, param_value, param_value_size_ret);
		break;
	}
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
    cl_kernel_work_group_info param_name, size_t param_value_size,
    void *param_value, size_t *param_value_size_ret)
{
	Vcl__KernelArg	 loc[16], *locp[16];
	cl_context	 ctx;
	cl_uint		 i;
	size_t		 nloc = 0;
	cl_int		 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(kernel, VCL_KIND_KERNEL), CL_INVALID_KERNEL);
	ctx = kernel->prog->ctx;
	if (device == NULL) {
		VCL_GOTO_IF(ctx->ndevices != 1, CL_INVALID_DEVICE);
		device = ctx->devices[0];
	}
	VCL_GOTO_IF(!vcl_is(device, VCL_KIND_DEVICE) ||
	    vcl_ctx_index(ctx, device) < 0, CL_INVALID_DEVICE);
	/* The __local sizes set here count in CL_KERNEL_LOCAL_MEM_SIZE. */
	pthread_mutex_lock(&kernel->lock);
	for (i = 0; i < kernel->nargs && nloc < 16; i++) {
		if (!kernel->args[i].set || kernel->args[i].type !=
		    VCL__KERNEL_ARG__TYPE__LOCAL)
			continue;
		vcl__kernel_arg__init(&loc[nloc]);
		loc[nloc].index = i;
		loc[nloc].type = VCL__KERNEL_ARG__TYPE__LOCAL;
		loc[nloc].has_size = 1;
		loc[nloc].size = kernel->args[i].size;
		locp[nloc] = &loc[nloc];
		nloc++;
	}
	pthread_mutex_unlock(&kernel->lock);
	err = vcl_info_remote(device->node,
	    VCL__GET_INFO__WHAT__KERNEL_WORK_GROUP, kernel->obj.id, param_name,
	    device->index, 0, locp, nloc, param_value_size, param_value,
	    param_value_size_ret);
out:
	return (err);
}

/* Does a build's option string hold the option (a whole word)? */
static int
vcl_has_option(const char *opts, const char *opt)
{
	size_t		 n = strlen(opt);
	const char	*p;

	for (p = opts; p != NULL && (p = strstr(p, opt)) != NULL; p += n)
		if ((p == opts || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\t'))
			return (1);
	return (0);
}

cl_int CL_API_CALL
vcl_clGetKernelArgInfo(cl_kernel kernel, cl_uint arg_index,
    cl_kernel_arg_info param_name, size_t param_value_size, void *param_value,
    size_t *param_value_size_ret)
{
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(kernel, VCL_KIND_KERNEL), CL_INVALID_KERNEL);
	VCL_GOTO_IF(arg_index >= kernel->nargs, CL_INVALID_ARG_INDEX);
	/*
	 * As the specification has it (since 1.2): argument information is
	 * there for a program from source built with -cl-kernel-arg-info.
	 * The node's runtime may keep it anyway (PoCL does, for VCL's own
	 * checks); the application sees what the VCL platform promises.
	 */
	VCL_GOTO_IF(kernel->prog->source == NULL ||
	    !vcl_has_option(kernel->prog->options, "-cl-kernel-arg-info"),
	    CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
	err = vcl_info_remote(vcl_program_node(kernel->prog),
	    VCL__GET_INFO__WHAT__KERNEL_ARG, kernel->obj.id, param_name, 0,
	    arg_index, NULL, 0,
	    param_value_size, param_value, param_value_size_ret);
out:
	return (err);
}

/*
 * May the kernel write through buffer argument i? Not through a const or
 * __constant pointer, nor into a CL_MEM_READ_ONLY buffer.
 */
static int
vcl_arg_writes(cl_kernel k, cl_uint i)
{
	if (k->args[i].type == VCL__KERNEL_ARG__TYPE__IMAGE)
		return (!k->args[i].ro &&
		    !(k->args[i].mem->flags & CL_MEM_READ_ONLY));
	return (k->arg_address[i] != CL_KERNEL_ARG_ADDRESS_CONSTANT &&
	    !(k->arg_type_qual[i] & CL_KERNEL_ARG_TYPE_CONST) &&
	    !(k->args[i].mem->flags & CL_MEM_READ_ONLY));
}

/* A size_t array device param from the snapshot (max work item sizes). */
static int
vcl_device_sizes(cl_device_id d, cl_device_info param, size_t *out, size_t n)
{
	size_t	got = 0;

	if (vcl_clGetDeviceInfo(d, param, n * sizeof *out, out, &got) !=
	    CL_SUCCESS)
		return (-1);
	return ((int)(got / sizeof *out));
}

/*
 * Check a launch's local size against the kernel and device, as
 * clEnqueueNDRangeKernel would: another size than reqd_work_group_size,
 * too large, or not dividing the global size where the program may not
 * use non-uniform work-groups. local may be NULL.
 */
static cl_int
vcl_check_local(cl_kernel k, cl_device_id dev, cl_uint dim,
    const size_t *global, const size_t *local)
{
	int		 di = vcl_ctx_index(k->prog->ctx, dev);
	const size_t	*cwg = &k->compile_wg[di * 3];
	size_t		 maxwi[3] = { 0, 0, 0 }, maxwg = 0, total = 1;
	cl_bool		 nonuni = CL_FALSE;
	const char	*opt = k->prog->options;
	cl_uint		 i;
	int		 cl2;

	/* reqd_work_group_size binds the local size, and forbids NULL. */
	if (cwg[0] != 0) {
		if (local == NULL)
			return (CL_INVALID_WORK_GROUP_SIZE);
		for (i = 0; i < 3; i++)
			if ((i < dim ? local[i] : 1) != cwg[i])
				return (CL_INVALID_WORK_GROUP_SIZE);
	}
	if (local == NULL)
		return (CL_SUCCESS);	/* the common launch: nothing to look up */
	vcl_device_sizes(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, maxwi, 3);
	vcl_clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg,
	    &maxwg, NULL);
	vcl_clGetDeviceInfo(dev, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT,
	    sizeof nonuni, &nonuni, NULL);
	cl2 = opt != NULL && (strstr(opt, "-cl-std=CL2") != NULL ||
	    strstr(opt, "-cl-std=CL3") != NULL) &&
	    strstr(opt, "-cl-uniform-work-group-size") == NULL;
	if (k->wg_size[di] != 0 && maxwg > k->wg_size[di])
		maxwg = k->wg_size[di];
	/*
	 * The group's size first: a local size past both the group limit
	 * and a dimension's item limit is CL_INVALID_WORK_GROUP_SIZE, as the
	 * node's runtime (PoCL 3.1) answers; the spec orders neither.
	 */
	for (i = 0; i < dim; i++) {
		if (local[i] == 0)
			return (CL_INVALID_WORK_GROUP_SIZE);
		if (local[i] > SIZE_MAX / total)
			return (CL_INVALID_WORK_GROUP_SIZE);
		total *= local[i];
	}
	if (maxwg != 0 && total > maxwg)
		return (CL_INVALID_WORK_GROUP_SIZE);
	for (i = 0; i < dim; i++) {
		if (maxwi[i] != 0 && local[i] > maxwi[i])
			return (CL_INVALID_WORK_ITEM_SIZE);
		if (global[i] % local[i] != 0 && !(nonuni && cl2))
			return (CL_INVALID_WORK_GROUP_SIZE);
	}
	return (CL_SUCCESS);
}

cl_int CL_API_CALL
vcl_clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel,
    cl_uint work_dim, const size_t *global_work_offset,
    const size_t *global_work_size, const size_t *local_work_size,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	Vcl__Request	  req = VCL__REQUEST__INIT;
	Vcl__NDRange	  m = VCL__NDRANGE__INIT;
	Vcl__KernelArg	  argv[16], *argpv[16], *args = argv, **argp = argpv;
	uint64_t	  off[3], gws[3], lws[3];
	cl_command_queue  q = command_queue;
	struct vcl_node	 *node;
	struct vcl_enq	  enq;
	cl_uint		  i;
	int		  prepared = 0;
	cl_int		  err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(q, VCL_KIND_QUEUE), CL_INVALID_COMMAND_QUEUE);
	VCL_GOTO_IF(!vcl_is(kernel, VCL_KIND_KERNEL), CL_INVALID_KERNEL);
	VCL_GOTO_IF(kernel->prog->ctx != q->ctx, CL_INVALID_CONTEXT);
	VCL_GOTO_IF(work_dim < 1 || work_dim > 3, CL_INVALID_WORK_DIMENSION);
	VCL_GOTO_IF(global_work_size == NULL, CL_INVALID_VALUE);
	VCL_GOTO_IF(kernel->prog->build[vcl_ctx_index(q->ctx, q->dev)].status !=
	    CL_BUILD_SUCCESS, CL_INVALID_PROGRAM_EXECUTABLE);
	if ((err = vcl_check_local(kernel, q->dev, work_dim, global_work_size,
	    local_work_size)) != CL_SUCCESS)
		goto out;
	node = q->dev->node;
	if (kernel->nargs > 16 &&
	    ((args = calloc(kernel->nargs, sizeof *args)) == NULL ||
	    (argp = calloc(kernel->nargs, sizeof *argp)) == NULL)) {
		err = CL_OUT_OF_HOST_MEMORY;
		goto out;
	}
	pthread_mutex_lock(&kernel->lock);
	for (i = 0; i < kernel->nargs && err == CL_SUCCESS; i++) {
		struct vcl_arg	*a = &kernel->args[i];

		if (!a->set) {
			err = CL_INVALID_KERNEL_ARGS;
			break;
		}
		vcl__kernel_arg__init(&args[i]);
		argp[i] = &args[i];
		args[i].index = i;
		args[i].type = a->type;
		switch (a->type) {
		case VCL__KERNEL_ARG__TYPE__VALUE:
			args[i].has_value = 1;
			args[i].value.data = a->value;
			args[i].value.len = a->size;
			break;
		case VCL__KERNEL_ARG__TYPE__MEM:
			if (!vcl_is(a->mem, VCL_KIND_MEM))
				err = CL_INVALID_MEM_OBJECT;
			else {
				args[i].has_mem = 1;
				args[i].mem = a->mem->obj.id;
			}
			break;
		case VCL__KERNEL_ARG__TYPE__IMAGE:
			if (!vcl_is(a->mem, VCL_KIND_MEM))
				err = CL_INVALID_MEM_OBJECT;
			else {
				args[i].has_mem = 1;
				args[i].mem = a->mem->obj.id;
			}
			break;
		case VCL__KERNEL_ARG__TYPE__SAMPLER:
			if (!vcl_sampler_live(a->sampler))
				err = CL_INVALID_SAMPLER;
			else {
				args[i].has_mem = 1;
				args[i].mem = a->sampler->obj.id;
			}
			break;
		case VCL__KERNEL_ARG__TYPE__LOCAL:
			args[i].has_size = 1;
			args[i].size = a->size;
			break;
		default:
			break;
		}
	}
	if (err == CL_SUCCESS && (err = vcl_enq_prepare(&enq, q,
	    num_events_in_wait_list, event_wait_list, event,
	    CL_COMMAND_NDRANGE_KERNEL, vcl_ctx_multi(q->ctx))) == CL_SUCCESS)
		prepared = 1;
	/* Buffers it uses come to its node first, if stale there. */
	for (i = 0; i < kernel->nargs && err == CL_SUCCESS; i++)
		if (kernel->args[i].type == VCL__KERNEL_ARG__TYPE__MEM ||
		    kernel->args[i].type == VCL__KERNEL_ARG__TYPE__IMAGE)
			err = vcl_mem_use(&enq, q, kernel->args[i].mem,
			    vcl_arg_writes(kernel, i), 0);
	if (err == CL_SUCCESS) {
		for (i = 0; i < work_dim; i++) {
			gws[i] = global_work_size[i];
			off[i] = global_work_offset ? global_work_offset[i] : 0;
			lws[i] = local_work_size ? local_work_size[i] : 0;
		}
		m.q = &enq.e;
		m.kernel = kernel->obj.id;
		m.work_dim = work_dim;
		m.n_global = work_dim;
		m.global = gws;
		m.n_offset = global_work_offset ? work_dim : 0;
		m.offset = off;
		m.n_local = local_work_size ? work_dim : 0;
		m.local = lws;
		m.n_args = kernel->nargs;
		m.args = argp;
		req.call_case = VCL__REQUEST__CALL_NDRANGE;
		req.ndrange = &m;
		err = vcl_node_send(node, &req, NULL, 0, 0);
	}
	for (i = 0; i < kernel->nargs && err == CL_SUCCESS; i++)
		if ((kernel->args[i].type == VCL__KERNEL_ARG__TYPE__MEM ||
		    kernel->args[i].type == VCL__KERNEL_ARG__TYPE__IMAGE) &&
		    vcl_arg_writes(kernel, i))
			vcl_mem_written(kernel->args[i].mem, node, enq.ev);
	pthread_mutex_unlock(&kernel->lock);
	if (prepared)
		vcl_enq_finish(&enq, err, event);
out:
	if (args != argv)
		free(args);
	if (argp != argpv)
		free(argp);
	return (err);
}

cl_int CL_API_CALL
vcl_clEnqueueTask(cl_command_queue command_queue, cl_kernel kernel,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event)
{
	static const size_t	one = 1;

	return (vcl_clEnqueueNDRangeKernel(command_queue, kernel, 1, NULL,
	    &one, &one, num_events_in_wait_list, event_wait_list, event));
}

/*
 * A copy of a kernel: a new kernel of the same program and name on every
 * node, with the source's arguments (values copied; a buffer set on it
 * is not retained by either, as in clSetKernelArg).
 */
cl_kernel CL_API_CALL
vcl_clCloneKernel(cl_kernel source_kernel, cl_int *errcode_ret)
{
	cl_kernel	k = NULL, src = source_kernel;
	cl_uint		i;
	cl_int		err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(src, VCL_KIND_KERNEL), CL_INVALID_KERNEL);
	if ((k = vcl_clCreateKernel(src->prog, src->name, &err)) == NULL)
		goto out;
	VCL_GOTO_IF(k->nargs != src->nargs, CL_OUT_OF_RESOURCES);
	pthread_mutex_lock(&src->lock);
	for (i = 0; i < src->nargs && err == CL_SUCCESS; i++) {
		k->args[i] = src->args[i];
		k->args[i].value = NULL;
		if (src->args[i].value == NULL)
			continue;
		if ((k->args[i].value = malloc(src->args[i].size)) == NULL) {
			err = CL_OUT_OF_HOST_MEMORY;
			break;
		}
		memcpy(k->args[i].value, src->args[i].value,
		    src->args[i].size);
	}
	pthread_mutex_unlock(&src->lock);
out:
	if (err != CL_SUCCESS && k != NULL) {
		vcl_kernel_unref(k);
		k = NULL;
	}
	if (errcode_ret != NULL)
		*errcode_ret = err;
	return (k);
}

/*
 * SVM execution info. VCL shares no virtual memory between the host and
 * the nodes (clSVMAlloc is not offered), so the SVM params are refused as
 * the specification says for devices without SVM; others are invalid.
 */
cl_int CL_API_CALL
vcl_clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param_name,
    size_t param_value_size, const void *param_value)
{
	cl_bool	b;
	cl_int	err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(kernel, VCL_KIND_KERNEL), CL_INVALID_KERNEL);
	VCL_GOTO_IF(param_value == NULL, CL_INVALID_VALUE);
	switch (param_name) {
	case CL_KERNEL_EXEC_INFO_SVM_PTRS:
		VCL_GOTO_IF(param_value_size == 0 || param_value_size %
		    sizeof(void *) != 0, CL_INVALID_VALUE);
		err = CL_INVALID_OPERATION;
		break;
	case CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM:
		VCL_GOTO_IF(param_value_size != sizeof b, CL_INVALID_VALUE);
		memcpy(&b, param_value, sizeof b);
		err = b ? CL_INVALID_OPERATION : CL_SUCCESS;
		break;
	default:
		err = CL_INVALID_VALUE;
		break;
	}
out:
	return (err);
}

/*
 * Sub-group info: asked of the device's node where the device has
 * sub-groups (CL_DEVICE_MAX_NUM_SUB_GROUPS > 0), with the input value;
 * otherwise CL_INVALID_OPERATION once the kernel and device are checked,
 * what the specification names for a device without sub-groups (as PoCL
 * 3.1's CPU device is).
 */
cl_int CL_API_CALL
vcl_clGetKernelSubGroupInfo(cl_kernel kernel, cl_device_id device,
    cl_kernel_sub_group_info param_name, size_t input_value_size,
    const void *input_value, size_t param_value_size, void *param_value,
    size_t *param_value_size_ret)
{
	Vcl__Request	 req = VCL__REQUEST__INIT;
	Vcl__GetInfo	 gi = VCL__GET_INFO__INIT;
	Vcl__ToClient	*tc = NULL;
	cl_uint		 nsg = 0;
	cl_int		 err = CL_SUCCESS;

	VCL_GOTO_IF(!vcl_is(kernel, VCL_KIND_KERNEL), CL_INVALID_KERNEL);
	if (device == NULL) {
		VCL_GOTO_IF(kernel->prog->ctx->ndevices != 1, CL_INVALID_DEVICE);
		device = kernel->prog->ctx->devices[0];
	}
	VCL_GOTO_IF(!vcl_is(device, VCL_KIND_DEVICE) ||
	    vcl_ctx_index(kernel->prog->ctx, device) < 0, CL_INVALID_DEVICE);
	if (vcl_clGetDeviceInfo(device, CL_DEVICE_MAX_NUM_SUB_GROUPS,
	    sizeof nsg, &nsg, NULL) != CL_SUCCESS || nsg == 0) {
		err = CL_INVALID_OPERATION;
		goto out;
	}
	VCL_GOTO_IF(input_value_size > 3 * sizeof(size_t) ||
	    (input_value_size > 0 && input_value == NULL), CL_INVALID_VALUE);
	gi.what = VCL__GET_INFO__WHAT__KERNEL_SUB_GROUP;
	gi.id = kernel->obj.id;
	gi.param = param_name;
	gi.has_device = 1;
	gi.device = device->index;
	gi.has_input = 1;
	gi.input.data = (uint8_t *)input_value;
	gi.input.len = input_value_size;
	req.call_case = VCL__REQUEST__CALL_GET_INFO;
	req.get_info = &gi;
	err = vcl_node_call(device->node, &req, NULL, 0, NULL, 0, &tc);
	if (err == CL_SUCCESS) {
		if (tc->reply->info == NULL)
			err = CL_INVALID_VALUE;
		else
			err = vcl_info_ret(tc->reply->info->value.data,
			    tc->reply->info->value.len, param_value_size,
			    param_value, param_value_size_ret);
	}
	if (tc != NULL)
		vcl__to_client__free_unpacked(tc, NULL);
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clGetKernelSubGroupInfoKHR(cl_kernel in_kernel, cl_device_id in_device,
    cl_kernel_sub_group_info param_name, size_t input_value_size,
    const void *input_value, size_t param_value_size, void *param_value,
    size_t *param_value_size_ret)
{
	return (vcl_clGetKernelSubGroupInfo(in_kernel, in_device, param_name,
	    input_value_size, input_value, param_value_size, param_value,
	    param_value_size_ret));
}

/*
 * Host and device timers. The VCL platform's host timer resolution is 0
 * (a node's device clock cannot be tied to this host's), so both are
 * CL_INVALID_OPERATION once the device is checked, as the specification
 * says for such a platform. A NULL timestamp too: where both codes apply
 * the specification orders none, and a platform without timers (PoCL
 * 3.1) answers CL_INVALID_OPERATION first.
 */
cl_int CL_API_CALL
vcl_clGetDeviceAndHostTimer(cl_device_id device, cl_ulong *device_timestamp,
    cl_ulong *host_timestamp)
{
	cl_int	err = CL_INVALID_OPERATION;

	(void)device_timestamp;
	(void)host_timestamp;
	VCL_GOTO_IF(!vcl_is(device, VCL_KIND_DEVICE), CL_INVALID_DEVICE);
out:
	return (err);
}

cl_int CL_API_CALL
vcl_clGetHostTimer(cl_device_id device, cl_ulong *host_timestamp)
{
	cl_int	err = CL_INVALID_OPERATION;

	(void)host_timestamp;
	VCL_GOTO_IF(!vcl_is(device, VCL_KIND_DEVICE), CL_INVALID_DEVICE);
out:
	return (err);
}
