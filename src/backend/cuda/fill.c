/*
 * fill.c - tkb_fill on a CUDA device: the core validates the initializer and plans the
 * fill (tkb_fill_plan, through the host table); fill.cu's kernel reproduces the cpu's
 * bytes; constants of one byte are a cudaMemsetAsync, wider ones the kernel-free path of
 * uploading one element and doubling it with device copies.
 */
#include "cu_backend.h"

#include <string.h>

/* fill.cu spells these numbers (fill_kernel.h) */
_Static_assert(TKB_FILL_NORMAL32 == 0 && TKB_FILL_NORMAL64 == 1 && TKB_FILL_UNIFORM32 == 2 &&
                   TKB_FILL_UNIFORM64 == 3 && TKB_FILL_RANGE32 == 4 && TKB_FILL_RANGE64 == 5 &&
                   TKB_FILL_NORMAL16 == 8,
               "fill.cu's draw codes");
_Static_assert(TKB_BOOL == 0 && TKB_UINT8 == 5 && TKB_FLOAT8_E4M3FN == 6 && TKB_FLOAT16 == 8 &&
                   TKB_BFLOAT16 == 9 && TKB_FLOAT32 == 10 && TKB_FLOAT64 == 11,
               "fill.cu's dtype codes");

/* Every element = the plan's constant: one element uploaded, then copies that double the
 * filled prefix (log2(n) device copies, no kernel). */
static tkb_status fill_constant(tkb_array *a, const tkb_fill_plan *p) {
  tkb_device *dev = a->device;
  unsigned char *d = a->data;
  bool same = true;
  for (size_t i = 1; i < p->esize; i++) same = same && p->cbytes[i] == p->cbytes[0];
  cudaError_t err;
  if (same) {
    err = cudaMemsetAsync(d, p->cbytes[0], a->nbytes, 0);
    return err == cudaSuccess ? TKB_OK : tkb_cu_fail(dev, "cudaMemsetAsync (constant fill)", err);
  }
  tkb_cu_unblock(tkb_cu_dev(dev), true); /* cudaMemcpy from pageable memory waits */
  err = cudaMemcpy(d, p->cbytes, p->esize, cudaMemcpyHostToDevice);
  for (size_t done = p->esize; err == cudaSuccess && done < a->nbytes; done *= 2) {
    size_t n = done <= a->nbytes - done ? done : a->nbytes - done;
    err = cudaMemcpyAsync(d + done, d, n, cudaMemcpyDeviceToDevice, 0);
  }
  return err == cudaSuccess ? TKB_OK : tkb_cu_fail(dev, "the constant fill (cudaMemcpyAsync)", err);
}

tkb_status tkb_cu_fill(tkb_array *a, const tkb_init *init, uint64_t seed, uint64_t stream) {
  tkb_device *dev = a->device;
  tkb_fill_plan p;
  tkb_status st = tkb_cu_host->fill_plan(a, init, seed, stream, &p);
  if (st) return st;
  if (a->numel == 0) return TKB_OK;
  if (p.draw == TKB_FILL_CALLBACK)
    return tkb_cu_error(TKB_ERR_UNSUPPORTED, "a CALLBACK initializer writes host memory and "
                        "cannot fill an array on %s directly: fill a cpu array and copy it over "
                        "(tkb_array_copy)", dev->name);
  st = tkb_cu_use(dev);
  if (st) return st;
  if (p.draw == TKB_FILL_CONSTANT) return fill_constant(a, &p);
  tkb_cu_fill_args k = {
      .out = a->data, .n = (uint64_t)a->numel, .seed = seed, .stream = stream,
      .draw = (int)p.draw, .dtype = (int)p.dtype, .affine = p.affine,
      .mean_f = p.mean_f, .std_f = p.std_f, .lo_f = p.lo_f, .hi_f = p.hi_f, .mn_f = p.mn_f, .mx_f = p.mx_f,
      .mean_d = p.mean_d, .std_d = p.std_d, .lo_d = p.lo_d, .hi_d = p.hi_d, .mn_d = p.mn_d, .mx_d = p.mx_d,
      .ilo = p.ilo, .width = p.width};
  cudaError_t err = (cudaError_t)tkb_cu_fill_launch(&k);
  return err == cudaSuccess ? TKB_OK : tkb_cu_fail(dev, "the fill kernel (tkb_fill)", err);
}
