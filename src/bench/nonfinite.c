/*
 * nonfinite.c - counts the NaN and Inf elements of a floating array in host memory, for
 * tkb_bench_opts.check_outputs. Outputs of Tokamax's sizes hold billions of elements
 * (a bf16 GLU output at the largest spec is 27 GB), so the test is on the bits, one
 * dtype per loop, across the OpenMP threads: an element is NaN or Inf exactly when its
 * exponent field is all ones (float8_e4m3fn has no Inf, and its NaN is S.1111.111).
 * Converting each element to double first (the first version) took ~1 s per GB.
 */
#include "internal.h"

#include <stdint.h>

/* Elements per thread below which one thread scans alone (threads cost ~10 us). */
#define NONFINITE_PARALLEL_MIN ((int64_t)1 << 20)

#define SCAN(T, MASK, ALL)                                                                 \
  do {                                                                                     \
    const T *p = data;                                                                     \
    _Pragma("omp parallel for reduction(+ : bad) schedule(static) if (n >= NONFINITE_PARALLEL_MIN)") \
    for (int64_t i = 0; i < n; i++) bad += (p[i] & (MASK)) == (ALL);                       \
  } while (0)

int64_t tkb__count_nonfinite(const void *data, int64_t n, tkb_dtype dtype) {
  int64_t bad = 0;
  if (!data || n <= 0) return 0;
  switch (dtype) {
    case TKB_FLOAT64: SCAN(uint64_t, UINT64_C(0x7ff0000000000000), UINT64_C(0x7ff0000000000000)); break;
    case TKB_FLOAT32: SCAN(uint32_t, 0x7f800000u, 0x7f800000u); break;
    case TKB_BFLOAT16: SCAN(uint16_t, 0x7f80u, 0x7f80u); break;
    case TKB_FLOAT16: SCAN(uint16_t, 0x7c00u, 0x7c00u); break;
    case TKB_FLOAT8_E5M2: SCAN(uint8_t, 0x7cu, 0x7cu); break;
    case TKB_FLOAT8_E4M3FN: SCAN(uint8_t, 0x7fu, 0x7fu); break;
    default: break; /* integers and bool are always finite */
  }
  return bad;
}
