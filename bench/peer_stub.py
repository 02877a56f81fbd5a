#!/usr/bin/python3
"""peer_stub.py MODEL THREADS SPEC.json [--load BUCKET]

A stand-in for ort_peer.js in bench_smoke, which must run without the
npm registry: it speaks the same line protocol and times a small numpy
product per request, so the harness's pipes, the pairing and the report
are all exercised. Its times mean nothing; `make bench` never uses it."""
import json
import sys
import time

import numpy as np


def main(argv):
    spec = json.load(open(argv[2]))
    a = np.ones((64, 64), np.float32)

    def work():
        t0 = time.monotonic_ns()
        (a @ a).sum()
        return time.monotonic_ns() - t0

    if len(argv) > 3 and argv[3] == "--load":
        work()
        hwm = [l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")]
        print(json.dumps({"first_output_ns": work(), "peak_rss_kb": int(hwm[0]) if hwm else -1}))
        return 0
    print("peer_stub (%d inputs), loaded in 0 ns" % len(spec["inputs"]), flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] == "quit":
            break
        if cmd[0] == "bucket":
            print("ok %d" % work(), flush=True)
        elif cmd[0] == "run":
            print("t %d" % work(), flush=True)
        else:
            print("error peer_stub does not answer '%s'" % line.strip(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
