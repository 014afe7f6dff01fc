/*
 * check.c - `tkbench check`: the numerics of every selected implementation against its
 * op's reference on fresh random inputs (tkb_check_entry), with Tokamax's diff summary
 * per output, PASS/FAIL per entry and a final count. Exit 1 when anything fails. It
 * selects entries as list and run do (the same flags and default tag), less the
 * references themselves. Like run, it checks each entry in a worker process when there
 * are several, so an implementation that crashes or hangs fails alone.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "check"

static double parse_tol(const char *s, bool *ok) {
  char *end;
  double v = strtod(s, &end);
  *ok = *s && !*end && isfinite(v) && v >= 0;
  return v;
}

/* "[3,17]" for flat index i of a shape; "[]" for a scalar. */
static void format_index(const tkb_spec *s, int64_t i, char *buf, size_t cap) {
  int64_t idx[TKB_MAX_RANK];
  for (int d = s->rank - 1; d >= 0; d--) {
    idx[d] = s->shape[d] > 0 ? i % s->shape[d] : 0;
    i = s->shape[d] > 0 ? i / s->shape[d] : 0;
  }
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < s->rank && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? "," : "", (long long)idx[d]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

static void print_output(FILE *f, const tkb_check_output *o) {
  const tkb_diff_summary *d = &o->diff;
  char spec[128], at[128] = "-";
  tkb_spec_format(&o->spec, spec, sizeof spec);
  if (d->numel > 0) format_index(&o->spec, d->max_abs_diff_index, at, sizeof at);
  fprintf(f, "    %-6s %-22s max|diff| %.3g at %s (actual %.9g, expected %.9g)  close %.2f%%  "
         "allclose %s  l2 %.3g (rel %.3g)  NaN %lld/%lld  Inf %lld/%lld  rtol %.3g atol %.3g\n",
         o->name, spec, d->max_abs_diff, at, d->max_diff_actual, d->max_diff_expected,
         d->percent_close, d->allclose ? "yes" : "NO", d->l2_diff, d->rel_l2_diff,
         (long long)d->nan_actual, (long long)d->nan_expected, (long long)d->inf_actual,
         (long long)d->inf_expected, d->rtol, d->atol);
}

typedef struct check_args {
  tkb__select_args sel;
  uint64_t seed;
  const char *rtol, *atol;
  tkb__isolation_args iso;
} check_args;

/* A tolerance is a finite number >= 0. */
static int check_tolerance(const char *cmd, const char *flag, const char *value) {
  bool ok;
  parse_tol(value, &ok);
  return ok ? 0 : tkb__usage(cmd, "%s '%s' is not a number >= 0", flag, value);
}

#define AT(field) offsetof(check_args, field)

static const tkb__flag check_flags[] = {
    {.heading = "Numerics:"},
    {.name = "--seed", .metavar = "N", .kind = TKB__FLAG_U64, .offset = AT(seed), .value = "0",
     .help = "Seed of the random inputs."},
    {.name = "--rtol", .metavar = "R", .kind = TKB__FLAG_TEXT, .offset = AT(rtol),
     .check = check_tolerance, .shown = "per dtype",
     .help = "A fixed relative tolerance for every output, instead of the per-dtype ones "
             "(float32 1e-4, bfloat16 1.6e-2, float16 2e-3, float64 1e-9, with atol a fraction "
             "of the reference output's largest magnitude; see tkbench.h). With --rtol or "
             "--atol alone, the other is numpy's default (rtol " TKB__TEXT(TKB_DIFF_RTOL_DEFAULT)
             ", atol " TKB__TEXT(TKB_DIFF_ATOL_DEFAULT) ")."},
    {.name = "--atol", .metavar = "A", .kind = TKB__FLAG_TEXT, .offset = AT(atol),
     .check = check_tolerance, .shown = "per dtype",
     .help = "A fixed absolute tolerance for every output (see --rtol)."},
    TKB__ISOLATION_FLAGS(AT(iso), ""),
    {0},
};

extern const tkb__command tkb__command_check;

typedef enum verdict { PASSED, FAILED, SKIPPED } verdict;

/* Checks one entry, its lines to f. */
static verdict check_one(size_t entry, const tkb_check_opts *opts, FILE *f) {
  const char *name = tkb_registry_full_name(entry);
  tkb_check_result *r = NULL;
  tkb__worker_phase(entry, "check", 0);
  tkb_status st = tkb_check_entry(entry, opts, &r);
  verdict v;
  if (st == TKB_ERR_NOT_FOUND) {
    fprintf(f, "SKIP %s\n", tkb_last_error()); /* names the entry and what is missing */
    v = SKIPPED;
  } else if (st) {
    fprintf(f, "FAIL %s: %s: %s\n", name, tkb_status_name(st), tkb_last_error());
    v = FAILED;
  } else {
    fprintf(f, "%s %s (against %s)\n", r->passed ? "PASS" : "FAIL", name, r->reference_name);
    for (int o = 0; o < r->n_outputs; o++) print_output(f, &r->outputs[o]);
    v = r->passed ? PASSED : FAILED;
  }
  tkb_check_result_free(r);
  return v;
}

/* One entry checked in a worker: its verdict and text come back as one message. */
typedef struct isolated {
  size_t entry;
  const tkb_check_opts *opts;
  verdict v;
  char *text;
} isolated;

static void isolated_body(void *arg) {
  isolated *c = arg;
  tkb__textbuf b;
  if (tkb__textbuf_open(&b) != TKB_OK) return;
  fputc('0', b.f); /* the verdict's place */
  verdict v = check_one(c->entry, c->opts, b.f);
  if (tkb__textbuf_close(&b) == TKB_OK && b.len > 0) {
    b.text[0] = (char)('0' + v);
    tkb__worker_send(b.text, b.len);
  }
  tkb__textbuf_free(&b);
}

static void isolated_message(void *user, const char *text, size_t len) {
  isolated *c = user;
  if (len == 0 || c->text || text[0] < '0' || text[0] > '0' + SKIPPED) return;
  c->v = (verdict)(text[0] - '0');
  c->text = malloc(len);
  if (c->text) {
    memcpy(c->text, text + 1, len - 1);
    c->text[len - 1] = '\0';
  }
}

static verdict check_isolated(size_t entry, const tkb_check_opts *opts, double timeout_s,
                              volatile sig_atomic_t *stop, bool *stopped) {
  isolated c = {.entry = entry, .opts = opts};
  tkb__worker_job job = {.body = isolated_body, .arg = &c, .on_message = isolated_message,
                         .user = &c, .timeout_s = timeout_s, .stop = stop};
  tkb__worker_end end;
  tkb_status st = tkb__worker_run(&job, &end);
  const char *name = tkb_registry_full_name(entry);
  if (!st && !c.text && (*stop || end.how == TKB__WORKER_STOPPED)) {
    *stopped = true;
    return FAILED;
  }
  if (c.text) {
    fputs(c.text, stdout);
    free(c.text);
    return c.v;
  }
  char why[1024];
  if (st) snprintf(why, sizeof why, "%s", tkb_last_error());
  else tkb__worker_describe(&end, name, timeout_s, why, sizeof why);
  printf("FAIL %s: %s: %s\n", name,
         tkb_status_name(st ? st : end.how == TKB__WORKER_TIMED_OUT ? TKB_ERR_TIMEOUT : TKB_ERR_CRASHED),
         why);
  return FAILED;
}

/* Checks entries idx[0..n), printing as each finishes; returns the exit status. */
static int check_all(const size_t *idx, size_t n, const tkb_check_opts *opts, bool isolate,
                     double timeout_s) {
  int count[3] = {0};
  tkb__progress progress;
  tkb__progress_begin(&progress, stderr, isatty(fileno(stderr)) != 0, n);
  tkb__stop_begin();
  volatile sig_atomic_t *stop = tkb__stop_flag();
  size_t k = 0;
  int rc = 0;
  for (; k < n && !*stop; k++) {
    tkb__progress_show(&progress, k, tkb_registry_full_name(idx[k]));
    bool stopped = false;
    verdict v = isolate ? check_isolated(idx[k], opts, timeout_s, stop, &stopped)
                        : check_one(idx[k], opts, stdout);
    tkb__progress_clear(&progress);
    if (stopped) break;
    count[v]++;
    if (fflush(stdout) != 0) {
      if (errno != EPIPE) {
        fprintf(stderr, "%s %s: cannot write to stdout: %s\n", tkb__prog, CMD, strerror(errno));
        rc = TKB_EXIT_FAILED;
      }
      tkb__stop_request(SIGPIPE);
      k++;
      break;
    }
  }
  const int sig = *stop;
  tkb__stop_end();
  if (count[SKIPPED]) printf("%d skipped (no reference entry for their spec and mode)\n", count[SKIPPED]);
  printf("%d passed, %d failed\n", count[PASSED], count[FAILED]);
  if (k < n && sig) {
    printf("interrupted: %zu of %zu entries checked\n", k, n);
    if (!rc) rc = 128 + sig;
  }
  return rc ? rc : count[FAILED] ? TKB_EXIT_FAILED : TKB_EXIT_OK;
}

/* Everything that can be wrong on the command line is found before anything runs. */
static int check(const check_args *a) {
  tkb_check_opts opts = {.seed = a->seed, .device = a->sel.device};
  if (a->rtol || a->atol) {
    bool ok;
    opts.fixed_tolerance = true;
    opts.rtol = a->rtol ? parse_tol(a->rtol, &ok) : TKB_DIFF_RTOL_DEFAULT;
    opts.atol = a->atol ? parse_tol(a->atol, &ok) : TKB_DIFF_ATOL_DEFAULT;
  }
  if (tkb__device_name_check(a->sel.device) != TKB_OK)
    return tkb__usage(CMD, "--device: %s", tkb_last_error());
  if (tkb__load_plugins(CMD, &a->sel.loads)) return TKB_EXIT_USAGE;
  size_t *idx = NULL, n = 0;
  /* the references are what the others are checked against */
  tkb__shard_info shard;
  if (tkb__select_entries(&tkb__command_check, &a->sel, "reference", &idx, &n, &shard))
    return TKB_EXIT_USAGE;
  tkb__shard_note(CMD, &shard);
  if (tkb__cpu_isa_warning()[0]) fprintf(stderr, "%s: warning: %s\n", tkb__prog, tkb__cpu_isa_warning());
  bool isolate;
  double timeout_s;
  tkb__device_facts facts;
  int rc = tkb__isolation(CMD, &a->iso, a->sel.device, n, &isolate, &timeout_s);
  if (!rc) rc = tkb__device_find(CMD, a->sel.device, NULL, false, isolate, timeout_s, &facts);
  if (!rc) rc = check_all(idx, n, &opts, isolate, timeout_s);
  free(idx);
  return rc;
}

int tkb__cli_check(int argc, char **argv) {
  check_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_check, argc, argv, &a, &a.sel);
  if (rc == TKB__PARSED) rc = check(&a);
  tkb__flags_free(&tkb__command_check, &a, &a.sel);
  return rc;
}

const tkb__command tkb__command_check = {
    .name = CMD,
    .summary = "Check the numerics of every implementation against the reference",
    .handler = tkb__cli_check,
    .usage = "[flags]",
    .about = "Runs every selected implementation once against its op's 'reference' entry "
             "(same spec and mode) on the same random inputs, and compares each output with "
             "Tokamax's diff summary: the largest absolute difference with the two values "
             "there, the percentage of elements close (|a - e| <= atol + rtol |e|), allclose, "
             "the l2 norm of the difference (and relative to the reference's), and NaN/Inf "
             "counts. The references run on the cpu, whatever --device says.",
    .selection = TKB__SELECT_ALL,
    .default_tag = true,
    .flags = check_flags,
    .epilogue = "Prints PASS or FAIL per entry and ends with 'N passed, N failed'. Entries "
                "whose op has no reference for that spec and mode are skipped.\n"
                "Exit status: 0 all passed, 1 a failure, 2 a usage error, 128 + the signal when "
                "stopped by one (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).",
    .positional = " (entries are chosen with --filter REGEX)",
};
