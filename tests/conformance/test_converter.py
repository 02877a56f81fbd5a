#!/usr/bin/python3
"""Tests of tools/onnx2webnn, one per ctest case:

    test_converter.py CASE --berth PATH --cpu PATH

Each case builds a small ONNX model with onnx.helper, converts it with the
onnx2webnn command, and checks the .webnn text and, through `berth run` on
the cpu backend, the numbers against a NumPy forward pass written here."""
import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "onnx2webnn")
sys.path.insert(0, os.path.join(ROOT, "tools"))
from onnx2webnn_lib import safetensors  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: %s" % what)


def near(got, want, what, atol=1e-4, rtol=1e-3):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        check(False, "%s: shape %s, want %s" % (what, got.shape, want.shape))
        return
    err = np.abs(got - want) - (atol + rtol * np.abs(want))
    check(bool((err <= 0).all()), "%s: largest error %g" % (what, float(np.abs(got - want).max())))


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "t", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def convert(tmp, m, *flags, expect_rc=0):
    path = os.path.join(tmp, "m.onnx")
    onnx.save(m, path)
    out = os.path.join(tmp, "m.webnn")
    p = subprocess.run(["/usr/bin/python3", TOOL, path, out] + list(flags), capture_output=True, text=True)
    check(p.returncode == expect_rc, "onnx2webnn exit %d, want %d: %s" % (p.returncode, expect_rc, p.stderr))
    text = open(out).read() if p.returncode == 0 else ""
    return p, text


def run_berth(tmp, args, inputs, buckets=""):
    ini = os.path.join(tmp, "c.ini")
    with open(ini, "w") as f:
        f.write("[model]\ngraph = m.webnn\nweights = m.safetensors\n[backend]\nuse = %s\n" % args.cpu)
        if buckets:
            f.write("[buckets]\nmain = %s\n" % buckets)
    cmd = [args.berth, "run", ini, "--quiet", "--repeat", "0", "--output", os.path.join(tmp, "o.safetensors")]
    for name, arr in inputs.items():
        npy = os.path.join(tmp, name + ".npy")
        np.save(npy, arr)
        cmd += ["--input", "%s=%s" % (name, npy)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, "berth run exit %d: %s %s" % (p.returncode, p.stdout, p.stderr))
    return safetensors.read(os.path.join(tmp, "o.safetensors")) if p.returncode == 0 else {}


# ---- cases -------------------------------------------------------------


def case_unsupported(tmp, args):
    """Two unsupported ops (and one unsupported attribute): every one named."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Det", ["x"], ["a"], name="first_bad"),
             helper.make_node("Relu", ["a"], ["b"], name="fine_after_bad"),
             helper.make_node("Mod", ["x", "x"], ["c"], name="second_bad", fmod=0),
             helper.make_node("Unique", ["c"], ["d"], name="third_bad"),
             helper.make_node("Relu", ["x"], ["y"], name="fine")]
    m = model(nodes, [x], [y])
    p, _ = convert(tmp, m, expect_rc=1)
    err = p.stderr
    for want in ("Det node 'first_bad'", "Mod node 'second_bad'", "Unique node 'third_bad'",
                 "fmod=0", "3 unsupported nodes"):
        check(want in err, "error names %r: %s" % (want, err))
    check("fine_after_bad" not in err, "a node fed by a rejected one is not reported again: %s" % err)
    check(not os.path.exists(os.path.join(tmp, "m.webnn")), "no .webnn written on failure")


def case_dyn(tmp, args):
    """Symbolic dims become dyn(name, max) from --dyn, else --dyn-default;
    the archive is a valid safetensors; the graph runs at a bucket."""
    x = helper.make_tensor_value_info("x.in", TensorProto.FLOAT, ["batch", "seq", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 3])
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    b = np.array([0.5, -1.0, 2.0], np.float32)
    nodes = [helper.make_node("MatMul", ["x.in", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])]
    m = model(nodes, [x], [y], [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    p, text = convert(tmp, m, "--dyn", "batch=8", "--dyn-default", "16")
    check('x_in: f32[dyn("batch", 8), dyn("seq", 16), 4];' in text, "dyn dims in:\n" + text)
    check('w: f32[4, 3] @weights("w");' in text and 'b: f32[3] @weights("b");' in text,
          "float initializers go to the archive:\n" + text)
    raw = open(os.path.join(tmp, "m.safetensors"), "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    check(n % 8 == 0, "header length %d is a multiple of 8" % n)
    head = json.loads(raw[8:8 + n])
    spans = sorted(tuple(e["data_offsets"]) for k, e in head.items() if k != "__metadata__")
    end = 0
    for lo, hi in spans:
        check(lo == end, "entries tile the data: %s" % spans)
        end = hi
    check(8 + n + end == len(raw), "the last entry ends the file")
    xv = np.random.RandomState(1).rand(3, 5, 4).astype(np.float32)
    out = run_berth(tmp, args, {"x_in": xv}, "batch=3 seq=5")
    if out:
        near(out["y"], xv @ w + b, "y")
    p, _ = convert(tmp, m, "--dyn", "batch=0", expect_rc=2)
    check("expected a max >= 1" in p.stderr, "bad --dyn is a usage error: %s" % p.stderr)


def _dyn_lines(p):
    return [ln for ln in p.stdout.splitlines() if ln.startswith("onnx2webnn: dyn dim ")]


def case_dyn_range(tmp, args):
    """Every dyn dim gets one line with its max and where the max came
    from: --dyn, the model (a dim_param fixed elsewhere in the graph,
    berth.dyn.* metadata), or the default; differing sizes are reported."""
    f32 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)  # noqa: E731
    relu = model([helper.make_node("Relu", ["x"], ["y"])], [f32("x", ["batch", "seq", 4])],
                 [f32("y", ["batch", "seq", 4])])
    p, text = convert(tmp, relu)
    check(_dyn_lines(p) == [
        "onnx2webnn: dyn dim 'batch' (input 'x' dim 0): max 64, the default (--dyn batch=MAX to set it)",
        "onnx2webnn: dyn dim 'seq' (input 'x' dim 1): max 64, the default (--dyn seq=MAX to set it)"],
        "the default, said per dim: %s" % p.stdout)
    check('x: f32[dyn("batch", 64), dyn("seq", 64), 4];' in text, "the default in the graph:\n" + text)
    p, text = convert(tmp, relu, "--dyn", "batch=8", "--dyn-default", "16")
    check(_dyn_lines(p) == [
        "onnx2webnn: dyn dim 'batch' (input 'x' dim 0): max 8, from --dyn",
        "onnx2webnn: dyn dim 'seq' (input 'x' dim 1): max 16, the default (--dyn seq=MAX to set it)"],
        "--dyn and --dyn-default: %s" % p.stdout)
    check('x: f32[dyn("batch", 8), dyn("seq", 16), 4];' in text, "--dyn in the graph:\n" + text)

    # The model fixes N: y declares N at dim 0, and the Reshape makes it 8.
    shape = numpy_helper.from_array(np.array([8, 4], np.int64), "shape")
    fixed = model([helper.make_node("Reshape", ["x", "shape"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
                  [f32("x", ["N", 4])], [f32("y", ["N", 4])], [shape])
    p, text = convert(tmp, fixed)
    check(_dyn_lines(p) == ["onnx2webnn: dyn dim 'N' (input 'x' dim 0): max 8, from the model: output 'y' declares "
                            "N at dim 0, where ONNX shape inference finds 8"], "from inference: %s" % p.stdout)
    check('x: f32[dyn("N", 8), 4];' in text, "the model's size in the graph:\n" + text)
    xv = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
    out = run_berth(tmp, args, {"x": xv}, "N=8")
    if out:
        near(out["y"], np.maximum(xv, 0), "y at the model's size")
    p, _ = convert(tmp, fixed, "--dyn", "N=4")
    check(_dyn_lines(p) == ["onnx2webnn: dyn dim 'N' (input 'x' dim 0): max 4, from --dyn (the model states 8: "
                            "output 'y' declares N at dim 0, where ONNX shape inference finds 8)"],
          "--dyn wins, and the model's other size is said: %s" % p.stdout)

    # a and b share "batch"; --input-shape fixes a's, so b's is known.
    add = model([helper.make_node("Add", ["a", "b"], ["y"])], [f32("a", ["batch", 3]), f32("b", ["batch", 3])],
                [f32("y", ["batch", 3])])
    p, text = convert(tmp, add, "--input-shape", "a=2,3")
    check(_dyn_lines(p) == ["onnx2webnn: dyn dim 'batch' (input 'b' dim 0): max 2, from the model: input 'a' "
                            "declares batch at dim 0, fixed to 2 by --input-shape"], "from --input-shape: %s" % p.stdout)
    check("a: f32[2, 3];" in text and 'b: f32[dyn("batch", 2), 3];' in text, "both inputs:\n" + text)

    # berth.dyn.NAME in metadata_props, spelled as --dyn takes it or as the dim_param.
    meta = model([helper.make_node("Relu", ["x"], ["y"])], [f32("x", ["n.tok", "seq"])], [f32("y", ["n.tok", "seq"])])
    helper.set_model_props(meta, {"berth.dyn.seq": "128", "berth.dyn.n.tok": "3"})
    p, text = convert(tmp, meta)
    check(_dyn_lines(p) == [
        "onnx2webnn: dyn dim 'n_tok' (input 'x' dim 0): max 3, from the model: the model's metadata_props "
        "'berth.dyn.n.tok'",
        "onnx2webnn: dyn dim 'seq' (input 'x' dim 1): max 128, from the model: the model's metadata_props "
        "'berth.dyn.seq'"], "from metadata_props: %s" % p.stdout)
    check('x: f32[dyn("n_tok", 3), dyn("seq", 128)];' in text, "metadata in the graph:\n" + text)
    helper.set_model_props(meta, {"berth.dyn.seq": "many"})
    p, _ = convert(tmp, meta, expect_rc=1)
    check("metadata_props 'berth.dyn.seq' = 'many': expected a size >= 1" in p.stderr, "bad metadata: %s" % p.stderr)

    # Two sizes for one name: said, and the largest taken.
    helper.set_model_props(fixed, {"berth.dyn.N": "16"})
    p, text = convert(tmp, fixed)
    check("onnx2webnn: warning: dyn dim 'N': the model states different sizes: 8 (output 'y' declares N at dim 0, "
          "where ONNX shape inference finds 8); 16 (the model's metadata_props 'berth.dyn.N'); the max is the "
          "largest, 16" in p.stderr and 'x: f32[dyn("N", 16), 4];' in text, "two sizes: %s\n%s" % (p.stderr, text))
    # Two dim_params that become one name: the engine binds them together.
    two = model([helper.make_node("Add", ["a", "b"], ["y"])], [f32("a", ["s.1", 3]), f32("b", ["s_1", 3])],
                [f32("y", [None, 3])])
    p, text = convert(tmp, two)
    check("onnx2webnn: warning: dyn dim 's_1' stands for dim_param 's.1' and dim_param 's_1', which ONNX lets "
          "differ; the engine binds them to one value" in p.stderr, "one name, two dim_params: %s" % p.stderr)
    check(_dyn_lines(p) == ["onnx2webnn: dyn dim 's_1' (input 'a' dim 0, input 'b' dim 0): max 64, the default "
                            "(--dyn s_1=MAX to set it)"], "one line lists both uses: %s" % p.stdout)


def case_names(tmp, args):
    """ONNX names that are not identifiers: each rename printed, and the
    names map beside the graph holds every input and output with the
    identifier the .webnn declares; feeding by the map runs."""
    f32 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)  # noqa: E731
    ins = [f32("x.1", [2, 3]), f32("x_1", [2, 3]), f32("1st", [2, 3])]
    outs = [f32("y:0", [2, 3]), f32("z", [2, 3])]
    nodes = [helper.make_node("Add", ["x.1", "x_1"], ["y:0"]), helper.make_node("Mul", ["y:0", "1st"], ["z"])]
    p, text = convert(tmp, model(nodes, ins, outs))
    names = json.load(open(os.path.join(tmp, "m.names.json")))
    check(names == {"inputs": {"x.1": "x_1", "x_1": "x_1_2", "1st": "v_1st"}, "outputs": {"y:0": "y_0", "z": "z"}},
          "names map: %s" % names)
    check(list(names["inputs"]) == ["x.1", "x_1", "1st"], "inputs in graph order: %s" % list(names["inputs"]))
    declared = re.findall(r"^    (\w+): f32\[", text, re.M)
    outputs = re.search(r"outputs \{ (.*); \}", text).group(1).split("; ")
    check(declared == list(names["inputs"].values()), "the map's inputs %s are the graph's %s"
          % (list(names["inputs"].values()), declared))
    check(outputs == list(names["outputs"].values()), "the map's outputs %s are the graph's %s"
          % (list(names["outputs"].values()), outputs))
    for line in ("onnx2webnn: input 'x.1' is x_1 in the graph", "onnx2webnn: input 'x_1' is x_1_2 in the graph",
                 "onnx2webnn: input '1st' is v_1st in the graph", "onnx2webnn: output 'y:0' is y_0 in the graph",
                 "onnx2webnn: wrote %s, the identifier of every input and output (4 renamed)"
                 % os.path.join(tmp, "m.names.json")):
        check(line in p.stdout.splitlines(), "printed %r: %s" % (line, p.stdout))
    check("'z'" not in p.stdout, "a name kept is not printed as renamed: %s" % p.stdout)
    rs = np.random.RandomState(3)
    vals = {k: rs.randn(2, 3).astype(np.float32) for k in names["inputs"]}
    out = run_berth(tmp, args, {names["inputs"][k]: v for k, v in vals.items()})
    if out:
        y = vals["x.1"] + vals["x_1"]
        near(out[names["outputs"]["y:0"]], y, "y:0 read through the map")
        near(out[names["outputs"]["z"]], y * vals["1st"], "z read through the map")

    other = os.path.join(tmp, "elsewhere.json")
    os.remove(os.path.join(tmp, "m.names.json"))
    p, _ = convert(tmp, model([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [2])], [f32("y", [2])]),
                   "--names", other)
    check(json.load(open(other)) == {"inputs": {"x": "x"}, "outputs": {"y": "y"}}, "--names FILE: written there")
    check(not os.path.exists(os.path.join(tmp, "m.names.json")), "--names FILE: not beside the graph")
    check("onnx2webnn: wrote %s, the identifier of every input and output (none renamed)" % other
          in p.stdout.splitlines(), "none renamed: %s" % p.stdout)


def _clip_model(opset, with_inputs):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])
    if not with_inputs:
        node = helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25)
        return model([node], [x], [y], opset=opset)
    lo = numpy_helper.from_array(np.array(-0.5, np.float32), "lo")
    hi = helper.make_tensor_value_info("hi", TensorProto.FLOAT, [])
    node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
    return model([node], [x, hi], [y], [lo], opset=opset)


def case_clip(tmp, args):
    """Clip's attribute form (opset < 11) and input form (constant min,
    computed max) mean the same: clamp(x, -0.5, 0.25)."""
    xv = np.linspace(-1, 1, 10, dtype=np.float32).reshape(2, 5)
    want = np.minimum(np.maximum(xv, -0.5), 0.25)
    _, text = convert(tmp, _clip_model(9, False))
    check(re.search(r"y = clamp\(x, minValue=-0\.5, maxValue=0\.25\);", text), "attribute form:\n" + text)
    out = run_berth(tmp, args, {"x": xv})
    if out:
        near(out["y"], want, "clip opset 9")
    _, text = convert(tmp, _clip_model(13, True))
    check("clamp(x, minValue=-0.5)" in text and "= min(" in text, "input form:\n" + text)
    out = run_berth(tmp, args, {"x": xv, "hi": np.array(0.25, np.float32)})
    if out:
        near(out["y"], want, "clip opset 13")


def _softmax_ref(x, axis, flatten):
    if flatten:
        rows = int(np.prod(x.shape[:axis]))
        f = x.reshape(rows, -1)
        e = np.exp(f - f.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def case_softmax(tmp, args):
    """Softmax axis=1 on [2, 3, 4]: opset 11 normalizes each flattened row
    of 12, opset 13 each column of 3; the two results differ."""
    xv = np.random.RandomState(2).randn(2, 3, 4).astype(np.float32)
    results = {}
    for opset in (11, 13):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])
        _, text = convert(tmp, model([helper.make_node("Softmax", ["x"], ["y"], axis=1)], [x], [y], opset=opset))
        if opset == 11:
            check("newShape=[2, 12]" in text and "axis=1" in text, "opset 11 flattens:\n" + text)
        else:
            check("y = softmax(x, axis=1);" in text, "opset 13 is one op:\n" + text)
        out = run_berth(tmp, args, {"x": xv})
        if out:
            results[opset] = out["y"]
            near(out["y"], _softmax_ref(xv, 1, opset == 11), "softmax opset %d" % opset)
    if len(results) == 2:
        check(np.abs(results[11] - results[13]).max() > 1e-3, "opset 11 and 13 semantics differ")


def _sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def _gru_ref(x, w, r, b, h0, lbr, reverse):
    """ONNX GRU, one direction, layout 0: x [seq, batch, in]; w [3H, in],
    r [3H, H], b [6H] (gates z, r, h); returns every step's h."""
    H = r.shape[1]
    wb, rb = b[:3 * H], b[3 * H:]
    h, ys = h0, [None] * len(x)
    for t in (range(len(x) - 1, -1, -1) if reverse else range(len(x))):
        gx = x[t] @ w.T + wb
        z = _sig(gx[:, :H] + h @ r[:H].T + rb[:H])
        rr = _sig(gx[:, H:2 * H] + h @ r[H:2 * H].T + rb[H:2 * H])
        if lbr:
            n = np.tanh(gx[:, 2 * H:] + rr * (h @ r[2 * H:].T + rb[2 * H:]))
        else:
            n = np.tanh(gx[:, 2 * H:] + (rr * h) @ r[2 * H:].T + rb[2 * H:])
        h = (1 - z) * n + z * h
        ys[t] = h
    return np.stack(ys)


def _lstm_ref(x, w, r, b, p, reverse):
    """ONNX LSTM, one direction, layout 0, zero initial state, peepholes p
    [3H] (i, o, f); gates in the order i, o, f, c."""
    H = r.shape[1]
    bias = b[:4 * H] + b[4 * H:]
    h = np.zeros((x.shape[1], H), np.float32)
    c, ys = h.copy(), [None] * len(x)
    for t in (range(len(x) - 1, -1, -1) if reverse else range(len(x))):
        g = x[t] @ w.T + h @ r.T + bias
        i = _sig(g[:, :H] + p[:H] * c)
        f = _sig(g[:, 2 * H:3 * H] + p[2 * H:] * c)
        c = f * c + i * np.tanh(g[:, 3 * H:])
        o = _sig(g[:, H:2 * H] + p[H:2 * H] * c)
        h = o * np.tanh(c)
        ys[t] = h
    return np.stack(ys), h, c


def case_recurrent(tmp, args):
    """What the ONNX node tests leave out of GRU and LSTM: a bidirectional
    GRU with linear_before_reset and an initial state, and a reverse LSTM
    with peepholes in layout 1 (batch first), against numpy."""
    rs = np.random.RandomState(5)
    seq, batch, inp, H = 4, 2, 3, 5
    xv = rs.randn(seq, batch, inp).astype(np.float32)
    w = (rs.randn(2, 3 * H, inp) * 0.5).astype(np.float32)
    r = (rs.randn(2, 3 * H, H) * 0.5).astype(np.float32)
    b = (rs.randn(2, 6 * H) * 0.5).astype(np.float32)
    h0 = (rs.randn(2, batch, H) * 0.5).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in ((w, "W"), (r, "R"), (b, "B"), (h0, "h0"))]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, inp])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [seq, 2, batch, H])
    yh = helper.make_tensor_value_info("yh", TensorProto.FLOAT, [2, batch, H])
    node = helper.make_node("GRU", ["x", "W", "R", "B", "", "h0"], ["y", "yh"], hidden_size=H,
                            direction="bidirectional", linear_before_reset=1)
    _, text = convert(tmp, model([node], [x], [y, yh], inits=inits))
    # initializer weights are cut and transposed when converting, not per run
    check("transpose(" not in text and "slice(W" not in text and "slice(R" not in text,
          "GRU weights that are initializers are prepared when converting:\n" + text)
    out = run_berth(tmp, args, {"x": xv})
    want = np.stack([_gru_ref(xv, w[d], r[d], b[d], h0[d], 1, d == 1) for d in range(2)], axis=1)
    if out:
        near(out["y"], want, "bidirectional GRU, linear_before_reset=1: Y")
        near(out["yh"], np.stack([want[-1, 0], want[0, 1]]), "bidirectional GRU: Y_h (last step of each direction)")
    # the same weights as graph inputs: cut and transposed by ops, once per direction
    wi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for a, n in ((w, "W"), (r, "R"), (b, "B"))]
    _, text = convert(tmp, model([node], [x] + wi, [y, yh], inits=inits[3:]))
    check(text.count("transpose(") == 6, "GRU weights that are inputs: 6 transposes (W and the two gate groups of R, per direction):\n" + text)
    out = run_berth(tmp, args, {"x": xv, "W": w, "R": r, "B": b})
    if out:
        near(out["y"], want, "bidirectional GRU, weights as inputs: Y")

    w4 = (rs.randn(1, 4 * H, inp) * 0.5).astype(np.float32)
    r4 = (rs.randn(1, 4 * H, H) * 0.5).astype(np.float32)
    b4 = (rs.randn(1, 8 * H) * 0.5).astype(np.float32)
    p4 = (rs.randn(1, 3 * H) * 0.5).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in ((w4, "W"), (r4, "R"), (b4, "B"), (p4, "P"))]
    xb = np.ascontiguousarray(xv.transpose(1, 0, 2))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, inp])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, seq, 1, H])
    yc = helper.make_tensor_value_info("yc", TensorProto.FLOAT, [batch, 1, H])
    node = helper.make_node("LSTM", ["x", "W", "R", "B", "", "", "", "P"], ["y", "", "yc"], hidden_size=H,
                            direction="reverse", layout=1)
    convert(tmp, model([node], [x], [y, yc], inits=inits))
    out = run_berth(tmp, args, {"x": xb})
    if out:
        ys, _, c = _lstm_ref(xv, w4[0], r4[0], b4[0], p4[0], True)
        near(out["y"], ys.transpose(1, 0, 2)[:, :, None, :], "reverse LSTM with peepholes, layout 1: Y")
        near(out["yc"], c[:, None, :], "reverse LSTM: Y_c")


def case_inverse_trig(tmp, args):
    """Atan, Asin and Acos, spelled with WebNN ops, against numpy over
    their whole domains: every range reduction's branch, the ends and 0."""
    xs = {"Atan": np.concatenate([np.linspace(-50, 50, 801), [0, 1, -1, 0.2679, 0.268, 1e6, -1e6]]),
          "Asin": np.concatenate([np.linspace(-1, 1, 801), [0.999999, -0.999999]]),
          "Acos": np.concatenate([np.linspace(-1, 1, 801), [0.999999, -0.999999]])}
    ref = {"Atan": np.arctan, "Asin": np.arcsin, "Acos": np.arccos}
    for name, xv in xs.items():
        xv = xv.astype(np.float32)
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(xv)])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [len(xv)])
        convert(tmp, model([helper.make_node(name, ["x"], ["y"])], [x], [y]))
        out = run_berth(tmp, args, {"x": xv})
        if out:
            near(out["y"], ref[name](xv.astype(np.float64)), name, atol=2e-6, rtol=2e-6)


def _bert_model(rs, layers=2, hidden=64, heads=4, vocab=50, ffn=128):
    """A BERT-style encoder with the shape chains exporters write."""
    inits, nodes, params = [], [], {}

    def w(name, *shape, scale=0.1):
        arr = (rs.randn(*shape) * scale).astype(np.float32)
        params[name] = arr
        inits.append(numpy_helper.from_array(arr, name))
        return name

    def c(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def n(op, ins, out, **kw):
        nodes.append(helper.make_node(op, ins, [out], **kw))
        return out

    dh = hidden // heads
    w("emb", vocab, hidden, scale=1.0)
    c("heads_dh", np.array([heads, dh], np.int64))
    c("zero1", np.array([0], np.int64))
    c("one1", np.array([1], np.int64))
    c("hid", np.array([hidden], np.int64))
    c("scale", np.array(np.sqrt(dh), np.float32))
    c("one_f", np.array(1.0, np.float32))
    c("neg", np.array(-10000.0, np.float32))
    c("half", np.array(0.5, np.float32))
    c("sqrt2", np.array(np.sqrt(2.0), np.float32))
    h = n("Gather", ["emb", "input_ids"], "h0")
    m = n("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    m = n("Sub", ["one_f", m], "mask_inv")
    m = n("Mul", [m, "neg"], "mask_add")
    m = n("Unsqueeze", [m, "one1"], "mask_u1")
    m = n("Unsqueeze", [m, "one1"], "mask_u2")
    # [batch, seq] from the hidden state's shape: Shape -> Slice -> Concat
    shp = n("Shape", [h], "h_shape")
    bs = n("Slice", [shp, "zero1", c("two1", np.array([2], np.int64))], "bs")
    split_shape = n("Concat", [bs, "heads_dh"], "split_shape", axis=0)
    merge_shape = n("Concat", [bs, "hid"], "merge_shape", axis=0)
    for L in range(layers):
        p = "l%d_" % L

        def lin(x, name, i, o):
            y = n("MatMul", [x, w(p + name + "_w", i, o)], p + name + "_mm")
            return n("Add", [y, w(p + name + "_b", o)], p + name)

        def heads_of(x, name, perm):
            r = n("Reshape", [x, split_shape], p + name + "_r")
            return n("Transpose", [r], p + name + "_t", perm=perm)

        q = heads_of(lin(h, "q", hidden, hidden), "q", [0, 2, 1, 3])
        k = heads_of(lin(h, "k", hidden, hidden), "k", [0, 2, 3, 1])
        v = heads_of(lin(h, "v", hidden, hidden), "v", [0, 2, 1, 3])
        s = n("MatMul", [q, k], p + "scores")
        s = n("Div", [s, "scale"], p + "scaled")
        s = n("Add", [s, m], p + "masked")
        s = n("Softmax", [s], p + "probs", axis=-1)
        ctx = n("MatMul", [s, v], p + "ctx")
        ctx = n("Transpose", [ctx], p + "ctx_t", perm=[0, 2, 1, 3])
        ctx = n("Reshape", [ctx, merge_shape], p + "ctx_m")
        a = lin(ctx, "o", hidden, hidden)
        h = n("Add", [a, h], p + "res1")
        h = n("LayerNormalization", [h, w(p + "ln1_g", hidden), w(p + "ln1_b", hidden)], p + "ln1",
              axis=-1, epsilon=1e-5)
        f = lin(h, "f1", hidden, ffn)
        g = n("Div", [f, "sqrt2"], p + "g_div")  # gelu spelled with Erf, as exported
        g = n("Erf", [g], p + "g_erf")
        g = n("Add", [g, "one_f"], p + "g_add")
        g = n("Mul", [f, g], p + "g_mul")
        g = n("Mul", [g, "half"], p + "g_half")
        f = lin(g, "f2", ffn, hidden)
        h = n("Add", [f, h], p + "res2")
        h = n("LayerNormalization", [h, w(p + "ln2_g", hidden), w(p + "ln2_b", hidden)], "out" if L == layers - 1 else p + "ln2",
              axis=-1, epsilon=1e-5)
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", hidden])
    return model(nodes, [ids, mask], [out], inits, opset=17), params


def _bert_ref(params, ids, mask, layers=2, hidden=64, heads=4):
    from math import erf
    verf = np.vectorize(erf)

    def ln(x, g, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * g + b

    dh = hidden // heads
    B, S = ids.shape
    h = params["emb"][ids].astype(np.float64)
    add = ((1.0 - mask.astype(np.float64)) * -10000.0)[:, None, None, :]
    for L in range(layers):
        P = lambda k: params["l%d_%s" % (L, k)].astype(np.float64)  # noqa: E731
        split = lambda t: t.reshape(B, S, heads, dh).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = (split(h @ P(x + "_w") + P(x + "_b")) for x in "qkv")
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh) + add
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(0, 2, 1, 3).reshape(B, S, hidden)
        h = ln(ctx @ P("o_w") + P("o_b") + h, P("ln1_g"), P("ln1_b"))
        f = h @ P("f1_w") + P("f1_b")
        f = f * 0.5 * (1 + verf(f / np.sqrt(2)))
        h = ln(f @ P("f2_w") + P("f2_b") + h, P("ln2_g"), P("ln2_b"))
    return h


def case_bert(tmp, args):
    """A 2-layer BERT-style encoder (hidden 64, 4 heads, attention mask,
    shapes computed with Shape/Slice/Concat) converts with dyn batch and
    seq and matches a NumPy forward pass at a bucket."""
    rs = np.random.RandomState(3)
    m, params = _bert_model(rs)
    _, text = convert(tmp, m, "--dyn", "batch=4", "--dyn", "seq=16")
    check('input_ids: i64[dyn("batch", 4), dyn("seq", 16)]' in text, "dyn inputs:\n" + text[:600])
    check("shape(" in text, "the shape chain is kept for the engine to fold")
    ids = rs.randint(0, 50, size=(2, 7)).astype(np.int64)
    mask = np.ones((2, 7), np.int64)
    mask[1, 5:] = 0
    out = run_berth(tmp, args, {"input_ids": ids, "attention_mask": mask}, "batch=2 seq=7")
    if out:
        near(out["out"], _bert_ref(params, ids, mask), "bert output", atol=1e-3, rtol=1e-3)


def case_reshape_zero(tmp, args):
    """Reshape's 0 copies the input's dim, static or dynamic."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 2, 3])
    shape = numpy_helper.from_array(np.array([0, 2, -1], np.int64), "s")
    m = model([helper.make_node("Reshape", ["x", "s"], ["y"])], [x], [y], [shape])
    _, text = convert(tmp, m, "--dyn", "n=8")
    xv = np.arange(30, dtype=np.float32).reshape(5, 6)
    out = run_berth(tmp, args, {"x": xv}, "n=5")
    if out:
        near(out["y"], xv.reshape(5, 2, 3), "reshape with 0")


def case_computed_shape(tmp, args):
    """Shape math over a dynamic dim stays as nodes berth folds per bucket:
    a computed Reshape target with a 0 (copy the dim) whose static
    elements fold at conversion while the dynamic one stays a node, and
    a Slice of the dynamic dim from 1 to its end."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", 2, 3])
    inits = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in
             (("one", [1]), ("two", [2]), ("head", [0, 2]), ("big", [1 << 62]), ("zero_ax", [0]))]
    nodes = [helper.make_node("Shape", ["x"], ["sx"]),
             helper.make_node("Slice", ["sx", "one", "two"], ["cols"]),
             helper.make_node("Div", ["cols", "two"], ["half"]),
             helper.make_node("Concat", ["head", "half"], ["target"], axis=0),  # [0, 2, 3], computed
             helper.make_node("Reshape", ["x", "target"], ["r"]),
             helper.make_node("Slice", ["r", "one", "big", "zero_ax"], ["y"])]  # r[1:]
    m = model(nodes, [x], [y], inits)
    _, text = convert(tmp, m, "--dyn", "n=8")
    check("shape(x)" in text and "reshape(x, r_shape)" in text and "r_shape_part: i64[2]" in text,
          "the dynamic dim of the target is computed per bucket, its static dims folded:\n" + text)
    xv = np.arange(30, dtype=np.float32).reshape(5, 6)
    out = run_berth(tmp, args, {"x": xv}, "n=5")
    if out:
        near(out["y"], xv.reshape(5, 2, 3)[1:], "computed reshape and dynamic slice")


def _conv_ref(x, w, b, pad):
    """Direct NCHW convolution, stride 1, symmetric padding, in float64."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = np.einsum("nchw,ochw->no", xp[:, :, i:i + kh, j:j + kw], w.astype(np.float64))
    return y + (0 if b is None else b.reshape(1, o, 1, 1))


def case_batchnorm_fold(tmp, args):
    """Conv then BatchNormalization (with and without a conv bias) becomes
    one conv2d with folded weights; --keep-batchnorm keeps the node; a BN
    whose conv output has another reader is left alone. Each matches a
    float64 reference."""
    rs = np.random.RandomState(4)
    x = rs.randn(2, 3, 6, 5).astype(np.float32)
    w = rs.randn(4, 3, 3, 3).astype(np.float32)
    cb = rs.randn(4).astype(np.float32)
    scale, bias = rs.rand(4).astype(np.float32) + 0.5, rs.randn(4).astype(np.float32)
    mean, var = rs.randn(4).astype(np.float32), rs.rand(4).astype(np.float32) + 0.1
    inits = [helper.make_tensor(n, TensorProto.FLOAT, a.shape, a.reshape(-1).tolist())
             for n, a in (("w", w), ("cb", cb), ("s", scale), ("b", bias), ("m", mean), ("v", var))]
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 6, 5])
    yi = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 6, 5])
    ci = helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 4, 6, 5])
    bn = helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"], epsilon=1e-3)
    # exporters write weights as initializers or as Constant nodes
    as_nodes = [helper.make_node("Constant", [], [t.name], value=t) for t in inits]
    for with_bias, constant_nodes in ((True, False), (False, False), (True, True)):
        conv = helper.make_node("Conv", ["x", "w"] + (["cb"] if with_bias else []), ["c"], pads=[1, 1, 1, 1])
        want = _conv_ref(x, w, cb if with_bias else None, 1)
        want = (want - mean.reshape(1, 4, 1, 1)) * (scale / np.sqrt(var + 1e-3)).reshape(1, 4, 1, 1) + \
            bias.reshape(1, 4, 1, 1)
        m = model(as_nodes + [conv, bn], [xi], [yi]) if constant_nodes else model([conv, bn], [xi], [yi], inits)
        p, text = convert(tmp, m)
        check("batchNormalization" not in text and text.count("conv2d(") == 1, "folded:\n" + text)
        check("1 BatchNormalization folded" in p.stdout, "the summary says so: " + p.stdout)
        out = run_berth(tmp, args, {"x": x})
        if out:
            near(out["y"], want, "folded, conv bias %s" % with_bias)
        p, text = convert(tmp, m, "--keep-batchnorm")
        check("batchNormalization(" in text, "kept:\n" + text)
        out = run_berth(tmp, args, {"x": x})
        if out:
            near(out["y"], want, "kept, conv bias %s" % with_bias)
    # c is a graph output too: the BN cannot take the conv's place
    m = model([helper.make_node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1]), bn], [xi], [yi, ci], inits)
    p, text = convert(tmp, m)
    check("batchNormalization(" in text and "folded" not in p.stdout, "not folded:\n" + text)


def case_affine_fold(tmp, args):
    """Conv then Mul by a scalar then Add of a per-channel [4, 1, 1]
    constant folds into one conv2d; an Add of a [5] vector (which
    broadcasts along the width, not the channels) does not."""
    rs = np.random.RandomState(5)
    x = rs.randn(1, 3, 4, 5).astype(np.float32)
    w = rs.randn(4, 3, 3, 3).astype(np.float32)
    cb, s1 = rs.randn(4).astype(np.float32), np.array([1.7], np.float32)
    sh, row = rs.randn(4, 1, 1).astype(np.float32), rs.randn(5).astype(np.float32)
    inits = [helper.make_tensor(n, TensorProto.FLOAT, a.shape, a.reshape(-1).tolist())
             for n, a in (("w", w), ("cb", cb), ("s1", s1), ("sh", sh), ("row", row))]
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 5])
    yi = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 5])
    conv = helper.make_node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1])
    base = _conv_ref(x, w, cb, 1) * 1.7
    for shift, folds in (("sh", True), ("row", False)):
        nodes = [conv, helper.make_node("Mul", ["s1", "c"], ["m"]), helper.make_node("Add", ["m", shift], ["y"])]
        p, text = convert(tmp, model(nodes, [xi], [yi], inits))
        if folds:
            check("mul(" not in text and "add(" not in text and "2 Mul/Add by constants folded" in p.stdout,
                  "folded:\n" + text + p.stdout)
        else:
            check("add(" in text and "mul(" not in text and "1 Mul/Add by constants folded" in p.stdout,
                  "only the Mul folds:\n" + text + p.stdout)
        out = run_berth(tmp, args, {"x": x})
        if out:
            near(out["y"], base + (sh if folds else row), "affine %s" % shift)


def _windows(x, k, s, d, pads, fill):
    """x (N, C, D, H, W) padded with `fill`, and for each output position
    the window's elements: an array (N, C, Do, Ho, Wo, kd*kh*kw)."""
    pw = [(0, 0), (0, 0)] + [(pads[i], pads[i + 3]) for i in range(3)]
    xp = np.pad(x.astype(np.float64), pw, constant_values=fill)
    outs = [(xp.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(3)]
    taps = []
    for a in range(k[0]):
        for b in range(k[1]):
            for c in range(k[2]):
                taps.append(xp[:, :, a * d[0]:a * d[0] + (outs[0] - 1) * s[0] + 1:s[0],
                               b * d[1]:b * d[1] + (outs[1] - 1) * s[1] + 1:s[1],
                               c * d[2]:c * d[2] + (outs[2] - 1) * s[2] + 1:s[2]])
    return np.stack(taps, axis=-1)


def _conv3d_ref(x, w, b, s, d, pads, group):
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    win = _windows(x, w.shape[2:], s, d, pads, 0.0)
    y = []
    for g in range(group):
        part = win[:, g * cg:(g + 1) * cg]
        wg = w[g * (m // group):(g + 1) * (m // group)].reshape(m // group, cg, -1).astype(np.float64)
        y.append(np.einsum("ncdhwk,mck->nmdhw", part, wg))
    return np.concatenate(y, axis=1) + b.reshape(1, -1, 1, 1, 1)


def _conv_transpose3d_ref(x, w, b, s, d, pads, opad, group):
    """Every input element times the filter, added at i*s + t*d."""
    n, c, din, hin, win = x.shape
    mg, k = w.shape[1], w.shape[2:]
    full = [(x.shape[2 + i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 + opad[i] for i in range(3)]
    y = np.zeros((n, mg * group) + tuple(full))
    for ci in range(c):
        g = ci // (c // group)
        for i, j, l in np.ndindex(din, hin, win):
            for a, bb, cc in np.ndindex(*k):
                y[:, g * mg:(g + 1) * mg, i * s[0] + a * d[0], j * s[1] + bb * d[1], l * s[2] + cc * d[2]] += \
                    x[:, ci, i, j, l, None] * w[ci, :, a, bb, cc]
    y = y[:, :, pads[0]:full[0] - pads[3], pads[1]:full[1] - pads[4], pads[2]:full[2] - pads[5]]
    return y + b.reshape(1, -1, 1, 1, 1)


def case_conv3d(tmp, args):
    """3-D Conv, ConvTranspose, MaxPool and AveragePool (spelled with 2-D
    ops per depth tap) where the ONNX node tests do not reach: depth pads,
    stride with dilation, groups, output padding, ceil mode and
    count_include_pad, against numpy."""
    rs = np.random.RandomState(7)
    xv = rs.randn(2, 4, 5, 6, 7).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xv.shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)

    w = (rs.randn(6, 2, 3, 2, 3) * 0.3).astype(np.float32)
    b = rs.randn(6).astype(np.float32)
    s, d, pads = [2, 1, 2], [2, 1, 1], [2, 1, 0, 1, 0, 1]
    node = helper.make_node("Conv", ["x", "W", "B"], ["y"], strides=s, dilations=d, pads=pads, group=2)
    convert(tmp, model([node], [x], [y], inits=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")]))
    out = run_berth(tmp, args, {"x": xv})
    if out:
        near(out["y"], _conv3d_ref(xv, w, b, s, d, pads, 2), "Conv 3-D: depth pads, stride, dilation, groups")

    wt = (rs.randn(4, 3, 2, 3, 2) * 0.3).astype(np.float32)
    bt = rs.randn(6).astype(np.float32)
    s, d, pads, opad = [2, 1, 2], [1, 2, 1], [1, 0, 1, 0, 1, 0], [1, 0, 1]
    node = helper.make_node("ConvTranspose", ["x", "W", "B"], ["y"], strides=s, dilations=d, pads=pads,
                            output_padding=opad, group=2)
    convert(tmp, model([node], [x], [y], inits=[numpy_helper.from_array(wt, "W"), numpy_helper.from_array(bt, "B")]))
    out = run_berth(tmp, args, {"x": xv})
    if out:
        near(out["y"], _conv_transpose3d_ref(xv, wt, bt, s, d, pads, opad, 2),
             "ConvTranspose 3-D: stride, dilation, pads, output padding, groups")

    k, s, pads = [3, 2, 3], [2, 2, 1], [1, 1, 1, 1, 0, 1]
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=k, strides=s, pads=pads, dilations=[1, 2, 1])
    convert(tmp, model([node], [x], [y]))
    out = run_berth(tmp, args, {"x": xv})
    if out:
        near(out["y"], _windows(xv, k, s, [1, 2, 1], pads, -np.inf).max(-1), "MaxPool 3-D: pads, dilation")

    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2], strides=[2, 2, 2], ceil_mode=1)
    convert(tmp, model([node], [x], [y]))
    out = run_berth(tmp, args, {"x": xv})
    if out:  # ceil: the last window of each odd dim holds one element of it
        near(out["y"], _windows(xv, [2, 2, 2], [2, 2, 2], [1, 1, 1], [0, 0, 0, 1, 0, 1], -np.inf).max(-1),
             "MaxPool 3-D: ceil mode")

    for include in (0, 1):
        node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=k, strides=s, pads=pads,
                                count_include_pad=include)
        convert(tmp, model([node], [x], [y]))
        out = run_berth(tmp, args, {"x": xv})
        if out:
            total = _windows(xv, k, s, [1, 1, 1], pads, 0.0).sum(-1)
            count = _windows(np.ones_like(xv), k, s, [1, 1, 1], pads, float(include)).sum(-1)
            near(out["y"], total / count, "AveragePool 3-D: pads, count_include_pad=%d" % include)


def case_integer(tmp, args):
    """MatMulInteger with per-row and per-column zero points (int8 x
    uint8, K = 200), QLinearMatMul with per-row and per-column scales,
    QLinearConv int8 with per-channel weight scales and zero points and an
    int32 bias, against integer numpy."""
    rs = np.random.RandomState(11)
    m, k, n = 5, 200, 7
    a = rs.randint(-128, 128, (2, m, k)).astype(np.int8)
    b = rs.randint(0, 256, (k, n)).astype(np.uint8)
    az = rs.randint(-5, 5, m).astype(np.int8)
    bz = rs.randint(100, 150, n).astype(np.uint8)
    inits = [numpy_helper.from_array(v, nm) for v, nm in ((az, "az"), (bz, "bz"))]
    xa = helper.make_tensor_value_info("a", TensorProto.INT8, list(a.shape))
    xb = helper.make_tensor_value_info("b", TensorProto.UINT8, list(b.shape))
    y = helper.make_tensor_value_info("y", TensorProto.INT32, None)
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    convert(tmp, model([node], [xa, xb], [y], inits=inits, opset=10))
    out = run_berth(tmp, args, {"a": a, "b": b})
    want = (a.astype(np.int64) - az[:, None]) @ (b.astype(np.int64) - bz)
    if out:
        check(out["y"].dtype == np.int32 and np.array_equal(out["y"], want),
              "MatMulInteger per-row/per-column zero points: exact int32")

    sa = (rs.rand(m).astype(np.float32) + 0.5) * 0.01
    sb = (rs.rand(n).astype(np.float32) + 0.5) * 0.01
    sy, zy = np.float32(0.3), np.uint8(128)
    inits = [numpy_helper.from_array(v, nm) for v, nm in ((sa, "sa"), (az, "az"), (sb, "sb"), (bz, "bz"),
                                                           (np.array(sy), "sy"), (np.array(zy), "zy"))]
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, None)
    node = helper.make_node("QLinearMatMul", ["a", "sa", "az", "b", "sb", "bz", "sy", "zy"], ["y"])
    convert(tmp, model([node], [xa, xb], [y], inits=inits, opset=10))
    out = run_berth(tmp, args, {"a": a, "b": b})
    if out:
        real = want * (sa[:, None].astype(np.float64) * sb / sy)
        ref = np.clip(np.rint(real) + zy, 0, 255)
        got = out["y"].astype(np.int64)
        check(out["y"].dtype == np.uint8 and np.abs(got - ref).max() <= 1 and (got == ref).mean() > 0.98,
              "QLinearMatMul per-row/per-column scales: within one step, %.3f exact" % (got == ref).mean())

    x = rs.randint(-128, 128, (1, 4, 6, 6)).astype(np.int8)
    w = rs.randint(-128, 128, (6, 2, 3, 3)).astype(np.int8)
    wz = rs.randint(-3, 3, 6).astype(np.int8)
    sw = (rs.rand(6).astype(np.float32) + 0.5) * 0.01
    bias = rs.randint(-5000, 5000, 6).astype(np.int32)
    sx, xz, sy2, zy2 = np.float32(0.05), np.int8(3), np.float32(2.0), np.int8(-10)
    inits = [numpy_helper.from_array(v, nm) for v, nm in (
        (np.array(sx), "sx"), (np.array(xz), "xz"), (w, "w"), (sw, "sw"), (wz, "wz"),
        (np.array(sy2), "sy"), (np.array(zy2), "zy"), (bias, "bias"))]
    xx = helper.make_tensor_value_info("x", TensorProto.INT8, list(x.shape))
    y = helper.make_tensor_value_info("y", TensorProto.INT8, None)
    node = helper.make_node("QLinearConv", ["x", "sx", "xz", "w", "sw", "wz", "sy", "zy", "bias"], ["y"],
                            pads=[1, 0, 1, 2], strides=[1, 2], group=2)
    convert(tmp, model([node], [xx], [y], inits=inits, opset=10))
    out = run_berth(tmp, args, {"x": x})
    if out:
        xc = np.pad(x.astype(np.int64) - xz, ((0, 0), (0, 0), (1, 1), (0, 2)))
        wc = w.astype(np.int64) - wz[:, None, None, None]
        oh, ow = xc.shape[2] - 2, (xc.shape[3] - 3) // 2 + 1
        acc = np.zeros((1, 6, oh, ow), np.int64)
        for mo in range(6):
            g = mo // 3
            for i in range(oh):
                for j in range(ow):
                    acc[0, mo, i, j] = (xc[0, 2 * g:2 * g + 2, i:i + 3, 2 * j:2 * j + 3] * wc[mo]).sum()
        real = (acc + bias[None, :, None, None]) * (sx * sw.astype(np.float64) / sy2)[None, :, None, None]
        ref = np.clip(np.rint(real) + zy2, -128, 127)
        got = out["y"].astype(np.int64)
        check(out["y"].dtype == np.int8 and np.abs(got - ref).max() <= 1 and (got == ref).mean() > 0.98,
              "QLinearConv int8, per-channel weights, bias: within one step, %.3f exact" % (got == ref).mean())


def case_signal(tmp, args):
    """DFT of a complex signal along a middle axis, zero-padded and cut by
    dft_length, one-sided and inverse; STFT with a window; against
    numpy.fft."""
    rs = np.random.RandomState(3)
    xv = rs.randn(2, 6, 3, 2).astype(np.float32)
    xc = xv[..., 0] + 1j * xv[..., 1]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xv.shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    for length, inverse in ((8, 0), (4, 0), (6, 1)):
        n = numpy_helper.from_array(np.array(length, np.int64), "L")
        node = helper.make_node("DFT", ["x", "L"], ["y"], axis=1, inverse=inverse)
        convert(tmp, model([node], [x], [y], inits=[n], opset=17))
        out = run_berth(tmp, args, {"x": xv})
        if out:
            ref = (np.fft.ifft if inverse else np.fft.fft)(xc, n=length, axis=1)
            near(out["y"], np.stack([ref.real, ref.imag], -1), "DFT complex, length %d, inverse %d" % (length, inverse))
    xr = xv[..., :1]
    x1 = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xr.shape))
    node = helper.make_node("DFT", ["x"], ["y"], axis=2, onesided=1)
    convert(tmp, model([node], [x1], [y], opset=17))
    out = run_berth(tmp, args, {"x": xr})
    if out:
        ref = np.fft.rfft(xr[..., 0], axis=2)
        near(out["y"], np.stack([ref.real, ref.imag], -1), "DFT real, one-sided, last signal axis")

    sig = rs.randn(2, 40, 1).astype(np.float32)
    win = np.hanning(10).astype(np.float32)
    s_in = helper.make_tensor_value_info("s", TensorProto.FLOAT, list(sig.shape))
    inits = [numpy_helper.from_array(np.array(3, np.int64), "step"), numpy_helper.from_array(win, "w")]
    node = helper.make_node("STFT", ["s", "step", "w"], ["y"])
    convert(tmp, model([node], [s_in], [y], inits=inits, opset=17))
    out = run_berth(tmp, args, {"s": sig})
    if out:
        frames = np.stack([sig[:, f * 3:f * 3 + 10, 0] * win for f in range((40 - 10) // 3 + 1)], 1)
        ref = np.fft.rfft(frames, axis=2)
        near(out["y"], np.stack([ref.real, ref.imag], -1), "STFT, window of 10 every 3")


def case_control(tmp, args):
    """If on a condition computed on the device (both branches, then
    where), and Scan (opset 11) with two states, a reversed scan input
    and a scan output on axis 1, unrolled; against numpy."""
    rs = np.random.RandomState(4)
    xv = rs.randn(3, 4).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    out_t = helper.make_tensor_value_info("t", TensorProto.FLOAT, [3, 4])
    out_e = helper.make_tensor_value_info("e", TensorProto.FLOAT, [3, 4])
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["t"])], "then", [], [out_t])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [out_e])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    zero = numpy_helper.from_array(np.array(0, np.float32), "zero")
    convert(tmp, model(nodes, [x], [y], inits=[zero], opset=11))
    for sign in (1, -1):
        v = np.abs(xv) * sign
        out = run_berth(tmp, args, {"x": v})
        if out:
            near(out["y"], v * v if v.sum() > 0 else -v, "If, condition %s" % (v.sum() > 0))

    f = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)  # noqa: E731
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "row"], ["acc_out"]),
         helper.make_node("Max", ["mx_in", "row"], ["mx_out"]),
         helper.make_node("Mul", ["acc_out", "mx_out"], ["prod"])],
        "body", [f("acc_in", [4]), f("mx_in", [4]), f("row", [4])],
        [f("acc_out", [4]), f("mx_out", [4]), f("prod", [4])])
    a0 = numpy_helper.from_array(np.zeros(4, np.float32), "a0")
    m0 = numpy_helper.from_array(np.full(4, -9, np.float32), "m0")
    node = helper.make_node("Scan", ["a0", "m0", "x"], ["acc", "mx", "prods"], body=body, num_scan_inputs=1,
                            scan_input_directions=[1], scan_output_axes=[1])
    outs = [f("acc", None), f("mx", None), f("prods", None)]
    convert(tmp, model([node], [x], outs, inits=[a0, m0], opset=11))
    out = run_berth(tmp, args, {"x": xv})
    if out:
        acc, mx, prods = np.zeros(4), np.full(4, -9.0), []
        for row in xv[::-1]:
            acc, mx = acc + row, np.maximum(mx, row)
            prods.append(acc * mx)
        near(out["acc"], acc, "Scan: sum state")
        near(out["mx"], mx, "Scan: max state")
        near(out["prods"], np.stack(prods, 1), "Scan: scan output on axis 1, input reversed")


def _sr_if_model(static_batch):
    """An If on a sample rate around bodies with their own initializers,
    the same local names in both branches, and a nested If on a static
    dim of a tensor whose first dim is dynamic (true: squeeze axis 1;
    false: keep rank 3 — the branches differ in rank, so only folding
    the nested condition converts it)."""
    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info

    def branch(tag, first):
        one = numpy_helper.from_array(np.array([1], np.int64), "one")  # the same name in both branches
        k = numpy_helper.from_array(np.linspace(-1, 1, 6).astype(np.float32) * (2 if tag == "then" else -3), "k")
        inner_then = helper.make_graph([helper.make_node("Squeeze", ["t", "ax"], ["sq"])], tag + "_sq", [],
                                       [vi("sq", f, None)],
                                       initializer=[numpy_helper.from_array(np.array([1], np.int64), "ax")])
        inner_else = helper.make_graph([helper.make_node("Identity", ["t"], ["keep"])], tag + "_keep", [],
                                       [vi("keep", f, None)])
        nodes = [first,
                 helper.make_node("Shape", ["t"], ["shp"]),
                 helper.make_node("Gather", ["shp", "one"], ["d1"], axis=0),
                 helper.make_node("Equal", ["d1", "one"], ["is1"]),
                 helper.make_node("If", ["is1"], ["r"], then_branch=inner_then, else_branch=inner_else)]
        return helper.make_graph(nodes, tag, [], [vi("r", f, None)], initializer=[one, k])

    then_g = branch("then", helper.make_node("Mul", ["x", "k"], ["t"]))
    else_g = branch("else", helper.make_node("Add", ["x", "k"], ["t"]))
    x = vi("x", f, [3 if static_batch else "batch", 1, 6])
    sr = vi("sr", TensorProto.INT64, [])
    rate = numpy_helper.from_array(np.array(16000, np.int64), "rate")
    nodes = [helper.make_node("Equal", ["sr", "rate"], ["is16k"]),
             helper.make_node("If", ["is16k"], ["y"], then_branch=then_g, else_branch=else_g, name="on_rate")]
    return model(nodes, [x, sr], [vi("y", f, None)], inits=[rate], opset=13)


def case_control_flow(tmp, args):
    """If folded by --freeze, nested Ifs folded by shape, bodies with their
    own initializers and repeated names; an If on a data condition with
    both branches kept; Loop unrolled by trip count and by a condition
    that folds; a Loop with a data trip count refused by name."""
    kp, km = np.linspace(-1, 1, 6).astype(np.float32) * 2, np.linspace(-1, 1, 6).astype(np.float32) * -3
    xv = np.random.RandomState(7).randn(3, 1, 6).astype(np.float32)
    m = _sr_if_model(static_batch=False)
    for rate, want in ((16000, (xv * kp)[:, 0]), (8000, (xv + km)[:, 0])):
        p, text = convert(tmp, m, "--freeze", "sr=%d" % rate, "--dyn", "batch=4")
        check("sr" not in text.split("consts")[0].split("inputs")[1], "a frozen input leaves the graph:\n" + text)
        check("where(" not in text, "a frozen condition keeps one branch:\n" + text)
        out = run_berth(tmp, args, {"x": xv}, "batch=3")
        if out:
            near(out["y"], want, "If on sr frozen to %d, nested If folded on a static dim" % rate)
    # Not frozen: the rate is data, both branches run and `where` picks.
    _, text = convert(tmp, _sr_if_model(static_batch=True))
    check("where(" in text, "a data condition keeps both branches:\n" + text)
    for rate, want in ((16000, (xv * kp)[:, 0]), (44100, (xv + km)[:, 0])):
        out = run_berth(tmp, args, {"x": xv, "sr": np.array(rate, np.int64)})
        if out:
            near(out["y"], want, "If on sr = %d at run time" % rate)
    p, _ = convert(tmp, m, "--freeze", "rate=1", expect_rc=2)
    check("not a graph input" in p.stderr, "--freeze of an initializer is refused: %s" % p.stderr)
    p, _ = convert(tmp, m, "--freeze", "sr=16k", expect_rc=2)
    check("expected int64 numbers" in p.stderr, "--freeze of a non-number is refused: %s" % p.stderr)

    # Loop: 4 steps by trip count; acc = acc * 2 + i, each step's acc stacked.
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    vi = helper.make_tensor_value_info
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=f),
         helper.make_node("Mul", ["acc_in", "two"], ["dbl"]),
         helper.make_node("Add", ["dbl", "fi"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["seen"]),
         helper.make_node("Add", ["i", "one"], ["nxt"]),
         helper.make_node("Less", ["nxt", "stop"], ["go"])],
        "body", [vi("i", i64, []), vi("c", TensorProto.BOOL, []), vi("acc_in", f, [2])],
        [vi("go", TensorProto.BOOL, []), vi("acc_out", f, [2]), vi("seen", f, [2])],
        initializer=[numpy_helper.from_array(np.array(2, np.float32), "two"),
                     numpy_helper.from_array(np.array(1, np.int64), "one")])
    av = np.array([0.5, -1.5], np.float32)

    def unrolled(steps):
        acc, seen = av.astype(np.float64), []
        for i in range(steps):
            acc = acc * 2 + i
            seen.append(acc)
        return acc, np.stack(seen)
    for trips, stop, steps in (("M", 99, 4), ("", 3, 3)):
        a = vi("a", f, [2])
        inits = [numpy_helper.from_array(np.array(4, np.int64), "M"), numpy_helper.from_array(np.array(True), "T"),
                 numpy_helper.from_array(np.array(stop, np.int64), "stop")]
        node = helper.make_node("Loop", [trips, "T", "a"], ["acc", "all"], body=body, name="L")
        convert(tmp, model([node], [a], [vi("acc", f, None), vi("all", f, None)], inits=inits, opset=13))
        out = run_berth(tmp, args, {"a": av})
        if out:
            acc, seen = unrolled(steps)
            near(out["acc"], acc, "Loop of %d steps: carried value" % steps)
            near(out["all"], seen, "Loop of %d steps: scan output" % steps)
    a, n = vi("a", f, [2]), vi("n", i64, [])
    inits = [numpy_helper.from_array(np.array(True), "T"), numpy_helper.from_array(np.array(99, np.int64), "stop")]
    node = helper.make_node("Loop", ["n", "T", "a"], ["acc", "all"], body=body, name="L")
    p, _ = convert(tmp, model([node], [a, n], [vi("acc", f, None), vi("all", f, None)], inits=inits, opset=13),
                   expect_rc=1)
    check("Loop node 'L'" in p.stderr and "trip count 'n' is computed from data" in p.stderr,
          "a data trip count is refused naming the node: %s" % p.stderr)


def case_slice_steps(tmp, args):
    """Slice with negative steps (ONNX clamps start into [0, n-1] and end
    into [-1, n-1] for them), alone and beside a positive step, against
    numpy's own slicing."""
    xv = np.arange(7 * 6, dtype=np.float32).reshape(7, 6)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [7, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    big = 2 ** 62
    for starts, ends, axes, steps, want in (
            ([-1], [-big], [0], [-1], xv[::-1]),
            ([5], [1], [0], [-2], xv[5:1:-2]),
            ([100, 0], [-100, 6], [0, 1], [-3, 2], xv[::-3, 0:6:2]),
            ([4, -2], [0, 0], [1, 0], [-1, -1], xv[5:0:-1, 4:0:-1])):
        inits = [numpy_helper.from_array(np.array(v, np.int64), k)
                 for v, k in ((starts, "s"), (ends, "e"), (axes, "a"), (steps, "t"))]
        convert(tmp, model([helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])], [x], [y], inits=inits))
        out = run_berth(tmp, args, {"x": xv})
        if out:
            check(np.array_equal(out["y"], want), "Slice starts %s ends %s axes %s steps %s: got %s, want %s"
                  % (starts, ends, axes, steps, out["y"].shape, want.shape))


def _scatter_elements_ref(data, idx, upd, axis, red):
    out = data.copy()
    for p in np.ndindex(*idx.shape):
        q = list(p)
        q[axis] = idx[p]
        q = tuple(q)
        out[q] = out[q] + upd[p] if red == "add" else out[q] * upd[p]
    return out


def case_scatter_reduce(tmp, args):
    """ScatterElements and ScatterND with add and mul, duplicate
    indices, indices covering a corner of the data, on float32 and int32,
    against a loop over the updates."""
    rs = np.random.RandomState(9)
    for dt, tp in ((np.float32, TensorProto.FLOAT), (np.int32, TensorProto.INT32)):
        data = rs.randint(-5, 6, (4, 5, 3)).astype(dt)
        idx = rs.randint(0, 5, (3, 4, 2)).astype(np.int64)  # duplicates along axis 1, a corner of the rest
        upd = rs.randint(-4, 5, (3, 4, 2)).astype(dt)
        x = helper.make_tensor_value_info("x", tp, list(data.shape))
        u = helper.make_tensor_value_info("u", tp, list(upd.shape))
        y = helper.make_tensor_value_info("y", tp, None)
        for red in ("add", "mul"):
            node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction=red)
            m = model([node], [x, u], [y], inits=[numpy_helper.from_array(idx, "i")], opset=16)
            if dt == np.int32:
                p, _ = convert(tmp, m, expect_rc=1)
                check("reduction '%s' on int32" % red in p.stderr, "int32 %s refused by name: %s" % (red, p.stderr))
                continue
            convert(tmp, m)
            out = run_berth(tmp, args, {"x": data, "u": upd})
            if out:
                check(np.array_equal(out["y"], _scatter_elements_ref(data, idx, upd, 1, red)),
                      "ScatterElements %s %s" % (np.dtype(dt).name, red))
    data = rs.randn(4, 3).astype(np.float32)
    nidx = np.array([[1], [3], [1], [1]], np.int64)
    upd = rs.randn(4, 3).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])
    u = helper.make_tensor_value_info("u", TensorProto.FLOAT, [4, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    for red in ("add", "mul"):
        node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction=red)
        convert(tmp, model([node], [x, u], [y], inits=[numpy_helper.from_array(nidx, "i")], opset=16))
        out = run_berth(tmp, args, {"x": data, "u": upd})
        if out:
            want = data.copy()
            for k in range(4):
                r = nidx[k, 0]
                want[r] = want[r] + upd[k] if red == "add" else want[r] * upd[k]
            near(out["y"], want, "ScatterND %s, row 1 three times" % red)


def _grid_sample_ref(img, grid, mode, pad, align):
    """PyTorch's grid_sample, one point at a time, in float64."""
    n, c, h, w = img.shape
    out = np.zeros((n, c) + grid.shape[1:3])

    def unnorm(g, size):
        return (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2

    def reflect(x, size):
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        span = hi - lo
        m = (x - lo) % (2 * span) if span > 0 else 0.0
        return min(max(lo + (2 * span - m if m > span else m), 0.0), size - 1.0)

    def pixel(b, ch, yy, xx):
        if pad == "zeros":
            return img[b, ch, int(yy), int(xx)] if 0 <= yy < h and 0 <= xx < w else 0.0
        if pad == "reflection":
            yy, xx = reflect(yy, h), reflect(xx, w)
        return img[b, ch, int(min(max(yy, 0), h - 1)), int(min(max(xx, 0), w - 1))]

    def cubic(t):
        a = -0.75
        f = lambda d: ((a * d - 5 * a) * d + 8 * a) * d - 4 * a  # noqa: E731
        g = lambda d: ((a + 2) * d - (a + 3)) * d * d + 1  # noqa: E731
        return [f(t + 1), g(t), g(1 - t), f(2 - t)]
    for b, i, j in np.ndindex(n, grid.shape[1], grid.shape[2]):
        x, y = unnorm(float(grid[b, i, j, 0]), w), unnorm(float(grid[b, i, j, 1]), h)
        if mode != "bicubic" and pad == "border":
            x, y = min(max(x, 0), w - 1), min(max(y, 0), h - 1)
        elif mode != "bicubic" and pad == "reflection":
            x, y = reflect(x, w), reflect(y, h)
        for ch in range(c):
            if mode == "nearest":
                out[b, ch, i, j] = pixel(b, ch, np.rint(y), np.rint(x))
                continue
            x0, y0 = np.floor(x), np.floor(y)
            if mode == "bilinear":
                wx, wy, offs = [1 - (x - x0), x - x0], [1 - (y - y0), y - y0], [0, 1]
            else:
                wx, wy, offs = cubic(x - x0), cubic(y - y0), [-1, 0, 1, 2]
            out[b, ch, i, j] = sum(wy[q] * wx[p] * pixel(b, ch, y0 + dy, x0 + dx)
                                   for q, dy in enumerate(offs) for p, dx in enumerate(offs))
    return out


def case_grid_sample(tmp, args):
    """GridSample in every mode, padding mode and align_corners setting,
    the grid reaching well outside the image, against a point-by-point
    reference of the operator's definition."""
    rs = np.random.RandomState(12)
    img = rs.randn(2, 2, 4, 5).astype(np.float32)
    grid = (rs.rand(2, 3, 6, 2) * 3.2 - 1.6).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(img.shape))
    g = helper.make_tensor_value_info("g", TensorProto.FLOAT, list(grid.shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    for mode in ("nearest", "bilinear", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            for align in (0, 1):
                node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=pad,
                                        align_corners=align)
                convert(tmp, model([node], [x, g], [y], opset=16))
                out = run_berth(tmp, args, {"x": img, "g": grid})
                if out:
                    near(out["y"], _grid_sample_ref(img, grid, mode, pad, align),
                         "GridSample %s %s align_corners=%d" % (mode, pad, align))


def case_resize_crop(tmp, args):
    """Resize tf_crop_and_resize, nearest and linear, with a region of
    interest reaching outside the image: positions outside get
    extrapolation_value; against a per-pixel reference."""
    rs = np.random.RandomState(13)
    img = rs.randn(1, 2, 5, 6).astype(np.float32)
    roi = np.array([0, 0, -0.2, 0.3, 1, 1, 1.3, 0.9], np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(img.shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    sizes = [1, 2, 7, 4]
    for mode in ("nearest", "linear"):
        inits = [numpy_helper.from_array(roi, "roi"), numpy_helper.from_array(np.array(sizes, np.int64), "sizes")]
        node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode=mode, extrapolation_value=7.0,
                                coordinate_transformation_mode="tf_crop_and_resize", nearest_mode="floor")
        convert(tmp, model([node], [x], [y], inits=inits))
        out = run_berth(tmp, args, {"x": img})
        if not out:
            continue
        want = np.zeros(sizes)

        def coord(j, m, n, lo, hi):
            return lo * (n - 1) + j * (hi - lo) * (n - 1) / (m - 1)
        for i, j in np.ndindex(7, 4):
            yy, xx = coord(i, 7, 5, roi[2], roi[6]), coord(j, 4, 6, roi[3], roi[7])
            if not (0 <= yy <= 4 and 0 <= xx <= 5):
                want[0, :, i, j] = 7.0
            elif mode == "nearest":
                want[0, :, i, j] = img[0, :, int(np.floor(yy)), int(np.floor(xx))]
            else:
                y0, x0 = int(np.floor(yy)), int(np.floor(xx))
                y1, x1 = min(y0 + 1, 4), min(x0 + 1, 5)
                ty, tx = yy - y0, xx - x0
                want[0, :, i, j] = ((1 - ty) * ((1 - tx) * img[0, :, y0, x0] + tx * img[0, :, y0, x1])
                                    + ty * ((1 - tx) * img[0, :, y1, x0] + tx * img[0, :, y1, x1]))
        near(out["y"], want, "Resize tf_crop_and_resize %s, ROI past the edges" % mode)


def case_pool_indices(tmp, args):
    """MaxPool's Indices (flat over N x C x H x W, in both storage
    orders) with strides, dilation and pads on two images of two
    channels, and MaxUnpool putting the maxima back; against numpy."""
    rs = np.random.RandomState(14)
    xv = rs.permutation(2 * 2 * 7 * 6).astype(np.float32).reshape(2, 2, 7, 6)  # distinct values
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xv.shape))
    f = lambda n, t=TensorProto.FLOAT: helper.make_tensor_value_info(n, t, None)  # noqa: E731
    k, st, dl, pads = [3, 2], [2, 2], [1, 2], [1, 0, 1, 1]
    for order in (0, 1):
        nodes = [helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=k, strides=st, dilations=dl, pads=pads,
                                  storage_order=order)]
        outs = [f("y"), f("i", TensorProto.INT64)]
        if order == 0:
            nodes.append(helper.make_node("MaxUnpool", ["y", "i"], ["z"], kernel_shape=[2, 2], strides=[2, 2]))
            outs.append(f("z"))
        convert(tmp, model(nodes, [x], outs, opset=12))
        out = run_berth(tmp, args, {"x": xv})
        if not out:
            continue
        xp = np.pad(xv, ((0, 0), (0, 0), (1, 1), (0, 1)), constant_values=-np.inf)
        ho, wo = (7 + 2 - 2 * 1 - 1) // 2 + 1, (6 + 1 - 2 * 1 - 1) // 2 + 1
        want_y, want_i = np.zeros((2, 2, ho, wo)), np.zeros((2, 2, ho, wo), np.int64)
        for b, ch, r, q in np.ndindex(2, 2, ho, wo):
            win = [(r * 2 + a * 1 - 1, q * 2 + e * 2) for a in range(3) for e in range(2)]
            vals = [xp[b, ch, hh + 1, ww] for hh, ww in win]
            hh, ww = win[int(np.argmax(vals))]
            want_y[b, ch, r, q] = max(vals)
            want_i[b, ch, r, q] = (b * 2 + ch) * 42 + (ww * 7 + hh if order else hh * 6 + ww)
        near(out["y"], want_y, "MaxPool values, storage_order=%d" % order)
        check(np.array_equal(out["i"], want_i), "MaxPool Indices, storage_order=%d: %s" % (order, out["i"].ravel()))
        if order == 0:
            zs = [2, 2, (ho - 1) * 2 + 2, (wo - 1) * 2 + 2]
            z = np.zeros(int(np.prod(zs)))
            z[want_i.ravel()] = want_y.ravel()
            near(out["z"], z.reshape(zs), "MaxUnpool of the maxima")


def case_tfidf(tmp, args):
    """TfIdfVectorizer in IDF and TFIDF modes with weights (the node
    tests have TF only), unigrams to trigrams with skips, a column
    shared by two n-grams, against counting in Python."""
    xv = np.array([[1, 2, 1, 2, 3, 1, 2, 3, 4, 1], [4, 4, 4, 1, 3, 2, 9, 1, 2, 2]], np.int64)
    pool = [1, 4, 9,  1, 2,  2, 3,  1, 2, 3]  # unigrams, bigrams, a trigram
    counts_at, cols = [0, 3, 7], [0, 1, 2, 3, 4, 1]  # the trigram shares column 1 with the unigram 4
    weights = [0.5, 2.0, 1.5, 3.0, 0.25]
    grams = [(1,), (4,), (9,), (1, 2), (2, 3), (1, 2, 3)]
    x = helper.make_tensor_value_info("x", TensorProto.INT64, list(xv.shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    for mode in ("IDF", "TFIDF"):
        node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode=mode, min_gram_length=1, max_gram_length=3,
                                max_skip_count=2, ngram_counts=counts_at, ngram_indexes=cols, pool_int64s=pool,
                                weights=weights)
        convert(tmp, model([node], [x], [y], opset=9))
        out = run_berth(tmp, args, {"x": xv})
        if not out:
            continue
        want = np.zeros((2, 5))
        for b in range(2):
            for gi, g in enumerate(grams):
                skips = range(3) if len(g) > 1 else [0]
                c = sum(1 for sk in skips for p in range(10 - (len(g) - 1) * (sk + 1))
                        if tuple(xv[b, p + k * (sk + 1)] for k in range(len(g))) == g)
                want[b, cols[gi]] += c
        want = (want > 0) * np.array(weights) if mode == "IDF" else want * np.array(weights)
        near(out["y"], want, "TfIdfVectorizer %s" % mode)


def _roi_align_ref(img, rois, bidx, ph, pw, g, scale, mode, half):
    n, c, h, w = img.shape
    out = np.zeros((len(rois), c, ph, pw))
    off = 0.5 if half else 0.0
    for r, (x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        sw, sh = x1 * scale - off, y1 * scale - off
        rw, rh = x2 * scale - off - sw, y2 * scale - off - sh
        if not half:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        for p, q in np.ndindex(ph, pw):
            vals = []
            for iy, ix in np.ndindex(g, g):
                y = sh + p * rh / ph + (iy + 0.5) * rh / ph / g
                x = sw + q * rw / pw + (ix + 0.5) * rw / pw / g
                if y < -1 or y > h or x < -1 or x > w:
                    vals.append(np.zeros((4, c)))
                    continue
                y, x = max(y, 0.0), max(x, 0.0)
                yl, xl = int(y), int(x)
                yh, xh = min(yl + 1, h - 1), min(xl + 1, w - 1)
                if yl >= h - 1:
                    yl = yh = h - 1
                    y = float(yl)
                if xl >= w - 1:
                    xl = xh = w - 1
                    x = float(xl)
                ly, lx = y - yl, x - xl
                im = img[bidx[r]].astype(np.float64)
                vals.append(np.stack([(1 - ly) * (1 - lx) * im[:, yl, xl], (1 - ly) * lx * im[:, yl, xh],
                                      ly * (1 - lx) * im[:, yh, xl], ly * lx * im[:, yh, xh]]))
            vals = np.stack(vals)  # [samples, 4, c]
            out[r, :, p, q] = vals.sum((0, 1)) / (g * g) if mode == "avg" else vals.max((0, 1))
    return out


def case_roi_align(tmp, args):
    """RoiAlign, avg and max, both coordinate modes, regions reaching past
    the image and smaller than a pixel, two images; against a reference
    of the operator's definition."""
    rs = np.random.RandomState(15)
    img = rs.randn(2, 3, 6, 7).astype(np.float32)
    rois = np.array([[0.5, 1, 5, 4], [-2, -1, 9, 8], [3.1, 2.2, 3.4, 2.5], [4, 3, 7.5, 6.5]], np.float32)
    bidx = np.array([0, 1, 1, 0], np.int64)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(img.shape))
    rv = helper.make_tensor_value_info("r", TensorProto.FLOAT, list(rois.shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    for mode in ("avg", "max"):
        for ctm in ("half_pixel", "output_half_pixel"):
            node = helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], mode=mode, output_height=3, output_width=2,
                                    sampling_ratio=2, spatial_scale=0.9, coordinate_transformation_mode=ctm)
            convert(tmp, model([node], [x, rv], [y], inits=[numpy_helper.from_array(bidx, "b")], opset=16))
            out = run_berth(tmp, args, {"x": img, "r": rois})
            if out:
                near(out["y"], _roi_align_ref(img, rois, bidx, 3, 2, 2, 0.9, mode, ctm == "half_pixel"),
                     "RoiAlign %s %s" % (mode, ctm))


def case_compress(tmp, args):
    """Compress with a constant condition (along an axis, and flattened,
    the condition shorter than the data); with a computed one the
    conversion refuses it, naming the data-dependent shape."""
    xv = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    cond = numpy_helper.from_array(np.array([1, 0, 1, 1], bool), "c")
    for kw, want in (({"axis": 1}, xv[:, [0, 2, 3]]), ({}, xv.reshape(-1)[[0, 2, 3]])):
        convert(tmp, model([helper.make_node("Compress", ["x", "c"], ["y"], **kw)], [x], [y], inits=[cond], opset=11))
        out = run_berth(tmp, args, {"x": xv})
        if out:
            check(np.array_equal(out["y"], want), "Compress %s: %s" % (kw, out["y"]))
    c_in = helper.make_tensor_value_info("c", TensorProto.BOOL, [4])
    p, _ = convert(tmp, model([helper.make_node("Compress", ["x", "c"], ["y"], axis=1)], [x, c_in], [y], opset=11),
                   expect_rc=1)
    check("would depend on its values" in p.stderr, "computed condition refused by its reason: " + p.stderr)


def case_einsum(tmp, args):
    """Einsum in float32 (the node tests' cases are float64): the node
    tests' equations, attention's, an ellipsis, an implicit output, a
    diagonal, a sum over a letter one operand has alone, three operands;
    against numpy.einsum."""
    rs = np.random.RandomState(16)
    cases = [("bij,bjk->bik", [(3, 2, 5), (3, 5, 4)]), ("i,i", [(7,), (7,)]), ("ij->", [(3, 4)]),
             ("ij->ji", [(3, 4)]), ("bii->bi", [(2, 4, 4)]), ("bhid,bhjd->bhij", [(2, 3, 4, 5), (2, 3, 6, 5)]),
             ("...ij,...jk->...ik", [(2, 3, 4, 5), (3, 5, 2)]), ("ij,jk", [(3, 4), (4, 2)]),
             ("ijk,jl->il", [(3, 4, 2), (4, 5)]), ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)])]
    for eq, shapes in cases:
        vals = [rs.randn(*sh).astype(np.float32) for sh in shapes]
        names = ["x%d" % i for i in range(len(vals))]
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape)) for n, v in zip(names, vals)]
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        convert(tmp, model([helper.make_node("Einsum", names, ["y"], equation=eq)], ins, [y], opset=12))
        out = run_berth(tmp, args, dict(zip(names, vals)))
        if out:
            near(out["y"], np.einsum(eq, *[v.astype(np.float64) for v in vals]), "Einsum %s" % eq)


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=sorted(CASES))
    p.add_argument("--berth", required=True)
    p.add_argument("--cpu", required=True, help="path of libberth-cpu.so")
    args = p.parse_args()
    args.berth, args.cpu = os.path.abspath(args.berth), os.path.abspath(args.cpu)
    with tempfile.TemporaryDirectory(prefix="onnx2webnn_test_") as tmp:
        CASES[args.case](tmp, args)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
