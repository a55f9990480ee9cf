#!/bin/sh
# scaling.sh - advection cells/s through VCL on 1..G nodes (one vclserver
# per device) against the native platform on one device, in one run.
#
#   scaling.sh [-g MAXNODES] [-n "SIZES"] [-s STEPS] [-t TIMEOUT] [-H "DEPTHS"]
#              [-D "DEVICES"] [-a "ARGS"]
#
# -a: more advection arguments for every run (-a -B: the bulk-synchronous
# schedule instead of the overlapped default).
# -H: halo depths to run the multi-node cases with (advection -H; default
# "1": every step exchanges one row per side). -D "0 0": the devices the
# servers serve (default: server i serves device i).
#
# BIN: directory with vclserver and advection; NATIVE_ICD: the vendors dir
# of the native platform (e.g. one holding nvidia.icd); VCL_ICD: vcl.icd.
# Each vclserver serves one device of the native platform (--devices i) on
# 127.0.0.1. Prints one line per run with its speedup over one native
# device, and the native platform's own multi-device runs for comparison.
set -u
maxn=2
sizes="4096"
steps=""
tmo=120
depths=1
devs=""
args=""
while getopts a:D:g:H:n:s:t: o; do
	case $o in
	a) args=$OPTARG ;;
	D) devs=$OPTARG ;;
	H) depths=$OPTARG ;;
	t) tmo=$OPTARG ;;
	g) maxn=$OPTARG ;;
	n) sizes=$OPTARG ;;
	s) steps="-s $OPTARG" ;;
	*) echo "usage: scaling.sh [-g N] [-n SIZES] [-s STEPS] [-t SECS]" \
	       "[-H DEPTHS] [-D DEVICES] [-a ARGS]"
	   exit 2 ;;
	esac
done
: "${BIN:?BIN: directory with vclserver and advection}"
: "${NATIVE_ICD:?NATIVE_ICD: vendors dir of the native platform}"
: "${VCL_ICD:?VCL_ICD: the vcl.icd file}"
dir=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait; rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM

. "$(dirname "$0")/servers.sh"
servers_start "$maxn" warn "$devs"
nodes=$list

cells() { sed -n 's/.*cells_per_s=\([0-9.e+]*\).*/\1/p' | head -1; }
for n in $sizes; do
	native=$(OCL_ICD_VENDORS=$NATIVE_ICD timeout "$tmo" "$BIN/advection" -n "$n" \
	    $steps -d 1 -C $args 2>&1 | tee "$dir/native$n" | cells)
	grep -E "cells_per_s|PASS|FAIL|L1" "$dir/native$n" | sed 's/^/native: /'
	echo "n=$n native 1 device: $native cells/s"
	for h in $depths; do
	d=1
	while [ $d -le "$maxn" ]; do
		# One node has no halo to exchange: its depth-1 run is the one.
		if [ $d -eq 1 ] && [ "$h" != "$(echo $depths | cut -d' ' -f1)" ]; then
			d=2
			continue
		fi
		v=$(VCL_NODES=$nodes OCL_ICD_VENDORS=$VCL_ICD timeout "$tmo" \
		    "$BIN/advection" \
		    -n "$n" $steps -d $d -H "$h" -C $args 2>&1 |
		    tee "$dir/vcl$n.$d.$h" | cells)
		grep -E "cells_per_s|PASS|FAIL|L1|rror" "$dir/vcl$n.$d.$h" |
		    sed "s/^/vcl d=$d H=$h: /"
		awk -v n="$n" -v d="$d" -v v="$v" -v a="$native" -v h="$h" 'BEGIN {
		    if (v == "" || a == "") { printf "n=%s H=%s VCL %d nodes: failed\n", n, h, d; exit }
		    printf "n=%s H=%s VCL %d node(s): %.3e cells/s = %.2fx native 1 device\n",
		    n, h, d, v, v / a }'
		# The native platform's own multi-device context, same split.
		if [ $d -gt 1 ]; then
			w=$(OCL_ICD_VENDORS=$NATIVE_ICD timeout "$tmo" \
			    "$BIN/advection" -n "$n" $steps -d $d -H "$h" -C \
			    $args 2>&1 | cells)
			awk -v n="$n" -v d="$d" -v w="$w" -v a="$native" -v h="$h" 'BEGIN {
			    if (w == "" || a == "") { printf "n=%s H=%s native %d devices: failed\n", n, h, d; exit }
			    printf "n=%s H=%s native %d devices, one context: %.3e cells/s = %.2fx\n",
			    n, h, d, w, w / a }'
		fi
		d=$((d + 1))
	done
	done
done
for i in $(seq 0 $((maxn - 1))); do
	[ -s "$dir/server$i.log" ] && { echo "server $i log:"; cat "$dir/server$i.log"; }
done
exit 0
