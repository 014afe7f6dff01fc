/*
 * changepoint.h - change points in a history of results: where the median of one entry
 * stepped, by how much, how sure that is, and whether the entry's code or its machine
 * moved. Internal to the library; pure computation (no I/O, no store, no printing),
 * reentrant, and deterministic given the seed.
 *
 * THE SERIES. One entry's run medians on one machine, in time order, all finite and > 0
 * (the caller leaves out runs that have no median: a NaN, an Inf, 0 or a negative value
 * is refused with TKB_ERR_INVALID_ARGUMENT naming its index, never skipped, because a
 * skipped point would shift every index reported after it). The work is on log(value),
 * so a step is relative: +5% is the same step at 10 us and at 10 s. Each run's own
 * confidence interval is not taken: the spread between runs, which the test below sees
 * directly, already contains each run's own uncertainty and on a shared machine exceeds
 * it (METHODOLOGY.md: experiments disagree more than calls within one), so weighting by
 * the within-run width would trust a run's narrow interval more than the series shows it
 * deserves.
 *
 * THE METHOD: E-divisive's search and test (Matteson and James 2014, as MongoDB's signal
 * processing and Apache Otava run it), with a robust statistic at several window sizes.
 *  1. Split: in a segment (at first the whole series), every split point tau leaving at
 *     least min_segment points on each side is scored by the standardised difference of
 *     the mean scores on its two sides, z = (mean right - mean left) / sd, at several
 *     window sizes: the whole segment on each side, and windows of 2, 4, 8, ... times
 *     min_segment points each side (below half the segment). The best (tau, window) is
 *     the candidate.
 *  2. Test: the segment's scores are permuted `permutations` times and the best |z| of
 *     each permutation recomputed; p = (1 + permutations at least as extreme) /
 *     (1 + permutations). The maximum over splits and windows is what is permuted, so
 *     the choice of the split is paid for: on a steady series the first test alone
 *     decides, and any change point is reported in at most `alpha` of them, whatever the
 *     shape of the noise. A test stops early once it can no longer reach alpha.
 *  3. Recurse: the candidate with the largest |z| among the segments not yet settled is
 *     tested next; a significant one splits its segment in two, which become candidates
 *     in turn; a segment whose candidate fails is settled. At most max_change_points.
 *  4. Place and report: each split is placed by the L1 cost ("where exactly", below)
 *     before its two sides are searched in turn. From left to right the change points
 *     cut the series into segments; the change point whose two segments' medians differ
 *     least is dropped while that difference is below min_step (its two segments
 *     merge), then each survivor gets its step and interval (below).
 * Scores: within a segment, each log value's distance from the segment's median in units
 * of its robust standard deviation (1.4826 x MAD; the mean absolute deviation when more
 * than half the values are equal), clipped to +-3 and centred. Permuting them tests
 * exactly (the scores depend on the segment's values, not on their order).
 *
 * WHY THIS, NOT THE ALTERNATIVES.
 *  - PELT (or asv's L1 dynamic programming) minimises cost + penalty x segments: its
 *    false alarm rate depends on a penalty tuned to the noise scale, the noise shape and
 *    the series length, and it yields no p-value. The permutation test yields one whose
 *    false alarm rate holds by construction for lognormal noise, outliers and quantised
 *    clocks alike.
 *  - E-divisive's own statistic, the energy distance, needs every pairwise |y_i - y_j|:
 *    O(n^2) per permutation as MongoDB computes it, O(n log n) at best with sorted sums,
 *    against O(n) per window size here (prefix sums), and the ~1,000 permutations of
 *    each test are most of the cost. It also reacts to a change of spread (a noisy week
 *    on a shared machine) as it does to a step of the level; a difference of mean
 *    scores reacts to the level.
 *  - Ranks (a Mann-Whitney statistic) would be as robust but cap the effect of a short
 *    step: 5 runs 50% slower at the end of 100 are the 5 top ranks whatever the size of
 *    the step, z = 3.8, which steady series of 100 points reach in about 1% of cases
 *    (the maximum over the splits and windows). Clipped scores keep moderate steps at
 *    full size, a point counting up to 3 sd (those 5 runs give z = 6.0), and limit what
 *    a 3x outlier (55 sd at 2% noise) adds to 3 sd.
 *  - The windows: a split of the whole segment sees a temporary regression (slower for
 *    10 runs, then fixed) poorly, since its two ends cancel: z = 2.6 for 10 runs 5%
 *    slower in the middle of 100 at 2% noise. A window of 10 runs each side sees it
 *    whole, z = 4.7, above the 4.0 that steady series reach in 1% of cases. Otava runs
 *    E-divisive in sliding windows of 50 points, which also sees such steps.
 *  - Where exactly: the test's best split is moved to where the two sides' summed
 *    absolute distances from their own medians are least (asv's L1 cost), within half
 *    its window. An outlier beside the step pulls the mean-based split by up to 3 sd,
 *    the L1 one by at most the step. On bench_changepoint's series (+5% at point 60 of
 *    100, 2% noise, 1% outliers at 3x) it places 1.2% of 2,000 steps more than 3 points
 *    off, against 3.0% without it.
 * Assumed: under no change, a series' points are exchangeable (independent noise around
 * one level). Slow drift or noise that is correlated from run to run violates that and
 * yields extra change points; min_step keeps those that are too small to matter out of
 * the report.
 *
 * THE STEP: ratio = after / before, the segments' medians (exp of the median of the logs:
 * the plain median for an odd count, the geometric mean of the middle two for an even
 * one), with a 95% percentile bootstrap interval: `resamples` times, each segment is
 * resampled with replacement and the ratio of the two resampled medians taken (seeded).
 *
 * COST: each test is permutations x (n + n x window sizes) operations, so about
 * 2 x permutations x n x log2(n / min_segment) per change point found, plus resamples x
 * n for its interval; steady segments stop after a few dozen permutations. Measured
 * (bench_changepoint, defaults): 1.4 ms of CPU for 200 points with one step, 15 ms for
 * 1,000 points with three. Memory: O(n log n) doubles.
 */
#ifndef TKB_CHANGEPOINT_H
#define TKB_CHANGEPOINT_H

#include "tkbench.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How change points are looked for; tkb__changepoint_defaults() gives the defaults. */
typedef struct tkb__changepoint_options {
  /* Points on each side of a change, [2, 10000]; default 5. Smaller finds a regression
   * sooner after it lands (a step is found once min_segment runs follow it) at the cost
   * of more splits that a few unlucky runs can make significant. */
  size_t min_segment;
  /* Significance level of each split's permutation test, (0, 0.5]; default 0.01: on a
   * steady series a change point is reported in at most 1% of cases, so a store of
   * 1,000 steady entries shows about 10 false steps (0.05 would show 50). */
  double alpha;
  /* The smallest step reported, as a relative change |ratio - 1| (a step down counts
   * as 1/ratio - 1, so +-x are equally large), [0, 1]; default 0.01 (the 1% noise band
   * of `compare`). A significant change smaller than this is not reported and its two
   * segments are merged. */
  double min_step;
  /* Seeds the permutations and the bootstrap: the same series and options give the
   * same result, whatever the order or thread of the calls; default 0x6368616e6765. */
  uint64_t seed;
  /* Change points found at most, [1, 1000]; default 16 (the strongest first: the
   * search stops there). `out` of tkb__changepoints_find holds this many. */
  size_t max_change_points;
  /* Permutations per test, [ceil(1/alpha) - 1, 1000000]; default 999. p can be no
   * smaller than 1 / (permutations + 1), so fewer than 1/alpha - 1 could never reach
   * alpha. */
  size_t permutations;
  /* Bootstrap resamples of each step's interval, [100, 1000000]; default 1000. */
  size_t resamples;
} tkb__changepoint_options;

/* The defaults above. */
tkb__changepoint_options tkb__changepoint_defaults(void);

/* One change point of a series. */
typedef struct tkb__changepoint {
  size_t index;      /* the first point after the change */
  size_t begin;      /* the segment before it: points [begin, index) */
  size_t end;        /* the segment after it: points [index, end) */
  double before;     /* the two segments' medians, in the values' unit */
  double after;
  double ratio;      /* after / before: above 1 is slower when the values are times */
  double ratio_low;  /* its 95% bootstrap interval */
  double ratio_high;
  double p_value;    /* the permutation test of the split in the segment it was found in:
                        in [1 / (permutations + 1), alpha] */
} tkb__changepoint;

/* Finds the change points of values[0..n) (in time order, finite and > 0), writes them
 * to out[0..*found) in increasing index (out holds opts->max_change_points entries), and
 * returns TKB_OK. opts NULL: the defaults. A series shorter than 2 x min_segment, or
 * without spread, has none (TKB_OK, *found = 0); values may be NULL when n is 0.
 * Errors: TKB_ERR_INVALID_ARGUMENT naming the value (its index) that is not finite and
 * > 0, or the option outside its range (its name, value and range), or a NULL out or
 * found; TKB_ERR_OUT_OF_MEMORY. On an error *found is 0. */
tkb_status tkb__changepoints_find(const double *values, size_t n, const tkb__changepoint_options *opts,
                                  tkb__changepoint *out, size_t *found);

/*
 * CODE OR MACHINE. A step that many entries of one machine take at the same run is the
 * machine's (a new kernel, firmware, a thermal problem, another runner behind the same
 * name), not the code's, and should never fail a pull request. The rule, for one machine:
 *  - Runs are the machine's runs numbered 0, 1, 2, ... in time order (the store maps its
 *    run ids to these); each series says at which run each of its points was measured.
 *  - A change point at point `index` is at run r = run[index] and goes up (ratio > 1) or
 *    down (ratio < 1).
 *  - A series is *present* at run q when it was measured within `window` runs of q and
 *    has points both before q and at or after q (so it could show a step there).
 *  - A series *steps* at q in a direction when it is present at q and has a change point
 *    in that direction within `window` runs of q.
 *  - For a change point at run r, the machine's run q is the run within `window` of r
 *    where the most series step in its direction (the nearest to r on a tie): a step
 *    that moved every entry at one run is placed a run or two early or late in some of
 *    them, and all of those are within `window` of that one run.
 *  - The change point is labelled MACHINE when the series stepping at q in its direction
 *    are at least min_stepped and at least machine_share of the series present at q; or
 *    when the machine's peaks series (e.g. its measured FLOP/s or bandwidth, if the
 *    caller gives one) has a change point, in either direction, within `window` runs of
 *    r. Otherwise CODE.
 * Defaults: window 1 (two change points of one machine-wide step, each placed up to a
 * run from it, count together), machine_share 0.5, min_stepped 2. A machine change that
 * moves all of a machine's entries is labelled MACHINE wherever at least half of the
 * entries present are found within a run of one run; one entry that steps alone stays
 * CODE (another entry would have to step within a run in the same direction by chance,
 * and a few by chance do not reach half). bench_changepoint: 98% of the change points of
 * a +5% step in all 50 entries labelled MACHINE (the rest: those placed 3 runs off), 100% of
 * a lone one CODE. What the rule cannot tell apart: a code change that moves at least
 * half of a machine's entries the same way (a shared kernel) reads as the machine's,
 * unless the caller compares machines; a machine with one entry only ever has CODE
 * steps.
 */

typedef enum tkb__changepoint_cause {
  TKB__CAUSE_CODE = 0,
  TKB__CAUSE_MACHINE = 1,
} tkb__changepoint_cause;

/* One series of one machine as the labelling reads it. */
typedef struct tkb__changepoint_series {
  const size_t *run;                /* run[0..n): the run of each point, increasing, < runs */
  size_t n;                         /* points */
  const tkb__changepoint *points;   /* its change points (tkb__changepoints_find's) */
  size_t count;                     /* how many */
} tkb__changepoint_series;

typedef struct tkb__cause_options {
  size_t window;         /* runs either side that count as the same run, [0, 100]; 1 */
  double machine_share;  /* share of the present series that must step, (0, 1]; 0.5 */
  size_t min_stepped;    /* series that must step (the change point's own included),
                            [1, 1000000]; 2 */
} tkb__cause_options;

/* The defaults above. */
tkb__cause_options tkb__cause_defaults(void);

/* Why one change point: its cause and the counts that decided it. */
typedef struct tkb__changepoint_label {
  tkb__changepoint_cause cause;
  size_t run;           /* the run of the change point */
  size_t machine_run;   /* q: where the most series step its way, within the window */
  size_t stepped;       /* series stepping at q in its direction (0 for a ratio of 1) */
  size_t present;       /* series present at q */
  bool peaks_stepped;   /* the peaks series has a change point within the window of run */
} tkb__changepoint_label;

/* Labels every change point of series[0..count) (one machine, runs 0..runs-1), writing
 * labels in series order and, within a series, in its change points' order (labels holds
 * the sum of the series' counts). peaks: the machine's peaks series, or NULL. opts NULL:
 * the defaults. Errors: TKB_ERR_INVALID_ARGUMENT naming the series and what is wrong (a
 * run that does not increase or is not below runs, a change point's index outside
 * [1, n), a ratio that is not finite and > 0, a NULL array with a nonzero count, an
 * option outside its range); TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__changepoints_label(const tkb__changepoint_series *series, size_t count,
                                   const tkb__changepoint_series *peaks, size_t runs,
                                   const tkb__cause_options *opts, tkb__changepoint_label *labels);

#endif
