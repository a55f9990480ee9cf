#!/bin/sh
# man_env_test.sh - the documentation lists what the code reads: every
# environment variable libvcl reads (getenv in vcl-client/ and proto/) is in
# vcl(7), and every vclserver option is in docs/operating.md (the man pages'
# OPTIONS are generated from --help, so they cannot miss one).
#
# usage: man_env_test.sh SOURCE_DIR VCLSERVER
set -u
src=$1; server=$2
failed=0
for v in $(grep -ho 'getenv("[A-Z_]*")' "$src"/vcl-client/*.c \
    "$src"/proto/*.c | sed 's/getenv("\(.*\)")/\1/' | sort -u); do
	[ "$v" = HOME ] && continue	# in FILES, as ~/.config/vcl/nodes.conf
	if ! grep -q "^\.BR* .*\b$v\b" "$src/dist/man/vcl.7"; then
		echo "FAIL env_$v: libvcl reads $v; vcl.7 does not document it"
		failed=1
	fi
done
for o in $("$server" --help | sed -n 's/^  --\([a-z-]*\).*/\1/p'); do
	if ! grep -q -- "\`--$o\b" "$src/docs/operating.md"; then
		echo "FAIL opt_$o: vclserver --$o is not in docs/operating.md"
		failed=1
	fi
done
[ "$failed" -eq 0 ] && echo "all passed"
exit "$failed"
