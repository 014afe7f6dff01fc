/* builtin.h - registration functions of the ops shipped with tkbench. Internal. */
#ifndef TKB_BUILTIN_H
#define TKB_BUILTIN_H

#include "internal.h"

tkb_status tkb__register_normalization(void);
tkb_status tkb__register_gated_linear_unit(void);
tkb_status tkb__register_ragged_dot(void);
tkb_status tkb__register_linear_softmax_cross_entropy_loss(void);
tkb_status tkb__register_dot_product_attention(void);
/* src/suite/opencl_ops.c: "opencl" twins of the reference entries that have an OpenCL
 * implementation (normalization, gated_linear_unit). */
tkb_status tkb__register_opencl_ops(void);
/* src/suite/cuda_ops.c: "cuda" twins of the reference entries of normalization and
 * gated_linear_unit (kernels in libtkbench-cuda.so). */
tkb_status tkb__register_cuda_ops(void);

#endif
