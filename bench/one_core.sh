#!/usr/bin/env bash
# bench/one_core.sh BERTH CONFIG [MODEL] [ROUNDS]
# The cpu backend asked for 8 threads on a process pinned to one cpu
# (taskset), against 1 thread there: ROUNDS (default 3) alternating
# rounds of `berth run --repeat 20` each, the warm runs' mean per round,
# and the ratio of the medians. The pool starts one thread per usable
# cpu, so the ratio should be near 1; each round's numbers are printed.
#   bench/one_core.sh build/apps/berth config/ocr-cpu.ini rec
set -euo pipefail
berth=$1 config=$2 model=${3:-} rounds=${4:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=$(cd "$(dirname "$config")" && pwd)
cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
args=(--repeat 20)
[ -n "$model" ] && args+=(--model "$model")
for t in 1 8; do
  # relative model paths made absolute; the threads line set or added
  sed -e "s#^\(graph\|weights\|manifest\) = \([^/]\)#\1 = $dir/\2#" -e '/^threads = /d' \
      -e "s/^\[backend.cpu\]\$/[backend.cpu]\nthreads = $t/" "$config" > "$work/t$t.ini"
  grep -q "^threads = $t\$" "$work/t$t.ini" || printf '\n[backend.cpu]\nthreads = %s\n' "$t" >> "$work/t$t.ini"
done
for r in $(seq "$rounds"); do
  for t in 1 8; do
    out=$(taskset -c "$cpu" "$berth" run "$work/t$t.ini" "${args[@]}" 2>&1)
    ms=$(printf '%s\n' "$out" | sed -n 's/.*later runs \([0-9.]*\) ms mean.*/\1/p' | head -1)
    dev=$(printf '%s\n' "$out" | sed -n 's/.*device: \(cpu ([^)]*)\).*/\1/p' | head -1)
    echo "round $r threads $t: $ms ms mean ($dev)"
    echo "$ms" >> "$work/ms$t"
  done
done
median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
m1=$(median "$work/ms1") m8=$(median "$work/ms8")
awk -v a="$m1" -v b="$m8" 'BEGIN { printf "one cpu: 1 thread %.3f ms, 8 threads %.3f ms: %.2fx\n", a, b, b / a }'
