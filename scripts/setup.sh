#!/bin/sh
# setup.sh - install the Debian packages VCL needs (only those missing) and
# build into build/. Used by demo.sh and test.sh; safe to run again.
set -eu
cd "$(dirname "$0")/.."

pkgs="build-essential cmake pkg-config ocl-icd-opencl-dev ocl-icd-libopencl1
opencl-headers pocl-opencl-icd libevent-dev libprotobuf-c-dev
protobuf-c-compiler libcmocka-dev libssl-dev openssl clinfo iproute2 valgrind
clang llvm libclang-rt-dev libegl1 file python3 libucx-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup: installing:$missing"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVCL_WERROR=ON >/dev/null
cmake --build build -j "$(nproc)"
