/*
 * device.c - the CUDA backend's entry point, devices and memory. cuda:N is CUDA runtime
 * device N (so CUDA_VISIBLE_DEVICES applies). An array's data is a cudaMalloc pointer;
 * uploads and downloads block, device-side commands (fills, copies, kernels) go to the
 * legacy default stream in order, and synchronize waits for the whole device.
 * Memory in use and its peak are counted by the core (device.c there) around alloc/free.
 */
#define _GNU_SOURCE /* dlopen's RTLD_NOLOAD */
#include "cu_backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const tkb_plugin_host *tkb_cu_host;

tkb_status tkb_cu_error(tkb_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tkb_status st = tkb_cu_host->set_error_v(status, fmt, ap);
  va_end(ap);
  return st;
}

tkb_status tkb_cu_fail(const tkb_device *dev, const char *what, cudaError_t err) {
  /* A failed runtime call also sets the thread's last error; left there, the next
   * kernel launch's cudaGetLastError (fill.cu, the ops' .cu) would report it as its own.
   * Sticky errors (a faulted context) stay whatever this does. */
  (void)cudaGetLastError();
  if (err == cudaErrorMemoryAllocation)
    return tkb_cu_error(TKB_ERR_OUT_OF_MEMORY, "%s on %s failed: %s (%s): the device ran out of "
                        "memory", what, dev->name, cudaGetErrorName(err), cudaGetErrorString(err));
  return tkb_cu_error(TKB_ERR_DEVICE, "%s on %s failed: %s (%s)", what, dev->name,
                      cudaGetErrorName(err), cudaGetErrorString(err));
}

static _Thread_local int current = -1; /* this thread's current GPU, as tkbench set it */

tkb_status tkb_cu_use(const tkb_device *dev) {
  int want = tkb_cu_dev(dev)->ordinal;
  if (current == want) return TKB_OK;
  cudaError_t err = cudaSetDevice(want);
  if (err != cudaSuccess) return tkb_cu_fail(dev, "cudaSetDevice", err);
  current = want;
  return TKB_OK;
}

/* ---- devices ---- */

/* One sentence for a runtime that cannot count devices. */
static tkb_status no_devices(cudaError_t err) {
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  bool have_driver = h != NULL;
  if (h) dlclose(h);
  if (!have_driver)
    return tkb_cu_error(TKB_ERR_DEVICE, "no NVIDIA driver is installed (libcuda.so.1 was not "
                        "found), so there is no CUDA device on this machine");
  if (err == cudaErrorInsufficientDriver)
    return tkb_cu_error(TKB_ERR_DEVICE, "the NVIDIA driver supports CUDA %d.%d but tkbench was "
                        "built with CUDA %d.%d: update the driver", drv / 1000, drv % 1000 / 10,
                        rt / 1000, rt % 1000 / 10);
  if (err == cudaErrorNoDevice || err == cudaSuccess)
    return tkb_cu_error(TKB_ERR_DEVICE, "the NVIDIA driver is installed but reports no CUDA GPU "
                        "(check nvidia-smi and CUDA_VISIBLE_DEVICES)");
  return tkb_cu_error(TKB_ERR_DEVICE, "the CUDA runtime cannot list GPUs: %s (%s)",
                      cudaGetErrorName(err), cudaGetErrorString(err));
}

static tkb_status cu_open(tkb_device *dev, int ordinal) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (err != cudaSuccess || count == 0) return no_devices(err);
  if (ordinal >= count) {
    struct cudaDeviceProp p0;
    char name0[256] = "?";
    if (cudaGetDeviceProperties(&p0, 0) == cudaSuccess) snprintf(name0, sizeof name0, "%s", p0.name);
    return tkb_cu_error(TKB_ERR_NOT_FOUND, "%d CUDA device%s present (cuda:0 is %s)", count,
                        count == 1 ? " is" : "s are", name0);
  }
  snprintf(dev->name, sizeof dev->name, "cuda:%d", ordinal);
  tkb_cu_device *d = calloc(1, sizeof *d);
  if (!d) return tkb_cu_error(TKB_ERR_OUT_OF_MEMORY, "out of memory opening cuda:%d", ordinal);
  d->ordinal = ordinal;
  dev->impl = d;
  tkb_status st = tkb_cu_use(dev);
  struct cudaDeviceProp p;
  if (!st && (err = cudaGetDeviceProperties(&p, ordinal)) != cudaSuccess)
    st = tkb_cu_fail(dev, "cudaGetDeviceProperties", err);
  int l2 = 0;
  if (!st && (err = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ordinal)) != cudaSuccess)
    st = tkb_cu_fail(dev, "cudaDeviceGetAttribute(cudaDevAttrL2CacheSize)", err);
  /* a first runtime call that creates the context: errors here are the driver's */
  if (!st && (err = cudaFree(NULL)) != cudaSuccess) st = tkb_cu_fail(dev, "creating the CUDA context", err);
  if (!st && (err = cudaEventCreate(&d->ev_start)) != cudaSuccess) st = tkb_cu_fail(dev, "cudaEventCreate", err);
  if (!st && (err = cudaEventCreate(&d->ev_stop)) != cudaSuccess) st = tkb_cu_fail(dev, "cudaEventCreate", err);
  if (st) {
    dev->impl = NULL;
    free(d);
    return st;
  }
  d->l2_bytes = (size_t)l2;
  d->global_mem = p.totalGlobalMem;
  if (cudaDeviceGetPCIBusId(d->pci, sizeof d->pci, ordinal) != cudaSuccess) {
    d->pci[0] = '\0'; /* NVML then says it knows no such GPU */
    (void)cudaGetLastError();
  }
  d->nvml = tkb_nvml_open(NULL, d->pci);
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  char state[128] = "";
  tkb_nvml_sample s = tkb_nvml_read(d->nvml);
  if (s.valid) snprintf(state, sizeof state, ", SM %u MHz, %u C", s.sm_clock_mhz, s.temperature_c);
  /* The text always fits: name cut at 80, numbers bounded; the check silences
   * -Wformat-truncation, which cannot see that. */
  int len = snprintf(dev->description, sizeof dev->description,
           "%.80s (sm_%d%d, %d SMs, %.1f GiB, %.0f MiB L2, CUDA runtime %d.%d, driver %d.%d%s)",
           p.name, p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0,
           l2 / 1048576.0, rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10, state);
  if (len >= (int)sizeof dev->description) dev->description[sizeof dev->description - 1] = '\0';
  const unsigned char *u = (const unsigned char *)p.uuid.bytes;
  snprintf(dev->uuid, sizeof dev->uuid,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
           u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return TKB_OK;
}

static tkb_status cu_count(int *n) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (err != cudaSuccess || count == 0) return no_devices(err);
  *n = count;
  return TKB_OK;
}

/* ---- memory ---- */

static tkb_status cu_alloc(tkb_device *dev, size_t nbytes, void **ptr) {
  tkb_status st = tkb_cu_use(dev);
  if (st) return st;
  void *p = NULL;
  /* cudaMalloc may wait for the device (an implicit synchronization): an allocation
   * inside a timed call releases cuda_events' blocking kernel first */
  tkb_cu_unblock(tkb_cu_dev(dev), true);
  /* cudaMalloc(0) gives NULL: 0 bytes get the smallest allocation, a unique handle */
  cudaError_t err = cudaMalloc(&p, nbytes ? nbytes : 1);
  if (err != cudaSuccess) {
    cudaGetLastError(); /* not sticky: clear it */
    size_t free_b = 0, total = 0;
    cudaMemGetInfo(&free_b, &total);
    return tkb_cu_error(err == cudaErrorMemoryAllocation ? TKB_ERR_OUT_OF_MEMORY : TKB_ERR_DEVICE,
                        "cannot allocate %zu bytes (%.2f GiB) on %s: %s (%.2f GiB of %.2f GiB free)",
                        nbytes, nbytes / 1073741824.0, dev->name, cudaGetErrorString(err),
                        free_b / 1073741824.0, total / 1073741824.0);
  }
  *ptr = p;
  return TKB_OK;
}

static void cu_free(tkb_device *dev, void *ptr, size_t nbytes) {
  (void)nbytes;
  /* cudaFree waits for the device */
  tkb_cu_unblock(tkb_cu_dev(dev), true);
  /* free has no status to return: a failure must not linger as the last error */
  if (tkb_cu_use(dev) == TKB_OK && cudaFree(ptr) != cudaSuccess) (void)cudaGetLastError();
}

/* Every entry makes dev current first (tkb_cu_use: a thread-local compare when it is):
 * the legacy default stream and cudaDeviceSynchronize are the current device's. */
static tkb_status cu_memset_zero(tkb_device *dev, void *ptr, size_t nbytes) {
  if (nbytes == 0) return TKB_OK;
  tkb_status st = tkb_cu_use(dev);
  if (st) return st;
  cudaError_t err = cudaMemsetAsync(ptr, 0, nbytes, 0);
  return err == cudaSuccess ? TKB_OK : tkb_cu_fail(dev, "cudaMemsetAsync", err);
}

static tkb_status cu_copy(tkb_device *dev, void *dst, const void *src, size_t nbytes) {
  if (nbytes == 0) return TKB_OK;
  tkb_status st = tkb_cu_use(dev);
  if (st) return st;
  cudaError_t err = cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, 0);
  return err == cudaSuccess ? TKB_OK : tkb_cu_fail(dev, "cudaMemcpyAsync (device to device)", err);
}

static tkb_status cu_upload(tkb_device *dev, void *dst, const void *host, size_t nbytes) {
  if (nbytes == 0) return TKB_OK;
  tkb_status st = tkb_cu_use(dev);
  if (st) return st;
  tkb_cu_unblock(tkb_cu_dev(dev), true); /* cudaMemcpy from pageable memory waits */
  cudaError_t err = cudaMemcpy(dst, host, nbytes, cudaMemcpyHostToDevice);
  return err == cudaSuccess ? TKB_OK : tkb_cu_fail(dev, "cudaMemcpy (host to device)", err);
}

static tkb_status cu_download(tkb_device *dev, void *host, const void *src, size_t nbytes) {
  if (nbytes == 0) return TKB_OK;
  tkb_status st = tkb_cu_use(dev);
  if (st) return st;
  tkb_cu_unblock(tkb_cu_dev(dev), true); /* waits for the stream's work */
  cudaError_t err = cudaMemcpy(host, src, nbytes, cudaMemcpyDeviceToHost);
  return err == cudaSuccess ? TKB_OK : tkb_cu_fail(dev, "cudaMemcpy (device to host)", err);
}

/* cuda_events: the stop event goes right behind the call's work, before the wait, so it
 * times the device work and not the host's synchronization; only then is the blocking
 * kernel released, so the whole call is queued behind it. A synchronize inside the call
 * records it too, and the core's, after the call, records it again: the interval ends
 * behind the call's last work. */
static tkb_status cu_synchronize(tkb_device *dev) {
  tkb_cu_device *d = tkb_cu_dev(dev);
  tkb_status st = tkb_cu_use(dev);
  if (st) return st;
  cudaError_t err = cudaSuccess;
  if (d->events_armed) {
    err = cudaEventRecord(d->ev_stop, 0);
    d->stop_records++;
    if (err != cudaSuccess) {
      tkb_cu_unblock(d, false);
      return tkb_cu_fail(dev, "cudaEventRecord (cuda_events stop)", err);
    }
  }
  tkb_cu_unblock(d, false); /* the timer counts a synchronize inside the call */
  err = cudaDeviceSynchronize();
  return err == cudaSuccess ? TKB_OK : tkb_cu_fail(dev, "cudaDeviceSynchronize", err);
}

/* Cold L2: a memset of twice cudaDevAttrL2CacheSize (at least 2 MiB) with a value that
 * changes each time, then a wait, so the next call starts with nothing of its own in L2. */
static tkb_status cu_flush_cache(tkb_device *dev) {
  tkb_cu_device *d = tkb_cu_dev(dev);
  tkb_status st = tkb_cu_use(dev);
  if (st) return st;
  if (!d->flush_buf) {
    size_t bytes = 2 * (d->l2_bytes > ((size_t)1 << 20) ? d->l2_bytes : (size_t)1 << 20);
    cudaError_t err = cudaMalloc(&d->flush_buf, bytes);
    if (err != cudaSuccess) {
      d->flush_buf = NULL;
      return tkb_cu_fail(dev, "allocating the L2 flush buffer (cudaMalloc)", err);
    }
    d->flush_bytes = bytes;
  }
  cudaError_t err = cudaMemsetAsync(d->flush_buf, (int)(++d->flush_stamp & 0xff), d->flush_bytes, 0);
  if (err != cudaSuccess) return tkb_cu_fail(dev, "the L2 flush (cudaMemsetAsync)", err);
  err = cudaDeviceSynchronize();
  return err == cudaSuccess ? TKB_OK : tkb_cu_fail(dev, "the L2 flush (cudaDeviceSynchronize)", err);
}

static tkb_status cu_device_state(tkb_device *dev, tkb_device_state *out) {
  tkb_cu_device *d = tkb_cu_dev(dev);
  tkb_nvml_sample s = tkb_nvml_read(d->nvml);
  memset(out, 0, sizeof *out);
  if (!s.valid) {
    snprintf(out->why_unknown, sizeof out->why_unknown, "%s", tkb_nvml_why(d->nvml));
    return TKB_OK;
  }
  out->valid = true;
  out->sm_clock_mhz = s.sm_clock_mhz;
  out->temperature_c = s.temperature_c;
  out->power_w = s.power_w;
  out->throttled = tkb_nvml_throttled(&s);
  tkb_nvml_reason_names(s.reasons, out->reasons, sizeof out->reasons);
  return TKB_OK;
}

tkb_status tkb_cu_timer_claim(tkb_device *dev) {
  if (tkb_cu_dev(dev)->rec)
    return tkb_cu_error(TKB_ERR_DEVICE, "%s is already timing another benchmark: one timed "
                        "benchmark per device at a time", dev->name);
  return tkb_cu_use(dev);
}

static const tkb_timer_ops *const cu_timers[] = {&tkb_cu_events_timer, &tkb_cu_cupti_timer, NULL};

static const tkb_backend cu_backend = {
    .kind = "cuda",
    .host_addressable = false,
    .open = cu_open,
    .alloc = cu_alloc,
    .free = cu_free,
    .memset_zero = cu_memset_zero,
    .copy = cu_copy,
    .upload = cu_upload,
    .download = cu_download,
    .synchronize = cu_synchronize,
    .fill = tkb_cu_fill,
    .flush_cache = cu_flush_cache,
    .timers = cu_timers,
    .kernel_build = tkb_cu_kernel_build,
    .kernel_launch = tkb_cu_kernel_launch,
    .kernel_free = tkb_cu_kernel_free,
    .device_state = cu_device_state,
    .count = cu_count,
};

__attribute__((visibility("default"))) tkb_status tkb_backend_plugin_entry(
    int abi, const tkb_plugin_host *host, const tkb_backend **backend);

tkb_status tkb_backend_plugin_entry(int abi, const tkb_plugin_host *host,
                                    const tkb_backend **backend) {
  if (abi != TKB_BACKEND_ABI || !host || host->abi != TKB_BACKEND_ABI)
    return TKB_ERR_UNSUPPORTED; /* the loader says "refused" */
  tkb_cu_host = host;
  *backend = &cu_backend;
  return TKB_OK;
}
