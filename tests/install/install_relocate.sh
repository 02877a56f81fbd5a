#!/bin/sh
# Installs berth into a prefix, moves the prefix, and uses it as a vendor
# and an application would: nothing of the build machine may be left in
# the installed files, the command must find its modules relative to
# itself, the skeleton's folder copied alone must build against the moved
# prefix with find_package(berth) (Release by default) and with
# pkg-config, give examples/first's output exactly as the cpu backend
# does and pass berth check with the ONNX node cases, a program
# embedding libberth.so must build with pkg-config and with berth::berth
# and run, and the Python package must run from the moved prefix.
#
#   install_relocate.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$(realpath "$1") src=$(realpath "$2") work=$3
rm -rf "$work" && mkdir -p "$work" && work=$(realpath "$work")
fail() { echo "install_relocate: $*" >&2; exit 1; }
# A build for another machine (tests/install/CMakeLists.txt sets these):
# its programs run through BERTH_EMULATOR, and the skeleton and embed.c
# are built for that machine with BERTH_TOOLCHAIN_FILE and BERTH_CC.
emu=${BERTH_EMULATOR:-}
toolchain=${BERTH_TOOLCHAIN_FILE:+-DCMAKE_TOOLCHAIN_FILE=$BERTH_TOOLCHAIN_FILE}
cc=${BERTH_CC:-cc}

cmake --install "$build" --prefix "$work/installed" > "$work/install.log" || fail "cmake --install failed (see $work/install.log)"
mv "$work/installed" "$work/moved"
P=$work/moved
unset BERTH_BACKEND_PATH

# 1. No path of the build machine in any installed file.
for dir in "$build" "$src"; do
    hits=$(grep -rlF "$dir" "$P" || true)
    [ -z "$hits" ] || fail "installed files name $dir: $hits"
done
echo "ok: no installed file names $build or $src"

# 2. The moved command finds the moved modules.
$emu "$P/bin/berth" backends > "$work/backends.txt" 2>&1 || fail "berth backends failed: $(cat "$work/backends.txt")"
grep -qF "$P/lib/berth/libberth-cpu.so" "$work/backends.txt" || fail "berth backends does not list $P/lib/berth/libberth-cpu.so: $(cat "$work/backends.txt")"
echo "ok: berth backends lists $P/lib/berth/libberth-cpu.so"

# 3. The skeleton's folder alone, copied out as a vendor would, built
#    both ways; CMake's build type left to the skeleton (Release).
cp -r "$P/share/berth/examples/skeleton-backend" "$work/skeleton"
cd "$work/skeleton"
# The warnings through CFLAGS, which CMake adds to a toolchain file's
# flags (-m32), where -DCMAKE_C_FLAGS would replace them.
CFLAGS="-Wall -Wextra -Werror" cmake -S . -B build $toolchain -DCMAKE_PREFIX_PATH="$P" > "$work/skeleton-cmake.log" 2>&1 \
    || fail "the skeleton does not configure against the moved prefix: $(tail -20 "$work/skeleton-cmake.log")"
grep -q "^CMAKE_BUILD_TYPE:STRING=Release$" build/CMakeCache.txt \
    || fail "the skeleton's default build is not Release: $(grep ^CMAKE_BUILD_TYPE build/CMakeCache.txt)"
cmake --build build > "$work/skeleton-build.log" 2>&1 || fail "the skeleton does not build: $(tail -20 "$work/skeleton-build.log")"
PKG_CONFIG_PATH="$P/lib/pkgconfig" make CC="$cc" > "$work/skeleton-make.log" 2>&1 \
    || fail "the skeleton does not build with its Makefile: $(tail -20 "$work/skeleton-make.log")"
echo "ok: the skeleton's folder alone builds with find_package(berth) (Release) and with pkg-config"

# 4. examples/first on the skeleton (both builds) and on cpu: the same output.
out() { # CONFIG: berth run's output lines
    $emu "$P/bin/berth" run "$1" > "$work/run.log" 2>&1 || fail "berth run $1 failed: $(cat "$work/run.log")"
    grep "output y:" "$work/run.log" || fail "berth run $1 printed no output: $(cat "$work/run.log")"
}
sed 's|^use = .*|use = cpu|' skeleton.ini > cpu.ini
sed 's|^use = .*|use = ./libberth-skeleton.so|' skeleton.ini > make.ini
want=$(out cpu.ini)
for cfg in skeleton.ini make.ini; do
    got=$(out "$cfg")
    [ "$got" = "$want" ] || fail "$cfg gives '$got', cpu gives '$want'"
done
echo "ok: examples/first on the skeleton: $want"

# 5. berth check on the skeleton passes: the contract, the op cases and,
#    where libonnx-testdata is installed, the ONNX node cases (those
#    whose outputs shape folding makes constant included).
onnx=--no-onnx
[ -z "$emu" ] && [ -d /usr/share/libonnx-testdata ] && onnx=
$emu "$P/bin/berth" check build/libberth-skeleton.so $onnx > "$work/check.log" 2>&1 \
    || fail "berth check on the skeleton failed: $(grep -iE "fail|error" "$work/check.log" | head -20)"
echo "ok: $(tail -1 "$work/check.log")"

# 6. An application embedding libberth.so, built with pkg-config and with
#    CMake's berth::berth.
cp -r "$P/share/berth/examples/embed" "$work/embed"
cd "$work/embed"
$cc -std=c11 -Wall -Werror -o embed-app embed.c $(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs berth) \
    -Wl,-rpath,"$P/lib" || fail "embed.c does not build against libberth.so"
readelf -d embed-app | grep -q "libberth.so.0" || fail "embed-app is not linked against libberth.so.0"
$emu ./embed-app "$work/skeleton/cpu.ini" > "$work/embed.log" 2>&1 || fail "embed failed: $(cat "$work/embed.log")"
cat > CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(embed LANGUAGES C)
find_package(berth REQUIRED)
add_executable(embed-cmake embed.c)
target_link_libraries(embed-cmake PRIVATE berth::berth)
CMAKE
cmake -S . -B build $toolchain -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_RPATH="$P/lib" > "$work/embed-cmake.log" 2>&1 \
    && cmake --build build >> "$work/embed-cmake.log" 2>&1 || fail "embed.c does not build with berth::berth: $(tail -20 "$work/embed-cmake.log")"
$emu build/embed-cmake "$work/skeleton/cpu.ini" > "$work/embed-cmake-run.log" 2>&1 \
    || fail "embed (CMake) failed: $(cat "$work/embed-cmake-run.log")"
cmp -s "$work/embed.log" "$work/embed-cmake-run.log" || fail "the two embed builds disagree"
echo "ok: a program linked with libberth.so.0 runs, built with pkg-config and with berth::berth: $(tail -1 "$work/embed.log")"

# 7. The Python package from the moved prefix: it finds libberth.so and
#    the modules relative to itself, and gives berth run's output.
if [ -z "$emu" ]; then
    pydir=$(ls -d "$P"/lib/python3*/dist-packages 2>/dev/null | head -1)
    [ -n "$pydir" ] && [ -f "$pydir/berth/__init__.py" ] || fail "no berth package under $P/lib/python3*/dist-packages"
    cd "$work/skeleton"
    got=$(env -u BERTH_LIBRARY PYTHONPATH="$pydir" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m berth run cpu.ini --repeat 0 --quiet 2>&1) \
        || fail "python -m berth run failed: $got"
    lib=$(env -u BERTH_LIBRARY PYTHONPATH="$pydir" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c 'import berth; print(berth.library)')
    [ "$lib" = "$(realpath "$P/lib/libberth.so.0")" ] || fail "import berth loaded $lib, not the moved prefix's libberth"
    want=$(out cpu.ini)
    [ "$(echo "$got" | grep "output y:")" = "$want" ] || fail "python -m berth run gives '$got', berth run '$want'"
    echo "ok: import berth from $pydir runs on $lib: $want"
fi
