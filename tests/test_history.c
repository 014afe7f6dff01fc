/*
 * test_history.c - the results store (src/results/history.h): a run recorded and read
 * back (machines, runs, series, peaks, the query's filters), four processes recording at
 * once with nothing lost, a version 1 store read as it is and migrated, a store of a
 * newer schema refused untouched, pruning, and a run of 3000 entries (its size in the
 * store under 5 MB and its recording under 1 s, both printed). On SQLite also: a store
 * that is locked, read-only, not a database, someone else's database, or damaged gives an
 * error naming the file and the problem, and writes nothing; results files (tkbench's
 * and Google Benchmark's) recorded as runs.
 *
 * `test_history` tests SQLite in a scratch folder; `test_history postgresql:///DB?host=DIR`
 * runs the same store checks on that server (tests/cli/history_postgres.sh starts one),
 * each store in a schema of its own.
 */
#include "check.h"
#include "history_engine.h"
#include "report.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[64];
static const char *pg_base; /* the PostgreSQL URL, when testing it */

/* A fresh store's location named `tag`: a file in the scratch folder, or a schema of its
 * own on the server (made here, empty). */
static const char *store(const char *tag) {
  static char buf[8][512];
  static int k;
  k = (k + 1) % 8;
  if (!pg_base) {
    snprintf(buf[k], sizeof buf[k], "%s/%s.sqlite", dir, tag);
    return buf[k];
  }
  tkb__history_open_opts o = {.busy_ms = 10000};
  tkb__hx_conn *c;
  bool created;
  CHECK_OK(tkb__hx_postgres.open(pg_base, pg_base, &o, &c, &created));
  char sql[256];
  snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s", tag, tag);
  CHECK_OK(tkb__hx_postgres.exec(c, sql));
  tkb__hx_postgres.close(c);
  snprintf(buf[k], sizeof buf[k], "%s%soptions=-csearch_path%%3D%s", pg_base, strchr(pg_base, '?') ? "&" : "?", tag);
  return buf[k];
}

static tkb__history *open_store(const char *where, bool read_only) {
  tkb__history *h = NULL;
  tkb__history_open_opts o = {.read_only = read_only};
  CHECK_OK(tkb__history_open(where, &o, &h));
  return h;
}

/* A run of machine "m-test" at time t. */
static tkb__history_run a_run(int64_t t, const char *commit, const char *branch) {
  return (tkb__history_run){.time = t, .kind = "run", .status = "complete", .commit = commit, .branch = branch,
                            .machine = "m-test", .host = "testhost", .cpu_model = "Test CPU", .cpu_isa = "avx2",
                            .kernel = "Linux 6.1", .cores = 8, .memory_bytes = 16LL << 30, .device = "cpu",
                            .device_name = "Test CPU", .tkbench_version = "0.1.0", .method = "wallclock",
                            .stopping_rule = "fixed:iterations=3", .seed = 7, .threads = 8,
                            .settings = "{\"method\":\"wallclock\"}"};
}

static tkb__history_entry an_entry(const char *name, const char *op, const char *impl, double median) {
  return (tkb__history_entry){.name = name, .op = op, .spec = "s1", .impl = impl, .mode = "forward",
                              .tags = "cpu,small", .status = "ok", .unit = "ns", .median = median,
                              .ci_low = median * 0.98, .ci_high = median * 1.02, .n = 15, .min = median * 0.9,
                              .p10 = median * 0.95, .p25 = median * 0.97, .p75 = median * 1.03,
                              .p90 = median * 1.05, .max = median * 1.2,
                              .counters = "{\"bytes_per_second\":1000000000}"};
}

static int64_t count_of(tkb__history *h, const char *sql) {
  int64_t v = -1;
  bool found;
  CHECK_OK(tkb__hx_query_int(h, sql, NULL, &v, &found));
  return v;
}

/* ---- record, read back, select ---- */
static void test_round_trip(void) {
  const char *where = store("round_trip");
  tkb__history *h = open_store(where, false);
  if (!h) return;
  CHECK(tkb__history_schema_version(h) == TKB__HISTORY_SCHEMA_VERSION);
  CHECK(!strcmp(tkb__history_engine(h), pg_base ? "postgresql" : "sqlite"));
  tkb__history_entry e[3] = {an_entry("cpu_a_forward_cpu", "opa", "cpu", 1000),
                             an_entry("cpu_b_forward_ref", "opb", "reference", 5000),
                             {.name = "BM_gbench/8", .status = "failed", .message = "it broke",
                              .median = NAN, .ci_low = NAN, .ci_high = NAN, .min = NAN, .p10 = NAN,
                              .p25 = NAN, .p75 = NAN, .p90 = NAN, .max = NAN}};
  tkb__history_peak peaks[] = {{"copy_gbs", 12.5, "GB/s"}, {"sgemm_gflops", 800, "GFLOP/s"}};
  tkb__history_run run = a_run(1700000000, "0123456789abcdef0123456789abcdef01234567", "main");
  int64_t id1 = 0, id2 = 0, id3 = 0;
  CHECK_OK(tkb__history_record(h, &run, e, 3, peaks, 2, &id1));
  e[0].median = 1100;
  run = a_run(1700000100, "abcdef1", "feature");
  CHECK_OK(tkb__history_record(h, &run, e, 2, NULL, 0, &id2));
  e[0].median = 1200;
  run = a_run(1700000200, "abcdef2", "main");
  run.kind = "check";
  CHECK_OK(tkb__history_record(h, &run, e, 1, NULL, 0, &id3));
  CHECK(id1 > 0 && id2 > id1 && id3 > id2);
  tkb__history_close(h);

  h = open_store(where, true); /* what the next readers do */
  if (!h) return;
  tkb__history_machines ms;
  CHECK_OK(tkb__history_machines_list(h, &ms));
  CHECK(ms.n == 1 && !strcmp(ms.items[0].key, "m-test") && ms.items[0].n_runs == 3 &&
        ms.items[0].cores == 8 && !strcmp(ms.items[0].host, "testhost"));
  tkb__history_machines_free(&ms);
  char *key = NULL;
  CHECK_OK(tkb__history_machine_resolve(h, "testhost", &key)); /* by host name */
  CHECK(key && !strcmp(key, "m-test"));
  free(key);
  CHECK_ERR(tkb__history_machine_resolve(h, "nosuch", &key), TKB_ERR_NOT_FOUND, "m-test");

  tkb__history_runs runs;
  tkb__history_query q = {0};
  CHECK_OK(tkb__history_runs_list(h, &q, &runs));
  CHECK(runs.n == 2); /* checks left out */
  if (runs.n == 2) {
    CHECK(runs.items[0].id == id1 && runs.items[1].id == id2); /* oldest first */
    CHECK(runs.items[0].n_entries == 3 && runs.items[0].seed == 7 && runs.items[0].threads == 8);
    CHECK(!strcmp(runs.items[0].commit, "0123456789abcdef0123456789abcdef01234567"));
    CHECK(!strcmp(runs.items[0].machine, "m-test") && !strcmp(runs.items[0].kernel, "Linux 6.1"));
    CHECK(runs.items[0].memory_bytes == 16LL << 30 && !strcmp(runs.items[0].settings, "{\"method\":\"wallclock\"}"));
  }
  tkb__history_runs_free(&runs);
  q.include_checks = true;
  q.last = 1;
  CHECK_OK(tkb__history_runs_list(h, &q, &runs));
  CHECK(runs.n == 1 && runs.items[0].id == id3 && !strcmp(runs.items[0].kind, "check"));
  tkb__history_runs_free(&runs);
  q = (tkb__history_query){.branch = "main", .include_checks = true};
  CHECK_OK(tkb__history_runs_list(h, &q, &runs));
  CHECK(runs.n == 2);
  tkb__history_runs_free(&runs);
  q = (tkb__history_query){.since = 1700000050};
  CHECK_OK(tkb__history_runs_list(h, &q, &runs));
  CHECK(runs.n == 1 && runs.items[0].id == id2);
  tkb__history_runs_free(&runs);

  tkb__history_peaks pk;
  CHECK_OK(tkb__history_peaks_list(h, id1, &pk));
  CHECK(pk.n == 2 && !strcmp(pk.items[0].name, "copy_gbs") && pk.items[0].value == 12.5 &&
        !strcmp(pk.items[1].unit, "GFLOP/s"));
  tkb__history_peaks_free(&pk);
  CHECK_OK(tkb__history_peaks_list(h, id2, &pk));
  CHECK(pk.n == 0);
  tkb__history_peaks_free(&pk);

  tkb__history_series_list sl;
  q = (tkb__history_query){.machine = "m-test"};
  CHECK_OK(tkb__history_series_read(h, &q, &sl));
  CHECK(sl.n == 3);
  if (sl.n == 3) {
    /* by name: BM_gbench/8, cpu_a..., cpu_b... */
    CHECK(!strcmp(sl.items[0].name, "BM_gbench/8") && sl.items[0].n == 1 && !sl.items[0].op);
    CHECK(!strcmp(sl.items[0].points[0].status, "failed") && isnan(sl.items[0].points[0].median));
    const tkb__history_series *a = &sl.items[1];
    CHECK(!strcmp(a->name, "cpu_a_forward_cpu") && a->n == 2 && !strcmp(a->tags, "cpu,small"));
    if (a->n == 2) {
      CHECK(a->points[0].median == 1000 && a->points[1].median == 1100 && a->points[0].time == 1700000000);
      CHECK(a->points[0].ci_low == 980 && a->points[0].ci_high == 1020 && a->points[0].n == 15);
      CHECK(a->points[0].p90 == 1000 * 1.05 && a->points[0].max == 1200 && !strcmp(a->points[0].unit, "ns"));
      CHECK(!strcmp(a->points[1].commit, "abcdef1") && !strcmp(a->points[1].branch, "feature"));
      CHECK(a->points[0].run_id == id1);
    }
  }
  tkb__history_series_free(&sl);
  const char *ops[] = {"opb"};
  q = (tkb__history_query){.machine = "m-test", .ops = ops, .n_ops = 1};
  CHECK_OK(tkb__history_series_read(h, &q, &sl));
  CHECK(sl.n == 1 && !strcmp(sl.items[0].name, "cpu_b_forward_ref"));
  tkb__history_series_free(&sl);
  q = (tkb__history_query){.machine = "m-test", .filter = "^cpu_a", .include_checks = true};
  CHECK_OK(tkb__history_series_read(h, &q, &sl));
  CHECK(sl.n == 1 && sl.items[0].n == 3 && sl.items[0].points[2].median == 1200);
  tkb__history_series_free(&sl);
  q = (tkb__history_query){.machine = "m-test", .filter = "^cpu_", .last = 1};
  CHECK_OK(tkb__history_series_read(h, &q, &sl));
  CHECK(sl.n == 2 && sl.items[0].n == 1 && sl.items[0].points[0].run_id == id2);
  tkb__history_series_free(&sl);
  const char *tags[] = {"small"}, *impls[] = {"cpu"};
  q = (tkb__history_query){.machine = "m-test", .tags = tags, .n_tags = 1, .impls = impls, .n_impls = 1};
  CHECK_OK(tkb__history_series_read(h, &q, &sl));
  CHECK(sl.n == 1 && !strcmp(sl.items[0].name, "cpu_a_forward_cpu"));
  tkb__history_series_free(&sl);
  q = (tkb__history_query){.machine = "m-test", .filter = "(["};
  CHECK_ERR(tkb__history_series_read(h, &q, &sl), TKB_ERR_INVALID_ARGUMENT, "filter");
  q = (tkb__history_query){.machine = "other"};
  CHECK_ERR(tkb__history_series_read(h, &q, &sl), TKB_ERR_NOT_FOUND, "other");
  q = (tkb__history_query){0};
  CHECK_ERR(tkb__history_series_read(h, &q, &sl), TKB_ERR_INVALID_ARGUMENT, "machine");
  /* read-only: nothing is written */
  run = a_run(1700000300, NULL, NULL);
  CHECK_ERR(tkb__history_record(h, &run, e, 1, NULL, 0, NULL), TKB_ERR_INVALID_ARGUMENT, "read-only");
  tkb__history_close(h);
}

/* ---- four writers at once ---- */
#define WRITERS 4
#define RUNS_EACH 5
#define ENTRIES_EACH 200

static int writer(const char *where, int w) {
  tkb__history *h = NULL;
  tkb__history_open_opts o = {.busy_ms = 120000}; /* a loaded machine: wait as long as it takes */
  if (tkb__history_open(where, &o, &h) != TKB_OK) {
    fprintf(stderr, "writer %d: %s\n", w, tkb_last_error());
    return 1;
  }
  static char names[ENTRIES_EACH][64];
  static tkb__history_entry e[ENTRIES_EACH];
  for (int k = 0; k < RUNS_EACH; k++) {
    for (int i = 0; i < ENTRIES_EACH; i++) {
      /* half the names shared by every writer, half its own */
      snprintf(names[i], sizeof names[i], i % 2 ? "shared_%d" : "w%d_own_%d", i % 2 ? i : w, i);
      e[i] = an_entry(names[i], "op", "cpu", 100 * w + k);
    }
    tkb__history_run run = a_run(1700000000 + w * 100 + k, NULL, NULL);
    if (tkb__history_record(h, &run, e, ENTRIES_EACH, NULL, 0, NULL) != TKB_OK) {
      fprintf(stderr, "writer %d run %d: %s\n", w, k, tkb_last_error());
      tkb__history_close(h);
      return 1;
    }
  }
  tkb__history_close(h);
  return 0;
}

static void test_concurrent_writers(void) {
  const char *where = store("writers");
  pid_t pids[WRITERS];
  for (int w = 0; w < WRITERS; w++) { /* each opens (and with the first, creates) the store */
    fflush(NULL);
    pids[w] = fork();
    if (pids[w] == 0) _exit(writer(where, w));
  }
  for (int w = 0; w < WRITERS; w++) {
    int status = 0;
    waitpid(pids[w], &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d ended with status %d", w, status);
  }
  tkb__history *h = open_store(where, true);
  if (!h) return;
  CHECK(count_of(h, "SELECT count(*) FROM tkb_runs") == WRITERS * RUNS_EACH);
  CHECK(count_of(h, "SELECT count(*) FROM tkb_results") == WRITERS * RUNS_EACH * ENTRIES_EACH);
  CHECK(count_of(h, "SELECT count(*) FROM tkb_entries") == ENTRIES_EACH / 2 + WRITERS * ENTRIES_EACH / 2);
  CHECK(count_of(h, "SELECT count(*) FROM tkb_machines") == 1);
  tkb__history_series_list sl;
  tkb__history_query q = {.machine = "m-test", .filter = "^shared_1$"};
  CHECK_OK(tkb__history_series_read(h, &q, &sl));
  CHECK(sl.n == 1 && sl.items[0].n == WRITERS * RUNS_EACH);
  for (size_t i = 1; sl.n == 1 && i < sl.items[0].n; i++) CHECK(sl.items[0].points[i].time > sl.items[0].points[i - 1].time);
  tkb__history_series_free(&sl);
  tkb__history_close(h);
}

/* ---- a version 1 store, as the first tkbench with a store left it ---- */
static void test_v1_migrated(void) {
  const char *where = store("version1");
  CHECK_OK(tkb__hx_schema_create_at(where, 1));
  /* a run written by version 1's code: no unit, no peaks */
  const tkb__hx_engine *e = pg_base ? &tkb__hx_postgres : &tkb__hx_sqlite;
  tkb__history_open_opts o = {.busy_ms = 10000};
  tkb__hx_conn *c;
  bool created;
  CHECK_OK(e->open(where, where, &o, &c, &created));
  CHECK_OK(e->exec(c, "INSERT INTO tkb_machines (key, host, cores, first_seen) VALUES ('m-old', 'oldhost', 4, 1600000000);"
                      "INSERT INTO tkb_runs (machine_id, started, kind, status, commit_id, n_entries) VALUES "
                      "((SELECT id FROM tkb_machines WHERE key = 'm-old'), 1600000000, 'run', 'complete', 'abcdef0', 1);"
                      "INSERT INTO tkb_entries (name, op) VALUES ('old_entry', 'opx');"
                      "INSERT INTO tkb_results (run_id, entry_id, status, median, ci_low, ci_high, n) VALUES "
                      "((SELECT id FROM tkb_runs), (SELECT id FROM tkb_entries), 'ok', 250, 240, 260, 9)"));
  e->close(c);
  /* read as it is */
  tkb__history *h = open_store(where, true);
  if (!h) return;
  CHECK(tkb__history_schema_version(h) == 1);
  tkb__history_series_list sl;
  tkb__history_query q = {.machine = "m-old"};
  CHECK_OK(tkb__history_series_read(h, &q, &sl));
  CHECK(sl.n == 1 && sl.items[0].n == 1 && sl.items[0].points[0].median == 250 &&
        !strcmp(sl.items[0].points[0].unit, "ns"));
  tkb__history_series_free(&sl);
  tkb__history_peaks pk;
  CHECK_OK(tkb__history_peaks_list(h, 1, &pk));
  CHECK(pk.n == 0);
  tkb__history_peaks_free(&pk);
  tkb__history_close(h);
  /* opened to write: migrated, the old run kept, a new one recorded beside it */
  h = open_store(where, false);
  if (!h) return;
  CHECK(tkb__history_schema_version(h) == TKB__HISTORY_SCHEMA_VERSION);
  tkb__history_run run = a_run(1700000000, NULL, NULL);
  run.machine = "m-old";
  tkb__history_entry en = an_entry("old_entry", "opx", "cpu", 300);
  en.unit = "instructions"; /* what version 2 added room for */
  tkb__history_peak peak = {"copy_gbs", 3.5, "GB/s"};
  int64_t id;
  CHECK_OK(tkb__history_record(h, &run, &en, 1, &peak, 1, &id));
  CHECK(count_of(h, "SELECT count(*) FROM tkb_results WHERE unit = 'ns'") == 1);
  CHECK(count_of(h, "SELECT count(*) FROM tkb_results WHERE unit = 'instructions'") == 1);
  /* a series holds one unit, its latest point's: the time before the count is left out */
  CHECK_OK(tkb__history_series_read(h, &q, &sl));
  CHECK(sl.n == 1 && sl.items[0].n == 1);
  if (sl.n == 1 && sl.items[0].n == 1)
    CHECK(!strcmp(sl.items[0].points[0].unit, "instructions") && sl.items[0].points[0].median == 300);
  tkb__history_series_free(&sl);
  /* and the old time is still read where the latest point is a time again */
  tkb__history_run later = a_run(1700000100, NULL, NULL);
  later.machine = "m-old";
  tkb__history_entry timed = an_entry("old_entry", "opx", "cpu", 260);
  CHECK_OK(tkb__history_record(h, &later, &timed, 1, NULL, 0, NULL));
  CHECK_OK(tkb__history_series_read(h, &q, &sl));
  CHECK(sl.n == 1 && sl.items[0].n == 2);
  if (sl.n == 1 && sl.items[0].n == 2) {
    CHECK(!strcmp(sl.items[0].points[0].unit, "ns") && sl.items[0].points[0].median == 250);
    CHECK(!strcmp(sl.items[0].points[0].commit, "abcdef0"));
    CHECK(!strcmp(sl.items[0].points[1].unit, "ns") && sl.items[0].points[1].median == 260);
  }
  tkb__history_series_free(&sl);
  CHECK_OK(tkb__history_peaks_list(h, id, &pk));
  CHECK(pk.n == 1 && pk.items[0].value == 3.5);
  tkb__history_peaks_free(&pk);
  tkb__history_close(h);
  h = open_store(where, false); /* again: nothing left to migrate */
  if (h) CHECK(count_of(h, "SELECT count(*) FROM tkb_runs") == 3);
  tkb__history_close(h);
}

/* ---- a store from a newer tkbench ---- */
static void test_newer_schema(void) {
  const char *where = store("newer");
  tkb__history *h = open_store(where, false);
  if (!h) return;
  tkb__history_run run = a_run(1700000000, NULL, NULL);
  tkb__history_entry en = an_entry("x", "op", "cpu", 1);
  CHECK_OK(tkb__history_record(h, &run, &en, 1, NULL, 0, NULL));
  CHECK_OK(h->e->exec(h->c, "UPDATE tkb_meta SET value = '99' WHERE key = 'schema_version'"));
  tkb__history_close(h);
  struct stat before, after;
  const bool file = !pg_base && stat(where, &before) == 0;
  tkb__history_open_opts o = {0};
  CHECK_ERR(tkb__history_open(where, &o, &h), TKB_ERR_UNSUPPORTED, "schema version 99");
  CHECK(strstr(tkb_last_error(), pg_base ? "options=" : where) != NULL);
  o.read_only = true;
  CHECK_ERR(tkb__history_open(where, &o, &h), TKB_ERR_UNSUPPORTED, "newer than this tkbench");
  if (file) {
    CHECK(stat(where, &after) == 0 && after.st_size == before.st_size && after.st_mtime == before.st_mtime);
  }
}

/* ---- pruning ---- */
static void test_prune(void) {
  const char *where = store("prune");
  tkb__history *h = open_store(where, false);
  if (!h) return;
  const int64_t now = (int64_t)time(NULL);
  tkb__history_entry en[2] = {an_entry("kept", "op", "cpu", 1), an_entry("only_old", "op", "cpu", 2)};
  for (int k = 0; k < 6; k++) {
    tkb__history_run run = a_run(now - (6 - k) * 86400 * 10, NULL, NULL); /* 60, 50, ... 10 days ago */
    CHECK_OK(tkb__history_record(h, &run, en, k < 2 ? 2 : 1, NULL, 0, NULL));
  }
  tkb__history_run other = a_run(now, NULL, NULL);
  other.machine = "m-other";
  CHECK_OK(tkb__history_record(h, &other, en, 1, NULL, 0, NULL));
  size_t removed = 0;
  CHECK_OK(tkb__history_prune(h, 45, 0, &removed)); /* the 60 and 50 days old */
  CHECK(removed == 2);
  CHECK(count_of(h, "SELECT count(*) FROM tkb_entries") == 1); /* only_old went with them */
  CHECK_OK(tkb__history_prune(h, 0, 2, &removed)); /* the newest 2 per machine */
  CHECK(removed == 2);
  CHECK(count_of(h, "SELECT count(*) FROM tkb_runs") == 3);
  CHECK(count_of(h, "SELECT count(*) FROM tkb_results") == 3);
  CHECK_OK(tkb__history_prune(h, 0, 2, &removed));
  CHECK(removed == 0);
  CHECK_ERR(tkb__history_prune(h, -1, 0, &removed), TKB_ERR_INVALID_ARGUMENT, "-1");
  tkb__history_close(h);
}

/* A prune gives the space of what it removed back: 60 runs of 40 entries, pruned to 1 run,
 * leave no free page in an SQLite file and a file a fraction of its size. */
static void test_prune_gives_space_back(void) {
  if (pg_base) return; /* PostgreSQL's pages are its own */
  const char *where = store("prune_space");
  tkb__history *h = open_store(where, false);
  if (!h) return;
  tkb__history_entry en[40];
  char names[40][24];
  for (int i = 0; i < 40; i++) {
    snprintf(names[i], sizeof names[i], "entry_%02d", i);
    en[i] = an_entry(names[i], "op", "cpu", 100 + i);
  }
  for (int k = 0; k < 60; k++) {
    tkb__history_run run = a_run(1700000000 + k, NULL, NULL);
    CHECK_OK(tkb__history_record(h, &run, en, 40, NULL, 0, NULL));
  }
  const int64_t pages = count_of(h, "PRAGMA page_count");
  size_t removed = 0;
  CHECK_OK(tkb__history_prune(h, 0, 1, &removed));
  CHECK(removed == 59);
  CHECK(count_of(h, "PRAGMA freelist_count") == 0);
  CHECK(count_of(h, "PRAGMA page_count") * 4 < pages);
  tkb__history_close(h);
}

/* ---- a big run: its size in the store and the time to record it ---- */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static off_t file_size(const char *path) {
  struct stat s;
  return stat(path, &s) == 0 ? s.st_size : 0;
}

static void test_big_run(void) {
  enum { N = 3000 };
  const char *where = store("big");
  tkb__history *h = open_store(where, false);
  if (!h) return;
  static char names[N][96], specs[N][48];
  static tkb__history_entry e[N];
  for (int i = 0; i < N; i++) {
    /* names as long as the suite's */
    snprintf(specs[i], sizeof specs[i], "bfloat16_%dx%dx%d_causal", 64 + i, 128 + i % 7, 96);
    snprintf(names[i], sizeof names[i], "%.40s_forward_and_vjp_cpu_%d", specs[i], i);
    e[i] = an_entry(names[i], "dot_product_attention", "cpu", 12345.678 + i);
    e[i].spec = specs[i];
    e[i].counters = "{\"bytes_per_second\":123456789012.5,\"flops_per_second\":98765432109.25}";
    e[i].warnings = i % 10 ? NULL : "[\"the load average exceeded the cores during this entry\"]";
  }
  tkb__history_run run = a_run(1700000000, "0123456789abcdef0123456789abcdef01234567", "main");
  const double t0 = now_s();
  CHECK_OK(tkb__history_record(h, &run, e, N, NULL, 0, NULL));
  const double first = now_s() - t0;
  run.time += 60;
  const double t1 = now_s();
  CHECK_OK(tkb__history_record(h, &run, e, N, NULL, 0, NULL)); /* the entries known now */
  const double second = now_s() - t1;
  tkb__history_close(h);
  printf("recording a run of %d entries (%s): %.3f s new entries, %.3f s known entries\n", N,
         pg_base ? "postgresql" : "sqlite", first, second);
  /* generous: a loaded 2-core machine records it in a tenth of that into SQLite. A
   * server's time is its round trips' (three statements an entry), and the sanitizers'
   * build's is theirs: printed only */
#if defined(__SANITIZE_ADDRESS__)
  const bool timed = false;
#else
  const bool timed = !pg_base && !check_quick();
#endif
  if (timed) CHECK_MSG(first < 1.0 && second < 1.0, "%.3f s and %.3f s", first, second);
  if (!pg_base) {
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", where);
    const off_t size = file_size(where) + file_size(wal);
    printf("two runs of %d entries take %.2f MB in the store (%.0f bytes per entry and run)\n", N, size / 1e6,
           (double)size / (2 * N));
    CHECK_MSG(size < 5 * 1000 * 1000, "%lld bytes", (long long)size);
  }
}

/* ---- SQLite: stores that cannot be used, refused without a write ---- */
static void test_locked(void) {
  const char *where = store("locked");
  tkb__history *h = open_store(where, false);
  if (!h) return;
  tkb__history_run run = a_run(1700000000, NULL, NULL);
  tkb__history_entry en = an_entry("x", "op", "cpu", 1);
  CHECK_OK(tkb__history_record(h, &run, &en, 1, NULL, 0, NULL));
  tkb__history_close(h);
  int ready[2], done[2];
  CHECK(pipe(ready) == 0 && pipe(done) == 0);
  fflush(NULL);
  const pid_t pid = fork();
  if (pid == 0) { /* another writer holding the store */
    tkb__history *w = NULL;
    tkb__history_open_opts o = {0};
    char b = 0;
    if (tkb__history_open(where, &o, &w) != TKB_OK || w->e->begin_write(w->c) != TKB_OK) _exit(1);
    if (write(ready[1], "x", 1) != 1 || read(done[0], &b, 1) != 1) _exit(1);
    w->e->rollback(w->c);
    tkb__history_close(w);
    _exit(0);
  }
  char b;
  CHECK(read(ready[0], &b, 1) == 1);
  tkb__history_open_opts o = {.busy_ms = 300};
  CHECK_OK(tkb__history_open(where, &o, &h)); /* readers never wait */
  if (h) {
    CHECK_ERR(tkb__history_record(h, &run, &en, 1, NULL, 0, NULL), TKB_ERR_IO, "is locked by another writer");
    CHECK(strstr(tkb_last_error(), where) != NULL);
    size_t removed;
    CHECK_ERR(tkb__history_prune(h, 0, 1, &removed), TKB_ERR_IO, "locked");
  }
  CHECK(write(done[1], "x", 1) == 1);
  int status;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (h) CHECK(count_of(h, "SELECT count(*) FROM tkb_runs") == 1); /* nothing written */
  tkb__history_close(h);
  close(ready[0]), close(ready[1]), close(done[0]), close(done[1]);
}

static void test_read_only(void) {
  const char *where = store("readonly");
  tkb__history *h = open_store(where, false);
  if (!h) return;
  tkb__history_run run = a_run(1700000000, NULL, NULL);
  tkb__history_entry en = an_entry("x", "op", "cpu", 1);
  CHECK_OK(tkb__history_record(h, &run, &en, 1, NULL, 0, NULL));
  tkb__history_close(h);
  CHECK(chmod(where, 0444) == 0 && chmod(dir, 0755) == 0);
  const off_t size = file_size(where);
  fflush(NULL);
  const pid_t pid = fork();
  if (pid == 0) {
    /* root writes any file: the check runs as nobody, for whom the file is read-only */
    if (geteuid() == 0 && setuid(65534) != 0) _exit(3);
    tkb__history *w = NULL;
    tkb__history_open_opts o = {0};
    tkb_status st = tkb__history_open(where, &o, &w);
    if (st == TKB_OK) _exit(1);
    if (st != TKB_ERR_IO || !strstr(tkb_last_error(), "cannot write the history store") ||
        !strstr(tkb_last_error(), where)) {
      fprintf(stderr, "read-only store: %s: %s\n", tkb_status_name(st), tkb_last_error());
      _exit(2);
    }
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
  CHECK(file_size(where) == size);
  chmod(where, 0644);
  chmod(dir, 0700);
}

static void write_file(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(text, 1, len, f) == len);
  if (f) fclose(f);
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc(*len + 1);
  if (b && fread(b, 1, *len, f) != *len) *len = 0;
  fclose(f);
  return b;
}

static void test_not_a_store(void) {
  tkb__history *h;
  tkb__history_open_opts o = {.busy_ms = 300};
  /* text */
  const char *junk = store("junk");
  const char text[] = "this is a results file, not a database\n";
  write_file(junk, text, sizeof text - 1);
  CHECK_ERR(tkb__history_open(junk, &o, &h), TKB_ERR_INVALID_ARGUMENT, "is not a tkbench history store");
  CHECK(strstr(tkb_last_error(), junk) && strstr(tkb_last_error(), "not an SQLite database"));
  size_t len;
  char *now = read_all(junk, &len);
  CHECK(now && len == sizeof text - 1 && !memcmp(now, text, len));
  free(now);
  /* someone else's database */
  const char *other = store("other");
  tkb__hx_conn *c;
  bool created;
  CHECK_OK(tkb__hx_sqlite.open(other, other, &o, &c, &created));
  CHECK_OK(tkb__hx_sqlite.exec(c, "CREATE TABLE invoices (id INTEGER)"));
  tkb__hx_sqlite.close(c);
  const off_t size = file_size(other);
  CHECK_ERR(tkb__history_open(other, &o, &h), TKB_ERR_INVALID_ARGUMENT, "holding other tables (invoices)");
  CHECK(file_size(other) == size);
  /* a store whose pages were overwritten */
  const char *damaged = store("damaged");
  h = open_store(damaged, false);
  if (!h) return;
  tkb__history_run run = a_run(1700000000, NULL, NULL);
  tkb__history_entry en = an_entry("x", "op", "cpu", 1);
  CHECK_OK(tkb__history_record(h, &run, &en, 1, NULL, 0, NULL));
  tkb__history_close(h);
  char *bytes = read_all(damaged, &len);
  CHECK(bytes && len > 4096);
  if (bytes && len > 4096) {
    memset(bytes + 100, 0xA5, len - 100); /* the header kept, every page garbage */
    write_file(damaged, bytes, len);
    tkb_status st = tkb__history_open(damaged, &o, &h);
    CHECK_MSG(st == TKB_ERR_INVALID_ARGUMENT && strstr(tkb_last_error(), damaged) &&
                  (strstr(tkb_last_error(), "damaged") || strstr(tkb_last_error(), "not a tkbench")),
              "%s: %s", tkb_status_name(st), tkb_last_error());
    if (st == TKB_OK) tkb__history_close(h);
    size_t len2;
    char *again = read_all(damaged, &len2);
    CHECK(again && len2 == len && !memcmp(again, bytes, len));
    free(again);
  }
  free(bytes);
  /* a folder; a store that is not there yet, opened to read */
  CHECK_ERR(tkb__history_open(dir, &o, &h), TKB_ERR_INVALID_ARGUMENT, "is a folder");
  o.read_only = true;
  CHECK_ERR(tkb__history_open(store("absent"), &o, &h), TKB_ERR_NOT_FOUND, "no history store at");
  CHECK(access(store("absent"), F_OK) != 0);
  CHECK_ERR(tkb__history_open("", &o, &h), TKB_ERR_INVALID_ARGUMENT, "empty");
}

/* ---- results files as runs ---- */
static void test_results_files(void) {
  const char *where = store("files");
  tkb__history *h = open_store(where, false);
  if (!h) return;
  const char tk[] =
      "{\"context\": {\"date\": \"2025-01-31T12:00:00+01:00\", \"host_name\": \"h1\", \"num_cpus\": 4, "
      "\"library\": \"tkbench\", \"library_version\": \"0.1.0\", \"device\": \"cpu\", \"cpu_model\": \"CPU X\", "
      "\"method\": \"wallclock\", \"seed\": 3, \"stopping_rule\": \"fixed:iterations=3\", \"interrupted\": true, "
      "\"commit\": \"feedbee\", \"peaks\": {\"copy_gbs\": 10, \"sgemm_gflops\": 100}, "
      "\"environment\": {\"threads\": 4}},"
      " \"benchmarks\": [{\"name\": \"e1\", \"run_name\": \"e1\", \"run_type\": \"iteration\", \"repetitions\": 1,"
      " \"repetition_index\": 0, \"iterations\": 3, \"real_time\": 2000, \"cpu_time\": 2000, \"time_unit\": \"ns\","
      " \"items_per_second\": 5, \"tkbench\": {\"op\": \"o\", \"spec\": \"s\", \"impl\": \"cpu\", \"mode\": \"forward\","
      " \"tags\": [\"cpu\", \"t\"], \"experiment\": 0, \"evaluation_times_ms\": [0.001, 0.002, 0.003],"
      " \"metadata\": {\"warnings\": [\"w1\"], \"cold_cache\": \"true\"}, \"statistics\": {\"median_ms\": 0.002,"
      " \"median_ci_low_ms\": 0.001, \"median_ci_high_ms\": 0.003, \"min_ms\": 0.001, \"max_ms\": 0.003,"
      " \"p10_ms\": 0.0012, \"p25_ms\": 0.0015, \"p75_ms\": 0.0025, \"p90_ms\": 0.0028}}}]}";
  tkb__results_file rf;
  CHECK_OK(tkb__results_file_parse(tk, sizeof tk - 1, "tk.json", &rf));
  tkb__history_origin o = {.source = "tk.json"};
  int64_t id;
  size_t n;
  CHECK_OK(tkb__history_record_file(h, &rf, &o, &id, &n));
  CHECK(n == 1);
  tkb__results_file_free(&rf);
  tkb__history_runs runs;
  tkb__history_query q = {0};
  CHECK_OK(tkb__history_runs_list(h, &q, &runs));
  CHECK(runs.n == 1);
  const char *key = "";
  if (runs.n == 1) {
    const tkb__history_run *r = &runs.items[0];
    key = r->machine;
    CHECK(r->time == 1738321200 && !strcmp(r->status, "interrupted") && !strcmp(r->commit, "feedbee"));
    CHECK(!strcmp(r->kind, "import") && !strcmp(r->source, "tk.json") && !strcmp(r->host, "h1") && r->cores == 4);
    CHECK(!strncmp(r->machine, "h1-", 3) && r->seed == 3 && r->threads == 4 && !strcmp(r->method, "wallclock"));
    CHECK(strstr(r->settings, "\"cold_cache\":true") && strstr(r->settings, "\"stopping_rule\""));
    tkb__history_peaks pk;
    CHECK_OK(tkb__history_peaks_list(h, r->id, &pk));
    CHECK(pk.n == 2);
    tkb__history_peaks_free(&pk);
  }
  tkb__history_series_list sl;
  q = (tkb__history_query){.machine = key};
  CHECK_OK(tkb__history_series_read(h, &q, &sl));
  CHECK(sl.n == 1 && sl.items[0].n == 1);
  if (sl.n == 1 && sl.items[0].n == 1) {
    const tkb__history_point *p = &sl.items[0].points[0];
    CHECK_NEAR(p->median, 2000, 1e-6);
    CHECK_NEAR(p->ci_low, 1000, 1e-6);
    CHECK_NEAR(p->p90, 2800, 1e-6);
    CHECK(p->n == 3 && !strcmp(sl.items[0].tags, "cpu,t") && !strcmp(sl.items[0].op, "o"));
  }
  tkb__history_series_free(&sl);
  CHECK(count_of(h, "SELECT count(*) FROM tkb_results WHERE counters LIKE '%items_per_second%' AND "
                    "warnings LIKE '%w1%'") == 1);
  tkb__history_runs_free(&runs);
  /* Google Benchmark's file: statistics from its repetitions; --commit and --machine */
  char gb_path[600];
  snprintf(gb_path, sizeof gb_path, "%s", __FILE__);
  snprintf(strrchr(gb_path, '/') ? strrchr(gb_path, '/') : gb_path, 100, "/fixtures/gbench_repetitions.json");
  CHECK(access(gb_path, R_OK) == 0);
  if (access(gb_path, R_OK) == 0) {
    CHECK_OK(tkb__results_file_load(gb_path, &rf));
    o = (tkb__history_origin){.source = gb_path, .commit = "abc1234", .branch = "b", .machine = "named"};
    CHECK_OK(tkb__history_record_file(h, &rf, &o, &id, &n));
    CHECK(n == rf.n_entries && n > 0);
    q = (tkb__history_query){.machine = "named"};
    CHECK_OK(tkb__history_series_read(h, &q, &sl));
    CHECK(sl.n > 0);
    bool any_ci = false;
    for (size_t i = 0; i < sl.n; i++)
      any_ci |= sl.items[i].n == 1 && isfinite(sl.items[i].points[0].ci_low) && sl.items[i].points[0].median > 0;
    CHECK(any_ci);
    tkb__history_series_free(&sl);
    tkb__results_file_free(&rf);
  }
  tkb__history_close(h);
}

static void test_commit_check(void) {
  CHECK_OK(tkb__history_commit_check("--commit", "abcdef0"));
  CHECK_OK(tkb__history_commit_check("--commit", "0123456789ABCDEF0123456789abcdef01234567"));
  CHECK_ERR(tkb__history_commit_check("--commit", "abc12"), TKB_ERR_INVALID_ARGUMENT, "--commit 'abc12'");
  CHECK_ERR(tkb__history_commit_check("--commit", "xyz1234"), TKB_ERR_INVALID_ARGUMENT, "7 to 40 hexadecimal");
}

static void test_url_shown(void) {
  tkb__history *h;
  tkb__history_open_opts o = {.busy_ms = 2000};
  /* a malformed URL names itself (without its password) and what is wrong */
  tkb_status st = tkb__history_open("postgresql://me:secret@[::1/db", &o, &h);
  CHECK_MSG(st == TKB_ERR_INVALID_ARGUMENT || st == TKB_ERR_UNSUPPORTED, "%s", tkb_last_error());
  CHECK(strstr(tkb_last_error(), "postgresql://me:***@") && !strstr(tkb_last_error(), "secret"));
  st = tkb__history_open("postgresql:///db?password=secret&nosuchparam=1", &o, &h);
  CHECK(st != TKB_OK && !strstr(tkb_last_error(), "secret"));
  CHECK(tkb__history_is_url("postgres://x/y") && !tkb__history_is_url("history.sqlite"));
}

static void test_machine(void) {
  tkb__machine a, b;
  unsetenv("TKB_MACHINE");
  tkb__machine_read(&a, "cpu", "CPU, 2 cores", NULL);
  tkb__machine_read(&b, "cpu", "CPU, 2 cores", NULL);
  CHECK(a.key[0] && !strcmp(a.key, b.key) && a.cores > 0 && a.host[0] && a.kernel[0]);
  /* an update (kernel, driver, memory) keeps the key; another GPU model does not */
  tkb__machine_read(&a, "cuda:0", "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.2 GiB, driver 12.4, SM 1980 MHz)", "GPU-1");
  tkb__machine_read(&b, "cuda:0", "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB, driver 12.8, SM 1755 MHz)", "GPU-2");
  CHECK(!strcmp(a.key, b.key) && !strcmp(a.device_name, "NVIDIA H100 80GB HBM3") && !strcmp(a.driver, "12.4"));
  snprintf(b.kernel, sizeof b.kernel, "Linux 9.9");
  b.memory_bytes += 12345;
  tkb__machine_key(&b);
  CHECK(!strcmp(a.key, b.key));
  tkb__machine_read(&b, "cuda:0", "NVIDIA H200 (sm_90, 132 SMs, 139 GiB, driver 12.4)", "GPU-3");
  CHECK(strcmp(a.key, b.key) != 0);
  tkb__machine_read(&b, "cpu", NULL, NULL);
  CHECK(strcmp(a.key, b.key) != 0); /* the host's cpu is a machine of its own */
  setenv("TKB_MACHINE", "ci-runner", 1);
  tkb__machine_read(&b, "cpu", NULL, NULL);
  CHECK(!strcmp(b.key, "ci-runner"));
  unsetenv("TKB_MACHINE");
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  unsetenv("TKB_MACHINE");
  if (argc > 1) pg_base = argv[1];
  snprintf(dir, sizeof dir, "/tmp/tkb_history_XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  if (!pg_base) {
    test_commit_check();
    test_url_shown();
    test_machine();
  }
  test_round_trip();
  test_concurrent_writers();
  test_v1_migrated();
  test_newer_schema();
  test_prune();
  test_prune_gives_space_back();
  test_results_files();
  test_big_run();
  if (!pg_base) {
    test_locked();
    test_read_only();
    test_not_a_store();
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return CHECK_DONE();
}
