#!/usr/bin/python3
"""How close int4 weights keep an encoder to float, end to end:

    check_accuracy.py --berth PATH --cpu PATH [--keep DIR]

Generates a small BERT-style encoder with bench/gen_bert.py (fixed seed),
converts it in float32 and with --quantize int4 under several options,
runs each with `berth run` on the cpu backend on the same input (ids as
bench/bench_util.c makes them, no padding), and checks each option's
cosine with the float output against a floor and its archive's bytes
against a ceiling (shares of the float archive), and that the options
rank as measured: --asymmetric --scale mse leaves less than 3/4 of the
symmetric absmax error (1 - cosine) and less than --asymmetric alone,
and --int8 on the embedding tables (this model's most sensitive weights)
less than half again. The floors and ceilings sit just outside what
was measured (in the table printed), so a quantizer that got worse, or
bigger, fails."""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "onnx2webnn")
GEN = os.path.join(ROOT, "bench", "gen_bert.py")
SEQ = 64
MSE = ["--block", "32", "--asymmetric", "--scale", "mse"]
# tag, flags, cosine floor, bytes ceiling (share of float's archive)
CASES = [
    ("int4", ["--block", "32"], 0.9966, 0.166),
    ("uint4", ["--block", "32", "--asymmetric"], 0.9975, 0.170),
    ("uint4-mse", MSE, 0.9977, 0.170),
    # in a model this small the embedding tables weigh most (in the
    # 12-layer bench encoder, the value and output projections)
    ("uint4-mse-emb8", MSE + ["--int8", "*embeddings*"], 0.9997, 0.19),
]
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: %s" % what)
    return cond


def output(args, work, tag):
    ini = os.path.join(work, tag + ".ini")
    with open(ini, "w") as f:
        f.write("[model]\ngraph = %s.webnn\nweights = %s.safetensors\n[backend]\nuse = %s\n"
                "[buckets]\nb = batch=1 seq=%d\n" % (tag, tag, args.cpu, SEQ))
    out = os.path.join(work, tag + ".out.safetensors")
    p = subprocess.run([args.berth, "run", ini, "--quiet", "--repeat", "0", "--output", out,
                        "--input", "input_ids=" + os.path.join(work, "ids.npy"),
                        "--input", "attention_mask=" + os.path.join(work, "mask.npy")], capture_output=True, text=True)
    if not check(p.returncode == 0, "%s: berth run exit %d: %s %s" % (tag, p.returncode, p.stdout, p.stderr)):
        return None
    raw = open(out, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    e = json.loads(raw[8:8 + n])["last_hidden_state"]
    a, b = e["data_offsets"]
    return np.frombuffer(raw[8 + n + a:8 + n + b], "<f4").astype(np.float64)


def convert(work, tag, flags):
    p = subprocess.run(["/usr/bin/python3", TOOL, os.path.join(work, "m.onnx"), os.path.join(work, tag + ".webnn"),
                        "--dyn", "batch=1", "--dyn", "seq=%d" % SEQ] + flags, capture_output=True, text=True)
    return check(p.returncode == 0, "%s: onnx2webnn exit %d: %s" % (tag, p.returncode, p.stderr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--berth", required=True)
    ap.add_argument("--cpu", required=True, help="the cpu backend module")
    ap.add_argument("--keep", help="work in this folder and keep it")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="berth-quant-acc-")
    os.makedirs(work, exist_ok=True)
    p = subprocess.run(["/usr/bin/python3", GEN, os.path.join(work, "m.onnx"), "--layers", "4", "--hidden", "128",
                        "--heads", "4", "--ffn", "512", "--vocab", "1000", "--max-pos", str(SEQ)],
                       capture_output=True, text=True)
    if not check(p.returncode == 0, "gen_bert.py exit %d: %s" % (p.returncode, p.stderr)):
        return 1
    np.save(os.path.join(work, "ids.npy"), ((np.arange(SEQ) * 7919 + 13) % 1000).astype(np.int64)[None])
    np.save(os.path.join(work, "mask.npy"), np.ones((1, SEQ), np.int64))
    ref = output(args, work, "float") if convert(work, "float", []) else None
    if ref is None:
        return 1
    fbytes = os.path.getsize(os.path.join(work, "float.safetensors"))
    err = {}
    print("option | flags | bytes (share of float %d) | cosine" % fbytes)
    for tag, flags, floor, ceiling in CASES:
        if not convert(work, tag, ["--quantize", "int4"] + flags):
            continue
        got = output(args, work, tag)
        if got is None:
            continue
        cos = float(ref @ got / np.sqrt((ref @ ref) * (got @ got)))
        nbytes = os.path.getsize(os.path.join(work, tag + ".safetensors"))
        print("%s | %s | %d (%.2f%%) | %.5f" % (tag, " ".join(flags), nbytes, 100.0 * nbytes / fbytes, cos))
        check(cos >= floor, "%s: cosine %.5f below %.4f" % (tag, cos, floor))
        check(nbytes <= ceiling * fbytes, "%s: %d bytes, over %.1f%% of float's %d" % (tag, nbytes, 100 * ceiling, fbytes))
        err[tag] = 1 - cos
    if len(err) == len(CASES):
        check(err["uint4-mse"] < 0.75 * err["int4"], "uint4 --scale mse: error %.3g, not under 3/4 of int4's %.3g"
              % (err["uint4-mse"], err["int4"]))
        check(err["uint4-mse"] < err["uint4"], "--scale mse: error %.3g, not under absmax's %.3g"
              % (err["uint4-mse"], err["uint4"]))
        check(err["uint4-mse-emb8"] < 0.5 * err["uint4-mse"], "--int8 on the embeddings: error %.3g, not under "
              "half of %.3g without" % (err["uint4-mse-emb8"], err["uint4-mse"]))
    if not args.keep and not FAILS:
        shutil.rmtree(work)
    print("%d failure%s" % (len(FAILS), "" if len(FAILS) == 1 else "s"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
