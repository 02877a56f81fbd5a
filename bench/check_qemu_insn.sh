#!/bin/sh
# check_qemu_insn.sh PLUGIN PROGRAM DIR EMULATOR...
# The qemu_insn plugin (bench/qemu_insn.c) against a program whose count
# is known: PROGRAM is bench/insn_loop (arm64), each of whose threads runs
# 4 instructions per iteration. Everything but the loops is the same
# between a run with N iterations and one with 2N, so
#   1 thread:  count(2N) - count(N) must be 4N exactly;
#   2 threads: count(2N) - count(N) must be 8N, give or take what the
#              join's wait varies by (a futex wait or none; a few hundred
#              instructions), within SLACK. A counter that dropped or
#              doubled a thread's additions would be off by millions.
set -eu
if [ $# -lt 4 ]; then
  echo "usage: check_qemu_insn.sh PLUGIN PROGRAM DIR EMULATOR..." >&2
  exit 2
fi
plugin=$1 program=$2 dir=$3
shift 3
N=1000000
SLACK=2000
mkdir -p "$dir"
count() { # N THREADS: prints the count
  rm -f "$dir/count"
  "$@" -plugin "$plugin,out=$dir/count" "$program" "$n" "$t" >/dev/null
  cat "$dir/count"
}
fail=0
for t in 1 2; do
  n=$N; a=$(count "$@")
  n=$((2 * N)); b=$(count "$@")
  want=$((4 * N * t)) got=$((b - a))
  off=$((got - want))
  if [ "$t" -eq 1 ]; then slack=0; else slack=$SLACK; fi
  echo "threads $t: $a instructions at N=$N, $b at 2N: difference $got, expected $want (off by $off, allowed $slack)"
  if [ "$off" -gt "$slack" ] || [ "$off" -lt "-$slack" ]; then
    echo "check_qemu_insn: wrong count with $t thread(s)" >&2
    fail=1
  fi
done
exit $fail
