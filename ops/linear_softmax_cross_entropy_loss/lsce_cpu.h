/*
 * lsce_cpu.h - what the files of linear_softmax_cross_entropy_loss's cpu implementation
 * share: cpu.c (the blocking, the prepared workspaces and the hooks) and the kernels
 * (cpu_kernels.h, compiled per instruction set by cpu_<isa>.c). Internal.
 */
#ifndef TKB_OP_LSCE_CPU_H
#define TKB_OP_LSCE_CPU_H

#include "internal.h"
#include "lsce.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <string.h>

/* The prepared state: blocking and workspaces (cpu.c says how they are sized). */
typedef struct cpu_state {
  lsce_plan p;
  tkb_device *dev;
  void *block;
  size_t bytes;
  int nthreads; /* threads the per-thread workspaces were made for */
  /* forward: chunks of fvc columns in ngroups groups; row blocks of fbc */
  int64_t fvc, fbc, ngroups;
  void *f_w, *f_x, *f_logits;            /* per thread: [Hd, fvc], [fbc, Hd], [fbc, fvc] */
  int64_t f_w_n, f_x_n, f_logits_n;      /* their elements per thread */
  void *g_m, *g_s, *g_lab;               /* [ngroups, B] online logsumexp state */
  double *row_loss;                      /* [B] */
  /* vjp: chunks of vvc columns; row blocks of vbc; slices of vks columns of x over
   * superblocks of vbk rows */
  int64_t vvc, vbc, vks, vbk;
  void *v_w, *v_dw, *v_d;                /* [Hd, vvc], [Hd, vvc], [B, vvc] */
  void *v_x, *v_xs;                      /* per thread: [vbc, Hd], [vbk, vks] */
  int64_t v_x_n, v_xs_n;
  void *dx_acc;                          /* [B, Hd] */
} cpu_state;

/* The forward and vjp of one instruction set (cpu_kernels.h for float32 and float64
 * math, compiled by cpu_<isa>.c), which cpu.c picks by tkb__cpu_isa(): the loss (and lse
 * when not NULL); dx and dw (each NULL when not wanted). nt: the threads to run on. */
typedef struct lsce_cpu_kernels {
  void (*forward_f32)(const cpu_state *s, const lsce_call *c, float *loss, float *lse, int nt);
  void (*forward_f64)(const cpu_state *s, const lsce_call *c, double *loss, double *lse,
                      int nt);
  void (*vjp_f32)(const cpu_state *s, const lsce_call *c, const float *lse, float dloss,
                  tkb_array *dx, tkb_array *dw, int nt);
  void (*vjp_f64)(const cpu_state *s, const lsce_call *c, const double *lse, double dloss,
                  tkb_array *dx, tkb_array *dw, int nt);
} lsce_cpu_kernels;

TKB_ISA_DECLARE(lsce_cpu_kernels, tkb__lsce_cpu_kernels);

#endif /* TKB_OP_LSCE_CPU_H */
