/*
 * history_postgres.c - the results store on a PostgreSQL server, for a team's machines
 * writing to one place: chosen by a postgresql:// (or postgres://) URL, in libpq's syntax
 * (postgresql://user@host:5432/db, postgresql:///db?host=/run/postgresql for a Unix
 * socket). The same schema and queries as SQLite (history_engine.h).
 *
 * libpq is opened (dlopen) when a URL first needs it: linked, it and what it links
 * (OpenSSL, Kerberos, LDAP) would be loaded at every start of tkbench. Writers take turns
 * under one advisory lock of the database (held to the transaction's end), as SQLite's
 * writers do, so concurrent upserts of the same entries never deadlock; the wait for it
 * is bounded by lock_timeout (the busy time).
 */
#include "history_engine.h"
#include "internal.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIBPQ_SONAME "libpq.so.5"

/* The advisory lock every writer takes: "tkbhist" in ASCII. */
#define WRITE_LOCK "32769167701144436"

static struct {
  PGconn *(*connectdb)(const char *);
  ConnStatusType (*status)(const PGconn *);
  char *(*error_message)(const PGconn *);
  void (*finish)(PGconn *);
  PGresult *(*exec)(PGconn *, const char *);
  PGresult *(*exec_params)(PGconn *, const char *, int, const Oid *, const char *const *, const int *,
                           const int *, int);
  ExecStatusType (*result_status)(const PGresult *);
  char *(*result_error_field)(const PGresult *, int);
  char *(*result_error_message)(const PGresult *);
  void (*clear)(PGresult *);
  int (*ntuples)(const PGresult *);
  char *(*getvalue)(const PGresult *, int, int);
  int (*getisnull)(const PGresult *, int, int);
  PQnoticeProcessor (*set_notice_processor)(PGconn *, PQnoticeProcessor, void *);
  PQconninfoOption *(*conninfo_parse)(const char *, char **);
  void (*conninfo_free)(PQconninfoOption *);
  void (*freemem)(void *);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512];

static void load(void) {
  void *lib = dlopen(LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "cannot load PostgreSQL's client library (%s): %s; install libpq5",
             LIBPQ_SONAME, e ? e : "not found");
    return;
  }
  const struct {
    void **at;
    const char *name;
  } fns[] = {
      {(void **)&api.connectdb, "PQconnectdb"},         {(void **)&api.status, "PQstatus"},
      {(void **)&api.error_message, "PQerrorMessage"},  {(void **)&api.finish, "PQfinish"},
      {(void **)&api.exec, "PQexec"},                   {(void **)&api.exec_params, "PQexecParams"},
      {(void **)&api.result_status, "PQresultStatus"},  {(void **)&api.result_error_field, "PQresultErrorField"},
      {(void **)&api.result_error_message, "PQresultErrorMessage"},
      {(void **)&api.clear, "PQclear"},                 {(void **)&api.ntuples, "PQntuples"},
      {(void **)&api.getvalue, "PQgetvalue"},           {(void **)&api.getisnull, "PQgetisnull"},
      {(void **)&api.set_notice_processor, "PQsetNoticeProcessor"},
      {(void **)&api.conninfo_parse, "PQconninfoParse"}, {(void **)&api.conninfo_free, "PQconninfoFree"},
      {(void **)&api.freemem, "PQfreemem"},
  };
  for (size_t i = 0; i < TKB_ARRAY_LEN(fns); i++)
    if (!(*fns[i].at = dlsym(lib, fns[i].name))) {
      snprintf(why, sizeof why, "%s has no %s", LIBPQ_SONAME, fns[i].name);
      return;
    }
}

struct tkb__hx_conn {
  PGconn *pg;
  const char *shown;
  int busy_ms;
};

#define MAX_PARAMS 32

struct tkb__hx_stmt {
  tkb__hx_conn *c;
  char *sql;                   /* with $1, $2, ... */
  int n_params;
  char *values[MAX_PARAMS];    /* owned; NULL: SQL NULL */
  PGresult *res;
  int row, n_rows;             /* the row read next */
};

/* A message's first line (libpq's end in a newline, some with a hint after). */
static void first_line(const char *msg, char *buf, size_t cap) {
  snprintf(buf, cap, "%s", msg ? msg : "");
  buf[strcspn(buf, "\n")] = '\0';
}

/* The error of a failed command as history.h states them, naming the store. */
static tkb_status fail_result(tkb__hx_conn *c, const PGresult *r, const char *doing) {
  char msg[512];
  first_line(r ? api.result_error_message(r) : api.error_message(c->pg), msg, sizeof msg);
  const char *state = r ? api.result_error_field(r, PG_DIAG_SQLSTATE) : NULL;
  if (state && !strcmp(state, "55P03")) /* lock_not_available: lock_timeout passed */
    return tkb_set_error(TKB_ERR_IO, "the history store %s is locked by another writer (waited %.1f s "
                         "while %s); try again when it is done", c->shown, c->busy_ms / 1000.0, doing);
  if (state && (!strcmp(state, "25006") || !strncmp(state, "42501", 5)))
    return tkb_set_error(TKB_ERR_IO, "cannot write the history store %s: %s (while %s)", c->shown, msg, doing);
  return tkb_set_error(TKB_ERR_IO, "the history store %s: %s (while %s)", c->shown, msg, doing);
}

/* msg with the location (which may hold a password) written as shown. */
static void scrub(char *msg, size_t cap, const char *location, const char *shown) {
  char *at = strstr(msg, location);
  if (!at || strlen(msg) - strlen(location) + strlen(shown) >= cap) return;
  const size_t n = strlen(location), m = strlen(shown);
  memmove(at + m, at + n, strlen(at + n) + 1);
  memcpy(at, shown, m);
}

static void quiet(void *user, const char *message) {
  (void)user;
  (void)message; /* NOTICEs ("already exists, skipping"): the library prints nothing */
}

static void pg_close(tkb__hx_conn *c) {
  if (!c) return;
  if (c->pg) api.finish(c->pg);
  free(c);
}

/* Runs a command without parameters or rows. */
static tkb_status run(tkb__hx_conn *c, const char *sql, const char *doing) {
  PGresult *r = api.exec(c->pg, sql);
  const ExecStatusType s = r ? api.result_status(r) : PGRES_FATAL_ERROR;
  tkb_status st = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK ? TKB_OK : fail_result(c, r, doing);
  api.clear(r);
  return st;
}

static tkb_status pg_open(const char *location, const char *shown, const tkb__history_open_opts *o,
                          tkb__hx_conn **out, bool *created) {
  *out = NULL;
  *created = false;
  pthread_once(&once, load);
  if (why[0]) return tkb_set_error(TKB_ERR_UNSUPPORTED, "cannot open the history store %s: %s", shown, why);
  /* a URL libpq cannot parse is the user's to fix, not a server's refusal */
  char *err = NULL;
  PQconninfoOption *opts = api.conninfo_parse(location, &err);
  if (!opts) {
    char msg[512];
    first_line(err ? err : "out of memory", msg, sizeof msg);
    if (err) api.freemem(err);
    scrub(msg, sizeof msg, location, shown);
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "'%s' is not a PostgreSQL URL that libpq accepts: %s "
                         "(expected postgresql://[user@][host][:port]/dbname[?param=value])", shown, msg);
  }
  api.conninfo_free(opts);
  tkb__hx_conn *c = calloc(1, sizeof *c);
  if (!c) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory opening %s", shown);
  c->shown = shown;
  c->busy_ms = o->busy_ms;
  c->pg = api.connectdb(location);
  if (!c->pg || api.status(c->pg) != CONNECTION_OK) {
    char msg[512];
    first_line(c->pg ? api.error_message(c->pg) : "out of memory", msg, sizeof msg);
    scrub(msg, sizeof msg, location, shown);
    pg_close(c);
    return tkb_set_error(TKB_ERR_IO, "cannot connect to the history store %s: %s", shown, msg);
  }
  api.set_notice_processor(c->pg, quiet, NULL);
  char set[256];
  /* lock_timeout bounds the wait for another writer; numbers read back exactly */
  snprintf(set, sizeof set, "SET lock_timeout = %d; SET extra_float_digits = 3; SET client_min_messages = warning%s",
           c->busy_ms, o->read_only ? "; SET default_transaction_read_only = on" : "");
  tkb_status st = run(c, set, "setting up the connection");
  if (st) {
    pg_close(c);
    return st;
  }
  *out = c;
  return TKB_OK;
}

static tkb_status pg_exec(tkb__hx_conn *c, const char *sql) { return run(c, sql, "writing its schema"); }

static tkb_status pg_begin_write(tkb__hx_conn *c) {
  tkb_status st = run(c, "BEGIN", "starting to write");
  if (!st) st = run(c, "SELECT pg_advisory_xact_lock(" WRITE_LOCK ")", "waiting for other writers");
  if (st) run(c, "ROLLBACK", "rolling back");
  return st;
}

static tkb_status pg_commit(tkb__hx_conn *c) { return run(c, "COMMIT", "committing"); }
static void pg_rollback(tkb__hx_conn *c) { run(c, "ROLLBACK", "rolling back"); }

static tkb_status pg_prepare(tkb__hx_conn *c, const char *sql, tkb__hx_stmt **out) {
  tkb__hx_stmt *s = calloc(1, sizeof *s);
  char *text = malloc(strlen(sql) * 3 + 1);
  if (!s || !text) {
    free(s);
    free(text);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory in the history store %s", c->shown);
  }
  /* ? -> $n: the store's SQL holds no '?' inside a string */
  size_t len = 0;
  for (const char *p = sql; *p; p++) {
    if (*p != '?') {
      text[len++] = *p;
      continue;
    }
    len += (size_t)sprintf(text + len, "$%d", ++s->n_params);
  }
  text[len] = '\0';
  if (s->n_params > MAX_PARAMS) {
    free(s);
    free(text);
    return tkb_set_error(TKB_ERR_INTERNAL, "a query of the history store has more than %d parameters", MAX_PARAMS);
  }
  s->c = c;
  s->sql = text;
  *out = s;
  return TKB_OK;
}

static void set_value(tkb__hx_stmt *s, int i, char *v) {
  if (i < 1 || i > s->n_params) {
    free(v);
    return;
  }
  free(s->values[i - 1]);
  s->values[i - 1] = v;
}

static void pg_bind_int(tkb__hx_stmt *s, int i, int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRId64, v);
  set_value(s, i, tkb__strdup(buf));
}
static void pg_bind_double(tkb__hx_stmt *s, int i, double v) {
  char buf[40];
  if (!isfinite(v)) { /* NaN: unknown; an infinity is no value a result holds */
    set_value(s, i, NULL);
    return;
  }
  snprintf(buf, sizeof buf, "%.17g", v);
  set_value(s, i, tkb__strdup(buf));
}
static void pg_bind_text(tkb__hx_stmt *s, int i, const char *v) { set_value(s, i, v ? tkb__strdup(v) : NULL); }

static tkb_status pg_step(tkb__hx_stmt *s, bool *row) {
  *row = false;
  if (!s->res) {
    s->res = api.exec_params(s->c->pg, s->sql, s->n_params, NULL, (const char *const *)s->values, NULL, NULL, 0);
    const ExecStatusType st = s->res ? api.result_status(s->res) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      tkb_status e = fail_result(s->c, s->res, "reading or writing it");
      api.clear(s->res);
      s->res = NULL;
      return e;
    }
    s->n_rows = api.ntuples(s->res);
    s->row = -1;
  }
  if (s->row + 1 < s->n_rows) {
    s->row++;
    *row = true;
  }
  return TKB_OK;
}

static bool pg_column_null(tkb__hx_stmt *s, int i) { return api.getisnull(s->res, s->row, i) != 0; }
static int64_t pg_column_int(tkb__hx_stmt *s, int i) {
  if (pg_column_null(s, i)) return 0;
  const char *v = api.getvalue(s->res, s->row, i);
  if (!strcmp(v, "t")) return 1; /* a boolean */
  return strtoll(v, NULL, 10);
}
static double pg_column_double(tkb__hx_stmt *s, int i) {
  return pg_column_null(s, i) ? NAN : strtod(api.getvalue(s->res, s->row, i), NULL);
}
static const char *pg_column_text(tkb__hx_stmt *s, int i) {
  return pg_column_null(s, i) ? NULL : api.getvalue(s->res, s->row, i);
}
static void pg_reset(tkb__hx_stmt *s) {
  if (s->res) api.clear(s->res);
  s->res = NULL;
  for (int i = 0; i < s->n_params; i++) {
    free(s->values[i]);
    s->values[i] = NULL;
  }
}
static void pg_finalize(tkb__hx_stmt *s) {
  if (!s) return;
  pg_reset(s);
  free(s->sql);
  free(s);
}

static tkb_status pg_has_table(tkb__hx_conn *c, const char *table, bool *exists) {
  tkb__hx_stmt *s;
  tkb_status st = pg_prepare(c, "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() "
                                "AND tablename = ?", &s);
  if (st) return st;
  pg_bind_text(s, 1, table);
  st = pg_step(s, exists);
  pg_finalize(s);
  return st;
}

static tkb_status pg_tables(tkb__hx_conn *c, char *buf, size_t cap) {
  tkb__hx_stmt *s;
  buf[0] = '\0';
  tkb_status st = pg_prepare(c, "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema() "
                                "ORDER BY tablename", &s);
  bool row = false;
  size_t len = 0;
  while (!st && !(st = pg_step(s, &row)) && row && len < cap)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", pg_column_text(s, 0));
  pg_finalize(s);
  return st;
}

const tkb__hx_engine tkb__hx_postgres = {
    .name = "postgresql",
    .t_id = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    .t_int = "BIGINT",
    .t_real = "DOUBLE PRECISION",
    .open = pg_open,
    .close = pg_close,
    .has_table = pg_has_table,
    .tables = pg_tables,
    .exec = pg_exec,
    .begin_write = pg_begin_write,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .prepare = pg_prepare,
    .bind_int = pg_bind_int,
    .bind_double = pg_bind_double,
    .bind_text = pg_bind_text,
    .step = pg_step,
    .column_null = pg_column_null,
    .column_int = pg_column_int,
    .column_double = pg_column_double,
    .column_text = pg_column_text,
    .reset = pg_reset,
    .finalize = pg_finalize,
};
