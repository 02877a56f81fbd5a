"""The scripts in examples/python run as the README says and print what
they claim: the first graph's outputs, every usable backend agreeing
with cpu, and the receipt's true lines."""
import os
import re
import subprocess
import sys

from conftest import ROOT, env_path

EX = os.path.join(ROOT, "examples", "python")


def _run(script, *args, env=None):
    r = subprocess.run([sys.executable, os.path.join(EX, script)] + list(args), capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, **(env or {})))
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_run_model():
    out = _run("run_model.py")
    assert re.search(r"^input  x float32 \(None, 4\)$", out, re.M)
    assert re.search(r"^y \(1, 3\) float32 ", out, re.M)
    assert "composed session:" in out


def test_pick_backend():
    out = _run("pick_backend.py")
    diffs = re.findall(r"^(\w+) on .*: largest difference from cpu (\S+)$", out, re.M)
    assert ("cpu", "0") in diffs
    assert all(float(d) < 1e-4 for _, d in diffs), out


def test_read_page():
    page = os.path.join(ROOT, "samples", "pages", "receipt.png")
    out = _run("read_page.py", page, env={"BERTH_OCR_CONFIG": env_path("BERTH_OCR_CONFIG"),
                                          "BERTH_OCR_KEYS": env_path("BERTH_OCR_KEYS")})
    with open(os.path.join(ROOT, "samples", "pages", "truth.txt"), encoding="utf-8") as f:
        truth = [l.rstrip("\n").split("\t")[1] for l in f if l.startswith("receipt.png\t")]
    assert [l.split("\t")[2] for l in out.splitlines()] == truth
