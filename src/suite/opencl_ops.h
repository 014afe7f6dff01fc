/* opencl_ops.h - the OpenCL implementations of the shipped ops (impl "opencl", device
 * kind "opencl") and their registration. Internal. Each runs through the device's
 * backend kernel interface (backend.h), so libtkbench holds them without linking
 * OpenCL; on a machine without OpenCL their entries fail with the device's reason. */
#ifndef TKB_OPENCL_OPS_H
#define TKB_OPENCL_OPS_H

#include "internal.h"

/* ops/normalization/opencl.c */
extern const tkb_fn tkb__op_normalization_opencl;
/* ops/gated_linear_unit/opencl.c */
extern const tkb_fn tkb__op_gated_linear_unit_opencl;

/* For every registered "reference" entry of normalization and gated_linear_unit,
 * registers an "opencl" entry with the same spec, arguments, mode, counts and tags
 * (so `tkbench check --device opencl:0` pairs them). Runs after those ops' own
 * registrars (src/suite/builtin.c); idempotent. */
tkb_status tkb__register_opencl_ops(void);

#endif
