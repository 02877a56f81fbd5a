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
from onnx import helper


def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


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


def fold(graph, consts):
    """Rewrites graph.node in place; consts (name -> ndarray) gains the
    folded weights and biases. Returns how many were folded."""
    known = _constants(graph, consts)
    readers = {}
    for n in graph.node:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    outputs = {o.name for o in graph.output}
    producer = {o: k for k, n in enumerate(graph.node) for o in n.output}
    drop = set()
    for k, bn in enumerate(graph.node):
        if bn.op_type != "BatchNormalization" or len([o for o in bn.output if o]) != 1 or len(bn.input) != 5:
            continue
        if _attr(bn, "training_mode", 0) or _attr(bn, "spatial", 1) != 1:
            continue
        c = producer.get(bn.input[0])
        conv = graph.node[c] if c is not None else None
        if conv is None or conv.op_type != "Conv" or readers.get(bn.input[0]) != 1 or bn.input[0] in outputs:
            continue
        params = [known.get(n) for n in bn.input[1:]]
        w = known.get(conv.input[1])
        b = known.get(conv.input[2]) if len(conv.input) > 2 and conv.input[2] else None
        arrays = params + [w] + ([b] if b is not None else [])
        if any(p is None or p.dtype != np.float32 for p in arrays) or w.ndim < 3:
            continue
        scale, bias, mean, var = (p.astype(np.float64).reshape(-1) for p in params)
        o = w.shape[0]
        if any(p.size != o for p in (scale, bias, mean, var)) or (b is not None and b.size != o):
            continue
        s = scale / np.sqrt(var + float(_attr(bn, "epsilon", 1e-5)))
        new_w = (w.astype(np.float64) * s.reshape((o,) + (1,) * (w.ndim - 1))).astype(np.float32)
        old_b = b.astype(np.float64).reshape(-1) if b is not None else np.zeros(o)
        new_b = ((old_b - mean) * s + bias).astype(np.float32)
        w_name, b_name = bn.output[0] + "_folded_weight", bn.output[0] + "_folded_bias"
        consts[w_name], consts[b_name] = new_w, new_b
        x = conv.input[0]
        del conv.input[:]
        conv.input.extend([x, w_name, b_name])
        conv.output[0] = bn.output[0]
        drop.add(k)
    if drop:
        kept = [onnx.NodeProto.FromString(n.SerializeToString()) for k, n in enumerate(graph.node) if k not in drop]
        del graph.node[:]
        graph.node.extend(kept)
    return len(drop)


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
    folded = 0
    while True:
        readers = {}
        for n in graph.node:
            for i in n.input:
                readers[i] = readers.get(i, 0) + 1
        outputs = {o.name for o in graph.output}
        producer = {o: k for k, n in enumerate(graph.node) for o in n.output}
        hit = None
        for k, n in enumerate(graph.node):
            if n.op_type not in ("Mul", "Add") or len(n.input) != 2:
                continue
            for side in (0, 1):
                c = producer.get(n.input[side])
                if c is None or graph.node[c].op_type != "Conv" or readers.get(n.input[side]) != 1 \
                        or n.input[side] in outputs:
                    continue
                conv = graph.node[c]
                w = known.get(conv.input[1])
                if w is None or w.dtype != np.float32 or w.ndim != 4:
                    continue
                v = _per_channel(known.get(n.input[1 - side]), w.shape[0])
                if v is None:
                    continue
                hit = (k, c, v)
                break
            if hit:
                break
        if not hit:
            return folded
        k, c, v = hit
        node, conv = graph.node[k], graph.node[c]
        w = known[conv.input[1]]
        o = w.shape[0]
        b = known.get(conv.input[2]) if len(conv.input) > 2 and conv.input[2] else None
        old_b = b.astype(np.float64).reshape(-1) if b is not None else np.zeros(o)
        if node.op_type == "Mul":
            new_w = (w.astype(np.float64) * v.reshape(o, 1, 1, 1)).astype(np.float32)
            new_b = (old_b * v).astype(np.float32)
        else:
            new_w, new_b = w, (old_b + v).astype(np.float32)
        w_name, b_name = node.output[0] + "_folded_weight", node.output[0] + "_folded_bias"
        consts[w_name], consts[b_name] = new_w, new_b
        known[w_name], known[b_name] = new_w, new_b
        x = conv.input[0]
        del conv.input[:]
        conv.input.extend([x, w_name, b_name])
        conv.output[0] = node.output[0]
        kept = [onnx.NodeProto.FromString(n.SerializeToString()) for i, n in enumerate(graph.node) if i != k]
        del graph.node[:]
        graph.node.extend(kept)
        folded += 1
