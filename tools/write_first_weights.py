#!/usr/bin/python3
"""Write examples/first/first.safetensors: the weights of the first graph.

Plain Python (struct and json only) so it runs on a bare machine:
    /usr/bin/python3 tools/write_first_weights.py examples/first/first.safetensors
Values follow a fixed formula, so the file is reproducible byte for byte.
"""
import json
import struct
import sys


def values(n, scale, offset):
    return [round(((i * 37 + 11) % 17 - 8) * scale + offset, 6) for i in range(n)]


def main(path):
    tensors = [
        ("layer1.weight", [4, 8], values(32, 0.125, 0.0)),
        ("layer1.bias", [8], values(8, 0.0625, 0.05)),
        ("layer2.weight", [8, 3], values(24, 0.1, 0.0)),
        ("layer2.bias", [3], values(3, 0.5, 0.0)),
    ]
    header, data = {}, b""
    for name, shape, vals in tensors:
        raw = struct.pack("<%df" % len(vals), *vals)
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/first/first.safetensors")
