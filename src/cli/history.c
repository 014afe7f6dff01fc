/*
 * history.c - `tkbench history list|show|export|prune|import`: the results store that
 * --history fills (src/results/history.h), read back and kept. One command with its
 * subcommand as the first plain argument, so help, completion and the man page come from
 * its one row like every other command's. The selection flags are run's (the same
 * parsing), applied to the entries the store holds.
 *
 * list, show and export open the store read-only (an older schema is read as it is);
 * prune and import open it to write. Every argument is checked, and every file to import
 * read, before the store is written.
 */
#include "cli.h"
#include "history.h"
#include "jsonw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CMD "history"

/* Where `make run` records, so a store is found without a flag there. */
#define DEFAULT_STORE "results/history.sqlite"

typedef struct history_args {
  tkb__select_args sel;
  const char *sub;           /* the subcommand */
  const char **files;        /* import's */
  size_t n_files, cap;
  const char *history;
  const char *machine, *branch, *since;
  int last;
  const char *format, *out;
  int keep_days, keep_runs;
  const char *commit;
  bool quiet;
} history_args;

static const char *const subcommands[] = {"list", "show", "export", "prune", "import"};

static int operand(void *args, const char *arg) {
  history_args *a = args;
  if (!a->sub) {
    for (size_t i = 0; i < TKB_ARRAY_LEN(subcommands); i++)
      if (!strcmp(arg, subcommands[i])) a->sub = subcommands[i];
    if (!a->sub) return tkb__usage(CMD, "'%s' is not a subcommand; expected list, show, export, prune or import", arg);
    return 0;
  }
  if (strcmp(a->sub, "import") != 0)
    return tkb__usage(CMD, "%s takes no plain argument ('%s'); only import takes files", a->sub, arg);
  if (a->n_files == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 16;
    const char **v = realloc(a->files, cap * sizeof *v);
    if (!v) return tkb__usage(CMD, "out of memory reading the file names");
    a->files = v, a->cap = cap;
  }
  a->files[a->n_files++] = arg;
  return 0;
}

static int check_since(const char *cmd, const char *flag, const char *value) {
  int64_t t;
  return tkb__history_parse_time(flag, value, &t) == TKB_OK ? 0 : tkb__usage(cmd, "%s", tkb_last_error());
}

static int check_commit(const char *cmd, const char *flag, const char *value) {
  return tkb__history_commit_check(flag, value) == TKB_OK ? 0 : tkb__usage(cmd, "%s", tkb_last_error());
}

static int check_format(const char *cmd, const char *flag, const char *value) {
  if (!strcmp(value, "json") || !strcmp(value, "csv")) return 0;
  return tkb__usage(cmd, "%s '%s' is not an export format; expected json or csv", flag, value);
}

#define AT(field) offsetof(history_args, field)

static const tkb__flag history_flags[] = {
    {.heading = "The store:"},
    {.name = "--history", .metavar = "DB", .kind = TKB__FLAG_TEXT, .offset = AT(history),
     .shown = "TKB_HISTORY, else " DEFAULT_STORE " (where 'make run' records)",
     .help = "The results store: an SQLite file or a postgresql:// URL, as run --history names it."},
    {.heading = "Which runs (with the selection flags above for the entries):"},
    {.name = "--machine", .metavar = "M", .kind = TKB__FLAG_TEXT, .offset = AT(machine),
     .shown = "list, export: every machine; show: this machine's key when the store has it, else "
              "the store's one machine",
     .help = "A machine's key (as list shows it), a unique start of one, or its host name. import: "
             "the key to record the files under, instead of one made from their context."},
    {.name = "--branch", .metavar = "NAME", .kind = TKB__FLAG_TEXT, .offset = AT(branch),
     .help = "Only runs of the code on this branch. import: the branch to record (default: the "
             "file's context's, else none)."},
    {.name = "--since", .metavar = "WHEN", .kind = TKB__FLAG_TEXT, .offset = AT(since),
     .check = check_since, .help = "Only runs from then on: a date (2025-01-31, 2025-01-31T12:00:00Z) "
                                   "or a time ago (12h, 30d, 2w)."},
    {.name = "--last", .metavar = "N", .kind = TKB__FLAG_COUNT, .offset = AT(last),
     .help = "Only the last N of those runs."},
    {.heading = "export:"},
    {.name = "--format", .metavar = "FMT", .kind = TKB__FLAG_TEXT, .offset = AT(format),
     .check = check_format, .shown = "from --out's ending (.csv), else json",
     .help = "json or csv: every selected point (run, time, commit, branch, status, unit, median, "
             "its 95% interval, n, min, p10, p25, p75, p90, max) of every selected entry."},
    {.name = "--out", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out),
     .shown = "stdout", .help = "Write the export to FILE (whole, under a temporary name, then renamed)."},
    {.heading = "prune (one or both):"},
    {.name = "--keep-days", .metavar = "N", .kind = TKB__FLAG_COUNT, .offset = AT(keep_days),
     .help = "Remove the runs older than N days."},
    {.name = "--keep-runs", .metavar = "N", .kind = TKB__FLAG_COUNT, .offset = AT(keep_runs),
     .help = "Keep each machine's newest N runs and remove the others."},
    {.heading = "import:"},
    {.name = "--commit", .metavar = "ID", .kind = TKB__FLAG_TEXT, .offset = AT(commit), .check = check_commit,
     .shown = "the file's context's (a 'commit' key, as --context commit=ID writes), else none",
     .help = "The commit of the code the files measured (7 to 40 hexadecimal digits)."},
    {.name = "--quiet", .kind = TKB__FLAG_SWITCH, .offset = AT(quiet),
     .help = "prune, import: no summary line; errors still go to stderr."},
    {0},
};

extern const tkb__command tkb__command_history;

/* ---- shared ---- */

static void utc(int64_t t, char *buf, size_t cap) {
  const time_t tt = (time_t)t;
  struct tm tm;
  if (!gmtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm)) snprintf(buf, cap, "%lld", (long long)t);
}

static void iso_utc(int64_t t, char *buf, size_t cap) {
  const time_t tt = (time_t)t;
  struct tm tm;
  if (!gmtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(buf, cap, "%lld", (long long)t);
}

/* A commit as tables show it: its first 10 digits. */
static const char *short_commit(const char *c, char *buf, size_t cap) {
  if (!c) return "-";
  snprintf(buf, cap, "%.10s", c);
  return buf;
}

static const char *location(const history_args *a) {
  if (a->history) return a->history;
  const char *env = getenv("TKB_HISTORY");
  return env && *env ? env : DEFAULT_STORE;
}

static int open_store(const history_args *a, bool read_only, tkb__history **h) {
  tkb__history_open_opts o = {.read_only = read_only};
  if (tkb__history_open(location(a), &o, h) == TKB_OK) return 0;
  return tkb__usage(CMD, "%s%s", a->history ? "--history: " : "", tkb_last_error());
}

/* The query of the flags (entries from the selection flags); *key (malloc'd) the machine
 * resolved from --machine. */
static int make_query(const history_args *a, tkb__history *h, tkb__history_query *q, char **key) {
  *key = NULL;
  *q = (tkb__history_query){.branch = a->branch, .last = (size_t)a->last,
                            .filter = a->sel.filter,
                            .ops = a->sel.ops.items, .n_ops = a->sel.ops.n,
                            .modes = a->sel.modes.items, .n_modes = a->sel.modes.n,
                            .impls = a->sel.impls.items, .n_impls = a->sel.impls.n,
                            .tags = a->sel.tags.items, .n_tags = a->sel.tags.n};
  if (a->since) tkb__history_parse_time("--since", a->since, &q->since); /* checked when read */
  if (a->machine) {
    if (tkb__history_machine_resolve(h, a->machine, key) != TKB_OK) return tkb__usage(CMD, "%s", tkb_last_error());
    q->machine = *key;
  }
  return 0;
}

/* show's machine when --machine is not given: this one's key, if the store has it, else
 * the store's one machine. */
static int default_machine(tkb__history *h, char **key) {
  tkb__history_machines ms;
  if (tkb__history_machines_list(h, &ms) != TKB_OK) return tkb__usage(CMD, "%s", tkb_last_error());
  tkb__machine here;
  tkb__machine_read(&here, "cpu", NULL, NULL);
  const char *pick = ms.n == 1 ? ms.items[0].key : NULL;
  for (size_t i = 0; i < ms.n; i++)
    if (!strcmp(ms.items[i].key, here.key)) pick = ms.items[i].key;
  char known[1024] = "";
  size_t len = 0;
  for (size_t i = 0; i < ms.n && len < sizeof known; i++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", ms.items[i].key);
  int rc = 0;
  if (pick) *key = tkb__strdup(pick);
  else if (!ms.n) rc = tkb__usage(CMD, "the history store %s holds no run yet", tkb__history_location(h));
  else rc = tkb__usage(CMD, "the history store %s holds several machines and none is this one: give --machine "
                       "with one of %s", tkb__history_location(h), known);
  tkb__history_machines_free(&ms);
  return rc;
}

/* What the selection flags say, for "no entry matches ..." */
static void describe_selection(const history_args *a, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  if (a->sel.filter) len += (size_t)snprintf(buf + len, cap - len, " --filter '%s'", a->sel.filter);
  const struct {
    const char *flag;
    const tkb__strlist *l;
  } lists[] = {{"--op", &a->sel.ops}, {"--mode", &a->sel.modes}, {"--impl", &a->sel.impls}, {"--tag", &a->sel.tags}};
  for (size_t k = 0; k < TKB_ARRAY_LEN(lists); k++)
    for (size_t i = 0; i < lists[k].l->n && len < cap; i++)
      len += (size_t)snprintf(buf + len, cap - len, " %s %s", lists[k].flag, lists[k].l->items[i]);
  if (a->branch && len < cap) len += (size_t)snprintf(buf + len, cap - len, " --branch %s", a->branch);
  if (a->since && len < cap) snprintf(buf + len, cap - len, " --since %s", a->since);
}

/* ---- list ---- */

static int list(const history_args *a, tkb__history *h) {
  tkb__history_query q;
  char *key;
  int rc = make_query(a, h, &q, &key);
  tkb__history_machines ms = {0};
  tkb__history_runs runs = {0};
  q.include_checks = true;
  if (!rc && (tkb__history_machines_list(h, &ms) || tkb__history_runs_list(h, &q, &runs)))
    rc = tkb__usage(CMD, "%s", tkb_last_error());
  if (!rc) {
    printf("%s (%s, schema version %d): %zu machine%s\n", tkb__history_location(h), tkb__history_engine(h),
           tkb__history_schema_version(h), ms.n, ms.n == 1 ? "" : "s");
    char first[32], last[32];
    for (size_t i = 0; i < ms.n; i++) {
      const tkb__history_machine *m = &ms.items[i];
      if (key && strcmp(key, m->key)) continue;
      utc(m->first_time, first, sizeof first);
      utc(m->last_time, last, sizeof last);
      const bool cpu = !m->device || !strncmp(m->device, "cpu", 3);
      printf("  %-24s %s, %s, %d cores, %s%s%s: %zu run%s, %.10s to %.10s\n", m->key, m->host ? m->host : "?",
             m->cpu_model ? m->cpu_model : "?", m->cores, m->device ? m->device : "cpu", cpu ? "" : " ",
             cpu || !m->device_name ? "" : m->device_name, m->n_runs, m->n_runs == 1 ? "" : "s", first, last);
    }
    printf("\n%-6s %-19s %-8s %-11s %-10s %-14s %-24s %-9s %s\n", "RUN", "TIME (UTC)", "KIND", "STATUS", "COMMIT",
           "BRANCH", "MACHINE", "DEVICE", "ENTRIES");
    for (size_t i = 0; i < runs.n; i++) {
      const tkb__history_run *r = &runs.items[i];
      char t[32], c[16];
      utc(r->time, t, sizeof t);
      printf("%-6lld %-19s %-8s %-11s %-10s %-14s %-24s %-9s %zu\n", (long long)r->id, t, r->kind, r->status,
             short_commit(r->commit, c, sizeof c), r->branch ? r->branch : "-", r->machine,
             r->device ? r->device : "-", r->n_entries);
    }
    if (!runs.n) printf("(no run%s)\n", a->machine || a->branch || a->since ? " matches" : " yet");
  }
  tkb__history_runs_free(&runs);
  tkb__history_machines_free(&ms);
  free(key);
  return rc;
}

/* ---- show and export: the series ---- */

/* The series the flags select (show: on one machine, the default one when none is
 * given). NULL machines: every machine's, one list each. */
static int read_series(const history_args *a, tkb__history *h, bool one_machine, tkb__history_series_list **lists,
                       char ***keys, size_t *n) {
  *lists = NULL, *keys = NULL, *n = 0;
  tkb__history_query q;
  char *key;
  int rc = make_query(a, h, &q, &key);
  if (!rc && !key && one_machine) rc = default_machine(h, &key);
  tkb__history_machines ms = {0};
  if (!rc && !key && tkb__history_machines_list(h, &ms)) rc = tkb__usage(CMD, "%s", tkb_last_error());
  const size_t count = key ? 1 : ms.n;
  if (!rc && (!(*lists = calloc(count ? count : 1, sizeof **lists)) || !(*keys = calloc(count ? count : 1, sizeof **keys))))
    rc = tkb__usage(CMD, "out of memory");
  for (size_t i = 0; !rc && i < count; i++) {
    (*keys)[i] = tkb__strdup(key ? key : ms.items[i].key);
    q.machine = (*keys)[i];
    if (tkb__history_series_read(h, &q, &(*lists)[i])) rc = tkb__usage(CMD, "%s", tkb_last_error());
    *n = i + 1;
  }
  size_t points = 0;
  for (size_t i = 0; !rc && i < *n; i++) points += (*lists)[i].n;
  if (!rc && !points) {
    char sel[512];
    describe_selection(a, sel, sizeof sel);
    rc = tkb__usage(CMD, "no entry of the history store %s has a point%s%s%s%s", tkb__history_location(h),
                    key ? " on machine " : "", key ? key : "", sel[0] ? " matching" : "", sel);
  }
  tkb__history_machines_free(&ms);
  free(key);
  return rc;
}

static void free_series(tkb__history_series_list *lists, char **keys, size_t n) {
  for (size_t i = 0; i < n; i++) {
    tkb__history_series_free(&lists[i]);
    free(keys[i]);
  }
  free(lists);
  free(keys);
}

/* A value in its unit for the table: times as "12.34 us", others as numbers. */
static void fmt_value(double v, const char *unit, char *buf, size_t cap) {
  if (unit && !strcmp(unit, "ns")) {
    tkb__fmt_time(v / 1e6, buf, cap);
    const char *p = buf;
    while (*p == ' ') p++;
    memmove(buf, p, strlen(p) + 1);
  } else if (isnan(v)) {
    snprintf(buf, cap, "-");
  } else {
    snprintf(buf, cap, "%.4g %s", v, unit ? unit : "");
  }
}

static int show(const history_args *a, tkb__history *h) {
  tkb__history_series_list *lists;
  char **keys;
  size_t n;
  int rc = read_series(a, h, true, &lists, &keys, &n);
  for (size_t m = 0; !rc && m < n; m++)
    for (size_t i = 0; i < lists[m].n; i++) {
      const tkb__history_series *s = &lists[m].items[i];
      printf("%s%s on %s: %zu point%s\n", i ? "\n" : "", s->name, keys[m], s->n, s->n == 1 ? "" : "s");
      printf("  %-6s %-19s %-10s %-14s %10s  %-25s %6s  %s\n", "RUN", "TIME (UTC)", "COMMIT", "BRANCH", "MEDIAN",
             "95% INTERVAL", "N", "STATUS");
      for (size_t k = 0; k < s->n; k++) {
        const tkb__history_point *p = &s->points[k];
        char t[32], c[16], med[32], lo[32], hi[32], ci[80];
        utc(p->time, t, sizeof t);
        fmt_value(p->median, p->unit, med, sizeof med);
        fmt_value(p->ci_low, p->unit, lo, sizeof lo);
        fmt_value(p->ci_high, p->unit, hi, sizeof hi);
        if (isnan(p->ci_low)) snprintf(ci, sizeof ci, "-");
        else snprintf(ci, sizeof ci, "[%s, %s]", lo, hi);
        printf("  %-6lld %-19s %-10s %-14s %10s  %-25s %6lld  %s\n", (long long)p->run_id, t,
               short_commit(p->commit, c, sizeof c), p->branch ? p->branch : "-", med, ci, (long long)p->n, p->status);
      }
    }
  if (n) free_series(lists, keys, n);
  else free(lists), free(keys);
  return rc;
}

static void csv_text(FILE *f, const char *s) {
  if (!s) return;
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void csv_number(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.17g", v);
}

static void write_csv(FILE *f, tkb__history_series_list *lists, char **keys, size_t n) {
  fputs("machine,entry,op,spec,impl,mode,run,time,commit,branch,status,unit,median,ci_low,ci_high,n,min,p10,p25,p75,"
        "p90,max\n", f);
  for (size_t m = 0; m < n; m++)
    for (size_t i = 0; i < lists[m].n; i++) {
      const tkb__history_series *s = &lists[m].items[i];
      for (size_t k = 0; k < s->n; k++) {
        const tkb__history_point *p = &s->points[k];
        char t[32];
        iso_utc(p->time, t, sizeof t);
        const char *texts[] = {keys[m], s->name, s->op, s->spec, s->impl, s->mode};
        for (size_t j = 0; j < TKB_ARRAY_LEN(texts); j++) csv_text(f, texts[j]), fputc(',', f);
        fprintf(f, "%lld,%s,", (long long)p->run_id, t);
        csv_text(f, p->commit), fputc(',', f);
        csv_text(f, p->branch), fputc(',', f);
        csv_text(f, p->status), fputc(',', f);
        csv_text(f, p->unit), fputc(',', f);
        const double v[] = {p->median, p->ci_low, p->ci_high};
        for (size_t j = 0; j < 3; j++) csv_number(f, v[j]), fputc(',', f);
        fprintf(f, "%lld", (long long)p->n);
        const double q[] = {p->min, p->p10, p->p25, p->p75, p->p90, p->max};
        for (size_t j = 0; j < 6; j++) fputc(',', f), csv_number(f, q[j]);
        fputc('\n', f);
      }
    }
}

static void write_json(FILE *f, const tkb__history *h, tkb__history_series_list *lists, char **keys, size_t n) {
  jw w = {.f = f};
  jw_begin_object(&w, NULL);
  jw_string(&w, "store", tkb__history_location(h));
  jw_int(&w, "schema_version", tkb__history_schema_version(h));
  jw_begin_array(&w, "series", false);
  for (size_t m = 0; m < n; m++)
    for (size_t i = 0; i < lists[m].n; i++) {
      const tkb__history_series *s = &lists[m].items[i];
      jw_begin_object(&w, NULL);
      jw_string(&w, "machine", keys[m]);
      jw_string(&w, "name", s->name);
      jw_string(&w, "op", s->op);
      jw_string(&w, "spec", s->spec);
      jw_string(&w, "impl", s->impl);
      jw_string(&w, "mode", s->mode);
      jw_string(&w, "tags", s->tags);
      jw_begin_array(&w, "points", false);
      for (size_t k = 0; k < s->n; k++) {
        const tkb__history_point *p = &s->points[k];
        char t[32];
        iso_utc(p->time, t, sizeof t);
        jw_begin_object(&w, NULL);
        jw_int(&w, "run", p->run_id);
        jw_string(&w, "time", t);
        jw_string(&w, "commit", p->commit);
        jw_string(&w, "branch", p->branch);
        jw_string(&w, "status", p->status);
        jw_string(&w, "unit", p->unit);
        jw_number(&w, "median", p->median);
        jw_number(&w, "ci_low", p->ci_low);
        jw_number(&w, "ci_high", p->ci_high);
        jw_int(&w, "n", p->n);
        jw_number(&w, "min", p->min);
        jw_number(&w, "p10", p->p10);
        jw_number(&w, "p25", p->p25);
        jw_number(&w, "p75", p->p75);
        jw_number(&w, "p90", p->p90);
        jw_number(&w, "max", p->max);
        jw_end_object(&w);
      }
      jw_end_array(&w);
      jw_end_object(&w);
    }
  jw_end_array(&w);
  jw_end_object(&w);
  jw_finish(&w);
}

static int export(const history_args *a, tkb__history *h) {
  const size_t len = a->out ? strlen(a->out) : 0;
  const bool csv = a->format ? !strcmp(a->format, "csv") : len > 4 && !strcmp(a->out + len - 4, ".csv");
  if (a->out && tkb__outfile_check(a->out) != TKB_OK) return tkb__usage(CMD, "--out: %s", tkb_last_error());
  tkb__history_series_list *lists;
  char **keys;
  size_t n;
  int rc = read_series(a, h, false, &lists, &keys, &n);
  if (!rc) {
    tkb__outfile o = {0};
    FILE *f = stdout;
    tkb_status st = a->out ? tkb__outfile_open(&o, a->out) : TKB_OK;
    if (!st && a->out) f = o.f;
    if (!st) {
      if (csv) write_csv(f, lists, keys, n);
      else write_json(f, h, lists, keys, n);
      if (a->out) st = tkb__outfile_commit(&o);
      else if (fflush(stdout) != 0) st = tkb_set_error(TKB_ERR_IO, "cannot write to stdout");
    }
    if (st) {
      fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
      rc = TKB_EXIT_FAILED;
    }
  }
  if (n) free_series(lists, keys, n);
  else free(lists), free(keys);
  return rc;
}

/* ---- prune and import: writing ---- */

static int prune(const history_args *a, tkb__history *h) {
  size_t removed = 0;
  if (tkb__history_prune(h, a->keep_days, a->keep_runs, &removed) != TKB_OK) {
    fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
    return TKB_EXIT_FAILED;
  }
  if (!a->quiet)
    printf("removed %zu run%s from %s\n", removed, removed == 1 ? "" : "s", tkb__history_location(h));
  return 0;
}

static int import(const history_args *a, tkb__history *h, tkb__results_file *files) {
  for (size_t i = 0; i < a->n_files; i++) {
    tkb__history_origin o = {.commit = a->commit, .branch = a->branch, .machine = a->machine, .source = a->files[i]};
    int64_t id;
    size_t n;
    if (tkb__history_record_file(h, &files[i], &o, &id, &n) != TKB_OK) {
      fprintf(stderr, "%s %s: %s: %s (the files before it were imported)\n", tkb__prog, CMD, a->files[i],
              tkb_last_error());
      return TKB_EXIT_FAILED;
    }
    for (size_t k = 0; k < files[i].n_warnings; k++)
      fprintf(stderr, "%s %s: warning: %s\n", tkb__prog, CMD, files[i].warnings[k]);
    if (!a->quiet)
      printf("imported %s as run %lld (%zu entr%s)\n", a->files[i], (long long)id, n, n == 1 ? "y" : "ies");
  }
  return 0;
}

/* ---- the command ---- */

/* The flags that only some subcommands take, given to another. */
static int misplaced(const history_args *a) {
  const bool exporting = !strcmp(a->sub, "export"), pruning = !strcmp(a->sub, "prune"),
             importing = !strcmp(a->sub, "import");
  const struct {
    bool given, allowed;
    const char *flag, *where;
  } rows[] = {
      {a->format != NULL, exporting, "--format", "export"},
      {a->out != NULL, exporting, "--out", "export"},
      {a->keep_days > 0, pruning, "--keep-days", "prune"},
      {a->keep_runs > 0, pruning, "--keep-runs", "prune"},
      {a->commit != NULL, importing, "--commit", "import"},
      {a->since != NULL || a->last > 0, !pruning && !importing, a->since ? "--since" : "--last",
       "list, show and export"},
      {a->sel.filter || a->sel.ops.n || a->sel.modes.n || a->sel.impls.n || a->sel.tags.n,
       !pruning && !importing, "the selection flags (--filter, --op, --tag, --impl, --mode)", "show and export"},
  };
  for (size_t i = 0; i < TKB_ARRAY_LEN(rows); i++)
    if (rows[i].given && !rows[i].allowed)
      return tkb__usage(CMD, "%s: %s is for %s only", a->sub, rows[i].flag, rows[i].where);
  if (pruning && !a->keep_days && !a->keep_runs)
    return tkb__usage(CMD, "prune needs --keep-days N or --keep-runs N (or both): what to keep");
  if (pruning && a->machine)
    return tkb__usage(CMD, "prune keeps runs on every machine; --machine is for the other subcommands");
  if (importing && !a->n_files)
    return tkb__usage(CMD, "import needs the results files to import (tkbench's or Google Benchmark's JSON)");
  return 0;
}

static int history(history_args *a) {
  if (!a->sub) return tkb__usage(CMD, "needs a subcommand: list, show, export, prune or import");
  int rc = misplaced(a);
  if (rc) return rc;
  const bool importing = !strcmp(a->sub, "import");
  /* every file read before the store is written */
  tkb__results_file *files = importing ? calloc(a->n_files, sizeof *files) : NULL;
  if (importing && !files) return tkb__usage(CMD, "out of memory");
  for (size_t i = 0; importing && i < a->n_files && !rc; i++)
    if (tkb__results_file_load(a->files[i], &files[i]) != TKB_OK)
      rc = tkb__usage(CMD, "import: %s", tkb_last_error());
  tkb__history *h = NULL;
  if (!rc) rc = open_store(a, !importing && strcmp(a->sub, "prune") != 0, &h);
  if (!rc) {
    if (!strcmp(a->sub, "list")) rc = list(a, h);
    else if (!strcmp(a->sub, "show")) rc = show(a, h);
    else if (!strcmp(a->sub, "export")) rc = export(a, h);
    else if (!strcmp(a->sub, "prune")) rc = prune(a, h);
    else rc = import(a, h, files);
  }
  tkb__history_close(h);
  for (size_t i = 0; importing && i < a->n_files; i++) tkb__results_file_free(&files[i]);
  free(files);
  return rc;
}

static int history_main(int argc, char **argv) {
  history_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_history, argc, argv, &a, &a.sel);
  if (rc == TKB__PARSED) rc = history(&a);
  tkb__flags_free(&tkb__command_history, &a, &a.sel);
  free(a.files);
  return rc;
}

const tkb__command tkb__command_history = {
    .name = CMD,
    .summary = "Read, export, prune or import the results store that --history fills",
    .handler = history_main,
    .usage = "list|show|export|prune|import [flags] [FILE...]",
    .about = "The results store keeps every run recorded with --history (run, check, ab) or "
             "TKB_HISTORY: when, the code (commit, branch), the machine and its fingerprint, the "
             "settings, and per entry its status, median, 95% interval, n and a summary of its "
             "distribution. list: the machines, then the runs (id, time, kind, status, commit, "
             "branch, machine, device, entries). show: each selected entry's series on one machine "
             "(time, commit, median, interval), oldest first. export: the selected points as JSON "
             "or CSV. prune: remove old runs (--keep-days, --keep-runs) and what only they held. "
             "import FILE...: record results files ({prog}'s JSON, its journals, or Google "
             "Benchmark's JSON) as runs, each file read whole before any is recorded. Runs are "
             "kept per machine: a key made from what updates do not change (host, CPU model and "
             "count, the device's kind and model), so a series never mixes machines.",
    .selection = TKB__SELECT_FILTER | TKB__SELECT_TAG | TKB__SELECT_OP | TKB__SELECT_MODE | TKB__SELECT_IMPL,
    .flags = history_flags,
    .operand = operand,
    .epilogue = "Exit status: 0 done, 1 the store or --out could not be written, 2 a usage error: "
                "an unknown subcommand, machine or entry, a store that cannot be opened (a malformed "
                "URL, a file that is no store, a newer schema), a file that is no results file "
                "(nothing written).\n"
                "\n"
                "Examples:\n"
                "  {prog} run --history results/history.sqlite\n"
                "  {prog} history list\n"
                "  {prog} history show --filter '^cpu_96x96x64_forward_cpu$'\n"
                "  {prog} history export --op normalization --since 30d --out norm.csv\n"
                "  {prog} history prune --keep-runs 100\n"
                "  {prog} history import old.json gbench.json --commit 1a2b3c4 --branch main\n"
                "  {prog} history list --history postgresql://bench@db.example.com/perf",
};
