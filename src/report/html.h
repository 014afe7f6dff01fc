/* html.h - the HTML report: one self-contained page from a result document (html_page.c),
 * written by `tkbench report` and by `run --out x.html` (the html reporter). Internal. */
#ifndef TKB_HTML_H
#define TKB_HTML_H

#include "report.h"
#include "svg.h"

struct cJSON;

/* A comparison of the document's entries with a base run, drawn as a forest plot. */
typedef struct tkb__html_comparison {
  const char *base_name;          /* the base file, as the user named it (or NULL) */
  const tkb__forest_row *rows;    /* sorted as they should be drawn (by effect) */
  int n;
  double noise;                   /* the noise band's half-width, a fraction (0.02) */
  double geomean, geomean_lo, geomean_hi; /* of the ratios, NaN when unknown */
  const struct cJSON *warnings;   /* an array of strings (context mismatches), or NULL */
} tkb__html_comparison;

typedef struct tkb__html_opts {
  const char *title;              /* shown in the heading (the results file's name), or NULL */
  const tkb__html_comparison *comparison; /* NULL: none */
  double copy_gbs;                /* the device's measured copy bandwidth, 0: unknown */
  double sgemm_gflops;            /* its measured sgemm rate, 0: unknown */
} tkb__html_opts;

/* Writes the page for doc (a parsed tkbench or Google Benchmark JSON document) to f.
 * TKB_ERR_OUT_OF_MEMORY; TKB_ERR_IO when f has an error afterwards. */
tkb_status tkb__html_page(FILE *f, const struct cJSON *doc, const tkb__html_opts *opts);

#endif
