/*
 * opencl_ops.c - registers the OpenCL implementations of the shipped ops as twins of
 * their reference entries: same op, spec name, arguments (or factory), mode, counts and
 * tags, impl "opencl", device kind "opencl". Sharing the arguments is what lets
 * `tkbench check --device opencl:0` compare each with its reference, and tagging them
 * like the cpu's lets `--tag cpu` pick the small shapes on a CPU OpenCL device (PoCL).
 */
#include "opencl_ops.h"

#include <string.h>

static tkb_status twin(const char *op, const tkb_fn *fn) {
  size_t n = tkb_registry_count(); /* the twins themselves are not revisited */
  for (size_t i = 0; i < n; i++) {
    const tkb_benchmark_def *r = tkb_registry_get(i);
    if (strcmp(r->op, op) != 0 || strcmp(r->impl_name, "reference") != 0) continue;
    tkb_benchmark_def d = *r; /* a copy: registering may move the registry's entries */
    d.impl_name = "opencl";
    d.fn = fn;
    d.device_kind = "opencl";
    tkb_status st = tkb_register_benchmark(&d);
    if (st == TKB_ERR_DUPLICATE_ARGUMENT) continue; /* registered before */
    if (st) return st;
  }
  return TKB_OK;
}

tkb_status tkb__register_opencl_ops(void) {
  tkb_status st = twin("normalization", &tkb__op_normalization_opencl);
  if (!st) st = twin("gated_linear_unit", &tkb__op_gated_linear_unit_opencl);
  return st;
}
