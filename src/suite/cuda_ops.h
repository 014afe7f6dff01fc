/* cuda_ops.h - the CUDA implementations of the shipped ops (impl "cuda", device kind
 * "cuda") and their registration. Internal. Their tkb_fn halves (ops/<op>/cuda.c) live in
 * libtkbench and link no CUDA: they validate and launch the kernels nvcc compiled into
 * libtkbench-cuda.so (ops/<op>/cuda.cu) through the device's backend kernel interface
 * (backend.h; src/backend/cuda/ops.c), so the entries are registered everywhere and, on
 * a machine without a GPU or without the plugin, fail with the device's reason. */
#ifndef TKB_CUDA_OPS_H
#define TKB_CUDA_OPS_H

#include "internal.h"

/* ops/normalization/cuda.c */
extern const tkb_fn tkb__op_normalization_cuda;
/* ops/gated_linear_unit/cuda.c */
extern const tkb_fn tkb__op_gated_linear_unit_cuda;
/* ops/ragged_dot/cuda.c */
extern const tkb_fn tkb__op_ragged_dot_cuda;
/* ops/linear_softmax_cross_entropy_loss/cuda.c */
extern const tkb_fn tkb__op_linear_softmax_cross_entropy_loss_cuda;
/* ops/dot_product_attention/cuda.c */
extern const tkb_fn tkb__op_dot_product_attention_cuda;

/* For every registered "reference" entry of the five shipped ops (normalization,
 * gated_linear_unit, ragged_dot, linear_softmax_cross_entropy_loss, dot_product_attention:
 * the cpu-tagged and Tokamax specs), registers a "cuda" entry with the same spec, arguments,
 * mode, counts and tags (so `tkbench check --device cuda:0` pairs them). Runs after
 * those ops' own registrars (src/suite/builtin.c); idempotent. */
tkb_status tkb__register_cuda_ops(void);

#endif
