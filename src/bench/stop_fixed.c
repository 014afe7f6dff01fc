/*
 * stop_fixed.c - Tokamax's rule: `experiments` experiments of `iterations` timed calls
 * each (tkb_bench_opts), whatever the samples say. The library's default, so that API
 * users get Tokamax's semantics; it always "converges", since it has no goal to miss.
 */
#include "bench.h"

typedef struct fixed_state {
  int iterations, experiments;
  int in_experiment; /* samples taken in the current experiment */
} fixed_state;

static void fixed_reset(void *state, const double *values, const tkb_bench_opts *o) {
  (void)values;
  *(fixed_state *)state = (fixed_state){.iterations = o->iterations, .experiments = o->experiments};
}

static tkb__verdict fixed_add(void *state, const tkb__sample *s, const tkb__samples *so_far) {
  (void)so_far;
  fixed_state *f = state;
  if (++f->in_experiment < f->iterations) return TKB__GO_ON;
  f->in_experiment = 0;
  return s->experiment + 1 < f->experiments ? TKB__NEXT_EXPERIMENT : TKB__STOP;
}

static size_t fixed_max_samples(const void *state) {
  const fixed_state *f = state;
  return (size_t)f->iterations * (size_t)f->experiments;
}

static bool fixed_converged(const void *state) {
  (void)state;
  return true;
}

const tkb__stop_rule tkb__stop_fixed = {
    .name = "fixed",
    .help = "Tokamax's: `iterations` timed calls in each experiment",
    .state_size = sizeof(fixed_state),
    .reset = fixed_reset,
    .add = fixed_add,
    .max_samples = fixed_max_samples,
    .converged = fixed_converged,
    .takes_iterations = true,
};
