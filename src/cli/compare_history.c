/*
 * compare_history.c - `compare --history DB` and `ab --history DB`: each entry's noise
 * band learned from the results store (src/results/history_noise.h), handed to the
 * comparison as its band_of. The machine is the one NEW was measured on (its context, as
 * recording it would file it), or --machine's; the store is only read.
 */
#include "cli.h"
#include "history_noise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tkb__entry_band band_of(void *user, const char *name) {
  const tkb__compare_history *ch = user;
  const tkb__noise_bands *b = ch->bands;
  const tkb__noise_band *x = tkb__noise_band_find(b, name);
  if (!x) return (tkb__entry_band){NAN, "no earlier run of it on this machine"};
  return (tkb__entry_band){x->band, ch->how[x - b->items]};
}

/* How each band was learned, in words the renderings show beside it. */
static void describe(const tkb__noise_bands *b, const tkb__noise_opts *o, char (*how)[224]) {
  for (size_t i = 0; i < b->n; i++) {
    const tkb__noise_band *x = &b->items[i];
    char stepped[64] = "";
    if (x->stepped) snprintf(stepped, sizeof stepped, " (%zu before a step of its code left out)", x->stepped);
    if (isnan(x->band))
      snprintf(how[i], sizeof how[i], "only %zu run%s of it%s: needs %zu", x->runs, x->runs == 1 ? "" : "s", stepped,
               o->min_runs);
    else
      snprintf(how[i], sizeof how[i], "+-%.2g%% from %zu runs (pairs apart by up to %.2g%% in %g%% of pairs, "
               "spread %.2g%%)%s", 100 * x->band, x->runs, 100 * x->pairs, 100 * o->level, 100 * x->spread, stepped);
  }
}

int tkb__compare_history_learn(const char *cmd, const char *store, int runs, const char *machine,
                               const tkb__results_file *new_, bool this_machine, tkb__compare_history *ch,
                               tkb__compare_opts *o) {
  *ch = (tkb__compare_history){0};
  if (!store) {
    if (machine) return tkb__usage(cmd, "--machine '%s' names whose history to learn from: it needs --history", machine);
    return 0;
  }
  tkb__history *h;
  const tkb__history_open_opts open = {.read_only = true};
  if (tkb__history_open(store, &open, &h) != TKB_OK) return tkb__usage(cmd, "--history: %s", tkb_last_error());
  char *key = NULL;
  tkb__machine m;
  int rc = 0;
  if (machine) {
    if (tkb__history_machine_resolve(h, machine, &key) != TKB_OK) rc = tkb__usage(cmd, "--machine: %s", tkb_last_error());
  } else {
    const tkb__history_origin origin = {.this_machine = this_machine};
    tkb__history_file_machine(new_, &origin, &m);
    key = tkb__strdup(m.key);
  }
  tkb__noise_bands *bands = calloc(1, sizeof *bands);
  if (!rc && (!key || !bands)) {
    fprintf(stderr, "%s %s: out of memory\n", tkb__prog, cmd);
    rc = TKB_EXIT_FAILED;
  }
  tkb__noise_opts no = tkb__noise_defaults();
  no.runs = (size_t)runs;
  if (!rc) {
    const tkb_status st = tkb__noise_learn(h, key, &no, bands);
    if (st == TKB_ERR_NOT_FOUND && !machine) {
      fprintf(stderr, "%s %s: warning: %s holds no run of this machine (%s), NEW's: every entry keeps --noise's "
              "band\n", tkb__prog, cmd, tkb__history_location(h), key);
    } else if (st) {
      rc = tkb__usage(cmd, "--history: %s", tkb_last_error());
    } else if (!bands->runs) {
      fprintf(stderr, "%s %s: warning: %s holds no run of machine %s: every entry keeps --noise's band\n",
              tkb__prog, cmd, tkb__history_location(h), key);
    }
  }
  if (!rc && !(ch->how = calloc(bands->n ? bands->n : 1, sizeof *ch->how))) {
    fprintf(stderr, "%s %s: out of memory\n", tkb__prog, cmd);
    rc = TKB_EXIT_FAILED;
  }
  ch->bands = bands;
  if (!rc) {
    describe(bands, &no, ch->how);
    o->band_of = band_of;
    o->band_user = ch;
  }
  free(key);
  tkb__history_close(h);
  return rc;
}

void tkb__compare_history_free(tkb__compare_history *ch) {
  if (ch->bands) tkb__noise_bands_free(ch->bands);
  free(ch->bands);
  free(ch->how);
  *ch = (tkb__compare_history){0};
}

