#!/bin/sh
# berth check --models on manifests that are wrong: each is refused with
# one line naming the file and line, and exit status 1; a model whose
# files are missing fails by name while the others still run.
#   check_bad_manifest.sh BERTH WORK
set -eu
berth=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
expect() { # DIR STATUS TEXT
  rc=0
  "$berth" check cpu --models "$1" >"$work/out" 2>&1 || rc=$?
  [ "$rc" = "$2" ] || { echo "$1: exit status $rc, expected $2" >&2; cat "$work/out" >&2; exit 1; }
  grep -qF -- "$3" "$work/out" || { echo "$1: expected '$3' in:" >&2; cat "$work/out" >&2; exit 1; }
}
mkdir -p "$work/none" "$work/key" "$work/tol" "$work/section" "$work/partial" "$work/missing"
expect "$work/none" 1 "$work/none/manifest.ini: cannot open (make it with tests/models/zoo_prepare.py --out DIR)"
printf '[model.a]\nconfig = a.ini\ncolor = red\n' >"$work/key/manifest.ini"
expect "$work/key" 1 "$work/key/manifest.ini:3: unknown key 'color'"
printf '[model.a]\natol = -1\n' >"$work/tol/manifest.ini"
expect "$work/tol" 1 "$work/tol/manifest.ini:2: atol: expected a number >= 0, found '-1'"
printf 'atol = 1\n' >"$work/section/manifest.ini"
expect "$work/section" 1 "$work/section/manifest.ini:1: expected KEY = VALUE inside a [model.NAME] section"
printf '[model.a]\nconfig = a.ini\ninputs = a.npy\n' >"$work/partial/manifest.ini"
expect "$work/partial" 1 "model a has neither 'refused' nor all of config, inputs and wants"
printf '[model.gone]\nconfig = gone.ini\ninputs = gone.npy\nwants = want.npy\natol = 0\nrtol = 0\n\n[model.r]\nrefused = not yet\n' \
  >"$work/missing/manifest.ini"
expect "$work/missing" 1 "models 0 passed, 1 failed, 0 unsupported, 1 refused by the converter"
grep -qF "gone.npy" "$work/out" || { echo "the missing input is not named:" >&2; cat "$work/out" >&2; exit 1; }
echo "bad manifests refused by file and line"
