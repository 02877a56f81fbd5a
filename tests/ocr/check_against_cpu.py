"""berth-ocr on another deployment of the recognizer against the cpu backend.

  check_against_cpu.py BERTH_OCR LABEL CONFIG CPU_CONFIG KEYS SAMPLES_DIR WORK_DIR

LABEL names CONFIG's deployment in messages: `vulkan` (the vulkan
backend) or `split` (the graph split between backends, split = on).
Every sample of samples/truth.txt is read on each: the text must be the
truth and identical on both. Then one sample's raw output (the class
probabilities, --dump-output) must agree within the conformance
tolerance, |other - cpu| <= 1e-4 + 1e-3 |cpu| elementwise.

The vulkan config falls back to cpu where no Vulkan device exists; that
fallback would make the comparison empty, so the test reports itself
skipped (exit 77) when berth says it skipped the vulkan backend. Any
other deployment that skips a backend fails."""
import os
import subprocess
import sys

import numpy as np

ATOL, RTOL = 1e-4, 1e-3
DUMP_SAMPLE = "zh_short.png"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def run(exe, config, keys, paths, dump=None, label="cpu"):
    cmd = [exe, "--lines"] + (["--dump-output", dump] if dump else []) + [config, keys] + paths
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=540)
    sys.stderr.write(r.stderr)
    if label == "vulkan" and "backend 'vulkan' skipped" in r.stderr:
        print("SKIP: berth used another backend than vulkan (no usable Vulkan device)", file=sys.stderr)
        sys.exit(77)
    check(label == "cpu" or "skipped" not in r.stderr, "%s: no backend skipped" % label)
    # split: the line saying where the recognizer runs names every backend it holds
    check(label != "split" or ("recognizer on " in r.stderr and " and cpu (" in r.stderr and ", split" in r.stderr),
          "split: berth-ocr names both backends of the split recognizer")
    check(r.returncode == 0, "%s: exit status 0, found %d" % (os.path.basename(config), r.returncode))
    texts = {}
    for line in r.stdout.splitlines():
        fields = line.split("\t")
        if len(fields) >= 2:
            texts[os.path.basename(fields[0])] = fields[1]
    return texts


def main():
    exe, label, other_config, cpu_config, keys, samples, work = sys.argv[1:8]
    os.makedirs(work, exist_ok=True)
    truth = {}
    with open(os.path.join(samples, "truth.txt"), encoding="utf-8") as f:
        for line in f:
            name, text = line.rstrip("\n").split("\t", 1)
            truth[name] = text
    names = sorted(truth)
    check(DUMP_SAMPLE in truth, "truth.txt lists %s" % DUMP_SAMPLE)
    paths = [os.path.join(samples, n) for n in names]
    other = run(exe, other_config, keys, paths, label=label)
    cpu = run(exe, cpu_config, keys, paths)
    for n in names:
        check(other.get(n) == truth[n], "%s on %s: expected %r, found %r" % (n, label, truth[n], other.get(n)))
        check(other.get(n) == cpu.get(n), "%s: %s read %r, cpu %r" % (n, label, other.get(n), cpu.get(n)))

    dumps = {}
    for tag, config in ((label, other_config), ("cpu", cpu_config)):
        dumps[tag] = os.path.join(work, "%s.%s.out.npy" % (DUMP_SAMPLE, tag))
        if os.path.exists(dumps[tag]):
            os.remove(dumps[tag])
        run(exe, config, keys, [os.path.join(samples, DUMP_SAMPLE)], dump=dumps[tag], label=tag)
    a, b = np.load(dumps[label]), np.load(dumps["cpu"])
    check(a.shape == b.shape and a.dtype == b.dtype,
          "output %s %s on %s, %s %s on cpu" % (a.shape, a.dtype, label, b.shape, b.dtype))
    if a.shape == b.shape:
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        bad = diff > ATOL + RTOL * np.abs(b.astype(np.float64))
        check(np.isfinite(a).all(), "%s output is finite" % label)
        check(not bad.any(), "%d of %d output elements differ beyond atol %g + rtol %g (max |diff| %g)"
              % (int(bad.sum()), bad.size, ATOL, RTOL, float(diff.max())))
        print("%s: %d elements, max |%s - cpu| %.3g" % (DUMP_SAMPLE, diff.size, label, float(diff.max())))
    print("%d samples, %d failures" % (len(names), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
