# cli_profiler_busy.sh - on the emulated device (TKB_PLUGIN_PATH set by CTest): when
# another profiler holds CUPTI (the emulator's TKB_EMU_CUPTI_BUSY=1), an entry timed by
# a CUPTI method fails with one sentence that says so and names the way out (exit 1, the
# run's "an entry failed"; the JSON records the entry's error as Google Benchmark does),
# while cuda_events still times it. Arguments as the CLI tests': tkbench, plugin, main.
. "$(dirname "$0")/../cli/lib.bash"

one='^cpu_96x96x64_forward_cuda$'
export TKB_EMU_CUPTI_BUSY=1
for m in cupti profiler hermetic_profiler; do
  expect 1 "CUPTI is already in use by another profiler" \
    "$TKBENCH" run --device cuda:0 --filter "$one" --method $m --iterations 2 --out "$TMP/$m.json"
  json_check "$TMP/$m.json" "d['benchmarks'][0]['error_occurred'] and 'time with cuda_events or wallclock' in d['benchmarks'][0]['error_message']"
done
expect 0 "wrote" "$TKBENCH" run --device cuda:0 --filter "$one" --method cuda_events --iterations 2 \
  --out "$TMP/e.json"
json_check "$TMP/e.json" "d['benchmarks'][0]['tkbench']['metadata']['method'] == 'cuda_events'"
finish
