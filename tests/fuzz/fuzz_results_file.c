/*
 * fuzz_results_file.c - the results-file reader that compare, merge and report share
 * (tkb__results_file_parse: tkbench's JSON, Google Benchmark's, a run's journal) on any
 * bytes, and what those commands make of what it accepts. The input is one file, or two
 * parted by a line "--8<--" (BASE, then NEW). The text is handed over without a
 * terminating NUL, as a file's bytes are, so a read past its end is a finding.
 *
 * What must hold for whatever the reader accepts:
 *  - compare runs, and each rendering writes: the JSON one parses and is UTF-8, the
 *    Markdown one holds no '<' outside code spans but those of its own <sub> line (a
 *    file's text never becomes HTML);
 *  - merge either refuses or writes a document that is UTF-8 and that the reader reads
 *    back with the same entries;
 *  - the HTML page is written or refused, never a crash: alone, and against the base
 *    (each entry's plots then draw both runs' calls).
 */
#define _GNU_SOURCE /* memmem */
#include "fuzz.h"

#include "html.h"
#include "report.h"

#include <cjson/cJSON.h>

static const char SEPARATOR[] = "\n--8<--\n";

/* The bytes data[0..size) parsed from a copy of exactly that length. */
static bool parse(const uint8_t *data, size_t size, const char *path, tkb__results_file *rf) {
  char *copy = malloc(size ? size : 1);
  if (!copy) abort();
  memcpy(copy, data, size);
  const bool ok = tkb__results_file_parse(copy, size, path, rf) == TKB_OK;
  free(copy);
  return ok;
}

/* The '<' of text outside code spans (a run of N backticks opens one that the next run of
 * exactly N closes, as CommonMark reads them; a backslash-escaped backtick opens none):
 * those are what a renderer takes for HTML. */
static size_t angles_outside_code(const char *text) {
  size_t n = 0;
  for (const char *p = text; *p;) {
    if (*p == '\\' && p[1]) {
      p += 2;
      continue;
    }
    if (*p == '`') {
      size_t run = strspn(p, "`");
      const char *q = p + run, *close = NULL;
      while (*q && !close) {
        if (*q == '`') {
          const size_t r = strspn(q, "`");
          if (r == run) close = q;
          q += r;
        } else {
          q++;
        }
      }
      if (close) {
        p = close + run;
        continue;
      }
      p += run;
      continue;
    }
    n += *p == '<';
    p++;
  }
  return n;
}

static void page(const tkb__results_file *rf, const tkb__comparison *c);

static void compare(const tkb__results_file *a, const tkb__results_file *b) {
  tkb__compare_opts o = TKB__COMPARE_OPTS_DEFAULT;
  o.resamples = 50; /* the statistics' cost is not what is fuzzed here */
  tkb__comparison c;
  if (tkb__compare(a, b, &o, &c) != TKB_OK) return;
  static const char *const names[] = {"console", "markdown", "json"};
  for (size_t k = 0; k < 3; k++) {
    const tkb__compare_format *fmt;
    if (tkb__compare_format_parse(names[k], &fmt) != TKB_OK) abort();
    tkb__textbuf t;
    if (tkb__textbuf_open(&t) != TKB_OK) abort();
    fmt->write(t.f, &c, k == 0);
    if (tkb__textbuf_close(&t) != TKB_OK) abort();
    const char *text = t.text ? t.text : "";
    if (k == 1) {
      /* its own: the last line's <sub> and </sub> */
      FUZZ_ASSERT(angles_outside_code(text) == 2, "markdown holds a '<' of a file's text:\n%.2000s", text);
    }
    if (k == 2) {
      FUZZ_ASSERT(fuzz_utf8((const unsigned char *)text, t.len), "compare's JSON is not UTF-8");
      cJSON *doc = cJSON_ParseWithLength(text, t.len);
      FUZZ_ASSERT(doc != NULL, "compare's JSON does not parse:\n%.2000s", text);
      cJSON_Delete(doc);
    }
    tkb__textbuf_free(&t);
  }
  page(b, &c);
  tkb__comparison_free(&c);
}

static void ignore(void *user, const char *text) {
  (void)user;
  (void)text;
}

static void merge(const tkb__results_file *f, size_t n) {
  cJSON *doc;
  size_t entries;
  if (tkb__results_merge(f, n, ignore, NULL, &doc, &entries) != TKB_OK) return;
  char *text = cJSON_Print(doc);
  cJSON_Delete(doc);
  if (!text) abort();
  const size_t len = strlen(text);
  FUZZ_ASSERT(fuzz_utf8((const unsigned char *)text, len), "the merged file is not UTF-8");
  tkb__results_file back;
  FUZZ_ASSERT(tkb__results_file_parse(text, len, "merged.json", &back) == TKB_OK,
              "the merged file does not read back: %s\n%.2000s", tkb_last_error(), text);
  size_t before = 0;
  for (size_t i = 0; i < n; i++) before += f[i].n_entries;
  FUZZ_ASSERT(back.n_entries == before, "the merged file has %zu entries, its parts %zu", back.n_entries,
              before);
  tkb__results_file_free(&back);
  free(text);
}

static void page(const tkb__results_file *rf, const tkb__comparison *c) {
  tkb__textbuf t;
  if (tkb__textbuf_open(&t) != TKB_OK) abort();
  const tkb__html_opts o = {.title = "fuzz", .comparison = c, .base_name = c ? "base.json" : NULL};
  tkb__html_page(t.f, rf, &o);
  tkb__textbuf_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *cut = size >= sizeof SEPARATOR - 1
                           ? memmem(data, size, SEPARATOR, sizeof SEPARATOR - 1) : NULL;
  const size_t a_len = cut ? (size_t)(cut - data) : size;
  tkb__results_file f[2];
  size_t n = 0;
  if (parse(data, a_len, "base.json", &f[0])) n = 1;
  if (cut && n == 1) {
    const uint8_t *b = cut + sizeof SEPARATOR - 1;
    if (parse(b, size - (size_t)(b - data), "new.json", &f[1])) n = 2;
  }
  if (n) {
    for (size_t i = 0; i < f[0].n_warnings; i++) /* a warning's text is whole (no freed name) */
      FUZZ_ASSERT(strlen(f[0].warnings[i]) < 600, "a warning of %zu bytes", strlen(f[0].warnings[i]));
    compare(&f[0], &f[n - 1]);
    merge(f, n);
    page(&f[0], NULL);
  }
  for (size_t i = 0; i < n; i++) tkb__results_file_free(&f[i]);
  return 0;
}
