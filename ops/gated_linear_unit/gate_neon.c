/*
 * gate_neon.c - gated_linear_unit's activation and gating (gate_kernels.h) for aarch64's
 * neon path: the loops as the compiler vectorizes them with Advanced SIMD and its fused
 * multiply-add (ops_expf's polynomial), as on the portable path.
 */
#define TKB_ISA_SUFFIX neon
#define GLU_GATE_KERNELS_BODY
#include "gate_kernels.h"
