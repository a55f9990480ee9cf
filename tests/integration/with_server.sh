#!/bin/sh
# with_server.sh - run a command against fresh local vclservers.
#
#   with_server.sh [-n NODES] [-s "server args"] -- command [args...]
#
# Starts NODES vclservers on 127.0.0.1 port 0 (default 1), waits for their
# port files (polling, bounded), runs the command with VCL_NODES and
# OCL_ICD_VENDORS (the build's vcl.icd only) set, then stops the servers
# with SIGTERM and fails if one did not exit cleanly. Needs VCL_BUILD.
# VCL_ICD_BOTH=1 lists the native platforms too (NATIVE_ICD, for benches);
# VCL_SERVER_WRAP runs each server under a tool (valgrind). In the server
# args @NODE@ becomes the index of each server from 0, @RUN@ a name of
# the run's own. The command gets the servers' pids in VCL_SERVER_PIDS.
set -u
nodes=1
sargs=""
while [ $# -gt 0 ]; do
	case "$1" in
	-n) nodes=$2; shift 2 ;;
	-s) sargs=$2; shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
: "${VCL_BUILD:?set VCL_BUILD to the build directory}"
dir=$(mktemp -d)
pids=""
# (sh has no locals: src, not rc, which holds the command's status)
stop() {
	src=0
	for p in $pids; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" || { echo "with_server: vclserver $p exited $?"; src=1; }
	done
	rm -rf "$dir"
	return $src
}
trap 'stop; exit 1' INT TERM

i=1
while [ $i -le "$nodes" ]; do
	# @NODE@ in the server args: this server's index from 0; @RUN@: a
	# name of this run's own (a TCA domain, say).
	a=$(printf '%s' "$sargs" | sed "s/@NODE@/$((i - 1))/g; s/@RUN@/r$$/g")
	# shellcheck disable=SC2086
	${VCL_SERVER_WRAP:-} "$VCL_BUILD/vcl-server/vclserver" \
	    --listen 127.0.0.1:0 \
	    --port-file "$dir/port$i" --name "node$i" --log-level warn \
	    $a &
	pids="$pids $!"
	i=$((i + 1))
done
list=""
i=1
while [ $i -le "$nodes" ]; do
	n=0
	until [ -s "$dir/port$i" ]; do
		n=$((n + 1))
		if [ $n -gt 6000 ]; then
			echo "with_server: vclserver $i did not start"
			stop
			exit 1
		fi
		sleep 0.01
	done
	list="$list${list:+,}127.0.0.1:$(cat "$dir/port$i")"
	i=$((i + 1))
done
icd=$VCL_BUILD/vcl-client/vcl.icd
if [ "${VCL_ICD_BOTH:-0}" = 1 ]; then
	mkdir "$dir/icd"
	cp "${NATIVE_ICD:-/etc/OpenCL/vendors}"/*.icd "$icd" "$dir/icd/"
	icd=$dir/icd
fi
VCL_NODES=$list OCL_ICD_VENDORS=$icd VCL_SERVER_PIDS=${pids# } "$@"
rc=$?
stop || rc=1
exit $rc
