/*
 * device.c - the OpenCL backend's entry point, devices and memory. opencl:N counts the
 * devices of every platform in the order the ICD loader lists them. An array's data is
 * its cl_mem; transfers to and from the host block, device-side commands (fills, copies,
 * kernels) are queued in order and clFinish waits for them.
 */
#include "cl_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const tkb_plugin_host *tkb_cl_host;

tkb_status tkb_cl_error(tkb_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tkb_status st = tkb_cl_host->set_error_v(status, fmt, ap);
  va_end(ap);
  return st;
}

const char *tkb_cl_err_name(cl_int err) {
  switch (err) {
#define E(x) case x: return #x;
    E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_BUILD_PROGRAM_FAILURE) E(CL_INVALID_VALUE)
    E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT) E(CL_INVALID_COMMAND_QUEUE)
    E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
    E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
    E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
    E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
    E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION)
    E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PLATFORM)
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
#undef E
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "an OpenCL error";
  }
}

tkb_status tkb_cl_fail(const tkb_device *dev, const char *what, cl_int err) {
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY ||
      err == CL_OUT_OF_RESOURCES)
    return tkb_cl_error(TKB_ERR_OUT_OF_MEMORY, "%s on %s failed: %s (%d): the device ran out of "
                        "memory or resources", what, dev->name, tkb_cl_err_name(err), err);
  return tkb_cl_error(TKB_ERR_DEVICE, "%s on %s failed: %s (%d)", what, dev->name,
                      tkb_cl_err_name(err), err);
}

/* ---- devices ---- */

#define MAX_CL_DEVICES 64

typedef struct found {
  cl_platform_id platform[MAX_CL_DEVICES];
  cl_device_id device[MAX_CL_DEVICES];
  int n;
} found;

/* Every device of every platform, in the loader's order. */
static tkb_status enumerate(found *f) {
  cl_platform_id plats[16];
  cl_uint np = 0;
  cl_int err = clGetPlatformIDs(16, plats, &np);
  f->n = 0;
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && np == 0))
    return tkb_cl_error(TKB_ERR_DEVICE,
                        "0 OpenCL platforms: the ICD loader (libOpenCL.so.1) found no OpenCL "
                        "driver (it reads /etc/OpenCL/vendors, or OCL_ICD_VENDORS); install "
                        "pocl-opencl-icd to run on the CPU, or your GPU vendor's OpenCL driver");
  if (err != CL_SUCCESS)
    return tkb_cl_error(TKB_ERR_DEVICE, "listing OpenCL platforms failed: %s (%d)",
                        tkb_cl_err_name(err), err);
  if (np > 16) np = 16;
  for (cl_uint p = 0; p < np; p++) {
    cl_device_id ids[MAX_CL_DEVICES];
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_CL_DEVICES, ids, &nd) != CL_SUCCESS) continue;
    for (cl_uint k = 0; k < nd && k < MAX_CL_DEVICES && f->n < MAX_CL_DEVICES; k++) {
      f->platform[f->n] = plats[p];
      f->device[f->n++] = ids[k];
    }
  }
  if (f->n == 0)
    return tkb_cl_error(TKB_ERR_DEVICE, "%u OpenCL platform%s but 0 OpenCL devices: the "
                        "driver found no usable device", np, np == 1 ? "" : "s");
  return TKB_OK;
}

static tkb_status cl_count(int *n) {
  found f;
  tkb_status st = enumerate(&f);
  if (!st) *n = f.n;
  return st;
}

static void device_str(cl_device_id id, cl_device_info what, char *buf, size_t cap) {
  buf[0] = '\0';
  if (clGetDeviceInfo(id, what, cap, buf, NULL) != CL_SUCCESS) snprintf(buf, cap, "?");
  buf[cap - 1] = '\0';
}

static tkb_status cl_open(tkb_device *dev, int ordinal) {
  found f;
  tkb_status st = enumerate(&f);
  if (st) return st;
  if (ordinal >= f.n) {
    char name[128];
    device_str(f.device[0], CL_DEVICE_NAME, name, sizeof name);
    return tkb_cl_error(TKB_ERR_NOT_FOUND, "%d OpenCL device%s present (opencl:0 is %s%s)", f.n,
                        f.n == 1 ? " is" : "s are", name,
                        f.n > 1 ? "; 'tkbench info' lists the first" : "");
  }
  tkb_cl_device *d = calloc(1, sizeof *d);
  if (!d) return tkb_cl_error(TKB_ERR_OUT_OF_MEMORY, "out of memory opening opencl:%d", ordinal);
  d->platform = f.platform[ordinal];
  d->id = f.device[ordinal];
  snprintf(dev->name, sizeof dev->name, "opencl:%d", ordinal);
  cl_int err;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->platform, 0};
  d->ctx = clCreateContext(props, 1, &d->id, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    free(d);
    return tkb_cl_fail(dev, "clCreateContext", err);
  }
  d->queue = clCreateCommandQueue(d->ctx, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) {
    clReleaseContext(d->ctx);
    free(d);
    return tkb_cl_fail(dev, "clCreateCommandQueue (in order, with profiling)", err);
  }
  cl_ulong gm = 0, ma = 0, cache = 0;
  cl_uint cus = 0;
  size_t wg = 0;
  clGetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gm, &gm, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ma, &ma, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cache, &cache, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  cl_device_fp_config fp64 = 0;
  clGetDeviceInfo(d->id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
  d->global_mem = (size_t)gm;
  d->max_alloc = (size_t)ma;
  d->cache_bytes = (size_t)cache;
  d->max_wg = wg ? wg : 1;
  d->fp64 = fp64 != 0;
  pthread_mutex_init(&d->lock, NULL);
  char name[128], pname[128], driver[64];
  device_str(d->id, CL_DEVICE_NAME, name, sizeof name);
  char version[512];
  device_str(d->id, CL_DEVICE_VERSION, version, sizeof version);
  snprintf(d->version, sizeof d->version, "%.63s", version);
  device_str(d->id, CL_DRIVER_VERSION, driver, sizeof driver);
  pname[0] = '\0';
  clGetPlatformInfo(d->platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
  pname[sizeof pname - 1] = '\0';
  char ver[16] = "";
  sscanf(d->version, "OpenCL %15s", ver);
  snprintf(dev->description, sizeof dev->description,
           "%.60s (%.40s %.20s, OpenCL %s, %u compute units, %.1f GiB, %.0f MiB cache%s)", name,
           pname, driver, ver, cus, gm / 1073741824.0, cache / 1048576.0, d->fp64 ? ", fp64" : "");
  dev->impl = d;
  return TKB_OK;
}

/* ---- memory ---- */

static tkb_status cl_alloc(tkb_device *dev, size_t nbytes, void **ptr) {
  tkb_cl_device *d = tkb_cl_dev(dev);
  if (nbytes > d->max_alloc)
    return tkb_cl_error(TKB_ERR_OUT_OF_MEMORY,
                        "cannot allocate %zu bytes (%.2f GiB) on %s: its largest allocation "
                        "(CL_DEVICE_MAX_MEM_ALLOC_SIZE) is %.2f GiB, its global memory %.2f GiB",
                        nbytes, nbytes / 1073741824.0, dev->name, d->max_alloc / 1073741824.0,
                        d->global_mem / 1073741824.0);
  cl_int err;
  /* OpenCL has no empty buffer: 0 bytes get the smallest one, a unique handle */
  cl_mem m = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, nbytes ? nbytes : 1, NULL, &err);
  if (err != CL_SUCCESS) return tkb_cl_fail(dev, "clCreateBuffer", err);
  *ptr = m;
  return TKB_OK;
}

static void cl_free(tkb_device *dev, void *ptr, size_t nbytes) {
  (void)dev;
  (void)nbytes;
  clReleaseMemObject((cl_mem)ptr);
}

static tkb_status cl_memset_zero(tkb_device *dev, void *ptr, size_t nbytes) {
  if (nbytes == 0) return TKB_OK;
  tkb_cl_device *d = tkb_cl_dev(dev);
  const cl_uchar zero = 0;
  cl_int err = clEnqueueFillBuffer(d->queue, (cl_mem)ptr, &zero, 1, 0, nbytes, 0, NULL,
                                   tkb_cl_record(d, "fill_buffer"));
  return err == CL_SUCCESS ? TKB_OK : tkb_cl_fail(dev, "clEnqueueFillBuffer", err);
}

static tkb_status cl_copy(tkb_device *dev, void *dst, const void *src, size_t nbytes) {
  if (nbytes == 0) return TKB_OK;
  tkb_cl_device *d = tkb_cl_dev(dev);
  cl_int err = clEnqueueCopyBuffer(d->queue, (cl_mem)src, (cl_mem)dst, 0, 0, nbytes, 0, NULL,
                                   tkb_cl_record(d, "copy_buffer"));
  return err == CL_SUCCESS ? TKB_OK : tkb_cl_fail(dev, "clEnqueueCopyBuffer", err);
}

static tkb_status cl_upload(tkb_device *dev, void *dst, const void *host, size_t nbytes) {
  if (nbytes == 0) return TKB_OK;
  tkb_cl_device *d = tkb_cl_dev(dev);
  cl_int err = clEnqueueWriteBuffer(d->queue, (cl_mem)dst, CL_TRUE, 0, nbytes, host, 0, NULL,
                                    tkb_cl_record(d, "write_buffer"));
  return err == CL_SUCCESS ? TKB_OK : tkb_cl_fail(dev, "clEnqueueWriteBuffer (host to device)", err);
}

static tkb_status cl_download(tkb_device *dev, void *host, const void *src, size_t nbytes) {
  if (nbytes == 0) return TKB_OK;
  tkb_cl_device *d = tkb_cl_dev(dev);
  cl_int err = clEnqueueReadBuffer(d->queue, (cl_mem)src, CL_TRUE, 0, nbytes, host, 0, NULL,
                                   tkb_cl_record(d, "read_buffer"));
  return err == CL_SUCCESS ? TKB_OK : tkb_cl_fail(dev, "clEnqueueReadBuffer (device to host)", err);
}

static tkb_status cl_synchronize(tkb_device *dev) {
  cl_int err = clFinish(tkb_cl_dev(dev)->queue);
  return err == CL_SUCCESS ? TKB_OK : tkb_cl_fail(dev, "clFinish", err);
}

/* Cold caches: a write of twice CL_DEVICE_GLOBAL_MEM_CACHE_SIZE (at least 2 MiB), with a
 * pattern that changes each time, then a wait, so the next command starts cold. */
static tkb_status cl_flush_cache(tkb_device *dev) {
  tkb_cl_device *d = tkb_cl_dev(dev);
  if (!d->flush_buf) {
    size_t bytes = 2 * (d->cache_bytes > ((size_t)1 << 20) ? d->cache_bytes : (size_t)1 << 20);
    cl_int err;
    d->flush_buf = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
      d->flush_buf = NULL;
      return tkb_cl_fail(dev, "allocating the cache-flush buffer (clCreateBuffer)", err);
    }
    d->flush_bytes = bytes;
  }
  cl_uint stamp = ++d->flush_stamp;
  cl_int err = clEnqueueFillBuffer(d->queue, d->flush_buf, &stamp, sizeof stamp, 0,
                                   d->flush_bytes, 0, NULL, NULL);
  if (err == CL_SUCCESS) err = clFinish(d->queue);
  return err == CL_SUCCESS ? TKB_OK : tkb_cl_fail(dev, "the cache flush (clEnqueueFillBuffer)", err);
}

/* One activity timer serves opencl_events and the profiler methods: every command's
 * profiling event (timer.c). */
static const tkb_timer_ops cl_activity_timer = {
    .kind = TKB_TIMER_ACTIVITY,
    .open = tkb_cl_timer_open,
    .start = tkb_cl_timer_start,
    .stop = tkb_cl_timer_stop,
    .close = tkb_cl_timer_close,
};
static const tkb_timer_ops *const cl_timers[] = {&cl_activity_timer, NULL};

static const tkb_backend cl_backend = {
    .kind = "opencl",
    .host_addressable = false,
    .open = cl_open,
    .alloc = cl_alloc,
    .free = cl_free,
    .memset_zero = cl_memset_zero,
    .copy = cl_copy,
    .upload = cl_upload,
    .download = cl_download,
    .synchronize = cl_synchronize,
    .fill = tkb_cl_fill,
    .flush_cache = cl_flush_cache,
    .timers = cl_timers,
    .kernel_build = tkb_cl_kernel_build,
    .kernel_launch = tkb_cl_kernel_launch,
    .kernel_free = tkb_cl_kernel_free,
    .count = cl_count,
};

__attribute__((visibility("default"))) tkb_status tkb_backend_plugin_entry(
    int abi, const tkb_plugin_host *host, const tkb_backend **backend);

tkb_status tkb_backend_plugin_entry(int abi, const tkb_plugin_host *host,
                                    const tkb_backend **backend) {
  if (abi != TKB_BACKEND_ABI || !host || host->abi != TKB_BACKEND_ABI) {
    /* no host to report through when the ABI differs: the loader says "refused" */
    return TKB_ERR_UNSUPPORTED;
  }
  tkb_cl_host = host;
  *backend = &cl_backend;
  return TKB_OK;
}
