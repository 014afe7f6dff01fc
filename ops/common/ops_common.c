/*
 * ops_common.c - the glue the ops' implementations share around their math (declared
 * in ops_common.h): the errors every hook gives in the same words, arguments readable
 * on the host, the one-struct kernel launch and prepare's workspaces. None of it runs in a hot loop.
 */
#include "ops_common.h"

#include "internal.h"

#include <stdlib.h>
#include <string.h>

tkb_status ops_concrete(const tkb_args *a, const char *who, const char *name,
                        const tkb_array **out) {
  const tkb_array *arr = tkb_args_array(a, name);
  *out = NULL;
  if (!arr || (!arr->data && arr->nbytes > 0))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "%s: %s is abstract (no data); the hooks that compute need concrete "
                         "arrays", who, name);
  *out = arr;
  return TKB_OK;
}

tkb_status ops_check_buffer(const char *who, const tkb_array *arr, const tkb_spec *want,
                            const char *what) {
  char ab[256], wb[256];
  if (!arr) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, what);
  if (!tkb_spec_equal(&arr->spec, want) || (!arr->data && arr->nbytes > 0))
    return tkb_set_error(TKB_ERR_BAD_SHAPE, "%s: %s has spec %s; expected %s", who, what,
                         ops_spec_str(&arr->spec, ab, sizeof ab), ops_spec_str(want, wb, sizeof wb));
  return TKB_OK;
}

tkb_status ops_state_error(const char *who, bool have_state, const char *prepared_for) {
  if (!have_state)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: called without a prepared state (run "
                         "the prepare hook first)", who);
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: the state was prepared for %s", who,
                       prepared_for);
}

tkb_status ops_vjp_unprepared(const char *who) {
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: vjp called on a state prepared for a mode "
                       "without it (prepare in vjp or forward_and_vjp mode)", who);
}

tkb_status ops_require_device(const tkb_device *dev, const char *kind, const char *who) {
  if (strcmp(dev->backend->kind, kind) == 0) return TKB_OK;
  return tkb_set_error(TKB_ERR_UNSUPPORTED, "%s runs on %s:N devices; got device %s", who, kind,
                       dev->name);
}

const tkb_array *ops_host_array(const tkb_args *a, const char *name) {
  const tkb_array *arr = tkb_args_array(a, name);
  /* (an array of no known device, which tkbench never makes, is not read either) */
  if (!arr || !arr->data || !arr->device) return NULL;
  return strcmp(arr->device->backend->kind, "cpu") == 0 ? arr : NULL;
}

tkb_status ops_launch_args(tkb_device *dev, tkb_kernel *k, const void *args, size_t size) {
  const size_t one = 1;
  const tkb_karg arg = {TKB_KARG_SCALAR, size, args};
  return tkb__kernel_launch(dev, k, 1, &one, NULL, 1, &arg);
}

extern const char tkb__opencl_src_common[]; /* ops/common/opencl.cl, embedded */

tkb_status ops_cl_kernel_build(tkb_device *dev, const char *op_source, const char *options,
                               const char *name, tkb_kernel **out) {
  const size_t a = strlen(tkb__opencl_src_common), b = strlen(op_source);
  char *src = malloc(a + b + 2);
  if (!src) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory building OpenCL kernel %s", name);
  memcpy(src, tkb__opencl_src_common, a);
  src[a] = '\n';
  memcpy(src + a + 1, op_source, b + 1);
  tkb_status st = tkb__kernel_build(dev, src, options, name, out);
  free(src);
  return st;
}

tkb_status ops_workspace_alloc(ops_workspace *ws, tkb_device *dev, size_t n, const size_t *sizes,
                               void **pieces) {
  size_t bytes = 0;
  for (size_t i = 0; i < n; i++) bytes += ops_round64(sizes[i]);
  *ws = (ops_workspace){0};
  if (n > 1 && dev && strcmp(dev->backend->kind, "opencl") == 0) /* NULL: the cpu */
    return tkb_set_error(TKB_ERR_INTERNAL, "ops_workspace_alloc: %zu pieces of one OpenCL buffer on "
                         "%s; an OpenCL buffer is a handle, not an address (allocate each piece)",
                         n, tkb_device_name(dev));
  void *base = NULL;
  tkb_status st = tkb_device_alloc(dev, bytes, &base);
  if (st) return st;
  *ws = (ops_workspace){.dev = dev, .base = base, .bytes = bytes};
  size_t offset = 0;
  for (size_t i = 0; i < n; i++) {
    pieces[i] = (char *)base + offset;
    offset += ops_round64(sizes[i]);
  }
  return TKB_OK;
}

void ops_workspace_free(ops_workspace *ws) {
  if (ws->base) tkb_device_free(ws->dev, ws->base, ws->bytes);
  *ws = (ops_workspace){0};
}

int ops_blas_single_begin(void) {
  if (tkb__blas.get_parallel() != 1) return 0;
  int n = tkb__blas.get_num_threads();
  if (n != 1) tkb__blas.set_num_threads(1);
  return n;
}

void ops_blas_single_end(int saved) {
  if (saved > 1) tkb__blas.set_num_threads(saved);
}
