/*
 * cupti_timer.c - the CUDA "activity" timer (methods cupti, profiler, hermetic_profiler):
 * CUPTI's activity API. CONCURRENT_KERNEL records always; MEMCPY and MEMSET records too
 * when the method reads copies and fills (tkb_timer_opts.activity): the core sums them
 * (cupti, Tokamax's) or unites those its filter keeps (the profiler methods).
 *
 * CUPTI records are attributed to the call by correlation id: start pushes an external
 * correlation id (the call number), stop pops it, and CUPTI links every CUDA API call
 * made in between to it (EXTERNAL_CORRELATION records); when no link arrives, by time
 * window on CUPTI's clock (records.c does both, host only). CUPTI writes those links only
 * for API calls it records, so the RUNTIME and DRIVER kinds are enabled as well (their
 * records are skipped; nvFuser's CUPTI timer does the same). CUPTI delivers records in
 * buffers from a pool allocated when the first CUPTI timer opens; a request that finds
 * the pool empty, a record past the store's end, or a record CUPTI itself dropped makes
 * stop fail with a sentence, never a silently short time. CUPTI is per process: one
 * CUPTI timer at a time, and another profiler (Nsight Systems or Compute, another CUPTI
 * user) already attached is reported as such.
 */
#include "cu_backend.h"
#include "records.h"

#include <cupti.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUF 16
#define BUF_BYTES ((size_t)1 << 20)
#define CORR_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0

static struct {
  pthread_once_t once;
  tkb_status init_st;
  char init_why[600];
  tkb_cu_store *store;
  uint8_t *bufs[NBUF];
  atomic_uint free_mask;      /* bit i: bufs[i] is free */
  atomic_size_t pool_empty;   /* requests that found no free buffer */
  atomic_size_t dropped;      /* records CUPTI reports dropped */
  atomic_size_t bad_buffers;  /* buffers whose records ended in an incomplete one */
  atomic_int bad_buffer_status;
  atomic_bool timer_open;     /* one CUPTI timer per process */
  uint64_t call;
} g = {.once = PTHREAD_ONCE_INIT};

typedef struct cupti_timer {
  tkb_device *dev;
  const char *method;         /* for messages */
  unsigned kinds;             /* TKB_CU_KIND_BIT mask of the records kept */
  uint64_t call, win_start;
  bool pushed;                /* an external correlation id is pushed (start without stop) */
  tkb_interval iv[TKB_MAX_CALL_INTERVALS];
} cupti_timer;

/* CUPTI's name for r ("CUPTI_ERROR_NOT_INITIALIZED"); messages add the number too. */
static const char *cupti_str(CUptiResult r) {
  const char *s = NULL;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) s = "unknown CUPTI error";
  return s;
}

/* ---- CUPTI's buffer callbacks (called by CUPTI, possibly on its own thread) ---- */

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = NULL;
  *size = 0;
  *max_records = 0; /* as many as fit */
  unsigned mask = atomic_load(&g.free_mask);
  while (mask) {
    unsigned bit = mask & -mask;
    if (atomic_compare_exchange_weak(&g.free_mask, &mask, mask & ~bit)) {
      *buffer = g.bufs[__builtin_ctz(bit)];
      *size = BUF_BYTES;
      return;
    }
  }
  atomic_fetch_add(&g.pool_empty, 1); /* CUPTI drops the records it had no room for */
}

static const char *memcpy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
  }
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                  size_t valid) {
  (void)size;
  tkb_cu_store *s = g.store;
  pthread_mutex_lock(&s->lock);
  CUpti_Activity *r = NULL;
  CUptiResult next;
  while ((next = cuptiActivityGetNextRecord(buffer, valid, &r)) == CUPTI_SUCCESS) {
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
        /* the name is CUPTI's until the buffer is reused: copied (interned) here */
        tkb_cu_add_record(s, TKB_CU_KERNEL, k->start, k->end, k->correlationId, k->name);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
        tkb_cu_add_record(s, TKB_CU_MEMCPY, m->start, m->end, m->correlationId,
                          memcpy_name(m->copyKind));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)r;
        tkb_cu_add_record(s, TKB_CU_MEMSET, m->start, m->end, m->correlationId, "memset");
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *c = (const CUpti_ActivityExternalCorrelation *)r;
        if (c->externalKind == CORR_KIND) tkb_cu_add_link(s, c->externalId, c->correlationId);
        break;
      }
      default: break;
    }
  }
  pthread_mutex_unlock(&s->lock);
  /* MAX_LIMIT_REACHED is the normal end; anything else (INVALID_KIND: an incomplete
   * record) leaves the rest of the buffer unread */
  if (next != CUPTI_ERROR_MAX_LIMIT_REACHED) {
    atomic_fetch_add(&g.bad_buffers, 1);
    atomic_store(&g.bad_buffer_status, (int)next);
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
    atomic_fetch_add(&g.dropped, dropped);
  for (int i = 0; i < NBUF; i++)
    if (g.bufs[i] == buffer) atomic_fetch_or(&g.free_mask, 1u << i);
}

/* ---- process-wide CUPTI setup (once) ---- */

static void cupti_init(void) {
  const char *inj = getenv("CUDA_INJECTION64_PATH");
  if (inj && *inj) {
    g.init_st = TKB_ERR_UNSUPPORTED;
    snprintf(g.init_why, sizeof g.init_why, "another profiler is attached to this process "
             "(CUDA_INJECTION64_PATH=%s, e.g. Nsight Systems or Nsight Compute), and CUPTI serves "
             "one client: run without it, or time with cuda_events or wallclock", inj);
    return;
  }
  g.store = tkb_cu_store_new();
  for (int i = 0; i < NBUF && g.store; i++) {
    g.bufs[i] = aligned_alloc(8, BUF_BYTES);
    if (!g.bufs[i]) break;
    atomic_fetch_or(&g.free_mask, 1u << i);
  }
  if (!g.store || atomic_load(&g.free_mask) != (1u << NBUF) - 1) {
    g.init_st = TKB_ERR_OUT_OF_MEMORY;
    snprintf(g.init_why, sizeof g.init_why, "out of memory for CUPTI's record buffers (%d x %zu "
             "bytes) and record store", NBUF, BUF_BYTES);
    return;
  }
  CUptiResult r = cuptiActivityRegisterCallbacks(buf_request, buf_complete);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || r == CUPTI_ERROR_NOT_COMPATIBLE) {
    g.init_st = TKB_ERR_UNSUPPORTED;
    snprintf(g.init_why, sizeof g.init_why, "CUPTI is already in use by another profiler in "
             "this process (%s), and it serves one client: run without the other profiler, or "
             "time with cuda_events or wallclock", cupti_str(r));
  } else if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    g.init_st = TKB_ERR_UNSUPPORTED;
    snprintf(g.init_why, sizeof g.init_why, "CUPTI refuses this user (%s): the driver restricts "
             "profiling to administrators (NVreg_RestrictProfilingToAdminUsers); time with "
             "cuda_events", cupti_str(r));
  } else if (r != CUPTI_SUCCESS) {
    g.init_st = TKB_ERR_DEVICE;
    snprintf(g.init_why, sizeof g.init_why, "cuptiActivityRegisterCallbacks failed: %s "
             "(CUPTI status %d)", cupti_str(r), (int)r);
  }
}

/* RUNTIME and DRIVER: without an API kind enabled CUPTI writes no EXTERNAL_CORRELATION
 * records at all (cupti_activity.h, cuptiActivityPushExternalCorrelationId: "the activity
 * API record will be preceded by" one), and every call would fall back to the window. */
static const CUpti_ActivityKind record_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER};
static const char *const record_kind_names[] = {"CONCURRENT_KERNEL", "MEMCPY", "MEMSET",
                                                "EXTERNAL_CORRELATION", "RUNTIME", "DRIVER"};

static void cupti_disable(void) {
  for (size_t i = 0; i < sizeof record_kinds / sizeof record_kinds[0]; i++)
    cuptiActivityDisable(record_kinds[i]);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* The CUPTI record kinds for the activity asked for. */
static unsigned record_mask(unsigned activity) {
  return TKB_CU_KIND_BIT(TKB_CU_KERNEL) |
         (activity & TKB_ACTIVITY_COPIES ? TKB_CU_KIND_BIT(TKB_CU_MEMCPY) : 0) |
         (activity & TKB_ACTIVITY_FILLS ? TKB_CU_KIND_BIT(TKB_CU_MEMSET) : 0);
}

/* Enables the CUPTI record kinds t needs; on failure disables them again. */
static tkb_status enable_kinds(const cupti_timer *t) {
  size_t nk = sizeof record_kinds / sizeof record_kinds[0];
  for (size_t i = 0; i < nk; i++) {
    bool needed = (record_kinds[i] != CUPTI_ACTIVITY_KIND_MEMCPY || (t->kinds & TKB_CU_KIND_BIT(TKB_CU_MEMCPY))) &&
                  (record_kinds[i] != CUPTI_ACTIVITY_KIND_MEMSET || (t->kinds & TKB_CU_KIND_BIT(TKB_CU_MEMSET)));
    if (!needed) continue;
    CUptiResult r = cuptiActivityEnable(record_kinds[i]);
    if (r == CUPTI_SUCCESS) continue;
    cupti_disable();
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || r == CUPTI_ERROR_NOT_COMPATIBLE)
      return tkb_cu_error(TKB_ERR_UNSUPPORTED, "method %s on %s: CUPTI is already in use by "
                          "another profiler (%s); run without it, or time with cuda_events",
                          t->method, t->dev->name, cupti_str(r));
    return tkb_cu_error(TKB_ERR_DEVICE, "method %s on %s: cuptiActivityEnable("
                        "CUPTI_ACTIVITY_KIND_%s) failed: %s (CUPTI status %d)", t->method,
                        t->dev->name, record_kind_names[i], cupti_str(r), (int)r);
  }
  return TKB_OK;
}

static tkb_status cupti_open(tkb_device *dev, const tkb_timer_opts *opts, tkb_timer **out) {
  tkb_cu_device *d = tkb_cu_dev(dev);
  tkb_status st = tkb_cu_timer_claim(dev);
  if (st) return st;
  pthread_once(&g.once, cupti_init);
  if (g.init_st) return tkb_cu_error(g.init_st, "method %s on %s: %s", opts->method, dev->name, g.init_why);
  bool expected = false;
  if (!atomic_compare_exchange_strong(&g.timer_open, &expected, true))
    return tkb_cu_error(TKB_ERR_DEVICE, "method %s on %s: another CUPTI timer is open in this "
                        "process (CUPTI is per process): one CUPTI-timed benchmark at a time",
                        opts->method, dev->name);
  cupti_timer *t = calloc(1, sizeof *t);
  if (!t) {
    atomic_store(&g.timer_open, false);
    return tkb_cu_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the CUPTI timer");
  }
  t->dev = dev;
  t->method = opts->method;
  t->kinds = record_mask(opts->activity);
  if ((st = enable_kinds(t)) != TKB_OK) {
    atomic_store(&g.timer_open, false);
    free(t);
    return st;
  }
  d->rec = t;
  *out = (tkb_timer *)t;
  return TKB_OK;
}

static tkb_status cupti_start(tkb_timer *timer) {
  cupti_timer *t = (cupti_timer *)timer;
  tkb_status st = tkb_cu_use(t->dev); /* a thread-local compare: free when current */
  if (st) return st;
  t->call = ++g.call;
  uint64_t ts = 0;
  CUptiResult r = cuptiGetTimestamp(&ts);
  if (r != CUPTI_SUCCESS)
    return tkb_cu_error(TKB_ERR_DEVICE, "cuptiGetTimestamp on %s failed: %s (CUPTI status %d)",
                        t->dev->name, cupti_str(r), (int)r);
  t->win_start = ts;
  r = cuptiActivityPushExternalCorrelationId(CORR_KIND, t->call);
  if (r != CUPTI_SUCCESS)
    return tkb_cu_error(TKB_ERR_DEVICE, "cuptiActivityPushExternalCorrelationId on %s failed: %s "
                        "(CUPTI status %d)", t->dev->name, cupti_str(r), (int)r);
  t->pushed = true;
  return TKB_OK;
}

static tkb_status cupti_stop(tkb_timer *timer, const tkb_interval **iv, size_t *n) {
  cupti_timer *t = (cupti_timer *)timer;
  *iv = t->iv;
  *n = 0;
  uint64_t last = 0, win_end = 0;
  CUptiResult r = cuptiActivityPopExternalCorrelationId(CORR_KIND, &last);
  t->pushed = false;
  tkb_status st = tkb_cu_use(t->dev);
  if (st) return st;
  cudaError_t err = cudaDeviceSynchronize(); /* a failed call may have left work queued */
  CUptiResult ts = cuptiGetTimestamp(&win_end);
  CUptiResult f = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const char *dev = t->dev->name;
  if (r != CUPTI_SUCCESS)
    return tkb_cu_error(TKB_ERR_DEVICE, "cuptiActivityPopExternalCorrelationId on %s failed: %s "
                        "(CUPTI status %d)", dev, cupti_str(r), (int)r);
  if (r == CUPTI_SUCCESS && last != t->call)
    return tkb_cu_error(TKB_ERR_DEVICE, "cuptiActivityPopExternalCorrelationId on %s popped id "
                        "%llu, not the call's %llu: the timed code pushed or popped a CUSTOM0 "
                        "external correlation id of its own", dev, (unsigned long long)last,
                        (unsigned long long)t->call);
  if (err != cudaSuccess) return tkb_cu_fail(t->dev, "cudaDeviceSynchronize", err);
  if (ts != CUPTI_SUCCESS)
    return tkb_cu_error(TKB_ERR_DEVICE, "cuptiGetTimestamp on %s failed: %s (CUPTI status %d)",
                        dev, cupti_str(ts), (int)ts);
  if (f != CUPTI_SUCCESS)
    return tkb_cu_error(TKB_ERR_DEVICE, "cuptiActivityFlushAll on %s failed: %s (CUPTI status %d)",
                        dev, cupti_str(f), (int)f);
  size_t empty = atomic_exchange(&g.pool_empty, 0), dropped = atomic_exchange(&g.dropped, 0);
  size_t bad_buf = atomic_exchange(&g.bad_buffers, 0);
  tkb_cu_store *s = g.store;
  pthread_mutex_lock(&s->lock);
  tkb_cu_select sel = {.call = t->call, .win_start = t->win_start, .win_end = win_end, .kinds = t->kinds};
  tkb_cu_attr_info info;
  tkb_cu_attr_result a = tkb_cu_attribute(s, &sel, t->iv, TKB_MAX_CALL_INTERVALS, &info);
  size_t k = info.n;
  size_t lost = s->lost_rec + s->lost_link;
  size_t n_rec = s->n_rec, n_link = s->n_link;
  /* the stray's name is interned: it outlives the reset */
  tkb_cu_store_reset(s);
  pthread_mutex_unlock(&s->lock);
  if (bad_buf) {
    CUptiResult b = (CUptiResult)atomic_load(&g.bad_buffer_status);
    return tkb_cu_error(TKB_ERR_DEVICE, "CUPTI delivered %zu record buffer%s on %s whose reading "
                        "stopped early at %s (CUPTI status %d), an incomplete or unknown "
                        "record: the call's device time could be short, so none is reported",
                        bad_buf, bad_buf == 1 ? "" : "s", dev, cupti_str(b), (int)b);
  }
  if (dropped || empty || a == TKB_CU_ATTR_LOST)
    return tkb_cu_error(TKB_ERR_DEVICE, "CUPTI dropped activity records on %s (%zu dropped by "
                        "CUPTI, %zu buffer requests with all %d buffers of %zu bytes in use, %zu "
                        "past tkbench's store of %d records): the call's device time would be "
                        "short, so none is reported; the call launches too much work per call "
                        "for cupti, time it with cuda_events",
                        dev, dropped, empty, NBUF, BUF_BYTES, lost, TKB_CU_MAX_RECORDS);
  if (a == TKB_CU_ATTR_BAD_TIME)
    return tkb_cu_error(TKB_ERR_DEVICE, "CUPTI gave %zu record%s of the call on %s without valid "
                        "timestamps (start 0 or end before start; %zu valid record%s, %s): "
                        "CUPTI could not time them (device memory for its timestamps?), so "
                        "no device time is reported; time it with cuda_events",
                        info.bad_time, info.bad_time == 1 ? "" : "s", dev, k, k == 1 ? "" : "s",
                        info.by_correlation ? "attributed by correlation id" : "no correlation "
                        "links, attributed by time window");
  if (a == TKB_CU_ATTR_STRAY)
    return tkb_cu_error(TKB_ERR_DEVICE, "%zu device record%s (first: %.100s) started during the "
                        "call on %s but %s not linked to it by CUPTI's external correlation "
                        "(%zu links, %zu linked records; %zu records and %zu links in the "
                        "store): a CUDA API call was not linked, or another thread used the "
                        "GPU, so the call's device time is uncertain and none is reported; "
                        "time it with cuda_events",
                        info.strays, info.strays == 1 ? "" : "s",
                        info.stray_name ? info.stray_name : "?", dev,
                        info.strays == 1 ? "is" : "are", info.links, k, n_rec, n_link);
  if (a == TKB_CU_ATTR_TOO_MANY)
    return tkb_cu_error(TKB_ERR_UNSUPPORTED, "the call ran %zu device commands on %s, more than "
                        "the %d tkbench records per timed call (TKB_MAX_CALL_INTERVALS); time it "
                        "with cuda_events or wallclock", k, dev, TKB_MAX_CALL_INTERVALS);
  *n = k;
  return TKB_OK;
}

static void cupti_close(tkb_timer *timer) {
  cupti_timer *t = (cupti_timer *)timer;
  if (!t) return;
  tkb_cu_device *d = tkb_cu_dev(t->dev);
  if (d->rec == t) d->rec = NULL;
  uint64_t last;
  if (t->pushed) cuptiActivityPopExternalCorrelationId(CORR_KIND, &last);
  cupti_disable();
  pthread_mutex_lock(&g.store->lock);
  tkb_cu_store_reset(g.store);
  pthread_mutex_unlock(&g.store->lock);
  atomic_store(&g.timer_open, false);
  free(t);
}

const tkb_timer_ops tkb_cu_cupti_timer = {
    .kind = TKB_TIMER_ACTIVITY,
    .open = cupti_open,
    .start = cupti_start,
    .stop = cupti_stop,
    .close = cupti_close,
};
