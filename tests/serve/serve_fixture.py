"""What the serve tests share: model directories written for the test,
a `berth serve` process started on a free port and stopped with SIGTERM,
and readers for `berth run`'s outputs.

Every test runs with BERTH (the berth binary), SRC (the source tree) and
OCR_CACHE (where the OCR models were fetched to) in its environment."""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

BERTH = os.environ["BERTH"]
SRC = os.environ["SRC"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tools"))
from oip_client import OipClient  # noqa: E402
from onnx2webnn_lib import safetensors  # noqa: E402
OCR_CACHE = os.environ["OCR_CACHE"]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


# The specification's example model: input0 UINT32 [2, 2], input1 BOOL [3]
# (uint8 in berth, as WebNN's booleans), output0 FP32 [3, 2]: the first six
# of input0's four values and input1's three, as floats.
MYMODEL = """webnn_graph "mymodel" v2 {
  inputs {
    input0: u32[2, 2];
    input1: u8[3];
  }
  nodes {
    a = cast(input0, "float32");
    a1 = reshape(a, [4]);
    b = cast(input1, "float32");
    c = concat([a1, b], 0);
    d = slice(c, starts=[0], sizes=[6]);
    output0 = reshape(d, [3, 2]);
  }
  outputs { output0; }
}
"""


def mymodel_reference(input0, input1):
    v = [float(x) for x in input0] + [float(x) for x in input1]
    return v[:6]


def model_dir():
    """A temp dir with configs for mymodel, the first graph and the OCR
    recognizer (width 320 only); returns (dir, paths by name)."""
    d = tempfile.mkdtemp(prefix="berth-serve-")
    with open(os.path.join(d, "mymodel.webnn"), "w") as f:
        f.write(MYMODEL)
    safetensors.write(os.path.join(d, "mymodel.safetensors"), [])
    return d


def write_config(d, name, graph, weights, buckets, serve="", stage="rows", threads=2, use="cpu"):
    text = ("[model]\ngraph = %s\nweights = %s\nstage = %s\n"
            "[backend]\nuse = %s\n[backend.cpu]\nthreads = %d\n"
            "[buckets]\n%s = %s\n" % (graph, weights, stage, use, threads, stage, buckets))
    if serve:
        text += "[serve]\n" + serve
    path = os.path.join(d, name + ".ini")
    with open(path, "w") as f:
        f.write(text)
    return path


def first_config(d, name="first", serve="", use="cpu"):
    ex = os.path.join(SRC, "examples", "first")
    return write_config(d, name, os.path.join(ex, "first.webnn"), os.path.join(ex, "first.safetensors"),
                        "batch=1 | batch=4 | batch=8", serve, use=use)


def mymodel_config(d):
    """mymodel's shapes are static: one implicit bucket, no [buckets]."""
    path = os.path.join(d, "mymodel.ini")
    with open(path, "w") as f:
        f.write("[model]\ngraph = mymodel.webnn\nweights = mymodel.safetensors\n[backend]\nuse = cpu\n")
    return path


def rec_config(d, name="rec", serve=""):
    cache = os.path.join(OCR_CACHE, "ocr")
    return write_config(d, name, os.path.join(cache, "rec.webnn"), os.path.join(cache, "rec.safetensors"),
                        "batch=1 width=320 | batch=8 width=320", serve, stage="lines")


class Server(object):
    """`berth serve --port 0 ARGS...`, up once it prints where it listens."""

    def __init__(self, *args):
        self.proc = subprocess.Popen([BERTH, "serve", "--port", "0"] + list(args), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.port = None
        deadline = time.time() + 120
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if "listening on http://" in line:
                self.port = int(line.strip().rsplit(":", 1)[1])
                break
        if self.port is None:
            self.proc.kill()
            out, err = self.proc.communicate()
            fail("berth serve did not start:\n" + "".join(self.lines) + out + err)
        # keep reading stdout so the server never blocks on a full pipe
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        self.client = OipClient("127.0.0.1", self.port)

    def _drain(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def stop(self):
        """SIGTERM; returns (exit status, stderr)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("berth serve did not exit within 60 s of SIGTERM")
        self._reader.join(timeout=5)
        return rc, self.proc.stderr.read()


def metric(text, name, model):
    """The value of metric `name` for `model` in Prometheus text."""
    prefix = '%s{model="%s"} ' % (name, model)
    for line in text.splitlines():
        if line.startswith(prefix):
            return float(line[len(prefix):])
    fail("no metric %s for model %s in:\n%s" % (name, model, text))


def berth_run(config, inputs, d):
    """`berth run CONFIG --input NAME=FILE.npy ... --output OUT`: lane 0's
    outputs by name."""
    args = [BERTH, "run", config, "--repeat", "0", "--quiet", "--output", os.path.join(d, "run-out.safetensors")]
    for name, arr in inputs.items():
        p = os.path.join(d, "in-%s.npy" % name)
        np.save(p, arr)
        args += ["--input", "%s=%s" % (name, p)]
    r = subprocess.run(args, capture_output=True, text=True)
    check(r.returncode == 0, "berth run failed: %s%s" % (r.stdout, r.stderr))
    return safetensors.read(os.path.join(d, "run-out.safetensors"))
