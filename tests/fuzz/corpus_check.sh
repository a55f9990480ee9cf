#!/bin/sh
# corpus_check.sh GEN CORPUS SCRATCH - the committed gen_* seeds are exactly
# what fuzz_corpus_gen writes now. To regenerate: GEN tests/fuzz/corpus
set -eu
gen=$1 corpus=$2 scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
"$gen" "$scratch"
rc=0
for f in "$scratch"/*; do
	if ! cmp -s "$f" "$corpus/$(basename "$f")"; then
		echo "corpus_check: $(basename "$f") differs from the generator's:" \
		    "run $gen $corpus and commit" >&2
		rc=1
	fi
done
exit $rc
