/* html.c - the html format: a run's results as the HTML report's page. The reporter
 * writes the run's JSON report into memory through the JSON reporter, reads it back as
 * a results file and draws the page from it, so `run --out x.html` and `tkbench report
 * x.json` draw the same page from the same document. */
#include "html.h"

#include <stdlib.h>

typedef struct html_state {
  tkb__textbuf json;
  tkb__reporter inner; /* the JSON reporter, writing into json */
  bool inner_open;
} html_state;

static tkb_status begin(tkb__reporter *r) {
  html_state *st = r->state;
  const tkb__format *json;
  tkb_status s = tkb__format_parse("json", &json);
  if (!s) s = tkb__textbuf_open(&st->json);
  if (!s) s = tkb__reporter_begin(&st->inner, json, st->json.f, r->ctx, false);
  st->inner_open = s == TKB_OK;
  return s;
}

static void entry(tkb__reporter *r, const tkb__result *res) {
  tkb__reporter_entry(&((html_state *)r->state)->inner, res);
}

static tkb_status end(tkb__reporter *r, const tkb__run_summary *s) {
  html_state *st = r->state;
  st->inner_open = false;
  tkb_status status = tkb__reporter_end(&st->inner, s);
  if (!status) status = tkb__textbuf_close(&st->json);
  if (status) return status;
  tkb__results_file rf;
  status = tkb__results_file_parse(st->json.text, st->json.len, "the run's results", &rf);
  if (!status) status = tkb__html_page(r->f, &rf, NULL);
  tkb__results_file_free(&rf);
  return status;
}

static void release(tkb__reporter *r) {
  html_state *st = r->state;
  if (!st) return;
  if (st->inner_open) tkb__reporter_discard(&st->inner);
  tkb__textbuf_free(&st->json);
}

const tkb__reporter_ops tkb__html_reporter = {.state_size = sizeof(html_state),
                                              .begin = begin,
                                              .entry = entry,
                                              .end = end,
                                              .release = release};
