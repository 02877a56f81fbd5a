"""Whole-page OCR with PP-OCR's models, as berth-ocr reads pages: the
detector's boxes, each cut out upright, turned back where the angle
classifier says, read by the recognizer.

    reader = berth.ocr.Reader("config/ocr-cpu.ini", "ppocr_keys_v1.txt")
    for line in reader.read("page.png"):          # or an RGB uint8 array
        print(line.text, line.score, line.box)

berth.ocr.read(image, config, keys) does the same with a reader kept per
(config, keys). The pipeline runs in libberthocr (apps/ocr), the
same code as berth-ocr, found beside libberth."""
import ctypes
import os
import threading
from collections import namedtuple

import numpy as np

from . import _lib
from .errors import InvalidError, raise_for

Line = namedtuple("Line", "text score box turned")
Line.__doc__ = """A text line: its text, the recognizer's confidence, the box's
corners ((x, y) from the top left, clockwise) and whether the angle
classifier turned it back by 180 degrees."""


class _CLine(ctypes.Structure):
    _fields_ = [("text", ctypes.c_char_p), ("confidence", ctypes.c_float), ("box", ctypes.c_float * 8),
                ("turned", ctypes.c_int)]


class _CResult(ctypes.Structure):
    _fields_ = [("n_lines", ctypes.c_uint32), ("lines", ctypes.POINTER(_CLine)), ("width", ctypes.c_int),
                ("height", ctypes.c_int), ("detect_ms", ctypes.c_double), ("boxes_ms", ctypes.c_double),
                ("classify_ms", ctypes.c_double), ("recognize_ms", ctypes.c_double), ("total_ms", ctypes.c_double)]


_ERR = ctypes.POINTER(_lib.CError)
_RES = ctypes.POINTER(ctypes.POINTER(_CResult))
_SIGNATURES = {
    "berth_ocr_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                      ctypes.POINTER(ctypes.c_void_p), _ERR]),
    "berth_ocr_read_file": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, _RES, _ERR]),
    "berth_ocr_read_rgb": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int,
                                          ctypes.c_int, ctypes.c_size_t, _RES, _ERR]),
    "berth_ocr_result_free": (None, [ctypes.POINTER(_CResult)]),
    "berth_ocr_close": (None, [ctypes.c_void_p]),
}
_loaded = None
_load_lock = threading.Lock()


def _library():
    """libberthocr: $BERTH_OCR_LIBRARY, else beside libberth (an install's
    PREFIX/lib), else the build tree's apps/ocr, else the system's
    loader path."""
    global _loaded
    with _load_lock:
        if _loaded is not None:
            return _loaded
        here = os.path.dirname(_lib.lib_path) if os.sep in _lib.lib_path else None
        env = os.environ.get("BERTH_OCR_LIBRARY")
        cands = [env] if env else []
        if here:
            cands.append(os.path.join(here, "libberthocr.so.0"))
            cands.append(os.path.join(here, "..", "apps", "ocr", "libberthocr.so.0"))
        cands.append("libberthocr.so.0")
        _loaded = _lib.load(cands, _SIGNATURES, "libberthocr", "BERTH_OCR_LIBRARY")[0]
        return _loaded


class Reader(_lib.Closable):
    """The three models of an OCR config ([model.det], [model.cls],
    [model.rec]) opened once; read() one page at a time, one thread at a
    time (calls from several threads take turns)."""

    def __init__(self, config, keys, max_side=0, classify=True):
        self._o = None
        self._lib = _library()
        o = ctypes.c_void_p()
        err = _lib.CError()
        st = self._lib.berth_ocr_open(os.fspath(config).encode(), os.fspath(keys).encode(), int(max_side),
                                      1 if classify else 0, ctypes.byref(o), ctypes.byref(err))
        raise_for(st, err)
        self._o = o
        self._lock = threading.Lock()
        self.times_ms = None

    def read(self, image):
        """The text lines of a page, in reading order: image is a PNG or
        JPEG file's path, or a uint8 array (height, width, 3) of RGB,
        (height, width, 4) of RGBA (composited on white) or (height,
        width) of grey."""
        if self._o is None:
            raise InvalidError("the OCR reader is closed")
        res = ctypes.POINTER(_CResult)()
        err = _lib.CError()
        with self._lock:
            if isinstance(image, (str, bytes, os.PathLike)):
                st = self._lib.berth_ocr_read_file(self._o, os.fsencode(image), ctypes.byref(res), ctypes.byref(err))
            else:
                rgb = _rgb(image)
                st = self._lib.berth_ocr_read_rgb(self._o, b"image", rgb.ctypes.data, rgb.shape[1], rgb.shape[0],
                                                  rgb.strides[0], ctypes.byref(res), ctypes.byref(err))
        raise_for(st, err)
        try:
            r = res.contents
            lines = []
            for i in range(r.n_lines):
                l = r.lines[i]
                b = list(l.box)
                lines.append(Line(l.text.decode("utf-8", "replace"), float(l.confidence),
                                  [(b[2 * c], b[2 * c + 1]) for c in range(4)], bool(l.turned)))
            self.times_ms = {"detect": r.detect_ms, "boxes": r.boxes_ms, "classify": r.classify_ms,
                             "recognize": r.recognize_ms, "total": r.total_ms}
            return lines
        finally:
            self._lib.berth_ocr_result_free(res)

    def close(self):
        if self._o is not None:
            with self._lock:
                self._lib.berth_ocr_close(self._o)
                self._o = None


def _rgb(a):
    a = np.asarray(a)
    if a.dtype != np.uint8:
        raise InvalidError("berth.ocr: expected uint8 pixels, found %s" % a.dtype.name)
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    elif a.ndim == 3 and a.shape[2] == 4:  # composited on white, as the file loader does
        alpha = a[:, :, 3:4].astype(np.uint32)
        a = ((a[:, :, :3].astype(np.uint32) * alpha + 255 * (255 - alpha) + 127) // 255).astype(np.uint8)
    elif not (a.ndim == 3 and a.shape[2] == 3):
        raise InvalidError("berth.ocr: expected an image of shape (height, width, 3), (height, width, 4) or "
                           "(height, width), found %s" % (a.shape,))
    if a.strides[1] != 3 or a.strides[2] != 1:
        a = np.ascontiguousarray(a)
    return a


_readers = {}


def read(image, config=None, keys=None):
    """Reader(config, keys).read(image), the reader kept for later calls
    with the same config and keys. config and keys default to
    $BERTH_OCR_CONFIG and $BERTH_OCR_KEYS."""
    config = config or os.environ.get("BERTH_OCR_CONFIG")
    keys = keys or os.environ.get("BERTH_OCR_KEYS")
    if not config or not keys:
        raise InvalidError("berth.ocr.read: expected config and keys (an OCR config such as config/ocr-cpu.ini and "
                           "the recognizer's ppocr_keys_v1.txt), or $BERTH_OCR_CONFIG and $BERTH_OCR_KEYS")
    key = (os.path.abspath(config), os.path.abspath(keys))
    r = _readers.get(key)
    if r is None:
        r = _readers[key] = Reader(config, keys)
    return r.read(image)
