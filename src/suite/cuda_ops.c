/*
 * cuda_ops.c - registers the CUDA implementations of the shipped ops as twins of their
 * reference entries, exactly as opencl_ops.c does for OpenCL: same op, spec name,
 * arguments (or factory), mode, counts and tags, impl "cuda", device kind "cuda". Sharing
 * the arguments is what lets `tkbench check --device cuda:0` compare each with its
 * reference (run on the cpu with the same Philox inputs).
 *
 * Registration happens here, in the core, and not from the plugin: the entries must be
 * listed (`tkbench list`), selected and reported the same on a machine without the plugin
 * or a GPU, and the plugin is loaded only when a cuda:N device is opened.
 */
#include "cuda_ops.h"

#include <string.h>

static tkb_status twin(const char *op, const tkb_fn *fn) {
  size_t n = tkb_registry_count(); /* the twins themselves are not revisited */
  for (size_t i = 0; i < n; i++) {
    const tkb_benchmark_def *r = tkb_registry_get(i);
    if (strcmp(r->op, op) != 0 || strcmp(r->impl_name, "reference") != 0) continue;
    tkb_benchmark_def d = *r; /* a copy: registering may move the registry's entries */
    d.impl_name = "cuda";
    d.fn = fn;
    d.device_kind = "cuda";
    tkb_status st = tkb_register_benchmark(&d);
    if (st == TKB_ERR_DUPLICATE_ARGUMENT) continue; /* registered before */
    if (st) return st;
  }
  return TKB_OK;
}

tkb_status tkb__register_cuda_ops(void) {
  tkb_status st = twin("normalization", &tkb__op_normalization_cuda);
  if (!st) st = twin("gated_linear_unit", &tkb__op_gated_linear_unit_cuda);
  if (!st) st = twin("ragged_dot", &tkb__op_ragged_dot_cuda);
  if (!st) st = twin("linear_softmax_cross_entropy_loss", &tkb__op_linear_softmax_cross_entropy_loss_cuda);
  if (!st) st = twin("dot_product_attention", &tkb__op_dot_product_attention_cuda);
  return st;
}
