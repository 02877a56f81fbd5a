#!/usr/bin/python3
"""gen_bert.py OUT.onnx [--layers N] [--hidden H] [--heads A] [--ffn F]
                        [--vocab V] [--max-pos P] [--seed S]

Writes a BERT-style encoder as ONNX (opset 17), weights drawn from a
fixed seed so every run of `make bench` measures the same model:
inputs input_ids and attention_mask, both int64 [batch, seq]; output
last_hidden_state, float32 [batch, seq, hidden]. Each layer is spelled
with the primitives an exporter writes (MatMul + Add, Reshape and
Transpose into heads, Softmax over masked scores, erf GELU,
LayerNormalization), so both runtimes see the graph a real BERT export
gives them rather than one pre-fused for either."""
import argparse
import math
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, stem):
        self.count += 1
        return "%s_%d" % (stem, self.count)

    def const(self, stem, array):
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), n))
        return n

    def weight(self, stem, shape, std=0.02):
        # drawn in float32 directly: half the memory and time of float64
        return self.const(stem, (self.rng.standard_normal(size=shape, dtype=np.float32) * np.float32(std)))

    def op(self, op_type, inputs, stem=None, **attrs):
        out = self.name(stem or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def linear(self, x, n_in, n_out, stem):
        w = self.weight(stem + "_w", (n_in, n_out))
        b = self.weight(stem + "_b", (n_out,))
        return self.op("Add", [self.op("MatMul", [x, w], stem + "_mm"), b], stem)

    def layer_norm(self, x, hidden, stem):
        # gamma near 1 and beta near 0, not exactly, so a wrong
        # broadcast would change the output
        g = self.const(stem + "_g", (1.0 + self.rng.standard_normal(hidden, dtype=np.float32) * np.float32(0.02)))
        b = self.weight(stem + "_b", (hidden,))
        return self.op("LayerNormalization", [x, g, b], stem, axis=-1, epsilon=1e-12)


def encoder_layer(bld, x, mask, a, i):
    h, heads = a.hidden, a.heads
    dh = h // heads
    split = bld.const("split_heads", np.array([0, 0, heads, dh], np.int64))
    q = bld.linear(x, h, h, "l%d_q" % i)
    k = bld.linear(x, h, h, "l%d_k" % i)
    v = bld.linear(x, h, h, "l%d_v" % i)
    q = bld.op("Transpose", [bld.op("Reshape", [q, split])], perm=[0, 2, 1, 3])
    k = bld.op("Transpose", [bld.op("Reshape", [k, split])], perm=[0, 2, 3, 1])
    v = bld.op("Transpose", [bld.op("Reshape", [v, split])], perm=[0, 2, 1, 3])
    scale = bld.const("scale", np.array(1.0 / math.sqrt(dh), np.float32))
    scores = bld.op("Add", [bld.op("Mul", [bld.op("MatMul", [q, k]), scale]), mask])
    probs = bld.op("Softmax", [scores], axis=-1)
    ctx = bld.op("Transpose", [bld.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    merge = bld.const("merge_heads", np.array([0, 0, h], np.int64))
    ctx = bld.op("Reshape", [ctx, merge])
    attn = bld.linear(ctx, h, h, "l%d_o" % i)
    x = bld.layer_norm(bld.op("Add", [attn, x]), h, "l%d_ln1" % i)
    up = bld.linear(x, h, a.ffn, "l%d_up" % i)
    # GELU as BERT computes it: x * 0.5 * (1 + erf(x / sqrt(2)))
    inv_sqrt2 = bld.const("inv_sqrt2", np.array(1.0 / math.sqrt(2.0), np.float32))
    one = bld.const("one", np.array(1.0, np.float32))
    half = bld.const("half", np.array(0.5, np.float32))
    erf = bld.op("Erf", [bld.op("Mul", [up, inv_sqrt2])])
    gelu = bld.op("Mul", [bld.op("Mul", [up, half]), bld.op("Add", [erf, one])])
    down = bld.linear(gelu, a.ffn, h, "l%d_down" % i)
    return bld.layer_norm(bld.op("Add", [down, x]), h, "l%d_ln2" % i)


def build(a):
    if a.hidden % a.heads:
        raise ValueError("hidden %d is not a multiple of heads %d" % (a.hidden, a.heads))
    bld = Builder(np.random.default_rng(a.seed))
    h = a.hidden
    words = bld.weight("word_embeddings", (a.vocab, h))
    positions = bld.weight("position_embeddings", (a.max_pos, h))
    token_type = bld.weight("token_type_embedding", (h,))
    # positions 0..seq-1 as a running count of ones shaped like the ids,
    # the way RoBERTa's exporters derive them: elementwise ops only, so
    # one graph serves every sequence bucket
    ones = bld.op("Add", [bld.op("Mul", [bld.op("Cast", ["input_ids"], to=TensorProto.FLOAT),
                                         bld.const("zero_f", np.array(0.0, np.float32))]),
                          bld.const("one_f", np.array(1.0, np.float32))])
    count = bld.op("CumSum", [ones, bld.const("axis1", np.array(1, np.int64))])
    pos_ids = bld.op("Cast", [bld.op("Sub", [count, bld.const("one_f", np.array(1.0, np.float32))])],
                     to=TensorProto.INT64)
    pos = bld.op("Gather", [positions, pos_ids], axis=0)
    emb = bld.op("Add", [bld.op("Add", [bld.op("Gather", [words, "input_ids"], axis=0), pos]), token_type])
    x = bld.layer_norm(emb, h, "emb_ln")
    # masked keys get -10000 added to their scores, as BERT does
    m = bld.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    m = bld.op("Mul", [bld.op("Sub", [bld.const("one_f", np.array(1.0, np.float32)), m]),
                       bld.const("neg", np.array(-10000.0, np.float32))])
    mask = bld.op("Unsqueeze", [m, bld.const("axes12", np.array([1, 2], np.int64))])
    for i in range(a.layers):
        x = encoder_layer(bld, x, mask, a, i)
    bld.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state"))
    dims = ["batch", "seq"]
    graph = helper.make_graph(
        bld.nodes, a.name,
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, dims),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dims)],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [h])],
        bld.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="berth bench/gen_bert.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--hidden", type=int, default=384)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--ffn", type=int, default=1536)
    p.add_argument("--vocab", type=int, default=30522)
    p.add_argument("--max-pos", type=int, default=512)
    p.add_argument("--seed", type=int, default=9)
    p.add_argument("--name", default="bert")
    a = p.parse_args(argv)
    try:
        model = build(a)
    except ValueError as e:
        print("gen_bert: %s" % e, file=sys.stderr)
        return 2
    tmp = a.out + ".tmp"
    onnx.save(model, tmp)
    import os
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
