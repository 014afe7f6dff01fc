#!/usr/bin/env python3
"""compare_accuracy.py - how far `tkbench compare` and `tkbench ab` can be trusted, on
entries whose truth is known: the spin plugin (tests/plugins/spin_plugin.c), a busy loop
built at 1x, 1.01x and 1.05x the work.

Sections (each prints its figure, its target and the load average around it):
  aa      A/A: RUNS runs of `tkbench ab` of the 1x build against itself on 10 entries at
          the default settings (the ci stopping rule); the share of the entry comparisons
          called faster or slower (target <= 5%) and same or unsure (>= 95%).
  seq     the same build run twice one after the other (`run`, `run`, `compare`), as a CI
          job without `ab` would do: what drift between two runs does to the verdicts.
  power   RUNS runs of `ab` of the 1x build against the 1.05x one on one entry: the share
          called slower (target >= 95%).
  small   RUNS runs of the 1x build against the 1.01x one: a change inside the noise band
          must never be called faster or slower (target: 0).
  history  `compare --history`: a store filled with HISTORY (12) runs of the 1x build
          (`run --history`, as CI records every merge), then RUNS trials of: run A
          (recorded too), run B of the same build, and run C of the 1.05x build with the
          slowdown on spin_50k alone (TKB_SPIN_ONLY=50, the other entries at 1x); `compare
          A B --history` over the 10 entries: the share called changed (target <= 5%), and
          `compare A C --history` on spin_50k: called slower (target >= 90%). The same
          pairs compared without --history beside them, and the bands the entries used.
  gbench  Google Benchmark JSON files made by a program built with Debian's
          libbenchmark-dev (one benchmark 1.05x the work in NEW, the others unchanged),
          compared by Google Benchmark's tools/compare.py (Debian's libbenchmark-tools) and
          by `tkbench compare`, side by side; over RUNS pairs, how often each calls a
          change on the unchanged benchmarks and on the changed one.
  gbfew   few repetitions, many entries: a Google Benchmark program of 26 entries, 5
          repetitions a side, A/A and against 1.10x the work on every entry, RUNS pairs
          each, the repetitions interleaved (one repetition a run, ABBA, as ab alternates
          experiments) and as two runs one after the other: the share of the A/A
          comparisons called faster or slower (target <= 5%, interleaved), the share of
          the 10% ones called slower, which rule decided (the U test cannot reach p < 0.05
          at 5 against 5 over 26 entries) and the smallest change it could call.

usage: bench/compare_accuracy.py [BUILD_DIR] [--runs N] [--history N] [--section S ...]
       (default: build, 3 runs, every section; the figures in docs/PERFORMANCE.md use 20)
The gbench section installs g++, libbenchmark-dev, libbenchmark-tools, python3-numpy and
python3-scipy with apt-get when they are missing and this runs as root; otherwise it says
what is missing and is skipped.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ENTRIES_AA = "^spin_(10|20|30|40|50|60|70|80|90|100)k_forward_c$"
ENTRY_ONE = "^spin_50k_forward_c$"


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def verdicts(path):
    with open(path) as f:
        d = json.load(f)
    return [(b["name"], b["verdict"], b["ratio"], b["ratio_ci_low"], b["ratio_ci_high"]) for b in d["benchmarks"]]


class Bench:
    def __init__(self, build, tmp):
        self.tkbench = os.path.join(build, "tkbench")
        self.spin = {k: os.path.join(build, f"tkb_spin_{k}.so") for k in ("100", "101", "105")}
        for p in [self.tkbench] + list(self.spin.values()):
            if not os.path.exists(p):
                sys.exit(f"compare_accuracy: {p} is missing: build the tree first (cmake --build {build})")
        self.tmp = tmp

    def ab(self, a, b, entries, extra=()):
        """ab's verdicts (experiments paired), and those of its two files compared as two
        unrelated runs (the "ab" context removed: experiments resampled apart)."""
        out, fa, fb = (os.path.join(self.tmp, n) for n in ("ab.json", "a.json", "b.json"))
        r = run([self.tkbench, "ab", "--a", self.spin[a], "--b", self.spin[b], "--filter", entries,
                 "--format", "json", "--out", out, "--out-a", fa, "--out-b", fb, "--quiet", *extra])
        if r.returncode not in (0, 1):
            sys.exit(f"compare_accuracy: tkbench ab exited {r.returncode}: {r.stderr}")
        for f in (fa, fb):
            with open(f) as h:
                d = json.load(h)
            del d["context"]["ab"]
            with open(f, "w") as h:
                json.dump(d, h)
        apart = os.path.join(self.tmp, "apart.json")
        run([self.tkbench, "compare", fa, fb, "--format", "json", "--out", apart, "--quiet"])
        return verdicts(out), verdicts(apart)


def count(vs):
    c = {"faster": 0, "slower": 0, "same": 0, "unsure": 0}
    for v in vs:
        c[v] += 1
    return c


def summary(label, allv, target):
    c, n = count(allv), len(allv)
    called = c["faster"] + c["slower"]
    print(f"  {label}: {n} comparisons: same {c['same']}, unsure {c['unsure']}, faster "
          f"{c['faster']}, slower {c['slower']}; called {100 * called / n:.1f}%{target}")


def section_aa(bench, runs):
    print(f"## A/A: tkbench ab of the 1x build against itself, {runs} runs of 10 entries, "
          f"default settings (load {load()})")
    paired, apart, t0 = [], [], time.time()
    for i in range(runs):
        vp, va = bench.ab("100", "100", ENTRIES_AA)
        paired += [v for _, v, *_ in vp]
        apart += [v for _, v, *_ in va]
        c, d = count(v for _, v, *_ in vp), count(v for _, v, *_ in va)
        print(f"  run {i + 1:2d}: ab {c['same']} same, {c['unsure']} unsure, {c['faster']} faster, "
              f"{c['slower']} slower; apart {d['same']} same, {d['unsure']} unsure, "
              f"{d['faster'] + d['slower']} called  (load {load()})")
    summary("ab (experiments paired)", paired, " (target <= 5%)")
    summary("its files compared apart", apart, "")
    print(f"  [{time.time() - t0:.0f} s, load {load()}]")


def section_seq(bench, runs):
    print(f"## Sequential A/A: run, run, compare (no interleaving), {runs} pairs of 10 entries "
          f"(load {load()})")
    allv, t0 = [], time.time()
    files = [os.path.join(bench.tmp, f"seq{k}.json") for k in (0, 1)]
    for i in range(runs):
        for f in files:
            r = run([bench.tkbench, "run", "--load", bench.spin["100"], "--filter", ENTRIES_AA,
                     "--quiet", "--out", f])
            if r.returncode:
                sys.exit(f"compare_accuracy: tkbench run exited {r.returncode}: {r.stderr}")
        out = os.path.join(bench.tmp, "seq.json")
        run([bench.tkbench, "compare", *files, "--format", "json", "--out", out, "--quiet"])
        vs = [v for _, v, *_ in verdicts(out)]
        allv += vs
        c = count(vs)
        print(f"  pair {i + 1:2d}: {c['same']} same, {c['unsure']} unsure, {c['faster']} faster, "
              f"{c['slower']} slower")
    summary("run, run, compare", allv, " (ab's target <= 5%)")
    print(f"  [{time.time() - t0:.0f} s, load {load()}]")


def section_history(bench, runs, history):
    print(f"## compare --history: a store of {history} runs of the 1x build, then {runs} trials of run A "
          f"(recorded), run B (1x), run C (spin_50k 1.05x); 10 entries (load {load()})")
    store = os.path.join(bench.tmp, "history.sqlite")
    a, b, c = (os.path.join(bench.tmp, f"hist_{k}.json") for k in "abc")

    def record(path, lib, env=None, keep=True):
        cmd = [bench.tkbench, "run", "--load", bench.spin[lib], "--filter", ENTRIES_AA, "--quiet", "--out", path]
        if keep:
            cmd += ["--history", store, "--commit", "%07x" % (0x1000000 + record.n), "--branch", "main"]
            record.n += 1
        r = run(cmd, env=dict(os.environ, **(env or {})))
        if r.returncode:
            sys.exit(f"compare_accuracy: tkbench run exited {r.returncode}: {r.stderr}")
    record.n = 0

    def compare(base, new, with_history):
        out = os.path.join(bench.tmp, "hist_cmp.json")
        cmd = [bench.tkbench, "compare", base, new, "--format", "json", "--out", out, "--quiet"]
        if with_history:
            cmd += ["--history", store]
        r = run(cmd)
        if r.returncode not in (0, 1):
            sys.exit(f"compare_accuracy: tkbench compare exited {r.returncode}: {r.stderr}")
        with open(out) as f:
            return {x["name"]: x for x in json.load(f)["benchmarks"]}

    t0 = time.time()
    for i in range(history):
        record(os.path.join(bench.tmp, "hist_seed.json"), "100")
    print(f"  {history} runs recorded [{time.time() - t0:.0f} s, load {load()}]")
    aa_hist, aa_plain, power_hist, power_plain, bands = [], [], [], [], []
    for i in range(runs):
        record(a, "100")
        record(b, "100", keep=False)
        record(c, "105", env={"TKB_SPIN_ONLY": "50"}, keep=False)
        h, p = compare(a, b, True), compare(a, b, False)
        aa_hist += [x["verdict"] for x in h.values()]
        aa_plain += [x["verdict"] for x in p.values()]
        bands += [x["noise_band"] for x in h.values()]
        hc, pc = compare(a, c, True)[ENTRY_ONE.strip("^$")], compare(a, c, False)[ENTRY_ONE.strip("^$")]
        power_hist.append(hc["verdict"])
        power_plain.append(pc["verdict"])
        ch, cp = count(x["verdict"] for x in h.values()), count(x["verdict"] for x in p.values())
        print(f"  trial {i + 1:2d}: A/A with history {ch['faster'] + ch['slower']} of 10 called "
              f"(bands {min(x['noise_band'] for x in h.values()):.1%} to {max(x['noise_band'] for x in h.values()):.1%}), "
              f"without {cp['faster'] + cp['slower']}; spin_50k +5%: {hc['verdict']} "
              f"({100 * (hc['ratio'] - 1):+.2f}% [{100 * (hc['ratio_ci_low'] - 1):+.2f}%, "
              f"{100 * (hc['ratio_ci_high'] - 1):+.2f}%], band {hc['noise_band']:.1%}), without {pc['verdict']}  "
              f"(load {load()})")
    summary("A/A, run, run, compare --history", aa_hist, " (target <= 5%)")
    summary("the same pairs without --history", aa_plain, "")
    bands.sort()
    print(f"  bands used: median {bands[len(bands) // 2]:.1%}, from {bands[0]:.1%} to {bands[-1]:.1%}")
    for label, vs, target in (("with --history", power_hist, ", target >= 90%"), ("without", power_plain, "")):
        k = count(vs)
        print(f"  spin_50k +5%, {label}: slower in {k['slower']} of {runs} ({100 * k['slower'] / runs:.0f}%{target}); "
              f"{k['unsure']} unsure, {k['same']} same, {k['faster']} faster")
    print(f"  [{time.time() - t0:.0f} s, load {load()}]")


def section_change(bench, runs, new, want):
    pct = {"105": 5, "101": 1}[new]
    print(f"## {pct}% planted: tkbench ab of the 1x build against the {new[0]}.{new[1:]}x one on "
          f"spin_50k, {runs} runs, default settings (load {load()})")
    paired, apart, t0 = [], [], time.time()
    for i in range(runs):
        vp, va = bench.ab("100", new, ENTRY_ONE)
        (_, v, ratio, lo, hi), = vp
        (_, w, _, wlo, whi), = va
        paired.append(v)
        apart.append(w)
        print(f"  run {i + 1:2d}: {v:6s} change {100 * (ratio - 1):+.2f}% "
              f"[{100 * (lo - 1):+.2f}%, {100 * (hi - 1):+.2f}%]; apart {w:6s} "
              f"[{100 * (wlo - 1):+.2f}%, {100 * (whi - 1):+.2f}%]  (load {load()})")
    for label, vs in (("ab (experiments paired)", paired), ("its files compared apart", apart)):
        c = count(vs)
        if want == "slower":
            print(f"  {label}: slower in {c['slower']} of {runs} ({100 * c['slower'] / runs:.0f}%, "
                  f"target >= 95%); {c['unsure']} unsure, {c['same']} same, {c['faster']} faster")
        else:
            print(f"  {label}: faster or slower in {c['faster'] + c['slower']} of {runs} (target 0); "
                  f"{c['same']} same, {c['unsure']} unsure")
    print(f"  [{time.time() - t0:.0f} s, load {load()}]")


GB_SOURCE = r"""
#include <benchmark/benchmark.h>
#include <cstdint>
#include <cstdlib>
// The spin plugin's busy loop; BM_spin/50000 takes SPIN_FACTOR (the environment) x the work.
static void BM_spin(benchmark::State& s) {
  const char* f = std::getenv("SPIN_FACTOR");
  const double factor = s.range(0) == 50000 && f ? std::atof(f) : 1.0;
  const int64_t steps = (int64_t)(factor * (double)s.range(0));
  for (auto _ : s) {
    uint64_t x = 88172645463325252ull;
    for (int64_t i = 0; i < steps; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_spin)->Arg(10000)->Arg(20000)->Arg(50000)->Arg(80000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
"""

GB_PACKAGES = ["g++", "libbenchmark-dev", "libbenchmark-tools", "python3-numpy", "python3-scipy"]


def gb_missing():
    missing = []
    for pkg in GB_PACKAGES:
        r = run(["dpkg-query", "-W", "-f=${Status}", pkg])
        if "ok installed" not in r.stdout:
            missing.append(pkg)
    return missing


def section_gbench(bench, runs):
    print(f"## Google Benchmark files: compare.py and tkbench compare side by side, {runs} pairs "
          f"(load {load()})")
    missing = gb_missing()
    if missing and os.geteuid() == 0:
        print(f"  installing {' '.join(missing)}")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run(["apt-get", "update", "-qq"], env=env)
        r = run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], env=env)
        if r.returncode:
            print(f"  SKIPPED: apt-get install failed: {r.stderr.strip()}")
            return
    elif missing:
        print(f"  SKIPPED: needs {' '.join(missing)} (apt-get install {' '.join(missing)}, as root)")
        return
    compare_py = "/usr/share/benchmark/compare.py"
    # Debian's interpreter, which its python3-scipy serves (another python3 may come first)
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"
    src, exe = os.path.join(bench.tmp, "gb.cc"), os.path.join(bench.tmp, "gb")
    with open(src, "w") as f:
        f.write(GB_SOURCE)
    r = run(["g++", "-O2", src, "-o", exe, "-lbenchmark", "-lpthread"])
    if r.returncode:
        print(f"  SKIPPED: the Google Benchmark program does not build: {r.stderr.strip()}")
        return
    counts = {"compare.py": [0, 0], "tkbench": [0, 0]}  # calls on [unchanged, changed]
    t0 = time.time()
    for i in range(runs):
        files = []
        for k, factor in (("base", "1.0"), ("new", "1.05")):
            out = os.path.join(bench.tmp, f"gb_{k}.json")
            r = run([exe, "--benchmark_repetitions=9", "--benchmark_min_time=0.05",
                     f"--benchmark_out={out}"], env=dict(os.environ, SPIN_FACTOR=factor))
            if r.returncode:
                sys.exit(f"compare_accuracy: the Google Benchmark program failed: {r.stderr}")
            files.append(out)
        dump = os.path.join(bench.tmp, "cmp_py.json")
        r = run([python, compare_py, "-d", dump, "benchmarks", *files])
        if r.returncode:
            print(f"  SKIPPED: compare.py failed: {r.stderr.strip()}")
            return
        with open(dump) as f:
            py = {b["name"]: b for b in json.load(f) if b.get("run_type") == "iteration" or
                  (b.get("run_type") == "" and b["name"] != "OVERALL_GEOMEAN")}
        out = os.path.join(bench.tmp, "cmp_tkb.json")
        run([bench.tkbench, "compare", *files, "--format", "json", "--out", out, "--quiet"])
        tk = {name: (v, ratio, lo, hi) for name, v, ratio, lo, hi in verdicts(out)}
        if i == 0:
            print(f"  {'Benchmark':16s} | {'compare.py: change':>18s} {'U p':>8s} {'call':>7s} | "
                  f"{'tkbench: change':>15s} {'95% CI':>19s} {'verdict':>8s}")
        for name in sorted(tk, key=lambda n: int(n.split("/")[1])):
            b = py.get(name)
            ms = b["measurements"] if b else []
            change = sorted(m["time"] for m in ms)[len(ms) // 2] if ms else float("nan")
            p = b["utest"].get("time_pvalue") if b and b["utest"] else None
            call = "-" if p is None else ("slower" if change > 0 else "faster") if p < 0.05 else "none"
            v, ratio, lo, hi = tk[name]
            changed = name == "BM_spin/50000"
            counts["compare.py"][changed] += call in ("slower", "faster")
            counts["tkbench"][changed] += v in ("slower", "faster")
            if i == 0:
                pstr = "-" if p is None else f"{p:.4f}"
                print(f"  {name:16s} | {100 * change:+17.2f}% {pstr:>8s} {call:>7s} | "
                      f"{100 * (ratio - 1):+14.2f}% [{100 * (lo - 1):+7.2f}%, {100 * (hi - 1):+7.2f}%] "
                      f"{v:>8s}")
    for tool, (unchanged, changed) in counts.items():
        print(f"  {tool:10s}: a change called on {unchanged} of {4 * runs} unchanged comparisons "
              f"({100 * unchanged / (4 * runs):.0f}%), on {changed} of {runs} for the 5% one")
    print(f"  [{time.time() - t0:.0f} s, load {load()}]; compare.py's call: p < 0.05 of its U test "
          f"over the 9 repetitions, by the sign of the median change (it has no noise band and no "
          f"correction)")


GB_FEW_SOURCE = r"""
#include <benchmark/benchmark.h>
#include <cstdint>
#include <cstdlib>
// 26 busy loops; each takes SPIN_FACTOR (the environment) x its work.
static void BM_few(benchmark::State& s) {
  const char* f = std::getenv("SPIN_FACTOR");
  const int64_t steps = (int64_t)((f ? std::atof(f) : 1.0) * 2000.0 * (double)s.range(0));
  for (auto _ : s) {
    uint64_t x = 88172645463325252ull;
    for (int64_t i = 0; i < steps; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_few)->DenseRange(1, 26)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
"""


# short, so a pair of 10 runs of 26 entries fits a minute on a crowded 2-core machine
GB_FEW_MIN_TIME = "--benchmark_min_time=0.01"


def gb_rows(exe, factor, out):
    """One run of the Google Benchmark program (1 repetition): its iteration rows."""
    r = run([exe, "--benchmark_repetitions=1", GB_FEW_MIN_TIME, f"--benchmark_out={out}"],
            env=dict(os.environ, SPIN_FACTOR=factor))
    if r.returncode:
        sys.exit(f"compare_accuracy: the Google Benchmark program failed: {r.stderr}")
    with open(out) as f:
        d = json.load(f)
    return d, [b for b in d["benchmarks"] if b.get("run_type") == "iteration"]


def gb_pair(bench, exe, factor, interleaved):
    """BASE (1x) and NEW (factor x the work) files of 5 repetitions each. Interleaved: 5
    runs of one repetition a side in ABBA order, each repetition's rows renumbered, as
    `ab` alternates experiments (a drift between runs then lands on both sides alike);
    else two runs of 5 repetitions one after the other."""
    files = [os.path.join(bench.tmp, f"few_{k}.json") for k in ("base", "new")]
    if not interleaved:
        for path, fac in zip(files, ("1.0", factor)):
            r = run([exe, "--benchmark_repetitions=5", GB_FEW_MIN_TIME, f"--benchmark_out={path}"],
                    env=dict(os.environ, SPIN_FACTOR=fac))
            if r.returncode:
                sys.exit(f"compare_accuracy: the Google Benchmark program failed: {r.stderr}")
        return files
    docs, rows = [None, None], [[], []]
    tmp = os.path.join(bench.tmp, "few_one.json")
    for rep in range(5):
        for side in ((0, 1) if rep % 2 == 0 else (1, 0)):
            d, rs = gb_rows(exe, "1.0" if side == 0 else factor, tmp)
            for b in rs:
                b["repetition_index"], b["repetitions"] = rep, 5
            docs[side] = docs[side] or d
            rows[side] += rs
    for side, path in enumerate(files):
        docs[side]["benchmarks"] = rows[side]
        with open(path, "w") as f:
            json.dump(docs[side], f)
    return files


def section_gbfew(bench, runs):
    print(f"## Few repetitions, many entries: 26 Google Benchmark entries x 5 repetitions, {runs} pairs "
          f"each: A/A and every entry 1.10x the work, repetitions interleaved (ABBA, as ab does) and run "
          f"one after the other (load {load()})")
    missing = [p for p in gb_missing() if p in ("g++", "libbenchmark-dev")]
    if missing:
        print(f"  SKIPPED: needs {' '.join(missing)} (apt-get install {' '.join(missing)}, as root)")
        return
    src, exe = os.path.join(bench.tmp, "few.cc"), os.path.join(bench.tmp, "few")
    with open(src, "w") as f:
        f.write(GB_FEW_SOURCE)
    r = run(["g++", "-O2", src, "-o", exe, "-lbenchmark", "-lpthread"])
    if r.returncode:
        print(f"  SKIPPED: the Google Benchmark program does not build: {r.stderr.strip()}")
        return
    t0 = time.time()
    for label, factor, interleaved in (("A/A interleaved", "1.0", True), ("x1.10 interleaved", "1.10", True),
                                       ("A/A one run after the other", "1.0", False),
                                       ("x1.10 one run after the other", "1.10", False)):
        allv, rules, callable_ = [], {}, []
        for i in range(runs):
            files = gb_pair(bench, exe, factor, interleaved)
            out = os.path.join(bench.tmp, "few_cmp.json")
            run([bench.tkbench, "compare", *files, "--format", "json", "--out", out, "--quiet"])
            with open(out) as f:
                rows = json.load(f)["benchmarks"]
            vs = [b["verdict"] for b in rows]
            allv += vs
            for b in rows:
                rules[b["rule"]] = rules.get(b["rule"], 0) + 1
                if b["min_callable_change"] is not None:
                    callable_.append(b["min_callable_change"])
            c = count(vs)
            print(f"  {label} pair {i + 1:2d}: {c['same']} same, {c['unsure']} unsure, {c['faster']} faster, "
                  f"{c['slower']} slower  (load {load()})")
        c, n = count(allv), len(allv)
        callable_.sort()
        med = callable_[len(callable_) // 2] if callable_ else float("nan")
        rule_text = ", ".join(f"{k} {v}" for k, v in sorted(rules.items()))
        if factor == "1.0":
            print(f"  {label}: {n} comparisons: called {c['faster'] + c['slower']} "
                  f"({100 * (c['faster'] + c['slower']) / n:.1f}%, target <= 5%); same {c['same']}, unsure "
                  f"{c['unsure']}; rules: {rule_text}; median smallest callable change {100 * med:+.1f}%")
        else:
            print(f"  {label}: {n} comparisons: slower {c['slower']} ({100 * c['slower'] / n:.1f}%); unsure "
                  f"{c['unsure']}, same {c['same']}, faster {c['faster']}; rules: {rule_text}; median smallest "
                  f"callable change {100 * med:+.1f}%")
    print(f"  [{time.time() - t0:.0f} s, load {load()}]")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--history", type=int, default=12, help="runs recorded before the history section's trials")
    ap.add_argument("--section", action="append", choices=["aa", "seq", "history", "power", "small", "gbench", "gbfew"])
    args = ap.parse_args()
    sections = args.section or ["aa", "seq", "history", "power", "small", "gbench", "gbfew"]
    tmp = tempfile.mkdtemp(prefix="tkb_compare_accuracy_")
    try:
        bench = Bench(args.build, tmp)
        print(f"# compare_accuracy: {args.runs} runs per section, {os.cpu_count()} cores, load {load()}")
        for s in sections:
            if s == "aa":
                section_aa(bench, args.runs)
            elif s == "seq":
                section_seq(bench, args.runs)
            elif s == "history":
                section_history(bench, args.runs, args.history)
            elif s == "power":
                section_change(bench, args.runs, "105", "slower")
            elif s == "small":
                section_change(bench, args.runs, "101", "none")
            elif s == "gbench":
                section_gbench(bench, args.runs)
            else:
                section_gbfew(bench, args.runs)
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
