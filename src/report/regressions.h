/*
 * regressions.h - the change points of the store's series (src/results/trend.h) as
 * `tkbench history regressions` reports them: every step, slower or faster, with the
 * entry, the machine, the commit range, the step with its interval, the p-value and code
 * or machine; which of them fail the gate; and its renderings (console, markdown, json:
 * one file each, the table in regressions_format.c). Internal.
 */
#ifndef TKB_REPORT_REGRESSIONS_H
#define TKB_REPORT_REGRESSIONS_H

#include "report.h"
#include "trend.h"

/* One change point as reported. */
typedef struct tkb__regression {
  const tkb__trend_machine *machine;
  const tkb__trend_series *series;
  const tkb__trend_step *step;
  bool slower;      /* ratio > 1: the values grew (times: slower) */
  bool fails;       /* it fails the gate: slower by more than the threshold, the code's, in
                       the machine's latest runs */
} tkb__regression;

typedef struct tkb__regressions {
  const tkb__trend *trend;
  const char *store;           /* the store as messages show it */
  bool gate;                   /* --fail-on regression was given */
  double threshold;            /* its threshold: a change (0.05: +5%) a failing step exceeds */
  tkb__regression *items;      /* those that fail first, then the other slower steps, then
                                  the faster; by size within each */
  size_t n;
  size_t n_slower, n_faster, n_machine, n_latest, n_fails;
} tkb__regressions;

/* The report of trend (which must outlive it). gate: whether --fail-on applies, with
 * threshold (NaN: the detection's min_step). TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__regressions_make(const tkb__trend *trend, const char *store, bool gate, double threshold,
                                 tkb__regressions *out);
void tkb__regressions_free(tkb__regressions *r);

/* A run as a step's side names it: "run 12 (1a2b3c4d5e, main, 2025-01-31 12:00 UTC)". */
void tkb__regression_run_text(const tkb__history_run *run, char *buf, size_t cap);
/* What decided code or machine: "code: 1 of 10 entries stepped up there" / "machine: 9
 * of 10 entries stepped up there, and so did its measured copy_gbs". */
void tkb__regression_cause_text(const tkb__regressions *rs, const tkb__regression *r, char *buf, size_t cap);
/* The unit of the step's series ("ns" for times), and a value in it as the renderings
 * write it ("12.34 us"; "1.234e+06 instructions"). */
const char *tkb__regression_unit(const tkb__regression *r);
void tkb__regression_value_text(double v, const char *unit, char *buf, size_t cap);
/* The settings, in one sentence. */
void tkb__regressions_describe(const tkb__regressions *r, char *buf, size_t cap);

/* ---- renderings ---- */
typedef struct tkb__regressions_format {
  const char *name;       /* "markdown" */
  const char *alias;      /* "md", or NULL */
  const char *extensions; /* ".md .markdown" */
  void (*write)(FILE *f, const tkb__regressions *r);
} tkb__regressions_format;
/* By name or alias; TKB_ERR_NOT_FOUND naming it and the formats. */
tkb_status tkb__regressions_format_parse(const char *name, const tkb__regressions_format **out);
/* The format a file's ending asks for; the console's for any other ending. */
const tkb__regressions_format *tkb__regressions_format_from_path(const char *path);

void tkb__regressions_console(FILE *f, const tkb__regressions *r);
void tkb__regressions_markdown(FILE *f, const tkb__regressions *r);
void tkb__regressions_json(FILE *f, const tkb__regressions *r);

#endif
