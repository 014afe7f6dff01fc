/*
 * cpu.c - tkb_op_normalization: the fast CPU implementation of layer norm and RMS norm
 * (math, residuals and layout in norm.h).
 *
 * Math is done in float32 (float64 for float64 x): bfloat16 is widened on load and
 * rounded on store inside the kernels' loops (bit for bit as tkb_bf16_to_f32 /
 * tkb_f32_to_bf16), float16 through a float32 scratch copy (tkb_convert). The mean and
 * variance come from one pass, shifted by the lane's first element (see
 * NORM_DEFINE_ROWS), then a second pass writes y: x is read twice, the second time
 * from cache, and y written once. Where the CPU has AVX512-BF16, bfloat16 y is rounded
 * by vcvtneps2bf16 (norm_bf16_out_fast: the same bits, fewer instructions).
 *
 * Lanes (normalized rows) are processed in work items of up to c lanes:
 *   axis last (inner == 1): an item is c consecutive rows, computed NORM_ROWS rows at
 *     once (norm_rows_*: the same arithmetic per row, the rows' chains of additions
 *     interleaved), then one at a time; the sums over a row use 16 interleaved partial
 *     sums. float32/float64/bfloat16 rows are read and written in place.
 *   axis not last (inner > 1): an item is c consecutive i of one o: n runs of c
 *     contiguous elements (row j, lane r), far apart; every loop runs over contiguous
 *     lanes with one accumulator per lane, reading x (and writing y) in place, and
 *     prefetching a few runs ahead (NORM_PREFETCH_RUNS). float16 items go through the
 *     scratch block as xs[j * c + r]. bfloat16 items (with AVX512-BF16) are sized by
 *     NORM_STREAM_BYTES and write y by non-temporal stores.
 * Determinism: each lane's reductions run in a fixed order inside one thread, so y,
 * mean, rstd and dx do not depend on the thread count. dscale/doffset (sums over all
 * lanes) are summed per group of items, with a group count fixed by the shape, and the
 * groups' partial sums are added in group order.
 *
 * Workspaces. A call allocates nothing: the prepare hook allocates (tkb_device_alloc, so
 * peak memory counts them) one scratch block per thread for omp_get_max_threads()
 * threads at prepare time (one block when the shape is too small to split), sized for
 * either pass (the forward's NORM_ROWS rows or n x c block, the vjp's x and dy blocks),
 * scale and offset in the math type, and the vjp's per-group partial sums of
 * dscale/doffset. They serve every mode, whatever tkb_args.mode says (so hooks called
 * directly work in any order); sizing them by mode would save under 1 MiB on the
 * alphafold shapes. A call runs on at most the prepared thread count (num_threads).
 * The hooks refuse a NULL state, or a state prepared for other shapes.
 */
#include "norm.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_thread_num(void) { return 0; }
#endif

/* Lanes per work item at most (sizes the per-lane arrays on the stack). */
#define NORM_MAX_LANES 256
/* Target size of one per-thread scratch block (n * c elements). */
#define NORM_SCRATCH_BYTES ((int64_t)128 * 1024)
/* Groups of items whose dscale/doffset partial sums are kept apart (vjp). */
#define NORM_MAX_GROUPS 128
/* Rows the forward pass computes at once when the axis is last (norm_rows_*). */
#define NORM_ROWS 4
/* Elements of x below which a call runs on one thread (a parallel region would cost
 * more than it saves; the results are the same either way). */
#define NORM_MIN_PARALLEL ((int64_t)32768)
/* Forward pass, axis not last, bfloat16 x with AVX512-BF16 (NORM_LANES_NT): an item is
 * as many lanes as keep its block (n runs) near NORM_STREAM_BYTES (in L2 for the output
 * pass's reread of x), NORM_STREAM_MIN_LANES..NORM_STREAM_MAX_LANES, and y goes out by
 * non-temporal stores (no read of y's lines before they are written, no eviction of x).
 * Measured on the alphafold axis-0 shape (2 threads, medians of alternating runs):
 * 4.58 -> 3.76 ms in the quiet VM state, 9.19 -> 4.74 ms in the slow one. Longer runs
 * (1024 lanes = 2 KiB, 256 KiB blocks) were no better (about 3.7 and 5.2 ms): the
 * non-temporal stores are the gain; long runs without them were slower than short ones
 * in the quiet state (x and y's lines compete for L2). */
#define NORM_STREAM_BYTES ((int64_t)64 * 1024)
#define NORM_STREAM_MIN_LANES ((int64_t)16)
#define NORM_STREAM_MAX_LANES ((int64_t)8192)
/* Vectorize a loop whose iterations are independent (lanes or elements), whatever the
 * optimization level; each iteration's arithmetic, and so its result, is unchanged. */
#define NORM_SIMD _Pragma("omp simd")

/* ------------------------------------------------------------------------------ */
/* Work split and workspaces (prepare / release)                                   */
/* ------------------------------------------------------------------------------ */

/* The prepared state: what the workspaces were sized for, and the workspaces. */
typedef struct cpu_state {
  /* the call it was prepared for; a call must match (cpu_check_state) */
  tkb_spec x;
  int axis;
  bool has_scale, has_offset;
  /* work split: a function of the shape only, never of the thread count */
  int64_t c;      /* lanes per work item */
  int64_t items;  /* work items */
  int64_t groups; /* vjp: groups of items with their own dscale/doffset partial sums */
  bool parallel;  /* big enough for a parallel region */
  int64_t fc;     /* forward, axis not last, x in place: lanes per item (0: axis last) */
  int64_t fitems; /* its items */
  int threads;    /* scratch blocks: the most threads a call runs on */
  /* one device allocation, carved into: */
  tkb_device *dev;
  void *base;
  size_t bytes;
  char *scratch;         /* threads blocks, thread_stride bytes apart */
  size_t thread_stride;  /* elements of T: axis last max(NORM_ROWS, 2) * n (forward rows;
                            vjp x and dy rows), else max(2 * n * c (vjp), 4 * fc
                            (forward lane arrays)); 64-byte rounded */
  void *scale_v;         /* [n] of T: scale widened (NULL when None) */
  void *offset_v;        /* [n] of T: offset widened (NULL when None) */
  void *dscale_part;     /* [groups, n] of T (NULL when scale is None) */
  void *doffset_part;    /* [groups, n] of T (NULL when offset is None) */
} cpu_state;

/* Lanes per item: as many as keep one scratch block near NORM_SCRATCH_BYTES. */
static void cpu_split(const norm_plan *p, cpu_state *s) {
  int64_t elem = p->f64 ? 8 : 4;
  int64_t c = p->n > 0 ? NORM_SCRATCH_BYTES / (p->n * elem) : NORM_MAX_LANES;
  if (c > NORM_MAX_LANES) c = NORM_MAX_LANES;
  if (c < 1) c = 1;
  int64_t span = p->inner == 1 ? p->outer : p->inner; /* lanes one item may cover */
  if (c > span) c = span;
  s->c = c;
  if (c == 0) s->items = 0;
  else if (p->inner == 1) s->items = (p->outer + c - 1) / c;
  else s->items = p->outer * ((p->inner + c - 1) / c);
  s->groups = s->items < NORM_MAX_GROUPS ? s->items : NORM_MAX_GROUPS;
  /* forward splits over items, the vjp over groups: both > 1 when items > 1 */
  s->parallel = s->items > 1 && p->x_numel >= NORM_MIN_PARALLEL;
  /* forward items of bfloat16 x, axis not last (NORM_STREAM_BYTES; not used by the vjp) */
  s->fc = s->fitems = 0;
  if (p->inner > 1 && c > 0 && p->x.dtype == TKB_BFLOAT16) {
    int64_t fc = NORM_STREAM_BYTES / (p->n * 2);
    if (fc > NORM_STREAM_MAX_LANES) fc = NORM_STREAM_MAX_LANES;
    if (fc < NORM_STREAM_MIN_LANES) fc = NORM_STREAM_MIN_LANES;
    if (fc > p->inner) fc = p->inner;
    s->fc = fc;
    s->fitems = p->outer * ((p->inner + fc - 1) / fc);
  }
}

/* Threads for a call: the current OpenMP setting, at most the prepared count. */
static int cpu_threads(const cpu_state *s) {
  int t = omp_get_max_threads();
  return t < s->threads ? t : s->threads;
}

static void cpu_release(void *state) {
  cpu_state *s = state;
  if (!s) return;
  tkb_device_free(s->dev, s->base, s->bytes);
  free(s);
}

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

static tkb_status cpu_prepare(const tkb_args *a, void **state) {
  norm_plan p;
  tkb_status st = tkb__norm_plan_make(a, &p);
  if (st != TKB_OK) return st;
  cpu_state *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "normalization (cpu): out of memory");
  s->x = p.x;
  s->axis = p.axis;
  s->has_scale = p.scale != NULL;
  s->has_offset = p.offset != NULL;
  s->dev = a->device;
  cpu_split(&p, s);
  s->threads = s->parallel ? omp_get_max_threads() : 1;
  if (s->threads < 1) s->threads = 1;

  /* Sizes in elements of the math type (in double: they cannot overflow there). */
  const double es = p.f64 ? 8.0 : 4.0, n = (double)p.n;
  const double rows = NORM_ROWS > 2 ? NORM_ROWS : 2; /* forward rows, vjp x and dy rows */
  double block = p.inner == 1 ? rows * n : 2.0 * n * (double)s->c;
  if (4.0 * (double)s->fc > block) block = 4.0 * (double)s->fc; /* shift, s1, mean, rstd */
  const double vec = n, part = (double)s->groups * n;
  const double total = (double)s->threads * (block * es + 64) + 2 * (vec * es + 64) +
                       2 * (part * es + 64);
  if (total > (double)(SIZE_MAX / 2)) {
    free(s);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                         "normalization (cpu): workspaces of %.3g bytes for x of %lld "
                         "elements do not fit in memory", total, (long long)p.x_numel);
  }
  s->thread_stride = round64((size_t)block * (size_t)es);
  const size_t vec_bytes = round64((size_t)vec * (size_t)es);
  const size_t part_bytes = round64((size_t)part * (size_t)es);
  s->bytes = (size_t)s->threads * s->thread_stride + (s->has_scale ? vec_bytes : 0) +
             (s->has_offset ? vec_bytes : 0) + (s->has_scale ? part_bytes : 0) +
             (s->has_offset ? part_bytes : 0);
  st = tkb_device_alloc(s->dev, s->bytes, &s->base);
  if (st != TKB_OK) {
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                       "normalization (cpu): cannot allocate %.1f MiB of workspaces (%d "
                       "threads' scratch of %zu bytes, scale/offset, vjp partial sums)",
                       (double)s->bytes / 1048576.0, s->threads, s->thread_stride);
    free(s);
    return st;
  }
  char *cur = s->base;
  s->scratch = cur;
  cur += (size_t)s->threads * s->thread_stride;
  if (s->has_scale) {
    s->scale_v = cur;
    s->dscale_part = cur + vec_bytes;
    cur += vec_bytes + part_bytes;
  }
  if (s->has_offset) {
    s->offset_v = cur;
    s->doffset_part = cur + vec_bytes;
  }
  *state = s;
  return TKB_OK;
}

/* What one gather/scatter moves: `runs` runs of `len` contiguous elements, run q at
 * base + q * stride in x (and y, dy, dx) and at q * len in the scratch. */
typedef struct norm_block {
  int64_t base, stride;
  int64_t runs, len;
} norm_block;

/* Work item k: lanes [*lane0, *lane0 + *c). For axis not last, *b is its block (n runs
 * of c elements, one run per row j). */
static void norm_item(const norm_plan *p, const cpu_state *s, int64_t k, int64_t *lane0,
                      int64_t *c, norm_block *b) {
  if (p->inner == 1) {
    /* c consecutive rows of n contiguous elements (see norm_row_block) */
    *lane0 = k * s->c;
    *c = p->outer - *lane0 < s->c ? p->outer - *lane0 : s->c;
    *b = (norm_block){0};
  } else {
    /* c consecutive positions i of one outer index o */
    int64_t per_outer = (p->inner + s->c - 1) / s->c;
    int64_t o = k / per_outer, i0 = (k % per_outer) * s->c;
    *lane0 = o * p->inner + i0;
    *c = p->inner - i0 < s->c ? p->inner - i0 : s->c;
    *b = (norm_block){.base = o * p->n * p->inner + i0, .stride = p->inner, .runs = p->n,
                      .len = *c};
  }
}

/* Forward item k of fc lanes (axis not last, bfloat16: see NORM_STREAM_BYTES): lanes
 * [*lane0, *lane0 + *c) of one outer index, block *b of n runs of *c elements. */
static void norm_stream_item(const norm_plan *p, const cpu_state *s, int64_t k,
                             int64_t *lane0, int64_t *c, norm_block *b) {
  int64_t per_outer = (p->inner + s->fc - 1) / s->fc;
  int64_t o = k / per_outer, i0 = (k % per_outer) * s->fc;
  *lane0 = o * p->inner + i0;
  *c = p->inner - i0 < s->fc ? p->inner - i0 : s->fc;
  *b = (norm_block){.base = o * p->n * p->inner + i0, .stride = p->inner, .runs = p->n,
                    .len = *c};
}

/* Row `lane` of x when the axis is last: one run of n elements. */
static norm_block norm_row_block(const norm_plan *p, int64_t lane) {
  return (norm_block){.base = lane * p->n, .stride = 0, .runs = 1, .len = p->n};
}

/* Rows [lane, lane + rows) of x when the axis is last: one run of rows * n elements (one
 * conversion call for the narrow dtypes; float32/float64 rows of the forward pass are not
 * copied at all: see norm_forward). */
static norm_block norm_rows_block(const norm_plan *p, int64_t lane, int64_t rows) {
  return (norm_block){.base = lane * p->n, .stride = 0, .runs = 1, .len = rows * p->n};
}

/* ------------------------------------------------------------------------------ */
/* Moving blocks between arrays and the float scratch                             */
/* ------------------------------------------------------------------------------ */

/* With the axis not last, a block's n runs (of c elements, x.shape[axis+1:] apart) are
 * short and far apart: too many streams for the hardware prefetchers, so each run would
 * start with a wait for memory. The run NORM_PREFETCH_RUNS ahead is prefetched while one
 * is moved (measured: 4 is as good as 8 or 16, and about 20% faster than none on the
 * alphafold axis-0 shape). */
#define NORM_PREFETCH_RUNS 4
static inline void norm_prefetch_read(const char *p, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off, 0, 3);
}
static inline void norm_prefetch_write(char *p, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off, 1, 3);
}

/* dst[q * len + t] = float32 value of element (q, t) of the block, for runs q0 <= q < q1;
 * src holds x's dtype
 * (float32, bfloat16 or float16). Narrow runs are widened by tkb_convert, the library's
 * bulk (vectorized) form of tkb_bf16_to_f32 / tkb_f16_to_f32; it cannot fail here: the
 * dtypes are valid and the buffers disjoint. */
static void norm_gather_f32(float *dst, const void *src, tkb_dtype dt, const norm_block *b,
                            int64_t q0, int64_t q1) {
  const size_t esize = tkb_dtype_size(dt);
  for (int64_t q = q0; q < q1; q++) {
    const char *s = (const char *)src + (size_t)(b->base + q * b->stride) * esize;
    if (q + NORM_PREFETCH_RUNS < b->runs)
      norm_prefetch_read(s + (size_t)(NORM_PREFETCH_RUNS * b->stride) * esize,
                         (size_t)b->len * esize);
    float *d = dst + q * b->len;
    if (dt == TKB_FLOAT32) memcpy(d, s, (size_t)b->len * sizeof(float));
    else tkb_convert(s, dt, d, TKB_FLOAT32, (size_t)b->len);
  }
}

/* Element (q, t) of the block = src[q * len + t] rounded to dst's dtype (float32,
 * bfloat16 or float16; tkb_convert rounds as tkb_f32_to_bf16 / tkb_f32_to_f16). */
static void norm_scatter_f32(void *dst, tkb_dtype dt, const float *src, const norm_block *b,
                             int64_t q0, int64_t q1) {
  const size_t esize = tkb_dtype_size(dt);
  for (int64_t q = q0; q < q1; q++) {
    char *d = (char *)dst + (size_t)(b->base + q * b->stride) * esize;
    if (q + NORM_PREFETCH_RUNS < b->runs)
      norm_prefetch_write(d + (size_t)(NORM_PREFETCH_RUNS * b->stride) * esize,
                          (size_t)b->len * esize);
    const float *s = src + q * b->len;
    if (dt == TKB_FLOAT32) memcpy(d, s, (size_t)b->len * sizeof(float));
    else tkb_convert(s, TKB_FLOAT32, d, dt, (size_t)b->len);
  }
}

/* The float64 versions: x is float64, nothing to convert. */
static void norm_gather_f64(double *dst, const void *src, tkb_dtype dt, const norm_block *b,
                            int64_t q0, int64_t q1) {
  (void)dt;
  for (int64_t q = q0; q < q1; q++) {
    const double *s = (const double *)src + b->base + q * b->stride;
    if (q + NORM_PREFETCH_RUNS < b->runs)
      norm_prefetch_read((const char *)(s + NORM_PREFETCH_RUNS * b->stride),
                         (size_t)b->len * sizeof(double));
    memcpy(dst + q * b->len, s, (size_t)b->len * sizeof(double));
  }
}

static void norm_scatter_f64(void *dst, tkb_dtype dt, const double *src, const norm_block *b,
                             int64_t q0, int64_t q1) {
  (void)dt;
  for (int64_t q = q0; q < q1; q++) {
    double *d = (double *)dst + b->base + q * b->stride;
    if (q + NORM_PREFETCH_RUNS < b->runs)
      norm_prefetch_write((char *)(d + NORM_PREFETCH_RUNS * b->stride),
                          (size_t)b->len * sizeof(double));
    memcpy(d, src + q * b->len, (size_t)b->len * sizeof(double));
  }
}

/* ------------------------------------------------------------------------------ */
/* Row kernels (axis last)                                                         */
/* ------------------------------------------------------------------------------ */

/* bfloat16 <-> float32 bit for bit as tkb_bf16_to_f32 / tkb_f32_to_bf16 (round to
 * nearest even; a NaN stays a quiet NaN with its sign), inline so that the row kernels
 * convert in their vectorized loops: a bfloat16 row is read and written in place, with
 * no float32 copy of x or y. */
static inline float norm_bf16_widen(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint16_t norm_bf16_round(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16; /* no wrap below NaN */
  uint32_t nan = ((u >> 16) & 0x8000u) | 0x7fc0u;
  return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : r);
}
/* y[k] = round_bf16((widen(x[k]) - m) * rs * scale[k] + offset[k]) for k < n (scale,
 * offset may be NULL: factor and term left out), with AVX512-BF16: the same float32
 * operations, in the same order, 16 lanes at a time, rounded by vcvtneps2bf16, which
 * equals norm_bf16_round except on NaN and denormal inputs (it keeps a NaN's payload
 * and flushes denormals to zero): a vector holding either is rounded by
 * norm_bf16_round instead. Returns the count of elements done (the rest: caller). */
#if defined(__AVX512BF16__) && defined(__AVX512VL__) && defined(__AVX512BW__)
#include <immintrin.h>
static inline int64_t norm_bf16_out_fast(const uint16_t *x, uint16_t *y, int64_t n, float m,
                                         float rs, const float *scale, const float *offset) {
  const __m512 vm = _mm512_set1_ps(m), vr = _mm512_set1_ps(rs);
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    __m512i xi = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + k)));
    __m512 v = _mm512_castsi512_ps(_mm512_slli_epi32(xi, 16));
    v = _mm512_mul_ps(_mm512_sub_ps(v, vm), vr);
    if (scale) v = _mm512_mul_ps(v, _mm512_loadu_ps(scale + k));
    if (offset) v = _mm512_add_ps(v, _mm512_loadu_ps(offset + k));
    /* QNaN 0x01, SNaN 0x80, denormal 0x20 */
    if (_mm512_fpclass_ps_mask(v, 0xa1)) {
      float t[16];
      _mm512_storeu_ps(t, v);
      for (int q = 0; q < 16; q++) y[k + q] = norm_bf16_round(t[q]);
    } else {
      _mm256_storeu_si256((__m256i *)(y + k), (__m256i)_mm512_cvtneps_pbh(v));
    }
  }
  return k;
}
#define NORM_BF16_OUT_FAST(x, y, n, m, rs, scale, offset)                                      \
  norm_bf16_out_fast(x, y, n, m, rs, scale, offset)

/* The same for one row j of a lanes block (axis not last): y[r] = round_bf16((widen(x[r]) -
 * mean[r]) * rstd[r] * s + o) for r < c (s when has_scale, o when has_offset). */
static inline int64_t norm_bf16_lanes_out_fast(const uint16_t *x, uint16_t *y, int64_t c,
                                               const float *mean, const float *rstd,
                                               bool has_scale, float s, bool has_offset,
                                               float o) {
  const __m512 vs = _mm512_set1_ps(s), vo = _mm512_set1_ps(o);
  int64_t k = 0;
  for (; k + 16 <= c; k += 16) {
    __m512i xi = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + k)));
    __m512 v = _mm512_castsi512_ps(_mm512_slli_epi32(xi, 16));
    v = _mm512_mul_ps(_mm512_sub_ps(v, _mm512_loadu_ps(mean + k)), _mm512_loadu_ps(rstd + k));
    if (has_scale) v = _mm512_mul_ps(v, vs);
    if (has_offset) v = _mm512_add_ps(v, vo);
    if (_mm512_fpclass_ps_mask(v, 0xa1)) {
      float t[16];
      _mm512_storeu_ps(t, v);
      for (int q = 0; q < 16; q++) y[k + q] = norm_bf16_round(t[q]);
    } else {
      _mm256_storeu_si256((__m256i *)(y + k), (__m256i)_mm512_cvtneps_pbh(v));
    }
  }
  return k;
}
#define NORM_BF16_LANES_OUT_FAST(x, y, c, mean, rstd, hs, s, ho, o)                            \
  norm_bf16_lanes_out_fast(x, y, c, mean, rstd, hs, s, ho, o)
/* The same, y written with non-temporal stores where y is 32-byte aligned (bfloat16
 * forward items, axis not last: y bypasses the cache, so the item's x block stays there
 * for the output pass, and y's lines are not read before they are written); the caller
 * ends the item with NORM_SFENCE. */
static inline int64_t norm_bf16_lanes_out_nt(const uint16_t *x, uint16_t *y, int64_t c,
                                               const float *mean, const float *rstd,
                                               bool has_scale, float s, bool has_offset,
                                               float o) {
  if ((uintptr_t)y % 32 != 0)
    return norm_bf16_lanes_out_fast(x, y, c, mean, rstd, has_scale, s, has_offset, o);
  const __m512 vs = _mm512_set1_ps(s), vo = _mm512_set1_ps(o);
  int64_t k = 0;
  for (; k + 16 <= c; k += 16) {
    __m512i xi = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + k)));
    __m512 v = _mm512_castsi512_ps(_mm512_slli_epi32(xi, 16));
    v = _mm512_mul_ps(_mm512_sub_ps(v, _mm512_loadu_ps(mean + k)), _mm512_loadu_ps(rstd + k));
    if (has_scale) v = _mm512_mul_ps(v, vs);
    if (has_offset) v = _mm512_add_ps(v, vo);
    if (_mm512_fpclass_ps_mask(v, 0xa1)) {
      float t[16];
      uint16_t u[16];
      _mm512_storeu_ps(t, v);
      for (int q = 0; q < 16; q++) u[q] = norm_bf16_round(t[q]);
      _mm256_stream_si256((__m256i *)(y + k), _mm256_loadu_si256((const __m256i *)u));
    } else {
      _mm256_stream_si256((__m256i *)(y + k), (__m256i)_mm512_cvtneps_pbh(v));
    }
  }
  return k;
}
#define NORM_BF16_LANES_OUT_NT(x, y, c, mean, rstd, hs, s, ho, o)                              \
  norm_bf16_lanes_out_nt(x, y, c, mean, rstd, hs, s, ho, o)
#define NORM_SFENCE() _mm_sfence()
#define NORM_LANES_NT 1
#else
#define NORM_BF16_OUT_FAST(x, y, n, m, rs, scale, offset) ((int64_t)0)
#endif
#define NORM_OUT_NONE(x, y, n, m, rs, scale, offset) ((int64_t)0)
#ifndef NORM_BF16_LANES_OUT_FAST
#define NORM_BF16_LANES_OUT_FAST(x, y, c, mean, rstd, hs, s, ho, o) ((int64_t)0)
#define NORM_BF16_LANES_OUT_NT(x, y, c, mean, rstd, hs, s, ho, o) ((int64_t)0)
#define NORM_SFENCE() ((void)0)
#define NORM_LANES_NT 0
#endif
#define NORM_LANES_OUT_NONE(x, y, c, mean, rstd, hs, s, ho, o) ((int64_t)0)

#define NORM_LD(p, i) ((p)[i])
#define NORM_ST(p, i, v) ((p)[i] = (v))
#define NORM_LD_BF16(p, i) norm_bf16_widen((p)[i])
#define NORM_ST_BF16(p, i, v) ((p)[i] = norm_bf16_round(v))

/* Forward pass of nr rows (nr <= NORM_ROWS; a constant where it is inlined), row r's n
 * contiguous elements at x + r * n and its y at y + r * n (y may be x). XT is the
 * storage type (LD widens to the math type T, ST rounds from it); the arithmetic is
 * the same for every XT, so a bfloat16 row's y is the float32 row's y rounded.
 * The mean and variance come from one pass, shifted by the row's first element
 * (shift = x[0], 0 for RMS norm), with d[j] = x[j] - shift:
 *   s1 = sum_j d[j],  s2 = sum_j d[j]^2   (16 interleaved partial sums, added in a
 *                                           fixed order, as norm_sum)
 *   mean = shift + s1 / n   (0 for RMS norm: s1 is not used)
 *   var  = (s2 - s1^2 / n) / n   (clamped at 0),  rstd = 1 / sqrt(var + eps)
 * The shift keeps s2 - s1^2/n from cancelling when the mean is large next to the
 * spread (x[0] is within a few standard deviations of the mean). The rows' chains of
 * additions are interleaved in each loop so that they overlap. */
#define NORM_DEFINE_ROWS(T, XT, NAME, SQRT, LD, ST, OUT)                                       \
  static inline __attribute__((always_inline)) void NAME(                                      \
      const XT *x, XT *y, int64_t n, const int nr, const T *scale, const T *offset, T eps,     \
      bool subtract_mean, T *mean_out, T *rstd_out) {                                          \
    T shift[NORM_ROWS], mean[NORM_ROWS], rstd[NORM_ROWS];                                      \
    T s1[NORM_ROWS][16], s2[NORM_ROWS][16];                                                    \
    for (int r = 0; r < nr; r++) {                                                             \
      shift[r] = subtract_mean ? LD(x, r * n) : (T)0;                                          \
      for (int q = 0; q < 16; q++) s1[r][q] = s2[r][q] = 0;                                    \
    }                                                                                          \
    /* s1 += d, s2 += d^2 with d = x[j] - shift */                                             \
    int64_t j = 0;                                                                             \
    for (; j + 16 <= n; j += 16)                                                               \
      for (int r = 0; r < nr; r++)                                                             \
        NORM_SIMD for (int q = 0; q < 16; q++) {                                               \
          T d = LD(x, r * n + j + q) - shift[r];                                               \
          s1[r][q] += d;                                                                       \
          s2[r][q] += d * d;                                                                   \
        }                                                                                      \
    for (int r = 0; r < nr; r++) {                                                             \
      for (int64_t t = j, q = 0; t < n; t++, q++) {                                            \
        T d = LD(x, r * n + t) - shift[r];                                                     \
        s1[r][q] += d;                                                                         \
        s2[r][q] += d * d;                                                                     \
      }                                                                                        \
      for (int w = 8; w >= 1; w /= 2)                                                          \
        for (int q = 0; q < w; q++) {                                                          \
          s1[r][q] += s1[r][q + w];                                                            \
          s2[r][q] += s2[r][q + w];                                                            \
        }                                                                                      \
      T sum = subtract_mean ? s1[r][0] : (T)0;                                                 \
      T var = (s2[r][0] - sum * sum / (T)n) / (T)n;                                            \
      rstd[r] = (T)1 / SQRT((var > 0 ? var : (T)0) + eps);                                     \
      mean[r] = shift[r] + sum / (T)n;                                                         \
    }                                                                                          \
    /* y[j] = (x[j] - mean) * rstd * scale[j] + offset[j], row by row */                      \
    for (int r = 0; r < nr; r++) {                                                             \
      const XT *xr = x + r * n;                                                                \
      XT *yr = y + r * n;                                                                      \
      const T m = mean[r], rs = rstd[r];                                                       \
      const int64_t k0 = OUT(xr, yr, n, m, rs, scale, offset); /* a fast path did [0, k0) */ \
      if (scale && offset)                                                                     \
        NORM_SIMD for (int64_t k = k0; k < n; k++)                                             \
          ST(yr, k, (LD(xr, k) - m) * rs * scale[k] + offset[k]);                              \
      else if (scale)                                                                          \
        NORM_SIMD for (int64_t k = k0; k < n; k++) ST(yr, k, (LD(xr, k) - m) * rs * scale[k]); \
      else if (offset)                                                                         \
        NORM_SIMD for (int64_t k = k0; k < n; k++) ST(yr, k, (LD(xr, k) - m) * rs + offset[k]); \
      else                                                                                     \
        NORM_SIMD for (int64_t k = k0; k < n; k++) ST(yr, k, (LD(xr, k) - m) * rs);            \
      mean_out[r] = mean[r];                                                                   \
      rstd_out[r] = rstd[r];                                                                   \
    }                                                                                          \
  }

NORM_DEFINE_ROWS(float, float, norm_rows_f32, sqrtf, NORM_LD, NORM_ST, NORM_OUT_NONE)
NORM_DEFINE_ROWS(float, uint16_t, norm_rows_bf16, sqrtf, NORM_LD_BF16, NORM_ST_BF16,
                 NORM_BF16_OUT_FAST)
NORM_DEFINE_ROWS(double, double, norm_rows_f64, sqrt, NORM_LD, NORM_ST, NORM_OUT_NONE)

/* Forward pass of item rows [lane0, lane0 + c) (axis last): NORM_ROWS rows at a time,
 * then one at a time. float32 and bfloat16 rows are read and written in place; float16
 * rows go through the scratch xs (widened and rounded by tkb_convert). */
static void norm_forward_item_rows_f32(const norm_plan *p, const tkb_array *x, tkb_array *y,
                                       float *xs, int64_t lane0, int64_t c, const float *scale,
                                       const float *offset, float eps, float *mean,
                                       float *rstd) {
  const int64_t n = p->n;
  const bool sm = p->subtract_mean;
  for (int64_t r = 0; r < c;) {
    const int nr = c - r >= NORM_ROWS ? NORM_ROWS : 1;
    const int64_t e0 = (lane0 + r) * n;
    if (x->spec.dtype == TKB_FLOAT32) {
      const float *xr = (const float *)x->data + e0;
      float *yr = (float *)y->data + e0;
      if (nr == NORM_ROWS)
        norm_rows_f32(xr, yr, n, NORM_ROWS, scale, offset, eps, sm, &mean[r], &rstd[r]);
      else
        norm_rows_f32(xr, yr, n, 1, scale, offset, eps, sm, &mean[r], &rstd[r]);
    } else if (x->spec.dtype == TKB_BFLOAT16) {
      const uint16_t *xr = (const uint16_t *)x->data + e0;
      uint16_t *yr = (uint16_t *)y->data + e0;
      if (nr == NORM_ROWS)
        norm_rows_bf16(xr, yr, n, NORM_ROWS, scale, offset, eps, sm, &mean[r], &rstd[r]);
      else
        norm_rows_bf16(xr, yr, n, 1, scale, offset, eps, sm, &mean[r], &rstd[r]);
    } else {
      norm_block blk = norm_rows_block(p, lane0 + r, nr);
      norm_gather_f32(xs, x->data, x->spec.dtype, &blk, 0, blk.runs);
      if (nr == NORM_ROWS)
        norm_rows_f32(xs, xs, n, NORM_ROWS, scale, offset, eps, sm, &mean[r], &rstd[r]);
      else
        norm_rows_f32(xs, xs, n, 1, scale, offset, eps, sm, &mean[r], &rstd[r]);
      norm_scatter_f32(y->data, y->spec.dtype, xs, &blk, 0, blk.runs);
    }
    r += nr;
  }
}

/* The float64 version: x is float64, read and written in place. */
static void norm_forward_item_rows_f64(const norm_plan *p, const tkb_array *x, tkb_array *y,
                                       double *xs, int64_t lane0, int64_t c,
                                       const double *scale, const double *offset, double eps,
                                       double *mean, double *rstd) {
  (void)xs;
  const int64_t n = p->n;
  const bool sm = p->subtract_mean;
  for (int64_t r = 0; r < c;) {
    const int nr = c - r >= NORM_ROWS ? NORM_ROWS : 1;
    const int64_t e0 = (lane0 + r) * n;
    const double *xr = (const double *)x->data + e0;
    double *yr = (double *)y->data + e0;
    if (nr == NORM_ROWS)
      norm_rows_f64(xr, yr, n, NORM_ROWS, scale, offset, eps, sm, &mean[r], &rstd[r]);
    else
      norm_rows_f64(xr, yr, n, 1, scale, offset, eps, sm, &mean[r], &rstd[r]);
    r += nr;
  }
}

/* Forward pass of one item of c lanes (axis not last): block b of x holds x[j][r] at
 * base + j * stride + r (j < n rows, r < c lanes), and y likewise. XT, LD and ST as in
 * the row kernels; the same one-pass statistics per lane, shifted by the lane's first
 * element (row 0), then the output:
 *   s1[r] = sum_j d,  s2[r] = sum_j d^2,  d = x[j][r] - shift[r]   (j in order)
 *   mean[r] = shift[r] + s1[r] / n,  var[r] = (s2[r] - s1[r]^2 / n) / n
 *   y[j][r] = (x[j][r] - mean[r]) * rstd[r] * scale[j] + offset[j]
 * Both passes read x in place (the block is L2-sized; its runs are far apart, so the
 * run NORM_PREFETCH_RUNS ahead is prefetched) and y is written in place. rstd holds
 * s2 until the end of the first pass. shift and s1 are c-lane work arrays. */
#define NORM_DEFINE_LANES(T, XT, NAME, SQRT, LD, ST, OUT, NT)                                   \
  static void NAME(const XT *x, XT *y, int64_t base, int64_t stride, int64_t n, int64_t c,     \
                   const T *scale, const T *offset, T eps, bool subtract_mean, T *mean,        \
                   T *rstd, T *shift, T *s1) {                                                 \
    const XT *x0 = x + base;                                                                   \
    XT *y0 = y + base;                                                                         \
    const size_t run_bytes = (size_t)c * sizeof(XT);                                           \
    for (int64_t r = 0; r < c; r++) {                                                          \
      shift[r] = subtract_mean ? LD(x0, r) : (T)0;                                             \
      s1[r] = rstd[r] = 0;                                                                     \
    }                                                                                          \
    for (int64_t j = 0; j < n; j++) {                                                          \
      const XT *xr = x0 + j * stride;                                                          \
      if (j + NORM_PREFETCH_RUNS < n)                                                          \
        norm_prefetch_read((const char *)(xr + NORM_PREFETCH_RUNS * stride), run_bytes);       \
      NORM_SIMD for (int64_t r = 0; r < c; r++) {                                              \
        T d = LD(xr, r) - shift[r];                                                            \
        s1[r] += d;                                                                            \
        rstd[r] += d * d;                                                                      \
      }                                                                                        \
    }                                                                                          \
    for (int64_t r = 0; r < c; r++) {                                                          \
      T sum = subtract_mean ? s1[r] : (T)0;                                                    \
      T var = (rstd[r] - sum * sum / (T)n) / (T)n;                                             \
      rstd[r] = (T)1 / SQRT((var > 0 ? var : (T)0) + eps);                                     \
      mean[r] = shift[r] + sum / (T)n;                                                         \
    }                                                                                          \
    for (int64_t j = 0; j < n; j++) {                                                          \
      const XT *xr = x0 + j * stride;                                                          \
      XT *yr = y0 + j * stride;                                                                \
      if (!(NT) && j + NORM_PREFETCH_RUNS < n)                                                 \
        norm_prefetch_write((char *)(yr + NORM_PREFETCH_RUNS * stride), run_bytes);            \
      const T s = scale ? scale[j] : (T)1, o = offset ? offset[j] : (T)0;                      \
      const int64_t r0 = OUT(xr, yr, c, mean, rstd, scale != NULL, s, offset != NULL, o);      \
      if (scale && offset)                                                                     \
        NORM_SIMD for (int64_t r = r0; r < c; r++)                                             \
          ST(yr, r, (LD(xr, r) - mean[r]) * rstd[r] * s + o);                                  \
      else if (scale)                                                                          \
        NORM_SIMD for (int64_t r = r0; r < c; r++) ST(yr, r, (LD(xr, r) - mean[r]) * rstd[r] * s); \
      else if (offset)                                                                         \
        NORM_SIMD for (int64_t r = r0; r < c; r++) ST(yr, r, (LD(xr, r) - mean[r]) * rstd[r] + o); \
      else                                                                                     \
        NORM_SIMD for (int64_t r = r0; r < c; r++) ST(yr, r, (LD(xr, r) - mean[r]) * rstd[r]); \
    }                                                                                          \
    if (NT) NORM_SFENCE(); /* order the non-temporal stores before the item ends */           \
  }

NORM_DEFINE_LANES(float, float, norm_lanes_f32, sqrtf, NORM_LD, NORM_ST, NORM_LANES_OUT_NONE, 0)
NORM_DEFINE_LANES(float, uint16_t, norm_lanes_bf16, sqrtf, NORM_LD_BF16, NORM_ST_BF16,
                  NORM_BF16_LANES_OUT_FAST, 0)
NORM_DEFINE_LANES(float, uint16_t, norm_lanes_bf16_nt, sqrtf, NORM_LD_BF16, NORM_ST_BF16,
                  NORM_BF16_LANES_OUT_NT, 1)
NORM_DEFINE_LANES(double, double, norm_lanes_f64, sqrt, NORM_LD, NORM_ST, NORM_LANES_OUT_NONE, 0)

/* Forward pass of one item of c lanes (axis not last), block b: float32 and bfloat16 x
 * in place (lw: 2 * c work lanes); float16 x widened into the scratch xs (n runs of c:
 * xs[j * c + r], c <= NORM_MAX_LANES), computed there and rounded back. */
static void norm_forward_item_lanes_f32(const norm_plan *p, const norm_block *b,
                                        const tkb_array *x, tkb_array *y, float *xs,
                                        int64_t c, const float *scale, const float *offset,
                                        float eps, float *mean, float *rstd, float *lw,
                                        bool nt) {
  const bool sm = p->subtract_mean;
  if (x->spec.dtype == TKB_FLOAT32)
    norm_lanes_f32(x->data, y->data, b->base, b->stride, p->n, c, scale, offset, eps, sm,
                   mean, rstd, lw, lw + c);
  else if (x->spec.dtype == TKB_BFLOAT16 && nt)
    norm_lanes_bf16_nt(x->data, y->data, b->base, b->stride, p->n, c, scale, offset, eps, sm,
                       mean, rstd, lw, lw + c);
  else if (x->spec.dtype == TKB_BFLOAT16)
    norm_lanes_bf16(x->data, y->data, b->base, b->stride, p->n, c, scale, offset, eps, sm,
                    mean, rstd, lw, lw + c);
  else {
    float shift[NORM_MAX_LANES], s1[NORM_MAX_LANES];
    norm_gather_f32(xs, x->data, x->spec.dtype, b, 0, b->runs);
    norm_lanes_f32(xs, xs, 0, c, p->n, c, scale, offset, eps, sm, mean, rstd, shift, s1);
    norm_scatter_f32(y->data, y->spec.dtype, xs, b, 0, b->runs);
  }
}

/* The float64 version: x is float64, read and written in place. */
static void norm_forward_item_lanes_f64(const norm_plan *p, const norm_block *b,
                                        const tkb_array *x, tkb_array *y, double *xs,
                                        int64_t c, const double *scale, const double *offset,
                                        double eps, double *mean, double *rstd, double *lw,
                                        bool nt) {
  (void)xs, (void)nt;
  norm_lanes_f64(x->data, y->data, b->base, b->stride, p->n, c, scale, offset, eps,
                 p->subtract_mean, mean, rstd, lw, lw + c);
}

/* ------------------------------------------------------------------------------ */
/* Kernels, once for float32 math (T = float) and once for float64 (T = double)     */
/* ------------------------------------------------------------------------------ */

#define NORM_DEFINE_KERNELS(T, SFX, SQRT)                                                      \
  /* sum_k a[k] for k < len: 16 interleaved partial sums added in a fixed order (the           \
   * same for every thread count; vectorizes; more accurate than one running sum). */          \
  static inline T norm_sum_##SFX(const T *a, int64_t len) {                                    \
    T acc[16] = {0};                                                                           \
    int64_t k = 0;                                                                             \
    for (; k + 16 <= len; k += 16)                                                             \
      NORM_SIMD for (int q = 0; q < 16; q++) acc[q] += a[k + q];                               \
    for (int q = 0; k < len; k++, q++) acc[q] += a[k];                                         \
    for (int w = 8; w >= 1; w /= 2)                                                            \
      for (int q = 0; q < w; q++) acc[q] += acc[q + w];                                        \
    return acc[0];                                                                             \
  }                                                                                            \
                                                                                               \
  /* sum_k a[k] * b[k], in the same order as norm_sum. */                                      \
  static inline T norm_dot_##SFX(const T *a, const T *b, int64_t len) {                        \
    T acc[16] = {0};                                                                           \
    int64_t k = 0;                                                                             \
    for (; k + 16 <= len; k += 16)                                                             \
      NORM_SIMD for (int q = 0; q < 16; q++) acc[q] += a[k + q] * b[k + q];                    \
    for (int q = 0; k < len; k++, q++) acc[q] += a[k] * b[k];                                  \
    for (int w = 8; w >= 1; w /= 2)                                                            \
      for (int q = 0; q < w; q++) acc[q] += acc[q + w];                                        \
    return acc[0];                                                                             \
  }                                                                                            \
                                                                                               \
  /* v[j] = a[j] in the math type (scale or offset into its workspace); NULL when a is */      \
  static const T *norm_load_vec_##SFX(const tkb_array *a, int64_t n, void *v) {                \
    if (!a) return NULL;                                                                       \
    T *t = v;                                                                                  \
    for (int64_t j = 0; j < n; j++) t[j] = (T)ops_get(a, j);                                  \
    return t;                                                                                  \
  }                                                                                            \
                                                                                               \
  /* Forward pass over all items; mean_out/rstd_out may be NULL (no residuals). */             \
  static void norm_forward_##SFX(const norm_plan *p, const cpu_state *s, const norm_call *in,  \
                                 tkb_array *y, T *mean_out, T *rstd_out) {                     \
    if (p->n == 0) {                                                                           \
      /* empty rows: the mean and variance of nothing are NaN (as in JAX) */                   \
      for (int64_t l = 0; l < p->lanes; l++) {                                                 \
        if (mean_out) mean_out[l] = p->subtract_mean ? (T)NAN : (T)0;                          \
        if (rstd_out) rstd_out[l] = (T)NAN;                                                    \
      }                                                                                        \
      return;                                                                                  \
    }                                                                                          \
    const T *scale_v = norm_load_vec_##SFX(in->scale, p->n, s->scale_v);                       \
    const T *offset_v = norm_load_vec_##SFX(in->offset, p->n, s->offset_v);                    \
    const tkb_array *x = in->x;                                                                \
    const T eps = (T)p->epsilon;                                                               \
    const bool rows = p->inner == 1;                                                           \
    /* axis not last, bfloat16 with NT stores: items of fc lanes (NORM_STREAM_BYTES) */        \
    const bool stream = NORM_LANES_NT && !rows && s->fc > 0 && x->spec.dtype == TKB_BFLOAT16;  \
    const int64_t items = stream ? s->fitems : s->items;                                       \
    _Pragma("omp parallel num_threads(cpu_threads(s)) if (s->parallel)")                       \
    {                                                                                          \
      T *xs = (T *)(s->scratch + (size_t)omp_get_thread_num() * s->thread_stride);             \
      T mean[NORM_MAX_LANES], rstd[NORM_MAX_LANES], lwork[2 * NORM_MAX_LANES];                 \
      _Pragma("omp for schedule(dynamic, 1)")                                                  \
      for (int64_t k = 0; k < items; k++) {                                                    \
        int64_t lane0, c;                                                                      \
        norm_block b;                                                                          \
        if (stream) {                                                                          \
          /* lane arrays in the scratch: shift, s1, then mean/rstd where not returned */       \
          norm_stream_item(p, s, k, &lane0, &c, &b);                                           \
          T *m = mean_out ? mean_out + lane0 : xs + 2 * c;                                     \
          T *rs = rstd_out ? rstd_out + lane0 : xs + 3 * c;                                    \
          norm_forward_item_lanes_##SFX(p, &b, x, y, xs, c, scale_v, offset_v, eps, m, rs,     \
                                        xs, true);                                             \
          continue;                                                                            \
        }                                                                                      \
        norm_item(p, s, k, &lane0, &c, &b);                                                    \
        if (rows) {                                                                            \
          norm_forward_item_rows_##SFX(p, x, y, xs, lane0, c, scale_v, offset_v, eps, mean,    \
                                       rstd);                                                  \
        } else {                                                                               \
          norm_forward_item_lanes_##SFX(p, &b, x, y, xs, c, scale_v, offset_v, eps, mean,      \
                                        rstd, lwork, false);                                   \
        }                                                                                      \
        if (mean_out) memcpy(mean_out + lane0, mean, (size_t)c * sizeof(T));                   \
        if (rstd_out) memcpy(rstd_out + lane0, rstd, (size_t)c * sizeof(T));                   \
      }                                                                                        \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  /* Backward pass of one row (axis last): x holds x[j] and receives dx in place; dy           \
   * holds dy[j] and is overwritten. dscale_acc[j] += dy[j] * xhat[j] and                      \
   * doffset_acc[j] += dy[j] when not NULL. */                                                 \
  static void norm_vjp_row_##SFX(T *x, T *dy, int64_t n, const T *scale, bool subtract_mean,   \
                                 T mean, T rstd, T *dscale_acc, T *doffset_acc) {              \
    /* xhat[j] = (x[j] - mean) * rstd   (in place of x) */                                     \
    NORM_SIMD for (int64_t j = 0; j < n; j++) x[j] = (x[j] - mean) * rstd;                     \
    /* doffset[j] += dy[j];  dscale[j] += dy[j] * xhat[j] */                                   \
    if (doffset_acc) NORM_SIMD for (int64_t j = 0; j < n; j++) doffset_acc[j] += dy[j];        \
    if (dscale_acc) NORM_SIMD for (int64_t j = 0; j < n; j++) dscale_acc[j] += dy[j] * x[j];   \
    /* g[j] = dy[j] * scale[j]   (in place of dy) */                                           \
    if (scale) NORM_SIMD for (int64_t j = 0; j < n; j++) dy[j] *= scale[j];                    \
    /* mean_g = (1/n) sum_j g[j]   (0 for RMS norm);  mean_gxhat = (1/n) sum_j g[j] xhat[j] */ \
    const T mean_g = subtract_mean ? norm_sum_##SFX(dy, n) / (T)n : (T)0;                      \
    const T mean_gxhat = norm_dot_##SFX(dy, x, n) / (T)n;                                      \
    /* dx[j] = rstd * (g[j] - mean_g - xhat[j] * mean_gxhat) */                                \
    NORM_SIMD for (int64_t j = 0; j < n; j++)                                                  \
      x[j] = rstd * (dy[j] - mean_g - x[j] * mean_gxhat);                                      \
  }                                                                                            \
                                                                                               \
  /* Backward pass of one item of c lanes (axis not last): xs holds x[j][r] and receives       \
   * dx in place; gs holds dy[j][r] and is overwritten. mean/rstd are the item's               \
   * residuals. dscale_acc/doffset_acc as in norm_vjp_row. */                                  \
  static void norm_vjp_lanes_##SFX(T *xs, T *gs, int64_t n, int64_t c, const T *scale,         \
                                   bool subtract_mean, const T *mean, const T *rstd,           \
                                   T *dscale_acc, T *doffset_acc) {                            \
    T mean_g[NORM_MAX_LANES], mean_gxhat[NORM_MAX_LANES];                                      \
    for (int64_t r = 0; r < c; r++) mean_g[r] = mean_gxhat[r] = 0;                             \
    for (int64_t j = 0; j < n; j++) {                                                          \
      T *xh = xs + j * c, *g = gs + j * c;                                                     \
      /* xhat[j][r] = (x[j][r] - mean[r]) * rstd[r]   (in place of x) */                       \
      NORM_SIMD for (int64_t r = 0; r < c; r++) xh[r] = (xh[r] - mean[r]) * rstd[r];           \
      /* doffset[j] += sum_r dy[j][r];  dscale[j] += sum_r dy[j][r] * xhat[j][r] */            \
      if (doffset_acc) doffset_acc[j] += norm_sum_##SFX(g, c);                                 \
      if (dscale_acc) dscale_acc[j] += norm_dot_##SFX(g, xh, c);                               \
      /* g[j][r] = dy[j][r] * scale[j]   (in place of dy);                                     \
       * mean_g[r] += g[j][r];  mean_gxhat[r] += g[j][r] * xhat[j][r] */                       \
      const T s = scale ? scale[j] : (T)1;                                                     \
      NORM_SIMD for (int64_t r = 0; r < c; r++) {                                              \
        g[r] *= s;                                                                             \
        mean_g[r] += g[r];                                                                     \
        mean_gxhat[r] += g[r] * xh[r];                                                         \
      }                                                                                        \
    }                                                                                          \
    /* mean_g[r] = (1/n) sum_j g[j][r]   (0 for RMS norm); mean_gxhat[r] likewise */           \
    for (int64_t r = 0; r < c; r++) {                                                          \
      mean_g[r] = subtract_mean ? mean_g[r] / (T)n : (T)0;                                     \
      mean_gxhat[r] /= (T)n;                                                                   \
    }                                                                                          \
    /* dx[j][r] = rstd[r] * (g[j][r] - mean_g[r] - xhat[j][r] * mean_gxhat[r]) */              \
    for (int64_t j = 0; j < n; j++) {                                                          \
      T *xh = xs + j * c;                                                                      \
      const T *g = gs + j * c;                                                                 \
      NORM_SIMD for (int64_t r = 0; r < c; r++)                                                \
        xh[r] = rstd[r] * (g[r] - mean_g[r] - xh[r] * mean_gxhat[r]);                          \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  /* Backward pass: dx (may be NULL), dscale and doffset (NULL when not wanted). */            \
  static void norm_vjp_##SFX(const norm_plan *p, const cpu_state *s, const norm_call *in,      \
                             const T *mean_in, const T *rstd_in, const tkb_array *dy,          \
                             tkb_array *dx, tkb_array *dscale, tkb_array *doffset) {           \
    const int64_t n = p->n;                                                                    \
    if (n == 0) return; /* every gradient is empty */                                          \
    /* The items are split into `groups` fixed ranges (a function of the shape only);          \
     * each range is summed in order by one thread into its own row of partial sums,           \
     * and the rows are added in group order at the end. */                                    \
    const int64_t groups = s->groups;                                                          \
    const bool rows = p->inner == 1;                                                           \
    const tkb_array *x = in->x;                                                                \
    const T *scale_v = norm_load_vec_##SFX(in->scale, n, s->scale_v);                          \
    T *dscale_part = dscale ? s->dscale_part : NULL;                                           \
    T *doffset_part = doffset ? s->doffset_part : NULL;                                        \
    if (dscale_part) memset(dscale_part, 0, (size_t)(groups * n) * sizeof(T));                 \
    if (doffset_part) memset(doffset_part, 0, (size_t)(groups * n) * sizeof(T));               \
    _Pragma("omp parallel num_threads(cpu_threads(s)) if (s->parallel)")                       \
    {                                                                                          \
      T *xs = (T *)(s->scratch + (size_t)omp_get_thread_num() * s->thread_stride);             \
      T *gs = xs + (rows ? n : n * s->c);                                                      \
      _Pragma("omp for schedule(dynamic, 1)")                                                  \
      for (int64_t grp = 0; grp < groups; grp++) {                                             \
        T *ds = dscale_part ? dscale_part + grp * n : NULL;                                    \
        T *db = doffset_part ? doffset_part + grp * n : NULL;                                  \
        const int64_t per = s->items / groups, extra = s->items % groups;                      \
        const int64_t k0 = grp * per + (grp < extra ? grp : extra);                            \
        const int64_t k1 = k0 + per + (grp < extra ? 1 : 0);                                   \
        for (int64_t k = k0; k < k1; k++) {                                                    \
          int64_t lane0, c;                                                                    \
          norm_block b;                                                                        \
          norm_item(p, s, k, &lane0, &c, &b);                                                  \
          if (rows) {                                                                          \
            for (int64_t r = 0; r < c; r++) {                                                  \
              norm_block row = norm_row_block(p, lane0 + r);                                   \
              norm_gather_##SFX(xs, x->data, x->spec.dtype, &row, 0, row.runs);                \
              norm_gather_##SFX(gs, dy->data, dy->spec.dtype, &row, 0, row.runs);              \
              norm_vjp_row_##SFX(xs, gs, n, scale_v, p->subtract_mean, mean_in[lane0 + r],     \
                                 rstd_in[lane0 + r], ds, db);                                  \
              if (dx) norm_scatter_##SFX(dx->data, dx->spec.dtype, xs, &row, 0, row.runs);     \
            }                                                                                  \
          } else {                                                                             \
            norm_gather_##SFX(xs, x->data, x->spec.dtype, &b, 0, b.runs);                      \
            norm_gather_##SFX(gs, dy->data, dy->spec.dtype, &b, 0, b.runs);                    \
            norm_vjp_lanes_##SFX(xs, gs, n, c, scale_v, p->subtract_mean, mean_in + lane0,     \
                                 rstd_in + lane0, ds, db);                                     \
            if (dx) norm_scatter_##SFX(dx->data, dx->spec.dtype, xs, &b, 0, b.runs);           \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
    /* dscale[j] = sum over groups of the partial sums, in group order; likewise doffset */    \
    for (int64_t j = 0; j < n; j++) {                                                          \
      T sum_ds = 0, sum_db = 0;                                                                \
      for (int64_t grp = 0; grp < groups; grp++) {                                             \
        if (dscale_part) sum_ds += dscale_part[grp * n + j];                                   \
        if (doffset_part) sum_db += doffset_part[grp * n + j];                                 \
      }                                                                                        \
      if (dscale) ops_set(dscale, j, (double)sum_ds);                                         \
      if (doffset) ops_set(doffset, j, (double)sum_db);                                       \
    }                                                                                          \
  }

NORM_DEFINE_KERNELS(float, f32, sqrtf)
NORM_DEFINE_KERNELS(double, f64, sqrt)

/* ------------------------------------------------------------------------------ */
/* Hooks                                                                           */
/* ------------------------------------------------------------------------------ */

/* A call's state must be the one prepare made for these shapes. */
static tkb_status cpu_check_state(const cpu_state *s, const norm_plan *p) {
  char xb[256], sb[256];
  if (!s)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "normalization (cpu): state is NULL; call the prepare hook first "
                         "(it allocates the workspaces) and pass its state to every call");
  if (!tkb_spec_equal(&s->x, &p->x) || s->axis != p->axis || s->has_scale != !!p->scale ||
      s->has_offset != !!p->offset) {
    tkb_spec_format(&p->x, xb, sizeof xb);
    tkb_spec_format(&s->x, sb, sizeof sb);
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "normalization (cpu): called with x %s, axis %d, scale %s, offset "
                         "%s but prepared for x %s, axis %d, scale %s, offset %s; prepare "
                         "again for other shapes",
                         xb, p->axis, p->scale ? "given" : "None", p->offset ? "given" : "None",
                         sb, s->axis, s->has_scale ? "given" : "None",
                         s->has_offset ? "given" : "None");
  }
  return TKB_OK;
}

static tkb_status cpu_run_forward(const tkb_args *a, const cpu_state *s, tkb_array *y,
                                  tkb_array *mean, tkb_array *rstd) {
  norm_call c;
  tkb_status st = tkb__norm_bind_forward(a, &c, y, mean, rstd);
  if (st == TKB_OK) st = cpu_check_state(s, &c.p);
  if (st != TKB_OK) return st;
  if (c.p.f64)
    norm_forward_f64(&c.p, s, &c, y, mean ? mean->data : NULL, rstd ? rstd->data : NULL);
  else
    norm_forward_f32(&c.p, s, &c, y, mean ? mean->data : NULL, rstd ? rstd->data : NULL);
  return TKB_OK;
}

static tkb_status cpu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return cpu_run_forward(a, state, outputs[0], NULL, NULL);
}

static tkb_status cpu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  if (!residuals[0] || !residuals[1])
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "normalization: forward_res needs both residuals (mean, rstd)");
  return cpu_run_forward(a, state, outputs[0], residuals[0], residuals[1]);
}

static tkb_status cpu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  norm_call c;
  tkb_array *dx, *dscale, *doffset;
  tkb_status st =
      tkb__norm_bind_vjp(a, &c, residuals, cotangents, grads, &dx, &dscale, &doffset);
  if (st == TKB_OK) st = cpu_check_state(state, &c.p);
  if (st != TKB_OK) return st;
  if (c.p.f64)
    norm_vjp_f64(&c.p, state, &c, residuals[0]->data, residuals[1]->data, cotangents[0], dx,
                 dscale, doffset);
  else
    norm_vjp_f32(&c.p, state, &c, residuals[0]->data, residuals[1]->data, cotangents[0], dx,
                 dscale, doffset);
  return TKB_OK;
}

const tkb_fn tkb_op_normalization = {
    .name = "normalization",
    .params = tkb__norm_params,
    .n_params = NORM_N_PARAMS,
    .infer = tkb__norm_infer,
    .prepare = cpu_prepare,
    .release = cpu_release,
    .forward = cpu_forward,
    .forward_res = cpu_forward_res,
    .vjp = cpu_vjp,
};
