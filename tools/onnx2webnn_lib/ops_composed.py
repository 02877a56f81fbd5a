"""ONNX ops WebNN has no op for, spelled with the WebNN ops every berth
backend runs: MeanVarianceNormalization, EyeLike, LRN and TopK."""
import numpy as np

from .core import DTYPES, Unsupported, attrs_of, elem_name

OPS = {}


def op(*names):
    def wrap(fn):
        for n in names:
            OPS[n] = fn
        return fn
    return wrap


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
