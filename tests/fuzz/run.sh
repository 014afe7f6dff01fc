#!/usr/bin/env bash
# run.sh BUILD_DIR SECONDS [HARNESS...] - fuzzes each harness of BUILD_DIR (a TKB_FUZZ
# tree: `make build-fuzz`) for SECONDS, one after the other, growing BUILD_DIR's corpus
# from tests/fuzz/corpus/ (the seeds), and prints per harness the executions, the
# corpus size and the findings. A finding (crash-*, timeout-*, oom-*, leak-*) is kept
# in BUILD_DIR/findings/<harness>/; rerun it with `BUILD_DIR/<harness> FILE`.
# Exit status: 0 when nothing was found.
set -u
build=${1:?usage: run.sh BUILD_DIR SECONDS [HARNESS...]}
seconds=${2:?usage: run.sh BUILD_DIR SECONDS [HARNESS...]}
shift 2
src=$(cd "$(dirname "$0")" && pwd)
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=($(cd "$build" && ls fuzz_* 2>/dev/null | grep -v '\.'))
found=0
printf '%-18s %12s %10s %8s %s\n' harness execs exec/s corpus findings
for h in "${harnesses[@]}"; do
  mkdir -p "$build/fuzz-corpus/$h" "$build/findings/$h"
  log="$build/findings/$h/last.log"
  # the CLI's commands print: their output would drown libFuzzer's report
  mask=0
  [ "$h" = fuzz_cli ] && mask=3
  "$build/$h" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -close_fd_mask=$mask \
    -print_final_stats=1 -artifact_prefix="$build/findings/$h/" \
    "$build/fuzz-corpus/$h" "$src/corpus/$h" >"$log" 2>&1
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log")
  corpus=$(ls "$build/fuzz-corpus/$h" | wc -l)
  findings=$(ls "$build/findings/$h" | grep -cE '^(crash|timeout|oom|leak|slow-unit)-')
  found=$((found + findings))
  printf '%-18s %12s %10s %8s %s\n' "$h" "${execs:-?}" "${rate:-?}" "$corpus" "$findings"
done
exit $((found > 0))
