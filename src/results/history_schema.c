/*
 * history_schema.c - the results store's schema, the one place it is written: each
 * version is the list of statements that takes a store from the version before to it
 * (version 1 from nothing), so a store of any earlier version is brought up to date by
 * the steps it lacks, and a new store is made by all of them. The version is the
 * tkb_meta row "schema_version". A new version is a new list at the end, never an edit
 * of a shipped one (tests/test_history.c migrates a version 1 store).
 *
 * Every table is prefixed tkb_, so a PostgreSQL database may hold other tables beside
 * them. Values are in their result's unit (ns for times); NULL where unknown.
 *
 *   tkb_meta      key, value: "schema_version", "created_by" (tkbench's version)
 *   tkb_machines  one per machine key (machine.c): the fingerprint it was first seen with
 *   tkb_runs      one per run: when, kind, status, code (commit_id, branch), the machine
 *                 and its fingerprint then, tkbench's version, the settings
 *   tkb_entries   one per entry name: op, spec, impl, mode, tags (the latest seen)
 *   tkb_results   one per run and entry: status, median, its interval, n, quantiles,
 *                 warnings and counters (JSON), and (version 2) the unit
 *   tkb_peaks     (version 2) a run's measured peaks
 */
#include "history_engine.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Version 1: runs, entries and their results, in ns. */
static const char *const version_1[] = {
    "CREATE TABLE tkb_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE tkb_machines (id {id}, key TEXT NOT NULL UNIQUE, host TEXT, cpu_model TEXT, "
    "cores {int}, device TEXT, device_name TEXT, first_seen {int} NOT NULL)",
    "CREATE TABLE tkb_runs (id {id}, machine_id {int} NOT NULL REFERENCES tkb_machines (id), "
    "started {int} NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL, commit_id TEXT, branch TEXT, "
    "host TEXT, cpu_model TEXT, cpu_isa TEXT, kernel TEXT, cores {int}, memory_bytes {int}, "
    "device TEXT, device_name TEXT, device_uuid TEXT, driver TEXT, tkbench_version TEXT, "
    "method TEXT, stopping_rule TEXT, seed TEXT, threads {int}, settings TEXT, source TEXT, "
    "n_entries {int} NOT NULL)",
    "CREATE INDEX tkb_runs_machine ON tkb_runs (machine_id, started)",
    "CREATE TABLE tkb_entries (id {id}, name TEXT NOT NULL UNIQUE, op TEXT, spec TEXT, impl TEXT, "
    "mode TEXT, tags TEXT)",
    "CREATE TABLE tkb_results (run_id {int} NOT NULL REFERENCES tkb_runs (id), "
    "entry_id {int} NOT NULL REFERENCES tkb_entries (id), device TEXT, status TEXT NOT NULL, "
    "message TEXT, median {real}, ci_low {real}, ci_high {real}, n {int}, q_min {real}, "
    "q10 {real}, q25 {real}, q75 {real}, q90 {real}, q_max {real}, warnings TEXT, counters TEXT, "
    "PRIMARY KEY (run_id, entry_id))",
    "CREATE INDEX tkb_results_entry ON tkb_results (entry_id)",
    NULL,
};

/* Version 2: a unit per result (times stay ns; counts of instructions and the like can
 * come), and the machine's measured peaks per run. */
static const char *const version_2[] = {
    "ALTER TABLE tkb_results ADD COLUMN unit TEXT NOT NULL DEFAULT 'ns'",
    "CREATE TABLE tkb_peaks (run_id {int} NOT NULL REFERENCES tkb_runs (id), name TEXT NOT NULL, "
    "value {real}, unit TEXT, PRIMARY KEY (run_id, name))",
    NULL,
};

static const char *const *const versions[] = {version_1, version_2};
_Static_assert(sizeof versions / sizeof versions[0] == TKB__HISTORY_SCHEMA_VERSION,
               "one list of statements per schema version");

bool tkb__hx_sql(const tkb__hx_engine *e, const char *sql, char *buf, size_t cap) {
  size_t len = 0;
  for (const char *p = sql; *p;) {
    const char *with = NULL;
    size_t skip = 0;
    if (!strncmp(p, "{id}", 4)) with = e->t_id, skip = 4;
    else if (!strncmp(p, "{int}", 5)) with = e->t_int, skip = 5;
    else if (!strncmp(p, "{real}", 6)) with = e->t_real, skip = 6;
    if (with) {
      const size_t n = strlen(with);
      if (len + n >= cap) return false;
      memcpy(buf + len, with, n);
      len += n;
      p += skip;
    } else {
      if (len + 1 >= cap) return false;
      buf[len++] = *p++;
    }
  }
  buf[len] = '\0';
  return true;
}

/* The version the store says it has: 0 without tkb_meta (nothing made yet). */
static tkb_status read_version(tkb__history *h, int *version) {
  bool has_meta = false;
  *version = 0;
  tkb_status st = h->e->has_table(h->c, "tkb_meta", &has_meta);
  if (st || !has_meta) return st;
  int64_t v = 0;
  bool found = false;
  st = tkb__hx_query_int(h, "SELECT CAST(value AS {int}) FROM tkb_meta WHERE key = 'schema_version'", NULL,
                         &v, &found);
  if (st) return st;
  if (!found || v < 1)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "the history store %s is damaged: its tkb_meta table "
                         "has no schema_version", h->shown);
  *version = (int)v;
  return TKB_OK;
}

/* A version this code cannot read, or (SQLite) someone else's database: refused. */
static tkb_status check_readable(tkb__history *h, int version) {
  if (version > TKB__HISTORY_SCHEMA_VERSION)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, "the history store %s has schema version %d, newer than this "
                         "tkbench (%s) reads (1 to %d): use the newer tkbench that wrote it",
                         h->shown, version, tkb_version(), TKB__HISTORY_SCHEMA_VERSION);
  if (version == 0 && h->e == &tkb__hx_sqlite) {
    char tables[512];
    tkb_status st = h->e->tables(h->c, tables, sizeof tables);
    if (st) return st;
    if (tables[0])
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s is not a tkbench history store: it is an SQLite "
                           "database holding other tables (%s)", h->shown, tables);
  }
  return TKB_OK;
}

/* Applies the steps from `from` to `to` (inside the caller's transaction). */
static tkb_status apply(tkb__history *h, int from, int to) {
  char sql[2048];
  for (int v = from + 1; v <= to; v++) {
    for (const char *const *s = versions[v - 1]; *s; s++) {
      if (!tkb__hx_sql(h->e, *s, sql, sizeof sql))
        return tkb_set_error(TKB_ERR_INTERNAL, "a statement of schema version %d is too long", v);
      tkb_status st = h->e->exec(h->c, sql);
      if (st) return st;
    }
    if (v == 1) {
      snprintf(sql, sizeof sql, "INSERT INTO tkb_meta (key, value) VALUES ('schema_version', '1'), "
                                "('created_by', 'tkbench %s')", tkb_version());
    } else {
      snprintf(sql, sizeof sql, "UPDATE tkb_meta SET value = '%d' WHERE key = 'schema_version'", v);
    }
    tkb_status st = h->e->exec(h->c, sql);
    if (st) return st;
  }
  return TKB_OK;
}

/* Brings the store to version `to` in one write transaction, re-reading the version
 * inside it (another process may have made or migrated it meanwhile). */
static tkb_status migrate_to(tkb__history *h, int to) {
  int version;
  tkb_status st = read_version(h, &version);
  if (!st) st = check_readable(h, version);
  if (st || version >= to) {
    h->version = version;
    return st;
  }
  if ((st = h->e->begin_write(h->c))) return st;
  st = read_version(h, &version);
  if (!st) st = check_readable(h, version);
  if (!st && version < to) st = apply(h, version, to);
  if (st) {
    h->e->rollback(h->c);
    return st;
  }
  if ((st = h->e->commit(h->c))) return st;
  h->version = version < to ? to : version;
  return TKB_OK;
}

tkb_status tkb__hx_schema_migrate(tkb__history *h, bool created) {
  (void)created; /* a new file and an old store take the same path: the steps it lacks */
  return migrate_to(h, TKB__HISTORY_SCHEMA_VERSION);
}

tkb_status tkb__hx_schema_read(tkb__history *h) {
  int version;
  tkb_status st = read_version(h, &version);
  if (!st) st = check_readable(h, version);
  if (!st) h->version = version;
  return st;
}

tkb_status tkb__hx_schema_create_at(const char *location, int version) {
  if (version < 1 || version > TKB__HISTORY_SCHEMA_VERSION)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "schema version %d: expected 1 to %d", version,
                         TKB__HISTORY_SCHEMA_VERSION);
  tkb__history *h;
  /* opened read-only first would refuse a missing file; opened to write, it migrates all
   * the way: so the connection is made here with the engine itself */
  tkb__history_open_opts o = {.busy_ms = 30000};
  h = calloc(1, sizeof *h);
  if (!h) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  h->e = tkb__history_is_url(location) ? &tkb__hx_postgres : &tkb__hx_sqlite;
  h->location = tkb__strdup(location);
  h->shown = tkb__strdup(location);
  bool created;
  tkb_status st = h->location && h->shown ? h->e->open(location, h->shown, &o, &h->c, &created)
                                          : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  if (!st) st = migrate_to(h, version);
  tkb__history_close(h);
  return st;
}
