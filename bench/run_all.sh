#!/usr/bin/env bash
# Runs every benchmark of tkbench itself (each compares against a baseline measured in
# the same run and prints the ratio). The figures in docs/PERFORMANCE.md come from this.
# usage: bench/run_all.sh [build-dir]    (default: build)
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
echo "# tkbench benchmarks  $(date -u +%Y-%m-%dT%H:%MZ)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)  $(nproc) cores  load $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
run() {
  echo
  echo "## $*"
  "$@" || status=1
}
run "$build/bench_harness"
# exits 77 with its reason where no Google Benchmark program can be built
[ -x "$build/bench_startup" ] && { echo; echo "## $build/bench_startup"; "$build/bench_startup"; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1; }
run "$build/bench_stopping"
run "$build/bench_call_loop"
run "$build/bench_intervals"
run "$build/bench_bimodality"
run python3 bench/default_stability.py "$build"
run python3 bench/compare_accuracy.py "$build"
run "$build/bench_isolate"
run "$build/bench_init"
run python3 bench/init_vs_numpy.py "$build"
run "$build/bench_normalization"
run "$build/bench_matmul_ops"
run "$build/bench_attention"
run "$build/bench_lsce"
run bash bench/report_scale.sh "$build"
[ -x "$build/bench_opencl_overhead" ] && run "$build/bench_opencl_overhead"
[ -x "$build/bench_opencl_ops" ] && run "$build/bench_opencl_ops"
# the CUDA targets on cuda:0; exits 77 with its reason where there is no GPU (not a failure)
[ -x "$build/bench_cuda" ] && { echo; echo "## $build/bench_cuda"; "$build/bench_cuda"; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1; }
exit $status
