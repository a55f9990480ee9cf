/* test_kinds.c - every wire Kind has exactly one client tag (vcl_object.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vcl_client.h"
#include "vcl_object.h"

/* vcl_object.c compares against the dispatch table; none is needed here. */
const struct _cl_icd_dispatch	vcl_dispatch;

/* Each Kind but NONE is the wire kind of exactly one client tag. */
static void
test_kinds_every_wire_kind(void **state)
{
	const ProtobufCEnumDescriptor	*d = &vcl__kind__descriptor;
	unsigned			 i, tags, missing = 0;
	int				 k, v;

	assert_int_equal(d->magic, PROTOBUF_C__ENUM_DESCRIPTOR_MAGIC);
	for (i = 0; i < d->n_values; i++) {
		v = d->values[i].value;
		if (v == VCL__KIND__KIND_NONE)
			continue;
		tags = 0;
		for (k = VCL_KIND_BASE + 1; k < VCL_KIND_END; k++)
			if ((int)vcl_kind_wire(k) == v)
				tags++;
		if (tags != 1) {
			print_error("wire kind %s (%d) has %u client tags\n",
			    d->values[i].name, v, tags);
			missing++;
		}
	}
	assert_int_equal(missing, 0);
}

/* Each tag maps to a Kind the wire names; anything else to KIND_NONE. */
static void
test_kinds_tags(void **state)
{
	const ProtobufCEnumDescriptor	*d = &vcl__kind__descriptor;
	int				 k;

	for (k = VCL_KIND_BASE + 1; k < VCL_KIND_END; k++)
		assert_non_null(protobuf_c_enum_descriptor_get_value(d,
		    vcl_kind_wire(k)));
	assert_int_equal(vcl_kind_wire(VCL_KIND_PLATFORM), VCL__KIND__KIND_NONE);
	assert_int_equal(vcl_kind_wire(VCL_KIND_CONTEXT),
	    VCL__KIND__KIND_CONTEXT);
	assert_int_equal(vcl_kind_wire(VCL_KIND_EVENT), VCL__KIND__KIND_EVENT);
	assert_int_equal(vcl_kind_wire(VCL_KIND_BASE), VCL__KIND__KIND_NONE);
	assert_int_equal(vcl_kind_wire(VCL_KIND_END), VCL__KIND__KIND_NONE);
	assert_int_equal(vcl_kind_wire(0), VCL__KIND__KIND_NONE);
	/* The first tag keeps the magic objects were always tagged with. */
	assert_int_equal(VCL_KIND_PLATFORM, 0x56434c01);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_kinds_every_wire_kind),
		cmocka_unit_test(test_kinds_tags),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
