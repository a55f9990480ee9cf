#!/bin/sh
# netns.sh - run a command against vclservers that each live on their own
# "host": a network namespace of its own, joined to the others by a bridge.
#
#   netns.sh [-n NODES] [-s "server args"] [-k] -- command [args...]
#
# Builds, all inside network namespaces this script creates (the root
# namespace, and so the host's network, is never touched):
#
#   vcl-br-$$          a bridge br0 and one veth end per namespace below
#   vcl-n$i-$$         node i: eth0 = 10.211.0.(10+i)/24, lo up, a vclserver
#                      on 10.211.0.(10+i):7725 (i = 1..NODES, default 2)
#   vcl-c-$$           the client: eth0 = 10.211.0.2/24, lo up; the command
#                      runs here, so every byte it sends crosses two veths
#
# None of them has a route out of 10.211.0.0/24, so nothing can leave them.
# The servers listen on a non-loopback address, so they require the shared
# token this script writes (0600, in a mktemp directory): the harness always
# exercises authentication.
#
# The command runs with VCL_NODES, VCL_TOKEN_FILE and OCL_ICD_VENDORS (the
# build's vcl.icd only) set, and with, for tests that break things on purpose:
#   VCL_NETNS_PIDS     server pids, in node order ("pid1 pid2 ...")
#   VCL_NETNS_NODES    node namespace names, in node order (for ip -n NS ...)
#   VCL_NETNS_CLIENT   the client's namespace name
#   VCL_NETNS_KILLED   a file: append the pid of a server you kill to it and
#                      its exit status is not checked
#
# Afterwards the servers get SIGTERM and must exit 0 (within 30 s), then the
# namespaces and the temporary directory are removed; this also happens on
# failure, INT, TERM and HUP. Exit status: the command's, or 1 when a server
# failed; 77 (ctest's skip code) when network namespaces cannot be created
# here. -k keeps each server's stderr in the temporary directory and prints
# it when something failed. Needs VCL_BUILD and root (CAP_SYS_ADMIN and
# CAP_NET_ADMIN); VCL_SERVER_WRAP runs each server under a tool (valgrind).
set -u
nodes=2
sargs=""
keep=0
usage() {
	echo "usage: netns.sh [-n NODES] [-s \"server args\"] [-k] -- command [args...]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	-n) [ $# -ge 2 ] || usage; nodes=$2; shift 2 ;;
	-s) [ $# -ge 2 ] || usage; sargs=$2; shift 2 ;;
	-k) keep=1; shift ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || usage
case "$nodes" in
''|*[!0-9]*) echo "netns: -n wants a number of nodes, 1 to 200" >&2; exit 2 ;;
esac
if [ "$nodes" -lt 1 ] || [ "$nodes" -gt 200 ]; then
	echo "netns: -n wants a number of nodes, 1 to 200" >&2
	exit 2
fi
: "${VCL_BUILD:?set VCL_BUILD to the build directory}"
server=$VCL_BUILD/vcl-server/vclserver
if [ ! -x "$server" ]; then
	echo "netns: $server not found: build first" >&2
	exit 1
fi
if ! command -v ip >/dev/null 2>&1; then
	echo "netns: cannot create network namespaces: the ip command" \
	    "(iproute2) is not installed" >&2
	exit 77
fi

port=7725
brns=vcl-br-$$
cns=vcl-c-$$
made=""		# namespaces we created, in creation order
pids=""		# server pids, in node order
nsnodes=""	# node namespaces, in node order
dir=""
cleaned=0
failed=0	# something failed: show the kept server logs

# Is pid $1 a child of this shell that has not exited yet?
alive() {
	[ -r "/proc/$1/stat" ] || return 1
	[ "$(awk '/^PPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null)" = $$ ] ||
	    return 1
	case "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null)" in
	Z*|X*|'') return 1 ;;
	esac
	return 0
}

# Stop the servers, check them, remove everything; idempotent. Returns 1
# when a server failed.
cleanup() {
	[ "$cleaned" = 0 ] || return 0
	cleaned=1
	crc=0
	for p in $pids; do
		alive "$p" && kill -TERM "$p" 2>/dev/null
	done
	i=1
	for p in $pids; do
		n=0
		while alive "$p"; do
			n=$((n + 1))
			if [ $n -gt 3000 ]; then
				echo "netns: vclserver node$i (pid $p) ignored" \
				    "SIGTERM for 30 s: killing it" >&2
				kill -KILL "$p" 2>/dev/null
				break
			fi
			sleep 0.01
		done
		wait "$p"
		st=$?
		if [ -n "$dir" ] && [ -f "$dir/killed" ] &&
		    grep -qx "[[:space:]]*${p}[[:space:]]*" "$dir/killed"; then
			:	# the test killed it on purpose
		elif [ $st -ne 0 ] || [ $n -gt 3000 ]; then
			echo "netns: vclserver node$i (pid $p) exited $st" >&2
			crc=1
		fi
		i=$((i + 1))
	done
	[ $crc = 0 ] || failed=1
	if [ "$keep" = 1 ] && [ "$failed" = 1 ] && [ -n "$dir" ]; then
		i=1
		while [ $i -le "$nodes" ]; do
			if [ -s "$dir/server$i.err" ]; then
				echo "--- netns: vclserver node$i stderr ---" >&2
				cat "$dir/server$i.err" >&2
			fi
			i=$((i + 1))
		done
	fi
	# Anything still running in our namespaces was started by this run.
	for ns in $made; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
	done
	for ns in $made; do
		ip netns del "$ns" 2>/dev/null ||
		    echo "netns: could not delete namespace $ns" >&2
	done
	made=""
	[ -z "$dir" ] || rm -rf "$dir"
	return $crc
}
trap 'cleanup' EXIT
trap 'failed=1; cleanup; trap - EXIT; exit 129' HUP
trap 'failed=1; cleanup; trap - EXIT; exit 130' INT
trap 'failed=1; cleanup; trap - EXIT; exit 143' TERM

die() {
	code=$1
	shift
	echo "netns: $*" >&2
	failed=1
	cleanup
	trap - EXIT
	exit "$code"
}

# Create namespace $1. Not being allowed to is a skip (77), not a failure.
mkns() {
	if ! out=$(ip netns add "$1" 2>&1); then
		case "$out" in
		*"File exists"*)
			die 1 "namespace $1 already exists (left by a killed" \
			    "run? ip netns del $1)" ;;
		esac
		die 77 "cannot create network namespaces: ${out:-ip netns add failed}"
	fi
	made="$1 $made"		# delete in reverse order
	ip -n "$1" link set lo up 2>/dev/null ||
	    die 77 "cannot create network namespaces: cannot bring up lo in $1"
}

# Run an ip command that builds the virtual network; failing is a skip too
# (no bridge or veth support in this kernel).
net() {
	out=$(ip "$@" 2>&1) ||
	    die 77 "cannot create network namespaces: ip $*: $out"
}

# Join namespace $1 to the bridge as $2 (bridge-side name) with address $3.
attach() {
	net -n "$brns" link add "$2" type veth peer name eth0 netns "$1"
	net -n "$brns" link set "$2" master br0 up
	net -n "$1" addr add "$3/24" dev eth0
	net -n "$1" link set eth0 up
}

mkns "$brns"
net -n "$brns" link add br0 type bridge
net -n "$brns" link set br0 up
mkns "$cns"
attach "$cns" vc 10.211.0.2
i=1
while [ $i -le "$nodes" ]; do
	ns=vcl-n$i-$$
	mkns "$ns"
	attach "$ns" "vn$i" "10.211.0.$((10 + i))"
	nsnodes="$nsnodes${nsnodes:+ }$ns"
	i=$((i + 1))
done

dir=$(mktemp -d) || die 1 "mktemp failed"
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$dir/token" &&
    echo >>"$dir/token") || die 1 "cannot write the token file"
chmod 600 "$dir/token"

# Start node $3's server in namespace $1 on address $2 (replaces the shell).
start() {
	# shellcheck disable=SC2086
	exec ip netns exec "$1" ${VCL_SERVER_WRAP:-} "$server" \
	    --listen "$2:$port" --token-file "$dir/token" \
	    --name "node$3" --port-file "$dir/port$3" --log-level warn $sargs
}

list=""
i=1
for ns in $nsnodes; do
	addr=10.211.0.$((10 + i))
	# ip netns exec execs the server (no fork): $! is the server's pid.
	if [ "$keep" = 1 ]; then
		start "$ns" "$addr" $i 2>"$dir/server$i.err" &
	else
		start "$ns" "$addr" $i &
	fi
	pids="$pids${pids:+ }$!"
	list="$list${list:+,}$addr:$port"
	i=$((i + 1))
done
i=1
for p in $pids; do
	n=0
	until [ -s "$dir/port$i" ]; do
		n=$((n + 1))
		alive "$p" || die 1 "vclserver node$i (pid $p) exited at start"
		[ $n -le 3000 ] || die 1 "vclserver node$i did not start in 30 s"
		sleep 0.01
	done
	i=$((i + 1))
done

VCL_NODES=$list
VCL_TOKEN_FILE=$dir/token
OCL_ICD_VENDORS=$VCL_BUILD/vcl-client/vcl.icd
VCL_NETNS_PIDS=$pids
VCL_NETNS_NODES=$nsnodes
VCL_NETNS_CLIENT=$cns
VCL_NETNS_KILLED=$dir/killed
export VCL_NODES VCL_TOKEN_FILE OCL_ICD_VENDORS VCL_NETNS_PIDS \
    VCL_NETNS_NODES VCL_NETNS_CLIENT VCL_NETNS_KILLED
ip netns exec "$cns" "$@"
rc=$?
[ $rc = 0 ] || failed=1
cleanup || rc=1
trap - EXIT
exit $rc
