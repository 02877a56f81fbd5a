"""64 requests at once on the first graph: every answer is its own
request's (checked against a NumPy forward pass over the weights file),
and /metrics shows that requests were merged into shared runs.
test_load.py [BACKEND]: on that backend (default cpu), two workers with
a run context each."""

import os
import sys
import threading

import numpy as np

import serve_fixture as fx
from serve_fixture import check

CLIENTS = 64


def reference(x):
    w = fx.safetensors.read(os.path.join(fx.SRC, "examples", "first", "first.safetensors"))
    h = np.maximum(x.astype(np.float64) @ w["layer1.weight"] + w["layer1.bias"], 0)
    return h @ w["layer2.weight"] + w["layer2.bias"]


def main():
    d = fx.model_dir()
    # Long enough a wait for company that requests arriving together share
    # runs even on a loaded machine; two workers, two run contexts.
    use = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    config = fx.first_config(d, serve="max_batch = 8\nmax_delay_us = 20000\nworkers = 2\n", use=use)
    s = fx.Server(config)
    check(any("model 'first' on %s:" % use in line for line in s.lines), "not on %s: %s" % (use, s.lines))
    rng = np.random.default_rng(1)
    rows = [1 + i % 3 for i in range(CLIENTS)]  # 1 to 3 rows each: merged batches of mixed sizes
    xs = [rng.standard_normal((r, 4)).astype(np.float32) for r in rows]
    results = [None] * CLIENTS
    start = threading.Barrier(CLIENTS)

    def client(i):
        c = fx.OipClient("127.0.0.1", s.port)
        start.wait()
        results[i] = c.infer("first", [{"name": "x", "datatype": "FP32", "shape": list(xs[i].shape),
                                         "data": xs[i]}], binary=i % 2 == 0, binary_outputs=i % 2 == 0)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, r in enumerate(results):
        check(r is not None and r.status == 200, "request %d: %s" % (i, r and r.error))
        got = r.as_numpy("y")
        want = reference(xs[i])
        check(got.shape == want.shape, "request %d: shape %r, expected %r" % (i, got.shape, want.shape))
        check(np.allclose(got, want, rtol=1e-5, atol=1e-5), "request %d: answer is not its own" % i)
    m = s.client.metrics()
    served = fx.metric(m, "berth_requests_total", "first")
    runs = fx.metric(m, "berth_batch_requests_count", "first")
    merged = fx.metric(m, "berth_batch_requests_sum", "first")
    rows_run = fx.metric(m, "berth_batch_rows_sum", "first")
    check(served == CLIENTS and merged == CLIENTS, "metrics count %d requests, %d in runs" % (served, merged))
    check(rows_run == sum(rows), "metrics count %d rows, %d sent" % (rows_run, sum(rows)))
    check(runs < CLIENTS, "no batching: %d runs for %d requests" % (runs, CLIENTS))
    check(fx.metric(m, "berth_queue_depth", "first") == 0, "queue not empty after the answers")
    rc, err = s.stop()
    check(rc == 0, "exit status %d: %s" % (rc, err))
    print("load on %s: %d concurrent requests answered right in %d runs (%.1f requests a run)" %
          (use, CLIENTS, runs, merged / runs))


if __name__ == "__main__":
    main()
