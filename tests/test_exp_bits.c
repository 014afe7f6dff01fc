/*
 * test_exp_bits.c - ops_exp_normal_avx2 (ops/common/vec_exp_x86.h), the short exp of the
 * avx2 softmax and gating, gives ops_exp_parts_avx2's bits where its callers use it,
 * checked on every float there:
 *   - the softmax's bounded row exp: every x in [-86.5, 0] (both zeros), where the old
 *     row exp was er * 2^k (no clamp acts above OPS_EXPF_LO);
 *   - the gating: every clamped argument t in [OPS_EXPF_LO, OPS_EXPF_HI] (down to
 *     OPS_EXPF_LO = -87.3, er 2^k is still a normal float, 2^-126 x 1.03);
 * and that the check sees a difference where there is one: below the clamp the results
 * are subnormal and the integer add is not the product.
 * About 3.3 billion arguments, 8 at a time, in registers (about 12 s). Compiled with
 * the avx2 path's flags (CMakeLists.txt); exit 77 where the CPU or build has no AVX2.
 */
#include "check.h"
#include "internal.h"

#include <stdint.h>

#if defined(__AVX2__) && defined(__FMA__)
#include "../ops/common/vec_exp_x86.h"

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* The old exp: er 2^k with 2^k made in the exponent bits. */
static __m256 exp_two_part(__m256 x) {
  __m256 k;
  const __m256 er = ops_exp_parts_avx2(x, &k);
  return _mm256_mul_ps(er, ops_exp2i_avx2(k));
}

/* The floats whose bits run from `from` to `to` (both included, in steps of 1, up or
 * down), 8 at a time: the count of those whose two exps differ bit for bit, and the
 * first of them in *first. */
__attribute__((noinline)) static uint64_t differ(uint32_t from, uint32_t to, uint32_t *first) {
  const int32_t step = to >= from ? 1 : -1;
  const uint64_t n = (uint64_t)(step > 0 ? to - from : from - to) + 1;
  const __m256i lane = _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32(step));
  const __m256i stride = _mm256_set1_epi32(8 * step);
  __m256i at = _mm256_add_epi32(_mm256_set1_epi32((int32_t)from), lane);
  uint64_t bad = 0;
  *first = 0;
  for (uint64_t i = 0; i < n; i += 8, at = _mm256_add_epi32(at, stride)) {
    const __m256 x = _mm256_castsi256_ps(at);
    const __m256 a = ops_exp_normal_avx2(x), b = exp_two_part(x);
    const int same = _mm256_movemask_ps(_mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b))));
    const uint64_t valid = n - i < 8 ? n - i : 8;
    const int wanted = (int)((1u << valid) - 1);
    if ((same & wanted) == wanted) continue;
    for (int l = 0; l < (int)valid; l++)
      if (!(same >> l & 1)) {
        if (!bad) *first = (uint32_t)((int64_t)from + (int64_t)step * (int64_t)(i + (uint64_t)l));
        bad++;
      }
  }
  return bad;
}

static void test_softmax_range(void) {
  uint32_t first;
  /* -0 down to -86.5 (sign bit set: the bits grow as the value falls), and +0 */
  const uint64_t bad = differ(bits_of(-0.0f), bits_of(-86.5f), &first);
  CHECK_MSG(bad == 0, "%llu arguments in [-86.5, -0] differ, the first %a", (unsigned long long)bad,
            (double)(union { uint32_t u; float f; }){first}.f);
  CHECK(differ(0, 0, &first) == 0);
}

static void test_gate_range(void) {
  uint32_t first;
  const uint64_t low = differ(bits_of(-0.0f), bits_of(OPS_EXPF_LO), &first);
  CHECK_MSG(low == 0, "%llu arguments in [OPS_EXPF_LO, -0] differ, the first %a", (unsigned long long)low,
            (double)(union { uint32_t u; float f; }){first}.f);
  const uint64_t high = differ(0, bits_of(OPS_EXPF_HI), &first);
  CHECK_MSG(high == 0, "%llu arguments in [0, OPS_EXPF_HI] differ, the first %a", (unsigned long long)high,
            (double)(union { uint32_t u; float f; }){first}.f);
  /* below the clamp, where no caller goes: subnormal results, which the add gets wrong */
  CHECK(differ(bits_of(-87.5f), bits_of(-88.0f), &first) > 0);
}
#endif

int main(void) {
#if defined(__AVX2__) && defined(__FMA__)
  if (!tkb__isa_supported(TKB__ISA_AVX2)) {
    printf("SKIPPED: this CPU has no AVX2 + FMA\n");
    return 77;
  }
  test_softmax_range();
  test_gate_range();
  return CHECK_DONE();
#else
  printf("SKIPPED: not an x86-64 build with the avx2 path\n");
  return 77;
#endif
}
