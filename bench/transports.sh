#!/bin/sh
# transports.sh - a buffer's migration cost per size across two vclservers
# on one host, per bulk transport of their peer link: examples/pingpong
# (it bounces a buffer between the two servers' devices and prints each
# hop's cost less the kernel's) with both servers forced to tcp, ucx (where
# built) and tca (the PEACH2 model: its paced timing, not hardware), then
# one table of move_us per size, one column per transport.
#
#   transports.sh [-r HOPS] [-t "tcp ucx tca"] [-b BYTES]...
#
# VCL_BUILD: the build directory (with_server.sh starts the servers).
set -u
hops=100
tps="tcp ucx tca"
sizes=""
while getopts b:r:t: o; do
	case $o in
	b) sizes="$sizes -b $OPTARG" ;;
	r) hops=$OPTARG ;;
	t) tps=$OPTARG ;;
	*) echo "usage: transports.sh [-r HOPS] [-t TRANSPORTS] [-b BYTES]..."
	   exit 2 ;;
	esac
done
[ -n "$sizes" ] || sizes="-b 4 -b 4096 -b 16384 -b 65536 -b 262144 \
-b 1048576 -b 16777216"
: "${VCL_BUILD:?VCL_BUILD: the build directory}"
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for t in $tps; do
	args="--transport-force $t"
	[ "$t" = tca ] && args="$args --tca-domain bench_@RUN@ --tca-node @NODE@"
	# shellcheck disable=SC2086
	sh "$here/../tests/integration/with_server.sh" -n 2 -s "$args" -- \
	    "$VCL_BUILD/examples/pingpong" -r "$hops" $sizes \
	    > "$dir/$t" 2>&1
	if ! grep -q "peer links: .* $t" "$dir/$t"; then
		echo "transports.sh: $t not used on the peer link (not built, or refused):" >&2
		grep "peer links\|FAIL\|error" "$dir/$t" >&2
		: > "$dir/$t"
	fi
done
printf '%10s' bytes
for t in $tps; do printf ' %12s' "$t us"; done
echo
for b in $(echo "$sizes" | tr -d -- '-b'); do
	printf '%10s' "$b"
	for t in $tps; do
		v=$(sed -n "s/.*bytes=$b .*move_us=\([0-9.]*\).*/\1/p" "$dir/$t")
		printf ' %12s' "${v:--}"
	done
	echo
done
