# cuda.sh - tkbench on cuda:0 as a user runs it. Without a GPU or driver: `info` lists
# cuda:0 with the reason in one line, and `run --device cuda:0` fails with exit 2 and
# that sentence; then the test reports itself skipped (77). With a GPU: a run with the
# default method (cupti) writes JSON with the method in its metadata; cuda_events reports
# its blocking kernel on, --no-blocking-kernel off, and the flag is a usage error with
# cupti.
. "$(dirname "$0")/lib.bash"

why=$("$TKBENCH" info 2>&1 | grep -E '^  cuda:0 ' | grep 'not available')
if [ -n "$why" ]; then
  expect 2 "device \"cuda:0\" is not available" "$TKBENCH" run --device cuda:0 --out "$TMP/x.json"
  if [ "$(wc -l < "$CAP/err")" -gt 2 ]; then fail "run --device cuda:0: more than one sentence"; fi
  expect 2 "not available" "$TKBENCH" check --device cuda:0
  finish || exit 1
  echo "SKIPPED: $(sed 's/^ *cuda:0 *//' <<<"$why")"
  exit 77
fi
expect 2 "does not exist" "$TKBENCH" run --device cuda:63 --out "$TMP/x.json"
one='^cpu_96x96x64_forward_cuda$'
meta="d['benchmarks'][0]['tkbench']['metadata']"
expect 0 "wrote" "$TKBENCH" run --device cuda:0 --filter "$one" --iterations 3 --out "$TMP/c.json"
json_check "$TMP/c.json" "$meta['method'] == 'cupti' and 'blocking_kernel' not in $meta"
expect 0 "wrote" "$TKBENCH" run --device cuda:0 --filter "$one" --method cuda_events --iterations 3 --out "$TMP/e.json"
json_check "$TMP/e.json" "$meta['blocking_kernel'].startswith('on (')"
expect 0 "wrote" "$TKBENCH" run --device cuda:0 --filter "$one" --method cuda_events --no-blocking-kernel --iterations 3 --out "$TMP/o.json"
json_check "$TMP/o.json" "$meta['blocking_kernel'].startswith('off (no_blocking_kernel')"
expect 2 "--no-blocking-kernel applies only to --method cuda_events" "$TKBENCH" run --device cuda:0 --filter "$one" --no-blocking-kernel --out "$TMP/x.json"
finish
