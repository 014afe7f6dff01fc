# sigint.sh - Ctrl-C during a run of the real executable: exit 130, and the JSON file
# is valid and holds the entries that finished (not the ones after).
. "$(dirname "$0")/lib.bash"

# Four plugin entries of ~1 s each (50 experiments with 20 ms pauses).
"$TKBENCH" run --load "$PLUGIN" --filter '^relu_' --iterations 2 --experiments 50 --interval-ms 20 \
  --out "$TMP/partial.json" >"$CAP/out" 2>"$CAP/err" &
pid=$!
# Wait for the table's titles (printed just before the first entry starts), then 1 s more.
for _ in $(seq 300); do grep -q "^Benchmark" "$CAP/out" 2>/dev/null && break; sleep 0.1; done
sleep 1
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] && pass || fail "exit $rc after SIGINT, want 130: $(cat "$CAP/err")"
grep -q "interrupted: " "$CAP/out" && pass || fail "no 'interrupted' line: $(cat "$CAP/out")"
json_check "$TMP/partial.json" "d['context']['interrupted'] is True"
json_check "$TMP/partial.json" "len({b['run_name'] for b in d['benchmarks']}) < 4"
json_check "$TMP/partial.json" "all(len([b for b in d['benchmarks'] if b['run_name'] == n]) == 54 for n in {b['run_name'] for b in d['benchmarks']})"
[ "$(ls -A "$TMP" | grep -c '^\.partial')" -eq 0 ] && pass || fail "temporary file left behind"
finish
