/*
 * ab_worker.c - one side of `tkbench ab`: `run --serve` keeps the entries its flags
 * select, and times them one experiment at a time as the parent (ab.c) asks, so that
 * the parent can alternate the two sides' experiments. The entry in progress stays
 * standardized and compiled between requests, its session paused (src/bench/session.c),
 * as `run --interleave` keeps its entries.
 *
 * The conversation, one line each way per request:
 *   worker, first:  "entries N", then the N names, one a line
 *   "open K"    ->  "ok" | "error MESSAGE"    (entry K of that list; closes any other)
 *   "run"       ->  "more" | "done" | "error MESSAGE"   (one experiment; done: the
 *                                                         stopping rule has stopped)
 *   "finish"    ->  "result LEN" and LEN bytes: the JSON report of that one entry
 *                   (context and rows, as `run --out x.json` writes them) | "error MESSAGE"
 *   "close"     ->  "ok"
 *   "quit" or the end of stdin: the worker exits 0.
 * A failure of the entry is an "error" reply and the worker waits for the next request;
 * a crash ends the worker, which the parent sees as the end of its replies.
 */
#include "bench.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The entry in progress. */
typedef struct open_entry {
  size_t entry;
  tkb_std_fn *f;
  tkb_arrays *args;
  tkb_compiled *c;
  tkb__session *s;
  tkb__result r;
  int64_t busy_ns;
  bool active;
} open_entry;

static void close_entry(open_entry *e) {
  tkb__session_free(e->s);
  tkb_compiled_free(e->c);
  tkb_std_fn_free(e->f);
  tkb_arrays_free(e->args);
  tkb__result_clear(&e->r);
  *e = (open_entry){0};
}

/* "error MESSAGE" on one line. */
static void error_reply(FILE *out, tkb_status st) {
  const char *msg = tkb_last_error();
  fputs("error ", out);
  for (const char *p = *msg ? msg : tkb_status_name(st); *p; p++) fputc(*p == '\n' || *p == '\r' ? ' ' : *p, out);
  fputc('\n', out);
}

static tkb_status open_entry_k(const tkb__runner *runner, size_t entry, size_t k, open_entry *e) {
  *e = (open_entry){.entry = entry, .active = true, .r = {.family_index = (int)k}};
  tkb__result_identity(&e->r, entry);
  tkb_bench_opts bo = runner->bench;
  bo.check_outputs = true;
  const int64_t t0 = tkb__now_ns();
  tkb_status st = tkb_registry_standardize(entry, runner->device, runner->seed, &e->f, &e->args);
  if (!st) st = tkb_compile_benchmark(e->f, e->args, &e->c);
  if (!st) st = tkb__session_open(e->c, &bo, &e->s);
  e->busy_ns = tkb__now_ns() - t0;
  return st;
}

/* The entry's result as its JSON report, after "result LEN". */
static tkb_status send_result(FILE *out, const tkb__report_ctx *ctx, open_entry *e) {
  const int64_t t0 = tkb__now_ns();
  tkb_status st = tkb__session_finish(e->s, &e->r.bd);
  if (!st) st = tkb_registry_counts(e->entry, &e->r.counts);
  e->busy_ns += tkb__now_ns() - t0;
  if (st) return st;
  e->r.wall_s = (double)e->busy_ns / 1e9;
  const tkb__format *json;
  tkb__format_parse("json", &json);
  tkb__textbuf text;
  if ((st = tkb__textbuf_open(&text)) != TKB_OK) return st;
  tkb__run_summary s = {.n_selected = 1};
  tkb__load_now(&s.load_end);
  st = tkb__report_write(json, text.f, ctx, &e->r, 1, &s);
  if (!st) st = tkb__textbuf_close(&text);
  if (!st) {
    fprintf(out, "result %zu\n", text.len);
    if (text.len) fwrite(text.text, 1, text.len, out);
  }
  tkb__textbuf_free(&text);
  return st;
}

int tkb__serve(const tkb__runner *runner, const tkb__report_ctx *ctx, const size_t *idx, size_t n) {
  /* the replies keep what was stdout; stdout now writes to stderr */
  fflush(stdout);
  const int fd = dup(STDOUT_FILENO);
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!out || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    fprintf(stderr, "%s run --serve: cannot set up its replies\n", tkb__prog);
    return TKB_EXIT_FAILED;
  }
  fprintf(out, "entries %zu\n", n);
  for (size_t k = 0; k < n; k++) fprintf(out, "%s\n", tkb_registry_full_name(idx[k]));
  fflush(out);
  open_entry e = {0};
  char line[256];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\r\n")] = '\0';
    tkb_status st = TKB_OK;
    if (strncmp(line, "open ", 5) == 0) {
      close_entry(&e);
      char *end;
      const unsigned long k = strtoul(line + 5, &end, 10);
      if (*end || k >= n) {
        fprintf(out, "error no entry %s: there are %zu\n", line + 5, n);
      } else if ((st = open_entry_k(runner, idx[k], k, &e)) != TKB_OK) {
        error_reply(out, st);
        close_entry(&e);
      } else {
        fputs("ok\n", out);
      }
    } else if (strcmp(line, "run") == 0) {
      bool done = false;
      const int64_t t0 = tkb__now_ns();
      if (!e.active) st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "no entry is open");
      if (!st) st = tkb__session_experiment(e.s, &done);
      if (e.active) {
        tkb__session_pause(e.s);
        e.busy_ns += tkb__now_ns() - t0;
      }
      if (st) error_reply(out, st);
      else fputs(done ? "done\n" : "more\n", out);
    } else if (strcmp(line, "finish") == 0) {
      if (!e.active) st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "no entry is open");
      if (!st) st = send_result(out, ctx, &e);
      if (st) error_reply(out, st);
      close_entry(&e);
    } else if (strcmp(line, "close") == 0) {
      close_entry(&e);
      fputs("ok\n", out);
    } else if (strcmp(line, "quit") == 0) {
      break;
    } else {
      fprintf(out, "error unknown request \"%s\"\n", line);
    }
    fflush(out);
  }
  close_entry(&e);
  fclose(out);
  return TKB_EXIT_OK;
}
