#!/bin/sh
# compare_native.sh - run a program natively and through VCL and compare the
# lines of its output that match a pattern (results, not timings).
#
#   compare_native.sh PATTERN -- program [args...]
#
# Runs under with_server.sh (OCL_ICD_VENDORS points at VCL); NATIVE_ICD names
# the native vendors dir. Both runs must succeed.
set -u
pat=$1
shift 2
native=$(mktemp)
vcl=$(mktemp)
trap 'rm -f "$native" "$vcl"' EXIT
OCL_ICD_VENDORS=${NATIVE_ICD:-/etc/OpenCL/vendors} "$@" >"$native" 2>&1 ||
    { echo "compare_native: native run failed:"; cat "$native"; exit 1; }
"$@" >"$vcl" 2>&1 || { echo "compare_native: VCL run failed:"; cat "$vcl"; exit 1; }
grep -E "$pat" "$native" >"$native.sel"
grep -E "$pat" "$vcl" >"$vcl.sel"
if [ ! -s "$native.sel" ]; then
	echo "compare_native: no line matches '$pat'"
	rm -f "$native.sel" "$vcl.sel"
	exit 1
fi
if diff "$native.sel" "$vcl.sel"; then
	echo "compare_native: $(wc -l <"$vcl.sel") result line(s) identical"
	rm -f "$native.sel" "$vcl.sel"
	exit 0
fi
rm -f "$native.sel" "$vcl.sel"
exit 1
