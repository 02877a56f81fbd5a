#!/usr/bin/env bash
# check_threads.sh BERTH CONFIG WORK REPEAT THREADS...
# Runs `berth run CONFIG --repeat REPEAT` once per thread count, the
# config's [backend.cpu] threads set to each, and wants the same outputs
# (shape, first values, sum and checksum) from every count as from the
# first. The cpu backend splits each node into chunks computed the same
# way whatever thread takes them, so any difference is a lost or torn
# chunk. A count above the cpus this process may use (nproc) runs that
# many threads, and the device must say so. Repeated warm runs hand the pool job after job, which is what
# make test-tsan checks for races.
set -u
berth=$1 config=$2 work=$3 repeat=$4
shift 4
dir=$(cd "$(dirname "$config")" && pwd)
rm -rf "$work"
mkdir -p "$work"
first="" failed=0 usable=$(nproc)
for t in "$@"; do
  want=$t
  [ "$t" -gt "$usable" ] && want=$usable
  ini=$work/threads$t.ini
  # The copy lives elsewhere: relative model paths are made absolute.
  sed -e "s#^\(graph\|weights\|manifest\) = \([^/]\)#\1 = $dir/\2#" \
      -e "s|^threads = .*|threads = $t|" "$config" >"$ini"
  grep -q "^threads = $t\$" "$ini" || { echo "FAIL: $config has no [backend.cpu] threads line"; exit 1; }
  out=$("$berth" run "$ini" --repeat "$repeat" 2>&1)
  status=$?
  printf '%s\n' "$out"
  outputs=$(printf '%s\n' "$out" | grep '^  output ')
  if [ "$status" -ne 0 ]; then
    echo "FAIL threads=$t: exit status $status"
    failed=1
  elif printf '%s\n' "$out" | grep -q 'Sanitizer'; then
    echo "FAIL threads=$t: a sanitizer report"
    failed=1
  elif ! printf '%s\n' "$out" | grep -q "($want threads"; then
    echo "FAIL threads=$t: the device does not say it runs $want threads"
    failed=1
  elif [ -z "$outputs" ]; then
    echo "FAIL threads=$t: no outputs printed"
    failed=1
  elif [ -z "$first" ]; then
    first=$outputs
  elif [ "$outputs" != "$first" ]; then
    echo "FAIL threads=$t: outputs differ from threads=$1's"
    diff <(printf '%s\n' "$first") <(printf '%s\n' "$outputs")
    failed=1
  fi
done
[ "$failed" -eq 0 ] && echo "same outputs at threads $*, $repeat warm runs each"
exit "$failed"
