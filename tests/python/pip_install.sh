#!/bin/sh
# pip installs the package from the source tree with no network (its
# build backend, python/build_backend, needs nothing), and the installed
# copy runs the first graph as berth run does.
#
#   pip_install.sh SOURCE_DIR WORK_DIR BERTH_PROGRAM
set -eu
src=$(realpath "$1") work=$2 berth=$3
rm -rf "$work" && mkdir -p "$work" && work=$(realpath "$work")
fail() { echo "pip_install: $*" >&2; exit 1; }
export PYTHONDONTWRITEBYTECODE=1
# numpy comes from the system (python3-numpy): --no-deps, --no-index
/usr/bin/python3 -m pip install --no-index --no-deps --target "$work/site" "$src/python" > "$work/pip.log" 2>&1 \
    || fail "pip install failed: $(tail -20 "$work/pip.log")"
[ -f "$work/site/berth/__init__.py" ] && ls "$work"/site/berth-*.dist-info/RECORD > /dev/null \
    || fail "pip left no berth package with its RECORD in $work/site"
echo "ok: pip installed $(ls -d "$work"/site/berth-*.dist-info | xargs basename)"
cd "$src/config"
got=$(PYTHONPATH="$work/site" /usr/bin/python3 -m berth run cpu.ini --repeat 0 --quiet) || fail "python -m berth run failed: $got"
want=$("$berth" run cpu.ini --repeat 0 --quiet | grep "output y:")
[ "$got" = "$want" ] || fail "the pip-installed package gives '$got', berth run '$want'"
echo "ok: the pip-installed package runs the first graph as berth run does: $got"
