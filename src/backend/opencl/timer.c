/*
 * timer.c - device timing on OpenCL: while a timer records, every command the backend
 * enqueues (kernels, fills, copies, transfers) gets an event in the timer's ring, and
 * timer_stop reads CL_PROFILING_COMMAND_START and _END of each into an interval named
 * after the kernel or command. The ring and the intervals are allocated by timer_open,
 * sized TKB_MAX_CALL_INTERVALS; start and stop allocate nothing of tkbench's (the driver
 * creates and frees its event objects).
 */
#include "cl_backend.h"

#include <stdlib.h>
#include <string.h>

struct tkb_timer {
  tkb_device *dev;
  size_t n;          /* events recorded in this call */
  size_t dropped;    /* commands past the ring's end */
  cl_event events[TKB_MAX_CALL_INTERVALS];
  const char *names[TKB_MAX_CALL_INTERVALS];
  tkb_interval iv[TKB_MAX_CALL_INTERVALS];
};

cl_event *tkb_cl_record(tkb_cl_device *d, const char *name) {
  struct tkb_timer *t = d->rec;
  if (!t) return NULL;
  if (t->n == TKB_MAX_CALL_INTERVALS) {
    t->dropped++;
    return NULL;
  }
  t->names[t->n] = name;
  return &t->events[t->n++];
}

tkb_status tkb_cl_timer_open(tkb_device *dev, const tkb_timer_opts *opts, tkb_timer **out) {
  (void)opts; /* every command gets its event (the driver times them all); the core
                 keeps what the method reads */
  tkb_cl_device *d = tkb_cl_dev(dev);
  if (d->rec)
    return tkb_cl_error(TKB_ERR_DEVICE, "%s is already timing another benchmark: one timed "
                        "benchmark per device at a time", dev->name);
  tkb_timer *t = calloc(1, sizeof *t);
  if (!t) return tkb_cl_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the OpenCL event buffers");
  t->dev = dev;
  *out = t;
  return TKB_OK;
}

tkb_status tkb_cl_timer_start(tkb_timer *t) {
  t->n = 0;
  t->dropped = 0;
  tkb_cl_dev(t->dev)->rec = t;
  return TKB_OK;
}

tkb_status tkb_cl_timer_stop(tkb_timer *t, const tkb_interval **iv, size_t *n) {
  tkb_cl_device *d = tkb_cl_dev(t->dev);
  d->rec = NULL;
  /* the core synchronized, but a command that failed may still be queued: wait */
  cl_int err = clFinish(d->queue);
  tkb_status st = err == CL_SUCCESS ? TKB_OK : tkb_cl_fail(t->dev, "clFinish", err);
  for (size_t i = 0; i < t->n; i++) {
    cl_ulong s = 0, e = 0;
    cl_int e1 = clGetEventProfilingInfo(t->events[i], CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    cl_int e2 = clGetEventProfilingInfo(t->events[i], CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
    clReleaseEvent(t->events[i]);
    if (!st && (e1 != CL_SUCCESS || e2 != CL_SUCCESS))
      st = tkb_cl_fail(t->dev, "reading an event's profiling times (clGetEventProfilingInfo)",
                       e1 != CL_SUCCESS ? e1 : e2);
    t->iv[i] = (tkb_interval){.start_ns = (int64_t)s, .end_ns = (int64_t)e, .name = t->names[i]};
  }
  if (!st && t->dropped)
    st = tkb_cl_error(TKB_ERR_UNSUPPORTED, "the call enqueued %zu commands on %s, more than the "
                      "%d tkbench records per timed call (TKB_MAX_CALL_INTERVALS); time it with "
                      "wallclock", t->n + t->dropped, t->dev->name, TKB_MAX_CALL_INTERVALS);
  *iv = t->iv;
  *n = st ? 0 : t->n;
  return st;
}

void tkb_cl_timer_close(tkb_timer *t) {
  if (!t) return;
  tkb_cl_device *d = tkb_cl_dev(t->dev);
  if (d->rec == t) { /* closed while recording (an error mid-call): drop the events */
    d->rec = NULL;
    clFinish(d->queue);
    for (size_t i = 0; i < t->n; i++) clReleaseEvent(t->events[i]);
  }
  free(t);
}
