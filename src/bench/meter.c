/*
 * meter.c - timing methods: which exist, which a device has, and the reading of one
 * timed call under each (meter.h). The device-side methods share one semantics across
 * backends: a backend only reports the call's activity intervals; here they become
 *   opencl_events, cuda_events, cupti:   sum of the intervals' lengths
 *   profiler, hermetic_profiler:         union of the intervals whose name
 *                                        event_filter_regex keeps (Tokamax's xprof)
 * with Tokamax's checks for the profiler: an error when no event is kept, and when the
 * device time exceeds the host time around the call. `profiler` also leaves a Chrome
 * trace of the last timed call (Tokamax captures its metadata on the last iteration).
 */
#include "meter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const tkb__method methods[] = {
    {"wallclock", TKB__READ_WALL, false},
    {"cpu_time", TKB__READ_CPU, false},
    {"cuda_events", TKB__READ_DEVICE_SUM, false},
    {"cupti", TKB__READ_DEVICE_SUM, false},
    {"profiler", TKB__READ_DEVICE_UNION, true},
    {"hermetic_profiler", TKB__READ_DEVICE_UNION, false},
    {"opencl_events", TKB__READ_DEVICE_SUM, false},
};

static const struct {
  const char *alias, *name;
} aliases[] = {{"xprof", "profiler"}, {"hermetic_xprof", "hermetic_profiler"}};

/* Every name, in the order messages list them. */
static const char *const known[] = {"wallclock", "cpu_time", "cuda_events", "cupti", "profiler",
                                    "hermetic_profiler", "xprof", "hermetic_xprof",
                                    "opencl_events", NULL};

static void join(const char *const *list, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; list[i] && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", list[i]);
}

tkb_status tkb__method_lookup(const tkb_device *dev, const char *asked, const tkb__method **out) {
  const char *const *have = tkb_device_methods(dev);
  const char *m = (!asked || !*asked || strcmp(asked, "auto") == 0) ? have[0] : asked;
  const char *canon = m;
  for (size_t i = 0; i < TKB_ARRAY_LEN(aliases); i++)
    if (strcmp(m, aliases[i].alias) == 0) canon = aliases[i].name;
  for (int i = 0; have[i]; i++) {
    if (strcmp(have[i], canon) != 0) continue;
    for (size_t k = 0; k < TKB_ARRAY_LEN(methods); k++)
      if (strcmp(methods[k].name, canon) == 0) {
        *out = &methods[k];
        return TKB_OK;
      }
    return tkb_set_error(TKB_ERR_INTERNAL, "device %s lists method \"%s\", which tkbench does not know",
                         tkb_device_name(dev), canon);
  }
  char list[256];
  join(have, list, sizeof list);
  for (int i = 0; known[i]; i++)
    if (strcmp(known[i], m) == 0)
      return tkb_set_error(TKB_ERR_UNSUPPORTED,
                           "method \"%s\" is not available on device %s; %s has: %s (or auto)", m,
                           tkb_device_name(dev), tkb_device_name(dev), list);
  char every[512];
  join(known, every, sizeof every);
  return tkb_set_error(TKB_ERR_NOT_FOUND, "method \"%s\" is not a timing method; known: auto, %s",
                       m, every);
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

void tkb__meter_close(tkb__meter *m) {
  if (m->timer) m->dev->backend->timer_close(m->timer);
  tkb__event_filter_free(&m->filter);
  free(m->last);
  free(m->keep);
  memset(m, 0, sizeof *m);
}

tkb_status tkb__meter_open(tkb__meter *m, tkb_device *dev, const tkb__method *method,
                           const tkb_bench_opts *o) {
  memset(m, 0, sizeof *m);
  m->method = method;
  m->dev = dev;
  m->cold_cache = o->cold_cache;
  m->clock = method->reading == TKB__READ_CPU ? tkb__cpu_now_ns : tkb__now_ns;
  const bool device = method->reading >= TKB__READ_DEVICE_SUM;
  const bool filters = method->reading == TKB__READ_DEVICE_UNION;
  if (o->event_filter_regex && *o->event_filter_regex && !filters)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "event_filter_regex \"%s\" applies to the profiler methods (profiler, "
                         "hermetic_profiler); method %s on %s has no device events to filter",
                         o->event_filter_regex, method->name, tkb_device_name(dev));
  if (m->cold_cache && !dev->backend->flush_cache)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, "cold_cache: device %s cannot flush its caches",
                         tkb_device_name(dev));
  if (o->no_blocking_kernel && strcmp(method->name, "cuda_events") != 0)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "no_blocking_kernel applies to method cuda_events, the only one that "
                         "holds the stream with a blocking kernel; method %s on %s has none",
                         method->name, tkb_device_name(dev));
  tkb_status st = TKB_OK;
  if (filters) st = tkb__event_filter_init(&m->filter, o->event_filter_regex);
  if (!st && device) {
    /* twice: the call's intervals as reported (for the trace) and a scratch copy that
     * the filter compacts and the union sorts */
    m->last = malloc(2 * TKB_MAX_CALL_INTERVALS * sizeof *m->last);
    m->keep = malloc(TKB_MAX_CALL_INTERVALS * sizeof *m->keep);
    if (!m->last || !m->keep)
      st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the device-timing buffers");
  }
  if (!st && device) {
    if (!dev->backend->timer_open)
      st = tkb_set_error(TKB_ERR_INTERNAL, "device %s lists method %s but has no device timer",
                         tkb_device_name(dev), method->name);
    else
      st = dev->backend->timer_open(dev, method->name, o, &m->timer);
  }
  /* the first flush allocates its buffer: here, not before a timed call */
  if (!st && m->cold_cache) st = dev->backend->flush_cache(dev);
  if (st) tkb__meter_close(m);
  return st;
}

tkb_status tkb__meter_before(tkb__meter *m) {
  if (m->cold_cache) {
    tkb_status st = m->dev->backend->flush_cache(m->dev);
    if (st) return st;
  }
  return m->timer ? m->dev->backend->timer_start(m->timer) : TKB_OK;
}

/* "a, b, c" of the distinct names of iv[0..n) (at most 8), for messages. */
static void names_of(const tkb_interval *iv, size_t n, char *buf, size_t cap) {
  size_t len = 0, shown = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && len < cap; i++) {
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++)
      seen = iv[j].name == iv[i].name || (iv[j].name && iv[i].name && !strcmp(iv[j].name, iv[i].name));
    if (seen) continue;
    if (++shown > 8) {
      snprintf(buf + len, cap - len, ", ...");
      return;
    }
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", iv[i].name ? iv[i].name : "?");
  }
}

tkb_status tkb__meter_after(tkb__meter *m, int64_t host_ns, double *ms) {
  m->last_host_ms = (double)host_ns / 1e6;
  if (!m->timer) {
    *ms = m->last_ms = m->last_host_ms;
    return TKB_OK;
  }
  const tkb_interval *iv = NULL;
  size_t n = 0;
  tkb_status st = m->dev->backend->timer_stop(m->timer, &iv, &n);
  if (st) return st;
  if (n > TKB_MAX_CALL_INTERVALS) n = TKB_MAX_CALL_INTERVALS; /* the backend errs first */
  tkb_interval *work = m->last + TKB_MAX_CALL_INTERVALS;
  memcpy(m->last, iv, n * sizeof *iv);
  memcpy(work, iv, n * sizeof *iv);
  m->n_last = m->n_kept_last = n;
  const char *dev = tkb_device_name(m->dev);
  if (n == 0)
    return tkb_set_error(TKB_ERR_NOT_FOUND,
                         "method %s on %s: the call enqueued no device command (kernel, copy or "
                         "fill), so there is no device time to report; time it with wallclock",
                         m->method->name, dev);
  int64_t ns;
  if (m->method->reading == TKB__READ_DEVICE_SUM) {
    ns = tkb__intervals_sum_ns(work, n);
  } else {
    size_t k = tkb__event_filter_apply(&m->filter, work, n, m->keep);
    m->n_kept_last = k;
    if (k == 0) {
      char names[400];
      names_of(m->last, n, names, sizeof names);
      return tkb_set_error(TKB_ERR_NOT_FOUND,
                           "event_filter_regex \"%s\" matches none of the %zu device commands "
                           "of the call on %s (%s); the profiler has no event to time",
                           m->filter.pattern, n, dev, names);
    }
    ns = tkb__intervals_union_ns(work, k);
    if (ns > host_ns)
      return tkb_set_error(TKB_ERR_DEVICE,
                           "method %s on %s: the device time of the call (%.6f ms, the union of "
                           "%zu commands) is longer than the host time around it (%.6f ms): the "
                           "device and host clocks disagree, so neither can be trusted",
                           m->method->name, dev, (double)ns / 1e6, k, (double)host_ns / 1e6);
  }
  *ms = m->last_ms = (double)ns / 1e6;
  return TKB_OK;
}

int tkb__meter_notes(tkb__meter *m, tkb_meta *kv, int cap) {
  if (!m->timer || !m->dev->backend->timer_metadata) return 0;
  int n = m->dev->backend->timer_metadata(m->timer, kv, cap);
  return n < 0 ? 0 : n > cap ? cap : n;
}

tkb_status tkb__meter_write_trace(tkb__meter *m, const char *dir, const char *function,
                                  char *path, size_t cap) {
  if (!dir || !*dir) dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  char fn[64];
  snprintf(fn, sizeof fn, "%s", function ? function : "call");
  for (char *c = fn; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '_' || *c == '-'))
      *c = '_';
  /* mkstemp reserves a unique name; the trace is that name + ".json" (mkstemps, which
   * takes a suffix, is not POSIX) */
  char base[1024];
  int len = snprintf(base, sizeof base, "%s/tkbench-trace-%s-XXXXXX", dir, fn);
  if (len < 0 || (size_t)len + 6 > sizeof base || (size_t)len + 6 > cap)
    return tkb_set_error(TKB_ERR_IO, "trace_dir \"%s\" is too long for a path", dir);
  int fd = mkstemp(base);
  if (fd < 0)
    return tkb_set_error(TKB_ERR_IO, "cannot create a trace file in %s (trace_dir): %s", dir,
                         strerror(errno));
  close(fd);
  snprintf(path, cap, "%s.json", base);
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
  int err = errno;
  unlink(base);
  if (fd < 0)
    return tkb_set_error(TKB_ERR_IO, "cannot create the trace file %s: %s", path, strerror(err));
  close(fd);
  char process[320];
  snprintf(process, sizeof process, "%s (%s)", tkb_device_name(m->dev),
           tkb_device_description(m->dev));
  tkb__trace_info info = {.process = process,
                          .thread = "command queue",
                          .function = function,
                          .method = m->method->name,
                          .filter = m->filter.active ? m->filter.pattern : NULL,
                          .device_time_ms = m->last_ms,
                          .host_time_ms = m->last_host_ms};
  return tkb__trace_write(path, m->last, m->n_last, m->filter.active ? m->keep : NULL, &info);
}
