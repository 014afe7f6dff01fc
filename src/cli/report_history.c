/*
 * report_history.c - `tkbench report --history DB -o history.html`: the history page of a
 * results store (src/report/html_history.c). The store is opened read-only, what the
 * flags select is analysed as `history regressions` does (src/results/trend.h), and the
 * page is written whole under a temporary name or not at all.
 */
#include "cli.h"
#include "history.h"
#include "html.h"
#include "regressions.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static tkb_status write_to(FILE *f, const tkb__trend *t, const tkb__regressions *rs, const char *title) {
  tkb_status st = tkb__html_history_page(f, t, rs, title);
  if (!st && fflush(f) != 0) st = tkb_set_error(TKB_ERR_IO, "writing the page failed: %s", strerror(errno));
  return st;
}

int tkb__report_history(const char *cmd, const tkb__report_history_args *a, const tkb__select_args *sel,
                        const char *title, const char *out) {
  if (out && tkb__outfile_check(out) != TKB_OK) return tkb__usage(cmd, "--out: %s", tkb_last_error());
  tkb__history *h;
  const tkb__history_open_opts ro = {.read_only = true};
  if (tkb__history_open(a->history, &ro, &h) != TKB_OK) return tkb__usage(cmd, "--history: %s", tkb_last_error());
  char *key = NULL;
  tkb__history_query q = tkb__history_query_of(sel, a->branch, a->since, a->last);
  int rc = 0;
  if (a->machine) {
    if (tkb__history_machine_resolve(h, a->machine, &key) != TKB_OK) rc = tkb__usage(cmd, "--machine: %s", tkb_last_error());
    q.machine = key;
  }
  tkb__trend t = {0};
  tkb__regressions rs = {0};
  if (!rc && tkb__trend_read(h, &q, NULL, &t) != TKB_OK) rc = tkb__usage(cmd, "--history: %s", tkb_last_error());
  if (!rc && !t.n_points)
    rc = tkb__usage(cmd, "--history: no selected entry of the history store %s has a point to draw",
                    tkb__history_location(h));
  if (!rc && tkb__regressions_make(&t, tkb__history_location(h), false, NAN, &rs) != TKB_OK) {
    fprintf(stderr, "%s %s: %s\n", tkb__prog, cmd, tkb_last_error());
    rc = TKB_EXIT_FAILED;
  }
  if (!rc) {
    const char *shown = title ? title : tkb__history_location(h);
    tkb_status st;
    if (out) {
      tkb__outfile o = {0};
      st = tkb__outfile_open(&o, out);
      if (!st) st = tkb__html_history_page(o.f, &t, &rs, shown);
      if (st) tkb__outfile_abort(&o);
      else st = tkb__outfile_commit(&o);
    } else {
      st = write_to(stdout, &t, &rs, shown);
    }
    if (st) {
      fprintf(stderr, "%s %s: %s\n", tkb__prog, cmd, tkb_last_error());
      rc = TKB_EXIT_FAILED;
    }
  }
  tkb__regressions_free(&rs);
  tkb__trend_free(&t);
  free(key);
  tkb__history_close(h);
  return rc;
}
