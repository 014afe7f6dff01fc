#!/usr/bin/env bash
# gpu-check.sh [OUTDIR] - the CUDA backend on a GPU machine (the H200: 16 cores, sm_90),
# in one command, under 8 minutes: a fresh nvcc build for sm_90, the GPU tests, `tkbench
# check --device cuda:0`, a short suite run with each timing method, then a summary table
# (last). Logs and JSON go to OUTDIR (default results/gpu-check). Each step has its own
# timeout; a failed step is recorded and the rest still run. Exit 0 only if all passed.
# Reads only: no clock, power or other GPU setting is changed.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "${1:-$ROOT/results/gpu-check}" && cd "${1:-$ROOT/results/gpu-check}" && pwd)
BUILD=$(mktemp -d /tmp/tkb-gpu-build-XXXXXX)
JOBS=$(nproc 2>/dev/null || echo 4)
declare -a NAMES=() RESULTS=() SECS=()

step() { # step NAME TIMEOUT_S CMD...: runs CMD, logs to OUT/NAME.log, records the result
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS rc
  echo "== $name (limit ${limit}s)"
  timeout --kill-after=10 "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  local res=PASS
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then res="TIMEOUT"
  elif [ $rc -eq 77 ]; then res="SKIPPED"
  elif [ $rc -ne 0 ]; then res="FAIL($rc)"; fi
  NAMES+=("$name") RESULTS+=("$res") SECS+=($((SECONDS - t0)))
  tail -n 3 "$OUT/$name.log"
}

{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,temperature.gpu,power.draw --format=csv 2>&1
  nvcc --version 2>&1 | tail -n 1
  git -C "$ROOT" rev-parse HEAD 2>/dev/null
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"

step configure 120 cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTKB_CUDA_ARCH=90
step build 240 cmake --build "$BUILD" -j"$JOBS" --target tkbench tkbench-cuda test_cuda_gpu test_cuda_nogpu test_cuda_ops
TKB="$BUILD/tkbench"
step test_cuda_nogpu 60 "$BUILD/test_cuda_nogpu"
step test_cuda_gpu 120 "$BUILD/test_cuda_gpu"
step test_cuda_ops 60 "$BUILD/test_cuda_ops"
step info 30 "$TKB" info
step check 120 "$TKB" check --device cuda:0
# The ops' CUDA implementations (ops/<op>/cuda.cu: normalization, gated_linear_unit,
# ragged_dot, linear_softmax_cross_entropy_loss, dot_product_attention) against their cpu
# references, every mode: the cpu-tagged specs of all five (their names start cpu_; the
# references take ~11 s on 2 cores) plus one Tokamax normalization shape. Full names carry
# no op name (a filter 'normalization|gated' matches nothing); on cuda:0 only the five
# ops' "cuda" entries run.
step check_ops 180 "$TKB" check --device cuda:0 --filter '^(cpu_|alphafold_384res_64chan_).*_cuda$'
# A short suite with each method (the ops' cuda implementations where registered, else
# whatever the suite runs on cuda:0); JSON per method.
for m in cupti cuda_events profiler hermetic_profiler wallclock; do
  step "run_$m" 60 "$TKB" run --device cuda:0 --method "$m" --iterations 5 --out "$OUT/run_$m.json"
done
rm -rf "$BUILD"

echo
printf '%-22s %-12s %6s\n' step result seconds | tee "$OUT/summary.txt"
fails=0
for i in "${!NAMES[@]}"; do
  printf '%-22s %-12s %6s\n' "${NAMES[$i]}" "${RESULTS[$i]}" "${SECS[$i]}" | tee -a "$OUT/summary.txt"
  case ${RESULTS[$i]} in PASS) ;; *) fails=$((fails + 1)) ;; esac
done
echo "logs and JSON: $OUT ($fails step(s) not passed)" | tee -a "$OUT/summary.txt"
[ $fails -eq 0 ]
