/*
 * stop_ci.c - the `ci` rule: each experiment takes calls until the 95% confidence
 * interval of its median (order statistics, ci.c) lies within +-max_noise of it, after
 * its share of min_samples samples and min_time seconds of timed work, and within its
 * share of max_time seconds of wall time. Experiments keep their meaning and their
 * number (tkb_bench_opts.experiments: spaced groups of calls, against throttling and
 * drift, and Google Benchmark's repetitions); the rule decides how many calls each
 * takes, as Google Benchmark grows its iterations within each repetition.
 *
 * After the last experiment the interval the result reports is taken (replication.c:
 * where a rerun's median lands, from the calls, the spread of the experiments' medians,
 * the clock's tick and the layout floor), and the rule has converged when every
 * experiment narrowed in time and that interval too is within +-max_noise: experiments
 * that disagree (the machine changed between them), or a target below the layout floor,
 * leave it unconverged, however many calls each took, and the result says so. Unlike a relative-stddev rule (nvbench's stdrel),
 * the interval of the median is robust to the preempted calls that make the standard
 * deviation useless on a shared machine. Calls too short for the host clock are timed
 * in batches (bench.h).
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const tkb__stop_param ci_params[] = {
    {"max_noise", 0.01, 1e-5, 1, "half-width of the median's 95% interval the rule stops at, "
                                 "as a fraction of the median (1% is 0.01 or 1%)"},
    {"min_samples", 10, 1, 1e8, "samples, over all experiments, before an interval is checked"},
    {"min_time", 0.5, 0, 3600, "seconds of timed work, over all experiments, before an "
                               "interval is checked"},
    {"max_time", 10, 0.001, 86400, "seconds of wall time for all experiments, after which the "
                                    "rule stops, converged or not"},
};
enum { MAX_NOISE, MIN_SAMPLES, MIN_TIME, MAX_TIME };

typedef struct ci_state {
  double max_noise, max_time_ns, min_samples, min_work_ms;
  int experiments;
  double quota_samples, quota_ms; /* each experiment's share of the minimum */
  /* the experiment in progress */
  int current;
  double in_experiment, work_ms, next_check;
  int64_t started_ns;             /* elapsed when it began */
  /* all of them */
  double samples, total_work_ms;
  int narrowed;                   /* experiments that reached the target in their time */
  bool converged, out_of_time;
} ci_state;

static void ci_reset(void *state, const double *v, const tkb_bench_opts *o) {
  const int e = o->experiments > 0 ? o->experiments : 1;
  *(ci_state *)state = (ci_state){.max_noise = v[MAX_NOISE],
                                  .max_time_ns = v[MAX_TIME] * 1e9,
                                  .min_samples = v[MIN_SAMPLES],
                                  .min_work_ms = v[MIN_TIME] * 1e3,
                                  .experiments = e,
                                  .quota_samples = ceil(v[MIN_SAMPLES] / e),
                                  .quota_ms = v[MIN_TIME] * 1e3 / e};
}

static bool within(const ci_state *c, const tkb__ci *ci) {
  return !ci->too_few && ci->low >= ci->median * (1 - c->max_noise) &&
         ci->high <= ci->median * (1 + c->max_noise);
}

/* The interval of experiment e's samples alone is narrow enough. */
static bool experiment_narrow(const ci_state *c, const tkb__samples *s, int e) {
  const int begin = e ? s->experiment_end[e - 1] : 0;
  const int end[1] = {s->experiment_end[e] - begin};
  tkb__ci ci;
  /* out of memory counts as not narrow: the rule goes on until its time is up */
  return tkb__median_ci(s->ms + begin, end, 1, &ci) == TKB_OK && within(c, &ci);
}

/* The interval the result will report (replication.c) is narrow enough. */
static bool all_narrow(const ci_state *c, const tkb__samples *s) {
  tkb__ci ci;
  return tkb__replication_interval(s, &ci) == TKB_OK && within(c, &ci);
}

static tkb__verdict ci_add(void *state, const tkb__sample *s, const tkb__samples *so_far) {
  ci_state *c = state;
  if (s->experiment != c->current || c->in_experiment == 0) {
    c->current = s->experiment;
    c->in_experiment = c->work_ms = 0;
    c->next_check = 0;
    c->started_ns = s->elapsed_ns - (int64_t)(s->ms * so_far->batch * 1e6);
  }
  c->in_experiment++;
  c->samples++;
  c->work_ms += s->ms * so_far->batch;
  c->total_work_ms += s->ms * so_far->batch;
  /* this experiment's share of what is left of max_time */
  const int left = c->experiments - s->experiment;
  const double budget_ns = (c->max_time_ns - (double)c->started_ns) / (left > 0 ? left : 1);
  const bool out_of_time = (double)(s->elapsed_ns - c->started_ns) >= budget_ns ||
                           (double)s->elapsed_ns >= c->max_time_ns;
  const bool quota = c->in_experiment >= c->quota_samples && c->work_ms >= c->quota_ms;
  if (!out_of_time && (!quota || c->in_experiment < c->next_check)) return TKB__GO_ON;
  const bool narrow = experiment_narrow(c, so_far, s->experiment);
  if (!narrow && !out_of_time) {
    c->next_check = ceil(c->in_experiment * 1.25); /* geometric: sorting stays O(n log n) */
    return TKB__GO_ON;
  }
  c->narrowed += narrow;
  c->out_of_time |= out_of_time && !narrow;
  c->in_experiment = 0;
  if (s->experiment + 1 < c->experiments) return TKB__NEXT_EXPERIMENT;
  /* stopped by max_time before the minimum: not converged, however narrow */
  c->converged = c->narrowed == c->experiments && c->samples >= c->min_samples &&
                 c->total_work_ms >= c->min_work_ms * (1 - 1e-12) && all_narrow(c, so_far);
  return TKB__STOP;
}

static size_t ci_max_samples(const void *state) {
  (void)state;
  return 0; /* as many as the interval needs */
}

static bool ci_converged(const void *state) { return ((const ci_state *)state)->converged; }

static double ci_target(const void *state) { return ((const ci_state *)state)->max_noise; }

static bool ci_timed_out(const void *state) { return ((const ci_state *)state)->out_of_time; }

const tkb__stop_rule tkb__stop_ci = {
    .name = "ci",
    .help = "each experiment takes calls until its median's 95% interval is within "
            "+-max_noise of it, after min_samples and min_time and within max_time (each "
            "shared by the experiments)",
    .params = ci_params,
    .n_params = sizeof ci_params / sizeof ci_params[0],
    .state_size = sizeof(ci_state),
    .reset = ci_reset,
    .add = ci_add,
    .max_samples = ci_max_samples,
    .converged = ci_converged,
    .batches = true,
    .target = ci_target,
    .timed_out = ci_timed_out,
};
