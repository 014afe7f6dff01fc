/* shard_weights.c - the measured cost of entries, read from an earlier result file, so
 * that --shard balances shards by what the entries took rather than by an estimate. */
#include "runner.h"

#include <stdlib.h>

tkb_status tkb__shard_weights_load(const char *path, tkb__shard_weights *w) {
  *w = (tkb__shard_weights){0};
  return tkb_set_error(TKB_ERR_UNSUPPORTED, "%s: reading weights is not built yet", path);
}

void tkb__shard_weights_free(tkb__shard_weights *w) {
  for (size_t i = 0; i < w->n; i++) free((char *)w->names[i]);
  free(w->names);
  free(w->seconds);
  *w = (tkb__shard_weights){0};
}
