#!/bin/sh
# test.sh - the whole test suite: build (installing what is missing), run
# the unit and integration tests, then the same integration tests against
# an AddressSanitizer+UBSan build and a vclserver under valgrind, and the
# fuzz targets' seeds plus a short fuzzing run (clang).
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)

echo "== unit and integration tests"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== sanitizer build (ASan + UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DVCL_SANITIZE=ON \
    -DVCL_WERROR=ON >/dev/null
cmake --build build-asan -j "$jobs"
# LeakSanitizer cannot trace through ocl-icd's dlopen'd PoCL; leaks are
# checked by valgrind below instead.
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 NODE_LOSS_RUNS=2 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" \
    -R '^(unit_|it_hello|it_api|it_session|it_raw_|it_advection|it_multinode|it_pingpong|it_cg_2nodes$|native_cg_mtx)'

echo "== fuzz targets (clang, libFuzzer, ASan+UBSan): seeds and a short run"
CC=clang cmake -S . -B build-fuzz -DVCL_FUZZ=ON -DVCL_WERROR=ON >/dev/null
cmake --build build-fuzz -j "$jobs" --target fuzz_frame fuzz_session \
    fuzz_include fuzz_hostlist fuzz_mtx fuzz_ndrdec fuzz_client
ctest --test-dir build-fuzz --output-on-failure -L fuzz

echo "== valgrind: vclserver, then libvcl in a client"
vg="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite \
--errors-for-leak-kinds=definite --suppressions=$PWD/tests/valgrind.supp"
VCL_BUILD=$PWD/build VCL_SERVER_WRAP=$vg \
    tests/integration/with_server.sh -- build/examples/hello -n 4096
VCL_BUILD=$PWD/build tests/integration/with_server.sh -- \
    $vg build/examples/hello_direct -n 4096
VCL_TEST_TIMEOUT=120 VCL_BUILD=$PWD/build \
    tests/integration/with_server.sh -n 3 -- \
    $vg build/tests/integration/multinode_test
echo "test.sh: all passed"
