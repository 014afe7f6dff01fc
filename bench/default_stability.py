#!/usr/bin/env python3
"""default_stability.py - can the default run's numbers be trusted on a small shared
machine? Runs the default suite (`tkbench run`: the cpu tag, every mode and impl, the
ci rule under its default time budget) twice: on the machine as it is ("idle": nothing
of this program's beside it), then with one CPU-bound process of this program's running
beside it ("loaded"). For each run it prints:

  within5   the share of entries whose median's 95% interval lies within +-5%
            (target >= 90%)
  bimodal   the entries of the builtin ops warned bimodal (target: none)
  converged the share the stopping rule calls converged (its own +-1% target), and the
            run's wall time against its budget

and for the loaded run, each entry's median against the idle run's: the share within
10% (target: all) and the ones furthest off. The load average is printed beside every
figure: on a machine other people's work keeps busy, "idle" is only "without ours".

usage: bench/default_stability.py [BUILD_DIR] [--budget S] [--keep DIR] [-- RUN_FLAGS...]
       (default: build; the run's own default budget; RUN_FLAGS are added to both runs,
       e.g. -- --mode forward to time a smaller selection)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

WITHIN = 0.05
SAME_MEDIAN = 0.10


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def entries(path):
    """name -> (median ms, half-width of its interval as a fraction, converged, warning kinds, op,
    OpenMP threads of the entry's team as its metadata says, or None)"""
    with open(path) as f:
        d = json.load(f)
    out = {}
    for b in d["benchmarks"]:
        t = b.get("tkbench")
        if not t or "statistics" not in t or b["run_name"] in out:
            continue
        s = t["statistics"]
        m, lo, hi = s["median_ms"], s["median_ci_low_ms"], s["median_ci_high_ms"]
        w = max(m - lo, hi - m) / m if m and lo is not None and hi is not None else float("inf")
        meta = t.get("metadata") if isinstance(t.get("metadata"), dict) else {}
        out[b["run_name"]] = (m, w, s["converged"], t.get("warning_kinds", []), t["op"], meta.get("threads"))
    return out, d["context"]


def busy_loop():
    """One CPU-bound process: a shell loop, which needs nothing installed."""
    return subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)


def run(tkbench, out, flags, label):
    before = load()
    t0 = time.monotonic()
    p = subprocess.run([tkbench, "run", "--quiet", "--out", out] + flags, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    after = load()
    if p.returncode not in (0, 1):
        sys.exit(f"{label}: tkbench run exited {p.returncode}: {p.stderr.strip()}")
    return wall, before, after


def report(label, res, ctx, wall, before, after):
    n = len(res)
    within = sum(1 for v in res.values() if v[1] <= WITHIN)
    conv = sum(1 for v in res.values() if v[2])
    bimodal = sorted(k for k, v in res.items() if "bimodal" in v[3])
    budget = ctx.get("budget_s", 0)
    print(f"\n## {label}: {n} entries in {wall:.0f} s (budget {budget:g} s; target <= {budget:g} s), "
          f"load {before} -> {after}")
    print(f"  within +-5%   {within}/{n} = {100 * within / n:.1f}%   (target >= 90%)")
    print(f"  converged     {conv}/{n} = {100 * conv / n:.1f}%   (the rule's own +-1% target)")
    print(f"  bimodal       {len(bimodal)}   (target: none)")
    for k in bimodal:
        print(f"    {k}")
    wide = sorted(((v[1], k) for k, v in res.items() if v[1] > WITHIN), reverse=True)
    for w, k in wide[:10]:
        print(f"    wider than +-5%: {k}  +-{100 * w:.1f}%" if w != float("inf") else f"    no interval: {k}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--budget", help="--budget of both runs (default: the run's own)")
    ap.add_argument("--keep", help="write the two JSON files into this folder (made if missing)")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []  # run flags, after --
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    tkbench = os.path.join(a.build, "tkbench")
    if not os.access(tkbench, os.X_OK):
        sys.exit(f"no {tkbench}: build first (cmake --build {a.build})")
    flags = extra + (["--budget", a.budget] if a.budget else [])
    tmp = a.keep or tempfile.mkdtemp(prefix="tkb-stability-")
    os.makedirs(tmp, exist_ok=True)  # --keep names a folder to keep: made if missing
    print(f"# default_stability  {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}  {os.cpu_count()} cores  "
          f"load {load()}  tkbench run {' '.join(flags)}")
    idle_path, loaded_path = os.path.join(tmp, "idle.json"), os.path.join(tmp, "loaded.json")
    wall, b, e = run(tkbench, idle_path, flags, "idle")
    idle, ctx = entries(idle_path)
    report("idle", idle, ctx, wall, b, e)
    hog = busy_loop()
    try:
        wall, b, e = run(tkbench, loaded_path, flags, "loaded")
    finally:
        os.killpg(hog.pid, 15)
        hog.wait()
    loaded, ctx = entries(loaded_path)
    report("loaded (one CPU-bound process beside it)", loaded, ctx, wall, b, e)
    both = [k for k in idle if k in loaded and idle[k][0] > 0]
    ratios = sorted(((loaded[k][0] / idle[k][0], k) for k in both), key=lambda r: -abs(r[0] - 1))
    same = sum(1 for r, _ in ratios if abs(r - 1) <= SAME_MEDIAN)
    print(f"\n## loaded against idle: medians within 10%: {same}/{len(both)} = "
          f"{100 * same / max(len(both), 1):.1f}%   (target: all)")
    for r, k in ratios[:10]:
        print(f"    {r:6.3f}x  {k}  (threads {idle[k][5]} idle, {loaded[k][5]} loaded)")
    # the auto policy gives a loaded machine's entries fewer threads (the cores left free):
    # a parallel kernel is then slower by design; entries with the same team in both runs
    # say whether the loaded numbers are the idle ones
    alike = [(r, k) for r, k in ratios if idle[k][5] is not None and idle[k][5] == loaded[k][5]]
    same_alike = sum(1 for r, _ in alike if abs(r - 1) <= SAME_MEDIAN)
    print(f"   of them with the same OpenMP team in both runs: {same_alike}/{len(alike)} = "
          f"{100 * same_alike / max(len(alike), 1):.1f}% within 10%")
    if not a.keep:
        for p in (idle_path, loaded_path):
            os.remove(p)
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
