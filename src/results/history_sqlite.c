/*
 * history_sqlite.c - the results store's default engine: one SQLite file in WAL mode
 * (readers never wait; writers take turns, each waiting up to the busy time for the one
 * before), through Debian's libsqlite3.
 *
 * libsqlite3 is opened (dlopen) when a store is first opened, not linked: linked, its
 * loading and relocation would be paid at every start of every program (`tkbench
 * --version`, `list`, every worker's exec), which bench_startup measures, for a store that
 * most runs never open. The header gives the types and constants; the functions come
 * from the table below.
 */
#include "history_engine.h"
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SQLITE_SONAME "libsqlite3.so.0"

static struct {
  int (*open_v2)(const char *, sqlite3 **, int, const char *);
  int (*close_v2)(sqlite3 *);
  const char *(*errmsg)(sqlite3 *);
  const char *(*errstr)(int);
  int (*extended_errcode)(sqlite3 *);
  int (*busy_timeout)(sqlite3 *, int);
  int (*exec)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **);
  void (*free)(void *);
  int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
  int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
  int (*bind_double)(sqlite3_stmt *, int, double);
  int (*bind_text)(sqlite3_stmt *, int, const char *, int, void (*)(void *));
  int (*bind_null)(sqlite3_stmt *, int);
  int (*step)(sqlite3_stmt *);
  int (*column_type)(sqlite3_stmt *, int);
  sqlite3_int64 (*column_int64)(sqlite3_stmt *, int);
  double (*column_double)(sqlite3_stmt *, int);
  const unsigned char *(*column_text)(sqlite3_stmt *, int);
  int (*reset)(sqlite3_stmt *);
  int (*clear_bindings)(sqlite3_stmt *);
  int (*finalize)(sqlite3_stmt *);
  int (*db_readonly)(sqlite3 *, const char *);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512]; /* empty once api is complete */

static void load(void) {
  void *lib = dlopen(SQLITE_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "cannot load SQLite (%s): %s; install libsqlite3-0 (scripts/bootstrap.sh)",
             SQLITE_SONAME, e ? e : "not found");
    return;
  }
  /* the library stays open for the life of the process: the pointers point into it */
  const struct {
    void **at;
    const char *name;
  } fns[] = {
      {(void **)&api.open_v2, "sqlite3_open_v2"},       {(void **)&api.close_v2, "sqlite3_close_v2"},
      {(void **)&api.errmsg, "sqlite3_errmsg"},         {(void **)&api.errstr, "sqlite3_errstr"},
      {(void **)&api.extended_errcode, "sqlite3_extended_errcode"},
      {(void **)&api.busy_timeout, "sqlite3_busy_timeout"}, {(void **)&api.exec, "sqlite3_exec"},
      {(void **)&api.free, "sqlite3_free"},             {(void **)&api.prepare_v2, "sqlite3_prepare_v2"},
      {(void **)&api.bind_int64, "sqlite3_bind_int64"}, {(void **)&api.bind_double, "sqlite3_bind_double"},
      {(void **)&api.bind_text, "sqlite3_bind_text"},   {(void **)&api.bind_null, "sqlite3_bind_null"},
      {(void **)&api.step, "sqlite3_step"},             {(void **)&api.column_type, "sqlite3_column_type"},
      {(void **)&api.column_int64, "sqlite3_column_int64"},
      {(void **)&api.column_double, "sqlite3_column_double"},
      {(void **)&api.column_text, "sqlite3_column_text"}, {(void **)&api.reset, "sqlite3_reset"},
      {(void **)&api.clear_bindings, "sqlite3_clear_bindings"},
      {(void **)&api.finalize, "sqlite3_finalize"},     {(void **)&api.db_readonly, "sqlite3_db_readonly"},
  };
  for (size_t i = 0; i < TKB_ARRAY_LEN(fns); i++)
    if (!(*fns[i].at = dlsym(lib, fns[i].name))) {
      snprintf(why, sizeof why, "%s has no %s (SQLite 3.7.11 or later is needed)", SQLITE_SONAME, fns[i].name);
      return;
    }
}

struct tkb__hx_conn {
  sqlite3 *db;
  const char *shown;
  int busy_ms;
  bool wal;           /* WAL mode set (on the first write) */
};

struct tkb__hx_stmt {
  tkb__hx_conn *c;
  sqlite3_stmt *st;
};

/* The error of a failed call as history.h states them, naming the store. */
static tkb_status fail(tkb__hx_conn *c, int rc, const char *doing) {
  const int primary = rc & 0xff;
  const char *msg = c && c->db ? api.errmsg(c->db) : api.errstr(rc);
  const char *shown = c ? c->shown : "?";
  switch (primary) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return tkb_set_error(TKB_ERR_IO, "the history store %s is locked by another writer (waited %.1f s "
                         "while %s); try again when it is done", shown, c ? c->busy_ms / 1000.0 : 0.0, doing);
  case SQLITE_NOTADB:
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s is not a tkbench history store: it is not an "
                         "SQLite database (%s)", shown, msg);
  case SQLITE_CORRUPT:
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "the history store %s is damaged (%s while %s); "
                         "restore it from a copy, or move it away to start a new one", shown, msg, doing);
  case SQLITE_READONLY:
  case SQLITE_PERM:
  case SQLITE_AUTH:
    return tkb_set_error(TKB_ERR_IO, "cannot write the history store %s: %s (while %s)", shown, msg, doing);
  case SQLITE_NOMEM:
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory while %s in the history store %s", doing, shown);
  default:
    return tkb_set_error(TKB_ERR_IO, "the history store %s: %s (while %s)", shown, msg, doing);
  }
}

/* Whether the folder holding path lets this process create files (WAL's -wal and -shm). */
static bool folder_writable(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return access(".", W_OK | X_OK) == 0;
  if (slash == path) return access("/", W_OK | X_OK) == 0;
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  return access(dir, W_OK | X_OK) == 0;
}

static void sq_close(tkb__hx_conn *c) {
  if (!c) return;
  if (c->db) api.close_v2(c->db);
  free(c);
}

static tkb_status sq_open(const char *location, const char *shown, const tkb__history_open_opts *o,
                          tkb__hx_conn **out, bool *created) {
  *out = NULL;
  *created = false;
  pthread_once(&once, load);
  if (why[0]) return tkb_set_error(TKB_ERR_UNSUPPORTED, "cannot open the history store %s: %s", shown, why);
  struct stat sb;
  const bool exists = stat(location, &sb) == 0;
  if (exists && S_ISDIR(sb.st_mode))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s is a folder, not a history store (give a file "
                         "name, such as %s/history.sqlite)", shown, shown);
  if (!exists && o->read_only)
    return tkb_set_error(TKB_ERR_NOT_FOUND, "no history store at %s (nothing has been recorded there: "
                         "run with --history %s first)", shown, shown);
  if (!exists && errno != ENOENT)
    return tkb_set_error(TKB_ERR_IO, "cannot open the history store %s: %s", shown, strerror(errno));
  if (!o->read_only && (exists ? access(location, W_OK) != 0 : false))
    return tkb_set_error(TKB_ERR_IO, "cannot write the history store %s: %s", shown, strerror(errno));
  if (!o->read_only && !folder_writable(location))
    return tkb_set_error(TKB_ERR_IO, "cannot write the history store %s: its folder does not let this "
                         "process create files there (%s), which SQLite's write-ahead log needs",
                         shown, strerror(errno));
  tkb__hx_conn *c = calloc(1, sizeof *c);
  if (!c) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory opening %s", shown);
  c->shown = shown;
  c->busy_ms = o->busy_ms;
  const int flags = (o->read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                    SQLITE_OPEN_NOMUTEX;
  int rc = api.open_v2(location, &c->db, flags, NULL);
  if (rc != SQLITE_OK) {
    tkb_status st = fail(c, rc, "opening it");
    sq_close(c);
    return st;
  }
  api.busy_timeout(c->db, c->busy_ms);
  if (!o->read_only && api.db_readonly(c->db, "main") == 1) {
    sq_close(c);
    return tkb_set_error(TKB_ERR_IO, "cannot write the history store %s: the file is read-only", shown);
  }
  /* a file that is no database (or a damaged one) fails here, before anything is written */
  rc = api.exec(c->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    tkb_status st = fail(c, api.extended_errcode(c->db), "reading it");
    sq_close(c);
    return st;
  }
  *created = !exists || sb.st_size == 0;
  *out = c;
  return TKB_OK;
}

static tkb_status sq_exec(tkb__hx_conn *c, const char *sql) {
  int rc = api.exec(c->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? TKB_OK : fail(c, api.extended_errcode(c->db), "writing its schema");
}

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

/* WAL mode (once per file; a no-op read after). Switching takes the file's exclusive
 * lock, for which SQLite calls no busy handler: retried here up to the busy time. */
static tkb_status set_wal(tkb__hx_conn *c) {
  if (c->wal) return TKB_OK;
  int rc, waited = 0;
  while ((rc = api.exec(c->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL)) != SQLITE_OK &&
         (rc & 0xff) == SQLITE_BUSY && waited < c->busy_ms) {
    sleep_ms(20);
    waited += 20;
  }
  if (rc != SQLITE_OK) return fail(c, rc, "switching it to write-ahead logging");
  c->wal = true;
  return TKB_OK;
}

static tkb_status sq_begin_write(tkb__hx_conn *c) {
  tkb_status st = set_wal(c);
  if (st) return st;
  /* IMMEDIATE: the write lock now (waiting for it), not at the first write, where a
   * reader turning writer could only fail */
  int rc = api.exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  return rc == SQLITE_OK ? TKB_OK : fail(c, api.extended_errcode(c->db), "starting to write");
}

static tkb_status sq_commit(tkb__hx_conn *c) {
  int rc = api.exec(c->db, "COMMIT", NULL, NULL, NULL);
  if (rc == SQLITE_OK) return TKB_OK;
  tkb_status st = fail(c, api.extended_errcode(c->db), "committing");
  api.exec(c->db, "ROLLBACK", NULL, NULL, NULL);
  return st;
}

static void sq_rollback(tkb__hx_conn *c) { api.exec(c->db, "ROLLBACK", NULL, NULL, NULL); }

static tkb_status sq_prepare(tkb__hx_conn *c, const char *sql, tkb__hx_stmt **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory in the history store %s", c->shown);
  (*out)->c = c;
  int rc = api.prepare_v2(c->db, sql, -1, &(*out)->st, NULL);
  if (rc == SQLITE_OK) return TKB_OK;
  tkb_status st = fail(c, api.extended_errcode(c->db), "preparing a query");
  free(*out);
  *out = NULL;
  return st;
}

static void sq_bind_int(tkb__hx_stmt *s, int i, int64_t v) { api.bind_int64(s->st, i, v); }
static void sq_bind_double(tkb__hx_stmt *s, int i, double v) {
  if (isnan(v)) api.bind_null(s->st, i);
  else api.bind_double(s->st, i, v);
}
static void sq_bind_text(tkb__hx_stmt *s, int i, const char *v) {
  if (!v) api.bind_null(s->st, i);
  else api.bind_text(s->st, i, v, -1, SQLITE_TRANSIENT);
}

static tkb_status sq_step(tkb__hx_stmt *s, bool *row) {
  int rc = api.step(s->st);
  *row = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW || rc == SQLITE_DONE) return TKB_OK;
  return fail(s->c, api.extended_errcode(s->c->db), "reading or writing it");
}

static bool sq_column_null(tkb__hx_stmt *s, int i) { return api.column_type(s->st, i) == SQLITE_NULL; }
static int64_t sq_column_int(tkb__hx_stmt *s, int i) { return api.column_int64(s->st, i); }
static double sq_column_double(tkb__hx_stmt *s, int i) {
  return api.column_type(s->st, i) == SQLITE_NULL ? NAN : api.column_double(s->st, i);
}
static const char *sq_column_text(tkb__hx_stmt *s, int i) { return (const char *)api.column_text(s->st, i); }
static void sq_reset(tkb__hx_stmt *s) {
  api.reset(s->st);
  api.clear_bindings(s->st);
}
static void sq_finalize(tkb__hx_stmt *s) {
  if (!s) return;
  api.finalize(s->st);
  free(s);
}

static tkb_status sq_has_table(tkb__hx_conn *c, const char *table, bool *exists) {
  tkb__hx_stmt *s;
  tkb_status st = sq_prepare(c, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", &s);
  if (st) return st;
  sq_bind_text(s, 1, table);
  st = sq_step(s, exists);
  sq_finalize(s);
  return st;
}

static tkb_status sq_tables(tkb__hx_conn *c, char *buf, size_t cap) {
  tkb__hx_stmt *s;
  buf[0] = '\0';
  tkb_status st = sq_prepare(c, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", &s);
  bool row = false;
  size_t len = 0;
  while (!st && !(st = sq_step(s, &row)) && row && len < cap)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", sq_column_text(s, 0));
  sq_finalize(s);
  return st;
}

const tkb__hx_engine tkb__hx_sqlite = {
    .name = "sqlite",
    /* AUTOINCREMENT: a pruned run's id is never given to a later one */
    .t_id = "INTEGER PRIMARY KEY AUTOINCREMENT",
    .t_int = "INTEGER",
    .t_real = "REAL",
    .open = sq_open,
    .close = sq_close,
    .has_table = sq_has_table,
    .tables = sq_tables,
    .exec = sq_exec,
    .begin_write = sq_begin_write,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .prepare = sq_prepare,
    .bind_int = sq_bind_int,
    .bind_double = sq_bind_double,
    .bind_text = sq_bind_text,
    .step = sq_step,
    .column_null = sq_column_null,
    .column_int = sq_column_int,
    .column_double = sq_column_double,
    .column_text = sq_column_text,
    .reset = sq_reset,
    .finalize = sq_finalize,
};
