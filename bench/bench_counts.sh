#!/usr/bin/env bash
# bench_counts.sh [BUILD_DIR] [--section S] [--runs N] [--cost-shard K/N] [-- SELECTION...] - what
# `run --method instructions` promises, measured (docs/PERFORMANCE.md records it):
#
#   stable   the same build counted 3 times, the third with both cores kept busy by two
#            busy loops: per entry, the spread of its median count over the 3 runs (the
#            promise: 0) and of its calls within a run. SELECTION (default: six of the
#            builtin ops' cpu forwards, normalization's OpenMP loops and ragged_dot's
#            OpenBLAS products, the default tag's sizes) picks the entries.
#   compare  N (default 20) pairs of runs of the spin plugin (tests/plugins/spin_plugin.c)
#            against themselves, and N against the build with 1% more work: how often
#            `compare` calls every entry same, and the 1% build slower with a ratio of
#            1.010 +- 0.001 (baseline: the work planted, 1.01x).
#   empty    an empty function's count (the promise: 0, the floor subtracted).
#   threads  the counts of an OpenMP op (normalization's two smallest cpu forwards) with 1
#            and 2 threads, twice each: what the threads' waiting adds, and whether it
#            repeats.
#   cost     what counting costs: the default suite (160 entries) counted, and timed with
#            the same calls (wallclock, fixed 3 calls, 1 experiment, 1 thread), the whole
#            run's CPU time and wall time each (slow: hours on a small busy machine). The
#            ratio of CPU times is Valgrind's slowdown of the suite, harness included;
#            CPU time, unlike wall time, does not grow with other work on the machine.
#            --cost-shard K/N measures part K of N of the suite instead (`run --shard`,
#            parts of about equal estimated cost).
#
# Default: every section but cost. Prints one table per section.
set -uo pipefail
build=build
sections=(stable compare empty threads)
runs=20
cost_shard=()
selection=(--tag cpu --impl cpu --mode forward
           --filter '^cpu_(96x96x64|96x96x128|32x96x96_axis0|mixtral_8x7b|maxtext_deepseek-v3-2048x448_16x448x64|memory_bound)_forward_cpu$')
while [ $# -gt 0 ]; do
  case $1 in
    --section) sections=("$2"); shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cost-shard) cost_shard=(--shard "$2"); shift 2 ;;
    --) shift; selection=("$@"); break ;;
    *) build=$1; shift ;;
  esac
done
build=$(realpath "$build")
cd "$(dirname "$0")/.."
T="$build/tkbench"
S100="$build/tkb_spin_100.so" S101="$build/tkb_spin_101.so"
COUNT=(--method instructions --count-source callgrind)
tmp=$(mktemp -d /tmp/tkb_bench_counts_XXXXXX)
busy_pids=()
cleanup() {
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "# counted instructions  $(date -u +%Y-%m-%dT%H:%MZ)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)  $(nproc) cores  $(valgrind --version 2>/dev/null || echo 'no valgrind')"
command -v valgrind >/dev/null || { echo "valgrind is not installed: nothing to measure"; exit 77; }

# Per entry of the given files: the distinct counts over the files and within each.
spread() {
  python3 - "$@" <<'PY'
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
names = [b["run_name"] for b in runs[0]["benchmarks"] if b.get("run_type") == "iteration"]
print(f"| entry | count | spread over {len(runs)} runs | spread within a run |")
print("|---|--:|--:|--:|")
across_same = within_same = 0
worst_across = worst_within = 0
for n in dict.fromkeys(names):
    rows = [[b for b in r["benchmarks"] if b["run_name"] == n and not b.get("error_occurred")] for r in runs]
    if not all(rows):
        print(f"| {n} | failed | | |")
        continue
    calls = [r[0]["tkbench"]["evaluation_times_ms"] for r in rows]
    medians = [r[0]["real_time"] for r in rows]
    across = max(medians) - min(medians)
    within = max(max(c) - min(c) for c in calls)
    worst_across, worst_within = max(worst_across, across), max(worst_within, within)
    across_same += across == 0
    within_same += within == 0
    print(f"| {n} | {medians[0]:.0f} | {across:.0f} | {within:.0f} |")
n = len(dict.fromkeys(names))
print(f"\nthe same count in every run: {across_same} of {n} entries (the largest spread over the runs: {worst_across:.0f}); "
      f"every call of a run alike: {within_same} of {n} (the largest spread within a run: {worst_within:.0f})")
PY
}

stable() {
  echo
  echo "## stable: the same build counted 3 times (${selection[*]})"
  for k in 1 2 3; do
    if [ "$k" = 3 ]; then # both cores kept busy by other work
      for _ in 1 2; do (while :; do :; done) & busy_pids+=($!); done
    fi
    local t0=$SECONDS
    "$T" run "${selection[@]}" "${COUNT[@]}" --quiet --out "$tmp/stable$k.json"
    echo "run $k: $((SECONDS - t0)) s, load $(load)$([ "$k" = 3 ] && echo ', with 2 busy loops')"
  done
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null; done
  busy_pids=()
  echo
  spread "$tmp/stable1.json" "$tmp/stable2.json" "$tmp/stable3.json"
}

compare_section() {
  echo
  echo "## compare: $runs pairs of spin runs, same build and 1% more work (load $(load))"
  local filter='^spin_(10k|50k|100k)_forward_c$'
  for k in $(seq 0 "$runs"); do
    "$T" run --load "$S100" --filter "$filter" "${COUNT[@]}" --quiet --out "$tmp/s100_$k.json" || echo "run failed"
    [ "$k" -lt "$runs" ] && { "$T" run --load "$S101" --filter "$filter" "${COUNT[@]}" --quiet --out "$tmp/s101_$k.json" || echo "run failed"; }
  done
  for k in $(seq 0 $((runs - 1))); do
    "$T" compare "$tmp/s100_$k.json" "$tmp/s100_$((k + 1)).json" --format json --out "$tmp/aa_$k.json" --quiet
    "$T" compare "$tmp/s100_$k.json" "$tmp/s101_$k.json" --format json --out "$tmp/ab_$k.json" --quiet
  done
  python3 - "$tmp" "$runs" <<'PY'
import json, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
aa = [json.load(open(f"{tmp}/aa_{k}.json")) for k in range(runs)]
ab = [json.load(open(f"{tmp}/ab_{k}.json")) for k in range(runs)]
rows = lambda ds: [b for d in ds for b in d["benchmarks"]]
same = sum(b["verdict"] == "same" for b in rows(aa))
ratios = [b["ratio"] for b in rows(ab)]
slower = sum(b["verdict"] == "slower" for b in rows(ab))
inside = sum(abs(r - 1.01) <= 0.001 for r in ratios)
exact = sum(b["exact"] for b in rows(aa) + rows(ab))
print("| comparison | pairs | entries compared | verdicts | ratio new/base |")
print("|---|--:|--:|---|---|")
print(f"| same build | {runs} | {len(rows(aa))} | {same} same | {min(b['ratio'] for b in rows(aa)):.6f} to {max(b['ratio'] for b in rows(aa)):.6f} |")
print(f"| 1.01x the work | {runs} | {len(ratios)} | {slower} slower | {min(ratios):.6f} to {max(ratios):.6f}; {inside} of {len(ratios)} within 1.010 +- 0.001 |")
print(f"\n{exact} of {len(rows(aa)) + len(rows(ab))} rows compared exactly (every call counted alike); band: +-{aa[0]['settings']['noise']*100:g}%")
PY
}

empty() {
  echo
  echo "## empty: an empty function's count"
  "$T" run --load "$S100" --filter '^spin_empty_' "${COUNT[@]}" --quiet --out "$tmp/empty.json"
  python3 -c "
import json; d = json.load(open('$tmp/empty.json'))
b = d['benchmarks'][0]; m = b['tkbench']['metadata']
print(f\"{b['run_name']}: {b['real_time']:.0f} instructions per call (calls: {b['tkbench']['evaluation_times_ms']}); the floor subtracted: {m['count_floor_instructions']} instructions\")"
}

threads() {
  echo
  echo "## threads: an OpenMP op counted with 1 and 2 threads, twice each"
  for t in 1 2; do
    for k in 1 2; do
      "$T" run --filter '^cpu_96x96x(64|128)_forward_cpu$' "${COUNT[@]}" --threads "$t" --quiet \
        --out "$tmp/t${t}_$k.json"
    done
  done
  python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
print("| entry | 1 thread (run 1, run 2) | 2 threads (run 1, run 2) | 2 threads' calls, run 1 |")
print("|---|---|---|---|")
d = {(t, k): json.load(open(f"{tmp}/t{t}_{k}.json")) for t in (1, 2) for k in (1, 2)}
for i, b in enumerate(d[(1, 1)]["benchmarks"]):
    n = b["run_name"]
    get = lambda t, k: next(x for x in d[(t, k)]["benchmarks"] if x["run_name"] == n)
    c = lambda t, k: f"{get(t, k)['real_time']:.0f}"
    calls = ", ".join(f"{v:.0f}" for v in get(2, 1)["tkbench"]["evaluation_times_ms"])
    print(f"| {n} | {c(1, 1)}, {c(1, 2)} | {c(2, 1)}, {c(2, 2)} | {calls} |")
PY
}

cost() {
  echo
  echo "## cost: the default suite${cost_shard:+ (part ${cost_shard[1]})} counted, and timed with the same calls (load $(load))"
  local fmt="%e %U %S"
  /usr/bin/time -f "$fmt" -o "$tmp/timed.t" "$T" run "${cost_shard[@]}" --stop fixed --iterations 3 \
    --experiments 1 --threads 1 --quiet --out "$tmp/timed.json"
  echo "timed: done, load $(load)"
  /usr/bin/time -f "$fmt" -o "$tmp/counted.t" "$T" run "${cost_shard[@]}" "${COUNT[@]}" --timeout 0 --quiet \
    --out "$tmp/counted.json"
  echo "counted: done, load $(load)"
  python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
def t(name):
    wall, user, sys_ = map(float, open(f"{tmp}/{name}.t").read().split()[-3:])
    d = json.load(open(f"{tmp}/{name}.json"))
    ok = sum(1 for b in d["benchmarks"] if b.get("run_type") == "iteration" and not b.get("error_occurred") and not b.get("skipped"))
    return wall, user + sys_, ok
(tw, tc, tn), (cw, cc, cn) = t("timed"), t("counted")
print("| run | entries ok | wall | CPU (user + sys, workers included) |")
print("|---|--:|--:|--:|")
print(f"| timed (wallclock, 3 calls) | {tn} | {tw:.0f} s | {tc:.0f} s |")
print(f"| counted (Callgrind, 3 calls) | {cn} | {cw:.0f} s | {cc:.0f} s |")
print(f"\nslowdown: {cc / tc:.1f}x in CPU time, {cw / tw:.1f}x in wall time")
PY
}

for s in "${sections[@]}"; do
  case $s in
    stable) stable ;;
    compare) compare_section ;;
    empty) empty ;;
    threads) threads ;;
    cost) cost ;;
    *) echo "no section $s: stable, compare, empty, threads, cost" >&2; exit 2 ;;
  esac
done
