#!/bin/sh
# Install onnxruntime-node (the peer runtime: the newest 1.x from 1.30
# on, as bench/bench.py uses) into DIR, once.
#   peer_setup.sh DIR
# The package ships its CPU binary for linux-x64; its install script
# would fetch CUDA parts from outside the npm registry, which the skip
# variables turn off (1.20 read ..._CUDA, later releases the other).
set -eu
dir=$1
version='^1.30.0'
# loads, and is at least 1.30 (an older copy is replaced)
check() { NODE_PATH="$dir/node_modules" node -e 'const v = require("onnxruntime-node/package.json").version.split(".").map(Number); require("onnxruntime-node"); process.exit(v[0] > 1 || (v[0] == 1 && v[1] >= 30) ? 0 : 1)' 2>/dev/null; }
command -v node >/dev/null && command -v npm >/dev/null || {
  echo "peer_setup: node and npm are needed (Debian: nodejs, npm)" >&2; exit 1; }
if check; then
  echo "peer_setup: onnxruntime-node already in $dir"
  exit 0
fi
mkdir -p "$dir"
if ! ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
     npm install --prefix "$dir" --no-audit --no-fund --no-save "onnxruntime-node@$version" >"$dir/npm.log" 2>&1; then
  tail -n 5 "$dir/npm.log" >&2
  echo "peer_setup: cannot install onnxruntime-node@$version from the npm registry (is it reachable?); log: $dir/npm.log" >&2
  exit 1
fi
check || { echo "peer_setup: onnxruntime-node installed in $dir but does not load in node $(node --version)" >&2; exit 1; }
echo "peer_setup: installed onnxruntime-node $(NODE_PATH="$dir/node_modules" node -p 'require("onnxruntime-node/package.json").version') in $dir"
