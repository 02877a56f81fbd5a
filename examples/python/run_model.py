#!/usr/bin/env python3
"""Run a model from its config on numpy arrays, then from code alone.

    PYTHONPATH=python python3 examples/python/run_model.py [CONFIG]
"""
import os
import sys

import numpy as np

import berth

here = os.path.dirname(os.path.abspath(__file__))
config = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "config", "cpu.ini")

with berth.Session(config) as s:
    print("opened", s)
    for i in s.inputs:
        print("input ", i.name, i.dtype, i.shape)
    for o in s.outputs:
        print("output", o.name, o.dtype, o.shape)
    feeds = s.sample_inputs()                 # berth run's values at the first bucket's sizes
    out = s.run(feeds)
    for name, y in out.items():
        print(name, y.shape, y.dtype, y.reshape(-1)[:4])
    print("bucket", s.buckets()[s.last_bucket], "memory", s.memory())

# The same first graph with no config file: graph, weights, backend and buckets in code.
first = os.path.join(here, "..", "first")
with berth.Session(os.path.join(first, "first.webnn"), os.path.join(first, "first.safetensors"),
                   backend="cpu", options={"threads": 1}, buckets=["batch=1", "batch=8"]) as s:
    y = s.run({"x": np.ones((2, 4), np.float32)})["y"]
    print("composed session:", y)
