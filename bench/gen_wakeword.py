#!/usr/bin/python3
"""gen_wakeword.py MODELS_DIR OUT.onnx [--samples N]

The bench's pipeline row: openWakeWord's three models chained into one
ONNX graph, as a wake-word detector runs them on two seconds of audio:
the mel spectrogram of N samples (scaled as openWakeWord does, x / 10 + 2),
sixteen windows of 76 frames eight frames apart gathered into one batch for
the speech embedding model, and its sixteen 96-wide embeddings read by
the hey_jarvis head. MODELS_DIR is the npm package's models folder (the
real-model zoo's openwakeword package). One graph, so berth and
onnxruntime each run the whole chain in one call."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, compose, helper, numpy_helper

WINDOWS, FRAMES, STEP = 16, 76, 8


def part(path, prefix):
    """The model with its names prefixed; the head keeps its own (prefix
    None): the If in it reads an outer name that add_prefix leaves."""
    m = onnx.load(path)
    return compose.add_prefix(m, prefix) if prefix else m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models")
    ap.add_argument("out")
    ap.add_argument("--samples", type=int, default=32000)
    a = ap.parse_args()
    frames = a.samples // 160 - 3  # the front-end's frame count
    need = (WINDOWS - 1) * STEP + FRAMES
    if frames < need:
        raise SystemExit("gen_wakeword.py: --samples %d gives %d frames; the windows need %d" % (a.samples, frames, need))
    mel = part(os.path.join(a.models, "melspectrogram.onnx"), "mel_")
    emb = part(os.path.join(a.models, "embedding_model.onnx"), "emb_")
    head = part(os.path.join(a.models, "hey_jarvis_v0.1.onnx"), None)
    start = frames - need  # the latest two seconds
    idx = np.array([[start + w * STEP + f for f in range(FRAMES)] for w in range(WINDOWS)], dtype=np.int64)
    consts = [numpy_helper.from_array(np.array(10, np.float32), "glue_ten"),
              numpy_helper.from_array(np.array(2, np.float32), "glue_two"),
              numpy_helper.from_array(np.array([frames, 32], np.int64), "glue_frames"),
              numpy_helper.from_array(idx, "glue_windows"),
              numpy_helper.from_array(np.array([WINDOWS, FRAMES, 32, 1], np.int64), "glue_batch"),
              numpy_helper.from_array(np.array([1, WINDOWS, 96], np.int64), "glue_seq")]
    glue_in = [helper.make_node("Div", [mel.graph.output[0].name, "glue_ten"], ["glue_div"]),
               helper.make_node("Add", ["glue_div", "glue_two"], ["glue_scaled"]),
               helper.make_node("Reshape", ["glue_scaled", "glue_frames"], ["glue_spec"]),
               helper.make_node("Gather", ["glue_spec", "glue_windows"], ["glue_win"], axis=0),
               helper.make_node("Reshape", ["glue_win", "glue_batch"], [emb.graph.input[0].name])]
    glue_out = [helper.make_node("Reshape", [emb.graph.output[0].name, "glue_seq"], [head.graph.input[0].name])]
    x = helper.make_tensor_value_info(mel.graph.input[0].name, TensorProto.FLOAT, [1, a.samples])
    y = helper.make_tensor_value_info("score", TensorProto.FLOAT, [1, 1])
    nodes = list(mel.graph.node) + glue_in + list(emb.graph.node) + glue_out + list(head.graph.node)
    nodes.append(helper.make_node("Identity", [head.graph.output[0].name], ["score"]))
    inits = list(mel.graph.initializer) + consts + list(emb.graph.initializer) + list(head.graph.initializer)
    graph = helper.make_graph(nodes, "wakeword", [x], [y], inits)
    opsets = {}
    for m in (mel, emb, head):
        for o in m.opset_import:
            opsets[o.domain] = max(opsets.get(o.domain, 0), o.version)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in sorted(opsets.items())])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, a.out)


if __name__ == "__main__":
    main()
