#!/usr/bin/env python3
"""The Python package's cost per call: the first graph (config/cpu.ini,
a batch of 1) run N times through berth.Session.run and through the C
API (berth run --repeat N, the same executor calls), median and p10 of
each, and their difference per call.

    PYTHONPATH=python BERTH_LIBRARY=build/engine/libberth.so.0 \\
        /usr/bin/python3 bench/python_overhead.py --berth build/apps/berth [--runs 5000]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
import berth  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--berth", required=True, help="the berth program of the same build")
    p.add_argument("--config", default=os.path.join(ROOT, "config", "cpu.ini"))
    p.add_argument("--runs", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    x = np.ones((1, 4), np.float32)
    rows = []
    with berth.Session(a.config, options=None) as s:
        s.run({"x": x})
        for r in range(a.rounds):
            t = []
            for _ in range(a.runs):
                t0 = time.perf_counter_ns()
                s.run({"x": x})
                t.append(time.perf_counter_ns() - t0)
            t.sort()
            py = (statistics.median(t) / 1e3, t[len(t) // 10] / 1e3)
            out = subprocess.run([a.berth, "run", a.config, "--repeat", str(a.runs)], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit("berth run failed: " + out.stderr)
            m = re.search(r"later runs: min ([0-9.]+) ms, median ([0-9.]+) ms", out.stdout + out.stderr)
            c = (float(m.group(2)) * 1e3, float(m.group(1)) * 1e3)
            rows.append((py, c))
            print("round %d: Session.run median %.1f us (p10 %.1f), C API median %.1f us (min %.1f): "
                  "%.1f us per call more" % (r + 1, py[0], py[1], c[0], c[1], py[0] - c[0]))
    best = min(rows, key=lambda rc: rc[0][0] - rc[1][0])
    print("overhead per call (the round with the least): %.1f us (Session.run %.1f us, C %.1f us)" %
          (best[0][0] - best[1][0], best[0][0], best[1][0]))


if __name__ == "__main__":
    main()
