/*
 * fill.c - tkb_fill on an OpenCL device: the core validates the initializer and plans the
 * fill (tkb_fill_plan, through the host table), fill.cl reproduces the cpu's bytes with
 * one work-item per Philox counter; constants are a clEnqueueFillBuffer of one element.
 * The 16-bit normal draws' quantile table (128 KiB) is compiled in here from the core's
 * data and uploaded once per device, with the fill program.
 */
#include "cl_backend.h"

#include <string.h>

/* fill.cl spells these numbers */
_Static_assert(TKB_FILL_NORMAL32 == 0 && TKB_FILL_NORMAL64 == 1 && TKB_FILL_UNIFORM32 == 2 &&
                   TKB_FILL_UNIFORM64 == 3 && TKB_FILL_RANGE32 == 4 && TKB_FILL_RANGE64 == 5 &&
                   TKB_FILL_NORMAL16 == 8,
               "fill.cl's draw codes");

static const cl_uint normal16_table[32768] = {
#include "normal16_table.inc"
};

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
  cl_mem table = clCreateBuffer(d->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                sizeof normal16_table, (void *)normal16_table, &err);
  if (err != CL_SUCCESS) {
    clReleaseKernel(k);
    return tkb_cl_fail(dev, "uploading the normal draws' table (clCreateBuffer, 128 KiB)", err);
  }
  pthread_mutex_lock(&d->lock);
  if (d->fill_kernel) { /* another thread was first */
    clReleaseKernel(k);
    clReleaseMemObject(table);
  } else {
    d->fill_kernel = k;
    d->normal16 = table;
  }
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
  ARG(mb); ARG(sb); ARG(lb); ARG(hb); ARG(nb); ARG(xb); ARG(ilo); ARG(width); ARG(d->normal16);
#undef ARG
  if (err != CL_SUCCESS) return tkb_cl_fail(dev, "setting the fill kernel's arguments", err);
  size_t counters = (size_t)((n + (cl_ulong)p.per_ctr - 1) / (cl_ulong)p.per_ctr);
  size_t local = d->max_wg >= 64 ? 64 : d->max_wg;
  size_t global = (counters + local - 1) / local * local;
  err = clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &global, &local, 0, NULL,
                               tkb_cl_record(d, "tkb_fill"));
  return err == CL_SUCCESS ? TKB_OK : tkb_cl_fail(dev, "the fill kernel", err);
}
