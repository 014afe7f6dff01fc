/* markdown.c - the console's table as GitHub-flavoured Markdown, for pull requests and
 * docs: a line of context, then one row per entry with times in fitting units. The
 * context line says whether the run was interrupted, so the rows wait in memory until
 * the run ends. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tkb__md_cell(FILE *f, const char *s) {
  fputs("| ", f);
  for (; s && *s; s++) {
    if (*s == '|') fputs("\\|", f); /* a table cell cannot hold '|' or line breaks */
    else if (*s == '\n' || *s == '\r') fputc(' ', f);
    else fputc(*s, f);
  }
  fputc(' ', f);
}

const char *tkb__md_trim(char *s) {
  while (*s == ' ') s++;
  size_t n = strlen(s);
  while (n && s[n - 1] == ' ') s[--n] = '\0';
  return s;
}

static tkb_status begin(tkb__reporter *r) { return tkb__textbuf_open(r->state); }

static void entry(tkb__reporter *rep, const tkb__result *r) {
  FILE *f = ((tkb__textbuf *)rep->state)->f;
  char name[600];
  snprintf(name, sizeof name, "`%s`", r->name);
  tkb__md_cell(f, name);
  if (!r->bd) {
    char msg[1200];
    if (r->skipped) snprintf(msg, sizeof msg, "SKIPPED %s", r->error ? r->error : "");
    else
      snprintf(msg, sizeof msg, "**FAILED** %s: %s", tkb_status_name(r->status),
               r->error ? r->error : "");
    tkb__md_cell(f, msg);
    for (int k = 0; k < 11; k++) tkb__md_cell(f, "");
    fputs("|\n", f);
    return;
  }
  tkb__cells c;
  tkb__format_cells(r, &c);
  tkb__md_cell(f, tkb__md_trim(c.median));
  tkb__md_cell(f, tkb__md_trim(c.cpu));
  tkb__md_cell(f, c.ci);
  tkb__md_cell(f, tkb__md_trim(c.min));
  tkb__md_cell(f, tkb__md_trim(c.max));
  tkb__md_cell(f, c.spread);
  tkb__md_cell(f, c.items);
  tkb__md_cell(f, c.gbs);
  tkb__md_cell(f, c.gflops);
  tkb__peak_share ps;
  tkb__peak_share_of(rep->ctx->have_peaks ? &rep->ctx->peaks : NULL, r, &ps);
  char pct[16];
  tkb__fmt_pct(ps.bandwidth_pct, pct, sizeof pct);
  tkb__md_cell(f, pct);
  tkb__fmt_pct(ps.flops_pct, pct, sizeof pct);
  tkb__md_cell(f, pct);
  tkb__md_cell(f, ps.bound ? ps.bound : "-");
  fputs("|\n", f);
}

static tkb_status end(tkb__reporter *r, const tkb__run_summary *s) {
  tkb__textbuf *rows = r->state;
  const tkb__report_ctx *ctx = r->ctx;
  tkb_status st = tkb__textbuf_close(rows);
  if (st) return st;
  FILE *f = r->f;
  char budget[64] = "";
  if (ctx->budget_s > 0) snprintf(budget, sizeof budget, ", budget %g s", ctx->budget_s);
  fprintf(f, "tkbench %s (%s), %s; device `%s` (%s); cpu kernels `%s`; method `%s`, seed "
             "%llu, stop `%s`%s, %d iterations x %d experiments, warm-up %s%s\n\n",
          tkb_version(), tkb_build_type(), ctx->date, ctx->device, ctx->device_description,
          tkb_cpu_isa(), ctx->method, (unsigned long long)ctx->seed, ctx->stop, budget, ctx->iterations,
          ctx->experiments, ctx->warmup_once ? "once per experiment" : "before each call",
          s->interrupted ? " (interrupted: partial results)" : "");
  for (int i = 0; i < ctx->n_warnings; i++) fprintf(f, "> warning: %s\n", ctx->warnings[i].text);
  if (ctx->n_warnings) fputc('\n', f);
  if (ctx->have_peaks)
    fprintf(f, "Peaks: copy %.3g GB/s, sgemm %.3g GFLOP/s, dgemm %.3g GFLOP/s (measured %s); BW%% and FLOP%% "
               "are of them.\n\n", ctx->peaks.copy_gbs, ctx->peaks.sgemm_gflops, ctx->peaks.dgemm_gflops,
            ctx->peaks_date[0] ? ctx->peaks_date : "now");
  fputs("| Benchmark | Median | CPU | 95% CI | Min | Max | SD/Med | Items/s | GB/s | GFLOP/s | BW% | FLOP% | Bound |\n", f);
  fputs("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n", f);
  if (rows->len) fwrite(rows->text, 1, rows->len, f);
  return TKB_OK;
}

static void release(tkb__reporter *r) {
  if (r->state) tkb__textbuf_free(r->state);
}

const tkb__reporter_ops tkb__markdown_reporter = {.state_size = sizeof(tkb__textbuf),
                                                  .begin = begin,
                                                  .entry = entry,
                                                  .end = end,
                                                  .release = release};
