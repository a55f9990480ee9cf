#!/bin/sh
# shared_check.sh VCL -- COMMAND...: run COMMAND (under with_server.sh, so
# VCL_NODES names the servers), then fail unless the servers together
# placed bytes in shared staging (Stats peer_bytes_shared > 0): a
# migration path that silently fell back to sending fails the test; and
# unless every ring pinned for the command's contexts was let go.
vcl=$1
shift
[ "$1" = "--" ] && shift
"$@" || exit $?
out=$(${VCL_CHECK_WRAP:-} "$vcl" stats) || { echo "shared_check: vcl stats failed" >&2; exit 1; }
shared=$(printf '%s\n' "$out" | awk '$1 == "peer_bytes_shared" ||
    $1 == "peer_bytes_shared:" { n += $2 } END { print n + 0 }')
echo "shared_check: peer_bytes_shared $shared"
if [ "$shared" -le 0 ]; then
	printf '%s\n' "$out" | grep peer_bytes >&2
	echo "shared_check: no byte went through shared staging" >&2
	exit 1
fi
# With every ring wrapper refused (VCL_TEST_PIN_REFUSE=1, servers' test
# switch), the servers must have said so: the bytes above went pageable.
if [ "${VCL_TEST_PIN_REFUSE:-0}" = 1 ]; then
	refused=$(printf '%s\n' "$out" | awk '$1 == "ring_pin_refused" ||
	    $1 == "ring_pin_refused:" { n += $2 } END { print n + 0 }')
	echo "shared_check: ring_pin_refused $refused"
	if [ "$refused" -le 0 ]; then
		echo "shared_check: no ring wrapper was refused" >&2
		exit 1
	fi
fi
# Once the command's contexts are gone, no ring stays pinned for them
# (a wrapper that outlived its context would; polled, 20 s at most:
# sessions end after their last copy).
n=0
while :; do
	out=$(${VCL_CHECK_WRAP:-} "$vcl" stats) || exit 1
	pinned=$(printf '%s\n' "$out" | awk '$1 == "ring_pinned" ||
	    $1 == "ring_pinned:" { n += $2 } END { print n + 0 }')
	[ "$pinned" -eq 0 ] && break
	n=$((n + 1))
	if [ $n -gt 400 ]; then
		echo "shared_check: ring_pinned $pinned after the run" >&2
		exit 1
	fi
	sleep 0.05
done
exit 0
