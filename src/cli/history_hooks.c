/*
 * history_hooks.c - what `run`, `check` and `ab` do with --history (or TKB_HISTORY): the
 * store is opened (created, migrated) and the code's commit and branch found before
 * anything runs, so a bad location or commit is a usage error that costs nothing; the
 * finished entries are kept as they come; when the command ends (completed, stopped by a
 * signal, or after failures: whatever finished), they are recorded as one run. A store
 * that cannot take the run then fails the command (exit 1) as a file that cannot be
 * written does; the run's own outputs are unaffected.
 *
 * The store is not held open while entries run: workers are forks of this process, and
 * a database connection must not be shared with a fork.
 */
#include "cli.h"
#include "history.h"
#include "jsonw.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the code measured ---- */

/* `git ARGS` in the current folder, its first line (malloc'd), or NULL when git is
 * missing or fails (not a repository, a detached HEAD's branch). Its complaints are not
 * the user's business: its stderr goes to /dev/null. */
static char *git_line(char *const argv[]) {
  char out[128];
  int fds[2];
  if (pipe(fds) != 0) return NULL;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  const pid_t pid = tkb__spawn(argv, fds[1], null);
  close(fds[1]);
  if (null >= 0) close(null);
  size_t len = 0;
  for (ssize_t got; pid > 0 && len + 1 < sizeof out;) {
    got = read(fds[0], out + len, sizeof out - 1 - len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    len += (size_t)got;
  }
  close(fds[0]);
  out[len] = '\0';
  if (pid < 0 || tkb__wait(pid) != 0) return NULL;
  out[strcspn(out, "\r\n")] = '\0';
  if (!out[0] || !strcmp(out, "HEAD")) return NULL;
  return tkb__strdup(out);
}

static char *env_copy(const char *name) {
  const char *v = getenv(name);
  return v && *v ? tkb__strdup(v) : NULL;
}

/* Flag, else git, else the variable; the commit checked. 0 or TKB_EXIT_USAGE. */
static int code_of(const char *cmd, const tkb__history_args *a, tkb__history_sink *s) {
  if (a->commit && tkb__history_commit_check("--commit", a->commit) != TKB_OK)
    return tkb__usage(cmd, "%s", tkb_last_error());
  char *const head[] = {"git", "rev-parse", "HEAD", NULL};
  char *const branch[] = {"git", "rev-parse", "--abbrev-ref", "HEAD", NULL};
  s->commit = a->commit ? tkb__strdup(a->commit) : git_line(head);
  if (!s->commit && (s->commit = env_copy("TKB_COMMIT")) && tkb__history_commit_check("TKB_COMMIT", s->commit))
    return tkb__usage(cmd, "%s", tkb_last_error());
  s->branch = a->branch ? tkb__strdup(a->branch) : git_line(branch);
  if (!s->branch) s->branch = env_copy("TKB_BRANCH");
  return 0;
}

/* ---- before: the store checked ---- */

int tkb__history_begin(const char *cmd, const tkb__history_args *a, tkb__history_sink *s) {
  *s = (tkb__history_sink){.cmd = cmd};
  const char *where = a->history;
  const char *flag = "--history";
  if (!where) {
    where = getenv("TKB_HISTORY");
    flag = "TKB_HISTORY";
    if ((!where || !*where) && (a->commit || a->branch))
      return tkb__usage(cmd, "%s goes with --history DB (or TKB_HISTORY): without a store nothing records it",
                        a->commit ? "--commit" : "--branch");
    if (!where || !*where) return 0;
  }
  if (!*where) return tkb__usage(cmd, "--history needs a store: a file (history.sqlite) or a postgresql:// URL");
  int rc = code_of(cmd, a, s);
  tkb__history *h = NULL;
  if (!rc && tkb__history_open(where, NULL, &h) != TKB_OK) rc = tkb__usage(cmd, "%s: %s", flag, tkb_last_error());
  tkb__history_close(h);
  if (!rc && !(s->location = tkb__strdup(where))) rc = tkb__usage(cmd, "out of memory");
  if (rc) {
    tkb__history_abandon(s);
    return rc;
  }
  s->active = true;
  return 0;
}

void tkb__history_abandon(tkb__history_sink *s) {
  free(s->location);
  free(s->commit);
  free(s->branch);
  cJSON_Delete(s->doc);
  *s = (tkb__history_sink){.cmd = s->cmd};
}

/* ---- during: the entries kept ---- */

void tkb__history_add(tkb__history_sink *s, const tkb__result *r, int experiments) {
  if (!s || !s->active || s->lost) return;
  if (!s->doc && (!(s->doc = cJSON_CreateObject()) || !(s->rows = cJSON_AddArrayToObject(s->doc, "benchmarks")))) {
    s->lost = true;
    return;
  }
  /* the rows the journal would hold: the record is the same as the --out file's import */
  char *text = NULL;
  size_t len = 0;
  cJSON *line = tkb__entry_line(r, experiments, &text, &len, NULL) == TKB_OK ? cJSON_ParseWithLength(text, len) : NULL;
  free(text);
  cJSON *rows = cJSON_GetObjectItemCaseSensitive(line, "benchmarks");
  if (!cJSON_IsArray(rows)) s->lost = true;
  while (cJSON_IsArray(rows) && rows->child) cJSON_AddItemToArray(s->rows, cJSON_DetachItemViaPointer(rows, rows->child));
  cJSON_Delete(line);
}

/* ---- after: the run recorded ---- */

/* Says what was recorded, or why not; the exit code's part. */
static int said(const tkb__history_sink *s, tkb_status st, size_t n, int64_t id, bool quiet) {
  if (st) {
    fprintf(stderr, "%s %s: the run was not recorded: %s\n", tkb__prog, s->cmd, tkb_last_error());
    return TKB_EXIT_FAILED;
  }
  if (!quiet)
    fprintf(stderr, "%s %s: recorded run %lld (%zu entr%s) in %s\n", tkb__prog, s->cmd, (long long)id, n,
            n == 1 ? "y" : "ies", s->location);
  return TKB_EXIT_OK;
}

static tkb_status record_rf(const tkb__history_sink *s, const tkb__results_file *rf, const char *kind, bool code,
                            bool interrupted, int64_t *id, size_t *n) {
  tkb__history *h = NULL;
  tkb_status st = tkb__history_open(s->location, NULL, &h);
  if (st) return st;
  tkb__history_origin o = {.kind = kind,
                           .commit = code ? s->commit : NULL,
                           .branch = code ? s->branch : NULL,
                           .this_machine = true,
                           .interrupted = interrupted};
  st = tkb__history_record_file(h, rf, &o, id, n);
  tkb__history_close(h);
  return st;
}

int tkb__history_end_run(tkb__history_sink *s, const tkb__report_ctx *ctx, const tkb__run_summary *sum, bool quiet) {
  if (!s->active) return TKB_EXIT_OK;
  tkb_status st = s->lost ? tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory keeping the entries") : TKB_OK;
  if (!st && !s->doc && (!(s->doc = cJSON_CreateObject()) || !cJSON_AddArrayToObject(s->doc, "benchmarks")))
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  /* the context as the JSON report writes it */
  tkb__textbuf b = {0};
  if (!st) st = tkb__textbuf_open(&b);
  if (!st) {
    jw w = {.f = b.f, .compact = true};
    jw_begin_object(&w, NULL);
    tkb__json_write_context(&w, ctx, sum);
    jw_end_object(&w);
    st = tkb__textbuf_close(&b);
  }
  cJSON *doc = st ? NULL : cJSON_ParseWithLength(b.text, b.len);
  tkb__textbuf_free(&b);
  cJSON *context = doc ? cJSON_DetachItemFromObjectCaseSensitive(doc, "context") : NULL;
  cJSON_Delete(doc);
  if (!st && !context) st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory writing the run's context");
  int64_t id = 0;
  size_t n = 0;
  if (!st) {
    cJSON_AddItemToObject(s->doc, "context", context);
    tkb__results_file rf;
    st = tkb__results_file_adopt(s->doc, "the run", &rf); /* takes the document */
    s->doc = NULL;
    if (!st) st = record_rf(s, &rf, "run", true, sum->interrupted, &id, &n);
    tkb__results_file_free(&rf);
  }
  const int rc = said(s, st, n, id, quiet);
  tkb__history_abandon(s);
  return rc;
}

int tkb__history_end_file(tkb__history_sink *s, const tkb__results_file *rf, const char *kind, bool code,
                          bool interrupted, bool quiet) {
  if (!s->active) return TKB_EXIT_OK;
  int64_t id = 0;
  size_t n = 0;
  tkb_status st = record_rf(s, rf, kind, code, interrupted, &id, &n);
  return said(s, st, n, id, quiet);
}

/* ---- check: numerics, not times ---- */

/* The worst relative l2 error over the item's outputs (NaN when it has none). */
static double worst_rel_l2(const tkb_check_result *c) {
  double worst = NAN;
  for (int i = 0; c && i < c->n_outputs; i++) {
    const double v = c->outputs[i].criteria[TKB_CRITERION_REL_L2].value;
    if (isnan(worst) || v > worst) worst = v;
  }
  return worst;
}

int tkb__history_end_check(tkb__history_sink *s, const tkb__check_ctx *ctx, const tkb__check_item *items,
                           size_t n, bool interrupted, bool quiet) {
  if (!s->active) return TKB_EXIT_OK;
  tkb__machine m;
  tkb__machine_read(&m, ctx->device, ctx->device_description, NULL);
  char settings[256];
  snprintf(settings, sizeof settings, "{\"seed\":%llu,\"tolerance\":\"%s\",\"rtol\":%.17g,\"atol\":%.17g}",
           (unsigned long long)ctx->seed, ctx->fixed_tolerance ? "fixed" : "per dtype",
           ctx->fixed_tolerance ? ctx->rtol : 0, ctx->fixed_tolerance ? ctx->atol : 0);
  tkb__history_run run = {.time = (int64_t)time(NULL), .kind = "check",
                          .status = interrupted ? "interrupted" : "complete", .commit = s->commit,
                          .branch = s->branch, .machine = m.key, .host = m.host, .cpu_model = m.cpu_model,
                          .cpu_isa = m.cpu_isa, .kernel = m.kernel, .cores = m.cores,
                          .memory_bytes = m.memory_bytes, .device = ctx->device,
                          .device_name = m.device_name, .driver = m.driver[0] ? m.driver : NULL,
                          .tkbench_version = tkb_version(), .seed = ctx->seed, .settings = settings};
  tkb__history_entry *e = calloc(n ? n : 1, sizeof *e);
  char (*modes)[32] = calloc(n ? n : 1, sizeof *modes);
  tkb_status st = e && modes ? TKB_OK : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; !st && i < n; i++) {
    const tkb__check_item *it = &items[i];
    const size_t k = it->entry;
    const tkb_benchmark_def *d = tkb_registry_get(k);
    snprintf(modes[i], sizeof modes[i], "%s", d ? tkb_mode_name(d->mode) : "");
    const bool passed = !it->status && it->result && it->result->passed;
    e[i] = (tkb__history_entry){.name = tkb_registry_full_name(k),
                                .op = d ? d->op : NULL, .spec = d ? d->name : NULL,
                                .impl = d ? d->impl_name : NULL, .mode = modes[i][0] ? modes[i] : NULL,
                                .tags = d ? d->tags : NULL,
                                .status = it->skipped ? "skipped" : passed ? "ok" : "failed",
                                .message = it->message,
                                /* the relative l2 error of its worst output, a number to follow */
                                .unit = "rel_l2", .median = worst_rel_l2(it->result),
                                .ci_low = NAN, .ci_high = NAN, .n = it->result ? it->result->n_outputs : 0,
                                .min = NAN, .p10 = NAN, .p25 = NAN, .p75 = NAN, .p90 = NAN, .max = NAN};
  }
  tkb__history *h = NULL;
  int64_t id = 0;
  if (!st) st = tkb__history_open(s->location, NULL, &h);
  if (!st) st = tkb__history_record(h, &run, e, n, NULL, 0, &id);
  tkb__history_close(h);
  free(e);
  free(modes);
  const int rc = said(s, st, n, id, quiet);
  tkb__history_abandon(s);
  return rc;
}
