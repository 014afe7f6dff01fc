/*
 * blas.h - OpenBLAS, opened the first time something needs a product (blas.c says why it
 * is not linked): the ops' matrix products and the sgemm peak of `run --peaks`. Internal.
 */
#ifndef TKB_BLAS_H
#define TKB_BLAS_H

#include "tkbench.h"

#include <cblas.h>

/* The OpenBLAS functions tkbench calls; set by tkb__blas_open. */
typedef struct tkb__blas_fns {
  __typeof__(cblas_sgemm) *sgemm;
  __typeof__(cblas_dgemm) *dgemm;
  __typeof__(openblas_get_parallel) *get_parallel;
  __typeof__(openblas_get_num_threads) *get_num_threads;
  __typeof__(openblas_set_num_threads) *set_num_threads;
  __typeof__(openblas_get_corename) *get_corename; /* the kernels it picked for this CPU */
  __typeof__(openblas_get_config) *get_config;     /* its build: version, threading, cores */
} tkb__blas_fns;
extern tkb__blas_fns tkb__blas;

/* Opens OpenBLAS once (thread-safe); whatever calls tkb__blas (an op's prepare hook, the
 * peak's measurement) calls this first. TKB_ERR_UNSUPPORTED naming `who` and why it
 * cannot be loaded. */
tkb_status tkb__blas_open(const char *who);

#endif /* TKB_BLAS_H */
