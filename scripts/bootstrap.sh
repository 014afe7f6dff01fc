#!/usr/bin/env bash
# Installs the Debian packages the build needs, only when something is missing; with
# the argument `test`, also what `make test` needs beyond the build.
# Runs as root on a fresh machine (CI); prints nothing when all is present.
set -euo pipefail
for_tests=false
[ "${1:-}" = test ] && for_tests=true

missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed" || missing+=("$1"); }

need_cmd cc gcc
need_cmd g++ g++ # the CUDA emulator (tests/cuemu) and nvcc's host compiler
need_cmd make make
need_cmd cmake cmake
need_cmd python3 python3
need_cmd pkg-config pkg-config
need_pkg libgomp1
need_pkg libc6-dev
need_pkg libopenblas-dev
need_pkg libcjson-dev
# OpenCL backend: headers and ICD loader to build libtkbench-opencl.so, and
# PoCL, the CPU OpenCL driver, so its tests run on machines without a GPU.
need_pkg opencl-headers
need_pkg ocl-icd-opencl-dev
need_pkg pocl-opencl-icd
# The results store (--history, `tkbench history`): SQLite's and libpq's headers to build
# its engines, whose libraries it opens when a store is first used.
need_pkg libsqlite3-dev
need_pkg libpq-dev

# What only the tests and the bench programs use, so `make run` does not install it
if $for_tests; then
  # the HTML report's browser test renders the page in headless Chromium
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
  # Google Benchmark, to compare with: bench/bench_startup.c and tests/cli/gbench_keys.sh
  # build small programs against it.
  need_pkg libbenchmark-dev
  # The fuzz tree (tests/fuzz, `make test-fuzz`): clang with libFuzzer, and the OpenMP
  # runtime clang links.
  need_cmd clang clang
  need_pkg libomp-dev
  # the store's PostgreSQL test (tests/cli/history_postgres.sh) starts a server of its own
  need_pkg postgresql
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap: need root to install ${missing[*]} (run: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
