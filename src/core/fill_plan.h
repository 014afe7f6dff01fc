/*
 * fill_plan.h - what a random fill is before it runs: the plan fill_plan.c builds from
 * (array, initializer, seed, stream) after validating them, which the cpu fill
 * (random.c) runs and device backends get as a tkb_fill_plan (backend.h). Internal to
 * src/core.
 */
#ifndef TKB_FILL_PLAN_H
#define TKB_FILL_PLAN_H

#include "internal.h"
#include "philox.h"

typedef enum draw_kind {
  DRAW_NORMAL32 = 0,
  DRAW_NORMAL64,
  DRAW_UNIFORM32,
  DRAW_UNIFORM64,
  DRAW_RANGE32,
  DRAW_RANGE64,
  DRAW_CONSTANT,
  DRAW_NORMAL16
} draw_kind;

typedef struct fill_plan {
  draw_kind draw;
  tkb_dtype dtype;
  int per_ctr;          /* E: elements per counter */
  size_t esize;         /* bytes per element */
  tkb_px_u32 k0, k1, s0, s1;
  uint64_t ks[20];      /* round keys: (k0, k1) + r (W0, W1) at 2r, 2r + 1 */
  bool affine;          /* normal: apply v = fma(z, std, mean) */
  float mean_f, std_f, lo_f, hi_f, mn_f, mx_f;
  double mean_d, std_d, lo_d, hi_d, mn_d, mx_d;
  int64_t ilo;          /* range: lowest value */
  uint64_t width;       /* range: width, 0 meaning 2^64 */
  unsigned char cbytes[8]; /* constant: one element */
} fill_plan;

/* Validates (a, init) as tkb_fill documents and builds the plan; a CALLBACK init only
 * checks the callback. */
tkb_status tkb__make_fill_plan(const tkb_array *a, const tkb_init *init, uint64_t seed,
                               uint64_t stream, fill_plan *p);

#endif /* TKB_FILL_PLAN_H */
