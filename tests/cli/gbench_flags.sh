# gbench_flags.sh - Google Benchmark's flags as its users and tools pass them, on a
# TKB_MAIN() program (examples/custom_main.c: two saxpy entries with counters), each
# checked for what it maps to in tkbench's JSON and table.
. "$(dirname "$0")/lib.bash"
P=$CUSTOM_MAIN
ONE=--benchmark_filter=64k

# repetitions, min_time as a count, aggregates only in the file; the BenchmarkData rides
# on the median's row
expect 0 "" "$P" $ONE --benchmark_repetitions=3 --benchmark_min_time=4x \
  --benchmark_report_aggregates_only=true --benchmark_out="$TMP/agg.json"
json_check "$TMP/agg.json" "[b['aggregate_name'] for b in d['benchmarks']] == ['mean', 'median', 'stddev', 'cv'] and 'tkbench' in d['benchmarks'][1] and d['benchmarks'][1]['tkbench']['experiments'] == 3 and d['benchmarks'][1]['tkbench']['statistics']['experiment_sizes'] == [4, 4, 4]"
json_check "$TMP/agg.json" "d['context']['stopping_rule'] == 'fixed' and d['context']['experiments'] == 3"
# display: stdout's JSON holds the aggregates, the file every row
expect 0 "" "$P" $ONE --benchmark_repetitions=2 --benchmark_min_time=3x --benchmark_format=json \
  --benchmark_display_aggregates_only --benchmark_out="$TMP/all.json"
cp "$CAP/out" "$TMP/stdout.json"
json_check "$TMP/stdout.json" "[b['run_type'] for b in d['benchmarks']] == ['aggregate'] * 4"
json_check "$TMP/all.json" "[b['run_type'] for b in d['benchmarks']] == ['iteration'] * 2 + ['aggregate'] * 4"
# one experiment has no aggregates: its row stays
expect 0 "" "$P" $ONE --benchmark_repetitions=1 --benchmark_min_time=3x \
  --benchmark_report_aggregates_only --benchmark_out="$TMP/single.json"
json_check "$TMP/single.json" "[b['run_type'] for b in d['benchmarks']] == ['iteration']"

# time unit, context, interleaving, warm-up, min_time in seconds, counters
expect 0 "" "$P" --benchmark_time_unit=us --benchmark_context=commit=abc123,host=ci \
  --benchmark_enable_random_interleaving=true --benchmark_min_warmup_time=0.02 \
  --benchmark_min_time=0.02s --benchmark_repetitions=2 --benchmark_out="$TMP/gb.json"
json_check "$TMP/gb.json" "all(b['time_unit'] == 'us' for b in d['benchmarks'])"
json_check "$TMP/gb.json" "all(abs(b['real_time'] - b['tkbench']['statistics']['experiment_median_ms'][b['repetition_index']] * 1e3) <= 1e-9 * b['real_time'] for b in d['benchmarks'] if b['run_type'] == 'iteration')"
json_check "$TMP/gb.json" "d['context']['commit'] == 'abc123' and d['context']['host'] == 'ci' and d['context']['interleave'] is True"
json_check "$TMP/gb.json" "'min_time=0.04' in d['context']['stopping_rule'] and 'max_time=0.08' in d['context']['stopping_rule'] and d['context']['stopping_rule'].startswith('ci:')"
json_check "$TMP/gb.json" "isinstance(d['context']['aslr_enabled'], bool)"
# the entry's counters: calls per second (at that experiment's median) and bytes per vector
json_check "$TMP/gb.json" "all(abs(b['calls'] - 1e6 / b['real_time']) <= 1e-6 * b['calls'] and b['vector_bytes'] == (16384 if '_4k_' in b['name'] else 262144) for b in d['benchmarks'] if b['run_type'] == 'iteration')"
json_check "$TMP/gb.json" "all('calls' in b and 'vector_bytes' in b for b in d['benchmarks'])"
# cpu_time is the CPU time, its own number: never negative (the CPU clock's floor is
# subtracted, so a short call on a busy machine may get 0)
json_check "$TMP/gb.json" "all(b['cpu_time'] >= 0 for b in d['benchmarks'] if b['run_type'] == 'iteration') and any(b['cpu_time'] != b['real_time'] for b in d['benchmarks'])"

# the table: counters after each row, or as columns; the context in the header; colour
expect 0 "calls=" "$P" run --iterations 2 --experiments 1
expect 0 "vector_bytes=256Ki" "$P" run --iterations 2 --experiments 1
expect 0 "" "$P" run --iterations 2 --experiments 1 --benchmark_counters_tabular=true
grep -qE "^Benchmark .* +calls +vector_bytes$" "$CAP/out" && pass || fail "no counter columns: $(cat "$CAP/out")"
expect 0 "context commit=abc" "$P" run --iterations 2 --experiments 1 --context commit=abc
expect 0 "" "$P" run --iterations 2 --experiments 1 --benchmark_color=true
grep -q $'\033\[' "$CAP/out" && pass || fail "--benchmark_color=true gave no colour"
expect 0 "" "$P" run --iterations 2 --experiments 1 --benchmark_color=false
grep -q $'\033\[' "$CAP/out" && fail "--benchmark_color=false gave colour" || pass
expect 0 " us " "$P" run --iterations 2 --experiments 1 --time-unit us --filter 4k

# dry run: one call, one experiment; --v is accepted
expect 0 "" "$P" --benchmark_dry_run --v=2 --benchmark_out="$TMP/dry.json"
json_check "$TMP/dry.json" "[b['iterations'] for b in d['benchmarks']] == [1, 1] and d['context']['stopping_rule'] == 'fixed'"

# perf counters: counted where the kernel lets this process count its own events, and
# otherwise a usage error saying why
"$P" $ONE --benchmark_perf_counters=PAGE-FAULTS,CONTEXT-SWITCHES --benchmark_min_time=3x \
  --benchmark_out="$TMP/perf.json" >"$CAP/out" 2>"$CAP/err"
rc=$?
if [ $rc -eq 0 ]; then
  json_check "$TMP/perf.json" "all(b['PAGE-FAULTS'] >= 0 and b['CONTEXT-SWITCHES'] >= 0 for b in d['benchmarks'] if b['run_type'] == 'iteration') and all('PAGE-FAULTS' in b for b in d['benchmarks'])"
elif [ $rc -eq 2 ] && grep -q "cannot be read" "$CAP/err"; then
  echo "perf events are not readable here: $(cat "$CAP/err")"
  pass
else
  fail "--benchmark_perf_counters: exit $rc: $(cat "$CAP/err")"
fi
finish
