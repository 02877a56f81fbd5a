"""Run berth-ocr on every sample and compare each line of text exactly
with samples/truth.txt.

  check_samples.py BERTH_OCR CONFIG KEYS SAMPLES_DIR [--batch]

--batch: the two narrowest samples five times each, interleaved, so that
eight of them share one batch=8 run (padded to a common width inside the
batch) and two run alone; every copy must still read right."""
import os
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def main():
    exe, config, keys, samples = sys.argv[1:5]
    batch_mode = "--batch" in sys.argv[5:]
    truth = {}
    with open(os.path.join(samples, "truth.txt"), encoding="utf-8") as f:
        for line in f:
            name, text = line.rstrip("\n").split("\t", 1)
            truth[name] = text
    check(len(truth) >= 4, "truth.txt lists at least 4 samples, found %d" % len(truth))
    names = sorted(truth)
    if batch_mode:
        names = ["latin_short.png", "zh_short.png"] * 5
    paths = [os.path.join(samples, n) for n in names]
    r = subprocess.run([exe, "--lines", config, keys] + paths, capture_output=True, text=True, timeout=540)
    sys.stderr.write(r.stderr)
    print(r.stdout, end="")
    check(r.returncode == 0, "exit status 0, found %d" % r.returncode)
    lines = r.stdout.splitlines()
    check(len(lines) == len(paths), "one line per image (%d), found %d" % (len(paths), len(lines)))
    batches = []
    for path, line in zip(paths, lines):
        fields = line.split("\t")
        check(len(fields) == 5, "5 tab-separated fields, found %d in %r" % (len(fields), line))
        if len(fields) != 5:
            continue
        got_path, text, conf, bucket, took = fields
        name = os.path.basename(path)
        check(got_path == path, "lines in command-line order: expected %s, found %s" % (path, got_path))
        check(text == truth[name], "%s: expected %r, found %r" % (name, truth[name], text))
        c = float(conf.split()[1]) if conf.startswith("confidence ") else -1
        check(0.5 < c <= 1.0, "%s: confidence in (0.5, 1], found %r" % (name, conf))
        check(bucket.startswith("bucket batch="), "%s: bucket field, found %r" % (name, bucket))
        check(took.startswith("time ") and " ms (batch of " in took, "%s: time field, found %r" % (name, took))
        batches.append((bucket, took.split("(batch of ")[1].split(";")[0].rstrip(")")))
    if batch_mode:
        eights = [b for b in batches if b == ("bucket batch=8 width=160", "8")]
        ones = [b for b in batches if b == ("bucket batch=1 width=160", "1")]
        check(len(eights) == 8 and len(ones) == 2,
              "8 images in one batch=8 width=160 run and 2 alone, found %s" % batches)
    print("%d passed, %d failed" % (len(paths) - min(len(failures), len(paths)), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
