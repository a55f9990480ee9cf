#!/bin/sh
# genman.sh - make a man page from its template and `vclserver --help`: the
# template's @OPTIONS@ line becomes the options the help lists (as command
# line options, or for a *.conf.5 page as configuration file names), and
# @VERSION@ the version. Usage: genman.sh VCLSERVER AWK TEMPLATE VERSION OUT
set -eu
server=$1; conv=$2; tmpl=$3; version=$4; out=$5
mode=cmd
case $tmpl in *.conf.5.in) mode=conf ;; esac
"$server" --help >"$out.help"
awk -v mode="$mode" -f "$conv" "$out.help" >"$out.opts"
if ! grep -q '^\.TP' "$out.opts"; then
	echo "genman.sh: no options found in '$server --help'" >&2
	exit 1
fi
awk -v version="$version" -v opts="$out.opts" '
$0 == "@OPTIONS@" { while ((getline l < opts) > 0) print l; next }
{ gsub(/@VERSION@/, version); print }' "$tmpl" >"$out.tmp"
mv "$out.tmp" "$out"
rm -f "$out.help" "$out.opts"
