#!/usr/bin/python3
"""plan_memory.py [--build DIR] [--models DIR] [--only NAME,...] [--out FILE]

What a plan holds on cpu and on vulkan, for the same model and bucket:
the PP-OCRv4 recognizer and detector (scripts/ocr-models) and a
MiniLM-class encoder (bench/gen_bert.py, 6 layers x 384, fixed seed,
converted with tools/onnx2webnn). For each model, bucket and backend it
runs `berth run CONFIG --repeat 0` (one plan, one run) in a fresh process
and reads the plan's bytes by kind from its `memory:` lines and the
process's peak resident memory (GNU time's %M, Debian's `time`). A build
older than backend ABI 1.2 prints no kinds: its rows show the total only.

The first graph (examples/first) gives each backend's floor: the peak
memory of a process that opens the device and runs a graph of a few
hundred bytes; on lavapipe that is mostly the driver and LLVM.

Prints a markdown section; --out FILE writes it there too (bench/bench.py
puts it into the report). Plan bytes are deterministic; peak memory
varies by a few MB from run to run."""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, BENCH)
from bench import BERT_6, BenchError, prepare_bert, say  # noqa: E402  the bench's own model and converter

KINDS = ["intermediates", "scratch", "io", "constants", "records"]
BACKENDS = ["cpu", "vulkan"]


def models(build, models_dir, only):
    cache = os.path.join(build, "cache")
    ocr = os.path.join(os.path.abspath(cache), "ocr")
    out = []
    if not only or "first" in only:
        out.append(("first", os.path.join(ROOT, "examples", "first", "first.webnn"),
                    os.path.join(ROOT, "examples", "first", "first.safetensors"), ["batch=8"]))
    if not only or {"rec", "det"} & set(only):
        if not all(os.path.exists(os.path.join(ocr, m + ".webnn")) for m in ("rec", "det")):
            subprocess.run([os.path.join(ROOT, "scripts", "ocr-models"), "--cache", cache], check=True)
    if not only or "rec" in only:
        out.append(("ppocr-v4-rec", os.path.join(ocr, "rec.webnn"), os.path.join(ocr, "rec.safetensors"),
                    ["batch=1 width=320", "batch=8 width=320"]))
    if not only or "det" in only:
        out.append(("ppocr-v4-det", os.path.join(ocr, "det.webnn"), os.path.join(ocr, "det.safetensors"),
                    ["batch=1 height=640 width=640"]))
    if not only or "bert" in only:
        m = dict(BERT_6)
        os.makedirs(models_dir, exist_ok=True)
        prepare_bert(m, models_dir)
        out.append((m["name"], m["webnn"], m["weights"], ["batch=1 seq=128", "batch=8 seq=128"]))
    return out


def write_config(path, webnn, weights, bucket, backend):
    with open(path, "w") as f:
        f.write("# written by bench/plan_memory.py\n[model]\ngraph = %s\nweights = %s\nstage = s\n\n"
                "[backend]\nuse = %s\n\n[backend.cpu]\nthreads = 2\n\n[buckets]\ns = %s\n"
                % (webnn, weights, backend, bucket))


def run_one(berth, config, env):
    """(plan bytes, {kind: bytes} or None, peak RSS bytes) of one `berth run`
    process. GNU time reports the peak: ru_maxrss of a child forked from
    this script would carry the script's own peak across exec (see
    docs/bench.md), GNU time's is a few hundred kB."""
    rss_file = config + ".rss"
    cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file, berth, "run", config, "--repeat", "0", "--stats"]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode == 2 and "--stats" in p.stderr:  # a build from before the kinds: the totals alone
        p = subprocess.run(cmd[:-1], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise BenchError("%s run %s exited with %d: %s" % (berth, config, p.returncode, p.stderr.strip()[-400:]))
    total = re.search(r"plans (\d+) bytes", p.stdout)
    if not total:
        raise BenchError("no memory line in the output of %s run %s" % (berth, config))
    kinds = None
    line = re.search(r"plans by kind: (.*)", p.stdout)
    if line:
        kinds = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", line.group(1))}
        kinds["estimated"] = "(estimated)" in line.group(1)
    with open(rss_file) as f:
        return int(total.group(1)), kinds, int(f.read().split()[-1]) * 1024


def mb(b):
    return "%.1f" % (b / 1e6)


def table(rows):
    L = ["| model | bucket | backend | intermediates | scratch | io | constants | records | plan total (MB) "
         "| vulkan/cpu | peak RSS (MB) | vulkan/cpu | RSS over floor (MB) | vulkan/cpu |",
         "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        k = r["kinds"]
        cells = [mb(k[x]) + ("*" if x == "records" and k.get("estimated") else "") for x in KINDS] if k \
            else ["—"] * len(KINDS)
        L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], r["bucket"], r["backend"], " | ".join(cells), mb(r["plan"]),
            "%.2f" % r["plan_ratio"] if "plan_ratio" in r else "", " | ".join([
                mb(r["rss"]), "%.2f" % r["rss_ratio"] if "rss_ratio" in r else "", mb(r["over"]),
                "%.2f" % r["over_ratio"] if "over_ratio" in r else ""])))
    return "\n".join(L)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    p.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build tree whose berth and modules run")
    p.add_argument("--models", help="where the generated encoder goes (default: BUILD/bench/models)")
    p.add_argument("--only", help="comma-separated: first, rec, det, bert")
    p.add_argument("--out", help="also write the section to this file")
    a = p.parse_args(argv)
    build = os.path.abspath(a.build)
    berth = os.path.join(build, "apps", "berth")
    if not os.access(berth, os.X_OK):
        raise BenchError("%s not found: build the berth target first" % berth)
    work = os.path.join(build, "bench", "memory")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, BERTH_BACKEND_PATH=os.path.join(build, "backends"))
    only = a.only.split(",") if a.only else None
    rows, floor = [], {}
    for name, webnn, weights, buckets in models(build, a.models or os.path.join(build, "bench", "models"), only):
        for bucket in buckets:
            got = {}
            for be in BACKENDS:
                ini = os.path.join(work, "%s-%s-%s.ini" % (name, re.sub(r"\W+", "_", bucket), be))
                write_config(ini, webnn, weights, bucket, be)
                say("%s %s on %s" % (name, bucket, be))
                plan, kinds, rss = run_one(berth, ini, env)
                got[be] = {"model": name, "bucket": bucket, "backend": be, "plan": plan, "kinds": kinds, "rss": rss}
            if name == "first":
                floor = {be: got[be]["rss"] for be in BACKENDS}
            for be in BACKENDS:
                got[be]["over"] = got[be]["rss"] - floor.get(be, 0)
            got["vulkan"]["plan_ratio"] = got["vulkan"]["plan"] / max(got["cpu"]["plan"], 1)
            got["vulkan"]["rss_ratio"] = got["vulkan"]["rss"] / max(got["cpu"]["rss"], 1)
            got["vulkan"]["over_ratio"] = got["vulkan"]["over"] / max(got["cpu"]["over"], 1)
            rows += [got[be] for be in BACKENDS]
    text = ("Plan bytes by kind in MB (10^6 bytes; * estimated), from `berth run --repeat 0` of one bucket "
            "in a fresh process; peak RSS is the process's maximum resident set (GNU time), and RSS over floor what is left after "
            "the first graph's peak on the same backend (the driver, and on lavapipe LLVM; without --only "
            "first, no floor is taken). Build: %s.\n\n%s\n" % (build, table(rows)))
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        print("plan_memory: %s" % e, file=sys.stderr)
        sys.exit(1)
