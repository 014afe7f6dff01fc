# gbench_files.sh - Google Benchmark's own files, as they are, through tkbench: a NaN
# counter (0/0) read and the file compared; 26 entries x 5 repetitions against a copy x1.10
# called by the interval rule where the U test cannot reach significance; a complexity
# family's BigO/RMS rows compared as a fit and a failed benchmark's error row per
# repetition; and the CSV tkbench writes under Google Benchmark's flags read as Google
# Benchmark's own.
#
# Google Benchmark's side: gbench/field.cc, built and run here against libbenchmark-dev
# (installed when missing and root), and the files the same program wrote with Debian's
# 1.7.1 (fixtures/gbench_field_1.7.1.json, gbench/field_1.7.1.csv), so the test runs
# without the package too.
. "$(dirname "$0")/lib.bash"
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
FIXTURES=$REPO/tests/fixtures

jsons=("$FIXTURES/gbench_field_1.7.1.json")
csvs=("$HERE/gbench/field_1.7.1.csv")
if ! [ -e /usr/include/benchmark/benchmark.h ] && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libbenchmark-dev \
    >/dev/null 2>&1 || true
fi
if ${CXX:-c++} -O1 -o "$TMP/field" "$HERE/gbench/field.cc" -lbenchmark -lpthread 2>/dev/null &&
  "$TMP/field" --benchmark_repetitions=5 --benchmark_min_time=0.01 --benchmark_out="$TMP/live.json" \
    --benchmark_out_format=json >/dev/null 2>&1 &&
  "$TMP/field" --benchmark_filter='field_(ratio|fail|scaling)' --benchmark_repetitions=2 \
    --benchmark_min_time=0.001 --benchmark_format=csv >"$TMP/live.csv" 2>/dev/null; then
  jsons+=("$TMP/live.json")
  csvs+=("$TMP/live.csv")
else
  echo "note: no Google Benchmark program could be built here (libbenchmark-dev and c++); the stored 1.7.1 files are read alone"
fi

# BASE and NEW copies of a Google Benchmark file: every repetition's real_time replaced by
# its cpu_time (a shared machine's wall clock is noisy; its CPU time has the spread of a
# quiet one), NEW's times and coefficients times FACTOR. NaN stays NaN.
copies() {
  python3 - "$1" "$2" "$TMP/base.json" "$TMP/new.json" <<'PY'
import json, sys
src, factor, base, new = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
for path, f in ((base, 1.0), (new, factor)):
    d = json.load(open(src))  # NaN is read as Python's nan and written back as NaN
    for b in d["benchmarks"]:
        if "cpu_time" in b and b.get("aggregate_unit", "time") == "time":
            b["real_time"] = b["cpu_time"] * f
            b["cpu_time"] *= f
        for k in ("real_coefficient", "cpu_coefficient"):
            if k in b:
                b[k] *= f
    json.dump(d, open(path, "w"))
PY
}

for J in "${jsons[@]}"; do
  what=$(basename "$J")
  grep -q '"hit_rate": NaN' "$J" && pass || fail "$what holds no NaN counter"
  # 1. the NaN counter refuses nothing: every entry compared, the NaN said
  expect 0 "9 numbers are NaN or infinite, e.g. \"hit_rate\" of \"field_ratio\"" "$TKBENCH" compare "$J" "$J"
  grep -qE '^field_ratio ' "$CAP/out" && pass || fail "$what: field_ratio not compared: $(cat "$CAP/out")"
  # 5. the fit compared as a fit; the failure listed once
  grep -q "complexity field_scaling: N^2 on both sides; coefficient" "$CAP/out" && pass ||
    fail "$what: no complexity row: $(cat "$CAP/out")"
  grep -q "not compared field_scaling" "$CAP/out" && fail "$what: the fit listed as not compared" || pass
  grep -q "not compared field_fail: BASE broken on purpose; NEW broken on purpose" "$CAP/out" && pass ||
    fail "$what: field_fail not listed"
  grep -q "31 compared: .*; 1 complexity fit; 1 not compared" "$CAP/out" && pass || fail "$what: counts"
  # 2. 26 entries x 5 repetitions against x1.10: the interval rule decides and calls the
  # change wherever its smallest callable change is below 10%; the U test alone could
  # call none (0.0079 x 31 entries); an exact copy and a x1.01 copy: nothing called
  copies "$J" 1.10
  expect 0 "judged on the ratio's 99.84% interval" "$TKBENCH" compare "$TMP/base.json" "$TMP/new.json" --out "$TMP/cmp.json" --format json
  json_check "$TMP/cmp.json" "all(b['rule'] == 'interval' and b['p_adjusted'] > 0.05 and (b['verdict'] == 'slower') == (b['min_callable_change'] < 0.10) for b in d['benchmarks'])"
  # the stored file's CPU times are quiet enough to call 25 of 26; a live run's, on a
  # loaded machine, may be less so (the rule then says so, and the check above holds)
  least=20
  [ "$J" = "${jsons[0]}" ] || least=0
  json_check "$TMP/cmp.json" "sum(b['verdict'] == 'slower' for b in d['benchmarks'] if b['name'].startswith('field_work/')) >= $least and d['settings']['rules']['interval'] == 31"
  json_check "$TMP/cmp.json" "len(d['complexity']) == 1 and abs(d['complexity'][0]['real_coefficient_ratio'] - 1.1) < 1e-9 and d['complexity'][0]['base_big_o'] == 'N^2'"
  "$TKBENCH" compare "$TMP/base.json" "$TMP/new.json" >"$CAP/out" 2>&1
  grep -qE '^field_work/1 .* CI 99\.84% +(slower|unsure)$' "$CAP/out" && pass || fail "$what: no rule column: $(head -12 "$CAP/out")"
  if [ "$J" = "${jsons[0]}" ]; then # the gate names the rule and its interval
    expect 1 "field_work/1 is slower: +10.0% (99.84% CI +" "$TKBENCH" compare "$TMP/base.json" "$TMP/new.json" --fail-on slower --quiet
  fi
  for factor in 1.0 1.01; do
    copies "$J" "$factor"
    "$TKBENCH" compare "$TMP/base.json" "$TMP/new.json" --format json --out "$TMP/cmp.json" --quiet
    json_check "$TMP/cmp.json" "d['counts']['slower'] == 0 and d['counts']['faster'] == 0"
  done
done

# compare.py reads the same NaN file (as a reference: the pair is readable)
if [ -f /usr/share/benchmark/compare.py ] && /usr/bin/python3 -c "import scipy" 2>/dev/null; then
  /usr/bin/python3 /usr/share/benchmark/compare.py benchmarks "${jsons[0]}" "${jsons[0]}" >"$CAP/py" 2>&1 &&
    pass || fail "compare.py cannot read ${jsons[0]}: $(tail -5 "$CAP/py")"
fi

# 3. the CSV under Google Benchmark's flags: its columns, its rows' shapes
if ${CC:-cc} -shared -fPIC -I"$REPO/include" "$HERE/gbench/keys_plugin.c" -o "$TMP/keys.so" 2>"$CAP/err"
then pass; else fail "cannot build gbench/keys_plugin.c: $(cat "$CAP/err")"; finish; exit; fi
RUN=(--benchmark_filter='^keys_(ok|fail)_' --load "$TMP/keys.so" --benchmark_repetitions=2 --benchmark_min_time=3x)
expect 1 "" "$TKBENCH" "${RUN[@]}" --benchmark_out="$TMP/tk.csv" --benchmark_out_format=csv
expect 1 "" "$TKBENCH" "${RUN[@]}" --benchmark_format=csv
cp "$CAP/out" "$TMP/tk_stdout.csv"
expect 1 "" "$TKBENCH" "${RUN[@]}" --out "$TMP/own.csv" --format csv
expect 1 "" "$TKBENCH" "${RUN[@]}" --benchmark_out="$TMP/tk.json"
python3 - "$TMP/tk.csv" "$TMP/tk_stdout.csv" "$TMP/own.csv" "$TMP/tk.json" "${csvs[@]}" >"$CAP/csv" 2>&1 <<'PY'
import csv, json, sys
tk, tk_stdout, own, tk_json, gbs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
problems = []
def rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))
mine = rows(tk)
if rows(tk_stdout) != mine:
    # the same run twice differs in its times only: compare the shapes
    a, b = rows(tk_stdout), mine
    if [r[0] for r in a] != [r[0] for r in b] or a[0] != b[0]:
        problems.append("--benchmark_format=csv on stdout differs in shape from --benchmark_out_format=csv")
for gb in gbs:
    theirs = rows(gb)
    if mine[0][:10] != theirs[0][:10]:
        problems.append(f"header {mine[0][:10]} is not Google Benchmark's {theirs[0][:10]} ({gb})")
    # an error row: the name, 7 empty fields, true, the message, and nothing after
    err = [r for r in theirs if len(r) > 8 and r[8] == "true"]
    mine_err = [r for r in mine if len(r) > 8 and r[8] == "true"]
    if not err or not mine_err or {len(r) for r in err} != {len(r) for r in mine_err}:
        problems.append(f"error rows: Google Benchmark's {err[:1]}, tkbench's {mine_err[:1]}")
    if any(r[1:8] != [""] * 7 for r in mine_err):
        problems.append(f"an error row has numbers: {mine_err}")
header = mine[0]
if header[10:] != sorted(header[10:]) or "widgets" not in header[10:]:
    problems.append(f"counter columns {header[10:]}: want the user counters, in name order")
col = {k: i for i, k in enumerate(header)}
ok = [r for r in mine if r[0].startswith("keys_ok")]
names = [r[0] for r in ok]
if names.count("keys_ok_forward_c") != 2 or not all(f"keys_ok_forward_c_{a}" in names for a in ("mean", "median", "stddev", "cv")):
    problems.append(f"rows: {names}")
for r in ok:
    try:
        float(r[col["real_time"]]); float(r[col["cpu_time"]]); int(r[col["iterations"]])
        float(r[col["items_per_second"]]); float(r[col["bytes_per_second"]]); float(r[col["widgets"]])
    except ValueError as e:
        problems.append(f"row {r}: {e}")
    want_unit = "" if r[0].endswith("_cv") else "ns"
    if r[col["time_unit"]] != want_unit:
        problems.append(f"row {r[0]}: time_unit {r[col['time_unit']]!r}, want {want_unit!r}")
fails = [r for r in mine if r[0] == "keys_fail_forward_c"]
if len(fails) != 2:
    problems.append(f"{len(fails)} error rows for 2 repetitions")
# the same numbers as the JSON's rows
j = {(b["name"], b.get("repetition_index")): b for b in json.load(open(tk_json))["benchmarks"]}
if rows(own)[0][:3] != ["name", "op", "spec"]:
    problems.append(f"--format csv is no longer tkbench's own: {rows(own)[0][:5]}")
# the JSON's failed entry: a row per repetition, as Google Benchmark writes
reps = sorted(b["repetition_index"] for b in json.load(open(tk_json))["benchmarks"] if b["name"] == "keys_fail_forward_c")
if reps != [0, 1]:
    problems.append(f"the failed entry's JSON rows have repetition_index {reps}, want [0, 1]")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
if [ $? -eq 0 ]; then pass; else fail "CSV: $(cat "$CAP/csv")"; fi
# Google Benchmark's own error rows, which tkbench's now match: one per repetition
json_check "${jsons[0]}" "sorted(b['repetition_index'] for b in d['benchmarks'] if b['name'] == 'field_fail') == [0, 1, 2, 3, 4]"
finish
