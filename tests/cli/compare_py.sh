# compare_py.sh - Google Benchmark's tools/compare.py, unmodified (Debian's
# libbenchmark-tools), drives tkbench in each of its modes, with and without -a
# (--benchmark_display_aggregates_only): benchmarks (two JSON files of tkbench runs, and
# tkbench itself, which compare.py runs), filters and benchmarksfiltered (tkbench run
# with two filters). Its setup installs libbenchmark-tools and python3-scipy (compare.py
# imports scipy) when they are missing and it is root; it skips only where it cannot.
. "$(dirname "$0")/lib.bash"

COMPARE=/usr/share/benchmark/compare.py
pick_python() {
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c "import scipy, numpy" 2>/dev/null; then
      echo "$py"
      return
    fi
  done
}
PY=$(pick_python)
if { [ ! -f "$COMPARE" ] || [ -z "$PY" ]; } && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libbenchmark-tools \
    python3-scipy >"$CAP/apt" 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        libbenchmark-tools python3-scipy >"$CAP/apt" 2>&1; }
  PY=$(pick_python)
fi
if [ ! -f "$COMPARE" ] || [ -z "$PY" ]; then
  echo "SKIPPED: compare.py ($COMPARE, from libbenchmark-tools) or a python3 with scipy is missing, and installing them needs root and a package source"
  exit 77
fi

# two entries, 3 experiments of 3 calls: enough for compare.py's U test, and quick
ENTRIES='^cpu_96x96x(64|128)_forward_cpu$'
A=cpu_96x96x64_forward_cpu B=cpu_96x96x128_forward_cpu
RUN=(--benchmark_repetitions=3 --benchmark_min_time=3x)

# compare MODE... : compare.py exits 0 and prints both entries' comparison; with -a, the
# aggregates alone. The output is kept in $CAP/cmp.
compare() {
  local aggregates=no
  [ "$1" = -a ] && aggregates=yes
  "$PY" "$COMPARE" --no-color "$@" >"$CAP/cmp" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then fail "compare.py $* -> exit $rc: $(tail -20 "$CAP/cmp")"; return; fi
  python3 - "$CAP/cmp" "$aggregates" >"$CAP/why" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
# the table after compare.py's own header (tkbench's table, when it runs tkbench, is
# before it); a row is its name (which may hold spaces: "[a vs. b]_mean"), then numbers
start = max(i for i, l in enumerate(lines) if l.startswith("Benchmark") and "Time Old" in l)
rows = [m.group(1) for l in lines[start + 1:] if (m := re.match(r"^(.*?)\s+[-+]?\d+\.\d+", l))]
aggregate = re.compile(r"_(mean|median|stddev|cv|pvalue)$")
problems = []
if "OVERALL_GEOMEAN" not in rows:
    problems.append("no OVERALL_GEOMEAN row")
if not any(r.endswith("_pvalue") for r in rows):
    problems.append("no U test (pvalue) row")
if not any(r.endswith("_median") for r in rows):
    problems.append("no median aggregate row")
plain = [r for r in rows if r != "OVERALL_GEOMEAN" and not aggregate.search(r)]
if sys.argv[2] == "yes" and plain:
    problems.append(f"-a shows the experiments' rows too: {plain[:3]}")
if sys.argv[2] == "no" and len(plain) < 3:
    problems.append(f"without -a, the experiments' rows are missing ({len(plain)})")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
  if [ $? -eq 0 ]; then pass; else fail "compare.py $*: $(cat "$CAP/why")
$(head -40 "$CAP/cmp")"; fi
}

# Each mode with and without -a on two JSON files of tkbench runs, and once more with
# compare.py running tkbench itself (twice: with Google Benchmark's flags and its filter).
expect 0 "" "$TKBENCH" run --filter "$ENTRIES" "${RUN[@]}" --quiet --out "$TMP/base.json"
expect 0 "" "$TKBENCH" run --filter "$ENTRIES" "${RUN[@]}" --quiet --out "$TMP/new.json"
compare benchmarks "$TMP/base.json" "$TMP/new.json"
compare -a benchmarks "$TMP/base.json" "$TMP/new.json"
compare -a benchmarks "$TKBENCH" "$TKBENCH" --benchmark_filter="$ENTRIES" "${RUN[@]}"
# filters: one program, two filters. As with Google Benchmark, a filter must match the
# aggregates' names too ("..._mean"): no '$'.
compare filters "$TMP/base.json" "$A" "$B"
compare -a filters "$TMP/base.json" "$A" "$B"
compare filters "$TKBENCH" "$A" "$B" "${RUN[@]}"
# benchmarksfiltered: each input with its own filter
compare benchmarksfiltered "$TMP/base.json" "$A" "$TMP/new.json" "$B"
compare -a benchmarksfiltered "$TMP/base.json" "$A" "$TMP/new.json" "$B"
compare -a benchmarksfiltered "$TKBENCH" "$A" "$TKBENCH" "$B" "${RUN[@]}"
# the CPU column is the CPU time: its own numbers, not a copy of the times
python3 - "$TMP/base.json" <<'PY' && pass || fail "cpu_time copies real_time in $TMP/base.json"
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b["run_type"] == "iteration"]
sys.exit(0 if any(b["cpu_time"] != b["real_time"] for b in rows) else 1)
PY
finish
