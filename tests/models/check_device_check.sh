#!/bin/sh
# tools/device-check as a GPU machine would run it, here on whatever
# Vulkan device there is (lavapipe): pack a bundle from this build, run
# it --quick (contract, op cases, the zoo on vulkan and cpu) and check the
# report; then the same bundle where the loader finds no driver, which
# must say so in one line and exit 3.
#   check_device_check.sh DEVICE_CHECK BUILD WORK
set -eu
tool=$1 build=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
"$tool" pack --build "$build" --dir "$work/bundle"
# the bundle carries the Vulkan loader and every library beyond libc
for f in bin/berth lib/berth/libberth-vulkan.so lib/berth/libberth-cpu.so lib/libvulkan.so.1 zoo/manifest.ini onnx/manifest.ini; do
  [ -e "$work/bundle/$f" ] || { echo "the bundle lacks $f" >&2; exit 1; }
done
"$tool" run "$work/bundle" --quick --report "$work/report.md"
grep -q '^- result: every check passed$' "$work/report.md" || { echo "report does not say every check passed" >&2; exit 1; }
grep -q '^| ppocr_rec | [0-9.]* | [0-9.]* | [0-9.]* |$' "$work/report.md" || { echo "report lacks the bench row of ppocr_rec" >&2; exit 1; }
rc=0
VK_ICD_FILENAMES=$work/none.json VK_DRIVER_FILES=$work/none.json "$tool" run "$work/bundle" --quick \
  --report "$work/none.md" >"$work/none.out" 2>&1 || rc=$?
[ "$rc" = 3 ] || { echo "without a driver: exit status $rc, expected 3" >&2; cat "$work/none.out" >&2; exit 1; }
[ "$(wc -l <"$work/none.out")" = 1 ] && grep -q '^device-check: no Vulkan driver on this machine' "$work/none.out" ||
  { echo "without a driver, expected one line saying so, got:" >&2; cat "$work/none.out" >&2; exit 1; }
echo "device-check: bundle packed and run; without a driver: $(cat "$work/none.out")"
rm -rf "$work/bundle" # 120 MB the next run makes again
