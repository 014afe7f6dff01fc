/*
 * internal.h - declarations shared inside libtkbench; not installed, not API.
 */
#ifndef TKB_INTERNAL_H
#define TKB_INTERNAL_H

#include "tkbench.h"

#include <stdarg.h>
#include <stdatomic.h>

/* ---- errors (error.c) ---- */
/* tkb_set_error is public; this is the va_list form. */
tkb_status tkb__set_error_v(tkb_status status, const char *fmt, va_list ap);
/* Clears the thread's message (called at the start of public entry points). */
void tkb__clear_error(void);

/* ---- devices and backends (device.c, backend/cpu.c) ---- */
/*
 * A backend is a table of functions; the CPU one is built in, accelerators come as
 * plugins later. Every entry may assume its arguments were validated by the caller.
 */
typedef struct tkb_backend {
  const char *kind; /* "cpu" */
  tkb_status (*alloc)(tkb_device *dev, size_t nbytes, void **ptr);
  void (*free)(tkb_device *dev, void *ptr, size_t nbytes);
  tkb_status (*memset_zero)(tkb_device *dev, void *ptr, size_t nbytes);
  tkb_status (*copy)(tkb_device *dev, void *dst, const void *src, size_t nbytes);
  tkb_status (*synchronize)(tkb_device *dev);
  tkb_status (*fill)(tkb_array *a, const tkb_init *init, uint64_t seed, uint64_t stream);
  const char *const *methods; /* default first, NULL-ended */
} tkb_backend;

struct tkb_device {
  const tkb_backend *backend;
  char name[32];
  char description[256];
  atomic_size_t bytes_in_use;
  atomic_size_t peak_bytes;
  int ordinal;
};

extern const tkb_backend tkb__cpu_backend;
/* The cpu device singleton. */
tkb_device *tkb__cpu_device(void);

/* ---- random fill on the CPU (random.c) ---- */
/* Fills a host array; init already validated by tkb_fill. */
tkb_status tkb__fill_cpu(tkb_array *a, const tkb_init *init, uint64_t seed,
                         uint64_t stream);

/* Like tkb_fill, but a callback initializer sees `call` (the bound call being
 * standardized) in its tkb_init_ctx. tkb_fill(a, ...) == tkb__fill_call(a, ..., NULL). */
tkb_status tkb__fill_call(tkb_array *a, const tkb_init *init, uint64_t seed,
                          uint64_t stream, const tkb_args *call);

/* An array list that does not own its arrays (views such as f_std's outputs). */
tkb_status tkb__arrays_new_borrowed(tkb_arrays **out);

/* ---- clocks (bench/timer.c) ---- */
/* Monotonic raw clock in nanoseconds. */
int64_t tkb__now_ns(void);
/* Process CPU time in nanoseconds. */
int64_t tkb__cpu_now_ns(void);
/* Resolution of the monotonic raw clock in nanoseconds. */
int64_t tkb__clock_resolution_ns(void);

/* ---- system facts (bench/sysinfo.c) ---- */
/* CPU model name (static storage; "unknown" when unreadable). */
const char *tkb__cpu_model(void);
/* Number of online CPUs. */
int tkb__num_cpus(void);

/* ---- small helpers ---- */
/* strdup that reports TKB_ERR_OUT_OF_MEMORY through *st (NULL in -> NULL out). */
char *tkb__strdup(const char *s);

#define TKB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif /* TKB_INTERNAL_H */
