/*
 * cu_backend.h - internals of the CUDA backend plugin (libtkbench-cuda.so), shared by its
 * files: device.c (entry point, devices, memory, cold cache, NVML state),
 * events_timer.c (cuda_events), cupti_timer.c (CUPTI activity: cupti and the profiler
 * methods), records.c (host-only record attribution), nvml.c
 * (NVML through dlopen), fill.cu (the Philox fill kernel), blocking_kernel.cu
 * (cuda_events' blocking kernel).
 *
 * Everything runs on the legacy default stream (stream 0), so user code and cuBLAS calls
 * made without a stream are ordered with tkbench's fills and copies, and cuda_events'
 * events bracket all of it. synchronize is cudaDeviceSynchronize. A device serves one
 * thread at a time.
 *
 * While cuda_events' blocking kernel holds the stream (timer_start to synchronize), any
 * backend call that makes the host wait for the device (a download, an upload, a free, a
 * host copy inside an op) first releases it with tkb_cu_unblock: otherwise the host would
 * wait for a kernel that waits for the host, until the kernel's timeout.
 */
#ifndef TKB_CU_BACKEND_H
#define TKB_CU_BACKEND_H

#include <cuda_runtime_api.h>

#include "backend.h"
#include "fill_kernel.h"
#include "nvml.h"

/* The core's services (set once by the entry point). */
extern const tkb_plugin_host *tkb_cu_host;

/* tkb_set_error through the host: records the message, returns status. */
tkb_status tkb_cu_error(tkb_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* TKB_ERR_DEVICE (TKB_ERR_OUT_OF_MEMORY for cudaErrorMemoryAllocation):
 * "<what> on <dev> failed: <cudaGetErrorName> (<cudaGetErrorString>)". */
tkb_status tkb_cu_fail(const tkb_device *dev, const char *what, cudaError_t err);

typedef struct tkb_cu_device {
  int ordinal;
  size_t l2_bytes, global_mem;
  char pci[32];                  /* "0000:3b:00.0" */
  void *flush_buf;               /* cold-cache scratch, >= 2 x L2 */
  size_t flush_bytes;
  unsigned flush_stamp;
  cudaEvent_t ev_start, ev_stop; /* cuda_events */
  bool events_armed;             /* timer_start recorded ev_start, timer_stop not yet run */
  int stop_records;              /* synchronizes since timer_start: each one records ev_stop
                                    behind the work queued so far, so the last (the core's,
                                    after the call) ends the interval */
  unsigned *block_flags;         /* the blocking kernel's host-mapped flags (blocking_kernel.h),
                                    allocated by the first cuda_events timer, or NULL */
  unsigned *block_flags_dev;     /* the same memory as the device sees it */
  bool blocking;                 /* a blocking kernel waits for its release */
  unsigned block_gen;            /* the latest blocking kernel's generation (from 1) */
  bool host_waited;              /* the call being timed released it early (tkb_cu_unblock) */
  void *rec;                     /* the timer open on this device (one at a time), or NULL */
  tkb_nvml *nvml;
} tkb_cu_device;

static inline tkb_cu_device *tkb_cu_dev(const tkb_device *dev) { return dev->impl; }

/* Makes dev's GPU current on this thread (cudaSetDevice only when it changes). */
tkb_status tkb_cu_use(const tkb_device *dev);

/* The device timers: events_timer.c (cuda_events), cupti_timer.c (the activity methods). */
/* Before a timer opens: no other timer is open on dev (one timed benchmark per device at
 * a time), and dev is current (device.c). */
tkb_status tkb_cu_timer_claim(tkb_device *dev);
extern const tkb_timer_ops tkb_cu_events_timer;
extern const tkb_timer_ops tkb_cu_cupti_timer;
/* events_timer.c: releases the blocking kernel if one waits (nothing otherwise; no
 * allocation, no lock). host_wait: the host is about to wait for the device inside the timed call, so the
 * rest of the call is timed with its launch gaps (the timer counts such calls). */
void tkb_cu_unblock(tkb_cu_device *d, bool host_wait);

/* fill.c: tkb_fill on a CUDA device (plans on the host, launches fill.cu's kernel). */
tkb_status tkb_cu_fill(tkb_array *a, const tkb_init *init, uint64_t seed, uint64_t stream);

/* ops.c: the ops' compiled-in kernels (ops/<op>/cuda.cu) behind backend.h's kernel_build,
 * kernel_launch and kernel_free. */
tkb_status tkb_cu_kernel_build(tkb_device *dev, const char *source, const char *options,
                               const char *name, tkb_kernel **out);
tkb_status tkb_cu_kernel_launch(tkb_device *dev, tkb_kernel *k, int dims, const size_t *global,
                                const size_t *local, int nargs, const tkb_karg *args);
void tkb_cu_kernel_free(tkb_device *dev, tkb_kernel *k);

#endif /* TKB_CU_BACKEND_H */
