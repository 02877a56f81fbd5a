"""Writes a .safetensors archive: 8-byte little-endian header length, a
JSON header padded with spaces to a multiple of 8, then the data. Entries
are laid out in the order given, so sorted by offset they tile the data
exactly from 0 to the end of the file, which is what berth's reader
checks."""
import json
import struct

import numpy as np

# numpy dtype -> safetensors dtype name; bool is stored as U8 because
# berth's graphs declare ONNX booleans as u8.
_DTYPES = {
    np.dtype("float32"): "F32",
    np.dtype("float16"): "F16",
    np.dtype("int32"): "I32",
    np.dtype("uint32"): "U32",
    np.dtype("int64"): "I64",
    np.dtype("uint64"): "U64",
    np.dtype("int8"): "I8",
    np.dtype("uint8"): "U8",
    np.dtype("bool"): "U8",
}


def encode(tensors, metadata=None):
    """tensors: list of (name, ndarray). Returns the archive bytes."""
    header = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    blobs = []
    offset = 0
    for name, arr in tensors:
        arr = np.asarray(arr)
        if arr.dtype not in _DTYPES:
            raise ValueError("tensor '%s': dtype %s cannot be stored in safetensors" % (name, arr.dtype))
        if arr.dtype == np.bool_:
            arr = arr.astype(np.uint8)
        data = np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<"))).tobytes()
        header[name] = {
            "dtype": _DTYPES[arr.dtype],
            "shape": [int(d) for d in arr.shape],
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def write(path, tensors, metadata=None):
    with open(path, "wb") as f:
        f.write(encode(tensors, metadata))


def read(path):
    """Reads an archive back into {name: ndarray} (for the conformance run
    and tests)."""
    names = {"F32": "<f4", "F16": "<f2", "I32": "<i4", "U32": "<u4", "I64": "<i8",
             "U64": "<u8", "I8": "i1", "U8": "u1", "BOOL": "u1", "F64": "<f8"}
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        arr = np.frombuffer(raw[base + b:base + end], dtype=np.dtype(names[e["dtype"]]))
        out[name] = arr.reshape(e["shape"])
    return out
