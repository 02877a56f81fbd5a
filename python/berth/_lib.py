"""libberth through ctypes: where the library is found, and the C types
and signatures of include/berth/berth.h that the package calls.

ctypes is in every Python, so installing needs no compiler and no package
beyond numpy; CDLL calls release the GIL for their whole duration, so a
run on one thread lets others go on (cffi's ABI mode would do the same,
at the cost of a dependency and no speed to gain at this call rate)."""
import ctypes
import ctypes.util
import os

MAX_RANK = 8
ERROR_CAP = 512

# berth_status
OK, ERR_INVALID, ERR_UNSUPPORTED, ERR_NOMEM, ERR_DEVICE, ERR_IO, ERR_INTERNAL = range(7)


class CError(ctypes.Structure):
    _fields_ = [("msg", ctypes.c_char * ERROR_CAP)]


class CTensor(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_uint32),
        ("dims", ctypes.c_int64 * MAX_RANK),
        ("data", ctypes.c_void_p),
        ("bytes", ctypes.c_size_t),
        ("capacity", ctypes.c_size_t),
    ]


LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)


class COpenOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("log", LOG_FN),
        ("log_ctx", ctypes.c_void_p),
        ("log_level", ctypes.c_int),
        ("use", ctypes.c_char_p),
        ("max_memory_bytes", ctypes.c_uint64),
        ("model", ctypes.c_char_p),
        ("verify", ctypes.c_char_p),
        ("config_text", ctypes.c_char_p),
    ]


class CIoInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_uint32),
        ("dims", ctypes.c_int64 * MAX_RANK),
        ("dyn", ctypes.c_char_p * MAX_RANK),
    ]


class CMemory(ctypes.Structure):
    _fields_ = [
        ("weights_bytes", ctypes.c_uint64),
        ("plans_bytes", ctypes.c_uint64),
        ("host_bytes", ctypes.c_uint64),
        ("plans", ctypes.c_uint32),
    ]


class CBackendFound(ctypes.Structure):
    _fields_ = [
        ("path", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("version", ctypes.c_char_p),
        ("abi_version", ctypes.c_uint32),
        ("device", ctypes.c_char_p),
        ("error", ctypes.c_char_p),
        ("backend", ctypes.c_void_p),
    ]


DIR_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int)
FOUND_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(CBackendFound))

_P = ctypes.c_void_p
_ERR = ctypes.POINTER(CError)
_SIGNATURES = {
    "berth_executor_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(COpenOptions), ctypes.POINTER(_P), _ERR]),
    "berth_executor_close": (None, [_P]),
    "berth_executor_backend": (ctypes.c_char_p, [_P]),
    "berth_executor_backend_path": (ctypes.c_char_p, [_P]),
    "berth_executor_device": (ctypes.c_char_p, [_P]),
    "berth_executor_lane_count": (ctypes.c_uint32, [_P]),
    "berth_executor_lane_name": (ctypes.c_char_p, [_P, ctypes.c_uint32]),
    "berth_executor_find_lane": (ctypes.c_int32, [_P, ctypes.c_char_p]),
    "berth_executor_input_count": (ctypes.c_uint32, [_P, ctypes.c_uint32]),
    "berth_executor_output_count": (ctypes.c_uint32, [_P, ctypes.c_uint32]),
    "berth_executor_input_info": (ctypes.c_int, [_P, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(CIoInfo)]),
    "berth_executor_output_info": (ctypes.c_int, [_P, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(CIoInfo)]),
    "berth_executor_bucket_count": (ctypes.c_uint32, [_P, ctypes.c_uint32]),
    "berth_executor_bucket_describe": (None, [_P, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]),
    "berth_executor_prepare": (ctypes.c_int, [_P, ctypes.c_uint32, ctypes.c_uint32, _ERR]),
    "berth_executor_is_warm": (ctypes.c_int, [_P, ctypes.c_uint32, ctypes.c_uint32]),
    "berth_executor_run": (ctypes.c_int, [_P, ctypes.c_uint32, ctypes.POINTER(CTensor), ctypes.c_uint32,
                                          ctypes.POINTER(CTensor), ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32),
                                          _ERR]),
    "berth_tensor_release": (None, [ctypes.POINTER(CTensor)]),
    "berth_context_open": (ctypes.c_int, [_P, ctypes.POINTER(_P), _ERR]),
    "berth_context_close": (None, [_P]),
    "berth_context_prepare": (ctypes.c_int, [_P, ctypes.c_uint32, ctypes.c_uint32, _ERR]),
    "berth_context_is_warm": (ctypes.c_int, [_P, ctypes.c_uint32, ctypes.c_uint32]),
    "berth_context_run": (ctypes.c_int, [_P, ctypes.c_uint32, ctypes.POINTER(CTensor), ctypes.c_uint32,
                                         ctypes.POINTER(CTensor), ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32),
                                         _ERR]),
    "berth_executor_memory": (None, [_P, ctypes.POINTER(CMemory)]),
    "berth_executor_memory_limit": (ctypes.c_uint64, [_P, ctypes.POINTER(ctypes.c_char_p)]),
    "berth_executor_backend_count": (ctypes.c_uint32, [_P]),
    "berth_executor_backend_at": (ctypes.c_char_p, [_P, ctypes.c_uint32, ctypes.POINTER(ctypes.c_char_p)]),
    "berth_executor_backend_memory": (ctypes.c_int, [_P, ctypes.c_uint32, ctypes.POINTER(CMemory)]),
    "berth_backends_list": (ctypes.c_uint32, [ctypes.POINTER(ctypes.c_char_p), ctypes.c_uint32, DIR_FN, FOUND_FN,
                                              ctypes.c_void_p]),
}


def _candidates():
    """Where libberth is looked for, in order: $BERTH_LIBRARY; the
    relocatable install's PREFIX/lib (this package is in
    PREFIX/lib/python3.../dist-packages/berth); a build tree beside
    python/ (the source tree); then the system's loader path."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("BERTH_LIBRARY")
    if env:
        yield env
        return
    yield os.path.join(here, "..", "..", "..", "libberth.so.0")
    tree = os.path.join(here, "..", "..")
    for build in sorted(os.listdir(tree)) if os.path.isdir(tree) else []:
        if build.startswith("build"):
            yield os.path.join(tree, build, "engine", "libberth.so.0")
    found = ctypes.util.find_library("berth")
    yield found or "libberth.so.0"


def load(candidates, signatures, what, env):
    """The first of candidates that loads, its functions given their C
    types: (CDLL, its real path). ImportError lists every place tried."""
    tried = []
    for path in candidates:
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (absent)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        for name, (res, args) in signatures.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise ImportError("berth: %s has no %s: a %s older than this package" % (path, name, what))
            fn.restype = res
            fn.argtypes = args
        return lib, os.path.realpath(path) if os.sep in path else path
    raise ImportError("berth: %s not found; looked for %s (set %s to the file)" % (what, "; ".join(tried), env))


class Closable:
    """with-statement and garbage-collection closing for the objects
    that hold an engine handle: each defines close(), safe to call twice."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


lib, lib_path = load(_candidates(), _SIGNATURES, "libberth", "BERTH_LIBRARY")
