#!/bin/sh
# Install onnxruntime-node 1.20 (the peer runtime) into DIR, once.
#   peer_setup.sh DIR
# The package ships its CPU binary for linux-x64; its install script
# would fetch CUDA parts from outside the npm registry, which the skip
# variables turn off (1.20 reads ..._CUDA, later releases the other).
set -eu
dir=$1
check() { NODE_PATH="$dir/node_modules" node -e 'require("onnxruntime-node")' 2>/dev/null; }
command -v node >/dev/null && command -v npm >/dev/null || {
  echo "peer_setup: node and npm are needed (Debian: nodejs, npm)" >&2; exit 1; }
if check; then
  echo "peer_setup: onnxruntime-node already in $dir"
  exit 0
fi
mkdir -p "$dir"
if ! ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
     npm install --prefix "$dir" --no-audit --no-fund --no-save onnxruntime-node@1.20 >"$dir/npm.log" 2>&1; then
  tail -n 5 "$dir/npm.log" >&2
  echo "peer_setup: cannot install onnxruntime-node@1.20 from the npm registry (is it reachable?); log: $dir/npm.log" >&2
  exit 1
fi
check || { echo "peer_setup: onnxruntime-node installed in $dir but does not load in node $(node --version)" >&2; exit 1; }
echo "peer_setup: installed onnxruntime-node $(NODE_PATH="$dir/node_modules" node -p 'require("onnxruntime-node/package.json").version') in $dir"
