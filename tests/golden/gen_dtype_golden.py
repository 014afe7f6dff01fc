#!/usr/bin/env python3
"""Writes tests/golden/dtype_golden.h: what numpy and ml_dtypes give for the dtype
conversions that tests/test_dtype.c checks bit for bit.

    python3 tests/golden/gen_dtype_golden.py [--jobs N]   # about 10 minutes on 2 cores

float16 is numpy's (ml_dtypes has no float16 of its own); bfloat16, float8_e4m3fn and
float8_e5m2 are ml_dtypes'. The header is committed, so building and testing never
need Python.

Hashes (test_dtype.c computes the same ones):
  fnv1a64(bytes)       FNV-1a, 64 bits, over a byte string.
  table hash           fnv1a64 of the 65536 float32 results (4 bytes each, little
                       endian) of a 16-bit type's patterns 0..65535 in order.
  sweep hash           float32 inputs x_k = uint32(k * stride), k = 0 .. chunks*65536-1,
                       cut in chunks of 65536 consecutive k. Each chunk's outputs (1 or
                       2 bytes each, little endian, in order) are read as little-endian
                       64-bit words w; the chunk hash starts at the FNV offset basis and
                       takes every word as h = ((h ^ w) * MIX_K) mod 2^64; h ^= h >> 32.
                       The sweep hash is fnv1a64 of the chunk hashes (8 bytes each,
                       little endian) in chunk order. Chunks make it parallel and still
                       deterministic; words make it cheap enough to hash 2^32 outputs.
"""
import argparse
import multiprocessing
import os
import sys

import ml_dtypes
import numpy as np

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MIX_K = 0x9E3779B97F4A7C15
CHUNK = 1 << 16
FULL_STRIDE, FULL_CHUNKS = 1, 1 << 16          # every float32 bit pattern
QUICK_STRIDE, QUICK_CHUNKS = 1021, 64          # 64 * 65536 * 1021 < 2^32
BLOCK = 512                                    # chunks per worker task

# (name in C, numpy type, bytes per element)
NARROW = [
    ("f16", np.float16, 2),
    ("bf16", ml_dtypes.bfloat16, 2),
    ("e4m3fn", ml_dtypes.float8_e4m3fn, 1),
    ("e5m2", ml_dtypes.float8_e5m2, 1),
]


def fnv1a64(data: bytes) -> int:
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def f32_to(x, t):
    with np.errstate(all="ignore"):
        return x.astype(t)


def sweep_block(task):
    """Chunk hashes of chunks [c0, c1) for every narrow type: array (4, c1 - c0)."""
    stride, c0, c1 = task
    k = np.arange(c0 * CHUNK, c1 * CHUNK, dtype=np.uint64)
    x = ((k * np.uint64(stride)) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    del k
    out = np.empty((len(NARROW), c1 - c0), dtype=np.uint64)
    shift = np.uint64(32)
    mix = np.uint64(MIX_K)
    for t, (_, typ, _) in enumerate(NARROW):
        y = f32_to(x, typ)
        words = y.view(np.uint8).reshape(c1 - c0, -1).view("<u8")
        cols = np.ascontiguousarray(words.T)  # one row per word position
        del y, words
        h = np.full(c1 - c0, FNV_OFFSET, dtype=np.uint64)
        for w in cols:
            h ^= w
            h *= mix
            h ^= h >> shift
        out[t] = h
    return out


def sweep(stride, chunks, jobs):
    tasks = [(stride, c, min(c + BLOCK, chunks)) for c in range(0, chunks, BLOCK)]
    with multiprocessing.Pool(jobs) as pool:
        parts = []
        for i, part in enumerate(pool.imap(sweep_block, tasks)):
            parts.append(part)
            print(f"  stride {stride}: {i + 1}/{len(tasks)} blocks", file=sys.stderr,
                  flush=True)
    hashes = np.concatenate(parts, axis=1)
    return [fnv1a64(hashes[t].astype("<u8").tobytes()) for t in range(len(NARROW))]


def f32_bits(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def spot_f32_inputs():
    """float32 inputs worth seeing one by one: ties, boundaries, NaNs, randoms."""
    with np.errstate(all="ignore"):
        return _spot_f32_inputs()


def _spot_f32_inputs():
    vals = set()
    for _, typ, size in NARROW:
        # each pattern p with p + 1: all of them for 8-bit types, every 2039th for 16-bit
        p = np.arange(0, 0x7F if size == 1 else 0x7FFF, 1 if size == 1 else 2039)
        dt = np.uint8 if size == 1 else np.uint16
        lo = p.astype(dt).view(typ).astype(np.float64)
        hi = (p + 1).astype(dt).view(typ).astype(np.float64)
        ok = np.isfinite(lo) & np.isfinite(hi)
        ties = (lo[ok] + hi[ok]) / 2  # exact ties between neighbours
        fin = np.arange(0x80 if size == 1 else 0x8000).astype(dt).view(typ).astype(np.float64)
        fin = np.sort(fin[np.isfinite(fin)])
        top = fin[-1] + (fin[-1] - fin[-2]) / 2  # the tie just past the largest finite
        for m in list(ties) + [top]:
            b = int(f32_bits(m))
            for d in (-1, 0, 1):
                vals.add((b + d) & 0x7FFFFFFF)
    info = [np.finfo(np.float16), ml_dtypes.finfo(ml_dtypes.bfloat16),
            ml_dtypes.finfo(ml_dtypes.float8_e4m3fn), ml_dtypes.finfo(ml_dtypes.float8_e5m2)]
    for fi in info:
        for v in (fi.max, fi.smallest_normal, fi.smallest_subnormal):
            b = int(f32_bits(float(v)))
            vals.update({b - 1, b, b + 1})
    vals.update([0, 1, 0x7FFFFF, 0x800000, 0x3F800000, 0x7F7FFFFF, 0x7F800000,
                 0x7F800001, 0x7F801FFF, 0x7F802000, 0x7FBFFFFF, 0x7FC00000, 0x7FC00001,
                 0x7FFFFFFF, 0x7F812345, 0x7FD12345, 0x00010000, 0x00018000, 0x00008000])
    neg = {v | 0x80000000 for v in vals if v % 5 == 0}  # a share of negatives too
    vals |= neg | {0x80000000, 0xFF800000, 0xFFC00000, 0xFF800001, 0xFFFFFFFF}
    rng = np.random.default_rng(20240601)
    vals.update(int(v) for v in rng.integers(0, 1 << 32, size=64, dtype=np.uint64))
    return np.array(sorted(vals), dtype=np.uint32)


def c_array(ctype, name, values, per_line, fmt):
    lines = []
    for i in range(0, len(values), per_line):
        lines.append("    " + ", ".join(fmt(int(v)) for v in values[i:i + per_line]) + ",")
    return f"static const {ctype} {name}[{len(values)}] = {{\n" + "\n".join(lines) + "\n};\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "dtype_golden.h"))
    args = ap.parse_args()

    hx8 = lambda v: f"0x{v:02x}"
    hx16 = lambda v: f"0x{v:04x}"
    hx32 = lambda v: f"0x{v:08x}u"
    hx64 = lambda v: f"0x{v:016x}ull"

    parts = [f"""/*
 * dtype_golden.h - generated by tests/golden/gen_dtype_golden.py with numpy {np.__version__}
 * and ml_dtypes {ml_dtypes.__version__}. Do not edit; rerun the script. The hashes are
 * defined in the script's docstring. Type order in the [4] arrays: float16 (numpy),
 * bfloat16, float8_e4m3fn, float8_e5m2 (ml_dtypes).
 */
#ifndef TKB_DTYPE_GOLDEN_H
#define TKB_DTYPE_GOLDEN_H

#include <stdint.h>

#define GOLDEN_FNV_OFFSET 0x{FNV_OFFSET:016x}ull
#define GOLDEN_FNV_PRIME 0x{FNV_PRIME:016x}ull
#define GOLDEN_MIX_K 0x{MIX_K:016x}ull
#define GOLDEN_CHUNK {CHUNK}u
#define GOLDEN_FULL_STRIDE {FULL_STRIDE}u
#define GOLDEN_FULL_CHUNKS {FULL_CHUNKS}u
#define GOLDEN_QUICK_STRIDE {QUICK_STRIDE}u
#define GOLDEN_QUICK_CHUNKS {QUICK_CHUNKS}u

"""]

    # 8-bit types: whole tables.
    for name, typ, size in NARROW:
        if size != 1:
            continue
        out = np.arange(256, dtype=np.uint8).view(typ).astype(np.float32).view(np.uint32)
        parts.append(c_array("uint32_t", f"golden_{name}_to_f32", out, 6, hx32))

    # 16-bit types: table hash plus spot values.
    spot16 = sorted(set(range(0, 65536, 257)) | {
        0x0000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0x7BFF, 0x7C00, 0x7C01, 0x7DFF, 0x7E00,
        0x7FFF, 0x8000, 0x8001, 0xFC00, 0xFC01, 0xFE00, 0xFFFF, 0x007F, 0x0080, 0x7F7F,
        0x7F80, 0x7F81, 0x7FC0, 0xFF80, 0xFFC0})
    parts.append(c_array("uint16_t", "golden_spot16_in", spot16, 10, hx16))
    for name, typ, size in NARROW:
        if size != 2:
            continue
        out = np.arange(65536, dtype=np.uint16).view(typ).astype(np.float32).view(np.uint32)
        h = fnv1a64(out.astype("<u4").tobytes())
        parts.append(f"#define GOLDEN_{name.upper()}_TO_F32_FNV 0x{h:016x}ull\n")
        parts.append(c_array("uint32_t", f"golden_{name}_to_f32_spot", out[spot16], 6, hx32))

    # float32 -> narrow: spot values.
    spot = spot_f32_inputs()
    x = spot.view(np.float32)
    parts.append(c_array("uint32_t", "golden_spot32_in", spot, 6, hx32))
    for name, typ, size in NARROW:
        out = f32_to(x, typ).view(np.uint8 if size == 1 else np.uint16)
        parts.append(c_array("uint8_t" if size == 1 else "uint16_t",
                             f"golden_spot32_to_{name}", out, 12 if size == 1 else 10,
                             hx8 if size == 1 else hx16))

    # float32 -> narrow: sweeps.
    for label, stride, chunks in (("QUICK", QUICK_STRIDE, QUICK_CHUNKS),
                                  ("FULL", FULL_STRIDE, FULL_CHUNKS)):
        hs = sweep(stride, chunks, args.jobs)
        parts.append(c_array("uint64_t", f"golden_sweep_{label.lower()}", hs, 2, hx64))

    parts.append("\n#endif\n")
    with open(args.out, "w") as f:
        f.write("\n".join(parts))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
