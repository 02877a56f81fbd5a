"""berth.Session and berth.Context on the first graph: answers equal to
berth run's bit for bit, composed sessions, contexts on threads, types,
memory and the backends listing."""
import os
import threading

import numpy as np
import pytest

import berth
from conftest import FIRST, FIRST_GRAPH, FIRST_WEIGHTS, berth_run


def test_first_graph_equals_berth_run(tmp_path):
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    with berth.Session(FIRST) as s:
        got = s.run({"x": x})
        assert s.last_bucket == 2  # batch=8: the smallest of 1, 4, 8 that holds 5 rows
    want = berth_run(tmp_path, FIRST, {"x": x})
    assert list(got) == ["y"]
    assert got["y"].dtype == np.float32 and got["y"].shape == (5, 3)
    assert got["y"].tobytes() == want["y"].tobytes()


def test_io_description():
    with berth.Session(FIRST) as s:
        assert s.inputs == [berth.IOInfo("x", np.dtype(np.float32), (None, 4))]
        assert s.outputs == [berth.IOInfo("y", np.dtype(np.float32), (None, 3))]
        assert s.buckets() == ["batch=1", "batch=4", "batch=8"]
        assert s.backend == "cpu" and s.backends[0][0] == "cpu"
        assert s.lanes == ["main"]


def test_composed_session_equals_config():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    with berth.Session(FIRST) as a, berth.Session(FIRST_GRAPH, FIRST_WEIGHTS, backend="cpu",
                                                  options={"threads": 2}, buckets=["batch=1", "batch=4", "batch=8"]) as b:
        assert b.buckets() == ["batch=1", "batch=4", "batch=8"]
        assert a.run({"x": x})["y"].tobytes() == b.run({"x": x})["y"].tobytes()


def test_outputs_are_owned_copies():
    x = np.ones((2, 4), np.float32)
    with berth.Session(FIRST) as s:
        y1 = s.run({"x": x})["y"]
        y1_copy = y1.copy()
        s.run({"x": -x})
        assert y1.tobytes() == y1_copy.tobytes()  # a later run does not write into an earlier result
        assert y1.flags.owndata or y1.base is not None


def test_input_conversions():
    x = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    with berth.Session(FIRST) as s:
        want = s.run({"x": np.ascontiguousarray(x[:, ::2])})["y"]
        # a strided view is copied once, the same answer
        assert s.run({"x": x[:, ::2]})["y"].tobytes() == want.tobytes()
        # a Fortran-ordered array too
        assert s.run({"x": np.asfortranarray(x[:, ::2])})["y"].tobytes() == want.tobytes()
        # a list is converted to the input's dtype
        assert s.run({"x": x[:, ::2].tolist()})["y"].tobytes() == want.tobytes()


def test_prepare_and_memory():
    with berth.Session(FIRST) as s:
        m0 = s.memory()
        assert m0["warm_plans"] == 0 and m0["plans"] == 0
        assert m0["weights"] > 0 and m0["backends"][0]["weights"] == m0["weights"]
        assert not s.is_warm("batch=4")
        s.prepare("batch=4")
        assert s.is_warm("batch=4") and s.is_warm(1)
        m1 = s.memory()
        assert m1["warm_plans"] == 1 and m1["plans"] > 0 and m1["weights"] == m0["weights"]


def test_contexts_on_threads_give_single_thread_answers():
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((1 + i % 8, 4)).astype(np.float32) for i in range(64)]
    with berth.Session(FIRST) as s:
        want = [s.run({"x": x})["y"].tobytes() for x in xs]
        got = [[None] * len(xs) for _ in range(4)]
        errors = []

        def work(t):
            try:
                with s.context() as c:
                    for r in range(5):
                        for i, x in enumerate(xs):
                            got[t][i] = c.run({"x": x})["y"].tobytes()
            except Exception as e:  # reported below, with the thread's number
                errors.append((t, e))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors
        for t in range(4):
            assert got[t] == want
        assert s.memory()["weights"] == berth.Session(FIRST).memory()["weights"]


def test_types_both_ways(tmp_path):
    graph = tmp_path / "types.webnn"
    graph.write_text('''webnn_graph "types" v2 {
  inputs {
    h: f16[2, 3];
    i: i32[2, 3];
    l: i64[2, 3];
    b: u8[2, 3];
    s: i8[2, 3];
    f: f32[2, 3];
  }
  nodes {
    h2 = add(h, h);
    i2 = add(i, i);
    l2 = add(l, l);
    b2 = identity(b);
    s2 = identity(s);
    f2 = cast(h, type="float32");
  }
  outputs { h2; i2; l2; b2; s2; f2; }
}
''')
    weights = tmp_path / "empty.safetensors"
    weights.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    h = np.array([[0.5, -1.25, 3], [65504 / 4, -0.0, 1e-4]], np.float16)
    i = np.array([[1, -2, 3], [2 ** 30, -(2 ** 30), 0]], np.int32)
    l = np.array([[1, -2, 3], [2 ** 60, -(2 ** 60), 0]], np.int64)
    b = np.array([[True, False, True], [False, False, True]])
    sg = np.array([[1, -2, 127], [-127, 0, 5]], np.int8)
    with berth.Session(str(graph), str(weights)) as s:
        assert [x.dtype for x in s.inputs] == [np.float16, np.int32, np.int64, np.uint8, np.int8, np.float32]
        out = s.run({"h": h, "i": i, "l": l, "b": b, "s": sg, "f": np.zeros((2, 3), np.float32)})
    assert out["h2"].dtype == np.float16 and (out["h2"] == h + h).all()
    assert out["i2"].dtype == np.int32 and (out["i2"] == i + i).all()
    assert out["l2"].dtype == np.int64 and (out["l2"] == l + l).all()
    assert out["b2"].dtype == np.uint8 and (out["b2"] == b.astype(np.uint8)).all()
    assert out["s2"].dtype == np.int8 and (out["s2"] == sg).all()
    assert out["f2"].dtype == np.float32 and (out["f2"] == h.astype(np.float32)).all()


def test_bfloat16_bits_are_widened_exactly():
    x = np.array([[1.5, -2.0, 0.15625, 3.0], [-0.0, 2.0 ** 100, -(2.0 ** -100), 7.0]], np.float32)
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)  # these values are exact in bfloat16
    widened = berth.from_bfloat16(bits)
    assert widened.dtype == np.float32 and widened.tobytes() == x.tobytes()
    try:
        import ml_dtypes  # where installed, its bfloat16 arrays feed float32 inputs directly
    except ImportError:
        ml_dtypes = None
    with berth.Session(FIRST) as s:
        want = s.run({"x": widened})["y"]
        if ml_dtypes is not None:
            assert s.run({"x": x.astype(ml_dtypes.bfloat16)})["y"].tobytes() == want.tobytes()


def test_backends_listing(tmp_path):
    bogus = tmp_path / "libberth-bogus.so"
    bogus.write_bytes(b"not a shared object")
    found = berth.backends([str(tmp_path)])
    mine = [b for b in found if b.path.endswith("libberth-bogus.so")]
    assert len(mine) == 1 and mine[0].name is None and mine[0].error
    cpu = [b for b in found if b.name == "cpu"]
    assert cpu and cpu[0].error is None and cpu[0].device and cpu[0].abi_version >= 1
