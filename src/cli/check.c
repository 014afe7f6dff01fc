/*
 * check.c - `tkbench check`: the numerics of every selected implementation against its
 * op's reference on fresh random inputs (tkb_check_entry), with Tokamax's diff summary
 * per output, PASS/FAIL per entry and a final count. Exit 1 when anything fails. It
 * selects entries as list and run do (the same flags and default tag), less the
 * references themselves.
 */
#include "cli.h"

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

static void print_output(const tkb_check_output *o) {
  const tkb_diff_summary *d = &o->diff;
  char spec[128], at[128] = "-";
  tkb_spec_format(&o->spec, spec, sizeof spec);
  if (d->numel > 0) format_index(&o->spec, d->max_abs_diff_index, at, sizeof at);
  printf("    %-6s %-22s max|diff| %.3g at %s (actual %.9g, expected %.9g)  close %.2f%%  "
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
    {0},
};

extern const tkb__command tkb__command_check;

/* Checks entries idx[0..n), printing as each finishes; returns how many failed. */
static int check_all(const size_t *idx, size_t n, const tkb_check_opts *opts) {
  int passed = 0, failed = 0, skipped = 0;
  tkb__progress progress;
  tkb__progress_begin(&progress, stderr, isatty(fileno(stderr)) != 0, n);
  for (size_t k = 0; k < n; k++) {
    const char *name = tkb_registry_full_name(idx[k]);
    tkb__progress_show(&progress, k, name);
    tkb_check_result *r = NULL;
    tkb_status st = tkb_check_entry(idx[k], opts, &r);
    tkb__progress_clear(&progress);
    if (st == TKB_ERR_NOT_FOUND) {
      printf("SKIP %s\n", tkb_last_error()); /* names the entry and what is missing */
      skipped++;
    } else if (st) {
      printf("FAIL %s: %s: %s\n", name, tkb_status_name(st), tkb_last_error());
      failed++;
    } else {
      printf("%s %s (against %s)\n", r->passed ? "PASS" : "FAIL", name, r->reference_name);
      for (int o = 0; o < r->n_outputs; o++) print_output(&r->outputs[o]);
      if (r->passed) passed++;
      else failed++;
    }
    fflush(stdout);
    tkb_check_result_free(r);
  }
  if (skipped) printf("%d skipped (no reference entry for their spec and mode)\n", skipped);
  printf("%d passed, %d failed\n", passed, failed);
  return failed;
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
  tkb_device *dev;
  if (tkb_device_get(a->sel.device, &dev) != TKB_OK)
    return tkb__usage(CMD, "--device: %s", tkb_last_error());
  if (tkb__load_plugins(CMD, &a->sel.loads)) return TKB_EXIT_USAGE;
  size_t *idx = NULL, n = 0;
  /* the references are what the others are checked against */
  tkb__shard_info shard;
  if (tkb__select_entries(&tkb__command_check, &a->sel, "reference", &idx, &n, &shard))
    return TKB_EXIT_USAGE;
  tkb__shard_note(CMD, &shard);
  if (tkb__cpu_isa_warning()[0]) fprintf(stderr, "%s: warning: %s\n", tkb__prog, tkb__cpu_isa_warning());
  int failed = check_all(idx, n, &opts);
  free(idx);
  return failed ? TKB_EXIT_FAILED : TKB_EXIT_OK;
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
                "Exit status: 0 all passed, 1 a failure, 2 a usage error.",
    .positional = " (entries are chosen with --filter REGEX)",
};
