/*
 * fill.c - tkb_fill on an OpenCL device: the core validates the initializer and plans the
 * fill (tkb_fill_plan, through the host table), fill.cl reproduces the cpu's bytes with
 * one work-item per Philox counter; constants are a clEnqueueFillBuffer of one element.
 */
#include "cl_backend.h"

#include <string.h>

/* The fill program, built on the device's first fill and kept. */
static tkb_status fill_kernel(tkb_device *dev, cl_kernel *out) {
  tkb_cl_device *d = tkb_cl_dev(dev);
  if (d->fill_kernel) {
    *out = d->fill_kernel;
    return TKB_OK;
  }
  const char *srcs[] = {tkb_cl_src_philox, tkb_cl_src_fill};
  cl_program prog;
  /* no -cl-mad-enable, no fast math: every operation rounds as the cpu's */
  tkb_status st = tkb_cl_program(dev, srcs, 2, "", &prog);
  if (st) return st;
  cl_int err;
  cl_kernel k = clCreateKernel(prog, "tkb_fill", &err);
  if (err != CL_SUCCESS) return tkb_cl_fail(dev, "clCreateKernel(tkb_fill)", err);
  pthread_mutex_lock(&d->lock);
  if (d->fill_kernel) clReleaseKernel(k); /* another thread was first */
  else d->fill_kernel = k;
  pthread_mutex_unlock(&d->lock);
  *out = d->fill_kernel;
  return TKB_OK;
}

static uint64_t bits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

tkb_status tkb_cl_fill(tkb_array *a, const tkb_init *init, uint64_t seed, uint64_t stream) {
  tkb_device *dev = a->device;
  tkb_cl_device *d = tkb_cl_dev(dev);
  tkb_fill_plan p;
  tkb_status st = tkb_cl_host->fill_plan(a, init, seed, stream, &p);
  if (st) return st;
  if (a->numel == 0) return TKB_OK;
  if (p.draw == TKB_FILL_CALLBACK)
    return tkb_cl_error(TKB_ERR_UNSUPPORTED, "a CALLBACK initializer writes host memory and "
                        "cannot fill an array on %s directly: fill a cpu array and copy it over "
                        "(tkb_array_copy)", dev->name);
  if (p.draw == TKB_FILL_CONSTANT) {
    cl_int err = clEnqueueFillBuffer(d->queue, (cl_mem)a->data, p.cbytes, p.esize, 0, a->nbytes,
                                     0, NULL, tkb_cl_record(d, "fill_buffer"));
    return err == CL_SUCCESS ? TKB_OK : tkb_cl_fail(dev, "clEnqueueFillBuffer", err);
  }
  if (!d->fp64 && (a->spec.dtype == TKB_FLOAT64 || p.draw == TKB_FILL_NORMAL64 ||
                   p.draw == TKB_FILL_UNIFORM64))
    return tkb_cl_error(TKB_ERR_UNSUPPORTED, "%s has no double precision (cl_khr_fp64), so it "
                        "cannot fill a float64 array", dev->name);
  cl_kernel k = NULL;
  st = fill_kernel(dev, &k);
  if (st) return st;
  cl_ulong n = (cl_ulong)a->numel, sd = seed, sm = stream, width = p.width;
  cl_int draw = (cl_int)p.draw, dt = (cl_int)p.dtype, affine = p.affine;
  cl_ulong mb = bits(p.mean_d), sb = bits(p.std_d), lb = bits(p.lo_d), hb = bits(p.hi_d),
           nb = bits(p.mn_d), xb = bits(p.mx_d);
  cl_long ilo = p.ilo;
  cl_mem buf = (cl_mem)a->data;
  cl_int err = CL_SUCCESS;
  cl_uint i = 0;
#define ARG(v) if (err == CL_SUCCESS) err = clSetKernelArg(k, i++, sizeof(v), &(v))
  ARG(buf); ARG(n); ARG(sd); ARG(sm); ARG(draw); ARG(dt); ARG(affine);
  ARG(p.mean_f); ARG(p.std_f); ARG(p.lo_f); ARG(p.hi_f); ARG(p.mn_f); ARG(p.mx_f);
  ARG(mb); ARG(sb); ARG(lb); ARG(hb); ARG(nb); ARG(xb); ARG(ilo); ARG(width);
#undef ARG
  if (err != CL_SUCCESS) return tkb_cl_fail(dev, "setting the fill kernel's arguments", err);
  size_t counters = (size_t)((n + (cl_ulong)p.per_ctr - 1) / (cl_ulong)p.per_ctr);
  size_t local = d->max_wg >= 64 ? 64 : d->max_wg;
  size_t global = (counters + local - 1) / local * local;
  err = clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &global, &local, 0, NULL,
                               tkb_cl_record(d, "tkb_fill"));
  return err == CL_SUCCESS ? TKB_OK : tkb_cl_fail(dev, "the fill kernel", err);
}
