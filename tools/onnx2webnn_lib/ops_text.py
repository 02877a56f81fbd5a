"""TfIdfVectorizer: n-gram counts over integer token sequences of static
length. Every window the n-grams can occupy (each length, each skip) is
known from the length alone, so the windows are gathered at once and
compared with the pool's n-grams; the matches are summed per n-gram and
sent to their output columns with a matrix product."""
import numpy as np

from .core import Unsupported, attrs_of, registry

OPS, op = registry()


def _windows(n, length, max_skip):
    """Positions of every window of `length` tokens with a gap of `skip`
    between them, skip 0..max_skip (unigrams once)."""
    out = []
    for skip in range(max_skip + 1 if length > 1 else 1):
        step = skip + 1
        for p in range(n - (length - 1) * step):
            out.append([p + k * step for k in range(length)])
    return np.array(out, np.int64).reshape(-1, length)


@op("TfIdfVectorizer")
def tfidf_vectorizer(cv, node):
    a = attrs_of(node)
    o = cv.out(node)
    mode = a.get("mode")
    if mode not in ("TF", "IDF", "TFIDF"):
        raise Unsupported("mode '%s' (TF, IDF or TFIDF)" % mode)
    if "pool_strings" in a:
        raise Unsupported("pool_strings: string tokens are not a WebNN dtype")
    dims = cv.static_dims(node.input[0], "TfIdfVectorizer")
    if len(dims) not in (1, 2):
        raise Unsupported("input of rank %d (1 or 2)" % len(dims))
    x = cv.inp(node, 0)
    if len(dims) == 1:
        x = cv.reshape(x, [1, dims[0]], hint=o + "_batch")
    b, n = ([1] + dims)[-2:]
    pool = np.array(a["pool_int64s"], np.int64)
    starts = [int(v) for v in a["ngram_counts"]] + [len(pool)]
    columns = [int(v) for v in a["ngram_indexes"]]
    width = max(columns) + 1
    lo, hi, max_skip = int(a["min_gram_length"]), int(a["max_gram_length"]), int(a["max_skip_count"])
    dt = cv.np_dtype(node.input[0])
    total, first = None, 0
    for length in range(1, len(starts)):
        grams = pool[starts[length - 1]:starts[length]].reshape(-1, length)
        ids = list(range(first, first + len(grams)))
        first += len(grams)
        win = _windows(n, length, max_skip)
        if not lo <= length <= hi or not len(grams) or not len(win):
            continue
        tag = "%s_%dgram" % (o, length)
        toks = cv.emit("gather", [x, cv.const(win.reshape(-1), tag + "_positions")], {"axis": 1}, hint=tag + "_tokens")
        toks = cv.reshape(toks, [b, len(win), 1, length], hint=tag + "_windows")
        same = cv.emit("equal", [toks, cv.const(grams.astype(dt)[None, None], tag + "_pool")], hint=tag + "_same")
        same = cv.emit("cast", [same], {"type": "float32"}, hint=tag + "_same_f")
        hit = cv.emit("reduceMin", [same], {"axes": [3], "keepDimensions": False}, hint=tag + "_hit")
        counts = cv.emit("reduceSum", [hit], {"axes": [1], "keepDimensions": False}, hint=tag + "_counts")
        to_col = np.zeros((len(grams), width), np.float32)
        for g, gid in enumerate(ids):
            to_col[g, columns[gid]] = 1
        y = cv.emit("matmul", [counts, cv.const(to_col, tag + "_columns")], hint=tag + "_y")
        total = y if total is None else cv.emit("add", [total, y], hint=o + "_sum")
    if total is None:
        raise Unsupported("no n-gram length in %d..%d has pool entries and fits %d tokens" % (lo, hi, n))
    if mode != "TF":
        if mode == "IDF":
            total = cv.emit("cast", [cv.emit("greater", [total, cv.const(np.array(0, np.float32), o + "_zero")],
                                             hint=o + "_seen")], {"type": "float32"}, hint=o + "_seen_f")
        w = np.array(a.get("weights", [1.0] * width), np.float32)
        total = cv.emit("mul", [total, cv.const(w, o + "_weights")], hint=o + "_weighted")
    if len(dims) == 1:
        cv.reshape(total, [width], out=o)
    else:
        cv.emit("identity", [total], outs=o)
