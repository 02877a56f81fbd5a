#!/usr/bin/python3
"""berth-vad (examples/vad) against onnxruntime-node, chunk by chunk.

    check_vad.py --vad BIN --zoo DIR --onnx MODEL --peer DIR --work DIR
                 --backend NAME... [--preload alloc_preload.so]

Makes a deterministic recording (silence, a voiced-like signal, silence,
ending mid-chunk so the last chunk is padded) as a 16-bit WAV, runs
berth-vad on it on each backend with --dump, runs the same chunk loop on
the ONNX model with onnxruntime-node (vad_peer.js: the same samples,
hn, cn carried into h, c from zeros), and holds every chunk's
probability and the final state to onnxruntime's within ATOL. Then runs
berth-vad --no-state and checks it is far from onnxruntime's stateful
run: agreement within ATOL proves the state is carried, not merely that
one chunk is computed right. Also: the same samples in another WAV
layout give the same answer, and (with --preload alloc_preload.so) a
chunk allocates nothing on cpu.
"""
import argparse
import os
import struct
import subprocess
import sys
import wave

import numpy as np

RATE = 16000
CHUNK = 512
# One run of silero_vad differs from onnxruntime by ~3e-7 (the zoo's
# single-shot check). Across the recording the state is fed back 125
# times; measured on cpu and on lavapipe, the probabilities stay within
# ~3e-6 of onnxruntime's and the state within ~1e-6 of its size: the
# LSTM's cell state c grows to ~50 on the voiced part, so its float32
# rounding alone is ~5e-5 there. Hence |berth - onnxruntime| <= ATOL +
# RTOL |onnxruntime|: ATOL 1e-4 leaves 30x room for other hardware's
# rounding on the probabilities, RTOL 1e-4 100x on the state, both far
# below what losing the state costs (NO_STATE_MIN).
ATOL = 1e-4
RTOL = 1e-4
# The --no-state run must differ from the stateful one by at least this
# much somewhere (it differs by ~0.9 on the voiced part).
NO_STATE_MIN = 0.1


def signal():
    """1 s of faint noise, 2 s of a voiced-like sound, 1 s of faint noise,
    300 more samples of silence: 64300 samples, 126 chunks, the last one
    padded. The voiced part is a glottal-like harmonic series on a gliding
    pitch (110-140 Hz), weighted by three formant resonances (700, 1220,
    2600 Hz), modulated at a syllable rate (4 Hz), with breath noise."""
    rng = np.random.default_rng(20240611)
    t = np.arange(2 * RATE) / RATE
    f0 = 125 + 15 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    voiced = np.zeros_like(t)
    for k in range(1, 30):
        fk = k * f0
        formants = sum(np.exp(-(((fk - f) / b) ** 2)) for f, b in ((700, 130), (1220, 150), (2600, 250)))
        voiced += (formants + 0.05) / np.sqrt(k) * np.sin(k * phase)
    voiced *= 0.6 + 0.4 * np.sin(2 * np.pi * 4 * t)
    voiced = 0.5 * voiced / np.abs(voiced).max() + rng.normal(0, 0.01, t.size)
    quiet = lambda n: rng.normal(0, 0.001, n)
    x = np.concatenate([quiet(RATE), voiced, quiet(RATE), np.zeros(300)])
    return np.clip(np.round(x * 32767), -32768, 32767).astype("<i2")


def write_npy(path, a):
    np.save(path, np.ascontiguousarray(a, dtype="<f4"))


def run_vad(args, config, out, no_state=False):
    cmd = [args.vad] + (["--no-state"] if no_state else []) + ["--dump", out, config, args.wav]
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        sys.exit("FAIL: %s exited with %d" % (" ".join(cmd), r.returncode))
    probs = np.load(os.path.join(out, "probs.npy"))
    # The printout is what users read: one line per chunk, the same
    # probabilities as the dump (to the 6 decimals printed).
    rows = [l.split("\t") for l in r.stdout.splitlines() if l and not l.startswith(("#", "speech"))]
    printed = np.array([float(row[2]) for row in rows])
    if len(rows) != len(probs) or np.abs(printed - probs).max() > 1e-6:
        sys.exit("FAIL: %s printed %d chunks that do not match its %d dumped probabilities" %
                 (config, len(rows), len(probs)))
    segments = [tuple(float(v) for v in l.split("\t")[1:]) for l in r.stdout.splitlines()
                if l.startswith("speech\t")]
    return probs, np.load(os.path.join(out, "hn.npy")), np.load(os.path.join(out, "cn.npy")), segments


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vad", required=True)
    ap.add_argument("--zoo", required=True)
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--peer", required=True, help="the folder holding onnxruntime-node's node_modules")
    ap.add_argument("--work", required=True)
    ap.add_argument("--backend", action="append", default=[])
    ap.add_argument("--preload", help="alloc_preload.so: check that a chunk allocates nothing (cpu)")
    args = ap.parse_args()
    for k in ("vad", "zoo", "onnx", "peer", "work", "preload"):  # the configs it writes name them
        if getattr(args, k):
            setattr(args, k, os.path.abspath(getattr(args, k)))
    if not args.backend:
        ap.error("give at least one --backend")
    sys.stdout.reconfigure(line_buffering=True)  # in order with berth-vad's stderr
    os.makedirs(args.work, exist_ok=True)

    samples = signal()
    args.wav = os.path.join(args.work, "speech.wav")
    with wave.open(args.wav, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.tobytes())
    n = -(-len(samples) // CHUNK)
    chunks = np.zeros(n * CHUNK, dtype="<f4")
    chunks[: len(samples)] = samples.astype("<f4") / 32768  # as berth-vad reads them: exact
    write_npy(os.path.join(args.work, "chunks.npy"), chunks.reshape(n, CHUNK))

    peer_out = os.path.join(args.work, "onnxruntime")
    os.makedirs(peer_out, exist_ok=True)
    env = dict(os.environ, NODE_PATH=os.path.join(args.peer, "node_modules"))
    js = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vad_peer.js")
    r = subprocess.run(["node", js, args.onnx, os.path.join(args.work, "chunks.npy"), peer_out], env=env,
                       capture_output=True, text=True)
    print(r.stdout + r.stderr, end="")
    if r.returncode != 0:
        sys.exit("FAIL: vad_peer.js exited with %d" % r.returncode)
    want = [np.load(os.path.join(peer_out, f + ".npy")) for f in ("probs", "hn", "cn")]
    # The recording must give the model something to say, or agreement
    # would prove little: silence low, the voiced part high.
    if not (want[0].min() < 0.1 and want[0].max() > 0.9):
        sys.exit("FAIL: onnxruntime's probabilities span only %.3f..%.3f; the signal no longer tests the "
                 "model" % (want[0].min(), want[0].max()))

    failed = False
    for backend in args.backend:
        config = os.path.join(args.work, "vad-%s.ini" % backend)
        with open(config, "w") as f:
            f.write("[model]\ngraph = %s\nweights = %s\n\n[backend]\nuse = %s\n" % (
                os.path.join(args.zoo, "silero_vad.webnn"), os.path.join(args.zoo, "silero_vad.safetensors"),
                backend))
        got = run_vad(args, config, os.path.join(args.work, backend))
        if got[0].shape != want[0].shape:
            sys.exit("FAIL: %s: %d chunks, onnxruntime %d" % (backend, got[0].size, want[0].size))
        # Per tensor: the largest error, and the largest in units of
        # the tolerance (over 1 fails).
        errs, over = [], []
        for g, w in zip(got[:3], want):
            e = np.abs(g.astype(np.float64) - w)
            errs.append(float(e.max()))
            over.append(float((e / (ATOL + RTOL * np.abs(w))).max()))
        worst_chunk = int(np.argmax(np.abs(got[0] - want[0])))
        ok = max(over) <= 1
        failed |= not ok
        print("%s: %s: max |berth - onnxruntime| over %d chunks: probability %.2e (chunk %d), final hn %.2e, "
              "cn %.2e (|cn| up to %.1f); %.2f of the tolerance (atol %.0e, rtol %.0e); speech %s" % (
                  "ok" if ok else "FAIL", backend, n, errs[0], worst_chunk, errs[1], errs[2],
                  float(np.abs(want[2]).max()), max(over), ATOL, RTOL,
                  ", ".join("%.3f-%.3f s" % s for s in got[3]) or "none"))

    # The same samples as WAVE_FORMAT_EXTENSIBLE with a LIST chunk of
    # odd length (padded) before the data, as some recorders write them:
    # the same probabilities, bit for bit.
    fmt = struct.pack("<HHIIHHHHI", 0xFFFE, 1, RATE, 2 * RATE, 2, 16, 22, 16, 4) + \
        bytes.fromhex("0100000000001000800000aa00389b71")
    info = b"INFOISFT\x05\x00\x00\x00sox!\x00"
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"LIST" + struct.pack("<I", len(info)) + \
        info + b"\x00" + b"data" + struct.pack("<I", 2 * len(samples)) + samples.tobytes()
    plain = args.wav
    args.wav = os.path.join(args.work, "speech-extensible.wav")
    with open(args.wav, "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", len(body)) + body)
    first = os.path.join(args.work, "vad-%s.ini" % args.backend[0])
    ext = run_vad(args, first, os.path.join(args.work, "extensible"))
    same = np.array_equal(ext[0], np.load(os.path.join(args.work, args.backend[0], "probs.npy")))
    failed |= not same
    print("%s: the extensible WAV with a LIST chunk gives %s probabilities" % (
        "ok" if same else "FAIL", "the same" if same else "different"))
    args.wav = plain

    # No allocation per chunk: the whole process allocates as often for
    # the first second (32 chunks) as for all 126.
    if args.preload:
        short = os.path.join(args.work, "first-second.wav")
        with wave.open(short, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(RATE)
            w.writeframes(samples[:RATE].tobytes())
        counts = []
        for audio in (short, plain):
            out = os.path.join(args.work, "allocations")
            env = dict(os.environ, LD_PRELOAD=args.preload, BERTH_ALLOC_COUNT=out)
            r = subprocess.run([args.vad, first, audio], env=env, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("FAIL: berth-vad with %s exited with %d:\n%s" % (
                    args.preload, r.returncode, r.stderr))
            with open(out) as f:
                counts.append(int(f.read()))
        same = counts[0] == counts[1]
        failed |= not same
        print("%s: %s: the process allocates %d times for 32 chunks, %d for %d (%s)" % (
            "ok" if same else "FAIL", args.backend[0], counts[0], counts[1], n,
            "nothing per chunk" if same else "a chunk allocates"))

    # Without the state the model sees 32 ms at a time and cannot tell
    # the voiced part from noise: far from the stateful answer.
    stateless = run_vad(args, first, os.path.join(args.work, "no-state"), no_state=True)
    diff = float(np.abs(stateless[0] - want[0]).max())
    if diff < NO_STATE_MIN:
        failed = True
    print("%s: --no-state differs from onnxruntime's stateful run by up to %.3f "
          "(must be >= %.1f, %.0fx atol)" % (
        "ok" if diff >= NO_STATE_MIN else "FAIL", diff, NO_STATE_MIN, diff / ATOL))
    if failed:
        sys.exit("FAIL")


if __name__ == "__main__":
    main()
