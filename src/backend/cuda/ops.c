/*
 * ops.c - the CUDA backend's kernel_build / kernel_launch / kernel_free (backend.h): the
 * shipped ops' CUDA kernels are compiled into this plugin by nvcc (ops/<op>/cuda.cu), not
 * built from source at run time as OpenCL's are, so "building" a kernel looks it up by
 * (source, name) in the table below, where source names the op:
 *
 *   tkb__kernel_build(dev, "normalization", "", "norm_forward", &k)     (prepare hook)
 *   tkb__kernel_launch(dev, k, 1, (size_t[]){1}, NULL, 1, &TKB_KARG_VAL(args))
 *
 * A launch takes exactly one TKB_KARG_SCALAR, the op's argument struct (ops/normalization/norm_cuda.h,
 * ops/gated_linear_unit/glu_cuda.h, ops/ragged_dot/rd_cuda.h, ops/linear_softmax_cross_entropy_loss/
 * lsce_cuda.h, ops/dot_product_attention/attn_cuda.h, shared by the op's C side in libtkbench and
 * its .cu here); its size is checked, so a
 * libtkbench and a plugin built from different sources fail loudly instead of reading
 * garbage. The work sizes are the struct's; `global` and `local` are ignored.
 *
 * cuBLAS: kernels that need it get the device's handle, created at build time (the op's
 * prepare, where allocating is allowed) with the legacy default stream and a fixed
 * workspace, so a launch allocates nothing. The handle lives as long as the process (the
 * backend interface has no device close), like the device's other state.
 */
#include "blocking_kernel.h"
#include "cu_backend.h"

#include <cublas_v2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dot_product_attention/attn_cuda.h"
#include "gated_linear_unit/glu_cuda.h"
#include "linear_softmax_cross_entropy_loss/lsce_cuda.h"
#include "normalization/norm_cuda.h"
#include "ragged_dot/rd_cuda.h"

/* tkb_dtype values the .cu files spell (cu_dtype.cuh) */
_Static_assert(TKB_FLOAT8_E4M3FN == 6 && TKB_FLOAT8_E5M2 == 7 && TKB_FLOAT16 == 8 &&
                   TKB_BFLOAT16 == 9 && TKB_FLOAT32 == 10 && TKB_FLOAT64 == 11,
               "cu_dtype.cuh's dtype codes");

/* cuBLAS workspace per device: what NVIDIA recommends for Hopper (32 MiB). */
#define TKB_CU_BLAS_WORKSPACE ((size_t)32 << 20)
#define TKB_CU_MAX_DEVICES 64

typedef enum {
  K_NORM_FWD, K_NORM_VJP, K_GLU_FWD, K_GLU_VJP, K_RD_SIZES, K_RD_FWD, K_RD_VJP,
  K_LSCE_FWD, K_LSCE_VJP, K_ATTN_FWD, K_ATTN_VJP
} kernel_id;

typedef struct kernel_entry {
  const char *source, *name;
  kernel_id id;
  size_t args_size;
  bool blas;
} kernel_entry;

static const kernel_entry table[] = {
    {"normalization", "norm_forward", K_NORM_FWD, sizeof(norm_cu_args), false},
    {"normalization", "norm_vjp", K_NORM_VJP, sizeof(norm_cu_args), false},
    {"gated_linear_unit", "glu_forward", K_GLU_FWD, sizeof(glu_cu_args), true},
    {"gated_linear_unit", "glu_vjp", K_GLU_VJP, sizeof(glu_cu_args), true},
    {"ragged_dot", "rd_sizes", K_RD_SIZES, sizeof(rd_cu_args), false},
    {"ragged_dot", "rd_forward", K_RD_FWD, sizeof(rd_cu_args), true},
    {"ragged_dot", "rd_vjp", K_RD_VJP, sizeof(rd_cu_args), true},
    {"linear_softmax_cross_entropy_loss", "lsce_forward", K_LSCE_FWD, sizeof(lsce_cu_args), true},
    {"linear_softmax_cross_entropy_loss", "lsce_vjp", K_LSCE_VJP, sizeof(lsce_cu_args), true},
    {"dot_product_attention", "attn_forward", K_ATTN_FWD, sizeof(attn_cu_args), false},
    {"dot_product_attention", "attn_vjp", K_ATTN_VJP, sizeof(attn_cu_args), false},
};

struct tkb_kernel {
  const kernel_entry *e;
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

tkb_status tkb_cu_kernel_build(tkb_device *dev, const char *source, const char *options,
                               const char *name, tkb_kernel **out) {
  (void)options; /* compiled ahead of time: the dtypes and flags travel in the args */
  const kernel_entry *e = NULL;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].source, source) == 0 && strcmp(table[i].name, name) == 0) e = &table[i];
  if (!e)
    return tkb_cu_error(TKB_ERR_NOT_FOUND, "the CUDA backend has no kernel '%s' of '%.64s' "
                        "(its kernels are compiled in: normalization's norm_forward, norm_vjp; "
                        "gated_linear_unit's glu_forward, glu_vjp; ragged_dot's rd_sizes, rd_forward, rd_vjp; "
                        "linear_softmax_cross_entropy_loss's lsce_forward, lsce_vjp; "
                        "dot_product_attention's attn_forward, attn_vjp)", name, source);
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
  const kernel_entry *e = k->e;
  if (nargs != 1 || args[0].kind != TKB_KARG_SCALAR || args[0].size != e->args_size)
    return tkb_cu_error(TKB_ERR_INVALID_ARGUMENT, "kernel %s on %s takes one argument struct of "
                        "%zu bytes; got %d argument(s)%s (libtkbench and libtkbench-cuda.so "
                        "built from different sources?)", e->name, dev->name, e->args_size, nargs,
                        nargs == 1 ? " of another size or kind" : "");
  tkb_status st = tkb_cu_use(dev);
  if (st) return st;
  int rc = 0;
  switch (e->id) {
    case K_NORM_FWD: rc = tkb_cu_norm_forward(args[0].value); break;
    case K_NORM_VJP: rc = tkb_cu_norm_vjp(args[0].value); break;
    case K_GLU_FWD: rc = tkb_cu_glu_forward(k->blas, args[0].value); break;
    case K_GLU_VJP: rc = tkb_cu_glu_vjp(k->blas, args[0].value); break;
    case K_RD_SIZES: /* a copy to the host: it waits for the device */
      tkb_cu_unblock(tkb_cu_dev(dev), true);
      rc = tkb_cu_rd_sizes(args[0].value);
      break;
    case K_RD_FWD: rc = tkb_cu_rd_forward(k->blas, args[0].value); break;
    case K_RD_VJP: rc = tkb_cu_rd_vjp(k->blas, args[0].value); break;
    case K_LSCE_FWD:
    case K_LSCE_VJP: {
      /* per vocabulary chunk: a GEMM (maybe two kernels) and 1-2 kernels forward, twice
       * that backward; more than the launch queue holds would stall the host behind
       * cuda_events' blocking kernel until its timeout */
      const lsce_cu_args *la = args[0].value;
      const int64_t chunks = la->vc > 0 ? (la->v + la->vc - 1) / la->vc : 0;
      if (chunks * (e->id == K_LSCE_VJP ? 8 : 4) + 8 > TKB_CU_BLOCK_MAX_LAUNCHES)
        tkb_cu_unblock(tkb_cu_dev(dev), true);
      rc = e->id == K_LSCE_VJP ? tkb_cu_lsce_vjp(k->blas, la) : tkb_cu_lsce_forward(k->blas, la);
      break;
    }
    case K_ATTN_FWD: rc = tkb_cu_attn_forward(args[0].value); break;
    case K_ATTN_VJP: rc = tkb_cu_attn_vjp(args[0].value); break;
  }
  if (rc >= TKB_CU_BLAS_ERROR) return blas_fail(dev, e->name, (cublasStatus_t)(rc - TKB_CU_BLAS_ERROR));
  if (rc) return tkb_cu_fail(dev, e->name, (cudaError_t)rc);
  return TKB_OK;
}

void tkb_cu_kernel_free(tkb_device *dev, tkb_kernel *k) {
  (void)dev;
  free(k);
}
