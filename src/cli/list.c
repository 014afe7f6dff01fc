/* list.c - `tkbench list`: the registered entries as an aligned table; --verbose adds
 * each entry's argument specs, static arguments and work per call, found by
 * standardizing with no_init (shapes only: nothing is allocated or run). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define CMD "list"

/* A longer name gets a line of its own, keeping the other columns aligned. */
#define MAX_NAME_COLUMN 48

static int max_int(int a, int b) { return a > b ? a : b; }

/* "2.359 MB", "4.719 MFLOP": an SI prefix glued to the unit. */
static void work(double v, const char *unit, bool *first) {
  if (v <= 0) return;
  char num[32];
  tkb__fmt_si(v, num, sizeof num);
  printf("%s%s%s%s", *first ? "" : ", ", num, strchr(num, ' ') ? "" : " ", unit);
  *first = false;
}

static void details(size_t entry) {
  const tkb_benchmark_def *d = tkb_registry_get(entry);
  const tkb_value *args = d->args;
  const tkb_kwarg *kwargs = d->kwargs;
  size_t na = d->n_args, nk = d->n_kwargs;
  tkb_status st = TKB_OK;
  if (d->factory) st = d->factory(d->user, &args, &na, &kwargs, &nk);
  tkb_std_fn *f = NULL;
  tkb_arrays *specs = NULL;
  /* Forward mode shows the call's own arguments, whatever mode the entry times. */
  tkb_std_opts o = {.mode = TKB_MODE_FORWARD, .no_init = true};
  if (!st) st = tkb_standardize_function(d->fn, args, na, kwargs, nk, &o, &f, &specs);
  if (st) {
    printf("    error   %s: %s\n", tkb_status_name(st), tkb_last_error());
    return;
  }
  printf("    args    ");
  for (size_t k = 0; k < tkb_arrays_count(specs); k++) {
    char spec[128];
    tkb_spec_format(&tkb_arrays_get(specs, k)->spec, spec, sizeof spec);
    printf("%s%s: %s", k ? ", " : "", tkb_arrays_name(specs, k), spec);
  }
  const char *statics = tkb_std_fn_statics(f);
  printf("\n    static  %s\n", statics && *statics ? statics : "(none)");
  tkb_counts c;
  if (tkb_registry_counts(entry, &c) == TKB_OK && (c.items > 0 || c.bytes > 0 || c.flops > 0)) {
    bool first = true;
    printf("    work    ");
    if (c.items > 0) {
      printf("%.0f items", c.items);
      first = false;
    }
    work(c.bytes, "B", &first);
    work(c.flops, "FLOP", &first);
    printf(" per call\n");
  }
  printf("    device  %s\n", d->device_kind);
  tkb_std_fn_free(f);
  tkb_arrays_free(specs);
}

int tkb__cli_list(int argc, char **argv) {
  const char *filter = NULL;
  tkb__strlist tags = {0}, loads = {0};
  bool verbose = false;
  int rc = -1;
  for (int i = 1; i < argc && rc < 0; i++) {
    const char *v;
    int m;
    bool on;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      tkb__help_command(stdout, CMD);
      rc = TKB_EXIT_OK;
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--filter", &v)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else filter = v;
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--tag", &v)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else if (tkb__strlist_add(&tags, v, true)) rc = tkb__usage(CMD, "--tag given too many times");
    } else if ((m = tkb__flag(CMD, argc, argv, &i, "--load", &v)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else if (tkb__strlist_add(&loads, v, false)) rc = tkb__usage(CMD, "--load given too many times");
    } else if ((m = tkb__switch(CMD, argv, i, "--verbose", &on)) != 0) {
      if (m < 0) rc = TKB_EXIT_USAGE;
      else verbose = on;
    } else if (argv[i][0] == '-') {
      rc = tkb__usage(CMD, "unknown flag '%s'", argv[i]);
    } else {
      rc = tkb__usage(CMD, "unexpected argument '%s' (entries are chosen with --filter REGEX)", argv[i]);
    }
  }
  size_t *idx = NULL, n = 0;
  if (rc < 0 && tkb__load_plugins(CMD, &loads)) rc = TKB_EXIT_USAGE;
  if (rc < 0) {
    tkb__selection sel = {.filter = filter, .tags = tags.items, .n_tags = tags.n};
    if (tkb__select(&sel, &idx, &n) != TKB_OK) rc = tkb__usage(CMD, "--filter: %s", tkb_last_error());
    else if (n == 0 && tkb_registry_count() == 0) rc = tkb__usage(CMD, "no entries are registered");
    else if (n == 0) rc = tkb__usage(CMD, "no entry matches%s%s%s%s (%zu entries registered)",
                                     filter ? " --filter '" : "", filter ? filter : "",
                                     filter ? "'" : "", tags.n ? " the --tag given" : "",
                                     tkb_registry_count());
  }
  if (rc < 0) {
    int wn = 4, wo = 2, wi = 4, wm = 4;
    for (size_t k = 0; k < n; k++) {
      const tkb_benchmark_def *d = tkb_registry_get(idx[k]);
      wn = max_int(wn, (int)strlen(tkb_registry_full_name(idx[k])));
      wo = max_int(wo, (int)strlen(d->op));
      wi = max_int(wi, (int)strlen(d->impl_name));
      wm = max_int(wm, (int)strlen(tkb_mode_name(d->mode)));
    }
    if (wn > MAX_NAME_COLUMN) wn = MAX_NAME_COLUMN;
    printf("%-*s  %-*s  %-*s  %-*s  %s\n", wn, "Name", wo, "Op", wi, "Impl", wm, "Mode", "Tags");
    for (size_t k = 0; k < n; k++) {
      const tkb_benchmark_def *d = tkb_registry_get(idx[k]);
      const char *name = tkb_registry_full_name(idx[k]);
      if ((int)strlen(name) > wn) printf("%s\n%-*s", name, wn, "");
      else printf("%-*s", wn, name);
      printf("  %-*s  %-*s  %-*s  %s\n", wo, d->op, wi, d->impl_name, wm, tkb_mode_name(d->mode),
             *d->tags ? d->tags : "-");
      if (verbose) details(idx[k]);
    }
    if (n == tkb_registry_count()) printf("\n%zu entr%s\n", n, n == 1 ? "y" : "ies");
    else printf("\n%zu of %zu entries\n", n, tkb_registry_count());
    rc = TKB_EXIT_OK;
  }
  free(idx);
  tkb__strlist_free(&tags);
  tkb__strlist_free(&loads);
  return rc;
}
