/*
 * history_store.c - the results store's writing side, the same for every engine: open
 * (the engine chosen by the location, the schema checked and migrated), record a run
 * whole in one transaction, prune. The reads are history_read.c.
 */
#include "history_engine.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long a writer waits for another by default: a run of thousands of entries takes
 * well under a second to record, a PostgreSQL server on a busy network longer. */
#define DEFAULT_BUSY_MS 30000

bool tkb__history_is_url(const char *location) {
  return location && (!strncmp(location, "postgresql://", 13) || !strncmp(location, "postgres://", 11));
}

/* The location as messages show it: a URL's password (user:PASSWORD@, password=...)
 * as "***". */
static char *shown_location(const char *location) {
  char *s = malloc(strlen(location) + 8);
  if (!s) return NULL;
  strcpy(s, location);
  if (!tkb__history_is_url(location)) return s;
  char *auth = strstr(s, "://") + 3;
  const size_t auth_len = strcspn(auth, "/?");
  char *at = memchr(auth, '@', auth_len);
  char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
  if (colon) {
    memmove(colon + 4, at, strlen(at) + 1);
    memcpy(colon + 1, "***", 3);
  }
  char *pw = strstr(s, "password=");
  if (pw) {
    char *value = pw + 9, *end = value + strcspn(value, "&");
    memmove(value + 3, end, strlen(end) + 1);
    memcpy(value, "***", 3);
  }
  return s;
}

void tkb__history_close(tkb__history *h) {
  if (!h) return;
  if (h->c) h->e->close(h->c);
  free(h->location);
  free(h->shown);
  free(h);
}

tkb_status tkb__history_open(const char *location, const tkb__history_open_opts *opts, tkb__history **out) {
  *out = NULL;
  if (!location || !*location)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "the history store's location is empty: expected a "
                         "file (history.sqlite) or a postgresql:// URL");
  tkb__history_open_opts o = opts ? *opts : (tkb__history_open_opts){0};
  if (o.busy_ms <= 0) o.busy_ms = DEFAULT_BUSY_MS;
  tkb__history *h = calloc(1, sizeof *h);
  if (!h) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory opening %s", location);
  h->e = tkb__history_is_url(location) ? &tkb__hx_postgres : &tkb__hx_sqlite;
  h->read_only = o.read_only;
  h->location = tkb__strdup(location);
  h->shown = shown_location(location);
  if (!h->location || !h->shown) {
    tkb__history_close(h);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory opening %s", location);
  }
  bool created = false;
  tkb_status st = h->e->open(h->location, h->shown, &o, &h->c, &created);
  if (!st) st = o.read_only ? tkb__hx_schema_read(h) : tkb__hx_schema_migrate(h, created);
  if (st) {
    tkb__history_close(h);
    return st;
  }
  *out = h;
  return TKB_OK;
}

const char *tkb__history_location(const tkb__history *h) { return h->shown; }
const char *tkb__history_engine(const tkb__history *h) { return h->e->name; }
int tkb__history_schema_version(const tkb__history *h) { return h->version; }

tkb_status tkb__hx_query_int(tkb__history *h, const char *sql, const char *param, int64_t *out, bool *found) {
  char text[1024];
  if (!tkb__hx_sql(h->e, sql, text, sizeof text))
    return tkb_set_error(TKB_ERR_INTERNAL, "a query of the history store is too long");
  tkb__hx_stmt *s;
  tkb_status st = h->e->prepare(h->c, text, &s);
  if (st) return st;
  if (param) h->e->bind_text(s, 1, param);
  bool row = false;
  st = h->e->step(s, &row);
  *found = !st && row && !h->e->column_null(s, 0);
  *out = *found ? h->e->column_int(s, 0) : 0;
  h->e->finalize(s);
  return st;
}

/* ---- recording ---- */

/* A statement that returns one id (an upsert or insert with RETURNING). */
static tkb_status returned_id(tkb__history *h, tkb__hx_stmt *s, int64_t *id) {
  bool row = false;
  tkb_status st = h->e->step(s, &row);
  if (!st && !row) st = tkb_set_error(TKB_ERR_INTERNAL, "the history store %s returned no id", h->shown);
  if (!st) *id = h->e->column_int(s, 0);
  h->e->reset(s);
  return st;
}

static const char *const machine_sql =
    "INSERT INTO tkb_machines (key, host, cpu_model, cores, device, device_name, first_seen) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET key = excluded.key RETURNING id";

static const char *const run_sql =
    "INSERT INTO tkb_runs (machine_id, started, kind, status, commit_id, branch, host, cpu_model, "
    "cpu_isa, kernel, cores, memory_bytes, device, device_name, device_uuid, driver, tkbench_version, "
    "method, stopping_rule, seed, threads, settings, source, n_entries) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id";

/* The latest op, spec, impl, mode and tags win; a file that knows none keeps them. */
static const char *const entry_sql =
    "INSERT INTO tkb_entries (name, op, spec, impl, mode, tags) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (name) DO UPDATE SET op = COALESCE(excluded.op, tkb_entries.op), "
    "spec = COALESCE(excluded.spec, tkb_entries.spec), impl = COALESCE(excluded.impl, tkb_entries.impl), "
    "mode = COALESCE(excluded.mode, tkb_entries.mode), tags = COALESCE(excluded.tags, tkb_entries.tags) "
    "RETURNING id";

static const char *const result_sql =
    "INSERT INTO tkb_results (run_id, entry_id, device, status, message, median, ci_low, ci_high, n, "
    "q_min, q10, q25, q75, q90, q_max, warnings, counters, unit) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

static const char *const peak_sql = "INSERT INTO tkb_peaks (run_id, name, value, unit) VALUES (?, ?, ?, ?) "
                                    "ON CONFLICT (run_id, name) DO NOTHING";

static int by_name(const void *a, const void *b) {
  const tkb__history_entry *x = *(const tkb__history_entry *const *)a, *y = *(const tkb__history_entry *const *)b;
  return strcmp(x->name, y->name);
}

static tkb_status prepare(tkb__history *h, const char *sql, tkb__hx_stmt **s) {
  *s = NULL;
  return h->e->prepare(h->c, sql, s);
}

/* Everything of the record inside the transaction; the entries in name order. */
static tkb_status record_in(tkb__history *h, const tkb__history_run *run, const tkb__history_entry *const *sorted,
                            size_t n, size_t n_unique, const tkb__history_peak *peaks, size_t n_peaks,
                            int64_t *run_id) {
  const tkb__hx_engine *e = h->e;
  tkb__hx_stmt *m = NULL, *r = NULL, *en = NULL, *x = NULL, *p = NULL;
  int64_t machine_id = 0, id = 0;
  tkb_status st = prepare(h, machine_sql, &m);
  if (!st) {
    e->bind_text(m, 1, run->machine);
    e->bind_text(m, 2, run->host);
    e->bind_text(m, 3, run->cpu_model);
    e->bind_int(m, 4, run->cores);
    e->bind_text(m, 5, run->device);
    e->bind_text(m, 6, run->device_name);
    e->bind_int(m, 7, run->time);
    st = returned_id(h, m, &machine_id);
  }
  if (!st) st = prepare(h, run_sql, &r);
  if (!st) {
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)run->seed);
    int k = 1;
    e->bind_int(r, k++, machine_id);
    e->bind_int(r, k++, run->time);
    e->bind_text(r, k++, run->kind ? run->kind : "run");
    e->bind_text(r, k++, run->status ? run->status : "complete");
    e->bind_text(r, k++, run->commit);
    e->bind_text(r, k++, run->branch);
    e->bind_text(r, k++, run->host);
    e->bind_text(r, k++, run->cpu_model);
    e->bind_text(r, k++, run->cpu_isa);
    e->bind_text(r, k++, run->kernel);
    e->bind_int(r, k++, run->cores);
    e->bind_int(r, k++, run->memory_bytes);
    e->bind_text(r, k++, run->device);
    e->bind_text(r, k++, run->device_name);
    e->bind_text(r, k++, run->device_uuid);
    e->bind_text(r, k++, run->driver);
    e->bind_text(r, k++, run->tkbench_version);
    e->bind_text(r, k++, run->method);
    e->bind_text(r, k++, run->stopping_rule);
    e->bind_text(r, k++, seed);
    e->bind_int(r, k++, run->threads);
    e->bind_text(r, k++, run->settings);
    e->bind_text(r, k++, run->source);
    e->bind_int(r, k++, (int64_t)n_unique);
    st = returned_id(h, r, &id);
  }
  if (!st) st = prepare(h, entry_sql, &en);
  if (!st) st = prepare(h, result_sql, &x);
  for (size_t i = 0; i < n && !st; i++) {
    const tkb__history_entry *t = sorted[i];
    if (i > 0 && !strcmp(sorted[i - 1]->name, t->name)) continue; /* named twice: the first */
    int64_t entry_id = 0;
    e->bind_text(en, 1, t->name);
    e->bind_text(en, 2, t->op);
    e->bind_text(en, 3, t->spec);
    e->bind_text(en, 4, t->impl);
    e->bind_text(en, 5, t->mode);
    e->bind_text(en, 6, t->tags);
    if ((st = returned_id(h, en, &entry_id))) break;
    int k = 1;
    e->bind_int(x, k++, id);
    e->bind_int(x, k++, entry_id);
    e->bind_text(x, k++, t->device ? t->device : run->device);
    e->bind_text(x, k++, t->status ? t->status : "ok");
    e->bind_text(x, k++, t->message);
    e->bind_double(x, k++, t->median);
    e->bind_double(x, k++, t->ci_low);
    e->bind_double(x, k++, t->ci_high);
    e->bind_int(x, k++, t->n);
    e->bind_double(x, k++, t->min);
    e->bind_double(x, k++, t->p10);
    e->bind_double(x, k++, t->p25);
    e->bind_double(x, k++, t->p75);
    e->bind_double(x, k++, t->p90);
    e->bind_double(x, k++, t->max);
    e->bind_text(x, k++, t->warnings);
    e->bind_text(x, k++, t->counters);
    e->bind_text(x, k++, t->unit ? t->unit : "ns");
    bool row;
    st = e->step(x, &row);
    e->reset(x);
  }
  if (!st && n_peaks) st = prepare(h, peak_sql, &p);
  for (size_t i = 0; i < n_peaks && !st; i++) {
    if (!isfinite(peaks[i].value)) continue;
    bool row;
    e->bind_int(p, 1, id);
    e->bind_text(p, 2, peaks[i].name);
    e->bind_double(p, 3, peaks[i].value);
    e->bind_text(p, 4, peaks[i].unit);
    st = e->step(p, &row);
    e->reset(p);
  }
  e->finalize(m);
  e->finalize(r);
  e->finalize(en);
  e->finalize(x);
  e->finalize(p);
  if (!st && run_id) *run_id = id;
  return st;
}

tkb_status tkb__history_record(tkb__history *h, const tkb__history_run *run, const tkb__history_entry *e,
                               size_t n, const tkb__history_peak *peaks, size_t n_peaks, int64_t *run_id) {
  if (h->read_only)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "the history store %s was opened read-only", h->shown);
  if (!run || !run->machine || !*run->machine)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "a run recorded into %s needs its machine's key", h->shown);
  for (size_t i = 0; i < n; i++)
    if (!e[i].name || !*e[i].name)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "entry %zu of the run recorded into %s has no name", i, h->shown);
  const tkb__history_entry **sorted = malloc((n ? n : 1) * sizeof *sorted);
  if (!sorted) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory recording %zu entries", n);
  for (size_t i = 0; i < n; i++) sorted[i] = &e[i];
  /* one order for every writer: PostgreSQL's row locks on shared entries are then taken
   * in the same order by all (besides the writers' lock); names given twice are next to
   * each other */
  qsort(sorted, n, sizeof *sorted, by_name);
  size_t unique = 0;
  for (size_t i = 0; i < n; i++) unique += i == 0 || strcmp(sorted[i - 1]->name, sorted[i]->name) != 0;
  tkb_status st = h->e->begin_write(h->c);
  if (!st) {
    st = record_in(h, run, sorted, n, unique, peaks, n_peaks, run_id);
    if (st) h->e->rollback(h->c);
    else st = h->e->commit(h->c);
  }
  free(sorted);
  return st;
}

/* ---- pruning ---- */

/* Runs one statement with up to one integer parameter (a negative one: none). */
static tkb_status run_one(tkb__history *h, const char *sql, int64_t param) {
  tkb__hx_stmt *s;
  tkb_status st = h->e->prepare(h->c, sql, &s);
  if (st) return st;
  if (param >= 0) h->e->bind_int(s, 1, param);
  bool row;
  st = h->e->step(s, &row);
  h->e->finalize(s);
  return st;
}

/* The runs `doomed` (a SELECT of their ids with one integer parameter) and what only
 * they held. */
static tkb_status remove_runs(tkb__history *h, const char *doomed, int64_t param, size_t *n_removed) {
  char sql[1024];
  int64_t count = 0;
  bool found;
  snprintf(sql, sizeof sql, "SELECT count(*) FROM tkb_runs WHERE id IN (%s)", doomed);
  tkb__hx_stmt *s;
  tkb_status st = h->e->prepare(h->c, sql, &s);
  if (!st) {
    h->e->bind_int(s, 1, param);
    bool row = false;
    st = h->e->step(s, &row);
    found = !st && row;
    if (found) count = h->e->column_int(s, 0);
    h->e->finalize(s);
  }
  if (st || count == 0) return st;
  const char *const tables[] = {"tkb_results", "tkb_peaks"};
  for (size_t i = 0; i < TKB_ARRAY_LEN(tables) && !st; i++) {
    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE run_id IN (%s)", tables[i], doomed);
    st = run_one(h, sql, param);
  }
  if (!st) {
    snprintf(sql, sizeof sql, "DELETE FROM tkb_runs WHERE id IN (%s)", doomed);
    st = run_one(h, sql, param);
  }
  if (!st) *n_removed += (size_t)count;
  return st;
}

tkb_status tkb__history_prune(tkb__history *h, int keep_days, int keep_runs, size_t *n_removed) {
  *n_removed = 0;
  if (h->read_only)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "the history store %s was opened read-only", h->shown);
  if (keep_days < 0 || keep_runs < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "prune keeps %d days and %d runs: expected counts >= 0",
                         keep_days, keep_runs);
  tkb_status st = h->e->begin_write(h->c);
  if (st) return st;
  if (keep_days > 0)
    st = remove_runs(h, "SELECT id FROM tkb_runs WHERE started < ?", (int64_t)time(NULL) - (int64_t)keep_days * 86400,
                     n_removed);
  if (!st && keep_runs > 0)
    st = remove_runs(h, "SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY machine_id ORDER BY "
                        "started DESC, id DESC) AS k FROM tkb_runs) AS ranked WHERE k > ?",
                     keep_runs, n_removed);
  if (!st && *n_removed) {
    st = run_one(h, "DELETE FROM tkb_entries WHERE NOT EXISTS (SELECT 1 FROM tkb_results WHERE "
                    "tkb_results.entry_id = tkb_entries.id)", -1);
    if (!st)
      st = run_one(h, "DELETE FROM tkb_machines WHERE NOT EXISTS (SELECT 1 FROM tkb_runs WHERE "
                      "tkb_runs.machine_id = tkb_machines.id)", -1);
  }
  if (st) {
    h->e->rollback(h->c);
    *n_removed = 0;
    return st;
  }
  st = h->e->commit(h->c);
  /* what the runs took goes back to the file system (SQLite keeps freed pages in the file
   * otherwise; PostgreSQL's autovacuum would reach it later). Outside the transaction, as
   * both engines require; the prune stands whether or not this works (another reader
   * holding the file, a role that does not own the tables), so its failure is no error */
  if (!st && *n_removed) (void)h->e->exec(h->c, "VACUUM");
  return st;
}
