"""What the Python package's tests share: the tree's paths, berth run
(the CLI, the reference the package is held to bit for bit), and a
.safetensors reader for its --output files."""
import json
import os
import struct
import subprocess

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIRST = os.path.join(ROOT, "config", "cpu.ini")
FIRST_GRAPH = os.path.join(ROOT, "examples", "first", "first.webnn")
FIRST_WEIGHTS = os.path.join(ROOT, "examples", "first", "first.safetensors")

_NP = {"F32": np.float32, "F16": np.float16, "I32": np.int32, "I64": np.int64, "U8": np.uint8, "I8": np.int8,
       "U32": np.uint32, "U64": np.uint64}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + a:8 + n + b], dtype=_NP[t["dtype"]]).reshape(t["shape"])
    return out


def berth_run(tmp_path, config, feeds, model=None):
    """berth run CONFIG with feeds as .npy inputs: lane 0's outputs."""
    cli = os.environ.get("BERTH_CLI")
    if not cli:
        pytest.fail("BERTH_CLI (the berth program) is not set: run these tests through ctest")
    args = [cli, "run", config, "--quiet", "--repeat", "0", "--output", str(tmp_path / "out.safetensors")]
    if model:
        args += ["--model", model]
    for name, a in feeds.items():
        p = tmp_path / ("%s.npy" % name)
        np.save(p, a)
        args += ["--input", "%s=%s" % (name, p)]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return read_safetensors(tmp_path / "out.safetensors")


def env_path(name):
    p = os.environ.get(name)
    if not p:
        pytest.fail("%s is not set: run these tests through ctest" % name)
    return p
