/* console.c - the table people read: a header saying what ran where, then one aligned
 * row per entry (printed as each entry finishes), then a one-line summary. Colour only
 * when ctx->color (the CLI decides: a terminal and no NO_COLOR). */
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

static const char *c(const tkb__report_ctx *ctx, const char *code) { return ctx->color ? code : ""; }

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

void tkb__console_header(FILE *f, const tkb__report_ctx *ctx) {
  fprintf(f, "%stkbench %s%s (%s)   %s\n", c(ctx, BOLD), tkb_version(), c(ctx, RESET),
          tkb_build_type(), ctx->date);
  fprintf(f, "device  %s: %s\n", ctx->device, ctx->device_description);
  if (strcmp(ctx->device, "cpu") != 0)
    fprintf(f, "host    %s, %d cores\n", tkb__cpu_model(), tkb__num_cpus());
  fprintf(f, "method  %s   seed %llu   %d iteration%s x %d experiment%s", ctx->method,
          (unsigned long long)ctx->seed, ctx->iterations, ctx->iterations == 1 ? "" : "s",
          ctx->experiments, ctx->experiments == 1 ? "" : "s");
  fprintf(f, "   warm-up %s", ctx->warmup_once ? "once per experiment" : "before each call");
  if (ctx->interval_ms > 0) fprintf(f, "   interval %g ms", ctx->interval_ms);
  fputs("\n\n", f);
}

void tkb__console_titles(FILE *f, const tkb__report_ctx *ctx) {
  int w = name_width(ctx);
  fprintf(f, "%s%-*s  %9s  %9s  %9s  %6s  %9s  %8s  %8s%s\n", c(ctx, BOLD), w, "Benchmark",
          "Median", "Min", "Max", "SD/Med", "Items/s", "GB/s", "GFLOP/s", c(ctx, RESET));
  int total = w + 2 + 9 + 2 + 9 + 2 + 9 + 2 + 6 + 2 + 9 + 2 + 8 + 2 + 8;
  for (int i = 0; i < total; i++) fputc('-', f);
  fputc('\n', f);
}

void tkb__console_row(FILE *f, const tkb__report_ctx *ctx, const tkb__result *r) {
  int w = name_width(ctx);
  if (!r->bd) {
    name_cell(f, r->name, w);
    fprintf(f, "  %sFAILED %s: %s%s\n", c(ctx, RED), tkb_status_name(r->status),
            r->error ? r->error : "", c(ctx, RESET));
    return;
  }
  const tkb_benchmark_data *bd = r->bd;
  tkb__cells cl;
  tkb__format_cells(r, &cl);
  bool noisy = bd->stddev_over_median > NOISY_STDDEV_OVER_MEDIAN;
  name_cell(f, r->name, w);
  fprintf(f, "  %9s  %9s  %9s  %s%6s%s  %9s  %8s  %8s\n", cl.median, cl.min, cl.max,
          noisy ? c(ctx, YELLOW) : "", cl.spread, noisy ? c(ctx, RESET) : "", cl.items, cl.gbs,
          cl.gflops);
}

void tkb__console_summary(FILE *f, const tkb__report_ctx *ctx, const tkb__result *res, size_t n,
                          size_t n_selected, double wall_s) {
  size_t failed = 0;
  for (size_t i = 0; i < n; i++) failed += res[i].bd == NULL;
  fputc('\n', f);
  fprintf(f, "%zu entr%s in %.1f s", n, n == 1 ? "y" : "ies", wall_s);
  if (failed) fprintf(f, ", %s%zu failed%s", c(ctx, RED), failed, c(ctx, RESET));
  else if (n) fprintf(f, ", %sall ok%s", c(ctx, GREEN), c(ctx, RESET));
  fputc('\n', f);
  if (ctx->interrupted)
    fprintf(f, "%sinterrupted: %zu of %zu selected entries ran; the results cover those%s\n",
            c(ctx, YELLOW), n, n_selected, c(ctx, RESET));
}

tkb_status tkb__write_console(FILE *f, const tkb__report_ctx *ctx, const tkb__result *res,
                              size_t n, size_t n_selected, double wall_s) {
  tkb__report_ctx plain = *ctx;
  plain.color = false;
  tkb__console_header(f, &plain);
  tkb__console_titles(f, &plain);
  for (size_t i = 0; i < n; i++) tkb__console_row(f, &plain, &res[i]);
  tkb__console_summary(f, &plain, res, n, n_selected, wall_s);
  return ferror(f) ? tkb_set_error(TKB_ERR_IO, "writing the console report failed") : TKB_OK;
}
