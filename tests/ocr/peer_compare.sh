#!/bin/sh
# berth-ocr against onnxruntime-node on the same preprocessed input.
#   peer_compare.sh BERTH_OCR CONFIG KEYS SAMPLES MODEL.onnx PEER_DIR WORK COMPARE_JS
# For two samples (two widths, PNG and JPEG): berth-ocr dumps the input it
# ran (padded to its bucket) and its raw output; onnxruntime runs the
# original ONNX model on that input and the outputs are compared.
set -eu
exe=$1 config=$2 keys=$3 samples=$4 model=$5 peer=$6 work=$7 js=$8
mkdir -p "$work"
for s in zh_sentence.png latin_long.jpg; do
  rm -f "$work/$s.in.npy" "$work/$s.out.npy"
  "$exe" --lines --dump-input "$work/$s.in.npy" --dump-output "$work/$s.out.npy" "$config" "$keys" "$samples/$s"
  NODE_PATH="$peer/node_modules" node "$js" "$model" "$work/$s.in.npy" "$work/$s.out.npy"
done
