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

#include "vcl_server.h"

/* True when field f is a case of Request's oneof "call". */
static int
is_call(const ProtobufCFieldDescriptor *f)
{
	return ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
	    f->quantifier_offset == offsetof(Vcl__Request, call_case));
}

/* The descriptor holds seq plus the oneof cases, nothing else. */
static void
test_dispatch_descriptor_shape(void **state)
{
	const ProtobufCMessageDescriptor	*d = &vcl__request__descriptor;
	unsigned				 i, calls = 0;

	assert_int_equal(d->magic, PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC);
	for (i = 0; i < d->n_fields; i++) {
		if (is_call(&d->fields[i]))
			calls++;
		else
			assert_string_equal(d->fields[i].name, "seq");
	}
	assert_int_equal(calls, d->n_fields - 1);
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

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_dispatch_descriptor_shape),
		cmocka_unit_test(test_dispatch_every_case),
		cmocka_unit_test(test_dispatch_no_stray),
		cmocka_unit_test(test_dispatch_flags),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
