#!/bin/sh
# pkg_test.sh - the Debian packages: made by cpack from the build, unpacked
# into a scratch root, their files, control fields and conffiles checked,
# then used: pkg-config, a program built against the installed header and
# run through the installed ICD and linked straight to the installed
# libvcl, against a vclserver started as the installed unit's ExecStart
# says (its prefix moved to the scratch root, the installed configuration
# plus a test listen address and port file).
#
# usage: pkg_test.sh BUILD_DIR SOURCE_DIR CPACK LIBDIR
# Exit 77 (skipped) without dpkg-deb.
set -u
build=$1; src=$2; cpack=$3; libdir=$4

for t in dpkg-deb pkg-config cc; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "SKIP: no $t"
		exit 77
	fi
done
tmp=$(mktemp -d /tmp/vcl-pkg-test.XXXXXX)
root=$tmp/root
failed=0
pid=""
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	if [ "$failed" -eq 0 ]; then
		rm -rf "$tmp"
	else
		echo "# scratch files kept in $tmp"
	fi
}
trap cleanup EXIT
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }
check() {	# check NAME MESSAGE COMMAND...
	n=$1; m=$2; shift 2
	if "$@"; then pass "$n"; else fail "$n" "$m"; fi
}

# Packages.
if ! "$cpack" --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/out" \
    >"$tmp/cpack.log" 2>&1; then
	cat "$tmp/cpack.log"
	fail cpack "cpack -G DEB failed"
	exit 1
fi
for p in libvcl1 libvcl-dev vcl-server vcl-tools; do
	set -- "$tmp"/out/"$p"_*.deb
	if [ ! -f "$1" ]; then
		fail "deb_$p" "cpack made no $p package"
		exit 1
	fi
	eval "deb_$(echo $p | tr - _)=\$1"
	dpkg-deb -c "$1" | awk '$6 !~ /\/$/ { sub(/^\./, "", $6); print $6 }' |
	    sort >"$tmp/$p.files"
	dpkg-deb -x "$1" "$root"
	mkdir -p "$tmp/ctl/$p"
	dpkg-deb -e "$1" "$tmp/ctl/$p"
done

# Each package holds what it should and nothing else (docs aside); no file
# is in two packages.
L=/usr/$libdir
expect_files() {	# expect_files PACKAGE FILE...
	p=$1; shift
	printf '%s\n' "$@" | sort >"$tmp/$p.want"
	grep -v -e '^/usr/share/doc/' "$tmp/$p.files" \
	    >"$tmp/$p.got"
	if cmp -s "$tmp/$p.want" "$tmp/$p.got"; then
		pass "files_$p"
	else
		fail "files_$p" "want (<) and have (>): $(diff "$tmp/$p.want" \
		    "$tmp/$p.got" | grep '^[<>]' | tr '\n' ' ')"
	fi
}
expect_files libvcl1 $L/libvcl.so.1 $L/libvcl.so.1.0.0 \
    /etc/OpenCL/vendors/vcl.icd /usr/share/man/man7/vcl.7
expect_files libvcl-dev $L/libvcl.so $L/pkgconfig/vcl.pc \
    /usr/include/CL/vcl_ext.h
expect_files vcl-server /usr/sbin/vclserver /etc/vcl/vclserver.conf \
    $L/libvcl_peach2.so \
    /lib/systemd/system/vclserver.service \
    /lib/systemd/system/vclserver@.service \
    /usr/share/man/man8/vclserver.8 /usr/share/man/man5/vclserver.conf.5
expect_files vcl-tools /usr/bin/vcl /usr/share/man/man1/vcl.1
dups=$(cat "$tmp"/*.files | sort | uniq -d | tr '\n' ' ')
check files_disjoint "in two packages: $dups" test -z "$dups"

# Control fields: Depends (dpkg-shlibdeps and ours), conffiles, no unit
# enabled by a maintainer script.
depends_has() {	# depends_has DEB WORD...
	d=$(dpkg-deb -f "$1" Depends); shift
	for w in "$@"; do
		case " $d" in
		*[\ ,]"$w"*) ;;
		*) echo "  Depends: $d lacks $w"; return 1 ;;
		esac
	done
}
dpkg-deb -I "$deb_vcl_server" | sed 's/^/  # /'
check depends_libvcl1 "see above" depends_has "$deb_libvcl1" libc6 \
    libprotobuf-c1 libssl3 ocl-icd-libopencl1
check depends_server "see above" depends_has "$deb_vcl_server" libc6 \
    libevent-core libevent-pthreads libprotobuf-c1 libssl3 \
    ocl-icd-libopencl1
check depends_dev "see above" depends_has "$deb_libvcl_dev" "libvcl1 (="
check conffile_server "conffiles: $(cat "$tmp/ctl/vcl-server/conffiles" \
    2>/dev/null)" grep -qx /etc/vcl/vclserver.conf \
    "$tmp/ctl/vcl-server/conffiles"
check conffile_icd "conffiles: $(cat "$tmp/ctl/libvcl1/conffiles" \
    2>/dev/null)" grep -qx /etc/OpenCL/vendors/vcl.icd \
    "$tmp/ctl/libvcl1/conffiles"
check server_not_enabled "a maintainer script enables or starts a unit" \
    sh -c "! cat '$tmp'/ctl/*/*inst '$tmp'/ctl/*/*rm 2>/dev/null |
    grep -v '^#' | grep -qw -e enable -e start -e restart -e reload-or-restart"
check server_stopped_on_remove "vcl-server's prerm does not stop the units" \
    grep -q 'disable --now' "$tmp/ctl/vcl-server/prerm"
check shlibs "libvcl1 has no shlibs file" grep -q '^libvcl 1 libvcl1' \
    "$tmp/ctl/libvcl1/shlibs"

# The ICD file names the installed library (by soname: it is in the
# dynamic linker's path under /usr).
icd=$(cat "$root/etc/OpenCL/vendors/vcl.icd")
check icd_content "vcl.icd says '$icd'" test "$icd" = libvcl.so.1
check icd_target "$L/libvcl.so.1 missing" test -e "$root$L/$icd"

# pkg-config in the scratch root.
pc=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root$L/pkgconfig \
    PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 \
    pkg-config --cflags --libs vcl 2>&1)
pc_has() {
	for w in "-I$root/usr/include" "-L$root$L" -lvcl; do
		case " $pc " in *" $w "*) ;; *) return 1 ;; esac
	done
}
check pkg_config "pkg-config --cflags --libs vcl: $pc" pc_has
# shellcheck disable=SC2086
check cc_direct "cc \$(pkg-config --cflags --libs vcl) failed" \
    cc -o "$tmp/probe_direct" "$src/tests/pkg/pkg_probe.c" $pc
pcflags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root$L/pkgconfig \
    PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 pkg-config --cflags vcl)
# shellcheck disable=SC2086
check cc_icd "cc \$(pkg-config --cflags vcl) -lOpenCL failed" \
    cc -o "$tmp/probe_icd" "$src/tests/pkg/pkg_probe.c" $pcflags -lOpenCL

# The units: ExecStart names the installed vclserver.
unit=$root/lib/systemd/system/vclserver.service
exec_line=$(sed -n 's/^ExecStart=//p' "$unit")
check unit_execstart "ExecStart=$exec_line" test \
    "$exec_line" = "/usr/sbin/vclserver --config /etc/vcl/vclserver.conf"
check unit_instance "vclserver@.service ExecStart" grep -qx \
    'ExecStart=/usr/sbin/vclserver --config /etc/vcl/%i.conf' \
    "$root/lib/systemd/system/vclserver@.service"
check unit_dynamic_user "no DynamicUser=yes" grep -qx DynamicUser=yes "$unit"

# --help and the man pages list the same options, and --help lists every
# option vclserver takes (main.c's getopt table).
"$root/usr/sbin/vclserver" --help >"$tmp/help" 2>&1
for o in $(sed -n 's/^[	 ]*{ "\([a-z-]*\)",.*/\1/p' \
    "$src/vcl-server/main.c"); do
	grep -q -- "^  --$o\b" "$tmp/help" || fail "help_$o" "--help lacks --$o"
done
for o in $(sed -n 's/^  --\([a-z-]*\).*/\1/p' "$tmp/help"); do
	e=$(echo "$o" | sed 's/-/\\\\-/g')
	grep -q "^\\\\fB\\\\-\\\\-$e\\\\fR" "$root/usr/share/man/man8/vclserver.8" ||
	    fail "man8_$o" "vclserver.8 lacks --$o"
	case $o in config|help|version) continue ;; esac
	grep -q "^\\\\fB$e\\\\fR = " "$root/usr/share/man/man5/vclserver.conf.5" ||
	    fail "man5_$o" "vclserver.conf.5 lacks $o"
done
pass help_man_options

# The installed server, started as the unit says: prefix moved into the
# scratch root, the installed configuration plus a test address.
{
	cat "$root/etc/vcl/vclserver.conf"
	echo "listen = 127.0.0.1:0"
	echo "port-file = $tmp/port"
	echo "name = pkgtest"
} >"$tmp/vclserver.conf"
cmd=$(echo "$exec_line" | sed "s|^/usr/|$root/usr/|;
    s|/etc/vcl/vclserver.conf|$tmp/vclserver.conf|")
# shellcheck disable=SC2086
OCL_ICD_VENDORS=${NATIVE_ICD:-/etc/OpenCL/vendors} $cmd \
    2>"$tmp/server.log" &
pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 200 ] && kill -0 "$pid" 2>/dev/null
do
	sleep 0.1
	i=$((i + 1))
done
if [ ! -s "$tmp/port" ]; then
	cat "$tmp/server.log"
	fail server_start "the installed vclserver did not listen"
	exit 1
fi
port=$(cat "$tmp/port")
pass server_start

run_probe() {	# run_probe NAME PROGRAM ENV...
	n=$1; prog=$2; shift 2
	out=$(env -u VCL_NODES -u SLURM_JOB_NODELIST HOME="$tmp" \
	    LD_LIBRARY_PATH="$root$L" "$@" "$prog" 2>&1)
	case $out in
	"ok node pkgtest") pass "$n" ;;
	*) fail "$n" "$out" ;;
	esac
}
run_probe run_direct "$tmp/probe_direct" VCL_NODES=127.0.0.1:$port
run_probe run_icd "$tmp/probe_icd" OCL_ICD_VENDORS="$root/etc/OpenCL/vendors" \
    VCL_NODES=127.0.0.1:$port
# Inside a Slurm job: the nodes from SLURM_JOB_NODELIST, the port VCL_PORT.
run_probe run_slurm "$tmp/probe_icd" \
    OCL_ICD_VENDORS="$root/etc/OpenCL/vendors" \
    SLURM_JOB_NODELIST="127.0.0.[1]" VCL_PORT="$port"

kill "$pid"
wait "$pid"
st=$?
pid=""
check server_stop "exit status $st after SIGTERM" test "$st" -eq 0
if [ "$failed" -ne 0 ]; then
	echo "# server log:"; sed 's/^/  /' "$tmp/server.log"
	exit 1
fi
echo "all passed"
