/* select.c - which registered entries a run or a listing covers: a regex over full
 * names (Google Benchmark's --benchmark_filter, negation included), tags, impls, modes
 * and the device kind an impl runs on. */
#include "runner.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

void tkb__device_kind(const char *device, char *kind, size_t cap) {
  if (!device || !*device) device = "cpu";
  size_t n = strcspn(device, ":");
  snprintf(kind, cap, "%.*s", (int)n, device);
}

void tkb__result_identity(tkb__result *r, size_t entry) {
  const tkb_benchmark_def *d = tkb_registry_get(entry);
  r->name = tkb_registry_full_name(entry);
  r->op = d->op;
  r->spec = d->name;
  r->impl = d->impl_name;
  r->tags = d->tags;
  r->mode = d->mode;
}

static bool wanted(const tkb__selection *sel, size_t i, const regex_t *re, bool negate) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  if (!d) return false;
  if (sel->device_kind && strcmp(d->device_kind, sel->device_kind) != 0) return false;
  if (sel->modes && !(sel->modes & (1u << d->mode))) return false;
  for (size_t t = 0; t < sel->n_tags; t++)
    if (!tkb_registry_has_tag(i, sel->tags[t])) return false;
  if (sel->n_impls) {
    bool any = false;
    for (size_t k = 0; k < sel->n_impls && !any; k++) any = strcmp(d->impl_name, sel->impls[k]) == 0;
    if (!any) return false;
  }
  if (re) {
    bool match = regexec(re, tkb_registry_full_name(i), 0, NULL, 0) == 0;
    if (match == negate) return false;
  }
  return true;
}

tkb_status tkb__select(const tkb__selection *sel, size_t **idx, size_t *n) {
  *idx = NULL;
  *n = 0;
  regex_t re;
  bool have_re = false, negate = false;
  const char *pattern = sel->filter;
  if (pattern && *pattern) {
    if (pattern[0] == '-') {
      negate = true;
      pattern++;
    }
    int rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
      char why[256];
      regerror(rc, &re, why, sizeof why);
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "filter \"%s\" is not a valid POSIX extended regular expression: %s",
                           sel->filter, why);
    }
    have_re = true;
  }
  size_t total = tkb_registry_count();
  size_t *out = malloc((total ? total : 1) * sizeof *out);
  if (!out) {
    if (have_re) regfree(&re);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory selecting %zu entries", total);
  }
  size_t k = 0;
  for (size_t i = 0; i < total; i++)
    if (wanted(sel, i, have_re ? &re : NULL, negate)) out[k++] = i;
  if (have_re) regfree(&re);
  if (k == 0) {
    free(out);
    out = NULL;
  }
  *idx = out;
  *n = k;
  return TKB_OK;
}
