/* result.c - ownership of one entry's outcome. */
#include "report.h"

#include <stdlib.h>

void tkb__result_clear(tkb__result *r) {
  free(r->error);
  r->error = NULL;
  r->skipped = false;
  tkb_benchmark_data_free(r->bd);
  r->bd = NULL;
  if (r->owned) {
    for (char **p = r->owned; *p; p++) free(*p);
    free(r->owned);
    r->owned = NULL;
    r->name = r->op = r->spec = r->impl = r->tags = NULL;
  }
}
