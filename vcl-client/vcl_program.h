/* vcl_program.h - programs, their builds, and kernels. */
#ifndef VCL_PROGRAM_H
#define VCL_PROGRAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vcl_client.h"

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

void		 vcl_program_unref(cl_program);

#endif
