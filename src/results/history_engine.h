/*
 * history_engine.h - what a database engine gives the results store: one table of
 * functions per engine (history_sqlite.c, history_postgres.c), so that the schema, its
 * migrations and every query (history_schema.c, history_store.c, history_read.c) are
 * written once. Internal to src/results.
 *
 * The SQL the store writes is what both engines take (upserts with ON CONFLICT,
 * RETURNING, LIMIT), with `?` for parameters; an engine rewrites what it needs (libpq
 * numbers them). Types in DDL are written as tokens an engine replaces: {id} an
 * auto-incremented 64-bit key, {int} a 64-bit integer, {real} a double.
 *
 * Every function that can fail sets tkb_last_error() naming the store (the engine's
 * `shown` location) and the problem, as history.h promises.
 */
#ifndef TKB_RESULTS_HISTORY_ENGINE_H
#define TKB_RESULTS_HISTORY_ENGINE_H

#include "history.h"

typedef struct tkb__hx_conn tkb__hx_conn; /* an engine's connection */
typedef struct tkb__hx_stmt tkb__hx_stmt; /* a prepared statement of it */

typedef struct tkb__hx_engine {
  const char *name;               /* "sqlite", "postgresql" */
  const char *t_id, *t_int, *t_real;
  /*
   * Opens the store at location (shown: how messages name it). Writable: creates it when
   * absent (*created set). Checks that it can be read (a file that is no database, or
   * is damaged, fails here, before anything is written).
   */
  tkb_status (*open)(const char *location, const char *shown, const tkb__history_open_opts *o,
                     tkb__hx_conn **out, bool *created);
  void (*close)(tkb__hx_conn *c);
  /* Whether a table of this name exists. */
  tkb_status (*has_table)(tkb__hx_conn *c, const char *table, bool *exists);
  /* The tables there are, comma-separated (for the message about a foreign database). */
  tkb_status (*tables)(tkb__hx_conn *c, char *buf, size_t cap);
  /* Statements without parameters or rows (DDL, several separated by ';' allowed). */
  tkb_status (*exec)(tkb__hx_conn *c, const char *sql);
  /* The write transaction: begin waits (up to the busy time) for other writers and
   * holds them off until commit or rollback. */
  tkb_status (*begin_write)(tkb__hx_conn *c);
  tkb_status (*commit)(tkb__hx_conn *c);
  void (*rollback)(tkb__hx_conn *c);
  /* Prepared statements: bind (1-based), step (runs it on the first call; *row: a row is
   * there to read), read columns (0-based), reset (for new bindings), finalize. A double
   * bound NaN is stored NULL; a NULL column reads as NaN, 0 or NULL. */
  tkb_status (*prepare)(tkb__hx_conn *c, const char *sql, tkb__hx_stmt **out);
  void (*bind_int)(tkb__hx_stmt *s, int i, int64_t v);
  void (*bind_double)(tkb__hx_stmt *s, int i, double v);
  void (*bind_text)(tkb__hx_stmt *s, int i, const char *v); /* NULL: SQL NULL */
  tkb_status (*step)(tkb__hx_stmt *s, bool *row);
  bool (*column_null)(tkb__hx_stmt *s, int i);
  int64_t (*column_int)(tkb__hx_stmt *s, int i);
  double (*column_double)(tkb__hx_stmt *s, int i);
  const char *(*column_text)(tkb__hx_stmt *s, int i); /* valid until the next step */
  void (*reset)(tkb__hx_stmt *s);
  void (*finalize)(tkb__hx_stmt *s);
} tkb__hx_engine;

extern const tkb__hx_engine tkb__hx_sqlite, tkb__hx_postgres;

/* The store as the engine-independent code sees it. */
struct tkb__history {
  const tkb__hx_engine *e;
  tkb__hx_conn *c;
  char *location, *shown;
  int version;                    /* the schema's */
  bool read_only;
};

/* ---- the schema (history_schema.c) ---- */
/* Brings a store opened for writing to TKB__HISTORY_SCHEMA_VERSION (created: from
 * nothing), inside one write transaction; a newer or foreign store is refused and left
 * as it was. h->version gets the version. */
tkb_status tkb__hx_schema_migrate(tkb__history *h, bool created);
/* The version of a store opened read-only (0: empty, no tables yet); a newer or foreign
 * one is refused. */
tkb_status tkb__hx_schema_read(tkb__history *h);
/* For tests: the store at location brought to `version` only (1: the first schema), as
 * an older tkbench made it. */
tkb_status tkb__hx_schema_create_at(const char *location, int version);

/* ---- helpers (history_store.c) ---- */
/* The SQL with the engine's type tokens replaced, into buf. False when it does not fit. */
bool tkb__hx_sql(const tkb__hx_engine *e, const char *sql, char *buf, size_t cap);
/* One row of one integer from sql with one optional text parameter (NULL: none). */
tkb_status tkb__hx_query_int(tkb__history *h, const char *sql, const char *param, int64_t *out, bool *found);

#endif
