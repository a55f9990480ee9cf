#!/bin/sh
# coverage.sh [RUNS] - build fuzz_session with clang source-based coverage
# (build-fuzzcov/), run it RUNS executions (default 2000) from the seeds,
# and report line coverage of vcl-server/ and which handlers were reached.
# coverage.sh RUNS client - the same of fuzz_client, for vcl-client/.
set -eu
cd "$(dirname "$0")/../.."
runs=${1:-2000}
b=build-fuzzcov
CC=clang cmake -S . -B $b -DVCL_FUZZ=ON -DVCL_FUZZ_COVERAGE=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
if [ "${2:-session}" = client ]; then
	cmake --build $b --target fuzz_client -j "$(nproc)" >/dev/null
	rm -rf $b/cov && mkdir -p $b/cov/corpus
	# Each input's client is a process of its own: %m merges them.
	LLVM_PROFILE_FILE=$PWD/$b/cov/fuzz-%m.profraw \
	    $b/tests/fuzz/fuzz_client -rss_limit_mb=0 -malloc_limit_mb=2048 \
	    -seed=1 -runs="$runs" -dict=tests/fuzz/fuzz_client.dict $b/cov/corpus \
	    tests/fuzz/corpus_client 2>$b/cov/log ||
	    { tail -30 $b/cov/log; exit 1; }
	llvm-profdata merge -sparse $b/cov/fuzz-*.profraw \
	    -o $b/cov/fuzz.profdata
	echo "== $runs executions: line coverage of vcl-client/"
	llvm-cov report $b/tests/fuzz/fuzz_client \
	    -instr-profile=$b/cov/fuzz.profdata vcl-client/ |
	    sed 's|.*/vcl-client/|vcl-client/|'
	exit 0
fi
cmake --build $b --target fuzz_session -j "$(nproc)" >/dev/null
rm -rf $b/cov && mkdir -p $b/cov/corpus
LLVM_PROFILE_FILE=$PWD/$b/cov/fuzz.profraw \
    $b/tests/fuzz/fuzz_session -seed=1 -runs="$runs" $b/cov/corpus \
    tests/fuzz/corpus 2>$b/cov/log || { tail -30 $b/cov/log; exit 1; }
llvm-profdata merge -sparse $b/cov/fuzz.profraw -o $b/cov/fuzz.profdata
echo "== $runs executions: line coverage of vcl-server/"
llvm-cov report $b/tests/fuzz/fuzz_session -instr-profile=$b/cov/fuzz.profdata \
    vcl-server/ | sed 's|.*/vcl-server/|vcl-server/|'
echo "== handlers and helpers (function, execution count)"
llvm-cov export -format=text -skip-expansions \
    $b/tests/fuzz/fuzz_session -instr-profile=$b/cov/fuzz.profdata vcl-server/ |
    python3 -c '
import json, sys
d = json.load(sys.stdin)
for f in d["data"][0]["functions"]:
    n = f["name"].split(":")[-1]
    if n.startswith(("vcl_op_", "vcl_exec_", "vcl_session_release",
        "vcl_cmd_", "vcl_enq_", "vcl_stage_", "vcl_hold_")):
        print("%-32s %d" % (n, f["count"]))
' | sort
