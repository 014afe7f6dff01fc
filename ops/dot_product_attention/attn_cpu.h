/*
 * attn_cpu.h - what the files of dot_product_attention's cpu implementation share: cpu.c
 * (the prepared workspace and the hooks) and the kernels (cpu_kernels.h, compiled per
 * instruction set by cpu_<isa>.c): the workspace's layout, the widening conversions and
 * the vectorizable exp. Internal.
 */
#ifndef TKB_OP_ATTN_CPU_H
#define TKB_OP_ATTN_CPU_H

#include "attention.h"
#include "internal.h"
#include "../common/vec_math.h"

#include <cblas.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* The slices of one thread's workspace (see cpu_kernels.h's thread struct). */
enum {
  CPU_KC, CPU_VC, CPU_KT, CPU_VT, CPU_QC, CPU_OC, CPU_QBUF, CPU_DOBUF, CPU_KBUF, CPU_VBUF,
  CPU_KTBUF, CPU_VTBUF, CPU_X, CPU_Y, CPU_OACC, CPU_MROW, CPU_LROW, CPU_PBLK, CPU_DPBLK,
  CPU_DQACC, CPU_DBACC, CPU_DKACC, CPU_DVACC, CPU_N_SLICES
};

typedef struct cpu_ws {
  tkb_device *dev;
  void *mem;                    /* nthreads thread areas, then delta */
  size_t bytes;
  int nthreads;
  int64_t tq, bk;               /* query rows and keys per tile */
  int64_t off[CPU_N_SLICES + 1];/* element offsets in a thread area; [N] = its size */
  void *delta;                  /* [B, H, T] in the math type (vjp pass A -> B) */
} cpu_ws;

#define ATTN_CAT_(a, b) a##_##b
#define ATTN_CAT(a, b) ATTN_CAT_(a, b)

/* bfloat16 -> float32 is exact: the bf16 bits are the float's upper half. Inline so
 * that the widening loops vectorize. */
static inline float attn_bf16_widen(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* float16 -> float32, exact (subnormals, infinities and NaN included), branch-free so
 * that it vectorizes: the 15 magnitude bits moved into float position read as 2^-112
 * times the value, for normals and subnormals alike; exponent 31 (inf/NaN) gets the
 * float's all-ones exponent. */
static inline float attn_f16_widen(uint16_t h) {
  uint32_t mag = (uint32_t)(h & 0x7fff) << 13;
  float f;
  memcpy(&f, &mag, sizeof f);
  f *= 0x1p112f;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  u |= (h & 0x7c00) == 0x7c00 ? 0x7f800000u : 0;
  u |= (uint32_t)(h & 0x8000) << 16;
  memcpy(&f, &u, sizeof f);
  return f;
}


/* Threads for a parallel region: what prepare sized the workspace for, or fewer. */
static inline int cpu_threads(const cpu_ws *ws) {
  int n = omp_get_max_threads();
  return n < ws->nthreads ? n : ws->nthreads;
}

/* Work items shared out as one contiguous range per thread, each thread taking its own
 * range's items from the front and, once it is empty, the last item of the range with
 * the most left. The forward's items of a head are consecutive, and a thread widens and
 * transposes a kv head's k and v (about 0.16 ms at S = 1024, D = 128) whenever its next
 * item is of another head: with items handed out one at a time in order, both threads
 * took turns on every head and each made all 8 heads' copies; with ranges each makes its
 * own half's and those of the few items it takes from the other's end. Any thread may
 * run any item: the results do not depend on who ran what. Indices fit 32 bits (the
 * caller checks): front << 32 | back in one word, so that an owner and a thief never
 * take the same last item. */
typedef struct attn_range {
  _Alignas(64) _Atomic uint64_t fb; /* front << 32 | back: items [front, back) are left */
} attn_range;

static inline void attn_ranges_init(attn_range *r, int n, int64_t items) {
  for (int t = 0; t < n; t++)
    atomic_init(&r[t].fb, (uint64_t)(items * t / n) << 32 | (uint64_t)(items * (t + 1) / n));
}

static inline int64_t attn_range_left(uint64_t fb) {
  return (int64_t)(fb & 0xffffffffu) - (int64_t)(fb >> 32);
}

/* The next item for thread t of n, or -1 when every range is empty. */
static inline int64_t attn_ranges_next(attn_range *r, int n, int t) {
  uint64_t v = t < n ? atomic_load(&r[t].fb) : 0;
  while (t < n && attn_range_left(v) > 0)
    if (atomic_compare_exchange_weak(&r[t].fb, &v, v + ((uint64_t)1 << 32)))
      return (int64_t)(v >> 32);
  for (;;) {
    int victim = -1;
    int64_t most = 0;
    for (int u = 0; u < n; u++) {
      const int64_t left = attn_range_left(atomic_load(&r[u].fb));
      if (left > most) most = left, victim = u;
    }
    if (victim < 0) return -1;
    v = atomic_load(&r[victim].fb);
    while (attn_range_left(v) > 0)
      if (atomic_compare_exchange_weak(&r[victim].fb, &v, v - 1))
        return (int64_t)(v & 0xffffffffu) - 1;
  }
}

/* The forward and vjp of one instruction set (cpu_kernels.h for float32 and float64
 * math, compiled by cpu_<isa>.c), which cpu.c picks by tkb__cpu_isa(). */
typedef struct attn_cpu_kernels {
  void (*forward_f32)(const attn_plan *p, const attn_inputs *in, const cpu_ws *ws,
                      tkb_array *out, tkb_array *lse_out);
  void (*forward_f64)(const attn_plan *p, const attn_inputs *in, const cpu_ws *ws,
                      tkb_array *out, tkb_array *lse_out);
  void (*vjp_f32)(const attn_plan *p, const attn_inputs *in, const cpu_ws *ws,
                  const tkb_array *lse_in, const tkb_array *dout, tkb_array *dq, tkb_array *dk,
                  tkb_array *dv, tkb_array *dbias);
  void (*vjp_f64)(const attn_plan *p, const attn_inputs *in, const cpu_ws *ws,
                  const tkb_array *lse_in, const tkb_array *dout, tkb_array *dq, tkb_array *dk,
                  tkb_array *dv, tkb_array *dbias);
} attn_cpu_kernels;

TKB_ISA_DECLARE(attn_cpu_kernels, tkb__attn_cpu_kernels);

#endif /* TKB_OP_ATTN_CPU_H */
