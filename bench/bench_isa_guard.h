/*
 * bench_isa_guard.h - the path check of the bench programs that measure cpu kernels
 * (bench_init, bench_normalization, bench_attention, bench_matmul_ops, bench_lsce):
 * each also measures its op on the next-lower cpu kernel path of the same machine
 * (avx512 -> avx2 -> portable; neon -> portable), in the same rounds, and fails when the path it measures
 * is the slower by more than ISA_GUARD_MARGIN. A larger instruction set that loses to a
 * smaller one on the same CPU is a regression of its kernels (or of what they are
 * built with), whatever the target ratios say: the avx512 GLU lost to the avx2 one on a
 * Zen 4 and nothing failed.
 *
 * The paths are switched in process (tkb__cpu_isa_set, src/core/internal.h), between
 * calls. Each path's function is standardized and compiled (its prepare hook run) while
 * that path is set, since prepare may size things for it (attention's tiles); the
 * rounds alternate the two so that load from elsewhere hits both alike. On the portable
 * path there is nothing below, and the check says so. TKB_CPU_ISA still picks the path
 * measured; the check is the one below that.
 */
#ifndef TKB_BENCH_ISA_GUARD_H
#define TKB_BENCH_ISA_GUARD_H

#include "internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* Slower by more than this fraction fails: above the run-to-run spread of these
 * programs' medians (a few percent on a quiet machine), below any regression worth the
 * name (the Zen 4 GLU lost by 20-40%). */
#define ISA_GUARD_MARGIN 0.10

typedef struct isa_guard {
  tkb__isa high, low; /* the path measured and the one below it */
  bool active;        /* false on the portable path */
  int failures;
} isa_guard;

static inline isa_guard isa_guard_make(void) {
  isa_guard g = {.high = tkb__cpu_isa()};
  g.low = tkb__isa_below(g.high);
  g.active = g.low != g.high;
  return g;
}

/* Sets the path for what follows (compiling, or a round). */
static inline void isa_guard_use(tkb__isa isa) {
  if (tkb__cpu_isa_set(isa, true) != TKB_OK) {
    fprintf(stderr, "path check: %s\n", tkb_last_error());
    exit(1);
  }
}

/* Prints the comparison of one figure (times, lower is faster; what == NULL: nothing
 * printed, for a program printing JSON) and counts a failure. */
static inline void isa_guard_report(isa_guard *g, const char *what, double t_high,
                                    double t_low) {
  if (!g->active) return;
  const double slower = t_high / t_low - 1;
  const bool fail = !(slower <= ISA_GUARD_MARGIN);
  if (fail) g->failures++;
  if (!what) return;
  printf("    path check %s: %s %.3f ms, %s %.3f ms: %s\n", what, tkb__isa_name(g->high),
         t_high, tkb__isa_name(g->low), t_low,
         fail ? "FAIL (the larger instruction set is slower)" : "PASS");
}

/* The closing line; returns the failures. */
static inline int isa_guard_summary(const isa_guard *g) {
  if (!g->active)
    printf("path check: none (the portable path has no smaller one)\n");
  else
    printf("path check: %s against %s, %d figure(s) slower by more than %.0f%%: %s\n",
           tkb__isa_name(g->high), tkb__isa_name(g->low), g->failures,
           100 * ISA_GUARD_MARGIN, g->failures ? "FAIL" : "PASS");
  return g->failures;
}

#endif /* TKB_BENCH_ISA_GUARD_H */
