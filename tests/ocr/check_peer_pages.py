"""berth-ocr against the peer pipeline, @gutenye/ocr-node (PP-OCR on
onnxruntime-node), on the sample pages: the same lines, and for each
matched line the boxes overlapping with IoU >= 0.8.

    check_peer_pages.py BERTH_OCR CONFIG KEYS PAGES_DIR PEER_DIR PEER_JS

Two differences of the peer are undone before comparing, both read from
its source: it joins the boxes whose midlines lie within half the average
box height into one line (texts joined with a space, the box from the
first's left edge to the last's right), so berth's boxes are grouped the
same way; and it reports boxes in the frame of the image it ran the
detector on (the page scaled to fit, centred and padded, in sides rounded
up to multiples of 32), so its boxes are mapped back onto the page. The
peer has no angle classifier, so the upside-down page is left out. Lines
are matched by their text with spaces removed; where the two read a line
differently, the page's true line says which is right, and the peer being
wrong is reported, not failed."""
import json
import math
import os
import subprocess
import sys

import numpy as np

FAILS = []
MIN_IOU = 0.8


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def mask(box, w, h):
    yy, xx = np.mgrid[0:h, 0:w] + 0.5
    inside = np.ones((h, w), bool)
    area = sum(box[i][0] * box[(i + 1) % 4][1] - box[(i + 1) % 4][0] * box[i][1] for i in range(4))
    sign = 1 if area > 0 else -1
    for i in range(4):
        (x0, y0), (x1, y1) = box[i], box[(i + 1) % 4]
        inside &= sign * ((x1 - x0) * (yy - y0) - (y1 - y0) * (xx - x0)) >= 0
    return inside


def iou(a, b, w, h):
    ma, mb = mask(a, w, h), mask(b, w, h)
    return float((ma & mb).sum()) / max(float((ma | mb).sum()), 1.0)


def group(lines):
    """The peer's grouping of boxes into lines, applied to berth's."""
    if not lines:
        return []
    avg = sum(l["box"][2][1] - l["box"][0][1] for l in lines) / len(lines)
    groups = []
    for l in lines:
        mid = (l["box"][0][1] + l["box"][2][1]) / 2
        g = next((g for g in groups if abs((g[0]["box"][0][1] + g[0]["box"][2][1]) / 2 - mid) < avg / 2), None)
        if g:
            g.append(l)
        else:
            groups.append([l])
    return [{"text": " ".join(l["text"] for l in g),
             "box": [g[0]["box"][0], g[-1]["box"][1], g[-1]["box"][2], g[0]["box"][3]]} for g in groups]


def main():
    exe, config, keys, pages, peer_dir, peer_js = sys.argv[1:7]
    truth = {}
    with open(os.path.join(pages, "truth.txt"), encoding="utf-8") as f:
        for line in f:
            name, text = line.rstrip("\n").split("\t")
            truth.setdefault(name, []).append(text)
    names = [n for n in sorted(truth) if "upside" not in n]
    paths = [os.path.join(pages, n) for n in names]
    r = subprocess.run([exe, "--json", config, keys] + paths, capture_output=True, text=True, timeout=540)
    check(r.returncode == 0, "berth-ocr exit status %d: %s" % (r.returncode, r.stderr[-500:]))
    ours = {os.path.basename(p["file"]): p for p in json.loads(r.stdout or "[]")}
    # An ES module resolves packages from where it lies: run a copy in PEER_DIR.
    script = os.path.join(peer_dir, os.path.basename(peer_js))
    with open(peer_js, "rb") as src, open(script, "wb") as dst:
        dst.write(src.read())
    r = subprocess.run(["node", script] + [os.path.abspath(p) for p in paths], capture_output=True, text=True,
                       timeout=540)
    check(r.returncode == 0, "the peer exited with %d: %s" % (r.returncode, r.stderr[-500:]))
    theirs = {os.path.basename(p["file"]): p for p in map(json.loads, r.stdout.splitlines())}
    matched = exact = 0
    for name in names:
        if name not in ours or name not in theirs:
            check(False, "%s: missing from %s" % (name, "berth" if name not in ours else "the peer"))
            continue
        page = ours[name]
        w, h = page["width"], page["height"]
        fw, fh = math.ceil(w / 32) * 32, math.ceil(h / 32) * 32
        s = min(fw / w, fh / h)
        ox, oy = (fw - w * s) / 2, (fh - h * s) / 2
        peer = [{"text": l["text"], "box": [[(x - ox) / s, (y - oy) / s] for x, y in l["box"]]}
                for l in theirs[name]["lines"]]
        true_rows = [l["text"] for l in group([{"text": t, "box": b["box"]}
                                                for t, b in zip(truth[name], page["lines"])])] \
            if len(truth[name]) == len(page["lines"]) else []
        for row in group(page["lines"]):
            key = row["text"].replace(" ", "")
            twin = [p for p in peer if p["text"].replace(" ", "") == key]
            check(len(twin) == 1, "%s: berth's line '%s' has no peer line (the peer read %s)"
                  % (name, row["text"], [p["text"] for p in peer]))
            if len(twin) != 1:
                continue
            matched += 1
            v = iou(row["box"], twin[0]["box"], w, h)
            check(v >= MIN_IOU, "%s: '%s': box IoU %.3f < %.1f" % (name, row["text"], v, MIN_IOU))
            if twin[0]["text"] == row["text"]:
                exact += 1
                note = ""
            else:
                right = row["text"] in true_rows
                check(right, "%s: berth reads '%s', the peer '%s', the page says otherwise"
                      % (name, row["text"], twin[0]["text"]))
                note = "  (the peer reads '%s'; the page says '%s')" % (twin[0]["text"], row["text"])
            print("%-14s IoU %.3f  %s%s" % (name, v, row["text"], note))
        check(len(peer) == len(group(page["lines"])), "%s: the peer has %d lines, berth %d"
              % (name, len(peer), len(group(page["lines"]))))
        print("%-14s berth %.0f ms, peer %.0f ms" % (name, sum(page["times_ms"].values()), theirs[name]["ms"]))
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("ok: %d lines matched (%d with identical text), every box IoU >= %.1f" % (matched, exact, MIN_IOU))
    return 0


if __name__ == "__main__":
    sys.exit(main())
