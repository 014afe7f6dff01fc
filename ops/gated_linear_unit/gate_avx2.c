/*
 * gate_avx2.c - gated_linear_unit's activation and gating (gate_kernels.h) compiled
 * for AVX2 + FMA (the instruction sets block's AVX2 flags, CMakeLists.txt), with the
 * forward's silu and sigmoid rows in intrinsics (GLU_SIG_ROW).
 */
#include "../common/vec_exp_x86.h"

#include <stdbool.h>
#include <stdint.h>

/* out[i] = act(g[i]) p[i], act(g) = g s (silu) or s (sigmoid), s = 1 / (1 + exp(-g)),
 * as gate_avx512.c's (which says why): -g clamped to ops_expf's range, its reduction
 * and polynomial (vec_exp_x86.h's constants), 1 / (1 + e) by vrcpps and one Newton step
 * (about 1 ulp). NaN stays NaN. The last n % 8 by the compiled formula.
 * e by ops_exp_normal_avx2 (vec_exp_x86.h: 23 micro-ops per 8 values on the two busy
 * ports instead of 25), the same bits (compared with the two-part exp for every float g,
 * silu and sigmoid): e itself is exact over the whole clamped range, where er 2^k stays a
 * normal float down to OPS_EXPF_LO (2^-126 x 1.03; tests/test_exp_bits.c checks every
 * argument). */
static void glu_sig_row_avx2(bool silu, const float *restrict g, const float *restrict p,
                             float *restrict out, int64_t n) {
  const __m256 lo = _mm256_set1_ps(OPS_EXPF_LO), hi = _mm256_set1_ps(OPS_EXPF_HI);
  const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(g + i);
    /* max and min return their second operand for NaN: lo, restored below */
    const __m256 t = _mm256_min_ps(_mm256_max_ps(_mm256_xor_ps(x, sign), lo), hi);
    const __m256 e = ops_exp_normal_avx2(t);
    const __m256 d = _mm256_add_ps(one, e);
    __m256 s = _mm256_rcp_ps(d);
    s = _mm256_mul_ps(s, _mm256_fnmadd_ps(d, s, two));
    const __m256 a = silu ? _mm256_mul_ps(x, s) : s;
    const __m256 o = _mm256_mul_ps(a, _mm256_loadu_ps(p + i));
    _mm256_storeu_ps(out + i, _mm256_blendv_ps(o, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q)));
  }
  for (; i < n; i++) {
    const float s = 1.0f / (1.0f + ops_expf(-g[i]));
    out[i] = (silu ? g[i] * s : s) * p[i];
  }
}

#define GLU_SIG_ROW glu_sig_row_avx2
#define TKB_ISA_SUFFIX avx2
#define GLU_GATE_KERNELS_BODY
#include "gate_kernels.h"
