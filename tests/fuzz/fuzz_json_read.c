/*
 * fuzz_json_read.c - the JSON readers on any text: a run's journal (what --resume reads)
 * and an entry's row line (what a worker sends). Whatever they accept must be safe to
 * report in every format and must write back a row that reads again to the same row.
 * (The results-file reader that compare and merge share gets its harness beside this
 * one, fuzz_results_file.c, where that reader is in the tree.)
 */
#include "fuzz.h"

#include "report.h"

static void report(const tkb__result *r) {
  tkb__report_ctx ctx = {.executable = "tkbench", .device = "cpu", .device_description = "",
                         .method = "wallclock", .iterations = 3, .experiments = 1, .stop = "fixed"};
  size_t n;
  const tkb__format *formats = tkb__formats(&n);
  for (size_t k = 0; k < n; k++) {
    tkb__textbuf t;
    if (tkb__textbuf_open(&t) != TKB_OK) abort();
    tkb__report_write(&formats[k], t.f, &ctx, r, 1, NULL);
    tkb__textbuf_free(&t);
  }
  char *line, *again;
  size_t len, len2;
  if (tkb__entry_line(r, 1, &line, &len, NULL) != TKB_OK) abort();
  tkb__result back;
  FUZZ_ASSERT(tkb__entry_line_read(line, len, &back) == TKB_OK, "%s: %.300s", tkb_last_error(), line);
  if (tkb__entry_line(&back, 1, &again, &len2, NULL) != TKB_OK) abort();
  FUZZ_ASSERT(len == len2 && memcmp(line, again, len) == 0, "the row changed:\n%.*s\n%.*s", (int)len,
              line, (int)len2, again);
  free(line);
  free(again);
  tkb__result_clear(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tkb__journal_contents c;
  if (tkb__journal_parse((const char *)data, size, "fuzz.jsonl", &c) == TKB_OK) {
    for (size_t i = 0; i < c.n; i++) report(&c.results[i]);
    tkb__journal_contents_free(&c);
  }
  tkb__result r;
  if (tkb__entry_line_read((const char *)data, size, &r) == TKB_OK) {
    report(&r);
    tkb__result_clear(&r);
  }
  return 0;
}
