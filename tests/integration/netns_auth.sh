#!/bin/sh
# netns_auth.sh - token authentication against servers on other "hosts".
# Run it as the command of netns.sh, which starts token-protected servers:
#
#   VCL_BUILD=build tests/integration/netns.sh -n 2 -- \
#       tests/integration/netns_auth.sh
#
# Checks, with clinfo -l through the ICD loader:
#  1. the right token (VCL_TOKEN_FILE from the harness): the VCL platform
#     lists one device per node (or NETNS_AUTH_DEVICES devices);
#  2. a wrong token (a 0600 file): no device at all (0 devices, or clinfo
#     fails), and the client's stderr says authentication failed;
#  3. no token: no device, and stderr says a token is required.
set -u
: "${VCL_NODES:?run me under tests/integration/netns.sh}"
: "${VCL_TOKEN_FILE:?run me under tests/integration/netns.sh}"
command -v clinfo >/dev/null 2>&1 || { echo "netns_auth: clinfo missing"; exit 1; }

# One device per listed node unless told otherwise.
want=${NETNS_AUTH_DEVICES:-$(echo "$VCL_NODES" | tr ',' '\n' | grep -c .)}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# Devices clinfo -l lists under the VCL platform, from file $1.
devices() {
	awk '/^Platform #/ { vcl = ($0 ~ /: VCL$/); next }
	    vcl && /Device #/ { n++ } END { print n + 0 }' "$1"
}
has_vcl() {
	grep -q '^Platform #.*: VCL$' "$1"
}

# 1. The right token.
clinfo -l >"$tmp/ok.out" 2>"$tmp/ok.err"
rc=$?
n=$(devices "$tmp/ok.out")
cat "$tmp/ok.out"
if [ $rc -ne 0 ] || ! has_vcl "$tmp/ok.out" || [ "$n" -ne "$want" ]; then
	echo "netns_auth: FAIL right token: clinfo exited $rc, $n device(s)," \
	    "want $want"
	cat "$tmp/ok.err"
	fail=1
else
	echo "netns_auth: ok   right token: $n device(s)"
fi

# 2. A wrong token, in a file the client accepts (0600).
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$tmp/wrong")
chmod 600 "$tmp/wrong"
VCL_TOKEN_FILE=$tmp/wrong clinfo -l >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
n=$(devices "$tmp/bad.out")
if [ "$n" -ne 0 ]; then
	echo "netns_auth: FAIL wrong token: $n device(s) listed"
	cat "$tmp/bad.out"
	fail=1
elif ! grep -qi 'authentication' "$tmp/bad.err"; then
	echo "netns_auth: FAIL wrong token: stderr does not mention" \
	    "authentication:"
	cat "$tmp/bad.err"
	fail=1
else
	if [ $rc -ne 0 ]; then
		what="clinfo exited $rc"
	elif has_vcl "$tmp/bad.out"; then
		what="VCL platform with 0 devices"
	else
		what="no VCL platform"
	fi
	echo "netns_auth: ok   wrong token: $what; stderr:"
	sed 's/^/    /' "$tmp/bad.err"
fi

# 3. No token at all.
env -u VCL_TOKEN_FILE clinfo -l >"$tmp/none.out" \
    2>"$tmp/none.err"
rc=$?
n=$(devices "$tmp/none.out")
if [ "$n" -ne 0 ]; then
	echo "netns_auth: FAIL no token: $n device(s) listed"
	cat "$tmp/none.out"
	fail=1
elif ! grep -qi 'requires a token' "$tmp/none.err"; then
	echo "netns_auth: FAIL no token: stderr does not say a token is" \
	    "required:"
	cat "$tmp/none.err"
	fail=1
else
	echo "netns_auth: ok   no token: clinfo exited $rc, 0 devices"
fi

[ $fail = 0 ] && echo "netns_auth: OK"
exit $fail
