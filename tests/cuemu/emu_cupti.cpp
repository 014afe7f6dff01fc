/*
 * emu_cupti.cpp (tkbench's CUDA emulator, tests/cuemu) - CUPTI's activity API as
 * include/cupti.h declares it, with the semantics cupti_activity.h documents, so that
 * src/backend/cuda/cupti_timer.c times the emulated device as it times a GPU.
 *
 *   Records of an enabled kind go into buffers the client hands over through its request
 *   callback, 8-byte aligned and packed one after another. A request that returns no
 *   buffer, or one too small for the record, drops the record (counted for
 *   cuptiActivityGetNumDroppedRecords; a too-small buffer goes straight back through the
 *   complete callback, empty). A buffer goes back when the next record does not fit, when
 *   it holds the maxNumRecords its request asked for, or at cuptiActivityFlushAll. The
 *   callbacks run on whichever thread wrote the record: the host thread for API records,
 *   the device thread for kernels, copies and fills (real CUPTI uses a thread of its own).
 *   The complete callback is called without the emulator's lock held.
 *   An API call that queues device work (tkb_emu::cupti_on_api) gets a correlation id
 *   while any kind is enabled. With RUNTIME or DRIVER enabled it writes an API record,
 *   preceded, when EXTERNAL_CORRELATION is enabled too, by one ExternalCorrelation
 *   record for each kind whose per-thread stack holds an id (as the toolkit documents:
 *   without an API kind there are no such records). Its work's record (KERNEL or
 *   CONCURRENT_KERNEL, MEMCPY, MEMSET) is written after the work ran
 *   (tkb_emu::cupti_on_activity), and only for work whose API call got an id.
 *   A kernel record's name is stored in the buffer behind the record, so it is valid only
 *   until the client reuses the buffer: a client that keeps the pointer reads garbage, as
 *   it may on a GPU.
 *   Every record is complete when written, so a default flush and a forced one both hand
 *   back every buffer that holds records; a buffer that holds none stays with CUPTI.
 *
 * Emulator-only switch for tests: TKB_EMU_CUPTI_BUSY=1 in the environment when
 * cuptiActivityRegisterCallbacks is called makes it fail with
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, as when another profiler (Nsight
 * Systems, Nsight Compute) holds CUPTI, so that tkbench's error path for that runs.
 */
#include "emu_internal.h"

#include <cupti.h>

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace {

constexpr size_t align8(size_t n) { return (n + 7) & ~size_t(7); }

/* The emulated device's ids in records (cupti.h). */
constexpr uint32_t kDeviceId = 0, kContextId = 1, kStreamId = 7;

/* The kinds a client may enable: those cupti.h names. The emulator writes records of
 * KERNEL, CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME, DRIVER and EXTERNAL_CORRELATION
 * only; enabling another succeeds and records nothing. */
constexpr int kKinds = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION + 1;
bool known_kind(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_MEMCPY: case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_KERNEL: case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME: case CUPTI_ACTIVITY_KIND_EVENT:
    case CUPTI_ACTIVITY_KIND_METRIC: case CUPTI_ACTIVITY_KIND_DEVICE:
    case CUPTI_ACTIVITY_KIND_CONTEXT: case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_NAME: case CUPTI_ACTIVITY_KIND_MARKER:
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: case CUPTI_ACTIVITY_KIND_OVERHEAD:
    case CUPTI_ACTIVITY_KIND_MEMCPY2: case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
    case CUPTI_ACTIVITY_KIND_STREAM: case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return true;
    default: return false;
  }
}

/* A client buffer CUPTI holds: records fill [pad, used). */
struct buffer {
  uint8_t *p = nullptr;
  size_t size = 0, used = 0, records = 0, max_records = 0;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr; /* who it goes back to */
};

struct state {
  /* recursive: a request callback (called with it held, so a record's buffer switch is
   * one step) may call back into CUPTI on the same thread */
  std::recursive_mutex mu;
  std::condition_variable_any delivered;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  bool enabled[kKinds] = {};
  int n_enabled = 0;
  buffer cur;               /* the buffer being filled (p == nullptr: none) */
  size_t delivering = 0;    /* buffers taken back, their complete callback not returned */
  uint32_t next_correlation = 0;
  std::atomic<size_t> dropped{0}; /* atomic: read from complete callbacks, lock-free */
};

/* Never destroyed: the device thread may write records while the process exits. */
state &S() {
  static state *s = new state;
  return *s;
}

/* The external ids pushed on this thread, one stack per CUpti_ExternalCorrelationKind. */
thread_local std::vector<uint64_t> ext_ids[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
/* This thread is inside a CUPTI callback (FlushAll must not wait for itself). */
thread_local int in_callback = 0;

bool valid_ext_kind(CUpti_ExternalCorrelationKind k) {
  return k > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID && k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

/* Where a buffer's first record starts: a client buffer need not be 8-byte aligned. */
size_t first_offset(const uint8_t *p) { return align8((uintptr_t)p) - (uintptr_t)p; }

/* The bytes a record takes in its buffer (0: incomplete or unknown kind). */
size_t record_bytes(const uint8_t *r, size_t avail) {
  if (avail < sizeof(CUpti_Activity)) return 0;
  size_t n = 0;
  switch (((const CUpti_Activity *)r)->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      /* the name follows the record */
      n = align8(sizeof(CUpti_ActivityKernel10));
      if (avail <= n) return 0;
      const void *nul = memchr(r + n, 0, avail - n);
      if (!nul) return 0;
      n += align8((size_t)((const uint8_t *)nul - (r + n)) + 1);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: n = align8(sizeof(CUpti_ActivityMemcpy6)); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: n = align8(sizeof(CUpti_ActivityMemset4)); break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: n = align8(sizeof(CUpti_ActivityAPI)); break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      n = align8(sizeof(CUpti_ActivityExternalCorrelation));
      break;
    default: return 0;
  }
  return n <= avail ? n : 0;
}

/* Takes the current buffer back from the writer; `out` is delivered after unlocking. */
void take_back(state &s, std::vector<buffer> &out) {
  s.delivering++;
  out.push_back(s.cur);
  s.cur = buffer();
}

/* Room for a record of `bytes` (8-byte multiple) in the current buffer, asking the client
 * for a new one when needed; nullptr: the record is dropped. Called with s.mu held. */
uint8_t *reserve(state &s, size_t bytes, std::vector<buffer> &out) {
  auto fits = [&] {
    return s.cur.p && s.cur.size >= s.cur.used && s.cur.size - s.cur.used >= bytes &&
           (s.cur.max_records == 0 || s.cur.records < s.cur.max_records);
  };
  if (!fits()) {
    if (s.cur.p) take_back(s, out); /* full: the client gets it now */
    if (!s.request || !s.complete) {
      s.dropped++;
      return nullptr;
    }
    uint8_t *p = nullptr;
    size_t size = 0, max_records = 0;
    in_callback++;
    s.request(&p, &size, &max_records);
    in_callback--;
    if (!p) {
      s.dropped++;
      return nullptr;
    }
    s.cur.p = p;
    s.cur.size = size;
    s.cur.used = first_offset(p);
    s.cur.records = 0;
    s.cur.max_records = max_records;
    s.cur.complete = s.complete;
    if (!fits()) { /* too small even when empty: back to the client unused */
      take_back(s, out);
      s.dropped++;
      return nullptr;
    }
  }
  uint8_t *r = s.cur.p + s.cur.used;
  memset(r, 0, bytes);
  s.cur.used += bytes;
  s.cur.records++;
  return r;
}

/* After a record was written: a buffer holding its maxNumRecords goes back at once. */
void wrote(state &s, std::vector<buffer> &out) {
  if (s.cur.p && s.cur.max_records && s.cur.records >= s.cur.max_records) take_back(s, out);
}

template <class T> T *reserve_record(state &s, CUpti_ActivityKind kind, std::vector<buffer> &out) {
  T *r = (T *)reserve(s, align8(sizeof(T)), out);
  if (r) r->kind = kind;
  return r;
}

/* Hands buffers back to the client, without s.mu held: its callback may take locks of
 * its own that another thread holds while calling CUPTI. */
void deliver(state &s, std::vector<buffer> &out) {
  for (const buffer &b : out) {
    in_callback++;
    b.complete(nullptr, 0, b.p, b.size, b.used);
    in_callback--;
    std::lock_guard<std::recursive_mutex> lock(s.mu);
    s.delivering--;
    s.delivered.notify_all();
  }
  out.clear();
}

uint32_t thread_number() {
  static std::atomic<uint32_t> next{1};
  thread_local uint32_t mine = next++;
  return mine;
}

uint8_t cupti_copy_kind(int cuda_kind) {
  switch (cuda_kind) {
    case 0: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH; /* cudaMemcpyHostToHost */
    case 1: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    case 2: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    case 3: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    default: return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
  }
}

/* The fields every device record shares (the emulated device's ids and the work's
 * interval and correlation id). */
template <class R>
void stamp(R *r, uint64_t start_ns, uint64_t end_ns, uint32_t correlation) {
  r->start = start_ns;
  r->end = end_ns;
  r->deviceId = kDeviceId;
  r->contextId = kContextId;
  r->streamId = kStreamId;
  r->correlationId = correlation;
}

} // namespace

/* ---- the emulated runtime's hooks (emu_internal.h) ---- */

uint32_t tkb_emu::cupti_on_api(act_kind kind) {
  (void)kind; /* every such call looks alike to CUPTI's API records here (cbid 0) */
  state &s = S();
  std::vector<buffer> out;
  uint32_t corr;
  {
    std::lock_guard<std::recursive_mutex> lock(s.mu);
    if (s.n_enabled == 0) return 0;
    if (++s.next_correlation == 0) s.next_correlation = 1; /* 0 means "none" */
    corr = s.next_correlation;
    CUpti_ActivityKind api = s.enabled[CUPTI_ACTIVITY_KIND_RUNTIME] ? CUPTI_ACTIVITY_KIND_RUNTIME
                             : s.enabled[CUPTI_ACTIVITY_KIND_DRIVER] ? CUPTI_ACTIVITY_KIND_DRIVER
                                                                     : CUPTI_ACTIVITY_KIND_INVALID;
    if (api != CUPTI_ACTIVITY_KIND_INVALID) {
      if (s.enabled[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION]) {
        for (int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
          if (ext_ids[k].empty()) continue;
          auto *x = reserve_record<CUpti_ActivityExternalCorrelation>(
              s, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, out);
          if (!x) continue;
          x->externalKind = (CUpti_ExternalCorrelationKind)k;
          x->externalId = ext_ids[k].back();
          x->correlationId = corr;
          wrote(s, out);
        }
      }
      if (auto *a = reserve_record<CUpti_ActivityAPI>(s, api, out)) {
        /* the call's own duration is not seen here: an instant at the time it queues */
        a->start = a->end = tkb_emu::now_ns();
        a->processId = (uint32_t)getpid();
        a->threadId = thread_number();
        a->correlationId = corr;
        a->returnValue = 0;
        wrote(s, out);
      }
    }
  }
  deliver(s, out);
  return corr;
}

void tkb_emu::cupti_on_activity(const activity &a, uint32_t correlation, uint64_t start_ns,
                                uint64_t end_ns) {
  if (correlation == 0) return; /* queued while CUPTI recorded nothing */
  state &s = S();
  std::vector<buffer> out;
  {
    std::lock_guard<std::recursive_mutex> lock(s.mu);
    switch (a.kind) {
      case ACT_KERNEL: {
        CUpti_ActivityKind k = s.enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]
                                   ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                                   : CUPTI_ACTIVITY_KIND_KERNEL;
        if (!s.enabled[k]) break;
        const char *name = a.name ? a.name : "";
        size_t head = align8(sizeof(CUpti_ActivityKernel10)), len = strlen(name);
        auto *r = (CUpti_ActivityKernel10 *)reserve(s, head + align8(len + 1), out);
        if (!r) break;
        char *copy = (char *)r + head; /* the buffer's own copy: see the header comment */
        memcpy(copy, name, len + 1);
        r->kind = k;
        stamp(r, start_ns, end_ns, correlation);
        r->name = copy;
        wrote(s, out);
        break;
      }
      case ACT_MEMCPY: {
        if (!s.enabled[CUPTI_ACTIVITY_KIND_MEMCPY]) break;
        auto *r = reserve_record<CUpti_ActivityMemcpy6>(s, CUPTI_ACTIVITY_KIND_MEMCPY, out);
        if (!r) break;
        r->copyKind = cupti_copy_kind(a.copy_kind);
        r->bytes = a.bytes;
        stamp(r, start_ns, end_ns, correlation);
        wrote(s, out);
        break;
      }
      case ACT_MEMSET: {
        if (!s.enabled[CUPTI_ACTIVITY_KIND_MEMSET]) break;
        auto *r = reserve_record<CUpti_ActivityMemset4>(s, CUPTI_ACTIVITY_KIND_MEMSET, out);
        if (!r) break;
        r->bytes = a.bytes;
        stamp(r, start_ns, end_ns, correlation);
        wrote(s, out);
        break;
      }
      case ACT_NONE: break;
    }
  }
  deliver(s, out);
}

/* ---- the CUPTI API ---- */

extern "C" {

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  const char *busy = getenv("TKB_EMU_CUPTI_BUSY");
  if (busy && strcmp(busy, "1") == 0) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  if (!funcBufferRequested || !funcBufferCompleted) return CUPTI_ERROR_INVALID_PARAMETER;
  state &s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  s.request = funcBufferRequested;
  s.complete = funcBufferCompleted;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (!known_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
  state &s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (!s.enabled[kind]) s.n_enabled++;
  s.enabled[kind] = true;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (!known_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
  state &s = S();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (s.enabled[kind]) s.n_enabled--;
  s.enabled[kind] = false;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  (void)flag; /* records are complete when written: forced or not, the same buffers */
  state &s = S();
  std::vector<buffer> out;
  {
    std::lock_guard<std::recursive_mutex> lock(s.mu);
    if (!s.request || !s.complete) return CUPTI_ERROR_INVALID_OPERATION;
    if (s.cur.p && s.cur.records) take_back(s, out);
  }
  deliver(s, out);
  /* "a blocking call": buffers another thread took back are delivered too before it
   * returns, so the caller sees every record written before the flush */
  if (!in_callback) {
    std::unique_lock<std::recursive_mutex> lock(s.mu);
    s.delivered.wait(lock, [&] { return s.delivering == 0; });
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
                                                CUpti_Activity **record) {
  if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
  size_t off = first_offset(buffer);
  if (*record) {
    const uint8_t *prev = (const uint8_t *)*record;
    if (prev < buffer + off || prev >= buffer + validBufferSizeBytes) return CUPTI_ERROR_INVALID_PARAMETER;
    off = (size_t)(prev - buffer);
    size_t n = record_bytes(prev, validBufferSizeBytes - off);
    if (n == 0) return CUPTI_ERROR_INVALID_KIND;
    off += n;
  }
  if (off >= validBufferSizeBytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  if (record_bytes(buffer + off, validBufferSizeBytes - off) == 0) return CUPTI_ERROR_INVALID_KIND;
  *record = (CUpti_Activity *)(buffer + off);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                       size_t *dropped) {
  (void)streamId;
  if (!dropped) return CUPTI_ERROR_INVALID_PARAMETER;
  /* every buffer is global (context NULL); a context's own queue is always empty */
  *dropped = context ? 0 : S().dropped.exchange(0);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                            uint64_t id) {
  if (!valid_ext_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
  ext_ids[kind].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                           uint64_t *lastId) {
  if (!valid_ext_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (ext_ids[kind].empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (lastId) *lastId = ext_ids[kind].back();
  ext_ids[kind].pop_back();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp) {
  if (!timestamp) return CUPTI_ERROR_INVALID_PARAMETER;
  *timestamp = tkb_emu::now_ns();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str) {
  if (!str) return CUPTI_ERROR_INVALID_PARAMETER;
  const char *s = nullptr;
  switch (result) {
#define TKB_RESULT(r) \
  case r: s = #r; break;
    TKB_RESULT(CUPTI_SUCCESS)
    TKB_RESULT(CUPTI_ERROR_INVALID_PARAMETER)
    TKB_RESULT(CUPTI_ERROR_INVALID_DEVICE)
    TKB_RESULT(CUPTI_ERROR_INVALID_CONTEXT)
    TKB_RESULT(CUPTI_ERROR_INVALID_OPERATION)
    TKB_RESULT(CUPTI_ERROR_OUT_OF_MEMORY)
    TKB_RESULT(CUPTI_ERROR_HARDWARE)
    TKB_RESULT(CUPTI_ERROR_API_NOT_IMPLEMENTED)
    TKB_RESULT(CUPTI_ERROR_MAX_LIMIT_REACHED)
    TKB_RESULT(CUPTI_ERROR_NOT_READY)
    TKB_RESULT(CUPTI_ERROR_NOT_COMPATIBLE)
    TKB_RESULT(CUPTI_ERROR_NOT_INITIALIZED)
    TKB_RESULT(CUPTI_ERROR_QUEUE_EMPTY)
    TKB_RESULT(CUPTI_ERROR_INVALID_HANDLE)
    TKB_RESULT(CUPTI_ERROR_INVALID_STREAM)
    TKB_RESULT(CUPTI_ERROR_INVALID_KIND)
    TKB_RESULT(CUPTI_ERROR_DISABLED)
    TKB_RESULT(CUPTI_ERROR_HARDWARE_BUSY)
    TKB_RESULT(CUPTI_ERROR_NOT_SUPPORTED)
    TKB_RESULT(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    TKB_RESULT(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    TKB_RESULT(CUPTI_ERROR_UNKNOWN)
#undef TKB_RESULT
    default: return CUPTI_ERROR_INVALID_PARAMETER;
  }
  *str = s;
  return CUPTI_SUCCESS;
}

} // extern "C"
