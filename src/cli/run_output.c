/*
 * run_output.c - where `run`'s results go as entries finish: stdout's report (streamed),
 * the progress line, and with --out the journal (one fsync'd line per finished entry)
 * from which the --out file is written at the end, in whatever format it asks for.
 * `--resume FILE` reads the journal back: what it recorded must match the new run's (else
 * what differs is named, as the option that sets it): the tkbench and the device, every
 * setting that shapes the numbers (run.c lists them) and the selection, plugins
 * included, so that the final file never puts the new settings' context over rows
 * measured with the old, nor entries of another selection into the run. Its entries are
 * shown again and not rerun; the lines it left out are named.
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

/* What must match in the context for a journal's entries to stand beside the new run's,
 * beyond the settings run.c records: the same tkbench, the same device. */
static const struct {
  const char *key, *what;
} same_context[] = {{"library", "the library"},
                    {"json_schema_version", "the JSON schema version"},
                    {"library_version", "tkbench"},
                    {"device", "--device"},
                    {"device_description", "the device"}};

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

/* A recorded setting as the user sets it: "--threads 4", "OMP_NUM_THREADS=2",
 * "OMP_NUM_THREADS unset" (a variable is a name without '-' or space). */
static void setting_text(const char *key, const cJSON *v, char *buf, size_t cap) {
  char *value = !v || cJSON_IsNull(v) ? NULL : cJSON_IsString(v) ? tkb__strdup(v->valuestring)
                                                                  : cJSON_PrintUnformatted(v);
  if (key[0] == '-' || strchr(key, ' ')) snprintf(buf, cap, "%s %s", key, value ? value : "(none)");
  else if (value) snprintf(buf, cap, "%s=%s", key, value);
  else snprintf(buf, cap, "%s unset", key);
  free(value);
}

/* Appends "text" to a list of differences ("--threads 2, --cold-cache off"). */
static void list_add(char *list, size_t cap, const char *text) {
  const size_t len = strlen(list);
  if (len < cap) snprintf(list + len, cap - len, "%s%s", len ? ", " : "", text);
}

/* 0, or the usage error naming every setting whose value differs, as the option (or the
 * variable) that sets it, with the journal's value and this run's. */
static int check_context(const tkb__run_output *o, const tkb__journal_contents *j,
                         const tkb__report_ctx *ctx) {
  const char *journal = o->journal.path ? o->journal.path : o->out;
  const cJSON *old = cJSON_GetObjectItemCaseSensitive(j->recorded, "settings");
  const cJSON *new_ = cJSON_GetObjectItemCaseSensitive(o->recorded, "settings");
  if (!cJSON_IsObject(old))
    return tkb__usage(o->cmd, "--resume: the journal \"%s\" does not record the settings its "
                      "entries were measured with, so they cannot be checked against this run's; "
                      "remove it to start afresh", journal);
  cJSON *now = context_json(ctx);
  if (!now) return tkb__usage(o->cmd, "--resume: out of memory");
  char was[2048] = "", is[2048] = "", a_text[600], b_text[600];
  for (size_t i = 0; i < TKB_ARRAY_LEN(same_context); i++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j->context, same_context[i].key);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(now, same_context[i].key);
    if (a && b && cJSON_Compare(a, b, true)) continue;
    char *x = a ? cJSON_PrintUnformatted(a) : NULL, *y = b ? cJSON_PrintUnformatted(b) : NULL;
    snprintf(a_text, sizeof a_text, "%s %s", same_context[i].what, x ? x : "(none)");
    snprintf(b_text, sizeof b_text, "%s %s", same_context[i].what, y ? y : "(none)");
    list_add(was, sizeof was, a_text);
    list_add(is, sizeof is, b_text);
    free(x);
    free(y);
  }
  cJSON_Delete(now);
  /* every setting either run recorded: this run's, then those only the journal has */
  for (int pass = 0; pass < 2; pass++)
    for (const cJSON *c = (pass ? old : new_) ? (pass ? old : new_)->child : NULL; c; c = c->next) {
      const cJSON *a = cJSON_GetObjectItemCaseSensitive(old, c->string);
      const cJSON *b = cJSON_GetObjectItemCaseSensitive(new_, c->string);
      if ((a && b && cJSON_Compare(a, b, true)) || (pass && b)) continue; /* same, or said */
      setting_text(c->string, a, a_text, sizeof a_text);
      setting_text(c->string, b, b_text, sizeof b_text);
      list_add(was, sizeof was, a_text);
      list_add(is, sizeof is, b_text);
    }
  if (!*was) return 0;
  return tkb__usage(o->cmd,
                    "--resume: the journal \"%s\" was written with %s; this run has %s: its "
                    "entries would not be comparable with the new ones (run with the options it "
                    "was started with, or remove the journal)", journal, was, is);
}

/* 0, or the usage error saying how the journal's selection (plugins included) and this
 * run's differ: the entries kept from it and those run now must be one selection's. */
static int check_selection(const tkb__run_output *o, const tkb__journal_contents *j) {
  const cJSON *old = cJSON_GetObjectItemCaseSensitive(j->recorded, "selection");
  const cJSON *new_ = cJSON_GetObjectItemCaseSensitive(o->recorded, "selection");
  if (!new_ || !cJSON_IsObject(old)) return 0; /* a journal that records none: check_context says so */
  /* the same plugins and the same entries, however the flags spell them */
  bool same = true;
  static const char *const keys[] = {"loads", "entries", "names"};
  for (size_t k = 0; k < TKB_ARRAY_LEN(keys) && same; k++)
    same = cJSON_Compare(cJSON_GetObjectItemCaseSensitive(old, keys[k]),
                         cJSON_GetObjectItemCaseSensitive(new_, keys[k]), true);
  if (same) return 0;
  const cJSON *of = cJSON_GetObjectItemCaseSensitive(old, "flags");
  const cJSON *nf = cJSON_GetObjectItemCaseSensitive(new_, "flags");
  const cJSON *on = cJSON_GetObjectItemCaseSensitive(old, "entries");
  const cJSON *nn = cJSON_GetObjectItemCaseSensitive(new_, "entries");
  const char *was = cJSON_IsString(of) && *of->valuestring ? of->valuestring : " the default selection";
  const char *is = cJSON_IsString(nf) && *nf->valuestring ? nf->valuestring : " the default selection";
  const int n_old = cJSON_IsNumber(on) ? on->valueint : 0, n_new = cJSON_IsNumber(nn) ? nn->valueint : 0;
  return tkb__usage(o->cmd,
                    "--resume: the journal \"%s\" was written by a run that selected %d entr%s "
                    "with%s; this run selects %d with%s: give the --load and selection flags it "
                    "was started with, so that the file holds one selection's entries",
                    o->journal.path ? o->journal.path : o->out, n_old, n_old == 1 ? "y" : "ies",
                    was, n_new, is);
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

/* A journal for an --out that is a stream (stdout, a device, a FIFO): there is no file
 * to put it beside, and nothing --resume could continue, so it is a private file of this
 * run, removed at its end whatever happened. */
static int temporary_journal(tkb__run_output *o, const tkb__report_ctx *ctx) {
  const char *dir = getenv("TMPDIR");
  char path[4096];
  for (int k = 0;; k++) {
    snprintf(path, sizeof path, "%s/tkbench-%ld-%d.partial.jsonl", dir && *dir ? dir : "/tmp",
             (long)getpid(), k);
    if (access(path, F_OK) == 0 && k < 100) continue; /* a dead run's, of this pid */
    if (tkb__journal_create(&o->journal, o->out, path, ctx, o->recorded) == TKB_OK) return 0;
    return tkb__usage(o->cmd, "--out %s: its journal: %s", o->out, tkb_last_error());
  }
}

int tkb__run_output_open(tkb__run_output *o, tkb__report_ctx *ctx, bool resume) {
  o->stream_out = o->out && tkb__outfile_is_stream(o->out);
  if (o->stream_out && resume)
    return tkb__usage(o->cmd, "--resume %s: that is not a file (stdout, a device or a FIFO), so no "
                      "run of it kept a journal to continue", o->out);
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
    int rc = check_selection(o, &o->resumed);
    if (!rc) rc = check_context(o, &o->resumed, ctx);
    if (rc) return rc;
    if (o->resumed.cut)
      say(o, "warning: the journal's last line was cut off (the run was killed while writing it); "
             "that entry runs again");
    for (size_t i = 0; i < o->resumed.n_skipped; i++)
      say(o, "warning: %s", o->resumed.skipped[i]);
    /* the file says when the run began */
    const cJSON *date = cJSON_GetObjectItemCaseSensitive(o->resumed.context, "date");
    if (cJSON_IsString(date)) snprintf(ctx->date, sizeof ctx->date, "%s", date->valuestring);
    if (tkb__journal_reopen(&o->journal, o->out, o->resumed.valid_len, o->resumed.settings_id) != TKB_OK)
      return tkb__usage(o->cmd, "--resume: %s", tkb_last_error());
    o->journaling = true;
  } else if (o->stream_out) {
    int rc = temporary_journal(o, ctx);
    if (rc) return rc;
    o->journaling = true;
  } else if (o->out) {
    if (tkb__journal_create(&o->journal, o->out, NULL, ctx, o->recorded) != TKB_OK)
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
  const bool created = o->journaling && (!o->resumed.context || o->stream_out);
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

/* The --out file from the journal; false (said) when it could not be written. What is
 * said of --resume is only what --resume would do: write the file from the journal when
 * the journal reads back, and nothing when it does not. */
static bool write_file(tkb__run_output *o, const tkb__report_ctx *ctx, const tkb__run_summary *s) {
  const char *path = o->journal.path;
  tkb__journal_contents all;
  tkb__outfile file;
  tkb__reporter r;
  tkb_status st = tkb__journal_load(path, &all);
  if (st) {
    say(o, "cannot write %s: %s; the journal is kept as it is", o->out, tkb_last_error());
    return false;
  }
  if (!(st = tkb__outfile_open(&file, o->out))) {
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
  if (st && o->stream_out) say(o, "%s", tkb_last_error());
  else if (st)
    say(o, "%s (the journal \"%s\" keeps the finished entries: --resume %s writes the file)",
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
    if (o->stream_out || (ok && complete)) unlink(path);
    else if (ok)
      say(o, "the journal \"%s\" keeps the finished entries: --resume %s continues the run",
          path, o->out);
    free(path);
    o->journal.path = NULL;
  }
  tkb__journal_contents_free(&o->resumed);
  if (o->write_failed) return TKB_EXIT_FAILED;
  return rc;
}
