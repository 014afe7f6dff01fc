/*
 * history_read.c - the results store's reading side (history.h): machines, runs, a run's
 * peaks and the series of entries on one machine. Each list owns its strings (a list of
 * copies in `storage`), so it outlives the store. A store of an older schema opened
 * read-only is read as it is: what its version lacks reads as its default (unit "ns", no
 * peaks).
 */
#include "history_engine.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The copies a list owns. */
typedef struct strings {
  char **p;
  size_t n, cap;
} strings;

static const char *keep(strings *s, const char *text, bool *oom) {
  if (!text) return NULL;
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    char **p = realloc(s->p, cap * sizeof *p);
    if (!p) {
      *oom = true;
      return NULL;
    }
    s->p = p;
    s->cap = cap;
  }
  char *copy = tkb__strdup(text);
  if (!copy) {
    *oom = true;
    return NULL;
  }
  return s->p[s->n++] = copy;
}

static void strings_free(void *storage) {
  strings *s = storage;
  if (!s) return;
  for (size_t i = 0; i < s->n; i++) free(s->p[i]);
  free(s->p);
  free(s);
}

static tkb_status oom(const tkb__history *h) {
  return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading the history store %s", h->shown);
}

/* Grows *items (of size `size`) to hold one more; false when out of memory. */
static bool grow(void **items, size_t n, size_t *cap, size_t size) {
  if (n < *cap) return true;
  size_t c = *cap ? 2 * *cap : 16;
  void *p = realloc(*items, c * size);
  if (!p) return false;
  *items = p;
  *cap = c;
  return true;
}

/* ---- machines ---- */

tkb_status tkb__history_machines_list(tkb__history *h, tkb__history_machines *out) {
  *out = (tkb__history_machines){0};
  strings *s = calloc(1, sizeof *s);
  if (!s) return oom(h);
  out->storage = s;
  tkb__hx_stmt *q = NULL;
  tkb_status st = h->e->prepare(h->c,
                                "SELECT m.id, m.key, m.host, m.cpu_model, m.cores, m.device, m.device_name, "
                                "MIN(r.started), MAX(r.started), COUNT(r.id) FROM tkb_machines m LEFT JOIN "
                                "tkb_runs r ON r.machine_id = m.id GROUP BY m.id, m.key, m.host, m.cpu_model, "
                                "m.cores, m.device, m.device_name ORDER BY m.key", &q);
  size_t cap = 0;
  bool row = false, failed = false;
  while (!st && !(st = h->e->step(q, &row)) && row) {
    if (!grow((void **)&out->items, out->n, &cap, sizeof *out->items)) {
      failed = true;
      break;
    }
    tkb__history_machine *m = &out->items[out->n++];
    *m = (tkb__history_machine){.id = h->e->column_int(q, 0),
                                .key = keep(s, h->e->column_text(q, 1), &failed),
                                .host = keep(s, h->e->column_text(q, 2), &failed),
                                .cpu_model = keep(s, h->e->column_text(q, 3), &failed),
                                .cores = (int)h->e->column_int(q, 4),
                                .device = keep(s, h->e->column_text(q, 5), &failed),
                                .device_name = keep(s, h->e->column_text(q, 6), &failed),
                                .first_time = h->e->column_int(q, 7),
                                .last_time = h->e->column_int(q, 8),
                                .n_runs = (size_t)h->e->column_int(q, 9)};
  }
  if (q) h->e->finalize(q);
  if (!st && failed) st = oom(h);
  if (st) tkb__history_machines_free(out);
  return st;
}

void tkb__history_machines_free(tkb__history_machines *m) {
  free(m->items);
  strings_free(m->storage);
  *m = (tkb__history_machines){0};
}

tkb_status tkb__history_machine_resolve(tkb__history *h, const char *text, char **key) {
  *key = NULL;
  tkb__history_machines ms;
  tkb_status st = tkb__history_machines_list(h, &ms);
  if (st) return st;
  const tkb__history_machine *hit = NULL;
  size_t n_prefix = 0, n_host = 0;
  const tkb__history_machine *prefix = NULL, *host = NULL;
  for (size_t i = 0; i < ms.n; i++) {
    if (!strcmp(ms.items[i].key, text)) hit = &ms.items[i];
    if (!strncmp(ms.items[i].key, text, strlen(text))) prefix = &ms.items[i], n_prefix++;
    if (ms.items[i].host && !strcmp(ms.items[i].host, text)) host = &ms.items[i], n_host++;
  }
  if (!hit && n_prefix == 1) hit = prefix;
  if (!hit && n_host == 1) hit = host;
  char known[1024];
  size_t len = 0;
  known[0] = '\0';
  for (size_t i = 0; i < ms.n && len < sizeof known; i++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", ms.items[i].key);
  if (hit) {
    *key = tkb__strdup(hit->key);
    st = *key ? TKB_OK : oom(h);
  } else if (n_prefix > 1 || n_host > 1) {
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "--machine '%s' names more than one machine of the history "
                       "store %s; give one of its keys: %s", text, h->shown, known);
  } else {
    st = tkb_set_error(TKB_ERR_NOT_FOUND, "--machine '%s' is no machine of the history store %s; it has %s%s",
                       text, h->shown, ms.n ? "" : "none yet", known);
  }
  tkb__history_machines_free(&ms);
  return st;
}

/* ---- runs ---- */

/* The WHERE conditions of q on runs `r` (joined to machines `m`), with their parameters
 * bound from 1 by bind_where. */
static void where(const tkb__history_query *q, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, " WHERE 1 = 1");
  if (q->machine) len += (size_t)snprintf(buf + len, cap - len, " AND m.key = ?");
  if (q->branch) len += (size_t)snprintf(buf + len, cap - len, " AND r.branch = ?");
  if (q->since > 0) len += (size_t)snprintf(buf + len, cap - len, " AND r.started >= ?");
  if (!q->include_checks) snprintf(buf + len, cap - len, " AND r.kind <> 'check'");
}

static int bind_where(tkb__history *h, tkb__hx_stmt *s, const tkb__history_query *q, int k) {
  if (q->machine) h->e->bind_text(s, k++, q->machine);
  if (q->branch) h->e->bind_text(s, k++, q->branch);
  if (q->since > 0) h->e->bind_int(s, k++, q->since);
  return k;
}

tkb_status tkb__history_runs_list(tkb__history *h, const tkb__history_query *q, tkb__history_runs *out) {
  *out = (tkb__history_runs){0};
  const tkb__history_query none = {0};
  if (!q) q = &none;
  strings *s = calloc(1, sizeof *s);
  if (!s) return oom(h);
  out->storage = s;
  char cond[512], sql[2048];
  where(q, cond, sizeof cond);
  /* newest first, so LIMIT keeps the last N; turned around below */
  snprintf(sql, sizeof sql,
           "SELECT r.id, r.started, r.kind, r.status, r.commit_id, r.branch, m.key, r.host, r.cpu_model, "
           "r.cpu_isa, r.kernel, r.cores, r.memory_bytes, r.device, r.device_name, r.device_uuid, r.driver, "
           "r.tkbench_version, r.method, r.stopping_rule, r.seed, r.threads, r.settings, r.source, r.n_entries "
           "FROM tkb_runs r JOIN tkb_machines m ON m.id = r.machine_id%s ORDER BY r.started DESC, r.id DESC%s",
           cond, q->last ? " LIMIT ?" : "");
  tkb__hx_stmt *st_ = NULL;
  tkb_status st = h->e->prepare(h->c, sql, &st_);
  size_t cap = 0;
  bool row = false, failed = false;
  if (!st) {
    int k = bind_where(h, st_, q, 1);
    if (q->last) h->e->bind_int(st_, k, (int64_t)q->last);
  }
  while (!st && !(st = h->e->step(st_, &row)) && row) {
    if (!grow((void **)&out->items, out->n, &cap, sizeof *out->items)) {
      failed = true;
      break;
    }
    const tkb__hx_engine *e = h->e;
    tkb__history_run *r = &out->items[out->n++];
    const char *seed = e->column_text(st_, 20);
    int c = 0;
    *r = (tkb__history_run){0};
    r->id = e->column_int(st_, c++);
    r->time = e->column_int(st_, c++);
    r->kind = keep(s, e->column_text(st_, c++), &failed);
    r->status = keep(s, e->column_text(st_, c++), &failed);
    r->commit = keep(s, e->column_text(st_, c++), &failed);
    r->branch = keep(s, e->column_text(st_, c++), &failed);
    r->machine = keep(s, e->column_text(st_, c++), &failed);
    r->host = keep(s, e->column_text(st_, c++), &failed);
    r->cpu_model = keep(s, e->column_text(st_, c++), &failed);
    r->cpu_isa = keep(s, e->column_text(st_, c++), &failed);
    r->kernel = keep(s, e->column_text(st_, c++), &failed);
    r->cores = (int)e->column_int(st_, c++);
    r->memory_bytes = e->column_int(st_, c++);
    r->device = keep(s, e->column_text(st_, c++), &failed);
    r->device_name = keep(s, e->column_text(st_, c++), &failed);
    r->device_uuid = keep(s, e->column_text(st_, c++), &failed);
    r->driver = keep(s, e->column_text(st_, c++), &failed);
    r->tkbench_version = keep(s, e->column_text(st_, c++), &failed);
    r->method = keep(s, e->column_text(st_, c++), &failed);
    r->stopping_rule = keep(s, e->column_text(st_, c++), &failed);
    r->seed = seed ? strtoull(seed, NULL, 10) : 0;
    c++;
    r->threads = (int)e->column_int(st_, c++);
    r->settings = keep(s, e->column_text(st_, c++), &failed);
    r->source = keep(s, e->column_text(st_, c++), &failed);
    r->n_entries = (size_t)e->column_int(st_, c++);
  }
  if (st_) h->e->finalize(st_);
  if (!st && failed) st = oom(h);
  if (st) {
    tkb__history_runs_free(out);
    return st;
  }
  for (size_t i = 0; i < out->n / 2; i++) { /* oldest first */
    tkb__history_run t = out->items[i];
    out->items[i] = out->items[out->n - 1 - i];
    out->items[out->n - 1 - i] = t;
  }
  return TKB_OK;
}

void tkb__history_runs_free(tkb__history_runs *r) {
  free(r->items);
  strings_free(r->storage);
  *r = (tkb__history_runs){0};
}

/* ---- peaks ---- */

tkb_status tkb__history_peaks_list(tkb__history *h, int64_t run_id, tkb__history_peaks *out) {
  *out = (tkb__history_peaks){0};
  strings *s = calloc(1, sizeof *s);
  if (!s) return oom(h);
  out->storage = s;
  if (h->version < 2) return TKB_OK; /* version 1 kept none */
  tkb__hx_stmt *q = NULL;
  tkb_status st = h->e->prepare(h->c, "SELECT name, value, unit FROM tkb_peaks WHERE run_id = ? ORDER BY name", &q);
  if (st) return st;
  h->e->bind_int(q, 1, run_id);
  size_t cap = 0;
  bool row = false, failed = false;
  while (!(st = h->e->step(q, &row)) && row) {
    if (!grow((void **)&out->items, out->n, &cap, sizeof *out->items)) {
      failed = true;
      break;
    }
    out->items[out->n++] = (tkb__history_peak){.name = keep(s, h->e->column_text(q, 0), &failed),
                                               .value = h->e->column_double(q, 1),
                                               .unit = keep(s, h->e->column_text(q, 2), &failed)};
  }
  h->e->finalize(q);
  if (!st && failed) st = oom(h);
  if (st) tkb__history_peaks_free(out);
  return st;
}

void tkb__history_peaks_free(tkb__history_peaks *p) {
  free(p->items);
  strings_free(p->storage);
  *p = (tkb__history_peaks){0};
}

/* ---- series ---- */

static bool any_of(const char *v, const char *const *list, size_t n) {
  if (!n) return true;
  for (size_t i = 0; v && i < n; i++)
    if (!strcmp(v, list[i])) return true;
  return false;
}

/* Whether the comma-separated tags hold every one of list[0..n) (as `run --tag`). */
static bool all_tags(const char *tags, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++) {
    bool has = false;
    for (const char *p = tags ? tags : ""; *p && !has;) {
      const size_t len = strcspn(p, ",");
      has = strlen(list[i]) == len && !strncmp(p, list[i], len);
      p += len + (p[len] == ',');
    }
    if (!has) return false;
  }
  return true;
}

/* The filter as run takes it (a leading '-' keeps the names it does not match). */
static bool selected(const tkb__history_query *q, const tkb__name_filter *re, const char *name, const char *op,
                     const char *impl, const char *mode, const char *tags) {
  return tkb__name_filter_match(re, name) && any_of(op, q->ops, q->n_ops) &&
         any_of(impl, q->impls, q->n_impls) && any_of(mode, q->modes, q->n_modes) &&
         all_tags(tags, q->tags, q->n_tags);
}

static int series_by_name(const void *a, const void *b) {
  return strcmp(((const tkb__history_series *)a)->name, ((const tkb__history_series *)b)->name);
}

/* A series holds numbers of one unit, its latest point's: an entry timed in some runs
 * and counted (the instructions method) in others has two kinds of number, and a step
 * between them is no change of the code or the machine. */
static void one_unit(tkb__history_series *se) {
  if (se->n < 2) return;
  const char *unit = se->points[se->n - 1].unit;
  size_t kept = 0;
  for (size_t k = 0; k < se->n; k++) {
    const char *u = se->points[k].unit;
    if ((u && unit && !strcmp(u, unit)) || (!u && !unit)) se->points[kept++] = se->points[k];
  }
  se->n = kept;
}

tkb_status tkb__history_series_read(tkb__history *h, const tkb__history_query *q, tkb__history_series_list *out) {
  *out = (tkb__history_series_list){0};
  if (!q || !q->machine)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "a series is read on one machine: the query names none "
                         "(the machines of %s are listed by 'tkbench history list')", h->shown);
  int64_t machine_id;
  bool found;
  tkb_status st = tkb__hx_query_int(h, "SELECT id FROM tkb_machines WHERE key = ?", q->machine, &machine_id, &found);
  if (st) return st;
  if (!found) {
    char *key;
    st = tkb__history_machine_resolve(h, q->machine, &key); /* its message lists the machines */
    free(key);
    if (!st) st = tkb_set_error(TKB_ERR_NOT_FOUND, "machine '%s' is no key of %s (resolve it first)",
                                q->machine, h->shown);
    return st;
  }
  tkb__name_filter re;
  if ((st = tkb__name_filter_init(&re, q->filter))) return st;
  strings *s = calloc(1, sizeof *s);
  if (!s) {
    tkb__name_filter_free(&re);
    return oom(h);
  }
  out->storage = s;
  char cond[512], sql[3072];
  where(q, cond, sizeof cond);
  size_t len = (size_t)snprintf(
      sql, sizeof sql,
      "SELECT e.id, e.name, e.op, e.spec, e.impl, e.mode, e.tags, r.id, r.started, r.commit_id, r.branch, "
      "x.status, %s, x.median, x.ci_low, x.ci_high, x.n, x.q_min, x.q10, x.q25, x.q75, x.q90, x.q_max "
      "FROM tkb_results x JOIN tkb_runs r ON r.id = x.run_id JOIN tkb_machines m ON m.id = r.machine_id "
      "JOIN tkb_entries e ON e.id = x.entry_id%s",
      h->version >= 2 ? "x.unit" : "'ns'", cond);
  if (q->last)
    len += (size_t)snprintf(sql + len, sizeof sql - len,
                            " AND r.id IN (SELECT r.id FROM tkb_runs r JOIN tkb_machines m ON m.id = "
                            "r.machine_id%s ORDER BY r.started DESC, r.id DESC LIMIT ?)", cond);
  snprintf(sql + len, sizeof sql - len, " ORDER BY e.id, r.started, r.id");
  tkb__hx_stmt *x = NULL;
  st = h->e->prepare(h->c, sql, &x);
  if (!st) {
    int k = bind_where(h, x, q, 1);
    if (q->last) {
      k = bind_where(h, x, q, k);
      h->e->bind_int(x, k, (int64_t)q->last);
    }
  }
  size_t cap = 0, point_cap = 0;
  int64_t entry = -1;
  bool row = false, failed = false, take = false;
  const tkb__hx_engine *e = h->e;
  while (!st && !(st = e->step(x, &row)) && row && !failed) {
    const int64_t id = e->column_int(x, 0);
    if (id != entry) { /* the next entry's points */
      entry = id;
      take = selected(q, &re, e->column_text(x, 1), e->column_text(x, 2),
                      e->column_text(x, 4), e->column_text(x, 5), e->column_text(x, 6));
      if (!take) continue;
      if (!grow((void **)&out->items, out->n, &cap, sizeof *out->items)) {
        failed = true;
        break;
      }
      point_cap = 0;
      out->items[out->n++] = (tkb__history_series){.name = keep(s, e->column_text(x, 1), &failed),
                                                    .op = keep(s, e->column_text(x, 2), &failed),
                                                    .spec = keep(s, e->column_text(x, 3), &failed),
                                                    .impl = keep(s, e->column_text(x, 4), &failed),
                                                    .mode = keep(s, e->column_text(x, 5), &failed),
                                                    .tags = keep(s, e->column_text(x, 6), &failed)};
    }
    if (!take) continue;
    tkb__history_series *se = &out->items[out->n - 1];
    if (!grow((void **)&se->points, se->n, &point_cap, sizeof *se->points)) {
      failed = true;
      break;
    }
    int c = 7;
    tkb__history_point *p = &se->points[se->n++];
    p->run_id = e->column_int(x, c++);
    p->time = e->column_int(x, c++);
    p->commit = keep(s, e->column_text(x, c++), &failed);
    p->branch = keep(s, e->column_text(x, c++), &failed);
    p->status = keep(s, e->column_text(x, c++), &failed);
    p->unit = keep(s, e->column_text(x, c++), &failed);
    p->median = e->column_double(x, c++);
    p->ci_low = e->column_double(x, c++);
    p->ci_high = e->column_double(x, c++);
    p->n = e->column_int(x, c++);
    p->min = e->column_double(x, c++);
    p->p10 = e->column_double(x, c++);
    p->p25 = e->column_double(x, c++);
    p->p75 = e->column_double(x, c++);
    p->p90 = e->column_double(x, c++);
    p->max = e->column_double(x, c++);
  }
  if (x) e->finalize(x);
  tkb__name_filter_free(&re);
  if (!st && failed) st = oom(h);
  if (st) {
    tkb__history_series_free(out);
    return st;
  }
  for (size_t i = 0; i < out->n; i++) one_unit(&out->items[i]);
  if (out->n) qsort(out->items, out->n, sizeof *out->items, series_by_name);
  return TKB_OK;
}

void tkb__history_series_free(tkb__history_series_list *s) {
  for (size_t i = 0; i < s->n; i++) free(s->items[i].points);
  free(s->items);
  strings_free(s->storage);
  *s = (tkb__history_series_list){0};
}
