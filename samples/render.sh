#!/usr/bin/env bash
# Render the OCR samples: one text line per image, black on white, 48
# pixels high, and their true text in truth.txt (file name, tab, text);
# and pages in pages/ (a receipt, a two-column document, Chinese and
# Latin mixed, one turned a few degrees, one upside down) with their true
# lines in pages/truth.txt (file name, tab, line), in the order berth-ocr
# reads them: by the top-left corner's y, then x, a line within 10 pixels
# of the one before and left of it first (the upside-down page's lines
# therefore come last line first).
#
#   samples/render.sh            rewrite samples/*.png, *.jpg, truth.txt, pages/
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
mkdir -p pages
/usr/bin/python3 - <<'PY'
import math
from PIL import Image, ImageDraw, ImageFont

LATIN = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
CJK = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"


def page(width, height, items, size=26):
    """items: (x, y, text, font path); x < 0 means right-aligned to -x."""
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    placed = []
    for x, y, text, path in items:
        font = ImageFont.truetype(path, size)
        left, top, right, bottom = font.getbbox(text)
        if x < 0:
            x = -x - (right - left)
        draw.text((x - left, y - top), text, font=font, fill="black")
        placed.append((x, y, x + right - left, y + bottom - top, text))
    return img, placed


def reading_order(placed):
    """Top-left corners sorted as berth-ocr (PP-OCR) sorts its boxes."""
    boxes = sorted(placed, key=lambda b: (b[1], b[0]))
    for i in range(len(boxes) - 1):
        for j in range(i, -1, -1):
            if abs(boxes[j + 1][1] - boxes[j][1]) < 10 and boxes[j + 1][0] < boxes[j][0]:
                boxes[j], boxes[j + 1] = boxes[j + 1], boxes[j]
            else:
                break
    return [b[4] for b in boxes]


PAGES = []
receipt = [(40, 40, "GREEN LEAF CAFE", LATIN), (40, 90, "12 Harbour Street", LATIN),
           (40, 140, "2024-03-18 09:42", LATIN), (40, 210, "Latte", LATIN), (-440, 210, "4.20", LATIN),
           (40, 260, "Croissant", LATIN), (-440, 260, "2.80", LATIN), (40, 310, "Orange juice", LATIN),
           (-440, 310, "3.50", LATIN), (40, 380, "TOTAL", LATIN), (-440, 380, "10.50", LATIN),
           (40, 450, "Thank you", LATIN)]
PAGES.append(("receipt.png", 480, 520, receipt, None))
left = ["Solar panels turn", "sunlight into power", "for homes and farms", "across the region."]
right = ["Wind turbines add", "energy at night and", "in the winter months", "when days are short."]
doc = [(40, 40, "Clean Energy Report", LATIN)]
doc += [(40, 110 + 50 * i, t, LATIN) for i, t in enumerate(left)]
doc += [(420, 110 + 50 * i, t, LATIN) for i, t in enumerate(right)]
PAGES.append(("document.png", 760, 340, doc, None))
# The recognizer puts no space between Chinese and Latin text: the lines
# mix them without one.
mixed = [(40, 40, "欢迎光临ABC超市", CJK), (40, 100, "营业时间9:00-21:00", CJK),
         (40, 160, "总计：88.50元", CJK), (40, 220, "地址：中山路12号", CJK)]
PAGES.append(("mixed.png", 560, 290, mixed, None))
turned = [(60, 60, "Weekly market opens", LATIN), (60, 120, "every Saturday at 8", LATIN),
          (60, 180, "fresh bread and fruit", LATIN), (60, 240, "near the old bridge", LATIN)]
PAGES.append(("tilted.png", 560, 330, turned, 4))
upside = [(50, 50, "Please keep this door", LATIN), (50, 110, "closed at all times", LATIN),
          (50, 170, "Fire exit only", LATIN)]
PAGES.append(("upside_down.png", 480, 240, upside, 180))

with open("pages/truth.txt", "w", encoding="utf-8") as truth:
    for name, w, h, items, turn in PAGES:
        img, placed = page(w, h, items)
        order = reading_order(placed)
        if turn:
            img = img.rotate(turn, resample=Image.BICUBIC, expand=turn != 180, fillcolor="white")
            if turn == 180:  # read from the image's top: the last line first
                order = order[::-1]
        img.save("pages/" + name, optimize=True)
        for line in order:
            truth.write("%s\t%s\n" % (name, line))
        print("pages/%-16s %4dx%d  %d lines" % (name, img.width, img.height, len(order)))
PY
