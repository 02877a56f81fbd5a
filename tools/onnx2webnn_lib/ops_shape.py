"""Ops that move data: reshape and its kin, transpose, concat, split,
slice, gather, expand, tile, pad, shape. Shapes that depend on a dynamic
dim are spelled as shape()/slice/concat nodes the engine folds per
bucket."""
import numpy as np

from . import ops_composed
from . import quantize as weight_quant
from .core import Unsupported, attrs_of, registry, tensor_value

OPS, op = registry()


def _shape_operand(cv, node, i, what):
    """A shape input: a literal list when known, else its identifier (the
    engine folds it when it is host-known for the bucket)."""
    val = cv.known(node.input[i])
    if val is not None:
        return [int(v) for v in val.reshape(-1)]
    return cv.inp(node, i)


@op("Reshape")
def reshape(cv, node):
    """allowzero=0: a 0 in the shape copies the input's dim there."""
    a = attrs_of(node)
    x = cv.inp(node, 0)
    if "shape" in a:  # before opset 5 the shape is an attribute
        shape = [int(v) for v in a["shape"]]
    else:
        shape = _shape_operand(cv, node, 1, "shape")
    if isinstance(shape, list):
        if not a.get("allowzero", 0) and 0 in shape:
            shape = cv.assemble([cv.dim_piece(node.input[0], k) if v == 0 else v
                                 for k, v in enumerate(shape)], cv.out(node) + "_shape")
        cv.reshape(x, shape, out=cv.out(node))
        return
    if not a.get("allowzero", 0):
        # A computed shape may hold zeros only the bucket reveals: replace
        # them with the input's dims, which the engine folds too.
        n = cv.dims(node.input[1])
        if n is None or n[0] is None:
            raise Unsupported("the length of the computed shape '%s' is unknown" % node.input[1])
        r = cv.rank(node.input[0])
        sx = cv.shape_of(x)
        if n[0] < r:
            sx = cv.emit("slice", [sx], {"starts": [0], "sizes": [n[0]]}, hint=cv.out(node) + "_in_dims")
        elif n[0] > r:  # zeros past the input's rank stay zeros
            sx = cv.emit("concat", [[sx, cv.const(np.zeros([n[0] - r], np.int64), cv.out(node) + "_pad")]],
                         {"axis": 0}, hint=cv.out(node) + "_in_dims")
        zero = cv.const(np.zeros([1], np.int64), cv.out(node) + "_zero")
        if cv.np_dtype(node.input[1]) != np.int64:
            raise Unsupported("shape '%s' has dtype %s, expected int64" % (node.input[1], cv.np_dtype(node.input[1])))
        is0 = cv.emit("equal", [shape, zero], hint=cv.out(node) + "_is0")
        shape = cv.emit("where", [is0, sx, shape], hint=cv.out(node) + "_shape")
    cv.reshape(x, shape, out=cv.out(node))


@op("Flatten")
def flatten(cv, node):
    a = attrs_of(node)
    r = cv.rank(node.input[0])
    axis = int(a.get("axis", 1))
    axis = axis + r if axis < 0 else axis
    lead = cv.prod_piece(node.input[0], 0, axis, cv.out(node) + "_rows")
    tail = cv.prod_piece(node.input[0], axis, r, cv.out(node) + "_cols")
    if isinstance(lead, int) or isinstance(tail, int):
        shape = [lead if isinstance(lead, int) else -1, tail if isinstance(tail, int) else -1]
    else:
        shape = cv.assemble([lead, tail], cv.out(node) + "_shape")
    cv.reshape(cv.inp(node, 0), shape, out=cv.out(node))


@op("Transpose")
def transpose(cv, node):
    perm = attrs_of(node).get("perm")
    opts = {} if perm is None else {"permutation": [int(p) for p in perm]}
    cv.emit("transpose", [cv.inp(node, 0)], opts, outs=cv.out(node))


@op("Concat")
def concat(cv, node):
    ins = [cv.inp(node, i) for i in range(len(node.input)) if cv.has(node, i)]
    axis = int(attrs_of(node).get("axis", 1))  # optional, 1, before opset 4
    cv.emit("concat", [ins], {"axis": axis}, outs=cv.out(node))


@op("Split")
def split(cv, node):
    a = attrs_of(node)
    axis = int(a.get("axis", 0))
    if cv.opset >= 13:
        sizes = cv.known_input(node, 1, "split")
    else:
        sizes = a.get("split")
    outs = [cv.out(node, i) for i in range(len(node.output))]
    if any(not o for o in node.output):
        raise Unsupported("an unnamed output")
    if sizes is not None and len(sizes):
        splits = [int(s) for s in np.reshape(sizes, -1)]
    elif "num_outputs" in a:  # opset 18: the last part may be smaller
        d = cv.static_dims(node.input[0], "Split num_outputs")[axis]
        k = int(a["num_outputs"])
        part = -(-d // k)
        splits = [part] * (k - 1) + [d - part * (k - 1)]
        if splits[-1] < 0:
            raise Unsupported("num_outputs %d does not fit dim %d" % (k, d))
    else:
        splits = len(outs)
        d = cv.dims(node.input[0])
        if d is not None and d[axis] is not None and d[axis] % len(outs):
            raise Unsupported("dim %d of size %d does not split evenly into %d" % (axis, d[axis], len(outs)))
    cv.emit("split", [cv.inp(node, 0)], {"splits": splits, "axis": axis}, outs=outs)


def _slice_params(cv, node):
    a = attrs_of(node)
    if cv.opset < 10:
        starts, ends = a["starts"], a["ends"]
        axes, steps = a.get("axes"), None
    else:
        starts = cv.known_input(node, 1, "starts")
        ends = cv.known_input(node, 2, "ends")
        axes = cv.known_input(node, 3, "axes") if cv.has(node, 3) else None
        steps = cv.known_input(node, 4, "steps") if cv.has(node, 4) else None
    starts = [int(v) for v in np.reshape(starts, -1)]
    ends = [int(v) for v in np.reshape(ends, -1)]
    axes = list(range(len(starts))) if axes is None else [int(v) for v in np.reshape(axes, -1)]
    steps = [1] * len(starts) if steps is None else [int(v) for v in np.reshape(steps, -1)]
    return starts, ends, axes, steps


@op("Slice")
def slice_(cv, node):
    """ONNX clamps starts and ends into the dim; WebNN wants in-range
    starts and sizes. Static dims are clamped here; a dynamic dim sliced
    to its end gets its size from shape() so the engine folds it."""
    starts, ends, axes, steps = _slice_params(cv, node)
    r = cv.rank(node.input[0])
    d = cv.dims(node.input[0])
    if d is None:
        raise Unsupported("rank of '%s' is unknown" % node.input[0])
    st = [0] * r
    sz = [cv.dim_piece(node.input[0], i) for i in range(r)]
    stride = [1] * r
    big = 1 << 30
    x = cv.inp(node, 0)
    for s, e, ax, step in zip(starts, ends, axes, steps):
        ax %= r
        n = d[ax]
        if step == 0:
            raise Unsupported("step 0 on axis %d" % ax)
        if step < 0:
            # Backwards: the axis reversed (a gather of n-1..0), then the
            # same elements forwards.
            if n is None:
                raise Unsupported("a negative step on axis %d, whose size only the bucket knows" % ax)
            s = min(max(s + n if s < 0 else s, 0), n - 1)
            e = min(max(e + n if e < 0 else e, -1), n - 1)
            x = cv.emit("gather", [x, cv.const(np.arange(n - 1, -1, -1, dtype=np.int64), cv.out(node) + "_reversed")],
                        {"axis": ax}, hint=cv.out(node) + "_rev%d" % ax)
            st[ax], sz[ax], stride[ax] = n - 1 - s, max(s - e, 0), -step
            continue
        if n is None:
            # The bucket decides this dim: ONNX's clamping cannot be done
            # here, so a start or end past the dim is left for the engine,
            # whose slice rule rejects it with the node's name.
            e = None if e >= big else e
            stride[ax] = step
            if s < 0:
                st[ax] = _plus(cv, sz[ax], s, cv.out(node) + "_start")
            else:
                st[ax] = s
            if e is None:
                sz[ax] = -s if s < 0 else (_plus(cv, sz[ax], -s, cv.out(node) + "_size") if s else sz[ax])
            elif (e < 0) == (s < 0):
                sz[ax] = max(e - s, 0)
            elif e < 0:
                sz[ax] = _plus(cv, sz[ax], e - s, cv.out(node) + "_size")
            else:
                raise Unsupported("axis %d is dynamic: start %d from the end, end %d from the start" % (ax, s, e))
            continue
        s = s + n if s < 0 else s
        e = e + n if e < 0 else e
        s, e = min(max(s, 0), n), min(max(e, 0), n)
        st[ax] = s
        sz[ax] = max(e - s, 0)
        stride[ax] = step
    sizes = cv.assemble(sz, cv.out(node) + "_sizes")
    starts = cv.assemble(st, cv.out(node) + "_starts")
    opts = {"strides": stride} if any(v != 1 for v in stride) else {}
    if isinstance(sizes, list) and isinstance(starts, list):
        opts.update({"starts": starts, "sizes": sizes})
        cv.emit("slice", [x], opts, outs=cv.out(node))
        return
    # host-known operands at the positions of starts and sizes
    if isinstance(starts, list):
        starts = cv.const(np.array(starts, np.int64), cv.out(node) + "_starts")
    if isinstance(sizes, list):
        sizes = cv.const(np.array(sizes, np.int64), cv.out(node) + "_sizes")
    cv.emit("slice", [x, starts, sizes], opts, outs=cv.out(node))


def _plus(cv, piece, k, hint):
    """piece + k for an i64[1] identifier piece."""
    return cv.emit("add", [piece, cv.const(np.array([k], np.int64), hint + "_k")], hint=hint)


@op("Gather")
def gather(cv, node):
    axis = int(attrs_of(node).get("axis", 0))
    r = cv.rank(node.input[0])
    axis %= r
    idx = cv.known(node.input[1])
    if idx is not None and (idx < 0).any():
        n = cv.static_dims(node.input[0], "negative gather indices")[axis]
        idx = np.where(idx < 0, idx + n, idx).astype(idx.dtype)
        ident = cv.const(idx, cv.out(node) + "_indices")
    else:
        ident = cv.inp(node, 1)
    table = weight_quant.operand(cv, node, 0) or cv.inp(node, 0)
    cv.emit("gather", [table, ident], {"axis": axis}, outs=cv.out(node))


@op("GatherElements")
def gather_elements(cv, node):
    axis = int(attrs_of(node).get("axis", 0)) % cv.rank(node.input[0])
    idx = _indices(cv, node, 1, axis, "negative gather indices")
    cv.emit("gatherElements", [cv.inp(node, 0), idx], {"axis": axis}, outs=cv.out(node))


def _axes(cv, node):
    a = attrs_of(node)
    if cv.opset >= 13:
        val = cv.known_input(node, 1, "axes")
        return None if val is None else [int(v) for v in val.reshape(-1)]
    return None if a.get("axes") is None else [int(v) for v in a["axes"]]


@op("Unsqueeze")
def unsqueeze(cv, node):
    axes = _axes(cv, node)
    if axes is None:
        raise Unsupported("axes are missing")
    cv.emit("unsqueeze", [cv.inp(node, 0)], {"axes": axes}, outs=cv.out(node))


@op("Squeeze")
def squeeze(cv, node):
    axes = _axes(cv, node)
    cv.emit("squeeze", [cv.inp(node, 0)], {} if axes is None else {"axes": axes}, outs=cv.out(node))


@op("Expand")
def expand(cv, node):
    shape = _shape_operand(cv, node, 1, "shape")
    if isinstance(shape, list):
        cv.emit("expand", [cv.inp(node, 0)], {"newShape": shape}, outs=cv.out(node))
    else:
        cv.emit("expand", [cv.inp(node, 0), shape], outs=cv.out(node))


@op("Tile")
def tile(cv, node):
    reps = _shape_operand(cv, node, 1, "repeats")
    if isinstance(reps, list):
        cv.emit("tile", [cv.inp(node, 0)], {"repetitions": reps}, outs=cv.out(node))
    else:
        cv.emit("tile", [cv.inp(node, 0), reps], outs=cv.out(node))


@op("Pad")
def pad(cv, node):
    a = attrs_of(node)
    mode = a.get("mode", "constant")
    webnn_mode = {"constant": "constant", "edge": "edge", "reflect": "reflection"}.get(mode)
    if webnn_mode is None:
        raise Unsupported("mode '%s' is not supported" % mode)
    r = cv.rank(node.input[0])
    if cv.opset < 11:
        pads = [int(p) for p in a.get("pads", a.get("paddings", []))]
        value = float(a.get("value", 0.0))
    else:
        pads = [int(p) for p in cv.known_input(node, 1, "pads").reshape(-1)]
        val = cv.known_input(node, 2, "constant_value") if cv.has(node, 2) else None
        value = 0.0 if val is None or val.size == 0 else val.reshape(-1)[0].item()
        if cv.has(node, 3):
            axes = [int(v) % r for v in cv.known_input(node, 3, "axes").reshape(-1)]
            full = [0] * (2 * r)
            for k, ax in enumerate(axes):
                full[ax], full[r + ax] = pads[k], pads[len(axes) + k]
            pads = full
    if len(pads) != 2 * r:
        raise Unsupported("expected %d pads for rank %d, found %d" % (2 * r, r, len(pads)))
    if any(p < 0 for p in pads):
        raise Unsupported("negative pads %s (cropping) are not supported" % pads)
    opts = {"beginningPadding": pads[:r], "endingPadding": pads[r:], "mode": webnn_mode}
    if webnn_mode == "constant" and value != 0:
        opts["value"] = value
    cv.emit("pad", [cv.inp(node, 0)], opts, outs=cv.out(node))


@op("Shape")
def shape(cv, node):
    a = attrs_of(node)
    s = cv.shape_of(cv.inp(node, 0))
    r = cv.rank(node.input[0])
    lo, hi = int(a.get("start", 0)), int(a.get("end", r))
    lo, hi = (lo + r if lo < 0 else lo), (hi + r if hi < 0 else hi)
    lo, hi = min(max(lo, 0), r), min(max(hi, 0), r)
    if (lo, hi) == (0, r):
        cv.emit("identity", [s], outs=cv.out(node))
    else:
        cv.emit("slice", [s], {"starts": [lo], "sizes": [max(hi - lo, 0)]}, outs=cv.out(node))


@op("ConstantOfShape")
def constant_of_shape(cv, node):
    """The shape is computed (a dynamic dim): expand a scalar to it."""
    a = attrs_of(node)
    val = tensor_value(a["value"]) if "value" in a else np.zeros(1, np.float32)
    k = cv.const(np.array(val.reshape(-1)[0], dtype=val.dtype), cv.out(node) + "_value")
    cv.emit("expand", [k, cv.inp(node, 0)], outs=cv.out(node))


@op("Trilu")
def trilu(cv, node):
    k = cv.known_input(node, 1, "k") if cv.has(node, 1) else None
    opts = {"upper": bool(attrs_of(node).get("upper", 1))}
    if k is not None:
        opts["diagonal"] = int(k.reshape(-1)[0])
    cv.emit("triangular", [cv.inp(node, 0)], opts, outs=cv.out(node))


@op("CumSum")
def cumsum(cv, node):
    a = attrs_of(node)
    axis = int(cv.known_input(node, 1, "axis").reshape(-1)[0])
    cv.emit("cumulativeSum", [cv.inp(node, 0)], {"axis": axis % cv.rank(node.input[0]),
                                                 "exclusive": bool(a.get("exclusive", 0)),
                                                 "reversed": bool(a.get("reverse", 0))}, outs=cv.out(node))


@op("DepthToSpace", "SpaceToDepth")
def depth_space(cv, node):
    """Both are reshape + transpose + reshape on static dims."""
    a = attrs_of(node)
    b = int(a["blocksize"])
    n, c, h, w = cv.static_dims(node.input[0], node.op_type)
    x = cv.inp(node, 0)
    out = cv.out(node)
    if node.op_type == "DepthToSpace":
        crd = a.get("mode", "DCR") == "CRD"
        if crd:
            t = cv.reshape(x, [n, c // (b * b), b, b, h, w], hint=out + "_split")
            t = cv.emit("transpose", [t], {"permutation": [0, 1, 4, 2, 5, 3]}, hint=out + "_perm")
        else:
            t = cv.reshape(x, [n, b, b, c // (b * b), h, w], hint=out + "_split")
            t = cv.emit("transpose", [t], {"permutation": [0, 3, 4, 1, 5, 2]}, hint=out + "_perm")
        cv.reshape(t, [n, c // (b * b), h * b, w * b], out=out)
    else:
        t = cv.reshape(x, [n, c, h // b, b, w // b, b], hint=out + "_split")
        t = cv.emit("transpose", [t], {"permutation": [0, 3, 5, 1, 2, 4]}, hint=out + "_perm")
        cv.reshape(t, [n, c * b * b, h // b, w // b], out=out)


def _indices(cv, node, i, axis, why):
    """Known indices with negative entries counted from the end of the
    axis, as ONNX allows; other indices as they are."""
    idx = cv.known(node.input[i])
    if idx is None or not (idx < 0).any():
        return cv.inp(node, i)
    n = cv.static_dims(node.input[0], why)[axis]
    return cv.const(np.where(idx < 0, idx + n, idx).astype(idx.dtype), cv.out(node) + "_indices")


@op("ScatterElements", "Scatter")
def scatter_elements(cv, node):
    a = attrs_of(node)
    red = a.get("reduction", "none")
    axis = int(a.get("axis", 0)) % cv.rank(node.input[0])
    idx = _indices(cv, node, 1, axis, "negative scatter indices")
    if red == "none":
        cv.emit("scatterElements", [cv.inp(node, 0), idx, cv.inp(node, 2)], {"axis": axis}, outs=cv.out(node))
        return
    if red not in ops_composed.REDUCTIONS:
        raise Unsupported("reduction '%s' (none, add or mul)" % red)
    o = cv.out(node)
    out = ops_composed.scatter_reduce(cv, cv.inp(node, 0), cv.static_dims(node.input[0], "a scatter reduction"), idx,
                                      cv.static_dims(node.input[1], "a scatter reduction"), cv.inp(node, 2), axis, red,
                                      cv.np_dtype(node.input[0]), o)
    cv.emit("identity", [out], outs=o)


@op("Compress")
def compress(cv, node):
    """With a constant condition, a gather of the positions it keeps
    (along the axis, or of the flattened input without one)."""
    cond = cv.known(node.input[1])
    if cond is None:
        raise Unsupported("the condition '%s' is not a constant: the output's shape would depend on its values"
                          % node.input[1])
    a = attrs_of(node)
    o = cv.out(node)
    x = cv.inp(node, 0)
    keep = np.nonzero(np.asarray(cond).reshape(-1))[0].astype(np.int64)
    if "axis" not in a:
        total = int(np.prod(cv.static_dims(node.input[0], "Compress without an axis")))
        x, axis = cv.reshape(x, [total], hint=o + "_flat"), 0
        keep = keep[keep < total]
    else:
        axis = int(a["axis"]) % cv.rank(node.input[0])
        d = cv.dims(node.input[0])[axis]
        keep = keep if d is None else keep[keep < d]
    cv.emit("gather", [x, cv.const(keep, o + "_kept")], {"axis": axis}, outs=o)
