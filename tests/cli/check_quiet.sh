#!/bin/sh
# berth check --quiet: a module that passes gives one line, the summary;
# one that fails gives the failing rows and the summary, nothing that
# passed, and the same failing rows as without --quiet.
#
#   check_quiet.sh BERTH FAILING_MODULE
set -eu
berth=$1 bad=$2
fail() { echo "check_quiet: $*" >&2; exit 1; }
out=$("$berth" check cpu --quiet --no-onnx) || fail "berth check cpu --quiet failed: $out"
[ "$(echo "$out" | wc -l)" -eq 1 ] || fail "a passing module gave more than the summary: $out"
echo "$out" | grep -q "^berth check cpu: passed;" || fail "no summary line: $out"
set +e
quiet=$("$berth" check "$bad" --quiet --no-onnx); rc_quiet=$?
full=$("$berth" check "$bad" --no-onnx); rc_full=$?
set -e
[ $rc_quiet -eq 1 ] && [ $rc_full -eq 1 ] || fail "exit status $rc_quiet (quiet) and $rc_full (full), want 1"
echo "$quiet" | grep -q " pass$\|^  ok \|^ABI contract\|^op cases" && fail "--quiet printed what passed: $quiet"
[ "$(echo "$quiet" | grep -c FAIL)" -ge 1 ] || fail "--quiet printed no failure: $quiet"
[ "$(echo "$quiet" | grep "FAIL")" = "$(echo "$full" | grep "FAIL")" ] || fail "--quiet and the full report list different failures"
echo "$quiet" | tail -1 | grep -q ": FAILED;" || fail "no summary line last: $quiet"
echo "ok: --quiet: $(echo "$quiet" | wc -l) lines against $(echo "$full" | wc -l)"
