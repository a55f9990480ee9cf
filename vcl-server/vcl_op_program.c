/* vcl_op_program.c - programs (built on a worker thread) and kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_log.h"
#include "vcl_server.h"

#define VCL_KERNELS_MAX	4096

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
	else if (len == 0)
		err = CL_INVALID_VALUE;
	else if (vcl_session_charge(s, len) != 0)
		err = CL_OUT_OF_HOST_MEMORY;	/* the runtime keeps a copy */
	else {
		o->bytes = len;		/* freed with the program */
		o->u.prog = clCreateProgramWithSource(ctx->u.ctx, 1, &src, &len,
		    &err);
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
};

/* Free a build record. */
static void
vcl_build_free(struct vcl_build *b)
{
	cl_uint	i;

	if (b->logs != NULL)
		for (i = 0; i < b->ndevs; i++)
			free(b->logs[i]);
	free(b->logs);
	free(b->status);
	free(b->names);
	free(b->devs);
	free(b->idx);
	free(b->options);
	clReleaseProgram(b->prog);
	free(b);
}

/* clGetProgramBuildInfo/ProgramInfo of a string, malloc'd; NULL if none. */
static char *
vcl_build_string(cl_program p, cl_device_id d, cl_uint param)
{
	size_t	 n = 0;
	char	*v;
	cl_int	 err;

	err = d != NULL ? clGetProgramBuildInfo(p, d, param, 0, NULL, &n) :
	    clGetProgramInfo(p, param, 0, NULL, &n);
	if (err != CL_SUCCESS || n == 0 || (v = calloc(1, n + 1)) == NULL)
		return (NULL);
	err = d != NULL ? clGetProgramBuildInfo(p, d, param, n, v, NULL) :
	    clGetProgramInfo(p, param, n, v, NULL);
	if (err != CL_SUCCESS) {
		free(v);
		return (NULL);
	}
	return (v);
}

/* Worker: build (this blocks), then gather status, logs and kernel names. */
static void
vcl_build_run(void *arg)
{
	struct vcl_build	*b = arg;
	cl_uint			 i;

	b->err = clBuildProgram(b->prog, b->ndevs, b->devs, b->options, NULL,
	    NULL);
	b->logs = calloc(b->ndevs, sizeof *b->logs);
	b->status = calloc(b->ndevs, sizeof *b->status);
	for (i = 0; i < b->ndevs && b->logs != NULL && b->status != NULL; i++) {
		if (clGetProgramBuildInfo(b->prog, b->devs[i],
		    CL_PROGRAM_BUILD_STATUS, sizeof b->status[i], &b->status[i],
		    NULL) != CL_SUCCESS)
			b->status[i] = CL_BUILD_ERROR;
		b->logs[i] = vcl_build_string(b->prog, b->devs[i],
		    CL_PROGRAM_BUILD_LOG);
	}
	if (b->err == CL_SUCCESS)
		b->names = vcl_build_string(b->prog, NULL,
		    CL_PROGRAM_KERNEL_NAMES);
	vcl_server_done_push(b->d.s->srv, &b->d);
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
	if ((o = vcl_handle_get(&s->handles, b->prog_id, VCL_KIND_PROGRAM)) !=
	    NULL) {
		o->building = 0;
		/* The runtime keeps the logs with the program: they count. */
		for (i = 0; b->logs != NULL && i < b->ndevs; i++) {
			if (b->logs[i] != NULL) {
				o->bytes += strlen(b->logs[i]);
				vcl_session_charge_over(s, strlen(b->logs[i]));
			}
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
	vcl_session_unref(s);
	vcl_build_free(b);
}

/*
 * The client's options plus -cl-kernel-arg-info: the server must know each
 * argument's address qualifier to tell a buffer from bytes (a client that
 * passed bytes for a buffer would otherwise hand the runtime a pointer).
 */
static char *
vcl_build_options(const char *opts)
{
	static const char	 extra[] = " -cl-kernel-arg-info";
	size_t			 n = opts != NULL ? strlen(opts) : 0;
	char			*s;

	if ((s = malloc(n + sizeof extra)) == NULL)
		return (NULL);
	memcpy(s, opts != NULL ? opts : "", n);
	memcpy(s + n, extra, sizeof extra);
	return (s);
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
	cl_uint			 n, i;
	cl_int			 err = CL_SUCCESS;

	o = vcl_handle_get(&s->handles, m->program, VCL_KIND_PROGRAM);
	if (o == NULL)
		err = CL_INVALID_PROGRAM;
	else if (o->error != CL_SUCCESS)
		err = o->error;
	else if (o->building)
		err = CL_INVALID_OPERATION;
	else if (m->n_devices > be->ndevices)
		err = CL_INVALID_DEVICE;
	if (err != CL_SUCCESS) {
		vcl_session_reply(s, req->seq, err, NULL);
		return;
	}
	n = m->n_devices > 0 ? (cl_uint)m->n_devices : be->ndevices;
	if ((b = calloc(1, sizeof *b)) == NULL ||
	    (b->devs = calloc(n, sizeof *b->devs)) == NULL ||
	    (b->idx = calloc(n, sizeof *b->idx)) == NULL ||
	    (b->options = vcl_build_options(m->options)) == NULL) {
		if (b != NULL) {
			free(b->devs);
			free(b->idx);
			free(b);
		}
		vcl_session_reply(s, req->seq, CL_OUT_OF_HOST_MEMORY, NULL);
		return;
	}
	for (i = 0; i < n; i++) {
		b->idx[i] = m->n_devices > 0 ? m->devices[i] : i;
		if (b->idx[i] >= be->ndevices)
			err = CL_INVALID_DEVICE;
		else
			b->devs[i] = be->devices[b->idx[i]];
	}
	b->ndevs = n;
	b->seq = req->seq;
	b->prog_id = m->program;
	b->prog = o->u.prog;
	clRetainProgram(b->prog);
	b->d.fn = vcl_build_done;
	b->d.s = s;
	if (err == CL_SUCCESS && m->n_devices == 0) {
		/* All devices of the program's context, as the spec says. */
		free(b->devs);
		b->devs = NULL;
		b->ndevs = 0;
		if (clGetProgramInfo(b->prog, CL_PROGRAM_NUM_DEVICES,
		    sizeof n, &n, NULL) != CL_SUCCESS || n == 0 ||
		    (b->devs = calloc(n, sizeof *b->devs)) == NULL ||
		    clGetProgramInfo(b->prog, CL_PROGRAM_DEVICES,
		    n * sizeof *b->devs, b->devs, NULL) != CL_SUCCESS)
			err = CL_OUT_OF_HOST_MEMORY;
		else
			b->ndevs = n;
		for (i = 0; i < b->ndevs; i++) {
			for (b->idx[i] = 0; b->idx[i] < be->ndevices &&
			    be->devices[b->idx[i]] != b->devs[i]; b->idx[i]++)
				;
		}
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
 * Bytes of a by-value argument of an OpenCL C type named by
 * CL_KERNEL_ARG_TYPE_NAME: scalars and vectors; 0 for what is not known
 * (structs), which the client then does not check.
 */
static uint32_t
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
		n = strtoul(name + len, &end, 10);
		if (*end != '\0' || (n != 2 && n != 3 && n != 4 && n != 8 &&
		    n != 16))
			continue;
		return (scalars[i].size * (uint32_t)(n == 3 ? 4 : n));
	}
	return (0);
}

/*
 * Describe a kernel for the client: name, arg count, address qualifiers
 * and by-value sizes, and per served device its work-group limits. Fails
 * when a qualifier is unknown: launches could not be checked.
 */
static int
vcl_kernel_desc(struct vcl_session *s, cl_kernel k, uint64_t id,
    Vcl__KernelDesc *kd)
{
	struct vcl_backend	*be = &s->srv->be;
	cl_uint			 i, bits = 64;
	size_t			 n = 0, cwg[3];
	char			 tname[256];

	vcl__kernel_desc__init(kd);
	kd->id = id;
	if (clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof kd->num_args,
	    &kd->num_args, NULL) != CL_SUCCESS ||
	    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, NULL, &n) !=
	    CL_SUCCESS || (kd->name = calloc(1, n + 1)) == NULL ||
	    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, n, kd->name, NULL) !=
	    CL_SUCCESS)
		return (-1);
	if (kd->num_args > 0 &&
	    (kd->arg_address = calloc(kd->num_args, sizeof *kd->arg_address)) ==
	    NULL)
		return (-1);
	kd->n_arg_address = kd->num_args;
	if (kd->num_args > 0 &&
	    ((kd->arg_size = calloc(kd->num_args, sizeof *kd->arg_size)) ==
	    NULL || (kd->arg_type_qual = calloc(kd->num_args,
	    sizeof *kd->arg_type_qual)) == NULL))
		return (-1);
	kd->n_arg_size = kd->num_args;
	kd->n_arg_type_qual = kd->num_args;
	clGetDeviceInfo(be->devices[0], CL_DEVICE_ADDRESS_BITS, sizeof bits,
	    &bits, NULL);
	for (i = 0; i < kd->num_args; i++) {
		cl_kernel_arg_address_qualifier	aq;

		if (clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
		    sizeof aq, &aq, NULL) != CL_SUCCESS)
			return (-1);
		kd->arg_address[i] = (uint32_t)aq;
		{
			cl_kernel_arg_type_qualifier	tq = 0;

			clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER,
			    sizeof tq, &tq, NULL);
			kd->arg_type_qual[i] = (uint32_t)tq;
		}
		if (aq == CL_KERNEL_ARG_ADDRESS_PRIVATE &&
		    clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME,
		    sizeof tname, tname, NULL) == CL_SUCCESS)
			kd->arg_size[i] = vcl_type_size(tname, bits);
	}
	if ((kd->wg_size = calloc(be->ndevices, sizeof *kd->wg_size)) == NULL ||
	    (kd->compile_wg = calloc(be->ndevices * 3,
	    sizeof *kd->compile_wg)) == NULL)
		return (-1);
	kd->n_wg_size = be->ndevices;
	kd->n_compile_wg = be->ndevices * 3;
	for (i = 0; i < be->ndevices; i++) {
		if (clGetKernelWorkGroupInfo(k, be->devices[i],
		    CL_KERNEL_WORK_GROUP_SIZE, sizeof n, &n, NULL) != CL_SUCCESS)
			continue;
		kd->wg_size[i] = n;
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

/* Keep a kernel's argument qualifiers on its object, to check launches. */
static int
vcl_kernel_keep(struct vcl_hobj *o, const Vcl__KernelDesc *kd)
{
	o->nargs = kd->num_args;
	if (kd->num_args == 0)
		return (0);
	if ((o->argq = calloc(kd->num_args, sizeof *o->argq)) == NULL)
		return (-1);
	memcpy(o->argq, kd->arg_address, kd->num_args * sizeof *o->argq);
	return (0);
}

/* Free what vcl_kernel_desc allocated. */
static void
vcl_kernel_desc_free(Vcl__KernelDesc *kd)
{
	free(kd->name);
	free(kd->arg_address);
	free(kd->arg_size);
	free(kd->arg_type_qual);
	free(kd->wg_size);
	free(kd->compile_wg);
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
	cl_kernel		 k = NULL;
	cl_int			 err = CL_SUCCESS;

	vcl__kernel_desc__init(&kd);
	if ((p = vcl_kernel_program(s, m->program, &err)) != NULL)
		k = clCreateKernel(p->u.prog, m->name, &err);
	if (err == CL_SUCCESS && vcl_kernel_desc(s, k, m->id, &kd) != 0)
		err = CL_OUT_OF_HOST_MEMORY;
	if (err == CL_SUCCESS) {
		if ((o = vcl_session_add(s, m->id, VCL_KIND_KERNEL)) == NULL ||
		    o->error != CL_SUCCESS) {
			clReleaseKernel(k);
			if (s->dead) {
				vcl_kernel_desc_free(&kd);
				return;
			}
			if (o != NULL) {
				vcl_session_release(s, o);
				vcl_handle_del(&s->handles, o);
			}
			err = CL_OUT_OF_RESOURCES;
		} else {
			o->u.kernel = k;
			if (vcl_kernel_keep(o, &kd) != 0) {
				vcl_session_release(s, o);
				vcl_handle_del(&s->handles, o);
				err = CL_OUT_OF_HOST_MEMORY;
			}
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
	vcl_kernel_desc_free(&kd);
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
	    (kdp = calloc(n, sizeof *kdp)) == NULL))
		err = CL_OUT_OF_HOST_MEMORY;
	if (err == CL_SUCCESS && n > 0)
		err = clCreateKernelsInProgram(p->u.prog, n, ks, NULL);
	for (i = 0; i < n && err == CL_SUCCESS; i++) {
		kdp[i] = &kd[i];
		if (vcl_kernel_desc(s, ks[i], m->ids[i], &kd[i]) != 0)
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
		if (vcl_kernel_keep(o, &kd[i]) != 0)
			err = CL_OUT_OF_HOST_MEMORY;
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
	for (i = 0; i < n && kd != NULL; i++)
		vcl_kernel_desc_free(&kd[i]);
	free(kd);
	free(kdp);
	free(ks);
}
