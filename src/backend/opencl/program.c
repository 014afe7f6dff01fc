/*
 * program.c - OpenCL programs and kernels. Every program is src/core/dtype_convert.h
 * (the bit-exact conversions between float32 and the narrow floats that tkbench's C and
 * CUDA code compile too) and the backend's prelude (prelude.cl: dtype codes, typed loads
 * and stores through them), followed by the caller's sources; a program is compiled once per device and set of options and kept for the
 * life of the device (ops compile at prepare time, and many entries share a program).
 * A launch sets the arguments and enqueues: no allocation on the host, and an event
 * only while a timer records.
 */
#include "cl_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cl_program_entry {
  cl_program_entry *next;
  char *text;     /* the sources, concatenated, then options: the cache key */
  cl_program program;
};

struct tkb_kernel {
  cl_kernel k;
  const char *name; /* interned */
  size_t local;     /* work-group size the 1-D launches use when the caller gives none */
};

const char *tkb_cl_intern(tkb_cl_device *d, const char *name) {
  for (int i = 0; i < d->n_names; i++)
    if (strncmp(d->names[i], name, TKB_CL_NAME_LEN - 1) == 0) return d->names[i];
  if (d->n_names == TKB_CL_MAX_NAMES) return "?";
  snprintf(d->names[d->n_names], TKB_CL_NAME_LEN, "%s", name);
  return d->names[d->n_names++];
}

/* sources + "\n//options: " + options, malloc'd */
static char *cache_key(const char *const *sources, int n, const char *options) {
  size_t len = strlen(options) + 16;
  for (int i = 0; i < n; i++) len += strlen(sources[i]);
  char *t = malloc(len);
  if (!t) return NULL;
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    size_t l = strlen(sources[i]);
    memcpy(t + at, sources[i], l);
    at += l;
  }
  snprintf(t + at, len - at, "\n//opts:%s", options);
  return t;
}

tkb_status tkb_cl_program(tkb_device *dev, const char *const *sources, int n,
                          const char *options, cl_program *out) {
  tkb_cl_device *d = tkb_cl_dev(dev);
  enum { MAX_SOURCES = 8, FIRST = 2 /* dtype_convert.h, prelude.cl */ };
  if (n > MAX_SOURCES - FIRST)
    return tkb_cl_error(TKB_ERR_INVALID_ARGUMENT, "at most %d sources per OpenCL program",
                        MAX_SOURCES - FIRST);
  const char *all[MAX_SOURCES];
  all[0] = tkb_cl_src_dtype_convert;
  all[1] = tkb_cl_src_prelude;
  for (int i = 0; i < n; i++) all[i + FIRST] = sources[i];
  char *key = cache_key(all, n + FIRST, options);
  if (!key) return tkb_cl_error(TKB_ERR_OUT_OF_MEMORY, "out of memory compiling an OpenCL program");
  pthread_mutex_lock(&d->lock);
  for (cl_program_entry *e = d->programs; e; e = e->next)
    if (strcmp(e->text, key) == 0) {
      *out = e->program;
      pthread_mutex_unlock(&d->lock);
      free(key);
      return TKB_OK;
    }
  cl_int err;
  cl_program prog = clCreateProgramWithSource(d->ctx, (cl_uint)(n + FIRST), all, NULL, &err);
  tkb_status st = TKB_OK;
  if (err != CL_SUCCESS) {
    st = tkb_cl_fail(dev, "clCreateProgramWithSource", err);
  } else {
    err = clBuildProgram(prog, 1, &d->id, options, NULL, NULL);
    if (err != CL_SUCCESS) {
      char log[1500] = "";
      clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
      log[sizeof log - 1] = '\0';
      st = tkb_cl_error(TKB_ERR_DEVICE, "an OpenCL program failed to build on %s (%s, options "
                        "\"%s\"): %s", dev->name, tkb_cl_err_name(err), options, log);
      clReleaseProgram(prog);
    }
  }
  cl_program_entry *e = st ? NULL : malloc(sizeof *e);
  if (!st && !e) {
    clReleaseProgram(prog);
    st = tkb_cl_error(TKB_ERR_OUT_OF_MEMORY, "out of memory compiling an OpenCL program");
  }
  if (!st) {
    e->text = key;
    e->program = prog;
    e->next = d->programs;
    d->programs = e;
    *out = prog;
  } else {
    free(key);
  }
  pthread_mutex_unlock(&d->lock);
  return st;
}

tkb_status tkb_cl_kernel_build(tkb_device *dev, const char *source, const char *options,
                               const char *name, tkb_kernel **out) {
  tkb_cl_device *d = tkb_cl_dev(dev);
  cl_program prog;
  tkb_status st = tkb_cl_program(dev, &source, 1, options, &prog);
  if (st) return st;
  cl_int err;
  cl_kernel k = clCreateKernel(prog, name, &err);
  if (err != CL_SUCCESS)
    return tkb_cl_error(TKB_ERR_DEVICE, "kernel \"%s\" is not in the OpenCL program built for "
                        "%s: %s (%d)", name, dev->name, tkb_cl_err_name(err), err);
  tkb_kernel *t = malloc(sizeof *t);
  if (!t) {
    clReleaseKernel(k);
    return tkb_cl_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for a kernel");
  }
  t->k = k;
  pthread_mutex_lock(&d->lock);
  t->name = tkb_cl_intern(d, name);
  pthread_mutex_unlock(&d->lock);
  size_t wg = 0;
  clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  t->local = wg >= 64 ? 64 : wg ? wg : 1;
  *out = t;
  return TKB_OK;
}

tkb_status tkb_cl_kernel_launch(tkb_device *dev, tkb_kernel *k, int dims, const size_t *global,
                                const size_t *local, int nargs, const tkb_karg *args) {
  tkb_cl_device *d = tkb_cl_dev(dev);
  for (int i = 0; i < dims; i++)
    if (global[i] == 0) return TKB_OK; /* nothing to run */
  for (int i = 0; i < nargs; i++) {
    cl_int err;
    switch (args[i].kind) {
      case TKB_KARG_BUFFER: err = clSetKernelArg(k->k, (cl_uint)i, sizeof(cl_mem), args[i].value); break;
      case TKB_KARG_LOCAL: err = clSetKernelArg(k->k, (cl_uint)i, args[i].size, NULL); break;
      default: err = clSetKernelArg(k->k, (cl_uint)i, args[i].size, args[i].value); break;
    }
    if (err != CL_SUCCESS)
      return tkb_cl_error(TKB_ERR_DEVICE, "kernel %s on %s: argument %d: %s (%d)", k->name,
                          dev->name, i, tkb_cl_err_name(err), err);
  }
  /* 1-D launches without a local size: round the global size up to whole work-groups of
   * `local` (kernels check their bounds), rather than let the driver pick a divisor of
   * an odd size (which can be 1). */
  size_t g[3], l1;
  const size_t *gl = global;
  if (dims == 1 && !local) {
    l1 = k->local;
    g[0] = (global[0] + l1 - 1) / l1 * l1;
    gl = g;
    local = &l1;
  }
  cl_int err = clEnqueueNDRangeKernel(d->queue, k->k, (cl_uint)dims, NULL, gl, local, 0, NULL,
                                      tkb_cl_record(d, k->name));
  if (err != CL_SUCCESS)
    return tkb_cl_fail(dev, k->name, err);
  return TKB_OK;
}

void tkb_cl_kernel_free(tkb_device *dev, tkb_kernel *k) {
  (void)dev;
  if (!k) return;
  clReleaseKernel(k->k);
  free(k);
}
