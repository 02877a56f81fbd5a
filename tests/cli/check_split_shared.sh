#!/bin/sh
# The host's side of export_output and import_input, with the sharing
# fixtures (the cpu backend keeping each output in a memfd of its own):
# the first graph split node by node, h1 written by the first module and
# read by the second, h the other way, 32 bytes each.
#  - sharing-host, cpu: h1 exported as an address, which cpu reads as
#    host memory: kept; h, from cpu (which exports nothing), through a
#    host buffer;
#  - sharing-fd, cpu: a descriptor cpu cannot import: both through host
#    buffers, as before sharing;
#  - sharing-fd, sharing-fd-all: each side imports the other's
#    descriptor: both kept, both imported, no host buffer;
#  - sharing-bad, cpu: an export 4 bytes longer than the tensor is
#    refused with a warning naming it: both through host buffers.
# Every output equals cpu's to the bit.
#
#   check_split_shared.sh BERTH MODULE_DIR FIRST_DIR DIR
set -eu
berth=$1 mods=$2 first=$3 dir=$4
fail() { echo "check_split_shared: $*" >&2; exit 1; }
mkdir -p "$dir"
run() { # NAME USE: the first graph split between the modules of USE
    printf '[model]\ngraph = %s/first.webnn\nweights = %s/first.safetensors\n[backend]\nuse = %s\nsplit = first\n[buckets]\nrows = batch=1\n' \
        "$first" "$first" "$2" > "$dir/$1.ini"
    "$berth" run "$dir/$1.ini" --repeat 3 --stats 2>&1 || fail "$2 failed"
}
want() { # OUTPUT TEXT
    echo "$1" | grep -qF "$2" || fail "expected '$2' in: $1"
}
cpu=$(run cpu cpu)
host=$(run host "$mods/libberth-fx-sharing-host.so, cpu")
fd=$(run fd "$mods/libberth-fx-sharing-fd.so, cpu")
both=$(run both "$mods/libberth-fx-sharing-fd.so, $mods/libberth-fx-sharing-fd-all.so")
bad=$(run bad "$mods/libberth-fx-sharing-bad.so, cpu")
want "$host" "2 tensors, 64 B per run: 32 B through host buffers, 32 B read where written (0 B of it imported)"
want "$fd" "2 tensors, 64 B per run: 64 B through host buffers, 0 B read where written (0 B of it imported)"
want "$both" "2 tensors, 64 B per run: 0 B through host buffers, 64 B read where written (64 B of it imported)"
want "$bad" "2 tensors, 64 B per run: 64 B through host buffers, 0 B read where written (0 B of it imported)"
want "$bad" "tensor 'h1' passes through a host buffer: backend 'sharing-bad' export_output() described 36 bytes of kind 1, expected 32 bytes"
sum() { echo "$1" | grep -o "fnv1a: [0-9a-f]*"; }
for out in "$host" "$fd" "$both" "$bad"; do
    [ -n "$(sum "$cpu")" ] && [ "$(sum "$out")" = "$(sum "$cpu")" ] || fail "outputs differ from cpu's: $out"
done
echo "ok: $(echo "$both" | grep crossings:)"
