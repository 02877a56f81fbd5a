#!/usr/bin/python3
"""Weight-only quantization in tools/onnx2webnn, end to end:

    check_quantize.py --berth PATH --cpu PATH [--vulkan PATH] [--keep DIR]

Builds a small ONNX model (MatMul + Add, Gemm with transB, a Gather
embedding feeding a MatMul, a weight two MatMuls share, and weights that
must stay float), converts it in float and with --quantize int8 and int4,
symmetric and --asymmetric, at --block 32 and 16, runs each with `berth run`
on the cpu backend (and the vulkan one when given: the engine fuses the
quantized matmuls and gathers, and each backend computes them from the
packed weights), and checks:
  1. outputs equal a NumPy forward pass over weights dequantized by this
     script's own quantizer (which mirrors the tool's rules, independently
     written), and the archive holds exactly that quantizer's values;
  2. outputs are close to the float model's;
  3. the archive holds I8/U8 entries (4-bit ones packed, with the marker)
     and is smaller than the float weights it replaced;
  4. a weight whose reduction length is not a multiple of the block, one
     a Gemm with alpha != 1 reads, and one another op reads too, stay
     float, each with a line;
  5. with --scale mse and --int8 W3*: outputs equal a NumPy forward pass
     over the archive's own values dequantized, no block's squared error
     exceeds the absmax rule's, and W3 is symmetric int8 among 4-bit
     weights;
  6. bad --scale and --int8 values exit 2 with a line saying why;
  7. a small BERT-style encoder (bench/gen_bert.py) with int8 weights, run
     with the cpu backend's quantized_activations = int8 (its integer tile
     for the isa; the portable one under isa = generic), stays within
     cosine 0.999 of the float model's output, as does the same model
     with float activations, and the option changes the output."""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "onnx2webnn")
GEN_BERT = os.path.join(ROOT, "bench", "gen_bert.py")
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: %s" % what)
    return cond


# ---- the model ----------------------------------------------------------

def weights():
    r = np.random.RandomState(7)
    f = lambda *s: (r.randn(*s) * 0.5).astype(np.float32)  # noqa: E731
    w = {"W1": f(64, 48), "b1": f(48), "W2": f(32, 64), "c2": f(32), "E": f(50, 32), "W3": f(32, 15),
         "W4": f(48, 8), "W5": f(64, 8), "W6": f(32, 16), "W7": f(32, 8)}
    w["W1"][:, 5] += 3.0  # a column with only positive values (asymmetric min is clamped to 0)
    w["E"][7, :] = 0.0  # an all-zero block: scale 1
    # Ties: per column, a largest value that makes the scale exactly 1/256
    # (for int8, int4, uint8, uint4 in turn) and a value of 2.5 / 256,
    # which must round to even (2), not up.
    for c, top, signed in ((0, 127, True), (1, 7, True), (2, 255, False), (3, 15, False)):
        col = np.clip(w["W6"][:, c], -top / 512, top / 512)
        w["W6"][:, c] = col if signed else np.abs(col)
        w["W6"][0, c], w["W6"][1, c] = top / 256, 2.5 / 256
    return w


def build(w):
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["h1"]),
        helper.make_node("Add", ["h1", "b1"], ["a1"]),
        helper.make_node("Gemm", ["x", "W2", "c2"], ["g"], transB=1),  # [3, 32]
        helper.make_node("Gather", ["E", "ids"], ["e"], axis=0),  # [3, 5, 32]
        helper.make_node("MatMul", ["e", "W3"], ["m"]),  # [3, 5, 15]
        helper.make_node("MatMul", ["g", "W3"], ["m2"]),  # W3 shared: [3, 15]
        helper.make_node("MatMul", ["a1", "W4"], ["odd"]),  # K = 48: float at block 32
        helper.make_node("Gemm", ["x", "W5"], ["half"], alpha=0.5),  # stays float
        # W6 comes from a Constant node, as some exporters write weights
        helper.make_node("Constant", [], ["W6"], value=numpy_helper.from_array(w["W6"], "W6")),
        helper.make_node("Gemm", ["g", "W6"], ["g6"]),  # transB = 0, no C: [3, 16]
        helper.make_node("MatMul", ["g", "W7"], ["g7"]),  # W7 stays float: Neg reads it too
        helper.make_node("Neg", ["W7"], ["negw"], name="neg_w7"),
    ]
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 64]),
           helper.make_tensor_value_info("ids", TensorProto.INT64, [3, 5])]
    shapes = {"a1": [3, 48], "g": [3, 32], "m": [3, 5, 15], "m2": [3, 15], "odd": [3, 8], "half": [3, 8],
              "g6": [3, 16], "g7": [3, 8], "negw": [32, 8]}
    outs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in shapes.items()]
    inits = [numpy_helper.from_array(v, k) for k, v in w.items() if k != "W6"]
    g = helper.make_graph(nodes, "quant", ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def forward(w, x, ids):
    a1 = x @ w["W1"] + w["b1"]
    g = x @ w["W2"].T + w["c2"]
    return {"a1": a1, "g": g, "m": w["E"][ids] @ w["W3"], "m2": g @ w["W3"], "odd": a1 @ w["W4"],
            "half": 0.5 * (x @ w["W5"]), "g6": g @ w["W6"], "g7": g @ w["W7"], "negw": -w["W7"]}


# ---- the reference quantizer ---------------------------------------------

def quant_ref(w, axis, block, bits, asym):
    """Block-wise quantization of matrix w along axis: (q, scale, zero),
    float32 arithmetic, round half to even."""
    w = w if axis == 0 else w.T  # blocks run down the columns
    k, n = w.shape
    qs, ss, zs = np.zeros(w.shape), np.zeros((k // block, n), np.float32), np.zeros((k // block, n))
    qmax = (255 if bits == 8 else 15) if asym else (127 if bits == 8 else 7)
    for g in range(k // block):
        blk = w[g * block:(g + 1) * block]  # [block, n]
        if asym:
            lo, hi = np.minimum(blk.min(0), 0).astype(np.float32), np.maximum(blk.max(0), 0).astype(np.float32)
            s = np.float32(1) * (hi - lo) / np.float32(qmax)
            s[hi == lo] = 1
            z = np.clip(np.round(-lo / s), 0, qmax)
            q = np.clip(np.round(blk / s) + z, 0, qmax)
        else:
            amax = np.abs(blk).max(0)
            s = np.where(amax == 0, np.float32(1), amax / np.float32(qmax)).astype(np.float32)
            z = np.zeros(n)
            q = np.clip(np.round(blk / s), -8 if bits == 4 else -127, qmax)
        qs[g * block:(g + 1) * block], ss[g], zs[g] = q, s, z
    if axis == 1:
        qs, ss, zs = qs.T, ss.T, zs.T
    return qs, ss, zs


def dequant(q, s, z, axis, block):
    rep = lambda a: np.repeat(a, block, axis=axis).astype(np.float32)  # noqa: E731
    return ((q.astype(np.float32) - rep(z)) * rep(s)).astype(np.float32)


# ---- running -----------------------------------------------------------------

def read_archive(path):
    """({name: (dtype, shape, raw bytes)}, metadata)."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    head = json.loads(raw[8:8 + n])
    meta = head.pop("__metadata__", {})
    return {k: (e["dtype"], e["shape"], raw[8 + n + e["data_offsets"][0]:8 + n + e["data_offsets"][1]])
            for k, e in head.items()}, meta


def unpack4(raw, count, signed):
    b = np.frombuffer(raw, np.uint8)
    v = np.stack([b & 15, b >> 4], 1).reshape(-1)[:count].astype(np.int16)
    return np.where(v > 7, v - 16, v) if signed else v


def convert(work, tag, flags):
    out = os.path.join(work, tag + ".webnn")
    p = subprocess.run(["/usr/bin/python3", TOOL, os.path.join(work, "m.onnx"), out] + flags,
                       capture_output=True, text=True)
    check(p.returncode == 0, "%s: onnx2webnn exit %d: %s" % (tag, p.returncode, p.stderr))
    return p.stdout + p.stderr, open(out).read() if p.returncode == 0 else ""


def run(args, work, tag, x, ids, module=None):
    ini = os.path.join(work, tag + ".ini")
    with open(ini, "w") as f:
        f.write("[model]\ngraph = %s.webnn\nweights = %s.safetensors\n[backend]\nuse = %s\n"
                % (tag, tag, module or args.cpu))
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "ids.npy"), ids)
    out = os.path.join(work, tag + ".out.safetensors")
    p = subprocess.run([args.berth, "run", ini, "--quiet", "--repeat", "0", "--output", out,
                        "--input", "x=" + os.path.join(work, "x.npy"),
                        "--input", "ids=" + os.path.join(work, "ids.npy")], capture_output=True, text=True)
    if not check(p.returncode == 0, "%s: berth run exit %d: %s %s" % (tag, p.returncode, p.stdout, p.stderr)):
        return {}
    ents, _ = read_archive(out)
    return {k: np.frombuffer(raw, "<f4").reshape(shape) for k, (dt, shape, raw) in ents.items()}


# Each quantized weight: (layout axis, the matrix as stored, graph readers)
def stored(w):
    return {"W1": (0, w["W1"]), "W2": (0, w["W2"].T), "E": (1, w["E"]), "W3": (0, w["W3"]), "W4": (0, w["W4"]),
            "W6": (0, w["W6"])}


def case(args, work, w, fl, x, ids, bits, block, asym):
    tag = "int%d%s_b%d" % (bits, "_asym" if asym else "", block)
    flags = ["--quantize", "int%d" % bits, "--block", str(block)] + (["--asymmetric"] if asym else [])
    log, text = convert(work, tag, flags)
    if not text:
        return
    print("%s: %s" % (tag, log.strip().splitlines()[-1]))
    dt = ("u" if asym else "i") + str(bits)
    # which weights are quantized: W4 (K = 48) only at block 16, W5 never
    quantized = [k for k in stored(w) if k != "W4" or 48 % block == 0]
    check(("'W4' [48, 8] stays float32: its reduction length 48 is not a multiple of the block %d" % block
           in log) == (48 % block != 0), "%s: the line about W4:\n%s" % (tag, log))
    check("'W5' [64, 8] stays float32: Gemm 'half' has alpha 0.5" in log, "%s: the line about W5:\n%s" % (tag, log))
    check("'W7' [32, 8] stays float32: Neg 'neg_w7' reads it too" in log, "%s: the line about W7:\n%s" % (tag, log))
    check("dequantizeLinear(" in text and " @quantized {" in text, "%s: dequantizeLinear in:\n%s" % (tag, text))
    ents, meta = read_archive(os.path.join(work, tag + ".safetensors"))
    check((meta.get("rustnn.webnn.packed4") == "1") == (bits == 4), "%s: packed marker: %s" % (tag, meta))
    check(all(k in ents and ents[k][0] == "F32" for k in ("W5", "W7")), "%s: W5 and W7 stay F32" % tag)
    check(("W4" in ents and ents["W4"][0] == "F32") == ("W4" not in quantized), "%s: W4's entry" % tag)
    deq, fbytes, qbytes = dict(w), 0, 0
    for k in quantized:
        axis, mat = stored(w)[k]
        q, s, z = quant_ref(mat, axis, block, bits, asym)
        hint = k + "_t" if k == "W2" else k
        qn, sn, zn = hint + "_q", hint + "_scale", hint + "_zero"
        sshape = list(s.shape)
        check("    %s: %s%s @weights(\"%s\");" % (qn, dt, list(mat.shape), qn) in text, "%s: const %s" % (tag, qn))
        check("    %s: f32%s @weights(\"%s\");" % (sn, sshape, sn) in text, "%s: const %s" % (tag, sn))
        zdecl = ("@weights(\"%s\")" % zn) if asym else "@scalar(0)"
        check("    %s: %s%s %s;" % (zn, dt, sshape, zdecl) in text, "%s: const %s %s" % (tag, zn, zdecl))
        if not check(qn in ents and sn in ents, "%s: %s in the archive" % (tag, k)):
            continue
        # the archive holds exactly this quantizer's values
        got_s = np.frombuffer(ents[sn][2], "<f4").reshape(ents[sn][1])
        check(np.array_equal(got_s, s), "%s: %s scales differ" % (tag, k))
        for name, want in [(qn, q)] + ([(zn, z)] if asym else []):
            e = ents.get(name)
            if not check(e is not None, "%s: %s in the archive" % (tag, name)):
                continue
            if bits == 4:
                check(e[0] == "U8" and e[1] == [(want.size + 1) // 2], "%s: %s packed as %s %s" % (tag, name, *e[:2]))
                got = unpack4(e[2], want.size, not asym).reshape(want.shape)
                if want.size % 2:
                    check(e[2][-1] >> 4 == 0, "%s: %s: odd count, last high nibble 0" % (tag, name))
            else:
                check(e[0] == ("U8" if asym else "I8") and e[1] == list(want.shape),
                      "%s: %s is %s" % (tag, name, e[:2]))
                got = np.frombuffer(e[2], np.uint8 if asym else np.int8).reshape(want.shape)
            check(np.array_equal(got.astype(np.int64), want.astype(np.int64)), "%s: %s values differ" % (tag, name))
        d = dequant(q, s, z, axis, block)
        deq[k] = d.T if k == "W2" else d
        fbytes += mat.nbytes
        qbytes += sum(len(ents[n][2]) for n in (qn, sn, zn) if n in ents)
    ratio = qbytes / fbytes
    print("%s: quantized weights %d -> %d bytes (%.1f%%)" % (tag, fbytes, qbytes, 100 * ratio))
    if block == 32:
        check(ratio < (0.30 if bits == 8 else 0.18), "%s: %.3f of the float bytes" % (tag, ratio))
    check(os.path.getsize(os.path.join(work, tag + ".safetensors")) < os.path.getsize(
        os.path.join(work, "float.safetensors")), "%s: the archive is smaller than float's" % tag)
    want = forward(deq, x, ids)
    for be, module in [("cpu", args.cpu)] + ([("vulkan", args.vulkan)] if args.vulkan else []):
        got = run(args, work, tag, x, ids, module)
        for k, v in want.items() if got else ():
            if not check(k in got and got[k].shape == v.shape, "%s on %s: output %s" % (tag, be, k)):
                continue
            rel = np.abs(got[k] - v).max() / np.abs(v).max()
            check(rel <= 1e-4, "%s on %s: %s differs from the dequantized reference by %.2g (relative)"
                  % (tag, be, k, rel))
            # close to float: int8 within 2% of the output's range, int4 within 25%
            far = np.abs(got[k] - fl[k]).max() / np.abs(fl[k]).max()
            check(far <= (0.02 if bits == 8 else 0.25), "%s on %s: %s is %.3g (relative) from float"
                  % (tag, be, k, far))
            if k in ("m", "g", "a1") and be == "cpu":
                print("  %s: max |quantized - float| %.4g (%.3g of max |float|)"
                      % (k, np.abs(got[k] - fl[k]).max(), far))


def case_mse(args, work, w, fl, x, ids, asym):
    """--scale mse with --int8 'W3*': the archive's own values, dequantized
    here, give berth's outputs; each block's squared error is at most the
    absmax scale's; W3 is symmetric int8, the rest 4-bit."""
    tag = "int4%s_mse" % ("_asym" if asym else "")
    flags = ["--quantize", "int4", "--block", "16", "--scale", "mse", "--int8", "W3*"] + (["--asymmetric"] if asym else [])
    log, text = convert(work, tag, flags)
    if not text:
        return
    print("%s: %s" % (tag, log.strip().splitlines()[-1]))
    check("(1 of them int8 by --int8)" in log and "scales of least squared error" in log, "%s: summary:\n%s" % (tag, log))
    ents, meta = read_archive(os.path.join(work, tag + ".safetensors"))
    check(meta.get("rustnn.webnn.packed4") == "1", "%s: packed marker: %s" % (tag, meta))
    deq, shrunk = dict(w), 0
    for k, (axis, mat) in stored(w).items():
        hint = k + "_t" if k == "W2" else k
        qn, sn, zn = hint + "_q", hint + "_scale", hint + "_zero"
        bits, a = (8, False) if k == "W3" else (4, asym)
        dt = ("u" if a else "i") + str(bits)
        check("    %s: %s%s @weights(\"%s\");" % (qn, dt, list(mat.shape), qn) in text, "%s: const %s %s" % (tag, qn, dt))
        if not check(qn in ents and sn in ents and (zn in ents) == a, "%s: %s's entries" % (tag, k)):
            continue
        s = np.frombuffer(ents[sn][2], "<f4").reshape(ents[sn][1])
        if bits == 4:
            q = unpack4(ents[qn][2], mat.size, not a).reshape(mat.shape)
            z = unpack4(ents[zn][2], s.size, False).reshape(s.shape) if a else np.zeros(s.shape)
        else:
            check(ents[qn][0] == "I8" and "    %s: i8%s @scalar(0);" % (zn, list(s.shape)) in text,
                  "%s: %s is symmetric int8" % (tag, k))
            q, z = np.frombuffer(ents[qn][2], np.int8).reshape(mat.shape), np.zeros(s.shape)
        lo, hi = (0, 15) if a else (-8, 7)
        if bits == 8:
            lo, hi = -127, 127
        check(q.min() >= lo and q.max() <= hi, "%s: %s values in %d..%d" % (tag, k, lo, hi))
        d = dequant(q, s, z, axis, 16)
        # no block worse than the absmax rule's
        q0, s0, z0 = quant_ref(mat, axis, 16, bits, a)
        d0 = dequant(q0, s0, z0, axis, 16)
        blocks = lambda e: (e if axis == 0 else e.T).reshape(-1, 16, (e if axis == 0 else e.T).shape[1]).sum(1)  # noqa: E731
        e, e0 = blocks((d - mat) ** 2), blocks((d0 - mat) ** 2)
        check(np.all(e <= e0 * (1 + 1e-5) + 1e-12), "%s: %s: a block's error %.3g exceeds absmax's %.3g"
              % (tag, k, (e - e0).max(), e0.max()))
        check(e.sum() <= e0.sum(), "%s: %s total error %.4g > absmax's %.4g" % (tag, k, e.sum(), e0.sum()))
        shrunk += int(np.sum(s != s0))
        deq[k] = d.T if k == "W2" else d
    check(shrunk > 0, "%s: no scale differs from absmax's" % tag)
    want = forward(deq, x, ids)
    got = run(args, work, tag, x, ids)
    for k, v in want.items() if got else ():
        if check(k in got and got[k].shape == v.shape, "%s: output %s" % (tag, k)):
            rel = np.abs(got[k] - v).max() / np.abs(v).max()
            check(rel <= 1e-4, "%s: %s differs from the archive's dequantized values by %.2g (relative)" % (tag, k, rel))


def usage(work, flags, status, words):
    p = subprocess.run(["/usr/bin/python3", TOOL, os.path.join(work, "m.onnx"), os.path.join(work, "u.webnn")] + flags,
                       capture_output=True, text=True)
    check(p.returncode == status and words in p.stderr, "%s: exit %d (want %d), stderr: %s"
          % (" ".join(flags), p.returncode, status, p.stderr))


def encoder(args, work):
    """Check 7: two layers, hidden 64, sequence 16 with three padded
    positions; cosine similarity of the flattened outputs."""
    onnx_path = os.path.join(work, "enc.onnx")
    p = subprocess.run(["/usr/bin/python3", GEN_BERT, onnx_path, "--layers", "2", "--hidden", "64", "--heads", "4",
                        "--ffn", "256", "--vocab", "100", "--max-pos", "32"], capture_output=True, text=True)
    if not check(p.returncode == 0, "gen_bert.py: %s" % p.stderr):
        return
    for tag, flags in (("enc_f", []), ("enc_q", ["--quantize", "int8", "--block", "32"])):
        p = subprocess.run(["/usr/bin/python3", TOOL, onnx_path, os.path.join(work, tag + ".webnn"), "--weights",
                            os.path.join(work, tag + ".safetensors"), "--dyn", "batch=1", "--dyn", "seq=16"] + flags,
                           capture_output=True, text=True)
        if not check(p.returncode == 0, "%s: onnx2webnn exit %d: %s" % (tag, p.returncode, p.stderr)):
            return
    r = np.random.RandomState(5)
    ids = r.randint(0, 100, size=(1, 16)).astype(np.int64)
    mask = np.ones((1, 16), np.int64)
    mask[0, 13:] = 0
    np.save(os.path.join(work, "enc_ids.npy"), ids)
    np.save(os.path.join(work, "enc_mask.npy"), mask)

    def run_enc(tag, cpu_opts):
        ini = os.path.join(work, "enc.ini")
        with open(ini, "w") as f:
            f.write("[model]\ngraph = %s.webnn\nweights = %s.safetensors\nstage = s\n[backend]\nuse = %s\n"
                    "[backend.cpu]\n%s\n[buckets]\ns = batch=1 seq=16\n" % (tag, tag, args.cpu, cpu_opts))
        out = os.path.join(work, "enc.out.safetensors")
        p = subprocess.run([args.berth, "run", ini, "--quiet", "--repeat", "0", "--output", out,
                            "--input", "input_ids=" + os.path.join(work, "enc_ids.npy"),
                            "--input", "attention_mask=" + os.path.join(work, "enc_mask.npy")],
                           capture_output=True, text=True)
        if not check(p.returncode == 0, "%s [%s]: berth run exit %d: %s" % (tag, cpu_opts, p.returncode, p.stderr)):
            return None
        ents, _ = read_archive(out)
        return np.frombuffer(ents["last_hidden_state"][2], "<f4").astype(np.float64)

    fl = run_enc("enc_f", "")
    wq = run_enc("enc_q", "")
    if fl is None or wq is None:
        return
    for opts in ("quantized_activations = int8", "quantized_activations = int8\nisa = generic"):
        got = run_enc("enc_q", opts)
        if got is None:
            continue
        for what, ref in (("float", fl), ("int8 weights, float activations", wq)):
            cos = float(np.dot(got, ref) / (np.linalg.norm(got) * np.linalg.norm(ref)))
            print("encoder [%s] against %s: cosine %.6f" % (opts.replace("\n", ", "), what, cos))
            check(cos >= 0.999, "encoder [%s]: cosine %.6f against %s" % (opts, cos, what))
        check(not np.array_equal(got, wq), "encoder [%s]: the same output as float activations" % opts)
    cos = float(np.dot(wq, fl) / (np.linalg.norm(wq) * np.linalg.norm(fl)))
    check(cos >= 0.999, "encoder, int8 weights: cosine %.6f against float" % cos)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--berth", required=True)
    ap.add_argument("--cpu", required=True, help="the cpu backend module")
    ap.add_argument("--vulkan", help="the vulkan backend module, to run the quantized models on it too")
    ap.add_argument("--keep", help="work in this folder and keep it")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="berth-quant-")
    os.makedirs(work, exist_ok=True)
    w = weights()
    onnx.save(build(w), os.path.join(work, "m.onnx"))
    r = np.random.RandomState(3)
    x = r.randn(3, 64).astype(np.float32)
    ids = r.randint(0, 50, size=(3, 5)).astype(np.int64)
    ids[0, 0] = 7  # the all-zero row
    log, text = convert(work, "float", [])
    check("dequantizeLinear" not in text and "quantized" not in log, "float: no quantization:\n" + log)
    fl = run(args, work, "float", x, ids)
    ref = forward(w, x, ids)
    for k, v in ref.items():
        check(k in fl and np.abs(fl.get(k, v + 1) - v).max() <= 1e-4 * np.abs(v).max(), "float: output %s" % k)
    if fl:
        for bits, block, asym in ((8, 32, False), (4, 32, False), (8, 32, True), (4, 32, True), (4, 16, False),
                                  (8, 16, True)):
            case(args, work, w, fl, x, ids, bits, block, asym)
        for asym in (False, True):
            case_mse(args, work, w, fl, x, ids, asym)
    encoder(args, work)
    # usage errors
    usage(work, ["--block", "16"], 2, "need --quantize")
    usage(work, ["--scale", "mse"], 2, "need --quantize")
    usage(work, ["--quantize", "int4", "--scale", "least"], 2, "--scale: expected absmax or mse, found 'least'")
    usage(work, ["--quantize", "int8", "--int8", "W3"], 2, "--int8 needs --quantize int4")
    usage(work, ["--quantize", "int4", "--int8", "W9*"], 2, "--int8 'W9*' matches no weight that is quantized")
    if not args.keep and not FAILS:
        for f in os.listdir(work):
            os.remove(os.path.join(work, f))
        os.rmdir(work)
    print("%d failure%s" % (len(FAILS), "" if len(FAILS) == 1 else "s"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
