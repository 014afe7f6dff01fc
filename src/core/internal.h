/*
 * internal.h - declarations shared inside libtkbench; not installed, not API.
 */
#ifndef TKB_INTERNAL_H
#define TKB_INTERNAL_H

#include "tkbench.h"

#include <regex.h>
#include <stdarg.h>
#include <stdatomic.h>

/* ---- errors (error.c) ---- */
/* tkb_set_error is public; this is the va_list form. */
tkb_status tkb__set_error_v(tkb_status status, const char *fmt, va_list ap);
/* Clears the thread's message (called at the start of public entry points). */
void tkb__clear_error(void);

/* ---- descriptors only this process may use (private_fds.c) ---- */
/* fd is the run's own (its journal): a forked worker closes it first thing, so an entry
 * can neither write to it through a stale descriptor nor hold its lock. */
void tkb__fd_private(int fd);
/* fd is closed: forget it. */
void tkb__fd_private_release(int fd);
/* In a forked worker: closes every descriptor marked private. */
void tkb__fd_private_close_all(void);

/* ---- devices and backends (device.c, backend/cpu.c, kernel.c; the table: backend.h) ---- */
#include "backend.h"

/* The services the core lends its backend plugins (backend_loader.c). */
extern const tkb_plugin_host tkb__plugin_host;
/* Opens device `index` of plugin backend `kind` ("opencl", "cuda"), loading the plugin
 * on first use; `asked` names the device in messages. Thread-safe; devices are
 * singletons. TKB_ERR_DEVICE (plugin, driver or hardware missing, with why and how to
 * get it), TKB_ERR_NOT_FOUND (unknown kind, or an index past the devices present). */
tkb_status tkb__backend_device(const char *kind, int index, const char *asked, tkb_device **out);
/* How many devices of plugin backend `kind` the process can open (at most the loader's
 * own limit), loading the plugin on first use. Errors as tkb__backend_device's. */
tkb_status tkb__backend_count(const char *kind, int *n);
/* The name of a device of backend `kind` this process has opened ("opencl:0"), or NULL:
 * its runtime's threads and contexts would not survive a fork. */
const char *tkb__backend_opened(const char *kind);

/* True when a's data is host memory (the cpu, or a wrapped host buffer). */
static inline bool tkb__host_array(const tkb_array *a) {
  return !a->device || a->device->backend->host_addressable;
}

/* Bytes between any two devices (either may be the cpu); both complete on return.
 * A device-to-device copy between two accelerators goes through a host buffer. */
tkb_status tkb__copy_bytes(tkb_device *dst_dev, void *dst, tkb_device *src_dev,
                           const void *src, size_t nbytes);

/* Kernels through the device's backend (kernel.c): TKB_ERR_UNSUPPORTED naming the
 * device when its backend compiles no kernels (the cpu). kernel_free(NULL) is a no-op. */
tkb_status tkb__kernel_build(tkb_device *dev, const char *source, const char *options,
                             const char *name, tkb_kernel **out);
tkb_status tkb__kernel_launch(tkb_device *dev, tkb_kernel *k, int dims, const size_t *global,
                              const size_t *local, int nargs, const tkb_karg *args);
void tkb__kernel_free(tkb_device *dev, tkb_kernel *k);

extern const tkb_backend tkb__cpu_backend;
/* The cpu device singleton. */
tkb_device *tkb__cpu_device(void);
/* An array header over data (not owned; NULL allowed: a specs-only array of no_init). */
tkb_status tkb__array_header(const tkb_spec *spec, void *data, tkb_array **out);
/* The most memory this process may hold (memlimit.c): the smallest of physical memory,
 * every level of its cgroups' limits (v2 memory.max, v1 memory.limit_in_bytes) and
 * RLIMIT_AS; `source` says which ("the cgroup's memory.max (/sys/fs/cgroup/x/memory.max)"). */
typedef struct tkb__mem_limit {
  size_t bytes;            /* SIZE_MAX: no known limit */
  char source[1600];
} tkb__mem_limit;
void tkb__memory_limit(tkb__mem_limit *m);
/* A filter on names as --filter gives it (name_filter.c): a POSIX extended regex searched in the name,
 * a leading '-' keeping the names that do NOT match (Google Benchmark's negative filter);
 * NULL or "" keeps every name. */
typedef struct tkb__name_filter {
  regex_t re;
  bool active, negate;
} tkb__name_filter;
/* TKB_ERR_INVALID_ARGUMENT naming the pattern and regerror's reason when it does not
 * compile (then nothing needs freeing). */
tkb_status tkb__name_filter_init(tkb__name_filter *f, const char *pattern);
bool tkb__name_filter_match(const tkb__name_filter *f, const char *name);
void tkb__name_filter_free(tkb__name_filter *f);

/* TKB_OK when a user's POSIX extended regex is safe to hand to regcomp (regex_check.c):
 * at most 512 characters, no repetition stacked on a repetition (x++), counts up to 255,
 * nested repetitions copying one part at most 1000 times; else TKB_ERR_INVALID_ARGUMENT
 * beginning with `what` ("filter \"x++\"") and saying what to write instead. */
tkb_status tkb__regex_check(const char *pattern, const char *what);
/* Checks pattern (tkb__regex_check) and compiles it into *re (REG_EXTENDED | REG_NOSUB;
 * regfree it after TKB_OK). TKB_ERR_INVALID_ARGUMENT naming `name` ("filter") and
 * `shown` (the text as the user wrote it). */
tkb_status tkb__regex_compile(regex_t *re, const char *pattern, const char *name, const char *shown);
/* TKB_OK when name is a device name tkb_device_get would look up (its errors for one
 * that is not), without opening anything. */
tkb_status tkb__device_name_check(const char *name);

/* ---- the cpu kernels' instruction-set variants (cpu_isa.c) ---- */
/* 1 where CMake builds the x86-64 variant files (<family>_avx2.c, <family>_avx512.c),
 * 0 elsewhere. */
#ifndef TKB_CPU_VARIANTS
#define TKB_CPU_VARIANTS 0
#endif
/* 1 where CMake builds the aarch64 variant files (<family>_neon.c), 0 elsewhere. */
#ifndef TKB_CPU_NEON
#define TKB_CPU_NEON 0
#endif
/* The paths. A build runs those of its architecture, its ladder, each needing more than
 * the one before it: portable, avx2, avx512 on x86-64; portable, neon on aarch64;
 * portable elsewhere (cpu_isa.c says what each needs). Within a ladder the values
 * increase. */
typedef enum tkb__isa {
  TKB__ISA_PORTABLE = 0,
  TKB__ISA_AVX2,
  TKB__ISA_AVX512,
  TKB__ISA_NEON,
  TKB__ISA_COUNT
} tkb__isa;
/* The path the cpu kernels take: chosen on first use (the best this CPU runs, or
 * TKB_CPU_ISA's when the CPU runs it). Cheap: one atomic load after the first call. */
tkb__isa tkb__cpu_isa(void);
/* "portable", "avx2", "avx512" ("invalid" for other values). */
const char *tkb__isa_name(tkb__isa isa);
/* Whether this CPU and build can run `isa`. */
bool tkb__isa_supported(tkb__isa isa);
/* The path below `isa` on this build's ladder (bench programs compare the two); `isa`
 * itself for portable. */
tkb__isa tkb__isa_below(tkb__isa isa);
/* Whether the avx512 path may round to bfloat16 with AVX512-BF16 (the path is avx512 and
 * the CPU has it): an extension its kernels choose inside, the same bits either way. */
bool tkb__cpu_avx512bf16(void);
/* Switches the path, with or without its extensions (tests compare the paths in one
 * process): TKB_ERR_UNSUPPORTED for a path this CPU or build cannot run, naming what it
 * needs. Not for use while kernels run. */
tkb_status tkb__cpu_isa_set(tkb__isa isa, bool extras);
/* Why TKB_CPU_ISA was not followed ("" when it was, or is unset): a value that names no
 * path, or a path this CPU cannot run. */
const char *tkb__cpu_isa_warning(void);

/* A kernel family's variants: a table of its functions per path, `name`_portable,
 * `name`_avx2 and `name`_avx512 (x86-64) or `name`_neon (aarch64), each defined by the
 * family's file of that path.
 * TKB_ISA_DECLARE declares them; TKB_ISA_PICK(name, isa) is the table of `isa` (the
 * portable one where the build has no x86 variants). In a variant file, which defines
 * TKB_ISA_SUFFIX (portable, avx2, avx512, neon) before including the family's body,
 * TKB_ISA_NAME(name) is its own table's name. */
#define TKB_ISA_DECLARE(type, name) \
  extern const type name##_portable, name##_avx2, name##_avx512, name##_neon
#if TKB_CPU_VARIANTS
#define TKB_ISA_PICK(name, isa)                                   \
  ((isa) == TKB__ISA_AVX512 ? &name##_avx512                       \
   : (isa) == TKB__ISA_AVX2 ? &name##_avx2 : &name##_portable)
#elif TKB_CPU_NEON
#define TKB_ISA_PICK(name, isa) ((isa) == TKB__ISA_NEON ? &name##_neon : &name##_portable)
#else
#define TKB_ISA_PICK(name, isa) ((void)(isa), &name##_portable)
#endif
#define TKB_ISA_CAT_(a, b) a##_##b
#define TKB_ISA_CAT(a, b) TKB_ISA_CAT_(a, b)
#define TKB_ISA_NAME(name) TKB_ISA_CAT(name, TKB_ISA_SUFFIX)

/* ---- random fill on the CPU (random.c) ---- */
/* The float32 bits of the 16-bit normal draws' quantiles (philox.h, tkb_px_normal16;
 * normal16_table.c). */
#define TKB_NORMAL16_ENTRIES 32768
extern const uint32_t tkb__normal16_table[TKB_NORMAL16_ENTRIES];
/* Fills a host array; init already validated by tkb_fill. */
tkb_status tkb__fill_cpu(tkb_array *a, const tkb_init *init, uint64_t seed,
                         uint64_t stream);
/* Validates (a, init) as tkb_fill does and writes the plan a device fill kernel
 * reproduces (backend.h; a CALLBACK init gives draw TKB_FILL_CALLBACK). */
tkb_status tkb__fill_plan(const tkb_array *a, const tkb_init *init, uint64_t seed,
                          uint64_t stream, tkb_fill_plan *plan);

/* Like tkb_fill, but a callback initializer sees `call` (the bound call being
 * standardized) in its tkb_init_ctx. tkb_fill(a, ...) == tkb__fill_call(a, ..., NULL). */
tkb_status tkb__fill_call(tkb_array *a, const tkb_init *init, uint64_t seed,
                          uint64_t stream, const tkb_args *call);

/* An array list that does not own its arrays (views such as f_std's outputs). */
tkb_status tkb__arrays_new_borrowed(tkb_arrays **out);

/* ---- host clocks (clocks.c) ---- */
/* Monotonic raw clock in nanoseconds. */
int64_t tkb__now_ns(void);
/* Process CPU time in nanoseconds. */
int64_t tkb__cpu_now_ns(void);
/* Resolution of the monotonic raw clock in nanoseconds. */
int64_t tkb__clock_resolution_ns(void);
/* Resolution of the process CPU clock in nanoseconds (-1: unknown). */
int64_t tkb__cpu_clock_resolution_ns(void);
/* What one read of `clock` costs, in ns: the fastest of `runs` runs of `reads`
 * back-to-back reads (the fastest, since preemption only ever adds). */
double tkb__clock_read_ns(int64_t (*clock)(void), int runs, int reads);

/* ---- system facts (sysinfo.c) ---- */
/* CPU model name (static storage; "unknown" when unreadable). */
const char *tkb__cpu_model(void);
/* Number of online CPUs. */
int tkb__num_cpus(void);
/* The machine's load now: the 1, 5 and 15 minute load averages, and the threads of other
 * processes running or waiting to run at this moment (/proc/loadavg's runnable count
 * without this process's own). */
typedef struct tkb__load {
  bool valid;    /* /proc/loadavg was readable */
  double avg[3]; /* NaN when unreadable */
  int others;    /* other processes' runnable threads now: the least of a few looks a
                    millisecond apart, so a kernel thread passing by is not counted;
                    -1 when unknown */
  /* for tkb__load_others_between: the machine's busy CPU seconds (/proc/stat, steal
   * included), this process's CPU seconds and the monotonic clock, now; NaN unknown */
  double busy_s, own_cpu_s, wall_s;
} tkb__load;
void tkb__load_now(tkb__load *out);
/* The cores other processes kept busy on average between two readings (rounded), or -1
 * when /proc/stat is unreadable or the readings are under 0.25 s apart (its tick is 10 ms). */
int tkb__load_others_between(const tkb__load *start, const tkb__load *end);

/* ---- small helpers ---- */
/* strdup that reports TKB_ERR_OUT_OF_MEMORY through *st (NULL in -> NULL out). */
char *tkb__strdup(const char *s);

/* A counter's name (tkb_counter): 1 to 63 printable characters but '"', '\\' and ',', no
 * key of a Google Benchmark row, none of earlier[0..n_earlier). TKB_ERR_INVALID_ARGUMENT
 * saying which (registry.c). */
tkb_status tkb__counter_name_check(const char *name, const char *const *earlier, int n_earlier);

#define TKB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif /* TKB_INTERNAL_H */
