/* html.h - the HTML report: one self-contained page from a result document (html_page.c),
 * written by `tkbench report` and by `run --out x.html` (the html reporter). Internal. */
#ifndef TKB_HTML_H
#define TKB_HTML_H

#include "report.h"
#include "svg.h"

typedef struct tkb__html_opts {
  const char *title;              /* shown in the heading (the results file's name), or NULL */
  const tkb__comparison *comparison; /* the document's entries against a base run, drawn
                                     as a forest plot first; NULL: none */
  const char *base_name;          /* the base file as the user named it (with comparison) */
  double copy_gbs;                /* the device's measured copy bandwidth, 0: unknown */
  double sgemm_gflops;            /* its measured sgemm rate, 0: unknown */
} tkb__html_opts;

/* The page's style sheet and script (html_assets.c). */
extern const char *const tkb__html_css;
extern const char *const tkb__html_script;

/* Writes the page of a results file (tkbench's JSON, a journal, or any Google Benchmark
 * JSON) to f. TKB_ERR_OUT_OF_MEMORY; TKB_ERR_IO when f has an error afterwards. */
tkb_status tkb__html_page(FILE *f, const tkb__results_file *rf, const tkb__html_opts *opts);

/* The history page (html_history.c): a store's change points, its entries and each
 * entry over time on every machine, from trend (src/results/trend.h) and the
 * regressions made of it. title: shown in the heading (the store), or NULL.
 * TKB_ERR_OUT_OF_MEMORY; TKB_ERR_IO when f has an error afterwards. */
struct tkb__trend;
struct tkb__regressions;
tkb_status tkb__html_history_page(FILE *f, const struct tkb__trend *t, const struct tkb__regressions *rs,
                                  const char *title);

#endif
