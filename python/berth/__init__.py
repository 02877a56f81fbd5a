"""berth: run WebNN graphs on swappable hardware backends, numpy in and out.

    import berth
    s = berth.Session("config/cpu.ini")
    y = s.run({"x": x})["y"]

Session (a deployment from its INI file, or from a graph, weights and a
backend list), Context (one more thread over a session's weights),
backends() (what is installed, and why a module cannot be used), the
errors Error and its subclasses per engine status, and berth.ocr for
reading pages. See README.md, "Python"."""
from ._lib import lib_path as library
from .errors import (DeviceError, Error, InternalError, InvalidError, IoError, NoMemoryError,
                     UnsupportedError)
from ._types import widen_bfloat16 as from_bfloat16
from . import ocr
from .session import BackendInfo, Context, IOInfo, Session, backends

__version__ = "0.1.0"
__all__ = ["Session", "Context", "IOInfo", "BackendInfo", "backends", "Error", "InvalidError", "UnsupportedError",
           "NoMemoryError", "DeviceError", "IoError", "InternalError", "library", "from_bfloat16", "ocr"]
