#!/usr/bin/env python3
"""cu2cpp.py (tkbench's CUDA emulator) - copies CUDA sources into a mirror tree as host
C++ that the emulator's headers (tests/cuemu/include) compile.

Usage: cu2cpp.py OUT_DIR ROOT FILE...   (FILEs relative to ROOT)

Each FILE is written to OUT_DIR/FILE (a .cu also as OUT_DIR/FILE.cpp, the unit to
compile), so quoted includes resolve to the mirrored neighbours. Only what a header
cannot express is rewritten, on the same line (compiler messages keep their lines):
  k<<<grid, block, smem, stream>>>(args)
      -> ::tkb_emu::make_launcher("k", k, grid, block, smem, stream)(args)
  extern __shared__ __align__(A) T name[];
      -> T *name = reinterpret_cast<T *>(::tkb_emu::dyn_smem());
  __shared__ __align__(A) T name[D]...;
      -> one block-wide object per declaration and block (a function-local static's
         address is the key, so each template instance has its own)
A __shared__ or <<< left over is an error: the header defines __shared__ as a name that
does not compile, so nothing silently becomes per-thread memory.
"""
import os
import re
import sys

EXTERN_SHARED = re.compile(
    r"extern\s+__shared__\s+(?:__align__\(\s*\d+\s*\)\s+)?([A-Za-z_][\w:<>, ]*?)\s+(\w+)\s*\[\s*\]\s*;")
STATIC_SHARED = re.compile(
    r"__shared__\s+(?:__align__\(\s*\d+\s*\)\s+)?([A-Za-z_][^;\[=]*?)\s+(\w+)\s*((?:\[[^\]]*\])*)\s*;")


def kernel_start(text, end):
    """Start of the kernel expression that ends at `end` (exclusive): an identifier,
    possibly qualified, possibly with a template argument list."""
    i = end
    while i > 0 and text[i - 1].isspace():
        i -= 1
    if i > 0 and text[i - 1] == ">":
        depth = 0
        while i > 0:
            i -= 1
            if text[i] == ">":
                depth += 1
            elif text[i] == "<":
                depth -= 1
                if depth == 0:
                    break
        if depth != 0:
            raise ValueError("unbalanced template arguments before <<<")
        while i > 0 and text[i - 1].isspace():
            i -= 1
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_:"):
        i -= 1
    return i


def rewrite_launches(text, path):
    out = []
    pos = 0
    while True:
        lt = text.find("<<<", pos)
        if lt < 0:
            out.append(text[pos:])
            return "".join(out)
        gt = text.find(">>>", lt)
        if gt < 0:
            raise ValueError(f"{path}: <<< without >>>")
        start = kernel_start(text, lt)
        if start < pos:
            raise ValueError(f"{path}: cannot find the kernel before <<< at offset {lt}")
        kernel = text[start:lt].strip()
        name = " ".join(kernel.split()).replace('"', '\\"')
        config = text[lt + 3:gt]
        out.append(text[pos:start])
        out.append(f'::tkb_emu::make_launcher("{name}", {kernel}, {config})')
        pos = gt + 3


def rewrite_shared(text):
    def dyn(m):
        t, name = m.group(1).strip(), m.group(2)
        return f"{t} *{name} = reinterpret_cast<{t} *>(::tkb_emu::dyn_smem());"

    def static(m):
        t, name, dims = m.group(1).strip(), m.group(2), m.group(3)
        key = f"tkb_emu_smem_key_{name}"
        full = f"{t} {dims}" if dims else t
        ref = f"{t} (&{name}){dims}" if dims else f"{t} &{name}"
        ptr = f"{t} (*){dims}" if dims else f"{t} *"
        return (f"static char {key}; {ref} = *reinterpret_cast<{ptr}>(::tkb_emu::static_smem(&{key}, "
                f"sizeof({full}), alignof({full})));")

    text = EXTERN_SHARED.sub(dyn, text)
    return STATIC_SHARED.sub(static, text)


def strip_comments(text):
    """The text with comments blanked (for the left-over checks only)."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    out_dir, root, files = argv[1], argv[2], argv[3:]
    for rel in files:
        src = os.path.join(root, rel)
        with open(src, encoding="utf-8") as f:
            text = f.read()
        if rel.endswith((".cu", ".cuh")):
            # rewrite the code only: comments may mention <<< or __shared__
            pieces = re.split(r"(//[^\n]*|/\*.*?\*/)", text, flags=re.S)
            try:
                for k in range(0, len(pieces), 2):
                    pieces[k] = rewrite_shared(rewrite_launches(pieces[k], rel))
            except ValueError as e:
                sys.stderr.write(f"cu2cpp: {e}\n")
                return 1
            text = "".join(pieces)
            left = strip_comments(text)
            for bad in ("<<<", "__shared__"):
                if bad in left:
                    line = left[:left.find(bad)].count("\n") + 1
                    sys.stderr.write(f"cu2cpp: {rel}:{line}: {bad} that cu2cpp could not rewrite\n")
                    return 1
            text = f'#line 1 "{os.path.abspath(src)}"\n' + text
        dst = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        targets = [dst] + ([dst + ".cpp"] if rel.endswith(".cu") else [])
        for t in targets:
            old = None
            if os.path.exists(t):
                with open(t, encoding="utf-8") as f:
                    old = f.read()
            if old != text:  # unchanged files keep their time: no needless rebuilds
                with open(t, "w", encoding="utf-8") as f:
                    f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
