#!/bin/sh
# piglit_cl.sh - piglit's OpenCL tests (Debian's piglit package, not written
# here) run natively on PoCL and through VCL against a local vclserver;
# prints each test's result both ways and the pass counts.
#
#   piglit_cl.sh BUILD_DIR
#
# The package is fetched with `apt-get download` and unpacked under
# BUILD_DIR/compat (no install). Exits 77 (skipped) when it cannot be had,
# 1 when a test that passes natively does not pass through VCL, else 0.
set -u
build=$(cd "${1:?usage: piglit_cl.sh BUILD_DIR}" && pwd)
dir=$build/compat
root=$dir/piglit/usr/lib/x86_64-linux-gnu/piglit
native=${NATIVE_ICD:-/etc/OpenCL/vendors}
per_test=${PIGLIT_TIMEOUT:-120}

mkdir -p "$dir"
if [ ! -x "$root/bin/cl-api-get-platform-ids" ]; then
	(cd "$dir" && rm -f piglit_*.deb && apt-get download piglit \
	    >/dev/null 2>&1 && dpkg -x piglit_*.deb piglit) || {
		echo "piglit_cl: cannot fetch Debian's piglit package: skipped"
		exit 77
	}
fi
export LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! "$root/bin/cl-api-get-platform-ids" >/dev/null 2>&1 &&
    ldd "$root/bin/cl-api-get-platform-ids" | grep -q 'not found'; then
	echo "piglit_cl: piglit's libraries are missing (libegl1): skipped"
	exit 77
fi

tmp=$(mktemp -d)
"$build/vcl-server/vclserver" --listen 127.0.0.1:0 --port-file "$tmp/port" \
    2>"$tmp/server.log" &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$tmp"' EXIT
n=0
until [ -s "$tmp/port" ]; do
	n=$((n + 1))
	if [ $n -gt 2000 ] || ! kill -0 $srv 2>/dev/null; then
		echo "piglit_cl: vclserver did not start"; cat "$tmp/server.log"
		exit 1
	fi
	sleep 0.01
done
port=$(cat "$tmp/port")

# result CMD...: piglit's verdict of one run (pass, fail, skip, warn), or
# crash/timeout when it printed none.
result() {
	out=$(timeout "$per_test" "$@" 2>&1)
	r=$(printf '%s\n' "$out" | sed -n 's/.*"result": *"\([a-z]*\)".*/\1/p' |
	    tail -n 1)
	[ -n "$r" ] && { echo "$r"; return; }
	[ $? -eq 124 ] && echo timeout || echo crash
}

total=0 np=0 vp=0 bad=""
printf '%-52s %-8s %s\n' test native vcl
for t in "$root"/bin/cl-api-* "$root"/bin/cl-custom-* "$root"/bin/cl-program-*
do
	name=${t##*/}
	case $name in
	cl-program-tester) continue ;;	# needs piglit's test files
	esac
	a=$(OCL_ICD_VENDORS=$native result "$t")
	b=$(OCL_ICD_VENDORS=$build/vcl-client/vcl.icd \
	    VCL_NODES=127.0.0.1:$port result "$t")
	printf '%-52s %-8s %s\n' "$name" "$a" "$b"
	total=$((total + 1))
	[ "$a" = pass ] && np=$((np + 1))
	[ "$b" = pass ] && vp=$((vp + 1))
	[ "$a" = pass ] && [ "$b" != pass ] && bad="$bad $name"
done
echo "piglit OpenCL: $np of $total pass natively, $vp of $total through VCL"
if [ -n "$bad" ]; then
	echo "piglit_cl: pass natively, not through VCL:$bad"
	exit 1
fi
exit 0
