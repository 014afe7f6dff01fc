/* result.c - ownership of one entry's outcome. */
#include "report.h"

#include <stdlib.h>

void tkb__result_clear(tkb__result *r) {
  free(r->error);
  r->error = NULL;
  r->skipped = false;
  tkb_benchmark_data_free(r->bd);
  r->bd = NULL;
}
