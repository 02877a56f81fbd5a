#!/bin/sh
# [cache] dir on a model whose products a backend prepares (cpu packs
# them) or compiles programs for (vulkan):
#  - the first start prepares and writes the cache; the second takes it
#    back; both give the outputs of a start with no cache, to the bit;
#  - a file cut short, one with a flipped byte, a named pipe in its
#    place (refused, not waited on) and one written for other weights
#    are each refused as stale or corrupt, said so, and rewritten, with
#    the same outputs;
#  - other weights get their own file; a cache that cannot be written is
#    a warning, not a failure; an unknown [cache] key is an error.
#
#   check_cache.sh BERTH BACKEND DIR
set -eu
berth=$1 backend=$2 dir=$3
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "check_cache: $*" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
/usr/bin/python3 "$here/cache_model.py" m.safetensors 0
/usr/bin/python3 "$here/cache_model.py" other.safetensors 5
cat > m.webnn <<'GRAPH'
webnn_graph "cached" v2 {
  inputs { x: f32[dyn("rows", 16), 256]; }
  consts {
    w1: f32[256, 128] @weights("layer1.weight");
    b1: f32[128] @weights("layer1.bias");
    w2: f32[128, 64] @weights("layer2.weight");
  }
  nodes {
    h0 = matmul(x, w1);
    h1 = add(h0, b1);
    h = relu(h1);
    y = matmul(h, w2);
  }
  outputs { y; }
}
GRAPH
ini() { # ini NAME WEIGHTS CACHE_SECTION
    printf '[model]\ngraph = m.webnn\nweights = %s\nstage = rows\n[backend]\nuse = %s\n%s\n[buckets]\nrows = rows=8|rows=16\n' \
        "$2" "$backend" "$3" > "$1"
}
ini plain.ini m.safetensors ''
ini cached.ini m.safetensors '[cache]
dir = kept'
ini other.ini other.safetensors '[cache]
dir = kept'
ini unwritable.ini m.safetensors '[cache]
dir = plain.ini/kept'
ini badkey.ini m.safetensors '[cache]
dir = kept
size = 10'

run() { # run INI: the output's digest, the cache line and the log in out.txt
    "$berth" run "$1" --repeat 0 --stats > out.txt 2>&1 || { cat out.txt; fail "$1 failed"; }
    cat out.txt
    grep -o 'fnv1a: [0-9a-f]*' out.txt > fnv.txt || fail "$1: no output digest"
    cmp -s fnv.txt want.txt || fail "$1: outputs differ from the start with no cache"
}
has() { grep -qE "$1" out.txt || fail "expected '$1' in the output above"; }

"$berth" run plain.ini --repeat 0 > out.txt 2>&1 || { cat out.txt; fail "plain.ini failed"; }
grep -o 'fnv1a: [0-9a-f]*' out.txt > want.txt

if [ "$backend" = cpu ]; then
    kind=weights
    first='prepared: on cpu: 2 weights in its own layout \(160.0 KiB\), 160.0 KiB as uploaded let go; cache files: 0 read, 0 refused, 1 written'
    again='prepared: on cpu: weights taken from the cache; cache files: 1 read, 0 refused, 0 written'
else
    kind=programs
    first='cache files: 0 read, 0 refused, 1 written'
    again='cache files: 1 read, 0 refused, 0 written'
fi
run cached.ini
has "$first"
file=$(ls kept/$backend-$kind-*.bin)
[ "$(ls kept | wc -l)" -eq 1 ] || fail "expected one file in the cache, found: $(ls kept)"
run cached.ini
has "$again"

# corrupt: one byte of the payload flipped
size=$(wc -c < "$file")
/usr/bin/python3 -c "import sys; f=open(sys.argv[1],'r+b'); f.seek(int(sys.argv[2])); b=f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0]^0x40]))" "$file" $((size - 3))
run cached.ini
has "cache: .*$kind-.*: its digest does not match its bytes \(corrupt\)"
has "cache files: 0 read, 1 refused, 1 written"
run cached.ini
has "$again"

# cut short
head -c $((size - 1)) "$file" > cut && mv cut "$file"
run cached.ini
has "its size is not what its header says"
has "cache files: 0 read, 1 refused, 1 written"

# a named pipe in the file's place is refused, not waited on
rm -f "$file" && mkfifo "$file"
timeout 120 "$berth" run cached.ini --repeat 0 --stats > out.txt 2>&1 || { cat out.txt; fail "a FIFO in the cache stalled or failed the start"; }
cat out.txt
has "cache: .*$kind-.*: the cache file is a named pipe \(FIFO\), expected a regular file"
has "cache files: 0 read, 1 refused, 1 written"
[ -f "$file" ] || fail "the FIFO was not replaced by a cache file"
run cached.ini
has "$again"

# other weights: their own file; put in this one's place, refused
cp want.txt keep_want.txt
"$berth" run other.ini --repeat 0 --stats > out.txt 2>&1 || { cat out.txt; fail "other.ini failed"; }
grep -o 'fnv1a: [0-9a-f]*' out.txt > want.txt
cmp -s want.txt keep_want.txt && fail "other weights gave the same outputs: the test cannot tell them apart"
has "cache files: 0 read, 0 refused, 1 written"
[ "$(ls kept/*.bin | wc -l)" -eq 2 ] || fail "other weights should have their own file: $(ls kept)"
otherfile=$(ls kept/*.bin | grep -v "$(basename "$file")")
cp "$otherfile" "$file"
mv keep_want.txt want.txt
run cached.ini
has "its header names another key"
has "cache files: 0 read, 1 refused, 1 written"
run cached.ini
has "$again"

# a cache that cannot be written costs the next start, not this one
run unwritable.ini
has "cache: keeping '$backend''s $kind in .*failed"
grep -qE 'cache files: .*[1-9]' out.txt && fail "an unwritable cache read, refused or wrote a file"

status=0
"$berth" run badkey.ini > out.txt 2>&1 || status=$?
cat out.txt
[ "$status" -ne 0 ] || fail "an unknown [cache] key was accepted"
has "badkey.ini:9: \[cache\]: unknown key 'size' \(expected dir\)"
echo "check_cache: ok"
