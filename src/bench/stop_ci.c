/*
 * stop_ci.c - the `ci` rule: sample until the 95% confidence interval of the median
 * (ci.c) lies within +-max_noise of the median, after at least min_samples samples and
 * min_time seconds of timed work, and never past max_time seconds of wall time for the
 * entry; reached or not, the result says which (converged).
 *
 * Experiments keep their meaning (groups of calls spaced in time, against throttling and
 * drift): tkb_bench_opts.experiments is their minimum, and each experiment takes an equal
 * share of min_samples and min_time. Once that minimum is done, the interval is checked
 * at the end of each experiment, and while it is too wide another experiment of the same
 * size follows, so the extra calls are spread over time too and the two-level bootstrap
 * sees the experiments disagree when they do. Unlike a relative-stddev rule (nvbench's
 * stdrel), the interval of the median is robust to the preempted calls that make the
 * standard deviation useless on a shared machine. Calls too short for the host clock are
 * timed in batches (bench.h).
 */
#include "bench.h"

#include <math.h>

static const tkb__stop_param ci_params[] = {
    {"max_noise", 0.01, 1e-5, 1, "half-width of the median's 95% interval the rule stops at, "
                                 "as a fraction of the median (1% is 0.01 or 1%)"},
    {"min_samples", 10, 1, 1e8, "samples before the interval is first checked"},
    {"min_time", 0.5, 0, 3600, "seconds of timed work before the interval is first checked"},
    {"max_time", 10, 0.001, 86400, "seconds of wall time after which the rule stops, converged "
                                    "or not"},
};
enum { MAX_NOISE, MIN_SAMPLES, MIN_TIME, MAX_TIME };

typedef struct ci_state {
  double max_noise, max_time_ns;
  int experiments;        /* the minimum */
  double quota_samples;   /* per experiment */
  double quota_ms;        /* timed work per experiment */
  double in_experiment, work_ms;
  double min_samples, min_work_ms; /* before the interval may count as narrow */
  double samples, total_work_ms;
  bool converged;
} ci_state;

static void ci_reset(void *state, const double *v, const tkb_bench_opts *o) {
  const int e = o->experiments > 0 ? o->experiments : 1;
  *(ci_state *)state = (ci_state){.max_noise = v[MAX_NOISE],
                                  .max_time_ns = v[MAX_TIME] * 1e9,
                                  .experiments = e,
                                  .quota_samples = ceil(v[MIN_SAMPLES] / e),
                                  .quota_ms = v[MIN_TIME] * 1e3 / e,
                                  .min_samples = v[MIN_SAMPLES],
                                  .min_work_ms = v[MIN_TIME] * 1e3};
}

/* The interval of every sample so far lies within +-max_noise of the median. */
static bool narrow_enough(const ci_state *c, const tkb__samples *so_far) {
  tkb__ci ci;
  if (tkb__median_ci(so_far->ms, so_far->experiment_end, so_far->experiments, &ci) != TKB_OK)
    return false; /* out of memory: go on until max_time, which reports it unconverged */
  return !ci.too_few && ci.low >= ci.median * (1 - c->max_noise) &&
         ci.high <= ci.median * (1 + c->max_noise);
}

static tkb__verdict ci_add(void *state, const tkb__sample *s, const tkb__samples *so_far) {
  ci_state *c = state;
  c->in_experiment++;
  c->samples++;
  c->work_ms += s->ms * so_far->batch;
  c->total_work_ms += s->ms * so_far->batch;
  const bool quota = c->in_experiment >= c->quota_samples && c->work_ms >= c->quota_ms;
  const bool out_of_time = (double)s->elapsed_ns >= c->max_time_ns;
  if (!quota && !out_of_time) return TKB__GO_ON;
  c->in_experiment = c->work_ms = 0;
  if (s->experiment + 1 < c->experiments && !out_of_time) return TKB__NEXT_EXPERIMENT;
  /* stopped by max_time before the minimum: not converged, however narrow */
  c->converged = c->samples >= c->min_samples && c->total_work_ms >= c->min_work_ms * (1 - 1e-12) &&
                 narrow_enough(c, so_far);
  return c->converged || out_of_time ? TKB__STOP : TKB__NEXT_EXPERIMENT;
}

static size_t ci_max_samples(const void *state) {
  (void)state;
  return 0; /* as many as the interval needs */
}

static bool ci_converged(const void *state) { return ((const ci_state *)state)->converged; }

static double ci_target(const void *state) { return ((const ci_state *)state)->max_noise; }

const tkb__stop_rule tkb__stop_ci = {
    .name = "ci",
    .help = "until the median's 95% interval is within +-max_noise of it (min_samples, "
            "min_time first; max_time at most)",
    .params = ci_params,
    .n_params = sizeof ci_params / sizeof ci_params[0],
    .state_size = sizeof(ci_state),
    .reset = ci_reset,
    .add = ci_add,
    .max_samples = ci_max_samples,
    .converged = ci_converged,
    .batches = true,
    .target = ci_target,
};
