#!/usr/bin/python3
"""bench.py [--build DIR] [--harness PATH] [--out DIR] [--runs N] [--warmup N]
            [--threads 1,2] [--only NAME,...] [--smoke]

berth against onnxruntime-node, start to end: installs the newest
onnxruntime-node of the 1.x line from 1.30 on into the build tree,
generates the BERT-style encoders (bench/gen_bert.py, fixed seed),
converts them with tools/onnx2webnn, fetches PaddleOCR's PP-OCRv4 models
(scripts/ocr-models: the recognizer; the detector and the angle
classifier are converted here), then for each model,
bucket and thread count times berth and onnxruntime in alternating pairs
(bench/berth-bench pairs with bench/ort_peer.js), measures loading, plan
cost, hot-path allocations, the OpenBLAS sgemm ceiling and where berth's
time goes per op, times the small models (bench/small.py: the real-model
zoo's audio front-end, VAD, classifier heads, embedding CNN and a chained
wake-word pipeline, in rounds of `berth run --repeat N`), adds `berth serve` under load (bench/serve_load.py) and
the plan memory of cpu against vulkan (bench/plan_memory.py), and
writes DIR/bench/report.md and DIR/bench/ratios.png.
Threads: 1 and 2, and every core where there are more (--threads).

--smoke: a tiny model, two runs, bench/peer_stub.py as the peer (no
network), then the report is read back and checked for form only."""
import argparse
import json
import os
import platform
import re
import shutil
import struct
import subprocess
import sys
import time

import numpy as np

import small

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
T0 = time.monotonic()


def say(msg):
    print("bench [%4.0fs]: %s" % (time.monotonic() - T0, msg), file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


def run(cmd, env=None, capture=True):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE if capture else None, text=True)
    if p.returncode != 0:
        raise BenchError("%s exited with %d (its messages are above)" % (" ".join(cmd[:3]), p.returncode))
    return p.stdout


def timed(cmd, env=None):
    """Runs cmd; returns (stdout, wall seconds from start to exit)."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise BenchError("%s exited with %d" % (" ".join(cmd[:3]), p.returncode))
    return p.stdout, wall


def fresh(out, *ins):
    return os.path.exists(out) and all(os.path.getmtime(out) >= os.path.getmtime(i) for i in ins)


# ---- the models ----------------------------------------------------------

def bert(name, layers, hidden, heads, ffn, vocab=30522, seq=128, max_pos=512):
    return {"name": name, "kind": "bert", "unit": "seq/s",
            "gen": ["--layers", str(layers), "--hidden", str(hidden), "--heads", str(heads),
                    "--ffn", str(ffn), "--vocab", str(vocab), "--max-pos", str(max_pos)],
            "about": "%d layers, hidden %d, %d heads, FFN %d, vocab %d" % (layers, hidden, heads, ffn, vocab),
            "dyn": {"batch": 8, "seq": seq},
            "buckets": ["batch=1 seq=%d" % seq, "batch=8 seq=%d" % seq]}


# The encoders' int4 conversion: asymmetric blocks with least-error
# scales, and the weights the 12-layer encoder's cosine is most sensitive
# to per byte (attention values and outputs, position embeddings) kept
# int8 (README, "Quantized weights": cosine 0.991 at 17.7% of float32's
# bytes, where plain blocks of 32 give 0.978)
BERT_INT4 = ["--asymmetric", "--scale", "mse", "--int8", "*_v_w_*", "--int8", "*_o_w_*",
             "--int8", "position_embeddings*"]


def quantized(m, q, block=32, extra=()):
    """Model m with its weights quantized by onnx2webnn --quantize q; the
    peer still runs the float ONNX model, so the pairs compare the
    quantized model's output with float32's. int8 weights are computed
    as int8 x int8 products (the cpu backend's quantized_activations =
    int8, activations quantized per row block as they come); int4 ones
    are widened to floats."""
    act = q == "int8"
    return dict(m, name="%s-%s" % (m["name"], q), base=m["name"], quantize=q, block=block, quant_extra=list(extra),
                cpu_extra="quantized_activations = int8\n" if act else "",
                about="%s; weights %s in blocks of %d (onnx2webnn --quantize)%s"
                % (m["about"], q, block, ", int8 x int8 products" if act else "") +
                (" (%s)" % " ".join(extra) if extra else ""))


def ocr_asset(name, asset, about, dims, dyn, buckets):
    """A model of the OCR package scripts/ocr-models unpacks, its input
    dims renamed (the export calls them p2o.DynamicDimension.N)."""
    return {"name": name, "kind": "asset", "asset": asset, "about": about, "dims": dims, "dyn": dyn,
            "buckets": buckets}


BERT_6, BERT_12 = bert("bert-6x384", 6, 384, 12, 1536), bert("bert-12x768", 12, 768, 12, 3072)
REC = {"name": "ppocr-v4-rec", "kind": "ocr", "unit": "lines/s",
       "about": "PaddleOCR PP-OCRv4 recognizer (scripts/ocr-models)",
       "buckets": ["batch=1 width=320", "batch=8 width=320"]}
FULL = [BERT_6, BERT_12,
        REC,
        ocr_asset("ppocr-v4-det", "ch_PP-OCRv4_det_infer.onnx", "PaddleOCR PP-OCRv4 detector (DBNet)",
                  ["batch", None, "height", "width"], {"batch": 8, "height": 640, "width": 640},
                  ["batch=1 height=640 width=640", "batch=8 height=640 width=640"]),
        ocr_asset("ppocr-cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "PaddleOCR text angle classifier",
                  ["batch", None, "height", "width"], {"batch": 8, "height": 48, "width": 192},
                  ["batch=1 height=48 width=192", "batch=8 height=48 width=192"]),
        quantized(BERT_6, "int8"), quantized(BERT_6, "int4", extra=BERT_INT4), quantized(BERT_12, "int8"),
        quantized(BERT_12, "int4", extra=BERT_INT4), quantized(REC, "int8", 24), quantized(REC, "int4", 24)]  # its matmuls reduce over 120 or 240
TINY = bert("tiny", 2, 32, 2, 64, vocab=1000, seq=32, max_pos=64)
SMOKE = [TINY, quantized(TINY, "int8")]


def prepare_bert(m, models_dir):
    base = m.get("base", m["name"])
    onnx_path = os.path.join(models_dir, base + ".onnx")
    gen = os.path.join(BENCH, "gen_bert.py")
    if fresh(onnx_path, gen):
        say("%s: generated model up to date" % base)
    else:
        say("%s: generating (%s)" % (base, m["about"]))
        run(["/usr/bin/python3", gen, onnx_path, "--name", base.replace("-", "_")] + m["gen"])
    convert(m, onnx_path, models_dir)


def convert(m, onnx_path, models_dir):
    """MODELS/NAME.webnn and .safetensors from onnx_path with the model's
    dyn maxima, unless they are newer than it and the converter and were
    made with the same arguments (NAME.args)."""
    webnn = os.path.join(models_dir, m["name"] + ".webnn")
    weights = os.path.join(models_dir, m["name"] + ".safetensors")
    conv = os.path.join(ROOT, "tools", "onnx2webnn")
    lib_dir = os.path.join(ROOT, "tools", "onnx2webnn_lib")
    lib = [os.path.join(lib_dir, f) for f in os.listdir(lib_dir) if f.endswith(".py")]
    dyn = []
    for k, v in m["dyn"].items():
        dyn += ["--dyn", "%s=%d" % (k, v)]
    quant = ["--quantize", m["quantize"], "--block", str(m["block"])] + m["quant_extra"] if m.get("quantize") else []
    args_path = os.path.join(models_dir, m["name"] + ".args")
    same_args = os.path.exists(args_path) and open(args_path).read() == " ".join(dyn + quant)
    if same_args and fresh(webnn, onnx_path, conv, *lib) and fresh(weights, onnx_path):
        say("%s: converted model up to date" % m["name"])
    else:
        say("%s: converting with tools/onnx2webnn" % m["name"])
        run([conv, onnx_path, webnn + ".tmp", "--weights", weights,
             "--names", os.path.splitext(webnn)[0] + ".names.json"] + dyn + quant)
        os.replace(webnn + ".tmp", webnn)
        with open(args_path, "w") as f:
            f.write(" ".join(dyn + quant))
    m.update(onnx=onnx_path, webnn=webnn, weights=weights)


def prepare_ocr(m, build, models_dir):
    cache = os.path.join(build, "cache")
    run([os.path.join(ROOT, "scripts", "ocr-models"), "--cache", cache], capture=False)
    ocr = os.path.join(os.path.abspath(cache), "ocr")
    m.update(onnx=os.path.join(ocr, "rec.onnx"), webnn=os.path.join(ocr, "rec.webnn"),
             weights=os.path.join(ocr, "rec.safetensors"))
    if m.get("quantize"):  # its own conversion; the ONNX model stays the peer's
        m["dyn"] = {"batch": 8, "width": 1280}  # as scripts/ocr-models converts it
        convert(m, m["onnx"], models_dir)


def prepare_asset(m, build, models_dir):
    cache = os.path.join(build, "cache")
    run([os.path.join(ROOT, "scripts", "ocr-models"), "--cache", cache], capture=False)
    src = os.path.join(os.path.abspath(cache), "package", "assets", m["asset"])
    onnx_path = os.path.join(models_dir, m["name"] + ".onnx")
    if not fresh(onnx_path, src, os.path.abspath(__file__)):
        import onnx
        model = onnx.load(src)
        dims = model.graph.input[0].type.tensor_type.shape.dim
        for d, name in zip(dims, m["dims"]):
            if name:
                d.dim_param = name
        onnx.save(model, onnx_path)
    convert(m, onnx_path, models_dir)


def input_spec(m, out_dir):
    """The ONNX inputs (name, dtype, dims with symbolic names) for the peer."""
    path = os.path.join(out_dir, m["name"] + ".spec.json")
    if fresh(path, m["onnx"]):
        return path
    with open(path, "w") as f:
        json.dump({"inputs": small.onnx_inputs(m["onnx"])}, f)
    return path


def write_config(m, threads, configs):
    path = os.path.join(configs, "%s-t%d.ini" % (m["name"], threads))
    with open(path, "w") as f:
        f.write("# written by bench/bench.py\n[model]\ngraph = %s\nweights = %s\nstage = bench\n\n"
                "[backend]\nuse = cpu\n\n[backend.cpu]\nthreads = %d\n%s\n[buckets]\nbench = %s\n"
                % (m["webnn"], m["weights"], threads, m.get("cpu_extra", ""), "|".join(m["buckets"])))
    return path


def largest_tensor(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    return max(e["data_offsets"][1] - e["data_offsets"][0] for k, e in header.items() if k != "__metadata__")


# ---- setup ---------------------------------------------------------------

# The peer: the newest onnxruntime-node of the 1.x line from 1.30 on (its
# prebuilt binary for linux-x64 loads on Debian 12's Node.js 20). An older
# copy left in the build tree is replaced.
ORT_VERSION = "^1.30.0"


def setup_ort(node_dir):
    env = dict(os.environ, NODE_PATH=os.path.join(node_dir, "node_modules"))
    probe = ["node", "-e", "const v = require('onnxruntime-node/package.json').version.split('.').map(Number);"
             "require('onnxruntime-node'); process.exit(v[0] > 1 || (v[0] == 1 && v[1] >= 30) ? 0 : 1)"]
    if subprocess.run(probe, env=env, stderr=subprocess.DEVNULL).returncode == 0:
        say("onnxruntime-node already in %s" % node_dir)
        return env
    if not shutil.which("npm"):
        raise BenchError("npm not found: install Debian's nodejs and npm (scripts/bootstrap does)")
    say("installing onnxruntime-node@%s into %s" % (ORT_VERSION, node_dir))
    os.makedirs(node_dir, exist_ok=True)
    npm_env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip", ONNXRUNTIME_NODE_INSTALL_CUDA="skip")
    log = os.path.join(node_dir, "npm.log")
    with open(log, "w") as f:
        rc = subprocess.run(["npm", "install", "--prefix", node_dir, "--no-audit", "--no-fund", "--no-save",
                             "onnxruntime-node@" + ORT_VERSION], env=npm_env, stdout=f, stderr=f).returncode
    if rc != 0 or subprocess.run(probe, env=env, stderr=subprocess.DEVNULL).returncode != 0:
        raise BenchError("cannot install onnxruntime-node@%s from the npm registry (is it reachable?); "
                         "log: %s" % (ORT_VERSION, log))
    return env


def setup_gnuplot():
    if shutil.which("gnuplot"):
        return True
    if os.geteuid() != 0:
        say("gnuplot missing and not root: no chart (apt-get install gnuplot-nox)")
        return False
    say("installing gnuplot-nox for the chart")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "gnuplot-nox"],
                   env=env, stdout=subprocess.DEVNULL)
    return shutil.which("gnuplot") is not None


# ---- measuring -----------------------------------------------------------

def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    osname = platform.system()
    if os.path.exists("/etc/os-release"):
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip().strip('"')

    def out(cmd):
        try:
            return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  cwd=ROOT).stdout.strip()
        except OSError:
            return ""
    commit = out(["git", "rev-parse", "--short", "HEAD"])
    if out(["git", "status", "--porcelain", "--untracked-files=no"]):
        commit += " (with uncommitted changes)"
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gib": mem_kb / 1048576, "os": osname,
            "kernel": platform.release(), "openblas": out(["pkg-config", "--modversion", "openblas"]),
            "node": out(["node", "--version"]), "commit": commit,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def pairs(harness, config, peer, out_json, dump, runs, warmup, env):
    cmd = [harness, "pairs", config, "--out", out_json, "--runs", str(runs), "--warmup", str(warmup)]
    if dump:
        cmd += ["--dump", dump]
    run(cmd + ["--"] + peer, env=env, capture=False)
    with open(out_json) as f:
        return json.load(f)


def sgemm(harness, config, shapes_dir, threads_list):
    """{bucket index: {threads: seconds at OpenBLAS's rate}}."""
    os.makedirs(shapes_dir, exist_ok=True)
    listed = run([harness, "shapes", config, shapes_dir])
    result = {}
    for line in listed.splitlines():
        b = int(line.split()[0])
        path = os.path.join(shapes_dir, "shapes-%d.txt" % b)
        result[b] = {}
        for t in threads_list:
            j = json.loads(run([harness, "sgemm", path, "--threads", str(t)]))
            result[b][t] = {"s": j["total_ns"] / 1e9, "gflop": j["total_gflop"]}
    return result


def load(m, harness, config, peer_load, env):
    """Both runtimes in fresh processes; each reports its own peak RSS
    (VmHWM) once its first output is out, and exits."""
    b_out, b_wall = timed([harness, "load", config], env=env)
    o_out, o_wall = timed(peer_load, env=env)
    inside, peer = json.loads(b_out), json.loads(o_out)
    return {"berth_wall": b_wall, "berth_rss_kb": inside["peak_rss_kb"], "berth": inside,
            "ort_wall": o_wall, "ort_rss_kb": peer["peak_rss_kb"], "ort": peer,
            "safetensors_bytes": os.path.getsize(m["weights"]), "onnx_bytes": os.path.getsize(m["onnx"]),
            "largest_bytes": largest_tensor(m["weights"])}


# ---- whole pages -----------------------------------------------------------

PAGES = ["receipt.png", "document.png"]


def pages(build, out, rounds, reads, env):
    """Whole-page OCR, berth-ocr against @gutenye/ocr-node (PP-OCR on
    onnxruntime-node), alternating: in each round each pipeline, in a
    fresh process with its models loaded, reads the page 1 + reads times;
    the first read (plans built, caches cold) is left out and the round's
    median of the others is its time. Ratios are per round."""
    peer_dir = os.path.join(out, "node-pages")
    run(["/bin/sh", os.path.join(ROOT, "tests", "ocr", "peer_pages_setup.sh"), peer_dir], capture=False)
    script = os.path.join(peer_dir, "peer_pages.mjs")  # an ES module resolves packages from where it lies
    shutil.copyfile(os.path.join(ROOT, "tests", "ocr", "peer_pages.mjs"), script)
    ocr = os.path.join(build, "apps", "ocr", "berth-ocr")
    config = os.path.join(out, "configs", "ocr-pages.ini")
    with open(os.path.join(ROOT, "config", "ocr-cpu.ini")) as f:
        text = f.read().replace("../build/cache", os.path.join(build, "cache"))
    with open(config, "w") as f:
        f.write(text)
    keys = os.path.join(build, "cache", "package", "assets", "ppocr_keys_v1.txt")
    rows = []
    for name in PAGES:
        path = os.path.join(ROOT, "samples", "pages", name)
        b_ms, p_ms, stages = [], [], []
        for r in range(rounds):
            say("pages: %s, round %d of %d" % (name, r + 1, rounds))
            mine = json.loads(run([ocr, "--json", "--repeat", str(reads), config, keys, path], env=env))[0]
            theirs = json.loads(run(["node", script, "--repeat", str(reads), path], env=env).splitlines()[-1])
            b_ms.append(float(np.median(mine["runs_ms"][1:] + [mine["times_ms"]["total"]])))
            p_ms.append(float(np.median(theirs["runs_ms"][1:])))
            stages.append(mine["times_ms"])
        ratio = np.array(b_ms) / np.array(p_ms)
        rows.append({"page": name, "lines": len(mine["lines"]), "peer_lines": len(theirs["lines"]),
                     "b_med": np.median(b_ms), "p_med": np.median(p_ms), "r_med": np.median(ratio),
                     "r_p10": np.percentile(ratio, 10), "r_p90": np.percentile(ratio, 90),
                     "stages": {k: float(np.median([s[k] for s in stages])) for k in stages[0]}})
    return rows


def write_pages(path, rows, rounds, reads, threads):
    L = ["\n## Whole pages\n",
         "`berth-ocr` (detector, angle classifier, recognizer; `config/ocr-cpu.ini`, %d cpu threads) against "
         "`@gutenye/ocr-node` 1.4.8 (PP-OCR on onnxruntime-node, detector and recognizer, no angle classifier) on "
         "`samples/pages/`: %d rounds, each pipeline in a fresh process reading the page %d times after a first "
         "read left out; ratio: berth/peer per round, median (p10-p90). Times include decoding the image." %
         (threads, rounds, reads),
         "",
         "| page | lines (berth / peer) | berth ms | peer ms | berth/peer | detect | boxes | classify | recognize |",
         "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        st = r["stages"]
        L.append("| %s | %d / %d | %.1f | %.1f | %.3f (%.2f-%.2f) | %.1f | %.1f | %.1f | %.1f |" % (
            r["page"], r["lines"], r["peer_lines"], r["b_med"], r["p_med"], r["r_med"], r["r_p10"], r["r_p90"],
            st["detect"], st["boxes"], st["classify"], st["recognize"]))
    L.append("\nThe peer joins the boxes of one row into one line (receipt items with their prices, the "
             "document's two columns), so it counts fewer lines; `tests/ocr/check_peer_pages.py` compares "
             "the two line by line.\n")
    with open(path, "a") as f:
        f.write("\n".join(L) + "\n")


# ---- the report ----------------------------------------------------------

def ms(ns):
    return ns / 1e6


def mib(b):
    return b / 1048576.0


def stats(b):
    be, pe = np.array(b["berth_ns"], float), np.array(b["peer_ns"], float)
    ratio = be / pe
    return {"b_med": np.median(be), "b_p90": np.percentile(be, 90), "o_med": np.median(pe),
            "o_p90": np.percentile(pe, 90), "r_med": np.median(ratio), "r_p10": np.percentile(ratio, 10),
            "r_p90": np.percentile(ratio, 90)}


def batch_of(bucket):
    for part in bucket.split():
        k, _, v = part.partition("=")
        if k == "batch":
            return int(v)
    return 1


def write_report(path, info, results, loads, peer_name, runs, warmup, smoke, peaks=None):
    L = []
    L.append("# berth against onnxruntime-node\n")
    L.append("Written by `make bench` (bench/bench.py) on %s." % info["date"])
    L.append("Machine: %s, %d cores, %.1f GiB, %s (Linux %s); OpenBLAS %s; Node.js %s; peer: %s; "
             "berth %s.\n" % (info["cpu"], info["cores"], info["mem_gib"], info["os"], info["kernel"],
                              info["openblas"], info["node"], peer_name, info["commit"]))
    if smoke:
        L.append("**Smoke run**: a tiny model and a stand-in peer; the figures check the plumbing only.\n")
    L.append("The cores are shared with other work, so absolute times are noisy. The measure is the "
             "**ratio per pair**: each timed berth run is paired with an onnxruntime run right before "
             "or after it (the order alternates), so a slow moment hits both; the ratio column is "
             "the median of berth/onnxruntime over the %d pairs (p10-p90 in brackets; below 1: berth "
             "is faster). %d warm-up pairs precede them. Both runtimes get the same thread count "
             "(berth `[backend.cpu] threads`, onnxruntime `intraOpNumThreads`, one inter-op thread) "
             "and the same inputs.\n" % (runs, warmup))
    L.append("## Latency and throughput\n")
    L.append("| model | bucket | threads | berth median ms | berth p90 ms | ORT median ms | ORT p90 ms | "
             "berth items/s | ORT items/s | berth/ORT per pair | sgemm floor ms | berth/floor | ORT/floor | "
             "allocs per warm run | max abs diff |")
    L.append("|" + "---|" * 15)
    chart = []
    for r in results:
        for bi, b in enumerate(r["json"]["buckets"]):
            s = stats(b)
            batch = batch_of(b["bucket"])
            floor = r["sgemm"].get(bi, {}).get(r["threads"], {}).get("s")
            diff = "%.2g" % b["max_abs_diff"] if "max_abs_diff" in b else "n/a"
            L.append("| %s | %s | %d | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.3f (%.3f-%.3f) | %s | %s | %s | "
                     "%s | %s |" % (
                         r["model"]["name"], b["bucket"], r["threads"], ms(s["b_med"]), ms(s["b_p90"]),
                         ms(s["o_med"]), ms(s["o_p90"]), batch / (s["b_med"] / 1e9), batch / (s["o_med"] / 1e9),
                         s["r_med"], s["r_p10"], s["r_p90"],
                         "%.2f" % (floor * 1e3) if floor else "n/a",
                         "%.2f" % (s["b_med"] / 1e9 / floor) if floor else "n/a",
                         "%.2f" % (s["o_med"] / 1e9 / floor) if floor else "n/a",
                         "%.2f" % (b["allocs"] / b["runs"]), diff))
            short = " ".join(part.replace("batch=", "b").replace("seq=", "s").replace("width=", "w")
                             for part in b["bucket"].split())
            chart.append(("%s %s t%d" % (r["model"]["name"], short, r["threads"]),
                          s["r_med"], s["r_p10"], s["r_p90"]))
    L.append("\nItems are sequences (BERT), text lines (OCR recognizer, classifier) or pages (OCR detector) "
             "per second at the bucket's batch. The sgemm "
             "floor is the time OpenBLAS alone (`cblas_sgemm`, same thread count) takes for every matrix "
             "product of the model at that bucket (matmuls, and convolutions as the GEMMs they amount to), "
             "at the rate it reaches on each shape: the machine's limit for that work. It is measured once "
             "per model, apart from the pairs, so on a busy machine it can come out above a model's own "
             "time. Max abs diff "
             "compares the two runtimes' first output on the same input.\n")
    if peaks:
        L.append("## Against the machine's multiply-add peak\n")
        L.append("| model | bucket | threads | matrix GFLOP | berth GFLOP/s | ORT GFLOP/s | peak GFLOP/s | "
                 "berth / peak | ORT / peak |")
        L.append("|" + "---|" * 9)
        for r in results:
            for bi, b in enumerate(r["json"]["buckets"]):
                gf = r["sgemm"].get(bi, {}).get(r["threads"], {}).get("gflop")
                pk = peaks.get(r["threads"])
                if not gf or not pk:
                    continue
                s = stats(b)
                bg, og = gf / (s["b_med"] / 1e9), gf / (s["o_med"] / 1e9)
                L.append("| %s | %s | %d | %.2f | %.1f | %.1f | %.1f | %.2f | %.2f |" % (
                    r["model"]["name"], b["bucket"], r["threads"], gf, bg, og, pk, bg / pk, og / pk))
        L.append("\nThe matrix work is that of the sgemm floor (every matmul, gemm and convolution as a GEMM) "
                 "over each runtime's median time, so the rest of the model's time counts against it. The "
                 "peak is `berth-bench peak --threads N`: independent float32 fused multiply-add chains on "
                 "the widest vectors the cpu has, on every thread at once, best of 5; no product runs faster. "
                 "A row whose onnxruntime side is near the peak leaves no runtime much room below it.\n")
    L.append("## Where berth's time goes\n")
    L.append("| model | bucket | threads | berth ms (profiled run) | op classes, by share of that run's node time |")
    L.append("|" + "---|" * 5)
    for r in results:
        for b in r["json"]["buckets"]:
            ops = b.get("op_ns", {})
            total = sum(ops.values())
            if not total:
                continue
            top = sorted(ops.items(), key=lambda kv: -kv[1])
            shown = ", ".join("%s %.0f%%" % (k, 100.0 * v / total) for k, v in top[:5])
            rest = sum(v for _, v in top[5:])
            if rest:
                shown += ", other %.0f%%" % (100.0 * rest / total)
            L.append("| %s | %s | %d | %.2f | %s |" % (r["model"]["name"], b["bucket"], r["threads"], ms(total), shown))
    L.append("\nFrom `berth_executor_profile` after the last timed run of each bucket: the time of every "
             "node summed by its op (fused ops by their berth name). It is what to look at on a row above "
             "1.\n")
    L.append("## Plans: first run in a cold bucket against a warm run\n")
    L.append("| model | bucket | threads | first run ms (plans) | warm run ms (median) | ORT first run ms | plan bytes | "
             "weights bytes | plans bytes (all buckets) |")
    L.append("|" + "---|" * 9)
    for r in results:
        j = r["json"]
        for b in j["buckets"]:
            L.append("| %s | %s | %d | %.2f | %.2f | %.2f | %d | %d | %d |" % (
                r["model"]["name"], b["bucket"], r["threads"], ms(b["cold_ns"]), ms(stats(b)["b_med"]),
                ms(b["peer_cold_ns"]), b["plan_bytes"], j["weights_bytes"], j["plans_bytes"]))
    L.append("\nBytes are `berth_executor_memory()`: weights once for the executor, each plan's buffers "
             "as the backend reports them.\n")
    L.append("## Loading: process start to first output\n")
    L.append("| model | threads | weights on disk MiB (.safetensors / .onnx) | berth s | berth peak RSS MiB | "
             "ORT s | ORT peak RSS MiB | berth RSS growth while loading MiB | resident weights after open MiB | "
             "largest tensor MiB | bound: their sum MiB |")
    L.append("|" + "---|" * 11)
    for name, ld in loads:
        inside = ld["berth"]
        growth = (inside["peak_rss_open_kb"] - inside["rss_base_kb"]) / 1024.0
        L.append("| %s | %d | %.1f / %.1f | %.3f | %.1f | %.3f | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            name, ld["threads"], mib(ld["safetensors_bytes"]), mib(ld["onnx_bytes"]), ld["berth_wall"],
            ld["berth_rss_kb"] / 1024.0, ld["ort_wall"], ld["ort_rss_kb"] / 1024.0, growth,
            mib(inside["weights_bytes"]), mib(ld["largest_bytes"]),
            mib(inside["weights_bytes"] + ld["largest_bytes"])))
    L.append("\nEach is a fresh process timed from start until it exits right after its first output "
             "(first bucket); peak RSS is the process's own VmHWM at that point. The berth RSS growth is its peak while opening "
             "(parse, validate, stream the weights) less its RSS before; the design bound is the weights "
             "resident on the device plus the largest single tensor. Peak RSS also holds the first run: "
             "its plan, and whatever the backend adds to the weights when planning (the plans table reads "
             "weight bytes after all runs, this one right after open). The onnxruntime process includes "
             "Node.js itself.\n")
    quantized_section(L, results, loads)
    with open(path, "w") as f:
        f.write("\n".join(L))
    return chart


def quantized_section(L, results, loads):
    """Each quantized model beside its float32 one: weights on the device,
    latency (from separate runs, so only roughly comparable), and its
    output against the peer's float32 output on the same input."""
    rows = [r for r in results if r["model"].get("quantize")]
    if not rows:
        return
    plain = {(r["model"]["name"], r["threads"]): r for r in results if not r["model"].get("quantize")}
    load_of = dict(loads)
    L.append("## Quantized weights against float32\n")
    L.append("| model | bucket | threads | berth median ms | float32 berth median ms | quantized / float32 | "
             "weights MiB (float32 MiB, share) | max abs diff | mean abs diff | cosine similarity |")
    L.append("|" + "---|" * 10)
    for r in rows:
        f = plain.get((r["model"]["base"], r["threads"]))
        wq = r["json"]["weights_bytes"]
        wf = f["json"]["weights_bytes"] if f else None
        for bi, b in enumerate(r["json"]["buckets"]):
            med = stats(b)["b_med"]
            fmed = stats(f["json"]["buckets"][bi])["b_med"] if f else None
            L.append("| %s | %s | %d | %.2f | %s | %s | %.1f (%s) | %s | %s | %s |" % (
                r["model"]["name"], b["bucket"], r["threads"], ms(med), "%.2f" % ms(fmed) if fmed else "n/a",
                "%.3f" % (med / fmed) if fmed else "n/a", mib(wq),
                "%.1f, %.1f%%" % (mib(wf), 100.0 * wq / wf) if wf else "n/a",
                "%.3g" % b["max_abs_diff"] if "max_abs_diff" in b else "n/a",
                "%.3g" % b["mean_abs_diff"] if "mean_abs_diff" in b else "n/a",
                "%.6f" % b["cosine"] if "cosine" in b else "n/a"))
    L.append("\nWeights are quantized by `tools/onnx2webnn --quantize` (blocks of 32, 24 for the recognizer, "
             "along each matmul's reduction axis and along embedding rows, symmetric, float32 scales; the "
             "encoders' int4 asymmetric with least-error scales and their attention values, outputs and "
             "position embeddings int8; the recognizer's convolutions stay float32) and computed from their "
             "packed form (`berth.matmulQuantized`, `berth.gatherQuantized`): int8 weights as int8 x int8 "
             "products with the activations quantized per row block (`quantized_activations = int8`), "
             "int4 weights widened to floats. The differences compare berth's "
             "first output with onnxruntime's on the float32 ONNX model, same input. Latency ratios come "
             "from separate runs (each row's own pairs), so they carry the machine's noise.\n")
    L.append("| model | berth peak RSS MiB | RSS growth while loading MiB | weights after open MiB | largest tensor MiB | "
             "bound: weights + largest + 16 MiB |")
    L.append("|" + "---|" * 6)
    for r in rows:
        ld = load_of.get(r["model"]["name"])
        if not ld:
            continue
        inside = ld["berth"]
        growth = (inside["peak_rss_open_kb"] - inside["rss_base_kb"]) / 1024.0
        L.append("| %s | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            r["model"]["name"], ld["berth_rss_kb"] / 1024.0, growth, mib(inside["weights_bytes"]),
            mib(ld["largest_bytes"]), mib(inside["weights_bytes"] + ld["largest_bytes"]) + 16))
    L.append("")


def write_chart(png, chart, work):
    dat = os.path.join(work, "ratios.dat")
    with open(dat, "w") as f:
        for label, med, lo, hi in chart:
            f.write('"%s" %.4f %.4f %.4f\n' % (label, med, lo, hi))
    script = os.path.join(work, "ratios.gp")
    with open(script, "w") as f:
        f.write("""set terminal pngcairo size 1200,560 font ",10"
set output '%s'
set title "berth / onnxruntime-node latency, per pair of runs (median, p10-p90 bars; below 1: berth faster)"
set ylabel "berth / onnxruntime"
set yrange [0:*]
set boxwidth 0.6
set style fill solid 0.5
set xtics rotate by -30 noenhanced
set bmargin 7
set rmargin 10
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb 'red'
plot '%s' using 0:2:xtic(1) with boxes lc rgb '#4a7ab5' notitle, \\
     '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt -1 notitle
""" % (png, dat))
    run(["gnuplot", script])


def verify_report(path, png, n_rows):
    """Reads the report back: each table is there with the rows expected
    and numbers where numbers belong."""
    text = open(path).read()
    problems = []
    for title in ("## Latency and throughput", "## Plans", "## Loading"):
        if title not in text:
            problems.append("no section '%s'" % title)
    rows = [l for l in text.splitlines() if l.startswith("| ") and "|---" not in l]
    lat = [l for l in rows if l.count("|") == 16 and not l.startswith("| model")]
    if len(lat) != n_rows:
        problems.append("%d latency rows, expected %d" % (len(lat), n_rows))
    for l in lat:
        cells = [c.strip() for c in l.strip("|").split("|")]
        try:
            float(cells[3]), float(cells[5]), float(cells[9].split()[0]), float(cells[13])
            if float(cells[9].split()[0]) <= 0:
                problems.append("ratio not positive: %s" % l)
        except ValueError:
            problems.append("a number cell does not parse: %s" % l)
    if png is not None:
        with open(png, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                problems.append("%s is not a PNG" % png)
    if problems:
        raise BenchError("report %s is malformed: %s" % (path, "; ".join(problems)))


# ---- main ----------------------------------------------------------------

def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--harness", help="berth-bench (default: BUILD/bench/berth-bench)")
    p.add_argument("--out", help="where the report goes (default: BUILD/bench)")
    p.add_argument("--runs", type=int)
    p.add_argument("--warmup", type=int)
    p.add_argument("--threads", default=None, help="comma-separated (default 1,2 and all cores if more)")
    p.add_argument("--only", help="comma-separated model names")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--no-pages", action="store_true", help="leave out the whole-page OCR rows")
    p.add_argument("--no-small", action="store_true", help="leave out the small-model rows")
    p.add_argument("--small-rounds", type=int, default=7, help="rounds per small-model row (default 7)")
    p.add_argument("--no-serve", action="store_true", help="leave out the serving load section")
    p.add_argument("--no-memory", action="store_true", help="leave out the plan memory section")
    a = p.parse_args(argv)
    build = os.path.abspath(a.build)
    out = os.path.abspath(a.out or os.path.join(build, "bench"))
    harness = os.path.abspath(a.harness or os.path.join(build, "bench", "berth-bench"))
    runs = a.runs or (2 if a.smoke else 20)
    warmup = a.warmup if a.warmup is not None else (1 if a.smoke else 2)
    cores = os.cpu_count() or 1
    threads = [int(t) for t in (a.threads or "1,2" + (",%d" % cores if cores > 2 else "")).split(",")]
    models = [dict(m) for m in (SMOKE if a.smoke else FULL)]
    if a.only:
        models = [m for m in models if m["name"] in a.only.split(",")]
    if not os.access(harness, os.X_OK):
        raise BenchError("%s not found: build the berth-bench target first" % harness)
    for d in ("models", "configs", "results", "work"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    env = dict(os.environ)
    env.setdefault("BERTH_BACKEND_PATH", os.path.join(build, "backends"))
    chart_ok = setup_gnuplot() if not a.smoke else shutil.which("gnuplot") is not None
    if not a.smoke:
        env.update(NODE_PATH=setup_ort(os.path.join(out, "node"))["NODE_PATH"])
    for m in models:
        if m["kind"] == "bert":
            prepare_bert(m, os.path.join(out, "models"))
        elif m["kind"] == "asset":
            prepare_asset(m, build, os.path.join(out, "models"))
        else:
            prepare_ocr(m, build, os.path.join(out, "models"))
    info = machine()
    load_before = os.getloadavg()
    results, loads = [], []
    peer_name = "bench/peer_stub.py (smoke)" if a.smoke else "onnxruntime-node"
    for m in models:
        spec = input_spec(m, os.path.join(out, "models"))
        if a.smoke:
            peer = ["/usr/bin/python3", os.path.join(BENCH, "peer_stub.py"), m["onnx"]]
        else:
            peer = ["node", os.path.join(BENCH, "ort_peer.js"), m["onnx"]]
        configs = {t: write_config(m, t, os.path.join(out, "configs")) for t in threads}
        say("%s: sgemm ceiling on its matrix shapes" % m["name"])
        ceiling = sgemm(harness, configs[threads[0]], os.path.join(out, "work", m["name"]), threads)
        for t in threads:
            say("%s: %d threads, %d pairs per bucket" % (m["name"], t, runs))
            j = pairs(harness, configs[t], peer + [str(t), spec], os.path.join(out, "results", "%s-t%d.json"
                      % (m["name"], t)), None if a.smoke else os.path.join(out, "work"), runs, warmup, env)
            if not a.smoke:
                peer_name = j["peer"].split(", loaded")[0]
            results.append({"model": m, "threads": t, "json": j, "sgemm": ceiling})
        t = threads[-1]
        say("%s: loading, %d threads" % (m["name"], t))
        ld = load(m, harness, configs[t], peer + [str(t), spec, "--load", m["buckets"][0]], env)
        ld["threads"] = t
        loads.append((m["name"], ld))
    page_rows = None
    if not a.smoke and not a.no_pages and (not a.only or "pages" in a.only.split(",")):
        cpu_ini = os.path.join(ROOT, "config", "ocr-cpu.ini")
        page_threads = int(re.search(r"threads = (\d+)", open(cpu_ini).read()).group(1))
        page_rows = pages(build, out, max(3, runs // 4), 5, env)
    serve_md = None
    if not a.smoke and not a.no_serve and (not a.only or "serve" in a.only.split(",")):
        say("berth serve under load (bench/serve_load.py)")
        serve_md = os.path.join(out, "work", "serve.md")
        run(["/usr/bin/python3", os.path.join(BENCH, "serve_load.py"), "--build", build, "--out", serve_md],
            env=env, capture=False)
    memory_md = None
    if not a.smoke and not a.no_memory and (not a.only or "memory" in a.only.split(",")):
        say("plan memory, cpu against vulkan (bench/plan_memory.py)")
        memory_md = os.path.join(out, "work", "memory.md")
        run(["/usr/bin/python3", os.path.join(BENCH, "plan_memory.py"), "--build", build, "--models",
             os.path.join(out, "models"), "--out", memory_md], env=env, capture=False)
    small_rows = None
    if a.smoke:  # the small rows' path on the one model made here, against the stand-in peer
        small_models = small.prepare(build, os.path.join(out, "models"), say, only=["dispatch"])
        small_rows = small.time_rows(build, out, small_models, threads, 2, env, say, lambda onnx: [
            "/usr/bin/python3", os.path.join(BENCH, "peer_stub.py"), onnx])
    elif not a.no_small and (not a.only or "small" in a.only.split(",")):
        say("small models (bench/small.py)")
        small_models = small.prepare(build, os.path.join(out, "models"), say)
        small_rows = small.time_rows(build, out, small_models, threads, a.small_rounds, env, say)
    report = os.path.join(out, "report.md")
    chart_ok = chart_ok and bool(results)  # (--only pages: no model rows to chart)
    peaks = {}
    for t in sorted({r["threads"] for r in results}):
        peaks[t] = json.loads(run([harness, "peak", "--threads", str(t)]))["gflops"]
    chart = write_report(report, info, results, loads, peer_name, runs, warmup, a.smoke, peaks)
    if page_rows:
        write_pages(report, page_rows, max(3, runs // 4), 5, page_threads)
    if small_rows:
        small.write(report, small_rows)
    if serve_md:
        with open(serve_md) as f, open(report, "a") as r:
            r.write("\n" + f.read() + "\n")
    if memory_md:
        with open(memory_md) as f, open(report, "a") as r:
            r.write("\n## Plan memory\n\n" + f.read() + "\n")
    with open(report, "a") as f:
        f.write("Load average (1, 5, 15 min) at the start of the timed runs: %.2f %.2f %.2f; at the end: "
                "%.2f %.2f %.2f. Total time of this run: %.0f s.\n" % (load_before + os.getloadavg()
                                                                       + (time.monotonic() - T0,)))
        if chart_ok:
            f.write("\n![berth/onnxruntime ratios](ratios.png)\n")
    png = os.path.join(out, "ratios.png")
    if chart_ok:
        write_chart(png, chart, os.path.join(out, "work"))
    say("wrote %s%s" % (report, " and " + png if chart_ok else " (no chart)"))
    if results:
        verify_report(report, png if chart_ok else None, sum(len(r["json"]["buckets"]) for r in results))
    if small_rows:
        small.verify(report, len(small_rows))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        print("bench: %s" % e, file=sys.stderr)
        sys.exit(1)
