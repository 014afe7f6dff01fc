#!/usr/bin/env bash
# cross-aarch64.sh [BUILD_DIR] - the aarch64 build, with its two cpu kernel paths
# (portable and neon, chosen at run time): compiles the library for aarch64 with
# Debian's cross compiler and runs the kernel tests under qemu's user-mode emulation:
# test_cpu_isa (the neon path's fill and conversions bit for bit against portable's,
# every cpu entry of the suite within tolerance) once, and test_random (with its golden
# hashes), test_dtype, test_normalization, test_dot_product_attention,
# test_gated_linear_unit and test_linear_softmax_cross_entropy_loss on each path.
# OpenBLAS's arm64 package cannot be installed beside an amd64 system without adding
# dpkg's arm64 architecture, so the tests link scripts/cross-aarch64-blas.c (plain
# loops), which the ops also open as libopenblas.so.0, and the compiler reads the host's
# cblas.h (declarations only).
# Installs gcc-aarch64-linux-gnu, its C library and qemu-user when missing (root); about
# 25 minutes on 2 cores, most of it the emulated tests.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-aarch64}

missing=()
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(gcc-aarch64-linux-gnu)
# the C library to link against: only recommended by the compiler's package, which
# --no-install-recommends leaves out
[ -e /usr/aarch64-linux-gnu/lib/crti.o ] || missing+=(libc6-dev-arm64-cross)
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
aarch64-linux-gnu-gcc -O2 -fPIC -c scripts/cross-aarch64-blas.c -o "$build/blas.o"
aarch64-linux-gnu-ar rcs "$build/libcrossblas.a" "$build/blas.o"
# the ops open OpenBLAS at run time (ops/common/blas.c), first from the folder the build
# found it in: the same loops as a shared object of OpenBLAS's name there
aarch64-linux-gnu-gcc -shared -Wl,-soname,libopenblas.so.0 "$build/blas.o" -o "$build/libopenblas.so.0"
printf '' | aarch64-linux-gnu-gcc -x c -c - -o "$build/none.o"
aarch64-linux-gnu-ar rcs "$build/libnone.a" "$build/none.o" # cJSON: the tests run need none

# the op tests include cblas.h through ops_common.h, and only the library's objects get
# the include folder from the build: the compiler flags give it to every target
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$PWD/$build/aarch64.cmake" \
  -DCMAKE_C_FLAGS="-isystem $cblas" \
  -DCMAKE_BUILD_TYPE=Release -DTKB_CUDA=OFF -DTKB_CUDA_EMU=OFF -DPKG_CONFIG_EXECUTABLE=/bin/false \
  -DTKB_OPENBLAS_INCLUDE_DIR="$cblas" -DTKB_OPENBLAS_LIBRARY="$PWD/$build/libcrossblas.a" \
  -DTKB_CJSON_INCLUDE_DIR=/usr/include -DTKB_CJSON_LIBRARY="$PWD/$build/libnone.a" >/dev/null
tests=(test_random test_dtype test_normalization test_dot_product_attention
       test_gated_linear_unit test_linear_softmax_cross_entropy_loss)
cmake --build "$build" -j "$(nproc)" --target tkbench_obj test_cpu_isa "${tests[@]}"
status=0
run() { # path test
  echo "== $2 (aarch64, qemu, ${1:-best} path)"
  rc=0
  out=$(TKB_CPU_ISA=$1 TKB_TEST_QUICK=1 qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/$2" 2>&1) || rc=$?
  echo "$out" | grep -E 'this CPU|bit-identical|passed|FAIL|SKIPPED' | tail -6
  [ $rc -eq 0 ] || { echo "   exit $rc"; status=1; }
}
run "" test_cpu_isa
for t in "${tests[@]}"; do
  run neon "$t"
  run portable "$t"
done
exit $status
