"""A fallback for ONNX shape inference: the dtype, rank and whatever dims
are static of a node's outputs, for the values ONNX's own inference left
without a shape (it stops at a Reshape whose target is computed, which
exported detectors and recognizers do everywhere). Dims are ints, or None
when only the bucket knows them."""
import numpy as np
import onnx

from .core import attrs_of

T = onnx.TensorProto

_SAME = {"Relu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Exp", "Log", "Abs", "Neg", "Reciprocal", "Floor",
         "Ceil", "Sin", "Cos", "Sign", "Identity", "Softplus", "Softsign", "HardSwish", "HardSigmoid",
         "LeakyRelu", "Elu", "PRelu", "Clip", "Softmax", "LogSoftmax", "Dropout", "BatchNormalization",
         "LayerNormalization", "InstanceNormalization", "CumSum", "Trilu", "Not", "Cast", "CastLike",
         "Selu", "Celu", "ThresholdedRelu", "Shrink", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Tan",
         "IsNaN", "IsInf", "ScatterElements", "Scatter", "QuantizeLinear", "DequantizeLinear"}
_BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Greater",
              "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor"}
_BOOL_OUT = {"IsNaN", "IsInf", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "Not"}


def _bcast(shapes):
    if any(s is None for s in shapes):
        return None
    r = max(len(s) for s in shapes)
    out = []
    for i in range(r):
        ds = [s[i - (r - len(s))] for s in shapes if i >= r - len(s)]
        known = [d for d in ds if d is not None and d != 1]
        if known:
            out.append(known[0])
        elif all(d == 1 for d in ds):
            out.append(1)
        else:
            out.append(None)
    return out


def _ints(cv, node, i):
    if i >= len(node.input) or not node.input[i]:
        return None
    v = cv.known(node.input[i])
    return None if v is None else [int(x) for x in v.reshape(-1)]


def _dims(cv, node):
    op = node.op_type
    a = attrs_of(node)
    d0 = cv.dims(node.input[0]) if node.input and node.input[0] else None
    if op in _SAME:
        return d0
    if op in _BROADCAST:
        return _bcast([cv.dims(n) for n in node.input if n])
    if d0 is None:
        return None
    r = len(d0)
    if op == "MatMul":
        b = cv.dims(node.input[1])
        if b is None:
            return None
        a2, b2 = (d0 if r > 1 else [1] + d0), (b if len(b) > 1 else b + [1])
        batch = _bcast([a2[:-2], b2[:-2]])
        return (batch or []) + ([a2[-2]] if r > 1 else []) + ([b2[-1]] if len(b) > 1 else [])
    if op == "Gemm":
        b = cv.dims(node.input[1])
        m = d0[1] if a.get("transA", 0) else d0[0]
        n = None if b is None else (b[0] if a.get("transB", 0) else b[1])
        return [m, n]
    if op == "Transpose":
        perm = a.get("perm", list(range(r))[::-1])
        return [d0[p] for p in perm]
    if op == "Reshape":
        s = [int(v) for v in a["shape"]] if "shape" in a else _ints(cv, node, 1)
        if s is None:
            n = cv.dims(node.input[1])
            return None if not n or n[0] is None else [None] * n[0]
        out = [d0[k] if v == 0 and not a.get("allowzero", 0) and k < r else v for k, v in enumerate(s)]
        out = [None if v == -1 else v for v in out]
        if out.count(None) == 1 and None not in d0:
            known = int(np.prod([v for v in out if v is not None]))
            if known:
                out[out.index(None)] = int(np.prod(d0)) // known
        return out
    if op == "Flatten":
        ax = a.get("axis", 1) % (r + 1) if r else 0
        lead, tail = d0[:ax], d0[ax:]
        return [int(np.prod(lead)) if None not in lead else None, int(np.prod(tail)) if None not in tail else None]
    if op in ("Unsqueeze", "Squeeze"):
        axes = a.get("axes") if cv.opset < 13 else _ints(cv, node, 1)
        if op == "Squeeze":
            if axes is None:
                return None if None in d0 else [d for d in d0 if d != 1]
            axes = {x % r for x in axes}
            return [d for k, d in enumerate(d0) if k not in axes]
        if axes is None:
            return None
        n = r + len(axes)
        axes = {x % n for x in axes}
        it = iter(d0)
        return [1 if k in axes else next(it) for k in range(n)]
    if op == "Concat":
        ax = a.get("axis", 1) % r
        out = list(d0)
        for n in node.input[1:]:
            dn = cv.dims(n)
            out[ax] = None if dn is None or out[ax] is None or dn[ax] is None else out[ax] + dn[ax]
        return out
    if op == "Split":
        return [d if k != a.get("axis", 0) % r else None for k, d in enumerate(d0)]
    if op == "Slice":
        out = list(d0)
        if cv.opset < 10:
            starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
        else:
            starts, ends = _ints(cv, node, 1), _ints(cv, node, 2)
            axes, steps = _ints(cv, node, 3), _ints(cv, node, 4)
        if starts is None or ends is None:
            return [None] * r
        axes = list(range(len(starts))) if axes is None else axes
        steps = [1] * len(starts) if steps is None else steps
        for s, e, ax, st in zip(starts, ends, axes, steps):
            n = out[ax % r]
            if n is None or st < 1:
                out[ax % r] = None
                continue
            s, e = (s + n if s < 0 else s), (e + n if e < 0 else e)
            s, e = min(max(s, 0), n), min(max(e, 0), n)
            out[ax % r] = max(0, (e - s + st - 1) // st)
        return out
    if op == "Gather":
        idx = cv.dims(node.input[1])
        ax = a.get("axis", 0) % r
        return None if idx is None else d0[:ax] + idx + d0[ax + 1:]
    if op == "Shape":
        return [r]
    if op == "Size":
        return []
    if op.startswith("Reduce"):
        axes = a.get("axes") if "axes" in a else _ints(cv, node, 1)
        keep = a.get("keepdims", 1)
        axes = set(range(r)) if not axes else {x % r for x in axes}
        return [1 if k in axes else d for k, d in enumerate(d0) if keep or k not in axes]
    if op in ("ArgMax", "ArgMin"):
        ax = a.get("axis", 0) % r
        return [1 if k == ax else d for k, d in enumerate(d0) if a.get("keepdims", 1) or k != ax]
    if op in ("GlobalAveragePool", "GlobalMaxPool"):
        return d0[:2] + [1] * (r - 2)
    if op in ("Conv", "ConvTranspose"):
        w = cv.dims(node.input[1])
        ch = None if w is None else (w[0] if op == "Conv" else (w[1] * a.get("group", 1) if w[1] else None))
        return [d0[0], ch] + [None] * (r - 2)
    if op in ("MaxPool", "AveragePool", "LpPool", "Resize", "Upsample"):
        return d0[:2] + [None] * (r - 2)
    if op in ("Pad", "Tile", "DepthToSpace", "SpaceToDepth"):
        return [None] * r
    if op == "Expand":
        s = _ints(cv, node, 1)
        n = cv.dims(node.input[1])
        if s is not None:
            return _bcast([d0, [None if v == 1 else v for v in s]]) if s else d0
        return None if not n or n[0] is None else [None] * max(r, n[0])
    return None


def _elem(cv, node):
    op = node.op_type
    if op in _BOOL_OUT:
        return T.BOOL
    if op == "Cast":
        to = attrs_of(node)["to"]
        return onnx.TensorProto.DataType.Value(to.upper()) if isinstance(to, str) else to
    if op == "CastLike":
        return cv.elem_type(node.input[1])
    if op in ("Shape", "Size", "ArgMax", "ArgMin"):
        return T.INT64
    if op == "Where":
        return cv.elem_type(node.input[1])
    if op == "QuantizeLinear":
        return cv.elem_type(node.input[2]) if len(node.input) > 2 and node.input[2] else T.UINT8
    if op == "DequantizeLinear":
        return T.FLOAT
    return cv.elem_type(node.input[0]) if node.input and node.input[0] else None


def fill(cv, node):
    """Records the dtype and dims of node's outputs where ONNX gave none."""
    for o in node.output:
        if not o:
            continue
        et, dims = cv.info.get(o, (None, None))
        if et is not None and dims is not None and all(isinstance(d, int) for d in dims):
            continue
        try:
            nd = _dims(cv, node)
            ne = _elem(cv, node) if et is None else et
        except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
            nd, ne = None, et
        if dims is not None:  # ONNX's rank wins; its static dims too
            if nd is not None and len(nd) == len(dims):
                dims = [d if isinstance(d, int) else (nd[k] if nd[k] is not None else d)
                        for k, d in enumerate(dims)]
            nd = dims
        cv.info[o] = (ne, nd)
