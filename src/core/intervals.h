/*
 * intervals.h - device activity as intervals, device independent (intervals.c): the
 * union of a call's intervals (Tokamax's xprof time: "disjoint interval union"), the
 * event-name filter (event_filter_regex, POSIX extended regex, searched anywhere in the
 * name as Python's re.search does), and the Chrome trace-event JSON writer (the file
 * `profiler` leaves, opened by chrome://tracing and ui.perfetto.dev). Shared by every
 * backend: the OpenCL one gives CL_PROFILING_COMMAND_START/END of its commands, the
 * CUDA one CUPTI records.
 *
 * Nothing here allocates after init: sort, union, sum and apply run after each timed
 * call on buffers sized before the loop.
 */
#ifndef TKB_INTERVALS_H
#define TKB_INTERVALS_H

#include "internal.h"

#include <regex.h>

/* Sorts iv[0..n) by start, then end, in place (heap sort: no allocation, unlike qsort). */
void tkb__intervals_sort(tkb_interval *iv, size_t n);

/*
 * Length of the union of iv[0..n) in ns: sorts iv, then merges intervals that overlap or
 * touch (next.start <= current.end) into one and adds up the merged spans. An interval
 * with end < start counts as empty. 0 for n == 0.
 */
int64_t tkb__intervals_union_ns(tkb_interval *iv, size_t n);

/* Sum of the lengths of iv[0..n) in ns (negative lengths count as 0). */
int64_t tkb__intervals_sum_ns(const tkb_interval *iv, size_t n);

/* Which events a profiler method keeps, by name. */
#define TKB_FILTER_MEMO 64
typedef struct tkb__event_filter {
  bool active;           /* false: every event is kept */
  regex_t re;
  const char *pattern;   /* borrowed from the caller, for messages */
  /* Verdicts by name pointer: names are interned by the backends, so after the first
   * call a filter decision is a pointer compare (regexec may allocate). */
  const char *memo_name[TKB_FILTER_MEMO];
  bool memo_keep[TKB_FILTER_MEMO];
  int n_memo;
} tkb__event_filter;

/* pattern NULL or "": keep all. TKB_ERR_INVALID_ARGUMENT naming the pattern and
 * regerror's reason when it does not compile. pattern must outlive the filter. */
tkb_status tkb__event_filter_init(tkb__event_filter *f, const char *pattern);
/* True when the filter keeps an event of this name (NULL names: "" ). */
bool tkb__event_filter_keeps(tkb__event_filter *f, const char *name);
/* Moves the kept intervals of iv[0..n) to the front (in order) and returns how many;
 * keep[i] (optional, n entries) records each original interval's verdict. */
size_t tkb__event_filter_apply(tkb__event_filter *f, tkb_interval *iv, size_t n, bool *keep);
void tkb__event_filter_free(tkb__event_filter *f);

/* What a trace file says besides its events. */
typedef struct tkb__trace_info {
  const char *process;   /* e.g. "opencl:0 (PoCL ...)" */
  const char *thread;    /* e.g. "command queue" */
  const char *function;  /* the benchmarked function */
  const char *entry;     /* the suite entry it ran as, or NULL */
  const char *method;
  const char *filter;    /* event_filter_regex or NULL */
  double device_time_ms; /* what the method reported for this call */
  double host_time_ms;   /* wallclock around the call */
} tkb__trace_info;

/*
 * Writes a Chrome trace-event JSON file (JSON Object Format: {"traceEvents": [...],
 * "otherData": {...}}) with one complete event ("ph": "X") per interval, timestamps and
 * durations in microseconds (the format's unit) from the earliest start, with the ns
 * digits as decimals, names JSON-escaped;
 * events the filter dropped (keep[i] false; keep NULL keeps all) carry
 * "args": {"kept_by_filter": false}. TKB_ERR_IO naming the path and errno's reason.
 */
tkb_status tkb__trace_write(const char *path, const tkb_interval *iv, size_t n, const bool *keep,
                            const tkb__trace_info *info);

#endif /* TKB_INTERVALS_H */
