/* console.c - the table people read, streamed: a header saying what ran where (and what
 * about the machine makes every number doubtful), then one aligned row per entry as it
 * finishes, with the median's 95% interval beside it and a line of warnings under an
 * entry that has any (a failed entry says FAILED and why, a skipped one SKIPPED and why),
 * then a summary. The warnings about the machine (load, crowded
 * OpenMP threads) are counted and said once at the end rather than under each entry.
 * Colour only when the reporter's color is set (the CLI decides: a terminal and no
 * NO_COLOR). */
#include "report.h"

#include <math.h>
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

/* The machine warnings seen under the entries, by kind, for the summary. */
typedef struct console_state {
  size_t entries_with[2]; /* "load", "threads" */
  char last[2][400];
} console_state;

/* "stop ci:max_noise=0.01,...   experiments >= 3", or the fixed counts. */
static void describe_stop(FILE *f, const tkb__report_ctx *ctx) {
  if (strncmp(ctx->stop, "fixed", 5) == 0) {
    fprintf(f, "%d iteration%s x %d experiment%s", ctx->iterations, ctx->iterations == 1 ? "" : "s",
            ctx->experiments, ctx->experiments == 1 ? "" : "s");
    return;
  }
  fprintf(f, "stop %s   experiments >= %d", ctx->stop, ctx->experiments);
}

static tkb_status begin(tkb__reporter *r) {
  const tkb__report_ctx *ctx = r->ctx;
  FILE *f = r->f;
  fprintf(f, "%stkbench %s%s (%s)   %s\n", c(r, BOLD), tkb_version(), c(r, RESET),
          tkb_build_type(), ctx->date);
  fprintf(f, "device  %s: %s\n", ctx->device, ctx->device_description);
  if (strcmp(ctx->device, "cpu") != 0)
    fprintf(f, "host    %s, %d cores\n", ctx->host.cpu_model, ctx->host.num_cpus);
  fprintf(f, "method  %s   seed %llu   ", ctx->method, (unsigned long long)ctx->seed);
  describe_stop(f, ctx);
  fprintf(f, "   warm-up %s", ctx->warmup_once ? "once per experiment" : "before each call");
  if (ctx->interval_ms > 0) fprintf(f, "   interval %g ms", ctx->interval_ms);
  if (ctx->interleave) fputs("   interleaved", f);
  fputc('\n', f);
  for (int i = 0; i < ctx->n_warnings; i++)
    fprintf(f, "%swarning%s %s\n", c(r, YELLOW), c(r, RESET), ctx->warnings[i].text);
  fputc('\n', f);
  /* the column titles */
  int w = name_width(ctx);
  fprintf(f, "%s%-*s  %9s  %7s  %9s  %9s  %6s  %9s  %8s  %8s%s\n", c(r, BOLD), w, "Benchmark",
          "Median", "95% CI", "Min", "Max", "SD/Med", "Items/s", "GB/s", "GFLOP/s", c(r, RESET));
  int total = w + 2 + 9 + 2 + 7 + 2 + 9 + 2 + 9 + 2 + 6 + 2 + 9 + 2 + 8 + 2 + 8;
  for (int i = 0; i < total; i++) fputc('-', f);
  fputc('\n', f);
  return TKB_OK;
}

static void entry(tkb__reporter *r, const tkb__result *res) {
  FILE *f = r->f;
  int w = name_width(r->ctx);
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
  bool noisy = bd->stddev_over_median > NOISY_STDDEV_OVER_MEDIAN;
  const bool wide = !bd->converged || !(tkb__ci_halfwidth(bd) <= 0.05);
  name_cell(f, res->name, w);
  fprintf(f, "  %9s  %s%7s%s  %9s  %9s  %s%6s%s  %9s  %8s  %8s\n", cl.median, wide ? c(r, YELLOW) : "",
          cl.ci, wide ? c(r, RESET) : "", cl.min, cl.max, noisy ? c(r, YELLOW) : "", cl.spread,
          noisy ? c(r, RESET) : "", cl.items, cl.gbs, cl.gflops);
  /* the entry's own warnings on one line under it; the machine's for the summary */
  console_state *st = r->state;
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
  if (r->n_failed) fprintf(f, ", %s%zu failed%s", c(r, RED), r->n_failed, c(r, RESET));
  else if (n > r->n_skipped) fprintf(f, ", %sall ok%s", c(r, GREEN), c(r, RESET));
  if (r->n_skipped) fprintf(f, ", %s%zu skipped%s", c(r, YELLOW), r->n_skipped, c(r, RESET));
  fputc('\n', f);
  if (s->interrupted)
    fprintf(f, "%sinterrupted: %zu of %zu selected entries ran; the results cover those%s\n",
            c(r, YELLOW), n, s->n_selected, c(r, RESET));
  const console_state *st = r->state;
  for (int k = 0; k < 2; k++)
    if (st->entries_with[k])
      fprintf(f, "%swarning%s during %zu of %zu entries, e.g. the last: %s\n", c(r, YELLOW), c(r, RESET),
              st->entries_with[k], n, st->last[k]);
  return TKB_OK;
}

const tkb__reporter_ops tkb__console_reporter = {
    .state_size = sizeof(console_state), .begin = begin, .entry = entry, .end = end};
