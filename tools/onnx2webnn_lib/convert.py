"""ONNX model -> .webnn v2 text + archive tensors.

convert() walks the graph once: graph inputs become `inputs` (symbolic
dims become dyn(...)), initializers and Constant nodes become known
values, shape arithmetic over known values is folded here, and every
other node goes to its handler in OPS. Errors are collected, not raised
one at a time, so a model's every unsupported op is listed in one go."""
import copy
import json

import numpy as np
import onnx

from . import (bn_fold, fold, infer, ops_basic, ops_composed, ops_control, ops_einsum, ops_integer, ops_loss, ops_nn,
               ops_rnn, ops_sample, ops_shape, ops_signal, ops_text, quantize)
from .core import DTYPES, Converter, Poisoned, Unsupported, attrs_of, elem_name, tensor_value
from .dyn_range import DynRanges, MetadataError, dyn_name

OPS = {}
for _m in (ops_basic, ops_composed, ops_control, ops_einsum, ops_integer, ops_loss, ops_nn, ops_rnn, ops_sample,
           ops_shape, ops_signal, ops_text):
    OPS.update(_m.OPS)

# The converter targets opsets 9 to 17. Older models are taken too: most
# ops still mean at opset 1 what they mean today, and _legacy() rejects by
# name the forms that do not (binary ops' broadcast with axis, ...).
MIN_OPSET, MAX_OPSET = 1, 17

# Inputs WebNN takes as host-known data (shapes, axes, pads, ...), by op.
HOST_POSITIONS = {
    "Reshape": (1,), "Expand": (1,), "Tile": (1,), "ConstantOfShape": (0,), "Slice": (1, 2, 3, 4),
    "Pad": (1, 2, 3), "Resize": (1, 2, 3), "Upsample": (1,), "Split": (1,), "Unsqueeze": (1,),
    "Squeeze": (1,), "CumSum": (1,), "Trilu": (1,), "Range": (0, 1, 2), "Dropout": (1, 2),
    "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,), "ReduceProd": (1,),
    "ReduceL1": (1,), "ReduceL2": (1,), "ReduceLogSum": (1,), "ReduceLogSumExp": (1,),
    "ReduceSumSquare": (1,), "TopK": (1,), "OneHot": (1,), "DFT": (1,), "STFT": (1, 3), "HannWindow": (0,),
    "HammingWindow": (0,), "BlackmanWindow": (0,), "MelWeightMatrix": (0, 1, 2, 3, 4), "MaxUnpool": (2,),
}


def host_inputs(model):
    """Graph inputs whose values reach a host-known position (a Reshape's
    shape, TopK's K, a window's size), directly or through arithmetic the
    converter folds: a caller that knows their values (the conformance
    run) passes them as `freeze`."""
    names = {i.name for i in model.graph.input}
    producer = {o: n for n in model.graph.node for o in n.output}
    found, seen = [], set()
    work = [n.input[k] for n in model.graph.node for k in HOST_POSITIONS.get(n.op_type, ()) if k < len(n.input)]
    while work:
        v = work.pop(0)
        if not v or v in seen:
            continue
        seen.add(v)
        if v in names:
            found.append(v)
        elif v in producer and producer[v].op_type in fold.FOLDABLE:
            work.extend(producer[v].input)
    return found


def freeze_values(model, texts):
    """{input: "16000" or "1,2,3"} -> {input: ndarray} in the dtype the
    model declares for the input, shaped as it declares (a scalar, or a
    1-D list); raises ValueError naming the input and what is wrong."""
    decl = {i.name: i for i in model.graph.input}
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for name, text in texts.items():
        if name not in decl or name in inits:
            raise ValueError("--freeze names '%s', which is not a graph input (inputs: %s)"
                             % (name, ", ".join(sorted(set(decl) - inits))))
        tt = decl[name].type.tensor_type
        if tt.elem_type not in DTYPES:
            raise ValueError("--freeze %s: its dtype %s is not supported" % (name, elem_name(tt.elem_type)))
        npt = DTYPES[tt.elem_type][1]
        try:
            vals = [float(v) if npt.kind == "f" else int(v, 0) for v in text.split(",")]
        except ValueError:
            raise ValueError("--freeze %s: expected %s numbers split by commas, found '%s'"
                             % (name, npt.name, text)) from None
        if npt == np.bool_:
            vals = [v != 0 for v in vals]
        arr = np.array(vals, dtype=npt)
        if tt.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
            if len(dims) == 0:
                if arr.size != 1:
                    raise ValueError("--freeze %s: the input is a scalar, found %d values" % (name, arr.size))
                arr = arr.reshape(())
            elif len(dims) == 1 and dims[0] in (None, arr.size):
                pass
            elif None not in dims and int(np.prod(dims)) == arr.size:
                arr = arr.reshape(dims)
            else:
                raise ValueError("--freeze %s: the input's shape is %s, found %d value%s"
                                 % (name, ["?" if d is None else d for d in dims], arr.size,
                                    "" if arr.size == 1 else "s"))
        out[name] = arr
    return out


class ConversionError(Exception):
    def __init__(self, errors):
        self.errors = errors
        lines = ["%s node '%s': %s" % e for e in errors]
        super().__init__("%d unsupported node%s:\n  %s" % (len(errors), "" if len(errors) == 1 else "s",
                                                          "\n  ".join(lines)))


class Result:
    def __init__(self, text, weights, inputs, outputs, syms, folded_bn=0, folded_affine=0, quant=None, notes=(),
                 dyn_lines=(), dyn_warnings=()):
        self.text = text  # the .webnn file
        self.weights = weights  # [(name, ndarray)] for the .safetensors
        self.inputs = inputs  # [(onnx name, identifier)]
        self.outputs = outputs  # [(onnx name, identifier)]
        self.syms = syms  # {dyn name: max}
        self.folded_bn = folded_bn  # BatchNormalizations folded into their convolutions
        self.folded_affine = folded_affine  # Mul and Add by constants folded likewise
        self.quant = quant  # quantize.State (counts and bytes) when weights were quantized
        self.notes = list(notes)  # lines about weights that stayed float, and why
        # values whose dims were inferred here and by ONNX, and those where
        # the two differ: (value, ONNX's dims, the converter's)
        self.shape_checked, self.shape_mismatch, self.shape_unknown = 0, [], []
        self.dyn_lines = list(dyn_lines)  # one per dyn dim: its max and where it came from (dyn_range.py)
        self.dyn_warnings = list(dyn_warnings)  # dyn names given different sizes, or standing for several dims
        # what the archive's __metadata__ must carry
        self.metadata = {quantize.PACKED_KEY: "1"} if quant and quant.count and quant.opts.bits == 4 else {}


def _declare_inputs(cv, frozen, ranges):
    g = cv.model.graph
    inits = {t.name for t in g.initializer} | set(frozen)
    inputs = []
    for inp in g.input:
        if inp.name in inits:
            continue
        et, dims = cv.info.get(inp.name, (None, None))
        if et not in DTYPES:
            cv.errors.append(("(graph input)", inp.name, "dtype %s is not supported"
                              % (elem_name(et) if et else "unknown")))
            cv.poisoned.add(inp.name)
            continue
        if dims is None:
            cv.errors.append(("(graph input)", inp.name, "has no shape; give one with --input-shape"))
            cv.poisoned.add(inp.name)
            continue
        ident = cv.fresh(inp.name)
        cv.ident[inp.name] = ident
        parts = []
        for k, d in enumerate(dims):
            if isinstance(d, int):
                parts.append(str(d))
                continue
            sym = dyn_name(d if isinstance(d, str) else "%s_%d" % (ident, k))
            mx = cv.syms[sym] = ranges.max_of(sym, d if isinstance(d, str) else None, inp.name, k)
            parts.append('dyn(%s, %d)' % (json.dumps(sym), mx))
        cv.input_lines.append("    %s: %s[%s];" % (ident, DTYPES[et][0], ", ".join(parts)))
        inputs.append((inp.name, ident))
    return inputs


def _legacy(cv, node):
    """Forms of opsets before 7 that numpy broadcasting does not cover."""
    if cv.opset >= 7:
        return
    a = attrs_of(node)
    if a.get("broadcast", 0) and "axis" in a:
        raise Unsupported("legacy broadcast=1 with axis=%d (opset %d)" % (a["axis"], cv.opset))
    if node.op_type == "BatchNormalization" and a.get("spatial", 1) != 1:
        raise Unsupported("spatial=0 (opset %d) is not supported" % cv.opset)
    if node.op_type == "Dropout" and not a.get("is_test", 0):
        raise Unsupported("is_test=0 is training dropout (opset %d)" % cv.opset)
    if node.op_type == "Tile" and len(node.input) > 2:
        raise Unsupported("the tiles/axis form (opset %d) is not supported" % cv.opset)


# Ops refused for a reason that is not a missing spelling: the reason.
_DATA_SHAPE = "its output's shape depends on the values of its inputs, and WebNN plans static shapes"
REFUSED = {
    "Compress": _DATA_SHAPE + " (a constant condition is converted)",
    "Unique": _DATA_SHAPE + " (how many distinct values)",
    "NonZero": _DATA_SHAPE + " (how many nonzero elements)",
    "NonMaxSuppression": _DATA_SHAPE + " (how many boxes survive)",
    "Bernoulli": "random sampling: no generator reproduces the reference's numbers",
    "RandomUniform": "random sampling: no generator reproduces the reference's numbers",
    "RandomUniformLike": "random sampling: no generator reproduces the reference's numbers",
    "RandomNormal": "random sampling: no generator reproduces the reference's numbers",
    "RandomNormalLike": "random sampling: no generator reproduces the reference's numbers",
    "Multinomial": "random sampling: no generator reproduces the reference's numbers",
}


def convert_node(cv, node):
    """One node: folded, or emitted by its handler; raises Unsupported."""
    if node.domain not in ("", "ai.onnx"):
        raise Unsupported("op domain '%s' is not supported" % node.domain)
    _legacy(cv, node)
    if fold.try_fold(cv, node):
        for o in node.output:
            if o in cv.consts:
                infer.check(cv, o, list(cv.consts[o].shape))
        return
    infer.fill(cv, node)
    handler = OPS.get(node.op_type)
    if handler is None:
        raise Unsupported("op type '%s' is not supported%s" % (node.op_type, ": " + REFUSED[node.op_type]
                                                                if node.op_type in REFUSED else ""))
    handler(cv, node)
    for o in node.output:
        if o and o not in cv.ident and o not in cv.consts:
            raise Unsupported("output '%s' is not supported" % o)


def _walk(cv):
    for idx, node in enumerate(cv.model.graph.node):
        cv._index = idx
        cv.node = node
        try:
            convert_node(cv, node)
        except Poisoned:
            for o in node.output:
                cv.poisoned.add(o)
        except Unsupported as e:
            cv.fail(node, str(e))


def _outputs(cv):
    outs = []
    for o in cv.model.graph.output:
        if o.name in cv.poisoned:
            continue
        try:
            if o.name in cv.ident and o.name not in cv.consts:
                outs.append((o.name, cv.ident[o.name]))
                continue
            if o.name not in cv.consts:
                raise Unsupported("graph output '%s' is produced by no node" % o.name)
            # A known output still has to be a node's result in .webnn.
            src = cv.const(cv.consts[o.name], o.name + "_value")
            outs.append((o.name, cv.emit("identity", [src], hint=o.name)))
        except Unsupported as e:
            cv.errors.append(("(graph output)", o.name, str(e)))
    return outs


def convert(model, name=None, dyn=None, dyn_default=64, input_shapes=None, freeze=None, fold_batchnorm=True,
            quant=None):
    """Returns a Result or raises ConversionError listing every problem.
    dyn: {NAME: MAX} for symbolic input dims; a dim it does not name takes
    its max from the model where the model states one, else dyn_default
    (dyn_range.py); Result.dyn_lines says, per dim, which.
    freeze: {graph input: ndarray} inputs turned into constants.
    fold_batchnorm: fold BatchNormalization, and Mul and Add by per-channel
    constants, into the Conv before them (bn_fold.py); the caller's model
    is not changed.
    quant: a quantize.Options to store MatMul, Gemm and Gather weights
    as blocks of 8- or 4-bit integers (quantize.py)."""
    freeze = dict(freeze or {})
    if fold_batchnorm and any(n.op_type in ("BatchNormalization", "Mul", "Add") for n in model.graph.node):
        model = copy.deepcopy(model)
    input_shapes = dict(input_shapes or {})
    for k, arr in freeze.items():
        input_shapes[k] = list(np.shape(arr))
    try:  # before Converter rewrites the inputs --input-shape fixes: their dim_params are statements
        ranges = DynRanges(model, dyn, dyn_default, input_shapes, frozen=freeze)
    except MetadataError as e:
        raise ConversionError([("(model)", "metadata_props", str(e))])
    cv = Converter(model, dyn=dyn, dyn_default=dyn_default, input_shapes=input_shapes)
    cv.convert_node = lambda node: convert_node(cv, node)  # for the bodies of control flow
    if not MIN_OPSET <= cv.opset <= MAX_OPSET:
        raise ConversionError([("(model)", "opset", "opset %d is outside %d..%d"
                                % (cv.opset, MIN_OPSET, MAX_OPSET))])
    for t in model.graph.initializer:
        try:
            cv.consts[t.name] = tensor_value(t)
        except Exception as e:  # e.g. external data that is missing
            cv.errors.append(("(initializer)", t.name, "cannot be read: %s" % e))
    for k, arr in freeze.items():
        cv.consts[k] = np.asarray(arr)
    folded_bn = bn_fold.fold(cv.model.graph, cv.consts) if fold_batchnorm else 0
    folded_affine = bn_fold.fold_affine(cv.model.graph, cv.consts) if fold_batchnorm else 0
    notes = []
    if quant is not None:
        chosen, notes = quantize.plan(cv.model.graph, cv.consts, quant)
        cv.quant = quantize.State(quant, chosen)
    inputs = _declare_inputs(cv, freeze, ranges)
    _walk(cv)
    outputs = _outputs(cv)
    if cv.errors:
        raise ConversionError(cv.errors)
    title = name or model.graph.name or "model"
    lines = ["# Converted from ONNX by tools/onnx2webnn (opset %d)." % cv.opset,
             "webnn_graph %s v2%s {" % (json.dumps(title), " @quantized" if cv.quant and cv.quant.count else ""),
             "  inputs {"]
    lines += cv.input_lines
    lines += ["  }", "  consts {"] + cv.const_lines + ["  }", "  nodes {"] + cv.node_lines + ["  }"]
    lines += ["  outputs { %s; }" % "; ".join(i for _, i in outputs), "}", ""]
    res = Result("\n".join(lines), cv.weights, inputs, outputs, dict(cv.syms), folded_bn, folded_affine,
                 cv.quant, notes, ranges.lines(), ranges.warnings())
    res.shape_checked, res.shape_mismatch, res.shape_unknown = cv.shape_checked, cv.shape_mismatch, cv.shape_unknown
    return res


def load(path):
    return onnx.load(path)
