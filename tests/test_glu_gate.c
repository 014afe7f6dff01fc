/*
 * test_glu_gate.c - gated_linear_unit's gate_bf16 (ops/gated_linear_unit/gate_kernels.h),
 * which the forward of bfloat16 x writes its output with, gives on every cpu path this
 * machine runs exactly the bits of that path's float32 gate rounded by
 * tkb_cvt_f32_to_bf16 (the float32 row and tkb_convert it replaces), for every
 * activation and row length:
 *   - 2^22 random pairs (g, p): normals at scales 1e-3 to 1e3, where the rounding's
 *     ties and carries happen, and any bit pattern at all (NaNs of both signs with any
 *     payload, infinities, subnormals);
 *   - every special value against every other (zeros, infinities, quiet and signaling
 *     NaNs of both signs, the largest and least floats, values at bfloat16 ties);
 *   - rows of every length 0 to 40 and at every offset 0 to 7, so that each path's
 *     tail and its vector body both run, and nothing past n is written.
 */
#include "check.h"
#include "internal.h"

#include "../ops/gated_linear_unit/gate_kernels.h"

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next_u64(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* A normal draw at a random scale in [1e-3, 1e3] (Box-Muller on doubles), or, one time
 * in four, any 32 bits. */
static float draw(void) {
  const uint64_t r = next_u64();
  if ((r & 3) == 0) return from_bits((uint32_t)(r >> 32));
  const double u1 = ((double)(next_u64() >> 11) + 1.0) * 0x1p-53;
  const double u2 = (double)(next_u64() >> 11) * 0x1p-53;
  const double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
  return (float)(z * pow(10.0, -3.0 + 6.0 * (double)(r >> 40) * 0x1p-24));
}

static const uint32_t specials[] = {
    0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, /* zeros, infinities */
    0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0xffffffffu, /* quiet NaNs */
    0x7f800001u, 0xff812345u, 0x7fbfffffu,              /* signaling NaNs */
    0x7f7fffffu, 0xff7fffffu, 0x00000001u, 0x807fffffu, /* extremes, subnormals */
    0x3f808000u, 0x3f818000u, 0xbf808000u, 0x3f807fffu, /* bfloat16 ties, near-ties */
    0x42b00000u, 0xc2b00000u, 0x42c80000u, 0xc2c80000u, /* g past the exp's clamp */
    0x3f800000u, 0xbfc00000u, 0x40490fdbu,
};
#define N_SPECIALS (int)(sizeof specials / sizeof specials[0])

/* Runs one row through gate + tkb_cvt_f32_to_bf16 and gate_bf16; counts the elements
 * that differ and the writes past n (guard values after the row). */
static int compare_row(const glu_gate_kernels *k, glu_activation act, const float *g,
                       const float *p, int64_t n, int64_t *first_bad) {
  enum { GUARD = 9 };
  float *f = malloc((size_t)(n + GUARD) * sizeof *f);
  uint16_t *want = malloc((size_t)(n + GUARD) * sizeof *want);
  uint16_t *got = malloc((size_t)(n + GUARD) * sizeof *got);
  int bad = 0;
  if (!f || !want || !got) {
    free(f);
    free(want);
    free(got);
    return -1;
  }
  k->gate(act, g, p, f, n);
  for (int64_t i = 0; i < n; i++) want[i] = tkb_cvt_f32_to_bf16(f[i]);
  for (int64_t i = 0; i < n + GUARD; i++) got[i] = 0xabcdu;
  k->gate_bf16(act, g, p, got, n);
  for (int64_t i = 0; i < n + GUARD; i++) {
    const bool ok = i < n ? got[i] == want[i] : got[i] == 0xabcdu;
    if (!ok && bad++ == 0) *first_bad = i;
  }
  free(f);
  free(want);
  free(got);
  return bad;
}

static const char *const act_names[GLU_ACT_COUNT] = {"none", "silu", "sigmoid", "gelu", "relu"};

static void test_path(tkb__isa isa) {
  const glu_gate_kernels *k = TKB_ISA_PICK(tkb__glu_gate_kernels, isa);
  enum { RANDOM = 1 << 22, ROW = 1000 };
  float *g = malloc(RANDOM * sizeof *g), *p = malloc(RANDOM * sizeof *p);
  if (!g || !p) {
    CHECK(!"out of memory");
    free(g);
    free(p);
    return;
  }
  for (int64_t i = 0; i < RANDOM; i++) {
    g[i] = draw();
    p[i] = draw();
  }
  for (int a = 0; a < GLU_ACT_COUNT; a++) {
    int64_t first = -1;
    int bad = 0;
    /* random pairs, in rows of ROW */
    for (int64_t i = 0; i < RANDOM; i += ROW) {
      int64_t at = -1;
      const int64_t n = RANDOM - i < ROW ? RANDOM - i : ROW;
      const int b = compare_row(k, (glu_activation)a, g + i, p + i, n, &at);
      if (b && first < 0) first = i + at;
      bad += b;
    }
    CHECK_MSG(bad == 0, "%s %s: %d of %d random values differ, the first g = %a p = %a",
              tkb__isa_name(isa), act_names[a], bad, RANDOM, first >= 0 ? g[first] : 0.0f,
              first >= 0 ? p[first] : 0.0f);
    /* every special against every special */
    float sg[N_SPECIALS * N_SPECIALS], sp[N_SPECIALS * N_SPECIALS];
    for (int i = 0; i < N_SPECIALS; i++)
      for (int j = 0; j < N_SPECIALS; j++) {
        sg[i * N_SPECIALS + j] = from_bits(specials[i]);
        sp[i * N_SPECIALS + j] = from_bits(specials[j]);
      }
    int64_t at = -1;
    bad = compare_row(k, (glu_activation)a, sg, sp, N_SPECIALS * N_SPECIALS, &at);
    CHECK_MSG(bad == 0, "%s %s: %d special pairs differ, the first g = %a p = %a",
              tkb__isa_name(isa), act_names[a], bad, at >= 0 ? sg[at] : 0.0f,
              at >= 0 ? sp[at] : 0.0f);
    /* every length and offset: tails, bodies and the guard after the row */
    bad = 0;
    for (int64_t off = 0; off < 8; off++)
      for (int64_t n = 0; n <= 40; n++) bad += compare_row(k, (glu_activation)a, g + off, p + off, n, &at) != 0;
    CHECK_MSG(bad == 0, "%s %s: %d of the rows of length 0-40 at offsets 0-7 differ or "
              "write past their end", tkb__isa_name(isa), act_names[a], bad);
  }
  free(g);
  free(p);
}

int main(void) {
  int paths = 0;
  for (int isa = 0; isa < TKB__ISA_COUNT; isa++) {
    if (!tkb__isa_supported((tkb__isa)isa)) continue;
    printf("  %s\n", tkb__isa_name((tkb__isa)isa));
    test_path((tkb__isa)isa);
    paths++;
  }
  CHECK(paths >= 1);
  return CHECK_DONE();
}
