"""Where each dynamic dim's maximum comes from.

A symbolic input dim becomes dyn("NAME", MAX) in the .webnn, and MAX
bounds every bucket the engine will plan for it, so the converter states,
for every dyn dim, its MAX and where MAX came from. NAME is the ONNX
dim_param with each character other than a letter, a digit or '_' made
'_' (an input dim with no dim_param is named INPUT_K); --dyn takes it.
In order:

  1. --dyn NAME=MAX: the caller's word.
  2. The model, and only where the model states a size:
     a. a dim that carries the same dim_param elsewhere in the same graph
        and has a fixed size there: ONNX reads one dim_param as one size
        throughout a graph, so that size is NAME's only value. The other
        place is another graph input whose dims --input-shape (or a frozen
        value) fixes, or a graph output or value_info that declares the
        dim_param where ONNX shape inference finds a number;
     b. a metadata_props entry "berth.dyn.NAME" = MAX (NAME spelled as
        --dyn takes it, or as the dim_param): berth's own key, for a model
        that is exported with its ranges.
  3. --dyn-default (64).

Two statements of one NAME with different sizes are reported, and the
largest is taken, so that every size the model names fits; so are two
dim_params that become the same NAME (the engine binds them to one
value, where ONNX let them differ)."""
import re

from onnx import shape_inference

META_PREFIX = "berth.dyn."

_BAD = re.compile(r"[^A-Za-z0-9_]")


def dyn_name(dim_param):
    return _BAD.sub("_", dim_param)


def _dims(vi):
    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in vi.type.tensor_type.shape.dim]


class MetadataError(ValueError):
    """A berth.dyn.* entry whose value is not a size."""


class DynRanges:
    """Built from the model as the caller gave it, before --input-shape
    rewrites its inputs; max_of() is asked once per dyn dim of an input,
    and lines() and warnings() then say what was chosen and why."""

    def __init__(self, model, dyn=None, dyn_default=64, input_shapes=None, frozen=()):
        self.user = dict(dyn or {})
        self.default = dyn_default
        self.stated = {}  # NAME -> [(size, where)] from the model
        self.uses = {}  # NAME -> [(input, dim k)]
        self.params = {}  # NAME -> {dim_param, or None for an unnamed dim}
        self.chosen = {}  # NAME -> (max, where)
        self._warnings = []
        g = model.graph
        inits = {t.name for t in g.initializer}
        shapes = dict(input_shapes or {})
        fixed = [i for i in g.input if i.name in shapes]
        free = [i for i in g.input if i.name not in shapes and i.name not in inits]
        params = {d for i in free for d in (_dims(i) or []) if isinstance(d, str)}
        for inp in fixed:
            how = "its frozen value" if inp.name in frozen else "--input-shape"
            for k, (d, v) in enumerate(zip(_dims(inp) or [], shapes[inp.name])):
                if isinstance(d, str) and d in params:
                    self._state(dyn_name(d), int(v), "input '%s' declares %s at dim %d, fixed to %d by %s"
                                % (inp.name, d, k, int(v), how))
        self._inferred(model, params)
        for p in model.metadata_props:
            if not p.key.startswith(META_PREFIX):
                continue
            name = dyn_name(p.key[len(META_PREFIX):])
            try:
                size = int(p.value)
            except ValueError:
                size = 0
            if size < 1:
                raise MetadataError("metadata_props '%s' = '%s': expected a size >= 1" % (p.key, p.value))
            self._state(name, size, "the model's metadata_props '%s'" % p.key)

    def _state(self, name, size, where):
        self.stated.setdefault(name, []).append((size, where))

    def _inferred(self, model, params):
        """Sizes ONNX shape inference finds where a graph output or
        value_info declares an input's dim_param."""
        g = model.graph
        declared = {}
        for vi in list(g.output) + list(g.value_info):
            for k, d in enumerate(_dims(vi) or []):
                if isinstance(d, str) and d in params:
                    declared.setdefault(vi.name, []).append((k, d))
        if not declared:  # nothing to learn: spare a large model a second inference
            return
        try:
            inferred = shape_inference.infer_shapes(model, data_prop=True)
        except Exception:  # a model ONNX cannot infer states nothing this way
            return
        for vi in list(inferred.graph.output) + list(inferred.graph.value_info):
            dims = _dims(vi)
            for k, d in declared.pop(vi.name, ()):
                if dims and k < len(dims) and isinstance(dims[k], int) and dims[k] > 0:
                    what = "output" if any(o.name == vi.name for o in g.output) else "value"
                    self._state(dyn_name(d), dims[k], "%s '%s' declares %s at dim %d, where ONNX shape "
                                "inference finds %d" % (what, vi.name, d, k, dims[k]))

    def max_of(self, name, param, inp, k):
        """The max of dyn dim NAME of input INP at dim K (PARAM its
        dim_param, None where it has none)."""
        self.uses.setdefault(name, []).append((inp, k))
        self.params.setdefault(name, set()).add(param)
        if name in self.chosen:
            return self.chosen[name][0]
        stated = self.stated.get(name, [])
        sizes = sorted({s for s, _ in stated})
        if len(sizes) > 1:
            self._warnings.append("dyn dim '%s': the model states different sizes: %s; the max is the largest, %d"
                                  % (name, "; ".join("%d (%s)" % sw for sw in stated), sizes[-1]))
        if name in self.user:
            where = "from --dyn"
            if sizes and sizes[-1] != self.user[name]:
                where += " (the model states %d: %s)" % (sizes[-1], next(w for s, w in stated if s == sizes[-1]))
            self.chosen[name] = (self.user[name], where)
        elif sizes:
            self.chosen[name] = (sizes[-1], "from the model: %s" % next(w for s, w in stated if s == sizes[-1]))
        else:
            self.chosen[name] = (self.default, "the default (--dyn %s=MAX to set it)" % name)
        return self.chosen[name][0]

    def lines(self):
        """One line per dyn dim NAME, in the order the inputs use them."""
        out = []
        for name, uses in self.uses.items():
            mx, where = self.chosen[name]
            out.append("dyn dim '%s' (%s): max %d, %s" % (
                name, ", ".join("input '%s' dim %d" % u for u in uses), mx, where))
        return out

    def warnings(self):
        out = list(self._warnings)
        for name, params in self.params.items():
            if len(params) > 1:
                out.append("dyn dim '%s' stands for %s, which ONNX lets differ; the engine binds them to one value"
                           % (name, " and ".join(sorted("dim_param '%s'" % p if p else "an unnamed dim"
                                                        for p in params))))
        for name in sorted(set(self.stated) - set(self.uses)):
            for _, where in self.stated[name]:
                if where.startswith("the model's metadata_props"):
                    out.append("%s names dyn dim '%s', which no input uses" % (where, name))
        return out
