/* test_dispatch.c - every Request oneof case has a handler, and no other. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "vcl_dispatch.h"

/* True when field f is a case of Request's oneof "call". */
static int
is_call(const ProtobufCFieldDescriptor *f)
{
	return ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
	    f->quantifier_offset == offsetof(Vcl__Request, call_case));
}

/*
 * The descriptor holds the envelope's fields (seq, an out-of-band bulk's
 * transfer and size) plus the oneof cases, nothing else.
 */
static void
test_dispatch_descriptor_shape(void **state)
{
	const ProtobufCMessageDescriptor	*d = &vcl__request__descriptor;
	unsigned				 i, calls = 0;
	const char				*name;

	assert_int_equal(d->magic, PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC);
	for (i = 0; i < d->n_fields; i++) {
		if (is_call(&d->fields[i])) {
			calls++;
			continue;
		}
		name = d->fields[i].name;
		if (strcmp(name, "seq") != 0 && strcmp(name, "bulk_xfer") != 0 &&
		    strcmp(name, "bulk_size") != 0)
			fail_msg("Request field %s is neither the envelope's "
			    "nor a call", name);
	}
	assert_int_equal(calls, d->n_fields - 3);
	assert_true(calls > 0);
}

/* Each oneof case has a handler, named after its field. */
static void
test_dispatch_every_case(void **state)
{
	const ProtobufCMessageDescriptor	*d = &vcl__request__descriptor;
	const ProtobufCFieldDescriptor		*f;
	const struct vcl_op			*op;
	unsigned				 i, missing = 0;

	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (!is_call(f))
			continue;
		if ((op = vcl_dispatch_lookup(f->id)) == NULL) {
			print_error("oneof case %s (%u) has no handler\n",
			    f->name, f->id);
			missing++;
			continue;
		}
		assert_non_null(op->fn);
		assert_non_null(op->name);
		assert_true(op->name[0] != '\0');
		/* Catches a handler filed under the wrong case. */
		if (strcasecmp(op->name, f->name) != 0) {
			print_error("case %s (%u) is handled as %s\n", f->name,
			    f->id, op->name);
			missing++;
		}
		assert_true(f->id < vcl_dispatch_max());
	}
	assert_int_equal(missing, 0);
}

/* Numbers that are no case of the oneof have no handler. */
static void
test_dispatch_no_stray(void **state)
{
	const ProtobufCMessageDescriptor	*d = &vcl__request__descriptor;
	const ProtobufCFieldDescriptor		*f;
	unsigned				 c;

	assert_null(vcl_dispatch_lookup(0));
	assert_null(vcl_dispatch_lookup(VCL__REQUEST__CALL__NOT_SET));
	assert_null(vcl_dispatch_lookup(vcl_dispatch_max()));
	assert_null(vcl_dispatch_lookup(vcl_dispatch_max() + 1));
	assert_null(vcl_dispatch_lookup(UINT_MAX));
	assert_null(vcl_dispatch_lookup(UINT_MAX - 1));
	for (c = 0; c < vcl_dispatch_max() + 64; c++) {
		f = protobuf_c_message_descriptor_get_field(d, c);
		if (f == NULL || !is_call(f))
			assert_null(vcl_dispatch_lookup(c));
	}
}

/* Only Hello may come before the handshake; only it must. */
static void
test_dispatch_flags(void **state)
{
	const struct vcl_op	*op;
	unsigned		 c;

	op = vcl_dispatch_lookup(VCL__REQUEST__CALL_HELLO);
	assert_non_null(op);
	assert_true(op->flags & VCL_OP_PREAUTH);
	for (c = 0; c < vcl_dispatch_max(); c++) {
		if (c == VCL__REQUEST__CALL_HELLO ||
		    (op = vcl_dispatch_lookup(c)) == NULL)
			continue;
		assert_false(op->flags & VCL_OP_PREAUTH);
	}
	/* Calls that carry bytes take bulk; reads and releases do not. */
	assert_true(vcl_dispatch_lookup(VCL__REQUEST__CALL_WRITE_BUFFER)->flags &
	    VCL_OP_BULK);
	assert_false(vcl_dispatch_lookup(VCL__REQUEST__CALL_READ_BUFFER)->flags &
	    VCL_OP_BULK);
	assert_false(vcl_dispatch_lookup(VCL__REQUEST__CALL_RELEASE)->flags &
	    VCL_OP_BULK);
}

/*
 * VCL_OP_ENQUEUE is set exactly on the calls whose message starts with
 * "Enqueue q = 1", and vcl_dispatch_enqueue finds that q for each: the
 * hold logic knows every command's wait list from this flag alone.
 */
static void
test_dispatch_enqueue_flag(void **state)
{
	const ProtobufCMessageDescriptor	*d = &vcl__request__descriptor;
	const ProtobufCMessageDescriptor	*md;
	const ProtobufCFieldDescriptor		*f, *q;
	const struct vcl_op			*op;
	ProtobufCMessage			*call;
	Vcl__Request				 req = VCL__REQUEST__INIT;
	Vcl__Enqueue				 e = VCL__ENQUEUE__INIT;
	unsigned				 i, n = 0;
	int					 is_enq;

	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (!is_call(f) || (op = vcl_dispatch_lookup(f->id)) == NULL)
			continue;
		md = f->descriptor;
		q = protobuf_c_message_descriptor_get_field(md, 1);
		is_enq = q != NULL && q->type == PROTOBUF_C_TYPE_MESSAGE &&
		    q->descriptor == &vcl__enqueue__descriptor;
		if (is_enq != ((op->flags & VCL_OP_ENQUEUE) != 0))
			print_error("case %s: VCL_OP_ENQUEUE %s\n", f->name,
			    is_enq ? "missing" : "set on a non-command");
		assert_int_equal(is_enq, (op->flags & VCL_OP_ENQUEUE) != 0);
		/* No Enqueue anywhere else in a call's message. */
		if (!is_enq) {
			unsigned	j;

			for (j = 0; j < md->n_fields; j++)
				assert_ptr_not_equal(md->fields[j].descriptor,
				    &vcl__enqueue__descriptor);
		}
		call = test_calloc(1, md->sizeof_message);
		protobuf_c_message_init(md, call);
		req.call_case = f->id;
		*(ProtobufCMessage **)((char *)&req + f->offset) = call;
		if (is_enq) {
			*(Vcl__Enqueue **)((char *)call + q->offset) = &e;
			assert_ptr_equal(vcl_dispatch_enqueue(&req), &e);
			n++;
		} else
			assert_null(vcl_dispatch_enqueue(&req));
		test_free(call);
	}
	/* The commands: buffers (plain and rect), kernels, markers, arrivals. */
	assert_true(n >= 10);
	req.call_case = VCL__REQUEST__CALL__NOT_SET;
	assert_null(vcl_dispatch_enqueue(&req));
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_dispatch_descriptor_shape),
		cmocka_unit_test(test_dispatch_every_case),
		cmocka_unit_test(test_dispatch_no_stray),
		cmocka_unit_test(test_dispatch_flags),
		cmocka_unit_test(test_dispatch_enqueue_flag),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
