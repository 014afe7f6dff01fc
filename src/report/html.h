/* html.h - the HTML report: one self-contained page from a result document (html_page.c;
 * its first screen's parts in html_warnings.c, html_overview.c and html_status.c),
 * written by `tkbench report` and by `run --out x.html` (the html reporter). Internal. */
#ifndef TKB_HTML_H
#define TKB_HTML_H

#include "report.h"
#include "svg.h"

typedef struct tkb__html_opts {
  const char *title;              /* shown in the heading (the results file's name), or NULL */
  const tkb__comparison *comparison; /* the document's entries against a base run: the
                                     overview is its forest plot, and each entry's plots
                                     draw the base's calls too; NULL: none */
  const char *base_name;          /* the base file as the user named it (with comparison) */
  double copy_gbs;                /* the device's measured copy bandwidth, 0: unknown */
  double sgemm_gflops;            /* its measured sgemm rate, 0: unknown */
} tkb__html_opts;

/* ---- what the page says of an entry's numbers (html_status.c) ---- */
/* The half-width (a fraction of the median) that "ok" allows when the stopping rule sets
 * no target (the fixed rule): the console marks a wider interval too. */
#define TKB__HTML_WIDE 0.05

typedef enum tkb__html_verdict {
  TKB__HTML_OK,            /* converged, and the interval within the target */
  TKB__HTML_WIDE_INTERVAL, /* converged (or a rule without a goal), the interval wider */
  TKB__HTML_UNCONVERGED,   /* the rule stopped before its target */
  TKB__HTML_NO_INTERVAL,   /* too few values for a 95% interval */
} tkb__html_verdict;

typedef struct tkb__html_status {
  tkb__html_verdict verdict;
  double halfwidth;        /* the median's 95% interval's half-width / the median (NaN: none) */
  double target;           /* the half-width "ok" allows */
  bool target_is_rule;     /* target is the rule's max_noise, not TKB__HTML_WIDE */
} tkb__html_status;

/* The ci rule's max_noise from the rule's text as a run writes it
 * ("ci:max_noise=0.01,..."); NaN for any other rule. */
double tkb__rule_target(const char *rule);
/* The status of an entry whose rule is `rule` (NULL: unknown), that converged (1), did
 * not (0) or does not say (-1: a Google Benchmark file), with its interval's half-width. */
tkb__html_status tkb__html_status_of(const char *rule, int converged, double halfwidth);
/* "ok", "wide (±921%)", "not converged (±12%)", "no interval"; its numbers against the
 * target (the summary's tooltip); and its CSS class ("ok", "wide", "unconverged", "noint"). */
void tkb__html_status_text(const tkb__html_status *s, char *buf, size_t cap);
void tkb__html_status_why(const tkb__html_status *s, char *buf, size_t cap);
const char *tkb__html_status_class(const tkb__html_status *s);

/* ---- the machine's warnings (html_warnings.c) ---- */
/* One line on the first screen naming every warning about the machine ("3 machine
 * warnings: load above the cores, frequency scaling, ..."), the context's and those the
 * entries carry (kinds "load" and "threads", once each with how many entries had them),
 * with their sentences in a <details> element that opens on a click. Nothing when there
 * are none. */
void tkb__html_machine_warnings(FILE *f, const tkb__results_file *rf);

/* ---- the overview of every entry (html_overview.c) ---- */
/* What the overview reads of an entry (the page fills it from the results file). */
typedef struct tkb__html_summary {
  const char *name;
  const char *op, *spec, *impl, *mode; /* "" where the file does not say (Google Benchmark) */
  bool measured;                       /* neither failed nor skipped, and a median */
  bool counted;                        /* its values are instruction counts, not ms */
  double median, ci_low, ci_high;      /* ms or instructions per call; NaN when unknown */
  tkb__html_status status;
} tkb__html_summary;

/* Every measured entry's median with its 95% interval in one chart (one per kind of
 * value when a file holds both times and counts), folded away past 100 entries. */
void tkb__html_overview(FILE *f, const tkb__html_summary *s, int n);
/* The op suite's speed-up: for each entry of impl "cpu" whose op, spec and mode have a
 * "reference" entry too, the reference's median over the cpu's, as a chart on a log axis
 * with a line at 1, and as a table folded under it. Nothing when there are no such pairs. */
void tkb__html_speedup(FILE *f, const tkb__html_summary *s, int n);

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
