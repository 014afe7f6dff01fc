/*
 * ops_common.h - small helpers the ops' implementations share (internal, header only).
 *
 * Everything here is static inline so that using it costs what the copy it replaced
 * cost: no extra call in a hot loop, no copy. What lives here:
 *  - workspace carving: 64-byte rounded pieces of one prepare-time allocation;
 *  - OPS_AT: element offset -> pointer into an array's data;
 *  - row-major OpenBLAS products (sgemm/dgemm) with the k == 0 case written out;
 *  - element access for the floating dtypes, with tkb_array_get_f64/tkb_array_set_f64's
 *    exact semantics (inline for the floating dtypes, the library for the rest);
 *  - the float64 reference products (plain loops in a fixed summation order).
 */
#ifndef TKB_OPS_COMMON_H
#define TKB_OPS_COMMON_H

#include "tkbench.h"

#include <cblas.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------------ */
/* Sizes and workspaces                                                            */
/* ------------------------------------------------------------------------------ */

static inline int64_t ops_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t ops_max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* n rounded up to a multiple of 64 (workspace pieces start on cache lines). */
static inline size_t ops_round64(size_t n) { return (n + 63) / 64 * 64; }

/* Carves `bytes` off *cursor; the next piece starts 64-byte aligned. */
static inline void *ops_carve(char **cursor, size_t bytes) {
  void *p = *cursor;
  *cursor += ops_round64(bytes);
  return p;
}

/* Element offset -> pointer into an array of element size es. */
#define OPS_AT(arr, off, es) ((void *)((char *)(arr)->data + (size_t)(off) * (es)))

/* ------------------------------------------------------------------------------ */
/* Row-major products; k == 0 gives beta C explicitly (no BLAS call)               */
/* ------------------------------------------------------------------------------ */

/* C[m, n] = op(A) op(B) + beta C with op(X) = X^T when t*, all row-major with leading
 * dimensions lda, ldb, ldc (elements). Dimensions must fit OpenBLAS's blasint (the
 * ops' prepare hooks check). k == 0 is written out, without a BLAS call: C = beta C
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
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
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
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
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
