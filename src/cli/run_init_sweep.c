/* run_init_sweep.c - `run --init-sweep DIST,DIST,...` as the command line sees it: the
 * distributions split at the commas between them (not those inside normal(0,1)), each
 * checked as --init '*=DIST' would be, the baseline `default` put first when not given,
 * and what cannot go with a sweep refused before anything runs. The sweep itself is the
 * runner's (src/suite/init_sweep.c). */
#include "cli.h"

#include <string.h>

/* Calls each(DIST, len, user) for the comma-separated distributions of text, a comma
 * inside parentheses being part of its distribution; stops at the first nonzero return. */
static int each_dist(const char *text, int (*each)(const char *, size_t, void *), void *user) {
  int depth = 0;
  const char *start = text;
  for (const char *p = text;; p++) {
    if (*p == '(') depth++;
    else if (*p == ')' && depth > 0) depth--;
    if (*p == '\0' || (*p == ',' && depth == 0)) {
      const int rc = each(start, (size_t)(p - start), user);
      if (rc || !*p) return rc;
      start = p + 1;
    }
  }
}

typedef struct check_ctx {
  const char *cmd, *flag;
} check_ctx;

static int check_one(const char *d, size_t len, void *user) {
  const check_ctx *c = user;
  char text[200];
  tkb__init_override o;
  if (len == 0)
    return tkb__usage(c->cmd, "%s: an empty distribution; give DIST,DIST,... (normal(mean,std), "
                      "uniform(lo,hi), constant(v), zeros, ones, subnormal, default)", c->flag);
  snprintf(text, sizeof text, "*=%.*s", (int)len, d);
  if (len >= sizeof text - 2 || tkb__init_override_parse(text, &o) != TKB_OK)
    return tkb__usage(c->cmd, "%s: \"%.*s\" is no distribution; give normal(mean,std) with std >= 0, "
                      "uniform(lo,hi) with lo < hi, constant(v), zeros, ones, subnormal or default",
                      c->flag, (int)len, d);
  return 0;
}

int tkb__check_init_sweep(const char *cmd, const char *flag, const char *value) {
  check_ctx c = {cmd, flag};
  return each_dist(value, check_one, &c);
}

typedef struct gather {
  const char *cmd;
  tkb__sweep_args *out;
} gather;

static int add_dist(const char *d, size_t len, void *user) {
  gather *g = user;
  tkb__sweep_args *s = g->out;
  /* default may be given too: it stays the baseline, first */
  if (s->n && len == strlen("default") && strncmp(d, "default", len) == 0) return 0;
  for (size_t i = 0; i < s->n; i++)
    if (strlen(s->labels[i]) == len && strncmp(s->labels[i], d, len) == 0)
      return tkb__usage(g->cmd, "--init-sweep: %.*s is given twice", (int)len, d);
  if (s->n == TKB__MAX_SWEEP)
    return tkb__usage(g->cmd, "--init-sweep: more than %d distributions", TKB__MAX_SWEEP - 1);
  snprintf(s->label_text[s->n], sizeof s->label_text[0], "%.*s", (int)len, d);
  char text[200];
  snprintf(text, sizeof text, "*=%s", s->label_text[s->n]);
  tkb__init_override_parse(text, &s->dists[s->n]); /* checked when read */
  s->labels[s->n] = s->label_text[s->n];
  s->n++;
  return 0;
}

int tkb__init_sweep_resolve(const char *cmd, const tkb__strlist *given, const size_t *idx, size_t n,
                            tkb__sweep_args *out) {
  *out = (tkb__sweep_args){0};
  if (!given->n) return 0;
  gather g = {cmd, out};
  add_dist("default", strlen("default"), &g); /* the baseline, first */
  for (size_t i = 0; i < given->n; i++) {
    const int rc = each_dist(given->items[i], add_dist, &g);
    if (rc) return rc;
  }
  if (out->n < 2)
    return tkb__usage(cmd, "--init-sweep: give at least one distribution besides default, the "
                      "baseline (e.g. --init-sweep subnormal,zeros)");
  for (size_t i = 1; i < out->n; i++)
    if (tkb__init_overrides_check(idx, n, &out->dists[i], 1) != TKB_OK)
      return tkb__usage(cmd, "--init-sweep: %s", tkb_last_error());
  out->sweep = (tkb__init_sweep){.dists = out->dists, .n = out->n};
  return 0;
}
