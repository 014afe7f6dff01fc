/*
 * ops_common.h - what the ops' C implementations share (internal): the glue every
 * implementation needs around its math, and small helpers for that math.
 *
 * The helpers are static inline so that using one costs what the copy it replaced
 * cost: no extra call in a hot loop. What lives here:
 *  - sizes, and OPS_AT: element offset -> pointer into an array's data;
 *  - the glue of a hook (ops_common.c): concrete arguments and those readable on the
 *    host, caller buffers, the prepared state's errors, the device-kind guard, kernel
 *    launches with one argument struct, OpenCL kernels built after ops/common/opencl.cl;
 *  - workspaces: 64-byte aligned pieces of one prepare-time allocation (ops_common.c);
 *  - row-major OpenBLAS products (sgemm/dgemm) with the k == 0 case written out;
 *  - element access for the floating dtypes, with tkb_array_get_f64/tkb_array_set_f64's
 *    exact semantics (inline for the floating dtypes, the library for the rest);
 *  - the float64 reference products (plain loops in a fixed summation order).
 */
#ifndef TKB_OPS_COMMON_H
#define TKB_OPS_COMMON_H

#include "blas.h" /* OpenBLAS, opened when first needed (src/core/blas.c) */
#include "tkbench.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------------ */
/* Sizes                                                                           */
/* ------------------------------------------------------------------------------ */

static inline int64_t ops_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t ops_max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* n rounded up to a multiple of 64 (workspace pieces start on cache lines). */
static inline size_t ops_round64(size_t n) { return (n + 63) / 64 * 64; }

/* True when mode runs the vjp (the hooks size its workspaces by it). */
static inline bool ops_mode_has_vjp(int mode) {
  return mode == TKB_MODE_VJP || mode == TKB_MODE_FORWARD_AND_VJP;
}

/* Element offset -> pointer into an array of element size es. */
#define OPS_AT(arr, off, es) ((void *)((char *)(arr)->data + (size_t)(off) * (es)))

/* ------------------------------------------------------------------------------ */
/* The glue of a hook (ops_common.c). `who` names the implementation in messages:     */
/* "ragged_dot", "normalization (cuda)".                                              */
/* ------------------------------------------------------------------------------ */

/* A spec as text ("bfloat16[64,95]") in buf, for messages. */
static inline const char *ops_spec_str(const tkb_spec *s, char *buf, size_t cap) {
  tkb_spec_format(s, buf, cap);
  return buf;
}

/* The concrete array bound to parameter `name` into *out; an error naming it when it
 * is None or abstract (the hooks that compute need data). */
tkb_status ops_concrete(const tkb_args *a, const char *who, const char *name,
                        const tkb_array **out);

/* A caller's buffer (output, residual, cotangent or gradient; `what` says which, as
 * "output y") must exist and have the spec the plan wants. */
tkb_status ops_check_buffer(const char *who, const tkb_array *arr, const tkb_spec *want,
                            const char *what);

/* The error of a hook called without the state its prepare made (have_state false) or
 * with one prepared for another call (`prepared_for` says what differs: "other
 * shapes"). */
tkb_status ops_state_error(const char *who, bool have_state, const char *prepared_for);

/* The error of a vjp called on a state prepared in a mode without one (its workspaces
 * were not made). */
tkb_status ops_vjp_unprepared(const char *who);

/* A device implementation's prepare refuses a device of another kind ("cuda") with
 * a sentence naming both, before it touches any memory. */
tkb_status ops_require_device(const tkb_device *dev, const char *kind, const char *who);

/* The concrete array bound to `name` when its data can be read here, on the host (an
 * array of a cpu device), else NULL: an op's plan checks an array's values (labels in range, group
 * sizes summing to M) only then, so the one plan serves the implementations that keep
 * the array in device memory too (the device code bounds what it reads). */
const tkb_array *ops_host_array(const tkb_args *a, const char *name);

/* Launches kernel k (a CUDA op kernel: src/backend/cuda/cu_kernels.h) with its one
 * argument struct of `size` bytes, passed by value. */
typedef struct tkb_kernel tkb_kernel;
tkb_status ops_launch_args(tkb_device *dev, tkb_kernel *k, const void *args, size_t size);

/* Builds kernel `name` of an op's OpenCL source (its opencl.cl, embedded) compiled after
 * ops/common/opencl.cl (the shared matrix-product tile) with `options`, on an OpenCL
 * device. The backend caches the program by its text and options, so an op's kernels
 * share one compilation. */
tkb_status ops_cl_kernel_build(tkb_device *dev, const char *op_source, const char *options,
                               const char *name, tkb_kernel **out);

/* ------------------------------------------------------------------------------ */
/* Workspaces (ops_common.c)                                                        */
/* ------------------------------------------------------------------------------ */

/* Memory from prepare: one tkb_device_alloc (peak memory counts it), carved into
 * pieces that each start 64-byte aligned. More than one piece needs addressable device
 * memory (cpu, cuda); an OpenCL allocation is a cl_mem handle, so OpenCL
 * implementations take one piece per workspace. */
typedef struct ops_workspace {
  tkb_device *dev;
  void *base;
  size_t bytes;
} ops_workspace;

/* Allocates n pieces of sizes[i] bytes on dev (a piece of 0 bytes gets a pointer that
 * must not be read): pieces[i] receives piece i. Pieces after the first are offsets from
 * the allocation, so n > 1 needs a device whose memory handles are addresses (the cpu,
 * CUDA); an OpenCL buffer is a handle, and asking for more than one piece of it is
 * TKB_ERR_INTERNAL. On failure *ws is left empty. */
tkb_status ops_workspace_alloc(ops_workspace *ws, tkb_device *dev, size_t n, const size_t *sizes,
                               void **pieces);
/* Frees the allocation (an empty workspace is fine) and empties *ws. */
void ops_workspace_free(ops_workspace *ws);

/* An op whose OpenMP threads each call OpenBLAS on their own blocks keeps a pthreads
 * OpenBLAS on the calling thread for the duration of a call (it would otherwise start
 * its own threads inside each of ours, and calls from two of our threads at once would
 * queue on its one thread pool), then restores its setting: begin returns what end
 * needs. No lock or allocation: lowering the count only sets a variable. An OpenMP
 * OpenBLAS sees it is inside a parallel region and stays single-threaded by itself. */
int ops_blas_single_begin(void);
void ops_blas_single_end(int saved);

/* ------------------------------------------------------------------------------ */
/* Row-major products; k == 0 gives beta C explicitly (no BLAS call)               */
/* ------------------------------------------------------------------------------ */

/* C[m, n] = op(A) op(B) + beta C with op(X) = X^T when t*, all row-major with leading
 * dimensions lda, ldb, ldc (elements). Dimensions must fit OpenBLAS's blasint (the
 * ops' prepare hooks check), and the hook must have opened OpenBLAS (tkb__blas_open). k == 0 is written out, without a BLAS call: C = beta C
 * (0 when beta == 0, whatever C held). */
static inline void ops_sgemm_rm(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                                const float *a, int64_t lda, const float *b, int64_t ldb,
                                float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  tkb__blas.sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              (blasint)m, (blasint)n, (blasint)k, 1.0f, a, (blasint)lda, b, (blasint)ldb, beta,
              c, (blasint)ldc);
}

/* The float64 twin of ops_sgemm_rm. */
static inline void ops_dgemm_rm(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                                const double *a, int64_t lda, const double *b, int64_t ldb,
                                double beta, double *c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
    return;
  }
  tkb__blas.dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              (blasint)m, (blasint)n, (blasint)k, 1.0, a, (blasint)lda, b, (blasint)ldb, beta,
              c, (blasint)ldc);
}

/* ------------------------------------------------------------------------------ */
/* Element access                                                                  */
/* ------------------------------------------------------------------------------ */

/* Element i of a host array as a double: tkb_array_get_f64, with the floating dtypes
 * inline (exact for every dtype but int64 beyond 2^53). */
static inline double ops_get(const tkb_array *a, int64_t i) {
  switch (a->spec.dtype) {
    case TKB_FLOAT64: return ((const double *)a->data)[i];
    case TKB_FLOAT32: return ((const float *)a->data)[i];
    case TKB_BFLOAT16: return tkb_bf16_to_f32(((const uint16_t *)a->data)[i]);
    case TKB_FLOAT16: return tkb_f16_to_f32(((const uint16_t *)a->data)[i]);
    case TKB_FLOAT8_E4M3FN: return tkb_e4m3fn_to_f32(((const uint8_t *)a->data)[i]);
    case TKB_FLOAT8_E5M2: return tkb_e5m2_to_f32(((const uint8_t *)a->data)[i]);
    default: return tkb_array_get_f64(a, i);
  }
}

/* Stores v into element i, rounded to the array's dtype: tkb_array_set_f64 (whose
 * tkb_convert takes narrow floats through float32: round to float32, then to the
 * dtype), with the floating dtypes inline. */
static inline void ops_set(tkb_array *a, int64_t i, double v) {
  switch (a->spec.dtype) {
    case TKB_FLOAT64: ((double *)a->data)[i] = v; break;
    case TKB_FLOAT32: ((float *)a->data)[i] = (float)v; break;
    case TKB_BFLOAT16: ((uint16_t *)a->data)[i] = tkb_f32_to_bf16((float)v); break;
    case TKB_FLOAT16: ((uint16_t *)a->data)[i] = tkb_f32_to_f16((float)v); break;
    case TKB_FLOAT8_E4M3FN: ((uint8_t *)a->data)[i] = tkb_f32_to_e4m3fn((float)v); break;
    case TKB_FLOAT8_E5M2: ((uint8_t *)a->data)[i] = tkb_f32_to_e5m2((float)v); break;
    default: tkb_array_set_f64(a, i, v); break;
  }
}

/* ------------------------------------------------------------------------------ */
/* float64 reference products: plain loops, one thread, a fixed summation order    */
/* ------------------------------------------------------------------------------ */

/* c = a @ b: a [m, k], b [k, n], c [m, n], all dense row-major. */
static inline void ops_ref_matmul_nn(const double *a, const double *b, double *c, int64_t m,
                                     int64_t k, int64_t n) {
  /* c[i][j] = sum_p a[i][p] b[p][j]   (summed over p in order) */
  for (int64_t i = 0; i < m; i++) {
    double *ci = c + i * n;
    for (int64_t j = 0; j < n; j++) ci[j] = 0.0;
    for (int64_t p = 0; p < k; p++) {
      const double aip = a[i * k + p];
      const double *bp = b + p * n;
      for (int64_t j = 0; j < n; j++) ci[j] += aip * bp[j];
    }
  }
}

/* c = a @ b^T: a [m, n], b [k, n], c [m, k]. */
static inline void ops_ref_matmul_nt(const double *a, const double *b, double *c, int64_t m,
                                     int64_t k, int64_t n) {
  /* c[i][p] = sum_j a[i][j] b[p][j] */
  for (int64_t i = 0; i < m; i++)
    for (int64_t p = 0; p < k; p++) {
      double sum = 0.0;
      for (int64_t j = 0; j < n; j++) sum += a[i * n + j] * b[p * n + j];
      c[i * k + p] = sum;
    }
}

/* c = a^T @ b: a [m, k], b [m, n], c [k, n] (zero when m == 0). */
static inline void ops_ref_matmul_tn(const double *a, const double *b, double *c, int64_t m,
                                     int64_t k, int64_t n) {
  /* c[p][j] = sum_i a[i][p] b[i][j]   (summed over i in order) */
  for (int64_t q = 0; q < k * n; q++) c[q] = 0.0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t p = 0; p < k; p++) {
      const double aip = a[i * k + p];
      for (int64_t j = 0; j < n; j++) c[p * n + j] += aip * b[i * n + j];
    }
}

#endif /* TKB_OPS_COMMON_H */
