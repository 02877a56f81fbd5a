#!/usr/bin/env python3
"""The zoo's melspectrogram run padded: its 16000 samples in a bucket of
samples=16384. The STFT is a conv1d of kernel 512, stride 160, so the
bucket makes 100 frames and onnxruntime's 97 are
(16000 - 512) // 160 + 1; a run must return exactly those 97, and their
values within the zoo's tolerance. The graph's reduceMax over every frame
(the top-dB clip) sees the padded frames, so berth must also warn, once,
that the values may differ; on these inputs they do not.

usage: check_padded_bucket.py BERTH ZOO_DIR WORK_DIR
Standard library only: the .npy and .safetensors are read by hand."""
import ast
import array
import json
import os
import struct
import subprocess
import sys

BUCKET = 16384
ATOL, RTOL = 2e-3, 1e-4  # zoo.ini's for melspectrogram


def read_npy(path):
    b = open(path, "rb").read()
    if b[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    n = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + n].decode())
    if h["descr"] != "<f4" or h["fortran_order"]:
        sys.exit(f"{path}: expected little-endian float32 in C order, found {h}")
    a = array.array("f")
    a.frombytes(b[10 + n:])
    return list(h["shape"]), a


def read_safetensors(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    t = [v for k, v in h.items() if k != "__metadata__"]
    if len(t) != 1 or t[0]["dtype"] != "F32":
        sys.exit(f"{path}: expected one F32 tensor, found {h}")
    s, e = t[0]["data_offsets"]
    a = array.array("f")
    a.frombytes(b[8 + n + s:8 + n + e])
    return t[0]["shape"], a


def main():
    berth, zoo, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    src = open(os.path.join(zoo, "melspectrogram.webnn")).read()
    dyn = 'dyn("samples", 16000)'
    if dyn not in src:
        sys.exit(f"melspectrogram.webnn: expected {dyn} in its input")
    graph = os.path.join(work, "melspectrogram.webnn")
    open(graph, "w").write(src.replace(dyn, f'dyn("samples", {BUCKET})'))
    ini = os.path.join(work, "padded.ini")
    open(ini, "w").write(
        "[model]\ngraph = melspectrogram.webnn\n"
        f"weights = {os.path.join(os.path.abspath(zoo), 'melspectrogram.safetensors')}\n"
        f"stage = padded\n[backend]\nuse = cpu\n[buckets]\npadded = batch_size=1 samples={BUCKET}\n")
    out = os.path.join(work, "out.safetensors")
    r = subprocess.run([berth, "run", ini, "--input",
                        "input=" + os.path.join(zoo, "melspectrogram.in.0.npy"),
                        "--output", out, "--repeat", "1"], capture_output=True, text=True)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        sys.exit(f"berth run failed with {r.returncode}")
    want_shape, want = read_npy(os.path.join(zoo, "melspectrogram.want.0.npy"))
    got_shape, got = read_safetensors(out)
    print(f"onnxruntime {want_shape}, berth in a bucket of {BUCKET} samples: {got_shape}")
    failed = 0
    if got_shape != want_shape:
        print(f"FAIL: frames {got_shape} where onnxruntime gives {want_shape}")
        failed = 1
    else:
        worst = max(abs(a - b) for a, b in zip(got, want))
        bad = sum(abs(a - b) > ATOL + RTOL * abs(b) for a, b in zip(got, want))
        print(f"max abs error vs onnxruntime: {worst:.3g}; {bad} elements outside the tolerance")
        failed |= bad != 0
    warned = [l for l in r.stderr.splitlines() if "may differ from an unpadded run" in l]
    if len(warned) != 1 or "reduceMax" not in warned[0]:
        print(f"FAIL: expected one warning naming the reduceMax, found {warned}")
        failed = 1
    sys.exit(failed)


if __name__ == "__main__":
    main()
