#!/usr/bin/python3
"""Writes the WAV reader's fuzz seeds into tests/examples/corpus: a plain
16 kHz mono PCM file, the extensible form with a LIST chunk before the
data, one whose data size is the 0xFFFFFFFF a pipe leaves, and a stereo
one the reader refuses."""
import os
import struct
import sys


def wav(samples, fmt=1, channels=1, rate=16000, bits=16, extensible=False, extra=b"", size=None):
    body = struct.pack("<HHIIHH", 0xFFFE if extensible else fmt, channels, rate, rate * channels * bits // 8,
                       channels * bits // 8, bits)
    if extensible:
        body += struct.pack("<HHI", 22, bits, 4) + struct.pack("<H", fmt) + bytes(14)
    data = b"".join(struct.pack("<h", s) for s in samples)
    chunks = b"fmt " + struct.pack("<I", len(body)) + body + extra
    chunks += b"data" + struct.pack("<I", len(data) if size is None else size) + data
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WAVE" + chunks


def main(out):
    os.makedirs(out, exist_ok=True)
    tone = [int(8000 * ((i * 7) % 40 - 20) / 20) for i in range(300)]
    seeds = {
        "plain.wav": wav(tone),
        "extensible_list.wav": wav(tone[:40], extensible=True, extra=b"LIST" + struct.pack("<I", 5) + b"INFOx\0"),
        "pipe_size.wav": wav(tone[:20], size=0xFFFFFFFF),
        "stereo.wav": wav(tone[:20], channels=2),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
