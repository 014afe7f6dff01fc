/*
 * norm_cpu.h - what the files of normalization's cpu implementation share: cpu.c (the
 * prepared state, its workspaces and the hooks), cpu_forward.h and cpu_vjp.h (the two
 * passes, compiled per instruction set by cpu_<isa>.c). The state, the split of the lanes into work items (a function of the shape
 * only), and moving an item's block between the arrays and the float scratch. Internal.
 */
#ifndef TKB_OP_NORM_CPU_H
#define TKB_OP_NORM_CPU_H

#include "internal.h"
#include "norm.h"

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
/* Forward pass, axis not last, bfloat16 x where the variant has non-temporal stores
 * (NORM_LANES_NT: avx2, avx512): an item is
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
/* Forward pass, axis last, bfloat16 rows: each group of rows prefetches the bytes this
 * far ahead of it. The hardware's prefetchers alone left the rows' kernel waiting on
 * memory: beyond the last-level cache ([3201,384,128] bfloat16, 2 threads on the Xeon)
 * 37-39 ms against a 2-thread copy's 23 on avx2, 0.59-0.63 of it; with 2 KiB (8 rows of
 * 128) 0.85-0.87 on avx2 and 0.98-1.02 on avx512 (4 KiB: 0.85 and 1.03, 8 KiB: 0.86 and
 * 0.86, 16 KiB: 0.76 on avx2). float32 rows are left to the hardware: prefetched alike,
 * [1601,384,128] on avx512 went from 0.88 of the copy to 0.70. */
#define NORM_ROWS_PREFETCH_BYTES ((size_t)2048)
/* Vectorize a loop whose iterations are independent (lanes or elements), whatever the
 * optimization level; each iteration's arithmetic, and so its result, is unchanged. */
#define NORM_SIMD _Pragma("omp simd")

/* ------------------------------------------------------------------------------ */
/* The prepared state and the work split                                           */
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
  bool rows_nt;   /* forward, axis last, bfloat16 beyond the LLC: y by non-temporal stores */
  int threads;    /* scratch blocks: the most threads a call runs on */
  ops_workspace ws;      /* one device allocation, carved into: */
  char *scratch;         /* threads blocks, thread_stride bytes apart */
  size_t thread_stride;  /* elements of T: axis last max(NORM_ROWS, 2) * n (forward rows;
                            vjp x and dy rows), else max(2 * n * c (vjp), 4 * fc
                            (forward lane arrays)); 64-byte rounded */
  void *scale_v;         /* [n] of T: scale widened (NULL when None) */
  void *offset_v;        /* [n] of T: offset widened (NULL when None) */
  void *dscale_part;     /* [groups, n] of T (NULL when scale is None) */
  void *doffset_part;    /* [groups, n] of T (NULL when offset is None) */
} cpu_state;

/* Threads for a call: the current OpenMP setting, at most the prepared count. */
static inline int cpu_threads(const cpu_state *s) {
  int t = omp_get_max_threads();
  return t < s->threads ? t : s->threads;
}

/* What one gather/scatter moves: `runs` runs of `len` contiguous elements, run q at
 * base + q * stride in x (and y, dy, dx) and at q * len in the scratch. */
typedef struct norm_block {
  int64_t base, stride;
  int64_t runs, len;
} norm_block;

/* Work item k: lanes [*lane0, *lane0 + *c). For axis not last, *b is its block (n runs
 * of c elements, one run per row j). */
static inline void norm_item(const norm_plan *p, const cpu_state *s, int64_t k, int64_t *lane0,
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
static inline void norm_stream_item(const norm_plan *p, const cpu_state *s, int64_t k,
                             int64_t *lane0, int64_t *c, norm_block *b) {
  int64_t per_outer = (p->inner + s->fc - 1) / s->fc;
  int64_t o = k / per_outer, i0 = (k % per_outer) * s->fc;
  *lane0 = o * p->inner + i0;
  *c = p->inner - i0 < s->fc ? p->inner - i0 : s->fc;
  *b = (norm_block){.base = o * p->n * p->inner + i0, .stride = p->inner, .runs = p->n,
                    .len = *c};
}

/* Row `lane` of x when the axis is last: one run of n elements. */
static inline norm_block norm_row_block(const norm_plan *p, int64_t lane) {
  return (norm_block){.base = lane * p->n, .stride = 0, .runs = 1, .len = p->n};
}

/* Rows [lane, lane + rows) of x when the axis is last: one run of rows * n elements (one
 * conversion call for the narrow dtypes; float32/float64 rows of the forward pass are not
 * copied at all: see norm_forward). */
static inline norm_block norm_rows_block(const norm_plan *p, int64_t lane, int64_t rows) {
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
static inline void norm_gather_f32(float *dst, const void *src, tkb_dtype dt, const norm_block *b,
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
static inline void norm_scatter_f32(void *dst, tkb_dtype dt, const float *src, const norm_block *b,
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
static inline void norm_gather_f64(double *dst, const void *src, tkb_dtype dt, const norm_block *b,
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

static inline void norm_scatter_f64(void *dst, tkb_dtype dt, const double *src, const norm_block *b,
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
/* The passes, once for float32 math (T = float) and once for float64 (T = double)  */
/* ------------------------------------------------------------------------------ */

/* v[j] = a[j] in the math type (scale or offset into its workspace); NULL when a is. */
#define NORM_DEFINE_LOAD_VEC(T, SFX)                                                  \
  static inline const T *norm_load_vec_##SFX(const tkb_array *a, int64_t n, void *v) { \
    if (!a) return NULL;                                                              \
    T *t = v;                                                                         \
    for (int64_t j = 0; j < n; j++) t[j] = (T)ops_get(a, j);                          \
    return t;                                                                         \
  }
NORM_DEFINE_LOAD_VEC(float, f32)
NORM_DEFINE_LOAD_VEC(double, f64)

/* The passes of one instruction set (cpu_forward.h and cpu_vjp.h compiled by
 * cpu_<isa>.c), which cpu.c picks by tkb__cpu_isa():
 *   forward   y (and mean_out, rstd_out, each may be NULL: no residuals)
 *   vjp       dx (may be NULL), dscale and doffset (NULL when not wanted) */
typedef struct norm_cpu_kernels {
  void (*forward_f32)(const norm_plan *p, const cpu_state *s, const norm_call *in,
                      tkb_array *y, float *mean_out, float *rstd_out);
  void (*forward_f64)(const norm_plan *p, const cpu_state *s, const norm_call *in,
                      tkb_array *y, double *mean_out, double *rstd_out);
  void (*vjp_f32)(const norm_plan *p, const cpu_state *s, const norm_call *in,
                  const float *mean_in, const float *rstd_in, const tkb_array *dy,
                  tkb_array *dx, tkb_array *dscale, tkb_array *doffset);
  void (*vjp_f64)(const norm_plan *p, const cpu_state *s, const norm_call *in,
                  const double *mean_in, const double *rstd_in, const tkb_array *dy,
                  tkb_array *dx, tkb_array *dscale, tkb_array *doffset);
} norm_cpu_kernels;

TKB_ISA_DECLARE(norm_cpu_kernels, tkb__norm_cpu_kernels);

#endif /* TKB_OP_NORM_CPU_H */
