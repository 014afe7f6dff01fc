# custom_main.sh - a user's program built on TKB_MAIN(): the whole command line, and
# Google Benchmark's calling convention (what tools/compare.py does).
. "$(dirname "$0")/lib.bash"

expect 0 "saxpy_4k_forward_c" "$CUSTOM_MAIN" list
expect 0 "static  alpha=2" "$CUSTOM_MAIN" list --verbose
# no arguments: runs every entry (its entries carry no `cpu` tag)
expect 0 "2 entries in" "$CUSTOM_MAIN"
expect 0 "saxpy_64k_forward_c" "$CUSTOM_MAIN" run --iterations 2 --experiments 1
# as compare.py calls a benchmark: flags only, output to a temp name without extension
expect 0 "" "$CUSTOM_MAIN" --benchmark_filter=64k --benchmark_repetitions=3 --benchmark_out="$TMP/gb_out"
json_check "$TMP/gb_out" "d['context']['json_schema_version'] == 1 and [b['name'] for b in d['benchmarks']] == ['saxpy_64k_forward_c'] * 3 + ['saxpy_64k_forward_c_' + a for a in ('mean', 'median', 'stddev', 'cv')]"
# cpu_time less the CPU clock's own floor: 0 is a valid value for a short call on a busy machine
json_check "$TMP/gb_out" "all(b['time_unit'] == 'ns' and b['real_time'] > 0 and b['cpu_time'] >= 0 for b in d['benchmarks'])"
json_check "$TMP/gb_out" "d['context']['executable'].endswith('custom_main')"
expect 0 "saxpy_4k_forward_c" "$CUSTOM_MAIN" --benchmark_list_tests
expect 0 "$(basename "$CUSTOM_MAIN") 0." "$CUSTOM_MAIN" --version
expect 2 "unknown flag '--nope'" "$CUSTOM_MAIN" run --nope
finish
