/*
 * replication.c - the interval a result reports, and what it promises: where the median
 * of a rerun of the same entry on the same machine lands, about 95% of the time.
 *
 * The interval of the median from one run's samples (ci.c) describes those samples:
 * thousands of calls in one process make it a few thousandths of a percent wide, while
 * a rerun, in another process and a few seconds later, landed 0.3-0.4% away (busy loops
 * of 4 us to 400 us on a 2-core Xeon VM, 2026; far more when the machine changes speed). What a rerun changes, one run's calls cannot show. So the
 * reported half-width, on each side, is the largest of:
 *
 *   samples      the interval of the median from the samples (order statistics, or the
 *                two-level bootstrap over experiments), times sqrt(2): a rerun's median
 *                carries the same sampling error again, and the difference of two of
 *                them has twice the variance of one
 *   experiments  with E >= 2 experiments, Student's t (95%, E - 1 degrees of freedom)
 *                times their medians' standard deviation times sqrt(2 / E): the
 *                prediction interval of the next run's mean of E experiment medians.
 *                Experiments are spaced in time and each runs on a stack shifted by a
 *                fresh offset (session.c), so drift, other load and part of the layout
 *                vary between them as between runs; with few experiments t is large (4.3
 *                for 3), as it must be for so few looks at that variance
 *   clock        the clock's tick over the calls of a sample: no interval is narrower
 *                than what the clock can tell apart
 *   layout       TKB__LAYOUT_FLOOR of the median: what differs between processes and
 *                moments that the experiments of one process do not see: the addresses
 *                ASLR draws once per process (pyperf runs many workers because they move
 *                code that touches memory by up to a few percent), and a machine's drift
 *                slower than one entry's run. On a steady machine, busy loops of 1-40 us
 *                reran within 0.02% and a 400 us loop within 0.8-1.1% (its median among
 *                its preempted calls at load 15); 0.5% lies between
 *                (bench/bench_intervals, docs/PERFORMANCE.md). Counts (the instructions
 *                method) do not move with the layout's timing: no floor for them
 *
 * It still narrows as more is measured (more calls shrink the first, more experiments
 * the second) down to the floors, and it is never of zero width. Which term set it is
 * recorded (interval_bound in the metadata). The ci stopping rule's convergence asks
 * this interval to be within its target, so a run whose experiments disagree, or whose
 * target is below the layout floor, says it did not converge.
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Student's t, two-sided 95% (the 0.975 quantile), for df degrees of freedom. */
static double student_t975(int df) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return INFINITY;
  if (df <= (int)(sizeof table / sizeof table[0])) return table[df - 1];
  /* Cornish-Fisher expansion about the normal quantile: within 0.001 from 30 up */
  const double z = TKB__CI_Z, d = df;
  return z + (z * z * z + z) / (4 * d) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

/* The standard deviation of the experiments' medians (sorting each experiment's copy);
 * NaN when out of memory. */
static double experiment_spread(const tkb__samples *s) {
  int longest = 0;
  for (int e = 0; e < s->experiments; e++) {
    const int n = s->experiment_end[e] - (e ? s->experiment_end[e - 1] : 0);
    if (n > longest) longest = n;
  }
  double *tmp = malloc((size_t)(longest ? longest : 1) * sizeof *tmp);
  if (!tmp) return NAN;
  double sum = 0, sum2 = 0;
  int counted = 0;
  for (int e = 0; e < s->experiments; e++) {
    const int begin = e ? s->experiment_end[e - 1] : 0, n = s->experiment_end[e] - begin;
    if (n == 0) continue;
    memcpy(tmp, s->ms + begin, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, tkb__cmp_double);
    const double med = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
    sum += med;
    sum2 += med * med;
    counted++;
  }
  free(tmp);
  if (counted < 2) return 0;
  const double mean = sum / counted;
  return sqrt(fmax(0, (sum2 - counted * mean * mean) / (counted - 1)));
}

tkb_status tkb__replication_interval(const tkb__samples *s, tkb__ci *out) {
  tkb_status st = tkb__median_ci(s->ms, s->experiment_end, s->experiments, out);
  out->bound = "samples";
  if (st || out->too_few || !(out->median >= 0)) return st;
  const double m = out->median;
  double lo = sqrt(2.0) * (m - out->low), hi = sqrt(2.0) * (out->high - m);
  const char *lo_by = "samples", *hi_by = "samples";
  double terms[3] = {0, s->resolution_ms, s->counted ? 0 : TKB__LAYOUT_FLOOR * m};
  static const char *const names[3] = {"experiments", "clock", "layout floor"};
  int counted = 0;
  for (int e = 0; e < s->experiments; e++)
    counted += s->experiment_end[e] > (e ? s->experiment_end[e - 1] : 0);
  if (counted >= 2) {
    const double sd = experiment_spread(s);
    if (!(sd >= 0)) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the medians of %d experiments",
                                         s->experiments);
    terms[0] = student_t975(counted - 1) * sd * sqrt(2.0 / counted);
  }
  for (int k = 0; k < 3; k++) {
    if (terms[k] > lo) lo = terms[k], lo_by = names[k];
    if (terms[k] > hi) hi = terms[k], hi_by = names[k];
  }
  out->low = fmax(0, m - lo);
  out->high = m + hi;
  out->bound = hi >= lo ? hi_by : lo_by;
  return TKB_OK;
}
