/* select.c - which registered entries a run or a listing covers: a regex over full
 * names (Google Benchmark's --benchmark_filter, negation included), tags, ops, impls,
 * modes and the device kind an impl runs on. */
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
  r->metadata = d->metadata;
  r->n_metadata = d->n_metadata;
}

/* True when s is one of list[0..n). */
static bool one_of(const char *s, const char *const *list, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (strcmp(s, list[k]) == 0) return true;
  return false;
}

static bool wanted(const tkb__selection *sel, size_t i, const regex_t *re, bool negate) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  if (!d) return false;
  if (sel->device_kind && strcmp(d->device_kind, sel->device_kind) != 0) return false;
  if (sel->modes && !(sel->modes & (1u << d->mode))) return false;
  for (size_t t = 0; t < sel->n_tags; t++)
    if (!tkb_registry_has_tag(i, sel->tags[t])) return false;
  if (sel->n_ops && !one_of(d->op, sel->ops, sel->n_ops)) return false;
  if (sel->n_impls && !one_of(d->impl_name, sel->impls, sel->n_impls)) return false;
  if (sel->except_impl && strcmp(d->impl_name, sel->except_impl) == 0) return false;
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

/* The ops of the registry, each once, in registration order: "a, b and c". */
static void known_ops(char *buf, size_t cap) {
  size_t len = 0, total = tkb_registry_count(), shown = 0;
  buf[0] = '\0';
  const char *last = NULL;
  for (size_t i = 0; i < total && len < cap; i++) {
    const char *op = tkb_registry_get(i)->op;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++) seen = strcmp(tkb_registry_get(j)->op, op) == 0;
    if (seen) continue;
    if (last) len += (size_t)snprintf(buf + len, cap - len, "%s%s", shown > 1 ? ", " : "", last);
    last = op;
    shown++;
  }
  if (!last) snprintf(buf, cap, "none (no entries are registered)");
  else if (len < cap) snprintf(buf + len, cap - len, "%s%s", shown > 1 ? " and " : "", last);
}

tkb_status tkb__ops_check(const char *const *ops, size_t n) {
  size_t total = tkb_registry_count();
  for (size_t k = 0; k < n; k++) {
    bool found = false;
    for (size_t i = 0; i < total && !found; i++) found = strcmp(tkb_registry_get(i)->op, ops[k]) == 0;
    if (found) continue;
    char names[1024];
    known_ops(names, sizeof names);
    return tkb_set_error(TKB_ERR_NOT_FOUND, "op \"%s\" is not the op of any registered entry; "
                         "the ops are %s", ops[k], names);
  }
  return TKB_OK;
}
