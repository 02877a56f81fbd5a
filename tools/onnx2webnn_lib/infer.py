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
         "IsNaN", "IsInf", "ScatterElements", "Scatter", "QuantizeLinear", "DequantizeLinear", "Round",
         "Atan", "Asin", "Acos", "Hardmax", "LRN", "MeanVarianceNormalization", "ScatterND", "ReverseSequence",
         "Gelu", "Mish", "HardSwish"}
_BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Greater",
              "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "Mod", "BitShift"}
_CONTROL = {"If", "Loop", "Scan"}
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


def _shape_arg(cv, node, i):
    """A shape operand's elements: ints, None where only the bucket knows
    them (fold.py's partial values); None when nothing is known."""
    if i >= len(node.input) or not node.input[i]:
        return None
    v = cv.known(node.input[i])
    if v is not None:
        return [int(x) for x in v.reshape(-1)]
    p = cv.partial.get(node.input[i])
    return None if p is None else [None if x is None else int(x) for x in p.reshape(-1)]


def _floats(cv, node, i):
    if i >= len(node.input) or not node.input[i]:
        return None
    v = cv.known(node.input[i])
    return None if v is None else [float(x) for x in v.reshape(-1)]


def _windows(a, spatial, kernel, transposed):
    """Spatial output dims of a convolution or pooling window: ONNX's
    auto_pad, pads, strides, dilations, ceil_mode, and for a transposed
    convolution output_padding and output_shape."""
    n = len(spatial)
    if kernel is None or len(kernel) != n:
        return [None] * n
    strides = a.get("strides", [1] * n)
    dil = a.get("dilations", [1] * n)
    pads = a.get("pads", [0] * (2 * n))
    auto = a.get("auto_pad", "NOTSET")
    out = []
    for k in range(n):
        x = spatial[k]
        if x is None or kernel[k] is None:
            out.append(None)
            continue
        span = dil[k] * (kernel[k] - 1) + 1
        if transposed:
            if "output_shape" in a:
                out.append(int(a["output_shape"][-n + k]))
            elif auto in ("SAME_UPPER", "SAME_LOWER"):
                out.append(x * strides[k])
            else:
                opad = a.get("output_padding", [0] * n)[k]
                out.append(strides[k] * (x - 1) + opad + span - pads[k] - pads[k + n])
            continue
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            out.append(-(-x // strides[k]))
            continue
        total = x + (0 if auto == "VALID" else pads[k] + pads[k + n]) - span
        if a.get("ceil_mode", 0):
            o = -(-total // strides[k]) + 1
            # the last window must start inside the input or its leading pad
            if (o - 1) * strides[k] >= x + pads[k]:
                o -= 1
        else:
            o = total // strides[k] + 1
        out.append(o)
    return out


def _recurrent(cv, node, a, d0):
    """Y, Y_h (and LSTM's Y_c) of RNN, GRU, LSTM."""
    layout, H = a.get("layout", 0), a.get("hidden_size")
    ndir = 2 if a.get("direction", "forward") == "bidirectional" else 1
    seq, batch = (d0[1], d0[0]) if layout else (d0[0], d0[1])
    y = [batch, seq, ndir, H] if layout else [seq, ndir, batch, H]
    state = [batch, ndir, H] if layout else [ndir, batch, H]
    return [y, state, state]


def outputs_dims(cv, node):
    """Dims of every output of `node` (a list per output, or None)."""
    op = node.op_type
    n = len(node.output)
    if op in ("RNN", "GRU", "LSTM"):
        d0 = cv.dims(node.input[0])
        return [None] * n if d0 is None else _recurrent(cv, node, attrs_of(node), d0)[:n]
    if op == "Split":
        a = attrs_of(node)
        d0 = cv.dims(node.input[0])
        if d0 is None:
            return [None] * n
        ax = a.get("axis", 0) % len(d0)
        sizes = a.get("split") if "split" in a else _ints(cv, node, 1)
        if sizes is None and d0[ax] is not None and d0[ax] % n == 0:
            sizes = [d0[ax] // n] * n
        if sizes is None:
            return [[d if k != ax else None for k, d in enumerate(d0)]] * n
        return [[d if k != ax else int(sizes[i]) for k, d in enumerate(d0)] for i in range(n)]
    if op == "Dropout":
        d = _dims(cv, node)
        return [d, d][:n]
    if op == "LayerNormalization":
        d0 = cv.dims(node.input[0])
        if d0 is None:
            return [None] * n
        ax = attrs_of(node).get("axis", -1) % len(d0)
        return [d0, d0[:ax] + [1] * (len(d0) - ax), d0[:ax] + [1] * (len(d0) - ax)][:n]
    if op == "DynamicQuantizeLinear":
        return [cv.dims(node.input[0]), [], []][:n]
    if op == "SoftmaxCrossEntropyLoss":
        return [_dims(cv, node), cv.dims(node.input[0])][:n]
    return [_dims(cv, node)] + [_dims(cv, node) if op in ("TopK", "MaxPool") else None] * (n - 1)


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
    if op in ("MatMul", "MatMulInteger", "QLinearMatMul"):
        b = cv.dims(node.input[3 if op == "QLinearMatMul" else 1])
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
        s = [int(v) for v in a["shape"]] if "shape" in a else _shape_arg(cv, node, 1)
        if s is None:
            n = cv.dims(node.input[1])
            return None if not n or n[0] is None else [None] * n[0]
        out = [d0[k] if v == 0 and not a.get("allowzero", 0) and k < r else v for k, v in enumerate(s)]
        infer_at = out.index(-1) if -1 in out else None
        out = [None if v == -1 else v for v in out]
        if infer_at is not None and out.count(None) == 1 and None not in d0:
            known = int(np.prod([v for v in out if v is not None]))
            if known:
                out[out.index(None)] = int(np.prod(d0)) // known
        return out
    if op == "Flatten":
        ax = a.get("axis", 1)
        ax = ax + r if ax < 0 else ax
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
        lo, hi = a.get("start", 0), a.get("end", r)
        lo, hi = (lo + r if lo < 0 else lo), (hi + r if hi < 0 else hi)
        return [max(0, min(hi, r) - min(max(lo, 0), r))]
    if op == "Size":
        return []
    if op.startswith("Reduce"):
        axes = a.get("axes") if "axes" in a else _ints(cv, node, 1)
        keep = a.get("keepdims", 1)
        if axes is not None and len(axes) == 0 and a.get("noop_with_empty_axes", 0):
            return d0
        axes = set(range(r)) if not axes else {x % r for x in axes}
        return [1 if k in axes else d for k, d in enumerate(d0) if keep or k not in axes]
    if op in ("ArgMax", "ArgMin"):
        ax = a.get("axis", 0) % r
        return [1 if k == ax else d for k, d in enumerate(d0) if a.get("keepdims", 1) or k != ax]
    if op in ("GlobalAveragePool", "GlobalMaxPool"):
        return d0[:2] + [1] * (r - 2)
    if op in ("Conv", "ConvTranspose", "ConvInteger", "QLinearConv"):
        w = cv.dims(node.input[3 if op == "QLinearConv" else 1])
        if op == "ConvTranspose":
            ch = None if w is None or w[1] is None else w[1] * a.get("group", 1)
        else:
            ch = None if w is None else w[0]
        kernel = a.get("kernel_shape") or (None if w is None else w[2:])
        return [d0[0], ch] + _windows(a, d0[2:], kernel, op == "ConvTranspose")
    if op in ("MaxPool", "AveragePool", "LpPool"):
        return d0[:2] + _windows(a, d0[2:], a["kernel_shape"], False)
    if op in ("Resize", "Upsample"):
        sizes = _ints(cv, node, 3) if op == "Resize" else None
        if sizes:
            return [int(v) for v in sizes]
        k = (2 if cv.opset >= 11 else 1) if op == "Resize" else 1
        scales = a.get("scales") if op == "Upsample" and "scales" in a else _floats(cv, node, k)
        if not scales:
            return [None] * r
        return [None if d is None else int(np.floor(d * sc + 1e-9)) for d, sc in zip(d0, scales)]
    if op == "Pad":
        pads = a.get("pads") if cv.opset < 11 else _ints(cv, node, 1)
        if pads is None:
            return [None] * r
        return [None if d is None else d + pads[k] + pads[k + r] for k, d in enumerate(d0)]
    if op == "Tile":
        reps = _shape_arg(cv, node, 1)
        return [None] * r if reps is None else [None if d is None or t is None else d * t for d, t in zip(d0, reps)]
    if op in ("DepthToSpace", "SpaceToDepth"):
        b = a["blocksize"]
        up = op == "DepthToSpace"
        ch = None if d0[1] is None else (d0[1] // (b * b) if up else d0[1] * b * b)
        return d0[:1] + [ch] + [None if d is None else (d * b if up else d // b) for d in d0[2:]]
    if op == "ConstantOfShape":
        return _shape_arg(cv, node, 0)
    if op == "TopK":
        k = _ints(cv, node, 1) if cv.opset >= 10 else [a["k"]]
        ax = a.get("axis", -1) % r
        return None if k is None else [k[0] if i == ax else d for i, d in enumerate(d0)]
    if op == "GatherElements":
        return cv.dims(node.input[1])
    if op in ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"):
        return cv.dims(node.input[1]) if a.get("reduction", "mean") == "none" else []
    if op == "GridSample":
        g = cv.dims(node.input[1])
        return None if g is None else d0[:2] + g[1:-1]
    if op == "OneHot":
        depth = _ints(cv, node, 1)
        if depth is None:
            return None
        ax = a.get("axis", -1)
        ax = ax + r + 1 if ax < 0 else ax
        return d0[:ax] + [depth[0]] + d0[ax:]
    if op == "GatherND":
        idx = cv.dims(node.input[1])
        b = a.get("batch_dims", 0)
        return None if idx is None or idx[-1] is None else idx[:-1] + d0[b + idx[-1]:]
    if op == "TfIdfVectorizer":
        return d0[:-1] + [max(a["ngram_indexes"]) + 1]
    if op == "Det":
        return d0[:-2]
    if op == "EyeLike":
        return d0
    if op == "RoiAlign":
        rois, c = cv.dims(node.input[1]), d0[1]
        return [None if rois is None else rois[0], c, a.get("output_height", 1), a.get("output_width", 1)]
    if op == "MaxUnpool":
        shape = _ints(cv, node, 2)
        if shape is not None:
            return shape
        k, st = a["kernel_shape"], a.get("strides", [1] * (r - 2))
        pads = a.get("pads", [0] * (2 * (r - 2)))
        return d0[:2] + [None if x is None else (x - 1) * st[i] + k[i] - pads[i] - pads[i + r - 2]
                         for i, x in enumerate(d0[2:])]
    if op == "DFT":
        ax = a.get("axis", 1) if cv.opset < 20 else None
        ax = ax % r
        n = _ints(cv, node, 1)
        n = n[0] if n else d0[ax]
        bins = None if n is None else (n // 2 + 1 if a.get("onesided", 0) else n)
        return [bins if k == ax else d for k, d in enumerate(d0[:-1])] + [2]
    if op == "STFT":
        step, win = _ints(cv, node, 1), cv.dims(node.input[2]) if cv.has(node, 2) else None
        length = _ints(cv, node, 3)
        fl = length[0] if length else (win[0] if win else None)
        if step is None or fl is None or d0[1] is None:
            return None
        return [d0[0], (d0[1] - fl) // step[0] + 1, fl // 2 + 1 if a.get("onesided", 1) else fl, 2]
    if op == "Expand":
        s = _shape_arg(cv, node, 1)
        n = cv.dims(node.input[1])
        if s is not None:
            return _bcast([d0, [None if v == 1 else v for v in s]]) if s else d0
        return None if not n or n[0] is None else [None] * max(r, n[0])
    return None


def _elem(cv, node, i=0):
    op = node.op_type
    if (op == "TopK" and i == 1) or (op == "MaxPool" and i == 1):
        return T.INT64
    if op == "Dropout" and i == 1:
        return T.BOOL
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
    if op in ("MatMulInteger", "ConvInteger"):
        return T.INT32
    if op in ("QLinearMatMul", "QLinearConv"):
        return cv.elem_type(node.input[7])
    if op == "ConstantOfShape":
        v = attrs_of(node).get("value")
        return v.data_type if v is not None else T.FLOAT
    return cv.elem_type(node.input[0]) if node.input and node.input[0] else None


def check(cv, name, ours):
    """Holds the converter's dims against ONNX's where ONNX has static
    ones: a dim both know must agree, and so must the rank."""
    theirs = cv.onnx_dims.get(name)
    if theirs is None:
        return
    cv.shape_checked += 1
    if ours is None:
        cv.shape_unknown.append((name, cv.node.op_type if cv.node is not None else "?"))
        return
    if len(ours) != len(theirs) or any(a is not None and a != b for a, b in zip(ours, theirs)):
        cv.shape_mismatch.append((name, theirs, ours))


def fill(cv, node):
    """Records the dtype and dims of node's outputs where ONNX gave none."""
    try:
        all_dims = outputs_dims(cv, node)
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        all_dims = [None] * len(node.output)
    for i, o in enumerate(node.output):
        if not o:
            continue
        nd = all_dims[i]
        if node.op_type not in _CONTROL:  # their handlers check (ops_control.py)
            check(cv, o, nd)
        et, dims = cv.info.get(o, (None, None))
        if et is not None and dims is not None and all(isinstance(d, int) for d in dims):
            continue
        try:
            ne = _elem(cv, node, i) if et is None else et
        except (KeyError, IndexError, TypeError, ValueError):
            ne = et
        if dims is not None:  # ONNX's rank wins; its static dims too
            if nd is not None and len(nd) == len(dims):
                dims = [d if isinstance(d, int) else (nd[k] if nd[k] is not None else d)
                        for k, d in enumerate(dims)]
            nd = dims
        cv.info[o] = (ne, nd)
