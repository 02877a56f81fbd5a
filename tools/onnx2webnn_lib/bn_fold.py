"""BatchNormalization, and scales and shifts by constants, folded into
the convolution before them.

At inference BatchNormalization is y = (x - mean) * scale / sqrt(var + eps)
+ bias, an affine map per channel, so after a Conv whose weight and bias
are constants it can be folded into them (as onnxruntime does when it
creates a session): weight'[o] = weight[o] * s[o] and bias'[o] = (bias[o]
- mean[o]) * s[o] + B[o], with s = scale / sqrt(var + eps). The graph then
holds one conv2d with adjusted weights instead of a conv2d and a pass
over its output. Done only when the conv's output has no other reader
and is no graph output, every parameter is a float32 constant, and the
BatchNormalization is in inference form (one output).

A Mul by a constant of one value or one per output channel right after
such a Conv scales its weights and bias the same way, and an Add of one
likewise shifts its bias (PaddleOCR's learnable affine after each
convolution): again one conv2d where there were three nodes."""
import numpy as np
import onnx
import onnx.numpy_helper

from .core import attrs_of


def _attr(node, name, default):
    return attrs_of(node).get(name, default)


def _constants(graph, consts):
    """consts plus the values of Constant nodes (exporters write weights
    either way); the walk folds those nodes itself later."""
    known = dict(consts)
    for n in graph.node:
        if n.op_type == "Constant" and len(n.output) == 1:
            v = _attr(n, "value", None)
            if v is not None:
                known[n.output[0]] = onnx.numpy_helper.to_array(v)
    return known


class _Index:
    """Who reads and who writes each value of a graph, kept current while
    a fold moves a node's output onto the conv before it."""

    def __init__(self, graph):
        self.graph = graph
        self.readers = {}
        for n in graph.node:
            for i in n.input:
                self.readers[i] = self.readers.get(i, 0) + 1
        self.outputs = {o.name for o in graph.output}
        self.producer = {o: k for k, n in enumerate(graph.node) for o in n.output}

    def conv_feeding(self, name, known):
        """(the Conv writing `name`, its weight, its bias as float64 or
        zeros) when only one node reads `name`, it is no graph output and
        the weight and bias are float32 constants; else None."""
        c = self.producer.get(name)
        conv = self.graph.node[c] if c is not None else None
        if conv is None or conv.op_type != "Conv" or self.readers.get(name) != 1 or name in self.outputs:
            return None
        w = known.get(conv.input[1])
        b = known.get(conv.input[2]) if len(conv.input) > 2 and conv.input[2] else None
        if w is None or w.dtype != np.float32 or w.ndim < 3 or (b is not None and b.dtype != np.float32):
            return None
        if b is not None and b.size != w.shape[0]:
            return None
        return conv, w, b.astype(np.float64).reshape(-1) if b is not None else np.zeros(w.shape[0])

    def take_over(self, conv, node, w, b, consts, known):
        """conv gets weight w and bias b and writes node's output."""
        w_name, b_name = node.output[0] + "_folded_weight", node.output[0] + "_folded_bias"
        consts[w_name] = known[w_name] = w
        consts[b_name] = known[b_name] = b
        x = conv.input[0]
        del conv.input[:]
        conv.input.extend([x, w_name, b_name])
        self.producer[node.output[0]] = self.producer.pop(conv.output[0])
        conv.output[0] = node.output[0]


def _drop(graph, drop):
    if drop:
        kept = [onnx.NodeProto.FromString(n.SerializeToString()) for k, n in enumerate(graph.node) if k not in drop]
        del graph.node[:]
        graph.node.extend(kept)
    return len(drop)


def fold(graph, consts):
    """Rewrites graph.node in place; consts (name -> ndarray) gains the
    folded weights and biases. Returns how many were folded."""
    known = _constants(graph, consts)
    index = _Index(graph)
    drop = set()
    for k, bn in enumerate(graph.node):
        if bn.op_type != "BatchNormalization" or len([o for o in bn.output if o]) != 1 or len(bn.input) != 5:
            continue
        if _attr(bn, "training_mode", 0) or _attr(bn, "spatial", 1) != 1:
            continue
        found = index.conv_feeding(bn.input[0], known)
        params = [known.get(n) for n in bn.input[1:]]
        if found is None or any(p is None or p.dtype != np.float32 for p in params):
            continue
        conv, w, old_b = found
        scale, bias, mean, var = (p.astype(np.float64).reshape(-1) for p in params)
        o = w.shape[0]
        if any(p.size != o for p in (scale, bias, mean, var)):
            continue
        s = scale / np.sqrt(var + float(_attr(bn, "epsilon", 1e-5)))
        new_w = (w.astype(np.float64) * s.reshape((o,) + (1,) * (w.ndim - 1))).astype(np.float32)
        index.take_over(conv, bn, new_w, ((old_b - mean) * s + bias).astype(np.float32), consts, known)
        drop.add(k)
    return _drop(graph, drop)


def _per_channel(arr, o):
    """arr as o per-channel values, when it broadcasts over an NCHW conv
    output [N, o, H, W] as one value or one per channel; else None."""
    if arr is None or arr.dtype != np.float32:
        return None
    if arr.size == 1:
        return np.full(o, float(arr.reshape(-1)[0]))
    dims = list(arr.shape)
    while dims and dims[0] == 1 and len(dims) > 3:
        dims.pop(0)
    if arr.size == o and len(dims) == 3 and dims == [o, 1, 1]:
        return arr.astype(np.float64).reshape(-1)
    return None


def fold_affine(graph, consts):
    """Conv -> Mul(constant) -> Add(constant) chains folded into the conv,
    in place as fold() does. Returns how many Mul and Add nodes went."""
    known = _constants(graph, consts)
    index = _Index(graph)
    drop = set()
    for k, n in enumerate(graph.node):
        if n.op_type not in ("Mul", "Add") or len(n.input) != 2:
            continue
        for side in (0, 1):
            found = index.conv_feeding(n.input[side], known)
            if found is None or found[1].ndim != 4:
                continue
            conv, w, old_b = found
            o = w.shape[0]
            v = _per_channel(known.get(n.input[1 - side]), o)
            if v is None:
                continue
            if n.op_type == "Mul":
                new_w = (w.astype(np.float64) * v.reshape(o, 1, 1, 1)).astype(np.float32)
                new_b = (old_b * v).astype(np.float32)
            else:
                new_w, new_b = w, (old_b + v).astype(np.float32)
            index.take_over(conv, n, new_w, new_b, consts, known)
            drop.add(k)
            break
    return _drop(graph, drop)
