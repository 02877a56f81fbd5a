#!/usr/bin/python3
"""start.py [--build DIR] [--starts N] [--models det,rec,cls] [--backends cpu,vulkan] [--out FILE]

Time to first output of a fresh process, with and without [cache] dir:
for each PP-OCRv4 model (scripts/ocr-models) and backend it writes a
config beside the models' one with a [cache] section, and times
`berth run CONFIG --model M --repeat 0` (open, upload, prepare, plan the
first bucket, run it once, exit) as a whole process, by the wall clock.

Modes, each started N times, interleaved start by start so the
machine's noise falls on all of them alike:
  none     no [cache] section: every start prepares and compiles
  kept     [cache] dir filled by one start before the timed ones
On vulkan each mode runs twice: with the driver's own shader cache off
(MESA_SHADER_CACHE_DISABLE=true: what berth's cache alone gives) and on
(the driver's default, which on Mesa keeps compiled shaders itself).

Prints a markdown table of the median and best start per mode and the
ratio none / kept; --out FILE writes it there too."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_config(src, dst, models_dir, cache):
    text = open(src).read().replace("../build/cache/ocr", models_dir)
    if cache:
        text = text.replace("[buckets]", "[cache]\ndir = %s\n\n[buckets]" % cache, 1)
    with open(dst, "w") as f:
        f.write(text)


def start(berth, config, model, env):
    t0 = time.perf_counter()
    p = subprocess.run([berth, "run", config, "--model", model, "--repeat", "0", "--quiet"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if p.returncode:
        sys.exit("start.py: %s --model %s failed: %s" % (config, model, p.stderr.strip()))
    return dt * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--models", default="det,rec,cls")
    ap.add_argument("--backends", default="cpu,vulkan")
    ap.add_argument("--out")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    berth = os.path.join(build, "apps", "berth")
    models_dir = os.path.join(build, "cache", "ocr")
    env = dict(os.environ, BERTH_BACKEND_PATH=os.path.join(build, "backends"))
    work = tempfile.mkdtemp(prefix="berth-start-")
    rows = []
    try:
        for backend in a.backends.split(","):
            src = os.path.join(ROOT, "config", "ocr-%s.ini" % backend)
            driver_modes = [("off", "true"), ("on", None)] if backend == "vulkan" else [(None, None)]
            for driver, disable in driver_modes:
                e = dict(env)
                if disable:
                    e["MESA_SHADER_CACHE_DISABLE"] = disable
                for model in a.models.split(","):
                    cache = os.path.join(work, "%s-%s-%s" % (backend, driver, model))
                    plain, kept = os.path.join(work, "plain.ini"), os.path.join(work, "kept-%s.ini" % model)
                    write_config(src, plain, models_dir, None)
                    write_config(src, kept, models_dir, cache)
                    first = start(berth, kept, model, e)  # fills the cache
                    times = {"none": [], "kept": []}
                    for _ in range(a.starts):
                        times["none"].append(start(berth, plain, model, e))
                        times["kept"].append(start(berth, kept, model, e))
                    files = sorted(os.listdir(cache)) if os.path.isdir(cache) else []
                    size = sum(os.path.getsize(os.path.join(cache, f)) for f in files)
                    rows.append((backend, driver, model, first, times, len(files), size))
                    shutil.rmtree(cache, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = ["| backend | driver's shader cache | model | first start, filling the cache (ms) | "
             "no cache: median, best (ms) | cache kept: median, best (ms) | none / kept | cache files, bytes |",
             "|---|---|---|---|---|---|---|---|"]
    for backend, driver, model, first, t, n, size in rows:
        mn, mk = statistics.median(t["none"]), statistics.median(t["kept"])
        lines.append("| %s | %s | %s | %.0f | %.0f, %.0f | %.0f, %.0f | %.2f | %d, %d |" % (
            backend, driver or "-", model, first, mn, min(t["none"]), mk, min(t["kept"]), mn / mk, n, size))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
