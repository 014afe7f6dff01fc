/*
 * gate_avx512.c - gated_linear_unit's activation and gating (gate_kernels.h) compiled
 * for AVX-512 (the
 * instruction sets block's AVX-512 flags, CMakeLists.txt).
 */
#define TKB_ISA_SUFFIX avx512
#define GLU_GATE_KERNELS_BODY
#include "gate_kernels.h"
