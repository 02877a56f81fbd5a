"""berth-ocr on the sample pages: every page read exactly (each true line
found, in reading order, its text identical), as text and as JSON; the
annotated images written; and bad images (empty, 1x1, 20000x20, a
truncated JPEG) each refused with one clear line while the pages beside
them are still read.

    check_pages.py BERTH_OCR CONFIG KEYS PAGES_DIR WORK [BACKEND]

With BACKEND, the config must put the detector on it (exit 77, a skip,
when berth fell back to cpu for want of a device)."""
import json
import os
import struct
import subprocess
import sys
import zlib

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def png(path, w, h, rows=None):
    """A grey PNG of w x h (white unless rows are given)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    raw = b"".join(b"\x00" + (rows[y] if rows else b"\xff" * w) for y in range(h))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def main():
    exe, config, keys, pages, work = sys.argv[1:6]
    backend = sys.argv[6] if len(sys.argv) > 6 else None
    os.makedirs(work, exist_ok=True)
    truth = {}
    with open(os.path.join(pages, "truth.txt"), encoding="utf-8") as f:
        for line in f:
            name, text = line.rstrip("\n").split("\t")
            truth.setdefault(name, []).append(text)
    paths = [os.path.join(pages, n) for n in sorted(truth)]
    draw = os.path.join(work, "drawn")
    r = subprocess.run([exe, config, keys, "--draw", draw] + paths, capture_output=True, text=True, timeout=540)
    print(r.stderr, end="")
    if backend and "detector on %s" % backend not in r.stderr:
        print("skipped: the detector did not run on %s (no device; berth fell back)" % backend)
        return 77
    check(r.returncode == 0, "exit status %d, want 0" % r.returncode)
    got = {}
    for line in r.stdout.splitlines():
        f = line.split("\t")
        check(len(f) == 5 and f[3].startswith("confidence ") and f[4].startswith("box "), "line format: " + line)
        if len(f) == 5:
            got.setdefault(os.path.basename(f[0]), []).append(f[2])
    for name, lines in truth.items():
        check(got.get(name) == lines, "%s: read %s, want %s" % (name, got.get(name), lines))
        drawn = os.path.join(draw, os.path.splitext(name)[0] + ".png")
        with open(drawn, "rb") if os.path.exists(drawn) else open(os.devnull, "rb") as f:
            head = f.read(24)
        check(head[:8] == b"\x89PNG\r\n\x1a\n", "%s: no annotated PNG at %s" % (name, drawn))

    r = subprocess.run([exe, "--json", config, keys] + paths, capture_output=True, text=True, timeout=540)
    check(r.returncode == 0, "--json: exit status %d" % r.returncode)
    try:
        doc = json.loads(r.stdout)
    except ValueError as e:
        check(False, "--json: not JSON (%s): %s" % (e, r.stdout[:300]))
        doc = []
    for page in doc:
        name = os.path.basename(page["file"])
        check([l["text"] for l in page["lines"]] == truth.get(name), "--json %s: texts differ" % name)
        for l in page["lines"]:
            inside = all(0 <= x < page["width"] and 0 <= y < page["height"] for x, y in l["box"])
            check(len(l["box"]) == 4 and inside and 0 < l["confidence"] <= 1, "--json %s: line %s" % (name, l))
        check(set(page["times_ms"]) == {"detect", "boxes", "classify", "recognize", "total"}, "--json: stage times")
    check(sum(l["turned"] for p in doc for l in p["lines"] if "upside" in p["file"]) ==
          len(truth.get("upside_down.png", [])), "the upside-down page's lines were turned back")

    bad = {"empty.png": None, "dot.png": (1, 1), "strip.png": (20000, 20), "truncated.jpg": "cut"}
    args = []
    for name, how in bad.items():
        p = os.path.join(work, name)
        if how is None:
            open(p, "wb").close()
        elif how == "cut":
            data = open(os.path.join(os.path.dirname(os.path.abspath(pages)), "latin_long.jpg"), "rb").read()
            open(p, "wb").write(data[:len(data) // 2])
        else:
            png(p, *how)
        args.append(p)
    good = os.path.join(pages, "receipt.png")
    r = subprocess.run([exe, config, keys, args[0], good, args[1], args[2], args[3]], capture_output=True,
                       text=True, timeout=540)
    check(r.returncode == 1, "bad images: exit status %d, want 1" % r.returncode)
    err = [l for l in r.stderr.splitlines() if l.startswith("berth-ocr: ")]
    for p in args:
        mine = [l for l in err if l.startswith("berth-ocr: " + p)]
        check(len(mine) == 1, "%s: %d error lines, want one: %s" % (p, len(mine), mine))
        print("  " + (mine[0] if mine else "(none)"))
    read = [l.split("\t")[2] for l in r.stdout.splitlines() if l.startswith(good + "\t")]
    check(read == truth["receipt.png"], "the good page beside bad ones: read %s" % read)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("ok: %d pages, %d lines" % (len(truth), sum(len(v) for v in truth.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
