#!/bin/sh
# split = on's cost model on a network of 50 hardswish blocks, each
# written x * clamp(x + 3, 0, 6) / 6 after a product, with a module that
# runs every op but div ahead of cpu in `use`:
#  - split = first (each node on the first backend that runs it) gives
#    101 subgraphs: every div crosses to cpu and back;
#  - split = on gives a handful, and --explain shows the estimate of both;
#  - both give cpu's outputs to the bit.
#
#   check_split_cost.sh BERTH LACKING_MODULE WEIGHTS DIR
set -eu
berth=$1 lacking=$2 weights=$3 dir=$4
fail() { echo "check_split_cost: $*" >&2; exit 1; }
mkdir -p "$dir"
{
    echo 'webnn_graph "blocks" v2 {'
    echo '  inputs { x: f32[dyn("rows", 64), 4]; }'
    echo '  consts {'
    echo '    w1: f32[4, 8] @weights("layer1.weight");'
    echo '    w2: f32[8, 3] @weights("layer2.weight");'
    echo '    m: f32[8, 8] @scalar(0.22);'
    echo '    three: f32[1] @scalar(3);'
    echo '    six: f32[1] @scalar(6);'
    echo '  }'
    echo '  nodes {'
    echo '    h0 = matmul(x, w1);'
    i=1
    while [ $i -le 50 ]; do
        p=$((i - 1))
        echo "    p$i = matmul(h$p, m); a$i = add(p$i, three); r$i = clamp(a$i, minValue=0, maxValue=6);"
        echo "    q$i = mul(p$i, r$i); h$i = div(q$i, six);"
        i=$((i + 1))
    done
    echo '    y = matmul(h50, w2);'
    echo '  }'
    echo '  outputs { y; }'
    echo '}'
} > "$dir/blocks.webnn"
for mode in first on cpu; do
    use="$lacking, cpu" split="split = $mode"
    [ $mode = cpu ] && use=cpu split=""
    printf '[model]\ngraph = blocks.webnn\nweights = %s\nstage = rows\n[backend]\nuse = %s\n%s\n[buckets]\nrows = rows=64\n' \
        "$weights" "$use" "$split" > "$dir/$mode.ini"
done
first=$("$berth" run "$dir/first.ini" --repeat 2 --explain) || fail "split = first failed: $first"
on=$("$berth" run "$dir/on.ini" --repeat 2 --explain) || fail "split = on failed: $on"
cpu=$("$berth" run "$dir/cpu.ini" --repeat 2) || fail "cpu alone failed: $cpu"
count() { echo "$1" | sed -n 's/.*explain bucket rows=64: \([0-9]*\) subgraphs\{0,1\},.*/\1/p'; }
n_first=$(count "$first") n_on=$(count "$on")
[ "$n_first" = 101 ] || fail "split = first: $n_first subgraphs, want 101: $first"
[ -n "$n_on" ] && [ "$n_on" -le 5 ] || fail "split = on: '$n_on' subgraphs, want 5 or fewer: $on"
echo "$on" | grep -q "by cost: estimated [0-9.]* ms a run .*would be 101 subgraphs, estimated [0-9.]* ms: [1-9][0-9]* runs\{0,1\} of [1-9][0-9]* nodes\{0,1\} moved" ||
    fail "split = on's --explain does not show the estimates: $on"
echo "$on" | grep -q "crossing in .* est [0-9.]* ms + [0-9.]* ms" || fail "no per-subgraph estimate: $on"
echo "$first" | grep -q "by cost" && fail "split = first printed a cost model"
sum() { echo "$1" | grep -o "fnv1a: [0-9a-f]*"; }
[ -n "$(sum "$cpu")" ] && [ "$(sum "$first")" = "$(sum "$cpu")" ] && [ "$(sum "$on")" = "$(sum "$cpu")" ] ||
    fail "outputs differ: first $(sum "$first"), on $(sum "$on"), cpu $(sum "$cpu")"
echo "ok: $n_first subgraphs node by node, $n_on by cost, outputs equal to cpu's"
echo "$on" | grep "by cost"
