"""The converter's state: ONNX value names to .webnn identifiers, the
constants it knows, the lines it emits, and the errors it collects.

Op handlers (ops_*.py) see one Converter and call its helpers; they raise
Unsupported to reject a node, and the walk goes on so that one run lists
every unsupported op of a model, not just the first."""
import collections
import json
import math
import re

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

# ONNX elem_type -> (.webnn dtype, numpy dtype, WebNN cast type name)
DTYPES = {
    onnx.TensorProto.FLOAT: ("f32", np.dtype("float32"), "float32"),
    onnx.TensorProto.FLOAT16: ("f16", np.dtype("float16"), "float16"),
    onnx.TensorProto.INT32: ("i32", np.dtype("int32"), "int32"),
    onnx.TensorProto.UINT32: ("u32", np.dtype("uint32"), "uint32"),
    onnx.TensorProto.INT64: ("i64", np.dtype("int64"), "int64"),
    onnx.TensorProto.UINT64: ("u64", np.dtype("uint64"), "uint64"),
    onnx.TensorProto.INT8: ("i8", np.dtype("int8"), "int8"),
    onnx.TensorProto.UINT8: ("u8", np.dtype("uint8"), "uint8"),
    onnx.TensorProto.BOOL: ("u8", np.dtype("bool"), "uint8"),
}
NP_TO_WEBNN = {v[1]: v[0] for v in DTYPES.values()}
NP_TO_WEBNN[np.dtype("bool")] = "u8"

# Integer constants up to this many elements are written inline (@bytes)
# so the engine knows them on the host and can fold shape math with them;
# larger ones and float tensors go to the archive.
INLINE_INT_MAX = 4096
# Folding on the converter side is for shape arithmetic; a result larger
# than this is left to the engine.
FOLD_MAX = 1 << 20


def registry():
    """A module's table of ONNX op handlers and the decorator filling it:
    OPS, op = registry(), then @op("Name", ...) above each handler."""
    ops = {}

    def op(*names):
        def reg(fn):
            for n in names:
                ops[n] = fn
            return fn
        return reg
    return ops, op


class Unsupported(Exception):
    """A node the converter cannot express; the message says what."""


class Poisoned(Exception):
    """A node whose input came from a rejected node: not reported again."""


class Ident(str):
    """An operand passed as a key=value option (bias=b)."""


def elem_name(t):
    try:
        return onnx.TensorProto.DataType.Name(t)
    except ValueError:
        return str(t)


def fmt_num(x):
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if not math.isfinite(x):
        raise Unsupported("non-finite number %r cannot be written in .webnn" % x)
    if x == int(x) and abs(x) < 1e15:
        return "%d.0" % int(x) if x != 0 or math.copysign(1, x) > 0 else "-0.0"
    return repr(x)


def fmt_attr(v):
    if isinstance(v, Ident):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt_attr(x) for x in v) + "]"
    if isinstance(v, np.ndarray):
        return fmt_attr(v.tolist())
    return fmt_num(v)


_IDENT_BAD = re.compile(r"[^A-Za-z0-9_]")
_RESERVED = {"true", "false", "null", "dyn"}


class Converter:
    def __init__(self, model, dyn=None, dyn_default=64, input_shapes=None):
        self.model = model
        self.dyn = dict(dyn or {})
        self.dyn_default = dyn_default
        self.opset = 1
        for imp in model.opset_import:
            if imp.domain in ("", "ai.onnx"):
                self.opset = imp.version
        self.errors = []  # (op_type, node name, what)
        self.consts = {}  # onnx name -> ndarray known at conversion time
        self.partial = {}  # onnx name -> object ndarray of ints and None (fold.py)
        self.ident = {}  # onnx name -> .webnn identifier of an emitted value
        self.poisoned = set()
        self.used = set()
        self.input_lines = []
        self.const_lines = []
        self.node_lines = []
        self.weights = []  # (ref, ndarray) for the archive
        self.syms = {}  # dyn name -> max
        self.sym_of_input = {}  # (input, dim) -> dyn name
        self.shape_cache = {}  # identifier -> identifier of its shape()
        self.info = {}  # onnx name -> (elem_type or None, dims list or None)
        self.node = None
        self.quant = None  # quantize.State when weights are quantized
        self.entries = 0  # bodies entered under new names (ops_control.enter)
        self._apply_input_shapes(input_shapes or {})
        self._infer()

    # ---- model preparation ---------------------------------------------

    def _apply_input_shapes(self, shapes):
        g = self.model.graph
        known = {i.name for i in g.input}
        for name in shapes:
            if name not in known:
                raise ValueError("--input-shape names '%s', which is not a graph input (inputs: %s)"
                                 % (name, ", ".join(sorted(known))))
        for inp in g.input:
            if inp.name not in shapes:
                continue
            dims = inp.type.tensor_type.shape
            del dims.dim[:]
            for d in shapes[inp.name]:
                dims.dim.add().dim_value = int(d)

    def _infer(self):
        g = self.model.graph
        try:
            inferred = shape_inference.infer_shapes(self.model, data_prop=True)
        except Exception:  # a model ONNX cannot infer still converts where it can
            try:
                inferred = shape_inference.infer_shapes(self.model)
            except Exception:
                inferred = self.model
        for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
            self.info[vi.name] = self._type_of(vi.type)
        # Bodies of control flow: their values, where a name is defined once
        # in the model (a name reused across scopes has no single answer).
        self.defined = collections.Counter(defined(inferred.graph))
        for body in bodies(inferred.graph):
            for vi in list(body.value_info) + list(body.output):
                if self.defined[vi.name] == 1 and vi.name not in self.info:
                    self.info[vi.name] = self._type_of(vi.type)
        # ONNX's answers, kept apart: the converter's own inference is
        # checked against them (infer.fill), never the other way round.
        self.onnx_dims = {k: d for k, (_, d) in self.info.items()
                          if d is not None and all(isinstance(x, int) for x in d)}
        self.shape_checked = 0
        self.shape_mismatch = []  # (value, onnx dims, converter dims)
        self.shape_unknown = []  # (value, op type): ONNX knows its dims, the converter does not
        for vi in list(g.input) + list(g.output):  # the declared types win
            et, dims = self._type_of(vi.type)
            if et is not None:
                old = self.info.get(vi.name, (None, None))
                self.info[vi.name] = (et, dims if dims is not None else old[1])

    @staticmethod
    def _type_of(tp):
        if not tp.HasField("tensor_type"):
            return (None, None)
        tt = tp.tensor_type
        et = tt.elem_type or None
        if not tt.HasField("shape"):
            return (et, None)
        dims = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                dims.append(int(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param:
                dims.append(d.dim_param)
            else:
                dims.append(None)
        return (et, dims)

    # ---- names ---------------------------------------------------------

    def fresh(self, hint):
        base = _IDENT_BAD.sub("_", hint or "v")
        if not base or base[0].isdigit():
            base = "v_" + base
        if base in _RESERVED:
            base = base + "_"
        name, k = base, 1
        while name in self.used:
            k += 1
            name = "%s_%d" % (base, k)
        self.used.add(name)
        return name

    # ---- what is known about a value -----------------------------------

    def known(self, name):
        """The value of `name` if the converter knows it, else None."""
        return self.consts.get(name)

    def elem_type(self, name):
        if name in self.consts:
            arr = self.consts[name]
            for et, (_, npt, _) in DTYPES.items():
                if npt == arr.dtype:
                    return et
        return self.info.get(name, (None, None))[0]

    def np_dtype(self, name):
        et = self.elem_type(name)
        if et not in DTYPES:
            raise Unsupported("dtype %s of '%s'" % (elem_name(et) if et else "unknown", name))
        return DTYPES[et][1]

    def webnn_dtype(self, name):
        return NP_TO_WEBNN[self.np_dtype(name)]

    def dims(self, name):
        """Dims of `name`: a list of ints, with None for dims not known
        statically; None when even the rank is unknown."""
        if name in self.consts:
            return list(self.consts[name].shape)
        d = self.info.get(name, (None, None))[1]
        if d is None:
            return None
        return [x if isinstance(x, int) else None for x in d]

    def rank(self, name):
        d = self.dims(name)
        if d is None:
            raise Unsupported("rank of '%s' is unknown (ONNX shape inference gave none)" % name)
        return len(d)

    def static_dims(self, name, why):
        d = self.dims(name)
        if d is None or any(x is None for x in d):
            raise Unsupported("%s needs the static shape of '%s', found %s"
                              % (why, name, "an unknown rank" if d is None else d))
        return d

    # ---- operands --------------------------------------------------------

    def v(self, name):
        """The identifier of ONNX value `name`, declaring it as a const
        the first time a known value is used."""
        if name in self.ident:
            return self.ident[name]
        if name in self.poisoned:
            raise Poisoned(name)
        if name in self.consts:
            self.ident[name] = self.const(self.consts[name], name)
            return self.ident[name]
        raise Unsupported("input '%s' is not produced by any node, initializer or graph input" % name)

    def const(self, arr, hint):
        """Declares a new const holding `arr`; returns its identifier."""
        arr = np.asarray(arr)
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        if arr.dtype not in NP_TO_WEBNN:
            raise Unsupported("constant '%s' has dtype %s" % (hint, arr.dtype))
        ident = self.fresh(hint)
        dt = NP_TO_WEBNN[arr.dtype]
        shape = "[" + ", ".join(str(int(d)) for d in arr.shape) + "]"
        flat = arr.reshape(-1)
        is_int = arr.dtype.kind in "iub"
        if arr.size > 0 and _all_equal(flat) and _scalar_ok(flat[0], is_int):
            init = "@scalar(%s)" % fmt_num(int(flat[0]) if is_int else float(flat[0]))
        elif (is_int and arr.size <= INLINE_INT_MAX) or arr.size == 0 or (
                not is_int and arr.size <= 64 and not np.all(np.isfinite(flat))):
            raw = np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<"))).tobytes()
            init = "@bytes([%s])" % ", ".join(str(b) for b in raw)
        else:
            self.weights.append((ident, arr))
            init = '@weights("%s")' % ident
        self.const_lines.append("    %s: %s%s %s;" % (ident, dt, shape, init))
        return ident

    def scalar(self, value, like_name, hint="c"):
        """A rank-0 const of `like_name`'s dtype."""
        return self.const(np.array(value, dtype=self.np_dtype(like_name)), hint)

    def inp(self, node, i):
        """Identifier of the node's input i, or None when absent."""
        if i >= len(node.input) or not node.input[i]:
            return None
        return self.v(node.input[i])

    def has(self, node, i):
        return i < len(node.input) and node.input[i] != ""

    def known_input(self, node, i, what):
        """The value of input i, which must be known at conversion time."""
        if not self.has(node, i):
            return None
        arr = self.known(node.input[i])
        if arr is None:
            raise Unsupported("%s (input %d '%s') must be a constant or computable from constants"
                              % (what, i, node.input[i]))
        return arr

    def out(self, node, i=0):
        name = node.output[i]
        if name not in self.ident:
            self.ident[name] = self.fresh(name)
        return self.ident[name]

    # ---- emission --------------------------------------------------------

    def emit(self, op, args, attrs=None, outs=None, hint=None):
        """Writes `outs = op(args, key=value...)`. outs: identifiers, or
        None for one fresh value named after `hint`. Returns outs (a list)
        or the single identifier."""
        single = outs is None or isinstance(outs, str)
        if outs is None:
            outs = [self.fresh(hint or op)]
        elif isinstance(outs, str):
            outs = [outs]
        parts = []
        for a in args:
            parts.append("[" + ", ".join(a) + "]" if isinstance(a, (list, tuple)) else str(a))
        for k, val in (attrs or {}).items():
            if val is None:
                continue
            parts.append("%s=%s" % (k, fmt_attr(val)))
        lhs = outs[0] if len(outs) == 1 and single else "[" + ", ".join(outs) + "]"
        self.node_lines.append("    %s = %s(%s);" % (lhs, op, ", ".join(parts)))
        return outs[0] if single else outs

    # ---- shape helpers: dims the engine folds per bucket -----------------

    def shape_of(self, ident):
        if ident not in self.shape_cache:
            self.shape_cache[ident] = self.emit("shape", [ident], hint=ident + "_shape")
        return self.shape_cache[ident]

    def dim_piece(self, name, i):
        """Dim i of ONNX value `name`: an int when static, else the
        identifier of an i64[1] the engine computes from shape()."""
        d = self.dims(name)
        if d is not None and d[i] is not None:
            return int(d[i])
        s = self.shape_of(self.v(name))
        return self.emit("slice", [s], {"starts": [i], "sizes": [1]}, hint="%s_dim%d" % (self.v(name), i))

    def assemble(self, pieces, hint):
        """A shape list from ints and i64[1] identifiers: a literal list
        when every piece is an int, else the identifier of a concat."""
        if all(isinstance(p, int) for p in pieces):
            return [int(p) for p in pieces]
        parts = []
        run = []
        for p in pieces:
            if isinstance(p, int):
                run.append(p)
                continue
            if run:
                parts.append(self.const(np.array(run, dtype=np.int64), hint + "_part"))
                run = []
            parts.append(p)
        if run:
            parts.append(self.const(np.array(run, dtype=np.int64), hint + "_part"))
        if len(parts) == 1:
            return parts[0]
        return self.emit("concat", [parts], {"axis": 0}, hint=hint)

    def prod_piece(self, name, lo, hi, hint):
        """Product of dims lo..hi-1: an int when static, else an
        identifier of an i64[1]."""
        total, dyn = 1, []
        for i in range(lo, hi):
            p = self.dim_piece(name, i)
            if isinstance(p, int):
                total *= p
            else:
                dyn.append(p)
        if not dyn:
            return total
        acc = dyn[0]
        for p in dyn[1:]:
            acc = self.emit("mul", [acc, p], hint=hint)
        if total != 1:
            acc = self.emit("mul", [acc, self.const(np.array([total], dtype=np.int64), hint + "_k")], hint=hint)
        return acc

    def reshape(self, ident, new_shape, out=None, hint=None):
        """reshape to a literal list or a host-known shape identifier."""
        if isinstance(new_shape, list):
            return self.emit("reshape", [ident], {"newShape": new_shape}, outs=out, hint=hint)
        return self.emit("reshape", [ident, new_shape], outs=out, hint=hint)

    # ---- the walk -------------------------------------------------------------

    def fail(self, node, what):
        self.errors.append((node.op_type, node.name or "(unnamed #%d)" % self._index, what))
        for o in node.output:
            if o:
                self.poisoned.add(o)


def subgraphs(node):
    """The bodies a node holds (If's branches, Loop's and Scan's body)."""
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def bodies(graph):
    """Every body inside a graph, nested ones too."""
    for n in graph.node:
        for g in subgraphs(n):
            yield g
            yield from bodies(g)


def defined(graph):
    """Every name a graph and the bodies inside it define."""
    names = [t.name for t in graph.initializer] + [i.name for i in graph.input]
    for n in graph.node:
        names += [o for o in n.output if o]
        for g in subgraphs(n):
            names += defined(g)
    return names


def _all_equal(flat):
    if flat.size <= 1:
        return True
    if flat.dtype.kind == "f":
        return bool(np.all(flat == flat[0])) and not np.any(np.signbit(flat) != np.signbit(flat[0]))
    return bool(np.all(flat == flat[0]))


def _scalar_ok(x, is_int):
    if is_int:
        return abs(int(x)) < (1 << 53)
    return math.isfinite(float(x))


def _text(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [x.decode() for x in v]
    return v


def attrs_of(node):
    """A node's attributes by name; strings (and lists of them) as str."""
    return {a.name: _text(onnx.helper.get_attribute_value(a)) for a in node.attribute}


def tensor_value(t):
    return numpy_helper.to_array(t)
