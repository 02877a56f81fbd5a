#!/usr/bin/env bash
# check_deep_checkout.sh BERTH PARTIAL_MODULE CPU_MODULE GRAPH WEIGHTS WORK
# A checkout in a deep folder: the two modules, the graph and its weights
# copied into a folder under WORK whose absolute path is over 200
# characters, and a config naming them there, as tools/conformance writes
# its split configs ("use = MODULE, MODULE", split = first), so its lines are
# longer than the 199 characters inih's buffer holds. berth run must read
# it, run split across both modules, and write the same outputs as the
# same config naming the files where the build left them.
set -eu
berth=$1 partial=$2 cpu=$3 graph=$4 weights=$5 work=$6
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
seg=dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd # 60 characters
deep=$work/deep
while [ ${#deep} -lt 220 ]; do deep=$deep/$seg; done
mkdir -p "$deep"
cp "$partial" "$cpu" "$graph" "$weights" "$deep"/

# write_ini FILE GRAPH WEIGHTS MODULE MODULE
write_ini() {
  printf '[model]\ngraph = %s\nweights = %s\n\n[backend]\nuse = %s, %s\nsplit = first\n\n[buckets]\nrows = batch=1\n' \
    "$2" "$3" "$4" "$5" >"$1"
}
write_ini "$work/short.ini" "$graph" "$weights" "$partial" "$cpu"
write_ini "$work/deep.ini" "$deep/${graph##*/}" "$deep/${weights##*/}" "$deep/${partial##*/}" "$deep/${cpu##*/}"

longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n }' "$work/deep.ini")
echo "deep folder: ${#deep} characters; longest config line: $longest characters"
if [ "$longest" -lt 200 ]; then
  echo "check_deep_checkout: the config's longest line is $longest characters; expected over 199"
  exit 1
fi

status=0
for v in short deep; do
  if ! "$berth" run "$work/$v.ini" --repeat 1 --explain --output "$work/$v.safetensors" >"$work/$v.log" 2>&1; then
    echo "check_deep_checkout: berth run $v.ini failed:"
    cat "$work/$v.log"
    status=1
    continue
  fi
  # split = on ran both modules: the explain names the deep copies' backends
  if ! grep -q 'graphs split among them' "$work/$v.log"; then
    echo "check_deep_checkout: berth run $v.ini did not split the graph:"
    cat "$work/$v.log"
    status=1
  fi
done
[ "$status" -eq 0 ] || exit 1
if ! cmp "$work/short.safetensors" "$work/deep.safetensors"; then
  echo "check_deep_checkout: the deep checkout's outputs differ from the short one's"
  exit 1
fi
echo "check_deep_checkout: the same outputs from both configs"
