"""The package on real models: PP-OCRv4's recognizer in float32 and with
int8 weights, each run equal to berth run's bit for bit."""
import numpy as np

import berth
from conftest import berth_run, env_path


def _check(tmp_path, config, model):
    with berth.Session(config, model=model) as s:
        (inp,) = s.inputs
        assert inp.shape[:3] == (None, 3, 48)
        x = np.random.default_rng(7).uniform(-1, 1, (2, 3, 48, 200)).astype(np.float32)
        got = s.run({inp.name: x})
        want = berth_run(tmp_path, config, {inp.name: x}, model=model)
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name].shape == want[name].shape and got[name].dtype == want[name].dtype
        assert got[name].tobytes() == want[name].tobytes(), name


def test_recognizer_equals_berth_run(tmp_path):
    _check(tmp_path, env_path("BERTH_OCR_CONFIG"), "rec")


def test_int8_recognizer_equals_berth_run(tmp_path):
    _check(tmp_path, env_path("BERTH_OCR_INT8_CONFIG"), "rec")
