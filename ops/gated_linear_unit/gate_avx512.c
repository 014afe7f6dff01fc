/*
 * gate_avx512.c - gated_linear_unit's activation and gating (gate_kernels.h) compiled
 * for AVX-512 (the instruction sets block's AVX-512 flags, CMakeLists.txt), with the
 * forward's silu and sigmoid rows in intrinsics (GLU_SIG_ROW).
 */
#include "../common/vec_exp_x86.h"

#include <stdbool.h>
#include <stdint.h>

/* out[i] = act(g[i]) p[i], act(g) = g s (silu) or s (sigmoid), s = 1 / (1 + exp(-g)).
 * The compiled loop (ops_expf's two clamps and two selects by compare and blend, then a
 * division) was most of the gating's time, and the gating runs once per product
 * element against K multiply-adds (K = 128 in most specs). Here: -g clamped to
 * ops_expf's range by a max and a min, its reduction and polynomial (vec_exp_x86.h),
 * 2^n by vscalefps, and 1 / (1 + e) by vrcp14ps and one Newton step (about 1 ulp, where
 * the division is half an ulp; vdivps alone took as long as the rest). NaN stays NaN. */
static void glu_sig_row_avx512(bool silu, const float *restrict g, const float *restrict p,
                               float *restrict out, int64_t n) {
  const __m512 lo = _mm512_set1_ps(OPS_EXPF_LO), hi = _mm512_set1_ps(OPS_EXPF_HI);
  const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 in = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(in, g + i);
    /* max and min return their second operand for NaN: lo, restored below */
    const __m512 t = _mm512_min_ps(_mm512_max_ps(_mm512_xor_ps(x, sign), lo), hi);
    __m512 k;
    const __m512 er = ops_exp_parts_avx512(t, &k);
    const __m512 e = _mm512_scalef_ps(er, k);
    const __m512 d = _mm512_add_ps(one, e);
    __m512 s = _mm512_rcp14_ps(d);
    s = _mm512_mul_ps(s, _mm512_fnmadd_ps(d, s, two));
    const __m512 a = silu ? _mm512_mul_ps(x, s) : s;
    __m512 o = _mm512_mul_ps(a, _mm512_maskz_loadu_ps(in, p + i));
    o = _mm512_mask_mov_ps(o, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
    _mm512_mask_storeu_ps(out + i, in, o);
  }
}

#define GLU_SIG_ROW glu_sig_row_avx512
#define TKB_ISA_SUFFIX avx512
#define GLU_GATE_KERNELS_BODY
#include "gate_kernels.h"
