#!/bin/sh
# The OCR recognizer converted again with its matmul weights quantized:
#   quantize_rec.sh CONVERTER CACHE OUT_DIR BASE_CONFIG [VULKAN_CONFIG]
# writes OUT_DIR/rec-int8.* and rec-int4.* (blocks of 24: the
# recognizer's matmuls reduce over 120 or 240 values) and
# OUT_DIR/ocr-int8.ini, ocr-int4.ini: BASE_CONFIG with [model.rec]
# pointed at them (and ocr-vulkan-int8.ini, ocr-vulkan-int4.ini from
# VULKAN_CONFIG when given), and ocr-int8-act.ini: ocr-int8.ini with the
# cpu backend's quantized_activations = int8. Its convolutions stay
# float32.
set -eu
conv=$1 cache=$2 out=$3 base=$4 vk=${5:-}
mkdir -p "$out"
# point: CONFIG OUT_INI Q
point() {
  sed "s#^graph = .*/rec.webnn#graph = $out/rec-$3.webnn#; s#^weights = .*/rec.safetensors#weights = $out/rec-$3.safetensors#" \
    "$1" > "$2"
  grep -q "rec-$3.webnn" "$2" || { echo "quantize_rec.sh: $1 names no rec.webnn" >&2; exit 1; }
}
for q in int8 int4; do
  "$conv" "$cache/ocr/rec.onnx" "$out/rec-$q.webnn.tmp" --weights "$out/rec-$q.safetensors" \
    --dyn batch=8 --dyn width=1280 --name ppocr_rec --quantize "$q" --block 24
  mv -f "$out/rec-$q.webnn.tmp" "$out/rec-$q.webnn"
  point "$base" "$out/ocr-$q.ini" "$q"
  if [ -n "$vk" ]; then point "$vk" "$out/ocr-vulkan-$q.ini" "$q"; fi
done
sed 's/^\[backend.cpu\]$/[backend.cpu]\nquantized_activations = int8/' "$out/ocr-int8.ini" > "$out/ocr-int8-act.ini"
grep -q "^quantized_activations = int8" "$out/ocr-int8-act.ini" ||
  { echo "quantize_rec.sh: $base has no [backend.cpu] section" >&2; exit 1; }
