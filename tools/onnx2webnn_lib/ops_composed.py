"""ONNX ops WebNN has no op for, spelled with the WebNN ops every berth
backend runs: MeanVarianceNormalization, EyeLike, LRN and TopK."""
import numpy as np

from .core import DTYPES, Unsupported, attrs_of, elem_name, registry
from .ops_basic import round_half_even

OPS, op = registry()


@op("MeanVarianceNormalization")
def mean_variance_normalization(cv, node):
    """(x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes`, as ONNX's
    function body writes it."""
    x, o = cv.inp(node, 0), cv.out(node)
    r = cv.rank(node.input[0])
    axes = [int(a) % r for a in attrs_of(node).get("axes", [0, 2, 3])]
    opts = {"axes": axes, "keepDimensions": True}
    mean = cv.emit("reduceMean", [x], opts, hint=o + "_mean")
    mean_sq = cv.emit("reduceMean", [cv.emit("mul", [x, x], hint=o + "_sq")], opts, hint=o + "_mean_sq")
    var = cv.emit("sub", [mean_sq, cv.emit("mul", [mean, mean], hint=o + "_sq_mean")], hint=o + "_var")
    std = cv.emit("add", [cv.emit("sqrt", [var], hint=o + "_std"), cv.scalar(1e-9, node.input[0], o + "_eps")],
                  hint=o + "_std_eps")
    cv.emit("div", [cv.emit("sub", [x, mean], hint=o + "_centered"), std], outs=o)


@op("EyeLike")
def eye_like(cv, node):
    """Ones on diagonal k of a 2-D shape known at conversion: a constant."""
    a = attrs_of(node)
    rows, cols = cv.static_dims(node.input[0], "EyeLike")
    if "dtype" in a and int(a["dtype"]) not in DTYPES:
        raise Unsupported("dtype %s" % elem_name(int(a["dtype"])))
    dtype = DTYPES[int(a["dtype"])][1] if "dtype" in a else cv.np_dtype(node.input[0])
    eye = np.eye(rows, cols, int(a.get("k", 0)), dtype=dtype)
    cv.emit("identity", [cv.const(eye, cv.out(node) + "_eye")], outs=cv.out(node))


@op("LRN")
def lrn(cv, node):
    """x / (bias + alpha / size * s)^beta, s the sum of squares over the
    channel window [c - (size-1)//2, c + ceil((size-1)/2)]: a conv2d of
    ones over the channels, laid out as a spatial dim."""
    a = attrs_of(node)
    x, o = cv.inp(node, 0), cv.out(node)
    dims = cv.static_dims(node.input[0], "LRN")
    if len(dims) != 4:
        raise Unsupported("LRN on a rank-%d input (rank 4 is supported)" % len(dims))
    n, c, h, w = dims
    size = int(a["size"])
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = cv.reshape(cv.emit("mul", [x, x], hint=o + "_sq"), [n, 1, c, h * w], hint=o + "_sq_channels")
    ones = cv.const(np.ones([1, 1, size, 1], cv.np_dtype(node.input[0])), o + "_window")
    s = cv.emit("conv2d", [sq, ones], {"padding": [lo, hi, 0, 0], "strides": [1, 1], "dilations": [1, 1],
                                       "groups": 1}, hint=o + "_sum")
    s = cv.reshape(s, dims, hint=o + "_sum_nchw")
    k = lambda v, tag: cv.scalar(v, node.input[0], o + "_" + tag)  # noqa: E731
    d = cv.emit("add", [k(float(a.get("bias", 1.0)), "bias"),
                        cv.emit("mul", [s, k(float(a.get("alpha", 1e-4)) / size, "alpha")], hint=o + "_scaled")],
                hint=o + "_base")
    d = cv.emit("pow", [d, k(float(a.get("beta", 0.75)), "beta")], hint=o + "_den")
    cv.emit("div", [x, d], outs=o)


@op("TopK")
def top_k(cv, node):
    """K rounds of argMax (argMin for the smallest) along the axis, each
    taking its value with gatherElements and then masking its position
    with -inf (+inf); values and indices concatenated in that order, which
    is sorted, ties to the lower index as ONNX has it. K must be known."""
    a = attrs_of(node)
    x, o = cv.inp(node, 0), cv.out(node)
    dims = cv.static_dims(node.input[0], "TopK")
    r = len(dims)
    axis = int(a.get("axis", -1)) % r
    k = int(np.asarray(cv.known_input(node, 1, "TopK's K")).reshape(-1)[0])
    largest = int(a.get("largest", 1))
    if not 1 <= k <= dims[axis]:
        raise Unsupported("K=%d outside 1..%d" % (k, dims[axis]))
    pick = "argMax" if largest else "argMin"
    fill = cv.const(np.array(-np.inf if largest else np.inf, cv.np_dtype(node.input[0])), o + "_used")
    pos = cv.const(np.arange(dims[axis], dtype=np.int64).reshape([dims[axis] if d == axis else 1 for d in range(r)]),
                   o + "_positions")
    cur, vals, idxs = x, [], []
    for i in range(k):
        idx = cv.emit(pick, [cur], {"axis": axis, "keepDimensions": True, "outputDataType": "int64"},
                      hint="%s_i%d" % (o, i))
        vals.append(cv.emit("gatherElements", [cur, idx], {"axis": axis}, hint="%s_v%d" % (o, i)))
        idxs.append(idx)
        if i + 1 < k:
            taken = cv.emit("equal", [pos, idx], hint="%s_taken%d" % (o, i))
            cur = cv.emit("where", [taken, fill, cur], hint="%s_rest%d" % (o, i))
    if k == 1:
        cv.emit("identity", [vals[0]], outs=o)
        cv.emit("identity", [idxs[0]], outs=cv.out(node, 1))
    else:
        cv.emit("concat", [vals], {"axis": axis}, outs=o)
        cv.emit("concat", [idxs], {"axis": axis}, outs=cv.out(node, 1))


def _atan(cv, node, x, o):
    """atan(x) in float32: |x| folded into [0, 1] (atan(a) = pi/2 -
    atan(1/a) above 1), then into [0, tan(pi/12)] (atan(t) = pi/6 +
    atan((t - 1/sqrt3) / (1 + t/sqrt3)) above it), where the odd series to
    x^9 is within 6e-8; the sign put back last."""
    k = lambda v, tag: cv.scalar(v, node.input[0], "%s_%s" % (o, tag))  # noqa: E731
    e = lambda op_, args, tag: cv.emit(op_, args, hint="%s_%s" % (o, tag))  # noqa: E731
    a = e("abs", [x], "abs")
    big = e("greater", [a, k(1.0, "one")], "big")
    t = e("where", [big, e("div", [k(1.0, "one1"), a], "inv"), a], "t")
    far = e("greater", [t, k(0.2679491924311227, "tan15")], "far")
    r3 = 0.5773502691896258
    shifted = e("div", [e("sub", [t, k(r3, "r3")], "num"), e("add", [k(1.0, "one2"), e("mul", [t, k(r3, "r3b")], "tr3")],
                                                                "den")], "shift")
    u = e("where", [far, shifted, t], "u")
    u2 = e("mul", [u, u], "u2")
    p = k(1.0 / 9, "c9")
    for i, c in enumerate((-1.0 / 7, 1.0 / 5, -1.0 / 3, 1.0)):
        p = e("add", [e("mul", [p, u2], "p%d" % i), k(c, "c%d" % i)], "q%d" % i)
    r = e("mul", [p, u], "series")
    r = e("where", [far, e("add", [r, k(np.pi / 6, "pi6")], "plus30"), r], "r")
    r = e("where", [big, e("sub", [k(np.pi / 2, "pi2"), r], "comp"), r], "r2")
    return e("mul", [r, e("sign", [x], "sign")], "atan")


@op("Atan", "Asin", "Acos")
def inverse_trig(cv, node):
    """atan as above; asin(x) = atan(x / sqrt(1 - x^2)); acos = pi/2 - asin."""
    x, o = cv.inp(node, 0), cv.out(node)
    if cv.np_dtype(node.input[0]).kind != "f":
        raise Unsupported("%s on integers" % node.op_type)
    arg = x
    if node.op_type != "Atan":
        one = cv.scalar(1.0, node.input[0], o + "_one")
        root = cv.emit("sqrt", [cv.emit("sub", [one, cv.emit("mul", [x, x], hint=o + "_sq")], hint=o + "_1msq")],
                       hint=o + "_root")
        arg = cv.emit("div", [x, root], hint=o + "_ratio")
    r = _atan(cv, node, arg, o)
    if node.op_type == "Acos":
        cv.emit("sub", [cv.scalar(np.pi / 2, node.input[0], o + "_half_pi"), r], outs=o)
    else:
        cv.emit("identity", [r], outs=o)


def _flat_index(cv, node, o, dd, b, k):
    """For GatherND and ScatterND: the index into the data flattened over
    its first b + k dims of each of indices' positions (each batch position
    and index component, negative ones wrapped, times its stride, summed),
    shaped as indices without their last dim."""
    idims = cv.static_dims(node.input[1], node.op_type)
    lead = idims[:-1]
    flat_dims = dd[:b + k]
    strides = [int(np.prod(flat_dims[i + 1:], dtype=np.int64)) for i in range(len(flat_dims))]
    idx = cv.inp(node, 1)
    if cv.np_dtype(node.input[1]) != np.int64:
        idx = cv.emit("cast", [idx], {"type": "int64"}, hint=o + "_idx64")
    lin = None
    for i in range(b):  # the batch position, broadcast over the other lead dims
        pos = np.arange(dd[i], dtype=np.int64).reshape([dd[i] if d == i else 1 for d in range(len(lead))])
        term = cv.const(pos * strides[i], "%s_batch%d" % (o, i))
        lin = term if lin is None else cv.emit("add", [lin, term], hint="%s_lin_b%d" % (o, i))
    for j in range(k):
        c = cv.emit("slice", [idx], {"starts": [0] * len(lead) + [j], "sizes": lead + [1]}, hint="%s_c%d" % (o, j))
        c = cv.reshape(c, lead, hint="%s_c%d_flat" % (o, j))
        neg = cv.emit("lesser", [c, cv.const(np.array(0, np.int64), "%s_z%d" % (o, j))], hint="%s_neg%d" % (o, j))
        c = cv.emit("where", [neg, cv.emit("add", [c, cv.const(np.array(dd[b + j], np.int64), "%s_n%d" % (o, j))],
                                           hint="%s_wrap%d" % (o, j)), c], hint="%s_c%d_pos" % (o, j))
        term = cv.emit("mul", [c, cv.const(np.array(strides[b + j], np.int64), "%s_s%d" % (o, j))],
                       hint="%s_t%d" % (o, j))
        lin = term if lin is None else cv.emit("add", [lin, term], hint="%s_lin%d" % (o, j))
    return lin, lead, int(np.prod(flat_dims, dtype=np.int64))


@op("GatherND")
def gather_nd(cv, node):
    """A gather on the data flattened over its batch dims and the k
    indexed ones."""
    o = cv.out(node)
    b = int(attrs_of(node).get("batch_dims", 0))
    dd = cv.static_dims(node.input[0], "GatherND")
    k = cv.static_dims(node.input[1], "GatherND")[-1]
    lin, _, rows = _flat_index(cv, node, o, dd, b, k)
    data = cv.reshape(cv.inp(node, 0), [rows] + dd[b + k:], hint=o + "_flat")
    cv.emit("gather", [data, lin], {"axis": 0}, outs=o)


# The reductions of opsets up to 17 (max and min came in 18).
REDUCTIONS = {"add": ("reduceSum", "add"), "mul": ("reduceProduct", "mul")}


def scatter_reduce(cv, data, ddims, idx, idims, upd, axis, red, dt, o):
    """data with data[..., idx[p], ...] combined (add or mul) with
    upd[p] for every position p of idx, duplicates included: each update
    spread over a one-hot axis of the data's positions, the spread
    reduced over the indices' own axis, and combined where touched."""
    reduce_op, combine = REDUCTIONS[red]
    if dt.kind != "f":
        raise Unsupported("reduction '%s' on %s: it is spelled with %s, which berth runs on floats" % (red, dt, reduce_op))
    r, n = len(ddims), ddims[axis]
    pos_shape = [1] * (r + 1)
    pos_shape[axis + 1] = n
    pos = cv.const(np.arange(n, dtype=np.int64).reshape(pos_shape), o + "_positions")
    hit = cv.emit("equal", [cv.emit("unsqueeze", [idx], {"axes": [axis + 1]}, hint=o + "_idx_col"), pos], hint=o + "_hit")
    neutral = 0 if red == "add" else 1
    spread = cv.emit("where", [hit, cv.emit("unsqueeze", [upd], {"axes": [axis + 1]}, hint=o + "_upd_col"),
                               cv.const(np.array(neutral, dt), o + "_neutral")], hint=o + "_spread")
    one = {"axes": [axis], "keepDimensions": False}
    got = cv.emit(reduce_op, [spread], one, hint=o + "_reduced")
    touched = cv.emit("reduceMax", [cv.emit("cast", [hit], {"type": "float32"}, hint=o + "_hit_f")], one,
                      hint=o + "_touched_f")
    ends = [ddims[d] - (n if d == axis else idims[d]) for d in range(r)]
    if any(ends):  # the indices cover a corner of the data: the rest untouched
        pad = {"beginningPadding": [0] * r, "endingPadding": ends}
        got = cv.emit("pad", [got], pad, hint=o + "_reduced_full")
        touched = cv.emit("pad", [touched], pad, hint=o + "_touched_full")
    touched = cv.emit("greater", [touched, cv.const(np.array(0, np.float32), o + "_zero")], hint=o + "_touched")
    return cv.emit("where", [touched, cv.emit(combine, [data, got], hint=o + "_combined"), data], hint=o + "_scattered")


@op("ScatterND")
def scatter_nd(cv, node):
    """A scatterElements along the first axis of the data flattened over
    the k indexed dims, each flat index repeated over the slice it
    replaces; with a reduction, scatter_reduce on the same flat view."""
    o = cv.out(node)
    red = attrs_of(node).get("reduction", "none")
    if red not in ("none",) + tuple(REDUCTIONS):
        raise Unsupported("reduction '%s' (none, add or mul)" % red)
    dd = cv.static_dims(node.input[0], "ScatterND")
    k = cv.static_dims(node.input[1], "ScatterND")[-1]
    lin, lead, rows = _flat_index(cv, node, o, dd, 0, k)
    n, rest = int(np.prod(lead, dtype=np.int64)), dd[k:]
    lin = cv.reshape(lin, [n] + [1] * len(rest), hint=o + "_lin_col")
    lin = cv.emit("expand", [lin], {"newShape": [n] + rest}, hint=o + "_lin_rows")
    data = cv.reshape(cv.inp(node, 0), [rows] + rest, hint=o + "_flat")
    upd = cv.reshape(cv.inp(node, 2), [n] + rest, hint=o + "_updates")
    if red == "none":
        out = cv.emit("scatterElements", [data, lin, upd], {"axis": 0}, hint=o + "_scattered")
    else:
        out = scatter_reduce(cv, data, [rows] + rest, lin, [n] + rest, upd, 0, red, cv.np_dtype(node.input[0]), o)
    cv.reshape(out, dd, out=o)


@op("ReverseSequence")
def reverse_sequence(cv, node):
    """Each batch entry's first len steps reversed: a gatherElements along
    the time axis at len - 1 - t where t < len, else t."""
    a = attrs_of(node)
    o = cv.out(node)
    dims = cv.static_dims(node.input[0], "ReverseSequence")
    ta, ba = int(a.get("time_axis", 0)), int(a.get("batch_axis", 1))
    T, B = dims[ta], dims[ba]
    shape = [1] * len(dims)
    t_shape, b_shape = list(shape), list(shape)
    t_shape[ta], b_shape[ba] = T, B
    t = cv.const(np.arange(T, dtype=np.int64).reshape(t_shape), o + "_steps")
    lens = cv.inp(node, 1)
    if cv.np_dtype(node.input[1]) != np.int64:
        lens = cv.emit("cast", [lens], {"type": "int64"}, hint=o + "_lens64")
    lens = cv.reshape(lens, b_shape, hint=o + "_lens")
    back = cv.emit("sub", [cv.emit("sub", [lens, cv.const(np.array(1, np.int64), o + "_one")], hint=o + "_last"), t],
                   hint=o + "_back")
    idx = cv.emit("where", [cv.emit("lesser", [t, lens], hint=o + "_inside"), back, t], hint=o + "_idx")
    idx = cv.emit("expand", [idx], {"newShape": dims}, hint=o + "_idx_full")
    cv.emit("gatherElements", [cv.inp(node, 0), idx], {"axis": ta}, outs=o)


@op("Det")
def det(cv, node):
    """The determinant of [..., n, n] for n up to 3, by cofactors of the
    elements sliced out (n is static)."""
    o = cv.out(node)
    dims = cv.static_dims(node.input[0], "Det")
    n, batch = dims[-1], dims[:-2]
    if dims[-2] != n or n > 3:
        raise Unsupported("Det of %s (square matrices up to 3 x 3 are supported)" % dims)
    x = cv.inp(node, 0)

    def el(i, j):
        s = cv.emit("slice", [x], {"starts": [0] * len(batch) + [i, j], "sizes": batch + [1, 1]},
                    hint="%s_m%d%d" % (o, i, j))
        return cv.reshape(s, batch, hint="%s_e%d%d" % (o, i, j))

    def mul(p, q):
        return cv.emit("mul", [p, q], hint=o + "_p")

    def sub(p, q):
        return cv.emit("sub", [p, q], hint=o + "_d")

    if n == 1:
        r = el(0, 0)
    elif n == 2:
        r = sub(mul(el(0, 0), el(1, 1)), mul(el(0, 1), el(1, 0)))
    else:
        m = [[el(i, j) for j in range(3)] for i in range(3)]
        c0 = sub(mul(m[1][1], m[2][2]), mul(m[1][2], m[2][1]))
        c1 = sub(mul(m[1][0], m[2][2]), mul(m[1][2], m[2][0]))
        c2 = sub(mul(m[1][0], m[2][1]), mul(m[1][1], m[2][0]))
        r = cv.emit("add", [sub(mul(m[0][0], c0), mul(m[0][1], c1)), mul(m[0][2], c2)], hint=o + "_sum")
    cv.emit("identity", [r], outs=o)


@op("DynamicQuantizeLinear")
def dynamic_quantize_linear(cv, node):
    """ONNX's function body: the scale spans [min(x, 0), max(x, 0)] over
    255 steps, the zero point is round(clip(-min / scale, 0, 255)), and y
    is quantizeLinear(x, scale, zero point) to uint8."""
    x = cv.inp(node, 0)
    o, o_scale, o_zp = cv.out(node, 0), cv.out(node, 1), cv.out(node, 2)
    k = lambda v, tag: cv.scalar(v, node.input[0], "%s_%s" % (o, tag))  # noqa: E731
    e = lambda op_, args, tag, attrs=None: cv.emit(op_, args, attrs, hint="%s_%s" % (o, tag))  # noqa: E731
    lo = e("min", [e("reduceMin", [x], "min", {"keepDimensions": False}), k(0.0, "zero")], "lo")
    hi = e("max", [e("reduceMax", [x], "max", {"keepDimensions": False}), k(0.0, "zero2")], "hi")
    cv.emit("div", [e("sub", [hi, lo], "range"), k(255.0, "steps")], outs=o_scale)
    zp = e("clamp", [e("sub", [k(0.0, "zero3"), e("div", [lo, o_scale], "lo_scaled")], "zp_raw")], "zp_clip",
           {"minValue": 0.0, "maxValue": 255.0})
    zp = round_half_even(cv, zp, node.input[0], o + "_zp")
    cv.emit("cast", [zp], {"type": "uint8"}, outs=o_zp)
    cv.emit("quantizeLinear", [x, o_scale, o_zp], outs=o)
