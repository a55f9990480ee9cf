#!/bin/sh
# shared.sh - a migration between two vclservers on one host against this
# host's memcpy, in one run: examples/pingpong -m (each hop's move less the
# kernel's, and memcpy of the same size measured by the same process right
# after) with the peer link on tcp, on ucx without shared staging
# (VCL_UCX_PLACE=0: one UCX message, which UCX sends over TCP between two
# servers of one host, its shared-memory transports being out under the
# peer-failure handling VCL asks for), on ucx with shared staging through
# the ring (VCL_UCX_DIRECT=0) and on ucx with it in direct
# mode (VCL_UCX_DIRECT=1, the default: on devices whose memory is the host's, PoCL's,
# the destination reads the source's buffer itself; elsewhere the same as
# the ring), one
# table of move GB/s and ratio to memcpy per size.
#
#   shared.sh [-r HOPS] [-b BYTES]...
#
# VCL_BUILD: the build directory (with_server.sh starts the servers).
set -u
hops=10
sizes=""
while getopts b:r: o; do
	case $o in
	b) sizes="$sizes -b $OPTARG" ;;
	r) hops=$OPTARG ;;
	*) echo "usage: shared.sh [-r HOPS] [-b BYTES]..."; exit 2 ;;
	esac
done
[ -n "$sizes" ] || sizes="-b 16777216 -b 67108864 -b 268435456"
: "${VCL_BUILD:?VCL_BUILD: the build directory}"
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() {	# name, placement (0/1), transport, direct mode (0/1)
	# shellcheck disable=SC2086
	VCL_UCX_PLACE=$2 VCL_UCX_DIRECT=$4 sh "$here/../tests/integration/with_server.sh" -n 2 \
	    -s "--transport-force $3" -- "$VCL_BUILD/examples/pingpong" -m \
	    -r "$hops" $sizes > "$dir/$1" 2>&1
	grep -q "peer links: .* $3" "$dir/$1" || {
		echo "shared.sh: $3 not used on the peer link:" >&2
		grep "peer links\|FAIL\|error" "$dir/$1" >&2
	}
}
run tcp 0 tcp 0
run ucx 0 ucx 0
run shared 1 ucx 0
run direct 1 ucx 1
printf '%10s %17s %17s %17s %17s\n' bytes "tcp GB/s (x)" "ucx GB/s (x)" \
    "ring GB/s (x)" "direct GB/s (x)"
for b in $(echo "$sizes" | tr -d -- '-b'); do
	printf '%10s' "$b"
	for t in tcp ucx shared direct; do
		v=$(sed -n "s/.*bytes=$b .*move_gbps=\([0-9.]*\).*ratio=\([0-9.]*\).*/\1 (\2)/p" "$dir/$t")
		printf ' %17s' "${v:--}"
	done
	echo
done
printf '%10s' "memcpy"
for t in tcp ucx shared direct; do
	v=$(sed -n 's/.*memcpy_gbps=\([0-9.]*\).*/\1/p' "$dir/$t" | tr '\n' ' ')
	printf ' %17s' "$v"
done
echo
