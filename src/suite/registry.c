/* registry.c - the suite's entries (Tokamax's register_benchmark). */
#include "bind.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
  tkb_benchmark_def def; /* strings point at the copies below */
  char *op, *name, *impl, *tags, *device_kind, *full, *stop, *method;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *entries;
static size_t n_entries, cap_entries;

static bool valid_name(const char *s) {
  if (!s || !*s) return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-') return false;
  return true;
}

static void entry_free(entry *e) {
  free(e->op);
  free(e->name);
  free(e->impl);
  free(e->tags);
  free(e->device_kind);
  free(e->full);
  free(e->stop);
  free(e->method);
}

tkb_status tkb_register_benchmark(const tkb_benchmark_def *def) {
  tkb__clear_error();
  if (!def || !def->fn)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_register_benchmark: %s is NULL",
                         !def ? "def" : "def->fn");
  if (!valid_name(def->name) || !valid_name(def->impl_name))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "benchmark name \"%s\" / impl_name \"%s\": names must be non-empty and use "
                         "only letters, digits, '_', '.' and '-'",
                         def->name ? def->name : "(null)", def->impl_name ? def->impl_name : "(null)");
  if ((int)def->mode < 0 || def->mode > TKB_MODE_FORWARD_AND_VJP)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "benchmark \"%s\": mode %d is not a tkb_mode",
                         def->name, (int)def->mode);
  if (def->iterations < 0 || def->n_metadata < 0 || (def->n_metadata > 0 && !def->metadata))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "benchmark \"%s\": iterations = %d, n_metadata = %d (metadata %s); "
                         "both must be >= 0, with metadata given when n_metadata > 0",
                         def->name, def->iterations, def->n_metadata, def->metadata ? "given" : "NULL");
  for (int k = 0; k < def->n_metadata; k++)
    if (!def->metadata[k].key || !def->metadata[k].value)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "benchmark \"%s\": metadata[%d] has a NULL %s", def->name, k,
                           !def->metadata[k].key ? "key" : "value");
  entry e = {.def = *def};
  size_t len = strlen(def->name) + strlen(def->impl_name) + 32;
  e.full = malloc(len);
  if (e.full) snprintf(e.full, len, "%s_%s_%s", def->name, tkb_mode_name(def->mode), def->impl_name);
  e.op = tkb__strdup(def->op ? def->op : def->fn->name);
  e.name = tkb__strdup(def->name);
  e.impl = tkb__strdup(def->impl_name);
  e.tags = tkb__strdup(def->tags ? def->tags : "");
  e.device_kind = tkb__strdup(def->device_kind ? def->device_kind : "cpu");
  e.stop = tkb__strdup(def->stop);
  e.method = tkb__strdup(def->method);
  if (!e.full || !e.op || !e.name || !e.impl || !e.tags || !e.device_kind ||
      (def->stop && !e.stop) || (def->method && !e.method)) {
    entry_free(&e);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory registering %s", def->name);
  }
  e.def.op = e.op;
  e.def.name = e.name;
  e.def.impl_name = e.impl;
  e.def.tags = e.tags;
  e.def.device_kind = e.device_kind;
  e.def.stop = e.stop;
  e.def.method = e.method;
  pthread_mutex_lock(&lock);
  tkb_status st = TKB_OK;
  for (size_t i = 0; i < n_entries; i++)
    if (strcmp(entries[i].full, e.full) == 0) {
      st = tkb_set_error(TKB_ERR_DUPLICATE_ARGUMENT, "benchmark \"%s\" is already registered", e.full);
      break;
    }
  if (!st && n_entries == cap_entries) {
    size_t cap = cap_entries ? 2 * cap_entries : 64;
    entry *t = realloc(entries, cap * sizeof *t);
    if (!t) st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory registering %s", e.full);
    else {
      entries = t;
      cap_entries = cap;
    }
  }
  if (!st) entries[n_entries++] = e;
  pthread_mutex_unlock(&lock);
  if (st) entry_free(&e);
  return st;
}

size_t tkb_registry_count(void) {
  pthread_mutex_lock(&lock);
  size_t n = n_entries;
  pthread_mutex_unlock(&lock);
  return n;
}

const tkb_benchmark_def *tkb_registry_get(size_t i) {
  return i < tkb_registry_count() ? &entries[i].def : NULL;
}

const char *tkb_registry_full_name(size_t i) {
  return i < tkb_registry_count() ? entries[i].full : NULL;
}

bool tkb_registry_has_tag(size_t i, const char *tag) {
  if (i >= tkb_registry_count() || !tag) return false;
  size_t n = strlen(tag);
  for (const char *p = entries[i].tags; *p;) {
    size_t len = strcspn(p, ",");
    if (len == n && strncmp(p, tag, n) == 0) return true;
    p += len;
    if (*p == ',') p++;
  }
  return false;
}

void tkb_registry_clear(void) {
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < n_entries; i++) entry_free(&entries[i]);
  free(entries);
  entries = NULL;
  n_entries = cap_entries = 0;
  pthread_mutex_unlock(&lock);
}

static tkb_status entry_args(size_t i, const tkb_value **args, size_t *n_args,
                             const tkb_kwarg **kwargs, size_t *n_kwargs) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  if (!d) return tkb_set_error(TKB_ERR_NOT_FOUND, "no benchmark entry %zu (%zu registered)", i,
                               tkb_registry_count());
  if (d->factory) return d->factory(d->user, args, n_args, kwargs, n_kwargs);
  *args = d->args;
  *n_args = d->n_args;
  *kwargs = d->kwargs;
  *n_kwargs = d->n_kwargs;
  return TKB_OK;
}

tkb_status tkb_registry_standardize(size_t i, const char *device, uint64_t seed,
                                    tkb_std_fn **f_std, tkb_arrays **std_args) {
  const tkb_value *args;
  const tkb_kwarg *kwargs;
  size_t na, nk;
  tkb_status st = entry_args(i, &args, &na, &kwargs, &nk);
  if (st) return st;
  const tkb_benchmark_def *d = tkb_registry_get(i);
  tkb_std_opts o = {.mode = d->mode, .seed = seed, .device = device};
  return tkb_standardize_function(d->fn, args, na, kwargs, nk, &o, f_std, std_args);
}

tkb_status tkb_registry_counts(size_t i, tkb_counts *out) {
  *out = (tkb_counts){0};
  const tkb_value *args;
  const tkb_kwarg *kwargs;
  size_t na, nk;
  tkb_status st = entry_args(i, &args, &na, &kwargs, &nk);
  if (st) return st;
  const tkb_benchmark_def *d = tkb_registry_get(i);
  if (!d->counts) return TKB_OK;
  tkb_value *bound;
  st = tkb__bind(d->fn, args, na, kwargs, nk, &bound);
  if (st) return st;
  tkb_args a = {.fn = d->fn, .count = d->fn->n_params, .values = bound};
  st = d->counts(&a, d->mode, out);
  tkb__bound_free(bound, d->fn->n_params);
  return st;
}
