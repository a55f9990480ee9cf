#!/bin/sh
# cg_mtx.sh - the cg example's Matrix Market reader on a good file and on
# malformed ones: each bad file must make cg exit 1 with a message naming
# the fault (no crash, no solve).
#
#   cg_mtx.sh CG GOOD.mtx
#
# The good file is solved on one device in 3 bands, checked against one
# band (every band exchanges with every other: its entries lie far from
# the diagonal). Runs on the platform OCL_ICD_VENDORS gives (native here).
set -u
cg=$1
good=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

if "$cg" -m "$good" -v 3 -c -S 0 >"$dir/good.out" 2>&1 &&
    grep -q "solution bitwise: OK" "$dir/good.out" &&
    grep -q "^cg: PASS" "$dir/good.out"; then
	echo "PASS good: $(grep 'iterations=' "$dir/good.out" | head -1)"
else
	echo "FAIL good: cg on $good:"
	cat "$dir/good.out"
	fail=1
fi

# bad NAME "EXPECTED MESSAGE PART": the file $dir/NAME.mtx must be refused.
bad() {
	"$cg" -m "$dir/$1.mtx" -S 0 >"$dir/$1.out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q "^cg: $dir/$1.mtx: .*$2" "$dir/$1.out" &&
	    ! grep -q "iterations=" "$dir/$1.out"; then
		echo "PASS $1: $(grep "^cg: $dir" "$dir/$1.out" | sed "s|$dir/||")"
	else
		echo "FAIL $1: exit $rc, want 1 and a message with '$2':"
		sed 's/^/  # /' "$dir/$1.out"
		fail=1
	fi
}
B='%%MatrixMarket matrix coordinate real symmetric'

: >"$dir/empty.mtx"
bad empty "empty file"
printf 'hello world\n' >"$dir/banner.mtx"
bad banner "not a Matrix Market banner"
printf '%%%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n' \
    >"$dir/array.mtx"
bad array "format 'array' not supported"
printf '%%%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n' \
    >"$dir/complex.mtx"
bad complex "field 'complex' not supported"
printf '%%%%MatrixMarket matrix coordinate pattern symmetric\n1 1 1\n1 1\n' \
    >"$dir/pattern.mtx"
bad pattern "field 'pattern' not supported"
printf '%%%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 1\n1 1 1\n' \
    >"$dir/skew.mtx"
bad skew "symmetry 'skew-symmetric' not supported"
printf '%s\n%% only comments\n' "$B" >"$dir/nosize.mtx"
bad nosize "no size line"
printf '%s\n3 4 2\n1 1 1\n2 2 1\n' "$B" >"$dir/square.mtx"
bad square "must be square"
printf '%s\n3 3 x\n' "$B" >"$dir/sizeword.mtx"
bad sizeword "want a size line"
printf '%s\n3 3 2 7\n' "$B" >"$dir/sizeextra.mtx"
bad sizeextra "want a size line"
printf '%s\n0 0 0\n' "$B" >"$dir/zero.mtx"
bad zero "0 rows: want 1 to"
printf '%s\n-5 -5 1\n' "$B" >"$dir/negative.mtx"
bad negative "rows: want 1 to"
printf '%s\n99999999999 99999999999 1\n' "$B" >"$dir/huge.mtx"
bad huge "rows: want 1 to"
printf '%s\n99999999999999999999999 1 1\n' "$B" >"$dir/overflow.mtx"
bad overflow "want a size line"
printf '%s\n3 3 7\n' "$B" >"$dir/manynnz.mtx"
bad manynnz "7 entries for 3 rows: want 1 to 6"
printf '%s\n2 2 2\n1 1 4\n3 1 1\n' "$B" >"$dir/range.mtx"
bad range "entry (3, 1) outside the 2 x 2 matrix"
printf '%s\n2 2 2\n1 1 4\n2 0 1\n' "$B" >"$dir/zeroidx.mtx"
bad zeroidx "entry (2, 0) outside"
printf '%s\n2 2 2\n1 1 4\n2 2 nan\n' "$B" >"$dir/nan.mtx"
bad nan "want a finite value"
printf '%s\n2 2 2\n1 1 4\n2 2 1e999\n' "$B" >"$dir/inf.mtx"
bad inf "want a finite value"
printf '%s\n2 2 2\n1 1 4\n2 2\n' "$B" >"$dir/novalue.mtx"
bad novalue "want a finite value"
printf '%s\n2 2 2\n1 1 4\n2 2 3 junk\n' "$B" >"$dir/junk.mtx"
bad junk "want a finite value"
printf '%s\n2 2 2\n1 x 4\n' "$B" >"$dir/word.mtx"
bad word "want \"row column value\""
printf '%s\n3 3 3\n1 1 4\n2 2 4\n' "$B" >"$dir/short.mtx"
bad short "ends after 2 of its 3 entries"
printf '%s\n2 2 2\n1 1 4\n2 2 4\n2 1 1\n' "$B" >"$dir/long.mtx"
bad long "more entries than the 2"
printf '%s\n2 2 3\n1 1 4\n1 2 1\n2 2 4\n' "$B" >"$dir/upper.mtx"
bad upper "above the diagonal in a symmetric file"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 4\n1 2 1\n2 2 4\n' \
    >"$dir/unsym.mtx"
bad unsym "entry (1, 2) = 1 but (2, 1) is absent: the matrix is not symmetric"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 4\n1 2 1\n2 1 1.5\n2 2 4\n' \
    >"$dir/unequal.mtx"
bad unequal "entry (1, 2) = 1 but (2, 1) = 1.5"
printf '%s\n2 2 2\n1 1 4\n2 1 1\n' "$B" >"$dir/nodiag.mtx"
bad nodiag "row 2: diagonal entry missing or not positive"
printf '%s\n2 2 2\n1 1 4\n2 2 -1\n' "$B" >"$dir/negdiag.mtx"
bad negdiag "row 2: diagonal entry missing or not positive"
{ printf '%s\n1 1 1\n1 1 ' "$B"; head -c 5000 /dev/zero | tr '\0' '1'; echo; } \
    >"$dir/longline.mtx"
bad longline "line 3: too long"
head -c 4096 "$cg" >"$dir/random.mtx"
bad random "line 1: "
bad missing "No such file"
exit $fail
