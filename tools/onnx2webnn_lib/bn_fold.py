"""BatchNormalization folded into the convolution before it.

At inference BatchNormalization is y = (x - mean) * scale / sqrt(var + eps)
+ bias, an affine map per channel, so after a Conv whose weight and bias
are constants it can be folded into them (as onnxruntime does when it
creates a session): weight'[o] = weight[o] * s[o] and bias'[o] = (bias[o]
- mean[o]) * s[o] + B[o], with s = scale / sqrt(var + eps). The graph then
holds one conv2d with adjusted weights instead of a conv2d and a pass
over its output. Done only when the conv's output has no other reader
and is no graph output, every parameter is a float32 constant, and the
BatchNormalization is in inference form (one output)."""
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
