/* list.c - `tkbench list`: the selected entries as an aligned table; --verbose adds
 * each entry's argument specs, static arguments and work per call, found by
 * standardizing with no_init (shapes only: nothing is allocated or run). */
#include "cli.h"

#include <stddef.h>
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

typedef struct list_args {
  tkb__select_args sel;
  bool verbose;
} list_args;

static const tkb__flag list_flags[] = {
    {.heading = "Output:"},
    {.name = "--verbose", .kind = TKB__FLAG_SWITCH, .offset = offsetof(list_args, verbose),
     .help = "Also each entry's argument shapes and dtypes, static arguments and work per "
             "call."},
    {0},
};

extern const tkb__command tkb__command_list;

/* Rows under construction: cells copied and padded by hand, since printf's parsing and
 * padding of five cells was most of listing thousands of entries, and written out 64 KiB
 * at a time rather than a stdio buffer's 4 KiB. */
typedef struct line {
  char text[64 * 1024];
  size_t len;
} line;

/* A row is at most this long: a longer name or tags are cut. */
#define MAX_ROW 2048

static void flush(line *l) {
  fwrite(l->text, 1, l->len, stdout);
  l->len = 0;
}

/* Appends s (n bytes) padded with spaces to width w (not cut when longer). */
static void cell_n(line *l, const char *s, size_t n, int w) {
  if (n > sizeof l->text - 1 - l->len) n = sizeof l->text - 1 - l->len;
  memcpy(l->text + l->len, s, n);
  l->len += n;
  size_t pad = (int)n < w ? (size_t)w - n : 0;
  if (pad > sizeof l->text - 1 - l->len) pad = sizeof l->text - 1 - l->len;
  memset(l->text + l->len, ' ', pad);
  l->len += pad;
}

static void cell(line *l, const char *s, int w) { cell_n(l, s, strlen(s), w); }

/* strlen(s), or *len when s is *last (entries share their op, impl and mode strings). */
static int len_of(const char *s, const char **last, int *len) {
  if (s != *last) {
    *last = s;
    *len = (int)strlen(s);
  }
  return *len;
}

static void print_table(const size_t *idx, size_t n, bool verbose) {
  int wn = 4, wo = 2, wi = 4, wm = 4;
  int *name_len = malloc((n ? n : 1) * sizeof *name_len);
  const char *last[3] = {NULL, NULL, NULL};
  int len[3] = {0, 0, 0};
  for (size_t k = 0; k < n; k++) {
    const tkb_benchmark_def *d = tkb_registry_get(idx[k]);
    const int ln = (int)strlen(tkb_registry_full_name(idx[k]));
    if (name_len) name_len[k] = ln;
    wn = max_int(wn, ln);
    wo = max_int(wo, len_of(d->op, &last[0], &len[0]));
    wi = max_int(wi, len_of(d->impl_name, &last[1], &len[1]));
    wm = max_int(wm, len_of(tkb_mode_name(d->mode), &last[2], &len[2]));
  }
  if (wn > MAX_NAME_COLUMN) wn = MAX_NAME_COLUMN;
  printf("%-*s  %-*s  %-*s  %-*s  %s\n", wn, "Name", wo, "Op", wi, "Impl", wm, "Mode", "Tags");
  line *rows = malloc(sizeof *rows);
  if (!rows) {
    free(name_len);
    fprintf(stderr, "%s %s: out of memory\n", tkb__prog, CMD);
    return;
  }
  rows->len = 0;
  for (size_t k = 0; k < n; k++) {
    const tkb_benchmark_def *d = tkb_registry_get(idx[k]);
    const char *name = tkb_registry_full_name(idx[k]);
    const size_t ln = name_len ? (size_t)name_len[k] : strlen(name);
    if (rows->len > sizeof rows->text - MAX_ROW) flush(rows);
    const size_t row = rows->len;
    if ((int)ln > wn) {
      cell_n(rows, name, ln, 0);
      rows->text[rows->len++] = '\n';
      cell(rows, "", wn);
    } else {
      cell_n(rows, name, ln, wn);
    }
    cell(rows, "  ", 0);
    cell_n(rows, d->op, (size_t)len_of(d->op, &last[0], &len[0]), wo + 2);
    cell_n(rows, d->impl_name, (size_t)len_of(d->impl_name, &last[1], &len[1]), wi + 2);
    cell_n(rows, tkb_mode_name(d->mode), (size_t)len_of(tkb_mode_name(d->mode), &last[2], &len[2]), wm + 2);
    cell(rows, *d->tags ? d->tags : "-", 0);
    if (rows->len > row + MAX_ROW - 1) rows->len = row + MAX_ROW - 1;
    rows->text[rows->len++] = '\n';
    if (verbose) {
      flush(rows);
      details(idx[k]);
    }
  }
  flush(rows);
  free(rows);
  free(name_len);
  if (n == tkb_registry_count()) printf("\n%zu entr%s\n", n, n == 1 ? "y" : "ies");
  else printf("\n%zu of %zu entries\n", n, tkb_registry_count());
}

static int list(list_args *a) {
  size_t *idx = NULL, n = 0;
  if (tkb__load_plugins(CMD, &a->sel, TKB__DEFAULT_TIMEOUT_S)) return TKB_EXIT_USAGE;
  if (tkb__select_entries(&tkb__command_list, &a->sel, NULL, &idx, &n, NULL)) return TKB_EXIT_USAGE;
  print_table(idx, n, a->verbose);
  free(idx);
  return TKB_EXIT_OK;
}

static int list_main(int argc, char **argv) {
  list_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_list, argc, argv, &a, &a.sel);
  if (rc == TKB__PARSED) rc = list(&a);
  tkb__flags_free(&tkb__command_list, &a, &a.sel);
  return rc;
}

const tkb__command tkb__command_list = {
    .name = CMD,
    .summary = "List the registered benchmark entries",
    .handler = list_main,
    .usage = "[flags]",
    .about = "Lists the registered entries: full name ({spec}_{mode}_{impl}), op, impl, mode "
             "and tags. With no flags, every entry.",
    .selection = TKB__SELECT_ALL & ~TKB__SELECT_DEVICE & ~TKB__SELECT_SHARD,
    .flags = list_flags,
    .epilogue = "Exit status: 0, or 2 on a usage error or when nothing matches.",
    .positional = " (entries are chosen with --filter REGEX)",
};
