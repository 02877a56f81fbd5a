"""Sampling an image at computed points: GridSample (each output pixel
at a point the grid gives, nearest, bilinear or bicubic, with zeros,
border or reflection padding, as ONNX and PyTorch's grid_sample define
them) and RoiAlign (bins of regions of interest averaged over bilinear
samples). Both are gathers from the image flattened over its pixels,
with the points and weights computed elementwise."""
import numpy as np

from .core import Unsupported, attrs_of, registry
from .ops_basic import round_half_even

OPS, op = registry()

CUBIC_A = -0.75


class _Sampler:
    def __init__(self, cv, node, o):
        self.cv, self.node, self.o = cv, node, o
        a = attrs_of(node)
        self.mode = a.get("mode", "bilinear")
        self.pad = a.get("padding_mode", "zeros")
        self.align = int(a.get("align_corners", 0))
        if self.mode not in ("bilinear", "nearest", "bicubic"):
            raise Unsupported("mode '%s' (bilinear, nearest or bicubic)" % self.mode)
        if self.pad not in ("zeros", "border", "reflection"):
            raise Unsupported("padding_mode '%s' (zeros, border or reflection)" % self.pad)
        self.n, self.c, self.h, self.w = cv.static_dims(node.input[0], "GridSample")
        gn, self.ho, self.wo, two = cv.static_dims(node.input[1], "GridSample's grid")
        if gn != self.n or two != 2:
            raise Unsupported("grid of shape %s for an input of %d images" % ([gn, self.ho, self.wo, two], self.n))
        flat = cv.reshape(cv.inp(node, 0), [self.n, self.c, self.h * self.w], hint=o + "_pixels")
        self.flat = flat
        self.k = 0

    def e(self, op_, args, tag, attrs=None):
        self.k += 1
        return self.cv.emit(op_, args, attrs, hint="%s_%s%d" % (self.o, tag, self.k))

    def num(self, v):
        self.k += 1
        return self.cv.scalar(v, self.node.input[0], "%s_k%d" % (self.o, self.k))

    def coord(self, axis, size):
        """Grid component `axis` (0: x, 1: y) in pixels."""
        g = self.e("slice", [self.cv.inp(self.node, 1)], "g",
                   {"starts": [0, 0, 0, axis], "sizes": [self.n, self.ho, self.wo, 1]})
        g = self.e("reshape", [g], "g", {"newShape": [self.n, self.ho, self.wo]})
        one = self.num(1.0)
        if self.align:  # (g + 1) / 2 * (size - 1)
            return self.e("mul", [self.e("add", [g, one], "u"), self.num((size - 1) / 2.0)], "u")
        return self.e("div", [self.e("sub", [self.e("mul", [self.e("add", [g, one], "u"), self.num(float(size))], "u"),
                                             one], "u"), self.num(2.0)], "u")

    def reflect(self, x, size):
        """x folded into [lo, hi] by reflection at its ends (lo, hi: the
        pixel centres' range, or the image's edges without align_corners),
        then clipped to [0, size - 1]."""
        lo, hi = (0.0, size - 1.0) if self.align else (-0.5, size - 0.5)
        span = hi - lo
        if span <= 0:
            return self.e("mul", [x, self.num(0.0)], "zero")
        t = self.e("sub", [x, self.num(lo)], "r")
        m = self.e("sub", [t, self.e("mul", [self.e("floor", [self.e("div", [t, self.num(2 * span)], "r")], "r"),
                                             self.num(2 * span)], "r")], "r")
        folded = self.e("where", [self.e("greater", [m, self.num(span)], "r"),
                                  self.e("sub", [self.num(2 * span), m], "r"), m], "r")
        return self.clip(self.e("add", [folded, self.num(lo)], "r"), size)

    def clip(self, x, size):
        return self.e("clamp", [x], "c", {"minValue": 0.0, "maxValue": float(size - 1)})

    def tap(self, iy, ix):
        """The input at whole pixel (iy, ix) (floats [n, ho, wo]), padded
        per padding_mode: [n, c, ho, wo]."""
        valid = None
        if self.pad == "zeros":
            inside = [self.e("greaterOrEqual", [ix, self.num(0.0)], "in"),
                      self.e("lesserOrEqual", [ix, self.num(self.w - 1.0)], "in"),
                      self.e("greaterOrEqual", [iy, self.num(0.0)], "in"),
                      self.e("lesserOrEqual", [iy, self.num(self.h - 1.0)], "in")]
            valid = inside[0]
            for b in inside[1:]:
                valid = self.e("logicalAnd", [valid, b], "in")
        elif self.pad == "reflection":
            ix, iy = self.reflect(ix, self.w), self.reflect(iy, self.h)
        ix, iy = self.clip(ix, self.w), self.clip(iy, self.h)
        lin = self.e("add", [self.e("mul", [iy, self.num(float(self.w))], "lin"), ix], "lin")
        lin = self.e("cast", [lin], "lin", {"type": "int64"})
        lin = self.e("reshape", [lin], "lin", {"newShape": [self.n, 1, self.ho * self.wo]})
        lin = self.e("expand", [lin], "lin", {"newShape": [self.n, self.c, self.ho * self.wo]})
        v = self.e("gatherElements", [self.flat, lin], "v", {"axis": 2})
        v = self.e("reshape", [v], "v", {"newShape": [self.n, self.c, self.ho, self.wo]})
        if valid is not None:
            v = self.e("where", [self.e("unsqueeze", [valid], "m", {"axes": [1]}), v, self.num(0.0)], "v")
        return v

    def weighted(self, v, wgt):
        return self.e("mul", [v, self.e("unsqueeze", [wgt], "w", {"axes": [1]})], "wv")


def _cubic(s, t):
    """The four cubic-convolution weights (A = -0.75) at distance t from
    the pixel before."""
    a = CUBIC_A
    one = s.num(1.0)
    t1 = s.e("add", [t, one], "t")  # distance to the tap at -1
    u = s.e("sub", [one, t], "t")  # to the tap at +1
    u1 = s.e("add", [u, one], "t")  # to +2

    def far(d):  # ((A d - 5A) d + 8A) d - 4A, for 1 <= d <= 2
        p = s.e("sub", [s.e("mul", [d, s.num(a)], "p"), s.num(5 * a)], "p")
        p = s.e("add", [s.e("mul", [p, d], "p"), s.num(8 * a)], "p")
        return s.e("sub", [s.e("mul", [p, d], "p"), s.num(4 * a)], "p")

    def near(d):  # ((A + 2) d - (A + 3)) d d + 1, for d <= 1
        p = s.e("sub", [s.e("mul", [d, s.num(a + 2)], "p"), s.num(a + 3)], "p")
        return s.e("add", [s.e("mul", [s.e("mul", [p, d], "p"), d], "p"), one], "p")
    return [far(t1), near(t), near(u), far(u1)]


@op("GridSample")
def grid_sample(cv, node):
    o = cv.out(node)
    s = _Sampler(cv, node, o)
    x, y = s.coord(0, s.w), s.coord(1, s.h)
    if s.mode != "bicubic":
        if s.pad == "border":
            x, y = s.clip(x, s.w), s.clip(y, s.h)
        elif s.pad == "reflection":
            x, y = s.reflect(x, s.w), s.reflect(y, s.h)
    if s.mode == "nearest":
        ix = round_half_even(cv, x, node.input[0], o + "_nx")
        iy = round_half_even(cv, y, node.input[0], o + "_ny")
        cv.emit("identity", [s.tap(iy, ix)], outs=o)
        return
    x0, y0 = s.e("floor", [x], "f"), s.e("floor", [y], "f")
    tx, ty = s.e("sub", [x, x0], "t"), s.e("sub", [y, y0], "t")
    if s.mode == "bilinear":
        one = s.num(1.0)
        wx = [s.e("sub", [one, tx], "w"), tx]
        wy = [s.e("sub", [one, ty], "w"), ty]
        offsets = [0.0, 1.0]
    else:
        wx, wy = _cubic(s, tx), _cubic(s, ty)
        offsets = [-1.0, 0.0, 1.0, 2.0]
    acc = None
    for j, dy in enumerate(offsets):
        iy = s.e("add", [y0, s.num(dy)], "iy")
        for i, dx in enumerate(offsets):
            ix = s.e("add", [x0, s.num(dx)], "ix")
            v = s.weighted(s.tap(iy, ix), s.e("mul", [wy[j], wx[i]], "w"))
            acc = v if acc is None else s.e("add", [acc, v], "acc")
    cv.emit("identity", [acc], outs=o)


@op("RoiAlign")
def roi_align(cv, node):
    """Each region's bins averaged (or maxed) over sampling_ratio^2
    bilinear samples, as ONNX (after onnxruntime) defines them: a sample
    outside [-1, size] gives 0, one below 0 reads at 0, one at or past the
    last pixel reads the last. The sample grid is static; its place comes
    from the regions' values, computed on the device. sampling_ratio 0
    (a grid sized by each region) would make the shape data-dependent."""
    a = attrs_of(node)
    o = cv.out(node)
    n, c, h, w = cv.static_dims(node.input[0], "RoiAlign")
    r = cv.static_dims(node.input[1], "RoiAlign's rois")[0]
    ph, pw = int(a.get("output_height", 1)), int(a.get("output_width", 1))
    g = int(a.get("sampling_ratio", 0))
    if g <= 0:
        raise Unsupported("sampling_ratio %d: an adaptive grid (ceil of each region's size) gives a data-dependent "
                          "shape; set sampling_ratio" % g)
    mode = a.get("mode", "avg")
    if mode not in ("avg", "max"):
        raise Unsupported("mode '%s' (avg or max)" % mode)
    half = a.get("coordinate_transformation_mode", "half_pixel" if cv.opset >= 16 else "output_half_pixel")
    if half not in ("half_pixel", "output_half_pixel"):
        raise Unsupported("coordinate_transformation_mode '%s'" % half)
    k = [0]

    def e(op_, args, attrs=None):
        k[0] += 1
        return cv.emit(op_, args, attrs, hint="%s_%d" % (o, k[0]))

    def num(v, dt=np.float32):
        k[0] += 1
        return cv.const(np.array(v, dt), "%s_k%d" % (o, k[0]))
    rois = cv.inp(node, 1)
    scale, offset = float(a.get("spatial_scale", 1.0)), 0.5 if half == "half_pixel" else 0.0

    def corner(col):
        v = e("slice", [rois], {"starts": [0, col], "sizes": [r, 1]})
        return e("sub", [e("mul", [v, num(scale)]), num(offset)])  # [r, 1]
    axes = []
    for lo_col, hi_col, bins, size in ((1, 3, ph, h), (0, 2, pw, w)):
        start = corner(lo_col)
        extent = e("sub", [corner(hi_col), start])
        if half != "half_pixel":
            extent = e("max", [extent, num(1.0)])
        steps = np.array([p + (i + 0.5) / g for p in range(bins) for i in range(g)], np.float32)
        pos = e("add", [start, e("mul", [e("div", [extent, num(float(bins))]), cv.const(steps[None], o + "_steps")])])
        ok = e("logicalAnd", [e("greaterOrEqual", [pos, num(-1.0)]), e("lesserOrEqual", [pos, num(float(size))])])
        pos = e("max", [pos, num(0.0)])
        low = e("floor", [pos])
        past = e("greaterOrEqual", [low, num(size - 1.0)])
        low = e("where", [past, num(size - 1.0), low])
        pos = e("where", [past, num(size - 1.0), pos])
        high = e("clamp", [e("add", [low, num(1.0)])], {"minValue": 0.0, "maxValue": float(size - 1)})
        t = e("sub", [pos, low])
        wts = [e("mul", [e("sub", [num(1.0), t]), e("cast", [ok], {"type": "float32"})]),
               e("mul", [t, e("cast", [ok], {"type": "float32"})])]
        axes.append(([low, high], wts))
    (ys, wy), (xs, wx) = axes
    py, px = ph * g, pw * g
    img = e("gather", [cv.inp(node, 0), cv.inp(node, 2)], {"axis": 0})  # each region's image
    img = e("reshape", [img], {"newShape": [r, c, h * w]})
    terms = []
    for iy in range(2):
        for ix in range(2):
            lin = e("add", [e("mul", [e("reshape", [ys[iy]], {"newShape": [r, py, 1]}), num(float(w))]),
                            e("reshape", [xs[ix]], {"newShape": [r, 1, px]})])
            lin = e("reshape", [e("cast", [lin], {"type": "int64"})], {"newShape": [r, 1, py * px]})
            v = e("gatherElements", [img, e("expand", [lin], {"newShape": [r, c, py * px]})], {"axis": 2})
            wt = e("mul", [e("reshape", [wy[iy]], {"newShape": [r, 1, py, 1]}),
                           e("reshape", [wx[ix]], {"newShape": [r, 1, 1, px]})])
            terms.append(e("mul", [e("reshape", [v], {"newShape": [r, c, py, px]}), wt]))
    comb = "add" if mode == "avg" else "max"
    acc = terms[0]
    for t in terms[1:]:
        acc = e(comb, [acc, t])
    acc = e("reshape", [acc], {"newShape": [r, c, ph, g, pw, g]})
    if mode == "avg":
        acc = e("div", [e("reduceSum", [acc], {"axes": [3, 5], "keepDimensions": False}), num(float(g * g))])
        cv.emit("identity", [acc], outs=o)
    else:
        cv.emit("reduceMax", [acc], {"axes": [3, 5], "keepDimensions": False}, outs=o)
