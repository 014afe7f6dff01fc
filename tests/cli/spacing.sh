# spacing.sh - `run --interval-busy FRACTION`: a pause of that part of each experiment's
# time, stated in the header, recorded in the context and each entry's metadata; none by
# default on the cpu; bad values refused with exit 2 and no output file.
. "$(dirname "$0")/lib.bash"

ONE='^cpu_96x96x64_forward_cpu$'
expect 0 "interval 25% of the experiment before" "$TKBENCH" run --filter "$ONE" --iterations 3 --interval-busy 25% --out "$TMP/q.json"
json_check "$TMP/q.json" "d['context']['interval_busy'] == 0.25 and all(b['tkbench']['metadata']['interval_busy'] == '0.25' for b in d['benchmarks'] if 'tkbench' in b)"
expect 0 "interval 10 ms   + 50% of the experiment before" "$TKBENCH" run --filter "$ONE" --iterations 3 --interval-ms 10 --interval-busy 0.5
# the cpu's default: none
expect 0 "" "$TKBENCH" run --filter "$ONE" --iterations 3 --out "$TMP/none.json"
grep -q "of the experiment before" "$CAP/out" && fail "the cpu got a pause by default" || pass
json_check "$TMP/none.json" "d['context']['interval_busy'] == 0 and all('interval_busy' not in b['tkbench']['metadata'] for b in d['benchmarks'] if 'tkbench' in b)"
expect 2 "--interval-busy '200' is not a fraction of the previous experiment's time; expected 0 to 100" "$TKBENCH" run --filter "$ONE" --interval-busy 200 --out "$TMP/bad.json"
expect 2 "--interval-busy 'often' is not a fraction" "$TKBENCH" run --filter "$ONE" --interval-busy often --out "$TMP/bad.json"
expect 2 "--interval-busy '-1' is not a fraction" "$TKBENCH" run --filter "$ONE" --interval-busy -1 --out "$TMP/bad.json"
[ ! -e "$TMP/bad.json" ] && pass || fail "an output file was written after a usage error"
finish
