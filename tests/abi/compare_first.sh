#!/usr/bin/env bash
# compare_first.sh BERTH COMPARE V1_INI CPU_INI OUTDIR: runs the first
# graph with `berth run` on the ABI 1.0 module and on the cpu backend,
# writing each one's outputs, and compares them element by element.
set -eu
berth=$1 compare=$2 v1=$3 cpu=$4 dir=$5
mkdir -p "$dir"
rm -f "$dir/v1.safetensors" "$dir/cpu.safetensors"
out=$("$berth" run "$v1" --output "$dir/v1.safetensors" 2>&1)
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q "backend 'abi_v1' chosen" || { echo "the abi_v1 module was not used"; exit 1; }
"$berth" run "$cpu" --output "$dir/cpu.safetensors" --quiet
"$compare" "$dir/v1.safetensors" "$dir/cpu.safetensors" 1e-5
