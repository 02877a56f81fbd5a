#!/bin/sh
# Install the peer OCR pipeline, @gutenye/ocr-node (PP-OCR on
# onnxruntime-node, with sharp for images), pinned, into DIR, once.
#   peer_pages_setup.sh DIR
# onnxruntime-node's install script would fetch CUDA parts from outside
# the npm registry, which the skip variables turn off; sharp's binaries
# come as npm packages (@img/sharp-*).
set -eu
dir=$1
version=1.4.8
# (its package.json is not among the files the package exports: read it)
check() { node -e 'const f = process.argv[1] + "/node_modules/@gutenye/ocr-node/package.json"; process.exit(JSON.parse(require("fs").readFileSync(f)).version === process.argv[2] ? 0 : 1)' "$dir" "$version" 2>/dev/null; }
command -v node >/dev/null && command -v npm >/dev/null || {
  echo "peer_pages_setup: node and npm are needed (Debian: nodejs, npm)" >&2; exit 1; }
if check; then
  echo "peer_pages_setup: @gutenye/ocr-node $version already in $dir"
  exit 0
fi
mkdir -p "$dir"
if ! ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
     npm install --prefix "$dir" --no-audit --no-fund --no-save "@gutenye/ocr-node@$version" >"$dir/npm.log" 2>&1; then
  tail -n 5 "$dir/npm.log" >&2
  echo "peer_pages_setup: cannot install @gutenye/ocr-node@$version from the npm registry (is it reachable?); log: $dir/npm.log" >&2
  exit 1
fi
check || { echo "peer_pages_setup: @gutenye/ocr-node installed in $dir but not version $version" >&2; exit 1; }
echo "peer_pages_setup: installed @gutenye/ocr-node $version in $dir"
