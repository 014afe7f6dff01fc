#!/usr/bin/env bash
# cross-aarch64.sh [BUILD_DIR] - the aarch64 build, which has the portable cpu kernels
# only: compiles the library for aarch64 with Debian's cross compiler and runs the kernel
# tests (test_random with its golden hashes, test_dtype, test_normalization,
# test_cpu_isa) under qemu's user-mode emulation. OpenBLAS's arm64 package cannot be
# installed beside an amd64 system without adding dpkg's arm64 architecture, so the
# tests link scripts/cross-aarch64-blas.c (plain loops) and the compiler reads the host's
# cblas.h (declarations only). Installs gcc-aarch64-linux-gnu and qemu-user when missing
# (root); about 15 minutes on 2 cores, most of it the emulated tests.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-aarch64}

missing=()
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(gcc-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "cross-aarch64: need root to install ${missing[*]} (run: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
cblas=$(dirname "$(find /usr/include -name cblas.h -path '*openblas*' | head -1)")
[ -n "$cblas" ] || { echo "cross-aarch64: no OpenBLAS cblas.h (run scripts/bootstrap.sh)" >&2; exit 1; }

mkdir -p "$build"
cat >"$build/aarch64.cmake" <<'TC'
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
TC
aarch64-linux-gnu-gcc -O2 -c scripts/cross-aarch64-blas.c -o "$build/blas.o"
aarch64-linux-gnu-ar rcs "$build/libcrossblas.a" "$build/blas.o"
printf '' | aarch64-linux-gnu-gcc -x c -c - -o "$build/none.o"
aarch64-linux-gnu-ar rcs "$build/libnone.a" "$build/none.o" # cJSON: the tests run need none

cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$PWD/$build/aarch64.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DTKB_CUDA=OFF -DTKB_CUDA_EMU=OFF -DPKG_CONFIG_EXECUTABLE=/bin/false \
  -DTKB_OPENBLAS_INCLUDE_DIR="$cblas" -DTKB_OPENBLAS_LIBRARY="$PWD/$build/libcrossblas.a" \
  -DTKB_CJSON_INCLUDE_DIR=/usr/include -DTKB_CJSON_LIBRARY="$PWD/$build/libnone.a" >/dev/null
tests=(test_random test_dtype test_normalization test_cpu_isa)
cmake --build "$build" -j "$(nproc)" --target tkbench_obj "${tests[@]}"
status=0
for t in "${tests[@]}"; do
  echo "== $t (aarch64, qemu)"
  TKB_TEST_QUICK=1 qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/$t" | tail -3 || status=1
done
exit $status
