/*
 * check.c - `tkbench check`: the numerics of every selected implementation against its
 * op's reference on fresh random inputs (tkb_check_entry), with Tokamax's diff summary
 * per output, PASS/FAIL per entry and a final count. Exit 1 when anything fails.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "check"

static void help(FILE *f) {
  fprintf(f,
          "Usage: %s check [--filter REGEX] [--tag TAG]... [--mode MODE]... [--device DEV]\n"
          "                [--seed N] [--rtol R --atol A] [--load PLUGIN]...\n"
          "\n"
          "Runs every selected implementation once against its op's 'reference' entry (same\n"
          "spec and mode) on the same random inputs, and compares each output with Tokamax's\n"
          "diff summary: the largest absolute difference with the two values there, the\n"
          "percentage of elements close (|a - e| <= atol + rtol |e|), allclose, the l2 norm\n"
          "of the difference (and relative to the reference's), and NaN/Inf counts.\n"
          "\n"
          "  --filter REGEX  entries whose full name matches (POSIX extended; a leading '-'\n"
          "                  keeps those that do not)\n"
          "  --tag TAG       entries carrying every tag given (repeatable, or a,b). With\n"
          "                  neither --filter nor --tag: tag '" TKB__DEFAULT_TAG "' on every device\n"
          "  --mode MODE     forward, forward_res, vjp, forward_and_vjp (repeatable); default\n"
          "                  every mode\n"
          "  --device DEV    device of the implementations checked (default cpu); the\n"
          "                  reference runs on the cpu\n"
          "  --seed N        seed of the random inputs (default 0)\n"
          "  --rtol R, --atol A  fixed tolerances (atol absolute) for every output, instead\n"
          "                  of the per-dtype ones: float32 rtol 1e-4, bfloat16 1.6e-2,\n"
          "                  float16 2e-3, float64 1e-9, with atol a fraction of the\n"
          "                  reference output's largest magnitude (see tkbench.h)\n"
          "  --load PLUGIN   load a plugin's entries first (repeatable)\n"
          "\n"
          "Prints PASS or FAIL per entry and ends with 'N passed, N failed'. Entries whose op\n"
          "has no reference for that spec and mode are skipped. Exit status: 0 all passed,\n"
          "1 a failure, 2 a usage error.\n",
          tkb__prog);
}

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

int tkb__cli_check(int argc, char **argv) {
  const char *filter = NULL, *device = "cpu", *rtol_s = NULL, *atol_s = NULL;
  tkb__strlist tags = {0}, modes = {0}, loads = {0};
  uint64_t seed = 0;
  int rc = -1;
  for (int i = 1; i < argc && rc < 0; i++) {
    const char *v;
    int m;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      help(stdout);
      rc = TKB_EXIT_OK;
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--filter", &v)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else filter = v;
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--tag", &v)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else if (tkb__strlist_add(&tags, v, true))
        rc = tkb__usage(CMD, "--tag given too many times");
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--mode", &v)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else if (tkb__strlist_add(&modes, v, true))
        rc = tkb__usage(CMD, "--mode given too many times");
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--device", &v)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else device = v;
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--seed", &v)) != 0) {
      if (m < 0 || tkb__parse_u64(CMD, "--seed", v, &seed)) rc = TKB_EXIT_USAGE;
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--rtol", &v)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else rtol_s = v;
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--atol", &v)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else atol_s = v;
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--load", &v)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else if (tkb__strlist_add(&loads, v, false))
        rc = tkb__usage(CMD, "--load given too many times");
    } else if (argv[i][0] == '-') {
      rc = tkb__usage(CMD, "unknown flag '%s'", argv[i]);
    } else {
      rc = tkb__usage(CMD, "unexpected argument '%s' (entries are chosen with --filter REGEX)",
                      argv[i]);
    }
  }

  /* Everything that can be wrong on the command line is found before anything runs. */
  tkb_check_opts opts = {.seed = seed, .device = device};
  unsigned mode_bits = 0;
  for (size_t k = 0; rc < 0 && k < modes.n; k++) {
    tkb_mode md;
    if (tkb_mode_parse(modes.items[k], &md) != TKB_OK)
      rc = tkb__usage(CMD, "--mode: %s", tkb_last_error());
    else
      mode_bits |= 1u << md;
  }
  if (rc < 0 && (rtol_s || atol_s)) {
    bool ok_r = true, ok_a = true;
    opts.fixed_tolerance = true;
    opts.rtol = rtol_s ? parse_tol(rtol_s, &ok_r) : TKB_DIFF_RTOL_DEFAULT;
    opts.atol = atol_s ? parse_tol(atol_s, &ok_a) : TKB_DIFF_ATOL_DEFAULT;
    if (!ok_r) rc = tkb__usage(CMD, "--rtol '%s' is not a number >= 0", rtol_s);
    else if (!ok_a) rc = tkb__usage(CMD, "--atol '%s' is not a number >= 0", atol_s);
  }
  tkb_device *dev;
  if (rc < 0 && tkb_device_get(device, &dev) != TKB_OK)
    rc = tkb__usage(CMD, "--device: %s", tkb_last_error());
  if (rc < 0 && tkb__load_plugins(CMD, &loads)) rc = TKB_EXIT_USAGE;
  size_t *idx = NULL, n = 0;
  if (rc < 0) {
    char kind[32];
    tkb__device_kind(device, kind, sizeof kind);
    const char *default_tag[1] = {TKB__DEFAULT_TAG};
    const bool use_default = !filter && tags.n == 0;
    tkb__selection sel = {.filter = filter,
                          .tags = use_default ? default_tag : tags.items,
                          .n_tags = use_default ? 1 : tags.n,
                          .modes = mode_bits,
                          .device_kind = kind};
    if (tkb__select(&sel, &idx, &n) != TKB_OK)
      rc = tkb__usage(CMD, "--filter: %s", tkb_last_error());
    /* the references themselves are what the others are checked against */
    size_t kept = 0;
    for (size_t k = 0; k < n; k++)
      if (strcmp(tkb_registry_get(idx[k])->impl_name, "reference") != 0) idx[kept++] = idx[k];
    n = kept;
    if (rc < 0 && n == 0)
      rc = tkb__usage(CMD, "no implementation to check: no entry other than a reference "
                      "matches%s%s%s%s on device %s (%zu entries registered; '%s list' shows "
                      "them)",
                      filter ? " --filter '" : "", filter ? filter : "", filter ? "'" : "",
                      use_default ? " the default tag" : tags.n ? " the --tag given" : "",
                      device, tkb_registry_count(), tkb__prog);
  }

  if (rc < 0) {
    int passed = 0, failed = 0, skipped = 0;
    tkb__progress progress;
    tkb__progress_begin(&progress, stderr, isatty(fileno(stderr)) != 0, n);
    for (size_t k = 0; k < n; k++) {
      const char *name = tkb_registry_full_name(idx[k]);
      tkb__progress_show(&progress, k, name);
      tkb_check_result *r = NULL;
      tkb_status st = tkb_check_entry(idx[k], &opts, &r);
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
    rc = failed ? TKB_EXIT_FAILED : TKB_EXIT_OK;
  }
  free(idx);
  tkb__strlist_free(&tags);
  tkb__strlist_free(&modes);
  tkb__strlist_free(&loads);
  return rc;
}
