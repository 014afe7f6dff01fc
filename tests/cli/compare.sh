# compare.sh - `tkbench compare` as a process: verdicts on crafted files with a known
# change, the gate's exit codes, the outputs (console, markdown, JSON with the contract's
# keys, --out written whole), Google Benchmark files, and bad files refused with exit 2
# and a message naming the file and the problem.
. "$(dirname "$0")/lib.bash"
FIXTURES=$(cd "$(dirname "$0")/../fixtures" && pwd)

# Two tkbench-like files: 3 experiments x 300 calls per entry, log-normal around the
# medians (1% spread). NEW: "slow" 10% slower, "fast" 10% faster, "steady" unchanged,
# "breaks" fails, "gone" removed, "fresh" added.
python3 - "$TMP" <<'PY'
import json, random, sys
tmp = sys.argv[1]
def entry(name, median, rng, fail=False):
    row = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 3,
           "repetition_index": 0, "iterations": 900, "real_time": median * 1e6,
           "cpu_time": median * 1e6, "time_unit": "ns"}
    if fail:
        row.update(error_occurred=True, error_message="NaN in output 0", real_time=0)
        return [row]
    times = []
    for e in range(3):
        shift = rng.gauss(0, 0.002)
        times += [median * (1 + shift) * rng.lognormvariate(0, 0.01) for _ in range(300)]
    row["tkbench"] = {"evaluation_times_ms": times,
                      "statistics": {"experiment_sizes": [300, 300, 300]},
                      "metadata": {"threads": "2"}}
    return [row]
def doc(entries, method):
    return {"context": {"library": "tkbench", "library_version": "0.1.0", "device": "cpu",
                        "method": method, "seed": 0}, "benchmarks": sum(entries, [])}
rng = random.Random(7)
base = doc([entry("slow", 1.0, rng), entry("fast", 2.0, rng), entry("steady", 3.0, rng),
            entry("breaks", 1.0, rng), entry("gone", 1.0, rng)], "wallclock")
new = doc([entry("slow", 1.1, rng), entry("fast", 1.8, rng), entry("steady", 3.0, rng),
           entry("breaks", 1.0, rng, fail=True), entry("fresh", 1.0, rng)], "cpu_time")
json.dump(base, open(f"{tmp}/base.json", "w"))
json.dump(new, open(f"{tmp}/new.json", "w"))
# bad files
open(f"{tmp}/notjson.json", "w").write('{\n  "benchmarks": [\n    {"name": oops}\n  ]\n}\n')
text = json.dumps(base, indent=1)
open(f"{tmp}/truncated.json", "w").write(text[: len(text) // 2])
open(f"{tmp}/nobench.json", "w").write('{"context": {}}')
nul = json.loads(json.dumps(base))
nul["benchmarks"][1]["real_time"] = None
json.dump(nul, open(f"{tmp}/null.json", "w"))
open(f"{tmp}/nan.json", "w").write('{"benchmarks": [{"name": "a", "real_time": NaN}]}')
open(f"{tmp}/empty.json", "w").write("")
PY
B="$TMP/base.json" N="$TMP/new.json"

# the verdicts, the context's mismatch, the lists, the counts
expect 0 "slower" "$TKBENCH" compare "$B" "$N"
grep -qE '^slow .* slower$' "$CAP/out" && pass || fail "slow is not slower: $(cat "$CAP/out")"
grep -qE '^fast .* faster$' "$CAP/out" && pass || fail "fast is not faster: $(cat "$CAP/out")"
grep -qE '^steady .* same$' "$CAP/out" && pass || fail "steady is not same: $(cat "$CAP/out")"
grep -q 'the contexts differ in method: BASE "wallclock", NEW "cpu_time"' "$CAP/out" && pass || fail "no method warning"
grep -q 'not compared breaks: BASE ok; NEW NaN in output 0' "$CAP/out" && pass || fail "breaks not listed"
grep -q 'only in BASE (removed) (1): gone' "$CAP/out" && pass || fail "gone not listed"
grep -q 'only in NEW (added) (1): fresh' "$CAP/out" && pass || fail "fresh not listed"
grep -q '3 compared: 1 slower, 1 faster, 1 same, 0 unsure; 1 not compared' "$CAP/out" && pass || fail "counts"
grep -q $'\033' "$CAP/out" && fail "colour on a file" || pass

# the gate: slower (by the band, or by more than a threshold), failed
expect 1 "--fail-on: 1 entry is slower by more than 2%" "$TKBENCH" compare "$B" "$N" --fail-on slower
grep -q "slow is slower: +10" "$CAP/err" && pass || fail "the gate names no entry: $(cat "$CAP/err")"
expect 0 "" "$TKBENCH" compare "$B" "$N" --fail-on slower:20% --quiet
[ ! -s "$CAP/out" ] && pass || fail "--quiet printed: $(cat "$CAP/out")"
expect 1 "--fail-on: 1 entry is slower by more than 5%" "$TKBENCH" compare "$B" "$N" --fail-on slower:0.05
expect 1 "breaks ran in BASE but failed in NEW" "$TKBENCH" compare "$B" "$N" --fail-on failed --quiet
expect 0 "" "$TKBENCH" compare "$B" "$N" --fail-on failed --filter -breaks --quiet
expect 0 "" "$TKBENCH" compare "$N" "$B" --fail-on slower:15% --quiet # fast reversed is +11%
expect 1 "fast is slower" "$TKBENCH" compare "$N" "$B" --fail-on slower --quiet

# --filter: only the entries it keeps; a filter that keeps none is a usage error
expect 0 "1 compared" "$TKBENCH" compare "$B" "$N" --filter '^st'
expect 2 "no entry that --filter keeps is in both files" "$TKBENCH" compare "$B" "$N" --filter '^zzz'
expect 2 "not a valid POSIX extended regular expression" "$TKBENCH" compare "$B" "$N" --filter '('

# JSON: the contract's keys on every entry, and the geometric mean; written whole
expect 0 "wrote $TMP/cmp.json (json)" "$TKBENCH" compare "$B" "$N" --out "$TMP/cmp.json"
json_check "$TMP/cmp.json" "all(set(['name','base_median_ms','new_median_ms','ratio','ratio_ci_low','ratio_ci_high','p_value','p_adjusted','verdict']) <= set(b) for b in d['benchmarks']) and len(d['benchmarks']) == 3"
json_check "$TMP/cmp.json" "[b['verdict'] for b in d['benchmarks']] == ['slower', 'faster', 'same'] and all(b['ratio_ci_low'] <= b['ratio'] <= b['ratio_ci_high'] and b['p_adjusted'] >= b['p_value'] for b in d['benchmarks'])"
json_check "$TMP/cmp.json" "abs(d['geomean']['ratio'] - (1.1 * 0.9) ** (1 / 3)) < 0.01 and d['geomean']['entries'] == 3 and d['counts']['slower'] == 1"
json_check "$TMP/cmp.json" "d['added'] == ['fresh'] and d['removed'] == ['gone'] and d['not_compared'][0]['new_message'] == 'NaN in output 0'"
json_check "$TMP/cmp.json" "d['settings']['correction'] == 'holm' and d['settings']['noise'] == 0.02"
"$TKBENCH" compare "$B" "$N" --format json --correction bh --noise 1% > "$TMP/stdout.json" 2>/dev/null && pass || fail "json on stdout"
json_check "$TMP/stdout.json" "d['settings']['correction'] == 'bh' and d['settings']['noise'] == 0.01"
# the same files and seed: the same numbers
"$TKBENCH" compare "$B" "$N" --format json > "$TMP/again.json" 2>/dev/null
"$TKBENCH" compare "$B" "$N" --format json --seed 0 > "$TMP/again2.json" 2>/dev/null
cmp -s "$TMP/again.json" "$TMP/again2.json" && pass || fail "not reproducible"

# Markdown, on stdout or by the file's ending
expect 0 "| \`slow\` |" "$TKBENCH" compare "$B" "$N" --format markdown
grep -q '\*\*slower\*\*' "$CAP/out" && pass || fail "markdown verdict"
expect 0 "wrote $TMP/cmp.md (markdown)" "$TKBENCH" compare "$B" "$N" --out "$TMP/cmp.md"
head -1 "$TMP/cmp.md" | grep -q '^\*\*tkbench compare\*\*' && pass || fail "cmp.md"

# Google Benchmark files (Debian's libbenchmark 1.7): itself, and against tkbench's
expect 0 "not compared BM_fail: BASE no device; NEW no device" "$TKBENCH" compare \
  "$FIXTURES/gbench_repetitions.json" "$FIXTURES/gbench_repetitions.json"
grep -q "judged on the ratio's .* interval .* the U test cannot reach p < 0.05 there" "$CAP/out" && pass ||
  fail "no word on the interval rule for 3 repetitions: $(cat "$CAP/out")"
expect 0 "only aggregate rows" "$TKBENCH" compare "$FIXTURES/gbench_repetitions.json" \
  "$FIXTURES/gbench_aggregates_only.json"
expect 2 "no entry is in both files" "$TKBENCH" compare "$B" "$FIXTURES/gbench_repetitions.json"

# bad files and command lines: exit 2, the file and the problem named, nothing written
expect 2 "cannot read \"$TMP/missing.json\": No such file or directory" "$TKBENCH" compare "$TMP/missing.json" "$N" --out "$TMP/o.json"
expect 2 "\"$TMP/notjson.json\" is not JSON: unexpected 'o' at line 3, column 14" "$TKBENCH" compare "$B" "$TMP/notjson.json" --out "$TMP/o.json"
expect 2 "\"$TMP/truncated.json\" ends early" "$TKBENCH" compare "$TMP/truncated.json" "$N" --out "$TMP/o.json"
grep -q "truncated" "$CAP/err" && pass || fail "truncated not said"
expect 2 "\"$TMP/nobench.json\" has no \"benchmarks\" array" "$TKBENCH" compare "$TMP/nobench.json" "$N" --out "$TMP/o.json"
expect 2 "benchmarks[1] (\"fast\"): real_time is null" "$TKBENCH" compare "$TMP/null.json" "$N" --out "$TMP/o.json"
expect 2 "benchmarks[0] (\"a\"): real_time is NaN; a comparison needs a finite time" "$TKBENCH" compare "$TMP/nan.json" "$N" --out "$TMP/o.json"
expect 2 "\"$TMP/empty.json\" is empty" "$TKBENCH" compare "$TMP/empty.json" "$N" --out "$TMP/o.json"
expect 2 "needs two results files" "$TKBENCH" compare "$B"
expect 2 "is a third" "$TKBENCH" compare "$B" "$N" "$N"
expect 2 "--noise '-1%' is not a fraction" "$TKBENCH" compare "$B" "$N" --noise -1%
expect 2 "--correction 'bonferroni' is not a correction" "$TKBENCH" compare "$B" "$N" --correction bonferroni
expect 2 "--resamples 10 is too few" "$TKBENCH" compare "$B" "$N" --resamples 10
expect 2 "--fail-on 'slower:lots' is not a condition" "$TKBENCH" compare "$B" "$N" --fail-on slower:lots
expect 2 "format \"html\" is not a format of compare" "$TKBENCH" compare "$B" "$N" --format html
expect 2 "its directory does not exist" "$TKBENCH" compare "$B" "$N" --out "$TMP/no/dir/o.json"
[ ! -e "$TMP/o.json" ] && pass || fail "o.json written after a usage error"
ls -A "$TMP" | grep -q '\.tmp\.' && fail "temporary files left: $(ls -A "$TMP")" || pass
# "--" ends the flags: a file whose name starts with '-'
cp "$B" "$TMP/-base.json"
(cd "$TMP" && "$TKBENCH" compare --quiet -- -base.json new.json) && pass || fail "-- did not end the flags"
finish
