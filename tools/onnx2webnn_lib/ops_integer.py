"""Integer matrix products and convolutions of quantized models:
MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv.

The 8-bit operands less their zero points are widened to float32 and
multiplied there (WebNN's matmul and conv2d are float ops); each product
and every partial sum is an integer, exact in float32 while its
magnitude stays below 2^24 (e.g. K up to 258 at the extremes of uint8,
far more for typical values), beyond which the sum rounds like a float32
accumulator. The QLinear ops then requantize: round half to even of
acc * (a_scale * b_scale / y_scale), plus y's zero point, saturated, as
quantizeLinear does with scale 1."""
import numpy as np

from .core import Unsupported, registry
from .ops_nn import conv_with

OPS, op = registry()


def _centered(cv, node, i, zp_i, rows_axis, o, tag):
    """Input i as float32 less its zero point (input zp_i, absent: 0). A
    zero point of more than one element applies along `rows_axis` of the
    input (MatMulInteger's A: per row; conv weights: per output channel)."""
    v = cv.emit("cast", [cv.inp(node, i)], {"type": "float32"}, hint="%s_%s_f" % (o, tag))
    if not cv.has(node, zp_i):
        return v
    zp = cv.emit("cast", [cv.inp(node, zp_i)], {"type": "float32"}, hint="%s_%s_zp" % (o, tag))
    zd = cv.dims(node.input[zp_i])
    r = cv.rank(node.input[i])
    if rows_axis is not None and zd and len(zd) == 1 and zd[0] != 1:
        zp = cv.reshape(zp, [-1] + [1] * (r - 1 - rows_axis % r), hint="%s_%s_zp_axis" % (o, tag))
    return cv.emit("sub", [v, zp], hint="%s_%s_centered" % (o, tag))


def _requantize(cv, node, acc, scales, y_scale_i, y_zp_i, o):
    """quantizeLinear(acc * prod(scales) / y_scale, 1, y_zero_point).
    scales: (input index, trailing): a scale of more than one element
    applies to the dim of acc that has `trailing` dims after it."""
    m = None
    for i, trailing in scales:
        s = cv.inp(node, i)
        sd = cv.dims(node.input[i])
        if trailing and sd and len(sd) == 1 and sd[0] != 1:
            s = cv.reshape(s, [-1] + [1] * trailing, hint="%s_scale%d_axis" % (o, i))
        m = s if m is None else cv.emit("mul", [m, s], hint="%s_scale_prod" % o)
    m = cv.emit("div", [m, cv.inp(node, y_scale_i)], hint=o + "_multiplier")
    scaled = cv.emit("mul", [acc, m], hint=o + "_scaled")
    zd = cv.static_dims(node.input[y_zp_i], "the unit scale beside y's zero point")
    one = cv.const(np.ones(zd, np.float32), o + "_unit_scale")
    cv.emit("quantizeLinear", [scaled, one, cv.inp(node, y_zp_i)], outs=o)


def _check_8bit(cv, node, *idx):
    for i in idx:
        dt = cv.np_dtype(node.input[i])
        if dt not in (np.uint8, np.int8):
            raise Unsupported("input %d '%s' is %s (int8 or uint8 expected)" % (i, node.input[i], dt))


@op("MatMulInteger")
def matmul_integer(cv, node):
    o = cv.out(node)
    _check_8bit(cv, node, 0, 1)
    a = _centered(cv, node, 0, 2, -2, o, "a")
    b = _centered(cv, node, 1, 3, None, o, "b")
    acc = cv.emit("matmul", [a, b], hint=o + "_acc")
    cv.emit("cast", [acc], {"type": "int32"}, outs=o)


@op("ConvInteger")
def conv_integer(cv, node):
    """The input's zero point is subtracted before padding, so pads add
    nothing, as the operator defines."""
    o = cv.out(node)
    _check_8bit(cv, node, 0, 1)
    x = _centered(cv, node, 0, 2, None, o, "x")
    w = _centered(cv, node, 1, 3, 0, o, "w")
    acc = cv.fresh(o + "_acc")
    conv_with(cv, node, x, w, None, acc)
    cv.emit("cast", [acc], {"type": "int32"}, outs=o)


@op("QLinearMatMul")
def qlinear_matmul(cv, node):
    o = cv.out(node)
    _check_8bit(cv, node, 0, 3)
    a = _centered(cv, node, 0, 2, -2, o, "a")
    b = _centered(cv, node, 3, 5, None, o, "b")
    acc = cv.emit("matmul", [a, b], hint=o + "_acc")
    # a's scale may be per row, b's per column (which broadcasts as is).
    _requantize(cv, node, acc, ((1, 1), (4, 0)), 6, 7, o)


@op("QLinearConv")
def qlinear_conv(cv, node):
    """x, w (per output channel scale and zero point allowed) and an int32
    bias in the scale x_scale * w_scale, zero point 0."""
    o = cv.out(node)
    if cv.has(node, 8) and cv.np_dtype(node.input[8]) != np.int32:
        raise Unsupported("the bias must be int32, found %s" % cv.np_dtype(node.input[8]))
    _check_8bit(cv, node, 0, 3)
    x = _centered(cv, node, 0, 2, None, o, "x")
    w = _centered(cv, node, 3, 5, 0, o, "w")
    # conv_with reads the shapes of node.input[0] and [1]: the weight is
    # input 3 here.
    shaped = type(node)()
    shaped.CopyFrom(node)
    shaped.input[1] = node.input[3]
    acc = cv.fresh(o + "_acc")
    b = None
    if cv.has(node, 8):
        b = cv.emit("cast", [cv.inp(node, 8)], {"type": "float32"}, hint=o + "_bias_f")
    conv_with(cv, shaped, x, w, b, acc)
    # w's scale may be per output channel.
    _requantize(cv, node, acc, ((1, 0), (4, cv.rank(node.input[0]) - 2)), 6, 7, o)
