/* nearest.c - "did you mean": the known name closest to a mistyped one, by edit distance
 * (insertions, deletions, substitutions and swaps of neighbours each cost 1), offered only
 * when it is close enough to be the likely intent. */
#include "cli.h"

#include <string.h>

/* The longest word compared; longer ones are never typos of a flag or command. */
#define NEAREST_MAX 64

/* Optimal string alignment distance between a and b (both at most NEAREST_MAX long). */
static size_t distance(const char *a, size_t la, const char *b, size_t lb) {
  unsigned char d[NEAREST_MAX + 1][NEAREST_MAX + 1];
  for (size_t i = 0; i <= la; i++) d[i][0] = (unsigned char)i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = (unsigned char)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1u < best) best = d[i - 1][j] + 1u;
      if (d[i][j - 1] + 1u < best) best = d[i][j - 1] + 1u;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1u < best)
        best = d[i - 2][j - 2] + 1u;
      d[i][j] = (unsigned char)best;
    }
  return d[la][lb];
}

const char *tkb__nearest(const char *word, const char *const *names, size_t n) {
  size_t lw = strcspn(word, "=");
  if (lw == 0 || lw > NEAREST_MAX) return NULL;
  /* a third of the word's length, at least 1 and at most 3: "--iteratons" finds
   * "--iterations", but "rn" does not find every two-letter command */
  size_t allowed = lw / 3;
  if (allowed < 1) allowed = 1;
  if (allowed > 3) allowed = 3;
  const char *best = NULL;
  size_t best_d = allowed + 1;
  for (size_t k = 0; k < n; k++) {
    size_t ln = strlen(names[k]);
    if (ln > NEAREST_MAX || (ln > lw ? ln - lw : lw - ln) >= best_d) continue;
    size_t d = distance(word, lw, names[k], ln);
    if (d < best_d) best = names[k], best_d = d;
  }
  return best;
}
