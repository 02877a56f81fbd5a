"""Bad input to berth-ocr: each bad image gets one clear line on stderr
naming it and the reason, the good images between them are still read,
and the exit status is 1. Also the usage and config errors.

  check_bad_input.py BERTH_OCR CONFIG KEYS SAMPLES_DIR WORK_DIR"""
import os
import struct
import subprocess
import sys
import zlib

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def png(path, width, height):
    """A grey PNG written with the standard library only."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\0" + bytes([255]) * width for _ in range(height))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw)))
        f.write(chunk(b"IEND", b""))


def main():
    exe, config, keys, samples, work = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    missing = os.path.join(work, "no_such_image.png")
    text = os.path.join(work, "not_an_image.png")
    with open(text, "w") as f:
        f.write("just some text\n")
    wide = os.path.join(work, "too_wide.png")
    png(wide, 2000, 20)  # 4800 pixels wide at height 48
    # 200 MB once decoded: refused from its header's sizes instead.
    huge = os.path.join(work, "huge_65535x1024.png")
    png(huge, 65535, 1024)
    folder = os.path.join(work, "a_folder.png")
    os.makedirs(folder, exist_ok=True)
    cut = os.path.join(work, "truncated.png")
    with open(os.path.join(samples, "zh_short.png"), "rb") as f:
        head = f.read(60)
    with open(cut, "wb") as f:
        f.write(head)
    # Damaged in transit: a JPEG cut at 60% with its end marker put back
    # (libjpeg would decode the rest as grey), a PNG cut at 60% and one
    # with a bit flipped inside its image data.
    jpg_cut = os.path.join(work, "cut60.jpg")
    with open(os.path.join(samples, "latin_long.jpg"), "rb") as f:
        data = f.read()
    with open(jpg_cut, "wb") as f:
        f.write(data[:len(data) * 6 // 10] + b"\xff\xd9")
    png_cut = os.path.join(work, "cut60.png")
    with open(os.path.join(samples, "latin_sentence.png"), "rb") as f:
        data = bytearray(f.read())
    with open(png_cut, "wb") as f:
        f.write(data[:len(data) * 6 // 10])
    assert data[37:41] == b"IDAT"
    data[41 + struct.unpack(">I", data[33:37])[0] // 2] ^= 0x10
    png_flip = os.path.join(work, "flipped_idat.png")
    with open(png_flip, "wb") as f:
        f.write(data)
    good1 = os.path.join(samples, "latin_short.png")
    good2 = os.path.join(samples, "zh_mixed.png")

    args = [missing, good1, text, wide, huge, folder, cut, jpg_cut, png_cut, png_flip, good2]
    r = subprocess.run([exe, "--lines", config, keys] + args, capture_output=True, text=True, timeout=540)
    sys.stderr.write(r.stderr)
    print(r.stdout, end="")
    check(r.returncode == 1, "exit status 1 when some images fail, found %d" % r.returncode)
    out = [l.split("\t") for l in r.stdout.splitlines()]
    check([o[0] for o in out] == [good1, good2], "only the good images on stdout, found %s" % out)
    check(len(out) == 2 and out[0][1] == "Hello" and out[1][1] == "北京欢迎你2008",
          "the good images still read right, found %s" % out)
    err = [l for l in r.stderr.splitlines() if l.startswith("berth-ocr: ")]
    want = {
        missing: "cannot open the image: No such file or directory",
        text: "not a PNG or JPEG image (first bytes 6a 75 73 74)",
        wide: "2000x20 image is 4800 pixels wide at height 48; the widest bucket takes 1280",
        huge: "65535x1024 image is 3072 pixels wide at height 48; the widest bucket takes 1280",
        folder: "the image is a directory, expected a regular file",
        cut: "bad PNG",
        jpg_cut: "bad JPEG: Corrupt JPEG data: premature end of data segment",
        png_cut: "bad PNG: read beyond end of data",
        png_flip: "bad PNG: IDAT: ",
    }
    for path, reason in want.items():
        mine = [l for l in err if l.startswith("berth-ocr: %s: " % path)]
        check(len(mine) == 1, "one error line for %s, found %s" % (path, mine))
        check(bool(mine) and reason in mine[0], "%s: error says %r, found %s" % (path, reason, mine))
    check(len(err) == len(want), "%d error lines, found %d" % (len(want), len(err)))

    r = subprocess.run([exe, config, keys], capture_output=True, text=True)
    check(r.returncode == 2 and "usage: berth-ocr" in r.stderr, "no image: usage, exit 2")
    r = subprocess.run([exe, "--frobnicate", config, keys, good1], capture_output=True, text=True)
    check(r.returncode == 2 and "usage: berth-ocr" in r.stderr, "unknown flag: usage, exit 2")
    r = subprocess.run([exe, "--lines", os.path.join(work, "none.ini"), keys, good1], capture_output=True, text=True)
    check(r.returncode == 1 and "none.ini" in r.stderr, "missing config named, exit 1: %r" % r.stderr)
    r = subprocess.run([exe, "--lines", config, missing, good1], capture_output=True, text=True)
    check(r.returncode == 1 and "no_such_image.png: cannot open the key file" in r.stderr,
          "missing key file named, exit 1: %r" % r.stderr)
    # A key file of the wrong length: every image fails with the class count.
    short = os.path.join(work, "short_keys.txt")
    with open(short, "w") as f:
        f.write("a\nb\n")
    r = subprocess.run([exe, "--lines", config, short, good1], capture_output=True, text=True, timeout=540)
    check(r.returncode == 1 and "expected float32 [1, steps, 4]" in r.stderr and "6625" in r.stderr,
          "key file with the wrong class count: %r" % r.stderr)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
