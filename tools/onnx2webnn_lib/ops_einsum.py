"""Einsum. Each operand first loses its repeated letters (a diagonal,
taken as a product with an identity mask summed over the repeat) and
the letters no one else needs (summed); operands are then contracted
pairwise, left to right, each pair as one batched matmul: the letters
both keep that the result needs are the batch, the ones only the pair
needs are contracted, the rest are the matmul's rows and columns."""
import numpy as np

from .core import Unsupported, attrs_of, registry

OPS, op = registry()


def _parse(eq, ranks):
    """Terms per operand and the output's, with '...' spelled as
    upper-case letters for the dims it covers."""
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise Unsupported("equation '%s' has %d operands, the node %d" % (eq, len(terms), len(ranks)))
    ell = max((r - len(t.replace("...", "")) for t, r in zip(terms, ranks) if "..." in t), default=0)
    fill = "".join(chr(ord("A") + i) for i in range(ell))
    out_terms = []
    for t, r in zip(terms, ranks):
        if "..." in t:
            t = t.replace("...", fill[ell - (r - len(t.replace("...", ""))):])
        if len(t) != r or not t.isalpha():
            raise Unsupported("term '%s' for an operand of rank %d" % (t, r))
        out_terms.append(t)
    if arrow:
        out = rhs.replace("...", fill)
    else:  # implicit: the ellipsis, then the letters seen once, sorted
        once = sorted(ch for ch in set("".join(out_terms)) if "".join(out_terms).count(ch) == 1 and ch.islower())
        out = fill + "".join(once)
    return out_terms, out


class _Term:
    def __init__(self, ident, letters, dims):
        self.ident, self.letters, self.dims = ident, letters, dict(zip(letters, dims))


def _reduce_alone(cv, t, keep, o, dt):
    """Diagonals of repeated letters, then sums over letters not in keep."""
    while len(set(t.letters)) != len(t.letters):
        ch = next(c for c in t.letters if t.letters.count(c) > 1)
        i = t.letters.index(ch)
        j = t.letters.index(ch, i + 1)
        n = t.dims[ch]
        shape = [1] * len(t.letters)
        shape[i], shape[j] = n, n
        mask = cv.const(np.eye(n, dtype=dt).reshape(shape), o + "_eye")
        ident = cv.emit("reduceSum", [cv.emit("mul", [t.ident, mask], hint=o + "_diag_mask")],
                        {"axes": [j], "keepDimensions": False}, hint=o + "_diag")
        t = _Term(ident, t.letters[:j] + t.letters[j + 1:], [t.dims[c] for c in t.letters[:j] + t.letters[j + 1:]])
    drop = [i for i, c in enumerate(t.letters) if c not in keep]
    if drop:
        letters = "".join(c for c in t.letters if c in keep)
        ident = cv.emit("reduceSum", [t.ident], {"axes": drop, "keepDimensions": False}, hint=o + "_sum")
        t = _Term(ident, letters, [t.dims[c] for c in letters])
    return t


def _arrange(cv, t, order, shape, o):
    perm = [t.letters.index(c) for c in order]
    x = t.ident if perm == list(range(len(perm))) else cv.emit("transpose", [t.ident], {"permutation": perm},
                                                               hint=o + "_arranged")
    return cv.reshape(x, shape, hint=o + "_grouped")


def _contract(cv, a, b, keep, o):
    """a and b into one term holding the letters in keep."""
    both = [c for c in a.letters if c in b.letters]
    batch = [c for c in both if c in keep]
    summed = [c for c in both if c not in keep]
    rows = [c for c in a.letters if c not in both]
    cols = [c for c in b.letters if c not in both]
    size = lambda t, cs: int(np.prod([t.dims[c] for c in cs], dtype=np.int64))  # noqa: E731
    nb, m, k, n = size(a, batch), size(a, rows), size(a, summed), size(b, cols)
    x = _arrange(cv, a, batch + rows + summed, [nb, m, k], o + "_a")
    y = _arrange(cv, b, batch + summed + cols, [nb, k, n], o + "_b")
    z = cv.emit("matmul", [x, y], hint=o + "_product")
    letters = "".join(batch + rows + cols)
    dims = [a.dims[c] for c in batch + rows] + [b.dims[c] for c in cols]
    return _Term(cv.reshape(z, dims, hint=o + "_ungrouped"), letters, dims)


@op("Einsum")
def einsum(cv, node):
    o = cv.out(node)
    dims = [cv.static_dims(n, "Einsum") for n in node.input]
    terms, out = _parse(attrs_of(node)["equation"], [len(d) for d in dims])
    size = {}
    for t, d in zip(terms, dims):
        for c, n in zip(t, d):
            if size.setdefault(c, n) != n:
                raise Unsupported("letter '%s' stands for sizes %d and %d" % (c, size[c], n))
    ts = [_Term(cv.inp(node, i), t, d) for i, (t, d) in enumerate(zip(terms, dims))]
    needed_after = lambda i: set(out).union(*[set(t.letters) for t in ts[i + 1:]])  # noqa: E731
    dt = cv.np_dtype(node.input[0])
    acc = _reduce_alone(cv, ts[0], needed_after(0) | (set(ts[1].letters) if len(ts) > 1 else set()), o, dt)
    for i in range(1, len(ts)):
        keep = needed_after(i)
        nxt = _reduce_alone(cv, ts[i], keep | set(acc.letters), "%s_%d" % (o, i), dt)
        acc = _contract(cv, acc, nxt, keep, "%s_%d" % (o, i))
    acc = _reduce_alone(cv, acc, set(out), o + "_out", dt)
    if sorted(acc.letters) != sorted(out):
        raise Unsupported("output letters '%s' not all found in the operands" % out)
    perm = [acc.letters.index(c) for c in out]
    if perm == list(range(len(perm))):
        cv.emit("identity", [acc.ident], outs=o)
    else:
        cv.emit("transpose", [acc.ident], {"permutation": perm}, outs=o)
