/* console.c - the table people read, streamed: a header saying what ran where (and what
 * about the machine makes every number doubtful), then one aligned row per entry as it
 * finishes, with its median CPU time and the median's 95% interval beside it, its
 * counters, and a line of warnings under an entry that has any (a failed entry says
 * FAILED and why, a skipped one SKIPPED and why), then a summary. The warnings about the machine (load, crowded
 * OpenMP threads) are counted and said once at the end rather than under each entry.
 * Colour only when the reporter's color is set (the CLI decides: a terminal and no
 * NO_COLOR). */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BOLD "\033[1m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define GREEN "\033[32m"
#define RESET "\033[0m"

/* A relative spread above this is flagged: results that noisy deserve a second look. */
#define NOISY_STDDEV_OVER_MEDIAN 0.10

static const char *c(const tkb__reporter *r, const char *code) { return r->color ? code : ""; }

/* The name column fits the longest name up to this; a longer name gets a line of its
 * own and its numbers go on the next, so the columns stay aligned on any terminal. */
#define MAX_NAME_COLUMN 48

static int name_width(const tkb__report_ctx *ctx) {
  int w = ctx->name_width > 9 ? ctx->name_width : 9;
  return w < MAX_NAME_COLUMN ? w : MAX_NAME_COLUMN;
}

/* Prints the name padded to the column, or alone on its line when it does not fit. */
static void name_cell(FILE *f, const char *name, int w) {
  if ((int)strlen(name) > w) fprintf(f, "%s\n%-*s", name, w, "");
  else fprintf(f, "%-*s", w, name);
}

/* The machine warnings seen under the entries, by kind, for the summary; and, with
 * counters as columns, the names of the columns the titles last showed. */
/* The summary names this many entries whose interval did not converge, the widest
 * first, then counts the others. */
#define LISTED_UNCONVERGED 24

typedef struct unconverged {
  double width;           /* the interval's larger half-width (INFINITY: none) */
  char text[200];         /* "name  +-3.1%" */
} unconverged;

typedef struct console_state {
  size_t entries_with[2]; /* "load", "threads" */
  char last[2][400];
  size_t n_unconverged;
  unconverged unconverged[LISTED_UNCONVERGED]; /* the widest so far */
  char columns[TKB_MAX_COUNTERS * 64];
  bool titled;            /* the column titles are out */
} console_state;

/* Counter columns' width: a name or a value, whichever is wider, at least this. */
#define COUNTER_COLUMN 10

/* Counter k of a result: its own first, then the perf events. */
static const tkb_counter *counter(const tkb__result *res, int k) {
  return k < res->n_counters ? &res->counters[k] : &res->bd->counters[k - res->n_counters];
}

static int n_counters(const tkb__result *res) {
  return res->bd ? res->n_counters + res->bd->n_counters : 0;
}

static int max_i(int a, int b) { return a > b ? a : b; }

/* The column titles and the rule under them, with a column per counter of res (NULL:
 * none). */
static void titles(const tkb__reporter *r, const tkb__result *res) {
  FILE *f = r->f;
  int w = name_width(r->ctx);
  fprintf(f, "%s%-*s  %9s  %9s  %7s  %9s  %9s  %6s  %9s  %8s  %8s  %6s  %6s  %-7s", c(r, BOLD), w, "Benchmark",
          "Median", "CPU", "95% CI", "Min", "Max", "SD/Med", "Items/s", "GB/s", "GFLOP/s", "BW%", "FLOP%",
          "Bound");
  int total = w + 2 + 9 + 2 + 9 + 2 + 7 + 2 + 9 + 2 + 9 + 2 + 6 + 2 + 9 + 2 + 8 + 2 + 8 + 2 + 6 + 2 + 6 + 2 + 7;
  for (int k = 0; res && k < n_counters(res); k++) {
    const int cw = max_i(COUNTER_COLUMN, (int)strlen(counter(res, k)->name));
    fprintf(f, "  %*s", cw, counter(res, k)->name);
    total += 2 + cw;
  }
  fprintf(f, "%s\n", c(r, RESET));
  for (int i = 0; i < total; i++) fputc('-', f);
  fputc('\n', f);
}

/* "a,b,c": the names of res's counters, to tell when the columns change. */
static void column_names(const tkb__result *res, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int k = 0; k < n_counters(res) && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? "," : "", counter(res, k)->name);
}

/* "stop ci:max_noise=0.01,...   experiments >= 3", or the fixed counts. */
static void describe_stop(FILE *f, const tkb__report_ctx *ctx) {
  if (strncmp(ctx->stop, "fixed", 5) == 0) {
    fprintf(f, "%d iteration%s x %d experiment%s", ctx->iterations, ctx->iterations == 1 ? "" : "s",
            ctx->experiments, ctx->experiments == 1 ? "" : "s");
    return;
  }
  fprintf(f, "stop %s   experiments >= %d", ctx->stop, ctx->experiments);
}

/* The time budget, said up front: how long the run will take and how it is spent. */
static void describe_budget(FILE *f, const tkb__report_ctx *ctx) {
  if (!(ctx->budget_s > 0)) return;
  const size_t n = ctx->budget_entries;
  fprintf(f, "budget  %g s for the %zu selected entr%s", ctx->budget_s, n, n == 1 ? "y" : "ies");
  if (ctx->interleave)
    fprintf(f, ": %.3g s of experiments each", ctx->budget_s / (double)(n ? n : 1));
  else
    fputs(": each an even share of what is left as its max_time, then what the first two thirds "
          "leave for the widest intervals", f);
  fprintf(f, "%s\n", ctx->budget_default ? " (the default; --budget 0: none)" : "");
}

/* The peaks the BW% and FLOP% columns are of, and where they come from. */
static void describe_peaks(FILE *f, const tkb__report_ctx *ctx) {
  if (!ctx->have_peaks) return;
  const tkb__peaks *p = &ctx->peaks;
  fprintf(f, "peaks   copy %.3g GB/s", p->copy_gbs);
  if (p->sgemm_gflops > 0) fprintf(f, ", sgemm %.3g GFLOP/s (float32, bfloat16, float16)", p->sgemm_gflops);
  if (p->dgemm_gflops > 0) fprintf(f, ", dgemm %.3g GFLOP/s (float64)", p->dgemm_gflops);
  fprintf(f, "; measured %s", ctx->peaks_date[0] ? ctx->peaks_date : "now");
  if (ctx->peaks_load > ctx->host.num_cpus)
    fprintf(f, " at load %.1f on %d cores (other work held the cores: they may be low)", ctx->peaks_load,
            ctx->host.num_cpus);
  if (ctx->peaks_cache) fprintf(f, ", cached in %s", ctx->peaks_cache);
  fputs(" ('info --peaks' measures them again)\n", f);
}

static tkb_status begin(tkb__reporter *r) {
  const tkb__report_ctx *ctx = r->ctx;
  FILE *f = r->f;
  fprintf(f, "%stkbench %s%s (%s)   %s\n", c(r, BOLD), tkb_version(), c(r, RESET),
          tkb_build_type(), ctx->date);
  fprintf(f, "device  %s: %s", ctx->device, ctx->device_description);
  if (strcmp(ctx->device, "cpu") == 0) fprintf(f, "; cpu kernels %s", tkb_cpu_isa());
  fputc('\n', f);
  if (strcmp(ctx->device, "cpu") != 0)
    fprintf(f, "host    %s, %d cores\n", ctx->host.cpu_model, ctx->host.num_cpus);
  fprintf(f, "method  %s   seed %llu   ", ctx->method, (unsigned long long)ctx->seed);
  describe_stop(f, ctx);
  fprintf(f, "   warm-up %s", ctx->warmup_once ? "once per experiment" : "before each call");
  if (ctx->interval_ms > 0) fprintf(f, "   interval %g ms", ctx->interval_ms);
  if (ctx->interval_busy > 0) fprintf(f, "   %s%g%% of the experiment before", ctx->interval_ms > 0 ? "+ " : "interval ",
                                      100 * ctx->interval_busy);
  if (ctx->interleave) fputs("   interleaved", f);
  fputc('\n', f);
  if (ctx->count_source)
    fprintf(f, "values  instructions per call, counted by %s (not times: the CPU column is "
            "empty)\n", ctx->count_source);
  describe_budget(f, ctx);
  describe_peaks(f, ctx);
  for (size_t i = 0; i < ctx->n_context; i++) fprintf(f, "context %s\n", ctx->context[i]);
  for (int i = 0; i < ctx->n_warnings; i++)
    fprintf(f, "%swarning%s %s\n", c(r, YELLOW), c(r, RESET), ctx->warnings[i].text);
  fputc('\n', f);
  /* with counters as columns, the titles wait for the first entry's counters */
  if (!ctx->counters_tabular) titles(r, NULL);
  ((console_state *)r->state)->titled = !ctx->counters_tabular;
  return TKB_OK;
}

/* Keeps the LISTED_UNCONVERGED widest intervals that did not converge. */
static void note_unconverged(console_state *st, const char *name, double width, const char *ci) {
  const double w = isfinite(width) ? width : INFINITY;
  size_t slot = st->n_unconverged++;
  if (slot >= LISTED_UNCONVERGED) { /* full: replace the narrowest, if this one is wider */
    slot = 0;
    for (size_t i = 1; i < LISTED_UNCONVERGED; i++)
      if (st->unconverged[i].width < st->unconverged[slot].width) slot = i;
    if (!(w > st->unconverged[slot].width)) return;
  }
  st->unconverged[slot].width = w;
  snprintf(st->unconverged[slot].text, sizeof st->unconverged[slot].text, "%s  %s", name,
           strcmp(ci, "-") ? ci : "no interval");
}

static int wider_first(const void *a, const void *b) {
  const double x = ((const unconverged *)a)->width, y = ((const unconverged *)b)->width;
  return x > y ? -1 : x < y;
}

static void entry(tkb__reporter *r, const tkb__result *res) {
  FILE *f = r->f;
  int w = name_width(r->ctx);
  console_state *st = r->state;
  if (r->ctx->counters_tabular) { /* new columns: their titles first, as Google Benchmark does */
    char names[sizeof st->columns];
    column_names(res, names, sizeof names);
    if (!st->titled || (res->bd && strcmp(names, st->columns) != 0)) {
      snprintf(st->columns, sizeof st->columns, "%s", names);
      if (st->titled) fputc('\n', f);
      titles(r, res->bd ? res : NULL);
      st->titled = true;
    }
  }
  if (res->skipped) {
    name_cell(f, res->name, w);
    fprintf(f, "  %sSKIPPED %s%s\n", c(r, YELLOW), res->error ? res->error : "", c(r, RESET));
    return;
  }
  if (!res->bd) {
    name_cell(f, res->name, w);
    fprintf(f, "  %sFAILED %s: %s%s\n", c(r, RED), tkb_status_name(res->status),
            res->error ? res->error : "", c(r, RESET));
    return;
  }
  const tkb_benchmark_data *bd = res->bd;
  tkb__cells cl;
  tkb__format_cells(res, &cl);
  char cpu[24];
  tkb__fmt_time(bd->cpu_median_ms, cpu, sizeof cpu);
  if (tkb__counted(bd)) snprintf(cpu, sizeof cpu, "%9s", "-"); /* a count has no CPU time */
  else if (r->ctx->time_unit) {
    tkb__fmt_time_in(bd->cpu_median_ms, r->ctx->time_unit, cpu, sizeof cpu);
    tkb__fmt_time_in(bd->median_evaluation_time_ms, r->ctx->time_unit, cl.median, sizeof cl.median);
    tkb__fmt_time_in(bd->min_ms, r->ctx->time_unit, cl.min, sizeof cl.min);
    tkb__fmt_time_in(bd->max_ms, r->ctx->time_unit, cl.max, sizeof cl.max);
  }

  bool noisy = bd->stddev_over_median > NOISY_STDDEV_OVER_MEDIAN;
  const bool wide = !bd->converged || !(tkb__ci_halfwidth(bd) <= 0.05);
  if (!bd->converged) note_unconverged(st, res->name, tkb__ci_halfwidth(bd), cl.ci);
  tkb__peak_share ps;
  tkb__peak_share_of(r->ctx->have_peaks ? &r->ctx->peaks : NULL, res, &ps);
  char bw[16], fl[16];
  tkb__fmt_pct(ps.bandwidth_pct, bw, sizeof bw);
  tkb__fmt_pct(ps.flops_pct, fl, sizeof fl);
  name_cell(f, res->name, w);
  fprintf(f, "  %9s  %9s  %s%7s%s  %9s  %9s  %s%6s%s  %9s  %8s  %8s  %6s  %6s  %-7s", cl.median, cpu,
          wide ? c(r, YELLOW) : "", cl.ci, wide ? c(r, RESET) : "", cl.min, cl.max, noisy ? c(r, YELLOW) : "",
          cl.spread, noisy ? c(r, RESET) : "", cl.items, cl.gbs, cl.gflops, bw, fl, ps.bound ? ps.bound : "-");
  for (int k = 0; k < n_counters(res); k++) { /* columns, or name=value as Google Benchmark */
    const tkb_counter *ck = counter(res, k);
    char v[32];
    tkb__fmt_counter(ck, tkb__counter_value(res, ck, -1), v, sizeof v);
    if (r->ctx->counters_tabular) fprintf(f, "  %*s", max_i(COUNTER_COLUMN, (int)strlen(ck->name)), v);
    else fprintf(f, "  %s=%s", ck->name, v);
  }
  fputc('\n', f);
  /* the entry's own warnings on one line under it; the machine's for the summary */
  bool any = false;
  for (int i = 0; i < bd->n_warnings; i++) {
    const tkb_warning *wn = &bd->warnings[i];
    if (tkb__machine_warning(wn)) {
      const int k = strcmp(wn->kind, "load") == 0 ? 0 : 1;
      st->entries_with[k]++;
      snprintf(st->last[k], sizeof st->last[k], "%s", wn->text);
      continue;
    }
    fprintf(f, "%s%s%s", any ? "; " : "", any ? "" : c(r, YELLOW), any ? "" : "  ^ ");
    fputs(wn->text, f);
    any = true;
  }
  if (any) fprintf(f, "%s\n", c(r, RESET));
}

static tkb_status end(tkb__reporter *r, const tkb__run_summary *s) {
  FILE *f = r->f;
  size_t n = r->n_entries;
  fputc('\n', f);
  fprintf(f, "%zu entr%s in %.1f s", n, n == 1 ? "y" : "ies", s->wall_s);
  if (r->ctx->budget_s > 0) fprintf(f, " (budget %g s)", r->ctx->budget_s);
  if (r->n_failed) fprintf(f, ", %s%zu failed%s", c(r, RED), r->n_failed, c(r, RESET));
  else if (n > r->n_skipped) fprintf(f, ", %sall ok%s", c(r, GREEN), c(r, RESET));
  if (r->n_skipped) fprintf(f, ", %s%zu skipped%s", c(r, YELLOW), r->n_skipped, c(r, RESET));
  fputc('\n', f);
  if (s->interrupted)
    fprintf(f, "%sinterrupted: %zu of %zu selected entries ran; the results cover those%s\n",
            c(r, YELLOW), n, s->n_selected, c(r, RESET));
  console_state *st = r->state;
  if (s->second_pass)
    fprintf(f, "second pass: %zu entr%s ran again on the budget's time left, %zu with a narrower "
               "interval (kept)\n", s->second_pass, s->second_pass == 1 ? "y" : "ies", s->narrowed);
  if (st->n_unconverged) {
    fprintf(f, "%snot converged%s (%zu of %zu: the interval the rule asks for was not reached in "
               "the time it had), the widest first:\n", c(r, YELLOW), c(r, RESET), st->n_unconverged, n);
    const size_t listed = st->n_unconverged < LISTED_UNCONVERGED ? st->n_unconverged : LISTED_UNCONVERGED;
    qsort(st->unconverged, listed, sizeof *st->unconverged, wider_first);
    for (size_t i = 0; i < listed; i++) fprintf(f, "  %s\n", st->unconverged[i].text);
    if (st->n_unconverged > LISTED_UNCONVERGED)
      fprintf(f, "  ... and %zu more (converged: false in the JSON)\n", st->n_unconverged - LISTED_UNCONVERGED);
  }
  for (int k = 0; k < 2; k++)
    if (st->entries_with[k])
      fprintf(f, "%swarning%s during %zu of %zu entries, e.g. the last: %s\n", c(r, YELLOW), c(r, RESET),
              st->entries_with[k], n, st->last[k]);
  return TKB_OK;
}

const tkb__reporter_ops tkb__console_reporter = {
    .state_size = sizeof(console_state), .begin = begin, .entry = entry, .end = end};
