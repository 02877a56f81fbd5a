"""Folding at conversion time: Constant nodes, and shape arithmetic whose
inputs are all known (initializers, Constants, static shapes). What is
folded here never reaches the .webnn file; what depends on a dynamic dim
is left as nodes the engine folds per bucket."""
import numpy as np
import onnx

from . import ops_signal
from .core import FOLD_MAX, DTYPES, Unsupported, attrs_of, tensor_value


def _constant(cv, node, a):
    if "value" in a:
        return tensor_value(a["value"])
    if "sparse_value" in a:
        raise Unsupported("sparse_value constants are not supported")
    for key, dt in (("value_float", np.float32), ("value_floats", np.float32),
                    ("value_int", np.int64), ("value_ints", np.int64)):
        if key in a:
            return np.array(a[key], dtype=dt)
    raise Unsupported("Constant with attribute %s is not supported" % sorted(a))


def _axes(a, ins, idx):
    if "axes" in a:
        return [int(x) for x in a["axes"]]
    if len(ins) > idx and ins[idx] is not None:
        return [int(x) for x in ins[idx].reshape(-1)]
    return None


def _slice(x, ins, a):
    if len(ins) == 1:  # opset < 10: attributes
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
    else:
        starts, ends = ins[1], ins[2]
        axes = ins[3] if len(ins) > 3 else None
        steps = ins[4] if len(ins) > 4 else None
    starts = [int(s) for s in np.reshape(starts, -1)]
    ends = [int(e) for e in np.reshape(ends, -1)]
    axes = list(range(len(starts))) if axes is None else [int(v) for v in np.reshape(axes, -1)]
    steps = [1] * len(starts) if steps is None else [int(v) for v in np.reshape(steps, -1)]
    sl = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        sl[ax % x.ndim] = slice(s, e, st)
    return x[tuple(sl)]


def _gather(x, i, a):
    return np.take(x, i.astype(np.int64), axis=a.get("axis", 0))


def _cast(x, a):
    to = a["to"]
    if to not in DTYPES:
        raise Unsupported("Cast to %s" % onnx.TensorProto.DataType.Name(to))
    return x.astype(DTYPES[to][1])


def _reshape(x, s, a):
    s = [int(v) for v in s]
    if not a.get("allowzero", 0):
        s = [x.shape[k] if v == 0 else v for k, v in enumerate(s)]
    return x.reshape(s)


def _squeeze(x, ins, a):
    axes = _axes(a, ins, 1)
    return np.squeeze(x) if axes is None else np.squeeze(x, axis=tuple(axes))


def _unsqueeze(x, ins, a):
    axes = sorted(v % (x.ndim + len(_axes(a, ins, 1))) for v in _axes(a, ins, 1))
    for ax in axes:
        x = np.expand_dims(x, ax)
    return x


def _const_of_shape(ins, a):
    val = tensor_value(a["value"]) if "value" in a else np.zeros(1, np.float32)
    return np.full([int(v) for v in ins[0]], val.reshape(-1)[0], dtype=val.dtype)


def _div(x, y):
    if x.dtype.kind in "iu":
        return (np.trunc(x / y)).astype(x.dtype)
    return x / y


_FOLD = {
    "Identity": lambda ins, a: ins[0],
    "Gather": lambda ins, a: _gather(ins[0], ins[1], a),
    "Concat": lambda ins, a: np.concatenate(ins, axis=a["axis"]),
    "Slice": lambda ins, a: _slice(ins[0], ins, a),
    "Unsqueeze": lambda ins, a: _unsqueeze(ins[0], ins, a),
    "Squeeze": lambda ins, a: _squeeze(ins[0], ins, a),
    "Cast": lambda ins, a: _cast(ins[0], a),
    "Reshape": lambda ins, a: _reshape(ins[0], ins[1], a),
    "Add": lambda ins, a: ins[0] + ins[1],
    "Sub": lambda ins, a: ins[0] - ins[1],
    "Mul": lambda ins, a: ins[0] * ins[1],
    "Div": lambda ins, a: _div(ins[0], ins[1]),
    "Neg": lambda ins, a: -ins[0],
    "Equal": lambda ins, a: ins[0] == ins[1],
    "Less": lambda ins, a: ins[0] < ins[1],
    "Greater": lambda ins, a: ins[0] > ins[1],
    "Not": lambda ins, a: np.logical_not(ins[0]),
    "Where": lambda ins, a: np.where(ins[0], ins[1], ins[2]),
    "Max": lambda ins, a: np.maximum.reduce(ins),
    "Min": lambda ins, a: np.minimum.reduce(ins),
    "ConstantOfShape": lambda ins, a: _const_of_shape(ins, a),
    "Range": lambda ins, a: np.arange(ins[0], ins[1], ins[2]).astype(ins[0].dtype),
    "Expand": lambda ins, a: ins[0] * np.ones([int(v) for v in ins[1]], dtype=ins[0].dtype),
    "Transpose": lambda ins, a: np.transpose(ins[0], a.get("perm")),
    "HannWindow": lambda ins, a: ops_signal.window("HannWindow", ins[0], a),
    "HammingWindow": lambda ins, a: ops_signal.window("HammingWindow", ins[0], a),
    "BlackmanWindow": lambda ins, a: ops_signal.window("BlackmanWindow", ins[0], a),
    "MelWeightMatrix": ops_signal.mel_weight_matrix,
}


# Ops whose output is folded from their inputs' values (Shape and Size,
# which read only a static shape, are not among them).
FOLDABLE = set(_FOLD)


# Partial values: small integer tensors of shape arithmetic with some
# elements known and others (a dynamic dim) not, as numpy object arrays
# holding ints and None. They let a test of a static dim of a tensor
# whose other dims are dynamic (Equal(Gather(Shape(x), 1), 1), as
# exporters write around squeezes) fold, and a Reshape to a computed
# shape keep the dims it can know.
PARTIAL_MAX = 64
# Ops whose output elements are copies of their first input's.
_MOVE = {"Identity", "Gather", "Concat", "Slice", "Unsqueeze", "Squeeze", "Reshape", "Cast", "Transpose", "Expand"}
_ELEMENTWISE = {
    "Add": lambda x, y: x + y, "Sub": lambda x, y: x - y, "Mul": lambda x, y: x * y,
    "Div": lambda x, y: int(x / y) if y else None, "Max": max, "Min": min,
    "Equal": lambda x, y: x == y, "Less": lambda x, y: x < y, "Greater": lambda x, y: x > y,
    "Neg": lambda x: -x, "Not": lambda x: not x,
}
_COMPARE = {"Equal", "Less", "Greater", "Not"}


def partial(cv, name):
    """`name` as an object array of ints and None, or None when nothing of
    it is known."""
    if name in cv.consts:
        v = cv.consts[name]
        if v.dtype.kind not in "iub" or v.size > PARTIAL_MAX:
            return None
        return np.array(v.tolist(), dtype=object).reshape(v.shape)
    return cv.partial.get(name)


def _store_partial(cv, node, out, dtype):
    out = np.asarray(out, dtype=object)
    if out.size > PARTIAL_MAX:
        return False
    if all(x is not None for x in out.reshape(-1)):
        cv.consts[node.output[0]] = np.array(out.tolist(), dtype=dtype).reshape(out.shape)
        return True
    cv.partial[node.output[0]] = out
    return False


def _try_partial(cv, node, a):
    """Propagates partial values; True when the result is wholly known
    (the node is folded), False otherwise."""
    op = node.op_type
    if op == "Shape":
        d = cv.dims(node.input[0])
        if d is None:
            return False
        r = len(d)
        lo, hi = a.get("start", 0), a.get("end", r)
        return _store_partial(cv, node, np.array(d[lo:hi], dtype=object), np.int64)
    if op in _MOVE:
        ins = [partial(cv, n) if n else None for n in node.input]
        if ins[0] is None or (op == "Concat" and any(x is None for x in ins)):
            return False
        if op != "Concat" and any(x is None for n, x in zip(node.input[1:], ins[1:]) if n):
            return False  # indices, axes and shapes must be wholly known
        rest = [None if x is None else np.array(x.tolist()) for x in ins[1:]]
        if op == "Cast":
            if a["to"] not in DTYPES or DTYPES[a["to"]][1].kind not in "iub":
                return False
            return _store_partial(cv, node, ins[0], DTYPES[a["to"]][1])
        try:
            out = _FOLD[op]([ins[0]] + (ins[1:] if op == "Concat" else rest), a)
        except Exception:
            return False
        return _store_partial(cv, node, out, cv.np_dtype(node.input[0]) if node.input[0] in cv.consts
                              else np.int64)
    if op in _ELEMENTWISE:
        ins = [partial(cv, n) for n in node.input]
        if any(x is None for x in ins):
            return False
        f = _ELEMENTWISE[op]
        g = np.frompyfunc(lambda *v: None if any(x is None for x in v) else f(*v), len(ins), 1)
        try:
            out = g(*ins)
        except Exception:
            return False
        return _store_partial(cv, node, out, np.bool_ if op in _COMPARE else np.int64)
    return False


def try_fold(cv, node):
    """Folds `node` when everything it reads is known; returns True if so."""
    op = node.op_type
    a = attrs_of(node)
    if op == "Constant":
        cv.consts[node.output[0]] = np.asarray(_constant(cv, node, a))
        return True
    if op in ("Shape", "Size"):
        d = cv.dims(node.input[0])
        if d is None or any(x is None for x in d):
            return op == "Shape" and _try_partial(cv, node, a)
        if op == "Size":
            cv.consts[node.output[0]] = np.array(int(np.prod(d)), dtype=np.int64)
            return True
        lo, hi = a.get("start", 0), a.get("end", len(d))
        cv.consts[node.output[0]] = np.array(d, dtype=np.int64)[lo:hi]
        return True
    if op not in _FOLD:
        return op in _ELEMENTWISE and _try_partial(cv, node, a)
    ins = []
    for name in node.input:
        if not name:
            ins.append(None)
            continue
        val = cv.known(name)
        if val is None:
            return _try_partial(cv, node, a)
        ins.append(val)
    if op == "Range" and any(np.asarray(x).size != 1 for x in ins):
        return False
    try:
        out = np.asarray(_FOLD[op](ins, a))
    except Unsupported:
        raise
    except Exception:  # leave it to the handler, which reports precisely
        return False
    if out.size > FOLD_MAX:
        return False
    if out.dtype == np.float64:
        out = out.astype(np.float32)
    cv.consts[node.output[0]] = out
    return True
