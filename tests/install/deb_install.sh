#!/bin/sh
# Builds berth's Debian package with cpack and installs it with dpkg into
# an empty directory tree (its own dpkg database, no chroot needed), then
# runs the installed berth: it must list the modules installed with it.
#
#   deb_install.sh BUILD_DIR WORK_DIR
set -eu
build=$(realpath "$1") work=$2
rm -rf "$work" && mkdir -p "$work" && work=$(realpath "$work")
fail() { echo "deb_install: $*" >&2; exit 1; }
# A build for another machine (tests/install/CMakeLists.txt sets it): the
# installed berth runs through BERTH_EMULATOR.
emu=${BERTH_EMULATOR:-}

cpack --config "$build/CPackConfig.cmake" -B "$work/pkg" > "$work/cpack.log" 2>&1 || fail "cpack failed: $(tail -20 "$work/cpack.log")"
deb=$(ls "$work"/pkg/berth_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "cpack made no berth_*.deb: $(tail -5 "$work/cpack.log")"
echo "ok: $(basename "$deb"), $(stat -c %s "$deb") bytes"
dpkg-deb -f "$deb" Package Version Depends

R=$work/root
mkdir -p "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/info" "$R/var/log"
: > "$R/var/lib/dpkg/status"
# A package for another architecture than this dpkg's (the 32-bit or
# arm64 build) installs once the root's dpkg knows that architecture.
arch=$(dpkg-deb -f "$deb" Architecture)
if [ "$arch" != "$(dpkg --print-architecture)" ] && [ "$arch" != all ]; then
  dpkg --root="$R" --add-architecture "$arch"
fi
# --force-depends: the tree has no packages, so none of the libraries the
# package depends on is registered there (the host has them); the
# maintainer scripts do nothing and run without a chroot.
dpkg --root="$R" --force-not-root --force-depends --force-script-chrootless --log="$R/var/log/dpkg.log" \
    -i "$deb" > "$work/dpkg.log" 2>&1 || fail "dpkg -i failed: $(cat "$work/dpkg.log")"
dpkg --root="$R" -s berth | grep -q "^Status: install ok installed" || fail "berth is not installed in $R: $(dpkg --root="$R" -s berth)"
echo "ok: dpkg -i into $R: $(dpkg --root="$R" -s berth | grep ^Status)"

unset BERTH_BACKEND_PATH
$emu "$R/usr/bin/berth" backends > "$work/backends.txt" 2>&1 || fail "berth backends failed: $(cat "$work/backends.txt")"
grep -F "$R/usr/lib/berth/libberth-cpu.so" "$work/backends.txt" || fail "the installed berth does not list $R/usr/lib/berth/libberth-cpu.so: $(cat "$work/backends.txt")"
for f in usr/include/berth/berth.h usr/include/berth/backend.h usr/lib/libberth.so.0 usr/lib/libberth.a \
         usr/lib/pkgconfig/berth.pc usr/lib/cmake/berth/berthConfig.cmake usr/share/berth/kit/bk.h \
         usr/bin/onnx2webnn usr/bin/berth-conformance usr/bin/berth-ocr; do
    [ -e "$R/$f" ] || fail "the package has no /$f"
done
[ -e "$R/usr/lib/python3/dist-packages/berth/__init__.py" ] || fail "the package has no /usr/lib/python3/dist-packages/berth"
echo "ok: the package holds the command, the library, the headers, pkg-config and CMake files, the kit, the tools and the Python package"

# The Python package of the installed tree finds that tree's libberth and
# modules, relative to itself.
if [ -z "$emu" ]; then
    py="env -u BERTH_LIBRARY PYTHONPATH=$R/usr/lib/python3/dist-packages PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3"
    lib=$($py -c 'import berth; print(berth.library)') || fail "import berth failed from $R/usr/lib/python3/dist-packages"
    [ "$lib" = "$(realpath "$R/usr/lib/libberth.so.0")" ] || fail "import berth loaded $lib, not $R/usr/lib/libberth.so.0"
    $py -m berth backends > "$work/py-backends.txt" 2>&1 || fail "python -m berth backends failed: $(cat "$work/py-backends.txt")"
    grep -F "$R/usr/lib/berth/libberth-cpu.so" "$work/py-backends.txt" || fail "python -m berth backends does not list $R/usr/lib/berth/libberth-cpu.so: $(cat "$work/py-backends.txt")"
    echo "ok: import berth from the installed tree loads $lib"
fi
