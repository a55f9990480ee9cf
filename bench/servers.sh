# servers.sh - sourced by the benchmarks: start vclservers on loopback, one
# device each, and wait for their ports.
#
#   servers_start COUNT LEVEL [DEVICES]
#
# Server i serves device i of the native platform (or the i-th of the
# DEVICES list), logs at LEVEL to $dir/server$i.log. Needs $dir, $BIN and
# $NATIVE_ICD; sets $pids (append) and $list (VCL_NODES). Exits on failure.
servers_start() {
	_n=$1 _lvl=$2 _devs=${3:-}
	_i=0
	while [ $_i -lt "$_n" ]; do
		_dev=$_i
		[ -z "$_devs" ] || _dev=$(echo $_devs | cut -d' ' -f$((_i + 1)))
		OCL_ICD_VENDORS=$NATIVE_ICD "$BIN/vclserver" \
		    --listen 127.0.0.1:0 --port-file "$dir/p$_i" \
		    --devices "$_dev" --name node$_i --log-level "$_lvl" \
		    2>"$dir/server$_i.log" &
		pids="$pids $!"
		_i=$((_i + 1))
	done
	list=""
	_i=0
	while [ $_i -lt "$_n" ]; do
		_t=0
		until [ -s "$dir/p$_i" ]; do
			_t=$((_t + 1))
			[ $_t -lt 6000 ] || { echo "server $_i did not start";
			    cat "$dir/server$_i.log"; exit 1; }
			sleep 0.01
		done
		list="$list${list:+,}127.0.0.1:$(cat "$dir/p$_i")"
		_i=$((_i + 1))
	done
}
