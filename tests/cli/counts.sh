# counts.sh - `run --method instructions` as a process: what it refuses (exit 2, naming
# the flag: another device, Valgrind missing, --interleave, --time-unit, --perf-counters,
# --no-isolate, a source that cannot count here, --count-source without the method), and
# where Valgrind runs: each entry's worker re-executed under Callgrind (a plugin's entries
# and a TKB_MAIN program's), an empty function counting 0, every call alike, the counts in
# JSON (a unit of their own), CSV, Markdown, HTML and the results store, a crash named, compare and ab
# calling the same build the same and a 1% busier build slower by exactly its ratio, and
# counts against times refused. Entries are tiny: Valgrind is slow.
. "$(dirname "$0")/lib.bash"
DIR=$(dirname "$PLUGIN")
S100="$DIR/tkb_spin_100.so" S101="$DIR/tkb_spin_101.so" S105="$DIR/tkb_spin_105.so" CRASH="$DIR/tkb_spin_crash.so"
COUNT=(--method instructions)

# ---- refused before anything runs ----
expect 2 "--interleave cannot be honoured with --method instructions" \
  "$TKBENCH" run --load "$S100" --filter '^spin_10k' "${COUNT[@]}" --interleave
expect 2 "--time-unit us cannot be honoured" "$TKBENCH" run --load "$S100" --filter '^spin_10k' "${COUNT[@]}" --time-unit us
expect 2 "--perf-counters" "$TKBENCH" run --load "$S100" --filter '^spin_10k' "${COUNT[@]}" --perf-counters CYCLES
expect 2 "--count-source callgrind applies only to --method instructions" \
  "$TKBENCH" run --load "$S100" --filter '^spin_10k' --count-source callgrind
expect 2 "--count-source 'x' is not a source of counts" "$TKBENCH" run --load "$S100" "${COUNT[@]}" --count-source x
# Valgrind missing: the message says how to install it
expect 2 "sudo apt-get install valgrind" env PATH=/nonexistent "$TKBENCH" run --load "$S100" \
  --filter '^spin_10k' "${COUNT[@]}" --count-source callgrind
grep -qF "tkbench run: --method instructions counts under Valgrind's Callgrind here" "$CAP/err" && pass || fail "$(cat "$CAP/err")"
expect 2 "TKB_VALGRIND names /nonexistent/valgrind" env TKB_VALGRIND=/nonexistent/valgrind "$TKBENCH" run \
  --load "$S100" --filter '^spin_10k' "${COUNT[@]}" --count-source callgrind
# another device: the method is the cpu's
if "$TKBENCH" info 2>/dev/null | grep -q '^opencl:0'; then
  expect 2 "method \"instructions\" is not available on device opencl:0" \
    "$TKBENCH" run --device opencl:0 --filter '^x$' "${COUNT[@]}"
fi
if "$TKBENCH" run --load "$S100" --filter '^spin_10k' "${COUNT[@]}" --count-source perf_event --quiet >/dev/null 2>"$CAP/err"; then
  # a PMU answers: a cold cache changes no instruction it counts
  expect 2 "--cold-cache cannot be honoured with --method instructions counted by perf_event" \
    "$TKBENCH" run --load "$S100" --filter '^spin_10k' "${COUNT[@]}" --count-source perf_event --cold-cache
else
  grep -qF -- "--count-source perf_event: perf counter INSTRUCTIONS cannot be read" "$CAP/err" && pass ||
    fail "perf_event without a PMU: $(cat "$CAP/err")"
fi

if ! command -v valgrind >/dev/null; then
  echo "note: valgrind is not installed: the counted runs were not tested"
  finish
  exit
fi
if ldd "$TKBENCH" 2>/dev/null | grep -q libasan; then
  echo "note: this tkbench is built with AddressSanitizer, which Valgrind cannot run: the counted runs were not tested"
  finish
  exit
fi
expect 2 "--no-isolate cannot be honoured with --method instructions" \
  "$TKBENCH" run --load "$S100" --filter '^spin_10k' "${COUNT[@]}" --count-source callgrind --no-isolate

# ---- counted under Callgrind ----
CG=("${COUNT[@]}" --count-source callgrind)
expect 0 "values  instructions per call, counted by callgrind" "$TKBENCH" run --load "$S100" \
  --filter '^spin_(10k|20k|30k|empty)_' "${CG[@]}" --out "$TMP/a.json"
grep -qE '^spin_empty_forward_c +0 +- ' "$CAP/out" && pass || fail "an empty function does not count 0: $(cat "$CAP/out")"
json_check "$TMP/a.json" "d['context']['method'] == 'instructions' and d['context']['count_source'] == 'callgrind' and all(b['time_unit'] == 'instructions' and b['tkbench']['value_unit'] == 'instructions' for b in d['benchmarks'])"
json_check "$TMP/a.json" "all(len(set(b['tkbench']['evaluation_times_ms'])) == 1 and len(b['tkbench']['evaluation_times_ms']) == 3 and b['tkbench']['metadata']['threads'] == '1' for b in d['benchmarks'])"
# the loop's count grows exactly with its length; the empty call's is 0
json_check "$TMP/a.json" "(lambda v: v['spin_empty_forward_c'] == 0 and v['spin_30k_forward_c'] - v['spin_20k_forward_c'] == v['spin_20k_forward_c'] - v['spin_10k_forward_c'] > 0)({b['name']: b['real_time'] for b in d['benchmarks']})"
json_check "$TMP/a.json" "all(b['instructions'] == b['real_time'] and 'l1_misses' in b and 'll_misses' in b and 'estimated_cycles' in b and b['tkbench']['metadata']['count_source'] == 'callgrind' for b in d['benchmarks'])"
# the store keeps counts as counted, in their own unit; a series holds one unit (its latest)
expect 0 "" "$TKBENCH" history import --history "$TMP/counts.db" "$TMP/a.json" --commit c0ffee0
expect 0 "" "$TKBENCH" history export --history "$TMP/counts.db" --filter '^spin_10k_' --out "$TMP/counts_export.json"
json_check "$TMP/counts_export.json" "[(p['unit'], p['median']) for p in d['series'][0]['points']] == [('instructions', [b['real_time'] for b in json.load(open('$TMP/a.json'))['benchmarks'] if b['name'] == 'spin_10k_forward_c'][0])]"
# the same counts in CSV and Markdown
expect 0 "" "$TKBENCH" run --load "$S100" --filter '^spin_10k_' "${CG[@]}" --quiet --out "$TMP/a.csv"
head -1 "$TMP/a.csv" | grep -q '^name,op,spec,impl,mode,median_instructions,' && pass || fail "csv header: $(head -1 "$TMP/a.csv")"
expect 0 "Values are instructions per call, counted by callgrind" "$TKBENCH" run --load "$S100" \
  --filter '^spin_10k_' "${CG[@]}" --format markdown
# a TKB_MAIN program counts its own entries: the program itself is re-executed
expect 0 "saxpy_4k_forward_c" "$CUSTOM_MAIN" run --filter '^saxpy_4k_' "${CG[@]}" --out "$TMP/main.json"
json_check "$TMP/main.json" "d['benchmarks'][0]['time_unit'] == 'instructions' and d['benchmarks'][0]['real_time'] > 4096"
# --init reaches the counted worker: spin_data's work doubles where its x is >= 0.5, so
# its count under x=ones is its count under x=zeros plus another 10k steps' worth
for d in zeros ones; do
  expect 0 "" "$TKBENCH" run --load "$S100" --filter '^spin_data_' "${CG[@]}" --init "x=$d" --quiet --out "$TMP/data_$d.json"
done
json_check "$TMP/data_ones.json" "(lambda z, o: o > 1.5 * z > 0)(json.load(open('$TMP/data_zeros.json'))['benchmarks'][0]['real_time'], d['benchmarks'][0]['real_time'])"
# a crash under Callgrind fails its entry alone, named
expect 1 "SIGSEGV" "$TKBENCH" run --load "$CRASH" --filter '^spin_(crash|10k)_' "${CG[@]}"
grep -qE '^spin_10k_forward_c +[0-9]+ ' "$CAP/out" && pass || fail "the entry after the crash: $(cat "$CAP/out")"

# ---- compare and ab ----
expect 0 "" "$TKBENCH" run --load "$S100" --filter '^spin_(10k|20k|30k|empty)_' "${CG[@]}" --quiet --out "$TMP/b.json"
expect 0 "4 compared: 0 slower, 0 faster, 4 same, 0 unsure" "$TKBENCH" compare "$TMP/a.json" "$TMP/b.json"
grep -qF "noise band +-0.5% (counts); 4 entries counted alike on every call, compared exactly (the ratio is its own interval; p 0 for a change, 1 for none)" "$CAP/out" && pass ||
  fail "the band: $(cat "$CAP/out")"
expect 0 "" "$TKBENCH" run --load "$S101" --filter '^spin_(10k|20k|30k)_' "${CG[@]}" --quiet --out "$TMP/c.json"
expect 1 "spin_10k_forward_c is slower" "$TKBENCH" compare "$TMP/a.json" "$TMP/c.json" --fail-on slower --format json --out "$TMP/cmp.json"
json_check "$TMP/cmp.json" "d['settings']['value_unit'] == 'instructions' and d['settings']['noise'] == 0.005 and all(b['verdict'] == 'slower' and b['exact'] and abs(b['ratio'] - 1.01) <= 0.001 and b['ratio_ci_low'] == b['ratio'] for b in d['benchmarks'])"
# counts against times: refused, naming both
expect 0 "" "$TKBENCH" run --load "$S100" --filter '^spin_10k_' --stop fixed --iterations 3 --quiet --out "$TMP/t.json"
expect 2 "an instruction count and a time cannot be compared" "$TKBENCH" compare "$TMP/a.json" "$TMP/t.json"
grep -qF "NEW $TMP/t.json holds times (1 entry)" "$CAP/err" && pass || fail "$(cat "$CAP/err")"
expect 2 "cannot be compared" "$TKBENCH" report "$TMP/t.json" --base "$TMP/a.json" -o "$TMP/x.html"
# the HTML report of counts, and of their comparison
expect 0 "" "$TKBENCH" report "$TMP/c.json" --base "$TMP/a.json" -o "$TMP/r.html"
grep -q "instructions per call" "$TMP/r.html" && grep -q "compared exactly" "$TMP/r.html" && pass || fail "r.html"
# both runs' counts in each entry's plots, and a page of counts alone labels its axes and cells as counts
grep -q '<g class="base">' "$TMP/r.html" && grep -q '<g class="legend">' "$TMP/r.html" && pass || fail "r.html: no base beside the new counts"
expect 0 "" "$TKBENCH" report "$TMP/c.json" -o "$TMP/c.html"
grep -q 'aria-label="median instruction counts of' "$TMP/c.html" && grep -q 'median instructions per call' "$TMP/c.html" &&
  grep -q ' instr</td><td data-v="">-</td>' "$TMP/c.html" && ! grep -q 'median time per call' "$TMP/c.html" && pass ||
  fail "c.html: the overview or the summary does not say counts"
# ab counts both sides under Callgrind, one experiment each, and calls 5% more work slower
expect 0 "1 compared: 1 slower" "$TKBENCH" ab --a "$S100" --b "$S105" --filter '^spin_10k_' "${CG[@]}" \
  --out-a "$TMP/ab_a.json" --format json --out "$TMP/ab.json"
json_check "$TMP/ab.json" "d['benchmarks'][0]['exact'] and abs(d['benchmarks'][0]['ratio'] - 1.05) < 0.002"
json_check "$TMP/ab_a.json" "d['context']['ab']['side'] == 'A' and len(d['benchmarks']) == 1 and d['benchmarks'][0]['time_unit'] == 'instructions'"
finish
