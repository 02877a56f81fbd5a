#!/bin/sh
# berth-bench's refusals: bad usage exits 2, a bad config, a peer that
# dies or answers "error", and a bad shapes file exit 1 with one line that
# names the problem; none may crash (a sanitizer build would abort).
#   check_refusals.sh BERTH_BENCH CONFIG WORKDIR
set -u
bench=$1 config=$2 work=$3
mkdir -p "$work"
fails=0
# expect STATUS TEXT CMD...: CMD exits STATUS and its stderr contains TEXT
expect() {
  want=$1 text=$2; shift 2
  "$@" >"$work/out" 2>"$work/err"
  got=$?
  if [ "$got" -ne "$want" ] || ! grep -qF -- "$text" "$work/err"; then
    echo "FAIL: $* exited $got (want $want), stderr:" >&2
    cat "$work/err" >&2
    echo "  expected it to contain: $text" >&2
    fails=$((fails + 1))
  fi
}
expect 2 "usage" "$bench"
expect 2 "unknown command 'nope'" "$bench" nope
expect 2 "pairs needs a peer command" "$bench" pairs "$config" --out "$work/r.json"
expect 2 "--runs: expected an integer" "$bench" pairs "$config" --out "$work/r.json" --runs 0 -- true
expect 1 "$work/missing.ini" "$bench" load "$work/missing.ini"
expect 1 "peer: no answer to 'start'" "$bench" pairs "$config" --out "$work/r.json" -- false
expect 1 "peer: no answer to 'start'" "$bench" pairs "$config" --out "$work/r.json" -- "$work/no-such-peer"
printf 'printf "hello\\n"; read x; printf "error no bucket for you\\n"\n' >"$work/bad_peer.sh"
expect 1 "error no bucket for you" "$bench" pairs "$config" --out "$work/r.json" -- /bin/sh "$work/bad_peer.sh"
printf '4 4 4 1\n4 0 4 1\n' >"$work/shapes.txt"
expect 1 "shapes.txt:2: expected M N K COUNT all >= 1" "$bench" sgemm "$work/shapes.txt" --threads 1
printf '4 4 4 1\nfour\n' >"$work/shapes.txt"
expect 1 "shapes.txt:2: expected a line" "$bench" sgemm "$work/shapes.txt" --threads 1
[ ! -e "$work/r.json" ] || { echo "FAIL: a failed pairs run left $work/r.json" >&2; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "check_refusals: all refusals as expected"
exit "$fails"
