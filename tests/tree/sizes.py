#!/usr/bin/python3
"""The tree's size limits: no C function over 80 lines and no C file over
900, in the folders given, so that code stays in small pieces named for
what they do. Prints each offender and exits 1; prints the counts and
exits 0 when there is none.

usage: sizes.py ROOT DIR [DIR ...]
"""
import glob
import os
import re
import sys

MAX_FUNCTION, MAX_FILE = 80, 900


def functions(lines):
    """(name, first line, length) of every function: from the line at
    column 0 that opens it (its signature's first line) to its closing
    brace, also at column 0. Labels (`fail:`) are not signatures."""
    for end, text in enumerate(lines):
        if text != "}":
            continue
        start = end - 1
        while start >= 0:
            head = lines[start]
            if head == "}":
                start = -1
                break
            if head[:1].isalpha() or head[:1] == "_":
                if not re.match(r"\w+:", head):
                    break
            start -= 1
        if start < 0:
            continue
        m = re.search(r"(\w+)\s*\(", lines[start])
        if not m or "=" in lines[start].split("(")[0]:
            continue  # an initializer, not a function
        yield m.group(1), start + 1, end - start + 1


def main():
    root, dirs = sys.argv[1], sys.argv[2:]
    bad, n_files, n_functions = [], 0, 0
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(root, d, "**", "*.c"), recursive=True)):
            lines = open(path, errors="replace").read().split("\n")
            rel = os.path.relpath(path, root)
            n_files += 1
            if len(lines) - 1 > MAX_FILE:
                bad.append("%s: %d lines, more than %d" % (rel, len(lines) - 1, MAX_FILE))
            for name, line, length in functions(lines):
                n_functions += 1
                if length > MAX_FUNCTION:
                    bad.append("%s:%d: %s is %d lines, more than %d" % (rel, line, name, length, MAX_FUNCTION))
    for b in bad:
        print(b)
    if bad:
        return 1
    print("ok: %d functions in %d files, none over %d lines, no file over %d" %
          (n_functions, n_files, MAX_FUNCTION, MAX_FILE))
    return 0


sys.exit(main())
