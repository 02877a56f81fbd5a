#!/bin/sh
# The OCR recognizer converted again with its matmul weights quantized:
#   quantize_rec.sh CONVERTER CACHE OUT_DIR BASE_CONFIG
# writes OUT_DIR/rec-int8.* and rec-int4.* (blocks of 24: the
# recognizer's matmuls reduce over 120 or 240 values) and
# OUT_DIR/ocr-int8.ini, ocr-int4.ini: BASE_CONFIG with [model.rec]
# pointed at them. Its convolutions stay float32.
set -eu
conv=$1 cache=$2 out=$3 base=$4
mkdir -p "$out"
for q in int8 int4; do
  "$conv" "$cache/ocr/rec.onnx" "$out/rec-$q.webnn.tmp" --weights "$out/rec-$q.safetensors" \
    --dyn batch=8 --dyn width=1280 --name ppocr_rec --quantize "$q" --block 24
  mv -f "$out/rec-$q.webnn.tmp" "$out/rec-$q.webnn"
  sed "s#^graph = .*/rec.webnn#graph = $out/rec-$q.webnn#; s#^weights = .*/rec.safetensors#weights = $out/rec-$q.safetensors#" \
    "$base" > "$out/ocr-$q.ini"
  grep -q "rec-$q.webnn" "$out/ocr-$q.ini" || { echo "quantize_rec.sh: $base names no rec.webnn" >&2; exit 1; }
done
