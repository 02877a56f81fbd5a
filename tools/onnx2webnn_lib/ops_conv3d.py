"""3-D (rank-5, NCDHW) Conv, ConvTranspose, MaxPool and AveragePool,
spelled with WebNN's 2-D ops: one 2-D op per tap of the depth window on
the depth planes that tap reads (a strided slice), the taps' results
summed (max for MaxPool). WebNN has no 3-D ops; each tap's work is a
full 2-D op, so a 3-D layer costs kernel-depth 2-D ones."""
import numpy as np

from .core import Ident, Unsupported
from .window import out_len, spatial

LOWEST_F32 = -3.4028234663852886e38


def _depth_pad(cv, x, begin, end, value, hint):
    if not begin and not end:
        return x
    return cv.emit("pad", [x], {"beginningPadding": [0, 0, begin, 0, 0], "endingPadding": [0, 0, end, 0, 0],
                                "value": value}, hint=hint)


def _depth_taps(cv, x, dims, axis, k, s, d, out_len, hint):
    """For each tap t of the depth window: x's depth planes t*d, t*d + s,
    ... (out_len of them) along `axis`."""
    taps = []
    for t in range(k):
        starts = [0] * 5
        starts[axis] = t * d
        sizes = list(dims)
        sizes[axis] = (out_len - 1) * s + 1
        strides = [1] * 5
        strides[axis] = s
        taps.append(cv.emit("slice", [x], {"starts": starts, "sizes": sizes, "strides": strides},
                            hint="%s_tap%d" % (hint, t)))
    return taps


def conv3d(cv, node, a, x, wt, b, o):
    n, c, d, h, w = cv.static_dims(node.input[0], "a 3-D Conv")
    m, cg, kd, kh, kw = cv.static_dims(node.input[1], "a 3-D Conv's weight")
    padding, strides, dil = spatial(cv, a, [kd, kh, kw], node.input[0])
    x = _depth_pad(cv, x, padding[0], padding[1], 0.0, o + "_dpad")
    dp = d + padding[0] + padding[1]
    do = out_len(d, kd, strides[0], dil[0], padding[0], padding[1], False)
    ho = out_len(h, kh, strides[1], dil[1], padding[2], padding[3], False)
    wo = out_len(w, kw, strides[2], dil[2], padding[4], padding[5], False)
    # Depth next to the batch, so that (batch, depth) is conv2d's batch.
    xt = cv.emit("transpose", [x], {"permutation": [0, 2, 1, 3, 4]}, hint=o + "_ndchw")
    acc = None
    for t, xs in enumerate(_depth_taps(cv, xt, [n, dp, c, h, w], 1, kd, strides[0], dil[0], do, o)):
        xs = cv.reshape(xs, [n * do, c, h, w], hint="%s_planes%d" % (o, t))
        wk = cv.emit("slice", [wt], {"starts": [0, 0, t, 0, 0], "sizes": [m, cg, 1, kh, kw]}, hint="%s_w%d" % (o, t))
        wk = cv.reshape(wk, [m, cg, kh, kw], hint="%s_w2d%d" % (o, t))
        opts = {"padding": padding[2:], "strides": strides[1:], "dilations": dil[1:], "groups": int(a.get("group", 1))}
        if t == 0 and b is not None:
            opts["bias"] = Ident(b)
        y = cv.emit("conv2d", [xs, wk], opts, hint="%s_conv%d" % (o, t))
        acc = y if acc is None else cv.emit("add", [acc, y], hint="%s_sum%d" % (o, t))
    acc = cv.reshape(acc, [n, do, m, ho, wo], hint=o + "_ndmhw")
    cv.emit("transpose", [acc], {"permutation": [0, 2, 1, 3, 4]}, outs=o)


def conv_transpose3d(cv, node, a):
    """Each input depth plane i, through tap t, lands on output plane
    i*stride + t*dilation: per tap a convTranspose2d of every plane, the
    planes spread `stride` apart (zeros between), shifted by t*dilation;
    the taps summed, the depth pads cropped, the bias added once."""
    o = cv.out(node)
    if "output_shape" in a or a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise Unsupported("a 3-D ConvTranspose with output_shape or auto_pad SAME is not supported")
    n, c, d, h, w = cv.static_dims(node.input[0], "a 3-D ConvTranspose")
    _, mg, kd, kh, kw = cv.static_dims(node.input[1], "a 3-D ConvTranspose's weight")
    group = int(a.get("group", 1))
    m = mg * group
    pads = [int(p) for p in a.get("pads", [0] * 6)]
    strides = [int(s) for s in a.get("strides", [1, 1, 1])]
    dil = [int(v) for v in a.get("dilations", [1, 1, 1])]
    opad = [int(p) for p in a.get("output_padding", [0, 0, 0])]
    full = (d - 1) * strides[0] + (kd - 1) * dil[0] + 1 + opad[0]
    ho = (h - 1) * strides[1] + (kh - 1) * dil[1] + 1 + opad[1] - pads[1] - pads[4]
    wo = (w - 1) * strides[2] + (kw - 1) * dil[2] + 1 + opad[2] - pads[2] - pads[5]
    xt = cv.reshape(cv.emit("transpose", [cv.inp(node, 0)], {"permutation": [0, 2, 1, 3, 4]}, hint=o + "_ndchw"),
                    [n * d, c, h, w], hint=o + "_planes")
    opts = {"padding": [pads[1], pads[4], pads[2], pads[5]], "strides": strides[1:], "dilations": dil[1:],
            "outputPadding": opad[1:], "groups": group, "filterLayout": "iohw"}
    acc = None
    for t in range(kd):
        wk = cv.emit("slice", [cv.inp(node, 1)], {"starts": [0, 0, t, 0, 0], "sizes": [c, mg, 1, kh, kw]},
                     hint="%s_w%d" % (o, t))
        wk = cv.reshape(wk, [c, mg, kh, kw], hint="%s_w2d%d" % (o, t))
        y = cv.emit("convTranspose2d", [xt, wk], opts, hint="%s_convt%d" % (o, t))
        y = cv.reshape(y, [n, d, 1, m, ho, wo], hint="%s_nd1%d" % (o, t))
        # Planes `stride` apart: each followed by stride - 1 planes of zeros.
        spread = d * strides[0]
        if strides[0] > 1:
            y = cv.emit("pad", [y], {"beginningPadding": [0] * 6, "endingPadding": [0, 0, strides[0] - 1, 0, 0, 0]},
                        hint="%s_spread%d" % (o, t))
        y = cv.reshape(y, [n, spread, m, ho, wo], hint="%s_spread_nd%d" % (o, t))
        begin = t * dil[0]
        end = max(0, full - begin - spread)
        y = cv.emit("pad", [y], {"beginningPadding": [0, begin, 0, 0, 0], "endingPadding": [0, end, 0, 0, 0]},
                    hint="%s_shift%d" % (o, t))
        if begin + spread + end != full:
            y = cv.emit("slice", [y], {"starts": [0] * 5, "sizes": [n, full, m, ho, wo]}, hint="%s_crop%d" % (o, t))
        acc = y if acc is None else cv.emit("add", [acc, y], hint="%s_sum%d" % (o, t))
    do = full - pads[0] - pads[3]
    if pads[0] or pads[3]:
        acc = cv.emit("slice", [acc], {"starts": [0, pads[0], 0, 0, 0], "sizes": [n, do, m, ho, wo]},
                      hint=o + "_dcrop")
    if cv.has(node, 2):
        acc = cv.emit("add", [acc, cv.reshape(cv.inp(node, 2), [1, 1, m, 1, 1], hint=o + "_bias")],
                      hint=o + "_biased")
    cv.emit("transpose", [acc], {"permutation": [0, 2, 1, 3, 4]}, outs=o)


def pool3d(cv, node, a):
    """Max and mean are separable over the depth window: a 2-D pool of
    each depth plane a tap reads (channels and output depth merged, as
    pooling is per plane), then the max, or the sum over the taps that
    fall inside the input divided by their count."""
    o, kind = cv.out(node), node.op_type
    if kind == "LpPool":
        raise Unsupported("a 3-D LpPool is not supported")
    n, c, d, h, w = cv.static_dims(node.input[0], "a 3-D %s" % kind)
    kernel = [int(k) for k in a["kernel_shape"]]
    padding, strides, dil = spatial(cv, a, kernel, node.input[0])
    ceil = bool(a.get("ceil_mode", 0))
    do = out_len(d, kernel[0], strides[0], dil[0], padding[0], padding[1], ceil)
    ho = out_len(h, kernel[1], strides[1], dil[1], padding[2], padding[3], ceil)
    wo = out_len(w, kernel[2], strides[2], dil[2], padding[4], padding[5], ceil)
    x = cv.inp(node, 0)
    is_max = kind == "MaxPool"
    include_pad = not is_max and a.get("count_include_pad", 0)
    if not is_max and ceil and (do, ho, wo) != tuple(out_len(*v, False) for v in (
            (d, kernel[0], strides[0], dil[0], padding[0], padding[1]),
            (h, kernel[1], strides[1], dil[1], padding[2], padding[3]),
            (w, kernel[2], strides[2], dil[2], padding[4], padding[5]))):
        raise Unsupported("a 3-D AveragePool whose ceil_mode adds windows is not supported")
    if include_pad and any(padding):
        x = cv.emit("pad", [x], {"beginningPadding": [0, 0, padding[0], padding[2], padding[4]],
                                 "endingPadding": [0, 0, padding[1], padding[3], padding[5]]}, hint=o + "_pad")
        d, h, w = d + padding[0] + padding[1], h + padding[2] + padding[3], w + padding[4] + padding[5]
        padding = [0] * 6
    # The depth window's pads (and, with ceil, its overhang) as planes
    # that never win a max and add nothing to a sum.
    over = max(0, (do - 1) * strides[0] + (kernel[0] - 1) * dil[0] + 1 - (d + padding[0] + padding[1]))
    x = _depth_pad(cv, x, padding[0], padding[1] + over, LOWEST_F32 if is_max else 0.0, o + "_dpad")
    dp = d + padding[0] + padding[1] + over
    opts = {"windowDimensions": kernel[1:], "padding": padding[2:], "strides": strides[1:], "dilations": dil[1:],
            "outputSizes": [ho, wo]}
    webnn = "maxPool2d" if is_max else "averagePool2d"
    acc = None
    for t, xs in enumerate(_depth_taps(cv, x, [n, c, dp, h, w], 2, kernel[0], strides[0], dil[0], do, o)):
        y = cv.emit(webnn, [cv.reshape(xs, [n, c * do, h, w], hint="%s_planes%d" % (o, t))], opts,
                    hint="%s_pool%d" % (o, t))
        acc = y if acc is None else cv.emit("max" if is_max else "add", [acc, y], hint="%s_acc%d" % (o, t))
    if is_max:
        cv.reshape(acc, [n, c, do, ho, wo], out=o)
        return
    acc = cv.reshape(acc, [n, c, do, ho, wo], hint=o + "_ncdhw")
    # Taps inside the input, per output plane (all of them with
    # count_include_pad, whose pads are real zeros by now).
    count = np.zeros(do)
    for i in range(do):
        for t in range(kernel[0]):
            p = i * strides[0] + t * dil[0]
            count[i] += 1 if padding[0] <= p < padding[0] + d else 0
    inv = cv.const((1.0 / count).astype(cv.np_dtype(node.input[0])).reshape(1, 1, do, 1, 1), o + "_inv_taps")
    cv.emit("mul", [acc, inv], outs=o)
