/*
 * gate_portable.c - gated_linear_unit's activation and gating (gate_kernels.h) compiled
 * for any CPU (the build's baseline).
 */
#define TKB_ISA_SUFFIX portable
#define GLU_GATE_KERNELS_BODY
#include "gate_kernels.h"
