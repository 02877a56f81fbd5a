"""Every error path of the package raises berth.Error (the subclass of the
engine's status) with a message naming what was wrong."""
import os
import threading

import numpy as np
import pytest

import berth
from conftest import FIRST, FIRST_GRAPH, FIRST_WEIGHTS


def test_missing_config(tmp_path):
    with pytest.raises(berth.Error) as e:
        berth.Session(str(tmp_path / "nope.ini"))
    assert "nope.ini" in e.value.message and e.value.status != 0


def test_bad_config_key(tmp_path):
    ini = tmp_path / "bad.ini"
    ini.write_text("[model]\ngraph = %s\nweights = %s\nfrobnicate = 1\n" % (FIRST_GRAPH, FIRST_WEIGHTS))
    with pytest.raises(berth.InvalidError) as e:
        berth.Session(str(ini))
    assert "bad.ini:4" in e.value.message and "frobnicate" in e.value.message
    assert isinstance(e.value, ValueError)


def test_unknown_backend():
    with pytest.raises(berth.Error) as e:
        berth.Session(FIRST_GRAPH, FIRST_WEIGHTS, backend="nosuch")
    assert "nosuch" in e.value.message


def test_unknown_backend_option():
    with pytest.raises(berth.InvalidError) as e:
        berth.Session(FIRST_GRAPH, FIRST_WEIGHTS, backend="cpu", options={"cpu": {"speed": "max"}})
    assert "speed" in e.value.message


def test_flat_options_need_one_backend():
    with pytest.raises(berth.InvalidError) as e:
        berth.Session(FIRST_GRAPH, FIRST_WEIGHTS, backend="vulkan, cpu", options={"threads": 2})
    assert "one dict per backend" in e.value.message


def test_option_values_are_one_line():
    with pytest.raises(berth.InvalidError) as e:
        berth.Session(FIRST_GRAPH, FIRST_WEIGHTS, options={"threads": "2\n[model]"})
    assert "one line" in e.value.message


def test_missing_weights(tmp_path):
    with pytest.raises(berth.Error) as e:
        berth.Session(FIRST_GRAPH, str(tmp_path / "gone.safetensors"))
    assert "gone.safetensors" in e.value.message


def test_run_errors():
    with berth.Session(FIRST) as s:
        x = np.zeros((2, 4), np.float32)
        with pytest.raises(berth.InvalidError, match="expected dtype float32, found float64"):
            s.run({"x": x.astype(np.float64)})
        with pytest.raises(berth.InvalidError, match="missing input 'x'"):
            s.run({})
        with pytest.raises(berth.InvalidError, match="no input 'z'"):
            s.run({"x": x, "z": x})
        with pytest.raises(berth.InvalidError, match="no output 'w'"):
            s.run({"x": x}, outputs=["w"])
        with pytest.raises(berth.InvalidError, match="expected a dict"):
            s.run([x])
        with pytest.raises(berth.InvalidError) as e:  # the engine's own check: 9 rows, at most 8
            s.run({"x": np.zeros((9, 4), np.float32)})
        assert "'x'" in e.value.message or " x" in e.value.message
        with pytest.raises(berth.InvalidError) as e:
            s.run({"x": np.zeros((2, 5), np.float32)})
        assert "x" in e.value.message
        with pytest.raises(berth.InvalidError, match="no bucket 'batch=3'"):
            s.prepare("batch=3")
        with pytest.raises(berth.InvalidError, match="no lane 'other'"):
            s.run({"x": x}, lane="other")
        # a session is one thread's at a time
        s._lock.acquire()
        try:
            with pytest.raises(berth.InvalidError, match="busy"):
                s.run({"x": x})
        finally:
            s._lock.release()
        s.run({"x": x})  # and usable again


def test_closed_session_and_context():
    s = berth.Session(FIRST)
    c = s.context()
    s.close()
    with pytest.raises(berth.InvalidError, match="closed"):
        s.run({"x": np.zeros((1, 4), np.float32)})
    with pytest.raises(berth.InvalidError, match="closed"):
        c.run({"x": np.zeros((1, 4), np.float32)})
    s.close()  # twice is harmless


def test_bad_log_level():
    with pytest.raises(berth.InvalidError, match="log_level"):
        berth.Session(FIRST, log_level="loud")


def test_config_with_composition_arguments():
    with pytest.raises(berth.InvalidError, match="set in the config"):
        berth.Session(FIRST, buckets="batch=2")
