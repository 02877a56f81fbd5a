#!/bin/sh
# Crossing tensors read where their writer left them: the first graph
# split node by node between the partial fixture (cpu running matmul and
# add) and vulkan, which exports its outputs (its io memory, cached for
# the cpu on lavapipe and unified devices). h1 (written on partial) is
# copied to a host buffer; h (written on vulkan) is read by partial where
# vulkan left it. With cpu in vulkan's place both are copied. The outputs
# are cpu's to the bit either way.
#
#   check_split_kept.sh BERTH PARTIAL_MODULE FIRST_DIR DIR
set -eu
berth=$1 partial=$2 first=$3 dir=$4
fail() { echo "check_split_kept: $*" >&2; exit 1; }
mkdir -p "$dir"
for second in vulkan cpu; do
    printf '[model]\ngraph = %s/first.webnn\nweights = %s/first.safetensors\n[backend]\nuse = %s, %s\nsplit = first\n[buckets]\nrows = batch=1\n' \
        "$first" "$first" "$partial" "$second" > "$dir/$second.ini"
done
vk=$("$berth" run "$dir/vulkan.ini" --repeat 3 --stats 2>&1) || fail "partial, vulkan failed: $vk"
cpu=$("$berth" run "$dir/cpu.ini" --repeat 3 --stats 2>&1) || fail "partial, cpu failed: $cpu"
echo "$vk" | grep -q "crossings: lane main bucket batch=1: 2 tensors, 64 B per run: 32 B through host buffers, 32 B read where written (0 B of it imported)" ||
    fail "partial, vulkan: expected h copied and h1 kept: $vk"
echo "$cpu" | grep -q "crossings: lane main bucket batch=1: 2 tensors, 64 B per run: 64 B through host buffers, 0 B read where written" ||
    fail "partial, cpu: expected both copied: $cpu"
sum() { echo "$1" | grep -o "fnv1a: [0-9a-f]*"; }
[ -n "$(sum "$vk")" ] && [ "$(sum "$vk")" = "$(sum "$cpu")" ] || fail "outputs differ: $(sum "$vk") and $(sum "$cpu")"
echo "ok: $(echo "$vk" | grep crossings:)"
