/*
 * tkbench.h - the one public header of libtkbench.
 *
 * tkbench implements Tokamax's benchmarking system in C: a function with awkward
 * arguments (static values, abstract arrays given only by shape and dtype, concrete
 * arrays, positional or keyword) is turned by tkb_standardize_function() into a
 * standard function f_std(args) over a flat list of arrays, whose abstract inputs are
 * filled with seeded random data; tkb_benchmark() then times f_std with the timing
 * method of the device and returns a tkb_benchmark_data (Tokamax's BenchmarkData).
 *
 * Conventions used throughout:
 *  - Every fallible function returns tkb_status (TKB_OK == 0). On failure,
 *    tkb_last_error() returns a sentence (thread-local) naming the argument, the value
 *    and what is allowed. No function prints, exits or aborts on bad input.
 *  - Ownership: whoever creates frees. tkb_x_new()/tkb_x_free() pairs; every *_free()
 *    accepts NULL and does nothing. Output pointers are written only on success.
 *  - Times are milliseconds (double) unless a name says otherwise; sizes are bytes.
 *  - Shapes are int64_t; ranks 0..TKB_MAX_RANK.
 */
#ifndef TKBENCH_H
#define TKBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libtkbench is built with hidden visibility: what this header declares is its
 * exported API, and nothing else is. */
#if defined(TKB_BUILDING_LIBRARY) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define TKB_VERSION_MAJOR 0
#define TKB_VERSION_MINOR 1
#define TKB_VERSION_PATCH 0
#define TKB_VERSION_STRING "0.1.0"

/** The library's version string ("MAJOR.MINOR.PATCH"); static storage. */
const char *tkb_version(void);
/** The build type the library was compiled with ("Release", "Debug", ...). */
const char *tkb_build_type(void);
/** The instruction-set path of the cpu kernels in use: "portable", "avx2" or "avx512"
 *  (static storage). Chosen once, on first use, as the best this CPU runs; the
 *  environment variable TKB_CPU_ISA (portable, avx2, avx512, auto) forces a path the
 *  CPU runs (one it cannot run, or an unknown value, leaves the best in place). */
const char *tkb_cpu_isa(void);

/* ------------------------------------------------------------------------------ */
/* Status codes and errors                                                        */
/* ------------------------------------------------------------------------------ */

typedef enum tkb_status {
  TKB_OK = 0,
  TKB_ERR_INVALID_ARGUMENT = 1,  /* a value outside what is allowed (names it) */
  TKB_ERR_MISSING_ARGUMENT = 2,  /* a required parameter got no value */
  TKB_ERR_UNKNOWN_KEYWORD = 3,   /* a keyword that names no parameter */
  TKB_ERR_DUPLICATE_ARGUMENT = 4,/* a parameter given both positionally and by keyword */
  TKB_ERR_WRONG_KIND = 5,        /* e.g. a string where an array is expected */
  TKB_ERR_TOO_MANY_POSITIONAL = 6,/* more positionals than positional parameters */
  TKB_ERR_BAD_SHAPE = 7,         /* negative dimension, rank > TKB_MAX_RANK, mismatch */
  TKB_ERR_OVERFLOW = 8,          /* an element count or byte size overflows */
  TKB_ERR_OUT_OF_MEMORY = 9,     /* allocation failed or cannot fit in memory */
  TKB_ERR_UNSUPPORTED = 10,      /* a method, mode or dtype the target lacks */
  TKB_ERR_DEVICE = 11,           /* a device is missing or failed */
  TKB_ERR_NOT_FOUND = 12,        /* a name (dtype, device, method, ...) is unknown */
  TKB_ERR_IO = 13,               /* a file could not be read or written */
  TKB_ERR_NUMERICS = 14,         /* NaN or Inf where finite values are required */
  TKB_ERR_INTERRUPTED = 15,      /* stopped by a signal or a callback */
  TKB_ERR_INTERNAL = 16,         /* a bug in tkbench: please report it */
  TKB_ERR_CRASHED = 17,          /* the process running an entry died (a signal, or an exit
                                    before its result): the message names the signal, the
                                    entry and what it was doing */
  TKB_ERR_TIMEOUT = 18           /* an entry ran past its time limit and was stopped */
} tkb_status;

/** Short upper-case name of a status ("OK", "INVALID_ARGUMENT", ...); never NULL. */
const char *tkb_status_name(tkb_status status);

/**
 * The message of the last failure on the calling thread: a sentence naming the
 * argument, the offending value and what is allowed. Empty string when none.
 * Owned by the library; valid until the next tkbench call on this thread.
 */
const char *tkb_last_error(void);

/* ------------------------------------------------------------------------------ */
/* dtypes                                                                          */
/* ------------------------------------------------------------------------------ */

typedef enum tkb_dtype {
  TKB_BOOL = 0,
  TKB_INT8,
  TKB_INT16,
  TKB_INT32,
  TKB_INT64,
  TKB_UINT8,
  TKB_FLOAT8_E4M3FN,
  TKB_FLOAT8_E5M2,
  TKB_FLOAT16,
  TKB_BFLOAT16,
  TKB_FLOAT32,
  TKB_FLOAT64,
  TKB_DTYPE_COUNT
} tkb_dtype;

/** JAX's spelling of a dtype ("bool", "int8", ..., "float8_e4m3fn", "bfloat16"). */
const char *tkb_dtype_name(tkb_dtype dtype);
/**
 * Parses JAX's spelling (also numpy's short aliases "bf16", "f16", "f32", "f64",
 * "i32"...). TKB_ERR_NOT_FOUND naming the string and listing the valid names.
 */
tkb_status tkb_dtype_parse(const char *name, tkb_dtype *out);
/** Bytes per element (1, 2, 4 or 8); 0 for an invalid dtype. */
size_t tkb_dtype_size(tkb_dtype dtype);
/** True for the floating dtypes (float8_*, float16, bfloat16, float32, float64). */
bool tkb_dtype_is_float(tkb_dtype dtype);
/** True for the integer dtypes (int8..int64, uint8); bool is neither. */
bool tkb_dtype_is_int(tkb_dtype dtype);

/*
 * Scalar conversions between float32 and the narrow float types. float32 -> narrow
 * rounds to nearest, ties to even, with ml_dtypes' treatment of NaN, infinities,
 * subnormals and overflow: float16/bfloat16/float8_e5m2 overflow to +-Inf;
 * float8_e4m3fn has no infinity, so overflow and +-Inf become NaN (0x7f/0xff), as
 * ml_dtypes gives. NaN stays NaN (sign kept). narrow -> float32 is exact.
 */
float tkb_f16_to_f32(uint16_t h);
uint16_t tkb_f32_to_f16(float f);
float tkb_bf16_to_f32(uint16_t b);
uint16_t tkb_f32_to_bf16(float f);
float tkb_e4m3fn_to_f32(uint8_t v);
uint8_t tkb_f32_to_e4m3fn(float f);
float tkb_e5m2_to_f32(uint8_t v);
uint8_t tkb_f32_to_e5m2(float f);

/**
 * Converts n elements of dtype `from` to dtype `to` (buffers must not overlap).
 * Floats go through float32 (float64 <-> float64 directly); floats to integers
 * truncate toward zero with saturation (NaN -> 0); bool is 0/1.
 */
tkb_status tkb_convert(const void *src, tkb_dtype from, void *dst, tkb_dtype to,
                       size_t n);

/* ------------------------------------------------------------------------------ */
/* Specs (abstract arrays, like jax.ShapeDtypeStruct)                              */
/* ------------------------------------------------------------------------------ */

#define TKB_MAX_RANK 8

/** An abstract array: dtype and shape. Contract. */
typedef struct tkb_spec {
  tkb_dtype dtype;
  int rank;                     /* 0..TKB_MAX_RANK */
  int64_t shape[TKB_MAX_RANK];  /* dims beyond rank are ignored (keep them 0) */
} tkb_spec;

/** TKB_SPEC(TKB_FLOAT32, 2, 3) is a float32 spec of shape (2, 3). */
#define TKB_SPEC(dt, ...)                                                     \
  ((tkb_spec){.dtype = (dt),                                                  \
              .rank = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
              .shape = {__VA_ARGS__}})
/** The same as a brace initializer, for static and const objects:
 *  static const tkb_spec s = TKB_SPEC_INIT(TKB_FLOAT32, 2, 3); */
#define TKB_SPEC_INIT(dt, ...)                                                 \
  {.dtype = (dt), .rank = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
   .shape = {__VA_ARGS__}}
/** A rank-0 (scalar) spec. */
#define TKB_SCALAR_SPEC(dt) ((tkb_spec){.dtype = (dt), .rank = 0, .shape = {0}})

/**
 * Checks a spec: dtype valid, 0 <= rank <= TKB_MAX_RANK, no negative dimension, and
 * the element count and byte size fit in int64_t / size_t. `what` names the array in
 * the error message (may be NULL). TKB_ERR_BAD_SHAPE or TKB_ERR_OVERFLOW.
 */
tkb_status tkb_spec_check(const tkb_spec *spec, const char *what);
/** Element count (product of dims; 1 for rank 0). Checks as tkb_spec_check. */
tkb_status tkb_spec_numel(const tkb_spec *spec, int64_t *numel);
/** Byte size (numel * dtype size). Checks as tkb_spec_check. */
tkb_status tkb_spec_nbytes(const tkb_spec *spec, size_t *nbytes);
/** Equal dtype, rank and dims. */
bool tkb_spec_equal(const tkb_spec *a, const tkb_spec *b);
/**
 * Writes "bfloat16[384,384,64]" into buf (always NUL-terminated when cap > 0).
 * Returns the length the full text needs, like snprintf.
 */
int tkb_spec_format(const tkb_spec *spec, char *buf, size_t cap);
/** Parses "bfloat16[384,384,64]" or "f32[]" into a spec (TKB_ERR_INVALID_ARGUMENT). */
tkb_status tkb_spec_parse(const char *text, tkb_spec *out);

/* ------------------------------------------------------------------------------ */
/* Devices                                                                         */
/* ------------------------------------------------------------------------------ */

typedef struct tkb_device tkb_device;

/**
 * Opens a device by name: "cpu", "cuda:N" or "opencl:N" (N counts the devices of every
 * platform in order; "opencl" alone is "opencl:0"; NULL is the cpu, "" no device). The
 * cpu is built in; the first cuda/opencl name loads that backend's plugin (libtkbench-cuda.so,
 * libtkbench-opencl.so) from TKB_PLUGIN_PATH (colon-separated folders), else the folder
 * of libtkbench (or of the program it is linked into), else ../lib of it, else the
 * dynamic linker's path. Devices are shared singletons owned by the library: do not
 * free. TKB_ERR_NOT_FOUND for an unknown name or an index past the devices present
 * (naming those present); TKB_ERR_DEVICE with a sentence saying what is missing (the
 * plugin, the driver's loader, any platform or device) and how to get it.
 */
tkb_status tkb_device_get(const char *name, tkb_device **out);
/** The device's canonical name ("cpu"). */
const char *tkb_device_name(const tkb_device *dev);
/** A one-line description (CPU model and cores, GPU model, ...). */
const char *tkb_device_description(const tkb_device *dev);
/**
 * The physical device's own identity, the same in every process that opens it: a CUDA
 * GPU's UUID as nvidia-smi prints it ("GPU-5e4f...-..."); "" for a device whose backend
 * knows none (the cpu, OpenCL). Owned by the device.
 */
const char *tkb_device_uuid(const tkb_device *dev);
/**
 * How many devices of a kind ("cpu", "cuda", "opencl") this process can open, without
 * opening any, so that kind:0 to kind:(*n - 1) exist: the cpu is 1; CUDA counts the GPUs
 * CUDA_VISIBLE_DEVICES leaves visible; the plugin is loaded as tkb_device_get does.
 * TKB_ERR_INVALID_ARGUMENT for NULL arguments; TKB_ERR_NOT_FOUND for another kind;
 * TKB_ERR_DEVICE with a sentence saying what is missing (plugin, driver, any device).
 */
tkb_status tkb_device_count(const char *kind, int *n);
/** Bytes currently allocated on the device through tkbench (dev NULL: cpu). */
size_t tkb_device_bytes_in_use(const tkb_device *dev);
/** High-water mark of tkb_device_bytes_in_use since the last reset. */
size_t tkb_device_peak_bytes(const tkb_device *dev);
/** Resets the high-water mark to the bytes in use now. */
void tkb_device_reset_peak(tkb_device *dev);
/**
 * Allocates nbytes of device memory (64-byte aligned on the CPU) counted in the
 * device's bytes in use; ops use it for workspaces so peak memory includes them.
 * nbytes == 0 returns a valid unique pointer. Free with tkb_device_free.
 */
tkb_status tkb_device_alloc(tkb_device *dev, size_t nbytes, void **ptr);
/** Frees memory from tkb_device_alloc; nbytes must be the size allocated. */
void tkb_device_free(tkb_device *dev, void *ptr, size_t nbytes);
/** Waits until all work queued on the device is done (no-op on the CPU). */
tkb_status tkb_device_synchronize(tkb_device *dev);
/**
 * Threads used by CPU kernels and fills (OpenMP). 0 restores the default (the
 * OpenMP default, normally the number of cores).
 */
void tkb_set_num_threads(int n);
int tkb_get_num_threads(void);

/* ------------------------------------------------------------------------------ */
/* Arrays                                                                          */
/* ------------------------------------------------------------------------------ */

/**
 * A concrete array: a spec plus device memory, row-major and contiguous. Fields are
 * public for kernels to read; create and free through the functions below.
 */
typedef struct tkb_array {
  tkb_spec spec;
  void *data;          /* device memory (host-addressable on the CPU) */
  size_t nbytes;       /* numel * dtype size */
  int64_t numel;
  tkb_device *device;
  bool owns_data;      /* false for tkb_array_wrap */
} tkb_array;

/** New uninitialized array on dev (NULL means "cpu"). Free with tkb_array_free. */
tkb_status tkb_array_new(tkb_device *dev, const tkb_spec *spec, tkb_array **out);
/** New array filled with zeros. */
tkb_status tkb_array_zeros(tkb_device *dev, const tkb_spec *spec, tkb_array **out);
/**
 * Wraps caller-owned host memory (not copied, not freed, not counted) as a cpu
 * array. The memory must hold the spec's bytes and outlive the array.
 * TKB_ERR_INVALID_ARGUMENT when data is NULL and the spec holds any bytes.
 */
tkb_status tkb_array_wrap(const tkb_spec *spec, void *data, tkb_array **out);
/** Deep copy onto dev (NULL: same device as src), across devices too (cpu <-> device,
 *  device <-> device through the host). */
tkb_status tkb_array_copy(const tkb_array *src, tkb_device *dev, tkb_array **out);
/** Frees the array and, when it owns them, its data. NULL is a no-op. */
void tkb_array_free(tkb_array *a);
/** True when specs are equal and the bytes are identical. */
bool tkb_array_equal(const tkb_array *a, const tkb_array *b);
/** Element i converted to double (bounds checked by the caller). */
double tkb_array_get_f64(const tkb_array *a, int64_t i);
/** Stores v into element i, converted to the array's dtype (rounded, saturated). */
void tkb_array_set_f64(tkb_array *a, int64_t i, double v);

/**
 * An ordered list of arrays (the standard args of f_std, or its outputs). A list made
 * with tkb_arrays_new owns the arrays pushed into it; one a function returns as
 * borrowed (tkb_std_fn_call's outputs) belongs to that function's object.
 */
typedef struct tkb_arrays tkb_arrays;

/** A new empty list that owns the arrays pushed into it. */
tkb_status tkb_arrays_new(tkb_arrays **out);
/** Appends a (ownership moves to the list when the list owns). name may be NULL. */
tkb_status tkb_arrays_push(tkb_arrays *list, tkb_array *a, const char *name);
size_t tkb_arrays_count(const tkb_arrays *list);
/** The i-th array (NULL when out of range). Owned by the list. */
tkb_array *tkb_arrays_get(const tkb_arrays *list, size_t i);
/** The name the i-th array came from ("x", "scale", "grad_x", "out0"...), or "". */
const char *tkb_arrays_name(const tkb_arrays *list, size_t i);
/** Frees the list and the arrays it owns. NULL is a no-op. */
void tkb_arrays_free(tkb_arrays *list);

/* ------------------------------------------------------------------------------ */
/* Device arrays (accelerator backends)                                            */
/* ------------------------------------------------------------------------------ */
/*
 * On an accelerator (opencl:N, cuda:N) tkb_array.data is a device handle, not host
 * memory: read and write it with these, never through the pointer. tkb_array_get_f64,
 * tkb_array_set_f64 and tkb_array_diff_summary take host (cpu) arrays only; copy a
 * device array to the cpu first (tkb_array_copy with the "cpu" device).
 */

/**
 * Copies all of a's bytes (its dtype's layout, row-major) into host memory, from any
 * device; returns when they are there. nbytes must equal a->nbytes.
 * Errors: TKB_ERR_INVALID_ARGUMENT (NULL a or host, nbytes != a->nbytes naming both,
 * an abstract array), TKB_ERR_DEVICE (the device failed, with the driver's reason).
 */
tkb_status tkb_array_read(const tkb_array *a, void *host, size_t nbytes);
/** Copies nbytes (== a->nbytes) of host memory into a, on any device. Errors as
 *  tkb_array_read. */
tkb_status tkb_array_write(tkb_array *a, const void *host, size_t nbytes);
/** Copies src's bytes into dst (equal specs, any two devices). TKB_ERR_BAD_SHAPE naming
 *  both specs when they differ; otherwise as tkb_array_read. */
tkb_status tkb_array_copy_into(tkb_array *dst, const tkb_array *src);

/**
 * The canonical name of timing method `method` on dev (NULL: cpu): NULL, "" and "auto"
 * give the device's default, "xprof" gives "profiler" and "hermetic_xprof"
 * "hermetic_profiler" (Tokamax's names). *canonical is static storage. Errors exactly
 * as tkb_benchmark reports them: TKB_ERR_UNSUPPORTED naming the method and the ones the
 * device has, TKB_ERR_NOT_FOUND for a name that is no timing method.
 */
tkb_status tkb_method_resolve(const tkb_device *dev, const char *method, const char **canonical);

/* ------------------------------------------------------------------------------ */
/* Random initialization (Philox4x32-10, counter based)                            */
/* ------------------------------------------------------------------------------ */

typedef enum tkb_init_kind {
  TKB_INIT_DEFAULT = 0, /* Tokamax's rule per dtype: floats N(0,1), bool fair coin,
                           ints uniform in [max(min,-m), m), m = min(max+1, 128) */
  TKB_INIT_NORMAL,      /* normal(a = mean, b = stddev); for the dtypes of 16 bits or
                           fewer from 16-bit draws: the N(0,1) quantile of one of 65536
                           equiprobable bins (|z| <= 4.32), about as fine as those dtypes
                           hold it (philox.h) */
  TKB_INIT_UNIFORM,     /* uniform [a = lo, b = hi) (floats); ints: integer range */
  TKB_INIT_INT_RANGE,   /* integers uniform in [a, b) (also valid for floats) */
  TKB_INIT_CONSTANT,    /* every element = a (0 for zeros, 1 for ones) */
  TKB_INIT_CALLBACK     /* the user's callback fills the array */
} tkb_init_kind;

struct tkb_args;

/**
 * What a callback initializer gets: the seed and the array's stream index (its index
 * among the call's arrays), and the bound call (specs of every argument; arrays
 * before this one may already be filled) to size things from.
 */
typedef struct tkb_init_ctx {
  uint64_t seed;
  uint64_t stream;
  const struct tkb_args *call; /* NULL when filling outside standardization */
  void *user;
} tkb_init_ctx;

typedef tkb_status (*tkb_init_callback)(tkb_array *a, const tkb_init_ctx *ctx);

/** How one abstract array is filled. A zeroed struct is TKB_INIT_DEFAULT. */
typedef struct tkb_init {
  tkb_init_kind kind;
  double a, b;
  tkb_init_callback callback;
  void *user;
} tkb_init;

#define TKB_INIT_NORMAL_(mean, std) ((tkb_init){.kind = TKB_INIT_NORMAL, .a = (mean), .b = (std)})
#define TKB_INIT_UNIFORM_(lo, hi) ((tkb_init){.kind = TKB_INIT_UNIFORM, .a = (lo), .b = (hi)})
#define TKB_INIT_RANGE_(lo, hi) ((tkb_init){.kind = TKB_INIT_INT_RANGE, .a = (lo), .b = (hi)})
#define TKB_INIT_CONSTANT_(v) ((tkb_init){.kind = TKB_INIT_CONSTANT, .a = (v)})
#define TKB_INIT_CALLBACK_(fn, u) ((tkb_init){.kind = TKB_INIT_CALLBACK, .callback = (fn), .user = (u)})

/**
 * Fills `a` from the Philox stream keyed by (seed, stream). The result depends only on
 * (init, seed, stream, spec): bit-identical for every thread count and, for device
 * arrays, on every device (src/core/philox.h states the element <-> counter mapping,
 * the cross-device contract). Filled in parallel with tkb_get_num_threads() threads.
 * init == NULL means TKB_INIT_DEFAULT. Rules: UNIFORM on an integer dtype is an integer
 * range; CONSTANT on an integer or bool dtype must be a representable integer.
 * TKB_ERR_INVALID_ARGUMENT (naming the field and value) for: stddev < 0 or not finite;
 * hi <= lo, or no value of the dtype in [lo, hi); a range or constant outside the
 * dtype; NORMAL on an integer or bool array; a CALLBACK without a function; an array
 * without data. A callback's own status is returned as is. A CALLBACK always gets host
 * memory: for an array on an accelerator it fills a cpu array of the same spec, whose
 * bytes are then copied to the device (TKB_ERR_OUT_OF_MEMORY, TKB_ERR_DEVICE as
 * tkb_array_new and tkb_array_copy_into).
 */
tkb_status tkb_fill(tkb_array *a, const tkb_init *init, uint64_t seed, uint64_t stream);

/**
 * The raw generator: Philox4x32-10 of one 128-bit counter under a 64-bit key, as
 * Random123's philox4x32(ctr, key) with key = {key[0], key[1]}.
 */
void tkb_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* ------------------------------------------------------------------------------ */
/* Values, parameters and functions                                                */
/* ------------------------------------------------------------------------------ */

/** The kind of a parameter. */
typedef enum tkb_kind {
  TKB_KIND_ARRAY = 0,
  TKB_KIND_INT,
  TKB_KIND_FLOAT,
  TKB_KIND_BOOL,
  TKB_KIND_STRING
} tkb_kind;

/** What a tkb_value holds. TKB_VALUE_UNSET (zero) means "no value" (no default). */
typedef enum tkb_value_tag {
  TKB_VALUE_UNSET = 0,
  TKB_VALUE_NONE,     /* explicit absence (Python None), e.g. an optional array */
  TKB_VALUE_ABSTRACT, /* a spec to be initialized */
  TKB_VALUE_ARRAY,    /* a concrete array (borrowed) */
  TKB_VALUE_INT,
  TKB_VALUE_FLOAT,
  TKB_VALUE_BOOL,
  TKB_VALUE_STRING
} tkb_value_tag;

/** One argument value. Build with the TKB_* macros below. */
typedef struct tkb_value {
  tkb_value_tag tag;
  tkb_spec spec;             /* TKB_VALUE_ABSTRACT */
  const tkb_init *init;      /* TKB_VALUE_ABSTRACT: NULL = default rule */
  const tkb_array *array;    /* TKB_VALUE_ARRAY: borrowed, must outlive the call */
  int64_t i;                 /* TKB_VALUE_INT */
  double f;                  /* TKB_VALUE_FLOAT (an INT is accepted for FLOAT params) */
  bool b;                    /* TKB_VALUE_BOOL */
  const char *s;             /* TKB_VALUE_STRING: copied by standardization */
} tkb_value;

#define TKB_ABSTRACT(sp) ((tkb_value){.tag = TKB_VALUE_ABSTRACT, .spec = (sp)})
#define TKB_ABSTRACT_INIT(sp, initp) \
  ((tkb_value){.tag = TKB_VALUE_ABSTRACT, .spec = (sp), .init = (initp)})
#define TKB_ARRAY(a) ((tkb_value){.tag = TKB_VALUE_ARRAY, .array = (a)})
#define TKB_INT(v) ((tkb_value){.tag = TKB_VALUE_INT, .i = (v)})
#define TKB_FLOAT(v) ((tkb_value){.tag = TKB_VALUE_FLOAT, .f = (v)})
#define TKB_BOOL(v) ((tkb_value){.tag = TKB_VALUE_BOOL, .b = (v)})
#define TKB_STRING(v) ((tkb_value){.tag = TKB_VALUE_STRING, .s = (v)})
#define TKB_NONE ((tkb_value){.tag = TKB_VALUE_NONE})

/* Brace-initializer forms of the above, for static tables such as a signature's
 * defaults: {.name = "axis", .kind = TKB_KIND_INT, .default_value = TKB_INT_INIT(-1)}. */
#define TKB_NONE_INIT {.tag = TKB_VALUE_NONE}
#define TKB_INT_INIT(v) {.tag = TKB_VALUE_INT, .i = (v)}
#define TKB_FLOAT_INIT(v) {.tag = TKB_VALUE_FLOAT, .f = (v)}
#define TKB_BOOL_INIT(v) {.tag = TKB_VALUE_BOOL, .b = (v)}
#define TKB_STRING_INIT(v) {.tag = TKB_VALUE_STRING, .s = (v)}

/** A keyword argument. */
typedef struct tkb_kwarg {
  const char *name;
  tkb_value value;
} tkb_kwarg;

/** One parameter of a function's signature. */
typedef struct tkb_param {
  const char *name;
  tkb_kind kind;
  tkb_value default_value; /* TKB_VALUE_UNSET: required; TKB_NONE allowed for arrays */
  bool keyword_only;       /* like parameters after `*` in Python */
} tkb_param;

/**
 * A bound call: one value per parameter, in signature order, defaults applied.
 * Array parameters hold TKB_VALUE_ARRAY (concrete), TKB_VALUE_ABSTRACT (while
 * inferring shapes or when initialization is off) or TKB_VALUE_NONE.
 */
typedef struct tkb_args {
  const struct tkb_fn *fn;
  size_t count;
  const tkb_value *values;
  tkb_device *device;
  int mode; /* the tkb_mode being standardized/run, so prepare can size workspaces for
               what will be called (declared int: tkb_mode is defined further down);
               TKB_MODE_FORWARD (0) outside standardization */
} tkb_args;

/** Index of the parameter called name, or -1. */
int tkb_args_index(const tkb_args *a, const char *name);
/** The spec of array parameter `name` (abstract or concrete), NULL when None. */
const tkb_spec *tkb_args_spec(const tkb_args *a, const char *name);
/** The concrete array of parameter `name`, NULL when None or abstract. */
const tkb_array *tkb_args_array(const tkb_args *a, const char *name);
/** Static values by parameter name (0 / false / NULL when absent or of another kind). */
int64_t tkb_args_int(const tkb_args *a, const char *name);
double tkb_args_float(const tkb_args *a, const char *name);
bool tkb_args_bool(const tkb_args *a, const char *name);
const char *tkb_args_string(const tkb_args *a, const char *name);

#define TKB_MAX_OUTPUTS 8

/** Output and residual specs, filled by a function's infer hook. */
typedef struct tkb_shapes {
  int n_outputs;
  tkb_spec outputs[TKB_MAX_OUTPUTS];
  const char *output_names[TKB_MAX_OUTPUTS];   /* optional; default "out<i>" */
  int n_residuals;
  tkb_spec residuals[TKB_MAX_OUTPUTS];
  const char *residual_names[TKB_MAX_OUTPUTS]; /* optional; default "res<i>" */
} tkb_shapes;

/**
 * A benchmarkable function: a signature and hooks. Static storage is typical.
 *
 *  infer       (required) checks the call's shapes, dtypes and static values and fills
 *              the output and residual specs; errors name the arguments (both shapes
 *              on a mismatch). Runs at standardization and as "lowering".
 *  prepare     (optional) compile step: pick a kernel, build plans, allocate
 *              workspaces (with tkb_device_alloc); *state is passed to every call.
 *              Timed as compile_time_ms.
 *  release     (optional) frees what prepare made.
 *  forward     (required) writes outputs[0..n_outputs) (preallocated, may hold junk).
 *  forward_res (optional) writes outputs and residuals; without it, forward_res mode
 *              and the vjp modes are TKB_ERR_UNSUPPORTED.
 *  vjp         (optional) given residuals and cotangents (one per output), writes
 *              grads: one per floating-point array parameter in parameter order
 *              (NULL entries for absent optional arrays), overwriting them.
 * Hooks must not print; they report failures with tkb_set_error() and a status.
 */
typedef struct tkb_fn {
  const char *name;
  const tkb_param *params;
  size_t n_params;
  tkb_status (*infer)(const tkb_args *a, tkb_shapes *shapes);
  tkb_status (*prepare)(const tkb_args *a, void **state);
  void (*release)(void *state);
  tkb_status (*forward)(const tkb_args *a, void *state, tkb_array *const *outputs);
  tkb_status (*forward_res)(const tkb_args *a, void *state, tkb_array *const *outputs,
                            tkb_array *const *residuals);
  tkb_status (*vjp)(const tkb_args *a, void *state, const tkb_array *const *residuals,
                    const tkb_array *const *cotangents, tkb_array *const *grads);
  void *ctx; /* user data for the hooks: tkb_args.fn->ctx */
} tkb_fn;

/**
 * Records a printf-style error message for tkb_last_error() and returns `status`;
 * for function hooks and user callbacks. The message should name the argument, the
 * value and what is allowed.
 */
tkb_status tkb_set_error(tkb_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ------------------------------------------------------------------------------ */
/* standardize_function                                                            */
/* ------------------------------------------------------------------------------ */

/** What is timed (Tokamax's modes). Contract. */
typedef enum tkb_mode {
  TKB_MODE_FORWARD = 0,       /* forward pass only */
  TKB_MODE_FORWARD_RES,       /* forward pass that also writes the residuals */
  TKB_MODE_VJP,               /* the backward pass only (forward ran at standardization) */
  TKB_MODE_FORWARD_AND_VJP    /* forward then backward */
} tkb_mode;

/** "forward", "forward_res", "vjp", "forward_and_vjp". */
const char *tkb_mode_name(tkb_mode mode);
/** Parses a mode name; TKB_ERR_NOT_FOUND naming the string and the valid modes. */
tkb_status tkb_mode_parse(const char *name, tkb_mode *out);

/** Options of tkb_standardize_function. A zeroed struct means the defaults. */
typedef struct tkb_std_opts {
  tkb_mode mode;           /* default TKB_MODE_FORWARD */
  uint64_t seed;           /* Philox key for abstract arrays; default 0 */
  bool no_init;            /* Tokamax's seed=None: leave abstract arrays abstract
                              (std args are then empty arrays-of-specs: see below) */
  bool random_cotangents;  /* vjp mode: draw cotangents N(0,1) from the seed instead
                              of using the forward outputs */
  const char *device;      /* device name; NULL means "cpu" */
} tkb_std_opts;

#define TKB_STD_OPTS_DEFAULT ((tkb_std_opts){.mode = TKB_MODE_FORWARD})

/** A standardized function f_std(args). Opaque. */
typedef struct tkb_std_fn tkb_std_fn;

/**
 * Tokamax's standardize_function. Binds args/kwargs to f's signature like Python's
 * inspect.signature(f).bind(*args, **kwargs).apply_defaults(): positional and keyword
 * give the same call. Static values are baked into f_std; every array argument
 * (abstract or concrete, in parameter order, None skipped) becomes one entry of
 * std_args. Abstract arrays are filled from Philox keyed by (seed, index in std_args)
 * with their initializer (default rule when NULL). Concrete arrays are copied into
 * std_args (the caller keeps its own).
 *
 * Modes (what f_std computes from std_args):
 *  forward          std_args = the arrays; outputs = forward outputs.
 *  forward_res      outputs = forward outputs followed by residuals.
 *  vjp              forward_res runs once here (not timed); primals and residuals stay
 *                   inside f_std. std_args = the cotangents, one per output: the
 *                   forward outputs themselves (Tokamax) or, with random_cotangents,
 *                   N(0,1) draws. outputs = one gradient per floating array argument.
 *  forward_and_vjp  std_args = the arrays; outputs = the forward outputs followed by
 *                   the gradient of every floating array argument, in argument order,
 *                   with the forward outputs as cotangents.
 *
 * With opts->no_init, abstract arrays are not allocated: std_args holds arrays with
 * data == NULL (specs only) and f_std cannot be called (TKB_ERR_INVALID_ARGUMENT); it can
 * be compiled from those specs (tkb_compile_benchmark) and run on concrete arguments
 * (tkb_compiled_run_args).
 *
 * Errors: the binding statuses (MISSING_ARGUMENT, UNKNOWN_KEYWORD, DUPLICATE_ARGUMENT,
 * WRONG_KIND, TOO_MANY_POSITIONAL, BAD_SHAPE, OVERFLOW) each naming the parameter;
 * TKB_ERR_UNSUPPORTED naming the function and mode when a vjp mode meets a function
 * without forward_res/vjp; whatever f->infer reports; TKB_ERR_OUT_OF_MEMORY when the
 * arrays, outputs or vjp residuals do not fit, with the bytes asked for.
 *
 * Ownership: the caller frees *f_std with tkb_std_fn_free and *std_args with
 * tkb_arrays_free. f and everything it points to must outlive f_std; strings in
 * args are copied. Outputs are written only on success.
 */
tkb_status tkb_standardize_function(const tkb_fn *f, const tkb_value *args, size_t nargs,
                                    const tkb_kwarg *kwargs, size_t nkwargs,
                                    const tkb_std_opts *opts, tkb_std_fn **f_std,
                                    tkb_arrays **std_args);

/**
 * Calls f_std(args). args must match the std args' specs (TKB_ERR_BAD_SHAPE naming
 * the position and both specs otherwise). The first call compiles (prepare hook and
 * output allocation); later calls allocate nothing. *outs is borrowed: owned by
 * f_std, overwritten by the next call, freed with f_std.
 */
tkb_status tkb_std_fn_call(tkb_std_fn *f_std, const tkb_arrays *args, tkb_arrays **outs);

/** The mode f_std was standardized with. */
tkb_mode tkb_std_fn_mode(const tkb_std_fn *f_std);
/** "<fn name>" of the function f_std was built from. */
const char *tkb_std_fn_name(const tkb_std_fn *f_std);
/** The device f_std runs on. */
tkb_device *tkb_std_fn_device(const tkb_std_fn *f_std);
/** The static values baked in, as "axis=-1, epsilon=1e-06" (owned by f_std). */
const char *tkb_std_fn_statics(const tkb_std_fn *f_std);
/**
 * f_std viewed as a tkb_fn whose parameters are the std args (by their names), all
 * arrays, with only a forward hook: standardizing it again with the std args gives
 * equal args and equal outputs (Tokamax's idempotence). Owned by f_std.
 */
const tkb_fn *tkb_std_fn_as_fn(tkb_std_fn *f_std);
/** Frees f_std, its outputs, residuals and prepared state. NULL is a no-op. */
void tkb_std_fn_free(tkb_std_fn *f_std);

/* ------------------------------------------------------------------------------ */
/* benchmark                                                                       */
/* ------------------------------------------------------------------------------ */

/** Options of tkb_benchmark. A zeroed struct means the defaults. */
typedef struct tkb_bench_opts {
  int iterations;            /* timed calls per experiment; 0 means 5 (Tokamax) */
  int experiments;           /* spaced experiments; 0 means 1 */
  double interval_ms;        /* sleep between experiments (against throttling); 0 */
  const char *method;        /* timing method; NULL or "auto" picks the device's
                                default. cpu: "wallclock" (default), "cpu_time"; cuda:
                                "cupti" (default: the sum of the call's kernel
                                durations), "cuda_events", "profiler",
                                "hermetic_profiler", "wallclock"; opencl:
                                "opencl_events" (default), "profiler",
                                "hermetic_profiler", "wallclock". Aliases: "xprof"
                                (profiler), "hermetic_xprof" (hermetic_profiler);
                                tkb_device_methods lists a device's.
                                cpu also "instructions": each call's instructions are
                                counted instead of timed (value_unit "instructions"),
                                under Valgrind's Callgrind when the process runs under
                                `valgrind --tool=callgrind` (with its simulated caches'
                                misses as counters; every thread of the call counted),
                                else with the CPU's counter where a PMU answers;
                                TKB_ERR_UNSUPPORTED saying how to get one when neither
                                is there */
  const char *event_filter_regex; /* profiler methods: device events kept (NULL: all) */
  bool warmup_once;          /* one warm-up call per experiment instead of one before
                                each timed call (Tokamax's wallclock does the latter) */
  bool check_outputs;        /* after timing, fail with TKB_ERR_NUMERICS when an output
                                holds NaN or Inf */
  bool cold_cache;           /* before each timed call, outside the timed interval, write
                                a scratch buffer of at least twice the device's cache
                                (cpu: last-level cache; opencl: global memory cache) so
                                the call starts with cold caches */
  const char *trace_dir;     /* profiler: folder of the Chrome trace file (NULL: $TMPDIR,
                                else /tmp); its path is metadata "trace" */
  int throttle_retries;      /* devices that report clock throttling (CUDA, through
                                NVML): a timed call during which a thermal or power
                                reason was active is discarded and retried after a pause
                                (50 ms, doubling), at most this many times per call, as
                                nvbench does; 0 keeps such calls and flags them */
  bool no_blocking_kernel;   /* cuda_events only: start the events as soon as they are
                                queued, so each call's time includes the host's gaps
                                between its launches. By default (false) a one-thread
                                kernel holds the stream until the call has queued all its
                                work, as nvbench does, and the events time the device
                                alone; metadata "blocking_kernel" says how that went */
  const char *stop;          /* stopping rule, "name" or "name:param=value,...": how many
                                timed calls each experiment takes. NULL or "" is "fixed":
                                `iterations` calls in each of `experiments` (Tokamax's).
                                An unknown rule is TKB_ERR_NOT_FOUND listing the rules; an
                                unknown parameter or a value out of its range is
                                TKB_ERR_INVALID_ARGUMENT naming it */
  double min_warmup_ms;      /* untimed calls for at least this long before the first
                                timed call, besides warmup_once's (Google Benchmark's
                                min_warmup_time); 0: none. Must be finite and >= 0 */
  const char *perf_counters; /* perf events counted over the timed calls, comma-separated
                                names (case-insensitive; '_' or '-'): CYCLES, INSTRUCTIONS,
                                BRANCHES, BRANCH-MISSES, CACHE-REFERENCES, CACHE-MISSES,
                                REF-CYCLES, BUS-CYCLES, STALLED-CYCLES-FRONTEND,
                                STALLED-CYCLES-BACKEND (the CPU's), TASK-CLOCK, PAGE-FAULTS,
                                MINOR-FAULTS, MAJOR-FAULTS, CONTEXT-SWITCHES, CPU-MIGRATIONS
                                (the kernel's). Every thread of the process is counted, in
                                user space; each becomes one of the data's counters, per
                                call. NULL or "": none. TKB_ERR_NOT_FOUND for an unknown name
                                (listing the known); TKB_ERR_UNSUPPORTED when the events
                                cannot be opened here, saying why (perf_event_paranoid, no
                                counters in a virtual machine, no perf_event_open) */
  double interval_busy;      /* besides interval_ms, a pause before each experiment of this
                                fraction of the previous experiment's wall time, so that a
                                device that throttles under sustained load (a GPU) cools in
                                proportion to how long it was busy: 0.25 keeps it busy at
                                most 80% of the time. 0: none (the default). Must be finite,
                                0 to 100 */
} tkb_bench_opts;

#define TKB_BENCH_OPTS_DEFAULT ((tkb_bench_opts){.iterations = 5, .experiments = 1})

/** One key/value pair of metadata. */
typedef struct tkb_meta {
  const char *key;
  const char *value;
} tkb_meta;

/**
 * A named number reported beside an entry's times, as Google Benchmark reports its user
 * counters: a key of its own in each JSON row, and in the console table either
 * name=value after the row or (--benchmark_counters_tabular) a column. `flags` says how
 * the value becomes what is shown, as Google Benchmark's Counter::Flags do; the bits have
 * its values.
 */
typedef struct tkb_counter {
  const char *name;  /* 1 to 63 printable ASCII characters, none of '"', '\\' or ','; not a
                        key Google Benchmark's rows have ("name", "real_time", ...) */
  double value;      /* per call, before flags */
  unsigned flags;    /* TKB_COUNTER_* */
} tkb_counter;

#define TKB_COUNTER_DEFAULT 0u
/* value / the call's time in seconds: a rate per second (Google Benchmark's kIsRate on a
 * per-iteration count, i.e. kIsIterationInvariantRate). The time is the method's median
 * of the experiment. */
#define TKB_COUNTER_RATE 1u
/* value / the OpenMP threads the cpu ops ran on (kAvgThreads): per thread */
#define TKB_COUNTER_AVG_THREADS 2u
/* value x the experiment's timed calls: a total over them (kIsIterationInvariant) */
#define TKB_COUNTER_ITERATION_INVARIANT 4u
/* value / the experiment's timed calls (kAvgIterations): for a value counted over all of
 * them. A per-call value needs no flag: it is already the average */
#define TKB_COUNTER_AVG_ITERATIONS 8u
/* 1 / the result of the flags above (kInvert): e.g. with RATE, seconds per unit */
#define TKB_COUNTER_INVERT 16u
/* the console shows it with binary prefixes (Ki, Mi, ...: Counter::kIs1024) */
#define TKB_COUNTER_BASE_1024 256u

/** The most counters an entry reports (its callback's and perf_counters' together). */
#define TKB_MAX_COUNTERS 16

/** One reason to doubt a result: what was seen, and what would help. */
typedef struct tkb_warning {
  const char *kind; /* static: "interval" (none for 5 samples or fewer, or wider than the
                       stopping rule's target when it gave up), "bimodal" (two clusters of calls),
                       "count_spread" (the instructions method: calls counted differently),
                       "load" (a load average
                       above the online cores), "short_call" (calls under 100 clock reads,
                       not batched), "batch" (timed in batches: the distribution is
                       that of batches), "first_call" (the first call over 10x the median),
                       "threads" (more OpenMP threads than cores other processes left) */
  char *text;       /* a short sentence (owned by the benchmark data) */
} tkb_warning;

/**
 * Tokamax's BenchmarkData plus statistics and the evidence of their noise. Owned by the
 * caller (tkb_benchmark_data_free). All times in milliseconds; statistics are over every
 * evaluation time (all experiments together).
 */
typedef struct tkb_benchmark_data {
  double lower_time_ms;          /* binding and shape inference */
  double compile_time_ms;        /* prepare hook and output allocation */
  double *evaluation_times_ms;   /* per timed call (or batch: batch_size), experiment-major */
  int n_evaluation_times;
  int iterations;                /* the fixed rule's calls per experiment; 0 under another
                                    rule (experiment_sizes gives each experiment's count
                                    under any rule) */
  int experiments;
  double median_evaluation_time_ms;
  double peak_memory_mb;         /* device memory this benchmark held at its peak, in MB
                                    (1e6 bytes): its args, what f_std keeps (outputs,
                                    residuals, gradients, prepare's workspaces, vjp
                                    primals) and any growth during the timed calls */
  double min_ms, max_ms, mean_ms, stddev_ms;
  double stddev_over_median;     /* relative spread */
  double p10_ms, p25_ms, p75_ms, p90_ms;
  double *experiment_median_ms;  /* one per experiment */
  tkb_meta *metadata;            /* method, device, cpu_model, cores, seed, mode, ...;
                                    on devices reporting clocks, per experiment e:
                                    "experiment<e>.sm_clock_mhz", ".temperature_c",
                                    ".power_w", ".clocks_event_reasons" */
  int n_metadata;
  bool *throttled;               /* per evaluation time: the device reported a thermal or
                                    power clock reason during that call; NULL when the
                                    device reports no clock state (cpu, opencl) */
  int n_throttled;               /* calls kept although flagged in throttled[] */
  int n_throttle_retries;        /* calls discarded and retried (throttle_retries) */
  /* How far the numbers can be trusted (every stopping rule): */
  double median_ci_low_ms;       /* the median's 95% interval: where the median of a
                                    rerun on the same machine lands (README, "How far a
                                    number can be trusted": the calls' interval, the
                                    experiments' spread, the clock's tick and a layout
                                    floor, whichever is widest; the metadata's
                                    interval_bound names it). NaN with 5 evaluation times or
                                    fewer in one experiment: too few for any interval */
  double median_ci_high_ms;
  double ci_level;               /* 0.95 */
  const char *ci_method;         /* static: how the calls' own interval was drawn (the
                                    samples term): "order statistics" (one experiment: the
                                    binomial ranks around n/2, distribution-free) or
                                    "two-level bootstrap" (experiments drawn with
                                    replacement, then calls within them: the spread between
                                    experiments widens the interval) */
  int outliers_mild;             /* Tukey's fences: evaluation times beyond 1.5 IQR of the */
  int outliers_severe;           /* quartiles (and within 3), and beyond 3; counted, never
                                    removed from the statistics */
  bool converged;                /* the stopping rule reached its goal (fixed always does;
                                    ci: the interval narrowed before max_time) */
  char *stopping_rule;           /* the rule as run, every parameter written out:
                                    "fixed", "ci:max_noise=0.01,min_samples=10,..." */
  int batch_size;                /* calls timed together per evaluation time: 1, or for calls
                                    under 20 us (or 100 reads of the host clock) under a
                                    rule that batches, a batch, each evaluation time then
                                    being the batch's mean per call less the per-call floor
                                    of the same loop of empty calls (call_floor_ns in the
                                    metadata); the distribution is that of batches */
  int *experiment_sizes;         /* evaluation times in each experiment (experiments of
                                    them); the fixed rule's are all `iterations` */
  double first_call_ms;          /* wall time of the first call (a warm-up), NaN when the
                                    method reads a device timer */
  tkb_warning *warnings;         /* each a reason to doubt these numbers (n_warnings) */
  int n_warnings;
  /* CPU time beside the method's time, from the same timed calls: the process's CPU time
   * (every thread: the cpu ops run OpenMP threads, which the calling thread's CPU time
   * would miss) read just outside the method's two clock reads, less the CPU time of
   * the reads themselves (metadata "cpu_floor_ns"), per call like evaluation_times_ms.
   * For the cpu_time method these equal evaluation_times_ms. */
  double *cpu_times_ms;          /* n_evaluation_times of them */
  double cpu_median_ms, cpu_mean_ms, cpu_min_ms, cpu_max_ms, cpu_stddev_ms;
  double *experiment_cpu_median_ms; /* one per experiment */
  /* perf_counters' events, per call: the mean over the timed calls (a batch's calls each
   * count); names as given. NULL when none were asked for. */
  tkb_counter *counters;
  int n_counters;
  /* What evaluation_times_ms and every statistic made from it hold: NULL for times in
   * milliseconds, as the names say; "instructions" for the instructions method, whose
   * values are instructions per call (a count, whatever the "_ms" of the names; the CPU
   * times repeat them). Static storage. */
  const char *value_unit;
} tkb_benchmark_data;

/**
 * Tokamax's benchmark: lowers (re-infers shapes of args: lower_time_ms), compiles
 * (prepare + output allocation: compile_time_ms), then runs `experiments` experiments
 * of `iterations` timed calls, each timed call preceded by an untimed warm-up call
 * (or one warm-up per experiment with warmup_once), sleeping interval_ms between
 * experiments. Nothing is allocated, logged or locked inside the timed region.
 *
 * Errors: TKB_ERR_INVALID_ARGUMENT for iterations/experiments < 0 or interval < 0
 * (naming the field and value); TKB_ERR_UNSUPPORTED naming the method and the methods
 * the device has; TKB_ERR_BAD_SHAPE when args do not match f_std; any status of the
 * function's hooks. *out is written only on success; free with
 * tkb_benchmark_data_free.
 */
tkb_status tkb_benchmark(tkb_std_fn *f_std, const tkb_arrays *args,
                         const tkb_bench_opts *opts, tkb_benchmark_data **out);

/** A compiled benchmark (Tokamax's compile_benchmark): compile once, run many. */
typedef struct tkb_compiled tkb_compiled;

/**
 * Lowers and compiles f_std for args: shape inference, then the prepare hook and the
 * output allocation, timed once into lower_time_ms and compile_time_ms of every run's
 * data. args are f_std's std args (or arrays of the same specs on its device); f_std and
 * args must outlive the compiled benchmark.
 * From specs alone (Tokamax's compile_benchmark of an f_std standardized with seed=None):
 * an f_std standardized with no_init is compiled from its specs-only std args (infer and
 * prepare see specs, no data), and each run takes concrete arguments of those specs
 * (tkb_compiled_run_args), so one compile serves many inputs.
 * Errors: TKB_ERR_INVALID_ARGUMENT (NULL; arrays without data for a seeded f_std; arrays
 * on another device), TKB_ERR_BAD_SHAPE (a count or spec that differs, naming both),
 * TKB_ERR_UNSUPPORTED for a no_init f_std in vjp mode (its f_std keeps a forward pass's
 * primals and residuals, which specs cannot give), and any status of infer or prepare.
 */
tkb_status tkb_compile_benchmark(tkb_std_fn *f_std, const tkb_arrays *args,
                                 tkb_compiled **out);
/** Runs the timed experiments of a compiled benchmark on the args it was compiled with.
 *  TKB_ERR_INVALID_ARGUMENT for one compiled from specs (it has no data: use
 *  tkb_compiled_run_args); otherwise as tkb_benchmark. */
tkb_status tkb_compiled_run(tkb_compiled *c, const tkb_bench_opts *opts,
                            tkb_benchmark_data **out);
/**
 * Runs the timed experiments of a compiled benchmark on `args` (Tokamax's runner(x)):
 * concrete arrays with the compiled specs, on f_std's device, used for this run only
 * (borrowed; the prepared state, outputs and compile times are the compile's). Each run's
 * data has the one compile's lower_time_ms and compile_time_ms. Errors: as
 * tkb_compile_benchmark for args (TKB_ERR_BAD_SHAPE, TKB_ERR_INVALID_ARGUMENT for arrays
 * without data or on another device), then as tkb_benchmark.
 */
tkb_status tkb_compiled_run_args(tkb_compiled *c, const tkb_arrays *args,
                                 const tkb_bench_opts *opts, tkb_benchmark_data **out);
/** Frees a compiled benchmark (not the f_std or args it refers to). */
void tkb_compiled_free(tkb_compiled *c);

/** The median evaluation time in ms (NaN for NULL). */
double tkb_benchmark_data_median_ms(const tkb_benchmark_data *bd);
/** The value for key, or NULL. */
const char *tkb_benchmark_data_meta(const tkb_benchmark_data *bd, const char *key);
/** Frees the data. NULL is a no-op. */
void tkb_benchmark_data_free(tkb_benchmark_data *bd);

/** The timing methods a device has, default first (static storage, NULL-ended). */
const char *const *tkb_device_methods(const tkb_device *dev);

/* ------------------------------------------------------------------------------ */
/* Statistics (also used by reports)                                              */
/* ------------------------------------------------------------------------------ */

/** Summary statistics of n samples (n >= 1); quantiles by linear interpolation. */
typedef struct tkb_stats {
  double min, max, mean, median, stddev, p10, p25, p75, p90;
} tkb_stats;
/** Computes stats of x[0..n) without modifying x. TKB_ERR_INVALID_ARGUMENT for n < 1. */
tkb_status tkb_stats_compute(const double *x, size_t n, tkb_stats *out);

/* ------------------------------------------------------------------------------ */
/* Suite registry (Tokamax's register_benchmark)                                   */
/* ------------------------------------------------------------------------------ */

/** Work done by one call, for throughput columns; 0 means unknown. */
typedef struct tkb_counts {
  double items; /* items processed (e.g. tokens, rows) */
  double bytes; /* bytes read + written from/to memory */
  double flops; /* floating-point operations */
} tkb_counts;

/** Computes the counts of one call of a bound (possibly abstract) call in a mode. */
typedef tkb_status (*tkb_counts_fn)(const tkb_args *a, tkb_mode mode, tkb_counts *out);

/**
 * An entry's own counters (Google Benchmark's user counters) for one call of a bound
 * (possibly abstract) call in a mode: writes at most `cap` (TKB_MAX_COUNTERS) into out
 * and their number into *n. Names must stay valid until the registry is cleared (static
 * strings are typical). A status other than TKB_OK fails the entry with its message.
 */
typedef tkb_status (*tkb_counters_fn)(const tkb_args *a, tkb_mode mode, tkb_counter *out,
                                      int cap, int *n);

/**
 * Builds the arguments of an entry lazily (Tokamax's kwargs factory): sets *args and *kwargs
 * to arrays that stay valid until the next call for the same entry (static storage or
 * memory owned by `user`). Used when the registration does not give args/kwargs.
 */
typedef tkb_status (*tkb_args_factory)(void *user, const tkb_value **args, size_t *n_args,
                                       const tkb_kwarg **kwargs, size_t *n_kwargs);

/**
 * One suite entry: (op, arg spec, implementation, mode), run as Tokamax's
 * register_benchmark does. Its full name is "{name}_{mode}_{impl_name}" (contract).
 * Strings are copied at registration; fn, args, kwargs, initializers and user must
 * outlive the registry (static storage is typical).
 */
typedef struct tkb_benchmark_def {
  const char *op;          /* op family ("normalization"); `check` groups impls by it */
  const char *name;        /* arg spec name ("alphafold_384res_64chan") */
  const char *impl_name;   /* "reference", "cpu", ... */
  const tkb_fn *fn;
  const tkb_value *args;   /* positional arguments (may be NULL) */
  size_t n_args;
  const tkb_kwarg *kwargs; /* keyword arguments (may be NULL) */
  size_t n_kwargs;
  tkb_args_factory factory;/* alternative to args/kwargs (optional) */
  void *user;              /* passed to factory */
  tkb_mode mode;
  tkb_counts_fn counts;    /* optional */
  const char *tags;        /* comma-separated: "primary,ci_tests,cpu" */
  const char *device_kind; /* device kind the impl runs on ("cpu", "opencl", "cuda") */
  tkb_counters_fn counters;/* optional: its own named numbers (tkb_counter) */
  /* Per-entry settings (Tokamax's register_benchmark keywords); zero: the run's. */
  int iterations;          /* timed calls per experiment, under the fixed stopping rule
                              (given without `stop`, it selects fixed for this entry) */
  const char *stop;        /* stopping rule, as tkb_bench_opts.stop ("fixed",
                              "ci:max_noise=0.02") */
  const char *method;      /* timing method, as tkb_bench_opts.method ("cpu_time"); one
                              the device lacks makes the entry SKIPPED, not failed */
  const tkb_meta *metadata;/* n_metadata key/value pairs describing the entry (Tokamax's
                              metadata=, e.g. a kernel's config): the JSON report's
                              metadata starts with them (the run's own keys win a clash);
                              copied at registration, as the names are */
  int n_metadata;
  bool raise_on_error;     /* Tokamax's raise_on_error: when this entry fails, the run
                              ends after it (the finished entries are reported; exit 1).
                              Off, a failure is recorded and the run goes on (Tokamax's
                              raise_on_error=False). An entry that cannot run on the
                              device at hand is SKIPPED, never failed, either way: its
                              setup (standardizing, the method, lowering, compiling) says
                              TKB_ERR_UNSUPPORTED (a dtype, mode or method it lacks there);
                              a call that fails is a failure whatever its status */
} tkb_benchmark_def;

/**
 * Registers an entry (thread-safe). TKB_ERR_INVALID_ARGUMENT when a required field
 * (name, impl_name, fn) is missing, a name holds characters outside [A-Za-z0-9_.-],
 * iterations or n_metadata is negative, or n_metadata > 0 with NULL metadata or a NULL
 * key; TKB_ERR_DUPLICATE_ARGUMENT when the full name is already registered. The strings
 * (names, tags, stop, method) and metadata are copied (stop and method are checked when
 * the entry runs); fn, args, kwargs, their initializers and user must outlive the
 * registry.
 */
tkb_status tkb_register_benchmark(const tkb_benchmark_def *def);
/** A plain function to time: called with the context it was registered with. */
typedef void (*tkb_plain_fn)(void *ctx);

/**
 * The shortest registration, for a function that needs no standardization (no arrays to
 * fill, no static arguments, no backward pass): each timed call is fn(ctx), exactly as
 * written. The entry is "{name}_forward_c" (op name, impl "c", tags "cpu", forward mode),
 * and bytes_per_call / flops_per_call (0: unknown) give its throughput columns. fn and
 * ctx must outlive the registry; name is copied. Errors: as tkb_register_benchmark, and
 * TKB_ERR_INVALID_ARGUMENT for a NULL fn or a negative (or NaN) count.
 * For arrays, modes and a vjp, register a tkb_fn with tkb_register_benchmark instead.
 */
tkb_status tkb_register_function(const char *name, tkb_plain_fn fn, void *ctx, double bytes_per_call,
                                 double flops_per_call);

/** Number of registered entries. */
size_t tkb_registry_count(void);
/** Entry i (registration order) or NULL; owned by the registry. */
const tkb_benchmark_def *tkb_registry_get(size_t i);
/** Full name of entry i: "{name}_{mode}_{impl_name}". */
const char *tkb_registry_full_name(size_t i);
/**
 * The index of the entry whose full name is full_name, in constant time on average (the
 * names are hashed). TKB_ERR_NOT_FOUND naming the name when no entry has it;
 * TKB_ERR_INVALID_ARGUMENT when an argument is NULL.
 */
tkb_status tkb_registry_find(const char *full_name, size_t *index);
/** True when entry i has the tag (exact match in its comma-separated tags). */
bool tkb_registry_has_tag(size_t i, const char *tag);
/** Removes every entry (for tests and re-registration). */
void tkb_registry_clear(void);
/**
 * Registers the ops shipped with tkbench (idempotent: a second call does nothing).
 */
tkb_status tkb_register_builtin_ops(void);
/**
 * Standardizes entry i on `device` (NULL: "cpu") with `seed` in the entry's mode.
 * Ownership as tkb_standardize_function.
 */
tkb_status tkb_registry_standardize(size_t i, const char *device, uint64_t seed,
                                    tkb_std_fn **f_std, tkb_arrays **std_args);
/** Counts of entry i (zeros when it has no counts function). */
tkb_status tkb_registry_counts(size_t i, tkb_counts *out);
/**
 * Entry i's own counters for one call (its tkb_counters_fn; none without one): at most
 * cap into out, their number into *n. TKB_ERR_INVALID_ARGUMENT naming a counter whose
 * name is empty, too long, holds '"', '\\', ',' or a control character, repeats another,
 * or is a key Google Benchmark's rows have already; any status of the callback.
 */
tkb_status tkb_registry_counters(size_t i, tkb_counter *out, int cap, int *n);

/* ------------------------------------------------------------------------------ */
/* Command line (tkbench list / run / check / info)                                */
/* ------------------------------------------------------------------------------ */

/**
 * The tkbench command line over the registered entries: `list`, `run`, `check`, `info`
 * and `help` (`tkbench --help` and README.md describe every flag). argv[0] names the
 * program in messages. With no arguments, or when the first argument is a Google
 * Benchmark flag (--benchmark_filter=..., --benchmark_out=...), it does `run`, so a
 * program whose main is TKB_MAIN() behaves like one built on BENCHMARK_MAIN and Google
 * Benchmark's tools/compare.py can drive it. It first runs the functions queued with
 * TKB_REGISTER. It is the one part of the library that prints (stdout: reports;
 * stderr: progress, warnings and errors). During `run` it handles SIGINT (the entry in
 * progress finishes, the finished entries are written; a second SIGINT ends the
 * process) and restores the previous handler afterwards. Output files are written to
 * a temporary name in the same directory and renamed when complete.
 *
 * Returns the exit code: 0 on success; 1 when an entry failed (an error status, or
 * NaN/Inf in its outputs) or an output file could not be written; 2 on a usage error
 * (unknown command or flag, missing or bad value, unknown device/method/mode/format,
 * invalid regex, a filter or tag matching nothing, an output path that cannot be
 * created, a plugin that cannot be loaded), with a message on stderr naming the value
 * and nothing run or written; 130 when a run was stopped by Ctrl-C (what finished is
 * written).
 */
int tkb_main(int argc, char **argv);

/** Defines main() as tkb_main(), like Google Benchmark's BENCHMARK_MAIN(). */
#define TKB_MAIN()                  \
  int main(int argc, char **argv) { \
    return tkb_main(argc, argv);    \
  }

/** A function that registers entries (with tkb_register_benchmark); returns a status. */
typedef tkb_status (*tkb_registrar)(void);

/**
 * Queues fn to be run by tkb_main() before a command that reads the entries (every
 * command but `version` and `help`, which answer without registering anything); each
 * queued function runs once. For constructors, where a failure could not be reported:
 * tkb_main() reports it and exits 2. Thread-safe. At most 1024 functions (tkb_main
 * reports more).
 */
void tkb_add_registrar(tkb_registrar fn);

/**
 * TKB_REGISTER(fn) queues `tkb_status fn(void)` when the program starts (a GCC/Clang
 * constructor calling tkb_add_registrar), for programs whose main is TKB_MAIN():
 *
 *   static tkb_status register_mine(void) { return tkb_register_benchmark(&my_def); }
 *   TKB_REGISTER(register_mine)
 *   TKB_MAIN()
 */
#define TKB_REGISTER(fn)                                        \
  __attribute__((constructor)) static void tkb_register_##fn(void) { \
    tkb_add_registrar(fn);                                      \
  }

/**
 * TKB_FUNCTION(name, fn, ctx, bytes_per_call, flops_per_call) registers a plain function
 * in one line (tkb_register_function, queued by TKB_REGISTER), for a TKB_MAIN() program:
 *
 *   static void saxpy_64k(void *ctx) { ... }
 *   TKB_FUNCTION(saxpy_64k, saxpy_64k, &data, 12.0 * 65536, 2.0 * 65536)
 *   TKB_MAIN()
 *
 * name is an identifier, and the entry's op and spec name ("saxpy_64k_forward_c").
 */
#define TKB_FUNCTION(name, fn, ctx, bytes_per_call, flops_per_call)                     \
  static tkb_status tkb_function_##name(void) {                                        \
    return tkb_register_function(#name, fn, ctx, bytes_per_call, flops_per_call);      \
  }                                                                                      \
  TKB_REGISTER(tkb_function_##name)

/**
 * Plugins: a shared object passed to `tkbench run --load lib.so` (or tkb_load_plugin)
 * exports `tkb_status tkb_plugin_init(void)`, which registers its entries. It should
 * not link libtkbench: its tkbench symbols resolve against the host program (the
 * tkbench executable exports them; so does libtkbench.so), so it registers into the
 * host's one registry. See examples/plugin.c.
 */
#define TKB_PLUGIN_INIT_NAME "tkb_plugin_init"
typedef tkb_status (*tkb_plugin_init_fn)(void);

/**
 * Loads the shared object at path (a bare file name means the file in the current
 * directory, not a library-path search) and calls its tkb_plugin_init. Loading the
 * same object again does nothing. The object stays loaded for the life of the process
 * (registered entries point into it).
 * Errors: TKB_ERR_NOT_FOUND when the file does not exist or exports no
 * tkb_plugin_init; TKB_ERR_INVALID_ARGUMENT when it is not a loadable shared object
 * (the message holds dlerror's reason); the init function's own status, with its
 * message, when it fails.
 */
tkb_status tkb_load_plugin(const char *path);

/* ------------------------------------------------------------------------------ */
/* Numerics (Tokamax's numerics module; `tkbench check`)                          */
/* ------------------------------------------------------------------------------ */
/*
 * Two entry points compare an array with the expected one. tkb_array_diff_summary_tokamax
 * is Tokamax's numerics.array_diff_summary, number for number; tkb_array_diff_summary(_ex)
 * is tkbench's own, richer summary, which `tkbench check` uses. Side by side:
 *
 *                      tkb_array_diff_summary_tokamax    tkb_array_diff_summary(_ex)
 *   argument order     (expected, actual), Tokamax's      (actual, expected)
 *   dtypes             must be equal (Tokamax refuses)    may differ (read as float64)
 *   percent_close      the fraction 0..1 (Tokamax's)      0..100 (what `tkbench check
 *                                                          --format json` writes is 0..1)
 *   equal_nan          an argument, false as in Tokamax   true in tkb_array_diff_summary;
 *                                                          _ex: an option, false
 *   largest difference np.argmax: the first NaN wins     a NaN or infinity facing
 *                      (values NaN, max diff NaN); with    anything else counts +Inf; two
 *                      equal_nan np.nanargmax skips every  NaNs with equal_nan, and equal
 *                      NaN difference (one NaN side too);  infinities, count 0
 *                      equal infinities give NaN
 *   l2 of the diff     numpy's norm over every element:    over the finite pairs only (the
 *                      NaN when any difference is NaN      others show in the counts)
 *                      (Tokamax's DiffSummary has none)
 *   no element         refused (Tokamax's argmax raises)   a summary of zeros, 100% close
 *   more               the index of the largest diff       counts, relative l2, bias,
 *                                                          scale, the tolerance ratio
 *
 * Both use numpy's isclose with expected as the reference: |actual - expected| <= atol +
 * rtol |expected| for finite pairs, equality otherwise.
 */

/** Tokamax's (and numpy.isclose's) default tolerances of tkb_array_diff_summary. */
#define TKB_DIFF_RTOL_DEFAULT 1e-5
#define TKB_DIFF_ATOL_DEFAULT 1e-8

/**
 * How an array differs from the expected one (Tokamax's DiffSummary, plus counts and
 * aggregate statistics). All values are compared as float64. An element is close when
 * both are NaN (with equal_nan), or they are equal (equal infinities included), or both
 * are finite and |actual - expected| <= atol + rtol * |expected| (numpy's isclose:
 * expected is the reference). A NaN or infinity facing anything else is never close.
 * The aggregate statistics (l2, rms_expected, mean_diff, bias, scale) are over the
 * n_finite indices where both values are finite; the others show in the NaN/Inf counts
 * and in allclose.
 */
typedef struct tkb_diff_summary {
  int64_t numel;             /* elements compared */
  double max_abs_diff;       /* largest |actual - expected|: 0 where both are NaN (with
                                equal_nan) or equal, +Inf for any other NaN/Inf
                                mismatch; 0 when numel == 0 */
  int64_t max_abs_diff_index;/* flat (row-major) index of its first occurrence; -1 when
                                numel == 0 */
  double max_diff_actual;    /* the two values there (NaN when numel == 0); Tokamax's */
  double max_diff_expected;  /* max_absolute_diff_values (in (expected, actual) order) */
  int64_t n_close;           /* elements close at (rtol, atol) */
  double percent_close;      /* 100 * n_close / numel (100 when numel == 0). Note:
                                Tokamax's field of that name holds the fraction 0..1 */
  bool allclose;             /* n_close == numel */
  double l2_diff;            /* sqrt(sum (actual - expected)^2) over the finite pairs */
  double rel_l2_diff;        /* l2_diff / l2 norm of expected over the same elements
                                (0 when both are 0, +Inf when only the norm is) */
  int64_t nan_actual, nan_expected; /* NaN counts of each side */
  int64_t inf_actual, inf_expected; /* +-Inf counts of each side */
  double rtol, atol;         /* the tolerances used (atol absolute) */
  bool equal_nan;            /* whether two NaNs at an index counted as close */
  int64_t n_finite;          /* indices where both values are finite */
  double rms_expected;       /* sqrt(mean expected^2) over the finite pairs (0 when none) */
  double mean_diff;          /* mean (actual - expected) over the finite pairs (0: none) */
  double bias;               /* mean_diff / rms_expected: an offset in units of the
                                expected values' size (0 when both are 0, +-Inf when
                                only rms_expected is) */
  double scale;              /* s of the least-squares fit actual = (1 + s) expected:
                                sum (a - e) e / sum e^2 (0 when both sums are 0, +-Inf
                                when only the second is) */
  double max_tolerance_ratio;/* largest |a - e| / (atol + rtol |e|) over the finite pairs
                                (an element is close when <= 1; 0 where a == e, +Inf
                                where the tolerance is 0 and they differ); 0 when none */
} tkb_diff_summary;

/** Options of tkb_array_diff_summary_ex. A zeroed struct is Tokamax's defaults. */
typedef struct tkb_diff_opts {
  bool equal_nan;            /* Tokamax's equal_nan (default false): two NaNs at an index
                                are close; without it they are a mismatch like any other */
} tkb_diff_opts;

/**
 * Tokamax's array_diff_summary(expected, actual, rtol, atol, equal_nan): compares
 * `actual` with `expected` element by element. The arrays need equal shapes; their
 * dtypes may differ (any dtype, read as float64). rtol and atol are the absolute terms
 * of the closeness test above (Tokamax's defaults: TKB_DIFF_RTOL_DEFAULT,
 * TKB_DIFF_ATOL_DEFAULT); opts NULL is Tokamax's defaults (equal_nan false). The result
 * does not depend on the thread count. Errors: TKB_ERR_INVALID_ARGUMENT (NULL, negative
 * or non-finite tolerance, an array without data), TKB_ERR_BAD_SHAPE naming both specs,
 * TKB_ERR_UNSUPPORTED for arrays not in host memory.
 */
tkb_status tkb_array_diff_summary_ex(const tkb_array *actual, const tkb_array *expected,
                                     double rtol, double atol, const tkb_diff_opts *opts,
                                     tkb_diff_summary *out);

/** tkb_array_diff_summary_ex with equal_nan true (two NaNs at an index are close), as
 *  tkbench has always compared; the same errors. */
tkb_status tkb_array_diff_summary(const tkb_array *actual, const tkb_array *expected,
                                  double rtol, double atol, tkb_diff_summary *out);

/** Tokamax's DiffSummary (numerics.py), field for field, plus the index its values come
 *  from, the element count and numpy's l2 norm of the difference. */
typedef struct tkb_tokamax_diff_summary {
  double max_absolute_diff_values[2]; /* (expected, actual) at max_index, Tokamax's order */
  double max_absolute_diff;  /* |values[0] - values[1]| (Tokamax's property): NaN when a
                                value is NaN or both are the same infinity */
  double percent_close;      /* the FRACTION of elements close, 0..1 (Tokamax's name) */
  bool allclose;             /* every element close */
  int64_t max_index;         /* flat index of the values: np.argmax of |expected - actual|
                                (the first NaN difference when there is one), np.nanargmax
                                with equal_nan */
  int64_t numel;             /* elements compared */
  double l2_diff;            /* numpy's norm(expected - actual) over every element: NaN when
                                any difference is NaN, +Inf when one is infinite. Not in
                                Tokamax's DiffSummary; tkb_diff_summary.l2_diff sums the
                                finite pairs only */
} tkb_tokamax_diff_summary;

/**
 * Tokamax's array_diff_summary(expected, actual, rtol, atol, equal_nan), in its argument
 * order and with its semantics (the table above): host arrays of equal shape and equal
 * dtype, read as float64. Tokamax's defaults are TKB_DIFF_RTOL_DEFAULT,
 * TKB_DIFF_ATOL_DEFAULT and equal_nan false. The result does not depend on the thread
 * count. Errors, where Tokamax raises: TKB_ERR_BAD_SHAPE naming both specs;
 * TKB_ERR_INVALID_ARGUMENT for different dtypes, no element (argmax of nothing), every
 * difference NaN with equal_nan (nanargmax of nothing), a NULL argument, a NaN tolerance,
 * an array without data; TKB_ERR_UNSUPPORTED for arrays not in host memory.
 */
tkb_status tkb_array_diff_summary_tokamax(const tkb_array *expected, const tkb_array *actual, double rtol,
                                          double atol, bool equal_nan, tkb_tokamax_diff_summary *out);

/**
 * What one array holds (Tokamax's NumericSummary, plus std and counts), from its values
 * read as float64. As Tokamax's (numpy's nanmin, nanmax, nanmean), NaNs are left out and
 * infinities are not: min and max may be infinite; mean is +-Inf when infinities of one
 * sign are present and NaN when both are; mean_abs is +Inf with any infinity; std (the
 * population standard deviation, numpy's nanstd) is NaN with any infinity. With no
 * element other than NaN, min, max, mean, mean_abs and std are NaN.
 */
typedef struct tkb_numeric_summary {
  int64_t numel;             /* elements */
  int64_t nan_count;         /* NaN elements */
  int64_t posinf_count, neginf_count; /* +Inf and -Inf elements */
  bool has_nan, has_inf;     /* Tokamax's fields: nan_count > 0, an infinity present */
  double min, max;           /* over the elements that are not NaN */
  double mean, mean_abs;     /* mean of the values and of their magnitudes */
  double std;                /* population standard deviation */
} tkb_numeric_summary;

/**
 * Tokamax's array_numeric_summary of `a` (any dtype, read as float64). The result does
 * not depend on the thread count. Errors: TKB_ERR_INVALID_ARGUMENT (NULL, an array
 * without data), TKB_ERR_UNSUPPORTED for an array not in host memory.
 */
tkb_status tkb_array_numeric_summary(const tkb_array *a, tkb_numeric_summary *out);

/**
 * What `tkbench check` holds an implementation's output of `dtype` to, against a
 * reference computed in float64 (docs/CHECK.md derives each number). With u the unit
 * roundoff of the dtype (2^-8 bfloat16, 2^-11 float16, 2^-24 float32, 2^-53 float64,
 * 2^-4 float8_e4m3fn, 2^-3 float8_e5m2) and u_m that of the arithmetic the kernels do
 * (float32's, float64's for float64 outputs), G = 512 (the growth of rounding errors in
 * float sums of up to 2^18 terms, random-walk model):
 *   rtol   = 4 u + 4 G u_m    elementwise, the worst of many elements;
 *   atol   = rtol * rms       absolute, with rms the expected output's root mean
 *                             square: a value near zero may be off by what a typical
 *                             value may (never scaled by one extreme value);
 *   rel_l2 = 2 u + G u_m      the relative l2 error (an rms: rounding noise);
 *   scale, bias = max(u + G/4 u_m, 5 rel_l2 / sqrt(n))
 *                             the systematic parts: |s| of actual = (1 + s) expected,
 *                             |mean error| / rms; rounding to nearest is unbiased, so a
 *                             systematic error beyond the floor is a bug, and 5 rel_l2 /
 *                             sqrt(n) is five standard deviations of what random errors
 *                             of size rel_l2 give over n elements.
 * Integers and bool: all 0 (exact). n is the number of elements compared (>= 0).
 */
typedef struct tkb_check_thresholds {
  double rtol;               /* elementwise relative tolerance */
  double atol_rel;           /* elementwise absolute tolerance, relative to rms */
  double rel_l2;             /* largest relative l2 error */
  double scale;              /* largest |scale| */
  double bias;               /* largest |bias| */
} tkb_check_thresholds;

/** The thresholds above for n elements of `dtype`. TKB_ERR_INVALID_ARGUMENT for an
 *  invalid dtype or n < 0. */
tkb_status tkb_check_thresholds_for(tkb_dtype dtype, int64_t n, tkb_check_thresholds *out);

/**
 * The elementwise part of tkb_check_thresholds_for: *rtol and *atol (RELATIVE: multiply
 * it by the root mean square of the expected values, as tkb_check_entry does).
 * bfloat16 1.57e-2, float16 2.08e-3, float32 1.22e-4, float64 2.3e-13, float8_e4m3fn
 * 0.25, float8_e5m2 0.5; integers and bool 0 (exact); atol == rtol.
 * TKB_ERR_INVALID_ARGUMENT for an invalid dtype.
 */
tkb_status tkb_default_tolerance(tkb_dtype dtype, double *rtol, double *atol);

/** Options of tkb_check_entry. A zeroed struct means the defaults. */
typedef struct tkb_check_opts {
  uint64_t seed;          /* Philox seed of both sides' inputs; default 0 */
  const char *device;     /* device of the checked entry; NULL means "cpu" (the reference
                             always runs on the cpu) */
  bool fixed_tolerance;   /* Tokamax's allclose alone at rtol/atol below (atol absolute),
                             instead of the per-dtype criteria: the aggregate criteria
                             are still computed and shown, but not judged */
  double rtol, atol;
} tkb_check_opts;

/** The criteria of a check, in the order tkb_check_output.criteria holds them. */
typedef enum tkb_criterion {
  TKB_CRITERION_ALLCLOSE = 0, /* every element close (value: the largest
                                 max_tolerance_ratio, +Inf with a NaN/Inf mismatch;
                                 threshold 1) */
  TKB_CRITERION_REL_L2,       /* rel_l2_diff <= threshold */
  TKB_CRITERION_SCALE,        /* |scale| <= threshold */
  TKB_CRITERION_BIAS,         /* |bias| <= threshold */
  TKB_CRITERION_COUNT
} tkb_criterion;

/** "allclose", "rel_l2", "scale", "bias"; NULL for another value. */
const char *tkb_criterion_name(tkb_criterion c);

/** One criterion applied to one output. */
typedef struct tkb_check_criterion {
  double value;           /* the statistic (see tkb_criterion) */
  double threshold;       /* the bound it is held to */
  bool judged;            /* false: shown only (fixed tolerances leave the aggregate
                             criteria unjudged) */
  bool passed;            /* judged and within the bound, or not judged */
} tkb_check_criterion;

/** One output of a check. */
typedef struct tkb_check_output {
  const char *name;       /* the output's name ("loss", "dx", ...) */
  tkb_spec spec;          /* the checked entry's output */
  tkb_spec expected_spec; /* the reference's (same shape; the dtype may differ) */
  double scale;           /* what the per-dtype atol was multiplied by: the root mean
                             square of the finite expected values (1 when 0 or with
                             fixed_tolerance) */
  tkb_diff_summary diff;  /* actual = the entry's output, expected = the reference's */
  tkb_check_criterion criteria[TKB_CRITERION_COUNT];
  tkb_criterion failed;   /* the first criterion that failed; TKB_CRITERION_COUNT: none */
  tkb_numeric_summary actual_summary, expected_summary; /* each side's values */
  bool passed;            /* every judged criterion passed */
} tkb_check_output;

/** The result of tkb_check_entry. Owned by the caller: tkb_check_result_free. */
typedef struct tkb_check_result {
  size_t entry, reference;    /* registry indices */
  const char *name;           /* the entry's full name */
  const char *reference_name; /* the reference entry's full name */
  tkb_mode mode;
  int n_outputs;
  tkb_check_output *outputs;  /* one per array f_std returns, in order */
  bool passed;                /* every output passed */
} tkb_check_result;

/**
 * The entry with the same op, spec name and mode as registry entry `entry` and impl
 * "reference". TKB_ERR_NOT_FOUND naming the missing entry, TKB_ERR_INVALID_ARGUMENT
 * for an index out of range.
 */
tkb_status tkb_registry_find_reference(size_t entry, size_t *ref);

/**
 * Checks registry entry `entry` against its reference (tkb_registry_find_reference):
 * standardizes both with opts->seed (the entry on opts->device, the reference on the
 * cpu), checks they received the same arguments, calls each once and compares every
 * output pairwise: tkb_array_diff_summary at the coarser dtype's
 * tkb_check_thresholds_for (atol scaled by the expected output's rms), judged by the
 * four criteria (tkb_criterion), or Tokamax's allclose alone at opts' fixed tolerances.
 * The gradients are always compared for the same cotangents: in vjp mode the entry is
 * given the reference's (the same specs are checked first); in forward_and_vjp mode the
 * reference's gradients are computed (in its vjp mode) for the entry's own forward
 * outputs, which are the entry's cotangents, while the forward outputs are compared
 * with the reference's. So each gradient is held to its own dtype and a wrong forward
 * output shows in that output alone. A reference checked against itself passes
 * trivially. *out is written on success, passed or not. Errors: TKB_ERR_NOT_FOUND (no
 * reference), TKB_ERR_BAD_SHAPE (argument or output specs, or output counts, that
 * differ), TKB_ERR_INVALID_ARGUMENT (different argument values: the two entries were
 * registered with different arguments), and any status of standardizing or calling
 * either side (TKB_ERR_UNSUPPORTED when the entry cannot run on the device), with its
 * message.
 */
tkb_status tkb_check_entry(size_t entry, const tkb_check_opts *opts, tkb_check_result **out);
/** Frees a check result. NULL is a no-op. */
void tkb_check_result_free(tkb_check_result *r);

/* ------------------------------------------------------------------------------ */
/* Ops shipped with the library                                                    */
/* ------------------------------------------------------------------------------ */

/**
 * normalization(x, scale=None, offset=None, *, axis=-1, epsilon=1e-6,
 * subtract_mean=true): layer norm (RMS norm with subtract_mean=false) along axis.
 * x: bfloat16/float16/float32/float64; scale, offset: length x.shape[axis], any float.
 * Outputs: y (x's dtype). Residuals: mean, rstd = 1/sqrt(var + epsilon) (float32,
 * float64 for float64 x), shape x.shape without axis; NaN for rows of length 0 (the
 * RMS norm's mean stays 0). vjp grads: dx, dscale, doffset (when given), in their
 * inputs' dtypes. Errors: TKB_ERR_BAD_SHAPE naming both shapes when scale/offset is
 * not [x.shape[axis]]; TKB_ERR_INVALID_ARGUMENT for an axis out of range or epsilon not
 * finite and >= 0; TKB_ERR_UNSUPPORTED for other dtypes.
 * tkb_op_normalization is the fast cpu implementation (float32 math, float64 for float64
 * x; OpenMP over rows; results bit-identical for any thread count). Its workspaces come
 * from its prepare hook (tkb_device_alloc, sized for omp_get_max_threads() at prepare;
 * a call runs on at most that many threads); a hook called with a NULL state, or a
 * state prepared for other shapes, fails with TKB_ERR_INVALID_ARGUMENT.
 * tkb_op_normalization_reference is plain float64 loops on one thread, with no prepare
 * hook (the truth for checks); same signature, outputs, residuals and grads.
 */
extern const tkb_fn tkb_op_normalization;
extern const tkb_fn tkb_op_normalization_reference;

/**
 * linear_softmax_cross_entropy_loss(x, labels, w, *, reduction="mean"):
 *   logits = x @ w;  loss_i = logsumexp(logits_i) - logits_i[labels_i];
 *   loss = sum_i loss_i ("sum") or its mean over rows ("mean").
 * x: [B, Hd], w: [Hd, V], each bfloat16/float16/float32/float64; labels: [B] int32 with
 * every value in [0, V) (a concrete labels array is checked: TKB_ERR_INVALID_ARGUMENT
 * naming the first bad index and value). reduction: "mean" or "sum" (Tokamax's own
 * default is "sum"; pass it explicitly when comparing). Errors name both shapes on a
 * mismatch (Hd, B).
 * Output: loss, a scalar (rank 0) in float32, or float64 when x or w is float64 (Tokamax
 * returns a float32 loss for bfloat16 inputs). Residual: lse [B] (same dtype).
 * vjp grads: dx (x's dtype), dw (w's dtype); labels get none.
 * The cpu implementation never holds the [B, V] logits: it walks V in chunks with an
 * online logsumexp (OpenBLAS sgemm/dgemm per chunk; workspaces from prepare).
 * The reference computes in float64 with plain loops (the truth for `tkbench check`).
 */
extern const tkb_fn tkb_op_linear_softmax_cross_entropy_loss;
extern const tkb_fn tkb_op_linear_softmax_cross_entropy_loss_reference;

/* ---- gated_linear_unit and ragged_dot (ops/gated_linear_unit, ops/ragged_dot) ---- */

/**
 * gated_linear_unit(x, weights, *, activation=None) (Tokamax's fused weights):
 *   y = x @ weights                                    [..., M, 2, N]
 *   out = act(y[..., 0, :]) * y[..., 1, :]             [..., M, N]
 * x: [..., M, K] (rank >= 2; leading dims are batch, e.g. a vmap axis), weights:
 * [K, 2, N] of x's dtype; dtypes bfloat16/float16/float32/float64. activation: "none",
 * "silu", "sigmoid", "gelu" (tanh approximation) or "relu"; None (the default) is "none".
 * Products and activations in float32 (float64 for float64 x); output in x's dtype.
 * Residual: y in x's dtype (the vjp reads g and p from it). vjp grads: dx, dweights
 * (their inputs' dtypes).
 * Errors: TKB_ERR_BAD_SHAPE naming both shapes when x.shape[-1] != weights.shape[0] or
 * weights is not [K, 2, N]; TKB_ERR_UNSUPPORTED for other dtypes or mixed dtypes;
 * TKB_ERR_INVALID_ARGUMENT for an unknown activation (listing the allowed ones).
 * tkb_op_gated_linear_unit uses OpenBLAS on row blocks (workspaces from prepare);
 * tkb_op_gated_linear_unit_reference is plain float64 loops (the truth for checks).
 */
extern const tkb_fn tkb_op_gated_linear_unit;
extern const tkb_fn tkb_op_gated_linear_unit_reference;

/**
 * ragged_dot(lhs, rhs, group_sizes) (grouped matmul, as in mixture-of-experts layers):
 * the M rows of lhs [M, K] are split into G consecutive groups of group_sizes[g] rows;
 * out [M, N] rows of group g = lhs rows of group g @ rhs[g], rhs: [G, K, N].
 * lhs, rhs: the same dtype among bfloat16/float16/float32/float64 (sums in float32,
 * float64 for float64; out in that dtype); group_sizes: [G] int32, each >= 0 (empty
 * groups allowed), summing to M. No residuals. vjp grads: dlhs (dout_g @ rhs[g]^T),
 * drhs (lhs_g^T @ dout_g, zeros for empty groups); group_sizes gets none.
 * Errors: TKB_ERR_BAD_SHAPE naming both shapes when lhs.shape[1] != rhs.shape[1] or
 * group_sizes is not [G]; TKB_ERR_INVALID_ARGUMENT when a concrete group_sizes holds a
 * negative size or does not sum to M (naming the index or the sum, and both shapes);
 * TKB_ERR_UNSUPPORTED for other or mixed dtypes.
 * tkb_op_ragged_dot uses OpenBLAS per group (bfloat16/float16 widened in blocks;
 * workspaces from prepare); tkb_op_ragged_dot_reference is plain float64 loops.
 */
extern const tkb_fn tkb_op_ragged_dot;
extern const tkb_fn tkb_op_ragged_dot_reference;

/* ---- dot_product_attention (ops/dot_product_attention) ---- */

/**
 * dot_product_attention(q, k, v, bias=None, mask=None, *, is_causal=false, scale=None):
 *   x[b,h,t,s] = scale * q[b,t,h,:] . k[b,s,hk,:] + bias[b,h,t,s],  hk = h / (H / Hk)
 *   out[b,t,h,:] = sum_s softmax_s(x[b,h,t,:]) v[b,s,hk,:]   over the kept s
 * q: [B, T, H, D], k: [B, S, Hk, D], v: [B, S, Hk, Dv], one dtype among bfloat16,
 * float16, float32, float64; H a multiple of Hk (grouped-query; Hk = 1 multi-query).
 * bias: any of those float dtypes, mask: bool (true = keep), each broadcastable to
 * [B, H, T, S] (numpy rules, rank <= 4). is_causal keeps s <= t (Tokamax's top-left
 * alignment, also when T != S). scale: TKB_NONE (default) means 1/sqrt(D).
 * A row with no kept key gives zeros (never NaN) and zero gradients.
 * Math in float32 (float64 for float64 q). Output: out [B, T, H, Dv] in q's dtype.
 * Residual: lse [B, H, T] (float32; float64 for float64), the log-sum-exp of each score
 * row (-inf for a row with no kept key). vjp grads: dq, dk, dv and dbias (when bias is
 * given) in their inputs' dtypes; the bool mask gets none.
 * Errors: TKB_ERR_BAD_SHAPE naming both shapes when D differs between q and k, v is not
 * [B, S, Hk, *] like k, q and k batches differ, H is not a multiple of Hk, or bias/mask
 * do not broadcast to [B, H, T, S]; TKB_ERR_UNSUPPORTED for other or mixed q/k/v
 * dtypes, a non-float bias or a non-bool mask; TKB_ERR_INVALID_ARGUMENT for a
 * non-finite scale.
 * tkb_op_dot_product_attention is flash attention (tiles of queries x keys with an
 * online softmax, OpenBLAS per tile, OpenMP across batch, heads and tiles; workspaces
 * from prepare; gradients bit-identical for any thread count).
 * tkb_op_dot_product_attention_reference is plain float64 loops (the truth for checks).
 */
extern const tkb_fn tkb_op_dot_product_attention;
extern const tkb_fn tkb_op_dot_product_attention_reference;

#if defined(TKB_BUILDING_LIBRARY) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* TKBENCH_H */
