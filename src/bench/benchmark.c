/*
 * benchmark.c - Tokamax's benchmark: lower, compile, then spaced experiments of timed
 * calls. The timed region holds one call and two clock reads: everything it needs
 * (the bound arguments, the outputs, the array of times) exists before it starts.
 */
#include "meter.h"
#include "std_fn.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tkb_compiled {
  tkb_std_fn *f;
  const tkb_arrays *args;
  double lower_time_ms;
  double compile_time_ms;
  size_t args_bytes;
};

tkb_status tkb_compile_benchmark(tkb_std_fn *f, const tkb_arrays *args, tkb_compiled **out) {
  tkb__clear_error();
  if (!f || !args || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_compile_benchmark: %s is NULL",
                         !f ? "f_std" : !args ? "args" : "out");
  if (f->no_init)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "%s was standardized with no_init (specs only) and cannot be benchmarked",
                         tkb_std_fn_name(f));
  tkb_compiled *c = calloc(1, sizeof *c);
  if (!c) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for a compiled benchmark");
  /* Lowering: check and bind the arguments, then infer shapes again. */
  int64_t t0 = tkb__now_ns();
  tkb_status st = tkb__std_check_args(f, args);
  if (!st) {
    tkb__std_bind_call(f, args);
    st = tkb__std_lower(f);
  }
  int64_t t1 = tkb__now_ns();
  /* Compiling: prepare and output allocation, once per f_std (later benchmarks of the
   * same f_std report the time of that one compile, as a jit cache would). */
  if (!st) st = tkb__std_compile(f);
  if (st) {
    free(c);
    return st;
  }
  c->f = f;
  c->args = args;
  c->lower_time_ms = (double)(t1 - t0) / 1e6;
  c->compile_time_ms = f->compile_time_ms;
  for (size_t k = 0; k < tkb_arrays_count(args); k++) c->args_bytes += tkb_arrays_get(args, k)->nbytes;
  *out = c;
  return TKB_OK;
}

void tkb_compiled_free(tkb_compiled *c) { free(c); }

static void sleep_ms(double ms) {
  if (ms <= 0) return;
  struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(fmod(ms, 1000.0) * 1e6)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* The timed loop. Hot path: no allocation, logging or locking between the clock reads
 * (the meter's before/after hooks, which flush caches and read device timers around
 * the interval, were sized by tkb__meter_open). */
/* Clock state read around the timed calls on devices that report it (CUDA/NVML):
 * one reading per experiment for metadata, and a flag per timed call. */
typedef struct clock_watch {
  tkb_status (*read)(tkb_device *dev, tkb_device_state *out); /* NULL: not reported */
  tkb_device_state *experiment; /* one per experiment */
  bool *throttled;              /* one per evaluation time */
  int retries;                  /* calls discarded and retried */
} clock_watch;

static tkb_status timed_loop(tkb_std_fn *f, tkb__meter *m, const tkb_bench_opts *o,
                             double *times, clock_watch *w) {
  tkb_device *dev = f->device;
  int64_t (*read_clock)(void) = m->clock;
  for (int e = 0; e < o->experiments; e++) {
    if (e > 0) sleep_ms(o->interval_ms);
    tkb_status st;
    if (w->read) {
      st = w->read(dev, &w->experiment[e]);
      if (st) return st;
    }
    int retries_left = o->throttle_retries;
    double pause_ms = 50;
    if (o->warmup_once) {
      st = tkb__std_invoke(f);
      if (!st) st = tkb_device_synchronize(dev);
      if (st) return st;
    }
    for (int i = 0; i < o->iterations; i++) {
      if (!o->warmup_once) {
        st = tkb__std_invoke(f);
        if (!st) st = tkb_device_synchronize(dev);
        if (st) return st;
      }
      st = tkb__meter_before(m);
      if (st) return st;
      int64_t t0 = read_clock();
      st = tkb__std_invoke(f);
      if (!st) st = tkb_device_synchronize(dev);
      int64_t t1 = read_clock();
      size_t k = (size_t)e * (size_t)o->iterations + (size_t)i;
      if (!st) st = tkb__meter_after(m, t1 - t0, &times[k]);
      if (st) return st;
      if (w->read) {
        /* Read after the call: a reason active now was active at its end. Retrying
         * after a pause lets the clocks recover (nvbench discards such samples). */
        tkb_device_state now;
        st = w->read(dev, &now);
        if (st) return st;
        w->throttled[k] = now.valid && now.throttled;
        if (w->throttled[k] && retries_left > 0) {
          retries_left--;
          w->retries++;
          sleep_ms(pause_ms);
          pause_ms *= 2;
          i--;
        }
      }
    }
  }
  return TKB_OK;
}

/* Counts NaN/Inf in a floating array (a device one read back first): nonfinite.c. */
static int64_t count_nonfinite(const tkb_array *a) {
  if (!tkb_dtype_is_float(a->spec.dtype) || !a->data) return 0;
  const tkb_array *h = a;
  tkb_array *copy = NULL;
  if (!tkb__host_array(a)) { /* a device output: read it back (after timing) */
    if (tkb_array_copy(a, tkb__cpu_device(), &copy) != TKB_OK) return 0;
    h = copy;
  }
  int64_t bad = tkb__count_nonfinite(h->data, h->numel, h->spec.dtype);
  tkb_array_free(copy);
  return bad;
}

typedef struct meta_builder {
  tkb_meta *items;
  int n, cap;
  bool failed;
} meta_builder;

static void meta_add(meta_builder *m, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void meta_add(meta_builder *m, const char *key, const char *fmt, ...) {
  if (m->failed) return;
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 16;
    tkb_meta *t = realloc(m->items, (size_t)cap * sizeof *t);
    if (!t) { m->failed = true; return; }
    m->items = t;
    m->cap = cap;
  }
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char *k = tkb__strdup(key), *v = tkb__strdup(buf);
  if (!k || !v) { free(k); free(v); m->failed = true; return; }
  m->items[m->n++] = (tkb_meta){k, v};
}

void tkb_benchmark_data_free(tkb_benchmark_data *bd) {
  if (!bd) return;
  for (int i = 0; i < bd->n_metadata; i++) {
    free((char *)bd->metadata[i].key);
    free((char *)bd->metadata[i].value);
  }
  free(bd->metadata);
  free(bd->evaluation_times_ms);
  free(bd->experiment_median_ms);
  free(bd->throttled);
  free(bd);
}

tkb_status tkb_compiled_run(tkb_compiled *c, const tkb_bench_opts *opts, tkb_benchmark_data **out) {
  tkb__clear_error();
  if (!c || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_compiled_run: %s is NULL", !c ? "compiled" : "out");
  tkb_bench_opts o = opts ? *opts : TKB_BENCH_OPTS_DEFAULT;
  if (o.iterations == 0) o.iterations = 5;
  if (o.experiments == 0) o.experiments = 1;
  if (o.iterations < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "iterations is %d; must be >= 1 (0 means the default, 5)",
                         o.iterations);
  if (o.throttle_retries < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "throttle_retries is %d; must be >= 0",
                         o.throttle_retries);
  if (o.experiments < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "experiments is %d; must be >= 1 (0 means 1)",
                         o.experiments);
  if (!(o.interval_ms >= 0) || isinf(o.interval_ms))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "interval_ms is %g; must be a finite number >= 0",
                         o.interval_ms);
  if ((int64_t)o.iterations * o.experiments > 100000000)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "iterations x experiments is %lld; at most 100000000 timed calls per benchmark",
                         (long long)o.iterations * o.experiments);
  tkb_std_fn *f = c->f;
  const tkb__method *method = NULL;
  tkb_status st = tkb__method_lookup(f->device, o.method, &method);
  if (st) return st;
  const char *method_name = method->name;
  tkb__meter meter;
  st = tkb__meter_open(&meter, f->device, method, &o);
  if (st) return st;

  size_t n = (size_t)o.iterations * (size_t)o.experiments;
  tkb_benchmark_data *bd = calloc(1, sizeof *bd);
  if (bd) bd->evaluation_times_ms = malloc(n * sizeof(double));
  if (bd) bd->experiment_median_ms = malloc((size_t)o.experiments * sizeof(double));
  clock_watch watch = {.read = f->device->backend->device_state};
  if (bd && watch.read) {
    bd->throttled = calloc(n, sizeof *bd->throttled);
    watch.throttled = bd->throttled;
    watch.experiment = calloc((size_t)o.experiments, sizeof *watch.experiment);
  }
  if (!bd || !bd->evaluation_times_ms || !bd->experiment_median_ms ||
      (watch.read && (!watch.throttled || !watch.experiment))) {
    tkb_benchmark_data_free(bd);
    free(watch.experiment);
    tkb__meter_close(&meter);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %zu evaluation times", n);
  }
  tkb__std_bind_call(f, c->args);
  size_t in_use_start = tkb_device_bytes_in_use(f->device);
  tkb_device_reset_peak(f->device);

  st = timed_loop(f, &meter, &o, bd->evaluation_times_ms, &watch);
  size_t peak = tkb_device_peak_bytes(f->device);
  /* profiler: the last timed call's trace (Tokamax's xprof keeps the last one's) */
  char trace[1100] = "";
  if (!st && method->trace)
    st = tkb__meter_write_trace(&meter, o.trace_dir, tkb_std_fn_name(f), trace, sizeof trace);
  size_t commands = meter.n_last, kept = meter.n_kept_last;
  /* the timer's notes, copied before it closes */
  enum { MAX_NOTES = 4 };
  tkb_meta notes_kv[MAX_NOTES];
  char notes[MAX_NOTES][2][400];
  int n_notes = st ? 0 : tkb__meter_notes(&meter, notes_kv, MAX_NOTES);
  for (int i = 0; i < n_notes; i++) {
    snprintf(notes[i][0], sizeof notes[i][0], "%s", notes_kv[i].key ? notes_kv[i].key : "timer");
    snprintf(notes[i][1], sizeof notes[i][1], "%s", notes_kv[i].value ? notes_kv[i].value : "");
  }
  tkb__meter_close(&meter);
  if (st) {
    tkb_benchmark_data_free(bd);
    free(watch.experiment);
    return st;
  }

  bd->lower_time_ms = c->lower_time_ms;
  bd->compile_time_ms = c->compile_time_ms;
  bd->n_evaluation_times = (int)n;
  bd->iterations = o.iterations;
  bd->experiments = o.experiments;
  /* Memory this benchmark holds: its args, what f_std keeps, and any growth while it ran. */
  size_t held = c->args_bytes + f->resident_bytes + (peak > in_use_start ? peak - in_use_start : 0);
  bd->peak_memory_mb = (double)held / 1e6;
  tkb_stats s;
  tkb_stats_compute(bd->evaluation_times_ms, n, &s);
  bd->median_evaluation_time_ms = s.median;
  bd->min_ms = s.min;
  bd->max_ms = s.max;
  bd->mean_ms = s.mean;
  bd->stddev_ms = s.stddev;
  bd->stddev_over_median = s.median > 0 ? s.stddev / s.median : NAN;
  bd->p10_ms = s.p10;
  bd->p25_ms = s.p25;
  bd->p75_ms = s.p75;
  bd->p90_ms = s.p90;
  for (int e = 0; e < o.experiments; e++) {
    tkb_stats es;
    tkb_stats_compute(bd->evaluation_times_ms + (size_t)e * (size_t)o.iterations, (size_t)o.iterations, &es);
    bd->experiment_median_ms[e] = es.median;
  }

  if (o.check_outputs) {
    for (size_t i = 0; i < tkb_arrays_count(f->out_view); i++) {
      int64_t bad = count_nonfinite(tkb_arrays_get(f->out_view, i));
      if (bad) {
        tkb_benchmark_data_free(bd);
        free(watch.experiment);
        return tkb_set_error(TKB_ERR_NUMERICS, "%s: output %zu ('%s') holds %lld NaN or Inf values",
                             tkb_std_fn_name(f), i, tkb_arrays_name(f->out_view, i), (long long)bad);
      }
    }
  }

  meta_builder m = {0};
  meta_add(&m, "method", "%s", method_name);
  meta_add(&m, "device", "%s", tkb_device_name(f->device));
  meta_add(&m, "device_description", "%s", tkb_device_description(f->device));
  meta_add(&m, "cpu_model", "%s", tkb__cpu_model());
  meta_add(&m, "cores", "%d", tkb__num_cpus());
  meta_add(&m, "threads", "%d", tkb_get_num_threads());
  meta_add(&m, "function", "%s", tkb_std_fn_name(f));
  meta_add(&m, "mode", "%s", tkb_mode_name(f->mode));
  meta_add(&m, "statics", "%s", f->statics);
  meta_add(&m, "seed", "%llu", (unsigned long long)f->seed);
  meta_add(&m, "warmup", "%s", o.warmup_once ? "once per experiment" : "before each timed call");
  meta_add(&m, "interval_ms", "%g", o.interval_ms);
  meta_add(&m, "library_version", "%s", tkb_version());
  meta_add(&m, "timer_resolution_ns", "%lld", (long long)tkb__clock_resolution_ns());
  if (o.method && strcmp(o.method, method_name) != 0 && strcmp(o.method, "auto") != 0)
    meta_add(&m, "method_requested", "%s", o.method);
  if (method->reading >= TKB__READ_DEVICE_SUM) {
    meta_add(&m, "device_commands_per_call", "%zu", commands);
    if (method->reading == TKB__READ_DEVICE_UNION) {
      meta_add(&m, "event_filter_regex", "%s", o.event_filter_regex ? o.event_filter_regex : "");
      meta_add(&m, "device_commands_kept", "%zu", kept);
    }
  }
  for (int i = 0; i < n_notes; i++) meta_add(&m, notes[i][0], "%s", notes[i][1]);
  if (trace[0]) meta_add(&m, "trace", "%s", trace);
  if (o.cold_cache) meta_add(&m, "cold_cache", "true");
  if (watch.read) {
    for (int e = 0; e < o.experiments; e++) {
      const tkb_device_state *ds = &watch.experiment[e];
      char key[64];
      if (!ds->valid) {
        snprintf(key, sizeof key, "experiment%d.clocks_unknown", e);
        meta_add(&m, key, "%s", ds->why_unknown);
        continue;
      }
      snprintf(key, sizeof key, "experiment%d.sm_clock_mhz", e);
      meta_add(&m, key, "%u", ds->sm_clock_mhz);
      snprintf(key, sizeof key, "experiment%d.temperature_c", e);
      meta_add(&m, key, "%u", ds->temperature_c);
      snprintf(key, sizeof key, "experiment%d.power_w", e);
      meta_add(&m, key, "%.1f", ds->power_w);
      snprintf(key, sizeof key, "experiment%d.clocks_event_reasons", e);
      meta_add(&m, key, "%s", ds->reasons);
    }
    for (size_t k = 0; k < n; k++) bd->n_throttled += bd->throttled[k];
    bd->n_throttle_retries = watch.retries;
    meta_add(&m, "throttled_calls", "%d", bd->n_throttled);
    meta_add(&m, "throttle_retries", "%d", watch.retries);
  }
  if (m.failed) {
    for (int i = 0; i < m.n; i++) {
      free((char *)m.items[i].key);
      free((char *)m.items[i].value);
    }
    free(m.items);
    tkb_benchmark_data_free(bd);
    free(watch.experiment);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory writing benchmark metadata");
  }
  bd->metadata = m.items;
  bd->n_metadata = m.n;
  *out = bd;
  free(watch.experiment);
  return TKB_OK;
}

tkb_status tkb_benchmark(tkb_std_fn *f, const tkb_arrays *args, const tkb_bench_opts *opts,
                         tkb_benchmark_data **out) {
  tkb_compiled *c = NULL;
  tkb_status st = tkb_compile_benchmark(f, args, &c);
  if (!st) st = tkb_compiled_run(c, opts, out);
  tkb_compiled_free(c);
  return st;
}

double tkb_benchmark_data_median_ms(const tkb_benchmark_data *bd) {
  return bd ? bd->median_evaluation_time_ms : NAN;
}

const char *tkb_benchmark_data_meta(const tkb_benchmark_data *bd, const char *key) {
  if (!bd || !key) return NULL;
  for (int i = 0; i < bd->n_metadata; i++)
    if (strcmp(bd->metadata[i].key, key) == 0) return bd->metadata[i].value;
  return NULL;
}
