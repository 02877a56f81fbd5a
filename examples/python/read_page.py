#!/usr/bin/env python3
"""Read the text of pages with the shipped OCR pipeline.

    scripts/ocr-models --cache build/cache      # the models, once
    PYTHONPATH=python python3 examples/python/read_page.py samples/pages/receipt.png
"""
import os
import sys

import berth

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
config = os.environ.get("BERTH_OCR_CONFIG", os.path.join(root, "config", "ocr-cpu.ini"))
keys = os.environ.get("BERTH_OCR_KEYS", os.path.join(root, "build", "cache", "package", "assets", "ppocr_keys_v1.txt"))

with berth.ocr.Reader(config, keys) as reader:
    for path in sys.argv[1:] or [os.path.join(root, "samples", "pages", "receipt.png")]:
        for n, line in enumerate(reader.read(path), 1):
            corners = " ".join("%.0f,%.0f" % c for c in line.box)
            print("%s\t%d\t%s\tconfidence %.4f\tbox %s" % (path, n, line.text, line.score, corners))
        print("%s: %.1f ms" % (path, reader.times_ms["total"]), file=sys.stderr)
