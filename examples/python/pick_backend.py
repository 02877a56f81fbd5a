#!/usr/bin/env python3
"""Pick the backend by config: the same model on each backend installed,
each answer compared with cpu's.

    PYTHONPATH=python python3 examples/python/pick_backend.py [CONFIG]
"""
import os
import sys

import numpy as np

import berth

here = os.path.dirname(os.path.abspath(__file__))
config = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "config", "cpu.ini")

usable = []
for b in berth.backends():
    print("%-8s %s" % (b.name or "-", b.device if b.error is None else "not usable: " + b.error))
    if b.error is None and b.name not in usable:
        usable.append(b.name)

with berth.Session(config, backend="cpu") as ref:
    feeds = ref.sample_inputs()
    want = ref.run(feeds)
for name in usable:
    # one line of config, `[backend] use`, picks the hardware; nothing else changes
    with berth.Session(config, backend=name) as s:
        got = s.run(feeds)
        worst = max(float(np.max(np.abs(got[k].astype(np.float64) - want[k]))) for k in want)
        print("%s on %s: largest difference from cpu %.3g" % (name, s.device, worst))
