#!/bin/sh
# Fills fuzz/corpus/<target> with seed inputs: the repository's workflows and
# test cases for `check` and `migrate`, the hand-written seeds under
# fuzz/seeds/ for every target. Run from anywhere; libFuzzer adds to these
# directories as it finds new coverage (they are not committed).
set -eu
fuzz=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$fuzz")
for target in check expr template migrate; do
    mkdir -p "$fuzz/corpus/$target"
done
for target in check migrate; do
    find "$repo/workflows" "$repo/tests/checks" -name '*.yaml' | while read -r f; do
        cp "$f" "$fuzz/corpus/$target/$(echo "${f#"$repo"/}" | tr / _)"
    done
done
cp "$fuzz"/seeds/migrate/* "$fuzz/corpus/migrate/"
cp "$fuzz"/seeds/migrate/* "$fuzz/corpus/check/"
cp "$fuzz"/seeds/expr/* "$fuzz/corpus/expr/"
cp "$fuzz"/seeds/template/* "$fuzz/corpus/template/"
cp "$fuzz"/seeds/expr/* "$fuzz/corpus/template/"
