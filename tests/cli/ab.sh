# ab.sh - `tkbench ab` as a process: the two sides in workers of their own (plugins with
# the same names, TKB_MAIN programs), experiments alternating ABBA (seen through the
# spin plugin's log of calls), a side that crashes failing only its entry, the files each
# side writes and `compare` reads again, usage errors before anything runs, and Ctrl-C.
# No verdict is asserted: times on a shared machine are not a test's business.
. "$(dirname "$0")/lib.bash"
DIR=$(dirname "$PLUGIN")
S100="$DIR/tkb_spin_100.so" S105="$DIR/tkb_spin_105.so" CRASH="$DIR/tkb_spin_crash.so"
FIXED=(--stop fixed --iterations 3 --experiments 4 --warmup once)

# the same plugin on both sides: every selected entry compared, both files written
expect 0 "2 compared" "$TKBENCH" ab --a "$PLUGIN" --b "$PLUGIN" --filter '^relu_256x256' "${FIXED[@]}" \
  --out-a "$TMP/a.json" --out-b "$TMP/b.json" --out "$TMP/ab.json"
grep -q "wrote $TMP/a.json (side A)" "$CAP/out" && pass || fail "no 'wrote' line for side A"
json_check "$TMP/a.json" "d['context']['library'] == 'tkbench' and d['context']['ab']['side'] == 'A' and d['context']['interrupted'] is False"
json_check "$TMP/a.json" "[b['name'] for b in d['benchmarks'] if b['run_type'] == 'iteration'] == ['relu_256x256_forward_c'] * 4 + ['relu_256x256_forward_and_vjp_c'] * 4"
json_check "$TMP/a.json" "all(len(b['tkbench']['evaluation_times_ms']) == 3 for b in d['benchmarks'] if b['run_type'] == 'iteration') and [b['family_index'] for b in d['benchmarks']][-1] == 1"
json_check "$TMP/b.json" "d['context']['ab']['plugin'].endswith('tkb_example_plugin.so') and d['context']['ab']['side'] == 'B'"
# compare reads the sides' files again to the same numbers
"$TKBENCH" compare "$TMP/a.json" "$TMP/b.json" --format json > "$TMP/again.json" 2>/dev/null && pass || fail "compare a b"
python3 - "$TMP/ab.json" "$TMP/again.json" <<'PY' && pass || fail "ab's comparison differs from compare's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(0 if a["benchmarks"] == b["benchmarks"] and a["geomean"] == b["geomean"] else 1)
PY

# ABBA: the log of calls, collapsed into runs of one side, holds 1, 2, 2, 2, 1
# experiments (4 calls each: the warm-up and 3 timed), the sides alternating
rm -f "$TMP/log"
TKB_SPIN_LOG="$TMP/log" "$TKBENCH" ab --a "$S100" --b "$S105" --filter '^spin_(10k|20k)_' "${FIXED[@]}" \
  > "$CAP/out" 2> "$CAP/err" && pass || fail "ab spin: $(cat "$CAP/err")"
python3 - "$TMP/log" <<'PY' && pass || fail "not ABBA: $(uniq -c "$TMP/log" | tr '\n' ' ')"
import itertools, sys
lines = open(sys.argv[1]).read().split()
runs = [(k, len(list(g))) for k, g in itertools.groupby(lines)]
# two entries, each: 1, 2, 2, 2, 1 experiments; the second entry's first run may merge
# with the first's last (same side), so check per entry: 40 calls each
assert len(lines) == 2 * 2 * 4 * 4, len(lines)
first, second = lines[:32], lines[32:]
for part in (first, second):
    r = [len(list(g)) for k, g in itertools.groupby(part)]
    assert r == [4, 8, 8, 8, 4], r
    assert part[0] != part[4] and sorted(set(part)) == ["100", "105"]
PY
# another seed may change which side goes first, never the pattern
grep -q "spin_20k_forward_c" "$CAP/out" && pass || fail "spin_20k not compared"

# a side that crashes: that entry fails on that side with the signal named, the run goes
# on (the worker is restarted), exit 1; --out-b records the failure (a sanitizer build
# would catch the signal itself and exit: it is told not to)
ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=0" \
expect 1 "NEW side B's worker was killed by signal 11 (Segmentation fault)" "$TKBENCH" ab --a "$S100" \
  --b "$CRASH" --filter '^spin_(crash|10k)_' "${FIXED[@]}" --out-b "$TMP/crash.json"
grep -q "^spin_10k_forward_c " "$CAP/out" && pass || fail "spin_10k not compared after the crash"
json_check "$TMP/crash.json" "[b.get('error_occurred', False) for b in d['benchmarks'] if b['run_type'] == 'iteration'][0] is True and 'signal 11' in d['benchmarks'][0]['error_message']"

# TKB_MAIN programs on both sides, and a plugin against a program
expect 0 "saxpy_4k_forward_c" "$TKBENCH" ab --a-cmd "$CUSTOM_MAIN" --b-cmd "$CUSTOM_MAIN" --filter saxpy_4k "${FIXED[@]}"
expect 0 "" "$CUSTOM_MAIN" ab --a "$S100" --b "$S105" --filter '^spin_10k_' "${FIXED[@]}" --quiet --out "$TMP/q.md"
[ ! -s "$CAP/out" ] && pass || fail "--quiet printed: $(cat "$CAP/out")"
grep -q '^| `spin_10k_forward_c` |' "$TMP/q.md" && pass || fail "q.md: $(cat "$TMP/q.md")"

# usage errors: nothing runs, nothing is written
expect 2 "needs side A" "$TKBENCH" ab --b "$PLUGIN"
expect 2 "--a and --a-cmd both name side A" "$TKBENCH" ab --a "$PLUGIN" --a-cmd "$CUSTOM_MAIN" --b "$PLUGIN"
expect 2 "needs side B" "$TKBENCH" ab --a "$PLUGIN"
expect 2 "its directory does not exist" "$TKBENCH" ab --a "$PLUGIN" --b "$PLUGIN" --out-a "$TMP/no/a.json"
expect 2 "missing.so\": no such file" "$TKBENCH" ab --a "$TMP/missing.so" --b "$PLUGIN" --out-b "$TMP/x.json"
grep -q "side A's worker exited with status 2 before listing its entries" "$CAP/err" && pass || fail "no word on side A"
expect 2 "no entry is on both sides" "$TKBENCH" ab --a "$S100" --b-cmd "$CUSTOM_MAIN" --filter 'saxpy_4k|spin_10k' --out-b "$TMP/x.json"
expect 2 "--seed 'x' is not a number" "$TKBENCH" ab --a "$PLUGIN" --b "$PLUGIN" --seed x
expect 2 "--stop needs a value" "$TKBENCH" ab --a "$PLUGIN" --b "$PLUGIN" --stop
expect 2 "unknown flag '--out-c'" "$TKBENCH" ab --a "$PLUGIN" --b "$PLUGIN" --out-c x
expect 2 "--noise '5' is not a fraction" "$TKBENCH" ab --a "$PLUGIN" --b "$PLUGIN" --noise 5
[ ! -e "$TMP/x.json" ] && pass || fail "x.json written after a usage error"

# Ctrl-C: the entry in progress is dropped, the finished ones compared and written, 130.
# It comes once the first entry is done: its 2 x 4 x 401 calls are in the log.
rm -f "$TMP/log"
TKB_SPIN_LOG="$TMP/log" "$TKBENCH" ab --a "$S100" --b "$S105" --tag spin --filter -crash --stop fixed \
  --iterations 400 --experiments 4 --warmup once --out-a "$TMP/int.json" > "$CAP/out" 2> "$CAP/err" &
pid=$!
for _ in $(seq 600); do
  [ -f "$TMP/log" ] && [ "$(wc -l < "$TMP/log")" -gt 3208 ] && break
  sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] && pass || fail "Ctrl-C: exit $rc, want 130: $(cat "$CAP/err")"
grep -q "interrupted: the entries that finished are compared and written" "$CAP/err" && pass || fail "no word on the interruption"
json_check "$TMP/int.json" "d['context']['interrupted'] is True and 0 < len(set(b['name'] for b in d['benchmarks'])) < 12"
pgrep -f "run --serve --load $S100" >/dev/null && fail "a worker outlived ab" || pass
finish
