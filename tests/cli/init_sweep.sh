# init_sweep.sh - `run --init-sweep DIST,...`: each entry under each distribution and the
# baseline default, reported as <entry>/init=<dist> with metadata init and
# init_vs_default, the table after the report (stdout under the console table, stderr
# otherwise), subnormal inputs called slower than default on the cpu layer norm, and
# every refusal with exit 2 and no output file.
. "$(dirname "$0")/lib.bash"

ONE='^cpu_96x96x64_forward_cpu$'
STOP='ci:max_time=1'
expect 0 "init sweep: each entry under each distribution" "$TKBENCH" run --filter "$ONE" --stop "$STOP" \
  --init-sweep subnormal,zeros --out "$TMP/sweep.json"
if timed_build; then
  grep -q '^  subnormal .*slower$' "$CAP/out" && pass || fail "subnormal is not called slower: $(cat "$CAP/out")"
else
  echo "SKIPPED (part): subnormal called slower: not a Release build (the sanitizers' cost hides it)"
fi
grep -q '^cpu_96x96x64_forward_cpu/init=zeros ' "$CAP/out" && pass || fail "no row of the zeros variant"
json_check "$TMP/sweep.json" "d['context']['init_sweep'] == 'default, subnormal, zeros' and d['context']['budget_s'] == 0"
json_check "$TMP/sweep.json" "sorted({b['run_name'] for b in d['benchmarks']}) == ['cpu_96x96x64_forward_cpu/init=' + x for x in ('default', 'subnormal', 'zeros')]"
json_check "$TMP/sweep.json" "[b['tkbench']['metadata']['init'] for b in d['benchmarks'] if b['run_type'] == 'iteration' and b['repetition_index'] == 0] == ['*=default', '*=subnormal', '*=zeros']"
timed_build && json_check "$TMP/sweep.json" "any(b['tkbench']['metadata'].get('init_vs_default', '').startswith('slower: ') for b in d['benchmarks'] if 'tkbench' in b and b['run_name'].endswith('=subnormal'))"
json_check "$TMP/sweep.json" "all(b['tkbench']['metadata']['init_vs_default'].split(':')[0] in ('slower', 'faster', 'same', 'unsure') for b in d['benchmarks'] if 'tkbench' in b and b['run_name'].endswith('=subnormal'))"
json_check "$TMP/sweep.json" "all('init_vs_default' not in b['tkbench']['metadata'] for b in d['benchmarks'] if 'tkbench' in b and b['run_name'].endswith('=default'))"
# commas inside a distribution's parentheses; default given too stays the baseline; the
# table goes to stderr when stdout is JSON, which stays valid
"$TKBENCH" run --filter "$ONE" --stop "$STOP" --init-sweep 'normal(0,0.1),default' \
  --init-sweep 'uniform(-1,1)' --format json >"$TMP/stdout.json" 2>"$CAP/err" || fail "sweep with json on stdout: $(cat "$CAP/err")"
json_check "$TMP/stdout.json" "d['context']['init_sweep'] == 'default, normal(0,0.1), uniform(-1,1)'"
grep -q "^  normal(0,0.1) " "$CAP/err" && pass || fail "the table is not on stderr: $(cat "$CAP/err")"
# --quiet: no table
expect 0 "" "$TKBENCH" run --filter "$ONE" --stop "$STOP" --init-sweep zeros --quiet
grep -q "init sweep" "$CAP/out" "$CAP/err" && fail "--quiet printed the table" || pass
# refusals: exit 2, nothing written
expect 2 "cannot go with --interleave" "$TKBENCH" run --filter "$ONE" --init-sweep zeros --interleave --out "$TMP/bad.json"
expect 2 "cannot go with --budget" "$TKBENCH" run --filter "$ONE" --init-sweep zeros --budget 60 --out "$TMP/bad.json"
expect 2 "cannot go with --resume" "$TKBENCH" run --filter "$ONE" --init-sweep zeros --resume "$TMP/bad.json"
expect 2 "which --init *=ones sets too" "$TKBENCH" run --filter "$ONE" --init-sweep zeros --init '*=ones' --out "$TMP/bad.json"
expect 2 '--init-sweep: "gauss(0,1)" is no distribution' "$TKBENCH" run --filter "$ONE" --init-sweep 'zeros,gauss(0,1)' --out "$TMP/bad.json"
expect 2 "--init-sweep: an empty distribution" "$TKBENCH" run --filter "$ONE" --init-sweep 'zeros,,ones' --out "$TMP/bad.json"
expect 2 "--init-sweep: zeros is given twice" "$TKBENCH" run --filter "$ONE" --init-sweep zeros,zeros --out "$TMP/bad.json"
expect 2 "give at least one distribution besides default" "$TKBENCH" run --filter "$ONE" --init-sweep default --out "$TMP/bad.json"
[ ! -e "$TMP/bad.json" ] && pass || fail "an output file was written after a usage error"
finish
