"""berth.ocr on the sample pages: every true line read, in order, and the
same lines, confidences and boxes as berth-ocr gives; a page given as
pixels (RGB, RGBA, grey) reads as its file does; bad images raise."""
import json
import os
import struct
import subprocess
import zlib

import numpy as np
import pytest

import berth
from conftest import ROOT, env_path

PAGES = os.path.join(ROOT, "samples", "pages")


def _truth():
    truth = {}
    with open(os.path.join(PAGES, "truth.txt"), encoding="utf-8") as f:
        for line in f:
            name, text = line.rstrip("\n").split("\t")
            truth.setdefault(name, []).append(text)
    return truth


def _decode_png(path):
    """8-bit RGB, non-interlaced PNG (the sample pages) to an array."""
    with open(path, "rb") as f:
        data = f.read()
    pos, idat, w, h = 8, b"", 0, 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color == 2, "a sample page is 8-bit RGB"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    out = np.zeros((h, w * 3), np.int32)
    stride = w * 3 + 1
    for y in range(h):
        f, row = raw[y * stride], np.frombuffer(raw[y * stride + 1:(y + 1) * stride], np.uint8).astype(np.int32)
        prev = out[y - 1] if y else np.zeros(w * 3, np.int32)
        if f == 0:
            cur = row
        elif f == 2:
            cur = (row + prev) & 255
        else:  # 1 (sub), 3 (average), 4 (Paeth) depend on the pixel to the left
            cur = np.zeros(w * 3, np.int32)
            for x in range(w * 3):
                a = cur[x - 3] if x >= 3 else 0
                b, c = prev[x], prev[x - 3] if x >= 3 else 0
                if f == 1:
                    p = a
                elif f == 3:
                    p = (a + b) // 2
                else:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else b if pb <= pc else c
                cur[x] = (row[x] + p) & 255
        out[y] = cur
    return out.astype(np.uint8).reshape(h, w, 3)


@pytest.fixture(scope="module")
def reader():
    with berth.ocr.Reader(env_path("BERTH_OCR_CONFIG"), env_path("BERTH_OCR_KEYS")) as r:
        yield r


def test_pages_equal_truth_and_berth_ocr(reader):
    truth = _truth()
    paths = [os.path.join(PAGES, n) for n in sorted(truth)]
    r = subprocess.run([env_path("BERTH_OCR_PROGRAM"), env_path("BERTH_OCR_CONFIG"), env_path("BERTH_OCR_KEYS"),
                        "--json"] + paths, capture_output=True, text=True, timeout=540)
    assert r.returncode == 0, r.stderr
    want = {os.path.basename(p["file"]): p for p in json.loads(r.stdout)}
    for path in paths:
        name = os.path.basename(path)
        lines = reader.read(path)
        assert [l.text for l in lines] == truth[name], name
        assert [l.text for l in lines] == [l["text"] for l in want[name]["lines"]]
        assert ["%.4f" % l.score for l in lines] == ["%.4f" % l["confidence"] for l in want[name]["lines"]]
        assert [[["%.0f" % v for v in c] for c in l.box] for l in lines] == \
               [[["%.0f" % v for v in c] for c in l["box"]] for l in want[name]["lines"]]
        assert [l.turned for l in lines] == [l["turned"] for l in want[name]["lines"]]
        assert reader.times_ms["total"] > 0


def test_pixels_read_as_the_file(reader):
    path = os.path.join(PAGES, "receipt.png")
    rgb = _decode_png(path)
    want = reader.read(path)
    assert reader.read(rgb) == want
    assert reader.read(np.asfortranarray(rgb)) == want  # any layout: copied into rows
    rgba = np.concatenate([rgb, np.full(rgb.shape[:2] + (1,), 255, np.uint8)], axis=2)
    assert reader.read(rgba) == want  # opaque: the same pixels
    grey = rgb[:, :, 1].copy()
    assert [l.text for l in reader.read(grey)] == [l.text for l in want]


def test_module_read_keeps_a_reader():
    path = os.path.join(PAGES, "document.png")
    a = berth.ocr.read(path, env_path("BERTH_OCR_CONFIG"), env_path("BERTH_OCR_KEYS"))
    b = berth.ocr.read(path, env_path("BERTH_OCR_CONFIG"), env_path("BERTH_OCR_KEYS"))
    assert a == b and len(berth.ocr._readers) == 1
    assert [l.text for l in a] == _truth()["document.png"]


def test_bad_images(reader, tmp_path, monkeypatch):
    with pytest.raises(berth.Error) as e:
        reader.read(str(tmp_path / "missing.png"))
    assert "missing.png" in e.value.message
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with pytest.raises(berth.Error) as e:
        reader.read(str(bad))
    assert "bad.png" in e.value.message
    with pytest.raises(berth.InvalidError, match="a page is at least"):
        reader.read(np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(berth.InvalidError, match="expected uint8"):
        reader.read(np.zeros((40, 40, 3), np.float32))
    with pytest.raises(berth.InvalidError, match="shape"):
        reader.read(np.zeros((40, 40, 2), np.uint8))
    monkeypatch.delenv("BERTH_OCR_CONFIG")
    with pytest.raises(berth.InvalidError, match="expected config and keys"):
        berth.ocr.read(os.path.join(PAGES, "receipt.png"))


def test_bad_config(tmp_path):
    with pytest.raises(berth.Error) as e:
        berth.ocr.Reader(str(tmp_path / "none.ini"), str(tmp_path / "keys.txt"))
    assert "none.ini" in e.value.message
