#!/usr/bin/env python3
"""tkb_fill's standard-normal float32 fill against numpy's generator.

    python3 bench/init_vs_numpy.py [BUILD_DIR] [--size-mib N] [--threads N] [--runs N]

Times numpy.random.default_rng().standard_normal(n, dtype=np.float32) on the same
element count as `BUILD_DIR/bench_init --json` (default build dir: build), median of
`runs` runs each, and prints the speed ratio with PASS when tkb_fill is >= 4x faster.
numpy is timed writing into a preallocated, touched buffer (out=), which is its
fastest form; the allocating call numpy users usually write is reported too.
Without numpy it prints why and exits 0.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

TARGET = 4.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", nargs="?", default="build")
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    try:
        import numpy as np
    except ImportError as e:
        print(f"init_vs_numpy: numpy is not importable ({e}); nothing to compare, skipping")
        return 0

    exe = os.path.join(args.build_dir, "bench_init")
    if not os.access(exe, os.X_OK):
        print(f"init_vs_numpy: {exe} not found; build it first "
              f"(cmake --build {args.build_dir} --target bench_init)", file=sys.stderr)
        return 2

    n = (args.size_mib << 20) // 4
    rng = np.random.default_rng(0)
    out = np.empty(n, dtype=np.float32)
    out.fill(0.0)  # touch every page
    t_out, t_alloc = [], []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        rng.standard_normal(dtype=np.float32, out=out)
        t1 = time.perf_counter()
        x = rng.standard_normal(n, dtype=np.float32)
        t2 = time.perf_counter()
        del x
        t_out.append(t1 - t0)
        t_alloc.append(t2 - t1)
    np_ms = 1e3 * statistics.median(t_out)
    np_alloc_ms = 1e3 * statistics.median(t_alloc)
    del out

    cmd = [exe, "--json", "--size-mib", str(args.size_mib), "--threads", str(args.threads),
           "--runs", str(args.runs)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        print(f"init_vs_numpy: {' '.join(cmd)} failed ({res.returncode}): {res.stderr.strip()}",
              file=sys.stderr)
        return 1
    tkb = json.loads(res.stdout.strip().splitlines()[-1])
    fill_ms = tkb["fill_ms"]

    gb = n * 4 / 1e9
    ratio = np_ms / fill_ms
    print(f"{n} float32 standard normals ({args.size_mib} MiB), median of {args.runs} runs")
    print(f"  numpy {np.__version__} standard_normal(out=)  {np_ms:9.2f} ms  "
          f"{gb / (np_ms / 1e3):6.2f} GB/s  (1 thread)")
    print(f"  numpy standard_normal(n) allocating   {np_alloc_ms:9.2f} ms  "
          f"{gb / (np_alloc_ms / 1e3):6.2f} GB/s")
    print(f"  tkb_fill N(0,1)                       {fill_ms:9.2f} ms  "
          f"{gb / (fill_ms / 1e3):6.2f} GB/s  ({tkb['threads']} threads)")
    print(f"  tkb_fill / numpy(out=) = {ratio:.2f}x  (target >= {TARGET:.0f}x): "
          f"{'PASS' if ratio >= TARGET else 'FAIL'}")
    print(f"  tkb_fill / numpy allocating = {np_alloc_ms / fill_ms:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
