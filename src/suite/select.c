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

tkb_status tkb__result_work(tkb__result *r, size_t entry) {
  r->n_counters = 0;
  tkb_status st = tkb_registry_counts(entry, &r->counts);
  if (!st) st = tkb_registry_counters(entry, r->counters, TKB_MAX_COUNTERS, &r->n_counters);
  for (int k = 0; !st && r->bd && k < r->bd->n_counters; k++)
    for (int j = 0; j < r->n_counters; j++)
      if (strcmp(r->bd->counters[k].name, r->counters[j].name) == 0)
        st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: its counter \"%s\" has the name of a "
                           "perf counter the run counts", r->name, r->counters[j].name);
  if (!st && r->bd && r->n_counters + r->bd->n_counters > TKB_MAX_COUNTERS)
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: %d counters of its own and %d perf counters; "
                       "at most %d in all", r->name, r->n_counters, r->bd->n_counters, TKB_MAX_COUNTERS);
  return st;
}

/* True when s is one of list[0..n). */
static bool one_of(const char *s, const char *const *list, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (strcmp(s, list[k]) == 0) return true;
  return false;
}

static bool wanted(const tkb__selection *sel, size_t i, const tkb__name_filter *names) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  if (!d || i < sel->first_index) return false;
  if (sel->device_kind && strcmp(d->device_kind, sel->device_kind) != 0) return false;
  if (sel->modes && !(sel->modes & (1u << d->mode))) return false;
  for (size_t t = 0; t < sel->n_tags; t++)
    if (!tkb_registry_has_tag(i, sel->tags[t])) return false;
  if (sel->n_ops && !one_of(d->op, sel->ops, sel->n_ops)) return false;
  if (sel->n_impls && !one_of(d->impl_name, sel->impls, sel->n_impls)) return false;
  if (sel->except_impl && strcmp(d->impl_name, sel->except_impl) == 0) return false;
  return tkb__name_filter_match(names, tkb_registry_full_name(i));
}

tkb_status tkb__select(const tkb__selection *sel, size_t **idx, size_t *n) {
  *idx = NULL;
  *n = 0;
  tkb__name_filter names;
  tkb_status st = tkb__name_filter_init(&names, sel->filter);
  if (st) return st;
  size_t total = tkb_registry_count();
  size_t *out = malloc((total ? total : 1) * sizeof *out);
  if (!out) {
    tkb__name_filter_free(&names);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory selecting %zu entries", total);
  }
  size_t k = 0;
  for (size_t i = 0; i < total; i++)
    if (wanted(sel, i, &names)) out[k++] = i;
  tkb__name_filter_free(&names);
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

/* The distinct tags of the registry, in order of first appearance: "a, b, c". */
static void known_tags(char *buf, size_t cap) {
  char seen[64][64];
  size_t n_seen = 0, len = 0, total = tkb_registry_count();
  buf[0] = '\0';
  for (size_t i = 0; i < total && n_seen < 64; i++) {
    for (const char *p = tkb_registry_get(i)->tags; p && *p && n_seen < 64;) {
      size_t n = strcspn(p, ",");
      char tag[64];
      snprintf(tag, sizeof tag, "%.*s", (int)(n < sizeof tag ? n : sizeof tag - 1), p);
      p += n + (p[n] == ',');
      bool dup = !*tag;
      for (size_t j = 0; j < n_seen && !dup; j++) dup = strcmp(seen[j], tag) == 0;
      if (dup) continue;
      memcpy(seen[n_seen++], tag, sizeof tag);
      if (len < cap) len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", tag);
    }
  }
  if (!n_seen) snprintf(buf, cap, "none (no entry has a tag)");
}

tkb_status tkb__tags_check(const char *const *tags, size_t n) {
  size_t total = tkb_registry_count();
  for (size_t k = 0; k < n; k++) {
    bool found = false;
    for (size_t i = 0; i < total && !found; i++) found = tkb_registry_has_tag(i, tags[k]);
    if (found) continue;
    char names[1024];
    known_tags(names, sizeof names);
    return tkb_set_error(TKB_ERR_NOT_FOUND, "tag \"%s\" is on no registered entry; the tags are %s",
                         tags[k], names);
  }
  return TKB_OK;
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
