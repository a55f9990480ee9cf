#!/bin/sh
# closed_std.sh - with_server.sh's VCL_SERVER_WRAP: run the server with its
# standard input, output and error closed, as `cmd <&- >&- 2>&-` or a
# careless service manager starts it. With "check CMD...", as the test's
# command instead: each server of VCL_SERVER_PIDS must have /dev/null on
# descriptors 0, 1 and 2 (else what it logs goes to whatever took their
# numbers: a socket, a library's pipe), then CMD runs against them.
if [ "${1:-}" != check ]; then
	exec "$@" <&- >&- 2>&-
fi
shift
for p in $VCL_SERVER_PIDS; do
	for fd in 0 1 2; do
		l=$(readlink "/proc/$p/fd/$fd" 2>/dev/null)
		if [ "$l" != /dev/null ]; then
			echo "closed_std: vclserver $p: descriptor $fd is" \
			    "'${l:-closed}', not /dev/null"
			exit 1
		fi
	done
done
exec "$@"
