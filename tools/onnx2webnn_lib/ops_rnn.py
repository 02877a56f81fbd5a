"""RNN, GRU and LSTM, unrolled over their (static) sequence into the
WebNN ops every berth backend runs: per step a matmul with each weight's
gate rows, the gate activations and the state update. Directions forward,
reverse and bidirectional; layout 0 and 1; initial states and LSTM's
peepholes. Not supported: activations other than the defaults, clip, and
a sequence_lens shorter than the sequence (a sequence_lens known only at
run time is accepted for a sequence of one step, where it can only be
that step)."""
import numpy as np

from .core import Unsupported, attrs_of, registry

OPS, op = registry()

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}


class _Cell:
    def __init__(self, cv, node, o):
        self.cv, self.node, self.o = cv, node, o
        self.n = 0

    def name(self, tag):
        self.n += 1
        return "%s_%s%d" % (self.o, tag, self.n)

    def emit(self, op_, args, attrs=None, tag="t"):
        return self.cv.emit(op_, args, attrs, hint=self.name(tag))


def _dir_slice(c, ident, d, dims, tag):
    """Direction d of a [num_dir, ...] input, without its first dim."""
    s = c.emit("slice", [ident], {"starts": [d] + [0] * (len(dims) - 1), "sizes": [1] + dims[1:]}, tag)
    return c.cv.reshape(s, dims[1:], hint=c.name(tag + "_d"))


class _Param:
    """A weight input of the node (W, R, B or P), cut into its pieces per
    direction. A weight known at conversion (an initializer, the usual
    case) is cut and transposed here, once, into consts of their own, so
    no backend slices or transposes it on every run; one known only at
    run time gets the same pieces as ops, emitted once per direction
    (never per step)."""

    def __init__(self, c, node, i):
        self.c = c
        self.arr = c.cv.known(node.input[i])
        self.ident = c.cv.inp(node, i) if self.arr is None else None

    def rows_t(self, d, start, size, cols, tag):
        """Rows start..start+size of direction d of [num_dir, rows, cols],
        transposed to [cols, size]: what a step's matmul takes."""
        c = self.c
        if self.arr is not None:
            return c.cv.const(np.ascontiguousarray(self.arr[d, start:start + size].T), c.name(tag))
        s = c.emit("slice", [self.ident], {"starts": [d, start, 0], "sizes": [1, size, cols]}, tag)
        return c.emit("transpose", [c.cv.reshape(s, [size, cols], hint=c.name(tag + "_d"))], {"permutation": [1, 0]},
                      tag + "t")

    def part(self, d, start, size, tag):
        """Elements start..start+size of direction d of [num_dir, n]."""
        c = self.c
        if self.arr is not None:
            return c.cv.const(np.ascontiguousarray(self.arr[d, start:start + size]), c.name(tag))
        s = c.emit("slice", [self.ident], {"starts": [d, start], "sizes": [1, size]}, tag)
        return c.cv.reshape(s, [size], hint=c.name(tag + "_d"))


@op("RNN", "GRU", "LSTM")
def recurrent(cv, node):
    kind, a = node.op_type, attrs_of(node)
    o = cv.out(node, 1) if len(node.output) > 1 and node.output[1] else cv.out(node)
    c = _Cell(cv, node, o)
    acts = list(a.get("activations", []))
    direction = a.get("direction", "forward")
    ndir = 2 if direction == "bidirectional" else 1
    if acts and acts != _DEFAULT_ACTS[kind] * ndir:
        raise Unsupported("activations %s (the defaults %s are supported)" % (acts, _DEFAULT_ACTS[kind]))
    if "clip" in a:
        raise Unsupported("clip is not supported")
    if kind == "LSTM" and a.get("input_forget", 0):
        raise Unsupported("input_forget=1 is not supported")
    layout = int(a.get("layout", 0))
    H, G = int(a["hidden_size"]), _GATES[kind]
    xd = cv.static_dims(node.input[0], kind)
    seq, batch, inp = (xd[1], xd[0], xd[2]) if layout else (xd[0], xd[1], xd[2])
    c.batch = batch
    dtype = cv.np_dtype(node.input[0])
    if cv.has(node, 4):
        lens = cv.known(node.input[4])
        if lens is None and seq != 1:
            raise Unsupported("sequence_lens known only at run time (accepted for one step, found %d)" % seq)
        if lens is not None and np.any(np.asarray(lens) != seq):
            raise Unsupported("sequence_lens shorter than the sequence (%s of %d steps)" % (list(lens), seq))
    x = cv.inp(node, 0)
    if layout:
        x = c.emit("transpose", [x], {"permutation": [1, 0, 2]}, "x_seq_first")
    W, R = _Param(c, node, 1), _Param(c, node, 2)
    B = _Param(c, node, 3) if cv.has(node, 3) else None
    h0 = cv.inp(node, 5) if cv.has(node, 5) else None
    c0 = cv.inp(node, 6) if kind == "LSTM" and cv.has(node, 6) else None
    P = _Param(c, node, 7) if kind == "LSTM" and cv.has(node, 7) else None
    zeros = cv.const(np.zeros([batch, H], dtype), o + "_zero_state")
    ys, hs, cs = [], [], []
    for d in range(ndir):
        reverse = direction == "reverse" or d == 1
        wt = W.rows_t(d, 0, G * H, inp, "wt")
        if kind == "GRU":  # the z, r gates' recurrence is one matmul, the h gate's another
            rt = (R.rows_t(d, 0, 2 * H, H, "r_zr"), R.rows_t(d, 2 * H, H, H, "r_h"))
        else:
            rt = R.rows_t(d, 0, G * H, H, "rt")
        wb = rb = None
        if B is not None:
            wb = B.part(d, 0, G * H, "wb")
            if kind == "GRU":
                rb = (B.part(d, G * H, 2 * H, "rb_zr"), B.part(d, G * H + 2 * H, H, "rb_h"))
            else:
                rb = B.part(d, G * H, G * H, "rb")
        h = _dir_slice(c, h0, d, [ndir, batch, H], "h0") if h0 is not None else zeros
        cell = _dir_slice(c, c0, d, [ndir, batch, H], "c0") if c0 is not None else zeros
        peep = [P.part(d, k * H, H, "peep") for k in range(3)] if P is not None else None
        steps = [None] * seq
        for t in (range(seq - 1, -1, -1) if reverse else range(seq)):
            xt = cv.reshape(c.emit("slice", [x], {"starts": [t, 0, 0], "sizes": [1, batch, inp]}, "xt"),
                            [batch, inp], hint=c.name("xt2"))
            gx = c.emit("matmul", [xt, wt], None, "gx")
            if wb is not None:
                gx = c.emit("add", [gx, wb], None, "gxb")
            if kind == "RNN":
                gh = c.emit("matmul", [h, rt], None, "gh")
                if rb is not None:
                    gh = c.emit("add", [gh, rb], None, "ghb")
                h = c.emit("tanh", [c.emit("add", [gx, gh], None, "pre")], None, "h")
            elif kind == "GRU":
                h = _gru_step(c, gx, h, rt, rb, H, a)
            else:
                h, cell = _lstm_step(c, gx, h, cell, rt, rb, peep, H)
            steps[t] = h
        ys.append(c.emit("concat", [[cv.reshape(s, [1, 1, batch, H], hint=c.name("y4")) for s in steps]], {"axis": 0},
                         "y_dir"))
        hs.append(cv.reshape(h, [1, batch, H], hint=c.name("yh")))
        cs.append(cv.reshape(cell, [1, batch, H], hint=c.name("yc")))
    outs = {0: (ys, 1, [2, 0, 1, 3]), 1: (hs, 0, [1, 0, 2]), 2: (cs, 0, [1, 0, 2])}
    for i, (parts, axis, perm) in outs.items():
        if i >= len(node.output) or not node.output[i] or (i == 2 and kind != "LSTM"):
            continue
        v = parts[0] if ndir == 1 else c.emit("concat", [parts], {"axis": axis}, "both")
        if layout:
            v = c.emit("transpose", [v], {"permutation": perm}, "batch_first")
        cv.emit("identity", [v], outs=cv.out(node, i))


def _gate(c, m, k, H):
    """Gate k (H columns) of a [batch, gates * H] value."""
    return c.emit("slice", [m], {"starts": [0, k * H], "sizes": [c.batch, H]}, "gate")


def _gru_step(c, gx, h, rt, rb, H, a):
    lbr = int(a.get("linear_before_reset", 0))
    cv = c.cv
    r_zr, r_h = rt
    ghz = c.emit("matmul", [h, r_zr], None, "gh_zr")
    rb_zr, rb_h = rb if rb is not None else (None, None)
    if rb_zr is not None:
        ghz = c.emit("add", [ghz, rb_zr], None, "gh_zrb")
    z = c.emit("sigmoid", [c.emit("add", [_gate(c, gx, 0, H), _gate(c, ghz, 0, H)], None, "zpre")], None, "z")
    r = c.emit("sigmoid", [c.emit("add", [_gate(c, gx, 1, H), _gate(c, ghz, 1, H)], None, "rpre")], None, "r")
    if lbr:
        hh = c.emit("matmul", [h, r_h], None, "hr")
        if rb_h is not None:
            hh = c.emit("add", [hh, rb_h], None, "hrb")
        hh = c.emit("mul", [r, hh], None, "rhr")
    else:
        hh = c.emit("matmul", [c.emit("mul", [r, h], None, "rh"), r_h], None, "rhr")
        if rb_h is not None:
            hh = c.emit("add", [hh, rb_h], None, "rhrb")
    n = c.emit("tanh", [c.emit("add", [_gate(c, gx, 2, H), hh], None, "npre")], None, "n")
    one = cv.scalar(1.0, c.node.input[0], c.name("one"))
    keep = c.emit("mul", [z, h], None, "keep")
    new = c.emit("mul", [c.emit("sub", [one, z], None, "1mz"), n], None, "new")
    return c.emit("add", [new, keep], None, "h")


def _lstm_step(c, gx, h, cell, rt, rb, peep, H):
    g = c.emit("add", [gx, c.emit("matmul", [h, rt], None, "gh")], None, "g")
    if rb is not None:
        g = c.emit("add", [g, rb], None, "gb")
    pre_i, pre_o, pre_f, pre_c = (_gate(c, g, k, H) for k in range(4))  # ONNX's order: i, o, f, c
    if peep is not None:
        p_i, p_o, p_f = peep
        pre_i = c.emit("add", [pre_i, c.emit("mul", [p_i, cell], None, "pi")], None, "ip")
        pre_f = c.emit("add", [pre_f, c.emit("mul", [p_f, cell], None, "pf")], None, "fp")
    i = c.emit("sigmoid", [pre_i], None, "i")
    f = c.emit("sigmoid", [pre_f], None, "f")
    cc = c.emit("tanh", [pre_c], None, "cc")
    cell = c.emit("add", [c.emit("mul", [f, cell], None, "fc"), c.emit("mul", [i, cc], None, "ic")], None, "c")
    if peep is not None:
        pre_o = c.emit("add", [pre_o, c.emit("mul", [p_o, cell], None, "po")], None, "op")
    o = c.emit("sigmoid", [pre_o], None, "o")
    h = c.emit("mul", [o, c.emit("tanh", [cell], None, "tc")], None, "h")
    return h, cell
