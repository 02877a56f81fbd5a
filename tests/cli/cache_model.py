# Writes the cache test's weights: two products (256 x 128 and 128 x 64,
# large enough that cpu packs them) and a bias, as SafeTensors; the seed
# makes weights of the same names and shapes with other values.
#   cache_model.py OUT.safetensors SEED
import json
import math
import struct
import sys

out, seed = sys.argv[1], float(sys.argv[2])


def values(n, s):
    return [math.sin(i * 0.37 + s) * 0.1 for i in range(n)]


tensors = [("layer1.weight", [256, 128], values(256 * 128, seed)),
           ("layer2.weight", [128, 64], values(128 * 64, seed + 1)),
           ("layer1.bias", [128], values(128, seed + 2))]
header, blob = {}, b""
for name, shape, v in tensors:
    data = struct.pack("<%df" % len(v), *v)
    header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
    blob += data
text = json.dumps(header).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + blob)
