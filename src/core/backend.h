/*
 * backend.h - the device backend interface: what the core asks of a device, and what a
 * backend plugin (libtkbench-opencl.so, libtkbench-cuda.so) may ask of the core.
 * Internal (not installed), but it is the ABI between libtkbench and its plugins:
 * change a struct here and bump TKB_BACKEND_ABI.
 *
 * Devices are named "cpu", "cuda:N", "opencl:N" (docs/ARCHITECTURE.md). The cpu backend is
 * built in (src/backend/cpu.c); the others are shared objects that device.c loads with
 * dlopen the first time such a device is named, from TKB_PLUGIN_PATH, then the folder
 * libtkbench itself was loaded from (dladdr), then that folder's ../lib, then the
 * dynamic linker's path. A plugin links only its driver (OpenCL, CUDA) and none of
 * libtkbench: every core service it needs comes through tkb_plugin_host, so it loads
 * the same into the tkbench executable, libtkbench.so and a static test program.
 *
 * Device memory. tkb_array.data is what alloc returned: a host pointer on the cpu
 * (host_addressable), an opaque handle elsewhere (an OpenCL cl_mem): code outside the
 * backend never dereferences it nor does arithmetic on it; it moves bytes with
 * upload/download/copy and hands the handle to kernels as a TKB_KARG_BUFFER.
 *
 * Device timing. The timing methods are the core's (src/bench/methods.c: one table of
 * names, aliases, device kinds and options). A method whose times come from the device
 * reads one of the backend's timers, found by what it records: an "events" timer (one
 * interval around the whole call, such as CUDA events) or an "activity" timer (one
 * interval per device command: OpenCL's profiling events, CUPTI's records). A timer
 * opens before the timed loop (all its buffers are allocated there, sized at compile
 * time); start/stop bracket each timed call and must not allocate, log or lock; stop
 * hands back the device activity of the call as intervals (start, end, name). What the
 * method makes of them (a sum, or the union after a name filter) is the core's
 * (src/bench/meter.c, on the device-independent src/core/intervals.c), so every backend
 * gets the same semantics.
 */
#ifndef TKB_BACKEND_H
#define TKB_BACKEND_H

#include "tkbench.h"

#include <stdarg.h>
#include <stdatomic.h>

/* Bumped whenever a struct below changes; a plugin built for another value is refused. */
#define TKB_BACKEND_ABI 5 /* 2: device_state; 3: timer_metadata, TKB_FILL_NORMAL16;
                             4: timers as tables of tkb_timer_ops, methods in the core;
                             5: tkb_device.uuid, count */

/* Intervals one timed call may record; a call that enqueues more commands fails with a
 * message naming this limit (the buffers are allocated before the timed loop). */
#define TKB_MAX_CALL_INTERVALS 4096

typedef struct tkb_backend tkb_backend;

struct tkb_device {
  const tkb_backend *backend;
  char name[32];            /* canonical: "cpu", "opencl:0" */
  char description[256];    /* one line: model, units, memory, driver */
  atomic_size_t bytes_in_use;
  atomic_size_t peak_bytes;
  int ordinal;
  void *impl;               /* the backend's per-device state (NULL on the cpu) */
  char uuid[64];            /* the physical device's own identity, the same in every
                               process ("GPU-..." as nvidia-smi prints it); "" when the
                               backend knows none (ABI 5) */
};

/* One span of device activity (a kernel, a copy, a fill) on the device's clock. */
typedef struct tkb_interval {
  int64_t start_ns, end_ns;
  const char *name; /* kernel or command name; the backend keeps it alive for the life of
                       the device (static or interned), so intervals can outlive kernels */
} tkb_interval;

/* A backend's device-timing session for one benchmark (opaque to the core). */
typedef struct tkb_timer tkb_timer;

/* The device activity an activity timer records (bits of tkb_timer_opts.activity). */
#define TKB_ACTIVITY_KERNELS 1u /* kernel executions */
#define TKB_ACTIVITY_COPIES 2u  /* copies and transfers */
#define TKB_ACTIVITY_FILLS 4u   /* memsets and buffer fills */
#define TKB_ACTIVITY_ALL (TKB_ACTIVITY_KERNELS | TKB_ACTIVITY_COPIES | TKB_ACTIVITY_FILLS)

/* What the core asks of a timer: the method's facts, already validated against the
 * method table, never the user's whole tkb_bench_opts. */
typedef struct tkb_timer_opts {
  const char *method;   /* the canonical method being timed, for messages */
  unsigned activity;    /* activity timers: TKB_ACTIVITY_* to record (the rest is skipped) */
  bool blocking_kernel; /* events timers that can hold the stream until the call is queued
                           (CUDA's blocking kernel): do so */
} tkb_timer_opts;

/* The two kinds of device timer (tkb_timer_ops.kind). */
#define TKB_TIMER_EVENTS "events"
#define TKB_TIMER_ACTIVITY "activity"

/* One device timer of a backend. open allocates everything; start/stop bracket one call
 * (stop after the core synchronized) and neither allocates, logs nor locks; the intervals
 * stop returns stay valid until the next start or close. */
typedef struct tkb_timer_ops {
  const char *kind; /* TKB_TIMER_EVENTS or TKB_TIMER_ACTIVITY */
  tkb_status (*open)(tkb_device *dev, const tkb_timer_opts *opts, tkb_timer **out);
  tkb_status (*start)(tkb_timer *t);
  tkb_status (*stop)(tkb_timer *t, const tkb_interval **iv, size_t *n);
  void (*close)(tkb_timer *t);
  /* Optional: after the timed loop, before close, what the timer has to say about how it
   * timed (CUDA events: "blocking_kernel"): at most cap key/value pairs into kv, their
   * strings the timer's until close; returns how many. */
  int (*metadata)(tkb_timer *t, tkb_meta *kv, int cap);
} tkb_timer_ops;

/* A compiled device kernel (opaque to the core). */
typedef struct tkb_kernel tkb_kernel;

/* One kernel argument. */
typedef enum tkb_karg_kind {
  TKB_KARG_BUFFER = 0, /* value points at an array's data handle (void *) */
  TKB_KARG_SCALAR,     /* value points at size bytes passed by value */
  TKB_KARG_LOCAL       /* size bytes of work-group local memory; value unused */
} tkb_karg_kind;

typedef struct tkb_karg {
  tkb_karg_kind kind;
  size_t size;
  const void *value;
} tkb_karg;

/* TKB_KARG_BUF(a->data) (an lvalue), TKB_KARG_VAL(n) for a scalar lvalue. */
#define TKB_KARG_BUF(handle) ((tkb_karg){TKB_KARG_BUFFER, sizeof(void *), &(handle)})
#define TKB_KARG_VAL(x) ((tkb_karg){TKB_KARG_SCALAR, sizeof(x), &(x)})

/*
 * The plan of a random fill (random.c builds it; tkb__fill_plan): what a device kernel
 * needs to reproduce the cpu's bytes. The element <-> counter mapping and the transforms
 * are philox.h's; the kinds and parameters are random.c's (see there).
 */
typedef enum tkb_fill_draw {
  TKB_FILL_NORMAL32 = 0, /* tkb_px_box_mullerf, 4 elements per counter */
  TKB_FILL_NORMAL64,     /* tkb_px_box_muller, 2 per counter (float64) */
  TKB_FILL_UNIFORM32,    /* tkb_px_lerp_clampf(tkb_px_u01f(w)), 4 per counter */
  TKB_FILL_UNIFORM64,    /* tkb_px_lerp_clamp(tkb_px_u01(W)), 2 per counter */
  TKB_FILL_RANGE32,      /* ilo + tkb_px_range32(w, width), 4 per counter */
  TKB_FILL_RANGE64,      /* ilo + tkb_px_range64(W, width), 2 per counter */
  TKB_FILL_CONSTANT,     /* every element = cbytes */
  TKB_FILL_CALLBACK,     /* a user callback: only the host can run it */
  TKB_FILL_NORMAL16      /* tkb_px_normal16 of each 16-bit half, 8 per counter (the float
                            dtypes of 16 bits or fewer; ABI 3) */
} tkb_fill_draw;

typedef struct tkb_fill_plan {
  tkb_fill_draw draw;
  tkb_dtype dtype;
  int per_ctr;          /* elements per Philox counter (E) */
  size_t esize;         /* bytes per element */
  uint64_t seed, stream;
  bool affine;          /* normal: v = fma(z, std, mean) in the draw's precision */
  float mean_f, std_f, lo_f, hi_f, mn_f, mx_f;
  double mean_d, std_d, lo_d, hi_d, mn_d, mx_d;
  int64_t ilo;          /* range: lowest value */
  uint64_t width;       /* range: width (0 means 2^64) */
  unsigned char cbytes[8]; /* constant: one element's bytes */
} tkb_fill_plan;

/* A device's clocks and throttling at one moment (device_state; CUDA: NVML). */
typedef struct tkb_device_state {
  bool valid;              /* false: not known (why_unknown says why) */
  bool throttled;          /* a thermal or power reason slows the clocks now */
  unsigned sm_clock_mhz;
  unsigned temperature_c;
  double power_w;          /* < 0 when the board does not report it */
  char reasons[128];       /* the active clocks-event reasons, "none" */
  char why_unknown[256];
} tkb_device_state;

/*
 * The backend table. Every entry may assume its arguments were validated by the core.
 * Entries marked optional may be NULL; the core then reports TKB_ERR_UNSUPPORTED.
 */
struct tkb_backend {
  const char *kind;             /* "cpu", "opencl", "cuda" */
  bool host_addressable;        /* array data are host pointers */

  /* Plugins: fills dev->name, description and impl for device `ordinal` (the core has
   * zeroed dev and set backend and ordinal). TKB_ERR_NOT_FOUND for an index past the
   * devices present, TKB_ERR_DEVICE when the driver has none (the sentence says why). */
  tkb_status (*open)(tkb_device *dev, int ordinal);

  /* Memory. alloc of 0 bytes returns a valid unique handle. */
  tkb_status (*alloc)(tkb_device *dev, size_t nbytes, void **ptr);
  void (*free)(tkb_device *dev, void *ptr, size_t nbytes);
  tkb_status (*memset_zero)(tkb_device *dev, void *ptr, size_t nbytes);
  /* device -> same device */
  tkb_status (*copy)(tkb_device *dev, void *dst, const void *src, size_t nbytes);
  /* host -> device and device -> host; both complete before returning */
  tkb_status (*upload)(tkb_device *dev, void *dst, const void *host, size_t nbytes);
  tkb_status (*download)(tkb_device *dev, void *host, const void *src, size_t nbytes);
  tkb_status (*synchronize)(tkb_device *dev);
  /* Random fill of a device array, bit-identical to the cpu's (tkb_fill's contract). */
  tkb_status (*fill)(tkb_array *a, const tkb_init *init, uint64_t seed, uint64_t stream);
  /* Optional: evicts the device's caches by writing a scratch buffer of at least twice
   * their size, and waits for it. The first call allocates the buffer (the benchmark
   * makes that call before its timed loop). */
  tkb_status (*flush_cache)(tkb_device *dev);

  /* Optional: the device timers, NULL-ended (NULL: none; the host-clock methods need
   * none). A device has the methods of the core's table for its kind whose timer kind
   * is here. */
  const tkb_timer_ops *const *timers;

  /* Optional: kernels compiled from source at prepare time (OpenCL C for opencl).
   * kernel_build compiles `source` with `options` (cached per device by their text) and
   * returns kernel `name` of it; kernel_launch sets the arguments and enqueues it over
   * `global` work-items (local NULL: the backend picks) without waiting, and neither
   * allocates nor logs on the host; a global size of 0 launches nothing. A 1-D launch
   * without a local size may run more work-items than `global` (rounded up to whole
   * work-groups): kernels check their bounds. */
  tkb_status (*kernel_build)(tkb_device *dev, const char *source, const char *options,
                             const char *name, tkb_kernel **out);
  tkb_status (*kernel_launch)(tkb_device *dev, tkb_kernel *k, int dims, const size_t *global,
                              const size_t *local, int nargs, const tkb_karg *args);
  void (*kernel_free)(tkb_device *dev, tkb_kernel *k);

  /* Optional (ABI 2): the device's clocks and throttling now, read only (no setting is
   * ever changed); allocates, logs and locks nothing, so it may run between timed calls. */
  tkb_status (*device_state)(tkb_device *dev, tkb_device_state *out);

  /* Optional (ABI 5): how many devices of this kind the process can open (CUDA counts
   * what CUDA_VISIBLE_DEVICES leaves visible), without opening any. TKB_ERR_DEVICE as
   * open's when the driver has none. */
  tkb_status (*count)(int *n);
};

/* What a plugin may call in the core (it links nothing of libtkbench). */
typedef struct tkb_plugin_host {
  int abi; /* TKB_BACKEND_ABI of the core */
  /* tkb_set_error: records the thread's message, returns status */
  tkb_status (*set_error_v)(tkb_status status, const char *fmt, va_list ap);
  /* the monotonic raw clock in ns (wallclock's) */
  int64_t (*now_ns)(void);
  /* validates (a, init) exactly as tkb_fill does and builds the plan */
  tkb_status (*fill_plan)(const tkb_array *a, const tkb_init *init, uint64_t seed,
                          uint64_t stream, tkb_fill_plan *plan);
} tkb_plugin_host;

/* The one symbol a backend plugin exports: checks abi, keeps host, returns its table. */
#define TKB_PLUGIN_ENTRY_NAME "tkb_backend_plugin_entry"
typedef tkb_status (*tkb_plugin_entry_fn)(int abi, const tkb_plugin_host *host,
                                          const tkb_backend **backend);

#endif /* TKB_BACKEND_H */
