"""berth.Session and berth.Context: a deployment opened from its INI file
(or composed from a graph, weights and a backend), run on numpy arrays."""
import ctypes
import logging
import os
import threading
import weakref
from collections import namedtuple

import numpy as np

from . import _lib, _types
from .errors import Error, InvalidError, raise_for

IOInfo = namedtuple("IOInfo", "name dtype shape")
IOInfo.__doc__ = """An input or output of a lane: its name, numpy dtype and
shape, with None for a dynamic dim."""

_LOG = logging.getLogger("berth")
_LEVELS = {"error": 0, "warn": 1, "warning": 1, "info": 2, "debug": 3}
_PY_LEVEL = {0: logging.ERROR, 1: logging.WARNING, 2: logging.INFO, 3: logging.DEBUG}


@_lib.LOG_FN
def _log_line(ctx, level, msg):
    _LOG.log(_PY_LEVEL.get(level, logging.INFO), "%s", msg.decode("utf-8", "replace"))


def _ini_value(what, value):
    text = str(value)
    if "\n" in text or "\r" in text or not text.strip():
        raise InvalidError("berth.Session: %s: expected one line of text, found %r" % (what, value))
    return text


def _compose(graph, weights, backend, options, buckets):
    """The INI text of Session(graph, weights, ...): what a config file
    would say, paths made absolute."""
    use = [b.strip() for b in (backend or "cpu").split(",") if b.strip()]
    if not use:
        raise InvalidError("berth.Session: backend: expected a backend name or a comma-separated list, "
                           "found %r" % (backend,))
    lines = ["[model]", "graph = " + _ini_value("graph", os.path.abspath(graph)),
             "weights = " + _ini_value("weights", os.path.abspath(weights))]
    if buckets:
        lines.append("stage = main")
    lines += ["", "[backend]", "use = " + ", ".join(_ini_value("backend", u) for u in use)]
    options = dict(options or {})
    if options and not all(isinstance(v, dict) for v in options.values()):
        if len(use) != 1:
            raise InvalidError("berth.Session: options: with backends %s, expected one dict per backend, "
                               "e.g. {'%s': {'threads': 2}}" % (", ".join(use), use[0]))
        options = {use[0]: options}
    for name, opts in options.items():
        lines += ["", "[backend.%s]" % _ini_value("options", name)]
        for key, value in opts.items():
            if isinstance(value, bool):
                value = "true" if value else "false"
            lines.append("%s = %s" % (_ini_value("option key", key), _ini_value("option %s" % key, value)))
    if buckets:
        if isinstance(buckets, str):
            buckets = [b.strip() for b in buckets.split("|")]
        lines += ["", "[buckets]", "main = " + " | ".join(_ini_value("bucket", b) for b in buckets)]
    return "\n".join(lines) + "\n"


class _Runner:
    """What a Session and a Context share: the lane's feeds turned into
    berth_tensors, the run, and the outputs copied into new arrays."""

    def _init_io(self, session):
        self._session = session
        self._outs = {}  # lane -> ctypes array of berth_tensor, grown by berth and kept
        self._bucket = ctypes.c_uint32(0)
        self._err = _lib.CError()
        self.last_bucket = None

    def _lane_tensors(self, lane):
        t = self._outs.get(lane)
        if t is None:
            n = self._session._n_out[lane]
            t = (_lib.CTensor * max(n, 1))()
            self._outs[lane] = t
        return t

    def _free_outputs(self):
        for lane, arr in self._outs.items():
            for i in range(self._session._n_out[lane]):
                _lib.lib.berth_tensor_release(ctypes.byref(arr[i]))
        self._outs = {}

    def _run(self, fn, handle, feeds, outputs, lane):
        s = self._session
        li = s._lane_index(lane)
        names, dtypes = s._in_names[li], s._in_dtypes[li]
        n_in = len(names)
        if not isinstance(feeds, dict):
            raise InvalidError("run: expected a dict of input name to array, found %s" % type(feeds).__name__)
        unknown = [k for k in feeds if k not in s._in_index[li]]
        if unknown:
            raise InvalidError("run: no input %r in lane '%s' (its inputs: %s)" %
                               (unknown[0], s._lane_names[li], ", ".join(names)))
        want = s._out_names[li] if outputs is None else list(outputs)
        for name in want:
            if name not in s._out_index[li]:
                raise InvalidError("run: no output %r in lane '%s' (its outputs: %s)" %
                                   (name, s._lane_names[li], ", ".join(s._out_names[li])))
        ins = (_lib.CTensor * max(n_in, 1))()
        keep = []
        for i, name in enumerate(names):
            if name not in feeds:
                raise InvalidError("run: missing input '%s' (lane '%s' takes %s)" %
                                   (name, s._lane_names[li], ", ".join(names)))
            a = _as_input(name, feeds[name], dtypes[i])
            keep.append(a)
            t = ins[i]
            t.dtype = dtypes[i]
            t.rank = a.ndim
            if a.ndim > _lib.MAX_RANK:
                raise InvalidError("run: input '%s': rank %d, berth takes at most %d" % (name, a.ndim, _lib.MAX_RANK))
            for d, v in enumerate(a.shape):
                t.dims[d] = v
            t.data = a.ctypes.data
            t.bytes = a.nbytes
        outs = self._lane_tensors(li)
        n_out = s._n_out[li]
        st = fn(handle, li, ins, n_in, outs, n_out, ctypes.byref(self._bucket), ctypes.byref(self._err))
        del keep
        raise_for(st, self._err)
        self.last_bucket = self._bucket.value
        return {name: _copy_out(outs[s._out_index[li][name]]) for name in want}


def _as_input(name, x, code):
    """x as an array berth can read in place: the input's dtype, C order.
    An array already so is passed with no copy; a non-contiguous one is
    copied once; a bool array feeds a uint8 input (WebNN's booleans) and a
    bfloat16 one (ml_dtypes) a float32 input, widened exactly; lists and
    scalars are converted. Any other dtype is refused, not cast."""
    want = _types.TO_NUMPY.get(code)
    if want is None:
        raise InvalidError("run: input '%s' is %s, which the Python package cannot feed" % (name, _types.name(code)))
    if not isinstance(x, np.ndarray):
        try:
            x = np.asarray(x, dtype=want)
        except (TypeError, ValueError) as e:
            raise InvalidError("run: input '%s': expected an array of %s, found %s (%s)" %
                               (name, want.name, type(x).__name__, e)) from None
    if x.dtype != want:
        if x.dtype == np.bool_ and want == np.uint8:
            x = x.view(np.uint8)
        elif _types.is_bfloat16(x.dtype) and want == np.float32:
            x = _types.widen_bfloat16(x)
        else:
            raise InvalidError("run: input '%s': expected dtype %s, found %s (convert it with .astype(numpy.%s))" %
                               (name, want.name, x.dtype.name, want.name))
    if not (x.flags.c_contiguous and x.flags.aligned):
        x = np.ascontiguousarray(x)
    return x


def _copy_out(t):
    dt = _types.TO_NUMPY.get(t.dtype)
    shape = tuple(t.dims[d] for d in range(t.rank))
    if dt is None:
        raise Error("run: an output is %s, which the Python package cannot return" % _types.name(t.dtype))
    a = np.empty(shape, dtype=dt)
    if a.nbytes != t.bytes:
        raise Error("run: an output of shape %s and dtype %s came with %d bytes" % (shape, dt.name, t.bytes))
    if t.bytes:
        ctypes.memmove(a.ctypes.data, t.data, t.bytes)
    return a


class Session(_Runner, _lib.Closable):
    """A deployment: the model's weights uploaded once to the backend its
    config picks, a plan per bucket built on first use.

        s = berth.Session("config/cpu.ini")
        s = berth.Session("config/cpu.ini", backend="vulkan,cpu")  # [backend] use overridden
        s = berth.Session("model.webnn", "model.safetensors", backend="vulkan,cpu",
                          options={"cpu": {"threads": 2}}, buckets="batch=1 | batch=8")
        y = s.run({"x": x})["y"]

    A Session's runs are one thread's at a time (another thread's call is
    refused with InvalidError); for several threads on one copy of the
    weights, give each its own s.context()."""

    def __init__(self, config, weights=None, *, backend=None, options=None, buckets=None, model=None,
                 max_memory_mb=None, verify=None, log_level="warn"):
        self._ex = None
        self._contexts = weakref.WeakSet()
        self._lock = threading.Lock()
        opts = _lib.COpenOptions()
        opts.struct_size = ctypes.sizeof(opts)
        level = _LEVELS.get(str(log_level).lower())
        if level is None:
            raise InvalidError("berth.Session: log_level: expected one of error, warn, info, debug, found %r" %
                               (log_level,))
        opts.log = _log_line
        opts.log_level = level
        if weights is None:
            if options is not None or buckets is not None:
                raise InvalidError("berth.Session(config): options and buckets are set in the config file; "
                                   "pass them with Session(graph, weights, ...)")
            path = os.fspath(config)
            self._text = None
        else:
            self._text = _compose(os.fspath(config), os.fspath(weights), backend, options, buckets).encode()
            path = "berth.Session(%s)" % os.path.basename(os.fspath(config))
            opts.config_text = self._text
        if backend is not None and weights is None:
            opts.use = backend.encode()
        if model is not None:
            opts.model = str(model).encode()
        if verify is not None:
            opts.verify = str(verify).encode()
        if max_memory_mb is not None:
            opts.max_memory_bytes = int(max_memory_mb) * 1024 * 1024
        self.config = path
        ex = ctypes.c_void_p()
        err = _lib.CError()
        st = _lib.lib.berth_executor_open(path.encode(), ctypes.byref(opts), ctypes.byref(ex), ctypes.byref(err))
        raise_for(st, err)
        self._ex = ex
        self._describe()
        self._init_io(self)

    # ---- what open() fixed ----
    def _describe(self):
        L = _lib.lib
        n = L.berth_executor_lane_count(self._ex)
        self._lane_names = [L.berth_executor_lane_name(self._ex, i).decode() for i in range(n)]
        self._in_names, self._in_dtypes, self._in_index, self._inputs = [], [], [], []
        self._out_names, self._out_index, self._n_out, self._outputs = [], [], [], []
        self._in_raw = []
        info = _lib.CIoInfo()
        for lane in range(n):
            ins, raw = [], []
            for i in range(L.berth_executor_input_count(self._ex, lane)):
                raise_for(L.berth_executor_input_info(self._ex, lane, i, ctypes.byref(info)), None)
                ins.append(_io(info))
                raw.append([(int(info.dims[d]), info.dyn[d].decode() if info.dyn[d] else None)
                            for d in range(info.rank)])
            self._in_raw.append(raw)
            outs = []
            for i in range(L.berth_executor_output_count(self._ex, lane)):
                raise_for(L.berth_executor_output_info(self._ex, lane, i, ctypes.byref(info)), None)
                outs.append(_io(info))
            self._inputs.append([x[0] for x in ins])
            self._in_names.append([x[0].name for x in ins])
            self._in_dtypes.append([x[1] for x in ins])
            self._in_index.append({x[0].name: i for i, x in enumerate(ins)})
            self._outputs.append([x[0] for x in outs])
            self._out_names.append([x[0].name for x in outs])
            self._out_index.append({x[0].name: i for i, x in enumerate(outs)})
            self._n_out.append(len(outs))

    def _handle(self):
        if self._ex is None:
            raise InvalidError("the session is closed")
        return self._ex

    def _lane_index(self, lane):
        if lane is None or lane == 0:
            return 0
        if isinstance(lane, int):
            if 0 <= lane < len(self._lane_names):
                return lane
        elif lane in self._lane_names:
            return self._lane_names.index(lane)
        raise InvalidError("no lane %r (the session's lanes: %s)" % (lane, ", ".join(self._lane_names)))

    @property
    def inputs(self):
        """The inputs of lane 0, as IOInfo (None for a dynamic dim)."""
        return list(self._inputs[0])

    @property
    def outputs(self):
        """The outputs of lane 0, as IOInfo (None for a dynamic dim)."""
        return list(self._outputs[0])

    @property
    def lanes(self):
        return list(self._lane_names)

    def buckets(self, lane=None):
        """The buckets of a lane's stage, as their descriptions
        ("batch=8 seq=128"), in config order."""
        li = self._lane_index(lane)
        buf = ctypes.create_string_buffer(256)
        n = _lib.lib.berth_executor_bucket_count(self._handle(), li)
        out = []
        for b in range(n):
            _lib.lib.berth_executor_bucket_describe(self._ex, li, b, buf, len(buf))
            out.append(buf.value.decode())
        return out

    def _bucket_index(self, bucket, li):
        names = self.buckets(li)
        if isinstance(bucket, int) and 0 <= bucket < len(names):
            return bucket
        if isinstance(bucket, str) and bucket.strip() in names:
            return names.index(bucket.strip())
        raise InvalidError("no bucket %r in lane '%s' (its buckets: %s)" %
                           (bucket, self._lane_names[li], ", ".join(names) or "none"))

    def sample_inputs(self, lane=None):
        """Deterministic inputs at the sizes of the lane's first bucket,
        the values berth run generates for inputs it is not given."""
        li = self._lane_index(lane)
        first = self.buckets(li)[:1]
        sizes = dict(kv.split("=", 1) for kv in first[0].split()) if first else {}
        out = {}
        for i, name in enumerate(self._in_names[li]):
            shape = [int(sizes[dyn]) if dyn and dyn in sizes else d for d, dyn in self._in_raw[li][i]]
            out[name] = _generate(shape, self._in_dtypes[li][i], i)
        return out

    @property
    def backends(self):
        """The backends the session holds: [(name, device)], in use order."""
        L, out = _lib.lib, []
        for k in range(L.berth_executor_backend_count(self._handle())):
            dev = ctypes.c_char_p()
            name = L.berth_executor_backend_at(self._ex, k, ctypes.byref(dev))
            out.append((name.decode(), dev.value.decode() if dev.value else None))
        return out

    @property
    def backend(self):
        return _lib.lib.berth_executor_backend(self._handle()).decode()

    @property
    def device(self):
        return _lib.lib.berth_executor_device(self._handle()).decode()

    def memory(self):
        """Bytes the session holds: weights (once, on the device), plans
        (every warm plan of the session and its contexts), host (the
        engine's own buffers), the number of warm plans, the memory limit
        and, per backend, its weights and plans."""
        L = _lib.lib
        m = _lib.CMemory()
        L.berth_executor_memory(self._handle(), ctypes.byref(m))
        what = ctypes.c_char_p()
        limit = L.berth_executor_memory_limit(self._ex, ctypes.byref(what))
        per = []
        for k, (name, dev) in enumerate(self.backends):
            b = _lib.CMemory()
            raise_for(L.berth_executor_backend_memory(self._ex, k, ctypes.byref(b)), None)
            per.append({"backend": name, "device": dev, "weights": b.weights_bytes, "plans": b.plans_bytes,
                        "warm_plans": b.plans})
        return {"weights": m.weights_bytes, "plans": m.plans_bytes, "host": m.host_bytes, "warm_plans": m.plans,
                "limit": None if limit == 2 ** 64 - 1 else limit,
                "limit_from": what.value.decode() if what.value else None, "backends": per}

    def prepare(self, bucket, lane=None):
        """Builds the plan of a bucket (its index or description) now
        instead of on first use."""
        li = self._lane_index(lane)
        b = self._bucket_index(bucket, li)
        with self._lock:
            raise_for(_lib.lib.berth_executor_prepare(self._handle(), li, b, ctypes.byref(self._err)), self._err)

    def is_warm(self, bucket, lane=None):
        li = self._lane_index(lane)
        return bool(_lib.lib.berth_executor_is_warm(self._handle(), li, self._bucket_index(bucket, li)))

    def run(self, feeds, outputs=None, lane=None):
        """Runs a batch: feeds maps every input's name to an array (its
        dynamic dims at most their max). Returns {name: numpy array} for
        the outputs asked for (default: all), each a new array the caller
        owns. The GIL is released while the engine runs."""
        handle = self._handle()
        if not self._lock.acquire(blocking=False):
            raise InvalidError("the session is busy in another thread's call: give each thread its own "
                               "session.context()")
        try:
            return self._run(_lib.lib.berth_executor_run, handle, feeds, outputs, lane)
        finally:
            self._lock.release()

    def context(self):
        """A run context: its own plans and buffers over this session's
        weights, for one more thread. Contexts run at the same time."""
        return Context(self)

    def close(self):
        """Frees the session, its plans and weights; its contexts close
        with it. Also done when the session is garbage-collected."""
        if self._ex is None:
            return
        for c in list(self._contexts):
            c.close()
        with self._lock:
            self._free_outputs()
            _lib.lib.berth_executor_close(self._ex)
            self._ex = None


    def __repr__(self):
        if self._ex is None:
            return "<berth.Session closed>"
        return "<berth.Session %s on %s (%s)>" % (self.config, self.backend, self.device)


class Context(_Runner, _lib.Closable):
    """One more thread's plans and buffers over a Session's weights
    (berth_context_open): run, prepare and is_warm as on the session."""

    def __init__(self, session):
        self._ctx = None
        ctx = ctypes.c_void_p()
        err = _lib.CError()
        raise_for(_lib.lib.berth_context_open(session._handle(), ctypes.byref(ctx), ctypes.byref(err)), err)
        self._ctx = ctx
        self._lock = threading.Lock()
        self._init_io(session)
        session._contexts.add(self)

    def _handle(self):
        if self._ctx is None:
            raise InvalidError("the context is closed")
        return self._ctx

    def prepare(self, bucket, lane=None):
        li = self._session._lane_index(lane)
        b = self._session._bucket_index(bucket, li)
        with self._lock:
            raise_for(_lib.lib.berth_context_prepare(self._handle(), li, b, ctypes.byref(self._err)), self._err)

    def is_warm(self, bucket, lane=None):
        li = self._session._lane_index(lane)
        return bool(_lib.lib.berth_context_is_warm(self._handle(), li, self._session._bucket_index(bucket, li)))

    def run(self, feeds, outputs=None, lane=None):
        handle = self._handle()
        if not self._lock.acquire(blocking=False):
            raise InvalidError("the context is busy in another thread's call: give each thread its own context")
        try:
            return self._run(_lib.lib.berth_context_run, handle, feeds, outputs, lane)
        finally:
            self._lock.release()

    def close(self):
        if self._ctx is None:
            return
        with self._lock:
            self._free_outputs()
            _lib.lib.berth_context_close(self._ctx)
            self._ctx = None



def _generate(shape, code, seed):
    """berth run's generator: a 64-bit LCG from a seed per input, its top
    24 bits per element, as floats in [-1, 1), small integers or 0/1."""
    n = int(np.prod(shape)) if shape else 1
    x = 0x9E3779B97F4A7C15 ^ seed
    r = np.empty(n, np.uint32)
    for i in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        r[i] = x >> 40
    if code == _types.F32:
        v = (r.astype(np.float32) / np.float32(8388608.0) - np.float32(1.0)).astype(np.float32)
    elif code in (_types.I32, _types.I64):
        v = (r % 10).astype(_types.TO_NUMPY[code])
    elif code == _types.U8:
        v = (r % 2).astype(np.uint8)
    else:
        v = np.zeros(n, _types.TO_NUMPY.get(code, np.uint8))
    return v.reshape(shape)


def _io(info):
    dims = tuple(None if info.dyn[d] else int(info.dims[d]) for d in range(info.rank))
    dt = _types.TO_NUMPY.get(info.dtype)
    return IOInfo(info.name.decode(), dt if dt is not None else _types.name(info.dtype), dims), info.dtype


BackendInfo = namedtuple("BackendInfo", "name path version abi_version device error")
BackendInfo.__doc__ = """A backend module found on the search path: error is
None when it loaded and opened its device, else why not."""


def backends(paths=()):
    """Every backend module berth would find (paths first, then
    $BERTH_BACKEND_PATH and the install's or build tree's folders), each
    loaded and its device opened once: [BackendInfo]."""
    found = []

    @_lib.FOUND_FN
    def one(ctx, f):
        f = f.contents
        dec = lambda s: s.decode("utf-8", "replace") if s else None
        found.append(BackendInfo(dec(f.name), dec(f.path), dec(f.version), f.abi_version, dec(f.device),
                                 dec(f.error)))

    dirs = (ctypes.c_char_p * max(len(paths), 1))(*[os.fspath(p).encode() for p in paths])
    _lib.lib.berth_backends_list(dirs, len(paths), _lib.DIR_FN(), one, None)
    return found
