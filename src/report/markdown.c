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

void tkb__md_plain(const char *s, char *buf, size_t cap) {
  size_t len = 0;
#define PUT(text)                                                  \
  do {                                                             \
    const size_t n_ = strlen(text);                                \
    if (len + n_ + 1 > cap) goto full;                             \
    memcpy(buf + len, text, n_);                                   \
    len += n_;                                                     \
  } while (0)
  for (; s && *s; s++) {
    char one[3] = {*s, 0, 0};
    switch (*s) {
      case '<': PUT("&lt;"); break;
      case '>': PUT("&gt;"); break;
      case '&': PUT("&amp;"); break;
      case '\\': case '`': case '*': case '_': case '[': case ']': case '!': case '#':
        one[0] = '\\';
        one[1] = *s;
        PUT(one);
        break;
      case '\n': case '\r': case '\t': PUT(" "); break;
      default: PUT(one);
    }
  }
full:
  if (cap) buf[len < cap ? len : cap - 1] = '\0';
#undef PUT
}

void tkb__md_code(const char *s, char *buf, size_t cap) {
  /* a code span's fence is longer than any run of backticks inside it; a name with a run
   * past what a fence here may hold has its backticks written as ' instead */
  int longest = 0, run = 0;
  for (const char *p = s; p && *p; p++) {
    run = *p == '`' ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  char fence[16] = "";
  const bool too_long = longest + 1 >= (int)sizeof fence;
  const int n = too_long ? 1 : longest + 1;
  memset(fence, '`', (size_t)n);
  const bool pad = !too_long && (longest > 0 || (s && (*s == '`' || (*s && s[strlen(s) - 1] == '`'))));
  /* the closing fence always fits: a name cut short must not leave the span open */
  const size_t tail = (size_t)n + (pad ? 1 : 0);
  if (cap < 2 * tail + 1) {
    if (cap) buf[0] = '\0';
    return;
  }
  size_t len = (size_t)snprintf(buf, cap, "%s%s", fence, pad ? " " : "");
  for (const char *p = s; p && *p && len + tail + 1 < cap; p++)
    buf[len++] = *p == '\n' || *p == '\r' || *p == '\t' ? ' ' : too_long && *p == '`' ? '\'' : *p;
  snprintf(buf + len, cap - len, "%s%s", pad ? " " : "", fence);
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
  tkb__md_code(r->name, name, sizeof name);
  tkb__md_cell(f, name);
  if (!r->bd) {
    char msg[1200], error[1000];
    tkb__md_plain(r->error ? r->error : "", error, sizeof error);
    if (r->skipped) snprintf(msg, sizeof msg, "SKIPPED %s", error);
    else snprintf(msg, sizeof msg, "**FAILED** %s: %s", tkb_status_name(r->status), error);
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
  /* the counts the rule takes: fixed's iterations, else the experiments it starts with */
  char counts[64];
  if (ctx->iterations > 0) snprintf(counts, sizeof counts, "%d iterations x %d experiments", ctx->iterations, ctx->experiments);
  else snprintf(counts, sizeof counts, "experiments >= %d", ctx->experiments);
  char budget[64] = "";
  if (ctx->budget_s > 0) snprintf(budget, sizeof budget, ", budget %g s", ctx->budget_s);
  fprintf(f, "tkbench %s (%s), %s; device `%s` (%s); cpu kernels `%s`; method `%s`, seed "
             "%llu, stop `%s`%s, %s, warm-up %s%s\n\n",
          tkb_version(), tkb_build_type(), ctx->date, ctx->device, ctx->device_description,
          tkb_cpu_isa(), ctx->method, (unsigned long long)ctx->seed, ctx->stop, budget, counts,
          ctx->warmup_once ? "once per experiment" : "before each call",
          s->interrupted ? " (interrupted: partial results)" : "");
  if (ctx->count_source)
    fprintf(f, "Values are instructions per call, counted by %s: counts, not times.\n\n", ctx->count_source);
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
