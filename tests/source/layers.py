#!/usr/bin/env python3
"""layers.py - the folders' dependencies point one way (docs/ARCHITECTURE.md).

Every quoted #include of a source under src/ and ops/ must name a header of its own
folder or of a folder listed below it: core at the bottom, the cli at the top, and no
two folders of one level including each other. A header found in no folder (a
generated one, a system one) is not checked. Prints each include that points the
wrong way and exits 1 when there is one.

    python3 tests/source/layers.py [SOURCE_DIR]
"""
import os
import re
import sys

# Each folder and the folders it may include from (besides itself).
ALLOWED = {
    "src/core": [],
    "src/backend": ["src/core"],
    "src/bench": ["src/core"],
    "ops": ["src/core", "src/backend"],
    "src/results": ["src/core", "src/bench"],
    "src/report": ["src/core", "src/bench", "src/results"],
    "src/suite": ["src/core", "src/bench", "src/results"],
    "src/cli": ["src/core", "src/bench", "src/results", "src/report", "src/suite", "ops"],
}
SOURCE = re.compile(r"\.(c|h|cu|cuh|inc|cl)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    """The ALLOWED folder that holds path (relative to the root), or None."""
    best = None
    for f in ALLOWED:
        if path == f or path.startswith(f + "/"):
            if best is None or len(f) > len(best):
                best = f
    return best


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
    headers = {}  # base name -> folders holding a file of that name
    sources = []
    for top in ("src", "ops"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not SOURCE.search(name):
                    continue
                rel = os.path.relpath(os.path.join(d, name), root)
                sources.append(rel)
                headers.setdefault(name, set()).add(folder_of(rel))
    bad = []
    for rel in sorted(sources):
        here = folder_of(rel)
        if here is None:
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            if "/" in inc:  # a path: resolve it from the including file's folder
                target = os.path.relpath(os.path.normpath(os.path.join(os.path.dirname(rel), inc)))
                folders = {folder_of(target)} if os.path.exists(os.path.join(root, target)) else set()
            else:
                folders = headers.get(os.path.basename(inc), set())
            folders.discard(None)
            if not folders or here in folders:
                continue
            if not folders & set(ALLOWED[here]):
                bad.append(f"{rel}: includes \"{inc}\" ({', '.join(sorted(folders))}), which {here} may not use")
    for line in bad:
        print(line)
    print(f"{len(sources)} files, {len(bad)} includes pointing the wrong way")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
