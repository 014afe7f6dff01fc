/*
 * ops.c - the CUDA backend's kernel_build / kernel_launch / kernel_free (backend.h): the
 * shipped ops' CUDA kernels are compiled into this plugin by nvcc (ops/<op>/cuda.cu), not
 * built from source at run time as OpenCL's are, so "building" a kernel looks it up by
 * (source, name) in the ops' kernel tables (cu_kernels.h), where source names the op:
 *
 *   tkb__kernel_build(dev, "normalization", "", "norm_forward", &k)     (prepare hook)
 *   tkb__kernel_launch(dev, k, 1, (size_t[]){1}, NULL, 1, &TKB_KARG_VAL(args))
 *
 * A launch takes exactly one TKB_KARG_SCALAR, the op's argument struct (in its CUDA
 * header, such as ops/normalization/norm_cuda.h, shared by the op's C side in libtkbench
 * and its .cu here); its size is checked against the table's, so a libtkbench and a
 * plugin built from different sources fail loudly instead of reading garbage. The work sizes are the struct's; `global` and `local` are
 * ignored. What a launch needs beyond that (the cuBLAS handle, letting go of the stream
 * first) is in the kernel's row: nothing here knows an op.
 *
 * cuBLAS: kernels that need it get the device's handle, created at build time (the op's
 * prepare, where allocating is allowed) with the legacy default stream and a fixed
 * workspace, so a launch allocates nothing. The handle lives as long as the process (the
 * backend interface has no device close), like the device's other state.
 */
#include "blocking_kernel.h"
#include "cu_backend.h"
#include "cu_kernels.h"

#include <cublas_v2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tkb_dtype values the .cu files spell (cu_dtype.cuh) */
_Static_assert(TKB_FLOAT8_E4M3FN == 6 && TKB_FLOAT8_E5M2 == 7 && TKB_FLOAT16 == 8 &&
                   TKB_BFLOAT16 == 9 && TKB_FLOAT32 == 10 && TKB_FLOAT64 == 11,
               "cu_dtype.cuh's dtype codes");

/* cuBLAS workspace per device: what NVIDIA recommends for Hopper (32 MiB). */
#define TKB_CU_BLAS_WORKSPACE ((size_t)32 << 20)
#define TKB_CU_MAX_DEVICES 64

struct tkb_kernel {
  const tkb_cu_kernel *e;
  cublasHandle_t blas; /* the device's (not owned), or NULL */
};

static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t blas_handles[TKB_CU_MAX_DEVICES];

static tkb_status blas_fail(const tkb_device *dev, const char *what, cublasStatus_t s) {
  return tkb_cu_error(TKB_ERR_DEVICE, "%s on %s failed: %s (cuBLAS status %d)", what, dev->name,
                      cublasGetStatusString(s), (int)s);
}

/* The device's cuBLAS handle, created on first use (dev is current). */
static tkb_status device_blas(tkb_device *dev, cublasHandle_t *out) {
  int ord = tkb_cu_dev(dev)->ordinal;
  if (ord < 0 || ord >= TKB_CU_MAX_DEVICES)
    return tkb_cu_error(TKB_ERR_UNSUPPORTED, "cuBLAS kernels support cuda:0..cuda:%d; got %s",
                        TKB_CU_MAX_DEVICES - 1, dev->name);
  tkb_status st = TKB_OK;
  pthread_mutex_lock(&blas_lock);
  if (!blas_handles[ord]) {
    cublasHandle_t h = NULL;
    void *ws = NULL;
    cublasStatus_t s = cublasCreate(&h);
    cudaError_t err = cudaSuccess;
    if (s != CUBLAS_STATUS_SUCCESS) st = blas_fail(dev, "cublasCreate", s);
    if (!st && (s = cublasSetStream(h, 0)) != CUBLAS_STATUS_SUCCESS) st = blas_fail(dev, "cublasSetStream", s);
    if (!st && (err = cudaMalloc(&ws, TKB_CU_BLAS_WORKSPACE)) != cudaSuccess)
      st = tkb_cu_fail(dev, "allocating the cuBLAS workspace (cudaMalloc)", err);
    if (!st && (s = cublasSetWorkspace(h, ws, TKB_CU_BLAS_WORKSPACE)) != CUBLAS_STATUS_SUCCESS)
      st = blas_fail(dev, "cublasSetWorkspace", s);
    if (st) {
      if (h) cublasDestroy(h);
      if (ws) cudaFree(ws);
    } else {
      blas_handles[ord] = h; /* ws lives with it */
    }
  }
  *out = blas_handles[ord];
  pthread_mutex_unlock(&blas_lock);
  return st;
}

/* The row (op, name) of the ops' tables, or NULL. */
static const tkb_cu_kernel *find_kernel(const char *op, const char *name) {
  for (const tkb_cu_op_kernels *const *t = tkb_cu_op_tables; *t; t++) {
    if (strcmp((*t)->op, op) != 0) continue;
    for (size_t i = 0; i < (*t)->count; i++)
      if (strcmp((*t)->kernels[i].name, name) == 0) return &(*t)->kernels[i];
  }
  return NULL;
}

/* "normalization's norm_forward, norm_vjp; ..." into buf: what the error names. */
static void list_kernels(char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = '\0';
  for (const tkb_cu_op_kernels *const *t = tkb_cu_op_tables; *t && at < cap; t++)
    for (size_t i = 0; i < (*t)->count && at < cap; i++) {
      int n = snprintf(buf + at, cap - at, "%s%s%s%s", i ? ", " : t == tkb_cu_op_tables ? "" : "; ",
                       i ? "" : (*t)->op, i ? "" : "'s ", (*t)->kernels[i].name);
      if (n < 0) return;
      at += (size_t)n;
    }
}

tkb_status tkb_cu_kernel_build(tkb_device *dev, const char *source, const char *options,
                               const char *name, tkb_kernel **out) {
  (void)options; /* compiled ahead of time: the dtypes and flags travel in the args */
  const tkb_cu_kernel *e = find_kernel(source, name);
  if (!e) {
    char known[1024];
    list_kernels(known, sizeof known);
    return tkb_cu_error(TKB_ERR_NOT_FOUND, "the CUDA backend has no kernel '%s' of '%.64s' "
                        "(its kernels are compiled in: %s)", name, source, known);
  }
  tkb_status st = tkb_cu_use(dev);
  cublasHandle_t h = NULL;
  if (!st && e->blas) st = device_blas(dev, &h);
  if (st) return st;
  tkb_kernel *k = malloc(sizeof *k);
  if (!k) return tkb_cu_error(TKB_ERR_OUT_OF_MEMORY, "out of memory building kernel %s", name);
  k->e = e;
  k->blas = h;
  *out = k;
  return TKB_OK;
}

tkb_status tkb_cu_kernel_launch(tkb_device *dev, tkb_kernel *k, int dims, const size_t *global,
                                const size_t *local, int nargs, const tkb_karg *args) {
  (void)dims, (void)global, (void)local;
  const tkb_cu_kernel *e = k->e;
  if (nargs != 1 || args[0].kind != TKB_KARG_SCALAR || args[0].size != e->args_size)
    return tkb_cu_error(TKB_ERR_INVALID_ARGUMENT, "kernel %s on %s takes one argument struct of "
                        "%zu bytes; got %d argument(s)%s (libtkbench and libtkbench-cuda.so "
                        "built from different sources?)", e->name, dev->name, e->args_size, nargs,
                        nargs == 1 ? " of another size or kind" : "");
  tkb_status st = tkb_cu_use(dev);
  if (st) return st;
  if (e->waits_for_host || (e->launches && e->launches(args[0].value) > TKB_CU_BLOCK_MAX_LAUNCHES))
    tkb_cu_unblock(tkb_cu_dev(dev), true);
  const int rc = e->launch(k->blas, args[0].value);
  if (rc >= TKB_CU_BLAS_ERROR) return blas_fail(dev, e->name, (cublasStatus_t)(rc - TKB_CU_BLAS_ERROR));
  if (rc) return tkb_cu_fail(dev, e->name, (cudaError_t)rc);
  return TKB_OK;
}

void tkb_cu_kernel_free(tkb_device *dev, tkb_kernel *k) {
  (void)dev;
  free(k);
}
