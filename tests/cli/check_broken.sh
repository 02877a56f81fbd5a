#!/bin/sh
# berth check on a module with planted faults (tests/executor/broken_module.c):
# each must be reported, on the line of its check or op, and the exit
# status must be 1.
#   check_broken.sh BERTH MODULE
set -u
out=$("$1" check "$2" --no-onnx 2>&1)
rc=$?
fail=0
expect() {
    printf '%s\n' "$out" | grep -Eq "$1" || { echo "check_broken: no line matches: $1" >&2; fail=1; }
}
expect '^  FAIL negotiation: version 0: a host offering ABI version 0 got a table'
expect '^  FAIL refusals: an unknown op: refused, but the error message is empty'
expect '^  FAIL upload: abandoned half-way: free_weights after 1 of 3 tensors left 1 of 1 given buffers unfreed'
expect '^  ok   upload: ownership'
expect '^  relu +[0-9]+  FAIL [0-9]+/[0-9]+: relu: output .y. \([0-9]+ elements\): 1 never written'
expect '^  sigmoid +[0-9]+  FAIL [0-9]+/[0-9]+: sigmoid: output .y. \([0-9]+ elements\): 1 not finite where finite expected \(first \[0\]\)'
expect '^  tanh +[0-9]+  FAIL [0-9]+/[0-9]+: tanh: output .y.: the second run differs from the first \(first at element \[0\]\)'
expect '^  add +[0-9]+  pass$'
# each planted op fault fails its op's case and its generated edge case
expect '^  edge values .*: [0-9]+ cases: [0-9]+ passed, 0 unsupported, 3 failed$'
expect '^berth check .*: FAILED; contract [0-9]+ ok, 3 failed; op cases [0-9]+ passed, 0 unsupported, 6 failed'
[ "$rc" = 1 ] || { echo "check_broken: exit status $rc, expected 1" >&2; fail=1; }
[ "$fail" = 0 ] || { printf '%s\n' "$out" >&2; exit 1; }
echo "check_broken: every planted fault reported"
