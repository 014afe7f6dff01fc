#!/usr/bin/env bash
# gpu-check.sh [OUTDIR] - the CUDA backend on a GPU machine (the H200: 16 cores, sm_90),
# in one command, under 8 minutes: a fresh nvcc build for sm_90, the GPU tests, `tkbench
# check --device cuda:0`, a short suite run with each timing method, the H200 targets
# (bench_cuda), a compute-sanitizer pass, then a summary table (last).
# OUTDIR (default results/gpu-check) receives three files, because the device tool brings
# back at most 8: summary.txt, machine.txt and logs.tar.gz (every step's log and JSON,
# repacked after each step so a run cut short still returns what finished). A failed
# step prints its log's last lines and the rest still run. Exit 0 only if all passed.
# Reads only: no clock, power or other GPU setting is changed.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "${1:-$ROOT/results/gpu-check}" && cd "${1:-$ROOT/results/gpu-check}" && pwd)
BUILD=$(mktemp -d /tmp/tkb-gpu-build-XXXXXX)
LOGS=$(mktemp -d /tmp/tkb-gpu-logs-XXXXXX)
JOBS=$(nproc 2>/dev/null || echo 4)
declare -a NAMES=() RESULTS=() SECS=()

# TKB_GPU_CHECK_SKIP: an extended regex of step names not to run (recorded SKIPPED), to fit
# a short device session, e.g. '^(primary_.*|sanitize|trace|bench_cuda_again)$'.
SKIP=${TKB_GPU_CHECK_SKIP:-}

step() { # step NAME TIMEOUT_S CMD...: runs CMD, logs to LOGS/NAME.log, records the result
  local name=$1 limit=$2
  shift 2
  if [ -n "$SKIP" ] && [[ $name =~ $SKIP ]]; then
    NAMES+=("$name") RESULTS+=("SKIPPED") SECS+=(0)
    echo "== $name: skipped (TKB_GPU_CHECK_SKIP)"
    return
  fi
  local t0=$SECONDS rc
  echo "== $name (limit ${limit}s)"
  timeout --kill-after=10 "$limit" "$@" >"$LOGS/$name.log" 2>&1
  rc=$?
  local res=PASS
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then res="TIMEOUT"
  elif [ $rc -eq 77 ]; then res="SKIPPED"
  elif [ $rc -ne 0 ]; then res="FAIL($rc)"; fi
  NAMES+=("$name") RESULTS+=("$res") SECS+=($((SECONDS - t0)))
  case $res in
    PASS | SKIPPED) tail -n 3 "$LOGS/$name.log" ;;
    *) echo "-- $name: $res after $((SECONDS - t0)) s; last lines:"; tail -n 25 "$LOGS/$name.log" | cut -c1-300 ;;
  esac
  tar -czf "$OUT/logs.tar.gz.tmp" -C "$LOGS" . && mv "$OUT/logs.tar.gz.tmp" "$OUT/logs.tar.gz"
}

{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1
  nvcc --version 2>&1 | tail -n 1
  echo "cc: $(cc --version 2>&1 | head -n 1); cmake: $(cmake --version 2>&1 | head -n 1)"
  echo "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "pkg-config: $(command -v pkg-config || echo none); compute-sanitizer: $(command -v compute-sanitizer || echo none)"
  echo "cupti: $(ls /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda/lib64/libcupti.so* 2>/dev/null | head -n 2 | tr '\n' ' ')"
  echo "nvml: $(ldconfig -p 2>/dev/null | grep -m1 libnvidia-ml.so.1 || echo 'not in ldconfig')"
  # the sources' content (the device tool sends the working tree, with a .git that may be
  # older): compare with the same line run on the development machine
  echo "sources: $(cd "$ROOT" && find CMakeLists.txt src ops include tests bench scripts -type f | LC_ALL=C sort | xargs cat | sha1sum | cut -c1-12)"
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# OpenBLAS and cJSON: the GPU machine's image has neither, and no registry to install from.
# scripts/gpu-deps.sh (run on the development machine) leaves their Debian packages in
# .gpudeps/ (git-ignored; the device tool carries it); unpack them into a private prefix
# that CMake searches first (CMakeLists.txt finds them without pkg-config).
CMAKE_EXTRA=()
# TKB_CARRIED_DEPS=1 uses them even where pkg-config finds the system's (to test this path).
if { [ "${TKB_CARRIED_DEPS:-0}" = 1 ] ||
     ! { command -v pkg-config >/dev/null && pkg-config --exists openblas libcjson; }; } &&
   ls "$ROOT"/.gpudeps/*.deb >/dev/null 2>&1; then
  DEPS=/tmp/tkb-gpu-deps
  mkdir -p "$DEPS"
  for deb in "$ROOT"/.gpudeps/*.deb; do
    if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$deb" "$DEPS"
    else (t=$(mktemp -d) && cd "$t" && ar x "$deb" && tar -xf data.tar.* -C "$DEPS"; rm -rf "$t"); fi
  done
  LIBS="$DEPS/usr/lib/x86_64-linux-gnu"
  export LD_LIBRARY_PATH="$LIBS/openblas-pthread:$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LIBRARY_PATH="$LD_LIBRARY_PATH"
  CMAKE_EXTRA+=(-DCMAKE_PREFIX_PATH="$DEPS/usr" -DPKG_CONFIG_EXECUTABLE=/nonexistent)
  echo "dependencies: unpacked $(ls "$ROOT"/.gpudeps/*.deb | wc -l) carried packages into $DEPS"
fi

step configure 120 cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTKB_CUDA_ARCH=90 -DTKB_CUDA_EMU=OFF "${CMAKE_EXTRA[@]}"
step build 240 cmake --build "$BUILD" -j"$JOBS" --target tkbench tkbench-cuda test_cuda_gpu test_cuda_nogpu test_cuda_ops
step build_bench 120 cmake --build "$BUILD" -j"$JOBS" --target bench_cuda bench_cuda_kernels
TKB="$BUILD/tkbench"
step test_cuda_nogpu 60 "$BUILD/test_cuda_nogpu"
step test_cuda_gpu 120 "$BUILD/test_cuda_gpu"
step test_cuda_ops 90 "$BUILD/test_cuda_ops"
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
  step "run_$m" 60 "$TKB" run --device cuda:0 --method "$m" --iterations 5 --out "$LOGS/run_$m.json"
done
# The CLI on cuda:0 as a user runs it (the methods' metadata, cuda_events' blocking kernel
# and --no-blocking-kernel); the shell test takes the plugin and custom-main paths it
# does not use here as placeholders.
step cli_cuda 60 bash "$ROOT/tests/cli/cuda.sh" "$TKB" /dev/null /dev/null
# Tokamax's primary specs on cuda:0 (all modes), one timed call each: launch limits,
# memory and NaN/Inf at real sizes (run reports an entry that fails). All 921 cuda
# entries take ~20 min (inputs of GBs initialized and outputs scanned per entry) and one
# step over all primary entries reached only normalization and ragged_dot in 150 s, so
# each op gets its own step and time (full names carry no op name: the entries come
# from `tkbench list`, whose columns are name, op, impl; a long name is printed alone
# on its line, the rest of its row on the next).
primary_cuda_entries() { # OP: the primary cuda entries of OP, as NAME|NAME|...
  "$TKB" list --tag primary 2>/dev/null |
    awk -v op="$1" 'NF == 1 { name = $1; next }
                    name != "" { if ($1 == op && $2 == "cuda") print name; name = ""; next }
                    $2 == op && $3 == "cuda" { print $1 }' | paste -sd'|' -
}
for op in normalization dot_product_attention ragged_dot linear_softmax_cross_entropy_loss gated_linear_unit; do
  names=$(primary_cuda_entries "$op")
  [ -n "$names" ] || continue
  step "primary_$op" 45 "$TKB" run --device cuda:0 --filter "^($names)\$" --iterations 1 --experiments 1 \
    --warmup once --method cuda_events --out "$LOGS/primary_$op.json"
done
# The CUDA targets of docs/PERFORMANCE.md (cupti vs cuda_events, spread, fill/normalization against
# copy bandwidth, GLU against cuBLAS): its table goes into the summary.
step bench_cuda 120 "$BUILD/bench_cuda"
# the same program again: run-to-run spread of every figure (a difference between two
# versions smaller than this is noise)
step bench_cuda_again 120 "$BUILD/bench_cuda"
# the fill, normalization (forward, vjp) and ragged_dot few-row kernels against their
# alternatives (bench_cuda_kernels.cu)
step bench_kernels 120 "$BUILD/bench_cuda_kernels"
# profiler traces (Chrome JSON, demangled kernel names) of the small specs' forward entries
step trace 30 "$TKB" run --device cuda:0 --method profiler --filter '^cpu_.*_forward_cuda$' \
  --iterations 2 --trace-dir "$LOGS"
# Out-of-bounds accesses and races in the ops' kernels, on the small specs' forward and vjp.
if command -v compute-sanitizer >/dev/null; then
  step sanitize 90 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$TKB" check --device cuda:0 --filter '^cpu_.*_(forward|vjp)_cuda$'
  # shared-memory races in normalization's vjp (its partial sums go through shared memory
  # between __syncthreads: rows, and the other axes' kernel)
  step racecheck 60 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$TKB" check --device cuda:0 --filter '^cpu_(96x96x64|32x96x96_axis0)_vjp_cuda$'
fi
rm -rf "$BUILD"

echo
: >"$OUT/summary.txt"
if [ -s "$LOGS/bench_cuda.log" ]; then # bench_cuda ends with its table of targets
  sed -n '/^what  *measured/,$p' "$LOGS/bench_cuda.log" | tee -a "$OUT/summary.txt"
fi
printf '%-22s %-12s %6s\n' step result seconds | tee -a "$OUT/summary.txt"
fails=0
for i in "${!NAMES[@]}"; do
  printf '%-22s %-12s %6s\n' "${NAMES[$i]}" "${RESULTS[$i]}" "${SECS[$i]}" | tee -a "$OUT/summary.txt"
  case ${RESULTS[$i]} in PASS) ;; *) fails=$((fails + 1)) ;; esac
done
echo "logs and JSON: $OUT/logs.tar.gz ($fails step(s) not passed)" | tee -a "$OUT/summary.txt"
rm -rf "$LOGS"
[ $fails -eq 0 ]
