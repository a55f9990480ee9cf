#!/bin/sh
# clinfo_compare.sh - clinfo through VCL must show the remote device with the
# same properties clinfo shows natively. Run under with_server.sh, which
# points OCL_ICD_VENDORS at VCL; NATIVE_ICD names the native vendors dir.
set -u
native=$(mktemp)
vcl=$(mktemp)
trap 'rm -f "$native" "$vcl"' EXIT
OCL_ICD_VENDORS=${NATIVE_ICD:-/etc/OpenCL/vendors} clinfo --raw >"$native" ||
    { echo "clinfo_compare: native clinfo failed"; exit 1; }
clinfo --raw >"$vcl" || { echo "clinfo_compare: clinfo through VCL failed"; exit 1; }
grep -q '^  CL_PLATFORM_NAME *VCL$' "$vcl" ||
    { echo "clinfo_compare: no VCL platform listed"; cat "$vcl"; exit 1; }
# Device lines of the first device of each: "[PFX/0] PARAM value".
dev() { sed -n 's/^\[[^]/]*\/0\] *//p' "$1" | grep -v '^CL_PLATFORM_NAME'; }
n=$(dev "$vcl" | wc -l)
[ "$n" -gt 50 ] || { echo "clinfo_compare: only $n device properties through VCL"; exit 1; }
if dev "$native" >"$native.dev" && dev "$vcl" >"$vcl.dev" &&
    diff "$native.dev" "$vcl.dev"; then
	echo "clinfo_compare: $n device properties identical"
	rm -f "$native.dev" "$vcl.dev"
	exit 0
fi
rm -f "$native.dev" "$vcl.dev"
echo "clinfo_compare: device properties differ (native <, VCL >)"
exit 1
