"""Element-wise ops, activations, logic, casts and reductions."""
import numpy as np
import onnx

from .core import DTYPES, Unsupported, attrs_of, elem_name, registry

OPS, op = registry()


_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow",
           "Equal": "equal", "Greater": "greater", "Less": "lesser",
           "GreaterOrEqual": "greaterOrEqual", "LessOrEqual": "lesserOrEqual",
           "And": "logicalAnd", "Or": "logicalOr", "Xor": "notEqual"}


@op(*_BINARY)
def binary(cv, node):
    a, b = cv.inp(node, 0), cv.inp(node, 1)
    if cv.np_dtype(node.input[0]) != cv.np_dtype(node.input[1]):
        if node.op_type != "Pow":
            raise Unsupported("operands have different dtypes %s and %s"
                              % (cv.np_dtype(node.input[0]), cv.np_dtype(node.input[1])))
        # Pow's exponent may have another dtype: WebNN wants one dtype.
        b = cv.emit("cast", [b], {"type": DTYPES[cv.elem_type(node.input[0])][2]}, hint=b + "_cast")
    cv.emit(_BINARY[node.op_type], [a, b], outs=cv.out(node))


@op("Sum", "Max", "Min", "Mean")
def variadic(cv, node):
    webnn = {"Sum": "add", "Max": "max", "Min": "min", "Mean": "add"}[node.op_type]
    names = [cv.inp(node, i) for i in range(len(node.input))]
    if len(names) == 1:
        acc = names[0]
    else:
        acc = names[0]
        for k, n in enumerate(names[1:]):
            last = k == len(names) - 2 and node.op_type != "Mean"
            acc = cv.emit(webnn, [acc, n], outs=cv.out(node) if last else None, hint=cv.out(node) + "_acc")
    if node.op_type == "Mean":
        k = cv.scalar(len(names), node.input[0], cv.out(node) + "_n")
        cv.emit("div", [acc, k], outs=cv.out(node))
    elif len(names) == 1:
        cv.emit("identity", [acc], outs=cv.out(node))


_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Erf": "erf", "Sqrt": "sqrt",
          "Exp": "exp", "Log": "log", "Abs": "abs", "Neg": "neg", "Reciprocal": "reciprocal",
          "Floor": "floor", "Ceil": "ceil", "Sin": "sin", "Cos": "cos", "Sign": "sign",
          "Identity": "identity", "Softplus": "softplus", "Softsign": "softsign",
          "HardSwish": "hardSwish", "Not": "logicalNot"}


@op(*_UNARY)
def unary(cv, node):
    cv.emit(_UNARY[node.op_type], [cv.inp(node, 0)], outs=cv.out(node))


@op("Dropout")
def dropout(cv, node):
    if cv.has(node, 2):
        train = cv.known_input(node, 2, "training_mode")
        ratio = cv.known_input(node, 1, "Dropout's ratio") if cv.has(node, 1) else np.array(0.5)
        # training with ratio 0 drops nothing: the identity, as at inference
        if bool(np.asarray(train).reshape(-1)[0]) and float(np.asarray(ratio).reshape(-1)[0]) != 0.0:
            raise Unsupported("training_mode=1 drops elements at random; only ratio 0 is supported")
    cv.emit("identity", [cv.inp(node, 0)], outs=cv.out(node))
    if len(node.output) > 1 and node.output[1]:  # at inference every element is kept
        dims = cv.static_dims(node.input[0], "Dropout's mask output")
        one = cv.const(np.array(1, np.uint8), cv.out(node, 1) + "_one")
        cv.emit("expand", [one], {"newShape": dims}, outs=cv.out(node, 1))


@op("LeakyRelu")
def leaky_relu(cv, node):
    cv.emit("leakyRelu", [cv.inp(node, 0)], {"alpha": attrs_of(node).get("alpha", 0.01)}, outs=cv.out(node))


@op("Elu")
def elu(cv, node):
    cv.emit("elu", [cv.inp(node, 0)], {"alpha": attrs_of(node).get("alpha", 1.0)}, outs=cv.out(node))


@op("HardSigmoid")
def hard_sigmoid(cv, node):
    a = attrs_of(node)
    cv.emit("hardSigmoid", [cv.inp(node, 0)], {"alpha": a.get("alpha", 0.2), "beta": a.get("beta", 0.5)},
            outs=cv.out(node))


@op("PRelu")
def prelu(cv, node):
    slope = cv.inp(node, 1)
    sd, r = cv.dims(node.input[1]), cv.rank(node.input[0])
    if cv.opset < 7 and sd is not None and len(sd) == 1 and sd[0] != 1 and r > 2:
        # before opset 7 a 1-D slope is per channel (axis 1), not numpy-aligned
        slope = cv.reshape(slope, [-1] + [1] * (r - 2), hint=slope + "_per_channel")
    cv.emit("prelu", [cv.inp(node, 0), slope], outs=cv.out(node))


@op("Clip")
def clip(cv, node):
    """Clip has min/max attributes before opset 11 and inputs after. Known
    bounds become clamp's options; bounds computed on the device become
    max/min ops, which mean the same."""
    x = cv.inp(node, 0)
    if cv.opset < 11:
        a = attrs_of(node)
        lo, hi = a.get("min"), a.get("max")
        opts = {}
        if lo is not None and np.isfinite(lo):
            opts["minValue"] = float(lo)
        if hi is not None and np.isfinite(hi):
            opts["maxValue"] = float(hi)
        cv.emit("clamp", [x], opts, outs=cv.out(node))
        return
    opts, dyn = {}, []
    for i, key in ((1, "minValue"), (2, "maxValue")):
        if not cv.has(node, i):
            continue
        val = cv.known(node.input[i])
        if val is None:
            dyn.append(("max" if i == 1 else "min", cv.inp(node, i)))
        elif np.isfinite(val).all() if val.dtype.kind == "f" else True:
            opts[key] = float(val.reshape(-1)[0]) if val.dtype.kind == "f" else int(val.reshape(-1)[0])
    if not dyn:
        cv.emit("clamp", [x], opts, outs=cv.out(node))
        return
    if opts:
        x = cv.emit("clamp", [x], opts, hint=cv.out(node) + "_c")
    for k, (fn, bound) in enumerate(dyn):
        x = cv.emit(fn, [x, bound], outs=cv.out(node) if k == len(dyn) - 1 else None,
                    hint=cv.out(node) + "_b")


@op("Cast")
def cast(cv, node):
    to = _cast_to(attrs_of(node)["to"])
    if to not in DTYPES:
        raise Unsupported("Cast to %s is not supported" % elem_name(to))
    x = cv.inp(node, 0)
    if to == onnx.TensorProto.BOOL and cv.elem_type(node.input[0]) != onnx.TensorProto.BOOL:
        # WebNN's cast to uint8 truncates; a bool is "not zero".
        zero = cv.scalar(0, node.input[0], cv.out(node) + "_zero")
        cv.emit("notEqual", [x, zero], outs=cv.out(node))
        return
    cv.emit("cast", [x], {"type": DTYPES[to][2]}, outs=cv.out(node))


def _cast_to(to):
    """`to` is a dtype name string before opset 6."""
    if isinstance(to, str):
        try:
            return onnx.TensorProto.DataType.Value(to.upper())
        except ValueError:
            raise Unsupported("Cast to '%s'" % to)
    return to


@op("CastLike")
def cast_like(cv, node):
    et = cv.elem_type(node.input[1])
    if et not in DTYPES:
        raise Unsupported("CastLike to %s is not supported" % elem_name(et) if et else "an unknown dtype")
    x = cv.inp(node, 0)
    if et == onnx.TensorProto.BOOL and cv.elem_type(node.input[0]) != onnx.TensorProto.BOOL:
        cv.emit("notEqual", [x, cv.scalar(0, node.input[0], cv.out(node) + "_zero")], outs=cv.out(node))
        return
    cv.emit("cast", [x], {"type": DTYPES[et][2]}, outs=cv.out(node))


@op("Where")
def where(cv, node):
    cv.emit("where", [cv.inp(node, 0), cv.inp(node, 1), cv.inp(node, 2)], outs=cv.out(node))


_REDUCE = {"ReduceMean": "reduceMean", "ReduceSum": "reduceSum", "ReduceMax": "reduceMax",
           "ReduceMin": "reduceMin", "ReduceProd": "reduceProduct", "ReduceL1": "reduceL1",
           "ReduceL2": "reduceL2", "ReduceLogSum": "reduceLogSum",
           "ReduceLogSumExp": "reduceLogSumExp", "ReduceSumSquare": "reduceSumSquare"}


@op(*_REDUCE)
def reduce(cv, node):
    """axes are an attribute before opset 18 (ReduceSum: before 13) and an
    input after; keepdims defaults to 1 in ONNX and false in WebNN."""
    a = attrs_of(node)
    axes_input = cv.opset >= (13 if node.op_type == "ReduceSum" else 18)
    if axes_input:
        axes = cv.known_input(node, 1, "axes")
        axes = None if axes is None else [int(v) for v in axes.reshape(-1)]
    else:
        axes = a.get("axes")
        axes = None if axes is None else [int(v) for v in axes]
    x = cv.inp(node, 0)
    if not axes:
        if a.get("noop_with_empty_axes", 0):
            cv.emit("identity", [x], outs=cv.out(node))
            return
        axes = None  # every axis
    else:
        r = cv.rank(node.input[0])
        axes = [v % r for v in axes]
    cv.emit(_REDUCE[node.op_type], [x], {"axes": axes, "keepDimensions": bool(a.get("keepdims", 1))},
            outs=cv.out(node))


@op("ArgMax", "ArgMin")
def arg_reduce(cv, node):
    """With select_last_index the input is reversed along the axis (a
    gather of n-1..0), so WebNN's first index is the last, and the index is
    mapped back as n-1-i."""
    a = attrs_of(node)
    x, o = cv.inp(node, 0), cv.out(node)
    r = cv.rank(node.input[0])
    axis = int(a.get("axis", 0)) % r
    opts = {"axis": axis, "keepDimensions": bool(a.get("keepdims", 1)), "outputDataType": "int64"}
    webnn = "argMax" if node.op_type == "ArgMax" else "argMin"
    if not a.get("select_last_index", 0):
        cv.emit(webnn, [x], opts, outs=o)
        return
    n = cv.static_dims(node.input[0], "select_last_index")[axis]
    rev = cv.const(np.arange(n - 1, -1, -1, dtype=np.int64), o + "_reversed")
    xr = cv.emit("gather", [x, rev], {"axis": axis}, hint=o + "_flipped")
    i = cv.emit(webnn, [xr], opts, hint=o + "_first")
    cv.emit("sub", [cv.const(np.array(n - 1, np.int64), o + "_last"), i], outs=o)


@op("Hardmax")
def hardmax(cv, node):
    """1 at the first largest element along the axis, 0 elsewhere: the
    argMax compared with the positions along the axis."""
    a = attrs_of(node)
    x, o = cv.inp(node, 0), cv.out(node)
    dims = cv.static_dims(node.input[0], "Hardmax")
    r = len(dims)
    axis = int(a.get("axis", -1 if cv.opset >= 13 else 1)) % r
    if cv.opset < 13:
        raise Unsupported("Hardmax before opset 13 flattens the input at the axis; not supported")
    i = cv.emit("argMax", [x], {"axis": axis, "keepDimensions": True, "outputDataType": "int64"}, hint=o + "_arg")
    pos = np.arange(dims[axis], dtype=np.int64).reshape([dims[axis] if d == axis else 1 for d in range(r)])
    hit = cv.emit("equal", [i, cv.const(pos, o + "_positions")], hint=o + "_hit")
    cv.emit("cast", [hit], {"type": cv.webnn_dtype(node.input[0])}, outs=o)


def round_half_even(cv, x, like, o, outs=None):
    """round(x) half to even, in x's float dtype (`like` names an ONNX
    value of it): floor(x + 0.5), one less where that is odd and x lay
    exactly halfway; from 2^23 on every float is whole, and x + 0.5 would
    itself round, so x is kept."""
    k = lambda v, tag: cv.scalar(v, like, "%s_%s" % (o, tag))  # noqa: E731
    half = k(0.5, "half")
    r = cv.emit("floor", [cv.emit("add", [x, half], hint=o + "_plus_half")], hint=o + "_up")
    tie = cv.emit("equal", [cv.emit("sub", [r, x], hint=o + "_gap"), half], hint=o + "_tie")
    two = k(2.0, "two")
    halved = cv.emit("floor", [cv.emit("div", [r, two], hint=o + "_r_half")], hint=o + "_r_half_floor")
    odd = cv.emit("notEqual", [cv.emit("mul", [halved, two], hint=o + "_even"), r], hint=o + "_odd")
    down = cv.emit("logicalAnd", [tie, odd], hint=o + "_down")
    near = cv.emit("where", [down, cv.emit("sub", [r, k(1.0, "one")], hint=o + "_less"), r], hint=o + "_near")
    whole = cv.emit("greaterOrEqual", [cv.emit("abs", [x], hint=o + "_abs"), k(8388608.0, "whole")],
                    hint=o + "_whole")
    return cv.emit("where", [whole, x, near], outs=outs, hint=o + "_round")


@op("Round")
def round_even(cv, node):
    round_half_even(cv, cv.inp(node, 0), node.input[0], cv.out(node), outs=cv.out(node))


@op("Mod")
def mod(cv, node):
    """fmod=1: a - b * trunc(a / b), the sign of a (floats); fmod=0: the
    sign of b (integers): the truncated remainder, plus b where it is
    nonzero and its sign differs from b's."""
    a_, b_ = cv.inp(node, 0), cv.inp(node, 1)
    o = cv.out(node)
    if cv.np_dtype(node.input[0]) != cv.np_dtype(node.input[1]):
        raise Unsupported("operands have different dtypes")
    is_float = cv.np_dtype(node.input[0]).kind == "f"
    fmod = attrs_of(node).get("fmod", 0)
    if is_float and not fmod:
        raise Unsupported("fmod=0 on floats is not defined by ONNX")
    q = cv.emit("div", [a_, b_], hint=o + "_q")
    if is_float:
        zero = _k(cv, node, 0.0, "zero")
        q = cv.emit("where", [cv.emit("lesser", [q, zero], hint=o + "_neg"), cv.emit("ceil", [q], hint=o + "_ceil"),
                              cv.emit("floor", [q], hint=o + "_floor")], hint=o + "_trunc")
    rem = cv.emit("sub", [a_, cv.emit("mul", [b_, q], hint=o + "_bq")], outs=None if not fmod and not is_float else o,
                  hint=o + "_rem")
    if fmod or is_float:
        return
    zero = _k(cv, node, 0, "zero")
    if cv.np_dtype(node.input[0]).kind == "u":  # unsigned: no signs to fix
        cv.emit("identity", [rem], outs=o)
        return
    nonzero = cv.emit("notEqual", [rem, zero], hint=o + "_nonzero")
    differ = cv.emit("notEqual", [cv.emit("lesser", [rem, zero], hint=o + "_rneg"),
                                  cv.emit("lesser", [b_, zero], hint=o + "_bneg")], hint=o + "_differ")
    fix = cv.emit("logicalAnd", [nonzero, differ], hint=o + "_fix")
    cv.emit("where", [fix, cv.emit("add", [rem, b_], hint=o + "_plus_b"), rem], outs=o)


@op("OneHot")
def one_hot(cv, node):
    """values[1] where the position along the new axis equals the index
    (negative indices count from depth), values[0] elsewhere."""
    o = cv.out(node)
    depth = int(np.asarray(cv.known_input(node, 1, "OneHot's depth")).reshape(-1)[0])
    dims = cv.static_dims(node.input[0], "OneHot")
    r = len(dims) + 1
    axis = int(attrs_of(node).get("axis", -1)) % r
    idx = cv.inp(node, 0)
    if cv.np_dtype(node.input[0]) != np.int64:
        idx = cv.emit("cast", [idx], {"type": "int64"}, hint=o + "_index")
    neg = cv.emit("lesser", [idx, cv.const(np.array(0, np.int64), o + "_zero")], hint=o + "_neg")
    idx = cv.emit("where", [neg, cv.emit("add", [idx, cv.const(np.array(depth, np.int64), o + "_depth")],
                                         hint=o + "_wrapped"), idx], hint=o + "_idx")
    idx = cv.reshape(idx, dims[:axis] + [1] + dims[axis:], hint=o + "_idx_axis")
    pos = np.arange(depth, dtype=np.int64).reshape([depth if d == axis else 1 for d in range(r)])
    hit = cv.emit("equal", [idx, cv.const(pos, o + "_positions")], hint=o + "_hit")
    values = cv.known(node.input[2])
    if values is not None:
        vt = cv.np_dtype(node.input[2])
        values = values.reshape(-1)
        on, off = cv.const(np.array(values[1], vt), o + "_on"), cv.const(np.array(values[0], vt), o + "_off")
    else:  # [off, on] computed on the device
        v = cv.inp(node, 2)
        off = cv.emit("slice", [v], {"starts": [0], "sizes": [1]}, hint=o + "_off")
        on = cv.emit("slice", [v], {"starts": [1], "sizes": [1]}, hint=o + "_on")
    cv.emit("where", [hit, on, off], outs=o)


# Activations WebNN has no op for, spelled with the ops it has.

@op("Selu")
def selu(cv, node):
    """gamma * elu(x, alpha)"""
    a = attrs_of(node)
    e = cv.emit("elu", [cv.inp(node, 0)], {"alpha": float(a.get("alpha", 1.67326319217681884765625))},
                hint=cv.out(node) + "_elu")
    g = cv.scalar(float(a.get("gamma", 1.05070102214813232421875)), node.input[0], cv.out(node) + "_gamma")
    cv.emit("mul", [e, g], outs=cv.out(node))


@op("Celu")
def celu(cv, node):
    """alpha * elu(x / alpha, 1)"""
    alpha = cv.scalar(float(attrs_of(node).get("alpha", 1.0)), node.input[0], cv.out(node) + "_alpha")
    t = cv.emit("div", [cv.inp(node, 0), alpha], hint=cv.out(node) + "_scaled")
    t = cv.emit("elu", [t], {"alpha": 1.0}, hint=cv.out(node) + "_elu")
    cv.emit("mul", [t, alpha], outs=cv.out(node))


@op("ThresholdedRelu")
def thresholded_relu(cv, node):
    """x where x > alpha, else 0"""
    x = cv.inp(node, 0)
    alpha = cv.scalar(float(attrs_of(node).get("alpha", 1.0)), node.input[0], cv.out(node) + "_alpha")
    zero = cv.scalar(0, node.input[0], cv.out(node) + "_zero")
    keep = cv.emit("greater", [x, alpha], hint=cv.out(node) + "_keep")
    cv.emit("where", [keep, x, zero], outs=cv.out(node))


@op("Shrink")
def shrink(cv, node):
    """x + bias below -lambd, x - bias above lambd, else 0"""
    a = attrs_of(node)
    x = cv.inp(node, 0)
    o = cv.out(node)
    lambd, bias = float(a.get("lambd", 0.5)), float(a.get("bias", 0.0))
    lo = cv.emit("lesser", [x, cv.scalar(-lambd, node.input[0], o + "_neg_lambd")], hint=o + "_lo")
    hi = cv.emit("greater", [x, cv.scalar(lambd, node.input[0], o + "_lambd")], hint=o + "_hi")
    b = cv.scalar(bias, node.input[0], o + "_bias")
    up = cv.emit("where", [hi, cv.emit("sub", [x, b], hint=o + "_minus"), cv.scalar(0, node.input[0], o + "_zero")],
                 hint=o + "_upper")
    cv.emit("where", [lo, cv.emit("add", [x, b], hint=o + "_plus"), up], outs=cv.out(node))


def _k(cv, node, value, tag):
    return cv.scalar(value, node.input[0], cv.out(node) + "_" + tag)


@op("Sinh", "Cosh")
def sinh_cosh(cv, node):
    """(exp(x) -/+ exp(-x)) / 2"""
    x, o = cv.inp(node, 0), cv.out(node)
    ep = cv.emit("exp", [x], hint=o + "_exp")
    en = cv.emit("exp", [cv.emit("neg", [x], hint=o + "_neg")], hint=o + "_exp_neg")
    t = cv.emit("sub" if node.op_type == "Sinh" else "add", [ep, en], hint=o + "_sum")
    cv.emit("mul", [t, _k(cv, node, 0.5, "half")], outs=o)


@op("Asinh", "Acosh")
def asinh_acosh(cv, node):
    """log(x + sqrt(x*x +/- 1))"""
    x, o = cv.inp(node, 0), cv.out(node)
    sq = cv.emit("mul", [x, x], hint=o + "_sq")
    t = cv.emit("add" if node.op_type == "Asinh" else "sub", [sq, _k(cv, node, 1.0, "one")], hint=o + "_t")
    t = cv.emit("add", [x, cv.emit("sqrt", [t], hint=o + "_root")], hint=o + "_arg")
    cv.emit("log", [t], outs=o)


@op("Atanh")
def atanh(cv, node):
    """log((1 + x) / (1 - x)) / 2"""
    x, o = cv.inp(node, 0), cv.out(node)
    one = _k(cv, node, 1.0, "one")
    q = cv.emit("div", [cv.emit("add", [one, x], hint=o + "_num"), cv.emit("sub", [one, x], hint=o + "_den")],
                hint=o + "_q")
    cv.emit("mul", [cv.emit("log", [q], hint=o + "_log"), _k(cv, node, 0.5, "half")], outs=o)


@op("Tan")
def tan(cv, node):
    x, o = cv.inp(node, 0), cv.out(node)
    cv.emit("div", [cv.emit("sin", [x], hint=o + "_sin"), cv.emit("cos", [x], hint=o + "_cos")], outs=o)


@op("IsNaN")
def is_nan(cv, node):
    """NaN is the one value not equal to itself."""
    x = cv.inp(node, 0)
    cv.emit("notEqual", [x, x], outs=cv.out(node))


@op("IsInf")
def is_inf(cv, node):
    a = attrs_of(node)
    pos, neg = a.get("detect_positive", 1), a.get("detect_negative", 1)
    x, o = cv.inp(node, 0), cv.out(node)
    if pos and neg:
        cv.emit("equal", [cv.emit("abs", [x], hint=o + "_abs"), _k(cv, node, np.inf, "inf")], outs=o)
    elif pos or neg:
        cv.emit("equal", [x, _k(cv, node, np.inf if pos else -np.inf, "inf")], outs=o)
    else:  # nothing is detected: all false
        nan = cv.emit("notEqual", [x, x], hint=o + "_nan")
        cv.emit("logicalAnd", [nan, cv.emit("equal", [x, x], hint=o + "_num")], outs=o)


@op("BitShift")
def bit_shift(cv, node):
    """x * 2^y (LEFT) or x / 2^y (RIGHT) in x's unsigned type: the power
    wraps to 0 at the type's width, so a shift by the width or more gives
    0 either way (x / 0 is 0 in berth's integer division)."""
    o = cv.out(node)
    dt = cv.np_dtype(node.input[0])
    if dt.kind != "u":
        raise Unsupported("BitShift on %s (unsigned integers)" % dt)
    direction = attrs_of(node).get("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise Unsupported("direction '%s' (LEFT or RIGHT)" % direction)
    p = cv.emit("pow", [cv.const(np.array(2, dt), o + "_two"), cv.inp(node, 1)], hint=o + "_pow2")
    cv.emit("mul" if direction == "LEFT" else "div", [cv.inp(node, 0), p], outs=o)
