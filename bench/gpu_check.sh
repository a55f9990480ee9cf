#!/bin/sh
# gpu_check.sh - run from a bench/bundle.sh folder on a GPU host: hello,
# advection across two vclservers on GPU 0 (checked against one band),
# pingpong, native against VCL advection, vclbench --quick; the log goes
# to $OUT/log (default /tmp/log), the servers' to $OUT/s0.log, s1.log.
cd "$(dirname "$0")"
O=${OUT:-/tmp}
exec > "$O/log" 2>&1
export LD_LIBRARY_PATH=$PWD/lib:/usr/local/nvidia/lib64
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
mkdir -p icd-both; cp icd-nvidia/nvidia.icd icd-vcl/vcl.icd icd-both/
echo "== vclbench quick"; OCL_ICD_VENDORS=$PWD/icd-both VCL_NODES=$A timeout 120 ./vclbench -a nvidia -b vcl --quick 2>&1 | tail -25
echo "== server warnings"; grep -h -i 'warn\|error\|refus' "$O/s0.log" "$O/s1.log" | sort | uniq -c | sort -rn | head -20
pkill -f "$PWD/vclserver"
echo done
