#!/usr/bin/python3
"""insn_count.py --arm64 BUILD_ARM64 --host BUILD [--isa generic,auto] [--runs N]
                [--threads N] [--jobs N] [--only ROW,...] [--cache DIR] [--out FILE.md]

Executed arm64 instructions per inference run, for each cpu backend isa
(the [backend.cpu] isa option), where there is no arm64 machine to time:
the arm64 build's `berth run CONFIG --repeat R` under qemu-user with the
qemu_insn plugin (bench/qemu_insn.c, built by the host build), once with
--repeat 0 and once with --repeat N. Both runs load, plan and run the
model once cold; the second runs it N times more, so the difference over
N is one warm run, loading and planning left out.

The rows are a few of make bench's models at buckets that take seconds
under qemu: the BERT-style encoders (bench/gen_bert.py, written into
BUILD/bench/models as make bench does) and PaddleOCR's recognizer,
detector and angle classifier (BUILD/cache/ocr, or --cache DIR, as
scripts/ocr-models converts them; fetched there when missing).

One thread by default: the count is then the work alone and repeats to
within a few hundredths of a percent. With more (--threads), the cpu
backend's workers poll for the next job between a run's ops and the
count includes their polling, which depends on timing. The qemu runs of a
row go --jobs at a time (default 2); with one berth thread that changes
no count.

Writes the markdown table to stdout and to --out (default
BUILD/bench/insn/report.md)."""
import argparse
import concurrent.futures
import os
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
T0 = time.monotonic()


def say(msg):
    print("insn [%4.0fs]: %s" % (time.monotonic() - T0, msg), file=sys.stderr, flush=True)


class InsnError(Exception):
    pass


# name, model (bench.py's, or an OCR model of the cache), bucket, and
# [backend.cpu] lines beside threads and isa
ROWS = [
    ("bert-6x384", "bert-6x384", "batch=1 seq=32", ""),
    ("bert-12x768", "bert-12x768", "batch=1 seq=16", ""),
    ("bert-6x384-int8", "bert-6x384-int8", "batch=1 seq=32", ""),
    ("bert-6x384-int8-act", "bert-6x384-int8", "batch=1 seq=32", "quantized_activations = int8\n"),
    ("ocr-rec", "rec", "batch=1 width=320", ""),
    ("ocr-det", "det", "batch=1 height=320 width=320", ""),
    ("ocr-cls", "cls", "batch=8 height=48 width=192", ""),
]
ABOUT = {
    "bert-6x384": "BERT-style encoder, 6 layers, hidden 384 (bench/gen_bert.py)",
    "bert-12x768": "BERT-style encoder, 12 layers, hidden 768 (bench/gen_bert.py)",
    "bert-6x384-int8": "the 6-layer encoder with int8 weights (blocks of 32)",
    "rec": "PP-OCRv4 recognizer, one line",
    "det": "PP-OCRv4 detector (DBNet), a small page",
    "cls": "PP-OCR angle classifier (convolutions), 8 lines",
}


def models(host, cache, wanted):
    """{model name: (graph, weights)} for the models the rows want."""
    out = {}
    berts = [m for m in ("bert-6x384", "bert-12x768", "bert-6x384-int8") if m in wanted]
    if berts:
        sys.path.insert(0, BENCH)
        sys.dont_write_bytecode = True  # no __pycache__ in the source tree
        import bench  # its model definitions and converter steps, shared with make bench
        models_dir = os.path.join(host, "bench", "models")
        os.makedirs(models_dir, exist_ok=True)
        for m in (dict(bench.BERT_6), dict(bench.BERT_12), bench.quantized(bench.BERT_6, "int8")):
            if m["name"] in berts:
                try:
                    bench.prepare_bert(m, models_dir)
                except bench.BenchError as e:
                    raise InsnError(str(e))
                out[m["name"]] = (m["webnn"], m["weights"])
    ocr = [m for m in ("rec", "det", "cls") if m in wanted]
    if ocr:
        d = os.path.join(cache, "ocr")
        paths = {m: (os.path.join(d, m + ".webnn"), os.path.join(d, m + ".safetensors")) for m in ocr}
        if not all(os.path.exists(p) for pair in paths.values() for p in pair):
            say("fetching the OCR models into %s (scripts/ocr-models)" % cache)
            if subprocess.run([os.path.join(ROOT, "scripts", "ocr-models"), "--cache", cache]).returncode:
                raise InsnError("scripts/ocr-models --cache %s failed (its messages are above)" % cache)
        out.update(paths)
    return out


def write_config(path, graph, weights, bucket, threads, isa, extra):
    with open(path, "w") as f:
        f.write("# written by bench/insn_count.py\n[model]\ngraph = %s\nweights = %s\nstage = bench\n\n"
                "[backend]\nuse = cpu\n\n[backend.cpu]\nthreads = %d\nisa = %s\n%s\n[buckets]\nbench = %s\n"
                % (graph, weights, threads, isa, extra, bucket))


def count(emulator, plugin, berth, backends, config, repeat):
    """Instructions qemu executed for berth run CONFIG --repeat REPEAT
    (the count and berth's output beside CONFIG)."""
    stem = "%s-r%d" % (os.path.splitext(config)[0], repeat)
    out, log = stem + ".count", stem + ".log"
    if os.path.exists(out):
        os.remove(out)
    cmd = emulator + ["-plugin", "%s,out=%s" % (plugin, out), berth, "run", config, "--repeat", str(repeat),
                      "--quiet"]
    with open(log, "w") as f:
        # OpenBLAS would start a thread per core at load, whose polling
        # before it sleeps depends on timing; berth sets it to one thread
        # anyway (backends/cpu/cpu_backend.c).
        env = dict(os.environ, BERTH_BACKEND_PATH=backends, OPENBLAS_NUM_THREADS="1")
        rc = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        with open(log) as f:
            raise InsnError("%s exited with %d:\n%s" % (" ".join(cmd), rc, f.read()[-2000:]))
    with open(out) as f:
        return int(f.read())


def table(results, isas, runs, threads, jobs):
    lines = ["| row | model, bucket | %s | %s | qemu time |" % (
        " | ".join("instructions/run %s" % i for i in isas),
        " | ".join("%s/%s" % (i, isas[0]) for i in isas[1:]) or "ratio"),
        "| --- | --- | %s | %s | ---: |" % (" | ".join("---:" for _ in isas), " | ".join("---:" for _ in isas[1:])
                                           or "---:")]
    for r in results:
        per = [r["per_run"][i] for i in isas]
        ratios = ["%.3f" % (p / per[0]) for p in per[1:]] or ["1.000"]
        lines.append("| %s | %s, %s | %s | %s | %.0f s |" % (
            r["row"], ABOUT[r["model"]], r["bucket"], " | ".join("{:,}".format(round(p)) for p in per),
            " | ".join(ratios), r["seconds"]))
    lines.append("")
    lines.append("Executed arm64 instructions per warm run (berth run --repeat %d against --repeat 0, over %d) "
                 "under qemu-user with bench/qemu_insn.so, %d berth thread%s; qemu time: the row's wall time, "
                 "its %d qemu runs %d at a time." % (runs, runs, threads, "" if threads == 1 else "s", 2 * len(isas),
                                                   jobs))
    return "\n".join(lines) + "\n"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    p.add_argument("--arm64", required=True, help="the arm64 cross build (apps/berth, backends/)")
    p.add_argument("--host", required=True, help="the host build (bench/qemu_insn.so; models go here)")
    p.add_argument("--isa", default="generic,auto", help="comma-separated cpu isa values (default generic,auto)")
    p.add_argument("--runs", type=int, default=1, help="warm runs counted (default 1)")
    p.add_argument("--threads", type=int, default=1, help="[backend.cpu] threads (default 1)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="qemu processes at once (default 2, or 1 on one core)")
    p.add_argument("--only", help="comma-separated rows: %s" % ",".join(r[0] for r in ROWS))
    p.add_argument("--cache", help="where scripts/ocr-models keeps the OCR models (default HOST/cache)")
    p.add_argument("--emulator", default="qemu-aarch64 -L /")
    p.add_argument("--out", help="the table (default HOST/bench/insn/report.md)")
    a = p.parse_args(argv)
    if a.runs < 1 or a.threads < 1 or a.jobs < 1:
        raise InsnError("--runs, --threads and --jobs must be at least 1")
    arm64, host = os.path.abspath(a.arm64), os.path.abspath(a.host)
    cache = os.path.abspath(a.cache or os.path.join(host, "cache"))
    isas = [i for i in a.isa.split(",") if i]
    rows = [r for r in ROWS if not a.only or r[0] in a.only.split(",")]
    if a.only and len(rows) != len(a.only.split(",")):
        raise InsnError("--only: the rows are %s" % ", ".join(r[0] for r in ROWS))
    berth = os.path.join(arm64, "apps", "berth")
    backends = os.path.join(arm64, "backends")
    plugin = os.path.join(host, "bench", "qemu_insn.so")
    for path, what in ((berth, "the arm64 build's berth"), (os.path.join(backends, "libberth-cpu.so"),
                       "the arm64 build's cpu backend"), (plugin, "the host build's qemu_insn target")):
        if not os.path.exists(path):
            raise InsnError("%s not found: build %s first" % (path, what))
    emulator = shlex.split(a.emulator)
    work = os.path.join(host, "bench", "insn")
    os.makedirs(work, exist_ok=True)
    paths = models(host, cache, {r[1] for r in rows})
    results = []
    for name, model, bucket, extra in rows:
        t0 = time.monotonic()
        per_run = {}
        configs = {}
        for isa in isas:
            configs[isa] = os.path.join(work, "%s-%s.ini" % (name, isa))
            write_config(configs[isa], paths[model][0], paths[model][1], bucket, a.threads, isa, extra)
        # Every count of the row at once, a.jobs at a time: qemu runs each
        # on a core of its own, and with one berth thread no count depends
        # on what else runs.
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            counts = {(isa, r): pool.submit(count, emulator, plugin, berth, backends, configs[isa], r)
                      for isa in isas for r in (0, a.runs)}
            counts = {k: f.result() for k, f in counts.items()}
        for isa in isas:
            base, more = counts[(isa, 0)], counts[(isa, a.runs)]
            per_run[isa] = (more - base) / a.runs
            say("%s (%s), isa %s: %d instructions with no warm run, %d with %d: %s a run" % (
                name, bucket, isa, base, more, a.runs, "{:,}".format(round(per_run[isa]))))
        results.append({"row": name, "model": model, "bucket": bucket, "per_run": per_run,
                        "seconds": time.monotonic() - t0})
        say("%s: %.0f s" % (name, results[-1]["seconds"]))
    text = table(results, isas, a.runs, a.threads, a.jobs)
    out = a.out or os.path.join(work, "report.md")
    with open(out, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    say("wrote %s" % out)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except InsnError as e:
        print("insn_count: %s" % e, file=sys.stderr)
        sys.exit(1)
