/*
 * methods.c - the timing methods: the one table of their facts (names, Tokamax's aliases,
 * the device kinds that have them, the backend timer they read, the options they
 * accept), the lookup every caller goes through, and the one check of a benchmark's
 * options that both tkb_benchmark and the command line use, so a method and its options
 * are validated in one place with one set of sentences.
 *
 * Adding a method is one row here (and, when it reads a kind of device timer no backend
 * has yet, that timer's file in the backend). The rows are in order of preference: a
 * device's default method is the first row it has (cupti on CUDA, opencl_events on
 * OpenCL, wallclock on the cpu, as Tokamax picks). instructions counts rather than times
 * (count.c): its values are instructions per call.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const tkb__method methods[] = {
    {.name = "cupti", .devices = "cuda", .timer = TKB_TIMER_ACTIVITY,
     .activity = TKB_ACTIVITY_KERNELS, .reading = TKB__READ_DEVICE_SUM},
    {.name = "cuda_events", .devices = "cuda", .timer = TKB_TIMER_EVENTS,
     .reading = TKB__READ_DEVICE_SUM, .options = TKB__OPT_BLOCKING_KERNEL},
    {.name = "opencl_events", .devices = "opencl", .timer = TKB_TIMER_ACTIVITY,
     .activity = TKB_ACTIVITY_ALL, .reading = TKB__READ_DEVICE_SUM},
    {.name = "profiler", .alias = "xprof", .devices = "cuda,opencl", .timer = TKB_TIMER_ACTIVITY,
     .activity = TKB_ACTIVITY_ALL, .reading = TKB__READ_DEVICE_UNION,
     .options = TKB__OPT_EVENT_FILTER | TKB__OPT_TRACE_DIR, .trace = true},
    {.name = "hermetic_profiler", .alias = "hermetic_xprof", .devices = "cuda,opencl",
     .timer = TKB_TIMER_ACTIVITY, .activity = TKB_ACTIVITY_ALL,
     .reading = TKB__READ_DEVICE_UNION, .options = TKB__OPT_EVENT_FILTER},
    {.name = "wallclock", .devices = "*", .reading = TKB__READ_WALL},
    {.name = "cpu_time", .devices = "cpu", .reading = TKB__READ_CPU},
    /* counts, not a time (count.c): never a device's default */
    {.name = "instructions", .devices = "cpu", .reading = TKB__READ_COUNT},
};
#define N_METHODS TKB_ARRAY_LEN(methods)

/* True when the comma-separated list holds kind ("*" holds every kind). */
static bool kind_in(const char *list, const char *kind) {
  if (strcmp(list, "*") == 0) return true;
  size_t n = strlen(kind);
  for (const char *p = list; *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n && strncmp(p, kind, n) == 0) return true;
    p += len + (comma != NULL);
  }
  return false;
}

/* ---- each device kind's methods, computed once from the table ---- */

/* The kinds the table names, and one list for any other kind (only the "*" rows). */
#define MAX_KINDS 8
static struct {
  char kind[16];
  const char *names[N_METHODS + 1];
} lists[MAX_KINDS + 1];
static int n_lists;
static pthread_once_t lists_once = PTHREAD_ONCE_INIT;

static void fill_list(int slot, const char *kind) {
  snprintf(lists[slot].kind, sizeof lists[slot].kind, "%s", kind);
  int k = 0;
  for (size_t i = 0; i < N_METHODS; i++)
    if (kind_in(methods[i].devices, kind)) lists[slot].names[k++] = methods[i].name;
  lists[slot].names[k] = NULL;
}

static void build_lists(void) {
  for (size_t i = 0; i < N_METHODS; i++) {
    for (const char *p = methods[i].devices; *p && strcmp(p, "*") != 0;) {
      const char *comma = strchr(p, ',');
      size_t len = comma ? (size_t)(comma - p) : strlen(p);
      char kind[16];
      snprintf(kind, sizeof kind, "%.*s", (int)len, p);
      bool seen = false;
      for (int s = 0; s < n_lists && !seen; s++) seen = strcmp(lists[s].kind, kind) == 0;
      if (!seen && n_lists < MAX_KINDS) fill_list(n_lists++, kind);
      p += len + (comma != NULL);
    }
  }
  fill_list(MAX_KINDS, ""); /* a kind the table does not name */
}

const char *const *tkb_device_methods(const tkb_device *dev) {
  pthread_once(&lists_once, build_lists);
  const char *kind = (dev ? dev : tkb__cpu_device())->backend->kind;
  for (int s = 0; s < n_lists; s++)
    if (strcmp(lists[s].kind, kind) == 0) return lists[s].names;
  return lists[MAX_KINDS].names;
}

/* ---- lookup ---- */

static const tkb__method *by_name(const char *name) {
  for (size_t i = 0; i < N_METHODS; i++)
    if (strcmp(methods[i].name, name) == 0 || (methods[i].alias && strcmp(methods[i].alias, name) == 0))
      return &methods[i];
  return NULL;
}

/* Appends to buf[*len..cap), never past it. */
static void put(char *buf, size_t cap, size_t *len, const char *fmt, const char *s) {
  if (*len >= cap) return;
  int w = snprintf(buf + *len, cap - *len, fmt, s);
  if (w > 0) *len += (size_t)w;
}

/* "cupti, cuda_events, ..., cpu_time; aliases xprof, hermetic_xprof": every name. */
static void every_name(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < N_METHODS; i++) put(buf, cap, &len, i ? ", %s" : "%s", methods[i].name);
  const char *sep = "; aliases ";
  for (size_t i = 0; i < N_METHODS; i++)
    if (methods[i].alias) {
      put(buf, cap, &len, "%s", sep);
      put(buf, cap, &len, "%s", methods[i].alias);
      sep = ", ";
    }
}

void tkb__method_names(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < N_METHODS; i++) {
    put(buf, cap, &len, i ? ", %s" : "%s", methods[i].name);
    if (methods[i].alias) put(buf, cap, &len, " (alias %s)", methods[i].alias);
  }
}

/* The device's timer of the method's kind, or NULL. */
static const tkb_timer_ops *timer_of(const tkb_device *dev, const tkb__method *m) {
  const tkb_timer_ops *const *t = dev->backend->timers;
  for (int i = 0; m->timer && t && t[i]; i++)
    if (strcmp(t[i]->kind, m->timer) == 0) return t[i];
  return NULL;
}

tkb_status tkb__method_lookup(const tkb_device *dev, const char *asked, const tkb__method **out) {
  const char *const *have = tkb_device_methods(dev);
  const char *name = (!asked || !*asked || strcmp(asked, "auto") == 0) ? have[0] : asked;
  const tkb__method *m = name ? by_name(name) : NULL;
  if (!m) {
    char every[512];
    every_name(every, sizeof every);
    return tkb_set_error(TKB_ERR_NOT_FOUND, "method \"%s\" is not a timing method; known: auto, %s",
                         name ? name : "", every);
  }
  if (!kind_in(m->devices, dev->backend->kind)) {
    char list[256];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; have[i]; i++) put(list, sizeof list, &len, i ? ", %s" : "%s", have[i]);
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "method \"%s\" is not available on device %s; %s has: %s (or auto)", name,
                         tkb_device_name(dev), tkb_device_name(dev), list);
  }
  if (m->timer && !timer_of(dev, m))
    return tkb_set_error(TKB_ERR_INTERNAL,
                         "device %s has method %s, but its backend has no %s timer to read",
                         tkb_device_name(dev), m->name, m->timer);
  *out = m;
  return TKB_OK;
}

tkb_status tkb_method_resolve(const tkb_device *dev, const char *method, const char **canonical) {
  tkb__clear_error();
  if (!canonical)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_method_resolve: canonical is NULL");
  const tkb__method *m;
  tkb_status st = tkb__method_lookup(dev ? dev : tkb__cpu_device(), method, &m);
  if (!st) *canonical = m->name;
  return st;
}

const tkb_timer_ops *tkb__method_timer(const tkb_device *dev, const tkb__method *m) {
  return timer_of(dev, m);
}

/* ---- the one check of a benchmark's options ---- */

tkb_bench_opts tkb__bench_defaults(const tkb_bench_opts *opts) {
  tkb_bench_opts o = opts ? *opts : TKB_BENCH_OPTS_DEFAULT;
  if (o.iterations == 0) o.iterations = 5;
  if (o.experiments == 0) o.experiments = 1;
  return o;
}

/* An option that only some methods honour: its two names and why those methods. */
typedef struct option_fact {
  unsigned bit;
  const char *field, *flag;
  const char *why; /* what makes the methods that accept it special */
} option_fact;

static const option_fact option_facts[] = {
    {TKB__OPT_EVENT_FILTER, "event_filter_regex", "--event-filter",
     "which filter the device's commands by name"},
    {TKB__OPT_TRACE_DIR, "trace_dir", "--trace-dir", "the only method that writes a trace"},
    {TKB__OPT_BLOCKING_KERNEL, "no_blocking_kernel", "--no-blocking-kernel",
     "the only method that holds the stream with a blocking kernel"},
};

/* "profiler or hermetic_profiler (aliases xprof, hermetic_xprof)": the methods that
 * accept `bit`, from the table. */
static void accepting(unsigned bit, char *buf, size_t cap) {
  size_t len = 0, n = 0, total = 0, aliases = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < N_METHODS; i++)
    if (methods[i].options & bit) total++, aliases += methods[i].alias != NULL;
  for (size_t i = 0; i < N_METHODS; i++)
    if (methods[i].options & bit) {
      n++;
      put(buf, cap, &len, n == 1 ? "%s" : n == total ? " or %s" : ", %s", methods[i].name);
    }
  size_t k = 0;
  for (size_t i = 0; i < N_METHODS; i++)
    if ((methods[i].options & bit) && methods[i].alias) {
      put(buf, cap, &len, k++ ? ", %s" : aliases > 1 ? " (aliases %s" : " (alias %s", methods[i].alias);
    }
  if (k) put(buf, cap, &len, "%s", ")");
}

static tkb_status refuse_option(const option_fact *opt, tkb__naming naming, const tkb_bench_opts *o,
                                const tkb__method *m, const tkb_device *dev) {
  char list[256], label[320];
  accepting(opt->bit, list, sizeof list);
  const bool flags = naming == TKB__NAME_FLAGS;
  if (!flags && opt->bit == TKB__OPT_EVENT_FILTER)
    snprintf(label, sizeof label, "%s \"%.256s\"", opt->field, o->event_filter_regex);
  else
    snprintf(label, sizeof label, "%s", flags ? opt->flag : opt->field);
  const char *mflag = flags ? "--method " : "method ";
  return tkb_set_error(TKB_ERR_UNSUPPORTED, "%s applies only to %s%s, %s; this %s uses %s%s on device %s",
                       label, mflag, list, opt->why, flags ? "run" : "benchmark", mflag, m->name,
                       tkb_device_name(dev));
}

/* The options given that only some methods honour (TKB__OPT_* bits). */
static unsigned options_given(const tkb_bench_opts *o) {
  return (o->event_filter_regex && *o->event_filter_regex ? TKB__OPT_EVENT_FILTER : 0) |
         (o->trace_dir ? TKB__OPT_TRACE_DIR : 0) |
         (o->no_blocking_kernel ? TKB__OPT_BLOCKING_KERNEL : 0);
}

static tkb_status check_counts(const tkb_bench_opts *o) {
  if (o->iterations < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "iterations is %d; must be >= 1 (0 means the default, 5)",
                         o->iterations);
  if (o->throttle_retries < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "throttle_retries is %d; must be >= 0",
                         o->throttle_retries);
  if (o->experiments < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "experiments is %d; must be >= 1 (0 means 1)",
                         o->experiments);
  if (!(o->interval_ms >= 0) || isinf(o->interval_ms))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "interval_ms is %g; must be a finite number >= 0",
                         o->interval_ms);
  if (tkb__spacing_check(o) != TKB_OK) return TKB_ERR_INVALID_ARGUMENT;
  if (!(o->min_warmup_ms >= 0) || isinf(o->min_warmup_ms))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "min_warmup_ms is %g; must be a finite number >= 0",
                         o->min_warmup_ms);
  if ((int64_t)(o->iterations ? o->iterations : 5) * (o->experiments ? o->experiments : 1) > 100000000)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "iterations x experiments is %lld; at most 100000000 timed calls per benchmark",
                         (long long)o->iterations * o->experiments);
  return TKB_OK;
}

/* The profiler writes its trace into dir: it must be a writable folder that exists. */
static tkb_status check_trace_dir(const char *dir, const char *name) {
  struct stat st;
  if (!*dir) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s is empty; expected a folder", name);
  if (stat(dir, &st) != 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "%s \"%s\" does not exist (%s); expected a writable folder", name, dir,
                         strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "%s \"%s\" is not a folder; expected a writable folder", name, dir);
  if (access(dir, W_OK | X_OK) != 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s \"%s\" is not writable (%s)", name, dir,
                         strerror(errno));
  return TKB_OK;
}

/* Re-records the thread's message behind "<flag>: ", which the CLI's messages start with. */
static tkb_status prefixed(tkb_status st, tkb__naming naming, const char *flag) {
  if (naming != TKB__NAME_FLAGS) return st;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tkb_last_error());
  return tkb_set_error(st, "%s: %s", flag, msg);
}

tkb_status tkb__bench_check(const tkb_device *dev, const tkb_bench_opts *opts, tkb__naming naming,
                            const tkb__method **method, tkb__stop_choice *stop_out) {
  const tkb_bench_opts o = opts ? *opts : TKB_BENCH_OPTS_DEFAULT;
  tkb_status st = check_counts(&o);
  if (st) return st;
  const bool flags = naming == TKB__NAME_FLAGS;
  /* the regex first: a typo is reported as such, whatever the method */
  if (o.event_filter_regex && *o.event_filter_regex) {
    tkb__event_filter f;
    st = tkb__event_filter_init(&f, o.event_filter_regex);
    if (st) return prefixed(st, naming, "--event-filter");
    tkb__event_filter_free(&f);
  }
  if (o.trace_dir && (st = check_trace_dir(o.trace_dir, flags ? "--trace-dir" : "trace_dir")))
    return st;
  const tkb__method *m = NULL;
  st = tkb__method_lookup(dev, o.method, &m);
  if (st) return prefixed(st, naming, "--method");
  const unsigned refused = options_given(&o) & ~m->options;
  for (size_t i = 0; i < TKB_ARRAY_LEN(option_facts); i++)
    if (refused & option_facts[i].bit) return refuse_option(&option_facts[i], naming, &o, m, dev);
  if (o.cold_cache && !dev->backend->flush_cache)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, "%s: device %s cannot flush its caches",
                         flags ? "--cold-cache" : "cold_cache", tkb_device_name(dev));
  tkb__stop_choice stop;
  st = tkb__stop_parse(o.stop, flags ? "--stop" : "stop", &stop);
  if (st) return st;
  if (m->reading == TKB__READ_COUNT && o.perf_counters && *o.perf_counters)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "%s \"%s\" cannot be counted beside %sinstructions, which counts "
                         "the instructions itself (under Callgrind no PMU is visible)",
                         flags ? "--perf-counters" : "perf_counters", o.perf_counters,
                         flags ? "--method " : "method ");
  if (o.perf_counters && *o.perf_counters && (st = tkb__perf_check(o.perf_counters)) != TKB_OK)
    return prefixed(st, naming, "--perf-counters");
  if (method) *method = m;
  if (stop_out) *stop_out = stop;
  return TKB_OK;
}
