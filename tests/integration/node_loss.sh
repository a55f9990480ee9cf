#!/bin/sh
# node_loss.sh - advection across two vclservers with the second killed
# (SIGKILL) mid-run: the client must exit, with an error, within a bound,
# in every run.
#
#   node_loss.sh VCLSERVER ADVECTION ICD_DIR [RUNS]
#
# NODE_LOSS_RUNS overrides RUNS (the sanitizer pass of scripts/test.sh
# asks for 2: there memory errors are the point, and a run takes 36 s);
# ADV_ARGS overrides advection's arguments (default -n 256 -s 8000 -C);
# SRV_ARGS adds to the servers' (a transport forced, say).
#
# "Mid-run" is seen, not guessed: the servers log at debug level and the
# kill comes once the first server has the client's second clFinish (after
# every step is enqueued; the first comes after the set-up): the client
# then waits in clFinish on the surviving node for work that needs
# migrations from the node killed.
# Every wait polls with a bound; nothing sleeps for readiness.
set -u
srv=$1
adv=$2
icd=$3
runs=${NODE_LOSS_RUNS:-${4:-5}}	# the environment may ask for fewer
bound=60		# seconds from the kill to the client's exit
polls=6000		# 0.01 s each: 60 s
dir=$(mktemp -d)
pids=""
apid=""
fails=0

cleanup() {
	for p in $pids $apid; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$dir"
}
trap 'cleanup; exit 1' INT TERM

# wait_for COND...: poll (bounded) until the command succeeds.
wait_for() {
	n=0
	until "$@"; do
		n=$((n + 1))
		[ $n -gt $polls ] && return 1
		sleep 0.01
	done
	return 0
}

running() { kill -0 "$1" 2>/dev/null; }
exited() { ! kill -0 "$1" 2>/dev/null; }
finishing() { [ "$(grep -c ": FINISH seq" "$dir/err1")" -ge 2 ] ||
    exited "$apid"; }

run=1
while [ $run -le "$runs" ]; do
	rm -f "$dir"/port* "$dir"/err*
	pids=""
	for i in 1 2; do
		"$srv" --listen 127.0.0.1:0 --port-file "$dir/port$i" \
		    --name "node$i" --log-level debug ${SRV_ARGS:-} \
		    2>"$dir/err$i" &
		pids="$pids $!"
		eval "pid$i=$!"
	done
	if ! wait_for test -s "$dir/port1" || ! wait_for test -s "$dir/port2"
	then
		echo "FAIL run $run: servers did not start"
		cleanup
		exit 1
	fi
	VCL_NODES="127.0.0.1:$(cat "$dir/port1"),127.0.0.1:$(cat "$dir/port2")" \
	    OCL_ICD_VENDORS=$icd "$adv" ${ADV_ARGS:--n 256 -s 8000 -C} >"$dir/out" 2>&1 &
	apid=$!
	if ! wait_for finishing || exited "$apid"; then
		echo "FAIL run $run: advection ended or never migrated before" \
		    "the kill"
		cat "$dir/out"
		fails=$((fails + 1))
		kill -KILL "$pid2"	# else the wait below never ends
	else
		t0=$(date +%s.%N)
		# shellcheck disable=SC2154
		kill -KILL "$pid2"
		n=0
		while running "$apid" && [ $n -lt $((bound * 100)) ]; do
			n=$((n + 1))
			sleep 0.01
		done
		t=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }")
		if running "$apid"; then
			cp -r "$dir" "${TMPDIR:-/tmp}/node-loss-hang.$$.$run" 2>/dev/null
			echo "FAIL run $run: advection still running ${bound} s" \
			    "after the second node was killed"
			kill -KILL "$apid"
			wait "$apid" 2>/dev/null
			fails=$((fails + 1))
		else
			wait "$apid"
			rc=$?
			if [ $rc -eq 0 ]; then
				echo "FAIL run $run: advection exited 0 after" \
				    "losing a node"
				fails=$((fails + 1))
			else
				echo "PASS run $run: advection exited $rc" \
				    "${t} s after the kill"
				[ $rc -eq 141 ] && echo "  # killed by SIGPIPE:" \
				    "libvcl wrote to the lost node's socket"
				grep -v "^advection: \(device\|precision\|n=\)" "$dir/out" | tail -n 3 | sed 's/^/  # /'
			fi
		fi
	fi
	apid=""
	wait "$pid2" 2>/dev/null
	# shellcheck disable=SC2154
	kill -TERM "$pid1"
	if ! wait "$pid1"; then
		echo "FAIL run $run: the surviving server did not exit cleanly"
		sed 's/^/  # /' "$dir/err1" | tail -n 20
		fails=$((fails + 1))
	fi
	pids=""
	run=$((run + 1))
done
rm -rf "$dir"
echo "$runs runs, $fails failures"
[ $fails -eq 0 ]
