/* vcl_client.h - libvcl core: object kinds and header, the entry points. */
#ifndef VCL_CLIENT_H
#define VCL_CLIENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <CL/cl_icd.h>

#include "vcl.pb-c.h"

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

#endif
