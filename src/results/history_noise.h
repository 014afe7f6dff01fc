/*
 * history_noise.h - the noise band an entry's own history shows on one machine: how far
 * apart two runs of unchanged code land there, learned from the results store, so that a
 * comparison of a new run with an earlier one (`compare --history`, `ab --history`) calls
 * a change only where it exceeds what that machine does by itself between runs.
 * Internal to the library; reads the store, prints nothing.
 *
 * WHY A BAND PER ENTRY. A run's own interval sees the noise within the run; two runs made
 * one after the other also differ by what changed in between (a neighbour's job, a warmer
 * chip, another placement in memory), which on a shared machine is the larger part and
 * differs from entry to entry (a 15 us loop suffers more from a scheduler tick than a
 * 10 ms one). `compare` without history knows neither, and calls 40% of the entries of
 * two runs of one build changed on a loaded machine (docs/PERFORMANCE.md). The store
 * holds each entry's medians over many runs: their spread is that between-run noise.
 *
 * THE ESTIMATE, per entry: the log medians of its newest `runs` runs on the machine (ok
 * results only), cut to those after the last step its code took (a change point the
 * machine's other entries did not share, trend.h), so that a change of the code is not
 * taken for noise. A step the machine took is kept: a shared machine moves between
 * regimes (its clock, a neighbour's job; on the 2-core VM of docs/PERFORMANCE.md, all
 * entries by 8% at once for a few runs), and exactly those moves are what two runs made
 * one after the other differ by. From the m log medians left, the larger of two
 * half-widths, each meant to hold the log ratio of two runs of unchanged code with
 * probability `level`:
 *  - the pairs' quantile: the `level` quantile of |log x_i - log x_j| over all pairs,
 *    which sees a mixture of regimes as it is (the few runs in another regime set the
 *    tail), where any spread statistic would call the majority's regime the noise;
 *  - the robust normal band: exp(t x sqrt(2) x s) - 1 with s = 1.4826 x MAD bias-corrected
 *    for small counts (Croux and Rousseeuw's factors) and t Student's quantile
 *    (1 + level) / 2 with m - 1 degrees of freedom, which pays for s resting on few runs
 *    where the pairs' quantile is little more than their largest difference.
 * An entry with fewer than min_runs such runs gets no band (NaN), and says how many it
 * had. What no estimate can do: a regime the history never showed (a quiet month, then a
 * loaded day) is not in the band.
 */
#ifndef TKB_RESULTS_HISTORY_NOISE_H
#define TKB_RESULTS_HISTORY_NOISE_H

#include "history.h"

typedef struct tkb__noise_opts {
  size_t runs;     /* the machine's newest runs looked at, [2, 100000]; default 20 */
  size_t min_runs; /* steady runs an entry needs for a band, [3, runs]; default 5 */
  double level;    /* the band's two-sided coverage, (0.5, 1); default 0.95 */
} tkb__noise_opts;

/* The defaults above. */
tkb__noise_opts tkb__noise_defaults(void);

/* One entry's band. */
typedef struct tkb__noise_band {
  const char *name;
  double band;     /* the half-width, a fraction (0.031: +-3.1%); NaN: too few runs */
  double spread;   /* s, the robust standard deviation of the log medians; NaN as band */
  double pairs;    /* the pairs' quantile as a fraction (exp(q) - 1); NaN as band */
  size_t runs;     /* the runs it was learned from (or found, when too few) */
  size_t stepped;  /* older runs left out because the code stepped after them */
} tkb__noise_band;

typedef struct tkb__noise_bands {
  tkb__noise_band *items; /* by name */
  size_t n;
  size_t runs;            /* the machine's runs looked at */
  void *storage;
} tkb__noise_bands;

/* The band of every entry that has a result in the newest o->runs runs of machine (a
 * key) in h. opts NULL: the defaults. TKB_ERR_INVALID_ARGUMENT naming an option outside
 * its range; TKB_ERR_NOT_FOUND for a machine the store does not hold (its message lists
 * those it holds); the store's errors; TKB_ERR_OUT_OF_MEMORY. Free out either way. */
tkb_status tkb__noise_learn(tkb__history *h, const char *machine, const tkb__noise_opts *opts,
                            tkb__noise_bands *out);
/* The entry named name, or NULL. */
const tkb__noise_band *tkb__noise_band_find(const tkb__noise_bands *b, const char *name);
void tkb__noise_bands_free(tkb__noise_bands *b);

/* The statistics, for tests and benches: the bias-corrected robust standard deviation of
 * x[0..n) (n >= 2; x is reordered), and the robust normal band it gives (NaN for fewer
 * than 2 runs); the level quantile of |x_i - x_j| over the pairs of x[0..n) (linear
 * between order statistics; NaN for fewer than 2; TKB_ERR_OUT_OF_MEMORY leaves NaN). */
double tkb__noise_robust_sd(double *x, size_t n);
double tkb__noise_band_of(double spread, size_t runs, double level);
double tkb__noise_pairs_quantile(const double *x, size_t n, double level);

#endif
