#!/usr/bin/env bash
# Render the OCR samples: one text line per image, black on white, 48
# pixels high, and their true text in truth.txt (file name, tab, text).
#
#   samples/render.sh            rewrite samples/*.png, *.jpg, truth.txt
#
# Needs Debian's python3-pil, fonts-dejavu-core (Latin) and
# fonts-wqy-microhei (Chinese): apt-get install python3-pil
# fonts-dejavu-core fonts-wqy-microhei. Other Pillow or font versions may
# move a pixel here and there; the committed images are the reference.
set -euo pipefail
cd "$(dirname "$0")"
for f in /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/wqy/wqy-microhei.ttc; do
  [ -f "$f" ] || { echo "render.sh: missing font $f (see the packages above)" >&2; exit 1; }
done
/usr/bin/python3 - <<'PY'
from PIL import Image, ImageDraw, ImageFont

LATIN = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
CJK = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
# (file, font, text): Latin and Chinese, short to long, so the lines fall
# into different width buckets (160 to 960 at height 48).
SAMPLES = [
    ("latin_short.png", LATIN, "Hello"),
    ("latin_sentence.png", LATIN, "Quick brown fox, 42 jumps!"),
    ("latin_long.jpg", LATIN, "Invoice 2024-07-15: total 348.90 EUR, paid by card"),
    ("zh_short.png", CJK, "你好世界"),
    ("zh_sentence.png", CJK, "今天天气很好，我们去公园散步。"),
    ("zh_mixed.png", CJK, "北京欢迎你2008"),
]
HEIGHT, SIZE, MARGIN = 48, 30, 8

with open("truth.txt", "w", encoding="utf-8") as truth:
    for name, path, text in SAMPLES:
        font = ImageFont.truetype(path, SIZE)
        left, top, right, bottom = font.getbbox(text)
        img = Image.new("RGB", (right - left + 2 * MARGIN, HEIGHT), "white")
        draw = ImageDraw.Draw(img)
        y = (HEIGHT - (bottom - top)) // 2 - top
        draw.text((MARGIN - left, y), text, font=font, fill="black")
        if name.endswith(".jpg"):
            img.save(name, quality=90)
        else:
            img.convert("L").save(name, optimize=True)
        truth.write("%s\t%s\n" % (name, text))
        print("%-20s %4dx%d  %s" % (name, img.width, img.height, text))
PY
