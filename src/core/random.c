/*
 * random.c - tkb_fill: seeded, counter-based random initialization of arrays.
 *
 * Also implements the internal tkb__fill_call (declared in internal.h):
 *   tkb_status tkb__fill_call(tkb_array *a, const tkb_init *init, uint64_t seed,
 *                             uint64_t stream, const tkb_args *call);
 * tkb_fill with the bound call handed to a callback initializer's ctx->call
 * (standardization passes it); tkb_fill(a, init, seed, stream) is
 * tkb__fill_call(a, init, seed, stream, NULL).
 *
 * The values are defined by src/core/philox.h (the element <-> counter mapping and
 * the transforms) plus the plan (fill_plan.c: which transform, the parameters as the
 * dtype's arithmetic sees them). A device backend reproduces a fill by building the
 * same plan and running philox.h's functions per element.
 *
 * Per kind (E = elements per Philox counter, see philox.h):
 *  - float normal (DEFAULT on floats, NORMAL): z from tkb_px_normal16 (E = 8, the
 *    dtypes of 16 bits or fewer: bfloat16, float16, float8), tkb_px_box_mullerf (E = 4,
 *    float32) or tkb_px_box_muller (E = 2, float64); unless
 *    (mean, std) == (0, 1), v = fma(z, std, mean) in that precision with mean and
 *    std rounded to it; narrow dtypes then round v to the dtype (tkb_convert, which
 *    rounds as tkb_f32_to_<dtype> does).
 *  - float uniform [lo, hi): tkb_px_lerp_clampf(tkb_px_u01f(w), lo, hi, mn, mx) (E=4)
 *    or the double versions (E = 2, float64), with mn/mx the smallest/largest value
 *    of the dtype in [lo, hi); narrow dtypes then round (which stays in [mn, mx]).
 *  - integer range [lo, hi) of width w (DEFAULT on ints and bool, INT_RANGE, UNIFORM
 *    on ints and bool): lo + tkb_px_range32(w32, w) when w <= 2^32 (E = 4), else
 *    lo + tkb_px_range64(w64, w) (E = 2); float dtypes get that integer rounded to
 *    the dtype (through float32 for the narrow ones).
 *  - constant: no draws.
 *
 * Speed: the CPU fill works on blocks of NB counters in stages (Philox for the whole
 * block, then -2 ln u, sqrt, sincos, interleave), each a loop over L1-resident arrays
 * that GCC vectorizes; staging keeps the dependency chains short enough for the
 * out-of-order core to overlap iterations (fusing the stages into one loop is 20%
 * slower). Philox itself uses AVX-512 intrinsics when available: GCC 12 compiles the
 * 32x32->64 products of the portable loop to vpand + vpmullq and the high half to a
 * shift, where one vpmuludq and a vpshufd do (same bits, 1.7x faster Philox). On Zen 4
 * vpmuludq and the FMAs share the same two pipes, so the fill is bound by the count
 * of vector operations: about 16 per 4 normals.
 */
#include "fill_plan.h"
#include "philox.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#if defined(__AVX512F__) && !defined(TKB_RANDOM_PORTABLE)
#include <immintrin.h>
#define TKB_RANDOM_AVX512 1
#endif

/* Counters per block: the unit of work of one stage pipeline (2 KiB of words; the
 * block's arrays stay in L1). */
#define NB 128
/* Blocks below which a fill stays on the calling thread. */
#define PARALLEL_MIN_BLOCKS 32

/* ------------------------------------------------------------------------------ */
/* Block generators: NB counters -> NB * E values in element order                */
/* ------------------------------------------------------------------------------ */

/*
 * Philox for counters c0 .. c0 + NB - 1. Words land in w[4 * NB] as four regions
 * [w0 | w2 | w1 | w3] (region of word k: 0, 2, 1, 3 times NB), so that the radius
 * words of the Box-Muller pairs are w[0, 2NB) and the angle words w[2NB, 4NB).
 */
#if TKB_RANDOM_AVX512
static void philox_block(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  const __m512i m0 = _mm512_set1_epi64(TKB_PX_M0), m1 = _mm512_set1_epi64(TKB_PX_M1);
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6,
                                        4, 2, 0);
  const __m512i s0 = _mm512_set1_epi64(p->s0), s1 = _mm512_set1_epi64(p->s1);
  /* 4 groups of 8 counters in 64-bit lanes (the word in the low half; vpmuludq reads
   * only that half, so the high halves may hold junk), 4 independent chains. */
  for (int j = 0; j < NB; j += 32) {
    __m512i x[4][4];
    for (int h = 0; h < 4; h++) {
      __m512i c = _mm512_add_epi64(_mm512_set1_epi64((long long)(c0 + j + 8 * h)), lane);
      x[h][0] = c;
      x[h][1] = _mm512_srli_epi64(c, 32);
      x[h][2] = s0;
      x[h][3] = s1;
    }
    for (int r = 0; r < 10; r++) {
      const __m512i k0 = _mm512_set1_epi64((long long)p->ks[2 * r]);
      const __m512i k1 = _mm512_set1_epi64((long long)p->ks[2 * r + 1]);
      for (int h = 0; h < 4; h++) {
        __m512i p0 = _mm512_mul_epu32(x[h][0], m0);
        __m512i p1 = _mm512_mul_epu32(x[h][2], m1);
        /* hi(p) into the low half by swapping halves (vpshufd): cheaper than a
         * 64-bit shift on Zen 4, and the junk it leaves in the high half is unused */
        x[h][0] = _mm512_ternarylogic_epi64(_mm512_shuffle_epi32(p1, 0xB1), x[h][1], k0, 0x96);
        x[h][2] = _mm512_ternarylogic_epi64(_mm512_shuffle_epi32(p0, 0xB1), x[h][3], k1, 0x96);
        x[h][1] = p1;
        x[h][3] = p0;
      }
    }
    static const int region[4] = {0, 2 * NB, NB, 3 * NB};
    for (int h = 0; h < 4; h += 2)
      for (int k = 0; k < 4; k++)
        _mm512_storeu_si512(w + region[k] + j + 8 * h,
                            _mm512_permutex2var_epi32(x[h][k], even, x[h + 1][k]));
  }
}
#else
/* The same rounds on 64-bit lanes; only the low 32 bits of each lane matter. */
static void philox_block(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  for (int j = 0; j < NB; j++) {
    uint64_t c = c0 + (uint64_t)j;
    uint64_t x0 = c, x1 = c >> 32, x2 = p->s0, x3 = p->s1;
    for (int r = 0; r < 10; r++) {
      uint64_t p0 = (x0 & 0xffffffffu) * (uint64_t)TKB_PX_M0;
      uint64_t p1 = (x2 & 0xffffffffu) * (uint64_t)TKB_PX_M1;
      x0 = (p1 >> 32) ^ x1 ^ p->ks[2 * r];
      x2 = (p0 >> 32) ^ x3 ^ p->ks[2 * r + 1];
      x1 = p1;
      x3 = p0;
    }
    w[j] = (tkb_px_u32)x0;
    w[2 * NB + j] = (tkb_px_u32)x1;
    w[NB + j] = (tkb_px_u32)x2;
    w[3 * NB + j] = (tkb_px_u32)x3;
  }
}
#endif

/* v[4 NB] in region order -> out[4 NB] in element order: element 4j + k takes the
 * value of word k of counter j, which sits at region(k) + j. */
static void interleave4_f32(float *restrict out, const float *restrict v) {
  for (int j = 0; j < NB; j++) {
    out[4 * j + 0] = v[j];
    out[4 * j + 1] = v[2 * NB + j];
    out[4 * j + 2] = v[NB + j];
    out[4 * j + 3] = v[3 * NB + j];
  }
}

/* DRAW_NORMAL32 / DRAW_UNIFORM32: 4 NB floats in element order. */
static void gen_f32(const fill_plan *p, uint64_t c0, float *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  _Alignas(64) float r[2 * NB];
  _Alignas(64) float v[4 * NB];
  philox_block(p, c0, w);
  if (p->draw == DRAW_NORMAL32) {
    /* pair i: radius word w[i], angle word w[2NB + i]; z0 -> v[i], z1 -> v[2NB + i],
     * so pair j's z0/z1 are words 0/1 and pair NB + j's are words 2/3 of counter j. */
    for (int i = 0; i < 2 * NB; i++)
      r[i] = tkb_px_neg2logf((float)(tkb_px_i32)((w[i] >> 8) + 1u), -24);
    for (int i = 0; i < 2 * NB; i++) r[i] = tkb_px_sqrtf(r[i]);
    for (int i = 0; i < 2 * NB; i++) {
      tkb_px_f32x2 cs = tkb_px_sincos_turnf(w[2 * NB + i]);
      v[i] = r[i] * cs.a;
      v[2 * NB + i] = r[i] * cs.b;
    }
    if (p->affine) {
      const float s = p->std_f, m = p->mean_f;
      for (int i = 0; i < 4 * NB; i++) v[i] = TKB_PX_FMAF(v[i], s, m);
    }
  } else {
    const float lo = p->lo_f, hi = p->hi_f, mn = p->mn_f, mx = p->mx_f;
    for (int i = 0; i < 4 * NB; i++)
      v[i] = tkb_px_lerp_clampf(tkb_px_u01f(w[i]), lo, hi, mn, mx);
  }
  interleave4_f32(out, v);
}

/* DRAW_NORMAL16: 8 NB floats in element order (element 8j + 2k + h from half h of
 * word k of counter j, which sits at region(k) + j). */
static void gen_n16(const fill_plan *p, uint64_t c0, float *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  philox_block(p, c0, w);
  static const int region[4] = {0, 2 * NB, NB, 3 * NB};
  /* The lookups into the 128 KiB table (L2, not L1) bound this loop (a bfloat16 fill
   * through it took 0.90-0.92 ns per element per thread, through Box-Muller 0.93-0.95;
   * an AVX-512 gather was no faster). Plain bfloat16 and float16 take gen_n16_rounded. */
  const tkb_px_u32 *t = tkb__normal16_table;
  for (int j = 0; j < NB; j++)
    for (int k = 0; k < 4; k++) {
      const tkb_px_u32 x = w[region[k] + j];
      out[8 * j + 2 * k] = tkb_px_normal16(x & 0xffffu, t);
      out[8 * j + 2 * k + 1] = tkb_px_normal16(x >> 16, t);
    }
  if (p->affine) {
    const float s = p->std_f, m = p->mean_f;
    for (int i = 0; i < 8 * NB; i++) out[i] = TKB_PX_FMAF(out[i], s, m);
  }
}

/* The table rounded to a 2-byte dtype (bfloat16 or float16), its magnitudes: rounding
 * -z gives z's bits with the sign set (test_random checks every entry), so a plain draw
 * of those dtypes is one 16-bit lookup and an or, with no float32 in between
 * (bench_init --dtype bfloat16: 0.63 ns per element per thread, 0.90 through float32).
 * Built once per process, on first use. */
static uint16_t n16_bf16[TKB_NORMAL16_ENTRIES], n16_f16[TKB_NORMAL16_ENTRIES];
static pthread_once_t n16_once[2] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
static void n16_build_bf16(void) {
  tkb_convert(tkb__normal16_table, TKB_FLOAT32, n16_bf16, TKB_BFLOAT16, TKB_NORMAL16_ENTRIES);
}
static void n16_build_f16(void) {
  tkb_convert(tkb__normal16_table, TKB_FLOAT32, n16_f16, TKB_FLOAT16, TKB_NORMAL16_ENTRIES);
}

static const uint16_t *n16_rounded(tkb_dtype dt) {
  if (dt == TKB_BFLOAT16) {
    pthread_once(&n16_once[0], n16_build_bf16);
    return n16_bf16;
  }
  pthread_once(&n16_once[1], n16_build_f16);
  return n16_f16;
}

/* DRAW_NORMAL16 without an affine map, 2-byte dtypes: elements [off, off + n) of the
 * block's 8 NB, written as the dtype's bits. */
/* Scalar: GCC's vectorization of the lookups (emulated gathers, as -mtune=znver4 avoids
 * the gather instruction) made it slower: 0.70 against 0.63 ns per element per thread
 * (bench_init --dtype bfloat16). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
static void gen_n16_rounded(const fill_plan *p, uint64_t c0, const uint16_t *restrict t,
                            int64_t off, int64_t n, uint16_t *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  _Alignas(64) uint16_t v[8 * NB];
  philox_block(p, c0, w);
  static const int region[4] = {0, 2 * NB, NB, 3 * NB};
  uint16_t *dst = off == 0 && n == 8 * NB ? out : v;
  for (int j = 0; j < NB; j++)
    for (int k = 0; k < 4; k++) {
      const tkb_px_u32 x = w[region[k] + j];
      dst[8 * j + 2 * k] = (uint16_t)(t[x & 0x7fffu] | (x & 0x8000u));
      dst[8 * j + 2 * k + 1] = (uint16_t)(t[(x >> 16) & 0x7fffu] | (x >> 16 & 0x8000u));
    }
  if (dst == v) memcpy(out, v + off, (size_t)n * 2);
}

/* DRAW_NORMAL64 / DRAW_UNIFORM64: 2 NB doubles in element order (element 2j + h
 * from the 64-bit word W_h of counter j: W_0 = w0 | w1 << 32, W_1 = w2 | w3 << 32). */
static void gen_f64(const fill_plan *p, uint64_t c0, double *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  _Alignas(64) tkb_px_u64 x[2 * NB]; /* x[h NB + j] = W_h of counter j */
  philox_block(p, c0, w);
  for (int j = 0; j < NB; j++) {
    x[j] = w[j] | (tkb_px_u64)w[2 * NB + j] << 32;
    x[NB + j] = w[NB + j] | (tkb_px_u64)w[3 * NB + j] << 32;
  }
  if (p->draw == DRAW_NORMAL64) {
    for (int j = 0; j < NB; j++) {
      tkb_px_f64x2 z = tkb_px_box_muller(x[j], x[NB + j]);
      out[2 * j] = z.a;
      out[2 * j + 1] = z.b;
    }
    if (p->affine) {
      const double s = p->std_d, m = p->mean_d;
      for (int i = 0; i < 2 * NB; i++) out[i] = TKB_PX_FMA(out[i], s, m);
    }
  } else {
    const double lo = p->lo_d, hi = p->hi_d, mn = p->mn_d, mx = p->mx_d;
    for (int j = 0; j < NB; j++) {
      out[2 * j] = tkb_px_lerp_clamp(tkb_px_u01(x[j]), lo, hi, mn, mx);
      out[2 * j + 1] = tkb_px_lerp_clamp(tkb_px_u01(x[NB + j]), lo, hi, mn, mx);
    }
  }
}

/* DRAW_RANGE32 (4 NB values) / DRAW_RANGE64 (2 NB values), in element order. */
static void gen_int(const fill_plan *p, uint64_t c0, int64_t *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  philox_block(p, c0, w);
  const uint64_t lo = (uint64_t)p->ilo, width = p->width;
  if (p->draw == DRAW_RANGE32) {
    for (int j = 0; j < NB; j++) {
      out[4 * j + 0] = (int64_t)(lo + tkb_px_range32(w[j], width));
      out[4 * j + 1] = (int64_t)(lo + tkb_px_range32(w[2 * NB + j], width));
      out[4 * j + 2] = (int64_t)(lo + tkb_px_range32(w[NB + j], width));
      out[4 * j + 3] = (int64_t)(lo + tkb_px_range32(w[3 * NB + j], width));
    }
  } else {
    for (int j = 0; j < NB; j++) {
      tkb_px_u64 x0 = w[j] | (tkb_px_u64)w[2 * NB + j] << 32;
      tkb_px_u64 x1 = w[NB + j] | (tkb_px_u64)w[3 * NB + j] << 32;
      out[2 * j] = (int64_t)(lo + tkb_px_range64(x0, width));
      out[2 * j + 1] = (int64_t)(lo + tkb_px_range64(x1, width));
    }
  }
}

/* ------------------------------------------------------------------------------ */
/* Stores: values -> dtype                                                         */
/* ------------------------------------------------------------------------------ */

/* Values -> dtype with tkb_convert (vectorized; floats round through float32, as the
 * header's scalar conversions do; the integers here are already inside the dtype). */
static void store_f32(tkb_dtype dt, const float *restrict v, unsigned char *restrict dst,
                      int64_t n) {
  if (dt == TKB_FLOAT32) memcpy(dst, v, (size_t)n * 4);
  else tkb_convert(v, TKB_FLOAT32, dst, dt, (size_t)n);
}

static void store_int(tkb_dtype dt, const int64_t *restrict v, unsigned char *restrict dst,
                      int64_t n) {
  if (dt == TKB_INT64) memcpy(dst, v, (size_t)n * 8);
  else tkb_convert(v, TKB_INT64, dst, dt, (size_t)n);
}

/* ------------------------------------------------------------------------------ */
/* Driver                                                                          */
/* ------------------------------------------------------------------------------ */

/* Fills elements [s, e) of block b (s, e inside the block) of the array at base. */
static void fill_block(const fill_plan *p, unsigned char *base, int64_t b, int64_t s,
                       int64_t e) {
  const int64_t per_blk = (int64_t)NB * p->per_ctr;
  const int64_t first = b * per_blk;
  const uint64_t c0 = (uint64_t)b * NB;
  unsigned char *dst = base + (size_t)s * p->esize;
  const int64_t off = s - first, n = e - s;
  switch (p->draw) {
  case DRAW_NORMAL32:
  case DRAW_UNIFORM32: {
    if (p->dtype == TKB_FLOAT32 && n == per_blk) {
      gen_f32(p, c0, (float *)(void *)dst);
    } else {
      _Alignas(64) float v[4 * NB];
      gen_f32(p, c0, v);
      store_f32(p->dtype, v + off, dst, n);
    }
  } break;
  case DRAW_NORMAL16: {
    if (!p->affine && (p->dtype == TKB_BFLOAT16 || p->dtype == TKB_FLOAT16)) {
      gen_n16_rounded(p, c0, n16_rounded(p->dtype), off, n, (uint16_t *)(void *)dst);
      break;
    }
    _Alignas(64) float v[8 * NB];
    gen_n16(p, c0, v);
    store_f32(p->dtype, v + off, dst, n);
  } break;
  case DRAW_NORMAL64:
  case DRAW_UNIFORM64: {
    if (n == per_blk) {
      gen_f64(p, c0, (double *)(void *)dst);
    } else {
      _Alignas(64) double v[2 * NB];
      gen_f64(p, c0, v);
      memcpy(dst, v + off, (size_t)n * 8);
    }
  } break;
  case DRAW_RANGE32:
  case DRAW_RANGE64: {
    _Alignas(64) int64_t v[4 * NB];
    gen_int(p, c0, v);
    store_int(p->dtype, v + off, dst, n);
  } break;
  default: break;
  }
}

static void fill_constant(const fill_plan *p, unsigned char *base, int64_t n) {
  const size_t es = p->esize;
  const int64_t chunk = 1 << 16;
  const int64_t nchunk = (n + chunk - 1) / chunk;
  uint16_t c16;
  uint32_t c32;
  uint64_t c64;
  memcpy(&c16, p->cbytes, 2);
  memcpy(&c32, p->cbytes, 4);
  memcpy(&c64, p->cbytes, 8);
#pragma omp parallel for schedule(static) if (nchunk > 1)
  for (int64_t c = 0; c < nchunk; c++) {
    int64_t s = c * chunk, e = s + chunk < n ? s + chunk : n;
    unsigned char *d = base + (size_t)s * es;
    int64_t m = e - s;
    if (es == 1) {
      memset(d, p->cbytes[0], (size_t)m);
    } else if (es == 2) {
      for (int64_t i = 0; i < m; i++) memcpy(d + 2 * i, &c16, 2);
    } else if (es == 4) {
      for (int64_t i = 0; i < m; i++) memcpy(d + 4 * i, &c32, 4);
    } else {
      for (int64_t i = 0; i < m; i++) memcpy(d + 8 * i, &c64, 8);
    }
  }
}

static tkb_status run_callback(tkb_array *a, const tkb_init *init, uint64_t seed,
                               uint64_t stream, const tkb_args *call) {
  tkb_init_ctx ctx = {.seed = seed, .stream = stream, .call = call, .user = init->user};
  tkb__clear_error();
  tkb_status st = init->callback(a, &ctx);
  if (st != TKB_OK && tkb_last_error()[0] == '\0')
    return tkb_set_error(st, "init CALLBACK returned %s without a message",
                         tkb_status_name(st));
  return st;
}

tkb_status tkb__fill_cpu(tkb_array *a, const tkb_init *init, uint64_t seed,
                         uint64_t stream) {
  fill_plan p;
  tkb_status st = tkb__make_fill_plan(a, init, seed, stream, &p);
  if (st != TKB_OK) return st;
  if (init && init->kind == TKB_INIT_CALLBACK)
    return run_callback(a, init, seed, stream, NULL);
  const int64_t n = a->numel;
  if (n == 0) return TKB_OK;
  unsigned char *base = a->data;
  if (p.draw == DRAW_CONSTANT) {
    fill_constant(&p, base, n);
    return TKB_OK;
  }
  const int64_t per_blk = (int64_t)NB * p.per_ctr;
  const int64_t nblk = (n + per_blk - 1) / per_blk;
  /* Any split of the blocks gives the same bytes: each block depends only on its
   * counters. Chunks of 16 blocks (32 KiB of float32) handed out dynamically, so a
   * thread that loses its core to another process does not hold up the others. */
#pragma omp parallel for schedule(dynamic, 16) if (nblk >= PARALLEL_MIN_BLOCKS)
  for (int64_t b = 0; b < nblk; b++) {
    int64_t s = b * per_blk, e = s + per_blk < n ? s + per_blk : n;
    fill_block(&p, base, b, s, e);
  }
  return TKB_OK;
}

/* A user's callback writes host memory through a->data, which on an accelerator is a
 * device handle: it fills a cpu array of the same spec, whose bytes are then copied
 * onto the device. */
static tkb_status run_callback_on_device(tkb_array *a, const tkb_init *init, uint64_t seed,
                                         uint64_t stream, const tkb_args *call) {
  tkb_array *h = NULL;
  tkb_status st = tkb_array_new(tkb__cpu_device(), &a->spec, &h);
  if (!st) st = run_callback(h, init, seed, stream, call);
  if (!st) st = tkb_array_copy_into(a, h);
  tkb_array_free(h);
  return st;
}

tkb_status tkb__fill_call(tkb_array *a, const tkb_init *init, uint64_t seed,
                          uint64_t stream, const tkb_args *call) {
  tkb__clear_error();
  fill_plan p;
  tkb_status st = tkb__make_fill_plan(a, init, seed, stream, &p);
  if (st != TKB_OK) return st;
  if (init && init->kind == TKB_INIT_CALLBACK)
    return tkb__host_array(a) ? run_callback(a, init, seed, stream, call)
                              : run_callback_on_device(a, init, seed, stream, call);
  if (a->numel == 0) return TKB_OK;
  if (!a->device) return tkb__fill_cpu(a, init, seed, stream);
  if (!a->device->backend || !a->device->backend->fill)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "device \"%s\" cannot fill arrays (its backend has no fill)",
                         a->device->name);
  return a->device->backend->fill(a, init, seed, stream);
}

tkb_status tkb_fill(tkb_array *a, const tkb_init *init, uint64_t seed, uint64_t stream) {
  return tkb__fill_call(a, init, seed, stream, NULL);
}

void tkb_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  tkb_px_u32x4 c = {ctr[0], ctr[1], ctr[2], ctr[3]};
  tkb_px_u32x4 r = tkb_px_philox(c, key[0], key[1]);
  out[0] = r.x0;
  out[1] = r.x1;
  out[2] = r.x2;
  out[3] = r.x3;
}
