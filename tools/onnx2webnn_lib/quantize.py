"""Weight-only quantization (--quantize int8|int4).

Float32 weights (initializers and Constant nodes) read as MatMul's B
[K, N], Gemm's B, or a Gather table [V, D] on axis 0 are stored as 8- or
4-bit integers in blocks of `block` values along the reduction axis (K
for matrix products, D for gathers), each block with a float32 scale and
a zero point. The graph
gets three consts per weight, q, scale and zero, and the readers read
`dequantizeLinear(q, scale, zero)` instead of the float weight.

plan() picks the weights before the walk; the MatMul, Gemm and Gather
handlers call operand(), which declares the consts once per weight and
layout and emits a dequantizeLinear per reader: the engine fuses
dequantizeLinear into berth.matmulQuantized and berth.gatherQuantized only
where the dequantized value has one reader (include/berth/ops.def).
"""
import fnmatch

import numpy as np

from .core import attrs_of, tensor_value

# (q dtype in .webnn, numpy dtype of the values, lowest, highest)
FORMATS = {
    ("int8", False): ("i8", np.int8, -127, 127),
    ("int4", False): ("i4", np.int8, -8, 7),
    ("int8", True): ("u8", np.uint8, 0, 255),
    ("int4", True): ("u4", np.uint8, 0, 15),
}
PACKED_KEY = "rustnn.webnn.packed4"  # the archive's marker for 4-bit entries


SCALES = ("absmax", "mse")
# --scale mse: each block's scale is the absmax one times the factor of
# this list that gives the least squared error (the first on a tie).
# 7/8 lets int4 reach -8 with the block's largest magnitude.
SHRINK = [np.float32(1 - 0.02 * i) for i in range(21)] + [np.float32(7 / 8)]


class Options:
    def __init__(self, kind, block=32, asymmetric=False, scale="absmax", int8=()):
        if kind not in ("int8", "int4"):
            raise ValueError("--quantize: expected int8 or int4, found '%s'" % kind)
        if block < 1:
            raise ValueError("--block: expected >= 1, found %d" % block)
        if scale not in SCALES:
            raise ValueError("--scale: expected absmax or mse, found '%s'" % scale)
        if int8 and kind != "int4":
            raise ValueError("--int8 needs --quantize int4 (it keeps some weights 8-bit among 4-bit ones)")
        self.kind, self.block, self.asymmetric, self.scale = kind, block, asymmetric, scale
        self.int8 = list(int8)  # fnmatch patterns of ONNX weight names kept 8-bit
        self._int8 = None
        self.name = ("u" if asymmetric else "") + kind  # int8, uint4, ...
        self.dtype, self.np, self.lo, self.hi = FORMATS[(kind, asymmetric)]
        self.bits = 8 if kind == "int8" else 4

    def of(self, name):
        """The options for weight `name`: these, or where an --int8
        pattern matches it, symmetric int8 of the same block and scale
        rule (8 bits need no zero point: it would cost a byte a block)."""
        if any(fnmatch.fnmatchcase(name, p) for p in self.int8):
            if self._int8 is None:
                self._int8 = Options("int8", self.block, False, self.scale)
            return self._int8
        return self


def quantize(w, axis, opts):
    """w: a float32 matrix; blocks of opts.block values run along `axis`.
    Returns (q, scale, zero): q of w's shape, scale and zero with the
    block axis shrunk to shape[axis] / block. Arithmetic is float32 so that
    a reader can redo it bit for bit."""
    w = np.asarray(w, np.float32)
    b = opts.block
    r, c = w.shape
    wb = w.reshape(r // b, b, c) if axis == 0 else w.reshape(r, c // b, b)
    red = 1 if axis == 0 else 2
    if opts.asymmetric:
        lo = np.minimum(wb.min(axis=red), np.float32(0))  # 0 must be exact
        hi = np.maximum(wb.max(axis=red), np.float32(0))
        scale = (hi - lo) / np.float32(opts.hi)
        scale = np.where(hi == lo, np.float32(1), scale).astype(np.float32)
        zero = np.clip(np.round(-lo / scale), 0, opts.hi)
    else:
        amax = np.abs(wb).max(axis=red)
        # int8 uses -127..127 (symmetric about 0), int4 -7..7 of -8..7
        scale = np.where(amax == 0, np.float32(1), amax / np.float32(opts.hi)).astype(np.float32)
        zero = np.zeros_like(scale)
    ex = np.expand_dims
    if opts.scale == "mse":
        scale = _least_error(wb, red, scale, zero, opts)
    q = np.round(wb / ex(scale, red)) + ex(zero, red)
    q = np.clip(q, opts.lo, opts.hi).reshape(w.shape).astype(opts.np)
    return q, scale, zero.astype(opts.np)


def _least_error(wb, red, scale, zero, opts):
    """Per block, the scale of absmax_scale * f, f in SHRINK, whose
    quantize-dequantize round trip has the least squared error: a
    smaller scale clips the few largest values and rounds the many others
    finer. The zero point stays: it keeps 0 exact."""
    ex = np.expand_dims
    z = ex(zero, red)
    flat = np.abs(wb).max(axis=red) == 0  # an all-zero block keeps scale 1
    best, best_err = scale, None
    for f in SHRINK:
        s = np.where(flat, scale, scale * f).astype(np.float32)
        q = np.clip(np.round(wb / ex(s, red)) + z, opts.lo, opts.hi)
        err = np.square((q - z) * ex(s, red) - wb).sum(axis=red, dtype=np.float32)
        if best_err is None:
            best_err = err
        else:
            better = err < best_err
            best = np.where(better, s, best).astype(np.float32)
            best_err = np.where(better, err, best_err)
    return best


def pack4(q):
    """4-bit values two per byte, low nibble first, row-major; an odd count
    leaves the last byte's high nibble 0."""
    flat = (q.reshape(-1).astype(np.int16) & 0xF).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    return (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8)


# ---- which weights ------------------------------------------------------

def _reader(node, name, rank, dims):
    """How `node` reads initializer `name`: (layout, reduction length) when
    it may read the dequantized weight, else a reason it may not. Layouts:
    "kn" [K, N] blocked along K; "t" Gemm's [N, K] stored transposed as
    [K, N]; "rows" a gather table [V, D] blocked along D."""
    ins = list(node.input)
    op = node.op_type
    if op == "MatMul" and ins[1:2] == [name] and ins[0] != name:
        return ("kn", dims[0]) if rank == 2 else "MatMul's B is rank %d, not 2" % rank
    if op == "Gemm" and ins[1:2] == [name] and name not in ins[:1] + ins[2:]:
        a = attrs_of(node)
        alpha, beta, ta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0)), int(a.get("transA", 0))
        has_c = len(ins) > 2 and ins[2] != ""
        if ta or alpha != 1.0 or (has_c and beta != 1.0):
            return ("Gemm '%s' has alpha %g, beta %g, transA %d (it becomes matmul + add only with 1, 1, 0)"
                    % (node.name or node.output[0], alpha, beta, ta))
        return ("t", dims[1]) if a.get("transB", 0) else ("kn", dims[0])
    if op == "Gather" and ins[0] == name and name not in ins[1:]:
        axis = int(attrs_of(node).get("axis", 0))
        if rank != 2 or axis % rank != 0:
            return "Gather reads it as a rank-%d table on axis %d, not a rank-2 one on axis 0" % (rank, axis)
        return ("rows", dims[1])
    return "%s '%s' reads it too" % (op, node.name or node.output[0])


def _subgraph_names(node, found):
    """Every value name read inside node's subgraphs (If, Loop, Scan)."""
    for a in node.attribute:
        for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
            for n in g.node:
                found.update(n.input)
                _subgraph_names(n, found)


def plan(graph, consts, opts):
    """The set of weights (initializers and Constant outputs) to quantize,
    and notes: one line per candidate weight that stays float, and why."""
    readers, inner = {}, set()
    for n in graph.node:
        for i in set(n.input):
            readers.setdefault(i, []).append(n)
        _subgraph_names(n, inner)
    outputs = {o.name for o in graph.output}
    # Candidates: weights in a position quantization serves. Constant nodes
    # holding a tensor count too: some exporters (paddle2onnx) write every
    # weight so.
    served = lambda name: any(  # noqa: E731
        (n.op_type in ("MatMul", "Gemm") and list(n.input[1:2]) == [name])
        or (n.op_type == "Gather" and n.input[0] == name) for n in readers.get(name, []))
    weights = [(t.name, lambda t=t: consts.get(t.name)) for t in graph.initializer]
    weights += [(n.output[0], lambda n=n: tensor_value(n.attribute[0].t)) for n in graph.node
                if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value"]
    chosen, notes = set(), []
    for name, value in weights:
        if not served(name):
            continue
        w, nodes, why = value(), readers[name], None
        if w is None or w.dtype != np.float32:
            continue
        if name in inner or name in outputs:
            why = "a subgraph or a graph output reads it"
        for n in nodes:
            if why:
                break
            r = _reader(n, name, w.ndim, w.shape)
            if isinstance(r, str):
                why = r
            elif r[1] % opts.block:
                why = "its reduction length %d is not a multiple of the block %d" % (r[1], opts.block)
        if why:
            notes.append("'%s' %s stays float32: %s" % (name, list(w.shape), why))
        else:
            chosen.add(name)
    for p in opts.int8:
        if not any(fnmatch.fnmatchcase(name, p) for name in chosen):
            raise ValueError("--int8 '%s' matches no weight that is quantized (%d are: %s)"
                             % (p, len(chosen), ", ".join(sorted(chosen)[:8]) + (", ..." if len(chosen) > 8 else "")))
    return chosen, notes


# ---- emission -------------------------------------------------------------

class State:
    """Per conversion: the options, the plan, the consts declared so far,
    and the byte counts of the summary."""

    def __init__(self, opts, chosen):
        self.opts, self.chosen = opts, chosen
        self.declared = {}  # (initializer, layout) -> (q, scale, zero) identifiers
        self.count = 0
        self.count8 = 0  # of them 8-bit by --int8
        self.float_bytes = 0  # the quantized weights as float32
        self.quant_bytes = 0  # their q, scale and zero in the archive


def _declare(cv, ident, dtype, shape, arr, archived=True):
    dims = "[" + ", ".join(str(int(d)) for d in shape) + "]"
    if not archived:  # every element is arr (a zero point of 0)
        cv.const_lines.append("    %s: %s%s @scalar(%d);" % (ident, dtype, dims, int(arr)))
        return 0
    cv.weights.append((ident, arr))
    cv.const_lines.append('    %s: %s%s @weights("%s");' % (ident, dtype, dims, ident))
    return arr.nbytes


def _consts(cv, name, layout):
    st = cv.quant
    key = (name, layout)
    if key in st.declared:
        return st.declared[key]
    o = st.opts.of(name)
    w = cv.consts[name]
    if layout == "t":
        w = np.ascontiguousarray(w.T)
    axis = 1 if layout == "rows" else 0
    q, scale, zero = quantize(w, axis, o)
    hint = name if layout != "t" else name + "_t"
    qi, si, zi = cv.fresh(hint + ".q"), cv.fresh(hint + ".scale"), cv.fresh(hint + ".zero")
    # 4-bit entries are bytes in the archive; the const keeps the logical
    # dtype and shape, and the archive's marker says how to read them.
    nbytes = _declare(cv, qi, o.dtype, q.shape, pack4(q) if o.bits == 4 else q)
    nbytes += _declare(cv, si, "f32", scale.shape, scale)
    if o.asymmetric:
        nbytes += _declare(cv, zi, o.dtype, zero.shape, pack4(zero) if o.bits == 4 else zero)
    else:  # all zeros: @scalar(0) costs no archive bytes
        _declare(cv, zi, o.dtype, zero.shape, 0, archived=False)
    st.count += 1
    st.count8 += o is not st.opts
    st.float_bytes += w.nbytes
    st.quant_bytes += nbytes
    st.declared[key] = (qi, si, zi)
    return st.declared[key]


def operand(cv, node, i):
    """The identifier of a dequantized weight for node's input i when the
    plan quantizes it, else None (the caller reads the float value)."""
    st = cv.quant
    if st is None or i >= len(node.input) or node.input[i] not in st.chosen:
        return None
    name = node.input[i]
    w = cv.consts[name]
    layout = _reader(node, name, w.ndim, w.shape)[0]
    q, s, z = _consts(cv, name, layout)
    return cv.emit("dequantizeLinear", [q, s, z], hint=(name if layout != "t" else name + "_t") + "_deq")
