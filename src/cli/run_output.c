/*
 * run_output.c - where `run`'s results go as entries finish: stdout's report (streamed),
 * the progress line, and with --out the journal (one fsync'd line per finished entry)
 * from which the --out file is written at the end, in whatever format it asks for.
 * `--resume FILE` reads the journal back: its context must match the new run's (else
 * the field that differs is named), its entries are shown again and not rerun.
 *
 * A failed write is never silent: the path and strerror are said, and the run exits 1.
 * A closed stdout (`| head`) stops the run like a signal, with the files written.
 */
#include "cli.h"
#include "jsonw.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What must match for a journal's entries to stand beside the new run's. */
static const char *const same_fields[] = {
    "library",     "json_schema_version", "library_version", "device",
    "device_description", "method", "seed", "iterations", "experiments", "interval_ms",
    "warmup", "stopping_rule", "interleave", "budget_s", "interval_busy"};

static void say(const tkb__run_output *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const tkb__run_output *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s %s: ", tkb__prog, o->cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* The new run's context as the journal's first line has it. */
static cJSON *context_json(const tkb__report_ctx *ctx) {
  tkb__textbuf b;
  if (tkb__textbuf_open(&b) != TKB_OK) return NULL;
  jw w = {.f = b.f, .compact = true};
  tkb__run_summary s = {0};
  jw_begin_object(&w, NULL);
  tkb__json_write_context(&w, ctx, &s);
  jw_end_object(&w);
  cJSON *doc = tkb__textbuf_close(&b) == TKB_OK ? cJSON_ParseWithLength(b.text, b.len) : NULL;
  tkb__textbuf_free(&b);
  cJSON *c = doc ? cJSON_DetachItemFromObjectCaseSensitive(doc, "context") : NULL;
  cJSON_Delete(doc);
  return c;
}

/* 0, or the usage error naming the first field whose value differs. */
static int check_context(const tkb__run_output *o, const cJSON *old, const tkb__report_ctx *ctx) {
  cJSON *now = context_json(ctx);
  if (!now) return tkb__usage(o->cmd, "--resume: out of memory");
  int rc = 0;
  for (size_t i = 0; i < TKB_ARRAY_LEN(same_fields) && !rc; i++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(old, same_fields[i]);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(now, same_fields[i]);
    if (a && b && cJSON_Compare(a, b, true)) continue;
    char *was = a ? cJSON_PrintUnformatted(a) : NULL, *is = b ? cJSON_PrintUnformatted(b) : NULL;
    rc = tkb__usage(o->cmd,
                    "--resume: the journal \"%s\" was written with %s %s, this run has %s: its "
                    "entries would not be comparable with the new ones (run with the options "
                    "it was started with, or remove the journal)",
                    o->journal.path ? o->journal.path : o->out, same_fields[i],
                    was ? was : "(none)", is ? is : "(none)");
    free(was);
    free(is);
  }
  cJSON_Delete(now);
  return rc;
}

bool tkb__run_output_resumed(const tkb__run_output *o, const char *name) {
  for (size_t i = 0; i < o->resumed.n; i++)
    if (strcmp(o->resumed.results[i].name, name) == 0) return true;
  return false;
}

/* stdout's report of one entry, and what a failed write of it means. */
static void to_stdout(tkb__run_output *o, const tkb__result *r) {
  if (!o->have_stdout || o->stdout_failed) return;
  tkb__reporter_entry(&o->stdout_r, r);
  const int err = o->stdout_r.write_errno;
  if (!err) return;
  o->stdout_failed = true;
  if (err == EPIPE) {
    tkb__stop_request(SIGPIPE); /* the reader has gone: stop, and write the files */
    /* what stdout still buffers goes nowhere, instead of raising SIGPIPE later */
    if (!freopen("/dev/null", "w", stdout)) clearerr(stdout);
    return;
  }
  say(o, "cannot write to stdout: %s", strerror(err));
  o->write_failed = true;
  if (!o->out) tkb__stop_request(SIGPIPE); /* nothing would be kept */
}

int tkb__run_output_open(tkb__run_output *o, tkb__report_ctx *ctx, bool resume) {
  if (o->out && resume) {
    char *path = tkb__journal_path(o->out);
    if (!path) return tkb__usage(o->cmd, "--resume: out of memory");
    if (access(path, F_OK) != 0) {
      say(o, "--resume: no journal \"%s\" (no run of %s was cut short): running every entry",
          path, o->out);
      resume = false;
    } else if (tkb__journal_load(path, &o->resumed) != TKB_OK) {
      free(path);
      return tkb__usage(o->cmd, "--resume: %s", tkb_last_error());
    }
    free(path);
  }
  if (resume) {
    if (o->resumed.cut)
      say(o, "warning: the journal's last line was cut off (the run was killed while writing it); "
             "that entry runs again");
    int rc = check_context(o, o->resumed.context, ctx);
    if (rc) return rc;
    /* the file says when the run began */
    const cJSON *date = cJSON_GetObjectItemCaseSensitive(o->resumed.context, "date");
    if (cJSON_IsString(date)) snprintf(ctx->date, sizeof ctx->date, "%s", date->valuestring);
    if (tkb__journal_reopen(&o->journal, o->out, o->resumed.valid_len) != TKB_OK)
      return tkb__usage(o->cmd, "--resume: %s", tkb_last_error());
    o->journaling = true;
  } else if (o->out) {
    if (tkb__journal_create(&o->journal, o->out, ctx) != TKB_OK)
      return tkb__usage(o->cmd, "--out: %s", tkb_last_error());
    o->journaling = true;
  }
  if (o->stdout_fmt && tkb__reporter_begin(&o->stdout_r, o->stdout_fmt, stdout, ctx,
                                           o->table && o->color) != TKB_OK) {
    say(o, "%s", tkb_last_error());
    return TKB_EXIT_FAILED;
  }
  o->stdout_r.aggregates_only = o->stdout_aggregates_only;
  o->have_stdout = o->stdout_fmt != NULL;
  for (size_t i = 0; i < o->resumed.n; i++) to_stdout(o, &o->resumed.results[i]);
  return 0;
}

void tkb__run_output_abandon(tkb__run_output *o) {
  const bool created = o->journaling && !o->resumed.context;
  if (created) unlink(o->journal.path); /* it holds nothing but the context */
  if (o->journal.path) tkb__journal_close(&o->journal);
  if (o->have_stdout) tkb__reporter_discard(&o->stdout_r);
  o->have_stdout = false;
  tkb__journal_contents_free(&o->resumed);
}

void tkb__run_output_start(void *user, size_t k, size_t n, const char *name) {
  (void)n;
  tkb__run_output *o = user;
  tkb__progress_show(&o->progress, o->resumed.n + k, name);
}

void tkb__run_output_entry(void *user, size_t k, size_t n, const tkb__result *r) {
  (void)k;
  (void)n;
  tkb__run_output *o = user;
  tkb__progress_clear(&o->progress);
  to_stdout(o, r);
  /* no table on stdout: a failure still needs saying */
  if (!r->bd && !r->skipped && !o->table)
    say(o, "%s failed (%s): %s", r->name, tkb_status_name(r->status), r->error ? r->error : "");
  if (o->journaling && tkb__journal_append(&o->journal, r, o->experiments) != TKB_OK) {
    say(o, "%s; stopping (the entries in it are kept)", tkb_last_error());
    o->write_failed = true;
    o->journaling = false;
    tkb__stop_request(SIGPIPE);
  }
}

/* The --out file from the journal; false (said) when it could not be written. */
static bool write_file(tkb__run_output *o, const tkb__report_ctx *ctx, const tkb__run_summary *s) {
  const char *path = o->journal.path;
  tkb__journal_contents all;
  tkb__outfile file;
  tkb__reporter r;
  tkb_status st = tkb__journal_load(path, &all);
  if (!st && !(st = tkb__outfile_open(&file, o->out))) {
    if (!(st = tkb__reporter_begin(&r, o->file_fmt, file.f, ctx, false))) {
      r.aggregates_only = o->file_aggregates_only;
      for (size_t i = 0; i < all.n; i++) tkb__reporter_entry(&r, &all.results[i]);
      st = tkb__reporter_end(&r, s);
      if (!st && r.n_replaced)
        say(o, "warning: %zu bytes of names or messages were not UTF-8; %s holds U+FFFD for them",
            r.n_replaced, o->out);
    }
    if (st) tkb__outfile_abort(&file);
    else st = tkb__outfile_commit(&file);
  }
  tkb__journal_contents_free(&all);
  if (st) say(o, "%s (the journal \"%s\" keeps the finished entries: --resume %s writes the file)",
              tkb_last_error(), path, o->out);
  return st == TKB_OK;
}

int tkb__run_output_close(tkb__run_output *o, const tkb__report_ctx *ctx, tkb__run_summary *s,
                          size_t n_done, int rc) {
  tkb__progress_clear(&o->progress);
  s->n_selected += o->resumed.n;
  if (o->have_stdout && !o->stdout_failed) {
    tkb_status st = tkb__reporter_end(&o->stdout_r, s);
    if (st && o->stdout_r.write_errno != EPIPE) {
      say(o, "cannot write to stdout: %s", tkb_last_error());
      o->write_failed = true;
    }
    if (!st && o->stdout_r.n_replaced)
      say(o, "warning: %zu bytes of names or messages were not UTF-8; the report on stdout holds "
             "U+FFFD for them", o->stdout_r.n_replaced);
  } else if (o->have_stdout) {
    tkb__reporter_discard(&o->stdout_r);
  }
  if (s->interrupted && (!o->table || o->stdout_failed))
    say(o, "%s: %zu of %zu entries ran", o->stdout_failed && !o->write_failed ? "stdout closed" : "interrupted",
        o->resumed.n + n_done, s->n_selected);
  fflush(stdout);
  if (o->journal.path) {
    if (o->journal.n_replaced)
      say(o, "warning: %zu bytes of names or messages were not UTF-8; the journal holds U+FFFD "
             "for them", o->journal.n_replaced);
    const bool complete = !s->interrupted && !o->write_failed;
    char *path = tkb__strdup(o->journal.path);
    tkb__journal_close(&o->journal);
    /* reopened for reading: its lock is gone, and the file is what is on the disk */
    o->journal.path = path;
    bool ok = write_file(o, ctx, s);
    if (ok && o->table && !o->stdout_failed) printf("wrote %s (%s)\n", o->out, o->file_fmt->name);
    if (!ok) o->write_failed = true;
    else if (complete) unlink(path);
    else say(o, "the journal \"%s\" keeps the finished entries: --resume %s continues the run",
             path, o->out);
    free(path);
    o->journal.path = NULL;
  }
  tkb__journal_contents_free(&o->resumed);
  if (o->write_failed) return TKB_EXIT_FAILED;
  return rc;
}
