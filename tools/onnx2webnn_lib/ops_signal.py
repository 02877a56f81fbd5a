"""Signal processing: the windows (Hann, Hamming, Blackman) and the mel
filter bank, which are constants once their sizes are (folded in
fold.py), and DFT and STFT as matrix products with cosine and sine
tables. Sizes that arrive as data give a shape no plan can hold: those
are refused with that reason."""
import numpy as np

from .core import DTYPES, Unsupported, attrs_of, registry

OPS, op = registry()


def window(kind, size, a):
    """ONNX's generalized cosine windows, periodic unless periodic=0."""
    n = int(np.asarray(size).reshape(-1)[0])
    d = n if a.get("periodic", 1) else n - 1
    t = 2 * np.pi * np.arange(n) / max(d, 1)
    if kind == "HannWindow":
        w = 0.5 - 0.5 * np.cos(t)
    elif kind == "HammingWindow":
        w = 25 / 46 - (1 - 25 / 46) * np.cos(t)
    else:
        w = 0.42 - 0.5 * np.cos(t) + 0.08 * np.cos(2 * t)
    return w.astype(_out_dtype(a))


def mel_weight_matrix(ins, a):
    """Triangular filters between mel-spaced points, as ONNX defines them
    (bins rounded down to the DFT's)."""
    bins, dft_length, rate, lo, hi = (np.asarray(v).reshape(-1)[0] for v in ins)
    bins, dft_length, rate = int(bins), int(dft_length), int(rate)
    mel = lambda f: 2595 * np.log10(1 + f / 700)  # noqa: E731
    # the mel step is the range over bins + 2, as the operator defines it
    points = np.arange(bins + 2) * (mel(hi) - mel(lo)) / (bins + 2) + mel(lo)
    points = ((dft_length + 1) * (700 * (np.power(10, points / 2595) - 1)) // rate).astype(np.int64)
    out = np.zeros((dft_length // 2 + 1, bins))
    for i in range(bins):
        left, center, right = points[i], points[i + 1], points[i + 2]
        if center == left:
            out[center, i] = 1
        else:
            for j in range(left, center + 1):
                out[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            out[j, i] = (right - j) / (right - center)
    return out.astype(_out_dtype(a))


def _out_dtype(a):
    t = int(a.get("output_datatype", 1))
    if t not in DTYPES:
        raise Unsupported("output_datatype %d" % t)
    return DTYPES[t][1]


@op("HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix", "Range")
def sized_by_data(cv, node):
    """Reached only when fold.py could not fold the node: an input that
    sets the output's length is not a constant."""
    unknown = [n for n in node.input if n and cv.known(n) is None]
    raise Unsupported("the output's shape is set by the value of %s, which is not a constant: a data-dependent "
                      "shape (WebNN plans static shapes)" % ", ".join("'%s'" % n for n in unknown))


def _dft(cv, x, dims, axis, length, inverse, onesided, out, o):
    """The DFT of x (dims: [..., signal..., 1 or 2], the last being real
    and imaginary parts) along `axis`, to `out`."""
    r = len(dims) - 1  # rank without the complex dim
    n = dims[axis]
    parts = []
    for k in range(dims[-1]):
        starts, sizes = [0] * (r + 1), list(dims)
        starts[-1], sizes[-1] = k, 1
        p = cv.emit("slice", [x], {"starts": starts, "sizes": sizes}, hint="%s_part%d" % (o, k))
        parts.append(cv.emit("squeeze", [p], {"axes": [r]}, hint="%s_part%d_nd" % (o, k)))
    perm = [d for d in range(r) if d != axis] + [axis]
    back = [perm.index(d) for d in range(r)]
    moved = [cv.emit("transpose", [p], {"permutation": perm}, hint="%s_last%d" % (o, k)) for k, p in enumerate(parts)]
    lead = [dims[d] for d in perm[:-1]]
    if length > n:
        moved = [cv.emit("pad", [p], {"beginningPadding": [0] * r, "endingPadding": [0] * (r - 1) + [length - n]},
                         hint=o + "_padded") for p in moved]
    elif length < n:
        moved = [cv.emit("slice", [p], {"starts": [0] * r, "sizes": lead + [length]}, hint=o + "_cut") for p in moved]
    bins = length // 2 + 1 if onesided else length
    nk = np.outer(np.arange(length), np.arange(bins)) * (2 * np.pi / length)
    scale = 1.0 / length if inverse else 1.0
    cos = cv.const((np.cos(nk) * scale).astype(np.float32), o + "_cos")
    sin = cv.const(((np.sin(nk) if inverse else -np.sin(nk)) * scale).astype(np.float32), o + "_sin")
    re, im = moved[0], moved[1] if len(moved) > 1 else None
    y_re = cv.emit("matmul", [re, cos], hint=o + "_re")
    y_im = cv.emit("matmul", [re, sin], hint=o + "_im")
    if im is not None:  # (a + ib)(c + is) = (ac - bs) + i(as + bc)
        y_re = cv.emit("sub", [y_re, cv.emit("matmul", [im, sin], hint=o + "_im_sin")], hint=o + "_re_c")
        y_im = cv.emit("add", [y_im, cv.emit("matmul", [im, cos], hint=o + "_im_cos")], hint=o + "_im_c")
    halves = [cv.emit("unsqueeze", [cv.emit("transpose", [y], {"permutation": back}, hint="%s_%s_back" % (o, t))],
                      {"axes": [r]}, hint="%s_%s_c" % (o, t)) for y, t in ((y_re, "re"), (y_im, "im"))]
    cv.emit("concat", [halves], {"axis": r}, outs=out)


@op("DFT")
def dft(cv, node):
    a = attrs_of(node)
    o = cv.out(node)
    dims = cv.static_dims(node.input[0], "DFT")
    r = len(dims)
    if dims[-1] not in (1, 2):
        raise Unsupported("the last dim must be 1 (real) or 2 (complex), found %d" % dims[-1])
    axis = int(a.get("axis", 1))
    axis = axis + r if axis < 0 else axis
    if not 0 <= axis < r - 1:
        raise Unsupported("axis %d outside the signal dims 0..%d" % (int(a.get("axis", 1)), r - 2))
    length = dims[axis]
    if cv.has(node, 1):
        length = int(np.asarray(cv.known_input(node, 1, "DFT's dft_length (the output's length)")).reshape(-1)[0])
    inverse, onesided = int(a.get("inverse", 0)), int(a.get("onesided", 0))
    if inverse and onesided:
        raise Unsupported("inverse with onesided=1 is not supported")
    _dft(cv, cv.inp(node, 0), dims, axis, length, inverse, onesided, o, o)


@op("STFT")
def stft(cv, node):
    """Frames of frame_length every frame_step, times the window, then
    the DFT of each frame: [batch, frames, bins, 2]."""
    a = attrs_of(node)
    o = cv.out(node)
    b, t, c = cv.static_dims(node.input[0], "STFT")
    step = int(np.asarray(cv.known_input(node, 1, "STFT's frame_step (it sets the frame count)")).reshape(-1)[0])
    win_dims = cv.static_dims(node.input[2], "STFT's window") if cv.has(node, 2) else None
    if cv.has(node, 3):
        length = int(np.asarray(cv.known_input(node, 3, "STFT's frame_length")).reshape(-1)[0])
    elif win_dims:
        length = win_dims[0]
    else:
        raise Unsupported("STFT needs a window or a frame_length")
    if step < 1 or not 1 <= length <= t:
        raise Unsupported("frame_step %d and frame_length %d on a signal of %d" % (step, length, t))
    frames = (t - length) // step + 1
    idx = (np.arange(frames)[:, None] * step + np.arange(length)[None, :]).astype(np.int64)
    x = cv.emit("gather", [cv.inp(node, 0), cv.const(idx, o + "_frame_index")], {"axis": 1}, hint=o + "_frames")
    if win_dims:
        w = cv.reshape(cv.inp(node, 2), [1, 1, length, 1], hint=o + "_window")
        x = cv.emit("mul", [x, w], hint=o + "_windowed")
    _dft(cv, x, [b, frames, length, c], 2, length, 0, int(a.get("onesided", 1)), o, o)
