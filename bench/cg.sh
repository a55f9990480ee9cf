#!/bin/sh
# cg.sh - conjugate gradients (examples/cg) through VCL on 1..G nodes (one
# vclserver per device) against the native platform on one device, both
# methods (cg: two reductions per iteration; cg-p, Chronopoulos-Gear: one),
# in one run.
#
#   cg.sh [-g MAXNODES] [-n SIDE] [-3] [-i ITERATIONS] [-r REPEAT]
#         [-t TIMEOUT] [-D "DEVICES"] [-a "CG ARGS"]
#
# -n: grid side of the Poisson matrix (default 256, 2D; -3: 3D, default
# 40); -i: most iterations (cg's default: a run must converge, as one that
# stops at the limit is reported failed); -a: more cg arguments (-f,
# -m file.mtx, ...); -r: runs of each case, each figure the least of them
# (default 3: a shared machine's noise only ever adds time). -D "0 0": the devices the servers serve
# (default: server i serves device i).
#
# BIN: directory with vclserver and cg; NATIVE_ICD: the vendors dir of the
# native platform; VCL_ICD: vcl.icd. Prints, per method and node count, the
# time per iteration and its ratio to one native device, then the split cg
# measures with its queues finished after each phase (-S): the halo
# exchange and the reductions (host round trips) per iteration, what the
# latency of small transfers decides.
set -u
maxn=3
side=""
dim=""
iters=10000
tmo=120
devs=""
args=""
rep=3
while getopts 3a:D:g:i:n:r:t: o; do
	case $o in
	3) dim=-3 ;;
	a) args=$OPTARG ;;
	D) devs=$OPTARG ;;
	g) maxn=$OPTARG ;;
	i) iters=$OPTARG ;;
	n) side=$OPTARG ;;
	r) rep=$OPTARG ;;
	t) tmo=$OPTARG ;;
	*) echo "usage: cg.sh [-g N] [-n SIDE] [-3] [-i ITERATIONS] [-r REPEAT]" \
	       "[-t SECS] [-D DEVICES] [-a ARGS]"
	   exit 2 ;;
	esac
done
[ -n "$side" ] || { [ -n "$dim" ] && side=40 || side=256; }
: "${BIN:?BIN: directory with vclserver and cg}"
: "${NATIVE_ICD:?NATIVE_ICD: vendors dir of the native platform}"
: "${VCL_ICD:?VCL_ICD: the vcl.icd file}"
dir=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait; rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM

. "$(dirname "$0")/servers.sh"
servers_start "$maxn" warn "$devs"
nodes=$list

# key FILE NAME: the value of NAME=... in cg's output.
key() { sed -n "s/.* $2=\([0-9.e+-]*\).*/\1/p" "$1" | head -1; }
# least NAME FILES...: the least value of NAME in the outputs that passed.
least() {
	_k=$1
	shift
	for _f in "$@"; do
		grep -q '^cg: PASS' "$_f" && key "$_f" "$_k"
	done | sort -g | head -1
}
# runs OUT CMD...: run CMD $rep times, the outputs in OUT.1, OUT.2, ...
runs() {
	_out=$1
	shift
	_k=1
	while [ $_k -le "$rep" ]; do
		"$@" >"$_out.$_k" 2>&1
		_k=$((_k + 1))
	done
}
# row LABEL OUT NATIVE_US: one table row from the runs OUT.*, each figure
# the least of the runs that passed (a shared machine's noise only adds).
row() {
	awk -v l="$1" -v it="$(least iterations "$2".*)" \
	    -v us="$(least iter_us "$2".*)" -v a="$3" \
	    -v x="$(least exchange_us "$2".*)" -v s="$(least spmv_us "$2".*)" \
	    -v u="$(least update_us "$2".*)" -v r="$(least reduce_us "$2".*)" \
	    -v n="$(least reductions_per_iter "$2".*)" 'BEGIN {
	    if (us == "" || a == "") { printf "%-22s failed\n", l; exit }
	    printf "%-22s %6d %10.1f %7.2fx %10.1f %9.1f %9.1f %9.1f %11.1f\n",
	    l, it, us, us / a, x, s, u, r, r / n }'
}
printf "%-22s %6s %10s %8s %10s %9s %9s %9s %11s\n" run iters us/iter \
    "t/native" exchange spmv update reduce "per reduce"
for m in cg cg-p; do
	p=""
	[ $m = cg ] || p=-P
	# shellcheck disable=SC2086
	runs "$dir/native.$m" env OCL_ICD_VENDORS="$NATIVE_ICD" \
	    timeout "$tmo" "$BIN/cg" -n "$side" $dim -i "$iters" -d 1 -C $p \
	    $args
	native=$(least iter_us "$dir/native.$m".*)
	row "$m native 1 device" "$dir/native.$m" "$native"
	d=1
	while [ $d -le "$maxn" ]; do
		# shellcheck disable=SC2086
		runs "$dir/vcl.$m.$d" env VCL_NODES="$nodes" \
		    OCL_ICD_VENDORS="$VCL_ICD" timeout "$tmo" "$BIN/cg" \
		    -n "$side" $dim -i "$iters" -d $d -C $p $args
		row "$m VCL $d node(s)" "$dir/vcl.$m.$d" "$native"
		cat "$dir/vcl.$m.$d".* | grep -E "^cg: .*(FAIL|failed)" |
		    sed 's/^/  # /'
		d=$((d + 1))
	done
done
echo "(us: microseconds per iteration; exchange, spmv, update, reduce: the"
echo " split measured over cg -S iterations with every queue finished after"
echo " each phase; per reduce: one reduction's host round trip; each figure"
echo " the least of $rep runs)"
for i in $(seq 0 $((maxn - 1))); do
	[ -s "$dir/server$i.log" ] && { echo "server $i log:"; cat "$dir/server$i.log"; }
done
exit 0
