#!/usr/bin/env bash
# Where `berth run` writes what it logs: warnings (a backend skipped) on
# stderr, information (the backend chosen) on stdout, and under --quiet
# no warning at all, while errors always show.
#   check_log_streams.sh BERTH FALLBACK_CONFIG MISSING_CONFIG WORK
set -u
berth=$1 fallback=$2 missing=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
failed=0 passed=0

# run NAME WANT_STATUS ARGS...: runs berth, stdout and stderr apart.
run() {
  local name=$1 want=$2
  shift 2
  timeout 60 "$berth" "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null
  local status=$?
  if [ "$status" -ne "$want" ]; then
    echo "FAIL $name: exit status $status, wanted $want"
    failed=$((failed + 1))
  fi
}

# has NAME STREAM LINE / lacks NAME STREAM TEXT: a whole line of it, or
# no line containing the text.
has() {
  if grep -qxF -- "$3" "$work/$1.$2"; then
    echo "ok   $1 $2 has: $3"; passed=$((passed + 1))
  else
    echo "FAIL $1: no line '$3' on std$2:"; cat "$work/$1.$2"; failed=$((failed + 1))
  fi
}
lacks() {
  if grep -qF -- "$3" "$work/$1.$2"; then
    echo "FAIL $1: std$2 has '$3':"; cat "$work/$1.$2"; failed=$((failed + 1))
  else
    echo "ok   $1 $2 lacks: $3"; passed=$((passed + 1))
  fi
}

warning="warning: backend 'missing' skipped: backend 'missing' not found: no libberth-missing.so in"

run plain 0 run "$fallback" --repeat 0
if grep -q "^$warning " "$work/plain.err"; then
  echo "ok   plain err has: $warning ..."; passed=$((passed + 1))
else
  echo "FAIL plain: no warning on stderr:"; cat "$work/plain.err"; failed=$((failed + 1))
fi
lacks plain out "warning:"
lacks plain err "chosen"
if grep -q "^backend 'cpu' chosen (" "$work/plain.out"; then
  echo "ok   plain out has: backend 'cpu' chosen (...)"; passed=$((passed + 1))
else
  echo "FAIL plain: no 'chosen' line on stdout:"; cat "$work/plain.out"; failed=$((failed + 1))
fi

run quiet 0 run "$fallback" --repeat 0 --quiet
lacks quiet err "warning"
lacks quiet out "warning"
lacks quiet out "chosen"

# An error shows under --quiet, on stderr.
run error 1 run "$missing" --quiet
if grep -q "^berth run: backend 'vulkanx' not found: no libberth-vulkanx.so in " "$work/error.err"; then
  echo "ok   error err has: berth run: backend 'vulkanx' not found: ..."; passed=$((passed + 1))
else
  echo "FAIL error: no error on stderr:"; cat "$work/error.err"; failed=$((failed + 1))
fi
lacks error out "not found"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
