/* aggregate.c - the statistics Google Benchmark reports over repetitions (here: over
 * the experiments' median times): mean, median, sample stddev and cv = stddev / mean. */
#include "results.h"

#include <math.h>
#include <stdlib.h>

tkb__aggregates tkb__aggregate(const double *x, int n) {
  tkb__aggregates g = {NAN, NAN, NAN, NAN};
  if (n < 1) return g;
  /* an experiment without a time (NaN; infinity, which JSON cannot hold either) leaves
   * nothing to aggregate, and would make the median's sort order undefined */
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return g;
  double sum = 0;
  for (int i = 0; i < n; i++) sum += x[i];
  g.mean = sum / n;
  double ss = 0;
  for (int i = 0; i < n; i++) ss += (x[i] - g.mean) * (x[i] - g.mean);
  g.stddev = n > 1 ? sqrt(ss / (n - 1)) : 0;
  g.cv = g.mean != 0 ? g.stddev / g.mean : NAN;
  /* The median of a copy: up to a few thousand experiments, so a sort is fine. */
  double small[64], *s = n <= 64 ? small : malloc((size_t)n * sizeof *s);
  if (!s) return g;
  for (int i = 0; i < n; i++) s[i] = x[i];
  qsort(s, (size_t)n, sizeof *s, tkb__cmp_double);
  g.median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  if (s != small) free(s);
  return g;
}
