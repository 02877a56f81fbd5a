#!/usr/bin/env bash
# expect.sh STATUS PATTERN -- COMMAND...
# Runs COMMAND; passes when its exit status is STATUS ("nonzero" for any
# failure) and its combined output matches the extended regex PATTERN.
set -u
want=$1 pattern=$2
shift 3
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
if [ "$want" = nonzero ]; then
  [ "$status" -ne 0 ] || { echo "expect: exit status 0, wanted non-zero"; exit 1; }
else
  [ "$status" -eq "$want" ] || { echo "expect: exit status $status, wanted $want"; exit 1; }
fi
# A sanitizer's report fails the test whatever the status: under make
# test-tsan a report ends berth with status 66, which a test that expects
# a failure would otherwise accept.
if printf '%s\n' "$out" | grep -q 'Sanitizer'; then
  echo "expect: a sanitizer reported an error"
  exit 1
fi
printf '%s\n' "$out" | tr '\n' ' ' | grep -Eq -- "$pattern" || { echo "expect: output does not match /$pattern/"; exit 1; }
