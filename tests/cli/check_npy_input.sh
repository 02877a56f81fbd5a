#!/usr/bin/env bash
# `berth run --input x=FILE.npy` as a user meets it: a good file is run,
# a file whose header promises more data than it holds (or less) is
# refused with one line naming the file, what the header expects and what
# the file has, before berth allocates what the header claims.
#   check_npy_input.sh BERTH CONFIG WORK
set -u
berth=$1 config=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
failed=0 passed=0

# npy FILE HEADER DATA_BYTES: a version 1.0 .npy with the header given and
# DATA_BYTES bytes of 0x3f (each f32 1.0 is 00 00 80 3f; any bytes do for
# the refusals, which never look at the data).
npy() {
  local file=$1 header=$2 n=$3
  local len=${#header}
  printf '\223NUMPY\001\000' >"$file"
  printf "\\$(printf %03o $((len % 256)))\\$(printf %03o $((len / 256)))" >>"$file"
  printf '%s' "$header" >>"$file"
  head -c "$n" /dev/zero | tr '\0' '\077' >>"$file"
}

# check NAME STATUS LINE -- COMMAND...: exit status STATUS and LINE among
# the output's lines, exactly (-x), or within one (CHECK_MATCH=-F).
check() {
  local name=$1 want_status=$2 line=$3
  shift 4
  local out status
  out=$(timeout 60 "$@" 2>&1 </dev/null)
  status=$?
  if [ "$status" -ne "$want_status" ]; then
    echo "FAIL $name: exit status $status, wanted $want_status"; printf '%s\n' "$out"
  elif ! printf '%s\n' "$out" | grep -q "${CHECK_MATCH:--xF}" -- "$line"; then
    echo "FAIL $name: no line '$line' in:"; printf '%s\n' "$out"
  else
    echo "ok   $name: $line"
    passed=$((passed + 1))
    return
  fi
  failed=$((failed + 1))
}

hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }"
npy "$work/good.npy" "$hdr" 32
# Two rows from the file, not the one row berth would generate.
CHECK_MATCH=-F check good 0 "output y: f32[2, 3] first:" -- \
  "$berth" run "$config" --input "x=$work/good.npy"

npy "$work/big.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 4), }" 32
check 'header claims 32 GiB' 1 \
  "berth run: input 'x': $work/big.npy: npy shape (2147483648, 4) of f32: expected 34359738368 bytes of data after the header, file has 32" -- \
  "$berth" run "$config" --input "x=$work/big.npy"

npy "$work/short.npy" "$hdr" 31
check 'data cut short' 1 \
  "berth run: input 'x': $work/short.npy: npy shape (2, 4) of f32: expected 32 bytes of data after the header, file has 31" -- \
  "$berth" run "$config" --input "x=$work/short.npy"

npy "$work/long.npy" "$hdr" 40
check 'bytes after the data' 1 \
  "berth run: input 'x': $work/long.npy: npy shape (2, 4) of f32: expected 32 bytes of data after the header, file has 40" -- \
  "$berth" run "$config" --input "x=$work/long.npy"

npy "$work/overflow.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }" 0
check 'shape overflows 64 bits' 1 \
  "berth run: input 'x': $work/overflow.npy: npy shape (4294967296, 4294967296) of f32 is too large: its byte size overflows 64 bits" -- \
  "$berth" run "$config" --input "x=$work/overflow.npy"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
