#!/usr/bin/python3
"""Check a program's printout of the first graph against a forward pass
computed here, in plain Python, from the .safetensors file itself.

    check_first.py WEIGHTS -- COMMAND...

COMMAND must print lines of floats, one row of y per line, after a line
starting with "bucket"; the input is the one examples/embed/embed.c uses.
"""
import json
import struct
import subprocess
import sys

X = [[1, 0, 0, 0], [0, 1, 0, 0], [0.5, -0.5, 0.25, 2]]


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        vals = struct.unpack("<%df" % ((end - b) // 4), blob[base + b:base + end])
        out[name] = (e["shape"], vals)
    return out


def matmul_add(x, w, b, relu):
    (k, n), wv = w
    _, bv = b
    rows = []
    for r in x:
        row = []
        for j in range(n):
            acc = bv[j] + sum(r[i] * wv[i * n + j] for i in range(k))
            row.append(max(acc, 0.0) if relu else acc)
        rows.append(row)
    return rows


def main():
    weights, cmd = sys.argv[1], sys.argv[3:]
    t = read_safetensors(weights)
    h = matmul_add(X, t["layer1.weight"], t["layer1.bias"], True)
    y = matmul_add(h, t["layer2.weight"], t["layer2.bias"], False)
    out = subprocess.run(cmd, capture_output=True, text=True)
    print(out.stdout, out.stderr, sep="")
    if out.returncode != 0:
        sys.exit("command failed with status %d" % out.returncode)
    lines = out.stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("bucket")) + 1
    got = [[float(v) for v in l.split()] for l in lines[start:start + len(y)]]
    worst = max(abs(a - b) for gr, yr in zip(got, y) for a, b in zip(gr, yr))
    if len(got) != len(y) or any(len(g) != len(r) for g, r in zip(got, y)) or worst > 1e-4:
        sys.exit("mismatch: got %s, expected %s" % (got, y))
    print("%d values match the Python forward pass (largest error %.2e)" % (3 * len(y), worst))


if __name__ == "__main__":
    main()
