"""The window geometry of convolutions and pools: pads from ONNX's pads
or auto_pad, and output lengths."""
import math

from .core import Unsupported


def _same_pads(in_dims, kernel, strides, dil, mode):
    """ONNX auto_pad SAME_UPPER/SAME_LOWER: output = ceil(in / stride);
    the odd pixel goes to the end (UPPER) or the beginning (LOWER)."""
    begins, ends = [], []
    for n, k, s, d in zip(in_dims, kernel, strides, dil):
        total = max((math.ceil(n / s) - 1) * s + (k - 1) * d + 1 - n, 0)
        small, big = total // 2, total - total // 2
        begins.append(small if mode == "SAME_UPPER" else big)
        ends.append(big if mode == "SAME_UPPER" else small)
    return begins, ends


def spatial(cv, a, kernel, x_name):
    """WebNN-style padding [begin0, end0, begin1, end1, ...] from pads /
    auto_pad, with the strides and dilations, for any number of spatial
    dims."""
    n = len(kernel)
    strides = list(a.get("strides", [1] * n))
    dil = list(a.get("dilations", [1] * n))
    auto = a.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        dims = cv.static_dims(x_name, "auto_pad %s" % auto)[2:]
        begins, ends = _same_pads(dims, kernel, strides, dil, auto)
    elif auto == "VALID":
        begins, ends = [0] * n, [0] * n
    elif auto in ("NOTSET", ""):
        pads = list(a.get("pads", [0] * 2 * n))
        begins, ends = pads[:n], pads[n:]
    else:
        raise Unsupported("auto_pad '%s' is not supported" % auto)
    if any(p < 0 for p in begins + ends):
        raise Unsupported("negative pads %s are not supported" % (begins + ends))
    padding = []
    for b, e in zip(begins, ends):
        padding += [int(b), int(e)]
    return padding, [int(s) for s in strides], [int(d) for d in dil]


def out_len(n, k, s, d, p0, p1, ceil):
    """Output length of a window of k taps (dilation d, stride s) over n
    elements padded by p0 and p1; with ceil, a last window that starts in
    the end padding is dropped (ONNX's and PyTorch's rule)."""
    span = n + p0 + p1 - d * (k - 1) - 1
    if not ceil:
        return span // s + 1
    out = -(-span // s) + 1
    if (out - 1) * s >= n + p0:
        out -= 1
    return out
