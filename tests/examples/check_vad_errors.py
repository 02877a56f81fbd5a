#!/usr/bin/python3
"""berth-vad's refusals: each bad recording, model or option gives a
non-zero exit, no chunk lines, and a message on stderr that says what
is wrong. Needs no real model: the audio is read before the model
loads, and the wrong models are the first graph and a tiny graph here.

    check_vad_errors.py BERTH_VAD FIRST_CONFIG WORKDIR
"""
import os
import struct
import subprocess
import sys


def wav(fmt=1, channels=1, rate=16000, bits=16, data=b"\0\0" * 600, data_size=None, extra=b""):
    block = channels * bits // 8
    fmt_body = struct.pack("<HHIIHH", fmt, channels, rate, rate * block, block, bits)
    size = len(data) if data_size is None else data_size
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt_body)) + fmt_body + extra + \
        b"data" + struct.pack("<I", size) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def main():
    vad, first, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)

    def path(name, blob=None):
        p = os.path.join(work, name)
        if blob is not None:
            with open(p, "wb") as f:
                f.write(blob)
        return p

    good = path("good.wav", wav())
    # A graph with every name berth-vad wants, but hn shaped [2, 64]:
    # its state cannot be fed back into h [2, 1, 64]. No weights.
    path("not_vad.webnn", b"""webnn_graph "not_vad" v1 {
  inputs { input: f32[1, 512]; h: f32[2, 1, 64]; c: f32[2, 1, 64]; }
  consts { }
  nodes {
    output = reduceMean(input, axes=[1], keepDimensions=true);
    hn = reshape(h, [2, 64]);
    cn = identity(c);
  }
  outputs { output; hn; cn; }
}
""")
    path("empty.safetensors", struct.pack("<Q", 2) + b"{}")
    not_vad = path("not_vad.ini", b"[model]\ngraph = not_vad.webnn\nweights = empty.safetensors\n\n"
                                  b"[backend]\nuse = cpu\n")

    cases = [
        # (what, args, exit status, words the message must hold)
        ("text file", [first, path("text.wav", b"not audio at all\n")], 1, ["not a WAV file", "sox"]),
        ("44.1 kHz stereo", [first, path("cd.wav", wav(channels=2, rate=44100))], 1,
         ["2 channel(s), 44100 Hz, 16-bit", "16000 Hz"]),
        ("8-bit", [first, path("u8.wav", wav(bits=8))], 1, ["1 channel(s), 16000 Hz, 8-bit"]),
        ("float samples", [first, path("float.wav", wav(fmt=3, bits=32))], 1,
         ["sample format 3 is not integer PCM"]),
        ("truncated", [first, path("cut.wav", wav(data_size=100000))], 1,
         ["says 100000 bytes of samples, the file holds 1200"]),
        ("odd data size", [first, path("odd.wav", wav(data=b"\0" * 7))], 1, ["not a whole number of 16-bit"]),
        ("no samples", [first, path("empty.wav", wav(data=b""))], 1, ["holds no samples"]),
        ("no data chunk", [first, path("nodata.wav", wav()[:36])], 1, ["ends before its data chunk"]),
        ("a directory", [first, work], 1, ["not a regular file"]),
        ("missing file", [first, path("missing.wav")], 1, ["missing.wav: No such file"]),
        ("wrong model", [first, good], 1, ["cannot feed: x", 'input  x f32[dyn("batch", 8), 4]',
                                           "output y f32"]),
        ("state not fed back", [not_vad, good], 1, ["hn and cn are not shaped like h and c",
                                                     "output hn f32[2, 64]", "input  h f32[2, 1, 64]"]),
        ("threshold out of range", ["--threshold", "1.5", first, good], 2, ["probability from 0 to 1"]),
        ("unknown option", ["--state", first, good], 2, ["unknown option", "--state"]),
        ("missing audio", [first], 2, ["expected CONFIG and AUDIO.wav"]),
    ]
    failed = 0
    for what, args, status, words in cases:
        r = subprocess.run([vad] + args, capture_output=True, text=True, cwd=work)
        chunk_lines = [l for l in r.stdout.splitlines() if l and not l.startswith("#")]
        missing = [w for w in words if w not in r.stderr]
        if r.returncode != status or missing or chunk_lines:
            failed += 1
            print("FAIL: %s: exit %d (want %d), missing %s, stdout %r\n%s" % (
                what, r.returncode, status, missing, r.stdout[:200], r.stderr))
        else:
            print("ok: %s: %s" % (what, r.stderr.splitlines()[0]))
    if failed:
        sys.exit("%d of %d cases failed" % (failed, len(cases)))


if __name__ == "__main__":
    main()
