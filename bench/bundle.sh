#!/bin/sh
# bundle.sh - a self-contained Release build for a GPU host that has no
# package registry: binaries, the shared libraries they need beyond libc,
# and ICD folders for the native NVIDIA platform and for VCL.
#
#   bench/bundle.sh [DIR]		(default .dev/gpu, ignored by git)
#
# On the GPU host:
#   cd DIR && . ./env.sh	(LD_LIBRARY_PATH, and UCX_MODULE_DIR for UCX's
#				 transports, when the build has UCX)
#   export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/nvidia/lib64
#   BIN=$PWD NATIVE_ICD=$PWD/icd-nvidia VCL_ICD=$PWD/icd-vcl/vcl.icd \
#       ./scaling.sh -g 2 -n 4096
#   ./gpu_check.sh; ./oracle.sh	(the API oracle natively and through VCL)
set -eu
cd "$(dirname "$0")/.."
out=${1:-.dev/gpu}
build=${BUILD:-build-release}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DVCL_BUILD_TESTS=OFF \
    >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
rm -rf "$out"
mkdir -p "$out/lib" "$out/icd-nvidia" "$out/icd-vcl"
cp "$build/vcl-server/vclserver" "$build/examples/advection" \
    "$build/examples/hello" "$build/examples/pingpong" \
    "$build/bench/vclbench" "$build/bench/clprobe" "$build/bench/launchbench" \
    bench/scaling.sh bench/hops.sh \
    bench/servers.sh bench/gpu_check.sh "$out/"
cp "$build/examples/cg" bench/cg.sh "$out/"
# The API oracle for oracle.sh: a test program, outside the Release build.
${CC:-cc} -O2 -DCL_TARGET_OPENCL_VERSION=300 -Wno-deprecated-declarations \
    -o "$out/cl_api_test" \
    tests/integration/cl_api_test.c -lOpenCL -lpthread
cp bench/oracle.sh "$out/"
cp -L "$build/vcl-client/libvcl.so.1" "$out/lib/"
for lib in $(ldd "$build/vcl-server/vclserver" "$build/bench/vclbench" |
    awk '/=> \// { print $3 }' | sort -u); do
	case $(basename "$lib") in
	libc.so*|libm.so*|libpthread.so*|libdl.so*|ld-linux*) ;;
	*) cp -L "$lib" "$out/lib/" ;;
	esac
done
# UCX (when built with it): its modules (cma, ib, rdmacm) and what they
# need; RDMA verbs providers and their /etc/libibverbs.d come from the host.
ucxmods=/usr/lib/x86_64-linux-gnu/ucx
[ -x "$build/bench/ucxbench" ] && cp "$build/bench/ucxbench" "$out/"
if ldd "$build/vcl-server/vclserver" | grep -q libucp && [ -d "$ucxmods" ]; then
	mkdir -p "$out/lib/ucx"
	for m in "$ucxmods"/libuct_*.so.0; do
		cp -L "$m" "$out/lib/ucx/"
		for lib in $(ldd "$m" | awk '/=> \// { print $3 }'); do
			case $(basename "$lib") in
			libc.so*|libm.so*|libpthread.so*|libdl.so*|ld-linux*) ;;
			*) [ -e "$out/lib/$(basename "$lib")" ] ||
			    cp -L "$lib" "$out/lib/" ;;
			esac
		done
	done
fi
cat >"$out/env.sh" <<'ENV'
# . ./env.sh in the bundle: its libraries first, UCX's modules from it.
b=$(pwd)
export LD_LIBRARY_PATH=$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -d "$b/lib/ucx" ] && export UCX_MODULE_DIR=$b/lib/ucx
ENV
echo libnvidia-opencl.so.1 >"$out/icd-nvidia/nvidia.icd"
echo libvcl.so.1 >"$out/icd-vcl/vcl.icd"
echo "bundle: $out ($(du -sh "$out" | cut -f1))"
