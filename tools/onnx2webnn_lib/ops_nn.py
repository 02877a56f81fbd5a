"""Neural-network ops: convolutions, pools, normalizations, matrix
products, softmax and resizing."""
import numpy as np

from . import ops_conv3d
from . import quantize as weight_quant
from .core import DTYPES, Ident, Unsupported, attrs_of, registry
from .window import spatial

OPS, op = registry()


def _to_2d(cv, node, x_name, what):
    """1-D spatial ops run as 2-D ones with H = 1; returns (x identifier,
    is_1d)."""
    r = cv.rank(x_name)
    if r == 4:
        return cv.v(x_name), False
    if r == 3:
        return cv.emit("unsqueeze", [cv.v(x_name)], {"axes": [2]}, hint=cv.v(x_name) + "_2d"), True
    raise Unsupported("%s on a rank-%d input (1-D, 2-D and 3-D spatial are supported)" % (what, r))


def _finish(cv, node, y, is_1d):
    if is_1d:
        cv.emit("squeeze", [y], {"axes": [2]}, outs=cv.out(node))


@op("Conv")
def conv(cv, node):
    conv_with(cv, node, cv.inp(node, 0), cv.inp(node, 1), cv.inp(node, 2), cv.out(node))


def conv_with(cv, node, x, w, b, out):
    """The convolution of `node`'s attributes on identifiers x, w and b
    (None: no bias), written to `out`; node.input[0] and [1] give the
    shapes (ConvInteger and QLinearConv convolve values made from them)."""
    a = attrs_of(node)
    w_dims = cv.dims(node.input[1])
    if w_dims is None:
        raise Unsupported("the weight's rank is unknown")
    kernel = list(a.get("kernel_shape", w_dims[2:]))
    if any(k is None for k in kernel):
        raise Unsupported("kernel_shape is unknown")
    r = cv.rank(node.input[0])
    if r == 5:
        ops_conv3d.conv3d(cv, node, a, x, w, b, out)
        return
    if r not in (3, 4):
        raise Unsupported("%s on a rank-%d input (1-D, 2-D and 3-D spatial are supported)" % (node.op_type, r))
    padding, strides, dil = spatial(cv, a, kernel, node.input[0])
    if r == 3:
        x = cv.emit("unsqueeze", [x], {"axes": [2]}, hint=x + "_2d")
        w = cv.emit("unsqueeze", [w], {"axes": [2]}, hint=w + "_2d")
        kernel, padding, strides, dil = [1] + kernel, [0, 0] + padding, [1] + strides, [1] + dil
    opts = {"padding": padding, "strides": strides, "dilations": dil, "groups": int(a.get("group", 1))}
    if b is not None:
        opts["bias"] = _ident(b)
    y = cv.emit("conv2d", [x, w], opts, outs=None if r == 3 else out, hint=out + "_2d")
    if r == 3:
        cv.emit("squeeze", [y], {"axes": [2]}, outs=out)


def _ident(name):
    """An operand passed as an option (bias=b)."""
    return Ident(name)


@op("ConvTranspose")
def conv_transpose(cv, node):
    """2-D as convTranspose2d; 1-D as 2-D with H = 1; 3-D by depth taps."""
    a = attrs_of(node)
    r = cv.rank(node.input[0])
    w_dims = cv.dims(node.input[1])
    if w_dims is None or len(w_dims) != r or r not in (3, 4, 5):
        raise Unsupported("ConvTranspose needs input and weight of one rank, 3 to 5; found %d and %s"
                          % (r, "unknown" if w_dims is None else len(w_dims)))
    if r == 5:
        ops_conv3d.conv_transpose3d(cv, node, a)
        return
    x, w, o = cv.inp(node, 0), cv.inp(node, 1), cv.out(node)
    in_hw = cv.dims(node.input[0])[2:]
    kernel = list(a.get("kernel_shape", w_dims[2:]))
    if r == 3:  # the 1-D attributes with a leading H of 1
        x = cv.emit("unsqueeze", [x], {"axes": [2]}, hint=x + "_2d")
        w = cv.emit("unsqueeze", [w], {"axes": [2]}, hint=w + "_2d")
        pads = list(a.get("pads", [0, 0]))
        a = dict(a, pads=[0, pads[0], 0, pads[1]], strides=[1] + list(a.get("strides", [1])),
                 dilations=[1] + list(a.get("dilations", [1])),
                 output_padding=[0] + list(a.get("output_padding", [0])))
        if "output_shape" in a:
            a["output_shape"] = [1] + list(a["output_shape"])
        in_hw, kernel = [1] + in_hw, [1] + kernel
    strides = [int(s) for s in a.get("strides", [1, 1])]
    dil = [int(d) for d in a.get("dilations", [1, 1])]
    opad = [int(p) for p in a.get("output_padding", [0, 0])]
    auto = a.get("auto_pad", "NOTSET")
    group = int(a.get("group", 1))
    if "output_shape" in a or auto in ("SAME_UPPER", "SAME_LOWER"):
        if any(v is None for v in in_hw):
            raise Unsupported("ConvTranspose output_shape/auto_pad needs the input's static spatial dims")
        if "output_shape" in a:
            out_hw = [int(v) for v in a["output_shape"]][-2:]
        else:
            out_hw = [n * s for n, s in zip(in_hw, strides)]
        padding = []
        for i in range(2):
            total = strides[i] * (in_hw[i] - 1) + opad[i] + (kernel[i] - 1) * dil[i] + 1 - out_hw[i]
            if total < 0:  # the extra rows are output padding: outputSizes says so
                padding += [0, 0]
                continue
            if auto == "SAME_UPPER":
                padding += [total // 2, total - total // 2]
            else:
                padding += [total - total // 2, total // 2]
        opts = {"padding": padding, "outputSizes": out_hw}
    else:
        padding, _, _ = spatial(cv, a, kernel, node.input[0])
        opts = {"padding": padding, "outputPadding": opad}
    opts.update({"strides": strides, "dilations": dil, "groups": group, "filterLayout": "iohw"})
    if cv.has(node, 2):
        opts["bias"] = _ident(cv.inp(node, 2))
    y = cv.emit("convTranspose2d", [x, w], opts, outs=None if r == 3 else o, hint=o + "_2d")
    _finish(cv, node, y, r == 3)


@op("MaxPool", "AveragePool", "LpPool")
def pool(cv, node):
    a = attrs_of(node)
    if len(node.output) > 1 and node.output[1]:
        _max_pool_with_indices(cv, node, a)
        return
    if node.op_type == "LpPool" and a.get("p", 2) != 2:
        raise Unsupported("p=%d is not supported (only p=2)" % a.get("p"))
    if cv.rank(node.input[0]) == 5:
        ops_conv3d.pool3d(cv, node, a)
        return
    kernel = [int(k) for k in a["kernel_shape"]]
    x, is_1d = _to_2d(cv, node, node.input[0], node.op_type)
    padding, strides, dil = spatial(cv, a, kernel, node.input[0])
    if is_1d:
        kernel, padding, strides, dil = [1] + kernel, [0, 0] + padding, [1] + strides, [1] + dil
    opts = {"windowDimensions": kernel, "strides": strides, "dilations": dil,
            "roundingType": "ceil" if a.get("ceil_mode", 0) else "floor"}
    if node.op_type == "AveragePool" and a.get("count_include_pad", 0) and any(padding):
        # WebNN averages over the valid window only: pad with zeros first
        # so the padding counts, as count_include_pad asks.
        if a.get("ceil_mode", 0):
            raise Unsupported("count_include_pad=1 with ceil_mode=1 is not supported")
        x = cv.emit("pad", [x], {"beginningPadding": [0, 0, padding[0], padding[2]],
                                 "endingPadding": [0, 0, padding[1], padding[3]]}, hint=x + "_pad")
        padding = [0, 0, 0, 0]
    opts["padding"] = padding
    webnn = {"MaxPool": "maxPool2d", "AveragePool": "averagePool2d", "LpPool": "l2Pool2d"}[node.op_type]
    o = cv.out(node)
    dt = cv.np_dtype(node.input[0])
    if dt.kind in "iu":
        # WebNN pools floats: an 8-bit max pool runs in float32, where
        # every 8-bit value is exact, and is cast back.
        if node.op_type != "MaxPool" or dt.itemsize != 1:
            raise Unsupported("%s on %s (float inputs; MaxPool also int8 and uint8)" % (node.op_type, dt))
        x = cv.emit("cast", [x], {"type": "float32"}, hint=x + "_f32")
        y = cv.emit(webnn, [x], opts, hint=o + "_f32")
        y = cv.emit("cast", [y], {"type": DTYPES[cv.elem_type(node.input[0])][2]}, outs=None if is_1d else o,
                    hint=o + "_2d")
    else:
        y = cv.emit(webnn, [x], opts, outs=None if is_1d else o, hint=o + "_2d")
    _finish(cv, node, y, is_1d)


def _max_pool_with_indices(cv, node, a):
    """MaxPool's Indices output (2-D): every tap of the window as a
    strided slice of the input padded with the lowest float, stacked;
    argMax picks the tap (the first of equal ones), and a table of each
    tap's position gives the index, flat over N x C x H x W (W x H
    within each image with storage_order=1)."""
    o = cv.out(node)
    dims = cv.static_dims(node.input[0], "MaxPool with Indices")
    if len(dims) != 4 or a.get("ceil_mode", 0):
        raise Unsupported("Indices on a rank-%d input%s (rank 4, floor rounding)"
                          % (len(dims), " with ceil_mode" if a.get("ceil_mode", 0) else ""))
    n, c, h, w = dims
    kernel = [int(k) for k in a["kernel_shape"]]
    padding, strides, dil = spatial(cv, a, kernel, node.input[0])
    ho = (h + padding[0] + padding[1] - dil[0] * (kernel[0] - 1) - 1) // strides[0] + 1
    wo = (w + padding[2] + padding[3] - dil[1] * (kernel[1] - 1) - 1) // strides[1] + 1
    x = cv.emit("pad", [cv.inp(node, 0)], {"beginningPadding": [0, 0, padding[0], padding[2]],
                                           "endingPadding": [0, 0, padding[1], padding[3]],
                                           "value": -3.4028234663852886e38}, hint=o + "_padded")
    taps, table = [], []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            t = cv.emit("slice", [x], {"starts": [0, 0, i * dil[0], j * dil[1]], "sizes": [
                n, c, (ho - 1) * strides[0] + 1, (wo - 1) * strides[1] + 1], "strides": [1, 1] + strides},
                hint="%s_tap%d_%d" % (o, i, j))
            taps.append(cv.emit("unsqueeze", [t], {"axes": [4]}, hint="%s_tap%d_%d_k" % (o, i, j)))
            rows = np.arange(ho) * strides[0] + i * dil[0] - padding[0]
            cols = np.arange(wo) * strides[1] + j * dil[1] - padding[2]
            if a.get("storage_order", 0):
                table.append(rows[:, None] + cols[None, :] * h)
            else:
                table.append(rows[:, None] * w + cols[None, :])
    stacked = cv.emit("concat", [taps], {"axis": 4}, hint=o + "_taps")
    best = cv.emit("argMax", [stacked], {"axis": 4, "keepDimensions": True, "outputDataType": "int64"},
                   hint=o + "_best")
    cv.emit("squeeze", [cv.emit("gatherElements", [stacked, best], {"axis": 4}, hint=o + "_max")], {"axes": [4]},
            outs=o)
    table = np.stack(table, -1).astype(np.int64)[None, None]  # [1, 1, ho, wo, taps]
    table = table + (np.arange(n * c, dtype=np.int64) * h * w).reshape(n, c, 1, 1, 1)
    idx = cv.emit("gatherElements", [cv.const(table, o + "_positions"), best], {"axis": 4}, hint=o + "_index")
    cv.emit("squeeze", [idx], {"axes": [4]}, outs=cv.out(node, 1))


@op("MaxUnpool")
def max_unpool(cv, node):
    """Zeros with each value put back where its index says: a
    scatterElements on the flattened output of the size the pooling
    undoes (kernel, strides, pads); a larger output_shape pads that at
    the end of each spatial dim, the indices keeping their positions."""
    a = attrs_of(node)
    o = cv.out(node)
    dims = cv.static_dims(node.input[0], "MaxUnpool")
    if len(dims) != 4:
        raise Unsupported("MaxUnpool on a rank-%d input (rank 4)" % len(dims))
    kernel = [int(k) for k in a["kernel_shape"]]
    strides = [int(v) for v in a.get("strides", [1, 1])]
    pads = [int(v) for v in a.get("pads", [0, 0, 0, 0])]
    base = dims[:2] + [(dims[2 + i] - 1) * strides[i] - pads[i] - pads[i + 2] + kernel[i] for i in range(2)]
    out_dims = base
    if cv.has(node, 2):
        out_dims = [int(v) for v in np.asarray(cv.known_input(node, 2, "MaxUnpool's output_shape")).reshape(-1)]
        if len(out_dims) != 4 or out_dims[:2] != base[:2] or any(out_dims[i] < base[i] for i in (2, 3)):
            raise Unsupported("output_shape %s for an unpooled size of %s" % (out_dims, base))
    zeros = cv.const(np.zeros([int(np.prod(base))], cv.np_dtype(node.input[0])), o + "_zeros")
    idx = cv.inp(node, 1)
    if cv.np_dtype(node.input[1]) != np.int64:
        idx = cv.emit("cast", [idx], {"type": "int64"}, hint=o + "_idx64")
    flat_n = int(np.prod(dims))
    y = cv.emit("scatterElements", [zeros, cv.reshape(idx, [flat_n], hint=o + "_idx_flat"),
                                    cv.reshape(cv.inp(node, 0), [flat_n], hint=o + "_values")], {"axis": 0},
                hint=o + "_flat")
    if out_dims == base:
        cv.reshape(y, base, out=o)
        return
    y = cv.reshape(y, base, hint=o + "_unpooled")
    cv.emit("pad", [y], {"beginningPadding": [0] * 4, "endingPadding": [out_dims[i] - base[i] for i in range(4)]},
            outs=o)


@op("GlobalAveragePool", "GlobalMaxPool")
def global_pool(cv, node):
    r = cv.rank(node.input[0])
    webnn = "reduceMean" if node.op_type == "GlobalAveragePool" else "reduceMax"
    cv.emit(webnn, [cv.inp(node, 0)], {"axes": list(range(2, r)), "keepDimensions": True}, outs=cv.out(node))


@op("BatchNormalization")
def batch_norm(cv, node):
    a = attrs_of(node)
    if any(o for o in node.output[1:]) or a.get("training_mode", 0):
        raise Unsupported("training mode (extra outputs) is not supported")
    cv.emit("batchNormalization", [cv.inp(node, 0), cv.inp(node, 3), cv.inp(node, 4)],
            {"scale": _ident(cv.inp(node, 1)), "bias": _ident(cv.inp(node, 2)),
             "epsilon": float(a.get("epsilon", 1e-5)), "axis": 1}, outs=cv.out(node))


@op("InstanceNormalization")
def instance_norm(cv, node):
    a = attrs_of(node)
    if cv.rank(node.input[0]) != 4:
        raise Unsupported("only rank-4 inputs are supported")
    cv.emit("instanceNormalization", [cv.inp(node, 0)],
            {"scale": _ident(cv.inp(node, 1)), "bias": _ident(cv.inp(node, 2)),
             "epsilon": float(a.get("epsilon", 1e-5))}, outs=cv.out(node))


@op("LayerNormalization")
def layer_norm(cv, node):
    """The optional Mean and InvStdDev outputs are spelled with
    reductions beside the fused op (keepDimensions, as ONNX shapes them)."""
    a = attrs_of(node)
    r = cv.rank(node.input[0])
    axis = int(a.get("axis", -1)) % r
    axes = list(range(axis, r))
    eps = float(a.get("epsilon", 1e-5))
    opts = {"axes": axes, "epsilon": eps, "scale": _ident(cv.inp(node, 1))}
    if cv.has(node, 2):
        opts["bias"] = _ident(cv.inp(node, 2))
    x = cv.inp(node, 0)
    cv.emit("layerNormalization", [x], opts, outs=cv.out(node))
    want_mean = len(node.output) > 1 and node.output[1]
    want_inv = len(node.output) > 2 and node.output[2]
    if not (want_mean or want_inv):
        return
    red = {"axes": axes, "keepDimensions": True}
    mean = cv.emit("reduceMean", [x], red, outs=cv.out(node, 1) if want_mean else None,
                   hint=cv.out(node) + "_mean")
    if want_inv:
        d = cv.emit("sub", [x, mean], hint=cv.out(node) + "_centered")
        var = cv.emit("reduceMean", [cv.emit("mul", [d, d], hint=cv.out(node) + "_sq")], red,
                      hint=cv.out(node) + "_var")
        var = cv.emit("add", [var, cv.scalar(eps, node.input[0], cv.out(node) + "_eps")], hint=cv.out(node) + "_vare")
        cv.emit("reciprocal", [cv.emit("sqrt", [var], hint=cv.out(node) + "_std")], outs=cv.out(node, 2))


@op("MatMul")
def matmul(cv, node):
    b = weight_quant.operand(cv, node, 1) or cv.inp(node, 1)
    cv.emit("matmul", [cv.inp(node, 0), b], outs=cv.out(node))


@op("Gemm")
def gemm(cv, node):
    a = attrs_of(node)
    b = weight_quant.operand(cv, node, 1)
    if b is not None:
        # quantize.plan took only alpha = 1, beta = 1 (or no C), transA = 0,
        # and stored a transB weight transposed: A B + C
        y = cv.emit("matmul", [cv.inp(node, 0), b], outs=None if cv.has(node, 2) else cv.out(node),
                    hint=cv.out(node) + "_ab")
        if cv.has(node, 2):
            cv.emit("add", [y, cv.inp(node, 2)], outs=cv.out(node))
        return
    opts = {"alpha": float(a.get("alpha", 1.0)), "beta": float(a.get("beta", 1.0)),
            "aTranspose": bool(a.get("transA", 0)), "bTranspose": bool(a.get("transB", 0))}
    if cv.has(node, 2):
        opts["c"] = _ident(cv.inp(node, 2))
    cv.emit("gemm", [cv.inp(node, 0), cv.inp(node, 1)], opts, outs=cv.out(node))


@op("Softmax", "LogSoftmax")
def softmax(cv, node):
    """Opset 13 made softmax act on one axis. Before, it flattened the
    input to 2-D at `axis` (default 1) and normalized each row: that is
    emitted as reshape + softmax + reshape unless axis is the last."""
    a = attrs_of(node)
    r = cv.rank(node.input[0])
    x = cv.inp(node, 0)
    log = node.op_type == "LogSoftmax"
    out = cv.out(node)
    if cv.opset >= 13:
        axis = int(a.get("axis", -1)) % r
    else:
        axis = int(a.get("axis", 1)) % r if r else 0
        if axis != r - 1:
            lead = cv.prod_piece(node.input[0], 0, axis, out + "_rows")
            tail = cv.prod_piece(node.input[0], axis, r, out + "_cols")
            if not isinstance(lead, int) and not isinstance(tail, int):
                flat = cv.assemble([lead, tail], out + "_flat_shape")
            else:
                flat = [lead if isinstance(lead, int) else -1, tail if isinstance(tail, int) else -1]
            x2 = cv.reshape(x, flat, hint=out + "_flat")
            y2 = cv.emit("softmax", [x2], {"axis": 1}, hint=out + "_soft")
            if log:
                y2 = cv.emit("log", [y2], hint=out + "_log")
            shape = cv.assemble([cv.dim_piece(node.input[0], i) for i in range(r)], out + "_shape")
            cv.reshape(y2, shape, out=out)
            return
    if log:
        y = cv.emit("softmax", [x], {"axis": axis}, hint=out + "_soft")
        cv.emit("log", [y], outs=out)
    else:
        cv.emit("softmax", [x], {"axis": axis}, outs=out)


@op("Resize", "Upsample")
def resize(cv, node):
    """resample2d has two modes: linear with half-pixel centres and
    nearest with asymmetric floor coordinates. An ONNX Resize that means
    the same becomes it; any other (cubic, other coordinate modes) is
    spelled with interpolation matrices (_resize_by_matrices)."""
    a = attrs_of(node)
    r = cv.rank(node.input[0])
    if r != 4:
        raise Unsupported("only rank-4 inputs are supported")
    mode = a.get("mode", "nearest")
    ctm = a.get("coordinate_transformation_mode", "half_pixel" if cv.opset >= 11 else "asymmetric")
    nearest_mode = a.get("nearest_mode", "round_prefer_floor" if cv.opset >= 11 else "floor")
    if node.op_type == "Upsample" and cv.opset >= 9:
        scales = cv.known_input(node, 1, "scales")
        sizes = None
    elif node.op_type == "Upsample" and "scales" in a:
        scales, sizes = np.array(a["scales"], np.float32), None
    elif node.op_type == "Upsample":  # opset < 7
        scales = np.array([1, 1, a.get("height_scale", 1.0), a.get("width_scale", 1.0)], np.float32)
        sizes = None
    elif cv.opset < 11:
        scales, sizes = cv.known_input(node, 1, "scales"), None
    else:
        scales = cv.known(node.input[2]) if cv.has(node, 2) else None
        if cv.has(node, 2) and scales is None:
            raise Unsupported("scales must be a constant")
        sizes = cv.known_input(node, 3, "sizes") if cv.has(node, 3) else None
        if scales is not None and scales.size == 0:
            scales = None
    in_dims = cv.dims(node.input[0])
    opts = {"axes": [2, 3]}
    if sizes is not None and sizes.size:
        sizes = [int(v) for v in sizes]
        if in_dims and (in_dims[0], in_dims[1]) != (sizes[0], sizes[1]) and None not in in_dims[:2]:
            raise Unsupported("sizes change a non-spatial dim: %s" % sizes)
        opts["sizes"] = sizes[2:]
        ratio = [None, None]
        if in_dims and None not in in_dims[2:]:
            ratio = [sizes[2 + i] / in_dims[2 + i] for i in range(2)]
    elif scales is not None:
        scales = [float(v) for v in scales]
        if scales[0] != 1 or scales[1] != 1:
            raise Unsupported("scales %s change a non-spatial dim" % scales)
        opts["scales"] = scales[2:]
        ratio = scales[2:]
    else:
        raise Unsupported("neither scales nor sizes is given")
    if a.get("antialias", 0):
        raise Unsupported("antialias=1 is not supported")
    if "axes" in a:
        raise Unsupported("the axes attribute (opset 18) is not supported")
    why = None  # what keeps resample2d from meaning the same
    if mode == "linear" or mode == "bilinear":
        if ctm not in ("half_pixel", "pytorch_half_pixel"):
            why = "mode linear with coordinate_transformation_mode '%s' (only half_pixel)" % ctm
        elif ctm == "pytorch_half_pixel" and "sizes" in opts and min(opts["sizes"]) <= 1:
            why = "pytorch_half_pixel to an output of size 1"
        opts["mode"] = "linear"
    elif mode == "nearest":
        integer_up = all(q is not None and q >= 1 and float(q).is_integer() for q in ratio)
        ok = (ctm in ("asymmetric",) and nearest_mode == "floor") or (
            integer_up and (ctm in ("half_pixel", "pytorch_half_pixel")
                            and nearest_mode in ("round_prefer_floor", "round_prefer_ceil")
                            or ctm == "asymmetric" and nearest_mode in ("floor", "round_prefer_floor")
                            and all(q in (1.0, 2.0) for q in ratio)))
        if not ok:
            why = ("mode nearest with coordinate_transformation_mode '%s' and nearest_mode '%s' at scale %s"
                   % (ctm, nearest_mode, ratio))
        opts["mode"] = "nearest-neighbor"
    else:
        why = "mode '%s'" % mode
    if a.get("exclude_outside", 0):
        why = "exclude_outside=1"
    if why is None:
        cv.emit("resample2d", [cv.inp(node, 0)], opts, outs=cv.out(node))
        return
    _resize_by_matrices(cv, node, a, mode, ctm, nearest_mode, scales, sizes, why)


def _resize_by_matrices(cv, node, a, mode, ctm, nearest_mode, scales, sizes, why):
    """What resample2d cannot mean, as ONNX defines it: each spatial axis
    resized by a matrix of interpolation weights computed here (nearest:
    one tap, linear: two, cubic: four, indices clamped to the edge,
    exclude_outside renormalizing), applied with a matmul. Needs static
    spatial dims. tf_crop_and_resize samples the region of interest, and
    an output position outside the input gets extrapolation_value: its
    row of weights is empty and the value is added where row or column
    lies outside."""
    dims = cv.static_dims(node.input[0], "Resize (%s)" % why)
    o = cv.out(node)
    x = cv.inp(node, 0)
    roi = None
    if ctm == "tf_crop_and_resize":
        roi = np.asarray(cv.known_input(node, 1, "Resize's roi"), np.float64).reshape(-1)
        if roi.size != 8 or list(roi[[0, 1, 4, 5]]) != [0, 0, 1, 1]:
            raise Unsupported("tf_crop_and_resize with roi %s (the spatial dims' only)" % roi.tolist())
    out, outside = [], []
    for i in range(2):
        n = dims[2 + i]
        m = int(sizes[2 + i]) if sizes is not None else int(np.floor(n * scales[2 + i]))
        scale = m / n if sizes is not None else float(scales[2 + i])
        mat, off = _interp_matrix(n, m, scale, mode, ctm, nearest_mode, float(a.get("cubic_coeff_a", -0.75)),
                                  int(a.get("exclude_outside", 0)), None if roi is None else roi[[2 + i, 6 + i]])
        out.append(cv.const(mat.astype(cv.np_dtype(node.input[0])), "%s_axis%d" % (o, 2 + i)))
        outside.append(off)
    y = cv.emit("matmul", [out[0], x], hint=o + "_rows")  # [m, h] x [n, c, h, w]
    wt = cv.emit("transpose", [out[1]], {"permutation": [1, 0]}, hint=o + "_cols_t")
    extra = float(a.get("extrapolation_value", 0.0))
    mask = outside[0][:, None] | outside[1][None, :]
    if roi is None or extra == 0 or not mask.any():
        cv.emit("matmul", [y, wt], outs=o)
        return
    y = cv.emit("matmul", [y, wt], hint=o + "_inside")
    cv.emit("add", [y, cv.const((mask * extra).astype(cv.np_dtype(node.input[0])), o + "_extrapolated")], outs=o)


def _interp_matrix(n, m, scale, mode, ctm, nearest_mode, A, exclude_outside, roi):
    """[m, n]: output position j's weights on the input positions, and
    which positions fall outside the input (tf_crop_and_resize only)."""
    mat = np.zeros((m, n), np.float64)
    outside = np.zeros(m, bool)
    for j in range(m):
        if ctm == "tf_crop_and_resize":
            lo, hi = roi
            x = (lo * (n - 1) + j * (hi - lo) * (n - 1) / (m - 1)) if m > 1 else 0.5 * (lo + hi) * (n - 1)
            if x < 0 or x > n - 1:
                outside[j] = True
                continue
        elif ctm == "half_pixel":
            x = (j + 0.5) / scale - 0.5
        elif ctm == "pytorch_half_pixel":
            x = (j + 0.5) / scale - 0.5 if m > 1 else 0.0
        elif ctm == "align_corners":  # ONNX's resized length is n * scale, not floored
            x = 0.0 if m == 1 else j * (n - 1) / (n * scale - 1)
        elif ctm == "asymmetric":
            x = j / scale
        elif ctm == "tf_half_pixel_for_nn":
            x = (j + 0.5) / scale
        else:
            raise Unsupported("coordinate_transformation_mode '%s'" % ctm)
        if mode == "nearest":
            if nearest_mode == "round_prefer_floor":
                i = int(np.ceil(x - 0.5))
            elif nearest_mode == "round_prefer_ceil":
                i = int(np.floor(x + 0.5))
            elif nearest_mode == "floor":
                i = int(np.floor(x))
            elif nearest_mode == "ceil":
                i = int(np.ceil(x))
            else:
                raise Unsupported("nearest_mode '%s'" % nearest_mode)
            taps = [(i, 1.0)]
        elif mode in ("linear", "bilinear"):
            x = min(max(x, 0.0), n - 1.0)
            i0 = int(np.floor(x))
            t = x - i0
            taps = [(i0, 1 - t), (i0 + 1, t)]
        elif mode == "cubic":
            i0 = int(np.floor(x))
            t = x - i0
            w = [((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A,
                 ((A + 2) * t - (A + 3)) * t * t + 1,
                 ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1,
                 ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A]
            taps = [(i0 - 1 + k, w[k]) for k in range(4)]
            if exclude_outside:
                taps = [(i, wk if 0 <= i < n else 0.0) for i, wk in taps]
                total = sum(wk for _, wk in taps)
                taps = [(i, wk / total) for i, wk in taps]
        else:
            raise Unsupported("mode '%s' is not supported" % mode)
        for i, wk in taps:
            mat[j, min(max(i, 0), n - 1)] += wk
    return mat, outside


def _per_axis(cv, node, i, axis, hint):
    """ONNX's 1-D per-axis scale (or zero point) as WebNN's block shape:
    [C] on axis 1 of a rank-4 input becomes [C, 1, 1]."""
    ident = cv.inp(node, i)
    d = cv.dims(node.input[i])
    r = cv.rank(node.input[0])
    if d is not None and len(d) == 1 and r > 1:
        axis %= r
        return cv.reshape(ident, [-1] + [1] * (r - 1 - axis), hint=hint)
    return ident


@op("QuantizeLinear", "DequantizeLinear")
def quantize(cv, node):
    a = attrs_of(node)
    if "block_size" in a:
        raise Unsupported("block_size is not supported")
    axis = int(a.get("axis", 1))
    o = cv.out(node)
    scale = _per_axis(cv, node, 1, axis, o + "_scale")
    if cv.has(node, 2):
        zp = _per_axis(cv, node, 2, axis, o + "_zero_point")
    else:  # absent: zero of the quantized type (uint8 when quantizing)
        sd = cv.dims(node.input[1])
        if sd is None or None in sd:
            raise Unsupported("the scale's shape must be static when the zero point is absent")
        qtype = np.uint8 if node.op_type == "QuantizeLinear" else cv.np_dtype(node.input[0])
        zp = cv.const(np.zeros(sd, qtype), o + "_zero_point")
        if len(sd) == 1 and cv.rank(node.input[0]) > 1:
            zp = cv.reshape(zp, [-1] + [1] * (cv.rank(node.input[0]) - 1 - axis % cv.rank(node.input[0])),
                            hint=o + "_zero_point_axis")
    webnn = "quantizeLinear" if node.op_type == "QuantizeLinear" else "dequantizeLinear"
    cv.emit(webnn, [cv.inp(node, 0), scale, zp], outs=o)
