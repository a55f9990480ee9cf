#!/bin/sh
# hops.sh - where a halo exchange's time goes: advection across N
# vclservers (one device each) with debug logs, whose monotonic timestamps
# line up on one host, then per migration push:
#   read->wire   the edge's device-to-host read done -> the push written
#   wire         push written -> its frame dispatched on the receiver
#   turnaround   push in -> the receiver's next read done (its arrival
#                write, unpack, kernel(s), pack and read on the device,
#                plus the loop's part: enqueue, release of held commands)
# and the client's share: enqueue_s (all steps enqueued) against elapsed_s.
#
#   hops.sh [-g NODES] [-D "DEVICES"] [-- advection args]
#
# Defaults: -g 2, node i serves device i (-D "0 0": both serve device 0,
# for a host with one device), advection -n 4096 -s 200.
#
# BIN: directory with vclserver and advection; NATIVE_ICD: vendors dir of
# the native platform; VCL_ICD: vcl.icd. Debug logging slows the servers a
# little: read the split, not the rate.
set -u
nodes=2
devs=""
while getopts D:g: o; do
	case $o in
	D) devs=$OPTARG ;;
	g) nodes=$OPTARG ;;
	*) echo "usage: hops.sh [-g NODES] [-D DEVICES] [-- advection args]"
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- -n 4096 -s 200
: "${BIN:?BIN: directory with vclserver and advection}"
: "${NATIVE_ICD:?NATIVE_ICD: vendors dir of the native platform}"
: "${VCL_ICD:?VCL_ICD: the vcl.icd file}"
dir=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait; rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM

. "$(dirname "$0")/servers.sh"
servers_start "$nodes" debug "$devs"
VCL_NODES=$list OCL_ICD_VENDORS=$VCL_ICD timeout 120 "$BIN/advection" \
    -d "$nodes" -C "$@" | grep -E "cells_per_s|FAIL"
for p in $pids; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
pids=""

# Lines: "T vclserver: debug: FN: ...". Tag each with its server.
i=0
while [ $i -lt "$nodes" ]; do
	sed -n "s/^\([0-9.]*\) vclserver: debug: \(.*\)$/\1 $i \2/p" \
	    "$dir/server$i.log"
	i=$((i + 1))
done | sort -n -k1,1 | awk '
function med(a, n,   i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n ? a[int((n + 1) / 2)] : 0
}
# read done: "vcl_cmd_fire: command type 4 event E xid X: status S"
$3 == "vcl_cmd_fire:" && $6 == "4" {
	x = $10; sub(":", "", x); done[x] = $1
	if (waiting[$2] != "") {
		turn[++nt] = ($1 - waiting[$2]) * 1e6; waiting[$2] = ""
	}
}
# on the wire: "vcl_peer_forward: push X to ADDR"
$3 == "vcl_peer_forward:" && $4 == "push" {
	sent[$5] = $1
	if ($5 in done) rw[++nrw] = ($1 - done[$5]) * 1e6
}
# dispatched on the receiver: "vcl_op_peer_push: push X in: N bytes"
$3 == "vcl_op_peer_push:" && $4 == "push" {
	if ($5 in sent) wire[++nw] = ($1 - sent[$5]) * 1e6
	if (waiting[$2] == "") waiting[$2] = $1
	bytes = $7
}
END {
	printf "pushes: %d of %d bytes\n", nw, bytes
	printf "read->wire  median %7.1f us\n", med(rw, nrw)
	printf "wire        median %7.1f us\n", med(wire, nw)
	printf "turnaround  median %7.1f us\n", med(turn, nt)
}'
