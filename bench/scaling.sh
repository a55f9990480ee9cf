#!/bin/sh
# scaling.sh - advection cells/s through VCL on 1..G nodes (one vclserver
# per device) against the native platform on one device, in one run.
#
#   scaling.sh [-g MAXNODES] [-n "SIZES"] [-s STEPS] [-t TIMEOUT]
#
# BIN: directory with vclserver and advection; NATIVE_ICD: the vendors dir
# of the native platform (e.g. one holding nvidia.icd); VCL_ICD: vcl.icd.
# Each vclserver serves one device of the native platform (--devices i) on
# 127.0.0.1. Prints one line per run and a table of speedups.
set -u
maxn=2
sizes="4096"
steps=""
tmo=120
while getopts g:n:s:t: o; do
	case $o in
	t) tmo=$OPTARG ;;
	g) maxn=$OPTARG ;;
	n) sizes=$OPTARG ;;
	s) steps="-s $OPTARG" ;;
	*) echo "usage: scaling.sh [-g N] [-n SIZES] [-s STEPS]"; exit 2 ;;
	esac
done
: "${BIN:?BIN: directory with vclserver and advection}"
: "${NATIVE_ICD:?NATIVE_ICD: vendors dir of the native platform}"
: "${VCL_ICD:?VCL_ICD: the vcl.icd file}"
dir=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait; rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM

nodes=""
i=0
while [ $i -lt "$maxn" ]; do
	OCL_ICD_VENDORS=$NATIVE_ICD "$BIN/vclserver" --listen 127.0.0.1:0 \
	    --port-file "$dir/p$i" --devices $i --name gpu$i \
	    --log-level warn 2>"$dir/server$i.log" &
	pids="$pids $!"
	i=$((i + 1))
done
i=0
while [ $i -lt "$maxn" ]; do
	n=0
	until [ -s "$dir/p$i" ]; do
		n=$((n + 1))
		[ $n -lt 6000 ] || { echo "scaling: server $i did not start";
		    cat "$dir/server$i.log"; exit 1; }
		sleep 0.01
	done
	nodes="$nodes${nodes:+,}127.0.0.1:$(cat "$dir/p$i")"
	i=$((i + 1))
done

cells() { sed -n 's/.*cells_per_s=\([0-9.e+]*\).*/\1/p' | head -1; }
for n in $sizes; do
	native=$(OCL_ICD_VENDORS=$NATIVE_ICD timeout "$tmo" "$BIN/advection" -n "$n" \
	    $steps -d 1 -C 2>&1 | tee "$dir/native$n" | cells)
	grep -E "cells_per_s|PASS|FAIL|L1" "$dir/native$n" | sed 's/^/native: /'
	echo "n=$n native 1 device: $native cells/s"
	d=1
	while [ $d -le "$maxn" ]; do
		v=$(VCL_NODES=$nodes OCL_ICD_VENDORS=$VCL_ICD timeout "$tmo" \
		    "$BIN/advection" \
		    -n "$n" $steps -d $d -C 2>&1 | tee "$dir/vcl$n.$d" | cells)
		grep -E "cells_per_s|PASS|FAIL|L1" "$dir/vcl$n.$d" |
		    sed "s/^/vcl d=$d: /"
		awk -v n="$n" -v d="$d" -v v="$v" -v a="$native" 'BEGIN {
		    if (v == "" || a == "") { printf "n=%s VCL %d nodes: failed\n", n, d; exit }
		    printf "n=%s VCL %d node(s): %.3e cells/s = %.2fx native 1 device\n",
		    n, d, v, v / a }'
		d=$((d + 1))
	done
done
for i in $(seq 0 $((maxn - 1))); do
	[ -s "$dir/server$i.log" ] && { echo "server $i log:"; cat "$dir/server$i.log"; }
done
exit 0
