#!/usr/bin/env bash
# check_repeat_stats.sh BERTH CONFIG
# berth run --repeat N --profile: the warm runs' min <= median <= p90, the
# min the same as the "best of N", and the profile the mean of the N runs,
# its nodes in decreasing time with shares adding up to 100%.
set -eu
berth=$1 config=$2
fail() { echo "check_repeat_stats: $*"; exit 1; }
for n in 25 0; do
  out=$("$berth" run "$config" --repeat "$n" --profile 2>&1) || fail "berth run --repeat $n exited $?: $out"
  printf '%s\n' "$out"
  if [ "$n" -gt 0 ]; then
    best=$(printf '%s\n' "$out" | sed -n "s/.* \([0-9.]*\) ms best of $n\$/\1/p")
    stats=$(printf '%s\n' "$out" | sed -n 's/^  later runs: min \([0-9.]*\) ms, median \([0-9.]*\) ms, p90 \([0-9.]*\) ms$/\1 \2 \3/p')
    [ -n "$best" ] && [ -n "$stats" ] || fail "no best-of or min/median/p90 line"
    set -- $stats
    awk -v b="$best" -v a="$1" -v m="$2" -v p="$3" 'BEGIN { exit !(a - b < 0.0006 && b - a < 0.0006 && a <= m && m <= p) }' ||
      fail "expected min = best ($best) <= median <= p90, found $stats"
    runs=$n
  else
    printf '%s\n' "$out" | grep -q 'later runs' && fail "--repeat 0 printed warm-run times"
    runs=1
  fi
  printf '%s\n' "$out" | grep -q "^  profile, mean of $runs runs\?, nodes by time" || fail "no profile header for $runs runs"
  printf '%s\n' "$out" | awk '
    /^  profile, mean of/ { on = 1; next }
    on && /^  subgraphs/ { on = 0 }
    on { ms = $(NF - 2); share = $NF; sub("%", "", share); n++; sum += share
         if (n > 1 && ms > last) { print "profile not in decreasing time: " $0; bad = 1 }
         last = ms }
    END { if (n < 2) { print "fewer than 2 profiled nodes"; bad = 1 }
          if (sum < 99.5 || sum > 100.5) { print "shares add up to " sum "%"; bad = 1 }
          exit bad }' || fail "profile check failed"
done
echo "repeat stats and profile in order"
