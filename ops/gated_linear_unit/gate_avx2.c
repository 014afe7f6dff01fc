/*
 * gate_avx2.c - gated_linear_unit's activation and gating (gate_kernels.h) compiled
 * for AVX2 + FMA (the
 * instruction sets block's AVX2 flags, CMakeLists.txt).
 */
#define TKB_ISA_SUFFIX avx2
#define GLU_GATE_KERNELS_BODY
#include "gate_kernels.h"
