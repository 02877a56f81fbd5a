#!/usr/bin/env bash
# Every file berth opens, given a named pipe, a directory or a character
# device instead of a regular file: refused at once, exit status non-zero,
# one line naming the path, what it was for and what it is. A hang (a FIFO
# opened for reading waits for a writer) shows as the timeout's status.
#   check_file_kinds.sh BERTH ROOT WORK
set -u
berth=$1 root=$2 work=$3
rm -rf "$work"
mkdir -p "$work/dir"
mkfifo "$work/fifo"
cp "$root/examples/first/first.safetensors" "$work/blob.bin"
graph=$root/examples/first/first.webnn
weights=$root/examples/first/first.safetensors
failed=0 passed=0

# check NAME PATH WHAT KIND -- COMMAND...
check() {
  local name=$1 path=$2 what=$3 kind=$4
  shift 5
  local out status
  out=$(timeout 20 "$@" 2>&1 </dev/null)
  status=$?
  local want="$path: the $what is $kind, expected a regular file"
  local lines
  # The error line itself ("berth CMD: ..."); a backend that cannot be
  # used is also named in a "skipped" warning before it.
  lines=$(printf '%s\n' "$out" | grep '^berth [a-z]*: ' | grep -cF -- "$want")
  if [ "$status" -eq 124 ]; then
    echo "FAIL $name: still running after 20 s (blocked on the $kind?)"
  elif [ "$status" -eq 0 ]; then
    echo "FAIL $name: exit status 0"; printf '%s\n' "$out"
  elif printf '%s\n' "$out" | grep -q 'Sanitizer'; then
    # a report's own exit status would pass for the refusal
    echo "FAIL $name: a sanitizer reported an error"; printf '%s\n' "$out"
  elif [ "$lines" -ne 1 ]; then
    echo "FAIL $name: wanted one line with '$want', found:"; printf '%s\n' "$out"
  else
    echo "ok   $name: $(printf '%s\n' "$out" | grep '^berth [a-z]*: ' | grep -F -- "$want")"
    passed=$((passed + 1))
    return
  fi
  failed=$((failed + 1))
}

# config FILE KEY=VALUE... : a deployment on the first graph, keys replaced.
config() {
  local file=$1 g=$graph w=$weights m="" use=cpu
  shift
  for kv in "$@"; do
    case "$kv" in
      graph=*) g=${kv#graph=} ;;
      weights=*) w=${kv#weights=} ;;
      manifest=*) m=${kv#manifest=} ;;
      use=*) use=${kv#use=} ;;
    esac
  done
  {
    printf '[model]\ngraph = %s\nweights = %s\n' "$g" "$w"
    [ -n "$m" ] && printf 'manifest = %s\n' "$m"
    printf '[backend]\nuse = %s\n[buckets]\nrows = batch=1\n' "$use"
  } >"$file"
}

for k in fifo dir dev; do
  case $k in
    fifo) target=$work/fifo kind="a named pipe (FIFO)" ;;
    dir) target=$work/dir kind="a directory" ;;
    dev) target=/dev/null kind="a character device" ;;
  esac
  # Names with the suffix each reader expects, pointing at the object.
  for ext in ini webnn safetensors json npy so; do ln -sf "$target" "$work/$k.$ext"; done
  check "config ($k)" "$work/$k.ini" config "$kind" -- "$berth" run "$work/$k.ini"
  config "$work/graph-$k.ini" graph="$work/$k.webnn"
  check "graph ($k)" "$work/$k.webnn" graph "$kind" -- "$berth" run "$work/graph-$k.ini"
  config "$work/weights-$k.ini" weights="$work/$k.safetensors"
  check "weights ($k)" "$work/$k.safetensors" "weights archive" "$kind" -- \
    "$berth" run "$work/weights-$k.ini"
  config "$work/manifest-$k.ini" weights="$work/blob.bin" manifest="$work/$k.json"
  check "manifest ($k)" "$work/$k.json" manifest "$kind" -- "$berth" run "$work/manifest-$k.ini"
  config "$work/plain.ini"
  check "--input ($k)" "$work/$k.npy" ".npy input" "$kind" -- \
    "$berth" run "$work/plain.ini" --input "x=$work/$k.npy"
  check "inspect ($k)" "$work/$k.safetensors" "weights archive" "$kind" -- \
    "$berth" inspect "$work/$k.safetensors"
  check "inspect --manifest ($k)" "$work/$k.json" manifest "$kind" -- \
    "$berth" inspect "$work/blob.bin" --manifest "$work/$k.json"
  config "$work/module-$k.ini" use="$work/$k.so"
  check "backend module ($k)" "$work/$k.so" "backend module" "$kind" -- \
    "$berth" run "$work/module-$k.ini"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
