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
# VCL answers some of them for what it forwards, not what the node's device
# has (docs/operating.md): those are compared below, not line by line.
# Partitioning is forwarded: compared line by line.
own='^CL_DEVICE_(EXECUTION_CAPABILITIES|SVM_|ATOMIC_|PIPE_|MAX_PIPE_|DEVICE_ENQUEUE_|QUEUE_ON_DEVICE_|MAX_ON_DEVICE_|EXTENSIONS|OPENCL_C_FEATURES|COMMAND_BUFFER_|SPIR_)'
dev() { sed -n 's/^\[[^]/]*\/0\] *//p' "$1" | grep -v '^CL_PLATFORM_NAME' |
    grep -Ev "$own"; }
# VCL's device extensions are some of the native device's.
exts() { sed -n 's/^\[[^]/]*\/0\] *CL_DEVICE_EXTENSIONS  *//p' "$1" |
    tr ' ' '\n' | sed '/^$/d' | sort; }
extra=$(exts "$native" | comm -13 - "$(exts "$vcl" >"$vcl.ext"; echo "$vcl.ext")")
rm -f "$vcl.ext"
[ -z "$extra" ] || { echo "clinfo_compare: VCL adds extensions: $extra"; exit 1; }
# Native kernels run host code: VCL claims none, the rest is the node's.
cap() { sed -n 's/^\[[^]/]*\/0\] *CL_DEVICE_EXECUTION_CAPABILITIES  *//p' "$1" |
    sed 's/ | CL_EXEC_NATIVE_KERNEL//; s/CL_EXEC_NATIVE_KERNEL | //'; }
[ "$(cap "$native")" = "$(sed -n 's/^\[[^]/]*\/0\] *CL_DEVICE_EXECUTION_CAPABILITIES  *//p' "$vcl")" ] ||
    { echo "clinfo_compare: execution capabilities: VCL $(grep EXECUTION_CAP "$vcl"), native $(grep EXECUTION_CAP "$native")"; exit 1; }
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
