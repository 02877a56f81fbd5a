"""The loss functions, NegativeLogLikelihoodLoss and
SoftmaxCrossEntropyLoss: models evaluated with their loss attached (and
ONNX's node tests) use them outside training too. Spelled with gathers,
masks and reductions."""
import numpy as np

from .core import Unsupported, attrs_of, registry

OPS, op = registry()


def nll(cv, node, logp, x_name, out, o):
    """loss[n, d...] = -logp[n, t, d...] * w[t], t = target[n, d...];
    a target equal to ignore_index gives 0 and counts no weight. `mean`
    divides the sum by the weight counted (the count of targets not
    ignored when there is no weight), as ONNX defines it."""
    a = attrs_of(node)
    reduction = a.get("reduction", "mean")
    if reduction not in ("none", "sum", "mean"):
        raise Unsupported("reduction '%s' (none, sum or mean)" % reduction)
    dt = cv.np_dtype(x_name)
    r = cv.rank(x_name)
    if r < 2:
        raise Unsupported("the input must have rank 2 or more (N, C, d...), found rank %d" % r)
    t = cv.inp(node, 1)
    ignored = None
    if "ignore_index" in a:
        # An ignored target may lie outside 0..C-1: gather at 0 instead.
        ii = cv.const(np.array(int(a["ignore_index"]), cv.np_dtype(node.input[1])), o + "_ignore_index")
        ignored = cv.emit("equal", [t, ii], hint=o + "_ignored")
        zero = cv.const(np.array(0, cv.np_dtype(node.input[1])), o + "_zero_index")
        t = cv.emit("where", [ignored, zero, t], hint=o + "_target")
    picked = cv.emit("gatherElements", [logp, cv.emit("unsqueeze", [t], {"axes": [1]}, hint=o + "_target_c")],
                     {"axis": 1}, hint=o + "_picked")
    loss = cv.emit("neg", [cv.emit("squeeze", [picked], {"axes": [1]}, hint=o + "_picked_nd")], hint=o + "_neg")
    w = None
    if cv.has(node, 2):
        w = cv.emit("gather", [cv.inp(node, 2), t], {"axis": 0}, hint=o + "_w")
    if ignored is not None:
        zero_w = cv.const(np.array(0, dt), o + "_zero_w")
        w = cv.emit("where", [ignored, zero_w, w if w is not None else cv.const(np.array(1, dt), o + "_one_w")],
                    hint=o + "_w_kept")
    if w is not None:
        loss = cv.emit("mul", [loss, w], hint=o + "_weighted")
    all_axes = {"axes": list(range(r - 1)), "keepDimensions": False}
    if reduction == "none":
        cv.emit("identity", [loss], outs=out)
    elif reduction == "sum":
        cv.emit("reduceSum", [loss], all_axes, outs=out)
    elif w is None:
        cv.emit("reduceMean", [loss], all_axes, outs=out)
    else:
        cv.emit("div", [cv.emit("reduceSum", [loss], all_axes, hint=o + "_sum"),
                        cv.emit("reduceSum", [w], all_axes, hint=o + "_w_sum")], outs=out)


@op("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(cv, node):
    nll(cv, node, cv.inp(node, 0), node.input[0], cv.out(node), cv.out(node))


@op("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(cv, node):
    """log_prob = x - max - log(sum(exp(x - max))) along the classes
    (stable where log(softmax) underflows to -inf), then the NLL loss."""
    x, o = cv.inp(node, 0), cv.out(node)
    keep = {"axes": [1], "keepDimensions": True}
    shifted = cv.emit("sub", [x, cv.emit("reduceMax", [x], keep, hint=o + "_max")], hint=o + "_shifted")
    lse = cv.emit("log", [cv.emit("reduceSum", [cv.emit("exp", [shifted], hint=o + "_exp")], keep, hint=o + "_sum_exp")],
                  hint=o + "_log_sum_exp")
    want_lp = len(node.output) > 1 and node.output[1]
    logp = cv.emit("sub", [shifted, lse], outs=cv.out(node, 1) if want_lp else None, hint=o + "_log_prob")
    nll(cv, node, logp, node.input[0], o, o)
