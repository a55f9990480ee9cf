#!/bin/sh
# oracle.sh - run from a bench/bundle.sh folder on a GPU host: the API
# oracle (tests/integration/cl_api_test.c) one test per process, natively
# (icd-nvidia) and through VCL (icd-vcl, one vclserver on GPU 0, started
# again if it dies), and a line per test: its exit status and failed
# checks each way, and whether the server lived. A native crash is the
# runtime's; a server that dies is VCL's to prevent. Logs in $OUT
# (default /tmp/oracle).
cd "$(dirname "$0")"
O=${OUT:-/tmp/oracle}
mkdir -p "$O"
export LD_LIBRARY_PATH=$PWD/lib:/usr/local/nvidia/lib64
[ -d lib/ucx ] && export UCX_MODULE_DIR=$PWD/lib/ucx
tests=$(./cl_api_test --list 2>/dev/null)
[ -n "$tests" ] || { echo "cl_api_test --list named no test"; exit 1; }
start() {
	rm -f "$O/port"
	OCL_ICD_VENDORS=$PWD/icd-nvidia ./vclserver --listen 127.0.0.1:0 \
	    --port-file "$O/port" --devices 0 2>> "$O/server.log" >/dev/null &
	pid=$!
	t=0
	until [ -s "$O/port" ]; do
		t=$((t + 1)); [ $t -gt 3000 ] && { echo "no server"; exit 1; }
		sleep 0.01
	done
}
start
died=0
for t in $tests; do
	OCL_ICD_VENDORS=$PWD/icd-nvidia VCL_TEST_TIMEOUT=50 timeout 60 \
	    ./cl_api_test "=$t" > "$O/native-$t.log" 2>&1
	n=$?
	echo "=== $t" >> "$O/server.log"
	OCL_ICD_VENDORS=$PWD/icd-vcl VCL_NODES=127.0.0.1:$(cat "$O/port") \
	    VCL_TEST_TIMEOUT=50 timeout 60 ./cl_api_test "=$t" \
	    > "$O/vcl-$t.log" 2>&1
	v=$?
	sleep 0.2
	srv=lived
	if ! kill -0 $pid 2>/dev/null; then
		srv=DIED; died=$((died + 1)); start
	fi
	printf '%-24s native rc %3d, %d failed; VCL rc %3d, %d failed; server %s\n' \
	    "$t" $n "$(grep -c '^FAIL' "$O/native-$t.log")" $v \
	    "$(grep -c '^FAIL' "$O/vcl-$t.log")" $srv
done
kill $pid 2>/dev/null
echo "servers that died: $died"
[ $died -eq 0 ]
