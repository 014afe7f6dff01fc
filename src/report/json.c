/*
 * json.c - the JSON report: Google Benchmark's document ({"context": ..., "benchmarks":
 * [...]}) holding the run's context (context_write.c) and each entry's rows
 * (result_write.c) in the run's time unit, or only the aggregates when Google
 * Benchmark's flags ask for them. The context comes first and says whether the run was
 * interrupted, so the entries are written into memory as they finish and the document
 * is put together at the end.
 */
#include "jsonw.h"
#include "report.h"

/* The rows in the unit the run asks for (--time-unit), else ns. */
static tkb__row_form report_form(const tkb__reporter *rep) {
  const double u = tkb__unit_ns(rep->ctx->time_unit);
  const tkb__peaks *peaks = rep->ctx->have_peaks ? &rep->ctx->peaks : NULL;
  if (u <= 0) return (tkb__row_form){.unit = "ns", .per = 1, .aggregates_only = rep->aggregates_only, .peaks = peaks};
  return (tkb__row_form){.unit = rep->ctx->time_unit, .per = u, .aggregates_only = rep->aggregates_only,
                         .peaks = peaks};
}

/* The benchmarks[] elements so far, written at the depth they have in the document. */
typedef struct entries {
  tkb__textbuf text;
  jw w;
} entries;

/* Inside the document's object and its "benchmarks" array. */
#define ENTRY_DEPTH 2

static tkb_status begin(tkb__reporter *r) {
  entries *e = r->state;
  tkb_status st = tkb__textbuf_open(&e->text);
  if (!st) jw_begin_at(&e->w, e->text.f, ENTRY_DEPTH);
  return st;
}

static void entry(tkb__reporter *r, const tkb__result *res) {
  entries *e = r->state;
  const tkb__row_form form = report_form(r);
  tkb__json_write_entry(&e->w, res, &form, r->ctx->experiments);
}

static tkb_status end(tkb__reporter *r, const tkb__run_summary *s) {
  entries *e = r->state;
  tkb_status st = tkb__textbuf_close(&e->text);
  if (st) return st;
  jw w = {.f = r->f};
  jw_begin_object(&w, NULL);
  tkb__json_write_context(&w, r->ctx, s);
  jw_begin_array(&w, "benchmarks", false);
  jw_splice(&w, e->text.text, e->text.len);
  jw_end_array(&w);
  jw_end_object(&w);
  jw_finish(&w);
  r->n_replaced = w.replaced + e->w.replaced;
  return TKB_OK;
}

static void release(tkb__reporter *r) {
  entries *e = r->state;
  if (e) tkb__textbuf_free(&e->text);
}

const tkb__reporter_ops tkb__json_reporter = {
    .state_size = sizeof(entries), .begin = begin, .entry = entry, .end = end, .release = release};
