# peaks.sh - the device's peaks, cached per machine: a run with no cache measures them
# once (saying so) and writes $XDG_CACHE_HOME/tkbench/peaks-<host>-cpu.json with the date;
# the next run reads them; a cache of another device is measured over; run --peaks and
# info --peaks measure again; every format gives each entry's BW%, FLOP% and bound; a
# cache that cannot be written is a warning, not a failure; TKB_CACHE_DIR moves the cache.
. "$(dirname "$0")/lib.bash"

F='^cpu_96x96x64_forward_(cpu|reference)$'
unset TKB_CACHE_DIR # the tree's: this test sees where the cache goes by default
export XDG_CACHE_HOME="$TMP/cache"
CACHE="$XDG_CACHE_HOME/tkbench/peaks-$(hostname | tr -c 'A-Za-z0-9._\n-' '_')-cpu.json"
expect 0 "measuring the peaks of cpu once for this machine" "$TKBENCH" run --filter "$F" --iterations 3 --out "$TMP/first.json"
[ -s "$CACHE" ] && pass || fail "no cache at $CACHE: $(ls -R "$XDG_CACHE_HOME" 2>&1)"
json_check "$CACHE" "d['copy_gbs'] > 0 and d['sgemm_gflops'] > 0 and d['dgemm_gflops'] > 0 and d['measured'] and d['device'] == 'cpu'"
json_check "$TMP/first.json" "d['context']['peaks']['copy_gbs'] > 0 and d['context']['peaks']['measured']"
# each row's share of them, and the bound; the float64 reference against dgemm
json_check "$TMP/first.json" "all(b['tkbench']['peak_share']['bound'] in ('memory', 'compute') and b['tkbench']['peak_share']['bandwidth_percent'] > 0 for b in d['benchmarks'] if b['run_type'] == 'iteration')"
json_check "$TMP/first.json" "all(b['tkbench']['peak_share']['compute_dtype'] == ('float64' if b['tkbench']['impl'] == 'reference' else 'float32') for b in d['benchmarks'] if b['run_type'] == 'iteration')"
json_check "$TMP/first.json" "all(b['tkbench']['metadata']['dtype'] == 'bfloat16' for b in d['benchmarks'] if b['run_type'] == 'iteration')"
# the second run reads the cache: no note, the same peaks
expect 0 "peaks   copy" "$TKBENCH" run --filter "$F" --iterations 3 --out "$TMP/second.json"
grep -q "measuring the peaks" "$CAP/err" && fail "the second run measured the peaks again" || pass
grep -q "cached in $CACHE" "$CAP/out" && pass || fail "the header does not name the cache: $(head -5 "$CAP/out")"
python3 - "$TMP/first.json" "$TMP/second.json" <<'PY' && pass || fail "the second run's peaks are not the cached ones"
import json, sys
a, b = (json.load(open(p))['context']['peaks'] for p in sys.argv[1:])
sys.exit(0 if a == b else 1)
PY
# every format carries the columns
expect 0 "BW%   FLOP%  Bound" "$TKBENCH" run --filter "$F" --iterations 3
expect 0 "bandwidth_pct_of_peak,flops_pct_of_peak,bound," "$TKBENCH" run --filter "$F" --iterations 3 --format csv
expect 0 "| BW% | FLOP% | Bound |" "$TKBENCH" run --filter "$F" --iterations 3 --format markdown
expect 0 "" "$TKBENCH" report "$TMP/first.json" --out "$TMP/first.html"
grep -q '>BW%</th>' "$TMP/first.html" && grep -qE '<td class="l">(memory|compute)</td>' "$TMP/first.html" && pass || fail "the HTML summary lacks BW% or the bound"
# a cache of another device under the same name is measured over
python3 - "$CACHE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d['device_description'] = 'another machine'; d['copy_gbs'] = 1e-3
json.dump(d, open(sys.argv[1], 'w'))
PY
expect 0 "measuring the peaks of cpu once" "$TKBENCH" run --filter "$F" --iterations 3
json_check "$CACHE" "d['device_description'] != 'another machine' and d['copy_gbs'] > 1e-3"
# run --peaks and info --peaks measure again (a new date)
before=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['measured'])" "$CACHE")
sleep 1
expect 0 "" "$TKBENCH" run --filter "$F" --iterations 3 --peaks --quiet
json_check "$CACHE" "d['measured'] != '$before'"
expect 0 "cached in $CACHE" "$TKBENCH" info --peaks
# TKB_CACHE_DIR moves tkbench's cache alone
TKB_CACHE_DIR="$TMP/own" expect 0 "measuring the peaks of cpu once" "$TKBENCH" run --filter "$F" --iterations 3
ls "$TMP/own"/peaks-*-cpu.json >/dev/null 2>&1 && pass || fail "TKB_CACHE_DIR: no cache in $TMP/own"
# a cache folder that cannot be made: a warning, and the run goes on
export XDG_CACHE_HOME=/proc/tkbench-no-such-folder
expect 0 "warning: the peaks are not cached" "$TKBENCH" run --filter "$F" --iterations 3
finish
