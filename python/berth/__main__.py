"""python -m berth: the berth command's run and backends, from Python.

    python -m berth run CONFIG --input x=x.npy [--output out.npz] [--repeat N]
    python -m berth backends [--path DIR]...
"""
import argparse
import logging
import statistics
import sys
import time

import numpy as np

from . import Error, Session, backends


def _run(a):
    feeds = {}
    for spec in a.input:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            print("python -m berth run: --input: expected NAME=FILE.npy, found %r" % spec, file=sys.stderr)
            return 2
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            print("python -m berth run: --input %s: %s" % (spec, e), file=sys.stderr)
            return 1
    s = Session(a.config, backend=a.use, model=a.model, log_level="info" if not a.quiet else "error")
    with s:
        unknown = [n for n in feeds if n not in [i.name for i in s.inputs]]
        if unknown:
            print("python -m berth run: --input %s: the model has no such input (its inputs: %s)" %
                  (unknown[0], ", ".join(i.name for i in s.inputs)), file=sys.stderr)
            return 1
        feeds = dict(s.sample_inputs(), **feeds)  # inputs not given: berth run's generated values
        if not a.quiet:
            print("backend %s (%s)" % (s.backend, s.device))
        t0 = time.perf_counter()
        out = s.run(feeds)
        first = time.perf_counter() - t0
        times = []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            s.run(feeds)
            times.append(time.perf_counter() - t0)
        if not a.quiet:
            print("first run %.3f ms (bucket %s)" % (first * 1e3, s.buckets()[s.last_bucket] if s.buckets() else "-"))
            if times:
                times.sort()
                p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
                print("later runs: min %.4f ms, median %.4f ms, p90 %.4f ms" %
                      (times[0] * 1e3, statistics.median(times) * 1e3, p90 * 1e3))
        for name, y in out.items():
            print(_describe(name, y))
        if a.output:
            np.savez(a.output, **out)
    return 0


_SHORT = {"float32": "f32", "float16": "f16", "int32": "i32", "uint32": "u32", "int64": "i64", "uint64": "u64",
          "int8": "i8", "uint8": "u8"}


def _describe(name, y):
    """An output as berth run prints it: dtype and dims, the first six
    values, their sum (summed in order, in double) and FNV-1a of the
    bytes, so the two programs' lines can be compared as text."""
    flat = y.reshape(-1)
    vals = flat.astype(np.float64) if y.dtype.name in ("float32", "int32", "int64", "uint8") else \
        np.zeros(flat.size)
    total = float(np.cumsum(vals)[-1]) if vals.size else 0.0
    h = 0xcbf29ce484222325
    for b in y.tobytes():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "  output %s: %s[%s] first:%s%s sum: %.6g fnv1a: %016x" % (
        name, _SHORT.get(y.dtype.name, y.dtype.name), ", ".join(str(d) for d in y.shape),
        "".join(" %.6g" % v for v in vals[:6]), " ..." if vals.size > 6 else "", total, h)


def _backends(a):
    found = backends(a.path)
    for b in found:
        if b.error:
            print("%-44s %s: %s" % (b.path, b.name or "unusable", b.error))
        else:
            print("%-44s %s %s, ABI %d, device: %s" % (b.path, b.name, b.version or "", b.abi_version, b.device))
    if not found:
        print("python -m berth backends: no backend module found", file=sys.stderr)
        return 1
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m berth", description="berth's run and backends commands")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="open a deployment and run it on .npy inputs")
    r.add_argument("config")
    r.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input (repeatable); inputs not given are generated as berth run generates them")
    r.add_argument("--output", metavar="FILE.npz", help="write the outputs as one .npz")
    r.add_argument("--model", help="open [model.NAME] of a config describing several models")
    r.add_argument("--use", help="override [backend] use, e.g. --use cpu")
    r.add_argument("--repeat", type=int, default=3, help="warm runs after the first (default 3)")
    r.add_argument("--quiet", action="store_true", help="print only errors and outputs")
    b = sub.add_parser("backends", help="list the backend modules and why one cannot be used")
    b.add_argument("--path", action="append", default=[], metavar="DIR")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # berth's log lines on stderr, as berth prints them
    try:
        return _run(a) if a.command == "run" else _backends(a)
    except Error as e:
        print("python -m berth %s: %s" % (a.command, e.message), file=sys.stderr)
        return 3 if type(e).__name__ == "UnsupportedError" else 1


if __name__ == "__main__":
    sys.exit(main())
