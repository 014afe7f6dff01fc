/*
 * cl_backend.h - internals of the OpenCL backend plugin (libtkbench-opencl.so), shared by
 * its files: device.c (platforms, devices, memory), program.c (compile cache, kernels,
 * interned names), timer.c (events of a timed call), fill.c (the Philox fill kernel).
 *
 * One in-order command queue per device, created with profiling on, carries everything
 * (fills, copies, kernels), so commands run in the order tkbench enqueues them and
 * clFinish is the device synchronization. While a timer records (between timer_start and
 * timer_stop), every command the backend enqueues gets an event in the timer's
 * preallocated ring; otherwise commands get no event at all (wallclock pays nothing).
 * A device serves one thread at a time, as a command queue does.
 */
#ifndef TKB_CL_BACKEND_H
#define TKB_CL_BACKEND_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <pthread.h>

#include "backend.h"

/* The core's services (set once by the entry point). */
extern const tkb_plugin_host *tkb_cl_host;

/* tkb_set_error through the host: records the message, returns status. */
tkb_status tkb_cl_error(tkb_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "CL_OUT_OF_RESOURCES" for -5, ... */
const char *tkb_cl_err_name(cl_int err);
/* TKB_ERR_DEVICE "<what> on <dev> failed: <CL error name> (<code>)". */
tkb_status tkb_cl_fail(const tkb_device *dev, const char *what, cl_int err);

typedef struct cl_program_entry cl_program_entry;

#define TKB_CL_MAX_NAMES 512
#define TKB_CL_NAME_LEN 64

typedef struct tkb_cl_device {
  cl_platform_id platform;
  cl_device_id id;
  cl_context ctx;
  cl_command_queue queue;
  size_t max_alloc, global_mem, cache_bytes, max_wg;
  bool fp64;
  char version[64];               /* "OpenCL 3.0 PoCL ..." */
  pthread_mutex_t lock;           /* program cache and names (never in a timed call) */
  cl_program_entry *programs;     /* compile cache */
  char names[TKB_CL_MAX_NAMES][TKB_CL_NAME_LEN]; /* interned kernel names */
  int n_names;
  cl_kernel fill_kernel;          /* the Philox fill (built on first fill) */
  cl_mem normal16;                /* its 16-bit normal draws' table (uploaded with it) */
  cl_mem flush_buf;               /* cold-cache scratch */
  size_t flush_bytes;
  unsigned flush_stamp;
  struct tkb_timer *rec;          /* the timer recording now, or NULL */
} tkb_cl_device;

static inline tkb_cl_device *tkb_cl_dev(const tkb_device *dev) { return dev->impl; }

/* The event slot for a command about to be enqueued (NULL when no timer records, or the
 * timer is full, which timer_stop then reports). `name` must outlive the device. */
cl_event *tkb_cl_record(tkb_cl_device *d, const char *name);

/* program.c */
/* A name interned for the life of the device (for intervals); "?" when the table is full. */
const char *tkb_cl_intern(tkb_cl_device *d, const char *name);
/* Builds (or finds built) the program of prelude + sources[0..n) with options. */
tkb_status tkb_cl_program(tkb_device *dev, const char *const *sources, int n,
                          const char *options, cl_program *out);
tkb_status tkb_cl_kernel_build(tkb_device *dev, const char *source, const char *options,
                               const char *name, tkb_kernel **out);
tkb_status tkb_cl_kernel_launch(tkb_device *dev, tkb_kernel *k, int dims, const size_t *global,
                                const size_t *local, int nargs, const tkb_karg *args);
void tkb_cl_kernel_free(tkb_device *dev, tkb_kernel *k);

/* timer.c */
tkb_status tkb_cl_timer_open(tkb_device *dev, const tkb_timer_opts *opts, tkb_timer **out);
tkb_status tkb_cl_timer_start(tkb_timer *t);
tkb_status tkb_cl_timer_stop(tkb_timer *t, const tkb_interval **iv, size_t *n);
void tkb_cl_timer_close(tkb_timer *t);

/* fill.c */
tkb_status tkb_cl_fill(tkb_array *a, const tkb_init *init, uint64_t seed, uint64_t stream);

/* Embedded sources (generated at build time from the .cl files, src/core/dtype_convert.h
 * and src/core/philox.h). */
extern const char tkb_cl_src_dtype_convert[];
extern const char tkb_cl_src_prelude[];
extern const char tkb_cl_src_philox[];
extern const char tkb_cl_src_fill[];

#endif /* TKB_CL_BACKEND_H */
