/*
 * meter.h - the timing methods (ARCHITECTURE.md's table; names are contract) and what
 * one timed call's reading is under each: a host clock, or the device activity of the
 * call from the device's backend, summed or united (meter.c). Internal to src/bench.
 *
 * The benchmark's timed loop, per timed call:
 *     tkb__meter_before(m)        cold cache (outside the interval), device timer start
 *     t0 = clock; call; synchronize; t1 = clock
 *     tkb__meter_after(m, t1 - t0, &ms)   device timer stop, reduce, checks
 * before and after allocate, log and lock nothing: meter_open sized everything.
 */
#ifndef TKB_METER_H
#define TKB_METER_H

#include "intervals.h"

typedef enum tkb__reading {
  TKB__READ_WALL = 0,   /* host monotonic clock around a blocking call */
  TKB__READ_CPU,        /* process CPU time of the call */
  TKB__READ_DEVICE_SUM, /* sum of the lengths of the call's device intervals */
  TKB__READ_DEVICE_UNION/* union of the call's intervals kept by event_filter_regex,
                           checked against the host time (Tokamax's xprof) */
} tkb__reading;

typedef struct tkb__method {
  const char *name;     /* canonical name */
  tkb__reading reading;
  bool trace;           /* leaves a Chrome trace of the last timed call */
} tkb__method;

/*
 * The method `asked` stands for on dev: NULL, "" or "auto" is the device's default (the
 * first of tkb_device_methods), aliases resolve (xprof -> profiler, hermetic_xprof ->
 * hermetic_profiler). TKB_ERR_UNSUPPORTED naming the method and the ones dev has;
 * TKB_ERR_NOT_FOUND for a name that is no timing method.
 */
tkb_status tkb__method_lookup(const tkb_device *dev, const char *asked, const tkb__method **out);

typedef struct tkb__meter {
  const tkb__method *method;
  tkb_device *dev;
  bool cold_cache;
  tkb_timer *timer;             /* device methods */
  tkb__event_filter filter;     /* DEVICE_UNION */
  int64_t (*clock)(void);       /* the host clock the loop reads */
  /* the last timed call, for the trace and the metadata */
  tkb_interval *last;           /* TKB_MAX_CALL_INTERVALS */
  bool *keep;
  size_t n_last, n_kept_last;
  double last_ms, last_host_ms;
} tkb__meter;

/* Prepares everything the timed calls need (timer, filter, cold-cache buffer, trace
 * buffers). event_filter_regex on a method without device events is
 * TKB_ERR_UNSUPPORTED; a bad regex TKB_ERR_INVALID_ARGUMENT; a device without a cache
 * flush, for cold_cache, TKB_ERR_UNSUPPORTED. On failure nothing is left to close. */
tkb_status tkb__meter_open(tkb__meter *m, tkb_device *dev, const tkb__method *method,
                           const tkb_bench_opts *o);
tkb_status tkb__meter_before(tkb__meter *m);
/* host_ns: the loop's clock around the call. *ms: the call's time under the method. */
tkb_status tkb__meter_after(tkb__meter *m, int64_t host_ns, double *ms);
/* profiler: writes the last timed call's trace into dir (NULL: $TMPDIR, else /tmp) as
 * tkbench-trace-<function>-XXXXXX.json; path receives its name. */
tkb_status tkb__meter_write_trace(tkb__meter *m, const char *dir, const char *function,
                                  char *path, size_t cap);
/* What the device timer says about how it timed (cuda_events: "blocking_kernel"): at
 * most cap pairs into kv, valid until close; returns how many (0 without a timer). */
int tkb__meter_notes(tkb__meter *m, tkb_meta *kv, int cap);
void tkb__meter_close(tkb__meter *m);

#endif /* TKB_METER_H */
