/*
 * meter.c - the reading of one timed call under its method (bench.h). The device-side methods share one semantics across
 * backends: a backend only reports the call's activity intervals; here they become
 *   opencl_events, cuda_events, cupti:   sum of the intervals' lengths
 *   profiler, hermetic_profiler:         union of the intervals whose name
 *                                        event_filter_regex keeps (Tokamax's xprof)
 * with Tokamax's checks for the profiler: an error when no event is kept, and when the
 * device time exceeds the host time around the call. `profiler` also leaves a Chrome
 * trace of the last timed call (Tokamax captures its metadata on the last iteration).
 * Which method reads what is methods.c's table; the options were checked there.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tkb__meter_close(tkb__meter *m) {
  if (m->timer) m->timer_ops->close(m->timer);
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
  tkb_status st = TKB_OK;
  if (method->reading == TKB__READ_DEVICE_UNION)
    st = tkb__event_filter_init(&m->filter, o->event_filter_regex);
  if (!st && device) {
    /* twice: the call's intervals as reported (for the trace) and a scratch copy that
     * the filter compacts and the union sorts */
    m->last = malloc(2 * TKB_MAX_CALL_INTERVALS * sizeof *m->last);
    m->keep = malloc(TKB_MAX_CALL_INTERVALS * sizeof *m->keep);
    if (!m->last || !m->keep)
      st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the device-timing buffers");
  }
  if (!st && device) {
    m->timer_ops = tkb__method_timer(dev, method);
    const tkb_timer_opts to = {.method = method->name,
                               .activity = method->activity,
                               .blocking_kernel = (method->options & TKB__OPT_BLOCKING_KERNEL) &&
                                                  !o->no_blocking_kernel};
    st = m->timer_ops ? m->timer_ops->open(dev, &to, &m->timer)
                      : tkb_set_error(TKB_ERR_INTERNAL, "device %s has method %s but no %s timer",
                                      tkb_device_name(dev), method->name, method->timer);
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
  return m->timer ? m->timer_ops->start(m->timer) : TKB_OK;
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
  tkb_status st = m->timer_ops->stop(m->timer, &iv, &n);
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
  if (!m->timer || !m->timer_ops->metadata) return 0;
  int n = m->timer_ops->metadata(m->timer, kv, cap);
  return n < 0 ? 0 : n > cap ? cap : n;
}

tkb_status tkb__meter_write_trace(tkb__meter *m, const char *dir, const char *stem, const char *function,
                                  const char *entry, char *path, size_t cap) {
  if (!dir || !*dir) dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  char fn[200]; /* an entry's name: op, spec, mode and implementation tell the traces apart */
  snprintf(fn, sizeof fn, "%s", stem ? stem : "call");
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
                          .entry = entry,
                          .method = m->method->name,
                          .filter = m->filter.active ? m->filter.pattern : NULL,
                          .device_time_ms = m->last_ms,
                          .host_time_ms = m->last_host_ms};
  return tkb__trace_write(path, m->last, m->n_last, m->filter.active ? m->keep : NULL, &info);
}
