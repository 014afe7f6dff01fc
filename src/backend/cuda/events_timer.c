/*
 * events_timer.c - the CUDA "events" timer (method cuda_events): an event before the
 * call (start) and one right behind its work (synchronize records it, device.c); one
 * interval of cudaEventElapsedTime. With blocking_kernel, start first launches nvbench's
 * blocking kernel (blocking_kernel.h), which synchronize releases after the stop event:
 * the events then time the call's work queued back to back, without the host's launch
 * gaps. A kernel that timed out (the call waited for the device itself) turns it off for
 * the rest of the benchmark; metadata "blocking_kernel" reports how it went.
 */
#include "blocking_kernel.h"
#include "cu_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct events_timer {
  tkb_device *dev;
  bool block;                 /* launched before each call (turned off by a timeout) */
  bool block_asked;           /* the method asked for it */
  int calls;                  /* calls timed so far */
  int timeout_call;           /* the call (from 1) whose kernel timed out, or 0 */
  const char *off_why;        /* asked for but off from the start for this reason, or NULL */
  int waited_calls, first_waited_call;
  char note[400];
  tkb_interval iv;
} events_timer;

/* The blocking kernel's flags: two words of pinned host memory the device reads and
 * writes over the bus (allocated once per device, kept like the device's other state). */
static tkb_status block_flags(tkb_device *dev) {
  tkb_cu_device *d = tkb_cu_dev(dev);
  if (d->block_flags) return TKB_OK;
  void *host = NULL, *mapped = NULL;
  cudaError_t err = cudaHostAlloc(&host, TKB_CU_BLOCK_WORDS * sizeof(unsigned), cudaHostAllocMapped);
  if (err != cudaSuccess)
    return tkb_cu_fail(dev, "allocating the blocking kernel's flags (cudaHostAlloc, mapped; "
                       "no_blocking_kernel times without it)", err);
  err = cudaHostGetDevicePointer(&mapped, host, 0);
  if (err != cudaSuccess) {
    cudaFreeHost(host);
    return tkb_cu_fail(dev, "mapping the blocking kernel's flags (cudaHostGetDevicePointer; "
                       "no_blocking_kernel times without it)", err);
  }
  memset(host, 0, TKB_CU_BLOCK_WORDS * sizeof(unsigned));
  d->block_flags = host;
  d->block_flags_dev = mapped;
  return TKB_OK;
}

static tkb_status events_open(tkb_device *dev, const tkb_timer_opts *opts, tkb_timer **out) {
  tkb_cu_device *d = tkb_cu_dev(dev);
  tkb_status st = tkb_cu_timer_claim(dev);
  if (st) return st;
  const bool block = opts->blocking_kernel;
  if (block && (st = block_flags(dev)) != TKB_OK) return st;
  events_timer *t = calloc(1, sizeof *t);
  if (!t) return tkb_cu_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the CUDA events timer");
  t->dev = dev;
  t->block = t->block_asked = block;
  /* with synchronous launches every launch waits for the device: the kernel's own
   * launch would wait out its timeout before each call */
  const char *clb = getenv("CUDA_LAUNCH_BLOCKING");
  if (block && clb && strcmp(clb, "1") == 0) {
    t->block = false;
    t->off_why = "CUDA_LAUNCH_BLOCKING=1 makes every launch wait for the device";
  }
  d->rec = t;
  *out = (tkb_timer *)t;
  return TKB_OK;
}

/* Launches the blocking kernel of a new generation (no reset of the flags, which an
 * earlier call's kernel might still read: blocking_kernel.h). */
static tkb_status launch_block(events_timer *t) {
  tkb_cu_device *d = tkb_cu_dev(t->dev);
  if (++d->block_gen == 0) d->block_gen = 1;
  struct timespec l0, l1;
  clock_gettime(CLOCK_MONOTONIC, &l0);
  cudaError_t err =
      (cudaError_t)tkb_cu_block_launch(d->block_flags_dev, TKB_CU_BLOCK_TIMEOUT_NS, d->block_gen);
  clock_gettime(CLOCK_MONOTONIC, &l1);
  if (err != cudaSuccess)
    return tkb_cu_fail(t->dev, "launching the blocking kernel (cuda_events; no_blocking_kernel "
                       "times without it)", err);
  d->blocking = true;
  /* a launch that returned only after the kernel's timeout waited for it: launches are
   * synchronous (a serializing profiler, CUDA_LAUNCH_BLOCKING set another way) */
  const int64_t launch_ns = (int64_t)(l1.tv_sec - l0.tv_sec) * 1000000000 + (l1.tv_nsec - l0.tv_nsec);
  if (launch_ns >= (int64_t)TKB_CU_BLOCK_TIMEOUT_NS) {
    tkb_cu_unblock(d, false);
    t->block = false;
    t->off_why = "its launch waited for it to time out: launches are synchronous here (a "
                 "profiler that serializes them, or CUDA_LAUNCH_BLOCKING)";
  }
  return TKB_OK;
}

static tkb_status events_start(tkb_timer *timer) {
  events_timer *t = (events_timer *)timer;
  tkb_cu_device *d = tkb_cu_dev(t->dev);
  tkb_status st = tkb_cu_use(t->dev); /* a thread-local compare: free when current */
  if (st) return st;
  d->host_waited = false;
  if (t->block && (st = launch_block(t)) != TKB_OK) return st;
  cudaError_t err = cudaEventRecord(d->ev_start, 0);
  if (err != cudaSuccess) {
    tkb_cu_unblock(d, false);
    return tkb_cu_fail(t->dev, "cudaEventRecord (cuda_events start)", err);
  }
  d->events_armed = true;
  d->stop_records = 0;
  return TKB_OK;
}

static tkb_status events_stop(tkb_timer *timer, const tkb_interval **iv, size_t *n) {
  events_timer *t = (events_timer *)timer;
  tkb_cu_device *d = tkb_cu_dev(t->dev);
  *iv = &t->iv;
  *n = 0;
  tkb_status st = tkb_cu_use(t->dev);
  if (st) return st;
  cudaError_t err = cudaSuccess;
  bool armed = d->events_armed;
  d->events_armed = false;
  if (armed && d->stop_records == 0) { /* no synchronize since the start (never, from the core) */
    err = cudaEventRecord(d->ev_stop, 0);
    d->stop_records = 1;
    tkb_cu_unblock(d, false);
    if (err != cudaSuccess) return tkb_cu_fail(t->dev, "cudaEventRecord (cuda_events stop)", err);
  }
  if (!armed)
    return tkb_cu_error(TKB_ERR_INTERNAL, "cuda_events on %s: timer_stop without timer_start",
                        t->dev->name);
  err = cudaEventSynchronize(d->ev_stop);
  if (err != cudaSuccess) return tkb_cu_fail(t->dev, "cudaEventSynchronize (cuda_events stop)", err);
  t->calls++;
  /* more than the core's one synchronize: the call synchronized inside */
  if (d->stop_records > 1) d->host_waited = true;
  if (t->block && d->host_waited && t->waited_calls++ == 0) t->first_waited_call = t->calls;
  /* the kernel stopped waiting before the call was queued: the call waited for the
   * device itself, and every later call would wait out the timeout the same way */
  if (t->block && ((volatile unsigned *)d->block_flags)[TKB_CU_BLOCK_TIMED_OUT] == d->block_gen) {
    t->block = false;
    t->timeout_call = t->calls;
  }
  float ms = 0;
  err = cudaEventElapsedTime(&ms, d->ev_start, d->ev_stop);
  if (err != cudaSuccess) return tkb_cu_fail(t->dev, "cudaEventElapsedTime (cuda_events)", err);
  if (!(ms >= 0))
    return tkb_cu_error(TKB_ERR_DEVICE, "cuda_events on %s: cudaEventElapsedTime gave %g ms",
                        t->dev->name, (double)ms);
  t->iv = (tkb_interval){.start_ns = 0, .end_ns = (int64_t)((double)ms * 1e6 + 0.5), .name = "cuda_events"};
  *n = 1;
  return TKB_OK;
}

void tkb_cu_unblock(tkb_cu_device *d, bool host_wait) {
  if (!d->blocking) return;
  d->blocking = false;
  __atomic_store_n(&d->block_flags[TKB_CU_BLOCK_RELEASE], d->block_gen, __ATOMIC_SEQ_CST);
  if (host_wait && d->rec) d->host_waited = true;
}

static int events_metadata(tkb_timer *timer, tkb_meta *kv, int cap) {
  events_timer *t = (events_timer *)timer;
  if (cap < 1) return 0;
  if (!t->block_asked)
    snprintf(t->note, sizeof t->note, "off (no_blocking_kernel: each call's time includes the "
             "host's launch gaps)");
  else if (t->off_why)
    snprintf(t->note, sizeof t->note, "off (%s): each call's time includes the host's launch "
             "gaps", t->off_why);
  else if (t->timeout_call)
    snprintf(t->note, sizeof t->note, "timed out after %llu ms in timed call %d of %d and was off "
             "from then on: the call waits for the device itself (a synchronize or a copy to "
             "the host outside tkbench), queues more launches than the stream holds, or the host "
             "took that long to queue it (a lazily loaded module: CUDA_MODULE_LOADING=EAGER), so "
             "calls %d on include the host's launch gaps", TKB_CU_BLOCK_TIMEOUT_NS / 1000000ull,
             t->timeout_call, t->calls, t->timeout_call);
  else if (t->waited_calls)
    snprintf(t->note, sizeof t->note, "on, released early in %d of %d timed calls (first: %d), "
             "where the call waited for the device (a synchronize, a download or a host copy) "
             "or queues more launches than the stream holds: their work after that is timed "
             "with the host's launch gaps",
             t->waited_calls, t->calls, t->first_waited_call);
  else
    snprintf(t->note, sizeof t->note, "on (each call's work queued behind it, then timed "
             "without the host's launch gaps)");
  kv[0] = (tkb_meta){"blocking_kernel", t->note};
  return 1;
}

static void events_close(tkb_timer *timer) {
  events_timer *t = (events_timer *)timer;
  if (!t) return;
  tkb_cu_device *d = tkb_cu_dev(t->dev);
  tkb_cu_unblock(d, false); /* a call that failed before its synchronize */
  if (d->rec == t) d->rec = NULL;
  d->events_armed = false;
  free(t);
}

const tkb_timer_ops tkb_cu_events_timer = {
    .kind = TKB_TIMER_EVENTS,
    .open = events_open,
    .start = events_start,
    .stop = events_stop,
    .close = events_close,
    .metadata = events_metadata,
};
