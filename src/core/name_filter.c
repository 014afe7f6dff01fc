/* name_filter.c - a filter on names as --filter gives it (Google Benchmark's
 * --benchmark_filter): the suite's selection, compare's and the results store's queries
 * all read names this one way. */
#include "internal.h"

#include <regex.h>
#include <stddef.h>

tkb_status tkb__name_filter_init(tkb__name_filter *f, const char *pattern) {
  *f = (tkb__name_filter){0};
  if (!pattern || !*pattern) return TKB_OK;
  const char *p = pattern;
  if (p[0] == '-') {
    f->negate = true;
    p++;
  }
  tkb_status st = tkb__regex_compile(&f->re, p, "filter", pattern);
  if (st) return st;
  f->active = true;
  return TKB_OK;
}

bool tkb__name_filter_match(const tkb__name_filter *f, const char *name) {
  if (!f->active) return true;
  return (regexec(&f->re, name, 0, NULL, 0) == 0) != f->negate;
}

void tkb__name_filter_free(tkb__name_filter *f) {
  if (f->active) regfree(&f->re);
  *f = (tkb__name_filter){0};
}
