"""10,000 runs through the package leave the process's resident memory
flat: no numpy array, ctypes buffer or engine output kept per run."""
import numpy as np

import berth
from conftest import FIRST


def _rss_kib():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import os
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def test_runs_do_not_grow_rss():
    x = np.random.default_rng(5).standard_normal((8, 4)).astype(np.float32)
    with berth.Session(FIRST) as s:
        c = s.context()
        for _ in range(1000):  # warm: plans, allocator pools, numpy caches
            s.run({"x": x})
            c.run({"x": x[:3]})
        before = _rss_kib()
        for i in range(10000):
            y = s.run({"x": x[: 1 + i % 8]})["y"]
            c.run({"x": x[: 1 + (i + 3) % 8]})
        after = _rss_kib()
        assert y.shape == (8, 3)
    assert after - before < 1024, "RSS grew by %d KiB over 10,000 runs" % (after - before)


def test_open_close_does_not_grow_rss():
    for _ in range(20):
        berth.Session(FIRST).close()
    before = _rss_kib()
    for _ in range(200):
        s = berth.Session(FIRST)
        s.context().run({"x": np.ones((2, 4), np.float32)})
        s.close()
    after = _rss_kib()
    assert after - before < 2048, "RSS grew by %d KiB over 200 sessions" % (after - before)
