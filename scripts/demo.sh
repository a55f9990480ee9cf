#!/bin/sh
# demo.sh - the main job: build, start local vclservers, run the advection
# example across them through VCL. Usage: scripts/demo.sh [advection args]
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
dir=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

nodes=""
for i in 1 2; do
	build/vcl-server/vclserver --listen 127.0.0.1:0 \
	    --port-file "$dir/port$i" --name "node$i" --log-level warn &
	pids="$pids $!"
done
for i in 1 2; do
	n=0
	until [ -s "$dir/port$i" ]; do
		n=$((n + 1))
		[ $n -lt 500 ] || { echo "demo: vclserver $i did not start"; exit 1; }
		sleep 0.01
	done
	nodes="$nodes${nodes:+,}127.0.0.1:$(cat "$dir/port$i")"
done
echo "demo: vclservers at $nodes"
[ $# -gt 0 ] || set -- -n 1024
VCL_NODES=$nodes OCL_ICD_VENDORS=$PWD/build/vcl-client/vcl.icd \
    build/examples/advection "$@"
