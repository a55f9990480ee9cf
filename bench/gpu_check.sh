#!/bin/sh
# gpu_check.sh - run from a bench/bundle.sh folder on a GPU host: hello,
# advection across two vclservers on GPU 0 (checked against one band),
# pingpong (tcp and ucx peer links), native against VCL advection (both
# exchange schedules), cg against one native device, vclbench --quick;
# the log goes to $OUT/log (default /tmp/log), the servers' to
# $OUT/s0.log .. s3.log.
cd "$(dirname "$0")"
O=${OUT:-/tmp}
exec > "$O/log" 2>&1
export LD_LIBRARY_PATH=$PWD/lib:/usr/local/nvidia/lib64
[ -d lib/ucx ] && export UCX_MODULE_DIR=$PWD/lib/ucx
NAT=$PWD/icd-nvidia
nvidia-smi -L
echo "== native hello"; OCL_ICD_VENDORS=$NAT timeout 60 ./hello -n 1024 2>&1 | tail -3
for i in 0 1; do
	OCL_ICD_VENDORS=$NAT ./vclserver --listen 127.0.0.1:0 --port-file p$i \
	    --devices 0 --name node$i 2> "$O/s$i.log" &
done
for i in 0 1; do t=0; until [ -s p$i ]; do t=$((t+1)); [ $t -gt 3000 ] && { echo "server $i did not start"; cat "$O/s$i.log"; exit 1; }; sleep 0.01; done; done
A=127.0.0.1:$(cat p0); B=127.0.0.1:$(cat p1)
V="env OCL_ICD_VENDORS=$PWD/icd-vcl VCL_CONNECT_TIMEOUT_MS=20000"
echo "== hello"; $V VCL_NODES=$A timeout 60 ./hello -n 1048576 2>&1 | tail -3
echo "== advection 2 nodes checked"; $V VCL_NODES=$A,$B timeout 90 ./advection -n 1024 -s 300 -c 2>&1 | tail -4
echo "== advection deep halo"; $V VCL_NODES=$A,$B timeout 90 ./advection -n 2048 -s 400 -H 8 -c 2>&1 | tail -3
echo "== pingpong"; $V VCL_NODES=$A,$B timeout 90 ./pingpong -r 50 -b 4096 -b 1048576 -b 16777216 2>&1 | tail -6
echo "== native vs VCL one node, 4096^2, 1000 steps"
OCL_ICD_VENDORS=$NAT timeout 90 ./advection -n 4096 -s 1000 -d 1 -C 2>&1 | tail -2
$V VCL_NODES=$A timeout 90 ./advection -n 4096 -s 1000 -C 2>&1 | tail -2
echo "== advection 2 nodes on one GPU, 4096^2, 500 steps: overlapped, then -B"
$V VCL_NODES=$A,$B timeout 90 ./advection -n 4096 -s 500 -C 2>&1 | grep cells_per_s
$V VCL_NODES=$A,$B timeout 90 ./advection -n 4096 -s 500 -C -B 2>&1 | grep cells_per_s
if [ -x ./ucxbench ]; then
	for i in 2 3; do
		OCL_ICD_VENDORS=$NAT ./vclserver --listen 127.0.0.1:0 \
		    --port-file p$i --devices 0 --name node$i \
		    --transports ucx,tcp 2> "$O/s$i.log" &
	done
	for i in 2 3; do t=0; until [ -s p$i ]; do t=$((t+1)); [ $t -gt 3000 ] && break; sleep 0.01; done; done
	echo "== pingpong, peer links over ucx"
	$V VCL_NODES=127.0.0.1:$(cat p2),127.0.0.1:$(cat p3) timeout 90 \
	    ./pingpong -r 20 -b 4096 -b 1048576 -b 16777216 -b 268435456 2>&1 | tail -7
	echo "== pingpong, peer links over tcp"
	$V VCL_NODES=$A,$B timeout 90 ./pingpong -r 20 -b 268435456 2>&1 | tail -3
	echo "== ucxbench"; timeout 60 ./ucxbench -r 3 2>&1 | tail -8
fi
echo "== cg, 2 servers on GPU 0 against native"
BIN=$PWD NATIVE_ICD=$NAT VCL_ICD=$PWD/icd-vcl/vcl.icd timeout 200 \
    ./cg.sh -g 2 -D "0 0" -n 1024 -r 1 2>&1 | tail -14
mkdir -p icd-both; cp icd-nvidia/nvidia.icd icd-vcl/vcl.icd icd-both/
echo "== vclbench quick"; OCL_ICD_VENDORS=$PWD/icd-both VCL_NODES=$A timeout 120 ./vclbench -a nvidia -b vcl --quick 2>&1 | tail -25
echo "== server warnings"; grep -h -i 'warn\|error\|refus' "$O/s0.log" "$O/s1.log" | sort | uniq -c | sort -rn | head -20
pkill -f "$PWD/vclserver"
echo done
