"""berth.Error and one subclass per status of the C API."""
from . import _lib


class Error(Exception):
    """An engine call failed. `status` is the C API's berth_status,
    `message` the engine's message (it names the file, line, tensor, op
    or key, what was expected and what was found)."""

    status = None

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidError(Error, ValueError):
    """BERTH_ERR_INVALID: a bad argument, config, graph, input or option."""
    status = _lib.ERR_INVALID


class UnsupportedError(Error):
    """BERTH_ERR_UNSUPPORTED: valid, but the backend cannot do it."""
    status = _lib.ERR_UNSUPPORTED


class NoMemoryError(Error, MemoryError):
    """BERTH_ERR_NOMEM: host or device memory, or the memory limit."""
    status = _lib.ERR_NOMEM


class DeviceError(Error):
    """BERTH_ERR_DEVICE: the device failed or is absent."""
    status = _lib.ERR_DEVICE


class IoError(Error):
    """BERTH_ERR_IO: reading a file failed."""
    status = _lib.ERR_IO


class InternalError(Error):
    """BERTH_ERR_INTERNAL: an invariant did not hold (a bug), or a run
    that [backend] verify found not to match its reference."""
    status = _lib.ERR_INTERNAL


_BY_STATUS = {c.status: c for c in (InvalidError, UnsupportedError, NoMemoryError, DeviceError, IoError,
                                    InternalError)}


def raise_for(status, err):
    """Raises the subclass for a status other than BERTH_OK with the
    message in `err` (a _lib.CError)."""
    if status == _lib.OK:
        return
    msg = err.msg.decode("utf-8", "replace") if err is not None else ""
    cls = _BY_STATUS.get(status, Error)
    raise cls(msg or "berth_status %d with no message" % status, status)
