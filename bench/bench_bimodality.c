/*
 * bench_bimodality.c - does the bimodality warning tell the truth? The rule
 * (src/bench/distribution.c) on synthetic samples whose shape is known, many seeds each:
 *
 *   unimodal   one mode on a busy machine: a lognormal spread of sigma 0.5-20%, 2%
 *              half-normal jitter, and one call in ten preempted for a uniform share of
 *              up to its own time (a tail twice as dense at 2x as at 1x); 500 to 20,000
 *              calls. Every warning here is a false alarm.
 *   two modes  calls of 1x or r x the work (r = 1.2 to 4) in proportions of 10% to 90%,
 *              with the same jitter and preemption; 200 to 7,198 calls. Reported: how
 *              often found, and found with the split in the wrong place (the share of
 *              calls below it more than 10 points from the truth).
 *
 * PASS/FAIL: false alarms at most 1% of the unimodal sets; two modes at least 1.3x apart,
 * each at least 10% of the calls, found in at least 95% of the sets of 1,000 calls and
 * more. A rule change is judged by both lines: a stricter rule buys fewer false alarms
 * with misses. Synthetic: no timing, the load does not matter.
 *
 * usage: bench_bimodality [seeds]   (default 300: the unimodal sets per shape; a quarter
 *                                    of that per two-mode shape)
 */
#include "bench.h"

#include "../tests/synthetic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_CALLS 20000
#define MAX_FALSE_ALARMS 0.01
#define MIN_FOUND 0.95

static uint64_t stream;

/* A call of `mode` on a busy machine. */
static double busy_call(double mode) {
  double t = mode * (1 + fabs(0.02 * synth_normal01(&stream)));
  if (synth_uniform01(&stream) <= 0.1) t *= 1 + synth_uniform01(&stream);
  return t;
}

static bool bimodal_of(double *x, size_t n, tkb__modes *m) {
  qsort(x, n, sizeof *x, tkb__cmp_double);
  return tkb__bimodal(x, n, m);
}

int main(int argc, char **argv) {
  const int seeds = argc > 1 ? atoi(argv[1]) : 300;
  if (seeds < 4 || seeds > 100000) {
    fprintf(stderr, "usage: %s [seeds]   (4..100000, default 300)\n", argv[0]);
    return 2;
  }
  static double x[MAX_CALLS];
  tkb__modes m;

  const double sigmas[] = {0.005, 0.01, 0.02, 0.05, 0.2};
  const size_t counts[] = {500, 2000, 7198, 20000};
  int alarms = 0, sets = 0;
  printf("unimodal, busy (a preempted tenth up to 2x): false alarms of %d sets each\n  sigma ", seeds);
  for (size_t c = 0; c < 4; c++) printf("  n %-6zu", counts[c]);
  printf("\n");
  for (size_t s = 0; s < 5; s++) {
    printf("  %4.1f%%", 100 * sigmas[s]);
    for (size_t c = 0; c < 4; c++) {
      int here = 0;
      for (int k = 0; k < seeds; k++) {
        stream = 1000003ull * (uint64_t)k + 77 * s + c;
        for (size_t i = 0; i < counts[c]; i++) x[i] = exp(sigmas[s] * synth_normal01(&stream)) * busy_call(1);
        here += bimodal_of(x, counts[c], &m);
      }
      printf("  %8d", here);
      alarms += here;
      sets += seeds;
    }
    printf("\n");
  }
  const bool alarms_pass = alarms <= MAX_FALSE_ALARMS * sets;
  printf("false alarms: %d of %d sets (%.2f%%; target <= %.0f%%): %s\n\n", alarms, sets, 100.0 * alarms / sets,
         100 * MAX_FALSE_ALARMS, alarms_pass ? "PASS" : "FAIL");

  const double ratios[] = {1.2, 1.3, 1.5, 2, 4}, shares[] = {0.1, 0.2, 0.5, 0.8, 0.9};
  const size_t sizes[] = {200, 1000, 7198};
  const int per = seeds / 4;
  int judged = 0, judged_found = 0, found_all = 0, misplaced = 0, all = 0;
  printf("two modes, busy: found of %d sets each (per ratio, share of the faster mode, calls)\n", per);
  printf("  ratio  share    n 200   n 1000   n 7198\n");
  for (size_t r = 0; r < 5; r++)
    for (size_t f = 0; f < 5; f++) {
      printf("  %4.1fx  %4.0f%%", ratios[r], 100 * shares[f]);
      for (size_t z = 0; z < 3; z++) {
        int found = 0;
        for (int k = 0; k < per; k++) {
          stream = 7777777ull * (uint64_t)k + 131 * r + 17 * f + z;
          for (size_t i = 0; i < sizes[z]; i++)
            x[i] = busy_call(synth_uniform01(&stream) <= shares[f] ? 1 : ratios[r]);
          const bool got = bimodal_of(x, sizes[z], &m);
          found += got;
          misplaced += got && fabs(m.low_fraction - shares[f]) > 0.1;
        }
        printf("  %7d", found);
        found_all += found;
        all += per;
        if (ratios[r] >= 1.3 && sizes[z] >= 1000) judged += per, judged_found += found;
      }
      printf("\n");
    }
  const bool found_pass = judged_found >= MIN_FOUND * judged;
  printf("found: %d of %d sets in all (%d with the split misplaced); at >= 1.3x from 1,000 calls %d of %d "
         "(%.1f%%; target >= %.0f%%): %s\n",
         found_all, all, misplaced, judged_found, judged, 100.0 * judged_found / judged, 100 * MIN_FOUND,
         found_pass ? "PASS" : "FAIL");
  return alarms_pass && found_pass ? 0 : 1;
}
