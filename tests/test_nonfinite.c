/*
 * test_nonfinite.c - check_outputs' NaN/Inf count (src/bench/nonfinite.c), which tests
 * the exponent bits, against !isfinite of each element converted to double
 * (tkb_array_get_f64, the dtype conversions of src/core/dtype.c): every bit pattern of
 * the 8- and 16-bit floats, random and special float32/float64 words, and a count across
 * the OpenMP threads on an array large enough to be split.
 */
#include "check.h"
#include "bench.h" /* tkb__count_nonfinite */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The NaN/Inf among a's elements, each converted to double: the oracle. */
static int64_t oracle(tkb_array *a) {
  int64_t bad = 0;
  for (int64_t i = 0; i < a->numel; i++) bad += !isfinite(tkb_array_get_f64(a, i));
  return bad;
}

static void exhaustive(tkb_dtype dt) {
  const int bits = (int)tkb_dtype_size(dt) * 8;
  const int64_t n = (int64_t)1 << bits;
  tkb_spec s = TKB_SPEC(dt, n);
  tkb_array *a = NULL;
  CHECK_OK(tkb_array_new(NULL, &s, &a));
  if (!a) return;
  for (int64_t i = 0; i < n; i++) {
    if (bits == 8) ((uint8_t *)a->data)[i] = (uint8_t)i;
    else ((uint16_t *)a->data)[i] = (uint16_t)i;
  }
  const int64_t want = oracle(a), got = tkb__count_nonfinite(a->data, n, dt);
  CHECK_MSG(got == want && want > 0, "%s: %lld counted, %lld by conversion", tkb_dtype_name(dt),
            (long long)got, (long long)want);
  tkb_array_free(a);
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t next(void) { /* xorshift64 */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void wide(tkb_dtype dt, int64_t n) {
  tkb_spec s = TKB_SPEC(dt, n);
  tkb_array *a = NULL;
  CHECK_OK(tkb_array_new(NULL, &s, &a));
  if (!a) return;
  for (int64_t i = 0; i < n; i++) {
    uint64_t w = next();
    /* one in 8: an all-ones exponent (Inf or NaN, random mantissa, often 0: Inf) */
    if (dt == TKB_FLOAT32) {
      uint32_t u = (uint32_t)w;
      if ((w >> 40) % 8 == 0) u |= 0x7f800000u;
      if ((w >> 44) % 16 == 0) u &= 0xff800000u;
      ((uint32_t *)a->data)[i] = u;
    } else {
      if ((w >> 40) % 8 == 0) w |= UINT64_C(0x7ff0000000000000);
      ((uint64_t *)a->data)[i] = w;
    }
  }
  const int64_t want = oracle(a), got = tkb__count_nonfinite(a->data, n, dt);
  CHECK_MSG(got == want && want > n / 16, "%s[%lld]: %lld counted, %lld by conversion",
            tkb_dtype_name(dt), (long long)n, (long long)got, (long long)want);
  tkb_array_free(a);
}

int main(void) {
  exhaustive(TKB_FLOAT8_E4M3FN);
  exhaustive(TKB_FLOAT8_E5M2);
  exhaustive(TKB_FLOAT16);
  exhaustive(TKB_BFLOAT16);
  wide(TKB_FLOAT32, 1000);
  wide(TKB_FLOAT64, 1000);
  const int64_t big = check_quick() ? ((int64_t)1 << 20) + 3 : ((int64_t)1 << 22) + 3;
  wide(TKB_FLOAT32, big); /* split across the threads */
  wide(TKB_FLOAT64, big);
  /* integers are finite; empty and NULL count 0 */
  int32_t ints[4] = {-1, 0x7f800000, 0x7fc00000, 5};
  CHECK(tkb__count_nonfinite(ints, 4, TKB_INT32) == 0);
  CHECK(tkb__count_nonfinite(NULL, 4, TKB_FLOAT32) == 0);
  CHECK(tkb__count_nonfinite(ints, 0, TKB_FLOAT32) == 0);
  float specials[5] = {INFINITY, -INFINITY, NAN, 3.4e38f, -0.0f};
  CHECK(tkb__count_nonfinite(specials, 5, TKB_FLOAT32) == 3);
  return CHECK_DONE();
}
