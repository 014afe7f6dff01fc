/* shard_weights.c - the measured cost of entries, read from an earlier result file
 * through the shared reader, so that --shard balances shards by what the entries took
 * rather than by an estimate from their work per call. */
#include "runner.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An entry's seconds: its whole wall time where tkbench wrote it, else its timed calls
 * (every call's time, or each repetition's mean times its iterations), else its median.
 * -1 when the file holds no time for it (it failed). */
static double seconds_of(const tkb__rf_entry *e) {
  const cJSON *wall = cJSON_GetObjectItemCaseSensitive(e->tkbench, "wall_s");
  if (cJSON_IsNumber(wall) && wall->valuedouble > 0) return wall->valuedouble;
  double ms = 0;
  switch (e->source) {
    case TKB__RF_PER_CALL:
      for (int i = 0; i < e->n_samples; i++) ms += e->samples_ms[i];
      break;
    case TKB__RF_PER_REPETITION: {
      int i = 0;
      for (size_t k = 0; k < e->n_rows && i < e->n_samples; k++) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(e->rows[k], "run_type");
        if (cJSON_IsString(type) && strcmp(type->valuestring, "aggregate") == 0) continue;
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(e->rows[k], "iterations");
        ms += e->samples_ms[i++] * (cJSON_IsNumber(it) && it->valuedouble > 0 ? it->valuedouble : 1);
      }
      break;
    }
    case TKB__RF_AGGREGATE: ms = tkb__rf_median_ms(e); break;
    case TKB__RF_NO_SAMPLES: return -1;
  }
  return isfinite(ms) && ms > 0 ? ms / 1e3 : -1;
}

tkb_status tkb__shard_weights_load(const char *path, tkb__shard_weights *w) {
  *w = (tkb__shard_weights){0};
  tkb__results_file rf;
  tkb_status st = tkb__results_file_load(path, &rf);
  if (st) return st;
  w->names = calloc(rf.n_entries ? rf.n_entries : 1, sizeof *w->names);
  w->seconds = calloc(rf.n_entries ? rf.n_entries : 1, sizeof *w->seconds);
  if (!w->names || !w->seconds) st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading \"%s\"", path);
  for (size_t k = 0; !st && k < rf.n_entries; k++) {
    double s = seconds_of(&rf.entries[k]);
    if (s < 0) continue;
    if (!(w->names[w->n] = tkb__strdup(rf.entries[k].name))) {
      st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading \"%s\"", path);
      break;
    }
    w->seconds[w->n++] = s;
  }
  if (!st && w->n == 0)
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\" holds no entry with a time to weigh shards by",
                       path);
  tkb__results_file_free(&rf);
  if (st) tkb__shard_weights_free(w);
  return st;
}

void tkb__shard_weights_free(tkb__shard_weights *w) {
  for (size_t i = 0; i < w->n; i++) free((char *)w->names[i]);
  free(w->names);
  free(w->seconds);
  *w = (tkb__shard_weights){0};
}
